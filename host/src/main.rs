//! `cargo run -p host -- --variant NAME …`: one variant, one problem, checked and timed.
use anyhow::Result;
use clap::Parser;
use host::cli::Cli;
use host::registry;
use host::run::{execute, problem_from_cli, Backend, Timing};
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

/// Ok(false) when the check failed.
fn run() -> Result<bool> {
    let cli = Cli::parse();
    if cli.list {
        print!("{}", registry::listing());
        return Ok(true);
    }
    let variant = registry::find(cli.variant.as_deref().unwrap_or_default())?;
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
        check: !cli.no_check,
    };
    let s = problem.shape;
    println!(
        "{} {} m={} n={} k={} lda={} ldb={} ldc={} alpha={} beta={} on {}",
        variant.name(),
        problem.dtype.name(),
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
        if problem.init == host::problem::Init::Random {
            format!(", seed {seed}")
        } else {
            String::new()
        }
    );
    let report = execute(&backend, variant, cli.tile, &problem, timing)?;
    let speed = if gpu {
        format!("{:.2} TFLOP/s", report.tflops())
    } else {
        "(emulator: CPU wall time, not GPU performance)".to_string()
    };
    println!(
        "time ({}): median {:.3} ms, min {:.3} ms over {} runs after {} warm-up; {speed}",
        report.entry, report.median_ms, report.min_ms, report.runs, timing.warmup
    );
    match &report.check {
        Some(check) => println!("check: {}", check.summary()),
        None => println!("check: skipped (--no-check)"),
    }
    Ok(report.passed())
}
