//! `wgmma-tf32` and `wgmma-3xtf32`: Hopper's GEMM pipeline. The TMA engine copies tiles of A
//! and B into a ring of shared-memory stages, mbarriers hand each stage from the *producer*
//! warpgroup to two *consumer* warpgroups and back, and the consumers multiply with
//! `wgmma.mma_async` over a persistent schedule of output tiles. cuBLAS's TF32 kernel on the
//! H100 is this design (`sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x256x32_
//! warpgroupsize2x1x1…`: 384 threads, 128×256×32 tiles, one block per SM).
//!
//! Since chapter 3 it runs on the Hopper skeleton ([`crate::pipeline`]: the ring, the roles, the
//! persistent tile scheduler), and says here only what is TF32's own: the copies of a slice,
//! the consumers' mainloop with A in registers, the epilogue, and 3xTF32's splitting of B.
//!
//! Source: none of the documents. Changed from [`super::wgmma_tf32_basic`]:
//!
//! - **The TMA engine stages the tiles** ([`crate::device::tma`]). One thread of the producer
//!   warpgroup issues, per stage, four copies of A (32 rows of m by 32 of k each: a 128-byte
//!   swizzled box holds at most 32 f32 across) and one of B (32 of k by up to 256 columns).
//!   The engine swizzles them as it writes and fills what lies past the matrix with zeros, so
//!   there is no bounds test and no address arithmetic per element, in any shape. The tensor
//!   maps, made by the host (`cuTensorMapEncodeTiled`), are in global memory.
//! - **mbarriers instead of `bar.sync`** ([`crate::device::mbarrier`]). Stage `s` has a *full*
//!   barrier (one arrival: the producer's `arrive.expect_tx` of the stage's bytes, which the
//!   copies then deliver) and an *empty* barrier (256 arrivals: every consumer thread, once its
//!   `wgmma`s are done with the stage). The producer waits for *empty* before refilling a stage,
//!   the consumers wait for *full* before reading it; both track the phase parity of the ring
//!   ([`crate::pipeline::Ring`]). Nobody else waits: the producer runs up to `STAGES` slices
//!   ahead.
//! - **Warp specialisation and `setmaxnreg`.** 384 threads: warpgroup 0 produces, 1 and 2
//!   consume (rows 0–63 and 64–127 of the tile). A block gets 168 registers per thread at
//!   launch (`launch_bounds(384, 1)`); the producer gives most back (`setmaxnreg.dec 40`) and
//!   the consumers take them (`setmaxnreg.inc 232`): a 64×256 f32 accumulator is 128 registers
//!   per thread.
//! - **A from registers.** TF32 `wgmma` operands in shared memory must be K-major, and
//!   column-major A is M-major. A's fragments go through registers instead
//!   ([`Tf32WgmmaRegisters::mma_with_a_registers`]), loaded by the consumers with `ld.shared.v2`: the
//!   fragment table wants rows `g` and `g + 8` of k `t` in registers 0 and 1, and a row of the
//!   tile may stand for any row of C as long as the epilogue writes it there, so fragment rows
//!   `g`, `g + 8` are given two *adjacent* m (one 8-byte load) chosen so that each half-warp's
//!   16 loads hit 32 different banks through the 128-byte swizzle (`fragment_row`). B (K-major
//!   as it lies) is read by the tensor cores through its descriptor, as in the basic kernel.
//! - **`wgmma`s in flight, one fragment buffer per group** (`consume_pipelined`, CUTLASS's
//!   order for A in registers). Each k-step is a group of one `wgmma`; two groups run while the
//!   warp loads the next k-step's fragment and issues it. The tensor cores read a fragment's
//!   registers until its group retires: the first version reloaded the same registers every
//!   slice with a group in flight, and the H100 computed garbage (relative error 1.2) while
//!   the emulator, which then took register values at issue, passed it. Now each k-step has a
//!   buffer of its own, rewritten only after the wait that retired its group, and the emulator
//!   checks, when a group retires, that the fragments it read are unchanged. ptxas is touchy
//!   here: a fragment loaded inside another group's pipeline stage, or an accumulator fence
//!   while a group runs, makes it serialize every `wgmma` (C7513/C7514, which the tests reject).
//!   `--tile 2` is the simpler loop, one group per slice, each waited for.
//! - **The fragments' loads ordered before the release.** Every lane loads its fragments from
//!   the stage, and lane 0 alone gives the stage back for the warp, so the warp meets at
//!   `__syncwarp()` first ([`Consumer::finish_loads`]): without it, nothing orders lanes 1–31's
//!   loads before the copy that refills the stage. The emulator reports the missing sync since
//!   it stopped taking shuffles and `wgmma` waits as memory ordering; ptxas compiles the sync to
//!   nothing here, the warp being converged.
//! - **A persistent grid.** One block per SM (the host caps the grid); block `b` computes
//!   tiles `b`, `b + grid`, … in the grouped order of [`crate::pipeline::schedule`], so the blocks
//!   working at the same time share panels of A and B in L2. The producer fills the next
//!   tile's stages while the consumers finish the last one.
//! - **The epilogue** applies α and β from the accumulator registers (β = 0 does not read C)
//!   and skips what lies past m or n. Fragment rows `g`, `g + 8` being adjacent rows of C, each
//!   lane writes two adjacent elements of a column with one 8-byte store.
//!
//! **3xTF32 from the same pipeline** (`SPLIT = true`, `wgmma-3xtf32`): FP32 accuracy from the
//! TF32 tensor cores as in chapter 1's `tc-3xtf32` (`a·b ≈ a_small·b_big + a_big·b_small +
//! a_big·b_big`). A is split in the consumers' registers ([`Tf32::split`]). B must be split
//! where the tensor cores read it: the producer warpgroup's three idle warps wait for each
//! stage's copies, replace B by its rounded `big` part and write `small` beside it
//! (the kernel's `assist` role, [`crate::pipeline::Kernel::assist`]), publish both to the async proxy (`fence.proxy.async`) and arrive on a third
//! barrier, *ready*, which the consumers wait for instead of *full*. As in chapter 1, each slice's
//! twelve `wgmma`s (4 k-steps × 3 products) start from zero and the slice's sum is added to the
//! running sum with `FADD`: the tensor cores' accumulation truncates, and over a whole k loop
//! the truncations of a large accumulator add up to a biased error. That needs a second
//! accumulator, so the tile is 128×128.
//!
//! **3xTF32 over f32's whole range** ([`crate::variants::ranges`]): the small parts of inputs
//! below about 2⁻¹¹⁵ are subnormal, which the tensor cores read as zero, and the product falls
//! back to TF32's accuracy there (190× SGEMM's error on the H100, rows of A in 2⁻¹²⁵…2⁻¹⁰⁰). So a
//! pass before the kernel finds each row's and column's largest |x|, the consumers scale their
//! two rows of A by a power of two before splitting them, the splitting warps scale each column
//! of B, and the epilogue divides each element of C by both: exact operations that put every
//! row and column's largest in [1, 4) whatever its magnitude.
//!
//! **A strided batch** (the `_batch` entry points, `BATCH`): the walk goes over every member's
//! tiles, the copies take the member as the layer of their tensor maps, the epilogue offsets C
//! by it, and 3xTF32's ranges pass writes m + n words per member (its own `_batch` twin, a layer
//! of its grid per member), from which each tile reads its member's. On the H100 at 1 024
//! attention-sized members (`docs/results/h100-2026-11-27-tf32-batch/`): 3xTF32 1.04× and 1.25×
//! cuBLAS SGEMM's strided batch at 2048 × 2048 × 128 and 2048 × 128 × 2048 (the SIMT kernels:
//! 0.98× and 0.94×), but 0.70–0.77× at 128³ and 512 × 512 × 64, where `auto` keeps `best:1`
//! (1.17–1.31×); TF32 0.99–1.02× cuBLAS's TF32 strided batch on the small members, 0.90× at
//! 2048 × 128 × 2048 and 0.63× at 2048 × 2048 × 128, whose 17 GB of C our register epilogue
//! writes at 1.6 TB/s against cuBLAS's 2.5. The kernels themselves stay one problem's: a walk
//! that divides by the members cost one 3xTF32 problem 3.5–7% (see [`Tf32Pipeline`]).
//!
//! The emulator runs all of it: the TMA boxes with their swizzle and zero fill, the
//! mbarrier phases, the `wgmma` descriptor reads; a consumer that reads a stage before its
//! *full* phase, a producer that refills one before its *empty* phase, or a `wgmma` that reads
//! B's split without the proxy fence is reported (`tests/tests/emulator_hopper.rs`).
//!
//! What the SASS shows (`cargo xtask sass --variant wgmma-tf32`, the sm_90a build): the consumer
//! loop is 63 instructions per slice for 4 `HGMMA.64x256x8.F32.TF32`, 8 `LDS.64` and no
//! barrier, each `HGMMA` followed by `WARPGROUP.DEPBAR.LE gsb0, 0x2`; the producer's is an
//! mbarrier wait, an `arrive.expect_tx` and 5 `UTMALDG.2D`. 168 registers at launch, no spills.
//!
//! Measured (H100 80GB HBM3, median, cuBLAS in the same process, checks passing;
//! `docs/results/h100-2026-11-23-hopper/`, `docs/perf-notes.md`): `--tile 1` 390–396 TFLOP/s at
//! 4096³ (1.03–1.05× cuBLAS TF32), 393–400 at 8192³ (0.97–1.03×: cuBLAS ran at 388–405), 340 at
//! 2048³ (1.23×), 338 at 8192×8192×1024 (1.07×). ncu at 4096³: tensor pipe active 93.7% (cuBLAS
//! 91.9%), no bank conflicts (cuBLAS: 8.4 M). `wgmma-3xtf32`: 128–130 TFLOP/s at 4096³, 2.5×
//! cuBLAS SGEMM with relative error 3.2·10⁻⁷ (SGEMM 1.1·10⁻⁶); 116–121 at 8192³, 2.3×. With
//! the ranges pass (`docs/results/h100-2026-11-26-library/`): 107–113 TFLOP/s at 4096³, 2.07–2.18×;
//! 108–110 at 8192³, 2.08–2.14×; 87–92 at 2048³, 1.77–1.86×; and over f32's whole normal range
//! an error of 4.9–5.5·10⁻⁸ of Σ|a·b| where the strict kernels' is 1.3–2.1·10⁻⁷ (without the
//! pass, chapter 1's `tc-3xtf32`: 1.7–2.2·10⁻⁵). The first versions of the scaling cost far more:
//! the splitters read their columns' scales from global memory in every slice (0.59× the
//! speed, the splitters being the critical path), then once a tile but through an array ptxas
//! put in local memory; with the producer warpgroup's registers raised to 64 for them, the
//! consumers' `setmaxnreg.inc` never returned and the kernel hung on the H100.
use crate::device::cluster;
use crate::device::mma::{FragA, Tf32};
use crate::device::tma::{self, Swizzle, TensorMap};
use crate::device::wgmma::{self, Accumulator, Descriptor, Registers, Tf32WgmmaRegisters};
use crate::device::{Shared, WARP_SIZE};
use crate::gemm::{GemmArgs, Geometry};
use crate::pipeline::schedule::Tile;
use crate::pipeline::{self, Consumer, Kernel, Ring, Stages, Work};
use crate::variants::ranges::{self, Ranges};

/// Rows of the block tile: two consumer warpgroups of 64.
pub const BM: u32 = 128;
/// A slice of k: 32 f32, one 128-byte swizzled row.
pub const BK: u32 = 32;
/// Rows of A per TMA box: a 128-byte swizzled row holds 32 f32 of m.
const A_BOX_ROWS: u32 = 32;
/// The producer's three warps that split B in 3xTF32.
const SPLITTERS: u32 = 96;
/// The most 16-byte chunks of a B stage one splitting thread handles: ⌈128·32/4 / 96⌉ (3xTF32's
/// tiles are 128 columns wide).
const MAX_SPLIT_CHUNKS: usize = 11;

/// The bytes of a stage: A (BM×BK), B (BK×BN), and B's small parts in 3xTF32.
pub const fn stage_bytes(bn: u32, split: bool) -> u32 {
    (BM + bn * if split { 2 } else { 1 }) * BK * 4
}

/// The kernel: accumulators of `R` registers (a tile of `BN = 2R` columns), `STAGES` stages,
/// `wgmma` groups per k-step in flight (`PIPELINED`) or one per slice, 3xTF32 (`SPLIT`), tiles
/// in groups of `RASTER` unit-columns ([`crate::pipeline::schedule`]), clusters of `CLUSTER_M` blocks down m that share B (chapter
/// 3's [`super::wgmma_cluster`]: each loads half of B's slice and multicasts it to both), a walk
/// over every member of a strided batch (`BATCH`: the `…_batch` entry points).
///
/// `BATCH` is a parameter, not the skeleton's default, because finding a tile's member divides
/// its unit by the tiles per member, and ptxas computes a division with `MUFU.RCP`, which has no
/// uniform form: the member, and with it every TMA coordinate, moved from uniform into ordinary
/// registers, each of the producer's copies gained five `R2UR`s, and one 3xTF32 problem ran
/// 3.5–7% slower on the H100 (TF32 did not move; why 3xTF32 alone is sensitive to it is not
/// measured).
#[derive(Clone, Copy)]
pub struct Tf32Pipeline<
    const R: usize,
    const BN: u32,
    const STAGES: u32,
    const PIPELINED: bool,
    const SPLIT: bool,
    const RASTER: u32,
    const CLUSTER_M: u32,
    const BATCH: bool,
>;

pub fn geometry<const BN: u32, const STAGES: u32, const SPLIT: bool>(
    m: u32,
    n: u32,
    _k: u32,
    _element_bytes: u32,
) -> Geometry {
    type K<const BN: u32, const STAGES: u32, const SPLIT: bool> =
        Tf32Pipeline<64, BN, STAGES, false, SPLIT, 8, 1, false>;
    Geometry {
        // One block per tile (a cluster's tiles rounded up: the host caps the grid at what is
        // resident, one block per SM at most).
        grid: (m.div_ceil(BM).next_multiple_of(2) * n.div_ceil(BN), 1),
        block: (K::<BN, STAGES, SPLIT>::THREADS, 1),
        shared_bytes: K::<BN, STAGES, SPLIT>::POOL_BYTES,
    }
}

/// A's box `b` (rows `32b..32b+32` of the tile) in the stage at pool byte `stage`.
#[inline(always)]
fn a_box(stage: u32, b: u32) -> Shared<f32> {
    Shared::at(stage + b * A_BOX_ROWS * BK * 4, A_BOX_ROWS * BK)
}

/// All of A in the stage at pool byte `stage` (the four boxes).
#[inline(always)]
fn a_tile(stage: u32) -> Shared<f32> {
    Shared::at(stage, BM * BK)
}

/// B in the stage (BN rows, columns of B, of 32 k: 128 bytes each), or with `small` its small
/// parts (3xTF32), laid out as B after it.
#[inline(always)]
fn b_tile(stage: u32, bn: u32, small: bool) -> Shared<f32> {
    Shared::at(stage + (BM + if small { bn } else { 0 }) * BK * 4, bn * BK)
}

impl<
        const R: usize,
        const BN: u32,
        const STAGES: u32,
        const PIPELINED: bool,
        const SPLIT: bool,
        const RASTER: u32,
        const CLUSTER_M: u32,
        const BATCH: bool,
    > Kernel for Tf32Pipeline<R, BN, STAGES, PIPELINED, SPLIT, RASTER, CLUSTER_M, BATCH>
where
    Accumulator<R>: Tf32WgmmaRegisters,
{
    type Args = GemmArgs<f32>;
    const BM: u32 = BM;
    const BN: u32 = BN;
    const BK: u32 = BK;
    const STAGES: u32 = STAGES;
    const STAGE_BYTES: u32 = stage_bytes(BN, SPLIT);
    /// What the TMA copies deliver (not B's small parts, which the splitters write).
    const LOADED_BYTES: u32 = (BM + BN) * BK * 4;
    const ASSISTS: bool = SPLIT;
    const RASTER_GROUP: u32 = RASTER;
    const CLUSTER: (u32, u32) = (CLUSTER_M, 1);
    const BATCHES: bool = BATCH;

    /// Four copies of A (32 rows of m by 32 of k each: a 128-byte swizzled box holds at most 32
    /// f32 across) and one of B (32 of k by BN columns), or in a cluster this block's share of
    /// B's columns, multicast to every block of it (whose *full* barriers each count all of B).
    #[inline(always)]
    unsafe fn load(self, maps: *const TensorMap, stages: Stages, s: u32, tile: Tile, slice: u32) {
        let (a_map, b_map) = (maps, maps.wrapping_add(1));
        let (full, stage) = (stages.full(s), stages.stage(s));
        let (row0, col0) = ((tile.row * BM) as i32, (tile.col * BN) as i32);
        let k0 = (slice * BK) as i32;
        for b in 0..BM / A_BOX_ROWS {
            let rows = row0 + (b * A_BOX_ROWS) as i32;
            unsafe { tma::load_tile(a_map, a_box(stage, b), rows, k0, tile.group, full) };
        }
        let b = b_tile(stage, BN, false);
        if CLUSTER_M == 1 {
            unsafe { tma::load_tile(b_map, b, k0, col0, tile.member, full) };
        } else {
            let share = BN / CLUSTER_M;
            let rank = cluster::rank();
            let everyone = ((1u32 << CLUSTER_M) - 1) as u16;
            let dst = b.shared_address(rank * share * BK);
            let col = col0 + (rank * share) as i32;
            unsafe { tma::load_box_multicast(b_map, dst, k0, col, tile.member, full, everyone) };
        }
    }

    /// 3xTF32: the producer warpgroup's other three warps split the stage's B into its rounded
    /// TF32 `big` part, in place, and `small = B − big` beside it, then publish both to the async
    /// proxy and arrive on the stage's *ready* barrier, which the consumers wait for instead of
    /// *full*. Every 16-byte chunk is loaded once and stored twice, by consecutive threads (no
    /// bank conflict); the layout is B's, so the descriptors of the two halves differ only in
    /// where they start.
    #[inline(always)]
    unsafe fn assist(
        self,
        args: GemmArgs<f32>,
        maps: *const TensorMap,
        stages: Stages,
        ring: &mut Ring,
        thread: u32,
        tile: Tile,
        slices: u32,
    ) {
        const { assert!(!SPLIT || BN * BK / 4 <= SPLITTERS * MAX_SPLIT_CHUNKS as u32) };
        // A chunk is 4 of k of one column (each column's 32 of k are a 128-byte row), so this
        // thread's chunks are the same columns in every slice of the tile: their scales are read
        // once a tile and kept in registers (read every slice, they made the splitters the
        // kernel's bottleneck).
        let ranges = unsafe { ranges_after(maps, &args, tile.member) };
        let scales: [f32; MAX_SPLIT_CHUNKS] = core::array::from_fn(|i| {
            let chunk = thread + SPLITTERS * i as u32;
            ranges::pow2(unsafe { ranges.column(tile.col * BN + chunk / (BK / 4)) })
        });
        // Columns already in range (most data) cost no multiplication: the splitters are the
        // kernel's critical path.
        if scales.iter().all(|&s| s == 1.0) {
            split_slices::<BN, false>(stages, ring, thread, slices, scales);
        } else {
            split_slices::<BN, true>(stages, ring, thread, slices, scales);
        }
    }

    #[inline(always)]
    unsafe fn consume(
        self,
        args: GemmArgs<f32>,
        maps: *const TensorMap,
        c: &mut Consumer,
        work: Work,
    ) {
        let (tile, slices) = (work.tile, work.slices);
        let f = Fragments::<BN, SPLIT>::of(c);
        let mut acc = Accumulator::<R>::zero();
        let mut sum = [0f32; R];
        // 3xTF32: this thread's two rows of A, scaled by their ranges as they are split, and
        // every element unscaled before the epilogue.
        let (ranges, rows) = if SPLIT {
            let ranges = unsafe { ranges_after(maps, &args, tile.member) };
            let row = tile.row * BM + 32 * f.a_box + f.m_in_box;
            (Some(ranges), unsafe {
                [ranges.row(row), ranges.row(row + 1)]
            })
        } else {
            (None, [0, 0])
        };
        if PIPELINED {
            consume_pipelined(c, f, slices, &mut acc);
        } else {
            consume_slices(c, f, slices, &mut acc, &mut sum, rows.map(ranges::pow2));
        }
        if let Some(ranges) = ranges {
            unsafe { unscale_by_ranges(&mut sum, ranges, rows, tile, f) };
        }
        let values = if SPLIT { &sum } else { acc.get() };
        args.split_on_beta(|args| unsafe { store(args, values, tile, f) });
    }
}

/// 3xTF32's splitting of B in `slices` stages from the ring's current one: each 16-byte chunk
/// of this thread's (times its column's scale, if `SCALED`) into its `big` part, in place, and
/// its `small` part beside it; then the proxy fence and the stage's *ready* arrival.
// ANCHOR: split_b
#[inline(always)]
fn split_slices<const BN: u32, const SCALED: bool>(
    stages: Stages,
    ring: &mut Ring,
    thread: u32,
    slices: u32,
    scales: [f32; MAX_SPLIT_CHUNKS],
) {
    for _ in 0..slices {
        let s = ring.stage;
        stages.full(s).wait(ring.phase);
        let stage = stages.stage(s);
        let (b, small) = (b_tile(stage, BN, false), b_tile(stage, BN, true));
        for (i, scale) in scales.iter().enumerate() {
            let chunk = thread + SPLITTERS * i as u32;
            if chunk < BN * BK / 4 {
                let x = b.load4(4 * chunk);
                let x = if SCALED { x.map(|x| x * scale) } else { x };
                let parts = x.map(Tf32::split);
                b.store4(4 * chunk, parts.map(|p| p.0.to_f32()));
                small.store4(4 * chunk, parts.map(|p| f32::from_bits(p.1.to_bits())));
            }
        }
        wgmma::fence_proxy_async();
        stages.barrier(2, s).arrive();
        ring.advance();
    }
}
// ANCHOR_END: split_b

/// The tile row (0..32, in A's box of the warp) that fragment row `g` (0..8) of a warp in
/// half `half` (0, 1) of its box stands for; fragment row `g + 8` is the next one.
///
/// A's box in shared memory is 32 rows of k, each 128 bytes of m, 16-byte chunk `c` of row `k`
/// stored at chunk `c ^ (k mod 8)`. Lane (g, t) loads rows `m, m + 1` of k `t` (and of `t + 4`)
/// with one 8-byte load; a half-warp's 16 loads are served together. Lanes `g = 0..3` of a
/// half take chunk `X` (g = 0, 1) and `X ^ 4` (g = 2, 3) of their k row, so the four k rows
/// `t = 0..3` XOR the pair into four disjoint pairs: all 8 chunks, all 32 banks. The half with
/// `g = 4..7` does the same with `X + 1`, and the warp's other half of the box with `X + 2`.
#[inline(always)]
const fn fragment_row(g: u32, half: u32) -> u32 {
    let chunk = (2 * half + g / 4) ^ (4 * ((g / 2) % 2));
    4 * chunk + 2 * (g % 2)
}

/// The swizzled element index in a box of 128-byte rows of (row `k`, column `m`).
#[inline(always)]
const fn swizzled(k: u32, m: u32) -> u32 {
    k * 32 + 4 * ((m / 4) ^ (k % 8)) + m % 4
}

/// What a consumer thread reads of a stage: its warp's A box, the row of it this lane's fragment
/// rows stand for, and the lane's `t`.
#[derive(Clone, Copy)]
struct Fragments<const BN: u32, const SPLIT: bool> {
    box_at: u32,
    m_in_box: u32,
    t: u32,
    /// The warp's box (its 32 rows of the tile: `32 · a_box` onwards).
    a_box: u32,
}

impl<const BN: u32, const SPLIT: bool> Fragments<BN, SPLIT> {
    /// Consumer thread `c.thread` of warpgroup `c.warpgroup` (rows 64·that..+64 of the tile):
    /// its warp takes half `warp % 2` of A's box `warp / 2`.
    #[inline(always)]
    fn of(c: &Consumer) -> Self {
        let thread = 128 * c.warpgroup + c.thread;
        let (warp, lane) = (thread / WARP_SIZE, thread % WARP_SIZE);
        let (g, t) = (lane / 4, lane % 4);
        let (a_box, half) = (warp / 2, warp % 2);
        Fragments {
            box_at: a_box * A_BOX_ROWS * BK,
            m_in_box: fragment_row(g, half),
            t,
            a_box,
        }
    }

    /// Waits until the consumer's current stage holds its slice (3xTF32: split).
    #[inline(always)]
    fn wait_for_stage(c: &Consumer) {
        let s = c.ring.stage;
        if SPLIT {
            c.stages.barrier(2, s).wait(c.ring.phase);
        } else {
            c.wait_full();
        }
    }

    /// This lane's A values of k-step `step` (k = 8·step..+8) of the stage at pool byte
    /// `stage`: rows m, m+1 of k t and of k t+4, two 8-byte loads, in the order of the fragment
    /// registers.
    #[inline(always)]
    fn load_step(self, stage: u32, step: u32) -> [f32; 4] {
        let (a, k) = (a_tile(stage), 8 * step);
        let low = a.load2(self.box_at + swizzled(k + self.t, self.m_in_box));
        let high = a.load2(self.box_at + swizzled(k + self.t + 4, self.m_in_box));
        [low[0], low[1], high[0], high[1]]
    }

    /// The descriptor of B (or, `small`, of its small parts) in the stage: K-major, 128-byte
    /// swizzle, 8 rows of 128 bytes to the next 8.
    #[inline(always)]
    fn b_desc(stage: u32, small: bool) -> Descriptor {
        let b = b_tile(stage, BN, small).shared_address(0);
        Descriptor::k_major(b, Swizzle::B128, 16, 8 * BK * 4)
    }
}

/// The consumers' loop, one slice at a time: load the slice's A fragments, issue its `wgmma`s
/// as one group, wait for it, release the stage. Simple, and the only order 3xTF32 allows (it
/// reads each slice's sum); the other consumer warpgroup keeps the tensor cores busy while this
/// one waits and loads.
#[inline(always)]
#[allow(clippy::needless_range_loop)]
fn consume_slices<const R: usize, const BN: u32, const SPLIT: bool>(
    c: &mut Consumer,
    f: Fragments<BN, SPLIT>,
    slices: u32,
    acc: &mut Accumulator<R>,
    sum: &mut [f32; R],
    row_scales: [f32; 2],
) where
    Accumulator<R>: Tf32WgmmaRegisters,
{
    // ANCHOR: core_loop
    for slice in 0..slices {
        Fragments::<BN, SPLIT>::wait_for_stage(c);
        let s = c.ring.stage;
        let stage = c.stages.stage(s);
        let values: [[f32; 4]; 4] = core::array::from_fn(|step| f.load_step(stage, step as u32));
        // TF32: the f32 bits as they are (the tensor cores truncate). 3xTF32: the big and small
        // parts, split here, before the `wgmma.fence`: registers written after it make ptxas
        // insert another fence before the `wgmma` that reads them.
        let (big, small): ([FragA<Tf32, 4>; 4], [FragA<Tf32, 4>; 4]) = if SPLIT {
            // Fragment values 0 and 2 are row m, 1 and 3 row m + 1 ([`Fragments::load_step`]).
            let [low, high] = row_scales;
            let scaled = values.map(|v| [v[0] * low, v[1] * high, v[2] * low, v[3] * high]);
            let parts = scaled.map(|v| v.map(Tf32::split));
            (
                parts.map(|p| FragA(p.map(|x| x.0))),
                parts.map(|p| FragA(p.map(|x| x.1))),
            )
        } else {
            let truncated = values.map(|v| FragA(v.map(Tf32::truncate)));
            (truncated, truncated)
        };
        let b = Fragments::<BN, SPLIT>::b_desc(stage, false);
        let b_small = Fragments::<BN, SPLIT>::b_desc(stage, true);
        wgmma::fence();
        for step in 0..4 {
            let at = 32 * step as u32;
            if SPLIT {
                acc.mma_with_a_registers(&small[step], b.advanced(at), step > 0);
                acc.mma_with_a_registers(&big[step], b_small.advanced(at), true);
                acc.mma_with_a_registers(&big[step], b.advanced(at), true);
            } else {
                let first = slice == 0 && step == 0;
                acc.mma_with_a_registers(&big[step], b.advanced(at), !first);
            }
        }
        wgmma::commit_group();
        wgmma::wait_group::<0>();
        // Nothing may read the accumulators before the wait.
        acc.fence_registers();
        c.finish_loads();
        c.release(s);
        if SPLIT {
            let step_sum = acc.get();
            for i in 0..R {
                sum[i] += step_sum[i];
            }
        }
        c.ring.advance();
    }
    // ANCHOR_END: core_loop
}

/// The consumers' loop with `wgmma`s in flight, CUTLASS's order for A in registers: every
/// k-step is a group of one `wgmma`, and up to two groups run while the warp loads the next
/// k-step's fragment (the next slice's first, after waiting for its stage) and issues it. The
/// tensor cores read a fragment's registers until its group retires, so each of the four
/// k-steps of a slice has a fragment buffer of its own: buffer j is rewritten three groups after
/// it was issued, when the wait has retired it. (With one buffer per slice, rewritten while its
/// group ran, the H100 computed garbage; the emulator reports it.) A stage is released at the
/// second k-step of the next slice, when the wait has retired the last group that read it.
#[inline(always)]
fn consume_pipelined<const R: usize, const BN: u32, const SPLIT: bool>(
    c: &mut Consumer,
    f: Fragments<BN, SPLIT>,
    slices: u32,
    acc: &mut Accumulator<R>,
) where
    Accumulator<R>: Tf32WgmmaRegisters,
{
    let mut frags = [FragA([Tf32::default(); 4]); 4];
    Fragments::<BN, SPLIT>::wait_for_stage(c);
    frags[0] = FragA(
        f.load_step(c.stages.stage(c.ring.stage), 0)
            .map(Tf32::truncate),
    );
    let mut previous = c.ring.stage;
    for slice in 0..slices {
        let s = c.ring.stage;
        let stage = c.stages.stage(s);
        let b = Fragments::<BN, SPLIT>::b_desc(stage, false);
        for step in 0..4u32 {
            if step < 3 {
                frags[step as usize + 1] = FragA(f.load_step(stage, step + 1).map(Tf32::truncate));
            } else if slice + 1 < slices {
                c.ring.advance();
                Fragments::<BN, SPLIT>::wait_for_stage(c);
                let next = c.stages.stage(c.ring.stage);
                frags[0] = FragA(f.load_step(next, 0).map(Tf32::truncate));
            }
            wgmma::fence();
            let first = slice == 0 && step == 0;
            acc.mma_with_a_registers(&frags[step as usize], b.advanced(32 * step), !first);
            wgmma::commit_group();
            wgmma::wait_group::<2>();
            if step == 1 && slice > 0 {
                c.finish_loads();
                c.release(previous);
            }
        }
        previous = s;
    }
    wgmma::wait_group::<0>();
    acc.fence_registers();
    c.finish_loads();
    c.release(previous);
    c.ring.advance();
}

/// The epilogue of one consumer thread: its accumulators (or 3xTF32's sums) into C.
///
/// # Safety
/// `args` describes valid matrices.
// The epilogue indexes the accumulators with the loop counter: unrolled, each index is a
// constant, which is what keeps them in registers.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
unsafe fn store<const R: usize, const BN: u32, const SPLIT: bool>(
    args: &GemmArgs<f32>,
    values: &[f32; R],
    tile: Tile,
    f: Fragments<BN, SPLIT>,
) {
    let (row0, col0) = (tile.row * BM + 32 * f.a_box, tile.col * BN);
    let t = f.t;
    // Register 4j + e holds row m, column 8j + 2t + e; register 4j + 2 + e row m + 1: two
    // adjacent elements of a column of C, one 8-byte store.
    let row = row0 + f.m_in_box;
    let pairs = args.c_pairs_ok() && row + 1 < args.m;
    // Two flat loops, one chosen per tile, each small enough to be unrolled whole: every
    // index is then a constant and the accumulators stay in registers.
    if pairs {
        for p in 0..R / 2 {
            let (j, e) = (p / 2, p % 2);
            let col = col0 + 8 * j as u32 + 2 * t + e as u32;
            if col < args.n {
                let pair = [values[4 * j + e], values[4 * j + 2 + e]];
                unsafe { args.store_c2(args.c_at(row, col), pair) };
            }
        }
    } else {
        for i in 0..R {
            let r = row + ((i as u32 >> 1) & 1);
            let col = col0 + 8 * (i as u32 >> 2) + 2 * t + (i as u32 & 1);
            if r < args.m && col < args.n {
                unsafe { args.store_c(args.c_at(r, col), values[i]) };
            }
        }
    }
}

/// The ranges pass's words ([`ranges::max_abs_bits`]) of a batch's member `member`: the pass
/// writes m + n words per member, one member after the other, at the address the host writes
/// after A's and B's tensor maps.
///
/// # Safety
/// A 3xTF32 launch: the host wrote the address there.
#[inline(always)]
unsafe fn ranges_after(maps: *const TensorMap, args: &GemmArgs<f32>, member: u32) -> Ranges {
    let words = unsafe { *(maps.wrapping_add(2) as *const *const f32) };
    let words = words.wrapping_add(member as usize * (args.m + args.n) as usize);
    Ranges::new(words, args.m, args.n)
}

/// Divides each of this thread's sums by its row's and column's powers of two: register
/// `4j + e` is row m, column `8j + 2t + e`; `4j + 2 + e` row m + 1 ([`store`]).
///
/// # Safety
/// As [`Ranges::column`].
#[inline(always)]
#[allow(clippy::needless_range_loop)]
unsafe fn unscale_by_ranges<const R: usize, const BN: u32, const SPLIT: bool>(
    sum: &mut [f32; R],
    ranges: Ranges,
    rows: [i32; 2],
    tile: Tile,
    f: Fragments<BN, SPLIT>,
) {
    let col0 = tile.col * BN + 2 * f.t;
    for p in 0..R / 2 {
        let (j, e) = (p / 2, p % 2);
        let t = unsafe { ranges.column(col0 + 8 * j as u32 + e as u32) };
        sum[4 * j + e] = ranges::unscale(sum[4 * j + e], rows[0] + t);
        sum[4 * j + 2 + e] = ranges::unscale(sum[4 * j + 2 + e], rows[1] + t);
    }
}

/// The entry point's body.
///
/// # Safety
/// `args` must describe valid device matrices, `maps` point to A's and B's tensor maps in
/// global memory (boxes 32×32 of A, 32×BN of B, 128-byte swizzle); launch with [`geometry`]
/// of the same parameters and a grid of at most one block per tile.
#[inline(always)]
pub unsafe fn gemm<
    const R: usize,
    const BN: u32,
    const STAGES: u32,
    const PIPELINED: bool,
    const SPLIT: bool,
    const RASTER: u32,
    const CLUSTER_M: u32,
    const BATCH: bool,
>(
    args: GemmArgs<f32>,
    maps: *const TensorMap,
) where
    Accumulator<R>: Tf32WgmmaRegisters,
{
    // A tile of BN columns is one `wgmma` of N = BN per consumer warpgroup: R = BN/2 registers.
    // 3xTF32 reads every slice's sum, so it waits for each slice.
    const { assert!(BN == 2 * R as u32 && BN <= 256 && STAGES >= 2 && !(SPLIT && PIPELINED)) };
    let kernel = Tf32Pipeline::<R, BN, STAGES, PIPELINED, SPLIT, RASTER, CLUSTER_M, BATCH>;
    unsafe { pipeline::run(kernel, args, maps) }
}
