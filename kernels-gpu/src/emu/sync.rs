//! Where the threads of a block meet: `bar.sync` for the whole block, named barriers
//! (`bar.sync id, threads`) for some of its warps, and the warp-wide operations (`shfl.sync`,
//! `mma.sync`, the `.sync.aligned` operations of `wgmma`) through which the lanes of a warp
//! exchange registers.
//!
//! Each of them only suspends the thread, saying why (`Suspend`); the scheduler (`schedule.rs`)
//! releases the waiting threads once every thread they wait for has arrived, and orders them in
//! the race history (a warp-wide operation orders nothing but where it is `bar.warp.sync`). A
//! warp-wide operation also deposits the lane's registers in a slot of its
//! block before suspending, so that once released each lane reads the others' deposits, as the
//! hardware routes registers between the lanes of a warp.
use super::context::{BlockContext, ThreadContext};
use super::fault::FaultKind;
use super::state::{Deposit, Suspend};

/// The one warp-wide operation that orders the lanes' memory accesses (see `schedule.rs`).
pub(crate) const SYNC_WARP: &str = "bar.warp.sync";

impl ThreadContext {
    pub(crate) fn barrier(&self) {
        self.suspend(Suspend::Barrier);
    }

    /// A warp-wide operation: deposits this lane's `registers` (at most
    /// [`MAX_REGISTERS`](super::state::MAX_REGISTERS)),
    /// waits until every live lane of the warp has deposited for the same operation `op`, and
    /// returns what `read` makes of the warp's deposits, indexed by lane. With
    /// `full_warp`, all 32 lanes must exist (`mma.sync` needs them; a shuffle only needs its
    /// source lane).
    pub(crate) fn warp_collective<R>(
        &self,
        op: &'static str,
        registers: &[u64],
        full_warp: bool,
        read: impl FnOnce(&[Deposit]) -> R,
    ) -> R {
        let b = self.block();
        let parity = self.collective_parity.get();
        self.collective_parity.set(parity ^ 1);
        {
            let mut slots = b.collective_slots.borrow_mut();
            let slot = &mut slots[parity][self.linear as usize];
            slot.op = op;
            slot.len = registers.len();
            slot.registers[..registers.len()].copy_from_slice(registers);
        }
        self.suspend(Suspend::WarpCollective(op == SYNC_WARP));
        let threads = b.block_dim.0 * b.block_dim.1;
        let warp_base = self.linear / 32 * 32;
        let lanes = (threads - warp_base).min(32);
        if full_warp && lanes < 32 {
            self.fault(
                FaultKind::Deadlock,
                format!("`{op}` needs all 32 lanes of a warp; this warp of the block has {lanes}"),
            );
        }
        let slots = b.collective_slots.borrow();
        let warp = &slots[parity][warp_base as usize..(warp_base + lanes) as usize];
        if let Some(other) = warp.iter().find(|d| d.op != op) {
            let other = other.op;
            drop(slots);
            self.fault(
                FaultKind::Deadlock,
                format!("lanes of one warp reached different warp-wide operations (`{op}` and `{other}`): the GPU would hang or compute garbage"),
            );
        }
        read(warp)
    }

    /// `bar.warp.sync 0xffffffff` (`__syncwarp()`): waits for the warp's 32 lanes, and orders
    /// each lane's earlier memory accesses before every lane's later ones.
    pub(crate) fn sync_warp(&self) {
        self.warp_collective(SYNC_WARP, &[], true, |_| ());
    }

    /// `vote.sync.all.pred` with every lane in the mask: whether `p` holds in all of them.
    pub(crate) fn vote_all(&self, p: bool) -> bool {
        self.warp_collective("vote.sync.all.pred", &[p as u64], true, |warp| {
            warp.iter().all(|d| d.registers[0] != 0)
        })
    }

    /// The warp-synchronous exchange behind `shfl.sync.idx`.
    pub(crate) fn shuffle(&self, bits: u64, src_lane: u32) -> u64 {
        let lane = src_lane % 32;
        let value = self.warp_collective("shfl.sync.idx", &[bits], false, |warp| {
            warp.get(lane as usize).map(|d| d.registers[0])
        });
        value.unwrap_or_else(|| {
            self.fault(
                FaultKind::Deadlock,
                format!("shuffle from lane {src_lane}, which does not exist in this block"),
            )
        })
    }

    /// `bar.sync id, threads`: suspends until `threads` threads of the block wait at `id`.
    pub(crate) fn named_barrier(&self, id: u32, threads: u32) {
        let block_threads = self.block().block_dim.0 * self.block().block_dim.1;
        if id >= 16 || threads == 0 || !threads.is_multiple_of(32) || threads > block_threads {
            self.fault(
                FaultKind::Deadlock,
                format!("`bar.sync {id}, {threads}`: the PTX ISA wants a barrier 0 to 15 and a thread count that is a multiple of 32, at most the block's {block_threads}"),
            );
        }
        // Barriers among some threads of a block order them only through vector clocks.
        self.go_asynchronous();
        self.suspend(Suspend::NamedBarrier(id, threads));
    }
}

impl ThreadContext {
    /// This thread's warp now runs with `count` registers per thread (`setmaxnreg`).
    pub(crate) fn set_registers(&self, count: u32) {
        self.block().registers.borrow_mut()[(self.linear / 32) as usize] = Some(count);
    }
}

impl BlockContext {
    /// Whether the registers the warps ended with (after their last `setmaxnreg`) fit what the
    /// block held at launch: `r` per thread, the most that fit 65 536 in steps of 8 (the most
    /// ptxas gives a kernel launched with one block per multiprocessor). An `.inc` beyond them
    /// waits for registers no warp will give back.
    pub(crate) fn check_registers(&self) -> Result<(), String> {
        let registers = self.registers.borrow();
        if registers.iter().all(Option::is_none) {
            return Ok(());
        }
        let threads = self.block_dim.0 * self.block_dim.1;
        let per_thread = (65_536 / threads) / 8 * 8;
        let held = per_thread as u64 * threads as u64;
        let asked: u64 = registers
            .iter()
            .map(|r| 32 * r.unwrap_or(per_thread) as u64)
            .sum();
        if asked > held {
            let counts: Vec<String> = registers
                .iter()
                .map(|r| r.unwrap_or(per_thread).to_string())
                .collect();
            return Err(format!(
                "setmaxnreg: the warps end with {asked} registers ({} per thread, warp by warp), but the block holds {held} ({per_thread} per thread × {threads} threads at launch): a setmaxnreg.inc waits forever for registers no warp gives back",
                counts.join(", ")
            ));
        }
        Ok(())
    }
}
