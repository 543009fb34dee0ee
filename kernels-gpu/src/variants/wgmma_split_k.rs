//! `wgmma-split-k`: for shapes with fewer tiles than multiprocessors, the grid also splits k.
//!
//! Source: none of the documents (the f32 chapter's [`super::split_k`], on the Hopper
//! skeleton). Changed from [`super::wgmma_16bit`]: [`Config::SPLIT_K`] and [`Config::store`],
//! and a second kernel, [`reduce`]:
//!
//! - **Why.** 8192×256×8192 has 64 tiles of 256 × 128 and 1024×1024×8192 has 32, for 132
//!   multiprocessors: one pass over k keeps half or a quarter of the GPU busy, however fast each
//!   block is.
//! - **Row `y` of the grid computes part `y` of k of every tile** (the skeleton's
//!   [`crate::pipeline::Kernel::SPLIT_K`]: the producer loads, and the consumers multiply, only
//!   that part's slices, as even as whole slices go). The grid is `(tiles, parts)`, each row
//!   persistent over the tiles, so `tiles × parts` should be about the number of
//!   multiprocessors: `--tile` chooses the parts, and `auto` the best for the shape.
//! - **The partial products go to a workspace in f32**, `parts` slabs of m × n (leading
//!   dimension m), with 8-byte stores of adjacent rows; rounding them to 16 bits there would add
//!   a rounding per part.
//! - **[`reduce`] adds the parts in a fixed order** (deterministic), applies alpha and beta once
//!   and rounds once to the 16-bit type: one thread per element of C. Both launches are timed.
//!
//! The cost: the workspace is written and read once, `8·parts·m·n` bytes: at 1024×1024×8192 with
//! 4 parts, 32 MiB, about 10 µs at the H100's bandwidth beside a GEMM of 40.
//!
//! Measured on the H100: at 1024×1024×8192, 0.45–0.53× cuBLAS in one pass, 0.86–1.05× with 4
//! parts (2 parts 0.82×, 8 parts 0.85×); at 8192×256×8192 ping-pong's narrower tiles do better
//! (`docs/results/005-hopper/`).
use super::wgmma_16bit::Config;
use crate::device::half::Half;
use crate::device::tma::TensorMap;
use crate::device::wgmma::Accumulator;
use crate::device::{block_dim_x, block_idx_x, thread_idx_x, GlobalMut};
use crate::gemm::{scaled, Geometry, HalfGemmArgs, HalfReduceArgs};
use crate::pipeline::Consumer;
use core::marker::PhantomData;

/// The step `B` (its stages and copies) splitting k over the rows of the grid.
#[derive(Clone, Copy, Default)]
pub struct SplitK<B>(PhantomData<B>);

impl<B: Config> Config for SplitK<B> {
    const STAGES: u32 = B::STAGES;
    const RASTER: u32 = B::RASTER;
    const SPLIT_K: bool = true;

    super::wgmma_16bit::copies_of!(B);

    /// The warpgroup's partial product, unscaled, into slab `split` of the workspace the host
    /// passes as C (f32, leading dimension `ldc`, slabs of `ldc·n` elements). Accumulator row
    /// `r` is column `col0 + r`, column `c` row `row0 + c` (`Cᵀ`, as the 16-bit epilogues):
    /// registers `i`, `i + 1` are two adjacent rows, one 8-byte store.
    // Unrolled, every register index is a constant.
    // ANCHOR: core_loop
    #[allow(clippy::needless_range_loop)]
    #[inline(always)]
    unsafe fn store<H: Half>(
        args: &HalfGemmArgs<H>,
        _maps: *const TensorMap,
        acc: &Accumulator<128>,
        (row0, col0, split): (u32, u32, u32),
        consumer: &Consumer,
    ) {
        let workspace = GlobalMut::new(args.c.as_ptr() as *mut f32);
        let slab = split as usize * args.ldc as usize * args.n as usize;
        let values = acc.get();
        let (warp, lane) = (consumer.thread / 32, consumer.thread % 32);
        let pairs = args.ldc.is_multiple_of(2) && row0 + 256 <= args.m;
        for p in 0..64 {
            let (r, c) = Accumulator::<128>::position(warp, lane, 2 * p as u32);
            let (row, col) = (row0 + c, col0 + r);
            if col >= args.n {
                continue;
            }
            let at = slab + args.c_at(row, col);
            if pairs {
                unsafe { workspace.store2(at, [values[2 * p], values[2 * p + 1]]) };
            } else {
                for e in 0..2 {
                    if row + (e as u32) < args.m {
                        unsafe { workspace.store(at + e, values[2 * p + e]) };
                    }
                }
            }
        }
    }
    // ANCHOR_END: core_loop
}

/// The reduction's launch: one thread per element of C.
pub fn reduce_geometry(m: u32, n: u32) -> Geometry {
    super::split_k::reduce_geometry(m, n)
}

/// The partial launch: `wgmma-16bit`'s persistent grid, `parts` rows of it, at most one per
/// slice of k (every part has at least one slice; the host sizes the workspace and the
/// reduction from the grid's rows).
pub fn geometry<B: Config>(m: u32, n: u32, k: u32, element_bytes: u32, parts: u32) -> Geometry {
    let one = super::wgmma_16bit::geometry::<SplitK<B>>(m, n, k, element_bytes);
    Geometry {
        grid: (
            one.grid.0,
            parts.min(k.div_ceil(super::wgmma_16bit::BK)).max(1),
        ),
        ..one
    }
}

/// `C = act(alpha · Σ parts + beta · C + bias)` for one element per thread: the parts added in
/// order in f32, the fused epilogue, then one rounding to the 16-bit type (C not read when
/// beta = 0).
///
/// # Safety
/// `args.workspace` holds `args.splits` slabs of `ldw · n` f32; C is valid for m, n, ldc.
#[inline(always)]
pub unsafe fn reduce<H: Half>(args: HalfReduceArgs<H>) {
    let element = block_idx_x() * block_dim_x() + thread_idx_x();
    // A thread past C stays for the amax's warp-wide maximum, with nothing to add.
    let inside = element < args.m * args.n;
    let mut value = [0f32];
    if inside {
        let (row, col) = (element % args.m, element / args.m);
        let slab = args.ldw as usize * args.n as usize;
        let at = (row + col * args.ldw) as usize;
        let mut sum = 0f32;
        for part in 0..args.splits as usize {
            sum += unsafe { args.workspace.load(at + part * slab) };
        }
        let c_at = (row + col * args.ldc) as usize;
        let scaled = scaled(args.alpha, args.beta, [sum], || {
            [unsafe { args.c.load(c_at) }]
        });
        value = unsafe {
            args.fused
                .apply_run(scaled, (row, col), (0, 0), (args.m, args.n))
        };
        unsafe { args.c.store(c_at, value[0]) }
    }
    let largest = args.fused.largest_magnitude(&value, |_| inside);
    unsafe { args.fused.gather_amax(largest) };
}
