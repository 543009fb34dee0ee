//! `bias-activation`: the unfused epilogue, a second kernel over C, as a program without fused
//! epilogues runs a linear layer: the GEMM writes C, then this kernel reads C back, adds the bias,
//! applies the activation ([`crate::fused`]) and writes C again.
//!
//! It is the baseline the fused epilogue is measured against, so it is written to be as fast
//! as such a kernel gets: memory-bound, one thread per pair of adjacent elements of a column
//! (a warp moves 128 contiguous bytes per access, every sector used), one element per thread
//! where C's rows are odd or misaligned. Its cost is C's size twice over the memory bus:
//! 2·m·n·2 bytes, at 4096 × 14336 bf16 about 235 MB, some 70 µs at the H100's 3.35 TB/s.
//!
//! Measured (H100, bf16, C of 4096 × 4096 to 128256 × 4096): 1.5–1.7 TB/s, about half the
//! memory's peak: a pair per thread (4-byte accesses) does not keep enough bytes in flight. A
//! 16-byte access per thread would bring it nearer 3 TB/s, and the fused epilogue's lead over
//! this baseline from 1.18× to about 1.10× at 4096 tokens
//! (`docs/results/h100-2026-11-26-epilogue/`).
//!
//! The arguments are the split-k reduction's ([`HalfReduceArgs`]) with no parts: `C =
//! act(C + bias)`, alpha and beta already applied by the GEMM.
use crate::device::half::Half;
use crate::device::{block_dim_x, block_idx_x, thread_idx_x};
use crate::gemm::{Geometry, HalfReduceArgs};

/// Threads per block.
const THREADS: u32 = 256;

/// Pairs of rows per column: ⌈m/2⌉ where C can be read in pairs, else m single elements.
#[inline(always)]
fn per_column(m: u32, ldc: u32, c_aligned: bool) -> u32 {
    if ldc.is_multiple_of(2) && c_aligned {
        m.div_ceil(2)
    } else {
        m
    }
}

/// One thread per pair (or element) of C. `c_aligned`: whether C's address is 4-byte aligned,
/// which the host knows and the kernel checks again.
pub fn geometry(m: u32, n: u32, ldc: u32, c_aligned: bool) -> Geometry {
    Geometry {
        grid: ((per_column(m, ldc, c_aligned) * n).div_ceil(THREADS), 1),
        block: (THREADS, 1),
        shared_bytes: 0,
    }
}

/// `C = act(C + bias)` for this thread's pair (or element) of C.
///
/// # Safety
/// C is valid for m, n, ldc; the bias vector as [`crate::fused::Fused::bias_at`] needs it.
#[inline(always)]
pub unsafe fn bias_activation<H: Half>(args: HalfReduceArgs<H>) {
    let pairs = args.ldc.is_multiple_of(2) && args.c.is_aligned_to(4);
    let rows = per_column(args.m, args.ldc, pairs);
    let thread = block_idx_x() * block_dim_x() + thread_idx_x();
    // The values this thread wrote (none past C, one or two within): the amax's, which every
    // lane of the warp gathers together.
    let (mut written, mut count) = ([0f32; 2], 0);
    if thread < rows * args.n {
        let (line, col) = (thread % rows, thread / rows);
        let size = (args.m, args.n);
        if pairs && 2 * line + 1 < args.m {
            let row = 2 * line;
            let at = (row + col * args.ldc) as usize;
            let value = unsafe { args.c.load2(at) };
            written = unsafe { args.fused.apply_run(value, (row, col), (1, 0), size) };
            count = 2;
            unsafe { args.c.store2(at, written) };
        } else {
            // The last row of an odd m, or every element of a C that cannot be read in pairs.
            let row = if pairs { 2 * line } else { line };
            let at = (row + col * args.ldc) as usize;
            let value = [unsafe { args.c.load(at) }];
            let [value] = unsafe { args.fused.apply_run(value, (row, col), (0, 0), size) };
            (written[0], count) = (value, 1);
            unsafe { args.c.store(at, value) };
        }
    }
    let largest = args.fused.largest_magnitude(&written, |i| i < count);
    unsafe { args.fused.gather_amax(largest) };
}
