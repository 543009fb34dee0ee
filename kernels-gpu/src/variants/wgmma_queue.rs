//! `wgmma-queue`: the 256 × 128 kernel with its tiles handed out in order by a counter, for
//! strided batches with many tiles per multiprocessor.
//!
//! Source: none of the documents (cuBLAS's batched kernel takes its tiles from an atomic
//! counter, as ncu's count of atomics shows; CUTLASS's sm90 persistent scheduler walks a static
//! share, and its Blackwell kernels ask the hardware's cluster launch control for the next tile).
//! Changed from [`super::wgmma_layouts`] (`:1` and `:2`, in every layout), the walk
//! ([`Config::QUEUED`], `Layouts`' `QUEUED`) and nothing else; `:3` then changes the epilogue's
//! buffers:
//!
//! [`Config::QUEUED`]: super::wgmma_16bit::Config::QUEUED
//!
//! - **Why.** A persistent block of `wgmma-layouts` walks a fixed share of the tiles: cluster `c`
//!   of 66 takes units `c`, `c + 66`, `c + 132`, … On 1 024 members of 2048 × 2048 × 128 in
//!   bf16 that is about a thousand units each, and the clusters do not run at exactly the same
//!   speed: after a few hundred units a fast cluster is a member or more ahead of a slow one.
//!   Meanwhile C's 8.6 GB stream through the 50 MB L2, which turns over every few units, so a
//!   member's A and B are gone before the last of its tiles reads them: ncu counted 5.2 GB read
//!   from DRAM for 1.07 GB of operands, and the batch ran at 0.68× cuBLAS.
//! - **The queue** ([`crate::pipeline::queue`]): each cluster starts with its own unit; after
//!   that, the producer thread of the cluster's first block takes a ticket from a counter in
//!   global memory (a relaxed `atom.add`) and publishes the unit into every block of the cluster
//!   (a store to each peer's shared memory and an `mbarrier` arrival with release semantics at
//!   cluster scope); the other roles read it from a ring of eight slots. The units are taken in
//!   order, so the clusters working at one moment cover neighbouring tiles whatever their
//!   speeds, and each member's operands are read from DRAM about once.
//! - **A kernel of its own.** Wired into every 16-bit kernel as a run-time choice, the queue cost
//!   the launches that kept the static walk 1.5–4% (the walk's state in registers, loops that
//!   ptxas allocated differently: 21 entry points spilled). Here it is a compile-time constant
//!   ([`crate::pipeline::Kernel::DYNAMIC`]): the static kernels compile to the same PTX as before
//!   it, and `auto` takes this one for a batch where the counter pays
//!   (`gpu_gemm::auto::batch_rule`).
//! - **The host's part**: a zeroed u32 counter per prepared plan, its address written after the
//!   tensor maps (as stream-k's scratch is); the launch's last ticket puts it back to zero, so it
//!   serves the next launch on the stream. Two launches of one plan must not run at once.
//!
//! - **`:3`, the write stream.** Once the operands are read once, a short-k batch is its output:
//!   1 024 members of 2048 × 2048 × 128 write 8.6 GB of C and read 1.1 GB. ncu found a third of
//!   the warps' stalls at the epilogue's barriers: with two staging buffers per warpgroup, each
//!   of a tile's four subtiles waits for the store two subtiles back and meets two named
//!   barriers. `:3` stages the whole tile (four buffers per warpgroup, `TmaStore`'s `WHOLE`: one
//!   barrier pair per tile, the previous tile's stores waited for once), which takes a stage
//!   of the ring (three instead of four: k = 128 is two slices), and drops the cluster (at
//!   n = 128 a cluster of two along n is half empty).
//!
//! What the PTX shows: the producer's loop gains the `atom.global.add` of the ticket, the
//! `mapa` + `st.shared::cluster.u32` of each publication and its `mbarrier.arrive` (with
//! `.release.cluster` in `:1`, whose peer reads it); every reader an `mbarrier.try_wait`
//! (`.acquire.cluster` in `:1`) and one `ld.shared` per unit (a warp's lane 0, then a
//! `shfl.sync`). The mainloop and the epilogue are `wgmma-layouts`'. 168
//! registers, no spills (ptxas, sm_90a); the static kernels' PTX is unchanged, entry by entry.
//!
//! Measured on the H100 (1 024 members, cuBLAS's strided batched GEMM in the same process,
//! `docs/results/h100-2026-11-27-queue/`): at 2048 × 2048 × 128 DRAM reads fall from 5.2 to
//! 1.07 GB (cuBLAS: 1.08) and the batch goes from 0.67× cuBLAS (`wgmma-layouts:1`) to 0.78×
//! (`:1`) and 0.81× (`:3`); at 2048 × 128 × 2048 from 0.95× to 1.05× (`:3`). Where members are
//! a single tile (128³) the queue alone gains nothing (`:2` as `wgmma-layouts:2`, 0.95–0.97×)
//! and `:3`'s staging does (0.96–1.00×). `auto` takes `:3` for every batch of 1 024 tiles or
//! more: 0.95× cuBLAS geomean over the four attention shapes, 0.89× with the static walk. The
//! rest of the gap at 2048 × 2048 × 128 is the write stream: cuBLAS writes C at 2.4 TB/s, `:3`
//! at 1.9. At k = 16 the gap is the same (2.74 against 2.14 TB/s): the store path's own pace,
//! which two staging sets in turn, stores by every thread and cuBLAS's 64 × 32 boxes did not
//! raise (`docs/perf-notes.md`; branches `wip/whole-double`, `wip/thread-store`,
//! `wip/narrow-boxes`).
//!
//! **What that pace was** (H200, 2026-11-28, `docs/results/h200-2026-11-28-store-path/`). A
//! probe in CUDA C (`store_probe.cu` there) showed the TMA store itself is not the limit: one
//! thread per block storing a 256 × 128 tile per step in 8 KiB boxes writes C at 4.1 TB/s (a
//! memset: 4.6), a single block up to 60 GB/s, and the epilogue's own shape (two warpgroups
//! writing their staging, the barriers, the stores) at 3.8 TB/s. The kernel wrote at 2.1.
//! ncu's stall samples at k = 16 said why: 40% of the warps' time was `no_instruction`, spread
//! over the epilogue's 2,500 instructions. `beta` was a run-time value, and each of the 64
//! pairs a thread stores carried its own branch around some 30 instructions that load C; the
//! 6 instructions a pair executes lay 500 bytes apart, and the instruction cache could not
//! keep up. With `beta == 0` made a constant the compiler sees
//! ([`crate::pipeline::epilogue::plain`]; a nonzero `beta` now goes through the fused
//! epilogue's pass, which loads C outside the store), the kernel is 4,928 SASS instructions
//! instead of 6,992, and in the same process as cuBLAS: k = 16 0.60 → 0.95×, 2048 × 2048 × 128
//! 0.58 → 0.79×, 512² × 64 0.80 → 0.94×, 128³ 0.91 → 1.02×.
//!
//! **`:2` again.** With the epilogue fixed, the warps of `:3` at 2048 × 2048 × 128 wait for
//! their operands (30% of the samples on the *full* barrier): under C's write stream a load's
//! latency outlasts what three stages hide. `:2`, four stages and two staging buffers, now wins
//! at seven of the eight attention problems (N,N and T,N): 0.83 / 0.88× against 0.79 / 0.83×
//! at 2048 × 2048 × 128, 0.98 / 1.04× at 2048 × 128 × 2048, 1.00 / 1.03× at 512² × 64, and
//! 0.97 / 1.02× at 128³, where `:3` ran 0.98 / 1.01×. `auto` took `:2`.
//!
//! **The producer's fence, and `:3` again** (H200, 2026-11-28, `docs/results/h200-2026-11-28-l2/`).
//! Not bandwidth: an L2 prefetch of the next wave's operands (`cp.async.bulk.prefetch.tensor`,
//! branch `wip/l2-prefetch`) made every problem slower (2048 × 2048 × 128: 0.86 → 0.74×), and
//! ncu has `:2` keeping L2 84% busy (cuBLAS, the same 256 × 128 tile with four stages and
//! clusters of two: 87%). The samples per SASS instruction found the producer thread at a
//! `MEMBAR.ALL.GPU` and an `ERRBAR` once per unit, a quarter of its time, before the unit's
//! loads: the queue published every unit with a release at cluster scope, which ptxas writes
//! as that fence, and every reader acquired it with a `CCTL.IVALL` (L1 invalidated). A block
//! alone needs neither ([`crate::pipeline::queue`]: block scope where the cluster is one
//! block). In the same process as cuBLAS, `:3` went at 2048 × 2048 × 128 from 0.80 / 0.83× to
//! 0.96–0.97 / 0.97–0.98× (N,N / T,N), at 2048 × 128 × 2048 from 0.95 / 0.99× to 0.99 / 0.99×, at
//! 512² × 64 from 0.94 / 0.93× to 1.05 / 1.05×, at 128³ from 0.90 / 0.93× to 1.06 / 1.06×:
//! 1.01 / 1.02× geomean. `:2` gained less (its fourth stage had hidden the fence). `auto`
//! takes `:3`, the variant's default; the clustered `:1` keeps the cluster scope its peer needs,
//! and loses where a cluster of two along n is half empty (n = 128) and at 2048 × 2048 × 128
//! (0.75×: its consumers wait on the full barrier twice as often as `:2`'s).
use super::wgmma_layouts::Layouts;

/// `wgmma-layouts`' configuration `B` in the layout (`A_TRANSPOSED`, `B_TRANSPOSED`), its
/// tiles taken from a tile queue: its `QUEUED` parameter ([`Config::QUEUED`]), nothing else.
///
/// [`Config::QUEUED`]: super::wgmma_16bit::Config::QUEUED
pub type Queued<B, const A_TRANSPOSED: bool, const B_TRANSPOSED: bool> =
    Layouts<B, A_TRANSPOSED, B_TRANSPOSED, false, true>;
