//! `host experiment parallel`: the tensor-parallel page, built from the runs `host --parallel
//! … --json FILE` saved (one file per layer) and PyTorch's figures from the same machine
//! (`xtask/scripts/tp_torch.py`'s output). It needs no GPU: the measuring is `--parallel`'s, on
//! the GPUs, and this turns the saved reports into the table, the chart and the page.
use super::chart::{BarChart, Chart};
use super::page::{Page, Section};
use super::table::{Cell, Table};
use crate::parallel::{timeline, Figures};
use anyhow::{bail, Context as _, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

pub const ID: &str = "007-parallel";

#[derive(clap::Args, Debug, Clone, Default)]
pub struct Args {
    /// The folder of the runs' JSON files (`host --parallel … --json DIR/NAME.json`)
    #[arg(long)]
    pub runs: PathBuf,
    /// PyTorch's figures on the same GPUs (the lines `tp_torch.py` prints)
    #[arg(long)]
    pub torch: Option<PathBuf>,
    /// The results folder [default: results/007-parallel]
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// One saved run: its description and the ranks' reports.
struct Run {
    form: String,
    tokens: u64,
    n: u64,
    k: u64,
    gpus: u32,
    device: String,
    reports: Vec<Value>,
}

fn read_runs(dir: &Path) -> Result<Vec<Run>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!(
            "{} holds no run (*.json from `host --parallel … --json FILE`)",
            dir.display()
        );
    }
    files
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path)?;
            let v: Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not a run's JSON", path.display()))?;
            let run = &v["run"];
            let reports = v["reports"].as_array().cloned().unwrap_or_default();
            Ok(Run {
                form: run["form"].as_str().unwrap_or("?").to_string(),
                tokens: run["tokens"].as_u64().unwrap_or(0),
                n: run["out_features"].as_u64().unwrap_or(0),
                k: run["in_features"].as_u64().unwrap_or(0),
                gpus: run["gpus"].as_u64().unwrap_or(0) as u32,
                device: reports
                    .first()
                    .and_then(|r| r["device"].as_str())
                    .unwrap_or("?")
                    .to_string(),
                reports,
            })
        })
        .collect()
}

/// PyTorch's better of sequence and fused for (form, T, N, K, GPUs), from tp_torch.py's lines.
fn torch_best(lines: &[Value], run: &Run) -> Option<(f64, &'static str)> {
    let row = lines.iter().find(|l| {
        l["form"] == run.form.as_str()
            && l["T"].as_u64() == Some(run.tokens)
            && l["N"].as_u64() == Some(run.n)
            && l["K"].as_u64() == Some(run.k)
            && l["gpus"].as_u64() == Some(run.gpus as u64)
    })?;
    let sequence = row["sequence_ms"].as_f64();
    let fused = row["fused_ms"].as_f64();
    match (sequence, fused) {
        (Some(s), Some(f)) if f < s => Some((f, "fused")),
        (Some(s), _) => Some((s, "sequence")),
        (None, Some(f)) => Some((f, "fused")),
        _ => None,
    }
}

fn geomean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some((values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
}

pub fn run(args: &Args, command_line: String) -> Result<bool> {
    let runs = read_runs(&args.runs)?;
    let torch: Vec<Value> = match &args.torch {
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v.get("form").is_some())
            .collect(),
        None => Vec::new(),
    };
    let mut table = Table::new("parallel", "Each layer's runs, slowest rank's median (ms)")
        .text_column("form")
        .text_column("T × N × K")
        .number_column("one GPU T₁")
        .number_column("GEMMs alone")
        .number_column("comm alone")
        .number_column("ideal")
        .number_column("sequential")
        .number_column("best overlap")
        .text_column("which")
        .number_column("efficiency")
        .number_column("hidden %")
        .number_column("copy-first")
        .number_column("best schedule")
        .number_column("its efficiency")
        .number_column("PyTorch")
        .number_column("× PyTorch");
    let (mut efficiencies, mut ratios, mut hidden_all, mut labels) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut best_efficiencies = Vec::new();
    let (mut seq_bars, mut best_bars, mut ideal_bars) = (Vec::new(), Vec::new(), Vec::new());
    let mut schedule_bars = Vec::new();
    let mut passed = true;
    for run in &runs {
        let f = Figures::from_reports(&run.reports);
        passed &= run.reports.iter().all(|r| {
            r["checks"]
                .as_array()
                .is_some_and(|cs| cs.iter().all(|c| c["passed"] == true))
        });
        let ms = |x: Option<f64>| x.map_or(Cell::missing("not run"), |v| Cell::fixed(v, 3));
        // The fastest schedule (sequential, overlapped, copy-first) is what a user would run.
        let ours = f.best();
        let efficiency = f.efficiency(f.overlapped(), run.gpus);
        let hidden = f.hidden();
        let torch = torch_best(&torch, run);
        let ratio = match (torch, ours) {
            (Some((t, _)), Some(o)) => Some(t / o),
            _ => None,
        };
        efficiencies.extend(efficiency);
        best_efficiencies.extend(f.efficiency(ours, run.gpus));
        hidden_all.extend(hidden);
        ratios.extend(ratio);
        let label = format!("{} {}×{}×{}", run.form, run.tokens, run.n, run.k);
        labels.push(label);
        seq_bars.push(f.efficiency(f.sequential, run.gpus));
        best_bars.push(efficiency);
        schedule_bars.push(f.efficiency(ours, run.gpus));
        ideal_bars.push(f.efficiency(f.ideal(), run.gpus));
        table.push(vec![
            Cell::text(&run.form),
            Cell::text(format!("{}×{}×{}", run.tokens, run.n, run.k)),
            ms(f.whole),
            ms(f.gemm),
            ms(f.comm),
            ms(f.ideal()),
            ms(f.sequential),
            ms(f.overlapped()),
            Cell::text(f.overlapped.as_ref().map_or("–".into(), |(n, _)| n.clone())),
            efficiency.map_or(Cell::missing("no T₁"), |e| Cell::fixed(e, 3)),
            hidden.map_or(Cell::missing("no parts"), |h| Cell::fixed(100.0 * h, 0)),
            ms(f.copy_first),
            ms(ours),
            f.efficiency(ours, run.gpus)
                .map_or(Cell::missing("no T₁"), |e| Cell::fixed(e, 3)),
            torch.map_or(Cell::missing("not measured"), |(t, _)| Cell::fixed(t, 3)),
            ratio.map_or(Cell::missing("–"), |r| Cell::times(r, 2)),
        ]);
    }
    let mut section = Section::new(table);
    let gpus = runs.first().map_or(0, |r| r.gpus);
    let min_hidden = hidden_all.iter().cloned().reduce(f64::min);
    section.finding = Some(format!(
        "Over the {} layers: scaling efficiency T₁/({gpus}·T) of the best overlap, geomean {} \
         (of the best schedule, copy-first and sequential included, {}); communication hidden, \
         worst layer {}; our best schedule against PyTorch's better of sequence and fused, \
         geomean {}.",
        runs.len(),
        geomean(&efficiencies).map_or("–".into(), |g| format!("{g:.3}")),
        geomean(&best_efficiencies).map_or("–".into(), |g| format!("{g:.3}")),
        min_hidden.map_or("–".into(), |h| format!("{:.0}%", 100.0 * h)),
        geomean(&ratios).map_or("–".into(), |g| format!("{g:.2}×")),
    ));
    section.chart = Some(Chart::Bars(BarChart {
        title: format!("Scaling efficiency on {gpus} GPUs, T₁/({gpus}·T)"),
        value_label: "efficiency (1 = the whole layer's time divided by the GPUs)".into(),
        categories: labels,
        groups: vec![
            ("sequential".into(), seq_bars),
            ("best overlap".into(), best_bars),
            ("best schedule".into(), schedule_bars),
            ("ideal max(GEMM, comm)".into(), ideal_bars),
        ],
        reference: Some((1.0, "perfect scaling".into())),
    }));
    // One overlapped run's steps, from the layer where the overlap hid the most.
    if let Some(run) = runs.iter().max_by(|a, b| {
        let h = |r: &Run| {
            Figures::from_reports(&r.reports)
                .hidden()
                .unwrap_or(f64::MIN)
        };
        h(a).total_cmp(&h(b))
    }) {
        let f = Figures::from_reports(&run.reports);
        if let Some((name, _)) = &f.overlapped {
            let lines = timeline(&run.reports[0], name);
            section.notes.push(format!(
                "Rank 0's last timed `{name}` run of {} {}×{}×{}, step by step (CUDA events, ms \
                 from the run's start):\n\n```text\n{}\n```",
                run.form,
                run.tokens,
                run.n,
                run.k,
                lines.join("\n")
            ));
        }
    }
    section.notes.push(
        "efficiency = T₁ / (P · T) with T₁ the whole layer on one GPU by the same tuned kernels; \
         hidden = (sequential − best overlap) / communication alone; ideal = max(GEMMs alone, \
         communication alone); copy-first (all-gather) brings the shards by the copy engines, then \
         runs one GEMM: no overlap, so it is not among the overlaps, but it is a schedule a user \
         can run. PyTorch: the better of NCCL then cuBLAS in sequence and its fused \
         async-TP op on symmetric memory, same GPUs, same job."
            .into(),
    );
    let device = runs.first().map_or("?".into(), |r| r.device.clone());
    let page = Page {
        id: ID,
        title: format!("Tensor-parallel GEMM on {gpus} × {device}"),
        intro: "One linear layer Y = X·Wᵀ sharded over the GPUs of one host, bf16: all-gather → GEMM \
                (X's tokens gathered, W split by out features) and GEMM → reduce-scatter (W and X split \
                by in features). Each layer is run sequentially (NCCL, then the GEMM), chunked (NCCL \
                on a second stream), as a ring (reduce-scatter's additions made by the GEMMs), and by \
                the copy engines (chunks pulled from the peers' memory through CUDA IPC)."
            .into(),
        headline: section.finding.clone().unwrap_or_default(),
        metadata: vec![
            ("device".into(), format!("{gpus} × {device}")),
            ("command".into(), command_line),
            ("runs".into(), args.runs.display().to_string()),
        ],
        sections: vec![section],
        passed,
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("results").join(ID));
    let written = page.write(&out)?;
    println!("{}", page.to_terminal());
    println!("wrote {} files into {}", written.len(), out.display());
    Ok(passed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(rank: u32, whole: Option<f64>, passed: bool) -> Value {
        let mut measured = vec![
            json!({"name": "comm", "median_ms": 0.3, "times_ms": [0.3]}),
            json!({"name": "gemm", "median_ms": 1.0, "times_ms": [1.0]}),
            json!({"name": "none", "median_ms": 1.3, "times_ms": [1.3]}),
            json!({"name": "chunked:2", "median_ms": 1.1 + 0.02 * rank as f64, "times_ms": [1.1]}),
            json!({"name": "copy:1", "median_ms": 1.05, "times_ms": [1.05]}),
        ];
        if let Some(w) = whole {
            measured.insert(0, json!({"name": "whole", "median_ms": w, "times_ms": [w]}));
        }
        json!({
            "rank": rank, "device": "GPU", "choice": "x", "measured": measured,
            "checks": [{"run": "none", "checked": 2304, "worst": 0.01, "passed": passed}],
            "timelines": [{"run": "copy:1", "spans": [
                {"lane": "compute", "what": "gemm tokens 0..1024", "begin_ms": 0.0, "end_ms": 0.5}
            ]}],
        })
    }

    #[test]
    fn the_page_takes_the_slowest_rank_and_the_fastest_overlap_and_compares_with_pytorch() {
        let dir =
            std::env::temp_dir().join(format!("gpu-gemm-parallel-page-{}", std::process::id()));
        let runs = dir.join("runs");
        std::fs::create_dir_all(&runs).unwrap();
        let run = json!({"form": "allgather", "tokens": 8192, "out_features": 10240,
                         "in_features": 8192, "gpus": 2});
        let saved =
            json!({"run": run, "reports": [report(0, Some(2.0), true), report(1, None, true)]});
        std::fs::write(runs.join("a.json"), saved.to_string()).unwrap();
        let torch = dir.join("torch.log");
        std::fs::write(
            &torch,
            "{\"torch\": \"2.11\"}\n{\"form\": \"allgather\", \"T\": 8192, \"N\": 10240, \"K\": 8192, \"gpus\": 2, \"sequence_ms\": 1.3, \"fused_ms\": 1.26}\n",
        )
        .unwrap();
        let args = Args {
            runs: runs.clone(),
            torch: Some(torch),
            out: Some(dir.join("page")),
        };
        assert!(run_page(&args));
        let page = std::fs::read_to_string(dir.join("page").join("README.md")).unwrap();
        // T₁ 2.0 over 2 × the fastest overlap (copy:1, 1.05): 0.952; hidden (1.3 − 1.05) / 0.3;
        // PyTorch's fused 1.26 over our 1.05: 1.20×.
        assert!(
            page.contains("| copy:1 | 0.952 | 83 | not run | 1.050 | 0.952 | 1.260 | 1.20× |"),
            "{page}"
        );
        assert!(dir.join("page").join("parallel.svg").exists());
        // A failed check on any rank fails the page.
        let saved =
            json!({"run": run, "reports": [report(0, Some(2.0), true), report(1, None, false)]});
        std::fs::write(runs.join("a.json"), saved.to_string()).unwrap();
        assert!(!run_page(&args));
        std::fs::remove_dir_all(&dir).ok();
    }

    fn run_page(args: &Args) -> bool {
        run(args, "host experiment parallel".into()).unwrap()
    }

    #[test]
    fn an_empty_folder_is_refused_with_what_it_should_hold() {
        let dir =
            std::env::temp_dir().join(format!("gpu-gemm-parallel-empty-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = run(
            &Args {
                runs: dir.clone(),
                ..Default::default()
            },
            String::new(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("--json FILE"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
