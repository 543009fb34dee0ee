//! Thread block clusters (Hopper): a block's rank in its cluster and the cluster's id, the cluster
//! barrier (`barrier.cluster.arrive` and `wait`), and arrivals on a peer block's mbarrier.
//!
//! The blocks of a cluster run under one scheduler (`schedule.rs`), so a peer's shared memory is
//! simply the neighbouring `BlockContext`. What the emulator adds is the rule the hardware does
//! not enforce: a block's shared memory goes away when it exits. An access to a peer that has
//! already exited is a fault at once, and every access to a peer (an arrival here, a multicast
//! TMA copy in `tma.rs`) is recorded, to be checked, when the cluster ends, against the peer's
//! exit: nothing may reach it without being ordered before that exit.
use super::context::{BlockContext, ThreadContext};
use super::fault::FaultKind;
use super::history::Epoch;
use super::state::Suspend;

impl ThreadContext {
    /// This thread, as a report names it ("thread (x, y)", and its block in a cluster).
    pub(super) fn describe_self(&self) -> String {
        self.history().describe(self.agent)
    }

    /// Block `rank` of this thread's cluster, which must exist and not have exited.
    pub(super) fn peer(&self, rank: u32, op: &str) -> &BlockContext {
        let cluster = self.cluster();
        if rank >= cluster.blocks {
            self.fault(
                FaultKind::SharedOutOfBounds,
                format!(
                    "`{op}` names block rank {rank} of a cluster of {} blocks",
                    cluster.blocks
                ),
            );
        }
        if cluster.exits.borrow()[rank as usize].is_some() {
            self.fault(
                FaultKind::SharedRace,
                format!("`{op}` reaches the shared memory of block rank {rank} of the cluster, which has exited (end the kernel with a cluster barrier, `barrier.cluster.arrive` + `wait`, so that no block leaves while a peer may still access it)"),
            );
        }
        // SAFETY: the cluster's blocks are consecutive in `run_cluster`'s vector, by rank.
        let me = self.block();
        unsafe { &*(me as *const BlockContext).offset(rank as isize - me.rank as isize) }
    }

    /// `%cluster_ctarank`.
    pub(crate) fn cluster_rank(&self) -> u32 {
        self.block().rank
    }

    /// `%clusterid.x` and `%nclusterid.x`.
    pub(crate) fn cluster_id(&self) -> (u32, u32) {
        let c = self.cluster();
        (c.id, c.count)
    }

    /// `barrier.cluster.arrive.release`: this thread's clock is released into the phase of its
    /// arrival count.
    pub(crate) fn cluster_arrive(&self) {
        self.go_asynchronous();
        let phase = self.cluster_arrivals.get();
        self.cluster_arrivals.set(phase + 1);
        let mut phases = self.cluster().cluster_phases.borrow_mut();
        if phases.len() <= phase as usize {
            phases.resize(phase as usize + 1, Vec::new());
        }
        self.history()
            .release_into(self.agent, &mut phases[phase as usize]);
    }

    /// `barrier.cluster.wait.acquire`: waits until every thread of the cluster made as many
    /// arrivals as this one, and acquires what they released.
    pub(crate) fn cluster_wait(&self) {
        let phase = self.cluster_arrivals.get();
        if phase == 0 {
            self.fault(
                FaultKind::MbarrierMisuse,
                "`barrier.cluster.wait` without a `barrier.cluster.arrive` before it".to_string(),
            );
        }
        self.suspend(Suspend::ClusterBarrier(phase));
        let phases = self.cluster().cluster_phases.borrow();
        self.history()
            .acquire(self.agent, &phases[phase as usize - 1]);
    }

    /// Records an access to block `rank`'s shared memory, to be checked against its exit when the
    /// cluster ends (nothing may reach a block that has left).
    fn record_remote(&self, rank: u32, what: impl FnOnce() -> String) {
        if rank != self.block().rank {
            let epoch = {
                let history = self.history();
                Epoch {
                    interval: history.interval(),
                    agent: self.agent,
                    clock: history.clock_now(self.agent),
                }
            };
            self.cluster()
                .remote
                .borrow_mut()
                .push((rank, epoch, what()));
        }
    }

    /// `st.shared::cluster` of `bytes` at pool byte `byte` of block `rank` (this block's own
    /// too): checked against that block's pool, and a write in the cluster's race history at that
    /// block's byte, so that a reader whose wait did not acquire it is reported.
    pub(crate) fn shared_store_remote(&self, rank: u32, byte: u32, bytes: &[u8]) {
        let op = "st.shared::cluster";
        let target = self.peer(rank, op);
        let len = bytes.len() as u32;
        let pool_bytes = target.pool.borrow().len() as u32;
        if byte.checked_add(len).is_none_or(|end| end > pool_bytes) || !byte.is_multiple_of(len) {
            self.fault(
                FaultKind::SharedOutOfBounds,
                format!("`{op}` of {len} bytes at pool byte {byte} of block rank {rank}, whose pool has {pool_bytes} bytes (or the address is not {len}-byte aligned)"),
            );
        }
        self.record_remote(rank, || {
            format!("{} stores to its pool byte {byte}", self.describe_self())
        });
        let at = rank * self.cluster().pool_bytes + byte;
        let race = self.history().generic(self.agent, at, len, true);
        if let Err(race) = race {
            self.fault(FaultKind::SharedRace, race);
        }
        target.pool.borrow_mut()[byte as usize..(byte + len) as usize].copy_from_slice(bytes);
    }

    /// `mbarrier.arrive.release.cluster.shared::cluster` on the mbarrier at pool byte `byte` of
    /// block `rank` (this block's own too).
    pub(crate) fn mbarrier_arrive_remote(&self, rank: u32, byte: u32) {
        let op = "mbarrier.arrive.shared::cluster";
        let target = self.peer(rank, op);
        self.record_remote(rank, || {
            format!(
                "{} arrives on its mbarrier at pool byte {byte}",
                self.describe_self()
            )
        });
        let me = self.agent;
        let error = target.with_mbarrier_of(self, byte, op, |bar, history| {
            if bar.pending == 0 {
                return Some(format!("arrive on the mbarrier at pool byte {byte} of block rank {rank}, whose current phase has no pending arrivals (more arrivals than its count, {})", bar.expected));
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
}
