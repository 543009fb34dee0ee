//! `v3`: 32×32 shared-memory tiles of A and B, unpadded.
//!
//! Source: `001_…txt`, `gemm_32x32_v3`. Changed from `v1`: the block stages a 32×32 tile of A
//! and of B in shared memory and every thread then runs 32 FMAs out of it, so each global
//! element is loaded once per block instead of 32 times.
//!
//! It is the `tiled` kernel with `TILE = 32, PAD = 0`; see [`super::tiled`] for the code. The
//! lesson is in the missing padding: in the inner loop the 32 lanes of a warp read A's tile at
//! addresses 32 words apart, all in one shared-memory bank, so each `ld.shared` is replayed 32
//! times. On the V100 the document measured v3 *slower* than the untiled v1 for this reason,
//! and the CUDA C++ original runs at 1.48 TFLOP/s on the H100 (v1: 3.97). `v4` adds one word
//! of padding per row.
//!
//! Measured: H100, 2026-11-21 (`docs/results/h100-2026-11-21/`): 4096³ f32 1.72 TFLOP/s (0.033× cuBLAS; C++ original 1.48), f64 0.89.
use crate::device::Real;
use crate::gemm::{GemmArgs, Geometry};

pub fn geometry(m: u32, n: u32, k: u32, element_bytes: u32) -> Geometry {
    super::tiled::geometry::<32, 0>(m, n, k, element_bytes)
}

/// # Safety
/// As [`super::tiled::gemm`].
#[inline(always)]
pub unsafe fn gemm<T: Real>(args: GemmArgs<T>) {
    unsafe { super::tiled::gemm::<T, 32, 0>(args) }
}
