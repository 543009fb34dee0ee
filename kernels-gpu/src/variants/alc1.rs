//! `alc1`: the tutorial's tiled kernel as written: unpadded 32×32 shared tiles, plain loads,
//! bounds checks in the loop.
//!
//! Source: `001_…txt`, `Alcanderian::cuda_kernel_sgemm_1`. See [`super::alcanderian`] for the
//! code and for how the row-major tutorial maps onto our column-major problem (thread x
//! along C's columns, strided global accesses, as the document ran it). Compared with `v3`
//! (also unpadded), every global access is uncoalesced as well as every shared read of
//! `a_sub` being a 32-way bank conflict. The nvcc-compiled original ran at 1.10 TFLOP/s on the
//! H100 at 4096³ (v3: 1.48).
//!
//! Measured: H100, 4096³, 2026-11-21 (`docs/results/h100-2026-11-21/`): f32 1.25 TFLOP/s (0.024× cuBLAS; C++ original 1.10), f64 0.78.
use crate::device::Real;
use crate::gemm::{GemmArgs, Geometry};

pub fn geometry(m: u32, n: u32, k: u32, element_bytes: u32) -> Geometry {
    super::alcanderian::geometry::<0>(m, n, k, element_bytes)
}

/// # Safety
/// As [`super::alcanderian::gemm`].
#[inline(always)]
pub unsafe fn gemm<T: Real>(args: GemmArgs<T>) {
    unsafe { super::alcanderian::gemm::<T, 0, false>(args) }
}
