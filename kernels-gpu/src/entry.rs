//! The kernel entry points: one row per (kernel, element type).
//!
//! On the GPU each row becomes `#[no_mangle] extern "ptx-kernel" fn NAME(m, n, k, alpha, A, lda,
//! B, ldb, beta, C, ldc)`, the cuBLAS argument order, so that the host launches every variant
//! the same way. A row `NAME | NAME_batch` adds the same f32 or f64 kernel over a strided batch
//! (`stride_a, stride_b, stride_c` after C: member z is the grid's layer z), the kernels
//! [`crate::registry::GRID_BATCHED`] names. The TF32 kernels add their tensor maps and the
//! batch (members, C's stride: their persistent walk goes over every member's tiles). The
//! 16-bit kernels add
//! their tensor maps, the fused epilogue (`bias`, the [`crate::fused::Epilogue`] word, the
//! amax's words), the
//! batch (members, C's stride) and a grouped GEMM's layout, groups and table
//! ([`crate::gemm::Groups`]) after them. On the host the same table gives the emulator
//! each kernel's body by name, so the two backends cannot disagree about which names exist.
#![allow(clippy::too_many_arguments)]
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
use crate::device::fp8::{E4m3, E5m2};
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
use crate::device::half::{Bf16, F16};
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
use crate::device::half::{GlobalHalf, GlobalHalfMut};
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
use crate::device::tma::TensorMap;
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
use crate::device::GlobalWords;
#[cfg(target_arch = "nvptx64")]
use crate::device::{Global, GlobalMut};
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
use crate::fused::{Epilogue, Fused};
use crate::gemm::GemmArgs;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
use crate::gemm::{Fp8GemmArgs, HalfGemmArgs, HalfReduceArgs};
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
use crate::gemm::{GroupLayout, Groups, Members};
use crate::variants::*;

/// A kernel body the emulator can run, by element type and parameters.
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy)]
pub enum KernelBody {
    F32(unsafe fn(GemmArgs<f32>)),
    F64(unsafe fn(GemmArgs<f64>)),
    /// A kernel whose A and B are read by the TMA engine: it also takes a pointer to two
    /// tensor maps in global memory, A's then B's, and a strided batch's members and C's
    /// stride ([`crate::variants::wgmma_tf32`]).
    F32TensorMaps(unsafe fn(GemmArgs<f32>, *const TensorMap)),
    /// The 16-bit kernels (A, B, C in bf16 or f16, alpha and beta in f32), all fed by TMA.
    Bf16TensorMaps(unsafe fn(HalfGemmArgs<Bf16>, *const TensorMap)),
    F16TensorMaps(unsafe fn(HalfGemmArgs<F16>, *const TensorMap)),
    /// The 16-bit split-k reduction: f32 partial products into 16-bit C.
    Bf16Reduce(unsafe fn(HalfReduceArgs<Bf16>)),
    F16Reduce(unsafe fn(HalfReduceArgs<F16>)),
    /// The FP8 kernels: e4m3 A and B (TN), bf16 C, f32 alpha, beta and scales; fed by TMA.
    E4m3TensorMaps(unsafe fn(Fp8GemmArgs, *const TensorMap)),
    /// A kernel of one pointer to words: the amax epilogue's last step.
    Words(unsafe fn(*mut u32)),
}

#[cfg(not(target_arch = "nvptx64"))]
macro_rules! body {
    (f32, $body:expr) => {
        KernelBody::F32($body)
    };
    (f64, $body:expr) => {
        KernelBody::F64($body)
    };
    (f32 + maps, $body:expr) => {
        KernelBody::F32TensorMaps($body)
    };
    (bf16 + maps, $body:expr) => {
        KernelBody::Bf16TensorMaps($body)
    };
    (f16 + maps, $body:expr) => {
        KernelBody::F16TensorMaps($body)
    };
    (bf16 + reduce, $body:expr) => {
        KernelBody::Bf16Reduce($body)
    };
    (f16 + reduce, $body:expr) => {
        KernelBody::F16Reduce($body)
    };
    (e4m3 + maps, $body:expr) => {
        KernelBody::E4m3TensorMaps($body)
    };
    (u32 + words, $body:expr) => {
        KernelBody::Words($body)
    };
}

/// One `extern "ptx-kernel"` entry point per row, and the table `$table` of their bodies for
/// the emulator. A row with `+ maps` takes a twelfth parameter, the tensor maps' address.
macro_rules! gemm_kernels {
    ($table:ident: $($name:ident $(| $batched:ident)?: $t:ident $(+ $maps:ident)? = $body:expr $(, launch_bounds($threads:literal, $blocks:literal))? $(, cluster($cluster:literal))?;)*) => {
        $(
            // Read by the PTX build (`ptx_builder::apply_launch_bounds`), which turns them into
            // `.maxntid`/`.minnctapersm` and `.reqnctapercluster` on the entry: Rust has no
            // `__launch_bounds__` or `__cluster_dims__`.
            $(
                #[cfg(target_arch = "nvptx64")]
                core::arch::global_asm!(concat!(
                    "// launch_bounds ", stringify!($name), " ", $threads, " ", $blocks
                ));
            )?
            $(
                #[cfg(target_arch = "nvptx64")]
                core::arch::global_asm!(concat!("// cluster ", stringify!($name), " ", $cluster));
            )?

            gemm_kernels!(@entry $name, $t, $body $(, $maps)?);
            $(gemm_kernels!(@batched $batched, $t, $body);)?
        )*

        /// Every entry point of this table, with its body for the emulator.
        #[cfg(not(target_arch = "nvptx64"))]
        pub static $table: &[(&str, KernelBody)] = &[
            $((stringify!($name), body!($t $(+ $maps)?, $body)),
              $((stringify!($batched), body!($t, $body)),)?)*
        ];
    };
    (@entry $name:ident, $t:ident, $body:expr) => {
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            m: u32, n: u32, k: u32, alpha: $t, a: *const $t, lda: u32, b: *const $t,
            ldb: u32, beta: $t, c: *mut $t, ldc: u32,
        ) {
            let args = GemmArgs {
                m, n, k, alpha, a: Global::new(a), lda, b: Global::new(b), ldb, beta,
                c: GlobalMut::new(c), ldc, stride_c: 0, members: 1,
            };
            unsafe { $body(args) }
        }
    };
    // The same body over a strided batch, the strides after C: the blocks of the grid's layer
    // z compute member z, its operands `z·stride` elements on. A second entry point, so that
    // one problem runs the kernel as it was: there A, B and C are parameters, which cost no
    // registers, where a member's are pointers computed in registers (`best:1` in f32, at its
    // cap of 128, spilled them and ran 5% slower at 4096³ on the H100 when one entry served
    // both). C's offset is taken where C is written (`GemmArgs::stride_c`).
    (@batched $name:ident, $t:ident, $body:expr) => {
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            m: u32, n: u32, k: u32, alpha: $t, a: *const $t, lda: u32, b: *const $t,
            ldb: u32, beta: $t, c: *mut $t, ldc: u32, stride_a: u64, stride_b: u64,
            stride_c: u64,
        ) {
            let member = crate::device::block_idx_z() as u64;
            let at = |stride: u64| (member * stride) as usize;
            let args = GemmArgs {
                m, n, k, alpha, a: Global::new(a.wrapping_add(at(stride_a))), lda,
                b: Global::new(b.wrapping_add(at(stride_b))), ldb, beta,
                c: GlobalMut::new(c), ldc, stride_c, members: 1,
            };
            unsafe { $body(args) }
        }
    };
    (@entry $name:ident, bf16, $body:expr, maps) => {
        gemm_kernels!(@half $name, Bf16, $body);
    };
    (@entry $name:ident, f16, $body:expr, maps) => {
        gemm_kernels!(@half $name, F16, $body);
    };
    (@entry $name:ident, e4m3, $body:expr, maps) => {
        // cuBLASLt's order too, with the two scale pointers after the tensor maps, then the fused
        // epilogue's bias, word and amax as the 16-bit entries have them.
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            m: u32, n: u32, k: u32, alpha: f32, a: *const E4m3, lda: u32, b: *const E4m3,
            ldb: u32, beta: f32, c: *mut Bf16, ldc: u32, maps: *const TensorMap,
            scale_a: *const f32, scale_b: *const f32, bias: *const Bf16, epilogue: u32,
            amax: *mut u32, batch: u32, stride_c: u64, group_layout: u32, groups: u32,
            group_table: *const u32,
        ) {
            let args = Fp8GemmArgs {
                m, n, k, alpha, a, lda, b, ldb, beta, c: GlobalHalfMut::new(c), ldc,
                scale_a: Global::new(scale_a), scale_b: Global::new(scale_b),
                fused: Fused { epilogue: Epilogue(epilogue), bias: GlobalHalf::new(bias), amax },
                batch: Members { count: batch, stride_c, member: 0 },
                groups: Groups {
                    layout: GroupLayout::from_word(group_layout),
                    count: groups,
                    table: GlobalWords::new(group_table),
                },
            };
            unsafe { $body(args, maps) }
        }
    };
    (@entry $name:ident, u32, $body:expr, words) => {
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(words: *mut u32) {
            unsafe { $body(words) }
        }
    };
    (@entry $name:ident, bf16, $body:expr, reduce) => {
        gemm_kernels!(@reduce $name, Bf16, $body);
    };
    (@entry $name:ident, f16, $body:expr, reduce) => {
        gemm_kernels!(@reduce $name, F16, $body);
    };
    (@reduce $name:ident, $h:ident, $body:expr) => {
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            m: u32, n: u32, k: u32, alpha: f32, a: *const f32, lda: u32, _b: *const f32,
            _ldb: u32, beta: f32, c: *mut $h, ldc: u32, bias: *const $h, epilogue: u32,
            amax: *mut u32,
        ) {
            let args = HalfReduceArgs {
                m, n, splits: k, alpha, workspace: Global::new(a), ldw: lda, beta,
                c: GlobalHalfMut::new(c), ldc,
                fused: Fused { epilogue: Epilogue(epilogue), bias: GlobalHalf::new(bias), amax },
            };
            unsafe { $body(args) }
        }
    };
    (@half $name:ident, $h:ident, $body:expr) => {
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            m: u32, n: u32, k: u32, alpha: f32, a: *const $h, lda: u32, b: *const $h,
            ldb: u32, beta: f32, c: *mut $h, ldc: u32, maps: *const TensorMap,
            bias: *const $h, epilogue: u32, amax: *mut u32, batch: u32, stride_c: u64,
            group_layout: u32, groups: u32, group_table: *const u32,
        ) {
            let args = HalfGemmArgs {
                m, n, k, alpha, a: GlobalHalf::new(a), lda, b: GlobalHalf::new(b), ldb, beta,
                c: GlobalHalfMut::new(c), ldc,
                fused: Fused { epilogue: Epilogue(epilogue), bias: GlobalHalf::new(bias), amax },
                batch: Members { count: batch, stride_c, member: 0 },
                groups: Groups {
                    layout: GroupLayout::from_word(group_layout),
                    count: groups,
                    table: GlobalWords::new(group_table),
                },
            };
            unsafe { $body(args, maps) }
        }
    };
    (@entry $name:ident, $t:ident, $body:expr, maps) => {
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            m: u32, n: u32, k: u32, alpha: $t, a: *const $t, lda: u32, b: *const $t,
            ldb: u32, beta: $t, c: *mut $t, ldc: u32, maps: *const TensorMap, batch: u32,
            stride_c: u64,
        ) {
            let args = GemmArgs {
                m, n, k, alpha, a: Global::new(a), lda, b: Global::new(b), ldb, beta,
                c: GlobalMut::new(c), ldc, stride_c, members: batch,
            };
            unsafe { $body(args, maps) }
        }
    };
}

// -- every architecture: the sm_80 and sm_90 builds (the sm_90a build holds the Hopper
// kernels alone: the driver compiles a module's every kernel when it loads it) --
#[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_90a")))]
mod portable {
    use super::*;
    use crate::variants::tc_tf32::{Rounded, Truncated};
    gemm_kernels! {
        PORTABLE:
        gemm_v0_f32: f32 = v0_uncoalesced::gemm::<f32>;
        gemm_v0_f64: f64 = v0_uncoalesced::gemm::<f64>;
        gemm_v1_f32: f32 = v1_coalesced::gemm::<f32>;
        gemm_v1_f64: f64 = v1_coalesced::gemm::<f64>;
        gemm_v3_f32: f32 = v3_shared_tiles::gemm::<f32>;
        gemm_v3_f64: f64 = v3_shared_tiles::gemm::<f64>;
        gemm_v4_f32: f32 = v4_padded_tiles::gemm::<f32>;
        gemm_v4_f64: f64 = v4_padded_tiles::gemm::<f64>;
        gemm_tiled_w1_f32: f32 = tiled::gemm::<f32, 1, 1>;
        gemm_tiled_w1_f64: f64 = tiled::gemm::<f64, 1, 1>;
        gemm_tiled_w2_f32: f32 = tiled::gemm::<f32, 2, 1>;
        gemm_tiled_w2_f64: f64 = tiled::gemm::<f64, 2, 1>;
        gemm_tiled_w4_f32: f32 = tiled::gemm::<f32, 4, 1>;
        gemm_tiled_w4_f64: f64 = tiled::gemm::<f64, 4, 1>;
        gemm_tiled_w8_f32: f32 = tiled::gemm::<f32, 8, 1>;
        gemm_tiled_w8_f64: f64 = tiled::gemm::<f64, 8, 1>;
        gemm_tiled_w16_f32: f32 = tiled::gemm::<f32, 16, 1>;
        gemm_tiled_w16_f64: f64 = tiled::gemm::<f64, 16, 1>;
        gemm_tiled_w32_f32: f32 = tiled::gemm::<f32, 32, 1>;
        gemm_tiled_w32_f64: f64 = tiled::gemm::<f64, 32, 1>;
        // -- the 001 progression --
        gemm_v2_f32: f32 = v2_local_indices::gemm::<f32>;
        gemm_v2_f64: f64 = v2_local_indices::gemm::<f64>;
        gemm_v5_f32: f32 = v5_float4::gemm::<f32>;
        gemm_v5_f64: f64 = v5_float4::gemm::<f64>;
        gemm_64x64_f32: f32 = gemm64::gemm::<f32>;
        gemm_64x64_f64: f64 = gemm64::gemm::<f64>;
        gemm_128x128_f32 | gemm_128x128_f32_batch: f32 = gemm128::gemm::<f32>;
        gemm_128x128_f64 | gemm_128x128_f64_batch: f64 = gemm128::gemm::<f64>;
        gemm_alc1_f32: f32 = alc1::gemm::<f32>;
        gemm_alc1_f64: f64 = alc1::gemm::<f64>;
        gemm_alc2_f32: f32 = alc2::gemm::<f32>;
        gemm_alc2_f64: f64 = alc2::gemm::<f64>;
        gemm_alc3_f32: f32 = alc3::gemm::<f32>;
        gemm_alc3_f64: f64 = alc3::gemm::<f64>;
        gemm_fynv_f32: f32 = fynv::gemm::<f32>;
        gemm_fynv_f64: f64 = fynv::gemm::<f64>;
        // -- the 002/003/004 variants --
        gemm_naive_f32: f32 = naive::gemm::<f32>;
        gemm_naive_f64: f64 = naive::gemm::<f64>;
        gemm_kahan_f32: f32 = kahan::gemm::<f32>;
        gemm_kahan_f64: f64 = kahan::gemm::<f64>;
        gemm_row_shared_f32: f32 = row_shared::gemm::<f32>;
        gemm_row_shared_f64: f64 = row_shared::gemm::<f64>;
        gemm_blocked_kahan_f32: f32 = blocked_kahan::gemm::<f32>;
        gemm_blocked_kahan_f64: f64 = blocked_kahan::gemm::<f64>;
        gemm_cg_shuffle_f32: f32 = cg_shuffle::gemm::<f32>;
        gemm_cg_shuffle_f64: f64 = cg_shuffle::gemm::<f64>;
        gemm_cg_regs_f32: f32 = cg_regs::gemm::<f32>;
        gemm_cg_regs_f64: f64 = cg_regs::gemm::<f64>;
        gemm_cg_tile2x2_f32: f32 = cg_tile2x2::gemm::<f32>;
        gemm_cg_tile2x2_f64: f64 = cg_tile2x2::gemm::<f64>;
        // -- beyond the documents: `best`, one entry per configuration (see registry) --
        gemm_best_c2_f32 | gemm_best_c2_f32_batch: f32 = best::gemm::<f32, 128, 128, 8, 4>, launch_bounds(256, 2);
        gemm_best_c2_f64 | gemm_best_c2_f64_batch: f64 = best::gemm::<f64, 128, 128, 8, 4>;
        gemm_best_c1_f32 | gemm_best_c1_f32_batch: f32 = best::gemm::<f32, 128, 64, 16, 3>, launch_bounds(128, 4);
        gemm_best_c1_f64 | gemm_best_c1_f64_batch: f64 = best::gemm::<f64, 128, 64, 16, 3>;
        gemm_best_c3_f32 | gemm_best_c3_f32_batch: f32 = best::gemm::<f32, 64, 64, 16, 4>;
        gemm_best_c3_f64 | gemm_best_c3_f64_batch: f64 = best::gemm::<f64, 64, 64, 16, 4>;
        gemm_best_c4_f32 | gemm_best_c4_f32_batch: f32 = best::gemm::<f32, 128, 128, 8, 2>, launch_bounds(256, 2);
        gemm_best_c4_f64 | gemm_best_c4_f64_batch: f64 = best::gemm::<f64, 128, 128, 8, 2>;
        // -- big-tile: f32 16x8 per thread, f64 8x8 (see registry); one block per SM --
        gemm_big_tile_c1_f32: f32 = big_tile::gemm::<f32, 256, 128, 8, 3, 16, 8, 4>, launch_bounds(256, 1);
        gemm_big_tile_c1_f64: f64 = big_tile::gemm::<f64, 128, 128, 8, 3, 8, 8, 4>, launch_bounds(256, 1);
        gemm_big_tile_c2_f32: f32 = big_tile::gemm::<f32, 256, 128, 16, 3, 16, 8, 4>, launch_bounds(256, 1);
        gemm_big_tile_c2_f64: f64 = big_tile::gemm::<f64, 128, 128, 16, 3, 8, 8, 4>, launch_bounds(256, 1);
        gemm_big_tile_c3_f32: f32 = big_tile::gemm::<f32, 128, 128, 8, 4, 16, 8, 4>, launch_bounds(128, 2);
        gemm_big_tile_c3_f64: f64 = big_tile::gemm::<f64, 128, 64, 8, 4, 8, 8, 4>, launch_bounds(128, 2);
        gemm_big_tile_c4_f32: f32 = big_tile::gemm::<f32, 256, 128, 8, 4, 16, 8, 4>, launch_bounds(256, 1);
        gemm_big_tile_c4_f64: f64 = big_tile::gemm::<f64, 128, 128, 8, 4, 8, 8, 4>, launch_bounds(256, 1);
        gemm_big_tile_c5_f32: f32 = big_tile::gemm::<f32, 256, 128, 16, 3, 16, 8, 2>, launch_bounds(256, 1);
        gemm_big_tile_c5_f64: f64 = big_tile::gemm::<f64, 128, 128, 16, 3, 8, 8, 2>, launch_bounds(256, 1);
        gemm_big_tile_c6_f32: f32 = big_tile::gemm::<f32, 256, 128, 32, 3, 16, 8, 4>, launch_bounds(256, 1);
        gemm_big_tile_c6_f64: f64 = big_tile::gemm::<f64, 128, 128, 32, 3, 8, 8, 4>, launch_bounds(256, 1);
        gemm_big_tile_c7_f32: f32 = big_tile::gemm::<f32, 256, 128, 32, 3, 16, 8, 2>, launch_bounds(256, 1);
        gemm_big_tile_c7_f64: f64 = big_tile::gemm::<f64, 128, 128, 32, 3, 8, 8, 2>, launch_bounds(256, 1);
        gemm_split_k_f32: f32 = split_k::partial::<f32, 256, 128, 16, 3, 16, 8, 2>, launch_bounds(256, 1);
        gemm_split_k_f64: f64 = split_k::partial::<f64, 128, 128, 16, 3, 8, 8, 2>, launch_bounds(256, 1);
        gemm_split_k_reduce_f32: f32 = split_k::reduce::<f32>;
        gemm_split_k_reduce_f64: f64 = split_k::reduce::<f64>;
        gemm_transpose_f32: f32 = transpose::transpose::<f32>;
        gemm_transpose_f64: f64 = transpose::transpose::<f64>;
        // -- tensor cores, chapter 1: mma.sync (TF32 and 3xTF32 take f32, DMMA f64) --
        gemm_tc_tf32_basic_f32: f32 = tc_tf32_basic::gemm;
        gemm_tc_tf32_c1_f32: f32 = tc_tf32::gemm::<Truncated, 128, 128, 32, 3, 2, 8>, launch_bounds(128, 2);
        gemm_tc_tf32_c2_f32: f32 = tc_tf32::gemm::<Truncated, 128, 256, 32, 3, 2, 8>, launch_bounds(256, 1);
        gemm_tc_tf32_c3_f32: f32 = tc_tf32::gemm::<Truncated, 128, 128, 32, 4, 2, 8>, launch_bounds(128, 2);
        gemm_tc_tf32_c4_f32: f32 = tc_tf32::gemm::<Truncated, 64, 128, 32, 4, 1, 8>, launch_bounds(128, 3);
        gemm_tc_tf32_c5_f32: f32 = tc_tf32::gemm::<Rounded, 128, 128, 32, 3, 2, 4>, launch_bounds(256, 1);
        gemm_tc_tf32_c6_f32: f32 = tc_tf32::gemm::<Rounded, 128, 128, 32, 4, 2, 4>, launch_bounds(256, 1);
        gemm_tc_3xtf32_c1_f32: f32 = tc_3xtf32::gemm::<64, 64, 32, 4, 1, 4>, launch_bounds(128, 3);
        gemm_tc_3xtf32_c2_f32: f32 = tc_3xtf32::gemm::<64, 64, 32, 3, 1, 4>, launch_bounds(128, 3);
        gemm_tc_3xtf32_c3_f32: f32 = tc_3xtf32::gemm::<64, 64, 32, 4, 1, 4>, launch_bounds(128, 2);
        gemm_tc_3xtf32_c4_f32: f32 = tc_3xtf32::gemm::<128, 64, 32, 4, 1, 4>, launch_bounds(256, 1);
        gemm_tc_f64_c1_f64 | gemm_tc_f64_c1_f64_batch: f64 = tc_f64::gemm::<128, 128, 16, 3, 2, 4>, launch_bounds(256, 1);
        gemm_tc_f64_c2_f64 | gemm_tc_f64_c2_f64_batch: f64 = tc_f64::gemm::<128, 64, 16, 4, 2, 4>, launch_bounds(128, 2);
        gemm_tc_f64_c3_f64 | gemm_tc_f64_c3_f64_batch: f64 = tc_f64::gemm::<64, 64, 16, 4, 1, 4>, launch_bounds(128, 3);
        gemm_tc_f64_c4_f64 | gemm_tc_f64_c4_f64_batch: f64 = tc_f64::gemm::<128, 128, 16, 4, 2, 4>, launch_bounds(256, 1);
        gemm_tc_f64_c5_f64 | gemm_tc_f64_c5_f64_batch: f64 = tc_f64::gemm::<64, 128, 16, 4, 1, 8>, launch_bounds(128, 2);
    }
}
#[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_90a")))]
pub use portable::*;

// -- tensor cores, chapter 2: Hopper (sm_90a only on the GPU) --
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
mod hopper {
    use super::*;
    gemm_kernels! {
        HOPPER:
    gemm_wgmma_tf32_basic_f32: f32 = wgmma_tf32_basic::gemm;
    // Each TF32 kernel's `_batch` twin walks every member of a strided batch (`Tf32Pipeline`'s
    // `BATCH`); the kernel itself computes one problem, as it was.
    gemm_wgmma_tf32_c1_f32: f32 + maps = wgmma_tf32::gemm::<128, 256, 4, true, false, 8, 1, false>, launch_bounds(384, 1);
    gemm_wgmma_tf32_c1_f32_batch: f32 + maps = wgmma_tf32::gemm::<128, 256, 4, true, false, 8, 1, true>, launch_bounds(384, 1);
    gemm_wgmma_tf32_c2_f32: f32 + maps = wgmma_tf32::gemm::<128, 256, 4, false, false, 8, 1, false>, launch_bounds(384, 1);
    gemm_wgmma_tf32_c2_f32_batch: f32 + maps = wgmma_tf32::gemm::<128, 256, 4, false, false, 8, 1, true>, launch_bounds(384, 1);
    gemm_wgmma_tf32_c4_f32: f32 + maps = wgmma_tf32::gemm::<128, 256, 4, true, false, 16, 1, false>, launch_bounds(384, 1);
    gemm_wgmma_tf32_c4_f32_batch: f32 + maps = wgmma_tf32::gemm::<128, 256, 4, true, false, 16, 1, true>, launch_bounds(384, 1);
    gemm_wgmma_tf32_c3_f32: f32 + maps = wgmma_tf32::gemm::<64, 128, 6, true, false, 8, 1, false>, launch_bounds(384, 1);
    gemm_wgmma_tf32_c3_f32_batch: f32 + maps = wgmma_tf32::gemm::<64, 128, 6, true, false, 8, 1, true>, launch_bounds(384, 1);
    gemm_wgmma_tf32_c5_f32: f32 + maps = wgmma_tf32::gemm::<128, 256, 4, true, false, 8, 2, false>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_tf32_c5_f32_batch: f32 + maps = wgmma_tf32::gemm::<128, 256, 4, true, false, 8, 2, true>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_tf32_c6_f32: f32 + maps = wgmma_tf32::gemm::<128, 256, 4, true, false, 16, 2, false>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_tf32_c6_f32_batch: f32 + maps = wgmma_tf32::gemm::<128, 256, 4, true, false, 16, 2, true>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_3xtf32_c1_f32: f32 + maps = wgmma_tf32::gemm::<64, 128, 4, false, true, 8, 1, false>, launch_bounds(384, 1);
    gemm_wgmma_3xtf32_c1_f32_batch: f32 + maps = wgmma_tf32::gemm::<64, 128, 4, false, true, 8, 1, true>, launch_bounds(384, 1);
    gemm_wgmma_3xtf32_c2_f32: f32 + maps = wgmma_tf32::gemm::<64, 128, 4, false, true, 8, 2, false>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_3xtf32_c2_f32_batch: f32 + maps = wgmma_tf32::gemm::<64, 128, 4, false, true, 8, 2, true>, launch_bounds(384, 1), cluster(2);
    // 3xTF32's pass before the GEMM: the largest |x| of each row of A and column of B.
    gemm_ranges_f32 | gemm_ranges_f32_batch: f32 = ranges::max_abs_bits, launch_bounds(128, 8);
        // -- tensor cores, chapter 3: 16-bit types on the skeleton --
    gemm_wgmma_16bit_c1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_16bit::Plain<4>>, launch_bounds(384, 1);
    gemm_wgmma_16bit_c1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_16bit::Plain<4>>, launch_bounds(384, 1);
    gemm_wgmma_cluster_c1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_cluster::SharedA<4, 2>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_cluster_c1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_cluster::SharedA<4, 2>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_tma_store_c1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_tma_store_c1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_tma_store_c2_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>>>, launch_bounds(384, 1);
    gemm_wgmma_tma_store_c2_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>>>, launch_bounds(384, 1);
    gemm_wgmma_tma_store_c3_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<3, 2>, true>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_tma_store_c3_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<3, 2>, true>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_tma_store_c4_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_tma_store_c4_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_tma_store_c5_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>>, launch_bounds(384, 1);
    gemm_wgmma_tma_store_c5_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>>, launch_bounds(384, 1);
    gemm_wgmma_pingpong_c1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_tma_store::TmaStore<wgmma_pingpong::PingPong<wgmma_cluster::SharedA<5, 2>>>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_pingpong_c1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_tma_store::TmaStore<wgmma_pingpong::PingPong<wgmma_cluster::SharedA<5, 2>>>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_pingpong_c2_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_pingpong::PingPong<wgmma_cluster::SharedA<5, 2>>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_pingpong_c2_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_pingpong::PingPong<wgmma_cluster::SharedA<5, 2>>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_split_k_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_split_k::SplitK<wgmma_16bit::Plain<4>>>, launch_bounds(384, 1);
    gemm_wgmma_split_k_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_split_k::SplitK<wgmma_16bit::Plain<4>>>, launch_bounds(384, 1);
    gemm_transpose_bf16: bf16 + maps = transpose::transpose_half::<Bf16>;
    gemm_transpose_f16: f16 + maps = transpose::transpose_half::<F16>;
    gemm_pitched_copy_bf16: bf16 + maps = pitched_copy::pitched_copy::<Bf16>;
    gemm_pitched_copy_f16: f16 + maps = pitched_copy::pitched_copy::<F16>;
    gemm_wgmma_split_k_reduce_bf16: bf16 + reduce = wgmma_split_k::reduce::<Bf16>;
    gemm_wgmma_split_k_reduce_f16: f16 + reduce = wgmma_split_k::reduce::<F16>;
    // The unfused epilogue: a kernel of its own over C after the GEMM (the fused one's baseline).
    gemm_bias_activation_bf16: bf16 + reduce = bias_activation::bias_activation::<Bf16>;
    gemm_bias_activation_f16: f16 + reduce = bias_activation::bias_activation::<F16>;
    // The amax epilogue's last step: the gathered word to (amax, scale), and back to zero.
    gemm_amax_scale: u32 + words = crate::fused::finish_amax;
        // -- chapter 4: FP8 --
    gemm_wgmma_fp8_c1_e4m3: e4m3 + maps = wgmma_fp8::gemm::<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>, E4m3>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_fp8_c2_e4m3: e4m3 + maps = wgmma_fp8::gemm::<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, E4m3>, launch_bounds(384, 1);
    gemm_wgmma_fp8_c3_e4m3: e4m3 + maps = wgmma_fp8::gemm::<wgmma_tma_store::TmaStore<wgmma_pingpong::PingPong<wgmma_cluster::SharedA<6, 2>>, false, true>, E4m3>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_fp8_c4_e4m3: e4m3 + maps = wgmma_fp8::gemm::<wgmma_tma_store::TmaStore<wgmma_pingpong::PingPong<wgmma_16bit::Plain<6>>, false, true>, E4m3>, launch_bounds(384, 1);
    gemm_wgmma_fp8_c5_e4m3: e4m3 + maps = wgmma_fp8_block::gemm::<4, { wgmma_fp8_block::PER_TENSOR }, 1, 3, E4m3, { wgmma_fp8_block::EVERY_TILE }>, launch_bounds(512, 1);
    gemm_wgmma_fp8_c6_e4m3: e4m3 + maps = wgmma_fp8_block::gemm::<5, { wgmma_fp8_block::PER_TENSOR }, 1, 2, E4m3, { wgmma_fp8_block::EVERY_TILE }>, launch_bounds(384, 1);
    // B in e5m2 (training's backward pass: the gradients), one scale per tensor.
    gemm_wgmma_fp8_c1_e4m3_e5m2: e4m3 + maps = wgmma_fp8::gemm::<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>, E5m2>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_fp8_c2_e4m3_e5m2: e4m3 + maps = wgmma_fp8::gemm::<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, E5m2>, launch_bounds(384, 1);
    gemm_wgmma_fp8_c3_e4m3_e5m2: e4m3 + maps = wgmma_fp8::gemm::<wgmma_tma_store::TmaStore<wgmma_pingpong::PingPong<wgmma_cluster::SharedA<6, 2>>, false, true>, E5m2>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_fp8_c4_e4m3_e5m2: e4m3 + maps = wgmma_fp8::gemm::<wgmma_tma_store::TmaStore<wgmma_pingpong::PingPong<wgmma_16bit::Plain<6>>, false, true>, E5m2>, launch_bounds(384, 1);
    gemm_wgmma_fp8_c5_e4m3_e5m2: e4m3 + maps = wgmma_fp8_block::gemm::<4, { wgmma_fp8_block::PER_TENSOR }, 1, 3, E5m2, { wgmma_fp8_block::EVERY_TILE }>, launch_bounds(512, 1);
    gemm_wgmma_fp8_c6_e4m3_e5m2: e4m3 + maps = wgmma_fp8_block::gemm::<5, { wgmma_fp8_block::PER_TENSOR }, 1, 2, E5m2, { wgmma_fp8_block::EVERY_TILE }>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_c1_e4m3: e4m3 + maps = wgmma_fp8_block::gemm::<5, { wgmma_fp8_block::ONE_SLICE }, 1, 2, E4m3, { wgmma_fp8_block::EVERY_TILE }>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_c2_e4m3: e4m3 + maps = wgmma_fp8_block::gemm::<6, { wgmma_fp8_block::ONE_SLICE }, 1, 2, E4m3, { wgmma_fp8_block::EVERY_TILE }>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_c3_e4m3: e4m3 + maps = wgmma_fp8_block::gemm::<5, { wgmma_fp8_block::TWO_SLICES }, 1, 2, E4m3, { wgmma_fp8_block::EVERY_TILE }>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_c4_e4m3: e4m3 + maps = wgmma_fp8_block::gemm::<5, { wgmma_fp8_block::ONE_SLICE }, 2, 2, E4m3, { wgmma_fp8_block::EVERY_TILE }>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_fp8_block_c5_e4m3: e4m3 + maps = wgmma_fp8_block::gemm::<5, { wgmma_fp8_block::TWO_CHAINS }, 1, 2, E4m3, { wgmma_fp8_block::EVERY_TILE }>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_c6_e4m3: e4m3 + maps = wgmma_fp8_block::gemm::<5, { wgmma_fp8_block::TWO_PER_WAIT }, 1, 2, E4m3, { wgmma_fp8_block::EVERY_TILE }>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_c7_e4m3: e4m3 + maps = wgmma_fp8_block::gemm::<4, { wgmma_fp8_block::ONE_SLICE }, 1, 3, E4m3, { wgmma_fp8_block::EVERY_TILE }>, launch_bounds(512, 1);
    gemm_wgmma_fp8_block_c8_e4m3: e4m3 + maps = wgmma_fp8_block::gemm::<5, { wgmma_fp8_block::TWO_PER_WAIT_STAGED }, 1, 2, E4m3, { wgmma_fp8_block::EVERY_TILE }>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_c9_e4m3: e4m3 + maps = wgmma_fp8_block::gemm::<4, { wgmma_fp8_block::ONE_SLICE_STAGED }, 1, 3, E4m3, { wgmma_fp8_block::EVERY_TILE }>, launch_bounds(512, 1);
    gemm_wgmma_fp8_block_c10_e4m3: e4m3 + maps = wgmma_fp8_block::gemm::<4, { wgmma_fp8_block::ONE_SLICE_STAGED }, 1, 3, E4m3, { wgmma_fp8_block::STREAM_K_GRID }>, launch_bounds(512, 1);
    gemm_wgmma_fp8_block_c11_e4m3: e4m3 + maps = wgmma_fp8_block::gemm::<5, { wgmma_fp8_block::TWO_PER_WAIT_STAGED }, 1, 2, E4m3, { wgmma_fp8_block::PACKED_MASKED }>, launch_bounds(384, 1);
    gemm_wgmma_layouts_nn_c1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>, false, false>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_layouts_nn_c1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>, false, false>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_layouts_nn_c2_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, false, false>>, launch_bounds(384, 1);
    gemm_wgmma_layouts_nn_c3_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedB<4, 2>, false, true>, false, false>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_layouts_nn_c2_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, false, false>>, launch_bounds(384, 1);
    gemm_wgmma_layouts_nn_c3_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedB<4, 2>, false, true>, false, false>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_layouts_nn_c4_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 4>, false, true>, false, false>>, launch_bounds(384, 1), cluster(4);
    gemm_wgmma_layouts_nn_c4_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 4>, false, true>, false, false>>, launch_bounds(384, 1), cluster(4);
    gemm_wgmma_layouts_tn_c1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>, true, false>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_layouts_tn_c1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>, true, false>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_layouts_tn_c2_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, true, false>>, launch_bounds(384, 1);
    gemm_wgmma_layouts_tn_c3_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedB<4, 2>, false, true>, true, false>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_layouts_tn_c2_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, true, false>>, launch_bounds(384, 1);
    gemm_wgmma_layouts_tn_c3_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedB<4, 2>, false, true>, true, false>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_layouts_tn_c4_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 4>, false, true>, true, false>>, launch_bounds(384, 1), cluster(4);
    gemm_wgmma_layouts_tn_c4_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 4>, false, true>, true, false>>, launch_bounds(384, 1), cluster(4);
    gemm_wgmma_layouts_nt_c1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>, false, true>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_layouts_nt_c1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>, false, true>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_layouts_nt_c2_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, false, true>>, launch_bounds(384, 1);
    gemm_wgmma_layouts_nt_c3_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedB<4, 2>, false, true>, false, true>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_layouts_nt_c2_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, false, true>>, launch_bounds(384, 1);
    gemm_wgmma_layouts_nt_c3_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedB<4, 2>, false, true>, false, true>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_layouts_nt_c4_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 4>, false, true>, false, true>>, launch_bounds(384, 1), cluster(4);
    gemm_wgmma_layouts_nt_c4_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 4>, false, true>, false, true>>, launch_bounds(384, 1), cluster(4);
    gemm_wgmma_layouts_tt_c1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>, true, true>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_layouts_tt_c1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>, true, true>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_layouts_tt_c2_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, true, true>>, launch_bounds(384, 1);
    gemm_wgmma_layouts_tt_c3_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedB<4, 2>, false, true>, true, true>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_layouts_tt_c2_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, true, true>>, launch_bounds(384, 1);
    gemm_wgmma_layouts_tt_c3_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedB<4, 2>, false, true>, true, true>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_layouts_tt_c4_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 4>, false, true>, true, true>>, launch_bounds(384, 1), cluster(4);
    gemm_wgmma_layouts_tt_c4_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_layouts::Layouts<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 4>, false, true>, true, true>>, launch_bounds(384, 1), cluster(4);
    gemm_wgmma_waves_nn_t1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_waves::Waves<4, 3, false, false>>, launch_bounds(512, 1);
    gemm_wgmma_waves_nn_t1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_waves::Waves<4, 3, false, false>>, launch_bounds(512, 1);
    gemm_wgmma_waves_tn_t1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_waves::Waves<4, 3, true, false>>, launch_bounds(512, 1);
    gemm_wgmma_waves_tn_t1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_waves::Waves<4, 3, true, false>>, launch_bounds(512, 1);
    gemm_wgmma_waves_nt_t1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_waves::Waves<4, 3, false, true>>, launch_bounds(512, 1);
    gemm_wgmma_waves_nt_t1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_waves::Waves<4, 3, false, true>>, launch_bounds(512, 1);
    gemm_wgmma_waves_tt_t1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_waves::Waves<4, 3, true, true>>, launch_bounds(512, 1);
    gemm_wgmma_waves_tt_t1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_waves::Waves<4, 3, true, true>>, launch_bounds(512, 1);
    gemm_wgmma_stream_k_nn_c1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_stream_k::Streamed<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, false, false>>, launch_bounds(384, 1);
    gemm_wgmma_stream_k_nn_c1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_stream_k::Streamed<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, false, false>>, launch_bounds(384, 1);
    gemm_wgmma_stream_k_tn_c1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_stream_k::Streamed<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, true, false>>, launch_bounds(384, 1);
    gemm_wgmma_stream_k_tn_c1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_stream_k::Streamed<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, true, false>>, launch_bounds(384, 1);
    gemm_wgmma_stream_k_nt_c1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_stream_k::Streamed<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, false, true>>, launch_bounds(384, 1);
    gemm_wgmma_stream_k_nt_c1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_stream_k::Streamed<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, false, true>>, launch_bounds(384, 1);
    gemm_wgmma_stream_k_tt_c1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_stream_k::Streamed<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, true, true>>, launch_bounds(384, 1);
    gemm_wgmma_stream_k_tt_c1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_stream_k::Streamed<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, true, true>>, launch_bounds(384, 1);
    gemm_wgmma_queue_nn_c1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>, false, false>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_queue_nn_c1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>, false, false>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_queue_nn_c2_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, false, false>>, launch_bounds(384, 1);
    gemm_wgmma_queue_nn_c2_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, false, false>>, launch_bounds(384, 1);
    gemm_wgmma_queue_tn_c1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>, true, false>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_queue_tn_c1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>, true, false>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_queue_tn_c2_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, true, false>>, launch_bounds(384, 1);
    gemm_wgmma_queue_tn_c2_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, true, false>>, launch_bounds(384, 1);
    gemm_wgmma_queue_nt_c1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>, false, true>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_queue_nt_c1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>, false, true>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_queue_nt_c2_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, false, true>>, launch_bounds(384, 1);
    gemm_wgmma_queue_nt_c2_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, false, true>>, launch_bounds(384, 1);
    gemm_wgmma_queue_tt_c1_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>, true, true>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_queue_tt_c1_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>, true, true>>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_queue_tt_c2_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, true, true>>, launch_bounds(384, 1);
    gemm_wgmma_queue_tt_c2_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>, true, true>>, launch_bounds(384, 1);
    gemm_wgmma_queue_nn_c3_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<3>, true, true>, false, false>>, launch_bounds(384, 1);
    gemm_wgmma_queue_nn_c3_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<3>, true, true>, false, false>>, launch_bounds(384, 1);
    gemm_wgmma_queue_tn_c3_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<3>, true, true>, true, false>>, launch_bounds(384, 1);
    gemm_wgmma_queue_tn_c3_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<3>, true, true>, true, false>>, launch_bounds(384, 1);
    gemm_wgmma_queue_nt_c3_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<3>, true, true>, false, true>>, launch_bounds(384, 1);
    gemm_wgmma_queue_nt_c3_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<3>, true, true>, false, true>>, launch_bounds(384, 1);
    gemm_wgmma_queue_tt_c3_bf16: bf16 + maps = wgmma_16bit::gemm::<Bf16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<3>, true, true>, true, true>>, launch_bounds(384, 1);
    gemm_wgmma_queue_tt_c3_f16: f16 + maps = wgmma_16bit::gemm::<F16, wgmma_queue::Queued<wgmma_tma_store::TmaStore<wgmma_16bit::Plain<3>, true, true>, true, true>>, launch_bounds(384, 1);
    gemm_wgmma_fp8_narrow_n8_e4m3: e4m3 + maps = wgmma_narrow::gemm::<wgmma_narrow::E4m3, 4, true>, launch_bounds(384, 1);
    gemm_wgmma_fp8_narrow_n16_e4m3: e4m3 + maps = wgmma_narrow::gemm::<wgmma_narrow::E4m3, 8, true>, launch_bounds(384, 1);
    gemm_wgmma_fp8_narrow_n32_e4m3: e4m3 + maps = wgmma_narrow::gemm::<wgmma_narrow::E4m3, 16, true>, launch_bounds(384, 1);
    gemm_wgmma_fp8_narrow_n64_e4m3: e4m3 + maps = wgmma_narrow::gemm::<wgmma_narrow::E4m3, 32, true>, launch_bounds(384, 1);
    gemm_wgmma_fp8_narrow_n128_e4m3: e4m3 + maps = wgmma_narrow::gemm::<wgmma_narrow::E4m3, 64, true>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_narrow_n8_e4m3: e4m3 + maps = wgmma_narrow::gemm::<wgmma_narrow::E4m3Blocks, 4, true>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_narrow_n16_e4m3: e4m3 + maps = wgmma_narrow::gemm::<wgmma_narrow::E4m3Blocks, 8, true>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_narrow_n32_e4m3: e4m3 + maps = wgmma_narrow::gemm::<wgmma_narrow::E4m3Blocks, 16, true>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_narrow_n64_e4m3: e4m3 + maps = wgmma_narrow::gemm::<wgmma_narrow::E4m3Blocks, 32, true>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_narrow_n128_e4m3: e4m3 + maps = wgmma_narrow::gemm::<wgmma_narrow::E4m3Blocks, 64, true>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_swap_w16_e4m3: e4m3 + maps = wgmma_fp8_block_swap::gemm::<8, 2, 1, false>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_swap_w24_e4m3: e4m3 + maps = wgmma_fp8_block_swap::gemm::<12, 2, 1, false>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_swap_w32_e4m3: e4m3 + maps = wgmma_fp8_block_swap::gemm::<16, 2, 1, false>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_swap_w48_e4m3: e4m3 + maps = wgmma_fp8_block_swap::gemm::<24, 2, 1, false>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_swap_w56_e4m3: e4m3 + maps = wgmma_fp8_block_swap::gemm::<28, 2, 1, false>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_swap_w64_e4m3: e4m3 + maps = wgmma_fp8_block_swap::gemm::<32, 2, 1, false>, launch_bounds(384, 1);
    gemm_wgmma_fp8_block_swap_w116_e4m3: e4m3 + maps = wgmma_fp8_block_swap::gemm::<8, 1, 1, false>, launch_bounds(256, 1);
    gemm_wgmma_fp8_block_swap_w132_e4m3: e4m3 + maps = wgmma_fp8_block_swap::gemm::<16, 1, 1, false>, launch_bounds(256, 1);
    gemm_wgmma_fp8_block_swap_w164_e4m3: e4m3 + maps = wgmma_fp8_block_swap::gemm::<32, 1, 1, false>, launch_bounds(256, 1);
    gemm_wgmma_fp8_block_swap_w216_e4m3: e4m3 + maps = wgmma_fp8_block_swap::gemm::<8, 1, 2, false>, launch_bounds(256, 1), cluster(2);
    gemm_wgmma_fp8_block_swap_w232_e4m3: e4m3 + maps = wgmma_fp8_block_swap::gemm::<16, 1, 2, false>, launch_bounds(256, 1), cluster(2);
    gemm_wgmma_fp8_block_swap_w316_e4m3: e4m3 + maps = wgmma_fp8_block_swap::gemm::<8, 2, 2, false>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_fp8_block_swap_w332_e4m3: e4m3 + maps = wgmma_fp8_block_swap::gemm::<16, 2, 2, false>, launch_bounds(384, 1), cluster(2);
    gemm_wgmma_fp8_block_swap_w432_e4m3: e4m3 + maps = wgmma_fp8_block_swap::gemm::<16, 1, 1, true>, launch_bounds(256, 1);
    gemm_wgmma_fp8_block_swap_w448_e4m3: e4m3 + maps = wgmma_fp8_block_swap::gemm::<24, 1, 1, true>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w32_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 16, 128, false, false>, launch_bounds(384, 1);
    gemm_wgmma_swap_tn_w48_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 24, 128, false, false>, launch_bounds(384, 1);
    gemm_wgmma_swap_tn_w64_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 32, 128, false, false>, launch_bounds(384, 1);
    gemm_wgmma_swap_tn_w116_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 8, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w132_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 16, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w148_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 24, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w156_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 28, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w164_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 32, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w232_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 16, 64, true, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w248_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 24, 64, true, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w264_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 32, 64, true, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w332_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 16, 16, false, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w348_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 24, 16, false, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w356_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 28, 16, false, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w364_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 32, 16, false, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w432_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 16, 16, false, true>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w464_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 32, 16, false, true>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w532_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 16, 64, false, true>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w564_bf16: bf16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<Bf16>, 32, 64, false, true>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w32_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 16, 128, false, false>, launch_bounds(384, 1);
    gemm_wgmma_swap_tn_w48_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 24, 128, false, false>, launch_bounds(384, 1);
    gemm_wgmma_swap_tn_w64_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 32, 128, false, false>, launch_bounds(384, 1);
    gemm_wgmma_swap_tn_w116_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 8, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w132_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 16, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w148_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 24, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w156_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 28, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w164_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 32, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w232_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 16, 64, true, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w248_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 24, 64, true, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w264_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 32, 64, true, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w332_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 16, 16, false, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w348_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 24, 16, false, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w356_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 28, 16, false, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w364_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 32, 16, false, false>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w432_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 16, 16, false, true>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w464_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 32, 16, false, true>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w532_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 16, 64, false, true>, launch_bounds(256, 1);
    gemm_wgmma_swap_tn_w564_f16: f16 + maps = wgmma_swap::gemm::<wgmma_narrow::Sixteen<F16>, 32, 64, false, true>, launch_bounds(256, 1);
    gemm_wgmma_fp8_swap_w32_e4m3: e4m3 + maps = wgmma_swap::gemm::<wgmma_narrow::E4m3, 16, 128, false, false>, launch_bounds(384, 1);
    gemm_wgmma_fp8_swap_w48_e4m3: e4m3 + maps = wgmma_swap::gemm::<wgmma_narrow::E4m3, 24, 128, false, false>, launch_bounds(384, 1);
    gemm_wgmma_fp8_swap_w64_e4m3: e4m3 + maps = wgmma_swap::gemm::<wgmma_narrow::E4m3, 32, 128, false, false>, launch_bounds(384, 1);
    gemm_wgmma_fp8_swap_w116_e4m3: e4m3 + maps = wgmma_swap::gemm::<wgmma_narrow::E4m3, 8, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_fp8_swap_w132_e4m3: e4m3 + maps = wgmma_swap::gemm::<wgmma_narrow::E4m3, 16, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_fp8_swap_w148_e4m3: e4m3 + maps = wgmma_swap::gemm::<wgmma_narrow::E4m3, 24, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_fp8_swap_w156_e4m3: e4m3 + maps = wgmma_swap::gemm::<wgmma_narrow::E4m3, 28, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_fp8_swap_w164_e4m3: e4m3 + maps = wgmma_swap::gemm::<wgmma_narrow::E4m3, 32, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_fp8_swap_w232_e4m3: e4m3 + maps = wgmma_swap::gemm::<wgmma_narrow::E4m3, 16, 64, true, false>, launch_bounds(256, 1);
    gemm_wgmma_fp8_swap_w248_e4m3: e4m3 + maps = wgmma_swap::gemm::<wgmma_narrow::E4m3, 24, 64, true, false>, launch_bounds(256, 1);
    gemm_wgmma_fp8_swap_w264_e4m3: e4m3 + maps = wgmma_swap::gemm::<wgmma_narrow::E4m3, 32, 64, true, false>, launch_bounds(256, 1);
    gemm_wgmma_fp8_swap_w332_e4m3: e4m3 + maps = wgmma_swap::gemm::<wgmma_narrow::E4m3, 16, 16, false, false>, launch_bounds(256, 1);
    gemm_wgmma_fp8_swap_w348_e4m3: e4m3 + maps = wgmma_swap::gemm::<wgmma_narrow::E4m3, 24, 16, false, false>, launch_bounds(256, 1);
    gemm_wgmma_fp8_swap_w356_e4m3: e4m3 + maps = wgmma_swap::gemm::<wgmma_narrow::E4m3, 28, 16, false, false>, launch_bounds(256, 1);
    gemm_wgmma_fp8_swap_w364_e4m3: e4m3 + maps = wgmma_swap::gemm::<wgmma_narrow::E4m3, 32, 16, false, false>, launch_bounds(256, 1);
    // TF32 on the swapped tiles (T,N), and their prefill tiles of 128 or 256 rows of weights
    // by 128 tokens (`--tile 1000 + W`).
    gemm_wgmma_tf32_swap_w32_f32: f32 + maps = wgmma_swap::gemm::<wgmma_narrow::Tf32Operands, 16, 128, false, false>, launch_bounds(384, 1);
    gemm_wgmma_tf32_swap_w48_f32: f32 + maps = wgmma_swap::gemm::<wgmma_narrow::Tf32Operands, 24, 128, false, false>, launch_bounds(384, 1);
    gemm_wgmma_tf32_swap_w64_f32: f32 + maps = wgmma_swap::gemm::<wgmma_narrow::Tf32Operands, 32, 128, false, false>, launch_bounds(384, 1);
    gemm_wgmma_tf32_swap_w116_f32: f32 + maps = wgmma_swap::gemm::<wgmma_narrow::Tf32Operands, 8, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_tf32_swap_w132_f32: f32 + maps = wgmma_swap::gemm::<wgmma_narrow::Tf32Operands, 16, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_tf32_swap_w148_f32: f32 + maps = wgmma_swap::gemm::<wgmma_narrow::Tf32Operands, 24, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_tf32_swap_w156_f32: f32 + maps = wgmma_swap::gemm::<wgmma_narrow::Tf32Operands, 28, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_tf32_swap_w164_f32: f32 + maps = wgmma_swap::gemm::<wgmma_narrow::Tf32Operands, 32, 64, false, false>, launch_bounds(256, 1);
    gemm_wgmma_tf32_swap_w248_f32: f32 + maps = wgmma_swap::gemm::<wgmma_narrow::Tf32Operands, 24, 64, true, false>, launch_bounds(256, 1);
    gemm_wgmma_tf32_swap_w264_f32: f32 + maps = wgmma_swap::gemm::<wgmma_narrow::Tf32Operands, 32, 64, true, false>, launch_bounds(256, 1);
    gemm_wgmma_tf32_swap_w332_f32: f32 + maps = wgmma_swap::gemm::<wgmma_narrow::Tf32Operands, 16, 16, false, false>, launch_bounds(256, 1);
    gemm_wgmma_tf32_swap_w348_f32: f32 + maps = wgmma_swap::gemm::<wgmma_narrow::Tf32Operands, 24, 16, false, false>, launch_bounds(256, 1);
    gemm_wgmma_tf32_swap_w356_f32: f32 + maps = wgmma_swap::gemm::<wgmma_narrow::Tf32Operands, 28, 16, false, false>, launch_bounds(256, 1);
    gemm_wgmma_tf32_swap_w364_f32: f32 + maps = wgmma_swap::gemm::<wgmma_narrow::Tf32Operands, 32, 16, false, false>, launch_bounds(256, 1);
    gemm_wgmma_tf32_swap_w1128_f32: f32 + maps = wgmma_swap::gemm::<wgmma_narrow::Tf32Operands, 64, 128, false, false>, launch_bounds(384, 1);
    gemm_wgmma_tf32_swap_w1256_f32: f32 + maps = wgmma_swap::gemm::<wgmma_narrow::Tf32Operands, 128, 128, false, false>, launch_bounds(384, 1);
    gemm_wgmma_narrow_nn_n8_bf16: bf16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<Bf16>, 4, false>, launch_bounds(384, 1);
    gemm_wgmma_narrow_nn_n8_f16: f16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<F16>, 4, false>, launch_bounds(384, 1);
    gemm_wgmma_narrow_nn_n16_bf16: bf16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<Bf16>, 8, false>, launch_bounds(384, 1);
    gemm_wgmma_narrow_nn_n16_f16: f16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<F16>, 8, false>, launch_bounds(384, 1);
    gemm_wgmma_narrow_nn_n32_bf16: bf16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<Bf16>, 16, false>, launch_bounds(384, 1);
    gemm_wgmma_narrow_nn_n32_f16: f16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<F16>, 16, false>, launch_bounds(384, 1);
    gemm_wgmma_narrow_nn_n64_bf16: bf16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<Bf16>, 32, false>, launch_bounds(384, 1);
    gemm_wgmma_narrow_nn_n64_f16: f16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<F16>, 32, false>, launch_bounds(384, 1);
    gemm_wgmma_narrow_nn_n128_bf16: bf16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<Bf16>, 64, false>, launch_bounds(384, 1);
    gemm_wgmma_narrow_nn_n128_f16: f16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<F16>, 64, false>, launch_bounds(384, 1);
    gemm_wgmma_narrow_tn_n8_bf16: bf16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<Bf16>, 4, true>, launch_bounds(384, 1);
    gemm_wgmma_narrow_tn_n8_f16: f16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<F16>, 4, true>, launch_bounds(384, 1);
    gemm_wgmma_narrow_tn_n16_bf16: bf16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<Bf16>, 8, true>, launch_bounds(384, 1);
    gemm_wgmma_narrow_tn_n16_f16: f16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<F16>, 8, true>, launch_bounds(384, 1);
    gemm_wgmma_narrow_tn_n32_bf16: bf16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<Bf16>, 16, true>, launch_bounds(384, 1);
    gemm_wgmma_narrow_tn_n32_f16: f16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<F16>, 16, true>, launch_bounds(384, 1);
    gemm_wgmma_narrow_tn_n64_bf16: bf16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<Bf16>, 32, true>, launch_bounds(384, 1);
    gemm_wgmma_narrow_tn_n64_f16: f16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<F16>, 32, true>, launch_bounds(384, 1);
    gemm_wgmma_narrow_tn_n128_bf16: bf16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<Bf16>, 64, true>, launch_bounds(384, 1);
    gemm_wgmma_narrow_tn_n128_f16: f16 + maps = wgmma_narrow::gemm::<wgmma_narrow::Sixteen<F16>, 64, true>, launch_bounds(384, 1);
    }
}
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub use hopper::*;

/// Every entry point the emulator can run (those of the sm_90a build included).
#[cfg(not(target_arch = "nvptx64"))]
pub fn all() -> impl Iterator<Item = &'static (&'static str, KernelBody)> {
    PORTABLE.iter().chain(HOPPER)
}

/// The body of the entry point called `name`, for the emulator.
#[cfg(not(target_arch = "nvptx64"))]
pub fn find(name: &str) -> Option<KernelBody> {
    all().find(|(n, _)| *n == name).map(|(_, body)| *body)
}
