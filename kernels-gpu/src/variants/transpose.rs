//! The transposing copy: an operand stored the other way round, rewritten so that a kernel that
//! reads only `op(X) = X` can read it.
//!
//! Source: none of the documents. The f32 and f64 kernels of the course read A and B as
//! column-major `m × k` and `k × n` (N,N); a row-major program hands them `Aᵀ` or `Bᵀ` (a linear
//! layer's `Y = X·Wᵀ`). Rather than a second version of every kernel's loads, `auto` copies
//! such an operand once, transposed, into a workspace and runs the N,N kernel on the copy
//! (`gpu-gemm`'s `launch::Copies`). The copy reads and writes each element once: `2·rows·cols`
//! elements against the GEMM's `2·m·n·k` flops, 1–2% of an f32 GEMM at 4096³.
//!
//! The classic shared-memory transpose. A block moves one 32 × 32 tile: its 32 × 8 threads
//! read the tile's columns (thread x along the source's contiguous rows: coalesced), then write
//! the tile's rows as the destination's columns (thread x along the destination's contiguous
//! rows: coalesced again). The tile is padded to 33 elements a row so that the second pass,
//! which reads it down a column, touches 32 different banks.
//!
//! SASS (sm_90, `tests/tests/sass.rs`): both loops unroll, four `LDG` and four `STS`, one
//! `BAR.SYNC`, four `LDS` and four `STG` a thread, no arithmetic and no local memory.
//!
//! The kernel keeps the GEMM signature (as split-k's reduction does): A is the source, stored
//! `m × n` with leading dimension `lda`; C is the destination, stored `n × m` with `ldc`;
//! `k`, α, B and β are not read.
use crate::device::Shared;
use crate::device::{block_idx_x, block_idx_y, sync_threads, thread_idx_x, thread_idx_y, Real};
use crate::gemm::{blocks_for, GemmArgs, Geometry};
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
use crate::{device::half::Half, device::tma::TensorMap, gemm::HalfGemmArgs};

/// A block's tile: `TILE × TILE` elements.
pub const TILE: u32 = 32;
/// Rows of the tile a block's threads move in one pass (the block is `TILE × PASS` threads).
const PASS: u32 = 8;
/// A tile row in shared memory: one element of padding.
const STRIDE: u32 = TILE + 1;

/// One block per 32 × 32 tile of the source (`rows × cols`). A 16-bit element crosses the tile
/// as an f32 ([`transpose_half`]).
pub fn geometry(rows: u32, cols: u32, element_bytes: u32) -> Geometry {
    Geometry {
        grid: (blocks_for(rows, TILE), blocks_for(cols, TILE)),
        block: (TILE, PASS),
        shared_bytes: TILE * STRIDE * element_bytes.max(4),
    }
}

/// `C = Aᵀ`: A stored `m × n` (`lda`), C stored `n × m` (`ldc`).
///
/// # Safety
/// A and C must be valid for those sizes and leading dimensions; launch with [`geometry`].
// ANCHOR: core_loop
#[inline(always)]
pub unsafe fn transpose<T: Real>(args: GemmArgs<T>) {
    let tile = Shared::<T>::at(0, TILE * STRIDE);
    let (tx, ty) = (thread_idx_x(), thread_idx_y());
    let (row0, col0) = (block_idx_x() * TILE, block_idx_y() * TILE);
    // Source column col0 + j into tile row j, thread x at its row row0 + x. A count of passes
    // known at compile time, so that the loop unrolls and a thread's four loads are in flight
    // at once.
    for pass in 0..TILE / PASS {
        let j = ty + pass * PASS;
        let (row, col) = (row0 + tx, col0 + j);
        if row < args.m && col < args.n {
            tile.store(j * STRIDE + tx, unsafe { args.a.load(args.a_at(row, col)) });
        }
    }
    sync_threads();
    // Destination column row0 + j (the source's row) from tile column j, thread x at its row
    // col0 + x (the source's column).
    let c = args.member_c();
    for pass in 0..TILE / PASS {
        let j = ty + pass * PASS;
        let (row, col) = (col0 + tx, row0 + j);
        if row < args.n && col < args.m {
            unsafe { c.store(args.c_at(row, col), tile.load(tx * STRIDE + j)) }
        }
    }
}
// ANCHOR_END: core_loop

/// The same copy in bf16 and f16, built with their kernels (sm_90a). Each element crosses the
/// tile as its f32 value, widened exactly and rounded back exactly (every bf16 and f16 value,
/// subnormals included, is an f32, and the conversions do not flush them); a NaN stays a NaN.
/// The 16-bit kernels' signature, whose maps, epilogue and batch the copy does not read.
///
/// The first version moved the 16 bits themselves, as the low half of an f32 word
/// (`f32::from_bits`), and passed the emulator. On the H100 it wrote zeros: the PTX stored the
/// word loaded by `ld.shared.f32` with `st.global.b16`, and ptxas read that as a conversion of
/// the float (`F2I.U16.TRUNC` in the SASS), which truncates a tiny subnormal to 0. The emulator
/// runs the Rust, in which the word is bits; only the GPU showed what ptxas made of the PTX.
///
/// # Safety
/// As [`transpose`].
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
#[inline(always)]
pub unsafe fn transpose_half<H: Half>(args: HalfGemmArgs<H>, _maps: *const TensorMap) {
    let tile = Shared::<f32>::at(0, TILE * STRIDE);
    let (tx, ty) = (thread_idx_x(), thread_idx_y());
    let (row0, col0) = (block_idx_x() * TILE, block_idx_y() * TILE);
    for pass in 0..TILE / PASS {
        let j = ty + pass * PASS;
        let (row, col) = (row0 + tx, col0 + j);
        if row < args.m && col < args.n {
            let at = row as usize + col as usize * args.lda as usize;
            tile.store(j * STRIDE + tx, unsafe { args.a.load(at) });
        }
    }
    sync_threads();
    for pass in 0..TILE / PASS {
        let j = ty + pass * PASS;
        let (row, col) = (col0 + tx, row0 + j);
        if row < args.n && col < args.m {
            unsafe {
                args.c
                    .store(args.c_at(row, col), tile.load(tx * STRIDE + j))
            }
        }
    }
}
