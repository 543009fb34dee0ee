//! `cpu-parallel`: `cpu-blocked` on every core, with `rayon`. 003 (§1.4) only names this step,
//! multithreading on top of SIMD (OpenMP-parallel loops, as in Eigen), without measuring it;
//! this is the simplest version of it.
//!
//! The outermost loop of `cpu-blocked` runs over blocks of C's columns, and each iteration
//! writes only its own `blockL` columns of C while reading A and B. Those iterations are
//! independent, so they become rayon tasks: C is split into disjoint column panels
//! (`par_chunks_mut`, no locks, no unsafe), and each task runs `cpu-blocked` on its panel,
//! with B's matching columns. The panel width is `--tile` (`blockL`), so one task is exactly
//! one outer iteration of the serial kernel; an n of a few `blockL` leaves cores idle.
//! The threads are rayon's global pool: one per core unless `RAYON_NUM_THREADS` says otherwise.
use super::{blocked, CpuScalar, Operands};
use rayon::prelude::*;

/// `C = αAB + βC`: panels of `block` columns of C in parallel, each by [`blocked::gemm`].
pub fn gemm<T: CpuScalar>(x: &Operands<T>, c: &mut [T], ldc: usize, block: usize) {
    assert!(block > 0, "blockL must be at least 1");
    c.par_chunks_mut(block * ldc)
        .enumerate()
        .filter(|(panel, _)| panel * block < x.n)
        .for_each(|(panel, c_panel)| {
            let j0 = panel * block;
            let columns = Operands {
                n: block.min(x.n - j0),
                b: &x.b[j0 * x.ldb..],
                ..*x
            };
            blocked::gemm(&columns, c_panel, ldc, block);
        });
}
