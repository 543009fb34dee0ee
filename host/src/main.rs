//! `cargo run -p host -- --variant NAME …`: variants run on one problem, checked and timed.
//! `cargo run -p host -- experiment NAME …`: an experiment of the source documents
//! (`host::experiments`).
use anyhow::Result;
use clap::Parser;
use host::cli::{Cli, Command};
use host::problem::{Init, Problem};
use host::registry::{self, Variant};
use host::run::{execute_many, problem_from_cli, Backend, Report, Timing};
use kernels_gpu::gemm::Dtype;
use std::process::ExitCode;

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Ok(false) when a check failed or a variant could not run.
fn run() -> Result<bool> {
    let cli = Cli::parse();
    if let Some(Command::Experiment(experiment)) = &cli.command {
        return host::experiments::run(experiment);
    }
    if cli.list {
        print!("{}", registry::listing());
        return Ok(true);
    }
    let mut variants = Vec::new();
    let items: Vec<&str> = cli
        .variant
        .as_deref()
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .collect();
    // `NAME` or `NAME:TILE`. In a list, --tile goes to the parameterised variants only; a single
    // variant always gets it, so that `--variant v1 --tile 8` is refused rather than ignored.
    for &item in &items {
        let (name, tile) = match item.split_once(':') {
            Some((name, tile)) => {
                let tile = tile.parse().map_err(|_| {
                    anyhow::anyhow!("`{item}`: the tile after `:` must be a number")
                })?;
                (name, Some(tile))
            }
            None => (item, None),
        };
        let variant = registry::find(name)?;
        let takes_tile = matches!(variant, Variant::Kernel(k) if !k.tiles.is_empty());
        let tile = tile.or(if takes_tile || items.len() == 1 {
            cli.tile
        } else {
            None
        });
        variants.push((variant, tile));
    }
    let compare = cli.compare.is_some();
    if compare && !variants.iter().any(|(v, _)| matches!(v, Variant::Cublas)) {
        variants.push((Variant::Cublas, None));
    }
    let (backend, note) = Backend::open(cli.backend, cli.ptx.as_deref())?;
    if let Some(note) = note {
        println!("{note}");
    }
    let gpu = backend.is_gpu();
    let seed = cli.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let problem = problem_from_cli(&cli, if gpu { 4096 } else { 64 }, seed)?;
    let timing = Timing {
        warmup: cli.warmup.unwrap_or(if gpu { 3 } else { 0 }),
        iters: cli.iters.unwrap_or(if gpu { 20 } else { 1 }).max(1),
        budget_ms: if gpu && cli.iters.is_none() {
            3000.0
        } else {
            f64::INFINITY
        },
        check: !cli.no_check,
    };
    let s = problem.shape;
    println!(
        "m={} n={} k={} lda={} ldb={} ldc={} alpha={} beta={} on {}",
        s.m,
        s.n,
        s.k,
        s.lda,
        s.ldb,
        s.ldc,
        problem.alpha,
        problem.beta,
        backend.describe()
    );
    println!(
        "inputs: {:?}{}",
        problem.init,
        if problem.init == Init::Random {
            format!(", seed {seed} (--seed {seed} repeats them)")
        } else {
            String::new()
        }
    );
    let dtypes = if cli.both_dtypes {
        vec![Dtype::F32, Dtype::F64]
    } else {
        vec![problem.dtype]
    };
    let mut all_passed = true;
    let mut rows = Vec::new();
    for dtype in dtypes {
        let p = Problem { dtype, ..problem };
        let reports = execute_many(&backend, &variants, &p, timing, |r| {
            print_one(r, gpu, timing)
        });
        for (report, (variant, _)) in reports.into_iter().zip(&variants) {
            match report {
                Ok(r) => {
                    all_passed &= r.passed();
                    rows.push(r);
                }
                Err(e) => {
                    all_passed = false;
                    eprintln!("{} {}: error: {e:#}", variant.name(), dtype.name());
                }
            }
        }
    }
    if rows.len() > 1 {
        println!("\n{}", table(&rows, gpu));
    }
    Ok(all_passed)
}

fn print_one(report: &Result<Report>, gpu: bool, timing: Timing) {
    let Ok(r) = report else { return };
    let speed = if gpu {
        format!("{:.2} TFLOP/s", r.tflops())
    } else {
        "(emulator: CPU wall time, not GPU performance)".to_string()
    };
    println!(
        "{} {} ({}): median {:.3} ms, min {:.3} ms over {} runs after {} warm-up; {speed}",
        r.variant,
        r.problem.dtype.name(),
        r.entry,
        r.median_ms,
        r.min_ms,
        r.runs,
        timing.warmup
    );
    match &r.check {
        Some(check) => println!("  check: {}", check.summary()),
        None => println!("  check: skipped (--no-check)"),
    }
}

/// The markdown table of a multi-variant run, with the ratio to cuBLAS when it ran.
fn table(rows: &[Report], gpu: bool) -> String {
    let cublas = |dtype: Dtype| {
        rows.iter()
            .find(|r| r.variant == "cublas" && r.problem.dtype == dtype)
    };
    let mut out = String::from("| variant | dtype | median ms | TFLOP/s | vs cuBLAS | check |\n|---|---|---:|---:|---:|---|\n");
    for r in rows {
        let ratio = match cublas(r.problem.dtype) {
            Some(c) if gpu => format!("{:.3}", c.median_ms / r.median_ms),
            _ => "-".into(),
        };
        let check = match &r.check {
            Some(c) if c.passed() => format!("pass ({:.1e})", c.relative_frobenius),
            Some(c) => format!("FAIL ({:.1e})", c.relative_frobenius),
            None => "skipped".into(),
        };
        let tflops = if gpu {
            format!("{:.2}", r.tflops())
        } else {
            "-".into()
        };
        out += &format!(
            "| {} | {} | {:.3} | {tflops} | {ratio} | {check} |\n",
            r.variant,
            r.problem.dtype.name(),
            r.median_ms
        );
    }
    out
}
