//! Hopper's asynchronous copies, the thread's side: mbarriers (init, arrive, wait), the TMA loads
//! that complete on them, and the TMA stores that complete in bulk async-groups.
//!
//! The copies take no time in the emulator: a TMA load's box lands the moment it is issued, and a
//! store reads its box then. What makes them asynchronous is the happens-before model
//! (`history.rs`): a box is written by its mbarrier's copy agent at the clock of the phase it
//! completes, so reading it before waiting for that phase is a race whatever the timing; a
//! store's read of shared memory lasts, as its thread's bulk agent, until a `wait_group.read`
//! retires its group. The store's global writes are held back until a `wait_group` retires them
//! (or the block exits), and a global access to them before that is reported. The mbarrier
//! object itself is in `mbarrier.rs`; arrivals on a peer block's mbarrier are in `cluster.rs`.
use super::context::{BlockContext, ThreadContext};
use super::fault::FaultKind;
use super::history::{Epoch, History, MAX_MBARRIERS};
use super::mbarrier::{MBarrier, COUNT_LIMIT};
use super::state::Suspend;

impl ThreadContext {
    // -- mbarrier --

    /// `mbarrier.init.shared::cta.b64 [byte], count`.
    pub(crate) fn mbarrier_init(&self, byte: u32, count: u32) {
        self.check_pool_range(byte, 8, 8, "mbarrier.init");
        if !(1..=COUNT_LIMIT).contains(&(count as i64)) {
            self.fault(
                FaultKind::MbarrierMisuse,
                format!("mbarrier.init with count {count}: the PTX ISA allows 1 to 2^20 - 1"),
            );
        }
        self.go_asynchronous();
        let mut bars = self.block().mbarriers.borrow_mut();
        let index = match bars.iter().position(|m| m.byte == byte) {
            Some(i) => i as u32,
            None if bars.len() < MAX_MBARRIERS as usize => bars.len() as u32,
            None => {
                drop(bars);
                self.fault(
                    FaultKind::MbarrierMisuse,
                    format!("more than {MAX_MBARRIERS} mbarriers in one block: the emulator tracks at most that many"),
                )
            }
        };
        let mut history = self.history();
        let at = self.cluster_byte(byte);
        if let Err(race) = history.generic(self.agent, at, 8, true) {
            drop((history, bars));
            self.fault(FaultKind::SharedRace, format!("mbarrier.init: {race}"));
        }
        // Cluster-wide, so that the copy agents of every block's barriers differ.
        let agent_index = self.block().rank * MAX_MBARRIERS + index;
        history.register_mbarrier(at, agent_index);
        let init = Epoch {
            interval: history.interval(),
            agent: self.agent,
            clock: history.clock_now(self.agent),
        };
        let barrier = MBarrier::new(byte, agent_index, count, init);
        match bars.get_mut(index as usize) {
            Some(slot) => *slot = barrier,
            None => bars.push(barrier),
        }
    }

    /// Runs `f` on the mbarrier at pool byte `byte` of this block, after checking that it was
    /// initialised and that the initialisation is ordered before this thread's use of it.
    fn with_mbarrier<R>(
        &self,
        byte: u32,
        op: &str,
        f: impl FnOnce(&mut MBarrier, &mut History) -> R,
    ) -> R {
        self.block().with_mbarrier_of(self, byte, op, f)
    }

    /// `mbarrier.arrive` (`expect_tx` 0) or `mbarrier.arrive.expect_tx` (`expect_tx` bytes).
    pub(crate) fn mbarrier_arrive(&self, byte: u32, expect_tx: u32) {
        let me = self.agent;
        let error = self.with_mbarrier(byte, "mbarrier.arrive", |bar, history| {
            bar.tx += expect_tx as i64;
            if bar.tx.abs() > COUNT_LIMIT {
                return Some(format!("the tx-count of the mbarrier at pool byte {byte} leaves the range ±(2^20 - 1): {}", bar.tx));
            }
            if bar.pending == 0 {
                return Some(format!("arrive on the mbarrier at pool byte {byte}, whose current phase has no pending arrivals (more arrivals than its count, {})", bar.expected));
            }
            history.release(me, &mut bar.gathered);
            bar.pending -= 1;
            let agent = history.agents().mbarrier(bar.index);
            bar.complete_if_due(agent);
            None
        });
        if let Some(message) = error {
            self.fault(FaultKind::MbarrierMisuse, message);
        }
    }

    /// `mbarrier.expect_tx`: tx-count + `bytes`, no arrival (a phase whose arrivals are all in
    /// and whose copies delivered more than was expected completes once the count is zero).
    pub(crate) fn mbarrier_expect_tx(&self, byte: u32, bytes: u32) {
        let error = self.with_mbarrier(byte, "mbarrier.expect_tx", |bar, history| {
            bar.tx += bytes as i64;
            if bar.tx.abs() > COUNT_LIMIT {
                return Some(format!("the tx-count of the mbarrier at pool byte {byte} leaves the range ±(2^20 - 1): {}", bar.tx));
            }
            let agent = history.agents().mbarrier(bar.index);
            bar.complete_if_due(agent);
            None
        });
        if let Some(message) = error {
            self.fault(FaultKind::MbarrierMisuse, message);
        }
    }

    /// `mbarrier.try_wait.parity` in a loop: suspends until the phase of parity `parity`
    /// has completed, then acquires what that phase gathered.
    pub(crate) fn mbarrier_wait(&self, byte: u32, parity: u32) {
        let me = self.agent;
        loop {
            let done = self.with_mbarrier(byte, "mbarrier.try_wait.parity", |bar, history| {
                let done = bar.phase_done(parity);
                if done {
                    history.acquire(me, &bar.last_phase);
                }
                done
            });
            if done {
                return;
            }
            self.suspend(Suspend::Mbarrier(byte, parity));
        }
    }

    /// A TMA copy of `data` to pool byte `dst`, issued by this thread, completing on the
    /// mbarrier at pool byte `mbarrier`: the box lands now, written by the barrier's copy agent
    /// at the clock of the barrier's current phase, and its bytes are counted off the tx-count.
    /// `rank` is the block of the cluster it lands in (a multicast lands in several; each copy
    /// completes on the mbarrier at the same offset of its block).
    pub(crate) fn tma_write(&self, rank: u32, dst: u32, data: &[u8], mbarrier: u32) {
        let op = "cp.async.bulk.tensor";
        let target = self.peer(rank, op);
        let (agent, clock) = target.with_mbarrier_of(self, mbarrier, op, |bar, history| {
            (history.agents().mbarrier(bar.index), bar.copy_clock())
        });
        let bytes = data.len() as u32;
        let at = rank * self.cluster().pool_bytes + dst;
        let result = self
            .history()
            .async_write(self.agent, at, bytes, agent, clock);
        if let Err(race) = result {
            self.fault(FaultKind::SharedRace, race);
        }
        if rank != self.block().rank {
            let epoch = Epoch {
                interval: 1,
                agent,
                clock,
            };
            let what = format!(
                "a multicast TMA copy issued by {} writes {bytes} bytes at its pool byte {dst}, completing on its mbarrier at pool byte {mbarrier}",
                self.describe_self()
            );
            self.cluster().remote.borrow_mut().push((rank, epoch, what));
        }
        target.pool.borrow_mut()[dst as usize..(dst + bytes) as usize].copy_from_slice(data);
        let error = target.with_mbarrier_of(self, mbarrier, op, |bar, _| {
            bar.tx -= bytes as i64;
            if bar.tx.abs() > COUNT_LIMIT {
                return Some(format!("the tx-count of the mbarrier at pool byte {mbarrier} leaves the range ±(2^20 - 1): {}", bar.tx));
            }
            bar.complete_if_due(agent);
            None
        });
        if let Some(message) = error {
            self.fault(FaultKind::MbarrierMisuse, message);
        }
    }

    // -- TMA stores --

    /// A TMA store issued by this thread reads the box at pool byte `at` (`bytes` bytes) now,
    /// as its agent at the clock of its next group, and writes `writes` to global memory when a
    /// `wait_group` retires that group (or the block exits).
    pub(crate) fn tma_store(&self, at: u32, bytes: u32, writes: Vec<(usize, Vec<u8>)>) {
        self.go_asynchronous();
        let mut bulk = self.bulk.borrow_mut();
        let group = bulk.committed;
        let agent = self.history().agents().bulk(self.agent);
        let result =
            self.history()
                .async_read(self.agent, self.cluster_byte(at), bytes, agent, group + 1);
        if let Err(race) = result {
            drop(bulk);
            self.fault(FaultKind::SharedRace, race);
        }
        let mut pending = self.cluster().pending_stores.borrow_mut();
        for (address, data) in writes {
            pending.push((self.agent, address, data.len()));
            bulk.writes.push((group, address, data));
        }
    }

    /// `cp.async.bulk.commit_group`.
    pub(crate) fn bulk_commit(&self) {
        self.bulk.borrow_mut().committed += 1;
    }

    /// `cp.async.bulk.wait_group{.read} pending`: the reads of all but the `pending` most recent
    /// groups are done (the thread is ordered after them); without `.read`, their global writes
    /// too.
    pub(crate) fn bulk_wait(&self, pending: u32, read_only: bool) {
        let retired = {
            let mut bulk = self.bulk.borrow_mut();
            bulk.read_retired = bulk
                .read_retired
                .max(bulk.committed.saturating_sub(pending));
            bulk.read_retired
        };
        let agent = self.history().agents().bulk(self.agent);
        self.history().acquire_agent(self.agent, agent, retired);
        if !read_only {
            self.complete_stores(|group| group < retired);
        }
    }

    /// Performs this thread's pending global writes of the groups `done` selects.
    fn complete_stores(&self, done: impl Fn(u32) -> bool) {
        let finished: Vec<(u32, usize, Vec<u8>)> = {
            let mut bulk = self.bulk.borrow_mut();
            let (finished, rest) = bulk.writes.drain(..).partition(|w| done(w.0));
            bulk.writes = rest;
            finished
        };
        let mut pending = self.cluster().pending_stores.borrow_mut();
        for (_, address, data) in finished {
            if let Some(i) = pending
                .iter()
                .position(|p| *p == (self.agent, address, data.len()))
            {
                pending.swap_remove(i);
            }
            // SAFETY: checked against the launch's buffers when the store was issued.
            unsafe {
                core::ptr::copy_nonoverlapping(data.as_ptr(), address as *mut u8, data.len())
            };
        }
    }

    /// When this thread's block exits: its TMA stores must have finished reading its shared
    /// memory (which is gone with it); their global writes complete.
    pub(super) fn exit_stores(&self) -> Result<(), String> {
        let unread = {
            let bulk = self.bulk.borrow();
            let issued =
                bulk.committed + u32::from(bulk.writes.iter().any(|w| w.0 == bulk.committed));
            issued > bulk.read_retired
        };
        self.complete_stores(|_| true);
        if unread {
            return Err("the block exits while a TMA store issued by this thread may still read its shared memory (wait with `cp.async.bulk.wait_group.read 0` first)".to_string());
        }
        Ok(())
    }
}

impl BlockContext {
    /// Runs `f` on this block's mbarrier at pool byte `byte` for thread `ctx` (of this block or
    /// of a peer), after checking that it was initialised and that the initialisation is ordered
    /// before the thread's use of it.
    pub(super) fn with_mbarrier_of<R>(
        &self,
        ctx: &ThreadContext,
        byte: u32,
        op: &str,
        f: impl FnOnce(&mut MBarrier, &mut History) -> R,
    ) -> R {
        let mut bars = self.mbarriers.borrow_mut();
        let of = if ctx.block().rank == self.rank {
            String::new()
        } else {
            format!(" of block rank {}", self.rank)
        };
        let Some(bar) = bars.iter_mut().find(|m| m.byte == byte) else {
            drop(bars);
            ctx.fault(
                FaultKind::MbarrierMisuse,
                format!("`{op}` on pool byte {byte}{of}, where no mbarrier was initialised"),
            )
        };
        let mut history = ctx.history();
        if !history.is_ordered_before(bar.init, ctx.agent) {
            let who = history.describe(bar.init.agent);
            drop((history, bars));
            ctx.fault(
                FaultKind::MbarrierMisuse,
                format!("`{op}` on the mbarrier at pool byte {byte}{of} before its initialisation by {who} is visible to this thread (initialise, then `fence.mbarrier_init` and a barrier; a cluster barrier for its peers)"),
            );
        }
        f(bar, &mut history)
    }
}
