//! `wgmma-stream-k`: the 256 × 128 kernel on a stream-k grid, for the shapes whose tiles do not
//! fill whole waves.
//!
//! Source: none of the documents (Osama et al., "Stream-K", 2023; CUTLASS's hybrid stream-k
//! scheduler). Changed from [`super::wgmma_layouts`] (`wgmma-tma-store:5`'s pipeline in every
//! layout), the schedule ([`Config::STREAM_K`], `Layouts`' `STREAMED`) and nothing else:
//!
//! [`Config::STREAM_K`]: super::wgmma_16bit::Config::STREAM_K
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
use super::wgmma_layouts::Layouts;

/// `wgmma-layouts`' configuration `B` in the layout (`A_TRANSPOSED`, `B_TRANSPOSED`) on a
/// stream-k grid: its `STREAMED` parameter ([`Config::STREAM_K`], and room for the fixup's flag
/// after the epilogue's staging buffers), nothing else.
///
/// [`Config::STREAM_K`]: super::wgmma_16bit::Config::STREAM_K
pub type Streamed<B, const A_TRANSPOSED: bool, const B_TRANSPOSED: bool> =
    Layouts<B, A_TRANSPOSED, B_TRANSPOSED, true>;
