//! Hopper's asynchronous instructions on the CPU, exact to the PTX ISA where it is exact, each
//! driven by the emulator ([`crate::emu`]), which orders them (mbarrier phases, `wgmma` groups,
//! the async proxy) and reports misuse.
//!
//! - **TMA** ([`tma_load_3d`]): the box of a tensor map (the emulator's own encoding of the
//!   driver's parameters, [`crate::device::tma::TensorMapSpec`]) is read from global memory,
//!   out-of-bounds elements as zeros, and written row after row into shared memory with the
//!   swizzle of the map: for the 32-, 64- and 128-byte modes the 16-byte chunk bits `[4:6]` of
//!   the shared address are XORed with bits `[7:9]` (one, two or three of them), on the
//!   *absolute* shared address (PTX ISA, "Tensor Swizzling Modes"). The copy counts the whole
//!   box off its mbarrier's tx-count, out-of-bounds bytes included.
//! - **`wgmma`** ([`wgmma_tf32`]): operands are read through their 64-bit matrix descriptors
//!   (PTX ISA, "Matrix Descriptor Format" and the canonical K-major layouts): for element
//!   (row `r`, k `kk`) of a TF32 operand, with chunk `c = kk / 4` and word `w = kk % 4`,
//!   - no swizzle: `start + (r % 8)·16 + (r / 8)·SBO + c·LBO + 4w`;
//!   - swizzled with row pitch `W` (32, 64, 128 bytes): `pre = start + (r % 8)·W + (r / 8)·SBO +
//!     16c + 4w`, then `pre ^ ((((pre >> 7) − base_offset) & M) << 4)` with `M` = 1, 3, 7;
//!     LBO is not used.
//!
//!   This formula was checked on an H100, element by element, for the four modes, start
//!   addresses inside a swizzle atom and base offsets 1 to 5. The tensor core reads the top 19
//!   bits of each f32 (TF32, truncated); the emulator adds the exact products to the
//!   accumulator in f64 and rounds once (the ISA leaves the order and rounding of the
//!   accumulation unspecified). The fragment tables: lane `L` of warp `w` of the warpgroup holds
//!   accumulator register `i` at row `16w + L/4 + 8·((i >> 1) & 1)`, column `8·(i >> 2) +
//!   2·(L % 4) + (i & 1)`, and A register `i` (A from registers) at row `16w + L/4 + 8·(i & 1)`,
//!   k `L % 4 + 4·(i >> 1)`. Warp `w`'s accumulators depend only on rows `16w..16w+16` of A,
//!   so the emulator runs each `wgmma` as a warp-wide operation.
use super::tf32_value;
use crate::device::tma::{Swizzle, TensorMapSpec};
use crate::emu::{current, FaultKind};
use crate::gemm::Dtype;

// -- mbarrier --

pub fn mbarrier_init(addr: u32, count: u32) {
    let ctx = current();
    ctx.mbarrier_init(ctx.pool_byte(addr), count);
}

/// The emulator orders an mbarrier's init by the barrier that must follow it.
pub fn fence_mbarrier_init() {}

pub fn mbarrier_arrive(addr: u32) {
    let ctx = current();
    ctx.mbarrier_arrive(ctx.pool_byte(addr), 0);
}

pub fn mbarrier_arrive_expect_tx(addr: u32, bytes: u32) {
    let ctx = current();
    ctx.mbarrier_arrive(ctx.pool_byte(addr), bytes);
}

pub fn mbarrier_expect_tx(addr: u32, bytes: u32) {
    let ctx = current();
    ctx.mbarrier_expect_tx(ctx.pool_byte(addr), bytes);
}

pub fn mbarrier_wait(addr: u32, parity: u32) {
    let ctx = current();
    ctx.mbarrier_wait(ctx.pool_byte(addr), parity);
}

// -- TMA --

/// The first word of an emulator-encoded tensor map.
const EMULATED_MAP_MAGIC: u64 = u64::from_le_bytes(*b"EMU-TMAP");

/// The emulator's tensor map: the parameters of `cuTensorMapEncodeTiled`, in the 128 bytes of
/// a `CUtensorMap` (`TensorMapSpec::encode_for_emulator`).
pub(crate) fn encode_map(spec: &TensorMapSpec) -> [u64; 16] {
    let mut words = [0u64; 16];
    words[0] = EMULATED_MAP_MAGIC;
    words[1] = spec.address;
    words[2] = spec.dims[0];
    words[3] = spec.dims[1];
    words[4] = spec.row_stride_bytes;
    words[5] = spec.box_dims[0] as u64 | (spec.box_dims[1] as u64) << 32;
    words[6] = spec.element_bytes as u64 | (spec.swizzle.tensor_map_code() as u64) << 8;
    words[7] = spec.layers;
    words[8] = spec.layer_stride_bytes;
    words
}

fn decode_map(words: &[u64; 16]) -> Option<TensorMapSpec> {
    let swizzle = match (words[6] >> 8) as u8 {
        0 => Swizzle::None,
        1 => Swizzle::B32,
        2 => Swizzle::B64,
        _ => Swizzle::B128,
    };
    (words[0] == EMULATED_MAP_MAGIC).then(|| TensorMapSpec {
        address: words[1],
        dims: [words[2], words[3]],
        row_stride_bytes: words[4],
        box_dims: [words[5] as u32, (words[5] >> 32) as u32],
        element_bytes: words[6] as u8 as u32,
        swizzle,
        layers: words[7],
        layer_stride_bytes: words[8],
    })
}

/// The shared address at which a swizzled copy (or `wgmma` read) finds the bytes that the
/// unswizzled layout puts at `address`: the 16-byte chunk bits XORed with the row bits above
/// them, `mask` (1, 3, 7) of them, after subtracting the descriptor's base offset.
pub(crate) fn swizzle_address(address: u32, mask: u32, base_offset: u32) -> u32 {
    address ^ ((((address >> 7).wrapping_sub(base_offset)) & mask) << 4)
}

/// `cp.async.bulk.tensor.3d…mbarrier::complete_tx::bytes [dst], [map, {x, y, z}], [bar]`.
///
/// # Safety
/// `map` must point to a tensor map in a buffer of the launch.
pub unsafe fn tma_load_3d(map: *const u8, dst: u32, at: [i32; 3], bar: u32) {
    let ctx = current();
    let (at, data) = unsafe { read_box(map, dst, at) };
    ctx.tma_write(ctx.cluster_rank(), at, &data, ctx.pool_byte(bar));
}

/// `cp.async.bulk.tensor.3d…L2::cache_hint`: the emulator has no L2, and the hint changes no
/// result (PTX ISA: a performance hint), so the copy is [`tma_load_3d`]'s.
///
/// # Safety
/// As [`tma_load_3d`].
pub unsafe fn tma_load_3d_hinted(map: *const u8, dst: u32, at: [i32; 3], bar: u32, _policy: u64) {
    unsafe { tma_load_3d(map, dst, at, bar) }
}

/// `createpolicy.fractional.L2::evict_first.b64`: an opaque policy word; any value serves the
/// emulator's copies, which ignore it.
pub fn l2_evict_first() -> u64 {
    1
}

/// `createpolicy.fractional.L2::evict_last.b64`, as [`l2_evict_first`].
pub fn l2_evict_last() -> u64 {
    2
}

/// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], bytes,
/// [bar]`: the bytes land now and are counted off the mbarrier's tx-count. The ISA asks both
/// addresses to be 16-byte aligned and the size to be a multiple of 16: anything else is a
/// fault, as is a source outside the launch's buffers.
///
/// # Safety
/// `src..src + bytes` must be inside one of the launch's buffers (the emulator checks it first).
pub unsafe fn bulk_load(dst: u32, src: *const u8, bytes: u32, bar: u32) {
    let ctx = current();
    if !dst.is_multiple_of(16) || !bytes.is_multiple_of(16) {
        ctx.fault(
            FaultKind::TmaMisuse,
            format!("a bulk copy of {bytes} bytes to shared address {dst}: the address and the size must be multiples of 16"),
        );
    }
    ctx.check_global(src as usize, bytes as usize, 16);
    // SAFETY: checked against the launch's buffers just above.
    let data = unsafe { core::slice::from_raw_parts(src, bytes as usize) }.to_vec();
    ctx.tma_write(
        ctx.cluster_rank(),
        ctx.pool_byte(dst),
        &data,
        ctx.pool_byte(bar),
    );
}

/// `….multicast::cluster [dst], [map, {x, y, z}], [bar], mask`: the same box lands at `dst` in
/// every block of the cluster whose rank is a bit of `mask`, and completes on the mbarrier at
/// `bar` of each.
///
/// # Safety
/// As [`tma_load_3d`].
pub unsafe fn tma_load_3d_multicast(map: *const u8, dst: u32, at: [i32; 3], bar: u32, mask: u16) {
    let ctx = current();
    if mask == 0 {
        ctx.fault(
            FaultKind::TmaMisuse,
            "a multicast TMA copy with an empty CTA mask".to_string(),
        );
    }
    let (at, data) = unsafe { read_box(map, dst, at) };
    for rank in (0..16).filter(|r| mask & (1 << r) != 0) {
        ctx.tma_write(rank, at, &data, ctx.pool_byte(bar));
    }
}

/// The bytes a TMA copy of the box at `(x, y, z)` of `map` writes at shared address `dst`, as
/// they land (swizzled, zeros outside the tensor: a layer `z` outside it is all zeros), and
/// `dst`'s pool byte.
///
/// # Safety
/// `map` must point to a tensor map in a buffer of the launch.
unsafe fn read_box(map: *const u8, dst: u32, at: [i32; 3]) -> (u32, Vec<u8>) {
    let ctx = current();
    let b = unsafe { tma_box(map, dst, at, "TMA destination") };
    let mut data = vec![0u8; b.bytes as usize];
    for row in 0..b.rows {
        let Some((address, first, count)) = b.global_run(row, b.map.dims[0]) else {
            continue;
        };
        ctx.check_global(address, count * b.element, 1);
        // SAFETY: checked against the launch's buffers just above.
        let values =
            unsafe { core::slice::from_raw_parts(address as *const u8, count * b.element) };
        for (i, value) in values.chunks(b.element).enumerate() {
            let slot = b.slot(row, first + i as u32);
            data[slot..slot + b.element].copy_from_slice(value);
        }
    }
    (b.at, data)
}

/// A TMA box at a shared address: where each element lies in shared memory (swizzled) and in
/// the tensor (clipped at its edges).
struct TmaBox {
    map: TensorMapSpec,
    /// Pool byte and shared address of the box, its bytes, rows, element size.
    at: u32,
    dst: u32,
    bytes: u32,
    rows: u32,
    element: usize,
    x: i64,
    y: i64,
    z: i64,
}

impl TmaBox {
    /// The byte of element `col` of row `row` in the box's shared memory, from its start.
    fn slot(&self, row: u32, col: u32) -> usize {
        let m = &self.map;
        let row_bytes = m.box_dims[0] * m.element_bytes;
        let linear = self.dst + row * row_bytes + col * m.element_bytes;
        let swizzled = match m.swizzle {
            Swizzle::None => linear,
            s => swizzle_address(linear, s.chunk_mask(), 0),
        };
        (swizzled - self.dst) as usize
    }

    /// The part of row `row` inside the tensor: its global address, first column and count.
    /// `inner_end` is where the inner dimension ends for this direction, in elements: the
    /// tensor's width for a load; for a store, the width rounded up to 16 bytes (the H100 clips
    /// a store's rows at 16-byte granularity: `docs/hopper-isa-notes.md`).
    fn global_run(&self, row: u32, inner_end: u64) -> Option<(usize, u32, usize)> {
        let m = &self.map;
        let gy = self.y + row as i64;
        if !(0..m.dims[1] as i64).contains(&gy) || !(0..m.layers as i64).contains(&self.z) {
            return None;
        }
        let first = (-self.x).max(0);
        let last = (inner_end as i64 - self.x).min(m.box_dims[0] as i64);
        if first >= last {
            return None;
        }
        let gx = self.x + first;
        let address = m.address as usize
            + self.z as usize * m.layer_stride_bytes as usize
            + gy as usize * m.row_stride_bytes as usize
            + gx as usize * self.element;
        Some((address, first as u32, (last - first) as usize))
    }
}

/// Decodes `map` and checks a box at shared address `shared` against the TMA's rules.
///
/// # Safety
/// `map` must point to a tensor map in a buffer of the launch.
unsafe fn tma_box(map: *const u8, shared: u32, [x, y, z]: [i32; 3], what: &str) -> TmaBox {
    let ctx = current();
    ctx.check_global(map as usize, 128, 64);
    let words = unsafe { *(map as *const [u64; 16]) };
    let Some(m) = decode_map(&words) else {
        ctx.fault(
            FaultKind::TmaMisuse,
            "the tensor map was not encoded for the emulator (TensorMapSpec::encode_for_emulator); a map made by the driver is opaque".to_string(),
        )
    };
    let row_bytes = m.box_dims[0] * m.element_bytes;
    let bytes = row_bytes * m.box_dims[1];
    let span = m.swizzle.span();
    if span != 0 && row_bytes != span {
        ctx.fault(
            FaultKind::TmaMisuse,
            format!("a {span}-byte swizzled box whose rows are {row_bytes} bytes: the emulator implements rows of exactly the swizzle span (the PTX ISA does not document narrower ones)"),
        );
    }
    if !shared.is_multiple_of(128) {
        ctx.fault(
            FaultKind::TmaMisuse,
            format!("{what} at shared address {shared}: it must be 128-byte aligned"),
        );
    }
    let at = ctx.pool_byte(shared);
    ctx.check_pool_range(at, bytes, 16, what);
    TmaBox {
        map: m,
        at,
        dst: shared,
        bytes,
        rows: m.box_dims[1],
        element: m.element_bytes as usize,
        x: x as i64,
        y: y as i64,
        z: z as i64,
    }
}

/// `cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [map, {x, y, z}], [src]`: the box
/// is read from shared memory now (the history checks the read is ordered after the writes and
/// published to the async proxy); its part inside the tensor is written to global memory when a
/// `cp.async.bulk.wait_group` retires the group, or when the block exits. As on the H100, the
/// rows are clipped at the tensor's width rounded up to 16 bytes (the PTX ISA does not say; the
/// behaviour was measured), and negative coordinates stop the kernel.
///
/// # Safety
/// `map` must point to a tensor map in a buffer of the launch.
pub unsafe fn tma_store_3d(map: *const u8, src: u32, at: [i32; 3]) {
    let ctx = current();
    let b = unsafe { tma_box(map, src, at, "TMA store source") };
    let [x, y, z] = at;
    if x < 0 || y < 0 || z < 0 {
        // PTX ISA (cp.async.bulk.tensor, restrictions on the .global.shared::cta direction);
        // the H100 stops the kernel with an illegal instruction.
        ctx.fault(
            FaultKind::TmaMisuse,
            format!(
                "a TMA store at coordinates ({x}, {y}, {z}): a store's coordinates must be non-negative"
            ),
        );
    }
    let inner_end = (b.map.dims[0] * b.element as u64).next_multiple_of(16) / b.element as u64;
    let pool = ctx.block().pool_mut();
    let mut writes = Vec::new();
    for row in 0..b.rows {
        let Some((address, first, count)) = b.global_run(row, inner_end) else {
            continue;
        };
        ctx.check_global(address, count * b.element, 1);
        let mut data = Vec::with_capacity(count * b.element);
        for col in first..first + count as u32 {
            let slot = b.at as usize + b.slot(row, col);
            data.extend_from_slice(&pool[slot..slot + b.element]);
        }
        writes.push((address, data));
    }
    drop(pool);
    ctx.tma_store(b.at, b.bytes, writes);
}

pub fn bulk_commit() {
    current().bulk_commit();
}

pub fn bulk_wait<const N: u32, const READ: bool>() {
    current().bulk_wait(N, READ);
}

/// `stmatrix.sync.aligned.m8n8.x4.shared.b16`: the warp's registers are exchanged, and each lane
/// writes the 16-byte row whose address it gave: row `L % 8` of matrix `L / 8`, made of
/// register `L / 8` of lanes `4·(L % 8)` to `4·(L % 8) + 3` (two elements each, low half first).
pub fn stmatrix_x4(row: u32, registers: [u32; 4]) {
    stmatrix(row, registers, false)
}

/// `stmatrix.sync.aligned.m8n8.x4.trans.shared.b16`: each lane writes row `L % 8` of matrix
/// `L / 8` as stored, which is column `L % 8` of the fragment: element `i` (of 8) is half
/// `L % 2` of register `L / 8` of lane `4·i + (L % 8) / 2`.
pub fn stmatrix_x4_trans(row: u32, registers: [u32; 4]) {
    stmatrix(row, registers, true)
}

fn stmatrix(row: u32, registers: [u32; 4], transposed: bool) {
    let ctx = current();
    let lane = ctx.linear % 32;
    let deposit = [
        registers[0] as u64,
        registers[1] as u64,
        registers[2] as u64,
        registers[3] as u64,
    ];
    let name = if transposed {
        "stmatrix.m8n8.x4.trans"
    } else {
        "stmatrix.m8n8.x4"
    };
    let warp: Vec<[u32; 4]> = ctx.warp_collective(name, &deposit, true, |warp| {
        warp.iter()
            .map(|d| core::array::from_fn(|i| d.registers[i] as u32))
            .collect()
    });
    let (r, matrix) = (lane % 8, lane / 8);
    let mut bytes = [0u8; 16];
    if transposed {
        for i in 0..8 {
            let pair = warp[(4 * i + r / 2) as usize][matrix as usize];
            let half = (pair >> (16 * (r % 2))) as u16;
            bytes[2 * i as usize..2 * i as usize + 2].copy_from_slice(&half.to_le_bytes());
        }
    } else {
        for q in 0..4 {
            let pair = warp[(4 * r + q) as usize][matrix as usize];
            bytes[4 * q as usize..4 * q as usize + 4].copy_from_slice(&pair.to_le_bytes());
        }
    }
    let at = ctx.pool_byte(row);
    ctx.shared_access(at, 16, true);
    ctx.block().pool_mut()[at as usize..at as usize + 16].copy_from_slice(&bytes);
}

/// The emulator needs no descriptor cache.
///
/// # Safety
/// None needed here; the GPU version's contract applies.
pub unsafe fn tma_prefetch(_map: *const u8) {}

/// `cp.async.bulk.prefetch.tensor`: a hint to L2, with no effect the emulator can see but the
/// map it reads (which must lie in a buffer of the launch, and was encoded for the emulator).
///
/// # Safety
/// `map` must point to a tensor map in a buffer of the launch.
pub unsafe fn tma_prefetch_box_3d(map: *const u8, _box: [i32; 3]) {
    let ctx = current();
    ctx.check_global(map as usize, 128, 64);
    if decode_map(unsafe { &*(map as *const [u64; 16]) }).is_none() {
        ctx.fault(
            FaultKind::TmaMisuse,
            "the tensor map of an L2 prefetch was not encoded for the emulator".to_string(),
        )
    }
}

/// `griddepcontrol.wait`: the emulator runs a launch after the one before it has ended, so the
/// wait has nothing to wait for; it records that the thread waited
/// ([`crate::emu::launch_dependent`] checks the accesses before it).
pub fn griddepcontrol_wait() {
    current().wait_for_prior_grids();
}

/// `griddepcontrol.launch_dependents`: a scheduling hint, no effect on results.
pub fn griddepcontrol_launch_dependents() {}

// -- proxy fence, wgmma, setmaxnreg --

pub fn fence_proxy_async() {
    current().fence_proxy_async();
}

pub fn wgmma_fence() {
    current().wgmma_fence();
}

pub fn wgmma_commit() {
    current().wgmma_commit();
}

pub fn wgmma_wait<const N: u32>() {
    current().wgmma_wait(N);
}

/// `setmaxnreg`: a warp-wide instruction whose count must be one the PTX ISA allows; the
/// emulator records the warp's new count, and when the block exits checks that the counts its
/// warps ended with fit the registers it held at launch (`.inc` waits until a `.dec` has given
/// back what it asks for: asking for more than the block holds hangs the GPU).
pub fn setmaxnreg(increase: bool, count: u32) {
    let ctx = current();
    if !(24..=256).contains(&count) || !count.is_multiple_of(8) {
        ctx.fault(
            FaultKind::WgmmaMisuse,
            format!(
                "setmaxnreg with {count} registers: the PTX ISA allows 24 to 256, a multiple of 8"
            ),
        );
    }
    let op = if increase {
        "setmaxnreg.inc"
    } else {
        "setmaxnreg.dec"
    };
    ctx.warp_collective(op, &[], true, |_| ());
    ctx.set_registers(count);
}

/// A decoded matrix descriptor: where element (row, kk) of a K-major TF32 operand lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Descriptor {
    pub start: u32,
    pub leading_byte_offset: u32,
    pub stride_byte_offset: u32,
    pub base_offset: u32,
    /// Bits 62–63: 0 none, 1 128-byte, 2 64-byte, 3 32-byte swizzle.
    pub layout: u32,
}

impl Descriptor {
    pub(crate) fn decode(bits: u64) -> Self {
        Descriptor {
            start: ((bits & 0x3FFF) << 4) as u32,
            leading_byte_offset: (((bits >> 16) & 0x3FFF) << 4) as u32,
            stride_byte_offset: (((bits >> 32) & 0x3FFF) << 4) as u32,
            base_offset: ((bits >> 49) & 7) as u32,
            layout: (bits >> 62) as u32,
        }
    }

    /// The shared address of element (`mn`, `kk`) of an operand of `bytes`-byte elements: row
    /// `mn` of A or column `mn` of B, at k `kk`. In 16-byte chunks of `T = 16 / bytes` elements
    /// (CUTLASS's `make_gmma_desc`, after the PTX ISA's canonical layouts):
    ///
    /// - K-major, swizzled with row pitch `W`: `mn` = (8 rows `W` apart, groups SBO apart), `kk`
    ///   = (T elements, chunks 16 bytes apart); without swizzle the 8 rows lie 16 bytes apart
    ///   and the chunks LBO apart.
    /// - MN-major, swizzled: `mn` = (T elements, `W/16` chunks 16 bytes apart, then LBO), `kk` =
    ///   (8 rows `W` apart, then SBO); without swizzle `mn` = (T elements, then SBO), `kk` = (8
    ///   rows 16 bytes apart, then LBO).
    ///
    /// The swizzle XORs the result as the TMA engine's does, less the base offset.
    pub(crate) fn address(&self, mn: u32, kk: u32, bytes: u32, mn_major: bool) -> u32 {
        let t = 16 / bytes;
        let (pitch, mask) = match self.layout {
            1 => (128, 7),
            2 => (64, 3),
            3 => (32, 1),
            _ => (0, 0),
        };
        let (lbo, sbo) = (self.leading_byte_offset, self.stride_byte_offset);
        let offset = match (mn_major, pitch) {
            (false, 0) => (mn % 8) * 16 + (mn / 8) * sbo + (kk / t) * lbo + (kk % t) * bytes,
            (false, _) => (mn % 8) * pitch + (mn / 8) * sbo + (kk / t) * 16 + (kk % t) * bytes,
            (true, 0) => (mn % t) * bytes + (mn / t) * sbo + (kk % 8) * 16 + (kk / 8) * lbo,
            (true, _) => {
                let chunks = pitch / 16;
                (mn % t) * bytes
                    + ((mn / t) % chunks) * 16
                    + (mn / (t * chunks)) * lbo
                    + (kk % 8) * pitch
                    + (kk / 8) * sbo
            }
        };
        let pre = self.start + offset;
        if pitch == 0 {
            pre
        } else {
            swizzle_address(pre, mask, self.base_offset)
        }
    }
}

/// The types of a `wgmma`'s A and B, and how they lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandKind {
    /// TF32 (4-byte) operands, K-major, k = 8 per instruction; the tensor cores read the top 19
    /// bits of each f32.
    Tf32,
    /// bf16 or f16 operands, k = 16 per instruction, each K-major or MN-major (the transpose
    /// bits).
    Half {
        dtype: Dtype,
        a_mn_major: bool,
        b_mn_major: bool,
    },
    /// FP8 operands, k = 32 per instruction, both K-major (8-bit operands have no transpose
    /// bits: an operand stored MN-major is read as if it were K-major, and the product is wrong):
    /// A e4m3, B e4m3 or (`b_e5m2`) e5m2.
    Fp8 { b_e5m2: bool },
}

impl OperandKind {
    fn element_bytes(self) -> u32 {
        match self {
            OperandKind::Tf32 => 4,
            OperandKind::Half { .. } => 2,
            OperandKind::Fp8 { .. } => 1,
        }
    }

    fn k(self) -> usize {
        match self {
            OperandKind::Tf32 => 8,
            OperandKind::Half { .. } => 16,
            OperandKind::Fp8 { .. } => 32,
        }
    }

    fn mn_major(self) -> (bool, bool) {
        match self {
            OperandKind::Tf32 | OperandKind::Fp8 { .. } => (false, false),
            OperandKind::Half {
                a_mn_major,
                b_mn_major,
                ..
            } => (a_mn_major, b_mn_major),
        }
    }

    /// The exact value of an element's bits in B (e5m2 where the instruction says so), or in A
    /// ([`OperandKind::value`]).
    fn b_value(self, bits: u32) -> f64 {
        match self {
            OperandKind::Fp8 { b_e5m2: true } => {
                crate::device::fp8::E5m2(bits as u8).to_f32() as f64
            }
            _ => self.value(bits),
        }
    }

    /// The exact value of an element's bits (in A; in B too, but for an e5m2 B).
    fn value(self, bits: u32) -> f64 {
        match self {
            OperandKind::Tf32 => tf32_value(bits as u64),
            OperandKind::Half {
                dtype: Dtype::Bf16, ..
            } => f32::from_bits(bits << 16) as f64,
            OperandKind::Half { .. } => half::f16::from_bits(bits as u16).to_f64(),
            OperandKind::Fp8 { .. } => crate::device::fp8::E4m3(bits as u8).to_f32() as f64,
        }
    }
}

/// Where A comes from.
pub enum OperandA {
    /// A matrix descriptor (A in shared memory).
    Shared(u64),
    /// The lane's four A registers, and where the kernel holds them (a `FragA<Tf32, 4>`): they
    /// must not change until the group retires.
    Registers { bits: [u32; 4], held_at: usize },
}

/// Bits an FP8 `wgmma` keeps below the leading bit of its largest term.
pub const FP8_FRACTION_BITS: i32 = 13;

/// How an FP8 `wgmma` adds its 32 products to an accumulator `c`, as measured on the H100 (the
/// PTX ISA leaves it unspecified; `docs/hopper-isa-notes.md` has the probe,
/// `gpu_gemm::fp8::probe`): the accumulator and the exact products are aligned to the largest
/// exponent among them, each is cut **toward zero** to [`FP8_FRACTION_BITS`] bits below that
/// leading bit, and the cut terms are added exactly (at most 2¹⁹ units: exact in f32). The 2048
/// probe elements of the H100 agree with this and with no other candidate (10 to 25 bits,
/// truncated or rounded to nearest).
fn fp8_accumulate(c: f32, products: impl Iterator<Item = f64>) -> f32 {
    let terms: Vec<f64> = products.chain([c as f64]).collect();
    let top = terms
        .iter()
        .filter(|t| **t != 0.0)
        // The exponent field: every term is a normal f64 (e4m3 and f32 values are).
        .map(|t| ((t.to_bits() >> 52) & 0x7FF) as i32 - 1023)
        .max();
    let Some(top) = top else { return 0.0 };
    let unit = 2f64.powi(top - FP8_FRACTION_BITS);
    (terms.iter().map(|t| (t / unit).trunc()).sum::<f64>() * unit) as f32
}

/// `wgmma.mma_async…m64n{N}k{8,16,32}.f32.{tf32,bf16,f16,e4m3}` for the calling lane: `d` holds its N/2
/// accumulators; returns the group the operation belongs to.
pub fn wgmma(
    op: &'static str,
    d: &mut [f32],
    a: OperandA,
    b: u64,
    scale_d: bool,
    kind: OperandKind,
) -> u32 {
    let ctx = current();
    ctx.go_asynchronous();
    ctx.wgmma_check_fenced(op);
    let n = 2 * d.len() as u32;
    let lane = ctx.linear % 32;
    let warp_in_group = (ctx.linear / 32) % 4;
    let (a_bits, a_registers) = match a {
        OperandA::Shared(desc) => (desc, [0; 4]),
        OperandA::Registers { bits, .. } => (u64::MAX, bits),
    };
    let deposit = [
        a_bits,
        b,
        scale_d as u64,
        a_registers[0] as u64,
        a_registers[1] as u64,
        a_registers[2] as u64,
        a_registers[3] as u64,
    ];
    // Every lane's A registers, and the operands every lane must agree on.
    let (same, registers) = ctx.warp_collective(op, &deposit, true, |warp| {
        let same = warp.iter().all(|w| w.registers[..3] == deposit[..3]);
        let registers: Vec<[u32; 4]> = warp
            .iter()
            .map(|w| core::array::from_fn(|i| w.registers[3 + i] as u32))
            .collect();
        (same, registers)
    });
    if !same {
        ctx.fault(
            FaultKind::WgmmaMisuse,
            format!("`{op}`: the lanes of a warp give different descriptors or scale-d (the PTX ISA requires the same across the warpgroup)"),
        );
    }
    let b_desc = Descriptor::decode(b);
    let a_desc = match a {
        OperandA::Shared(desc) => Some(Descriptor::decode(desc)),
        OperandA::Registers { bits, held_at } => {
            ctx.wgmma_hold(held_at, bits);
            None
        }
    };
    let (bytes, k) = (kind.element_bytes(), kind.k());
    let (a_mn_major, b_mn_major) = kind.mn_major();
    let a_address =
        |r: u32, kk: u32| a_desc.map(|d| d.address(16 * warp_in_group + r, kk, bytes, a_mn_major));
    let b_address = |col: u32, kk: u32| b_desc.address(col, kk, bytes, b_mn_major);
    // The race history records the warp's reads once, in lane 0: every 16-byte chunk of this
    // warp's 16 rows of A and of B's N columns.
    if lane == 0 {
        let mut chunks: Vec<(u32, u32)> = Vec::new();
        for kk in 0..k as u32 {
            let a_reads = (0..16).filter_map(|r| a_address(r, kk));
            for address in a_reads.chain((0..n).map(|col| b_address(col, kk))) {
                chunks.push((ctx.pool_byte(address) & !15, 16));
            }
        }
        chunks.sort_unstable();
        chunks.dedup();
        ctx.wgmma_reads(&chunks);
    }
    // Each lane reads only what its accumulators need: rows g and g + 8 of the warp's A, and
    // columns 8j + 2t, 8j + 2t + 1 of B.
    let (g, t) = ((lane / 4) as usize, (lane % 4) as usize);
    let pool_bytes = ctx.block().pool_mut().len() as u32;
    let bits_at = |address: u32| -> u32 {
        let at = ctx.pool_byte(address);
        if at + bytes > pool_bytes || !at.is_multiple_of(bytes) {
            ctx.check_pool_range(at, bytes, bytes, op);
        }
        let pool = ctx.block().pool_mut();
        let mut word = [0u8; 4];
        word[..bytes as usize].copy_from_slice(&pool[at as usize..(at + bytes) as usize]);
        u32::from_le_bytes(word)
    };
    let mut rows = [[0f64; 32]; 2];
    for (h, row) in rows.iter_mut().enumerate() {
        let r = g + 8 * h;
        for (kk, value) in row.iter_mut().enumerate().take(k) {
            *value = match a_address(r as u32, kk as u32) {
                Some(address) => kind.value(bits_at(address)),
                // A in registers: lane (g', t') holds row g' + 8·(i & 1), k t' + 4·(i >> 1).
                None => {
                    let (lane, i) = (4 * g + kk % 4, 2 * (kk / 4) + h);
                    kind.value(registers[lane][i])
                }
            };
        }
    }
    for (i, value) in d.iter_mut().enumerate() {
        let i = i as u32;
        let row = &rows[((i >> 1) & 1) as usize];
        let col = 8 * (i >> 2) + 2 * t as u32 + (i & 1);
        let products = (0..k).map(|q| row[q] * kind.b_value(bits_at(b_address(col, q as u32))));
        let c = if scale_d { *value } else { 0.0 };
        *value = match kind {
            OperandKind::Fp8 { .. } => fp8_accumulate(c, products),
            _ => (c as f64 + products.sum::<f64>()) as f32,
        };
    }
    ctx.wgmma_group()
}

// -- clusters --

pub fn cluster_ctarank() -> u32 {
    current().cluster_rank()
}

pub fn cluster_id_x() -> u32 {
    current().cluster_id().0
}

pub fn cluster_count_x() -> u32 {
    current().cluster_id().1
}

pub fn cluster_arrive() {
    current().cluster_arrive();
}

pub fn cluster_wait() {
    current().cluster_wait();
}

pub fn mbarrier_arrive_cluster(addr: u32, rank: u32) {
    let ctx = current();
    ctx.mbarrier_arrive_remote(rank, ctx.pool_byte(addr));
}

/// The emulator's arrivals are releases whatever their scope: as [`mbarrier_arrive_cluster`].
pub fn mbarrier_arrive_release_cluster(addr: u32, rank: u32) {
    mbarrier_arrive_cluster(addr, rank)
}

/// The emulator's waits acquire everything released into the phase, whatever its scope.
pub fn mbarrier_wait_acquire_cluster(addr: u32, parity: u32) {
    mbarrier_wait(addr, parity)
}

/// `st.shared::cluster.u32` into block `rank`'s shared memory: checked against its pool,
/// recorded in the cluster's race history (a write by this thread at the peer's byte), and
/// against the peer's exit.
pub fn st_shared_cluster_u32(addr: u32, rank: u32, value: u32) {
    let ctx = current();
    ctx.shared_store_remote(rank, ctx.pool_byte(addr), &value.to_le_bytes());
}
