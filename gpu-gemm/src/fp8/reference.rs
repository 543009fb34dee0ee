//! The FP8 check: the kernel's D against `alpha·deq(op(A))·deq(B) + beta·C` in f64, through
//! [`crate::verify`]'s reference and metric, with a tolerance for FP8's arithmetic.
//!
//! The reference multiplies the dequantised operands, the values the kernel multiplies, so
//! the check measures the kernel and not quantisation (which the precision experiment
//! measures against [`super::quantize::Fp8Inputs`]'s sources). The metric is `verify`'s:
//! the relative Frobenius error (‖R‖ floored at the size of a random-sign sum) and the
//! largest element error against `tolerance·max|R|`, NaN and padding counts.
use super::quantize::{Fp8Inputs, Fp8Problem, Quantized};
use crate::problem::{Init, Inputs, Matrix, Problem, Transposes};
use crate::verify::{check_against, unit_roundoff, AmaxCheck, Check, Reference};
use kernels_gpu::gemm::{Arithmetic, Dtype};
use kernels_gpu::registry::Shape;

/// The problem `verify` computes and checks the reference of: op(A) as an m×k matrix
/// (`lda = m`), dtype bf16, C's type.
fn f64_problem(p: &Fp8Problem) -> Problem {
    Problem {
        shape: Shape {
            lda: p.shape.m,
            ..p.shape
        },
        dtype: Dtype::Bf16,
        alpha: p.alpha as f64,
        beta: p.beta as f64,
        init: Init::Random,
        seed: p.seed,
        epilogue: p.epilogue,
        transposes: Transposes::NN,
        batch: kernels_gpu::gemm::Batch::ONE,
        groups: kernels_gpu::gemm::GroupLayout::None,
    }
}

/// [`f64_problem`] and its inputs: op(A) and B dequantised, C and the bias in f64.
fn as_f64_problem(p: &Fp8Problem, (a, b, c, bias): Operands<'_>) -> (Problem, Inputs<f64>) {
    let (s, problem) = (p.shape, f64_problem(p));
    let inputs = Inputs {
        a: Matrix::from_fn(s.m, s.k, s.m, f64::NAN, |i, q| a.dequantized(q, i)),
        b: b.dequantize(),
        c: Matrix {
            rows: c.rows,
            cols: c.cols,
            ld: c.ld,
            data: c.data.iter().map(|v| v.to_f64()).collect(),
        },
        bias: bias.iter().map(|v| v.to_f64()).collect(),
        groups: Vec::new(),
    };
    (problem, inputs)
}

/// What the reference multiplies and adds: op(A), B, C and the epilogue's bias (empty without
/// one).
pub type Operands<'a> = (
    &'a Quantized,
    &'a Quantized,
    &'a Matrix<half::bf16>,
    &'a [half::bf16],
);

/// `act(alpha·deq(op(A))·deq(B) + beta·C0 + bias)` in f64 (the epilogue's parts that `p` has):
/// all of D, or `verify`'s sample of rows and columns above
/// [`crate::verify::FULL_REFERENCE_FLOPS`].
pub fn reference(p: &Fp8Problem, inputs: &Fp8Inputs) -> Reference {
    reference_of(p, (&inputs.a, &inputs.b, &inputs.c, &inputs.bias))
}

/// [`reference()`] of the operands given (a group's, cut out of a grouped GEMM's).
pub fn reference_of(p: &Fp8Problem, operands: Operands<'_>) -> Reference {
    let (problem, x) = as_f64_problem(p, operands);
    Reference::compute(&problem, &x)
}

/// The tensor cores' own accumulation error over `window` products, `v_tc`. Measured on the
/// H100 (`super::probe`, `docs/hopper-isa-notes.md`): each FP8 `wgmma` aligns its 32 products
/// and the accumulator to the largest of them and keeps 13 bits below its leading bit, the rest
/// truncated toward zero. A term's cut is at most 2⁻¹³ of the largest term, and its sign is
/// the term's: on data of random signs the cuts add up like a random walk, about
/// `2⁻¹⁴·√window` of the sum (`wgmma-fp8` at k = 8192, never promoting: 2.5·10⁻³ against
/// 1.7·10⁻³ for a kernel that promotes, about 1.8·10⁻³ from the accumulation, a third of this
/// bound). A kernel that adds the tensor cores' partial sums into f32 registers every
/// [`PROMOTION`] products (`wgmma-fp8-block`, cuBLASLt's default) has `window = 128`; one that
/// never does (`wgmma-fp8`, cuBLASLt's fast accumulation), `window = k`.
pub fn tensor_core_accumulation(window: u32) -> f64 {
    2f64.powi(-14) * (window as f64).sqrt()
}

/// Products the tensor cores sum before a promoting kernel adds them into f32: 128, one
/// k-block of the block scaling, where a block-scaled kernel must promote anyway to apply the
/// block's scales.
pub const PROMOTION: u32 = 128;

/// The tolerance on the relative Frobenius error: `4·(u_out + v_tc + u_acc·(√k + 4))`, with
/// `promotes` saying whether the kernel promotes every [`PROMOTION`] products.
///
/// - `u_out = 2⁻⁸`: D is rounded once to bf16, at most 2⁻⁸ of each element.
/// - `v_tc` ([`tensor_core_accumulation`]): 7·10⁻⁴ for a promoting kernel; for one that never
///   promotes it grows with √k, 5.5·10⁻³ at k = 8192 and 7.8·10⁻³ at 16384.
/// - `u_acc = 2⁻²⁴`: the f32 sums of promoted partial sums and the epilogue, as in `verify`.
///   The products themselves are exact (4 significant bits by 4 fit an f32), and so are the
///   scales' products with them up to one f32 rounding each, counted in `u_acc`.
/// - 4: `verify`'s margin. The tolerance is then about 1.9·10⁻² for a promoting kernel,
///   against `verify`'s 1.6·10⁻² for a bf16 GEMM.
pub fn tolerance(k: u32, promotes: bool) -> f64 {
    let u_acc = unit_roundoff(Dtype::F32);
    let window = if promotes { k.min(PROMOTION) } else { k };
    4.0 * (unit_roundoff(Dtype::Bf16)
        + tensor_core_accumulation(window)
        + u_acc * ((k as f64).sqrt() + 4.0))
}

/// The outcome of [`check`]: `verify`'s [`Check`] held to the FP8 [`tolerance`].
#[derive(Clone, Debug, PartialEq)]
pub struct Fp8Check {
    /// `verify`'s errors and counts; its `tolerance` and `max_element_bound` are the FP8
    /// ones (its `terms` still describe bf16's, which [`Fp8Check::summary`] does not print).
    pub check: Check,
}

impl Fp8Check {
    /// Whether D is finite, its padding untouched, and both errors within the FP8 bounds.
    pub fn passed(&self) -> bool {
        self.check.passed()
    }

    /// The largest element error relative to the largest reference element.
    pub fn max_element_relative(&self) -> f64 {
        self.check.max_element_relative()
    }

    /// One line: the errors, their bounds, how the tolerance is made, PASS or FAIL.
    pub fn summary(&self) -> String {
        let c = &self.check;
        let mut s = format!(
            "relative Frobenius error {:.2e} (tolerance {:.1e} = 4·(2^-8 + 2^-14·√window + 2^-24·(√k + 4)): D rounded once to bf16, the tensor cores' 13-bit FP8 sums over a window of k, {PROMOTION} when promoted to f32), max element error {:.2e} (bound {:.1e}), {} f64 reference of the dequantised operands: {}",
            c.relative_frobenius,
            c.tolerance,
            c.max_element_error,
            c.max_element_bound,
            c.coverage,
            if c.passed() { "PASS" } else { "FAIL" }
        );
        if c.non_finite > 0 {
            s += &format!("; {} elements of D are NaN or infinite", c.non_finite);
        }
        if c.padding_changed > 0 {
            s += &format!(
                "; {} padding elements of D (rows >= m) were overwritten",
                c.padding_changed
            );
        }
        s
    }
}

/// The amax epilogue's `[amax, scale]` against D (`result`): [`crate::verify::check_amax`],
/// exact.
pub fn check_amax(p: &Fp8Problem, result: &[half::bf16], amax: [f32; 2]) -> AmaxCheck {
    crate::verify::check_amax(&f64_problem(p), result, amax)
}

/// Compares the kernel's D (`result`, padding included) with `reference`; `uploaded_c` is C
/// as uploaded (its padding must come back unchanged); `promotes`: whether the kernel adds the
/// tensor cores' sums into f32 every [`PROMOTION`] products ([`tolerance`]).
pub fn check(
    p: &Fp8Problem,
    reference: &Reference,
    uploaded_c: &[half::bf16],
    result: &[half::bf16],
    promotes: bool,
) -> Fp8Check {
    let mut check = check_against(
        &f64_problem(p),
        Arithmetic::Native,
        reference,
        uploaded_c,
        result,
    );
    // verify's element bound is its tolerance times a size of R: the same size, FP8's factor.
    let tolerance = tolerance(p.shape.k, promotes);
    check.max_element_bound *= tolerance / check.tolerance;
    check.tolerance = tolerance;
    Fp8Check { check }
}

#[cfg(test)]
mod tests {
    use super::super::e4m3;
    use super::super::quantize::Scaling;
    use super::*;

    fn problem(m: u32, n: u32, k: u32, scaling: Scaling) -> Fp8Problem {
        Fp8Problem {
            b_format: crate::fp8::quantize::Format::E4m3,
            shape: Shape {
                m,
                n,
                k,
                lda: k + 16,
                ldb: k,
                ldc: m + 3,
            },
            alpha: 0.75,
            beta: 0.5,
            scaling,
            init: Init::Random,
            seed: 3,
            outliers: true,
            epilogue: kernels_gpu::fused::Epilogue::NONE,
            groups: crate::launch::Fp8Groups::NONE,
        }
    }

    /// D as a correct FP8 kernel computes it: e4m3 products summed in f32 per k-block of
    /// 128, each block's sum times its scales added into an f32 accumulator, then
    /// `alpha·acc + beta·C` in f32 rounded once to bf16. With `truncate_to_bits`, each
    /// block's running sum is truncated to that many bits after the leading one, as the
    /// tensor core's accumulation does before the kernel promotes it.
    fn modelled(p: &Fp8Problem, x: &Fp8Inputs, truncate_to_bits: Option<i32>) -> Vec<half::bf16> {
        let s = p.shape;
        let mut d = x.c.data.clone();
        for j in 0..s.n {
            for i in 0..s.m {
                let mut acc = 0f32;
                for kb in (0..s.k).step_by(128) {
                    let mut partial = 0f32;
                    for q in kb..(kb + 128).min(s.k) {
                        let a = e4m3::to_f64(x.a.codes.at(q, i)) as f32;
                        let b = e4m3::to_f64(x.b.codes.at(q, j)) as f32;
                        partial = a.mul_add(b, partial);
                        if let (Some(bits), true) = (truncate_to_bits, partial != 0.0) {
                            let ulp = 2f32.powi(partial.abs().log2().floor() as i32 - bits);
                            partial = (partial / ulp).trunc() * ulp;
                        }
                    }
                    let scale =
                        x.a.scales[x.a.scale_index(kb, i)] * x.b.scales[x.b.scale_index(kb, j)];
                    acc = partial.mul_add(scale, acc);
                }
                let c0 = x.c.at(i, j).to_f32();
                d[(i + j * s.ldc) as usize] =
                    half::bf16::from_f32(p.alpha.mul_add(acc, p.beta * c0));
            }
        }
        d
    }

    #[test]
    fn a_correct_fp8_kernel_passes_for_both_scalings() {
        for scaling in [Scaling::PerTensor, Scaling::Block] {
            for (m, n, k) in [(1, 1, 1), (16, 8, 100), (40, 24, 1024)] {
                let p = problem(m, n, k, scaling);
                let x = Fp8Inputs::generate(&p);
                let r = reference(&p, &x);
                let c = check(&p, &r, &x.c.data, &modelled(&p, &x, None), true);
                assert!(c.passed(), "{scaling:?} {m}x{n}x{k}: {}", c.summary());
                // What is left is bf16's rounding of D.
                assert!(
                    c.check.relative_frobenius < 2f64.powi(-8),
                    "{}",
                    c.summary()
                );
            }
        }
    }

    #[test]
    fn wrong_scales_fail_and_the_tensor_cores_truncation_passes() {
        let p = problem(32, 16, 4096, Scaling::Block);
        let x = Fp8Inputs::generate(&p);
        let r = reference(&p, &x);
        // One k-block's scale of one row of op(A) applied to its neighbour's: that row fails.
        let mut wrong = x.a.clone();
        wrong.scales.swap(0, 1);
        let y = Fp8Inputs {
            a: wrong,
            ..Fp8Inputs::generate(&p)
        };
        let c = check(&p, &r, &x.c.data, &modelled(&p, &y, None), true);
        assert!(!c.passed(), "{}", c.summary());
        // The tensor core's 13-bit sums, promoted every 128 products.
        let c = check(&p, &r, &x.c.data, &modelled(&p, &x, Some(13)), true);
        assert!(c.passed(), "promoted every 128: {}", c.summary());
        let summary = c.summary();
        assert!(summary.contains("2^-14·√window"), "{summary}");
    }

    #[test]
    fn the_tolerance_is_the_bf16_rounding_plus_the_tensor_core_term() {
        let u = 2f64.powi(-24);
        assert_eq!(
            tolerance(1, true),
            4.0 * (2f64.powi(-8) + 2f64.powi(-14) + u * 5.0)
        );
        // Promoting: the window is 128 products whatever k; never promoting: all of k.
        let promoted = 4.0 * (2f64.powi(-8) + 2f64.powi(-14) * 128f64.sqrt() + u * 68.0);
        assert_eq!(tolerance(4096, true), promoted);
        assert_eq!(
            tolerance(4096, false),
            4.0 * (2f64.powi(-8) + 2f64.powi(-8) + u * 68.0)
        );
        assert!((tolerance(4096, true) - 1.85e-2).abs() < 1e-3);
    }
}
