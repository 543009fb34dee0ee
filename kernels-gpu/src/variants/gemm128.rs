//! `gemm128`: a 128×128 tile of C per block of 256 threads, an 8×8 register tile per thread
//! (2×2 blocks of 4×4), k-step 8, two shared buffers used alternately.
//!
//! Source: `001_…txt`, `gemm_128x128` (launched as `<float, float4, 1>`), which the document
//! built after reading fynv's `g_fgemm` (see [`super::fynv`]). Changed from `gemm64`:
//! - **8×8 per thread.** A thread holds two 4-row pieces of A's column (rows `4x..4x+4` and
//!   `64 + 4x..+4`) and two 4-column pieces of B's row, four `ld.shared.v4`, and does 64 FMAs
//!   with them: useful share 64/68 = 16/17 (gemm64: 8/9). Spreading each thread's rows over
//!   two 64-row halves keeps the 16 threads of a row group reading 16 consecutive 16-byte
//!   chunks (conflict-free) instead of strided ones.
//! - **Two buffers.** Slice `l` is written to buffer `l % 2`. A thread that passed the barrier
//!   of slice `l` has finished computing on slice `l - 1`, the other buffer, so the barrier
//!   after the compute is gone: one `bar.sync` per slice instead of two.
//! - **Unrolled.** The document added `#pragma unroll(4)` to the 8-step loop (nvcc had not
//!   unrolled it; `unroll(8)` was slower on the V100). Here the 8 steps are unrolled fully.
//!
//! Shared memory: 2 buffers × (128×8 of A + 8 rows of 132 for B) = 4160 elements (16.25 KiB
//! for f32). B's rows are 132 wide, not the document's 128, so that the scattered stores of
//! its transposed slice are conflict-free (2-way with 128). It made no measurable difference:
//! 43.36 TFLOP/s with 128, 43.31 with 132 on the H100 at 4096³ (4 stores per 512 FMAs).
//! Staging: thread t loads A(4 * (t % 32)..+4, l + t / 32) and B(l + 4 * (t % 2)..+4, t / 2)
//! as 16-byte vectors, prefetched for slice `l + 8` after the barrier as in `v5`. Edges and
//! shape rule as in `v5`: zero-filled staging, guarded stores, m, k, lda, ldb multiples of 4.
//!
//! PTX (sm_90): one slice is 32 `ld.shared.v4.f32` and 512 `fma.rn.f32` (the 16/17 mix),
//! plus the staging: `ld.global.v4.b32` ×2, `st.shared.v4.f32` ×1, `st.shared.f32` ×4, one
//! `bar.sync`. The 64 accumulators stay in registers; no local memory. The shared addresses
//! reach ptxas as register + offset arithmetic (the buffer offset is a run-time value), and
//! ptxas folds it: in SASS the slice is 512 FFMA, 32 `LDS.128` with immediate offsets and
//! about 30 other instructions. ptxas: 124 registers (2 blocks per SM), f64: 216 registers,
//! 512 DFMA to 64 `LDS.128`; no stack, no spills. No launch bound is needed: 256 threads
//! × at most 255 registers fits the register file.
//!
//! Measured: H100, 4096³, 2026-11-21 (`docs/results/h100-2026-11-21/`): f32 47.74 TFLOP/s (0.930× cuBLAS; C++ original 43.4), f64 18.24; 8192³ f32 48.59 (0.946×). The guarded staging through `GemmArgs::a4_or_zero` was worth +10% over per-kernel closures (docs/perf-notes.md).
use crate::device::{block_idx_x, block_idx_y, sync_threads, thread_idx_x, Real, Shared};
use crate::gemm::{blocks_for, GemmArgs, Geometry};

pub const TILE: u32 = 128;
pub const STEP: u32 = 8;
pub const THREADS: u32 = 256;
/// Row stride of B's transposed slice: 132 (a multiple of 4 for the 16-byte loads), so that
/// the scattered stores of a warp (2 rows × 16 columns) hit 32 different banks (2-way
/// conflicts with 128).
const B_STRIDE: u32 = TILE + 4;
/// Elements of one buffer: A's 128×8 slice then B's 8×128 slice.
const BUFFER: u32 = TILE * STEP + STEP * B_STRIDE;

#[inline(always)]
fn pool<T: Real>() -> Shared<T> {
    Shared::<T>::at(0, 2 * BUFFER)
}

pub fn geometry(m: u32, n: u32, _k: u32, element_bytes: u32) -> Geometry {
    Geometry {
        grid: (blocks_for(m, TILE), blocks_for(n, TILE)),
        block: (THREADS, 1),
        shared_bytes: 2 * BUFFER * element_bytes,
    }
}

/// # Safety
/// `args` must describe valid device matrices with m, k, lda, ldb multiples of 4 and
/// 16-byte-aligned A and B; launch with [`geometry`].
#[inline(always)]
pub unsafe fn gemm<T: Real>(args: GemmArgs<T>) {
    let s = pool::<T>();
    let idx = thread_idx_x();
    let row0 = block_idx_x() * TILE;
    let col0 = block_idx_y() * TILE;
    // Staging: A(row0 + 4 * xa..+4, l + ya), B(l + 4 * xb..+4, col0 + yb).
    let (xa, ya) = (idx % 32, idx / 32);
    let (xb, yb) = (idx % 2, idx / 2);
    // Output: rows 4 * xc + {0, 64} + 0..4, columns 4 * yc + {0, 64} + 0..4 of the tile.
    let (xc, yc) = (idx % 16, idx / 16);
    let load_a = |l: u32| unsafe { args.a4_or_zero(row0 + 4 * xa, l + ya) };
    let load_b = |l: u32| unsafe { args.b4_or_zero(l + 4 * xb, col0 + yb) };

    // ANCHOR: core_loop
    let mut next_a = load_a(0);
    let mut next_b = load_b(0);
    // acc[j][i]: row 4 * xc + (i / 4) * 64 + i % 4, column 4 * yc + (j / 4) * 64 + j % 4.
    let mut acc = [[T::ZERO; 8]; 8];
    let mut buffer = 0;
    let mut l = 0;
    while l < args.k {
        let s_a = buffer;
        let s_b = buffer + TILE * STEP;
        s.store4(s_a + 4 * idx, next_a);
        for i in 0..4 {
            s.store(s_b + (4 * xb + i) * B_STRIDE + yb, next_b[i as usize]);
        }
        sync_threads();
        if l + STEP < args.k {
            next_a = load_a(l + STEP);
            next_b = load_b(l + STEP);
        }
        for kk in 0..STEP {
            let a_lo = s.load4(s_a + kk * TILE + 4 * xc);
            let a_hi = s.load4(s_a + kk * TILE + 4 * xc + 64);
            let b_lo = s.load4(s_b + kk * B_STRIDE + 4 * yc);
            let b_hi = s.load4(s_b + kk * B_STRIDE + 4 * yc + 64);
            let a = [
                a_lo[0], a_lo[1], a_lo[2], a_lo[3], a_hi[0], a_hi[1], a_hi[2], a_hi[3],
            ];
            let b = [
                b_lo[0], b_lo[1], b_lo[2], b_lo[3], b_hi[0], b_hi[1], b_hi[2], b_hi[3],
            ];
            for j in 0..8 {
                for i in 0..8 {
                    acc[j][i] = a[i].fma(b[j], acc[j][i]);
                }
            }
        }
        // No second barrier: the next slice goes to the other buffer.
        buffer = BUFFER - buffer;
        l += STEP;
    }
    // ANCHOR_END: core_loop
    for (j, column) in acc.iter().enumerate() {
        let j = j as u32;
        let col = col0 + 4 * yc + (j / 4) * 64 + j % 4;
        if col >= args.n {
            continue;
        }
        for half in 0..2u32 {
            let row = row0 + 4 * xc + half * 64;
            if row < args.m {
                for i in 0..4u32 {
                    let value = column[(half * 4 + i) as usize];
                    unsafe { args.store_c(args.c_at(row + i, col), value) }
                }
            }
        }
    }
}
