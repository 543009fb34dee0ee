//! The option values the command line and the experiments share: element types, counts and
//! sizes, each refused with a reason when it makes no sense. The run's own types (the backend,
//! the contract of `auto`, how inputs are filled) are the library's, parsed by clap directly.
use clap::ValueEnum;
use kernels_gpu::gemm::Dtype;

/// A matrix dimension (`--size`, `--m`, …): 1 or more; 0 is refused rather than run as an
/// empty problem.
pub fn positive_size(text: &str) -> Result<u32, String> {
    match text.parse::<u32>() {
        Ok(0) => Err("a matrix dimension is at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("`{text}` is not a dimension: {e}")),
    }
}

/// A number of runs that must happen at least once (`--iters`): 0 is refused, not rounded up.
pub fn positive_count(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("at least 1 timed run (use --no-check to skip the check, not the run)".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("`{text}` is not a count: {e}")),
    }
}

/// A positive, finite amount (`--budget-ms`, `--cpu-time-limit`).
pub fn positive_amount(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        Ok(_) => Err("must be a positive number".into()),
        Err(e) => Err(format!("`{text}` is not a number: {e}")),
    }
}

/// `--dtype`: the element type of A, B and C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DtypeArg {
    F32,
    F64,
    /// bfloat16 (A, B, C; f32 accumulation, alpha and beta in f32): the 16-bit kernels, sm_90a
    Bf16,
    /// IEEE half precision (A, B, C; f32 accumulation, alpha and beta in f32): the 16-bit kernels, sm_90a
    F16,
    /// OCP FP8 E4M3 A and B with f32 scales (--scaling), bf16 C, TN (--transa t): the FP8 kernels and cuBLASLt, sm_90a
    E4m3,
    /// e4m3 A and OCP FP8 E5M2 B (the gradients of training's backward pass), per-tensor scales, bf16 C, TN: wgmma-fp8 and cuBLASLt, sm_90a
    #[value(name = "e4m3-e5m2")]
    E4m3E5m2,
}

impl DtypeArg {
    pub fn dtype(self) -> Dtype {
        match self {
            DtypeArg::F32 => Dtype::F32,
            DtypeArg::F64 => Dtype::F64,
            DtypeArg::Bf16 => Dtype::Bf16,
            DtypeArg::F16 => Dtype::F16,
            DtypeArg::E4m3 => Dtype::E4m3,
            DtypeArg::E4m3E5m2 => Dtype::E4m3E5m2,
        }
    }
}

/// The `--dtype` of the experiments measured in f32 and f64 only (progression, precision): the
/// 16-bit types are refused there rather than quietly run as f32. `experiment auto` and
/// `experiment hopper` measure them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExperimentDtypeArg {
    F32,
    F64,
}

impl ExperimentDtypeArg {
    pub fn dtype(self) -> Dtype {
        match self {
            ExperimentDtypeArg::F32 => Dtype::F32,
            ExperimentDtypeArg::F64 => Dtype::F64,
        }
    }
}
