//! `row-shared`: one block per line of C; the operand line every thread of the block reuses is
//! read once into shared memory. Kahan summation as in `kahan`.
//!
//! Source: `002_…txt`, the third `matMultCUDA` ("初步优化"): `blockIdx.x` is a row of C, the
//! block copies that row of A into `extern __shared__ float data[]`, synchronises, and its
//! threads then walk the columns of C (`j = tid; j < n; j += blockDim.x`), each a Kahan dot
//! product of `data` with a column of B.
//!
//! Changed from `kahan`: the naive kernel reads each element of the reused operand once per
//! thread from global memory (2·m·n·k loads in all); here a line of it is loaded once per block
//! (m·n·k + n·k loads). The document's next complaint is that the *other* operand is still
//! re-read by every block, which `blocked-kahan` fixes.
//!
//! Mapping onto our column-major layout (see `naive`): the document's row-major C = A·B is,
//! in storage, our column-major Cᵀ = Bᵀ·Aᵀ, so its "row of C" and "row of A" are our *column*
//! of C and *column of B*. Kept that way, the memory behaviour is the document's: the
//! shared line is read at one address per warp (a broadcast), and the 32 lanes of a warp read
//! 32 consecutive elements of a column of A and write 32 consecutive elements of C. Taking a
//! literal row of C instead would make every warp's loads of B and stores to C `ldb`/`ldc`
//! elements apart (the uncoalesced `v0` pattern), which is not what the document measured.
//! So block `b` owns column `b` of C and caches column `b` of B (k elements).
//!
//! Shape limit: the line is k elements of shared memory, and a launch gets at most 48 KiB of
//! dynamic shared memory without opting in, so k·sizeof(T) ≤ 48 KiB: k ≤ 12288 (f32) or
//! k ≤ 6144 (f64) ([`supports`]). The document's 1000×1000 fits; its 2^13 sizes would not.
//!
//! 002 then pads its allocations with `cudaMallocPitch` so every row starts aligned: that is
//! our leading dimension; the host chooses lda/ldb/ldc, the kernel takes any ld ≥ rows.
//!
//! PTX: the staging loop is `ld.global.f32` + `st.shared.f32`, one `bar.sync`, then the k-loop
//! is `ld.shared.f32` (same address across the warp) + `ld.global.f32`, `fma.rn.f32`,
//! `sub.rn.f32` ×2, `add.rn.f32`. ptxas (sm_90): 32 registers (f32), 30 (f64), no stack
//! frame, no spills; shared memory k·4 (f32) or k·8 (f64) bytes, all dynamic.
//!
//! Measured: H100, 4096³, 2026-11-21 (`docs/results/h100-2026-11-21/`): f32 5.30 TFLOP/s (0.103× cuBLAS), relative error 3.6e-8; f64 3.35.
use super::kahan::Kahan;
use crate::device::{block_dim_x, block_idx_x, sync_threads, thread_idx_x, Real, Shared};
#[cfg(not(target_arch = "nvptx64"))]
use crate::gemm::Dtype;
use crate::gemm::{GemmArgs, Geometry};
#[cfg(not(target_arch = "nvptx64"))]
use crate::registry::Shape;

/// Threads per block (the document does not print its launch; 256 is its tutorial's choice).
pub const BLOCK: u32 = 256;

/// The dynamic shared memory a launch may use without opting in to more.
pub const SHARED_LIMIT_BYTES: u32 = 48 * 1024;

pub fn geometry(_m: u32, n: u32, k: u32, element_bytes: u32) -> Geometry {
    Geometry {
        grid: (n, 1),
        block: (BLOCK, 1),
        shared_bytes: k * element_bytes,
    }
}

/// A column of B must fit in 48 KiB of shared memory.
#[cfg(not(target_arch = "nvptx64"))]
pub fn supports(shape: &Shape, dtype: Dtype) -> Result<(), String> {
    let bytes = shape.k as u64 * dtype.bytes() as u64;
    if bytes > SHARED_LIMIT_BYTES as u64 {
        return Err(format!(
            "k = {} needs k * {} bytes = {bytes} bytes of shared memory for a line of B; \
             the limit is 48 KiB, so k <= {} for {}",
            shape.k,
            dtype.bytes(),
            SHARED_LIMIT_BYTES / dtype.bytes(),
            dtype.name()
        ));
    }
    Ok(())
}

/// # Safety
/// `args` must describe valid device matrices; launch with [`geometry`] (any block size).
#[inline(always)]
pub unsafe fn gemm<T: Real>(args: GemmArgs<T>) {
    let line = Shared::<T>::at(0, args.k);
    let col = block_idx_x();
    let (tid, threads) = (thread_idx_x(), block_dim_x());

    // B(0..k, col) into shared memory, coalesced.
    let mut i = tid;
    // ANCHOR: core_loop
    while i < args.k {
        line.store(i, unsafe { args.b.load(args.b_at(i, col)) });
        i += threads;
    }
    sync_threads();

    let mut row = tid;
    while row < args.m {
        let mut sum = Kahan::new();
        for i in 0..args.k {
            let a = unsafe { args.a.load(args.a_at(row, i)) };
            sum.add_product(a, line.load(i));
        }
        unsafe { args.store_c(args.c_at(row, col), sum.sum()) }
        row += threads;
    }
    // ANCHOR_END: core_loop
}
