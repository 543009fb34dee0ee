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
//!
//! The page is assembled here; each part's table lives with the code that fills it: the CPU
//! sizes table in `cpu.rs`, the three one-parameter sweeps (CPU blockL, GPU block size, GPU
//! blockL) in `sweep.rs`, the CPU-against-GPU table in `scaling.rs`. The time limit that keeps
//! the CPU parts finite is in `cpu_limit.rs`, and the report's figures that every table quotes
//! in `report_figures.rs`, apart from the code, so that they can be checked against the document.
mod cpu;
mod cpu_limit;
mod report_figures;
mod scaling;
mod sweep;

pub use cpu_limit::{estimate_ms, CpuLimiter, CpuPlan};

use super::context::{Common, Context};
use super::page::Page;
use super::progress::Progress;
use anyhow::Result;
use clap::ValueEnum;
use cpu::cpu_sizes_section;
use cpu_limit::{cpu_timing, Outcome};
use report_figures::{REPORT_CPU_BLOCKING, REPORT_GPU_BLOCKING, REPORT_GPU_THREADS};
use scaling::scaling_section;
use std::collections::HashMap;
use sweep::{sweep_section, Sweep};

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

fn powers_of_two(lo: u32, hi: u32) -> Vec<u32> {
    (lo..=hi).map(|e| 1u32 << e).collect()
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
