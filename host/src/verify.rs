//! The check: the kernel's C against `alpha·A·B + beta·C0` computed in f64 with `ndarray`.
//!
//! - Every element of C (m×n) must be finite: a NaN means an element was never written (C is
//!   NaN-poisoned when beta = 0) or the kernel read padding/garbage. The padding rows of C
//!   (ldc > m) must come back bit-for-bit as they were uploaded.
//! - The relative Frobenius error `‖C - R‖ / ‖R‖` must stay under a tolerance that grows with
//!   √k (rounding errors of a length-k dot product add up like a random walk): `64·u·√k`,
//!   u the unit roundoff of the element type. The largest element error must stay under
//!   `64·u·√k·max|R|` too.
//! - Up to [`FULL_REFERENCE_FLOPS`] the whole product is checked (ndarray's multithreaded
//!   matrixmultiply); above it, a random sample of 64 full rows and 64 full columns of C
//!   (seeded, so a failure reproduces). The report says which.
use crate::problem::{Inputs, Matrix, Problem, Scalar};
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
    /// `tolerance · max|R|`: the largest element error that passes.
    pub max_element_bound: f64,
    /// The largest |R| over the checked elements of the reference.
    pub max_reference: f64,
    pub tolerance: f64,
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
            "relative Frobenius error {:.2e} (tolerance {:.1e}), max element error {:.2e} (bound {:.1e}), {} f64 reference: {verdict}",
            self.relative_frobenius, self.tolerance, self.max_element_error, self.max_element_bound, self.coverage
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

/// The tolerance on the relative Frobenius error for a dtype and k.
pub fn tolerance(epsilon: f64, k: u32) -> f64 {
    64.0 * epsilon * (k as f64).sqrt()
}

fn view<T: Scalar>(m: &Matrix<T>) -> Array2<f64> {
    let data: Vec<f64> = m.data.iter().map(|x| x.to_f64()).collect();
    let full = ArrayView2::from_shape((m.ld as usize, m.cols as usize).f(), &data).unwrap();
    full.slice(ndarray::s![..m.rows as usize, ..]).to_owned()
}

/// `alpha·A·B + beta·C0` in f64, restricted to the given rows and columns of C.
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
    let a_rows = a.select(ndarray::Axis(0), rows);
    let row_ref = a_rows.dot(&b) * p.alpha + c0.select(ndarray::Axis(0), rows) * p.beta;
    let b_cols = b.select(ndarray::Axis(1), cols);
    let col_ref = a.dot(&b_cols) * p.alpha + c0.select(ndarray::Axis(1), cols) * p.beta;
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
        Self {
            rows,
            cols,
            row_ref,
            col_ref,
            coverage,
        }
    }
}

/// Compares the kernel's C (`result`, with its padding) against the f64 reference.
pub fn check<T: Scalar>(p: &Problem, inputs: &Inputs<T>, uploaded_c: &[T], result: &[T]) -> Check {
    check_against(p, &Reference::compute(p, inputs), uploaded_c, result)
}

/// [`check`] with a reference computed beforehand.
pub fn check_against<T: Scalar>(
    p: &Problem,
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
    let mut visit = |row: usize, col: usize, want: f64| {
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
    let relative = if ref2 > 0.0 {
        (err2 / ref2).sqrt()
    } else {
        err2.sqrt()
    };
    let tolerance = tolerance(T::EPSILON, s.k);
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
        max_element_bound: tolerance * max_ref.max(f64::MIN_POSITIVE),
        max_reference: max_ref,
        tolerance,
        non_finite,
        padding_changed,
        coverage: reference.coverage.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Init;
    use kernels_gpu::gemm::Dtype;
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
            let check = check(&p, &x, &uploaded, &by_hand(&p, &x));
            assert!(check.passed(), "{}", check.summary());
            assert!(check.relative_frobenius < 1e-15, "{}", check.summary());
            assert_eq!(check.coverage, "full");
        }
    }

    #[test]
    fn detects_wrong_unwritten_and_padding_elements() {
        let p = problem(6, 4, 3, 0.0);
        let x = Inputs::<f64>::generate(&p);
        let uploaded = x.c_for_checked_run(p.beta);
        let good = by_hand(&p, &x);

        let mut wrong = good.clone();
        wrong[3 + 2 * 8] += 1e-3;
        assert!(!check(&p, &x, &uploaded, &wrong).passed());

        let mut unwritten = good.clone();
        unwritten[1] = f64::NAN;
        let c = check(&p, &x, &uploaded, &unwritten);
        assert_eq!(c.non_finite, 1);
        assert!(!c.passed() && c.summary().contains("unwritten"));

        let mut padding = good.clone();
        padding[6] = 0.0; // row 6 of column 0 is padding (ldc = 8)
        let c = check(&p, &x, &uploaded, &padding);
        assert_eq!(c.padding_changed, 1);
        assert!(!c.passed());
    }

    #[test]
    fn tolerance_grows_with_sqrt_k_and_precision() {
        let f32_tol = tolerance(f32::EPSILON as f64 / 2.0, 4096);
        assert!((f32_tol - 64.0 * 5.96e-8 * 64.0).abs() < 1e-6);
        assert!((tolerance(1.0, 400) / tolerance(1.0, 100) - 2.0).abs() < 1e-12);
        assert!(tolerance(f64::EPSILON / 2.0, 4096) < 1e-12);
    }
}
