//! Getting C out through shared memory (sm_90): `stmatrix` writes a warp's accumulator
//! fragments into a tile of shared memory, and the TMA engine stores the tile to global memory
//! ([`store_box`]), while the threads go on.
//!
//! The protocol, CUTLASS's TMA-store epilogue (PTX ISA, "cp.async.bulk.tensor" and
//! "Completion mechanisms for asynchronous copy operations"):
//! 1. every thread writes its part of the tile with [`stmatrix_x4`] (ordinary shared stores,
//!    through the generic proxy);
//! 2. every writing thread issues `fence.proxy.async.shared::cta`
//!    ([`crate::device::wgmma::fence_proxy_async`]): the TMA engine reads through the async
//!    proxy;
//! 3. a barrier among the writers ([`crate::device::named_barrier`]), then one thread issues
//!    [`store_box`] and [`commit`]: the stores since the last commit form a *bulk async-group*;
//! 4. before the tile's shared memory is written again, that thread waits until the engine has
//!    *read* it ([`wait_read`]`::<N>`: at most N groups still reading), and a barrier passes
//!    that on; the global writes themselves complete later ([`wait`]`::<N>` waits for them).
//!
//! What lies past the tensor's edges is not written: the engine clips the box. The emulator
//! reads the tile when the store is issued, checks it was published to the async proxy, keeps
//! the global writes pending until a [`wait`] (or the thread's exit), and reports a thread that
//! overwrites the tile before [`wait_read`], or reads C where a store is still pending.
use super::backend::hopper as backend;
use super::tma::TensorMap;

/// `stmatrix.sync.aligned.m8n8.x4.shared.b16 [row], {r0, r1, r2, r3}`: the warp writes four
/// 8×8 matrices of 16-bit values. Lane `L` gives the shared address of row `L % 8` of matrix
/// `L / 8` (16 bytes, 16-byte aligned); register `i` of lane `L` holds the two elements of row
/// `L / 4`, columns `2·(L % 4)` and `+1`, of matrix `i` (the low half first): the layout of an
/// `mma`/`wgmma` accumulator pair, packed (`Half::pack`). All 32 lanes take part.
#[inline(always)]
pub fn stmatrix_x4(row_address: u32, registers: [u32; 4]) {
    backend::stmatrix_x4(row_address, registers)
}

/// `stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [row], {r0, r1, r2, r3}`: as
/// [`stmatrix_x4`], each matrix transposed on its way: lane `L` gives the address of row
/// `L % 8` of matrix `L / 8` *as stored*, which is column `L % 8` of the fragment — the eight
/// elements that lanes `L % 8 / 2`, `+4`, … `+28` hold in half `L % 2` of register `L / 8`.
/// An accumulator whose rows are C's rows (pairs of adjacent columns) lands with C's columns
/// as shared-memory rows: column-major, as C lies.
#[inline(always)]
pub fn stmatrix_x4_trans(row_address: u32, registers: [u32; 4]) {
    backend::stmatrix_x4_trans(row_address, registers)
}

/// `cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [map, {x, y, z}], [src]`: one
/// thread asks the TMA engine to store the box at shared address `src` (laid out, swizzled, as
/// the map's box) to the tensor at element coordinates `(x, y)` of layer `layer` (the member
/// of a batch), clipped at its edges.
///
/// # Safety
/// `map` points to a tensor map in global memory that outlives the kernel; the box's shared
/// memory was written and published to the async proxy (`fence.proxy.async`) before.
#[inline(always)]
pub unsafe fn store_box(map: *const TensorMap, src: u32, x: i32, y: i32, layer: u32) {
    unsafe { backend::tma_store_3d(map.cast(), src, [x, y, layer as i32]) }
}

/// `cp.async.bulk.commit_group`: this thread's bulk stores since the last commit form a group.
#[inline(always)]
pub fn commit() {
    backend::bulk_commit()
}

/// `cp.async.bulk.wait_group.read PENDING`: waits until at most `PENDING` of this thread's
/// groups are still reading their shared memory, which may then be written again.
#[inline(always)]
pub fn wait_read<const PENDING: u32>() {
    backend::bulk_wait::<PENDING, true>()
}

/// `cp.async.bulk.wait_group PENDING`: waits until at most `PENDING` of this thread's groups
/// are incomplete, their global writes done.
#[inline(always)]
pub fn wait<const PENDING: u32>() {
    backend::bulk_wait::<PENDING, false>()
}
