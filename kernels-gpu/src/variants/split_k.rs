//! `split-k`: when C has too few tiles to fill the GPU, split k instead, and add the parts.
//!
//! Source: none of the documents. 1024×1024×8192 has 32 tiles of 256×128 (128 of `best`'s
//! 128×64) for the H100's 132 SMs: one pass over k leaves most SMs idle however fast each
//! block is, which is why `best` stopped at 0.82× cuBLAS there. Split-k gives each block a
//! part of k and adds the parts afterwards. Two launches, both counted in the time:
//! 1. [`partial`]: the [`super::big_tile`] kernel unchanged, on a grid of (tiles, splits):
//!    block (t, s) computes tile t over the s-th part of k (whole slices of BK, so that each
//!    part's A and B pointers keep their 16-byte alignment) and writes it, with α = 1 and
//!    β = 0, to slab s of a workspace of `splits` m×n matrices (leading dimension m). A part
//!    past the end of k writes zeros, so the sum below needs no test.
//! 2. [`reduce`]: one thread per element of C, `C = α·Σₛ slabₛ + β·C`: β is applied exactly
//!    once, here, and C is not read when β = 0. The parts are added in a fixed order, so the
//!    result is deterministic (atomics into C would not be).
//!
//! The host passes the workspace through the ordinary arguments (the kernels keep the one
//! GEMM signature): the partial launch gets `C = workspace, ldc = m, α = 1, β = 0`, and the
//! reduction gets `k = splits, A = workspace, lda = m` with the caller's α, β and C.
//!
//! The cost: the workspace is written once and read once, `2·splits·m·n` elements, against the
//! GEMM's `2·m·n·k` flops; at 1024×1024×8192 with 4 splits that is 32 MB of traffic (about
//! 10 µs at H100 bandwidth) beside a GEMM of a third of a millisecond.
//!
//! SASS: the partial launch's loop is `big-tile:5`'s (2048 FFMA, 96 `LDS.128`, 6 `LDGSTS.128`
//! per 16-deep slice); the reduction is a loop of one `LDG` and one FFMA per split.
//!
//! Measured (H100, f32, cuBLAS in the same process, `docs/results/h100-2026-11-23/`):
//! 1024×1024×8192 with 4 splits 40.7–40.8 TFLOP/s, 0.909–0.953× cuBLAS in two runs (`best`
//! 0.83–0.87×, one pass of `big-tile` 0.25×); 8192×256×8192 with 2 splits 0.969×. Where tiles
//! are plenty (8192³) it only adds the reduction: 0.86×.
use crate::device::{block_dim_x, block_idx_x, block_idx_y, grid_dim_y, thread_idx_x, Real};
use crate::gemm::{rasterise, GemmArgs, Geometry};
use crate::variants::big_tile;

/// The partial launch: `big_tile`'s geometry with `splits` rows of blocks.
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
    k: u32,
    element_bytes: u32,
    splits: u32,
) -> Geometry {
    let one = big_tile::geometry::<BM, BN, BK, STAGES, TM, TN>(m, n, k, element_bytes);
    Geometry {
        grid: (one.grid.0, splits),
        ..one
    }
}

/// The reduction's launch: one thread per element of C.
pub fn reduce_geometry(m: u32, n: u32) -> Geometry {
    const THREADS: u32 = 256;
    Geometry {
        grid: ((m * n).div_ceil(THREADS), 1),
        block: (THREADS, 1),
        shared_bytes: 0,
    }
}

/// The part of k that split `split` of `splits` computes: (first column of A, length).
#[inline(always)]
pub fn part_of_k(k: u32, splits: u32, split: u32, bk: u32) -> (u32, u32) {
    let per = k.div_ceil(splits).next_multiple_of(bk);
    let first = (split * per).min(k);
    (first, per.min(k - first))
}

/// # Safety
/// As [`big_tile::gemm`], with C a workspace of `grid_dim_y()` slabs of `ldc·n` elements.
#[inline(always)]
pub unsafe fn partial<
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
    let split = block_idx_y();
    let (first, len) = part_of_k(args.k, grid_dim_y(), split, BK);
    let part = GemmArgs {
        k: len,
        a: args.a.offset(args.a_at(0, first) as isize),
        b: args.b.offset(args.b_at(first, 0) as isize),
        c: args
            .c
            .offset((split as usize * args.ldc as usize * args.n as usize) as isize),
        ..args
    };
    let (tile_m, tile_n) = rasterise(block_idx_x(), args.m.div_ceil(BM), args.n.div_ceil(BN));
    unsafe {
        big_tile::gemm_tile::<T, BM, BN, BK, STAGES, TM, TN, KV>(part, tile_m * BM, tile_n * BN)
    }
}

/// `C = α·Σₛ slabₛ + β·C` over the `k` slabs of `A` (leading dimension `lda`).
///
/// # Safety
/// A must hold `k` slabs of `lda·n` elements; C as for every kernel.
// ANCHOR: core_loop
#[inline(always)]
pub unsafe fn reduce<T: Real>(args: GemmArgs<T>) {
    let element = block_idx_x() * block_dim_x() + thread_idx_x();
    if element >= args.m * args.n {
        return;
    }
    let (row, col) = (element % args.m, element / args.m);
    let slab = args.lda as usize * args.n as usize;
    let at = args.a_at(row, col);
    let c_at = args.c_at(row, col);
    let mut sum = if args.beta == T::ZERO {
        T::ZERO
    } else {
        args.beta * unsafe { args.c.load(c_at) }
    };
    for s in 0..args.k as usize {
        sum = args.alpha.fma(unsafe { args.a.load(at + s * slab) }, sum);
    }
    unsafe { args.c.store(c_at, sum) }
}
// ANCHOR_END: core_loop
