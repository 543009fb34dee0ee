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
//! finishing block and split-k's reduction (the partial products stay raw). The FP8 kernels
//! store their bf16 D through the same functions, so they apply it too
//! ([`crate::gemm::Fp8GemmArgs`]'s `fused`; the per-tensor scales go into alpha first). The
//! bias is one
//! 16-bit value per row of C (cuBLASLt's, the output features of `W·x` in column-major C) or
//! per column; the activations are cuBLASLt's ReLU and GELU (its tanh form) and SiLU, which
//! Llama's MLP uses (cuBLASLt has none):
//!
//! - GELU: `x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`;
//! - SiLU: `x·σ(x) = x/2·(1 + tanh(x/2))`, the same `tanh`, so both cost one `MUFU.TANH`
//!   ([`crate::device::tanh_approx`]) and three FMAs.
//!
//! **D's amax.** A layer whose output feeds an FP8 layer must know the largest |D| to choose
//! the scale that maps D onto e4m3 (`448 / amax`: TransformerEngine's current scaling). A
//! separate pass would read D once more; here the same epilogue gathers it
//! ([`Fused::largest_magnitude`] in each thread, over the values C holds, then
//! [`Fused::gather_amax`] in each warp: five shuffles and one atomic maximum on the bits, after
//! the store), and a one-thread kernel after the GEMM ([`finish_amax`]) writes the amax and its
//! scale and zeroes the word for the next launch. The emulator runs the same atomics; the
//! host's check holds the amax against C exactly (rounding is monotonic, so C's largest
//! element is the amax rounded to C's type).
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
use crate::device::{atomic_max_u32, lane_id, magnitude_bits, tanh_approx, warp_max_u32, Real};

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

/// A fused epilogue as a kernel receives it: one word, `bias | activation << 2 | amax << 4`;
/// 0 is none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct Epilogue(pub u32);

/// The word's bit that asks for D's amax ([`Fused::gather_amax`]).
const AMAX_BIT: u32 = 1 << 4;

/// The largest finite e4m3 value: the scale for the next layer maps D's amax onto it.
pub const E4M3_MAX: f32 = 448.0;

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

    /// This epilogue, also gathering the largest |D| of the GEMM ([`Fused::gather_amax`]).
    pub const fn with_amax(self) -> Self {
        Epilogue(self.0 | AMAX_BIT)
    }

    /// Whether it gathers D's amax.
    #[inline(always)]
    pub fn amax(self) -> bool {
        self.0 & AMAX_BIT != 0
    }

    /// The same bias and activation, without the amax.
    pub const fn without_amax(self) -> Self {
        Epilogue(self.0 & !AMAX_BIT)
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

/// The epilogue, its bias vector (16-bit, C's type; null without a bias) and the word its amax
/// gathers into (null without one), as the 16-bit kernels carry them.
#[derive(Clone, Copy)]
pub struct Fused<H> {
    pub epilogue: Epilogue,
    pub bias: GlobalHalf<H>,
    /// The first of the amax's three words ([`finish_amax`]): the bits of the largest |D| so
    /// far, which every warp raises with one atomic maximum.
    pub amax: *mut u32,
}

impl<H: Half> Fused<H> {
    /// No epilogue.
    #[inline(always)]
    pub fn none() -> Self {
        Fused {
            epilogue: Epilogue::NONE,
            bias: GlobalHalf::new(core::ptr::null()),
            amax: core::ptr::null_mut(),
        }
    }

    /// The amax epilogue's first half, in the thread: the largest |v| of `values` that C
    /// holds (`inside(i)`: value `i` lies within C; a tile's values past m or n are never
    /// stored, and must not count), as its bits; 0 without the amax.
    #[inline(always)]
    pub fn largest_magnitude<const N: usize>(
        &self,
        values: &[f32; N],
        inside: impl Fn(usize) -> bool,
    ) -> u32 {
        if !self.epilogue.amax() {
            return 0;
        }
        let mut largest = 0u32;
        for (i, v) in values.iter().enumerate() {
            if inside(i) {
                largest = largest.max(magnitude_bits(*v));
            }
        }
        largest
    }

    /// The amax epilogue's second half, in the warp: raises the amax word to the largest of
    /// the lanes' `largest` ([`Fused::largest_magnitude`]). The lanes' maxima meet in a
    /// butterfly of shuffles, and lane 0 alone adds the warp's with one atomic maximum on the
    /// bits: a non-negative f32's bits order as its value does, and a NaN's lie above
    /// infinity's, so a NaN in D shows. Nothing without the amax. All 32 lanes of the warp
    /// call it together; the kernels call it after their store, when the tile's values no
    /// longer hold registers (before it, the shuffles' registers made ptxas spill in the
    /// stream-k and tile-queue kernels).
    ///
    /// # Safety
    /// With the amax, `self.amax` points to a word of the launch.
    #[inline(always)]
    pub unsafe fn gather_amax(&self, largest: u32) {
        if !self.epilogue.amax() {
            return;
        }
        let largest = warp_max_u32(largest);
        if lane_id() == 0 {
            unsafe { atomic_max_u32(self.amax, largest) };
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

/// The scale that maps `amax` onto e4m3's range, `448 / amax`, for the next layer's
/// quantization (TransformerEngine's current scaling, without a margin): 1 where the amax is
/// zero, infinite or NaN (no scale would serve), and the largest f32 where the quotient
/// overflows (a subnormal amax).
#[inline(always)]
pub fn e4m3_scale(amax: f32) -> f32 {
    if amax > 0.0 && amax.is_finite() {
        (E4M3_MAX / amax).min(f32::MAX)
    } else {
        1.0
    }
}

/// Where [`finish_amax`] leaves D's amax and its scale: words 1 and 2, this many bytes after
/// the first.
pub const AMAX_RESULT_OFFSET: u64 = 4;

/// D's amax and its e4m3 scale as [`finish_amax`] leaves them in the three words.
pub fn amax_of(words: &[u32; 3]) -> [f32; 2] {
    [f32::from_bits(words[1]), f32::from_bits(words[2])]
}

/// The amax epilogue's last step, a kernel of one thread after the GEMM (its entry point
/// `gemm_amax_scale`): `words[0]`, the bits the GEMM's warps raised, becomes D's amax in
/// `words[1]` (an f32) and its e4m3 scale in `words[2]`, and goes back to zero for the next
/// GEMM. So a plan's three words serve every launch, and a replayed CUDA graph finds the
/// accumulator zeroed by the replay before it, with no memset of its own.
///
/// Plain loads and stores: one thread, after the GEMM in stream order, which makes the GEMM's
/// atomics visible to it.
///
/// # Safety
/// `words` points to three words, the first zero before the GEMM.
pub unsafe fn finish_amax(words: *mut u32) {
    unsafe {
        let bits = core::ptr::read_volatile(words);
        core::ptr::write_volatile(words, 0);
        core::ptr::write_volatile(words.add(1), bits);
        core::ptr::write_volatile(words.add(2), e4m3_scale(f32::from_bits(bits)).to_bits());
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
