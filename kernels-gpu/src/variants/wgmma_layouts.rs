//! `wgmma-layouts`: the 16-bit pipeline for every layout BLAS has, `op(A)` and `op(B)` each
//! transposed or not; above all the one a row-major program calls, `C = Aᵀ·B` ("TN").
//!
//! Source: none of the documents (cuBLAS's `transa`/`transb`; CUTLASS's `GmmaMajor` and
//! `make_gmma_desc<Major::K / Major::MN>`). Changed from chapter 3's `wgmma-tma-store:4`/`:5`
//! (the orientation `C = A·B`, C through the TMA store), two constants of its [`Config`]:
//!
//! - **Why.** A linear layer of a model is `Y[M×N] = X[M×K]·W[N×K]ᵀ`, row-major. Read as
//!   column-major matrices, `Yᵀ = W·Xᵀ`: A is `W` stored k × m (`op(A) = Aᵀ`), B is `Xᵀ`,
//!   stored k × n. A kernel that reads A only as m × k cannot run it without a transposed copy of
//!   the weights.
//! - **A `wgmma` operand is K-major or MN-major**, and the 16-bit instructions take a transpose
//!   bit per operand: the tensor cores read either layout from shared memory, at the same speed.
//!   What changes is how the tile lies there and what its descriptor says:
//!   - A stored m × k (`N`, as before): a TMA box is 64 m wide, a 128-byte row of m per k; the
//!     descriptor is MN-major (LBO: the next 64 m, SBO: the next 8 k), a k-step 16 rows further.
//!   - A stored k × m (`T`, [`Config::A_K_MAJOR`]): a box is 64 k wide, a 128-byte row of k per
//!     m, and its first coordinate is k; the descriptor is K-major (SBO: the next 8 m), a k-step
//!     32 bytes along each row. Same bytes per box, same stage.
//!   - B stored k × n (`N`): K-major, as before. B stored n × k (`T`,
//!     [`Config::B_MN_MAJOR`]): two boxes of 64 n per 128 columns, MN-major.
//!
//!   The tensor maps follow the matrices as they lie (the host encodes them from the layout),
//!   the swizzle is the same 128 bytes, the epilogue does not change: `C` is m × n whatever
//!   `op` was.
//! - **Every byte still goes from global memory to the tensor cores untouched by a thread**, in
//!   all four layouts: no transposed copy, in memory or in registers.
//!
//! The emulator computes each `wgmma` from the bytes its descriptors and transpose bits point at
//! (`tests/tests/emulator_hopper.rs` runs every layout at shapes that cross every tile edge), so
//! a wrong LBO, SBO or transpose bit fails there as on the GPU.
//!
//! What the SASS shows: the same loop as `wgmma-tma-store:4`/`:5`, the transpose bits in the
//! instruction (`HGMMA.64x128x16.F32.BF16` with or without `tnspA`/`tnspB`).
//!
//! Measured on the H100 (median of 20, cuBLAS in the same layout and process): 4096³ T,T 745
//! TFLOP/s, 0.97×; on the models' T,N shapes with 2000 and 4096 tokens 0.96× and 0.95× cuBLAS
//! (geomean, `docs/results/006-shapes-bf16/`), the same as N,N: the layout costs nothing. What
//! it loses, it loses to the waves (m = 2112: 144 tiles for 132 multiprocessors, 0.70×) and to
//! short k (k = 512: 0.86×).
//!
//! **`--tile 4`: clusters of four along n** ([`super::wgmma_cluster::SharedA`] with four blocks:
//! each loads one of A's four 64-row boxes and multicasts it to the other three). Why: the
//! producer's requests, not the bytes. Each 128-byte row of a TMA box is one L2 request where
//! the operand's columns start on a 128-byte line, and two where they do not (a leading
//! dimension that is a multiple of 8 elements but not of 64, say k = 3000). The slowdown off
//! the line followed the rows a block asks for per k-slice (H100, bf16, 5000 × 7000 × 3000 N,N,
//! `docs/results/h100-2026-12-08-cluster4/`): no cluster, 256 rows of A and 128 of B, twice
//! each, 0.540 ms against 0.291 on padded operands; clusters of two (128 rows of A), 0.366;
//! clusters of four (64), **0.331**, 0.90× cuBLAS where clusters of two ran 0.81×. T,N 0.98×
//! (0.88×), 6000 × 3000 × 5000 1.18× N,N and 0.95× T,N (0.95×, 0.76×). The price: a cluster's
//! blocks run in one GPC, and four-block clusters leave some of the 132 multiprocessors idle
//! (4096³ took five rounds of tiles where clusters of two take four: 0.83× against 1.01×;
//! 8192³ 0.94× against 1.02×). `auto` weighs both in its tile model (`gpu_gemm::auto::wide_plan`).
//! What the PTX shows: `.reqnctapercluster 4, 1, 1`, one multicast copy of A per slice with the
//! mask 15 (`0b1111`) where clusters of two issue two with 3, and on release lanes 0–3 of each
//! consumer warp arriving on the four blocks' *empty* barriers (the skeleton's `lane <
//! cluster_size`); ptxas: 168 registers, no spills, as `:1`.
use super::wgmma_16bit::Config;
use crate::device::half::Half;
use crate::device::tma::TensorMap;
use crate::device::wgmma::Accumulator;
use crate::gemm::HalfGemmArgs;
use crate::pipeline::stream::FIXUP_BYTES;
use crate::pipeline::{Consumer, Schedule};
use core::marker::PhantomData;

/// The step `B` (a configuration of the direct orientation) reading A stored k × m
/// (`A_TRANSPOSED`) and B stored n × k (`B_TRANSPOSED`); with `STREAMED`, on a stream-k grid
/// (the next lesson, [`super::wgmma_stream_k`]: no cluster, the fixup's flag after `B`'s extra
/// shared memory); with `QUEUED`, its tiles taken from a tile queue ([`super::wgmma_queue`]).
#[derive(Clone, Copy, Default)]
pub struct Layouts<
    B,
    const A_TRANSPOSED: bool,
    const B_TRANSPOSED: bool,
    const STREAMED: bool = false,
    const QUEUED: bool = false,
>(PhantomData<B>);

// ANCHOR: core_loop
impl<
        B: Config,
        const A_TRANSPOSED: bool,
        const B_TRANSPOSED: bool,
        const STREAMED: bool,
        const QUEUED: bool,
    > Config for Layouts<B, A_TRANSPOSED, B_TRANSPOSED, STREAMED, QUEUED>
{
    const A_K_MAJOR: bool = A_TRANSPOSED;
    const B_MN_MAJOR: bool = B_TRANSPOSED;
    // ANCHOR_END: core_loop
    // ANCHOR: stream_k_config
    const STREAM_K: bool = {
        assert!(!STREAMED || (B::CLUSTER_N == 1 && B::CLUSTER_M == 1 && !B::SPLIT_K));
        STREAMED
    };
    const EXTRA_BYTES: u32 = if STREAMED {
        B::EXTRA_BYTES + FIXUP_BYTES
    } else {
        B::EXTRA_BYTES
    };
    // ANCHOR_END: stream_k_config
    const QUEUED: bool = {
        assert!(!QUEUED || !(STREAMED || B::SPLIT_K));
        QUEUED
    };
    const TENSOR_MAPS: usize = B::TENSOR_MAPS;
    const STAGES: u32 = B::STAGES;
    const RASTER: u32 = B::RASTER;
    const CLUSTER_N: u32 = B::CLUSTER_N;
    const CLUSTER_M: u32 = B::CLUSTER_M;
    const SCHEDULE: Schedule = B::SCHEDULE;
    const CONSUMERS: u32 = B::CONSUMERS;
    const CONSUMER_ROWS: u32 = B::CONSUMER_ROWS;
    const SPLIT_K: bool = B::SPLIT_K;
    const GROUPS: bool = B::GROUPS && !STREAMED;
    const DIRECT: bool = {
        assert!(B::DIRECT, "the layouts are the direct orientation's");
        true
    };

    #[inline(always)]
    fn wait_turn(consumer: &mut Consumer) {
        B::wait_turn(consumer)
    }

    super::wgmma_16bit::copies_of!(B);

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
    unsafe fn store_direct_64<H: Half>(
        args: &HalfGemmArgs<H>,
        maps: *const TensorMap,
        acc: &Accumulator<64>,
        at: (u32, u32, u32),
        consumer: &Consumer,
    ) {
        unsafe { B::store_direct_64(args, maps, acc, at, consumer) }
    }

    #[inline(always)]
    fn drain(consumer: &Consumer) {
        B::drain(consumer)
    }
}
