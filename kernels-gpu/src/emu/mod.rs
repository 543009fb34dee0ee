//! The CPU emulator: runs a kernel launch on the host with the semantics of the GPU.
//!
//! - **Threads.** Every GPU thread of a block is a stackful coroutine with its own indices.
//!   A round resumes each runnable thread until it suspends (at a barrier or a warp-wide operation)
//!   or returns.
//! - **Barriers.** A thread at `sync_threads` suspends; when every live thread of the block is
//!   waiting, the block enters its next *barrier interval* and all resume. So a thread that
//!   passes a barrier sees every shared-memory write made before it, as on the GPU.
//! - **Shared memory.** Each block gets its own zero-filled pool of the size the launch asked for.
//! - **Warp-wide operations** (`shfl.sync`, the tensor cores' `mma.sync`). The lanes of a warp
//!   exchange registers through a slot per lane: a lane deposits its registers and suspends
//!   until every lane of its warp has deposited, then reads what it needs of the others'
//!   (a shuffle one value, an `mma` every lane's fragments). Lanes that reach different
//!   warp-wide operations, or a warp with lanes missing, are reported.
//! - **Blocks** run several at a time on worker threads (blocks share nothing but global
//!   memory, and a correct kernel does not race on it within a launch). A faulty launch reports
//!   the fault of its lowest-numbered faulting block, so reports do not depend on timing.
//!
//! Bugs are reported as [`Fault`]s naming the kernel, block, thread and index, instead of
//! corrupting memory:
//! - an access to global memory outside every buffer the host registered for the launch, or a
//!   misaligned 16-byte access;
//! - an index past the end of a shared-memory view, or past the end of the pool;
//! - a **shared-memory race**, detected directly: every 4-byte word of the pool remembers which
//!   thread last wrote it and which read it, and in which barrier interval. A read of a word
//!   another thread wrote in the same interval (a missing barrier before the read), and a write
//!   to a word another thread wrote or read in the same interval (a missing barrier before the
//!   overwrite), are races: on the GPU their outcome depends on timing. Detection does not
//!   depend on the order the emulator happens to run threads in.
//! - a deadlock (threads of one block waiting at different barriers or warp-wide operations), or
//!   lanes of a warp at different warp-wide operations.
//!
//! Hopper's asynchronous operations (chapter 2 of the tensor cores) add:
//! - **mbarriers** (`mbarrier.rs`): a thread waiting for a phase suspends until an arrival or a
//!   copy completes it; a wait that can never end is reported as a deadlock with the barrier's
//!   state (pending arrivals, tx-count).
//! - **TMA copies and `wgmma` operand reads** as agents of their own in a happens-before model
//!   with vector clocks (`history.rs`), which replaces barrier intervals once a block uses them:
//!   reading a TMA box before waiting for its mbarrier phase, refilling a stage that a `wgmma`
//!   may still read, or a `wgmma` reading ordinary stores without `fence.proxy.async` are races
//!   whatever the timing. Misuse of the protocols (an mbarrier used before its init is visible, a
//!   `wgmma` without `wgmma.fence`, accumulators read before `wgmma.wait_group`) is reported too.
//! - **The shared pool starts at address [`SHARED_POOL_BASE`]**, 16-byte aligned as the PTX
//!   declaration promises and no more: a kernel whose TMA boxes or swizzled tiles need 128- or
//!   1024-byte alignment must align them itself, as it must on the GPU.
mod history;
mod mbarrier;
mod schedule;

use core::cell::{Cell, RefCell};
use core::fmt;
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use history::{Agents, Epoch, History, MAX_MBARRIERS};
use mbarrier::{MBarrier, COUNT_LIMIT};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The shared-window address of the dynamic pool in the emulator. The PTX declares the pool
/// `.align 16`; the emulator gives exactly that, so that a kernel assuming more (a 1024-byte
/// swizzle atom, a 128-byte TMA destination) without aligning its own offsets fails here.
pub const SHARED_POOL_BASE: u32 = 16;

/// Grid and block shape (x, y), the dynamic shared-memory size of a launch, and its cluster
/// shape in blocks ((1, 1): no cluster; the grid must be a multiple of it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    pub grid: (u32, u32),
    pub block: (u32, u32),
    pub shared_bytes: u32,
    pub cluster: (u32, u32),
}

/// A region of host memory the kernel may access as global memory.
#[derive(Clone, Copy, Debug)]
pub struct Buffer {
    pub name: &'static str,
    pub address: usize,
    pub bytes: usize,
}

/// What went wrong, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub kernel: String,
    pub block: (u32, u32),
    pub thread: (u32, u32),
    pub detail: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    GlobalOutOfBounds,
    MisalignedVectorAccess,
    SharedOutOfBounds,
    SharedRace,
    Deadlock,
    /// An mbarrier used against the PTX ISA's rules: before its init is visible, out of its
    /// counts' ranges, or touched by ordinary loads and stores.
    MbarrierMisuse,
    /// A `wgmma` protocol error: no `wgmma.fence` before it, accumulators read before the
    /// `wgmma.wait_group` that retires their group, a descriptor outside the pool.
    WgmmaMisuse,
    /// A TMA copy that the PTX ISA or the driver's tensor-map rules forbid.
    TmaMisuse,
    /// A Rust panic inside the kernel (an arithmetic overflow, say).
    Panic,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            FaultKind::GlobalOutOfBounds => "out-of-bounds global memory access",
            FaultKind::MisalignedVectorAccess => "misaligned vector access",
            FaultKind::SharedOutOfBounds => "out-of-bounds shared memory access",
            FaultKind::SharedRace => "shared memory race (missing barrier)",
            FaultKind::Deadlock => "deadlock",
            FaultKind::MbarrierMisuse => "mbarrier misuse",
            FaultKind::WgmmaMisuse => "wgmma misuse",
            FaultKind::TmaMisuse => "TMA misuse",
            FaultKind::Panic => "panic in kernel",
        };
        write!(
            f,
            "emulator: {what} in kernel `{}`, block ({}, {}), thread ({}, {}): {}",
            self.kernel, self.block.0, self.block.1, self.thread.0, self.thread.1, self.detail
        )
    }
}

impl std::error::Error for Fault {}

/// Runs `kernel` once per GPU thread of the launch, on the CPU.
///
/// `buffers` are the only global memory the kernel may touch. Returns the first fault found
/// (the launch stops at it).
pub fn launch(
    kernel_name: &str,
    shape: LaunchShape,
    buffers: &[Buffer],
    kernel: &(dyn Fn() + Sync),
) -> Result<(), Fault> {
    let (bx, by) = shape.block;
    let threads = bx * by;
    assert!(
        (1..=1024).contains(&threads),
        "a block has 1 to 1024 threads, not {threads}"
    );
    let launch = Launch {
        kernel_name,
        shape,
        buffers,
    };
    let (cx, cy) = shape.cluster;
    if cx == 0
        || cy == 0
        || cx * cy > 16
        || !shape.grid.0.is_multiple_of(cx)
        || !shape.grid.1.is_multiple_of(cy)
    {
        return Err(Fault {
            kind: FaultKind::Panic,
            kernel: kernel_name.to_string(),
            block: (0, 0),
            thread: (0, 0),
            detail: format!(
                "a grid of {:?} blocks in clusters of {:?}: the grid must be a multiple of the cluster, which has at most 16 blocks",
                shape.grid, shape.cluster
            ),
        });
    }
    // Clusters run one at a time on a worker (their blocks share memory); different clusters,
    // like blocks without a cluster, share nothing but global memory.
    let clusters_x = shape.grid.0 / cx;
    let clusters = (clusters_x as usize) * (shape.grid.1 / cy) as usize;
    let next_cluster = AtomicUsize::new(0);
    // The report is the fault of the lowest-numbered faulting cluster, whatever the timing of
    // the workers: clusters are handed out in order, and after a fault only lower ones still
    // run, so every cluster below the one reported has run to the end.
    let lowest_faulty = AtomicUsize::new(usize::MAX);
    let faults = Mutex::new(Vec::<(usize, Fault)>::new());
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(clusters)
        .max(1);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let mut stacks = StackPool::default();
                loop {
                    let c = next_cluster.fetch_add(1, Ordering::Relaxed);
                    if c >= clusters.min(lowest_faulty.load(Ordering::Relaxed)) {
                        break;
                    }
                    let cluster = (c as u32 % clusters_x, c as u32 / clusters_x);
                    if let Err(fault) = schedule::run_cluster(&launch, cluster, kernel, &mut stacks)
                    {
                        lowest_faulty.fetch_min(c, Ordering::Relaxed);
                        faults.lock().unwrap().push((c, fault));
                        break;
                    }
                }
            });
        }
    });
    match faults
        .into_inner()
        .unwrap()
        .into_iter()
        .min_by_key(|(b, _)| *b)
    {
        Some((_, fault)) => Err(fault),
        None => Ok(()),
    }
}

struct Launch<'a> {
    kernel_name: &'a str,
    shape: LaunchShape,
    buffers: &'a [Buffer],
}

/// Why a thread suspended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Suspend {
    Barrier,
    WarpCollective,
    /// Waiting for the phase of parity `.1` of the mbarrier at pool byte `.0` of its block.
    Mbarrier(u32, u32),
    /// `barrier.cluster.wait` for the cluster barrier's phase `.0` (the thread's arrivals).
    ClusterBarrier(u32),
    /// `bar.sync id, threads`: the barrier `.0` of `.1` threads.
    NamedBarrier(u32, u32),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Runnable,
    AtBarrier,
    AtWarpCollective,
    AtMbarrier(u32, u32),
    AtClusterBarrier(u32),
    AtNamedBarrier(u32, u32),
    Exited,
}

type Thread = Coroutine<(), Suspend, (), DefaultStack>;

/// Coroutine stacks are reused from block to block (creating one is an mmap).
#[derive(Default)]
struct StackPool(Vec<DefaultStack>);

impl StackPool {
    const STACK_BYTES: usize = 256 * 1024;

    fn take(&mut self) -> DefaultStack {
        self.0.pop().unwrap_or_else(|| {
            DefaultStack::new(Self::STACK_BYTES).expect("emulator: cannot allocate a thread stack")
        })
    }
}

/// What the device layer sees of the thread it is running in.
pub(crate) struct ThreadContext {
    pub(crate) thread: (u32, u32),
    /// The thread's index in its block (x fastest).
    pub(crate) linear: u32,
    /// The thread's index in its cluster (block rank · threads per block + `linear`): its agent
    /// in the race history.
    pub(crate) agent: u32,
    pub(crate) block: *const BlockContext,
    yielder: Cell<*const Yielder<(), Suspend>>,
    collective_parity: Cell<usize>,
    /// Asynchronous copies (`cp.async`) issued but not yet committed to a group.
    open_copies: RefCell<Vec<AsyncCopy>>,
    /// Committed groups of asynchronous copies, oldest first, not yet waited for.
    copy_groups: RefCell<std::collections::VecDeque<Vec<AsyncCopy>>>,
    /// This lane's view of its warp's `wgmma` operations.
    wgmma: Cell<WgmmaLane>,
    /// The A fragments of this lane's `wgmma`s in flight: (group, the address of the kernel's
    /// `FragA<Tf32, 4>`, its bits at issue).
    wgmma_held: RefCell<Vec<(u32, usize, [u32; 4])>>,
    /// `barrier.cluster.arrive`s so far.
    cluster_arrivals: Cell<u32>,
    /// This thread's TMA stores (bulk async-groups).
    bulk: RefCell<Bulk>,
}

/// A thread's TMA stores: groups committed, groups whose shared-memory reads a
/// `wait_group.read` retired, and the global writes not yet performed, by group.
#[derive(Default)]
struct Bulk {
    committed: u32,
    read_retired: u32,
    /// (group, global address, bytes): performed at a `wait_group` that retires the group, or
    /// when the block exits.
    writes: Vec<(u32, usize, Vec<u8>)>,
}

/// What a lane knows of its warp's `wgmma` operations (every lane of a warp executes the same
/// ones, so every lane holds the same numbers).
#[derive(Clone, Copy, Default)]
struct WgmmaLane {
    /// A `wgmma.fence` since the last `wgmma.wait_group` (or the start).
    fenced: bool,
    /// Groups committed, and groups retired by `wgmma.wait_group`.
    committed: u32,
    retired: u32,
}

/// Registers a lane brings to one warp-wide operation.
#[derive(Clone, Copy, Default)]
pub(crate) struct Deposit {
    /// The operation, so that lanes at different ones are caught.
    pub(crate) op: &'static str,
    pub(crate) registers: [u64; MAX_REGISTERS],
    pub(crate) len: usize,
}

/// The most registers a lane deposits for one warp-wide operation (an f64 `m16n8k16` brings 8
/// of A and 4 of B).
pub(crate) const MAX_REGISTERS: usize = 16;

/// A pending `cp.async`: the shared-pool byte address and the bytes it will write there.
type AsyncCopy = (u32, Vec<u8>);

pub(crate) struct BlockContext {
    pub(crate) block: (u32, u32),
    pub(crate) block_dim: (u32, u32),
    pub(crate) grid_dim: (u32, u32),
    launch: *const Launch<'static>,
    cluster: *const ClusterContext,
    /// The block's rank in its cluster (`%cluster_ctarank`).
    pub(crate) rank: u32,
    pool: RefCell<Vec<u8>>,
    /// The mbarriers initialised in the pool.
    mbarriers: RefCell<Vec<MBarrier>>,
    /// One deposit per thread for each of two alternating warp-wide operations (a lane cannot
    /// get two operations ahead of a lane of its warp, so two sets suffice).
    collective_slots: RefCell<[Vec<Deposit>; 2]>,
}

/// What the blocks of a cluster share: the race history of all their pools (block `r`'s pool
/// at bytes `r·P ..` of it), the cluster barrier, and the record of the accesses a block makes
/// to a peer's shared memory, which must all happen before that peer exits.
pub(crate) struct ClusterContext {
    history: RefCell<History>,
    /// `%clusterid.x`, `%nclusterid.x` (along x: a grid with rows has the same ids in each).
    id: u32,
    count: u32,
    blocks: u32,
    pool_bytes: u32,
    /// What the threads released at their `k`-th `barrier.cluster.arrive`, for phase `k`.
    cluster_phases: RefCell<Vec<Vec<u32>>>,
    /// Accesses to block `.0`'s shared memory by a peer: (block, the access, what it was).
    remote: RefCell<Vec<(u32, Epoch, String)>>,
    /// Global ranges with a TMA store pending: (cluster thread, address, bytes).
    pending_stores: RefCell<Vec<(u32, usize, usize)>>,
    /// The vector clock of each block at its exit (when its last thread returned).
    exits: RefCell<Vec<Option<Vec<u32>>>>,
}

thread_local! {
    static CURRENT: Cell<*const ThreadContext> = const { Cell::new(core::ptr::null()) };
}

/// The GPU thread the calling OS thread is currently running.
///
/// # Panics
/// When called outside [`launch`]: device functions only make sense inside a kernel.
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
    fn cluster_byte(&self, byte: u32) -> u32 {
        self.block().rank * self.cluster().pool_bytes + byte
    }

    fn launch(&self) -> &Launch<'static> {
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

    fn suspend(&self, why: Suspend) {
        let y = self.yielder.get();
        // SAFETY: the yielder lives as long as the coroutine this thread runs in.
        unsafe { (*y).suspend(why) }
    }

    pub(crate) fn barrier(&self) {
        self.suspend(Suspend::Barrier);
    }

    /// A warp-wide operation: deposits this lane's `registers` (at most [`MAX_REGISTERS`]),
    /// waits until every live lane of the warp has deposited for the same operation `op`, and
    /// returns what `read` makes of the warp's deposits, indexed by lane. With
    /// `full_warp`, all 32 lanes must exist (`mma.sync` needs them; a shuffle only needs its
    /// source lane).
    pub(crate) fn warp_collective<R>(
        &self,
        op: &'static str,
        registers: &[u64],
        full_warp: bool,
        read: impl FnOnce(&[Deposit]) -> R,
    ) -> R {
        let b = self.block();
        let parity = self.collective_parity.get();
        self.collective_parity.set(parity ^ 1);
        {
            let mut slots = b.collective_slots.borrow_mut();
            let slot = &mut slots[parity][self.linear as usize];
            slot.op = op;
            slot.len = registers.len();
            slot.registers[..registers.len()].copy_from_slice(registers);
        }
        self.suspend(Suspend::WarpCollective);
        let threads = b.block_dim.0 * b.block_dim.1;
        let warp_base = self.linear / 32 * 32;
        let lanes = (threads - warp_base).min(32);
        if full_warp && lanes < 32 {
            self.fault(
                FaultKind::Deadlock,
                format!("`{op}` needs all 32 lanes of a warp; this warp of the block has {lanes}"),
            );
        }
        let slots = b.collective_slots.borrow();
        let warp = &slots[parity][warp_base as usize..(warp_base + lanes) as usize];
        if let Some(other) = warp.iter().find(|d| d.op != op) {
            let other = other.op;
            drop(slots);
            self.fault(
                FaultKind::Deadlock,
                format!("lanes of one warp reached different warp-wide operations (`{op}` and `{other}`): the GPU would hang or compute garbage"),
            );
        }
        read(warp)
    }

    /// The warp-synchronous exchange behind `shfl.sync.idx`.
    pub(crate) fn shuffle(&self, bits: u64, src_lane: u32) -> u64 {
        let lane = src_lane % 32;
        let value = self.warp_collective("shfl.sync.idx", &[bits], false, |warp| {
            warp.get(lane as usize).map(|d| d.registers[0])
        });
        value.unwrap_or_else(|| {
            self.fault(
                FaultKind::Deadlock,
                format!("shuffle from lane {src_lane}, which does not exist in this block"),
            )
        })
    }

    pub(crate) fn issue_async_copy(&self, shared_address: u32, data: Vec<u8>) {
        self.open_copies.borrow_mut().push((shared_address, data));
    }

    pub(crate) fn commit_async_copies(&self) {
        let group = core::mem::take(&mut *self.open_copies.borrow_mut());
        self.copy_groups.borrow_mut().push_back(group);
    }

    /// The copies of every committed group but the `pending` most recent, oldest first.
    pub(crate) fn retire_async_copies(&self, pending: usize) -> Vec<AsyncCopy> {
        let mut groups = self.copy_groups.borrow_mut();
        let mut done = Vec::new();
        while groups.len() > pending {
            done.extend(groups.pop_front().unwrap());
        }
        done
    }

    /// Checks that `[address, address + bytes)` lies inside a buffer of the launch and, for a
    /// vector access, that `address` is aligned to `align` bytes (the vector's size, at most 16:
    /// an f64 `x4` is two 16-byte accesses).
    pub(crate) fn check_global(&self, address: usize, bytes: usize, align: usize) {
        let conflict = self
            .cluster()
            .pending_stores
            .borrow()
            .iter()
            .find(|(_, at, len)| address < at + len && *at < address + bytes)
            .copied();
        if let Some((thread, at, _)) = conflict {
            let who = self.history().describe(thread);
            let (here, there) = (self.global_name(address), self.global_name(at));
            self.fault(
                FaultKind::SharedRace,
                format!("a {bytes}-byte global access at {here} overlaps what a TMA store issued by {who} writes at {there}, which has not completed (wait for it with `cp.async.bulk.wait_group` first)"),
            );
        }
        if align > 1 && !address.is_multiple_of(align) {
            self.fault(
                FaultKind::MisalignedVectorAccess,
                format!("{align}-byte access at address {address:#x}, which is not {align}-byte aligned"),
            );
        }
        let buffers = self.launch().buffers;
        let inside = buffers
            .iter()
            .any(|b| address >= b.address && address + bytes <= b.address + b.bytes);
        if !inside {
            let nearest = buffers.iter().min_by_key(|b| {
                address
                    .abs_diff(b.address)
                    .min(address.abs_diff(b.address + b.bytes))
            });
            let detail = match nearest {
                Some(b) => {
                    let offset = address as isize - b.address as isize;
                    format!(
                        "{bytes}-byte access at byte offset {offset} of buffer `{}` ({} bytes)",
                        b.name, b.bytes
                    )
                }
                None => format!("{bytes}-byte access at {address:#x}; the launch has no buffers"),
            };
            self.fault(FaultKind::GlobalOutOfBounds, detail);
        }
    }

    /// "byte offset O of buffer `B`" for a global address inside a buffer of the launch.
    fn global_name(&self, address: usize) -> String {
        match self
            .launch()
            .buffers
            .iter()
            .find(|b| (b.address..b.address + b.bytes).contains(&address))
        {
            Some(b) => format!("byte offset {} of buffer `{}`", address - b.address, b.name),
            None => format!("{address:#x}"),
        }
    }

    /// The pool byte of shared-window address `address` (see [`SHARED_POOL_BASE`]).
    pub(crate) fn pool_byte(&self, address: u32) -> u32 {
        address.checked_sub(SHARED_POOL_BASE).unwrap_or_else(|| {
            self.fault(
                FaultKind::SharedOutOfBounds,
                format!(
                    "shared address {address}, below the dynamic pool (which starts at {SHARED_POOL_BASE})"
                ),
            )
        })
    }

    /// Checks that `[byte, byte + bytes)` lies in the pool and `byte` is aligned to `align`.
    pub(crate) fn check_pool_range(&self, byte: u32, bytes: u32, align: u32, what: &str) {
        let pool_bytes = self.block().pool.borrow().len() as u32;
        if byte.checked_add(bytes).is_none_or(|end| end > pool_bytes) {
            self.fault(
                FaultKind::SharedOutOfBounds,
                format!("{what}: {bytes} bytes at pool byte {byte}; the launch gave {pool_bytes} bytes of shared memory"),
            );
        }
        if !byte.is_multiple_of(align) {
            self.fault(
                FaultKind::MisalignedVectorAccess,
                format!("{what}: pool byte {byte} is not {align}-byte aligned"),
            );
        }
    }

    /// Checks a shared access of `bytes` bytes at pool byte `address` and records it in the
    /// race history.
    pub(crate) fn shared_access(&self, address: u32, bytes: u32, write: bool) {
        let b = self.block();
        let pool_bytes = b.pool.borrow().len() as u32;
        if address
            .checked_add(bytes)
            .is_none_or(|end| end > pool_bytes)
        {
            self.fault(
                FaultKind::SharedOutOfBounds,
                format!("{bytes}-byte access at pool byte {address}; the launch gave {pool_bytes} bytes of shared memory"),
            );
        }
        if !address.is_multiple_of(bytes) {
            self.fault(
                FaultKind::MisalignedVectorAccess,
                format!(
                    "{bytes}-byte shared access at pool byte {address}, not {bytes}-byte aligned"
                ),
            );
        }
        let mut history = self.history();
        let at = self.cluster_byte(address);
        if let Err(race) = history.generic(self.agent, at, bytes, write) {
            let kind = if history.touches_mbarrier(at, bytes) {
                FaultKind::MbarrierMisuse
            } else {
                FaultKind::SharedRace
            };
            drop(history);
            self.fault(kind, race);
        }
    }

    fn history(&self) -> core::cell::RefMut<'_, History> {
        self.cluster().history.borrow_mut()
    }

    /// The block's first asynchronous operation turns on the vector clocks.
    pub(crate) fn go_asynchronous(&self) {
        self.history().go_asynchronous();
    }

    // -- mbarrier --

    /// `mbarrier.init.shared::cta.b64 [byte], count`.
    pub(crate) fn mbarrier_init(&self, byte: u32, count: u32) {
        self.check_pool_range(byte, 8, 8, "mbarrier.init");
        if !(1..=COUNT_LIMIT).contains(&(count as i64)) {
            self.fault(
                FaultKind::MbarrierMisuse,
                format!("mbarrier.init with count {count}: the PTX ISA allows 1 to 2^20 - 1"),
            );
        }
        self.go_asynchronous();
        let mut bars = self.block().mbarriers.borrow_mut();
        let index = match bars.iter().position(|m| m.byte == byte) {
            Some(i) => i as u32,
            None if bars.len() < MAX_MBARRIERS as usize => bars.len() as u32,
            None => {
                drop(bars);
                self.fault(
                    FaultKind::MbarrierMisuse,
                    format!("more than {MAX_MBARRIERS} mbarriers in one block: the emulator tracks at most that many"),
                )
            }
        };
        let mut history = self.history();
        let at = self.cluster_byte(byte);
        if let Err(race) = history.generic(self.agent, at, 8, true) {
            drop((history, bars));
            self.fault(FaultKind::SharedRace, format!("mbarrier.init: {race}"));
        }
        // Cluster-wide, so that the copy agents of every block's barriers differ.
        let agent_index = self.block().rank * MAX_MBARRIERS + index;
        history.register_mbarrier(at, agent_index);
        let init = Epoch {
            interval: history.interval(),
            agent: self.agent,
            clock: history.clock_now(self.agent),
        };
        let barrier = MBarrier::new(byte, agent_index, count, init);
        match bars.get_mut(index as usize) {
            Some(slot) => *slot = barrier,
            None => bars.push(barrier),
        }
    }

    /// Runs `f` on the mbarrier at pool byte `byte` of this block, after checking that it was
    /// initialised and that the initialisation is ordered before this thread's use of it.
    fn with_mbarrier<R>(
        &self,
        byte: u32,
        op: &str,
        f: impl FnOnce(&mut MBarrier, &mut History) -> R,
    ) -> R {
        self.block().with_mbarrier_of(self, byte, op, f)
    }

    /// `mbarrier.arrive` (`expect_tx` 0) or `mbarrier.arrive.expect_tx` (`expect_tx` bytes).
    pub(crate) fn mbarrier_arrive(&self, byte: u32, expect_tx: u32) {
        let me = self.agent;
        let error = self.with_mbarrier(byte, "mbarrier.arrive", |bar, history| {
            bar.tx += expect_tx as i64;
            if bar.tx.abs() > COUNT_LIMIT {
                return Some(format!("the tx-count of the mbarrier at pool byte {byte} leaves the range ±(2^20 - 1): {}", bar.tx));
            }
            if bar.pending == 0 {
                return Some(format!("arrive on the mbarrier at pool byte {byte}, whose current phase has no pending arrivals (more arrivals than its count, {})", bar.expected));
            }
            history.release(me, &mut bar.gathered);
            bar.pending -= 1;
            let agent = history.agents().mbarrier(bar.index);
            bar.complete_if_due(agent);
            None
        });
        if let Some(message) = error {
            self.fault(FaultKind::MbarrierMisuse, message);
        }
    }

    /// `mbarrier.try_wait.parity` in a loop: suspends until the phase of parity `parity`
    /// has completed, then acquires what that phase gathered.
    pub(crate) fn mbarrier_wait(&self, byte: u32, parity: u32) {
        let me = self.agent;
        loop {
            let done = self.with_mbarrier(byte, "mbarrier.try_wait.parity", |bar, history| {
                let done = bar.phase_done(parity);
                if done {
                    history.acquire(me, &bar.last_phase);
                }
                done
            });
            if done {
                return;
            }
            self.suspend(Suspend::Mbarrier(byte, parity));
        }
    }

    /// A TMA copy of `data` to pool byte `dst`, issued by this thread, completing on the
    /// mbarrier at pool byte `mbarrier`: the box lands now, written by the barrier's copy agent
    /// at the clock of the barrier's current phase, and its bytes are counted off the tx-count.
    /// `rank` is the block of the cluster it lands in (a multicast lands in several; each copy
    /// completes on the mbarrier at the same offset of its block).
    pub(crate) fn tma_write(&self, rank: u32, dst: u32, data: &[u8], mbarrier: u32) {
        let op = "cp.async.bulk.tensor";
        let target = self.peer(rank, op);
        let (agent, clock) = target.with_mbarrier_of(self, mbarrier, op, |bar, history| {
            (history.agents().mbarrier(bar.index), bar.copy_clock())
        });
        let bytes = data.len() as u32;
        let at = rank * self.cluster().pool_bytes + dst;
        let result = self
            .history()
            .async_write(self.agent, at, bytes, agent, clock);
        if let Err(race) = result {
            self.fault(FaultKind::SharedRace, race);
        }
        if rank != self.block().rank {
            let epoch = Epoch {
                interval: 1,
                agent,
                clock,
            };
            let what = format!(
                "a multicast TMA copy issued by {} writes {bytes} bytes at its pool byte {dst}, completing on its mbarrier at pool byte {mbarrier}",
                self.describe_self()
            );
            self.cluster().remote.borrow_mut().push((rank, epoch, what));
        }
        target.pool.borrow_mut()[dst as usize..(dst + bytes) as usize].copy_from_slice(data);
        let error = target.with_mbarrier_of(self, mbarrier, op, |bar, _| {
            bar.tx -= bytes as i64;
            if bar.tx.abs() > COUNT_LIMIT {
                return Some(format!("the tx-count of the mbarrier at pool byte {mbarrier} leaves the range ±(2^20 - 1): {}", bar.tx));
            }
            bar.complete_if_due(agent);
            None
        });
        if let Some(message) = error {
            self.fault(FaultKind::MbarrierMisuse, message);
        }
    }

    // -- named barriers and TMA stores --

    /// `bar.sync id, threads`: suspends until `threads` threads of the block wait at `id`.
    pub(crate) fn named_barrier(&self, id: u32, threads: u32) {
        let block_threads = self.block().block_dim.0 * self.block().block_dim.1;
        if id >= 16 || threads == 0 || !threads.is_multiple_of(32) || threads > block_threads {
            self.fault(
                FaultKind::Deadlock,
                format!("`bar.sync {id}, {threads}`: the PTX ISA wants a barrier 0 to 15 and a thread count that is a multiple of 32, at most the block's {block_threads}"),
            );
        }
        // Barriers among some threads of a block order them only through vector clocks.
        self.go_asynchronous();
        self.suspend(Suspend::NamedBarrier(id, threads));
    }

    /// A TMA store issued by this thread reads the box at pool byte `at` (`bytes` bytes) now,
    /// as its agent at the clock of its next group, and writes `writes` to global memory when a
    /// `wait_group` retires that group (or the block exits).
    pub(crate) fn tma_store(&self, at: u32, bytes: u32, writes: Vec<(usize, Vec<u8>)>) {
        self.go_asynchronous();
        let mut bulk = self.bulk.borrow_mut();
        let group = bulk.committed;
        let agent = self.history().agents().bulk(self.agent);
        let result =
            self.history()
                .async_read(self.agent, self.cluster_byte(at), bytes, agent, group + 1);
        if let Err(race) = result {
            drop(bulk);
            self.fault(FaultKind::SharedRace, race);
        }
        let mut pending = self.cluster().pending_stores.borrow_mut();
        for (address, data) in writes {
            pending.push((self.agent, address, data.len()));
            bulk.writes.push((group, address, data));
        }
    }

    /// `cp.async.bulk.commit_group`.
    pub(crate) fn bulk_commit(&self) {
        self.bulk.borrow_mut().committed += 1;
    }

    /// `cp.async.bulk.wait_group{.read} pending`: the reads of all but the `pending` most recent
    /// groups are done (the thread is ordered after them); without `.read`, their global writes
    /// too.
    pub(crate) fn bulk_wait(&self, pending: u32, read_only: bool) {
        let retired = {
            let mut bulk = self.bulk.borrow_mut();
            bulk.read_retired = bulk
                .read_retired
                .max(bulk.committed.saturating_sub(pending));
            bulk.read_retired
        };
        let agent = self.history().agents().bulk(self.agent);
        self.history().acquire_agent(self.agent, agent, retired);
        if !read_only {
            self.complete_stores(|group| group < retired);
        }
    }

    /// Performs this thread's pending global writes of the groups `done` selects.
    fn complete_stores(&self, done: impl Fn(u32) -> bool) {
        let finished: Vec<(u32, usize, Vec<u8>)> = {
            let mut bulk = self.bulk.borrow_mut();
            let (finished, rest) = bulk.writes.drain(..).partition(|w| done(w.0));
            bulk.writes = rest;
            finished
        };
        let mut pending = self.cluster().pending_stores.borrow_mut();
        for (_, address, data) in finished {
            if let Some(i) = pending
                .iter()
                .position(|p| *p == (self.agent, address, data.len()))
            {
                pending.swap_remove(i);
            }
            // SAFETY: checked against the launch's buffers when the store was issued.
            unsafe {
                core::ptr::copy_nonoverlapping(data.as_ptr(), address as *mut u8, data.len())
            };
        }
    }

    /// When this thread's block exits: its TMA stores must have finished reading its shared
    /// memory (which is gone with it); their global writes complete.
    fn exit_stores(&self) -> Result<(), String> {
        let unread = {
            let bulk = self.bulk.borrow();
            let issued =
                bulk.committed + u32::from(bulk.writes.iter().any(|w| w.0 == bulk.committed));
            issued > bulk.read_retired
        };
        self.complete_stores(|_| true);
        if unread {
            return Err("the block exits while a TMA store issued by this thread may still read its shared memory (wait with `cp.async.bulk.wait_group.read 0` first)".to_string());
        }
        Ok(())
    }

    // -- clusters --

    /// This thread, as a report names it ("thread (x, y)", and its block in a cluster).
    fn describe_self(&self) -> String {
        self.history().describe(self.agent)
    }

    /// Block `rank` of this thread's cluster, which must exist and not have exited.
    fn peer(&self, rank: u32, op: &str) -> &BlockContext {
        let cluster = self.cluster();
        if rank >= cluster.blocks {
            self.fault(
                FaultKind::SharedOutOfBounds,
                format!(
                    "`{op}` names block rank {rank} of a cluster of {} blocks",
                    cluster.blocks
                ),
            );
        }
        if cluster.exits.borrow()[rank as usize].is_some() {
            self.fault(
                FaultKind::SharedRace,
                format!("`{op}` reaches the shared memory of block rank {rank} of the cluster, which has exited (end the kernel with a cluster barrier, `barrier.cluster.arrive` + `wait`, so that no block leaves while a peer may still access it)"),
            );
        }
        // SAFETY: the cluster's blocks are consecutive in `run_cluster`'s vector, by rank.
        let me = self.block();
        unsafe { &*(me as *const BlockContext).offset(rank as isize - me.rank as isize) }
    }

    /// `%cluster_ctarank`.
    pub(crate) fn cluster_rank(&self) -> u32 {
        self.block().rank
    }

    /// `%clusterid.x` and `%nclusterid.x`.
    pub(crate) fn cluster_id(&self) -> (u32, u32) {
        let c = self.cluster();
        (c.id, c.count)
    }

    /// `barrier.cluster.arrive.release`: this thread's clock is released into the phase of its
    /// arrival count.
    pub(crate) fn cluster_arrive(&self) {
        self.go_asynchronous();
        let phase = self.cluster_arrivals.get();
        self.cluster_arrivals.set(phase + 1);
        let mut phases = self.cluster().cluster_phases.borrow_mut();
        if phases.len() <= phase as usize {
            phases.resize(phase as usize + 1, Vec::new());
        }
        self.history()
            .release_into(self.agent, &mut phases[phase as usize]);
    }

    /// `barrier.cluster.wait.acquire`: waits until every thread of the cluster made as many
    /// arrivals as this one, and acquires what they released.
    pub(crate) fn cluster_wait(&self) {
        let phase = self.cluster_arrivals.get();
        if phase == 0 {
            self.fault(
                FaultKind::MbarrierMisuse,
                "`barrier.cluster.wait` without a `barrier.cluster.arrive` before it".to_string(),
            );
        }
        self.suspend(Suspend::ClusterBarrier(phase));
        let phases = self.cluster().cluster_phases.borrow();
        self.history()
            .acquire(self.agent, &phases[phase as usize - 1]);
    }

    /// `mbarrier.arrive.release.cluster.shared::cluster` on the mbarrier at pool byte `byte` of
    /// block `rank` (this block's own too).
    pub(crate) fn mbarrier_arrive_remote(&self, rank: u32, byte: u32) {
        let op = "mbarrier.arrive.shared::cluster";
        let target = self.peer(rank, op);
        if rank != self.block().rank {
            let epoch = {
                let history = self.history();
                Epoch {
                    interval: history.interval(),
                    agent: self.agent,
                    clock: history.clock_now(self.agent),
                }
            };
            let what = format!(
                "{} arrives on its mbarrier at pool byte {byte}",
                self.describe_self()
            );
            self.cluster().remote.borrow_mut().push((rank, epoch, what));
        }
        let me = self.agent;
        let error = target.with_mbarrier_of(self, byte, op, |bar, history| {
            if bar.pending == 0 {
                return Some(format!("arrive on the mbarrier at pool byte {byte} of block rank {rank}, whose current phase has no pending arrivals (more arrivals than its count, {})", bar.expected));
            }
            history.release(me, &mut bar.gathered);
            bar.pending -= 1;
            let agent = history.agents().mbarrier(bar.index);
            bar.complete_if_due(agent);
            None
        });
        if let Some(message) = error {
            self.fault(FaultKind::MbarrierMisuse, message);
        }
    }

    // -- wgmma --

    /// `fence.proxy.async.shared::cta`.
    pub(crate) fn fence_proxy_async(&self) {
        self.go_asynchronous();
        self.history().fence_proxy(self.agent);
    }

    /// `wgmma.fence.sync.aligned` (warp-wide).
    pub(crate) fn wgmma_fence(&self) {
        self.go_asynchronous();
        self.warp_collective("wgmma.fence", &[], true, |_| ());
        let mut lane = self.wgmma.get();
        lane.fenced = true;
        self.wgmma.set(lane);
    }

    /// Before a `wgmma.mma_async`: the PTX ISA wants a `wgmma.fence` before the first one and
    /// between any register access and a `wgmma` using the same registers; the emulator asks
    /// for one after every `wgmma.wait_group` (after which the kernel reads or writes
    /// accumulators and operands).
    pub(crate) fn wgmma_check_fenced(&self, op: &str) {
        if !self.wgmma.get().fenced {
            self.fault(
                FaultKind::WgmmaMisuse,
                format!("`{op}` without a `wgmma.fence` since the start or the last `wgmma.wait_group`: the tensor cores may read registers the warp has not finished writing"),
            );
        }
    }

    /// The group the `wgmma` issued now belongs to (it completes when a wait retires it).
    pub(crate) fn wgmma_group(&self) -> u32 {
        self.wgmma.get().committed
    }

    /// Records the shared-memory operand reads of this warp's `wgmma` (called by one lane, after
    /// the warp-wide exchange): they last until the wait that retires the current group.
    pub(crate) fn wgmma_reads(&self, ranges: &[(u32, u32)]) {
        let agent = self.wgmma_agent();
        let clock = self.wgmma.get().committed + 1;
        for &(byte, bytes) in ranges {
            self.check_pool_range(byte, bytes, 16, "wgmma operand (descriptor)");
            let result =
                self.history()
                    .async_read(self.agent, self.cluster_byte(byte), bytes, agent, clock);
            if let Err(race) = result {
                self.fault(FaultKind::SharedRace, race);
            }
        }
    }

    /// The agent of this thread's warp's `wgmma` operand reads.
    fn wgmma_agent(&self) -> u32 {
        let agents = self.history().agents();
        agents.warp(self.block().rank, self.linear / 32)
    }

    /// Records that the `wgmma` issued now reads its A fragment from the kernel's
    /// `FragA<Tf32, 4>` at `address` (bits `bits`) until its group retires.
    pub(crate) fn wgmma_hold(&self, address: usize, bits: [u32; 4]) {
        let group = self.wgmma.get().committed;
        self.wgmma_held.borrow_mut().push((group, address, bits));
    }

    /// `wgmma.commit_group.sync.aligned`.
    pub(crate) fn wgmma_commit(&self) {
        self.go_asynchronous();
        self.warp_collective("wgmma.commit_group", &[], true, |_| ());
        let mut lane = self.wgmma.get();
        lane.committed += 1;
        self.wgmma.set(lane);
    }

    /// `wgmma.wait_group.sync.aligned pending`: every group but the `pending` most recent is
    /// complete; the lane is ordered after their operand reads.
    pub(crate) fn wgmma_wait(&self, pending: u32) {
        self.go_asynchronous();
        self.warp_collective("wgmma.wait_group", &[], true, |_| ());
        let mut lane = self.wgmma.get();
        lane.retired = lane.retired.max(lane.committed.saturating_sub(pending));
        lane.fenced = false;
        self.wgmma.set(lane);
        let agent = self.wgmma_agent();
        self.history()
            .acquire_agent(self.agent, agent, lane.retired);
        // The A fragments of the retired groups must have stayed as they were: the tensor cores
        // read them until now (on the GPU, overwriting them corrupts the product).
        let retired: Vec<_> = {
            let mut held = self.wgmma_held.borrow_mut();
            let (done, running) = held.drain(..).partition(|h| h.0 < lane.retired);
            *held = running;
            done
        };
        for (group, address, bits) in retired {
            // SAFETY: the address of a `FragA<Tf32, 4>` (four transparent u32) in the running
            // kernel's frame, which outlives the wait.
            let now = unsafe { *(address as *const [u32; 4]) };
            if now != bits {
                self.fault(
                    FaultKind::WgmmaMisuse,
                    format!("the A fragment that a `wgmma` of group {group} reads from registers was overwritten before `wgmma.wait_group` retired the group: the tensor cores read those registers until then (keep one fragment buffer per group in flight)"),
                );
            }
        }
    }

    /// Faults unless the `wgmma` group `group` has been retired by a `wgmma.wait_group`: the
    /// accumulators it writes may not be read before.
    pub(crate) fn wgmma_check_retired(&self, group: u32, what: &str) {
        let lane = self.wgmma.get();
        if group >= lane.retired {
            self.fault(
                FaultKind::WgmmaMisuse,
                format!(
                    "{what} while the `wgmma` writing them may still run: its group ({}) is {}, and `wgmma.wait_group` has retired {} groups",
                    group,
                    if group < lane.committed { "committed but not waited for" } else { "not even committed" },
                    lane.retired
                ),
            );
        }
    }
}

impl BlockContext {
    pub(crate) fn pool_mut(&self) -> core::cell::RefMut<'_, Vec<u8>> {
        self.pool.borrow_mut()
    }

    /// Runs `f` on this block's mbarrier at pool byte `byte` for thread `ctx` (of this block or
    /// of a peer), after checking that it was initialised and that the initialisation is ordered
    /// before the thread's use of it.
    fn with_mbarrier_of<R>(
        &self,
        ctx: &ThreadContext,
        byte: u32,
        op: &str,
        f: impl FnOnce(&mut MBarrier, &mut History) -> R,
    ) -> R {
        let mut bars = self.mbarriers.borrow_mut();
        let of = if ctx.block().rank == self.rank {
            String::new()
        } else {
            format!(" of block rank {}", self.rank)
        };
        let Some(bar) = bars.iter_mut().find(|m| m.byte == byte) else {
            drop(bars);
            ctx.fault(
                FaultKind::MbarrierMisuse,
                format!("`{op}` on pool byte {byte}{of}, where no mbarrier was initialised"),
            )
        };
        let mut history = ctx.history();
        if !history.is_ordered_before(bar.init, ctx.agent) {
            let who = history.describe(bar.init.agent);
            drop((history, bars));
            ctx.fault(
                FaultKind::MbarrierMisuse,
                format!("`{op}` on the mbarrier at pool byte {byte}{of} before its initialisation by {who} is visible to this thread (initialise, then `fence.mbarrier_init` and a barrier; a cluster barrier for its peers)"),
            );
        }
        f(bar, &mut history)
    }
}
