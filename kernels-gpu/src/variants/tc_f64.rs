//! `tc-f64`: the FP64 tensor cores (DMMA). `mma.sync.aligned.m16n8k16.row.col.f64` multiplies
//! a 16×16 by a 16×8 block of doubles per warp instruction with FP64 fused multiply-adds, the
//! same arithmetic as the CUDA cores' `DFMA` and, on the H100, twice their throughput (67 vs
//! 34 TFLOP/s): the path cuBLAS DGEMM takes.
//!
//! Source: none of the documents. Changed from [`super::tc_tf32`]: the element is a double
//! and the fragment is `m16n8k16`'s (the PTX ISA's table in [`crate::device::mma`]): lane
//! (g, t) holds `A[g][t+4j]`, `A[g+8][t+4j]` and `B[t+4j][g]` for j = 0..4. The same two
//! renamings make every fragment a run of 16-byte loads:
//!
//! - **k**: the lane's k columns `t + 4j` stand for k = `4t + j` of each 16-deep step, so its
//!   four B values are B(4t..4t+4, column g): two 16-byte `ld.shared.v2.f64` from B's
//!   k-contiguous rows, and its A values for one j lie in one row of A's slice.
//! - **rows**: in each 32-row block, tile h's rows `g, g+8` stand for m = `4g + 2h`,
//!   `4g + 2h + 1`: the pair (a(2j), a(2j+1)) of tile h is A(4g + 2h..+2, k), one 16-byte
//!   `ld.shared.v2.f64` ([`Shared::load2`]) straight into the fragment's registers.
//!
//! Shared memory, 16 bytes (a pair of doubles) as the unit of layout, copies and loads:
//!
//! - A's slice m-contiguous, pairs swizzled by `kk` (bit 2 of kk into bit 0 of the pair index,
//!   bit 3 into bit 2): the eight lanes a 16-byte load serves together, (g mod 2, t), then hit
//!   eight different 16-byte bank groups. B's slice k-contiguous, pairs swizzled by `n mod 2`.
//!   Both permute pairs within aligned groups of 8, so the copies stay conflict-free.
//! - A first version used 4-double chunks (two 16-byte halves moving together), as `tc-tf32`
//!   does with 4 floats; half the bank groups were then unreachable for the first 16-byte load
//!   of every lane: 201 M shared-load bank conflicts at 4096³ (ncu), tensor pipe active 68%,
//!   0.74× cuBLAS DGEMM. Pairs: 0 conflicts, 0.93×.
//! - 16-byte `cp.async` copies, `STAGES` deep, zero-filled edges; per-element copies when m, k,
//!   lda or ldb is odd.
//!
//! On sm_80 the `m16n8k16` is issued as four `m16n8k4` (the device layer's lowering), each as
//! two `m8n8k4`; on sm_90 it is one `DMMA.16x8x16`. SASS (`cargo xtask sass --variant tc-f64
//! --dtype f64`): 217 instructions for 16 DMMA and 24 `LDS.128` per k-slice, 58 of them `NOP`s
//! that ptxas places between dependent DMMAs; 234 registers, no spills.
//!
//! Measured (H100 80GB HBM3, f64, median, cuBLAS DGEMM in the same process, checks passing):
//! `--tile 2` (128×64×16, 4 warps of 64×32, 4 stages, 2 blocks per SM) 55.9 TFLOP/s at 4096³
//! = 0.93× cuBLAS DGEMM (60.3), 53.4 at 8192³ = 0.94×, 0.92× at 1024³ and 2048³. ncu at 4096³
//! (`--tile 4`): tensor pipe active 76% (cuBLAS's `sm90_xmma_gemm_f64f64…tensor16x8x8`: 98%),
//! 0 bank conflicts. `best`, the CUDA cores' kernel, reaches 0.35×.
use crate::device::mma::{mma_m16n8k16_f64, Accum, FragA, FragB};
use crate::device::{
    block_idx_x, cp_async_commit, cp_async_wait, sync_threads, thread_idx_x, Shared, WARP_SIZE,
};
use crate::gemm::{next_stage, rasterise, GemmArgs, Geometry};

/// As [`super::tc_tf32::threads`]: warp tile `32·MB × 8·NT`.
pub const fn threads(bm: u32, bn: u32, mb: usize, nt: usize) -> u32 {
    (bm / (32 * mb as u32)) * (bn / (8 * nt as u32)) * WARP_SIZE
}

pub fn geometry<
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const STAGES: u32,
    const MB: usize,
    const NT: usize,
>(
    m: u32,
    n: u32,
    _k: u32,
    element_bytes: u32,
) -> Geometry {
    Geometry {
        grid: (m.div_ceil(BM) * n.div_ceil(BN), 1),
        block: (threads(BM, BN, MB, NT), 1),
        shared_bytes: STAGES * (BM + BN) * BK * element_bytes,
    }
}

/// Element index of pair `pair` (two doubles, 16 bytes) of row `kk` of a stage's A slice:
/// pairs swizzled by bit 2 of kk into bit 0 and bit 3 into bit 2 (see the header).
#[inline(always)]
const fn a_index<const BM: u32>(kk: u32, pair: u32) -> u32 {
    kk * BM + 2 * (pair ^ (((kk >> 2) & 1) | (((kk >> 3) & 1) << 2)))
}

/// Element index of pair `pair` of row `n` (column n of B) of a stage's B slice: pairs
/// swizzled by n mod 2.
#[inline(always)]
const fn b_index<const BK: u32>(n: u32, pair: u32) -> u32 {
    n * BK + 2 * (pair ^ (n & 1))
}

/// # Safety
/// `args` must describe valid device matrices; launch with [`geometry`] of the same parameters.
#[inline(always)]
pub unsafe fn gemm<
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const STAGES: u32,
    const MB: usize,
    const NT: usize,
>(
    args: GemmArgs<f64>,
) {
    if args.ab_pairs_ok() {
        unsafe { gemm_with::<BM, BN, BK, STAGES, MB, NT, true>(args) }
    } else {
        unsafe { gemm_with::<BM, BN, BK, STAGES, MB, NT, false>(args) }
    }
}

#[allow(clippy::needless_range_loop)]
#[inline(always)]
unsafe fn gemm_with<
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const STAGES: u32,
    const MB: usize,
    const NT: usize,
    const PAIRS: bool,
>(
    args: GemmArgs<f64>,
) {
    let (wm, wn) = (32 * MB as u32, 8 * NT as u32);
    const {
        assert!(BM.is_multiple_of(32 * MB as u32) && BN.is_multiple_of(8 * NT as u32));
        // A's swizzle permutes pairs within aligned groups of 8: rows of whole groups.
        assert!(BK.is_multiple_of(16) && BM.is_multiple_of(32) && STAGES >= 2);
        assert!((BM * BK / 2).is_multiple_of(threads(BM, BN, MB, NT)));
        assert!((BN * BK / 2).is_multiple_of(threads(BM, BN, MB, NT)));
        assert!(threads(BM, BN, MB, NT).is_multiple_of(BM / 2));
        assert!(threads(BM, BN, MB, NT).is_multiple_of(BK / 2));
    };
    let threads = threads(BM, BN, MB, NT);
    let stage_len = (BM + BN) * BK;
    let pool = Shared::<f64>::at(0, STAGES * stage_len);
    let tid = thread_idx_x();
    let (tile_m, tile_n) = rasterise(block_idx_x(), args.m.div_ceil(BM), args.n.div_ceil(BN));
    let (row0, col0) = (tile_m * BM, tile_n * BN);

    // The copies, as in `tc-tf32` but a pair (16 bytes) at a time: a thread's pairs stay in
    // one row of m (A) or one k offset (B), their sources a fixed stride apart.
    let (a_pair, a_kk) = (tid % (BM / 2), tid / (BM / 2));
    let a_pass = threads / (BM / 2);
    let (b_pair, b_n) = (tid % (BK / 2), tid / (BK / 2));
    let b_pass = threads / (BK / 2);
    let a_row_inside = row0 + 2 * a_pair < args.m;
    let a_from = args.a_at(row0 + 2 * a_pair, a_kk);
    let b_from = args.b_at(2 * b_pair, col0 + b_n);
    let copy_slice = |stage: u32, slice: u32| {
        let l = slice * BK;
        let a_at = stage * stage_len;
        let b_at = a_at + BM * BK;
        if PAIRS {
            let a_slice = a_from + l as usize * args.lda as usize;
            for r in 0..BM * BK / 2 / threads {
                let kk = a_kk + r * a_pass;
                let inside = a_row_inside && l + kk < args.k;
                let from = a_slice + (r * a_pass) as usize * args.lda as usize;
                unsafe { pool.copy2_async(a_at + a_index::<BM>(kk, a_pair), args.a, from, inside) };
            }
            let b_slice = b_from + l as usize;
            for r in 0..BN * BK / 2 / threads {
                let n = b_n + r * b_pass;
                let inside = l + 2 * b_pair < args.k && col0 + n < args.n;
                let from = b_slice + (r * b_pass) as usize * args.ldb as usize;
                unsafe { pool.copy2_async(b_at + b_index::<BK>(n, b_pair), args.b, from, inside) };
            }
        } else {
            // m, k, lda or ldb odd: element by element, each bounds-tested.
            for r in 0..BM * BK / 2 / threads {
                let kk = a_kk + r * a_pass;
                let at = a_at + a_index::<BM>(kk, a_pair);
                for q in 0..2 {
                    unsafe { args.copy_a_async(pool, at + q, row0 + 2 * a_pair + q, l + kk) };
                }
            }
            for r in 0..BN * BK / 2 / threads {
                let n = b_n + r * b_pass;
                let at = b_at + b_index::<BK>(n, b_pair);
                for q in 0..2 {
                    unsafe { args.copy_b_async(pool, at + q, l + 2 * b_pair + q, col0 + n) };
                }
            }
        }
    };

    // Fragment offsets. A: lane (g, t) reads rows kk = 16·step + 4t + j, whose swizzle is
    // (t mod 2) | 4·(t / 2) for every step and j, at pair warp_m/2 + 16·blk + 2g + h: so its
    // pair for tile h sits at one of two per-lane offsets plus constants. B: row n = warp_n +
    // 8·nt + g, pairs 8·step + 2t + j' swizzled by g mod 2: two per-lane offsets, one per j'.
    let (warp, lane) = (tid / WARP_SIZE, tid % WARP_SIZE);
    let (warp_m, warp_n) = (warp % (BM / wm) * wm, warp / (BM / wm) * wn);
    let (g, t) = (lane / 4, lane % 4);
    let a_lane = 4 * t * BM + warp_m + 2 * ((2 * g) ^ ((t >> 1) << 2));
    let a_half = [a_lane + 2 * (t & 1), a_lane + 2 * ((t & 1) ^ 1)];
    let b_lane = (warp_n + g) * BK + 4 * t;
    let b_half = [b_lane + 2 * (g & 1), b_lane + 2 * ((g & 1) ^ 1)];

    let slices = args.k.div_ceil(BK);
    for s in 0..STAGES - 1 {
        if s < slices {
            copy_slice(s, s);
        }
        cp_async_commit();
    }

    // acc[b][h][j]: the `mma` tile of 32-row block b, half h, 8-column tile j.
    let mut acc = [[[Accum::<f64, 4>::default(); NT]; 2]; MB];
    let (mut read_stage, mut write_stage) = (0, STAGES - 1);
    // ANCHOR: core_loop
    for slice in 0..slices {
        cp_async_wait(STAGES - 2);
        sync_threads();
        let next = slice + STAGES - 1;
        if next < slices {
            copy_slice(write_stage, next);
        }
        cp_async_commit();

        let a_stage = read_stage * stage_len;
        let b_stage = a_stage + BM * BK;
        for step in 0..BK / 16 {
            // b[j] = B(k = 16·step + 4t..+4, column g of tile j): two 16-byte loads.
            let mut b = [[0f64; 4]; NT];
            for j in 0..NT {
                let at = b_stage + 16 * step + 8 * j as u32 * BK;
                let [k0, k1] = pool.load2(at + b_half[0]);
                let [k2, k3] = pool.load2(at + b_half[1]);
                b[j] = [k0, k1, k2, k3];
            }
            for blk in 0..MB {
                for h in 0..2 {
                    // Tile h's fragment: rows 4g + 2h, +1 at k = 16·step + 4t + j, one 16-byte
                    // load per j straight into the pair (a(2j), a(2j+1)).
                    let mut a = [0f64; 8];
                    for j in 0..4 {
                        let kk = 16 * step + j as u32;
                        let [top, bottom] =
                            pool.load2(a_stage + a_half[h] + kk * BM + 32 * blk as u32);
                        a[2 * j] = top;
                        a[2 * j + 1] = bottom;
                    }
                    let frag_a = FragA(a);
                    for j in 0..NT {
                        acc[blk][h][j] = mma_m16n8k16_f64(&frag_a, &FragB(b[j]), acc[blk][h][j]);
                    }
                }
            }
        }
        read_stage = next_stage(read_stage, STAGES);
        write_stage = next_stage(write_stage, STAGES);
    }
    // ANCHOR_END: core_loop
    cp_async_wait(0);

    // As `tc-tf32`: lane (g, t) holds rows 4g..4g+4 of columns 2t, 2t+1 of each 32×8 block.
    let vec4_c = args.c_vec4_ok();
    for blk in 0..MB {
        let row = row0 + warp_m + 32 * blk as u32 + 4 * g;
        for j in 0..NT {
            for e in 0..2 {
                let col = col0 + warp_n + 8 * j as u32 + 2 * t + e as u32;
                if col >= args.n {
                    continue;
                }
                let values = [
                    acc[blk][0][j].0[e],
                    acc[blk][0][j].0[2 + e],
                    acc[blk][1][j].0[e],
                    acc[blk][1][j].0[2 + e],
                ];
                if vec4_c && row < args.m {
                    unsafe { args.store_c4(args.c_at(row, col), values) };
                } else {
                    for r in 0..4 {
                        if row + (r as u32) < args.m {
                            unsafe { args.store_c(args.c_at(row + r as u32, col), values[r]) };
                        }
                    }
                }
            }
        }
    }
}
