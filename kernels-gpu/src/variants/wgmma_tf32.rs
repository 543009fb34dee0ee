//! `wgmma-tf32` and `wgmma-3xtf32`: Hopper's GEMM pipeline. The TMA engine copies tiles of A
//! and B into a ring of shared-memory stages, mbarriers hand each stage from the *producer*
//! warpgroup to two *consumer* warpgroups and back, and the consumers multiply with
//! `wgmma.mma_async` over a persistent schedule of output tiles. cuBLAS's TF32 kernel on the
//! H100 is this design (`sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x256x32_
//! warpgroupsize2x1x1…`: 384 threads, 128×256×32 tiles, one block per SM).
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
//!   ([`Ring`]). Nobody else waits: the producer runs up to `STAGES` slices ahead.
//! - **Warp specialisation and `setmaxnreg`.** 384 threads: warpgroup 0 produces, 1 and 2
//!   consume (rows 0–63 and 64–127 of the tile). A block gets 168 registers per thread at
//!   launch (`launch_bounds(384, 1)`); the producer gives most back (`setmaxnreg.dec 40`) and
//!   the consumers take them (`setmaxnreg.inc 232`): a 64×256 f32 accumulator is 128 registers
//!   per thread.
//! - **A from registers.** TF32 `wgmma` operands in shared memory must be K-major, and
//!   column-major A is M-major. A's fragments go through registers instead
//!   ([`Tf32Wgmma::mma_with_a_registers`]), loaded by the consumers with `ld.shared.v2`: the
//!   fragment table wants rows `g` and `g + 8` of k `t` in registers 0 and 1, and a row of the
//!   tile may stand for any row of C as long as the epilogue writes it there, so fragment rows
//!   `g`, `g + 8` are given two *adjacent* m (one 8-byte load) chosen so that each half-warp's
//!   16 loads hit 32 different banks through the 128-byte swizzle ([`fragment_row`]). B (K-major
//!   as it lies) is read by the tensor cores through its descriptor, as in the basic kernel.
//! - **`wgmma`s in flight, one fragment buffer per group** ([`consume_pipelined`], CUTLASS's
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
//! - **A persistent grid.** One block per SM (the host caps the grid); block `b` computes
//!   tiles `b`, `b + grid`, … in the grouped order of [`rasterise_in_groups`], so the blocks
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
//! ([`split_b`]), publish both to the async proxy (`fence.proxy.async`) and arrive on a third
//! barrier, *ready*, which the consumers wait for instead of *full*. As in chapter 1, each slice's
//! twelve `wgmma`s (4 k-steps × 3 products) start from zero and the slice's sum is added to the
//! running sum with `FADD`: the tensor cores' accumulation truncates, and over a whole k loop
//! the truncations of a large accumulator add up to a biased error. That needs a second
//! accumulator, so the tile is 128×128.
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
//! cuBLAS SGEMM with relative error 3.2·10⁻⁷ (SGEMM 1.1·10⁻⁶); 116–121 at 8192³, 2.3×.
use crate::device::mbarrier::{fence_mbarrier_init, MBarrier};
use crate::device::mma::{FragA, Tf32};
use crate::device::tma::{self, Swizzle, TensorMap};
use crate::device::wgmma::{self, Accumulator, Descriptor, Tf32Wgmma};
use crate::device::{
    block_idx_x, grid_dim_x, pool_padding_to, sync_threads, thread_idx_x, Shared, WARP_SIZE,
};
use crate::gemm::{rasterise_in_groups, GemmArgs, Geometry};

/// Rows of the block tile: two consumer warpgroups of 64.
pub const BM: u32 = 128;
/// A slice of k: 32 f32, one 128-byte swizzled row.
pub const BK: u32 = 32;
/// Rows of A per TMA box: a 128-byte swizzled row holds 32 f32 of m.
const A_BOX_ROWS: u32 = 32;
/// Producer warpgroup and two consumer warpgroups.
pub const THREADS: u32 = 384;
const CONSUMER_THREADS: u32 = 256;
/// The producer's three warps that split B in 3xTF32.
const SPLITTERS: u32 = 96;
const ATOM: u32 = Swizzle::B128.atom();
/// Registers after `setmaxnreg`: 128·40 + 256·232 = 64 512 of the SM's 65 536.
const PRODUCER_REGISTERS: u32 = 40;
const CONSUMER_REGISTERS: u32 = 232;

/// The bytes of a stage: A (BM×BK), B (BK×BN), and B's small parts in 3xTF32.
pub const fn stage_bytes(bn: u32, split: bool) -> u32 {
    (BM + bn * if split { 2 } else { 1 }) * BK * 4
}

/// The bytes the TMA copies deliver into one stage (what the *full* phase expects).
const fn copied_bytes(bn: u32) -> u32 {
    (BM + bn) * BK * 4
}

pub fn geometry<const BN: u32, const STAGES: u32, const SPLIT: bool>(
    m: u32,
    n: u32,
    _k: u32,
    _element_bytes: u32,
) -> Geometry {
    Geometry {
        // One block per tile: the host caps it at the number of SMs (persistent).
        grid: (m.div_ceil(BM) * n.div_ceil(BN), 1),
        block: (THREADS, 1),
        // The stages, 3 mbarriers per stage, and the room to align the stages to 1024 bytes.
        shared_bytes: STAGES * stage_bytes(BN, SPLIT) + 3 * STAGES * MBarrier::BYTES + ATOM - 16,
    }
}

/// A position in the ring of stages: the stage, and the parity of the phase its barriers are
/// in for this pass of the ring (it flips each time the ring wraps). CUTLASS's `PipelineState`.
#[derive(Clone, Copy)]
struct Ring<const STAGES: u32> {
    stage: u32,
    phase: u32,
}

impl<const STAGES: u32> Ring<STAGES> {
    fn start() -> Self {
        Ring { stage: 0, phase: 0 }
    }

    #[inline(always)]
    fn advance(&mut self) {
        self.stage += 1;
        if self.stage == STAGES {
            self.stage = 0;
            self.phase ^= 1;
        }
    }
}

/// Where everything lies in the pool.
#[derive(Clone, Copy)]
struct Layout<const BN: u32, const STAGES: u32, const SPLIT: bool> {
    /// Byte offset of stage 0 (aligned to 1024 in the shared window).
    base: u32,
    /// The tile order: groups of this many tile-rows ([`rasterise_in_groups`]).
    raster_group: u32,
}

impl<const BN: u32, const STAGES: u32, const SPLIT: bool> Layout<BN, STAGES, SPLIT> {
    #[inline(always)]
    fn new(raster_group: u32) -> Self {
        Layout {
            base: pool_padding_to(ATOM),
            raster_group,
        }
    }

    /// The (tile-row, tile-column) of C the `tile`-th tile of the schedule is.
    #[inline(always)]
    fn tile(self, tile: u32, tiles_m: u32, tiles_n: u32) -> (u32, u32) {
        rasterise_in_groups(tile, tiles_m, tiles_n, self.raster_group)
    }

    /// A's box `b` (rows `32b..32b+32` of the tile) in `stage`: 32 rows of k, 128 bytes each.
    #[inline(always)]
    fn a_box(self, stage: u32, b: u32) -> Shared<f32> {
        let at = self.base + stage * stage_bytes(BN, SPLIT) + b * A_BOX_ROWS * BK * 4;
        Shared::at(at, A_BOX_ROWS * BK)
    }

    /// All of A in `stage` (the four boxes).
    #[inline(always)]
    fn a(self, stage: u32) -> Shared<f32> {
        Shared::at(self.base + stage * stage_bytes(BN, SPLIT), BM * BK)
    }

    /// B in `stage`: BN rows (columns of B) of 32 k, 128 bytes each.
    #[inline(always)]
    fn b(self, stage: u32) -> Shared<f32> {
        Shared::at(
            self.base + stage * stage_bytes(BN, SPLIT) + BM * BK * 4,
            BN * BK,
        )
    }

    /// B's small parts in `stage` (3xTF32), laid out as B.
    #[inline(always)]
    fn b_small(self, stage: u32) -> Shared<f32> {
        Shared::at(
            self.base + stage * stage_bytes(BN, SPLIT) + (BM + BN) * BK * 4,
            BN * BK,
        )
    }

    #[inline(always)]
    fn barrier(self, which: u32, stage: u32) -> MBarrier {
        MBarrier::at(self.base + STAGES * stage_bytes(BN, SPLIT) + (which * STAGES + stage) * 8)
    }

    /// Filled by the TMA copies.
    #[inline(always)]
    fn full(self, stage: u32) -> MBarrier {
        self.barrier(0, stage)
    }

    /// Released by the consumers.
    #[inline(always)]
    fn empty(self, stage: u32) -> MBarrier {
        self.barrier(1, stage)
    }

    /// B split (3xTF32).
    #[inline(always)]
    fn ready(self, stage: u32) -> MBarrier {
        self.barrier(2, stage)
    }
}

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
>(
    args: GemmArgs<f32>,
    maps: *const TensorMap,
) where
    Accumulator<R>: Tf32Wgmma,
{
    // A tile of BN columns is one `wgmma` of N = BN per consumer warpgroup: R = BN/2 registers.
    // 3xTF32 reads every slice's sum, so it waits for each slice.
    const { assert!(BN == 2 * R as u32 && BN <= 256 && STAGES >= 2 && !(SPLIT && PIPELINED)) };
    let layout = Layout::<BN, STAGES, SPLIT>::new(RASTER);
    let tid = thread_idx_x();
    let warpgroup = tid / 128;
    if tid == 0 {
        for s in 0..STAGES {
            layout.full(s).init(1);
            layout.empty(s).init(CONSUMER_THREADS);
            if SPLIT {
                layout.ready(s).init(SPLITTERS);
            }
        }
        fence_mbarrier_init();
    }
    sync_threads();

    let (tiles_m, tiles_n) = (args.m.div_ceil(BM), args.n.div_ceil(BN));
    let tiles = tiles_m * tiles_n;
    let slices = args.k.div_ceil(BK);
    if warpgroup == 0 {
        wgmma::setmaxnreg_dec::<PRODUCER_REGISTERS>();
        if tid == 0 {
            unsafe { produce(layout, maps, tiles, tiles_m, tiles_n, slices) };
        } else if SPLIT && tid >= WARP_SIZE {
            split_b(layout, tid - WARP_SIZE, tiles, slices);
        }
    } else {
        wgmma::setmaxnreg_inc::<CONSUMER_REGISTERS>();
        unsafe {
            consume::<R, BN, STAGES, PIPELINED, SPLIT>(
                args,
                layout,
                tid - 128,
                tiles,
                tiles_m,
                tiles_n,
                slices,
            )
        };
    }
}

/// The producer's one thread: for every slice of every tile of this block, wait until the
/// stage is free, announce its bytes, start its copies.
#[inline(always)]
unsafe fn produce<const BN: u32, const STAGES: u32, const SPLIT: bool>(
    layout: Layout<BN, STAGES, SPLIT>,
    maps: *const TensorMap,
    tiles: u32,
    tiles_m: u32,
    tiles_n: u32,
    slices: u32,
) {
    let (a_map, b_map) = (maps, maps.wrapping_add(1));
    unsafe {
        tma::prefetch(a_map);
        tma::prefetch(b_map);
    }
    let mut ring = Ring::<STAGES>::start();
    let mut tile = block_idx_x();
    while tile < tiles {
        let (tile_m, tile_n) = layout.tile(tile, tiles_m, tiles_n);
        let (row0, col0) = ((tile_m * BM) as i32, (tile_n * BN) as i32);
        for slice in 0..slices {
            let s = ring.stage;
            // The consumers' phase of this pass; on the first pass the "previous" phase counts
            // as complete, so the wait falls through.
            layout.empty(s).wait(ring.phase ^ 1);
            layout.full(s).arrive_expect_tx(copied_bytes(BN));
            let k0 = (slice * BK) as i32;
            for b in 0..BM / A_BOX_ROWS {
                let rows = row0 + (b * A_BOX_ROWS) as i32;
                unsafe { tma::load_tile_2d(a_map, layout.a_box(s, b), rows, k0, layout.full(s)) };
            }
            unsafe { tma::load_tile_2d(b_map, layout.b(s), k0, col0, layout.full(s)) };
            ring.advance();
        }
        tile += grid_dim_x();
    }
}

/// 3xTF32: the producer's other three warps split each stage's B into its rounded TF32 `big`
/// part, in place, and `small = B − big` beside it, then publish both to the async proxy.
/// Every 16-byte chunk is loaded once and stored twice, by consecutive threads (no bank
/// conflict); the layout is B's, so the descriptors of the two halves differ only in where
/// they start.
#[inline(always)]
fn split_b<const BN: u32, const STAGES: u32, const SPLIT: bool>(
    layout: Layout<BN, STAGES, SPLIT>,
    thread: u32,
    tiles: u32,
    slices: u32,
) {
    let mut ring = Ring::<STAGES>::start();
    let mut tile = block_idx_x();
    while tile < tiles {
        for _ in 0..slices {
            let s = ring.stage;
            layout.full(s).wait(ring.phase);
            let (b, small) = (layout.b(s), layout.b_small(s));
            let mut chunk = thread;
            while chunk < BN * BK / 4 {
                let x = b.load4(4 * chunk);
                let parts = x.map(Tf32::split);
                b.store4(4 * chunk, parts.map(|p| p.0.to_f32()));
                small.store4(4 * chunk, parts.map(|p| f32::from_bits(p.1.to_bits())));
                chunk += SPLITTERS;
            }
            wgmma::fence_proxy_async();
            layout.ready(s).arrive();
            ring.advance();
        }
        tile += grid_dim_x();
    }
}

/// A consumer thread's place in the pipeline, and what it reads from a stage.
struct Consumer<const BN: u32, const STAGES: u32, const SPLIT: bool> {
    layout: Layout<BN, STAGES, SPLIT>,
    /// Element offset of this warp's A box in a stage, the row of it this lane's fragment rows
    /// stand for, and the lane's `t`.
    box_at: u32,
    m_in_box: u32,
    t: u32,
    ring: Ring<STAGES>,
}

impl<const BN: u32, const STAGES: u32, const SPLIT: bool> Consumer<BN, STAGES, SPLIT> {
    /// Waits until the current stage of the ring holds its slice (3xTF32: split).
    #[inline(always)]
    fn wait_for_stage(&self) {
        let (layout, s) = (self.layout, self.ring.stage);
        if SPLIT {
            layout.ready(s).wait(self.ring.phase);
        } else {
            layout.full(s).wait(self.ring.phase);
        }
    }

    /// This lane's A values of k-step `step` (k = 8·step..+8) of `stage`: rows m, m+1 of k t and
    /// of k t+4, two 8-byte loads, in the order of the fragment registers.
    #[inline(always)]
    fn load_step(&self, stage: u32, step: u32) -> [f32; 4] {
        let (a, k) = (self.layout.a(stage), 8 * step);
        let low = a.load2(self.box_at + swizzled(k + self.t, self.m_in_box));
        let high = a.load2(self.box_at + swizzled(k + self.t + 4, self.m_in_box));
        [low[0], low[1], high[0], high[1]]
    }

    /// The descriptor of B (or, `small`, of its small parts) in `stage`: K-major, 128-byte
    /// swizzle, 8 rows of 128 bytes to the next 8.
    #[inline(always)]
    fn b_desc(&self, stage: u32, small: bool) -> Descriptor {
        let b = if small {
            self.layout.b_small(stage)
        } else {
            self.layout.b(stage)
        };
        Descriptor::k_major(b.shared_address(0), Swizzle::B128, 16, 8 * BK * 4)
    }
}

/// The consumers' loop, one slice at a time: load the slice's A fragments, issue its `wgmma`s
/// as one group, wait for it, release the stage. Simple, and the only order 3xTF32 allows (it
/// reads each slice's sum); the other consumer warpgroup keeps the tensor cores busy while this
/// one waits and loads.
#[inline(always)]
#[allow(clippy::needless_range_loop)]
fn consume_slices<const R: usize, const BN: u32, const STAGES: u32, const SPLIT: bool>(
    c: &mut Consumer<BN, STAGES, SPLIT>,
    slices: u32,
    acc: &mut Accumulator<R>,
    sum: &mut [f32; R],
) where
    Accumulator<R>: Tf32Wgmma,
{
    for slice in 0..slices {
        c.wait_for_stage();
        let s = c.ring.stage;
        let values: [[f32; 4]; 4] = core::array::from_fn(|step| c.load_step(s, step as u32));
        // TF32: the f32 bits as they are (the tensor cores truncate). 3xTF32: the big and small
        // parts, split here, before the `wgmma.fence`: registers written after it make ptxas
        // insert another fence before the `wgmma` that reads them.
        let (big, small): ([FragA<Tf32, 4>; 4], [FragA<Tf32, 4>; 4]) = if SPLIT {
            let parts = values.map(|v| v.map(Tf32::split));
            (
                parts.map(|p| FragA(p.map(|x| x.0))),
                parts.map(|p| FragA(p.map(|x| x.1))),
            )
        } else {
            let truncated = values.map(|v| FragA(v.map(Tf32::truncate)));
            (truncated, truncated)
        };
        let (b, b_small) = (c.b_desc(s, false), c.b_desc(s, true));
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
        c.layout.empty(s).arrive();
        if SPLIT {
            let step_sum = acc.get();
            for i in 0..R {
                sum[i] += step_sum[i];
            }
        }
        c.ring.advance();
    }
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
fn consume_pipelined<const R: usize, const BN: u32, const STAGES: u32, const SPLIT: bool>(
    c: &mut Consumer<BN, STAGES, SPLIT>,
    slices: u32,
    acc: &mut Accumulator<R>,
) where
    Accumulator<R>: Tf32Wgmma,
{
    let mut frags = [FragA([Tf32::default(); 4]); 4];
    c.wait_for_stage();
    frags[0] = FragA(c.load_step(c.ring.stage, 0).map(Tf32::truncate));
    let mut previous = c.ring.stage;
    for slice in 0..slices {
        let s = c.ring.stage;
        let b = c.b_desc(s, false);
        for step in 0..4u32 {
            if step < 3 {
                frags[step as usize + 1] = FragA(c.load_step(s, step + 1).map(Tf32::truncate));
            } else if slice + 1 < slices {
                c.ring.advance();
                c.wait_for_stage();
                frags[0] = FragA(c.load_step(c.ring.stage, 0).map(Tf32::truncate));
            }
            wgmma::fence();
            let first = slice == 0 && step == 0;
            acc.mma_with_a_registers(&frags[step as usize], b.advanced(32 * step), !first);
            wgmma::commit_group();
            wgmma::wait_group::<2>();
            if step == 1 && slice > 0 {
                c.layout.empty(previous).arrive();
            }
        }
        previous = s;
    }
    wgmma::wait_group::<0>();
    acc.fence_registers();
    c.layout.empty(previous).arrive();
    c.ring.advance();
}

/// A consumer thread (`thread` 0..256: warpgroup `thread / 128` takes rows 64·that..+64 of
/// each tile).
// The epilogue indexes the accumulators with the loop counter: unrolled, each index is a
// constant, which is what keeps them in registers.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
unsafe fn consume<
    const R: usize,
    const BN: u32,
    const STAGES: u32,
    const PIPELINED: bool,
    const SPLIT: bool,
>(
    args: GemmArgs<f32>,
    layout: Layout<BN, STAGES, SPLIT>,
    thread: u32,
    tiles: u32,
    tiles_m: u32,
    tiles_n: u32,
    slices: u32,
) where
    Accumulator<R>: Tf32Wgmma,
{
    let (warp, lane) = (thread / WARP_SIZE, thread % WARP_SIZE);
    let (g, t) = (lane / 4, lane % 4);
    // This warp's 16 rows of the tile: half `warp % 2` of A's box `warp / 2`.
    let (a_box, half) = (warp / 2, warp % 2);
    let m_in_box = fragment_row(g, half);
    let mut consumer = Consumer {
        layout,
        box_at: a_box * A_BOX_ROWS * BK,
        m_in_box,
        t,
        ring: Ring::<STAGES>::start(),
    };
    let mut tile = block_idx_x();
    while tile < tiles {
        let mut acc = Accumulator::<R>::zero();
        let mut sum = [0f32; R];
        if PIPELINED {
            consume_pipelined(&mut consumer, slices, &mut acc);
        } else {
            consume_slices(&mut consumer, slices, &mut acc, &mut sum);
        }
        let (tile_m, tile_n) = layout.tile(tile, tiles_m, tiles_n);
        let (row0, col0) = (tile_m * BM + 32 * a_box, tile_n * BN);
        let values = if SPLIT { &sum } else { acc.get() };
        // Register 4j + e holds row m, column 8j + 2t + e; register 4j + 2 + e row m + 1: two
        // adjacent elements of a column of C, one 8-byte store.
        let row = row0 + m_in_box;
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
        tile += grid_dim_x();
    }
}
