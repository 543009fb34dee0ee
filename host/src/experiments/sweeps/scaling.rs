//! The scaling table (the report's 2.3.1): the best CPU variant against GPU `basic`, `blocked`
//! and cuBLAS over sizes, the table where the gap between CPU and GPU shows. Its CPU column
//! comes from the CPU sizes table's cache where that ran, and is otherwise run here under the
//! same time limit. `scaling_finding` writes the table's finding, which, this being the last part,
//! heads the page whenever it has one.
use super::cpu_limit::{checks_cell, cpu_timing, CpuLimiter, CpuPlan, Outcome};
use super::report_figures::{quote3, REPORT_SCALING};
use crate::experiments::chart::{Chart, Corner, LineChart, Series};
use crate::experiments::context::{label, time_cell, valid_time, variant, Context};
use crate::experiments::page::Section;
use crate::experiments::progress::Progress;
use crate::experiments::table::{Cell, Table};
use gpu_gemm::problem::Init;
use gpu_gemm::registry::{CublasMath, Variant};
use kernels_gpu::gemm::Dtype;
use std::collections::HashMap;

/// The report's block size and blockL in its scaling table (1 << 5).
const SCALING_TILE: u32 = 32;

/// The best CPU variant against GPU basic, blocked (block size = blockL = 32) and cuBLAS.
pub(super) fn scaling_section(
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
