//! Arrival counters in global memory: how the blocks of one grid hand work to each other
//! without a second launch.
//!
//! The split-k of [`crate::variants::wgmma_narrow`] has several blocks compute parts of one
//! tile of C. Each writes its part to a workspace and arrives on the tile's counter; the block
//! whose arrival completes the count adds the parts and writes C (CUTLASS's "serial" split-k
//! and its stream-k fixup use the same pattern). What makes it correct, in the PTX memory
//! model's terms:
//!
//! 1. every thread of the block writes its share of the part, then the block's threads meet at
//!    a barrier, so that one thread's *release* covers all of their writes (a barrier and a
//!    release at GPU scope are cumulative);
//! 2. that thread arrives with `atom.acq_rel.gpu` ([`Semaphore::arrive`]): release for its
//!    block's writes, acquire for every earlier arrival's;
//! 3. it passes the count to its block through shared memory and a second barrier; if it was the
//!    last, the block reads the other parts, whose writes the acquire made visible;
//! 4. the last block puts the counter back to zero ([`Semaphore::reset`]) for the next launch on
//!    the stream (launches on one stream are ordered).
//!
//! No block waits for another, so the pattern cannot deadlock, whatever the order the blocks
//! run in, and the sum is taken in the order of the parts, not of the arrivals: the result
//! does not depend on timing.
//!
//! The emulator implements the arrival as a host atomic with acquire-release ordering (its blocks
//! run on several worker threads at once) and checks the counter's address like every global
//! access.
use super::backend;

/// A counter in global memory, zero before the first arrival of a launch.
#[derive(Clone, Copy, Debug)]
pub struct Semaphore(*mut u32);

impl Semaphore {
    /// The counter at `counter`.
    #[inline(always)]
    pub fn new(counter: *mut u32) -> Self {
        Semaphore(counter)
    }

    /// Adds one, returns the count before (`atom.acq_rel.gpu.global.add.u32`).
    ///
    /// # Safety
    /// The counter lies in global memory, 4-byte aligned.
    #[inline(always)]
    pub unsafe fn arrive(self) -> u32 {
        unsafe { backend::atom_add_acq_rel_gpu(self.0, 1) }
    }

    /// Adds one, returns the count before, and orders nothing else
    /// (`atom.relaxed.gpu.global.add.u32`): a ticket, for a counter through which no data is
    /// handed over (the tile queue's, [`crate::pipeline::queue`]).
    ///
    /// # Safety
    /// As [`Semaphore::arrive`].
    #[inline(always)]
    pub unsafe fn take(self) -> u32 {
        unsafe { backend::atom_add_relaxed_gpu(self.0, 1) }
    }

    /// Back to zero, for the next launch (`st.relaxed.gpu.global.u32`).
    ///
    /// # Safety
    /// As [`Semaphore::arrive`]; no block of this launch arrives on it any more.
    #[inline(always)]
    pub unsafe fn reset(self) {
        unsafe { backend::st_relaxed_gpu(self.0, 0) }
    }
}
