//! `tc-tf32-basic`: the tensor cores' first lesson. Each warp computes a 32×32 piece of C with
//! `mma.sync.m16n8k8` in TF32, its fragments read from shared memory exactly as the PTX ISA's
//! fragment table places them.
//!
//! Source: none of the documents. `001_…txt` left the tensor cores out because `wmma` then took
//! only fp16 inputs; since Ampere they take TF32 (f32's range, 10 mantissa bits), so an f32
//! GEMM can use them if its result may carry TF32's input rounding (relative error about 3·10⁻⁴
//! instead of 10⁻⁶: `host` checks these variants against the TF32 tolerance, see
//! `gpu-gemm/src/verify.rs`).
//!
//! What changes from the CUDA-core kernels: no thread owns an output any more. A warp owns a
//! 16×8 tile of C per `mma`, and each of its lanes holds four of the tile's elements, two
//! elements of B's 8×8 and four of A's 16×8, at the positions of
//! [`crate::device::mma`]'s table (g = lane / 4, t = lane % 4):
//! `a = [A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4]]`, `b = [B[t][g], B[t+4][g]]`,
//! `c = [C[g][2t], C[g][2t+1], C[g+8][2t], C[g+8][2t+1]]`. This kernel loads each register from
//! shared memory with one scalar load at exactly that position: readable, and slow (six
//! `ld.shared.f32` and six `cvt.rna.tf32.f32` per `mma`). [`super::tc_tf32`] is the fast
//! version of the same arithmetic.
//!
//! - Block: 64×64 of C, 4 warps as 2×2, each warp 32×32 = 2×4 `mma` tiles (8 accumulators of 4
//!   registers per lane). k-step 8: one `mma` k-step per slice.
//! - Shared memory, one buffer: A's slice as `As[kk][m]` (a column of A is a k-step), rows of
//!   64 + 8 so that the lanes' `A[g][t]` reads (`t·72 + g`: banks `8t + g`) hit 32 banks; B's
//!   slice as `Bs[n][kk]` (a column of B is k-contiguous), rows of 8 + 4 (`12g + t`: 32 banks).
//! - Staging through registers with zero-filled edges, two barriers per slice (as `v4`): any
//!   m, n, k, lda, ldb.
//! - Inputs are rounded to TF32 when a fragment is loaded (`Tf32::round`, `cvt.rna.tf32.f32`);
//!   the `mma` accumulates in f32.
//!
//! Measured (H100, 4096³ f32, median): 42.9 TFLOP/s, 0.12× cuBLAS TF32 and 0.84× cuBLAS SGEMM
//! in the same run, relative error 2.6·10⁻⁴ (cuBLAS TF32's, to three digits): the tensor cores
//! fed one scalar load per register do not yet beat the CUDA cores.
use crate::device::mma::{mma_m16n8k8_tf32, Accum, FragA, FragB, Tf32};
use crate::device::{block_idx_x, block_idx_y, sync_threads, thread_idx_x, Shared, WARP_SIZE};
use crate::gemm::{blocks_for, GemmArgs, Geometry};

const BM: u32 = 64;
const BN: u32 = 64;
const BK: u32 = 8;
const THREADS: u32 = 128;
/// Row strides of the two slices: see the header for why 72 and 12.
const A_STRIDE: u32 = BM + 8;
const B_STRIDE: u32 = BK + 4;
/// `mma` tiles per warp: 2 of 16 rows × 4 of 8 columns.
const TILES_M: usize = 2;
const TILES_N: usize = 4;

pub fn geometry(m: u32, n: u32, _k: u32, element_bytes: u32) -> Geometry {
    Geometry {
        grid: (blocks_for(m, BM), blocks_for(n, BN)),
        block: (THREADS, 1),
        shared_bytes: (BK * A_STRIDE + BN * B_STRIDE) * element_bytes,
    }
}

/// # Safety
/// `args` must describe valid device matrices; launch with [`geometry`].
// Index loops over the accumulator tiles keep every index a constant once unrolled.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
pub unsafe fn gemm(args: GemmArgs<f32>) {
    let a_slice = Shared::<f32>::at(0, BK * A_STRIDE);
    let b_slice = a_slice.next::<f32>(BN * B_STRIDE);
    let tid = thread_idx_x();
    let (row0, col0) = (block_idx_x() * BM, block_idx_y() * BN);
    let (warp, lane) = (tid / WARP_SIZE, tid % WARP_SIZE);
    let (warp_m, warp_n) = (warp % 2 * 32, warp / 2 * 32);
    let (g, t) = (lane / 4, lane % 4);

    let mut acc = [[Accum::<f32, 4>::default(); TILES_N]; TILES_M];
    // ANCHOR: core_loop
    for l in (0..args.k).step_by(BK as usize) {
        // Staging: 512 elements of each slice, 4 per thread, consecutive threads on
        // consecutive rows of a column (coalesced reads of A's and B's columns).
        for e in (tid..BM * BK).step_by(THREADS as usize) {
            let (m, kk) = (e % BM, e / BM);
            a_slice.store(kk * A_STRIDE + m, unsafe {
                args.a_or_zero(row0 + m, l + kk)
            });
            let (kk, n) = (e % BK, e / BK);
            b_slice.store(n * B_STRIDE + kk, unsafe {
                args.b_or_zero(l + kk, col0 + n)
            });
        }
        sync_threads();
        let a_at = |row: u32, k: u32| Tf32::round(a_slice.load(k * A_STRIDE + warp_m + row));
        let b_at = |k: u32, col: u32| Tf32::round(b_slice.load((warp_n + col) * B_STRIDE + k));
        for i in 0..TILES_M {
            let m = 16 * i as u32;
            let a = FragA([
                a_at(m + g, t),
                a_at(m + g + 8, t),
                a_at(m + g, t + 4),
                a_at(m + g + 8, t + 4),
            ]);
            for j in 0..TILES_N {
                let n = 8 * j as u32;
                let b = FragB([b_at(t, n + g), b_at(t + 4, n + g)]);
                acc[i][j] = mma_m16n8k8_tf32(&a, &b, acc[i][j]);
            }
        }
        sync_threads();
    }
    // ANCHOR_END: core_loop

    // D's layout: c = [C[g][2t], C[g][2t+1], C[g+8][2t], C[g+8][2t+1]] of each 16×8 tile.
    for i in 0..TILES_M {
        for j in 0..TILES_N {
            for r in 0..4 {
                let row = row0 + warp_m + 16 * i as u32 + g + 8 * (r as u32 / 2);
                let col = col0 + warp_n + 8 * j as u32 + 2 * t + r as u32 % 2;
                if row < args.m && col < args.n {
                    unsafe { args.store_c(args.c_at(row, col), acc[i][j].0[r]) };
                }
            }
        }
    }
}
