//! cuBLASLt, the yardstick wherever cuBLAS's classic API has no equivalent: the FP8 GEMMs
//! ([`crate::fp8::cublaslt`]) and the fused epilogues ([`CublasLtEpilogue`]). [`LtMatmul`] is
//! what both plan: a handle, a matmul descriptor, three layouts, a workspace and the algorithm
//! cuBLASLt's heuristic picks on the first call.
use crate::problem::{Activation, Bias, Epilogue, Problem, Transpose};
use anyhow::{anyhow, bail, Result};
// TRANSA/TRANSB take cuBLAS's own operation enum (4 bytes), which cudarc binds in `cublas`.
use cudarc::cublas::sys::cublasOperation_t;
use cudarc::cublaslt::result;
use cudarc::cublaslt::sys::{
    self, cublasComputeType_t, cublasLtEpilogue_t, cublasLtMatmulDescAttributes_t as Attr,
    cudaDataType,
};
use cust::memory::DeviceBuffer;
use kernels_gpu::gemm::Dtype;
use std::ffi::c_void;

/// The workspace cuBLASLt may use: 32 MiB, what NVIDIA's samples give Hopper.
pub const WORKSPACE_BYTES: usize = 32 << 20;

/// One matrix layout as `cublasLtMatrixLayoutCreate` takes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayoutSpec {
    /// Element type.
    pub data_type: cudaDataType,
    /// Rows as stored.
    pub rows: u64,
    /// Columns as stored.
    pub cols: u64,
    /// Leading dimension, in elements.
    pub ld: i64,
}

fn lt_error(call: &str) -> impl Fn(result::CublasError) -> anyhow::Error + '_ {
    move |e| anyhow!("{call} failed: {:?}", e.0)
}

/// A planned `D = alpha·op(A)·op(B) + beta·C` (C and D one buffer) with f32 compute and scales.
pub struct LtMatmul {
    handle: sys::cublasLtHandle_t,
    desc: sys::cublasLtMatmulDesc_t,
    layouts: [sys::cublasLtMatrixLayout_t; 3],
    pref: sys::cublasLtMatmulPreference_t,
    algo: std::cell::OnceCell<sys::cublasLtMatmulAlgo_t>,
    workspace: DeviceBuffer<u8>,
    alpha: f32,
    beta: f32,
}

impl LtMatmul {
    /// Plans the GEMM of A, B and C = D as `layouts` describe them, with op(A) = Aᵀ and op(B)
    /// = Bᵀ where `transposed` says so, on the current context.
    pub fn new(
        layouts: [LayoutSpec; 3],
        transposed: (bool, bool),
        alpha: f32,
        beta: f32,
    ) -> Result<Self> {
        let handle = std::panic::catch_unwind(result::create_handle)
            .map_err(|_| anyhow!("cannot load cuBLASLt (libcublasLt.so.13): is the CUDA 13 toolkit or its cuBLAS installed?"))?
            .map_err(lt_error("cublasLtCreate"))?;
        let workspace = unsafe { DeviceBuffer::uninitialized(WORKSPACE_BYTES) }
            .map_err(|e| anyhow!("cannot allocate cuBLASLt's workspace: {e:?}"))?;
        let desc = result::create_matmul_desc(
            cublasComputeType_t::CUBLAS_COMPUTE_32F,
            cudaDataType::CUDA_R_32F,
        )
        .map_err(lt_error("cublasLtMatmulDescCreate"))?;
        let mut plan = Self {
            handle,
            desc,
            layouts: [std::ptr::null_mut(); 3],
            pref: std::ptr::null_mut(),
            algo: Default::default(),
            workspace,
            alpha,
            beta,
        };
        let op = |t| {
            if t {
                cublasOperation_t::CUBLAS_OP_T
            } else {
                cublasOperation_t::CUBLAS_OP_N
            }
        };
        plan.set(Attr::CUBLASLT_MATMUL_DESC_TRANSA, &op(transposed.0))?;
        plan.set(Attr::CUBLASLT_MATMUL_DESC_TRANSB, &op(transposed.1))?;
        for (slot, l) in plan.layouts.iter_mut().zip(layouts) {
            *slot = result::create_matrix_layout(l.data_type, l.rows, l.cols, l.ld)
                .map_err(lt_error("cublasLtMatrixLayoutCreate"))?;
        }
        plan.pref =
            result::create_matmul_pref().map_err(lt_error("cublasLtMatmulPreferenceCreate"))?;
        let bytes = WORKSPACE_BYTES as u64;
        unsafe {
            result::set_matmul_pref_attribute(
                plan.pref,
                sys::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&bytes as *const u64).cast(),
                size_of::<u64>(),
            )
        }
        .map_err(lt_error("cublasLtMatmulPreferenceSetAttribute"))?;
        Ok(plan)
    }

    /// Sets one attribute of the matmul descriptor.
    pub fn set<T>(&self, attr: Attr, value: &T) -> Result<()> {
        unsafe {
            result::set_matmul_desc_attribute(
                self.desc,
                attr,
                (value as *const T).cast::<c_void>(),
                size_of::<T>(),
            )
        }
        .map_err(|e| anyhow!("cublasLtMatmulDescSetAttribute({attr:?}) failed: {:?}", e.0))
    }

    /// Makes the GEMM a strided batch of `count` members, each operand's `strides` (A's, B's,
    /// C's, in elements) apart (`CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT` and
    /// `_STRIDED_BATCH_OFFSET` on the three layouts). Before the first enqueue.
    pub fn set_batch(&self, count: u32, strides: [u64; 3]) -> Result<()> {
        use sys::cublasLtMatrixLayoutAttribute_t as L;
        for (&layout, stride) in self.layouts.iter().zip(strides) {
            let (count, stride) = (count as i32, stride as i64);
            for (attr, value, bytes) in [
                (
                    L::CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                    (&count as *const i32).cast::<c_void>(),
                    4,
                ),
                (
                    L::CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                    (&stride as *const i64).cast(),
                    8,
                ),
            ] {
                unsafe { result::set_matrix_layout_attribute(layout, attr, value, bytes) }
                    .map_err(|e| {
                        anyhow!(
                            "cublasLtMatrixLayoutSetAttribute({attr:?}) failed: {:?}",
                            e.0
                        )
                    })?;
            }
        }
        Ok(())
    }

    /// Enqueues the GEMM on `stream`, choosing the algorithm on the first call (with the
    /// descriptor as it then is).
    ///
    /// # Safety
    /// Device pointers valid for the planned layouts, on the context the plan was made on.
    pub unsafe fn enqueue(
        &self,
        stream: cust::sys::CUstream,
        a: u64,
        b: u64,
        c: u64,
    ) -> Result<()> {
        let [la, lb, lc] = self.layouts;
        let algo = match self.algo.get() {
            Some(algo) => algo,
            None => {
                let h = unsafe {
                    result::get_matmul_algo_heuristic(
                        self.handle,
                        self.desc,
                        la,
                        lb,
                        lc,
                        lc,
                        self.pref,
                    )
                }
                .map_err(|e| {
                    anyhow!(
                        "cublasLtMatmulAlgoGetHeuristic found no algorithm: {:?}",
                        e.0
                    )
                })?;
                self.algo.get_or_init(|| h.algo)
            }
        };
        unsafe {
            result::matmul(
                self.handle,
                self.desc,
                (&self.alpha as *const f32).cast(),
                (&self.beta as *const f32).cast(),
                a as *const c_void,
                la,
                b as *const c_void,
                lb,
                c as *const c_void,
                lc,
                c as *mut c_void,
                lc,
                algo,
                self.workspace.as_device_ptr().as_raw() as *mut c_void,
                WORKSPACE_BYTES,
                stream as sys::cudaStream_t,
            )
        }
        .map_err(lt_error("cublasLtMatmul"))
    }
}

impl Drop for LtMatmul {
    fn drop(&mut self) {
        unsafe {
            if !self.pref.is_null() {
                let _ = result::destroy_matmul_pref(self.pref);
            }
            for l in self.layouts.into_iter().filter(|l| !l.is_null()) {
                let _ = result::destroy_matrix_layout(l);
            }
            let _ = result::destroy_matmul_desc(self.desc);
            let _ = result::destroy_handle(self.handle);
        }
    }
}

/// cuBLASLt's epilogue for one of ours: `CUBLASLT_EPILOGUE_{RELU,GELU}[_BIAS]` or `_BIAS`
/// (bias per row of D, its only orientation), or why it has none.
pub fn lt_epilogue(e: Epilogue) -> Result<cublasLtEpilogue_t> {
    use cublasLtEpilogue_t::*;
    let with_bias = match e.bias() {
        Bias::None => false,
        Bias::PerRow => true,
        Bias::PerColumn => bail!("cuBLASLt's bias runs along the rows of D only (one per row)"),
    };
    Ok(match (e.activation(), with_bias) {
        (Activation::Identity, false) => CUBLASLT_EPILOGUE_DEFAULT,
        (Activation::Identity, true) => CUBLASLT_EPILOGUE_BIAS,
        (Activation::Relu, false) => CUBLASLT_EPILOGUE_RELU,
        (Activation::Relu, true) => CUBLASLT_EPILOGUE_RELU_BIAS,
        (Activation::Gelu, false) => CUBLASLT_EPILOGUE_GELU,
        (Activation::Gelu, true) => CUBLASLT_EPILOGUE_GELU_BIAS,
        (Activation::Silu, _) => bail!("cuBLASLt has no SiLU epilogue"),
    })
}

/// cuBLASLt's GEMM of a 16-bit problem with its fused epilogue: the yardstick of ours (`host
/// --variant cublas --epilogue …`). A, B, C, D and the bias in the problem's type.
pub struct CublasLtEpilogue {
    lt: LtMatmul,
}

impl CublasLtEpilogue {
    /// Plans `p` (bf16 or f16, any transposes, its epilogue) on the current context.
    pub fn new(p: &Problem) -> Result<Self> {
        let data_type = match p.dtype {
            Dtype::Bf16 => cudaDataType::CUDA_R_16BF,
            Dtype::F16 => cudaDataType::CUDA_R_16F,
            other => bail!(
                "cuBLASLt's fused epilogues are measured in bf16 and f16, not {}",
                other.name()
            ),
        };
        let epilogue = lt_epilogue(p.epilogue)?;
        let s = p.shape;
        let layout = |(rows, cols): (u32, u32), ld: u32| LayoutSpec {
            data_type,
            rows: rows as u64,
            cols: cols as u64,
            ld: ld as i64,
        };
        let layouts = [
            layout(p.stored_a(), s.lda),
            layout(p.stored_b(), s.ldb),
            layout((s.m, s.n), s.ldc),
        ];
        let t = p.transposes;
        let transposed = (t.transa == Transpose::Yes, t.transb == Transpose::Yes);
        let lt = LtMatmul::new(layouts, transposed, p.alpha as f32, p.beta as f32)?;
        lt.set(Attr::CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue)?;
        lt.set(Attr::CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &data_type)?;
        Ok(Self { lt })
    }

    /// Enqueues it on `stream` with the bias at `bias` (0 without one).
    ///
    /// # Safety
    /// Device pointers valid for the planned problem, on the context the plan was made on.
    pub unsafe fn enqueue(
        &self,
        stream: cust::sys::CUstream,
        (a, b, c): (u64, u64, u64),
        bias: u64,
    ) -> Result<()> {
        if bias != 0 {
            self.lt
                .set(Attr::CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias)?;
        }
        unsafe { self.lt.enqueue(stream, a, b, c) }
    }
}
