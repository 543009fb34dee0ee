//! `cpu-simd`: 003's `gemm_avx`, the row-broadcast FMA kernel, on one thread; and the SIMD
//! inner kernel that `cpu-blocked` and `cpu-parallel` reuse.
//!
//! 003 (row-major) broadcasts one element `a(i, j)` into a 256-bit register and adds
//! `a(i, j)·(row j of B)` into row i of C, 8 floats per `_mm256_fmadd_ps`. For column-major
//! storage the same kernel broadcasts `α·B(p, j)` and adds it times column p of A into
//! column j of C:
//!
//! ```text
//! for j in 0..n { C(:, j) ← β·C(:, j); for p in 0..k { C(:, j) += (α·B(p, j))·A(:, p) } }
//! ```
//!
//! This is `cpu-naive`'s nest with the dot-product loop moved out of the middle (j-p-i
//! instead of j-i-p), and the loop order of the reference BLAS `xGEMM`. Now both streams are
//! contiguous (a column of A, a column of C), every load is a full vector, and the m outputs
//! of a column are independent, so they fill the vector lanes. 003 measured 16× the triple
//! loop at 512³ and 30× at 2048³: more than the 8 lanes, because of the access pattern. The
//! weak point is that C's column is loaded and stored once per p (k times in all): the
//! kernel streams C through the cache k times, which `cpu-blocked` addresses.
//!
//! Two paths, chosen at run time ([`Path::detect`]):
//! - `avx2_fma`: `std::arch` intrinsics in functions compiled with
//!   `#[target_feature(enable = "avx2,fma")]`, taken only where `is_x86_feature_detected!`
//!   reports both, so the same binary (built for baseline x86-64) runs on any x86-64 CPU.
//!   A 256-bit register holds 8 f32 or 4 f64; the rows past the last full vector are done
//!   one by one, with FMA too.
//! - `portable`: plain loops that LLVM vectorises for the build's target (SSE2 on baseline
//!   x86-64: 4 f32 per instruction, multiply and add rounded separately). Elsewhere, and on
//!   x86-64 CPUs without AVX2 or FMA.
//!
//! The entry names say which ran: `cpu_simd_avx2_fma_f32` or `cpu_simd_portable_f32`.
use super::{c_column, scale_by_beta, CpuScalar, Operands};
use crate::problem::Scalar;
use kernels_gpu::device::Real;

/// The SIMD path this CPU takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// `std::arch` AVX2 intrinsics with fused multiply-adds: 8 f32 or 4 f64 per instruction.
    Avx2Fma,
    /// Plain loops vectorised by LLVM for the build's target, multiply and add rounded apart.
    Portable,
}

impl Path {
    /// AVX2 and FMA when the CPU has both (x86-64 only), else the portable loops.
    pub fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        if Avx2Fma::detect().is_some() {
            return Path::Avx2Fma;
        }
        Path::Portable
    }

    /// The name in entry points: `avx2_fma` or `portable`.
    pub fn name(self) -> &'static str {
        match self {
            Path::Avx2Fma => "avx2_fma",
            Path::Portable => "portable",
        }
    }
}

/// An inner kernel: `y ← y + s·x` over two equally long contiguous slices (BLAS's axpy).
pub trait Axpy: Copy {
    /// `y ← y + s·x`; panics unless `x` and `y` have the same length.
    fn axpy<T: SimdScalar>(self, s: T, x: &[T], y: &mut [T]);
}

/// The portable inner kernel: a loop LLVM vectorises for the build's target.
#[derive(Clone, Copy, Debug)]
pub struct Portable;

impl Axpy for Portable {
    #[inline(always)]
    fn axpy<T: SimdScalar>(self, s: T, x: &[T], y: &mut [T]) {
        assert_eq!(x.len(), y.len());
        for (y, &x) in y.iter_mut().zip(x) {
            *y = *y + s * x;
        }
    }
}

/// The AVX2+FMA inner kernel. The value is a proof that the CPU has both features: only
/// [`Avx2Fma::detect`] makes one, so its safe `axpy` may call the `target_feature` code.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub struct Avx2Fma(());

#[cfg(target_arch = "x86_64")]
impl Avx2Fma {
    /// The proof, when the CPU reports both AVX2 and FMA; `None` otherwise.
    pub fn detect() -> Option<Self> {
        (is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")).then_some(Avx2Fma(()))
    }
}

#[cfg(target_arch = "x86_64")]
impl Axpy for Avx2Fma {
    #[inline(always)]
    fn axpy<T: SimdScalar>(self, s: T, x: &[T], y: &mut [T]) {
        assert_eq!(x.len(), y.len());
        // SAFETY: `self` exists, so the CPU has AVX2 and FMA.
        unsafe { T::axpy_avx2_fma(s, x, y) }
    }
}

/// An element type with an AVX2 axpy: `y ← y + s·x`, x and y of equal length.
pub trait SimdScalar: Scalar + Real {
    /// # Safety
    /// The CPU must have AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    unsafe fn axpy_avx2_fma(s: Self, x: &[Self], y: &mut [Self]);
}

/// `SimdScalar` for one element type: its lane count and its four AVX intrinsics.
macro_rules! simd_scalar {
    ($t:ty, $lanes:literal, $set1:ident, $load:ident, $fmadd:ident, $store:ident) => {
        impl SimdScalar for $t {
            // `inline`: into the nests of `run_avx2_fma`, which have the same features.
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            #[inline]
            unsafe fn axpy_avx2_fma(s: $t, x: &[$t], y: &mut [$t]) {
                use std::arch::x86_64::*;
                let s_vec = $set1(s);
                let mut xs = x.chunks_exact($lanes);
                let mut ys = y.chunks_exact_mut($lanes);
                for (x8, y8) in (&mut xs).zip(&mut ys) {
                    // Unaligned loads: a column starts wherever lda and ldc put it (`--pitch`
                    // aligns it). The chunks are full, so the pointers are in bounds.
                    unsafe {
                        let sum = $fmadd(s_vec, $load(x8.as_ptr()), $load(y8.as_ptr()));
                        $store(y8.as_mut_ptr(), sum);
                    }
                }
                for (y, &x) in ys.into_remainder().iter_mut().zip(xs.remainder()) {
                    *y = s.mul_add(x, *y);
                }
            }
        }
    };
}
simd_scalar!(
    f32,
    8,
    _mm256_set1_ps,
    _mm256_loadu_ps,
    _mm256_fmadd_ps,
    _mm256_storeu_ps
);
simd_scalar!(
    f64,
    4,
    _mm256_set1_pd,
    _mm256_loadu_pd,
    _mm256_fmadd_pd,
    _mm256_storeu_pd
);

/// A loop nest written once over any inner kernel; [`dispatch`] runs it with the best kernel
/// this CPU has.
pub trait LoopNest {
    /// Runs the nest with `kernel` as its innermost loop.
    fn run<K: Axpy>(self, kernel: K);
}

/// Runs `nest` with the AVX2+FMA kernel where the CPU has it, else with the portable one.
pub fn dispatch(nest: impl LoopNest) {
    #[cfg(target_arch = "x86_64")]
    if let Some(kernel) = Avx2Fma::detect() {
        // SAFETY: `kernel` proves the features.
        return unsafe { run_avx2_fma(nest, kernel) };
    }
    nest.run(Portable)
}

/// The nest compiled with AVX2 and FMA enabled, so that the kernel's `target_feature` code
/// inlines into its innermost loop instead of being a call per column.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_avx2_fma(nest: impl LoopNest, kernel: Avx2Fma) {
    nest.run(kernel)
}

/// `cpu-simd`'s nest: j-p-i, one broadcast axpy per (p, j).
struct RowBroadcast<'a, 'c, T> {
    x: &'a Operands<'a, T>,
    c: &'c mut [T],
    ldc: usize,
}

impl<T: CpuScalar> LoopNest for RowBroadcast<'_, '_, T> {
    #[inline(always)]
    fn run<K: Axpy>(self, kernel: K) {
        let RowBroadcast { x, c, ldc } = self;
        for j in 0..x.n {
            let c_j = c_column(c, ldc, x.m, j);
            scale_by_beta(x.beta, c_j);
            for p in 0..x.k {
                kernel.axpy(x.alpha * x.b_at(p, j), x.a_column(p), c_j);
            }
        }
    }
}

/// `C = αAB + βC` by the row-broadcast FMA kernel, on the path [`Path::detect`] picks.
pub fn gemm<T: CpuScalar>(x: &Operands<T>, c: &mut [T], ldc: usize) {
    dispatch(RowBroadcast { x, c, ldc })
}

/// [`gemm`] on the portable path whatever the CPU has (to test it where AVX2 exists).
pub fn gemm_portable<T: CpuScalar>(x: &Operands<T>, c: &mut [T], ldc: usize) {
    RowBroadcast { x, c, ldc }.run(Portable)
}
