//! `naive` and `basic`: one thread per element of C on a one-dimensional grid.
//!
//! Sources: `002_…txt`, the first `matMultCUDA` (one thread per element, `idx = blockIdx.x *
//! blockDim.x + threadIdx.x`, `row = idx / n`, `column = idx % n`), and `003_…txt`,
//! `gemm_gpu_impl` (the same decomposition, run with block sizes 2 … 1024 at N = 2^13).
//! Both are the same algorithm; only the block size differs, so both rows of the registry
//! launch this one kernel. It reads its block size with `block_dim_x()` instead of a
//! constant, so a single entry point serves every `--tile` of `basic`.
//!
//! Changed from `v1`: the grid is one-dimensional. `v1` gives a 32×32 block a 32×32 tile of
//! C; here the thread's linear index `idx` *is* the position of its element in C's storage
//! order, which is what both documents do (003 even writes `c[threadId]`).
//!
//! Mapping the documents onto our layout: they store row-major, so consecutive `idx` there
//! means consecutive columns of one row of C, contiguous in memory. Our C is column-major,
//! so the same rule (consecutive threads, consecutive addresses of C) gives `row = idx % m`,
//! `col = idx / m`. The memory behaviour the documents describe carries over unchanged:
//! a warp reads 32 consecutive elements of a column of A (coalesced: the document's B, whose
//! reads it explains are "actually contiguous"), one element of B (a broadcast: the
//! document's A) and writes 32 consecutive elements of C. Only at the end of a column of C
//! does a warp straddle two columns.
//!
//! 003 accumulates straight into `c[threadId]` in global memory; with `beta` that cannot be
//! done (C must be read once, at the end, and not at all when `beta = 0`), so the sum is kept
//! in a register, as 002 does. The documents write `t += a * b`, which nvcc contracts into
//! an FMA; rustc does not contract, so the kernel asks for it with [`Real::fma`].
//!
//! Shapes: the linear index is 32-bit, so `m * n` must stay under 2^32 minus a block
//! ([`supports`]); every m, n, k ≥ 1 in that range works (threads past the end return).
//!
//! PTX: one `div.u32` per thread before the loop (the remainder is a multiply-subtract; taking
//! m as a `NonZeroU32` removes Rust's divide-by-zero check, which had left a panic call in
//! the PTX). The k-loop is unrolled by four; each step is `ld.global.b32` ×2 + `fma.rn.f32`
//! plus the 32-bit index arithmetic of each load (`mad.lo.s32`, `mul.wide.u32`), as in `v1`.
//! ptxas (sm_90): 32 registers (f32 and f64), no stack frame, no spills.
//!
//! Measured: H100, 4096³, 2026-11-21 (`docs/results/h100-2026-11-21/`): f32 4.20 TFLOP/s (0.082× cuBLAS), f64 2.21.
use core::num::NonZeroU32;

use crate::device::{block_dim_x, block_idx_x, thread_idx_x, Real};
#[cfg(not(target_arch = "nvptx64"))]
use crate::gemm::Dtype;
use crate::gemm::{blocks_for, GemmArgs, Geometry};
#[cfg(not(target_arch = "nvptx64"))]
use crate::registry::Shape;

/// `naive`'s block size (002 does not print its launch; 256 threads is its tutorial's choice
/// and `basic`'s default).
pub const BLOCK: u32 = 256;

/// The block sizes of 003's sweep, the default first.
pub const BLOCK_SIZES: &[u32] = &[256, 2, 4, 8, 16, 32, 64, 128, 512, 1024];

/// A 1D grid of `block`-thread blocks covering the m·n elements of C.
pub fn geometry(m: u32, n: u32, _k: u32, _element_bytes: u32, block: u32) -> Geometry {
    Geometry {
        grid: (blocks_for(m * n, block), 1),
        block: (block, 1),
        shared_bytes: 0,
    }
}

#[cfg(not(target_arch = "nvptx64"))]
/// The linear index must not wrap: `m * n` plus the largest block below 2^32.
pub fn supports(shape: &Shape, _: Dtype) -> Result<(), String> {
    let elements = shape.m as u64 * shape.n as u64;
    if elements + 1024 > 1 << 32 {
        return Err(format!(
            "m * n = {elements} elements: the 1D grid's 32-bit thread index needs m * n <= 2^32 - 1024"
        ));
    }
    Ok(())
}

/// The thread's element of C, `(row, col)`, or `None` past the end.
#[inline(always)]
pub fn element<T: Real>(args: &GemmArgs<T>) -> Option<(u32, u32)> {
    let idx = block_idx_x() * block_dim_x() + thread_idx_x();
    // `m >= 1` as a type: the division below then has no divide-by-zero check (a panic path).
    let m = NonZeroU32::new(args.m)?;
    if idx >= args.m * args.n {
        return None;
    }
    Some((idx % m, idx / m))
}

/// # Safety
/// `args` must describe valid device matrices; launch with [`geometry`] (any block size).
#[inline(always)]
pub unsafe fn gemm<T: Real>(args: GemmArgs<T>) {
    let Some((row, col)) = element(&args) else {
        return;
    };
    let mut acc = T::ZERO;
    // ANCHOR: core_loop
    for i in 0..args.k {
        let a = unsafe { args.a.load(args.a_at(row, i)) };
        let b = unsafe { args.b.load(args.b_at(i, col)) };
        acc = a.fma(b, acc);
    }
    // ANCHOR_END: core_loop
    unsafe { args.store_c(args.c_at(row, col), acc) }
}
