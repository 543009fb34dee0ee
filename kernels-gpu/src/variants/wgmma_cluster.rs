//! `wgmma-cluster`: two blocks side by side along n share A, and the TMA engine multicasts it.
//!
//! Source: none of the documents (fast.cu's worklog, step 8; CUTLASS's `ClusterShape`). Changed
//! from [`super::wgmma_16bit`], one piece, [`Config::load_a`]:
//!
//! - **Why.** A block's tile is 256 m × 128 n, and each slice of k brings 32 KiB of A and 16 KiB
//!   of B from L2 for 4.2 MFLOP: at the tensor cores' 989 TFLOP/s that is about 11 TB/s of L2
//!   reads over the whole GPU, at the limit of what L2 delivers. Two blocks computing the tiles
//!   `(i, 2j)` and `(i, 2j + 1)` read the same 256 rows of A.
//! - **A cluster of two blocks** (`.reqnctapercluster 2, 1, 1`, from the entry table's
//!   `cluster(2)`): the hardware runs them at the same time on neighbouring multiprocessors and
//!   lets each reach the other's shared memory. The tile scheduler gives the blocks of a
//!   cluster the two tiles of a *unit* ([`crate::pipeline::schedule`]).
//! - **Multicast.** Each block's producer loads half of A's slice, two of the four 64-m boxes,
//!   with `cp.async.bulk.tensor…multicast::cluster` and the mask `0b11`
//!   ([`tma::load_box_multicast`]): the boxes land at the same offset of both blocks' stages,
//!   and each block's *full* barrier counts their bytes. Each block still loads its own B.
//!   L2 reads fall from 48 to 32 KiB per block per slice.
//! - **The handshake crosses blocks.** A block's stage is written by both producers, so it may be
//!   refilled only when the consumers of *both* blocks have released it: every consumer warp
//!   arrives on the *empty* barrier of each block of the cluster (a remote arrive through
//!   `mapa`, [`crate::pipeline::Consumer::release`]), and the barriers count 16 arrivals, not 8.
//!   The blocks synchronise with a cluster barrier after initialising their mbarriers (a peer
//!   may arrive on them) and before leaving (a peer may still arrive on them: a block's shared
//!   memory is gone when it exits). The emulator reports both mistakes
//!   (`tests/tests/emulator_cluster.rs`).
//!
//! The skeleton does the rest: the cluster shape is a constant of the [`Kernel`], and the tile
//! order, the arrival counts and the cluster barriers follow from it.
//!
//! One line of PTX decided whether this step pays: the remote arrive with `.release.cluster`
//! semantics compiles to a `MEMBAR.ALL.GPU` before every arrive and made the kernel 0.45×
//! cuBLAS; with the default semantics (the consumers' reads are complete when their `wgmma`s
//! retire) it is 0.96–0.97× at 8192³, +6–7% over `wgmma-16bit`; ±0–3% at 4096³, −5 to −7% at
//! 2048³ (H100, `docs/results/005-hopper/`, `docs/perf-notes.md`).
//!
//! **The other way round: [`SharedB`].** Two blocks one above the other along m, tiles `(2i, j)`
//! and `(2i + 1, j)`, read the same 128 columns of B; each loads one of B's two boxes of 64 n
//! and multicasts it ([`Config::load_b`]), each loads its own A. L2 reads fall less (from 48
//! to 40 KiB per block per slice), but both blocks of a cluster cover the same columns of C:
//! in a grouped GEMM, whose group follows the columns, they are always of the same group (and
//! both skip a masked group's empty tiles, or neither), where `SharedA`'s pair along n may
//! straddle two groups. It is `wgmma-layouts:3`. Measured on the H100 it loses to no cluster at
//! all (`:2`), by 0.2–6% on DeepGEMM's grouped sets and 1.5–2% on one GEMM (4096³ 0.960×
//! cuBLAS against 0.974×): B is the smaller operand, a third of a slice's bytes, and sharing it
//! saves half as much L2 traffic as sharing A while the cross-block handshake costs as much
//! (`docs/results/h100-2026-11-26-groups/`).
//!
//! [`Kernel`]: crate::pipeline::Kernel
use super::wgmma_16bit::{a_box_at, Config, A_BOX_BYTES, A_BOX_M, BM, BN};
use crate::device::cluster;
use crate::device::mbarrier::MBarrier;
use crate::device::tma::{self, TensorMap};

/// `wgmma-16bit` with `STAGES` stages in clusters of `CLUSTER_N` blocks along n that share A.
#[derive(Clone, Copy, Default)]
pub struct SharedA<const STAGES: u32, const CLUSTER_N: u32>;

impl<const STAGES: u32, const CLUSTER_N: u32> Config for SharedA<STAGES, CLUSTER_N> {
    const STAGES: u32 = STAGES;
    const CLUSTER_N: u32 = CLUSTER_N;

    /// This block's share of A's slice, multicast to every block of the cluster.
    // ANCHOR: core_loop
    #[inline(always)]
    unsafe fn load_a(
        a_map: *const TensorMap,
        stage: u32,
        (m0, k0, layer): (u32, i32, u32),
        full: MBarrier,
        k_major: bool,
    ) {
        const { assert!((BM / A_BOX_M).is_multiple_of(CLUSTER_N)) };
        let share = BM / A_BOX_M / CLUSTER_N;
        let everyone = ((1u32 << CLUSTER_N) - 1) as u16;
        let first = cluster::rank() * share;
        for j in first..first + share {
            let (x, y) = a_box_at(m0 + j * A_BOX_M, k0, k_major);
            unsafe {
                let to = stage + j * A_BOX_BYTES;
                tma::load_box_multicast(a_map, to, x, y, layer, full, everyone)
            };
        }
    }
    // ANCHOR_END: core_loop
}

/// `wgmma-16bit` with `STAGES` stages in clusters of `CLUSTER_M` blocks along m that share B.
#[derive(Clone, Copy, Default)]
pub struct SharedB<const STAGES: u32, const CLUSTER_M: u32>;

impl<const STAGES: u32, const CLUSTER_M: u32> Config for SharedB<STAGES, CLUSTER_M> {
    const STAGES: u32 = STAGES;
    const CLUSTER_M: u32 = CLUSTER_M;
    // The blocks of a cluster cover the same columns: of the same group, always.
    const GROUPS: bool = true;

    /// This block's share of B's slice, boxes of 64 n (B's tensor map has boxes of 64 k × 64 n
    /// when B is stored k × n), multicast to every block of the cluster; they land where one
    /// box of 128 n would, the second 64 rows of 128 bytes after the first.
    #[inline(always)]
    unsafe fn load_b(
        b_map: *const TensorMap,
        b_at: u32,
        (n0, k0, layer): (u32, i32, u32),
        bn: u32,
        full: MBarrier,
        mn_major: bool,
    ) {
        const { assert!((BN / 64).is_multiple_of(CLUSTER_M)) };
        let share = bn / 64 / CLUSTER_M;
        let everyone = ((1u32 << CLUSTER_M) - 1) as u16;
        let first = cluster::rank() * share;
        for j in first..first + share {
            let (at, n) = (b_at + j * A_BOX_BYTES, (n0 + 64 * j) as i32);
            let (x, y) = if mn_major { (n, k0) } else { (k0, n) };
            unsafe { tma::load_box_multicast(b_map, at, x, y, layer, full, everyone) };
        }
    }
}
