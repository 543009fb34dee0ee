//! `gemm64`: a 64×64 tile of C per block of 256 threads, a 4×4 register tile per thread,
//! 16-byte shared loads of both A and B.
//!
//! Source: `001_…txt`, `gemm_64x64` (launched as `<float, float4, 0>`: one shared buffer, two
//! barriers per step). Changed from `v5`: each thread computes a 4×4 block of C instead of a
//! 4×1 column, so a block of 256 threads covers 64×64. Per step of k a thread now loads four
//! elements of A's column *and* four of B's row (both `ld.shared.v4`) and does 16 FMAs with
//! them: useful share 16/18 = 8/9 (v5: 4/6). The shared memory stays at 2048 elements (8 KiB
//! for f32), so the slices become 64×16 of A and 16×64 of B, and k advances by 16.
//! The document measured 83 ms at 8192³ on the V100, 84 % of its peak.
//!
//! Layout: `s_a[kk * 64 + row]` (A's slice as it lies in memory, one 16-byte store per
//! thread), `s_b[kk * 68 + col]` (B's slice transposed with four scalar stores, so that the
//! four columns a thread needs at step kk are contiguous and come in one 16-byte load; rows of
//! 68 instead of the document's 64 halve the bank conflicts of those stores; with 64 the
//! kernel ran at 30.39 TFLOP/s on the H100 at 4096³).
//! Thread `t` owns rows `4 * (t % 16)..+4` and columns `4 * (t / 16)..+4` of the tile.
//! (The document's epilogue writes its accumulator transposed, row and column swapped, which
//! its all-constant test inputs could not reveal; here `acc[col][row]` goes to C(row, col).)
//!
//! Prefetch as in `v5`: the next slice's global loads are issued after the barrier and before
//! the 16 compute steps. Edges and shape rule as in `v5`: zero-filled staging, guarded stores,
//! m, k, lda, ldb multiples of 4.
//!
//! PTX (sm_90): the 16 steps are fully unrolled; each is two `ld.shared.v4.f32` and sixteen
//! `fma.rn.f32` (256 FMA to 32 vector loads per slice). Staging per slice: `ld.global.v4.b32`
//! ×2, `st.shared.v4.f32` ×1, `st.shared.f32` ×4. No local memory. SASS: 256 FFMA + 32
//! `LDS.128` (immediate offsets) per slice and about 10 other instructions; ptxas:
//! 53 registers (f64: 80), no stack, no spills.
//!
//! Measured: H100, 4096³, 2026-11-21 (`docs/results/h100-2026-11-21/`): f32 32.24 TFLOP/s (0.628× cuBLAS; C++ original 30.4), f64 10.28.
use crate::device::{block_idx_x, block_idx_y, sync_threads, thread_idx_x, Real, Shared};
use crate::gemm::{blocks_for, GemmArgs, Geometry};

pub const TILE: u32 = 64;
/// k per slice: 64×16 of A plus 16×64 of B is 2048 elements of shared memory.
pub const STEP: u32 = 16;
pub const THREADS: u32 = 256;
/// Row stride of B's transposed slice: 68 (a multiple of 4 for the 16-byte loads), which
/// turns the 4-way bank conflicts of the scattered stores into 2-way ones.
const B_STRIDE: u32 = TILE + 4;

#[inline(always)]
fn tiles<T: Real>() -> (Shared<T>, Shared<T>) {
    let s_a = Shared::<T>::at(0, TILE * STEP);
    let s_b = s_a.next::<T>(STEP * B_STRIDE);
    (s_a, s_b)
}

pub fn geometry(m: u32, n: u32, _k: u32, element_bytes: u32) -> Geometry {
    Geometry {
        grid: (blocks_for(m, TILE), blocks_for(n, TILE)),
        block: (THREADS, 1),
        shared_bytes: (TILE * STEP + STEP * B_STRIDE) * element_bytes,
    }
}

/// # Safety
/// `args` must describe valid device matrices with m, k, lda, ldb multiples of 4 and
/// 16-byte-aligned A and B; launch with [`geometry`].
#[inline(always)]
pub unsafe fn gemm<T: Real>(args: GemmArgs<T>) {
    let (s_a, s_b) = tiles::<T>();
    let idx = thread_idx_x();
    let row0 = block_idx_x() * TILE;
    let col0 = block_idx_y() * TILE;
    // Staging: A(row0 + ar..+4, l + ak) and B(l + bk..+4, col0 + bc).
    let (ar, ak) = ((idx * 4) % TILE, idx / (TILE / 4));
    let (bk, bc) = ((idx * 4) % STEP, idx / (STEP / 4));
    // Output: rows cr..cr+4, columns cc..cc+4 of the tile.
    let (cr, cc) = (4 * (idx % 16), 4 * (idx / 16));
    let load_a = |l: u32| unsafe { args.a4_or_zero(row0 + ar, l + ak) };
    let load_b = |l: u32| unsafe { args.b4_or_zero(l + bk, col0 + bc) };

    // ANCHOR: core_loop
    let mut next_a = load_a(0);
    let mut next_b = load_b(0);
    // acc[j][i]: C(row0 + cr + i, col0 + cc + j).
    let mut acc = [[T::ZERO; 4]; 4];
    let mut l = 0;
    while l < args.k {
        s_a.store4(ak * TILE + ar, next_a);
        for i in 0..4 {
            s_b.store((bk + i) * B_STRIDE + bc, next_b[i as usize]);
        }
        sync_threads();
        if l + STEP < args.k {
            next_a = load_a(l + STEP);
            next_b = load_b(l + STEP);
        }
        for kk in 0..STEP {
            let a = s_a.load4(kk * TILE + cr);
            let b = s_b.load4(kk * B_STRIDE + cc);
            for j in 0..4 {
                for i in 0..4 {
                    acc[j][i] = a[i].fma(b[j], acc[j][i]);
                }
            }
        }
        sync_threads();
        l += STEP;
    }
    // ANCHOR_END: core_loop
    if row0 + cr < args.m {
        for (j, column) in acc.iter().enumerate() {
            let col = col0 + cc + j as u32;
            if col < args.n {
                for (i, &value) in column.iter().enumerate() {
                    unsafe { args.store_c(args.c_at(row0 + cr + i as u32, col), value) }
                }
            }
        }
    }
}
