//! `v1`: one thread per element of C, thread x along C's **rows** (coalesced).
//!
//! Source: `001_…txt`, `gemm_32x32_v1`. Changed from `v0`: only the mapping of threads to C.
//! Now the 32 threads of a warp take 32 consecutive rows of one column of C. In column-major
//! storage their loads of A(row, i) are 32 consecutive floats (one 128-byte transaction), their
//! loads of B(i, col) are one address (a broadcast), and their stores to C are contiguous.
//! The document measured 4687 ms → 638 ms on a V100 at 8192³ from this change alone.
//!
//! PTX: the same instructions as `v0`; only the addresses each lane computes differ.
//!
//! Measured: H100, 2026-11-21 (`docs/results/h100-2026-11-21/`): 4096³ f32 4.79 TFLOP/s (0.093× cuBLAS; C++ original 3.97), f64 2.86.
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
    let row = block_idx_x() * TILE + thread_idx_x();
    let col = block_idx_y() * TILE + thread_idx_y();
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
