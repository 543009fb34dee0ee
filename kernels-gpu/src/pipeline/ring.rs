//! The ring of stages: where each stage and its mbarriers lie in the pool, and a position in
//! the ring (CUTLASS's `PipelineState`).
//!
//! A stage is a slice of k of both operands, written by the TMA engine. Each stage has a *full*
//! barrier (the producer's `arrive.expect_tx` of the bytes the copies deliver; the phase
//! completes when they have landed) and an *empty* barrier (the consumers' arrivals once their
//! `wgmma`s are done reading the stage), and a kernel may ask for more barriers per stage
//! (3xTF32's *ready*). Both sides walk the ring in the same order and track the parity of the
//! phase they expect, which flips each time the ring wraps: no counter is shared.
use crate::device::mbarrier::MBarrier;
use crate::device::pool_padding_to;
use crate::device::tma::Swizzle;

/// The alignment of the stages: the 128-byte swizzle's repeat (the swizzle is a function of the
/// absolute shared address, so a stage must start where the pattern starts).
pub const STAGE_ALIGN: u32 = Swizzle::B128.atom();

/// A position in a ring of `stages` stages: the stage, and the parity of the phase its barriers
/// are in for this pass of the ring. (The count is a field, not a const parameter, so that a
/// kernel's associated constants can make one; it is a constant once inlined.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ring {
    pub stage: u32,
    pub phase: u32,
    stages: u32,
}

impl Ring {
    #[inline(always)]
    pub fn start(stages: u32) -> Self {
        Ring {
            stage: 0,
            phase: 0,
            stages,
        }
    }

    #[inline(always)]
    pub fn advance(&mut self) {
        self.stage += 1;
        if self.stage == self.stages {
            self.stage = 0;
            self.phase ^= 1;
        }
    }

    /// `slices` positions further (a ping-pong consumer skips the other one's tile).
    #[inline(always)]
    pub fn skip(&mut self, slices: u32) {
        let to = self.stage + slices;
        self.phase ^= (to / self.stages) & 1;
        self.stage = to % self.stages;
    }
}

/// Where the stages, their barriers and the kernel's other shared memory lie: stage `s` at
/// `base + s·stage_bytes` (`base` aligned to [`STAGE_ALIGN`] in the shared window), then
/// `kinds` barriers per stage and the kernel's extra barriers, then its extra bytes (an
/// epilogue's staging tile), aligned to [`STAGE_ALIGN`] again.
#[derive(Clone, Copy, Debug)]
pub struct Stages {
    base: u32,
    count: u32,
    stage_bytes: u32,
    kinds: u32,
    extra_barriers: u32,
}

impl Stages {
    /// The pool bytes such a layout needs, with the room to align the stages (the pool itself
    /// is only 16-byte aligned).
    pub const fn pool_bytes(
        count: u32,
        stage_bytes: u32,
        kinds: u32,
        extra_barriers: u32,
        extra_bytes: u32,
    ) -> u32 {
        let end = count * stage_bytes + (kinds * count + extra_barriers) * MBarrier::BYTES;
        let end = if extra_bytes > 0 {
            end.next_multiple_of(STAGE_ALIGN) + extra_bytes
        } else {
            end
        };
        end + STAGE_ALIGN - 16
    }

    #[inline(always)]
    pub fn new(count: u32, stage_bytes: u32, kinds: u32, extra_barriers: u32) -> Self {
        Stages {
            base: pool_padding_to(STAGE_ALIGN),
            count,
            stage_bytes,
            kinds,
            extra_barriers,
        }
    }

    /// A position at the start of this ring.
    #[inline(always)]
    pub fn ring(self) -> Ring {
        Ring::start(self.count)
    }

    /// Pool byte of stage `s` (aligned to [`STAGE_ALIGN`] in the shared window).
    #[inline(always)]
    pub fn stage(self, s: u32) -> u32 {
        self.base + s * self.stage_bytes
    }

    /// Bytes from stage 0 to stage `s`: what a `wgmma` descriptor of stage 0 advances by to
    /// be stage `s`'s.
    #[inline(always)]
    pub fn offset(self, s: u32) -> u32 {
        s * self.stage_bytes
    }

    /// Barrier `kind` (0 full, 1 empty, 2… the kernel's) of stage `s`.
    #[inline(always)]
    pub fn barrier(self, kind: u32, s: u32) -> MBarrier {
        MBarrier::at(self.base + self.count * self.stage_bytes).offset(kind * self.count + s)
    }

    /// Filled by the copies.
    #[inline(always)]
    pub fn full(self, s: u32) -> MBarrier {
        self.barrier(0, s)
    }

    /// Released by the consumers.
    #[inline(always)]
    pub fn empty(self, s: u32) -> MBarrier {
        self.barrier(1, s)
    }

    /// The kernel's `i`-th barrier after the stages' (ping-pong's ordering barriers).
    #[inline(always)]
    pub fn extra_barrier(self, i: u32) -> MBarrier {
        self.barrier(self.kinds, i)
    }

    /// Pool byte of the kernel's extra memory, aligned to [`STAGE_ALIGN`] in the shared window.
    #[inline(always)]
    pub fn extra(self) -> u32 {
        let barriers = (self.kinds * self.count + self.extra_barriers) * MBarrier::BYTES;
        self.base + (self.count * self.stage_bytes + barriers).next_multiple_of(STAGE_ALIGN)
    }
}
