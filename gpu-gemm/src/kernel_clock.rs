//! The kernels' own clock ([`Clock::Kernels`](crate::timing::Clock::Kernels)): the start and end
//! stamps the GPU takes for every kernel, read through CUPTI's activity records. This is how
//! `torch.profiler` (Kineto) times a kernel, and so how DeepGEMM's published figures were taken;
//! a comparison with them has to read the same clock.
//!
//! Events recorded on the stream around a run ([`Clock::Events`](crate::timing::Clock::Events))
//! hold more than the kernels: the front end taking the first kernel after the start event and
//! the stop event after the last, a few microseconds in all. Beside a GEMM of milliseconds that
//! is noise; beside a decode-sized GEMM of 10–20 µs it is a fifth of the figure.
//!
//! CUPTI allows one client per process, so this is one process-wide recorder
//! ([`KernelClock::get`]): it collects the stamps that CUPTI delivers, and
//! [`KernelClock::spans_ms`] cuts those of a series of runs into one span per run.
use anyhow::{anyhow, bail, Result};
use cudarc::cupti::result::{activity, CuptiError};
use cudarc::cupti::sys;
use std::alloc::{alloc, dealloc, Layout};
use std::sync::{Mutex, OnceLock};

/// The process's recorder: CUPTI is opened and the kernels' records enabled once.
pub struct KernelClock(());

/// When a series of runs began, in CUPTI's nanoseconds ([`KernelClock::begin`]).
#[derive(Clone, Copy, Debug)]
pub struct Since(u64);

/// Each kernel's (start, end) in nanoseconds, as CUPTI delivered them and not yet read. Its
/// callbacks take no context, so the stamps go through a static.
static STAMPS: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

/// Buffers handed to CUPTI: a kernel's record is about 200 bytes, so one buffer holds thousands
/// of runs' worth; every run flushes.
const BUFFER: Layout = match Layout::from_size_align(1 << 20, 8) {
    Ok(layout) => layout,
    Err(_) => panic!("1 MiB aligned to 8 bytes is a valid layout"),
};

unsafe extern "C" fn buffer_requested(
    buffer: *mut *mut u8,
    size: *mut usize,
    max_records: *mut usize,
) {
    // SAFETY: CUPTI passes valid out-pointers; a null buffer (allocation failed) with size 0
    // tells it to drop the records, which the next flush then reports.
    unsafe {
        let memory = alloc(BUFFER);
        *buffer = memory;
        *size = if memory.is_null() { 0 } else { BUFFER.size() };
        *max_records = 0;
    }
}

unsafe extern "C" fn buffer_completed(
    _context: cudarc::driver::sys::CUcontext,
    _stream: u32,
    buffer: *mut u8,
    _size: usize,
    valid_bytes: usize,
) {
    let mut stamps = STAMPS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut record: *mut sys::CUpti_Activity = std::ptr::null_mut();
    // SAFETY: `buffer` is one of `buffer_requested`'s, holding `valid_bytes` of records;
    // `get_next_record` walks them until it reports the end.
    while unsafe { activity::get_next_record(buffer, valid_bytes, &mut record) }.is_ok() {
        let kind = unsafe { (*record).kind };
        if matches!(
            kind,
            sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
                | sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_KERNEL
        ) {
            // Every version of the kernel record keeps `start` and `end` at the same offsets.
            let kernel = record as *const sys::CUpti_ActivityKernel10;
            // SAFETY: a kernel record; the struct is packed, so its fields are read unaligned.
            let (start, end) = unsafe {
                (
                    std::ptr::addr_of!((*kernel).start).read_unaligned(),
                    std::ptr::addr_of!((*kernel).end).read_unaligned(),
                )
            };
            stamps.push((start, end));
        }
    }
    // SAFETY: allocated by `buffer_requested` with the same layout (a null one never comes back
    // with records, and dealloc is not called on it).
    if !buffer.is_null() {
        unsafe { dealloc(buffer, BUFFER) };
    }
}

fn cupti_error(what: &str) -> impl Fn(CuptiError) -> anyhow::Error + '_ {
    move |e| anyhow!("CUPTI: {what} failed: {e:?}")
}

impl KernelClock {
    /// Opens CUPTI and enables the kernels' activity records, the first time; later calls
    /// return the same recorder. Fails where libcupti cannot be loaded (it lies in CUDA's
    /// `extras/CUPTI/lib64`, which `LD_LIBRARY_PATH` must name) or another profiler holds
    /// CUPTI (Nsight Systems or Compute run the process).
    pub fn get() -> Result<&'static KernelClock> {
        static CLOCK: OnceLock<std::result::Result<KernelClock, String>> = OnceLock::new();
        CLOCK
            .get_or_init(|| Self::open().map_err(|e| format!("{e:#}")))
            .as_ref()
            .map_err(|e| anyhow!("{e}"))
    }

    fn open() -> Result<KernelClock> {
        // SAFETY: only loads the library (cudarc panics on a missing one; this asks first).
        if !unsafe { sys::is_culib_present() } {
            bail!(
                "the kernels' clock reads CUPTI, and libcupti could not be loaded: add CUDA's \
                 extras/CUPTI/lib64 to LD_LIBRARY_PATH"
            );
        }
        activity::register_callbacks(Some(buffer_requested), Some(buffer_completed))
            .map_err(cupti_error("registering the activity buffers"))?;
        activity::enable(sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).map_err(
            cupti_error("enabling the kernels' records (is another profiler attached?)"),
        )?;
        Ok(KernelClock(()))
    }

    /// The moment the runs to time start, on CUPTI's clock (the one its records are stamped
    /// on): what started before it is not theirs. The stamps held so far are dropped.
    pub fn begin(&self) -> Result<Since> {
        self.flush()?;
        STAMPS.lock().unwrap_or_else(|p| p.into_inner()).clear();
        let mut now = 0u64;
        // SAFETY: writes one u64.
        unsafe { cudarc::cupti::result::get_timestamp(&mut now) }
            .map_err(cupti_error("reading the timestamp"))?;
        Ok(Since(now))
    }

    /// Milliseconds of each of the `runs` runs since `since`, once they have all ended: from
    /// the start of a run's first kernel to the end of its last. The runs must launch the same
    /// number of kernels each, one after another on one stream, so that the kernels in order
    /// of their start fall into the runs in turn.
    ///
    /// CUPTI does not deliver every record at the first flush after its kernel ended (on the
    /// H200, cuBLASLt's split-k reduction came one run late), so the stamps are read once for
    /// all the runs, flushing until their count is a whole number of runs; a late record of
    /// an earlier call's kernels started before `since` and is left out.
    pub fn spans_ms(&self, since: Since, runs: usize) -> Result<Vec<f64>> {
        let mut stamps = self.collect(since, 20, |count, _| {
            runs > 0 && count >= runs && count.is_multiple_of(runs)
        })?;
        spans_of_runs(&mut stamps, runs)
    }

    /// Every kernel's (start, end) in nanoseconds since `since`, sorted by start, once the
    /// launches have ended: a timeline of what ran. Read until three flushes in a row bring
    /// nothing new (CUPTI delivers some records late: [`KernelClock::spans_ms`]).
    pub fn stamps(&self, since: Since) -> Result<Vec<(u64, u64)>> {
        let mut stamps = self.collect(since, 200, |count, quiet| count > 0 && quiet >= 3)?;
        stamps.sort_unstable();
        Ok(stamps)
    }

    /// The stamps of kernels started since `since`, flushing every 5 ms, at most `flushes`
    /// times, until `enough(stamps so far, flushes in a row that brought none)`.
    fn collect(
        &self,
        since: Since,
        flushes: usize,
        enough: impl Fn(usize, usize) -> bool,
    ) -> Result<Vec<(u64, u64)>> {
        let mut stamps = Vec::new();
        let mut quiet = 0;
        for flush in 0..flushes {
            if flush > 0 {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            self.flush()?;
            let mut delivered = STAMPS.lock().unwrap_or_else(|p| p.into_inner());
            let before = stamps.len();
            stamps.extend(delivered.drain(..).filter(|&(start, _)| start >= since.0));
            drop(delivered);
            quiet = if stamps.len() == before { quiet + 1 } else { 0 };
            if enough(stamps.len(), quiet) {
                break;
            }
        }
        Ok(stamps)
    }

    fn flush(&self) -> Result<()> {
        activity::flush_all(sys::CUpti_ActivityFlag::CUPTI_ACTIVITY_FLAG_FLUSH_FORCED as u32)
            .map_err(cupti_error("flushing the activity records"))?;
        let mut dropped = 0usize;
        // SAFETY: a null context and stream 0 ask for the records dropped anywhere.
        unsafe { activity::get_num_dropped_records(std::ptr::null_mut(), 0, &mut dropped) }
            .map_err(cupti_error("counting dropped records"))?;
        if dropped > 0 {
            bail!("CUPTI dropped {dropped} kernel records: the times would be short");
        }
        Ok(())
    }
}

/// Milliseconds of each of `runs` runs, given all their kernels' (start, end) stamps in
/// nanoseconds, in any order: sorted by start, the first `stamps.len() / runs` are the first
/// run's, and so on; each run's span is from its first start to its last end.
fn spans_of_runs(stamps: &mut [(u64, u64)], runs: usize) -> Result<Vec<f64>> {
    if runs == 0 || stamps.len() < runs || !stamps.len().is_multiple_of(runs) {
        bail!(
            "{} kernels were recorded for {runs} runs: the kernels' clock needs the same number \
             of kernels in every run, at least one",
            stamps.len()
        );
    }
    stamps.sort_unstable();
    Ok(stamps
        .chunks(stamps.len() / runs)
        .map(|run| {
            let start = run.iter().map(|&(start, _)| start).min().unwrap_or(0);
            let end = run.iter().map(|&(_, end)| end).max().unwrap_or(0);
            end.saturating_sub(start) as f64 * 1e-6
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::spans_of_runs;

    #[test]
    fn runs_of_two_kernels_span_from_the_first_start_to_the_last_end() {
        // Three runs of a GEMM and its reduction, delivered out of order (the second run's
        // reduction late, as CUPTI delivered cuBLASLt's).
        let mut stamps = [
            (1_000, 9_000),
            (9_500, 10_000),
            (100_000, 108_000),
            (200_000, 207_000),
            (207_200, 208_000),
            (108_400, 109_000),
        ];
        let spans = spans_of_runs(&mut stamps, 3).unwrap();
        assert_eq!(spans, [0.009, 0.009, 0.008]);
    }

    #[test]
    fn a_count_that_is_not_a_whole_number_of_runs_is_refused() {
        let message = |stamps: &mut [(u64, u64)], runs| {
            format!("{:#}", spans_of_runs(stamps, runs).unwrap_err())
        };
        assert!(message(&mut [(0, 1); 5], 2).contains("5 kernels were recorded for 2 runs"));
        assert!(message(&mut [(0, 1); 1], 2).contains("1 kernels were recorded for 2 runs"));
        assert!(message(&mut [], 0).contains("at least one"));
    }
}
