//! Every experiment end to end on the emulator at tiny sizes, into a fresh folder: the files
//! exist, the CSVs have the expected rows and columns, the JSON parses, the page embeds the
//! tables and charts, and the computed findings name what the data says.
use clap::Parser;
use host::cli::{Cli, Command};
use host::experiments;
use kernels_gpu::gemm::Dtype;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A results folder of its own under the system's temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "host-experiment-{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `host experiment ARGS --backend emu --out DIR` and returns whether every check passed.
fn run(args: &str, out: &Path) -> bool {
    let line = format!(
        "host experiment {args} --backend emu --out {}",
        out.display()
    );
    let cli = Cli::try_parse_from(line.split_whitespace()).unwrap();
    let Some(Command::Experiment(experiment)) = cli.command else {
        panic!("`{line}` is not an experiment")
    };
    experiments::run_with_command_line(&experiment, line).unwrap()
}

/// (header, rows) of a CSV file.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader =
        csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header = reader.headers().unwrap().iter().map(String::from).collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

fn column(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column `{name}` in {header:?}"))
}

fn read_json(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("results.json")).unwrap();
    serde_json::from_str(&text).expect("results.json parses")
}

fn read_page(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("README.md")).unwrap()
}

/// The page embeds each table (its header row) and each chart, and records the run.
fn assert_page_embeds(dir: &Path, tables: &[&str]) {
    let page = read_page(dir);
    let json = read_json(dir);
    for id in tables {
        assert!(dir.join(format!("{id}.csv")).is_file(), "{id}.csv");
        let (header, _) = read_csv(&dir.join(format!("{id}.csv")));
        // The markdown header row has the CSV's columns, less the `best` mark column.
        let shown: Vec<&str> = header
            .iter()
            .map(String::as_str)
            .filter(|h| *h != "best")
            .collect();
        assert!(
            page.contains(&format!("| {} |", shown.join(" | "))),
            "the page has table {id}"
        );
        if dir.join(format!("{id}.svg")).exists() {
            let svg = std::fs::read_to_string(dir.join(format!("{id}.svg"))).unwrap();
            assert!(svg.starts_with("<svg"), "{id}.svg is an SVG");
            assert!(
                page.contains(&format!("]({id}.svg)")),
                "the page shows {id}.svg"
            );
        }
    }
    for key in ["device", "date", "command", "times"] {
        assert!(
            json["metadata"][key]
                .as_str()
                .is_some_and(|v| !v.is_empty()),
            "metadata has {key}"
        );
        assert!(page.contains(&format!("| {key} |")), "the page shows {key}");
    }
    assert!(json["metadata"]["device"]
        .as_str()
        .unwrap()
        .contains("emulator"));
    assert!(page.contains("--backend emu"), "the page shows the command");
    let headline = json["headline"].as_str().unwrap();
    assert!(page.contains(headline), "the page shows the headline");
    assert_eq!(json["tables"].as_array().unwrap().len(), tables.len());
}

/// The row marked best has the smallest time among the rows whose check passed.
fn assert_best_is_fastest(header: &[String], rows: &[Vec<String>], time_col: &str) -> usize {
    let (t, c, b) = (
        column(header, time_col),
        column(header, "check"),
        column(header, "best"),
    );
    let best: Vec<usize> = (0..rows.len()).filter(|&i| rows[i][b] == "true").collect();
    assert_eq!(best.len(), 1, "exactly one best row");
    let time = |i: usize| rows[i][t].parse::<f64>().unwrap();
    for (i, row) in rows.iter().enumerate() {
        if row[c].starts_with("pass") {
            assert!(time(best[0]) <= time(i), "row {i} is faster than the best");
        }
    }
    best[0]
}

#[test]
fn tile_sweep_000() {
    let dir = TempDir::new("000");
    assert!(run("000 --size 16", &dir.0));
    let (header, rows) = read_csv(&dir.0.join("tile-sweep.csv"));
    assert_eq!(rows.len(), 6);
    for name in [
        "tile",
        "grid",
        "block",
        "emulator wall ms",
        "speed-up vs tile 1",
    ] {
        column(&header, name);
    }
    let tiles: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(tiles, ["32", "16", "8", "4", "2", "1"]);
    assert_eq!(
        rows[5][column(&header, "grid")],
        "(16,16)",
        "16 / 1 blocks a side"
    );
    let best = assert_best_is_fastest(&header, &rows, "emulator wall ms");
    let json = read_json(&dir.0);
    let headline = json["headline"].as_str().unwrap();
    assert!(
        headline.contains(&format!("tile {} ", rows[best][0])),
        "the finding names the best tile: {headline}"
    );
    assert!(headline.contains("emulator"), "{headline}");
    assert_page_embeds(&dir.0, &["tile-sweep"]);
    assert!(read_page(&dir.0).contains("**★ "));
}

#[test]
fn progression_001() {
    let dir = TempDir::new("001");
    assert!(run("001 --size 16 --both-dtypes", &dir.0));
    let kernels = experiments::progression::progression_variants();
    for (dtype, name) in [(Dtype::F32, "f32"), (Dtype::F64, "f64")] {
        let (header, rows) = read_csv(&dir.0.join(format!("progression-{name}.csv")));
        let of_dtype = kernels
            .iter()
            .filter(|k| k.dtypes().contains(&dtype))
            .count();
        assert_eq!(
            rows.len(),
            of_dtype,
            "one row per kernel that has {name}, no cuBLAS on the emulator"
        );
        let names: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
        assert!(names.starts_with(&["v0", "v1", "v2"]) && names.contains(&"gemm128"));
        let best = assert_best_is_fastest(&header, &rows, "emulator wall ms");
        let finding = read_json(&dir.0)["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == format!("progression-{name}"))
            .unwrap()["finding"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            finding.contains(&format!("fastest was {},", rows[best][0])),
            "{finding}"
        );
    }
    assert_page_embeds(&dir.0, &["progression-f32", "progression-f64"]);
}

#[test]
fn precision_002() {
    let dir = TempDir::new("002");
    assert!(run("002 --sizes 16,32", &dir.0));
    let (header, rows) = read_csv(&dir.0.join("precision-frobenius.csv"));
    assert_eq!(header, ["variant", "n = 16", "n = 32"]);
    let names: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        names,
        [
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
            "wgmma-3xtf32"
        ],
        "the default variants less cuBLAS (GPU only)"
    );
    // TF32 keeps 10 mantissa bits: its error is 2.6e-4 (rounded) to 7e-4 (truncated) at any
    // size; every other arithmetic here is at FP32's level.
    let tf32 = |name: &str| matches!(name, "tc-tf32" | "tc-tf32-basic" | "wgmma-tf32");
    for row in &rows {
        for cell in &row[1..] {
            let error: f64 = cell.parse().unwrap();
            if tf32(&row[0]) {
                assert!(
                    error > 1e-4 && error < 2e-3,
                    "{} at n ≤ 32: {error}",
                    row[0]
                );
            } else {
                assert!(error > 0.0 && error < 1e-6, "{} at n ≤ 32: {error}", row[0]);
            }
        }
    }
    let (_, thresholds) = read_csv(&dir.0.join("precision-threshold.csv"));
    for r in &thresholds {
        let expected = if tf32(&r[0]) {
            "16"
        } else {
            "never (up to n = 32)"
        };
        assert_eq!(r[1], expected, "{}", r[0]);
    }
    let json = read_json(&dir.0);
    assert!(json["headline"].as_str().unwrap().contains("up to n = 32"));
    assert_page_embeds(
        &dir.0,
        &[
            "precision-frobenius",
            "precision-threshold",
            "precision-max-element",
        ],
    );
    assert!(read_page(&dir.0).contains("naive = v4 = v5 = gemm128"));
}

#[test]
fn cg_004() {
    let dir = TempDir::new("004");
    assert!(run("004 --size 16", &dir.0));
    let (header, rows) = read_csv(&dir.0.join("cg.csv"));
    let names: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, ["cg-shuffle", "cg-regs", "cg-tile2x2"]);
    let quoted: Vec<&str> = rows
        .iter()
        .map(|r| r[column(&header, "004 notes: % of cuBLAS")].as_str())
        .collect();
    assert_eq!(quoted, ["7", "20", "22"]);
    let best = assert_best_is_fastest(&header, &rows, "emulator wall ms");
    let headline = read_json(&dir.0)["headline"].as_str().unwrap().to_string();
    assert!(
        headline.contains(&format!("fastest was {};", rows[best][0])),
        "{headline}"
    );
    assert_page_embeds(&dir.0, &["cg"]);
}

#[test]
fn sweeps_003() {
    let dir = TempDir::new("003");
    assert!(run(
        "003 --cpu-sizes 16,32 --cpu-blocking-size 32 --gpu-sweep-size 32 --scaling-sizes 16,32",
        &dir.0
    ));
    // The CPU variants over sizes: one row per size, one time column per variant.
    let (header, rows) = read_csv(&dir.0.join("cpu-sizes.csv"));
    let cpu = [
        "cpu-naive",
        "cpu-simd",
        "cpu-blocked",
        "cpu-parallel",
        "cpu-ndarray",
    ];
    assert_eq!(rows.len(), 2);
    for name in cpu {
        let c = column(&header, &format!("{name} ms"));
        assert!(
            rows.iter().all(|r| r[c].parse::<f64>().is_ok()),
            "{name} ran"
        );
    }
    // cpu-blocked over the blockL values up to n.
    let (header, rows) = read_csv(&dir.0.join("cpu-blocking.csv"));
    let block_l: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(block_l, ["8", "16", "32"]);
    assert_best_is_fastest(&header, &rows, "CPU ms");
    // GPU basic over block sizes, GPU blocked over blockL.
    let (header, rows) = read_csv(&dir.0.join("gpu-threads.csv"));
    let sizes: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        sizes,
        ["2", "4", "8", "16", "32", "64", "128", "256", "512", "1024"]
    );
    assert_eq!(
        rows[0][column(&header, "grid")],
        "(512,1)",
        "32² threads in 2s"
    );
    assert_best_is_fastest(&header, &rows, "emulator wall ms");
    let (header, rows) = read_csv(&dir.0.join("gpu-blocking.csv"));
    assert_eq!(rows.len(), 5);
    assert_best_is_fastest(&header, &rows, "emulator wall ms");
    // The scaling table's CPU variant is one of the CPU table's, named in the headline.
    let (header, rows) = read_csv(&dir.0.join("scaling.csv"));
    assert_eq!(rows.len(), 2);
    let cpu_column = header.iter().find(|h| h.ends_with(" CPU ms")).unwrap();
    let chosen = cpu_column.trim_end_matches(" CPU ms");
    assert!(cpu.contains(&chosen), "{chosen}");
    column(&header, "basic:32 emulator wall ms");
    column(&header, "blocked:32 emulator wall ms");
    let json = read_json(&dir.0);
    let headline = json["headline"].as_str().unwrap();
    assert!(headline.contains(chosen), "{headline}");
    let finding = json["tables"][0]["finding"].as_str().unwrap();
    assert!(
        cpu.iter()
            .any(|v| finding.contains(&format!("fastest CPU variant is {v},"))),
        "{finding}"
    );
    assert_page_embeds(
        &dir.0,
        &[
            "cpu-sizes",
            "cpu-blocking",
            "gpu-threads",
            "gpu-blocking",
            "scaling",
        ],
    );
}

#[test]
fn sweeps_003_skip_cpu_runs_over_the_time_limit() {
    let dir = TempDir::new("003-limit");
    // With a 1 µs limit every CPU run after a variant's first size is estimated over it.
    assert!(run(
        "003 --parts cpu-sizes,scaling --cpu-variants cpu-naive,cpu-simd --cpu-sizes 16,32 \
         --scaling-sizes 16,32 --scaling-cpu cpu-simd --cpu-time-limit 0.000001",
        &dir.0
    ));
    let (header, rows) = read_csv(&dir.0.join("cpu-sizes.csv"));
    for name in ["cpu-naive ms", "cpu-simd ms"] {
        let c = column(&header, name);
        assert!(rows[0][c].parse::<f64>().is_ok(), "the first size runs");
        assert!(
            rows[1][c].starts_with("skipped: est. ") && rows[1][c].ends_with(" s > 1e-6 s limit"),
            "{}",
            rows[1][c]
        );
    }
    let (header, rows) = read_csv(&dir.0.join("scaling.csv"));
    let c = column(&header, "cpu-simd CPU ms");
    assert!(
        rows[0][c].parse::<f64>().is_ok(),
        "reused from the CPU table"
    );
    assert!(rows[1][c].starts_with("skipped: est. "), "{}", rows[1][c]);
    assert!(read_page(&dir.0).contains("skipped by the 1e-6 s limit"));
}

#[test]
fn hopper_005() {
    let dir = TempDir::new("005");
    assert!(run("005 --ladders bf16,tf32", &dir.0));
    // Every step ran on the emulator's shape (it has fewer tiles than SMs: split-k too) and
    // passed its check: each cell is the emulator's wall time, never FAIL or an error.
    let (header, rows) = read_csv(&dir.0.join("hopper-bf16-speed.csv"));
    let steps: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        steps,
        [
            "wgmma-16bit:1",
            "wgmma-cluster:1",
            "wgmma-tma-store:1",
            "wgmma-tma-store:2",
            "wgmma-tma-store:3",
            "wgmma-tma-store:4",
            "wgmma-tma-store:5",
            "wgmma-pingpong:1",
            "wgmma-split-k:4"
        ]
    );
    for (header, rows) in [
        (header, rows),
        read_csv(&dir.0.join("hopper-tf32-speed.csv")),
    ] {
        let shape = column(&header, "264×136×264");
        for r in &rows {
            assert!(r[shape].parse::<f64>().is_ok(), "{r:?}");
        }
    }
    // The summary names a step of each ladder; no ratio without cuBLAS.
    let (header, rows) = read_csv(&dir.0.join("hopper-best.csv"));
    let ladders: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(ladders, ["bf16", "tf32"]);
    for r in &rows {
        assert!(r[column(&header, "fastest step")].starts_with("wgmma-"));
        assert_eq!(r[column(&header, "× cuBLAS")], "n/a (emulator)");
    }
    assert_page_embeds(
        &dir.0,
        &[
            "hopper-best",
            "hopper-bf16-speed",
            "hopper-bf16-ratio",
            "hopper-tf32-speed",
            "hopper-tf32-ratio",
        ],
    );
    assert!(dir.0.join("hopper-bf16-speed.svg").is_file());
}

#[test]
fn shapes_on_the_emulator() {
    let dir = TempDir::new("shapes");
    // Suite 1 in the models' layout (T,N) and suite 3 (N,N): whichever the 16-bit kernels
    // compute runs, the others are refused with the reason, and the run goes on.
    assert!(run("shapes --dtype bf16 --suite 1,3", &dir.0));
    let (header, rows) = read_csv(&dir.0.join("shapes-bf16.csv"));
    assert_eq!(rows.len(), 18 + 7, "one row per shape of suites 1 and 3");
    for name in [
        "suite",
        "source",
        "M×N×K",
        "m×n×k",
        "layout",
        "variant",
        "choice",
        "emulator wall ms",
        "TFLOP/s",
        "yardstick TFLOP/s",
        "× yardstick",
        "MB moved",
        "% of HBM",
        "% of copy",
        "yardstick % of HBM",
        "yardstick % of copy",
        "check",
    ] {
        column(&header, name);
    }
    assert!(
        !header.iter().any(|h| h == "median ms"),
        "no GPU time column"
    );
    let at = |name: &str| column(&header, name);
    for (i, r) in rows.iter().enumerate() {
        let (suite, layout) = if i < 18 { ("1", "TN") } else { ("3", "NN") };
        assert_eq!(
            (r[at("suite")].as_str(), r[at("layout")].as_str()),
            (suite, layout)
        );
        // Emulator wall time or the reason it could not run; never a speed or a ratio.
        let time = &r[at("emulator wall ms")];
        assert!(
            time.parse::<f64>().is_ok() || time.starts_with("error: "),
            "{r:?}"
        );
        assert_eq!(r[at("yardstick TFLOP/s")], "n/a (emulator)");
        assert!(
            ["n/a (emulator)", "-"].contains(&r[at("TFLOP/s")].as_str()),
            "{r:?}"
        );
        assert!(
            ["n/a (emulator)", "-"].contains(&r[at("× yardstick")].as_str()),
            "{r:?}"
        );
    }
    // DeepGEMM's first shape as the suite has it, and the shrunk BLAS problem that ran for it:
    // the model's M×N×K is m = N, n = M, k = K, each divided by 64 and rounded up to 16.
    assert_eq!(rows[0][at("M×N×K")], "64×2112×7168");
    assert_eq!(rows[0][at("m×n×k")], "48×16×112");
    // Prefills are not decode shapes, shrunk or not.
    assert_eq!(rows[12][at("M×N×K")], "4096×2112×7168");
    assert_eq!(rows[12][at("MB moved")], "M > 128");
    // The squares are N,N, which the 16-bit kernels compute: each ran and passed.
    for r in &rows[18..] {
        assert_eq!(r[at("M×N×K")], "-");
        assert!(r[at("emulator wall ms")].parse::<f64>().is_ok(), "{r:?}");
        assert!(r[at("check")].starts_with("pass"), "{r:?}");
        assert!(r[at("choice")].starts_with("wgmma-"), "{r:?}");
    }
    let (header, rows) = read_csv(&dir.0.join("shapes-bf16-summary.csv"));
    assert_eq!(header, ["variant", "measure", "value", "over"]);
    let measures: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
    for m in [
        "geomean × yardstick, suites 1+2",
        "min × yardstick, every shape",
        "shapes below 0.90× yardstick",
        "geomean % of HBM datasheet, M ≤ 128",
    ] {
        assert!(measures.contains(&m), "{measures:?}");
    }
    assert!(rows.iter().all(|r| r[2] == "n/a (emulator)"), "{rows:?}");
    let json = read_json(&dir.0);
    let headline = json["headline"].as_str().unwrap();
    assert!(
        headline.starts_with("On the emulator") && headline.contains("CPU wall time"),
        "{headline}"
    );
    assert!(headline.contains("of 25 runs ran"), "{headline}");
    assert_page_embeds(&dir.0, &["shapes-bf16", "shapes-bf16-summary"]);
    assert!(dir.0.join("shapes-bf16.svg").is_file());
    let page = read_page(&dir.0);
    for text in [
        "| emulator sizes |",
        "| yardstick | cuBLAS",
        "| copy bandwidth | n/a",
    ] {
        assert!(page.contains(text), "the page has `{text}`");
    }
}

#[test]
fn shapes_in_e4m3_run_the_fp8_pipeline_in_tn_and_refuse_nn() {
    let dir = TempDir::new("shapes-e4m3");
    assert!(run("shapes --dtype e4m3 --suite 3", &dir.0));
    let (header, rows) = read_csv(&dir.0.join("shapes-e4m3.csv"));
    assert_eq!(rows.len(), 7);
    for r in &rows {
        assert_eq!(r[column(&header, "layout")], "TN", "FP8 has one layout");
        // The per-tensor FP8 kernels: chapter 4's, or chapter 5's narrow or swapped tiles.
        let choice = &r[column(&header, "choice")];
        assert!(
            ["wgmma-fp8:", "wgmma-fp8-narrow:", "wgmma-fp8-swap:"]
                .iter()
                .any(|k| choice.starts_with(k)),
            "{r:?}"
        );
        assert!(r[column(&header, "check")].starts_with("pass"), "{r:?}");
    }
    let line = "host experiment shapes --dtype e4m3 --layout nn --backend emu";
    let cli = Cli::try_parse_from(line.split_whitespace()).unwrap();
    let Some(Command::Experiment(experiment)) = cli.command else {
        panic!("`{line}` is not an experiment")
    };
    let e = experiments::run_with_command_line(&experiment, line.into()).unwrap_err();
    assert!(e.to_string().contains("drop --layout nn"), "{e}");
}

#[test]
fn random_shapes_run_every_layout_with_padded_leading_dimensions_and_pass() {
    let dir = TempDir::new("shapes-random");
    assert!(run("shapes --random 8 --dtype f16 --seed 5", &dir.0));
    let (header, rows) = read_csv(&dir.0.join("random-f16.csv"));
    assert_eq!(rows.len(), 8, "one row per drawn shape");
    for r in &rows {
        assert!(r[column(&header, "check")].starts_with("pass"), "{r:?}");
        assert!(
            !r[column(&header, "auto chose")].starts_with("error"),
            "{r:?}"
        );
    }
    // The same seed draws the same shapes; the summary has a row per layout.
    let dir_again = TempDir::new("shapes-random-again");
    assert!(run("shapes --random 8 --dtype f16 --seed 5", &dir_again.0));
    let shapes = |dir: &Path| {
        let (header, rows) = read_csv(&dir.join("random-f16.csv"));
        let at = column(&header, "m×n×k");
        rows.iter().map(|r| r[at].clone()).collect::<Vec<_>>()
    };
    assert_eq!(shapes(&dir.0), shapes(&dir_again.0));
    let (_, summary) = read_csv(&dir.0.join("random-f16-summary.csv"));
    let names: Vec<&str> = summary.iter().map(|r| r[0].as_str()).collect();
    for layout in ["all", "NN", "TN", "NT", "TT"] {
        assert!(names.contains(&layout), "{names:?}");
    }
    assert!(read_page(&dir.0).contains("8 of 8 random shapes ran through auto"));
}
