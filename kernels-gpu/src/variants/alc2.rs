//! `alc2`: `alc1` with shared rows padded to 33 elements and the read-only data path.
//!
//! Source: `001_…txt`, `Alcanderian::cuda_kernel_sgemm_2` ("use `__ldg` & avoid bank
//! conflict"). Changed from `alc1`: `a_sub`/`b_sub` rows of 32 + 1 elements, so the 32 lanes
//! reading `a_sub[tx][kk]` hit 32 banks; A and B are read with `ld.global.nc` (the tutorial's
//! `__restrict__` pointers, which let nvcc use the read-only path). See
//! [`super::alcanderian`] for the code and the mapping onto our column-major problem. The
//! nvcc-compiled original ran at 3.68 TFLOP/s on the H100 at 4096³: the padding, not the
//! read-only path, is what separates it from `alc1`/`alc3`.
//!
//! Measured: H100, 4096³, 2026-11-21 (`docs/results/h100-2026-11-21/`): f32 3.81 TFLOP/s (0.074× cuBLAS; C++ original 3.68), f64 3.03.
use crate::device::Real;
use crate::gemm::{GemmArgs, Geometry};

pub fn geometry(m: u32, n: u32, k: u32, element_bytes: u32) -> Geometry {
    super::alcanderian::geometry::<1>(m, n, k, element_bytes)
}

/// # Safety
/// As [`super::alcanderian::gemm`].
#[inline(always)]
pub unsafe fn gemm<T: Real>(args: GemmArgs<T>) {
    unsafe { super::alcanderian::gemm::<T, 1, true>(args) }
}
