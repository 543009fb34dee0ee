//! The host side of the course: choose a variant, make inputs, run it on the GPU (through
//! `cust`) or on the CPU emulator, or run a CPU variant ([`cpu`]), verify against an f64
//! `ndarray` product, time, report.
//!
//! The pipeline reads top to bottom in [`run`]: parse ([`cli`]) → inputs ([`problem`]) →
//! upload and launch ([`gpu`] or [`emulator`]), or compute on the host ([`cpu`]) → verify
//! ([`verify`]) → report.
//! [`experiments`] builds the source documents' experiments on that pipeline.
pub mod auto;
pub mod cli;
pub mod cpu;
pub mod cuda_driver;
pub mod emulator;
pub mod experiments;
pub mod gpu;
pub mod problem;
pub mod progress;
pub mod registry;
pub mod run;
pub mod verify;

/// The host's 16-bit element types, `half::bf16` and `half::f16` (their [`problem::Scalar`]
/// impls are here), for callers of the generic pipeline that name them.
pub use half;

/// The PTX modules built by `build.rs` for each embedded architecture.
pub mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_ptx.rs"));
}
