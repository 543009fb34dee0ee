//! The tile queue ([`kernels_gpu::pipeline::queue`]) and the two instructions it adds to the
//! device layer, on the emulator: a word stored into a peer block's shared memory
//! (`st.shared::cluster`, [`cluster::store_word`]) and published by an arrival at cluster scope
//! ([`MBarrier::arrive_release_cluster`], read after [`MBarrier::wait_cluster`]).
//!
//! The kernel: three clusters of two blocks, each block a producer warp (its lane 0 reads the
//! queue alone: the leader in block 0, a lone reader in block 1) and two consumer warps (each a
//! whole-warp reader); and three "clusters" of one block, where the queue publishes at the
//! block's scope (plain `mbarrier` arrive and wait: a release at cluster scope costs a fence at
//! the GPU's scope in SASS). Every reader logs the units it reads. The queue must give every
//! reader of a cluster the same units in the same order, every unit to one cluster, and leave
//! the counter at zero. Then each planted bug in the publishing protocol must be reported where
//! it is made.
use kernels_gpu::device::cluster;
use kernels_gpu::device::mbarrier::{fence_mbarrier_init, MBarrier};
use kernels_gpu::device::{pool_padding_to, thread_idx_x, GlobalMut};
use kernels_gpu::emu::{launch, Buffer, Fault, FaultKind, LaunchShape};
use kernels_gpu::pipeline::queue::{Queue, Reader, OBJECTS};
use kernels_gpu::pipeline::schedule::Walk;

const CLUSTERS: u32 = 3;
const UNITS: u32 = 23;
/// Readers per block: the producer thread and two consumer warps.
const READERS: u32 = 3;
const THREADS: u32 = 32 * READERS;
/// Log entries per reader: at most every unit, then the end.
const LOG: u32 = UNITS + 1;

fn buffer<T>(name: &'static str, v: &[T]) -> Buffer {
    Buffer {
        name,
        address: v.as_ptr() as usize,
        bytes: std::mem::size_of_val(v),
    }
}

/// `CLUSTERS` clusters of `blocks` blocks.
fn shape(shared_bytes: u32, blocks: u32) -> LaunchShape {
    LaunchShape {
        grid: (blocks * CLUSTERS, 1),
        block: (THREADS, 1),
        shared_bytes,
        cluster: (blocks, 1),
    }
}

/// Runs the queue over `UNITS` units from a counter starting at `counter`, in clusters of
/// `blocks` blocks; returns the outcome, each reader's log (`u32::MAX` past its last unit) and
/// the counter after.
fn run_queue(counter: u32, blocks: u32) -> (Result<(), Fault>, Vec<Vec<u32>>, u32) {
    let mut log = vec![u32::MAX; (blocks * CLUSTERS * READERS * LOG) as usize];
    let mut counter = [counter];
    let (log_at, counter_at) = (log.as_mut_ptr() as usize, counter.as_mut_ptr() as usize);
    let buffers = [buffer("log", &log), buffer("counter", &counter)];
    let result = launch(
        "queue",
        shape(OBJECTS * MBarrier::BYTES + 1024, blocks),
        &buffers,
        &|| unsafe {
            queue_kernel(
                GlobalMut::new(log_at as *mut f32),
                counter_at as *mut u32,
                blocks,
            )
        },
    );
    let logs = log.chunks(LOG as usize).map(<[u32]>::to_vec).collect();
    (result, logs, counter[0])
}

/// (The logs are words, written as the f32 with their bits: the device layer's global stores are
/// of reals.)
unsafe fn queue_kernel(log: GlobalMut<f32>, counter: *mut u32, blocks: u32) {
    let first = MBarrier::at(pool_padding_to(8));
    let (tid, rank) = (thread_idx_x(), cluster::rank());
    let mut queue = Queue::new(first, counter);
    // The leader's state: cluster c starts with unit c.
    let mut walk = Walk::new(cluster::id(), cluster::count(), UNITS);
    if tid == 0 {
        queue.init(READERS, blocks);
        fence_mbarrier_init();
    }
    cluster::sync();
    let (warp, lane) = (tid / 32, tid % 32);
    let reader = match (warp, rank) {
        (0, 0) => Some(Reader::Leader),
        (0, _) => Some(Reader::Lone),
        _ => Some(Reader::Warp),
    };
    let reads = warp > 0 || lane == 0;
    if let (true, Some(reader)) = (reads, reader) {
        let block = kernels_gpu::device::block_idx_x();
        let at = ((block * READERS + warp) * LOG) as usize;
        let mut i = 0;
        while let Some(unit) = queue.next(&mut walk, reader, blocks) {
            if lane == 0 {
                unsafe { log.store(at + i, f32::from_bits(unit)) };
            }
            i += 1;
        }
    }
    // No block leaves while its peer may still store into it or arrive on its barriers.
    cluster::sync();
}

fn units_of(log: &[u32]) -> Vec<u32> {
    log.iter().copied().take_while(|&u| u != u32::MAX).collect()
}

#[test]
fn every_reader_of_a_cluster_sees_the_same_units_and_each_unit_goes_to_one_cluster() {
    for blocks in [2, 1] {
        let (result, logs, counter) = run_queue(0, blocks);
        result.expect("the queue runs without a fault");
        let per_cluster = (blocks * READERS) as usize;
        let mut seen = Vec::new();
        for cluster in 0..CLUSTERS as usize {
            let readers = &logs[cluster * per_cluster..][..per_cluster];
            let units = units_of(&readers[0]);
            for (r, log) in readers.iter().enumerate() {
                assert_eq!(
                    units_of(log),
                    units,
                    "{blocks}: cluster {cluster}, reader {r}"
                );
            }
            // A cluster starts with its own number; the rest come from the counter, in order.
            if let Some(&first) = units.first() {
                assert_eq!(
                    first, cluster as u32,
                    "{blocks}: cluster {cluster}'s first unit"
                );
            }
            assert!(units.windows(2).all(|w| w[0] < w[1]), "{blocks}: {units:?}");
            seen.extend(units);
        }
        seen.sort();
        let every = (0..UNITS).collect::<Vec<_>>();
        assert_eq!(seen, every, "clusters of {blocks}: every unit once");
        assert_eq!(
            counter, 0,
            "clusters of {blocks}: the last ticket puts the counter back"
        );
    }
}

#[test]
fn a_counter_left_over_by_an_earlier_launch_skips_units() {
    // What the reset prevents: the tickets start past zero, and the units below them are lost.
    let (result, logs, _) = run_queue(5, 2);
    result.expect("runs");
    let total: usize = logs
        .iter()
        .step_by(READERS as usize * 2)
        .map(|l| units_of(l).len())
        .sum();
    assert_eq!(total, (UNITS - 5) as usize);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bug {
    None,
    /// The leader arrives on the peer's barrier before it stores the word: the reader's wait
    /// acquires nothing of the store.
    StoreAfterArrive,
    /// The word goes to block rank 2 of a cluster of two.
    StoreToMissingPeer,
    /// The peer neither waits for the word nor for a cluster barrier before it exits: the
    /// leader's store may reach shared memory that has gone.
    PeerExitsEarly,
}

/// Block 0 stores a word into block 1's shared memory and publishes it on block 1's barrier;
/// block 1's thread 0 waits and reads it into `out`.
fn run_publish(bug: Bug) -> (Result<(), Fault>, u32) {
    let mut out = [0u32];
    let out_at = out.as_mut_ptr() as usize;
    let one_cluster = LaunchShape {
        grid: (2, 1),
        ..shape(1024 + 16, 2)
    };
    let result = launch(
        &format!("{bug:?}"),
        one_cluster,
        &[buffer("out", &out)],
        &|| publish_kernel(bug, GlobalMut::new(out_at as *mut f32)),
    );
    (result, out[0])
}

fn publish_kernel(bug: Bug, out: GlobalMut<f32>) {
    let filled = MBarrier::at(pool_padding_to(8));
    let word = filled.offset(1).pool_byte();
    let (tid, rank) = (thread_idx_x(), cluster::rank());
    if tid == 0 {
        filled.init(1);
        fence_mbarrier_init();
    }
    cluster::sync();
    if bug == Bug::PeerExitsEarly && rank == 1 {
        return;
    }
    if tid == 0 && rank == 0 {
        let to = if bug == Bug::StoreToMissingPeer { 2 } else { 1 };
        if bug == Bug::StoreAfterArrive {
            filled.arrive_release_cluster(1);
            cluster::store_word(word, to, 42);
        } else {
            cluster::store_word(word, to, 42);
            filled.arrive_release_cluster(1);
        }
    }
    if tid == 0 && rank == 1 {
        filled.wait_cluster(0);
        unsafe { out.store(0, f32::from_bits(cluster::load_word(word))) };
    }
    if bug != Bug::PeerExitsEarly {
        cluster::sync();
    }
}

#[test]
fn a_word_published_at_cluster_scope_reaches_the_peer() {
    let (result, out) = run_publish(Bug::None);
    result.expect("no fault");
    assert_eq!(out, 42);
}

#[test]
fn planted_publishing_bugs_are_reported() {
    for (bug, kind, says) in [
        (
            Bug::StoreAfterArrive,
            FaultKind::SharedRace,
            "no barrier or mbarrier orders",
        ),
        (
            Bug::StoreToMissingPeer,
            FaultKind::SharedOutOfBounds,
            "rank 2",
        ),
        (Bug::PeerExitsEarly, FaultKind::SharedRace, "exit"),
    ] {
        let (result, _) = run_publish(bug);
        let fault = result.expect_err(&format!("{bug:?} must fault"));
        assert_eq!(fault.kind, kind, "{bug:?}: {fault}");
        assert!(fault.detail.contains(says), "{bug:?}: {}", fault.detail);
    }
}

/// A cluster of one block publishes at the block's scope: thread 0 stores the word and arrives
/// on *filled* with the default semantics, warp 1's lane 0 waits (an acquire at the block's
/// scope) and reads it into `out`. With `store_after_arrive` (the planted bug) the arrival
/// comes first and orders nothing.
fn run_publish_in_block(store_after_arrive: bool) -> (Result<(), Fault>, u32) {
    let mut out = [0u32];
    let out_at = out.as_mut_ptr() as usize;
    let one_block = LaunchShape {
        grid: (1, 1),
        ..shape(1024 + 16, 1)
    };
    let result = launch(
        "publish in a block",
        one_block,
        &[buffer("out", &out)],
        &|| {
            let out = GlobalMut::new(out_at as *mut f32);
            let filled = MBarrier::at(pool_padding_to(8));
            let word = filled.offset(1).pool_byte();
            let tid = thread_idx_x();
            if tid == 0 {
                filled.init(1);
                fence_mbarrier_init();
            }
            kernels_gpu::device::sync_threads();
            if tid == 0 {
                if store_after_arrive {
                    filled.arrive();
                    cluster::store_word(word, 0, 42);
                } else {
                    cluster::store_word(word, 0, 42);
                    filled.arrive();
                }
            }
            if tid == 32 {
                filled.wait(0);
                unsafe { out.store(0, f32::from_bits(cluster::load_word(word))) };
            }
        },
    );
    (result, out[0])
}

#[test]
fn a_word_published_in_a_block_reaches_its_reader_and_a_late_store_is_a_race() {
    let (result, out) = run_publish_in_block(false);
    result.expect("no fault");
    assert_eq!(out, 42);
    let (result, _) = run_publish_in_block(true);
    let fault = result.expect_err("a store after the arrival must fault");
    assert_eq!(fault.kind, FaultKind::SharedRace, "{fault}");
    assert!(
        fault.detail.contains("no barrier or mbarrier orders"),
        "{}",
        fault.detail
    );
}
