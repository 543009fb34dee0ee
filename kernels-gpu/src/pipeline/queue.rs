//! The dynamic tile scheduler: the blocks take work units from a counter in global memory, in
//! order, instead of each walking its own fixed share.
//!
//! **Why.** The static walk ([`super::schedule::Walk`]) gives cluster `c` of `G` the units `c`,
//! `c + G`, `c + 2G`, … Over a strided batch of 1 024 members of 2048 × 2048 × 128 in bf16 that
//! is about a thousand units per cluster, and clusters do not run at the same speed: some
//! multiprocessors sit nearer the memory partition they write to. The clusters drift apart, a
//! slow one a member or more behind a fast one, while 8.6 GB of C stream through a 50 MB L2
//! (which turns over in about six units' time). A member's A and B are then gone from L2 before
//! the last of its tiles reads them: ncu counted 5.2 GB read from DRAM for 1.07 GB of operands
//! (cuBLAS: 1.08 GB). Launched with a block per tile instead (the hardware's block scheduler
//! hands the tiles out in order), the same kernel read 1.07 GB, but lost the overlap of one
//! tile's epilogue with the next tile's loads and ran slower still. cuBLAS's kernel for this
//! batch does what this module does: its one atomic per cluster tile shows in ncu (65 470 of
//! them for 65 536 units, less the 66 clusters' first).
//!
//! **How.** Cluster `c` starts with unit `c`. After that, the producer thread of the cluster's
//! block 0 (the *leader*) takes a ticket `t` from the counter (a relaxed `atom.add`: nothing is
//! published through it) and computes unit `G + t`; the units are taken in order, so the clusters
//! working at one moment cover neighbouring units, whatever their speeds. Every thread that walks
//! the tiles (producers, assisting warps, consumers, in every block of the cluster) must see the
//! same units in the same order: the leader writes each unit into a ring of [`SLOTS`] slots in the
//! shared memory of every block of the cluster ([`crate::device::cluster::store_word`]) and
//! publishes it with an arrival on that block's *filled* barrier of the slot, a release at cluster
//! scope. Each reader (a lone producer thread, or lane 0 of a warp, which broadcasts it to the
//! others) waits on *filled* with an acquire at cluster scope, reads the word and arrives on the
//! leader's *drained* barrier of the slot; the leader reuses a slot once every reader of every
//! block has drained it. Past the last unit the leader publishes [`END`], and every walk stops.
//!
//! Where the cluster is one block, the leader and its readers share it, and the default
//! semantics of the arrive and the wait (release and acquire at the block's scope) are enough.
//! The cluster scope is not free: ptxas writes the release as a `MEMBAR.ALL.GPU` (and an
//! `ERRBAR`) before the arrive, which waits for the leader's memory operations at the GPU's
//! scope, once per unit and before the unit's loads; and the acquire as a `CCTL.IVALL`, an
//! invalidation of the reader's L1. Under a short-k batch's write stream that fence took a
//! quarter of the producer's time, and `wgmma-queue:3` (three stages) ran at 0.80× cuBLAS
//! instead of 0.97× (`docs/perf-notes.md`, 2026-11-28).
//!
//! The leader takes its next ticket right after publishing a unit, so the atomic's round trip
//! overlaps the unit's loads. The last ticket of the launch (`t = units − 1`: every cluster takes
//! one ticket per unit it computes, so the launch takes exactly `units` tickets) puts the counter
//! back to zero for the next launch on the stream, as stream-k's counters are.
//!
//! **Where.** The kernels of `wgmma-queue` ([`crate::variants::wgmma_queue`]) walk it: their
//! [`super::Kernel::DYNAMIC`] is set, and [`super::run`] expands its roles' loops over the queue
//! instead of the static walk, reading the counter's address after the tensor maps. A counter
//! serves one launch at a time: two launches that shared it at once would take each other's
//! tickets. Every other kernel keeps the static walk and its code (wired into them all as a
//! run-time choice, the queue cost those launches 1.5–4% and made ptxas spill in 21 entry
//! points: `docs/perf-notes.md`, 2026-11-27).
use super::schedule::Walk;
use crate::device::cluster;
use crate::device::mbarrier::MBarrier;
use crate::device::semaphore::Semaphore;
use crate::device::WARP_SIZE;

/// Slots in the ring: units the leader may publish ahead of the slowest reader. The producer
/// runs at most its ring of stages ahead of the consumers (a unit per stage when a tile is one
/// slice of k), and a ping-pong consumer warpgroup one tile behind the other.
pub const SLOTS: u32 = 8;

/// Pool objects of 8 bytes the queue takes: per slot a *filled* and a *drained* mbarrier and the
/// slot's word.
pub const OBJECTS: u32 = 3 * SLOTS;

/// The unit that ends the walk.
pub const END: u32 = u32::MAX;

/// Who reads a unit from the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    /// The producer thread of the cluster's block 0: takes the tickets and publishes the units,
    /// then reads them as the others do.
    Leader,
    /// A thread alone in its warp (another block's producer thread).
    Lone,
    /// A whole warp: lane 0 reads, the others receive the unit from it.
    Warp,
}

/// A reader's place in the queue. The leader's state is its [`Walk`]: the walk's next unit is
/// the one it publishes next, its step the number of clusters (unit `G + t` for ticket `t`).
/// (Few fields: the 24- and 40-register producers hold them beside their own.)
#[derive(Clone, Copy, Debug)]
pub struct Queue {
    /// The first of the queue's pool objects: slot `s`'s *filled* is object `s`, its *drained*
    /// `SLOTS + s`, its word `2·SLOTS + s`.
    first: MBarrier,
    counter: *mut u32,
    /// Units read so far: the slot is `position % SLOTS`, the phase the parity of the pass.
    position: u32,
}

impl Queue {
    /// The queue whose objects start at `first`, its units taken from `counter`.
    #[inline(always)]
    pub fn new(first: MBarrier, counter: *mut u32) -> Self {
        Queue {
            first,
            counter,
            position: 0,
        }
    }

    #[inline(always)]
    fn filled(&self, s: u32) -> MBarrier {
        self.first.offset(s)
    }

    #[inline(always)]
    fn drained(&self, s: u32) -> MBarrier {
        self.first.offset(SLOTS + s)
    }

    #[inline(always)]
    fn word(&self, s: u32) -> u32 {
        self.first.offset(2 * SLOTS + s).pool_byte()
    }

    /// One thread of each block, before the barrier that publishes the initialisation: *filled*
    /// completes with the leader's one arrival, *drained* (used in block 0) with one arrival
    /// from each of the `readers` reading warps or lone threads of each of the `cluster_size`
    /// blocks.
    #[inline(always)]
    pub fn init(&self, readers: u32, cluster_size: u32) {
        for s in 0..SLOTS {
            self.filled(s).init(1);
            self.drained(s).init(readers * cluster_size);
        }
    }

    // ANCHOR: publish
    /// The leader: publishes its walk's next unit (or [`END`]) to every block of the cluster
    /// once the slot is drained, then takes the ticket for the one after.
    #[inline(always)]
    fn publish(&self, walk: &mut Walk, cluster_size: u32) {
        let counter = Semaphore::new(self.counter);
        // The ticket taken after the previous unit: the launch's last puts the counter back.
        if walk.at_last_ticket() {
            unsafe { counter.reset() };
        }
        let unit = walk.current().unwrap_or(END);
        let (s, phase) = (self.position % SLOTS, (self.position / SLOTS) & 1);
        // On the ring's first pass the "previous" phase counts as drained.
        self.drained(s).wait(phase ^ 1);
        if cluster_size == 1 {
            // One block: its own threads read the slot, and the arrive's and the wait's
            // default semantics (release and acquire at the block's scope) order the word.
            cluster::store_word(self.word(s), 0, unit);
            self.filled(s).arrive();
        } else {
            for rank in 0..cluster_size {
                cluster::store_word(self.word(s), rank, unit);
                self.filled(s).arrive_release_cluster(rank);
            }
        }
        if unit != END {
            walk.to_ticket(unsafe { counter.take() });
        }
    }

    /// The next unit, or `None` past the last. Every reader of the cluster calls it the same
    /// number of times; a [`Reader::Warp`] with all 32 lanes. `walk` is the leader's state
    /// (the others' is left alone).
    #[inline(always)]
    pub fn next(&mut self, walk: &mut Walk, reader: Reader, cluster_size: u32) -> Option<u32> {
        if reader == Reader::Leader {
            self.publish(walk, cluster_size);
        }
        let (s, phase) = (self.position % SLOTS, (self.position / SLOTS) & 1);
        let lane = crate::device::thread_idx_x() % WARP_SIZE;
        let mut unit = 0;
        if reader != Reader::Warp || lane == 0 {
            if cluster_size == 1 {
                self.filled(s).wait(phase);
            } else {
                self.filled(s).wait_cluster(phase);
            }
            unit = cluster::load_word(self.word(s));
            // The read is this thread's, before its release: the leader may refill the slot.
            let drained = self.drained(s);
            if cluster::rank() == 0 {
                drained.arrive();
            } else {
                drained.arrive_cluster(0);
            }
        }
        if reader == Reader::Warp {
            unit = cluster::broadcast_word(unit, 0);
        }
        self.position += 1;
        (unit != END).then_some(unit)
    }
    // ANCHOR_END: publish
}
