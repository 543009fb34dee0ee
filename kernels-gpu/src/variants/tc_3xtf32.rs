//! `tc-3xtf32`: FP32 accuracy from TF32 tensor cores. Each f32 input is split into two TF32
//! parts, `x = big + small`, and each product of the GEMM becomes three tensor-core products,
//! `a·b ≈ a_small·b_big + a_big·b_small + a_big·b_big`, the small terms first so that they are
//! not lost against the large one. Only `a_small·b_small` (below 2⁻²² of `a·b`) is dropped.
//!
//! Source: none of the documents; the method is NVIDIA's "3xTF32" (CUTLASS's
//! `OpMultiplyAddFastF32`). Changed from [`super::tc_tf32`]: nothing in the pipeline. The
//! copies, the swizzled shared layout, the 16-byte fragment loads by renaming and the epilogue
//! are `tc-tf32`'s, generic over [`TensorOperand`]; this file is the operand:
//!
//! - **The split** ([`Tf32::split`]): `big` is `x` rounded to nearest TF32 by two integer
//!   instructions (add half a TF32 ulp to the bits, clear the 13 low ones, which is
//!   `cvt.rna.tf32.f32` for finite inputs), and `small = x - big` is exact in f32; the tensor
//!   core reads `small` truncated to TF32, losing at most 2⁻²¹ of `x`, with random sign. A
//!   truncated `big` would be one instruction cheaper, but its error always points toward zero
//!   and `small` would carry that bias into the sum.
//! - **Three `mma` per tile and k-step**, so three times the tensor-core work of `tc-tf32` and
//!   twice the fragment registers: the warp tile is 32×32 (`MB = 1, NT = 4`).
//! - **Each 16-deep k-step summed from zero, the running sum on the CUDA cores.** The tensor
//!   core adds with truncation, not rounding: every `mma` that adds into a large accumulator
//!   loses up to an ulp of it, always toward zero, and over k/8 steps that bias grows with k.
//!   With the products accumulated in the tensor core across the whole k loop, the relative
//!   error was 2.9·10⁻⁵ at 4096³ and 5.7·10⁻⁵ at 8192³ on the H100 (cuBLAS SGEMM: 1.1·10⁻⁶,
//!   1.6·10⁻⁶), failing the FP32 check. Here the six `mma` of a 16-deep step (two k-halves ×
//!   three) start from zero, so truncation costs a fraction of an ulp of one step's sum, and
//!   the step is added to the f32 sum with `FADD`, which rounds to nearest: four `FADD` per
//!   tile and step ([`TensorOperand::begin`] and [`TensorOperand::end`] in the pipeline).
//!   The idea is Ootomo and Yokota's ("Recovering single precision accuracy from Tensor Cores
//!   while surpassing the FP32 theoretical peak performance", 2022).
//!
//! The check holds it to the FP32 tolerance's neighbour (`gpu-gemm/src/verify.rs`: input term
//! 2⁻²⁰), and the precision experiment (002) measures its error beside cuBLAS SGEMM's.
//!
//! What the SASS shows (`cargo xtask sass --variant tc-3xtf32`): see `docs/perf-notes.md` for
//! the counts of each step; no spills, no local memory (`tests/tests/sass.rs`).
//!
//! Measured (H100 80GB HBM3, median, cuBLAS SGEMM in the same process, checks passing):
//! `--tile 1` (64×64 blocks, 32×32 warps, 4 stages, 166 registers: 3 blocks per SM) 64.0
//! TFLOP/s at 4096³ = 1.24× cuBLAS SGEMM with relative error 3.2·10⁻⁷ (cuBLAS 1.1·10⁻⁶); 64.7
//! at 8192³ = 1.25×, error 4.3·10⁻⁷ (cuBLAS 1.6·10⁻⁶). The steps that got there, each
//! measured (`docs/perf-notes.md`): the sum in the tensor core (1.58×, wrong: 2.9·10⁻⁵); every
//! k8 step from zero with the corrections in a second accumulator (1.19×, 208 registers, 2
//! blocks per SM; ncu: tensor pipe active 57%, issue 52%); 16-deep steps from zero and no
//! second accumulator (182 registers, and 166 under a 3-blocks-per-SM bound: 1.25×).
use super::tc_tf32::{self, TensorOperand};
use crate::device::mma::{mma_m16n8k8_tf32, Accum, FragA, FragB, Tf32};
use crate::gemm::GemmArgs;

/// An f32 as the two TF32 parts of the 3xTF32 split.
#[derive(Clone, Copy, Default)]
pub struct Split {
    big: Tf32,
    small: Tf32,
}

#[allow(clippy::needless_range_loop)]
impl TensorOperand for Split {
    /// The tile's running sum, kept on the CUDA cores (see the header).
    type Acc = [f32; 4];

    #[inline(always)]
    fn from_f32(x: f32) -> Self {
        let (big, small) = Tf32::split(x);
        Split { big, small }
    }

    /// The k step's three products, small terms first, summed from zero in the tensor core.
    type Step = Accum<f32, 4>;

    #[inline(always)]
    fn begin(_: [f32; 4]) -> Accum<f32, 4> {
        Accum::default()
    }

    // ANCHOR: core_loop
    #[inline(always)]
    fn mma(a: &FragA<Self, 4>, b: &FragB<Self, 2>, step: Accum<f32, 4>) -> Accum<f32, 4> {
        let (a_big, a_small) = (FragA(a.0.map(|x| x.big)), FragA(a.0.map(|x| x.small)));
        let (b_big, b_small) = (FragB(b.0.map(|x| x.big)), FragB(b.0.map(|x| x.small)));
        let step = mma_m16n8k8_tf32(&a_small, &b_big, step);
        let step = mma_m16n8k8_tf32(&a_big, &b_small, step);
        mma_m16n8k8_tf32(&a_big, &b_big, step)
    }
    // ANCHOR_END: core_loop

    /// The running sum plus the k step's products, rounded to nearest (`FADD`).
    #[inline(always)]
    fn end(sum: [f32; 4], step: Accum<f32, 4>) -> [f32; 4] {
        // An index loop, not `zip`: LLVM leaves a zip's iterator in local memory here.
        let mut sum = sum;
        for i in 0..4 {
            sum[i] += step.0[i];
        }
        sum
    }

    #[inline(always)]
    fn result(sum: [f32; 4]) -> [f32; 4] {
        sum
    }
}

pub use tc_tf32::geometry;

/// # Safety
/// As [`tc_tf32::gemm`].
#[inline(always)]
pub unsafe fn gemm<
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const STAGES: u32,
    const MB: usize,
    const NT: usize,
>(
    args: GemmArgs<f32>,
) {
    unsafe { tc_tf32::gemm::<Split, BM, BN, BK, STAGES, MB, NT>(args) }
}
