//! The mbarrier object of the PTX ISA (section "Parallel Synchronization and Communication
//! Instructions: mbarrier"), as the emulator keeps it: an 8-byte object in shared memory with a
//! current phase, a pending and an expected arrival count, and a transaction count (tx-count).
//!
//! - `mbarrier.init count`: phase 0, pending = expected = `count` (1 to 2²⁰ − 1), tx-count 0.
//! - `mbarrier.arrive`: pending − 1. `mbarrier.arrive.expect_tx bytes`: tx-count + `bytes`,
//!   then the arrive. A TMA copy's `complete_tx` subtracts the bytes it delivered.
//! - The phase completes when pending and tx-count are both zero: the phase advances, pending
//!   is reset to the expected count. The tx-count lies in −(2²⁰ − 1)..2²⁰ − 1.
//! - `mbarrier.try_wait.parity p` is true when the phase of parity `p` has completed, that is
//!   when the current phase's parity is not `p` (valid for the current phase and the one
//!   before it).
//!
//! For the happens-before model ([`super::history`]) every phase gathers the clocks of the
//! threads that arrived in it (an arrive is a release) and the clock of the barrier's copy
//! agent; a successful wait acquires what the last completed phase gathered.
use super::history::Epoch;

/// The largest pending count and the tx-count's bound (2²⁰ − 1).
pub(crate) const COUNT_LIMIT: i64 = (1 << 20) - 1;

pub(crate) struct MBarrier {
    /// Pool byte of the object.
    pub byte: u32,
    /// The agent index of the copies completing on it (see `history::Agents::mbarrier`).
    pub index: u32,
    /// Who initialised it, when: a thread must be ordered after the init to use the barrier.
    pub init: Epoch,
    pub expected: u32,
    pub pending: u32,
    pub tx: i64,
    /// Phases completed so far: the current phase is number `completed`.
    pub completed: u32,
    /// The clocks released into the current phase.
    pub gathered: Vec<u32>,
    /// What the last completed phase gathered: a successful wait acquires it.
    pub last_phase: Vec<u32>,
}

impl MBarrier {
    pub(crate) fn new(byte: u32, index: u32, count: u32, init: Epoch) -> Self {
        MBarrier {
            byte,
            index,
            init,
            expected: count,
            pending: count,
            tx: 0,
            completed: 0,
            gathered: Vec::new(),
            last_phase: Vec::new(),
        }
    }

    /// The parity of the current (incomplete) phase.
    pub(crate) fn current_parity(&self) -> u32 {
        self.completed & 1
    }

    /// `try_wait.parity`: whether the phase of parity `parity` has completed.
    pub(crate) fn phase_done(&self, parity: u32) -> bool {
        self.current_parity() != parity & 1
    }

    /// Completes the phase if nothing is pending; `copy_agent` is the barrier's agent id. The
    /// copies counted in this phase wrote at clock `completed + 1` of that agent.
    pub(crate) fn complete_if_due(&mut self, copy_agent: u32) {
        if self.pending == 0 && self.tx == 0 {
            let mut gathered = core::mem::take(&mut self.gathered);
            if gathered.len() <= copy_agent as usize {
                gathered.resize(copy_agent as usize + 1, 0);
            }
            gathered[copy_agent as usize] = self.completed + 1;
            self.last_phase = gathered;
            self.completed += 1;
            self.pending = self.expected;
        }
    }

    /// The clock the copies counted in the current phase write at.
    pub(crate) fn copy_clock(&self) -> u32 {
        self.completed + 1
    }

    /// One line of state for a deadlock report.
    pub(crate) fn describe(&self) -> String {
        format!(
            "the mbarrier at pool byte {} is in phase {} (parity {}) with {} of {} arrivals pending and a tx-count of {} bytes",
            self.byte,
            self.completed,
            self.current_parity(),
            self.pending,
            self.expected,
            self.tx
        )
    }
}
