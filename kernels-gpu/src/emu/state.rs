//! What a thread carries from one operation to the next, each kind defined here and worked on
//! in its own file: why it suspended (`schedule.rs`), its open `cp.async` copies (`memory.rs`),
//! its deposit for a warp-wide operation (`sync.rs`), its TMA stores (`tma.rs`) and its view of
//! the warp's `wgmma` groups (`wgmma.rs`). The thread's context (`context.rs`) holds them all;
//! kept apart from those files, so that the context imports none of the operations that take it.

/// Why a thread suspended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Suspend {
    Barrier,
    /// A warp-wide operation; `true` where it orders the lanes' memory accesses
    /// (`bar.warp.sync`), `false` where it only exchanges registers.
    WarpCollective(bool),
    /// Waiting for the phase of parity `.1` of the mbarrier at pool byte `.0` of its block.
    Mbarrier(u32, u32),
    /// `barrier.cluster.wait` for the cluster barrier's phase `.0` (the thread's arrivals).
    ClusterBarrier(u32),
    /// `bar.sync id, threads`: the barrier `.0` of `.1` threads.
    NamedBarrier(u32, u32),
}

/// A pending `cp.async`: the shared-pool byte address and the bytes it will write there.
pub(super) type AsyncCopy = (u32, Vec<u8>);

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

/// A thread's TMA stores: groups committed, groups whose shared-memory reads a
/// `wait_group.read` retired, and the global writes not yet performed, by group.
#[derive(Default)]
pub(super) struct Bulk {
    pub(super) committed: u32,
    pub(super) read_retired: u32,
    /// (group, global address, bytes): performed at a `wait_group` that retires the group, or
    /// when the block exits.
    pub(super) writes: Vec<(u32, usize, Vec<u8>)>,
}

/// What a lane knows of its warp's `wgmma` operations (every lane of a warp executes the same
/// ones, so every lane holds the same numbers).
#[derive(Clone, Copy, Default)]
pub(super) struct WgmmaLane {
    /// A `wgmma.fence` since the last `wgmma.wait_group` (or the start).
    pub(super) fenced: bool,
    /// Groups committed, and groups retired by `wgmma.wait_group`.
    pub(super) committed: u32,
    pub(super) retired: u32,
}
