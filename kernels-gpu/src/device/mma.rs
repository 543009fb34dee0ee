//! The tensor cores through `mma.sync` (sm_80 and newer): a warp multiplies two small matrices
//! held in its lanes' registers and adds a third, `D = A·B + C`, in one instruction.
//!
//! Each lane holds a *fragment* of every operand: a few elements at positions the PTX ISA fixes
//! (section 9.7.14.5, "Matrix Fragments for mma.m16n8k8" and its neighbours). With
//! `g = lane / 4` (the ISA's `groupID`) and `t = lane % 4` (`threadID_in_group`):
//!
//! ```text
//! m16n8k8, TF32:   A (16×8):  a0 = A[g][t]    a1 = A[g+8][t]    a2 = A[g][t+4]   a3 = A[g+8][t+4]
//!                  B (8×8):   b0 = B[t][g]    b1 = B[t+4][g]
//!                  C, D:      c0 = C[g][2t]   c1 = C[g][2t+1]   c2 = C[g+8][2t]  c3 = C[g+8][2t+1]
//! m16n8k4, f64:    A (16×4):  a0 = A[g][t]    a1 = A[g+8][t]
//!                  B (4×8):   b0 = B[t][g]
//!                  C, D:      as m16n8k8
//! m16n8k16, f64:   A (16×16): a(2j) = A[g][t+4j]   a(2j+1) = A[g+8][t+4j]   (j = 0..4)
//!                  B (16×8):  b(j) = B[t+4j][g]
//!                  C, D:      as m16n8k8
//! ```
//!
//! A kernel may fill its fragments in any order and from any shared-memory layout, as long as
//! each register ends up holding the element the table gives it. Two freedoms follow from the
//! arithmetic and the fast kernels use them: the k index of an `mma` is summed over, so the k
//! columns of A may stand for any k indices as long as B's rows stand for the same ones; and
//! row `g` of the tile may stand for any row of C, as long as the epilogue writes `D`'s row `g`
//! there.
//!
//! The emulator ([`crate::emu`]) computes `D` from exactly this table, independently of any
//! kernel: a kernel that puts an element into the wrong register gets a wrong product there as
//! on the GPU (`tests/tests/emulator_mma.rs` plants one). The three roles are three types,
//! [`FragA`], [`FragB`] and [`Accum`], so that an A fragment passed as B does not compile, and
//! TF32 operands are [`Tf32`] values, which only [`Tf32::round`] makes: unrounded f32 bits
//! cannot reach the tensor cores.
//!
//! Every lane of the warp must execute the same `mma` together (`.sync.aligned`): the emulator
//! reports a warp whose lanes arrive at different warp-wide operations, or with lanes missing.
use super::backend;

/// A TF32 operand of the tensor cores, the 19-bit format: the sign, f32's 8 exponent bits and
/// 10 explicit mantissa bits (f16's precision with f32's range), kept as the 32 register bits
/// the `mma` instruction reads. The tensor core reads only the top 19 of them; the value of a
/// `Tf32` is those bits with the 13 low ones cleared.
///
/// Two ways in: [`Tf32::round`] (`cvt.rna.tf32.f32`, rounding to nearest, an instruction
/// sequence per element in SASS) and [`Tf32::truncate`] (the f32 bits as they are, no
/// instruction: the tensor core's reading of them is truncation toward zero). The PTX ISA calls
/// the internal layout of `.tf32` implementation-defined; that the H100 ignores the 13 low
/// bits is checked on the GPU by `tests/tests/gpu.rs`
/// (`tensor_cores_read_tf32_operands_as_the_emulator_does`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(transparent)]
pub struct Tf32(u32);

/// The bits of an f32 that a TF32 operand keeps.
const TF32_MASK: u32 = 0xFFFF_E000;

impl Tf32 {
    /// `cvt.rna.tf32.f32`: `x` rounded to the nearest TF32 value, ties away from zero. The
    /// relative error is at most 2⁻¹¹. NaN stays NaN, infinities stay infinite, values that
    /// round past the largest finite TF32 become infinite.
    #[inline(always)]
    pub fn round(x: f32) -> Self {
        Tf32(backend::cvt_rna_tf32(x))
    }

    /// `x` rounded to nearest TF32, ties away from zero, as two instructions instead of
    /// `cvt.rna`'s sequence: for finite `x`, add half a TF32 ulp to the bits and let the tensor
    /// core truncate (the sum carries into bit 13 exactly when `cvt.rna` rounds up, and into the
    /// exponent, up to infinity, where it does); infinities and NaN pass unchanged. The value
    /// equals [`Tf32::round`]'s for every input but NaNs whose payload lies only in the 13 low
    /// bits (read as infinity).
    #[inline(always)]
    pub fn round_finite(x: f32) -> Self {
        let bits = x.to_bits();
        Tf32(if x.is_finite() { bits + 0x1000 } else { bits })
    }

    /// `x` as the tensor core reads unconverted f32 bits: truncated toward zero to TF32
    /// (relative error below 2⁻¹⁰), at no cost. What the fast TF32 kernel does, as the
    /// tensor cores do when `wgmma` reads f32 from shared memory.
    #[inline(always)]
    pub fn truncate(x: f32) -> Self {
        Tf32(x.to_bits())
    }

    /// The value the tensor core multiplies, as an f32 (exact: every TF32 value is an f32).
    #[inline(always)]
    pub fn to_f32(self) -> f32 {
        f32::from_bits(self.0 & TF32_MASK)
    }

    /// The register bits the `mma` instruction reads.
    #[inline(always)]
    pub fn to_bits(self) -> u32 {
        self.0
    }

    /// The 3xTF32 split of `x` into `big + small`: `big` is `x` rounded to nearest TF32, ties
    /// away from zero, as two integer instructions (add half a TF32 ulp to the bits, clear the
    /// 13 low ones: equal to `cvt.rna.tf32.f32` for every finite `x` whose rounding stays
    /// finite); `small = x - big` is exact in f32 and read truncated by the tensor core. So
    /// `x = big + small` up to 2⁻²¹ relative (below 2⁻¹⁰ of a part below 2⁻¹¹·|x|), with
    /// random sign. Infinite or NaN `x` give a NaN `small`, as `x - x` would.
    #[inline(always)]
    pub fn split(x: f32) -> (Self, Self) {
        let big = Tf32(x.to_bits().wrapping_add(0x1000) & TF32_MASK);
        (big, Self::truncate(x - big.to_f32()))
    }
}

/// This lane's share of the multiplicand A of one warp-wide `mma`: `N` elements at the
/// positions of the module's table.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(transparent)]
pub struct FragA<E, const N: usize>(pub [E; N]);

/// This lane's share of the multiplicand B.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FragB<E, const N: usize>(pub [E; N]);

/// This lane's share of the accumulator C (in) or D (out).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Accum<E, const N: usize>(pub [E; N]);

impl<E: Copy + Default, const N: usize> Default for Accum<E, N> {
    fn default() -> Self {
        Accum([E::default(); N])
    }
}

/// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`: `D (16×8) = A (16×8)·B (8×8) + C` in
/// TF32 with f32 accumulation, for the whole warp (`HMMA.1688.F32.TF32` in SASS).
#[inline(always)]
pub fn mma_m16n8k8_tf32(a: &FragA<Tf32, 4>, b: &FragB<Tf32, 2>, c: Accum<f32, 4>) -> Accum<f32, 4> {
    let a = a.0.map(Tf32::to_bits);
    let b = b.0.map(Tf32::to_bits);
    Accum(backend::mma_m16n8k8_tf32(a, b, c.0))
}

/// `mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64`: `D (16×8) = A (16×4)·B (4×8) + C` with
/// FP64 fused multiply-adds, for the whole warp. Native on sm_90; on sm_80 it is issued as two
/// `m8n8k4` (rows 0–7 and 8–15), which compute the same thing.
#[inline(always)]
pub fn mma_m16n8k4_f64(a: &FragA<f64, 2>, b: &FragB<f64, 1>, c: Accum<f64, 4>) -> Accum<f64, 4> {
    Accum(backend::mma_m16n8k4_f64(a.0, b.0[0], c.0))
}

/// `mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64`: `D (16×8) = A (16×16)·B (16×8) + C`
/// (sm_90; on sm_80 four `m16n8k4` in k order).
#[inline(always)]
pub fn mma_m16n8k16_f64(a: &FragA<f64, 8>, b: &FragB<f64, 4>, c: Accum<f64, 4>) -> Accum<f64, 4> {
    Accum(backend::mma_m16n8k16_f64(a.0, b.0, c.0))
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::Tf32;

    fn tf32(x: f32) -> f32 {
        Tf32::round(x).to_f32()
    }

    #[test]
    fn rounds_to_ten_mantissa_bits_nearest_ties_away_from_zero() {
        let ulp = 2f32.powi(-10); // of a TF32 in [1, 2)
        assert_eq!(tf32(1.0), 1.0);
        assert_eq!(tf32(1.0 + ulp), 1.0 + ulp, "representable values are kept");
        // Just below, at, and just above half an ulp: down, away from zero, up.
        let half = ulp / 2.0;
        assert_eq!(tf32(1.0 + half - 2f32.powi(-23)), 1.0);
        assert_eq!(tf32(1.0 + half), 1.0 + ulp, "a tie goes away from zero");
        assert_eq!(tf32(-(1.0 + half)), -(1.0 + ulp));
        assert_eq!(tf32(1.0 + ulp + half), 1.0 + 2.0 * ulp, "not to even");
        // The carry out of the mantissa goes into the exponent.
        assert_eq!(tf32(2.0 - 2f32.powi(-23)), 2.0);
        // The 13 low bits are zero.
        assert_eq!(Tf32::round(std::f32::consts::PI).to_bits() & 0x1FFF, 0);
        assert!((tf32(std::f32::consts::PI) - std::f32::consts::PI).abs() <= 2f32.powi(-10));
    }

    #[test]
    fn special_values() {
        assert_eq!(tf32(f32::INFINITY), f32::INFINITY);
        assert_eq!(tf32(f32::NEG_INFINITY), f32::NEG_INFINITY);
        assert!(tf32(f32::NAN).is_nan());
        // A NaN whose payload lies only in the 13 dropped bits must not become infinity.
        assert!(tf32(f32::from_bits(0x7F80_0001)).is_nan());
        assert_eq!(
            tf32(f32::MAX),
            f32::INFINITY,
            "rounds past the largest TF32"
        );
        assert_eq!(tf32(-f32::MAX), f32::NEG_INFINITY);
        assert_eq!(tf32(0.0).to_bits(), 0);
        assert_eq!(tf32(-0.0).to_bits(), 0x8000_0000);
        // Subnormals round on the same bit: 0x1FFF rounds up into bit 13.
        assert_eq!(
            Tf32::round(f32::from_bits(0x0000_1FFF)).to_bits(),
            0x0000_2000
        );
        assert_eq!(Tf32::round(f32::from_bits(0x0000_0FFF)).to_bits(), 0);
    }

    #[test]
    fn round_finite_is_cvt_rna_for_every_value_but_low_payload_nans() {
        // Every 2^-10 step of the mantissa at a few exponents, with all 13 low bit patterns
        // near the rounding point, plus the largest finite values and the specials.
        let mut inputs = vec![
            f32::MAX,
            -f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
        ];
        inputs.push(f32::NAN);
        for exponent in [0x0000_0000u32, 0x0080_0000, 0x3F80_0000, 0x7F00_0000] {
            for mantissa_high in (0..0x80_0000u32).step_by(0x2000 * 97) {
                for low in [0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF] {
                    inputs.push(f32::from_bits(exponent | mantissa_high | low));
                    inputs.push(-f32::from_bits(exponent | mantissa_high | low));
                }
            }
        }
        for x in inputs {
            let (fast, exact) = (Tf32::round_finite(x).to_f32(), tf32(x));
            assert!(
                fast.to_bits() == exact.to_bits() || (fast.is_nan() && exact.is_nan()),
                "{x:e} ({:#010x}): {fast:e} vs cvt.rna {exact:e}",
                x.to_bits()
            );
        }
    }

    #[test]
    fn truncation_keeps_the_top_19_bits_toward_zero() {
        let ulp = 2f32.powi(-10);
        let x = 1.0 + ulp - 2f32.powi(-23);
        assert_eq!(
            Tf32::truncate(x).to_f32(),
            1.0,
            "toward zero, not to nearest"
        );
        assert_eq!(Tf32::truncate(-x).to_f32(), -1.0);
        assert_eq!(
            Tf32::truncate(x).to_bits(),
            x.to_bits(),
            "no instruction: the bits pass"
        );
        assert_eq!(Tf32::truncate(f32::INFINITY).to_f32(), f32::INFINITY);
        assert!(Tf32::truncate(f32::NAN).to_f32().is_nan());
    }

    #[test]
    fn split_recovers_f32_accuracy() {
        for x in [std::f32::consts::PI, -0.123_456_79, 1.0e-3, 3.0e7] {
            assert_eq!(Tf32::split(x).0, Tf32::round(x), "big is the rounded x");
            let (big, small) = Tf32::split(x);
            let sum = big.to_f32() as f64 + small.to_f32() as f64;
            let error = ((sum - x as f64) / x as f64).abs();
            assert!(error <= 2f64.powi(-21), "{x}: {error:e}");
            let big_alone = ((big.to_f32() as f64 - x as f64) / x as f64).abs();
            assert!(big_alone > 2f64.powi(-21), "{x}: the small part matters");
        }
    }
}
