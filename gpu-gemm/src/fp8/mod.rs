//! FP8 (e4m3) GEMM on Hopper, the host side: `D = alpha·op(A)·op(B) + beta·C` in cuBLASLt's
//! FP8 layout, "TN".
//!
//! - A is stored k×m column-major (`lda ≥ k`), so op(A) = Aᵀ is m×k; B is stored k×n
//!   column-major (`ldb ≥ k`). Both are e4m3, one byte each (or B e5m2, as gradients are in
//!   training's backward pass: `Dtype::E4m3E5m2`): the tensor cores' FP8 `wgmma` reads both
//!   operands K-major, which is this layout.
//! - C, updated in place into D, is m×n column-major bf16 (`ldc ≥ m`); alpha and beta are f32.
//! - An element's true value is its scale times its e4m3 value: e4m3's 3 mantissa bits and
//!   range of ±448 cannot hold data as given, so every operand is quantised with scales,
//!   per tensor or per block ([`quantize`]).
//!
//! The modules: [`e4m3`] and [`e5m2`], the conversions; [`quantize`], the operands, their
//! scales and their dequantised values; [`reference`](mod@reference), the f64 reference and the check; [`cublaslt`],
//! cuBLASLt's FP8 GEMM, the yardstick; [`grouped`], a mixture-of-experts layer's grouped GEMM.
pub mod cublaslt;
pub mod e4m3;
pub mod e5m2;
pub mod grouped;
pub mod probe;
pub mod quantize;
pub mod reference;
pub mod run;
