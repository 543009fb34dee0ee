//! cuBLAS, the yardstick, on the GPU backend's stream: the handle, and the call for each type
//! (`cublasSgemm`/`cublasDgemm`, `cublasGemmEx` for the 16-bit types, and their strided-batch
//! forms) with the problem's transposes.
use crate::problem::{Problem, Transpose, Transposes};
use kernels_gpu::gemm::{Batch, Dtype};

/// A cuBLAS handle bound to the backend's stream.
pub(super) struct CublasHandle(pub(super) cudarc::cublas::sys::cublasHandle_t);

impl Drop for CublasHandle {
    fn drop(&mut self) {
        unsafe {
            let _ = cudarc::cublas::result::destroy_handle(self.0);
        }
    }
}

/// cuBLAS's GEMM for a dtype, column-major, with op(A) and op(B), on device buffers of that
/// dtype: `cublasSgemm` and `cublasDgemm` for f32 and f64; for bf16 and f16
/// `cublasGemmEx` with A, B and C in the 16-bit type, `CUBLAS_COMPUTE_32F` (f32 accumulation
/// and f32 alpha, beta: what the course's 16-bit kernels do, so the ratio compares like with
/// like) and the default algorithm choice.
///
/// `p`'s GEMM with `n` columns of B and C, at `(a, b, c)`, as `batch` (a group of a grouped
/// problem is one such GEMM).
///
/// # Safety
/// Device pointers valid for the sizes and leading dimensions given, holding `dtype` elements.
pub(super) unsafe fn cublas_gemm(
    handle: cudarc::cublas::sys::cublasHandle_t,
    p: &Problem,
    n: u32,
    (a, b, c): (u64, u64, u64),
    batch: &Batch,
) -> Result<(), cudarc::cublas::result::CublasError> {
    use cudarc::cublas::result;
    let (dtype, transposes, (alpha, beta), s) = (p.dtype, p.transposes, (p.alpha, p.beta), p.shape);
    let (m, n, k) = (s.m as i32, n as i32, s.k as i32);
    let (lda, ldb, ldc) = (s.lda as i32, s.ldb as i32, s.ldc as i32);
    if batch.is_batched() {
        return unsafe {
            cublas_gemm_strided_batched(
                handle,
                dtype,
                transposes,
                (m, n, k),
                (alpha, beta),
                (a, lda),
                (b, ldb),
                (c, ldc),
                batch,
            )
        };
    }
    use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t};
    let (transa, transb) = cublas_ops(transposes);
    use std::ffi::c_void;
    unsafe {
        match dtype {
            Dtype::F32 => {
                let (alpha, beta) = (alpha as f32, beta as f32);
                result::sgemm(
                    handle,
                    transa,
                    transb,
                    m,
                    n,
                    k,
                    &alpha,
                    a as *const f32,
                    lda,
                    b as *const f32,
                    ldb,
                    &beta,
                    c as *mut f32,
                    ldc,
                )
            }
            Dtype::F64 => result::dgemm(
                handle,
                transa,
                transb,
                m,
                n,
                k,
                &alpha,
                a as *const f64,
                lda,
                b as *const f64,
                ldb,
                &beta,
                c as *mut f64,
                ldc,
            ),
            // FP8 has no `cublasGemmEx`: its yardstick is cuBLASLt (`fp8::cublaslt`).
            Dtype::E4m3 | Dtype::E4m3E5m2 => Err(cudarc::cublas::result::CublasError(
                cudarc::cublas::sys::cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED,
            )),
            Dtype::Bf16 | Dtype::F16 => {
                let data_type = cublas_half_type(dtype);
                // CUBLAS_COMPUTE_32F takes alpha and beta as f32.
                let (alpha, beta) = (alpha as f32, beta as f32);
                result::gemm_ex(
                    handle,
                    transa,
                    transb,
                    m,
                    n,
                    k,
                    (&alpha as *const f32).cast::<c_void>(),
                    a as *const c_void,
                    data_type,
                    lda,
                    b as *const c_void,
                    data_type,
                    ldb,
                    (&beta as *const f32).cast::<c_void>(),
                    c as *mut c_void,
                    data_type,
                    ldc,
                    cublasComputeType_t::CUBLAS_COMPUTE_32F,
                    cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            }
        }
    }
}

/// cuBLAS's op(A) and op(B).
pub(super) fn cublas_ops(
    transposes: Transposes,
) -> (
    cudarc::cublas::sys::cublasOperation_t,
    cudarc::cublas::sys::cublasOperation_t,
) {
    use cudarc::cublas::sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
    let op = |t| match t {
        Transpose::No => CUBLAS_OP_N,
        Transpose::Yes => CUBLAS_OP_T,
    };
    (op(transposes.transa), op(transposes.transb))
}

/// cuBLAS's name of a 16-bit type (bf16, else f16).
pub(super) fn cublas_half_type(dtype: Dtype) -> cudarc::cublas::sys::cudaDataType {
    use cudarc::cublas::sys::cudaDataType;
    match dtype {
        Dtype::Bf16 => cudaDataType::CUDA_R_16BF,
        _ => cudaDataType::CUDA_R_16F,
    }
}

/// [`cublas_gemm`] over a strided batch, one call: `cublasSgemmStridedBatched`,
/// `cublasDgemmStridedBatched`, and for bf16 and f16 `cublasGemmStridedBatchedEx` with
/// `CUBLAS_COMPUTE_32F`.
///
/// # Safety
/// As [`cublas_gemm`], for every member at its stride.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn cublas_gemm_strided_batched(
    handle: cudarc::cublas::sys::cublasHandle_t,
    dtype: Dtype,
    transposes: Transposes,
    (m, n, k): (i32, i32, i32),
    (alpha, beta): (f64, f64),
    (a, lda): (u64, i32),
    (b, ldb): (u64, i32),
    (c, ldc): (u64, i32),
    batch: &Batch,
) -> Result<(), cudarc::cublas::result::CublasError> {
    use cudarc::cublas::result;
    use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t};
    use std::ffi::c_void;
    let (transa, transb) = cublas_ops(transposes);
    let (sa, sb, sc) = (
        batch.stride_a as i64,
        batch.stride_b as i64,
        batch.stride_c as i64,
    );
    let count = batch.count as i32;
    unsafe {
        match dtype {
            Dtype::F32 => {
                let (alpha, beta) = (alpha as f32, beta as f32);
                result::sgemm_strided_batched(
                    handle,
                    transa,
                    transb,
                    m,
                    n,
                    k,
                    &alpha,
                    a as *const f32,
                    lda,
                    sa,
                    b as *const f32,
                    ldb,
                    sb,
                    &beta,
                    c as *mut f32,
                    ldc,
                    sc,
                    count,
                )
            }
            Dtype::F64 => result::dgemm_strided_batched(
                handle,
                transa,
                transb,
                m,
                n,
                k,
                &alpha,
                a as *const f64,
                lda,
                sa,
                b as *const f64,
                ldb,
                sb,
                &beta,
                c as *mut f64,
                ldc,
                sc,
                count,
            ),
            Dtype::E4m3 | Dtype::E4m3E5m2 => Err(cudarc::cublas::result::CublasError(
                cudarc::cublas::sys::cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED,
            )),
            Dtype::Bf16 | Dtype::F16 => {
                let data_type = cublas_half_type(dtype);
                let (alpha, beta) = (alpha as f32, beta as f32);
                result::gemm_strided_batched_ex(
                    handle,
                    transa,
                    transb,
                    m,
                    n,
                    k,
                    (&alpha as *const f32).cast::<c_void>(),
                    a as *const c_void,
                    data_type,
                    lda,
                    sa,
                    b as *const c_void,
                    data_type,
                    ldb,
                    sb,
                    (&beta as *const f32).cast::<c_void>(),
                    c as *mut c_void,
                    data_type,
                    ldc,
                    sc,
                    count,
                    cublasComputeType_t::CUBLAS_COMPUTE_32F,
                    cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            }
        }
    }
}
