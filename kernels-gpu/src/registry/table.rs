//! The table of GPU variants ([`ALL`]), one row per kernel in the order of the course, and the
//! functions its rows point to: each kernel's grid and shared memory for a problem, its tensor
//! maps for a tile and layout, and the shapes it refuses.
use super::row::{
    Layout, Scales, Shape, Target, TmaOperands, Variant, BOTH_DTYPES, HALF_DTYPES, NN_ONLY,
};
use crate::gemm::{Arithmetic, Dtype, Geometry};
use crate::variants::*;

fn any_shape(_: &Shape, _: Dtype) -> Result<(), String> {
    Ok(())
}

fn tiled_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    match tile {
        1 => tiled::geometry::<1, 1>(m, n, k, bytes),
        2 => tiled::geometry::<2, 1>(m, n, k, bytes),
        4 => tiled::geometry::<4, 1>(m, n, k, bytes),
        8 => tiled::geometry::<8, 1>(m, n, k, bytes),
        16 => tiled::geometry::<16, 1>(m, n, k, bytes),
        32 => tiled::geometry::<32, 1>(m, n, k, bytes),
        _ => unreachable!("the host checks --tile against Variant::tiles"),
    }
}

/// `best`'s configurations, by `--tile`: block tile BM×BN, k-step BK, pipeline stages.
fn best_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    match tile {
        1 => best::geometry::<128, 64, 16, 3>(m, n, k, bytes),
        2 => best::geometry::<128, 128, 8, 4>(m, n, k, bytes),
        3 => best::geometry::<64, 64, 16, 4>(m, n, k, bytes),
        4 => best::geometry::<128, 128, 8, 2>(m, n, k, bytes),
        _ => unreachable!("the host checks --tile against Variant::tiles"),
    }
}

/// `big-tile`'s configurations, by `--tile` and element size: block tile BM×BN, k-step BK,
/// stages, thread tile TM×TN (16×8 in f32; 8×8 in f64, whose accumulators take two registers).
fn big_tile_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    match (tile, bytes) {
        (1, 4) => big_tile::geometry::<256, 128, 8, 3, 16, 8>(m, n, k, bytes),
        (2, 4) => big_tile::geometry::<256, 128, 16, 3, 16, 8>(m, n, k, bytes),
        (3, 4) => big_tile::geometry::<128, 128, 8, 4, 16, 8>(m, n, k, bytes),
        (4, 4) => big_tile::geometry::<256, 128, 8, 4, 16, 8>(m, n, k, bytes),
        (1, _) => big_tile::geometry::<128, 128, 8, 3, 8, 8>(m, n, k, bytes),
        (2, _) => big_tile::geometry::<128, 128, 16, 3, 8, 8>(m, n, k, bytes),
        (3, _) => big_tile::geometry::<128, 64, 8, 4, 8, 8>(m, n, k, bytes),
        (4, _) => big_tile::geometry::<128, 128, 8, 4, 8, 8>(m, n, k, bytes),
        (5, 4) => big_tile::geometry::<256, 128, 16, 3, 16, 8>(m, n, k, bytes),
        (6 | 7, 4) => big_tile::geometry::<256, 128, 32, 3, 16, 8>(m, n, k, bytes),
        (5, _) => big_tile::geometry::<128, 128, 16, 3, 8, 8>(m, n, k, bytes),
        (6 | 7, _) => big_tile::geometry::<128, 128, 32, 3, 8, 8>(m, n, k, bytes),
        _ => unreachable!("the host checks --tile against Variant::tiles"),
    }
}

/// `split-k`'s partial launch: `big-tile`'s default configuration (`--tile 5`: k-slices of 16,
/// B read 2 k-steps per load), `tile` splits of k.
fn split_k_geometry(m: u32, n: u32, k: u32, bytes: u32, splits: u32) -> Geometry {
    match bytes {
        4 => split_k::geometry::<256, 128, 16, 3, 16, 8>(m, n, k, bytes, splits),
        _ => split_k::geometry::<128, 128, 16, 3, 8, 8>(m, n, k, bytes, splits),
    }
}

/// `tc-tf32`'s configurations, by `--tile`: block tile BM×BN×BK, stages, warp tile.
fn tc_tf32_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    match tile {
        1 => tc_tf32::geometry::<128, 128, 32, 3, 2, 8>(m, n, k, bytes),
        2 => tc_tf32::geometry::<128, 256, 32, 3, 2, 8>(m, n, k, bytes),
        3 => tc_tf32::geometry::<128, 128, 32, 4, 2, 8>(m, n, k, bytes),
        4 => tc_tf32::geometry::<64, 128, 32, 4, 1, 8>(m, n, k, bytes),
        5 => tc_tf32::geometry::<128, 128, 32, 3, 2, 4>(m, n, k, bytes),
        6 => tc_tf32::geometry::<128, 128, 32, 4, 2, 4>(m, n, k, bytes),
        _ => unreachable!("the host checks --tile against Variant::tiles"),
    }
}

/// `tc-3xtf32`'s configurations, by `--tile`.
fn tc_3xtf32_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    match tile {
        1 => tc_3xtf32::geometry::<64, 64, 32, 4, 1, 4>(m, n, k, bytes),
        2 => tc_3xtf32::geometry::<64, 64, 32, 3, 1, 4>(m, n, k, bytes),
        3 => tc_3xtf32::geometry::<64, 64, 32, 4, 1, 4>(m, n, k, bytes),
        4 => tc_3xtf32::geometry::<128, 64, 32, 4, 1, 4>(m, n, k, bytes),
        _ => unreachable!("the host checks --tile against Variant::tiles"),
    }
}

/// `tc-f64`'s configurations, by `--tile`.
fn tc_f64_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    match tile {
        1 => tc_f64::geometry::<128, 128, 16, 3, 2, 4>(m, n, k, bytes),
        2 => tc_f64::geometry::<128, 64, 16, 4, 2, 4>(m, n, k, bytes),
        3 => tc_f64::geometry::<64, 64, 16, 4, 1, 4>(m, n, k, bytes),
        4 => tc_f64::geometry::<128, 128, 16, 4, 2, 4>(m, n, k, bytes),
        5 => tc_f64::geometry::<64, 128, 16, 4, 1, 8>(m, n, k, bytes),
        _ => unreachable!("the host checks --tile against Variant::tiles"),
    }
}

/// `wgmma-tf32`'s configurations, by `--tile`: block tile BM×BN (BM = 128), stages.
fn wgmma_tf32_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    match tile {
        1 | 2 | 4 | 5 | 6 => wgmma_tf32::geometry::<256, 4, false>(m, n, k, bytes),
        3 => wgmma_tf32::geometry::<128, 6, false>(m, n, k, bytes),
        _ => unreachable!("the host checks --tile against Variant::tiles"),
    }
}

fn wgmma_3xtf32_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    match tile {
        1 | 2 => wgmma_tf32::geometry::<128, 4, true>(m, n, k, bytes),
        _ => unreachable!("the host checks --tile against Variant::tiles"),
    }
}

/// The TMA boxes of the `wgmma` pipeline: A in 32×32 boxes (m × k, four per stage), B in
/// 32 × BN (k × n), both 128-byte swizzled; a persistent grid, whose walk goes over every
/// member of a strided batch.
const fn wgmma_operands(bn: u32) -> TmaOperands {
    TmaOperands {
        a_box: [32, 32],
        b_box: [32, bn],
        swizzle: crate::device::tma::Swizzle::B128,
        persistent: true,
        cluster: 1,
        c_box: None,
        a_transposed: false,
        b_transposed: false,
        stream_k: None,
        batched: true,
        grouped: false,
        ranges: false,
        queue: false,
        early_start: false,
    }
}

/// The 16-bit kernels' boxes: A in 64 m × 64 k (a 128-byte row of m per k), B in 64 k × 128 n.
fn wgmma_16bit_operands(_tile: u32, _layout: Layout) -> TmaOperands {
    TmaOperands {
        a_box: [wgmma_16bit::BK, wgmma_16bit::BK],
        b_box: [wgmma_16bit::BK, wgmma_16bit::BN],
        swizzle: crate::device::tma::Swizzle::B128,
        persistent: true,
        cluster: 1,
        c_box: None,
        a_transposed: false,
        b_transposed: false,
        stream_k: None,
        batched: true,
        grouped: false,
        ranges: false,
        queue: false,
        early_start: false,
    }
}

/// `wgmma-16bit`'s own: it runs grouped GEMMs (its stores stop at each group's last column).
fn wgmma_16bit_grouped_operands(tile: u32, layout: Layout) -> TmaOperands {
    TmaOperands {
        grouped: groups::<wgmma_16bit::Plain<4>>(),
        ..wgmma_16bit_operands(tile, layout)
    }
}

/// Whether configuration `C` of the 16-bit kernels runs grouped GEMMs.
const fn groups<C: wgmma_16bit::Config>() -> bool {
    <wgmma_16bit::Wgmma16<crate::device::half::Bf16, C> as crate::pipeline::Kernel>::GROUPS
}

fn wgmma_16bit_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    match tile {
        1 => wgmma_16bit::geometry::<wgmma_16bit::Plain<4>>(m, n, k, bytes),
        _ => unreachable!("the host checks --tile against Variant::tiles"),
    }
}

fn wgmma_cluster_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    match tile {
        1 => wgmma_16bit::geometry::<wgmma_cluster::SharedA<4, 2>>(m, n, k, bytes),
        _ => unreachable!("the host checks --tile against Variant::tiles"),
    }
}

fn wgmma_cluster_operands(tile: u32, _layout: Layout) -> TmaOperands {
    TmaOperands {
        cluster: 2,
        ..wgmma_16bit_operands(tile, Layout::NN)
    }
}

/// `wgmma-tma-store`'s configurations: 1 on `wgmma-cluster`'s clusters, 2 without clusters, 3
/// with clusters and the whole tile staged (three stages); 4 and 5 as 1 and 2 in the orientation
/// `C = A·B` (two `m64n128k16` per consumer and k-step, `stmatrix.trans`).
fn wgmma_tma_store_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    use wgmma_tma_store::TmaStore;
    match tile {
        1 => wgmma_16bit::geometry::<TmaStore<wgmma_cluster::SharedA<4, 2>>>(m, n, k, bytes),
        2 => wgmma_16bit::geometry::<TmaStore<wgmma_16bit::Plain<4>>>(m, n, k, bytes),
        3 => wgmma_16bit::geometry::<TmaStore<wgmma_cluster::SharedA<3, 2>, true>>(m, n, k, bytes),
        4 => wgmma_16bit::geometry::<TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>>(
            m, n, k, bytes,
        ),
        5 => wgmma_16bit::geometry::<TmaStore<wgmma_16bit::Plain<4>, false, true>>(m, n, k, bytes),
        _ => unreachable!("the host checks --tile against Variant::tiles"),
    }
}

fn wgmma_tma_store_operands(tile: u32, _layout: Layout) -> TmaOperands {
    use wgmma_tma_store::TmaStore;
    TmaOperands {
        cluster: if tile == 2 || tile == 5 { 1 } else { 2 },
        c_box: Some([64, 64]),
        // The direct orientation without clusters: its last tile of a masked group is written
        // from the registers.
        grouped: tile == 5 && groups::<TmaStore<wgmma_16bit::Plain<4>, false, true>>(),
        ..wgmma_16bit_operands(tile, Layout::NN)
    }
}

/// `wgmma-pingpong`'s configurations: 1 with the TMA-store epilogue (default), 2 with direct
/// stores; both in clusters of two sharing A, five stages.
fn wgmma_pingpong_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    use wgmma_pingpong::PingPong;
    use wgmma_tma_store::TmaStore;
    type Base = PingPong<wgmma_cluster::SharedA<5, 2>>;
    match tile {
        1 => wgmma_16bit::geometry::<TmaStore<Base>>(m, n, k, bytes),
        2 => wgmma_16bit::geometry::<Base>(m, n, k, bytes),
        _ => unreachable!("the host checks --tile against Variant::tiles"),
    }
}

fn wgmma_pingpong_operands(tile: u32, _layout: Layout) -> TmaOperands {
    TmaOperands {
        b_box: [wgmma_16bit::BK, 64],
        cluster: 2,
        c_box: (tile == 1).then_some([64, 64]),
        ..wgmma_16bit_operands(tile, Layout::NN)
    }
}

/// `wgmma-split-k`'s partial launch, `parts` parts of k.
fn wgmma_split_k_geometry(m: u32, n: u32, k: u32, bytes: u32, parts: u32) -> Geometry {
    wgmma_split_k::geometry::<wgmma_16bit::Plain<4>>(m, n, k, bytes, parts)
}

/// `wgmma-layouts`' configurations: `wgmma-tma-store:4` (clusters of two along n sharing A),
/// `:5` (none), 3, clusters of two along m sharing B, and 4, clusters of four along n sharing A
/// (a box of A per block), each in the four layouts.
fn wgmma_layouts_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    match tile {
        3 => wgmma_16bit::geometry::<LayoutsSharedB>(m, n, k, bytes),
        4 => wgmma_16bit::geometry::<LayoutsSharedA4>(m, n, k, bytes),
        _ => wgmma_tma_store_geometry(m, n, k, bytes, if tile == 1 { 4 } else { 5 }),
    }
}

/// `wgmma-layouts:4`'s configuration (its N,N entry): clusters of four along n, each block
/// loading one of A's four boxes and multicasting it to the other three.
type LayoutsSharedA4 = wgmma_tma_store::TmaStore<wgmma_cluster::SharedA<4, 4>, false, true>;

/// `wgmma-layouts:3`'s configuration (its N,N entry; the layouts differ in their copies only).
type LayoutsSharedB = wgmma_tma_store::TmaStore<wgmma_cluster::SharedB<4, 2>, false, true>;

/// `wgmma-layouts`' tensor maps: A's boxes 64 × 64 of (m, k) or (k, m) as it lies, B's 64 k ×
/// 128 n or two of 64 n × 64 k.
fn wgmma_layouts_operands(tile: u32, layout: Layout) -> TmaOperands {
    let bk = wgmma_16bit::BK;
    TmaOperands {
        a_transposed: layout.a_transposed,
        // (`:3` loads B in boxes of 64 n, one per block of its cluster along m.)
        b_box: if layout.b_transposed {
            [64, bk]
        } else if tile == 3 {
            [bk, 64]
        } else {
            [bk, wgmma_16bit::BN]
        },
        b_transposed: layout.b_transposed,
        ..if tile == 3 {
            TmaOperands {
                cluster: 2,
                grouped: groups::<LayoutsSharedB>(),
                ..wgmma_tma_store_operands(5, Layout::NN)
            }
        } else if tile == 4 {
            TmaOperands {
                cluster: 4,
                ..wgmma_tma_store_operands(4, Layout::NN)
            }
        } else {
            wgmma_tma_store_operands(if tile == 1 { 4 } else { 5 }, Layout::NN)
        }
    }
}

/// `wgmma-waves`' configuration (its N,N entry; the layouts differ in their copies only): 192 ×
/// 128 tiles, three consumers of 64 rows, four stages.
type WavesConfig = wgmma_waves::Waves<4, 3, false, false>;

fn wgmma_waves_geometry(m: u32, n: u32, k: u32, bytes: u32, _tile: u32) -> Geometry {
    wgmma_16bit::geometry::<WavesConfig>(m, n, k, bytes)
}

/// `wgmma-waves`' tensor maps: `wgmma-layouts:2`'s (boxes of 64 rows of A, one per consumer);
/// no grouped GEMM, and no batch (a 24-register producer cannot afford the batch's walk).
fn wgmma_waves_operands(_tile: u32, layout: Layout) -> TmaOperands {
    type Nn = wgmma_16bit::Wgmma16<crate::device::half::Bf16, WavesConfig>;
    use crate::pipeline::Kernel;
    TmaOperands {
        batched: Nn::BATCHES,
        grouped: Nn::GROUPS,
        ..wgmma_layouts_operands(2, layout)
    }
}

/// `wgmma-stream-k`'s configuration (its N,N entry; the layouts differ in their copies only).
type StreamKConfig = wgmma_stream_k::Streamed<
    wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>,
    false,
    false,
>;

/// `wgmma-stream-k`: `wgmma-layouts:2` on a stream-k grid.
fn wgmma_stream_k_geometry(m: u32, n: u32, k: u32, bytes: u32, _tile: u32) -> Geometry {
    wgmma_16bit::geometry::<StreamKConfig>(m, n, k, bytes)
}

/// `wgmma-layouts:2`'s tensor maps, and the stream-k scratch after them (256 × 128 tiles).
fn wgmma_stream_k_operands(_tile: u32, layout: Layout) -> TmaOperands {
    TmaOperands {
        stream_k: Some([wgmma_16bit::BM, wgmma_16bit::BN]),
        batched: <wgmma_16bit::Wgmma16<crate::device::half::Bf16, StreamKConfig> as crate::pipeline::Kernel>::BATCHES,
        grouped: false,
        ranges: false,
        ..wgmma_layouts_operands(2, layout)
    }
}

/// `wgmma-queue`: `wgmma-layouts:1` and `:2`, their tiles taken from a tile queue; `:3`, `:2`
/// with three stages and a whole tile's staging buffers.
fn wgmma_queue_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    use wgmma_tma_store::TmaStore;
    match tile {
        3 => wgmma_16bit::geometry::<TmaStore<wgmma_16bit::Plain<3>, true, true>>(m, n, k, bytes),
        _ => wgmma_layouts_geometry(m, n, k, bytes, tile),
    }
}

/// `wgmma-layouts:1`'s and `:2`'s tensor maps (`:3` has `:2`'s), and the tile queue's counter
/// after them.
fn wgmma_queue_operands(tile: u32, layout: Layout) -> TmaOperands {
    TmaOperands {
        queue: true,
        grouped: false,
        ..wgmma_layouts_operands(if tile == 3 { 2 } else { tile }, layout)
    }
}

/// `wgmma-narrow`'s tiles, by `--tile` (the tile's n, the `wgmma`'s N).
fn wgmma_narrow_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    match tile {
        8 => wgmma_narrow::geometry::<4>(m, n, k, bytes),
        16 => wgmma_narrow::geometry::<8>(m, n, k, bytes),
        32 => wgmma_narrow::geometry::<16>(m, n, k, bytes),
        64 => wgmma_narrow::geometry::<32>(m, n, k, bytes),
        128 => wgmma_narrow::geometry::<64>(m, n, k, bytes),
        _ => unreachable!("the host checks --tile against Variant::tiles"),
    }
}

/// `wgmma-narrow`'s tensor maps: A K-major (stored k × m) in boxes of 64 k × 128 m, or MN-major
/// in boxes of 64 m × 64 k; B k × n in boxes of 64 k × N; the stream-k scratch after them.
fn wgmma_narrow_operands(tile: u32, layout: Layout) -> TmaOperands {
    TmaOperands {
        a_box: if layout.a_transposed {
            [64, wgmma_narrow::BM]
        } else {
            [64, 64]
        },
        a_transposed: layout.a_transposed,
        b_box: [64, tile],
        stream_k: Some([wgmma_narrow::BM, tile]),
        ranges: false,
        early_start: true,
        ..wgmma_16bit_operands(tile, Layout::NN)
    }
}

/// `wgmma-fp8-narrow`'s: the same bytes, 128 e4m3 of k per 128-byte row (TN only).
fn wgmma_fp8_narrow_operands(tile: u32, _layout: Layout) -> TmaOperands {
    TmaOperands {
        a_box: [128, wgmma_narrow::BM],
        a_transposed: true,
        b_box: [128, tile],
        stream_k: Some([wgmma_narrow::BM, tile]),
        batched: false,
        grouped: false,
        ranges: false,
        early_start: true,
        ..wgmma_16bit_operands(tile, Layout::NN)
    }
}

/// `wgmma-swap`'s tiles, by `--tile`: W rows of weights with two consumer warpgroups (128
/// tokens a tile), 100 + W with one (64), 200 + W with one on a stream-k grid, 300 + W with one
/// and a box of 16 tokens; 400 + W and 500 + W as 300 + W and 100 + W, walking a grouped GEMM's
/// tiles (the same block and pool: the walk is the only difference).
fn wgmma_swap_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    use wgmma_swap::geometry;
    match tile {
        32 => geometry::<16, 128, false>(m, n, k, bytes),
        48 => geometry::<24, 128, false>(m, n, k, bytes),
        64 => geometry::<32, 128, false>(m, n, k, bytes),
        116 => geometry::<8, 64, false>(m, n, k, bytes),
        132 => geometry::<16, 64, false>(m, n, k, bytes),
        148 => geometry::<24, 64, false>(m, n, k, bytes),
        156 => geometry::<28, 64, false>(m, n, k, bytes),
        164 => geometry::<32, 64, false>(m, n, k, bytes),
        232 => geometry::<16, 64, true>(m, n, k, bytes),
        248 => geometry::<24, 64, true>(m, n, k, bytes),
        264 => geometry::<32, 64, true>(m, n, k, bytes),
        332 => geometry::<16, 16, false>(m, n, k, bytes),
        348 => geometry::<24, 16, false>(m, n, k, bytes),
        356 => geometry::<28, 16, false>(m, n, k, bytes),
        364 => geometry::<32, 16, false>(m, n, k, bytes),
        432 => geometry::<16, 16, false>(m, n, k, bytes),
        464 => geometry::<32, 16, false>(m, n, k, bytes),
        532 => geometry::<16, 64, false>(m, n, k, bytes),
        564 => geometry::<32, 64, false>(m, n, k, bytes),
        1128 => geometry::<64, 128, false>(m, n, k, bytes),
        1256 => geometry::<128, 128, false>(m, n, k, bytes),
        _ => unreachable!("the host checks --tile against Variant::tiles"),
    }
}

/// `wgmma-swap`'s tensor maps: A stored k × m in boxes of 64 k × W m (the tile's weights), B
/// k × n in boxes of 64 k × the tile's tokens; C from the registers.
fn wgmma_swap_operands(tile: u32, _layout: Layout) -> TmaOperands {
    swap_operands(tile, 64)
}

/// `wgmma-fp8-swap`'s: the same boxes, 128 e4m3 of k per 128-byte row.
fn wgmma_fp8_swap_operands(tile: u32, _layout: Layout) -> TmaOperands {
    swap_operands(tile, 128)
}

/// `wgmma-tf32-swap`'s: the same boxes, 32 f32 of k per 128-byte row.
fn wgmma_tf32_swap_operands(tile: u32, _layout: Layout) -> TmaOperands {
    swap_operands(tile, 32)
}

/// A swapped tile's rows of weights and tokens: `--tile W` (W < 100) and `1000 + W` with 128
/// tokens, `300 + W` and `400 + W` with 16, the others (`100 + W`, `200 + W`, `500 + W`) 64.
const fn swap_tile_shape(tile: u32) -> (u32, u32) {
    match tile {
        1000.. => (tile - 1000, 128),
        0..=99 => (tile, 128),
        _ => (
            tile % 100,
            match tile / 100 {
                3 | 4 => 16,
                _ => 64,
            },
        ),
    }
}

/// The swapped tiles' tensor maps, `k_box` values of k per 128-byte row.
fn swap_operands(tile: u32, k_box: u32) -> TmaOperands {
    let (rows, tokens) = swap_tile_shape(tile);
    // `WgmmaSwap::GROUPS`: their tensor maps have a layer per group (A) and member (B).
    let grouped = matches!(tile / 100, 4 | 5);
    TmaOperands {
        a_box: [k_box, rows],
        a_transposed: true,
        b_box: [k_box, tokens],
        stream_k: (tile / 100 == 2).then_some([rows, tokens]),
        batched: grouped,
        grouped,
        ranges: false,
        early_start: true,
        ..wgmma_16bit_operands(tile, Layout::NN)
    }
}

fn wgmma_fp8_block_swap_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    use wgmma_fp8_block_swap::geometry;
    match tile {
        16 => geometry::<8, 2, 1, false>(m, n, k, bytes),
        24 => geometry::<12, 2, 1, false>(m, n, k, bytes),
        32 => geometry::<16, 2, 1, false>(m, n, k, bytes),
        48 => geometry::<24, 2, 1, false>(m, n, k, bytes),
        56 => geometry::<28, 2, 1, false>(m, n, k, bytes),
        64 => geometry::<32, 2, 1, false>(m, n, k, bytes),
        116 => geometry::<8, 1, 1, false>(m, n, k, bytes),
        132 => geometry::<16, 1, 1, false>(m, n, k, bytes),
        164 => geometry::<32, 1, 1, false>(m, n, k, bytes),
        216 => geometry::<8, 1, 2, false>(m, n, k, bytes),
        232 => geometry::<16, 1, 2, false>(m, n, k, bytes),
        316 => geometry::<8, 2, 2, false>(m, n, k, bytes),
        332 => geometry::<16, 2, 2, false>(m, n, k, bytes),
        432 => geometry::<16, 1, 1, true>(m, n, k, bytes),
        448 => geometry::<24, 1, 1, true>(m, n, k, bytes),
        _ => unreachable!("the host checks --tile against Variant::tiles"),
    }
}

/// `wgmma-fp8-block-swap`'s tensor maps: A stored k × m in boxes of 128 k × W m (the tile's
/// weights), B k × n in boxes of 128 k × the tile's tokens (each block of a cluster its share);
/// C from the registers. `--tile`: W with two consumer warpgroups (128 tokens); 100 + W with
/// one (64 tokens); 200 + W with one, in clusters of two along m; 300 + W with two, in clusters
/// of two; 400 + W with one on a stream-k grid (a slab of W × 64 per part).
fn wgmma_fp8_block_swap_operands(tile: u32, _layout: Layout) -> TmaOperands {
    let consumers = if matches!(tile / 100, 1 | 2 | 4) {
        1
    } else {
        2
    };
    let cluster = if matches!(tile / 100, 2 | 3) { 2 } else { 1 };
    TmaOperands {
        a_box: [128, tile % 100],
        a_transposed: true,
        b_box: [128, wgmma_fp8_block_swap::tokens(consumers) / cluster],
        cluster,
        stream_k: (tile / 100 == 4).then_some([tile % 100, wgmma_fp8_block_swap::tokens(1)]),
        batched: false,
        grouped: false,
        ranges: false,
        ..wgmma_16bit_operands(tile, Layout::NN)
    }
}

/// What the TMA engine asks of an FP8 problem whose C is written from the registers: A's and B's
/// rows strided by multiples of 16 bytes; any m and `ldc`.
fn fp8_narrow_supports(shape: &Shape, _dtype: Dtype) -> Result<(), String> {
    TmaOperands::check(shape, 1)
}

/// The FP8 kernels' tensor maps: A stored k × m in boxes of 128 k × 64 m, B k × n in boxes of
/// 128 k × 128 n (one 128-byte swizzled row of k each), C's bf16 boxes of 64 m × 64 n; `--tile
/// 1` of `wgmma-fp8` in clusters of two along n sharing A.
fn wgmma_fp8_operands(tile: u32, _layout: Layout) -> TmaOperands {
    TmaOperands {
        a_box: [wgmma_fp8::BK, 64],
        b_box: [wgmma_fp8::BK, wgmma_fp8::BN],
        a_transposed: true,
        cluster: if tile == 1 || tile == 3 { 2 } else { 1 },
        // The FP8 kernels walk a strided batch as masked groups (`grouped`), not as members.
        batched: false,
        // `:2` and `:6` (`WgmmaFp8::GROUPS`, `WgmmaFp8Block::GROUPS`): not the clusters along n
        // (`:1`, `:3`), ping-pong (`:4`) or the three consumers (`:5`).
        grouped: match tile {
            2 => <wgmma_fp8::WgmmaFp8<
                wgmma_tma_store::TmaStore<wgmma_16bit::Plain<4>, false, true>,
            > as crate::pipeline::Kernel>::GROUPS,
            6 => <wgmma_fp8_block::WgmmaFp8Block<5, { wgmma_fp8_block::PER_TENSOR }>
                as crate::pipeline::Kernel>::GROUPS,
            _ => false,
        },
        c_box: Some([64, 64]),
        ..wgmma_16bit_operands(tile, Layout::NN)
    }
}

fn wgmma_fp8_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    use wgmma_pingpong::PingPong;
    use wgmma_tma_store::TmaStore;
    match tile {
        1 => wgmma_fp8::geometry::<TmaStore<wgmma_cluster::SharedA<4, 2>, false, true>>(
            m, n, k, bytes,
        ),
        2 => wgmma_fp8::geometry::<TmaStore<wgmma_16bit::Plain<4>, false, true>>(m, n, k, bytes),
        3 => wgmma_fp8::geometry::<TmaStore<PingPong<wgmma_cluster::SharedA<6, 2>>, false, true>>(
            m, n, k, bytes,
        ),
        4 => wgmma_fp8::geometry::<TmaStore<PingPong<wgmma_16bit::Plain<6>>, false, true>>(
            m, n, k, bytes,
        ),
        5 => wgmma_fp8_block::geometry::<
            4,
            { wgmma_fp8_block::PER_TENSOR },
            1,
            3,
            { wgmma_fp8_block::EVERY_TILE },
        >(m, n, k, bytes),
        6 => wgmma_fp8_block::geometry::<
            5,
            { wgmma_fp8_block::PER_TENSOR },
            1,
            2,
            { wgmma_fp8_block::EVERY_TILE },
        >(m, n, k, bytes),
        _ => unreachable!("the host checks --tile against Variant::tiles"),
    }
}

fn wgmma_fp8_block_operands(tile: u32, _layout: Layout) -> TmaOperands {
    TmaOperands {
        cluster: if tile == 4 { 2 } else { 1 },
        // Every configuration but the cluster's (its two tiles along n may be of different
        // groups), `:7`'s three consumers (their producer spilled) and stream-k's
        // (`WgmmaFp8Block::GROUPS`) runs grouped GEMMs.
        grouped: !matches!(tile, 4 | 7 | 10),
        // `:10` on the hybrid stream-k grid: a slab of a 192 × 128 tile per part.
        stream_k: (tile == 10).then_some([wgmma_fp8_block::tile_m(3), wgmma_fp8_block::BN]),
        ..wgmma_fp8_operands(0, Layout::TN)
    }
}

fn wgmma_fp8_block_geometry(m: u32, n: u32, k: u32, bytes: u32, tile: u32) -> Geometry {
    use wgmma_fp8_block::{geometry, EVERY_TILE, STREAM_K_GRID};
    use wgmma_fp8_block::{ONE_SLICE, ONE_SLICE_STAGED, TWO_CHAINS, TWO_PER_WAIT};
    use wgmma_fp8_block::{TWO_PER_WAIT_STAGED, TWO_SLICES};
    match tile {
        1 => geometry::<5, ONE_SLICE, 1, 2, EVERY_TILE>(m, n, k, bytes),
        2 => geometry::<6, ONE_SLICE, 1, 2, EVERY_TILE>(m, n, k, bytes),
        3 => geometry::<5, TWO_SLICES, 1, 2, EVERY_TILE>(m, n, k, bytes),
        4 => geometry::<5, ONE_SLICE, 2, 2, EVERY_TILE>(m, n, k, bytes),
        5 => geometry::<5, TWO_CHAINS, 1, 2, EVERY_TILE>(m, n, k, bytes),
        6 => geometry::<5, TWO_PER_WAIT, 1, 2, EVERY_TILE>(m, n, k, bytes),
        7 => geometry::<4, ONE_SLICE, 1, 3, EVERY_TILE>(m, n, k, bytes),
        // `:11` is `:8` with the packed masked walk, which changes neither block nor pool.
        8 | 11 => geometry::<5, TWO_PER_WAIT_STAGED, 1, 2, EVERY_TILE>(m, n, k, bytes),
        9 => geometry::<4, ONE_SLICE_STAGED, 1, 3, EVERY_TILE>(m, n, k, bytes),
        10 => geometry::<4, ONE_SLICE_STAGED, 1, 3, STREAM_K_GRID>(m, n, k, bytes),
        _ => unreachable!("the host checks --tile against Variant::tiles"),
    }
}

/// What the TMA engine asks of an FP8 problem: A's and B's rows (k, one byte each) strided by
/// multiples of 16 bytes, C's (bf16) by multiples of 16 bytes, and m a multiple of 8 (C's
/// columns are stored in 16-byte pieces).
fn fp8_supports(shape: &Shape, _dtype: Dtype) -> Result<(), String> {
    TmaOperands::check(shape, 1)?;
    // (A's and B's strides, multiples of 16 bytes, are multiples of 8 two-byte elements too.)
    TmaOperands::check_with_c(shape, 2)
}

/// With clusters of two down m (`--tile 5`, `6`; 3xTF32's `2`), each block loads half of B's
/// columns: B's box is half as wide.
fn wgmma_tf32_operands(tile: u32, _layout: Layout) -> TmaOperands {
    match tile {
        3 => wgmma_operands(128),
        5 | 6 => TmaOperands {
            b_box: [32, 128],
            cluster: 2,
            ..wgmma_operands(256)
        },
        _ => wgmma_operands(256),
    }
}

fn wgmma_3xtf32_operands(tile: u32, _layout: Layout) -> TmaOperands {
    let ranged = TmaOperands {
        ranges: true,
        ..wgmma_operands(128)
    };
    match tile {
        2 => TmaOperands {
            b_box: [32, 64],
            cluster: 2,
            ..ranged
        },
        _ => ranged,
    }
}

/// Every GPU variant, in the order of the course.
pub const ALL: &[Variant] = &[
    Variant {
        name: "v0",
        summary: "one thread per element of C, thread x along C's columns (uncoalesced)",
        source: "001 gemm_32x32_v0",
        entry: "gemm_v0",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| v0_uncoalesced::geometry(m, n, k, b),
        supports: any_shape,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "v1",
        summary: "one thread per element of C, thread x along C's rows (coalesced)",
        source: "001 gemm_32x32_v1",
        entry: "gemm_v1",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| v1_coalesced::geometry(m, n, k, b),
        supports: any_shape,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "v3",
        summary: "32x32 shared-memory tiles, unpadded (32-way bank conflicts)",
        source: "001 gemm_32x32_v3",
        entry: "gemm_v3",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| v3_shared_tiles::geometry(m, n, k, b),
        supports: any_shape,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "v4",
        summary: "32x32 shared-memory tiles padded by one column (no bank conflicts)",
        source: "001 gemm_32x32_v4, 000 (tile 32)",
        entry: "gemm_v4",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| v4_padded_tiles::geometry(m, n, k, b),
        supports: any_shape,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "tiled",
        summary: "padded shared-memory tiles of width --tile (1, 2, 4, 8, 16, 32): the 000 sweep",
        source: "000 MatMatMul<BLOCK_SIZE>",
        entry: "gemm_tiled_w{tile}",
        layouts: NN_ONLY,
        tiles: &[16, 1, 2, 4, 8, 32],
        geometry: tiled_geometry,
        supports: any_shape,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    // -- the 001 progression (v2, v5, gemm64, gemm128, fynv, alc1..3) goes here --
    Variant {
        name: "v2",
        summary: "v1 with thread indices in locals and pointers moved to the tile first",
        source: "001 gemm_32x32_v2",
        entry: "gemm_v2",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| v2_local_indices::geometry(m, n, k, b),
        supports: any_shape,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "v5",
        summary: "256 threads per 32x32 tile, 4 rows per thread, float4 loads, register prefetch",
        source: "001 gemm_32x32_v5",
        entry: "gemm_v5",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| v5_float4::geometry(m, n, k, b),
        supports: |s, _| v5_float4::check_vec4("v5", s.m, s.k, s.lda, s.ldb),
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "gemm64",
        summary: "64x64 tile, 256 threads, 4x4 per thread, 16-byte shared loads of A and B",
        source: "001 gemm_64x64",
        entry: "gemm_64x64",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| gemm64::geometry(m, n, k, b),
        supports: |s, _| v5_float4::check_vec4("gemm64", s.m, s.k, s.lda, s.ldb),
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "gemm128",
        summary:
            "128x128 tile, 8x8 per thread, k-step 8, two shared buffers (one barrier per step)",
        source: "001 gemm_128x128",
        entry: "gemm_128x128",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| gemm128::geometry(m, n, k, b),
        supports: |s, _| v5_float4::check_vec4("gemm128", s.m, s.k, s.lda, s.ldb),
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "alc1",
        summary: "tutorial 32x32 tiles, row-major indexing, bounds checks in the loop, unpadded",
        source: "001 Alcanderian::cuda_kernel_sgemm_1",
        entry: "gemm_alc1",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| alc1::geometry(m, n, k, b),
        supports: any_shape,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "alc2",
        summary: "tutorial tiles padded to 33 plus read-only loads (ld.global.nc)",
        source: "001 Alcanderian::cuda_kernel_sgemm_2",
        entry: "gemm_alc2",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| alc2::geometry(m, n, k, b),
        supports: any_shape,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "alc3",
        summary: "tutorial tiles with read-only loads, unpadded",
        source: "001 Alcanderian::cuda_kernel_sgemm_3",
        entry: "gemm_alc3",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| alc3::geometry(m, n, k, b),
        supports: any_shape,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "fynv",
        summary: "fynv's g_fgemm: 128x128 tile, 8x8 per thread as f8 vectors, two shared buffers",
        source: "001 fynv::g_fgemm",
        entry: "gemm_fynv",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| fynv::geometry(m, n, k, b),
        supports: |s, _| v5_float4::check_vec4("fynv", s.m, s.k, s.lda, s.ldb),
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    // -- the 002/003/004 variants (naive, kahan, row-shared, blocked-kahan, basic, cg-*) go here --
    Variant {
        name: "naive",
        summary: "one thread per element of C on a 1D grid of 256-thread blocks, FMA accumulation",
        source: "002 matMultCUDA (first)",
        entry: "gemm_naive",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| naive::geometry(m, n, k, b, naive::BLOCK),
        supports: naive::supports,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "kahan",
        summary: "naive with Kahan compensated summation of each dot product",
        source: "002 matMultCUDA (Kahan)",
        entry: "gemm_kahan",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| naive::geometry(m, n, k, b, naive::BLOCK),
        supports: naive::supports,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "row-shared",
        summary: "one block per line of C, the reused line (column of B) in shared memory, Kahan",
        source: "002 matMultCUDA (row of A in shared memory)",
        entry: "gemm_row_shared",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| row_shared::geometry(m, n, k, b),
        supports: row_shared::supports,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "blocked-kahan",
        summary: "16x16 shared-memory tiles of A and B, Kahan summation",
        source: "002 matMultCUDA (16x16 blocking)",
        entry: "gemm_blocked_kahan",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| blocked_kahan::geometry(m, n, k, b),
        supports: any_shape,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "basic",
        summary: "same kernel as `naive`, 1D blocks of --tile threads (2..1024): the 003 sweep",
        source: "003 gemm_gpu_impl",
        entry: "gemm_naive",
        layouts: NN_ONLY,
        tiles: naive::BLOCK_SIZES,
        geometry: naive::geometry,
        supports: naive::supports,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "blocked",
        summary: "same kernel as `tiled` (003's blockL = tile width, 2..32)",
        source: "003 gemm_gpu_block_impl<blockL>",
        entry: "gemm_tiled_w{tile}",
        layouts: NN_ONLY,
        tiles: &[32, 2, 4, 8, 16],
        geometry: tiled_geometry,
        supports: any_shape,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "cg-shuffle",
        summary: "32x32 tile, 8 warps, A exchanged by warp shuffles, output tile in shared memory",
        source: "004 sgemm_naive",
        entry: "gemm_cg_shuffle",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| cg_shuffle::geometry(m, n, k, b),
        supports: any_shape,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "cg-regs",
        summary: "32x32 tile, 8 warps, 4 outputs per thread in registers",
        source: "004 sgemm_shared",
        entry: "gemm_cg_regs",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| cg_regs::geometry(m, n, k, b),
        supports: any_shape,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "cg-tile2x2",
        summary:
            "32x32 tile, 2x2 outputs per thread, padded tiles, C written through shared memory",
        source: "004 sgemm_thread_tile",
        entry: "gemm_cg_tile2x2",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| cg_tile2x2::geometry(m, n, k, b),
        supports: any_shape,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    // -- beyond the documents --
    Variant {
        name: "best",
        summary: "warp tiles, 8x8 per thread, cp.async multi-stage pipeline, any shape; --tile: 1 128x64x16 (default), 2 128x128x8, 3 64x64x16, 4 128x128x8 2-stage",
        source: "beyond the documents (001's leads)",
        entry: "gemm_best_c{tile}",
        layouts: NN_ONLY,
        tiles: &[1, 2, 3, 4],
        geometry: best_geometry,
        supports: any_shape,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "big-tile",
        summary: "cuBLAS's SIMT design: 256x128 block tile, 8 warps of 64x64, 16x8 outputs per thread (8x8 in f64), one block per SM, B k-major and swizzled (no bank conflicts), 16-byte cp.async of A and B; --tile (f32; f64 is 128x128 with 128x64 for 3): 5 256x128x16 B read 2 k-steps per load (default), 1 256x128x8, 2 256x128x16, 3 128x128x8 4-stage, 4 256x128x8 4-stage, 6 256x128x32, 7 256x128x32 2 k-steps per load",
        source: "beyond the documents (cuBLAS's SGEMM kernel, from its profile)",
        entry: "gemm_big_tile_c{tile}",
        layouts: NN_ONLY,
        tiles: &[5, 1, 2, 3, 4, 6, 7],
        geometry: big_tile_geometry,
        supports: any_shape,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "split-k",
        summary: "big-tile over --tile parts of k (4 default; 2, 3, 6, 8, 12, 16) into a workspace, then a second launch adds the parts and applies alpha, beta once: for shapes with too few tiles to fill the GPU",
        source: "beyond the documents",
        entry: "gemm_split_k",
        layouts: NN_ONLY,
        tiles: &[4, 2, 3, 6, 8, 12, 16],
        geometry: split_k_geometry,
        supports: any_shape,
        dtypes: BOTH_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: Some("gemm_split_k_reduce"),
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    // -- tensor cores, chapter 1: mma.sync --
    Variant {
        name: "tc-tf32-basic",
        summary: "tensor cores: mma.sync m16n8k8 in TF32, 32x32 per warp, each fragment register loaded where the PTX ISA's table puts it",
        source: "beyond the documents (tensor cores, chapter 1)",
        entry: "gemm_tc_tf32_basic",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| tc_tf32_basic::geometry(m, n, k, b),
        supports: any_shape,
        dtypes: &[Dtype::F32],
        arithmetic: Arithmetic::Tf32,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "tc-tf32",
        summary: "TF32 tensor cores, fast: cp.async pipeline into swizzled shared memory, 64x64 warp tiles, 16-byte fragment loads by renaming rows and k, inputs truncated by the tensor core; --tile: 1 128x128x32 3-stage (default), 2 128x256x32, 3 128x128x32 4-stage, 4 64x128x32 4-stage; rounded to nearest like cuBLAS: 5 128x128x32 64x32 warps, 6 the same 4-stage",
        source: "beyond the documents (tensor cores, chapter 1)",
        entry: "gemm_tc_tf32_c{tile}",
        layouts: NN_ONLY,
        tiles: &[1, 2, 3, 4, 5, 6],
        geometry: tc_tf32_geometry,
        supports: any_shape,
        dtypes: &[Dtype::F32],
        arithmetic: Arithmetic::Tf32,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "tc-3xtf32",
        summary: "FP32 accuracy from TF32 tensor cores: each input split into big + small TF32 parts, three mma per tile (small terms first), each 16-deep k-step summed from zero in the tensor core and added on the CUDA cores, tc-tf32's pipeline; --tile: 1 64x64x32 32x32 warps 4-stage 3 blocks/SM (default), 2 the same 3-stage, 3 the same 2 blocks/SM, 4 128x64x32 4-stage",
        source: "beyond the documents (tensor cores, chapter 1)",
        entry: "gemm_tc_3xtf32_c{tile}",
        layouts: NN_ONLY,
        tiles: &[1, 2, 3, 4],
        geometry: tc_3xtf32_geometry,
        supports: any_shape,
        dtypes: &[Dtype::F32],
        arithmetic: Arithmetic::Tf32x3,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    Variant {
        name: "tc-f64",
        summary: "FP64 tensor cores (DMMA m16n8k16): tc-tf32's pipeline for doubles, fragments as 16-byte loads by renaming; --tile: 1 128x128x16 64x32 warps, 2 128x64x16 4-stage (default), 3 64x64x16 4-stage 32x32 warps, 4 128x128x16 4-stage, 5 64x128x16 32x64 warps",
        source: "beyond the documents (tensor cores, chapter 1)",
        entry: "gemm_tc_f64_c{tile}",
        layouts: NN_ONLY,
        tiles: &[2, 1, 3, 4, 5],
        geometry: tc_f64_geometry,
        supports: any_shape,
        dtypes: &[Dtype::F64],
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Portable,
        tma: None,
        scales: None,
    },
    // -- tensor cores, chapter 2: Hopper's wgmma (sm_90a) --
    Variant {
        name: "wgmma-tf32-basic",
        summary: "Hopper warpgroup MMA in TF32 (sm_90a): one warpgroup per 64x128 tile, A and B staged by the threads into 128-byte-swizzled K-major shared memory, read by wgmma.m64n128k8 through matrix descriptors, each slice waited for",
        source: "beyond the documents (tensor cores, chapter 2)",
        entry: "gemm_wgmma_tf32_basic",
        layouts: NN_ONLY,
        tiles: &[],
        geometry: |m, n, k, b, _| wgmma_tf32_basic::geometry(m, n, k, b),
        supports: any_shape,
        dtypes: &[Dtype::F32],
        arithmetic: Arithmetic::Tf32,
        reduce: None,
        target: Target::Sm90a,
        tma: None,
        scales: None,
    },
    Variant {
        name: "wgmma-tf32",
        summary: "Hopper's TF32 GEMM pipeline (sm_90a): TMA copies into a ring of 128-byte-swizzled stages, mbarrier handoffs, a producer warpgroup and two consumer warpgroups (setmaxnreg), A fragments from registers, B through wgmma descriptors, a persistent grid; --tile: 1 128x256x32 4-stage, one wgmma group per k-step, two in flight (default), 2 the same, one group per slice, each waited for, 3 128x128x32 6-stage, two groups in flight, 4 as 1 with tiles in groups of 16 tile-rows (not 8), 5 as 1 in clusters of two blocks down m that share B (each loads half, multicast), 6 as 5 with groups of 16",
        source: "beyond the documents (tensor cores, chapter 2)",
        entry: "gemm_wgmma_tf32_c{tile}",
        layouts: NN_ONLY,
        tiles: &[1, 2, 3, 4, 5, 6],
        geometry: wgmma_tf32_geometry,
        supports: |s, d| TmaOperands::check(s, d.bytes()),
        dtypes: &[Dtype::F32],
        arithmetic: Arithmetic::Tf32,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_tf32_operands),
        scales: None,
    },
    Variant {
        name: "wgmma-3xtf32",
        summary: "FP32 accuracy from wgmma-tf32's pipeline: A split in the consumers' registers, B split in shared memory by the producer's idle warps (fence.proxy.async, a third mbarrier), three wgmma per k-step, each slice summed from zero and added with FADD; --tile: 1 128x128x32 4-stage (default), 2 in clusters of two blocks down m sharing B (multicast)",
        source: "beyond the documents (tensor cores, chapter 2)",
        entry: "gemm_wgmma_3xtf32_c{tile}",
        layouts: NN_ONLY,
        tiles: &[1, 2],
        geometry: wgmma_3xtf32_geometry,
        supports: |s, d| TmaOperands::check(s, d.bytes()),
        dtypes: &[Dtype::F32],
        arithmetic: Arithmetic::Tf32x3,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_3xtf32_operands),
        scales: None,
    },
    // -- tensor cores, chapter 3: bf16 and f16 on the Hopper skeleton (sm_90a) --
    Variant {
        name: "wgmma-16bit",
        summary: "bf16/f16 (f32 accumulation) on the Hopper skeleton: both operands read by the tensor cores through descriptors (A MN-major through the transpose bit), Cᵀ = Bᵀ·Aᵀ so that each thread stores pairs of adjacent rows, 256x128x64 tiles, two consumer warpgroups of wgmma.m64n256k16, one group in flight; --tile: 1 4-stage (default)",
        source: "beyond the documents (tensor cores, chapter 3)",
        entry: "gemm_wgmma_16bit_c{tile}",
        layouts: NN_ONLY,
        tiles: &[1],
        geometry: wgmma_16bit_geometry,
        supports: |s, d| TmaOperands::check(s, d.bytes()),
        dtypes: HALF_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_16bit_grouped_operands),
        scales: None,
    },
    Variant {
        name: "wgmma-cluster",
        summary: "wgmma-16bit in clusters of two blocks side by side along n: each loads half of the A they share and the TMA engine multicasts it into both (a third less L2 traffic), consumers release each stage to both producers; --tile: 1 4-stage (default)",
        source: "beyond the documents (tensor cores, chapter 3)",
        entry: "gemm_wgmma_cluster_c{tile}",
        layouts: NN_ONLY,
        tiles: &[1],
        geometry: wgmma_cluster_geometry,
        supports: |s, d| TmaOperands::check(s, d.bytes()),
        dtypes: HALF_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_cluster_operands),
        scales: None,
    },
    Variant {
        name: "wgmma-tma-store",
        summary: "wgmma-cluster with C written through shared memory: stmatrix into 128-byte-swizzled 64x64 boxes (two per consumer warpgroup, in turn), fence.proxy.async, a named barrier, one TMA store per box that drains under the next tile's mainloop; --tile: 1 clusters of two (default), 2 no cluster, 3 clusters of two, the whole tile staged at once (four boxes per warpgroup, one barrier pair per tile) and three stages, 4 as 1 and 5 as 2 in the orientation C = A·B (each consumer 128 rows of m as two wgmma.m64n128k16 with A transposed, as cuBLAS; stmatrix.trans)",
        source: "beyond the documents (tensor cores, chapter 3)",
        entry: "gemm_wgmma_tma_store_c{tile}",
        layouts: NN_ONLY,
        tiles: &[1, 2, 3, 4, 5],
        geometry: wgmma_tma_store_geometry,
        supports: |s, d| TmaOperands::check_with_c(s, d.bytes()),
        dtypes: HALF_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_tma_store_operands),
        scales: None,
    },
    Variant {
        name: "wgmma-pingpong",
        summary: "the two consumer warpgroups take whole 256x64 tiles in turn, an ordering barrier (two mbarriers) alternating their mainloops and their epilogues so that one's epilogue runs under the other's wgmmas; clusters of two sharing A, five stages; --tile: 1 with the TMA-store epilogue, the two sharing its buffers (default), 2 direct stores",
        source: "beyond the documents (tensor cores, chapter 3)",
        entry: "gemm_wgmma_pingpong_c{tile}",
        layouts: NN_ONLY,
        tiles: &[1, 2],
        geometry: wgmma_pingpong_geometry,
        supports: |s, d| TmaOperands::check_with_c(s, d.bytes()),
        dtypes: HALF_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_pingpong_operands),
        scales: None,
    },
    Variant {
        name: "wgmma-split-k",
        summary: "wgmma-16bit with k split over --tile rows of the grid (2 default; 4, 8; at most one per slice of 64): each row writes its f32 partial products to a workspace, a second launch adds them in a fixed order and applies alpha, beta once: for shapes with fewer tiles than SMs",
        source: "beyond the documents (tensor cores, chapter 3)",
        entry: "gemm_wgmma_split_k",
        layouts: NN_ONLY,
        tiles: &[2, 4, 8],
        geometry: wgmma_split_k_geometry,
        supports: |s, d| TmaOperands::check(s, d.bytes()),
        dtypes: HALF_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: Some("gemm_wgmma_split_k_reduce"),
        target: Target::Sm90a,
        tma: Some(wgmma_16bit_operands),
        scales: None,
    },
    Variant {
        name: "wgmma-fp8",
        summary: "e4m3 A and B (TN: A stored k x m, both K-major), one f32 scale per tensor applied with alpha in the epilogue, bf16 C: wgmma-tma-store:4/:5's pipeline with two wgmma.m64n128k32.e4m3 per consumer and k-step, 128-deep slices; --tile: 1 clusters of two sharing A (default), 2 no cluster, 3 and 4 the same in ping-pong (each consumer a whole 128x128 tile in turn, six stages), 5 three consumer warpgroups of 64 rows (192x128 tiles, four stages: wgmma-fp8-block:7's kernel with one scale per tensor), 6 two of them (128x128 tiles, five stages: wgmma-fp8-block:1's kernel with one scale per tensor; with :2 the tiles that walk strided batches); every tile also with B in e5m2 (--dtype e4m3-e5m2: wgmma.m64n128k32.e4m3.e5m2)",
        source: "beyond the documents (tensor cores, chapter 4)",
        entry: "gemm_wgmma_fp8_c{tile}",
        // FP8 `wgmma` reads both operands along k: A stored k × m, cuBLASLt's FP8 layout.
        layouts: &[Layout::TN],
        tiles: &[1, 2, 3, 4, 5, 6],
        geometry: wgmma_fp8_geometry,
        supports: fp8_supports,
        dtypes: &[Dtype::E4m3, Dtype::E4m3E5m2],
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_fp8_operands),
        scales: Some(Scales::PerTensor),
    },
    Variant {
        name: "wgmma-fp8-block",
        summary: "e4m3 with one scale per 1x128 of A and per 128x128 of B (DeepSeek-V3): each 128-deep slice is a fresh wgmma.m64n128k32 sum, promoted into f32 registers with its two scales (one FMA per register); 128x128 tiles, five stages; --tile: 6 two slices issued per wait, the first promoted while the second runs (default), 1 one slice per wait, 2 as 1 with six stages, 3 two slices' partial sums in turn (the next slice issued before this one is promoted), 4 as 1 in clusters of two along n sharing A, 5 as 1 with each slice's k-steps alternating between two partial sums, 7 as 1 with three consumer warpgroups (192x128 tiles, four stages, 160 registers each), 8 as 6 and 9 as 7 with A's scales of each slice bulk-copied beside its stage by the producer (cp.async.bulk on the stage's full barrier) instead of loaded by every consumer thread (auto's choices, 9 unless its last wave is much emptier), 10 as 9 on a hybrid stream-k grid (auto's choice for long k over fewer tiles than multiprocessors), 11 as 8 with a masked grouped GEMM's tiles below the counts walked first, packed (auto's choice for the masked layout); 2 to 5 are measured negatives",
        source: "beyond the documents (tensor cores, chapter 4)",
        entry: "gemm_wgmma_fp8_block_c{tile}",
        // FP8 `wgmma` reads both operands along k: A stored k × m, cuBLASLt's FP8 layout.
        layouts: &[Layout::TN],
        tiles: &[6, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11],
        geometry: wgmma_fp8_block_geometry,
        supports: fp8_supports,
        dtypes: &[Dtype::E4m3],
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_fp8_block_operands),
        scales: Some(Scales::Block),
    },
    // -- tensor cores, chapter 5: the shapes programs run (sm_90a) --
    Variant {
        name: "wgmma-layouts",
        summary: "wgmma-tma-store:4/:5 (the orientation C = A·B, C through the TMA store) for all four layouts: A read K-major (op(A) = Aᵀ, A stored k x m: the model's layout) or MN-major, B K-major or MN-major (op(B) = Bᵀ), each through its descriptor and transpose bit, no copy; --tile: 1 clusters of two along n sharing A (default), 2 no cluster, 3 clusters of two along m sharing B (which run grouped GEMMs), 4 clusters of four along n sharing A (a box of A per block: half the L2 requests of :1 per block, for operands off the 128-byte line)",
        source: "beyond the documents (tensor cores, chapter 5)",
        entry: "gemm_wgmma_layouts_{ops}_c{tile}",
        layouts: &Layout::ALL,
        tiles: &[1, 2, 3, 4],
        geometry: wgmma_layouts_geometry,
        supports: |s, d| TmaOperands::check_with_c(s, d.bytes()),
        dtypes: HALF_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_layouts_operands),
        scales: None,
    },
    Variant {
        name: "wgmma-waves",
        summary: "wgmma-layouts:2 (C through the TMA store, every layout, no cluster) with three consumer warpgroups of 64 rows of m instead of two of 128: 192x128 tiles, for shapes whose 256x128 tiles fill their last wave poorly; --tile: 1 four stages (default)",
        source: "beyond the documents (tensor cores, chapter 5)",
        entry: "gemm_wgmma_waves_{ops}_t{tile}",
        layouts: &Layout::ALL,
        tiles: &[1],
        geometry: wgmma_waves_geometry,
        supports: |s, d| TmaOperands::check_with_c(s, d.bytes()),
        dtypes: HALF_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_waves_operands),
        scales: None,
    },
    Variant {
        name: "wgmma-stream-k",
        summary: "wgmma-layouts:2 (256x128 tiles, C through the TMA store, every layout) on a stream-k grid: the whole waves of tiles but the last a tile per block, the rest divided into equal runs of k-slices, a tile split between blocks added by the last of them (an f32 workspace of two slabs per block, a counter per tile); --tile: 1 4-stage (default)",
        source: "beyond the documents (tensor cores, chapter 5)",
        entry: "gemm_wgmma_stream_k_{ops}_c{tile}",
        layouts: &Layout::ALL,
        tiles: &[1],
        geometry: wgmma_stream_k_geometry,
        supports: |s, d| TmaOperands::check_with_c(s, d.bytes()),
        dtypes: HALF_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_stream_k_operands),
        scales: None,
    },
    Variant {
        name: "wgmma-queue",
        summary: "wgmma-layouts:1/:2 (256x128 tiles, C through the TMA store, every layout) with the tiles handed out in order by a counter (a tile queue: the first block's producer of each cluster takes a ticket and publishes the tile into its peers' shared memory), for strided batches whose static walk drifts across members; --tile: 3 no cluster, three stages and a whole tile's staging buffers per warpgroup (one barrier pair per tile; default), 2 no cluster, four stages and two staging buffers per warpgroup, 1 clusters of two along n sharing A",
        source: "beyond the documents (tensor cores, chapter 5)",
        entry: "gemm_wgmma_queue_{ops}_c{tile}",
        layouts: &Layout::ALL,
        tiles: &[3, 2, 1],
        geometry: wgmma_queue_geometry,
        supports: |s, d| TmaOperands::check_with_c(s, d.bytes()),
        dtypes: HALF_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_queue_operands),
        scales: None,
    },
    Variant {
        name: "wgmma-narrow",
        summary: "tiles as narrow as the tokens of a decode step: 128 rows of m by --tile columns of n (the wgmma's N: 8, 16, 32, 64 default, 128), A K-major (op(A) = Aᵀ, the model's layout) or MN-major, a ring of 6 to 11 stages; stream-k: every block takes an equal share of the tiles' k-slices, and the last block of a shared tile adds the parts (a counter in global memory, no second launch); C from the registers, any m, n, ldc",
        source: "beyond the documents (tensor cores, chapter 5)",
        entry: "gemm_wgmma_narrow_{ops}_n{tile}",
        layouts: &[Layout::NN, Layout::TN],
        tiles: &[64, 8, 16, 32, 128],
        geometry: wgmma_narrow_geometry,
        supports: |s, d| TmaOperands::check(s, d.bytes()),
        dtypes: HALF_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_narrow_operands),
        scales: None,
    },
    Variant {
        name: "wgmma-swap",
        summary: "decode and small batches in bf16 and f16 with A and B swapped in the wgmma (TN): the tokens (n) as its M, 64 per consumer warpgroup, W rows of weights (m) as its N, so that the tiles make one wave with no split of k; one wgmma chain over every slice, a ring of 9 to 22 stages, C from the registers (any m, n, ldc); --tile: W = 32, 48, 64 with 128 tokens a tile (two warpgroups), 100 + W (116, 132 default, 148, 156, 164) with 64 (one); 200 + W (232, 248, 264) one on a stream-k grid, the tiles' k shared between blocks and the last of a tile's adding the parts; 300 + W (332, 348, 356, 364) one with 16 tokens a tile (a box of 16 rows; the wgmma's other 48 rows of tokens are not stored); 400 + W (432, 464) and 500 + W (532, 564) as 300 + W and 100 + W over a grouped GEMM's tiles and a strided batch's members (a mixture of experts' layer at decode)",
        source: "beyond the documents (tensor cores, chapter 5)",
        entry: "gemm_wgmma_swap_{ops}_w{tile}",
        layouts: &[Layout::TN],
        tiles: &[
            132, 116, 148, 156, 164, 32, 48, 64, 232, 248, 264, 332, 348, 356, 364, 432, 464, 532,
            564,
        ],
        geometry: wgmma_swap_geometry,
        supports: |s, d| TmaOperands::check(s, d.bytes()),
        dtypes: HALF_DTYPES,
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_swap_operands),
        scales: None,
    },
    Variant {
        name: "wgmma-tf32-swap",
        summary: "wgmma-swap for f32 data on the TF32 tensor cores (TN, f32 C): the tokens as the wgmma's M, W rows of weights as its N, wgmma.m64nWk8.tf32 with both operands K-major in shared memory, 32-deep slices, C from the registers in 8-byte pairs of rows; the decode tiles of wgmma-swap (132 default) and, for prefill, 1000 + W (1128, 1256): 128 or 256 rows of weights by 128 tokens, two consumer warpgroups, cuBLAS's TF32 tile turned",
        source: "beyond the documents (tensor cores, chapters 2 and 5)",
        entry: "gemm_wgmma_tf32_swap_w{tile}",
        layouts: &[Layout::TN],
        tiles: &[
            132, 116, 148, 156, 164, 32, 48, 64, 248, 264, 332, 348, 356, 364, 1128, 1256,
        ],
        geometry: wgmma_swap_geometry,
        supports: |s, d| TmaOperands::check(s, d.bytes()),
        dtypes: &[Dtype::F32],
        arithmetic: Arithmetic::Tf32,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_tf32_swap_operands),
        scales: None,
    },
    Variant {
        name: "wgmma-fp8-swap",
        summary: "wgmma-swap for e4m3 with one scale per tensor (TN, bf16 C): the tokens as the wgmma's M, W rows of weights as its N, wgmma.m64nWk32.e4m3, 128-deep slices, the scales folded into alpha; the tiles of wgmma-swap (132 default)",
        source: "beyond the documents (tensor cores, chapters 4 and 5)",
        entry: "gemm_wgmma_fp8_swap_w{tile}",
        layouts: &[Layout::TN],
        tiles: &[132, 116, 148, 156, 164, 32, 48, 64, 232, 248, 264, 332, 348, 356, 364],
        geometry: wgmma_swap_geometry,
        supports: fp8_narrow_supports,
        dtypes: &[Dtype::E4m3],
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_fp8_swap_operands),
        scales: Some(Scales::PerTensor),
    },
    Variant {
        name: "wgmma-fp8-narrow",
        summary: "wgmma-narrow for e4m3 with one scale per tensor (TN, bf16 C): 128 rows of m by --tile columns of n (8, 16, 32, 64 default, 128), wgmma.m64nNk32.e4m3, 128-deep slices, stream-k with the fixup in the epilogue, C from the registers (any m, n, ldc)",
        source: "beyond the documents (tensor cores, chapter 5)",
        entry: "gemm_wgmma_fp8_narrow_n{tile}",
        layouts: &[Layout::TN],
        tiles: &[64, 8, 16, 32, 128],
        geometry: wgmma_narrow_geometry,
        supports: fp8_narrow_supports,
        dtypes: &[Dtype::E4m3],
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_fp8_narrow_operands),
        scales: Some(Scales::PerTensor),
    },
    Variant {
        name: "wgmma-fp8-block-narrow",
        summary: "wgmma-fp8-narrow with DeepSeek-V3's block scales (1x128 of A, 128x128 of B): 128 rows of m by --tile columns of n (8, 16, 32, 64 default, 128), each 128-deep slice a fresh wgmma.m64nNk32.e4m3 sum promoted into f32 with its scales, stream-k (each part promotes its own slices, the fixup adds scaled totals), C from the registers (any m, n, ldc): the decode and small-batch shapes of the block-scaled GEMM",
        source: "beyond the documents (tensor cores, chapters 4 and 5)",
        entry: "gemm_wgmma_fp8_block_narrow_n{tile}",
        layouts: &[Layout::TN],
        tiles: &[64, 8, 16, 32, 128],
        geometry: wgmma_narrow_geometry,
        supports: fp8_narrow_supports,
        dtypes: &[Dtype::E4m3],
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_fp8_narrow_operands),
        scales: Some(Scales::Block),
    },
    Variant {
        name: "wgmma-fp8-block-swap",
        summary: "block-scaled e4m3 (1x128 of A, 128x128 of B) for decode and small batches with A and B swapped in the wgmma: the tokens (n) as its M, 64 per consumer warpgroup, W rows of weights (m) as its N, so that the tiles make one wave without splitting k; A's scales staged in shared memory by the producer warpgroup and promoted along the accumulator's columns, two partial sums in turn, C from the registers (any m, n, ldc); --tile: W = 16, 24, 32 (default), 48, 56, 64 with 128 tokens a tile (two warpgroups), 100 + W (116, 132, 164) with 64 (one), 200 + W (216, 232) one warpgroup and 300 + W (316, 332) two in clusters of two sharing the tokens by multicast, 400 + W (432, 448) one warpgroup on a stream-k grid in equal parts: each tile cut into as many equal parts of k as the multiprocessors allow, one block each, the last to finish adding the others",
        source: "beyond the documents (tensor cores, chapters 4 and 5)",
        entry: "gemm_wgmma_fp8_block_swap_w{tile}",
        layouts: &[Layout::TN],
        tiles: &[32, 16, 24, 48, 56, 64, 116, 132, 164, 216, 232, 316, 332, 432, 448],
        geometry: wgmma_fp8_block_swap_geometry,
        supports: fp8_narrow_supports,
        dtypes: &[Dtype::E4m3],
        arithmetic: Arithmetic::Native,
        reduce: None,
        target: Target::Sm90a,
        tma: Some(wgmma_fp8_block_swap_operands),
        scales: Some(Scales::Block),
    },
];
