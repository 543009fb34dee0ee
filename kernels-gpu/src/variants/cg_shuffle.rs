//! `cg-shuffle`: a 32×32 tile of C per block of eight warps, A's values passed around the warp
//! with shuffles, the output tile accumulated in shared memory.
//!
//! Source: `004_…txt`, `sgemm_naive` (cooperative groups: `cg::tiled_partition<32>`,
//! `warp.shfl`). The document's own verdict: 7% of cuBLAS; Nsight Compute showed it read
//! 20× cuBLAS's bytes from device and shared memory, stalled on MIO throttle (shared-memory
//! traffic) and long scoreboard.
//!
//! Algorithm (256 threads, warp w = `thread_idx_y`, lane l = `thread_idx_x`). For each step of
//! 32 along k, the block stages `sub_a[r][j]` = A(row0 + r, k0 + j) (padded rows of 33, the
//! load is coalesced along r) and `sub_b[c][j]` = B(k0 + j, col0 + c) (unpadded). Then warp w
//! takes output rows i = w, w + 8, …: lane l holds `a = sub_a[i][l]` = A(i, k0 + l) and
//! computes C(i, l)'s partial sum Σⱼ A(i, k0 + s)·B(k0 + s, l) with s = (l + j) mod 32: the A
//! value comes from lane s by `shfl.sync.idx`, the B value from `sub_b[l][s]`. The rotation by
//! l makes the 32 lanes read 32 different banks of the unpadded `sub_b` (a diagonal), where a
//! plain loop over s would put all lanes in one bank. The partial sum is added to the shared
//! output tile `output[i][l]`; at the end each warp writes columns of C from
//! `output[l][i]` (the padding makes that transposed read conflict-free), coalesced.
//!
//! Changed from `blocked-kahan` / `tiled`: the inner product is a warp collective (one shuffle
//! per FMA) instead of a shared-memory read of A per FMA, and a block is 8 warps for 32×32
//! outputs (four outputs per thread, held in shared memory, not registers).
//!
//! Differences from the document's code, all about correctness:
//! - It has no barrier at the end of the k-step, so a warp that finishes its rows can
//!   overwrite `sub_a`/`sub_b` with the next step while another warp still reads them. The
//!   emulator reports that race; here a `sync_threads()` closes each step.
//! - Its zeroing of `output` is followed by a barrier; each element of `output` is zeroed,
//!   accumulated and only then (after the last barrier) read by others, so the zeroing needs
//!   none and it is dropped.
//! - Edges: A and B are staged as zero outside the matrices and only elements inside C are
//!   written, so every m, n, k works (the document assumes multiples of 32). All 32 lanes
//!   always take part in the shuffles: no thread leaves early.
//!
//! PTX: the j-loop is unrolled: 31 × (`shfl.sync.idx.b32`, `ld.shared.f32`, `fma.rn.f32`) after
//! one `ld.shared` of `a`, one of the diagonal and a `mul.rn.f32`; f64 needs two
//! `shfl.sync.idx.b32` per value (shuffles move 32 bits). LLVM computes the 31 rotated lane
//! numbers and `sub_b` addresses once, before the k-loop, and keeps them in registers: ptxas
//! (sm_90) reports 96 registers (f32) and 213 (f64), no stack frame, no spills. At 256 threads
//! that allows two blocks per SM for f32 and one for f64. Shared memory: 12,544 bytes (f32),
//! 25,088 (f64).
//!
//! Measured: H100, 4096³, 2026-11-21 (`docs/results/h100-2026-11-21/`): f32 5.24 TFLOP/s (0.102× cuBLAS; the document: 7%), f64 1.90.
use crate::device::{
    block_idx_x, block_idx_y, shfl_idx, sync_threads, thread_idx_x, thread_idx_y, Real, Shared,
    WARP_SIZE,
};
use crate::gemm::{blocks_for, GemmArgs, Geometry};

/// Side of the tile of C a block computes.
pub const TILE: u32 = 32;
/// Warps per block (256 threads).
pub const WARPS: u32 = 8;

/// `sub_a` (`[32][33]`), `sub_b` (`[32][32]`), `output` (`[32][33]`).
#[inline(always)]
fn layout<T: Real>() -> (Shared<T>, Shared<T>, Shared<T>) {
    let sub_a = Shared::<T>::at(0, TILE * (TILE + 1));
    let sub_b = sub_a.next::<T>(TILE * TILE);
    let output = sub_b.next::<T>(TILE * (TILE + 1));
    (sub_a, sub_b, output)
}

pub fn geometry(m: u32, n: u32, _k: u32, element_bytes: u32) -> Geometry {
    let shared_bytes = match element_bytes {
        4 => layout::<f32>().2.end_byte(),
        _ => layout::<f64>().2.end_byte(),
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
    let (sub_a, sub_b, output) = layout::<T>();
    const STRIDE: u32 = TILE + 1;
    let (lane, warp) = (thread_idx_x(), thread_idx_y());
    let row0 = block_idx_x() * TILE;
    let col0 = block_idx_y() * TILE;

    let mut i = warp;
    while i < TILE {
        output.store(i * STRIDE + lane, T::ZERO);
        i += WARPS;
    }

    let mut k0 = 0;
    // ANCHOR: core_loop
    while k0 < args.k {
        // Staging: warp w copies columns w, w + 8, … of each tile; lanes run down a column.
        let mut i = warp;
        while i < TILE {
            let a = unsafe { args.a_or_zero(row0 + lane, k0 + i) };
            sub_a.store(lane * STRIDE + i, a);
            let b = unsafe { args.b_or_zero(k0 + lane, col0 + i) };
            sub_b.store(i * TILE + lane, b);
            i += WARPS;
        }
        sync_threads();

        let mut i = warp;
        while i < TILE {
            let a = sub_a.load(i * STRIDE + lane);
            let mut sum = a * sub_b.load(lane * TILE + lane);
            for j in 1..WARP_SIZE {
                let src = (lane + j) % WARP_SIZE;
                sum = shfl_idx(a, src).fma(sub_b.load(lane * TILE + src), sum);
            }
            let at = i * STRIDE + lane;
            output.store(at, output.load(at) + sum);
            i += WARPS;
        }
        // The next step overwrites sub_a and sub_b (missing in the document).
        sync_threads();
        k0 += TILE;
    }
    // ANCHOR_END: core_loop

    // After the barrier above every partial sum is in `output`: write C column by column.
    let mut i = warp;
    while i < TILE {
        let (row, col) = (row0 + lane, col0 + i);
        if row < args.m && col < args.n {
            unsafe { args.store_c(args.c_at(row, col), output.load(lane * STRIDE + i)) }
        }
        i += WARPS;
    }
}
