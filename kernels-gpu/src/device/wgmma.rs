//! Warpgroup MMA (`wgmma`, sm_90a): four consecutive warps (a *warpgroup*, the first warp's
//! index a multiple of 4) multiply a 64×8 TF32 tile of A by an 8×N tile of B into a 64×N f32
//! accumulator spread over their 128 threads' registers, **asynchronously**: the instruction
//! returns at once, the tensor cores read the operands from shared memory while the warps go on,
//! and the warps wait for the result only when they need it.
//!
//! What a kernel writes, in order (PTX ISA, "Asynchronous Warpgroup Level Matrix
//! Multiply-Accumulate"):
//! 1. operands in shared memory in a layout a *matrix descriptor* describes ([`Descriptor`]),
//!    written by the TMA engine, or by the threads followed by [`fence_proxy_async`] (the
//!    tensor cores read through the *async proxy*, which does not see ordinary stores without
//!    it) and a barrier;
//! 2. [`fence`] (`wgmma.fence`): before the first `wgmma`, and whenever the warps touched the
//!    accumulator or A-fragment registers since the last one;
//! 3. any number of `wgmma.mma_async` ([`Tf32Wgmma::mma`], [`Tf32WgmmaRegisters::mma_with_a_registers`]);
//! 4. [`commit_group`]: the `wgmma`s issued since the last commit form a *group*;
//! 5. [`wait_group`]`::<N>()`: returns when at most N groups are still running. Only then may the
//!    warps read the accumulators, or overwrite the shared memory those groups read.
//!
//! TF32 operands must be **K-major**: each row of A (each m) and each column of B (each n) holds
//! its k values contiguously, in 16-byte chunks (the PTX ISA allows transposed layouts for
//! f16/bf16 only). Column-major B (cuBLAS's layout) is K-major as it lies; column-major A is not,
//! so `wgmma-tf32` loads A into registers ([`Tf32WgmmaRegisters::mma_with_a_registers`]), where the
//! layout is the fragment table's, whatever shared memory held.
//!
//! The emulator computes each `wgmma` from the operands the descriptors point at, so a wrong
//! descriptor or swizzle gives a wrong product there as on the GPU; and it reports a `wgmma`
//! without [`fence`], accumulators read before the [`wait_group`] that retires them
//! ([`Accumulator::get`]), and shared memory overwritten while a `wgmma` may read it.
use super::backend::hopper as backend;
use super::fp8::{E4m3, Fp8Format};
use super::half::{Bf16, Half, F16};
use super::mma::{FragA, Tf32};
use super::tma::Swizzle;

/// A `wgmma` matrix descriptor (PTX ISA, "Matrix Descriptor Format"): 64 bits that tell the
/// tensor cores where a K-major operand lies in shared memory.
///
/// | bits | field |
/// |---|---|
/// | 0–13 | start address >> 4 (of the shared-window address, its 18 low bits) |
/// | 16–29 | leading-dimension byte offset >> 4 (LBO) |
/// | 32–45 | stride-dimension byte offset >> 4 (SBO) |
/// | 49–51 | base offset (the swizzle pattern's phase when the tile is not aligned to it) |
/// | 62–63 | layout: 0 no swizzle, 1 128-byte, 2 64-byte, 3 32-byte swizzle |
///
/// For a K-major operand, rows come in groups of 8 ("core matrices" of 8 rows × 16 bytes). With
/// a swizzle of span `W` bytes, the 8 rows of a group lie `W` bytes apart, a row's 16-byte
/// chunks are consecutive (then permuted by the swizzle), groups lie SBO bytes apart and LBO is
/// unused. Without a swizzle, the 8 rows of a group lie 16 bytes apart, the second 16-byte chunk
/// of k lies LBO bytes after the first, and groups SBO apart.
///
/// A `wgmma` with TF32 operands reads k = 8 values per row, two 16-byte chunks. Inside a
/// 128-byte swizzled row (32 values of k), the k-step `j` of a slice starts `32·j` bytes later:
/// [`Descriptor::advanced`] moves the start address, and the swizzle, a function of the
/// absolute address, does the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor(u64);

impl Descriptor {
    /// A K-major operand starting at shared-window address `start` (16-byte aligned; with a
    /// swizzle, its pattern is taken from the absolute address, base offset 0, so a tile should
    /// start at a multiple of the swizzle's repeat, [`Swizzle::atom`]).
    #[inline(always)]
    pub const fn k_major(
        start: u32,
        swizzle: Swizzle,
        leading_byte_offset: u32,
        stride_byte_offset: u32,
    ) -> Self {
        Descriptor(
            encode(start)
                | encode(leading_byte_offset) << 16
                | encode(stride_byte_offset) << 32
                | swizzle.descriptor_code() << 62,
        )
    }

    /// An MN-major 16-bit operand at `start` with a swizzle: `leading_byte_offset` (LBO) from one
    /// swizzle row's worth of m (or n) to the next, `stride_byte_offset` (SBO) from one group of 8
    /// k to the next (see [`HalfWgmma`]). The bits are laid out as for [`Descriptor::k_major`];
    /// the instruction's transpose bit says which meaning they have.
    #[inline(always)]
    pub const fn mn_major(
        start: u32,
        swizzle: Swizzle,
        leading_byte_offset: u32,
        stride_byte_offset: u32,
    ) -> Self {
        Self::k_major(start, swizzle, leading_byte_offset, stride_byte_offset)
    }

    /// The same operand `bytes` further along (a multiple of 16): the next k-step of a slice.
    ///
    /// Only the start address moves, a field of the low 32 bits that a shared-memory address
    /// (under 256 KiB) never carries out of: added as a 32-bit word, the high word stays the
    /// constant it was built from, and ptxas no longer adds 64 bits per k-step: the FP8
    /// block-scaled kernel's loop went from 149 to 145 instructions per slice (0.4–1.7% faster on an
    /// H200), the 16-bit kernels' from 114, 105, 82 to 103, 97, 76 (unchanged in time),
    /// `docs/results/h200-2026-11-28-fp8-stream-k/run3/`.
    #[inline(always)]
    pub const fn advanced(self, bytes: u32) -> Self {
        let low = (self.0 as u32).wrapping_add(bytes >> 4);
        Descriptor(self.0 & !0xFFFF_FFFF | low as u64)
    }

    /// The 64 bits the instruction takes.
    #[inline(always)]
    pub const fn bits(self) -> u64 {
        self.0
    }
}

/// The PTX ISA's `matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4`.
const fn encode(x: u32) -> u64 {
    ((x & 0x3FFFF) >> 4) as u64
}

/// This thread's share of a 64×N f32 accumulator: N/2 registers (`R = N/2`). Lane `L` of warp
/// `w` of the warpgroup holds register `i` at row `16w + L/4 + 8·((i/2) % 2)`, column
/// `8·(i/4) + 2·(L % 4) + i % 2` ([`Accumulator::position`]): the `mma.m16n8` accumulator
/// table, repeated N/8 times along the columns.
#[derive(Clone, Copy, Debug)]
pub struct Accumulator<const R: usize> {
    registers: [f32; R],
    /// The emulator's record of the `wgmma` group that last wrote the registers (`u32::MAX`:
    /// none), so that reading them before that group is retired is reported.
    #[cfg(not(target_arch = "nvptx64"))]
    group: u32,
}

impl<const R: usize> Default for Accumulator<R> {
    #[inline(always)]
    fn default() -> Self {
        Self::zero()
    }
}

impl<const R: usize> Accumulator<R> {
    /// All zeros (a first `wgmma` with `accumulate = false` ignores them anyway).
    #[inline(always)]
    pub fn zero() -> Self {
        Accumulator {
            registers: [0.0; R],
            #[cfg(not(target_arch = "nvptx64"))]
            group: u32::MAX,
        }
    }

    /// An accumulator holding `registers`: a value computed by the threads (the block-scaled
    /// kernel's promoted sum on its way to the epilogue; a probe's chosen starting value).
    #[inline(always)]
    pub fn from_registers(registers: [f32; R]) -> Self {
        Accumulator {
            registers,
            #[cfg(not(target_arch = "nvptx64"))]
            group: u32::MAX,
        }
    }

    /// The registers, once the `wgmma` that wrote them is retired (the emulator checks it).
    #[inline(always)]
    pub fn get(&self) -> &[f32; R] {
        #[cfg(not(target_arch = "nvptx64"))]
        if self.group != u32::MAX {
            crate::emu::current().wgmma_check_retired(self.group, "reading `wgmma` accumulators");
        }
        &self.registers
    }

    /// The (row, column) of the 64×N tile that register `i` of lane `lane` of warp
    /// `warp_in_group` holds.
    #[inline(always)]
    pub const fn position(warp_in_group: u32, lane: u32, i: u32) -> (u32, u32) {
        (
            16 * warp_in_group + lane / 4 + 8 * ((i >> 1) & 1),
            8 * (i >> 2) + 2 * (lane % 4) + (i & 1),
        )
    }

    /// The emulator's `wgmma` `op` into these registers; the group it joins is remembered for
    /// the reads that must wait for it.
    #[cfg(not(target_arch = "nvptx64"))]
    fn emulate(
        &mut self,
        op: &'static str,
        a: backend::OperandA,
        b: Descriptor,
        accumulate: bool,
        kind: backend::OperandKind,
    ) {
        self.group = backend::wgmma(op, &mut self.registers, a, b.bits(), accumulate, kind);
    }
}

/// `wgmma.mma_async.sync.aligned.m64n{N}k8.f32.tf32.tf32` for the accumulator of one N
/// (`Accumulator<8>`: N = 16, …, `<32>`: N = 64, `<64>`: N = 128, `<128>`: N = 256), both
/// operands in shared memory.
pub trait Tf32Wgmma: Registers {
    /// The accumulator's columns.
    const N: u32;

    /// `D = A·B (+ D)`, A (64×8) and B (8×N), both K-major, in shared memory. With
    /// `accumulate` false the old accumulator is ignored (the `scale-d` predicate).
    fn mma(&mut self, a: Descriptor, b: Descriptor, accumulate: bool);
}

/// The TF32 `wgmma` with A from registers, at the shapes of [`crate::variants::wgmma_tf32`]
/// (N = 64, 128, 256), whose A is M-major in shared memory.
pub trait Tf32WgmmaRegisters: Tf32Wgmma {
    /// As [`Tf32Wgmma::mma`] with this thread's A fragment in registers: `a.0[i]` is row
    /// `16w + L/4 + 8·(i % 2)`, k `L % 4 + 4·(i / 2)` of the 64×8 A (the `mma.m16n8k8` table of
    /// [`super::mma`], for the warp's 16 rows).
    ///
    /// The tensor cores read these registers until the group retires: `a` must stay unchanged
    /// until the [`wait_group`] that retires it. The emulator checks that the fragment at `a`'s
    /// address still holds the same bits then, so a kernel keeps its fragments in buffers that
    /// live across the group (one per group in flight), not in temporaries.
    fn mma_with_a_registers(&mut self, a: &FragA<Tf32, 4>, b: Descriptor, accumulate: bool);
}

/// What every accumulator shape has, whatever the operand type.
pub trait Registers {
    /// A compiler fence on the registers: nothing may be cached or moved across it while a
    /// `wgmma` writes them (a no-op instruction; see the backend).
    fn fence_registers(&mut self);
}

macro_rules! registers {
    ($r:literal, $fence:ident) => {
        impl Registers for Accumulator<$r> {
            #[inline(always)]
            fn fence_registers(&mut self) {
                #[cfg(target_arch = "nvptx64")]
                backend::$fence(&mut self.registers);
            }
        }
    };
}

registers!(4, fence_operands_4);
registers!(8, fence_operands_8);
registers!(12, fence_operands_12);
registers!(16, fence_operands_16);
registers!(24, fence_operands_24);
registers!(28, fence_operands_28);
registers!(32, fence_operands_32);
registers!(64, fence_operands_64);
registers!(128, fence_operands_128);

macro_rules! tf32_wgmma_shared {
    ($r:literal, $n:literal, $ss:ident) => {
        impl Tf32Wgmma for Accumulator<$r> {
            const N: u32 = $n;

            #[inline(always)]
            fn mma(&mut self, a: Descriptor, b: Descriptor, accumulate: bool) {
                #[cfg(target_arch = "nvptx64")]
                backend::$ss(&mut self.registers, a.bits(), b.bits(), accumulate);
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let op = concat!("wgmma.m64n", $n, "k8.tf32 (A in shared memory)");
                    let a = backend::OperandA::Shared(a.bits());
                    let kind = backend::OperandKind::Tf32;
                    self.emulate(op, a, b, accumulate, kind);
                }
            }
        }
    };
}

macro_rules! tf32_wgmma {
    ($r:literal, $n:literal, $ss:ident, $rs:ident) => {
        tf32_wgmma_shared!($r, $n, $ss);

        impl Tf32WgmmaRegisters for Accumulator<$r> {
            #[inline(always)]
            fn mma_with_a_registers(
                &mut self,
                a: &FragA<Tf32, 4>,
                b: Descriptor,
                accumulate: bool,
            ) {
                #[cfg(not(target_arch = "nvptx64"))]
                let held_at = a as *const FragA<Tf32, 4> as usize;
                let a = a.0.map(Tf32::to_bits);
                #[cfg(target_arch = "nvptx64")]
                backend::$rs(&mut self.registers, a, b.bits(), accumulate);
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let op = concat!("wgmma.m64n", $n, "k8.tf32 (A in registers)");
                    let a = backend::OperandA::Registers { bits: a, held_at };
                    let kind = backend::OperandKind::Tf32;
                    self.emulate(op, a, b, accumulate, kind);
                }
            }
        }
    };
}

tf32_wgmma!(32, 64, wgmma_m64n64k8_tf32_ss, wgmma_m64n64k8_tf32_rs);
tf32_wgmma!(64, 128, wgmma_m64n128k8_tf32_ss, wgmma_m64n128k8_tf32_rs);
tf32_wgmma!(128, 256, wgmma_m64n256k8_tf32_ss, wgmma_m64n256k8_tf32_rs);
tf32_wgmma_shared!(8, 16, wgmma_m64n16k8_tf32_ss);
tf32_wgmma_shared!(16, 32, wgmma_m64n32k8_tf32_ss);
tf32_wgmma_shared!(24, 48, wgmma_m64n48k8_tf32_ss);
tf32_wgmma_shared!(28, 56, wgmma_m64n56k8_tf32_ss);

/// An operand whose k values are contiguous in shared memory (each row of A, each column of B):
/// the transpose bit 0. TF32 operands must be K-major.
pub const K_MAJOR: u32 = 0;
/// An operand whose m (of A) or n (of B) values are contiguous: the transpose bit 1, for 16-bit
/// operands only. Column-major A (m×k, m contiguous) is MN-major as it lies.
pub const MN_MAJOR: u32 = 1;

/// `wgmma.mma_async.sync.aligned.m64n{N}k16.f32.{bf16,f16}` for the accumulator of one N, with
/// A (64×16) and B (16×N) in shared memory, each K-major or MN-major (`TA`, `TB`: [`K_MAJOR`],
/// [`MN_MAJOR`]); the products are accumulated in f32.
///
/// An MN-major operand's descriptor means something else than a K-major one's (PTX ISA,
/// "Shared Memory Matrix Layout"; CUTLASS's `make_gmma_desc<Major::MN>`): with a swizzle of row
/// pitch `W` bytes, each row of `W` bytes holds `W/2` consecutive m (or n) of one k, 8 rows (k
/// = 0..8) make one swizzle atom, the next 8 k lie SBO bytes further, and the next `W/2` of m
/// (or n) LBO bytes further ([`Descriptor::mn_major`]).
pub trait HalfWgmma<H: Half>: Registers {
    /// The accumulator's columns.
    const N: u32;

    /// `D = A·B (+ D)`; with `accumulate` false the old accumulator is ignored.
    fn mma<const TA: u32, const TB: u32>(&mut self, a: Descriptor, b: Descriptor, accumulate: bool);
}

macro_rules! half_wgmma {
    ($h:ty, $r:literal, $n:literal, $ss:ident) => {
        impl HalfWgmma<$h> for Accumulator<$r> {
            const N: u32 = $n;

            #[inline(always)]
            fn mma<const TA: u32, const TB: u32>(
                &mut self,
                a: Descriptor,
                b: Descriptor,
                accumulate: bool,
            ) {
                const { assert!(TA <= 1 && TB <= 1) };
                #[cfg(target_arch = "nvptx64")]
                backend::$ss::<TA, TB>(&mut self.registers, a.bits(), b.bits(), accumulate);
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let op = concat!("wgmma.m64n", $n, "k16.", stringify!($h));
                    let a = backend::OperandA::Shared(a.bits());
                    let kind = backend::OperandKind::Half {
                        dtype: <$h as Half>::DTYPE,
                        a_mn_major: TA == MN_MAJOR,
                        b_mn_major: TB == MN_MAJOR,
                    };
                    self.emulate(op, a, b, accumulate, kind);
                }
            }
        }
    };
}

half_wgmma!(Bf16, 4, 8, wgmma_m64n8k16_bf16_ss);
half_wgmma!(Bf16, 8, 16, wgmma_m64n16k16_bf16_ss);
half_wgmma!(Bf16, 16, 32, wgmma_m64n32k16_bf16_ss);
half_wgmma!(Bf16, 12, 24, wgmma_m64n24k16_bf16_ss);
half_wgmma!(Bf16, 24, 48, wgmma_m64n48k16_bf16_ss);
half_wgmma!(Bf16, 28, 56, wgmma_m64n56k16_bf16_ss);
half_wgmma!(Bf16, 32, 64, wgmma_m64n64k16_bf16_ss);
half_wgmma!(Bf16, 64, 128, wgmma_m64n128k16_bf16_ss);
half_wgmma!(Bf16, 128, 256, wgmma_m64n256k16_bf16_ss);
half_wgmma!(F16, 4, 8, wgmma_m64n8k16_f16_ss);
half_wgmma!(F16, 8, 16, wgmma_m64n16k16_f16_ss);
half_wgmma!(F16, 16, 32, wgmma_m64n32k16_f16_ss);
half_wgmma!(F16, 12, 24, wgmma_m64n24k16_f16_ss);
half_wgmma!(F16, 24, 48, wgmma_m64n48k16_f16_ss);
half_wgmma!(F16, 28, 56, wgmma_m64n56k16_f16_ss);
half_wgmma!(F16, 32, 64, wgmma_m64n64k16_f16_ss);
half_wgmma!(F16, 64, 128, wgmma_m64n128k16_f16_ss);
half_wgmma!(F16, 128, 256, wgmma_m64n256k16_f16_ss);

/// `wgmma.mma_async.sync.aligned.m64n{N}k32.f32.e4m3.{e4m3,e5m2}` for the accumulator of one N:
/// A (64×32) e4m3 and B (32×N) e4m3 or e5m2 in shared memory, **both K-major** (the PTX ISA
/// gives 8-bit operands no transpose bits), accumulated in f32 registers.
///
/// A K-major row of 32 e4m3 is 32 bytes, two 16-byte chunks, as a row of 16 bf16 or 8 TF32:
/// the descriptors are built as for those ([`Descriptor::k_major`]), and a k-step of 32 moves
/// the start 32 bytes along a 128-byte swizzled row (128 values of k).
///
/// How the tensor cores add the 32 products into the accumulator is not the f32 addition of
/// the other types (DeepSeek-V3's report: "about 14 bits" are kept): measured on the H100, it
/// is in `docs/hopper-isa-notes.md`, and the emulator does the same.
pub trait Fp8Wgmma: Registers {
    /// The accumulator's columns.
    const N: u32;

    /// `D = A·B (+ D)` with A and B e4m3; with `accumulate` false the old accumulator is ignored.
    #[inline(always)]
    fn mma(&mut self, a: Descriptor, b: Descriptor, accumulate: bool) {
        self.mma_b::<E4m3>(a, b, accumulate)
    }

    /// `D = A·B (+ D)` with A e4m3 and B in format `F` (`wgmma…f32.e4m3.e5m2` for e5m2: the
    /// backward pass's gradients).
    fn mma_b<F: Fp8Format>(&mut self, a: Descriptor, b: Descriptor, accumulate: bool);
}

macro_rules! fp8_wgmma {
    ($r:literal, $n:literal, $ss:ident) => {
        impl Fp8Wgmma for Accumulator<$r> {
            const N: u32 = $n;

            #[inline(always)]
            fn mma_b<F: Fp8Format>(&mut self, a: Descriptor, b: Descriptor, accumulate: bool) {
                #[cfg(target_arch = "nvptx64")]
                if F::E5M2 {
                    backend::$ss::<true>(&mut self.registers, a.bits(), b.bits(), accumulate);
                } else {
                    backend::$ss::<false>(&mut self.registers, a.bits(), b.bits(), accumulate);
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let op = if F::E5M2 {
                        concat!("wgmma.m64n", $n, "k32.e4m3.e5m2")
                    } else {
                        concat!("wgmma.m64n", $n, "k32.e4m3")
                    };
                    let a = backend::OperandA::Shared(a.bits());
                    let kind = backend::OperandKind::Fp8 { b_e5m2: F::E5M2 };
                    self.emulate(op, a, b, accumulate, kind);
                }
            }
        }
    };
}

fp8_wgmma!(4, 8, wgmma_m64n8k32_e4m3_ss);
fp8_wgmma!(8, 16, wgmma_m64n16k32_e4m3_ss);
fp8_wgmma!(12, 24, wgmma_m64n24k32_e4m3_ss);
fp8_wgmma!(16, 32, wgmma_m64n32k32_e4m3_ss);
fp8_wgmma!(24, 48, wgmma_m64n48k32_e4m3_ss);
fp8_wgmma!(28, 56, wgmma_m64n56k32_e4m3_ss);
fp8_wgmma!(32, 64, wgmma_m64n64k32_e4m3_ss);
fp8_wgmma!(64, 128, wgmma_m64n128k32_e4m3_ss);
fp8_wgmma!(128, 256, wgmma_m64n256k32_e4m3_ss);

/// `wgmma.fence.sync.aligned`: orders the warps' register accesses before the next `wgmma`.
#[inline(always)]
pub fn fence() {
    backend::wgmma_fence()
}

/// `wgmma.commit_group.sync.aligned`: the `wgmma`s issued since the last commit become a group.
#[inline(always)]
pub fn commit_group() {
    backend::wgmma_commit()
}

/// `wgmma.wait_group.sync.aligned PENDING`: waits until at most `PENDING` groups run.
#[inline(always)]
pub fn wait_group<const PENDING: u32>() {
    backend::wgmma_wait::<PENDING>()
}

/// `fence.proxy.async.shared::cta`: this thread's ordinary shared-memory stores become visible
/// to the async proxy (the tensor cores and the TMA engine) once a barrier follows.
#[inline(always)]
pub fn fence_proxy_async() {
    backend::fence_proxy_async()
}

/// `setmaxnreg.inc.sync.aligned.u32 count` (sm_90a): the warpgroup takes registers from the
/// pool the others released (`count` in 24..=256, a multiple of 8, a constant once inlined: it
/// is an immediate; the kernel needs a register cap at entry, i.e. launch bounds).
#[inline(always)]
pub fn setmaxnreg_inc(count: u32) {
    backend::setmaxnreg(true, count)
}

/// `setmaxnreg.dec.sync.aligned.u32 count`: the warpgroup gives registers back.
#[inline(always)]
pub fn setmaxnreg_dec(count: u32) {
    backend::setmaxnreg(false, count)
}
