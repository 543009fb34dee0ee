//! `wgmma-narrow`: tiles as narrow as the problem, and a grid that shares the iterations, not
//! the tiles: the GEMM of a decode step, and of any shape with fewer tiles than multiprocessors.
//!
//! Source: none of the documents (CUTLASS's stream-k scheduler and its split-k fixup; the
//! "swap-AB" of DeepGEMM's and TensorRT-LLM's small-batch kernels; the models' shapes of
//! `host experiment shapes`).
//! Changed from chapter 3's `wgmma-tma-store:5` (the orientation `C = A·B`):
//!
//! - **Why.** A language model's linear layer is `D[M×N] = X[M×K]·W[N×K]ᵀ` with M the tokens:
//!   a few to a few hundred when it generates text. In this project's column-major terms that
//!   is `m = N`, `n = M`, `k = K` with A stored k × m (`op(A) = Aᵀ`): n is the small dimension.
//!   With 256 × 128 tiles, n = 64 wastes half of every tile and m = 2112 makes 9 tile-rows for
//!   132 multiprocessors. Such a GEMM is bound by memory, not by the tensor cores: every byte of
//!   the weights A is read once, and the time to beat is A's bytes over the HBM bandwidth.
//! - **The tile's n is the `wgmma`'s N**: 8, 16, 32, 64 or 128 (`--tile`), the tokens rounded up
//!   to the next shape. Each of two consumer warpgroups takes 64 rows of m (one
//!   `wgmma.m64nNk16`), so a tile is 128 × N and its accumulator N/2 registers per thread. In
//!   row-major terms this is *swap-AB*: the weights are the `wgmma`'s A and the few tokens its
//!   N, which the column-major orientation `C = A·B` gives without swapping anything.
//! - **A is read as it lies**: K-major when stored k × m (`--transa t`, the model's layout, as
//!   FP8's), MN-major when stored m × k (the transpose bit, chapter 3). B is K-major (`op(B) =
//!   B`, stored k × n: the activations of a row-major program).
//! - **Stream-k** ([`crate::pipeline::schedule::StreamK`]): the grid is one block per
//!   multiprocessor, and block `b` takes iterations `⌊b·T/G⌋..⌊(b+1)·T/G⌋` of the `T = tiles ×
//!   slices` (a slice is 64 of k): every block streams the same share of A whatever the number
//!   of tiles, where split-k by whole parts leaves multiprocessors idle (17 tiles × 7 parts is
//!   119 of 132) or starts a second wave.
//! - **The fixup in the epilogue, no second launch** ([`crate::pipeline::stream`]): a tile
//!   shared by several blocks is finished by the last of them to arrive on its counter
//!   ([`crate::device::semaphore`]), which adds the parts in block order (deterministic), puts
//!   the counter back and writes C. The parts go through an f32 workspace in 16-byte stores; at
//!   decode sizes it is a few MiB against A's hundreds, and stays in L2.
//! - **C is written from the registers**, with bounds checks: any m, n and `ldc` (the TMA store
//!   needs m and `ldc` multiples of 8). A pair of accumulators is two adjacent *columns* of C,
//!   `ldc` apart: 2-byte stores, which cost nothing beside A's traffic when n is small.
//! - **A deep ring**: a stage is A's 128 × 64 and B's N × 64 (17 to 32 KiB), as many as fit in
//!   the shared memory (6 to 11), so that each multiprocessor keeps 100–190 KiB of loads in
//!   flight: what it takes to cover the memory latency at this bandwidth.
//! - **FP8 is the same kernel** (`wgmma-fp8-narrow`, [`E4m3`]): a stage is still 128-byte rows,
//!   now of 128 e4m3 values of k, a k-step is still 32 bytes (`wgmma.m64nNk32.e4m3`), both
//!   operands K-major (TN, as chapter 4), and the epilogue multiplies by `alpha·sa·sb`. What the
//!   element type decides is [`Operands`]: the arguments, k per slice, the `wgmma`, C.
//! - **Block scales are one more operand type** (`wgmma-fp8-block-narrow`, [`E4m3Blocks`]):
//!   DeepSeek-V3's 1 × 128 scales of A and 128 × 128 of B change every 128 of k, which is one
//!   slice here, so each slice is a fresh `wgmma` sum promoted into f32 totals with its scales,
//!   as in chapter 4's [`super::wgmma_fp8_block`] and with its pieces ([`BlockScales`],
//!   [`Ahead`], [`wgmma_fp8_block::promote`]). What the operands decide grows by one method,
//!   [`Operands::sum`]: one chain over the slices, or a sum per slice. A stream-k part promotes
//!   its own slices with their own scales (the planted bug of `tests/tests/emulator_fp8_bugs.rs`
//!   takes the tile's first slices' instead), so the fixup adds totals already scaled.
//!
//! What the SASS shows (`cargo xtask sass --variant wgmma-narrow --dtype bf16`, `--tile 64`): 168
//! registers at entry, no spills, no stack; the hot loop is four `HGMMA.64x64x16.F32.BF16` per
//! 64-deep slice in 79 instructions, the rest the mbarrier handshakes and descriptor arithmetic:
//! at decode sizes the tensor cores wait for memory, not for the loop.
//!
//! Measured on the H100 (`host experiment shapes`, `docs/results/006-shapes-bf16/`, median of 20,
//! cuBLAS in the same process), as `auto`'s choice on the models' decode shapes: 1.04× cuBLAS
//! geomean with one token, 1.02× with 16, 0.99× with 64, 0.92× with 128 (lowest 0.67× at
//! 7168 × 128 × 2048); the bytes moved at 65% of the 3.35 TB/s datasheet (cuBLAS 66%). What holds
//! the 128-token shapes back: the block that finishes a shared tile reads every part alone while
//! the others are done (ncu: multiprocessors active 55% of the time at 2112 × 128 × 7168), and
//! 128 × 128 tiles read B once per 128 rows of A (`docs/perf-notes.md`). In e4m3
//! (`docs/results/006-shapes-e4m3/`, cuBLASLt per tensor): 1.03×, 1.00×, 0.94× and 0.88× at 1,
//! 16, 64 and 128 tokens, the decode bytes at 53% of 3.35 TB/s (cuBLASLt 56%, chapter 4's
//! kernels 39%). With block scales, on DeepGEMM's dense set
//! (`docs/results/h100-2026-11-26-fp8-dense/`, cuBLASLt's block-scaled matmul in the same
//! process): 1.15× and 1.08× at 64 tokens over 2112 and 4096 rows of weights (k = 7168), where
//! chapter 4's 128 × 128 tiles ran 0.71× and 0.75× on 17 and 32 multiprocessors; behind them from
//! 56 tiles (0.63× at 32768 × 128 × 512), where the parts are a few slices each and the fixup
//! dominates. `auto` takes it where the 128 × 128 tiles are fewer than a third of the
//! multiprocessors.
//!
//! Timed with L2 flushed (the host's `--cold`, as a decode step runs), this kernel was 0.77×
//! cuBLAS over 19 bf16 decode shapes on the H200 (0.50× at 2112 × 64 × 1024): the tokens' tile
//! turned around, [`super::wgmma_swap`], runs them at 0.96×, and `auto` takes it at T,N;
//! this kernel keeps N,N.
//!
//! **Equal parts** ([`crate::pipeline::schedule::StreamK::equal_parts`], the swapped block-scaled
//! kernel's lesson): with fewer tiles than multiprocessors, each tile is cut into the same number
//! of parts of k, one block each, instead of every block taking an equal share of all the
//! iterations and crossing from one tile into the next (a second segment costs a fixup, a chain
//! of round trips). 17 tiles then run on 119 of the 132 multiprocessors, and ran faster: bf16
//! N,N decode steps 0.78 → 0.86× cuBLAS cold (2112 × 16 × 7168 0.79 → 0.89×, 4096 × 16 × 4096
//! 0.83 → 0.95×), block-scaled e4m3 at 16 and 48 tokens +9–15%; 3% slower at 7168 × 16 × 16384,
//! 56 tiles on 112 (`docs/results/h200-2026-11-29-fp8-stream-k/` runs 5 and 7).
use super::wgmma_fp8_block::{self, Ahead, BlockScales};
use crate::device::half::{Bf16, Half};
use crate::device::pool_address;
use crate::device::tma::{self, Swizzle, TensorMap};
use crate::device::wgmma;
use crate::device::wgmma::{
    Accumulator, Descriptor, Fp8Wgmma, HalfWgmma, Registers, Tf32Wgmma, K_MAJOR, MN_MAJOR,
};
use crate::gemm::{scaled, Fp8GemmArgs, GemmArgs, Geometry, HalfGemmArgs};
use crate::pipeline::schedule::Tile;
use crate::pipeline::stream::{self, Scratch, FIXUP_BYTES};
use crate::pipeline::{self, epilogue, Consumer, Kernel, Stages, Work, WARPGROUP};
use core::marker::PhantomData;

/// Rows of m per tile: two consumer warpgroups of one `wgmma.m64` each.
pub const BM: u32 = 128;
/// Bytes of k per slice: one 128-byte swizzled row (64 16-bit values, 128 e4m3).
const SLICE_BYTES: u32 = 128;
/// Bytes of A's part of a stage.
const A_BYTES: u32 = BM * SLICE_BYTES;
/// m per TMA box of an MN-major A: a 128-byte row of m per k.
const A_BOX_M: u32 = 64;
/// The shared memory the ring may take (of the H100's 227 KiB per block), the rest left to the
/// barriers and the fixup's flag.
const RING_BYTES: u32 = 200 * 1024;

/// The tile's columns for an accumulator of `R` registers per thread: the `wgmma`'s N.
pub const fn tile_n(r: usize) -> u32 {
    2 * r as u32
}

/// Bytes of one stage: A's 128 rows and B's N rows of one 128-byte slice of k.
pub const fn stage_bytes(r: usize) -> u32 {
    A_BYTES + tile_n(r) * SLICE_BYTES
}

/// As many stages as fit in 200 KiB of the H100's 227 KiB per block.
pub const fn stages(r: usize) -> u32 {
    RING_BYTES / stage_bytes(r)
}

/// What the element type decides, for an accumulator of `R` registers: the kernel's arguments,
/// k per slice, the `wgmma` of one k-step (a slice is four, each 32 bytes along the rows), and
/// the problem the epilogue writes.
pub trait Operands<const R: usize>: Copy + Default + 'static {
    type Args: pipeline::Problem;
    /// k per slice: 128 bytes of it.
    const BK: u32;
    /// One k-step into `acc`: A and B K-major, or A MN-major (`a_k_major` false; 16 bits only).
    fn mma(
        acc: &mut Accumulator<R>,
        a: Descriptor,
        b: Descriptor,
        accumulate: bool,
        a_k_major: bool,
    );
    /// The swapped tiles' epilogue: a consumer warpgroup's accumulator of `Cᵀ` into C at
    /// (`row0`, `col0`), no column at or past `n_end` ([`epilogue::store_transposed`]).
    ///
    /// # Safety
    /// `args` describes valid matrices.
    unsafe fn store_transposed(
        args: &Self::Args,
        acc: &Accumulator<R>,
        at: (u32, u32),
        n_end: u32,
        thread: u32,
    );

    /// The sum of a consumer warpgroup's 64 rows over the work's slices, `issue(stage, acc,
    /// fresh)` putting one slice's `wgmma`s into `acc` (a fresh sum when `fresh`), `at` the
    /// warpgroup's first row and the tile's first column. With one scale per tensor it is one
    /// chain over every slice, each stage released while the next slice's group runs (the
    /// skeleton's mainloop); block scales change every slice ([`E4m3Blocks`]).
    #[inline(always)]
    fn sum(
        _args: &Self::Args,
        c: &mut Consumer,
        work: Work,
        _at: (u32, u32),
        issue: impl Fn(u32, &mut Accumulator<R>, bool),
    ) -> [f32; R]
    where
        Accumulator<R>: Registers,
    {
        one_chain(c, work, issue)
    }
}

/// Operands whose C is 16-bit (bf16, f16; e4m3's bf16): the narrow kernel's epilogue, with its
/// fused forms, reads [`HalfGemmArgs`].
pub trait HalfC<const R: usize>: Operands<R> {
    type Out: Half;
    /// C, and the factor the accumulators take on their way to it.
    fn output(args: &Self::Args) -> HalfGemmArgs<Self::Out>;
}

/// [`Operands::store_transposed`] for a 16-bit C: the 16-bit kernels' store, with its fused
/// epilogue.
///
/// # Safety
/// `output` describes valid matrices.
#[inline(always)]
unsafe fn store_transposed_16bit<H: Half, const R: usize>(
    output: HalfGemmArgs<H>,
    acc: &Accumulator<R>,
    (row0, col0): (u32, u32),
    n_end: u32,
    thread: u32,
) {
    let output = HalfGemmArgs {
        n: output.n.min(n_end),
        ..output
    };
    unsafe { epilogue::store_transposed(&output, acc, row0, col0, thread) }
}

/// A warpgroup's sum over the work's slices as one chain (one scale per tensor): the skeleton's
/// mainloop, each stage released while the next slice's group runs.
#[inline(always)]
pub fn one_chain<const R: usize>(
    c: &mut Consumer,
    work: Work,
    issue: impl Fn(u32, &mut Accumulator<R>, bool),
) -> [f32; R]
where
    Accumulator<R>: Registers,
{
    let mut acc = Accumulator::<R>::zero();
    c.mainloop(work.slices, |stage, slice| {
        issue(stage, &mut acc, slice == 0)
    });
    acc.fence_registers();
    *acc.get()
}

/// bf16 or f16 operands and C (f32 accumulation).
#[derive(Clone, Copy, Default)]
pub struct Sixteen<H>(PhantomData<H>);

impl<H: Half, const R: usize> Operands<R> for Sixteen<H>
where
    Accumulator<R>: HalfWgmma<H>,
{
    type Args = HalfGemmArgs<H>;
    const BK: u32 = 64;

    #[inline(always)]
    fn mma(
        acc: &mut Accumulator<R>,
        a: Descriptor,
        b: Descriptor,
        accumulate: bool,
        a_k_major: bool,
    ) {
        if a_k_major {
            <Accumulator<R> as HalfWgmma<H>>::mma::<K_MAJOR, K_MAJOR>(acc, a, b, accumulate)
        } else {
            <Accumulator<R> as HalfWgmma<H>>::mma::<MN_MAJOR, K_MAJOR>(acc, a, b, accumulate)
        }
    }

    #[inline(always)]
    unsafe fn store_transposed(
        args: &HalfGemmArgs<H>,
        acc: &Accumulator<R>,
        at: (u32, u32),
        n_end: u32,
        thread: u32,
    ) {
        unsafe { store_transposed_16bit(*args, acc, at, n_end, thread) }
    }
}

impl<H: Half, const R: usize> HalfC<R> for Sixteen<H>
where
    Accumulator<R>: HalfWgmma<H>,
{
    type Out = H;

    #[inline(always)]
    fn output(args: &HalfGemmArgs<H>) -> HalfGemmArgs<H> {
        *args
    }
}

/// f32 operands and C on the TF32 tensor cores (`wgmma.m64nNk8.f32.tf32.tf32`, both operands
/// K-major in shared memory: T,N, the only layout TF32's descriptors read): the swapped tiles'
/// TF32 form (`wgmma-tf32-swap`). A 128-byte row of a stage is 32 of k, a `wgmma` step 8.
#[derive(Clone, Copy, Default)]
pub struct Tf32Operands;

impl<const R: usize> Operands<R> for Tf32Operands
where
    Accumulator<R>: Tf32Wgmma,
{
    type Args = GemmArgs<f32>;
    const BK: u32 = 32;

    #[inline(always)]
    fn mma(acc: &mut Accumulator<R>, a: Descriptor, b: Descriptor, accumulate: bool, _: bool) {
        Tf32Wgmma::mma(acc, a, b, accumulate)
    }

    #[inline(always)]
    unsafe fn store_transposed(
        args: &GemmArgs<f32>,
        acc: &Accumulator<R>,
        (row0, col0): (u32, u32),
        n_end: u32,
        thread: u32,
    ) {
        let output = GemmArgs {
            n: args.n.min(n_end),
            ..*args
        };
        unsafe { epilogue::store_transposed_f32(&output, acc, row0, col0, thread) }
    }
}

/// e4m3 operands, bf16 C, both K-major (TN): with one scale per tensor (`BLOCK_SCALES` false,
/// [`E4m3`]: chapter 4's `wgmma-fp8`, narrow), or with block scales ([`E4m3Blocks`]:
/// `wgmma-fp8-block-narrow`), one per 1 × 128 of A and per 128 × 128 of B as in
/// [`super::wgmma_fp8_block`].
#[derive(Clone, Copy, Default)]
pub struct Fp8<const BLOCK_SCALES: bool>;

/// e4m3 with one scale per tensor, the scales folded into alpha.
pub type E4m3 = Fp8<false>;
/// e4m3 with block scales: a slice is 128 of k, one block of scales, so each slice is a fresh
/// sum promoted into f32 totals with its scales ([`wgmma_fp8_block::promote`]); a stream-k part
/// promotes its own slices, and the fixup adds totals that are already scaled.
pub type E4m3Blocks = Fp8<true>;

impl<const R: usize, const BLOCK_SCALES: bool> Operands<R> for Fp8<BLOCK_SCALES>
where
    Accumulator<R>: Fp8Wgmma,
{
    type Args = Fp8GemmArgs;
    const BK: u32 = 128;

    #[inline(always)]
    fn mma(acc: &mut Accumulator<R>, a: Descriptor, b: Descriptor, accumulate: bool, _: bool) {
        Fp8Wgmma::mma(acc, a, b, accumulate)
    }

    #[inline(always)]
    unsafe fn store_transposed(
        args: &Fp8GemmArgs,
        acc: &Accumulator<R>,
        at: (u32, u32),
        n_end: u32,
        thread: u32,
    ) {
        let output = <Self as HalfC<R>>::output(args);
        unsafe { store_transposed_16bit(output, acc, at, n_end, thread) }
    }

    /// Per tensor, one chain ([`one_chain`]). Per block, one slice at a time: issue it, wait for
    /// it, release its stage, promote it. At the sizes this kernel is for the tensor cores wait
    /// for memory (a deep ring keeps the loads in flight), and an `m64nN` promotion is N/2 FMAs
    /// per thread: nothing here to overlap.
    #[inline(always)]
    fn sum(
        args: &Fp8GemmArgs,
        c: &mut Consumer,
        work: Work,
        (row0, col0): (u32, u32),
        issue: impl Fn(u32, &mut Accumulator<R>, bool),
    ) -> [f32; R]
    where
        Accumulator<R>: Registers,
    {
        if !BLOCK_SCALES {
            return one_chain(c, work, issue);
        }
        let mut total = [0f32; R];
        let mut ahead = Ahead::new(BlockScales::new(args, row0, col0, c.thread, work));
        for slice in 0..work.slices {
            let mut partial = Accumulator::<R>::zero();
            c.wait_full();
            let stage = pool_address(c.stages.stage(c.ring.stage));
            wgmma::fence();
            issue(stage, &mut partial, true);
            wgmma::commit_group();
            let scales = ahead.take(slice);
            wgmma::wait_group::<0>();
            c.release(c.ring.stage);
            c.ring.advance();
            wgmma_fp8_block::promote(&mut total, &mut partial, scales);
        }
        total
    }
}

impl<const R: usize, const BLOCK_SCALES: bool> HalfC<R> for Fp8<BLOCK_SCALES>
where
    Accumulator<R>: Fp8Wgmma,
{
    type Out = Bf16;

    /// One scale per tensor: `Σ (sa·a)(sb·b) = sa·sb·Σ a·b`. Block scales are in the totals
    /// already.
    #[inline(always)]
    fn output(args: &Fp8GemmArgs) -> HalfGemmArgs<Bf16> {
        if BLOCK_SCALES {
            return args.output(args.alpha);
        }
        let scale = unsafe { args.scale_a.load(0) * args.scale_b.load(0) };
        args.output(args.alpha * scale)
    }
}

/// The kernel for operands `O` (16-bit or e4m3), an accumulator of `R` registers (N = 2R columns
/// of n per tile), A K-major (`A_K_MAJOR`: stored k × m) or MN-major (stored m × k, 16 bits).
#[derive(Clone, Copy, Default)]
pub struct WgmmaNarrow<O, const R: usize, const A_K_MAJOR: bool>(PhantomData<O>);

/// The launch geometry: one block per iteration, which the host caps at one per
/// multiprocessor (the grid is persistent, and stream-k needs every block to have an
/// iteration: `G ≤ T`). `element_bytes` is A's and B's (k per slice: 128 bytes of it); the
/// block and its pool are the same whatever the element type (a stage is 128-byte rows), so
/// the 16-bit kernel's stand for both.
pub fn geometry<const R: usize>(m: u32, n: u32, k: u32, element_bytes: u32) -> Geometry
where
    Accumulator<R>: HalfWgmma<Bf16>,
{
    type K<const R: usize> = WgmmaNarrow<Sixteen<Bf16>, R, true>;
    let tiles = m.div_ceil(BM) * n.div_ceil(tile_n(R));
    let iterations = tiles * k.div_ceil(SLICE_BYTES / element_bytes).max(1);
    Geometry {
        grid: (iterations, 1),
        block: (K::<R>::THREADS, 1),
        shared_bytes: K::<R>::POOL_BYTES,
    }
}

impl<O: HalfC<R>, const R: usize, const A_K_MAJOR: bool> Kernel for WgmmaNarrow<O, R, A_K_MAJOR>
where
    Accumulator<R>: Registers,
{
    type Args = O::Args;
    const BM: u32 = BM;
    const BN: u32 = tile_n(R);
    const BK: u32 = O::BK;
    const STAGES: u32 = stages(R);
    const STAGE_BYTES: u32 = stage_bytes(R);
    const LOADED_BYTES: u32 = stage_bytes(R);
    const STREAM_K: bool = true;
    // Each tile in equal parts, one block each (`docs/results/h200-2026-11-29-fp8-stream-k/`
    // run 5: bf16 N,N decode steps 0.78 → 0.86× cuBLAS, block-scaled e4m3 at 16–48 tokens
    // +9–15%).
    const EQUAL_PARTS: bool = true;
    // The producer walks a batch (a division per tile, a third coordinate per copy) in 56
    // registers: at 40 it spilled 4 to 32 bytes. The consumers' 224 hold the narrow tile's
    // accumulators (at most 64) with room to spare.
    const PRODUCER_REGISTERS: u32 = 56;
    const PREFETCHED_SLICE_BYTES: u32 = A_BYTES;
    const EXTRA_BYTES: u32 = FIXUP_BYTES;

    #[inline(always)]
    unsafe fn load(self, maps: *const TensorMap, stages: Stages, s: u32, tile: Tile, slice: u32) {
        let (a_map, b_map) = (maps, maps.wrapping_add(1));
        let (full, stage) = (stages.full(s), pool_address(stages.stage(s)));
        let (m0, n0, k0) = (tile.row * BM, tile.col * Self::BN, (slice * O::BK) as i32);
        unsafe {
            if A_K_MAJOR {
                // A stored k × m: one box of 128 bytes of k × 128 m, a row of k per m.
                tma::load_box(a_map, stage, k0, m0 as i32, tile.group, full);
            } else {
                // A stored m × k: two boxes of 64 m × 64 k, a 128-byte row of m per k.
                for j in 0..BM / A_BOX_M {
                    let m = (m0 + j * A_BOX_M) as i32;
                    let to = stage + j * A_BOX_M * SLICE_BYTES;
                    tma::load_box(a_map, to, m, k0, tile.group, full);
                }
            }
            tma::load_box(b_map, stage + A_BYTES, k0, n0 as i32, tile.member, full);
        }
    }

    /// The weights' boxes of the slice, as [`Kernel::load`] reads them, into L2 only.
    #[inline(always)]
    unsafe fn prefetch(self, maps: *const TensorMap, tile: Tile, slice: u32) {
        let (m0, k0) = (tile.row * BM, (slice * O::BK) as i32);
        unsafe {
            if A_K_MAJOR {
                tma::prefetch_box(maps, k0, m0 as i32, tile.group);
            } else {
                for j in 0..BM / A_BOX_M {
                    tma::prefetch_box(maps, (m0 + j * A_BOX_M) as i32, k0, tile.group);
                }
            }
        }
    }

    // ANCHOR: core_loop
    #[inline(always)]
    unsafe fn consume(self, args: O::Args, maps: *const TensorMap, c: &mut Consumer, work: Work) {
        // This warpgroup's 64 rows of A: in a K-major stage 64 rows of 128 bytes, in an
        // MN-major one the warpgroup's own TMA box. A k-step is 32 bytes along a K-major row
        // (16 of a 16-bit type, 32 of e4m3), 16 rows of an MN-major box.
        let rows = 64 * c.warpgroup;
        let issue = |stage: u32, acc: &mut Accumulator<R>, fresh: bool| {
            let b = Descriptor::k_major(stage + A_BYTES, Swizzle::B128, 16, 1024);
            let a_at = stage + rows * SLICE_BYTES;
            let (a, a_step) = if A_K_MAJOR {
                (Descriptor::k_major(a_at, Swizzle::B128, 16, 1024), 32)
            } else {
                let box_bytes = A_BOX_M * SLICE_BYTES;
                (
                    Descriptor::mn_major(a_at, Swizzle::B128, box_bytes, 1024),
                    2048,
                )
            };
            for step in 0..4 {
                let accumulate = !(fresh && step == 0);
                let (a, b) = (a.advanced(a_step * step), b.advanced(32 * step));
                O::mma(acc, a, b, accumulate, A_K_MAJOR);
            }
        };
        let row0 = work.tile.row * BM + rows;
        let col0 = work.tile.col * Self::BN;
        let mut values = O::sum(&args, c, work, (row0, col0), issue);
        // A tile shared with other blocks: the last of them to finish writes it.
        if !work.whole() {
            let scratch = unsafe { Scratch::after(maps, 2) };
            let thread = c.warpgroup * WARPGROUP + c.thread;
            let threads = Self::CONSUMERS * WARPGROUP;
            let flag = c.stages.extra();
            if !unsafe { stream::finish(scratch, &work, &mut values, thread, threads, flag) } {
                return;
            }
        }
        let output = O::output(&args);
        if !epilogue::needs_fuse(&output) {
            unsafe { store(&epilogue::plain(&output), &values, row0, col0, c.thread) };
        } else {
            let (warp, lane) = (c.thread / 32, c.thread % 32);
            let at = |i| {
                let (r, c) = Accumulator::<R>::position(warp, lane, i);
                (row0 + r, col0 + c)
            };
            let (stored, values, largest) = unsafe { epilogue::fuse(&output, values, at) };
            unsafe { store(&stored, &values, row0, col0, c.thread) };
            unsafe { output.fused.gather_amax(largest) };
        }
    }
    // ANCHOR_END: core_loop
}

/// Writes a warpgroup's 64 × N accumulator to C at (`row0`, `col0`): `alpha·acc + beta·C`
/// rounded once, nothing past m or n. Registers `i`, `i + 1` are two adjacent columns of one
/// row, `ldc` apart in column-major C: one element at a time.
///
/// # Safety
/// `args` describes valid matrices.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
unsafe fn store<H: Half, const R: usize>(
    args: &HalfGemmArgs<H>,
    values: &[f32; R],
    row0: u32,
    col0: u32,
    thread: u32,
) {
    let (warp, lane) = (thread / 32, thread % 32);
    for p in 0..R / 2 {
        let (r, c) = Accumulator::<R>::position(warp, lane, 2 * p as u32);
        let (row, col) = (row0 + r, col0 + c);
        if row >= args.m {
            continue;
        }
        let inside = [col < args.n, col + 1 < args.n];
        let at = [args.c_at(row, col), args.c_at(row, col + 1)];
        let old = || {
            core::array::from_fn(|e| {
                if inside[e] {
                    unsafe { args.c.load(at[e]) }
                } else {
                    0.0
                }
            })
        };
        let value = scaled(
            args.alpha,
            args.beta,
            [values[2 * p], values[2 * p + 1]],
            old,
        );
        for e in 0..2 {
            if inside[e] {
                unsafe { args.c.store(at[e], value[e]) };
            }
        }
    }
}

/// The entry point's body.
///
/// # Safety
/// As [`pipeline::run`]: `maps` points to A's and B's tensor maps (A k × m in boxes of 128 bytes
/// of k × 128 m, or m × k in boxes of 64 m × 64 k; B k × n in boxes of 128 bytes of k × N;
/// 128-byte swizzle), then the stream-k [`Scratch`]; the launch has [`geometry`]'s block and
/// pool, at most one block per multiprocessor and at most one per iteration.
#[inline(always)]
pub unsafe fn gemm<O: HalfC<R>, const R: usize, const A_K_MAJOR: bool>(
    args: O::Args,
    maps: *const TensorMap,
) where
    Accumulator<R>: Registers,
{
    unsafe { pipeline::run(WgmmaNarrow::<O, R, A_K_MAJOR>(PhantomData), args, maps) }
}
