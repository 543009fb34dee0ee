//! `host experiment auto`: measures `auto`'s candidates at the shapes of its table and writes
//! the table (`auto-table.csv`) with the page.
//!
//! For each dtype, contract and shape every candidate configuration runs on the same inputs
//! beside cuBLAS (median, checked); the fastest that passes its check is the row. The strict
//! candidates are the native-arithmetic GPU kernels of [`candidates`]; split-k only where one
//! pass of the large tile would leave SMs idle. A relaxed contract (`--math fp32-accurate`,
//! `tf32`, f32 only) measures the kernels it adds (3xTF32, or TF32) against strict's choice for
//! the shape, re-measured in the same process, rather than every native kernel again. The
//! page's tables are the full measurements, so that the choice can be checked against its
//! runners-up.
use super::context::{
    all_passed, check_cell, describe, label, time_cell, valid_time, Common, Context,
};
use super::page::{Page, Section};
use super::progress::Progress;
use super::table::{index_of_min, Cell, Table};
use crate::args::DtypeArg;
use anyhow::Result;
use gpu_gemm::auto::HEADER;
use gpu_gemm::problem::Problem;
use gpu_gemm::registry::{self, CublasMath, Math, Variant};
use gpu_gemm::run::Report;
use kernels_gpu::gemm::Dtype;

pub const ID: &str = "auto-table";

/// The file the experiment writes into its results folder; `gpu-gemm/src/auto-table.csv` is a copy.
pub const TABLE_FILE: &str = "auto-table.csv";

#[derive(clap::Args, Debug, Clone, Default)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
    /// Element types, separated by commas [default: f32,f64; bf16 and f16 need an H100/H200]
    #[arg(long, value_enum, value_delimiter = ',')]
    pub dtype: Vec<DtypeArg>,
    /// Only these shapes, as MxNxK separated by commas [default: the seven on the GPU,
    /// two small ones on the emulator]
    #[arg(long, value_delimiter = ',', value_parser = parse_shape)]
    pub shapes: Vec<(u32, u32, u32)>,
    /// Precision contracts, separated by commas; the relaxed ones (fp32-accurate, tf32) measure
    /// f32 only [default: strict]
    #[arg(long, value_enum, value_delimiter = ',')]
    pub math: Vec<Math>,
}

/// One row to measure: a problem and the contract its choice must keep.
pub type Case = (Problem, Math);

/// The shapes of the table on a GPU: the squares, and the three that one pass of a large tile
/// serves badly (few tiles, or a short k).
pub const GPU_SHAPES: [(u32, u32, u32); 7] = [
    (1024, 1024, 1024),
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (8192, 8192, 1024),
    (1024, 1024, 8192),
    (8192, 256, 8192),
];

/// SMs of the H100 the table is made on: split-k is a candidate where the large tile
/// (`big-tile:1`, `wgmma-16bit:1`) makes fewer than two blocks per SM.
const SPLIT_K_BELOW_BLOCKS: u32 = 2 * 132;

pub fn parse_shape(text: &str) -> Result<(u32, u32, u32), String> {
    let parts: Vec<u32> = text
        .split(['x', '×'])
        .map(|p| {
            p.trim()
                .parse::<u32>()
                .map_err(|e| format!("`{text}`: {e}"))
        })
        .collect::<Result<_, _>>()?;
    match parts[..] {
        [m, n, k] if m > 0 && n > 0 && k > 0 => Ok((m, n, k)),
        _ => Err(format!("`{text}`: expected MxNxK with positive sizes")),
    }
}

/// `auto`'s candidates for a problem: every configuration of the native-arithmetic kernels
/// listed here (the course's fast ones; the slow steps could never win). In 16 bits: every
/// chapter-3 kernel (ping-pong loses on large squares but wins where 256×128 tiles are few).
pub fn candidates(p: &Problem) -> Vec<(Variant, Option<u32>)> {
    // The kernel whose blocks decide whether k is worth splitting, and the split-k kernel.
    let (mut names, large_tile, split) = if p.dtype.is_16bit() {
        (
            vec![
                "wgmma-16bit",
                "wgmma-cluster",
                "wgmma-tma-store",
                "wgmma-pingpong",
            ],
            "wgmma-16bit",
            "wgmma-split-k",
        )
    } else {
        (vec!["gemm128", "best", "big-tile"], "big-tile", "split-k")
    };
    if p.dtype == Dtype::F64 {
        names.push("tc-f64");
    }
    let few_tiles = {
        let g = (registry_kernel(large_tile).geometry)(
            p.shape.m,
            p.shape.n,
            p.shape.k,
            p.dtype.bytes(),
            1,
        );
        g.grid.0 * g.grid.1 < SPLIT_K_BELOW_BLOCKS
    };
    if few_tiles {
        names.push(split);
    }
    let mut out = Vec::new();
    for name in names {
        let v = registry::find(name).expect("a registered kernel");
        debug_assert!(gpu_gemm::auto::is_candidate(&v, p.dtype, Math::Strict));
        if !v.dtypes().contains(&p.dtype) {
            continue;
        }
        match v.tiles() {
            [] => out.push((v, None)),
            tiles => out.extend(tiles.iter().map(|&t| (v, Some(t)))),
        }
    }
    out
}

/// The candidates of a relaxed contract in f32 on a device (`None`: the emulator): strict's
/// choice for the shape, then every configuration of the kernels whose arithmetic the contract
/// adds, Hopper's `wgmma` ones on an H100/H200 (and the emulator), Ampere's `mma.sync` ones
/// elsewhere.
pub fn relaxed_candidates(
    p: &Problem,
    math: Math,
    arch: Option<u32>,
) -> Vec<(Variant, Option<u32>)> {
    let mut out = Vec::new();
    if let Ok(strict) = gpu_gemm::auto::choose(p, Math::Strict, arch) {
        out.push((strict.variant, strict.tile));
    }
    let hopper = arch.is_none_or(|a| a == 90);
    let added = match (math, hopper) {
        (Math::Strict, _) => return out,
        (Math::Fp32Accurate, true) => "wgmma-3xtf32",
        (Math::Fp32Accurate, false) => "tc-3xtf32",
        (Math::Tf32, true) => "wgmma-tf32",
        (Math::Tf32, false) => "tc-tf32",
    };
    let v = registry::find(added).expect("a registered kernel");
    debug_assert!(gpu_gemm::auto::is_candidate(&v, p.dtype, math));
    out.extend(v.tiles().iter().map(|&t| (v, Some(t))));
    out
}

fn registry_kernel(name: &str) -> &'static kernels_gpu::registry::Variant {
    kernels_gpu::registry::find(name).expect("a registered kernel")
}

pub fn run(ctx: &Context, args: &Args) -> Result<Page> {
    let dtypes: Vec<Dtype> = if args.dtype.is_empty() {
        vec![Dtype::F32, Dtype::F64]
    } else {
        args.dtype.iter().map(|d| d.dtype()).collect()
    };
    let shapes = if !args.shapes.is_empty() {
        args.shapes.clone()
    } else if ctx.gpu {
        GPU_SHAPES.to_vec()
    } else {
        vec![(64, 64, 64), (32, 32, 256)]
    };
    let maths = if args.math.is_empty() {
        vec![Math::Strict]
    } else {
        args.math.clone()
    };
    // The relaxed contracts change f32 only: the other types' rows are strict's.
    let mut cases: Vec<Case> = Vec::new();
    for &math in &maths {
        for &dtype in dtypes
            .iter()
            .filter(|&&d| math == Math::Strict || d == Dtype::F32)
        {
            cases.extend(shapes.iter().map(|&s| (ctx.problem(dtype, s), math)));
        }
    }
    if cases.is_empty() {
        anyhow::bail!(
            "--math {} measures f32 only; add f32 to --dtype",
            maths[0].name()
        );
    }
    let arch = ctx.backend().arch();
    let runs: Vec<Vec<(Variant, Option<u32>)>> = cases
        .iter()
        .map(|(p, math)| {
            let mut v = match math {
                Math::Strict => candidates(p),
                &m => relaxed_candidates(p, m, arch),
            };
            if ctx.gpu {
                v.push((Variant::Cublas(CublasMath::Default), None));
            }
            v
        })
        .collect();
    let progress = Progress::new("auto", runs.iter().map(Vec::len).sum());
    let timing = ctx.timing();
    let measured: Vec<Vec<Result<Report>>> = cases
        .iter()
        .zip(&runs)
        .map(|((p, _), variants)| ctx.measure(&progress, variants, p, timing))
        .collect();
    progress.finish();
    Ok(page(ctx, timing, &cases, &runs, &measured))
}

/// The fastest passing candidate of one problem's runs (cuBLAS is never one).
fn winner(variants: &[(Variant, Option<u32>)], reports: &[Result<Report>]) -> Option<usize> {
    index_of_min(
        variants
            .iter()
            .zip(reports)
            .map(|((v, _), r)| valid_time(r).filter(|_| !v.is_cublas())),
    )
}

/// The CSV `auto` reads: one row per problem that had a passing candidate.
pub fn table_csv(
    device: &str,
    cases: &[Case],
    runs: &[Vec<(Variant, Option<u32>)>],
    measured: &[Vec<Result<Report>>],
) -> String {
    let mut csv = format!(
        "# Written by `host experiment auto` on {device}; read by `--variant auto` (gpu-gemm/src/auto.rs).\n{HEADER}\n"
    );
    for (((p, math), variants), reports) in cases.iter().zip(runs).zip(measured) {
        let Some(w) = winner(variants, reports) else {
            continue;
        };
        let (v, tile) = variants[w];
        let ms = valid_time(&reports[w]).unwrap_or(f64::NAN);
        let cublas = variants
            .iter()
            .zip(reports)
            .find(|((v, _), _)| v.is_cublas())
            .and_then(|(_, r)| valid_time(r));
        let s = p.shape;
        csv += &format!(
            "{},{},{},{},{},{},{},{:.4},{:.2},{},{}\n",
            p.dtype.name(),
            math.name(),
            s.m,
            s.n,
            s.k,
            v.name(),
            tile.map_or("-".to_string(), |t| t.to_string()),
            ms,
            p.flops() / (ms * 1e-3) / 1e12,
            cublas.map_or("-".to_string(), |c| format!("{:.3}", c / ms)),
            device.replace(',', ";"),
        );
    }
    csv
}

fn page(
    ctx: &Context,
    timing: gpu_gemm::run::Timing,
    cases: &[Case],
    runs: &[Vec<(Variant, Option<u32>)>],
    measured: &[Vec<Result<Report>>],
) -> Page {
    let passed = measured.iter().all(all_passed);
    let device = ctx.backend().describe();
    let mut sections = Vec::new();
    let mut summary = Table::new("choices", "What `auto` chooses")
        .text_column("dtype")
        .text_column("contract")
        .text_column("shape")
        .text_column("choice")
        .number_column(ctx.time_column())
        .number_column("TFLOP/s")
        .number_column("× cuBLAS");
    for (((p, math), variants), reports) in cases.iter().zip(runs).zip(measured) {
        let cublas = variants
            .iter()
            .zip(reports)
            .find(|((v, _), _)| v.is_cublas())
            .and_then(|(_, r)| valid_time(r));
        let w = winner(variants, reports);
        let ratio = |r: &Result<Report>| match (cublas, valid_time(r)) {
            (Some(c), Some(t)) => Cell::fixed(c / t, 3),
            _ if !ctx.gpu => Cell::missing("n/a (emulator)"),
            _ => Cell::missing("-"),
        };
        // Strict's ids and titles stay as they were; a contract's tables say theirs.
        let (id_suffix, title_suffix) = match math {
            Math::Strict => (String::new(), String::new()),
            m => (format!("-{}", m.name()), format!(", {}", m.name())),
        };
        let mut table = Table::new(
            &format!(
                "{}-{}x{}x{}{id_suffix}",
                p.dtype.name(),
                p.shape.m,
                p.shape.n,
                p.shape.k
            ),
            &format!("{} {}{title_suffix}", p.dtype.name(), describe(p)),
        )
        .text_column("candidate")
        .number_column(ctx.time_column())
        .number_column("TFLOP/s")
        .number_column("× cuBLAS")
        .text_column("check");
        for (&(v, t), r) in variants.iter().zip(reports) {
            table.push(vec![
                Cell::text(label(v, t)),
                time_cell(r),
                ctx.rate_cell(r, 1e12, 2),
                ratio(r),
                check_cell(r),
            ]);
        }
        table.mark_best(w);
        match w {
            Some(w) => summary.push(vec![
                Cell::text(p.dtype.name()),
                Cell::text(math.name()),
                Cell::text(describe(p)),
                Cell::text(label(variants[w].0, variants[w].1)),
                time_cell(&reports[w]),
                ctx.rate_cell(&reports[w], 1e12, 2),
                ratio(&reports[w]),
            ]),
            None => summary.push(vec![
                Cell::text(p.dtype.name()),
                Cell::text(math.name()),
                Cell::text(describe(p)),
                Cell::missing("no candidate passed"),
                Cell::missing("-"),
                Cell::missing("-"),
                Cell::missing("-"),
            ]),
        }
        sections.push(Section::new(table));
    }
    let csv = table_csv(&device, cases, runs, measured);
    let mut first = Section::new(summary);
    first.notes.push(format!(
        "`{TABLE_FILE}` in this folder is the table `--variant auto` reads; copy it to \
         `gpu-gemm/src/auto-table.csv` and rebuild to make it the project's."
    ));
    first.files.push((TABLE_FILE.to_string(), csv));
    sections.insert(0, first);
    let headline = if ctx.gpu {
        "The fastest kernel per shape and contract, measured beside cuBLAS.".to_string()
    } else {
        "On the emulator the times are CPU wall time: the table it writes is not a GPU's and must not replace gpu-gemm/src/auto-table.csv.".to_string()
    };
    Page {
        id: ID,
        title: "auto · the fastest kernel per shape".into(),
        intro: "Every candidate configuration of `auto` at each shape and precision contract \
                (strict: native arithmetic; fp32-accurate: also 3xTF32; tf32: also TF32), on \
                the same inputs as cuBLAS; the fastest that passes its check is the row in \
                `auto-table.csv`."
            .into(),
        headline,
        metadata: ctx.metadata(
            timing,
            vec![(
                "inputs",
                format!("uniform in [-1, 1), seed {}; C = A·B", ctx.seed),
            )],
            passed,
        ),
        sections,
        passed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::context::testing::{gpu_context, report};
    use gpu_gemm::problem::Init;
    use kernels_gpu::registry::Shape;

    #[test]
    fn the_fastest_passing_candidate_is_the_row_and_the_row_parses() {
        let ctx = gpu_context();
        let p = ctx.square(1024, Dtype::F32, Init::Random);
        let variants = vec![
            (registry::find("best").unwrap(), Some(1)),
            (registry::find("big-tile").unwrap(), Some(1)),
            (registry::find("split-k").unwrap(), Some(4)),
            (Variant::Cublas(CublasMath::Default), None),
        ];
        // split-k is fastest but fails its check; cuBLAS is faster still but never a choice.
        let reports = vec![
            report("best", &p, 1.0, true),
            report("big-tile", &p, 0.8, true),
            report("split-k", &p, 0.5, false),
            report("cublas", &p, 0.4, true),
        ];
        let csv = table_csv("GPU", &[(p, Math::Strict)], &[variants], &[reports]);
        let rows = gpu_gemm::auto::parse(&csv).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (rows[0].variant.as_str(), rows[0].tile),
            ("big-tile", Some(1))
        );
        assert!(csv.contains(",0.500,GPU"), "{csv}");
    }

    #[test]
    fn split_k_is_a_candidate_only_where_tiles_are_few() {
        let ctx = gpu_context();
        let has_split = |m, n, k| {
            let mut p = ctx.square(m, Dtype::F32, Init::Random);
            p.shape = Shape {
                m,
                n,
                k,
                lda: m,
                ldb: k,
                ldc: m,
            };
            candidates(&p).iter().any(|(v, _)| v.name() == "split-k")
        };
        assert!(has_split(1024, 1024, 8192));
        assert!(!has_split(8192, 8192, 1024));
        assert!(parse_shape("1024x1024x8192").is_ok());
        assert!(parse_shape("1024×1024×8192").is_ok());
        assert!(parse_shape("1024x0x8").is_err());
    }

    #[test]
    fn sixteen_bit_candidates_are_the_chapter_3_kernels() {
        let ctx = gpu_context();
        let names = |dtype, m: u32, n: u32, k: u32| -> Vec<String> {
            let mut p = ctx.square(m, dtype, Init::Random);
            p.shape = Shape {
                m,
                n,
                k,
                lda: m,
                ldb: k,
                ldc: m,
            };
            candidates(&p).iter().map(|&(v, t)| label(v, t)).collect()
        };
        let big = names(Dtype::Bf16, 8192, 8192, 8192);
        assert_eq!(
            big,
            [
                "wgmma-16bit:1",
                "wgmma-cluster:1",
                "wgmma-tma-store:1",
                "wgmma-tma-store:2",
                "wgmma-tma-store:3",
                "wgmma-tma-store:4",
                "wgmma-tma-store:5",
                "wgmma-pingpong:1",
                "wgmma-pingpong:2"
            ]
        );
        let narrow = names(Dtype::F16, 8192, 256, 8192);
        assert!(
            narrow.contains(&"wgmma-split-k:4".to_string()),
            "{narrow:?}"
        );
        assert!(names(Dtype::F32, 8192, 8192, 8192)
            .iter()
            .all(|n| !n.starts_with("wgmma")));
    }
}
