//! `best`: the fastest FP32 SIMT GEMM of the course, beyond the documents.
//!
//! Source: none of the documents has it. `001_…txt` stops at `gemm_128x128` (our
//! [`super::gemm128`]) and lists what would come next; this kernel takes those leads and the
//! ones sm_80+ hardware adds. Changed from `gemm128`:
//! - **Asynchronous copies, several stages.** `gemm128` brings the next slice through
//!   registers (`ld.global` into 8 registers, then `st.shared` after the compute). Here the
//!   copies go global → shared directly (`cp.async`, `LDGSTS` in SASS), `STAGES` slices ahead:
//!   no staging registers, no store instructions in the loop, and `STAGES - 1` slices of
//!   memory latency in flight instead of one. One barrier per slice still suffices: the stage
//!   refilled in iteration `t` is the one every thread finished computing on in `t - 1`.
//! - **Warp tiles.** Each warp owns a 64×32 piece of the block tile (2 × 2 warps for the
//!   default 128×64 tile, 2 × 4 for 128×128), and its lanes form an 8×4 grid of 8×8 thread
//!   tiles. A's fragment
//!   loads of a warp touch 8 distinct 16-byte chunks (128 contiguous bytes, one wavefront)
//!   and B's 4; `gemm128`'s rows of 16 threads touched 16.
//! - **B transposed by the copies.** A's slice is copied as it lies (a column of A is one
//!   k-step of the slice, `As[kk][m]`), 16 bytes per copy. B's columns are k-contiguous, and
//!   the compute loop wants `Bs[kk][n]`, so B is copied one element per `cp.async` into its
//!   transposed place (rows padded to BN + 4: the 32 stores of a warp hit 32 banks). A warp
//!   still reads whole 32-byte runs of B's columns. The compute loop is then `gemm128`'s:
//!   per k-step two 16-byte loads of A, two of B, 64 FMA.
//! - **Any shape.** When m, k, lda, ldb are multiples of 4 and A, B 16-byte aligned, each copy
//!   moves 16 bytes; otherwise 4 (f32) per copy, same loop. Out-of-range elements are
//!   zero-filled by the copy itself (source size 0). C is written with 16-byte stores when its
//!   layout allows.
//! - **Block rasterisation.** Consecutive blocks walk down a group of 8 tile-rows before
//!   moving right, so the blocks resident at one time share A and B panels in L2 (not
//!   measured on its own).
//!
//! What did not work, measured (H100, 4096³, docs/perf-notes.md): B copied untransposed,
//! 16 bytes per copy, `Bs[n][kk]`, read as one 16-byte load per column giving four k-steps.
//! Fewer copies, but a thread then holds 32 B values across four k-steps; at the 128-register
//! cap that 2 blocks per SM need, ptxas could not load the next group early: 41.2 TFLOP/s.
//! And a `vec4` test inside the copy loop instead of two copies of the kernel: 38.0.
//!
//! Launch bounds: the 256- and 128-thread configurations declare `.maxntid`/`.minnctapersm`
//! (see `entry.rs`) so that ptxas keeps them at 128 registers or fewer: 2 (or 4) blocks per SM.
//! ptxas (sm_90): 127 registers for `--tile 1`, no stack, no spills. SASS (`cargo xtask sass
//! --variant best --all-loops`; the kernel has two loops, 16-byte and 4-byte copies): the
//! 16-byte loop runs a 16-step slice in 1247 instructions, 1024 FFMA (82%; `gemm128`: 87%),
//! 64 `LDS.128`, 4 `LDGSTS.E.BYPASS.128` for A, 8 `LDGSTS.E` for B, one `BAR`. The rest is
//! the copies' address arithmetic: the price of transposing B in flight.
//!
//! Measured: H100, f32, `--tile 1`, median, same process as cuBLAS and gemm128
//! (`docs/results/h100-2026-11-21/best-*.log`): 1024³ 32.70 TFLOP/s (1.018× cuBLAS, gemm128
//! 0.637×), 2048³ 44.95 (0.917×, 0.942×), 4096³ 46.98 (0.919×, 0.936×), 8192³ 48.36 (0.936×,
//! 0.946×), 1024×1024×8192 37.17 (0.821×, 0.494×). The project's bar (1.00× at 4096³) is not
//! reached: at 4096³ both kernels issue an instruction on about 87% of cycles (ncu, on the
//! 128×128×8 configuration), and that configuration executes 7% more instructions than
//! `gemm128` (the B copies), so the pipeline's gain is spent on its own bookkeeping.
use crate::device::{
    block_idx_x, cp_async_commit, cp_async_wait, sync_threads, thread_idx_x, Real, Shared,
    WARP_SIZE,
};
use crate::gemm::{next_stage, rasterise, GemmArgs, Geometry};

/// Rows and columns of a warp's piece of the block tile, and of a thread's piece of it.
const WARP_M: u32 = 64;
const WARP_N: u32 = 32;
const THREAD_M: usize = 8;
const THREAD_N: usize = 8;

/// Threads per block of a BM×BN configuration: one warp per 64×32 piece.
pub const fn threads(bm: u32, bn: u32) -> u32 {
    (bm / WARP_M) * (bn / WARP_N) * WARP_SIZE
}

/// Elements of one stage: A's slice (BK columns of BM), then B's slice transposed (BK rows of
/// BN + 4).
const fn stage_elements(bm: u32, bn: u32, bk: u32) -> u32 {
    bm * bk + bk * (bn + 4)
}

pub fn geometry<const BM: u32, const BN: u32, const BK: u32, const STAGES: u32>(
    m: u32,
    n: u32,
    _k: u32,
    element_bytes: u32,
) -> Geometry {
    Geometry {
        grid: (m.div_ceil(BM) * n.div_ceil(BN), 1),
        block: (threads(BM, BN), 1),
        shared_bytes: STAGES * stage_elements(BM, BN, BK) * element_bytes,
    }
}

/// # Safety
/// `args` must describe valid device matrices; launch with [`geometry`] of the same
/// parameters.
#[inline(always)]
pub unsafe fn gemm<T: Real, const BM: u32, const BN: u32, const BK: u32, const STAGES: u32>(
    args: GemmArgs<T>,
) {
    // Two copies of the kernel: the choice is made once per launch, not per copy in the loop.
    if args.ab_vec4_ok() {
        unsafe { gemm_with::<T, BM, BN, BK, STAGES, true>(args) }
    } else {
        unsafe { gemm_with::<T, BM, BN, BK, STAGES, false>(args) }
    }
}

/// `VEC4`: A and B are copied in 16-byte pieces (see [`GemmArgs::ab_vec4_ok`]), else one
/// element per copy.
// Index loops over the register tile: every index is a constant once unrolled, which is what
// keeps `acc` in registers.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
unsafe fn gemm_with<
    T: Real,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const STAGES: u32,
    const VEC4: bool,
>(
    args: GemmArgs<T>,
) {
    const {
        assert!(
            BM.is_multiple_of(WARP_M)
                && BN.is_multiple_of(WARP_N)
                && BK.is_multiple_of(4)
                && STAGES >= 2
        );
        // Every thread copies the same number of 4-row pieces of A and of B per slice.
        assert!(
            (BM * BK / 4).is_multiple_of(threads(BM, BN))
                && (BN * BK).is_multiple_of(threads(BM, BN))
        );
    };
    let stage_len = stage_elements(BM, BN, BK);
    let b_stride = BN + 4;
    let pool = Shared::<T>::at(0, STAGES * stage_len);
    let threads = threads(BM, BN);
    let tid = thread_idx_x();

    let (tile_m, tile_n) = rasterise(block_idx_x(), args.m.div_ceil(BM), args.n.div_ceil(BN));
    let (row0, col0) = (tile_m * BM, tile_n * BN);

    // The copies. A's slice is copied as it lies in memory (a column of A is a k-step of the
    // slice): thread `tid` copies 4-row pieces `tid + r * threads`, piece c being rows
    // `4 * (c % (BM / 4))..+4` of column `c / (BM / 4)`. B's slice is transposed on the way,
    // one element per copy: element e is B(e % BK, e / BK) of the slice, so a warp reads
    // whole 32-byte runs of B's columns and writes `Bs[kk][n]` rows that the compute loop
    // reads with 16-byte loads, as it reads A.
    let a_pieces = BM * BK / 4 / threads;
    let b_elements = BN * BK / threads;
    let copy_slice = |stage: u32, l: u32| {
        let a_at = stage * stage_len;
        let b_at = a_at + BM * BK;
        for r in 0..a_pieces {
            let c = tid + r * threads;
            let (piece, kk) = (c % (BM / 4), c / (BM / 4));
            let (at, row, col) = (a_at + kk * BM + 4 * piece, row0 + 4 * piece, l + kk);
            if VEC4 {
                unsafe { args.copy_a4_async(pool, at, row, col) };
            } else {
                for q in 0..4 {
                    unsafe { args.copy_a_async(pool, at + q, row + q, col) };
                }
            }
        }
        for r in 0..b_elements {
            let e = tid + r * threads;
            let (kk, col) = (e % BK, e / BK);
            unsafe { args.copy_b_async(pool, b_at + kk * b_stride + col, l + kk, col0 + col) };
        }
    };

    let (warp, lane) = (tid / WARP_SIZE, tid % WARP_SIZE);
    let (warp_m, warp_n) = (warp % (BM / WARP_M), warp / (BM / WARP_M));
    let (lane_m, lane_n) = (lane % 8, lane / 8);
    // This thread's rows: `a_row + {0..4}` and `a_row + 32 + {0..4}`; its columns:
    // `b_col + {0..4}` and `b_col + 16 + {0..4}`.
    let a_row = warp_m * WARP_M + 4 * lane_m;
    let b_col = warp_n * WARP_N + 4 * lane_n;

    let slices = args.k.div_ceil(BK);
    // Prologue: the first STAGES - 1 slices in flight, one commit group each (empty groups
    // past the end keep the count of groups, and so the wait below, the same).
    for s in 0..STAGES - 1 {
        if s < slices {
            copy_slice(s, s * BK);
        }
        cp_async_commit();
    }

    // acc[j][i]: row `a_row + (i / 4) * 32 + i % 4`, column `b_col + (j / 4) * 16 + j % 4`.
    let mut acc = [[T::ZERO; THREAD_M]; THREAD_N];
    let (mut read_stage, mut write_stage) = (0, STAGES - 1);
    // ANCHOR: core_loop
    for t in 0..slices {
        // Slice t has landed for this thread; after the barrier, for every thread. The
        // barrier also says everyone is done with the stage refilled next (slice t - 1's).
        cp_async_wait(STAGES - 2);
        sync_threads();
        let next = t + STAGES - 1;
        if next < slices {
            copy_slice(write_stage, next * BK);
        }
        cp_async_commit();

        let a_at = read_stage * stage_len + a_row;
        let b_at = read_stage * stage_len + BM * BK + b_col;
        for kk in 0..BK {
            let a_lo = pool.load4(a_at + kk * BM);
            let a_hi = pool.load4(a_at + kk * BM + 32);
            let b_lo = pool.load4(b_at + kk * b_stride);
            let b_hi = pool.load4(b_at + kk * b_stride + 16);
            let a = [
                a_lo[0], a_lo[1], a_lo[2], a_lo[3], a_hi[0], a_hi[1], a_hi[2], a_hi[3],
            ];
            let b = [
                b_lo[0], b_lo[1], b_lo[2], b_lo[3], b_hi[0], b_hi[1], b_hi[2], b_hi[3],
            ];
            for j in 0..THREAD_N {
                for i in 0..THREAD_M {
                    acc[j][i] = a[i].fma(b[j], acc[j][i]);
                }
            }
        }
        read_stage = next_stage(read_stage, STAGES);
        write_stage = next_stage(write_stage, STAGES);
    }
    // ANCHOR_END: core_loop
    // Nothing may be in flight when the block exits (the tail groups are empty, but PTX
    // leaves an unwaited copy's effect undefined).
    cp_async_wait(0);

    let vec4_c = args.c_vec4_ok();
    for j in 0..THREAD_N {
        let col = col0 + b_col + (j as u32 / 4) * 16 + j as u32 % 4;
        if col >= args.n {
            continue;
        }
        for half in 0..2 {
            let row = row0 + a_row + 32 * half as u32;
            let values = [
                acc[j][4 * half],
                acc[j][4 * half + 1],
                acc[j][4 * half + 2],
                acc[j][4 * half + 3],
            ];
            if vec4_c && row < args.m {
                unsafe { args.store_c4(args.c_at(row, col), values) };
            } else {
                for i in 0..4 {
                    if row + (i as u32) < args.m {
                        unsafe { args.store_c(args.c_at(row + i as u32, col), values[i]) };
                    }
                }
            }
        }
    }
}
