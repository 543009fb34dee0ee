//! `tiled`: square shared-memory tiles of width `TILE` (1, 2, 4, 8, 16, 32), padded by `PAD`.
//!
//! Source: `000_…txt` (the tile-width sweep: tile 32…1, grid 128²…4096² at 4096³ f64) and
//! `001_…txt` (`gemm_32x32_v3` unpadded, `gemm_32x32_v4` padded). `v3` is `TILE = 32, PAD = 0`,
//! `v4` is `TILE = 32, PAD = 1`; the sweep uses `PAD = 1` like the course lab.
//!
//! Changed from `v1`: a block of TILE×TILE threads stages a TILE×TILE tile of A and of B in
//! shared memory, waits at a barrier, then every thread runs TILE FMAs out of shared memory.
//! Each global element is now read by one thread per block instead of TILE: global traffic
//! drops by a factor of TILE, which is the whole point of the sweep.
//!
//! Layout: `a_tile[r][j]` (row r of C's tile, step j of k) is stored at `r * (TILE + PAD) + j`.
//! In the inner loop the 32 lanes of a warp (consecutive r) read `a_tile[r][j]` for one j:
//! addresses `TILE + PAD` words apart. With `TILE = 32, PAD = 0` that is 32 lanes in one bank,
//! a 32-way bank conflict (`v3`); one word of padding puts them in 32 different banks (`v4`).
//! `b_tile[c][j]` (column c of the tile, step j) is read at one address per warp (all lanes
//! share c when TILE = 32): a broadcast, conflict-free.
//!
//! Edges: elements outside A or B are staged as zero, and only threads inside C store, so every
//! size works. The checks are in the staging, outside the inner loop.
//!
//! PTX: inner loop fully unrolled (TILE is a constant): TILE × (2 `ld.shared.f32` + `fma.rn.f32`).
//!
//! Measured: H100, 2026-11-21 (`docs/results/h100-2026-11-21/`): 4096³, tile 32/16/8: f32 7.00/6.27/4.15 TFLOP/s, f64 4.86/4.60/3.01 (the tile-1…4
//! sweep of `000` is not measured yet).
use crate::device::{
    block_idx_x, block_idx_y, sync_threads, thread_idx_x, thread_idx_y, Real, Shared,
};
use crate::gemm::{blocks_for, GemmArgs, Geometry};

/// The two tiles, `a_tile` then `b_tile`, each TILE rows of TILE + PAD elements.
#[inline(always)]
fn tiles<T: Real, const TILE: u32, const PAD: u32>() -> (Shared<T>, Shared<T>) {
    let a_tile = Shared::<T>::at(0, TILE * (TILE + PAD));
    let b_tile = a_tile.next::<T>(TILE * (TILE + PAD));
    (a_tile, b_tile)
}

pub fn geometry<const TILE: u32, const PAD: u32>(
    m: u32,
    n: u32,
    _k: u32,
    element_bytes: u32,
) -> Geometry {
    // Same layout as `tiles`, in bytes (the host does not know T at this point).
    let tile_bytes = TILE * (TILE + PAD) * element_bytes;
    Geometry {
        grid: (blocks_for(m, TILE), blocks_for(n, TILE)),
        block: (TILE, TILE),
        shared_bytes: tile_bytes.next_multiple_of(16) + tile_bytes,
    }
}

/// # Safety
/// `args` must describe valid device matrices; launch with [`geometry`].
#[inline(always)]
pub unsafe fn gemm<T: Real, const TILE: u32, const PAD: u32>(args: GemmArgs<T>) {
    let (a_tile, b_tile) = tiles::<T, TILE, PAD>();
    let stride = TILE + PAD;
    let (tx, ty) = (thread_idx_x(), thread_idx_y());
    let row = block_idx_x() * TILE + tx;
    let col = block_idx_y() * TILE + ty;
    let mut acc = T::ZERO;
    // ANCHOR: core_loop
    let mut k0 = 0;
    while k0 < args.k {
        // Thread (tx, ty) stages A(row, k0 + ty) and B(k0 + tx, col): both coalesced along tx.
        let a = unsafe { args.a_or_zero(row, k0 + ty) };
        let b = unsafe { args.b_or_zero(k0 + tx, col) };
        a_tile.store(tx * stride + ty, a);
        b_tile.store(ty * stride + tx, b);
        sync_threads();
        for j in 0..TILE {
            acc = a_tile
                .load(tx * stride + j)
                .fma(b_tile.load(ty * stride + j), acc);
        }
        // Nobody may overwrite the tiles for the next step while others still read them.
        sync_threads();
        k0 += TILE;
    }
    // ANCHOR_END: core_loop
    if row < args.m && col < args.n {
        unsafe { args.store_c(args.c_at(row, col), acc) }
    }
}
