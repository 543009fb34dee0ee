//! `tc-tf32`: the fast TF32 tensor-core GEMM of chapter 1: a multi-stage `cp.async` pipeline
//! into swizzled shared memory, 64×64 warp tiles, and fragments loaded 16 bytes at a time by
//! renaming which rows and k indices each `mma` register stands for.
//!
//! Source: none of the documents (see [`super::tc_tf32_basic`] for the fragment table this
//! kernel builds on). Changed from `tc-tf32-basic`:
//!
//! - **Sixteen-byte fragment loads, by renaming.** The basic kernel loads every fragment
//!   register with its own `ld.shared.f32`, six per `mma`. But an `mma` sums over k, so its
//!   8 k columns may stand for any 8 k indices of the slice, as long as A's column `t` and B's
//!   row `t` stand for the same one; and its row `g` may stand for any row of C, as long as the
//!   epilogue writes it there. Here, in each 16-deep k step, lane (g, t) gives its k columns
//!   `t, t+4` the k indices `4t + 2s, 4t + 2s + 1` in half-step `s` (so it needs k = 4t..4t+4,
//!   four consecutive values), and in each 32-row block of its warp tile two `mma` tiles give
//!   their rows `g, g+8` the rows `4g + 2h, 4g + 2h + 1` (`h` the tile: so it needs m =
//!   4g..4g+4). B lies k-contiguous in shared memory (a column of B, as it lies in memory),
//!   so lane (g, t)'s four k values of one column are one `ld.shared.v4`. A lies m-contiguous
//!   (a column of A is one k), so its four m values of one k are one `ld.shared.v4`. Per
//!   16-deep step and 64×64 warp tile that is 8 + 8 loads for 64 `mma`, where the basic
//!   kernel's layout needs 384.
//! - **The epilogue gets 16-byte stores for free.** The renaming leaves lane (g, t) holding
//!   rows 4g..4g+4 of columns 2t and 2t+1: four consecutive elements of a column of C.
//! - **Swizzled shared memory, no padding.** Eight lanes of a 16-byte load are served together
//!   and conflict when two of them hit the same 16-byte bank group (address / 16 mod 8). A's
//!   rows are m-contiguous, and the eight lanes (g ∈ {2p, 2p+1}, t = 0..4) read rows 4t + q:
//!   the 16-byte chunk `c` of row `kk` is stored at chunk `c ^ 2·((kk / 4) mod 4)`, which sends
//!   the four t to four different pairs of bank groups. B's rows (one per column n) are
//!   k-contiguous: chunk `c` of row `n` is stored at `c ^ 4·(n mod 2)`, which separates the two
//!   g. Both XORs permute chunks within aligned groups of 8, so the copies, eight consecutive
//!   chunks of one row per eight lanes, stay conflict-free too. (`l1tex__data_bank_conflicts_*`
//!   in ncu is the proof on the GPU.)
//! - **Asynchronous copies, `STAGES` deep**, as in [`super::best`]: 16-byte `cp.async` of A
//!   and B as they lie (no transpose: the fragment loads handle both layouts), one barrier per
//!   slice, zero-filled edges. When m, k, lda or ldb is not a multiple of 4, or A or B is not
//!   16-byte aligned, a second copy of the kernel copies 4 bytes at a time.
//! - **Every fragment load is one base offset plus a constant.** With the renaming, the A
//!   swizzle of every row a lane reads is `2t` and B's flips one bit by `g mod 2`, so a lane
//!   computes two offsets once and ptxas folds the rest into the `LDS` immediates; the copies'
//!   source addresses are a per-thread start plus a per-slice stride, and only the k bound is
//!   tested per slice.
//! - **Inputs are not converted.** The tensor core reads the top 19 bits of each f32 register
//!   (truncation toward zero; `tests/tests/gpu.rs` checks this on the GPU bit for bit against
//!   the emulator), so the default configurations pass the loaded f32 straight to `mma`
//!   ([`Truncated`]). `cvt.rna.tf32.f32` after each load would cost an instruction sequence
//!   per element; [`Rounded`] (`--tile 5`, `6`) rounds with two instructions
//!   ([`Tf32::round_finite`]). Truncation's error is biased: 6.9·10⁻⁴ against rounding's
//!   2.6·10⁻⁴ (cuBLAS's TF32 has rounding's, so it rounds its inputs too).
//! - Accumulators are f32; β = 0 does not read C.
//!
//! What the SASS shows (`cargo xtask sass --variant tc-tf32`, sm_90): the hot loop of the
//! 16-byte path is 516 instructions for 128 `HMMA.1688.F32.TF32` and 32 `LDS.128` (the
//! `tests/tests/sass.rs` counts), 234 registers, no spills, no local memory. 218 of the
//! instructions are `IMAD.MOV`: an A fragment takes its pairs from two different `LDS.128`
//! (rows of one k, then of the next), and HMMA wants its four A registers consecutive.
//!
//! Measured (H100 80GB HBM3, f32, median, cuBLAS in the same process, checks passing;
//! `docs/results/h100-2026-11-22/`, five runs): `--tile 1` 180.7–185.5 TFLOP/s at 4096³ =
//! 0.47–0.49× cuBLAS TF32 and 3.5× cuBLAS SGEMM; 173.6–181.3 at 8192³ = 0.43–0.47× (cuBLAS
//! TF32 itself ran at 384–410 across the runs; `--tile 2`, 128×256: 0.44–0.47×); 0.56× at
//! 2048³. ncu at 4096³: tensor pipe active 58% of cycles (cuBLAS TF32, `wgmma`: 92%), issue
//! slots busy 40%, 106 K shared-load bank conflicts (in 276 M instructions), 2 warps per
//! scheduler. The rounded configurations (64×32 warp tiles: the 64×64 ones spill with the
//! rounding) reach 110 TFLOP/s; 64×32 warp tiles at 3 blocks per SM, truncated, 0.36–0.41×.
//!
//! Configurations (`--tile`, see the registry): 128×128×32 with 2×2 warps of 64×64 and 3
//! stages (96 KiB of shared memory: two blocks per SM) is the default.
use crate::device::mma::{mma_m16n8k8_tf32, Accum, FragA, FragB, Tf32};
use crate::device::{
    block_idx_x, cp_async_commit, cp_async_wait, sync_threads, thread_idx_x, Shared, WARP_SIZE,
};
use crate::gemm::{next_stage, rasterise, GemmArgs, Geometry};

/// How the pipeline turns the f32 it reads from shared memory into tensor-core operands, and
/// what one `m16n8k8` tile's product is in that arithmetic. The pipeline is the same for
/// plain TF32 (one `mma` per tile) and for 3xTF32 ([`super::tc_3xtf32`], three, and an
/// accumulator of its own).
pub trait TensorOperand: Copy + Default {
    /// What a lane keeps per `m16n8` tile of C across the k loop.
    type Acc: Copy + Default;
    /// What the `mma` of one 16-deep k step accumulate into, per tile.
    type Step: Copy;
    fn from_f32(x: f32) -> Self;
    /// The k step's starting value: the accumulator itself, or zero.
    fn begin(acc: Self::Acc) -> Self::Step;
    fn mma(a: &FragA<Self, 4>, b: &FragB<Self, 2>, step: Self::Step) -> Self::Step;
    /// The accumulator after the k step.
    fn end(acc: Self::Acc, step: Self::Step) -> Self::Acc;
    /// The tile's four elements of `A·B`, in the accumulator layout.
    fn result(acc: Self::Acc) -> [f32; 4];
}

/// TF32 as the tensor core reads f32 bits: truncated, at no cost.
#[derive(Clone, Copy, Default)]
pub struct Truncated(Tf32);

impl TensorOperand for Truncated {
    type Acc = Accum<f32, 4>;
    type Step = Accum<f32, 4>;
    #[inline(always)]
    fn from_f32(x: f32) -> Self {
        Truncated(Tf32::truncate(x))
    }
    #[inline(always)]
    fn begin(acc: Self::Acc) -> Self::Step {
        acc
    }
    #[inline(always)]
    fn mma(a: &FragA<Self, 4>, b: &FragB<Self, 2>, acc: Self::Step) -> Self::Step {
        mma_m16n8k8_tf32(&FragA(a.0.map(|x| x.0)), &FragB(b.0.map(|x| x.0)), acc)
    }
    #[inline(always)]
    fn end(_: Self::Acc, step: Self::Step) -> Self::Acc {
        step
    }
    #[inline(always)]
    fn result(acc: Self::Acc) -> [f32; 4] {
        acc.0
    }
}

/// TF32 rounded to nearest ([`Tf32::round_finite`]: two instructions per element), what
/// cuBLAS's TF32 kernels do: half the input error of truncation, and no bias.
#[derive(Clone, Copy, Default)]
pub struct Rounded(Tf32);

impl TensorOperand for Rounded {
    type Acc = Accum<f32, 4>;
    type Step = Accum<f32, 4>;
    #[inline(always)]
    fn from_f32(x: f32) -> Self {
        Rounded(Tf32::round_finite(x))
    }
    #[inline(always)]
    fn begin(acc: Self::Acc) -> Self::Step {
        acc
    }
    #[inline(always)]
    fn mma(a: &FragA<Self, 4>, b: &FragB<Self, 2>, acc: Self::Step) -> Self::Step {
        mma_m16n8k8_tf32(&FragA(a.0.map(|x| x.0)), &FragB(b.0.map(|x| x.0)), acc)
    }
    #[inline(always)]
    fn end(_: Self::Acc, step: Self::Step) -> Self::Acc {
        step
    }
    #[inline(always)]
    fn result(acc: Self::Acc) -> [f32; 4] {
        acc.0
    }
}

/// A configuration is `BM×BN×BK` (block tile and k slice), `STAGES`, and the warp tile as
/// `MB` 32-row blocks by `NT` 8-column `mma` tiles (`WM = 32·MB`, `WN = 8·NT`): the register
/// arrays need their lengths as constants of their own.
pub const fn threads(bm: u32, bn: u32, mb: usize, nt: usize) -> u32 {
    (bm / (32 * mb as u32)) * (bn / (8 * nt as u32)) * WARP_SIZE
}

pub fn geometry<
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const STAGES: u32,
    const MB: usize,
    const NT: usize,
>(
    m: u32,
    n: u32,
    _k: u32,
    element_bytes: u32,
) -> Geometry {
    Geometry {
        grid: (m.div_ceil(BM) * n.div_ceil(BN), 1),
        block: (threads(BM, BN, MB, NT), 1),
        shared_bytes: STAGES * (BM + BN) * BK * element_bytes,
    }
}

/// Element index of 16-byte chunk `chunk` of row `kk` in a stage's A slice (`BM` floats per
/// row, chunks swizzled by `2·((kk / 4) mod 4)`; see the header).
#[inline(always)]
const fn a_index<const BM: u32>(kk: u32, chunk: u32) -> u32 {
    kk * BM + 4 * (chunk ^ (((kk >> 2) & 3) << 1))
}

/// Element index of 16-byte chunk `chunk` of row `n` (column n of B) in a stage's B slice
/// (`BK` floats per row, chunks swizzled by `4·(n mod 2)`).
#[inline(always)]
const fn b_index<const BK: u32>(n: u32, chunk: u32) -> u32 {
    n * BK + 4 * (chunk ^ ((n & 1) << 2))
}

/// # Safety
/// `args` must describe valid device matrices; launch with [`geometry`] of the same parameters.
#[inline(always)]
pub unsafe fn gemm<
    Op: TensorOperand,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const STAGES: u32,
    const MB: usize,
    const NT: usize,
>(
    args: GemmArgs<f32>,
) {
    // One copy of the kernel per copy width, chosen once per launch (as `best`).
    if args.ab_vec4_ok() {
        unsafe { gemm_with::<Op, BM, BN, BK, STAGES, MB, NT, true>(args) }
    } else {
        unsafe { gemm_with::<Op, BM, BN, BK, STAGES, MB, NT, false>(args) }
    }
}

// Index loops over the accumulator tiles: every index is a constant once unrolled, which is
// what keeps the accumulators in registers.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
unsafe fn gemm_with<
    Op: TensorOperand,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const STAGES: u32,
    const MB: usize,
    const NT: usize,
    const VEC4: bool,
>(
    args: GemmArgs<f32>,
) {
    let (wm, wn) = (32 * MB as u32, 8 * NT as u32);
    const {
        assert!(BM.is_multiple_of(32 * MB as u32) && BN.is_multiple_of(8 * NT as u32));
        // The B swizzle needs at least 8 chunks per row; A's rows are whole groups of 8 chunks.
        assert!(BK.is_multiple_of(32) && BM.is_multiple_of(32) && STAGES >= 2);
        assert!((BM * BK / 4).is_multiple_of(threads(BM, BN, MB, NT)));
        assert!((BN * BK / 4).is_multiple_of(threads(BM, BN, MB, NT)));
        // A thread's copy chunks stay in one column of the slice (see the copies).
        assert!(threads(BM, BN, MB, NT).is_multiple_of(BM / 4));
        assert!(threads(BM, BN, MB, NT).is_multiple_of(BK / 4));
    };
    let threads = threads(BM, BN, MB, NT);
    let stage_len = (BM + BN) * BK;
    let pool = Shared::<f32>::at(0, STAGES * stage_len);
    let tid = thread_idx_x();
    let (tile_m, tile_n) = rasterise(block_idx_x(), args.m.div_ceil(BM), args.n.div_ceil(BN));
    let (row0, col0) = (tile_m * BM, tile_n * BN);

    // The copies. Chunk `c` of a stage's A is A(row0 + 4·(c mod BM/4)..+4, l + c / (BM/4)),
    // chunk `c` of B is B(l + 4·(c mod BK/4)..+4, col0 + c / (BK/4)); consecutive threads
    // take consecutive chunks of a row, so a thread's chunks all lie in one row of m (of A)
    // or one k offset (of B): its source addresses step by a fixed stride, and only the
    // bounds in k change from slice to slice.
    let (a_chunk, a_kk) = (tid % (BM / 4), tid / (BM / 4));
    let a_pass = threads / (BM / 4); // k rows of A a pass of the block covers
    let (b_chunk, b_n) = (tid % (BK / 4), tid / (BK / 4));
    let b_pass = threads / (BK / 4); // columns of B a pass covers
    let a_row_inside = row0 + 4 * a_chunk < args.m;
    let a_from = args.a_at(row0 + 4 * a_chunk, a_kk);
    let b_from = args.b_at(4 * b_chunk, col0 + b_n);
    let copy_slice = |stage: u32, slice: u32| {
        let l = slice * BK;
        let a_at = stage * stage_len;
        let b_at = a_at + BM * BK;
        if VEC4 {
            let a_slice = a_from + l as usize * args.lda as usize;
            for r in 0..BM * BK / 4 / threads {
                let kk = a_kk + r * a_pass;
                let inside = a_row_inside && l + kk < args.k;
                let from = a_slice + (r * a_pass) as usize * args.lda as usize;
                unsafe {
                    pool.copy4_async(a_at + a_index::<BM>(kk, a_chunk), args.a, from, inside)
                };
            }
            let b_slice = b_from + l as usize;
            for r in 0..BN * BK / 4 / threads {
                let n = b_n + r * b_pass;
                let inside = l + 4 * b_chunk < args.k && col0 + n < args.n;
                let from = b_slice + (r * b_pass) as usize * args.ldb as usize;
                unsafe { pool.copy4_async(b_at + b_index::<BK>(n, b_chunk), args.b, from, inside) };
            }
        } else {
            // m, k, lda or ldb not a multiple of 4: element by element, each bounds-tested.
            for r in 0..BM * BK / 4 / threads {
                let kk = a_kk + r * a_pass;
                let at = a_at + a_index::<BM>(kk, a_chunk);
                for q in 0..4 {
                    unsafe { args.copy_a_async(pool, at + q, row0 + 4 * a_chunk + q, l + kk) };
                }
            }
            for r in 0..BN * BK / 4 / threads {
                let n = b_n + r * b_pass;
                let at = b_at + b_index::<BK>(n, b_chunk);
                for q in 0..4 {
                    unsafe { args.copy_b_async(pool, at + q, l + 4 * b_chunk + q, col0 + n) };
                }
            }
        }
    };

    // The fragment loads. Lane (g, t) reads A's rows kk = 16·step + 4t + q at chunk
    // warp_m/4 + 8·blk + g, whose swizzle `2·((kk / 4) mod 4)` is 2t for every step and q; and
    // B's row n = warp_n + 8·j + g at chunk 4·step + t, swizzled by 4·(g mod 2), which flips bit
    // 4 of the offset: `b_frag ^ 16·step`. So each lane has one base offset per operand and
    // every load is that base plus a constant (or one XOR), folded into the `LDS` immediate.
    let (warp, lane) = (tid / WARP_SIZE, tid % WARP_SIZE);
    let (warp_m, warp_n) = (warp % (BM / wm) * wm, warp / (BM / wm) * wn);
    let (g, t) = (lane / 4, lane % 4);
    let a_frag = 4 * t * BM + warp_m + 4 * (g ^ (t << 1));
    let b_frag = (warp_n + g) * BK + 4 * t + 16 * (g & 1);

    let slices = args.k.div_ceil(BK);
    for s in 0..STAGES - 1 {
        if s < slices {
            copy_slice(s, s);
        }
        cp_async_commit();
    }

    // acc[b][h][j]: the `mma` tile of 32-row block b, half h, 8-column tile j.
    let mut acc = [[[Op::Acc::default(); NT]; 2]; MB];
    let (mut read_stage, mut write_stage) = (0, STAGES - 1);
    // ANCHOR: core_loop
    for slice in 0..slices {
        cp_async_wait(STAGES - 2);
        sync_threads();
        let next = slice + STAGES - 1;
        if next < slices {
            copy_slice(write_stage, next);
        }
        cp_async_commit();

        let a_at = read_stage * stage_len + a_frag;
        let b_stage = read_stage * stage_len + BM * BK;
        for step in 0..BK / 16 {
            // b[j]: B(k = 16·step + 4t..+4, column g of 8-column tile j), one 16-byte load.
            let b_at = b_stage + (b_frag ^ (16 * step));
            let mut steps = [[[Op::begin(Op::Acc::default()); NT]; 2]; MB];
            for blk in 0..MB {
                for h in 0..2 {
                    for j in 0..NT {
                        steps[blk][h][j] = Op::begin(acc[blk][h][j]);
                    }
                }
            }
            let mut b = [[Op::default(); 4]; NT];
            for j in 0..NT {
                b[j] = pool.load4(b_at + 8 * j as u32 * BK).map(Op::from_f32);
            }
            // Half-step s: k columns t, t+4 stand for k = 16·step + 4t + 2s, + 1. Written as a
            // closure called with the constants 0 and 1 rather than a loop, which LLVM may
            // leave rolled when the body is large (3xTF32): `b[j][2 * s]` with a variable `s`
            // would put `b` in local memory.
            let mut half_step = |s: usize| {
                // a[blk][e]: A(rows 4g..4g+4 of 32-row block blk, k = 16·step + 4t + 2s + e).
                let mut a = [[[Op::default(); 4]; 2]; MB];
                for blk in 0..MB {
                    for e in 0..2 {
                        let kk = 16 * step + 2 * s as u32 + e as u32;
                        a[blk][e] = pool
                            .load4(a_at + kk * BM + 32 * blk as u32)
                            .map(Op::from_f32);
                    }
                }
                for blk in 0..MB {
                    for h in 0..2 {
                        // Rows g, g+8 of tile h stand for m = 4g + 2h, 4g + 2h + 1.
                        let frag_a = FragA([
                            a[blk][0][2 * h],
                            a[blk][0][2 * h + 1],
                            a[blk][1][2 * h],
                            a[blk][1][2 * h + 1],
                        ]);
                        for j in 0..NT {
                            let frag_b = FragB([b[j][2 * s], b[j][2 * s + 1]]);
                            steps[blk][h][j] = Op::mma(&frag_a, &frag_b, steps[blk][h][j]);
                        }
                    }
                }
            };
            half_step(0);
            half_step(1);
            for blk in 0..MB {
                for h in 0..2 {
                    for j in 0..NT {
                        acc[blk][h][j] = Op::end(acc[blk][h][j], steps[blk][h][j]);
                    }
                }
            }
        }
        read_stage = next_stage(read_stage, STAGES);
        write_stage = next_stage(write_stage, STAGES);
    }
    // ANCHOR_END: core_loop
    cp_async_wait(0);

    // Lane (g, t) holds rows 4g..4g+4 of columns 2t, 2t+1 of each 32×8 block: element r of
    // column e is c[e] (r even) or c[2 + e] (r odd) of tile h = r / 2.
    let vec4_c = args.c_vec4_ok();
    for blk in 0..MB {
        let row = row0 + warp_m + 32 * blk as u32 + 4 * g;
        for j in 0..NT {
            for e in 0..2 {
                let col = col0 + warp_n + 8 * j as u32 + 2 * t + e as u32;
                if col >= args.n {
                    continue;
                }
                let (top, bottom) = (Op::result(acc[blk][0][j]), Op::result(acc[blk][1][j]));
                let values = [top[e], top[2 + e], bottom[e], bottom[2 + e]];
                if vec4_c && row < args.m {
                    unsafe { args.store_c4(args.c_at(row, col), values) };
                } else {
                    for r in 0..4 {
                        if row + (r as u32) < args.m {
                            unsafe { args.store_c(args.c_at(row + r as u32, col), values[r]) };
                        }
                    }
                }
            }
        }
    }
}
