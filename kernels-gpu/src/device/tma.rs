//! The Tensor Memory Accelerator (TMA, sm_90): one thread asks a copy engine for a whole tile
//! (a *box*) of a matrix, and the engine writes it into shared memory, swizzled, with the
//! out-of-bounds part filled with zeros, then counts the bytes off an mbarrier's tx-count.
//! No thread computes an address per element, and no register holds the data.
//!
//! The engine needs a *tensor map* (`CUtensorMap`, 128 opaque bytes) describing the matrix in
//! global memory: base address, sizes, row pitch, box size, element type, swizzle. The host
//! makes it with the driver's `cuTensorMapEncodeTiled` from a [`TensorMapSpec`]; for the
//! emulator the same spec is encoded by [`TensorMapSpec::encode_for_emulator`], after the
//! same checks the driver documents ([`TensorMapSpec::validate`]). The kernels read their maps
//! from global memory (a buffer the host fills before the launch).
//!
//! Dimension 0 is the innermost (contiguous) one: for a column-major matrix, its rows.
//! Dimension 2 is the *layer*: the members of a strided batch (`C_i = α·A_i·B_i + β·C_i`, the
//! member `i` of each operand `i·stride` elements after the first), one matrix per layer, so
//! that a box never mixes two members and is clipped at each member's own edges. Every map of
//! the course has it (one layer for a single GEMM), and every copy names its layer: one form of
//! each instruction, `cp.async.bulk.tensor.3d`, for single and batched problems alike.
//! A box of `box_dims[0] × box_dims[1]` elements (one layer deep) at coordinates
//! `(x, y, layer)` is written densely, one
//! `box_dims[0]`-element row after the other, and with a swizzle each row's 16-byte chunks are
//! permuted by the shared address's row bits ([`Swizzle`]), which is what lets a later reader
//! (`wgmma`, or `ld.shared` with the same XOR) find them without bank conflicts.
use super::backend::hopper as backend;
use super::mbarrier::MBarrier;
use super::{Global, Real, Shared};

/// A tensor map: the driver's 128-byte `CUtensorMap` (opaque), or the emulator's encoding of
/// the same parameters. It must be 64-byte aligned (CUDA 13 declares it 128-byte aligned).
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMap {
    pub opaque: [u64; 16],
}

/// How the engine permutes each row's 16-byte chunks in shared memory (PTX ISA, "Tensor
/// Swizzling Modes"): chunk bits `[4:6]` of the shared address XOR the bits `[7:9]` above
/// them, one bit (32-byte mode), two (64-byte) or three (128-byte). The pattern repeats every
/// 256, 512 or 1024 bytes and depends on the absolute shared address, so a swizzled tile is
/// placed at a multiple of that size. `wgmma` descriptors name the same modes (other codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swizzle {
    None,
    B32,
    B64,
    B128,
}

impl Swizzle {
    /// The bytes of one swizzled row (the widest row a box may have): 32, 64, 128; 0 for none.
    pub const fn span(self) -> u32 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 32,
            Swizzle::B64 => 64,
            Swizzle::B128 => 128,
        }
    }

    /// Which bits of the 16-byte chunk index are XORed with the row bits above them (bits
    /// `[7:9]` of the address, as many as the mask has): 0, 1, 3, 7.
    pub const fn chunk_mask(self) -> u32 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 1,
            Swizzle::B64 => 3,
            Swizzle::B128 => 7,
        }
    }

    /// The bytes after which the pattern repeats (the alignment a swizzled tile needs).
    pub const fn atom(self) -> u32 {
        8 * self.span()
    }

    /// `CUtensorMapSwizzle`'s value.
    pub const fn tensor_map_code(self) -> u32 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 1,
            Swizzle::B64 => 2,
            Swizzle::B128 => 3,
        }
    }

    /// The layout type of a `wgmma` matrix descriptor (bits 62–63).
    pub const fn descriptor_code(self) -> u64 {
        match self {
            Swizzle::None => 0,
            Swizzle::B128 => 1,
            Swizzle::B64 => 2,
            Swizzle::B32 => 3,
        }
    }
}

/// How a copy's lines are kept in L2: a hint to the cache, which changes no result.
#[derive(Clone, Copy, Debug)]
pub struct L2Policy(u64);

impl L2Policy {
    /// Lines read once (a decode step's weights, streamed past the 50 MB L2): first to go.
    #[inline(always)]
    pub fn evict_first() -> Self {
        L2Policy(backend::l2_evict_first())
    }

    /// Lines read again (the tokens every block reads): last to go.
    #[inline(always)]
    pub fn evict_last() -> Self {
        L2Policy(backend::l2_evict_last())
    }
}

/// [`load_box`] under an L2 policy (`.L2::cache_hint`).
///
/// # Safety
/// As [`load_tile`].
#[inline(always)]
pub unsafe fn load_box_hinted(
    map: *const TensorMap,
    dst_address: u32,
    x: i32,
    y: i32,
    layer: u32,
    bar: MBarrier,
    policy: L2Policy,
) {
    let at = [x, y, layer as i32];
    unsafe { backend::tma_load_3d_hinted(map.cast(), dst_address, at, bar.address(), policy.0) }
}

/// `cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes`: one
/// thread starts the copy of the box at element coordinates `(x, y)` (dimension 0 first) of
/// layer `layer` of `map` into `dst` (whose shared address must be 128-byte aligned, and a
/// multiple of the swizzle's repeat for the pattern to start with the box), completing on
/// `bar`, whose phase must expect the box's bytes (all of them, the zero-filled ones too).
///
/// # Safety
/// `map` must point to a tensor map in global memory that outlives the kernel, and `dst` must
/// have room for the box.
#[inline(always)]
pub unsafe fn load_tile<T: Real>(
    map: *const TensorMap,
    dst: Shared<T>,
    x: i32,
    y: i32,
    layer: u32,
    bar: MBarrier,
) {
    unsafe { load_box(map, dst.shared_address(0), x, y, layer, bar) }
}

/// [`load_tile`] to shared address `dst_address`, for elements of any type (the 16-bit
/// kernels' tiles are not [`Shared`] views of a [`Real`]).
///
/// # Safety
/// As [`load_tile`].
#[inline(always)]
pub unsafe fn load_box(
    map: *const TensorMap,
    dst_address: u32,
    x: i32,
    y: i32,
    layer: u32,
    bar: MBarrier,
) {
    let at = [x, y, layer as i32];
    unsafe { backend::tma_load_3d(map.cast(), dst_address, at, bar.address()) }
}

/// [`load_box`] multicast to the blocks of the cluster whose ranks are the bits of `mask`
/// (`.multicast::cluster`): the box lands at the same shared offset in each, and each one's
/// mbarrier at `bar`'s offset counts its bytes. The blocks of a cluster that share an operand
/// each load a part of it for all: the L2 reads of that operand are divided by the cluster size.
///
/// # Safety
/// As [`load_tile`], in every block of `mask`; each one's mbarrier phase must expect the bytes.
#[inline(always)]
pub unsafe fn load_box_multicast(
    map: *const TensorMap,
    dst_address: u32,
    x: i32,
    y: i32,
    layer: u32,
    bar: MBarrier,
    mask: u16,
) {
    let (at, bar) = ([x, y, layer as i32], bar.address());
    unsafe { backend::tma_load_3d_multicast(map.cast(), dst_address, at, bar, mask) }
}

/// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes`: one thread starts the
/// copy of `bytes` contiguous bytes from `src` (no tensor map: no box, no swizzle, no
/// zero-filling past an edge) to `dst_address`, completing on `bar`, whose phase must expect
/// them ([`MBarrier::expect_tx`]). Both addresses 16-byte aligned, `bytes` a multiple of 16.
///
/// # Safety
/// `src..src + bytes` must be readable global memory and `dst_address` have room for them.
#[inline(always)]
pub unsafe fn load_bulk<T: Real>(dst_address: u32, src: Global<T>, bytes: u32, bar: MBarrier) {
    unsafe { backend::bulk_load(dst_address, src.address().cast(), bytes, bar.address()) }
}

/// `prefetch.tensormap`: fetches the map into the engine's descriptor cache ahead of the first
/// copy.
///
/// # Safety
/// As [`load_tile`].
#[inline(always)]
pub unsafe fn prefetch(map: *const TensorMap) {
    unsafe { backend::tma_prefetch(map.cast()) }
}

/// `cp.async.bulk.prefetch.tensor`: brings the box at `(x, y)` of layer `layer` into L2,
/// as [`load_box`] would read it, but into nothing else: no shared memory, no barrier, no
/// result. A hint, so it may be issued before the data is final (a programmatic dependent
/// launch prefetches the weights, which no kernel writes, before `griddepcontrol.wait`).
///
/// # Safety
/// As [`load_tile`].
#[inline(always)]
pub unsafe fn prefetch_box(map: *const TensorMap, x: i32, y: i32, layer: u32) {
    unsafe { backend::tma_prefetch_box_3d(map.cast(), [x, y, layer as i32]) }
}

/// What `cuTensorMapEncodeTiled` takes for the course's tensors, a matrix per layer (rank 3, no
/// interleave, no element strides, no out-of-bounds NaN): the host turns it into a
/// `CUtensorMap` with the driver, or into the emulator's encoding.
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMapSpec {
    /// The matrix's device (or, for the emulator, host) address.
    pub address: u64,
    pub element_bytes: u32,
    /// Elements per dimension, innermost first.
    pub dims: [u64; 2],
    /// Bytes from one element of dimension 1 to the next (the leading dimension × element size).
    pub row_stride_bytes: u64,
    /// Layers (members of a batch; 1 for a single matrix) and the bytes from one to the next
    /// (the batch stride × element size): 0 for one matrix every layer reads, less than a
    /// matrix for layers that overlap (A and B only).
    pub layers: u64,
    pub layer_stride_bytes: u64,
    /// The box: elements per dimension, innermost first.
    pub box_dims: [u32; 2],
    pub swizzle: Swizzle,
}

#[cfg(not(target_arch = "nvptx64"))]
impl TensorMapSpec {
    /// The bytes one copy of the box delivers (what its mbarrier phase must expect).
    pub fn box_bytes(&self) -> u32 {
        self.box_dims[0] * self.box_dims[1] * self.element_bytes
    }

    /// The constraints `cuTensorMapEncodeTiled` documents for these parameters (CUDA driver
    /// API, "Tensor Map Object Management"), so that the emulator refuses what the driver does.
    pub fn validate(&self) -> Result<(), String> {
        let s = self;
        if !s.address.is_multiple_of(16) {
            return Err(format!(
                "the tensor's address {:#x} is not 16-byte aligned",
                s.address
            ));
        }
        if s.dims.iter().any(|&d| d == 0 || d > 1 << 32) {
            return Err(format!(
                "tensor dimensions {:?}: each must be 1 to 2^32",
                s.dims
            ));
        }
        if !s.row_stride_bytes.is_multiple_of(16) || s.row_stride_bytes >= 1 << 40 {
            return Err(format!(
                "row stride of {} bytes: the driver wants a multiple of 16 below 2^40 (a leading dimension that is a multiple of {} elements of {} bytes)",
                s.row_stride_bytes,
                (16 / s.element_bytes).max(1),
                s.element_bytes
            ));
        }
        if s.layers == 0 || s.layers > 1 << 32 {
            return Err(format!("{} layers: there must be 1 to 2^32", s.layers));
        }
        // Layers may overlap, 0 apart included: the driver encodes such a map, and a lone load
        // reads `base + layer · stride` (measured on the H100:
        // `xtask/scripts/probes/tma_layer_stride.cu`). The GEMMs do not rely on it yet: until a
        // GEMM reading such layers is checked on the GPU, `gpu_gemm::registry::check_batch` refuses
        // overlapping members to every TMA kernel (`docs/perf-notes/hopper-16bit.md`, 2026-12-07).
        if !s.layer_stride_bytes.is_multiple_of(16) || s.layer_stride_bytes >= 1 << 40 {
            return Err(format!(
                "a layer stride of {} bytes: the driver wants a multiple of 16 below 2^40",
                s.layer_stride_bytes
            ));
        }
        if s.box_dims.iter().any(|&b| b == 0 || b > 256) {
            return Err(format!(
                "box {:?}: each dimension must be 1 to 256",
                s.box_dims
            ));
        }
        let row_bytes = s.box_dims[0] * s.element_bytes;
        if !row_bytes.is_multiple_of(16) {
            return Err(format!(
                "a box row of {row_bytes} bytes: it must be a multiple of 16"
            ));
        }
        if s.swizzle != Swizzle::None && row_bytes > s.swizzle.span() {
            return Err(format!(
                "a box row of {row_bytes} bytes with the {}-byte swizzle: rows may not exceed the swizzle span",
                s.swizzle.span()
            ));
        }
        Ok(())
    }

    /// One matrix: a single layer, whose stride is the matrix's bytes.
    pub fn single(
        address: u64,
        element_bytes: u32,
        dims: [u64; 2],
        row_stride_bytes: u64,
        box_dims: [u32; 2],
        swizzle: Swizzle,
    ) -> Self {
        TensorMapSpec {
            address,
            element_bytes,
            dims,
            row_stride_bytes,
            layers: 1,
            layer_stride_bytes: row_stride_bytes * dims[1],
            box_dims,
            swizzle,
        }
    }

    /// The emulator's tensor map for these parameters (after [`TensorMapSpec::validate`]).
    pub fn encode_for_emulator(&self) -> Result<TensorMap, String> {
        self.validate()?;
        Ok(TensorMap {
            opaque: super::backend::hopper::encode_map(self),
        })
    }
}
