//! `host experiment NAME`: the experiments of the five source documents, regenerated.
//!
//! Each experiment runs variants through the ordinary pipeline ([`gpu_gemm::run::plan`],
//! [`gpu_gemm::run::execute_many`]: same inputs, launch, timing and f64 check as `host --variant`) and
//! turns the reports into a [`page::Page`]: markdown tables on the terminal, and in the results
//! folder a `README.md` page with the tables, SVG charts, the run's metadata and a headline
//! finding computed from the data, plus one CSV per table and `results.json`.
//!
//! | command | document | what it regenerates |
//! |---|---|---|
//! | `tile-sweep` (`000`) | 000 | the tiled kernel at tile widths 32…1, 4096² f64, the 000 inputs |
//! | `progression` (`001`) | 001 | every 001 kernel (and newer ones) against cuBLAS |
//! | `precision` (`002`) | 002 | relative error vs size, with and without Kahan summation |
//! | `sweeps` (`003`) | 003 | CPU vs GPU: sizes, block sizes, blockL |
//! | `cg` (`004`) | 004 | the cooperative-groups kernels as a percentage of cuBLAS |
//! | `hopper` (`005`) | tensor cores 2, 3 | every step of the Hopper kernels against cuBLAS of the same type |
//! | `auto` | | every candidate of `auto` at each shape beside cuBLAS; writes `auto-table.csv` |
//! | `parallel` (`007`) | | the tensor-parallel page, from the runs `host --parallel … --json` saved on the GPUs |
//! | `decode` (`008`) | | a decode step as a graph: 32 layers of Llama-3 8B's GEMMs at 1–128 tokens, captured into one CUDA graph, beside cuBLAS's chain captured the same way |
//! | `shapes` | | the shapes real models run (DeepGEMM's dense set, Llama-3 8B and 70B, the squares): `auto` beside cuBLAS or cuBLASLt, and the memory bandwidth decode shapes reach |
//!
//! On the emulator (`--backend emu`) every experiment runs at small sizes; its times are the
//! emulation's CPU wall time and are labelled so, never as GPU throughput.
pub mod auto;
pub mod cg;
pub mod chart;
pub mod context;
pub mod decode;
pub mod hopper;
pub mod page;
pub mod parallel;
pub mod precision;
pub mod progress;
pub mod progression;
pub mod random_shapes;
pub mod shapes;
pub mod sweeps;
pub mod table;
pub mod tile_sweep;
pub mod timeline;

use anyhow::Result;
pub use context::{
    all_passed, check_cell, describe, error_cell, label, process_command_line, time_cell, utc_now,
    valid_time, variant, Common, Context,
};
use gpu_gemm::run::Backend;
use std::path::Path;

/// The experiments, as `host experiment NAME` names them.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum Experiment {
    /// 000: the tiled kernel at tile widths 32, 16, 8, 4, 2, 1 (4096³ f64, the 000 inputs)
    #[command(name = "tile-sweep", visible_alias = "000")]
    TileSweep(tile_sweep::Args),
    /// 001: every kernel of the 001 progression (and newer ones) against cuBLAS
    #[command(name = "progression", visible_alias = "001")]
    Progression(progression::Args),
    /// 002: relative error against the f64 reference over sizes, with and without Kahan summation
    #[command(name = "precision", visible_alias = "002")]
    Precision(precision::Args),
    /// 003: CPU variants over sizes, CPU blockL, GPU block size and blockL sweeps, CPU vs GPU scaling
    #[command(name = "sweeps", visible_alias = "003")]
    Sweeps(sweeps::Args),
    /// 004: the cooperative-groups kernels as a percentage of cuBLAS
    #[command(name = "cg", visible_alias = "004")]
    Cg(cg::Args),
    /// 005: the Hopper ladder, every step of tensor cores chapters 2 and 3 against cuBLAS of the same type
    #[command(name = "hopper", visible_alias = "005")]
    Hopper(hopper::Args),
    /// auto's table: every candidate kernel at each shape beside cuBLAS; writes auto-table.csv
    #[command(name = "auto")]
    Auto(auto::Args),
    /// The shapes real models run (DeepGEMM's dense set, Llama-3 8B and 70B, the squares): auto
    /// beside cuBLAS (cuBLASLt in e4m3), and the memory bandwidth decode shapes reach; or, with
    /// --random N, N shapes drawn from a seed in every layout
    #[command(name = "shapes")]
    Shapes(shapes::Args),
    /// A decode step as a graph: 32 layers of Llama-3 8B's GEMMs at 1, 16, 64 and 128 tokens,
    /// each reading the last one's output, captured into one CUDA graph beside cuBLAS's chain
    #[command(name = "decode", visible_alias = "008")]
    Decode(decode::Args),
    /// The tensor-parallel page from the runs `host --parallel … --json` saved (no GPU needed)
    #[command(name = "parallel", visible_alias = "007")]
    Parallel(parallel::Args),
    /// Every experiment but `auto` and `shapes` at its default sizes, each into `OUT/<experiment>/` (OUT defaults to `results/`)
    All(AllArgs),
}

#[derive(clap::Args, Debug, Clone, Default)]
pub struct AllArgs {
    #[command(flatten)]
    pub common: Common,
    /// For 003: skip a CPU run whose estimated time exceeds this many seconds [default: 20]
    #[arg(long, value_parser = crate::args::positive_amount)]
    pub cpu_time_limit: Option<f64>,
}

impl Experiment {
    fn common(&self) -> &Common {
        match self {
            Experiment::TileSweep(a) => &a.common,
            Experiment::Progression(a) => &a.common,
            Experiment::Precision(a) => &a.common,
            Experiment::Sweeps(a) => &a.common,
            Experiment::Cg(a) => &a.common,
            Experiment::Hopper(a) => &a.common,
            Experiment::Auto(a) => &a.common,
            Experiment::Shapes(a) => &a.common,
            Experiment::Decode(a) => &a.common,
            Experiment::Parallel(_) => unreachable!("the parallel page opens no backend"),
            Experiment::All(a) => &a.common,
        }
    }

    /// The results folder name, also the default `--out` under `results/`.
    pub fn id(&self) -> &'static str {
        match self {
            Experiment::TileSweep(_) => tile_sweep::ID,
            Experiment::Progression(_) => progression::ID,
            Experiment::Precision(_) => precision::ID,
            Experiment::Sweeps(_) => sweeps::ID,
            Experiment::Cg(_) => cg::ID,
            Experiment::Hopper(_) => hopper::ID,
            Experiment::Auto(_) => auto::ID,
            Experiment::Shapes(a) if a.random.is_some() => a.dtype.random_id(),
            Experiment::Shapes(a) => a.dtype.id(),
            Experiment::Decode(_) => decode::ID,
            Experiment::Parallel(_) => parallel::ID,
            Experiment::All(_) => "all",
        }
    }
}

/// Runs `experiment` (from `host experiment …`); Ok(false) when a check failed.
pub fn run(experiment: &Experiment) -> Result<bool> {
    run_with_command_line(experiment, process_command_line())
}

/// [`run()`] with the command line to record on the page given (tests pass their own).
pub fn run_with_command_line(experiment: &Experiment, command_line: String) -> Result<bool> {
    if let Experiment::Parallel(args) = experiment {
        return parallel::run(args, command_line);
    }
    let common = experiment.common();
    let (backend, note) = Backend::open(common.backend, common.ptx.as_deref())?;
    if let Some(note) = note {
        println!("{note}");
    }
    let ctx = Context::new(backend, common, command_line);
    println!("on {}", ctx.backend().describe());
    let Experiment::All(all) = experiment else {
        let out = common
            .out
            .clone()
            .unwrap_or_else(|| Path::new("results").join(experiment.id()));
        return run_one(&ctx, experiment, &out);
    };
    // `all`: every experiment with its defaults, sharing the backend.
    let root = all.common.out.clone().unwrap_or_else(|| "results".into());
    let with = |common: &Common| Common {
        out: None,
        ..common.clone()
    };
    let c = with(&all.common);
    let experiments = [
        Experiment::TileSweep(tile_sweep::Args {
            common: c.clone(),
            ..Default::default()
        }),
        Experiment::Progression(progression::Args {
            common: c.clone(),
            both_dtypes: true,
            ..Default::default()
        }),
        Experiment::Precision(precision::Args {
            common: c.clone(),
            ..Default::default()
        }),
        Experiment::Cg(cg::Args {
            common: c.clone(),
            ..Default::default()
        }),
        Experiment::Hopper(hopper::Args {
            common: c.clone(),
            ..Default::default()
        }),
        Experiment::Sweeps(sweeps::Args {
            common: c,
            cpu_time_limit: all.cpu_time_limit,
            ..Default::default()
        }),
    ];
    let mut passed = true;
    for e in &experiments {
        let started = std::time::Instant::now();
        passed &= run_one(&ctx, e, &root.join(e.id()))?;
        println!("({} took {:.1} s)", e.id(), started.elapsed().as_secs_f64());
    }
    Ok(passed)
}

fn run_one(ctx: &Context, experiment: &Experiment, out: &Path) -> Result<bool> {
    let page = match experiment {
        Experiment::TileSweep(a) => tile_sweep::run(ctx, a)?,
        Experiment::Progression(a) => progression::run(ctx, a)?,
        Experiment::Precision(a) => precision::run(ctx, a)?,
        Experiment::Sweeps(a) => sweeps::run(ctx, a)?,
        Experiment::Cg(a) => cg::run(ctx, a)?,
        Experiment::Hopper(a) => hopper::run(ctx, a)?,
        Experiment::Auto(a) => auto::run(ctx, a)?,
        Experiment::Shapes(a) => match a.random {
            Some(count) => random_shapes::run(ctx, a.dtype, count, !a.no_check)?,
            None => shapes::run(ctx, a)?,
        },
        Experiment::Decode(a) => decode::run(ctx, a)?,
        Experiment::Parallel(_) | Experiment::All(_) => {
            unreachable!("`parallel` and `all` are run before a backend opens")
        }
    };
    let written = page.write(out)?;
    println!("{}", page.to_terminal());
    println!(
        "wrote {} files into {} (the page: {})",
        written.len(),
        out.display(),
        out.join(page::PAGE_FILE).display()
    );
    Ok(page.passed)
}
