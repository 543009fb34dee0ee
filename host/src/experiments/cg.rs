//! Experiment 004: the cooperative-groups kernels of the `004` notes as a percentage of cuBLAS.
//!
//! The notes profile three single-precision kernels with Nsight Compute: warp shuffles with the
//! output tile in shared memory (7% of cuBLAS), the outputs moved to registers (20%), and a
//! 2×2 register tile per thread with the write staged through shared memory (22%). This runs
//! `cg-shuffle`, `cg-regs` and `cg-tile2x2` against cuBLAS and quotes the notes beside them.
use super::chart::{BarChart, Chart};
use super::context::{all_passed, check_cell, time_cell, valid_time, variant, Common, Context};
use super::page::{Page, Section};
use super::progress::Progress;
use super::table::{index_of_min, Cell, Table};
use anyhow::Result;
use gpu_gemm::problem::Init;
use gpu_gemm::registry::{CublasMath, Variant};
use gpu_gemm::run::{Report, Timing};
use kernels_gpu::gemm::Dtype;

pub const ID: &str = "004-cg";

#[derive(clap::Args, Debug, Clone, Default)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
    /// m = n = k [default: 4096 on the GPU, 64 on the emulator]
    #[arg(long, value_parser = crate::args::positive_size)]
    pub size: Option<u32>,
}

/// Our variant, the notes' kernel, and the percentage of cuBLAS the notes report for it.
/// (The notes give neither their GPU nor their matrix size.)
pub const REPORTED: [(&str, &str, f64); 3] = [
    ("cg-shuffle", "sgemm_naive", 7.0),
    ("cg-regs", "sgemm_shared", 20.0),
    ("cg-tile2x2", "sgemm_thread_tile", 22.0),
];

pub fn run(ctx: &Context, args: &Args) -> Result<Page> {
    let n = args.size.unwrap_or(if ctx.gpu { 4096 } else { 64 });
    let p = ctx.square(n, Dtype::F32, Init::Random);
    let mut variants = Vec::new();
    for (name, _, _) in REPORTED {
        variants.push((variant(name)?, None));
    }
    if ctx.gpu {
        variants.push((Variant::Cublas(CublasMath::Default), None));
    }
    let progress = Progress::new("004 cg", variants.len());
    let timing = ctx.timing();
    let reports = ctx.measure(&progress, &variants, &p, timing);
    progress.finish();
    Ok(page(ctx, n, timing, &variants, &reports))
}

/// The page: `reports` holds the runs of `variants`, the [`REPORTED`] kernels in their order,
/// then cuBLAS when it ran.
fn page(
    ctx: &Context,
    n: u32,
    timing: Timing,
    variants: &[(Variant, Option<u32>)],
    reports: &[Result<Report>],
) -> Page {
    let passed = all_passed(reports);
    let cublas_ms = reports.get(REPORTED.len()).and_then(valid_time);

    let percent_col = "% of cuBLAS";
    let mut table = Table::new("cg", &format!("Cooperative-groups kernels at {n}³ f32"))
        .text_column("variant")
        .text_column("004 kernel")
        .number_column(ctx.time_column())
        .number_column("TFLOP/s")
        .number_column(percent_col)
        .number_column("004 notes: % of cuBLAS")
        .text_column("check");
    let percent = |i: usize| Some(100.0 * cublas_ms? / valid_time(&reports[i])?);
    for (i, (&(v, _), report)) in variants.iter().zip(reports).enumerate() {
        let reported = REPORTED.get(i);
        table.push(vec![
            Cell::text(v.name()),
            Cell::text(reported.map_or("-", |r| r.1)),
            time_cell(report),
            ctx.rate_cell(report, 1e12, 2),
            match percent(i) {
                Some(pc) => Cell::fixed(pc, 1),
                None if !ctx.gpu => Cell::missing("n/a (emulator)"),
                None => Cell::missing("-"),
            },
            reported.map_or(Cell::missing("-"), |r| Cell::fixed(r.2, 0)),
            check_cell(report),
        ]);
    }
    let best = index_of_min((0..REPORTED.len()).map(|i| valid_time(&reports[i])));
    table.mark_best(best);

    let headline = match best {
        None => "No cooperative-groups kernel produced a checked time.".to_string(),
        Some(b) => {
            let (name, _, doc) = REPORTED[b];
            let others: Vec<String> = (0..REPORTED.len())
                .filter_map(|i| Some(format!("{} {:.1}%", REPORTED[i].0, percent(i)?)))
                .collect();
            match percent(b) {
                Some(pc) => format!(
                    "The best, {name}, reaches {pc:.1}% of cuBLAS at {n}³ f32 (the 004 notes: {doc:.0}%); \
                     all three: {} (the notes: 7%, 20%, 22%).",
                    others.join(", ")
                ),
                None => format!(
                    "On the emulator (CPU wall time, not GPU speed) the fastest was {name}; the \
                     percentages of cuBLAS need a GPU (the 004 notes: 7%, 20%, 22%)."
                ),
            }
        }
    };

    let categories: Vec<String> = REPORTED.iter().map(|r| r.0.to_string()).collect();
    let chart = if ctx.gpu {
        BarChart {
            title: format!("Percentage of cuBLAS, {n}³ f32"),
            value_label: "% of cuBLAS".into(),
            categories,
            groups: vec![
                (
                    "this run".into(),
                    (0..REPORTED.len()).map(percent).collect(),
                ),
                (
                    "004 notes".into(),
                    REPORTED.iter().map(|r| Some(r.2)).collect(),
                ),
            ],
            reference: Some((100.0, "cuBLAS".into())),
        }
    } else {
        BarChart {
            title: format!("Emulator wall time at {n}³ f32 (not GPU speed)"),
            value_label: "emulator wall ms".into(),
            categories,
            groups: vec![(
                "this run".into(),
                (0..REPORTED.len())
                    .map(|i| valid_time(&reports[i]))
                    .collect(),
            )],
            reference: None,
        }
    };
    let mut section = Section::new(table);
    section.chart = Some(Chart::Bars(chart));
    section.finding = Some(headline.clone());
    section.notes.push(
        "\"% of cuBLAS\" is 100 × cuBLAS's time / the kernel's time, both on this run's inputs. \
         The column \"004 notes\" quotes `004_…txt` (sgemm_naive 7%, sgemm_shared 20%, \
         sgemm_thread_tile 22% of cuBLAS, measured with Nsight Compute); the notes name neither \
         their GPU nor their matrix size."
            .into(),
    );
    Page {
        id: ID,
        title: "004 · Cooperative-groups kernels against cuBLAS".into(),
        intro: "The `004` notes write a single-precision GEMM with cooperative groups and warp \
                shuffles, then move the outputs to registers, then give each thread a 2×2 tile, \
                profiling each step against cuBLAS. This page measures the three kernels on the \
                same inputs as cuBLAS."
            .into(),
        headline,
        metadata: ctx.metadata(
            timing,
            vec![
                ("size", format!("m = n = k = {n}")),
                ("element type", "f32".into()),
                (
                    "inputs",
                    format!("uniform in [-1, 1), seed {}; C = A·B", ctx.seed),
                ),
            ],
            passed,
        ),
        sections: vec![section],
        passed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::context::testing::{gpu_context, report};

    #[test]
    fn percentages_of_cublas_and_the_quoted_figures() {
        let ctx = gpu_context();
        let p = ctx.square(4096, Dtype::F32, Init::Random);
        let mut variants: Vec<_> = REPORTED
            .iter()
            .map(|r| (variant(r.0).unwrap(), None))
            .collect();
        variants.push((Variant::Cublas(CublasMath::Default), None));
        let reports = vec![
            report("cg-shuffle", &p, 26.0, true),
            report("cg-regs", &p, 8.0, true),
            report("cg-tile2x2", &p, 10.0, true),
            report("cublas", &p, 2.6, true),
        ];
        let page = page(&ctx, 4096, ctx.timing(), &variants, &reports);
        let t = &page.sections[0].table;
        let percent: Vec<String> = t.rows.iter().map(|r| r[4].shown()).collect();
        assert_eq!(percent, ["10.0", "32.5", "26.0", "100.0"]);
        assert_eq!(t.best, Some(Some(1)), "cuBLAS is not a candidate");
        assert_eq!(
            page.headline,
            "The best, cg-regs, reaches 32.5% of cuBLAS at 4096³ f32 (the 004 notes: 20%); all \
             three: cg-shuffle 10.0%, cg-regs 32.5%, cg-tile2x2 26.0% (the notes: 7%, 20%, 22%)."
        );
    }
}
