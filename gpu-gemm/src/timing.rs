//! How a backend times a run ([`Timing`]) and what it brings back ([`Measured`]): the protocol
//! every backend follows (warm-ups, timed runs within a budget, then one checked run on a fresh
//! C), below the backends, the CPU variants and the tuner that share it; and the statistic every
//! report and the tuner take of the runs ([`median`]).

/// How a backend runs a variant: warm-ups, timed runs until `iters` or the budget, then with
/// `check` one more run on a fresh C whose result is downloaded for the check.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// Untimed runs first, so that cold caches and idle clocks do not count.
    pub warmup: usize,
    /// At most this many timed runs: fewer once `budget_ms` is spent, never fewer than
    /// `min(iters, 3)`.
    pub iters: usize,
    /// Stop timing early once this many milliseconds were timed (after at least 3 runs), so that
    /// the slow variants of a table do not take minutes.
    pub budget_ms: f64,
    /// Whether C is checked against the f64 reference (`false`: times only, no reference
    /// computed). The CPU variants check their first run instead of running once more.
    pub check: bool,
    /// On the GPU, before each run: write [`COLD_BYTES`] over a scratch buffer, so that L2
    /// holds none of the operands (DeepGEMM's and Triton's protocol), and the run's launch is
    /// queued on the stream while the GPU writes. The events then leave out the host's launch
    /// latency (a few microseconds, which a decode-sized GEMM of 10–20 µs would otherwise
    /// count), though not the stream's own gaps around the kernels ([`Clock::Kernels`] leaves
    /// those out too). `false`: runs back to back on warm caches, each launch after the last
    /// run's completion, as a program calling one GEMM at a time sees them.
    pub cold: bool,
    /// What a GPU run's time is read from: events on the stream, or the kernels' own stamps.
    pub clock: Clock,
}

impl Timing {
    /// One run, checked against the f64 reference, nothing timed on purpose: what the tests
    /// ask of a kernel.
    pub const CHECK_ONCE: Timing = Timing {
        warmup: 0,
        iters: 1,
        budget_ms: f64::INFINITY,
        check: true,
        cold: false,
        clock: Clock::Events,
    };
}

/// What a GPU run's time is read from ([`Timing::clock`]). The CPU and the emulator have
/// one clock, the wall's. The kernels' clock is read by
/// [`KernelClock`](crate::kernel_clock::KernelClock).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Clock {
    /// CUDA events recorded on the stream before and after the run's launches: the kernels,
    /// and the front end's gaps around them (starting the first kernel after the start event,
    /// recording the stop event after the last), a few microseconds in all
    #[default]
    Events,
    /// The kernels' own start and end stamps, as CUPTI's activity records give them: from the
    /// first kernel's start to the last one's end. How torch.profiler times kernels, and so
    /// how DeepGEMM's published figures were taken. Needs libcupti (CUDA's extras/CUPTI/lib64)
    Kernels,
}

/// What [`Timing::cold`] writes before each run: 256 MiB, five times the 50 MiB L2 of an H100
/// or H200 (DeepGEMM flushes 256 MB).
pub const COLD_BYTES: usize = 256 << 20;

impl Timing {
    /// Whether another timed run is wanted after `done` runs took `spent_ms`.
    pub fn wants_more(&self, done: usize, spent_ms: f64) -> bool {
        done < self.iters && (done < 3 || spent_ms < self.budget_ms)
    }
}

/// What a backend brings back from a run.
pub struct Measured<T> {
    /// Milliseconds of each timed run, warm-ups excluded: on the GPU as [`Timing::clock`] reads
    /// them (all of a run's launches: both of split-k's), wall time on the emulator and the CPU.
    pub times_ms: Vec<f64>,
    /// C as uploaded for the checked run (NaN when beta = 0).
    pub uploaded_c: Vec<T>,
    /// C after the checked run.
    pub result: Vec<T>,
    /// D's amax and its e4m3 scale after the checked run, with the amax epilogue.
    pub amax: Option<[f32; 2]>,
}

/// Median of a non-empty sample (the mean of the middle two for an even count).
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}
