//! `fynv`: the 128×128 double-buffered kernel `g_fgemm` the document measured itself against.
//!
//! Source: `001_…txt`, namespace `fynv`, `g_fgemm` (from fynv/optimal_sgemm_cuda_c). The
//! document's `gemm128` was written after it and shares its plan: 256 threads, a 128×128 tile
//! of C per block, k in slices of 8, 8×8 outputs per thread as two 4-row halves 64 rows apart
//! times two 4-column halves 64 columns apart, 16-byte global loads prefetched into registers,
//! two shared buffers swapped after every slice (one barrier per slice). What is fynv's own:
//! - the code is written around an 8-vector `f8` (two float4s, 64 elements apart in shared
//!   memory): per step `d_load8` of A's column and of B's row, then eight `d_mult8v`, each one
//!   8-row column of the accumulator times one element of B (here `load8` and `mult8v`);
//! - the shared pool is `[A buffer 1 | A buffer 2 | B buffer 1 | B buffer 2]` (1024 elements
//!   each), not `gemm128`'s `[A | B]` per buffer;
//! - the original has no alpha/beta (it writes `C = A*B` with float4 stores) and needs every
//!   size a multiple of 128 and k of 8. Here it gets the common epilogue and the common edge
//!   handling of `v5`: zero-filled staging, guarded element stores, and the 16-byte-load rule
//!   m, k, lda, ldb multiples of 4.
//!
//! The nvcc-compiled original ran at 39.9 TFLOP/s on the H100 at 4096³ (`gemm_128x128`: 43.4).
//!
//! PTX (sm_90): the j-loop is fully unrolled: per slice 32 `ld.shared.v4.f32` and 512
//! `fma.rn.f32`, the same 16/17 mix as `gemm128`; ptxas: 126 registers (f64: 232), no stack,
//! no spills. In SASS the slice is 512 FFMA, 32 LDS.128 and about 30 other instructions
//! (staging, loop control), like `gemm128`'s: the two kernels compile to nearly the same loop. `__launch_bounds__(256)` of the original
//! has no Rust spelling; ptxas allocates as it likes, and 256 threads fit at any register count.
//!
//! Measured: H100, 4096³, 2026-11-21 (`docs/results/h100-2026-11-21/`): f32 47.98 TFLOP/s (0.934× cuBLAS; C++ original 39.9), f64 18.08; 8192³ f32 48.46.
use crate::device::{block_idx_x, block_idx_y, sync_threads, thread_idx_x, Real, Shared};
use crate::gemm::{blocks_for, GemmArgs, Geometry};

pub const TILE: u32 = 128;
pub const STEP: u32 = 8;
pub const THREADS: u32 = 256;
/// Elements of one slice of A (128×8) or of B (8×128).
const SLICE: u32 = TILE * STEP;

pub fn geometry(m: u32, n: u32, _k: u32, element_bytes: u32) -> Geometry {
    Geometry {
        grid: (blocks_for(m, TILE), blocks_for(n, TILE)),
        block: (THREADS, 1),
        shared_bytes: 4 * SLICE * element_bytes,
    }
}

/// `d_load8`: elements `i..i+4` and `i+64..i+68`, two 16-byte loads.
#[inline(always)]
fn load8<T: Real>(s: Shared<T>, i: u32) -> [T; 8] {
    let lo = s.load4(i);
    let hi = s.load4(i + 64);
    [lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]]
}

/// `d_mult8v`: `c += a * b` for an 8-vector `a` and a scalar `b`.
#[inline(always)]
fn mult8v<T: Real>(c: &mut [T; 8], a: &[T; 8], b: T) {
    for (c, &a) in c.iter_mut().zip(a) {
        *c = a.fma(b, *c);
    }
}

/// # Safety
/// `args` must describe valid device matrices with m, k, lda, ldb multiples of 4 and
/// 16-byte-aligned A and B; launch with [`geometry`].
#[inline(always)]
pub unsafe fn gemm<T: Real>(args: GemmArgs<T>) {
    let smem = Shared::<T>::at(0, 4 * SLICE);
    let tid = thread_idx_x();
    let (x_a, y_a) = (tid & 31, tid >> 5);
    let (x_b, y_b) = (tid & 1, tid >> 1);
    let (x_c, y_c) = (tid & 15, tid >> 4);
    let row0 = block_idx_x() * TILE;
    let col0 = block_idx_y() * TILE;
    // p: A(row0 + 4 * x_a..+4, i + y_a); q: B(i + 4 * x_b..+4, col0 + y_b).
    let load_p = |i: u32| unsafe { args.a4_or_zero(row0 + 4 * x_a, i + y_a) };
    let load_q = |i: u32| unsafe { args.b4_or_zero(i + 4 * x_b, col0 + y_b) };

    // Offsets of s_A1, s_A2, s_B1, s_B2 in the pool; the "1" buffers are the current ones.
    let (mut s_a1, mut s_a2) = (0, SLICE);
    let (mut s_b1, mut s_b2) = (2 * SLICE, 3 * SLICE);
    // l_c[col]: the 8 rows of one of the thread's 8 columns (fynv's l_C.a .. l_C.h).
    let mut l_c = [[T::ZERO; 8]; 8];
    let mut p = load_p(0);
    let mut q = load_q(0);
    let mut i = 0;
    // ANCHOR: core_loop
    while i < args.k {
        smem.store4(s_a1 + 4 * tid, p);
        for (e, &value) in q.iter().enumerate() {
            smem.store(s_b1 + (4 * x_b + e as u32) * TILE + y_b, value);
        }
        sync_threads();
        if i + STEP < args.k {
            p = load_p(i + STEP);
            q = load_q(i + STEP);
        }
        for j in 0..STEP {
            let a = load8(smem, s_a1 + j * TILE + 4 * x_c);
            let b = load8(smem, s_b1 + j * TILE + 4 * y_c);
            for (column, &b) in l_c.iter_mut().zip(&b) {
                mult8v(column, &a, b);
            }
        }
        core::mem::swap(&mut s_a1, &mut s_a2);
        core::mem::swap(&mut s_b1, &mut s_b2);
        i += STEP;
    }
    // ANCHOR_END: core_loop
    // Column c of l_c is C's column col0 + 4 * y_c + c (c < 4) or + 60 + c (c >= 4); its
    // elements are rows row0 + 4 * x_c + r (r < 4) or + 60 + r (r >= 4).
    for (c, column) in l_c.iter().enumerate() {
        let c = c as u32;
        let col = col0 + 4 * y_c + c + if c < 4 { 0 } else { 60 };
        if col >= args.n {
            continue;
        }
        for half in 0..2u32 {
            let row = row0 + 4 * x_c + 64 * half;
            if row < args.m {
                for r in 0..4u32 {
                    let value = column[(4 * half + r) as usize];
                    unsafe { args.store_c(args.c_at(row + r, col), value) }
                }
            }
        }
    }
}
