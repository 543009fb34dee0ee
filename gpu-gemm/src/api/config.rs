//! What a call describes: the GEMM ([`GemmConfig`]), the algorithm asked for ([`Algorithm`]),
//! and what the library answers ([`Choice`], [`Tuning`], [`Amax`]).
use super::{Activation, Batch, Bias, Epilogue, GroupLayout, Transpose};
use crate::registry::Math;
use kernels_gpu::gemm::Arithmetic;
use kernels_gpu::registry::Shape;
use std::fmt;
use std::path::PathBuf;

/// D's amax and the scale that maps it onto e4m3's range, as the amax epilogue leaves them
/// ([`GemmConfig::amax`](crate::api::GemmConfig::amax), [`Plan::amax`](crate::api::Plan::amax)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Amax {
    /// The largest |D| after the bias and activation, before C's rounding; NaN if D holds one.
    pub amax: f32,
    /// `448 / amax`, the factor that maps D onto e4m3 for the next layer; 1 where the amax is
    /// zero, infinite or NaN; the largest f32 where the quotient overflows.
    pub scale: f32,
}

/// One GEMM, as BLAS describes it: column-major, `C (m×n) = α·op(A) (m×k) · op(B) (k×n) + β·C`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GemmConfig {
    /// Rows of op(A) and C.
    pub m: u32,
    /// Columns of op(B) and C.
    pub n: u32,
    /// Columns of op(A), rows of op(B).
    pub k: u32,
    /// The product's factor (the kernels take it as f32, or as f64 in f64).
    pub alpha: f64,
    /// C's factor; 0 ignores C's contents (NaNs included), as BLAS does.
    pub beta: f64,
    /// Elements from one column of A to the next, at least its rows as stored: m, or k when
    /// op(A) = Aᵀ (A is then stored k×m).
    pub lda: u32,
    /// Elements from one column of B to the next, at least its rows as stored: k, or n when
    /// op(B) = Bᵀ (B is then stored n×k).
    pub ldb: u32,
    /// Elements from one column of C to the next, at least m.
    pub ldc: u32,
    /// op(A).
    pub transa: Transpose,
    /// op(B).
    pub transb: Transpose,
    /// What the kernel applies to each element before it rounds it: `C = act(α·op(A)·op(B) +
    /// β·C + bias)` ([`GemmConfig::epilogue`](crate::api::GemmConfig::epilogue)); [`Epilogue::NONE`] by default.
    pub epilogue: Epilogue,
    /// A strided batch of such GEMMs in one launch ([`GemmConfig::batch`](crate::api::GemmConfig::batch)); [`Batch::ONE`] by
    /// default.
    pub batch: Batch,
    /// A grouped GEMM ([`GemmConfig::contiguous_groups`](crate::api::GemmConfig::contiguous_groups), [`GemmConfig::masked_groups`](crate::api::GemmConfig::masked_groups)):
    /// [`GroupLayout::None`] by default.
    pub groups: GroupLayout,
}

impl GemmConfig {
    /// `C = A·B`: α = 1, β = 0, packed columns (lda = m, ldb = k, ldc = m), no transposes.
    pub fn new(m: u32, n: u32, k: u32) -> Self {
        GemmConfig {
            m,
            n,
            k,
            alpha: 1.0,
            beta: 0.0,
            lda: m,
            ldb: k,
            ldc: m,
            transa: Transpose::No,
            transb: Transpose::No,
            epilogue: Epilogue::NONE,
            batch: Batch::ONE,
            groups: GroupLayout::None,
        }
    }

    /// A grouped GEMM in DeepGEMM's contiguous layout (a mixture-of-experts layer in training or
    /// prefill): `groups` GEMMs in one launch, each with its own A (`stride_a` elements after
    /// the last: an expert's weights) and its own columns of one B and one C (the tokens
    /// routed to it, one group after another; n is all of them, a multiple of
    /// [`GROUP_COLUMNS`](crate::api::GROUP_COLUMNS)). Which group each run of [`GROUP_COLUMNS`](crate::api::GROUP_COLUMNS) columns belongs to is the
    /// table given to [`Gemm::run_grouped`](crate::api::Gemm::run_grouped) (a word per run; a word of `groups` or more is
    /// padding, which is neither computed nor written). bf16 and f16, `Algorithm::Auto` or a
    /// kernel without clusters along n.
    pub fn contiguous_groups(self, groups: u32, stride_a: u64) -> Self {
        GemmConfig {
            batch: Batch {
                count: groups,
                stride_a,
                stride_b: 0,
                stride_c: 0,
            },
            groups: GroupLayout::Contiguous,
            ..self
        }
    }

    /// A grouped GEMM in DeepGEMM's masked layout (a mixture-of-experts layer while decoding,
    /// under CUDA graphs): a strided batch of `groups` members ([`GemmConfig::batch`](crate::api::GemmConfig::batch)), each
    /// with room for n columns, of which group `g` computes only its first `table[g]` (the
    /// table given to [`Gemm::run_grouped`](crate::api::Gemm::run_grouped) or [`Plan::enqueue_grouped`](crate::api::Plan::enqueue_grouped), read on the device:
    /// the host need not know the counts, nor wait for them). The columns past a count are
    /// left as they are.
    pub fn masked_groups(self, groups: u32, stride_a: u64, stride_b: u64, stride_c: u64) -> Self {
        GemmConfig {
            groups: GroupLayout::Masked,
            ..self.batch(groups, stride_a, stride_b, stride_c)
        }
    }

    /// A strided batch, cuBLAS's `cublasGemmStridedBatchedEx`: `count` GEMMs of this
    /// configuration in one launch, member `i` of A, B and C `i·stride` elements after member
    /// 0's (each stride at least one member's matrix, `ld × columns` as stored; a multiple of
    /// 16 bytes for the Hopper kernels). In bf16, f16 and f32 (TF32, 3xTF32) the Hopper kernels'
    /// persistent walk goes over every member's tiles ([`kernels_gpu::pipeline::schedule`]),
    /// and `Algorithm::Auto` chooses for the batch as a whole; in f32 and f64 the kernels
    /// [`kernels_gpu::registry::GRID_BATCHED`] names launch a layer of their grid per member (at
    /// most 65 535 members); under `Math::Fp32Accurate`, `auto` takes 3xTF32 for members of at
    /// least [`crate::auto::FP32_ACCURATE_BATCH_MEMBER_MACS`] multiply-adds and the strict
    /// kernels below; or
    /// `Algorithm::Cublas`. In e4m3 with block scales ([`Gemm::run_fp8`](crate::api::Gemm::run_fp8)) the batch runs on
    /// `wgmma-fp8-block`'s grouped walk, the masked layout whose every count is n. The buffers
    /// hold every member. A's and B's members may overlap, a stride of 0 being one matrix that
    /// every member multiplies (as `cublasGemmStridedBatchedEx` allows); C's may not. The f32
    /// and f64 kernels and cuBLAS read such an A or B; the kernels that read through the TMA
    /// engine (16-bit, TF32, e4m3) refuse it and say so. A fused epilogue (16-bit) applies to
    /// each member, with one bias for all.
    pub fn batch(self, count: u32, stride_a: u64, stride_b: u64, stride_c: u64) -> Self {
        GemmConfig {
            batch: Batch {
                count,
                stride_a,
                stride_b,
                stride_c,
            },
            ..self
        }
    }

    /// With a fused epilogue, `C = act(α·op(A)·op(B) + β·C + bias)`: a bias vector per row of C
    /// (m values, cuBLASLt's `CUBLASLT_EPILOGUE_BIAS`) or per column (n), or none, and an
    /// activation (ReLU, GELU in its tanh form, SiLU) or none. The 16-bit kernels apply it
    /// before C's one rounding (bf16, f16; `Algorithm::Cublas` runs cuBLASLt's epilogue, which
    /// has no SiLU and no bias per column). Give the bias to [`Gemm::run_with_bias`](crate::api::Gemm::run_with_bias) or
    /// [`Plan::enqueue_with_bias`](crate::api::Plan::enqueue_with_bias); in e4m3, whose kernels apply it to their bf16 D, to
    /// [`Gemm::run_fp8_fused`](crate::api::Gemm::run_fp8_fused).
    pub fn epilogue(self, bias: Bias, activation: Activation) -> Self {
        let amax = self.epilogue.amax();
        let epilogue = Epilogue::new(bias, activation);
        GemmConfig {
            epilogue: if amax { epilogue.with_amax() } else { epilogue },
            ..self
        }
    }

    /// With the amax epilogue: the GEMM also gathers D's amax, the largest |D| after the bias
    /// and activation and before C's rounding (over every member of a batch), and the scale
    /// that maps it onto e4m3's range, `448 / amax` (1 for an amax of zero, infinity or NaN),
    /// for the next layer's quantization: TransformerEngine's current scaling, without a trip
    /// of D through memory. Each warp of the epilogue adds its maximum with one atomic; a
    /// one-thread kernel after the GEMM writes the pair. 16-bit types (bf16, f16), one problem
    /// or a strided batch, alone or with [`GemmConfig::epilogue`](crate::api::GemmConfig::epilogue). Read the pair with
    /// [`Plan::amax`](crate::api::Plan::amax), or on the device at [`Plan::amax_device_address`](crate::api::Plan::amax_device_address) (what a captured
    /// graph's next kernel reads). In e4m3 (one problem), [`Gemm::run_fp8_fused`](crate::api::Gemm::run_fp8_fused) returns it.
    pub fn amax(self) -> Self {
        GemmConfig {
            epilogue: self.epilogue.with_amax(),
            ..self
        }
    }

    /// With α and β.
    pub fn scale(self, alpha: f64, beta: f64) -> Self {
        GemmConfig {
            alpha,
            beta,
            ..self
        }
    }

    /// With leading dimensions (the distance, in elements, between a column's start and the
    /// next's).
    pub fn leading_dimensions(self, lda: u32, ldb: u32, ldc: u32) -> Self {
        GemmConfig {
            lda,
            ldb,
            ldc,
            ..self
        }
    }

    /// With transposes. The leading dimensions are those of A and B as stored, which
    /// [`GemmConfig::new`](crate::api::GemmConfig::new) set for op = N: give them again with
    /// [`GemmConfig::leading_dimensions`](crate::api::GemmConfig::leading_dimensions) after transposing. Which algorithms compute which
    /// combination: [`GemmError::Unsupported`](crate::api::GemmError::Unsupported) names them.
    pub fn transposes(self, transa: Transpose, transb: Transpose) -> Self {
        GemmConfig {
            transa,
            transb,
            ..self
        }
    }

    pub(super) fn shape(&self) -> Shape {
        Shape {
            m: self.m,
            n: self.n,
            k: self.k,
            lda: self.lda,
            ldb: self.ldb,
            ldc: self.ldc,
        }
    }
}

/// Which kernel computes the GEMM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// The fastest kernel measured for the shape, type and device that keeps the contract.
    Auto(Math),
    /// The fastest of `Auto`'s candidates under the contract, each at every tile, timed on this
    /// GPU with the call's own buffers the first time a problem is seen, then read from a
    /// tuning cache keyed by GPU, driver, build and problem ([`crate::tuning`] has the rules;
    /// [`Gemm::with_tuning_cache`](crate::api::Gemm::with_tuning_cache) says where). The first call of a shape pays for the timing
    /// (from milliseconds to seconds at large sizes); C still ends as if only the winner ran.
    /// [`Choice::tuning`] says whether the choice was cached or measured. On the emulator,
    /// whose times say nothing of a GPU, `Auto`'s choice runs, untimed.
    Tuned(Math),
    /// A kernel of the course by name (`host --list`), with its tile parameter or the default.
    Kernel {
        /// Its name (`wgmma-3xtf32`).
        name: String,
        /// Its tile parameter (`--tile`), or `None` for its default.
        tile: Option<u32>,
    },
    /// cuBLAS on the same buffers (GPU only; `cublasGemmEx` with f32 accumulation in 16 bits):
    /// the yardstick.
    Cublas,
}

impl Algorithm {
    /// A kernel by name, at its default tile.
    pub fn kernel(name: &str) -> Self {
        Algorithm::Kernel {
            name: name.to_string(),
            tile: None,
        }
    }

    /// A kernel by name and tile.
    pub fn kernel_tile(name: &str, tile: u32) -> Self {
        Algorithm::Kernel {
            name: name.to_string(),
            tile: Some(tile),
        }
    }

    /// The algorithm as reports and errors name it: `auto (strict)`, `wgmma-16bit:1`, `cublas`.
    pub fn label(&self) -> String {
        match self {
            Algorithm::Auto(math) => format!("auto ({})", math.name()),
            Algorithm::Tuned(math) => format!("tuned ({})", math.name()),
            Algorithm::Kernel { name, tile: None } => name.clone(),
            Algorithm::Kernel {
                name,
                tile: Some(t),
            } => format!("{name}:{t}"),
            Algorithm::Cublas => "cublas".into(),
        }
    }
}

/// What a call ran, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// The kernel and tile, as `host` names them (`wgmma-3xtf32:2`), or `cublas`.
    pub variant: String,
    /// Its entry point in the PTX.
    pub entry: String,
    /// How it computes: the element type's own fused multiply-add, TF32 or 3xTF32.
    pub arithmetic: Arithmetic,
    /// Why this one: the algorithm named it, or `Auto`'s table row or fallback.
    pub reason: String,
    /// Where it ran: the GPU's name and architecture, or the emulator.
    pub device: String,
    /// For [`Algorithm::Tuned`]: whether the choice was read from the cache or timed by this
    /// call, and the times; `None` for the other algorithms.
    pub tuning: Option<Tuning>,
}

/// Where [`Algorithm::Tuned`]'s choice came from. The [`Choice`]'s reason says the same in a
/// sentence, with the cache file and any warning about it.
#[derive(Clone, Debug, PartialEq)]
pub enum Tuning {
    /// Read from the tuning cache: an earlier call, of this process or another, timed the
    /// candidates on this GPU, driver and build.
    Cached {
        /// The winner's median when it was tuned, in milliseconds.
        median_ms: f64,
    },
    /// Timed by this call.
    Measured {
        /// Each candidate that ran and its median in milliseconds, fastest first; those stopped
        /// after their first run (over 3× the best so far) last, with that run's time.
        ranking: Vec<(String, f64)>,
        /// The cache file the winner was written to; `None` when it could not be (the reason
        /// says why; the handle still remembers the winner for its later calls).
        stored: Option<PathBuf>,
    },
    /// Not tuned: `Auto`'s choice. On the emulator, whose times are the CPU's, always; from
    /// [`Gemm::choose`](crate::api::Gemm::choose), before a run has tuned the problem.
    NotTuned,
}

impl fmt::Display for Choice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}, {} arithmetic) on {}: {}",
            self.variant,
            self.entry,
            self.arithmetic.name(),
            self.device,
            self.reason
        )
    }
}
