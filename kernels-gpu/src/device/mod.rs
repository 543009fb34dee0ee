//! The device layer: everything a kernel needs from the GPU, and nothing else.
//!
//! Kernels use only this module and plain Rust. Two backends implement it:
//! - `nvptx` (target `nvptx64-nvidia-cuda`): the only place in the project with inline PTX;
//! - `emulated` (any other target): the same operations in software, with bounds and race
//!   checks, driven by the CPU emulator in [`crate::emu`].
//!
//! Why inline PTX at all? Three facts about rustc's NVPTX backend (see `docs/toolchain.md` at the repository root):
//! - Rust has no address-space attribute, so a pointer into shared memory is a *generic*
//!   pointer and ptxas emits generic `LD`/`ST` for it. Shared accesses are therefore written as
//!   `ld.shared`/`st.shared` on a 32-bit shared-window address.
//! - `a * b + c` is never contracted into an FMA: [`Real::fma`] says so explicitly.
//! - `ld.global.nc` (the read-only data path) has no Rust spelling.
//!
//! Addresses into shared memory are byte offsets into one dynamic pool, declared once per
//! module (`extern __shared__` in CUDA terms). The host sizes the pool at launch; a kernel carves
//! typed [`Shared`] views out of it at fixed byte offsets.
//!
//! The tensor cores' warp-wide `mma.sync` and the TF32 format are in [`mma`]. Hopper's
//! asynchronous machinery (tensor cores chapter 2) is in [`mbarrier`] (barriers by phase),
//! [`tma`] (the copy engine and its tensor maps) and [`wgmma`] (warpgroup MMA from shared
//! memory); on the GPU these exist when the kernels are built for `sm_90a`.

use core::marker::PhantomData;
use core::ops::{Add, Mul, Sub};

#[cfg(not(target_arch = "nvptx64"))]
mod emulated;
#[cfg(not(target_arch = "nvptx64"))]
use emulated as backend;
#[cfg(target_arch = "nvptx64")]
mod nvptx;
#[cfg(target_arch = "nvptx64")]
use nvptx as backend;

pub mod fp8;
pub mod half;
pub mod mma;
pub mod semaphore;

// Hopper: compiled for the GPU only in the sm_90a build (`wgmma` and `setmaxnreg` do not exist
// elsewhere), always for the emulator.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod cluster;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod grid;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod mbarrier;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod store;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod tma;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma;

/// What the backend implements per element type: state-space loads and stores, FMA, shuffle.
/// Kernels use it through [`Real`], [`Global`], [`Shared`] and [`shfl_idx`].
pub use backend::Element;
pub use backend::{
    block_dim_x, block_dim_y, block_idx_x, block_idx_y, block_idx_z, cp_async_commit,
    cp_async_wait, grid_dim_x, grid_dim_y, shared_pool_base, sync_threads, sync_warp, thread_idx_x,
    thread_idx_y, vote_all,
};

/// Threads in a warp.
pub const WARP_SIZE: u32 = 32;

/// `*p = max(*p, v)` as one atomic reduction in global memory (`red.relaxed.gpu.global.max.u32`):
/// how many blocks gather a maximum into one word. Unordered: read the word after the kernel.
///
/// # Safety
/// `p` inside an allocation of the launch, 4-byte aligned.
#[inline(always)]
pub unsafe fn atomic_max_u32(p: *mut u32, v: u32) {
    unsafe { backend::red_max_relaxed_gpu(p, v) }
}

/// `tanh(x)` in one instruction (`tanh.approx.f32`, `MUFU.TANH`): the GELU and SiLU epilogues'
/// only transcendental. The ISA promises a relative error of at most 2⁻¹¹, below bf16's
/// rounding of the result (2⁻⁹) and at f16's (2⁻¹¹); a published exhaustive test on Turing
/// found 1.1·10⁻⁵ (not measured here on the H100). The emulator computes the correctly rounded
/// tanh, so the two may differ within that bound; the epilogue tests' tolerance covers it (the
/// GPU test passes in f16 and bf16).
#[inline(always)]
pub fn tanh_approx(x: f32) -> f32 {
    backend::tanh_approx_f32(x)
}

/// `bar.sync id, threads`: a barrier among `threads` threads (a multiple of 32, whole warps)
/// that name the same `id` (1 to 15; 0 is [`sync_threads`]'s): the consumer warpgroups of a
/// warp-specialised kernel synchronise without the producer. What each did before it is
/// visible to all after it.
#[inline(always)]
pub fn named_barrier(id: u32, threads: u32) {
    backend::named_barrier(id, threads)
}

/// The element types of the kernels: `f32` and `f64`.
///
/// The arithmetic comes from the standard operators; what the GPU does differently from the
/// CPU (fused multiply-add, state-space loads and stores) comes from the backend's
/// `Element` trait, which this trait requires.
pub trait Real:
    Copy
    + Default
    + PartialEq
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Send
    + Sync
    + 'static
    + backend::Element
{
    const ZERO: Self;
    const ONE: Self;
    /// Size in bytes (4 or 8): the unit of every shared-memory address computation.
    const BYTES: u32;

    /// `self * b + c` with a single rounding (`fma.rn`), the instruction GEMM is made of.
    #[inline(always)]
    fn fma(self, b: Self, c: Self) -> Self {
        <Self as backend::Element>::fused_mul_add(self, b, c)
    }
}

impl Real for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const BYTES: u32 = 4;
}

impl Real for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const BYTES: u32 = 8;
}

/// A read-only pointer into global memory (a matrix the kernel only reads).
#[derive(Clone, Copy)]
pub struct Global<T> {
    ptr: *const T,
}

impl<T: Real> Global<T> {
    #[inline(always)]
    pub fn new(ptr: *const T) -> Self {
        Self { ptr }
    }

    /// The pointer moved by `delta` elements (the document's `A += ...` idiom).
    #[inline(always)]
    pub fn offset(self, delta: isize) -> Self {
        Self {
            ptr: self.ptr.wrapping_offset(delta),
        }
    }

    /// Element `i`, through the ordinary (L1-cached) path: `ld.global`.
    ///
    /// # Safety
    /// `i` must be inside the allocation (the emulator checks it and reports the thread).
    #[inline(always)]
    pub unsafe fn load(self, i: usize) -> T {
        unsafe { T::ld_global(self.ptr.wrapping_add(i)) }
    }

    /// The address of element 0 (for a bulk copy's source).
    #[inline(always)]
    pub fn address(self) -> *const T {
        self.ptr
    }

    /// Whether the pointer is aligned to `bytes` (a power of two): kernels with 16-byte paths
    /// check it with the leading dimensions before taking them.
    #[inline(always)]
    pub fn is_aligned_to(self, bytes: usize) -> bool {
        (self.ptr as usize).is_multiple_of(bytes)
    }

    /// Element `i` through the read-only data path: `ld.global.nc` (CUDA's `__ldg`).
    ///
    /// # Safety
    /// As [`Global::load`]; the data must not be written during the kernel.
    #[inline(always)]
    pub unsafe fn load_nc(self, i: usize) -> T {
        unsafe { T::ld_global_nc(self.ptr.wrapping_add(i)) }
    }

    /// Elements `i..i+4` as 16-byte vector loads (`ld.global.v4.f32`, or two
    /// `ld.global.v2.f64`): CUDA's `float4` idiom.
    ///
    /// # Safety
    /// As [`Global::load`], and the address of element `i` must be aligned to `4 * BYTES`
    /// (16 bytes for f32); a misaligned vector load faults on the GPU and in the emulator.
    #[inline(always)]
    pub unsafe fn load4(self, i: usize) -> [T; 4] {
        unsafe { T::ld_global_x4(self.ptr.wrapping_add(i)) }
    }
}

/// Read-only 32-bit words in global memory: a table the host wrote for the kernel (a grouped
/// GEMM's group of each block of columns, or its groups' counts of rows).
#[derive(Clone, Copy)]
pub struct GlobalWords {
    ptr: *const u32,
}

impl GlobalWords {
    #[inline(always)]
    pub fn new(ptr: *const u32) -> Self {
        Self { ptr }
    }

    /// No table.
    pub const NONE: GlobalWords = GlobalWords {
        ptr: core::ptr::null(),
    };

    /// Word `i` (`ld.global.b32`).
    ///
    /// # Safety
    /// `i` must be inside the table (the emulator checks it and reports the thread).
    #[inline(always)]
    pub unsafe fn load(self, i: usize) -> u32 {
        unsafe { backend::ld_global_b32(self.ptr.wrapping_add(i)) }
    }
}

/// A pointer into global memory that the kernel writes (the matrix C).
#[derive(Clone, Copy)]
pub struct GlobalMut<T> {
    ptr: *mut T,
}

impl<T: Real> GlobalMut<T> {
    #[inline(always)]
    pub fn new(ptr: *mut T) -> Self {
        Self { ptr }
    }

    /// The address of element `i`, for an operation the wrapper has no method for (an atomic).
    #[inline(always)]
    pub fn element_ptr(self, i: usize) -> *mut T {
        self.ptr.wrapping_add(i)
    }

    #[inline(always)]
    pub fn offset(self, delta: isize) -> Self {
        Self {
            ptr: self.ptr.wrapping_offset(delta),
        }
    }

    /// # Safety
    /// `i` must be inside the allocation.
    #[inline(always)]
    pub unsafe fn load(self, i: usize) -> T {
        unsafe { T::ld_global(self.ptr.wrapping_add(i)) }
    }

    /// See [`Global::is_aligned_to`].
    #[inline(always)]
    pub fn is_aligned_to(self, bytes: usize) -> bool {
        (self.ptr as usize).is_multiple_of(bytes)
    }

    /// # Safety
    /// `i` must be inside the allocation.
    #[inline(always)]
    pub unsafe fn store(self, i: usize, value: T) {
        unsafe { T::st_global(self.ptr.wrapping_add(i), value) }
    }

    /// # Safety
    /// As [`Global::load4`].
    #[inline(always)]
    pub unsafe fn load4(self, i: usize) -> [T; 4] {
        unsafe { T::ld_global_x4(self.ptr.wrapping_add(i)) }
    }

    /// Elements `i..i+4` as 16-byte vector stores.
    ///
    /// # Safety
    /// As [`Global::load4`].
    #[inline(always)]
    pub unsafe fn store4(self, i: usize, values: [T; 4]) {
        unsafe { T::st_global_x4(self.ptr.wrapping_add(i), values) }
    }

    /// Elements `i..i+2` as one vector load (`ld.global.v2`).
    ///
    /// # Safety
    /// `i..i+2` inside the allocation, element `i` aligned to the pair's size.
    #[inline(always)]
    pub unsafe fn load2(self, i: usize) -> [T; 2] {
        unsafe { T::ld_global_x2(self.ptr.wrapping_add(i)) }
    }

    /// Elements `i..i+2` as one vector store (`st.global.v2`).
    ///
    /// # Safety
    /// As [`GlobalMut::load2`].
    #[inline(always)]
    pub unsafe fn store2(self, i: usize, values: [T; 2]) {
        unsafe { T::st_global_x2(self.ptr.wrapping_add(i), values) }
    }
}

/// A typed view of `len` elements of the block's dynamic shared-memory pool, starting
/// `byte_offset` bytes into it.
///
/// Views are plain values (a byte offset and a length): a kernel lays its arrays out with
/// [`Shared::at`] and [`Shared::next`], and the host sizes the pool with the same numbers
/// (each variant exports a `shared_bytes` function built from them).
#[derive(Clone, Copy)]
pub struct Shared<T> {
    byte_offset: u32,
    len: u32,
    element: PhantomData<T>,
}

impl<T: Real> Shared<T> {
    /// A view of `len` elements at `byte_offset` (which must be aligned to 16 bytes if the
    /// kernel uses the 4-wide accesses).
    #[inline(always)]
    pub const fn at(byte_offset: u32, len: u32) -> Self {
        Self {
            byte_offset,
            len,
            element: PhantomData,
        }
    }

    /// The view of `len` elements that follows this one, 16-byte aligned.
    #[inline(always)]
    pub const fn next<U: Real>(self, len: u32) -> Shared<U> {
        Shared::at(self.end_byte().next_multiple_of(16), len)
    }

    /// One past the last byte of this view: the pool size a kernel ending here needs.
    #[inline(always)]
    pub const fn end_byte(self) -> u32 {
        self.byte_offset + self.len * T::BYTES
    }

    #[inline(always)]
    fn address(self, i: u32) -> u32 {
        backend::shared_pool_base() + self.byte_offset + i * T::BYTES
    }

    /// The shared-window address of element `i` (what TMA copies and `wgmma` descriptors take).
    #[inline(always)]
    pub fn shared_address(self, i: u32) -> u32 {
        self.address(i)
    }

    /// `ld.shared` of element `i`.
    #[inline(always)]
    pub fn load(self, i: u32) -> T {
        backend::check_shared_view(self.byte_offset, self.len, i, 1);
        unsafe { T::ld_shared(self.address(i)) }
    }

    /// `st.shared` of element `i`.
    #[inline(always)]
    pub fn store(self, i: u32, value: T) {
        backend::check_shared_view(self.byte_offset, self.len, i, 1);
        unsafe { T::st_shared(self.address(i), value) }
    }

    /// Elements `i..i+4` with 16-byte shared loads (`ld.shared.v4.f32`, or two
    /// `ld.shared.v2.f64`); element `i` must be 16-byte aligned.
    #[inline(always)]
    pub fn load4(self, i: u32) -> [T; 4] {
        backend::check_shared_view(self.byte_offset, self.len, i, 4);
        unsafe { T::ld_shared_x4(self.address(i)) }
    }

    /// Elements `i..i+2` with one vector load (`ld.shared.v2`: 8 bytes of f32, 16 of f64);
    /// element `i` must be aligned to the pair's size.
    #[inline(always)]
    pub fn load2(self, i: u32) -> [T; 2] {
        backend::check_shared_view(self.byte_offset, self.len, i, 2);
        unsafe { T::ld_shared_x2(self.address(i)) }
    }

    /// Elements `i..i+4` with 16-byte shared stores.
    #[inline(always)]
    pub fn store4(self, i: u32, values: [T; 4]) {
        backend::check_shared_view(self.byte_offset, self.len, i, 4);
        unsafe { T::st_shared_x4(self.address(i), values) }
    }

    /// Starts an asynchronous copy (`cp.async`, sm_80+) of `src[j..j+4]` into elements
    /// `i..i+4`, or of four zeros when `valid` is false. The copy goes from global to shared
    /// memory without passing through registers; it is complete after [`cp_async_commit`],
    /// [`cp_async_wait`] and, for the other threads, a barrier.
    ///
    /// # Safety
    /// When `valid`, `src[j..j+4]` must be inside the allocation and 16-byte aligned; element
    /// `i` must be 16-byte aligned.
    #[inline(always)]
    pub unsafe fn copy4_async(self, i: u32, src: Global<T>, j: usize, valid: bool) {
        backend::check_shared_view(self.byte_offset, self.len, i, 4);
        let from = if valid {
            src.ptr.wrapping_add(j)
        } else {
            src.ptr
        };
        unsafe { T::cp_async_x4(self.address(i), from, valid) }
    }

    /// As [`Shared::copy4_async`] for two elements (one 8-byte `cp.async` of f32, one 16-byte
    /// of f64), both addresses aligned to the pair's size.
    ///
    /// # Safety
    /// When `valid`, `src[j..j+2]` must be inside the allocation and aligned to the pair.
    #[inline(always)]
    pub unsafe fn copy2_async(self, i: u32, src: Global<T>, j: usize, valid: bool) {
        backend::check_shared_view(self.byte_offset, self.len, i, 2);
        let from = if valid {
            src.ptr.wrapping_add(j)
        } else {
            src.ptr
        };
        unsafe { T::cp_async_x2(self.address(i), from, valid) }
    }

    /// As [`Shared::copy4_async`] for one element, with no alignment requirement beyond the
    /// element's own.
    ///
    /// # Safety
    /// When `valid`, `src[j]` must be inside the allocation.
    #[inline(always)]
    pub unsafe fn copy_async(self, i: u32, src: Global<T>, j: usize, valid: bool) {
        backend::check_shared_view(self.byte_offset, self.len, i, 1);
        let from = if valid {
            src.ptr.wrapping_add(j)
        } else {
            src.ptr
        };
        unsafe { T::cp_async_x1(self.address(i), from, valid) }
    }
}

/// The shared-window address of byte `byte` of the pool (what TMA copies and `wgmma`
/// descriptors take).
#[inline(always)]
pub fn pool_address(byte: u32) -> u32 {
    backend::shared_pool_base() + byte
}

/// The bytes from the start of the pool to its first `align`-aligned shared address (`align` a
/// power of two of at least 16). The PTX declares the pool 16-byte aligned and no more (the
/// emulator places it at an address with exactly that alignment), so a kernel that needs its
/// tiles at multiples of 1024 bytes (a 128-byte swizzle) starts its layout here and asks the
/// host for `align - 16` bytes more.
#[inline(always)]
pub fn pool_padding_to(align: u32) -> u32 {
    backend::shared_pool_base().wrapping_neg() & (align - 1)
}

/// `__shfl_sync(0xffffffff, value, src_lane)`: every lane of the warp receives `value` as held
/// by lane `src_lane`. All 32 lanes must call it together.
#[inline(always)]
pub fn shfl_idx<T: Real>(value: T, src_lane: u32) -> T {
    T::shfl_idx(value, src_lane)
}

/// `value` as lane 0 holds it, for a value the caller knows to be the same in every lane of
/// the warp (a warp or warpgroup index). The shuffle changes nothing but what ptxas can prove:
/// a broadcast's result is warp-uniform, so what is computed from it may live in uniform
/// registers (`UR`), as `wgmma` descriptors must, instead of being made per thread and moved
/// over with `R2UR` where used. CUTLASS's `canonical_warp_group_idx` does the same. All 32
/// lanes must call it together.
#[inline(always)]
pub fn warp_uniform(value: u32) -> u32 {
    shfl_idx(f32::from_bits(value), 0).to_bits()
}

/// `p`, for a condition the caller knows to be the same in every lane of the warp, as a vote
/// of all lanes (`vote.sync.all`, which ptxas compiles to `VOTEU`: its result is a uniform
/// predicate). A branch on it is then uniform to ptxas, so what the branch skips or updates
/// (a pipeline's stage and phase) may stay in uniform registers; a broadcast
/// ([`warp_uniform`]) does not do that for a branch. All 32 lanes must call it together.
#[inline(always)]
pub fn warp_uniform_condition(p: bool) -> bool {
    vote_all(p)
}

/// The thread's lane within its warp, for 1D or 2D blocks (x fastest, as the hardware counts).
#[inline(always)]
pub fn lane_id() -> u32 {
    (thread_idx_y() * block_dim_x() + thread_idx_x()) % WARP_SIZE
}

/// |x| as its bits: the sign cleared. For non-negative floats the order of the bits is the
/// order of the values, and NaN's bits lie above infinity's, so a NaN wins a maximum of them.
#[inline(always)]
pub fn magnitude_bits(x: f32) -> u32 {
    x.to_bits() & 0x7FFF_FFFF
}

/// The largest of the warp's 32 `value`s, in every lane: a butterfly of five shuffles (lane
/// `l` takes the larger of its own and lane `l ^ offset`'s). All 32 lanes must call it
/// together. With [`atomic_max_u32`] from one lane, how a warp adds its maximum to a word that
/// many blocks share: one atomic per warp instead of 32. (`redux.sync.max.u32` does it in one
/// instruction; tried in the amax epilogue, it left ptxas spilling more in `wgmma-queue:2`,
/// 16–32 bytes against 8–24.)
#[inline(always)]
pub fn warp_max_u32(value: u32) -> u32 {
    let lane = lane_id();
    let mut largest = value;
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        // The shuffle moves 32 bits: an f32's bits pass through it unchanged.
        let other = shfl_idx(f32::from_bits(largest), lane ^ offset).to_bits();
        largest = largest.max(other);
        offset /= 2;
    }
    largest
}
