//! `v0`: one thread per element of C, thread x along C's **columns** (uncoalesced).
//!
//! Source: `001_…txt`, `gemm_32x32_v0`. A 32×32 block computes a 32×32 tile of C; each
//! thread reads a row of A and a column of B straight from global memory.
//!
//! The lesson is the mapping. Consecutive threads of a warp (consecutive `threadIdx.x`) take
//! consecutive *columns* of C. With column-major storage, their loads of B(i, col) are `ldb`
//! elements apart, and so are their stores to C: 32 separate memory transactions per warp
//! instead of one. Their loads of A(row, i) are the same address (a broadcast). `v1` swaps
//! the two axes.
//!
//! The document shifts the pointers of edge blocks back inside the matrix to avoid bounds
//! checks, which needs m, n ≥ 32 and `beta = 0`. This kernel checks bounds instead and
//! handles every size: the check is outside the k-loop, so it costs nothing inside it.
//!
//! PTX: the k-loop is `ld.global.f32` ×2 + `fma.rn.f32`, with one 64-bit address increment per
//! operand (rustc's nvptx backend does not contract `a * b + c`; [`Real::fma`] asks for it).
//!
//! Measured: H100, 2026-11-21 (`docs/results/h100-2026-11-21/`): 4096³ f32 0.50 TFLOP/s (0.010× cuBLAS; C++ original 0.50), f64 0.49.
use crate::device::{block_idx_x, block_idx_y, thread_idx_x, thread_idx_y, Real};
use crate::gemm::{blocks_for, GemmArgs, Geometry};

pub const TILE: u32 = 32;

pub fn geometry(m: u32, n: u32, _k: u32, _element_bytes: u32) -> Geometry {
    Geometry {
        grid: (blocks_for(n, TILE), blocks_for(m, TILE)),
        block: (TILE, TILE),
        shared_bytes: 0,
    }
}

/// # Safety
/// `args` must describe valid device matrices; launch with [`geometry`].
#[inline(always)]
pub unsafe fn gemm<T: Real>(args: GemmArgs<T>) {
    // ANCHOR: core_loop
    let col = block_idx_x() * TILE + thread_idx_x();
    let row = block_idx_y() * TILE + thread_idx_y();
    if row >= args.m || col >= args.n {
        return;
    }
    let mut acc = T::ZERO;
    for i in 0..args.k {
        let a = unsafe { args.a.load(args.a_at(row, i)) };
        let b = unsafe { args.b.load(args.b_at(i, col)) };
        acc = a.fma(b, acc);
    }
    unsafe { args.store_c(args.c_at(row, col), acc) }
    // ANCHOR_END: core_loop
}
