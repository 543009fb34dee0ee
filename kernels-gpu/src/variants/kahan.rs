//! `kahan`: `naive` with Kahan's compensated summation of the dot product.
//!
//! Source: `002_…txt`, the second `matMultCUDA`. The document's motivation: its CPU reference
//! accumulates in double, the GPU in float, and the maximum relative error of the naive kernel
//! is "too high, ideally below 1e-6". Once the running sum is large, each new small product
//! loses its low bits. Kahan's formula carries those lost bits in a second variable and adds
//! them back on the next step; GPU `add`/`sub`/`mul` round as IEEE 754 says, so the trick works.
//!
//! Changed from `naive`: only the accumulation ([`Kahan`]). Per step the document writes
//! ```text
//! y -= a*b;  r = t - y;  y = (r - t) + y;  t = r;
//! ```
//! (`t` the sum, `y` minus the pending correction). We run the same four lines on the
//! *negated* products, `y += a*b`, so that the product is folded into an FMA without a
//! negation (`fma(a, b, y)`, what nvcc makes of `y -= a*b` too), and negate once at the end.
//! Negation is exact, so this is the document's recurrence, term by term.
//!
//! The compensation survives compilation only because nothing may reassociate floating-point
//! additions: `(r - t) + y` with `r = t - y` is zero in real arithmetic. Rust has no fast-math
//! mode and rustc gives LLVM no reassociation flags, and the PTX uses `add.rn`/`sub.rn`, whose
//! explicit rounding mode also forbids ptxas from fusing them.
//!
//! Cost: three dependent adds after each FMA, so the loop is latency-bound (a chain of four
//! floating-point operations per k step instead of one); the document notes the speed did
//! not change, because its kernel is bound by memory anyway.
//!
//! PTX: the k-loop is unrolled by four; each step is `ld.global.b32` ×2, `fma.rn.f32`,
//! `sub.rn.f32` ×2, `add.rn.f32`, in the order written (nothing folded away).
//! ptxas (sm_90): 32 registers (f32 and f64), no stack frame, no spills.
//!
//! Measured: H100, 4096³, 2026-11-21 (`docs/results/h100-2026-11-21/`): f32 3.61 TFLOP/s (0.070× cuBLAS; `naive` 4.20), relative error 3.6e-8 vs 1.1e-6 for `naive`; f64 1.94.
use crate::device::Real;
use crate::gemm::GemmArgs;

// Launched exactly like `naive` (same geometry and shape limit, block of `naive::BLOCK`).

/// A compensated running sum of products (Kahan summation of `-a*b`, see the module doc).
#[derive(Clone, Copy)]
pub struct Kahan<T> {
    /// The document's `t`, for the negated terms: minus the sum so far.
    neg_sum: T,
    /// The document's `y`, for the negated terms.
    comp: T,
}

impl<T: Real> Kahan<T> {
    #[inline(always)]
    pub fn new() -> Self {
        Self {
            neg_sum: T::ZERO,
            comp: T::ZERO,
        }
    }

    /// Adds `a * b`.
    // ANCHOR: core_loop
    #[inline(always)]
    pub fn add_product(&mut self, a: T, b: T) {
        let y = a.fma(b, self.comp);
        let r = self.neg_sum - y;
        self.comp = (r - self.neg_sum) + y;
        self.neg_sum = r;
    }
    // ANCHOR_END: core_loop

    /// The sum (one exact negation).
    #[inline(always)]
    pub fn sum(self) -> T {
        T::ZERO - self.neg_sum
    }
}

impl<T: Real> Default for Kahan<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// # Safety
/// As [`super::naive::gemm`].
#[inline(always)]
pub unsafe fn gemm<T: Real>(args: GemmArgs<T>) {
    let Some((row, col)) = super::naive::element(&args) else {
        return;
    };
    let mut sum = Kahan::new();
    for i in 0..args.k {
        let a = unsafe { args.a.load(args.a_at(row, i)) };
        let b = unsafe { args.b.load(args.b_at(i, col)) };
        sum.add_product(a, b);
    }
    unsafe { args.store_c(args.c_at(row, col), sum.sum()) }
}
