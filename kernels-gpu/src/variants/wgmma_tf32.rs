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
//! - **A persistent grid.** One block per SM (the host caps the grid); block `b` computes
//!   tiles `b`, `b + grid`, … in the grouped order of [`rasterise`], so the blocks working at
//!   the same time share panels of A and B in L2. The producer fills the next tile's stages
//!   while the consumers finish the last one.
//! - **The epilogue** applies α and β from the accumulator registers (β = 0 does not read C)
//!   and skips what lies past m or n.
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
//! Measured: see `docs/perf-notes.md` ("tensor cores, chapter 2").
use crate::device::mbarrier::{fence_mbarrier_init, MBarrier};
use crate::device::mma::{FragA, Tf32};
use crate::device::tma::{self, Swizzle, TensorMap};
use crate::device::wgmma::{self, Accumulator, Descriptor, Tf32Wgmma};
use crate::device::{
    block_idx_x, grid_dim_x, pool_padding_to, sync_threads, thread_idx_x, Shared, WARP_SIZE,
};
use crate::gemm::{rasterise, GemmArgs, Geometry};

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
}

impl<const BN: u32, const STAGES: u32, const SPLIT: bool> Layout<BN, STAGES, SPLIT> {
    #[inline(always)]
    fn new() -> Self {
        Layout {
            base: pool_padding_to(ATOM),
        }
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
        Shared::at(self.base + stage * stage_bytes(BN, SPLIT) + BM * BK * 4, BN * BK)
    }

    /// B's small parts in `stage` (3xTF32), laid out as B.
    #[inline(always)]
    fn b_small(self, stage: u32) -> Shared<f32> {
        Shared::at(self.base + stage * stage_bytes(BN, SPLIT) + (BM + BN) * BK * 4, BN * BK)
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
pub unsafe fn gemm<const R: usize, const BN: u32, const STAGES: u32, const SPLIT: bool>(
    args: GemmArgs<f32>,
    maps: *const TensorMap,
) where
    Accumulator<R>: Tf32Wgmma,
{
    // A tile of BN columns is one `wgmma` of N = BN per consumer warpgroup: R = BN/2 registers.
    const { assert!(BN == 2 * R as u32 && BN <= 256 && STAGES >= 2) };
    let layout = Layout::<BN, STAGES, SPLIT>::new();
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
        unsafe { consume::<R, BN, STAGES, SPLIT>(args, layout, tid - 128, tiles, tiles_m, tiles_n, slices) };
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
        let (tile_m, tile_n) = rasterise(tile, tiles_m, tiles_n);
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

/// A consumer thread (`thread` 0..256: warpgroup `thread / 128` takes rows 64·that..+64 of
/// each tile).
#[inline(always)]
#[allow(clippy::needless_range_loop)]
unsafe fn consume<const R: usize, const BN: u32, const STAGES: u32, const SPLIT: bool>(
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
    let sbo = 8 * BK * 4;
    let mut ring = Ring::<STAGES>::start();
    let mut tile = block_idx_x();
    while tile < tiles {
        let mut acc = Accumulator::<R>::zero();
        let mut sum = [0f32; R];
        for slice in 0..slices {
            let s = ring.stage;
            if SPLIT {
                layout.ready(s).wait(ring.phase);
            } else {
                layout.full(s).wait(ring.phase);
            }
            let a = layout.a(s);
            let box_at = a_box * A_BOX_ROWS * BK;
            let b_desc = Descriptor::k_major(layout.b(s).shared_address(0), Swizzle::B128, 16, sbo);
            let b_small_desc = Descriptor::k_major(
                layout.b_small(s).shared_address(0),
                Swizzle::B128,
                16,
                sbo,
            );
            // a[step]: the fragment of k-step `step` (k = 8·step..+8): rows m, m+1 of k t and t+4.
            let mut frags = [[0f32; 4]; 4];
            for step in 0..4 {
                let k = 8 * step as u32;
                let low = a.load2(box_at + swizzled(k + t, m_in_box));
                let high = a.load2(box_at + swizzled(k + t + 4, m_in_box));
                frags[step] = [low[0], low[1], high[0], high[1]];
            }
            // 3xTF32 splits A here, before the fence: registers written after `wgmma.fence`
            // make ptxas insert another one before the `wgmma` that reads them.
            let parts = frags.map(|f| f.map(Tf32::split));
            wgmma::fence();
            for step in 0..4 {
                let at = 32 * step as u32;
                if SPLIT {
                    let big = FragA(parts[step].map(|p| p.0));
                    let small = FragA(parts[step].map(|p| p.1));
                    acc.mma_with_a_registers(&small, b_desc.advanced(at), step > 0);
                    acc.mma_with_a_registers(&big, b_small_desc.advanced(at), true);
                    acc.mma_with_a_registers(&big, b_desc.advanced(at), true);
                } else {
                    let frag = FragA(frags[step].map(Tf32::truncate));
                    acc.mma_with_a_registers(&frag, b_desc.advanced(at), slice > 0 || step > 0);
                }
            }
            wgmma::commit_group();
            wgmma::wait_group::<0>();
            acc.fence_registers();
            layout.empty(s).arrive();
            if SPLIT {
                let step_sum = acc.get();
                for i in 0..R {
                    sum[i] += step_sum[i];
                }
            }
            ring.advance();
        }
        let (tile_m, tile_n) = rasterise(tile, tiles_m, tiles_n);
        let (row0, col0) = (tile_m * BM + 32 * a_box, tile_n * BN);
        let values = if SPLIT { &sum } else { acc.get() };
        for i in 0..R {
            let i32_ = i as u32;
            let row = row0 + m_in_box + ((i32_ >> 1) & 1);
            let col = col0 + 8 * (i32_ >> 2) + 2 * t + (i32_ & 1);
            if row < args.m && col < args.n {
                unsafe { args.store_c(args.c_at(row, col), values[i]) };
            }
        }
        tile += grid_dim_x();
    }
}
