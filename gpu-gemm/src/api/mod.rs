//! The library's call: `C = α·op(A)·op(B) + β·C` on buffers the caller owns, by any of the
//! course's kernels, on the GPU or the CPU emulator.
//!
//! ```
//! use gpu_gemm::{Algorithm, Gemm, GemmConfig, GemmError, Math};
//!
//! fn main() -> Result<(), GemmError> {
//!     // Without a GPU (as here, in the doctest), the emulator runs the same kernels on the CPU.
//!     let gemm = Gemm::new().unwrap_or_else(|_| Gemm::emulator());
//!     let (m, n, k) = (48, 40, 33);
//!     let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 - 3.0).collect();
//!     let b: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32 * 0.5).collect();
//!     let (a_buf, b_buf) = (gemm.upload(&a)?, gemm.upload(&b)?);
//!     let mut c_buf = gemm.zeros::<f32>(m * n)?;
//!     let config = GemmConfig::new(m as u32, n as u32, k as u32);
//!     let choice = gemm.run(&config, &Algorithm::Auto(Math::Strict), &a_buf, &b_buf, &mut c_buf)?;
//!     let c = gemm.download(&c_buf)?;
//!     // Column-major: C(i, j) is c[i + j·m]. Small integers and halves: the sums are exact.
//!     let expected: f32 = (0..k).map(|l| a[3 + l * m] * b[l + 5 * k]).sum();
//!     assert_eq!(c[3 + 5 * m], expected);
//!     println!("{choice}");
//!     Ok(())
//! }
//! ```
//!
//! What the call checks before it launches anything, each refusal a [`GemmError`]: the sizes
//! and leading dimensions (of A and B as stored: k×m for a transposed A, n×k for a transposed
//! B), whether the algorithm computes the transposes asked for (cuBLAS all four, the course's
//! kernels N,N: `host --list` and `Variant::transposes` say which), its constraints on the
//! shape, the device's architecture (the `wgmma` kernels need sm_90a), where each buffer lives,
//! its length and its alignment.
//!
//! The rest of the library's surface, one file each:
//! - [`Plan`] (`plan.rs`): the choice, loading and allocation done once, then
//!   [`Plan::enqueue`] on the caller's stream with nothing allocated and nothing waited for,
//!   so that it can be captured into a CUDA graph; [`Gemm::run`] is the one-line form.
//! - [`Gemm::run_fp8`] (`fp8.rs`): e4m3 operands with their scales, per tensor or per block.
//! - [`Plan::enqueue_cudarc`] and [`Gemm::on_cudarc`] (`cudarc_buffers.rs`): a cudarc program's
//!   `CudaSlice`s and stream.
//!
//! [`Math::Fp32Accurate`] promises an error at or below SGEMM's relative to Σ|a·b| of each
//! element, for every normal f32 input: its 3xTF32 kernel scales each row of A and column of B
//! by a power of two first (`kernels_gpu::variants::ranges`), so that the small halves of its
//! split stay normal anywhere in f32's range; a kernel without that pass (chapter 1's
//! `tc-3xtf32`) is not handed out under it.
mod cudarc_buffers;
mod fp8;
mod plan;
pub use fp8::Fp8;
pub use plan::{Plan, PLAN_BUFFER_SETS};

use crate::auto;
use crate::emulator;
use crate::gpu::Gpu;
use crate::launch::{Copies, Launch};
use crate::problem::{Init, Problem, Transposes};
use crate::registry::{self, CublasMath, Math, Variant};
use crate::run::{self, Backend};
use crate::timing::{Clock, Timing};
use crate::tuning::{self, Cache, Candidate, Key, Measurement, Protocol, Timed};
use cust::memory::{
    AsyncCopyDestination, CopyDestination, DeviceBuffer, DevicePointer, DeviceSlice,
};
use cust::stream::Stream;
use kernels_gpu::gemm::Arithmetic;
use kernels_gpu::registry::{Shape, Target};
use std::cell::RefCell;
use std::fmt;
use std::path::{Path, PathBuf};

/// An element type of the kernels: `f32`, `f64`, [`half::bf16`] and [`half::f16`]. The 16-bit
/// types accumulate in f32 and take α and β as f32.
pub use crate::problem::Scalar as Element;

/// Why a call was refused or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GemmError {
    /// No CUDA driver, no device, or no context to run on.
    #[error("no GPU to run on: {0} (`Gemm::emulator()` runs the same kernels on the CPU)")]
    NoGpu(String),
    /// Sizes or leading dimensions that describe no matrix.
    #[error("invalid GEMM: {0}")]
    InvalidConfig(String),
    /// No algorithm of that name.
    #[error("{0}")]
    UnknownAlgorithm(String),
    /// The algorithm exists but cannot compute this GEMM: a type it has no version for, a
    /// transpose, a shape or leading dimension outside its constraints.
    #[error("`{algorithm}` cannot run this GEMM: {reason}")]
    Unsupported {
        /// The algorithm as asked for (`auto (strict)`, `wgmma-16bit:1`, `cublas`).
        algorithm: String,
        /// The constraint it breaks, in the words of the kernel's registry entry.
        reason: String,
    },
    /// The kernel is built for an architecture the device is not.
    #[error("`{kernel}` needs {needs} (Hopper's wgmma: H100, H200); this device is {device}")]
    NeedsArch {
        /// The kernel's entry point.
        kernel: String,
        /// The PTX target it is built for (`sm_90a`).
        needs: &'static str,
        /// The device's name and compute capability.
        device: String,
    },
    /// A buffer shorter than the members of a strided batch span.
    #[error(
        "{operand} holds {len} elements; {count} members {stride} elements apart need {needed}"
    )]
    BatchTooSmall {
        /// `A`, `B` or `C`.
        operand: char,
        /// Elements in the buffer.
        len: usize,
        /// Elements the batch spans: `stride·(count − 1)` and the last member's matrix.
        needed: u64,
        /// Members of the batch.
        count: u32,
        /// The operand's batch stride.
        stride: u64,
    },
    /// A grouped GEMM's table of the wrong length, or a table for a GEMM that is not grouped
    /// (or none for one that is).
    #[error("the group table holds {given}; {needed}")]
    GroupTableMisshaped {
        /// What was given.
        given: String,
        /// What the configuration needs.
        needed: String,
    },
    /// A buffer shorter than its matrix.
    #[error("{operand} holds {len} elements; a {rows}×{cols} matrix with leading dimension {ld} needs {needed}")]
    BufferTooSmall {
        /// `A`, `B` or `C`.
        operand: char,
        /// Elements in the buffer.
        len: usize,
        /// Elements the matrix spans: `ld·(cols − 1) + rows`.
        needed: usize,
        /// The matrix's rows.
        rows: u32,
        /// The matrix's columns.
        cols: u32,
        /// Its leading dimension.
        ld: u32,
    },
    /// A buffer whose address the kernels' vector loads and the TMA engine cannot use.
    #[error("{operand} starts at {address:#x}, not a multiple of {align} bytes, which the kernels' vector loads and TMA need (cudaMalloc and Rust's allocator give at least that)")]
    Misaligned {
        /// `A`, `B` or `C`.
        operand: char,
        /// The buffer's first element.
        address: u64,
        /// The alignment needed, in bytes.
        align: u64,
    },
    /// Host memory given to the GPU, or device memory to the emulator.
    #[error("{operand} is in {found} memory, but this handle runs on {backend}, which needs {needs} memory")]
    WrongMemory {
        /// `A`, `B` or `C`.
        operand: char,
        /// `device` or `host`: where the buffer is.
        found: &'static str,
        /// Where the handle needs it.
        needs: &'static str,
        /// What the handle runs on ([`Gemm::device`]).
        backend: String,
    },
    /// A fused epilogue's bias: missing where the configuration's epilogue adds one, given where
    /// it adds none, or shorter than it needs (m values per row of C, n per column).
    #[error("the epilogue's bias: {given}, where this epilogue needs {needed}")]
    BiasMisshaped {
        /// What was given: `none`, `N values`.
        given: String,
        /// What the epilogue needs: `no bias`, `m = N values (one per row of C)`, ….
        needed: String,
    },
    /// An FP8 operand's scales: fewer than its shape and scaling need.
    #[error("{operand}'s scales are {len} f32, {scaling}; a {scaling} scaling of this shape needs {needed}")]
    ScalesMisshaped {
        /// `A` or `B`.
        operand: char,
        /// Scales in the buffer.
        len: usize,
        /// Scales the shape needs.
        needed: usize,
        /// `per tensor` or `per block`.
        scaling: &'static str,
    },
    /// D's amax asked of a plan whose configuration does not gather it.
    #[error("this plan gathers no amax: its configuration needs GemmConfig::amax")]
    NoAmax,
    /// The driver, a launch, or the emulator failed (the emulator names the faulting thread).
    #[error("{0}")]
    Launch(String),
}

/// D's amax and the scale that maps it onto e4m3's range, as the amax epilogue leaves them
/// ([`GemmConfig::amax`], [`Plan::amax`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Amax {
    /// The largest |D| after the bias and activation, before C's rounding; NaN if D holds one.
    pub amax: f32,
    /// `448 / amax`, the factor that maps D onto e4m3 for the next layer; 1 where the amax is
    /// zero, infinite or NaN; the largest f32 where the quotient overflows.
    pub scale: f32,
}

type Result<T> = std::result::Result<T, GemmError>;

pub use crate::problem::{
    Activation, Batch, Bias, Epilogue, GroupLayout, Transpose, GROUP_COLUMNS,
};

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
    /// β·C + bias)` ([`GemmConfig::epilogue`]); [`Epilogue::NONE`] by default.
    pub epilogue: Epilogue,
    /// A strided batch of such GEMMs in one launch ([`GemmConfig::batch`]); [`Batch::ONE`] by
    /// default.
    pub batch: Batch,
    /// A grouped GEMM ([`GemmConfig::contiguous_groups`], [`GemmConfig::masked_groups`]):
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
    /// [`GROUP_COLUMNS`]). Which group each run of [`GROUP_COLUMNS`] columns belongs to is the
    /// table given to [`Gemm::run_grouped`] (a word per run; a word of `groups` or more is
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
    /// under CUDA graphs): a strided batch of `groups` members ([`GemmConfig::batch`]), each
    /// with room for n columns, of which group `g` computes only its first `table[g]` (the
    /// table given to [`Gemm::run_grouped`] or [`Plan::enqueue_grouped`], read on the device:
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
    /// `Algorithm::Cublas`. In e4m3 with block scales ([`Gemm::run_fp8`]) the batch runs on
    /// `wgmma-fp8-block`'s grouped walk, the masked layout whose every count is n. The buffers
    /// hold every member. A fused epilogue (16-bit) applies to each member, with one bias for
    /// all.
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
    /// has no SiLU and no bias per column). Give the bias to [`Gemm::run_with_bias`] or
    /// [`Plan::enqueue_with_bias`]; in e4m3, whose kernels apply it to their bf16 D, to
    /// [`Gemm::run_fp8_fused`].
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
    /// or a strided batch, alone or with [`GemmConfig::epilogue`]. Read the pair with
    /// [`Plan::amax`], or on the device at [`Plan::amax_device_address`] (what a captured
    /// graph's next kernel reads). In e4m3 (one problem), [`Gemm::run_fp8_fused`] returns it.
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
    /// [`GemmConfig::new`] set for op = N: give them again with
    /// [`GemmConfig::leading_dimensions`] after transposing. Which algorithms compute which
    /// combination: [`GemmError::Unsupported`] names them.
    pub fn transposes(self, transa: Transpose, transb: Transpose) -> Self {
        GemmConfig {
            transa,
            transb,
            ..self
        }
    }

    fn shape(&self) -> Shape {
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
    /// [`Gemm::with_tuning_cache`] says where). The first call of a shape pays for the timing
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
    /// [`Gemm::choose`], before a run has tuned the problem.
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

/// Where an operand lives, as the call sees it.
pub enum Memory<'a, T> {
    /// Device memory of the handle's context.
    Device {
        /// The first element's device address.
        address: u64,
        /// Elements.
        len: usize,
    },
    /// Host memory, for the emulator.
    Host(&'a [T]),
}

/// Where the output lives.
pub enum MemoryMut<'a, T> {
    /// Device memory of the handle's context.
    Device {
        /// The first element's device address.
        address: u64,
        /// Elements.
        len: usize,
    },
    /// Host memory, for the emulator.
    Host(&'a mut [T]),
}

impl<T> MemoryMut<'_, T> {
    /// The same place, read-only.
    fn as_memory(&self) -> Memory<'_, T> {
        match self {
            MemoryMut::Device { address, len } => Memory::Device {
                address: *address,
                len: *len,
            },
            MemoryMut::Host(h) => Memory::Host(h),
        }
    }
}

/// A matrix the call reads: device memory (`cust`'s [`DeviceBuffer`] or [`DeviceSlice`], of
/// the element's bits: `u16` for bf16 and f16) on the GPU, host memory (`[T]`, `Vec<T>`) on the
/// emulator, or a [`Buffer`] made by the handle.
pub trait Operand<T> {
    /// Where the elements are.
    fn memory(&self) -> Memory<'_, T>;
}

/// The matrix the call writes (C).
pub trait OperandMut<T>: Operand<T> {
    /// Where the elements are, to be written.
    fn memory_mut(&mut self) -> MemoryMut<'_, T>;
}

impl<T: Element> Operand<T> for [T] {
    fn memory(&self) -> Memory<'_, T> {
        Memory::Host(self)
    }
}

impl<T: Element> OperandMut<T> for [T] {
    fn memory_mut(&mut self) -> MemoryMut<'_, T> {
        MemoryMut::Host(self)
    }
}

impl<T: Element> Operand<T> for Vec<T> {
    fn memory(&self) -> Memory<'_, T> {
        Memory::Host(self)
    }
}

impl<T: Element> OperandMut<T> for Vec<T> {
    fn memory_mut(&mut self) -> MemoryMut<'_, T> {
        MemoryMut::Host(self)
    }
}

/// Device memory of each element type: its own bits for f32 and f64, `u16` for bf16 and f16.
macro_rules! device_operand {
    ($t:ty, $bits:ty) => {
        impl Operand<$t> for DeviceSlice<$bits> {
            fn memory(&self) -> Memory<'_, $t> {
                Memory::Device {
                    address: self.as_device_ptr().as_raw(),
                    len: self.len(),
                }
            }
        }
        impl OperandMut<$t> for DeviceSlice<$bits> {
            fn memory_mut(&mut self) -> MemoryMut<'_, $t> {
                MemoryMut::Device {
                    address: self.as_device_ptr().as_raw(),
                    len: self.len(),
                }
            }
        }
        impl Operand<$t> for DeviceBuffer<$bits> {
            fn memory(&self) -> Memory<'_, $t> {
                Operand::<$t>::memory(&**self)
            }
        }
        impl OperandMut<$t> for DeviceBuffer<$bits> {
            fn memory_mut(&mut self) -> MemoryMut<'_, $t> {
                OperandMut::<$t>::memory_mut(&mut **self)
            }
        }
    };
}
/// A grouped GEMM's table ([`GemmConfig::contiguous_groups`], [`GemmConfig::masked_groups`]):
/// 32-bit words on the host (the emulator) or the device.
impl Operand<u32> for [u32] {
    fn memory(&self) -> Memory<'_, u32> {
        Memory::Host(self)
    }
}

impl Operand<u32> for Vec<u32> {
    fn memory(&self) -> Memory<'_, u32> {
        Memory::Host(self)
    }
}

impl Operand<u32> for DeviceSlice<u32> {
    fn memory(&self) -> Memory<'_, u32> {
        Memory::Device {
            address: self.as_device_ptr().as_raw(),
            len: self.len(),
        }
    }
}

impl Operand<u32> for DeviceBuffer<u32> {
    fn memory(&self) -> Memory<'_, u32> {
        Operand::<u32>::memory(&**self)
    }
}

device_operand!(f32, f32);
device_operand!(f64, f64);
device_operand!(half::bf16, u16);
device_operand!(half::f16, u16);

/// A matrix in the memory the handle runs on: the device's, or the host's for the emulator.
/// Made by [`Gemm::upload`] and [`Gemm::zeros`], read back by [`Gemm::download`], so that the
/// same program runs on both.
pub enum Buffer<T: Element> {
    /// On the GPU, as the element's bits (`u16` for bf16 and f16).
    Device(DeviceBuffer<T::Bits>),
    /// On the host, for the emulator.
    Host(Vec<T>),
}

impl<T: Element> Operand<T> for Buffer<T> {
    fn memory(&self) -> Memory<'_, T> {
        match self {
            Buffer::Device(d) => Memory::Device {
                address: d.as_device_ptr().as_raw(),
                len: d.len(),
            },
            Buffer::Host(h) => Memory::Host(h),
        }
    }
}

impl<T: Element> OperandMut<T> for Buffer<T> {
    fn memory_mut(&mut self) -> MemoryMut<'_, T> {
        match self {
            Buffer::Device(d) => MemoryMut::Device {
                address: d.as_device_ptr().as_raw(),
                len: d.len(),
            },
            Buffer::Host(h) => MemoryMut::Host(h),
        }
    }
}

/// A grouped GEMM's table in the memory the handle runs on ([`Gemm::upload_table`]).
pub enum Table {
    /// On the GPU.
    Device(DeviceBuffer<u32>),
    /// On the host, for the emulator.
    Host(Vec<u32>),
}

impl Operand<u32> for Table {
    fn memory(&self) -> Memory<'_, u32> {
        match self {
            Table::Device(d) => Operand::<u32>::memory(d),
            Table::Host(h) => Memory::Host(h),
        }
    }
}

/// The kernels' vector loads (16 bytes) and the TMA engine need operands at 16-byte addresses.
const OPERAND_ALIGN: u64 = 16;

/// A handle on the GPU (a context and a stream) or on the CPU emulator. The kernels' PTX
/// modules are compiled by the driver on first use, so the first call of a module is slow; the
/// driver caches the result for later processes.
pub struct Gemm {
    backend: Backend,
    /// [`Algorithm::Tuned`]'s cache: its file and what this handle read or tuned.
    cache: RefCell<Cache>,
    /// Tuning on the emulator, for the tests: a device to key by and a clock.
    clock: Option<EmulatorClock>,
}

/// What lets the tests tune on the emulator: the device its keys name, and the milliseconds
/// each run of a candidate (by label) is said to take. The emulator still runs every candidate
/// on the buffers, so that what tuning does to C is the real thing.
struct EmulatorClock {
    device: tuning::Device,
    time: RefCell<ClockFn>,
}

/// A candidate's label → the milliseconds a run of it is said to take.
type ClockFn = Box<dyn FnMut(&str) -> f64 + Send>;

/// C's input, kept while candidates overwrite it.
enum SavedC<T: Element> {
    Device(DeviceBuffer<T::Bits>),
    Host(Vec<T>),
}

impl Gemm {
    /// On device 0: initialises the driver, makes a context and a non-blocking stream.
    pub fn new() -> Result<Self> {
        let gpu = Gpu::open(None).map_err(|e| GemmError::NoGpu(format!("{e:#}")))?;
        Ok(Gemm::on(Backend::Gpu(Box::new(gpu.quiet()))))
    }

    /// On the caller's current `cust` context, launching on `stream` (or a new non-blocking
    /// stream): calls are ordered after the work the caller queued there before.
    pub fn on_current_context(stream: Option<Stream>) -> Result<Self> {
        let gpu =
            Gpu::on_current_context(stream).map_err(|e| GemmError::NoGpu(format!("{e:#}")))?;
        Ok(Gemm::on(Backend::Gpu(Box::new(gpu.quiet()))))
    }

    /// On the CPU emulator: the same kernels over host memory, every access checked. Slow
    /// (seconds for a 256³ product), for programs and tests without a GPU.
    pub fn emulator() -> Self {
        Gemm::on(Backend::Emulator)
    }

    /// On a backend the pipeline opened (`host` runs its GPU or emulator through it), with the
    /// default tuning cache ([`tuning::default_path`]).
    pub fn on(backend: Backend) -> Self {
        Gemm {
            backend,
            cache: RefCell::new(Cache::new(tuning::default_path())),
            clock: None,
        }
    }

    /// The backend calls run on.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// With [`Algorithm::Tuned`]'s cache in the file `path` instead of the default
    /// (`$GPU_GEMM_TUNING_CACHE`, else `$XDG_CACHE_HOME/gpu-gemm/tuning.csv`, else
    /// `~/.cache/gpu-gemm/tuning.csv`). Its folder is made when the first winner is written. A
    /// file that cannot be written never fails a call: the [`Choice`]'s reason says so, and the
    /// handle remembers its winners in memory.
    ///
    /// ```
    /// use gpu_gemm::{Algorithm, Gemm, GemmConfig, GemmError, Math, Tuning};
    ///
    /// fn main() -> Result<(), GemmError> {
    ///     let cache = std::env::temp_dir().join("gpu-gemm-doctest").join("tuning.csv");
    ///     let _ = std::fs::remove_file(&cache); // so that the first call below tunes
    ///     let gemm = Gemm::new()
    ///         .unwrap_or_else(|_| Gemm::emulator())
    ///         .with_tuning_cache(&cache);
    ///     let (m, n, k) = (64, 48, 32);
    ///     let (a, b) = (gemm.upload(&vec![1.0f32; m * k])?, gemm.upload(&vec![0.5f32; k * n])?);
    ///     let mut c = gemm.zeros::<f32>(m * n)?;
    ///     let config = GemmConfig::new(m as u32, n as u32, k as u32);
    ///     let tuned = Algorithm::Tuned(Math::Strict);
    ///     let first = gemm.run(&config, &tuned, &a, &b, &mut c)?;
    ///     let later = gemm.run(&config, &tuned, &a, &b, &mut c)?;
    ///     match (&first.tuning, &later.tuning) {
    ///         // On a GPU: every candidate timed by the first call, the winner read back after.
    ///         (Some(Tuning::Measured { ranking, .. }), Some(Tuning::Cached { .. })) => {
    ///             assert_eq!(ranking[0].0, later.variant);
    ///         }
    ///         // On the emulator (as here, in the doctest): auto's choice, nothing timed.
    ///         (Some(Tuning::NotTuned), Some(Tuning::NotTuned)) => assert!(!gemm.is_gpu()),
    ///         other => panic!("{other:?}"),
    ///     }
    ///     // Whatever ran, C is the product: 32 × 1 × 0.5.
    ///     assert!(gemm.download(&c)?.iter().all(|&x| x == 16.0));
    ///     println!("{later}");
    ///     Ok(())
    /// }
    /// ```
    pub fn with_tuning_cache(self, path: impl Into<PathBuf>) -> Self {
        Gemm {
            cache: RefCell::new(Cache::new(Some(path.into()))),
            ..self
        }
    }

    /// The tuning cache's file, if there is one.
    pub fn tuning_cache(&self) -> Option<PathBuf> {
        self.cache.borrow().path().map(Path::to_path_buf)
    }

    /// The emulator, tuning with a clock of the tests' own: `time` gives each run of a
    /// candidate (by label) its milliseconds, and the keys name `device`.
    #[cfg(test)]
    pub(crate) fn emulator_with_clock(
        device: tuning::Device,
        time: impl FnMut(&str) -> f64 + Send + 'static,
    ) -> Self {
        Gemm {
            clock: Some(EmulatorClock {
                device,
                time: RefCell::new(Box::new(time)),
            }),
            ..Gemm::emulator()
        }
    }

    /// Whether calls run on a GPU.
    pub fn is_gpu(&self) -> bool {
        self.backend.is_gpu()
    }

    /// The GPU's name, architecture and PTX, or "the CPU emulator".
    pub fn device(&self) -> String {
        self.backend.describe()
    }

    /// The stream calls are launched on (`None` on the emulator).
    pub fn stream(&self) -> Option<&Stream> {
        match &self.backend {
            Backend::Gpu(g) => Some(g.stream()),
            Backend::Emulator => None,
        }
    }

    /// `data` in the handle's memory.
    pub fn upload<T: Element>(&self, data: &[T]) -> Result<Buffer<T>> {
        match &self.backend {
            Backend::Gpu(_) => DeviceBuffer::from_slice(T::as_bits(data))
                .map(Buffer::Device)
                .map_err(|e| {
                    GemmError::Launch(format!("cannot upload {} elements: {e}", data.len()))
                }),
            Backend::Emulator => Ok(Buffer::Host(data.to_vec())),
        }
    }

    /// A grouped GEMM's table ([`Gemm::run_grouped`]) in the handle's memory.
    pub fn upload_table(&self, words: &[u32]) -> Result<Table> {
        match &self.backend {
            Backend::Gpu(_) => DeviceBuffer::from_slice(words)
                .map(Table::Device)
                .map_err(|e| {
                    GemmError::Launch(format!(
                        "cannot upload a table of {} words: {e}",
                        words.len()
                    ))
                }),
            Backend::Emulator => Ok(Table::Host(words.to_vec())),
        }
    }

    /// `len` zeros in the handle's memory.
    pub fn zeros<T: Element>(&self, len: usize) -> Result<Buffer<T>> {
        self.upload(&vec![T::from_f64(0.0); len])
    }

    /// A buffer's elements, copied to the host (after the calls before it finished).
    pub fn download<T: Element>(&self, buffer: &Buffer<T>) -> Result<Vec<T>> {
        match buffer {
            Buffer::Device(d) => {
                let mut out = vec![T::from_f64(0.0); d.len()];
                d.copy_to(T::as_bits_mut(&mut out))
                    .map_err(|e| GemmError::Launch(format!("cannot download: {e}")))?;
                Ok(out)
            }
            Buffer::Host(h) => Ok(h.clone()),
        }
    }

    /// What a call with this configuration and algorithm would run on this handle, and why,
    /// or why it would be refused; nothing is launched.
    pub fn choose<T: Element>(&self, config: &GemmConfig, algorithm: &Algorithm) -> Result<Choice> {
        self.resolve::<T>(config, algorithm)
            .map(|(choice, _, _)| choice)
    }

    /// Runs `C = α·op(A)·op(B) + β·C` and returns when C is written (on the GPU: after the
    /// stream's work up to it finished). Returns what ran and why. The one-line form of
    /// [`Gemm::plan`], [`Plan::enqueue`] and [`Gemm::synchronize`]; a program that runs the
    /// same GEMM often plans it once.
    pub fn run<T: Element>(
        &self,
        config: &GemmConfig,
        algorithm: &Algorithm,
        a: &(impl Operand<T> + ?Sized),
        b: &(impl Operand<T> + ?Sized),
        c: &mut (impl OperandMut<T> + ?Sized),
    ) -> Result<Choice> {
        if let Algorithm::Tuned(math) = algorithm {
            if !config.epilogue.is_none() {
                return Err(GemmError::Unsupported {
                    algorithm: algorithm.label(),
                    reason: "tuning times its candidates without a fused epilogue: use \
                             Algorithm::Auto"
                        .into(),
                });
            }
            if config.batch.is_batched() || config.groups != GroupLayout::None {
                return Err(GemmError::Unsupported {
                    algorithm: algorithm.label(),
                    reason: "tuning times one problem, not a strided batch or groups: use \
                             Algorithm::Auto"
                        .into(),
                });
            }
            return self.run_tuned(config, *math, a, b, c);
        }
        self.run_once(config, algorithm, |plan| plan.enqueue(a, b, c))
    }

    /// [`Gemm::run`] with the bias vector of the configuration's fused epilogue
    /// ([`GemmConfig::epilogue`]), in the operands' memory and type.
    pub fn run_with_bias<T: Element>(
        &self,
        config: &GemmConfig,
        algorithm: &Algorithm,
        a: &(impl Operand<T> + ?Sized),
        b: &(impl Operand<T> + ?Sized),
        bias: &(impl Operand<T> + ?Sized),
        c: &mut (impl OperandMut<T> + ?Sized),
    ) -> Result<Choice> {
        self.run_once(config, algorithm, |plan| {
            plan.enqueue_with_bias(a, b, bias, c)
        })
    }

    /// [`Gemm::run`] for a grouped GEMM ([`GemmConfig::contiguous_groups`],
    /// [`GemmConfig::masked_groups`]) with its table: a word per [`GROUP_COLUMNS`] columns of C
    /// (contiguous: each run's group) or per group (masked: its count), in the operands' memory.
    /// One launch computes every group.
    pub fn run_grouped<T: Element>(
        &self,
        config: &GemmConfig,
        algorithm: &Algorithm,
        a: &(impl Operand<T> + ?Sized),
        b: &(impl Operand<T> + ?Sized),
        table: &(impl Operand<u32> + ?Sized),
        c: &mut (impl OperandMut<T> + ?Sized),
    ) -> Result<Choice> {
        self.run_once(config, algorithm, |plan| {
            plan.enqueue_grouped(a, b, table, c)
        })
    }

    /// The table a grouped problem needs against what was given: its length, and the handle's
    /// memory.
    fn check_groups(&self, problem: &Problem, table: Option<&Memory<'_, u32>>) -> Result<()> {
        let needed = match problem.groups {
            GroupLayout::None => None,
            GroupLayout::Contiguous => Some((
                (problem.shape.n / GROUP_COLUMNS) as usize,
                format!(
                    "a contiguous grouped GEMM of n = {} needs a word per {GROUP_COLUMNS} columns",
                    problem.shape.n
                ),
            )),
            GroupLayout::Masked => Some((
                problem.batch.count as usize,
                format!(
                    "a masked grouped GEMM of {} groups needs a count per group",
                    problem.batch.count
                ),
            )),
        };
        let misshaped =
            |given: String, needed: String| GemmError::GroupTableMisshaped { given, needed };
        let (table, (words, needs)) = match (table, needed) {
            (None, None) => return Ok(()),
            (Some(t), None) => return Err(misshaped(
                format!("{} words", location(t).2),
                "the GEMM is not grouped (GemmConfig::contiguous_groups or masked_groups make one)"
                    .into(),
            )),
            (None, Some((_, needs))) => {
                return Err(misshaped(
                    "nothing".into(),
                    format!("{needs}: give it to Gemm::run_grouped or Plan::enqueue_grouped"),
                ))
            }
            (Some(t), Some(needed)) => (t, needed),
        };
        let (found, _, len, _) = location(table);
        if len != words {
            return Err(misshaped(
                format!("{len} words"),
                format!("{needs}: {words}"),
            ));
        }
        let memory = if self.is_gpu() { "device" } else { "host" };
        if found != memory {
            return Err(GemmError::WrongMemory {
                operand: 't',
                found,
                needs: memory,
                backend: self.device(),
            });
        }
        Ok(())
    }

    /// A plan for one set of buffers, `enqueue` on it, and the wait for the stream: the one-line
    /// forms' body.
    fn run_once<T: Element>(
        &self,
        config: &GemmConfig,
        algorithm: &Algorithm,
        enqueue: impl FnOnce(&mut Plan<'_, T>) -> Result<()>,
    ) -> Result<Choice> {
        let mut plan = self.plan_for::<T>(config, algorithm, 1)?;
        enqueue(&mut plan)?;
        self.synchronize().map_err(|e| {
            GemmError::Launch(format!(
                "{} failed on the device ({e})",
                plan.choice().entry
            ))
        })?;
        Ok(plan.choice().clone())
    }

    /// The bias the problem's epilogue needs against what was given: its length, and the
    /// handle's memory.
    fn check_bias<T>(&self, problem: &Problem, bias: Option<&Memory<'_, T>>) -> Result<()> {
        let needed = problem.bias_len();
        let needs = match problem.epilogue.bias() {
            Bias::None => "no bias".to_string(),
            Bias::PerRow => format!("m = {needed} values (one per row of C)"),
            Bias::PerColumn => format!("n = {needed} values (one per column of C)"),
        };
        let misshaped = |given: String| GemmError::BiasMisshaped {
            given,
            needed: needs.clone(),
        };
        let Some(bias) = bias else {
            return match needed {
                0 => Ok(()),
                _ => Err(misshaped("none".into())),
            };
        };
        let (found, _, len, _) = location(bias);
        if needed == 0 || len < needed {
            return Err(misshaped(format!("{len} values")));
        }
        let memory = if self.is_gpu() { "device" } else { "host" };
        if found != memory {
            return Err(GemmError::WrongMemory {
                operand: 'b',
                found,
                needs: memory,
                backend: self.device(),
            });
        }
        Ok(())
    }

    /// Waits until the handle's stream has done everything enqueued on it (a no-op on the
    /// emulator, which runs each GEMM as it is enqueued). A kernel's failure on the device is
    /// reported here.
    pub fn synchronize(&self) -> Result<()> {
        match &self.backend {
            Backend::Gpu(gpu) => gpu.stream().synchronize().map_err(|e| {
                GemmError::Launch(format!("the work on the handle's stream failed: {e}"))
            }),
            Backend::Emulator => Ok(()),
        }
    }

    /// Whether each buffer is in the handle's memory, long enough for its matrix, and aligned
    /// for the kernels' vector loads and TMA (cuBLAS needs only the element's alignment).
    fn check_buffers<T: Element>(
        &self,
        problem: &Problem,
        cublas: bool,
        buffers: [&Memory<'_, T>; 3],
    ) -> Result<()> {
        let b = &problem.batch;
        let strides = [b.stride_a, b.stride_b, b.stride_c];
        for ((stored, memory), stride) in problem.stored().into_iter().zip(buffers).zip(strides) {
            self.check_buffer(stored, memory, cublas)?;
            let (operand, rows, cols, ld) = stored;
            let needed =
                (b.count as u64 - 1) * stride + ld as u64 * (cols as u64 - 1) + rows as u64;
            let len = location(memory).2;
            if b.is_batched() && (len as u64) < needed {
                return Err(GemmError::BatchTooSmall {
                    operand,
                    len,
                    needed,
                    count: b.count,
                    stride,
                });
            }
        }
        Ok(())
    }

    /// One buffer: in the handle's memory, at least `ld·(cols − 1) + rows` elements long, and
    /// 16-byte aligned (or, `element_aligned`, aligned to its element, as cuBLAS needs).
    fn check_buffer<T>(
        &self,
        (operand, rows, cols, ld): (char, u32, u32, u32),
        memory: &Memory<'_, T>,
        element_aligned: bool,
    ) -> Result<()> {
        let needs = if self.is_gpu() { "device" } else { "host" };
        let (found, address, len, element) = location(memory);
        if found != needs {
            return Err(GemmError::WrongMemory {
                operand,
                found,
                needs,
                backend: self.device(),
            });
        }
        let needed = ld as usize * (cols as usize - 1) + rows as usize;
        if len < needed {
            return Err(GemmError::BufferTooSmall {
                operand,
                len,
                needed,
                rows,
                cols,
                ld,
            });
        }
        let align = if element_aligned {
            element
        } else {
            OPERAND_ALIGN
        };
        if address % align != 0 {
            return Err(GemmError::Misaligned {
                operand,
                address,
                align,
            });
        }
        Ok(())
    }

    /// One launch on checked buffers, returning when C is written.
    fn launch_on<T: Element>(
        &self,
        entry: &str,
        launch: &Launch,
        problem: &Problem,
        (a, b, c): (&Memory<'_, T>, &Memory<'_, T>, &mut MemoryMut<'_, T>),
    ) -> Result<()> {
        plan::Ready::new(self, launch.clone(), problem, 1)?.enqueue(
            problem,
            (a, b, c),
            (None, None),
        )?;
        self.synchronize()
            .map_err(|e| GemmError::Launch(format!("{entry} failed on the device ({e})")))
    }

    /// [`Algorithm::Tuned`]: the cached winner, or every candidate timed on these buffers (the
    /// rules: [`crate::tuning`]).
    fn run_tuned<T: Element>(
        &self,
        config: &GemmConfig,
        math: Math,
        a: &(impl Operand<T> + ?Sized),
        b: &(impl Operand<T> + ?Sized),
        c: &mut (impl OperandMut<T> + ?Sized),
    ) -> Result<Choice> {
        let problem = self.problem::<T>(config)?;
        let (a, b) = (a.memory(), b.memory());
        let mut c = c.memory_mut();
        // Every candidate is a kernel of the course: the buffers are checked as for any.
        self.check_buffers(&problem, false, [&a, &b, &c.as_memory()])?;
        // Operands no kernel reads as they lie (`auto` copies them to aligned rows first) leave
        // no candidate to time: auto's choice runs, as on the emulator.
        let copied = auto::choose(&problem, math, self.backend.arch())
            .is_ok_and(|choice| choice.copies.is_some());
        let device = self.tuning_device().filter(|_| !copied);
        let Some(device) = device else {
            let (choice, launch) = self.untuned(&problem, math)?;
            self.launch_on(&choice.entry, &launch, &problem, (&a, &b, &mut c))?;
            return Ok(choice);
        };
        let key = Key::new(device, &problem, math);
        let (cached, warnings) = self.cached_choice(&key, &problem, math);
        if let Some((mut choice, launch)) = cached {
            append_warnings(&mut choice.reason, &warnings);
            self.launch_on(&choice.entry, &launch, &problem, (&a, &b, &mut c))?;
            return Ok(choice);
        }
        let algorithm = Algorithm::Tuned(math);
        let candidates = tuning::candidates(&problem, math, self.backend.arch());
        if candidates.is_empty() {
            // `auto` names the constraint that leaves none (its fallback's plan fails), or
            // that no kernel computes the transposes.
            self.auto_choice(&algorithm, &problem, math)?;
            return Err(GemmError::Unsupported {
                algorithm: algorithm.label(),
                reason: "no kernel of the course supports this shape, type and device".into(),
            });
        }
        // Every candidate's runs write C: with β ≠ 0 its input must come back for the winner.
        let saved = if problem.beta == 0.0 {
            None
        } else {
            Some(self.save_c(&problem, &c)?)
        };
        let mut timed: Vec<Timed> = Vec::new();
        for candidate in candidates {
            let best = tuning::best_ms(&timed);
            let outcome = self
                .plan_choice(&algorithm, candidate, String::new(), &problem)
                .map_err(|e| e.to_string())
                .and_then(|(_, launch)| {
                    self.time_candidate(&candidate, &launch, &problem, (&a, &b, &mut c), best)
                        .map_err(|e| format!("{e:#}"))
                });
            timed.push(Timed { candidate, outcome });
        }
        if let Some(saved) = &saved {
            self.restore_c(saved, &mut c)?;
        }
        let summary = tuning::summary(&timed, &Protocol::DEFAULT);
        let ranking = tuning::ranking(&timed);
        let (Some(entry), Some(&(&winner, _))) = (tuning::entry(&ranking), ranking.first()) else {
            return Err(GemmError::Launch(format!(
                "tuning found no candidate that runs: {summary}"
            )));
        };
        let ranking: Vec<(String, f64)> = ranking
            .iter()
            .map(|(c, m)| (c.label(), m.median_ms))
            .collect();
        let (mut choice, launch) = self.plan_choice(&algorithm, winner, String::new(), &problem)?;
        let stored = self.cache.borrow_mut().store(key, entry);
        choice.reason = format!("tuned now under the {} contract: {summary}; ", math.name());
        match &stored {
            Ok(path) => choice.reason += &format!("stored in {}", path.display()),
            Err(why) => choice.reason += &format!("not stored ({why}); this handle remembers it"),
        }
        append_warnings(&mut choice.reason, &warnings);
        choice.tuning = Some(Tuning::Measured {
            ranking,
            stored: stored.ok(),
        });
        self.launch_on(&choice.entry, &launch, &problem, (&a, &b, &mut c))?;
        Ok(choice)
    }

    /// The device and build the cache keys by: the GPU's; on the emulator, the tests' clock's,
    /// and `None` without one (the emulator is not tuned).
    fn tuning_device(&self) -> Option<tuning::Device> {
        match (&self.backend, &self.clock) {
            (Backend::Gpu(gpu), _) => Some(tuning::Device::new(
                &gpu.device_name,
                gpu.driver_version,
                &gpu.arch,
                tuning::build_id(gpu.ptx_fingerprint),
            )),
            (Backend::Emulator, Some(clock)) => Some(clock.device.clone()),
            (Backend::Emulator, None) => None,
        }
    }

    /// `Tuned` where nothing is timed: `Auto`'s choice, saying why.
    fn untuned(&self, problem: &Problem, math: Math) -> Result<(Choice, Launch)> {
        let (mut choice, launch) = self.auto_choice(&Algorithm::Tuned(math), problem, math)?;
        let why = if self.is_gpu() {
            "A or B is first copied to rows the kernels can read, which leaves no candidate to \
             time"
        } else {
            "on the CPU emulator a time is the emulation's wall time, which ranks nothing on a GPU"
        };
        choice.reason = format!(
            "not tuned: {why}, so `Tuned` runs auto's choice and leaves the tuning cache alone; \
             auto: {}",
            choice.reason
        );
        choice.tuning = Some(Tuning::NotTuned);
        Ok((choice, launch))
    }

    /// `Auto`'s choice, refused under `algorithm`'s name.
    fn auto_choice(
        &self,
        algorithm: &Algorithm,
        problem: &Problem,
        math: Math,
    ) -> Result<(Choice, Launch)> {
        let choice = auto::choose(problem, math, self.backend.arch()).map_err(|e| {
            GemmError::Unsupported {
                algorithm: algorithm.label(),
                reason: format!("{e:#}"),
            }
        })?;
        let reason = choice.reason(problem.dtype);
        let candidate = Candidate {
            variant: choice.variant,
            tile: choice.tile,
        };
        self.plan_choice_reading(algorithm, candidate, reason, problem, choice.copies)
    }

    /// The cache's winner for `key`, planned, if it has a usable one; and the warnings to
    /// report (a file that could not be read, an entry that no longer runs).
    fn cached_choice(
        &self,
        key: &Key,
        problem: &Problem,
        math: Math,
    ) -> (Option<(Choice, Launch)>, Vec<String>) {
        let mut cache = self.cache.borrow_mut();
        let (entry, warning) = cache.lookup(key);
        let mut warnings: Vec<String> = warning.into_iter().collect();
        let Some(entry) = entry else {
            return (None, warnings);
        };
        let algorithm = Algorithm::Tuned(math);
        let planned = tuning::candidate_named(&entry.winner, problem, math, self.backend.arch())
            .and_then(|candidate| {
                self.plan_choice(&algorithm, candidate, String::new(), problem)
                    .map_err(|e| e.to_string())
            });
        match planned {
            Ok((mut choice, launch)) => {
                let file = match cache.path() {
                    Some(path) => format!("the tuning cache {}", path.display()),
                    None => "this handle's memory".into(),
                };
                choice.reason = format!(
                    "from {file}: tuned earlier on this GPU, driver and build under the {} contract ({:.4} ms)",
                    key.math.name(),
                    entry.median_ms
                );
                choice.tuning = Some(Tuning::Cached {
                    median_ms: entry.median_ms,
                });
                (Some((choice, launch)), warnings)
            }
            Err(why) => {
                warnings.push(format!(
                    "the cache's entry for this problem names `{}`, which cannot run it ({why}), so it was tuned again",
                    entry.winner
                ));
                (None, warnings)
            }
        }
    }

    /// Times one candidate on the call's buffers with [`Protocol::DEFAULT`]: CUDA events around
    /// each launch on the GPU (the backend's [`Gpu::time`]); on the emulator, the tests' clock
    /// after each emulated launch.
    fn time_candidate<T: Element>(
        &self,
        candidate: &Candidate,
        launch: &Launch,
        problem: &Problem,
        (a, b, c): (&Memory<'_, T>, &Memory<'_, T>, &mut MemoryMut<'_, T>),
        best_ms: Option<f64>,
    ) -> anyhow::Result<Measurement> {
        let protocol = Protocol::DEFAULT;
        match (&self.backend, a, b, c) {
            (
                Backend::Gpu(gpu),
                Memory::Device { address: a, .. },
                Memory::Device { address: b, .. },
                MemoryMut::Device { address: c, .. },
            ) => {
                // Loading, shared memory, tensor maps, workspace: once, outside the times.
                let prepared = gpu.prepare(launch, problem, (*a, *b, *c))?;
                let once = Timing {
                    warmup: 0,
                    iters: 1,
                    budget_ms: f64::INFINITY,
                    check: false,
                    cold: false,
                    clock: Clock::Events,
                };
                protocol.measure(best_ms, || {
                    Ok(gpu.time(launch.name(), once, &|| prepared.enqueue::<T>())?[0])
                })
            }
            (Backend::Emulator, Memory::Host(a), Memory::Host(b), MemoryMut::Host(c)) => {
                let clock = self
                    .clock
                    .as_ref()
                    .ok_or_else(|| anyhow::anyhow!("the emulator is not tuned"))?;
                let label = candidate.label();
                protocol.measure(best_ms, || {
                    emulator::launch_on(
                        launch,
                        problem,
                        (*a, *b, &[], &[]),
                        (c, &mut [0; 3]),
                        None,
                    )?;
                    Ok((clock.time.borrow_mut())(&label))
                })
            }
            _ => unreachable!("every operand's memory was checked against the backend"),
        }
    }

    /// A copy of the part of C the GEMM covers (`ldc·(n − 1) + m` elements), on the handle's
    /// stream, so that it is taken after the caller's earlier work and before any candidate.
    fn save_c<T: Element>(&self, problem: &Problem, c: &MemoryMut<'_, T>) -> Result<SavedC<T>> {
        let s = problem.shape;
        let span = s.ldc as usize * (s.n as usize - 1) + s.m as usize;
        let failed = |e: cust::error::CudaError| {
            GemmError::Launch(format!("cannot keep C's input while tuning: {e}"))
        };
        match (&self.backend, c) {
            (Backend::Gpu(gpu), MemoryMut::Device { address, .. }) => {
                // SAFETY: C holds at least `span` elements of the handle's context
                // (`check_buffers`), and the copy has exactly `span`.
                unsafe {
                    let c = DeviceSlice::<T::Bits>::from_raw_parts(
                        DevicePointer::from_raw(*address),
                        span,
                    );
                    let mut copy = DeviceBuffer::<T::Bits>::uninitialized(span).map_err(failed)?;
                    c.async_copy_to(&mut copy, gpu.stream()).map_err(failed)?;
                    Ok(SavedC::Device(copy))
                }
            }
            (_, MemoryMut::Host(h)) => Ok(SavedC::Host(h[..span].to_vec())),
            _ => unreachable!("C's memory was checked against the backend"),
        }
    }

    /// Puts C's input back, before the winner's final run.
    fn restore_c<T: Element>(&self, saved: &SavedC<T>, c: &mut MemoryMut<'_, T>) -> Result<()> {
        let failed = |e: cust::error::CudaError| {
            GemmError::Launch(format!("cannot restore C's input after tuning: {e}"))
        };
        match (&self.backend, saved, c) {
            (Backend::Gpu(gpu), SavedC::Device(copy), MemoryMut::Device { address, .. }) => {
                // SAFETY: as in `save_c`, the same span of the same C.
                unsafe {
                    let mut c = DeviceSlice::<T::Bits>::from_raw_parts_mut(
                        DevicePointer::from_raw(*address),
                        copy.len(),
                    );
                    c.async_copy_from(copy, gpu.stream()).map_err(failed)?;
                }
                gpu.stream().synchronize().map_err(failed)
            }
            (_, SavedC::Host(copy), MemoryMut::Host(h)) => {
                h[..copy.len()].copy_from_slice(copy);
                Ok(())
            }
            _ => unreachable!("C's memory was checked against the backend"),
        }
    }

    /// What a call with this configuration and algorithm launches, and the problem it
    /// describes, for the crate's own launchers that enqueue on buffers they made themselves
    /// (the tensor-parallel ranks): the same choice and checks as [`Gemm::run`] before buffers.
    #[cfg_attr(not(feature = "nccl"), allow(dead_code))]
    pub(crate) fn launch_for<T: Element>(
        &self,
        config: &GemmConfig,
        algorithm: &Algorithm,
    ) -> Result<(Choice, Launch, Problem)> {
        self.resolve::<T>(config, algorithm)
    }

    /// The checks that need no buffer, and what to launch.
    fn resolve<T: Element>(
        &self,
        config: &GemmConfig,
        algorithm: &Algorithm,
    ) -> Result<(Choice, Launch, Problem)> {
        let problem = self.problem::<T>(config)?;
        let caller = |reason: &str| reason.to_string();
        let (candidate, reason) = match algorithm {
            Algorithm::Auto(math) => {
                let (choice, launch) = self.auto_choice(algorithm, &problem, *math)?;
                return Ok((choice, launch, problem));
            }
            Algorithm::Tuned(math) => {
                let (choice, launch) = self.tuned_without_timing(&problem, *math)?;
                return Ok((choice, launch, problem));
            }
            Algorithm::Kernel { name, tile } => match registry::find(name) {
                Ok(variant @ Variant::Kernel(_)) => (
                    Candidate {
                        variant,
                        tile: *tile,
                    },
                    caller("named by the caller"),
                ),
                Ok(_) => {
                    return Err(GemmError::UnknownAlgorithm(format!(
                        "`{name}` is not a GPU kernel (the CPU variants, `auto` and `tuned` run \
                         through `host`; here, `Algorithm::Auto`, `Algorithm::Tuned` and \
                         `Algorithm::Cublas`)"
                    )))
                }
                Err(e) => return Err(GemmError::UnknownAlgorithm(format!("{e:#}"))),
            },
            Algorithm::Cublas if problem.groups != GroupLayout::None => {
                return Err(GemmError::Unsupported {
                    algorithm: algorithm.label(),
                    reason: "cuBLAS has no grouped GEMM of these layouts; its yardstick, a call \
                             per group, reads the table on the host (host --groups --compare \
                             cublas)"
                        .into(),
                })
            }
            Algorithm::Cublas => (
                Candidate {
                    variant: Variant::Cublas(CublasMath::Default),
                    tile: None,
                },
                caller("named by the caller"),
            ),
        };
        let (choice, launch) = self.plan_choice(algorithm, candidate, reason, &problem)?;
        Ok((choice, launch, problem))
    }

    /// The problem a configuration describes in `T`, or why it describes none.
    fn problem<T: Element>(&self, config: &GemmConfig) -> Result<Problem> {
        let problem = Problem {
            shape: config.shape(),
            transposes: Transposes::new(config.transa, config.transb),
            dtype: T::DTYPE,
            alpha: config.alpha,
            beta: config.beta,
            init: Init::Random,
            seed: 0,
            epilogue: config.epilogue,
            batch: config.batch,
            groups: config.groups,
        };
        problem
            .validate()
            .map_err(|e| GemmError::InvalidConfig(format!("{e:#}")))?;
        Ok(problem)
    }

    /// What to launch for a kernel (or cuBLAS) at a tile, checked against the problem and the
    /// device, and the [`Choice`] that reports it with `reason`; refusals name `algorithm`.
    fn plan_choice(
        &self,
        algorithm: &Algorithm,
        candidate: Candidate,
        reason: String,
        problem: &Problem,
    ) -> Result<(Choice, Launch)> {
        self.plan_choice_reading(algorithm, candidate, reason, problem, None)
    }

    /// [`Gemm::plan_choice`], the kernel reading aligned copies of A and B where
    /// `copies` (as `auto` plans them when no kernel reads A and B as they lie).
    fn plan_choice_reading(
        &self,
        algorithm: &Algorithm,
        Candidate { variant, tile }: Candidate,
        reason: String,
        problem: &Problem,
        copies: Option<Copies>,
    ) -> Result<(Choice, Launch)> {
        let unsupported = |reason: String| GemmError::Unsupported {
            algorithm: algorithm.label(),
            reason,
        };
        let arch = self.backend.arch();
        let launch = match copies {
            Some(copies) => run::plan_reading_copies(variant, tile, problem, copies, arch),
            None => run::plan(variant, tile, problem, arch),
        }
        .map_err(|e| unsupported(format!("{e:#}")))?;
        let device = match &self.backend {
            Backend::Gpu(gpu) => Some((
                gpu.arch_number(),
                format!("{} ({})", gpu.device_name, gpu.arch),
            )),
            Backend::Emulator => None,
        };
        check_device(&variant, &launch, device).map_err(|e| match e {
            GemmError::Unsupported { reason, .. } => unsupported(reason),
            e => e,
        })?;
        let label = registry::label(variant, tile).map_err(|e| unsupported(format!("{e:#}")))?;
        let choice = Choice {
            variant: label,
            entry: launch.name().to_string(),
            arithmetic: variant.arithmetic(),
            reason,
            device: self.device(),
            tuning: None,
        };
        Ok((choice, launch))
    }

    /// What `Tuned` runs without timing anything ([`Gemm::choose`]): the cached winner, or
    /// else `Auto`'s choice, saying that a run would tune first.
    fn tuned_without_timing(&self, problem: &Problem, math: Math) -> Result<(Choice, Launch)> {
        let Some(device) = self.tuning_device() else {
            return self.untuned(problem, math);
        };
        let (cached, warnings) =
            self.cached_choice(&Key::new(device, problem, math), problem, math);
        let (mut choice, launch) = match cached {
            Some(known) => known,
            None => {
                let algorithm = Algorithm::Tuned(math);
                let (mut choice, launch) = self.auto_choice(&algorithm, problem, math)?;
                let count = tuning::candidates(problem, math, self.backend.arch()).len();
                choice.reason = format!(
                    "not tuned yet: a run would time {count} candidate configurations on its \
                     buffers and run the fastest; until then, auto's choice: {}",
                    choice.reason
                );
                choice.tuning = Some(Tuning::NotTuned);
                (choice, launch)
            }
        };
        append_warnings(&mut choice.reason, &warnings);
        Ok((choice, launch))
    }
}

/// The cache's warnings, after a choice's reason.
fn append_warnings(reason: &mut String, warnings: &[String]) {
    for warning in warnings {
        *reason += &format!("; warning: {warning}");
    }
}

/// Whether the device (compute capability and name; `None`: the emulator, which runs every
/// build) can run the launch, by `auto`'s rule ([`auto::runs_on`]); cuBLAS needs a GPU.
fn check_device(variant: &Variant, launch: &Launch, device: Option<(u32, String)>) -> Result<()> {
    match (launch, device) {
        (Launch::Cublas(_), None) => Err(GemmError::Unsupported {
            algorithm: "cublas".into(),
            reason: "cuBLAS runs on a GPU only".into(),
        }),
        (Launch::Kernel { target, entry, .. }, Some((arch, device)))
            if !auto::runs_on(variant, Some(arch)) =>
        {
            Err(GemmError::NeedsArch {
                kernel: entry.clone(),
                needs: match target {
                    Target::Sm90a => "sm_90a",
                    Target::Portable => "sm_80 or newer",
                },
                device,
            })
        }
        _ => Ok(()),
    }
}

/// (memory kind, address, length, the element's alignment) of an operand.
fn location<T>(m: &Memory<'_, T>) -> (&'static str, u64, usize, u64) {
    let element = std::mem::align_of::<T>() as u64;
    match m {
        Memory::Device { address, len } => ("device", *address, *len, element),
        Memory::Host(h) => ("host", h.as_ptr() as u64, h.len(), element),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels_gpu::gemm::Dtype;

    #[test]
    fn a_hopper_kernel_on_another_gpu_is_refused_with_both_architectures() {
        let p = Problem {
            shape: GemmConfig::new(256, 256, 256).shape(),
            transposes: Transposes::NN,
            dtype: Dtype::Bf16,
            alpha: 1.0,
            beta: 0.0,
            init: Init::Random,
            seed: 0,
            epilogue: kernels_gpu::fused::Epilogue::NONE,
            batch: kernels_gpu::gemm::Batch::ONE,
            groups: kernels_gpu::gemm::GroupLayout::None,
        };
        let v = registry::find("wgmma-16bit").unwrap();
        let launch = run::plan(v, None, &p, Some(80)).unwrap();
        let a100 = Some((80, "NVIDIA A100-SXM4-80GB (sm_80)".to_string()));
        let e = check_device(&v, &launch, a100).unwrap_err();
        assert!(matches!(e, GemmError::NeedsArch { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "`gemm_wgmma_16bit_c1_bf16` needs sm_90a (Hopper's wgmma: H100, H200); this device is NVIDIA A100-SXM4-80GB (sm_80)"
        );
        let h100 = Some((90, "NVIDIA H100 80GB HBM3 (sm_90)".to_string()));
        assert!(check_device(&v, &launch, h100).is_ok());
        assert!(
            check_device(&v, &launch, None).is_ok(),
            "the emulator runs every build"
        );
        let best = registry::find("best").unwrap();
        let portable = run::plan(
            best,
            None,
            &Problem {
                dtype: Dtype::F32,
                ..p
            },
            Some(80),
        )
        .unwrap();
        assert!(check_device(&best, &portable, Some((80, "A100".into()))).is_ok());
    }
}
