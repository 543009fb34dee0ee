//! `cpu-blocked`: 003's `gemm_avx_block`, the row-broadcast FMA kernel of `cpu-simd` applied
//! block by block, on one thread. `--tile` sets 003's `blockL`, the side of the square blocks.
//!
//! `cpu-simd` streams all of C's column through the cache once per p, and all of A once per
//! column of C: at 2048³ f32 that is 16 MiB of A per column, far beyond the caches, so A
//! comes from memory every time. Blocking cuts the three loops into blocks of `blockL` and
//! finishes the work on one block of C with one block of A before moving on, so that the
//! blocks stay in cache while they are reused. 003's order, mirrored for column-major like
//! every CPU variant, is: blocks of C's columns (`j0`), blocks of the sum (`p0`), blocks of
//! C's rows (`i0`), then inside a block `cpu-simd`'s j-p-i nest on `blockL`-long pieces of
//! columns. The `blockL × blockL` block of A is reused by the `blockL` columns of the block
//! of C, and each piece of C's column stays in L1 across the `blockL` values of p.
//!
//! 003 measured (2048³, f32): `blockL` 8 → 3.1 s, 64 → 1.7 s, 512 → 1.3 s (best), 2048 →
//! 2.2 s; the blocked kernel overtook `gemm_avx` only from 2048³ on, where the matrices
//! outgrow the last-level cache. Small blocks pay for loop control and short vectors, large
//! ones fall back to `cpu-simd`'s traffic. 003 assumed N a multiple of `blockL`; here the
//! last block of each loop is whatever is left.
use super::simd::{dispatch, Axpy, LoopNest};
use super::{c_column, scale_by_beta, CpuScalar, Operands};

/// The `blockL` values `--tile` accepts, the default (003's size-scaling choice, 64) first:
/// 003's sweep, 8 to 2048.
pub const BLOCK_SIZES: &[u32] = &[64, 8, 16, 32, 128, 256, 512, 1024, 2048];

struct Blocked<'a, 'c, T> {
    x: &'a Operands<'a, T>,
    c: &'c mut [T],
    ldc: usize,
    block: usize,
}

impl<T: CpuScalar> LoopNest for Blocked<'_, '_, T> {
    // ANCHOR: core_loop
    #[inline(always)]
    fn run<K: Axpy>(self, kernel: K) {
        let Blocked { x, c, ldc, block } = self;
        for j0 in (0..x.n).step_by(block) {
            let columns = j0..(j0 + block).min(x.n);
            for j in columns.clone() {
                scale_by_beta(x.beta, c_column(c, ldc, x.m, j));
            }
            for p0 in (0..x.k).step_by(block) {
                let sum = p0..(p0 + block).min(x.k);
                for i0 in (0..x.m).step_by(block) {
                    let rows = i0..(i0 + block).min(x.m);
                    for j in columns.clone() {
                        let c_j = &mut c_column(c, ldc, x.m, j)[rows.clone()];
                        for p in sum.clone() {
                            let a_p = &x.a_column(p)[rows.clone()];
                            kernel.axpy(x.alpha * x.b_at(p, j), a_p, c_j);
                        }
                    }
                }
            }
        }
    }
    // ANCHOR_END: core_loop
}

/// `C = αAB + βC` in `block × block` blocks (003's `blockL`), with the SIMD inner kernel.
pub fn gemm<T: CpuScalar>(x: &Operands<T>, c: &mut [T], ldc: usize, block: usize) {
    assert!(block > 0, "blockL must be at least 1");
    dispatch(Blocked { x, c, ldc, block })
}
