//! `wgmma-fp8-block`: e4m3 with one scale per 1×128 of A and per 128×128 of B, and the
//! tensor cores' partial sums promoted into f32 every 128 of k — DeepSeek-V3's FP8 GEMM.
//!
//! Source: none of the documents (DeepSeek-V3's technical report, §3.3 "fine-grained
//! quantization" and "increasing accumulation precision"; DeepGEMM). Changed from
//! [`super::wgmma_fp8`]:
//!
//! - **Why block scales.** One scale per tensor is set by the tensor's largest value: a few
//!   rows 1000× larger than the rest (activations have such outliers) push every other value
//!   down towards e4m3's subnormals, where 3 bits of mantissa become 2, 1, 0. With a scale per
//!   128 values of a row of A and per 128 × 128 block of B, each block uses e4m3's whole range.
//! - **Why promotion.** The scales change every 128 of k, so they cannot wait for the
//!   epilogue: each slice (128 of k, one scale block) is a fresh `wgmma` sum (`accumulate` false
//!   on its first k-step), and the consumer adds it into f32 registers scaled by its two
//!   scales, `total += (sa_row · sb) · partial` (one FMA per register). The same step fixes
//!   the second weakness of per-tensor FP8: the tensor cores' FP8 accumulation keeps fewer bits
//!   than f32 (`docs/hopper-isa-notes.md`), and it now runs over 128 values of k, not all of k.
//! - **The tile is 128 × 128.** A warpgroup holds its total and one or two partial sums,
//!   `m64n128` each, 64 registers per thread apiece (an `m64n256` total and partial sum would be
//!   256, more than a thread may have). Each consumer warpgroup takes 64 rows; a stage is A's
//!   128 × 128 and B's 128 × 128, 32 KiB.
//! - **The schedule.** A warpgroup issues two slices' `wgmma`s (two groups, two partial sums:
//!   64 more registers), waits for the first, releases its stage and promotes it while the
//!   tensor cores run the second, then waits for and promotes the second (`--tile 6`, the
//!   default). Each slice's scales are loaded from global memory two slices before the
//!   promotion that uses them; one slice ahead, the warps stalled on them a third of the time.
//!
//! Scales past m read as zero (the rows the TMA engine zero-filled); k need not be a multiple of
//! 128: the last block's missing values are zeros in both operands.
//!
//! **Grouped** (a mixture-of-experts layer, DeepGEMM's layouts, [`crate::gemm::Groups`]): the
//! skeleton's walk finds each tile's group, the copies take A's layer of the group and B's of
//! the member, [`Fp8GemmArgs::scales_of_tile`] points the mainloop at the group's A scales and
//! the member's B scales, and after the mainloop [`Fp8GemmArgs::output_of_tile`] the epilogue at
//! the member's C (held through the mainloop, C's pointer and the group's columns made `:9`
//! spill in its loop). Every configuration but `:4` (clusters along n: two tiles of a cluster
//! may be of different groups), `:7` (its 24-register producer spilled 32 bytes walking the
//! groups) and `:10` (stream-k) runs them; measured in
//! `docs/results/h100-2026-11-26-fp8-groups/` (0.91× cuBLASLt called once per group, `:6`).
//! `:9` walks them since the consumers vote on whether a tile is there (the skeleton's
//! `locate`, [`crate::device::warp_uniform_condition`]). Before, ptxas took the branch past a
//! missing tile as divergent and kept the ring's stage and phase and the descriptors out of
//! uniform registers: `:9`'s loop grew from 113 instructions per slice to 132 once it walked
//! groups, and `:8`, which always had, ran 261 per two slices where it now runs 228. On the
//! H200 (`docs/results/h200-2026-11-28-grouped-nine/`), on one GEMM, `:9` is 2% faster than
//! before (but 2% slower at 24576 × 4096 × 1536, whose tiles have 12 slices) and `:8` 1–1.5%;
//! `auto` takes `:9` for DeepGEMM's contiguous sets: 1.03–1.05× the loop of cuBLASLt calls,
//! where `:8` ran 0.89–0.91×.
//!
//! What limits it, measured (`docs/results/h100-2026-11-25-fp8/run8/diagnostics/`): the tile is
//! not the problem — the same tile, ring and epilogue with the per-tensor mainloop ran at 1457
//! TFLOP/s at 8192³, without the promotion (still waiting for each slice) at 1366, with it at
//! 1001. Per slice, a consumer warp waits for its own `wgmma`s, then runs 64 FFMAs and the
//! loop's bookkeeping before it issues the next: that serial path is longer than the slice's
//! 256 cycles of tensor-core work, and two warpgroups do not hide it. Issuing two slices per
//! wait halves the bookkeeping and overlaps half the FFMAs with the tensor cores; a third
//! consumer warpgroup (`--tile 7`: 192 × 128 tiles, 512 threads, 160 registers each after
//! `setmaxnreg`, so one partial sum only) adds a third serial path to cover the tensor cores.
//! The other configurations are the measured attempts: `:1` one slice per wait, `:2` six
//! stages, `:3` two slices' partial sums in turn (no faster: its serial path is as long), `:4`
//! clusters of two sharing A (slower: L2 was not the limit), `:5` two chains per slice (slower:
//! more FFMAs).
//!
//! **A's scales beside the stage** (`:8` is `:6`, `:9` is `:7`, with [`TWO_PER_WAIT_STAGED`] and
//! [`ONE_SLICE_STAGED`]): the producer thread copies the scales of the slice's rows, one
//! contiguous run of `scale_a` (`Kernel::load_with`), into shared memory beside the stage with
//! `cp.async.bulk`, counted on the stage's *full* barrier, so they land with the operands; a
//! consumer reads its two rows' from shared memory (`Staged`) instead of loading them from
//! global memory behind a bounds check. B's one scale per slice is held in the warp's lanes
//! (below).
//! Measured (`docs/results/h100-2026-11-28-fp8-staged-scales/`): `:8` 1.5–6% faster than `:6`,
//! `:9` 7–13% faster than `:7` (one slice per wait had nothing to hide the loads under); `auto`
//! takes them, 0.98× cuBLASLt's block-scaled matmul geomean over DeepGEMM's M = 4096 set and
//! 1.04× DeepGEMM's published figures there. Staging them with the producer warpgroup's 96 idle
//! threads instead (as `wgmma-fp8-block-swap` does) was 15–18% slower at long k: three more
//! warps on every stage's barriers take issue slots from the consumers.
//!
//! **On a stream-k grid** (`:10`, `:9` with the walk [`STREAM_K_GRID`]): the skeleton's
//! hybrid schedule ([`crate::pipeline::schedule::StreamK`]) and fixup
//! ([`crate::pipeline::stream`]), as `wgmma-stream-k` and the narrow kernel use them; the
//! parts are promoted f32 sums, so they add as they are. Measured on an H200
//! (`docs/results/h200-2026-11-28-fp8-stream-k/`): where the 192 × 128 tiles are fewer than
//! the multiprocessors and k is long (7168 rows of weights, 64 or 128 tokens, k = 16384: 38
//! tiles of 128 slices), 0.88–0.94× cuBLASLt where `:8` on 56
//! multiprocessors ran 0.82×, and `auto` takes it there. Everywhere else slower, and not only
//! by the fixup: on whole waves of tiles, where nothing is streamed, it ran 11–14% behind `:9`.
//! The stream-k walk's work items reach the consumers' loop as run-time values (the first slice,
//! B's scales' offset), and its hot loop had 169 instructions per slice against `:9`'s 149 (154
//! and 145 since [`Descriptor::advanced`] adds a 32-bit word): the consumers are bound by their
//! own issue, so every instruction in that loop shows.
//!
//! **The loop trimmed** (`:8`, `:9`, `:10`; `docs/results/h200-2026-11-28-fp8-issue-trim/`):
//! since the consumers are bound by their issue, `:9`'s loop went from 145 instructions per
//! slice to 112. The warpgroup index is broadcast from lane 0 ([`warp_uniform`]), so that the
//! descriptors are built in uniform registers (ptxas had made them per thread and moved them
//! over for each `wgmma`); each slice's descriptors are stage 0's advanced by the stage's
//! offset; B's scales of a run of 32 slices sit in the warp's 32 lanes (`Staged`), one shuffle
//! per slice where a load two slices ahead cost ten instructions; the release is lane 0's
//! arrive without the cluster's vote ([`Consumer::release_in_block`]). Measured on the H200:
//! `:9` 5.6–7.1% faster, `:8` 3.5–6.1%; over DeepGEMM's dense set `auto` is 1.18× cuBLASLt's
//! geomean, no shape below 0.95× (on other H200s 1.13–1.16×, lowest 0.89–0.90×, `:10` at
//! 7168 × {64, 128} × 16384, `docs/results/h200-2026-11-28-warp-sync/`).
//!
//! **The lanes' loads ordered before lane 0's release.** Every lane loads A's scales of its
//! rows from the stage; lane 0 alone arrives on the stage's *empty* barrier for its warp.
//! Nothing in the PTX memory model ordered lanes 1–31's loads before the producer's next copy
//! into the stage: a `wgmma.wait_group` or a shuffle waits for the warp's lanes but orders no
//! memory access. compute-sanitizer's racecheck reported it on the H200 (the bulk copy of A's
//! scales against the `LDS` of them); the emulator did not, because it took every warp-wide
//! operation as ordering memory and never advanced a thread's clock at a join. With both
//! corrected it reports the race here and in the TF32 kernels (whose lanes load A's fragments
//! from the stage), and each release is now preceded by `__syncwarp()`
//! ([`Consumer::finish_loads`]). ptxas compiles it to a `NOP` (the warp is converged, and the
//! loaded scales are consumed before the arrive), so it costs nothing; racecheck, which sees
//! only the SASS, still reports the hazards (`docs/results/h200-2026-11-28-warp-sync/`).
//!
//! **The masked walk packed** (`:11`, `:8` with the walk [`PACKED_MASKED`]): in the masked
//! layout the host launches for each group's capacity and the counts are read on the device,
//! so a walk over the capacity's tiles deals every block its share of tiles that may be empty
//! and skipped: with one group of 800 tokens in a capacity of 1024 at 7168 rows, 448 tiles of
//! 128 × 128 (3.4 waves of 132) of which 392 hold tokens. `:11` numbers only the tiles below
//! the counts, member after member ([`crate::pipeline::schedule::Tiles::masked_tile`]), so
//! the blocks share the 392 (2.97 waves), as DeepGEMM's masked scheduler counts its blocks
//! from the counts. Finding a unit's member is a loop over the counts. Tried first as a bit
//! of the layout word in `:8` itself (branch `wip/masked-compact`): 0.72 → 0.90× the loop of
//! cuBLASLt calls at that shape, but the dense path of the same kernel paid 1–4% for the
//! walk's second branch, and the three-consumer `:9` spilled 80 bytes finding a member: hence
//! a configuration of its own, `auto`'s for the masked layout where the waves ask for `:8`'s
//! tiles. Its first build still chose between the packed walk and the plain one by the
//! layout, and that branch, on a kernel parameter, was enough for ptxas to move the
//! consumers' ring stage and phase out of uniform registers: 260 instructions per two
//! slices against `:8`'s 230 (`R2UR` ×32, `cargo xtask sass --variant wgmma-fp8-block
//! --tile 11 --dtype e4m3`), and 1–3% slower than `:8` where packing saved no wave. It now
//! walks every layout the packed way (a count of n per member outside the masked layout is
//! the plain walk, `pipeline::schedule`'s tests check it unit for unit): 228.
//!
//! Measured on the H100 (`docs/results/h100-2026-11-25-fp8/run11/`, `auto`'s choices before the
//! staged scales): `:7` 1088–1115 TFLOP/s at 8192³, 0.82× cuBLASLt's block-scaled matmul and 0.77×
//! cuBLASLt per tensor (the chapter's bar is 0.85 of the latter); 0.86× and 0.92× cuBLASLt
//! block-scaled at 6144³ and 8192×8192×1024; at 4096³ `:6`, 0.82×, where `:7`'s fewer, taller tiles
//! leave a longer last wave. Its error stays at D's bf16 rounding whatever k (1.7·10⁻³ at k =
//! 16384, where the per-tensor kernel's is 3.3·10⁻³).
use super::wgmma_fp8::load_slice;
use crate::device::fp8::{E4m3, Fp8Format};
use crate::device::store;
use crate::device::tma::{self, Swizzle, TensorMap};
use crate::device::wgmma::{self, Accumulator, Descriptor, Fp8Wgmma, Registers};
use crate::device::Real;
use crate::device::{pool_address, shfl_idx, warp_uniform, Shared};
use crate::gemm::{Fp8GemmArgs, Geometry};
use crate::pipeline::epilogue::{self, Staging, STAGING_BOX_BYTES};
use crate::pipeline::schedule::Tile;
use crate::pipeline::stream::{self, Scratch, FIXUP_BYTES};
use crate::pipeline::{self, Consumer, Kernel, Ring, Stages, Work, WARPGROUP};
use core::marker::PhantomData;

/// Rows of m per tile: two consumer warpgroups of 64 (three in `--tile 7`: [`tile_m`]).
pub const BM: u32 = 128;
/// Columns of n per tile: one block of B's scales.
pub const BN: u32 = 128;
/// k per slice: one block of scales, one 128-byte swizzled row.
pub const BK: u32 = 128;

/// Rows of m per tile with `consumers` consumer warpgroups of 64 rows each.
pub const fn tile_m(consumers: u32) -> u32 {
    64 * consumers
}
/// The `wgmma`'s k.
const K_STEP: u32 = 32;
/// Staging buffers per consumer warpgroup (the TMA-store epilogue of chapter 3).
const BUFFERS: u32 = 2;

/// The consumers' mainloops (the kernel's `MAINLOOP`): one slice's group in flight, promoted
/// once it retired (`Slices::one_at_a_time`);
pub const ONE_SLICE: u32 = 0;
/// two slices' groups in flight, each promoted while the next runs (`Slices::overlapped`);
pub const TWO_SLICES: u32 = 1;
/// one slice's group in flight, its k-steps alternating between two partial sums
/// (`Slices::two_chains`).
pub const TWO_CHAINS: u32 = 2;
/// two slices issued together, the first promoted while the second runs
/// (`Slices::two_per_wait`).
pub const TWO_PER_WAIT: u32 = 3;
/// no promotion: one scale per tensor, one accumulator over all of k, the scales applied with
/// alpha in the epilogue (`Slices::per_tensor`; `wgmma-fp8:5`).
pub const PER_TENSOR: u32 = 4;
/// [`TWO_PER_WAIT`] with A's scales of each slice copied beside its stage by the producer
/// thread (a bulk copy completing on the stage's *full* barrier), which the consumers read from
/// shared memory (`Staged`) instead of loading their own from global memory (`Ahead`).
pub const TWO_PER_WAIT_STAGED: u32 = 5;
/// [`ONE_SLICE`] with A's scales staged as in [`TWO_PER_WAIT_STAGED`].
pub const ONE_SLICE_STAGED: u32 = 6;

/// Whether the mainloop `mainloop` reads A's scales staged beside each stage.
const fn staged(mainloop: u32) -> bool {
    matches!(mainloop, TWO_PER_WAIT_STAGED | ONE_SLICE_STAGED)
}

/// Bytes of one stage's staged scales with `consumers` consumer warpgroups: A's for each of
/// the tile's rows (a multiple of 16, as a bulk copy's size must be).
const fn scale_bytes(consumers: u32) -> u32 {
    4 * tile_m(consumers)
}

/// Stage `s`'s staged scales, after the epilogue's staging buffers: element `i` is A's scale
/// of the tile's row `i`.
#[inline(always)]
fn stage_scales(stages: Stages, consumers: u32, s: u32) -> Shared<f32> {
    let first = stages.extra() + consumers * BUFFERS * STAGING_BOX_BYTES;
    Shared::at(first + s * scale_bytes(consumers), tile_m(consumers))
}

/// The kernel, with `STAGES` stages, the consumers' `MAINLOOP` ([`ONE_SLICE`], [`TWO_SLICES`],
/// [`TWO_CHAINS`], [`TWO_PER_WAIT`]), in clusters of `CLUSTER_N` blocks along n that share A's
/// slices (multicast, as `wgmma-fp8:1`), with `CONSUMERS` consumer warpgroups of 64 rows; with
/// `WALK` [`STREAM_K_GRID`], on the skeleton's hybrid stream-k grid ([`Kernel::STREAM_K`]:
/// the last waves' tiles divided into equal runs of slices, `--tile 10`); with
/// [`PACKED_MASKED`], a masked grouped GEMM's tiles below the counts packed ahead of the
/// capacity's empty ones ([`Kernel::PACKED_WALK`], `--tile 11`).
///
/// B's format `F` is e4m3, or e5m2 with [`PER_TENSOR`] (one scale per tensor, `wgmma-fp8:5`).
#[derive(Clone, Copy, Default)]
pub struct WgmmaFp8Block<
    const STAGES: u32,
    const MAINLOOP: u32 = ONE_SLICE,
    const CLUSTER_N: u32 = 1,
    const CONSUMERS: u32 = 2,
    F = E4m3,
    const WALK: u32 = EVERY_TILE,
>(PhantomData<F>);

/// The kernel's walk ([`WgmmaFp8Block`]'s `WALK`): every tile of the persistent grid in the
/// skeleton's order, a grouped GEMM's empty tiles skipped where they come.
pub const EVERY_TILE: u32 = 0;
/// The skeleton's hybrid stream-k grid ([`Kernel::STREAM_K`]).
pub const STREAM_K_GRID: u32 = 1;
/// As [`EVERY_TILE`], but in the masked layout the tiles below the counts first, packed
/// ([`Kernel::PACKED_WALK`]).
pub const PACKED_MASKED: u32 = 2;

/// The launch geometry: one block per tile, in whole clusters (the host caps the grid at one
/// block per multiprocessor).
pub fn geometry<
    const STAGES: u32,
    const MAINLOOP: u32,
    const CLUSTER_N: u32,
    const CONSUMERS: u32,
    const WALK: u32,
>(
    m: u32,
    n: u32,
    k: u32,
    _element_bytes: u32,
) -> Geometry {
    type K<const S: u32, const L: u32, const N: u32, const C: u32, const W: u32> =
        WgmmaFp8Block<S, L, N, C, E4m3, W>;
    let units = m.div_ceil(tile_m(CONSUMERS)) * n.div_ceil(BN * CLUSTER_N);
    // Stream-k: a block per slice at most (every block must have one).
    let blocks = if WALK == STREAM_K_GRID {
        units * k.div_ceil(BK).max(1)
    } else {
        units * CLUSTER_N
    };
    Geometry {
        grid: (blocks, 1),
        block: (
            K::<STAGES, MAINLOOP, CLUSTER_N, CONSUMERS, WALK>::THREADS,
            1,
        ),
        shared_bytes: K::<STAGES, MAINLOOP, CLUSTER_N, CONSUMERS, WALK>::POOL_BYTES,
    }
}

impl<
        const STAGES: u32,
        const MAINLOOP: u32,
        const CLUSTER_N: u32,
        const CONSUMERS: u32,
        F: Fp8Format,
        const WALK: u32,
    > Kernel for WgmmaFp8Block<STAGES, MAINLOOP, CLUSTER_N, CONSUMERS, F, WALK>
{
    type Args = Fp8GemmArgs;
    const BM: u32 = tile_m(CONSUMERS);
    const BN: u32 = BN;
    const BK: u32 = BK;
    const STAGES: u32 = STAGES;
    const STAGE_BYTES: u32 = (tile_m(CONSUMERS) + BN) * BK;
    const LOADED_BYTES: u32 = Self::STAGE_BYTES;
    const EXTRA_BYTES: u32 = CONSUMERS * BUFFERS * STAGING_BOX_BYTES
        + if staged(MAINLOOP) {
            STAGES * scale_bytes(CONSUMERS)
        } else {
            0
        }
        + if WALK == STREAM_K_GRID {
            FIXUP_BYTES
        } else {
            0
        };
    // Stream-k's roles take no cluster (and its walk no groups: `GROUPS` below).
    const STREAM_K: bool = {
        assert!(WALK != STREAM_K_GRID || CLUSTER_N == 1);
        WALK == STREAM_K_GRID
    };
    const CONSUMERS: u32 = CONSUMERS;
    // The producer thread that copies the scales too spilled at 24 beside three consumers; 32
    // leaves them their 160 (512 × 128 = 128 × 32 + 384 × 160).
    // (`:10`'s stream-k walk spills 80 bytes of this producer; at 40, no spills there but
    // the consumers' 152 spilled in their mainloop, and it ran 2–4% slower on the H200.)
    const PRODUCER_REGISTERS: u32 = if CONSUMERS > 2 && staged(MAINLOOP) {
        32
    } else if CONSUMERS > 2 {
        24
    } else {
        40
    };
    const CLUSTER: (u32, u32) = (1, CLUSTER_N);
    // A grouped GEMM's tiles find their group's A and scales ([`Fp8GemmArgs::of_tile`], per
    // tensor a strided batch's [`Kernel::member_args`]); not in clusters along n (two tiles of
    // a cluster may be of different groups), and beside three consumers only with the staged
    // scales' 32-register producer (`:7`'s 24-register one spilled 32 bytes walking the groups).
    const GROUPS: bool =
        CLUSTER_N == 1 && WALK != STREAM_K_GRID && (CONSUMERS == 2 || staged(MAINLOOP));
    // Finding a packed tile's member spilled 80 bytes beside three consumers (the 32-register
    // producer) and 48 in `:3`'s two partial sums: the packed walk is `:8`'s.
    const PACKED_WALK: bool = {
        assert!(WALK != PACKED_MASKED || (CONSUMERS == 2 && MAINLOOP != TWO_SLICES));
        WALK == PACKED_MASKED
    };

    #[inline(always)]
    unsafe fn load(self, maps: *const TensorMap, stages: Stages, s: u32, tile: Tile, slice: u32) {
        unsafe { load_slice(maps, stages, s, tile, slice, Self::BM, CLUSTER_N) }
    }

    /// [`TWO_PER_WAIT_STAGED`], [`ONE_SLICE_STAGED`]: the operands' boxes, and A's scales of the
    /// slice's rows (`scale_a[row + slice·m]`, contiguous: one bulk copy of up to 512 or 768 bytes,
    /// 16-byte aligned because m is a multiple of 8). The tile's last rows may lie past m: only
    /// those inside are copied (the others' accumulator rows are zeros and never stored), their
    /// bytes added to the stage's expected ones before any copy starts.
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
        if staged(MAINLOOP) {
            const { assert!(!staged(MAINLOOP) || CLUSTER_N == 1) };
            let args = self.member_args(*args, tile);
            let m0 = tile.row * Self::BM;
            let bytes = 4 * Self::BM.min(args.m - m0);
            let full = stages.full(s);
            full.expect_tx(bytes);
            let at = stage_scales(stages, CONSUMERS, s).shared_address(0);
            let from = args.scale_a.offset((m0 + slice * args.m) as isize);
            unsafe { tma::load_bulk(at, from, bytes, full) };
        }
        unsafe { self.load(maps, stages, s, tile, slice) }
    }

    // ANCHOR: core_loop
    #[inline(always)]
    unsafe fn consume(
        self,
        args: Fp8GemmArgs,
        maps: *const TensorMap,
        c: &mut Consumer,
        work: Work,
    ) {
        // The promotions' mainloops read e4m3 B only.
        const { assert!(!F::E5M2 || MAINLOOP == PER_TENSOR) };
        let slice_of = Slices::new(&args, c, work, Self::BM, CLUSTER_N > 1);
        let mut total = match MAINLOOP {
            ONE_SLICE => slice_of.one_at_a_time(c, Ahead::new(slice_of.scales)),
            TWO_SLICES => slice_of.overlapped(c),
            TWO_CHAINS => slice_of.two_chains(c),
            TWO_PER_WAIT => slice_of.two_per_wait(c, Ahead::new(slice_of.scales)),
            TWO_PER_WAIT_STAGED => slice_of.two_per_wait(c, Staged::new(c, Self::BM, slice_of)),
            ONE_SLICE_STAGED => slice_of.one_at_a_time(c, Staged::new(c, Self::BM, slice_of)),
            _ => slice_of.per_tensor::<F>(c),
        };
        // Stream-k: a tile shared with other blocks is stored by the last of them to finish.
        // The parts are promoted sums, so they add as they are.
        if WALK == STREAM_K_GRID && !work.whole() {
            let scratch = unsafe { Scratch::after(maps, 3) };
            let thread = c.warpgroup * WARPGROUP + c.thread;
            let threads = CONSUMERS * WARPGROUP;
            let flag = c.stages.extra() + Self::EXTRA_BYTES - FIXUP_BYTES;
            if !unsafe { stream::finish(scratch, &work, &mut total, thread, threads, flag) } {
                return;
            }
        }
        let args = if MAINLOOP == PER_TENSOR {
            args
        } else {
            args.output_of_tile(work.tile)
        };
        let staging = Staging {
            first: pool_address(c.stages.extra()) + c.warpgroup * BUFFERS * STAGING_BOX_BYTES,
            buffers: BUFFERS,
            barrier: 1 + c.warpgroup,
        };
        let (row0, col0) = (work.tile.row * Self::BM + slice_of.rows, work.tile.col * BN);
        // One scale per tensor: Σ (sa·a)(sb·b) = sa·sb·Σ a·b, as in `wgmma-fp8`.
        let alpha = if MAINLOOP == PER_TENSOR {
            args.alpha * unsafe { args.scale_a.load(0) * args.scale_b.load(0) }
        } else {
            args.alpha
        };
        let (output, total) = (args.output(alpha), Accumulator::from_registers(total));
        let c_map = maps.wrapping_add(2);
        unsafe {
            epilogue::store_direct_64_through_tma(
                &output, &total, c_map, row0, col0, c.thread, staging,
            )
        };
    }
    // ANCHOR_END: core_loop

    /// The last stores must have read their buffers before the block leaves.
    #[inline(always)]
    fn drain(self, consumer: &Consumer) {
        if consumer.thread == 0 {
            store::wait_read::<0>();
        }
    }

    /// Block scales lie `m·⌈k/128⌉` (A) and `⌈n/128⌉·⌈k/128⌉` (B) per group and member; one
    /// per tensor, one each (as `wgmma-fp8`'s). With block scales, only the scales: the
    /// member's C and a masked group's columns are found after the mainloop
    /// ([`Fp8GemmArgs::output_of_tile`] in `consume`), so that they are not held in registers
    /// through it (held, they made `:9` spill in its loop once it walked groups, 7–12% slower).
    #[inline(always)]
    fn member_args(self, args: Fp8GemmArgs, tile: Tile) -> Fp8GemmArgs {
        if MAINLOOP == PER_TENSOR {
            args.of_tile_per_tensor(tile)
        } else {
            args.scales_of_tile(tile, args.block_scales_per_layer())
        }
    }
}

/// A consumer warpgroup's view of its tile's slices: where its rows lie, and each slice's
/// `wgmma`s, scales and promotion.
#[derive(Clone, Copy)]
struct Slices {
    /// The warpgroup's first row in the tile (64 per warpgroup).
    rows: u32,
    /// Slices of k in the tile.
    slices: u32,
    scales: BlockScales,
    /// The descriptors of the warpgroup's rows of A and of B in stage 0. Stage `s`'s are
    /// `s` stages further ([`Descriptor::advanced`], exact inside the shared window), which
    /// costs one multiply-add per slice where building them from the stage's address (shift,
    /// mask, the fields or-ed in) cost seven more instructions.
    a_first: Descriptor,
    b_first: Descriptor,
    /// Whether the kernel runs in clusters (its stages are released to every block of one).
    clustered: bool,
}

/// Where a thread finds the block scales of its tile's slices: the two rows of op(A) it holds
/// (accumulator rows g and g + 8 of its warp's 16) and the tile's block column of B. Shared
/// with `wgmma-fp8-block-narrow` ([`super::wgmma_narrow::E4m3Blocks`]), whose tiles are as
/// narrow as 8 columns and whose stream-k parts start inside k.
#[derive(Clone, Copy)]
pub struct BlockScales {
    args: Fp8GemmArgs,
    /// This thread's first row of op(A).
    top: u32,
    /// Where B's scales of the tile's block column start: `scale_b[b_scales + κ/128]`.
    b_scales: u32,
    /// The work's first slice in k (a stream-k part starts inside k).
    first_slice: u32,
    /// Whether the tile's columns start inside C.
    inside_n: bool,
    /// Slices of k in the work.
    slices: u32,
}

impl BlockScales {
    /// The scales of `work` for the consumer thread `thread` (0..128) of the warpgroup whose
    /// first row of the tile is `tile_row0`, the tile's first column `col0` (a tile lies in one
    /// block column of B: its width divides 128).
    #[inline(always)]
    pub fn new(args: &Fp8GemmArgs, tile_row0: u32, col0: u32, thread: u32, work: Work) -> Self {
        let (warp, lane) = (thread / 32, thread % 32);
        let k_blocks = args.k.div_ceil(BK);
        BlockScales {
            args: *args,
            top: tile_row0 + 16 * warp + lane / 4,
            b_scales: (col0 / BN) * k_blocks,
            first_slice: work.first_slice,
            inside_n: col0 < args.n,
            slices: work.slices,
        }
    }

    /// Slice `slice`'s three scales as loaded (of the work's slices: a stream-k part's first
    /// is its own): this thread's two rows of A's, B's. They are multiplied only where they are
    /// used, so that no instruction waits for the loads before the promotion needs them.
    #[inline(always)]
    fn load(self, slice: u32) -> [f32; 3] {
        let args = self.args;
        let k_block = self.first_slice + slice;
        let scale_a = |row: u32| {
            if row < args.m {
                unsafe { args.scale_a.load((row + k_block * args.m) as usize) }
            } else {
                0.0
            }
        };
        // A block of a cluster may lie past C's edge (it still loads its share of A): B has no
        // scales there, and its results are never stored. (Written out rather than through
        // `load_b`: the call moved ptxas's spills in `:3`, 116 bytes to 128.)
        let sb = if self.inside_n {
            unsafe { args.scale_b.load((self.b_scales + k_block) as usize) }
        } else {
            0.0
        };
        [scale_a(self.top), scale_a(self.top + 8), sb]
    }

    /// Slice `slice`'s scale of B (of the work's slices), as [`BlockScales::load`]'s third;
    /// past the last slice, the last slice's again (a load with no branch around it, whose
    /// value is never used).
    #[inline(always)]
    fn load_b(self, slice: u32) -> f32 {
        if self.inside_n {
            let k_block = self.first_slice + slice.min(self.slices - 1);
            unsafe { self.args.scale_b.load((self.b_scales + k_block) as usize) }
        } else {
            0.0
        }
    }
}

/// `total += (sa_row·sb)·partial`, one FMA per register, once `partial`'s group retired. Register
/// `i` of an `m64nN` accumulator is row g + 8·((i / 2) mod 2) of the thread's warp, whatever N.
// The loop indexes the registers with its counter: unrolled, each index is a constant.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
pub fn promote<const R: usize>(total: &mut [f32; R], partial: &mut Accumulator<R>, scales: [f32; 3])
where
    Accumulator<R>: Registers,
{
    partial.fence_registers();
    let partial = partial.get();
    let row_scales = [scales[0] * scales[2], scales[1] * scales[2]];
    for i in 0..R {
        total[i] = partial[i].fma(row_scales[(i >> 1) & 1], total[i]);
    }
}

impl Slices {
    #[inline(always)]
    fn new(args: &Fp8GemmArgs, c: &Consumer, work: Work, tile_rows: u32, clustered: bool) -> Self {
        // The warpgroup as lane 0 holds it ([`warp_uniform`]): `c.warpgroup` is the same in
        // every lane, but ptxas cannot prove it, and built from it the descriptors were made in
        // per-thread registers and moved to uniform ones (`R2UR`) for each `wgmma`: 8 more
        // instructions per slice in `:9`. (Here and not in `Consumer::new`: there it made
        // ptxas spill 8 + 12 bytes in `wgmma-3xtf32:2`'s batch twin.)
        let rows = 64 * warp_uniform(c.warpgroup);
        let (row0, col0) = (work.tile.row * tile_rows + rows, work.tile.col * BN);
        // B's slice starts in a stage after A's rows of the tile.
        let b_offset = tile_rows * BK;
        let first = pool_address(c.stages.stage(0));
        Slices {
            rows,
            slices: work.slices,
            scales: BlockScales::new(args, row0, col0, c.thread, work),
            a_first: Descriptor::k_major(first + rows * BK, Swizzle::B128, 16, 1024),
            b_first: Descriptor::k_major(first + b_offset, Swizzle::B128, 16, 1024),
            clustered,
        }
    }

    /// Gives stage `s` back: to every block of the cluster, or within the block. Where the
    /// scales `S` are loaded from the stage, the lanes' loads are first ordered before lane 0's
    /// arrive ([`Consumer::finish_loads`]); scales loaded from global memory need no such
    /// ordering, and the sync would make the release wait for the loads still in flight.
    #[inline(always)]
    fn release<S: SliceScales>(self, c: &Consumer, s: u32) {
        if S::FROM_STAGE {
            c.finish_loads();
        }
        if self.clustered {
            c.release(s);
        } else {
            c.release_in_block(s);
        }
    }

    /// Waits for the ring's current stage and issues its four `wgmma`s, committed as one group:
    /// k-step `i` into `chains[i % CHAINS]`, each chain a fresh sum (`accumulate` false on its
    /// first `wgmma`).
    #[inline(always)]
    fn issue<const CHAINS: usize>(self, c: &Consumer, chains: [&mut Accumulator<64>; CHAINS]) {
        c.wait_full();
        let offset = c.stages.offset(c.ring.stage);
        let (a, b) = (self.a_first.advanced(offset), self.b_first.advanced(offset));
        wgmma::fence();
        for step in 0..BK / K_STEP {
            let (a, b) = (a.advanced(32 * step), b.advanced(32 * step));
            let chain = step as usize % CHAINS;
            Fp8Wgmma::mma(&mut *chains[chain], a, b, step as usize >= CHAINS);
        }
        wgmma::commit_group();
    }

    /// One slice at a time: issue, load the scales of the slice after next, wait, release,
    /// promote.
    #[inline(always)]
    fn one_at_a_time<S: SliceScales>(self, c: &mut Consumer, mut scales: S) -> [f32; 64] {
        let mut total = [0f32; 64];
        let mut slice = 0;
        while slice < self.slices {
            let run_end = (slice + RUN).min(self.slices);
            while slice < run_end {
                self.alone(c, &mut scales, slice, &mut total);
                slice += 1;
            }
            scales.next_run(slice);
        }
        total
    }

    /// Slice `slice` on its own: issue it, wait for it, release its stage, promote it.
    #[inline(always)]
    fn alone<S: SliceScales>(
        self,
        c: &mut Consumer,
        scales: &mut S,
        slice: u32,
        total: &mut [f32; 64],
    ) {
        let mut partial = Accumulator::<64>::zero();
        let at = c.ring;
        self.issue(c, [&mut partial]);
        let scales = scales.take(c, at, slice);
        wgmma::wait_group::<0>();
        self.release::<S>(c, at.stage);
        c.ring.advance();
        promote(total, &mut partial, scales);
    }

    /// Two slices per turn of the loop: both issued (two groups), the first promoted as soon
    /// as it retired while the second still runs, then the second. Each turn gives the tensor
    /// cores 512 cycles of this warpgroup's work against one pass of the loop's bookkeeping
    /// (ncu's samples: per slice, the warpgroup's own instructions, not the tensor cores, took
    /// most of a slice's time). An odd last slice goes alone. The scales come from `scales`:
    /// loaded by this thread ([`Ahead`]) or staged in shared memory ([`Staged`]).
    #[inline(always)]
    fn two_per_wait<S: SliceScales>(self, c: &mut Consumer, mut scales: S) -> [f32; 64] {
        let mut total = [0f32; 64];
        let mut slice = 0;
        while slice + 2 <= self.slices {
            // A run is even, so only the last one may end in a slice alone.
            let run_end = (slice + RUN).min(self.slices);
            while slice + 2 <= run_end {
                let (mut first, mut second) =
                    (Accumulator::<64>::zero(), Accumulator::<64>::zero());
                let first_at = c.ring;
                self.issue(c, [&mut first]);
                c.ring.advance();
                let second_at = c.ring;
                self.issue(c, [&mut second]);
                c.ring.advance();
                let first_scales = scales.take(c, first_at, slice);
                let second_scales = scales.take(c, second_at, slice + 1);
                wgmma::wait_group::<1>();
                self.release::<S>(c, first_at.stage);
                promote(&mut total, &mut first, first_scales);
                wgmma::wait_group::<0>();
                self.release::<S>(c, second_at.stage);
                promote(&mut total, &mut second, second_scales);
                slice += 2;
            }
            if slice == run_end {
                scales.next_run(slice);
            }
        }
        if slice < self.slices {
            self.alone(c, &mut scales, slice, &mut total);
        }
        total
    }

    /// One scale per tensor: the skeleton's mainloop (one group in flight, each stage released
    /// as the next slice's group runs) into one accumulator over all of k; nothing to promote.
    #[inline(always)]
    fn per_tensor<F: Fp8Format>(self, c: &mut Consumer) -> [f32; 64] {
        let mut acc = Accumulator::<64>::zero();
        let (a_first, b_first) = (self.a_first, self.b_first);
        let first = pool_address(c.stages.stage(0));
        c.mainloop(self.slices, |stage, slice| {
            let (a, b) = (
                a_first.advanced(stage - first),
                b_first.advanced(stage - first),
            );
            for step in 0..BK / K_STEP {
                let (a, b) = (a.advanced(32 * step), b.advanced(32 * step));
                acc.mma_b::<F>(a, b, !(slice == 0 && step == 0));
            }
        });
        acc.fence_registers();
        *acc.get()
    }

    /// Two chains per slice: k-steps 0 and 2 into one partial sum, 1 and 3 into another, both
    /// promoted. Consecutive `wgmma`s of a group then never wait for each other's accumulator
    /// (as in `wgmma-fp8`, whose two `m64n128` per k-step are independent): 64 more registers,
    /// 64 more FMAs per slice.
    #[inline(always)]
    fn two_chains(self, c: &mut Consumer) -> [f32; 64] {
        let mut total = [0f32; 64];
        let mut ahead = Ahead::new(self.scales);
        for slice in 0..self.slices {
            let (mut even, mut odd) = (Accumulator::<64>::zero(), Accumulator::<64>::zero());
            self.issue(c, [&mut even, &mut odd]);
            let scales = ahead.take(slice);
            wgmma::wait_group::<0>();
            self.release::<Ahead>(c, c.ring.stage);
            c.ring.advance();
            promote(&mut total, &mut even, scales);
            promote(&mut total, &mut odd, scales);
        }
        total
    }

    /// Two partial sums in turn ([`in_turns`]): slice s + 1's `wgmma`s are issued before slice
    /// s is promoted, so that this warpgroup's tensor-core work never waits for its own
    /// promotion (64 more registers per thread).
    #[inline(always)]
    fn overlapped(self, c: &mut Consumer) -> [f32; 64] {
        let issue = |c: &Consumer, sum: &mut Accumulator<64>| self.issue(c, [sum]);
        let mut ahead = Ahead::new(self.scales);
        let scales = |_: &Consumer, slice| ahead.take(slice);
        in_turns::<64, false, false, [f32; 3]>(c, self.slices, scales, issue, promote)
    }
}

/// Slices per run: the mainloops call [`SliceScales::next_run`] between runs, outside the
/// loop over a run's slices ([`Staged`] holds B's scales of a run in the warp's 32 lanes).
/// Inside it, ptxas made the run's change a predicated block executed on every slice.
const RUN: u32 = 32;

/// Where a consumer thread finds each slice's scales: this thread's two rows of A's, then B's.
trait SliceScales {
    /// Slice `slice`'s scales; `at` is its place in the ring (its stage held by the consumers
    /// until they release it, after this).
    fn take(&mut self, c: &Consumer, at: Ring, slice: u32) -> [f32; 3];

    /// Whether `take` loads from the stage (which its release must then order: [`Slices`]'s
    /// `release`).
    const FROM_STAGE: bool = false;

    /// A run of [`RUN`] slices ended; the next starts at slice `next` (of the work's).
    #[inline(always)]
    fn next_run(&mut self, next: u32) {
        let _ = next;
    }
}

impl SliceScales for Ahead {
    #[inline(always)]
    fn take(&mut self, _: &Consumer, _: Ring, slice: u32) -> [f32; 3] {
        Ahead::take(self, slice)
    }
}

/// A's scales as the producer copied them beside each stage ([`TWO_PER_WAIT_STAGED`],
/// [`ONE_SLICE_STAGED`]), landed with the stage's operands: two loads from shared memory per
/// slice. B's, one per slice for the whole tile, are spread over the warp's lanes: lane `l`
/// holds slice `32j + l`'s of the current run of [`RUN`] slices, and the next run's is loaded
/// a run before it is needed. A slice's scale is then one shuffle from the lane that holds
/// it, where a load of it two slices ahead had cost ten instructions per slice (a 64-bit
/// address made in uniform registers and moved to per-thread ones for the load, its result
/// moved back, a bounds check); the consumers are bound by their own issue.
#[derive(Clone, Copy)]
struct Staged {
    /// This thread's first row in the tile (the second is 8 below).
    top: u32,
    consumers: u32,
    of: BlockScales,
    /// This thread's lane: the slice of each run of 32 whose B scale it holds.
    lane: u32,
    /// B's scale of this lane's slice in the current run of 32 slices, and in the next.
    b_run: f32,
    b_next_run: f32,
}

impl Staged {
    /// For consumer `c` of a `tile_rows`-row tile, `slices`' warpgroup.
    #[inline(always)]
    fn new(c: &Consumer, tile_rows: u32, slices: Slices) -> Self {
        let (warp, lane) = (c.thread / 32, c.thread % 32);
        let of = slices.scales;
        Staged {
            top: slices.rows + 16 * warp + lane / 4,
            consumers: tile_rows / 64,
            of,
            lane,
            b_run: of.load_b(lane),
            b_next_run: of.load_b(RUN + lane),
        }
    }
}

impl SliceScales for Staged {
    const FROM_STAGE: bool = true;

    #[inline(always)]
    fn take(&mut self, c: &Consumer, at: Ring, slice: u32) -> [f32; 3] {
        let b = shfl_idx(self.b_run, slice % RUN);
        let staged = stage_scales(c.stages, self.consumers, at.stage);
        [staged.load(self.top), staged.load(self.top + 8), b]
    }

    #[inline(always)]
    fn next_run(&mut self, next: u32) {
        self.b_run = self.b_next_run;
        self.b_next_run = self.of.load_b(next + RUN + self.lane);
    }
}

/// The scales in flight from global memory: loaded two slices before the promotion that uses
/// them. One slice ahead was not enough: at 8192³ the warps stalled on these loads a third of
/// the time (ncu), an L2 round trip under the operands' traffic being longer than a slice.
#[derive(Clone, Copy)]
pub struct Ahead {
    of: BlockScales,
    /// Slice s + 1's scales, then slice s + 2's, when slice s is issued.
    queue: [[f32; 3]; 2],
}

impl Ahead {
    #[inline(always)]
    pub fn new(of: BlockScales) -> Self {
        Ahead {
            of,
            queue: [of.load(0), of.load(1.min(of.slices - 1))],
        }
    }

    /// Slice `slice`'s scales, and the load of slice `slice + 2`'s (the last slice's again past
    /// the end: a load with no branch around it).
    #[inline(always)]
    pub fn take(&mut self, slice: u32) -> [f32; 3] {
        let (now, of) = (self.queue[0], self.of);
        self.queue = [self.queue[1], of.load((slice + 2).min(of.slices - 1))];
        now
    }
}

/// A warpgroup's promoted sum over `slices` slices with two partial sums in turn: slice s + 1's
/// `wgmma`s are issued (`issue`, which waits for its stage) before slice s is retired, released
/// and promoted (`promote`, with what `scales(c, s)` returned as slice s was issued, its stage
/// still held), so that the tensor cores never wait for this warpgroup's promotion. Unrolled by
/// two, each exit before an issue: each partial sum is a fixed set of registers, and every path
/// to a promotion has one depth of `wait_group` (with two depths meeting before it, ptxas
/// serialized every `wgmma`: C7514). `wgmma-fp8-block:3`'s mainloop, and the swapped tile's
/// ([`super::wgmma_fp8_block_swap`]). `FROM_STAGE`: whether `scales` loads from the stage, so
/// that each release first orders those loads ([`Consumer::finish_loads`]). `LATE`: whether the
/// next slice's scales are taken after the release rather than before the wait (only with
/// `FROM_STAGE`: measured in `docs/results/h200-2026-11-28-warp-sync/`, with two consumer
/// warpgroups the release no longer waits for them, +4–5%; with one the taking lands on the
/// chain of handshakes, −2.5%).
#[inline(always)]
pub fn in_turns<const R: usize, const FROM_STAGE: bool, const LATE: bool, T: Copy>(
    c: &mut Consumer,
    slices: u32,
    mut scales: impl FnMut(&Consumer, u32) -> T,
    issue: impl Fn(&Consumer, &mut Accumulator<R>),
    promote: impl Fn(&mut [f32; R], &mut Accumulator<R>, T),
) -> [f32; R]
where
    Accumulator<R>: Registers,
{
    let mut total = [0f32; R];
    let (mut even, mut odd) = (Accumulator::<R>::zero(), Accumulator::<R>::zero());
    issue(c, &mut even);
    let mut turn = Turn::<T, FROM_STAGE, LATE> {
        scales: scales(c, 0),
        previous: c.ring.stage,
    };
    c.ring.advance();
    let mut slice = 1;
    loop {
        if slice == slices {
            turn.last(c, &mut total, &mut even, &promote);
            return total;
        }
        let steps = (&issue, &mut scales, &promote);
        turn.next(c, slice, steps, &mut odd, &mut total, &mut even);
        slice += 1;
        if slice == slices {
            turn.last(c, &mut total, &mut odd, &promote);
            return total;
        }
        let steps = (&issue, &mut scales, &promote);
        turn.next(c, slice, steps, &mut even, &mut total, &mut odd);
        slice += 1;
    }
}

/// [`in_turns`]' state between turns: the scales of the slice in flight and its stage.
#[derive(Clone, Copy)]
struct Turn<T, const FROM_STAGE: bool, const LATE: bool> {
    scales: T,
    previous: u32,
}

impl<T: Copy, const FROM_STAGE: bool, const LATE: bool> Turn<T, FROM_STAGE, LATE> {
    /// Issues slice `slice` into `next` (and takes its scales), then retires the group before
    /// it (`done`'s), releases that group's stage and promotes it.
    #[allow(clippy::type_complexity)]
    #[inline(always)]
    fn next<const R: usize, I, S, P>(
        &mut self,
        c: &mut Consumer,
        slice: u32,
        (issue, scales, promote): (&I, &mut S, &P),
        next: &mut Accumulator<R>,
        total: &mut [f32; R],
        done: &mut Accumulator<R>,
    ) where
        I: Fn(&Consumer, &mut Accumulator<R>),
        S: FnMut(&Consumer, u32) -> T,
        P: Fn(&mut [f32; R], &mut Accumulator<R>, T),
    {
        issue(c, next);
        // Late: after the release, which `finish_loads` would otherwise make wait for them.
        let next_scales = if LATE {
            wgmma::wait_group::<1>();
            self.release(c);
            scales(c, slice)
        } else {
            let next_scales = scales(c, slice);
            wgmma::wait_group::<1>();
            self.release(c);
            next_scales
        };
        promote(total, done, self.scales);
        self.previous = c.ring.stage;
        c.ring.advance();
        self.scales = next_scales;
    }

    /// The last slice: retires its group, releases its stage and promotes it.
    #[inline(always)]
    fn last<const R: usize>(
        self,
        c: &mut Consumer,
        total: &mut [f32; R],
        done: &mut Accumulator<R>,
        promote: &impl Fn(&mut [f32; R], &mut Accumulator<R>, T),
    ) {
        wgmma::wait_group::<0>();
        self.release(c);
        promote(total, done, self.scales);
    }

    /// Gives the retired group's stage back, its scales' loads ordered first where they came
    /// from the stage.
    #[inline(always)]
    fn release(&self, c: &Consumer) {
        if FROM_STAGE {
            c.finish_loads();
        }
        c.release(self.previous);
    }
}

/// The entry point's body.
///
/// # Safety
/// As [`pipeline::run`]: `maps` points to A's, B's and C's tensor maps (A k × m in boxes of
/// 128 k × 64 m, B k × n in boxes of 128 k × 128 n, e4m3 with the 128-byte swizzle; C's bf16
/// boxes of 64 m × 64 n), `args`' scales are laid out as [`Fp8GemmArgs`] says, and the launch
/// has [`geometry`]'s block and pool and at most one block per multiprocessor.
#[inline(always)]
pub unsafe fn gemm<
    const STAGES: u32,
    const MAINLOOP: u32,
    const CLUSTER_N: u32,
    const CONSUMERS: u32,
    F: Fp8Format,
    const WALK: u32,
>(
    args: Fp8GemmArgs,
    maps: *const TensorMap,
) {
    unsafe {
        pipeline::run(
            WgmmaFp8Block::<STAGES, MAINLOOP, CLUSTER_N, CONSUMERS, F, WALK>(PhantomData),
            args,
            maps,
        )
    }
}
