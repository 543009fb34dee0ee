//! `cargo run -p host -- --variant NAME …`: variants run on one problem, checked and timed.
//! `cargo run -p host -- experiment NAME …`: an experiment of the source documents
//! (`host::experiments`).
use anyhow::Result;
use clap::Parser;
use gpu_gemm::fp8::quantize::Fp8Problem;
use gpu_gemm::problem::{Init, Problem, Transposes};
use gpu_gemm::registry::{self, Variant};
use gpu_gemm::run::{execute_many, with_layout, Backend, Clock, Engine, Report, Timing};
use gpu_gemm::Gemm;
use host::cli::{Cli, Command};
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

/// The yardstick of `--compare cublas-fast-accum` (e4m3).
const FAST_ACCUM: &str = "cublas-fast-accum";

/// Ok(false) when a check failed or a variant could not run.
fn run() -> Result<bool> {
    let cli = Cli::parse();
    if let Some(Command::Experiment(experiment)) = &cli.command {
        return host::experiments::run(experiment);
    }
    if let Some(Command::Rank(args)) = &cli.command {
        return Ok(host::parallel::rank_main(
            &args.plan()?,
            &args.id,
            args.dtype.dtype(),
        ));
    }
    let seed = cli.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_secs())
    });
    if let Some(run) = cli.parallel_run(seed) {
        let run = run?;
        let emulate = match cli.backend {
            Some(b) => b == gpu_gemm::run::BackendChoice::Emu,
            None => gpu_gemm::gpu::Gpu::init_driver().is_err(),
        };
        if emulate {
            return host::parallel::run_on_emulator(&run);
        }
        println!("seed {seed}; starting {} ranks", run.gpus);
        let reports = host::parallel::launch(&run)?;
        let passed = host::parallel::print(&run, &reports);
        if let Some(path) = &cli.parallel.json {
            host::parallel::save(&run, &reports, path)?;
        }
        if let Some((name, _)) = host::parallel::Figures::from_reports(&reports).overlapped {
            println!("rank 0's fastest overlapped run ({name}), step by step (CUDA events):");
            for line in host::parallel::timeline(&reports[0], &name) {
                println!("  {line}");
            }
        }
        return Ok(passed);
    }
    if cli.list {
        print!("{}", registry::listing());
        return Ok(true);
    }
    // "Both" are f32 and f64: a 16-bit --dtype beside it would be dropped without a word.
    let dtype = cli.dtype.dtype();
    if cli.both_dtypes && dtype.is_16bit() {
        anyhow::bail!(
            "--both-dtypes runs f32 and f64; for {0} give --dtype {0} without it",
            dtype.name()
        );
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
        let variant = match (registry::find(name)?, cli.math) {
            (Variant::Auto(_), Some(math)) => Variant::Auto(math),
            (Variant::Tuned(_), Some(math)) => Variant::Tuned(math),
            (variant, _) => variant,
        };
        let takes_tile = !variant.tiles().is_empty();
        let tile = tile.or(if takes_tile || items.len() == 1 {
            cli.tile
        } else {
            None
        });
        variants.push((variant, tile));
    }
    // --math is auto's and tuned's contract; a named kernel runs its own arithmetic, which
    // --math would silently misdescribe.
    let chooses = |v: &Variant| matches!(v, Variant::Auto(_) | Variant::Tuned(_));
    if let Some(math) = cli.math {
        if !variants.iter().any(|(v, _)| chooses(v)) {
            anyhow::bail!(
                "--math {} is the contract of `--variant auto` and `--variant tuned`; the named \
                 variants run their own arithmetic (`--list` says which)",
                math.name()
            );
        }
    }
    if cli.tuning_cache.is_some() && !variants.iter().any(|(v, _)| matches!(v, Variant::Tuned(_))) {
        anyhow::bail!("--tuning-cache is the cache of `--variant tuned`, which is not in the list");
    }
    // Say where a list's --tile does not go, rather than drop it silently.
    if let (Some(tile), true) = (cli.tile, items.len() > 1) {
        let untiled: Vec<&str> = variants
            .iter()
            .filter(|(v, _)| v.tiles().is_empty())
            .map(|(v, _)| v.name())
            .collect();
        if !untiled.is_empty() {
            println!(
                "--tile {tile} applies to the variants of the list that take a tile; not to {}",
                untiled.join(", ")
            );
        }
    }
    let mut yardsticks = Vec::new();
    for name in &cli.compare {
        if name == FAST_ACCUM {
            if !cli.dtype.dtype().is_fp8() {
                anyhow::bail!(
                    "--compare {FAST_ACCUM} is cuBLASLt's FP8 mode: give --dtype e4m3 or e4m3-e5m2"
                );
            }
            yardsticks.push(FAST_ACCUM);
            continue;
        }
        let yardstick = registry::find(name)?;
        if !variants.iter().any(|(v, _)| v.name() == name) {
            variants.push((yardstick, None));
        }
        yardsticks.push(yardstick.name());
    }
    // CPU variants run on the host whatever the backend, so a list of only those opens none
    // (the emulator stands in, unused).
    let cpu_only = variants.iter().all(|(v, _)| matches!(v, Variant::Cpu(_)));
    let (backend, note) = if cpu_only {
        (Backend::Emulator, None)
    } else {
        Backend::open(cli.backend, cli.ptx.as_deref())?
    };
    if let Some(note) = note {
        println!("{note}");
    }
    // `tuned` chooses through the library's call, on this backend.
    let gemm = match &cli.tuning_cache {
        Some(path) => Gemm::on(backend).with_tuning_cache(path),
        None => Gemm::on(backend),
    };
    let backend = gemm.backend();
    let gpu = backend.is_gpu();
    if cli.cold && !gpu {
        anyhow::bail!(
            "--cold times GPU runs (L2 flushed before each, the launch latency hidden); {} has neither",
            if cpu_only { "the host CPU" } else { "the emulator" }
        );
    }
    if cli.clock == Clock::Kernels && !gpu {
        anyhow::bail!(
            "--clock kernels reads the GPU's stamps for its kernels; {} has only the wall clock",
            if cpu_only {
                "the host CPU"
            } else {
                "the emulator"
            }
        );
    }
    let seed = cli.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    // 512³ is 003's smallest CPU size: the triple loop takes well under a second there.
    let default_size = match (gpu, cpu_only) {
        (true, _) => 4096,
        (false, true) => 512,
        (false, false) => 64,
    };
    let problem = cli.problem(default_size, seed)?;
    // Times that measure performance (GPU, or only CPU variants) get warm-ups, 20 runs and
    // the 3 s budget; emulation time is not worth repeating.
    let measures = gpu || cpu_only;
    let timing = Timing {
        warmup: cli.warmup.unwrap_or(match (gpu, cpu_only) {
            (true, _) => 3,
            (false, true) => 1,
            (false, false) => 0,
        }),
        iters: cli.iters.unwrap_or(if measures { 20 } else { 1 }),
        budget_ms: if measures && cli.iters.is_none() {
            3000.0
        } else {
            f64::INFINITY
        },
        check: !cli.no_check,
        cold: cli.cold,
        clock: cli.clock,
    };
    let on = if cpu_only {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        format!("the host CPU ({threads} hardware threads)")
    } else {
        backend.describe()
    };
    let s = problem.shape;
    // The transposes are named only when they are not the N,N every kernel computes: " TN".
    let transposes = match problem.transposes {
        Transposes::NN => String::new(),
        t => format!(" {}", t.name()),
    };
    let formula = match problem.transposes {
        Transposes::NN => String::new(),
        t => format!(" ({})", t.formula()),
    };
    println!(
        "m={} n={} k={}{transposes}{formula} lda={} ldb={} ldc={} alpha={} beta={} on {on}",
        s.m, s.n, s.k, s.lda, s.ldb, s.ldc, problem.alpha, problem.beta,
    );
    let b = problem.batch;
    match problem.groups {
        gpu_gemm::problem::GroupLayout::Contiguous => println!(
            "grouped GEMM, contiguous: {} groups of {} columns one after another in B and C, an A \
             each (stride {} elements); one launch",
            b.count,
            s.n / b.count,
            b.stride_a
        ),
        gpu_gemm::problem::GroupLayout::Masked => {
            let counts = problem.group_table();
            println!(
                "grouped GEMM, masked: {} groups of up to {} columns (their counts {:?}, read on \
                 the device), each its own A, B and C; one launch",
                b.count, s.n, counts
            )
        }
        gpu_gemm::problem::GroupLayout::None if b.is_batched() => {
            println!(
                "strided batch: {} members, one launch; strides A={} B={} C={} elements",
                b.count, b.stride_a, b.stride_b, b.stride_c
            );
        }
        gpu_gemm::problem::GroupLayout::None => {}
    }
    if !problem.epilogue.is_none() {
        use gpu_gemm::problem::{Activation, Bias};
        let e = problem.epilogue;
        let sum = format!(
            "alpha·op(A)·op(B) + beta·C{}",
            match e.bias() {
                Bias::None => "",
                Bias::PerRow => " + bias[row]",
                Bias::PerColumn => " + bias[column]",
            }
        );
        let formula = match e.activation() {
            Activation::Identity => sum,
            a => format!("{}({sum})", format!("{a:?}").to_lowercase()),
        };
        println!("fused epilogue: C = {formula}");
        if e.amax() {
            println!(
                "amax: the largest |C| before rounding and the e4m3 scale 448/amax, gathered by the epilogue"
            );
        }
    }
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
        for pitch in cli.layouts() {
            let p = with_layout(Problem { dtype, ..problem }, pitch)?;
            let pitched = match pitch {
                Some(bytes) => {
                    let s = p.shape;
                    println!(
                        "{} pitched to {bytes} B: lda={} ldb={} ldc={}",
                        dtype.name(),
                        s.lda,
                        s.ldb,
                        s.ldc
                    );
                    format!(" (pitch {bytes} B)")
                }
                None => String::new(),
            };
            let layout = format!("{transposes}{pitched}");
            // In a table over both dtypes, a variant with one dtype only sits out the other,
            // saying so; asked for alone, it is refused (`run::plan`).
            let runnable: Vec<_> = variants
                .iter()
                .copied()
                .filter(|(v, _)| {
                    let runs = v.dtypes().contains(&dtype) || !cli.both_dtypes;
                    if !runs {
                        println!("{}: no {} version, skipped", v.name(), dtype.name());
                    }
                    runs
                })
                .collect();
            // `tuned` becomes the kernel it chose, under a label that says so.
            let mut labels: Vec<Option<String>> = Vec::new();
            let mut chosen = Vec::new();
            for (v, tile) in runnable {
                let Variant::Tuned(math) = v else {
                    chosen.push((v, tile));
                    labels.push(None);
                    continue;
                };
                match host::tuned::resolve(&gemm, &p, math, tile) {
                    Ok(r) => {
                        println!("tuned{layout} {}: {}", dtype.name(), r.choice);
                        chosen.push((r.variant, r.tile));
                        labels.push(Some(r.label));
                    }
                    Err(e) => {
                        all_passed = false;
                        eprintln!("tuned{layout} {}: error: {e:#}", dtype.name());
                    }
                }
            }
            let runnable = chosen;
            let mut printed = 0;
            let print = |r: &Result<Report>| {
                let label = labels.get(printed).cloned().flatten();
                printed += 1;
                print_one(r, label.as_deref(), &layout, timing)
            };
            let reports = if dtype.is_fp8() {
                let fp8 = Fp8Problem {
                    scaling: cli.scaling,
                    outliers: cli.outliers,
                    ..Fp8Problem::per_tensor(&p)
                };
                let fast = yardsticks.contains(&FAST_ACCUM);
                gpu_gemm::fp8::run::execute_with_yardsticks(
                    backend, &runnable, fast, &fp8, timing, print,
                )
            } else {
                execute_many(backend, &runnable, &p, timing, print)
            };
            for (i, report) in reports.into_iter().enumerate() {
                // (The FP8 pipeline's fast-accumulation yardstick follows the variants.)
                let name = match (labels.get(i), runnable.get(i)) {
                    (Some(Some(label)), _) => label.as_str(),
                    (_, Some((v, _))) => v.name(),
                    _ => FAST_ACCUM,
                };
                match report {
                    Ok(mut r) => {
                        all_passed &= r.passed();
                        if let Some(Some(label)) = labels.get(i) {
                            r.variant = label.clone();
                        }
                        r.variant += &layout;
                        rows.push(r);
                    }
                    Err(e) => {
                        all_passed = false;
                        eprintln!("{name}{layout} {}: error: {e:#}", dtype.name());
                    }
                }
            }
        }
    }
    if rows.len() > 1 {
        println!("\n{}", table(&rows, &yardsticks));
    }
    Ok(all_passed)
}

/// `layout` follows the variant's name: "", " TN" (the transposes, when not N,N),
/// " (pitch 512 B)", or both.
/// `label` replaces the variant's own (`tuned→…` for the kernel tuning chose).
fn print_one(report: &Result<Report>, label: Option<&str>, layout: &str, timing: Timing) {
    let Ok(r) = report else { return };
    let speed = match r.engine {
        Engine::Gpu => format!("{:.2} TFLOP/s", r.tflops()),
        Engine::Cpu => format!("{:.2} GFLOP/s on the CPU", r.tflops() * 1e3),
        Engine::Emulator => "(emulator: CPU wall time, not GPU performance)".to_string(),
    };
    // The time budget (no --iters) can end the timing before `iters` runs: say so.
    let budget = if r.runs < timing.iters && timing.budget_ms.is_finite() {
        format!(
            " (the {:.0} s timing budget ended it; --iters {} runs them all)",
            timing.budget_ms / 1e3,
            timing.iters
        )
    } else {
        String::new()
    };
    let cold = if timing.cold && r.engine == Engine::Gpu {
        ", each behind a 256 MiB write (--cold: L2 flushed, launch latency hidden)"
    } else {
        ""
    };
    let clock = if timing.clock == Clock::Kernels && r.engine == Engine::Gpu {
        ", timed by the kernels' own stamps (--clock kernels)"
    } else {
        ""
    };
    println!(
        "{}{layout} {} ({}): median {:.3} ms, min {:.3} ms over {} runs{budget} after {} warm-up{cold}{clock}; {speed}",
        label.unwrap_or(&r.variant),
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

/// The markdown table of a multi-variant run. "on" says what ran each row (GPU, CPU or the
/// emulator); TFLOP/s and the ratio to each yardstick of `--compare` (when it ran on the same
/// problem) are given for the rows whose time measures performance, GPU and CPU alike.
fn table(rows: &[Report], yardsticks: &[&str]) -> String {
    // The same problem, up to the amax, which a cuBLAS yardstick runs without.
    let without_amax = |p: &Problem| Problem {
        epilogue: p.epilogue.without_amax(),
        ..*p
    };
    let find = |name: &str, p: &Problem| {
        rows.iter()
            .find(|r| r.entry == name && without_amax(&r.problem) == without_amax(p))
    };
    let mut out = String::from("| variant | on | dtype | median ms | TFLOP/s |");
    for y in yardsticks {
        out += &format!(" vs {y} |");
    }
    out += " check |\n|---|---|---|---:|---:|";
    out += &"---:|".repeat(yardsticks.len());
    out += "---|\n";
    for r in rows {
        let performance = r.engine.measures_performance();
        let check = match &r.check {
            Some(c) => {
                let verdict = if c.passed() { "pass" } else { "FAIL" };
                // For a 16-bit C, the error beyond its one rounding too.
                match c.beyond_rounding {
                    Some(b) => format!(
                        "{verdict} ({:.1e}; {b:.1e} past rounding)",
                        c.relative_frobenius
                    ),
                    None => format!("{verdict} ({:.1e})", c.relative_frobenius),
                }
            }
            None => "skipped".into(),
        };
        let tflops = if performance {
            significant(r.tflops())
        } else {
            "-".into()
        };
        out += &format!(
            "| {} | {} | {} | {:.3} | {tflops} |",
            r.variant,
            r.engine.name(),
            r.problem.dtype.name(),
            r.median_ms
        );
        for y in yardsticks {
            match find(y, &r.problem) {
                Some(c) if performance => out += &format!(" {:.3} |", c.median_ms / r.median_ms),
                _ => out += " - |",
            }
        }
        out += &format!(" {check} |\n");
    }
    out
}

/// Two decimals, or two significant digits below 0.1 (a CPU's 0.0012 TFLOP/s is not 0.00).
fn significant(x: f64) -> String {
    let decimals = if x > 0.0 && x < 0.1 {
        (1.0 - x.log10().floor()).min(9.0) as usize
    } else {
        2
    };
    format!("{x:.decimals$}")
}
