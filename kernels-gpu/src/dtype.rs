//! The element types a launch computes in. A leaf of the crate: the device layer's 16-bit types
//! name their `Dtype`, and `gemm` (which re-exports it) builds on that layer, so the enum lives
//! below both rather than in `gemm`, where it made an import circle.

/// The element type of a launch: of A, B and C. The 16-bit types accumulate in f32 and take
/// alpha and beta as f32 (what `cublasGemmEx` with `CUBLAS_COMPUTE_32F` and torch do).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    F32,
    F64,
    /// bfloat16: 8 bits of exponent, 7 explicit bits of mantissa.
    Bf16,
    /// IEEE binary16: 5 bits of exponent, 10 explicit bits of mantissa.
    F16,
    /// OCP FP8 E4M3 for A and B (4 bits of exponent, 3 of mantissa, [`crate::device::fp8`]),
    /// with f32 scales; C is bf16 ([`crate::gemm::Fp8GemmArgs`]).
    E4m3,
    /// E4M3 for A and E5M2 for B (5 bits of exponent, 2 of mantissa): FP8 training's backward
    /// pass, whose gradients need e5m2's range; otherwise as [`Dtype::E4m3`].
    E4m3E5m2,
}

impl Dtype {
    pub const fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
            Dtype::Bf16 => "bf16",
            Dtype::F16 => "f16",
            Dtype::E4m3 => "e4m3",
            Dtype::E4m3E5m2 => "e4m3_e5m2",
        }
    }

    pub const fn bytes(self) -> u32 {
        match self {
            Dtype::F32 => 4,
            Dtype::F64 => 8,
            Dtype::Bf16 | Dtype::F16 => 2,
            Dtype::E4m3 | Dtype::E4m3E5m2 => 1,
        }
    }

    /// The type of C: bf16 for FP8 (as cuBLASLt's FP8 GEMMs in training), the type itself
    /// otherwise.
    pub const fn output(self) -> Dtype {
        match self {
            Dtype::E4m3 | Dtype::E4m3E5m2 => Dtype::Bf16,
            d => d,
        }
    }

    /// Whether it is a 16-bit type (accumulated in f32).
    pub const fn is_16bit(self) -> bool {
        matches!(self, Dtype::Bf16 | Dtype::F16)
    }

    /// Whether A and B are 8-bit (with scales, C bf16).
    pub const fn is_fp8(self) -> bool {
        matches!(self, Dtype::E4m3 | Dtype::E4m3E5m2)
    }
}
