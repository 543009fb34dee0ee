//! `v2`: `v1` with the thread indices read once into locals, and the pointers moved to the
//! block's corner before the k-loop.
//!
//! Source: `001_…txt`, `gemm_32x32_v2`. The only change the document made to `v1` was
//! `const int idx = threadIdx.x, idy = threadIdx.y;` at the top, and on a V100 nvcc turned
//! that into 638 ms → 463 ms at 8192³. Its PTX showed why: for `v1` nvcc kept the k-loop's
//! addressing in 64-bit integer arithmetic recomputed from the indices every step, for `v2` it
//! strength-reduced it into pointer increments and unrolled the loop by four. The
//! nvcc-compiled originals on the H100 at 4096³: `v1` 3.97, `v2` 3.38 TFLOP/s (the order is
//! reversed there: the effect is a compiler accident, not a property of the algorithm).
//!
//! Here `tx`/`ty` are locals, A, B and C are offset to the block's tile first (the document's
//! `A += blockIdx.x << 5` idiom, through [`crate::device::Global::offset`]), and the k-loop
//! indexes from those pointers. Edges are handled as in `v1`: threads outside C return before
//! the loop (the document shifts edge blocks back inside the matrix instead, which needs
//! m, n ≥ 32 and only works for `beta = 0`).
//!
//! PTX (sm_90, rustc's nvptx backend + `opt -O3`): `thread_idx_x()` is `mov.u32 %r, %tid.x`,
//! which LLVM treats as a pure value, so in `v1` it was already read once, before the loop:
//! rustc gives `v1` nothing for this change to fix. Diffing the two entry points with register
//! numbers and labels stripped, the k-loops of `gemm_v1_f32` and `gemm_v2_f32` are identical,
//! instruction for instruction (only the prologue differs: `v2` tests the row before loading
//! the column bound). The loop is unrolled by four; each step is `add.s32` (32-bit index),
//! `mul.wide.u32` + `add.s64` (address) for A and again for B, two `ld.global.b32` and one
//! `fma.rn.f32`: 1 FMA in 9 instructions. The indices stay 32-bit and are widened every step
//! (u32 arithmetic may wrap, so LLVM cannot turn them into pointer increments); that is the
//! same for both. Expect the same speed as `v1`.
//!
//! Measured: H100, 4096³, 2026-11-21 (`docs/results/h100-2026-11-21/`): f32 4.38 TFLOP/s (0.085× cuBLAS; C++ original 3.38), v1 in the same run 4.79; f64 2.73.
use crate::device::{block_idx_x, block_idx_y, thread_idx_x, thread_idx_y, Real};
use crate::gemm::{blocks_for, GemmArgs, Geometry};

pub const TILE: u32 = 32;

pub fn geometry(m: u32, n: u32, _k: u32, _element_bytes: u32) -> Geometry {
    Geometry {
        grid: (blocks_for(m, TILE), blocks_for(n, TILE)),
        block: (TILE, TILE),
        shared_bytes: 0,
    }
}

/// # Safety
/// `args` must describe valid device matrices; launch with [`geometry`].
#[inline(always)]
pub unsafe fn gemm<T: Real>(args: GemmArgs<T>) {
    // ANCHOR: core_loop
    let tx = thread_idx_x();
    let ty = thread_idx_y();
    let row0 = block_idx_x() * TILE;
    let col0 = block_idx_y() * TILE;
    if row0 + tx >= args.m || col0 + ty >= args.n {
        return;
    }
    // The block's corner: A(row0, 0), B(0, col0).
    let a = args.a.offset(row0 as isize);
    let b = args.b.offset((col0 * args.ldb) as isize);
    let mut acc = T::ZERO;
    for i in 0..args.k {
        let x = unsafe { a.load((tx + i * args.lda) as usize) };
        let y = unsafe { b.load((i + ty * args.ldb) as usize) };
        acc = x.fma(y, acc);
    }
    unsafe { args.store_c(args.c_at(row0 + tx, col0 + ty), acc) }
    // ANCHOR_END: core_loop
}
