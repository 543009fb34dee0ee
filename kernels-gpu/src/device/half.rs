//! 16-bit floating-point elements, bf16 and f16, as the kernels see them: 16 bits that the
//! tensor cores read directly, and that the CUDA cores convert to and from f32 only in the
//! epilogue.
//!
//! A kernel never computes in 16 bits: the `wgmma`s accumulate in f32 registers, and the
//! epilogue computes `alpha·acc + beta·C` in f32 and rounds the result once, to nearest even,
//! two elements at a time (`cvt.rn.bf16x2.f32`, `cvt.rn.f16x2.f32`: [`Half::pack`]). That is
//! what `cublasGemmEx` with `CUBLAS_COMPUTE_32F` does, and what the host's check assumes
//! (`gpu-gemm/src/verify.rs`: f32 accumulation plus one rounding of the output).
//!
//! On the CPU the emulator converts with the `half` crate, whose `from_f32` rounds to nearest
//! even as `cvt.rn` does; the GPU tests compare the two on the H100.
use super::backend;
use crate::dtype::Dtype;

/// A bfloat16 element: its bits.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bf16(pub u16);

/// An IEEE binary16 element: its bits.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct F16(pub u16);

/// What differs between the two 16-bit types for a kernel: the `wgmma` type name, the
/// conversions, and the host's element type.
pub trait Half: Copy + Default + Send + Sync + 'static {
    const DTYPE: Dtype;
    /// The PTX type of the `wgmma` operands: `bf16` or `f16`.
    const PTX: &'static str;

    /// Two f32 rounded to nearest even and packed into 32 bits, `lo` in bits 0–15: one
    /// `cvt.rn.bf16x2.f32` (or `.f16x2`).
    fn pack(lo: f32, hi: f32) -> u32;

    /// The f32 values of a packed pair (exact: every 16-bit value is an f32).
    fn unpack(pair: u32) -> [f32; 2];
}

impl Half for Bf16 {
    const DTYPE: Dtype = Dtype::Bf16;
    const PTX: &'static str = "bf16";

    #[inline(always)]
    fn pack(lo: f32, hi: f32) -> u32 {
        backend::pack_bf16x2(lo, hi)
    }

    #[inline(always)]
    fn unpack(pair: u32) -> [f32; 2] {
        // bf16 is the top half of an f32.
        [
            f32::from_bits(pair << 16),
            f32::from_bits(pair & 0xFFFF_0000),
        ]
    }
}

impl Half for F16 {
    const DTYPE: Dtype = Dtype::F16;
    const PTX: &'static str = "f16";

    #[inline(always)]
    fn pack(lo: f32, hi: f32) -> u32 {
        backend::pack_f16x2(lo, hi)
    }

    #[inline(always)]
    fn unpack(pair: u32) -> [f32; 2] {
        backend::unpack_f16x2(pair)
    }
}

/// A read-only pointer to 16-bit elements in global memory.
#[derive(Clone, Copy)]
pub struct GlobalHalf<H> {
    ptr: *const H,
}

/// A pointer to 16-bit elements that the kernel writes (C).
#[derive(Clone, Copy)]
pub struct GlobalHalfMut<H> {
    ptr: *mut H,
}

impl<H: Half> GlobalHalf<H> {
    #[inline(always)]
    pub fn new(ptr: *const H) -> Self {
        Self { ptr }
    }

    /// The raw pointer (the host encodes tensor maps from it; kernels read through TMA).
    #[inline(always)]
    pub fn as_ptr(self) -> *const H {
        self.ptr
    }

    /// Element `i`'s f32 value (a fused epilogue's bias).
    ///
    /// # Safety
    /// `i` must be inside the allocation.
    #[inline(always)]
    pub unsafe fn load(self, i: usize) -> f32 {
        let bits = unsafe { backend::ld_global_b16(self.ptr.wrapping_add(i).cast()) };
        H::unpack(bits as u32)[0]
    }

    /// Element `i`'s 16 bits, as stored (a copy moves them without reading them as numbers).
    ///
    /// # Safety
    /// `i` must be inside the allocation.
    #[inline(always)]
    pub unsafe fn load_bits(self, i: usize) -> u16 {
        unsafe { backend::ld_global_b16(self.ptr.wrapping_add(i).cast()) }
    }
}

impl<H: Half> GlobalHalfMut<H> {
    #[inline(always)]
    pub fn new(ptr: *mut H) -> Self {
        Self { ptr }
    }

    /// Whether the pointer is aligned to `bytes` (a power of two).
    #[inline(always)]
    pub fn is_aligned_to(self, bytes: usize) -> bool {
        (self.ptr as usize).is_multiple_of(bytes)
    }

    /// The raw pointer.
    #[inline(always)]
    pub fn as_ptr(self) -> *mut H {
        self.ptr
    }

    /// The matrix `elements` elements further on (the next member of a batch).
    #[inline(always)]
    pub fn advanced(self, elements: u64) -> Self {
        Self {
            ptr: self.ptr.wrapping_add(elements as usize),
        }
    }

    /// Element `i`'s f32 value.
    ///
    /// # Safety
    /// `i` must be inside the allocation.
    #[inline(always)]
    pub unsafe fn load(self, i: usize) -> f32 {
        let bits = unsafe { backend::ld_global_b16(self.ptr.wrapping_add(i).cast()) };
        H::unpack(bits as u32)[0]
    }

    /// Element `i`, rounded from `value`.
    ///
    /// # Safety
    /// `i` must be inside the allocation.
    #[inline(always)]
    pub unsafe fn store(self, i: usize, value: f32) {
        let bits = H::pack(value, 0.0) as u16;
        unsafe { backend::st_global_b16(self.ptr.wrapping_add(i).cast(), bits) }
    }

    /// Elements `i, i + 1` as one 4-byte load.
    ///
    /// # Safety
    /// `i..i+2` inside the allocation, element `i` 4-byte aligned.
    #[inline(always)]
    pub unsafe fn load2(self, i: usize) -> [f32; 2] {
        H::unpack(unsafe { backend::ld_global_b32(self.ptr.wrapping_add(i).cast()) })
    }

    /// Elements `i, i + 1`, rounded from `values`, as one 4-byte store.
    ///
    /// # Safety
    /// As [`GlobalHalfMut::load2`].
    #[inline(always)]
    pub unsafe fn store2(self, i: usize, values: [f32; 2]) {
        let bits = H::pack(values[0], values[1]);
        unsafe { backend::st_global_b32(self.ptr.wrapping_add(i).cast(), bits) }
    }

    /// Element `i` as the 16 bits `bits` (already rounded).
    ///
    /// # Safety
    /// As [`GlobalHalfMut::store`].
    #[inline(always)]
    pub unsafe fn store_bits(self, i: usize, bits: u16) {
        unsafe { backend::st_global_b16(self.ptr.wrapping_add(i).cast(), bits) }
    }

    /// Elements `i, i + 1` as the packed pair `bits`, one 4-byte store.
    ///
    /// # Safety
    /// As [`GlobalHalfMut::load2`].
    #[inline(always)]
    pub unsafe fn store_bits2(self, i: usize, bits: u32) {
        unsafe { backend::st_global_b32(self.ptr.wrapping_add(i).cast(), bits) }
    }

    /// Elements `i .. i + 8` as four packed pairs (`pairs[0]` holds `i` and `i + 1`, `i` in
    /// its low half), one 16-byte store.
    ///
    /// # Safety
    /// `i..i+8` inside the allocation, element `i` 16-byte aligned.
    #[inline(always)]
    pub unsafe fn store_bits8(self, i: usize, pairs: [u32; 4]) {
        unsafe { backend::st_global_v4_b32(self.ptr.wrapping_add(i).cast(), pairs) }
    }
}
