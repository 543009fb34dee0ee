//! Experiment 000: the tile-width sweep of the `000` lab report.
//!
//! The report multiplies two 2^12 × 2^12 f64 matrices filled by fixed formulas with a tiled
//! shared-memory kernel whose tile width is a template parameter, and sweeps the width 32, 16,
//! 8, 4, 2, 1 (one thread per element of C, so grid = n / width in each direction) to find the
//! best execution configuration. This runs the `tiled` variant (the same algorithm) at the same
//! widths on the same inputs ([`Init::Seed`]) and quotes the report's V100 times beside ours.
use super::chart::{Chart, Corner, LineChart, Series};
use super::context::{all_passed, check_cell, time_cell, valid_time, variant, Common, Context};
use super::page::{Page, Section};
use super::progress::Progress;
use super::table::{index_of_min, Cell, Table};
use anyhow::Result;
use gpu_gemm::problem::{Init, Problem};
use gpu_gemm::run::{self, Launch, Report, Timing};
use kernels_gpu::gemm::Dtype;

pub const ID: &str = "000-tile-sweep";

#[derive(clap::Args, Debug, Clone, Default)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
    /// m = n = k [default: 4096 (2^12, the document's size) on the GPU, 64 on the emulator]
    #[arg(long, value_parser = crate::args::positive_size)]
    pub size: Option<u32>,
}

/// The widths of the report's table, in its order.
pub const TILES: [u32; 6] = [32, 16, 8, 4, 2, 1];

/// The report's times in ms for those widths: 2^12 f64 on a Tesla V100-PCIe (CUDA 10.0), one
/// run each, from the table of `000_…txt`.
pub const V100_MS: [f64; 6] = [
    108.868576,
    125.305084,
    178.711777,
    615.897156,
    2492.207520,
    16997.095703,
];

pub fn run(ctx: &Context, args: &Args) -> Result<Page> {
    let n = args.size.unwrap_or(if ctx.gpu { 4096 } else { 64 });
    let p = ctx.square(n, Dtype::F64, Init::Seed);
    let tiled = variant("tiled")?;
    let variants: Vec<_> = TILES.iter().map(|&t| (tiled, Some(t))).collect();
    let progress = Progress::new("000 tile sweep", variants.len());
    // Tile 1 takes seconds per run on a GPU: one warm-up, at most 5 timed runs (3 when slow).
    let timing = ctx.timing_with(1, 5);
    let reports = ctx.measure(&progress, &variants, &p, timing);
    progress.finish();
    page(ctx, &p, timing, &reports)
}

/// The page of a sweep: `reports` holds one run per width of [`TILES`], in that order.
fn page(ctx: &Context, p: &Problem, timing: Timing, reports: &[Result<Report>]) -> Result<Page> {
    let n = p.shape.m;
    let tiled = variant("tiled")?;
    let time_col = ctx.time_column();
    let speedup_col = "speed-up vs tile 1";
    let mut table = Table::new("tile-sweep", &format!("Tile width sweep, {n}³ f64"))
        .text_column("tile")
        .text_column("grid")
        .text_column("block")
        .number_column(time_col)
        .number_column("GFLOP/s")
        .number_column(speedup_col)
        .text_column("check")
        .number_column("000 report ms (V100, 4096²)");
    let tile1_ms = valid_time(&reports[TILES.len() - 1]);
    for ((&tile, report), v100) in TILES.iter().zip(reports).zip(V100_MS) {
        // The launch configuration, as the report's table lists it: grid and block (x, y).
        let (grid, block) = match run::plan(tiled, Some(tile), p, None)? {
            Launch::Kernel { geometry: g, .. } => (
                format!("({},{})", g.grid.0, g.grid.1),
                format!("({},{})", g.block.0, g.block.1),
            ),
            _ => unreachable!("`tiled` is a kernel"),
        };
        let speedup = match (tile1_ms, valid_time(report)) {
            (Some(t1), Some(t)) => Cell::times(t1 / t, 1),
            _ => Cell::missing("-"),
        };
        table.push(vec![
            Cell::text(tile.to_string()),
            Cell::text(grid),
            Cell::text(block),
            time_cell(report),
            ctx.rate_cell(report, 1e9, 1),
            speedup,
            check_cell(report),
            Cell::fixed(v100, 1),
        ]);
    }
    let best = index_of_min(reports.iter().map(valid_time));
    table.mark_best(best);

    let headline = finding(ctx, &table, best, tile1_ms);
    let mut series = vec![Series {
        name: if ctx.gpu {
            "this run".into()
        } else {
            "this run (emulator wall time)".into()
        },
        points: TILES
            .iter()
            .zip(reports)
            .filter_map(|(&t, r)| Some((t as f64, valid_time(r)?)))
            .collect(),
    }];
    if ctx.gpu {
        series.push(Series {
            name: "000 report (V100, 4096²)".into(),
            points: TILES.iter().map(|&t| t as f64).zip(V100_MS).collect(),
        });
    }
    let chart = Chart::Lines(LineChart {
        title: format!("Time vs tile width, {n}³ f64"),
        x_label: "tile width (block = width × width threads)".into(),
        y_label: time_col.into(),
        x_powers_of_two: true,
        y_log: true,
        series,
        threshold: None,
        legend: Corner::UpperRight,
    });
    let mut section = Section::new(table);
    section.chart = Some(chart);
    section.notes.push(
        "The kernel is `tiled` (`kernels-gpu/src/variants/tiled.rs`): one thread per element of C, \
         A and B staged through shared tiles padded by one column, as in the report. ★ marks the \
         fastest width whose check passed. The last column quotes the report (one timed run per \
         width on a Tesla V100-PCIe, CUDA 10.0)."
            .into(),
    );
    let passed = all_passed(reports);
    Ok(Page {
        id: ID,
        title: "000 · Tile-width sweep".into(),
        intro: "The `000` lab report multiplies two 2^12 × 2^12 double matrices with fixed inputs \
                (a(i,j) = (i − 0.1j + 1)/(i + j + 1), b(i,j) = (j − 0.2i + 1)(i + j + 1)/(i² + j² + 1)) \
                using a tiled shared-memory kernel, and sweeps the tile width to find the best grid \
                and block. This page reruns that sweep."
            .into(),
        headline,
        metadata: ctx.metadata(
            timing,
            vec![
                ("size", format!("m = n = k = {n}")),
                ("element type", "f64".into()),
                ("inputs", "the 000 formulas (`--init seed`), C = A·B".into()),
            ],
            passed,
        ),
        sections: vec![section],
        passed,
    })
}

/// "Best: tile 32 (grid …, block …), 12.3 ms, 131× faster than tile 1 …", from the table.
fn finding(ctx: &Context, table: &Table, best: Option<usize>, tile1_ms: Option<f64>) -> String {
    let Some(b) = best else {
        return "No width produced a checked time.".into();
    };
    let row = &table.rows[b];
    let time_cell = &row[table.column_index(ctx.time_column())];
    let time = time_cell.shown();
    let faster = match (tile1_ms, time_cell.value()) {
        (Some(t1), Some(t)) => format!(", {:.1}× faster than tile 1", t1 / t),
        _ => String::new(),
    };
    let (tile, grid, block) = (row[0].shown(), row[1].shown(), row[2].shown());
    let doc_best = index_of_min(V100_MS.map(Some)).expect("the report's times are finite");
    let doc = format!(
        "the 000 report on a V100: tile {}, {:.0}× faster than tile 1",
        TILES[doc_best],
        V100_MS[TILES.len() - 1] / V100_MS[doc_best]
    );
    if ctx.gpu {
        format!("Best: tile {tile} (grid {grid}, block {block}), {time} ms{faster} ({doc}).")
    } else {
        format!(
            "On the emulator (CPU wall time, says nothing about a GPU) the fastest width was tile \
             {tile} (grid {grid}, block {block}), {time} ms{faster}; on a GPU, {doc}."
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::context::testing::{gpu_context, report};

    #[test]
    fn best_width_is_the_fastest_that_passed_and_the_finding_says_so() {
        let ctx = gpu_context();
        let p = ctx.square(4096, Dtype::F64, Init::Seed);
        // Tile 16 is fastest but fails its check: tile 32 is the best.
        let ms = [20.0, 10.0, 45.0, 150.0, 600.0, 5000.0];
        let reports: Vec<_> = TILES
            .iter()
            .zip(ms)
            .map(|(t, ms)| report(&format!("tiled:{t}"), &p, ms, *t != 16))
            .collect();
        let page = page(&ctx, &p, ctx.timing(), &reports).unwrap();
        let table = &page.sections[0].table;
        assert_eq!(table.best, Some(Some(0)));
        assert_eq!(
            table.rows[0][1].shown(),
            "(128,128)",
            "the report's grid for tile 32"
        );
        assert_eq!(table.rows[0][5].shown(), "250.0×");
        assert!(!page.passed);
        assert_eq!(
            page.headline,
            "Best: tile 32 (grid (128,128), block (32,32)), 20.000 ms, 250.0× faster than tile 1 \
             (the 000 report on a V100: tile 32, 156× faster than tile 1)."
        );
        // GFLOP/s on a GPU: 2·4096³ flop in 20 ms.
        assert_eq!(table.rows[0][4].shown(), "6871.9");
    }
}
