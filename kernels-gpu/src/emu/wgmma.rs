//! Hopper's warpgroup MMA (`wgmma`), the thread's side of its protocol: `wgmma.fence`, the groups
//! committed and waited for, the shared-memory operands and register A fragments the tensor
//! cores read; and `fence.proxy.async`, which orders a thread's ordinary stores before those
//! reads.
//!
//! The device layer computes the product when the `wgmma` is issued; what is checked here is
//! that the kernel keeps the protocol that makes the real, asynchronous `wgmma` correct: a fence
//! before issuing, operands (in shared memory or in registers) left alone and accumulators not
//! read until a `wgmma.wait_group` retires their group. On the GPU a violation computes garbage
//! only when the timing is unlucky; here it is a fault on every run.
use super::context::ThreadContext;
use super::fault::FaultKind;

impl ThreadContext {
    /// `fence.proxy.async.shared::cta`.
    pub(crate) fn fence_proxy_async(&self) {
        self.go_asynchronous();
        self.history().fence_proxy(self.agent);
    }

    /// `wgmma.fence.sync.aligned` (warp-wide).
    pub(crate) fn wgmma_fence(&self) {
        self.go_asynchronous();
        self.warp_collective("wgmma.fence", &[], true, |_| ());
        let mut lane = self.wgmma.get();
        lane.fenced = true;
        self.wgmma.set(lane);
    }

    /// Before a `wgmma.mma_async`: the PTX ISA wants a `wgmma.fence` before the first one and
    /// between any register access and a `wgmma` using the same registers; the emulator asks
    /// for one after every `wgmma.wait_group` (after which the kernel reads or writes
    /// accumulators and operands).
    pub(crate) fn wgmma_check_fenced(&self, op: &str) {
        if !self.wgmma.get().fenced {
            self.fault(
                FaultKind::WgmmaMisuse,
                format!("`{op}` without a `wgmma.fence` since the start or the last `wgmma.wait_group`: the tensor cores may read registers the warp has not finished writing"),
            );
        }
    }

    /// The group the `wgmma` issued now belongs to (it completes when a wait retires it).
    pub(crate) fn wgmma_group(&self) -> u32 {
        self.wgmma.get().committed
    }

    /// Records the shared-memory operand reads of this warp's `wgmma` (called by one lane, after
    /// the warp-wide exchange): they last until the wait that retires the current group.
    pub(crate) fn wgmma_reads(&self, ranges: &[(u32, u32)]) {
        let agent = self.wgmma_agent();
        let clock = self.wgmma.get().committed + 1;
        for &(byte, bytes) in ranges {
            self.check_pool_range(byte, bytes, 16, "wgmma operand (descriptor)");
            let result =
                self.history()
                    .async_read(self.agent, self.cluster_byte(byte), bytes, agent, clock);
            if let Err(race) = result {
                self.fault(FaultKind::SharedRace, race);
            }
        }
    }

    /// The agent of this thread's warp's `wgmma` operand reads.
    fn wgmma_agent(&self) -> u32 {
        let agents = self.history().agents();
        agents.warp(self.block().rank, self.linear / 32)
    }

    /// Records that the `wgmma` issued now reads its A fragment from the kernel's
    /// `FragA<Tf32, 4>` at `address` (bits `bits`) until its group retires.
    pub(crate) fn wgmma_hold(&self, address: usize, bits: [u32; 4]) {
        let group = self.wgmma.get().committed;
        self.wgmma_held.borrow_mut().push((group, address, bits));
    }

    /// `wgmma.commit_group.sync.aligned`.
    pub(crate) fn wgmma_commit(&self) {
        self.go_asynchronous();
        self.warp_collective("wgmma.commit_group", &[], true, |_| ());
        let mut lane = self.wgmma.get();
        lane.committed += 1;
        self.wgmma.set(lane);
    }

    /// `wgmma.wait_group.sync.aligned pending`: every group but the `pending` most recent is
    /// complete; the lane is ordered after their operand reads.
    pub(crate) fn wgmma_wait(&self, pending: u32) {
        self.go_asynchronous();
        self.warp_collective("wgmma.wait_group", &[], true, |_| ());
        let mut lane = self.wgmma.get();
        lane.retired = lane.retired.max(lane.committed.saturating_sub(pending));
        lane.fenced = false;
        self.wgmma.set(lane);
        let agent = self.wgmma_agent();
        self.history()
            .acquire_agent(self.agent, agent, lane.retired);
        // The A fragments of the retired groups must have stayed as they were: the tensor cores
        // read them until now (on the GPU, overwriting them corrupts the product).
        let retired: Vec<_> = {
            let mut held = self.wgmma_held.borrow_mut();
            let (done, running) = held.drain(..).partition(|h| h.0 < lane.retired);
            *held = running;
            done
        };
        for (group, address, bits) in retired {
            // SAFETY: the address of a `FragA<Tf32, 4>` (four transparent u32) in the running
            // kernel's frame, which outlives the wait.
            let now = unsafe { *(address as *const [u32; 4]) };
            if now != bits {
                self.fault(
                    FaultKind::WgmmaMisuse,
                    format!("the A fragment that a `wgmma` of group {group} reads from registers was overwritten before `wgmma.wait_group` retired the group: the tensor cores read those registers until then (keep one fragment buffer per group in flight)"),
                );
            }
        }
    }

    /// Faults unless the `wgmma` group `group` has been retired by a `wgmma.wait_group`: the
    /// accumulators it writes may not be read before.
    pub(crate) fn wgmma_check_retired(&self, group: u32, what: &str) {
        let lane = self.wgmma.get();
        if group >= lane.retired {
            self.fault(
                FaultKind::WgmmaMisuse,
                format!(
                    "{what} while the `wgmma` writing them may still run: its group ({}) is {}, and `wgmma.wait_group` has retired {} groups",
                    group,
                    if group < lane.committed { "committed but not waited for" } else { "not even committed" },
                    lane.retired
                ),
            );
        }
    }
}
