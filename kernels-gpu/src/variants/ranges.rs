//! `ranges`: giving 3xTF32 back f32's exponent range, one power of two per row and column.
//!
//! **The problem.** 3xTF32 ([`super::wgmma_tf32`], chapter 1's `tc-3xtf32`) splits each input
//! into a TF32 `big` part and the TF32 part of `small = x − big`, about 2⁻¹¹·|x|, and adds
//! `small·big + big·small + big·big`. For |x| below about 2⁻¹¹⁵ the small part falls below
//! f32's normal range, and the tensor cores read subnormal inputs as zero: the correction
//! terms vanish and the product is as good as plain TF32's. On the H100, with A's rows scaled
//! into 2⁻¹²⁵…2⁻¹⁰⁰ and B's columns into 2⁰…2²⁰ (all normal numbers, every product in range),
//! `Auto(Math::Fp32Accurate)`'s error relative to Σ|a·b| was 4.3·10⁻⁵, 190× `Math::Strict`'s:
//! the contract ("an error at or below SGEMM's") did not hold near the bottom of the range.
//!
//! **The fix.** Multiplying a row of A or a column of B by a power of two is exact, and so is
//! dividing C's element by it again. So a pass before the GEMM finds the largest |x| of every
//! row of A and every column of B ([`max_abs_bits`], this file's kernel: one atomic maximum of
//! the bit patterns per row or column and slice of k, since for non-negative floats the order
//! of the bits is the order of the values); the 3xTF32 kernel scales each row of A by
//! `2^s_i` as it splits it and each column of B by `2^t_j` ([`exponent`]: the row's or
//! column's maximum lands in [1, 4)), and divides C's element (i, j) by `2^(s_i + t_j)`
//! before α and β ([`unscale`]). Every element of a row within 2¹⁰⁴ of the row's largest then
//! keeps a normal small part, whatever the row's own magnitude; and no product can overflow
//! (each is below 16).
//!
//! **What it costs.** The pass reads A and B once (at 4096³ in f32, 128 MiB: about 4% of the
//! GEMM's time on an H100); the kernel multiplies 16 values per slice in each consumer thread
//! and 4 per 16-byte chunk in each splitting thread, and multiplies each element of C twice.
//!
//! **What it does not cover.** Within one row of A (or column of B), elements more than about
//! 2¹⁰⁴ below the row's largest still lose their small part: a single power of two per row
//! cannot serve both ends of a row that spans more than f32's whole precision-range. Such an
//! element contributes less than 2⁻¹⁰⁴ of the row's largest to every product, so the error
//! stays below SGEMM's unless the other operand's column is large exactly where this row is
//! small.
use crate::device::{
    atomic_max_u32, block_idx_x, block_idx_y, magnitude_bits, thread_idx_x, warp_max_u32, Global,
    WARP_SIZE,
};
use crate::gemm::{GemmArgs, Geometry};

/// The pass's entry point (in the sm_90a build, beside the 3xTF32 kernel that needs it).
pub const ENTRY: &str = "gemm_ranges_f32";

/// Threads per block: 128 rows of A, or 4 columns of B (a warp each).
const THREADS: u32 = 128;
/// Elements of k one thread (A) or one warp (B) looks at: the grid's y dimension is
/// ⌈k / K_SLICE⌉, so that a large k makes many blocks and each thread few loads (a thread's
/// loads of a row follow each other: at 256 of them the pass took longer than the GEMM's
/// slowdown budget).
const K_SLICE: u32 = 64;

/// The pass's launch for an m×n×k problem: blocks over A's rows then B's columns (x) and over
/// slices of k (y).
pub fn geometry(m: u32, n: u32, k: u32) -> Geometry {
    let columns_per_block = THREADS / WARP_SIZE;
    Geometry {
        grid: (
            m.div_ceil(THREADS) + n.div_ceil(columns_per_block),
            k.div_ceil(K_SLICE),
        ),
        block: (THREADS, 1),
        shared_bytes: 0,
    }
}

/// The largest |x| of each row of A (m×k, `lda`) and of each column of B (k×n, `ldb`), as f32
/// bit patterns gathered by atomic maxima into the m + n words at `args.c`: rows first, then
/// columns. The words must be zero before the launch.
///
/// # Safety
/// `args` describes valid A and B, and `c` holds m + n zeroed words.
// ANCHOR: ranges_pass
pub unsafe fn max_abs_bits(args: GemmArgs<f32>) {
    let (m, n, k) = (args.m, args.n, args.k);
    let (t, bx) = (thread_idx_x(), block_idx_x());
    let k0 = block_idx_y() * K_SLICE;
    let k1 = (k0 + K_SLICE).min(k);
    let a_blocks = m.div_ceil(THREADS);
    // A strided batch (the `_batch` entry point) writes member z's m + n words z·(m + n) on.
    let out = args.member_c().element_ptr(0) as *mut u32;
    if bx < a_blocks {
        // A row per thread: the warp reads 32 consecutive rows of each column, coalesced.
        let row = bx * THREADS + t;
        if row >= m {
            return;
        }
        // Four maxima, so that four loads are in flight at once.
        let mut largest = [0u32; 4];
        let mut l = k0;
        while l + 4 <= k1 {
            for (j, m) in largest.iter_mut().enumerate() {
                let x = unsafe { args.a.load(args.a_at(row, l + j as u32)) };
                *m = (*m).max(magnitude_bits(x));
            }
            l += 4;
        }
        while l < k1 {
            largest[0] = largest[0].max(magnitude_bits(unsafe { args.a.load(args.a_at(row, l)) }));
            l += 1;
        }
        let largest = largest[0].max(largest[1]).max(largest[2].max(largest[3]));
        unsafe { atomic_max_u32(out.wrapping_add(row as usize), largest) };
    } else {
        // A column per warp: the lanes read 32 consecutive elements of it, then reduce.
        let col = (bx - a_blocks) * (THREADS / WARP_SIZE) + t / WARP_SIZE;
        if col >= n {
            return;
        }
        let lane = t % WARP_SIZE;
        let mut largest = 0u32;
        let mut l = k0 + lane;
        while l < k1 {
            largest = largest.max(magnitude_bits(unsafe { args.b.load(args.b_at(l, col)) }));
            l += WARP_SIZE;
        }
        let largest = warp_max_u32(largest);
        if lane == 0 {
            unsafe { atomic_max_u32(out.wrapping_add((m + col) as usize), largest) };
        }
    }
}

// ANCHOR_END: ranges_pass

/// The power of two `s` that brings a row's (or column's) largest |x|, given as its bits, into
/// [1, 4): `127 − e` for its biased exponent `e`, with `e` held to 1…253 so that `2^s` is a
/// normal f32. A row whose largest is already within 2^±[`LEFT_AS_IS`] is left as it is
/// (`s = 0`): there elements down to 2⁻⁸⁴ of the largest keep normal small parts anyway, and the
/// kernel skips its multiplications (most data, and every benchmark, is such). So is a row of
/// zeros, or one holding an infinity or NaN.
#[inline(always)]
pub fn exponent(largest_bits: u32) -> i32 {
    let e = (largest_bits >> 23) as i32;
    if largest_bits == 0 || e == 255 || (e - 127).abs() <= LEFT_AS_IS {
        0
    } else {
        127 - e.clamp(1, 253)
    }
}

/// How far (as a power of two) a row's largest |x| may be from 1 and the row still be left as
/// it is ([`exponent`]).
pub const LEFT_AS_IS: i32 = 20;

/// `2^s` for `s` in −126…127, built from its bits.
#[inline(always)]
pub fn pow2(s: i32) -> f32 {
    f32::from_bits(((s + 127) as u32) << 23)
}

/// The largest-|x| words of the pass, read by the 3xTF32 kernel: rows of A first, then columns
/// of B, each turned into its [`exponent`].
#[derive(Clone, Copy)]
pub struct Ranges {
    words: Global<f32>,
    m: u32,
    n: u32,
}

impl Ranges {
    /// The pass's m + n words at `words`.
    #[inline(always)]
    pub fn new(words: *const f32, m: u32, n: u32) -> Self {
        Ranges {
            words: Global::new(words),
            m,
            n,
        }
    }

    /// Row `row`'s exponent `s` (0 past m).
    ///
    /// # Safety
    /// The pass wrote the words.
    #[inline(always)]
    pub unsafe fn row(self, row: u32) -> i32 {
        if row < self.m {
            exponent(unsafe { self.words.load(row as usize) }.to_bits())
        } else {
            0
        }
    }

    /// Column `col`'s exponent `t` (0 past n).
    ///
    /// # Safety
    /// As [`Ranges::row`].
    #[inline(always)]
    pub unsafe fn column(self, col: u32) -> i32 {
        if col < self.n {
            exponent(unsafe { self.words.load((self.m + col) as usize) }.to_bits())
        } else {
            0
        }
    }
}

/// `value / 2^(s + t)`, exact unless the result is subnormal, for `s + t` in −252…252: two
/// multiplications by normal powers of two, half of the exponent each, so that neither
/// overflows or underflows before the other is applied.
#[inline(always)]
pub fn unscale(value: f32, s_plus_t: i32) -> f32 {
    let half = s_plus_t / 2;
    value * pow2(-half) * pow2(half - s_plus_t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_lands_in_one_to_four_and_unscaling_is_exact() {
        for x in [
            1.0f32,
            3.9,
            2f32.powi(-126),
            1.5 * 2f32.powi(-120),
            2f32.powi(100),
            f32::MAX,
        ] {
            let s = exponent(x.to_bits());
            let scaled = x * pow2(s);
            assert!((1.0..4.0).contains(&scaled), "{x:e}: {scaled}");
            assert_eq!(unscale(scaled, s), x, "{x:e}");
        }
        // A subnormal largest is brought up as far as a normal power of two goes.
        let tiny = f32::from_bits(3);
        assert_eq!(exponent(tiny.to_bits()), 126);
        assert_eq!(exponent(0), 0);
        assert_eq!(exponent(f32::INFINITY.to_bits()), 0);
        assert_eq!(exponent(f32::NAN.to_bits() & 0x7FFF_FFFF), 0);
        // Products in range from both ends of it: scaled, multiplied, unscaled back.
        let (a, b) = (1.25 * 2f32.powi(-126), 1.5 * 2f32.powi(100));
        let (s, t) = (exponent(a.to_bits()), exponent(b.to_bits()));
        let product = (a * pow2(s)) * (b * pow2(t));
        assert_eq!((s, t), (126, -100));
        assert_eq!(unscale(product, s + t), (a as f64 * b as f64) as f32);
        let (a, b) = (1.25 * 2f32.powi(120), 1.5 * 2f32.powi(-125));
        let (s, t) = (exponent(a.to_bits()), exponent(b.to_bits()));
        let product = (a * pow2(s)) * (b * pow2(t));
        assert_eq!(unscale(product, s + t), (a as f64 * b as f64) as f32);
    }
}
