//! One variant over one parameter at one size: the shape shared by three of the report's
//! tables (cpu-blocked over blockL, GPU `basic` over block size, GPU `blocked` over blockL).
//! Written once, so that the three tables read alike: the same columns, the same speed-up
//! against the first value, the same quote of the report's figure for each value.
use crate::experiments::chart::{Chart, Corner, LineChart, Series};
use crate::experiments::context::{
    all_passed, check_cell, time_cell, valid_time, variant, Context,
};
use crate::experiments::page::Section;
use crate::experiments::progress::Progress;
use crate::experiments::table::{index_of_min, Cell, Table};
use anyhow::Result;
use gpu_gemm::problem::Init;
use gpu_gemm::registry::Variant;
use gpu_gemm::run::{self, Launch, Report, Timing};
use kernels_gpu::gemm::Dtype;

/// One parameter sweep of one variant at one size.
pub(super) struct Sweep<'a> {
    pub(super) id: &'a str,
    pub(super) title: String,
    /// What the parameter is called: "blockL", "block size".
    pub(super) param: &'a str,
    pub(super) variant: &'a str,
    pub(super) values: Vec<u32>,
    pub(super) n: u32,
    /// The report's (parameter, ms) figures.
    pub(super) report: &'a [(u32, f64)],
    pub(super) report_column: &'a str,
    pub(super) timing: Timing,
}

pub(super) fn sweep_section(
    ctx: &Context,
    progress: &Progress,
    sweep: &Sweep,
    passed: &mut bool,
) -> Section {
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
