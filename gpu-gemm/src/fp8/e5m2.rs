//! e5m2 (OCP FP8 E5M2) on the host, as [`super::e4m3`] is for e4m3: the conversion of PTX's
//! `cvt.rn.satfinite.e5m2x2.f32`, the format of the gradients in FP8 training's backward pass
//! (B of `--dtype e4m3-e5m2`).
//!
//! E5M2 has a sign, 5 exponent bits (bias 15) and 2 mantissa bits, and keeps IEEE's special
//! codes: `S.11111.00` is ±∞ and `S.11111.xx` NaN, so its largest value is `0.11110.11` =
//! 57 344 and its smallest subnormal 2⁻¹⁶. It is binary16's top byte. Against e4m3 it trades
//! one bit of precision for twice the exponent range (2⁻¹⁶…57 344 against 2⁻⁹…448), which
//! gradients, spread over many more binades than activations, need.
//!
//! The conversion is the `float8` crate's `F8E5M2::from_f64` (`cuda_fp8.hpp`'s, with
//! `__NV_SATFINITE`: past 57 344 the result is ±57 344, NaN stays NaN); the tests hold it to
//! the definition on all 256 codes and to round-to-nearest-even on the edges.
use float8::F8E5M2;

/// The largest finite e5m2 value, `0.11110.11` = 1.75·2¹⁵.
pub const E5M2_MAX: f64 = 57344.0;

/// `x` rounded to nearest even e5m2, saturated to ±57 344, NaN kept: the code of
/// `cvt.rn.satfinite.e5m2x2.f32`.
pub fn from_f64(x: f64) -> u8 {
    F8E5M2::from_f64(x).to_bits()
}

/// The exact value of an e5m2 code (every e5m2 value is an f64; ±∞ and NaN as IEEE's).
pub fn to_f64(code: u8) -> f64 {
    F8E5M2::from_bits(code).to_f64()
}

/// Whether a code is NaN (`S.11111.01` to `S.11111.11`).
pub fn is_nan(code: u8) -> bool {
    code & 0x7C == 0x7C && code & 0x03 != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of a code by its definition: (-1)^s · 2^(e-15) · 1.m, 2⁻¹⁴ · 0.m when e = 0.
    fn by_definition(code: u8) -> f64 {
        let sign = if code & 0x80 != 0 { -1.0 } else { 1.0 };
        let (e, m) = (((code >> 2) & 0x1F) as i32, (code & 3) as f64);
        match e {
            31 if m == 0.0 => sign * f64::INFINITY,
            31 => f64::NAN,
            0 => sign * 2f64.powi(-14) * m / 4.0,
            _ => sign * 2f64.powi(e - 15) * (1.0 + m / 4.0),
        }
    }

    #[test]
    fn every_code_decodes_to_its_definition_and_finite_ones_convert_back_to_themselves() {
        for code in 0..=255u8 {
            let (v, want) = (to_f64(code), by_definition(code));
            // The device layer's decoding (the emulator's `wgmma`) agrees too.
            let device = kernels_gpu::device::fp8::E5m2(code).to_f32() as f64;
            if want.is_nan() {
                assert!(v.is_nan() && device.is_nan() && is_nan(code), "{code:#04x}");
                assert!(is_nan(from_f64(v)), "NaN stays NaN: {code:#04x}");
            } else {
                assert_eq!(v.to_bits(), want.to_bits(), "{code:#04x}");
                assert_eq!(device.to_bits(), want.to_bits(), "device {code:#04x}");
                assert!(!is_nan(code));
                if want.is_finite() {
                    assert_eq!(from_f64(v), code, "{code:#04x} = {v}");
                }
            }
        }
        assert_eq!(to_f64(0x7B), E5M2_MAX);
        assert_eq!(to_f64(0x01), 2f64.powi(-16));
    }

    #[test]
    fn conversion_rounds_to_nearest_even_and_saturates_like_cvt_rn_satfinite() {
        let t = |e: i32| 2f64.powi(e);
        #[rustfmt::skip]
        let cases: [(f64, f64); 14] = [
            (0.0, 0.0),
            (1.0, 1.0),
            // Halfway between 1 (mantissa 00) and 1.25 (01): to the even 1.
            (1.125, 1.0),
            // Halfway between 1.25 (01) and 1.5 (10): to the even 1.5.
            (1.375, 1.5),
            (1.125 + t(-30), 1.25),
            (57344.0, 57344.0),
            // 61 440 is halfway between 57 344 (11, odd) and 65 536 (∞): satfinite keeps 57 344.
            (61440.0, 57344.0),
            (1.0e9, 57344.0),
            (f64::INFINITY, 57344.0),
            // Subnormals: 2⁻¹⁶ is the smallest; 2⁻¹⁷ is halfway to 0: to even 0.
            (t(-16), t(-16)),
            (t(-17), 0.0),
            (t(-17) + t(-40), t(-16)),
            (3.0 * t(-16), 3.0 * t(-16)),
            // Far below the range: 0.
            (1e-30, 0.0),
        ];
        for (x, want) in cases {
            assert_eq!(to_f64(from_f64(x)), want, "e5m2({x:e})");
            assert_eq!(to_f64(from_f64(-x)), -want, "e5m2({:e})", -x);
        }
        assert!(is_nan(from_f64(f64::NAN)));
        assert_eq!(from_f64(f64::NEG_INFINITY), 0xFB);
    }
}
