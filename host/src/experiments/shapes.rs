//! `host experiment shapes`: the shapes real models run, beside cuBLAS, in one process.
//!
//! The chapters measure squares (4096³, 8192³) and a few shapes that one pass of a large tile
//! serves badly. A model runs other shapes. Each of its linear layers is
//! `D[M×N] = X[M×K]·W[N×K]ᵀ`, M the tokens in flight: thousands in a prefill, where the
//! tensor cores set the pace, and 1 to 128 in a decode step, where every weight is read for a
//! handful of rows and memory sets it. This experiment runs a fixed suite of such shapes
//! ([`suite`]): DeepGEMM's dense benchmark set, the linear layers of Llama-3 8B and 70B, and
//! the course's squares for reference. At each shape `auto` (or the variants given) runs
//! beside the yardstick of its type, on the same inputs: cuBLAS (`cublasGemmEx`, f32
//! accumulation) in bf16 and f16, cuBLAS with TF32 math beside `auto --math tf32`, cuBLASLt
//! with one scale per tensor in e4m3. The page gives per shape what `auto` chose, its TFLOP/s,
//! the yardstick's and their ratio, and for the decode shapes (M ≤ 128) the bytes they must
//! move per second as a share of the memory's bandwidth: the datasheet's, and what a
//! device-to-device copy reaches on the same GPU in the same process, which is the ceiling a
//! memory-bound GEMM can actually approach.
//!
//! The model's row-major `D = X·Wᵀ` is, in the column-major BLAS convention of this project,
//! `C = op(A)·op(B)` with `m = N`, `n = M`, `k = K`, op(A) = Aᵀ (A is W, stored k×m: each
//! weight row contiguous along k) and op(B) = B (B is X, stored k×n): the TN layout that
//! cuBLAS, cuBLASLt and DeepGEMM are measured in. `--layout nn` measures op(A) = A instead,
//! to compare with numbers taken before the kernels read a transposed A.
//!
//! A shape that a variant cannot run (no kernel of the course computes its layout, a
//! constraint of the shape) is an error cell that names the reason; the run goes on, and the
//! summary counts only the shapes that have both a checked time of ours and of the yardstick,
//! saying how many have not.
use super::chart::{BarChart, Chart};
use super::context::{all_passed, describe, error_cell, label, time_cell, valid_time};
use super::context::{Common, Context};
use super::page::{Page, Section};
use super::progress::Progress;
use super::table::{Cell, Table};
use anyhow::{bail, Result};
use gpu_gemm::problem::{Problem, Transpose, Transposes};
use gpu_gemm::registry::{self, CublasMath, Math, Variant};
use gpu_gemm::run::{Backend, Report, Timing};
use kernels_gpu::gemm::Dtype;

/// `--dtype`: the element type, and with it the arithmetic and the yardstick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ShapesDtype {
    /// bfloat16 A, B and C, f32 accumulation, beside cublasGemmEx
    #[default]
    Bf16,
    /// IEEE half A, B and C, f32 accumulation, beside cublasGemmEx
    F16,
    /// FP8 E4M3 A and B with one scale per tensor, bf16 C, beside cuBLASLt (TN only)
    E4m3,
    /// f32 data on the TF32 tensor cores: `auto --math tf32` beside cuBLAS with TF32 math
    Tf32,
}

impl ShapesDtype {
    /// The element type of the problem (TF32 is an arithmetic on f32 data).
    pub fn dtype(self) -> Dtype {
        match self {
            ShapesDtype::Bf16 => Dtype::Bf16,
            ShapesDtype::F16 => Dtype::F16,
            ShapesDtype::E4m3 => Dtype::E4m3,
            ShapesDtype::Tf32 => Dtype::F32,
        }
    }

    /// As `--dtype` spells it.
    pub fn name(self) -> &'static str {
        match self {
            ShapesDtype::Bf16 => "bf16",
            ShapesDtype::F16 => "f16",
            ShapesDtype::E4m3 => "e4m3",
            ShapesDtype::Tf32 => "tf32",
        }
    }

    /// The results folder of `--random`: `results/random-bf16` by default.
    pub fn random_id(self) -> &'static str {
        match self {
            ShapesDtype::Bf16 => "random-bf16",
            ShapesDtype::F16 => "random-f16",
            ShapesDtype::E4m3 => "random-e4m3",
            ShapesDtype::Tf32 => "random-tf32",
        }
    }

    /// The results folder: `results/shapes-bf16` by default.
    pub fn id(self) -> &'static str {
        match self {
            ShapesDtype::Bf16 => "shapes-bf16",
            ShapesDtype::F16 => "shapes-f16",
            ShapesDtype::E4m3 => "shapes-e4m3",
            ShapesDtype::Tf32 => "shapes-tf32",
        }
    }

    /// `auto` under the contract of this type: TF32 must be asked for, the others are the
    /// type's own arithmetic.
    pub fn auto(self) -> Variant {
        match self {
            ShapesDtype::Tf32 => Variant::Auto(Math::Tf32),
            _ => Variant::Auto(Math::Strict),
        }
    }

    /// The yardstick run beside every shape. In e4m3 the FP8 pipeline runs `cublas` as
    /// cuBLASLt with per-tensor scales (what `--dtype e4m3 --transa t --compare cublas` runs).
    pub fn yardstick(self) -> Variant {
        match self {
            ShapesDtype::Tf32 => Variant::Cublas(CublasMath::Tf32),
            _ => Variant::Cublas(CublasMath::Default),
        }
    }

    /// The yardstick as the page names it.
    pub fn yardstick_name(self) -> &'static str {
        match self {
            ShapesDtype::Bf16 | ShapesDtype::F16 => "cuBLAS (cublasGemmEx, f32 accumulation)",
            ShapesDtype::E4m3 => "cuBLASLt FP8 (one scale per tensor, bf16 out)",
            ShapesDtype::Tf32 => "cuBLAS TF32 (CUBLAS_TF32_TENSOR_OP_MATH)",
        }
    }

    /// The yardstick in a chart's legend.
    pub fn yardstick_short(self) -> &'static str {
        match self {
            ShapesDtype::E4m3 => "cuBLASLt",
            ShapesDtype::Tf32 => "cuBLAS TF32",
            _ => "cuBLAS",
        }
    }
}

/// `--layout` of suites 1 and 2.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LayoutArg {
    /// op(A) = Aᵀ, op(B) = B: the weights stored as the model stores them (row-major N×K)
    #[default]
    Tn,
    /// op(A) = A, op(B) = B: the layout the course's kernels computed first
    Nn,
}

impl LayoutArg {
    fn transposes(self) -> Transposes {
        match self {
            LayoutArg::Tn => Transposes::new(Transpose::Yes, Transpose::No),
            LayoutArg::Nn => Transposes::NN,
        }
    }
}

#[derive(clap::Args, Debug, Clone, Default)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
    /// Element type: bf16, f16, e4m3 (per-tensor scales, beside cuBLASLt) or tf32 (f32 data,
    /// auto --math tf32 beside cuBLAS TF32)
    #[arg(long, value_enum, default_value_t = ShapesDtype::Bf16)]
    pub dtype: ShapesDtype,
    /// Which suites, separated by commas: 1 DeepGEMM's dense set, 2 Llama-3 8B and 70B,
    /// 3 the course's squares [default: 1,2,3]
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u8).range(1..=3))]
    pub suite: Vec<u8>,
    /// The layout of suites 1 and 2: tn, the model's (weights stored N×K, read along k), or nn
    /// (op(A) = A, to compare with older numbers); suite 3 is always nn, and e4m3 always tn
    #[arg(long, value_enum, default_value_t = LayoutArg::Tn)]
    pub layout: LayoutArg,
    /// Our variants, separated by commas, `NAME:TILE` for a tile; `auto` runs under the
    /// contract of --dtype (tf32: auto --math tf32) [default: auto]
    #[arg(long, value_delimiter = ',')]
    pub variant: Vec<String>,
    /// Skip the check against the f64 reference (times only)
    #[arg(long)]
    pub no_check: bool,
    /// Instead of the suites, N shapes drawn with --seed: m, n, k log-uniform in [256, 16384]
    /// (in [4, 256] on the emulator), the four layouts (e4m3: T,N), leading dimensions packed
    /// or padded by 1–8 elements
    #[arg(long, value_name = "N", value_parser = crate::args::positive_count,
          conflicts_with_all = ["suite", "layout", "variant"])]
    pub random: Option<usize>,
}

/// One shape of the suite, as its source writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SuiteShape {
    /// 1, 2 or 3.
    pub suite: u8,
    /// Where it comes from: `DeepGEMM`, `Llama-3 8B`, `Llama-3 70B`, `square`.
    pub source: &'static str,
    pub dims: Dims,
}

/// A shape's sizes, in its source's notation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dims {
    /// `D[M×N] = X[M×K]·W[N×K]ᵀ` with M tokens (suites 1 and 2).
    Model { tokens: u32, n: u32, k: u32 },
    /// m×n×k of `C = A·B` as the chapters measured it (suite 3).
    Blas { m: u32, n: u32, k: u32 },
}

/// Suite 1, DeepGEMM's dense set: every M with every (N, K) of the table "Normal GEMMs for
/// dense models" in the README of deepseek-ai/DeepGEMM (the DeepSeek-V3 projections).
pub const DEEPGEMM_TOKENS: [u32; 3] = [64, 128, 4096];
/// Suite 1's (N, K).
pub const DEEPGEMM_NK: [(u32, u32); 6] = [
    (2112, 7168),
    (24576, 1536),
    (32768, 512),
    (7168, 16384),
    (4096, 7168),
    (7168, 2048),
];

/// Suite 2's token counts: one sequence decoding, a batch of 16, 128, and two prefills.
pub const LLAMA_TOKENS: [u32; 5] = [1, 16, 128, 2000, 4096];
/// Llama-3 8B's linear layers as (N, K), from Meta's config.json (hidden 4096, 32 query and 8
/// key-value heads of 128, intermediate 14336, vocabulary 128256): fused QKV
/// (4096 + 2·1024), the attention output, fused gate and up (2·14336), down, the LM head.
pub const LLAMA3_8B_NK: [(u32, u32); 5] = [
    (6144, 4096),
    (4096, 4096),
    (28672, 4096),
    (4096, 14336),
    (128256, 4096),
];
/// Llama-3 70B's (hidden 8192, 64 query and 8 key-value heads of 128, intermediate 28672):
/// fused QKV (8192 + 2·1024), the attention output, fused gate and up (2·28672), down.
pub const LLAMA3_70B_NK: [(u32, u32); 4] =
    [(10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672)];

/// Suite 3, the shapes of the chapters' tables (`auto`'s table): the squares, a short k, a
/// long k, and a narrow n.
pub const SQUARES: [(u32, u32, u32); 7] = super::auto::GPU_SHAPES;

/// The suite in page order: DeepGEMM's set by M (as its README lists it), Llama-3 by model,
/// then M, then layer, then the squares.
pub fn suite() -> Vec<SuiteShape> {
    let model = |suite, source, tokens, (n, k)| SuiteShape {
        suite,
        source,
        dims: Dims::Model { tokens, n, k },
    };
    let mut out = Vec::new();
    for tokens in DEEPGEMM_TOKENS {
        out.extend(DEEPGEMM_NK.map(|nk| model(1, "DeepGEMM", tokens, nk)));
    }
    for (source, layers) in [
        ("Llama-3 8B", &LLAMA3_8B_NK[..]),
        ("Llama-3 70B", &LLAMA3_70B_NK[..]),
    ] {
        for tokens in LLAMA_TOKENS {
            out.extend(layers.iter().map(|&nk| model(2, source, tokens, nk)));
        }
    }
    out.extend(SQUARES.map(|(m, n, k)| SuiteShape {
        suite: 3,
        source: "square",
        dims: Dims::Blas { m, n, k },
    }));
    out
}

/// Token counts up to this one are kept on the emulator: a decode shape stays one.
pub const EMULATOR_KEEPS_TOKENS: u32 = 16;
/// On the emulator every other dimension is divided by this…
pub const EMULATOR_DIVISOR: u32 = 64;
/// …and rounded up to a multiple of this: FP8's k and the TMA's 16-byte rows stay legal.
pub const EMULATOR_QUANTUM: u32 = 16;

fn shrink(d: u32) -> u32 {
    (d / EMULATOR_DIVISOR)
        .next_multiple_of(EMULATOR_QUANTUM)
        .max(EMULATOR_QUANTUM)
}

impl SuiteShape {
    /// m, n, k of `C = op(A)·op(B)`: the model's M×N×K is m = N, n = M, k = K.
    pub fn blas(&self) -> (u32, u32, u32) {
        match self.dims {
            Dims::Model { tokens, n, k } => (n, tokens, k),
            Dims::Blas { m, n, k } => (m, n, k),
        }
    }

    /// Its layout: suite 3 as the chapters measured it (N,N), the models' in `layout`; e4m3
    /// has one layout, T,N.
    pub fn transposes(&self, layout: LayoutArg, dtype: ShapesDtype) -> Transposes {
        match (dtype, self.dims) {
            (ShapesDtype::E4m3, _) => LayoutArg::Tn.transposes(),
            (_, Dims::Model { .. }) => layout.transposes(),
            (_, Dims::Blas { .. }) => Transposes::NN,
        }
    }

    /// A decode-sized shape (tokens M ≤ 128), which memory bounds: its bandwidth is reported.
    pub fn is_decode(&self) -> bool {
        matches!(self.dims, Dims::Model { tokens, .. } if tokens <= 128)
    }

    /// The emulator's version: every dimension divided by [`EMULATOR_DIVISOR`] and rounded up
    /// to a multiple of [`EMULATOR_QUANTUM`], except a token count up to
    /// [`EMULATOR_KEEPS_TOKENS`], which is kept.
    pub fn for_emulator(&self) -> SuiteShape {
        let dims = match self.dims {
            Dims::Model { tokens, n, k } => Dims::Model {
                tokens: if tokens <= EMULATOR_KEEPS_TOKENS {
                    tokens
                } else {
                    shrink(tokens)
                },
                n: shrink(n),
                k: shrink(k),
            },
            Dims::Blas { m, n, k } => Dims::Blas {
                m: shrink(m),
                n: shrink(n),
                k: shrink(k),
            },
        };
        SuiteShape { dims, ..*self }
    }

    /// `M×N×K` in the model's notation; `-` for suite 3.
    fn model_label(&self) -> String {
        match self.dims {
            Dims::Model { tokens, n, k } => format!("{tokens}×{n}×{k}"),
            Dims::Blas { .. } => "-".into(),
        }
    }

    /// A chart's row: `1 · 64×2112×7168` (M×N×K), `3 · 4096³` (m×n×k).
    fn chart_label(&self) -> String {
        match self.dims {
            Dims::Model { .. } => format!("{} · {}", self.suite, self.model_label()),
            Dims::Blas { m, n, k } if m == n && n == k => format!("3 · {m}³"),
            Dims::Blas { m, n, k } => format!("3 · {m}×{n}×{k}"),
        }
    }

    /// Where a summary names it: `Llama-3 8B M=1 N=128256 K=4096`, `square 1024×1024×8192`.
    fn named(&self) -> String {
        match self.dims {
            Dims::Model { tokens, n, k } => format!("{} M={tokens} N={n} K={k}", self.source),
            Dims::Blas { m, n, k } => format!("{} {m}×{n}×{k}", self.source),
        }
    }
}

/// The problem a shape runs: α = 1, β = 0 (C written, never read), A and B packed as stored.
fn problem(ctx: &Context, shape: &SuiteShape, transposes: Transposes, dtype: Dtype) -> Problem {
    let mut p = ctx.problem(dtype, shape.blas());
    p.transposes = transposes;
    p.shape.lda = p.stored_a().0;
    p.shape.ldb = p.stored_b().0;
    p
}

/// Bytes a GEMM must move at the least: A and B read once, C written once (β = 0, so C is not
/// read), in the sizes of `dtype` (e4m3: 1-byte A and B, a bf16 C; its two 4-byte scales are
/// not counted).
pub fn bytes_moved(m: u32, n: u32, k: u32, dtype: Dtype) -> f64 {
    let (m, n, k) = (m as f64, n as f64, k as f64);
    let (input, output) = (dtype.bytes() as f64, dtype.output().bytes() as f64);
    (m * k + k * n) * input + m * n * output
}

/// The HBM bandwidth of the device's datasheet, in bytes/s, and how the page names it: found
/// by the name the driver gives; the H100 SXM's 3.35 TB/s for any other.
pub fn datasheet_bandwidth(device: &str) -> (f64, String) {
    const KNOWN: [(&str, f64, &str); 3] = [
        ("H200", 4.8e12, "H200 SXM"),
        ("H100 NVL", 3.9e12, "H100 NVL"),
        ("H100 PCIe", 2.0e12, "H100 PCIe"),
    ];
    match KNOWN.iter().find(|(name, _, _)| device.contains(name)) {
        Some(&(_, bandwidth, name)) => (
            bandwidth,
            format!("{name} datasheet, {} TB/s", bandwidth / 1e12),
        ),
        None if device.contains("H100") => (3.35e12, "H100 SXM datasheet, 3.35 TB/s".into()),
        None => (
            3.35e12,
            "H100 SXM datasheet, 3.35 TB/s (this device's is not in the experiment's list)".into(),
        ),
    }
}

/// The copy that measures the bandwidth memory sustains: 1 GiB, far past the 50 MB L2.
pub const COPY_BYTES: usize = 1 << 30;

/// A geometric mean; None for none.
pub fn geomean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (sum, count) = values
        .into_iter()
        .fold((0.0, 0usize), |(s, c), v| (s + v.ln(), c + 1));
    (count > 0).then(|| (sum / count as f64).exp())
}

/// What the summary says of a set of ratios (None: a shape without both numbers).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub geomean: Option<f64>,
    /// The smallest and the index of its shape.
    pub min: Option<(f64, usize)>,
    /// Shapes with a value.
    pub counted: usize,
    /// Shapes without.
    pub missing: usize,
}

/// The [`Spread`] of `values`.
pub fn spread(values: &[Option<f64>]) -> Spread {
    let present = || {
        values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (i, v)))
    };
    Spread {
        geomean: geomean(present().map(|(_, v)| v)),
        min: present().fold(None, |low: Option<(f64, usize)>, (i, v)| match low {
            Some((l, _)) if l <= v => low,
            _ => Some((v, i)),
        }),
        counted: present().count(),
        missing: values.len() - present().count(),
    }
}

/// The ratio below which a shape counts as behind the yardstick.
pub const BEHIND: f64 = 0.90;

/// The runs of one shape.
struct Measured {
    /// As the suite has it: on the emulator, the shape the shrunk run stands for.
    shape: SuiteShape,
    /// As run: shrunk on the emulator.
    problem: Problem,
    /// One per variant.
    ours: Vec<Result<Report>>,
    /// `None` on the emulator, which has no cuBLAS.
    yardstick: Option<Result<Report>>,
}

impl Measured {
    fn ratio(&self, variant: usize) -> Option<f64> {
        let yardstick = valid_time(self.yardstick.as_ref()?)?;
        Some(yardstick / valid_time(&self.ours[variant])?)
    }

    /// Bytes moved per second by a checked run, as a share of `bandwidth` (decode shapes only).
    fn share(&self, report: Option<&Result<Report>>, bandwidth: Option<f64>) -> Option<f64> {
        if !self.shape.is_decode() {
            return None;
        }
        let s = self.problem.shape;
        let bytes = bytes_moved(s.m, s.n, s.k, self.problem.dtype);
        Some(bytes / (valid_time(report?)? * 1e-3) / bandwidth?)
    }
}

/// `auto`, `auto[tf32]`, `wgmma-tf32:4`: a variant as asked for.
fn variant_label(v: Variant, tile: Option<u32>) -> String {
    match v {
        Variant::Auto(Math::Strict) => "auto".into(),
        Variant::Auto(m) => format!("auto[{}]", m.name()),
        v => label(v, tile),
    }
}

/// `--variant`'s list: `NAME` or `NAME:TILE`, `auto` under the contract of `dtype`.
fn variants(names: &[String], dtype: ShapesDtype) -> Result<Vec<(Variant, Option<u32>)>> {
    let names = if names.is_empty() {
        vec!["auto".to_string()]
    } else {
        names.to_vec()
    };
    names
        .iter()
        .map(|item| {
            let (name, tile) = match item.split_once(':') {
                Some((name, tile)) => match tile.parse() {
                    Ok(t) => (name, Some(t)),
                    Err(_) => bail!("`{item}`: the tile after `:` must be a number"),
                },
                None => (item.as_str(), None),
            };
            Ok(match registry::find(name.trim())? {
                Variant::Auto(_) => (dtype.auto(), tile),
                v => (v, tile),
            })
        })
        .collect()
}

pub fn run(ctx: &Context, args: &Args) -> Result<Page> {
    let dtype = args.dtype;
    if dtype == ShapesDtype::E4m3 && args.layout == LayoutArg::Nn {
        bail!("e4m3 is computed T,N only (FP8 wgmma reads both operands along k, as cuBLASLt does): drop --layout nn");
    }
    let variants = variants(&args.variant, dtype)?;
    let mut suites = if args.suite.is_empty() {
        vec![1, 2, 3]
    } else {
        args.suite.clone()
    };
    suites.sort_unstable();
    suites.dedup();
    let shapes: Vec<SuiteShape> = suite()
        .into_iter()
        .filter(|s| suites.contains(&s.suite))
        .collect();
    let timing = Timing {
        check: !args.no_check,
        ..ctx.timing()
    };
    let copy = match ctx.backend() {
        Backend::Gpu(gpu) => Some(
            gpu.time_device_copy(
                COPY_BYTES,
                Timing {
                    check: false,
                    ..timing
                },
            )
            .map(|times| 2.0 * COPY_BYTES as f64 / (gpu_gemm::run::median(&times) * 1e-3)),
        ),
        Backend::Emulator => None,
    };
    let progress = Progress::new(
        &format!("shapes {}", dtype.name()),
        shapes.len() * (variants.len() + usize::from(ctx.gpu)),
    );
    // One shape at a time: its inputs, reference and device buffers are freed before the
    // next one's are made (the largest, the 8B LM head at 4096 tokens in f32, needs 4.3 GB
    // on the device: A and C of 128256×4096 f32 each).
    let measured: Vec<Measured> = shapes
        .iter()
        .map(|suite_shape| {
            let shape = if ctx.gpu {
                *suite_shape
            } else {
                suite_shape.for_emulator()
            };
            let p = problem(
                ctx,
                &shape,
                shape.transposes(args.layout, dtype),
                dtype.dtype(),
            );
            let (reports, yardstick) =
                measure_beside_yardstick(ctx, &progress, &variants, &p, dtype, timing);
            Measured {
                shape: *suite_shape,
                problem: p,
                ours: reports,
                yardstick,
            }
        })
        .collect();
    progress.finish();
    Ok(page(ctx, timing, args, &variants, &measured, copy))
}

/// Runs `variants` on `p`, and on a GPU the yardstick of `dtype` after them on the same inputs
/// (the FP8 pipeline in e4m3): our reports, and the yardstick's (`None` on the emulator).
pub fn measure_beside_yardstick(
    ctx: &Context,
    progress: &Progress,
    variants: &[(Variant, Option<u32>)],
    p: &Problem,
    dtype: ShapesDtype,
    timing: Timing,
) -> (Vec<Result<Report>>, Option<Result<Report>>) {
    let mut runs = variants.to_vec();
    if ctx.gpu {
        runs.push((dtype.yardstick(), None));
    }
    let mut reports = if dtype == ShapesDtype::E4m3 {
        ctx.measure_fp8(progress, &runs, p, timing)
    } else {
        ctx.measure(progress, &runs, p, timing)
    };
    let yardstick = ctx
        .gpu
        .then(|| reports.pop().expect("the yardstick's report"));
    (reports, yardstick)
}

/// The cells of one of our runs: TFLOP/s, or why there is none.
fn speed_cell(ctx: &Context, report: Option<&Result<Report>>) -> Cell {
    match report {
        None => Cell::missing("n/a (emulator)"),
        Some(Err(_)) => Cell::missing("-"),
        Some(Ok(r)) if !r.passed() => Cell::missing("FAIL"),
        Some(Ok(_)) if !ctx.gpu => Cell::missing("n/a (emulator)"),
        Some(Ok(r)) if r.median_ms.is_finite() => Cell::fixed(r.tflops(), 1),
        Some(Ok(_)) => Cell::missing("no time"),
    }
}

/// The check column: pass or FAIL with the relative error, and whether C was sampled.
fn check_cell(report: &Result<Report>) -> Cell {
    match report {
        Ok(Report { check: Some(c), .. }) => Cell::text(format!(
            "{} ({:.1e}{})",
            if c.passed() { "pass" } else { "FAIL" },
            c.relative_frobenius,
            if c.coverage == "full" {
                ""
            } else {
                ", sampled"
            }
        )),
        Ok(_) => Cell::text("not checked"),
        Err(_) => Cell::missing("-"),
    }
}

/// Why a shape has no ratio.
fn no_ratio(ctx: &Context, m: &Measured, variant: usize) -> Cell {
    let failed = |r: &Result<Report>| r.as_ref().is_ok_and(|r| !r.passed());
    match (&m.ours[variant], &m.yardstick) {
        (Err(_), _) => Cell::missing("-"),
        (r, _) if failed(r) => Cell::missing("FAIL"),
        (_, None) if !ctx.gpu => Cell::missing("n/a (emulator)"),
        (_, Some(y)) if failed(y) => Cell::missing("yardstick FAIL"),
        (_, Some(Err(_))) => Cell::missing("yardstick error"),
        _ => Cell::missing("-"),
    }
}

fn percent(share: Option<f64>, why: &str) -> Cell {
    match share {
        Some(s) => Cell::fixed(100.0 * s, 1),
        None => Cell::missing(why),
    }
}

/// The main table's columns, in order.
fn columns(ctx: &Context) -> Vec<(&'static str, bool)> {
    vec![
        ("suite", false),
        ("source", false),
        ("M×N×K", false),
        ("m×n×k", false),
        ("layout", false),
        ("variant", false),
        ("choice", false),
        (ctx.time_column(), true),
        ("TFLOP/s", true),
        ("yardstick TFLOP/s", true),
        ("× yardstick", true),
        ("MB moved", true),
        ("% of HBM", true),
        ("% of copy", true),
        ("yardstick % of HBM", true),
        ("yardstick % of copy", true),
        ("check", false),
    ]
}

fn page(
    ctx: &Context,
    timing: Timing,
    args: &Args,
    variants: &[(Variant, Option<u32>)],
    measured: &[Measured],
    copy: Option<Result<f64>>,
) -> Page {
    let dtype = args.dtype;
    let passed = measured
        .iter()
        .all(|m| all_passed(m.ours.iter().chain(&m.yardstick)));
    let device = ctx.backend().describe();
    let (hbm, hbm_name) = datasheet_bandwidth(&device);
    let hbm = ctx.gpu.then_some(hbm);
    let copy_bandwidth = copy.as_ref().and_then(|c| c.as_ref().ok().copied());
    let yardstick = dtype.yardstick_name();
    let labels: Vec<String> = variants.iter().map(|&(v, t)| variant_label(v, t)).collect();

    let mut table = Table::new(
        dtype.id(),
        &if ctx.gpu {
            format!("{}: the models' shapes beside {yardstick}", dtype.name())
        } else {
            format!(
                "{}: the models' shapes, shrunk for the emulator (wall time, not GPU speed)",
                dtype.name()
            )
        },
    );
    for (name, numeric) in columns(ctx) {
        table = if numeric {
            table.number_column(name)
        } else {
            table.text_column(name)
        };
    }
    let not_decode = |m: &Measured| match m.shape.dims {
        Dims::Model { .. } => "M > 128",
        Dims::Blas { .. } => "-",
    };
    let no_bandwidth = |m: &Measured| {
        if !m.shape.is_decode() {
            not_decode(m)
        } else if !ctx.gpu {
            "n/a (emulator)"
        } else {
            "-"
        }
    };
    for m in measured {
        let s = m.problem.shape;
        for (i, report) in m.ours.iter().enumerate() {
            let choice = match report {
                Ok(r) => Cell::text(
                    r.variant
                        .split_once('→')
                        .map_or(r.variant.as_str(), |c| c.1),
                ),
                Err(_) => Cell::missing("-"),
            };
            let bytes = if m.shape.is_decode() {
                // The emulator's shrunk shapes move kilobytes: more digits there.
                let mb = bytes_moved(s.m, s.n, s.k, m.problem.dtype) / 1e6;
                Cell::fixed(mb, if mb < 10.0 { 3 } else { 1 })
            } else {
                Cell::missing(not_decode(m))
            };
            table.push(vec![
                Cell::text(m.shape.suite.to_string()),
                Cell::text(m.shape.source),
                Cell::text(m.shape.model_label()),
                Cell::text(describe(&m.problem)),
                Cell::text(m.problem.transposes.name()),
                Cell::text(&labels[i]),
                choice,
                time_cell(report),
                speed_cell(ctx, Some(report)),
                match &m.yardstick {
                    Some(Err(e)) => error_cell(e),
                    y => speed_cell(ctx, y.as_ref()),
                },
                match m.ratio(i) {
                    Some(r) => Cell::fixed(r, 3),
                    None => no_ratio(ctx, m, i),
                },
                bytes,
                percent(m.share(Some(report), hbm), no_bandwidth(m)),
                percent(m.share(Some(report), copy_bandwidth), no_bandwidth(m)),
                percent(m.share(m.yardstick.as_ref(), hbm), no_bandwidth(m)),
                percent(
                    m.share(m.yardstick.as_ref(), copy_bandwidth),
                    no_bandwidth(m),
                ),
                check_cell(report),
            ]);
        }
    }

    // The summary, per variant: the ratios over suites 1+2 and over everything, the shares at
    // M ≤ 128, and how many shapes are behind or have no ratio.
    let mut summary = Table::new(
        &format!("{}-summary", dtype.id()),
        &format!("Summary: {} against {yardstick}", dtype.name()),
    )
    .text_column("variant")
    .text_column("measure")
    .number_column("value")
    .text_column("over");
    let na = if ctx.gpu { "-" } else { "n/a (emulator)" };
    let value = |v: Option<f64>, digits| match v {
        Some(v) => Cell::fixed(v, digits),
        None => Cell::missing(na),
    };
    let models: Vec<usize> = (0..measured.len())
        .filter(|&i| measured[i].shape.suite <= 2)
        .collect();
    let decode: Vec<usize> = (0..measured.len())
        .filter(|&i| measured[i].shape.is_decode())
        .collect();
    let all: Vec<usize> = (0..measured.len()).collect();
    let mut headline_parts = Vec::new();
    for (v, name) in labels.iter().enumerate() {
        let ratios = |of: &[usize]| -> Vec<Option<f64>> {
            of.iter().map(|&i| measured[i].ratio(v)).collect()
        };
        let mut ratio_rows = |of: &[usize], what: &str| -> Spread {
            let s = spread(&ratios(of));
            let over = if of.is_empty() {
                format!("no shape of {what} in this run")
            } else {
                format!(
                    "{} of {} shapes ({} without both numbers)",
                    s.counted,
                    of.len(),
                    s.missing
                )
            };
            summary.push(vec![
                Cell::text(name),
                Cell::text(format!("geomean × yardstick, {what}")),
                value(s.geomean, 3),
                Cell::text(&over),
            ]);
            summary.push(vec![
                Cell::text(name),
                Cell::text(format!("min × yardstick, {what}")),
                value(s.min.map(|m| m.0), 3),
                Cell::text(match s.min {
                    Some((_, at)) => format!("at {}", measured[of[at]].shape.named()),
                    None => over,
                }),
            ]);
            s
        };
        let models_spread = ratio_rows(&models, "suites 1+2");
        let all_spread = ratio_rows(&all, "every shape");
        let all_ratios = ratios(&all);
        let behind = all_ratios.iter().flatten().filter(|&&r| r < BEHIND).count();
        summary.push(vec![
            Cell::text(name),
            Cell::text(format!("shapes below {BEHIND:.2}× yardstick")),
            if ctx.gpu {
                Cell::fixed(behind as f64, 0)
            } else {
                Cell::missing(na)
            },
            Cell::text(format!(
                "of {} shapes with both numbers",
                all_spread.counted
            )),
        ]);
        // Ours and the yardstick's shares over the same shapes, those with both numbers, so
        // that a shape only one of them ran does not tilt the comparison.
        let paired: Vec<usize> = decode
            .iter()
            .copied()
            .filter(|&i| measured[i].ratio(v).is_some())
            .collect();
        let over = if decode.is_empty() {
            "no decode shape in this run".to_string()
        } else {
            format!(
                "{} of {} decode shapes (those with both numbers)",
                paired.len(),
                decode.len()
            )
        };
        let mut shares = |who: &str, report: &dyn Fn(&Measured) -> Option<&Result<Report>>| {
            let geomean_of = |bandwidth| {
                let shares: Vec<Option<f64>> = paired
                    .iter()
                    .map(|&i| measured[i].share(report(&measured[i]), bandwidth))
                    .collect();
                spread(&shares).geomean
            };
            let (of_hbm, of_copy) = (geomean_of(hbm), geomean_of(copy_bandwidth));
            for (what, g) in [
                ("% of HBM datasheet", of_hbm),
                ("% of copy bandwidth", of_copy),
            ] {
                summary.push(vec![
                    Cell::text(who),
                    Cell::text(format!("geomean {what}, M ≤ 128")),
                    value(g.map(|g| 100.0 * g), 1),
                    Cell::text(&over),
                ]);
            }
            of_hbm
        };
        let our_hbm = shares(name, &|m| Some(&m.ours[v]));
        let their_hbm = shares(&format!("yardstick beside {name}"), &|m| {
            m.yardstick.as_ref()
        });
        if v == 0 {
            headline_parts.push(headline(
                name,
                dtype,
                measured,
                (&models, models_spread),
                all_spread,
                behind,
                (our_hbm, their_hbm, hbm),
            ));
        }
    }
    summary.push(vec![
        Cell::text("device"),
        Cell::text("copy bandwidth (cuMemcpyDtoD, 1 GiB, 2·bytes/time), TB/s"),
        match &copy {
            Some(Ok(b)) => Cell::fixed(b / 1e12, 3),
            Some(Err(e)) => error_cell(e),
            None => Cell::missing("n/a (emulator)"),
        },
        Cell::text(device.clone()),
    ]);

    let headline = if ctx.gpu {
        headline_parts.join(" ")
    } else {
        emulator_headline(measured)
    };

    let chart = if ctx.gpu {
        BarChart {
            title: format!(
                "{}: × {} per shape (suite 1 DeepGEMM, 2 Llama-3 M×N×K; 3 m×n×k)",
                dtype.name(),
                dtype.yardstick_short()
            ),
            value_label: format!("× {} (its time / ours)", dtype.yardstick_short()),
            categories: measured.iter().map(|m| m.shape.chart_label()).collect(),
            groups: labels
                .iter()
                .enumerate()
                .map(|(v, name)| (name.clone(), measured.iter().map(|m| m.ratio(v)).collect()))
                .collect(),
            reference: Some((1.0, dtype.yardstick_short().into())),
        }
    } else {
        BarChart {
            title: format!(
                "{}: emulator wall time per shape, shrunk (not GPU speed)",
                dtype.name()
            ),
            value_label: "emulator wall ms".into(),
            categories: measured.iter().map(|m| m.shape.chart_label()).collect(),
            groups: labels
                .iter()
                .enumerate()
                .map(|(v, name)| {
                    (
                        name.clone(),
                        measured.iter().map(|m| valid_time(&m.ours[v])).collect(),
                    )
                })
                .collect(),
            reference: None,
        }
    };
    let mut main = Section::new(table);
    main.chart = Some(Chart::Bars(chart));
    main.notes.push(
        "Suites 1 and 2 are written as the model writes them, D[M×N] = X[M×K]·W[N×K]ᵀ with M \
         tokens; the BLAS problem is m = N, n = M, k = K (m×n×k column), in the layout column: \
         TN is op(A) = Aᵀ, the weights stored as the model stores them. Suite 3 is m×n×k as \
         the chapters measured it."
            .into(),
    );
    main.notes.push(format!(
        "× yardstick is the median time of {yardstick} / ours, on the same inputs in the same \
         process: above 1 is faster. `error: …` is a run that could not be made, and says why; \
         FAIL a run whose check failed. Neither counts in the summary."
    ));
    main.notes.push(format!(
        "For M ≤ 128 (decode), MB moved is A and B read once and C written once (β = 0) in \
         {}'s sizes; % of HBM is those bytes per second against the {hbm_name}, % of copy \
         against a 1 GiB device-to-device copy on the same GPU in the same process (it reads \
         and writes each byte: 2·bytes/time), the bandwidth memory alone sustains.",
        dtype.name()
    ));
    if !ctx.gpu {
        main.notes.push(
            "On the emulator M×N×K (and the chart's rows) name the suite's shape, and m×n×k the \
             shrunk problem that ran in its place (see emulator sizes); MB moved is that \
             problem's."
                .into(),
        );
    }
    let mut last = Section::new(summary);
    last.notes.push(format!(
        "The geomeans and minima count only the shapes with a checked time of ours and of the \
         yardstick; below {BEHIND:.2}× counts those too."
    ));

    let mut own = vec![
        ("dtype", dtype_description(dtype)),
        ("yardstick", yardstick.to_string()),
        (
            "layout",
            if dtype == ShapesDtype::E4m3 {
                "TN everywhere (FP8 has no other layout)".to_string()
            } else {
                format!(
                    "suites 1 and 2 {}, suite 3 NN",
                    args.layout.transposes().name()
                )
            },
        ),
        ("suites", suites_description(measured)),
        ("variants", labels.join(", ")),
        (
            "HBM bandwidth",
            if ctx.gpu {
                hbm_name.clone()
            } else {
                "n/a (emulator)".into()
            },
        ),
        (
            "copy bandwidth",
            match &copy {
                Some(Ok(b)) => format!(
                    "{:.3} TB/s: cuMemcpyDtoDAsync of 1 GiB on the run's stream, median of up to {} \
                     after {} warm-up, 2·bytes/time",
                    b / 1e12,
                    timing.iters,
                    timing.warmup
                ),
                Some(Err(e)) => format!("not measured: {e:#}"),
                None => "n/a (emulator)".into(),
            },
        ),
        (
            "inputs",
            format!(
                "uniform in [-1, 1) rounded to the element type, seed {}; α = 1, β = 0; A and \
                 B packed as stored",
                ctx.seed
            ),
        ),
        (
            "check",
            if timing.check {
                "every run against the f64 reference: all of C up to m·n·k = 2^37, above that \
                 a seeded sample of 64 rows and 64 columns (`sampled` in the check column)"
                    .into()
            } else {
                "skipped (--no-check): times only".into()
            },
        ),
    ];
    if !ctx.gpu {
        own.push((
            "emulator sizes",
            format!(
                "every dimension divided by {EMULATOR_DIVISOR} and rounded up to a multiple of \
                 {EMULATOR_QUANTUM} (FP8's k and the TMA's 16-byte rows stay legal), except a \
                 token count M ≤ {EMULATOR_KEEPS_TOKENS}, kept so that decode shapes stay decode \
                 shapes; no yardstick (no cuBLAS on the emulator)"
            ),
        ));
    }
    Page {
        id: dtype.id(),
        title: format!(
            "shapes · the shapes real models run, {} beside {}",
            dtype.name(),
            dtype.yardstick_short()
        ),
        intro: "DeepGEMM's dense benchmark set and the linear layers of Llama-3 8B and 70B, at \
                prefill and decode token counts, with the course's squares for reference: \
                `auto` (or the variants given) at each shape beside the yardstick of its type \
                in the same process, what `auto` chose, and for the decode shapes how much of \
                the memory's bandwidth the bytes moved reach."
            .into(),
        headline,
        metadata: ctx.metadata(timing, own, passed),
        sections: vec![main, last],
        passed,
    }
}

fn dtype_description(dtype: ShapesDtype) -> String {
    match dtype {
        ShapesDtype::Bf16 => "bf16 A, B and C, f32 accumulation".into(),
        ShapesDtype::F16 => "f16 A, B and C, f32 accumulation".into(),
        ShapesDtype::E4m3 => {
            "e4m3 A and B with one f32 scale per tensor, bf16 C, f32 accumulation".into()
        }
        ShapesDtype::Tf32 => {
            "f32 A, B and C on the TF32 tensor cores (`auto` under --math tf32)".into()
        }
    }
}

fn suites_description(measured: &[Measured]) -> String {
    let mut present: Vec<u8> = measured.iter().map(|m| m.shape.suite).collect();
    present.dedup();
    present
        .iter()
        .map(|s| match s {
            1 => "1: DeepGEMM's dense set (deepseek-ai/DeepGEMM README, M ∈ {64, 128, 4096})",
            2 => "2: Llama-3 8B and 70B linear layers (Meta's config.json, M ∈ {1, 16, 128, 2000, 4096})",
            _ => "3: the chapters' squares and three more (N,N)",
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The GPU headline: the first variant's ratios, shares and what is missing.
fn headline(
    name: &str,
    dtype: ShapesDtype,
    measured: &[Measured],
    (models, models_spread): (&[usize], Spread),
    all: Spread,
    behind: usize,
    (ours_hbm, theirs_hbm, hbm): (Option<f64>, Option<f64>, Option<f64>),
) -> String {
    let yardstick = dtype.yardstick_short();
    let Some(geo) = all.geomean else {
        let first_error = measured.iter().find_map(|m| m.ours[0].as_ref().err());
        return format!(
            "No shape has a checked time of {name} and of {yardstick} ({} shapes){}.",
            measured.len(),
            first_error.map_or(String::new(), |e| format!(
                "; the first error: {}",
                error_cell(e).shown().trim_start_matches("error: ")
            ))
        );
    };
    let mut text = format!(
        "{name} in {} against {yardstick}: geomean {geo:.3}× over {} shapes",
        dtype.name(),
        all.counted
    );
    if let (Some(g), Some((low, at))) = (models_spread.geomean, models_spread.min) {
        text += &format!(
            " ({g:.3}× over the models' {}, lowest {low:.3}× at {})",
            models_spread.counted,
            measured[models[at]].shape.named()
        );
    } else if let Some((low, at)) = all.min {
        text += &format!(", lowest {low:.3}× at {}", measured[at].shape.named());
    }
    text += &format!("; {behind} below {BEHIND:.2}×.");
    if let (Some(ours), Some(hbm)) = (ours_hbm, hbm) {
        text += &format!(
            " At M ≤ 128 {name} moves its bytes at {:.0}% of the datasheet's {:.2} TB/s",
            100.0 * ours,
            hbm / 1e12
        );
        text += &match theirs_hbm {
            Some(t) => format!(" ({yardstick} {:.0}%).", 100.0 * t),
            None => ".".into(),
        };
    }
    if all.missing > 0 {
        text += &format!(
            " {} of {} shapes have no ratio (an error, a failed check or no yardstick: see the table).",
            all.missing,
            measured.len()
        );
    }
    text
}

/// The emulator's headline: what ran, what was refused; never a speed.
fn emulator_headline(measured: &[Measured]) -> String {
    let reports = || measured.iter().flat_map(|m| &m.ours);
    let ran = reports().filter(|r| r.is_ok()).count();
    let failed = reports()
        .filter(|r| r.as_ref().is_ok_and(|r| !r.passed()))
        .count();
    let refused = reports().filter(|r| r.is_err()).count();
    let first = reports()
        .find_map(|r| r.as_ref().err())
        .map_or(String::new(), |e| {
            format!(
                " (first: {})",
                error_cell(e).shown().trim_start_matches("error: ")
            )
        });
    format!(
        "On the emulator, at shapes shrunk about {EMULATOR_DIVISOR}-fold (see emulator sizes): \
         {ran} of {} runs ran \
         ({failed} failed the check), {refused} were refused{first}. The times are CPU wall \
         time, not GPU speed, and there is no yardstick.",
        reports().count()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::context::testing::{gpu_context, report};

    #[test]
    fn the_suite_has_18_deepgemm_45_llama_and_7_square_shapes() {
        let all = suite();
        let count = |s| all.iter().filter(|x| x.suite == s).count();
        assert_eq!((count(1), count(2), count(3)), (18, 45, 7));
        assert_eq!(all.len(), 70);
        assert_eq!(
            all.iter().filter(|s| s.is_decode()).count(),
            12 + 27,
            "M = 64, 128 of suite 1; M = 1, 16, 128 of suite 2"
        );
        // Every shape once.
        for (i, a) in all.iter().enumerate() {
            assert!(!all[i + 1..].contains(a), "{a:?} twice");
        }
        // FP8 needs k, lda and ldb (= k in TN) multiples of 16: every shape has them.
        assert!(all.iter().all(|s| s.blas().2 % 16 == 0));
    }

    #[test]
    fn the_models_m_n_k_is_blas_n_m_k_in_tn() {
        let ctx = gpu_context();
        let s = suite()[0];
        assert_eq!(
            s.dims,
            Dims::Model {
                tokens: 64,
                n: 2112,
                k: 7168
            }
        );
        assert_eq!(s.blas(), (2112, 64, 7168));
        let p = problem(
            &ctx,
            &s,
            s.transposes(LayoutArg::Tn, ShapesDtype::Bf16),
            Dtype::Bf16,
        );
        assert_eq!(p.transposes.name(), "TN");
        // A (the weights) stored k×m, B (the activations) k×n, C m×n.
        let sh = p.shape;
        assert_eq!(
            (sh.m, sh.n, sh.k, sh.lda, sh.ldb, sh.ldc),
            (2112, 64, 7168, 7168, 7168, 2112)
        );
        let nn = problem(
            &ctx,
            &s,
            s.transposes(LayoutArg::Nn, ShapesDtype::Bf16),
            Dtype::Bf16,
        );
        assert_eq!((nn.transposes, nn.shape.lda), (Transposes::NN, 2112));
        // The squares stay N,N in 16 bits; FP8 has T,N only.
        let square = *suite().last().unwrap();
        assert_eq!(square.blas(), (8192, 256, 8192));
        assert_eq!(
            square.transposes(LayoutArg::Tn, ShapesDtype::F16),
            Transposes::NN
        );
        assert_eq!(
            square.transposes(LayoutArg::Nn, ShapesDtype::E4m3).name(),
            "TN"
        );
        let lm_head = suite()
            .into_iter()
            .find(|s| {
                s.dims
                    == Dims::Model {
                        tokens: 1,
                        n: 128256,
                        k: 4096,
                    }
            })
            .unwrap();
        assert_eq!((lm_head.suite, lm_head.source), (2, "Llama-3 8B"));
        assert_eq!(lm_head.blas(), (128256, 1, 4096));
    }

    #[test]
    fn the_emulator_shrinks_every_dimension_but_small_token_counts() {
        let shrunk = |tokens, n, k| {
            SuiteShape {
                suite: 2,
                source: "x",
                dims: Dims::Model { tokens, n, k },
            }
            .for_emulator()
            .blas()
        };
        assert_eq!(shrunk(1, 128256, 4096), (2016, 1, 64));
        assert_eq!(shrunk(16, 2112, 512), (48, 16, 16));
        assert_eq!(shrunk(64, 7168, 1536), (112, 16, 32));
        assert_eq!(shrunk(4096, 32768, 16384), (512, 64, 256));
        for s in suite() {
            let (m, n, k) = s.for_emulator().blas();
            assert!(
                m % 16 == 0 && k % 16 == 0 && (n % 16 == 0 || n <= 16),
                "{s:?}"
            );
        }
    }

    #[test]
    fn bytes_moved_count_a_and_b_once_and_c_once() {
        // 2112×64×7168 in bf16: A 2112·7168, B 7168·64, C 2112·64 elements of 2 bytes.
        let bf16 = bytes_moved(2112, 64, 7168, Dtype::Bf16);
        assert_eq!(
            bf16,
            2.0 * (2112.0 * 7168.0 + 7168.0 * 64.0 + 2112.0 * 64.0)
        );
        // e4m3: 1-byte A and B, a bf16 C.
        let fp8 = bytes_moved(2112, 64, 7168, Dtype::E4m3);
        assert_eq!(fp8, 2112.0 * 7168.0 + 7168.0 * 64.0 + 2.0 * 2112.0 * 64.0);
        assert_eq!(bytes_moved(10, 1, 4, Dtype::F32), 4.0 * (40.0 + 4.0 + 10.0));
    }

    #[test]
    fn geomean_and_min_skip_missing_shapes() {
        let s = spread(&[Some(2.0), None, Some(0.5), Some(1.0)]);
        assert!((s.geomean.unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(s.min, Some((0.5, 2)));
        assert_eq!((s.counted, s.missing), (3, 1));
        let none = spread(&[None, None]);
        assert_eq!(
            (none.geomean, none.min, none.counted, none.missing),
            (None, None, 0, 2)
        );
        assert!((geomean([4.0, 9.0]).unwrap() - 6.0).abs() < 1e-12);
    }

    #[test]
    fn the_datasheet_follows_the_device_name() {
        assert_eq!(
            datasheet_bandwidth("NVIDIA H100 80GB HBM3 (sm_90, …)").0,
            3.35e12
        );
        assert_eq!(datasheet_bandwidth("NVIDIA H200 (sm_90)").0, 4.8e12);
        let (b, name) = datasheet_bandwidth("NVIDIA A100-SXM4-80GB");
        assert_eq!(b, 3.35e12);
        assert!(name.contains("not in the experiment's list"), "{name}");
    }

    #[test]
    fn variants_resolve_auto_under_the_dtype_contract() {
        let v = variants(&[], ShapesDtype::Tf32).unwrap();
        assert!(matches!(v[..], [(Variant::Auto(Math::Tf32), None)]));
        assert_eq!(variant_label(v[0].0, None), "auto[tf32]");
        let v = variants(&["auto".into(), "wgmma-16bit:1".into()], ShapesDtype::Bf16).unwrap();
        assert_eq!(variant_label(v[0].0, v[0].1), "auto");
        assert_eq!(variant_label(v[1].0, v[1].1), "wgmma-16bit:1");
        assert!(variants(&["nope".into()], ShapesDtype::Bf16).is_err());
        assert!(variants(&["auto:x".into()], ShapesDtype::Bf16).is_err());
    }

    /// A GPU-worded page from synthetic runs of the first four shapes of suite 1 and one
    /// square: a pass, a failed check, an error, and two passes.
    #[test]
    fn the_page_shows_ratios_failures_errors_and_the_summary_counts_only_both_numbers() {
        let ctx = gpu_context();
        let args = Args::default();
        let mut shapes: Vec<SuiteShape> = suite()[..4].to_vec();
        shapes.push(*suite().last().unwrap());
        let measured: Vec<Measured> = shapes
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let p = problem(&ctx, s, s.transposes(args.layout, args.dtype), Dtype::Bf16);
                let ours = match i {
                    0 => report("auto→wgmma-tma-store:5", &p, 2.0, true),
                    1 => report("auto→wgmma-tma-store:5", &p, 1.0, false),
                    2 => Err(anyhow::anyhow!(
                        "auto: no kernel of the course computes op(A)=Aᵀ, op(B)=B (T,N) in bf16"
                    )),
                    3 => report("auto→wgmma-pingpong:1", &p, 1.0, true),
                    _ => report("auto→wgmma-tma-store:3", &p, 1.0, true),
                };
                Measured {
                    shape: *s,
                    problem: p,
                    ours: vec![ours],
                    yardstick: Some(report("cublas", &p, 1.6, true)),
                }
            })
            .collect();
        let variants = vec![(Variant::Auto(Math::Strict), None)];
        let page = page(
            &ctx,
            ctx.timing(),
            &args,
            &variants,
            &measured,
            Some(Ok(3.0e12)),
        );
        assert!(!page.passed, "a failed check fails the page");
        let t = &page.sections[0].table;
        assert_eq!(t.rows.len(), 5);
        let col = |name: &str| -> Vec<String> {
            let c = t.column_index(name);
            t.rows.iter().map(|r| r[c].shown()).collect()
        };
        assert_eq!(col("× yardstick"), ["0.800", "FAIL", "-", "1.600", "1.600"]);
        assert_eq!(col("choice")[0], "wgmma-tma-store:5");
        assert_eq!(col("layout"), ["TN", "TN", "TN", "TN", "NN"]);
        assert_eq!(col("M×N×K")[0], "64×2112×7168");
        assert_eq!(col("m×n×k")[0], "2112×64×7168");
        assert!(
            col("median ms")[2].starts_with("error: auto: no kernel"),
            "{:?}",
            col("median ms")
        );
        assert!(col("check")[1].starts_with("FAIL"));
        // Decode shapes (M = 64) get their bandwidth: 2112×64×7168 in bf16 moves 31.5 MB, in
        // 2 ms 15.7 GB/s, 0.47% of 3.35 TB/s and 0.52% of the 3 TB/s copy.
        assert_eq!(col("MB moved")[0], "31.5");
        assert_eq!(col("% of HBM")[0], "0.5");
        assert_eq!(col("% of copy")[0], "0.5");
        assert_eq!(col("% of HBM")[4], "-", "suite 3 is not a decode shape");
        // The summary: the ratios of shapes 0, 3 and 4 only.
        let s = &page.sections[1].table;
        let row = |measure: &str| {
            s.rows
                .iter()
                .find(|r| r[1].shown() == measure)
                .unwrap_or_else(|| panic!("no summary row `{measure}`"))
                .clone()
        };
        let geo = row("geomean × yardstick, every shape");
        assert!((geo[2].value().unwrap() - (0.8f64 * 1.6 * 1.6).cbrt()).abs() < 1e-12);
        assert_eq!(geo[3].shown(), "3 of 5 shapes (2 without both numbers)");
        let models = row("geomean × yardstick, suites 1+2");
        assert!((models[2].value().unwrap() - (0.8f64 * 1.6).sqrt()).abs() < 1e-12);
        assert_eq!(row("min × yardstick, suites 1+2")[2].value(), Some(0.8));
        assert_eq!(
            row("min × yardstick, suites 1+2")[3].shown(),
            "at DeepGEMM M=64 N=2112 K=7168"
        );
        assert_eq!(row("shapes below 0.90× yardstick")[2].value(), Some(1.0));
        // The bandwidth shares of ours and of the yardstick over the same decode shapes, 0 and
        // 3: the shapes 1 and 2 have no time of ours that counts.
        let bandwidth = |who: &str| {
            s.rows
                .iter()
                .find(|r| r[0].shown() == who && r[1].shown().starts_with("geomean % of HBM"))
                .unwrap()
                .clone()
        };
        let share = |i: usize, ms: f64| {
            let p = measured[i].problem.shape;
            bytes_moved(p.m, p.n, p.k, Dtype::Bf16) / (ms * 1e-3) / 3.35e12
        };
        for (who, ms) in [("auto", [2.0, 1.0]), ("yardstick beside auto", [1.6, 1.6])] {
            let r = bandwidth(who);
            let expected = 100.0 * (share(0, ms[0]) * share(3, ms[1])).sqrt();
            assert!((r[2].value().unwrap() - expected).abs() < 1e-9, "{who}");
            assert_eq!(
                r[3].shown(),
                "2 of 4 decode shapes (those with both numbers)"
            );
        }
        let h = &page.headline;
        assert!(
            h.starts_with(&format!(
                "auto in bf16 against cuBLAS: geomean {:.3}× over 3 shapes ({:.3}× over the \
                 models' 2, lowest 0.800× at DeepGEMM M=64 N=2112 K=7168); 1 below 0.90×. At \
                 M ≤ 128 auto moves its bytes at ",
                (0.8f64 * 1.6 * 1.6).cbrt(),
                (0.8f64 * 1.6).sqrt()
            )),
            "{h}"
        );
        assert!(
            h.ends_with(
                "2 of 5 shapes have no ratio (an error, a failed check or no yardstick: see the \
                 table)."
            ),
            "{h}"
        );
    }
}
