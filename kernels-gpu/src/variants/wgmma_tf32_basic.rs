//! `wgmma-tf32-basic`: the first warpgroup-MMA kernel (Hopper, sm_90a). One warpgroup of 128
//! threads computes a 64×128 tile of C with `wgmma.mma_async.m64n128k8` in TF32, both operands
//! read by the tensor cores from shared memory through matrix descriptors. It is as simple as
//! such a kernel gets: the threads stage A and B themselves, and every `wgmma` is waited for at
//! once. The lesson is the three things every faster kernel of the chapter relies on.
//!
//! Source: none of the documents (PTX ISA, "Asynchronous Warpgroup Level Matrix
//! Multiply-Accumulate"). Changed from chapter 1's `mma.sync` kernels (`tc-tf32-basic`):
//!
//! - **The operands stay in shared memory.** An `mma.sync` takes each lane's fragment in
//!   registers, so every lane loads its own (chapter 1 spent most of its instructions there). A
//!   `wgmma` takes a 64-bit *matrix descriptor* per operand and the tensor cores fetch the 64×8
//!   slice of A and the 8×128 slice of B themselves: one instruction per 64×128×8 product, and
//!   no fragment load at all.
//! - **The layout is the descriptor's.** TF32 operands must be K-major: each row of A (an m)
//!   and each column of B (an n) holds 8 consecutive k values per `wgmma`, 32 bytes. Here a
//!   tile row holds the slice's 32 k values, 128 bytes, and rows are stored with the 128-byte
//!   swizzle: 16-byte chunk `c` of row `r` is stored at chunk `c ^ (r mod 8)`, so that the 8 rows
//!   of a core matrix fall in different banks. The descriptor says so: layout "128-byte
//!   swizzle", SBO = 1024 (8 rows of 128 bytes to the next 8), start address at the k-step (+32
//!   bytes per step of 8 k inside the 128-byte row). The swizzle is a function of the absolute
//!   shared address, so the tiles start at a multiple of 1024 bytes ([`pool_padding_to`]).
//!   A is column-major in memory (m contiguous) and must be transposed on its way in: each
//!   thread loads A(m, k) and stores it at row m, chunk `(k/4) ^ (m mod 8)`. B's columns are
//!   k-contiguous already.
//! - **The protocol.** The threads' stores go through the generic proxy, the tensor cores read
//!   through the async proxy: each thread issues `fence.proxy.async` after its stores, then the
//!   block synchronises. Then `wgmma.fence` (before the first `wgmma` and whenever the
//!   accumulator registers were touched), four `wgmma` (k = 0..8, 8..16, …), `commit_group`, and
//!   `wait_group 0` before the next slice may overwrite the tiles. The emulator checks each
//!   step: leave out the proxy fence, the `wgmma.fence` or the wait, and it reports which rule
//!   was broken (`tests/tests/emulator_hopper.rs`).
//!
//! The staging is plain and slow on purpose: A's transposing stores hit 8 banks per warp (a
//! 4-way conflict), nothing overlaps the copies with the tensor cores, and one warpgroup per
//! block keeps the tensor cores waiting on every slice. `wgmma-tf32` removes all three. Any m,
//! n, k and leading dimensions: the loads are bounds-checked and zero-filled.
//!
//! What the SASS shows (`cargo xtask sass --variant wgmma-tf32-basic`, the sm_90a build): the
//! slice loop issues four `HGMMA.64x128x8.F32.TF32` between two `BAR.SYNC`, the `wgmma`s
//! reading both operands through `gdesc` (descriptor) operands: no fragment load at all; 248
//! registers, no spills.
//!
//! Measured (H100 80GB HBM3, median, cuBLAS in the same process, checks passing;
//! `docs/results/h100-2026-11-23-hopper/`): 65.3 TFLOP/s at 4096³ and 67.1 at 8192³, 0.18×
//! cuBLAS TF32 and 1.3× cuBLAS SGEMM. It was right on the GPU the first time it ran: the
//! emulator had already checked the descriptors and the swizzle against the same rules.
use crate::device::tma::Swizzle;
use crate::device::wgmma::{self, Accumulator, Descriptor, Tf32Wgmma};
use crate::device::{block_idx_x, pool_padding_to, sync_threads, thread_idx_x, Shared, WARP_SIZE};
use crate::gemm::{rasterise, GemmArgs, Geometry};

/// The block tile: one `wgmma` is 64×N×8.
pub const BM: u32 = 64;
pub const BN: u32 = 128;
/// A slice of k: 32 TF32 values, one 128-byte swizzled row per m (or n).
pub const BK: u32 = 32;
const THREADS: u32 = 128;
/// The swizzle's repeat: the tiles start at multiples of it.
const ATOM: u32 = Swizzle::B128.atom();

pub fn geometry(m: u32, n: u32, _k: u32, _element_bytes: u32) -> Geometry {
    Geometry {
        grid: (m.div_ceil(BM) * n.div_ceil(BN), 1),
        block: (THREADS, 1),
        // A then B, plus the room to align the first to 1024 bytes.
        shared_bytes: (BM + BN) * BK * 4 + ATOM - 16,
    }
}

/// The element index, in a tile of 128-byte rows, of (row, k): the 128-byte swizzle, chunk
/// `k / 4` of the row moved to `(k / 4) ^ (row mod 8)` (tile at a multiple of 1024 bytes).
#[inline(always)]
const fn swizzled(row: u32, k: u32) -> u32 {
    row * BK + 4 * ((k / 4) ^ (row % 8)) + k % 4
}

/// # Safety
/// `args` must describe valid device matrices; launch with [`geometry`].
#[inline(always)]
pub unsafe fn gemm(args: GemmArgs<f32>) {
    let pad = pool_padding_to(ATOM) / 4;
    let a_tile = Shared::<f32>::at(4 * pad, BM * BK);
    let b_tile = Shared::<f32>::at(4 * (pad + BM * BK), BN * BK);
    let tid = thread_idx_x();
    let (tile_m, tile_n) = rasterise(block_idx_x(), args.m.div_ceil(BM), args.n.div_ceil(BN));
    let (row0, col0) = (tile_m * BM, tile_n * BN);

    // K-major, 128-byte swizzle, 8 rows of 128 bytes from one core-matrix group to the next.
    let sbo = 8 * BK * 4;
    let a_desc = Descriptor::k_major(a_tile.shared_address(0), Swizzle::B128, 16, sbo);
    let b_desc = Descriptor::k_major(b_tile.shared_address(0), Swizzle::B128, 16, sbo);

    let mut acc = Accumulator::<64>::zero();
    let mut l = 0;
    // ANCHOR: core_loop
    while l < args.k {
        // Stage the slice: A transposed to K-major (consecutive threads take consecutive m of
        // one k, so the global loads coalesce), B as it lies (consecutive threads, consecutive k).
        for r in 0..BM * BK / THREADS {
            let e = tid + r * THREADS;
            let (m, kk) = (e % BM, e / BM);
            let value = unsafe { args.a_or_zero(row0 + m, l + kk) };
            a_tile.store(swizzled(m, kk), value);
        }
        for r in 0..BN * BK / THREADS {
            let e = tid + r * THREADS;
            let (kk, n) = (e % BK, e / BK);
            let value = unsafe { args.b_or_zero(l + kk, col0 + n) };
            b_tile.store(swizzled(n, kk), value);
        }
        // The tensor cores read through the async proxy: publish the stores to it, then wait
        // for every thread's.
        wgmma::fence_proxy_async();
        sync_threads();

        wgmma::fence();
        for step in 0..BK / 8 {
            // k-step `step` starts 32 bytes further into each 128-byte row.
            let at = 32 * step;
            acc.mma(a_desc.advanced(at), b_desc.advanced(at), true);
        }
        wgmma::commit_group();
        wgmma::wait_group::<0>();
        // Every warp's `wgmma` has read the tiles before anyone overwrites them.
        sync_threads();
        l += BK;
    }
    // ANCHOR_END: core_loop

    let (warp, lane) = (tid / WARP_SIZE, tid % WARP_SIZE);
    let registers = acc.get();
    for (i, value) in registers.iter().enumerate() {
        let (r, c) = Accumulator::<64>::position(warp, lane, i as u32);
        let (row, col) = (row0 + r, col0 + c);
        if row < args.m && col < args.n {
            unsafe { args.store_c(args.c_at(row, col), *value) };
        }
    }
}
