//! What the emulator reports when a kernel breaks a rule of the machine: [`Fault`], its
//! [`FaultKind`], and where.
use core::fmt;

/// What went wrong, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub kernel: String,
    pub block: (u32, u32),
    pub thread: (u32, u32),
    pub detail: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    GlobalOutOfBounds,
    MisalignedVectorAccess,
    SharedOutOfBounds,
    SharedRace,
    Deadlock,
    /// An mbarrier used against the PTX ISA's rules: before its init is visible, out of its
    /// counts' ranges, or touched by ordinary loads and stores.
    MbarrierMisuse,
    /// A `wgmma` protocol error: no `wgmma.fence` before it, accumulators read before the
    /// `wgmma.wait_group` that retires their group, a descriptor outside the pool.
    WgmmaMisuse,
    /// A TMA copy that the PTX ISA or the driver's tensor-map rules forbid.
    TmaMisuse,
    /// In a programmatic dependent launch, global memory that the kernel before may still
    /// write, touched before the thread's `griddepcontrol.wait`.
    GridDependency,
    /// A Rust panic inside the kernel (an arithmetic overflow, say).
    Panic,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            FaultKind::GlobalOutOfBounds => "out-of-bounds global memory access",
            FaultKind::MisalignedVectorAccess => "misaligned vector access",
            FaultKind::SharedOutOfBounds => "out-of-bounds shared memory access",
            FaultKind::SharedRace => "shared memory race (missing barrier)",
            FaultKind::Deadlock => "deadlock",
            FaultKind::MbarrierMisuse => "mbarrier misuse",
            FaultKind::WgmmaMisuse => "wgmma misuse",
            FaultKind::TmaMisuse => "TMA misuse",
            FaultKind::GridDependency => "global access before griddepcontrol.wait",
            FaultKind::Panic => "panic in kernel",
        };
        write!(
            f,
            "emulator: {what} in kernel `{}`, block ({}, {}), thread ({}, {}): {}",
            self.kernel, self.block.0, self.block.1, self.thread.0, self.thread.1, self.detail
        )
    }
}

impl std::error::Error for Fault {}
