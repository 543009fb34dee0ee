//! The CPU emulator: runs a kernel launch on the host with the semantics of the GPU.
//!
//! - **Threads.** Every GPU thread of a block is a stackful coroutine with its own indices.
//!   A round resumes each runnable thread until it suspends (at a barrier or a warp-wide operation)
//!   or returns.
//! - **Barriers.** A thread at `sync_threads` suspends; when every live thread of the block is
//!   waiting, the block enters its next *barrier interval* and all resume. So a thread that
//!   passes a barrier sees every shared-memory write made before it, as on the GPU.
//! - **Shared memory.** Each block gets its own zero-filled pool of the size the launch asked for.
//! - **Warp-wide operations** (`shfl.sync`, the tensor cores' `mma.sync`). The lanes of a warp
//!   exchange registers through a slot per lane: a lane deposits its registers and suspends
//!   until every lane of its warp has deposited, then reads what it needs of the others'
//!   (a shuffle one value, an `mma` every lane's fragments). Lanes that reach different
//!   warp-wide operations, or a warp with lanes missing, are reported.
//! - **Blocks** run several at a time on worker threads (blocks share nothing but global
//!   memory, and a correct kernel does not race on it within a launch). A faulty launch reports
//!   the fault of its lowest-numbered faulting block, so reports do not depend on timing.
//!
//! Bugs are reported as [`Fault`]s naming the kernel, block, thread and index, instead of
//! corrupting memory:
//! - an access to global memory outside every buffer the host registered for the launch, or a
//!   misaligned 16-byte access;
//! - an index past the end of a shared-memory view, or past the end of the pool;
//! - a **shared-memory race**, detected directly: every 4-byte word of the pool remembers which
//!   thread last wrote it and which read it, and in which barrier interval. A read of a word
//!   another thread wrote in the same interval (a missing barrier before the read), and a write
//!   to a word another thread wrote or read in the same interval (a missing barrier before the
//!   overwrite), are races: on the GPU their outcome depends on timing. Detection does not
//!   depend on the order the emulator happens to run threads in.
//! - a deadlock (threads of one block waiting at different barriers or warp-wide operations), or
//!   lanes of a warp at different warp-wide operations.
use core::cell::{Cell, RefCell};
use core::fmt;
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Grid and block shape (x, y) and the dynamic shared-memory size of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    pub grid: (u32, u32),
    pub block: (u32, u32),
    pub shared_bytes: u32,
}

/// A region of host memory the kernel may access as global memory.
#[derive(Clone, Copy, Debug)]
pub struct Buffer {
    pub name: &'static str,
    pub address: usize,
    pub bytes: usize,
}

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

/// Runs `kernel` once per GPU thread of the launch, on the CPU.
///
/// `buffers` are the only global memory the kernel may touch. Returns the first fault found
/// (the launch stops at it).
pub fn launch(
    kernel_name: &str,
    shape: LaunchShape,
    buffers: &[Buffer],
    kernel: &(dyn Fn() + Sync),
) -> Result<(), Fault> {
    let (bx, by) = shape.block;
    let threads = bx * by;
    assert!(
        (1..=1024).contains(&threads),
        "a block has 1 to 1024 threads, not {threads}"
    );
    let launch = Launch {
        kernel_name,
        shape,
        buffers,
    };
    let blocks = (shape.grid.0 as usize) * (shape.grid.1 as usize);
    let next_block = AtomicUsize::new(0);
    // The report is the fault of the lowest-numbered faulting block, whatever the timing of
    // the workers: blocks are handed out in order, and after a fault only lower blocks still
    // run, so every block below the one reported has run to the end.
    let lowest_faulty = AtomicUsize::new(usize::MAX);
    let faults = Mutex::new(Vec::<(usize, Fault)>::new());
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(blocks)
        .max(1);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let mut stacks = StackPool::default();
                loop {
                    let b = next_block.fetch_add(1, Ordering::Relaxed);
                    if b >= blocks.min(lowest_faulty.load(Ordering::Relaxed)) {
                        break;
                    }
                    let block = (b as u32 % shape.grid.0, b as u32 / shape.grid.0);
                    if let Err(fault) = run_block(&launch, block, kernel, &mut stacks) {
                        lowest_faulty.fetch_min(b, Ordering::Relaxed);
                        faults.lock().unwrap().push((b, fault));
                        break;
                    }
                }
            });
        }
    });
    match faults
        .into_inner()
        .unwrap()
        .into_iter()
        .min_by_key(|(b, _)| *b)
    {
        Some((_, fault)) => Err(fault),
        None => Ok(()),
    }
}

struct Launch<'a> {
    kernel_name: &'a str,
    shape: LaunchShape,
    buffers: &'a [Buffer],
}

/// Why a thread suspended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Suspend {
    Barrier,
    WarpCollective,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Runnable,
    AtBarrier,
    AtWarpCollective,
    Exited,
}

type Thread = Coroutine<(), Suspend, (), DefaultStack>;

/// Coroutine stacks are reused from block to block (creating one is an mmap).
#[derive(Default)]
struct StackPool(Vec<DefaultStack>);

impl StackPool {
    const STACK_BYTES: usize = 256 * 1024;

    fn take(&mut self) -> DefaultStack {
        self.0.pop().unwrap_or_else(|| {
            DefaultStack::new(Self::STACK_BYTES).expect("emulator: cannot allocate a thread stack")
        })
    }
}

/// What the device layer sees of the thread it is running in.
pub(crate) struct ThreadContext {
    pub(crate) thread: (u32, u32),
    pub(crate) linear: u32,
    pub(crate) block: *const BlockContext,
    yielder: Cell<*const Yielder<(), Suspend>>,
    collective_parity: Cell<usize>,
    /// Asynchronous copies (`cp.async`) issued but not yet committed to a group.
    open_copies: RefCell<Vec<AsyncCopy>>,
    /// Committed groups of asynchronous copies, oldest first, not yet waited for.
    copy_groups: RefCell<std::collections::VecDeque<Vec<AsyncCopy>>>,
}

/// Registers a lane brings to one warp-wide operation.
#[derive(Clone, Copy, Default)]
pub(crate) struct Deposit {
    /// The operation, so that lanes at different ones are caught.
    pub(crate) op: &'static str,
    pub(crate) registers: [u64; MAX_REGISTERS],
    pub(crate) len: usize,
}

/// The most registers a lane deposits for one warp-wide operation (an f64 `m16n8k16` brings 8
/// of A and 4 of B).
pub(crate) const MAX_REGISTERS: usize = 16;

/// A pending `cp.async`: the shared-pool byte address and the bytes it will write there.
type AsyncCopy = (u32, Vec<u8>);

/// Per-word history of the shared pool, for race detection. Intervals count from 1 (0: never).
#[derive(Clone, Copy, Default)]
struct WordHistory {
    write_interval: u32,
    writer: u32,
    read_interval: u32,
    /// The reading thread, or [`MANY_READERS`].
    reader: u32,
}

const MANY_READERS: u32 = u32::MAX;

pub(crate) struct BlockContext {
    pub(crate) block: (u32, u32),
    pub(crate) block_dim: (u32, u32),
    pub(crate) grid_dim: (u32, u32),
    launch: *const Launch<'static>,
    pool: RefCell<Vec<u8>>,
    history: RefCell<Vec<WordHistory>>,
    interval: Cell<u32>,
    /// One deposit per thread for each of two alternating warp-wide operations (a lane cannot
    /// get two operations ahead of a lane of its warp, so two sets suffice).
    collective_slots: RefCell<[Vec<Deposit>; 2]>,
}

thread_local! {
    static CURRENT: Cell<*const ThreadContext> = const { Cell::new(core::ptr::null()) };
}

/// The GPU thread the calling OS thread is currently running.
///
/// # Panics
/// When called outside [`launch`]: device functions only make sense inside a kernel.
pub(crate) fn current() -> &'static ThreadContext {
    let p = CURRENT.with(|c| c.get());
    assert!(
        !p.is_null(),
        "a device function was called outside an emulated kernel launch"
    );
    // SAFETY: set by `run_block` only while the context is alive and the thread running.
    unsafe { &*p }
}

impl ThreadContext {
    pub(crate) fn block(&self) -> &BlockContext {
        unsafe { &*self.block }
    }

    fn launch(&self) -> &Launch<'static> {
        unsafe { &*self.block().launch }
    }

    /// Stops the kernel with `kind`; `run_block` turns the unwind into a [`Fault`].
    pub(crate) fn fault(&self, kind: FaultKind, detail: String) -> ! {
        let b = self.block();
        let fault = Fault {
            kind,
            kernel: self.launch().kernel_name.to_string(),
            block: b.block,
            thread: self.thread,
            detail,
        };
        // `resume_unwind` skips the panic hook: the fault is reported once, by the caller.
        std::panic::resume_unwind(Box::new(fault))
    }

    fn suspend(&self, why: Suspend) {
        let y = self.yielder.get();
        // SAFETY: the yielder lives as long as the coroutine this thread runs in.
        unsafe { (*y).suspend(why) }
    }

    pub(crate) fn barrier(&self) {
        self.suspend(Suspend::Barrier);
    }

    /// A warp-wide operation: deposits this lane's `registers` (at most [`MAX_REGISTERS`]),
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
        self.suspend(Suspend::WarpCollective);
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

    pub(crate) fn issue_async_copy(&self, shared_address: u32, data: Vec<u8>) {
        self.open_copies.borrow_mut().push((shared_address, data));
    }

    pub(crate) fn commit_async_copies(&self) {
        let group = core::mem::take(&mut *self.open_copies.borrow_mut());
        self.copy_groups.borrow_mut().push_back(group);
    }

    /// The copies of every committed group but the `pending` most recent, oldest first.
    pub(crate) fn retire_async_copies(&self, pending: usize) -> Vec<AsyncCopy> {
        let mut groups = self.copy_groups.borrow_mut();
        let mut done = Vec::new();
        while groups.len() > pending {
            done.extend(groups.pop_front().unwrap());
        }
        done
    }

    /// Checks that `[address, address + bytes)` lies inside a buffer of the launch and, for a
    /// vector access, that `address` is aligned to `align` bytes (the vector's size, at most 16:
    /// an f64 `x4` is two 16-byte accesses).
    pub(crate) fn check_global(&self, address: usize, bytes: usize, align: usize) {
        if align > 1 && !address.is_multiple_of(align) {
            self.fault(
                FaultKind::MisalignedVectorAccess,
                format!("{align}-byte access at address {address:#x}, which is not {align}-byte aligned"),
            );
        }
        let buffers = self.launch().buffers;
        let inside = buffers
            .iter()
            .any(|b| address >= b.address && address + bytes <= b.address + b.bytes);
        if !inside {
            let nearest = buffers.iter().min_by_key(|b| {
                address
                    .abs_diff(b.address)
                    .min(address.abs_diff(b.address + b.bytes))
            });
            let detail = match nearest {
                Some(b) => {
                    let offset = address as isize - b.address as isize;
                    format!(
                        "{bytes}-byte access at byte offset {offset} of buffer `{}` ({} bytes)",
                        b.name, b.bytes
                    )
                }
                None => format!("{bytes}-byte access at {address:#x}; the launch has no buffers"),
            };
            self.fault(FaultKind::GlobalOutOfBounds, detail);
        }
    }

    /// Checks a shared access of `bytes` bytes at pool offset `address` and records it in the
    /// race history.
    pub(crate) fn shared_access(&self, address: u32, bytes: u32, write: bool) {
        let b = self.block();
        let pool_bytes = b.pool.borrow().len() as u32;
        if address
            .checked_add(bytes)
            .is_none_or(|end| end > pool_bytes)
        {
            self.fault(
                FaultKind::SharedOutOfBounds,
                format!("{bytes}-byte access at pool byte {address}; the launch gave {pool_bytes} bytes of shared memory"),
            );
        }
        if !address.is_multiple_of(bytes) {
            self.fault(
                FaultKind::MisalignedVectorAccess,
                format!(
                    "{bytes}-byte shared access at pool byte {address}, not {bytes}-byte aligned"
                ),
            );
        }
        let interval = b.interval.get();
        let me = self.linear;
        let mut history = b.history.borrow_mut();
        for word in address / 4..(address + bytes).div_ceil(4) {
            let h = &mut history[word as usize];
            let other_wrote = h.write_interval == interval && h.writer != me;
            if write {
                let other_read = h.read_interval == interval && h.reader != me;
                if other_wrote || other_read {
                    let (verb, other) = if other_wrote {
                        ("written", h.writer)
                    } else {
                        ("read", h.reader)
                    };
                    drop(history);
                    self.fault(
                        FaultKind::SharedRace,
                        format!(
                            "write to shared byte {} that {} {verb} in the same barrier interval ({})",
                            word * 4,
                            describe_thread(other, b.block_dim.0),
                            interval
                        ),
                    );
                }
                h.write_interval = interval;
                h.writer = me;
            } else {
                if other_wrote {
                    let writer = h.writer;
                    drop(history);
                    self.fault(
                        FaultKind::SharedRace,
                        format!(
                            "read of shared byte {} that {} wrote in the same barrier interval ({}) without a barrier in between",
                            word * 4,
                            describe_thread(writer, b.block_dim.0),
                            interval
                        ),
                    );
                }
                if h.read_interval == interval && h.reader != me {
                    h.reader = MANY_READERS;
                } else {
                    h.read_interval = interval;
                    h.reader = me;
                }
            }
        }
    }
}

impl BlockContext {
    pub(crate) fn pool_mut(&self) -> core::cell::RefMut<'_, Vec<u8>> {
        self.pool.borrow_mut()
    }
}

fn describe_thread(linear: u32, block_dim_x: u32) -> String {
    if linear == MANY_READERS {
        "several other threads".to_string()
    } else {
        format!(
            "thread ({}, {})",
            linear % block_dim_x,
            linear / block_dim_x
        )
    }
}

fn run_block(
    launch: &Launch<'_>,
    block: (u32, u32),
    kernel: &(dyn Fn() + Sync),
    stacks: &mut StackPool,
) -> Result<(), Fault> {
    let shape = launch.shape;
    let (bx, by) = shape.block;
    let threads = (bx * by) as usize;
    let pool_bytes = shape.shared_bytes as usize;
    let context = BlockContext {
        block,
        block_dim: shape.block,
        grid_dim: shape.grid,
        // The launch outlives every block it runs; the lifetime is erased for the raw pointer.
        launch: (launch as *const Launch<'_>).cast::<Launch<'static>>(),
        pool: RefCell::new(vec![0u8; pool_bytes]),
        history: RefCell::new(vec![WordHistory::default(); pool_bytes.div_ceil(4)]),
        interval: Cell::new(1),
        collective_slots: RefCell::new([
            vec![Deposit::default(); threads],
            vec![Deposit::default(); threads],
        ]),
    };
    let contexts: Vec<ThreadContext> = (0..threads as u32)
        .map(|linear| ThreadContext {
            thread: (linear % bx, linear / bx),
            linear,
            block: &context,
            yielder: Cell::new(core::ptr::null()),
            collective_parity: Cell::new(0),
            open_copies: RefCell::default(),
            copy_groups: RefCell::default(),
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
                // `context` and `kernel` go out of scope (all three outlive this closure).
                unsafe { Coroutine::with_stack_unchecked(stacks.take(), body) }
            })
            .collect();
        let mut states = vec![State::Runnable; threads];
        let outcome = schedule(&mut coroutines, &mut states, &contexts, &context);
        if outcome.is_ok() {
            for c in coroutines {
                stacks.0.push(c.into_stack());
            }
        }
        outcome
    }));
    CURRENT.with(|c| c.set(core::ptr::null()));
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
                    block,
                    thread: (u32::MAX, u32::MAX),
                    detail: message,
                }
            }
        }),
    }
}

/// Resumes threads round after round until all have exited; releases barriers and warp-wide
/// operations.
fn schedule(
    coroutines: &mut [Thread],
    states: &mut [State],
    contexts: &[ThreadContext],
    block: &BlockContext,
) -> Result<(), Fault> {
    let threads = states.len();
    loop {
        for i in 0..threads {
            if states[i] != State::Runnable {
                continue;
            }
            CURRENT.with(|c| c.set(&contexts[i]));
            states[i] = match coroutines[i].resume(()) {
                CoroutineResult::Yield(Suspend::Barrier) => State::AtBarrier,
                CoroutineResult::Yield(Suspend::WarpCollective) => State::AtWarpCollective,
                CoroutineResult::Return(()) => State::Exited,
            };
        }
        // A warp whose live lanes all wait at a warp-wide operation exchanges and goes on.
        for warp in states.chunks_mut(32) {
            let waiting = warp
                .iter()
                .filter(|s| **s == State::AtWarpCollective)
                .count();
            let live = warp.iter().filter(|s| **s != State::Exited).count();
            if waiting > 0 && waiting == live {
                if live < warp.len() {
                    let lane = warp
                        .iter()
                        .position(|s| *s == State::AtWarpCollective)
                        .unwrap();
                    return Err(deadlock(
                        contexts,
                        block,
                        lane,
                        "a warp-wide operation (shuffle or mma) with exited lanes (undefined on the GPU)",
                    ));
                }
                warp.iter_mut().for_each(|s| *s = State::Runnable);
            }
        }
        if states.contains(&State::Runnable) {
            continue;
        }
        if states.iter().all(|s| *s == State::Exited) {
            return Ok(());
        }
        // Nobody can run: either every live thread is at the barrier, or it is a deadlock.
        if states
            .iter()
            .all(|s| matches!(s, State::AtBarrier | State::Exited))
        {
            block.interval.set(block.interval.get() + 1);
            states
                .iter_mut()
                .filter(|s| **s == State::AtBarrier)
                .for_each(|s| *s = State::Runnable);
        } else {
            let stuck = states
                .iter()
                .position(|s| *s == State::AtWarpCollective)
                .unwrap_or(0);
            return Err(deadlock(
                contexts,
                block,
                stuck,
                "threads wait at a warp-wide operation (shuffle or mma) while others of their warp wait at a block barrier",
            ));
        }
    }
}

fn deadlock(
    contexts: &[ThreadContext],
    block: &BlockContext,
    thread: usize,
    detail: &str,
) -> Fault {
    Fault {
        kind: FaultKind::Deadlock,
        kernel: unsafe { (*block.launch).kernel_name.to_string() },
        block: block.block,
        thread: contexts[thread].thread,
        detail: detail.to_string(),
    }
}
