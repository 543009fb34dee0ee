//! e4m3 (OCP FP8 E4M3FN) on the host: the one conversion the quantiser needs, with the
//! semantics of the conversion a kernel would use, PTX's `cvt.rn.satfinite.e4m3x2.f32`.
//!
//! E4M3FN has a sign, 4 exponent bits (bias 7) and 3 mantissa bits; it gives up infinities
//! to keep the top binade: only `S.1111.111` (0x7F, 0xFF) is NaN, and `0.1111.110` is the
//! largest value, 448. Subnormals go down to 2⁻⁹.
//!
//! The conversion is the `float8` crate's: a port of CUDA's `cuda_fp8.hpp` (the host side of
//! `__nv_cvt_double_to_fp8`), rounding to nearest even, with `__NV_SATFINITE` (beyond 448 the
//! result is ±448; NaN stays NaN). The tests below hold it to the PTX semantics on the edge
//! cases and on all 256 codes. Only its conversions are used: its classification and
//! constants treat 0x7E as an infinity (E4M3 with infinities, not the FN variant the tensor
//! cores read) and its `MAX` is 416, so this module states its own [`E4M3_MAX`].
use float8::F8E4M3;

/// The largest finite e4m3 value, `0.1111.110` = 1.75·2⁸: what a quantiser maps |x|'s
/// maximum to, and what larger values saturate to.
pub const E4M3_MAX: f64 = 448.0;

/// `x` rounded to nearest even e4m3, saturated to ±448, NaN kept: the code a kernel's
/// `cvt.rn.satfinite.e4m3x2.f32` would produce. Taking f64 lets the quantiser convert
/// `x / scale` without first rounding it to f32 (for an f32 `x` it is the same).
pub fn from_f64(x: f64) -> u8 {
    F8E4M3::from_f64(x).to_bits()
}

/// The exact value of an e4m3 code (every e4m3 value is an f64; NaN for 0x7F and 0xFF).
pub fn to_f64(code: u8) -> f64 {
    F8E4M3::from_bits(code).to_f64()
}

/// Whether a code is NaN (0x7F or 0xFF: E4M3FN's only non-finite codes).
pub fn is_nan(code: u8) -> bool {
    code & 0x7F == 0x7F
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of a code by its definition: (-1)^s · 2^(e-7) · 1.m, or 2⁻⁶ · 0.m when e = 0.
    fn by_definition(code: u8) -> f64 {
        let sign = if code & 0x80 != 0 { -1.0 } else { 1.0 };
        let (e, m) = (((code >> 3) & 0xF) as i32, (code & 7) as f64);
        if code & 0x7F == 0x7F {
            f64::NAN
        } else if e == 0 {
            sign * 2f64.powi(-6) * m / 8.0
        } else {
            sign * 2f64.powi(e - 7) * (1.0 + m / 8.0)
        }
    }

    #[test]
    fn every_code_decodes_to_its_definition_and_converts_back_to_itself() {
        for code in 0..=255u8 {
            let v = to_f64(code);
            let want = by_definition(code);
            if want.is_nan() {
                assert!(v.is_nan() && is_nan(code), "{code:#04x}");
                assert!(is_nan(from_f64(v)), "NaN stays NaN: {code:#04x}");
            } else {
                assert_eq!(v.to_bits(), want.to_bits(), "{code:#04x}");
                assert!(!is_nan(code));
                assert_eq!(from_f64(v), code, "{code:#04x} = {v}");
                assert_eq!(from_f64(v as f32 as f64), code, "exact in f32 too");
            }
        }
        assert_eq!(to_f64(0x7E), E4M3_MAX);
        assert_eq!(to_f64(0x01), 2f64.powi(-9));
    }

    #[test]
    fn conversion_rounds_to_nearest_even_and_saturates_like_cvt_rn_satfinite() {
        let t = |e: i32| 2f64.powi(e);
        #[rustfmt::skip]
        let cases: [(f64, f64); 22] = [
            (0.0, 0.0),
            (1.0, 1.0),
            // Halfway between 1 (mantissa 000) and 1.125 (001): to the even 1.
            (1.0625, 1.0),
            // Halfway between 1.125 (001) and 1.25 (010): to the even 1.25.
            (1.1875, 1.25),
            // Just above halfway: up.
            (1.0625 + t(-20), 1.125),
            (448.0, 448.0),
            // Between 448 and 464 (halfway to the 480 E4M3FN lacks): down to 448.
            (450.0, 448.0),
            // 464 is halfway between 448 (110, even) and 480: to even 448 (and past it the
            // NaN code would follow; satfinite clamps instead).
            (464.0, 448.0),
            (465.0, 448.0),
            (1.0e6, 448.0),
            (f64::INFINITY, 448.0),
            (f64::MAX, 448.0),
            // Subnormals are exact: 2⁻⁹ is the smallest, 7·2⁻⁹ the largest.
            (t(-9), t(-9)),
            (7.0 * t(-9), 7.0 * t(-9)),
            (t(-6), t(-6)),
            // 2⁻¹⁰ is halfway between 0 and 2⁻⁹: to even 0.
            (t(-10), 0.0),
            (t(-10) + t(-30), t(-9)),
            // 3·2⁻¹¹ = 0.75·2⁻⁹: nearer 2⁻⁹.
            (3.0 * t(-11), t(-9)),
            // 3·2⁻¹⁰ = 1.5·2⁻⁹ is halfway between 1 and 2 units: to even 2·2⁻⁹.
            (3.0 * t(-10), 2.0 * t(-9)),
            (1e-30, 0.0),
            // Negative values mirror the positive ones.
            (-1.0625, -1.0),
            (-464.0, -448.0),
        ];
        for (x, want) in cases {
            let got = to_f64(from_f64(x));
            assert_eq!(got, want, "e4m3({x:e})");
            assert_eq!(to_f64(from_f64(-x)), -want, "e4m3({:e})", -x);
            if x.abs() <= f32::MAX as f64 {
                assert_eq!(to_f64(from_f64(x as f32 as f64)), want, "f32 {x:e}");
            }
        }
        // -3·2⁻¹¹ and -2⁻¹⁰ keep their sign (-0 for the latter).
        assert_eq!(from_f64(-3.0 * t(-11)), 0x81);
        assert_eq!(from_f64(-t(-10)), 0x80);
        assert!(is_nan(from_f64(f64::NAN)));
        assert!(is_nan(from_f64(-f64::NAN)));
        assert_eq!(from_f64(f64::NEG_INFINITY), 0xFE);
    }

    #[test]
    fn the_crates_own_constants_are_not_e4m3fn() {
        // Why this module has its own E4M3_MAX: float8 0.7 counts 0x7E (448) as infinite.
        assert_eq!(F8E4M3::MAX.to_f64(), 416.0);
        assert!(F8E4M3::from_bits(0x7E).is_infinite());
    }
}
