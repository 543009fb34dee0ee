//! Stream-k's fixup: how the blocks that share a tile ([`super::schedule::StreamK`]) add their
//! parts without a second launch.
//!
//! Each part is a block's accumulators for its slices of the tile. Every block writes its part
//! to its own slab of a workspace and arrives on the tile's counter ([`Semaphore`]); the block
//! whose arrival completes the count reads the others' slabs, adds all parts in the order of
//! their blocks (not of their arrivals: the sum does not depend on timing), puts the counter
//! back to zero and writes C. No block waits for another.
//!
//! The host gives the workspace and the counters after the kernel's tensor maps
//! ([`Scratch::after`]): two slabs of `threads × R` f32 per block (a block's first and last
//! segments), laid out so that each thread's registers go out as 16-byte stores that a warp
//! makes contiguous, and one zeroed u32 per tile, which every launch leaves zeroed.
use super::schedule::Segment;
use super::Work;
use crate::device::semaphore::Semaphore;
use crate::device::tma::TensorMap;
use crate::device::{named_barrier, GlobalMut, Shared};

/// Where the parts go: the host writes the two addresses after the kernel's tensor maps.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Scratch {
    pub workspace: *mut f32,
    pub counters: *mut u32,
}

impl Scratch {
    /// The scratch the host placed after `maps` tensor maps at `at`.
    ///
    /// # Safety
    /// The host wrote a [`Scratch`] there.
    #[inline(always)]
    pub unsafe fn after(at: *const TensorMap, maps: usize) -> Self {
        unsafe { *(at.wrapping_add(maps) as *const Scratch) }
    }
}

/// The `bar.sync` id of the fixup's two barriers among the consumer threads (0 is the block's,
/// 1 to 3 the TMA-store epilogue's, one per consumer warpgroup).
pub const FIXUP_BARRIER: u32 = 4;

/// Bytes of shared memory the fixup needs (the flag that tells the block whether it finishes
/// the tile), for a kernel's `EXTRA_BYTES`.
pub const FIXUP_BYTES: u32 = 16;

/// A part of `work`'s tile (this thread's `R` accumulators, thread `thread` of the `threads`
/// consumer threads). Returns `true` in the block that finishes the tile, with `values` now the
/// sum of all parts, `false` in the others. Called by every consumer thread; `flag` is the pool
/// byte of [`FIXUP_BYTES`] of shared memory.
///
/// # Safety
/// `scratch` is the launch's (a slab per segment, a zeroed counter per tile), `R` a multiple of
/// 4, `work` a stream-k segment of this block.
// ANCHOR: core_loop
#[inline(always)]
pub unsafe fn finish<const R: usize>(
    scratch: Scratch,
    work: &Work,
    values: &mut [f32; R],
    thread: u32,
    threads: u32,
    flag: u32,
) -> bool {
    const { assert!(R.is_multiple_of(4)) };
    let slab_len = (threads as usize) * R;
    let slab = |j: u32| {
        let at = Segment::slab(work.slab0, j) as usize * slab_len;
        GlobalMut::new(scratch.workspace.wrapping_add(at))
    };
    // Register `4q + e` of this thread at `4·(q·threads + thread) + e`: a warp's 16-byte stores
    // of one `q` are contiguous.
    let at = |q: usize| (q * threads as usize + thread as usize) * 4;
    let own = slab(work.split);
    for q in 0..R / 4 {
        let part = [
            values[4 * q],
            values[4 * q + 1],
            values[4 * q + 2],
            values[4 * q + 3],
        ];
        unsafe { own.store4(at(q), part) };
    }
    // Every thread's part is written before the block arrives (the arrival releases them all).
    named_barrier(FIXUP_BARRIER, threads);
    let last = Shared::<f32>::at(flag, 1);
    if thread == 0 {
        let counter = Semaphore::new(scratch.counters.wrapping_add(work.unit as usize));
        let arrived = unsafe { counter.arrive() } + 1;
        let finishes = arrived == work.parts;
        if finishes {
            unsafe { counter.reset() };
        }
        last.store(0, if finishes { 1.0 } else { 0.0 });
    }
    named_barrier(FIXUP_BARRIER, threads);
    if last.load(0) == 0.0 {
        return false;
    }
    // All parts from the workspace, this block's too, in the parts' order: the same sum
    // whoever finishes, and no second copy of the accumulators in registers. One block reads
    // every part, so its loads are issued in groups before the additions that use them (a
    // load followed at once by its addition waits a round trip to L2 each): `U` parts of `C`
    // registers at a time, as many as the 168 registers the kernels launch with leave room for.
    match R {
        0..=16 => sum_parts::<R, 4, R>(values, work.parts, slab, at),
        17..=32 => sum_parts::<R, 2, 32>(values, work.parts, slab, at),
        33..=64 => sum_parts::<R, 1, 64>(values, work.parts, slab, at),
        _ => sum_parts::<R, 1, 16>(values, work.parts, slab, at),
    }
    true
}
// ANCHOR_END: core_loop

/// `values = Σ_j part j`, in order of j, `C` registers at a time, loading `U` parts of them
/// before adding them.
#[inline(always)]
fn sum_parts<const R: usize, const U: usize, const C: usize>(
    values: &mut [f32; R],
    parts: u32,
    slab: impl Fn(u32) -> GlobalMut<f32>,
    at: impl Fn(usize) -> usize,
) {
    // (Every arm of the caller's match is compiled for every R: the chunk is at most R.)
    let c = C.min(R);
    *values = [0.0; R];
    for chunk in 0..R / c {
        let mut first = 0;
        while first < parts {
            let mut loaded = [[0.0f32; C]; U];
            for (u, part) in loaded.iter_mut().enumerate() {
                let j = first + u as u32;
                if j < parts {
                    let slab = slab(j);
                    for q in 0..c / 4 {
                        let four = unsafe { slab.load4(at(chunk * c / 4 + q)) };
                        part[4 * q..4 * q + 4].copy_from_slice(&four);
                    }
                }
            }
            for (u, part) in loaded.iter().enumerate() {
                if first + (u as u32) < parts {
                    for (value, add) in values[chunk * c..chunk * c + c].iter_mut().zip(part) {
                        *value += add;
                    }
                }
            }
            first += U as u32;
        }
    }
}
