//! The device layer on the CPU: each operation asks the emulator ([`crate::emu`]) which GPU
//! thread is running, checks the access and performs it on host memory. Shared addresses are
//! shared-window addresses, as on the GPU: the pool starts at [`SHARED_POOL_BASE`].
use crate::emu::{current, FaultKind, SHARED_POOL_BASE};

pub mod hopper;

macro_rules! index_fns {
    ($($name:ident => |$c:ident| $value:expr),* $(,)?) => {$(
        #[inline]
        pub fn $name() -> u32 {
            let $c = current();
            $value
        }
    )*};
}

index_fns! {
    thread_idx_x => |c| c.thread.0,
    thread_idx_y => |c| c.thread.1,
    block_idx_x => |c| c.block().block.0,
    block_idx_y => |c| c.block().block.1,
    // The emulator's grids have two dimensions: a strided batch, the GPU's grid z, is one
    // launch per member there (`gpu_gemm::emulator`).
    block_idx_z => |_c| 0,
    block_dim_x => |c| c.block().block_dim.0,
    block_dim_y => |c| c.block().block_dim.1,
    grid_dim_x => |c| c.block().grid_dim.0,
    grid_dim_y => |c| c.block().grid_dim.1,
}

/// Suspends the thread until every live thread of its block has arrived.
pub fn sync_threads() {
    current().barrier();
}

/// Suspends the thread until its warp's 32 lanes have arrived, their clocks joined in the race
/// history.
pub fn sync_warp() {
    current().sync_warp();
}

/// Whether `p` holds in every lane of the warp (`vote.sync.all.pred`): a warp-wide exchange
/// that orders no memory access, as a shuffle.
pub fn vote_all(p: bool) -> bool {
    current().vote_all(p)
}

/// The shared-window address of the block's pool (16-byte aligned and no more: see
/// [`SHARED_POOL_BASE`]).
#[inline]
pub fn shared_pool_base() -> u32 {
    SHARED_POOL_BASE
}

/// Reports an index past the end of a view, before it silently lands in a neighbouring array.
pub fn check_shared_view(byte_offset: u32, len: u32, index: u32, width: u32) {
    if index.checked_add(width).is_none_or(|end| end > len) {
        current().fault(
            FaultKind::SharedOutOfBounds,
            format!(
                "index {index} (width {width}) of a shared view of {len} elements at pool byte {byte_offset}"
            ),
        );
    }
}

/// The per-type half of the device layer. Implemented for `f32` and `f64` only.
///
/// The unsafe functions have the safety contract of their GPU versions (a pointer inside a
/// buffer of the launch); here every access is also validated before it is made.
#[allow(clippy::missing_safety_doc)]
pub trait Element: Sized + Copy {
    fn fused_mul_add(a: Self, b: Self, c: Self) -> Self;
    fn to_bits64(self) -> u64;
    fn from_bits64(bits: u64) -> Self;

    unsafe fn ld_global(p: *const Self) -> Self {
        current().check_global(p as usize, size_of::<Self>(), 1);
        unsafe { p.read() }
    }
    unsafe fn ld_global_nc(p: *const Self) -> Self {
        unsafe { Self::ld_global(p) }
    }
    unsafe fn ld_global_x4(p: *const Self) -> [Self; 4] {
        current().check_global(p as usize, 4 * size_of::<Self>(), 16);
        unsafe { (p as *const [Self; 4]).read_unaligned() }
    }
    unsafe fn st_global(p: *mut Self, v: Self) {
        current().check_global(p as usize, size_of::<Self>(), 1);
        unsafe { p.write(v) }
    }
    unsafe fn ld_global_x2(p: *const Self) -> [Self; 2] {
        current().check_global(p as usize, 2 * size_of::<Self>(), 2 * size_of::<Self>());
        unsafe { (p as *const [Self; 2]).read_unaligned() }
    }
    unsafe fn st_global_x2(p: *mut Self, v: [Self; 2]) {
        current().check_global(p as usize, 2 * size_of::<Self>(), 2 * size_of::<Self>());
        unsafe { (p as *mut [Self; 2]).write_unaligned(v) }
    }
    unsafe fn st_global_x4(p: *mut Self, v: [Self; 4]) {
        current().check_global(p as usize, 4 * size_of::<Self>(), 16);
        unsafe { (p as *mut [Self; 4]).write_unaligned(v) }
    }
    unsafe fn ld_shared(addr: u32) -> Self {
        let n = size_of::<Self>();
        let addr = current().pool_byte(addr);
        current().shared_access(addr, n as u32, false);
        read_pool(addr as usize)
    }
    unsafe fn st_shared(addr: u32, v: Self) {
        let n = size_of::<Self>();
        let addr = current().pool_byte(addr);
        current().shared_access(addr, n as u32, true);
        write_pool(addr as usize, v)
    }
    unsafe fn ld_shared_x4(addr: u32) -> [Self; 4] {
        let n = size_of::<Self>();
        let addr = current().pool_byte(addr);
        // One 16-byte access per 16 bytes, as on the GPU (f64: two of them).
        for part in (0..4 * n as u32).step_by(16) {
            current().shared_access(addr + part, 16, false);
        }
        core::array::from_fn(|i| read_pool(addr as usize + i * n))
    }
    unsafe fn ld_shared_x2(addr: u32) -> [Self; 2] {
        let n = size_of::<Self>();
        let addr = current().pool_byte(addr);
        current().shared_access(addr, 2 * n as u32, false);
        core::array::from_fn(|i| read_pool(addr as usize + i * n))
    }
    unsafe fn st_shared_x4(addr: u32, v: [Self; 4]) {
        let n = size_of::<Self>();
        let addr = current().pool_byte(addr);
        for part in (0..4 * n as u32).step_by(16) {
            current().shared_access(addr + part, 16, true);
        }
        for (i, value) in v.into_iter().enumerate() {
            write_pool(addr as usize + i * n, value);
        }
    }
    fn shfl_idx(v: Self, src_lane: u32) -> Self {
        Self::from_bits64(current().shuffle(v.to_bits64(), src_lane))
    }
    unsafe fn cp_async_x4(dst: u32, src: *const Self, valid: bool) {
        unsafe { cp_async::<Self>(dst, src, 4, valid) }
    }
    unsafe fn cp_async_x2(dst: u32, src: *const Self, valid: bool) {
        unsafe { cp_async::<Self>(dst, src, 2, valid) }
    }
    unsafe fn cp_async_x1(dst: u32, src: *const Self, valid: bool) {
        unsafe { cp_async::<Self>(dst, src, 1, valid) }
    }
}

/// An asynchronous copy of `count` elements: the source is read now (A and B do not change
/// during a launch), the shared memory is written when a `cp_async_wait` retires its group,
/// which is the latest moment the GPU may write it. A thread that reads the destination
/// before its copy's wait and a barrier sees stale data or is reported as a race.
unsafe fn cp_async<T: Element>(dst: u32, src: *const T, count: usize, valid: bool) {
    let bytes = count * size_of::<T>();
    let data = if valid {
        current().check_global(src as usize, bytes, bytes.min(16));
        let mut data = vec![0u8; bytes];
        unsafe { core::ptr::copy_nonoverlapping(src.cast::<u8>(), data.as_mut_ptr(), bytes) };
        data
    } else {
        vec![0u8; bytes]
    };
    let dst = current().pool_byte(dst);
    current().issue_async_copy(dst, data);
}

/// `cp.async.commit_group`.
pub fn cp_async_commit() {
    current().commit_async_copies();
}

/// `cp.async.wait_group pending`: performs the copies of all but the `pending` most recent
/// committed groups.
pub fn cp_async_wait(pending: u32) {
    let ctx = current();
    for (address, data) in ctx.retire_async_copies(pending as usize) {
        // One checked 16-byte (or element-sized) access per piece, as the GPU writes them.
        let piece = data.len().min(16);
        for (i, chunk) in data.chunks(piece).enumerate() {
            let at = address + (i * piece) as u32;
            ctx.shared_access(at, piece as u32, true);
            ctx.block().pool_mut()[at as usize..at as usize + piece].copy_from_slice(chunk);
        }
    }
}

fn read_pool<T: Element>(at: usize) -> T {
    let n = size_of::<T>();
    let pool = current().block().pool_mut();
    let mut bytes = [0u8; 8];
    bytes[..n].copy_from_slice(&pool[at..at + n]);
    T::from_bits64(u64::from_le_bytes(bytes))
}

fn write_pool<T: Element>(at: usize, value: T) {
    let n = size_of::<T>();
    let mut pool = current().block().pool_mut();
    pool[at..at + n].copy_from_slice(&value.to_bits64().to_le_bytes()[..n]);
}

impl Element for f32 {
    fn fused_mul_add(a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
    fn to_bits64(self) -> u64 {
        self.to_bits() as u64
    }
    fn from_bits64(bits: u64) -> f32 {
        f32::from_bits(bits as u32)
    }
}

impl Element for f64 {
    fn fused_mul_add(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
    fn to_bits64(self) -> u64 {
        self.to_bits()
    }
    fn from_bits64(bits: u64) -> f64 {
        f64::from_bits(bits)
    }
}

/// `cvt.rna.tf32.f32`, bit-exact: round to nearest with ties away from zero at mantissa bit
/// 13, i.e. add half a TF32 unit in the last place (`0x1000`) to the magnitude and clear the 13
/// low bits. A carry out of the mantissa increments the exponent, which is the correct rounding
/// (and turns the largest values into infinity); infinities are unchanged, and NaN stays NaN.
pub fn cvt_rna_tf32(x: f32) -> u32 {
    if x.is_nan() {
        return 0x7FFF_FFFF; // the GPU's canonical NaN
    }
    let bits = x.to_bits();
    let (sign, magnitude) = (bits & 0x8000_0000, bits & 0x7FFF_FFFF);
    if magnitude >= 0x7F80_0000 {
        return bits; // ±infinity
    }
    sign | (magnitude + 0x1000).min(0x7F80_0000) & 0xFFFF_E000
}

/// The TF32 value of `mma` register bits: the multiplier reads only the top 19 bits, so
/// unconverted f32 bits are truncated toward zero (what the H100 does: the GPU tests check it;
/// the PTX ISA leaves the `.tf32` layout to the implementation).
pub(crate) fn tf32_value(bits: u64) -> f64 {
    f32::from_bits(bits as u32 & 0xFFFF_E000) as f64
}

/// The lanes' (groupID, threadID_in_group) of the PTX ISA's fragment tables.
fn group_and_thread(lane: usize) -> (usize, usize) {
    (lane / 4, lane % 4)
}

/// The accumulator positions of lane `lane` in every 16×8 shape: `[(g, 2t), (g, 2t+1),
/// (g+8, 2t), (g+8, 2t+1)]` (PTX ISA, "Matrix Fragments for mma.m16n8k8", C/D).
fn accumulator_positions(lane: usize) -> [(usize, usize); 4] {
    let (g, t) = group_and_thread(lane);
    [
        (g, 2 * t),
        (g, 2 * t + 1),
        (g + 8, 2 * t),
        (g + 8, 2 * t + 1),
    ]
}

/// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`, for the calling lane.
///
/// The warp's A (16×8) and B (8×8) are assembled from every lane's registers with the PTX
/// ISA's table: lane (g, t) holds `a = [A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4]]` and
/// `b = [B[t][g], B[t+4][g]]`. The ISA leaves the accumulation's order and rounding to the
/// implementation ("at least single precision"); the emulator adds the exact products to C in
/// f64 and rounds once to f32, so its result may differ from the GPU's in the last bits.
pub fn mma_m16n8k8_tf32(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
    let lane = current().linear as usize % 32;
    let registers = [a[0], a[1], a[2], a[3], b[0], b[1]].map(u64::from);
    let (matrix_a, matrix_b) =
        current().warp_collective("mma.m16n8k8.tf32", &registers, true, |warp| {
            let mut matrix_a = [[0f64; 8]; 16];
            let mut matrix_b = [[0f64; 8]; 8];
            for (lane, deposit) in warp.iter().enumerate() {
                let (g, t) = group_and_thread(lane);
                let r = &deposit.registers;
                matrix_a[g][t] = tf32_value(r[0]);
                matrix_a[g + 8][t] = tf32_value(r[1]);
                matrix_a[g][t + 4] = tf32_value(r[2]);
                matrix_a[g + 8][t + 4] = tf32_value(r[3]);
                matrix_b[t][g] = tf32_value(r[4]);
                matrix_b[t + 4][g] = tf32_value(r[5]);
            }
            (matrix_a, matrix_b)
        });
    let mut d = c;
    for (i, (row, col)) in accumulator_positions(lane).into_iter().enumerate() {
        let dot: f64 = (0..8).map(|k| matrix_a[row][k] * matrix_b[k][col]).sum();
        d[i] = (c[i] as f64 + dot) as f32;
    }
    d
}

/// `mma.sync.aligned.m16n8k{4·K_STEPS}.row.col.f64…`, for the calling lane: lane (g, t) holds
/// `A[g][t+4j]` and `A[g+8][t+4j]` in registers `2j` and `2j+1`, and `B[t+4j][g]` in
/// register `j` (PTX ISA, "Matrix Fragments for mma.m16n8k4/k8/k16", .f64). Each element of D
/// is C plus the products in k order, each added with an f64 fused multiply-add: the ISA
/// specifies the precision of FP64 fused multiply-add, not the order.
fn mma_m16n8_f64<const K_STEPS: usize>(
    op: &'static str,
    a: &[f64],
    b: &[f64],
    c: [f64; 4],
) -> [f64; 4] {
    let lane = current().linear as usize % 32;
    let mut registers = [0u64; 12];
    for (slot, value) in registers.iter_mut().zip(a.iter().chain(b)) {
        *slot = value.to_bits();
    }
    let k = 4 * K_STEPS;
    let (matrix_a, matrix_b) =
        current().warp_collective(op, &registers[..3 * K_STEPS], true, |warp| {
            let mut matrix_a = [[0f64; 16]; 16];
            let mut matrix_b = [[0f64; 8]; 16];
            for (lane, deposit) in warp.iter().enumerate() {
                let (g, t) = group_and_thread(lane);
                let r = &deposit.registers;
                for j in 0..K_STEPS {
                    matrix_a[g][t + 4 * j] = f64::from_bits(r[2 * j]);
                    matrix_a[g + 8][t + 4 * j] = f64::from_bits(r[2 * j + 1]);
                    matrix_b[t + 4 * j][g] = f64::from_bits(r[2 * K_STEPS + j]);
                }
            }
            (matrix_a, matrix_b)
        });
    let mut d = c;
    for (i, (row, col)) in accumulator_positions(lane).into_iter().enumerate() {
        d[i] = (0..k).fold(c[i], |acc, q| {
            matrix_a[row][q].mul_add(matrix_b[q][col], acc)
        });
    }
    d
}

/// `mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64`, for the calling lane.
pub fn mma_m16n8k4_f64(a: [f64; 2], b: f64, c: [f64; 4]) -> [f64; 4] {
    mma_m16n8_f64::<1>("mma.m16n8k4.f64", &a, &[b], c)
}

/// `mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64`, for the calling lane.
pub fn mma_m16n8k16_f64(a: [f64; 8], b: [f64; 4], c: [f64; 4]) -> [f64; 4] {
    mma_m16n8_f64::<4>("mma.m16n8k16.f64", &a, &b, c)
}

// -- 16-bit elements (`device::half`) --

/// `cvt.rn.bf16x2.f32`: each f32 rounded to nearest even (the `half` crate's `from_f32`); a
/// NaN becomes the canonical NaN `0x7FFF`, as the GPU writes it.
pub fn pack_bf16x2(lo: f32, hi: f32) -> u32 {
    let one = |x: f32| {
        if x.is_nan() {
            0x7FFF
        } else {
            half::bf16::from_f32(x).to_bits() as u32
        }
    };
    one(lo) | one(hi) << 16
}

/// `cvt.rn.f16x2.f32`: rounded to nearest even, overflow to infinity, NaN to `0x7FFF`.
pub fn pack_f16x2(lo: f32, hi: f32) -> u32 {
    let one = |x: f32| {
        if x.is_nan() {
            0x7FFF
        } else {
            half::f16::from_f32(x).to_bits() as u32
        }
    };
    one(lo) | one(hi) << 16
}

/// `cvt.f32.f16` of both halves.
pub fn unpack_f16x2(pair: u32) -> [f32; 2] {
    [
        half::f16::from_bits(pair as u16).to_f32(),
        half::f16::from_bits((pair >> 16) as u16).to_f32(),
    ]
}

/// # Safety
/// `p` inside a buffer of the launch (checked), 2-byte aligned.
pub unsafe fn ld_global_b16(p: *const u16) -> u16 {
    current().check_global(p as usize, 2, 2);
    unsafe { p.read() }
}

/// # Safety
/// As [`ld_global_b16`].
pub unsafe fn st_global_b16(p: *mut u16, v: u16) {
    current().check_global(p as usize, 2, 2);
    unsafe { p.write(v) }
}

/// # Safety
/// `p` inside a buffer of the launch (checked), 4-byte aligned.
pub unsafe fn ld_global_b32(p: *const u32) -> u32 {
    current().check_global(p as usize, 4, 4);
    unsafe { p.read() }
}

/// # Safety
/// As [`ld_global_b32`].
pub unsafe fn st_global_b32(p: *mut u32, v: u32) {
    current().check_global(p as usize, 4, 4);
    unsafe { p.write(v) }
}

/// # Safety
/// `p` inside a buffer of the launch (checked), 16-byte aligned (checked: the GPU faults on a
/// misaligned vector store).
pub unsafe fn st_global_v4_b32(p: *mut u32, v: [u32; 4]) {
    current().check_global(p as usize, 16, 16);
    unsafe { p.cast::<[u32; 4]>().write_unaligned(v) }
}

/// `bar.sync id, threads`: suspends until `threads` threads of the block wait at `id`.
pub fn named_barrier(id: u32, threads: u32) {
    current().named_barrier(id, threads);
}

/// The arrival of a grid-wide counter, as a host atomic: the emulator's blocks run on worker
/// threads at the same time, and acquire-release orders their global writes as the GPU's
/// `atom.acq_rel.gpu` does.
///
/// # Safety
/// `p` inside a buffer of the launch (checked), 4-byte aligned.
pub unsafe fn atom_add_acq_rel_gpu(p: *mut u32, v: u32) -> u32 {
    current().check_global(p as usize, 4, 4);
    unsafe { core::sync::atomic::AtomicU32::from_ptr(p) }
        .fetch_add(v, core::sync::atomic::Ordering::AcqRel)
}

/// `atom.relaxed.gpu.global.add.u32`, as a relaxed host atomic: a ticket, which orders nothing
/// else (the emulator's race history gets no edge from it either).
///
/// # Safety
/// As [`atom_add_acq_rel_gpu`].
pub unsafe fn atom_add_relaxed_gpu(p: *mut u32, v: u32) -> u32 {
    current().check_global(p as usize, 4, 4);
    unsafe { core::sync::atomic::AtomicU32::from_ptr(p) }
        .fetch_add(v, core::sync::atomic::Ordering::Relaxed)
}

/// `red.relaxed.gpu.global.max.u32`, as a host atomic maximum.
///
/// # Safety
/// As [`atom_add_acq_rel_gpu`].
pub unsafe fn red_max_relaxed_gpu(p: *mut u32, v: u32) {
    current().check_global(p as usize, 4, 4);
    unsafe { core::sync::atomic::AtomicU32::from_ptr(p) }
        .fetch_max(v, core::sync::atomic::Ordering::Relaxed);
}

/// `tanh.approx.f32`: the correctly rounded tanh, where the hardware's `MUFU.TANH` is within
/// its documented bound of it ([`crate::device::tanh_approx`]).
pub fn tanh_approx_f32(x: f32) -> f32 {
    x.tanh()
}

/// # Safety
/// As [`atom_add_acq_rel_gpu`].
pub unsafe fn st_relaxed_gpu(p: *mut u32, v: u32) {
    current().check_global(p as usize, 4, 4);
    unsafe { core::sync::atomic::AtomicU32::from_ptr(p) }
        .store(v, core::sync::atomic::Ordering::Relaxed)
}
