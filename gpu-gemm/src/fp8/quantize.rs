//! The FP8 operands: data drawn as the other types' is, quantised to e4m3 (or, for B, e5m2:
//! [`Format`]) with scales per tensor or per block, and the dequantised value of every element,
//! as the kernel sees it.
//!
//! Both operands are stored K-major: A as k×m (column i is row i of op(A)), B as k×n. The
//! scale of a stored element (row q, column c) is:
//! - [`Scaling::PerTensor`]: `scales[0]`, one f32 per operand.
//! - [`Scaling::Block`] (DeepSeek-V3, DeepGEMM): for A one scale per 1×128 of op(A), row i
//!   and k-block `kb = q/128`, at `sa[i + kb·m]` (m contiguous: `⌈k/128⌉·m` f32); for B one
//!   per 128×128 block, n-block `nb = c/128` and k-block kb, at `sb[nb·⌈k/128⌉ + kb]`.
//!   Activations (A) vary row to row, so each row gets its own scales; weights (B) are
//!   smoother, and a 128×128 block's scale is one load per tile of the kernel.
//!
//! A block's scale is its largest |x| over 448 (57 344 in e5m2), so that its largest element
//! lands on the format's largest value and the mantissa bits are spent on the block's own
//! range: one outlier (the `outliers` option plants rows 1000× larger) then coarsens only its
//! own blocks, where a per-tensor scale pushes every other element towards the subnormals.
use super::{e4m3, e5m2};
use crate::problem::{seed_a, seed_b, Init, Matrix};
use kernels_gpu::gemm::GroupLayout;
use kernels_gpu::registry::Shape;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Elements along k (and along n for B's blocks) that share a block scale.
pub const BLOCK: u32 = 128;

/// How the operands are scaled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Scaling {
    /// One scale per operand (from its absolute maximum)
    #[cfg_attr(feature = "clap", value(name = "tensor"))]
    PerTensor,
    /// One per 1×128 of op(A) and per 128×128 of B (DeepSeek-V3's scheme)
    Block,
}

/// The 8-bit format of an operand's codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// 4 bits of exponent, 3 of mantissa, ±448: activations and weights.
    E4m3,
    /// 5 bits of exponent, 2 of mantissa, ±57 344: gradients (B of `Dtype::E4m3E5m2`).
    E5m2,
}

impl Format {
    /// B's format in a problem of `dtype` (A is always e4m3).
    pub fn of_b(dtype: kernels_gpu::gemm::Dtype) -> Format {
        match dtype {
            kernels_gpu::gemm::Dtype::E4m3E5m2 => Format::E5m2,
            _ => Format::E4m3,
        }
    }

    /// Its largest finite value.
    pub fn max(self) -> f64 {
        match self {
            Format::E4m3 => e4m3::E4M3_MAX,
            Format::E5m2 => e5m2::E5M2_MAX,
        }
    }

    /// `x` rounded to nearest even, saturated to ±[`Format::max`], NaN kept.
    pub fn encode(self, x: f64) -> u8 {
        match self {
            Format::E4m3 => e4m3::from_f64(x),
            Format::E5m2 => e5m2::from_f64(x),
        }
    }

    /// The exact value of a code.
    pub fn decode(self, code: u8) -> f64 {
        match self {
            Format::E4m3 => e4m3::to_f64(code),
            Format::E5m2 => e5m2::to_f64(code),
        }
    }

    /// The type of a problem whose B is in this format (A is e4m3).
    pub fn dtype(self) -> kernels_gpu::gemm::Dtype {
        match self {
            Format::E4m3 => kernels_gpu::gemm::Dtype::E4m3,
            Format::E5m2 => kernels_gpu::gemm::Dtype::E4m3E5m2,
        }
    }
}

/// What padding holds: a NaN in both formats (e4m3's `0.1111.111`, e5m2's `0.11111.11`), so
/// that a kernel that reads it is caught.
pub const PADDING: u8 = 0x7F;

/// Which operand a stored K-major matrix is: it decides the block layout of its scales.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// Stored k×m: block scales per column and k-block, `c + kb·m`.
    A,
    /// Stored k×n: block scales per 128 columns and k-block, `(c/128)·⌈k/128⌉ + kb`.
    B,
}

/// An operand in FP8 with its scales: what the kernel is given.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantized {
    /// The codes, k×(m or n) column-major with the source's leading dimension; padding rows
    /// hold NaN (0x7F in both formats), so that a kernel that reads them is caught by the check.
    pub codes: Matrix<u8>,
    /// The codes' format.
    pub format: Format,
    /// The f32 scales, in the layout of the module documentation.
    pub scales: Vec<f32>,
    /// Which operand: with `scaling`, it says where an element's scale is.
    pub operand: Operand,
    /// How the scales were chosen.
    pub scaling: Scaling,
}

impl Quantized {
    /// The index in `scales` of the scale of stored element (`row`, `col`).
    pub fn scale_index(&self, row: u32, col: u32) -> usize {
        scale_index(
            self.operand,
            self.scaling,
            self.codes.rows,
            self.codes.cols,
            row,
            col,
        )
    }

    /// The value the kernel multiplies: `scale · value(code)`, exact in f64.
    pub fn dequantized(&self, row: u32, col: u32) -> f64 {
        self.scales[self.scale_index(row, col)] as f64 * self.format.decode(self.codes.at(row, col))
    }

    /// Every element dequantised, in the stored layout, padding NaN.
    pub fn dequantize(&self) -> Matrix<f64> {
        let c = &self.codes;
        Matrix::from_fn(c.rows, c.cols, c.ld, f64::NAN, |r, col| {
            self.dequantized(r, col)
        })
    }
}

/// The number of scales of an operand stored `rows`×`cols` (rows = k).
pub fn scale_count(operand: Operand, scaling: Scaling, rows: u32, cols: u32) -> usize {
    let k_blocks = rows.div_ceil(BLOCK) as usize;
    match (scaling, operand) {
        (Scaling::PerTensor, _) => 1,
        (Scaling::Block, Operand::A) => k_blocks * cols as usize,
        (Scaling::Block, Operand::B) => k_blocks * cols.div_ceil(BLOCK) as usize,
    }
}

fn scale_index(
    operand: Operand,
    scaling: Scaling,
    rows: u32,
    cols: u32,
    row: u32,
    col: u32,
) -> usize {
    let kb = (row / BLOCK) as usize;
    match (scaling, operand) {
        (Scaling::PerTensor, _) => 0,
        (Scaling::Block, Operand::A) => col as usize + kb * cols as usize,
        (Scaling::Block, Operand::B) => (col / BLOCK) as usize * rows.div_ceil(BLOCK) as usize + kb,
    }
}

/// Quantises a K-major operand (`source` is k×m for A, k×n for B) to e4m3: each scale is its
/// elements' largest |x| over 448 (1 where they are all 0), rounded to f32, and each code
/// `e4m3(x / scale)`, the division in f64 (e4m3 rounds once, saturating the rare quotient
/// that the f32 rounding of the scale pushes past 448).
pub fn quantize(source: &Matrix<f32>, operand: Operand, scaling: Scaling) -> Quantized {
    quantize_as(source, operand, scaling, Format::E4m3)
}

/// [`quantize`] to `format`: the scales are the largest |x| over the format's largest value.
pub fn quantize_as(
    source: &Matrix<f32>,
    operand: Operand,
    scaling: Scaling,
    format: Format,
) -> Quantized {
    let (rows, cols) = (source.rows, source.cols);
    let index = |r, c| scale_index(operand, scaling, rows, cols, r, c);
    let mut amax = vec![0f64; scale_count(operand, scaling, rows, cols)];
    for c in 0..cols {
        for r in 0..rows {
            let s = &mut amax[index(r, c)];
            *s = s.max((source.at(r, c) as f64).abs());
        }
    }
    let scales: Vec<f32> = amax
        .iter()
        .map(|&m| {
            if m == 0.0 {
                1.0
            } else {
                (m / format.max()) as f32
            }
        })
        .collect();
    quantize_with(source, operand, (scaling, scales), format)
}

/// `source` quantised to `format` with the `scales` given (in `scaling`'s layout): each code
/// `format(x / scale)`, the division in f64, saturating. [`quantize_as`] with scales chosen
/// elsewhere: a strided batch's members with one scale per tensor share the batch's largest,
/// as cuBLASLt's batched matmul reads them.
pub fn quantize_with(
    source: &Matrix<f32>,
    operand: Operand,
    (scaling, scales): (Scaling, Vec<f32>),
    format: Format,
) -> Quantized {
    let (rows, cols) = (source.rows, source.cols);
    assert_eq!(scales.len(), scale_count(operand, scaling, rows, cols));
    let index = |r, c| scale_index(operand, scaling, rows, cols, r, c);
    let codes = Matrix::from_fn(rows, cols, source.ld, PADDING, |r, c| {
        format.encode(source.at(r, c) as f64 / scales[index(r, c)] as f64)
    });
    Quantized {
        codes,
        format,
        scales,
        operand,
        scaling,
    }
}

/// Everything that defines one FP8 GEMM.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fp8Problem {
    /// m, n, k; `lda ≥ k` and `ldb ≥ k` (A and B stored K-major), `ldc ≥ m`.
    pub shape: Shape,
    /// α, as the kernel takes it.
    pub alpha: f32,
    /// β; at 0 C is not read.
    pub beta: f32,
    /// How A and B are scaled.
    pub scaling: Scaling,
    /// B's format (A is e4m3).
    pub b_format: Format,
    /// How the data is made: [`Init::Random`] draws A, B, then C from ChaCha8 seeded with
    /// `seed`, uniform in [-1, 1) (as [`crate::problem::Inputs`]); [`Init::Seed`] uses
    /// [`seed_a`] for op(A) and [`seed_b`] for B, C zero.
    pub init: Init,
    /// The generator's seed.
    pub seed: u64,
    /// Multiplies every 97th row of op(A) (row 0 first, so at least one) by 1000: the
    /// outliers of activations that per-tensor scaling handles badly.
    pub outliers: bool,
    /// A grouped GEMM ([`super::grouped`]): `shape` is then one group's A and all of B's and
    /// C's columns (contiguous) or one member's room (masked); [`crate::launch::Fp8Groups::NONE`] for one
    /// problem.
    pub groups: crate::launch::Fp8Groups,
    /// The fused epilogue on D (bias, activation, D's amax), as in 16 bits
    /// ([`kernels_gpu::fused`]); one problem only.
    pub epilogue: kernels_gpu::fused::Epilogue,
}

impl Fp8Problem {
    /// Its type: [`Dtype::E4m3`](kernels_gpu::gemm::Dtype::E4m3), or `E4m3E5m2` with B in e5m2.
    pub fn dtype(&self) -> kernels_gpu::gemm::Dtype {
        self.b_format.dtype()
    }

    /// Values in the epilogue's bias: m (one per row of D), n (per column) or none.
    pub fn bias_len(&self) -> usize {
        match self.epilogue.bias() {
            kernels_gpu::fused::Bias::PerRow => self.shape.m as usize,
            kernels_gpu::fused::Bias::PerColumn => self.shape.n as usize,
            kernels_gpu::fused::Bias::None => 0,
        }
    }

    /// The FP8 problem of a plain [`crate::problem::Problem`] in e4m3: one scale per tensor,
    /// no outliers (its shape is already in the FP8 layout: `lda ≥ k`), grouped as it is (its
    /// batch's members are the groups), and a strided batch (its members packed) as
    /// [`crate::launch::Fp8Groups::batch`].
    pub fn per_tensor(p: &crate::problem::Problem) -> Self {
        Fp8Problem {
            shape: p.shape,
            alpha: p.alpha as f32,
            beta: p.beta as f32,
            scaling: Scaling::PerTensor,
            b_format: Format::of_b(p.dtype),
            init: p.init,
            seed: p.seed,
            outliers: false,
            epilogue: p.epilogue,
            groups: match p.groups {
                GroupLayout::None if p.batch.is_batched() => {
                    crate::launch::Fp8Groups::batch(p.batch)
                }
                GroupLayout::None => crate::launch::Fp8Groups::NONE,
                layout => crate::launch::Fp8Groups::grouped_as(layout, p.batch.count),
            },
        }
    }
}

/// The rows of op(A) that the `outliers` option makes 1000× larger.
pub const OUTLIER_EVERY: u32 = 97;
/// How much larger those rows are.
pub const OUTLIER_FACTOR: f32 = 1000.0;

/// The inputs of an FP8 GEMM: the data before quantisation (for the precision experiment,
/// which measures what quantisation loses), the operands the kernel gets, and C.
pub struct Fp8Inputs {
    /// A before quantisation, stored k×m (`lda`), padding NaN.
    pub a_source: Matrix<f32>,
    /// B before quantisation, stored k×n (`ldb`), padding NaN.
    pub b_source: Matrix<f32>,
    /// A quantised.
    pub a: Quantized,
    /// B quantised.
    pub b: Quantized,
    /// C before the GEMM: m×n (`ldc`), bf16, padding NaN.
    pub c: Matrix<half::bf16>,
    /// The epilogue's bias ([`Fp8Problem::bias_len`] values, bf16 as D; empty without one).
    pub bias: Vec<half::bf16>,
}

impl Fp8Inputs {
    /// The inputs of `p`, seeded as the module's other inputs are.
    pub fn generate(p: &Fp8Problem) -> Self {
        let s = &p.shape;
        let (mut a, b, c, bias) = match p.init {
            Init::Random => {
                let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
                let mut uniform = move || rng.random_range(-1.0..1.0f64);
                let a = Matrix::from_fn(s.k, s.m, s.lda, f32::NAN, |_, _| uniform() as f32);
                let b = Matrix::from_fn(s.k, s.n, s.ldb, f32::NAN, |_, _| uniform() as f32);
                let c = Matrix::from_fn(s.m, s.n, s.ldc, half::bf16::NAN, |_, _| {
                    half::bf16::from_f64(uniform())
                });
                // Drawn last: a problem with a bias multiplies the same matrices.
                let bias = (0..p.bias_len())
                    .map(|_| half::bf16::from_f64(uniform()))
                    .collect();
                (a, b, c, bias)
            }
            Init::Seed => (
                Matrix::from_fn(s.k, s.m, s.lda, f32::NAN, |q, i| seed_a(i, q) as f32),
                Matrix::from_fn(s.k, s.n, s.ldb, f32::NAN, |q, j| seed_b(q, j) as f32),
                Matrix::from_fn(s.m, s.n, s.ldc, half::bf16::NAN, |_, _| half::bf16::ZERO),
                // A bias that steps through the activations' bend, as in 16 bits.
                (0..p.bias_len())
                    .map(|i| half::bf16::from_f64((i % 9) as f64 / 4.0 - 1.0))
                    .collect(),
            ),
        };
        if p.outliers {
            for i in (0..s.m).step_by(OUTLIER_EVERY as usize) {
                for q in 0..s.k {
                    a.data[(q + i * s.lda) as usize] *= OUTLIER_FACTOR;
                }
            }
        }
        Self {
            a: quantize(&a, Operand::A, p.scaling),
            b: quantize_as(&b, Operand::B, p.scaling, p.b_format),
            a_source: a,
            b_source: b,
            c,
            bias,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(m: u32, n: u32, k: u32, scaling: Scaling) -> Fp8Problem {
        Fp8Problem {
            b_format: Format::E4m3,
            shape: Shape {
                m,
                n,
                k,
                lda: k + 3,
                ldb: k + 1,
                ldc: m + 2,
            },
            alpha: 1.5,
            beta: 0.5,
            scaling,
            init: Init::Random,
            seed: 5,
            outliers: false,
            epilogue: kernels_gpu::fused::Epilogue::NONE,
            groups: crate::launch::Fp8Groups::NONE,
        }
    }

    #[test]
    fn block_scales_follow_the_documented_layouts() {
        // k = 300: 3 k-blocks; m = 5, n = 130: 2 n-blocks.
        let x = Fp8Inputs::generate(&problem(5, 130, 300, Scaling::Block));
        assert_eq!(x.a.scales.len(), 3 * 5);
        assert_eq!(x.b.scales.len(), 3 * 2);
        // A: row i of op(A) (stored column i), k-block kb at i + kb·m.
        assert_eq!(x.a.scale_index(299, 4), 4 + 2 * 5);
        assert_eq!(x.a.scale_index(127, 1), 1);
        assert_eq!(x.a.scale_index(128, 1), 1 + 5);
        // B: (n-block, k-block) at nb·3 + kb.
        assert_eq!(x.b.scale_index(256, 129), 3 + 2);
        assert_eq!(x.b.scale_index(0, 127), 0);
        // Each scale is its block's amax / 448: its largest element quantises to ±448.
        let amax = (128..256)
            .map(|q| x.a_source.at(q, 1).abs())
            .fold(0f32, f32::max);
        assert_eq!(x.a.scales[1 + 5], (amax as f64 / 448.0) as f32);
        let largest = (128..256)
            .map(|q| e4m3::to_f64(x.a.codes.at(q, 1)).abs())
            .fold(0f64, f64::max);
        assert_eq!(largest, 448.0);
    }

    #[test]
    fn dequantised_values_are_within_e4m3_rounding_of_the_data() {
        for scaling in [Scaling::PerTensor, Scaling::Block] {
            let x = Fp8Inputs::generate(&problem(7, 9, 200, scaling));
            let d = x.a.dequantize();
            for i in 0..7 {
                for q in 0..200 {
                    let (v, want) = (d.at(q, i), x.a_source.at(q, i) as f64);
                    let scale = x.a.scales[x.a.scale_index(q, i)] as f64;
                    // Half a unit of e4m3 (2⁻⁴ relative), or of its subnormal step 2⁻⁹.
                    let bound = (want.abs() / 16.0).max(scale * 2f64.powi(-10)) * 1.0001;
                    assert!(
                        (v - want).abs() <= bound,
                        "{scaling:?} {q},{i}: {v} vs {want}"
                    );
                }
            }
            assert!(e4m3::is_nan(x.a.codes.data[200]), "padding is NaN");
            assert!(d.data[200].is_nan());
        }
    }

    #[test]
    fn per_tensor_has_one_scale_and_zero_data_gets_scale_one() {
        let x = Fp8Inputs::generate(&problem(4, 4, 16, Scaling::PerTensor));
        assert_eq!((x.a.scales.len(), x.b.scales.len()), (1, 1));
        let zero = Matrix::from_fn(16, 4, 16, f32::NAN, |_, _| 0.0);
        let q = quantize(&zero, Operand::B, Scaling::Block);
        assert_eq!(q.scales, vec![1.0]);
        assert!(q.codes.data.iter().all(|&c| c == 0));
    }

    #[test]
    fn outliers_push_the_other_rows_into_the_subnormals_under_per_tensor_scaling() {
        // Every 97th row of op(A) 1000× larger: per tensor, the scale is about 1000/448, and
        // the ordinary rows' elements below 1000/448·2⁻⁶ ≈ 0.035 become e4m3 subnormals (fewer
        // significant bits, down to none); per block, only elements below 2⁻⁶/448 of their
        // row's largest would. e4m3 being floating point, the Frobenius error of uniform data
        // barely moves (2.51·10⁻² against 2.49·10⁻² here): the damage is to the small values.
        let quantised = |scaling| {
            let p = Fp8Problem {
                b_format: Format::E4m3,
                outliers: true,
                epilogue: kernels_gpu::fused::Epilogue::NONE,
                groups: crate::launch::Fp8Groups::NONE,
                ..problem(200, 8, 256, scaling)
            };
            Fp8Inputs::generate(&p)
        };
        let subnormal = |code: u8| code & 0x78 == 0;
        let (tensor, block) = (quantised(Scaling::PerTensor), quantised(Scaling::Block));
        let count = |x: &Fp8Inputs| {
            let mut n = 0;
            for i in (0..200).filter(|i| i % OUTLIER_EVERY != 0) {
                n += (0..256).filter(|&q| subnormal(x.a.codes.at(q, i))).count();
            }
            n
        };
        let amax = |i| {
            (0..256)
                .map(|q| tensor.a_source.at(q, i).abs())
                .fold(0f32, f32::max)
        };
        assert!(amax(0) > 900.0 && amax(97) > 900.0 && amax(1) <= 1.0 && amax(98) <= 1.0);
        let (t, b) = (count(&tensor), count(&block));
        // About 1.7 % of uniform [-1, 1) data lies below 0.035; per block, almost none.
        assert!(t > 500 && b < t / 20, "{t} vs {b}");
    }
}
