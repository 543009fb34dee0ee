//! `host --gpus N --parallel FORM …`: one linear layer across the GPUs of this host.
//!
//! The launcher ([`launch`]) makes NCCL's unique id, starts one `host rank …` process per GPU
//! (this same program, so that what runs on each GPU is exactly what a multi-host launcher would
//! start), reads each rank's report (one JSON line) and stops every rank when one fails: the
//! failed rank's own message is the error, and ranks still running a grace period later are
//! killed and say so. On the emulator (`--backend emu`) the ranks are threads
//! ([`gpu_gemm::parallel::local`]).
use anyhow::{bail, Result};
use gpu_gemm::parallel::{Form, Layer, Overlap, ParallelError};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A plain description of a tensor-parallel run.
#[derive(Clone, Debug)]
pub struct ParallelRun {
    /// The form.
    pub form: Form,
    /// The layer.
    pub layer: Layer,
    /// Ranks, one per GPU (devices 0..gpus).
    pub gpus: u32,
    /// The overlaps to time, each checked.
    pub overlaps: Vec<Overlap>,
    /// Token chunks per shard, one chunked run for each.
    pub chunks: Vec<u32>,
    /// Also time the GEMMs alone and the collectives alone.
    pub parts: bool,
    /// Also time the whole layer on GPU 0 alone.
    pub whole: bool,
    /// `bf16` or `f16`.
    pub dtype: &'static str,
    /// Warm-ups and timed runs.
    pub warmup: usize,
    /// Timed runs.
    pub iters: usize,
    /// The inputs' seed.
    pub seed: u64,
    /// Multiprocessors left to NCCL.
    pub comm_sms: u32,
    /// The ranks' watchdog.
    pub watchdog: Duration,
    /// A rank that fails on purpose before joining the communicator.
    pub fail_rank: Option<u32>,
    /// `auto` for every GEMM instead of `tuned`.
    pub untuned: bool,
}

/// How long the launcher lets the other ranks end on their own after one failed.
const GRACE: Duration = Duration::from_secs(5);

/// The line rank 0 prints with NCCL's unique id, for the launcher to pass on.
pub const ID: &str = "RANK-ID ";
/// The report line a rank prints.
pub const REPORT: &str = "RANK-REPORT ";
/// The error line a rank prints before it exits with status 3.
pub const ERROR: &str = "RANK-ERROR ";

/// The arguments of `host rank` for rank `rank` of `run`.
pub fn rank_arguments(run: &ParallelRun, id: &str, rank: u32) -> Vec<String> {
    let l = run.layer;
    let mut args: Vec<String> = [
        "rank",
        "--id",
        id,
        "--rank",
        &rank.to_string(),
        "--ranks",
        &run.gpus.to_string(),
        "--parallel",
        run.form.name(),
        "--tokens",
        &l.tokens.to_string(),
        "--out-features",
        &l.out_features.to_string(),
        "--in-features",
        &l.in_features.to_string(),
        "--overlap",
        &run.overlaps
            .iter()
            .map(|o| o.name())
            .collect::<Vec<_>>()
            .join(","),
        "--chunks",
        &run.chunks
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(","),
        "--dtype",
        run.dtype,
        "--warmup",
        &run.warmup.to_string(),
        "--iters",
        &run.iters.to_string(),
        "--seed",
        &run.seed.to_string(),
        "--comm-sms",
        &run.comm_sms.to_string(),
        "--watchdog",
        &run.watchdog.as_secs().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if run.parts {
        args.push("--parts".into());
    }
    if run.whole && rank == 0 {
        args.push("--whole".into());
    }
    if run.fail_rank == Some(rank) {
        args.push("--fail".into());
    }
    if run.untuned {
        args.push("--untuned".into());
    }
    args
}

/// Starts the ranks, waits for their reports, and returns them in rank order; the first
/// failure (in time) is the error, naming its rank and cause.
///
/// Rank 0 makes NCCL's unique id (`--id new`) and prints it; the launcher passes it to the
/// others, as an MPI job broadcasts it.
pub fn launch(run: &ParallelRun) -> Result<Vec<Value>, ParallelError> {
    let library_path = gpu_gemm::parallel::nccl::loader_path()?;
    let exe = std::env::current_exe().map_err(|e| ParallelError::RankFailed {
        rank: 0,
        cause: format!("cannot find this program to start the ranks: {e}"),
    })?;
    let (lines, from_ranks) = mpsc::channel::<(u32, String)>();
    let mut children: Vec<Option<Child>> = Vec::new();
    let start = |rank: u32, id: &str, children: &mut Vec<Option<Child>>| {
        let mut command = Command::new(&exe);
        command
            .args(rank_arguments(run, id, rank))
            // NVLink multicast stays off (it can take a shared host's GPUs out of service).
            .env("NCCL_NVLS_ENABLE", "0")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if let Some(path) = &library_path {
            command.env("LD_LIBRARY_PATH", path);
        }
        let mut child = command.spawn().map_err(|e| ParallelError::RankFailed {
            rank,
            cause: format!("cannot start its process: {e}"),
        })?;
        let out = child.stdout.take().expect("piped above");
        let lines = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = lines.send((rank, line));
            }
        });
        children.push(Some(child));
        Ok::<(), ParallelError>(())
    };
    start(0, "new", &mut children)?;
    let mut reports: Vec<Option<Value>> = vec![None; run.gpus as usize];
    let mut errors: Vec<Option<String>> = vec![None; run.gpus as usize];
    let mut first_failure: Option<(u32, String, Instant)> = None;
    let mut fates: Vec<String> = Vec::new();
    loop {
        while let Ok((rank, line)) = from_ranks.try_recv() {
            if let Some(id) = line.strip_prefix(ID) {
                for rank in 1..run.gpus {
                    start(rank, id, &mut children)?;
                }
            } else if let Some(report) = line.strip_prefix(REPORT) {
                reports[rank as usize] = serde_json::from_str(report).ok();
            } else if let Some(error) = line.strip_prefix(ERROR) {
                errors[rank as usize] = Some(error.to_string());
            } else {
                println!("[rank {rank}] {line}");
            }
        }
        let mut running = 0;
        for (rank, slot) in children.iter_mut().enumerate() {
            let Some(child) = slot else { continue };
            match child.try_wait() {
                Ok(Some(status)) if status.success() => *slot = None,
                Ok(Some(status)) => {
                    // Let the reader thread deliver the rank's last lines.
                    std::thread::sleep(Duration::from_millis(100));
                    while let Ok((r, line)) = from_ranks.try_recv() {
                        if let Some(error) = line.strip_prefix(ERROR) {
                            errors[r as usize] = Some(error.to_string());
                        }
                    }
                    let cause = errors[rank]
                        .clone()
                        .unwrap_or_else(|| format!("its process ended with {status}"));
                    if first_failure.is_none() {
                        first_failure = Some((rank as u32, cause.clone(), Instant::now()));
                    } else {
                        fates.push(format!("rank {rank} then stopped: {cause}"));
                    }
                    *slot = None;
                }
                Ok(None) => running += 1,
                Err(e) => {
                    fates.push(format!("rank {rank}: cannot watch its process: {e}"));
                    *slot = None;
                }
            }
        }
        if let Some((failed, _, at)) = &first_failure {
            if at.elapsed() > GRACE {
                for (rank, slot) in children.iter_mut().enumerate() {
                    if let Some(mut child) = slot.take() {
                        let _ = child.kill();
                        let _ = child.wait();
                        fates.push(format!(
                            "rank {rank} stopped by the launcher {} s after rank {failed} failed",
                            GRACE.as_secs()
                        ));
                    }
                }
                running = 0;
            }
        }
        if running == 0 && (children.len() == run.gpus as usize || first_failure.is_some()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if let Some((rank, cause, _)) = first_failure {
        let mut cause = cause;
        for fate in fates {
            cause.push_str("; ");
            cause.push_str(&fate);
        }
        return Err(ParallelError::RankFailed { rank, cause });
    }
    reports
        .into_iter()
        .enumerate()
        .map(|(rank, r)| {
            r.ok_or_else(|| ParallelError::RankFailed {
                rank: rank as u32,
                cause: "it ended without a report".into(),
            })
        })
        .collect()
}

/// A rank's report as the JSON line the launcher reads.
pub fn report_json(r: &gpu_gemm::parallel::nccl::RankReport) -> Value {
    json!({
        "rank": r.rank,
        "device": r.device,
        "choice": r.choice,
        "measured": r.measured.iter().map(|m| json!({
            "name": m.name, "median_ms": m.median(), "times_ms": m.times,
        })).collect::<Vec<_>>(),
        "checks": r.checks.iter().map(|(name, c)| json!({
            "run": name, "checked": c.checked, "worst": c.worst, "passed": c.passed(),
        })).collect::<Vec<_>>(),
        "timelines": r.timelines.iter().map(|(name, spans)| json!({
            "run": name,
            "spans": spans.iter().map(|s| json!({
                "lane": format!("{:?}", s.lane).to_lowercase(), "what": s.what,
                "begin_ms": s.begin, "end_ms": s.end,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// The slowest rank's median of run `name` (every rank waits for the slowest).
pub fn slowest(reports: &[Value], name: &str) -> Option<f64> {
    reports
        .iter()
        .filter_map(|r| {
            r["measured"]
                .as_array()?
                .iter()
                .find(|m| m["name"] == name)?["median_ms"]
                .as_f64()
        })
        .reduce(f64::max)
}

/// The name of the copy-first run (all-gather's shards by the copy engines, then one GEMM): a
/// schedule without overlap, kept apart from the overlapped runs.
pub const COPY_FIRST: &str = "copy-first:1";

/// Each overlapped run (`chunked:N`, `ring:N`, `copy:N`: overlap and chunk count) and its
/// slowest-rank median, in the order run.
pub fn overlapped_runs(reports: &[Value]) -> Vec<(String, f64)> {
    let Some(first) = reports.first().and_then(|r| r["measured"].as_array()) else {
        return Vec::new();
    };
    first
        .iter()
        .filter_map(|m| {
            m["name"]
                .as_str()
                .filter(|n| n.contains(':') && *n != COPY_FIRST)
        })
        .filter_map(|name| Some((name.to_string(), slowest(reports, name)?)))
        .collect()
}

/// The figures of one layer's run: each kind's time and what the overlap bought.
#[derive(Clone, Debug, Default)]
pub struct Figures {
    /// The whole layer on one GPU.
    pub whole: Option<f64>,
    /// Each rank's GEMMs alone.
    pub gemm: Option<f64>,
    /// The collectives alone.
    pub comm: Option<f64>,
    /// The sequential run.
    pub sequential: Option<f64>,
    /// The fastest overlapped run: its name (`chunked:2`) and time.
    pub overlapped: Option<(String, f64)>,
    /// The copy-first run.
    pub copy_first: Option<f64>,
}

impl Figures {
    /// From the ranks' reports.
    pub fn from_reports(reports: &[Value]) -> Self {
        Self {
            whole: slowest(reports, "whole"),
            gemm: slowest(reports, "gemm"),
            comm: slowest(reports, "comm"),
            sequential: slowest(reports, "none"),
            overlapped: overlapped_runs(reports)
                .into_iter()
                .min_by(|a, b| a.1.total_cmp(&b.1)),
            copy_first: slowest(reports, COPY_FIRST),
        }
    }

    /// The fastest overlapped time.
    pub fn overlapped(&self) -> Option<f64> {
        self.overlapped.as_ref().map(|(_, t)| *t)
    }

    /// (sequential − overlapped) / communication alone.
    pub fn hidden(&self) -> Option<f64> {
        Some((self.sequential? - self.overlapped()?) / self.comm?)
    }

    /// T₁ / (P·T_P) of a time on P GPUs.
    pub fn efficiency(&self, time: Option<f64>, gpus: u32) -> Option<f64> {
        Some(self.whole? / (gpus as f64 * time?))
    }

    /// The fastest of every schedule run: sequential, overlapped, copy-first.
    pub fn best(&self) -> Option<f64> {
        [self.sequential, self.overlapped(), self.copy_first]
            .into_iter()
            .flatten()
            .reduce(f64::min)
    }

    /// max(compute, communication): the overlapped time no schedule beats.
    pub fn ideal(&self) -> Option<f64> {
        Some(self.gemm?.max(self.comm?))
    }
}

/// Prints the run's table and checks; Ok(false) when a check failed.
pub fn print(run: &ParallelRun, reports: &[Value]) -> bool {
    let f = Figures::from_reports(reports);
    println!(
        "{} {} on {} × {}, {}",
        run.form.name(),
        run.layer,
        run.gpus,
        reports[0]["device"].as_str().unwrap_or("?"),
        run.dtype
    );
    println!(
        "rank 0's GEMM: {}",
        reports[0]["choice"].as_str().unwrap_or("?")
    );
    let cell = |x: Option<f64>| x.map_or("–".to_string(), |v| format!("{v:.3}"));
    println!("| run | ms (slowest rank) | efficiency T₁/(P·T) |");
    println!("|---|---:|---:|");
    // T₁ is the yardstick itself: no efficiency of its own.
    if f.whole.is_some() {
        println!("| one GPU, whole layer (T₁) | {} | – |", cell(f.whole));
    }
    for (name, time) in [
        ("GEMMs alone", f.gemm),
        ("communication alone", f.comm),
        ("ideal max(GEMM, comm)", f.ideal()),
        ("sequential", f.sequential),
        ("copy-first (copy engines, then one GEMM)", f.copy_first),
    ] {
        if time.is_some() {
            println!(
                "| {name} | {} | {} |",
                cell(time),
                cell(f.efficiency(time, run.gpus))
            );
        }
    }
    for (name, time) in overlapped_runs(reports) {
        let (overlap, chunks) = name.split_once(':').unwrap_or((&name, "?"));
        println!(
            "| {overlap}, {chunks} chunk{} a shard | {} | {} |",
            if chunks == "1" { "" } else { "s" },
            cell(Some(time)),
            cell(f.efficiency(Some(time), run.gpus))
        );
    }
    if let Some(h) = f.hidden() {
        println!(
            "communication hidden by the fastest overlap ({}): {:.0}% (sequential − overlapped over communication alone)",
            f.overlapped.as_ref().map_or("", |(n, _)| n.as_str()),
            100.0 * h
        );
    }
    let mut passed = true;
    for r in reports {
        for c in r["checks"].as_array().into_iter().flatten() {
            let ok = c["passed"].as_bool().unwrap_or(false);
            passed &= ok;
            println!(
                "rank {} {}: {} ({} sampled elements, worst {:.3} of the bound)",
                r["rank"],
                c["run"].as_str().unwrap_or("?"),
                if ok { "passed" } else { "FAILED" },
                c["checked"],
                c["worst"].as_f64().unwrap_or(f64::NAN)
            );
        }
    }
    passed
}

/// The chunked run's timeline of one rank, as text: each step's lane, start and end.
pub fn timeline(report: &Value, run: &str) -> Vec<String> {
    let Some(t) = report["timelines"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["run"] == run))
    else {
        return Vec::new();
    };
    t["spans"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            format!(
                "{:>7} {:>8.3} → {:>8.3} ms  {}",
                s["lane"].as_str().unwrap_or("?"),
                s["begin_ms"].as_f64().unwrap_or(f64::NAN),
                s["end_ms"].as_f64().unwrap_or(f64::NAN),
                s["what"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

/// Runs the layer on the emulator's threads and prints each rank's check.
pub fn run_on_emulator(run: &ParallelRun) -> Result<bool> {
    // The emulator runs every thread of every kernel on the CPU: a model's layer (the defaults,
    // 8192 × 28672 × 8192) would take days.
    const EMULATOR_MACS: f64 = (1u64 << 24) as f64;
    if run.layer.flops() / 2.0 > EMULATOR_MACS {
        bail!(
            "the emulator runs small layers ({} is {:.1e} multiply-adds, the limit {:.1e}): give e.g. \
             --tokens 96 --out-features 96 --in-features 48, or run on GPUs",
            run.layer,
            run.layer.flops() / 2.0,
            EMULATOR_MACS
        );
    }
    use gpu_gemm::half::{bf16, f16};
    use gpu_gemm::{Algorithm, Math};
    let mut passed = true;
    let runs = run.overlaps.iter().flat_map(|&overlap| match overlap {
        Overlap::None | Overlap::CopyFirst => vec![(overlap, 1)],
        Overlap::Chunked | Overlap::Ring | Overlap::Copy => {
            run.chunks.iter().map(|&c| (overlap, c)).collect()
        }
    });
    fn emulate<T: gpu_gemm::Element>(
        run: &ParallelRun,
        overlap: Overlap,
        chunks: u32,
    ) -> Result<Vec<gpu_gemm::parallel::local::LocalRank>, ParallelError> {
        let algorithm = Algorithm::Auto(Math::Strict);
        let (form, layer, gpus, seed) = (run.form, run.layer, run.gpus, run.seed);
        gpu_gemm::parallel::local::run::<T>(
            form,
            layer,
            gpus,
            overlap,
            chunks,
            &algorithm,
            seed,
            |_| {},
        )
    }
    for (overlap, chunks) in runs {
        let ranks = match run.dtype {
            "bf16" => emulate::<bf16>(run, overlap, chunks)?,
            "f16" => emulate::<f16>(run, overlap, chunks)?,
            other => bail!("tensor-parallel runs take bf16 or f16, not {other}"),
        };
        for r in ranks {
            passed &= r.check.passed();
            println!(
                "emulator, {} {} over {} ranks, {} ({chunks} chunks): rank {} {} ({} sampled elements, worst {:.3} of the bound)",
                run.form.name(),
                run.layer,
                run.gpus,
                overlap.name(),
                r.rank,
                if r.check.passed() { "passed" } else { "FAILED" },
                r.check.checked,
                r.check.worst
            );
        }
    }
    Ok(passed)
}

/// `host rank`: runs one rank and prints its report (or its error) as one line for the
/// launcher; false when it failed.
pub fn rank_main(
    plan: &gpu_gemm::parallel::nccl::RankPlan,
    id: &str,
    dtype: kernels_gpu::gemm::Dtype,
) -> bool {
    use gpu_gemm::half::{bf16, f16};
    use gpu_gemm::parallel::nccl::{run_rank, UniqueId};
    let id = if id == "new" {
        UniqueId::new().inspect(|id| println!("{ID}{}", id.to_hex()))
    } else {
        UniqueId::from_hex(id).map_err(|e| ParallelError::RankFailed {
            rank: plan.rank,
            cause: format!("--id: {e}"),
        })
    };
    let result = id.and_then(|id| match dtype {
        kernels_gpu::gemm::Dtype::F16 => run_rank::<f16>(plan, &id),
        _ => run_rank::<bf16>(plan, &id),
    });
    match result {
        Ok(report) => {
            println!("{REPORT}{}", report_json(&report));
            true
        }
        Err(e) => {
            println!("{ERROR}{e}");
            false
        }
    }
}

/// Writes the run and the ranks' reports as one JSON file (what `host experiment parallel`
/// reads).
pub fn save(run: &ParallelRun, reports: &[Value], path: &std::path::Path) -> Result<()> {
    let l = run.layer;
    let value = json!({
        "run": {
            "form": run.form.name(), "tokens": l.tokens, "out_features": l.out_features,
            "in_features": l.in_features, "gpus": run.gpus, "dtype": run.dtype,
            "chunks": run.chunks, "comm_sms": run.comm_sms, "seed": run.seed,
            "overlaps": run.overlaps.iter().map(|o| o.name()).collect::<Vec<_>>(),
        },
        "reports": reports,
    });
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, serde_json::to_string_pretty(&value)?)?;
    Ok(())
}
