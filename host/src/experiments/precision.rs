//! Experiment 002: the precision study of the `002` tutorial.
//!
//! The tutorial notes that a float dot product of length n loses digits as the running sum
//! grows, so that the naive kernel's relative error ends above its target of 1e-6, and that
//! Kahan's compensated summation brings it back under. This measures the relative error of
//! each variant's C against the f64 reference over a range of sizes, and reports for each
//! variant the first size where the relative Frobenius error exceeds 1e-6.
use super::chart::{Chart, Corner, LineChart, Series};
use super::context::{all_passed, error_cell, variant, Common, Context};
use super::page::{Page, Section};
use super::progress::Progress;
use super::table::{Cell, Table};
use crate::args::ExperimentDtypeArg;
use anyhow::Result;
use gpu_gemm::problem::Init;
use gpu_gemm::run::{Report, Timing};
use gpu_gemm::verify::FULL_REFERENCE_FLOPS;
use kernels_gpu::gemm::Dtype;

pub const ID: &str = "002-precision";

/// The tutorial's target for the relative error.
pub const THRESHOLD: f64 = 1e-6;

/// The 002 variants (plain and compensated), fast kernels of 001 for comparison, and the
/// tensor cores' arithmetics: TF32 rounded (`tc-tf32-basic`) and truncated (`tc-tf32`),
/// 3xTF32 (`mma.sync` and `wgmma`, whose accumulation differs), and cuBLAS in both modes.
pub const DEFAULT_VARIANTS: [&str; 14] = [
    "naive",
    "kahan",
    "row-shared",
    "blocked-kahan",
    "v4",
    "v5",
    "gemm128",
    "tc-tf32-basic",
    "tc-tf32",
    "tc-3xtf32",
    "wgmma-tf32",
    "wgmma-3xtf32",
    "cublas",
    "cublas-tf32",
];

#[derive(clap::Args, Debug, Clone, Default)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
    /// Sizes n (m = n = k), comma-separated [default: 256,512,…,8192 on the GPU, 16,32,64,128 on the emulator]
    #[arg(long, value_delimiter = ',', value_parser = crate::args::positive_size)]
    pub sizes: Option<Vec<u32>>,
    /// Variants, comma-separated [default: naive,kahan,row-shared,blocked-kahan,v4,v5,gemm128,tc-tf32-basic,tc-tf32,tc-3xtf32,wgmma-tf32,wgmma-3xtf32,cublas,cublas-tf32; cuBLAS only on a GPU, wgmma only on an H100/H200 or the emulator]
    #[arg(long, value_delimiter = ',')]
    pub variants: Option<Vec<String>>,
    /// Element type [default: f32, as in the tutorial]
    #[arg(long, value_enum)]
    pub dtype: Option<ExperimentDtypeArg>,
}

/// The first size whose error is above `threshold`, from (size, error) pairs in size order.
pub fn first_exceeding(errors: &[(u32, f64)], threshold: f64) -> Option<u32> {
    errors.iter().find(|(_, e)| *e > threshold).map(|(n, _)| *n)
}

pub fn run(ctx: &Context, args: &Args) -> Result<Page> {
    let sizes = args.sizes.clone().unwrap_or_else(|| {
        let (lo, hi) = if ctx.gpu { (8, 13) } else { (4, 7) };
        (lo..=hi).map(|e| 1u32 << e).collect()
    });
    let dtype = args.dtype.map_or(Dtype::F32, ExperimentDtypeArg::dtype);
    let names: Vec<String> = args
        .variants
        .clone()
        .unwrap_or_else(|| DEFAULT_VARIANTS.iter().map(|s| s.to_string()).collect());
    let mut variants = Vec::new();
    for name in &names {
        let v = variant(name)?;
        // cuBLAS needs a GPU; on the emulator it is left out (and the page says so). A variant
        // without the dtype is left out too.
        if (ctx.gpu || !v.is_cublas()) && v.dtypes().contains(&dtype) {
            variants.push((v, None));
        }
    }
    // Only the error matters here: one timed run (the pipeline always times), then the check.
    let timing = Timing::CHECK_ONCE;
    let progress = Progress::new("002 precision", variants.len() * sizes.len());
    // errors[variant][size]: the report of that run.
    let mut by_variant: Vec<Vec<Result<Report>>> = variants.iter().map(|_| Vec::new()).collect();
    for &n in &sizes {
        let p = ctx.square(n, dtype, Init::Random);
        for (i, r) in ctx
            .measure(&progress, &variants, &p, timing)
            .into_iter()
            .enumerate()
        {
            by_variant[i].push(r);
        }
    }
    progress.finish();
    let passed = by_variant.iter().all(all_passed);

    let frobenius = |r: &Result<Report>| Some(r.as_ref().ok()?.check.as_ref()?.relative_frobenius);
    let max_element =
        |r: &Result<Report>| Some(r.as_ref().ok()?.check.as_ref()?.max_element_relative());
    let labels: Vec<&str> = variants.iter().map(|(v, _)| v.name()).collect();
    let error_table = |id: &str, title: &str, error: &dyn Fn(&Result<Report>) -> Option<f64>| {
        let mut t = Table::new(id, title).text_column("variant");
        for n in &sizes {
            t = t.number_column(&format!("n = {n}"));
        }
        for (label, reports) in labels.iter().zip(&by_variant) {
            let mut row = vec![Cell::text(*label)];
            row.extend(reports.iter().map(|r| match (r, error(r)) {
                (_, Some(e)) => Cell::sci(e, 2),
                (Err(e), _) => error_cell(e),
                (Ok(_), None) => Cell::missing("not checked"),
            }));
            t.push(row);
        }
        t
    };
    let d = dtype.name();
    let frobenius_table = error_table(
        "precision-frobenius",
        &format!("Relative Frobenius error ‖C − R‖ / ‖R‖, {d}"),
        &frobenius,
    );
    let max_table = error_table(
        "precision-max-element",
        &format!("Largest element error relative to the largest element, max|C − R| / max|R|, {d}"),
        &max_element,
    );

    // The first size above the threshold, per variant.
    let largest = *sizes.iter().max().unwrap_or(&0);
    let mut threshold_table = Table::new(
        "precision-threshold",
        &format!("First size with a relative Frobenius error above {THRESHOLD:.0e}, {d}"),
    )
    .text_column("variant")
    .text_column(&format!("first n with error > {THRESHOLD:.0e}"))
    .number_column("error there")
    .number_column(&format!("error at n = {largest}"));
    let mut exceeding = Vec::new();
    let mut never = Vec::new();
    for (label, reports) in labels.iter().zip(&by_variant) {
        let errors: Vec<(u32, f64)> = sizes
            .iter()
            .zip(reports)
            .filter_map(|(&n, r)| Some((n, frobenius(r)?)))
            .collect();
        let first = first_exceeding(&errors, THRESHOLD);
        let at = |n: u32| errors.iter().find(|(m, _)| *m == n).map(|(_, e)| *e);
        let last = at(largest).map_or(Cell::missing("-"), |e| Cell::sci(e, 2));
        match first {
            Some(n) => {
                exceeding.push(format!("{label} from n = {n}"));
                threshold_table.push(vec![
                    Cell::text(*label),
                    Cell::text(n.to_string()),
                    Cell::sci(at(n).expect("measured"), 2),
                    last,
                ]);
            }
            None => {
                never.push(label.to_string());
                threshold_table.push(vec![
                    Cell::text(*label),
                    Cell::text(format!("never (up to n = {largest})")),
                    Cell::missing("-"),
                    last,
                ]);
            }
        }
    }
    let headline = match (exceeding.is_empty(), never.is_empty()) {
        (true, _) => format!(
            "No variant's relative Frobenius error exceeded {THRESHOLD:.0e} up to n = {largest} ({d})."
        ),
        (false, true) => format!(
            "Every variant's relative Frobenius error exceeded {THRESHOLD:.0e} ({d}): {}.",
            exceeding.join(", ")
        ),
        (false, false) => format!(
            "Relative Frobenius error above {THRESHOLD:.0e} ({d}): {}; never up to n = {largest}: {}.",
            exceeding.join(", "),
            never.join(", ")
        ),
    };

    // Variants with the same error at every size add in the same order: one line for them all.
    let mut lines: Vec<Series> = Vec::new();
    for (label, reports) in labels.iter().zip(&by_variant) {
        let points: Vec<(f64, f64)> = sizes
            .iter()
            .zip(reports)
            .filter_map(|(&n, r)| Some((n as f64, frobenius(r)?)))
            .collect();
        match lines
            .iter_mut()
            .find(|s| s.points == points && !points.is_empty())
        {
            Some(same) => same.name += &format!(" = {label}"),
            None => lines.push(Series {
                name: label.to_string(),
                points,
            }),
        }
    }
    let identical: Vec<&str> = lines
        .iter()
        .filter(|s| s.name.contains(" = "))
        .map(|s| s.name.as_str())
        .collect();
    let chart = Chart::Lines(LineChart {
        title: format!("Relative Frobenius error vs size, {d}"),
        x_label: "n (m = n = k)".into(),
        y_label: "relative Frobenius error".into(),
        x_powers_of_two: sizes.iter().all(|n| n.is_power_of_two()),
        y_log: true,
        series: lines.clone(),
        threshold: Some((THRESHOLD, format!("{THRESHOLD:.0e}, the 002 target"))),
        legend: Corner::UpperLeft,
    });

    let sampled: Vec<String> = sizes
        .iter()
        .filter(|&&n| (n as f64).powi(3) > FULL_REFERENCE_FLOPS)
        .map(|n| n.to_string())
        .collect();
    let reference_note = if sampled.is_empty() {
        "The reference R is the full f64 product at every size.".to_string()
    } else {
        format!(
            "The reference R is the f64 product (ndarray). Above 2^37 multiply-adds (here n = {}) \
             it is computed for a seeded sample of 64 rows and 64 columns of C, as every check of \
             this project does (`gpu-gemm/src/verify.rs`); the errors there are over that sample.",
            sampled.join(", ")
        )
    };
    let mut frobenius_section = Section::new(frobenius_table);
    frobenius_section.chart = Some(chart);
    frobenius_section.finding = Some(headline.clone());
    frobenius_section.notes.push(reference_note);
    if !identical.is_empty() {
        frobenius_section.notes.push(format!(
            "Identical errors at every size (one line in the chart): {}. Bit-identical errors \
             mean identical results: the same operations in the same order (k ascending) round \
             alike, whatever the tiling.",
            identical.join("; ")
        ));
    }
    let mut max_section = Section::new(max_table);
    max_section.notes.push(
        "The same runs, element-wise: the largest |C − R| over the checked elements, divided by \
         the largest |R|."
            .into(),
    );
    let mut threshold_section = Section::new(threshold_table);
    if !ctx.gpu {
        threshold_section
            .notes
            .push("cuBLAS needs a GPU: it is left out on the emulator.".into());
    }
    let size_list: Vec<String> = sizes.iter().map(|n| n.to_string()).collect();
    Ok(Page {
        id: ID,
        title: "002 · Precision: relative error vs size".into(),
        intro: "The `002` tutorial points out that the naive kernel's float accumulation leaves a \
                relative error above its 1e-6 target, and uses Kahan's compensated summation to \
                bring it under. This page measures each variant's error against an f64 reference \
                over sizes: plain FMA accumulation (naive, v4, v5, gemm128, cuBLAS) against Kahan \
                summation (kahan, row-shared, blocked-kahan)."
            .into(),
        headline,
        metadata: ctx.metadata(
            timing,
            vec![
                ("sizes", format!("n = {} (m = n = k)", size_list.join(", "))),
                ("element type", d.into()),
                (
                    "inputs",
                    format!("uniform in [-1, 1), seed {}; C = A·B", ctx.seed),
                ),
                ("variants", labels.join(", ")),
            ],
            passed,
        ),
        sections: vec![frobenius_section, threshold_section, max_section],
        passed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_size_above_the_threshold() {
        let errors = [(256, 1e-7), (512, 2e-6), (1024, 5e-7), (2048, 3e-6)];
        assert_eq!(first_exceeding(&errors, 1e-6), Some(512));
        assert_eq!(first_exceeding(&errors, 1e-5), None);
        assert_eq!(
            first_exceeding(&[(16, 1e-6)], 1e-6),
            None,
            "equal is not above"
        );
        assert_eq!(first_exceeding(&[], 1e-6), None);
    }
}
