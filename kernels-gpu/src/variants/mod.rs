//! One file per kernel. The table of variants (names, descriptions, launch geometry, shape
//! constraints) is [`crate::registry`]; the entry points are [`crate::entry`].
pub mod tiled;
pub mod v0_uncoalesced;
pub mod v1_coalesced;
pub mod v3_shared_tiles;
pub mod v4_padded_tiles;
// -- the 001 progression --
pub mod alc1;
pub mod alc2;
pub mod alc3;
pub mod alcanderian;
pub mod fynv;
pub mod gemm128;
pub mod gemm64;
pub mod v2_local_indices;
pub mod v5_float4;
// -- the 002/003/004 variants --
pub mod blocked_kahan;
pub mod cg_regs;
pub mod cg_shuffle;
pub mod cg_tile2x2;
pub mod kahan;
pub mod naive;
pub mod row_shared;
// -- beyond the documents --
pub mod best;
pub mod big_tile;
pub mod pitched_copy;
pub mod split_k;
pub mod transpose;
// -- tensor cores, chapter 1: mma.sync --
pub mod tc_3xtf32;
pub mod tc_f64;
pub mod tc_tf32;
pub mod tc_tf32_basic;
// -- tensor cores, chapter 2: Hopper's wgmma (built for the GPU in the sm_90a PTX only) --
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod ranges;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_tf32;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_tf32_basic;
// -- tensor cores, chapter 3: 16-bit types on the Hopper skeleton (crate::pipeline) --
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_16bit;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_cluster;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_pingpong;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_split_k;
// The unfused epilogue, the fused one's baseline (crate::fused).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod bias_activation;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_tma_store;
// -- tensor cores, chapter 4: FP8 on the same skeleton --
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_fp8;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_fp8_block;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_fp8_block_swap;
// -- tensor cores, chapter 5: the shapes programs run, on the same skeleton --
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_layouts;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_narrow;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_queue;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_stream_k;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_swap;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_waves;
