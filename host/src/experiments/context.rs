//! What every experiment shares: the [`Common`] options, the [`Context`] of a run (backend,
//! timing, seed, the page's metadata) and the cells and labels the pages are made of. Below the
//! experiments, which import it, and below `mod.rs`, which only dispatches to them, so that no
//! experiment imports the module that calls it.
use super::progress::Progress;
use super::table::Cell;
use anyhow::Result;
use gpu_gemm::problem::{Init, Problem};
use gpu_gemm::registry::{self, Variant};
use gpu_gemm::run::BackendChoice;
use gpu_gemm::run::{self, Backend, Clock, Engine, Report, Timing};
use kernels_gpu::gemm::Dtype;
use std::path::{Path, PathBuf};

/// Options every experiment takes.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Common {
    /// Where to run [default: gpu when a CUDA driver and device exist, else emu (at small sizes)]
    #[arg(long, value_enum)]
    pub backend: Option<BackendChoice>,
    /// Load this PTX instead of the embedded one
    #[arg(long)]
    pub ptx: Option<PathBuf>,
    /// The results folder [default: results/EXPERIMENT, e.g. results/000-tile-sweep]
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Seed of the random inputs (recorded on the page)
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Timed runs per configuration, at least 1 [default on the GPU: the experiment's own, 10 for most; 1 on the emulator]
    #[arg(long, value_parser = crate::args::positive_count)]
    pub iters: Option<usize>,
    /// Untimed runs first [default on the GPU: the experiment's own, 2 for most; 0 on the emulator]
    #[arg(long)]
    pub warmup: Option<usize>,
    /// Stop timing a configuration once this many ms are timed (after at least 3 runs) [default: 1000 on the GPU]
    #[arg(long, value_parser = crate::args::positive_amount)]
    pub budget_ms: Option<f64>,
    /// GPU only: each run behind a 256 MiB write, L2 flushed and the launch queued (as the single run's --cold)
    #[arg(long)]
    pub cold: bool,
    /// GPU only: what a run's time is read from, CUDA events or the kernels' own stamps from CUPTI (as the single run's --clock; `--cold --clock kernels` is DeepGEMM's protocol)
    #[arg(long, value_enum, default_value_t = Clock::Events)]
    pub clock: Clock,
}

/// What every experiment needs: the open backend, timing, seed, and how it was started.
pub struct Context {
    /// The open backend, as the library's handle: the pipeline reads its backend, the
    /// experiments that call the library (`decode`) the handle itself.
    gemm: gpu_gemm::Gemm,
    pub gpu: bool,
    /// `--warmup`, `--iters`, `--budget-ms` as given (they override each experiment's own).
    warmup: Option<usize>,
    iters: Option<usize>,
    budget_ms: Option<f64>,
    /// `--cold` and `--clock`, for the GPU's runs.
    cold: bool,
    clock: Clock,
    pub seed: u64,
    /// The command line that started the run, as the page shows it.
    pub command_line: String,
}

impl Context {
    pub fn new(backend: Backend, common: &Common, command_line: String) -> Self {
        Self {
            gpu: backend.is_gpu(),
            gemm: gpu_gemm::Gemm::on(backend),
            warmup: common.warmup,
            iters: common.iters,
            budget_ms: common.budget_ms,
            cold: common.cold,
            clock: common.clock,
            seed: common.seed,
            command_line,
        }
    }

    /// The open backend.
    pub fn backend(&self) -> &Backend {
        self.gemm.backend()
    }

    /// The library's handle on the backend.
    pub fn gemm(&self) -> &gpu_gemm::Gemm {
        &self.gemm
    }

    /// The usual timing: on the GPU up to 10 runs after 2 warm-up, stopping once 1 s is timed.
    pub fn timing(&self) -> Timing {
        self.timing_with(2, 10)
    }

    /// Timing with an experiment's own GPU defaults (the command line overrides them). Slow
    /// configurations take `warmup` + at least 3 timed runs + the checked run unless `iters`
    /// is 1 ([`Timing::wants_more`]), which is what the long sweeps choose. The emulator runs
    /// once, unwarmed.
    pub fn timing_with(&self, warmup: usize, iters: usize) -> Timing {
        let gpu = self.gpu;
        Timing {
            warmup: self.warmup.unwrap_or(if gpu { warmup } else { 0 }),
            iters: self.iters.unwrap_or(if gpu { iters } else { 1 }),
            budget_ms: self
                .budget_ms
                .unwrap_or(if gpu { 1000.0 } else { f64::INFINITY }),
            check: true,
            cold: gpu && self.cold,
            clock: if gpu { self.clock } else { Clock::Events },
        }
    }

    /// An n×n×n problem, C = A·B (alpha 1, beta 0), tight leading dimensions.
    pub fn square(&self, n: u32, dtype: Dtype, init: Init) -> Problem {
        Problem {
            init,
            ..self.problem(dtype, (n, n, n))
        }
    }

    /// An m×n×k problem, C = A·B (alpha 1, beta 0), random inputs, tight leading dimensions.
    pub fn problem(&self, dtype: Dtype, (m, n, k): (u32, u32, u32)) -> Problem {
        Problem {
            seed: self.seed,
            ..Problem::packed(m, n, k, dtype)
        }
    }

    /// Runs `variants` on `p` through [`run::execute_many`] (inputs and f64 reference made
    /// once), printing one line per run and counting it on `progress`.
    pub fn measure(
        &self,
        progress: &Progress,
        variants: &[(Variant, Option<u32>)],
        p: &Problem,
        timing: Timing,
    ) -> Vec<Result<Report>> {
        self.measure_with(progress, variants, p, |each| {
            run::execute_many(self.backend(), variants, p, timing, each)
        })
    }

    /// [`Context::measure`] for an e4m3 problem (`p` in the FP8 layout, op(A) = Aᵀ): through
    /// [`gpu_gemm::fp8::run::execute_many`] with one scale per tensor, where `cublas` is
    /// cuBLASLt.
    pub fn measure_fp8(
        &self,
        progress: &Progress,
        variants: &[(Variant, Option<u32>)],
        p: &Problem,
        timing: Timing,
    ) -> Vec<Result<Report>> {
        let fp8 = gpu_gemm::fp8::quantize::Fp8Problem::per_tensor(p);
        self.measure_with(progress, variants, p, |each| {
            gpu_gemm::fp8::run::execute_many(self.backend(), variants, &fp8, timing, each)
        })
    }

    /// Runs `execute`, which hands each report to the callback it is given, with one printed
    /// line per run and the bar saying what runs next.
    fn measure_with(
        &self,
        progress: &Progress,
        variants: &[(Variant, Option<u32>)],
        p: &Problem,
        execute: impl FnOnce(&mut dyn FnMut(&Result<Report>)) -> Vec<Result<Report>>,
    ) -> Vec<Result<Report>> {
        let labels: Vec<String> = variants.iter().map(|&(v, t)| label(v, t)).collect();
        let mut next = 0;
        if let Some(first) = labels.first() {
            progress.running(&format!("{first} {}", describe(p)));
        }
        execute(&mut |report| {
            progress.done(&run_line(&labels[next], p, report));
            next += 1;
            if let Some(label) = labels.get(next) {
                progress.running(&format!("{label} {}", describe(p)));
            }
        })
    }

    /// The name of the time column: GPU time, or the emulator's wall time.
    pub fn time_column(&self) -> &'static str {
        if self.gpu {
            "median ms"
        } else {
            "emulator wall ms"
        }
    }

    /// A throughput cell (`scale` flop per unit: 1e9 for GFLOP/s), or why there is none: an
    /// emulated kernel's time says nothing about speed.
    pub fn rate_cell(&self, report: &Result<Report>, scale: f64, digits: usize) -> Cell {
        match report {
            Ok(r) if !r.engine.measures_performance() => Cell::missing("n/a (emulator)"),
            Ok(r) if r.median_ms.is_finite() => {
                Cell::fixed(r.problem.flops() / (r.median_ms * 1e-3) / scale, digits)
            }
            Ok(_) => Cell::missing("no time"),
            Err(_) => Cell::missing("-"),
        }
    }

    /// The metadata rows every page starts with (with the timing `t` the runs used), then the
    /// experiment's own.
    pub fn metadata(
        &self,
        t: Timing,
        own: Vec<(&str, String)>,
        passed: bool,
    ) -> Vec<(String, String)> {
        let times = if self.gpu {
            let budget = if t.budget_ms.is_finite() {
                format!(
                    ", timing stops once {} ms are timed after 3 runs",
                    t.budget_ms
                )
            } else {
                String::new()
            };
            let runs = if t.iters == 1 {
                "one run".to_string()
            } else {
                format!("median of up to {} runs", t.iters)
            };
            let clock = match t.clock {
                Clock::Events => "CUDA events around each run",
                Clock::Kernels => "the kernels' own start and end stamps (CUPTI)",
            };
            let cold = if t.cold {
                ", each run behind a 256 MiB write (L2 flushed, the launch queued)"
            } else {
                ""
            };
            format!(
                "GPU time from {clock}: {runs} after {} warm-up{budget}{cold}",
                t.warmup
            )
        } else {
            format!(
                "CPU wall time of the emulator ({}): it measures the emulation, not a GPU",
                if t.iters == 1 {
                    "one run".to_string()
                } else {
                    format!("median of {} runs", t.iters)
                }
            )
        };
        let mut rows = vec![
            ("device".to_string(), self.backend().describe()),
            ("times".to_string(), times),
            ("date".to_string(), utc_now()),
            ("command".to_string(), self.command_line.clone()),
            (
                "host".to_string(),
                format!("{} {}", env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")),
            ),
        ];
        rows.extend(own.into_iter().map(|(k, v)| (k.to_string(), v)));
        rows.push((
            "checks".to_string(),
            if passed {
                "every run that was checked passed".to_string()
            } else {
                "some checks FAILED (see the check columns)".to_string()
            },
        ));
        rows
    }
}

/// One printed line per run: `  tiled:32 f64 4096³: GPU median 12.345 ms over 10 runs, check pass (0.0e0)`.
fn run_line(label: &str, p: &Problem, report: &Result<Report>) -> String {
    let what = format!("{label} {} {}", p.dtype.name(), describe(p));
    match report {
        Ok(r) => format!(
            "  {what}: {} median {:.3} ms over {} runs, check {}",
            match r.engine {
                Engine::Emulator => "emulator wall time",
                engine => engine.name(),
            },
            r.median_ms,
            r.runs,
            check_cell(report).shown()
        ),
        Err(e) => format!("  {what}: error: {e:#}"),
    }
}

/// `tiled:32`, `v4`, `cublas`: how a variant and tile show in tables.
pub fn label(variant: Variant, tile: Option<u32>) -> String {
    match tile {
        Some(t) => format!("{}:{t}", variant.name()),
        None => variant.name().to_string(),
    }
}

/// `4096³` for a cube, `m×n×k` otherwise.
pub fn describe(p: &Problem) -> String {
    let s = p.shape;
    if s.m == s.n && s.n == s.k {
        format!("{}³", s.m)
    } else {
        format!("{}×{}×{}", s.m, s.n, s.k)
    }
}

/// The variant called `name`: a registered kernel, CPU variant or cuBLAS yardstick.
pub fn variant(name: &str) -> Result<Variant> {
    registry::find(name)
}

/// The check column: `pass (1.1e-6)` with the relative Frobenius error, `FAIL (…)`, or why none.
pub fn check_cell(report: &Result<Report>) -> Cell {
    match report {
        Ok(Report { check: Some(c), .. }) => Cell::text(format!(
            "{} ({:.1e})",
            if c.passed() { "pass" } else { "FAIL" },
            c.relative_frobenius
        )),
        Ok(_) => Cell::text("not checked"),
        // The time column says what went wrong.
        Err(_) => Cell::missing("-"),
    }
}

/// The median time cell, or the error.
pub fn time_cell(report: &Result<Report>) -> Cell {
    match report {
        Ok(r) if r.median_ms.is_finite() => Cell::fixed(r.median_ms, 3),
        Ok(_) => Cell::missing("no time"),
        Err(e) => error_cell(e),
    }
}

/// A failed run's cell: `error: ` and the first clause of the message (the full message is in
/// the run's printed line).
pub fn error_cell(e: &anyhow::Error) -> Cell {
    let message = format!("{e:#}");
    let first = message.lines().next().unwrap_or("");
    Cell::missing(format!(
        "error: {}",
        first.split("; ").next().unwrap_or(first)
    ))
}

/// The median time of a run whose check passed (or did not run): what may be called "best".
pub fn valid_time(report: &Result<Report>) -> Option<f64> {
    report
        .as_ref()
        .ok()
        .filter(|r| r.passed())
        .map(|r| r.median_ms)
        .filter(|t| t.is_finite())
}

/// Whether every run that produced a report passed its check.
pub fn all_passed<'a>(reports: impl IntoIterator<Item = &'a Result<Report>>) -> bool {
    reports
        .into_iter()
        .all(|r| r.as_ref().map_or(true, Report::passed))
}

/// The current UTC time, RFC 3339 to the second.
pub fn utc_now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// This process's command line as a shell would take it back (`host experiment …`).
pub fn process_command_line() -> String {
    let mut args = std::env::args();
    let program = args
        .next()
        .as_deref()
        .and_then(|p| Path::new(p).file_name()?.to_str().map(String::from))
        .unwrap_or_else(|| "host".into());
    std::iter::once(program)
        .chain(args.map(|a| shell_quote(&a)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_quote(arg: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:,=@%+".contains(c);
    if !arg.is_empty() && arg.chars().all(plain) {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// Synthetic reports and a GPU-flavoured context, to test the pages' GPU wording (cuBLAS
/// ratios, TFLOP/s) where no GPU is.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use gpu_gemm::verify::Check;

    /// A context that words its pages as for a GPU (its backend is the emulator: no run may
    /// go through it).
    pub fn gpu_context() -> Context {
        let mut ctx = Context::new(Backend::Emulator, &Common::default(), "host test".into());
        ctx.gpu = true;
        ctx
    }

    /// A run of `variant` on `p` that took `ms` and whose check passed (or failed).
    pub fn report(variant: &str, p: &Problem, ms: f64, passed: bool) -> Result<Report> {
        let error = if passed { 1e-7 } else { 1.0 };
        Ok(Report {
            variant: variant.to_string(),
            entry: format!("gemm_{variant}"),
            engine: Engine::Gpu,
            problem: *p,
            median_ms: ms,
            min_ms: ms,
            runs: 3,
            check: Some(Check {
                relative_frobenius: error,
                max_element_error: error,
                max_element_bound: 1e-3,
                max_reference: 1.0,
                tolerance: 1e-3,
                terms: gpu_gemm::verify::ToleranceTerms::new(
                    p.dtype,
                    kernels_gpu::gemm::Arithmetic::Native,
                    p.shape.k,
                ),
                non_finite: 0,
                padding_changed: 0,
                coverage: "full".into(),
                beyond_rounding: None,
                amax: None,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_are_quoted_for_the_shell() {
        assert_eq!(shell_quote("--size"), "--size");
        assert_eq!(shell_quote("results/000"), "results/000");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn utc_dates_are_rfc3339() {
        let d = utc_now();
        assert!(d.ends_with('Z') && d.len() == 20, "{d}");
    }
}
