//! `wgmma-pingpong`: the two consumer warpgroups take whole tiles in turn, so that one's
//! epilogue runs while the other's `wgmma`s keep the tensor cores busy.
//!
//! Source: none of the documents (CUTLASS's `KernelTmaWarpSpecializedPingpong`). Changed from
//! [`super::wgmma_tma_store`], one constant, [`Config::SCHEDULE`], which the skeleton and
//! [`super::wgmma_16bit`] read:
//!
//! - **Why.** In the cooperative schedule both warpgroups finish a tile's mainloop together and
//!   then both run its epilogue: the tensor cores wait for it (the producer only prefetches the
//!   next tile's first stages meanwhile). At 4096³ a tile's mainloop is about 36 µs and its
//!   epilogue a few percent of that.
//! - **Whole tiles per warpgroup.** A tile is 256 m × 64 n, one `wgmma.m64n256k16` per 16 of k
//!   for one warpgroup (128 accumulators per thread, as before). The block's tiles alternate
//!   between the warpgroups ([`crate::pipeline::run`]); the producer fills the ring with them in
//!   order, and each warpgroup skips the other's slices in it ([`crate::pipeline::Ring::skip`]).
//!   A stage is 40 KiB (A's 256 × 64 and B's 64 × 64): five stages.
//! - **An ordering barrier** (two mbarriers, CUTLASS's `OrderedSequenceBarrier`,
//!   [`crate::pipeline::Consumer::wait_turn`]): warpgroup 0 runs its mainloop, hands the turn
//!   to warpgroup 1 once its last `wgmma`s are issued, runs its epilogue when warpgroup 1 hands
//!   the turn back, and so on. Mainloops alternate, epilogues alternate, and each epilogue
//!   overlaps the other warpgroup's mainloop.
//! - **One pair of staging buffers for both.** The epilogues never overlap, so they share the
//!   TMA store's two buffers; a warpgroup hands the turn over only once its stores have read
//!   them. Skip a wait of the ordering barrier and the two epilogues race on the buffers: the
//!   emulator reports it (`tests/tests/emulator_store.rs`).
//!
//! The price: a tile of 64 columns reuses A half as much as the cooperative tile of 128, so
//! each flop costs more L2 reads (with clusters of two sharing A: 24 KiB per 2.1 MFLOP, against
//! 32 KiB per 4.2 MFLOP). Measured on the H100: the price wins on the squares — 0.73–0.81×
//! cuBLAS from 4096³ up, tensor pipe 67% against 88% for `wgmma-tma-store`, L2 bytes 1.97 GB
//! against 1.36 at 4096³ — and the narrower tile wins where tiles are few: 0.98–1.04× at
//! 8192×256×8192, 0.90–1.15× at 1024³ (`docs/results/005-hopper/`, `docs/perf-notes.md`).
use super::wgmma_16bit::Config;
use crate::device::half::Half;
use crate::device::tma::TensorMap;
use crate::device::wgmma::Accumulator;
use crate::gemm::HalfGemmArgs;
use crate::pipeline::{Consumer, Schedule};
use core::marker::PhantomData;

/// The step `B` (its stages, cluster and copies) with the ping-pong schedule; the TMA-store
/// epilogue goes around it (`TmaStore<PingPong<…>>`), as it reads the schedule to share its
/// buffers.
#[derive(Clone, Copy, Default)]
pub struct PingPong<B>(PhantomData<B>);

// ANCHOR: core_loop
impl<B: Config> Config for PingPong<B> {
    const STAGES: u32 = B::STAGES;
    const RASTER: u32 = B::RASTER;
    const CLUSTER_N: u32 = B::CLUSTER_N;
    const CLUSTER_M: u32 = B::CLUSTER_M;
    const EXTRA_BYTES: u32 = B::EXTRA_BYTES;
    const SCHEDULE: Schedule = Schedule::PingPong;

    #[inline(always)]
    fn wait_turn(consumer: &mut Consumer) {
        B::wait_turn(consumer)
    }

    super::wgmma_16bit::copies_of!(B);

    #[inline(always)]
    unsafe fn store<H: Half>(
        args: &HalfGemmArgs<H>,
        maps: *const TensorMap,
        acc: &Accumulator<128>,
        (row0, col0, split): (u32, u32, u32),
        consumer: &Consumer,
    ) {
        unsafe { B::store(args, maps, acc, (row0, col0, split), consumer) }
    }

    #[inline(always)]
    fn drain(consumer: &Consumer) {
        B::drain(consumer)
    }
}
// ANCHOR_END: core_loop
