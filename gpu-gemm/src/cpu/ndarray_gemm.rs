//! `cpu-ndarray`: `ndarray::linalg::general_mat_mul`, the bar for the CPU variants: the same
//! library that computes the f64 reference. For f32 and f64 it runs the `matrixmultiply`
//! crate (BLIS-style packing and register-blocked micro-kernels with runtime AVX/FMA
//! detection), multithreaded through the `matrixmultiply-threading` feature that `host`
//! enables: one thread per physical core, but at most 4 (matrixmultiply 0.3's `MAX_THREADS`),
//! or `MATMUL_NUM_THREADS`. On a machine with more cores, `cpu-parallel` uses more threads
//! than this bar does.
//!
//! The matrices are not copied: each becomes an `ndarray` view on the same slice with strides
//! `(1, ld)` (rows adjacent, columns `ld` apart), which is exactly column-major storage with a
//! leading dimension, and `matrixmultiply` takes arbitrary strides. With β = 0 it does not
//! read C, as BLAS.
use super::{CpuScalar, Operands};
use ndarray::{ArrayView2, ArrayViewMut2, ShapeBuilder};

/// `C = αAB + βC` by `general_mat_mul` on strided views of the buffers.
pub fn gemm<T: CpuScalar>(x: &Operands<T>, c: &mut [T], ldc: usize) {
    let a = ArrayView2::from_shape((x.m, x.k).strides((1, x.lda)), x.a)
        .expect("A holds lda × k elements");
    let b = ArrayView2::from_shape((x.k, x.n).strides((1, x.ldb)), x.b)
        .expect("B holds ldb × n elements");
    let mut c = ArrayViewMut2::from_shape((x.m, x.n).strides((1, ldc)), c)
        .expect("C holds ldc × n elements");
    ndarray::linalg::general_mat_mul(x.alpha, &a, &b, x.beta, &mut c);
}
