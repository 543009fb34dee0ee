//! `wgmma-stream-k`: the 256 × 128 kernel on a stream-k grid, for the shapes whose tiles do not
//! fill whole waves.
//!
//! Source: none of the documents (Osama et al., "Stream-K", 2023; CUTLASS's hybrid stream-k
//! scheduler). Changed from [`super::wgmma_layouts`] (`wgmma-tma-store:5`'s pipeline in every
//! layout), the schedule ([`Config::STREAM_K`]) and nothing else:
//!
//! - **Why.** A tile per block per wave leaves multiprocessors idle whenever the tiles are not a
//!   multiple of 132: m = 2112 and n = 2000 make 9 × 16 = 144 tiles of 256 × 128, two waves of
//!   which the second keeps 12 multiprocessors busy; m = 2112, n = 128 makes 9, a fourteenth of
//!   the GPU. Smaller tiles fill the waves but run the tensor cores less efficiently (each
//!   `wgmma` narrower, each byte of shared memory read by fewer of them).
//! - **The grid shares the last waves' iterations** ([`crate::pipeline::schedule::StreamK`]): the
//!   tiles of all whole waves but the last go a tile per block, as before (they need no fixup,
//!   and the blocks that run together still cover a compact patch of C); the last partial wave
//!   and one whole wave are divided into equal runs of k-slices, one per block, so every block
//!   finishes at the same time.
//! - **The fixup** ([`crate::pipeline::stream`]): a tile split between blocks is added by the last
//!   of them to finish, through an f32 workspace of two 128 KiB slabs per block (a block's first
//!   and last segments are the only ones that can be parts), and stored through the same
//!   TMA-store epilogue. The finisher reads every part from the workspace, its own too, so that
//!   its 128 accumulators need no second copy in registers.
//!
//! Measured (a negative; H200 in the same process as `wgmma-layouts:2`,
//! `docs/results/h200-2026-11-26-shapes/run2/`): 0.68× cuBLAS at 2112 × 2000 × 7168 where the
//! data-parallel tiles reach 0.55×, but 0.68× where they reach 0.99× (4096 × 2000 × 7168, every
//! tile streamed), 0.95× against 0.98× at 8192³ (the last 200 of 2048 tiles streamed), and 0.47×
//! at 2112 × 128 × 7168, behind `wgmma-narrow`'s 0.78×. The finisher of a tile split 15 ways reads
//! 1.9 MiB alone, and blocks that start at different k no longer read each slice of A and B
//! together from L2. `auto` does not take it; the book's chapter says what would come next.
use super::wgmma_16bit::Config;
use crate::device::half::Half;
use crate::device::mbarrier::MBarrier;
use crate::device::tma::TensorMap;
use crate::device::wgmma::Accumulator;
use crate::gemm::HalfGemmArgs;
use crate::pipeline::stream::FIXUP_BYTES;
use crate::pipeline::{Consumer, Schedule};
use core::marker::PhantomData;

/// The step `B` (a configuration of the direct orientation, without clusters) on a stream-k
/// grid.
#[derive(Clone, Copy, Default)]
pub struct Streamed<B>(PhantomData<B>);

// ANCHOR: core_loop
impl<B: Config> Config for Streamed<B> {
    const STREAM_K: bool = {
        assert!(B::DIRECT && B::CLUSTER_N == 1 && !B::SPLIT_K);
        true
    };
    /// The fixup's flag after the epilogue's staging buffers.
    const EXTRA_BYTES: u32 = B::EXTRA_BYTES + FIXUP_BYTES;
    // ANCHOR_END: core_loop
    const A_K_MAJOR: bool = B::A_K_MAJOR;
    const B_MN_MAJOR: bool = B::B_MN_MAJOR;
    const STAGES: u32 = B::STAGES;
    const RASTER: u32 = B::RASTER;
    const CLUSTER_N: u32 = B::CLUSTER_N;
    const SCHEDULE: Schedule = B::SCHEDULE;
    const DIRECT: bool = B::DIRECT;

    #[inline(always)]
    unsafe fn load_a(
        a_map: *const TensorMap,
        stage: u32,
        m0: u32,
        k0: i32,
        full: MBarrier,
        k_major: bool,
    ) {
        unsafe { B::load_a(a_map, stage, m0, k0, full, k_major) }
    }

    #[inline(always)]
    unsafe fn store_direct<H: Half>(
        args: &HalfGemmArgs<H>,
        maps: *const TensorMap,
        accs: [&Accumulator<64>; 2],
        at: (u32, u32, u32),
        consumer: &Consumer,
    ) {
        unsafe { B::store_direct(args, maps, accs, at, consumer) }
    }

    #[inline(always)]
    fn drain(consumer: &Consumer) {
        B::drain(consumer)
    }
}
