//! The CPU variants: part 1 of `003_…txt` ("CPU matrix multiply"): the triple loop, the AVX
//! row-broadcast kernel and its blocked version, plus the blocked kernel on every core and
//! `ndarray`'s GEMM as the bar to measure them against.
//!
//! They solve the same problem as the GPU kernels (column-major `C = αAB + βC` with leading
//! dimensions, f32 and f64), go through the same check and report, and are selected with
//! `--variant` like them. They always run on the host CPU, whatever `--backend` says, and are
//! timed with [`std::time::Instant`].
//!
//! 003 stores its matrices row-major (`c[N*i + j]`). A column-major matrix is the row-major
//! storage of its transpose, so each kernel here is 003's loop nest with rows and columns
//! swapped: where 003 walks along a row of C, these walk down a column. What streams
//! contiguously through memory and what strides is therefore the same as in 003, and so are
//! the lessons about loop order.
//!
//! One file per variant; [`registry`] lists them.
pub mod blocked;
pub mod naive;
pub mod ndarray_gemm;
pub mod parallel;
pub mod registry;
pub mod simd;

use crate::problem::{Inputs, Problem, Scalar};
use crate::timing::{Measured, Timing};
use kernels_gpu::device::Real;
pub use registry::CpuVariant;
use std::time::Instant;

/// The element types of the CPU variants: the run's [`Scalar`]s that have arithmetic on the
/// host ([`Real`]: f32 and f64, not the 16-bit types), with an AVX2 kernel and `ndarray`'s GEMM.
pub trait CpuScalar: Scalar + Real + simd::SimdScalar + ndarray::LinalgScalar {}
impl<T: Scalar + Real + simd::SimdScalar + ndarray::LinalgScalar> CpuScalar for T {}

/// The inputs of one CPU GEMM, as the GPU kernels receive them: column-major A (m×k) and
/// B (k×n) with their leading dimensions, and the scalars. C travels separately, as
/// `(c: &mut [T], ldc)`, because the parallel variant splits it between threads.
#[derive(Clone, Copy, Debug)]
pub struct Operands<'a, T> {
    /// Rows of A and C.
    pub m: usize,
    /// Columns of B and C.
    pub n: usize,
    /// Columns of A and rows of B: the length of each dot product.
    pub k: usize,
    /// α, rounded to the element type.
    pub alpha: T,
    /// A's storage: `lda × k` elements, column p from `a[p·lda]`, rows past m padding.
    pub a: &'a [T],
    /// Elements from the start of one column of A to the next (at least m).
    pub lda: usize,
    /// B's storage: `ldb × n` elements, column j from `b[j·ldb]`, rows past k padding.
    pub b: &'a [T],
    /// Elements from the start of one column of B to the next (at least k).
    pub ldb: usize,
    /// β, rounded to the element type; at 0, C is written without being read (BLAS).
    pub beta: T,
}

impl<'a, T: Copy> Operands<'a, T> {
    /// A, B, alpha and beta of a problem.
    pub fn new(p: &Problem, inputs: &'a Inputs<T>) -> Self
    where
        T: Scalar,
    {
        let s = p.shape;
        Self {
            m: s.m as usize,
            n: s.n as usize,
            k: s.k as usize,
            alpha: T::from_f64(p.alpha),
            a: &inputs.a.data,
            lda: s.lda as usize,
            b: &inputs.b.data,
            ldb: s.ldb as usize,
            beta: T::from_f64(p.beta),
        }
    }

    /// Column `p` of A: its m elements, contiguous.
    pub fn a_column(&self, p: usize) -> &'a [T] {
        &self.a[p * self.lda..p * self.lda + self.m]
    }

    /// B(p, j).
    pub fn b_at(&self, p: usize, j: usize) -> T {
        self.b[p + j * self.ldb]
    }
}

/// Column `j` of C: its m elements, contiguous (the padding rows up to `ldc` are left alone).
pub fn c_column<T>(c: &mut [T], ldc: usize, m: usize, j: usize) -> &mut [T] {
    &mut c[j * ldc..j * ldc + m]
}

/// `column ← β·column`, the first half of `C = αAB + βC` for kernels that then accumulate
/// `αAB` into C. When β = 0 the column is overwritten with zeros and never read: BLAS
/// semantics (C may hold garbage, and the checked run fills it with NaN to prove it).
pub fn scale_by_beta<T: Real>(beta: T, column: &mut [T]) {
    if beta == T::ZERO {
        column.fill(T::ZERO);
    } else if beta != T::ONE {
        for x in column {
            *x = beta * *x;
        }
    }
}

/// Runs a CPU variant with the protocol of the GPU backends: `timing.warmup` untimed runs,
/// timed runs while [`Timing::wants_more`] (so `budget_ms` and `iters` = 1 are honoured),
/// each timed with [`Instant`]; the time is the wall time of the whole GEMM.
///
/// One difference: the GPU backends run once more for the check, on a fresh C. A CPU run of
/// the triple loop can take minutes, so here the very first run (warm-up or timed) is the
/// checked one: it writes into the fresh C, and every later run into a scratch copy. The
/// kernels are deterministic, so this is the result any run would have produced.
pub fn run<T: CpuScalar>(
    variant: &CpuVariant,
    tile: u32,
    p: &Problem,
    inputs: &Inputs<T>,
    timing: Timing,
) -> Measured<T> {
    let x = Operands::new(p, inputs);
    let ldc = p.shape.ldc as usize;
    let uploaded_c = inputs.c_for_checked_run(p.beta);
    let mut result = uploaded_c.clone();
    let mut scratch = inputs.c.data.clone();
    let mut times_ms: Vec<f64> = Vec::with_capacity(timing.iters);
    let mut runs = 0;
    while runs < timing.warmup || timing.wants_more(times_ms.len(), times_ms.iter().sum()) {
        let c = if runs == 0 { &mut result } else { &mut scratch };
        let start = Instant::now();
        variant.gemm(&x, c, ldc, tile);
        let ms = start.elapsed().as_secs_f64() * 1e3;
        if runs >= timing.warmup {
            times_ms.push(ms);
        }
        runs += 1;
    }
    if runs == 0 && timing.check {
        variant.gemm(&x, &mut result, ldc, tile);
    }
    Measured {
        amax: None,
        times_ms,
        uploaded_c,
        result,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::Launch;
    use crate::registry::Variant;
    use crate::run::{execute, plan, Backend, Engine};
    use crate::verify;
    use kernels_gpu::gemm::{Arithmetic, Dtype};

    /// (m, n, k, padding of lda, ldb, ldc, alpha, beta)
    type Case = (u32, u32, u32, [u32; 3], f64, f64);

    /// Ragged sizes (not multiples of the 8 lanes or of blockL), one element, padded leading
    /// dimensions, alpha ≠ 1, beta ≠ 0; n = 70 and k = 100 span two blocks of the default
    /// blockL (64).
    const CASES: &[Case] = &[
        (1, 1, 1, [0, 0, 0], 1.0, 0.0),
        (2, 3, 4, [0, 0, 0], -1.5, 0.0),
        (31, 33, 17, [3, 1, 5], 0.75, -2.0),
        (64, 64, 64, [0, 0, 0], 1.0, 0.5),
        (127, 129, 130, [5, 0, 1], 2.5, 0.0),
        (9, 70, 100, [7, 3, 0], -0.5, 1.25),
    ];

    fn problem(case: Case, dtype: Dtype, seed: u64) -> Problem {
        let (m, n, k, [pad_a, pad_b, pad_c], alpha, beta) = case;
        let mut p = Problem {
            alpha,
            beta,
            seed,
            ..Problem::packed(m, n, k, dtype)
        };
        (p.shape.lda, p.shape.ldb, p.shape.ldc) = (m + pad_a, k + pad_b, m + pad_c);
        p
    }

    const ONE_CHECKED_RUN: Timing = Timing::CHECK_ONCE;

    #[test]
    fn every_cpu_variant_matches_the_reference() {
        let mut runs = 0;
        for v in registry::ALL {
            // The default blockL, the smallest, and one larger than every matrix.
            let tiles: Vec<Option<u32>> = match v.tiles {
                [] => vec![None],
                _ => vec![None, Some(8), Some(2048)],
            };
            for tile in tiles {
                for dtype in [Dtype::F32, Dtype::F64] {
                    for (seed, &case) in CASES.iter().enumerate() {
                        let p = problem(case, dtype, seed as u64);
                        let what = format!("{} tile {tile:?} {} {case:?}", v.name, dtype.name());
                        let r = execute(
                            &Backend::Emulator,
                            Variant::Cpu(v),
                            tile,
                            &p,
                            ONE_CHECKED_RUN,
                        )
                        .unwrap_or_else(|e| panic!("{what}: {e:#}"));
                        let check = r.check.expect("checked");
                        assert!(check.passed(), "{what}: {}", check.summary());
                        assert_eq!((r.engine, r.runs), (Engine::Cpu, 1), "{what}");
                        runs += 1;
                    }
                }
            }
        }
        // Three variants without a block size, two with three each.
        assert_eq!(runs, (3 + 2 * 3) * 2 * CASES.len());
    }

    #[test]
    fn the_portable_path_matches_the_reference_where_avx2_exists_too() {
        for dtype in [Dtype::F32, Dtype::F64] {
            for (seed, &case) in CASES.iter().enumerate() {
                let p = problem(case, dtype, 100 + seed as u64);
                let check = match dtype {
                    Dtype::F32 => portable_check::<f32>(&p),
                    Dtype::F64 => portable_check::<f64>(&p),
                    _ => unreachable!("f32 and f64 only"),
                };
                assert!(check.passed(), "{case:?}: {}", check.summary());
            }
        }
    }

    fn portable_check<T: CpuScalar>(p: &Problem) -> verify::Check {
        let inputs = Inputs::<T>::generate(p);
        let uploaded = inputs.c_for_checked_run(p.beta);
        let mut c = uploaded.clone();
        simd::gemm_portable(&Operands::new(p, &inputs), &mut c, p.shape.ldc as usize);
        verify::check(p, Arithmetic::Native, &inputs, &uploaded, &c)
    }

    #[test]
    fn cpu_runs_honour_the_timing_protocol() {
        let p = problem(CASES[2], Dtype::F32, 1);
        let simd = Variant::Cpu(&registry::ALL[1]);
        let runs = |timing| execute(&Backend::Emulator, simd, None, &p, timing).unwrap();
        // A zero budget still times three runs; then it stops, well before `iters`.
        let budget = Timing {
            iters: 1000,
            budget_ms: 0.0,
            ..ONE_CHECKED_RUN
        };
        assert_eq!(runs(budget).runs, 3);
        // Warm-ups are not timed, and the checked result comes from the first (warm-up) run.
        let warm = Timing {
            warmup: 2,
            iters: 4,
            ..ONE_CHECKED_RUN
        };
        let r = runs(warm);
        assert_eq!(r.runs, 4);
        assert!(r.passed(), "{}", r.check.unwrap().summary());
        // No run at all still checks one.
        let none = Timing {
            iters: 0,
            ..ONE_CHECKED_RUN
        };
        let r = runs(none);
        assert_eq!(r.runs, 0);
        assert!(r.passed(), "{}", r.check.unwrap().summary());
    }

    #[test]
    fn cpu_variants_refuse_the_16_bit_types() {
        for dtype in [Dtype::Bf16, Dtype::F16] {
            let p = problem(CASES[1], dtype, 1);
            for v in registry::ALL {
                let e = execute(
                    &Backend::Emulator,
                    Variant::Cpu(v),
                    None,
                    &p,
                    ONE_CHECKED_RUN,
                )
                .err()
                .unwrap_or_else(|| panic!("{} ran {}", v.name, dtype.name()));
                let e = format!("{e:#}");
                let want = format!("variant `{}` has no {} version", v.name, dtype.name());
                assert!(e.contains(&want), "{e}");
            }
        }
    }

    #[test]
    fn a_cpu_plan_names_its_path_and_block() {
        let p = problem(CASES[0], Dtype::F64, 1);
        let blocked = crate::registry::find("cpu-blocked").unwrap();
        let path = simd::Path::detect().name();
        let Launch::Cpu { entry, tile, .. } = plan(blocked, Some(256), &p, None).unwrap() else {
            panic!("a CPU variant plans a CPU launch")
        };
        assert_eq!((entry, tile), (format!("cpu_blocked_{path}_f64"), 256));
        let naive = crate::registry::find("cpu-naive").unwrap();
        assert_eq!(plan(naive, None, &p, None).unwrap().name(), "cpu_naive_f64");
        assert!(plan(naive, Some(8), &p, None).is_err());
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            assert_eq!(path, "avx2_fma");
        }
    }
}
