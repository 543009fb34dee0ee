//! Programmatic dependent launch (sm_90): a kernel that starts before the kernel ahead of it in
//! the stream has ended.
//!
//! In a stream, a kernel starts when the one before it has ended and its writes are visible:
//! between the two sit the first one's tail (its last blocks running, most multiprocessors
//! idle), the second one's launch, its prologue (barriers, tensor maps) and its ramp to full
//! bandwidth. A decode step is a chain of GEMMs of 10–100 µs each, and those gaps are a part
//! of it worth having back. Launched with the attribute
//! `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`, the second kernel may start as soon
//! as every block of the first has executed [`launch_dependents`] (or ended); it must then
//! execute [`wait_for_prior_grids`] before it touches anything the first one writes. What it
//! does before the wait is what it gains: here, the TMA engine prefetches the first slices of
//! its weights into L2 ([`super::tma::prefetch_box`]), which no kernel of the chain writes.
//!
//! Both instructions are harmless where no such launch is made: the wait returns at once when
//! there is no grid to wait for, and the hint has no one to wake. So the Hopper skeleton
//! ([`crate::pipeline::run`]) executes them in every kernel, and the host decides per launch
//! whether to ask for the early start.
//!
//! On the emulator, a launch made with [`crate::emu::launch_dependent`] names the buffers the
//! kernel before it may write; a thread that touches one before its own wait is reported.
use super::backend::hopper as backend;

/// `griddepcontrol.wait`: waits until every grid this one depends on (the kernel before it,
/// under a programmatic dependent launch) has ended and its writes are visible; at once where
/// there is none. Every thread that touches global memory another kernel writes executes it
/// first.
#[inline(always)]
pub fn wait_for_prior_grids() {
    backend::griddepcontrol_wait()
}

/// `griddepcontrol.launch_dependents`: lets the kernel after this one start once every block
/// of this grid has executed it (or ended). It promises nothing about this kernel's writes:
/// the next kernel's [`wait_for_prior_grids`] still waits for this grid's end.
#[inline(always)]
pub fn launch_dependents() {
    backend::griddepcontrol_launch_dependents()
}
