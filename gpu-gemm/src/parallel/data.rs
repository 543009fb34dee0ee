//! The layer's inputs and the check of each rank's result.
//!
//! X and W are too large to draw on one host and send (W of the largest shape is 470 MB), and
//! each rank needs only its shard. So every element is a function of its position: a hash of
//! (seed, matrix, row, column) mapped to [-1, 1) and rounded once to the element type. Each
//! rank fills its own shards; the check recomputes any element of X or W it needs, and the f64
//! reference of any element of Y, without the rest.
//!
//! The check samples a grid of Y's elements in the rank's result (every edge row and column
//! included) and bounds each one's error by the sum of its products' magnitudes, as the single-GPU
//! check's element bound does, with one more output rounding per addition the reduction makes in
//! the element type (NCCL adds bf16 partials and rounds each sum).
use super::schedule::{Form, Sharding};
use crate::problem::Scalar;
use crate::verify;
use kernels_gpu::gemm::Arithmetic;
use std::ops::Range;

/// Which input matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Matrix {
    /// X: tokens × in features.
    X,
    /// W: out features × in features.
    W,
}

/// The value of `matrix(row, col)` for `seed`, in f64, before rounding to the element type:
/// splitmix64 of the position, mapped to [-1, 1).
pub fn value(seed: u64, matrix: Matrix, row: u32, col: u32) -> f64 {
    let tag = match matrix {
        Matrix::X => 0x5851_f42d_4c95_7f2d,
        Matrix::W => 0x1405_7b7e_f767_814f,
    };
    let mut z = seed
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(tag)
        .wrapping_add(((row as u64) << 32) | col as u64);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    // 53 random bits → [0, 1) → [-1, 1).
    (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

/// The element as the rank holds it: `value` rounded to `T`.
pub fn element<T: Scalar>(seed: u64, matrix: Matrix, row: u32, col: u32) -> T {
    T::from_f64(value(seed, matrix, row, col))
}

/// The rank's weight shard as A: stored `k_local × m_local` column-major (W's rows are A's
/// columns), `lda = k_local`.
pub fn weight_shard<T: Scalar>(sharding: &Sharding, seed: u64) -> Vec<T> {
    let (rows, features) = (sharding.weight_rows(), sharding.features());
    rows.flat_map(|n| {
        features
            .clone()
            .map(move |k| element::<T>(seed, Matrix::W, n, k))
    })
    .collect()
}

/// The rank's input shard: its tokens' rows of X, stored `k_local × tokens` column-major,
/// to be put into B where the schedule wants it ([`super::schedule::Schedule::input`]).
pub fn input_shard<T: Scalar>(sharding: &Sharding, seed: u64) -> Vec<T> {
    let (tokens, features) = (sharding.input_tokens(), sharding.features());
    tokens
        .flat_map(|t| {
            features
                .clone()
                .map(move |k| element::<T>(seed, Matrix::X, t, k))
        })
        .collect()
}

/// The whole layer's operands for one GPU: W as A (K × N) and X as B (K × T).
pub fn whole<T: Scalar>(layer: super::schedule::Layer, seed: u64) -> (Vec<T>, Vec<T>) {
    let one = Sharding::new(Form::AllGather, layer, 1, 0).expect("one rank always divides");
    (weight_shard(&one, seed), input_shard(&one, seed))
}

/// What the sampled check found.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleCheck {
    /// Elements checked.
    pub checked: usize,
    /// The largest `|error| / (tolerance · Σ|x·w|)`: at most 1 passes.
    pub worst: f64,
    /// The first failing element, as (out feature, token, value, reference), if any.
    pub first_failure: Option<(u32, u32, f64, f64)>,
}

impl SampleCheck {
    /// Whether every element is within its bound.
    pub fn passed(&self) -> bool {
        self.first_failure.is_none()
    }
}

/// About `per_side` indices spread over `range`, its first and last included.
fn spread(range: Range<u32>, per_side: u32) -> Vec<u32> {
    let len = range.end - range.start;
    let count = per_side.min(len).max(1);
    let mut v: Vec<u32> = (0..count)
        .map(|i| range.start + ((len - 1) as u64 * i as u64 / (count - 1).max(1) as u64) as u32)
        .collect();
    v.dedup();
    v
}

/// Checks a sampled grid of the rank's result (`result`: column-major, one column per token of
/// [`Sharding::result`]) against the f64 reference of the same elements.
pub fn check_result<T: Scalar>(
    sharding: &Sharding,
    seed: u64,
    result: &[T],
    per_side: u32,
) -> SampleCheck {
    let (_, features, tokens) = sharding.result();
    let k = sharding.layer.in_features;
    // Roundings in the element type after the f32 sum: the GEMM's output, and with a
    // reduction each of the P − 1 additions and the partials themselves.
    let roundings = match sharding.form {
        Form::AllGather => 1.0,
        Form::ReduceScatter => sharding.ranks as f64,
    };
    let terms = verify::ToleranceTerms::new(T::DTYPE, Arithmetic::Native, k);
    let tolerance =
        4.0 * (roundings * terms.output + terms.accumulation * ((k as f64).sqrt() + 4.0));
    let rows = spread(features.clone(), per_side);
    let cols = spread(tokens.clone(), per_side);
    let w: Vec<Vec<f64>> = rows
        .iter()
        .map(|&n| {
            (0..k)
                .map(|c| element::<T>(seed, Matrix::W, n, c).to_f64())
                .collect()
        })
        .collect();
    let mut check = SampleCheck {
        checked: 0,
        worst: 0.0,
        first_failure: None,
    };
    let height = (features.end - features.start) as usize;
    for &t in &cols {
        let x: Vec<f64> = (0..k)
            .map(|c| element::<T>(seed, Matrix::X, t, c).to_f64())
            .collect();
        for (i, &n) in rows.iter().enumerate() {
            let (mut sum, mut magnitude) = (0.0, 0.0);
            for (a, b) in w[i].iter().zip(&x) {
                sum += a * b;
                magnitude += (a * b).abs();
            }
            let at = (n - features.start) as usize + (t - tokens.start) as usize * height;
            let got = result[at].to_f64();
            let ratio = (got - sum).abs() / (tolerance * magnitude).max(f64::MIN_POSITIVE);
            check.checked += 1;
            // NaN (an element never written) fails too.
            let fails = ratio.is_nan() || ratio > 1.0;
            if fails && check.first_failure.is_none() {
                check.first_failure = Some((n, t, got, sum));
            }
            if ratio.is_nan() {
                check.worst = f64::INFINITY;
            } else {
                check.worst = check.worst.max(ratio);
            }
        }
    }
    check
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::schedule::Layer;
    use half::bf16;

    #[test]
    fn values_are_spread_over_the_interval_and_depend_on_every_coordinate() {
        let v: Vec<f64> = (0..1000).map(|i| value(7, Matrix::X, i, 3)).collect();
        assert!(v.iter().all(|x| (-1.0..1.0).contains(x)));
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        assert!(mean.abs() < 0.1, "{mean}");
        assert_ne!(value(7, Matrix::X, 1, 2), value(7, Matrix::X, 2, 1));
        assert_ne!(value(7, Matrix::X, 1, 2), value(7, Matrix::W, 1, 2));
        assert_ne!(value(7, Matrix::X, 1, 2), value(8, Matrix::X, 1, 2));
    }

    #[test]
    fn the_check_passes_the_exact_product_and_catches_a_shifted_token() {
        let layer = Layer {
            tokens: 16,
            out_features: 24,
            in_features: 32,
        };
        let sh = Sharding::new(Form::AllGather, layer, 2, 1).unwrap();
        let (rows, features) = (sh.weight_rows(), sh.features());
        let product = |n: u32, t: u32| -> f64 {
            features
                .clone()
                .map(|c| {
                    element::<bf16>(1, Matrix::W, n, c).to_f64()
                        * element::<bf16>(1, Matrix::X, t, c).to_f64()
                })
                .sum()
        };
        let good: Vec<bf16> = (0..layer.tokens)
            .flat_map(|t| rows.clone().map(move |n| (n, t)))
            .map(|(n, t)| bf16::from_f64(product(n, t)))
            .collect();
        let check = check_result(&sh, 1, &good, 8);
        assert!(check.passed(), "{check:?}");
        assert!(check.checked >= 64);
        // The planted bug: the result of token t + 1 stored as token t's.
        let shifted: Vec<bf16> = (0..layer.tokens)
            .flat_map(|t| rows.clone().map(move |n| (n, (t + 1) % 16)))
            .map(|(n, t)| bf16::from_f64(product(n, t)))
            .collect();
        let check = check_result(&sh, 1, &shifted, 8);
        assert!(!check.passed());
        assert!(check.worst > 10.0, "{check:?}");
    }
}
