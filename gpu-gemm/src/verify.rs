//! The check: the kernel's C against `alpha·op(A)·op(B) + beta·C0` computed in f64 with
//! `ndarray`.
//!
//! - Every element of C (m×n) must be finite: a NaN means an element was never written (C is
//!   NaN-poisoned when beta = 0) or the kernel read padding/garbage. The padding rows of C
//!   (ldc > m) must come back bit-for-bit as they were uploaded.
//! - The relative Frobenius error `‖C - R‖ / ‖R‖` (‖R‖ floored at the size random-sign sums
//!   of k products would have, for a C that cancels to almost nothing) must stay under a
//!   tolerance derived from the
//!   variant's arithmetic and element type ([`tolerance`]): the rounding of its inputs (none for
//!   FP32/FP64 fused multiply-adds, 2⁻¹⁰ for TF32, about 2⁻²⁰ for 3xTF32), the one rounding of
//!   a 16-bit output (2⁻⁸ for bf16, 2⁻¹¹ for f16), plus the rounding of a length-k sum, which
//!   grows with √k. The largest element error must stay under `tolerance·max|R|` too.
//! - The reference is computed from the inputs as the kernel received them: in bf16 and f16
//!   they are rounded to the type when they are made ([`crate::problem::Inputs`]), so the
//!   inputs' rounding is not counted against the kernel.
//! - Up to [`FULL_REFERENCE_FLOPS`] the whole product is checked (ndarray's multithreaded
//!   matrixmultiply); above it, a random sample of 64 full rows and 64 full columns of C
//!   (seeded, so a failure reproduces). The report says which.
use crate::problem::{
    Activation, Bias, Epilogue, GroupColumns, GroupLayout, Inputs, Matrix, Problem, Scalar,
    Transpose, DISTINCT_MEMBERS,
};
use crate::progress::{dims, Step};
use kernels_gpu::gemm::{Arithmetic, Dtype};
use kernels_gpu::registry::Shape;
use ndarray::{Array2, ArrayView2, ShapeBuilder};
use rand::seq::index::sample;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// m·n·k up to which the full f64 reference is computed (4096³ = 2^36 takes ~1 s on 16 cores).
pub const FULL_REFERENCE_FLOPS: f64 = (1u64 << 37) as f64;
const SAMPLED_LINES: usize = 64;

/// The outcome of [`check`]: the errors, the bounds they are held to, and the sanity counts.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// `‖C − R‖ / ‖R‖` over the checked elements, ‖R‖ floored as the module documentation says;
    /// +∞ when one of them is not finite.
    pub relative_frobenius: f64,
    /// `max|C − R|` over the checked elements; +∞ when one of them is not finite.
    pub max_element_error: f64,
    /// `tolerance · max(max|R|, |alpha|·√k·max|A|·max|B| + |beta|·max|C0|)`: the largest element
    /// error that passes. The second term is the typical size of a sum of k products of random
    /// sign: at small k one element's input rounding can exceed `tolerance·max|R|` when the
    /// products cancel, though the kernel is right.
    pub max_element_bound: f64,
    /// The largest |R| over the checked elements of the reference.
    pub max_reference: f64,
    /// The bound on `relative_frobenius`: [`tolerance`] of the arithmetic, the type and k.
    pub tolerance: f64,
    /// What the tolerance was derived from: the arithmetic, the type and k, and its terms.
    pub terms: ToleranceTerms,
    /// Elements of C (all m×n, also when the reference is sampled) that are NaN or infinite:
    /// never written, or computed from NaN padding.
    pub non_finite: usize,
    /// Padding elements of C (rows `m..ldc`) whose bits differ from those uploaded.
    pub padding_changed: usize,
    /// "full" or "sample of 64 rows + 64 columns".
    pub coverage: String,
    /// For a 16-bit C: `‖C − round(R)‖` relative as `relative_frobenius`, with R rounded to C's
    /// type: the error beyond C's one unavoidable rounding (0 for a kernel whose every element
    /// is the correctly rounded product). The output's rounding sets a floor under
    /// `relative_frobenius` that hides how accurately two kernels accumulate; this does not.
    pub beyond_rounding: Option<f64>,
    /// With the amax epilogue: the amax and scale the run left, against C's ([`check_amax`]).
    pub amax: Option<AmaxCheck>,
}

/// The amax epilogue's check: the amax is the largest |D| before C's rounding, and rounding is
/// monotonic, so C's largest |element| (every member's m×n) is exactly the amax rounded to C's
/// type; and the scale is exactly [`kernels_gpu::fused::e4m3_scale`] of the amax (one f32
/// division, correctly rounded on both sides). Exact equalities: an amax gathered from part of
/// D, from values past its edge, or left from an earlier GEMM fails them, and C itself is
/// checked against the reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AmaxCheck {
    /// The amax the run left.
    pub amax: f32,
    /// The scale the run left.
    pub scale: f32,
    /// The amax rounded to C's type.
    pub amax_rounded: f64,
    /// C's largest |element|.
    pub largest_in_c: f64,
}

impl AmaxCheck {
    /// Whether the amax is C's largest and the scale its scale.
    pub fn passed(&self) -> bool {
        self.amax_rounded.to_bits() == self.largest_in_c.to_bits()
            && self.scale.to_bits() == kernels_gpu::fused::e4m3_scale(self.amax).to_bits()
    }

    /// One line for reports.
    pub fn summary(&self) -> String {
        format!(
            "amax {:.6e} (as C's type {:.6e}, C's largest |element| {:.6e}), scale {:.6e} (448 / amax: {:.6e}): {}",
            self.amax,
            self.amax_rounded,
            self.largest_in_c,
            self.scale,
            kernels_gpu::fused::e4m3_scale(self.amax),
            if self.passed() { "PASS" } else { "FAIL" }
        )
    }
}

/// The amax epilogue's `[amax, scale]` against `result`, C after the run.
pub fn check_amax<T: Scalar>(p: &Problem, result: &[T], [amax, scale]: [f32; 2]) -> AmaxCheck {
    let s = &p.shape;
    let (members, stride) = if p.batch.is_batched() {
        (p.batch.count as usize, p.batch.stride_c as usize)
    } else {
        (1, 0)
    };
    let largest_in_c = (0..members)
        .flat_map(|z| (0..s.n as usize).map(move |col| z * stride + col * s.ldc as usize))
        .flat_map(|at| &result[at..at + s.m as usize])
        .map(|v| v.to_f64().abs())
        .fold(0.0, f64::max);
    AmaxCheck {
        amax,
        scale,
        amax_rounded: T::from_f64(f64::from(amax)).to_f64(),
        largest_in_c,
    }
}

impl Check {
    /// Whether C is finite, its padding untouched, both errors within their bounds, and the
    /// amax, if the run gathered one, C's.
    pub fn passed(&self) -> bool {
        self.non_finite == 0
            && self.padding_changed == 0
            && self.relative_frobenius <= self.tolerance
            && self.max_element_error <= self.max_element_bound
            && self.amax.as_ref().is_none_or(AmaxCheck::passed)
    }

    /// The largest element error relative to the largest reference element, `max|C - R| / max|R|`
    /// (the element-wise counterpart of the relative Frobenius error).
    pub fn max_element_relative(&self) -> f64 {
        if self.max_reference > 0.0 {
            self.max_element_error / self.max_reference
        } else {
            self.max_element_error
        }
    }

    /// One line for the report: the errors, their bounds and how the tolerance was derived, the
    /// coverage, PASS or FAIL, and the non-finite and padding counts when not zero.
    pub fn summary(&self) -> String {
        let verdict = if self.passed() { "PASS" } else { "FAIL" };
        let mut s = format!(
            "relative Frobenius error {:.2e} (tolerance {:.1e} = {} for {}), max element error {:.2e} (bound {:.1e}), {} f64 reference: {verdict}",
            self.relative_frobenius, self.tolerance, self.terms.formula(), self.terms.describe(), self.max_element_error, self.max_element_bound, self.coverage
        );
        if self.non_finite > 0 {
            s += &format!(
                "; {} elements of C are NaN or infinite (unwritten?)",
                self.non_finite
            );
            let largest = largest_finite(self.terms.dtype);
            if self.max_reference > largest {
                s += &format!(
                    "; the reference reaches {:.3e}, beyond {}'s largest finite value {largest:.5e}: C overflows in {}",
                    self.max_reference,
                    self.terms.dtype.name(),
                    self.terms.dtype.name()
                );
            }
        }
        if self.padding_changed > 0 {
            s += &format!(
                "; {} padding elements of C (rows >= m, or a grouped GEMM's columns no group owns) were overwritten",
                self.padding_changed
            );
        }
        if let Some(beyond) = self.beyond_rounding {
            s += &format!(
                "; {beyond:.2e} against the reference rounded to {} (the error beyond C's one rounding)",
                self.terms.dtype.name()
            );
        }
        if let Some(amax) = &self.amax {
            s += &format!("; {}", amax.summary());
        }
        s
    }
}

/// Unit roundoff of an element type, half the distance from 1 to the next value: 2⁻²⁴ for
/// f32, 2⁻⁵³ for f64, 2⁻⁸ for bf16 (7 explicit mantissa bits), 2⁻¹¹ for f16 (10).
pub fn unit_roundoff(dtype: Dtype) -> f64 {
    match dtype {
        Dtype::F32 => f32::EPSILON as f64 / 2.0,
        Dtype::F64 => f64::EPSILON / 2.0,
        Dtype::Bf16 => half::bf16::EPSILON.to_f64() / 2.0,
        Dtype::F16 => half::f16::EPSILON.to_f64() / 2.0,
        // 3 explicit mantissa bits (B's 2 in e5m2).
        Dtype::E4m3 => 2f64.powi(-4),
        Dtype::E4m3E5m2 => 2f64.powi(-3),
    }
}

/// The largest finite value of an element type (f16's 65504 is within reach of a GEMM).
pub fn largest_finite(dtype: Dtype) -> f64 {
    match dtype {
        Dtype::F32 => f32::MAX as f64,
        Dtype::F64 => f64::MAX,
        Dtype::Bf16 => half::bf16::MAX.to_f64(),
        Dtype::F16 => half::f16::MAX.to_f64(),
        Dtype::E4m3 => kernels_gpu::device::fp8::E4m3::MAX as f64,
        Dtype::E4m3E5m2 => kernels_gpu::device::fp8::E5m2::MAX as f64,
    }
}

/// Unit roundoff of the accumulation, `u_acc`: the element type's own in f32 and f64; f32's
/// (2⁻²⁴) for bf16 and f16, whose kernels (and cuBLAS's with `CUBLAS_COMPUTE_32F`) sum the
/// products in f32 registers and never compute in 16 bits.
pub fn accumulation_roundoff(dtype: Dtype) -> f64 {
    if dtype.is_16bit() {
        unit_roundoff(Dtype::F32)
    } else {
        unit_roundoff(dtype)
    }
}

/// The output's rounding beyond the accumulation's, `u_out`: 0 when C has the accumulator's
/// type (f32, f64: the epilogue's rounding is then one of the `+ 4` of [`tolerance`]); the
/// type's unit roundoff for bf16 and f16, where `alpha·acc + beta·C` is computed in f32 and
/// rounded once to the 16-bit type: up to 2⁻⁸ (bf16) or 2⁻¹¹ (f16) of each element, far
/// above anything the f32 accumulation adds.
pub fn output_rounding(dtype: Dtype) -> f64 {
    if dtype.is_16bit() {
        unit_roundoff(dtype)
    } else {
        0.0
    }
}

/// Relative error of one product `a·b` from how the arithmetic rounds its inputs, at most:
/// - native fused multiply-adds use the inputs exactly: 0;
/// - TF32 keeps 10 explicit mantissa bits of each input: rounded to nearest (`cvt.rna`, at
///   most 2⁻¹¹ relative, random sign: the error of k products averages to about 2⁻¹¹/√3 of ‖R‖,
///   the 3·10⁻⁴ TF32 is known for) or truncated by the tensor core (below 2⁻¹⁰, always toward
///   zero: a bias of about 2⁻¹¹ per input, 2⁻¹⁰ per product, that does not average out, so
///   about 10⁻³ of ‖R‖); 2⁻¹⁰ bounds both;
/// - 3xTF32 keeps `big·big + big·small + small·big` of `(big + small + r)(big + small + r)`:
///   the dropped `small·small` is at most 2⁻²² relative, and each `r` (the truncation of the
///   small part) at most 2⁻²¹: 2⁻²² + 2·2⁻²¹ < 2⁻²⁰.
pub fn input_rounding(arithmetic: Arithmetic) -> f64 {
    match arithmetic {
        Arithmetic::Native => 0.0,
        Arithmetic::Tf32 => 2f64.powi(-10),
        Arithmetic::Tf32x3 => 2f64.powi(-20),
    }
}

/// The tolerance on the relative Frobenius error: `4·(v + u_out + u_acc·(√k + 4))`.
///
/// - `v` is [`input_rounding`]; `u_acc` the unit roundoff of the accumulation
///   ([`accumulation_roundoff`]); `u_out` the output's own rounding ([`output_rounding`]), 0
///   in f32 and f64, so that there the tolerance is `4·(v + u·(√k + 4))` with `u` the type's.
/// - `u_acc·√k`: a length-k sum accumulates k roundings of random sign, a random walk. On the
///   H100 a correct f32 kernel's error at 4096³ is 1.2·10⁻⁶ = 0.31·u·√k; sequential summation
///   of random-sign data gives about 0.4·u·√k, all-positive data about 0.6·u·√k.
/// - `u_acc·4`: the roundings that do not grow with k (the product, `alpha·acc + beta·C`); it
///   also lets 3xTF32's input term (≤ 3·2⁻²² < 16·u) pass the FP32 check at k = 1.
/// - `u_out`, bf16 and f16: the kernel's f32 result `alpha·acc + beta·C0` (its error the f32
///   terms above; the products of 16-bit inputs are exact in f32, 8 or 11 significant bits
///   each) is rounded once to the 16-bit type, at most `u_out` of each element, so at most
///   `u_out` of the Frobenius norm, whatever k. This term dominates: the f32 terms reach it
///   only at k ≈ 2³² (bf16) or 2²⁶ (f16). The tolerance is then about 4·2⁻⁸ = 1.6·10⁻² in
///   bf16 and 4·2⁻¹¹ = 2.0·10⁻³ in f16. A kernel that kept its running sum in 16 bits
///   (rounding it after every multiply-add) errs by about 0.3·u_out·√k: the tests plant one,
///   whose relative Frobenius error crosses the tolerance at k ≈ 192 in both types (2.3 times
///   it at k = 1024); below that its largest element error fails the element bound at some
///   k from 48 on.
///   Below k ≈ 32 such a kernel is as accurate as the one rounding of a correct one, and the
///   check cannot tell them apart; nor does it need to, the results being as good.
/// - The factor 4 is the margin over those estimates, so that a correct kernel never fails;
///   it is small enough that a TF32 result fails the FP32 check for every k below about 10⁶
///   (and any lost term, wrong index or stale tile fails by orders of magnitude).
pub fn tolerance(dtype: Dtype, arithmetic: Arithmetic, k: u32) -> f64 {
    ToleranceTerms::new(dtype, arithmetic, k).value()
}

/// What a [`tolerance`] is made of, as the check reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToleranceTerms {
    /// Element type of C: it sets `u_out` and `u_acc`.
    pub dtype: Dtype,
    /// How the kernel multiplies: it sets `v`.
    pub arithmetic: Arithmetic,
    /// Length of each sum: the `√k` term.
    pub k: u32,
    /// `v`: [`input_rounding`] of the arithmetic.
    pub input: f64,
    /// `u_out`: [`output_rounding`] of the type.
    pub output: f64,
    /// `u_acc`: [`accumulation_roundoff`] of the type.
    pub accumulation: f64,
}

impl ToleranceTerms {
    /// The terms for a type, an arithmetic and k.
    pub fn new(dtype: Dtype, arithmetic: Arithmetic, k: u32) -> Self {
        Self {
            dtype,
            arithmetic,
            k,
            input: input_rounding(arithmetic),
            output: output_rounding(dtype),
            accumulation: accumulation_roundoff(dtype),
        }
    }

    /// `4·(v + u_out + u_acc·(√k + 4))`.
    pub fn value(&self) -> f64 {
        4.0 * (self.input + self.output + self.accumulation * ((self.k as f64).sqrt() + 4.0))
    }

    /// The formula with its terms, zero terms left out: `4·(2^-10 + 2^-24·(√k + 4))`,
    /// `4·(2^-8 + 2^-24·(√k + 4))`.
    pub fn formula(&self) -> String {
        let mut terms: Vec<String> = [self.input, self.output]
            .into_iter()
            .filter(|&t| t != 0.0)
            .map(power_of_two)
            .collect();
        terms.push(format!("{}·(√k + 4)", power_of_two(self.accumulation)));
        format!("4·({})", terms.join(" + "))
    }

    /// The arithmetic and type, and for a 16-bit type how it is computed:
    /// "native arithmetic in f32", "native arithmetic in bf16 (f32 accumulation, C rounded
    /// once to bf16)".
    pub fn describe(&self) -> String {
        let d = self.dtype.name();
        let mut s = format!("{} arithmetic in {d}", self.arithmetic.name());
        if self.dtype.is_16bit() {
            s += &format!(" (f32 accumulation, C rounded once to {d})");
        }
        s
    }
}

/// `2^-24` for a power of two, else the number.
fn power_of_two(x: f64) -> String {
    let e = x.log2();
    if x > 0.0 && e == e.round() {
        format!("2^{e}")
    } else {
        format!("{x:.1e}")
    }
}

fn view<T: Scalar>(m: &Matrix<T>) -> Array2<f64> {
    let data: Vec<f64> = m.data.iter().map(|x| x.to_f64()).collect();
    let full = ArrayView2::from_shape((m.ld as usize, m.cols as usize).f(), &data).unwrap();
    full.slice(ndarray::s![..m.rows as usize, ..]).to_owned()
}

/// m·n·k of reference work from which [`Reference::compute`] shows its progress: 2048³, which
/// takes about 0.7 s on 2 cores optimised (and took 26 s unoptimised).
pub const SHOW_PROGRESS_FROM: f64 = (1u64 << 33) as f64;

/// `alpha·op(A)·op(B) + beta·C0` in f64, restricted to the given rows and columns of C. The rows are
/// computed in panels of columns, so that a large reference can show its progress.
fn reference_lines<T: Scalar>(
    p: &Problem,
    inputs: &Inputs<T>,
    rows: &[usize],
    cols: &[usize],
) -> (Array2<f64>, Array2<f64>) {
    // op(A) and op(B): the stored matrices, transposed where the problem says so.
    let op = |x: &Matrix<T>, t| match t {
        Transpose::No => view(x),
        Transpose::Yes => view(x).reversed_axes(),
    };
    let a = op(&inputs.a, p.transposes.transa);
    let b = op(&inputs.b, p.transposes.transb);
    let c0 = view(&inputs.c);
    let c0 = if p.beta == 0.0 {
        Array2::zeros(c0.raw_dim())
    } else {
        c0
    };
    let (k, n) = (b.nrows(), b.ncols());
    let work = (rows.len() * n * k + a.nrows() * k * cols.len()) as f64;
    let panel = (n / 32).max(128);
    let panels = n.div_ceil(panel);
    let step = (work >= SHOW_PROGRESS_FROM).then(|| {
        let s = p.shape;
        let coverage = if cols.is_empty() { "" } else { ", sampled" };
        Step::start(
            format!(
                "computing the f64 reference ({}{coverage})",
                dims(s.m, s.n, s.k)
            ),
            panels as u64,
            "column panels",
        )
    });
    let a_rows = a.select(ndarray::Axis(0), rows);
    let mut row_ref = c0.select(ndarray::Axis(0), rows) * p.beta;
    for j in (0..n).step_by(panel) {
        let columns = ndarray::s![.., j..(j + panel).min(n)];
        let product = a_rows.dot(&b.slice(columns)) * p.alpha;
        let mut out = row_ref.slice_mut(columns);
        out += &product;
        if let Some(step) = &step {
            step.inc(1);
        }
    }
    let b_cols = b.select(ndarray::Axis(1), cols);
    let mut col_ref = a.dot(&b_cols) * p.alpha + c0.select(ndarray::Axis(1), cols) * p.beta;
    if let Some(step) = step {
        step.finish();
    }
    if !p.epilogue.is_none() {
        let bias: Vec<f64> = inputs.bias.iter().map(|x| x.to_f64()).collect();
        let fused = |x: f64, row: usize, col: usize| fused_epilogue(p.epilogue, &bias, x, row, col);
        for ((i, col), x) in row_ref.indexed_iter_mut() {
            *x = fused(*x, rows[i], col);
        }
        for ((row, j), x) in col_ref.indexed_iter_mut() {
            *x = fused(*x, row, cols[j]);
        }
    }
    (row_ref, col_ref)
}

/// The fused epilogue in f64, from the definitions ([`kernels_gpu::fused`]): `act(x + bias)`
/// for element (row, col), GELU's tanh form and SiLU's logistic function computed exactly.
pub fn fused_epilogue(e: Epilogue, bias: &[f64], x: f64, row: usize, col: usize) -> f64 {
    let x = x + match e.bias() {
        Bias::None => 0.0,
        Bias::PerRow => bias[row],
        Bias::PerColumn => bias[col],
    };
    match e.activation() {
        Activation::Identity => x,
        Activation::Relu => x.max(0.0),
        Activation::Gelu => {
            let inner = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x);
            0.5 * x * (1.0 + inner.tanh())
        }
        Activation::Silu => x / (1.0 + (-x).exp()),
    }
}

/// The f64 reference for the checked rows and columns of C: computed once per problem, shared
/// by every variant run on it.
pub struct Reference {
    rows: Vec<usize>,
    cols: Vec<usize>,
    row_ref: Array2<f64>,
    col_ref: Array2<f64>,
    coverage: String,
    /// `|alpha|·√k·max|A|·max|B| + |beta|·max|C0|`: the size a random-sign sum of k products
    /// reaches, which the element bound uses where cancellation leaves |R| smaller.
    term_scale: f64,
}

impl Reference {
    /// The reference for `p`: all of C while m·n·k ≤ [`FULL_REFERENCE_FLOPS`], else up to 64
    /// rows and 64 columns drawn with a generator seeded from `p.seed`; shows its progress from
    /// [`SHOW_PROGRESS_FROM`].
    pub fn compute<T: Scalar>(p: &Problem, inputs: &Inputs<T>) -> Self {
        let (m, n) = (p.shape.m as usize, p.shape.n as usize);
        let full = p.flops() / 2.0 <= FULL_REFERENCE_FLOPS;
        let (rows, cols, coverage): (Vec<usize>, Vec<usize>, String) = if full {
            ((0..m).collect(), vec![], "full".into())
        } else {
            let mut rng = ChaCha8Rng::seed_from_u64(p.seed ^ 0xC0FFEE);
            let rows = sample(&mut rng, m, SAMPLED_LINES.min(m)).into_vec();
            let cols = sample(&mut rng, n, SAMPLED_LINES.min(n)).into_vec();
            let coverage = format!("sample of {} rows + {} columns of", rows.len(), cols.len());
            (rows, cols, coverage)
        };
        let (row_ref, col_ref) = reference_lines(p, inputs, &rows, &cols);
        let max_abs = |x: &Matrix<T>| x.data.iter().fold(0f64, |acc, v| acc.max(v.to_f64().abs()));
        let beta_term = if p.beta == 0.0 {
            0.0
        } else {
            p.beta.abs() * max_abs(&inputs.c)
        };
        let term_scale =
            p.alpha.abs() * (p.shape.k as f64).sqrt() * max_abs(&inputs.a) * max_abs(&inputs.b)
                + beta_term;
        Self {
            rows,
            cols,
            row_ref,
            col_ref,
            coverage,
            term_scale,
        }
    }
}

/// Compares the kernel's C (`result`, with its padding) against the f64 reference, with the
/// tolerance of `arithmetic`.
pub fn check<T: Scalar>(
    p: &Problem,
    arithmetic: Arithmetic,
    inputs: &Inputs<T>,
    uploaded_c: &[T],
    result: &[T],
) -> Check {
    let reference = Reference::compute(p, inputs);
    check_against(p, arithmetic, &reference, uploaded_c, result)
}

/// The members of a batch whose C is compared with the reference: the distinct ones
/// ([`crate::problem::DISTINCT_MEMBERS`]: the others repeat their inputs) and the last, whose
/// offsets are the largest (an offset computed in 32 bits, or a walk that stops a member
/// short, shows there).
pub fn checked_members(p: &Problem) -> Vec<u32> {
    let count = p.batch.count;
    let mut members: Vec<u32> = (0..count.min(DISTINCT_MEMBERS)).collect();
    if count > DISTINCT_MEMBERS {
        members.push(count - 1);
    }
    members
}

/// The f64 references of a batch's distinct members (one for a single problem), each from its
/// own inputs ([`Inputs::generate`] of [`Problem::member`]).
pub fn batch_references<T: Scalar>(p: &Problem, inputs: &Inputs<T>) -> Vec<Reference> {
    if !p.batch.is_batched() {
        return vec![Reference::compute(p, inputs)];
    }
    (0..p.batch.count.min(DISTINCT_MEMBERS))
        .map(|d| {
            let member = p.member(d);
            // One bias for every member: the batch's.
            let mut member_inputs = Inputs {
                bias: inputs.bias.clone(),
                ..Inputs::<T>::generate(&member)
            };
            // An A or B whose members overlap (0 apart: one matrix for all) holds what the
            // batch's buffer holds at the member's place, not the member's own draw. (Members
            // past DISTINCT_MEMBERS are checked against member `i mod DISTINCT_MEMBERS`'s
            // reference, which holds for a shared matrix, not for partly overlapping ones.)
            let stored = p.stored();
            let strides = [p.batch.stride_a, p.batch.stride_b];
            for (i, (operand, whole)) in [
                (&mut member_inputs.a, &inputs.a),
                (&mut member_inputs.b, &inputs.b),
            ]
            .into_iter()
            .enumerate()
            {
                let (_, _, cols, ld) = stored[i];
                let len = ld as usize * cols as usize;
                if strides[i] < len as u64 {
                    let at = d as usize * strides[i] as usize;
                    let end = (at + len).min(whole.data.len());
                    operand.data[..end - at].copy_from_slice(&whole.data[at..end]);
                }
            }
            Reference::compute(&member, &member_inputs)
        })
        .collect()
}

/// The groups of a grouped problem its check compares with their references: every group up to
/// eight, else the first four and the last (as [`checked_members`]), from the table `table`.
pub fn checked_groups(p: &Problem, table: &[u32]) -> Vec<GroupColumns> {
    let runs = p.group_columns(table);
    if runs.len() <= 2 * DISTINCT_MEMBERS as usize {
        return runs;
    }
    let mut checked = runs[..DISTINCT_MEMBERS as usize].to_vec();
    checked.push(*runs.last().expect("more than eight groups"));
    checked
}

/// Group `run` of a grouped problem as a problem of its own, with its inputs cut out of the
/// grouped ones (its A's layer, its columns of B and C, and of a bias per column), and the
/// offset of its first column in the grouped C.
pub fn group_problem<T: Scalar>(
    p: &Problem,
    inputs: &Inputs<T>,
    run: GroupColumns,
) -> (Problem, Inputs<T>, usize) {
    let s = p.shape;
    let group = Problem {
        shape: Shape {
            n: run.columns,
            ..s
        },
        batch: kernels_gpu::gemm::Batch::ONE,
        groups: GroupLayout::None,
        ..*p
    };
    // `rows × cols` of leading dimension `ld` from element `at` of `data` (padding past the
    // buffer's end NaN: a last column need not reach `ld`).
    let cut = |data: &[T], at: u64, (rows, cols, ld): (u32, u32, u32)| {
        let len = ld as usize * cols as usize;
        let at = at as usize;
        let mut out = vec![T::from_f64(f64::NAN); len];
        let end = (at + len).min(data.len());
        out[..end - at].copy_from_slice(&data[at..end]);
        Matrix {
            rows,
            cols,
            ld,
            data: out,
        }
    };
    let b = &p.batch;
    let (g, member, first) = (run.group as u64, run.member as u64, run.first as u64);
    let ((ar, ac), (br, bc)) = (group.stored_a(), group.stored_b());
    let b_first = match p.transposes.transb {
        Transpose::No => first * s.ldb as u64,
        Transpose::Yes => first,
    };
    let c_at = member * b.stride_c + first * s.ldc as u64;
    let bias = match p.epilogue.bias() {
        Bias::PerColumn => {
            let from = if p.groups == GroupLayout::Contiguous {
                run.first as usize
            } else {
                0
            };
            inputs.bias[from..from + run.columns as usize].to_vec()
        }
        _ => inputs.bias.clone(),
    };
    let cut_inputs = Inputs {
        a: cut(&inputs.a.data, g * b.stride_a, (ar, ac, s.lda)),
        b: cut(
            &inputs.b.data,
            member * b.stride_b + b_first,
            (br, bc, s.ldb),
        ),
        c: cut(&inputs.c.data, c_at, (s.m, run.columns, s.ldc)),
        bias,
        groups: Vec::new(),
    };
    (group, cut_inputs, c_at as usize)
}

/// The f64 references of a run's check: a grouped problem's [`checked_groups`], a batch's
/// distinct members ([`batch_references`]), or the one problem's.
pub fn references<T: Scalar>(p: &Problem, inputs: &Inputs<T>) -> Vec<Reference> {
    if p.groups == GroupLayout::None {
        return batch_references(p, inputs);
    }
    checked_groups(p, &inputs.groups)
        .into_iter()
        .map(|run| {
            let (group, group_inputs, _) = group_problem(p, inputs, run);
            Reference::compute(&group, &group_inputs)
        })
        .collect()
}

/// The check of a grouped problem's run: each of [`checked_groups`] against its reference
/// (`references`, [`references`]'s), the worst returned, with every group's non-finite
/// elements counted and every column no group owns (padding, a masked group's columns past
/// its count) required to be as it was uploaded, bit for bit.
pub fn check_groups<T: Scalar>(
    p: &Problem,
    arithmetic: Arithmetic,
    references: &[Reference],
    inputs: &Inputs<T>,
    uploaded_c: &[T],
    result: &[T],
) -> Check {
    let s = p.shape;
    let runs = p.group_columns(&inputs.groups);
    let badness = |c: &Check| (!c.passed(), c.relative_frobenius / c.tolerance);
    let mut worst: Option<Check> = None;
    for (run, reference) in checked_groups(p, &inputs.groups)
        .into_iter()
        .zip(references)
    {
        let (group, _, at) = group_problem(p, inputs, run);
        let check = check_against(
            &group,
            arithmetic,
            reference,
            &uploaded_c[at..],
            &result[at..],
        );
        if worst.as_ref().is_none_or(|w| badness(&check) > badness(w)) {
            worst = Some(check);
        }
    }
    // No group owns a column (a table of padding only): nothing to compare, every column must
    // be as it was.
    let mut worst = worst.unwrap_or_else(|| {
        let terms = ToleranceTerms::new(p.dtype, arithmetic, s.k);
        Check {
            relative_frobenius: 0.0,
            max_element_error: 0.0,
            max_element_bound: 0.0,
            max_reference: 0.0,
            tolerance: terms.value(),
            terms,
            non_finite: 0,
            padding_changed: 0,
            coverage: "no column".into(),
            beyond_rounding: None,
            amax: None,
        }
    });
    let members = p.members();
    let (non_finite, untouched_changed) = group_columns_written(
        &runs,
        &s,
        (members.count, members.stride_c),
        uploaded_c,
        result,
    );
    worst.non_finite = non_finite;
    worst.padding_changed += untouched_changed;
    let checked = checked_groups(p, &inputs.groups).len();
    worst.coverage = format!(
        "{checked} of {} runs of a group's columns (the worst shown), each {}; every run for NaN, and every \
         column no group owns unchanged",
        runs.len(),
        worst.coverage
    );
    worst
}

/// What a grouped GEMM wrote in C: the NaN or infinite elements of the columns its groups own
/// (`runs`), and the elements of every other column (padding, a masked group's columns past its
/// count) whose bits changed. C is `members` of `s.n` columns, `stride_c` elements apart.
pub fn group_columns_written<T: Scalar>(
    runs: &[GroupColumns],
    s: &Shape,
    (members, stride_c): (u32, u64),
    uploaded_c: &[T],
    result: &[T],
) -> (usize, usize) {
    let members = members.max(1) as usize;
    let mut owned = vec![false; members * s.n as usize];
    for run in runs {
        let at = run.member as usize * s.n as usize + run.first as usize;
        owned[at..at + run.columns as usize].fill(true);
    }
    let (mut non_finite, mut changed) = (0, 0);
    for member in 0..members {
        for col in 0..s.n as usize {
            let at = member * stride_c as usize + col * s.ldc as usize;
            let (got, was) = (
                &result[at..at + s.m as usize],
                &uploaded_c[at..at + s.m as usize],
            );
            if owned[member * s.n as usize + col] {
                non_finite += got.iter().filter(|v| !v.to_f64().is_finite()).count();
            } else {
                changed += got
                    .iter()
                    .zip(was)
                    .filter(|(g, w)| g.to_f64().to_bits() != w.to_f64().to_bits())
                    .count();
            }
        }
    }
    (non_finite, changed)
}

/// The check of a run, one problem or a batch ([`batch_references`] gives `references`): each
/// of the [`checked_members`] against its reference, and the worst of them returned; its
/// coverage names the members, and its count of NaN or infinite elements is every member's
/// (C is NaN-poisoned when β = 0, so a member no block wrote fails the check).
pub fn check_run<T: Scalar>(
    p: &Problem,
    arithmetic: Arithmetic,
    references: &[Reference],
    uploaded_c: &[T],
    result: &[T],
) -> Check {
    if !p.batch.is_batched() {
        return check_against(p, arithmetic, &references[0], uploaded_c, result);
    }
    let s = &p.shape;
    let length = s.ldc as usize * s.n as usize;
    fn of_member<T>(data: &[T], i: u32, stride: u64, length: usize) -> &[T] {
        let at = i as usize * stride as usize;
        &data[at..at + length]
    }
    let stride = p.batch.stride_c;
    let members = checked_members(p);
    let mut worst: Option<Check> = None;
    for &i in &members {
        let reference = &references[i as usize % references.len()];
        let check = check_against(
            &p.member(i),
            arithmetic,
            reference,
            of_member(uploaded_c, i, stride, length),
            of_member(result, i, stride, length),
        );
        let badness = |c: &Check| (!c.passed(), c.relative_frobenius / c.tolerance);
        if worst.as_ref().is_none_or(|w| badness(&check) > badness(w)) {
            worst = Some(check);
        }
    }
    let mut worst = worst.expect("a batch has a member");
    worst.non_finite = (0..p.batch.count)
        .map(|i| {
            let c = of_member(result, i, stride, length);
            (0..s.n as usize)
                .flat_map(|col| &c[col * s.ldc as usize..][..s.m as usize])
                .filter(|v| !v.to_f64().is_finite())
                .count()
        })
        .sum();
    let list = members
        .iter()
        .map(|m| m.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    worst.coverage = format!(
        "members {list} of {} (the worst shown), each {}, every member's C for NaN",
        p.batch.count, worst.coverage
    );
    worst
}

/// [`check`] with a reference computed beforehand.
pub fn check_against<T: Scalar>(
    p: &Problem,
    arithmetic: Arithmetic,
    reference: &Reference,
    uploaded_c: &[T],
    result: &[T],
) -> Check {
    let s = &p.shape;
    let (m, n, ldc) = (s.m as usize, s.n as usize, s.ldc as usize);
    let mut non_finite = 0;
    let mut padding_changed = 0;
    for col in 0..n {
        for row in 0..ldc {
            let at = row + col * ldc;
            if row < m {
                non_finite += usize::from(!result[at].to_f64().is_finite());
            } else if result[at].to_f64().to_bits() != uploaded_c[at].to_f64().to_bits() {
                padding_changed += 1;
            }
        }
    }
    let (mut err2, mut ref2, mut max_err, mut max_ref) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let mut rounded_err2 = 0.0f64;
    let mut checked = 0usize;
    let mut visit = |row: usize, col: usize, want: f64| {
        checked += 1;
        let got = result[row + col * ldc].to_f64();
        let e = (got - want).abs();
        err2 += e * e;
        let past_rounding = got - T::from_f64(want).to_f64();
        rounded_err2 += past_rounding * past_rounding;
        ref2 += want * want;
        max_err = if e.is_nan() { f64::NAN } else { max_err.max(e) };
        max_ref = max_ref.max(want.abs());
    };
    for (i, &row) in reference.rows.iter().enumerate() {
        for col in 0..n {
            visit(row, col, reference.row_ref[[i, col]]);
        }
    }
    for (j, &col) in reference.cols.iter().enumerate() {
        for row in 0..m {
            visit(row, col, reference.col_ref[[row, j]]);
        }
    }
    // Relative to ‖R‖, but never to less than a quarter of the norm that elements of the
    // typical size of a random-sign sum of k products would have (uniform inputs in [-1, 1)
    // give a third of it): a C of a few elements can cancel to almost nothing (1×1×1 with
    // α·a·b ≈ -β·c), and its rounding error relative to that nothing says nothing.
    let floor = reference.term_scale * (checked as f64).sqrt() / 4.0;
    let scale = ref2.sqrt().max(floor);
    let relative = if scale > 0.0 {
        err2.sqrt() / scale
    } else {
        err2.sqrt()
    };
    let beyond_rounding = T::DTYPE.is_16bit().then(|| {
        if scale > 0.0 {
            rounded_err2.sqrt() / scale
        } else {
            rounded_err2.sqrt()
        }
    });
    let terms = ToleranceTerms::new(p.dtype, arithmetic, s.k);
    let tolerance = terms.value();
    Check {
        relative_frobenius: if relative.is_nan() {
            f64::INFINITY
        } else {
            relative
        },
        max_element_error: if max_err.is_nan() {
            f64::INFINITY
        } else {
            max_err
        },
        max_element_bound: tolerance * max_ref.max(reference.term_scale).max(f64::MIN_POSITIVE),
        max_reference: max_ref,
        tolerance,
        terms,
        non_finite,
        padding_changed,
        coverage: reference.coverage.clone(),
        beyond_rounding,
        amax: None,
    }
}

/// The FP32-accurate contract's wide-range inputs: A's rows and B's columns spread over f32's
/// normal range in pairs whose every product stays in range (and whose sums cannot overflow).
/// A's rows span 2⁻¹²⁶…2⁰ while B's columns span 2⁰…2¹⁰⁰, then A's rows 2⁰…2¹²⁶ while B's columns
/// span 2⁻¹²⁶…2⁻²⁶: between them, both operands cover 2⁻¹²⁶…2¹²⁶.
pub const WIDE_RANGES: [((i32, i32), (i32, i32)); 2] =
    [((-126, 0), (0, 100)), ((0, 126), (-126, -26))];

/// Column-major f32 A (m×k) and B (k×n), packed, whose row i of A is scaled by 2^e(i) and
/// column j of B by 2^f(j), the exponents spread evenly over `rows` and `cols`; each element is
/// ±[1, 2) times its scale (drawn from ChaCha8 seeded with `seed`): all normal numbers.
pub fn wide_range_operands(
    (m, n, k): (usize, usize, usize),
    (rows, cols): ((i32, i32), (i32, i32)),
    seed: u64,
) -> (Vec<f32>, Vec<f32>) {
    use rand::Rng;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let spread = |(lo, hi): (i32, i32), i: usize, count: usize| {
        lo + ((hi - lo) as f64 * i as f64 / (count.max(2) - 1) as f64).round() as i32
    };
    let mut unit = || {
        let x: f32 = rng.random_range(1.0..2.0);
        if rng.random::<bool>() {
            -x
        } else {
            x
        }
    };
    let a = (0..m * k)
        .map(|at| unit() * 2f32.powi(spread(rows, at % m, m)))
        .collect();
    let b = (0..k * n)
        .map(|at| unit() * 2f32.powi(spread(cols, at / k, n)))
        .collect();
    (a, b)
}

/// The largest error of `c = a·b` (packed, column-major, m×k times k×n) relative to Σ|a·b| of
/// its element, over every `stride`-th element of C: the measure of the FP32-accurate
/// contract, which scales with each element's own magnitude.
pub fn worst_error_relative_to_magnitudes(
    (m, n, k): (usize, usize, usize),
    (a, b, c): (&[f32], &[f32], &[f32]),
    stride: usize,
) -> f64 {
    (0..m * n)
        .step_by(stride.max(1))
        .map(|at| {
            let (i, j) = (at % m, at / m);
            let (mut exact, mut magnitude) = (0f64, 0f64);
            for l in 0..k {
                let product = a[i + l * m] as f64 * b[l + j * k] as f64;
                exact += product;
                magnitude += product.abs();
            }
            (c[at] as f64 - exact).abs() / magnitude
        })
        .fold(0f64, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::{Init, Transposes};

    fn problem(m: u32, n: u32, k: u32, beta: f64) -> Problem {
        let mut p = Problem {
            alpha: 2.0,
            beta,
            seed: 7,
            ..Problem::packed(m, n, k, Dtype::F64)
        };
        (p.shape.lda, p.shape.ldc) = (m + 1, m + 2);
        p
    }

    /// The product by the definition, element by element.
    fn by_hand(p: &Problem, x: &Inputs<f64>) -> Vec<f64> {
        let s = p.shape;
        let mut c = x.c_for_checked_run(p.beta);
        for j in 0..s.n {
            for i in 0..s.m {
                let dot: f64 = (0..s.k).map(|q| x.a.at(i, q) * x.b.at(q, j)).sum();
                let c0 = if p.beta == 0.0 { 0.0 } else { x.c.at(i, j) };
                c[(i + j * s.ldc) as usize] = p.alpha * dot + p.beta * c0;
            }
        }
        c
    }

    #[test]
    fn reference_matches_the_definition() {
        for beta in [0.0, -0.5] {
            let p = problem(7, 5, 9, beta);
            let x = Inputs::<f64>::generate(&p);
            let uploaded = x.c_for_checked_run(p.beta);
            let check = check(&p, Arithmetic::Native, &x, &uploaded, &by_hand(&p, &x));
            assert!(check.passed(), "{}", check.summary());
            assert!(check.relative_frobenius < 1e-15, "{}", check.summary());
            assert_eq!(check.coverage, "full");
        }
    }

    #[test]
    fn the_reference_multiplies_op_a_by_op_b() {
        for transposes in Transposes::ALL {
            // 3×2×4 with padded leading dimensions of A and B as stored.
            let mut p = Problem {
                transposes,
                ..problem(3, 2, 4, 0.5)
            };
            p.shape.lda = p.stored_a().0 + 1;
            p.shape.ldb = p.stored_b().0 + 2;
            let x = Inputs::<f64>::generate(&p);
            // The definition, read from the stored matrices: op(A)(i, q) is A(q, i) when
            // transposed.
            let op_a = |i, q| match transposes.transa {
                Transpose::No => x.a.at(i, q),
                Transpose::Yes => x.a.at(q, i),
            };
            let op_b = |q, j| match transposes.transb {
                Transpose::No => x.b.at(q, j),
                Transpose::Yes => x.b.at(j, q),
            };
            let mut want = x.c_for_checked_run(p.beta);
            for j in 0..2 {
                for i in 0..3 {
                    let dot: f64 = (0..4).map(|q| op_a(i, q) * op_b(q, j)).sum();
                    want[(i + j * p.shape.ldc) as usize] = p.alpha * dot + p.beta * x.c.at(i, j);
                }
            }
            let uploaded = x.c_for_checked_run(p.beta);
            let c = check(&p, Arithmetic::Native, &x, &uploaded, &want);
            assert!(
                c.passed() && c.relative_frobenius < 1e-15,
                "{transposes:?}: {}",
                c.summary()
            );
        }
    }

    #[test]
    fn the_reference_of_each_transpose_matches_a_product_by_hand() {
        // A stored [1 3; 2 4], B stored [5 7; 6 8] (column-major: 1, 2, 3, 4 and 5, 6, 7, 8).
        // A·B = [23 31; 34 46], Aᵀ·B = [17 23; 39 53], A·Bᵀ = [26 30; 38 44],
        // Aᵀ·Bᵀ = [19 22; 43 50]; C column-major.
        let (n, t) = (Transpose::No, Transpose::Yes);
        for (transposes, c) in [
            (Transposes::new(n, n), [23.0, 34.0, 31.0, 46.0]),
            (Transposes::new(t, n), [17.0, 39.0, 23.0, 53.0]),
            (Transposes::new(n, t), [26.0, 38.0, 30.0, 44.0]),
            (Transposes::new(t, t), [19.0, 43.0, 22.0, 50.0]),
        ] {
            let mut p = Problem {
                transposes,
                alpha: 1.0,
                ..problem(2, 2, 2, 0.0)
            };
            (p.shape.lda, p.shape.ldc) = (2, 2);
            let mut x = Inputs::<f64>::generate(&p);
            x.a.data = vec![1.0, 2.0, 3.0, 4.0];
            x.b.data = vec![5.0, 6.0, 7.0, 8.0];
            let uploaded = x.c_for_checked_run(p.beta);
            let check = check(&p, Arithmetic::Native, &x, &uploaded, &c);
            assert_eq!(
                check.relative_frobenius,
                0.0,
                "{transposes:?}: {}",
                check.summary()
            );
            assert!(check.passed());
        }
    }

    #[test]
    fn a_result_that_cancels_to_nothing_is_judged_by_the_size_of_its_terms() {
        // 1×1×1 with beta·c = -alpha·a·b: R is 0 up to rounding, and f32's rounding of the two
        // terms is all that remains of C. Relative to ‖R‖ that would be a huge error.
        let p = Problem {
            dtype: Dtype::F32,
            alpha: 1.5,
            beta: -0.5,
            ..problem(1, 1, 1, 0.0)
        };
        let mut x = Inputs::<f32>::generate(&p);
        x.c.data[0] = 3.0 * x.a.data[0] * x.b.data[0] * (1.0 + f32::EPSILON);
        let uploaded = x.c_for_checked_run(p.beta);
        let mut f32_result = uploaded.clone(); // C's padding rows, as uploaded
        f32_result[0] = 1.5f32 * x.a.data[0] * x.b.data[0] - 0.5f32 * x.c.data[0];
        let c = check(&p, Arithmetic::Native, &x, &uploaded, &f32_result);
        assert!(c.passed(), "{}", c.summary());
        let mut wrong = f32_result.clone();
        wrong[0] += 0.01;
        assert!(!check(&p, Arithmetic::Native, &x, &uploaded, &wrong).passed());
    }

    #[test]
    fn one_lost_product_fails_at_large_k() {
        // One element missing one of its 4096 terms: in a large C the Frobenius norm would
        // average it away; the element bound must catch it on its own.
        let p = Problem {
            dtype: Dtype::F32,
            ..problem(16, 16, 4096, 0.0)
        };
        let x = Inputs::<f32>::generate(&p);
        let uploaded = x.c_for_checked_run(p.beta);
        let mut result = modelled(&p, &x, Arithmetic::Native, false);
        assert!(check(&p, Arithmetic::Native, &x, &uploaded, &result).passed());
        let (i, j) = (5, 9);
        let largest = (0..4096)
            .map(|q| (x.a.at(i, q) * x.b.at(q, j)).abs())
            .fold(0f32, f32::max);
        let term = (0..4096)
            .map(|q| x.a.at(i, q) * x.b.at(q, j))
            .find(|t| t.abs() >= largest / 2.0)
            .unwrap();
        result[(i + j * p.shape.ldc) as usize] -= p.alpha as f32 * term;
        let c = check(&p, Arithmetic::Native, &x, &uploaded, &result);
        assert!(c.max_element_error > c.max_element_bound, "{}", c.summary());
    }

    #[test]
    fn detects_wrong_unwritten_and_padding_elements() {
        let p = problem(6, 4, 3, 0.0);
        let x = Inputs::<f64>::generate(&p);
        let uploaded = x.c_for_checked_run(p.beta);
        let good = by_hand(&p, &x);

        let mut wrong = good.clone();
        wrong[3 + 2 * 8] += 1e-3;
        assert!(!check(&p, Arithmetic::Native, &x, &uploaded, &wrong).passed());

        let mut unwritten = good.clone();
        unwritten[1] = f64::NAN;
        let c = check(&p, Arithmetic::Native, &x, &uploaded, &unwritten);
        assert_eq!(c.non_finite, 1);
        assert!(!c.passed() && c.summary().contains("unwritten"));

        let mut padding = good.clone();
        padding[6] = 0.0; // row 6 of column 0 is padding (ldc = 8)
        let c = check(&p, Arithmetic::Native, &x, &uploaded, &padding);
        assert_eq!(c.padding_changed, 1);
        assert!(!c.passed());
    }

    #[test]
    fn tolerance_grows_with_sqrt_k_and_precision() {
        let u32_ = unit_roundoff(Dtype::F32);
        assert_eq!(u32_, 2f64.powi(-24));
        // 4096: 4·u·(64 + 4) = 1.6e-5, thirteen times the 1.2e-6 a correct kernel shows there.
        let f32_tol = tolerance(Dtype::F32, Arithmetic::Native, 4096);
        assert!((f32_tol - 4.0 * u32_ * 68.0).abs() < 1e-12 && f32_tol < 1.7e-5);
        let big = tolerance(Dtype::F32, Arithmetic::Native, 4_000_000) - 16.0 * u32_;
        let small = tolerance(Dtype::F32, Arithmetic::Native, 1_000_000) - 16.0 * u32_;
        assert!(
            (big / small - 2.0).abs() < 1e-12,
            "the k term grows with √k"
        );
        assert!(tolerance(Dtype::F64, Arithmetic::Native, 4096) < 1e-13);
        // TF32's input rounding dominates at every practical k; 3xTF32 sits near FP32.
        assert!(tolerance(Dtype::F32, Arithmetic::Tf32, 4096) > 100.0 * f32_tol);
        let three = tolerance(Dtype::F32, Arithmetic::Tf32x3, 4096);
        assert!(three > f32_tol && three < 2.0 * f32_tol);
    }

    /// The product with each arithmetic's rounding of the inputs, summed in f32 like a kernel
    /// (TF32: rounded inputs; 3xTF32: big·big + big·small + small·big, small terms first).
    /// C as a kernel of `arithmetic` computes it, its TF32 inputs cut by rounding
    /// (`cvt.rna`) or by truncation (the tensor core reading f32 bits; 3xTF32 splits the
    /// same either way).
    fn modelled(p: &Problem, x: &Inputs<f32>, arithmetic: Arithmetic, truncate: bool) -> Vec<f32> {
        use kernels_gpu::device::mma::Tf32;
        let s = p.shape;
        let mut c = x.c_for_checked_run(p.beta);
        let tf32 = |v: f32| {
            if truncate {
                Tf32::truncate(v).to_f32()
            } else {
                Tf32::round(v).to_f32()
            }
        };
        let split = |v: f32| {
            let (big, small) = Tf32::split(v);
            (big.to_f32(), small.to_f32())
        };
        for j in 0..s.n {
            for i in 0..s.m {
                let mut acc = 0f32;
                for q in 0..s.k {
                    let (a, b) = (x.a.at(i, q), x.b.at(q, j));
                    acc = match arithmetic {
                        Arithmetic::Native => a.mul_add(b, acc),
                        Arithmetic::Tf32 => tf32(a).mul_add(tf32(b), acc),
                        Arithmetic::Tf32x3 => {
                            let ((ab, as_), (bb, bs)) = (split(a), split(b));
                            let acc = as_.mul_add(bb, acc);
                            let acc = ab.mul_add(bs, acc);
                            ab.mul_add(bb, acc)
                        }
                    };
                }
                let c0 = if p.beta == 0.0 { 0.0 } else { x.c.at(i, j) };
                c[(i + j * s.ldc) as usize] = p.alpha as f32 * acc + p.beta as f32 * c0;
            }
        }
        c
    }

    #[test]
    fn each_arithmetic_passes_its_own_check_and_tf32_fails_the_fp32_one() {
        for (m, n, k) in [(1, 1, 1), (16, 16, 1), (24, 20, 64), (32, 16, 1024)] {
            let p = Problem {
                dtype: Dtype::F32,
                ..problem(m, n, k, 0.5)
            };
            let x = Inputs::<f32>::generate(&p);
            let uploaded = x.c_for_checked_run(p.beta);
            let reference = Reference::compute(&p, &x);
            let verdict = |result: &[f32], as_: Arithmetic| {
                check_against(&p, as_, &reference, &uploaded, result)
            };
            for truncate in [false, true] {
                for arithmetic in [Arithmetic::Native, Arithmetic::Tf32, Arithmetic::Tf32x3] {
                    let c = verdict(&modelled(&p, &x, arithmetic, truncate), arithmetic);
                    assert!(c.passed(), "{m}x{n}x{k} {arithmetic:?}: {}", c.summary());
                }
                let tf32 = modelled(&p, &x, Arithmetic::Tf32, truncate);
                let tf32_as_fp32 = verdict(&tf32, Arithmetic::Native);
                assert!(
                    !tf32_as_fp32.passed(),
                    "{m}x{n}x{k}: {}",
                    tf32_as_fp32.summary()
                );
                let x3 = modelled(&p, &x, Arithmetic::Tf32x3, truncate);
                let x3_as_fp32 = verdict(&x3, Arithmetic::Native);
                assert!(x3_as_fp32.passed(), "{m}x{n}x{k}: {}", x3_as_fp32.summary());
            }
        }
    }

    /// C as a correct 16-bit kernel computes it: the inputs (already rounded to the type)
    /// multiplied exactly and summed in f32 with fused multiply-adds, `alpha·acc + beta·C0` in
    /// f32, rounded once to the type by `round` (half's `from_f32`: to nearest even, as
    /// `cvt.rn`). With `accumulate_in_16_bits`, the planted bug: the running sum rounded to the
    /// type after every multiply-add, as a kernel that kept its accumulator in 16 bits would.
    fn modelled_16bit<H: Scalar>(
        p: &Problem,
        x: &Inputs<H>,
        round: fn(f32) -> H,
        accumulate_in_16_bits: bool,
    ) -> Vec<H> {
        let s = p.shape;
        let f32_of = |v: H| v.to_f64() as f32; // exact: every 16-bit value is an f32
        let mut c = x.c_for_checked_run(p.beta);
        let (alpha, beta) = (p.alpha as f32, p.beta as f32);
        for j in 0..s.n {
            for i in 0..s.m {
                let mut acc = 0f32;
                for q in 0..s.k {
                    acc = f32_of(x.a.at(i, q)).mul_add(f32_of(x.b.at(q, j)), acc);
                    if accumulate_in_16_bits {
                        acc = f32_of(round(acc));
                    }
                }
                let value = if p.beta == 0.0 {
                    alpha * acc
                } else {
                    alpha.mul_add(acc, beta * f32_of(x.c.at(i, j)))
                };
                c[(i + j * s.ldc) as usize] = round(value);
            }
        }
        c
    }

    /// The check of `modelled_16bit` in bf16 and f16 on an m×n×k problem.
    fn check_16bit(m: u32, n: u32, k: u32, beta: f64, accumulate_in_16_bits: bool) -> [Check; 2] {
        fn one<H: Scalar>(p: Problem, round: fn(f32) -> H, planted: bool) -> Check {
            let x = Inputs::<H>::generate(&p);
            let uploaded = x.c_for_checked_run(p.beta);
            let result = modelled_16bit(&p, &x, round, planted);
            check(&p, Arithmetic::Native, &x, &uploaded, &result)
        }
        let p = |dtype| Problem {
            dtype,
            ..problem(m, n, k, beta)
        };
        [
            one(p(Dtype::Bf16), half::bf16::from_f32, accumulate_in_16_bits),
            one(p(Dtype::F16), half::f16::from_f32, accumulate_in_16_bits),
        ]
    }

    #[test]
    fn a_correct_16_bit_kernel_passes_its_check() {
        for (m, n, k) in [
            (1, 1, 1),
            (16, 16, 1),
            (24, 20, 64),
            (32, 16, 1024),
            (8, 8, 4096),
        ] {
            for beta in [0.0, 0.5] {
                for c in check_16bit(m, n, k, beta, false) {
                    let d = c.terms.dtype.name();
                    assert!(c.passed(), "{m}x{n}x{k} beta {beta} {d}: {}", c.summary());
                    // The output's rounding is what is left: at most u_out, and well under
                    // the tolerance's 4·u_out.
                    assert!(
                        c.relative_frobenius <= unit_roundoff(c.terms.dtype),
                        "{m}x{n}x{k} {d}: {}",
                        c.summary()
                    );
                }
            }
        }
    }

    #[test]
    fn a_16_bit_accumulation_fails_the_check() {
        // The planted kernel rounds its running sum to the type after every multiply-add: its
        // error grows as about 0.3·u_out·√k. Measured at 32×32 over seeds 1, 2, 3 and 7, bf16
        // and f16 alike: the relative Frobenius error is 0.45 of the tolerance at k = 32, 0.6
        // at 64, 0.8 at 128, 1.0 at 192, 2.3 at 1024 and 4.7 at 4096. Below k = 192 the element
        // bound catches it at some k from 48 on, not at all of them (seed 7: bf16 fails from
        // k = 64, f16 from 128). So it fails the check at every k from 192 on, and first at
        // k = 48 to 128 depending on the seed.
        for c in check_16bit(32, 32, 1024, 0.0, true) {
            assert!(!c.passed(), "{}", c.summary());
            assert!(c.relative_frobenius > 2.0 * c.tolerance, "{}", c.summary());
        }
        for c in check_16bit(32, 32, 4096, 0.5, true) {
            assert!(!c.passed(), "{}", c.summary());
        }
    }

    #[test]
    fn the_16_bit_tolerance_is_the_output_rounding_plus_the_f32_terms() {
        let (u_acc, k) = (2f64.powi(-24), 1024);
        for (dtype, u_out) in [(Dtype::Bf16, 2f64.powi(-8)), (Dtype::F16, 2f64.powi(-11))] {
            assert_eq!(unit_roundoff(dtype), u_out);
            assert_eq!(accumulation_roundoff(dtype), u_acc);
            let want = 4.0 * (u_out + u_acc * (32.0 + 4.0));
            assert_eq!(tolerance(dtype, Arithmetic::Native, k), want);
        }
        // f32 and f64 keep 4·(v + u·(√k + 4)): no output term.
        for dtype in [Dtype::F32, Dtype::F64] {
            let u = unit_roundoff(dtype);
            assert_eq!(output_rounding(dtype), 0.0);
            assert_eq!(tolerance(dtype, Arithmetic::Native, k), 4.0 * u * 36.0);
            let tf32 = 4.0 * (2f64.powi(-10) + u * 36.0);
            assert_eq!(tolerance(dtype, Arithmetic::Tf32, k), tf32);
        }
        assert_eq!(largest_finite(Dtype::F16), 65504.0);
    }

    #[test]
    fn the_summary_names_the_arithmetic_the_type_and_the_terms() {
        let [bf16, f16] = check_16bit(8, 8, 64, 0.0, false);
        let s = bf16.summary();
        assert!(
            s.contains("= 4·(2^-8 + 2^-24·(√k + 4)) for native arithmetic in bf16 (f32 accumulation, C rounded once to bf16)"),
            "{s}"
        );
        let s = f16.summary();
        assert!(
            s.contains("4·(2^-11 + 2^-24·(√k + 4))") && s.contains("in f16"),
            "{s}"
        );
        let p = Problem {
            dtype: Dtype::F32,
            ..problem(4, 4, 4, 0.0)
        };
        let x = Inputs::<f32>::generate(&p);
        let uploaded = x.c_for_checked_run(p.beta);
        let tf32 = modelled(&p, &x, Arithmetic::Tf32, false);
        let s = check(&p, Arithmetic::Tf32, &x, &uploaded, &tf32).summary();
        assert!(
            s.contains("= 4·(2^-10 + 2^-24·(√k + 4)) for TF32 arithmetic in f32)"),
            "{s}"
        );
    }

    #[test]
    fn an_f16_overflow_is_named() {
        // 256 products of 16·16: C reaches 65536, past f16's largest finite value, 65504.
        let p = Problem {
            dtype: Dtype::F16,
            alpha: 1.0,
            init: Init::Seed,
            ..problem(2, 2, 256, 0.0)
        };
        let mut x = Inputs::<half::f16>::generate(&p);
        for v in x.a.data.iter_mut().chain(x.b.data.iter_mut()) {
            if !v.is_nan() {
                *v = half::f16::from_f32(16.0);
            }
        }
        let uploaded = x.c_for_checked_run(p.beta);
        let result = modelled_16bit(&p, &x, half::f16::from_f32, false);
        let c = check(&p, Arithmetic::Native, &x, &uploaded, &result);
        assert!(!c.passed() && c.non_finite == 4, "{}", c.summary());
        assert!(
            c.summary().contains("C overflows in f16"),
            "{}",
            c.summary()
        );
    }
}
