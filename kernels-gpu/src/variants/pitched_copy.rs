//! The pitched copy: a 16-bit operand's columns moved to starts 128 bytes apart, so that the
//! TMA engine can read them, and read them at full speed.
//!
//! Source: none of the documents. Every 16-bit kernel of the course is fed by the TMA engine,
//! whose tensor map needs each column to start a multiple of 16 bytes after the last: a
//! leading dimension of 8k elements. A program's own sizes rarely are (an `lda` of 3001), so
//! `auto` copies such an operand into a workspace first (`gpu-gemm`'s `launch::Copies`).
//!
//! The 16 bytes are what the engine accepts, not what it reads fast. With the 128-byte swizzle
//! a box row is 64 elements, 128 bytes; when the columns start 16 bytes off a 128-byte line
//! (`lda = 3000`: 6000 bytes, 112 past a line), each box row straddles two lines, and the
//! kernel's loads from L2 double. Measured on the H100 (bf16, `offgrid-pad.log` in
//! `docs/results/h100-2026-12-07-pitch/`): 5000 × 7000 × 3000 N,N 0.541 ms with the leading
//! dimensions as given, 0.292 ms padded to 64 elements; 3000³ 0.160 against 0.101 ms. So the
//! copy's columns start 128 bytes apart, and `auto` also copies an operand whose columns are
//! 16-byte aligned but not 128, where the copy costs less than the lines it saves.
//!
//! The first version was `cuMemcpy2DAsync`, the driver's pitched copy. Between pitches that
//! are not multiples of 16 bytes it ran at about 1.5 TB/s (read plus write) on the H100, half
//! of a plain device-to-device copy. This kernel moves 16 bytes a thread: eight 2-byte loads
//! from the caller's column (whose start may be any even address; neighbouring threads read
//! neighbouring 16 bytes, so a warp's eight loads fall in the same 512 bytes and L1 serves
//! seven of them), then one 16-byte store into the aligned column. A chunk past the column's
//! last row writes zeros into the copy's padding, which no kernel reads. Measured on the H100
//! (`copies-probe.log`): A and B of 12184 × 1282 × 7098 T,N, 191 MB, copied in 0.135 ms, 2.8 TB/s
//! read plus written; that GEMM went from 0.591 to 0.491 ms (0.356 on aligned operands).
//!
//! SASS (sm_90a, `tests/tests/sass.rs`): eight `LDG.E.U16`, one `STG.E.128`, no shared
//! memory, no loop.
//!
//! The kernel keeps the 16-bit kernels' signature (as the transposing copy does): A is the
//! source, stored `m × n` with leading dimension `lda`; C is the copy, `ldc` a multiple of 8
//! elements and its start 16-byte aligned; the rest is not read.
use crate::gemm::{blocks_for, Geometry};
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
use crate::{
    device::half::Half,
    device::tma::TensorMap,
    device::{block_idx_x, block_idx_y, thread_idx_x, thread_idx_y},
    gemm::HalfGemmArgs,
};

/// Elements a thread moves: one 16-byte store of 2-byte elements.
pub const CHUNK: u32 = 8;
/// Chunks down a column per block (512 elements).
const CHUNKS_PER_BLOCK: u32 = 64;
/// Columns per block: a short column (a few hundred rows) still fills most of a block.
const COLUMNS_PER_BLOCK: u32 = 4;

/// One thread per chunk of [`CHUNK`] rows of each column of the source (`rows × cols`).
pub fn geometry(rows: u32, cols: u32) -> Geometry {
    Geometry {
        grid: (
            blocks_for(rows.div_ceil(CHUNK), CHUNKS_PER_BLOCK),
            blocks_for(cols, COLUMNS_PER_BLOCK),
        ),
        block: (CHUNKS_PER_BLOCK, COLUMNS_PER_BLOCK),
        shared_bytes: 0,
    }
}

/// `C = A`, bit for bit: A stored `m × n` (`lda`, any), C stored `m × n` (`ldc`, a multiple of
/// [`CHUNK`], at least `m` rounded up to it).
///
/// # Safety
/// A and C valid for those sizes and leading dimensions, C 16-byte aligned; launch with
/// [`geometry`].
// ANCHOR: core_loop
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
#[inline(always)]
pub unsafe fn pitched_copy<H: Half>(args: HalfGemmArgs<H>, _maps: *const TensorMap) {
    let row0 = (block_idx_x() * CHUNKS_PER_BLOCK + thread_idx_x()) * CHUNK;
    let col = block_idx_y() * COLUMNS_PER_BLOCK + thread_idx_y();
    if row0 >= args.m || col >= args.n {
        return;
    }
    let from = col as usize * args.lda as usize + row0 as usize;
    // The 16 bits themselves, never a float: ptxas is free to treat a float as a number.
    let mut pairs = [0u32; 4];
    for i in 0..CHUNK {
        if row0 + i < args.m {
            let bits = unsafe { args.a.load_bits(from + i as usize) } as u32;
            pairs[(i / 2) as usize] |= bits << (16 * (i % 2));
        }
    }
    let to = col as usize * args.ldc as usize + row0 as usize;
    unsafe { args.c.store_bits8(to, pairs) }
}
// ANCHOR_END: core_loop
