//! The course's GEMM kernels as a library, and the pipeline that checks and times them.
//!
//! **For a program that wants a GEMM**: [`Gemm`] runs `C = α·op(A)·op(B) + β·C` on buffers the caller
//! owns, on the GPU (through `cust`) or on the CPU emulator, with an [`Algorithm`]: `Auto` under
//! a precision contract ([`Math`]), or a named kernel and tile. Errors are [`GemmError`]s; nothing
//! is printed.
//!
//! **For the course**: the pipeline reads top to bottom in [`run`]: a plain description of a run
//! ([`problem`], [`registry`]) → what to launch ([`run::plan`], [`auto`], [`launch`]) → upload
//! and launch ([`gpu`] or [`emulator`]), or compute on the host ([`cpu`]) → verify ([`verify`])
//! → report. The `host` command line and its experiments are a layer on it.
//!
//! The modules form layers, each importing only those below it (a test in `tests/` checks
//! that no import circle comes back): `problem`, `progress`, `cuda_driver`, `timing` → `verify`,
//! `cpu` → `registry` → `auto`, `launch` → `tuning`, `gpu`, `emulator` → `run` → `api` → `parallel`.
#![deny(missing_docs)]
pub mod api;
pub mod auto;
pub mod cpu;
pub mod cublaslt;
pub mod cuda_driver;
pub mod emulator;
pub mod fp8;
pub mod gpu;
pub mod kernel_clock;
pub mod launch;
pub mod parallel;
pub mod problem;
pub mod progress;
pub mod registry;
pub mod run;
pub mod timing;
pub mod tuning;
pub mod verify;

pub use api::{
    Activation, Algorithm, Amax, Batch, Bias, Buffer, Choice, Element, Epilogue, Fp8, Gemm,
    GemmConfig, GemmError, Graph, GroupLayout, Operand, OperandMut, Plan, Table, Transpose, Tuning,
    GROUP_COLUMNS,
};
pub use registry::Math;

/// The 16-bit element types, `half::bf16` and `half::f16`, for callers that name them.
pub use half;

pub mod embedded;
