//! The pipeline of one run: resolve the variant and problem, open the backend, launch and
//! time, verify, report.
use crate::cli::{BackendArg, Cli, DEFAULT_PITCH_BYTES};
use crate::cpu::{self, CpuVariant};
use crate::gpu::Gpu;
use crate::problem::{Inputs, Problem, Scalar};
use crate::registry::{self, CublasMath, Variant};
use crate::verify::{self, Check};
use anyhow::{bail, Result};
use kernels_gpu::gemm::{Dtype, Geometry};
use kernels_gpu::registry::{Shape, Target, TmaOperands};

/// What a backend launches: a kernel entry point with its grid, block and shared memory, or
/// cuBLAS on the same buffers; or a CPU variant, which runs on the host whatever the backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Launch {
    Kernel {
        entry: String,
        geometry: Geometry,
        /// Split-k's second launch, which adds the first's partial products into C.
        reduce: Option<Reduce>,
        /// The PTX build that holds the entry point (sm_90a: Hopper only).
        target: Target,
        /// Tensor maps for A and B (TMA kernels), and whether the grid is persistent.
        tma: Option<TmaOperands>,
    },
    Cublas(CublasMath),
    /// `tile` is the resolved `--tile` (`blockL`), 0 for a variant without one.
    Cpu {
        entry: String,
        variant: &'static CpuVariant,
        tile: u32,
    },
}

/// The second launch of a split-k variant (`kernels_gpu::variants::split_k`): the first writes
/// `splits` partial products, m×n each with leading dimension m, into a workspace; this one
/// reads them as its A (`k = splits`, `lda = m`) and writes `C = α·Σ + β·C`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reduce {
    pub entry: String,
    pub geometry: Geometry,
    pub splits: u32,
}

impl Reduce {
    /// Elements of the workspace for an m×n C.
    pub fn workspace_len(&self, m: u32, n: u32) -> usize {
        self.splits as usize * m as usize * n as usize
    }
}

impl Launch {
    /// The kernel's or CPU variant's entry point, or "cublas" / "cublas-tf32".
    pub fn name(&self) -> &str {
        match self {
            Launch::Kernel { entry, .. } | Launch::Cpu { entry, .. } => entry,
            Launch::Cublas(math) => Variant::Cublas(*math).name(),
        }
    }
}

/// What ran a variant, and so what its time means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// A kernel or cuBLAS on the GPU, timed with CUDA events.
    Gpu,
    /// A kernel on the CPU emulator: wall time of the emulation, not a performance figure.
    Emulator,
    /// A CPU variant on the host, timed with `Instant`: real CPU performance.
    Cpu,
}

impl Engine {
    /// Whether the time is a performance figure (GPU or CPU), not emulation time.
    pub fn measures_performance(self) -> bool {
        self != Engine::Emulator
    }

    /// "GPU", "emulator" or "CPU".
    pub fn name(self) -> &'static str {
        match self {
            Engine::Gpu => "GPU",
            Engine::Emulator => "emulator",
            Engine::Cpu => "CPU",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    pub warmup: usize,
    pub iters: usize,
    /// Stop timing early once this many milliseconds were timed (after at least 3 runs), so that
    /// the slow variants of a table do not take minutes.
    pub budget_ms: f64,
    pub check: bool,
}

impl Timing {
    /// Whether another timed run is wanted after `done` runs took `spent_ms`.
    pub fn wants_more(&self, done: usize, spent_ms: f64) -> bool {
        done < self.iters && (done < 3 || spent_ms < self.budget_ms)
    }
}

/// What a backend brings back from a run.
pub struct Measured<T> {
    pub times_ms: Vec<f64>,
    /// C as uploaded for the checked run (NaN when beta = 0).
    pub uploaded_c: Vec<T>,
    /// C after the checked run.
    pub result: Vec<T>,
}

pub enum Backend {
    /// Boxed: the GPU backend holds its modules' PTX, the emulator nothing.
    Gpu(Box<Gpu>),
    Emulator,
}

impl Backend {
    /// `--backend`, or the GPU when a driver and device exist and the emulator otherwise.
    /// The second value is the one-line note printed when the emulator was chosen for the user.
    pub fn open(
        choice: Option<BackendArg>,
        ptx: Option<&std::path::Path>,
    ) -> Result<(Self, Option<String>)> {
        match choice {
            Some(BackendArg::Emu) => Ok((Backend::Emulator, None)),
            Some(BackendArg::Gpu) => Ok((Backend::Gpu(Box::new(Gpu::open(ptx)?)), None)),
            None => match Gpu::open(ptx) {
                Ok(gpu) => Ok((Backend::Gpu(Box::new(gpu)), None)),
                Err(e) if ptx.is_none() => Ok((
                    Backend::Emulator,
                    Some(format!(
                        "no GPU ({}): running on the CPU emulator at a small size",
                        first_clause(&e.to_string())
                    )),
                )),
                Err(e) => Err(e),
            },
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Backend::Gpu(g) => format!("{} ({}, PTX {})", g.device_name, g.arch, g.ptx_origin),
            Backend::Emulator => "the CPU emulator".to_string(),
        }
    }

    pub fn is_gpu(&self) -> bool {
        matches!(self, Backend::Gpu(_))
    }
}

fn first_clause(s: &str) -> &str {
    s.split(';').next().unwrap_or(s)
}

/// The outcome of one run.
#[derive(Clone, Debug)]
pub struct Report {
    pub variant: String,
    pub entry: String,
    pub engine: Engine,
    pub problem: Problem,
    pub median_ms: f64,
    pub min_ms: f64,
    pub runs: usize,
    pub check: Option<Check>,
}

impl Report {
    pub fn tflops(&self) -> f64 {
        tflops(self.problem.flops(), self.median_ms)
    }

    pub fn passed(&self) -> bool {
        self.check.as_ref().is_none_or(Check::passed)
    }
}

/// TFLOP/s of `flops` done in `ms` milliseconds.
pub fn tflops(flops: f64, ms: f64) -> f64 {
    flops / (ms * 1e-3) / 1e12
}

/// Median of a non-empty sample (the mean of the middle two for an even count).
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

/// Builds the problem from the command line; `default_size` applies when no size is given.
pub fn problem_from_cli(cli: &Cli, default_size: u32, seed: u64) -> Result<Problem> {
    let size = cli.size.unwrap_or(default_size);
    let (m, n, k) = (
        cli.m.unwrap_or(size),
        cli.n.unwrap_or(size),
        cli.k.unwrap_or(size),
    );
    let shape = Shape {
        m,
        n,
        k,
        lda: cli.lda.unwrap_or(m),
        ldb: cli.ldb.unwrap_or(k),
        ldc: cli.ldc.unwrap_or(m),
    };
    let p = Problem {
        shape,
        dtype: cli.dtype.dtype(),
        alpha: cli.alpha,
        beta: cli.beta,
        init: cli.init,
        seed,
    };
    p.validate()?;
    Ok(p)
}

/// The leading-dimension layouts a run covers, each as the pitch in bytes to pad the columns
/// to; `None` is the leading dimensions as given (`--lda` etc., by default the row counts).
/// `--pitch` gives the pitched layout only, `--pitch-compare` both, the unpadded one first.
pub fn layouts(cli: &Cli) -> Vec<Option<u32>> {
    if cli.pitch_compare {
        vec![None, Some(cli.pitch.unwrap_or(DEFAULT_PITCH_BYTES))]
    } else {
        vec![cli.pitch]
    }
}

/// The problem of one layout of [`layouts`].
pub fn with_layout(p: Problem, pitch: Option<u32>) -> Result<Problem> {
    match pitch {
        Some(bytes) => p.pitched(bytes),
        None => Ok(p),
    }
}

/// Resolves what to launch for a variant, tile and problem, or says why it cannot run.
pub fn plan(variant: Variant, tile: Option<u32>, p: &Problem) -> Result<Launch> {
    if !variant.dtypes().contains(&p.dtype) {
        bail!(
            "variant `{}` has no {} version (it runs in {})",
            variant.name(),
            p.dtype.name(),
            variant
                .dtypes()
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    match variant {
        Variant::Kernel(k) => {
            let tile = registry::resolve_tile(variant, tile)?;
            if let Err(constraint) = (k.supports)(&p.shape, p.dtype) {
                bail!(
                    "variant `{}` does not support this shape: {constraint}",
                    k.name
                );
            }
            let s = p.shape;
            let geometry = (k.geometry)(s.m, s.n, s.k, p.dtype.bytes(), tile);
            let reduce = k.reduce.map(|entry| Reduce {
                entry: format!("{entry}_{}", p.dtype.name()),
                geometry: kernels_gpu::variants::split_k::reduce_geometry(s.m, s.n),
                splits: geometry.grid.1,
            });
            Ok(Launch::Kernel {
                entry: k.entry_name(p.dtype, tile),
                geometry,
                reduce,
                target: k.target,
                tma: k.tma.map(|operands| operands(tile)),
            })
        }
        Variant::Cpu(c) => Ok(Launch::Cpu {
            entry: c.entry_name(p.dtype),
            variant: c,
            tile: registry::resolve_tile(variant, tile)?,
        }),
        Variant::Cublas(_) if tile.is_some() => {
            bail!("{} has no tile parameter", variant.name())
        }
        Variant::Cublas(math) => Ok(Launch::Cublas(math)),
        Variant::Auto => {
            if tile.is_some() {
                bail!("auto chooses its own configuration (got a tile)");
            }
            let choice = crate::auto::choose(&p.shape, p.dtype)?;
            plan(choice.variant, choice.tile, p)
        }
    }
}

/// Runs one variant on one problem: inputs, launch and time, check.
pub fn execute(
    backend: &Backend,
    variant: Variant,
    tile: Option<u32>,
    p: &Problem,
    timing: Timing,
) -> Result<Report> {
    execute_many(backend, &[(variant, tile)], p, timing, |_| {})
        .pop()
        .unwrap()
}

/// Runs several variants on one problem: the inputs are made and the f64 reference computed
/// once; `progress` sees each report as it comes.
pub fn execute_many(
    backend: &Backend,
    variants: &[(Variant, Option<u32>)],
    p: &Problem,
    timing: Timing,
    progress: impl FnMut(&Result<Report>),
) -> Vec<Result<Report>> {
    let (b, v, t) = (backend, variants, timing);
    match p.dtype {
        Dtype::F32 => execute_typed::<f32>(b, v, p, t, Some(cpu::run::<f32>), progress),
        Dtype::F64 => execute_typed::<f64>(b, v, p, t, Some(cpu::run::<f64>), progress),
        // The CPU variants compute in f32 and f64 only (`plan` refuses them a 16-bit problem
        // from `Variant::dtypes`), so the 16-bit types need no host arithmetic.
        Dtype::Bf16 => execute_typed::<half::bf16>(b, v, p, t, None, progress),
        Dtype::F16 => execute_typed::<half::f16>(b, v, p, t, None, progress),
    }
}

/// How a CPU variant runs in an element type: [`cpu::run`] for the types with host arithmetic.
type CpuRun<T> = fn(&CpuVariant, u32, &Problem, &Inputs<T>, Timing) -> Measured<T>;

fn execute_typed<T: Scalar>(
    backend: &Backend,
    variants: &[(Variant, Option<u32>)],
    p: &Problem,
    timing: Timing,
    cpu_run: Option<CpuRun<T>>,
    mut progress: impl FnMut(&Result<Report>),
) -> Vec<Result<Report>> {
    assert_eq!(T::DTYPE, p.dtype, "the inputs' type is the problem's");
    let inputs = Inputs::<T>::generate(p);
    let mut reference = None;
    let mut reports = Vec::new();
    for &(variant, tile) in variants {
        let report = (|| {
            let launch = plan(variant, tile, p)?;
            let (measured, engine) = match (&launch, backend) {
                (&Launch::Cpu { variant, tile, .. }, _) => match cpu_run {
                    Some(run) => (run(variant, tile, p, &inputs, timing), Engine::Cpu),
                    None => bail!(
                        "variant `{}` has no {} version (the CPU variants compute in f32 and f64)",
                        variant.name,
                        p.dtype.name()
                    ),
                },
                (_, Backend::Gpu(gpu)) => (gpu.run(&launch, p, &inputs, timing)?, Engine::Gpu),
                (_, Backend::Emulator) => (
                    crate::emulator::run(&launch, p, &inputs, timing)?,
                    Engine::Emulator,
                ),
            };
            let check = timing.check.then(|| {
                let reference =
                    reference.get_or_insert_with(|| verify::Reference::compute(p, &inputs));
                verify::check_against(
                    p,
                    variant.arithmetic(),
                    reference,
                    &measured.uploaded_c,
                    &measured.result,
                )
            });
            let times = &measured.times_ms;
            let label = if let Variant::Auto = variant {
                format!("auto→{}", crate::auto::choose(&p.shape, p.dtype)?.label())
            } else if variant.tiles().is_empty() {
                variant.name().to_string()
            } else {
                format!(
                    "{}:{}",
                    variant.name(),
                    registry::resolve_tile(variant, tile)?
                )
            };
            Ok(Report {
                variant: label,
                entry: launch.name().to_string(),
                engine,
                problem: *p,
                median_ms: if times.is_empty() {
                    f64::NAN
                } else {
                    median(times)
                },
                min_ms: times.iter().copied().fold(f64::INFINITY, f64::min),
                runs: times.len(),
                check,
            })
        })();
        progress(&report);
        reports.push(report);
    }
    reports
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn tflops_arithmetic() {
        // 2·4096³ flops in 2.7489 ms is 50 TFLOP/s.
        let flops = 2.0 * 4096f64.powi(3);
        assert!((tflops(flops, 2.748779069) - 50.0).abs() < 1e-6);
        assert!((tflops(2e12, 1000.0) - 2.0).abs() < 1e-12);
    }

    #[test]
    fn median_of_odd_and_even_samples() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[7.0]), 7.0);
    }

    #[test]
    fn problem_sizes_from_the_command_line() {
        let cli = Cli::parse_from([
            "host",
            "--variant",
            "v1",
            "--size",
            "100",
            "--k",
            "7",
            "--ldc",
            "128",
        ]);
        let p = problem_from_cli(&cli, 4096, 1).unwrap();
        assert_eq!(
            p.shape,
            Shape {
                m: 100,
                n: 100,
                k: 7,
                lda: 100,
                ldb: 7,
                ldc: 128
            }
        );
        let cli = Cli::parse_from(["host", "--variant", "v1"]);
        assert_eq!(problem_from_cli(&cli, 64, 1).unwrap().shape.m, 64);
        let cli = Cli::parse_from(["host", "--variant", "v1", "--m", "10", "--lda", "5"]);
        assert!(problem_from_cli(&cli, 64, 1)
            .unwrap_err()
            .to_string()
            .contains("lda"));
    }

    #[test]
    fn pitch_options_choose_the_layouts() {
        let layouts_of = |args: &str| {
            let cli = Cli::parse_from(
                ["host", "--variant", "v4"]
                    .into_iter()
                    .chain(args.split_whitespace()),
            );
            layouts(&cli)
        };
        assert_eq!(layouts_of(""), [None]);
        assert_eq!(layouts_of("--pitch"), [Some(512)]);
        assert_eq!(layouts_of("--pitch 64"), [Some(64)]);
        assert_eq!(layouts_of("--pitch-compare"), [None, Some(512)]);
        assert_eq!(layouts_of("--pitch-compare --pitch 128"), [None, Some(128)]);
        let cli = Cli::parse_from(["host", "--variant", "v4", "--m", "100", "--k", "3"]);
        let p = problem_from_cli(&cli, 64, 1).unwrap();
        assert_eq!(with_layout(p, None).unwrap(), p);
        let pitched = with_layout(p, Some(512)).unwrap().shape;
        assert_eq!((pitched.lda, pitched.ldb, pitched.ldc), (128, 128, 128));
    }

    #[test]
    fn emulator_runs_and_checks_a_variant() {
        let cli = Cli::parse_from([
            "host",
            "--variant",
            "v4",
            "--m",
            "33",
            "--n",
            "17",
            "--k",
            "65",
            "--lda",
            "40",
            "--beta",
            "0.5",
        ]);
        let p = problem_from_cli(&cli, 64, 3).unwrap();
        let v = registry::find("v4").unwrap();
        let r = execute(
            &Backend::Emulator,
            v,
            None,
            &p,
            Timing {
                warmup: 0,
                iters: 1,
                budget_ms: f64::INFINITY,
                check: true,
            },
        )
        .unwrap();
        assert!(r.passed(), "{}", r.check.unwrap().summary());
        assert_eq!(r.entry, "gemm_v4_f32");
    }
}
