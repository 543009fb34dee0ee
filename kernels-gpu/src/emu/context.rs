//! What the emulator keeps for a running GPU thread, its block and its cluster, and how a device
//! function finds the thread it runs in (`current`).
//!
//! A device function is an ordinary Rust function called from the kernel's body, with no context
//! argument, as a CUDA device function reads `threadIdx` from special registers. So the scheduler
//! publishes the thread it is about to resume in a thread-local (`CURRENT`), and every device
//! operation starts from `current()`. The three levels mirror the hardware's: a thread holds its
//! side of the asynchronous protocols (copy groups, `wgmma` groups, cluster arrivals, TMA stores);
//! a block holds its shared-memory pool, its mbarriers and the slots through which its warps
//! exchange registers; a cluster holds what its blocks share (the race history of all their
//! pools, the cluster barrier).
//!
//! The operations are grouped by hardware feature in the sibling files (`memory.rs`, `sync.rs`,
//! `tma.rs`, `wgmma.rs`, `cluster.rs`); this file holds what all of them need: the way up from a
//! thread to its block, cluster and launch, how a thread suspends, and how it stops the kernel
//! with a fault.
use super::fault::{Fault, FaultKind};
use super::history::{Epoch, History};
use super::launch::Launch;
use super::mbarrier::MBarrier;
use super::state::AsyncCopy;
use super::state::Bulk;
use super::state::Deposit;
use super::state::Suspend;
use super::state::WgmmaLane;
use core::cell::{Cell, RefCell};
use corosensei::Yielder;

/// What the device layer sees of the thread it is running in.
pub(crate) struct ThreadContext {
    pub(crate) thread: (u32, u32),
    /// The thread's index in its block (x fastest).
    pub(crate) linear: u32,
    /// The thread's index in its cluster (block rank · threads per block + `linear`): its agent
    /// in the race history.
    pub(crate) agent: u32,
    pub(crate) block: *const BlockContext,
    pub(super) yielder: Cell<*const Yielder<(), Suspend>>,
    pub(super) collective_parity: Cell<usize>,
    /// Asynchronous copies (`cp.async`) issued but not yet committed to a group.
    pub(super) open_copies: RefCell<Vec<AsyncCopy>>,
    /// Committed groups of asynchronous copies, oldest first, not yet waited for.
    pub(super) copy_groups: RefCell<std::collections::VecDeque<Vec<AsyncCopy>>>,
    /// This lane's view of its warp's `wgmma` operations.
    pub(super) wgmma: Cell<WgmmaLane>,
    /// The A fragments of this lane's `wgmma`s in flight: (group, the address of the kernel's
    /// `FragA<Tf32, 4>`, its bits at issue).
    pub(super) wgmma_held: RefCell<Vec<(u32, usize, [u32; 4])>>,
    /// `barrier.cluster.arrive`s so far.
    pub(super) cluster_arrivals: Cell<u32>,
    /// This thread's TMA stores (bulk async-groups).
    pub(super) bulk: RefCell<Bulk>,
    /// Whether this thread executed `griddepcontrol.wait`.
    pub(super) waited_for_grids: Cell<bool>,
}

pub(crate) struct BlockContext {
    pub(crate) block: (u32, u32),
    pub(crate) block_dim: (u32, u32),
    pub(crate) grid_dim: (u32, u32),
    pub(super) launch: *const Launch<'static>,
    pub(super) cluster: *const ClusterContext,
    /// The block's rank in its cluster (`%cluster_ctarank`).
    pub(crate) rank: u32,
    pub(super) pool: RefCell<Vec<u8>>,
    /// The mbarriers initialised in the pool.
    pub(super) mbarriers: RefCell<Vec<MBarrier>>,
    /// One deposit per thread for each of two alternating warp-wide operations (a lane cannot
    /// get two operations ahead of a lane of its warp, so two sets suffice).
    pub(super) collective_slots: RefCell<[Vec<Deposit>; 2]>,
    /// Each warp's registers per thread after its last `setmaxnreg` (`None`: as launched).
    pub(super) registers: RefCell<Vec<Option<u32>>>,
}

/// What the blocks of a cluster share: the race history of all their pools (block `r`'s pool
/// at bytes `r·P ..` of it), the cluster barrier, and the record of the accesses a block makes
/// to a peer's shared memory, which must all happen before that peer exits.
pub(crate) struct ClusterContext {
    pub(super) history: RefCell<History>,
    /// `%clusterid.x`, `%nclusterid.x` (along x: a grid with rows has the same ids in each).
    pub(super) id: u32,
    pub(super) count: u32,
    pub(super) blocks: u32,
    pub(super) pool_bytes: u32,
    /// What the threads released at their `k`-th `barrier.cluster.arrive`, for phase `k`.
    pub(super) cluster_phases: RefCell<Vec<Vec<u32>>>,
    /// Accesses to block `.0`'s shared memory by a peer: (block, the access, what it was).
    pub(super) remote: RefCell<Vec<(u32, Epoch, String)>>,
    /// Global ranges with a TMA store pending: (cluster thread, address, bytes).
    pub(super) pending_stores: RefCell<Vec<(u32, usize, usize)>>,
    /// The vector clock of each block at its exit (when its last thread returned).
    pub(super) exits: RefCell<Vec<Option<Vec<u32>>>>,
}

thread_local! {
    pub(super) static CURRENT: Cell<*const ThreadContext> = const { Cell::new(core::ptr::null()) };
}

/// The GPU thread the calling OS thread is currently running.
///
/// # Panics
/// When called outside [`launch`](super::launch): device functions only make sense inside a
/// kernel.
pub(crate) fn current() -> &'static ThreadContext {
    let p = CURRENT.with(|c| c.get());
    assert!(
        !p.is_null(),
        "a device function was called outside an emulated kernel launch"
    );
    // SAFETY: set by `run_block` only while the context is alive and the thread running.
    unsafe { &*p }
}

impl ThreadContext {
    pub(crate) fn block(&self) -> &BlockContext {
        unsafe { &*self.block }
    }

    pub(crate) fn cluster(&self) -> &ClusterContext {
        unsafe { &*self.block().cluster }
    }

    /// The history's byte for byte `byte` of this block's pool.
    pub(super) fn cluster_byte(&self, byte: u32) -> u32 {
        self.block().rank * self.cluster().pool_bytes + byte
    }

    pub(super) fn launch(&self) -> &Launch<'static> {
        unsafe { &*self.block().launch }
    }

    /// Stops the kernel with `kind`; `run_block` turns the unwind into a [`Fault`].
    pub(crate) fn fault(&self, kind: FaultKind, detail: String) -> ! {
        let b = self.block();
        let fault = Fault {
            kind,
            kernel: self.launch().kernel_name.to_string(),
            block: b.block,
            thread: self.thread,
            detail,
        };
        // `resume_unwind` skips the panic hook: the fault is reported once, by the caller.
        std::panic::resume_unwind(Box::new(fault))
    }

    pub(super) fn suspend(&self, why: Suspend) {
        let y = self.yielder.get();
        // SAFETY: the yielder lives as long as the coroutine this thread runs in.
        unsafe { (*y).suspend(why) }
    }

    pub(super) fn history(&self) -> core::cell::RefMut<'_, History> {
        self.cluster().history.borrow_mut()
    }

    /// The block's first asynchronous operation turns on the vector clocks.
    pub(crate) fn go_asynchronous(&self) {
        self.history().go_asynchronous();
    }
}

impl BlockContext {
    pub(crate) fn pool_mut(&self) -> core::cell::RefMut<'_, Vec<u8>> {
        self.pool.borrow_mut()
    }
}
