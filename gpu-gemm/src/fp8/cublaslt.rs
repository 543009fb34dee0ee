//! cuBLASLt's FP8 GEMM, the yardstick of the FP8 kernels (cuBLAS's classic API has none).
//!
//! TN e4m3 × e4m3 (or e4m3 × e5m2) → bf16 with f32 compute and scales, the module's layout
//! ([`super`]). Block scaling uses cuBLASLt's Hopper-only modes (cuBLAS 12.9 on; cudarc's
//! cuda-13000 bindings have them): `VEC128_32F` for A and `BLK128x128_32F` for B. Their layouts, from the cuBLAS
//! documentation ("128-element 1D and 128x128 2D block scaling for FP8 data types"):
//! - `VEC128_32F` for A: M-major, M×⌈K/128⌉: `sa[i + kb·m]`, ours exactly.
//! - `BLK128x128_32F` for B: K-major, `L₄×⌈N/128⌉` with `L₄` = ⌈K/128⌉ rounded up to a
//!   multiple of 4: `sb[kb + nb·L₄]`. Ours is `sb[nb·⌈K/128⌉ + kb]`: the same when ⌈K/128⌉
//!   is a multiple of 4, else [`blk128_scales`] pads each column of blocks.
//! - M and N must be multiples of 4, the scale arrays 16-byte aligned.
use super::quantize::{Format, Scaling};
use crate::cublaslt::LtMatmul;
pub use crate::cublaslt::{LayoutSpec, WORKSPACE_BYTES};
use anyhow::{bail, Result};
use cudarc::cublaslt::sys::{
    cublasLtMatmulDescAttributes_t as Attr, cublasLtMatmulMatrixScale_t as ScaleMode, cudaDataType,
};
use kernels_gpu::registry::Shape;

/// The layouts of A (e4m3 k×m, lda), B (`b_format` k×n, ldb) and C = D (bf16 m×n, ldc).
pub fn layouts(s: &Shape, b_format: Format) -> [LayoutSpec; 3] {
    let spec = |data_type, rows: u32, cols: u32, ld: u32| LayoutSpec {
        data_type,
        rows: rows as u64,
        cols: cols as u64,
        ld: ld as i64,
    };
    [
        spec(cudaDataType::CUDA_R_8F_E4M3, s.k, s.m, s.lda),
        spec(
            match b_format {
                Format::E4m3 => cudaDataType::CUDA_R_8F_E4M3,
                Format::E5m2 => cudaDataType::CUDA_R_8F_E5M2,
            },
            s.k,
            s.n,
            s.ldb,
        ),
        spec(cudaDataType::CUDA_R_16BF, s.m, s.n, s.ldc),
    ]
}

/// The scale modes of A and B: scalars per tensor, VEC128 and BLK128x128 per block.
pub fn scale_modes(scaling: Scaling) -> (ScaleMode, ScaleMode) {
    match scaling {
        Scaling::PerTensor => (
            ScaleMode::CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,
            ScaleMode::CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,
        ),
        Scaling::Block => (
            ScaleMode::CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F,
            ScaleMode::CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F,
        ),
    }
}

/// The layout rules cuBLASLt states for FP8, checked before it is asked, so that the error
/// names the rule: leading dimensions of 16 bytes, and for block scaling M, N multiples of 4.
pub fn check_shape(s: &Shape, scaling: Scaling) -> Result<()> {
    if s.lda < s.k || s.ldb < s.k || s.ldc < s.m {
        bail!("FP8 TN needs lda >= k, ldb >= k, ldc >= m (got {s:?})");
    }
    if !s.lda.is_multiple_of(16) || !s.ldb.is_multiple_of(16) || !s.ldc.is_multiple_of(8) {
        bail!("cuBLASLt's FP8 needs 16-byte leading dimensions: lda and ldb multiples of 16, ldc of 8 (got {}, {}, {})", s.lda, s.ldb, s.ldc);
    }
    if scaling == Scaling::Block && (!s.m.is_multiple_of(4) || !s.n.is_multiple_of(4)) {
        bail!(
            "cuBLASLt's block scaling needs m and n multiples of 4 (got m={}, n={})",
            s.m,
            s.n
        );
    }
    Ok(())
}

/// Our B block scales (`sb[nb·⌈k/128⌉ + kb]`) in cuBLASLt's `BLK128x128_32F` layout
/// (`kb + nb·L₄`, L₄ = ⌈k/128⌉ rounded up to 4), padding 0.
pub fn blk128_scales(sb: &[f32], k: u32, n: u32) -> Vec<f32> {
    let l = k.div_ceil(128) as usize;
    let l4 = l.next_multiple_of(4);
    let nblocks = n.div_ceil(128) as usize;
    assert_eq!(sb.len(), l * nblocks, "B has ⌈k/128⌉·⌈n/128⌉ block scales");
    let mut out = vec![0f32; l4 * nblocks];
    for nb in 0..nblocks {
        out[nb * l4..nb * l4 + l].copy_from_slice(&sb[nb * l..(nb + 1) * l]);
    }
    out
}

/// A planned cuBLASLt FP8 GEMM for one shape and scaling ([`LtMatmul`] with the scale modes);
/// the algorithm is chosen on the first [`CublasLtFp8::enqueue`], once the scale pointers are
/// set (the heuristic refuses a block scale mode without them).
pub struct CublasLtFp8 {
    lt: LtMatmul,
}

impl CublasLtFp8 {
    /// Plans `D = alpha·op(A)·op(B) + beta·C` for `shape`, B in `b_format`, on the current
    /// context; with `fast_accum` (`CUBLASLT_MATMUL_DESC_FAST_ACCUM`) the tensor cores' FP8
    /// partial sums are never promoted to f32 registers (faster, less accurate at large k), as
    /// `wgmma-fp8`.
    pub fn new(
        shape: &Shape,
        (scaling, b_format): (Scaling, Format),
        alpha: f32,
        beta: f32,
        fast_accum: bool,
    ) -> Result<Self> {
        check_shape(shape, scaling)?;
        let lt = LtMatmul::new(layouts(shape, b_format), (true, false), alpha, beta)?;
        let (mode_a, mode_b) = scale_modes(scaling);
        lt.set(Attr::CUBLASLT_MATMUL_DESC_FAST_ACCUM, &(fast_accum as i8))?;
        lt.set(Attr::CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode_a)?;
        lt.set(Attr::CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode_b)?;
        Ok(Self { lt })
    }

    /// The GEMM over a strided batch of `count` members `strides` (A's, B's, C's, in elements)
    /// apart, one scale per tensor for the whole batch (cuBLASLt's scalar modes have no stride):
    /// cuBLASLt's strided batched FP8 matmul, the yardstick of `wgmma-fp8`'s batches.
    pub fn batched(self, count: u32, strides: [u64; 3]) -> Result<Self> {
        self.lt.set_batch(count, strides)?;
        Ok(self)
    }

    /// Enqueues the GEMM on `stream`: `a` e4m3, `b` in the planned format, `c` bf16 (read, and
    /// written as D), `scale_a`, `scale_b` f32 on the device in cuBLASLt's layouts (module
    /// documentation).
    ///
    /// # Safety
    /// Device pointers valid for the planned shape, on the context the plan was made on.
    pub unsafe fn enqueue(
        &self,
        stream: cust::sys::CUstream,
        a: u64,
        b: u64,
        c: u64,
        scale_a: u64,
        scale_b: u64,
    ) -> Result<()> {
        self.lt
            .set(Attr::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_a)?;
        self.lt
            .set(Attr::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_b)?;
        unsafe { self.lt.enqueue(stream, a, b, c) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_tn_fp8_and_bf16() {
        let s = Shape {
            m: 256,
            n: 512,
            k: 1024,
            lda: 1040,
            ldb: 1024,
            ldc: 264,
        };
        let [a, b, c] = layouts(&s, Format::E4m3);
        assert_eq!((a.rows, a.cols, a.ld), (1024, 256, 1040));
        assert_eq!((b.rows, b.cols, b.ld), (1024, 512, 1024));
        assert_eq!(b.data_type, cudaDataType::CUDA_R_8F_E4M3);
        let [a, b, _] = layouts(&s, Format::E5m2);
        assert_eq!(
            (a.data_type, b.data_type),
            (cudaDataType::CUDA_R_8F_E4M3, cudaDataType::CUDA_R_8F_E5M2)
        );
        assert_eq!(
            (c.data_type, c.rows, c.cols, c.ld),
            (cudaDataType::CUDA_R_16BF, 256, 512, 264)
        );
        assert!(check_shape(&s, Scaling::Block).is_ok());
        let e = check_shape(&Shape { m: 6, ..s }, Scaling::Block)
            .unwrap_err()
            .to_string();
        assert!(e.contains("multiples of 4"), "{e}");
        assert!(check_shape(&Shape { lda: 1030, ..s }, Scaling::PerTensor).is_err());
    }

    #[test]
    fn b_block_scales_pad_the_k_blocks_to_four() {
        // k = 300: 3 k-blocks, padded to 4; n = 200: 2 n-blocks.
        let ours: Vec<f32> = (0..6).map(|x| x as f32 + 1.0).collect();
        assert_eq!(
            blk128_scales(&ours, 300, 200),
            vec![1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0, 0.0]
        );
        // 4 k-blocks: unchanged.
        let ours: Vec<f32> = (0..8).map(|x| x as f32).collect();
        assert_eq!(blk128_scales(&ours, 512, 256), ours);
    }
}
