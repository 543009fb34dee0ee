//! Epilogues: how a consumer warpgroup's accumulators reach C.
//!
//! The accumulator of a `wgmma.m64nN` is spread over the warpgroup's 128 threads as the
//! fragment table says ([`Accumulator::position`]): lane `L` of warp `w` holds register `i` at
//! row `16w + L/4 + 8·((i >> 1) & 1)`, column `8·(i >> 2) + 2·(L % 4) + (i & 1)`. Registers `i`
//! and `i + 1` (`i` even) are two adjacent columns of one row. The 16-bit kernels compute
//! `Cᵀ = Bᵀ·Aᵀ` ([`crate::variants::wgmma_16bit`]), so an accumulator row is a column of C and
//! an accumulator column a row of C: the pair is two adjacent elements of a column of C, one
//! 4-byte store.
use crate::device::half::Half;
use crate::device::named_barrier;
use crate::device::store;
use crate::device::tma::TensorMap;
use crate::device::wgmma::{fence_proxy_async, Accumulator};
use crate::fused::{Bias, Fused};
use crate::gemm::{scaled, GemmArgs, HalfGemmArgs};

/// Registers [`fuse`] reads C and the bias for between two branches.
const REGISTERS_PER_BLOCK: usize = 16;

/// The fused epilogue ([`crate::fused`]) on a warpgroup's registers before its store: register
/// `i`, at element `at(i)` of C, becomes `act(alpha·acc + beta·C + bias)`, and the store then
/// runs with the arguments returned (alpha 1, beta 0, no epilogue), which leave it as it is.
/// With the amax, the third value returned is the thread's largest |value| within C, which the
/// caller gathers after its store ([`Fused::gather_amax`]: the shuffles' registers, taken
/// while the tile's values still hold theirs, made ptxas spill).
/// Each step is one loop over the registers, its choice (beta or not, which bias, which
/// activation) made once outside it: unrolled, straight-line code, run once a tile. A GEMM
/// without an epilogue skips it on one uniform branch and runs the store it always had.
///
/// (The first version applied the epilogue inside the stores' loops, pair by pair: the
/// branches on the epilogue's word, repeated at each of the 64 pairs' sites, made the TMA-store
/// kernel 7,087 SASS instructions with 1,473 branches, and the GEMM without an epilogue 20–25%
/// slower at 4096 tokens on the H100: `docs/perf-notes.md`.)
///
/// # Safety
/// `args` describes valid matrices; the bias vector as [`Fused::bias_at`] needs it.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
pub unsafe fn fuse<H: Half, const R: usize>(
    args: &HalfGemmArgs<H>,
    mut values: [f32; R],
    at: impl Fn(u32) -> (u32, u32),
) -> (HalfGemmArgs<H>, [f32; R], u32) {
    let size = (args.m, args.n);
    let last = (size.0.saturating_sub(1), size.1.saturating_sub(1));
    let bias = args.fused.bias;
    // Runs of REGISTERS_PER_BLOCK registers, each run's loads in a block of its own (the
    // branches on the word, repeated per run): no more loads are in flight than a run has, or
    // ptxas would hoist all 128 of a transposed tile's and spill. Within a run, registers that
    // share a row of C (or a column) share a load.
    for first in (0..R).step_by(REGISTERS_PER_BLOCK) {
        let run = first..(first + REGISTERS_PER_BLOCK).min(R);
        if args.beta == 0.0 {
            run.clone().for_each(|i| values[i] *= args.alpha);
        } else {
            for i in run.clone() {
                let (row, col) = at(i as u32);
                let old = || {
                    if row < args.m && col < args.n {
                        [unsafe { args.c.load(args.c_at(row, col)) }]
                    } else {
                        [0.0]
                    }
                };
                [values[i]] = scaled(args.alpha, args.beta, [values[i]], old);
            }
        }
        match args.fused.epilogue.bias() {
            Bias::None => {}
            Bias::PerRow => {
                for i in run {
                    let row = at(i as u32).0.min(last.0);
                    values[i] += unsafe { bias.load(row as usize) };
                }
            }
            Bias::PerColumn => {
                for i in run {
                    let col = at(i as u32).1.min(last.1);
                    values[i] += unsafe { bias.load(col as usize) };
                }
            }
        }
    }
    args.fused.epilogue.activate_all(&mut values);
    // Register 0 holds the thread's first row and first column of the tile (the fragment
    // table's offsets are sums of non-negative terms), so each register's test is its constant
    // offset from there against the room left in C: two registers for every test, where
    // `row < m` per register kept a sum live for each (and made ptxas spill in the stream-k
    // and tile-queue kernels).
    let first = at(0);
    let room = (
        args.m.saturating_sub(first.0),
        args.n.saturating_sub(first.1),
    );
    let inside = |i: usize| {
        let (row, col) = at(i as u32);
        row.wrapping_sub(first.0) < room.0 && col.wrapping_sub(first.1) < room.1
    };
    let largest = args.fused.largest_magnitude(&values, inside);
    let stored = HalfGemmArgs {
        alpha: 1.0,
        ..plain(args)
    };
    (stored, values, largest)
}

/// Whether a tile's store needs [`fuse`] first: C to read (`beta ≠ 0`) or a fused epilogue.
/// Otherwise the store runs on [`plain`]'s arguments.
#[inline(always)]
pub fn needs_fuse<H: Half>(args: &HalfGemmArgs<H>) -> bool {
    args.beta != 0.0 || !args.fused.epilogue.is_none()
}

/// `args` for a store that reads no C and fuses nothing: `beta` a zero the compiler sees, so
/// that the store's code holds no load of C and no branch on `beta` between its pairs.
///
/// (With `beta` a run-time value, each pair of the store carried its own branch around some 30
/// instructions that load C: the TMA-store epilogue spread the instructions it executes over
/// 2,500, and in a batch of 2048 × 2048 × 16 bf16 problems, where the epilogue is the kernel,
/// the warps waited for instructions to be fetched, ncu's `no_instruction`, 40% of their time:
/// `docs/perf-notes.md`, 2026-11-28. A nonzero `beta` now goes through [`fuse`], whose loads of C
/// are grouped in runs outside the store.)
#[inline(always)]
pub fn plain<H: Half>(args: &HalfGemmArgs<H>) -> HalfGemmArgs<H> {
    HalfGemmArgs {
        beta: 0.0,
        fused: Fused::none(),
        ..*args
    }
}

/// Writes the 64×N accumulator of one consumer warpgroup, in `Cᵀ` orientation: accumulator row
/// `r` is column `col0 + r` of C, accumulator column `c` row `row0 + c`; `thread` is the
/// thread in its warpgroup (0..128). `alpha·acc + beta·C` in f32, rounded once; what lies past
/// m or n is not written.
///
/// # Safety
/// `args` describes valid matrices.
// The loops index the accumulators with their counters: unrolled, each index is a constant,
// which is what keeps them in registers.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
pub unsafe fn store_transposed<H: Half, const R: usize>(
    args: &HalfGemmArgs<H>,
    acc: &Accumulator<R>,
    row0: u32,
    col0: u32,
    thread: u32,
) {
    let (warp, lane) = (thread / 32, thread % 32);
    if needs_fuse(args) {
        let at = |i| {
            let (r, c) = Accumulator::<R>::position(warp, lane, i);
            (row0 + c, col0 + r)
        };
        let (stored, values, largest) = unsafe { fuse(args, *acc.get(), at) };
        let acc = Accumulator::from_registers(values);
        unsafe { store_transposed_plain(&stored, &acc, row0, col0, thread) };
        return unsafe { args.fused.gather_amax(largest) };
    }
    unsafe { store_transposed_plain(&plain(args), acc, row0, col0, thread) }
}

/// [`store_transposed`] on [`plain`]'s arguments (`alpha·acc`, no C read).
#[allow(clippy::needless_range_loop)]
#[inline(always)]
unsafe fn store_transposed_plain<C: ColumnMajorC, const R: usize>(
    args: &C,
    acc: &Accumulator<R>,
    row0: u32,
    col0: u32,
    thread: u32,
) {
    let values = acc.get();
    let (warp, lane) = (thread / 32, thread % 32);
    // Two flat loops, one chosen per tile, each small enough to be unrolled whole.
    let (m, n) = args.size();
    let whole_pairs = args.c_pairs_ok() && row0 + 2 * R as u32 <= m;
    if whole_pairs {
        for p in 0..R / 2 {
            let i = 2 * p as u32;
            let (r, c) = Accumulator::<R>::position(warp, lane, i);
            let (row, col) = (row0 + c, col0 + r);
            if col < n {
                let pair = [values[2 * p], values[2 * p + 1]];
                unsafe { args.store_c2(args.c_at(row, col), pair) };
            }
        }
    } else {
        for i in 0..R {
            let (r, c) = Accumulator::<R>::position(warp, lane, i as u32);
            let (row, col) = (row0 + c, col0 + r);
            if row < m && col < n {
                unsafe { args.store_c(args.c_at(row, col), values[i]) };
            }
        }
    }
}

/// [`store_transposed`] for f32 C (the TF32 swapped tiles, [`crate::variants::wgmma_swap`]):
/// `alpha·acc + beta·C`, C read only where `beta ≠ 0` (two copies of the store, as
/// [`GemmArgs::split_on_beta`] writes every f32 epilogue). A register pair is two adjacent
/// rows of C, one 8-byte store.
///
/// # Safety
/// `args` describes valid matrices.
#[inline(always)]
pub unsafe fn store_transposed_f32<const R: usize>(
    args: &GemmArgs<f32>,
    acc: &Accumulator<R>,
    row0: u32,
    col0: u32,
    thread: u32,
) {
    args.split_on_beta(|args| unsafe { store_transposed_plain(args, acc, row0, col0, thread) })
}

/// What a register epilogue writes column-major C through, whatever C's type: its size, where
/// an element lies, and `alpha·acc + beta·C` into one element or a pair of adjacent rows.
pub trait ColumnMajorC {
    /// (m, n).
    fn size(&self) -> (u32, u32);
    /// Offset of C(row, col).
    fn c_at(&self, row: u32, col: u32) -> usize;
    /// Whether C can be written in pairs of adjacent rows.
    fn c_pairs_ok(&self) -> bool;
    /// # Safety
    /// `i..i+2` inside C, aligned to the pair.
    unsafe fn store_c2(&self, i: usize, acc: [f32; 2]);
    /// # Safety
    /// `i` inside C.
    unsafe fn store_c(&self, i: usize, acc: f32);
}

impl<H: Half> ColumnMajorC for HalfGemmArgs<H> {
    #[inline(always)]
    fn size(&self) -> (u32, u32) {
        (self.m, self.n)
    }
    #[inline(always)]
    fn c_at(&self, row: u32, col: u32) -> usize {
        HalfGemmArgs::c_at(self, row, col)
    }
    #[inline(always)]
    fn c_pairs_ok(&self) -> bool {
        HalfGemmArgs::c_pairs_ok(self)
    }
    #[inline(always)]
    unsafe fn store_c2(&self, i: usize, acc: [f32; 2]) {
        unsafe { HalfGemmArgs::store_c2(self, i, acc) }
    }
    #[inline(always)]
    unsafe fn store_c(&self, i: usize, acc: f32) {
        unsafe { HalfGemmArgs::store_c(self, i, acc) }
    }
}

impl ColumnMajorC for GemmArgs<f32> {
    #[inline(always)]
    fn size(&self) -> (u32, u32) {
        (self.m, self.n)
    }
    #[inline(always)]
    fn c_at(&self, row: u32, col: u32) -> usize {
        GemmArgs::c_at(self, row, col)
    }
    #[inline(always)]
    fn c_pairs_ok(&self) -> bool {
        GemmArgs::c_pairs_ok(self)
    }
    #[inline(always)]
    unsafe fn store_c2(&self, i: usize, acc: [f32; 2]) {
        unsafe { GemmArgs::store_c2(self, i, acc) }
    }
    #[inline(always)]
    unsafe fn store_c(&self, i: usize, acc: f32) {
        unsafe { GemmArgs::store_c(self, i, acc) }
    }
}

/// Where a consumer warpgroup's TMA-store epilogue stages its tile, boxes of 64 m × 64 n (8 KiB:
/// a 128-byte swizzled row of 64 m per column of n), and the named barrier its 128 threads
/// synchronise on. Either two buffers used in turn by the four subtiles (16 KiB, CUTLASS's
/// subtiled epilogue: four stages of the ring still fit), or four, the whole 256 × 64 (32 KiB,
/// fast.cu's: one barrier pair per tile instead of four, one stage fewer).
#[derive(Clone, Copy)]
pub struct Staging {
    /// Shared address of the first buffer (1024-byte aligned); the others follow.
    pub first: u32,
    /// 2 or 4.
    pub buffers: u32,
    /// The warpgroup's `bar.sync` id (1 + warpgroup: 0 is the block's).
    pub barrier: u32,
}

/// Bytes of one staging buffer: a box of 64 m × 64 n 16-bit values.
pub const STAGING_BOX_BYTES: u32 = 64 * 64 * 2;

/// Writes the 64×256 accumulator of one consumer warpgroup (`Cᵀ` orientation, as
/// [`store_transposed`]) through shared memory and the TMA engine: for each 64 rows of C (four
/// subtiles), the warpgroup packs `alpha·acc + beta·C` into 16-bit pairs and writes them into a
/// staging box with `stmatrix` (four per warp), publishes them to the async proxy, and its
/// thread 0 stores the box with one `cp.async.bulk.tensor` (clipped at C's edges). A buffer is
/// written again only once the store that read it is done reading (thread 0's
/// `wait_group.read`, passed on by the named barrier); the last stores of a tile drain while the
/// next tile's mainloop runs.
///
/// # Safety
/// `args` describes valid matrices, `c_map` points to C's tensor map (boxes of 64 m × 64 n,
/// 128-byte swizzle), `staging` to this warpgroup's buffers.
#[inline(always)]
pub unsafe fn store_through_tma<H: Half>(
    args: &HalfGemmArgs<H>,
    acc: &Accumulator<128>,
    c_map: *const TensorMap,
    row0: u32,
    col0: u32,
    thread: u32,
    staging: Staging,
) {
    if needs_fuse(args) {
        let (warp, lane) = (thread / 32, thread % 32);
        let at = |i| {
            let (r, c) = Accumulator::<128>::position(warp, lane, i);
            (row0 + c, col0 + r)
        };
        let (stored, values, largest) = unsafe { fuse(args, *acc.get(), at) };
        let acc = Accumulator::from_registers(values);
        unsafe { store_through_tma_plain(&stored, &acc, c_map, row0, col0, thread, staging) };
        return unsafe { args.fused.gather_amax(largest) };
    }
    unsafe { store_through_tma_plain(&plain(args), acc, c_map, row0, col0, thread, staging) }
}

/// [`store_through_tma`] on [`plain`]'s arguments (`alpha·acc`, no C read).
#[inline(always)]
unsafe fn store_through_tma_plain<H: Half>(
    args: &HalfGemmArgs<H>,
    acc: &Accumulator<128>,
    c_map: *const TensorMap,
    row0: u32,
    col0: u32,
    thread: u32,
    staging: Staging,
) {
    let at = Subtile {
        c_map,
        row0,
        col0,
        layer: args.batch.member,
        thread,
        staging,
        direct: false,
    };
    // One call per subtile, the subtile a constant: every register index is then a constant
    // without asking the unroller to unroll all 128 pairs at once (if it gives up, the
    // accumulators go to local memory).
    unsafe {
        store_subtile::<H, 0>(args, acc, at);
        store_subtile::<H, 1>(args, acc, at);
        store_subtile::<H, 2>(args, acc, at);
        store_subtile::<H, 3>(args, acc, at);
    }
}

/// Where a warpgroup's TMA-store epilogue writes, for [`store_subtile`].
#[derive(Clone, Copy)]
struct Subtile {
    c_map: *const TensorMap,
    row0: u32,
    col0: u32,
    /// The member of the batch: the layer of C's tensor map.
    layer: u32,
    thread: u32,
    staging: Staging,
    /// Subtile `s` is rows `64·(s / 2)`, columns `64·(s % 2)` ([`store_direct_through_tma`]),
    /// not rows `64·s` of 64 columns.
    direct: bool,
}

impl Subtile {
    /// Subtile `S`'s buffer, once the store that last read it is done reading. With two
    /// buffers each subtile waits for the store two subtiles back; with four the first waits
    /// for all of the previous tile's stores.
    #[inline(always)]
    fn buffer<const S: u32>(self) -> u32 {
        let whole = self.staging.buffers == 4;
        if !whole || S == 0 {
            if self.thread == 0 {
                if whole {
                    store::wait_read::<0>();
                } else {
                    store::wait_read::<1>();
                }
            }
            named_barrier(self.staging.barrier, 128);
        }
        self.staging.first + (S % self.staging.buffers) * STAGING_BOX_BYTES
    }

    /// After subtile `S`'s `stmatrix`: publish the buffer to the async proxy and store it (with
    /// four buffers, the last subtile stores all four).
    #[inline(always)]
    fn publish<const S: u32>(self) {
        let whole = self.staging.buffers == 4;
        if !whole || S == 3 {
            fence_proxy_async();
            named_barrier(self.staging.barrier, 128);
            if self.thread == 0 {
                let first = if whole { 0 } else { S };
                for s in first..=S {
                    let box_at =
                        self.staging.first + (s % self.staging.buffers) * STAGING_BOX_BYTES;
                    let (x, y) = if self.direct {
                        (self.row0 + 64 * (s / 2), self.col0 + 64 * (s % 2))
                    } else {
                        (self.row0 + 64 * s, self.col0)
                    };
                    let (x, y) = (x as i32, y as i32);
                    unsafe { store::store_box(self.c_map, box_at, x, y, self.layer) };
                }
                store::commit();
            }
        }
    }
}

/// Rows `64·S..64·S + 64` (of the accumulator's 256 columns), through buffer `S % buffers`.
/// With two buffers each subtile waits for the store two subtiles back and is stored at once;
/// with four the first subtile waits for all of the previous tile's stores and the last stores
/// the four boxes.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
unsafe fn store_subtile<H: Half, const S: u32>(
    args: &HalfGemmArgs<H>,
    acc: &Accumulator<128>,
    at: Subtile,
) {
    let values = acc.get();
    let (warp, lane) = (at.thread / 32, at.thread % 32);
    let buffer = at.buffer::<S>();
    // Four `stmatrix.x4` per warp, each 16 m (two 8-wide blocks) of its 16 columns: matrix h is
    // block `q + h/2`, accumulator rows 0–7 (h even) or 8–15 of the warp, whose pair is
    // registers `4·(q + h/2) + 2·(h % 2)` and the next.
    for x4 in 0..4u32 {
        let q = 8 * S + 2 * x4;
        let mut pairs = [0u32; 4];
        for h in 0..4u32 {
            let i = (4 * (q + h / 2) + 2 * (h % 2)) as usize;
            pairs[h as usize] = H::pack(args.alpha * values[i], args.alpha * values[i + 1]);
        }
        // This lane's row: row L % 8 of matrix L / 8, i.e. column `n` of the box, 8-m block
        // `m_block`, at its 128-byte swizzled place.
        let h = lane / 8;
        let n = 16 * warp + 8 * (h % 2) + lane % 8;
        let m_block = 2 * x4 + h / 2;
        store::stmatrix_x4(buffer + n * 128 + 16 * (m_block ^ (n % 8)), pairs);
    }
    at.publish::<S>();
}

/// The TMA-store epilogue of the [`Config::DIRECT`] orientation: the warpgroup's two
/// accumulators of 64 rows × 128 columns of C (rows `row0..row0 + 128`) as four boxes of 64 m ×
/// 64 n. An accumulator pair is two adjacent *columns* of one row, and a box row is a column of
/// C, so `stmatrix.trans` ([`store::stmatrix_x4_trans`]) transposes each 8×8 block on its way.
///
/// [`Config::DIRECT`]: crate::variants::wgmma_16bit::Config::DIRECT
///
/// # Safety
/// As [`store_through_tma`].
#[inline(always)]
pub unsafe fn store_direct_through_tma<H: Half>(
    args: &HalfGemmArgs<H>,
    [upper, lower]: [&Accumulator<64>; 2],
    c_map: *const TensorMap,
    row0: u32,
    col0: u32,
    thread: u32,
    staging: Staging,
) {
    if needs_fuse(args) {
        let (warp, lane) = (thread / 32, thread % 32);
        let at = |row0: u32| {
            move |i| {
                let (r, c) = Accumulator::<64>::position(warp, lane, i);
                (row0 + r, col0 + c)
            }
        };
        let (stored, upper, upper_largest) = unsafe { fuse(args, *upper.get(), at(row0)) };
        let (_, lower, lower_largest) = unsafe { fuse(args, *lower.get(), at(row0 + 64)) };
        let (upper, lower) = (
            Accumulator::from_registers(upper),
            Accumulator::from_registers(lower),
        );
        let accumulators = [&upper, &lower];
        unsafe { store_direct_plain(&stored, accumulators, c_map, row0, col0, thread, staging) };
        return unsafe { args.fused.gather_amax(upper_largest.max(lower_largest)) };
    }
    unsafe {
        store_direct_plain(
            &plain(args),
            [upper, lower],
            c_map,
            row0,
            col0,
            thread,
            staging,
        )
    }
}

/// [`store_direct_through_tma`] on [`plain`]'s arguments (`alpha·acc`, no C read).
#[inline(always)]
unsafe fn store_direct_plain<H: Half>(
    args: &HalfGemmArgs<H>,
    [upper, lower]: [&Accumulator<64>; 2],
    c_map: *const TensorMap,
    row0: u32,
    col0: u32,
    thread: u32,
    staging: Staging,
) {
    let at = Subtile {
        c_map,
        row0,
        col0,
        layer: args.batch.member,
        thread,
        staging,
        direct: true,
    };
    unsafe {
        store_direct_subtile::<H, 0>(args, upper, at);
        store_direct_subtile::<H, 1>(args, upper, at);
        store_direct_subtile::<H, 2>(args, lower, at);
        store_direct_subtile::<H, 3>(args, lower, at);
    }
}

/// As [`store_direct_through_tma`] for one accumulator of 64 rows × 128 columns (two boxes):
/// a warpgroup that takes 64 rows of the tile (the block-scaled FP8 kernel).
///
/// # Safety
/// As [`store_through_tma`].
#[inline(always)]
pub unsafe fn store_direct_64_through_tma<H: Half>(
    args: &HalfGemmArgs<H>,
    acc: &Accumulator<64>,
    c_map: *const TensorMap,
    row0: u32,
    col0: u32,
    thread: u32,
    staging: Staging,
) {
    if needs_fuse(args) {
        let (warp, lane) = (thread / 32, thread % 32);
        let at = |i| {
            let (r, c) = Accumulator::<64>::position(warp, lane, i);
            (row0 + r, col0 + c)
        };
        let (stored, values, largest) = unsafe { fuse(args, *acc.get(), at) };
        let acc = Accumulator::from_registers(values);
        unsafe { store_direct_64_plain(&stored, &acc, c_map, row0, col0, thread, staging) };
        return unsafe { args.fused.gather_amax(largest) };
    }
    unsafe { store_direct_64_plain(&plain(args), acc, c_map, row0, col0, thread, staging) }
}

/// [`store_direct_64_through_tma`] on [`plain`]'s arguments (`alpha·acc`, no C read).
#[inline(always)]
unsafe fn store_direct_64_plain<H: Half>(
    args: &HalfGemmArgs<H>,
    acc: &Accumulator<64>,
    c_map: *const TensorMap,
    row0: u32,
    col0: u32,
    thread: u32,
    staging: Staging,
) {
    let at = Subtile {
        c_map,
        row0,
        col0,
        layer: args.batch.member,
        thread,
        staging,
        direct: true,
    };
    unsafe {
        store_direct_subtile::<H, 0>(args, acc, at);
        store_direct_subtile::<H, 1>(args, acc, at);
    }
}

/// Subtile `S`: rows `64·(S / 2)` (accumulator `acc`), columns `64·(S % 2)`.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
unsafe fn store_direct_subtile<H: Half, const S: u32>(
    args: &HalfGemmArgs<H>,
    acc: &Accumulator<64>,
    at: Subtile,
) {
    let values = acc.get();
    let (warp, lane) = (at.thread / 32, at.thread % 32);
    let (row0, half) = (at.row0 + 64 * (S / 2), S % 2);
    let buffer = at.buffer::<S>();
    // Four `stmatrix.x4.trans` per warp, each two 8-column blocks of its 16 rows: matrix h is
    // column block `8·half + 2·x4 + h/2`, accumulator rows 0–7 (h even) or 8–15 of the warp.
    for x4 in 0..4u32 {
        let mut pairs = [0u32; 4];
        for h in 0..4u32 {
            let block = 8 * half + 2 * x4 + h / 2;
            let i = (4 * block + 2 * (h % 2)) as usize;
            pairs[h as usize] = H::pack(args.alpha * values[i], args.alpha * values[i + 1]);
        }
        // This lane's address: row L % 8 of stored matrix L / 8 is column `n` of the box (a
        // 128-byte row of 64 m), its eight rows the 8-m block `m_block`.
        let h = lane / 8;
        let n = 8 * (2 * x4 + h / 2) + lane % 8;
        let m_block = 2 * warp + h % 2;
        store::stmatrix_x4_trans(buffer + n * 128 + 16 * (m_block ^ (n % 8)), pairs);
    }
    let first_column = at.col0 + 64 * half;
    if args.groups.clips() && first_column + 64 > args.n {
        unsafe { copy_out_clipped(args, buffer, (row0, first_column), at) };
    } else {
        at.publish::<S>();
    }
}

/// A staged box of 64 m × 64 n that ends past the arguments' `n` while C's tensor map reaches
/// further: a masked group's last columns ([`crate::gemm::Groups`]), whose columns past the
/// group's count must stay as they are, though the TMA store would write up to the map's edge.
/// The warpgroup copies the box's columns below `n` (and rows below `m`) from shared memory
/// itself, a 4-byte pair of m per thread and step: a warp writes 128 contiguous bytes of a
/// column. Once per group at most; the next subtile's barrier keeps the buffer until every
/// thread has read it.
///
/// No TMA store is committed for the box, so the next subtile's `wait_group.read 1` would let
/// the store two subtiles back, into the buffer it is about to fill, still be reading it: thread
/// 0 waits for every store here instead (the emulator reported the race).
///
/// # Safety
/// `args` describes valid matrices; `buffer` holds the box, two buffers in turn (`Subtile`'s
/// barrier before each subtile).
#[inline(always)]
unsafe fn copy_out_clipped<H: Half>(
    args: &HalfGemmArgs<H>,
    buffer: u32,
    (row0, col0): (u32, u32),
    at: Subtile,
) {
    if at.thread == 0 {
        store::wait_read::<0>();
    }
    // Every thread's `stmatrix` is in the buffer.
    named_barrier(at.staging.barrier, 128);
    let columns = args.n.saturating_sub(col0).min(64);
    for pair in (at.thread..columns * 32).step_by(128) {
        let (n, q) = (pair / 32, pair % 32);
        // Pair q is m 2q, 2q + 1: 16-byte chunk q / 4 of the column's 128-byte row, swizzled.
        let from = buffer + n * 128 + 16 * ((q / 4) ^ (n % 8)) + 4 * (q % 4);
        let bits = unsafe { <f32 as crate::device::Element>::ld_shared(from) }.to_bits();
        let (row, col) = (row0 + 2 * q, col0 + n);
        let i = args.c_at(row, col);
        if row + 1 < args.m {
            unsafe { args.c.store_bits2(i, bits) };
        } else if row < args.m {
            unsafe { args.c.store_bits(i, bits as u16) };
        }
    }
}
