//! `wgmma-fp8`: e4m3 A and B, one scale per tensor, f32 accumulation, bf16 C: the GEMM of FP8
//! training and serving, at twice the 16-bit tensor-core rate.
//!
//! Source: none of the documents (cuBLASLt's FP8 matmul on Hopper; DeepSeek-V3's report and
//! DeepGEMM for the block-scaled step after this one). Changed from chapter 3's
//! `wgmma-tma-store:4`/`:5` ([`super::wgmma_tma_store`], the orientation `C = A·B`):
//!
//! - **The layout is "TN".** An 8-bit `wgmma` has no transpose bits: both operands must be
//!   K-major in shared memory ([`Fp8Wgmma`]). So A is stored k×m (op(A) = Aᵀ, `lda ≥ k`) and
//!   B k×n, as cuBLASLt requires of FP8 on Hopper; the host's `--transa t` says so. Each TMA box
//!   of A is now 64 rows of m × 128 bytes of k, K-major like B's 128 n × 128 k: a 128-byte
//!   swizzled row holds 128 values of k, so a slice is 128 deep, and a stage (A's 256 × 128 and
//!   B's 128 × 128, 48 KiB) is exactly the 16-bit kernel's: four stages, 192 KiB.
//! - **`wgmma.m64n128k32.f32.e4m3.e4m3`**: each consumer warpgroup takes 128 rows of the
//!   tile, two `wgmma`s per 32 of k, four k-steps per slice, eight `wgmma`s in a group. Both
//!   descriptors are K-major with the 128-byte swizzle (8 rows 128 bytes apart, the next 8 at
//!   SBO = 1024) and a k-step moves both 32 bytes along the row: the arithmetic of the bf16
//!   B operand, now for A as well.
//! - **The scales go into alpha.** With one scale per tensor, `Σ (sa·a)(sb·b) = sa·sb·Σ a·b`:
//!   the epilogue multiplies by `alpha·sa·sb` (read from device memory, where a training step
//!   computes them, as cuBLASLt's `A_SCALE_POINTER`) and rounds `alpha'·acc + beta·C` to bf16
//!   once, through chapter 3's TMA-store epilogue, unchanged.
//! - **The accumulation is not f32's.** The tensor cores add each `wgmma`'s 32 products into the
//!   accumulator with fewer bits than an f32 addition (`docs/hopper-isa-notes.md`, measured);
//!   at large k the error grows, which is what the block-scaled kernel's promotion addresses.
//!
//! The handshakes of the mainloop are the skeleton's ([`Consumer::mainloop`]); the roles,
//! the ring, the tile order and the epilogue are chapter 3's.
//!
//! What the SASS shows (`cargo xtask ptxas --arch sm_90a`): 168 registers at entry (the launch
//! bound; the consumers take 232 with `setmaxnreg`), no spills; the `wgmma` is `QGMMA`.
//!
//! Measured on the H100 (`docs/results/h100-2026-11-25-fp8/`, median, cuBLASLt's FP8 matmul in
//! the same process): 1.07× cuBLASLt at 4096³, 1.02× at 6144³, 1.03× at 8192³ (1475 TFLOP/s),
//! 1.21× at 2048³, 0.91–0.94× at 8192×8192×1024. cuBLASLt promotes its sums by default; against
//! its fast accumulation, this kernel's arithmetic, 1.00×, 0.97×, 0.98×, 1.22×, 0.97×.
//!
//! `--tile 5` is not this file's kernel: it is [`super::wgmma_fp8_block`]'s three-consumer
//! skeleton (`--tile 7` there: 192 × 128 tiles, three warpgroups of 64 rows, one `m64n128`
//! accumulator each) with its `PER_TENSOR` mainloop, which has nothing to promote. It was built
//! when the block kernel showed that three consumers keep the tensor cores busier, and it is the
//! fastest here from 6144 rows and columns (run14): 1.08× cuBLASLt at 8192×8192×1024 (where the
//! 256 × 128 tiles reach 0.92–0.94: 2752 shorter tiles fill the last wave better, and each
//! warpgroup's epilogue is half as long), 1.04× at 8192³ (1518 TFLOP/s), 1.03× at 6144³.
//! `auto` takes it there, `:2` below. `--tile 6` is the same skeleton with two consumer
//! warpgroups (`wgmma-fp8-block:1`'s 128 × 128 tiles, one scale per tensor): the tile of the
//! batches below.
//!
//! **B in e5m2** (`--dtype e4m3-e5m2`, the type parameter `F` of [`WgmmaFp8`]). Training's
//! backward pass multiplies by gradients, which span more binades than e4m3's 18 (2⁻⁹…448) and
//! need fewer bits of mantissa: e5m2 (2⁻¹⁶…57 344, two bits). The `wgmma` takes either format
//! for either operand, so B's format is one word of the instruction,
//! `wgmma.m64n128k32.f32.e4m3.e5m2` (`Fp8Wgmma::mma_b::<E5m2>`); the TMA engine and the shared
//! memory move bytes and never knew. Every tile of this file (and `:5`) has an `_e4m3_e5m2`
//! entry point whose SASS is the e4m3 one's but for `QGMMA.64x128x32.F32.E4M3.E5M2`, 168
//! registers, no spills. The probe (`docs/hopper-isa-notes.md`) found the same accumulation
//! as e4m3's, 13 bits truncated, and the emulator agrees with the H100 bit for bit. The planted
//! bug: e5m2 codes read by the e4m3 entry point, which nothing but the check can see
//! (`tests/emulator_fp8_bugs.rs`). On the H100 against cuBLASLt's e4m3 × e5m2 matmul in the
//! same process (`docs/results/h100-2026-11-27-e5m2/`), `auto`: 1.26× at 2048³ (826 TFLOP/s;
//! cuBLASLt runs e5m2 B slower there than e4m3), 1.06× at 4096³, 1.03× at 8192³ (1518), 1.06×
//! at 8192×8192×1024: the e4m3 kernel's speed, as the SASS says.
//!
//! **Strided batches** (`host --batch`, `Gemm::run_fp8` with `GemmConfig::batch`). A batch is
//! the masked grouped layout whose every count is n, as in `wgmma-fp8-block`: the skeleton's
//! walk goes over every member's tiles, the copies read member `j`'s layer of A and B, and
//! [`Kernel::member_args`] points the epilogue at its C and at its own scales, `scale_a[j]` and
//! `scale_b[j]` ([`Fp8GemmArgs::of_tile_per_tensor`]: one per tensor, where the block kernel's
//! lie `m·⌈k/128⌉` apart). `:2` walks them, and `:6`: [`super::wgmma_fp8_block`]'s skeleton
//! with two consumer warpgroups of 64 rows and one scale per tensor, 128 × 128 tiles; not the
//! clusters along n (`:1`, `:3`) or the three consumers of `:5`, whose 24-register producer
//! cannot afford the walk. On the H100 against cuBLASLt's strided batched FP8 matmul in the
//! same process (`docs/results/h100-2026-11-28-fp8-tensor-batch/`), `:2` and then `:6`: 0.73
//! and 0.85× at 256 members of 2048 × 2048 × 128, whose 2.1 GB of C go out through the TMA
//! store (at 1.8 TB/s from `:2`, cuBLASLt 2.5: bf16's batch meets the same store path); 1.01 and
//! 0.98× at 1024 of 2048 × 128 × 2048 (A's 4.3 GB read at 2.4 TB/s); 0.78 and 0.84× at 1024 of
//! 512 × 512 × 64; 0.76 and 1.07× at 1024 of 128³, where the 256-row tile is half empty. `auto`
//! takes `:6` for every batch per tensor. `:4` (ping-pong, 128-row tiles) was measured walking
//! them and not kept: 0.43–0.50× where C dominates, 0.89× at 128³, and its walk spilled 48
//! bytes.
use super::wgmma_16bit::{Config, A_BOX_M};
use crate::device::cluster;
use crate::device::fp8::{E4m3, Fp8Format};
use crate::device::pool_address;
use crate::device::tma::{self, Swizzle, TensorMap};
use crate::device::wgmma::{Accumulator, Descriptor, Fp8Wgmma, Registers};
use crate::gemm::{Fp8GemmArgs, Geometry};
use crate::pipeline::schedule::Tile;
use crate::pipeline::{self, Consumer, Kernel, Schedule, Stages, Work};
use core::marker::PhantomData;

/// Rows of m per tile: two consumer warpgroups of 128 (in ping-pong, one: [`tile_m`]).
pub const BM: u32 = 256;
/// Columns of n per tile: the `wgmma`'s N.
pub const BN: u32 = 128;
/// k per slice: 128 one-byte values, one 128-byte swizzled row.
pub const BK: u32 = 128;
/// Bytes of one TMA box of A: 64 rows of m × 128 of k.
pub const A_BOX_BYTES: u32 = A_BOX_M * BK;
/// The `wgmma`'s k.
const K_STEP: u32 = 32;

/// The kernel for configuration `C` of chapter 3 (its stages, its cluster along n, its
/// epilogue: a `TmaStore<…, false, true>`), B in format `F` (A is e4m3).
#[derive(Clone, Copy, Default)]
pub struct WgmmaFp8<C, F = E4m3>(PhantomData<(C, F)>);

/// The rows of m a tile has: 256 (two warpgroups of 128), or 128 in ping-pong (one warpgroup
/// takes the whole tile, two `wgmma.m64n128k32` per k-step as before).
pub const fn tile_m<C: Config>() -> u32 {
    if matches!(C::SCHEDULE, Schedule::PingPong) {
        128
    } else {
        BM
    }
}

/// The launch geometry: one block per tile, in whole clusters (the host caps the grid at one
/// block per multiprocessor).
pub fn geometry<C: Config>(m: u32, n: u32, _k: u32, _element_bytes: u32) -> Geometry {
    let units = m.div_ceil(tile_m::<C>()) * n.div_ceil(BN * C::CLUSTER_N);
    Geometry {
        grid: (units * C::CLUSTER_N, 1),
        block: (WgmmaFp8::<C, E4m3>::THREADS, 1),
        shared_bytes: WgmmaFp8::<C, E4m3>::POOL_BYTES,
    }
}

impl<C: Config, F: Fp8Format> Kernel for WgmmaFp8<C, F> {
    type Args = Fp8GemmArgs;
    const BM: u32 = tile_m::<C>();
    const BN: u32 = BN;
    const BK: u32 = BK;
    const STAGES: u32 = C::STAGES;
    const STAGE_BYTES: u32 = (tile_m::<C>() + BN) * BK;
    const SCHEDULE: Schedule = C::SCHEDULE;
    const LOADED_BYTES: u32 = Self::STAGE_BYTES;
    const RASTER_GROUP: u32 = C::RASTER;
    const CLUSTER: (u32, u32) = (1, C::CLUSTER_N);
    const EXTRA_BYTES: u32 = C::EXTRA_BYTES;
    // A strided batch runs as the masked layout whose every count is n, as with block scales
    // (`wgmma-fp8-block`): the configurations whose 16-bit twins walk groups, but for the
    // clusters along n (two tiles of a cluster may be of different members).
    const GROUPS: bool = C::GROUPS && C::CLUSTER_N == 1 && !C::SPLIT_K && !C::STREAM_K;

    #[inline(always)]
    unsafe fn load(self, maps: *const TensorMap, stages: Stages, s: u32, tile: Tile, slice: u32) {
        unsafe { load_slice(maps, stages, s, tile, slice, Self::BM, C::CLUSTER_N) }
    }

    // ANCHOR: core_loop
    #[inline(always)]
    unsafe fn consume(
        self,
        args: Fp8GemmArgs,
        maps: *const TensorMap,
        c: &mut Consumer,
        work: Work,
    ) {
        let ping_pong = matches!(C::SCHEDULE, Schedule::PingPong);
        let mut upper = Accumulator::<64>::zero();
        let mut lower = Accumulator::<64>::zero();
        // Cooperative: this warpgroup's 128 rows of the tile's 256. Ping-pong: the tile's 128.
        let rows = if ping_pong { 0 } else { 128 * c.warpgroup };
        if ping_pong {
            C::wait_turn(c);
        }
        c.mainloop(work.slices, |stage, slice| {
            // This warpgroup's 128 rows of A, 64 per `wgmma`; B's 128 columns. All K-major.
            let a_upper = Descriptor::k_major(stage + rows * BK, Swizzle::B128, 16, 1024);
            let a_lower = a_upper.advanced(64 * BK);
            let b = Descriptor::k_major(stage + Self::BM * BK, Swizzle::B128, 16, 1024);
            for step in 0..BK / K_STEP {
                let accumulate = !(slice == 0 && step == 0);
                let (a_upper, a_lower) = (a_upper.advanced(32 * step), a_lower.advanced(32 * step));
                let b = b.advanced(32 * step);
                upper.mma_b::<F>(a_upper, b, accumulate);
                lower.mma_b::<F>(a_lower, b, accumulate);
            }
        });
        upper.fence_registers();
        lower.fence_registers();
        // Ping-pong: the other warpgroup's mainloop runs while this one's epilogue does.
        if ping_pong {
            c.pass_turn();
        }
        // One scale per tensor: Σ (sa·a)(sb·b) = sa·sb·Σ a·b.
        let scale = unsafe { args.scale_a.load(0) * args.scale_b.load(0) };
        let output = args.output(args.alpha * scale);
        let at = (
            work.tile.row * Self::BM + rows,
            work.tile.col * BN,
            work.split,
        );
        if ping_pong {
            C::wait_turn(c);
        }
        unsafe { C::store_direct(&output, maps, [&upper, &lower], at, c) };
        if ping_pong {
            c.pass_turn();
        }
    }
    // ANCHOR_END: core_loop

    #[inline(always)]
    fn drain(self, consumer: &Consumer) {
        C::drain(consumer)
    }

    /// One scale per tensor: group `g`'s A scale and member `j`'s B scale are `scale_a[g]` and
    /// `scale_b[j]`.
    #[inline(always)]
    fn member_args(self, args: Fp8GemmArgs, tile: Tile) -> Fp8GemmArgs {
        args.of_tile_per_tensor(tile)
    }
}

/// The copies of slice `slice` of tile `tile` into stage `s`, completing on its *full* barrier:
/// A's `rows` rows of the tile in boxes of 64 (in a cluster of `cluster_n` blocks along n, this
/// block's share of them, multicast to every block: they share the tile's rows), then B's 128
/// columns after them. Both tensor maps are k-first (A's is k × m), so a box's first coordinate
/// is k.
///
/// # Safety
/// `maps` points to A's and B's tensor maps; a stage has room for `rows + 128` rows of 128
/// bytes.
#[inline(always)]
pub unsafe fn load_slice(
    maps: *const TensorMap,
    stages: Stages,
    s: u32,
    tile: Tile,
    slice: u32,
    rows: u32,
    cluster_n: u32,
) {
    let (a_map, b_map) = (maps, maps.wrapping_add(1));
    let (stage, full) = (pool_address(stages.stage(s)), stages.full(s));
    let (m0, k0) = (tile.row * rows, (slice * BK) as i32);
    let share = rows / A_BOX_M / cluster_n;
    let first = cluster::rank() * share;
    for j in first..first + share {
        let (to, m) = (stage + j * A_BOX_BYTES, (m0 + j * A_BOX_M) as i32);
        unsafe {
            if cluster_n == 1 {
                tma::load_box(a_map, to, k0, m, tile.group, full)
            } else {
                let everyone = ((1u32 << cluster_n) - 1) as u16;
                tma::load_box_multicast(a_map, to, k0, m, tile.group, full, everyone)
            }
        };
    }
    let (b_at, n0) = (stage + rows * BK, (tile.col * BN) as i32);
    unsafe { tma::load_box(b_map, b_at, k0, n0, tile.member, full) };
}

/// The entry point's body, B in format `F`.
///
/// # Safety
/// As [`pipeline::run`]: `maps` points to A's, B's and C's tensor maps (A k × m in boxes of
/// 128 k × 64 m, B k × n in boxes of 128 k × 128 n, both 8-bit with the 128-byte swizzle; C's
/// bf16 boxes of 64 m × 64 n), the launch has [`geometry`]'s block and pool and at most one
/// block per multiprocessor.
#[inline(always)]
pub unsafe fn gemm<C: Config, F: Fp8Format>(args: Fp8GemmArgs, maps: *const TensorMap) {
    unsafe { pipeline::run(WgmmaFp8::<C, F>(PhantomData), args, maps) }
}
