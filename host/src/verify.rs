//! The check: the kernel's C against `alpha·A·B + beta·C0` computed in f64 with `ndarray`.
//!
//! - Every element of C (m×n) must be finite: a NaN means an element was never written (C is
//!   NaN-poisoned when beta = 0) or the kernel read padding/garbage. The padding rows of C
//!   (ldc > m) must come back bit-for-bit as they were uploaded.
//! - The relative Frobenius error `‖C - R‖ / ‖R‖` (‖R‖ floored at the size random-sign sums
//!   of k products would have, for a C that cancels to almost nothing) must stay under a
//!   tolerance derived from the
//!   variant's arithmetic ([`tolerance`]): the rounding of its inputs (none for FP32/FP64
//!   fused multiply-adds, 2⁻¹⁰ for TF32, about 2⁻²⁰ for 3xTF32) plus the rounding of a
//!   length-k sum, which grows with √k. The largest element error must stay under
//!   `tolerance·max|R|` too.
//! - Up to [`FULL_REFERENCE_FLOPS`] the whole product is checked (ndarray's multithreaded
//!   matrixmultiply); above it, a random sample of 64 full rows and 64 full columns of C
//!   (seeded, so a failure reproduces). The report says which.
use crate::problem::{Inputs, Matrix, Problem, Scalar};
use crate::progress::{dims, Step};
use kernels_gpu::gemm::{Arithmetic, Dtype};
use ndarray::{Array2, ArrayView2, ShapeBuilder};
use rand::seq::index::sample;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// m·n·k up to which the full f64 reference is computed (4096³ = 2^36 takes ~1 s on 16 cores).
pub const FULL_REFERENCE_FLOPS: f64 = (1u64 << 37) as f64;
const SAMPLED_LINES: usize = 64;

#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub relative_frobenius: f64,
    pub max_element_error: f64,
    /// `tolerance · max(max|R|, |alpha|·√k·max|A|·max|B| + |beta|·max|C0|)`: the largest element
    /// error that passes. The second term is the typical size of a sum of k products of random
    /// sign: at small k one element's input rounding can exceed `tolerance·max|R|` when the
    /// products cancel, though the kernel is right.
    pub max_element_bound: f64,
    /// The largest |R| over the checked elements of the reference.
    pub max_reference: f64,
    pub tolerance: f64,
    /// The arithmetic the tolerance was derived for.
    pub arithmetic: Arithmetic,
    pub non_finite: usize,
    pub padding_changed: usize,
    /// "full" or "sample of 64 rows + 64 columns".
    pub coverage: String,
}

impl Check {
    pub fn passed(&self) -> bool {
        self.non_finite == 0
            && self.padding_changed == 0
            && self.relative_frobenius <= self.tolerance
            && self.max_element_error <= self.max_element_bound
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

    pub fn summary(&self) -> String {
        let verdict = if self.passed() { "PASS" } else { "FAIL" };
        let mut s = format!(
            "relative Frobenius error {:.2e} (tolerance {:.1e} for {} arithmetic), max element error {:.2e} (bound {:.1e}), {} f64 reference: {verdict}",
            self.relative_frobenius, self.tolerance, self.arithmetic.name(), self.max_element_error, self.max_element_bound, self.coverage
        );
        if self.non_finite > 0 {
            s += &format!(
                "; {} elements of C are NaN or infinite (unwritten?)",
                self.non_finite
            );
        }
        if self.padding_changed > 0 {
            s += &format!(
                "; {} padding elements of C (rows >= m) were overwritten",
                self.padding_changed
            );
        }
        s
    }
}

/// Unit roundoff of the element type's arithmetic: 2⁻²⁴ for f32, 2⁻⁵³ for f64.
pub fn unit_roundoff(dtype: Dtype) -> f64 {
    match dtype {
        Dtype::F32 => f32::EPSILON as f64 / 2.0,
        Dtype::F64 => f64::EPSILON / 2.0,
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

/// The tolerance on the relative Frobenius error: `4·(v + u·(√k + 4))`.
///
/// - `v` is [`input_rounding`]; `u` the unit roundoff of the accumulation ([`unit_roundoff`]).
/// - `u·√k`: a length-k sum accumulates k roundings of random sign, a random walk. On the H100
///   a correct f32 kernel's error at 4096³ is 1.2·10⁻⁶ = 0.31·u·√k; sequential summation of
///   random-sign data gives about 0.4·u·√k, all-positive data about 0.6·u·√k.
/// - `u·4`: the roundings that do not grow with k (the product, `alpha·acc + beta·C`); it also
///   lets 3xTF32's input term (≤ 3·2⁻²² < 16·u) pass the FP32 check at k = 1.
/// - The factor 4 is the margin over those estimates, so that a correct kernel never fails;
///   it is small enough that a TF32 result fails the FP32 check for every k below about 10⁶
///   (and any lost term, wrong index or stale tile fails by orders of magnitude).
pub fn tolerance(dtype: Dtype, arithmetic: Arithmetic, k: u32) -> f64 {
    let u = unit_roundoff(dtype);
    4.0 * (input_rounding(arithmetic) + u * ((k as f64).sqrt() + 4.0))
}

fn view<T: Scalar>(m: &Matrix<T>) -> Array2<f64> {
    let data: Vec<f64> = m.data.iter().map(|x| x.to_f64()).collect();
    let full = ArrayView2::from_shape((m.ld as usize, m.cols as usize).f(), &data).unwrap();
    full.slice(ndarray::s![..m.rows as usize, ..]).to_owned()
}

/// m·n·k of reference work from which [`Reference::compute`] shows its progress: 2048³, which
/// takes about 0.7 s on 2 cores optimised (and took 26 s unoptimised).
pub const SHOW_PROGRESS_FROM: f64 = (1u64 << 33) as f64;

/// `alpha·A·B + beta·C0` in f64, restricted to the given rows and columns of C. The rows are
/// computed in panels of columns, so that a large reference can show its progress.
fn reference_lines<T: Scalar>(
    p: &Problem,
    inputs: &Inputs<T>,
    rows: &[usize],
    cols: &[usize],
) -> (Array2<f64>, Array2<f64>) {
    let a = view(&inputs.a);
    let b = view(&inputs.b);
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
    let col_ref = a.dot(&b_cols) * p.alpha + c0.select(ndarray::Axis(1), cols) * p.beta;
    if let Some(step) = step {
        step.finish();
    }
    (row_ref, col_ref)
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
    let mut checked = 0usize;
    let mut visit = |row: usize, col: usize, want: f64| {
        checked += 1;
        let got = result[row + col * ldc].to_f64();
        let e = (got - want).abs();
        err2 += e * e;
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
    let tolerance = tolerance(p.dtype, arithmetic, s.k);
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
        arithmetic,
        non_finite,
        padding_changed,
        coverage: reference.coverage.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Init;
    use kernels_gpu::registry::Shape;

    fn problem(m: u32, n: u32, k: u32, beta: f64) -> Problem {
        Problem {
            shape: Shape {
                m,
                n,
                k,
                lda: m + 1,
                ldb: k,
                ldc: m + 2,
            },
            dtype: Dtype::F64,
            alpha: 2.0,
            beta,
            init: Init::Random,
            seed: 7,
        }
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
}
