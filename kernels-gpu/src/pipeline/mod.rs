//! The Hopper GEMM skeleton: what every TMA + `wgmma` kernel of the course shares, so that a new
//! element type or schedule is a short lesson that says what it changes.
//!
//! CUTLASS splits such a kernel into a *collective mainloop* (the copies and the MMAs of one
//! tile), a *collective epilogue* (C) and a *tile scheduler*, around a kernel that assigns the
//! roles; ThunderKittens calls the parts load / compute / finish. Here:
//!
//! - [`ring`]: the ring of shared-memory stages and their *full* / *empty* mbarriers;
//! - [`schedule`]: the persistent tile scheduler (grouped order, cluster tiles, the members of
//!   a strided batch, the groups of a grouped GEMM), and [`queue`], its dynamic form: a counter
//!   hands the units out in order, in the kernels that set [`Kernel::DYNAMIC`];
//! - [`run`] (this file): the roles. Warpgroup 0 is the *producer*: it gives its registers
//!   away (`setmaxnreg.dec`) and one thread issues the TMA copies of every slice of every tile
//!   the block computes, each into the next stage of the ring once its consumers released it.
//!   The other warpgroups are *consumers*: they take the registers (`setmaxnreg.inc`) and run
//!   the kernel's mainloop and epilogue on each tile;
//! - [`Kernel`]: what a lesson supplies, its tile and stage sizes, the copies of one slice
//!   ([`Kernel::load`]) and a consumer's work on one tile ([`Kernel::consume`]), built from the
//!   consumers' helpers in [`Consumer`] (wait for a stage, release it to the producer of every
//!   block that wrote into it) and an epilogue of [`epilogue`].
//!
//! The schedules: *cooperative* (the consumer warpgroups split each tile, CUTLASS's
//! `KernelTmaWarpSpecializedCooperative`) and *ping-pong* (each consumer warpgroup takes every
//! other tile, and an ordering barrier lets one run its mainloop while the other runs its
//! epilogue: `…Pingpong`). A *cluster* of blocks computes neighbouring tiles, and the TMA
//! engine multicasts the operand they share into every block of the cluster.
pub mod epilogue;
pub mod queue;
pub mod ring;
pub mod schedule;
pub mod stream;

use crate::device::cluster;
use crate::device::grid;
use crate::device::mbarrier::{fence_mbarrier_init, MBarrier};
use crate::device::tma::TensorMap;
use crate::device::wgmma;
use crate::device::{
    block_idx_y, grid_dim_y, sync_threads, sync_warp, thread_idx_x, warp_uniform,
    warp_uniform_condition, WARP_SIZE,
};
use crate::gemm::HalfGemmArgs;
use queue::{Queue, Reader};
pub use ring::{Ring, Stages};
use schedule::{MaskedCursor, StreamK, Tile, Tiles, Walk};

/// One unit of a block's work: a tile of C, `slices` slices of k from `first_slice`, part
/// `split` of the tile's `parts` (split-k: the grid row and the grid's rows; stream-k: the
/// block's place among the blocks that share the tile, whose part 0 has workspace slab `slab0`:
/// [`schedule::StreamK`]). A whole tile is part 0 of 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Work {
    pub tile: Tile,
    pub split: u32,
    pub parts: u32,
    pub first_slice: u32,
    pub slices: u32,
    pub slab0: u32,
    /// The tile's number in the tile order (stream-k's counter for it).
    pub unit: u32,
}

impl Work {
    /// Whether this block computes the whole tile, over all of k.
    #[inline(always)]
    pub fn whole(&self) -> bool {
        self.parts == 1
    }
}

/// Threads of a warpgroup: four warps, the unit of `wgmma`.
pub const WARPGROUP: u32 = 128;

/// How the consumer warpgroups share the tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Every consumer warpgroup works on every tile (its own rows of it).
    Cooperative,
    /// Consumer warpgroup `w` takes the block's tiles `w`, `w + 2`, …; the two alternate
    /// between mainloop and epilogue.
    PingPong,
}

/// The problem sizes a kernel's arguments carry.
pub trait Problem: Copy {
    fn mnk(&self) -> (u32, u32, u32);

    /// Members of a strided batch: problems of the same sizes, each its own A, B and C.
    #[inline(always)]
    fn members(&self) -> u32 {
        1
    }

    /// The arguments of `tile`'s member: what the consumers' epilogue writes through (the
    /// copies find a member's A and B by the layer of their tensor maps).
    #[inline(always)]
    fn member(self, _tile: Tile) -> Self {
        self
    }

    /// Where a tile of the walk lies, or `None` for one with nothing to compute: a grouped
    /// GEMM's tiles ([`crate::gemm::Groups`]) find their group, and skip padding and the
    /// columns past a group's count. The producer and the consumers ask the same question of
    /// the same tiles, so they skip the same ones and the ring stays in step.
    #[inline(always)]
    fn locate(&self, tile: Tile, _bn: u32) -> Option<Tile> {
        Some(tile)
    }

    /// A grouped GEMM's groups ([`crate::gemm::Groups`]): none but in the 16-bit and FP8
    /// kernels' arguments.
    #[inline(always)]
    fn groups(&self) -> crate::gemm::Groups {
        crate::gemm::Groups::NONE
    }

    /// Whether the groups are in the masked layout, their counts read on the device
    /// ([`crate::gemm::GroupLayout::Masked`]).
    #[inline(always)]
    fn masked(&self) -> bool {
        self.groups().layout == crate::gemm::GroupLayout::Masked
    }

    /// Member `member`'s columns that hold its tokens: in the masked layout its count (at most
    /// n), in any other n.
    #[inline(always)]
    fn columns(&self, member: u32) -> u32 {
        let n = self.mnk().1;
        if self.masked() {
            // The masked layout's table holds a word per member.
            n.min(unsafe { self.groups().columns(member) })
        } else {
            n
        }
    }

    /// The arguments without groups: what a kernel that runs no grouped GEMM sees, so that
    /// the compiler knows every grouped branch of its epilogue dead.
    #[inline(always)]
    fn ungrouped(self) -> Self {
        self
    }
}

impl<T: crate::device::Real> Problem for crate::gemm::GemmArgs<T> {
    #[inline(always)]
    fn mnk(&self) -> (u32, u32, u32) {
        (self.m, self.n, self.k)
    }

    #[inline(always)]
    fn members(&self) -> u32 {
        self.members
    }

    /// The member's own problem: its C, `member · stride_c` elements on, and no batch (so
    /// that [`crate::gemm::GemmArgs::member_c`] adds nothing, and a kernel that computes one
    /// problem folds every offset away).
    #[inline(always)]
    fn member(self, tile: Tile) -> Self {
        crate::gemm::GemmArgs {
            c: self.c.offset((tile.member as u64 * self.stride_c) as isize),
            stride_c: 0,
            members: 1,
            ..self
        }
    }
}

impl Problem for crate::gemm::Fp8GemmArgs {
    #[inline(always)]
    fn mnk(&self) -> (u32, u32, u32) {
        (self.m, self.n, self.k)
    }

    #[inline(always)]
    fn members(&self) -> u32 {
        self.batch.count
    }

    #[inline(always)]
    fn member(self, tile: Tile) -> Self {
        self.of_tile(tile)
    }

    #[inline(always)]
    fn groups(&self) -> crate::gemm::Groups {
        self.groups
    }

    #[inline(always)]
    fn locate(&self, tile: Tile, bn: u32) -> Option<Tile> {
        self.groups.locate(tile, bn)
    }

    /// The FP8 kernels have members only in a masked grouped GEMM: without groups, one problem
    /// (a walk with no division by the members, which the 24-register producer of the
    /// three-consumer kernels could not afford).
    #[inline(always)]
    fn ungrouped(self) -> Self {
        crate::gemm::Fp8GemmArgs {
            groups: crate::gemm::Groups::NONE,
            batch: crate::gemm::Members::ONE,
            ..self
        }
    }
}

impl<H: crate::device::half::Half> Problem for HalfGemmArgs<H> {
    #[inline(always)]
    fn mnk(&self) -> (u32, u32, u32) {
        (self.m, self.n, self.k)
    }

    #[inline(always)]
    fn members(&self) -> u32 {
        self.batch.count
    }

    #[inline(always)]
    fn member(self, tile: Tile) -> Self {
        let args = self.of_member(tile.member);
        if self.groups.clips() {
            // Masked: the member's columns end at its count.
            let count = unsafe { self.groups.columns(tile.member) };
            HalfGemmArgs {
                n: args.n.min(count),
                ..args
            }
        } else {
            args
        }
    }

    #[inline(always)]
    fn groups(&self) -> crate::gemm::Groups {
        self.groups
    }

    #[inline(always)]
    fn locate(&self, tile: Tile, bn: u32) -> Option<Tile> {
        self.groups.locate(tile, bn)
    }

    #[inline(always)]
    fn ungrouped(self) -> Self {
        HalfGemmArgs {
            groups: crate::gemm::Groups::NONE,
            ..self
        }
    }
}

/// In the `impl Kernel` of a kernel that wraps `$inner` and keeps its tile, ring, pool and
/// roles (a test's planted bug, say), so that the registry's launch of `$inner` fits it:
/// `$inner`'s sizes and roles, as they are (a kernel whose producer warpgroup assists also
/// forwards [`Kernel::assist`]).
#[macro_export]
macro_rules! sizes_of {
    ($inner:ty) => {
        const BM: u32 = <$inner as $crate::pipeline::Kernel>::BM;
        const BN: u32 = <$inner as $crate::pipeline::Kernel>::BN;
        const BK: u32 = <$inner as $crate::pipeline::Kernel>::BK;
        const STAGES: u32 = <$inner as $crate::pipeline::Kernel>::STAGES;
        const STAGE_BYTES: u32 = <$inner as $crate::pipeline::Kernel>::STAGE_BYTES;
        const LOADED_BYTES: u32 = <$inner as $crate::pipeline::Kernel>::LOADED_BYTES;
        const EXTRA_BYTES: u32 = <$inner as $crate::pipeline::Kernel>::EXTRA_BYTES;
        const CONSUMERS: u32 = <$inner as $crate::pipeline::Kernel>::CONSUMERS;
        const CLUSTER: (u32, u32) = <$inner as $crate::pipeline::Kernel>::CLUSTER;
        const ASSISTS: bool = <$inner as $crate::pipeline::Kernel>::ASSISTS;
        const DYNAMIC: bool = <$inner as $crate::pipeline::Kernel>::DYNAMIC;
        const TENSOR_MAPS: usize = <$inner as $crate::pipeline::Kernel>::TENSOR_MAPS;
    };
}

/// The registers each consumer thread can take once the producer warpgroup kept `producer`:
/// what the block holds at launch shared out, in `setmaxnreg`'s steps of 8, at most 232 (the
/// Hopper kernels' accumulators and addresses; more would only lengthen the launch). The block
/// holds `threads × r`, `r` the most registers per thread that fit 65 536 in steps of 8 (168
/// for 384 threads: 64 512, not 65 536), and `setmaxnreg.inc` waits until the registers it asks
/// for have been given back by a `.dec`: ask for more than the block holds and the consumers
/// wait forever. (A producer at 48 beside two consumers at 232 did so on the H100: 1 024
/// registers short, every kernel hung.)
pub const fn consumer_registers(consumers: u32, producer: u32) -> u32 {
    let threads = WARPGROUP * (1 + consumers);
    let per_thread = 65_536 / threads;
    let held = (per_thread - per_thread % 8) * threads;
    let share = (held - WARPGROUP * producer) / (WARPGROUP * consumers);
    let share = share - share % 8;
    if share < 232 {
        share
    } else {
        232
    }
}

// The shares the kernels launch with: 2 × 128 × 232 + 128 × 40 = 64 512 = 384 × 168 and
// 3 × 128 × 160 + 128 × 24 within 512 × 128; the narrow kernels' 2 × 128 × 224 + 128 × 56.
const _: () = assert!(
    consumer_registers(2, 40) == 232
        && consumer_registers(3, 24) == 160
        && consumer_registers(2, 56) == 224
);

/// A kernel on the skeleton: a lesson implements it on a zero-sized type whose generic
/// parameters are its configuration.
pub trait Kernel: Copy {
    type Args: Problem;
    /// The block's tile of C (`BM` rows of m, `BN` columns of n) and the slice of k per stage.
    const BM: u32;
    const BN: u32;
    const BK: u32;
    const STAGES: u32;
    /// Bytes of one stage in the pool.
    const STAGE_BYTES: u32;
    /// Bytes the copies deliver into one stage of this block (its *full* phase's tx-count), the
    /// bytes multicast by the other blocks of the cluster included.
    const LOADED_BYTES: u32;
    /// Consumer warpgroups (warpgroup 0 produces).
    const CONSUMERS: u32 = 2;
    const SCHEDULE: Schedule = Schedule::Cooperative;
    /// Blocks per cluster: tiles down m, tiles along n. Every block of a cluster receives every
    /// slice of the shared operand, so each consumer releases each stage to all of them.
    const CLUSTER: (u32, u32) = (1, 1);
    /// Registers per thread after `setmaxnreg` (the block gets 65 536 / threads at launch, in
    /// steps of 8): the producer keeps 40 (24, the least `setmaxnreg` allows, beside three
    /// consumers), and the consumers share the rest ([`consumer_registers`]): 232 for two, 160
    /// for three.
    const PRODUCER_REGISTERS: u32 = if Self::CONSUMERS > 2 { 24 } else { 40 };
    const CONSUMER_REGISTERS: u32 = consumer_registers(Self::CONSUMERS, Self::PRODUCER_REGISTERS);
    /// Whether the producer warpgroup's other threads work on each slice ([`Kernel::assist`]):
    /// each stage then has a third barrier, *ready*, which they arrive on.
    const ASSISTS: bool = false;
    /// Whether the walk goes over the tiles of every member of a strided batch
    /// ([`Problem::members`]); without it the kernel computes one problem, and its walk needs no
    /// division to find a tile's member (with which `wgmma-stream-k` spilled).
    const BATCHES: bool = true;
    /// Whether the walk runs a grouped GEMM ([`crate::gemm::Groups`]), asking
    /// [`Problem::locate`] where each tile lies. Not with clusters along n (the blocks of a
    /// cluster share an operand, but neighbouring tiles along n may be of different groups, or
    /// one computed and one skipped; a cluster along m is one column of tiles), split-k or
    /// stream-k; and the kernel's epilogue must write no column past
    /// the `n` of [`Problem::member`]'s arguments, which a masked group's count lowers.
    const GROUPS: bool = false;
    /// With [`Kernel::GROUPS`], in the masked layout: whether the walk packs the tiles below
    /// the members' counts ahead of the capacity's empty ones ([`Tiles::masked_tile`]), so
    /// that the blocks share the tokens there are, rather than walking the capacity's tiles
    /// and skipping the empty ones. In every other layout the same walk, each member's count
    /// n, gives the plain walk's tiles. Kernels of their own (`wgmma-fp8-block:11`): as a
    /// run-time choice beside the plain walk in the same kernel it cost the dense path 1–4%
    /// (H200), the choice's branch making ptxas move the ring's stage and phase out of
    /// uniform registers.
    const PACKED_WALK: bool = false;
    /// Whether the walk takes its units from a tile queue ([`queue`]) rather than in fixed
    /// shares: the host writes the address of a zeroed u32 counter after the kernel's
    /// [`Kernel::TENSOR_MAPS`] tensor maps, and every launch leaves it zeroed. Not with split-k
    /// or stream-k, whose units are fixed. Kernels of their own (`wgmma-queue`), so that the
    /// kernels with a static walk keep their code: a run-time choice between the two walks cost
    /// them 1.5–4% on the H100 and made ptxas spill in 21 of them.
    const DYNAMIC: bool = false;
    /// Tensor maps the host writes at `maps` (A's, B's, and C's for a TMA-store epilogue),
    /// before what a kernel reads after them (a tile queue's counter, stream-k's scratch).
    const TENSOR_MAPS: usize = 2;
    /// Bytes of shared memory after the stages and barriers (an epilogue's staging tile).
    const EXTRA_BYTES: u32 = 0;
    /// The tile order: groups of this many unit-columns ([`schedule`]).
    const RASTER_GROUP: u32 = 8;
    /// Split-k: row `y` of the grid computes part `y` of k of every tile (`gridDim.y` parts,
    /// each at least one slice: the host sees to it), for shapes with fewer tiles than
    /// multiprocessors.
    const SPLIT_K: bool = false;
    /// Stream-k ([`schedule::StreamK`]): the blocks of a one-row grid share the iterations of
    /// all tiles evenly, and a tile split between blocks is finished by the last of them (the
    /// kernel's epilogue does it: [`Work::whole`] says when). Not with clusters or split-k.
    const STREAM_K: bool = false;
    /// With [`Kernel::STREAM_K`], where the tiles are at most the blocks: each tile in the same
    /// number of equal parts, one block each ([`StreamK::equal_parts`]), rather than every
    /// block an equal share of all iterations, crossing tiles.
    const EQUAL_PARTS: bool = false;
    /// Bytes of weights (A: no kernel of a chain writes them) in one slice of a tile, which
    /// [`Kernel::prefetch`] brings into L2 before the kernel waits for the one ahead of it
    /// ([`crate::device::grid`]); 0 (the default) for a kernel that prefetches nothing.
    const PREFETCHED_SLICE_BYTES: u32 = 0;

    /// Threads in a block.
    const THREADS: u32 = WARPGROUP * (1 + Self::CONSUMERS);
    /// Barriers per stage.
    const KINDS: u32 = if Self::ASSISTS { 3 } else { 2 };
    /// Pool objects of 8 bytes after the stages' barriers: ping-pong's ordering barriers, then
    /// the tile queue's barriers and slots.
    const EXTRA_BARRIERS: u32 = ORDER_BARRIERS + if Self::DYNAMIC { queue::OBJECTS } else { 0 };
    /// The dynamic shared memory the kernel needs.
    const POOL_BYTES: u32 = Stages::pool_bytes(
        Self::STAGES,
        Self::STAGE_BYTES,
        Self::KINDS,
        Self::EXTRA_BARRIERS,
        Self::EXTRA_BYTES,
    );

    /// The producer thread: start the copies of slice `slice` of tile `tile` into stage `s`,
    /// completing on `stages.full(s)` (the tile's member is the layer of the tensor maps).
    ///
    /// # Safety
    /// `maps` points to the kernel's tensor maps.
    unsafe fn load(self, maps: *const TensorMap, stages: Stages, s: u32, tile: Tile, slice: u32);

    /// [`Kernel::load`] for a kernel whose copies also read its arguments (a bulk copy of each
    /// slice's scales beside its operands: `wgmma-fp8-block:8`).
    ///
    /// # Safety
    /// As [`Kernel::load`]; `args` describe valid matrices.
    #[inline(always)]
    unsafe fn load_with(
        self,
        _args: &Self::Args,
        maps: *const TensorMap,
        stages: Stages,
        s: u32,
        tile: Tile,
        slice: u32,
    ) {
        unsafe { self.load(maps, stages, s, tile, slice) }
    }

    /// The producer thread, before the kernel waits for the kernel ahead of it: ask the TMA
    /// engine to bring A's box of slice `slice` of `tile` into L2 (a hint: no stage, no
    /// barrier). Only A, which a programmatic dependent launch's contract leaves unwritten by
    /// the kernel ahead (the weights); never B or C. Nothing by default.
    ///
    /// # Safety
    /// As [`Kernel::load`].
    #[inline(always)]
    unsafe fn prefetch(self, _maps: *const TensorMap, _tile: Tile, _slice: u32) {}

    /// A consumer thread: the mainloop over the slices of `work`, and its epilogue.
    ///
    /// # Safety
    /// `args` describe valid matrices, `maps` the kernel's tensor maps.
    unsafe fn consume(
        self,
        args: Self::Args,
        maps: *const TensorMap,
        consumer: &mut Consumer,
        work: Work,
    );

    /// A consumer thread after its last tile: an epilogue that left work in flight (TMA stores
    /// reading shared memory) waits for it here. Nothing by default.
    fn drain(self, _consumer: &Consumer) {}

    /// The arguments the consumers read for `tile`: [`Problem::member`]'s (its member's C, a
    /// grouped GEMM's columns and, in FP8, block scales), unless the kernel's scales lie
    /// otherwise (`wgmma-fp8`'s, one per tensor: [`crate::gemm::Fp8GemmArgs::of_tile_per_tensor`]).
    #[inline(always)]
    fn member_args(self, args: Self::Args, tile: Tile) -> Self::Args {
        args.member(tile)
    }

    /// The producer warpgroup's other threads (`thread` 0..96), on the `slices` slices of
    /// `tile`, stage after stage from the ring's current one (3xTF32 splits B there, scaled by
    /// its columns' ranges, read through `maps` once a tile). Advances the ring past them.
    ///
    /// # Safety
    /// As [`Kernel::consume`].
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn assist(
        self,
        _args: Self::Args,
        _maps: *const TensorMap,
        _stages: Stages,
        ring: &mut Ring,
        _thread: u32,
        _tile: Tile,
        slices: u32,
    ) {
        for _ in 0..slices {
            ring.advance();
        }
    }
}

/// Ping-pong's two ordering barriers, after the stages' (one per consumer warpgroup).
const ORDER_BARRIERS: u32 = 2;

/// A consumer thread's view of the pipeline: its place in the ring and in its warpgroup.
pub struct Consumer {
    pub stages: Stages,
    pub ring: Ring,
    /// The consumer warpgroup (0-based) and the thread in it (0..128).
    pub warpgroup: u32,
    pub thread: u32,
    /// Blocks in the cluster (each stage is released to every one of them), and this block's
    /// rank in it.
    cluster_size: u32,
    rank: u32,
    /// Ping-pong: the turns this warpgroup has taken.
    turns: u32,
}

impl Consumer {
    /// The consumer thread `tid` of the block (warpgroups 1 and up), at the start of the ring.
    #[inline(always)]
    fn new(stages: Stages, tid: u32, cluster_size: u32, rank: u32) -> Self {
        Consumer {
            stages,
            ring: stages.ring(),
            warpgroup: tid / WARPGROUP - 1,
            thread: tid % WARPGROUP,
            cluster_size,
            rank,
            turns: 0,
        }
    }

    /// Waits until the current stage holds its slice.
    #[inline(always)]
    pub fn wait_full(&self) {
        self.stages.full(self.ring.stage).wait(self.ring.phase);
    }

    /// Orders the ordinary loads this warp's lanes made from the stages (the TF32 kernels' A
    /// fragments, the block-scaled kernels' scales) before the warp's next release, which lane 0
    /// alone makes for the warp: `bar.warp.sync`, the one warp-wide operation that orders
    /// memory. Without it nothing orders lanes 1–31's loads before the producer's next copy
    /// into the stage: a `wgmma.wait_group` or a shuffle waits for the whole warp and orders no
    /// memory access. Kernels that read their stages only through `wgmma` need none. (Found by
    /// compute-sanitizer's racecheck on the H200 and, since warp-wide operations other than
    /// `bar.warp.sync` no longer order memory in it, by the emulator.)
    #[inline(always)]
    pub fn finish_loads(&self) {
        sync_warp();
    }

    /// [`Consumer::release`] in a kernel without clusters: lane 0 of each warp arrives on this
    /// block's barrier. The general release keeps a run-time rank (`%cluster_ctarank`, 0 here),
    /// so each release holds both arrivals behind a vote: five instructions per slice more in
    /// `wgmma-fp8-block:9`. (Folded into [`Consumer::release`] for every kernel, the same code
    /// made ptxas serialize the `wgmma`s of the 16-bit stream-k, split-k and narrow kernels,
    /// C7515.)
    #[inline(always)]
    pub fn release_in_block(&self, s: u32) {
        if self.thread.is_multiple_of(WARP_SIZE) {
            self.stages.empty(s).arrive();
        }
    }

    /// Gives stage `s` back to the producer of every block that writes into it: one arrival per
    /// consumer warp and block, once the warp's `wgmma`s reading the stage have retired. Lane `r`
    /// arrives on block `r`'s barrier (its own through a local arrive), so that the arrivals go
    /// out together.
    #[inline(always)]
    pub fn release(&self, s: u32) {
        let lane = self.thread % WARP_SIZE;
        if lane < self.cluster_size {
            let empty = self.stages.empty(s);
            if lane == self.rank {
                empty.arrive();
            } else {
                empty.arrive_cluster(lane);
            }
        }
    }

    /// The mainloop's handshakes with one `wgmma` group in flight (CUTLASS's `K_PIPE_MMAS =
    /// 1`), for a kernel whose slice is one group: for each of `slices` slices, wait for its
    /// stage, `issue(stage, slice)` its `wgmma`s (at the stage's shared address) between the
    /// fence and the commit, then wait for the *previous* slice's group and give its stage
    /// back while the tensor cores run this one. Returns once every group has retired and
    /// every stage is released: the caller fences its accumulators and reads them.
    #[inline(always)]
    pub fn mainloop(&mut self, slices: u32, mut issue: impl FnMut(u32, u32)) {
        let mut previous = self.ring.stage;
        for slice in 0..slices {
            self.wait_full();
            let stage = crate::device::pool_address(self.stages.stage(self.ring.stage));
            wgmma::fence();
            issue(stage, slice);
            wgmma::commit_group();
            wgmma::wait_group::<1>();
            if slice > 0 {
                self.release(previous);
            }
            previous = self.ring.stage;
            self.ring.advance();
        }
        wgmma::wait_group::<0>();
        self.release(previous);
    }

    /// Takes each of `slices` stages and gives it back unread: a warpgroup with nothing of the
    /// tile to compute (a swapped tile's second 64 tokens past n) keeps its place in the ring,
    /// whose stages the producer fills for the whole tile.
    #[inline(always)]
    pub fn pass_over(&mut self, slices: u32) {
        for _ in 0..slices {
            self.wait_full();
            self.release(self.ring.stage);
            self.ring.advance();
        }
    }

    /// The ordering barrier of ping-pong consumer warpgroup `w`.
    #[inline(always)]
    fn order(&self, w: u32) -> MBarrier {
        self.stages.extra_barrier(w)
    }

    /// Ping-pong: waits for this warpgroup's next turn (CUTLASS's `OrderedSequenceBarrier`). The
    /// two warpgroups' turns alternate, warpgroup 0 first: mainloop, then epilogue, per tile, so
    /// that one's epilogue runs while the other's `wgmma`s keep the tensor cores busy, and the
    /// two never run their epilogues (which share the staging buffers) at the same time.
    #[inline(always)]
    pub fn wait_turn(&mut self) {
        // Warpgroup 0's first wait falls through: the "previous" phase of a fresh barrier counts
        // as complete. Warpgroup 1's first wait is for phase 0, completed by warpgroup 0.
        let parity = (self.turns & 1) ^ (self.warpgroup == 0) as u32;
        self.order(self.warpgroup).wait(parity);
        self.turns += 1;
    }

    /// Ping-pong: hands the turn to the other warpgroup (one arrival per warp).
    #[inline(always)]
    pub fn pass_turn(&self) {
        if self.thread.is_multiple_of(WARP_SIZE) {
            self.order(self.warpgroup ^ 1).arrive();
        }
    }
}

/// Every unit's work but its tile: the whole of k, or with split-k this grid row's part of
/// it (as even as whole slices go).
#[inline(always)]
fn whole_tile<K: Kernel>(slices: u32) -> Work {
    let (split, parts) = if K::SPLIT_K {
        (block_idx_y(), grid_dim_y())
    } else {
        (0, 1)
    };
    let first_slice = split * slices / parts;
    Work {
        tile: Tile::of_member(0, 0, 0),
        split,
        parts,
        first_slice,
        slices: (split + 1) * slices / parts - first_slice,
        slab0: 0,
        unit: 0,
    }
}

/// A block's persistent walk over the tiles, a unit of work each.
#[derive(Clone, Copy)]
struct TileWorks {
    walk: Walk,
    tiles: Tiles,
    rank: u32,
    /// Every unit's work but its tile.
    whole: Work,
}

impl Iterator for TileWorks {
    type Item = Work;

    #[inline(always)]
    fn next(&mut self) -> Option<Work> {
        // (`unit` stays 0: a whole tile has no counter to arrive on.)
        self.walk.next().map(|unit| Work {
            tile: self.tiles.tile(unit, self.rank),
            ..self.whole
        })
    }
}

/// A stream-k block's work: its data-parallel tiles, then its streamed segments.
#[derive(Clone, Copy)]
struct StreamWorks {
    tiles: TileWorks,
    stream: StreamK,
}

impl Iterator for StreamWorks {
    type Item = Work;

    #[inline(always)]
    fn next(&mut self) -> Option<Work> {
        if let Some(work) = self.tiles.next() {
            return Some(work);
        }
        let s = self.stream.next()?;
        Some(Work {
            tile: self.tiles.tiles.tile(s.tile, 0),
            split: s.part,
            parts: s.parts,
            first_slice: s.first_slice,
            slices: s.slices,
            slab0: s.slab0,
            unit: s.tile,
        })
    }
}

/// The kernel: barriers, roles, the producer's loop and the consumers' tile loop.
///
/// # Safety
/// `args` must describe valid device matrices and `maps` point to the tensor maps the kernel's
/// registry row describes; launch with `K::THREADS` threads, `K::POOL_BYTES` of dynamic shared
/// memory, a grid that is a multiple of the cluster and at most one block per multiprocessor.
#[inline(always)]
pub unsafe fn run<K: Kernel>(kernel: K, args: K::Args, maps: *const TensorMap) {
    let args = if K::GROUPS { args } else { args.ungrouped() };
    let stages = Stages::new(K::STAGES, K::STAGE_BYTES, K::KINDS, K::EXTRA_BARRIERS);
    let cluster_size = K::CLUSTER.0 * K::CLUSTER.1;
    // The warps that read each stage: all consumers' (cooperative), or one warpgroup's.
    let consumer_warps = match K::SCHEDULE {
        Schedule::Cooperative => K::CONSUMERS * WARPGROUP / WARP_SIZE,
        Schedule::PingPong => WARPGROUP / WARP_SIZE,
    };
    let tid = thread_idx_x();
    if tid == 0 {
        for s in 0..K::STAGES {
            stages.full(s).init(1);
            stages.empty(s).init(consumer_warps * cluster_size);
            if K::ASSISTS {
                stages.barrier(2, s).init(WARPGROUP - WARP_SIZE);
            }
        }
        if K::SCHEDULE == Schedule::PingPong {
            for w in 0..ORDER_BARRIERS {
                stages.extra_barrier(w).init(WARPGROUP / WARP_SIZE);
            }
        }
        if K::DYNAMIC {
            // The units' readers in each block: the producer thread, the assisting warps, the
            // consumer warps.
            let assisting = if K::ASSISTS {
                WARPGROUP / WARP_SIZE - 1
            } else {
                0
            };
            let readers = 1 + assisting + K::CONSUMERS * WARPGROUP / WARP_SIZE;
            Queue::new(queue_objects(stages), core::ptr::null_mut()).init(readers, cluster_size);
        }
        fence_mbarrier_init();
    }
    // Every block of the cluster must see every barrier initialised before a peer's copy or
    // arrival reaches it.
    if cluster_size > 1 {
        cluster::sync();
    } else {
        sync_threads();
    }

    // Stream-k's kernels: no split-k, no cluster, cooperative, no assisting threads
    // (`stream_k_roles` has neither ping-pong's turns nor the assists).
    const {
        assert!(
            !K::STREAM_K
                || (!K::SPLIT_K
                    && K::CLUSTER.0 * K::CLUSTER.1 == 1
                    && !K::ASSISTS
                    && matches!(K::SCHEDULE, Schedule::Cooperative))
        )
    };
    // The tile queue's kernels: whole tiles (the queue hands out tiles, not parts of them).
    const { assert!(!K::DYNAMIC || (!K::SPLIT_K && !K::STREAM_K)) };
    if K::STREAM_K {
        // The data-parallel tiles, then this block's streamed segments: each role makes its
        // own walk, after it has set its registers.
        let works = || {
            let (tiles, slices) = tiles_of::<K>(&args);
            let (block, blocks, units) = (cluster::id(), cluster::count(), tiles.units());
            let (data_parallel, stream) = if K::EQUAL_PARTS {
                StreamK::equal_parts(block, blocks, units, slices)
            } else {
                StreamK::hybrid(block, blocks, units, slices)
            };
            StreamWorks {
                tiles: tile_works::<K>(data_parallel, tiles, slices),
                stream,
            }
        };
        // (Each role waits for the kernel ahead after it has set its registers: before the
        // roles, the wait cost `wgmma-fp8-block:10` 16 more bytes of stack and 24 of spills.)
        unsafe { stream_k_roles(kernel, args, maps, stages, cluster_size, works) };
    } else {
        // Every role walks the same tiles, in the same order: the persistent walk, each tile
        // over all of k or this grid row's part of it (split-k).
        let (tiles, slices) = tiles_of::<K>(&args);
        let whole = whole_tile::<K>(slices);
        let walk = Walk::new(cluster::id(), cluster::count(), tiles.units());
        let rank = cluster::rank();
        // A grouped walk finds its tiles in a table another kernel may write, a dynamic one
        // from a counter: those wait before they know their first tile, and prefetch nothing.
        let first = if K::PREFETCHED_SLICE_BYTES > 0 && !K::GROUPS && !K::DYNAMIC {
            tile_works::<K>(walk, tiles, slices).next()
        } else {
            None
        };
        unsafe { start_after_prior_grids(kernel, maps, first) };
        // The roles (CUTLASS's warp-specialised persistent kernel), each walking `$walk`'s units
        // as its kind of reader. Written once and expanded for each walk, so that each is
        // concrete code: with the walk a type parameter, the compiler no longer inlined the
        // static walk's steps before LLVM, and the static kernels' code changed (ptxas spilled
        // in `wgmma-fp8-block:3`).
        macro_rules! roles {
            ($walk:ident) => {
        // ANCHOR: core_loop
        let warpgroup = tid / WARPGROUP;
        if warpgroup == 0 {
            wgmma::setmaxnreg_dec(K::PRODUCER_REGISTERS);
            if tid == 0 {
                let mut ring = stages.ring();
                let reader = if rank == 0 {
                    Reader::Leader
                } else {
                    Reader::Lone
                };
                let mut cursor = MaskedCursor::START;
                for unit in $walk.read_as(reader) {
                    let Some(tile) = locate::<K>(&args, tiles, (unit, &mut cursor), rank, reader)
                    else {
                        continue;
                    };
                    for slice in whole.first_slice..whole.first_slice + whole.slices {
                        unsafe { produce(kernel, &args, maps, stages, &mut ring, tile, slice) };
                    }
                }
            } else if K::ASSISTS && tid >= WARP_SIZE {
                let mut ring = stages.ring();
                let mut cursor = MaskedCursor::START;
                for unit in $walk.read_as(Reader::Warp) {
                    let at = (unit, &mut cursor);
                    let Some(tile) = locate::<K>(&args, tiles, at, rank, Reader::Warp) else {
                        continue;
                    };
                    let thread = tid - WARP_SIZE;
                    unsafe {
                        kernel.assist(args, maps, stages, &mut ring, thread, tile, whole.slices)
                    };
                }
            }
        } else {
            wgmma::setmaxnreg_inc(K::CONSUMER_REGISTERS);
            let mut consumer = Consumer::new(stages, tid, cluster_size, rank);
            // Cooperative: every consumer warpgroup on every unit. Ping-pong: the block's units
            // alternate between the two, and each skips the other's slices in the ring.
            let mut mine = consumer.warpgroup == 0 || K::SCHEDULE == Schedule::Cooperative;
            let mut units = 0;
            let mut cursor = MaskedCursor::START;
            for unit in $walk.read_as(Reader::Warp) {
                let at = (unit, &mut cursor);
                let Some(tile) = locate::<K>(&args, tiles, at, rank, Reader::Warp) else {
                    continue;
                };
                if mine {
                    let work = Work {
                        tile,
                        unit,
                        ..whole
                    };
                    let args = kernel.member_args(args, tile);
                    unsafe { kernel.consume(args, maps, &mut consumer, work) };
                } else {
                    consumer.ring.skip(whole.slices);
                }
                if K::SCHEDULE == Schedule::PingPong {
                    mine = !mine;
                }
                units += 1;
            }
            // With an odd number of units, warpgroup 0 has the last one, and its epilogue waits for
            // a turn that warpgroup 1 must still hand over.
            if K::SCHEDULE == Schedule::PingPong && consumer.warpgroup == 1 && units % 2 == 1 {
                consumer.wait_turn();
                consumer.pass_turn();
            }
            kernel.drain(&consumer);
        }
        // ANCHOR_END: core_loop
            };
        }
        // ANCHOR: queue_walk
        if K::DYNAMIC {
            // The queue's counter: its address follows the tensor maps.
            let units = unsafe { Units::start::<K>(walk, stages, maps, cluster_size) };
            roles!(units);
        } else {
            roles!(walk);
        }
        // ANCHOR_END: queue_walk
    }
    // No block may leave while a peer can still arrive on its barriers or multicast into it.
    if cluster_size > 1 {
        cluster::sync();
    }
}

/// How the roles of [`run`] walk the units: each role asks for the walk as its kind of
/// [`Reader`], and every role of every block of the cluster gets the same units in the same
/// order.
trait UnitWalk: Iterator<Item = u32> + Copy {
    /// The walk as `reader` reads it.
    fn read_as(self, reader: Reader) -> Self;
}

/// The static walk: every role walks the cluster's fixed share itself.
impl UnitWalk for Walk {
    #[inline(always)]
    fn read_as(self, _reader: Reader) -> Self {
        self
    }
}

/// The tile queue's walk ([`queue`]), for the kernels that set [`Kernel::DYNAMIC`]: the leader
/// keeps its state in the static walk's [`Walk`] (its first unit, its step, its end).
#[derive(Clone, Copy)]
struct Units {
    walk: Walk,
    queue: Queue,
    reader: Reader,
    cluster_size: u32,
}

impl Units {
    /// The queue's walk, starting as the static `walk` does.
    ///
    /// # Safety
    /// The host wrote the address of the queue's counter after the kernel's tensor maps at `maps`.
    #[inline(always)]
    unsafe fn start<K: Kernel>(
        walk: Walk,
        stages: Stages,
        maps: *const TensorMap,
        cluster_size: u32,
    ) -> Self {
        // The counter's address, written by the host after the tensor maps.
        let counter = unsafe { *(maps.wrapping_add(K::TENSOR_MAPS) as *const *mut u32) };
        Units {
            walk,
            queue: Queue::new(queue_objects(stages), counter),
            reader: Reader::Warp,
            cluster_size,
        }
    }
}

impl UnitWalk for Units {
    #[inline(always)]
    fn read_as(self, reader: Reader) -> Self {
        Units { reader, ..self }
    }
}

impl Iterator for Units {
    type Item = u32;

    #[inline(always)]
    fn next(&mut self) -> Option<u32> {
        self.queue
            .next(&mut self.walk, self.reader, self.cluster_size)
    }
}

/// The tile queue's pool objects: after ping-pong's ordering barriers.
#[inline(always)]
fn queue_objects(stages: Stages) -> MBarrier {
    stages.extra_barrier(ORDER_BARRIERS)
}

/// Where a tile of the walk lies ([`Problem::locate`]) in a kernel that runs grouped GEMMs; in
/// any other, where the walk put it.
///
/// Read by a whole warp (`Reader::Warp`), whether the tile is there is put to a vote of the
/// lanes ([`warp_uniform_condition`]) and its group taken as lane 0 found it ([`warp_uniform`]).
/// Every lane loads the same word of the group table, but ptxas cannot know that: it took the
/// branch past a missing tile as divergent, and moved everything carried from tile to tile (the
/// ring's stage and phase, the descriptors) out of uniform registers. In `wgmma-fp8-block:9`
/// walking groups, that cost 19 instructions per slice (113 → 132) and 8–13% of its time on
/// one GEMM; the broadcast alone did not help.
///
/// With [`Kernel::PACKED_WALK`], in the masked layout the walk's units are not the capacity's
/// tiles: the tiles below each member's count come first, packed ([`Tiles::masked_tile`]), and
/// the units past them are skipped, so the blocks share the tokens there are instead of each
/// taking its share of a capacity whose empty tiles cost nothing (DeepGEMM's masked scheduler
/// counts its blocks from the counts the same way). A warp then takes the tile's coordinates,
/// read from the counts, as lane 0 found them, as it takes a group.
#[inline(always)]
fn locate<K: Kernel>(
    args: &K::Args,
    tiles: Tiles,
    (unit, cursor): (u32, &mut MaskedCursor),
    rank: u32,
    reader: Reader,
) -> Option<Tile> {
    // A cluster along m is one column of tiles: its blocks are of the same group and skip the
    // same tiles. Along n they may not be.
    const { assert!(!K::GROUPS || (K::CLUSTER.1 == 1 && !K::SPLIT_K && !K::STREAM_K)) };
    if !K::GROUPS {
        return Some(tiles.tile(unit, rank));
    }
    if K::PACKED_WALK {
        // One walk for every layout: with a count of n per member outside the masked layout
        // it is the plain walk's tiles, and the contiguous layout's groups are found as
        // always. A branch between this walk and the plain one, on the layout (a kernel
        // parameter, voted on or not), was divergent to ptxas: `:11`'s loop per two slices
        // grew from 230 instructions to 260, the ring's stage and phase out of uniform
        // registers.
        let found = tiles
            .masked_tile(cursor, unit, rank, K::BN, |member| args.columns(member))
            .and_then(|tile| args.locate(tile, K::BN));
        if reader != Reader::Warp {
            return found;
        }
        let tile = found.unwrap_or(Tile::of_member(0, 0, 0));
        let tile = Tile {
            row: warp_uniform(tile.row),
            col: warp_uniform(tile.col),
            member: warp_uniform(tile.member),
            group: warp_uniform(tile.group),
        };
        return warp_uniform_condition(found.is_some()).then_some(tile);
    }
    let tile = tiles.tile(unit, rank);
    let found = args.locate(tile, K::BN);
    if reader != Reader::Warp {
        return found;
    }
    let group = warp_uniform(found.map_or(0, |t| t.group));
    warp_uniform_condition(found.is_some()).then_some(Tile { group, ..tile })
}

/// The problem's tiles and its slices of k. At least one slice (the host refuses k = 0): the
/// consumers' loops then run at least once, and no path around them joins the path out of them
/// before their last `wgmma.wait_group` (ptxas would see accumulators defined while a group may
/// be in flight, and serialize every `wgmma`: C7515).
#[inline(always)]
fn tiles_of<K: Kernel>(args: &K::Args) -> (Tiles, u32) {
    let (m, n, k) = args.mnk();
    let sizes = (m, n, if K::BATCHES { args.members() } else { 1 });
    let tiles = Tiles::new(sizes, K::BM, K::BN, K::CLUSTER, K::RASTER_GROUP);
    (tiles, k.div_ceil(K::BK).max(1))
}

/// The walk's tiles as units of work of this block (its rank in the cluster).
#[inline(always)]
fn tile_works<K: Kernel>(walk: Walk, tiles: Tiles, slices: u32) -> TileWorks {
    TileWorks {
        walk,
        tiles,
        rank: cluster::rank(),
        whole: whole_tile::<K>(slices),
    }
}

/// The roles of a stream-k kernel: [`run`]'s loops, over units of [`Work`] (`works()` gives
/// them, in the same order every time) rather than tile numbers. (The kernels without stream-k
/// keep their loops over tile numbers: walking an iterator of `Work` made ptxas spill the
/// 24-register producer of the three-consumer kernels, `wgmma-fp8:5` and `wgmma-fp8-block:7`.)
///
/// # Safety
/// As [`run`].
#[inline(always)]
unsafe fn stream_k_roles<K: Kernel, W: Iterator<Item = Work>>(
    kernel: K,
    args: K::Args,
    maps: *const TensorMap,
    stages: Stages,
    cluster_size: u32,
    works: impl Fn() -> W,
) {
    let tid = thread_idx_x();
    let warpgroup = tid / WARPGROUP;
    if warpgroup == 0 {
        wgmma::setmaxnreg_dec(K::PRODUCER_REGISTERS);
        if tid == 0 {
            let first = if K::PREFETCHED_SLICE_BYTES > 0 {
                works().next()
            } else {
                None
            };
            // The producer warpgroup's other threads touch no global memory.
            unsafe { start_after_prior_grids(kernel, maps, first) };
            let mut ring = stages.ring();
            for work in works() {
                for slice in work.first_slice..work.first_slice + work.slices {
                    unsafe { produce(kernel, &args, maps, stages, &mut ring, work.tile, slice) };
                }
            }
        }
    } else {
        wgmma::setmaxnreg_inc(K::CONSUMER_REGISTERS);
        grid::wait_for_prior_grids();
        let mut consumer = Consumer::new(stages, tid, cluster_size, cluster::rank());
        for work in works() {
            let args = kernel.member_args(args, work.tile);
            unsafe { kernel.consume(args, maps, &mut consumer, work) };
        }
        kernel.drain(&consumer);
    }
}

// ANCHOR: early_start
/// Bytes of weights each block prefetches into L2 before it waits for the kernel ahead of it:
/// 96 KiB a block is 12.4 MB over 132 blocks, a quarter of the H100's L2, brought in while the
/// kernel ahead finishes its last tiles.
pub const PREFETCH_BYTES: u32 = 96 * 1024;

/// The start of every thread after the barriers' initialisation (programmatic dependent
/// launch, [`crate::device::grid`]): the producer thread prefetches the weights of the first
/// slices of the block's `first` unit of work (up to [`PREFETCH_BYTES`]) into L2; then every
/// thread waits for the kernel ahead of this one — no thread has touched global memory
/// before — and one lets the kernel after this one start. Where the launch made no early
/// start, the wait returns at once. (Walking further units for the prefetch cost
/// `wgmma-swap:64` a stack frame: its iterator lived in local memory.)
///
/// # Safety
/// As [`run`].
#[inline(always)]
unsafe fn start_after_prior_grids<K: Kernel>(
    kernel: K,
    maps: *const TensorMap,
    first: Option<Work>,
) {
    let tid = thread_idx_x();
    // (`first` is `None` for the kernels that prefetch nothing; `max(1)`: the division is
    // compiled for them too.)
    if let (0, Some(work)) = (tid, first) {
        let slices = work
            .slices
            .min(PREFETCH_BYTES / K::PREFETCHED_SLICE_BYTES.max(1));
        for slice in work.first_slice..work.first_slice + slices {
            unsafe { kernel.prefetch(maps, work.tile, slice) };
        }
    }
    grid::wait_for_prior_grids();
    if tid == 0 {
        grid::launch_dependents();
    }
}
// ANCHOR_END: early_start

/// The producer thread on one slice: wait until the ring's next stage is free, expect its
/// bytes, start its copies.
///
/// # Safety
/// As [`Kernel::load`].
#[inline(always)]
unsafe fn produce<K: Kernel>(
    kernel: K,
    args: &K::Args,
    maps: *const TensorMap,
    stages: Stages,
    ring: &mut Ring,
    tile: Tile,
    slice: u32,
) {
    let s = ring.stage;
    // On the first pass the "previous" phase counts as complete.
    stages.empty(s).wait(ring.phase ^ 1);
    stages.full(s).arrive_expect_tx(K::LOADED_BYTES);
    unsafe { kernel.load_with(args, maps, stages, s, tile, slice) };
    ring.advance();
}
