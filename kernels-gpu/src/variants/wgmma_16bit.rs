//! `wgmma-16bit`: the Hopper pipeline in bf16 and f16, the types models train and serve in. A,
//! B and C are 16-bit, the tensor cores accumulate in f32, alpha and beta are f32
//! (`cublasGemmEx` with `CUBLAS_COMPUTE_32F`). This is the first kernel built on the skeleton
//! of [`crate::pipeline`]: it says only what is its own, the tile, the copies of a slice, the
//! `wgmma`s and the epilogue.
//!
//! Source: none of the documents. Changed from chapter 2's `wgmma-tf32`:
//!
//! - **Both operands through descriptors, none through registers.** TF32 `wgmma` reads only
//!   K-major operands, and column-major A is M-major, so `wgmma-tf32` loaded A's fragments
//!   into registers itself. A 16-bit `wgmma` takes a *transpose* bit per operand: an MN-major
//!   operand is read as it lies ([`HalfWgmma`], [`MN_MAJOR`]). Every byte of A and B now goes
//!   from global memory to the tensor cores without a thread touching it.
//! - **The product is computed transposed: `Cᵀ = Bᵀ·Aᵀ`.** The accumulator of a `wgmma`
//!   gives each thread pairs of adjacent *columns* ([`crate::pipeline::epilogue`]); in
//!   column-major C two adjacent columns are `ldc` apart, two adjacent rows are contiguous. So
//!   the `wgmma`'s M dimension is C's n and its N dimension C's m: its A operand is B (n rows of
//!   k, K-major as B lies in memory) and its B operand is A (k rows of m, MN-major as A lies).
//!   Each accumulator pair is then two adjacent rows of one column of C: one 4-byte store of a
//!   packed pair (`cvt.rn.bf16x2.f32`). (Once C goes out through shared memory and the TMA
//!   engine, that reason is gone: `wgmma-tma-store:4` and `:5` turn the product back,
//!   [`Config::DIRECT`], as cuBLAS computes it, and gain 0.5–4% on the H100.)
//! - **The tile is 256 × 128 (m × n) and a slice 64 deep**, as fast.cu's and ThunderKittens'
//!   Hopper GEMMs: each consumer warpgroup issues one `wgmma.m64n256k16` per 16 of k, on 64
//!   columns of C and all 256 rows of the tile, 128 f32 accumulators per thread. A stage holds
//!   A's 256 × 64 (four TMA boxes of 64 m × 64 k: a 128-byte swizzled row holds 64 16-bit
//!   values) and B's 64 × 128 (one box of 64 k × 128 n), 48 KiB; four stages, 192 KiB.
//! - **One `wgmma` group in flight** (CUTLASS's `K_PIPE_MMAS = 1`): a slice's four `wgmma`s are
//!   one group; the consumers wait for the *previous* group, then release its stage, while
//!   the tensor cores run the current one.
//! - **The descriptors.** B's (the `wgmma`'s A): K-major, 128-byte swizzle, 8 rows of 128 bytes
//!   to the next 8 (SBO 1024); warpgroup `w` starts at its 64 columns, and each k-step of 16 is
//!   32 bytes further along the row. A's (the `wgmma`'s B): MN-major, 128-byte swizzle: a row of
//!   128 bytes is 64 m of one k, 8 rows make a 1024-byte atom, the next 8 k lie SBO = 1024
//!   bytes further and the next 64 m LBO = 8 KiB further (the next TMA box); a k-step of 16 is
//!   two atoms, 2048 bytes.
//!
//! The tiles past C's edges are zero-filled by the TMA engine and not written by the epilogue,
//! so m, n and k are free; the host names TMA's rule that `lda` and `ldb` are multiples of 8
//! (16-byte row strides).
//!
//! What the SASS shows (`cargo xtask sass --variant wgmma-16bit --dtype bf16`): 168 registers,
//! no spills; the hot loop is four `HGMMA.64x256x16.F32.BF16` per 64-deep k-slice in 70
//! instructions (the rest: the mbarrier wait and arrive, descriptor arithmetic), no `MEMBAR`.
//!
//! Measured on the H100 (`host experiment hopper`, `docs/results/005-hopper/`): 0.90–0.94×
//! cuBLAS at 4096³ and 8192³ in bf16 and f16, 0.67–0.73× at 8192×8192×1024 — the epilogue,
//! stored straight from registers while the tensor cores wait, is what the next steps remove
//! (`docs/perf-notes.md`, chapter 3).
use crate::device::half::Half;
use crate::device::mbarrier::MBarrier;
use crate::device::pool_address;
use crate::device::tma::{self, Swizzle, TensorMap};
use crate::device::wgmma::{
    self, Accumulator, Descriptor, HalfWgmma, Registers, K_MAJOR, MN_MAJOR,
};
use crate::gemm::{Geometry, HalfGemmArgs};
use crate::pipeline::schedule::Tile;
use crate::pipeline::stream::{self, Scratch, FIXUP_BYTES};
use crate::pipeline::{self, epilogue, Consumer, Kernel, Schedule, Stages, Work, WARPGROUP};
use core::marker::PhantomData;

/// Rows of m per tile: the `wgmma`'s N.
pub const BM: u32 = 256;
/// Columns of n per tile: two consumer warpgroups of 64 (the `wgmma`'s M).
pub const BN: u32 = 128;
/// k per slice: 64 16-bit values, one 128-byte swizzled row.
pub const BK: u32 = 64;
/// m per TMA box of A: a 128-byte row.
pub const A_BOX_M: u32 = 64;
pub const A_BOX_BYTES: u32 = A_BOX_M * BK * 2;
const A_BYTES: u32 = BM * BK * 2;

/// What a step of the chapter chooses: the number of stages and the tile order, and the pieces
/// it replaces. The lessons after this one are each a `Config` that overrides one piece
/// (`wgmma-cluster` the copies of A, `wgmma-tma-store` the epilogue, …).
pub trait Config: Copy + Default + 'static {
    const STAGES: u32;
    /// Tiles in groups of this many unit-columns ([`crate::pipeline::schedule`]).
    const RASTER: u32 = 8;
    /// Blocks per cluster, side by side along n: they share A.
    const CLUSTER_N: u32 = 1;
    /// Blocks per cluster, one above the other along m: they share B (not with `CLUSTER_N`).
    const CLUSTER_M: u32 = 1;
    /// Shared memory after the stages (an epilogue's staging buffer).
    const EXTRA_BYTES: u32 = 0;
    /// How the two consumer warpgroups share the tiles: cooperative (each takes 64 of the
    /// tile's 128 columns) or ping-pong (each takes whole tiles of 64 columns, in turn).
    const SCHEDULE: Schedule = Schedule::Cooperative;
    /// Consumer warpgroups, and the rows of m each takes in the [`Config::DIRECT`] orientation:
    /// two of 128 (two `wgmma.m64n128k16` per 16 of k, the 256 × 128 tile), or consumers of 64
    /// (one `wgmma` each: three make [`super::wgmma_waves`]' 192 × 128 tile).
    const CONSUMERS: u32 = 2;
    const CONSUMER_ROWS: u32 = 128;

    /// Split-k: grid row `y` computes part `y` of k ([`crate::pipeline::Kernel::SPLIT_K`]).
    const SPLIT_K: bool = false;

    /// Stream-k ([`crate::pipeline::Kernel::STREAM_K`]), in the direct orientation: a tile
    /// shared by blocks is finished by the last of them, whose flag is the last
    /// [`crate::pipeline::stream::FIXUP_BYTES`] of `EXTRA_BYTES` ([`super::wgmma_stream_k`]).
    const STREAM_K: bool = false;

    /// The product as it stands, `C = A·B`, instead of `Cᵀ = Bᵀ·Aᵀ`: the `wgmma`'s M is C's m,
    /// its A operand is A (MN-major, the transposed one, 64 rows) and its B operand B (K-major,
    /// 128 columns): each consumer warpgroup takes 128 of the tile's 256 rows, two
    /// `wgmma.m64n128k16` per 16 of k — cuBLAS's orientation. Its epilogue is
    /// [`Config::store_direct`] (cooperative schedule only).
    const DIRECT: bool = false;

    /// How A and B lie, in the [`Config::DIRECT`] orientation only: A K-major (stored k × m,
    /// `op(A) = Aᵀ`) instead of MN-major, B MN-major (stored n × k, `op(B) = Bᵀ`) instead of
    /// K-major ([`super::wgmma_layouts`]).
    const A_K_MAJOR: bool = false;
    const B_MN_MAJOR: bool = false;

    /// Whether its epilogue writes no column past the `n` of its arguments, so that it can run
    /// a grouped GEMM's masked layout ([`crate::pipeline::Kernel::GROUPS`]): the direct stores
    /// (bounded by `n`) and the direct orientation's TMA store (which writes a masked group's
    /// last tile from the registers); not the transposed TMA store.
    const GROUPS: bool = false;

    /// The tile queue ([`crate::pipeline::Kernel::DYNAMIC`]): the blocks take their tiles in
    /// order from a counter instead of walking fixed shares ([`super::wgmma_queue`]).
    const QUEUED: bool = false;

    /// The tensor maps the host passes (A's and B's; C's too for the TMA-store epilogue), before
    /// what the kernel reads after them ([`crate::pipeline::Kernel::TENSOR_MAPS`]).
    const TENSOR_MAPS: usize = 2;

    /// Ping-pong: waits for the warpgroup's turn ([`Consumer::wait_turn`]).
    #[inline(always)]
    fn wait_turn(consumer: &mut Consumer) {
        consumer.wait_turn()
    }

    /// The producer: the copies of A's part of a slice, the tile's m ([`tile_m`]) × 64 k from
    /// `(m0, k0)` of member `layer`, into the stage at shared address `stage`, completing on
    /// `full`. A box per 64 m (four for 256), each 64
    /// rows of 128 bytes: of k when A is stored m × k, of m when it is stored k × m
    /// (`k_major`, whose tensor map's first coordinate is k).
    ///
    /// # Safety
    /// `a_map` is A's tensor map.
    #[inline(always)]
    unsafe fn load_a(
        a_map: *const TensorMap,
        stage: u32,
        (m0, k0, layer): (u32, i32, u32),
        full: MBarrier,
        k_major: bool,
    ) {
        for j in 0..tile_m::<Self>() / A_BOX_M {
            let (x, y) = a_box_at(m0 + j * A_BOX_M, k0, k_major);
            unsafe { tma::load_box(a_map, stage + j * A_BOX_BYTES, x, y, layer, full) };
        }
    }

    /// The producer: the copies of B's part of a slice, `bn` n × 64 k from `(n0, k0)` of member
    /// `layer`, at shared address `b_at`, completing on `full`: one box of 64 k × `bn` when B is
    /// stored k × n (K-major), boxes of 64 n × 64 k, a 128-byte row of n per k, when it is
    /// stored n × k (`mn_major`).
    ///
    /// # Safety
    /// `b_map` is B's tensor map.
    #[inline(always)]
    unsafe fn load_b(
        b_map: *const TensorMap,
        b_at: u32,
        (n0, k0, layer): (u32, i32, u32),
        bn: u32,
        full: MBarrier,
        mn_major: bool,
    ) {
        unsafe {
            if mn_major {
                for j in 0..bn / 64 {
                    let (at, n) = (b_at + j * A_BOX_BYTES, (n0 + 64 * j) as i32);
                    tma::load_box(b_map, at, n, k0, layer, full);
                }
            } else {
                tma::load_box(b_map, b_at, k0, n0 as i32, layer, full);
            }
        }
    }

    /// A consumer warpgroup's epilogue: its 64 columns of C from `col0`, 256 rows from `row0`,
    /// of k's part `split` (split-k).
    ///
    /// # Safety
    /// `args` describes valid matrices.
    #[inline(always)]
    unsafe fn store<H: Half>(
        args: &HalfGemmArgs<H>,
        maps: *const TensorMap,
        acc: &Accumulator<128>,
        (row0, col0, _split): (u32, u32, u32),
        consumer: &Consumer,
    ) {
        let _ = maps;
        unsafe { epilogue::store_transposed(args, acc, row0, col0, consumer.thread) }
    }

    /// The epilogue of the [`Config::DIRECT`] orientation: the warpgroup's two accumulators
    /// (rows `row0..row0 + 64` and the next 64, columns `col0..col0 + 128`). Only the TMA-store
    /// epilogue has one (`wgmma_tma_store::TmaStore`): an accumulator pair is two columns,
    /// `ldc` apart, which direct stores would write two bytes at a time. A configuration that
    /// sets `DIRECT` without it does not compile.
    ///
    /// # Safety
    /// `args` describes valid matrices.
    #[inline(always)]
    unsafe fn store_direct<H: Half>(
        _args: &HalfGemmArgs<H>,
        _maps: *const TensorMap,
        _accs: [&Accumulator<64>; 2],
        _at: (u32, u32, u32),
        _consumer: &Consumer,
    ) {
        // (Compiled for every configuration, run only for the direct ones.)
        const { assert!(!Self::DIRECT, "DIRECT needs the TMA-store epilogue") };
    }

    /// [`Config::store_direct`] for a consumer of 64 rows ([`Config::CONSUMER_ROWS`]): its one
    /// accumulator (rows `row0..row0 + 64`, columns `col0..col0 + 128`).
    ///
    /// # Safety
    /// `args` describes valid matrices.
    #[inline(always)]
    unsafe fn store_direct_64<H: Half>(
        _args: &HalfGemmArgs<H>,
        _maps: *const TensorMap,
        _acc: &Accumulator<64>,
        _at: (u32, u32, u32),
        _consumer: &Consumer,
    ) {
        // (Compiled for every configuration, run only for 64-row consumers.)
        const {
            assert!(
                Self::CONSUMER_ROWS == 128,
                "64-row consumers need the TMA-store epilogue"
            )
        };
    }

    /// A consumer thread, after its last tile (an epilogue with work in flight waits for it).
    #[inline(always)]
    fn drain(_consumer: &Consumer) {}
}

/// In the `impl Config` of a configuration that wraps `$base` and keeps its copies: `$base`'s
/// [`Config::load_a`] and [`Config::load_b`], as they are (`wgmma-tma-store` changes the
/// epilogue, ping-pong the schedule, the layouts which operand is which major: none the copies).
macro_rules! copies_of {
    ($base:ident) => {
        #[inline(always)]
        unsafe fn load_a(
            a_map: *const $crate::device::tma::TensorMap,
            stage: u32,
            at: (u32, i32, u32),
            full: $crate::device::mbarrier::MBarrier,
            k_major: bool,
        ) {
            unsafe { $base::load_a(a_map, stage, at, full, k_major) }
        }

        #[inline(always)]
        unsafe fn load_b(
            b_map: *const $crate::device::tma::TensorMap,
            b_at: u32,
            at: (u32, i32, u32),
            bn: u32,
            full: $crate::device::mbarrier::MBarrier,
            mn_major: bool,
        ) {
            unsafe { $base::load_b(b_map, b_at, at, bn, full, mn_major) }
        }
    };
}
pub(crate) use copies_of;

/// The coordinates of A's box at row `m`, column `k`: `(m, k)` in a tensor map of m × k, `(k, m)`
/// in one of k × m (`k_major`).
#[inline(always)]
pub fn a_box_at(m: u32, k: i32, k_major: bool) -> (i32, i32) {
    if k_major {
        (k, m as i32)
    } else {
        (m as i32, k)
    }
}

/// This lesson's configuration: `STAGES` stages, direct stores.
#[derive(Clone, Copy, Default)]
pub struct Plain<const STAGES: u32>;

impl<const STAGES: u32> Config for Plain<STAGES> {
    const STAGES: u32 = STAGES;
    const GROUPS: bool = true;
}

/// The kernel, for the 16-bit type `H` and the configuration `C`.
#[derive(Clone, Copy, Default)]
pub struct Wgmma16<H, C>(PhantomData<(H, C)>);

/// The rows of m a tile has: 256 (the `wgmma`'s N in the transposed orientation; two
/// consumers of 128 rows in the direct one), or 64 per consumer ([`Config::CONSUMER_ROWS`]).
pub const fn tile_m<C: Config>() -> u32 {
    assert!(C::CONSUMER_ROWS == 64 || C::CONSUMER_ROWS == 128);
    assert!(C::CONSUMER_ROWS == 64 || C::CONSUMERS == 2);
    C::CONSUMERS * C::CONSUMER_ROWS
}

/// Bytes of A in a stage.
const fn a_bytes<C: Config>() -> u32 {
    tile_m::<C>() * BK * 2
}

/// The columns of n a tile has: 128 (two warpgroups of 64), or 64 in ping-pong (one warpgroup).
pub const fn tile_n<C: Config>() -> u32 {
    if matches!(C::SCHEDULE, Schedule::PingPong) {
        64
    } else {
        BN
    }
}

/// The launch geometry for configuration `C`: one block per tile, in whole clusters (the host
/// caps the grid at one block per multiprocessor).
pub fn geometry<C: Config>(m: u32, n: u32, k: u32, _element_bytes: u32) -> Geometry {
    type K<C> = Wgmma16<crate::device::half::Bf16, C>;
    let units = m.div_ceil(tile_m::<C>() * C::CLUSTER_M) * n.div_ceil(tile_n::<C>() * C::CLUSTER_N);
    // Stream-k: a block per iteration at most (every block must have one), which the host caps
    // at one per multiprocessor.
    let blocks = if C::STREAM_K {
        units * k.div_ceil(BK).max(1)
    } else {
        units * C::CLUSTER_M * C::CLUSTER_N
    };
    Geometry {
        grid: (blocks, 1),
        block: (K::<C>::THREADS, 1),
        shared_bytes: K::<C>::POOL_BYTES,
    }
}

impl<H: Half, C: Config> Kernel for Wgmma16<H, C>
where
    Accumulator<128>: HalfWgmma<H>,
    Accumulator<64>: HalfWgmma<H>,
{
    type Args = HalfGemmArgs<H>;
    const BM: u32 = tile_m::<C>();
    const BN: u32 = tile_n::<C>();
    const BK: u32 = BK;
    const STAGES: u32 = C::STAGES;
    const STAGE_BYTES: u32 = (tile_m::<C>() + tile_n::<C>()) * BK * 2;
    const CONSUMERS: u32 = C::CONSUMERS;
    const LOADED_BYTES: u32 = Self::STAGE_BYTES;
    const SCHEDULE: Schedule = C::SCHEDULE;
    const SPLIT_K: bool = C::SPLIT_K;
    const STREAM_K: bool = C::STREAM_K;
    // `wgmma-stream-k` computes one problem: with a batch's walk (a division per tile) it
    // spilled 72 bytes, mostly in its 40-register producer (4 with a producer of 48); so did
    // three consumers' 24-register producer (52–68 bytes, `wgmma-waves:1`).
    const BATCHES: bool = !C::STREAM_K && C::CONSUMERS == 2;
    const GROUPS: bool = C::GROUPS && C::CLUSTER_N == 1 && !C::SPLIT_K && !C::STREAM_K;
    const RASTER_GROUP: u32 = C::RASTER;
    const CLUSTER: (u32, u32) = {
        assert!(C::CLUSTER_M == 1 || C::CLUSTER_N == 1);
        (C::CLUSTER_M, C::CLUSTER_N)
    };
    const EXTRA_BYTES: u32 = C::EXTRA_BYTES;
    const DYNAMIC: bool = C::QUEUED;
    const TENSOR_MAPS: usize = C::TENSOR_MAPS;

    #[inline(always)]
    unsafe fn load(self, maps: *const TensorMap, stages: Stages, s: u32, tile: Tile, slice: u32) {
        let (a_map, b_map) = (maps, maps.wrapping_add(1));
        let (full, stage) = (stages.full(s), pool_address(stages.stage(s)));
        let k0 = (slice * BK) as i32;
        let (n0, layer) = (tile.col * Self::BN, tile.member);
        unsafe {
            C::load_a(
                a_map,
                stage,
                (tile.row * Self::BM, k0, tile.group),
                full,
                C::A_K_MAJOR,
            );
            let b_at = stage + a_bytes::<C>();
            C::load_b(b_map, b_at, (n0, k0, layer), Self::BN, full, C::B_MN_MAJOR);
        }
    }

    #[inline(always)]
    unsafe fn consume(
        self,
        args: HalfGemmArgs<H>,
        maps: *const TensorMap,
        c: &mut Consumer,
        work: Work,
    ) {
        if C::DIRECT {
            return unsafe { self.consume_direct(args, maps, c, work) };
        }
        // (Compiled for every configuration, run only for the transposed orientation.)
        const { assert!(C::DIRECT || !(C::A_K_MAJOR || C::B_MN_MAJOR || C::CONSUMER_ROWS == 64)) };
        let (tile, slices) = (work.tile, work.slices);
        let ping_pong = matches!(C::SCHEDULE, Schedule::PingPong);
        // Cooperative: this warpgroup's 64 columns of the tile's 128. Ping-pong: the tile's 64.
        let columns = if ping_pong { 0 } else { 64 * c.warpgroup };
        if ping_pong {
            C::wait_turn(c);
        }
        let mut acc = Accumulator::<128>::zero();
        let mut previous = c.ring.stage;
        // ANCHOR: core_loop
        for slice in 0..slices {
            c.wait_full();
            let stage = pool_address(c.stages.stage(c.ring.stage));
            // The wgmma's A is B: this warpgroup's 64 columns of n, K-major.
            let b_rows = stage + A_BYTES + columns * BK * 2;
            let b = Descriptor::k_major(b_rows, Swizzle::B128, 16, 1024);
            // The wgmma's B is A: 256 m, MN-major, the next 64 m one box further.
            let a = Descriptor::mn_major(stage, Swizzle::B128, A_BOX_BYTES, 1024);
            wgmma::fence();
            for step in 0..BK / 16 {
                let first = slice == 0 && step == 0;
                <Accumulator<128> as HalfWgmma<H>>::mma::<K_MAJOR, MN_MAJOR>(
                    &mut acc,
                    b.advanced(32 * step),
                    a.advanced(2048 * step),
                    !first,
                );
            }
            wgmma::commit_group();
            // The previous slice's group is done: its stage goes back to the producer(s).
            wgmma::wait_group::<1>();
            if slice > 0 {
                c.release(previous);
            }
            previous = c.ring.stage;
            c.ring.advance();
        }
        // ANCHOR_END: core_loop
        // Ping-pong: the other warpgroup may start its mainloop while this one's last group
        // runs (CUTLASS hands the turn over before its last wait).
        if ping_pong {
            c.pass_turn();
        }
        wgmma::wait_group::<0>();
        acc.fence_registers();
        c.release(previous);
        let (row0, col0) = (tile.row * BM, tile.col * Self::BN + columns);
        if ping_pong {
            C::wait_turn(c);
        }
        unsafe { C::store(&args, maps, &acc, (row0, col0, work.split), c) };
        if ping_pong {
            c.pass_turn();
        }
    }

    #[inline(always)]
    fn drain(self, consumer: &Consumer) {
        C::drain(consumer)
    }
}

impl<H: Half, C: Config> Wgmma16<H, C>
where
    Accumulator<128>: HalfWgmma<H>,
    Accumulator<64>: HalfWgmma<H>,
{
    /// The mainloop in the [`Config::DIRECT`] orientation: this warpgroup's 128 rows of m as two
    /// `wgmma.m64n128k16` per k-step, A (MN-major) one TMA box per 64 rows, B (K-major) all 128
    /// columns; the stage handshakes as in [`Kernel::consume`].
    #[inline(always)]
    unsafe fn consume_direct(
        self,
        args: HalfGemmArgs<H>,
        maps: *const TensorMap,
        c: &mut Consumer,
        work: Work,
    ) {
        // (Compiled for every configuration, run only for the direct ones.)
        const { assert!(!C::DIRECT || matches!(C::SCHEDULE, Schedule::Cooperative)) };
        if C::CONSUMER_ROWS == 64 {
            return unsafe { self.consume_direct_64(args, maps, c, work) };
        }
        let (tile, slices) = (work.tile, work.slices);
        let mut upper = Accumulator::<64>::zero();
        let mut lower = Accumulator::<64>::zero();
        let mut previous = c.ring.stage;
        for slice in 0..slices {
            c.wait_full();
            let stage = pool_address(c.stages.stage(c.ring.stage));
            // A's boxes 2w and 2w + 1 are this warpgroup's 128 rows: 64 rows of k (MN-major)
            // or of m (K-major) each. A k-step of 16 is 16 rows further (MN-major) or 32 bytes
            // along each row (K-major); likewise for B, whose MN-major 128 columns are two
            // boxes of 64, LBO apart.
            let a_box = |j: u32| stage + (2 * c.warpgroup + j) * A_BOX_BYTES;
            let ((a_upper, a_step), (a_lower, _)) =
                (a_direct::<C>(a_box(0)), a_direct::<C>(a_box(1)));
            let (b, b_step) = b_direct::<C>(stage + a_bytes::<C>());
            wgmma::fence();
            for step in 0..BK / 16 {
                let accumulate = !(slice == 0 && step == 0);
                let b = b.advanced(b_step * step);
                let (upper_a, lower_a) = (
                    a_upper.advanced(a_step * step),
                    a_lower.advanced(a_step * step),
                );
                mma_direct::<H, C>(&mut upper, upper_a, b, accumulate);
                mma_direct::<H, C>(&mut lower, lower_a, b, accumulate);
            }
            wgmma::commit_group();
            wgmma::wait_group::<1>();
            if slice > 0 {
                c.release(previous);
            }
            previous = c.ring.stage;
            c.ring.advance();
        }
        wgmma::wait_group::<0>();
        upper.fence_registers();
        lower.fence_registers();
        c.release(previous);
        // ANCHOR: stream_k
        // Stream-k: a tile shared with other blocks is stored by the last of them to finish.
        if C::STREAM_K && !work.whole() {
            let mut values: [f32; 128] = core::array::from_fn(|i| {
                if i < 64 {
                    upper.get()[i]
                } else {
                    lower.get()[i - 64]
                }
            });
            let scratch = unsafe { Scratch::after(maps, C::TENSOR_MAPS) };
            let thread = c.warpgroup * WARPGROUP + c.thread;
            let threads = Self::CONSUMERS * WARPGROUP;
            let flag = c.stages.extra() + C::EXTRA_BYTES - FIXUP_BYTES;
            if !unsafe { stream::finish(scratch, &work, &mut values, thread, threads, flag) } {
                return;
            }
            upper = Accumulator::from_registers(core::array::from_fn(|i| values[i]));
            lower = Accumulator::from_registers(core::array::from_fn(|i| values[64 + i]));
        }
        // ANCHOR_END: stream_k
        let (row0, col0) = (tile.row * BM + 128 * c.warpgroup, tile.col * BN);
        let at = (row0, col0, work.split);
        unsafe { C::store_direct(&args, maps, [&upper, &lower], at, c) };
    }

    /// The mainloop of consumers of 64 rows ([`Config::CONSUMER_ROWS`]): this warpgroup's rows
    /// as one `wgmma.m64n128k16` per k-step on A's box `warpgroup`, B as in
    /// [`Self::consume_direct`]; the skeleton's handshakes ([`Consumer::mainloop`]).
    #[inline(always)]
    unsafe fn consume_direct_64(
        self,
        args: HalfGemmArgs<H>,
        maps: *const TensorMap,
        c: &mut Consumer,
        work: Work,
    ) {
        // (Compiled for every configuration, run only for 64-row consumers, which no stream-k
        // configuration has.)
        const { assert!(C::CONSUMER_ROWS == 128 || !C::STREAM_K) };
        // ANCHOR: rows_64
        let mut acc = Accumulator::<64>::zero();
        let warpgroup = c.warpgroup;
        c.mainloop(work.slices, |stage, slice| {
            let (a, a_step) = a_direct::<C>(stage + warpgroup * A_BOX_BYTES);
            let (b, b_step) = b_direct::<C>(stage + a_bytes::<C>());
            for step in 0..BK / 16 {
                let accumulate = !(slice == 0 && step == 0);
                let (a, b) = (a.advanced(a_step * step), b.advanced(b_step * step));
                mma_direct::<H, C>(&mut acc, a, b, accumulate);
            }
        });
        acc.fence_registers();
        let (row0, col0) = (
            work.tile.row * Self::BM + 64 * warpgroup,
            work.tile.col * BN,
        );
        unsafe { C::store_direct_64(&args, maps, &acc, (row0, col0, work.split), c) };
        // ANCHOR_END: rows_64
    }
}

/// The descriptor of A's box of 64 rows at shared address `at` in the direct orientation, and
/// its k-step of 16: MN-major (A stored m × k: a k-step is 16 rows of 128 bytes further) or
/// K-major (stored k × m: 32 bytes along each row).
#[inline(always)]
fn a_direct<C: Config>(at: u32) -> (Descriptor, u32) {
    if C::A_K_MAJOR {
        (Descriptor::k_major(at, Swizzle::B128, 16, 1024), 32)
    } else {
        (
            Descriptor::mn_major(at, Swizzle::B128, A_BOX_BYTES, 1024),
            2048,
        )
    }
}

/// The descriptor of B's 128 columns at shared address `at` in the direct orientation, and its
/// k-step of 16: K-major (B stored k × n), or MN-major (stored n × k: two boxes of 64 n, LBO
/// apart).
#[inline(always)]
fn b_direct<C: Config>(at: u32) -> (Descriptor, u32) {
    if C::B_MN_MAJOR {
        (
            Descriptor::mn_major(at, Swizzle::B128, A_BOX_BYTES, 1024),
            2048,
        )
    } else {
        (Descriptor::k_major(at, Swizzle::B128, 16, 1024), 32)
    }
}

/// One `wgmma.m64n128k16` of the direct orientation, with the transpose bits of `C`'s layout.
#[inline(always)]
fn mma_direct<H: Half, C: Config>(
    acc: &mut Accumulator<64>,
    a: Descriptor,
    b: Descriptor,
    accumulate: bool,
) where
    Accumulator<64>: HalfWgmma<H>,
{
    type Acc = Accumulator<64>;
    match (C::A_K_MAJOR, C::B_MN_MAJOR) {
        (false, false) => <Acc as HalfWgmma<H>>::mma::<MN_MAJOR, K_MAJOR>(acc, a, b, accumulate),
        (true, false) => <Acc as HalfWgmma<H>>::mma::<K_MAJOR, K_MAJOR>(acc, a, b, accumulate),
        (false, true) => <Acc as HalfWgmma<H>>::mma::<MN_MAJOR, MN_MAJOR>(acc, a, b, accumulate),
        (true, true) => <Acc as HalfWgmma<H>>::mma::<K_MAJOR, MN_MAJOR>(acc, a, b, accumulate),
    }
}

/// The entry point's body.
///
/// # Safety
/// As [`pipeline::run`]: `maps` points to A's and B's tensor maps (boxes of 64 m × 64 k and 64 k
/// × 128 n, 128-byte swizzle), the launch has [`geometry`]'s block and pool and at most one
/// block per multiprocessor.
#[inline(always)]
pub unsafe fn gemm<H: Half, C: Config>(args: HalfGemmArgs<H>, maps: *const TensorMap)
where
    Accumulator<128>: HalfWgmma<H>,
    Accumulator<64>: HalfWgmma<H>,
{
    unsafe { pipeline::run(Wgmma16::<H, C>(PhantomData), args, maps) }
}
