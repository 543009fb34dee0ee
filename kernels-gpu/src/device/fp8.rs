//! 8-bit floating-point elements as the tensor cores read them: OCP FP8 **E4M3** ("e4m3fn"), 1
//! sign bit, 4 bits of exponent (bias 7), 3 bits of mantissa; no infinities, `S.1111.111` is
//! NaN, the largest finite value is ±448 and the smallest subnormal 2⁻⁹. And **E5M2**, the
//! format of gradients in FP8 training's backward pass: 5 bits of exponent (bias 15), 2 of
//! mantissa, IEEE-like (infinities `S.11111.00`, NaNs `S.11111.xx`), the largest finite value
//! ±57 344 and the smallest subnormal 2⁻¹⁶: twice e4m3's exponent range for one bit less of
//! precision. A `wgmma` takes either for either operand ([`Fp8Format`]).
//!
//! A kernel never computes in 8 bits and never converts them: the TMA engine copies the bytes,
//! the `wgmma` reads them ([`super::wgmma::Fp8Wgmma`]) and accumulates in f32 registers, and the
//! epilogue writes bf16. The host quantises (`gpu-gemm/src/fp8/`: `cvt.rn.satfinite`'s rounding,
//! to nearest even, saturating at ±448). The one conversion here is the exact value of a code,
//! which the emulator's `wgmma` needs.

/// An e4m3 element: its bits.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct E4m3(pub u8);

impl E4m3 {
    /// The largest finite value, `0.1111.110` = 1.75 · 2⁸.
    pub const MAX: f32 = 448.0;

    /// The exact value (every e4m3 value is an f32); NaN for the two NaN codes.
    #[inline(always)]
    pub fn to_f32(self) -> f32 {
        let sign = if self.0 & 0x80 != 0 { -1.0 } else { 1.0 };
        let (exponent, mantissa) = ((self.0 >> 3) & 0xF, self.0 & 0x7);
        if exponent == 0xF && mantissa == 0x7 {
            return f32::NAN;
        }
        let magnitude = if exponent == 0 {
            // Subnormal: 0.mmm · 2⁻⁶.
            mantissa as f32 * (1.0 / 512.0)
        } else {
            f32::from_bits(((exponent as u32 + 127 - 7) << 23) | ((mantissa as u32) << 20))
        };
        sign * magnitude
    }
}

/// An e5m2 element: its bits.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct E5m2(pub u8);

impl E5m2 {
    /// The largest finite value, `0.11110.11` = 1.75 · 2¹⁵.
    pub const MAX: f32 = 57344.0;

    /// The exact value (every e5m2 value is an f32): ±∞ and NaN as IEEE's.
    #[inline(always)]
    pub fn to_f32(self) -> f32 {
        let sign = if self.0 & 0x80 != 0 { -1.0 } else { 1.0 };
        let (exponent, mantissa) = ((self.0 >> 2) & 0x1F, self.0 & 0x3);
        let magnitude = match exponent {
            0x1F if mantissa == 0 => f32::INFINITY,
            0x1F => return f32::NAN,
            // Subnormal: 0.mm · 2⁻¹⁴.
            0 => mantissa as f32 * (1.0 / 65536.0),
            _ => f32::from_bits(((exponent as u32 + 127 - 15) << 23) | ((mantissa as u32) << 21)),
        };
        sign * magnitude
    }
}

/// The 8-bit format of an operand, as a type: which `wgmma` reads it
/// ([`super::wgmma::Fp8Wgmma::mma_b`]). The FP8 kernels take B's format as a parameter (A is
/// e4m3).
pub trait Fp8Format: Copy + Default + 'static {
    /// Whether it is e5m2.
    const E5M2: bool;
}

impl Fp8Format for E4m3 {
    const E5M2: bool = false;
}

impl Fp8Format for E5m2 {
    const E5M2: bool = true;
}

#[cfg(test)]
mod tests {
    use super::{E4m3, E5m2};

    #[test]
    fn codes_decode_to_the_ocp_e4m3_values() {
        assert_eq!(E4m3(0x38).to_f32(), 1.0);
        assert_eq!(E4m3(0x7E).to_f32(), 448.0);
        assert_eq!(E4m3(0xFE).to_f32(), -448.0);
        assert_eq!(E4m3(0x01).to_f32(), 2f32.powi(-9));
        assert_eq!(E4m3(0x07).to_f32(), 7.0 * 2f32.powi(-9));
        assert_eq!(E4m3(0x08).to_f32(), 2f32.powi(-6));
        assert_eq!(E4m3(0x80).to_f32(), 0.0);
        assert!(E4m3(0x7F).to_f32().is_nan() && E4m3(0xFF).to_f32().is_nan());
        // Finite codes are ordered as their values: the 126 positive ones strictly increase.
        let positive: Vec<f32> = (0..0x7F).map(|c| E4m3(c).to_f32()).collect();
        assert!(positive.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn codes_decode_to_the_ocp_e5m2_values() {
        assert_eq!(E5m2(0x3C).to_f32(), 1.0);
        assert_eq!(E5m2(0x7B).to_f32(), 57344.0);
        assert_eq!(E5m2(0xFB).to_f32(), -57344.0);
        assert_eq!(E5m2(0x01).to_f32(), 2f32.powi(-16));
        assert_eq!(E5m2(0x03).to_f32(), 3.0 * 2f32.powi(-16));
        assert_eq!(E5m2(0x04).to_f32(), 2f32.powi(-14));
        assert_eq!(E5m2(0x3D).to_f32(), 1.25);
        assert_eq!(E5m2(0x7C).to_f32(), f32::INFINITY);
        assert_eq!(E5m2(0xFC).to_f32(), f32::NEG_INFINITY);
        assert!(E5m2(0x7D).to_f32().is_nan() && E5m2(0xFF).to_f32().is_nan());
        let positive: Vec<f32> = (0..0x7C).map(|c| E5m2(c).to_f32()).collect();
        assert!(positive.windows(2).all(|w| w[0] < w[1]));
    }
}
