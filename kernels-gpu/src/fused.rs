//! Fused epilogues: what a linear layer does to its GEMM's result, done before C leaves the
//! registers.
//!
//! A layer of a transformer computes `act(W·x + b)`. As two kernels, the GEMM writes C and a
//! second kernel reads it back, adds the bias, applies the activation and writes it again: two
//! more trips of C through memory, and a launch. cuBLASLt fuses them into the GEMM's epilogue
//! (`CUBLASLT_EPILOGUE_BIAS`, `_RELU_BIAS`, `_GELU_BIAS`); a hand-written kernel gets the same
//! for the cost of a few instructions per element, since every value passes through the
//! epilogue's registers anyway.
//!
//! Every 16-bit kernel applies `D = act(alpha·acc + beta·C + bias)` where it rounds its result
//! ([`crate::pipeline::epilogue::fuse`]): the register epilogues, the
//! TMA-store epilogues (before `stmatrix` packs the pairs), the narrow decode kernel, stream-k's
//! finishing block and split-k's reduction (the partial products stay raw). The bias is one
//! 16-bit value per row of C (cuBLASLt's, the output features of `W·x` in column-major C) or
//! per column; the activations are cuBLASLt's ReLU and GELU (its tanh form) and SiLU, which
//! Llama's MLP uses (cuBLASLt has none):
//!
//! - GELU: `x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`;
//! - SiLU: `x·σ(x) = x/2·(1 + tanh(x/2))`, the same `tanh`, so both cost one `MUFU.TANH`
//!   ([`crate::device::tanh_approx`]) and three FMAs.
//!
//! The epilogue is a runtime word ([`Epilogue`]), not a type parameter: one compiled kernel
//! serves every epilogue. The Hopper kernels apply it in one pass over their registers before
//! the store, so a GEMM without one runs the store it always had after a single uniform branch.
//!
//! Measured (H100, bf16, Llama-3 8B's five layers with 4096 tokens, bias + GELU,
//! `docs/results/h100-2026-11-26-epilogue/`): 0.977–0.994× cuBLASLt's `GELU_BIAS` (geomean
//! of two runs; the fused GEMM takes what the plain one does), 1.18× our GEMM followed by
//! [`crate::variants::bias_activation`]; the plain GEMM unchanged within noise. The first
//! version, which applied the word pair by pair inside the stores, slowed the plain GEMM by
//! 20–25%: `docs/perf-notes.md` has the four steps.

use crate::device::half::{GlobalHalf, Half};
use crate::device::{tanh_approx, Real};

/// The activation applied last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Activation {
    Identity = 0,
    Relu = 1,
    /// The tanh approximation of GELU (cuBLASLt's `CUBLASLT_EPILOGUE_GELU`).
    Gelu = 2,
    /// `x·σ(x)`, also called swish.
    Silu = 3,
}

/// Where the bias vector runs: one value per row of C (length m), per column (length n), or
/// none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Bias {
    None = 0,
    PerRow = 1,
    PerColumn = 2,
}

/// A fused epilogue as a kernel receives it: one word, `bias | activation << 2`; 0 is none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct Epilogue(pub u32);

/// √(2/π) and √(2/π)·0.044715, GELU's constants.
const GELU_LINEAR: f32 = 0.797_884_6;
const GELU_CUBIC: f32 = 0.035_677_407;

impl Epilogue {
    pub const NONE: Epilogue = Epilogue(0);

    pub const fn new(bias: Bias, activation: Activation) -> Self {
        Epilogue(bias as u32 | (activation as u32) << 2)
    }

    #[inline(always)]
    pub fn is_none(self) -> bool {
        self.0 == 0
    }

    #[inline(always)]
    pub fn bias(self) -> Bias {
        match self.0 & 3 {
            1 => Bias::PerRow,
            2 => Bias::PerColumn,
            _ => Bias::None,
        }
    }

    #[inline(always)]
    pub fn activation(self) -> Activation {
        match (self.0 >> 2) & 3 {
            1 => Activation::Relu,
            2 => Activation::Gelu,
            3 => Activation::Silu,
            _ => Activation::Identity,
        }
    }

    /// GELU and SiLU as one formula, `x/2·(1 + tanh(x·(p + q·x²)))`: (p, q) = (√(2/π),
    /// √(2/π)·0.044715) for GELU, (1/2, 0) for SiLU (`x·σ(x) = x/2·(1 + tanh(x/2))`). One code
    /// path for both, whose constants are the runtime word's.
    #[inline(always)]
    fn tanh_form(self) -> Option<(f32, f32)> {
        match self.activation() {
            Activation::Gelu => Some((GELU_LINEAR, GELU_CUBIC)),
            Activation::Silu => Some((0.5, 0.0)),
            Activation::Identity | Activation::Relu => None,
        }
    }

    /// The activation, as the kernels compute it, on every value of `values`, the choice made
    /// once outside the loop (a kernel's registers: unrolled, straight-line code per activation).
    #[inline(always)]
    pub fn activate_all<const N: usize>(self, values: &mut [f32; N]) {
        match (self.activation(), self.tanh_form()) {
            (_, Some((p, q))) => values.iter_mut().for_each(|v| *v = tanh_form(*v, p, q)),
            (Activation::Relu, _) => values.iter_mut().for_each(|v| *v = relu(*v)),
            _ => {}
        }
    }
}

#[inline(always)]
fn relu(x: f32) -> f32 {
    if x > 0.0 {
        x
    } else {
        0.0
    }
}

#[inline(always)]
fn tanh_form(x: f32, p: f32, q: f32) -> f32 {
    let half = 0.5 * x;
    half.fma(tanh_approx(x * q.fma(x * x, p)), half)
}

/// The epilogue and its bias vector (16-bit, C's type; null without a bias), as the 16-bit
/// kernels carry them.
#[derive(Clone, Copy)]
pub struct Fused<H> {
    pub epilogue: Epilogue,
    pub bias: GlobalHalf<H>,
}

impl<H: Half> Fused<H> {
    /// No epilogue.
    #[inline(always)]
    pub fn none() -> Self {
        Fused {
            epilogue: Epilogue::NONE,
            bias: GlobalHalf::new(core::ptr::null()),
        }
    }

    /// The bias of element (row, col) of an m × n C. A row or column past C's edge (a pair that
    /// straddles it, whose outside half is never stored) reads the last value instead of past
    /// the vector.
    ///
    /// # Safety
    /// The bias vector, if the epilogue has one, holds m (per row) or n (per column) values.
    #[inline(always)]
    pub unsafe fn bias_at(&self, (row, col): (u32, u32), (m, n): (u32, u32)) -> f32 {
        let i = match self.epilogue.bias() {
            Bias::None => return 0.0,
            Bias::PerRow => row.min(m.saturating_sub(1)),
            Bias::PerColumn => col.min(n.saturating_sub(1)),
        };
        unsafe { self.bias.load(i as usize) }
    }

    /// `act(x + bias)` on a run of values at `at`, `at + step`, … of an m × n C (the scalar
    /// passes over C: split-k's reduction, the unfused kernel); nothing without an epilogue.
    ///
    /// # Safety
    /// As [`Fused::bias_at`].
    #[inline(always)]
    pub unsafe fn apply_run<const N: usize>(
        &self,
        values: [f32; N],
        at: (u32, u32),
        step: (u32, u32),
        size: (u32, u32),
    ) -> [f32; N] {
        if self.epilogue.is_none() {
            return values;
        }
        let mut out = core::array::from_fn(|q| {
            let q32 = q as u32;
            let here = (at.0 + q32 * step.0, at.1 + q32 * step.1);
            values[q] + unsafe { self.bias_at(here, size) }
        });
        self.epilogue.activate_all(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_round_trips_every_epilogue() {
        for bias in [Bias::None, Bias::PerRow, Bias::PerColumn] {
            for act in [
                Activation::Identity,
                Activation::Relu,
                Activation::Gelu,
                Activation::Silu,
            ] {
                let e = Epilogue::new(bias, act);
                assert_eq!((e.bias(), e.activation()), (bias, act));
                assert_eq!(
                    e.is_none(),
                    bias == Bias::None && act == Activation::Identity
                );
            }
        }
    }

    /// The f32 forms against their definitions in f64 (the emulator's tanh is exact, so the
    /// only differences are f32's roundings).
    #[test]
    fn activations_match_their_definitions() {
        let gelu = |x: f64| {
            0.5 * x
                * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x.powi(3))).tanh())
        };
        let silu = |x: f64| x / (1.0 + (-x).exp());
        for i in -400..=400 {
            let x = i as f32 / 40.0;
            let near = |got: f32, want: f64| (got as f64 - want).abs() <= 4e-7 * (1.0 + want.abs());
            let act = |a| {
                let mut v = [x];
                Epilogue::new(Bias::None, a).activate_all(&mut v);
                v[0]
            };
            assert!(near(act(Activation::Gelu), gelu(x as f64)), "gelu({x})");
            assert!(near(act(Activation::Silu), silu(x as f64)), "silu({x})");
            assert_eq!(act(Activation::Relu), x.max(0.0));
            assert_eq!(act(Activation::Identity), x);
        }
    }
}
