//! `alc3`: the read-only data path without the padding.
//!
//! Source: `001_…txt`, `Alcanderian::cuda_kernel_sgemm_3` ("use `__ldg` without avoiding bank
//! conflict"). `alc2` minus the padding: unpadded 32×32 tiles as in `alc1`, A and B read with
//! `ld.global.nc`. It isolates the two changes of `alc2`: the nvcc-compiled original ran at
//! 1.10 TFLOP/s on the H100 at 4096³, the same as `alc1`, so the read-only path bought
//! nothing and the bank conflicts cost everything. See [`super::alcanderian`] for the code.
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
    unsafe { super::alcanderian::gemm::<T, 0, true>(args) }
}
