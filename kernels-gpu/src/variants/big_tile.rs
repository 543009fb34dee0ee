//! `big-tile`: cuBLAS's own SIMT tile shape, one block per SM, with no shared-memory bank
//! conflicts anywhere: the course's step past `best`.
//!
//! Source: none of the documents. What cuBLAS runs for SGEMM on an H100 (ncu, recorded in
//! `docs/toolchain.md`) is `sm80_xmma_gemm_…_tilesize256x128x8_stage3_warpsize4x2x1_ffma`: a
//! 256×128 block tile, 8 warps of 64×64, 128 outputs per thread, 254 registers, one block per
//! SM, and 0 bank conflicts. This kernel is that design, written from the profile. Changed from
//! [`super::best`]:
//! - **A 16×8 thread tile at one block per SM.** `best` holds 8×8 = 64 accumulators so that
//!   two blocks fit per SM under 128 registers. Here each thread holds 16×8 = 128 and may use
//!   255 registers (`launch_bounds(256, 1)`): per k-step it loads 16 A values and 8 B values
//!   (6 `LDS.128` where 8×8 needs 4) for 128 FFMA instead of 64, so the shared loads and
//!   address arithmetic per FMA fall by a quarter. Latency is hidden by the 8 independent
//!   warps of the block (two per scheduler, as cuBLAS) and by instruction-level parallelism:
//!   128 independent accumulators.
//! - **B stored k-major, copied 16 bytes at a time.** `best` transposes B on the way into
//!   shared memory, one element per `cp.async` (8 of its 12 copies per slice). Here B's slice
//!   is stored as it lies, `Bs[n][k]` (4 consecutive k of one column = 16 bytes), and the
//!   compute loop reads one `LDS.128` per column for **four** k-steps: 8 loads give a thread
//!   its B operands for 4 k-steps. The register tile pays for it (32 B values live at once),
//!   which `best` could not afford at 128 registers and this kernel can at 255.
//! - **A swizzle, not padding, for B.** The 8 lanes of a warp that read different B columns
//!   read 8 consecutive columns. With `BK = 8` a column is 32 bytes, so columns c and c + 4
//!   start on the same bank: 2-way conflicts. The quad (4 k values) of column c is therefore
//!   stored at quad index `q ^ ((c / P) % Q)` (P columns per 128 bytes, Q quads per column):
//!   the 8 loads of a warp then hit 8 distinct 16-byte bank groups, and the copies, which
//!   write whole columns, still write each 128-byte row once. A's slice, `As[k][m]`, needs
//!   nothing: the 4 lanes reading different rows read 64 contiguous bytes.
//! - **Copy addresses advanced as pointers.** Each thread's copies form one A pointer and one B
//!   pointer (its other pieces are at fixed strides), advanced by one slice per copy; the
//!   bounds test is taken only where a tile can cross an edge: blocks that lie inside C and
//!   have 16-byte-aligned operands take a copy path with no row or column tests, and test k
//!   only in the last, partial slice. Edge blocks take the general path (zero-filling copies,
//!   one element at a time where alignment demands). The three paths are three instantiations
//!   of one loop, chosen once per block: with the choice inside the loop, ptxas made a loop of
//!   1284 instructions per 1024 FFMA, against 1135 without.
//!
//! f64 runs the same code with an 8×8 thread tile (128 accumulator registers of 255): its
//! 16-byte loads hold two doubles, and the swizzle of B, made for 16-byte groups of f32, can
//! only spread 8 columns of f64 over 4 bank groups: 2-way conflicts on B's loads there (from
//! the layout; not measured).
//!
//! `--tile 5` (the default) reads B two k-steps per load (`KV = 2`) with 16-deep k-slices;
//! ptxas merges the two 8-byte loads of a column back into one `LDS.128` and schedules the
//! loop differently, which measured a little faster than `KV = 4`.
//!
//! SASS (`cargo xtask sass --variant big-tile`, sm_90, `--tile 5`): 255 registers, no stack, no
//! spills; the interior loop runs a 16-step slice in 2220 instructions: 2048 FFMA (92.3%;
//! `best` 82%, cuBLAS's whole kernel 88%), 96 `LDS.128`, 6 `LDGSTS.E.BYPASS.128`, one `BAR`, 56
//! integer instructions. ncu at 4096³: 0 shared-load and 0 shared-store bank conflicts.
//!
//! Measured (H100, f32, median, cuBLAS in the same process; `docs/results/h100-2026-11-23/`):
//! `--tile 5` 45.30 TFLOP/s at 4096³ (0.881× cuBLAS), 45.76 at 8192³ (0.892×): behind `best`
//! (0.916×, 0.943×) and `gemm128`. It executes fewer instructions than cuBLAS (2.333 G against
//! 2.428 G) but issues on 76% of cycles against cuBLAS's 90%: its ready warps are held at
//! dispatch 4× as often. ncu's source counters put those stalls on shared loads waiting for
//! FFMAs still reading the registers the loads overwrite: with 32 B values live, ptxas has no
//! free register at 255 (`docs/perf-notes.md`, "past `best`", with what was tried). The lesson
//! stands as the design cuBLAS uses, with the one counter that still separates it from cuBLAS.
use crate::device::{
    block_idx_x, cp_async_commit, cp_async_wait, sync_threads, thread_idx_x, Global, Real, Shared,
    WARP_SIZE,
};
use crate::gemm::{next_stage, rasterise, GemmArgs, Geometry};

/// Lanes of a warp along m and along n: each lane owns TM rows (4-row runs, 16 apart) and TN
/// columns (8 apart) of its warp's tile.
const LANES_M: u32 = 4;
const LANES_N: u32 = 8;

/// Threads per block: one warp per (LANES_M·TM)×(LANES_N·TN) warp tile.
pub const fn threads(bm: u32, bn: u32, tm: usize, tn: usize) -> u32 {
    (bm / (LANES_M * tm as u32)) * (bn / (LANES_N * tn as u32)) * WARP_SIZE
}

/// Elements of one pipeline stage: A's slice (BK columns of BM) then B's (BN columns of BK).
const fn stage_elements(bm: u32, bn: u32, bk: u32) -> u32 {
    (bm + bn) * bk
}

pub fn geometry<
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const STAGES: u32,
    const TM: usize,
    const TN: usize,
>(
    m: u32,
    n: u32,
    _k: u32,
    element_bytes: u32,
) -> Geometry {
    Geometry {
        grid: (m.div_ceil(BM) * n.div_ceil(BN), 1),
        block: (threads(BM, BN, TM, TN), 1),
        shared_bytes: STAGES * stage_elements(BM, BN, BK) * element_bytes,
    }
}

/// The quad (4 consecutive k) of B's column `col` that holds k-quad `quad` of the slice: the
/// swizzle that spreads 8 consecutive columns over 8 distinct 16-byte bank groups.
#[inline(always)]
const fn b_quad_slot(col: u32, quad: u32, bk: u32, element_bytes: u32) -> u32 {
    let quads_per_column = bk / 4;
    // Columns per 128 bytes (one row of the 32 banks); at least 1 when a column is longer.
    let columns_per_row = {
        let c = 128 / (bk * element_bytes);
        if c == 0 {
            1
        } else {
            c
        }
    };
    quad ^ ((col / columns_per_row) % quads_per_column)
}

/// # Safety
/// `args` must describe valid device matrices; launch with [`geometry`] of the same
/// parameters.
#[inline(always)]
pub unsafe fn gemm<
    T: Real,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const STAGES: u32,
    const TM: usize,
    const TN: usize,
    const KV: u32,
>(
    args: GemmArgs<T>,
) {
    let (tile_m, tile_n) = rasterise(block_idx_x(), args.m.div_ceil(BM), args.n.div_ceil(BN));
    unsafe { gemm_tile::<T, BM, BN, BK, STAGES, TM, TN, KV>(args, tile_m * BM, tile_n * BN) }
}

/// The block tile of C at (`row0`, `col0`): the whole kernel after the tile is chosen, so that
/// split-k ([`super::split_k`]) runs the same code over a part of k.
///
/// # Safety
/// As [`gemm`].
#[inline(always)]
pub unsafe fn gemm_tile<
    T: Real,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const STAGES: u32,
    const TM: usize,
    const TN: usize,
    const KV: u32,
>(
    args: GemmArgs<T>,
    row0: u32,
    col0: u32,
) {
    // Three copies of the loop, chosen once per block: a tile inside C with 16-byte-aligned
    // operands copies with no bounds tests; an edge tile tests each copy; misaligned operands
    // copy one element at a time. One loop with the choice inside it costs registers and
    // instructions in every iteration (measured: docs/perf-notes.md).
    let vec4 = args.ab_vec4_ok();
    if vec4 && row0 + BM <= args.m && col0 + BN <= args.n {
        unsafe { tile_with::<T, BM, BN, BK, STAGES, TM, TN, KV, true, true>(args, row0, col0) }
    } else if vec4 {
        unsafe { tile_with::<T, BM, BN, BK, STAGES, TM, TN, KV, false, true>(args, row0, col0) }
    } else {
        unsafe { tile_with::<T, BM, BN, BK, STAGES, TM, TN, KV, false, false>(args, row0, col0) }
    }
}

/// `INSIDE`: the block's tile lies inside C and A, B are 16-byte aligned (so is `VEC4`).
/// `VEC4`: A and B are copied in 16-byte pieces ([`GemmArgs::ab_vec4_ok`]).
#[allow(clippy::needless_range_loop)]
#[inline(always)]
unsafe fn tile_with<
    T: Real,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const STAGES: u32,
    const TM: usize,
    const TN: usize,
    const KV: u32,
    const INSIDE: bool,
    const VEC4: bool,
>(
    args: GemmArgs<T>,
    row0: u32,
    col0: u32,
) {
    const {
        let threads = threads(BM, BN, TM, TN);
        assert!(TM.is_multiple_of(4) && BK.is_power_of_two() && BK >= 4 && STAGES >= 2);
        assert!(KV == 4 || KV == 2);
        assert!(BM.is_multiple_of(LANES_M * TM as u32) && BN.is_multiple_of(LANES_N * TN as u32));
        // Every thread copies the same pieces of every slice, at fixed strides from its first:
        // A's quads all in one row run (threads a multiple of BM / 4), B's all at one k-quad
        // with one swizzle (threads a multiple of 8 columns' quads).
        assert!((BM * BK / 4).is_multiple_of(threads) && threads.is_multiple_of(BM / 4));
        // (The swizzle repeats every 8 columns or fewer, a power of two.)
        assert!((BN * BK / 4).is_multiple_of(threads) && (threads / (BK / 4)).is_multiple_of(8));
    };
    let stage_len = stage_elements(BM, BN, BK);
    let pool = Shared::<T>::at(0, STAGES * stage_len);
    let threads = threads(BM, BN, TM, TN);
    let tid = thread_idx_x();
    let quads_per_column = BK / 4;

    // This thread's copies. A: quads `tid + r * threads` of the slice (BM / 4 quads per column,
    // so they share the row `a_row` and are `a_cols_apart` columns apart). B: quads
    // `tid + r * threads` (Q per column: they share the k-quad `b_quad` and its swizzle, and are
    // `b_cols_apart` columns apart).
    let (a_quads, b_quads) = (BM * BK / 4 / threads, BN * BK / 4 / threads);
    let a_row = 4 * (tid % (BM / 4));
    let a_col = tid / (BM / 4);
    let a_cols_apart = threads / (BM / 4);
    let b_quad = tid % quads_per_column;
    let b_col = tid / quads_per_column;
    let b_cols_apart = threads / quads_per_column;
    let a_dst = a_col * BM + a_row;
    let b_dst = BM * BK + b_col * BK + 4 * b_quad_slot(b_col, b_quad, BK, T::BYTES);

    // The general copy: any alignment, any edge, zero-filled outside A and B.
    let copy_guarded = |stage: u32, l: u32| {
        let at = stage * stage_len;
        for r in 0..a_quads {
            let (dst, row, col) = (
                at + a_dst + r * a_cols_apart * BM,
                row0 + a_row,
                l + a_col + r * a_cols_apart,
            );
            if VEC4 {
                unsafe { args.copy_a4_async(pool, dst, row, col) };
            } else {
                for q in 0..4 {
                    unsafe { args.copy_a_async(pool, dst + q, row + q, col) };
                }
            }
        }
        for r in 0..b_quads {
            let (dst, row, col) = (
                at + b_dst + r * b_cols_apart * BK,
                l + 4 * b_quad,
                col0 + b_col + r * b_cols_apart,
            );
            if VEC4 {
                unsafe { args.copy_b4_async(pool, dst, row, col) };
            } else {
                for q in 0..4 {
                    unsafe { args.copy_b_async(pool, dst + q, row + q, col) };
                }
            }
        }
    };

    // The fast copy: the block lies inside C and A, B are 16-byte aligned, so only k can run
    // out (in the last slice, a quad at a time: k is a multiple of 4 here). One pointer per
    // operand, moved one slice on per call.
    let mut a_next: Global<T> = args.a.offset(args.a_at(row0 + a_row, a_col) as isize);
    let mut b_next: Global<T> = args.b.offset(args.b_at(4 * b_quad, col0 + b_col) as isize);
    let (a_step, b_step) = ((BK * args.lda) as isize, BK as isize);
    let mut copy_inside = |stage: u32, l: u32, last: bool| {
        let at = stage * stage_len;
        for r in 0..a_quads {
            let valid = !last || l + a_col + r * a_cols_apart < args.k;
            let from = (r * a_cols_apart * args.lda) as usize;
            unsafe { pool.copy4_async(at + a_dst + r * a_cols_apart * BM, a_next, from, valid) };
        }
        for r in 0..b_quads {
            let valid = !last || l + 4 * b_quad < args.k;
            let from = (r * b_cols_apart * args.ldb) as usize;
            unsafe { pool.copy4_async(at + b_dst + r * b_cols_apart * BK, b_next, from, valid) };
        }
        a_next = a_next.offset(a_step);
        b_next = b_next.offset(b_step);
    };

    let slices = args.k.div_ceil(BK);
    let mut copy_slice = |stage: u32, slice: u32| {
        let l = slice * BK;
        if INSIDE {
            copy_inside(stage, l, l + BK > args.k);
        } else {
            copy_guarded(stage, l);
        }
    };

    // Prologue: STAGES - 1 slices in flight, one commit group each (empty groups past the end
    // keep the count of groups, and so the wait below, the same).
    for s in 0..STAGES - 1 {
        if s < slices {
            copy_slice(s, s);
        }
        cp_async_commit();
    }

    // The compute side. Warp (warp_m, warp_n) of the block; lane (lane_m, lane_n) of the warp.
    // This thread's rows: `rows + 16 * i + {0..4}` for i < TM / 4; its columns: `cols + 8 * j`.
    let (warp, lane) = (tid / WARP_SIZE, tid % WARP_SIZE);
    let warps_m = BM / (LANES_M * TM as u32);
    let (warp_m, warp_n) = (warp % warps_m, warp / warps_m);
    let (lane_m, lane_n) = (lane % LANES_M, lane / LANES_M);
    let rows = warp_m * LANES_M * TM as u32 + 4 * lane_m;
    let cols = warp_n * LANES_N * TN as u32 + lane_n;
    // The swizzle of this thread's columns: the same for all of them, as they are 8 apart and
    // the swizzle's period (P·Q columns, a power of two) divides 8.
    let swizzle = b_quad_slot(cols, 0, BK, T::BYTES);

    // acc[j][i]: column `cols + 8 * j`, row `rows + 16 * (i / 4) + i % 4`.
    let mut acc = [[T::ZERO; TM]; TN];
    let (mut read_stage, mut write_stage) = (0, STAGES - 1);
    // ANCHOR: core_loop
    for t in 0..slices {
        // Slice t has landed for this thread; after the barrier, for every thread. The barrier
        // also says everyone is done with the stage refilled next (slice t - 1's).
        cp_async_wait(STAGES - 2);
        sync_threads();
        let next = t + STAGES - 1;
        if next < slices {
            copy_slice(write_stage, next);
        }
        cp_async_commit();

        let a_at = read_stage * stage_len + rows;
        let b_at = read_stage * stage_len + BM * BK + cols * BK;
        for quad in 0..quads_per_column {
            let b_slot = 4 * (quad ^ swizzle);
            // B for KV k-steps: one load per column (16 bytes of f32 for KV = 4, 8 for KV = 2).
            for part in 0..4 / KV {
                let mut b = [[T::ZERO; 4]; TN];
                for j in 0..TN {
                    let at = b_at + 8 * j as u32 * BK + b_slot + part * KV;
                    if KV == 4 {
                        b[j] = pool.load4(at);
                    } else {
                        let pair = pool.load2(at);
                        b[j][..2].copy_from_slice(&pair);
                    }
                }
                for q in 0..KV {
                    let kk = 4 * quad + part * KV + q;
                    let mut a = [T::ZERO; TM];
                    for i in 0..TM / 4 {
                        let run = pool.load4(a_at + kk * BM + 16 * i as u32);
                        a[4 * i..4 * i + 4].copy_from_slice(&run);
                    }
                    for j in 0..TN {
                        for i in 0..TM {
                            acc[j][i] = a[i].fma(b[j][q as usize], acc[j][i]);
                        }
                    }
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
    for j in 0..TN {
        let col = col0 + cols + 8 * j as u32;
        if col >= args.n {
            continue;
        }
        for run in 0..TM / 4 {
            let row = row0 + rows + 16 * run as u32;
            let values = [
                acc[j][4 * run],
                acc[j][4 * run + 1],
                acc[j][4 * run + 2],
                acc[j][4 * run + 3],
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
