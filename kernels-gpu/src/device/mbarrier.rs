//! mbarriers (sm_90): barriers in shared memory that threads and the TMA engine arrive on, and
//! that threads wait on by *phase*, without stopping the whole block as `bar.sync` does.
//!
//! An mbarrier is an 8-byte object with a current phase, a count of arrivals still pending in
//! it and a transaction count (tx-count) of bytes still expected (PTX ISA, "mbarrier"):
//! - [`MBarrier::init`] sets phase 0 and `count` pending arrivals (one thread, before a
//!   barrier that makes it visible to the others: [`fence_mbarrier_init`], then
//!   `sync_threads`);
//! - [`MBarrier::arrive`] is one arrival; [`MBarrier::arrive_expect_tx`] first adds `bytes` to
//!   the tx-count (the bytes the TMA copies issued next will deliver), then arrives;
//! - a TMA copy ([`super::tma`]) subtracts the bytes it delivered;
//! - the phase completes when no arrival and no byte is pending, and the next phase starts
//!   with `count` arrivals pending again;
//! - [`MBarrier::wait`]`(parity)` returns once the phase of that parity has completed. Phases
//!   alternate parity, so a waiter that tracks which phase it expects (0, 1, 0, …) needs no
//!   counter: the pipelines of `wgmma-tf32` keep one bit per ring of stages.
//!
//! An arrive is a release and a completed wait an acquire: a thread that waited for a phase
//! sees every write the arriving threads made before arriving, and every byte the phase's copies
//! delivered. On the emulator these are the edges of its happens-before model, so a read of a
//! copy's destination that no wait orders after the copy is reported as a race, not left to
//! timing (`tests/tests/emulator_hopper.rs` plants the bugs).
use super::backend::hopper as backend;
use super::shared_pool_base;

/// An mbarrier at a fixed byte offset of the shared pool (8-byte aligned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MBarrier {
    byte_offset: u32,
}

impl MBarrier {
    /// Bytes of one mbarrier object.
    pub const BYTES: u32 = 8;

    /// The mbarrier at `byte_offset` into the pool (a multiple of 8).
    #[inline(always)]
    pub const fn at(byte_offset: u32) -> Self {
        MBarrier { byte_offset }
    }

    /// The mbarrier `i` objects further in the pool.
    #[inline(always)]
    pub const fn offset(self, i: u32) -> Self {
        MBarrier {
            byte_offset: self.byte_offset + i * Self::BYTES,
        }
    }

    /// Its shared-window address (what the TMA copy takes).
    #[inline(always)]
    pub fn address(self) -> u32 {
        shared_pool_base() + self.byte_offset
    }

    /// `mbarrier.init`: phase 0, `count` arrivals per phase (1 to 2²⁰ − 1). One thread.
    #[inline(always)]
    pub fn init(self, count: u32) {
        backend::mbarrier_init(self.address(), count)
    }

    /// `mbarrier.arrive`: one arrival in the current phase (a release).
    #[inline(always)]
    pub fn arrive(self) {
        backend::mbarrier_arrive(self.address())
    }

    /// `mbarrier.arrive.expect_tx`: `bytes` more to deliver in this phase, then one arrival.
    #[inline(always)]
    pub fn arrive_expect_tx(self, bytes: u32) {
        backend::mbarrier_arrive_expect_tx(self.address(), bytes)
    }

    /// `mbarrier.expect_tx`: `bytes` more to deliver in the current phase, without an arrival
    /// (a copy whose size is known only where it is issued, added before it starts).
    #[inline(always)]
    pub fn expect_tx(self, bytes: u32) {
        backend::mbarrier_expect_tx(self.address(), bytes)
    }

    /// `mbarrier.arrive.shared::cluster`: one arrival on the mbarrier at the same offset in the
    /// shared memory of block `rank` of the cluster (its address from `mapa`), which may be this
    /// block. A release, as a local arrival is.
    #[inline(always)]
    pub fn arrive_cluster(self, rank: u32) {
        backend::mbarrier_arrive_cluster(self.address(), rank)
    }

    /// `mbarrier.arrive.release.cluster.shared::cluster` on block `rank`'s mbarrier: an arrival
    /// that also publishes this thread's earlier writes into that block's shared memory
    /// ([`super::cluster::store_word`]) to the threads that wait on it with
    /// [`MBarrier::wait_cluster`]. Costlier than [`MBarrier::arrive_cluster`] (a `MEMBAR` first).
    #[inline(always)]
    pub fn arrive_release_cluster(self, rank: u32) {
        backend::mbarrier_arrive_release_cluster(self.address(), rank)
    }

    /// `mbarrier.try_wait.parity` until the phase of parity `parity` (0 or 1) has completed (an
    /// acquire).
    #[inline(always)]
    pub fn wait(self, parity: u32) {
        backend::mbarrier_wait(self.address(), parity)
    }

    /// [`MBarrier::wait`] with `.acquire.cluster`: what a peer block's thread wrote into this
    /// block before its [`MBarrier::arrive_release_cluster`] is visible after it.
    #[inline(always)]
    pub fn wait_cluster(self, parity: u32) {
        backend::mbarrier_wait_acquire_cluster(self.address(), parity)
    }

    /// Its byte offset in the pool.
    #[inline(always)]
    pub const fn pool_byte(self) -> u32 {
        self.byte_offset
    }
}

/// `fence.mbarrier_init.release.cluster`: orders this thread's `mbarrier.init`s before its
/// next release (the barrier that publishes them to the block).
#[inline(always)]
pub fn fence_mbarrier_init() {
    backend::fence_mbarrier_init()
}
