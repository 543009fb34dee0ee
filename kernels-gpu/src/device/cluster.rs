//! Thread-block clusters (sm_90): up to 8 (16 with an opt-in) blocks that the hardware
//! schedules on neighbouring multiprocessors at the same time, and that can reach each other's
//! shared memory (*distributed shared memory*): arrive on a peer's mbarriers
//! ([`MBarrier::arrive_cluster`](super::mbarrier::MBarrier::arrive_cluster)), receive a
//! multicast TMA copy ([`super::tma::load_box_multicast`]), write a word into it
//! ([`store_word`]), and synchronise all their threads ([`sync`]).
//!
//! A kernel's cluster shape is fixed at compile time here (`.reqnctapercluster`, which the PTX
//! build writes from the entry table's `cluster(…)`), so that an ordinary launch makes clusters;
//! the grid must be a multiple of it. Without a cluster every block is a cluster of one, and
//! these functions still answer: rank 0, cluster id = block index.
//!
//! One rule has no counterpart inside a block: a block's shared memory disappears when it
//! exits, so no block may exit while a peer can still write into it (an arrival, a multicast).
//! Kernels end with [`sync`]; the emulator reports a block that exits earlier while a peer's
//! access to it is not ordered before the exit.
use super::backend::hopper as backend;

/// `%cluster_ctarank`: this block's rank in its cluster (0 .. cluster size).
#[inline(always)]
pub fn rank() -> u32 {
    backend::cluster_ctarank()
}

/// `%clusterid.x`: the cluster's index in a 1-D grid of clusters.
#[inline(always)]
pub fn id() -> u32 {
    backend::cluster_id_x()
}

/// `%nclusterid.x`: clusters in the grid (along x).
#[inline(always)]
pub fn count() -> u32 {
    backend::cluster_count_x()
}

/// `barrier.cluster.arrive.release.aligned` then `barrier.cluster.wait.acquire.aligned`: every
/// thread of every block of the cluster arrives, and each waits for all; what each did before
/// arriving is visible to all after the wait (the shared memory of the peers included).
#[inline(always)]
pub fn sync() {
    backend::cluster_arrive();
    backend::cluster_wait();
}

/// `st.shared::cluster.u32`: `value` into the word at pool byte `byte` of block `rank`'s shared
/// memory (its address from `mapa`; this block's own too). A weak write: publish it with
/// `MBarrier::arrive_release_cluster` on a barrier of that block, whose waiters read it after
/// `MBarrier::wait_cluster` ([`super::mbarrier`]).
#[inline(always)]
pub fn store_word(byte: u32, rank: u32, value: u32) {
    backend::st_shared_cluster_u32(super::shared_pool_base() + byte, rank, value)
}

/// The word at pool byte `byte` of this block's shared memory (a 32-bit shared load: the f32
/// view's, whose bits it is).
#[inline(always)]
pub fn load_word(byte: u32) -> u32 {
    super::Shared::<f32>::at(byte, 1).load(0).to_bits()
}

/// Lane `src_lane`'s `value`, in every lane of the warp (all 32 take part): the f32 shuffle's
/// `shfl.sync.idx.b32`, which moves bits.
#[inline(always)]
pub fn broadcast_word(value: u32, src_lane: u32) -> u32 {
    super::shfl_idx(f32::from_bits(value), src_lane).to_bits()
}
