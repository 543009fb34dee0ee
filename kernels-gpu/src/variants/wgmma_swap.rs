//! `wgmma-swap`: bf16 and f16 at decode sizes with the tokens as the `wgmma`'s M and a few rows
//! of weights as its N, so that the tiles make one wave and, where they can, no block shares a
//! tile.
//!
//! Source: none of the documents (cuBLAS's own decode kernels, which ncu names
//! `nvjet_sm90_tst_64x64_64x13_4x1…` and `…_64x16_64x16_4x1…`; CUTLASS's and TensorRT-LLM's
//! "swap-AB"). Changed from [`super::wgmma_fp8_block_swap`], the same turn of the tile for
//! block-scaled e4m3, with its scales taken out and a 16-bit `wgmma`:
//!
//! - **Why.** `wgmma-narrow` ([`super::wgmma_narrow`]), this type's decode kernel until now,
//!   keeps the weights as the `wgmma`'s 64-row M: a tile is 128 rows of weights, 2112 rows make
//!   17 tiles for 132 multiprocessors, and its stream-k grid shares each tile's k between
//!   several blocks, the last of which adds the others' parts. Timed as a decode step runs (L2
//!   flushed, the launch hidden: the host's `--cold`) it ran 0.50× cuBLAS at 2112 × 64 × 1024
//!   and 0.75–0.78× at 6144 × {64, 128} × 4096 on the H200. ncu named cuBLAS's kernels there:
//!   tiles of **24 to 96 rows of weights** by 16 or 64 tokens, 88 to 128 blocks, k split only
//!   where the rows are few, 10–16 stages; its DRAM at 60–66% of peak against the narrow
//!   kernel's 43–47% (`docs/results/h200-2026-11-29-swap/`, run 13).
//! - **The swap.** The `wgmma`'s N is any multiple of 8 up to 256, its M always 64. So the
//!   tokens are its A (64 per consumer warpgroup) and W rows of weights its B: 4096 rows are 128
//!   tiles of 32, 6144 are 128 of 48, 7168 are 128 of 56. Every block streams its own rows of
//!   weights over all of k and nothing is added across blocks. `--tile 100 + W`: one consumer
//!   warpgroup, 64 tokens a tile; `--tile W`: two, 128 tokens.
//! - **Both operands K-major as they lie** (T,N: the weights A stored k × m, the model's layout;
//!   the tokens B stored k × n, a row-major program's activations), so the swap is which
//!   descriptor goes first: a stage is W rows of weights, then the tile's tokens, a 128-byte row
//!   of k (64 values) each, one TMA box apiece ([`load_stage`], which the FP8 kernel shares).
//! - **The accumulator is `Cᵀ`'s**: a row per token, a column per row of weights, so a
//!   register pair is two adjacent rows of C, one 4-byte store
//!   ([`crate::pipeline::epilogue::store_transposed`], the 16-bit kernels' store, with its fused epilogue,
//!   `beta` and edges).
//! - **One chain of `wgmma`s over every slice** (the skeleton's mainloop,
//!   [`super::wgmma_narrow::one_chain`]), one group in flight while the previous slice's stage
//!   is given back; a ring as deep as 200 KiB allows (14 stages at W = 48, 64 tokens).
//! - **A tile's tokens are read from L2 by every block of its column**: 8 KiB a slice for 64
//!   tokens, against W × 128 bytes of its own weights. At W = 16 (2112 rows in 132 tiles) that
//!   is four times the weights, and at k = 7168 it ran 0.81× cuBLAS; W is 32 to 64 (the waves
//!   then need m ≥ about 3000), 16 only where k ≤ 2048 (0.97× at 2112 × 64 × 1024).
//! - **Fewer rows than a wave: stream-k** (`--tile 200 + W`, one warpgroup): the grid and fixup
//!   of [`crate::pipeline::stream`], as the narrow kernel's, on tiles of W rows of weights, so
//!   that each block reads W rows over its share of k: 0.96× cuBLAS at 2112 × 64 × 7168, 0.91×
//!   at 1024 × 64 × 4096 (the narrow kernel 0.78× and 0.61×). Each tile is cut into equal
//!   parts, one block each ([`crate::pipeline::Kernel::EQUAL_PARTS`], the FP8 swapped kernel's
//!   lesson, [`super::wgmma_fp8_block_swap`]): here within ±1.5% of the grid whose blocks cross
//!   tiles at the shapes `auto` gives it, and faster for the narrower tiles (`:232` 0.76 → 0.93×
//!   at 1024 × 64 × 4096; `docs/results/h200-2026-11-29-fp8-stream-k/` run 3).
//! - **16 tokens a tile** (`--tile 300 + W`, up to 16 tokens: a decode step's batch): the TMA
//!   box is 16 rows of tokens, not 64. A box row past n is zeros that the TMA engine writes, but
//!   not for free: ncu counted 122 MB through L2 at 6144 × 16 × 4096, 131 MB at 64 tokens and
//!   50 MB of weights. The `wgmma` still reads 64 rows; the other 48 are whatever the stage
//!   held, their accumulator rows are not stored, and the store is clipped to the tile's own
//!   16 tokens (without that clip the stale rows overwrote the next tiles' columns: the
//!   emulator's check at 304 × 40 × 104 failed at a relative error of 0.45). From 1 to 16 tokens
//!   at 4096–28672 rows, 0.76–0.85× → 0.97–1.02× cuBLAS. Zeroing those rows once per block,
//!   tried first, cost 1.5–2% at three of five shapes (run 20).
//! - **Clusters sharing the tokens** (what cuBLAS's `4x1` is: a cluster of four blocks along m,
//!   the tokens multicast): built as the FP8 kernel's (clusters of two and of four), and as
//!   there, slower: at 13 of 14 shapes and level at the last (run 16: the best clustered tile
//!   0.65–0.98× cuBLAS where the best without ran 0.72–1.05×); dropped.
//! - **L2 told which operand stays** ([`load_stage`], shared with the block-scaled swapped
//!   kernel): the weights loaded with an `evict_first` policy (read once, and at most decode
//!   shapes more than L2's 50 MB), the tokens, which every block of a column reads, with
//!   `evict_last` (`cp.async.bulk.tensor…L2::cache_hint`, [`tma::L2Policy`]). ncu had L2's hit
//!   rate at 37% where the tokens alone should make it 50%: the streamed weights evicted them.
//!   Measured cold by the kernels' clock (`docs/results/h200-2026-11-29-kernel-clock/` run 6,
//!   × cuBLAS): 2112 × 64 × 7168 0.96 → 1.03, 4096 × 16 × 4096 1.01 → 1.16, 2112 × 16 × 7168
//!   0.93 → 0.96.
//!
//! What the SASS shows (`cargo xtask sass --variant wgmma-swap --dtype bf16 --tile 148`): 232
//! registers with one consumer warpgroup, 168 with two, no spills; the hot loop is four
//! `HGMMA.64xWx16.F32.BF16` per slice in 53 instructions (71 on the stream-k grid, whose
//! descriptors ptxas moves into uniform registers at every slice: 16 `R2UR`).
//!
//! Measured (`docs/results/h200-2026-11-29-swap/`, NVIDIA H200, cold, cuBLAS in the same
//! process, two rounds each): `auto` over 19 decode shapes of Llama-3 8B and DeepSeek-V3 (1 to
//! 128 tokens) **0.774× cuBLAS** geomean with the narrow kernel (run 19), lowest 0.498;
//! **0.960×** with this one (run 21), lowest 0.816, above 1.0 at six shapes. Warm, 1.03× and
//! 1.16–1.23×. Still short: 128 tokens (0.82–0.97×: each block reads 16 KiB of tokens a slice
//! against 4–8 of weights) and one token at 2112 rows (0.89×, the stream-k grid).
//!
//! **e4m3 with one scale per tensor is the same kernel** (`wgmma-fp8-swap`): it is generic over
//! [`super::wgmma_narrow`]'s [`Operands`], whose `E4m3` gives 128 values of k per slice, the
//! `wgmma.m64nWk32.e4m3` and the scales folded into alpha. Its decode shapes, cold: 0.71 →
//! 0.97× cuBLASLt over 13 (the narrow kernel before).
//!
//! **A mixture of experts' layer at decode** (`--tile 400 + W`, 16 tokens a tile, and `500 + W`,
//! 64: `GROUPED`). DeepSeek-V3 sends each token to 8 of 256 experts, so at 1 to 128 tokens an
//! expert has a few tokens or none: the masked layout's grouped GEMM (DeepGEMM's), a batch of 256
//! slots whose counts the kernel reads on the device. Until now `auto` ran it on the 256 × 128
//! tiles of `wgmma-layouts:2`: 128 columns for 1 to 8 tokens. The swap needs nothing new for it:
//! [`load_stage`] already takes the weights' layer from the tile's group and the tokens' from
//! its member, and the epilogue stops at the member's count
//! ([`crate::pipeline::Problem::member`]). Two constants of the skeleton do the rest:
//! [`Kernel::GROUPS`] (the walk finds each tile's group) and [`Kernel::PACKED_WALK`]: the tiles
//! of the experts with tokens first, packed, so that the blocks share them evenly. Walked in the
//! capacity's order, a block took every 132nd tile of 256 × 64 units of which a few hundred
//! had work, and which blocks got them depended on which experts the tokens chose: on the H100
//! the chain of 32 layers at one token ran 11.07 ms where the same kernel over 8 experts
//! numbered 0 to 7 predicts 7.97 (`docs/results/h100-2026-12-07-decode/run2`; cuBLAS's chain
//! 9.37). The packed walk moves a cursor forward with the block's units
//! ([`crate::pipeline::schedule::MaskedCursor`]): the same chain then ran **9.67 ms, 0.945×
//! cuBLAS's** (9.14 in that process), and at 16 tokens (100 experts) 1.256× (1.220× before;
//! `docs/results/h100-2026-12-07-decode/run3/`). Still 2.4 ms from the 7.97 the kernel alone
//! predicts: it streams the weights at 69% of HBM where cuBLAS's calls, graph-captured, stream
//! at 74% (`docs/perf-notes/shapes-and-decode.md`).
//!
//! Measured alone on the H100 (masked, T,N, cuBLAS a call per expert in the same process, run
//! 2): 8 experts of 1 token at 4096 × 7168, `:464` 1.286× cuBLAS, `wgmma-layouts:2` 1.274×; 100
//! of 1–2 tokens 1.347× and 1.316×; 233 of 4–8 tokens 1.350× and 1.336×; at 7168 × 2048 1.417,
//! 1.439 and 1.434× against 1.363, 1.434 and 1.424×. 32 rows of weights (`:432`) ran level
//! with 64 or up to 4% slower; 64 tokens a tile 1–5% behind 16 at these capacities of 1 to 8
//! (`:564`), `:532` 0.82–1.02×. `auto` takes `:464` up to a capacity of 16 tokens and `:564`
//! from 17 to 64, where a 16-token box would read the weights once per 16 tokens (not measured
//! yet: the decode experiment's capacities stayed at 8 to 16).
//!
//! **TF32 is the same kernel** (`wgmma-tf32-swap`, [`super::wgmma_narrow::Tf32Operands`]): a
//! 128-byte row of a stage is 32 f32 of k, a `wgmma.m64nWk8.tf32` step 32 bytes as every other
//! type's, and both operands K-major in shared memory, which is all TF32's descriptors read
//! (chapter 2's [`super::wgmma_tf32`] takes column-major A through registers for that reason):
//! T,N, the models' layout, needs no copy. C is f32, written in 8-byte pairs of adjacent rows
//! ([`crate::pipeline::epilogue::store_transposed_f32`]). Beside the decode tiles it has two for
//! prefill, `--tile 1000 + W`: 128 or 256 rows of weights by 128 tokens in two consumer
//! warpgroups (`:1256` is cuBLAS's TF32 tile, 128 × 256, turned, with four 48 KiB stages).
//! Before it, TF32 T,N ran `wgmma-tf32` on A copied transposed: 0.477× cuBLAS TF32 over the
//! Llama-3 suite on the H100 (0.29–0.37× at decode sizes, where the copy of the weights cost
//! more than the GEMM). With it, `auto --math tf32` over DeepGEMM's set and Llama-3's layers
//! (63 shapes, T,N, H100, `docs/results/006-shapes-tf32/`): **1.097× cuBLAS TF32**, 1.0–1.6× at
//! 1 to 128 tokens (78% of HBM's datasheet, cuBLAS 66%), 0.76–1.03× at 2000 and 4096 tokens,
//! where `:1256` lacks cuBLAS's cluster pair (`docs/perf-notes/hopper-tf32.md`).
//!
//! What it does not do: N,N (the weights MN-major: a W-row box of m needs a narrower swizzle
//! for each W), block scales (their own kernel, [`super::wgmma_fp8_block_swap`], whose slices
//! are promoted one by one), groups in e4m3 (the FP8 grouped GEMM is planned apart). `auto`
//! takes it at T,N decode shapes (`gpu_gemm::auto`'s shape rule, and per tensor in e4m3) and
//! for T,N masked groups of at most 64 tokens (its group rule).
use super::wgmma_narrow::{one_chain, Operands, Sixteen};
use crate::device::half::Bf16;
use crate::device::tma::{self, Swizzle, TensorMap};
use crate::device::wgmma::{Accumulator, Descriptor, HalfWgmma, Registers};
use crate::device::{cluster, pool_address, warp_uniform};
use crate::gemm::Geometry;
use crate::pipeline::schedule::Tile;
use crate::pipeline::stream::{self, Scratch, FIXUP_BYTES};
use crate::pipeline::{self, Consumer, Kernel, Stages, Work, WARPGROUP};
use core::marker::PhantomData;

/// Bytes of k per stage row: one 128-byte swizzled row (64 values of 16 bits, 128 of e4m3).
pub const ROW_BYTES: u32 = 128;
/// A `wgmma.k16` step: 32 bytes along each K-major row.
const K_STEP_BYTES: u32 = 32;
/// The shared memory the ring may take (of the H100's 227 KiB per block).
const RING_BYTES: u32 = 200 * 1024;

/// Consumer warpgroups of one `wgmma.m64` each for a tile of `tokens` tokens (columns of C).
pub const fn consumers(tokens: u32) -> u32 {
    tokens.div_ceil(64)
}

/// Rows of weights (of m) per tile for an accumulator of `R` registers per thread: the
/// `wgmma`'s N.
pub const fn tile_m(r: usize) -> u32 {
    2 * r as u32
}

/// Bytes of one stage: the tile's weights, then 64 rows of tokens per consumer warpgroup (what
/// its `wgmma`s read), one 128-byte row of k each.
pub const fn stage_bytes(r: usize, tokens: u32) -> u32 {
    (tile_m(r) + 64 * consumers(tokens)) * ROW_BYTES
}

/// As many stages as fit in 200 KiB: 20 at W = 16 with 64 tokens, 10 at W = 32 with 128.
pub const fn stages(r: usize, tokens: u32) -> u32 {
    RING_BYTES / stage_bytes(r, tokens)
}

/// Loads stage `s` of a swapped tile: `bm` rows of weights from A (stored k × m, its map first
/// at `maps`), then `bn` tokens from B (stored k × n, the next map), 128 bytes of k each from
/// `k0`, counted on the stage's *full* barrier. In a cluster of `cluster_m` blocks along m,
/// whose tiles share their tokens, each block loads `bn / cluster_m` of them and the TMA engine
/// multicasts them into the same place of every block's stage (and counts them on every
/// block's barrier).
///
/// # Safety
/// As [`Kernel::load`], with A's boxes `bm` rows of 128 bytes and B's `bn / cluster_m`.
#[inline(always)]
pub unsafe fn load_stage(
    maps: *const TensorMap,
    stages: Stages,
    s: u32,
    tile: Tile,
    k0: i32,
    (bm, bn): (u32, u32),
    cluster_m: u32,
) {
    let (a_map, b_map) = (maps, maps.wrapping_add(1));
    let (full, stage) = (stages.full(s), pool_address(stages.stage(s)));
    let (m0, n0) = (tile.row * bm, tile.col * bn);
    let tokens_at = stage + bm * ROW_BYTES;
    unsafe {
        // The weights are read once, past L2's size at most decode shapes; every block reads
        // the tokens.
        let weights = tma::L2Policy::evict_first();
        tma::load_box_hinted(a_map, stage, k0, m0 as i32, tile.group, full, weights);
        if cluster_m == 1 {
            let tokens = tma::L2Policy::evict_last();
            tma::load_box_hinted(b_map, tokens_at, k0, n0 as i32, tile.member, full, tokens);
        } else {
            let share = bn / cluster_m;
            let first = cluster::rank() * share;
            let everyone = ((1u32 << cluster_m) - 1) as u16;
            let (at, n) = (tokens_at + first * ROW_BYTES, (n0 + first) as i32);
            tma::load_box_multicast(b_map, at, k0, n, tile.member, full, everyone);
        }
    }
}

/// The kernel with tiles of `2R` rows of weights by `TOKENS` tokens (16, 64 or 128: one consumer
/// warpgroup per 64), operands `O` (bf16, f16, or e4m3 with one scale per tensor: the narrow
/// kernel's [`Operands`]); with `STREAM_K` (one consumer warpgroup) on a stream-k grid that
/// splits the tiles' k between blocks ([`crate::pipeline::stream`]); with `GROUPED`, walking a
/// grouped GEMM's tiles ([`Kernel::GROUPS`]: a mixture of experts' layer at decode).
#[derive(Clone, Copy, Default)]
pub struct WgmmaSwap<
    O,
    const R: usize,
    const TOKENS: u32,
    const STREAM_K: bool,
    const GROUPED: bool = false,
>(PhantomData<O>);

/// The launch geometry: one block per tile, or with `STREAM_K` one per slice of every tile (the
/// host caps the grid at one block per multiprocessor, and the blocks walk the tiles or share
/// the slices). `element_bytes` is A's and B's (k per slice: 128 bytes of it); the block and its
/// pool are the same whatever the type, so the bf16 kernel's stand for all.
pub fn geometry<const R: usize, const TOKENS: u32, const STREAM_K: bool>(
    m: u32,
    n: u32,
    k: u32,
    element_bytes: u32,
) -> Geometry
where
    Accumulator<R>: HalfWgmma<Bf16>,
{
    type K<const R: usize, const C: u32, const S: bool> = WgmmaSwap<Sixteen<Bf16>, R, C, S>;
    let tiles = m.div_ceil(tile_m(R)) * n.div_ceil(TOKENS);
    let units = if STREAM_K {
        tiles * k.div_ceil(ROW_BYTES / element_bytes).max(1)
    } else {
        tiles
    };
    Geometry {
        grid: (units, 1),
        block: (K::<R, TOKENS, STREAM_K>::THREADS, 1),
        shared_bytes: K::<R, TOKENS, STREAM_K>::POOL_BYTES,
    }
}

impl<
        O: Operands<R>,
        const R: usize,
        const TOKENS: u32,
        const STREAM_K: bool,
        const GROUPED: bool,
    > Kernel for WgmmaSwap<O, R, TOKENS, STREAM_K, GROUPED>
where
    Accumulator<R>: Registers,
{
    type Args = O::Args;
    const BM: u32 = tile_m(R);
    const BN: u32 = TOKENS;
    const CONSUMERS: u32 = consumers(TOKENS);
    const BK: u32 = O::BK;
    const STAGES: u32 = stages(R, TOKENS);
    const STAGE_BYTES: u32 = stage_bytes(R, TOKENS);
    const LOADED_BYTES: u32 = (tile_m(R) + TOKENS) * ROW_BYTES;
    const STREAM_K: bool = STREAM_K;
    const EQUAL_PARTS: bool = STREAM_K;
    const EXTRA_BYTES: u32 = if STREAM_K { FIXUP_BYTES } else { 0 };
    // The stream-k walk's 64-bit arithmetic beside the loads' two L2 policies: at the default
    // 40 registers ptxas spilled 16 bytes in the producer.
    const PRODUCER_REGISTERS: u32 = if STREAM_K { 56 } else { 40 };
    const PREFETCHED_SLICE_BYTES: u32 = tile_m(R) * ROW_BYTES;
    // (The stream-k walk takes no groups.)
    const GROUPS: bool = {
        assert!(!(GROUPED && STREAM_K));
        GROUPED
    };
    // A decode step's experts with tokens are a few of 256, anywhere: walked in the capacity's
    // order, their tiles fell on the blocks unevenly.
    const PACKED_WALK: bool = GROUPED;

    #[inline(always)]
    unsafe fn load(self, maps: *const TensorMap, stages: Stages, s: u32, tile: Tile, slice: u32) {
        let k0 = (slice * O::BK) as i32;
        unsafe { load_stage(maps, stages, s, tile, k0, (Self::BM, Self::BN), 1) }
    }

    /// The weights' box of the slice, as [`load_stage`] reads it, into L2 only.
    #[inline(always)]
    unsafe fn prefetch(self, maps: *const TensorMap, tile: Tile, slice: u32) {
        let (k0, m0) = ((slice * O::BK) as i32, (tile.row * Self::BM) as i32);
        unsafe { tma::prefetch_box(maps, k0, m0, tile.group) }
    }

    // ANCHOR: core_loop
    #[inline(always)]
    unsafe fn consume(
        self,
        args: Self::Args,
        maps: *const TensorMap,
        c: &mut Consumer,
        work: Work,
    ) {
        // Stream-k with one warpgroup of 64 tokens: with two, one past n would miss the fixup's
        // barriers; with a 16-token box, the host's workspace (a tile's W × 16 values per
        // slab) would be a quarter of the 64 × W that `stream::finish` writes.
        const { assert!(!STREAM_K || TOKENS == 64) };
        // As lane 0 holds it, so that the descriptors stay uniform.
        let first_token = 64 * warp_uniform(c.warpgroup);
        let (m0, n0) = (
            work.tile.row * Self::BM,
            work.tile.col * Self::BN + first_token,
        );
        if n0 >= pipeline::Problem::mnk(&args).1 {
            return c.pass_over(work.slices);
        }
        // The tokens are the `wgmma`'s A (this warpgroup's 64 rows of the stage's tokens), the
        // weights its B (the stage's first W rows).
        let tokens_at = (Self::BM + first_token) * ROW_BYTES;
        let mut total = one_chain(c, work, |stage, acc: &mut Accumulator<R>, fresh| {
            let a = Descriptor::k_major(stage + tokens_at, Swizzle::B128, 16, 1024);
            let b = Descriptor::k_major(stage, Swizzle::B128, 16, 1024);
            for step in 0..ROW_BYTES / K_STEP_BYTES {
                let (a, b) = (
                    a.advanced(K_STEP_BYTES * step),
                    b.advanced(K_STEP_BYTES * step),
                );
                O::mma(acc, a, b, !(fresh && step == 0), true);
            }
        });
        // A tile shared with other blocks: the last of them to finish writes it.
        if !work.whole() {
            let scratch = unsafe { Scratch::after(maps, 2) };
            let flag = c.stages.extra();
            if !unsafe { stream::finish(scratch, &work, &mut total, c.thread, WARPGROUP, flag) } {
                return;
            }
        }
        // A tile of 16 tokens stores its own 16: the `wgmma`s' other 48 rows of tokens are
        // whatever the stage held past the box (no copy writes them), and their accumulator
        // rows, the next tiles' columns, are not stored. (e4m3's scales, one per tensor, are
        // folded into alpha on the way.)
        let total = Accumulator::from_registers(total);
        let n_end = n0 + TOKENS.min(64);
        unsafe { O::store_transposed(&args, &total, (m0, n0), n_end, c.thread) };
    }
    // ANCHOR_END: core_loop
}

/// The entry point's body.
///
/// # Safety
/// As [`pipeline::run`]: `maps` points to A's and B's tensor maps (A k × m in boxes of 64 k ×
/// `2R` m, B k × n in boxes of 64 k × `64·CONSUMERS` n, 16-bit values, the 128-byte swizzle),
/// and the launch has [`geometry`]'s block and pool and at most one block per multiprocessor.
#[inline(always)]
pub unsafe fn gemm<
    O: Operands<R>,
    const R: usize,
    const TOKENS: u32,
    const STREAM_K: bool,
    const GROUPED: bool,
>(
    args: O::Args,
    maps: *const TensorMap,
) where
    Accumulator<R>: Registers,
{
    let kernel = WgmmaSwap::<O, R, TOKENS, STREAM_K, GROUPED>(PhantomData);
    unsafe { pipeline::run(kernel, args, maps) }
}
