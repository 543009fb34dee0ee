//! `wgmma-waves`: a tile of 192 × 128, for the shapes whose 256 × 128 tiles leave most of a
//! wave empty.
//!
//! Source: none of the documents (cuBLAS's and CUTLASS's choice of a tile per shape; the
//! three-consumer skeleton of [`super::wgmma_fp8_block`]). Changed from [`super::wgmma_layouts`]
//! (`wgmma-layouts:2`: 256 × 128 tiles, every layout, C through the TMA store, no cluster), one
//! thing: how many rows of m each consumer warpgroup takes ([`Config::CONSUMER_ROWS`]).
//!
//! - **Why.** A persistent grid of 132 blocks runs `⌈tiles / 132⌉` waves, and the last one is
//!   as long as a full one however few tiles it has. At 3000³ the 256 × 128 tiles are 12 × 24 =
//!   288: 2.18 waves run as 3, 73% of the slots filled; at m = 2112 the ninth row of 256-row
//!   tiles holds 64 rows (288 tiles at n = 4096, two thirds of the computed rows real). A tile
//!   of 192 × 128 makes 16 × 24 = 384 tiles at 3000³, 2.91 waves, each wave three quarters as
//!   long; 2112 is 11 × 192 exactly.
//! - **Consumers of 64 rows.** The 256-row tile gives each of two consumer warpgroups 128 rows
//!   (two `wgmma.m64n128k16` per 16 of k, 128 accumulators a thread); here each of three takes
//!   64: one `wgmma` per k-step on its own TMA box of A, 64 accumulators, the epilogue of two
//!   staging boxes ([`crate::pipeline::epilogue::store_direct_64_through_tma`]), the
//!   skeleton's handshakes ([`crate::pipeline::Consumer::mainloop`]). B's 128 columns, the
//!   copies, the ring, the tile order are `wgmma-layouts:2`'s. A stage is 40 KiB (A's 192 × 64
//!   in three boxes, B's 64 × 128); four stages and two 8 KiB staging buffers per consumer,
//!   208 KiB.
//! - **What four warpgroups cost.** 512 threads launch with 128 registers each; `setmaxnreg`
//!   gives the consumers 160 and the producer 24 ([`crate::pipeline::consumer_registers`]),
//!   too few for a strided batch's walk (52–68 bytes spilled), so this kernel computes one
//!   problem ([`crate::pipeline::Kernel::BATCHES`] off) and no grouped GEMM.
//!
//! What the SASS shows (`cargo xtask ptxas --arch sm_90a`): 128 registers at launch, no spills,
//! one `HGMMA.64x128x16.F32.BF16` per k-step and consumer, with `tnspA`/`tnspB` as the layout says.
//!
//! Measured on the H100 (median of 20, cuBLAS in the same process, leading dimensions padded to
//! 64 elements; `docs/results/h100-2026-12-07-waves/`):
//!
//! - **The same speed per element at whole waves:** 8192³ 1.003× cuBLAS against 1.007–1.011×
//!   for the 256 × 128 tiles; at 4096³, where 256 × 128 tiles make 3.9 waves and 192 × 128 make
//!   5.3 (run as 6), 0.899× against 1.011×, the waves' ratio to the percent.
//! - **Where the waves decide:** 3000³ N,N 0.794 → 0.934×, 2112 × 4096 × 7168 T,N 0.726 →
//!   0.947×, 1536 × 1536 × 4096 T,N 0.849 → 1.040×, 6000 × 3000 × 5000 T,N 0.916 → 0.984×. On a
//!   grid of m ∈ {1536 … 6144}, n ∈ {2000 … 7168}, k = 4096, N,N and T,N (48 shapes), the
//!   256 × 128 tiles' geomean is 0.907× cuBLAS, `auto`'s choice between the two 0.991×
//!   (`wave_tiles_pay` in `gpu-gemm/src/auto.rs`: the waves' time, 1.03× per element for the
//!   narrower tile). What is left is a wave and a third at either tile (2112 × 2000: 176 tiles of
//!   192 × 128, 0.79×).
//! - **Off the 128-byte line it loses more than the clusters do:** with A and B's columns
//!   unaligned to 128 bytes, 0.34 (B alone) to 1.07 (both) of its time more, where
//!   `wgmma-layouts:1`, whose clusters of two read each box of A once, loses 0.08–0.29. So
//!   `auto` takes it only where both lie on the line.
//! - **Not kept: 128 × 128** (two consumers of 64 rows, six stages): 0.84–0.87× the 256 × 128
//!   tiles per element at 8192³, and never the fastest of the three on the grid.
use super::wgmma_16bit::Config;
use super::wgmma_layouts::Layouts;
use super::wgmma_tma_store::TmaStore;

/// The 64-row consumers' configuration: `STAGES` stages, `CONSUMERS` warpgroups of 64 rows
/// (the tile has `64 · CONSUMERS` rows), no cluster.
#[derive(Clone, Copy, Default)]
pub struct Rows64<const STAGES: u32, const CONSUMERS: u32>;

impl<const STAGES: u32, const CONSUMERS: u32> Config for Rows64<STAGES, CONSUMERS> {
    const STAGES: u32 = STAGES;
    const CONSUMERS: u32 = CONSUMERS;
    const CONSUMER_ROWS: u32 = 64;
}

/// The kernel's configuration in a layout: [`Rows64`] with the TMA-store epilogue in the
/// direct orientation, A stored k × m (`A_TRANSPOSED`), B stored n × k (`B_TRANSPOSED`).
pub type Waves<
    const STAGES: u32,
    const CONSUMERS: u32,
    const A_TRANSPOSED: bool,
    const B_TRANSPOSED: bool,
> = Layouts<TmaStore<Rows64<STAGES, CONSUMERS>, false, true>, A_TRANSPOSED, B_TRANSPOSED>;
