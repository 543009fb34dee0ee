//! Experiment 001: the kernel progression of the `001` report against cuBLAS.
//!
//! The report takes `C = αAB + βC` (column-major, 2^13 f32, V100) from one thread per element
//! (`gemm_32x32_v0`) to a 128×128 double-buffered tile (`gemm_128x128`), beside cuBLAS, three
//! tutorial kernels and fynv's `g_fgemm`. This runs every registered kernel whose source is
//! 001, plus every kernel that comes from none of the documents (this project's own, newer
//! kernels show up here without a change), and cuBLAS on the same buffers.
use super::chart::{BarChart, Chart};
use super::context::{all_passed, check_cell, label, time_cell, valid_time, Common, Context};
use super::page::{Page, Section};
use super::progress::Progress;
use super::table::{index_of_min, Cell, Table};
use crate::args::ExperimentDtypeArg;
use anyhow::Result;
use gpu_gemm::problem::Init;
use gpu_gemm::registry::{self, CublasMath, Variant};
use gpu_gemm::run::Report;
use kernels_gpu::gemm::Dtype;

pub const ID: &str = "001-progression";

#[derive(clap::Args, Debug, Clone, Default)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
    /// m = n = k [default: 4096 on the GPU (the report used 8192), 64 on the emulator]
    #[arg(long, value_parser = crate::args::positive_size)]
    pub size: Option<u32>,
    /// Element type [default: f32, as in the report]
    #[arg(long, value_enum)]
    pub dtype: Option<ExperimentDtypeArg>,
    /// Run f32 and f64 (a table each)
    #[arg(long)]
    pub both_dtypes: bool,
}

/// The documents a registry `source` can start with.
const DOCUMENTS: [&str; 5] = ["000", "001", "002", "003", "004"];

/// The report's kernels in its order; any other kernel of the table follows in registry order.
const REPORT_ORDER: [&str; 12] = [
    "v0", "v1", "v2", "v3", "v4", "v5", "gemm64", "gemm128", "fynv", "alc1", "alc2", "alc3",
];

/// The report's times in ms at 2^13 f32 on a Tesla V100-SXM2 (CUDA 11.2), the minimum of its
/// runs, from the log in `001_…txt`; our names for its kernels.
pub const V100_MS: [(&str, f64); 13] = [
    ("cublas", 71.745537),
    ("v0", 4670.738281),
    ("v1", 512.018433),
    ("v2", 458.981384),
    ("v3", 1565.510620),
    ("v4", 324.259827),
    ("v5", 203.590652),
    ("gemm64", 80.806915),
    ("gemm128", 76.198914),
    ("fynv", 77.543427),
    ("alc1", 2114.584473),
    ("alc2", 611.853333),
    ("alc3", 2115.368896),
];

/// Whether a kernel belongs to the progression: its source is the 001 report, or none of the
/// documents (a kernel of this project's own).
pub fn in_progression(source: &str) -> bool {
    source.starts_with("001") || !DOCUMENTS.iter().any(|d| source.starts_with(d))
}

/// The progression's kernels: the report's in its order, then the others in registry order.
pub fn progression_variants() -> Vec<Variant> {
    let mut kernels: Vec<Variant> = registry::all()
        .into_iter()
        .filter(|v| matches!(v, Variant::Kernel(k) if in_progression(k.source)))
        .collect();
    let rank = |v: &Variant| {
        REPORT_ORDER
            .iter()
            .position(|&n| n == v.name())
            .unwrap_or(REPORT_ORDER.len())
    };
    kernels.sort_by_key(rank); // stable: the others keep their registry order
    kernels
}

/// The report's ratio to cuBLAS for one of our names (cuBLAS time / kernel time).
fn v100_vs_cublas(name: &str) -> Option<f64> {
    let ms = |n: &str| V100_MS.iter().find(|(k, _)| *k == n).map(|(_, t)| *t);
    Some(ms("cublas")? / ms(name)?)
}

pub fn run(ctx: &Context, args: &Args) -> Result<Page> {
    let n = args.size.unwrap_or(if ctx.gpu { 4096 } else { 64 });
    let dtypes = match (args.both_dtypes, args.dtype) {
        (true, _) => vec![Dtype::F32, Dtype::F64],
        (false, d) => vec![d.map_or(Dtype::F32, ExperimentDtypeArg::dtype)],
    };
    let mut variants: Vec<(Variant, Option<u32>)> = progression_variants()
        .into_iter()
        .map(|v| (v, None))
        .collect();
    if ctx.gpu {
        // The CUDA cores' yardstick, and the tensor cores' for the TF32 chapter.
        variants.push((Variant::Cublas(CublasMath::Default), None));
        variants.push((Variant::Cublas(CublasMath::Tf32), None));
    }
    // Each dtype's table holds the kernels that have that dtype (the TF32 ones are f32 only,
    // DMMA f64 only).
    let of_dtype = |dtype: Dtype| -> Vec<(Variant, Option<u32>)> {
        variants
            .iter()
            .copied()
            .filter(|(v, _)| v.dtypes().contains(&dtype))
            .collect()
    };
    let timing = ctx.timing();
    let runs: usize = dtypes.iter().map(|&d| of_dtype(d).len()).sum();
    let progress = Progress::new("001 progression", runs);
    let mut sections = Vec::new();
    let mut findings = Vec::new();
    let mut passed = true;
    for &dtype in &dtypes {
        let p = ctx.square(n, dtype, Init::Random);
        let variants = of_dtype(dtype);
        let reports = ctx.measure(&progress, &variants, &p, timing);
        passed &= all_passed(&reports);
        let section = dtype_section(ctx, n, dtype, &variants, &reports);
        findings.extend(section.finding.clone());
        sections.push(section);
    }
    progress.finish();
    let names: Vec<String> = variants.iter().map(|&(v, t)| label(v, t)).collect();
    Ok(Page {
        id: ID,
        title: "001 · The kernel progression against cuBLAS".into(),
        intro:
            "The `001` report builds a single-precision GEMM (column-major, `C = αAB + βC`) step \
                by step, from one thread per element to 128×128 tiles with 8×8 outputs per thread \
                and double buffering, and compares each step with cuBLAS. This page runs every \
                kernel of that progression, plus any newer kernel of this project, against cuBLAS \
                on the same inputs."
                .into(),
        headline: findings.join(" "),
        metadata: ctx.metadata(
            timing,
            vec![
                ("size", format!("m = n = k = {n}")),
                (
                    "element types",
                    dtypes
                        .iter()
                        .map(|d| d.name())
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
                (
                    "inputs",
                    format!("uniform in [-1, 1), seed {}; C = A·B", ctx.seed),
                ),
                ("variants", names.join(", ")),
            ],
            passed,
        ),
        sections,
        passed,
    })
}

fn dtype_section(
    ctx: &Context,
    n: u32,
    dtype: Dtype,
    variants: &[(Variant, Option<u32>)],
    reports: &[Result<Report>],
) -> Section {
    let quote_report = dtype == Dtype::F32;
    let report_col = "001 report vs cuBLAS (V100, 8192³ f32)";
    let mut table = Table::new(
        &format!("progression-{}", dtype.name()),
        &format!("The progression at {n}³ {}", dtype.name()),
    )
    .text_column("variant")
    .text_column("source")
    .number_column(ctx.time_column())
    .number_column("TFLOP/s")
    .number_column("vs cuBLAS")
    .text_column("check");
    if quote_report {
        table = table.number_column(report_col);
    }
    let cublas_ms = variants
        .iter()
        .zip(reports)
        .find(|((v, _), _)| matches!(v, Variant::Cublas(CublasMath::Default)))
        .and_then(|(_, r)| valid_time(r));
    // As the pipeline labels a run: `best:1` for a parameterised kernel at its default.
    let shown: Vec<String> = variants
        .iter()
        .zip(reports)
        .map(|((v, _), r)| {
            r.as_ref()
                .map_or_else(|_| v.name().into(), |r| r.variant.clone())
        })
        .collect();
    for ((&(variant, _), report), shown) in variants.iter().zip(reports).zip(&shown) {
        let source = match variant {
            Variant::Kernel(k) => k.source.to_string(),
            _ => "the yardstick".into(),
        };
        let ratio = match (cublas_ms, valid_time(report)) {
            (Some(c), Some(t)) => Cell::fixed(c / t, 3),
            _ if !ctx.gpu => Cell::missing("n/a (emulator)"),
            _ => Cell::missing("-"),
        };
        let mut row = vec![
            Cell::text(shown),
            Cell::text(source),
            time_cell(report),
            ctx.rate_cell(report, 1e12, 2),
            ratio,
            check_cell(report),
        ];
        if quote_report {
            row.push(
                v100_vs_cublas(variant.name()).map_or(Cell::missing("-"), |r| Cell::fixed(r, 3)),
            );
        }
        table.push(row);
    }
    // The best kernel: cuBLAS is the yardstick, not a candidate.
    let kernel_times = variants
        .iter()
        .zip(reports)
        .map(|((v, _), r)| valid_time(r).filter(|_| matches!(v, Variant::Kernel(_))));
    let best = index_of_min(kernel_times);
    table.mark_best(best);

    let finding = best.map(|b| {
        let name = shown[b].as_str();
        let t = valid_time(&reports[b]).expect("the best has a time");
        let slowest = (0..variants.len())
            .filter(|&i| matches!(variants[i].0, Variant::Kernel(_)))
            .filter_map(|i| Some((shown[i].as_str(), valid_time(&reports[i])?)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let spread = match slowest {
            Some((slow, ts)) if slow != name => {
                format!("; it is {:.0}× faster than the slowest, {slow}", ts / t)
            }
            _ => String::new(),
        };
        let d = dtype.name();
        match (ctx.gpu, cublas_ms) {
            (true, Some(c)) => {
                let report = match v100_vs_cublas(variants[b].0.name()) {
                    Some(r) if quote_report => format!(" (the 001 report's {name} on a V100: {r:.2}×)"),
                    _ => String::new(),
                };
                format!(
                    "{d}: the fastest kernel is {name} at {:.2} TFLOP/s, {:.3}× cuBLAS ({:.2} TFLOP/s){report}{spread}.",
                    tflops(n, t),
                    c / t,
                    tflops(n, c)
                )
            }
            (true, None) => format!("{d}: the fastest kernel is {name} at {:.2} TFLOP/s (cuBLAS did not run){spread}.", tflops(n, t)),
            (false, _) => format!(
                "{d} on the emulator (CPU wall time, not GPU speed): the fastest was {name}, {t:.3} ms{spread}; cuBLAS needs a GPU."
            ),
        }
    });

    // The bars: the kernels (cuBLAS is the dashed line).
    let kernels: Vec<(&str, &Result<Report>)> = (0..variants.len())
        .filter(|&i| matches!(variants[i].0, Variant::Kernel(_)))
        .map(|i| (shown[i].as_str(), &reports[i]))
        .collect();
    let value = |r: &Result<Report>| {
        let t = valid_time(r)?;
        Some(if ctx.gpu { tflops(n, t) } else { t })
    };
    let chart = Chart::Bars(BarChart {
        title: if ctx.gpu {
            format!("TFLOP/s at {n}³ {}", dtype.name())
        } else {
            format!(
                "Emulator wall time at {n}³ {} (not GPU speed)",
                dtype.name()
            )
        },
        value_label: if ctx.gpu {
            "TFLOP/s"
        } else {
            "emulator wall ms"
        }
        .into(),
        categories: kernels.iter().map(|(name, _)| name.to_string()).collect(),
        groups: vec![(
            dtype.name().into(),
            kernels.iter().map(|(_, r)| value(r)).collect(),
        )],
        reference: cublas_ms.map(|c| (tflops(n, c), format!("cuBLAS {:.1} TFLOP/s", tflops(n, c)))),
    });
    let mut section = Section::new(table);
    section.chart = Some(chart);
    section.finding = finding;
    section.notes.push(format!(
        "★ marks the fastest kernel whose check passed (cuBLAS is the yardstick, not a candidate). \
         \"vs cuBLAS\" is cuBLAS's time divided by the kernel's. {}",
        if quote_report {
            "The last column quotes the 001 report: the same ratio from its log (2^13 f32 on a \
             Tesla V100-SXM2, minimum of its runs)."
        } else {
            ""
        }
    ));
    section
}

/// TFLOP/s of an n³ product done in `ms`.
fn tflops(n: u32, ms: f64) -> f64 {
    gpu_gemm::run::tflops(2.0 * (n as f64).powi(3), ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progression_is_001_and_newer_kernels_in_report_order() {
        assert!(in_progression("001 gemm_32x32_v4, 000 (tile 32)"));
        assert!(in_progression("this project: a new 256x128 kernel"));
        assert!(!in_progression("000 MatMatMul<BLOCK_SIZE>"));
        assert!(!in_progression("004 sgemm_naive"));
        let names: Vec<&str> = progression_variants().iter().map(|v| v.name()).collect();
        assert_eq!(&names[..REPORT_ORDER.len()], REPORT_ORDER);
        assert!(!names.contains(&"tiled") && !names.contains(&"naive"));
    }

    #[test]
    fn the_finding_compares_the_fastest_kernel_with_cublas_and_the_report() {
        use crate::experiments::context::testing::{gpu_context, report};
        let ctx = gpu_context();
        let p = ctx.square(4096, Dtype::F32, Init::Random);
        let names = ["v0", "v4", "gemm128", "cublas"];
        let variants: Vec<_> = names
            .iter()
            .map(|n| (super::super::variant(n).unwrap(), None))
            .collect();
        let ms = [274.0, 19.6, 2.88, 2.68];
        let reports: Vec<_> = names
            .iter()
            .zip(ms)
            .map(|(n, ms)| report(n, &p, ms, true))
            .collect();
        let section = dtype_section(&ctx, 4096, Dtype::F32, &variants, &reports);
        assert_eq!(section.table.best, Some(Some(2)), "gemm128, not cuBLAS");
        let ratio = section.table.rows[2][4].shown();
        assert_eq!(ratio, "0.931");
        assert_eq!(
            section.finding.unwrap(),
            "f32: the fastest kernel is gemm128 at 47.72 TFLOP/s, 0.931× cuBLAS (51.28 TFLOP/s) \
             (the 001 report's gemm128 on a V100: 0.94×); it is 95× faster than the slowest, v0."
        );
    }

    #[test]
    fn report_ratios_come_from_the_quoted_times() {
        let r = v100_vs_cublas("gemm128").unwrap();
        assert!((r - 71.745537 / 76.198914).abs() < 1e-12);
        assert_eq!(v100_vs_cublas("cublas"), Some(1.0));
        assert_eq!(v100_vs_cublas("not-in-the-report"), None);
    }
}
