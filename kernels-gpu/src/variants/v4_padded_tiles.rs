//! `v4`: 32×32 shared-memory tiles, each row padded by one element (no bank conflicts).
//!
//! Source: `001_…txt`, `gemm_32x32_v4` (`__shared__ T sA[32][32 | 1]`), and the lab of
//! `000_…txt`, whose tile-width sweep this is the 32 case of. Changed from `v3`: one element
//! of padding per tile row. The 32 lanes reading a column of A's tile now hit 32 different
//! banks: one shared-memory transaction instead of 32.
//!
//! It is the `tiled` kernel with `TILE = 32, PAD = 1` (the same PTX entry as `tiled --tile 32`).
//!
//! Measured: H100, 2026-11-21 (`docs/results/h100-2026-11-21/`): 4096³ f32 7.00 TFLOP/s (0.136× cuBLAS; C++ original 7.04), f64 4.86.
use crate::device::Real;
use crate::gemm::{GemmArgs, Geometry};

pub fn geometry(m: u32, n: u32, k: u32, element_bytes: u32) -> Geometry {
    super::tiled::geometry::<32, 1>(m, n, k, element_bytes)
}

/// # Safety
/// As [`super::tiled::gemm`].
#[inline(always)]
pub unsafe fn gemm<T: Real>(args: GemmArgs<T>) {
    unsafe { super::tiled::gemm::<T, 32, 1>(args) }
}
