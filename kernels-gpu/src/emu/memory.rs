//! Global and shared memory as a thread sees them: the checks every ordinary load and store goes
//! through, and the groups of Ampere's `cp.async` copies.
//!
//! On the GPU a stray access corrupts memory silently, or ends the launch with an error that
//! names no thread. Here every access is checked where it is made, so that the fault names the
//! buffer, the offset and the thread: a global access against the buffers the host registered
//! for the launch (and the TMA stores still writing to them), a shared access against the pool,
//! and recorded in the race history (`history.rs`), which is where a missing barrier shows.
//!
//! `cp.async` copies are only queued here, by thread and commit group: the device layer performs
//! them, as the waiting thread's writes, at the `cp.async.wait_group` that retires their group,
//! the latest moment at which the GPU may complete them.
use super::context::ThreadContext;
use super::fault::FaultKind;
use super::launch::SHARED_POOL_BASE;
use super::state::AsyncCopy;

impl ThreadContext {
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

    /// `griddepcontrol.wait`: from here on the thread sees what the kernels before it in the
    /// stream wrote (the emulator runs a launch after the one before it ended; what it checks is
    /// that the kernel asked).
    pub(crate) fn wait_for_prior_grids(&self) {
        self.waited_for_grids.set(true);
    }

    /// Checks that `[address, address + bytes)` lies inside a buffer of the launch and, for a
    /// vector access, that `address` is aligned to `align` bytes (the vector's size, at most 16:
    /// an f64 `x4` is two 16-byte accesses); in a programmatic dependent launch, that a buffer
    /// the kernel before may write is touched only after this thread's `griddepcontrol.wait`.
    pub(crate) fn check_global(&self, address: usize, bytes: usize, align: usize) {
        let launch = self.launch();
        if !launch.written_before.is_empty() && !self.waited_for_grids.get() {
            let early = launch.buffers.iter().find(|b| {
                launch.written_before.contains(&b.name)
                    && address < b.address + b.bytes
                    && b.address < address + bytes
            });
            if let Some(b) = early {
                self.fault(
                    FaultKind::GridDependency,
                    format!("a {bytes}-byte access at byte offset {} of buffer `{}` before this thread's `griddepcontrol.wait`: the launch may start while the kernel before it still runs (programmatic dependent launch), and that kernel may still be writing `{}`", address as isize - b.address as isize, b.name, b.name),
                );
            }
        }
        let conflict = self
            .cluster()
            .pending_stores
            .borrow()
            .iter()
            .find(|(_, at, len)| address < at + len && *at < address + bytes)
            .copied();
        if let Some((thread, at, _)) = conflict {
            let who = self.history().describe(thread);
            let (here, there) = (self.global_name(address), self.global_name(at));
            self.fault(
                FaultKind::SharedRace,
                format!("a {bytes}-byte global access at {here} overlaps what a TMA store issued by {who} writes at {there}, which has not completed (wait for it with `cp.async.bulk.wait_group` first)"),
            );
        }
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

    /// "byte offset O of buffer `B`" for a global address inside a buffer of the launch.
    fn global_name(&self, address: usize) -> String {
        match self
            .launch()
            .buffers
            .iter()
            .find(|b| (b.address..b.address + b.bytes).contains(&address))
        {
            Some(b) => format!("byte offset {} of buffer `{}`", address - b.address, b.name),
            None => format!("{address:#x}"),
        }
    }

    /// The pool byte of shared-window address `address` (see [`SHARED_POOL_BASE`]).
    pub(crate) fn pool_byte(&self, address: u32) -> u32 {
        address.checked_sub(SHARED_POOL_BASE).unwrap_or_else(|| {
            self.fault(
                FaultKind::SharedOutOfBounds,
                format!(
                    "shared address {address}, below the dynamic pool (which starts at {SHARED_POOL_BASE})"
                ),
            )
        })
    }

    /// Checks that `[byte, byte + bytes)` lies in the pool and `byte` is aligned to `align`.
    pub(crate) fn check_pool_range(&self, byte: u32, bytes: u32, align: u32, what: &str) {
        let pool_bytes = self.block().pool.borrow().len() as u32;
        if byte.checked_add(bytes).is_none_or(|end| end > pool_bytes) {
            self.fault(
                FaultKind::SharedOutOfBounds,
                format!("{what}: {bytes} bytes at pool byte {byte}; the launch gave {pool_bytes} bytes of shared memory"),
            );
        }
        if !byte.is_multiple_of(align) {
            self.fault(
                FaultKind::MisalignedVectorAccess,
                format!("{what}: pool byte {byte} is not {align}-byte aligned"),
            );
        }
    }

    /// Checks a shared access of `bytes` bytes at pool byte `address` and records it in the
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
        let mut history = self.history();
        let at = self.cluster_byte(address);
        if let Err(race) = history.generic(self.agent, at, bytes, write) {
            let kind = if history.touches_mbarrier(at, bytes) {
                FaultKind::MbarrierMisuse
            } else {
                FaultKind::SharedRace
            };
            drop(history);
            self.fault(kind, race);
        }
    }
}
