//! The pipeline of one run, top to bottom: resolve what to launch for a variant and problem
//! ([`plan`]), make the inputs, launch and time on the backend, verify against the f64
//! reference, report. It takes a plain description of a run (a [`Problem`], variants, a
//! [`Timing`], a [`Backend`]); the command line that builds one lives in `host`.
use crate::auto::Math;
use crate::cpu::{self, CpuVariant};
use crate::gpu::Gpu;
use crate::launch::{Copies, Pointwise};
pub use crate::launch::{Launch, Reduce};
use crate::problem::{Activation, Bias, Epilogue, Inputs, Problem, Scalar};
use crate::registry::{self, CublasMath, Variant};
pub use crate::timing::{median, Clock, Measured, Timing};
use crate::verify::{self, Check};
use anyhow::{bail, Result};
use kernels_gpu::gemm::{Dtype, GroupLayout};

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

/// Where to run the GPU variants (the command line's `--backend`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum BackendChoice {
    /// GPU 0 through the CUDA driver
    Gpu,
    /// The CPU emulator (kernels_gpu::emu): same kernels, checked accesses, no GPU needed
    Emu,
}

/// What runs the kernels and cuBLAS: the GPU, or the CPU emulator. The CPU variants run on the
/// host whatever it is.
pub enum Backend {
    /// Boxed: the GPU backend holds its modules' PTX, the emulator nothing.
    Gpu(Box<Gpu>),
    /// The CPU emulator: no GPU, no cuBLAS, and times that are emulation times.
    Emulator,
}

impl Backend {
    /// The backend asked for, or (`None`) the GPU when a driver and device exist and the
    /// emulator otherwise. The second value is the one-line note to show when the emulator was
    /// chosen for the caller. `ptx` replaces the embedded PTX of its target.
    pub fn open(
        choice: Option<BackendChoice>,
        ptx: Option<&std::path::Path>,
    ) -> Result<(Self, Option<String>)> {
        match choice {
            Some(BackendChoice::Emu) => Ok((Backend::Emulator, None)),
            Some(BackendChoice::Gpu) => match Gpu::open(ptx) {
                Ok(gpu) => Ok((Backend::Gpu(Box::new(gpu)), None)),
                Err(e) => bail!("{e:#}; `--backend emu` runs the kernels on the CPU emulator"),
            },
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

    /// For reports: the device, its compute capability and the PTX's origin, or "the CPU
    /// emulator".
    pub fn describe(&self) -> String {
        match self {
            Backend::Gpu(g) => format!("{} ({}, kernels: {})", g.device_name, g.arch, g.ptx_origin),
            Backend::Emulator => "the CPU emulator".to_string(),
        }
    }

    /// Whether it is a GPU.
    pub fn is_gpu(&self) -> bool {
        matches!(self, Backend::Gpu(_))
    }

    /// The GPU's compute capability as `XY` (9.0 is 90); `None` on the emulator, which runs
    /// every build.
    pub fn arch(&self) -> Option<u32> {
        match self {
            Backend::Gpu(g) => Some(g.arch_number()),
            Backend::Emulator => None,
        }
    }
}

fn first_clause(s: &str) -> &str {
    s.split(';').next().unwrap_or(s)
}

/// The outcome of one run.
#[derive(Clone, Debug)]
pub struct Report {
    /// The variant as reports label it: its name, `name:tile` for a variant with a tile parameter,
    /// `auto→choice` (`auto[contract]→choice` under a relaxed contract).
    pub variant: String,
    /// What ran: the kernel's or CPU variant's entry point with its dtype suffix, or `cublas` /
    /// `cublas-tf32`.
    pub entry: String,
    /// What ran it, which says whether the times measure performance.
    pub engine: Engine,
    /// The problem it solved.
    pub problem: Problem,
    /// Median of the timed runs, in milliseconds; NaN when none was timed.
    pub median_ms: f64,
    /// Fastest timed run, in milliseconds; +∞ when none was timed.
    pub min_ms: f64,
    /// How many runs were timed (warm-ups excluded).
    pub runs: usize,
    /// The comparison with the f64 reference; `None` when [`Timing::check`] was off.
    pub check: Option<Check>,
}

impl Report {
    /// TFLOP/s at the median time, counting 2·m·n·k flops; NaN when no run was timed.
    pub fn tflops(&self) -> f64 {
        tflops(self.problem.flops(), self.median_ms)
    }

    /// Whether the check passed; `true` when there was none.
    pub fn passed(&self) -> bool {
        self.check.as_ref().is_none_or(Check::passed)
    }
}

/// TFLOP/s of `flops` done in `ms` milliseconds.
pub fn tflops(flops: f64, ms: f64) -> f64 {
    flops / (ms * 1e-3) / 1e12
}

/// `p` with its leading dimensions as given (`None`) or pitched to a multiple of `pitch` bytes.
pub fn with_layout(p: Problem, pitch: Option<u32>) -> Result<Problem> {
    match pitch {
        Some(bytes) => p.pitched(bytes),
        None => Ok(p),
    }
}

/// Resolves what to launch for a variant, tile and problem on a device of compute capability
/// `arch` (`None`: the emulator; it decides `auto`'s choice only), or says why it cannot run.
pub fn plan(variant: Variant, tile: Option<u32>, p: &Problem, arch: Option<u32>) -> Result<Launch> {
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
    variant.check_transposes(p.transposes)?;
    check_epilogue(variant, p)?;
    check_groups(variant, tile, p)?;
    registry::check_batch(variant, tile, p)?;
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
            let mut geometry = (k.geometry)(s.m, s.n, s.k, p.dtype.bytes(), tile);
            // A batch on the Hopper kernels: a block per tile of every member, which the
            // persistent grid caps (the others launch a layer of their grid per member).
            if k.tma.is_some() {
                geometry.grid.0 = geometry.grid.0.saturating_mul(p.members().count);
            }
            let reduce = k.reduce.map(|entry| Reduce {
                entry: format!("{entry}_{}", p.dtype.name()),
                geometry: kernels_gpu::variants::split_k::reduce_geometry(s.m, s.n),
                splits: geometry.grid.1,
            });
            let entry = k.entry_name(p.dtype, tile, p.transposes.into());
            // A strided batch of the f32 and f64 kernels is a twin entry point (`kernels_gpu::entry`).
            let entry = if k.has_batch_twins() && p.batch.is_batched() {
                kernels_gpu::registry::batch_twin(&entry)
            } else {
                entry
            };
            Ok(Launch::Kernel {
                entry,
                geometry,
                reduce,
                target: k.target,
                tma: k.tma.map(|operands| operands(tile, p.transposes.into())),
                copies: None,
                unfused: None,
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
        Variant::Auto(math) => {
            if tile.is_some() {
                bail!("auto chooses its own configuration (got a tile)");
            }
            let choice = crate::auto::choose(p, math, arch)?;
            match choice.copies {
                Some(copies) => plan_reading_copies(choice.variant, choice.tile, p, copies, arch),
                None => plan(choice.variant, choice.tile, p, arch),
            }
        }
        Variant::Unfused(math) => {
            let plain = Problem {
                epilogue: Epilogue::NONE,
                ..*p
            };
            let mut launch = plan(Variant::Auto(math), None, &plain, arch)?;
            if let Launch::Kernel { unfused, .. } = &mut launch {
                let entry = format!(
                    "{}_{}",
                    kernels_gpu::registry::UNFUSED_EPILOGUE,
                    p.dtype.name()
                );
                *unfused = Some(Box::new(Pointwise { entry }));
            }
            Ok(launch)
        }
        // Tuning times the candidates on the caller's own buffers, which a plan has not got.
        Variant::Tuned(_) => bail!(
            "`tuned` is chosen by timing its candidates on the buffers of a call: it runs through \
             the library (`Gemm::run` with `Algorithm::Tuned`), as `host --variant tuned` does"
        ),
    }
}

/// The launch of `variant` on `copies` of A and B (aligned, [`crate::auto::aligned_operands`],
/// or the other way round, [`crate::auto::normal_operands`]): what `auto` plans when no kernel
/// reads the operands as they lie.
pub fn plan_reading_copies(
    variant: Variant,
    tile: Option<u32>,
    p: &Problem,
    copies: Copies,
    arch: Option<u32>,
) -> Result<Launch> {
    match plan(variant, tile, &copies.problem_reading_them(p), arch)? {
        Launch::Kernel {
            entry,
            geometry,
            reduce,
            target,
            tma,
            copies: None,
            unfused,
        } => Ok(Launch::Kernel {
            entry,
            geometry,
            reduce,
            target,
            tma,
            copies: Some(copies),
            unfused,
        }),
        _ => unreachable!("auto chooses kernels only"),
    }
}

/// Refuses a fused epilogue where it would not be applied: the 16-bit kernels apply it, cuBLAS
/// through cuBLASLt's epilogues (bias per row, ReLU or GELU), `unfused` after the GEMM; `unfused`
/// needs one to separate.
fn check_epilogue(variant: Variant, p: &Problem) -> Result<()> {
    let e = p.epilogue;
    if e.is_none() {
        if matches!(variant, Variant::Unfused(_)) {
            bail!("`unfused` is the baseline of a fused epilogue: give one (--epilogue bias,gelu)");
        }
        return Ok(());
    }
    let fuses = match variant {
        Variant::Kernel(k) => {
            p.dtype.is_16bit() && k.target == kernels_gpu::registry::Target::Sm90a
        }
        Variant::Auto(_) | Variant::Tuned(_) | Variant::Unfused(_) => p.dtype.is_16bit(),
        Variant::Cublas(CublasMath::Default) => {
            if !p.dtype.is_16bit() {
                false
            } else if e.bias() == Bias::PerColumn || e.activation() == Activation::Silu {
                bail!(
                    "cuBLASLt's epilogues have a bias per row of C and ReLU or GELU; not {}",
                    if e.bias() == Bias::PerColumn {
                        "a bias per column"
                    } else {
                        "SiLU"
                    }
                );
            } else {
                true
            }
        }
        Variant::Cublas(_) | Variant::Cpu(_) => false,
    };
    if !fuses {
        bail!(
            "{} has no fused epilogue in {}: the bias and activation are fused into the 16-bit \
             (bf16, f16) Hopper kernels",
            variant.name(),
            p.dtype.name()
        );
    }
    if e.amax() {
        if variant.is_cublas() {
            bail!(
                "cuBLASLt gathers D's amax (CUBLASLT_MATMUL_DESC_AMAX_D_POINTER) in FP8 matmuls \
                 only: compare the amax epilogue with cuBLASLt's epilogue without it"
            );
        }
        if p.groups != GroupLayout::None {
            bail!("the amax epilogue gathers one problem's or one batch's D, not a grouped GEMM's");
        }
    }
    Ok(())
}

/// Refuses a grouped GEMM where it would not run as one ([`Variant::runs_grouped`]).
fn check_groups(variant: Variant, tile: Option<u32>, p: &Problem) -> Result<()> {
    if p.groups == GroupLayout::None {
        return Ok(());
    }
    // A kernel at the tile it will run (its default without --tile).
    let resolved = match variant {
        Variant::Kernel(_) => Some(registry::resolve_tile(variant, tile)?),
        _ => None,
    };
    if !variant.runs_grouped(p.dtype, p.transposes, resolved) {
        bail!(
            "{} has no grouped form in {} {}: a grouped GEMM runs on auto, on cublas (a call \
             per group) and cublas-grouped, and on the kernels whose walk finds each tile's \
             group: {}",
            registry::label(variant, tile).unwrap_or_else(|_| variant.name().to_string()),
            p.dtype.name(),
            p.transposes.letters(),
            registry::kernels_where(|v, t| v.runs_grouped(p.dtype, p.transposes, t))
        );
    }
    if !p.epilogue.is_none() && variant.is_cublas() {
        bail!("cuBLAS's yardstick for a fused epilogue (cuBLASLt) runs one problem, not groups");
    }
    Ok(())
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
        // FP8 operands carry scales (per tensor or per block) and C is bf16: their pipeline,
        // above this one, is `crate::fp8::run`.
        Dtype::E4m3 | Dtype::E4m3E5m2 => {
            let refusal =
                "an FP8 problem runs through gpu_gemm::fp8::run (its operands carry scales)";
            v.iter().map(|_| Err(anyhow::anyhow!(refusal))).collect()
        }
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
    let mut references = None;
    let mut reports = Vec::new();
    for &(variant, tile) in variants {
        // cuBLASLt gathers no amax outside FP8: as a yardstick it runs the epilogue without it,
        // and says so.
        let yardstick_without_amax = variant.is_cublas() && p.epilogue.amax();
        let problem = if yardstick_without_amax {
            Problem {
                epilogue: p.epilogue.without_amax(),
                ..*p
            }
        } else {
            *p
        };
        let p = &problem;
        let report = (|| {
            let arch = backend.arch();
            let launch = plan(variant, tile, p, arch)?;
            // `auto` is checked as the kernel it chose computes.
            let (arithmetic, label) = match variant {
                Variant::Auto(math) | Variant::Unfused(math) => {
                    let choice = crate::auto::choose(p, math, arch)?;
                    let contract = match math {
                        Math::Strict => String::new(),
                        m => format!("[{}]", m.name()),
                    };
                    let then = match variant {
                        Variant::Unfused(_) => "+bias-activation",
                        _ => "",
                    };
                    (
                        choice.variant.arithmetic(),
                        format!("{}{contract}→{}{then}", variant.name(), choice.label()),
                    )
                }
                _ if yardstick_without_amax => (
                    variant.arithmetic(),
                    format!("{} (no amax)", registry::label(variant, tile)?),
                ),
                _ => (variant.arithmetic(), registry::label(variant, tile)?),
            };
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
                let references = references.get_or_insert_with(|| verify::references(p, &inputs));
                let (uploaded, result) = (&measured.uploaded_c, &measured.result);
                let mut check = if p.groups == GroupLayout::None {
                    verify::check_run(p, arithmetic, references, uploaded, result)
                } else {
                    verify::check_groups(p, arithmetic, references, &inputs, uploaded, result)
                };
                check.amax = measured
                    .amax
                    .map(|amax| verify::check_amax(p, result, amax));
                check
            });
            let times = &measured.times_ms;
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
    use crate::problem::Transposes;
    use kernels_gpu::registry::Shape;

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
    fn a_variant_asked_for_transposes_it_does_not_compute_is_refused_before_launch() {
        use crate::problem::Transpose::{No, Yes};
        let p = Problem {
            transposes: Transposes::new(Yes, No),
            ..Problem::packed(64, 64, 64, Dtype::Bf16)
        };
        let e = plan(registry::find("wgmma-16bit").unwrap(), None, &p, Some(90)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "wgmma-16bit computes op(A)=A, op(B)=B only (N,N); asked for T,N (op(A)=Aᵀ, op(B)=B)"
        );
        let f32_nt = Problem {
            dtype: Dtype::F32,
            transposes: Transposes::new(No, Yes),
            ..p
        };
        let e = plan(registry::find("cpu-naive").unwrap(), None, &f32_nt, None).unwrap_err();
        assert!(e.to_string().contains("asked for N,T"), "{e}");
        // cuBLAS computes all four.
        for t in Transposes::ALL {
            let p = Problem { transposes: t, ..p };
            assert!(plan(registry::find("cublas").unwrap(), None, &p, Some(90)).is_ok());
        }
        // auto runs an N,N kernel of the course on B copied transposed.
        match plan(Variant::Auto(Math::Strict), None, &f32_nt, Some(90)).unwrap() {
            Launch::Kernel {
                copies: Some(copies),
                ..
            } => {
                assert!(copies.a.is_none());
                let b = copies.b.unwrap();
                assert!(b.transposed && (b.rows, b.cols) == (64, 64) && b.to == 64);
                assert_eq!(
                    copies.problem_reading_them(&f32_nt).transposes,
                    Transposes::NN
                );
            }
            launch => panic!("auto planned {launch:?}"),
        }
        let e = execute(
            &Backend::Emulator,
            registry::find("v4").unwrap(),
            None,
            &f32_nt,
            Timing::CHECK_ONCE,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("v4 computes op(A)=A, op(B)=B only"),
            "{e}"
        );
    }

    #[test]
    fn emulator_runs_and_checks_a_variant() {
        let p = Problem {
            shape: Shape {
                m: 33,
                n: 17,
                k: 65,
                lda: 40,
                ldb: 65,
                ldc: 33,
            },
            transposes: Transposes::NN,
            dtype: Dtype::F32,
            alpha: 1.0,
            beta: 0.5,
            init: crate::problem::Init::Random,
            seed: 3,
            epilogue: kernels_gpu::fused::Epilogue::NONE,
            batch: kernels_gpu::gemm::Batch::ONE,
            groups: kernels_gpu::gemm::GroupLayout::None,
        };
        let v = registry::find("v4").unwrap();
        let r = execute(&Backend::Emulator, v, None, &p, Timing::CHECK_ONCE).unwrap();
        assert!(r.passed(), "{}", r.check.unwrap().summary());
        assert_eq!(r.entry, "gemm_v4_f32");
    }
}
