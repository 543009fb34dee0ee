//! `cpu-naive`: 003's baseline `gemm_baseline`, the textbook triple loop on one thread. It is
//! the reference point for every other CPU variant (003 measured 250 ms at 512³ and 65 s at
//! 2048³ on a laptop i5-8265U, and did not run 4096³).
//!
//! Loop order. 003 loops over C's rows `i`, then its columns `j`, and innermost along the dot
//! product: `c[N*i + j] += a[N*i + k] * b[N*k + j]`. The same nest for column-major storage
//! swaps the roles of rows and columns: columns `j` of C outermost, then rows `i`, then the
//! dot product `p` innermost:
//!
//! ```text
//! for j in 0..n { for i in 0..m { C(i, j) = α·Σ_p A(i, p)·B(p, j) + β·C(i, j) } }
//! ```
//!
//! The order is what makes it slow, in the same way as in 003: the inner loop reads B's
//! column `j` contiguously but walks row `i` of A with a stride of `lda` elements, so every
//! multiply-add touches a different cache line of A (and uses 4 or 8 of its 64 bytes). The
//! next row `i + 1` reuses those lines only while all `k` of them stay in cache. And the one
//! accumulator chains every add to the previous one: the compiler may not split the sum into
//! vector lanes, since that would change the rounding. `cpu-simd` reorders the same loops so
//! that both streams are contiguous and the work is a vector of independent outputs.
//!
//! The sum is a plain multiply and add (two roundings), as 003's C compiled with `gcc -O2`
//! in ISO C mode; fused multiply-add is `cpu-simd`'s step. Unlike 003, which zeroes C and
//! accumulates into it in memory, the dot product is summed in a register and C is written
//! once, read only when β ≠ 0.
use super::{c_column, CpuScalar, Operands};

/// `C = αAB + βC` by the triple loop, j-i-p order.
pub fn gemm<T: CpuScalar>(x: &Operands<T>, c: &mut [T], ldc: usize) {
    for j in 0..x.n {
        let c_j = c_column(c, ldc, x.m, j);
        for (i, c_ij) in c_j.iter_mut().enumerate() {
            let mut dot = T::ZERO;
            for p in 0..x.k {
                dot = dot + x.a[i + p * x.lda] * x.b_at(p, j);
            }
            *c_ij = if x.beta == T::ZERO {
                x.alpha * dot
            } else {
                x.alpha * dot + x.beta * *c_ij
            };
        }
    }
}
