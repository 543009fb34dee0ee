//! The three tutorial kernels the document compares with (`alc1`, `alc2`, `alc3`): 32×32
//! shared-memory tiles, written for **row-major** matrices, with the bounds checks inside the
//! k-loop. One generic body; `PAD` is the padding of each shared row (0 or 1) and `NC` selects
//! the read-only data path (`ld.global.nc`, what `__restrict__`/`__ldg` give in CUDA C++).
//!
//! Source: `001_…txt`, namespace `Alcanderian`, `cuda_kernel_sgemm_1/2/3` (from
//! Alcanderian/CUDA-tutorial). The document cites them as the "tiled kernel with bounds
//! checks in the loop" that its own `v1` nearly matched on the V100 (638 ms vs 614 ms).
//!
//! Porting onto this project's problem. The tutorial computes `c = alpha*a*b + beta*c` on
//! row-major `a` (M×K), `b` (K×N), `c` (M×N), with thread x along the rows of c. The
//! document timed it on its column-major buffers, so on the GPU its global accesses were
//! strided: consecutive threads x read addresses a whole row (K or N floats) apart. To keep
//! exactly that data movement on our column-major `C = alpha*A*B + beta*C`, the kernel runs
//! the tutorial's row-major algorithm on the transposed problem: a column-major m×n matrix is
//! a row-major n×m one, and `Cᵀ = Bᵀ Aᵀ`. So the tutorial's `a` is our B read as row-major
//! (`a[r][c] = B(c, r)`, stride `ldb`), its `b` is our A (`b[r][c] = A(c, r)`, stride `lda`),
//! and its `c` is our C. Thread x therefore walks C's *columns* (like `v0`), and every global
//! load and store of a warp touches 32 different cache lines, as in the document's run.
//!
//! In shared memory, `a_sub[tx][kk]` is read with tx varying across the warp: rows 32 words
//! apart, all in one bank (32-way conflict) unless a row is padded to 33 words; `b_sub[kk][ty]`
//! is one address per warp (a broadcast). Out-of-range elements are staged as zero by the
//! checks in the loop, so every m, n, k works.
//!
//! PTX (sm_90): the 32-step inner loop is fully unrolled: 32 × (2 `ld.shared.f32` +
//! `fma.rn.f32`) per tile, as in `v3`/`v4`; the staging is two guarded `ld.global.f32`
//! (`ld.global.nc.f32` for `NC`) and two `st.shared.f32` per tile.
use crate::device::{
    block_idx_x, block_idx_y, sync_threads, thread_idx_x, thread_idx_y, Global, Real, Shared,
};
use crate::gemm::{blocks_for, GemmArgs, Geometry};

pub const TILE: u32 = 32;

#[inline(always)]
fn tiles<T: Real, const PAD: u32>() -> (Shared<T>, Shared<T>) {
    let a_sub = Shared::<T>::at(0, TILE * (TILE + PAD));
    let b_sub = a_sub.next::<T>(TILE * (TILE + PAD));
    (a_sub, b_sub)
}

/// Grid x over the tutorial's rows (our columns, n), grid y over its columns (our rows, m).
pub fn geometry<const PAD: u32>(m: u32, n: u32, _k: u32, element_bytes: u32) -> Geometry {
    let tile_bytes = TILE * (TILE + PAD) * element_bytes;
    Geometry {
        grid: (blocks_for(n, TILE), blocks_for(m, TILE)),
        block: (TILE, TILE),
        shared_bytes: tile_bytes.next_multiple_of(16) + tile_bytes,
    }
}

#[inline(always)]
unsafe fn read<T: Real, const NC: bool>(p: Global<T>, i: usize) -> T {
    if NC {
        unsafe { p.load_nc(i) }
    } else {
        unsafe { p.load(i) }
    }
}

/// # Safety
/// `args` must describe valid device matrices; launch with [`geometry`].
#[inline(always)]
pub unsafe fn gemm<T: Real, const PAD: u32, const NC: bool>(args: GemmArgs<T>) {
    let (a_sub, b_sub) = tiles::<T, PAD>();
    let stride = TILE + PAD;
    // The tutorial's names: tr/tc within the block, ir/ic in its row-major c = our C(ic, ir).
    let (tr, tc) = (thread_idx_x(), thread_idx_y());
    let ir = block_idx_x() * TILE + tr;
    let ic = block_idx_y() * TILE + tc;
    // Its M, N, K: rows and columns of cᵀ, and the inner dimension.
    let (rows, cols, inner) = (args.n, args.m, args.k);
    let mut acc = T::ZERO;
    // ANCHOR: core_loop
    for l in 0..inner.div_ceil(TILE) {
        let a_ic = l * TILE + tc;
        let b_ir = l * TILE + tr;
        // a[ir][a_ic] = B(a_ic, ir); b[b_ir][ic] = A(ic, b_ir).
        let a = if ir < rows && a_ic < inner {
            unsafe { read::<T, NC>(args.b, args.b_at(a_ic, ir)) }
        } else {
            T::ZERO
        };
        let b = if b_ir < inner && ic < cols {
            unsafe { read::<T, NC>(args.a, args.a_at(ic, b_ir)) }
        } else {
            T::ZERO
        };
        a_sub.store(tr * stride + tc, a);
        b_sub.store(tr * stride + tc, b);
        sync_threads();
        for kk in 0..TILE {
            acc = a_sub
                .load(tr * stride + kk)
                .fma(b_sub.load(kk * stride + tc), acc);
        }
        sync_threads();
    }
    // ANCHOR_END: core_loop
    if ir < rows && ic < cols {
        unsafe { args.store_c(args.c_at(ic, ir), acc) }
    }
}
