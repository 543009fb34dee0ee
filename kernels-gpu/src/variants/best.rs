//! `best`: the fastest FP32 SIMT GEMM of the course, beyond the documents.
//!
//! Source: none of the documents has it. `001_…txt` stops at `gemm_128x128` (our
//! [`super::gemm128`]) and lists what would come next; this kernel takes those leads and the
//! ones sm_80+ hardware adds. Changed from `gemm128`, each for a reason the profile gave:
//! - **Asynchronous copies, several stages.** `gemm128` brings the next slice through
//!   registers (`ld.global` into 8 registers, then `st.shared` after the compute). Here the
//!   copies go global → shared directly (`cp.async`, `LDGSTS` in SASS), `STAGES` slices ahead:
//!   no staging registers, no store instructions in the loop, and `STAGES - 1` slices of
//!   memory latency in flight instead of one. One barrier per slice still suffices: the stage
//!   refilled in iteration `t` is the one every thread finished computing on in `t - 1`.
//! - **Warp tiles.** The 8 warps of a 256-thread block own 64×32 pieces of the 128×128 tile
//!   (2 × 4 warps), and a warp's lanes form an 8×4 grid of 8×8 thread tiles. A's fragment
//!   loads of a warp touch 8 distinct 16-byte chunks (128 contiguous bytes, one wavefront)
//!   and B's 4; `gemm128`'s rows of 16 threads touched 16.
//! - **No transpose of B, no bank conflicts.** A's slice is copied as is (A is column-major,
//!   so a k-step is a contiguous column: `As[kk][m]`). B's columns are k-contiguous too, so
//!   its slice is copied as is as well, `Bs[n][kk]`, rows padded to `BK + 4`. A thread reads
//!   B with one 16-byte load per column that yields **four k-steps** of that column, and
//!   takes its 8 columns 4 apart (`tn + 4j`), so the 4 distinct rows a warp reads at once are
//!   consecutive and, with the padding, in 4 different bank groups.
//! - **Any shape.** When m, k, lda, ldb are multiples of 4 and A, B 16-byte aligned, each copy
//!   moves 16 bytes; otherwise 4 (f32) per copy, same loop. Out-of-range elements are
//!   zero-filled by the copy itself (source size 0). C is written with 16-byte stores when its
//!   layout allows.
//! - **Block rasterisation.** Consecutive blocks walk down a group of `GROUP` tile-rows before
//!   moving right, so the blocks resident at one time share A and B panels in L2.
//!
//! Per four k-steps a thread issues 8 `LDS.128` for B and 8 for A and 256 FFMA: the 16/17
//! mix of `gemm128`, with the staging gone from the loop.
use crate::device::{
    block_idx_x, cp_async_commit, cp_async_wait, sync_threads, thread_idx_x, Real, Shared,
    WARP_SIZE,
};
use crate::gemm::{GemmArgs, Geometry};

/// Rows and columns of a warp's piece of the block tile, and of a thread's piece of it.
const WARP_M: u32 = 64;
const WARP_N: u32 = 32;
const THREAD_M: usize = 8;
const THREAD_N: usize = 8;
/// Tile-rows a group of consecutive blocks walks down before moving to the next column.
const GROUP: u32 = 8;

/// The shape of a configuration, for the host: threads per block and shared bytes.
pub const fn threads(bm: u32, bn: u32) -> u32 {
    (bm / WARP_M) * (bn / WARP_N) * WARP_SIZE
}

/// Elements of one stage: A's BM×BK slice, then B's BN rows of BK + 4.
const fn stage_elements(bm: u32, bn: u32, bk: u32) -> u32 {
    bm * bk + bn * (bk + 4)
}

pub fn geometry<const BM: u32, const BN: u32, const BK: u32, const STAGES: u32>(
    m: u32,
    n: u32,
    _k: u32,
    element_bytes: u32,
) -> Geometry {
    Geometry {
        grid: (m.div_ceil(BM) * n.div_ceil(BN), 1),
        block: (threads(BM, BN), 1),
        shared_bytes: STAGES * stage_elements(BM, BN, BK) * element_bytes,
    }
}

/// # Safety
/// `args` must describe valid device matrices; launch with [`geometry`] of the same
/// parameters.
#[inline(always)]
pub unsafe fn gemm<T: Real, const BM: u32, const BN: u32, const BK: u32, const STAGES: u32>(
    args: GemmArgs<T>,
) {
    // Two copies of the kernel: the choice is made once per launch, not per copy in the loop.
    if args.ab_vec4_ok() {
        unsafe { gemm_with::<T, BM, BN, BK, STAGES, true>(args) }
    } else {
        unsafe { gemm_with::<T, BM, BN, BK, STAGES, false>(args) }
    }
}

/// `VEC4`: A and B are copied in 16-byte pieces (see [`GemmArgs::ab_vec4_ok`]), else one
/// element per copy.
#[inline(always)]
unsafe fn gemm_with<
    T: Real,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const STAGES: u32,
    const VEC4: bool,
>(
    args: GemmArgs<T>,
) {
    const {
        assert!(BM % WARP_M == 0 && BN % WARP_N == 0 && BK % 4 == 0 && STAGES >= 2);
        // Every thread copies the same number of 4-row pieces of A and of B per slice.
        assert!((BM * BK / 4) % threads(BM, BN) == 0 && (BN * BK / 4) % threads(BM, BN) == 0);
    };
    let stage_len = stage_elements(BM, BN, BK);
    let b_stride = BK + 4;
    let pool = Shared::<T>::at(0, STAGES * stage_len);
    let threads = threads(BM, BN);
    let tid = thread_idx_x();

    let (tile_m, tile_n) = rasterise(block_idx_x(), args.m.div_ceil(BM), args.n.div_ceil(BN));
    let (row0, col0) = (tile_m * BM, tile_n * BN);

    // The copies: thread `tid` copies 4-row pieces `tid + r * threads` of each slice. A piece
    // of A is rows `4 * (c % (BM / 4))..+4` of column `c / (BM / 4)`, of B rows
    // `4 * (c % (BK / 4))..+4` of column `c / (BK / 4)`. Each piece's place in the stage and
    // its row and column are fixed for the whole loop; only the slice's first k moves.
    let a_pieces = BM * BK / 4 / threads;
    let b_pieces = BN * BK / 4 / threads;
    let copy_slice = |stage: u32, l: u32| {
        let a_at = stage * stage_len;
        let b_at = a_at + BM * BK;
        for r in 0..a_pieces {
            let c = tid + r * threads;
            let (piece, kk) = (c % (BM / 4), c / (BM / 4));
            let (at, row, col) = (a_at + kk * BM + 4 * piece, row0 + 4 * piece, l + kk);
            if VEC4 {
                unsafe { args.copy_a4_async(pool, at, row, col) };
            } else {
                for q in 0..4 {
                    unsafe { args.copy_a_async(pool, at + q, row + q, col) };
                }
            }
        }
        for r in 0..b_pieces {
            let c = tid + r * threads;
            let (piece, col) = (c % (BK / 4), c / (BK / 4));
            let (at, row) = (b_at + col * b_stride + 4 * piece, l + 4 * piece);
            if VEC4 {
                unsafe { args.copy_b4_async(pool, at, row, col0 + col) };
            } else {
                for q in 0..4 {
                    unsafe { args.copy_b_async(pool, at + q, row + q, col0 + col) };
                }
            }
        }
    };

    let (warp, lane) = (tid / WARP_SIZE, tid % WARP_SIZE);
    let (warp_m, warp_n) = (warp % (BM / WARP_M), warp / (BM / WARP_M));
    let (lane_m, lane_n) = (lane % 8, lane / 8);
    // This thread's rows: `a_row + {0..4}` and `a_row + 32 + {0..4}`; its columns:
    // `b_row + 4 * j` for j in 0..8 (rows of the B slice).
    let a_row = warp_m * WARP_M + 4 * lane_m;
    let b_row = warp_n * WARP_N + lane_n;

    let slices = args.k.div_ceil(BK);
    // Prologue: the first STAGES - 1 slices in flight, one commit group each (empty groups
    // past the end keep the count of groups, and so the wait below, the same).
    for s in 0..STAGES - 1 {
        if s < slices {
            copy_slice(s, s * BK);
        }
        cp_async_commit();
    }

    // acc[j][i]: row `a_row + (i / 4) * 32 + i % 4`, column `b_row + 4 * j`.
    let mut acc = [[T::ZERO; THREAD_M]; THREAD_N];
    let (mut read_stage, mut write_stage) = (0, STAGES - 1);
    for t in 0..slices {
        // Slice t has landed for this thread; after the barrier, for every thread. The
        // barrier also says everyone is done with the stage refilled next (slice t - 1's).
        cp_async_wait(STAGES - 2);
        sync_threads();
        let next = t + STAGES - 1;
        if next < slices {
            copy_slice(write_stage, next * BK);
        }
        cp_async_commit();

        let a_at = read_stage * stage_len + a_row;
        let b_at = read_stage * stage_len + BM * BK + b_row * b_stride;
        for group in 0..BK / 4 {
            // Column j of B for k-steps 4 * group + 0..4, in one 16-byte load.
            let b: [[T; 4]; THREAD_N] =
                core::array::from_fn(|j| pool.load4(b_at + 4 * j as u32 * b_stride + 4 * group));
            for q in 0..4 {
                let kk = 4 * group + q;
                let lo = pool.load4(a_at + kk * BM);
                let hi = pool.load4(a_at + kk * BM + 32);
                let a = [lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]];
                for j in 0..THREAD_N {
                    for i in 0..THREAD_M {
                        acc[j][i] = a[i].fma(b[j][q as usize], acc[j][i]);
                    }
                }
            }
        }
        read_stage = if read_stage + 1 == STAGES {
            0
        } else {
            read_stage + 1
        };
        write_stage = if write_stage + 1 == STAGES {
            0
        } else {
            write_stage + 1
        };
    }
    // Nothing may be in flight when the block exits (the tail groups are empty, but PTX
    // leaves an unwaited copy's effect undefined).
    cp_async_wait(0);

    let vec4_c = args.c_vec4_ok();
    for j in 0..THREAD_N {
        let col = col0 + b_row + 4 * j as u32;
        if col >= args.n {
            continue;
        }
        for half in 0..2 {
            let row = row0 + a_row + 32 * half as u32;
            let values = [
                acc[j][4 * half],
                acc[j][4 * half + 1],
                acc[j][4 * half + 2],
                acc[j][4 * half + 3],
            ];
            if vec4_c && row < args.m {
                unsafe { args.store_c4(args.c_at(row, col), values) };
            } else {
                for i in 0..4 {
                    if row + (i as u32) < args.m {
                        unsafe { args.store_c(args.c_at(row + i as u32, col), values[i]) };
                    }
                }
            }
        }
    }
}

/// The (tile-row, tile-column) of block `block`: down `GROUP` tile-rows, then right, so that
/// the blocks resident together cover a compact patch of C.
#[inline(always)]
fn rasterise(block: u32, tiles_m: u32, tiles_n: u32) -> (u32, u32) {
    // `max(1)`: n = 0 or m = 0 launch no block, and the divisions need no zero check.
    let per_group = (GROUP * tiles_n).max(1);
    let first_m = block / per_group * GROUP;
    let rows = tiles_m.saturating_sub(first_m).clamp(1, GROUP);
    let within = block % per_group;
    (first_m + within % rows, within / rows)
}
