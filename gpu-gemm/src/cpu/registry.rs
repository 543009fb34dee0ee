//! The registry of CPU variants: one row per variant, the CPU counterpart of
//! `kernels_gpu::registry`. `host::registry` merges both lists for `--variant` and `--list`.
//!
//! Adding a CPU variant: its file in [`crate::cpu`] (doc header: source document, what it does
//! and why), an [`Algorithm`] arm that calls it, and a row in [`ALL`].
use super::simd::Path;
use super::{blocked, naive, ndarray_gemm, parallel, simd, CpuScalar, Operands};
use kernels_gpu::gemm::Dtype;

/// Which function of [`crate::cpu`] a variant runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// [`naive::gemm`]: the j-i-p triple loop.
    Naive,
    /// [`simd::gemm`]: the j-p-i row-broadcast axpy nest.
    Simd,
    /// [`blocked::gemm`]: the SIMD nest in `blockL × blockL` blocks.
    Blocked,
    /// [`parallel::gemm`]: the blocked kernel on panels of `blockL` columns of C, one rayon task
    /// each.
    Parallel,
    /// [`ndarray_gemm::gemm`]: `ndarray`'s `general_mat_mul` on strided views of the buffers.
    Ndarray,
}

/// One CPU variant.
#[derive(Debug, PartialEq, Eq)]
pub struct CpuVariant {
    /// The name `--variant` takes.
    pub name: &'static str,
    /// One line for `--list`.
    pub summary: &'static str,
    /// Where it comes from in the source documents.
    pub source: &'static str,
    /// The entry name reports show, without `_f32`/`_f64`; `{simd}` stands for the SIMD path
    /// this CPU takes ([`Path::name`]).
    pub entry: &'static str,
    /// The `blockL` values `--tile` accepts, the default first; empty when there is none.
    pub tiles: &'static [u32],
    /// Which function runs it.
    pub algorithm: Algorithm,
}

impl CpuVariant {
    /// The entry name for a dtype, with the SIMD path this CPU takes:
    /// `cpu_blocked_avx2_fma_f32`, `cpu_simd_portable_f64`, `cpu_naive_f32`.
    pub fn entry_name(&self, dtype: Dtype) -> String {
        let base = self.entry.replace("{simd}", Path::detect().name());
        format!("{base}_{}", dtype.name())
    }

    /// `C = αAB + βC` into `c` (n columns, `ldc` apart); `tile` is the resolved `--tile`
    /// (0 when the variant has none).
    pub fn gemm<T: CpuScalar>(&self, x: &Operands<T>, c: &mut [T], ldc: usize, tile: u32) {
        let block = tile as usize;
        match self.algorithm {
            Algorithm::Naive => naive::gemm(x, c, ldc),
            Algorithm::Simd => simd::gemm(x, c, ldc),
            Algorithm::Blocked => blocked::gemm(x, c, ldc, block),
            Algorithm::Parallel => parallel::gemm(x, c, ldc, block),
            Algorithm::Ndarray => ndarray_gemm::gemm(x, c, ldc),
        }
    }
}

/// Every CPU variant, in the order of 003 (then the two that go beyond it).
pub const ALL: &[CpuVariant] = &[
    CpuVariant {
        name: "cpu-naive",
        summary: "CPU, one thread: the triple loop (j-i-p, A's rows strided), mul + add",
        source: "003 gemm_baseline",
        entry: "cpu_naive",
        tiles: &[],
        algorithm: Algorithm::Naive,
    },
    CpuVariant {
        name: "cpu-simd",
        summary: "CPU, one thread: broadcast α·B(p,j), FMA a column of A into C's column",
        source: "003 gemm_avx",
        entry: "cpu_simd_{simd}",
        tiles: &[],
        algorithm: Algorithm::Simd,
    },
    CpuVariant {
        name: "cpu-blocked",
        summary: "CPU, one thread: cpu-simd on blockL×blockL blocks (--tile = blockL)",
        source: "003 gemm_avx_block<blockL>",
        entry: "cpu_blocked_{simd}",
        tiles: blocked::BLOCK_SIZES,
        algorithm: Algorithm::Blocked,
    },
    CpuVariant {
        name: "cpu-parallel",
        summary: "CPU, all cores: cpu-blocked on panels of blockL columns of C, with rayon",
        source: "003 §1.4 (multithreading, not measured there)",
        entry: "cpu_parallel_{simd}",
        tiles: blocked::BLOCK_SIZES,
        algorithm: Algorithm::Parallel,
    },
    CpuVariant {
        name: "cpu-ndarray",
        summary: "CPU, up to 4 threads: ndarray's general_mat_mul (matrixmultiply), the CPU bar",
        source: "the f64 reference's library, on the same strided buffers",
        entry: "ndarray_general_mat_mul",
        tiles: &[],
        algorithm: Algorithm::Ndarray,
    },
];
