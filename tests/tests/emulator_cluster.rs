//! Thread-block clusters on the emulator: each test plants one bug in a small kernel of two
//! blocks (or four) that share the rows they read, and checks what the emulator reports. On the
//! GPU each of these bugs hangs, corrupts another block's memory, or works until the timing
//! changes.
//!
//! The kernel: a cluster of two blocks of 128 consumer threads and a producer warp reads X (`SLICES` slices of 4 rows × 32
//! f32) through a ring of two stages. Each block's producer thread loads two of a slice's four
//! rows and multicasts them to both blocks (`cp.async.bulk.tensor…multicast::cluster`, mask
//! `0b11`); each block's *full* barrier expects the whole slice. In a cluster of four (as
//! `wgmma-layouts:4`'s) each block loads one row, with the mask `0b1111`. Every consumer thread adds up
//! one element of each slice; every consumer warp releases each stage to the producers of both
//! blocks (a remote `mbarrier.arrive` through `mapa`), because both write into it. The blocks
//! synchronise with a cluster barrier after initialising their mbarriers and before they exit.
use kernels_gpu::device::cluster;
use kernels_gpu::device::mbarrier::{fence_mbarrier_init, MBarrier};
use kernels_gpu::device::tma::{self, Swizzle, TensorMap, TensorMapSpec};
use kernels_gpu::device::{
    block_idx_x, pool_address, pool_padding_to, sync_threads, sync_warp, thread_idx_x, GlobalMut,
    Shared,
};
use kernels_gpu::emu::{launch, Buffer, Fault, FaultKind, LaunchShape};

const ROW: u32 = 32;
const ROWS_PER_SLICE: u32 = 4;
const SLICES: u32 = 6;
const STAGES: u32 = 2;
const SLICE_BYTES: u32 = ROWS_PER_SLICE * ROW * 4;
/// Consumer threads; one more warp produces.
const THREADS: u32 = 128;
const PRODUCER: u32 = THREADS;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bug {
    None,
    /// Each producer multicasts only to its own block: the peer's *full* phase never gets the
    /// other half of its bytes.
    MaskMissesPeer,
    /// The consumers release each stage to their own block's producer only.
    ReleaseOnlyLocally,
    /// A cluster of two's mask (`0b11`) in a cluster of four: every block's rows go to blocks 0
    /// and 1 only, and blocks 2 and 3 never get a byte of the slice.
    MaskOfTwoInFour,
    /// A cluster of two's release (to blocks 0 and 1) in a cluster of four: the producers of
    /// blocks 2 and 3 wait for the stage forever.
    ReleaseToTwoOfFour,
    /// No cluster barrier after the mbarriers' init: a peer may arrive on them (or multicast
    /// into the block) before it sees them initialised.
    NoClusterSyncAfterInit,
    /// No cluster barrier before exiting: a block may leave while its peer still arrives on its
    /// *empty* barriers.
    NoClusterSyncAtExit,
    /// A shuffle where the consumers' `__syncwarp()` belongs: it waits for the warp's lanes but
    /// orders none of their loads, so lanes 1–31's reads of a stage are not ordered before the
    /// copy that refills it (lane 0 alone arrives for the warp).
    ShuffleForSyncWarp,
}

#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Chunk([f32; 4]);

fn buffer<T>(name: &'static str, v: &[T]) -> Buffer {
    Buffer {
        name,
        address: v.as_ptr() as usize,
        bytes: std::mem::size_of_val(v),
    }
}

/// Runs the kernel with `bug` planted in a cluster of two; returns the outcome, the sums and the
/// expected sums.
fn run(bug: Bug) -> (Result<(), Fault>, Vec<f32>, Vec<f32>) {
    run_in(bug, 2)
}

/// [`run`] in a cluster of `blocks` (2 or 4), each loading `ROWS_PER_SLICE / blocks` rows.
fn run_in(bug: Bug, blocks: u32) -> (Result<(), Fault>, Vec<f32>, Vec<f32>) {
    let rows = SLICES * ROWS_PER_SLICE;
    let values: Vec<f32> = (0..rows * ROW).map(|i| (i % 13) as f32 - 6.0).collect();
    let x: Vec<Chunk> = values
        .chunks(4)
        .map(|c| Chunk([c[0], c[1], c[2], c[3]]))
        .collect();
    let expected: Vec<f32> = (0..blocks * THREADS)
        .map(|i| {
            let t = i % THREADS;
            (0..SLICES)
                .map(|s| values[(s * ROWS_PER_SLICE * ROW + t) as usize])
                .sum()
        })
        .collect();
    let spec = TensorMapSpec::single(
        x.as_ptr() as u64,
        4,
        [ROW as u64, rows as u64],
        ROW as u64 * 4,
        [ROW, ROWS_PER_SLICE / blocks],
        Swizzle::None,
    );
    let map = Box::new(spec.encode_for_emulator().unwrap());
    let mut out = vec![f32::NAN; (blocks * THREADS) as usize];
    let (map_at, out_at) = (
        &*map as *const TensorMap as usize,
        out.as_mut_ptr() as usize,
    );
    let shape = LaunchShape {
        grid: (blocks, 1),
        block: (THREADS + 32, 1),
        shared_bytes: STAGES * SLICE_BYTES + 2 * STAGES * MBarrier::BYTES + 1024,
        cluster: (blocks, 1),
    };
    let buffers = [
        buffer("X", &x),
        buffer("out", &out),
        buffer("tensor map", std::slice::from_ref(&*map)),
    ];
    let result = launch(&format!("{bug:?}"), shape, &buffers, &|| {
        kernel(
            bug,
            blocks,
            map_at as *const TensorMap,
            GlobalMut::new(out_at as *mut f32),
        )
    });
    (result, out, expected)
}

fn kernel(bug: Bug, blocks: u32, map: *const TensorMap, out: GlobalMut<f32>) {
    let base = pool_padding_to(128);
    let stage = |s: u32| base + s * SLICE_BYTES;
    let barriers = base + STAGES * SLICE_BYTES;
    let full = |s: u32| MBarrier::at(barriers + 8 * s);
    let empty = |s: u32| MBarrier::at(barriers + 8 * (STAGES + s));
    let (tid, rank) = (thread_idx_x(), cluster::rank());
    if tid == 0 {
        for s in 0..STAGES {
            full(s).init(1);
            // Every consumer warp of every block.
            empty(s).init(blocks * THREADS / 32);
        }
        fence_mbarrier_init();
    }
    if bug == Bug::NoClusterSyncAfterInit {
        sync_threads();
    } else {
        cluster::sync();
    }
    if tid >= THREADS {
        if tid != PRODUCER {
            return cluster_exit(bug);
        }
        let mask = match bug {
            Bug::MaskMissesPeer => 1 << rank,
            Bug::MaskOfTwoInFour => 0b11,
            _ => (1 << blocks) - 1,
        };
        for slice in 0..SLICES {
            let (s, phase) = (slice % STAGES, (slice / STAGES) % 2);
            empty(s).wait(phase ^ 1);
            full(s).arrive_expect_tx(SLICE_BYTES);
            // This block's rows of the slice, into every block.
            let share = SLICE_BYTES / blocks;
            let row = (slice * ROWS_PER_SLICE + rank * ROWS_PER_SLICE / blocks) as i32;
            let dst = pool_address(stage(s) + rank * share);
            unsafe { tma::load_box_multicast(map, dst, 0, row, 0, full(s), mask) };
        }
        return cluster_exit(bug);
    }
    let mut sum = 0f32;
    for slice in 0..SLICES {
        let (s, phase) = (slice % STAGES, (slice / STAGES) % 2);
        full(s).wait(phase);
        sum += Shared::<f32>::at(stage(s), SLICE_BYTES / 4).load(tid);
        sync_warp_then_release(bug, blocks, empty(s), tid);
    }
    unsafe { out.store((block_idx_x() * THREADS + tid) as usize, sum) };
    cluster_exit(bug);
}

/// Every thread of a block synchronises with the cluster before leaving.
fn cluster_exit(bug: Bug) {
    if bug != Bug::NoClusterSyncAtExit {
        cluster::sync();
    }
}

/// Lane 0 of each warp releases the stage, once the warp's lanes have read it: `__syncwarp()`
/// orders their reads before lane 0's arrival.
fn sync_warp_then_release(bug: Bug, blocks: u32, empty: MBarrier, tid: u32) {
    if bug == Bug::ShuffleForSyncWarp {
        let _ = kernels_gpu::device::shfl_idx(0f32, 0);
    } else {
        sync_warp();
    }
    if tid.is_multiple_of(32) {
        match bug {
            Bug::ReleaseOnlyLocally => empty.arrive(),
            Bug::ReleaseToTwoOfFour => (0..2).for_each(|r| empty.arrive_cluster(r)),
            _ => (0..blocks).for_each(|r| empty.arrive_cluster(r)),
        }
    }
}

fn fault_of(bug: Bug) -> Fault {
    fault_in(bug, 2)
}

fn fault_in(bug: Bug, blocks: u32) -> Fault {
    match run_in(bug, blocks) {
        (Err(fault), ..) => {
            // What a student sees: `cargo test --test NAME -- --nocapture` prints it.
            println!("{bug:?}: {fault}");
            fault
        }
        (Ok(()), ..) => panic!("{bug:?}: the emulator accepted it"),
    }
}

#[test]
fn the_correct_cluster_kernel_runs_and_sums_every_slice() {
    let (result, out, expected) = run(Bug::None);
    result.unwrap();
    assert_eq!(out, expected);
}

#[test]
fn the_correct_kernel_in_a_cluster_of_four_runs_and_sums_every_slice() {
    let (result, out, expected) = run_in(Bug::None, 4);
    result.unwrap();
    assert_eq!(out, expected);
}

#[test]
fn a_cluster_of_twos_mask_in_a_cluster_of_four_is_a_deadlock_naming_the_barrier() {
    let fault = fault_in(Bug::MaskOfTwoInFour, 4);
    assert_eq!(fault.kind, FaultKind::Deadlock, "{fault}");
    // Every block's rows went to blocks 0 and 1 alone: blocks 2 and 3 wait for the whole slice.
    assert!(
        fault.detail.contains("(block rank 2) wait for parity 0")
            && fault.detail.contains("tx-count of 512 bytes"),
        "{fault}"
    );
}

#[test]
fn a_cluster_of_twos_release_in_a_cluster_of_four_is_a_deadlock() {
    let fault = fault_in(Bug::ReleaseToTwoOfFour, 4);
    assert_eq!(fault.kind, FaultKind::Deadlock, "{fault}");
    assert!(fault.detail.contains("arrivals pending"), "{fault}");
}

#[test]
fn a_multicast_mask_that_misses_a_block_is_a_deadlock_naming_the_barrier() {
    let fault = fault_of(Bug::MaskMissesPeer);
    assert_eq!(fault.kind, FaultKind::Deadlock, "{fault}");
    // The full barrier got its arrival and only half of its bytes.
    assert!(fault.detail.contains("tx-count of 256 bytes"), "{fault}");
    println!("{fault}");
}

#[test]
fn releasing_a_shared_stage_to_one_producer_only_is_a_deadlock() {
    let fault = fault_of(Bug::ReleaseOnlyLocally);
    assert_eq!(fault.kind, FaultKind::Deadlock, "{fault}");
    assert!(fault.detail.contains("arrivals pending"), "{fault}");
    println!("{fault}");
}

#[test]
fn a_peer_that_uses_the_barriers_before_the_cluster_barrier_is_reported() {
    let fault = fault_of(Bug::NoClusterSyncAfterInit);
    assert_eq!(fault.kind, FaultKind::MbarrierMisuse, "{fault}");
    assert!(
        fault.detail.contains("of block rank") && fault.detail.contains("initialisation"),
        "{fault}"
    );
    println!("{fault}");
}

#[test]
fn a_block_that_exits_while_its_peer_still_arrives_is_reported() {
    let fault = fault_of(Bug::NoClusterSyncAtExit);
    // Caught when the arrival reaches the block that left, or at the end, when an arrival is
    // not ordered before the exit of the block it reached: whichever the emulation meets first.
    assert_eq!(fault.kind, FaultKind::SharedRace, "{fault}");
    assert!(
        fault.detail.contains("block rank 0")
            && fault
                .detail
                .contains("end the kernel with a cluster barrier"),
        "{fault}"
    );
    println!("{fault}");
}

#[test]
fn a_shuffle_in_place_of_syncwarp_before_lane_0s_release_is_a_race() {
    let fault = fault_of(Bug::ShuffleForSyncWarp);
    assert_eq!(fault.kind, FaultKind::SharedRace, "{fault}");
    // The copy that refills the first stage meets a read of lane 1 or above of a consumer
    // warp, not lane 0's, which its arrival orders.
    assert!(
        fault.detail.contains("a TMA copy")
            && fault
                .detail
                .contains("no barrier or mbarrier orders the read"),
        "{fault}"
    );
    assert!(!fault.detail.contains("that thread (0, 0)"), "{fault}");
    println!("{fault}");
}

/// Block 1 arrives on an mbarrier of block 0, which never waits for it and leaves later: the
/// arrival reached block 0 while it still ran, but nothing ordered it before the exit, so on the
/// GPU (other timing) it may land after. Checked when the cluster has finished.
#[test]
fn an_arrival_not_ordered_before_the_peers_exit_is_reported_at_the_end() {
    let shape = LaunchShape {
        grid: (2, 1),
        block: (32, 1),
        shared_bytes: 64,
        cluster: (2, 1),
    };
    let result = launch("unwaited-arrival", shape, &[], &|| {
        let bar = MBarrier::at(pool_padding_to(8));
        if thread_idx_x() == 0 {
            bar.init(1);
            fence_mbarrier_init();
        }
        cluster::sync();
        if cluster::rank() == 1 {
            if thread_idx_x() == 0 {
                bar.arrive_cluster(0);
            }
            return;
        }
        // Block 0 works a little longer, and never waits on the barrier.
        for _ in 0..3 {
            sync_threads();
        }
    });
    let fault = result.expect_err("an arrival the peer's exit does not follow");
    assert_eq!(fault.kind, FaultKind::SharedRace, "{fault}");
    assert!(
        fault
            .detail
            .contains("block rank 0 of the cluster exits while a peer may still write")
            && fault.detail.contains("arrives on its mbarrier"),
        "{fault}"
    );
    println!("{fault}");
}
