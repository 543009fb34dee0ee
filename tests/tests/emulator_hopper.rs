//! Hopper's asynchronous machinery on the emulator: each test plants one bug in a small
//! producer/consumer kernel (TMA copies into a two-stage ring, mbarrier handoffs, one consumer
//! warpgroup multiplying with `wgmma` from shared memory) and checks what the emulator makes of
//! it: a wrong product where the GPU would compute one (descriptor, swizzle), or a report naming
//! the broken rule where the GPU's outcome would depend on timing (mbarrier, proxy, wgmma
//! protocol) or hang.
//!
//! The kernel computes `D (64×64) = A (64×k) · Bᵀ`, A and B stored K-major (each row's k values
//! contiguous, as `wgmma` reads them), k = 128 in four slices of 32 through two stages, so that
//! each stage is refilled once. The inputs are small integers: every product and sum is exact in
//! TF32 and f32, so the correct kernel's result is compared bit for bit.
use kernels_gpu::device::mbarrier::{fence_mbarrier_init, MBarrier};
use kernels_gpu::device::mma::{FragA, Tf32};
use kernels_gpu::device::tma::{self, Swizzle, TensorMap, TensorMapSpec};
use kernels_gpu::device::wgmma::{self, Accumulator, Descriptor, Tf32Wgmma, Tf32WgmmaRegisters};
use kernels_gpu::device::{pool_padding_to, sync_threads, thread_idx_x, GlobalMut, Shared};
use kernels_gpu::emu::{launch, Buffer, Fault, FaultKind, LaunchShape};

const M: u32 = 64;
const N: u32 = 64;
const K: u32 = 128;
const BK: u32 = 32;
const STAGES: u32 = 2;
/// A's and B's box per stage: 64 rows of 32 f32 (128 bytes, the 128-byte swizzle's row).
const BOX_BYTES: u32 = 64 * BK * 4;
const STAGE_BYTES: u32 = 2 * BOX_BYTES;

/// One planted bug, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bug {
    None,
    /// The consumer reads a stage without waiting for its *full* phase.
    NoFullWait,
    /// The producer refills a stage without waiting for its *empty* phase.
    NoEmptyWait,
    /// The consumer releases a stage before `wgmma.wait_group` retired the reads of it.
    ReleaseBeforeWgmmaWait,
    /// The producer announces fewer bytes than its copies deliver.
    ExpectTxShort,
    /// No barrier between the mbarriers' init and their use by other threads.
    NoBarrierAfterInit,
    /// The descriptors say 64-byte swizzle; the copies wrote 128-byte swizzled rows.
    DescriptorSwizzle64,
    /// The descriptors' stride byte offset is 512 (8 rows of 64 bytes), not 1024.
    DescriptorStride512,
    /// The tensor maps do not swizzle; the descriptors expect the 128-byte swizzle.
    MapWithoutSwizzle,
    /// No `wgmma.fence` before the first `wgmma`.
    NoWgmmaFence,
    /// The accumulators are read before `wgmma.wait_group`.
    ReadBeforeWait,
    /// The stages start at the pool's first byte, not at a multiple of 1024.
    UnalignedStages,
    /// Correct: A from registers, one group in flight, one fragment buffer per group.
    RegistersTwoBuffers,
    /// A from registers with one group in flight, but one fragment buffer: the next slice's
    /// fragments overwrite the registers the running group reads (what failed on the H100).
    RegistersOneBuffer,
}

#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Chunk([f32; 4]);

/// A 16-byte aligned matrix of `len` f32 (TMA wants 16-byte aligned tensors).
fn aligned(values: impl Iterator<Item = f32>, len: usize) -> Vec<Chunk> {
    let mut v = vec![Chunk([0.0; 4]); len / 4];
    for (i, x) in values.take(len).enumerate() {
        v[i / 4].0[i % 4] = x;
    }
    v
}

fn buffer<T>(name: &'static str, v: &[T]) -> Buffer {
    Buffer {
        name,
        address: v.as_ptr() as usize,
        bytes: std::mem::size_of_val(v),
    }
}

/// Runs the kernel with `bug` planted; returns the launch's outcome, D and the expected D.
fn run(bug: Bug) -> (Result<(), Fault>, Vec<f32>, Vec<f32>) {
    // A(m, k) at m·K + k, B(n, k) at n·K + k: small integers.
    let a = aligned(
        (0..M * K).map(|i| ((i * 7 + i / K) % 9) as f32 - 4.0),
        (M * K) as usize,
    );
    let b = aligned(
        (0..N * K).map(|i| ((i * 5 + i / K) % 7) as f32 - 3.0),
        (N * K) as usize,
    );
    let flat = |v: &[Chunk]| -> Vec<f32> { v.iter().flat_map(|c| c.0).collect() };
    let (fa, fb) = (flat(&a), flat(&b));
    let mut expected = vec![0f32; (M * N) as usize];
    for m in 0..M as usize {
        for n in 0..N as usize {
            expected[m * N as usize + n] = (0..K as usize)
                .map(|q| fa[m * K as usize + q] * fb[n * K as usize + q])
                .sum();
        }
    }
    let swizzle = if bug == Bug::MapWithoutSwizzle {
        Swizzle::None
    } else {
        Swizzle::B128
    };
    let spec = |address: u64, rows: u32| {
        TensorMapSpec::single(
            address,
            4,
            [K as u64, rows as u64],
            K as u64 * 4,
            [BK, 64],
            swizzle,
        )
    };
    let maps = Box::new([
        spec(a.as_ptr() as u64, M).encode_for_emulator().unwrap(),
        spec(b.as_ptr() as u64, N).encode_for_emulator().unwrap(),
    ]);
    let mut d = vec![f32::NAN; (M * N) as usize];
    let (maps_at, d_at) = (maps.as_ptr() as usize, d.as_mut_ptr() as usize);
    let shape = LaunchShape {
        grid: (1, 1),
        block: (256, 1),
        shared_bytes: STAGES * STAGE_BYTES + 4 * MBarrier::BYTES + 1024,
        cluster: (1, 1),
    };
    let buffers = [
        buffer("A", &a),
        buffer("B", &b),
        buffer("D", &d),
        buffer("tensor maps", &maps[..]),
    ];
    let result = launch(&format!("{bug:?}"), shape, &buffers, &|| {
        kernel(
            bug,
            maps_at as *const TensorMap,
            GlobalMut::new(d_at as *mut f32),
        )
    });
    (result, d, expected)
}

fn kernel(bug: Bug, maps: *const TensorMap, d: GlobalMut<f32>) {
    let base = if bug == Bug::UnalignedStages {
        0
    } else {
        pool_padding_to(1024)
    };
    let a_tile = |s: u32| Shared::<f32>::at(base + s * STAGE_BYTES, 64 * BK);
    let b_tile = |s: u32| Shared::<f32>::at(base + s * STAGE_BYTES + BOX_BYTES, 64 * BK);
    let barriers = base + STAGES * STAGE_BYTES;
    let full = |s: u32| MBarrier::at(barriers + 8 * s);
    let empty = |s: u32| MBarrier::at(barriers + 8 * (STAGES + s));
    let tid = thread_idx_x();
    if tid == 0 {
        for s in 0..STAGES {
            full(s).init(1);
            empty(s).init(128);
        }
        fence_mbarrier_init();
    }
    if bug != Bug::NoBarrierAfterInit {
        sync_threads();
    }
    let slices = K / BK;
    if tid == 0 {
        // The producer.
        for slice in 0..slices {
            let (s, phase) = (slice % STAGES, (slice / STAGES) % 2);
            if bug != Bug::NoEmptyWait {
                empty(s).wait(phase ^ 1);
            }
            let bytes = if bug == Bug::ExpectTxShort {
                STAGE_BYTES - 4
            } else {
                STAGE_BYTES
            };
            full(s).arrive_expect_tx(bytes);
            let k0 = (slice * BK) as i32;
            unsafe {
                tma::load_tile(maps, a_tile(s), k0, 0, 0, full(s));
                tma::load_tile(maps.wrapping_add(1), b_tile(s), k0, 0, 0, full(s));
            }
        }
    } else if tid >= 128 {
        // The consumer warpgroup.
        let (swizzle, sbo) = match bug {
            Bug::DescriptorSwizzle64 => (Swizzle::B64, 1024),
            Bug::DescriptorStride512 => (Swizzle::B128, 512),
            _ => (Swizzle::B128, 1024),
        };
        let mut acc = Accumulator::<32>::zero();
        let registers = matches!(bug, Bug::RegistersTwoBuffers | Bug::RegistersOneBuffer);
        let zero = FragA([Tf32::default(); 4]);
        let mut buffers = [[zero; 4]; 2];
        let (warp, lane) = ((tid - 128) / 32, tid % 32);
        for slice in 0..slices {
            let (s, phase) = (slice % STAGES, (slice / STAGES) % 2);
            if bug != Bug::NoFullWait {
                full(s).wait(phase);
            }
            let a_desc = Descriptor::k_major(a_tile(s).shared_address(0), swizzle, 16, sbo);
            let b_desc = Descriptor::k_major(b_tile(s).shared_address(0), swizzle, 16, sbo);
            // A from registers: lane (g, t) of warp w holds rows 16w + g, + 8 and k t, t + 4 of
            // each k-step, read from the swizzled K-major tile.
            let frags = &mut buffers[if bug == Bug::RegistersOneBuffer {
                0
            } else {
                slice as usize % 2
            }];
            if registers {
                let (g, t) = (lane / 4, lane % 4);
                for (step, frag) in frags.iter_mut().enumerate() {
                    *frag = FragA(core::array::from_fn(|i| {
                        let (row, k) = (
                            16 * warp + g + 8 * (i as u32 & 1),
                            8 * step as u32 + t + 4 * (i as u32 >> 1),
                        );
                        Tf32::truncate(a_tile(s).load(row * BK + 4 * ((k / 4) ^ (row % 8)) + k % 4))
                    }));
                }
            }
            if bug != Bug::NoWgmmaFence {
                wgmma::fence();
            }
            for step in 0..BK / 8 {
                let (at, first) = (32 * step, slice + step == 0);
                if registers {
                    acc.mma_with_a_registers(&frags[step as usize], b_desc.advanced(at), !first);
                } else {
                    acc.mma(a_desc.advanced(at), b_desc.advanced(at), !first);
                }
            }
            wgmma::commit_group();
            if registers {
                // One group in flight: release the previous slice's stage.
                wgmma::wait_group::<1>();
                if slice > 0 {
                    empty((slice - 1) % STAGES).arrive();
                }
                continue;
            }
            if bug == Bug::ReleaseBeforeWgmmaWait {
                empty(s).arrive();
                wgmma::wait_group::<0>();
            } else {
                if bug == Bug::ReadBeforeWait {
                    let _ = acc.get()[0];
                }
                wgmma::wait_group::<0>();
                empty(s).arrive();
            }
        }
        if registers {
            wgmma::wait_group::<0>();
        }
        for (i, value) in acc.get().iter().enumerate() {
            let (row, col) = Accumulator::<32>::position(warp, lane, i as u32);
            unsafe { d.store((row * N + col) as usize, *value) };
        }
    }
}

fn fault(bug: Bug) -> Fault {
    let (result, _, _) = run(bug);
    let fault = result.expect_err("the emulator must report the planted bug");
    println!("{bug:?}: {fault}");
    fault
}

#[test]
fn the_correct_pipeline_computes_the_exact_product() {
    let (result, d, expected) = run(Bug::None);
    result.unwrap();
    assert_eq!(d, expected);
}

#[test]
fn a_from_registers_with_a_group_in_flight_needs_a_buffer_per_group() {
    let (result, d, expected) = run(Bug::RegistersTwoBuffers);
    result.unwrap();
    assert_eq!(d, expected);
    let f = fault(Bug::RegistersOneBuffer);
    assert_eq!(f.kind, FaultKind::WgmmaMisuse, "{f}");
    assert!(
        f.detail
            .contains("was overwritten before `wgmma.wait_group` retired the group"),
        "{f}"
    );
}

#[test]
fn a_descriptor_with_the_wrong_swizzle_reads_a_wrong_matrix() {
    for bug in [
        Bug::DescriptorSwizzle64,
        Bug::DescriptorStride512,
        Bug::MapWithoutSwizzle,
    ] {
        let (result, d, expected) = run(bug);
        result.unwrap();
        let wrong = d.iter().zip(&expected).filter(|(x, y)| x != y).count();
        println!("{bug:?}: {wrong} of {} elements wrong", d.len());
        assert!(wrong > d.len() / 2, "{bug:?}: only {wrong} elements wrong");
    }
}

#[test]
fn reading_a_stage_before_its_copies_complete_is_a_race() {
    let f = fault(Bug::NoFullWait);
    assert_eq!(f.kind, FaultKind::SharedRace, "{f}");
    assert!(
        f.detail.contains("reads shared byte")
            && f.detail.contains("a TMA copy completing on the mbarrier"),
        "{f}"
    );
    assert!(
        f.detail.contains("wait on that mbarrier's phase first"),
        "{f}"
    );
}

#[test]
fn refilling_a_stage_the_consumers_have_not_released_is_a_race() {
    let f = fault(Bug::NoEmptyWait);
    assert_eq!(f.kind, FaultKind::SharedRace, "{f}");
    // The producer runs ahead of the consumers: its third copy lands on the first one's box
    // before anyone has read it.
    assert!(
        f.detail
            .contains("a TMA copy issued by thread (0, 0) overwrites shared byte")
            && f.detail
                .contains("that a TMA copy completing on the mbarrier at pool byte")
            && f.detail.contains("wait for the stage to be released"),
        "{f}"
    );
}

#[test]
fn releasing_a_stage_before_wgmma_wait_group_is_a_race() {
    let f = fault(Bug::ReleaseBeforeWgmmaWait);
    assert_eq!(f.kind, FaultKind::SharedRace, "{f}");
    assert!(f.detail.contains("may still be reading"), "{f}");
}

#[test]
fn a_wrong_transaction_count_is_a_deadlock_with_the_barrier_state() {
    let f = fault(Bug::ExpectTxShort);
    assert_eq!(f.kind, FaultKind::Deadlock, "{f}");
    // The consumers wait on the full barrier, whose copies delivered 4 bytes more than announced.
    assert!(
        f.detail
            .contains("128 thread(s) wait for parity 0: the mbarrier at pool byte")
            && f.detail
                .contains("0 of 1 arrivals pending and a tx-count of -4 bytes"),
        "{f}"
    );
}

#[test]
fn an_mbarrier_used_before_its_init_is_visible_is_reported() {
    let f = fault(Bug::NoBarrierAfterInit);
    assert_eq!(f.kind, FaultKind::MbarrierMisuse, "{f}");
    assert!(f.detail.contains("before its initialisation"), "{f}");
}

#[test]
fn a_wgmma_without_wgmma_fence_is_reported() {
    let f = fault(Bug::NoWgmmaFence);
    assert_eq!(f.kind, FaultKind::WgmmaMisuse, "{f}");
    assert!(f.detail.contains("without a `wgmma.fence`"), "{f}");
}

#[test]
fn accumulators_read_before_wait_group_are_reported() {
    let f = fault(Bug::ReadBeforeWait);
    assert_eq!(f.kind, FaultKind::WgmmaMisuse, "{f}");
    assert!(f.detail.contains("committed but not waited for"), "{f}");
}

#[test]
fn a_tma_destination_off_the_swizzle_alignment_is_reported() {
    let f = fault(Bug::UnalignedStages);
    assert_eq!(f.kind, FaultKind::TmaMisuse, "{f}");
    assert!(f.detail.contains("must be 128-byte aligned"), "{f}");
}

/// The proxy fence, on the lesson's pattern: threads store an operand with `st.shared`, then
/// a `wgmma` reads it. Without `fence.proxy.async` in the writers the read is reported.
#[test]
fn ordinary_stores_read_by_wgmma_need_the_proxy_fence() {
    for fenced in [true, false] {
        let shape = LaunchShape {
            grid: (1, 1),
            block: (128, 1),
            shared_bytes: 2 * 64 * 32 + 1024,
            cluster: (1, 1),
        };
        let result = launch("proxy", shape, &[], &|| {
            let base = pool_padding_to(1024);
            let (a, b) = (
                Shared::<f32>::at(base, 64 * 8),
                Shared::<f32>::at(base + 2048, 64 * 8),
            );
            let tid = thread_idx_x();
            for i in 0..4 {
                a.store(4 * tid + i, 1.0);
                b.store(4 * tid + i, 2.0);
            }
            if fenced {
                wgmma::fence_proxy_async();
            }
            sync_threads();
            // No swizzle: core matrices of 8 rows × 16 bytes, the second k chunk 128 bytes
            // after the first (LBO), the next 8 rows 256 bytes on (SBO).
            let desc_a = Descriptor::k_major(a.shared_address(0), Swizzle::None, 128, 256);
            let desc_b = Descriptor::k_major(b.shared_address(0), Swizzle::None, 128, 256);
            let mut acc = Accumulator::<32>::zero();
            wgmma::fence();
            acc.mma(desc_a, desc_b, false);
            wgmma::commit_group();
            wgmma::wait_group::<0>();
            assert!(acc.get().iter().all(|&x| x == 16.0), "8 products of 1·2");
        });
        if fenced {
            result.unwrap();
        } else {
            let f = result.unwrap_err();
            println!("no proxy fence: {f}");
            assert_eq!(f.kind, FaultKind::SharedRace, "{f}");
            assert!(
                f.detail.contains("no `fence.proxy.async` of the writer"),
                "{f}"
            );
        }
    }
}
