//! `wgmma-tma-store`: C leaves through shared memory and the TMA engine, not through 64 scattered
//! 4-byte stores per thread.
//!
//! Source: none of the documents (fast.cu's worklog, step 10; CUTLASS's
//! `sm90_epilogue_tma_warpspecialized`). Changed from [`super::wgmma_cluster`], one piece,
//! [`Config::store`] (and [`Config::drain`]):
//!
//! - **Why.** The direct epilogue ([`crate::pipeline::epilogue::store_transposed`]) has each
//!   thread store 64 pairs of C: a warp's store covers 8 columns × 16 bytes, half of each
//!   32-byte sector, and the consumers wait for all of it before their next tile's `wgmma`s.
//! - **`stmatrix`** ([`crate::device::store::stmatrix_x4`]): a warp writes four 8×8 matrices of
//!   16-bit values at once, each lane giving the address of one 16-byte row. Its register
//!   layout is the accumulator's (a thread holds two adjacent columns of a row), so the packed
//!   pairs go in as they are: in the `Cᵀ` orientation a row of the matrix is 8 consecutive m of
//!   one column of C. The staging box is 64 m × 64 n, a 128-byte row of m per n, swizzled so that
//!   the 8 rows of a matrix fall in 8 different chunks: no bank conflict.
//! - **The TMA store** ([`crate::device::store::store_box`]): after `fence.proxy.async` and a
//!   named barrier among the warpgroup's 128 threads (the producer does not take part), one
//!   thread asks the engine to copy the box to C, clipped at C's edges, and commits it as a
//!   *bulk async-group*. The warpgroup goes on with the next subtile at once.
//! - **Two buffers per warpgroup, four subtiles per tile** (CUTLASS's subtiled epilogue):
//!   16 KiB per warpgroup instead of a 64 KiB tile, so the ring keeps its four stages. A buffer
//!   is written again only after the store that read it is done reading
//!   (`cp.async.bulk.wait_group.read 1`); the last stores of a tile drain while the next tile's
//!   mainloop runs, and each consumer waits for all of its stores to have read their buffers
//!   before it leaves ([`Config::drain`]): the shared memory is gone with the block.
//!
//! The emulator checks the protocol: a store issued before the `stmatrix` writes were fenced,
//! a buffer rewritten before `wait_group.read`, C read back where a store is still pending, a
//! block that leaves before its stores have read their buffers (`tests/tests/emulator_store.rs`).
//!
//! Measured on the H100 (`docs/results/005-hopper/`): +3–6% over `wgmma-cluster` on the large
//! squares (0.99–1.00× cuBLAS at 8192³, 0.96–1.00× at 4096³, 1.04–1.09× at 2048³ without
//! clusters) and +22% at 8192×8192×1024, where the direct epilogue weighed most. `auto`'s
//! choice at most 16-bit shapes.
//!
//! **`--tile 4` and `5`: cuBLAS's orientation.** With C written through a staging box, the
//! reason for computing `Cᵀ = Bᵀ·Aᵀ` (adjacent rows in each thread's pair) is gone:
//! `stmatrix.trans` ([`crate::device::store::stmatrix_x4_trans`]) turns a pair of adjacent
//! columns into a column of the box. [`Config::DIRECT`] computes `C = A·B`: each consumer takes
//! 128 rows of m as two `wgmma.m64n128k16`, A is the `wgmma`'s transposed (MN-major) operand —
//! 64 rows, one TMA box — and B its K-major one, as in cuBLAS's `HGMMA.64x128x16…tnspA`. The
//! stages, copies and tensor maps are unchanged. Measured (H100, one process per shape, run 6):
//! +0.4–1.5% on the squares (bf16 4096³ 1.057× cuBLAS for `:5`, 8192³ 0.993× for `:4`) and
//! +4% at 8192×8192×1024 (0.914×, bf16).
use super::wgmma_16bit::Config;
use crate::device::half::Half;
use crate::device::pool_address;
use crate::device::store;
use crate::device::tma::TensorMap;
use crate::device::wgmma::Accumulator;
use crate::gemm::HalfGemmArgs;
use crate::pipeline::epilogue::{self, Staging, STAGING_BOX_BYTES};
use crate::pipeline::{Consumer, Schedule};
use core::marker::PhantomData;

/// The step `B` (its stages, cluster and copies) with the TMA-store epilogue through two staging
/// buffers per warpgroup (`WHOLE` false), or a whole tile's four (`WHOLE`: one barrier pair per
/// tile; the shared memory then holds a stage fewer); with `DIRECT`, in the orientation
/// `C = A·B` ([`Config::DIRECT`]).
#[derive(Clone, Copy, Default)]
pub struct TmaStore<B, const WHOLE: bool = false, const DIRECT: bool = false>(PhantomData<B>);

impl<B: Config, const WHOLE: bool, const DIRECT: bool> TmaStore<B, WHOLE, DIRECT> {
    /// Staging buffers per warpgroup.
    const BUFFERS: u32 = if WHOLE { 4 } else { 2 };
    /// This consumer warpgroup's staging buffers and named barrier.
    #[inline(always)]
    fn staging(consumer: &Consumer) -> Staging {
        let owner = if matches!(B::SCHEDULE, Schedule::PingPong) {
            0
        } else {
            consumer.warpgroup
        };
        Staging {
            first: pool_address(consumer.stages.extra())
                + owner * Self::BUFFERS * STAGING_BOX_BYTES,
            buffers: Self::BUFFERS,
            barrier: 1 + consumer.warpgroup,
        }
    }

    /// Warpgroups with buffers of their own: every consumer, or in ping-pong one set for the
    /// two.
    const WARPGROUPS_STAGING: u32 = if matches!(B::SCHEDULE, Schedule::PingPong) {
        1
    } else {
        B::CONSUMERS
    };
}

impl<B: Config, const WHOLE: bool, const DIRECT: bool> Config for TmaStore<B, WHOLE, DIRECT> {
    const STAGES: u32 = B::STAGES;
    const DIRECT: bool = DIRECT;
    const RASTER: u32 = B::RASTER;
    const CLUSTER_N: u32 = B::CLUSTER_N;
    const CLUSTER_M: u32 = B::CLUSTER_M;
    const SCHEDULE: Schedule = B::SCHEDULE;
    const CONSUMERS: u32 = B::CONSUMERS;
    const CONSUMER_ROWS: u32 = B::CONSUMER_ROWS;
    // The direct epilogue copies a masked group's last columns out of its staging buffers
    // itself (two buffers: a barrier before each subtile keeps them until it is done).
    const GROUPS: bool = DIRECT && !WHOLE && B::GROUPS;
    /// The staging buffers of each consumer warpgroup; in ping-pong the two take turns with the
    /// same ones (the ordering barrier keeps their epilogues apart).
    const EXTRA_BYTES: u32 = Self::WARPGROUPS_STAGING * Self::BUFFERS * STAGING_BOX_BYTES;
    /// C's tensor map after A's and B's.
    const TENSOR_MAPS: usize = 3;

    #[inline(always)]
    fn wait_turn(consumer: &mut Consumer) {
        B::wait_turn(consumer)
    }

    super::wgmma_16bit::copies_of!(B);

    // ANCHOR: core_loop
    #[inline(always)]
    unsafe fn store<H: Half>(
        args: &HalfGemmArgs<H>,
        maps: *const TensorMap,
        acc: &Accumulator<128>,
        (row0, col0, _split): (u32, u32, u32),
        consumer: &Consumer,
    ) {
        let staging = Self::staging(consumer);
        // C's tensor map follows A's and B's.
        let c_map = maps.wrapping_add(2);
        unsafe {
            epilogue::store_through_tma(args, acc, c_map, row0, col0, consumer.thread, staging)
        };
        if matches!(B::SCHEDULE, Schedule::PingPong) {
            Self::drain(consumer);
        }
    }

    #[inline(always)]
    unsafe fn store_direct<H: Half>(
        args: &HalfGemmArgs<H>,
        maps: *const TensorMap,
        accs: [&Accumulator<64>; 2],
        (row0, col0, _split): (u32, u32, u32),
        consumer: &Consumer,
    ) {
        let staging = Self::staging(consumer);
        let c_map = maps.wrapping_add(2);
        unsafe {
            epilogue::store_direct_through_tma(
                args,
                accs,
                c_map,
                row0,
                col0,
                consumer.thread,
                staging,
            )
        };
        if matches!(B::SCHEDULE, Schedule::PingPong) {
            Self::drain(consumer);
        }
    }
    // ANCHOR_END: core_loop

    #[inline(always)]
    unsafe fn store_direct_64<H: Half>(
        args: &HalfGemmArgs<H>,
        maps: *const TensorMap,
        acc: &Accumulator<64>,
        (row0, col0, _split): (u32, u32, u32),
        consumer: &Consumer,
    ) {
        let (staging, c_map) = (Self::staging(consumer), maps.wrapping_add(2));
        let thread = consumer.thread;
        unsafe {
            epilogue::store_direct_64_through_tma(args, acc, c_map, row0, col0, thread, staging)
        };
    }

    /// Every consumer waits until its stores have read their buffers: before the block leaves
    /// (its shared memory goes with it), and in ping-pong before handing the buffers to the other
    /// warpgroup at the end of each epilogue.
    #[inline(always)]
    fn drain(consumer: &Consumer) {
        if consumer.thread == 0 {
            store::wait_read::<0>();
        }
    }
}
