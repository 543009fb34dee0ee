//! The instruction mix of a range of instructions (count per opcode, read by [`Class`]), the
//! shares computed from it, and the shares the document states, to compare them with.
//!
//! # What the document counts
//! `001_…txt` reads the share of useful instructions off the PTX of the inner loop, counting
//! only `fma` and `ld.shared`: 1 FMA per 2 scalar loads in `v4` (1/3, "wasting 2/3 of the
//! instruction throughput"), 4 FMA per `ld.shared.v4` + `ld.shared` in `v5` (4/6 = 2/3), 16 per
//! two `ld.shared.v4` in `gemm_64x64` (8/9) and 64 per four in `gemm_128x128` (16/17).
//! [`Mix::fma_per_fma_and_shared_load`] is that count on the SASS; [`Mix::fma_share`] divides
//! by every instruction of the loop instead (address arithmetic, staging, the barrier, the
//! branch), which is what the issue slots really see.
use super::{access_bits, Class, Instruction, Precision};
use std::collections::BTreeMap;
use std::fmt;

/// The instruction mix of a run of instructions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mix {
    pub precision: Precision,
    /// Every instruction of the range.
    pub total: u32,
    /// Count per full opcode (`LDS.128`, `IMAD.WIDE.U32`, …), sorted by name.
    pub opcodes: BTreeMap<String, u32>,
}

impl Mix {
    pub fn of(instructions: &[Instruction], precision: Precision) -> Self {
        let mut opcodes = BTreeMap::new();
        for i in instructions {
            *opcodes.entry(i.opcode.clone()).or_insert(0) += 1;
        }
        Self {
            precision,
            total: instructions.len() as u32,
            opcodes,
        }
    }

    /// The opcodes of one class with their counts, most frequent first.
    pub fn opcodes_of(&self, class: Class) -> Vec<(&str, u32)> {
        let mut of: Vec<(&str, u32)> = self
            .opcodes
            .iter()
            .filter(|(op, _)| Class::of(op, self.precision) == class)
            .map(|(op, n)| (op.as_str(), *n))
            .collect();
        of.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        of
    }

    pub fn count(&self, class: Class) -> u32 {
        self.opcodes_of(class).iter().map(|(_, n)| n).sum()
    }

    /// Instructions of `class` moving `bits` per thread (`LDS.128`: `(SharedLoad, 128)`).
    pub fn count_bits(&self, class: Class, bits: u32) -> u32 {
        self.opcodes_of(class)
            .iter()
            .filter(|(op, _)| access_bits(op) == bits)
            .map(|(_, n)| n)
            .sum()
    }

    pub fn fma(&self) -> u32 {
        self.count(Class::Fma)
    }

    /// Useful FMA per instruction issued: FMA / every instruction of the loop.
    pub fn fma_share(&self) -> Fraction {
        Fraction::new(self.fma(), self.total)
    }

    /// The document's count: FMA / (FMA + shared loads), what `001` calls the useful share.
    /// `None` when the loop reads no shared memory (`v0`, `v1`: the count is not about them).
    pub fn fma_per_fma_and_shared_load(&self) -> Option<Fraction> {
        let shared = self.count(Class::SharedLoad);
        (shared > 0).then(|| Fraction::new(self.fma(), self.fma() + shared))
    }
}

/// A ratio of two counts, kept in lowest terms (`512/544` is `16/17`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fraction {
    pub numerator: u32,
    pub denominator: u32,
}

impl Fraction {
    pub const fn new(numerator: u32, denominator: u32) -> Self {
        let (mut a, mut b) = (numerator, denominator);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        let gcd = if a == 0 { 1 } else { a };
        Self {
            numerator: numerator / gcd,
            denominator: denominator / gcd,
        }
    }

    pub fn value(self) -> f64 {
        if self.denominator == 0 {
            0.0
        } else {
            self.numerator as f64 / self.denominator as f64
        }
    }
}

impl fmt::Display for Fraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.numerator, self.denominator)
    }
}

/// The useful shares `001_…txt` reads off its PTX (FMA / (FMA + `ld.shared`)), by the name of
/// our variant of that kernel, with the document's kernel name. All for `float`.
pub const DOCUMENT_SHARES: &[(&str, &str, Fraction)] = &[
    ("v4", "gemm_32x32_v4", Fraction::new(1, 3)),
    ("v5", "gemm_32x32_v5", Fraction::new(2, 3)),
    ("gemm64", "gemm_64x64", Fraction::new(8, 9)),
    ("gemm128", "gemm_128x128", Fraction::new(16, 17)),
];

/// The document's figure for one of our variants, with its kernel's name there. Only for f32:
/// a 16-byte load holds four floats but two doubles, so the f64 shares differ (gemm128: 8/9).
pub fn document_share(variant: &str, precision: Precision) -> Option<(&'static str, Fraction)> {
    if precision != Precision::F32 {
        return None;
    }
    DOCUMENT_SHARES
        .iter()
        .find(|(name, _, _)| *name == variant)
        .map(|(_, kernel, share)| (*kernel, *share))
}
