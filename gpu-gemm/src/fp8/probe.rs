//! The probe that measures how Hopper's FP8 `wgmma` adds its products into the accumulator,
//! which the PTX ISA leaves unspecified ("the accumulation order, rounding and handling of
//! subnormal inputs are unspecified") and DeepSeek-V3's report describes as "about 14 bits".
//!
//! It runs `wgmma-fp8:2` itself on crafted inputs: row i of op(A) is one case, B is ones in
//! the first 32 of k (the first `wgmma`) and `2⁻ʲ` in column j for the next 32 (the second),
//! so element (i, j) is `big + small·2⁻ʲ` with `big` and `small` chosen per case; alpha is 1
//! and beta −1 with C = big, so D = acc − big is the small part that survived, a number of few
//! bits, exact in bf16. The cases vary how far below `big` the small part lies, whether it
//! arrives in the same `wgmma` as `big` or in the next one (through the accumulator), its
//! sign, and whether several small terms add up before being cut.
//!
//! [`Model`] is a family of candidate behaviours; the GPU test prints which ones predict every
//! case, and the emulator implements the one that does (`docs/hopper-isa-notes.md`). The probe
//! runs with B in e4m3 and in e5m2 (`wgmma…e4m3.e5m2`): the PTX ISA says no more of the
//! second's accumulation than of the first's.
use super::e4m3;
use super::quantize::Format;
use crate::launch::Launch;
use kernels_gpu::registry::Shape;

/// Cases (rows of op(A)); a multiple of 8.
pub const CASES: usize = 256;
/// Columns: the small part scaled by 2⁻ʲ in column j.
pub const COLUMNS: u32 = 8;
/// Two `wgmma`s of 32.
pub const K: u32 = 64;

/// One row of op(A): its 64 values, and C's value (`big`).
#[derive(Clone, Debug)]
pub struct Case {
    /// What the case asks.
    pub family: &'static str,
    /// A's row (e4m3 values, exact).
    pub a: [f64; K as usize],
    /// C, subtracted from the result (beta −1).
    pub c: f64,
}

/// B's column `j`: ones for the first `wgmma`, `2⁻ʲ` for the second.
pub fn b_column(j: u32) -> [f64; K as usize] {
    core::array::from_fn(|q| if q < 32 { 1.0 } else { 2f64.powi(-(j as i32)) })
}

/// The cases, in families.
pub fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let big = 256.0;
    let mut push = |family, terms: &[(usize, f64)]| {
        // Only values e4m3 holds exactly (below 2⁻⁶ its step is 2⁻⁹).
        if terms
            .iter()
            .any(|&(_, v)| e4m3::to_f64(e4m3::from_f64(v)) != v)
        {
            return;
        }
        let mut a = [0.0; K as usize];
        for &(q, v) in terms {
            a[q] = v;
        }
        cases.push(Case { family, a, c: big });
    };
    for e in 0..=9 {
        let small = 2f64.powi(-e);
        for (mantissa, name_across, name_within) in [
            (1.0, "across: big, then +2^-e", "within: big +2^-e"),
            (1.5, "across: +1.5·2^-e", "within: +1.5·2^-e"),
            (1.75, "across: +1.75·2^-e", "within: +1.75·2^-e"),
            (-1.0, "across: -2^-e", "within: -2^-e"),
            (-1.75, "across: -1.75·2^-e", "within: -1.75·2^-e"),
        ] {
            push(name_across, &[(0, big), (32, mantissa * small)]);
            push(name_within, &[(0, big), (1, mantissa * small)]);
        }
        // Eight small terms in the second `wgmma`: summed before the cut, or cut one by one?
        let eight: Vec<(usize, f64)> = (32..40).map(|q| (q, 0.75 * small)).collect();
        let mut terms = vec![(0, big)];
        terms.extend(eight);
        push("across: eight of +0.75·2^-e", &terms);
        let eight: Vec<(usize, f64)> = (1..9).map(|q| (q, 0.75 * small)).collect();
        let mut terms = vec![(0, big)];
        terms.extend(eight);
        push("within: eight of +0.75·2^-e", &terms);
    }
    cases.truncate(CASES);
    while cases.len() < CASES {
        let mut a = [0.0; K as usize];
        a[0] = big;
        cases.push(Case {
            family: "padding: big alone",
            a,
            c: big,
        });
    }
    cases
}

/// The probe's problem: m = [`CASES`], n = [`COLUMNS`], k = [`K`], TN, no padding.
pub fn shape() -> Shape {
    Shape {
        m: CASES as u32,
        n: COLUMNS,
        k: K,
        lda: K,
        ldb: K,
        ldc: CASES as u32,
    }
}

/// A (k × m) as e4m3 codes, B (k × n) as `b_format`'s (its ones and powers of two are exact
/// in both), C as bf16, all exact.
pub fn operands(cases: &[Case], b_format: Format) -> (Vec<u8>, Vec<u8>, Vec<half::bf16>) {
    let a = cases
        .iter()
        .flat_map(|c| c.a.iter().map(|&v| e4m3::from_f64(v)))
        .collect();
    let b = (0..COLUMNS)
        .flat_map(|j| b_column(j).map(|v| b_format.encode(v)))
        .collect();
    let c = (0..COLUMNS)
        .flat_map(|_| cases.iter().map(|c| half::bf16::from_f64(c.c)))
        .collect();
    (a, b, c)
}

/// The probe's operands as a launch takes them ([`operands`]' codes and C), scales 1.
pub fn launch_operands<'a>(
    (a, b, c): &'a (Vec<u8>, Vec<u8>, Vec<half::bf16>),
) -> crate::launch::Fp8Operands<'a> {
    crate::launch::Fp8Operands {
        a,
        b,
        scale_a: &[1.0],
        scale_b: &[1.0],
        c,
        groups: crate::launch::Fp8Groups::NONE,
        table: &[],
        fused: (kernels_gpu::fused::Epilogue::NONE, &[]),
    }
}

/// What survived in element (case `i`, column `j`) of the probe's D (`ldc` = the cases).
pub fn survived(d: &[half::bf16], cases: usize, i: usize, j: u32) -> f64 {
    d[i + j as usize * cases].to_f64()
}

/// How many of D's elements `model` predicts wrongly.
pub fn mispredicted(model: Model, cases: &[Case], d: &[half::bf16]) -> usize {
    (0..cases.len())
        .flat_map(|i| (0..COLUMNS).map(move |j| (i, j)))
        .filter(|&(i, j)| model.predict(&cases[i], j) != survived(d, cases.len(), i, j))
        .count()
}

/// The launch of `wgmma-fp8:2` for the probe's shape, B in `b_format`.
pub fn launch(b_format: Format) -> Launch {
    let k = kernels_gpu::registry::find("wgmma-fp8").expect("registered");
    super::run::kernel_launch(k, 2, (&shape(), 1), b_format.dtype())
}

/// A candidate behaviour of one FP8 `wgmma`: the accumulator and the 32 products are aligned to
/// the largest exponent among them, each is cut to `fraction_bits` bits below it (toward zero,
/// or to nearest), and the cut terms are added exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Model {
    /// Bits kept below the largest term's leading bit.
    pub fraction_bits: i32,
    /// Toward zero (`true`) or to nearest even.
    pub truncate: bool,
}

impl Model {
    /// Every candidate: 10 to 25 bits, truncated or rounded.
    pub fn candidates() -> Vec<Model> {
        (10..=25)
            .flat_map(|fraction_bits| {
                [true, false].map(|truncate| Model {
                    fraction_bits,
                    truncate,
                })
            })
            .collect()
    }

    /// One `wgmma`: `c` plus the products, as this model adds them.
    pub fn wgmma(self, c: f32, products: &[f64]) -> f32 {
        let terms = products.iter().copied().chain([c as f64]);
        let top = terms
            .clone()
            .filter(|t| *t != 0.0)
            .map(|t| ((t.to_bits() >> 52) & 0x7FF) as i32 - 1023)
            .max();
        let Some(top) = top else { return 0.0 };
        let unit = 2f64.powi(top - self.fraction_bits);
        let cut = |t: f64| {
            let units = t / unit;
            if self.truncate {
                units.trunc()
            } else {
                units.round_ties_even()
            }
        };
        (terms.map(cut).sum::<f64>() * unit) as f32
    }

    /// Element (case, j) of D: the kernel's slice of 128 is four `wgmma`s (the last two on the
    /// zeros the TMA engine filled in past k), then `acc − big` (exact in f32, then bf16).
    pub fn predict(self, case: &Case, j: u32) -> f64 {
        let b = b_column(j);
        let mut products: Vec<f64> = case.a.iter().zip(b).map(|(a, b)| a * b).collect();
        products.resize(128, 0.0);
        let acc = products
            .chunks(32)
            .fold(0.0f32, |acc, step| self.wgmma(acc, step));
        half::bf16::from_f32(acc - case.c as f32).to_f64()
    }
}
