//! `v5`: 256 threads per 32×32 tile of C, four consecutive rows of C per thread, 16-byte
//! loads, and the next slice of A and B prefetched into registers during the current one.
//!
//! Source: `001_…txt`, `gemm_32x32_v5` (launched there as `<float, float4, 0>`: one shared
//! buffer, two barriers per step). Changed from `v4`, for the two costs the document found in
//! `v4`'s PTX, two `ld.shared` per useful `fma`:
//! - **float4.** A thread now computes rows `4t..4t+4` of one column of the tile, so the block
//!   is 256 threads instead of 1024. Its four elements of A's shared column are one
//!   `ld.shared.v4.f32`; B's element is shared by the four FMAs: 1 + 1 loads for 4 FMAs
//!   (useful share 2/3 instead of 1/3). Global loads are 16 bytes too: each thread stages four
//!   consecutive elements of a column of A and of B (`ld.global.v4`).
//! - **Prefetch.** Right after the barrier that publishes slice `l`, the thread issues its
//!   global loads for slice `l + 32` into registers, then computes on slice `l`: the global
//!   latency hides behind 32 steps of shared-memory work. (The document: moving those loads
//!   after the compute instead "clearly slows it down".)
//!
//! Layout: A's slice is stored as it lies in global memory (`s_a[kk * 32 + row]`, one 16-byte
//! store per thread); B's slice is transposed to `s_b[kk * 33 + col]` with four scalar stores,
//! so that B's element for step `kk` is one scalar `ld.shared` that the 8 threads of a column
//! share. (The document's code writes all four of B's values to the same word, a bug its
//! constant test matrices could not see; here each goes to its own row.) The document's rows
//! are 32 wide, which makes those four stores 8-way bank conflicts; rows of 33 make them
//! conflict-free. With 32 this kernel ran at 10.25 TFLOP/s on the H100 at 4096³ (nvcc's
//! original, with its single store: 11.6).
//!
//! Edges: out-of-range vectors of A and B are staged as zeros and only in-range outputs are
//! stored, so m, n and k need no multiple of 32. The 16-byte loads need m, k, lda and ldb to
//! be multiples of 4 (then a vector is wholly inside or wholly outside the matrix, and
//! aligned); the registry rejects other shapes. The guards sit in the staging, once per
//! 32-step slice, not in the inner loop.
//!
//! PTX (sm_90): the 32 steps are fully unrolled; each is one `ld.shared.v4.f32` (A), one
//! `ld.shared.f32` (B) and four `fma.rn.f32`, the document's 4-of-6 mix. The staging is
//! `ld.global.v4.b32` ×2, `st.shared.v4.f32` ×1, `st.shared.f32` ×4 per slice. The shared
//! addresses are precomputed registers in PTX (the loads are inline asm taking a register);
//! ptxas folds them into immediate offsets: in SASS a slice is 128 FFMA, 32 `LDS.128`
//! (`[R+UR+0x80]`, `+0x100`, …), 32 `LDS` and a handful of other instructions. ptxas:
//! 39 registers (f64: 54), no stack, no spills.
//!
//! Measured: H100, 4096³, 2026-11-21 (`docs/results/h100-2026-11-21/`): f32 11.88 TFLOP/s (0.231× cuBLAS; C++ original 11.6), f64 3.48.
use crate::device::{block_idx_x, block_idx_y, sync_threads, thread_idx_x, Real, Shared};
use crate::gemm::{blocks_for, GemmArgs, Geometry};

pub const TILE: u32 = 32;
pub const THREADS: u32 = 256;
/// Row stride of B's transposed slice: 33, so that the scattered stores of a warp (8 rows ×
/// 4 columns) fall in 32 different banks. Unpadded they were 8-way conflicts.
const B_STRIDE: u32 = TILE + 1;

/// The shape rule of every kernel here that reads A and B with 16-byte vectors along their
/// columns: m, k, lda, ldb multiples of 4 (n, ldc are free: C is written element by element).
#[cfg(not(target_arch = "nvptx64"))]
pub fn check_vec4(
    name: &str,
    m: u32,
    k: u32,
    lda: u32,
    ldb: u32,
) -> Result<(), std::string::String> {
    if [m, k, lda, ldb].iter().all(|x| x.is_multiple_of(4)) {
        Ok(())
    } else {
        Err(format!(
            "{name} needs m, k and lda, ldb multiples of 4 for 16-byte loads \
             (got m={m}, k={k}, lda={lda}, ldb={ldb})"
        ))
    }
}

#[inline(always)]
fn tiles<T: Real>() -> (Shared<T>, Shared<T>) {
    let s_a = Shared::<T>::at(0, TILE * TILE);
    let s_b = s_a.next::<T>(TILE * B_STRIDE);
    (s_a, s_b)
}

pub fn geometry(m: u32, n: u32, _k: u32, element_bytes: u32) -> Geometry {
    Geometry {
        grid: (blocks_for(m, TILE), blocks_for(n, TILE)),
        block: (THREADS, 1),
        shared_bytes: (TILE * TILE * element_bytes).next_multiple_of(16)
            + TILE * B_STRIDE * element_bytes,
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
    // Staging and output role of the thread: four consecutive elements `r..r+4` of column `c`
    // (rows of A / C, or k of B), 8 threads per column.
    let r = (idx * 4) % TILE;
    let c = idx / (TILE / 4);
    let a_row_in = row0 + r < args.m;
    let b_col_in = col0 + c < args.n;
    let load_a = |l: u32| unsafe { args.a4_or_zero(row0 + r, l + c) };
    let load_b = |l: u32| unsafe { args.b4_or_zero(l + r, col0 + c) };

    // ANCHOR: core_loop
    let mut next_a = load_a(0);
    let mut next_b = load_b(0);
    let mut acc = [T::ZERO; 4];
    let mut l = 0;
    while l < args.k {
        s_a.store4(c * TILE + r, next_a);
        for i in 0..4 {
            s_b.store((r + i) * B_STRIDE + c, next_b[i as usize]);
        }
        sync_threads();
        // Prefetch slice l + 32 while computing slice l.
        if l + TILE < args.k {
            next_a = load_a(l + TILE);
            next_b = load_b(l + TILE);
        }
        for kk in 0..TILE {
            let a = s_a.load4(kk * TILE + r);
            let b = s_b.load(kk * B_STRIDE + c);
            for i in 0..4 {
                acc[i] = a[i].fma(b, acc[i]);
            }
        }
        // One buffer: nobody overwrites it for slice l + 32 while others still read it.
        sync_threads();
        l += TILE;
    }
    // ANCHOR_END: core_loop
    if a_row_in && b_col_in {
        for (i, &value) in acc.iter().enumerate() {
            unsafe { args.store_c(args.c_at(row0 + r + i as u32, col0 + c), value) }
        }
    }
}
