//! Experiment 003: the CPU and GPU sweeps of the `003` lab report, five tables on one page.
//!
//! | part | the report's section | what runs |
//! |---|---|---|
//! | `cpu-sizes` | 1.3.1 | the CPU variants over sizes 2^9…2^12 |
//! | `cpu-blocking` | 1.3.2 | `cpu-blocked` over blockL 8…2048 at 2^11 |
//! | `gpu-threads` | 2.3.2 | GPU `basic` (one thread per element) over block sizes 2…1024 at 2^13 |
//! | `gpu-blocking` | 2.3.3 | GPU `blocked` (shared-memory tiles) over blockL 2…32 at 2^13 |
//! | `scaling` | 2.3.1 | the best CPU variant against GPU `basic`, `blocked` and cuBLAS, 2^9…2^14 |
//!
//! A CPU run grows as n³, so the CPU parts estimate each run from the previous size of the same
//! variant (×8 per doubling) and skip, with the estimate in the table, what would take longer
//! than `--cpu-time-limit`. The report's own figures are quoted beside ours.
use super::chart::{compact, Chart, Corner, LineChart, Series};
use super::page::{Page, Section};
use super::progress::Progress;
use super::table::{index_of_min, Cell, Table};
use super::{all_passed, check_cell, label, time_cell, valid_time, variant, Common, Context};
use anyhow::Result;
use clap::ValueEnum;
use gpu_gemm::problem::Init;
use gpu_gemm::registry::{CublasMath, Variant};
use gpu_gemm::run::{self, Launch, Report, Timing};
use kernels_gpu::gemm::Dtype;
use std::collections::HashMap;

pub const ID: &str = "003-sweeps";

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The CPU variants over sizes (the report's 1.3.1)
    CpuSizes,
    /// cpu-blocked over blockL (1.3.2)
    CpuBlocking,
    /// GPU `basic` over block sizes (2.3.2)
    GpuThreads,
    /// GPU `blocked` over blockL (2.3.3)
    GpuBlocking,
    /// The best CPU variant against GPU basic, blocked and cuBLAS over sizes (2.3.1)
    Scaling,
}

const ALL_PARTS: [Part; 5] = [
    Part::CpuSizes,
    Part::CpuBlocking,
    Part::GpuThreads,
    Part::GpuBlocking,
    Part::Scaling,
];

#[derive(clap::Args, Debug, Clone, Default)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
    /// Which tables, comma-separated [default: all five]
    #[arg(long, value_enum, value_delimiter = ',')]
    pub parts: Option<Vec<Part>>,
    /// Skip a CPU run whose time, estimated from the previous size (×8 per doubling of n), exceeds this many seconds [default: 20]
    #[arg(long, value_parser = crate::args::positive_amount)]
    pub cpu_time_limit: Option<f64>,
    /// Sizes of the CPU table [default: 512,1024,2048,4096; 16,32,64 on the emulator]
    #[arg(long, value_delimiter = ',', value_parser = crate::args::positive_size)]
    pub cpu_sizes: Option<Vec<u32>>,
    /// CPU variants of the CPU table [default: cpu-naive,cpu-simd,cpu-blocked,cpu-parallel,cpu-ndarray]
    #[arg(long, value_delimiter = ',')]
    pub cpu_variants: Option<Vec<String>>,
    /// Size of the cpu-blocked blockL sweep [default: 2048; 64 on the emulator]
    #[arg(long, value_parser = crate::args::positive_size)]
    pub cpu_blocking_size: Option<u32>,
    /// Size of the GPU block-size and blockL sweeps [default: 8192; 64 on the emulator]
    #[arg(long, value_parser = crate::args::positive_size)]
    pub gpu_sweep_size: Option<u32>,
    /// Sizes of the scaling table [default: 512,…,16384; 16,32,64 on the emulator]
    #[arg(long, value_delimiter = ',', value_parser = crate::args::positive_size)]
    pub scaling_sizes: Option<Vec<u32>>,
    /// The CPU variant of the scaling table [default: the fastest of the CPU table at its largest size, else cpu-parallel]
    #[arg(long)]
    pub scaling_cpu: Option<String>,
}

/// The CPU variants of the report (baseline, AVX, AVX blocked) and the two beyond it.
const CPU_VARIANTS: [&str; 5] = [
    "cpu-naive",
    "cpu-simd",
    "cpu-blocked",
    "cpu-parallel",
    "cpu-ndarray",
];
/// The scaling table's CPU variant when the CPU table did not run.
const DEFAULT_SCALING_CPU: &str = "cpu-parallel";
/// The report's block size and blockL in its scaling table (1 << 5).
const SCALING_TILE: u32 = 32;

// The report's figures, in ms (`003_…txt`). CPU: an Intel i5-8265U, one thread, gcc -O2 -mfma.
// GPU: not named in the report (a Xeon Silver 4210 host, nvcc 10.2); 2.3.2 and 2.3.3 timed
// with nvprof, 2.3.1 with clock() around the whole call. None is the report's "N/A".
/// 1.3.1: n → (baseline, AVX, AVX blocked with blockL 64).
const REPORT_CPU_SIZES: [(u32, [Option<f64>; 3]); 4] = [
    (512, [Some(250.0), Some(16.0), Some(31.0)]),
    (1024, [Some(4219.0), Some(156.0), Some(188.0)]),
    (2048, [Some(65078.0), Some(2172.0), Some(1734.0)]),
    (4096, [None, Some(18109.0), Some(13703.0)]),
];
/// 1.3.2: blockL → AVX blocked at 2^11.
const REPORT_CPU_BLOCKING: [(u32, f64); 9] = [
    (8, 3141.0),
    (16, 2172.0),
    (32, 1750.0),
    (64, 1734.0),
    (128, 1531.0),
    (256, 1484.0),
    (512, 1297.0),
    (1024, 2063.0),
    (2048, 2172.0),
];
/// 2.3.2: block size → basic GPU kernel at 2^13.
const REPORT_GPU_THREADS: [(u32, f64); 10] = [
    (2, 65443.0),
    (4, 34350.0),
    (8, 19655.0),
    (16, 13560.0),
    (32, 6919.0),
    (64, 5776.0),
    (128, 5652.0),
    (256, 5651.0),
    (512, 5625.0),
    (1024, 5505.0),
];
/// 2.3.3: blockL → blocked GPU kernel at 2^13.
const REPORT_GPU_BLOCKING: [(u32, f64); 5] = [
    (2, 20123.0),
    (4, 3802.0),
    (8, 1287.0),
    (16, 644.0),
    (32, 500.0),
];
/// 2.3.1: n → (CPU baseline, GPU basic, GPU blocked), block size = blockL = 32.
const REPORT_SCALING: [(u32, [Option<f64>; 3]); 6] = [
    (512, [Some(475.0), Some(248.0), Some(3.0)]),
    (1024, [Some(3781.0), Some(248.0), Some(8.0)]),
    (2048, [Some(49729.0), Some(346.0), Some(25.0)]),
    (4096, [None, Some(1333.0), Some(124.0)]),
    (8192, [None, Some(7593.0), Some(741.0)]),
    (16384, [None, Some(57881.0), Some(5713.0)]),
];

/// Whether a CPU run goes ahead.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CpuPlan {
    Run,
    Skip { estimate_ms: f64 },
}

/// The time of a size-`n` run estimated from a size-`from_n` one: the work grows as n³.
pub fn estimate_ms(from_n: u32, from_ms: f64, n: u32) -> f64 {
    from_ms * (n as f64 / from_n as f64).powi(3)
}

/// The time-limit rule of the CPU tables: each variant's next run is estimated from its last
/// size (measured, or itself estimated when that one was skipped) and skipped when the estimate
/// exceeds the limit. A variant's first size always runs.
#[derive(Debug)]
pub struct CpuLimiter {
    pub limit_ms: f64,
    last: HashMap<String, (u32, f64)>,
}

impl CpuLimiter {
    pub fn new(limit_s: f64) -> Self {
        Self {
            limit_ms: limit_s * 1e3,
            last: HashMap::new(),
        }
    }

    pub fn plan(&mut self, variant: &str, n: u32) -> CpuPlan {
        let Some(&(from_n, from_ms)) = self.last.get(variant) else {
            return CpuPlan::Run;
        };
        let estimate = estimate_ms(from_n, from_ms, n);
        if estimate > self.limit_ms {
            // Larger sizes are estimated from this estimate, so they are skipped too.
            self.last.insert(variant.to_string(), (n, estimate));
            CpuPlan::Skip {
                estimate_ms: estimate,
            }
        } else {
            CpuPlan::Run
        }
    }

    /// Records a measured time.
    pub fn measured(&mut self, variant: &str, n: u32, ms: f64) {
        if ms.is_finite() {
            self.last.insert(variant.to_string(), (n, ms));
        }
    }

    /// The table cell of a skipped run: `skipped: est. 180 s > 20 s limit`.
    pub fn reason(&self, estimate_ms: f64) -> String {
        format!(
            "skipped: est. {} s > {} s limit",
            compact(estimate_ms / 1e3),
            compact(self.limit_ms / 1e3)
        )
    }
}

/// A CPU run, or the estimate that skipped it.
enum Outcome {
    /// Boxed: a report is large, and many outcomes of a sweep are small skips.
    Ran(Box<Result<Report>>),
    Skipped(f64),
}

impl Outcome {
    fn time(&self) -> Option<f64> {
        match self {
            Outcome::Ran(r) => valid_time(r),
            Outcome::Skipped(_) => None,
        }
    }

    fn cell(&self, limiter: &CpuLimiter) -> Cell {
        match self {
            Outcome::Ran(r) => time_cell(r),
            Outcome::Skipped(e) => Cell::missing(limiter.reason(*e)),
        }
    }

    fn failed_check(&self) -> bool {
        match self {
            Outcome::Ran(report) => report.as_ref().as_ref().is_ok_and(|r| !r.passed()),
            Outcome::Skipped(_) => false,
        }
    }
}

/// One run of a CPU variant: as measured (the CPU's own time, not the emulator's).
fn cpu_timing() -> Timing {
    Timing {
        warmup: 0,
        iters: 1,
        budget_ms: f64::INFINITY,
        check: true,
    }
}

/// The checks of a row that holds several runs: `pass`, or which failed.
fn checks_cell(failures: &[String]) -> Cell {
    Cell::text(if failures.is_empty() {
        "pass".to_string()
    } else {
        format!("FAIL: {}", failures.join(", "))
    })
}

fn powers_of_two(lo: u32, hi: u32) -> Vec<u32> {
    (lo..=hi).map(|e| 1u32 << e).collect()
}

fn quote3(values: &[Option<f64>; 3]) -> String {
    values
        .iter()
        .map(|v| v.map_or("N/A".into(), |v| format!("{v:.0}")))
        .collect::<Vec<_>>()
        .join(" / ")
}

pub fn run(ctx: &Context, args: &Args) -> Result<Page> {
    let parts = args.parts.clone().unwrap_or_else(|| ALL_PARTS.to_vec());
    let gpu = ctx.gpu;
    let cpu_sizes = args.cpu_sizes.clone().unwrap_or_else(|| {
        if gpu {
            powers_of_two(9, 12)
        } else {
            powers_of_two(4, 6)
        }
    });
    let cpu_names = args
        .cpu_variants
        .clone()
        .unwrap_or_else(|| CPU_VARIANTS.iter().map(|s| s.to_string()).collect());
    let blocking_n = args
        .cpu_blocking_size
        .unwrap_or(if gpu { 2048 } else { 64 });
    let sweep_n = args.gpu_sweep_size.unwrap_or(if gpu { 8192 } else { 64 });
    let scaling_sizes = args.scaling_sizes.clone().unwrap_or_else(|| {
        if gpu {
            powers_of_two(9, 14)
        } else {
            powers_of_two(4, 6)
        }
    });
    let limit_s = args.cpu_time_limit.unwrap_or(20.0);
    let mut limiter = CpuLimiter::new(limit_s);
    // One timed run per GPU configuration after one warm-up, as the report (nvprof, clock()):
    // the slow ones take seconds at 8192³ and 16384³.
    let gpu_timing = ctx.timing_with(1, 1);

    let cpu_blocking_values: Vec<u32> = REPORT_CPU_BLOCKING
        .iter()
        .map(|r| r.0)
        .filter(|&b| b <= blocking_n)
        .collect();
    let threads_values: Vec<u32> = REPORT_GPU_THREADS.iter().map(|r| r.0).collect();
    let blocking_values: Vec<u32> = REPORT_GPU_BLOCKING.iter().map(|r| r.0).collect();
    let has = |p: Part| parts.contains(&p);
    let scaling_gpu_runs = if gpu { 3 } else { 2 };
    let total = [
        (Part::CpuSizes, cpu_sizes.len() * cpu_names.len()),
        (Part::CpuBlocking, cpu_blocking_values.len()),
        (Part::GpuThreads, threads_values.len()),
        (Part::GpuBlocking, blocking_values.len()),
        (Part::Scaling, scaling_sizes.len() * (1 + scaling_gpu_runs)),
    ]
    .iter()
    .filter(|(p, _)| has(*p))
    .map(|(_, n)| n)
    .sum();
    let progress = Progress::new("003 sweeps", total);

    let mut sections = Vec::new();
    let mut passed = true;
    // CPU results by (variant, n), for the scaling table to reuse.
    let mut cpu_cache: HashMap<(String, u32), Outcome> = HashMap::new();
    let mut fastest_cpu = None;
    if has(Part::CpuSizes) {
        let (section, fastest) = cpu_sizes_section(
            ctx,
            &progress,
            &cpu_sizes,
            &cpu_names,
            &mut limiter,
            &mut cpu_cache,
            &mut passed,
        );
        fastest_cpu = fastest;
        sections.push(section);
    }
    if has(Part::CpuBlocking) {
        sections.push(sweep_section(
            ctx,
            &progress,
            &Sweep {
                id: "cpu-blocking",
                title: format!("cpu-blocked over blockL at {blocking_n}³ f32 (the report's 1.3.2)"),
                param: "blockL",
                variant: "cpu-blocked",
                values: cpu_blocking_values,
                n: blocking_n,
                report: &REPORT_CPU_BLOCKING,
                report_column: "003 report ms (i5-8265U, 2048³)",
                timing: cpu_timing(),
            },
            &mut passed,
        ));
    }
    if has(Part::GpuThreads) {
        sections.push(sweep_section(
            ctx,
            &progress,
            &Sweep {
                id: "gpu-threads",
                title: format!(
                    "GPU `basic` over block sizes at {sweep_n}³ f32 (the report's 2.3.2)"
                ),
                param: "block size",
                variant: "basic",
                values: threads_values,
                n: sweep_n,
                report: &REPORT_GPU_THREADS,
                report_column: "003 report ms (8192³)",
                timing: gpu_timing,
            },
            &mut passed,
        ));
    }
    if has(Part::GpuBlocking) {
        sections.push(sweep_section(
            ctx,
            &progress,
            &Sweep {
                id: "gpu-blocking",
                title: format!("GPU `blocked` over blockL at {sweep_n}³ f32 (the report's 2.3.3)"),
                param: "blockL",
                variant: "blocked",
                values: blocking_values,
                n: sweep_n,
                report: &REPORT_GPU_BLOCKING,
                report_column: "003 report ms (8192³)",
                timing: gpu_timing,
            },
            &mut passed,
        ));
    }
    if has(Part::Scaling) {
        let cpu_name = args
            .scaling_cpu
            .clone()
            .or(fastest_cpu)
            .unwrap_or_else(|| DEFAULT_SCALING_CPU.to_string());
        sections.push(scaling_section(
            ctx,
            &progress,
            &scaling_sizes,
            &cpu_name,
            &mut limiter,
            &mut cpu_cache,
            &mut passed,
        ));
    }
    progress.finish();

    let headline = sections
        .iter()
        .rev()
        .find_map(|s| s.finding.clone())
        .unwrap_or_else(|| "No part produced a checked time.".into());
    let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let part_names: Vec<String> = parts
        .iter()
        .filter_map(|p| Some(p.to_possible_value()?.get_name().to_string()))
        .collect();
    Ok(Page {
        id: ID,
        title: "003 · CPU and GPU sweeps".into(),
        intro: "The `003` lab report times a CPU triple loop, an AVX row-broadcast FMA and an AVX \
                blocked version over sizes and blockL, then a GPU kernel with one thread per element \
                over block sizes and a shared-memory blocked kernel over blockL, and the CPU against \
                the GPU over sizes 2^9…2^14. This page reruns those tables (single precision), \
                quoting the report's figures beside ours."
            .into(),
        headline,
        metadata: ctx.metadata(
            gpu_timing,
            vec![
                ("parts", part_names.join(", ")),
                ("CPU sizes", list(&cpu_sizes)),
                ("CPU blockL sweep size", blocking_n.to_string()),
                ("GPU sweep size", sweep_n.to_string()),
                ("scaling sizes", list(&scaling_sizes)),
                (
                    "CPU times",
                    "the CPU's own wall time of one run (std::time::Instant), on any backend".into(),
                ),
                (
                    "CPU time limit",
                    format!("{limit_s} s per run, estimated from the previous size (×8 per doubling)"),
                ),
                ("element type", "f32".into()),
                (
                    "inputs",
                    format!("uniform in [-1, 1), seed {}; C = A·B", ctx.seed),
                ),
                (
                    "CPU threads",
                    std::thread::available_parallelism().map_or("?".into(), |n| n.to_string()),
                ),
            ],
            passed,
        ),
        sections,
        passed,
    })
}

/// Runs CPU variants over sizes with the time limit; fills `cache`. Returns the section and
/// the fastest variant at the largest size that has a time; clears `passed` on a failed check.
fn cpu_sizes_section(
    ctx: &Context,
    progress: &Progress,
    sizes: &[u32],
    names: &[String],
    limiter: &mut CpuLimiter,
    cache: &mut HashMap<(String, u32), Outcome>,
    passed: &mut bool,
) -> (Section, Option<String>) {
    let found: Vec<(String, Result<Variant>)> =
        names.iter().map(|n| (n.clone(), variant(n))).collect();
    let report_col = "003 report ms (baseline / AVX / AVX blocked, i5-8265U)";
    let mut table = Table::new(
        "cpu-sizes",
        "The CPU variants over sizes, f32 (the report's 1.3.1)",
    )
    .text_column("n");
    for (name, _) in &found {
        table = table.number_column(&format!("{name} ms"));
    }
    table = table.text_column("checks").text_column(report_col);
    for &n in sizes {
        let p = ctx.square(n, Dtype::F32, Init::Random);
        let mut to_run = Vec::new();
        for (name, v) in &found {
            let Ok(v) = v else { continue };
            match limiter.plan(name, n) {
                CpuPlan::Run => to_run.push((*v, None)),
                CpuPlan::Skip { estimate_ms } => {
                    progress.done(&format!(
                        "  {name} f32 {n}³: {}",
                        limiter.reason(estimate_ms)
                    ));
                    cache.insert((name.clone(), n), Outcome::Skipped(estimate_ms));
                }
            }
        }
        if !to_run.is_empty() {
            let reports = ctx.measure(progress, &to_run, &p, cpu_timing());
            for ((v, _), report) in to_run.iter().zip(reports) {
                if let Ok(r) = &report {
                    limiter.measured(v.name(), n, r.median_ms);
                }
                cache.insert((v.name().to_string(), n), Outcome::Ran(Box::new(report)));
            }
        }
        let mut row = vec![Cell::text(n.to_string())];
        let mut failures = Vec::new();
        for (name, v) in &found {
            row.push(match (v, cache.get(&(name.clone(), n))) {
                (Err(e), _) => {
                    // Counted as done, so that the bar still ends at its total.
                    progress.done(&format!("  {name}: {e}"));
                    Cell::missing(format!("unknown variant `{name}`"))
                }
                (_, Some(outcome)) => {
                    if outcome.failed_check() {
                        failures.push(name.clone());
                    }
                    outcome.cell(limiter)
                }
                (_, None) => Cell::missing("-"),
            });
        }
        *passed &= failures.is_empty();
        row.push(checks_cell(&failures));
        let quoted = REPORT_CPU_SIZES.iter().find(|r| r.0 == n);
        row.push(quoted.map_or(Cell::missing("-"), |r| Cell::text(quote3(&r.1))));
        table.push(row);
    }

    // The fastest variant at the largest size where any ran.
    let fastest = sizes.iter().rev().find_map(|&n| {
        let times = found
            .iter()
            .map(|(name, _)| cache.get(&(name.clone(), n)).and_then(Outcome::time));
        index_of_min(times).map(|i| (n, i))
    });
    let finding = fastest.map(|(n, i)| {
        let name = &found[i].0;
        let t = cache[&(name.clone(), n)]
            .time()
            .expect("the fastest has a time");
        let slowest = found
            .iter()
            .filter_map(|(other, _)| Some((other, cache.get(&(other.clone(), n))?.time()?)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let versus = match slowest {
            Some((other, ts)) if other != name => {
                format!(", {:.1}× faster than {other} ({ts:.1} ms)", ts / t)
            }
            _ => String::new(),
        };
        let skipped = cache
            .values()
            .filter(|o| matches!(o, Outcome::Skipped(_)))
            .count();
        let skipped = if skipped > 0 {
            format!(
                " {skipped} runs were skipped by the {} s limit.",
                compact(limiter.limit_ms / 1e3)
            )
        } else {
            String::new()
        };
        format!("At n = {n} the fastest CPU variant is {name}, {t:.1} ms{versus}.{skipped}")
    });
    let chart = Chart::Lines(LineChart {
        title: "CPU time vs size, f32".into(),
        x_label: "n (m = n = k)".into(),
        y_label: "CPU ms".into(),
        x_powers_of_two: sizes.iter().all(|n| n.is_power_of_two()),
        y_log: true,
        series: found
            .iter()
            .map(|(name, _)| Series {
                name: name.clone(),
                points: sizes
                    .iter()
                    .filter_map(|&n| Some((n as f64, cache.get(&(name.clone(), n))?.time()?)))
                    .collect(),
            })
            .collect(),
        threshold: None,
        legend: Corner::UpperLeft,
    });
    let mut section = Section::new(table);
    section.chart = Some(chart);
    section.finding = finding.clone();
    section.notes.push(format!(
        "Times are the CPU's own wall time for one run (as the report's), on any backend. \
         `cpu-blocked` and `cpu-parallel` run at their default blockL. A run is skipped when its \
         time estimated from the variant's previous size (×8 per doubling of n) exceeds the \
         {} s limit (`--cpu-time-limit`). The last column quotes the report (one thread of an \
         Intel i5-8265U; its blocked column used blockL 64).",
        compact(limiter.limit_ms / 1e3)
    ));
    (section, fastest.map(|(_, i)| found[i].0.clone()))
}

/// One parameter sweep of one variant at one size.
struct Sweep<'a> {
    id: &'a str,
    title: String,
    /// What the parameter is called: "blockL", "block size".
    param: &'a str,
    variant: &'a str,
    values: Vec<u32>,
    n: u32,
    /// The report's (parameter, ms) figures.
    report: &'a [(u32, f64)],
    report_column: &'a str,
    timing: Timing,
}

fn sweep_section(ctx: &Context, progress: &Progress, sweep: &Sweep, passed: &mut bool) -> Section {
    let n = sweep.n;
    let p = ctx.square(n, Dtype::F32, Init::Random);
    let found = variant(sweep.variant);
    let is_kernel = matches!(found, Ok(Variant::Kernel(_)));
    // A kernel's time is the GPU's (or the emulator's wall time); a CPU variant's is its own.
    let time_col = if is_kernel {
        ctx.time_column()
    } else {
        "CPU ms"
    };
    let first = sweep.values.first().copied().unwrap_or(0);
    let speedup_col = format!("speed-up vs {} {first}", sweep.param);
    let mut table = Table::new(sweep.id, &sweep.title).text_column(sweep.param);
    if is_kernel {
        table = table.text_column("grid").text_column("block");
    }
    table = table
        .number_column(time_col)
        .number_column("GFLOP/s")
        .number_column(&speedup_col)
        .text_column("check")
        .number_column(sweep.report_column);
    let reports: Vec<Result<Report>> = match &found {
        Ok(v) => {
            let variants: Vec<(Variant, Option<u32>)> =
                sweep.values.iter().map(|&t| (*v, Some(t))).collect();
            ctx.measure(progress, &variants, &p, sweep.timing)
        }
        Err(e) => sweep
            .values
            .iter()
            .map(|_| {
                progress.done(&format!("  {}: {e}", sweep.variant));
                Err(anyhow::anyhow!("{e}"))
            })
            .collect(),
    };
    *passed &= all_passed(&reports);
    let base = reports.first().and_then(valid_time);
    for (&value, report) in sweep.values.iter().zip(&reports) {
        let mut row = vec![Cell::text(value.to_string())];
        if let (true, Ok(v)) = (is_kernel, &found) {
            match run::plan(*v, Some(value), &p, None) {
                Ok(Launch::Kernel { geometry: g, .. }) => {
                    row.push(Cell::text(format!("({},{})", g.grid.0, g.grid.1)));
                    row.push(Cell::text(format!("({},{})", g.block.0, g.block.1)));
                }
                _ => row.extend([Cell::missing("-"), Cell::missing("-")]),
            }
        }
        row.push(time_cell(report));
        row.push(ctx.rate_cell(report, 1e9, 1));
        row.push(match (base, valid_time(report)) {
            (Some(b), Some(t)) => Cell::times(b / t, 1),
            _ => Cell::missing("-"),
        });
        row.push(check_cell(report));
        row.push(
            sweep
                .report
                .iter()
                .find(|r| r.0 == value)
                .map_or(Cell::missing("-"), |r| Cell::fixed(r.1, 0)),
        );
        table.push(row);
    }
    let best = index_of_min(reports.iter().map(valid_time));
    table.mark_best(best);
    let finding = best.map(|b| {
        let value = sweep.values[b];
        let t = valid_time(&reports[b]).expect("the best has a time");
        let faster = match base {
            Some(b0) if b > 0 => format!(", {:.1}× faster than {} {first}", b0 / t, sweep.param),
            _ => String::new(),
        };
        let doc_best = index_of_min(sweep.report.iter().map(|r| Some(r.1)))
            .map(|i| format!(" (the 003 report's best: {})", sweep.report[i].0))
            .unwrap_or_default();
        let emulated = if is_kernel && !ctx.gpu {
            "On the emulator (CPU wall time, not GPU speed), the fastest "
        } else {
            "Best "
        };
        format!(
            "{emulated}{} for `{}` at {n}³: {value}, {t:.1} ms{faster}{doc_best}.",
            sweep.param, sweep.variant
        )
    });
    let chart = Chart::Lines(LineChart {
        title: format!("{} vs {}, {n}³ f32", sweep.variant, sweep.param),
        x_label: sweep.param.into(),
        y_label: time_col.into(),
        x_powers_of_two: true,
        y_log: true,
        series: vec![Series {
            name: sweep.variant.into(),
            points: sweep
                .values
                .iter()
                .zip(&reports)
                .filter_map(|(&v, r)| Some((v as f64, valid_time(r)?)))
                .collect(),
        }],
        threshold: None,
        legend: Corner::UpperRight,
    });
    let mut section = Section::new(table);
    section.chart = Some(chart);
    section.finding = finding;
    section.notes.push(format!(
        "★ marks the fastest {} whose check passed. The last column quotes the report{}.",
        sweep.param,
        if is_kernel {
            " (its GPU is not named; nvprof kernel times)"
        } else {
            " (one thread of an Intel i5-8265U)"
        }
    ));
    section
}

/// The best CPU variant against GPU basic, blocked (block size = blockL = 32) and cuBLAS.
fn scaling_section(
    ctx: &Context,
    progress: &Progress,
    sizes: &[u32],
    cpu_name: &str,
    limiter: &mut CpuLimiter,
    cache: &mut HashMap<(String, u32), Outcome>,
    passed: &mut bool,
) -> Section {
    let cpu = variant(cpu_name);
    let mut gpu_variants = Vec::new();
    for name in ["basic", "blocked"] {
        if let Ok(v) = variant(name) {
            gpu_variants.push((v, Some(SCALING_TILE)));
        }
    }
    if ctx.gpu {
        gpu_variants.push((Variant::Cublas(CublasMath::Default), None));
    }
    let gpu_labels: Vec<String> = gpu_variants.iter().map(|&(v, t)| label(v, t)).collect();
    let time_word = if ctx.gpu { "ms" } else { "emulator wall ms" };
    let mut table = Table::new(
        "scaling",
        "The best CPU variant against the GPU over sizes, f32 (the report's 2.3.1)",
    )
    .text_column("n")
    .number_column(&format!("{cpu_name} CPU ms"));
    for l in &gpu_labels {
        table = table.number_column(&format!("{l} {time_word}"));
    }
    table = table
        .number_column("blocked vs basic")
        .text_column("checks")
        .text_column("003 report ms (CPU baseline / GPU basic / GPU blocked)");
    // Per size: the CPU outcome and the GPU reports, kept for the chart and the finding.
    let mut gpu_times: Vec<Vec<Option<f64>>> = Vec::new();
    let mut cpu_times: Vec<Option<f64>> = Vec::new();
    for &n in sizes {
        let p = ctx.square(n, Dtype::F32, Init::Random);
        let key = (cpu_name.to_string(), n);
        match (&cpu, cache.contains_key(&key)) {
            (Err(e), _) => progress.done(&format!("  {cpu_name}: {e}")),
            (Ok(_), true) => progress.done(&format!("  {cpu_name} f32 {n}³: from the CPU table")),
            (Ok(v), false) => match limiter.plan(cpu_name, n) {
                CpuPlan::Run => {
                    let report = ctx
                        .measure(progress, &[(*v, None)], &p, cpu_timing())
                        .pop()
                        .expect("one report");
                    if let Ok(r) = &report {
                        limiter.measured(cpu_name, n, r.median_ms);
                    }
                    cache.insert(key.clone(), Outcome::Ran(Box::new(report)));
                }
                CpuPlan::Skip { estimate_ms } => {
                    progress.done(&format!(
                        "  {cpu_name} f32 {n}³: {}",
                        limiter.reason(estimate_ms)
                    ));
                    cache.insert(key.clone(), Outcome::Skipped(estimate_ms));
                }
            },
        }
        let reports = ctx.measure(progress, &gpu_variants, &p, ctx.timing_with(1, 1));
        let mut failures: Vec<String> = gpu_labels
            .iter()
            .zip(&reports)
            .filter(|(_, r)| matches!(r, Ok(r) if !r.passed()))
            .map(|(l, _)| l.clone())
            .collect();
        let cpu_cell = match (&cpu, cache.get(&key)) {
            (Err(_), _) => Cell::missing(format!("unknown variant `{cpu_name}`")),
            (_, Some(outcome)) => {
                if outcome.failed_check() {
                    failures.push(cpu_name.to_string());
                }
                outcome.cell(limiter)
            }
            (_, None) => Cell::missing("-"),
        };
        cpu_times.push(cache.get(&key).and_then(Outcome::time));
        let times: Vec<Option<f64>> = reports.iter().map(valid_time).collect();
        let mut row = vec![Cell::text(n.to_string()), cpu_cell];
        row.extend(reports.iter().map(time_cell));
        row.push(
            match (
                times.first().copied().flatten(),
                times.get(1).copied().flatten(),
            ) {
                (Some(basic), Some(blocked)) => Cell::times(basic / blocked, 1),
                _ => Cell::missing("-"),
            },
        );
        *passed &= failures.is_empty();
        row.push(checks_cell(&failures));
        let quoted = REPORT_SCALING.iter().find(|r| r.0 == n);
        row.push(quoted.map_or(Cell::missing("-"), |r| Cell::text(quote3(&r.1))));
        table.push(row);
        gpu_times.push(times);
    }

    let mut series = vec![Series {
        name: format!("{cpu_name} (CPU)"),
        points: sizes
            .iter()
            .zip(&cpu_times)
            .filter_map(|(&n, t)| Some((n as f64, (*t)?)))
            .collect(),
    }];
    for (i, l) in gpu_labels.iter().enumerate() {
        series.push(Series {
            name: if ctx.gpu {
                l.clone()
            } else {
                format!("{l} (emulator wall time)")
            },
            points: sizes
                .iter()
                .zip(&gpu_times)
                .filter_map(|(&n, ts)| Some((n as f64, ts.get(i).copied().flatten()?)))
                .collect(),
        });
    }
    let chart = Chart::Lines(LineChart {
        title: "Time vs size: CPU against GPU, f32".into(),
        x_label: "n (m = n = k)".into(),
        y_label: "ms".into(),
        x_powers_of_two: sizes.iter().all(|n| n.is_power_of_two()),
        y_log: true,
        series,
        threshold: None,
        legend: Corner::UpperLeft,
    });
    let finding = scaling_finding(ctx, sizes, cpu_name, &cpu_times, &gpu_labels, &gpu_times);
    let mut section = Section::new(table);
    section.chart = Some(chart);
    section.finding = finding;
    section.notes.push(format!(
        "GPU `basic` at block size {SCALING_TILE} and `blocked` at blockL {SCALING_TILE}, as in the \
         report's table; the CPU variant is {cpu_name} (the fastest of the CPU table at its largest \
         size unless `--scaling-cpu` names one), with the same time limit. {} The report timed \
         with clock() around each call; its CPU column is the one-thread baseline.",
        if ctx.gpu {
            "GPU times are CUDA-event medians."
        } else {
            "On the emulator the GPU columns are the emulation's CPU wall time, not GPU time."
        }
    ));
    section
}

fn scaling_finding(
    ctx: &Context,
    sizes: &[u32],
    cpu_name: &str,
    cpu_times: &[Option<f64>],
    gpu_labels: &[String],
    gpu_times: &[Vec<Option<f64>>],
) -> Option<String> {
    // The largest size where basic and blocked both have a time.
    let (at, n) = sizes.iter().enumerate().rev().find(|(i, _)| {
        gpu_times[*i].iter().take(2).all(Option::is_some) && gpu_times[*i].len() >= 2
    })?;
    let ts = &gpu_times[at];
    let (basic, blocked) = (ts[0]?, ts[1]?);
    let mut s = if ctx.gpu {
        format!(
            "At n = {n}, {} takes {blocked:.1} ms, {:.1}× faster than {} ({basic:.1} ms)",
            gpu_labels[1],
            basic / blocked,
            gpu_labels[0]
        )
    } else {
        format!(
            "On the emulator (CPU wall time, not GPU speed) at n = {n}, {} took {blocked:.1} ms and {} {basic:.1} ms",
            gpu_labels[1], gpu_labels[0]
        )
    };
    if let Some(Some(cublas)) = ts.get(2) {
        s += &format!(
            "; cuBLAS is {:.1}× faster than {}",
            blocked / cublas,
            gpu_labels[1]
        );
    }
    s += ".";
    // The largest size where the CPU ran.
    if let Some((i, cpu_ms)) = cpu_times
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, t)| Some((i, (*t)?)))
    {
        let n_cpu = sizes[i];
        match gpu_times[i].get(1).copied().flatten() {
            Some(b) if ctx.gpu => {
                s += &format!(
                    " The best CPU variant, {cpu_name}, ran up to n = {n_cpu}: {cpu_ms:.1} ms there, {:.1}× the time of {}.",
                    cpu_ms / b,
                    gpu_labels[1]
                )
            }
            _ => s += &format!(" The CPU variant {cpu_name} ran up to n = {n_cpu} ({cpu_ms:.1} ms)."),
        }
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_grow_as_n_cubed() {
        assert_eq!(estimate_ms(512, 250.0, 1024), 2000.0);
        assert_eq!(estimate_ms(1024, 100.0, 4096), 6400.0);
        assert_eq!(estimate_ms(64, 8.0, 64), 8.0);
    }

    #[test]
    fn the_limit_skips_what_the_estimate_puts_over_it() {
        // The report's baseline: 250 ms at 512, 4219 ms at 1024. With a 20 s limit, 2048
        // (est. 33.8 s) and then 4096 are skipped.
        let mut limiter = CpuLimiter::new(20.0);
        assert_eq!(
            limiter.plan("naive", 512),
            CpuPlan::Run,
            "the first size always runs"
        );
        limiter.measured("naive", 512, 250.0);
        assert_eq!(limiter.plan("naive", 1024), CpuPlan::Run);
        limiter.measured("naive", 1024, 4219.0);
        assert_eq!(
            limiter.plan("naive", 2048),
            CpuPlan::Skip {
                estimate_ms: 33752.0
            }
        );
        assert_eq!(
            limiter.plan("naive", 4096),
            CpuPlan::Skip {
                estimate_ms: 270016.0
            },
            "estimated from the skipped size's estimate"
        );
        assert_eq!(limiter.reason(270016.0), "skipped: est. 270 s > 20 s limit");
        // Other variants are independent.
        assert_eq!(limiter.plan("simd", 4096), CpuPlan::Run);
        // Exactly at the limit still runs.
        limiter.measured("simd", 1024, 2500.0);
        assert_eq!(limiter.plan("simd", 2048), CpuPlan::Run);
    }
}
