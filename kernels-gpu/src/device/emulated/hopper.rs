//! Hopper's asynchronous instructions on the CPU, exact to the PTX ISA where it is exact, each
//! driven by the emulator ([`crate::emu`]), which orders them (mbarrier phases, `wgmma` groups,
//! the async proxy) and reports misuse.
//!
//! - **TMA** ([`tma_load_2d`]): the box of a tensor map (the emulator's own encoding of the
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
    })
}

/// The shared address at which a swizzled copy (or `wgmma` read) finds the bytes that the
/// unswizzled layout puts at `address`: the 16-byte chunk bits XORed with the row bits above
/// them, `mask` (1, 3, 7) of them, after subtracting the descriptor's base offset.
pub(crate) fn swizzle_address(address: u32, mask: u32, base_offset: u32) -> u32 {
    address ^ ((((address >> 7).wrapping_sub(base_offset)) & mask) << 4)
}

/// `cp.async.bulk.tensor.2d…mbarrier::complete_tx::bytes [dst], [map, {x, y}], [bar]`.
///
/// # Safety
/// `map` must point to a tensor map in a buffer of the launch.
pub unsafe fn tma_load_2d(map: *const u8, dst: u32, x: i32, y: i32, bar: u32) {
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
    let (mask, span) = (m.swizzle.chunk_mask(), m.swizzle.span());
    if span != 0 && row_bytes != span {
        ctx.fault(
            FaultKind::TmaMisuse,
            format!("a {span}-byte swizzled box whose rows are {row_bytes} bytes: the emulator implements rows of exactly the swizzle span (the PTX ISA does not document narrower ones)"),
        );
    }
    if !dst.is_multiple_of(128) {
        ctx.fault(
            FaultKind::TmaMisuse,
            format!("TMA destination at shared address {dst}: it must be 128-byte aligned"),
        );
    }
    let at = ctx.pool_byte(dst);
    ctx.check_pool_range(at, bytes, 16, "TMA destination");
    let mut data = vec![0u8; bytes as usize];
    let e = m.element_bytes as usize;
    for row in 0..m.box_dims[1] {
        let gy = y as i64 + row as i64;
        for col in 0..m.box_dims[0] {
            let gx = x as i64 + col as i64;
            let inside = (0..m.dims[0] as i64).contains(&gx) && (0..m.dims[1] as i64).contains(&gy);
            let linear = dst + row * row_bytes + col * m.element_bytes;
            let swizzled = if span == 0 {
                linear
            } else {
                swizzle_address(linear, mask, 0)
            };
            let slot = (swizzled - dst) as usize;
            if inside {
                let src = m.address as usize
                    + gy as usize * m.row_stride_bytes as usize
                    + gx as usize * e;
                ctx.check_global(src, e, 1);
                let value = unsafe { core::slice::from_raw_parts(src as *const u8, e) };
                data[slot..slot + e].copy_from_slice(value);
            }
        }
    }
    ctx.tma_write(at, &data, ctx.pool_byte(bar));
}

/// The emulator needs no descriptor cache.
///
/// # Safety
/// None needed here; the GPU version's contract applies.
pub unsafe fn tma_prefetch(_map: *const u8) {}

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

/// `setmaxnreg` changes nothing the emulator models; it is still a warp-wide instruction.
pub fn setmaxnreg_inc<const N: u32>() {
    current().warp_collective("setmaxnreg.inc", &[], true, |_| ());
}

pub fn setmaxnreg_dec<const N: u32>() {
    current().warp_collective("setmaxnreg.dec", &[], true, |_| ());
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

    /// The shared address of element (row, kk) of a 4-byte K-major operand.
    pub(crate) fn address(&self, row: u32, kk: u32) -> u32 {
        let (chunk, word) = (kk / 4, kk % 4);
        let (pitch, mask) = match self.layout {
            1 => (128, 7),
            2 => (64, 3),
            3 => (32, 1),
            _ => {
                return self.start
                    + (row % 8) * 16
                    + (row / 8) * self.stride_byte_offset
                    + chunk * self.leading_byte_offset
                    + 4 * word
            }
        };
        let pre = self.start
            + (row % 8) * pitch
            + (row / 8) * self.stride_byte_offset
            + 16 * chunk
            + 4 * word;
        swizzle_address(pre, mask, self.base_offset)
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

/// `wgmma.mma_async…m64n{N}k8.f32.tf32.tf32` for the calling lane: `d` holds its N/2
/// accumulators; returns the group the operation belongs to.
pub fn wgmma_tf32(op: &'static str, d: &mut [f32], a: OperandA, b: u64, scale_d: bool) -> u32 {
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
    // This warp's 16 rows of A (8 k each) and B's N rows (its columns, k-contiguous).
    let mut matrix_a = [[0f64; 8]; 16];
    // The 16-byte chunks read, for the race history: one lane records the warp's reads.
    let mut reads: Vec<(u32, u32)> = Vec::new();
    let read = |address: u32, reads: &mut Vec<(u32, u32)>| -> f64 {
        let at = ctx.pool_byte(address);
        ctx.check_pool_range(at, 4, 4, op);
        let chunk = at & !15;
        if lane == 0 && reads.last() != Some(&(chunk, 16)) {
            reads.push((chunk, 16));
        }
        let pool = ctx.block().pool_mut();
        let bits = u32::from_le_bytes(pool[at as usize..at as usize + 4].try_into().unwrap());
        tf32_value(bits as u64)
    };
    match a {
        OperandA::Shared(desc) => {
            let a_desc = Descriptor::decode(desc);
            for (r, row) in matrix_a.iter_mut().enumerate() {
                for (kk, value) in row.iter_mut().enumerate() {
                    *value = read(
                        a_desc.address(16 * warp_in_group + r as u32, kk as u32),
                        &mut reads,
                    );
                }
            }
        }
        OperandA::Registers { bits, held_at } => {
            ctx.wgmma_hold(held_at, bits);
            for (l, regs) in registers.iter().enumerate() {
                let (g, t) = (l / 4, l % 4);
                for (i, bits) in regs.iter().enumerate() {
                    matrix_a[g + 8 * (i & 1)][t + 4 * (i >> 1)] = tf32_value(*bits as u64);
                }
            }
        }
    }
    let mut matrix_b = vec![[0f64; 8]; n as usize];
    for (col, row) in matrix_b.iter_mut().enumerate() {
        for (kk, value) in row.iter_mut().enumerate() {
            *value = read(b_desc.address(col as u32, kk as u32), &mut reads);
        }
    }
    if lane == 0 {
        reads.sort_unstable();
        reads.dedup();
        ctx.wgmma_reads(&reads);
    }
    let (g, t) = (lane / 4, lane % 4);
    for (i, value) in d.iter_mut().enumerate() {
        let i = i as u32;
        let row = (g + 8 * ((i >> 1) & 1)) as usize;
        let col = (8 * (i >> 2) + 2 * t + (i & 1)) as usize;
        let dot: f64 = (0..8).map(|k| matrix_a[row][k] * matrix_b[col][k]).sum();
        let c = if scale_d { *value as f64 } else { 0.0 };
        *value = (c + dot) as f32;
    }
    ctx.wgmma_group()
}
