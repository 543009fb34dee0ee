//! Happens-before for shared memory: who last wrote and read each 4-byte word of a block's
//! pool, and whether the thread (or asynchronous unit) now accessing it is ordered after them.
//!
//! Two regimes, one check.
//!
//! - **Barriers only** (every kernel of the documents): the block's history is cut into
//!   *barrier intervals* by `bar.sync`, and an access conflicts with an access of another
//!   thread in the same interval: nothing else can order two threads of a block. This is the
//!   cheap regime, and the only one until a kernel uses an operation below.
//! - **Asynchronous operations** (Hopper: `mbarrier`, TMA, `wgmma`, `fence.proxy.async`): threads
//!   order themselves without barriers, by arriving on an mbarrier (a *release*) and waiting for
//!   its phase (an *acquire*), and two asynchronous units access shared memory on their own: the
//!   TMA engine writes boxes that complete on an mbarrier, and the tensor cores read operands
//!   until the issuing warp's `wgmma.wait_group` retires them. Each is an **agent** with a clock,
//!   and each thread carries a vector clock: the latest clock of every agent it is ordered
//!   after. An access made by agent `a` at clock `c` happens before thread `t` when
//!   `vc[t][a] >= c` (or, for two threads, when a barrier lies between them). This is the
//!   vector-clock race detection of the literature (FastTrack's epochs and read sets), with
//!   the PTX ISA's synchronisation as its edges:
//!   - `mbarrier.arrive` releases the thread's clock into the barrier's current phase;
//!     completing a phase gathers every arrival and the copies' writes; a successful
//!     `try_wait.parity` acquires the last completed phase;
//!   - a TMA copy writes as the agent of its mbarrier, at the clock of the phase it completes:
//!     reading its box needs that phase acquired, whatever the timing;
//!   - `wgmma.mma_async` reads as its warp's agent, at the clock of the `wgmma` group it
//!     belongs to; `wgmma.wait_group` acquires the groups it retires. Overwriting an operand
//!     needs the retiring wait ordered before the write;
//!   - `bar.warp.sync` and `bar.sync` join the clocks of the lanes or threads they
//!     synchronise; the other warp-wide operations (`shfl.sync`, `wgmma`'s `.sync.aligned`)
//!     wait for the warp but order no memory access;
//! - **Proxies.** Ordinary loads and stores go through the *generic proxy*, TMA and `wgmma`
//!   through the *async proxy*. The PTX ISA asks for `fence.proxy.async` between a thread's
//!   ordinary stores and an asynchronous read of the same memory ("an async proxy fence must be
//!   used to establish an ordering between prior writes to shared memory matrices and
//!   subsequent reads"). Each thread's fences are recorded, and a `wgmma` read of a word that a
//!   thread stored is accepted only if that thread fenced after the store and the fence happens
//!   before the read. (The other direction needs no fence: a TMA copy's completion and a
//!   `wgmma`'s are followed by an implicit generic-async proxy fence.)
use std::collections::HashMap;

/// The most mbarriers a block may initialise (each is an agent of its own).
pub(crate) const MAX_MBARRIERS: u32 = 64;

/// One access: `agent` at `clock`, in barrier interval `interval` (0: never accessed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Epoch {
    pub interval: u32,
    pub agent: u32,
    pub clock: u32,
}

impl Epoch {
    fn is_set(self) -> bool {
        self.interval != 0
    }
}

/// The history of one 4-byte word of the pool.
#[derive(Clone, Copy, Default)]
struct Word {
    write: Epoch,
    /// How many `fence.proxy.async` the writing thread had executed before the write: its next
    /// fence is the one that publishes this write to the async proxy.
    fences_before: u32,
    read: Epoch,
    /// Several readers unordered with each other: the side table holds them (asynchronous
    /// regime), or, with barriers only, "several threads of this interval".
    many_readers: bool,
    /// Part of an initialised mbarrier object: ordinary loads and stores may not touch it.
    mbarrier: bool,
}

/// Who accesses shared memory, numbered: the threads of every block of the cluster, then one
/// agent per warp (its `wgmma` operand reads), then one per mbarrier (the TMA copies that
/// complete on it), then one per thread (the TMA stores it issues, reading shared memory).
/// Block `r` of the cluster has threads `r·T .. (r+1)·T` and its pool at bytes
/// `r·P .. (r+1)·P` of the history.
#[derive(Clone, Copy)]
pub(crate) struct Agents {
    /// Threads, warps per block; blocks in the cluster.
    threads: u32,
    warps: u32,
    blocks: u32,
    block_dim_x: u32,
}

impl Agents {
    pub(crate) fn new(threads: u32, block_dim_x: u32, blocks: u32) -> Self {
        Agents {
            threads,
            warps: threads.div_ceil(32),
            blocks,
            block_dim_x,
        }
    }

    /// The `wgmma` agent of warp `warp` of block `rank`.
    pub(crate) fn warp(&self, rank: u32, warp: u32) -> u32 {
        self.blocks * self.threads + rank * self.warps + warp
    }

    /// The copy agent of mbarrier `index` (cluster-wide: block rank · [`MAX_MBARRIERS`] + its
    /// index in the block).
    pub(crate) fn mbarrier(&self, index: u32) -> u32 {
        self.blocks * (self.threads + self.warps) + index
    }

    /// The TMA-store agent of cluster thread `thread` (reading shared memory for its stores).
    pub(crate) fn bulk(&self, thread: u32) -> u32 {
        self.blocks * (self.threads + self.warps + MAX_MBARRIERS) + thread
    }

    fn count(&self) -> usize {
        (self.blocks * (2 * self.threads + self.warps + MAX_MBARRIERS)) as usize
    }

    fn is_thread(&self, agent: u32) -> bool {
        agent < self.blocks * self.threads
    }
}

/// The block's shared-memory history and its threads' clocks.
pub(crate) struct History {
    agents: Agents,
    /// The barrier interval: `bar.sync` count + 1.
    interval: u32,
    /// Whether the block has used an asynchronous operation (the vector clocks exist).
    asynchronous: bool,
    /// Per thread: its vector clock (its own entry is its current clock).
    clocks: Vec<Vec<u32>>,
    /// Per thread: the epochs of its `fence.proxy.async`, in order.
    fences: Vec<Vec<Epoch>>,
    /// Pool byte of each mbarrier agent, for the reports.
    mbarrier_bytes: Vec<u32>,
    words: Vec<Word>,
    /// Words with several unordered readers (asynchronous regime).
    readers: HashMap<u32, Vec<Epoch>>,
    /// Bytes of each block's pool (block `r`'s starts at `r·pool_bytes`).
    pool_bytes: u32,
}

/// A conflict, described for the fault report.
pub(crate) type Race = String;

impl History {
    /// The history of a cluster's blocks, `pool_bytes` of shared memory each. A cluster of
    /// several blocks starts in the asynchronous regime: its blocks' barriers are separate, so
    /// barrier intervals cannot order them.
    pub(crate) fn new(agents: Agents, pool_bytes: usize) -> Self {
        let threads = (agents.blocks * agents.threads) as usize;
        let mut history = History {
            agents,
            interval: 1,
            asynchronous: false,
            clocks: Vec::new(),
            fences: vec![Vec::new(); threads],
            mbarrier_bytes: Vec::new(),
            words: vec![Word::default(); (pool_bytes * agents.blocks as usize).div_ceil(4)],
            readers: HashMap::new(),
            pool_bytes: pool_bytes as u32,
        };
        if agents.blocks > 1 {
            history.go_asynchronous();
        }
        history
    }

    pub(crate) fn interval(&self) -> u32 {
        self.interval
    }

    pub(crate) fn agents(&self) -> Agents {
        self.agents
    }

    /// Turns on the vector clocks (the first asynchronous operation of the block). Accesses
    /// recorded before stay valid: with every clock at zero they are ordered by barriers only.
    pub(crate) fn go_asynchronous(&mut self) {
        if !self.asynchronous {
            self.asynchronous = true;
            let n = self.agents.count();
            self.clocks = (0..self.agents.blocks * self.agents.threads)
                .map(|t| {
                    let mut vc = vec![0; n];
                    vc[t as usize] = 1;
                    vc
                })
                .collect();
        }
    }

    /// The epoch of an access by `thread` now.
    fn now(&self, thread: u32) -> Epoch {
        Epoch {
            interval: self.interval,
            agent: thread,
            clock: self.clock_now(thread),
        }
    }

    /// `thread`'s current clock (1 while the block uses barriers only).
    pub(crate) fn clock_now(&self, thread: u32) -> u32 {
        if self.asynchronous {
            self.clocks[thread as usize][thread as usize]
        } else {
            1
        }
    }

    /// Whether `e` happens before what `thread` does now.
    pub(crate) fn is_ordered_before(&self, e: Epoch, thread: u32) -> bool {
        self.ordered_before(e, thread)
    }

    fn ordered_before(&self, e: Epoch, thread: u32) -> bool {
        if !e.is_set() || e.agent == thread {
            return true;
        }
        if self.agents.is_thread(e.agent) && e.interval < self.interval {
            return true; // a bar.sync lies between them
        }
        self.asynchronous && self.clocks[thread as usize][e.agent as usize] >= e.clock
    }

    /// `bar.sync` of the block whose threads `threads` arrived: with one block, a new interval;
    /// with vector clocks, the threads are ordered after each other's past, and after everything
    /// any of them had acquired.
    pub(crate) fn barrier(&mut self, threads: &[u32]) {
        if self.agents.blocks == 1 {
            self.interval += 1;
        }
        self.join(threads);
    }

    /// `bar.warp.sync` or a barrier: the threads' clocks become their join, then each advances
    /// its own, as after a release, so that what a thread does next is not covered by this
    /// synchronisation. (Without the advance, a thread that never arrives on an mbarrier kept
    /// its clock at the value every other thread had joined, and its later reads passed as
    /// ordered before every later write: a consumer lane's read of a stage was never checked
    /// against the copy that refills it.)
    pub(crate) fn join(&mut self, threads: &[u32]) {
        let Some((&first, rest)) = threads.split_first() else {
            return;
        };
        if !self.asynchronous {
            return;
        }
        let mut joined = self.clocks[first as usize].clone();
        for &t in rest {
            for (j, c) in joined.iter_mut().zip(&self.clocks[t as usize]) {
                *j = (*j).max(*c);
            }
        }
        for &t in threads {
            let own = self.clocks[t as usize][t as usize];
            self.clocks[t as usize].clone_from(&joined);
            self.clocks[t as usize][t as usize] = own + 1;
        }
    }

    /// `thread`'s vector clock (a block's exit, a cluster barrier's release).
    pub(crate) fn clock_of(&self, thread: u32) -> Vec<u32> {
        if self.asynchronous {
            self.clocks[thread as usize].clone()
        } else {
            Vec::new()
        }
    }

    /// Whether the access `e` is covered by the vector clock `clock` (a block's exit).
    pub(crate) fn covered_by(&self, e: Epoch, clock: &[u32]) -> bool {
        clock.get(e.agent as usize).is_some_and(|c| *c >= e.clock)
    }

    /// A release of `thread`'s clock into `into` (an mbarrier phase, a cluster barrier phase),
    /// after which its own clock advances.
    pub(crate) fn release_into(&mut self, thread: u32, into: &mut Vec<u32>) {
        self.release(thread, into)
    }

    /// A release by `thread` (an mbarrier arrive): its clock joins `into`, then advances, so
    /// that what it does next is not covered by this release.
    pub(crate) fn release(&mut self, thread: u32, into: &mut Vec<u32>) {
        let vc = &mut self.clocks[thread as usize];
        if into.is_empty() {
            into.resize(vc.len(), 0);
        }
        for (i, c) in into.iter_mut().zip(vc.iter()) {
            *i = (*i).max(*c);
        }
        vc[thread as usize] += 1;
    }

    /// An acquire by `thread` of what a completed phase gathered.
    pub(crate) fn acquire(&mut self, thread: u32, from: &[u32]) {
        let vc = &mut self.clocks[thread as usize];
        for (c, f) in vc.iter_mut().zip(from) {
            *c = (*c).max(*f);
        }
    }

    /// `thread` is now ordered after `agent`'s clock `clock` (a `wgmma.wait_group`).
    pub(crate) fn acquire_agent(&mut self, thread: u32, agent: u32, clock: u32) {
        let c = &mut self.clocks[thread as usize][agent as usize];
        *c = (*c).max(clock);
    }

    /// `fence.proxy.async` by `thread`.
    pub(crate) fn fence_proxy(&mut self, thread: u32) {
        let now = self.now(thread);
        self.fences[thread as usize].push(now);
    }

    /// Marks `[byte, byte + 8)` as an mbarrier object of agent index `index`.
    pub(crate) fn register_mbarrier(&mut self, byte: u32, index: u32) {
        if self.mbarrier_bytes.len() <= index as usize {
            self.mbarrier_bytes.resize(index as usize + 1, 0);
        }
        self.mbarrier_bytes[index as usize] = byte;
        for w in byte / 4..byte / 4 + 2 {
            self.words[w as usize] = Word {
                mbarrier: true,
                ..Word::default()
            };
        }
    }

    /// Whether `[byte, byte + bytes)` touches an mbarrier object.
    pub(crate) fn touches_mbarrier(&self, byte: u32, bytes: u32) -> bool {
        words(byte, bytes).any(|w| self.words[w as usize].mbarrier)
    }

    /// Who `agent` is, for a report.
    pub(crate) fn describe(&self, agent: u32) -> String {
        let a = self.agents;
        let of_block = |rank: u32| {
            if a.blocks > 1 {
                format!(" of block rank {rank} of the cluster")
            } else {
                String::new()
            }
        };
        let threads = a.blocks * a.threads;
        if a.is_thread(agent) {
            let (rank, linear) = (agent / a.threads, agent % a.threads);
            describe_thread(linear, a.block_dim_x) + &of_block(rank)
        } else if agent < threads + a.blocks * a.warps {
            let w = agent - threads;
            format!(
                "the `wgmma` of warp {}{}",
                w % a.warps,
                of_block(w / a.warps)
            )
        } else if agent < a.bulk(0) {
            let index = (agent - threads - a.blocks * a.warps) as usize;
            format!(
                "a TMA copy completing on the mbarrier at pool byte {}{}",
                self.mbarrier_bytes.get(index).copied().unwrap_or(0) % self.pool_bytes(),
                of_block(index as u32 / MAX_MBARRIERS)
            )
        } else {
            let thread = agent - a.bulk(0);
            format!(
                "a TMA store issued by {}{}",
                describe_thread(thread % a.threads, a.block_dim_x),
                of_block(thread / a.threads)
            )
        }
    }

    /// Bytes of one block's pool.
    fn pool_bytes(&self) -> u32 {
        self.pool_bytes.max(1)
    }

    /// "shared byte B" (and its block in a cluster) of `word`.
    fn at(&self, word: u32) -> String {
        let byte = word * 4;
        if self.agents.blocks > 1 {
            format!(
                "shared byte {} of block rank {}",
                byte % self.pool_bytes(),
                byte / self.pool_bytes()
            )
        } else {
            format!("shared byte {byte}")
        }
    }

    /// "warp W" (and its block in a cluster) of cluster thread `thread`.
    fn warp_of(&self, thread: u32) -> String {
        let a = self.agents;
        let warp = format!("warp {}", (thread % a.threads) / 32);
        if a.blocks > 1 {
            format!("{warp} of block rank {}", thread / a.threads)
        } else {
            warp
        }
    }

    /// An ordinary load or store by `thread` of `[byte, byte + bytes)`.
    pub(crate) fn generic(
        &mut self,
        thread: u32,
        byte: u32,
        bytes: u32,
        write: bool,
    ) -> Result<(), Race> {
        let now = self.now(thread);
        for word in words(byte, bytes) {
            let w = self.words[word as usize];
            if w.mbarrier {
                return Err(format!(
                    "{} of {} with an ordinary {}: it is part of an mbarrier object, which only mbarrier instructions may access",
                    if write { "write" } else { "read" },
                    self.at(word),
                    if write { "store" } else { "load" }
                ));
            }
            if !self.ordered_before(w.write, thread) {
                return Err(self.unordered_write(word, w.write, write));
            }
            if write {
                self.check_readers(word, thread)?;
                self.record_write(word, now, self.fences[thread as usize].len() as u32);
            } else {
                self.record_read(word, now, thread);
            }
        }
        Ok(())
    }

    /// A TMA copy, issued by `issuer`, writing `[byte, byte + bytes)` as `agent` at `clock`:
    /// every earlier access of the box must happen before the issue.
    pub(crate) fn async_write(
        &mut self,
        issuer: u32,
        byte: u32,
        bytes: u32,
        agent: u32,
        clock: u32,
    ) -> Result<(), Race> {
        let epoch = self.epoch_of(agent, clock);
        for word in words(byte, bytes) {
            let w = self.async_word(word, "a TMA copy writes")?;
            // Readers first: a stage refilled too early is most often still being read.
            self.check_readers(word, issuer).map_err(|race| {
                format!(
                    "a TMA copy issued by {}: {race} (wait for the stage to be released before refilling it)",
                    self.describe(issuer)
                )
            })?;
            if !self.ordered_before(w.write, issuer) {
                return Err(format!(
                    "a TMA copy issued by {} overwrites {} that {} wrote, and nothing orders the two (wait for the stage to be released before refilling it)",
                    self.describe(issuer),
                    self.at(word),
                    self.describe(w.write.agent)
                ));
            }
            self.record_write(word, epoch, 0);
        }
        Ok(())
    }

    /// A `wgmma` operand read of `[byte, byte + bytes)` by `reader`'s warp, as `agent` at
    /// `clock`: every write must happen before it, and a thread's store must have been
    /// published to the async proxy by a `fence.proxy.async` of that thread.
    pub(crate) fn async_read(
        &mut self,
        reader: u32,
        byte: u32,
        bytes: u32,
        agent: u32,
        clock: u32,
    ) -> Result<(), Race> {
        let epoch = self.epoch_of(agent, clock);
        for word in words(byte, bytes) {
            let name = self.reader_name(agent, reader);
            let w = self.async_word(word, &format!("{name} reads"))?;
            if !self.ordered_before(w.write, reader) {
                return Err(format!(
                    "{name} reads {} that {} wrote, and nothing orders the write before the read{}",
                    self.at(word),
                    self.describe(w.write.agent),
                    if self.agents.is_thread(w.write.agent) {
                        ""
                    } else {
                        " (wait on that mbarrier's phase first)"
                    }
                ));
            }
            if w.write.is_set() && self.agents.is_thread(w.write.agent) {
                let fence = self.fences[w.write.agent as usize]
                    .get(w.fences_before as usize)
                    .copied();
                let published = fence.is_some_and(|f| {
                    self.ordered_before(
                        Epoch {
                            agent: w.write.agent,
                            ..f
                        },
                        reader,
                    )
                });
                if !published {
                    return Err(format!(
                        "{name} reads {} that {} wrote with an ordinary store, and no `fence.proxy.async` of the writer happens before the read: the tensor cores and the TMA engine read through the async proxy, which does not see the generic proxy's stores without it",
                        self.at(word),
                        self.describe(w.write.agent)
                    ));
                }
            }
            self.record_read(word, epoch, reader);
        }
        Ok(())
    }

    /// Who an asynchronous read is, for a report: "`wgmma` of warp W" or "a TMA store issued by
    /// thread (x, y)".
    fn reader_name(&self, agent: u32, reader: u32) -> String {
        if agent >= self.agents.bulk(0) {
            self.describe(agent)
        } else {
            format!("`wgmma` of {}", self.warp_of(reader))
        }
    }

    /// An asynchronous agent's access now.
    fn epoch_of(&self, agent: u32, clock: u32) -> Epoch {
        Epoch {
            interval: self.interval,
            agent,
            clock,
        }
    }

    /// The history of `word`, unless it belongs to an mbarrier object (which only mbarrier
    /// instructions may touch): `what` is the access, for the report.
    fn async_word(&self, word: u32, what: &str) -> Result<Word, Race> {
        let w = self.words[word as usize];
        if w.mbarrier {
            return Err(format!(
                "{what} {}, which is part of an mbarrier object",
                self.at(word)
            ));
        }
        Ok(w)
    }

    fn unordered_write(&self, word: u32, write: Epoch, by_write: bool) -> Race {
        let what = if by_write { "write to" } else { "read of" };
        if self.agents.is_thread(write.agent) && !self.asynchronous {
            format!(
                "{what} {} that {} wrote in the same barrier interval ({}){}",
                self.at(word),
                self.describe(write.agent),
                self.interval,
                if by_write {
                    ""
                } else {
                    " without a barrier in between"
                }
            )
        } else if self.agents.is_thread(write.agent) {
            format!(
                "{what} {} that {} wrote, and no barrier or mbarrier orders the two",
                self.at(word),
                self.describe(write.agent)
            )
        } else {
            format!(
                "{what} {} that {} writes, before that mbarrier's phase completed for this thread (wait on it first)",
                self.at(word),
                self.describe(write.agent)
            )
        }
    }

    /// Every recorded read of `word` must happen before `thread`'s write.
    fn check_readers(&self, word: u32, thread: u32) -> Result<(), Race> {
        let w = self.words[word as usize];
        let unordered = if w.many_readers {
            match self.readers.get(&word) {
                Some(list) => list
                    .iter()
                    .find(|r| !self.ordered_before(**r, thread))
                    .copied(),
                // Barriers only: several threads of this interval read it.
                None if w.read.interval == self.interval => {
                    return Err(format!(
                        "write to {} that several other threads read in the same barrier interval ({})",
                        self.at(word),
                        self.interval
                    ));
                }
                None => None,
            }
        } else {
            Some(w.read).filter(|r| !self.ordered_before(*r, thread))
        };
        match unordered {
            None => Ok(()),
            Some(r) if self.agents.is_thread(r.agent) && !self.asynchronous => Err(format!(
                "write to {} that {} read in the same barrier interval ({})",
                self.at(word),
                self.describe(r.agent),
                self.interval
            )),
            Some(r) if self.agents.is_thread(r.agent) => Err(format!(
                "write to {} that {} read, and no barrier or mbarrier orders the read before the write",
                self.at(word),
                self.describe(r.agent)
            )),
            Some(r) => Err(format!(
                "write to {} that {} may still be reading (its {} is not ordered before the write)",
                self.at(word),
                self.describe(r.agent),
                if r.agent >= self.agents.bulk(0) {
                    "`cp.async.bulk.wait_group.read`"
                } else {
                    "`wgmma.wait_group`"
                }
            )),
        }
    }

    fn record_write(&mut self, word: u32, epoch: Epoch, fences_before: u32) {
        let w = &mut self.words[word as usize];
        if w.many_readers {
            self.readers.remove(&word);
        }
        *w = Word {
            write: epoch,
            fences_before,
            ..Word::default()
        };
    }

    fn record_read(&mut self, word: u32, epoch: Epoch, thread: u32) {
        let w = self.words[word as usize];
        if !self.asynchronous {
            // Barriers only: one reader, or "several" for the rest of the interval.
            let w = &mut self.words[word as usize];
            if w.read.interval == self.interval && w.read.agent != epoch.agent {
                w.many_readers = true;
            } else if w.read.interval != self.interval {
                w.many_readers = false;
            }
            w.read = epoch;
            return;
        }
        if !w.many_readers {
            if !w.read.is_set()
                || w.read.agent == epoch.agent
                || self.ordered_before(w.read, thread)
            {
                self.words[word as usize].read = epoch;
            } else {
                self.readers.insert(word, vec![w.read, epoch]);
                let w = &mut self.words[word as usize];
                w.many_readers = true;
                w.read = epoch;
            }
            return;
        }
        // Reads ordered before this one are covered by it (a write ordered after this read is
        // ordered after them too).
        let mut list = self.readers.remove(&word).unwrap_or_default();
        list.retain(|r| r.agent != epoch.agent && !self.ordered_before(*r, thread));
        list.push(epoch);
        let w = &mut self.words[word as usize];
        w.read = epoch;
        if list.len() == 1 {
            w.many_readers = false;
        } else {
            self.readers.insert(word, list);
        }
    }
}

/// The 4-byte words of `[byte, byte + bytes)`.
fn words(byte: u32, bytes: u32) -> core::ops::Range<u32> {
    byte / 4..(byte + bytes).div_ceil(4)
}

pub(crate) fn describe_thread(linear: u32, block_dim_x: u32) -> String {
    format!(
        "thread ({}, {})",
        linear % block_dim_x,
        linear / block_dim_x
    )
}
