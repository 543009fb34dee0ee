//! `Algorithm::Tuned`: the fastest of `auto`'s candidates, timed on the caller's GPU, shape and
//! buffers the first time a problem is seen, then read from a file.
//!
//! `auto` picks from a table measured on an H100 at a few shapes: on another GPU, or at a shape
//! far from the table's, its choice is the H100's guess. A tuner measures instead, once per
//! problem, and remembers the answer, as cuBLASLt's autotuning does (time the algorithms that
//! `cublasLtMatmulAlgoGetHeuristic` proposes, keep the fastest) and Triton's `@autotune` (time
//! every config on the first call of a key, cache the winner). The first call of a shape pays
//! for the timing; every later call, in this process or another, reads the winner.
//!
//! The rule, in full:
//! 1. **The candidates** ([`candidates`]) are the kernels `auto` considers for the problem under
//!    the same contract ([`Math`]): one definition, [`auto::fits`], shared with `auto`, so that
//!    tuning never runs a kernel whose arithmetic the contract refuses. Each runs at every tile
//!    it takes ([`Variant::tiles`]); `auto`'s own choice goes first, so that the pruning below
//!    has a good time to compare with from the start.
//! 2. **The protocol** ([`Protocol`]): one run, timed, then the median of a few timed runs. The
//!    first run is a warm-up (cold caches, idle clocks, the first launch's setup) and a probe: a
//!    candidate whose first run is over [`Protocol::prune`] times the best median so far cannot
//!    win, and is not run again. The course's early kernels are 50 to 100 times slower than its
//!    last; without the probe, timing them would cost more than all the calls that follow.
//! 3. **The buffers** are the caller's: a candidate is timed on the data and the addresses it
//!    will run on. Every run writes C, so with β ≠ 0 the call saves C's input first and
//!    restores it before the winner's final run: C ends as if only the winner had run. (With
//!    β = 0 C's input is ignored, and the final run overwrites it.)
//! 4. **The key** ([`Key`]) says which measurements are worth reusing: the GPU's name, the
//!    CUDA version its driver supports (`cuDriverGetVersion`), its compute capability, the build
//!    (the crate's version and a fingerprint of the kernels' PTX, so that a rebuilt library with
//!    other kernels does not trust old winners), the dtype, the contract, the transposes, m, n, k,
//!    and whether each leading dimension is a multiple of 16 bytes (the TMA kernels need it).
//!    Not the exact leading dimensions, and not the addresses: a call refuses operands off a
//!    16-byte boundary (`GemmError::Misaligned`), so every tuned call has aligned ones. Outside
//!    f32 a contract changes nothing (f64, bf16 and f16 run in their own arithmetic whatever it
//!    says), so those keys take `strict`.
//! 5. **The file** ([`render`], [`parse`]) is CSV, like `auto`'s table, under a line that names
//!    its format; one row per key, with the winner, its median, and the runner-up's. No `serde`:
//!    fifteen columns of names and numbers need no more than `split(',')`.
//! 6. **Where**: a path the caller gives (`Gemm::with_tuning_cache`, `host --tuning-cache`), or
//!    `$GPU_GEMM_TUNING_CACHE`, or `$XDG_CACHE_HOME/gpu-gemm/tuning.csv`, or
//!    `~/.cache/gpu-gemm/tuning.csv` ([`default_path`]). A handle reads the file at its first
//!    tuned call and again whenever a key is missing (another process may have tuned it
//!    since), and keeps what it read and tuned in memory.
//! 7. **Writers** re-read the file, replace their key's row, write a temporary file beside it and
//!    rename it over the old one: a reader sees the old file or the new one, never half of one.
//!    Two processes that tune at once may each write; the last rename wins, and the row it lost
//!    is tuned again on a later call: lost time, never a wrong choice.
//! 8. **Failures never fail the GEMM**, and are never silent. A file in another format, or one
//!    that does not parse, is ignored with a warning in the `Choice`'s reason and rewritten; an
//!    entry that names a kernel which is no longer a candidate is tuned again, saying so; a
//!    file that cannot be written leaves the call's result correct, the reason says why, and
//!    the handle remembers the winner for its own later calls.
//! 9. **The emulator** is not tuned: its times are the CPU's wall time of the emulation, which
//!    rank nothing on a GPU. `Tuned` there runs `auto`'s choice, says so, and neither reads nor
//!    writes the cache. The tests drive the same code with a clock of their own
//!    (`Gemm::emulator_with_clock`), so that every rule above is checked without a GPU.
use crate::auto::{self, Math};
use crate::problem::{Problem, Transposes};
use crate::registry::{self, Variant};
use crate::timing::median;
use anyhow::Result;
use kernels_gpu::gemm::Dtype;
use std::path::{Path, PathBuf};

/// How a candidate is timed (see the module documentation, rule 2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Protocol {
    /// Timed runs after the first, whose median is the candidate's time.
    pub runs: usize,
    /// A candidate whose first run took more than this many times the best median so far stops
    /// there: run-to-run noise on a GPU is a few percent, far below this factor.
    pub prune: f64,
}

impl Protocol {
    /// What `Algorithm::Tuned` uses: the first run, then the median of 5.
    pub const DEFAULT: Protocol = Protocol {
        runs: 5,
        prune: 3.0,
    };

    /// Times a candidate: `once` runs it once and returns its milliseconds. `best_ms` is the
    /// best median so far (`None` for the first candidate, which is never pruned).
    pub fn measure(
        &self,
        best_ms: Option<f64>,
        mut once: impl FnMut() -> Result<f64>,
    ) -> Result<Measurement> {
        let first = once()?;
        if best_ms.is_some_and(|best| first > self.prune * best) {
            return Ok(Measurement {
                median_ms: first,
                runs: 1,
                pruned: true,
            });
        }
        let times = (0..self.runs).map(|_| once()).collect::<Result<Vec<_>>>()?;
        Ok(Measurement {
            median_ms: median(&times),
            runs: times.len(),
            pruned: false,
        })
    }
}

/// A candidate's time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measurement {
    /// The median of the timed runs, in milliseconds; for a pruned candidate its first run.
    pub median_ms: f64,
    /// Runs timed (the first run of an unpruned candidate is a warm-up and not counted).
    pub runs: usize,
    /// Whether it stopped after its first run.
    pub pruned: bool,
}

/// A kernel at a tile: what the tuner times.
#[derive(Clone, Copy)]
pub struct Candidate {
    /// The kernel.
    pub variant: Variant,
    /// Its tile, `None` for a kernel without a tile parameter.
    pub tile: Option<u32>,
}

impl std::fmt::Debug for Candidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Candidate({})", self.label())
    }
}

impl Candidate {
    /// As `host` names it: `best:1`, `gemm128`.
    pub fn label(&self) -> String {
        registry::label(self.variant, self.tile).unwrap_or_else(|_| self.variant.name().into())
    }
}

/// What the tuner times for a problem on a device of compute capability `arch` (`None`: the
/// emulator): `auto`'s choice, then every candidate of [`auto::candidates`] at every tile.
pub fn candidates(p: &Problem, math: Math, arch: Option<u32>) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    let mut add = |c: Candidate| {
        if !out.iter().any(|o| o.label() == c.label()) {
            out.push(c);
        }
    };
    // `auto` may name its last fallback when nothing fits (the plan then says why): only a
    // candidate goes in.
    if let Ok(choice) = auto::choose(p, math, arch) {
        if auto::fits(&choice.variant, p, math, arch) {
            add(Candidate {
                variant: choice.variant,
                tile: choice.tile,
            });
        }
    }
    for variant in auto::candidates(p, math, arch) {
        match variant.tiles() {
            [] => add(Candidate {
                variant,
                tile: None,
            }),
            tiles => tiles.iter().for_each(|&t| {
                add(Candidate {
                    variant,
                    tile: Some(t),
                })
            }),
        }
    }
    out
}

/// The candidate a cache entry names, if it still is one for this problem: the registry and
/// the build may have changed since it was written (the build's fingerprint guards the PTX, not
/// a hand-edited file).
pub fn candidate_named(
    label: &str,
    p: &Problem,
    math: Math,
    arch: Option<u32>,
) -> std::result::Result<Candidate, String> {
    let (name, tile) = match label.split_once(':') {
        Some((name, tile)) => (
            name,
            Some(
                tile.parse::<u32>()
                    .map_err(|_| format!("`{label}`: the tile after `:` is not a number"))?,
            ),
        ),
        None => (label, None),
    };
    let variant = registry::find(name).map_err(|e| format!("{e:#}"))?;
    if !auto::fits(&variant, p, math, arch) {
        return Err(format!(
            "`{label}` is not a candidate for this problem under the {} contract",
            math.name()
        ));
    }
    registry::resolve_tile(variant, tile).map_err(|e| format!("{e:#}"))?;
    Ok(Candidate { variant, tile })
}

/// The device and build a time was measured on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    /// The GPU's name, as the driver gives it (commas, the file's separator, become spaces).
    pub gpu: String,
    /// The CUDA version its driver supports (`13.0`).
    pub driver: String,
    /// Its compute capability (`sm_90`).
    pub arch: String,
    /// The library's version and its kernels' fingerprint ([`build_id`]).
    pub build: String,
}

impl Device {
    /// A device as the key writes it. `driver_version` is `cuDriverGetVersion`'s (13000 is
    /// 13.0).
    pub fn new(gpu: &str, driver_version: i32, arch: &str, build: String) -> Device {
        let field = |s: &str| s.replace([',', '\n', '\r'], " ").trim().to_string();
        Device {
            gpu: field(gpu),
            driver: format!("{}.{}", driver_version / 1000, (driver_version % 1000) / 10),
            arch: field(arch),
            build: field(&build),
        }
    }
}

/// The build of this library: its crate version and a fingerprint of the PTX it runs
/// (`gpu::Gpu::ptx_fingerprint`).
pub fn build_id(ptx_fingerprint: u64) -> String {
    format!("{}+ptx.{ptx_fingerprint:016x}", env!("CARGO_PKG_VERSION"))
}

/// Which measurements are worth reusing (see the module documentation, rule 4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    /// The GPU, driver and build.
    pub device: Device,
    /// The element type.
    pub dtype: Dtype,
    /// The contract; `strict` outside f32, where contracts change nothing.
    pub math: Math,
    /// op(A), op(B).
    pub transposes: Transposes,
    /// Rows of op(A) and C.
    pub m: u32,
    /// Columns of op(B) and C.
    pub n: u32,
    /// The inner dimension.
    pub k: u32,
    /// Whether A's, B's and C's leading dimensions are multiples of 16 bytes.
    pub ld16: [bool; 3],
}

impl Key {
    /// The key of a problem under a contract on a device.
    pub fn new(device: Device, p: &Problem, math: Math) -> Key {
        let s = &p.shape;
        let ld16 = |ld: u32, bytes: u32| (u64::from(ld) * u64::from(bytes)).is_multiple_of(16);
        Key {
            device,
            dtype: p.dtype,
            math: if p.dtype == Dtype::F32 {
                math
            } else {
                Math::Strict
            },
            transposes: p.transposes,
            m: s.m,
            n: s.n,
            k: s.k,
            ld16: [
                ld16(s.lda, p.dtype.bytes()),
                ld16(s.ldb, p.dtype.bytes()),
                ld16(s.ldc, p.dtype.output().bytes()),
            ],
        }
    }

    /// The key's columns, as the file writes them.
    fn columns(&self) -> Vec<String> {
        let d = &self.device;
        let ld16: String = self
            .ld16
            .iter()
            .zip(['A', 'B', 'C'])
            .map(|(&aligned, name)| if aligned { name } else { '-' })
            .collect();
        vec![
            d.gpu.clone(),
            d.driver.clone(),
            d.arch.clone(),
            d.build.clone(),
            self.dtype.name().to_string(),
            self.math.name().to_string(),
            self.transposes.name(),
            self.m.to_string(),
            self.n.to_string(),
            self.k.to_string(),
            ld16,
        ]
    }
}

/// What the cache holds for a key: the fastest candidate and, for the curious, the next.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The winner, as `host` names it (`big-tile:5`).
    pub winner: String,
    /// Its median when it was tuned, in milliseconds.
    pub median_ms: f64,
    /// The second fastest and its median, if another candidate ran.
    pub runner_up: Option<(String, f64)>,
}

/// A key and its entry: one line of the file.
pub type Row = (Key, Entry);

/// The file's first line: the format's name and version. A file that starts otherwise is
/// another format (or another version of this one) and is not read.
pub const FORMAT: &str = "gpu-gemm tuning cache, format 1";

/// The columns, after [`FORMAT`] and the comment lines.
pub const HEADER: &str =
    "gpu,driver,arch,build,dtype,math,ops,m,n,k,ld16,winner,median_ms,runner_up,runner_up_ms";

/// The comment under the format line.
const COMMENT: &str = "# The fastest kernel that gpu-gemm's Algorithm::Tuned measured for each problem on each GPU, driver and build.
# ld16: which of A, B, C have leading dimensions that are multiples of 16 bytes. Safe to delete.";

/// The file's text: [`FORMAT`], a comment, [`HEADER`], one line per row.
pub fn render(rows: &[Row]) -> String {
    let mut text = format!("{FORMAT}\n{COMMENT}\n{HEADER}\n");
    for (key, entry) in rows {
        let mut fields = key.columns();
        fields.push(entry.winner.clone());
        fields.push(format!("{:.6}", entry.median_ms));
        match &entry.runner_up {
            Some((label, ms)) => {
                fields.push(label.clone());
                fields.push(format!("{ms:.6}"));
            }
            None => fields.extend(["-".to_string(), "-".to_string()]),
        }
        text += &fields.join(",");
        text.push('\n');
    }
    text
}

/// Reads a file's text, or says in a clause what is wrong with it (the first wrong line).
pub fn parse(text: &str) -> std::result::Result<Vec<Row>, String> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, first)) if first.trim() == FORMAT => {}
        Some((_, first)) => {
            return Err(format!(
                "its first line is `{}`, not `{FORMAT}`: another format, or another version of gpu-gemm",
                first.chars().take(60).collect::<String>()
            ))
        }
        None => return Err("it is empty".into()),
    }
    let mut lines = lines.filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    match lines.next() {
        Some((_, header)) if header.trim() == HEADER => {}
        _ => return Err(format!("it has no header line `{HEADER}`")),
    }
    lines
        .map(|(i, line)| parse_row(line).map_err(|why| format!("line {}: {why}", i + 1)))
        .collect()
}

fn parse_row(line: &str) -> std::result::Result<Row, String> {
    let f: Vec<&str> = line.split(',').map(str::trim).collect();
    let expected = HEADER.split(',').count();
    if f.len() != expected {
        return Err(format!("{} fields, not {expected}", f.len()));
    }
    let number = |s: &str| s.parse::<u32>().map_err(|_| format!("`{s}` is not a size"));
    let ms = |s: &str| match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("`{s}` is not a time in milliseconds")),
    };
    let dtype = registry::ALL_DTYPES
        .iter()
        .copied()
        .find(|d| d.name() == f[4])
        .ok_or_else(|| format!("unknown dtype `{}`", f[4]))?;
    let math = Math::parse(f[5]).ok_or_else(|| format!("unknown contract `{}`", f[5]))?;
    let transposes = Transposes::ALL
        .into_iter()
        .find(|t| t.name() == f[6])
        .ok_or_else(|| format!("unknown transposes `{}`", f[6]))?;
    let ld16: Vec<bool> = f[10]
        .chars()
        .zip(['A', 'B', 'C'])
        .map(|(c, name)| match c {
            c if c == name => Ok(true),
            '-' => Ok(false),
            _ => Err(format!(
                "ld16 `{}` is not of the form `ABC`, `A-C`, …",
                f[10]
            )),
        })
        .collect::<std::result::Result<_, _>>()?;
    let ld16: [bool; 3] = ld16
        .try_into()
        .map_err(|_| format!("ld16 `{}` has not 3 letters", f[10]))?;
    let key = Key {
        device: Device {
            gpu: f[0].to_string(),
            driver: f[1].to_string(),
            arch: f[2].to_string(),
            build: f[3].to_string(),
        },
        dtype,
        math,
        transposes,
        m: number(f[7])?,
        n: number(f[8])?,
        k: number(f[9])?,
        ld16,
    };
    if f[11].is_empty() {
        return Err("no winner".into());
    }
    let runner_up = match (f[13], f[14]) {
        ("-", "-") => None,
        (label, t) => Some((label.to_string(), ms(t)?)),
    };
    let entry = Entry {
        winner: f[11].to_string(),
        median_ms: ms(f[12])?,
        runner_up,
    };
    Ok((key, entry))
}

/// Where the cache lives when the caller names no file: `$GPU_GEMM_TUNING_CACHE`, else
/// `$XDG_CACHE_HOME/gpu-gemm/tuning.csv`, else `$HOME/.cache/gpu-gemm/tuning.csv`; `None`
/// when none is set (the handle then remembers its winners in memory only).
pub fn default_path() -> Option<PathBuf> {
    default_path_from(|name| std::env::var_os(name))
}

/// [`default_path`] with the environment given as a function (for the tests, which must not
/// set the process's own variables while other tests run).
pub fn default_path_from(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty());
    if let Some(path) = var("GPU_GEMM_TUNING_CACHE") {
        return Some(PathBuf::from(path));
    }
    // The XDG specification ignores a relative XDG_CACHE_HOME.
    let base = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("gpu-gemm").join("tuning.csv"))
}

/// A handle's view of the cache: the file's path and the rows it read or tuned.
#[derive(Debug, Default)]
pub struct Cache {
    path: Option<PathBuf>,
    rows: Vec<Row>,
}

impl Cache {
    /// A cache in `path` (nothing is read until a lookup).
    pub fn new(path: Option<PathBuf>) -> Cache {
        Cache {
            path,
            rows: Vec::new(),
        }
    }

    /// The file, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The entry for `key`: from memory, else from the file, read again since another process
    /// may have tuned the key. The second value is a warning, for the call's reason, when the
    /// file was there but could not be used.
    pub fn lookup(&mut self, key: &Key) -> (Option<Entry>, Option<String>) {
        if let Some(entry) = self.remembered(key) {
            return (Some(entry), None);
        }
        let Some(path) = self.path.clone() else {
            return (None, None);
        };
        match read(&path) {
            Ok(rows) => {
                self.merge(rows);
                (self.remembered(key), None)
            }
            Err(why) => (
                None,
                Some(format!(
                    "the tuning cache {} was ignored: {why}",
                    path.display()
                )),
            ),
        }
    }

    /// Remembers `entry` for `key` and writes the file: the rows it holds now (another
    /// process's included; none from a file that does not parse) with this key's replaced.
    /// Returns the file written, or why none was.
    pub fn store(&mut self, key: Key, entry: Entry) -> std::result::Result<PathBuf, String> {
        self.rows.retain(|(k, _)| *k != key);
        self.rows.push((key, entry));
        let Some(path) = self.path.clone() else {
            return Err("no cache file: $GPU_GEMM_TUNING_CACHE, $XDG_CACHE_HOME and $HOME are unset, and the caller named none".into());
        };
        // Ours win: they are what this handle measured or read last.
        let mine = std::mem::take(&mut self.rows);
        self.rows = read(&path).unwrap_or_default();
        self.merge(mine);
        write(&path, &render(&self.rows)).map(|()| path.clone())
    }

    fn remembered(&self, key: &Key) -> Option<Entry> {
        self.rows
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, e)| e.clone())
    }

    /// Adds `rows`, replacing those of the same keys.
    fn merge(&mut self, rows: Vec<Row>) {
        for (key, entry) in rows {
            match self.rows.iter_mut().find(|(k, _)| *k == key) {
                Some(row) => row.1 = entry,
                None => self.rows.push((key, entry)),
            }
        }
    }
}

/// The rows of the file at `path`; none when there is no file yet.
fn read(path: &Path) -> std::result::Result<Vec<Row>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text),
        // No file yet, or a path that cannot hold one (a file where a folder should be):
        // nothing to read, and writing will say what is wrong.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(Vec::new())
        }
        Err(e) => Err(format!("cannot read it: {e}")),
    }
}

/// `text` into `path`, through a temporary file in the same folder and a rename (rule 7).
fn write(path: &Path, text: &str) -> std::result::Result<(), String> {
    let fail = |what: &str, e: std::io::Error| {
        format!("cannot {what} the tuning cache {}: {e}", path.display())
    };
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&folder).map_err(|e| fail("make the folder of", e))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tuning.csv".into());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let temporary = folder.join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
    std::fs::write(&temporary, text).map_err(|e| fail("write", e))?;
    std::fs::rename(&temporary, path).map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        fail("replace", e)
    })
}

/// A candidate and how its timing went: its measurement, or why it could not run.
pub struct Timed {
    /// The candidate.
    pub candidate: Candidate,
    /// Its time, or why it did not run (a constraint of the plan, a failed launch).
    pub outcome: std::result::Result<Measurement, String>,
}

/// The best median so far among candidates that were not pruned.
pub fn best_ms(timed: &[Timed]) -> Option<f64> {
    timed
        .iter()
        .filter_map(|t| t.outcome.as_ref().ok())
        .filter(|m| !m.pruned)
        .map(|m| m.median_ms)
        .min_by(f64::total_cmp)
}

/// The candidates that ran, fastest first: the winner, then the runner-up, ….
pub fn ranking(timed: &[Timed]) -> Vec<(&Candidate, Measurement)> {
    let mut ran: Vec<(&Candidate, Measurement)> = timed
        .iter()
        .filter_map(|t| t.outcome.as_ref().ok().map(|m| (&t.candidate, *m)))
        .collect();
    // A pruned candidate's one run is slower than the best by construction; fully timed ones
    // come first so that the winner is never a single, cold run.
    ran.sort_by(|a, b| {
        (a.1.pruned, a.1.median_ms)
            .partial_cmp(&(b.1.pruned, b.1.median_ms))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    ran
}

/// The entry for the cache from a ranking.
pub fn entry(ranking: &[(&Candidate, Measurement)]) -> Option<Entry> {
    let (winner, time) = ranking.first()?;
    Some(Entry {
        winner: winner.label(),
        median_ms: time.median_ms,
        runner_up: ranking.get(1).map(|(c, m)| (c.label(), m.median_ms)),
    })
}

/// One sentence on a tuning: what was timed, how, and who won.
pub fn summary(timed: &[Timed], protocol: &Protocol) -> String {
    let ranking = ranking(timed);
    let kernels = timed
        .iter()
        .map(|t| t.candidate.variant.name())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let pruned = ranking.iter().filter(|(_, m)| m.pruned).count();
    let failed: Vec<String> = timed
        .iter()
        .filter_map(|t| {
            t.outcome
                .as_ref()
                .err()
                .map(|why| format!("{} ({why})", t.candidate.label()))
        })
        .collect();
    let mut text = format!(
        "{} configurations of {kernels} kernels timed on these buffers (a warm-up, then the median of {} runs",
        timed.len(),
        protocol.runs
    );
    if pruned > 0 {
        text += &format!(
            "; {pruned} stopped after the warm-up at over {}× the best so far",
            protocol.prune
        );
    }
    text += ")";
    if !failed.is_empty() {
        text += &format!("; {} could not run: {}", failed.len(), failed.join(", "));
    }
    let mut places = ranking.iter().take(2);
    if let Some((c, m)) = places.next() {
        text += &format!(": fastest {} at {:.4} ms", c.label(), m.median_ms);
    }
    if let Some((c, m)) = places.next() {
        text += &format!(", then {} at {:.4} ms", c.label(), m.median_ms);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Algorithm, Gemm, GemmConfig, Tuning};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn problem(m: u32, n: u32, k: u32, dtype: Dtype) -> Problem {
        Problem {
            seed: 0,
            ..Problem::packed(m, n, k, dtype)
        }
    }

    fn device(driver: i32) -> Device {
        Device::new("Test GPU, 80GB", driver, "sm_90", build_id(0x1234))
    }

    #[test]
    fn the_protocol_takes_the_median_after_a_warm_up_and_prunes_hopeless_candidates() {
        let p = Protocol::DEFAULT;
        let mut times = [9.0, 1.0, 3.0, 2.0, 5.0, 4.0].into_iter();
        let m = p.measure(None, || Ok(times.next().unwrap())).unwrap();
        // The first run (9.0) is the warm-up; the median of the other five.
        assert_eq!((m.median_ms, m.runs, m.pruned), (3.0, 5, false));
        let mut runs = 0;
        let m = p
            .measure(Some(1.0), || {
                runs += 1;
                Ok(3.5)
            })
            .unwrap();
        assert_eq!((m.median_ms, m.runs, m.pruned, runs), (3.5, 1, true, 1));
        // Within the factor, timed in full.
        let m = p.measure(Some(1.0), || Ok(2.9)).unwrap();
        assert!(!m.pruned && m.runs == 5);
        assert!(p.measure(None, || anyhow::bail!("launch failed")).is_err());
    }

    #[test]
    fn the_candidates_are_autos_at_every_tile_with_autos_choice_first() {
        for (p, math) in [
            (problem(256, 256, 256, Dtype::F32), Math::Strict),
            (problem(256, 256, 256, Dtype::F32), Math::Fp32Accurate),
            (problem(512, 128, 64, Dtype::F64), Math::Tf32),
            (problem(256, 256, 256, Dtype::Bf16), Math::Strict),
        ] {
            for arch in [Some(90), Some(80), None] {
                let all = candidates(&p, math, arch);
                let kernels = auto::candidates(&p, math, arch);
                if kernels.is_empty() {
                    // bf16 off Hopper: the 16-bit kernels are all `wgmma`.
                    assert!(all.is_empty() && p.dtype == Dtype::Bf16 && arch == Some(80));
                    continue;
                }
                let auto_choice = auto::choose(&p, math, arch).unwrap();
                assert_eq!(all[0].label(), auto_choice.label());
                let tiles: usize = kernels.iter().map(|v| v.tiles().len().max(1)).sum();
                assert_eq!(all.len(), tiles, "every tile of every candidate, once");
                for c in &all {
                    assert!(auto::fits(&c.variant, &p, math, arch), "{}", c.label());
                }
            }
        }
        // The contract is auto's: strict never times a TF32 kernel, fp32-accurate 3xTF32 but
        // not TF32.
        let p = problem(256, 256, 256, Dtype::F32);
        let arithmetic = |math| {
            candidates(&p, math, Some(90))
                .iter()
                .map(|c| c.variant.arithmetic())
                .collect::<Vec<_>>()
        };
        use kernels_gpu::gemm::Arithmetic::{Native, Tf32, Tf32x3};
        assert!(arithmetic(Math::Strict).iter().all(|a| *a == Native));
        let accurate = arithmetic(Math::Fp32Accurate);
        assert!(accurate.contains(&Tf32x3) && !accurate.contains(&Tf32));
        assert!(arithmetic(Math::Tf32).contains(&Tf32));
        // Sm_90a's kernels are candidates on an H100 only.
        let on = |arch| {
            candidates(&p, Math::Tf32, arch)
                .iter()
                .any(|c| c.variant.name() == "wgmma-tf32")
        };
        assert!(on(Some(90)) && !on(Some(80)));
    }

    #[test]
    fn a_stored_winner_is_used_only_while_it_is_a_candidate() {
        let p = problem(256, 256, 256, Dtype::F32);
        assert_eq!(
            candidate_named("big-tile:3", &p, Math::Strict, Some(90))
                .unwrap()
                .label(),
            "big-tile:3"
        );
        let e = candidate_named("tc-tf32:1", &p, Math::Strict, Some(90)).unwrap_err();
        assert!(e.contains("not a candidate"), "{e}");
        assert!(candidate_named("big-tile:99", &p, Math::Strict, Some(90)).is_err());
        assert!(candidate_named("no-such-kernel", &p, Math::Strict, Some(90)).is_err());
        assert!(candidate_named("best:x", &p, Math::Strict, Some(90)).is_err());
    }

    #[test]
    fn the_key_has_the_16_byte_classes_and_one_contract_outside_f32() {
        let mut p = problem(100, 64, 30, Dtype::F32);
        p.shape.lda = 101;
        let key = Key::new(device(13000), &p, Math::Fp32Accurate);
        assert_eq!(
            key.ld16,
            [false, false, true],
            "lda 101, ldb 30 and ldc 100 floats"
        );
        assert_eq!(key.math, Math::Fp32Accurate);
        assert_eq!(
            key.device.gpu, "Test GPU  80GB",
            "the separator is not in a field"
        );
        assert_eq!(key.device.driver, "13.0");
        let f64_key = Key::new(device(13000), &problem(8, 8, 8, Dtype::F64), Math::Tf32);
        assert_eq!(f64_key.math, Math::Strict);
        let half = Key::new(device(12080), &problem(8, 8, 8, Dtype::Bf16), Math::Strict);
        assert_eq!(half.ld16, [true; 3]);
        assert_eq!(half.device.driver, "12.8");
    }

    #[test]
    fn the_file_reads_back_what_it_writes_and_refuses_other_formats_by_line() {
        let key = Key::new(
            device(13000),
            &problem(64, 48, 32, Dtype::F32),
            Math::Strict,
        );
        let rows = vec![
            (
                key.clone(),
                Entry {
                    winner: "big-tile:5".into(),
                    median_ms: 1.25,
                    runner_up: Some(("best:1".into(), 1.5)),
                },
            ),
            (
                Key {
                    m: 7,
                    ld16: [true, false, true],
                    ..key
                },
                Entry {
                    winner: "gemm128".into(),
                    median_ms: 0.5,
                    runner_up: None,
                },
            ),
        ];
        let text = render(&rows);
        assert!(text.starts_with(&format!("{FORMAT}\n#")), "{text}");
        assert!(
            text.contains(",f32,strict,NN,64,48,32,ABC,big-tile:5,1.250000,best:1,1.500000\n"),
            "{text}"
        );
        assert!(
            text.contains(",7,48,32,A-C,gemm128,0.500000,-,-\n"),
            "{text}"
        );
        assert_eq!(parse(&text).unwrap(), rows);
        let e = parse(&text.replace("format 1", "format 2")).unwrap_err();
        assert!(e.contains("another version"), "{e}");
        let e = parse("").unwrap_err();
        assert!(e.contains("empty"), "{e}");
        let e = parse(&text.replace("1.250000", "fast")).unwrap_err();
        assert!(e.starts_with("line 5:") && e.contains("`fast`"), "{e}");
        let e = parse(&text.replace(",NN,", ",NN,extra,")).unwrap_err();
        assert!(e.contains("16 fields, not 15"), "{e}");
        let e = parse(&text.replace(HEADER, "gpu,driver")).unwrap_err();
        assert!(e.contains("no header"), "{e}");
    }

    #[test]
    fn the_default_path_follows_the_variable_then_xdg_then_home() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        const ALL: [(&str, &str); 3] = [
            ("GPU_GEMM_TUNING_CACHE", "/tmp/t.csv"),
            ("XDG_CACHE_HOME", "/xdg"),
            ("HOME", "/home/u"),
        ];
        assert_eq!(
            default_path_from(env(&ALL)),
            Some(PathBuf::from("/tmp/t.csv"))
        );
        assert_eq!(
            default_path_from(env(&ALL[1..])),
            Some(PathBuf::from("/xdg/gpu-gemm/tuning.csv"))
        );
        // A relative XDG_CACHE_HOME is ignored, as the specification says.
        assert_eq!(
            default_path_from(env(&[("XDG_CACHE_HOME", "rel"), ("HOME", "/home/u")])),
            Some(PathBuf::from("/home/u/.cache/gpu-gemm/tuning.csv"))
        );
        assert_eq!(
            default_path_from(env(&[("GPU_GEMM_TUNING_CACHE", ""), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.cache/gpu-gemm/tuning.csv"))
        );
        assert_eq!(default_path_from(env(&[])), None);
    }

    // The mechanics, on the emulator with a clock of the test's own: each candidate really runs
    // on the buffers (so what tuning does to C is real), and its "time" is the clock's.

    /// A folder of its own for a test's cache files.
    fn folder(test: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("gpu-gemm-tuning-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// The label the test's clock makes fastest: an early kernel of the course, so that the
    /// winner is neither auto's choice (timed first) nor the last candidate timed.
    const FAST: &str = "v4";

    /// An emulator that tunes with a clock: `FAST` takes 0.5 ms, the first candidate timed 1 ms,
    /// every other 5 ms (over 3× the best, so each stops after one run). The counter counts the
    /// clock's readings: zero when nothing was timed.
    fn clocked(path: &Path, driver: i32) -> (Gemm, Arc<AtomicUsize>) {
        let readings = Arc::new(AtomicUsize::new(0));
        let counter = readings.clone();
        let mut first: Option<String> = None;
        let gemm = Gemm::emulator_with_clock(device(driver), move |label| {
            counter.fetch_add(1, Ordering::SeqCst);
            if label == FAST {
                return 0.5;
            }
            match &first {
                None => {
                    first = Some(label.to_string());
                    1.0
                }
                Some(f) if f == label => 1.0,
                Some(_) => 5.0,
            }
        })
        .with_tuning_cache(path);
        (gemm, readings)
    }

    /// Inputs for a `config`, C's input included.
    fn buffers(config: &GemmConfig) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let values = |len: usize, seed: usize| -> Vec<f32> {
            (0..len)
                .map(|i| ((i * 7 + seed * 13) % 17) as f32 * 0.25 - 2.0)
                .collect()
        };
        (
            values(config.lda as usize * config.k as usize, 1),
            values(config.ldb as usize * config.n as usize, 2),
            values(config.ldc as usize * config.n as usize, 3),
        )
    }

    fn config() -> GemmConfig {
        GemmConfig::new(40, 24, 16)
    }

    fn run(gemm: &Gemm, config: &GemmConfig) -> crate::api::Choice {
        let (a, b, mut c) = buffers(config);
        gemm.run(config, &Algorithm::Tuned(Math::Strict), &a, &b, &mut c)
            .unwrap()
    }

    #[test]
    fn the_first_call_tunes_and_writes_the_file_and_later_calls_read_it_without_timing() {
        let dir = folder("first-call");
        let path = dir.join("sub").join("tuning.csv");
        let (gemm, readings) = clocked(&path, 13000);
        let choice = run(&gemm, &config());
        assert_eq!(choice.variant, FAST, "{choice}");
        let Some(Tuning::Measured { ranking, stored }) = &choice.tuning else {
            panic!("{choice:?}");
        };
        assert_eq!(stored.as_deref(), Some(path.as_path()));
        assert_eq!(ranking[0], (FAST.to_string(), 0.5));
        assert_eq!(
            ranking[1].1, 1.0,
            "the runner-up: the first candidate timed"
        );
        let p = problem(40, 24, 16, Dtype::F32);
        let configurations = candidates(&p, Math::Strict, None).len();
        let kernels = auto::candidates(&p, Math::Strict, None).len();
        assert_eq!(ranking.len(), configurations, "every candidate ran");
        assert!(
            choice.reason.starts_with(&format!(
                "tuned now under the strict contract: {configurations} configurations of {kernels} kernels timed"
            )),
            "{choice}"
        );
        assert!(
            choice.reason.contains("stopped after the warm-up"),
            "{}",
            choice.reason
        );
        assert!(choice
            .reason
            .contains(&format!("stored in {}", path.display())));
        let timed = readings.load(Ordering::SeqCst);
        // Each candidate once, and the first and the winner five more times.
        assert_eq!(timed, ranking.len() + 10);
        let rows = parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].1.winner, FAST);
        assert_eq!(rows[0].1.median_ms, 0.5);
        assert_eq!((rows[0].0.m, rows[0].0.n, rows[0].0.k), (40, 24, 16));

        // The same handle: from memory, nothing timed.
        let again = run(&gemm, &config());
        assert_eq!(readings.load(Ordering::SeqCst), timed);
        assert_eq!(again.variant, FAST);
        assert_eq!(again.tuning, Some(Tuning::Cached { median_ms: 0.5 }));
        // Another handle (another process, as far as the cache knows): from the file.
        let (other, other_readings) = clocked(&path, 13000);
        let read = run(&other, &config());
        assert_eq!(other_readings.load(Ordering::SeqCst), 0, "{read}");
        assert_eq!(read.variant, FAST);
        assert!(
            read.reason.starts_with(&format!(
                "from the tuning cache {}: tuned earlier",
                path.display()
            )),
            "{read}"
        );
        // `choose` says the same without running anything.
        let chosen = other
            .choose::<f32>(&config(), &Algorithm::Tuned(Math::Strict))
            .unwrap();
        assert_eq!(chosen.variant, FAST);

        // Another shape is another key: tuned, and added beside the first.
        let (fresh, fresh_readings) = clocked(&path, 13000);
        let wider = GemmConfig::new(48, 24, 16);
        assert!(matches!(
            fresh
                .choose::<f32>(&wider, &Algorithm::Tuned(Math::Strict))
                .unwrap()
                .tuning,
            Some(Tuning::NotTuned)
        ));
        let tuned = run(&fresh, &wider);
        assert!(fresh_readings.load(Ordering::SeqCst) > 0);
        assert!(matches!(tuned.tuning, Some(Tuning::Measured { .. })));
        let rows = parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(rows.len(), 2, "{rows:?}");
        // Another contract is another key too.
        let (_, math_readings) = {
            let (g, r) = clocked(&path, 13000);
            let (a, b, mut c) = buffers(&config());
            let choice = g
                .run(&config(), &Algorithm::Tuned(Math::Tf32), &a, &b, &mut c)
                .unwrap();
            assert!(matches!(choice.tuning, Some(Tuning::Measured { .. })));
            (g, r)
        };
        assert!(math_readings.load(Ordering::SeqCst) > 0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn with_beta_c_ends_as_if_only_the_winner_ran() {
        let dir = folder("beta");
        let config = GemmConfig::new(40, 24, 16)
            .scale(0.5, -1.25)
            .leading_dimensions(44, 16, 48);
        let (a, b, c0) = buffers(&config);
        let (gemm, _) = clocked(&dir.join("tuning.csv"), 13000);
        let mut c = c0.clone();
        let choice = gemm
            .run(&config, &Algorithm::Tuned(Math::Strict), &a, &b, &mut c)
            .unwrap();
        assert!(matches!(choice.tuning, Some(Tuning::Measured { .. })));
        assert_eq!(choice.variant, FAST);
        // The winner alone, on C's input: the same bits, the padding rows included.
        let mut alone = c0.clone();
        Gemm::emulator()
            .run(&config, &Algorithm::kernel(FAST), &a, &b, &mut alone)
            .unwrap();
        assert_eq!(c, alone);
        // And that is the product: C = 0.5·A·B − 1.25·C, exactly (small multiples of 1/4).
        let at = |i: usize, j: usize| i + j * 48;
        let dot: f32 = (0..16).map(|l| a[3 + l * 44] * b[l + 5 * 16]).sum();
        assert_eq!(c[at(3, 5)], 0.5 * dot - 1.25 * c0[at(3, 5)]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_corrupt_or_foreign_file_is_ignored_with_a_warning_and_replaced() {
        let dir = folder("corrupt");
        let path = dir.join("tuning.csv");
        std::fs::create_dir_all(&dir).unwrap();
        for (text, says) in [
            ("\u{0}\u{1}garbage", "another format"),
            ("gpu-gemm tuning cache, format 0\n", "another version"),
            (
                &*format!("{FORMAT}\n{HEADER}\nTest GPU,13.0,sm_90,x,f32,strict,NN,1,2\n"),
                "line 3: 9 fields",
            ),
        ] {
            std::fs::write(&path, text).unwrap();
            let (gemm, readings) = clocked(&path, 13000);
            let choice = run(&gemm, &config());
            assert!(readings.load(Ordering::SeqCst) > 0, "tuned: {choice}");
            assert!(
                choice.reason.contains(&format!(
                    "warning: the tuning cache {} was ignored: ",
                    path.display()
                )) && choice.reason.contains(says),
                "{choice}"
            );
            let rows = parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
            assert_eq!(rows.len(), 1, "rewritten with this call's row");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_entry_of_another_driver_or_gpu_is_not_used_and_is_kept() {
        let dir = folder("other-key");
        let path = dir.join("tuning.csv");
        let p = problem(40, 24, 16, Dtype::F32);
        let slow = |device: Device| {
            (
                Key::new(device, &p, Math::Strict),
                Entry {
                    winner: "v0".into(),
                    median_ms: 0.001,
                    runner_up: None,
                },
            )
        };
        let other_gpu = Device {
            gpu: "Another GPU".into(),
            ..device(13000)
        };
        let other_build = Device {
            build: build_id(0x5678),
            ..device(13000)
        };
        let foreign = vec![slow(device(12080)), slow(other_gpu), slow(other_build)];
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&path, render(&foreign)).unwrap();
        let (gemm, readings) = clocked(&path, 13000);
        let choice = run(&gemm, &config());
        assert!(readings.load(Ordering::SeqCst) > 0);
        assert_eq!(choice.variant, FAST, "not the other keys' v0: {choice}");
        let rows = parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(rows.len(), 4, "the other devices' rows stay");
        assert_eq!(&rows[..3], &foreign[..]);
        // The handle of the first driver reads its own row.
        let (old_driver, old_readings) = clocked(&path, 12080);
        assert_eq!(run(&old_driver, &config()).variant, "v0");
        assert_eq!(old_readings.load(Ordering::SeqCst), 0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_entry_that_names_a_kernel_outside_the_contract_is_tuned_again() {
        let dir = folder("stale");
        let path = dir.join("tuning.csv");
        let p = problem(40, 24, 16, Dtype::F32);
        let stale = vec![(
            Key::new(device(13000), &p, Math::Strict),
            Entry {
                winner: "tc-tf32:1".into(),
                median_ms: 0.001,
                runner_up: None,
            },
        )];
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&path, render(&stale)).unwrap();
        let (gemm, readings) = clocked(&path, 13000);
        let choice = run(&gemm, &config());
        assert!(readings.load(Ordering::SeqCst) > 0);
        assert_eq!(choice.variant, FAST);
        assert!(
            choice
                .reason
                .contains("warning: the cache's entry for this problem names `tc-tf32:1`"),
            "{choice}"
        );
        let rows = parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].1.winner, FAST, "replaced");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unwritable_cache_leaves_the_call_correct_and_says_so() {
        let dir = folder("unwritable");
        std::fs::create_dir_all(&dir).unwrap();
        // A regular file where the cache's folder should be.
        let blocker = dir.join("not-a-folder");
        std::fs::write(&blocker, "x").unwrap();
        let path = blocker.join("tuning.csv");
        let (gemm, readings) = clocked(&path, 13000);
        let choice = run(&gemm, &config());
        assert_eq!(choice.variant, FAST);
        let Some(Tuning::Measured { stored: None, .. }) = &choice.tuning else {
            panic!("{choice:?}");
        };
        assert!(
            choice
                .reason
                .contains("not stored (cannot make the folder of the tuning cache")
                && choice.reason.ends_with("this handle remembers it"),
            "{choice}"
        );
        // The handle remembers: its next call times nothing.
        let timed = readings.load(Ordering::SeqCst);
        assert!(matches!(
            run(&gemm, &config()).tuning,
            Some(Tuning::Cached { .. })
        ));
        assert_eq!(readings.load(Ordering::SeqCst), timed);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
