//! The course's command line, a layer on the `gpu-gemm` library: [`cli`] turns the options into
//! a plain description of a run (a `gpu_gemm::problem::Problem`, variants, a timing) for
//! `gpu_gemm::run`; [`experiments`] builds the source documents' experiments on that pipeline.
//! [`args`] holds the option values both share; [`tuned`] resolves `--variant tuned` through the
//! library's call. Only `main` reads [`cli`].
pub mod args;
pub mod cli;
pub mod experiments;
pub mod parallel;
pub mod tuned;
