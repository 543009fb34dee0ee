//! The CPU sizes table (the report's 1.3.1): every CPU variant over sizes, under the time
//! limit. It also fills the cache of CPU results, so that the scaling table reuses a run rather
//! than repeat it, and names the fastest variant, the one the scaling table puts against the GPU.
use super::cpu_limit::{checks_cell, cpu_timing, CpuLimiter, CpuPlan, Outcome};
use super::report_figures::{quote3, REPORT_CPU_SIZES};
use crate::experiments::chart::{compact, Chart, Corner, LineChart, Series};
use crate::experiments::context::{variant, Context};
use crate::experiments::page::Section;
use crate::experiments::progress::Progress;
use crate::experiments::table::{index_of_min, Cell, Table};
use anyhow::Result;
use gpu_gemm::problem::Init;
use gpu_gemm::registry::Variant;
use kernels_gpu::gemm::Dtype;
use std::collections::HashMap;

/// Runs CPU variants over sizes with the time limit; fills `cache`. Returns the section and
/// the fastest variant at the largest size that has a time; clears `passed` on a failed check.
pub(super) fn cpu_sizes_section(
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
