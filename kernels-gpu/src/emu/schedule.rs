//! The scheduler: the threads of a cluster's blocks as coroutines, resumed round after round
//! until all have exited; block and cluster barriers and warp-wide operations released when
//! every thread they wait for has arrived; deadlocks and exits that leave a peer's pending
//! writes reported. The operations the threads suspend in are `ThreadContext`'s (`sync.rs`,
//! `tma.rs`, `cluster.rs`).
use super::context::{BlockContext, ClusterContext, ThreadContext, CURRENT};
use super::fault::{Fault, FaultKind};
use super::history::{Agents, History};
use super::launch::Launch;
use super::mbarrier::MBarrier;
use super::state::{Deposit, Suspend};
use core::cell::{Cell, RefCell};
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Runnable,
    AtBarrier,
    AtWarpCollective(bool),
    AtMbarrier(u32, u32),
    AtClusterBarrier(u32),
    AtNamedBarrier(u32, u32),
    Exited,
}

type Thread = Coroutine<(), Suspend, (), DefaultStack>;

/// Coroutine stacks are reused from block to block (creating one is an mmap).
#[derive(Default)]
pub(super) struct StackPool(Vec<DefaultStack>);

impl StackPool {
    const STACK_BYTES: usize = 256 * 1024;

    fn take(&mut self) -> DefaultStack {
        self.0.pop().unwrap_or_else(|| {
            DefaultStack::new(Self::STACK_BYTES).expect("emulator: cannot allocate a thread stack")
        })
    }
}

/// Runs the blocks of cluster `cluster` (a lone block when the launch has no clusters)
/// together: one scheduler over all their threads, since a block may wait for its peers.
pub(super) fn run_cluster(
    launch: &Launch<'_>,
    cluster: (u32, u32),
    kernel: &(dyn Fn() + Sync),
    stacks: &mut StackPool,
) -> Result<(), Fault> {
    let shape = launch.shape;
    let (bx, by) = shape.block;
    let (cx, cy) = shape.cluster;
    let threads = bx * by;
    let blocks = cx * cy;
    let pool_bytes = shape.shared_bytes;
    let clusters_x = shape.grid.0 / cx;
    let cluster_context = ClusterContext {
        history: RefCell::new(History::new(
            Agents::new(threads, bx, blocks),
            pool_bytes as usize,
        )),
        // `%clusterid.x`, `%nclusterid.x`: the x coordinates only, as on the GPU.
        id: cluster.0,
        count: clusters_x,
        blocks,
        pool_bytes,
        cluster_phases: RefCell::new(Vec::new()),
        remote: RefCell::new(Vec::new()),
        pending_stores: RefCell::new(Vec::new()),
        exits: RefCell::new(vec![None; blocks as usize]),
    };
    // Block rank r of the cluster sits at (r % cx, r / cx) in it (x fastest, as
    // `%cluster_ctarank` counts).
    let block_contexts: Vec<BlockContext> = (0..blocks)
        .map(|rank| BlockContext {
            block: (cluster.0 * cx + rank % cx, cluster.1 * cy + rank / cx),
            block_dim: shape.block,
            grid_dim: shape.grid,
            // The launch outlives every block it runs; the lifetime is erased for the pointer.
            launch: (launch as *const Launch<'_>).cast::<Launch<'static>>(),
            cluster: &cluster_context,
            rank,
            pool: RefCell::new(vec![0u8; pool_bytes as usize]),
            mbarriers: RefCell::new(Vec::new()),
            collective_slots: RefCell::new([
                vec![Deposit::default(); threads as usize],
                vec![Deposit::default(); threads as usize],
            ]),
            registers: RefCell::new(vec![None; threads.div_ceil(32) as usize]),
        })
        .collect();
    let contexts: Vec<ThreadContext> = block_contexts
        .iter()
        .flat_map(|block| {
            (0..threads).map(move |linear| ThreadContext {
                thread: (linear % bx, linear / bx),
                linear,
                agent: block.rank * threads + linear,
                block,
                yielder: Cell::new(core::ptr::null()),
                collective_parity: Cell::new(0),
                open_copies: RefCell::default(),
                copy_groups: RefCell::default(),
                wgmma: Cell::default(),
                wgmma_held: RefCell::default(),
                cluster_arrivals: Cell::new(0),
                bulk: RefCell::default(),
                waited_for_grids: Cell::new(false),
            })
        })
        .collect();

    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut coroutines: Vec<Thread> = contexts
            .iter()
            .map(|ctx| {
                let ctx_addr = ctx as *const ThreadContext as usize;
                let body = move |yielder: &Yielder<(), Suspend>, ()| {
                    let ctx = unsafe { &*(ctx_addr as *const ThreadContext) };
                    ctx.yielder.set(yielder);
                    kernel();
                };
                // SAFETY: every coroutine is driven to completion or dropped before `contexts`,
                // the block and cluster contexts and `kernel` go out of scope (all outlive this
                // closure).
                unsafe { Coroutine::with_stack_unchecked(stacks.take(), body) }
            })
            .collect();
        let mut states = vec![State::Runnable; contexts.len()];
        let outcome = schedule(&mut coroutines, &mut states, &contexts, &cluster_context)
            .and_then(|()| check_exits(&contexts, &cluster_context));
        if outcome.is_ok() {
            for c in coroutines {
                stacks.0.push(c.into_stack());
            }
        }
        outcome
    }));
    CURRENT.with(|c| c.set(core::ptr::null()));
    let first_block = block_contexts[0].block;
    match result {
        Ok(outcome) => outcome,
        Err(payload) => Err(match payload.downcast::<Fault>() {
            Ok(fault) => *fault,
            Err(other) => {
                let message = other
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| other.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "unknown panic".to_string());
                Fault {
                    kind: FaultKind::Panic,
                    kernel: launch.kernel_name.to_string(),
                    block: first_block,
                    thread: (u32::MAX, u32::MAX),
                    detail: message,
                }
            }
        }),
    }
}

/// Resumes threads round after round until all have exited; releases block barriers, cluster
/// barriers and warp-wide operations.
fn schedule(
    coroutines: &mut [Thread],
    states: &mut [State],
    contexts: &[ThreadContext],
    cluster: &ClusterContext,
) -> Result<(), Fault> {
    let threads = states.len();
    let per_block = threads / cluster.blocks as usize;
    loop {
        for i in 0..threads {
            if states[i] != State::Runnable {
                continue;
            }
            CURRENT.with(|c| c.set(&contexts[i]));
            states[i] = match coroutines[i].resume(()) {
                CoroutineResult::Yield(Suspend::Barrier) => State::AtBarrier,
                CoroutineResult::Yield(Suspend::WarpCollective(orders)) => {
                    State::AtWarpCollective(orders)
                }
                CoroutineResult::Yield(Suspend::Mbarrier(byte, parity)) => {
                    State::AtMbarrier(byte, parity)
                }
                CoroutineResult::Yield(Suspend::ClusterBarrier(phase)) => {
                    State::AtClusterBarrier(phase)
                }
                CoroutineResult::Yield(Suspend::NamedBarrier(id, count)) => {
                    State::AtNamedBarrier(id, count)
                }
                CoroutineResult::Return(()) => {
                    let rank = i / per_block;
                    let block = &states[rank * per_block..(rank + 1) * per_block];
                    if block
                        .iter()
                        .enumerate()
                        .all(|(j, s)| *s == State::Exited || rank * per_block + j == i)
                    {
                        // The block's last thread: its exit is ordered after everything its
                        // threads did and acquired.
                        let history = cluster.history.borrow();
                        let mut exit: Vec<u32> = Vec::new();
                        for t in rank * per_block..(rank + 1) * per_block {
                            let clock = history.clock_of(t as u32);
                            if exit.len() < clock.len() {
                                exit.resize(clock.len(), 0);
                            }
                            for (e, c) in exit.iter_mut().zip(clock) {
                                *e = (*e).max(c);
                            }
                        }
                        cluster.exits.borrow_mut()[rank] = Some(exit);
                        let ctx = &contexts[rank * per_block];
                        if let Err(detail) = ctx.block().check_registers() {
                            return Err(Fault {
                                kind: FaultKind::Deadlock,
                                kernel: unsafe { (*ctx.block().launch).kernel_name.to_string() },
                                block: ctx.block().block,
                                thread: ctx.thread,
                                detail,
                            });
                        }
                        for ctx in &contexts[rank * per_block..(rank + 1) * per_block] {
                            if let Err(detail) = ctx.exit_stores() {
                                return Err(Fault {
                                    kind: FaultKind::SharedRace,
                                    kernel: unsafe {
                                        (*ctx.block().launch).kernel_name.to_string()
                                    },
                                    block: ctx.block().block,
                                    thread: ctx.thread,
                                    detail,
                                });
                            }
                        }
                    }
                    State::Exited
                }
            };
        }
        for (rank, block) in states.chunks_mut(per_block).enumerate() {
            // A warp whose live lanes all wait at a warp-wide operation exchanges and goes on.
            // Only `bar.warp.sync` orders the lanes' memory accesses, so only there do their
            // clocks join: the PTX ISA promises no memory ordering for `shfl.sync`, `mma.sync`,
            // `stmatrix` or the `.sync.aligned` operations of `wgmma`, though they wait for the
            // whole warp ("`__syncwarp()` guarantees memory ordering among threads
            // participating in the barrier", the CUDA guide; a shuffle, nothing of the kind).
            for (w, warp) in block.chunks_mut(32).enumerate() {
                let waiting = warp
                    .iter()
                    .filter(|s| matches!(s, State::AtWarpCollective(_)))
                    .count();
                let live = warp.iter().filter(|s| **s != State::Exited).count();
                if waiting > 0 && waiting == live {
                    let first = rank * per_block + 32 * w;
                    if live < warp.len() {
                        let lane = warp
                            .iter()
                            .position(|s| matches!(s, State::AtWarpCollective(_)))
                            .unwrap();
                        return Err(deadlock(
                            contexts,
                            first + lane,
                            "a warp-wide operation (shuffle, mma or wgmma) with exited lanes (undefined on the GPU)",
                        ));
                    }
                    if warp.contains(&State::AtWarpCollective(true)) {
                        let lanes: Vec<u32> = (first as u32..(first + warp.len()) as u32).collect();
                        cluster.history.borrow_mut().join(&lanes);
                    }
                    warp.iter_mut().for_each(|s| *s = State::Runnable);
                }
            }
            // A named barrier whose count of threads has arrived releases them, their clocks
            // joined.
            let mut ids: Vec<(u32, u32)> = block
                .iter()
                .filter_map(|s| match s {
                    State::AtNamedBarrier(id, count) => Some((*id, *count)),
                    _ => None,
                })
                .collect();
            ids.sort_unstable();
            ids.dedup();
            for (id, count) in ids {
                let waiting: Vec<usize> = (0..block.len())
                    .filter(|&j| block[j] == State::AtNamedBarrier(id, count))
                    .collect();
                if block
                    .iter()
                    .any(|s| matches!(s, State::AtNamedBarrier(i, c) if *i == id && *c != count))
                {
                    return Err(deadlock(
                        contexts,
                        rank * per_block + waiting[0],
                        &format!("threads wait at `bar.sync {id}` with different thread counts"),
                    ));
                }
                if waiting.len() as u32 >= count {
                    let arrived: Vec<u32> = waiting
                        .iter()
                        .map(|&j| (rank * per_block + j) as u32)
                        .collect();
                    cluster.history.borrow_mut().join(&arrived);
                    for j in waiting {
                        block[j] = State::Runnable;
                    }
                }
            }
            // A thread waiting for an mbarrier phase of its block that has completed goes on
            // (and acquires it when it retries the wait).
            let bars = contexts[rank * per_block].block().mbarriers.borrow();
            for s in block.iter_mut() {
                if let State::AtMbarrier(byte, parity) = *s {
                    if bars.iter().any(|m| m.byte == byte && m.phase_done(parity)) {
                        *s = State::Runnable;
                    }
                }
            }
        }
        // A cluster barrier phase completes when every live thread of the cluster has arrived
        // that often.
        let arrived = |i: usize| contexts[i].cluster_arrivals.get();
        let least = (0..threads)
            .filter(|&i| states[i] != State::Exited)
            .map(arrived)
            .min();
        for s in states.iter_mut() {
            if let State::AtClusterBarrier(phase) = *s {
                if least.is_some_and(|least| least >= phase) {
                    *s = State::Runnable;
                }
            }
        }
        if states.contains(&State::Runnable) {
            continue;
        }
        if states.iter().all(|s| *s == State::Exited) {
            return Ok(());
        }
        // Nobody can run: the blocks whose live threads all wait at their barrier go on; if
        // there is none, it is a deadlock.
        let mut released = false;
        for (rank, block) in states.chunks_mut(per_block).enumerate() {
            let live = block.iter().filter(|s| **s != State::Exited).count();
            let waiting = block.iter().filter(|s| **s == State::AtBarrier).count();
            if live > 0 && waiting == live {
                let arrived: Vec<u32> = (0..per_block)
                    .filter(|&j| block[j] == State::AtBarrier)
                    .map(|j| (rank * per_block + j) as u32)
                    .collect();
                cluster.history.borrow_mut().barrier(&arrived);
                block
                    .iter_mut()
                    .filter(|s| **s == State::AtBarrier)
                    .for_each(|s| *s = State::Runnable);
                released = true;
            }
        }
        if released {
            continue;
        }
        if let Some(waiter) = states
            .iter()
            .position(|s| matches!(s, State::AtMbarrier(..)))
        {
            // Every barrier someone waits on, with its state: the stuck one is the one whose
            // arrivals or bytes can no longer come.
            let mut waits: Vec<(usize, u32, u32, usize)> = Vec::new();
            for (i, s) in states.iter().enumerate() {
                if let State::AtMbarrier(byte, parity) = *s {
                    let rank = i / per_block;
                    match waits
                        .iter_mut()
                        .find(|w| (w.0, w.1, w.2) == (rank, byte, parity))
                    {
                        Some(w) => w.3 += 1,
                        None => waits.push((rank, byte, parity, 1)),
                    }
                }
            }
            let described: Vec<String> = waits
                .iter()
                .map(|&(rank, byte, parity, threads)| {
                    let bars = contexts[rank * per_block].block().mbarriers.borrow();
                    let state = bars
                        .iter()
                        .find(|m| m.byte == byte)
                        .map(MBarrier::describe)
                        .unwrap_or_default();
                    let of = if cluster.blocks > 1 {
                        format!(" (block rank {rank})")
                    } else {
                        String::new()
                    };
                    format!("{threads} thread(s){of} wait for parity {parity}: {state}")
                })
                .collect();
            return Err(deadlock(
                contexts,
                waiter,
                &format!(
                    "threads wait for mbarrier phases that can never complete (no thread can run): {}",
                    described.join("; ")
                ),
            ));
        } else if let Some(waiter) = states
            .iter()
            .position(|s| matches!(s, State::AtNamedBarrier(..)))
        {
            let State::AtNamedBarrier(id, count) = states[waiter] else {
                unreachable!()
            };
            let waiting = states
                .iter()
                .filter(|s| **s == State::AtNamedBarrier(id, count))
                .count();
            return Err(deadlock(
                contexts,
                waiter,
                &format!("{waiting} thread(s) wait at `bar.sync {id}, {count}`, which needs {count}, and no other thread can run"),
            ));
        } else if let Some(waiter) = states
            .iter()
            .position(|s| matches!(s, State::AtClusterBarrier(_)))
        {
            return Err(deadlock(
                contexts,
                waiter,
                "threads wait at a cluster barrier (`barrier.cluster.wait`) that threads of the cluster waiting elsewhere never arrive at",
            ));
        } else {
            let stuck = states
                .iter()
                .position(|s| matches!(s, State::AtWarpCollective(_)))
                .unwrap_or(0);
            return Err(deadlock(
                contexts,
                stuck,
                "threads wait at a warp-wide operation (shuffle, mma or wgmma) while others of their warp wait at a block barrier",
            ));
        }
    }
}

/// After the cluster ran: every access a block made to a peer's shared memory (an arrival on its
/// mbarrier, a multicast copy into it) must happen before that peer exited; otherwise, on the
/// GPU, it may reach memory the peer no longer owns.
fn check_exits(contexts: &[ThreadContext], cluster: &ClusterContext) -> Result<(), Fault> {
    let history = cluster.history.borrow();
    let exits = cluster.exits.borrow();
    for (block, access, what) in cluster.remote.borrow().iter() {
        let Some(exit) = &exits[*block as usize] else {
            continue;
        };
        if !history.covered_by(*access, exit) {
            let who = if access.agent < contexts.len() as u32 {
                access.agent as usize
            } else {
                0
            };
            return Err(Fault {
                kind: FaultKind::SharedRace,
                kernel: unsafe { (*contexts[who].block().launch).kernel_name.to_string() },
                block: contexts[who].block().block,
                thread: contexts[who].thread,
                detail: format!(
                    "block rank {block} of the cluster exits while a peer may still write into its shared memory: {what}, and nothing orders that before the exit (end the kernel with a cluster barrier, `barrier.cluster.arrive` + `wait`)"
                ),
            });
        }
    }
    Ok(())
}

fn deadlock(contexts: &[ThreadContext], thread: usize, detail: &str) -> Fault {
    let ctx = &contexts[thread];
    Fault {
        kind: FaultKind::Deadlock,
        kernel: unsafe { (*ctx.block().launch).kernel_name.to_string() },
        block: ctx.block().block,
        thread: ctx.thread,
        detail: detail.to_string(),
    }
}
