//! The TMA-store epilogue on the emulator: `stmatrix`, `fence.proxy.async`, the TMA store, bulk
//! async-groups. Each test plants one bug in a small kernel and checks the emulator's report;
//! on the GPU each of these bugs writes stale or torn values into C, some of the time.
//!
//! The kernel: one warp writes an 8 × 64 tile of bf16 values (8 columns of C, 64 rows each)
//! into a 128-byte-swizzled staging box with two `stmatrix.x4`, publishes it to the async proxy,
//! and its lane 0 stores the box into C (52 × 6, so the box is clipped at both edges) with one
//! TMA store, then waits until the store has read the box. The H100 clips a store's rows at 16
//! bytes: rows 52 to 55 of C are written too (measured; the PTX ISA does not say), 56 to 63 not.
use gpu_gemm::half;
use kernels_gpu::device::half::{Bf16, GlobalHalfMut, Half};
use kernels_gpu::device::store;
use kernels_gpu::device::tma::{Swizzle, TensorMap, TensorMapSpec};
use kernels_gpu::device::wgmma::fence_proxy_async;
use kernels_gpu::device::{named_barrier, pool_address, pool_padding_to, thread_idx_x};
use kernels_gpu::emu::{launch, Buffer, Fault, FaultKind, LaunchShape};

/// C: M rows (m, contiguous) × N columns, leading dimension LDC.
const M: u32 = 52;
/// Where the store's clipping ends in a column: M rounded up to 16 bytes.
const CLIPPED_AT: u32 = 56;
const N: u32 = 6;
const LDC: u32 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bug {
    None,
    /// The lanes' `stmatrix` writes are not followed by `fence.proxy.async`.
    NoProxyFence,
    /// The warp writes the staging box again before the store has read it.
    RewriteBeforeRead,
    /// Lane 0 reads C back before the store's `wait_group`.
    ReadCBeforeWait,
    /// Lane 0 never waits for the store to read the box: the block leaves with it pending.
    ExitBeforeRead,
}

/// The value of C(m, n): small integers, exact in bf16.
fn value(m: u32, n: u32) -> f32 {
    ((n * 64 + m) % 200) as f32 - 100.0
}

#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Chunk([u16; 8]);

fn run(bug: Bug) -> (Result<(), Fault>, Vec<u16>) {
    let poison = half::bf16::NAN.to_bits();
    let mut c = vec![Chunk([poison; 8]); (LDC * 8 / 8) as usize];
    let spec = TensorMapSpec::single(
        c.as_ptr() as u64,
        2,
        [M as u64, N as u64],
        LDC as u64 * 2,
        [64, 8],
        Swizzle::B128,
    );
    let map = Box::new(spec.encode_for_emulator().unwrap());
    let (map_at, c_at) = (&*map as *const TensorMap as usize, c.as_mut_ptr() as usize);
    let shape = LaunchShape {
        grid: (1, 1),
        block: (32, 1),
        shared_bytes: 1024 + 1024,
        cluster: (1, 1),
    };
    let buffers = [
        Buffer {
            name: "C",
            address: c_at,
            bytes: std::mem::size_of_val(&c[..]),
        },
        Buffer {
            name: "tensor map",
            address: map_at,
            bytes: 128,
        },
    ];
    let result = launch(&format!("{bug:?}"), shape, &buffers, &|| {
        kernel(bug, map_at as *const TensorMap, c_at as *const u16)
    });
    let out = c.iter().flat_map(|chunk| chunk.0).collect();
    (result, out)
}

fn kernel(bug: Bug, map: *const TensorMap, c: *const u16) {
    let lane = thread_idx_x();
    let buffer = pool_address(pool_padding_to(1024));
    let write_tile = || {
        for x4 in 0..2 {
            // Matrix h is the 8-m block 4·x4 + h of the 8 columns; lane (g, t) holds its row g,
            // columns 2t and 2t + 1.
            let (g, t) = (lane / 4, lane % 4);
            let pairs = core::array::from_fn(|h| {
                let m = 8 * (4 * x4 + h as u32) + 2 * t;
                Bf16::pack(value(m, g), value(m + 1, g))
            });
            let (n, m_block) = (lane % 8, 4 * x4 + lane / 8);
            store::stmatrix_x4(buffer + n * 128 + 16 * (m_block ^ (n % 8)), pairs);
        }
    };
    write_tile();
    if bug != Bug::NoProxyFence {
        fence_proxy_async();
    }
    named_barrier(1, 32);
    if lane == 0 {
        unsafe { store::store_box(map, buffer, 0, 0, 0) };
        store::commit();
        if bug == Bug::ReadCBeforeWait {
            let _ = unsafe { GlobalHalfMut::new(c as *mut Bf16).load(0) };
        }
    }
    if bug == Bug::RewriteBeforeRead {
        write_tile();
    }
    if lane == 0 && bug != Bug::ExitBeforeRead {
        store::wait_read::<0>();
    }
}

fn fault_of(bug: Bug) -> Fault {
    match run(bug) {
        (Err(fault), _) => {
            // What a student sees: `cargo test --test NAME -- --nocapture` prints it.
            println!("{bug:?}: {fault}");
            fault
        }
        (Ok(()), _) => panic!("{bug:?}: the emulator accepted it"),
    }
}

#[test]
fn the_correct_epilogue_writes_the_tile_clipped_at_cs_edges() {
    let (result, c) = run(Bug::None);
    result.unwrap();
    for n in 0..8 {
        for m in 0..LDC {
            let got = c[(m + n * LDC) as usize];
            if m < CLIPPED_AT && n < N {
                assert_eq!(
                    half::bf16::from_bits(got).to_f32(),
                    value(m, n),
                    "C({m}, {n})"
                );
            } else {
                assert!(
                    half::bf16::from_bits(got).is_nan(),
                    "C({m}, {n}) lies outside the tensor: not written"
                );
            }
        }
    }
}

#[test]
fn a_store_of_stmatrix_writes_without_the_proxy_fence_is_a_race() {
    let fault = fault_of(Bug::NoProxyFence);
    assert_eq!(fault.kind, FaultKind::SharedRace, "{fault}");
    assert!(
        fault.detail.contains("a TMA store issued by thread (0, 0)")
            && fault
                .detail
                .contains("no `fence.proxy.async` of the writer"),
        "{fault}"
    );
    println!("{fault}");
}

#[test]
fn rewriting_the_box_before_the_store_read_it_is_a_race() {
    let fault = fault_of(Bug::RewriteBeforeRead);
    assert_eq!(fault.kind, FaultKind::SharedRace, "{fault}");
    assert!(
        fault
            .detail
            .contains("that a TMA store issued by thread (0, 0)")
            && fault.detail.contains("may still be reading"),
        "{fault}"
    );
    println!("{fault}");
}

#[test]
fn reading_c_back_before_the_stores_wait_is_reported() {
    let fault = fault_of(Bug::ReadCBeforeWait);
    assert_eq!(fault.kind, FaultKind::SharedRace, "{fault}");
    assert!(
        fault
            .detail
            .contains("overlaps what a TMA store issued by thread (0, 0) writes"),
        "{fault}"
    );
    println!("{fault}");
}

#[test]
fn leaving_before_the_store_read_its_box_is_reported() {
    let fault = fault_of(Bug::ExitBeforeRead);
    assert_eq!(fault.kind, FaultKind::SharedRace, "{fault}");
    assert!(
        fault
            .detail
            .contains("exits while a TMA store issued by this thread may still read"),
        "{fault}"
    );
    println!("{fault}");
}

mod ping_pong {
    //! The ping-pong schedule's ordering barrier, planted: `wgmma-pingpong` (its TMA-store
    //! configuration, without a cluster) with a configuration whose warpgroups never wait for
    //! their turn. The two then run their epilogues at the same time, in the staging buffers
    //! they share.
    use super::*;
    use kernels_gpu::device::half::GlobalHalf;
    use kernels_gpu::gemm::HalfGemmArgs;
    use kernels_gpu::pipeline::Consumer;
    use kernels_gpu::variants::wgmma_16bit::{self, Config, Plain};
    use kernels_gpu::variants::wgmma_pingpong::PingPong;
    use kernels_gpu::variants::wgmma_tma_store::TmaStore;

    /// Five stages, no cluster, and an ordering barrier that is never waited for.
    #[derive(Clone, Copy, Default)]
    struct NeverWaits;

    impl Config for NeverWaits {
        const STAGES: u32 = 5;

        fn wait_turn(_consumer: &mut Consumer) {}
    }

    type Unordered = TmaStore<PingPong<NeverWaits>>;
    type Ordered = TmaStore<PingPong<Plain<5>>>;

    /// C = A·B for 256 × 128 × 64 (two tiles: one per warpgroup) with configuration `C`.
    fn run<C: Config>(name: &str) -> Result<(), Fault> {
        let (m, n, k) = (256u32, 128u32, 64u32);
        let bits = |len: u32, f: fn(u32) -> f32| -> Vec<Chunk> {
            let mut v = vec![Chunk([0; 8]); len.div_ceil(8) as usize];
            for i in 0..len {
                v[(i / 8) as usize].0[(i % 8) as usize] = half::bf16::from_f32(f(i)).to_bits();
            }
            v
        };
        let a = bits(m * k, |i| (i % 7) as f32 - 3.0);
        let b = bits(k * n, |i| (i % 5) as f32 - 2.0);
        let mut c = bits(m * n, |_| f32::NAN);
        let spec = |address: u64, dims: [u64; 2], stride: u32| {
            TensorMapSpec::single(address, 2, dims, stride as u64 * 2, [64, 64], Swizzle::B128)
        };
        let maps = Box::new([
            spec(a.as_ptr() as u64, [m as u64, k as u64], m)
                .encode_for_emulator()
                .unwrap(),
            spec(b.as_ptr() as u64, [k as u64, n as u64], k)
                .encode_for_emulator()
                .unwrap(),
            spec(c.as_ptr() as u64, [m as u64, n as u64], m)
                .encode_for_emulator()
                .unwrap(),
        ]);
        let args = HalfGemmArgs {
            m,
            n,
            k,
            alpha: 1.0,
            a: GlobalHalf::new(a.as_ptr() as *const Bf16),
            lda: m,
            b: GlobalHalf::new(b.as_ptr() as *const Bf16),
            ldb: k,
            beta: 0.0,
            c: GlobalHalfMut::new(c.as_mut_ptr() as *mut Bf16),
            ldc: m,
            fused: kernels_gpu::fused::Fused::none(),
            batch: kernels_gpu::gemm::Members::ONE,
            groups: kernels_gpu::gemm::Groups::NONE,
        };
        let g = wgmma_16bit::geometry::<C>(m, n, k, 2);
        let buffers = [
            Buffer {
                name: "A",
                address: a.as_ptr() as usize,
                bytes: std::mem::size_of_val(&a[..]),
            },
            Buffer {
                name: "B",
                address: b.as_ptr() as usize,
                bytes: std::mem::size_of_val(&b[..]),
            },
            Buffer {
                name: "C",
                address: c.as_ptr() as usize,
                bytes: std::mem::size_of_val(&c[..]),
            },
            Buffer {
                name: "tensor maps",
                address: maps.as_ptr() as usize,
                bytes: 3 * 128,
            },
        ];
        let (args_at, maps_at) = (
            &args as *const HalfGemmArgs<Bf16> as usize,
            maps.as_ptr() as usize,
        );
        // One block takes both tiles: one per consumer warpgroup.
        let shape = LaunchShape {
            grid: (1, 1),
            block: g.block,
            shared_bytes: g.shared_bytes,
            cluster: (1, 1),
        };
        launch(name, shape, &buffers, &|| unsafe {
            wgmma_16bit::gemm::<Bf16, C>(
                *(args_at as *const HalfGemmArgs<Bf16>),
                maps_at as *const TensorMap,
            )
        })
    }

    #[test]
    fn the_ordered_ping_pong_kernel_runs() {
        run::<Ordered>("ordered").unwrap();
    }

    #[test]
    fn skipping_the_ordering_barrier_makes_the_epilogues_race_on_their_buffers() {
        let fault = run::<Unordered>("unordered").expect_err("the epilogues overlap");
        assert_eq!(fault.kind, FaultKind::SharedRace, "{fault}");
        println!("{fault}");
    }
}

mod stmatrix_layouts {
    //! `stmatrix` as the PTX ISA lays it out ("Warp-level matrix store instruction: stmatrix"):
    //! register `j` of lane `L` holds row `L / 4`, columns `2·(L % 4)` and `+1` of matrix `j`, and
    //! lane `L` names the address of row `L % 8` of matrix `L / 8`. Without `.trans` that row is
    //! the fragment's row; with `.trans` it is the fragment's column. The direct-orientation
    //! epilogue (`wgmma-tma-store:4`) depends on the second: written with the plain form, each
    //! 8×8 block of C would land transposed.
    use super::*;

    /// Fragment element (row, col) of matrix j, as a distinct 16-bit code.
    fn code(j: u32, row: u32, col: u32) -> u16 {
        (j * 64 + row * 8 + col) as u16
    }

    /// Runs one warp's `stmatrix.x4` (`.trans` or not) and returns the four stored matrices,
    /// `[matrix][stored row][element]`.
    fn stored(transposed: bool) -> Vec<u16> {
        let mut out = vec![0u16; 4 * 8 * 8];
        let out_at = out.as_mut_ptr() as usize;
        let shape = LaunchShape {
            grid: (1, 1),
            block: (32, 1),
            shared_bytes: 1024 + 512,
            cluster: (1, 1),
        };
        let buffers = [Buffer {
            name: "out",
            address: out_at,
            bytes: out.len() * 2,
        }];
        launch("stmatrix", shape, &buffers, &|| {
            let lane = thread_idx_x();
            let rows = pool_padding_to(1024);
            let view = kernels_gpu::device::Shared::<f32>::at(rows, 128);
            let registers = core::array::from_fn(|j| {
                let (row, col) = (lane / 4, 2 * (lane % 4));
                code(j as u32, row, col) as u32 | (code(j as u32, row, col + 1) as u32) << 16
            });
            let my_row = (lane / 8) * 128 + (lane % 8) * 16;
            let address = pool_address(rows) + my_row;
            if transposed {
                store::stmatrix_x4_trans(address, registers);
            } else {
                store::stmatrix_x4(address, registers);
            }
            // Each lane reads back the row it named (the emulator wrote it for this lane).
            let words = view.load4(my_row / 4).map(f32::to_bits);
            let row: [u16; 8] = core::array::from_fn(|e| (words[e / 2] >> (16 * (e % 2))) as u16);
            let at = (out_at as *mut u16).wrapping_add((8 * lane) as usize);
            unsafe { core::ptr::write(at as *mut [u16; 8], row) };
        })
        .unwrap();
        out
    }

    #[test]
    fn plain_stmatrix_stores_the_fragments_rows() {
        let out = stored(false);
        for (j, row, e) in
            (0..4).flat_map(|j| (0..8).flat_map(move |r| (0..8).map(move |e| (j, r, e))))
        {
            assert_eq!(out[(j * 64 + row * 8 + e) as usize], code(j, row, e));
        }
    }

    #[test]
    fn trans_stores_the_fragments_columns() {
        let out = stored(true);
        for (j, row, e) in
            (0..4).flat_map(|j| (0..8).flat_map(move |r| (0..8).map(move |e| (j, r, e))))
        {
            assert_eq!(out[(j * 64 + row * 8 + e) as usize], code(j, e, row));
        }
        assert_ne!(out, stored(false), "the two forms differ");
    }
}
