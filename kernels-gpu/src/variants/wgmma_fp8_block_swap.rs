//! `wgmma-fp8-block-swap`: the block-scaled GEMM of a decode step with the tokens as the
//! `wgmma`'s M and a few rows of weights as its N, so that the tiles make one wave with no
//! split of k.
//!
//! Source: none of the documents (DeepGEMM's small-M kernels, whose `BLOCK_N` is chosen so that
//! the tiles fill the multiprocessors; CUTLASS's and TensorRT-LLM's "swap-AB"). Changed from
//! `wgmma-fp8-block-narrow` ([`super::wgmma_narrow`] with [`super::wgmma_narrow::E4m3Blocks`]):
//!
//! - **Why.** With 64 or 128 tokens (`n`), the weights (`m` rows of A, k × m e4m3) are nearly
//!   all the bytes, and the time to beat is theirs over the HBM bandwidth. The narrow kernel's
//!   tile is 128 rows of weights (two `wgmma.m64`): 2112 rows make 17 tiles for 132
//!   multiprocessors, so it splits k between blocks (stream-k), and the block that finishes a
//!   tile adds every other part alone. On DeepGEMM's dense set it streamed the weights at about
//!   1.0 TB/s where DeepGEMM's figures imply 2.1 (`docs/perf-notes.md`).
//! - **The swap.** The `wgmma`'s M is 64, whatever the operand; its N is any multiple of 8 up to
//!   256. So the tokens go where 64 is no waste, the `wgmma`'s A (each consumer warpgroup 64 of
//!   a tile's 64 or 128 tokens), and the weights where the tile can be as thin as the wave
//!   needs, the `wgmma`'s B: N = W rows of weights (`--tile W`: 16, 24, 32, 48, 56 or 64, two
//!   consumer warpgroups; the configurations below add 100, 200 or 300). 2112 rows are
//!   132 tiles of 16, 7168 are 128 tiles of 56: every block streams its own rows over all of
//!   k, and nothing is added across blocks. The accumulator is `Cᵀ`'s: a row per token, a column
//!   per weight row, which is the orientation of the 16-bit kernels' store
//!   ([`epilogue::store_transposed`]): a register pair is two adjacent rows of C, one 4-byte
//!   store.
//! - **Both operands are K-major as they lie** (A stored k × m, B k × n: TN, all an 8-bit
//!   `wgmma` reads), so swapping them is a matter of which descriptor goes first: a stage is W
//!   rows of weights then 128 rows of tokens, 128 bytes of k each (one TMA box apiece).
//! - **The scales turn with the operands.** A's scales are per row of weights and 128 of k,
//!   now the accumulator's *columns*: a thread's N/2 registers lie in N/4 rows of weights, each
//!   with its own scale per slice ([`scales_by_column`]); B's 128 × 128 blocks of tokens give
//!   the tile one scale per slice. The promotion is `total += (sa_col·sb)·partial`, one FMA per
//!   register ([`promote`]).
//! - **A's scales land with the operands** ([`Kernel::load_with`]): the producer thread
//!   bulk-copies each slice's W scales (`cp.async.bulk`, contiguous in `scale_a`) beside its
//!   stage, counted on the stage's *full* barrier, as `wgmma-fp8-block:8` and `:9` do. B's, one
//!   per slice for the whole tile, sit in the consumer warp's lanes a run of 32 slices at a time
//!   (lane `l` slice `32j + l`'s, the next run loaded a run ahead), one shuffle per slice.
//!   Loaded by each consumer thread from global memory (as the narrow kernel does) every block
//!   had run 0.5–1.0× cuBLASLt: the copies that rotate the loaded scales between turns waited
//!   for the loads, an L2 round trip per slice. The first cure, the producer warpgroup's other
//!   96 threads staging them ([`Kernel::assist`], each with four slices' loads in flight, a
//!   *ready* barrier per stage), turned out to pace the ring itself: see "Cold caches" below.
//! - **Two partial sums in turn** ([`wgmma_fp8_block::in_turns`], `wgmma-fp8-block:3`'s
//!   mainloop): slice s + 1's `wgmma`s are issued before slice s is promoted. A block runs every
//!   slice of its tile in sequence (56 at k = 7168), so each slice's latency counts.
//! - **The scales' loads before the release.** Each lane loads its scales from the stage and
//!   lane 0 alone releases it, so the release is preceded by `__syncwarp()`
//!   ([`Consumer::finish_loads`]), which orders every earlier load. With two consumer
//!   warpgroups the next slice's scales are taken after the release, which would otherwise
//!   wait for them (+4.6% at 4096 × 128 × 7168 on the H200); with one, before the wait, where
//!   taking them late lands on the block's only chain of handshakes (−2.5% at 4096 × 64 × 7168)
//!   (`docs/results/h200-2026-11-28-warp-sync/`).
//! - **One consumer warpgroup for 64 tokens** (`--tile 100 + W`): with two, a decode step of 64
//!   tokens left the second only taking and giving back stages, and half of each tokens' box
//!   out of bounds; 64 tokens a tile made it 1.05–1.15× faster at 64 tokens, and at 128 tokens
//!   too where twice the tiles still make one wave (2112 rows).
//!
//! What the SASS shows (`cargo xtask sass --variant wgmma-fp8-block-swap --dtype e4m3`): 168
//! registers at entry with two consumer warpgroups (232 with one), no spills; four
//! `QGMMA.64xWx32.F32.E4M3.E4M3` per slice.
//!
//! Measured warm on the H100 (`docs/results/h100-2026-11-26-fp8-swap/`, DeepGEMM's dense set,
//! cuBLASLt's block-scaled matmul in the same process), where 32-row tiles make half to one
//! wave: 1.15× and 1.31× cuBLASLt at 64 tokens over 2112 and 4096 rows (`:132`; the narrow
//! kernel 1.11× and 1.19× in the same process), 1.18× and 1.14× at 128 tokens (`:132`, `:32`;
//! narrow 0.95× and 0.93×); `auto` takes it there. Where the tiles are more than a wave, 128-row tiles win: every block reads
//! its tokens over all of k from L2, once per tile, and with tiles of 16–64 rows of weights that
//! is more traffic than the weights. Still 0.48–0.63× DeepGEMM's figures at those shapes; the
//! next step is DeepGEMM's, the tokens' slice multicast to a cluster of blocks
//! ([`super::wgmma_cluster::SharedB`]).
//!
//! - **Clusters of two along m sharing the tokens** (`--tile 200 + W` with one consumer
//!   warpgroup, `300 + W` with two): each block loads half of the tokens' slice and the TMA
//!   engine multicasts it, as DeepGEMM does, halving the tokens' reads from L2. Measured: slower
//!   at every shape (`:232` 1.18× cuBLASLt at 2112 × 64 × 7168 against `:132`'s 1.33×, `:332`
//!   1.08× at 4096 × 128 × 7168 against `:32`'s 1.20×): the reads of L2 were not what limited
//!   it. Nor was one tile's memory: at 2112 × 128 × 7168 two tiles of 64 tokens (`:132`, 132
//!   blocks, reading the weights twice) ran 1.23× where one tile of 128 (`:32`, 66 blocks) ran
//!   1.11×. A block streams a slice at a time through one chain of handshakes, and at these
//!   sizes more blocks, not fewer bytes, is what paid. Measured again once the scales no longer
//!   paced the ring (cold, H200, `docs/results/h200-2026-11-29-cold/` run 10): still slower at
//!   all five shapes (`:216` 1.06× against `:116`'s 1.19× at 2112 × 64 × 7168, `:332` 1.03×
//!   against `:164`'s 1.14× at 4096 × 128 × 7168).
//!
//! **Cold caches.** Every figure above was taken as the host then timed: each run launched
//! after the last one ended, the weights (15–30 MB) still in the 50 MB L2 and the host's launch
//! latency inside the events. Timed as DeepGEMM times (L2 flushed by a 256 MiB write before each
//! run, the launch queued behind it: the host's `--cold`), this kernel took 29–34 µs at 2112 and
//! 4096 rows where cuBLASLt took 18–22 (0.62–0.65×; 1.11–1.38× warm, where cuBLASLt's launch
//! costs it 4–6 µs). ncu's samples (run 5): the consumers waited a quarter of the time on the
//! *ready* barrier, right after issuing a slice whose operands had landed; the assisting
//! threads waited on their loads of the scales. A slice took 430 ns, about one round trip to
//! DRAM: the default `mbarrier.arrive` is a release, and each assisting thread's arrival was
//! ordered after every load it had in flight, so four (or sixteen: tried, 30 → 28 µs) loads
//! ahead still made one round trip per slice. With A's scales bulk-copied onto the *full*
//! barrier and B's in the lanes, nothing but the operands paces the ring: 29 → 15 µs at
//! 2112 × 64 × 7168 (`:116`), 33 → 17 µs at 4096 × 64, 30 → 16 at 2112 × 128, 34 → 19 at 4096 ×
//! 128, 1.15–1.24× cuBLASLt cold. The tile now pays at 7168 rows too (`:164`, `:56`: 1.04–1.15×
//! where `:10` and `:8` ran 0.88–0.94×), and `auto` takes it wherever a tile makes one wave
//! (`gpu_gemm::fp8::run`'s `swap_tile`).
//!
//! **Stream-k in equal parts** (`--tile 400 + W`, one consumer warpgroup, [`Kernel::STREAM_K`]
//! with [`Kernel::EQUAL_PARTS`]). With 16 rows a tile, each block reads four times as many
//! bytes of tokens as of its own weights, all along k; and below ~2000 rows no tile of 32 or
//! more makes a wave. Wider tiles with k cut between blocks read the tokens once per part
//! instead: 32–66 tiles of 32 or 48 rows, each cut into as many equal parts as the 132
//! multiprocessors allow (2112 × 64: 44 tiles of 48 rows in three parts of 19 slices), the last
//! part's block adding the others' through the skeleton's fixup
//! ([`crate::pipeline::stream`]). Measured cold on the H200
//! (`docs/results/h200-2026-11-29-fp8-stream-k/`, × cuBLASLt): 1.32 against `:116`'s 1.19 at
//! 2112 × 64 × 7168, 1.57 against 1.16 at 1024 × 64 × 7168, 1.43 against 1.19 at 1024 × 128
//! × 7168, 1.26 against 1.18 at 1536 × 128. As plain stream-k first (each block an equal share
//! of all the tiles' slices, crossing from one tile into the next), the same tiles ran 0.91×
//! cuBLASLt at 4096 × 64 × 7168 where `:132` ran 1.24: a block's second segment costs a fixup
//! (its part written, a GPU-scope atomic, the finisher's reads) and a reload of B's scales,
//! chains of round trips that a 15 µs kernel feels. In equal parts no block crosses a tile;
//! still 0.89× `:132`'s speed there, where 32-row tiles already fill the wave, and 0.94× the
//! 16-row tile's at k = 4096 (parts of 16 slices): `auto` takes the stream-k tiles where the
//! one-wave tile is 16 rows over k ≥ 6144 or fills less than four fifths of the
//! multiprocessors (`gpu_gemm::fp8::run`'s `equal_parts_tile`).
//!
//! **L2 told which operand stays** (the loads of [`super::wgmma_swap::load_stage`]): the
//! weights `evict_first`, the tokens `evict_last`. With a stream of weights past L2's size the
//! tokens that 112–132 blocks read had been evicted between their reads (ncu: L2's hit rate
//! 37% at 7168 × 64 × 7168, where the tokens alone make half the reads). Cold, by the kernels'
//! clock (`docs/results/h200-2026-11-29-kernel-clock/` run 6, × cuBLASLt): 7168 × 64 × 7168
//! 1.23 → 1.41, 2112 × 64 × 7168 1.37 → 1.43, 4096 × 64 × 7168 1.28 → 1.32, the shapes of 2048
//! slices of k +1–2%.
//!
//! What it does not do: groups, batches.
//!
//! [`Kernel::STREAM_K`]: crate::pipeline::Kernel::STREAM_K
//! [`Kernel::EQUAL_PARTS`]: crate::pipeline::Kernel::EQUAL_PARTS
use super::wgmma_fp8_block::{self, BK};
use super::wgmma_swap::load_stage;
use crate::device::tma::{self, Swizzle, TensorMap};
use crate::device::wgmma::{self, Accumulator, Descriptor, Fp8Wgmma, Registers};
use crate::device::Real;
use crate::device::{pool_address, shfl_idx, warp_uniform, Shared};
use crate::gemm::{Fp8GemmArgs, Geometry};
use crate::pipeline::epilogue;
use crate::pipeline::schedule::Tile;
use crate::pipeline::stream::{self, Scratch, FIXUP_BYTES};
use crate::pipeline::{self, Consumer, Kernel, Stages, Work, WARPGROUP};

/// Tokens (columns of C) per tile with `consumers` consumer warpgroups of one `wgmma.m64` each:
/// 128 with two, 64 with one (a decode step of 64 tokens, whose second warpgroup would only
/// wait: `--tile` above 100 of [`crate::registry`]'s variant).
pub const fn tokens(consumers: u32) -> u32 {
    64 * consumers
}
/// B's scales are blocks of 128 tokens.
const SCALE_BLOCK: u32 = 128;
/// The `wgmma`'s k: 32 bytes of a 128-byte row.
const K_STEP: u32 = 32;
/// The shared memory the ring may take (of the H100's 227 KiB per block).
const RING_BYTES: u32 = 200 * 1024;

/// Rows of weights (of m) per tile for an accumulator of `R` registers per thread: the
/// `wgmma`'s N.
pub const fn tile_m(r: usize) -> u32 {
    2 * r as u32
}

/// Bytes of one stage: the tile's weights, then its tokens, one 128-byte row of k each.
pub const fn stage_bytes(r: usize, consumers: u32) -> u32 {
    (tile_m(r) + tokens(consumers)) * BK
}

/// As many stages as fit in 200 KiB: with 128 tokens, 11 at W = 16 and 8 at W = 64.
pub const fn stages(r: usize, consumers: u32) -> u32 {
    RING_BYTES / stage_bytes(r, consumers)
}

/// Slices per run of B's scales held in a warp's lanes (lane `l` holds slice `32j + l`'s).
const RUN: u32 = 32;

/// Bytes of one stage's scales: A's for the tile's rows of weights (a multiple of 16, as a bulk
/// copy's size must be: 2R is a multiple of 8).
pub const fn scale_bytes(r: usize) -> u32 {
    4 * tile_m(r)
}

/// Stage `s`'s scales, in the pool's memory after the ring: element `i` is A's scale of the
/// tile's row of weights `i`.
#[inline(always)]
fn stage_scales<const R: usize>(stages: Stages, s: u32) -> Shared<f32> {
    Shared::at(stages.extra() + s * scale_bytes(R), tile_m(R))
}

/// The kernel with tiles of `2R` rows of weights by `64·CONSUMERS` tokens ([`tokens`]), in
/// clusters of `CLUSTER_M` blocks along m that share the tokens' slices (each block loads its
/// share of them and the TMA engine multicasts it to every block of the cluster); with
/// `STREAM_K` (one consumer warpgroup, no cluster) on a stream-k grid that splits the tiles' k
/// between blocks ([`crate::pipeline::stream`]).
#[derive(Clone, Copy, Default)]
pub struct WgmmaFp8BlockSwap<
    const R: usize,
    const CONSUMERS: u32,
    const CLUSTER_M: u32 = 1,
    const STREAM_K: bool = false,
>;

/// The launch geometry: one block per tile, or with `STREAM_K` one per slice of every tile (the
/// host caps the grid at one block per multiprocessor, and the blocks walk the tiles or share
/// their slices).
pub fn geometry<const R: usize, const CONSUMERS: u32, const CLUSTER_M: u32, const STREAM_K: bool>(
    m: u32,
    n: u32,
    k: u32,
    _element_bytes: u32,
) -> Geometry
where
    Accumulator<R>: Fp8Wgmma,
{
    type K<const R: usize, const C: u32, const M: u32, const S: bool> =
        WgmmaFp8BlockSwap<R, C, M, S>;
    let units = m.div_ceil(tile_m(R) * CLUSTER_M) * n.div_ceil(tokens(CONSUMERS));
    let units = if STREAM_K {
        units * k.div_ceil(BK).max(1)
    } else {
        units
    };
    Geometry {
        grid: (units * CLUSTER_M, 1),
        block: (K::<R, CONSUMERS, CLUSTER_M, STREAM_K>::THREADS, 1),
        shared_bytes: K::<R, CONSUMERS, CLUSTER_M, STREAM_K>::POOL_BYTES,
    }
}

impl<const R: usize, const CONSUMERS: u32, const CLUSTER_M: u32, const STREAM_K: bool> Kernel
    for WgmmaFp8BlockSwap<R, CONSUMERS, CLUSTER_M, STREAM_K>
where
    Accumulator<R>: Fp8Wgmma,
{
    type Args = Fp8GemmArgs;
    const BM: u32 = tile_m(R);
    const BN: u32 = tokens(CONSUMERS);
    const CONSUMERS: u32 = CONSUMERS;
    const CLUSTER: (u32, u32) = (CLUSTER_M, 1);
    const BK: u32 = BK;
    const STAGES: u32 = stages(R, CONSUMERS);
    const STAGE_BYTES: u32 = stage_bytes(R, CONSUMERS);
    const LOADED_BYTES: u32 = stage_bytes(R, CONSUMERS);
    // The stages' scales, then stream-k's flag.
    const EXTRA_BYTES: u32 =
        stages(R, CONSUMERS) * scale_bytes(R) + if STREAM_K { FIXUP_BYTES } else { 0 };
    // Stream-k with one warpgroup and no cluster: a second warpgroup past n would miss the
    // fixup's barriers, and the blocks of a cluster would load the same slices.
    const STREAM_K: bool = {
        assert!(!STREAM_K || (CONSUMERS == 1 && CLUSTER_M == 1));
        STREAM_K
    };
    const EQUAL_PARTS: bool = STREAM_K;
    // The stream-k walk's 64-bit arithmetic beside the scales' bulk copy: at the default 40
    // registers ptxas spilled 16 bytes in the producer.
    const PRODUCER_REGISTERS: u32 = if STREAM_K { 56 } else { 40 };

    #[inline(always)]
    unsafe fn load(self, maps: *const TensorMap, stages: Stages, s: u32, tile: Tile, slice: u32) {
        let k0 = (slice * BK) as i32;
        unsafe { load_stage(maps, stages, s, tile, k0, (Self::BM, Self::BN), CLUSTER_M) }
    }

    /// The operands' boxes, and A's scales of the slice's rows of weights
    /// (`scale_a[row + slice·m]`, contiguous: one bulk copy of `8R` bytes at most, 16-byte
    /// aligned because m and the tile's first row are multiples of 8) beside the stage, counted
    /// on its *full* barrier: they land with the operands. Rows past m are not copied (their
    /// accumulator columns are never stored); a block of a cluster past m copies none.
    #[inline(always)]
    unsafe fn load_with(
        self,
        args: &Fp8GemmArgs,
        maps: *const TensorMap,
        stages: Stages,
        s: u32,
        tile: Tile,
        slice: u32,
    ) {
        let m0 = tile.row * Self::BM;
        if m0 < args.m {
            let bytes = 4 * Self::BM.min(args.m - m0);
            let full = stages.full(s);
            full.expect_tx(bytes);
            let at = stage_scales::<R>(stages, s).shared_address(0);
            let from = args.scale_a.offset((m0 + slice * args.m) as isize);
            unsafe { tma::load_bulk(at, from, bytes, full) };
        }
        unsafe { self.load(maps, stages, s, tile, slice) }
    }

    #[inline(always)]
    unsafe fn consume(
        self,
        args: Fp8GemmArgs,
        maps: *const TensorMap,
        c: &mut Consumer,
        work: Work,
    ) {
        let tile = (Self::BM, Self::BN);
        let fixup = STREAM_K.then(|| Fixup {
            scratch: unsafe { Scratch::after(maps, 2) },
            flag: c.stages.extra() + Self::STAGES * scale_bytes(R),
        });
        unsafe { consume_tile(args, c, work, tile, scales_by_column::<R>, fixup) }
    }
}

/// Where a stream-k block leaves its part of a shared tile: the launch's workspace and
/// counters, and the pool byte of the flag that says whether the block finishes the tile.
#[derive(Clone, Copy)]
pub struct Fixup {
    pub scratch: Scratch,
    pub flag: u32,
}

/// A consumer warpgroup's work on one tile of `bm` rows of weights by `bn` tokens (or on
/// `work`'s slices of it, its part added through `fixup` on a stream-k grid): its 64 tokens'
/// promoted sums and their store. `scales_of(staged, thread)` picks each of the thread's
/// registers' scale of A among a stage's ([`scales_by_column`]; a test plants another).
///
/// # Safety
/// As [`Kernel::consume`].
// ANCHOR: core_loop
#[inline(always)]
pub unsafe fn consume_tile<const R: usize>(
    args: Fp8GemmArgs,
    c: &mut Consumer,
    work: Work,
    (bm, bn): (u32, u32),
    scales_of: impl Fn(Shared<f32>, u32) -> [f32; R],
    fixup: Option<Fixup>,
) where
    Accumulator<R>: Fp8Wgmma,
{
    // As lane 0 holds it, so that the descriptors stay uniform (as `wgmma-fp8-block`'s).
    let first_token = 64 * warp_uniform(c.warpgroup);
    let (m0, n0) = (work.tile.row * bm, work.tile.col * bn + first_token);
    if n0 >= args.n {
        return c.pass_over(work.slices);
    }
    // The tokens are the `wgmma`'s A (64 rows of 128 bytes), the weights its B (N rows); their
    // descriptors in stage 0, advanced to each slice's stage (as `wgmma-fp8-block`'s).
    let first = pool_address(c.stages.stage(0));
    let a_first = Descriptor::k_major(first + (bm + first_token) * BK, Swizzle::B128, 16, 1024);
    let b_first = Descriptor::k_major(first, Swizzle::B128, 16, 1024);
    let issue = |c: &Consumer, sum: &mut Accumulator<R>| {
        c.wait_full();
        let offset = c.stages.offset(c.ring.stage);
        let (a, b) = (a_first.advanced(offset), b_first.advanced(offset));
        wgmma::fence();
        for step in 0..BK / K_STEP {
            let (a, b) = (a.advanced(K_STEP * step), b.advanced(K_STEP * step));
            Fp8Wgmma::mma(sum, a, b, step > 0);
        }
        wgmma::commit_group();
    };
    // B's scales: one per slice for the whole tile (its tokens are one block of 128), lane `l`
    // holding slice `32j + l`'s of the current run and of the next, loaded a run ahead; a
    // slice's is a shuffle. A's, from the stage, where they landed with the operands.
    let (slices, lane) = (work.slices, c.thread % RUN);
    let b_first = (work.tile.col * bn / SCALE_BLOCK) * args.k.div_ceil(BK) + work.first_slice;
    let b_scale = |slice: u32| {
        if slice < slices {
            unsafe { args.scale_b.load((b_first + slice) as usize) }
        } else {
            0.0
        }
    };
    let (mut b_run, mut b_next_run) = (b_scale(lane), b_scale(RUN + lane));
    let scales = |c: &Consumer, slice: u32| {
        let sb = shfl_idx(b_run, slice % RUN);
        if slice % RUN == RUN - 1 {
            (b_run, b_next_run) = (b_next_run, b_scale(slice + 1 + RUN + lane));
        }
        let staged = stage_scales::<R>(c.stages, c.ring.stage);
        (scales_of(staged, c.thread), sb)
    };
    // The next slice's scales after each release with two consumer warpgroups, before the
    // wait with one ([`wgmma_fp8_block::in_turns`]' `LATE`).
    let mut total = if bn == 2 * tokens(1) {
        wgmma_fp8_block::in_turns::<R, true, true, _>(c, work.slices, scales, issue, promote)
    } else {
        wgmma_fp8_block::in_turns::<R, true, false, _>(c, work.slices, scales, issue, promote)
    };
    // A tile shared with other blocks: the last of them to finish adds the parts and stores it.
    if let Some(Fixup { scratch, flag }) = fixup.filter(|_| !work.whole()) {
        if !unsafe { stream::finish(scratch, &work, &mut total, c.thread, WARPGROUP, flag) } {
            return;
        }
    }
    let (output, total) = (args.output(args.alpha), Accumulator::from_registers(total));
    unsafe { epilogue::store_transposed(&output, &total, m0, n0, c.thread) };
}
// ANCHOR_END: core_loop

/// A's scale of each of consumer thread `thread`'s registers among a stage's `staged` ones: its
/// row of weights is its accumulator column, `8j + 2·(lane % 4) + {0, 1}` (registers `i` and
/// `i ^ 2` share one, and each pair is one 8-byte load).
#[inline(always)]
pub fn scales_by_column<const R: usize>(staged: Shared<f32>, thread: u32) -> [f32; R] {
    let (_, first_row) = Accumulator::<R>::position(thread / 32, thread % 32, 0);
    let mut rows = [0f32; R];
    for i in (0..R).step_by(4) {
        let pair = staged.load2(first_row + 2 * i as u32);
        (rows[i], rows[i + 1], rows[i + 2], rows[i + 3]) = (pair[0], pair[1], pair[0], pair[1]);
    }
    rows
}

/// `total += (sa_row·sb)·partial` with A's scales along the accumulator's columns (its rows of
/// weights), once `partial`'s group retired: one FMA per register.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
pub fn promote<const R: usize>(
    total: &mut [f32; R],
    partial: &mut Accumulator<R>,
    (rows, sb): ([f32; R], f32),
) where
    Accumulator<R>: Registers,
{
    partial.fence_registers();
    let partial = partial.get();
    for i in 0..R {
        total[i] = partial[i].fma(rows[i] * sb, total[i]);
    }
}

/// The entry point's body.
///
/// # Safety
/// As [`pipeline::run`]: `maps` points to A's and B's tensor maps (A k × m in boxes of 128 k ×
/// `2R` m, B k × n in boxes of 128 k × `64·CONSUMERS / CLUSTER_M` n, e4m3 with the 128-byte
/// swizzle), `args`' scales are laid out as [`Fp8GemmArgs`] says, and the launch has
/// [`geometry`]'s block and pool and at most one block per multiprocessor.
#[inline(always)]
pub unsafe fn gemm<
    const R: usize,
    const CONSUMERS: u32,
    const CLUSTER_M: u32,
    const STREAM_K: bool,
>(
    args: Fp8GemmArgs,
    maps: *const TensorMap,
) where
    Accumulator<R>: Fp8Wgmma,
{
    let kernel = WgmmaFp8BlockSwap::<R, CONSUMERS, CLUSTER_M, STREAM_K>;
    unsafe { pipeline::run(kernel, args, maps) }
}
