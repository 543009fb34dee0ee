//! `cg-regs`: the 32×32 tile of `cg-shuffle` with its outputs in registers, four per thread.
//!
//! Source: `004_…txt`, `sgemm_shared` ("sgemm opt"). The document measured 20% of cuBLAS (from
//! 7%), with far fewer MIO-throttle stalls, and noted that global memory is still read
//! redundantly (the tiles are only 32 wide).
//!
//! Changed from `cg-shuffle`: the shared output tile and the shuffles are gone. Warp w owns
//! columns w, w + 8, w + 16, w + 24 of the block's tile of C and lane l owns row l, so each
//! thread keeps its four sums in registers for the whole k-loop and writes them once, each
//! warp store covering 32 consecutive elements of a column of C. Both tiles are stored as the
//! global loads arrive, without transposing: `sub_a[j][r]` = A(row0 + r, k0 + j) and
//! `sub_b[c][j]` = B(k0 + j, col0 + c). In the inner loop lane l reads `sub_a[j][l]` (32
//! consecutive words: conflict-free without padding) and `sub_b[c][j]` (one address per warp:
//! a broadcast).
//!
//! The document's loop runs i (the four outputs) outside j and remarks that hoisting
//! `sub_a[j][l]` into a register array changed nothing: the compiler already reuses it. Here
//! the loop is written with j outside, which states that reuse: per j one load of A, four
//! broadcast loads of B, four FMAs.
//!
//! Edges and barriers as in `cg-shuffle` (zero-filled staging, guarded stores, a barrier
//! closing each k-step, which the document's code has here).
//!
//! PTX: the j-loop is fully unrolled: 32 × (`ld.shared.f32` ×5, `fma.rn.f32` ×4), 160 shared
//! loads for 128 FMAs. ptxas (sm_90): 36 registers (f32), 40 (f64), no stack frame, no
//! spills; shared memory 8 KiB (f32) or 16 KiB (f64).
//!
//! Measured: H100, 4096³, 2026-11-21 (`docs/results/h100-2026-11-21/`): f32 16.78 TFLOP/s (0.327× cuBLAS; the document: 20% on its GPU), f64 8.99.
use crate::device::{
    block_idx_x, block_idx_y, sync_threads, thread_idx_x, thread_idx_y, Real, Shared, WARP_SIZE,
};
use crate::gemm::{blocks_for, GemmArgs, Geometry};

/// Side of the tile of C a block computes.
pub const TILE: u32 = 32;
/// Warps per block (256 threads).
pub const WARPS: u32 = 8;
/// Outputs per thread: TILE * TILE / (32 * WARPS).
pub const PER_THREAD: usize = (TILE / WARPS) as usize;

/// `sub_a` (`[k][row]`) and `sub_b` (`[col][k]`), 32 × 32 each, unpadded.
#[inline(always)]
fn layout<T: Real>() -> (Shared<T>, Shared<T>) {
    let sub_a = Shared::<T>::at(0, TILE * TILE);
    (sub_a, sub_a.next::<T>(TILE * TILE))
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
    let row0 = block_idx_x() * TILE;
    let col0 = block_idx_y() * TILE;
    let mut out = [T::ZERO; PER_THREAD];

    let mut k0 = 0;
    // ANCHOR: core_loop
    while k0 < args.k {
        let mut i = warp;
        while i < TILE {
            let a = unsafe { args.a_or_zero(row0 + lane, k0 + i) };
            sub_a.store(i * TILE + lane, a);
            let b = unsafe { args.b_or_zero(k0 + lane, col0 + i) };
            sub_b.store(i * TILE + lane, b);
            i += WARPS;
        }
        sync_threads();
        for j in 0..TILE {
            let a = sub_a.load(j * TILE + lane);
            for (q, acc) in out.iter_mut().enumerate() {
                let c = warp + q as u32 * WARPS;
                *acc = a.fma(sub_b.load(c * TILE + j), *acc);
            }
        }
        sync_threads();
        k0 += TILE;
    }
    // ANCHOR_END: core_loop

    let row = row0 + lane;
    for (q, acc) in out.into_iter().enumerate() {
        let col = col0 + warp + q as u32 * WARPS;
        if row < args.m && col < args.n {
            unsafe { args.store_c(args.c_at(row, col), acc) }
        }
    }
}
