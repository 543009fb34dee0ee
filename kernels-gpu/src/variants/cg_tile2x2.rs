//! `cg-tile2x2`: each thread computes a 2×2 block of outputs; padded shared tiles; the result
//! is staged through shared memory so that C is written coalesced.
//!
//! Source: `004_…txt`, `sgemm_thread_tile`. The document measured 22% of cuBLAS (12% faster
//! than `cg-regs`), with Nsight Compute reporting 92% compute and 92% memory throughput: at
//! this tile size the kernel is bound by shared-memory and L1 traffic, not by the FMA units.
//!
//! Changed from `cg-regs`: the 256 threads of the block are laid out as a 16×16 grid of 2×2
//! output blocks instead of 8 warps × 4 columns. Thread t (t = 32·w + l) owns rows
//! `r0 = 2·(t / 16)`, r0 + 1 and columns `c0 = 2·(t % 16)`, c0 + 1 of the block's tile. Per
//! step j of k it reads two values of A (`sub_a[j][r0]`, `sub_a[j][r0 + 1]`) and two of B
//! (`sub_b[c0][j]`, `sub_b[c0 + 1][j]`) for four FMAs: one shared load per FMA instead of
//! 1.25, since each loaded value now serves two outputs.
//!
//! Both tiles have rows of 33 (one element of padding). The loads of B are where it matters:
//! the 16 different `c0` of a warp read `sub_b[c0][j]` at words 33·c0 + j, which fall in 16
//! different banks; unpadded (32·c0 + j) they would all be in bank j. The two rows of A a
//! warp reads are broadcasts.
//!
//! The write: a thread's four results are two pairs of rows in two columns, so writing them
//! directly would make a warp touch 16 columns of C (16 separate segments) per store. The
//! document stages them in `sub_a` as `[col][row]` and then lets each warp write whole
//! columns of the tile (lane = row): 32 consecutive elements per store.
//!
//! Differences from the document's code, for correctness: it has no barrier at the end of a
//! k-step (another warp may still read `sub_a`/`sub_b` when the next staging, or the final
//! staging of the results into `sub_a`, overwrites them: the emulator reports the race); a
//! `sync_threads()` closes each step here. Edges are handled as in `cg-shuffle`.
//!
//! PTX: the j-loop is fully unrolled: 32 × (`ld.shared.f32` ×4, `fma.rn.f32` ×4), 128 shared
//! loads for 128 FMAs. ptxas (sm_90): 32 registers (f32), 40 (f64), no stack frame, no
//! spills; shared memory 8,448 bytes (f32) or 16,896 (f64).
//!
//! Measured: H100, 4096³, 2026-11-21 (`docs/results/h100-2026-11-21/`): f32 15.15 TFLOP/s (0.295× cuBLAS; the document: 22%), f64 8.78.
use crate::device::{
    block_idx_x, block_idx_y, sync_threads, thread_idx_x, thread_idx_y, Real, Shared, WARP_SIZE,
};
use crate::gemm::{blocks_for, GemmArgs, Geometry};

/// Side of the tile of C a block computes.
pub const TILE: u32 = 32;
/// Warps per block (256 threads).
pub const WARPS: u32 = 8;
/// Padded row length of both shared tiles.
const STRIDE: u32 = TILE + 1;

/// `sub_a` (`[k][row]`, later `[col][row]` for the results) and `sub_b` (`[col][k]`),
/// 32 rows of 33 each.
#[inline(always)]
fn layout<T: Real>() -> (Shared<T>, Shared<T>) {
    let sub_a = Shared::<T>::at(0, TILE * STRIDE);
    (sub_a, sub_a.next::<T>(TILE * STRIDE))
}

pub fn geometry(m: u32, n: u32, _k: u32, element_bytes: u32) -> Geometry {
    let shared_bytes = match element_bytes {
        4 => layout::<f32>().1.end_byte(),
        _ => layout::<f64>().1.end_byte(),
    };
    Geometry {
        grid: (blocks_for(m, TILE), blocks_for(n, TILE)),
        block: (WARP_SIZE, WARPS),
        shared_bytes,
    }
}

/// # Safety
/// `args` must describe valid device matrices; launch with [`geometry`].
#[inline(always)]
pub unsafe fn gemm<T: Real>(args: GemmArgs<T>) {
    let (sub_a, sub_b) = layout::<T>();
    let (lane, warp) = (thread_idx_x(), thread_idx_y());
    let rank = warp * WARP_SIZE + lane;
    let (r0, c0) = (2 * (rank / 16), 2 * (rank % 16));
    let row0 = block_idx_x() * TILE;
    let col0 = block_idx_y() * TILE;
    // out[i][e]: column c0 + i, row r0 + e.
    let mut out = [[T::ZERO; 2]; 2];

    let mut k0 = 0;
    // ANCHOR: core_loop
    while k0 < args.k {
        let mut i = warp;
        while i < TILE {
            let a = unsafe { args.a_or_zero(row0 + lane, k0 + i) };
            sub_a.store(i * STRIDE + lane, a);
            let b = unsafe { args.b_or_zero(k0 + lane, col0 + i) };
            sub_b.store(i * STRIDE + lane, b);
            i += WARPS;
        }
        sync_threads();
        for j in 0..TILE {
            let a = [sub_a.load(j * STRIDE + r0), sub_a.load(j * STRIDE + r0 + 1)];
            let b = [
                sub_b.load(c0 * STRIDE + j),
                sub_b.load((c0 + 1) * STRIDE + j),
            ];
            for i in 0..2 {
                for e in 0..2 {
                    out[i][e] = a[e].fma(b[i], out[i][e]);
                }
            }
        }
        // Closes the step: the next staging (or the results below) overwrite the tiles.
        sync_threads();
        k0 += TILE;
    }
    // ANCHOR_END: core_loop

    // Stage the 2x2 results as sub_a[col][row], then write whole columns of the tile.
    for (i, column) in out.iter().enumerate() {
        for (e, value) in column.iter().enumerate() {
            sub_a.store((c0 + i as u32) * STRIDE + r0 + e as u32, *value);
        }
    }
    sync_threads();
    let mut i = warp;
    while i < TILE {
        let (row, col) = (row0 + lane, col0 + i);
        if row < args.m && col < args.n {
            unsafe { args.store_c(args.c_at(row, col), sub_a.load(i * STRIDE + lane)) }
        }
        i += WARPS;
    }
}
