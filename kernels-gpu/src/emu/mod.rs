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
//! - in a programmatic dependent launch ([`launch_dependent`]), a global access to a buffer the
//!   kernel before it may still write, made before the thread's `griddepcontrol.wait`;
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
//!
//! The emulator's files, one job each, each importing only the files below it in this list
//! (`tests/tests/modules.rs` checks that no two import each other, directly or around):
//! - this file: the launch, and the workers that run its clusters;
//! - `schedule.rs`: the scheduler, which resumes a cluster's threads and releases them from
//!   barriers and warp-wide operations;
//! - `context.rs`: what the emulator keeps for a thread, its block and its cluster, and how a
//!   device function finds the thread it runs in;
//! - the operations of a thread, by hardware feature: `memory.rs` (global and shared accesses,
//!   `cp.async`), `sync.rs` (block barriers and warp-wide exchanges), `tma.rs` (mbarriers and
//!   TMA copies), `wgmma.rs` (the `wgmma` protocol), `cluster.rs` (thread block clusters);
//! - `state.rs`: what a thread carries between those operations (why it suspended, its open
//!   copies, its deposits, its TMA stores, its view of the `wgmma` groups), defined apart from
//!   them so that the context holds them without importing the operations that take it;
//! - `history.rs` (the happens-before model) and `mbarrier.rs` (the mbarrier object);
//! - `launch.rs` (a launch's shape and buffers) and `fault.rs` (what a fault reports).
mod cluster;
mod context;
mod fault;
mod history;
mod launch;
mod mbarrier;
mod memory;
mod schedule;
mod state;
mod sync;
mod tma;
mod wgmma;

pub(crate) use context::current;
pub use fault::{Fault, FaultKind};
use launch::Launch;
pub use launch::{Buffer, LaunchShape, SHARED_POOL_BASE};
use schedule::StackPool;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

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
    launch_dependent(kernel_name, shape, buffers, &[], kernel)
}

/// [`launch`] as a *programmatic dependent launch* (sm_90: the launch attribute
/// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`): the kernel may start while the
/// kernel before it in the stream still runs, and only `griddepcontrol.wait`
/// ([`crate::device::grid`]) waits for that kernel's end and its writes. The buffers named in
/// `written_before` are those that kernel may write; a thread that touches one (a load, a
/// store, a TMA copy) before its own `griddepcontrol.wait` is reported, whatever the timing.
/// (The hardware also orders a thread after another thread's wait by ordinary
/// synchronisation; the emulator asks each thread to wait itself, a rule the course's kernels
/// keep and which is simpler to check.)
pub fn launch_dependent(
    kernel_name: &str,
    shape: LaunchShape,
    buffers: &[Buffer],
    written_before: &[&str],
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
        written_before,
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
