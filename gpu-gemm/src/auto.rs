//! `--variant auto`: the fastest kernel for a shape and dtype that keeps a precision contract
//! ([`Math`]), from a table measured on a GPU.
//!
//! The rule, in full:
//! 1. The candidates are the kernels whose arithmetic the contract admits ([`Math::admits`]).
//!    `strict` (the default) admits the element type's own fused multiply-add only
//!    (`Arithmetic::Native`): in f32 the CUDA-core kernels; in f64 also the FP64 tensor cores,
//!    whose DMMA is IEEE FP64 fused multiply-add; in bf16 and f16 the 16-bit tensor-core
//!    kernels (exact products, f32 accumulation, C rounded once). `fp32-accurate` adds, in f32,
//!    3xTF32, whose measured error is below SGEMM's (experiment 002, the tensor-core chapters);
//!    `tf32` adds TF32. A contract never takes away: a strict kernel keeps every contract.
//! 2. [`TABLE`] holds, per dtype, contract and measured shape, the fastest candidate (median,
//!    checks passing). `host experiment auto` measures it; `gpu-gemm/src/auto-table.csv` is its
//!    output, copied here from the results folder (the README's "Regenerate `auto`'s table").
//! 3. In bf16 and f16 the shape decides first ([`shape_rule`], chapter 5): the tokens of a
//!    decode step (n ≤ 128) go to `wgmma-narrow` with a tile as narrow as n, unless m alone
//!    makes 0.7 of a wave of 256-row tiles (`wgmma-layouts:2`); wider problems that make at most
//!    a wave of 128 × 64 tiles go to `wgmma-narrow:64` ([`few_tiles`]; in N,T and T,T on B
//!    copied transposed); C whose rows or `ldc` the TMA store cannot write goes to
//!    `wgmma-narrow`; other wider problems, in any layout, to the wide kernel of least time in a
//!    model of its rounds of tiles, k-slices and L2 requests ([`wide_plan`], [`TileModel`]):
//!    256 × 128 tiles in clusters of two or of four, or 192 × 128 tiles, each operand whose
//!    columns start off a 128-byte line read as it lies or from a pitched copy, whichever the
//!    model finds faster. N,N on the line where the model takes clusters of two is left to the
//!    table, where chapter 3's kernels were measured. A or B whose row stride is not a multiple
//!    of 16 bytes (every 16-bit kernel is fed by the TMA engine) is copied first into an aligned
//!    workspace, and the choice is the aligned problem's ([`aligned_operands`]). Then, for a
//!    kernel outside the model, an A or B whose columns start off a 128-byte line is copied
//!    onto it where the GEMM repays the copy ([`line_copies`]); every copy's columns start 128
//!    bytes apart.
//!    In f32 under `tf32`, T,N (the models' layout) goes to the swapped tiles of
//!    `wgmma-tf32-swap` ([`tf32_rule`]), which read both operands as they lie.
//! 4. Otherwise a problem takes the choice of the table row of its dtype and contract whose
//!    shape is nearest in log₂ m + log₂ n + log₂ k distance (ties: the first row), provided the
//!    kernel supports the shape and runs on the device; otherwise, or with no row, the first of
//!    the contract's [`fallbacks`] that does: `best:1` in f32 and f64; `wgmma-layouts:1`, then
//!    `wgmma-narrow:128`, then `wgmma-16bit:1` in bf16 and f16 (on a GPU other than an
//!    H100/H200 the backend says that it needs sm_90a); for `fp32-accurate` and `tf32` in f32,
//!    Hopper's `wgmma` kernel, then Ampere's `mma.sync` one, then `best:1`. The table and the
//!    rule are measured on an H100: on another GPU their choices are the H100's (the report
//!    names them), not that GPU's fastest.
//! 5. The table is measured for op(A)·op(B) with op = N. For transposed operands every
//!    candidate must also compute the problem's combination ([`Variant::transposes`]: in 16 bits
//!    every layout has kernels, in f32 and f64 only N,N does); when neither the nearest row nor a
//!    fallback does, the first kernel of the course (in course order) that does and fits runs,
//!    and when none does, `auto` refuses: it runs the course's kernels only, never cuBLAS.
use crate::problem::{Problem, Transpose, Transposes};
pub use crate::registry::Math;
use crate::registry::{self, Variant};
use anyhow::{anyhow, bail, Context as _, Result};
use kernels_gpu::gemm::{Arithmetic, Dtype, GroupLayout};
use kernels_gpu::registry::{Shape, Target};

/// The measured table (see the module documentation).
pub const TABLE: &str = include_str!("auto-table.csv");

/// What `auto` runs when the table has nothing for a problem, in order of preference: the first
/// that supports the shape and runs on the device.
pub fn fallbacks(dtype: Dtype, math: Math) -> &'static [(&'static str, u32)] {
    match (dtype, math) {
        (Dtype::Bf16 | Dtype::F16, _) => &[
            ("wgmma-layouts", 1),
            ("wgmma-narrow", 128),
            ("wgmma-16bit", 1),
        ],
        (Dtype::F32, Math::Fp32Accurate) => &[("wgmma-3xtf32", 1), ("tc-3xtf32", 1), ("best", 1)],
        (Dtype::F32, Math::Tf32) => &[("wgmma-tf32", 1), ("tc-tf32", 1), ("best", 1)],
        _ => &[("best", 1)],
    }
}

/// One measured row: the shape and contract, and the fastest candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Element type the row was measured in.
    pub dtype: Dtype,
    /// The contract the candidates kept (relaxed rows exist in f32 only).
    pub math: Math,
    /// Rows of A and C of the measured problem.
    pub m: u32,
    /// Columns of B and C of the measured problem.
    pub n: u32,
    /// The inner dimension of the measured problem: the length of each dot product.
    pub k: u32,
    /// The fastest candidate, as `--variant` names it.
    pub variant: String,
    /// `--tile`, `-` in the CSV for a kernel without one.
    pub tile: Option<u32>,
}

/// The CSV header `host experiment auto` writes and [`parse`] reads.
pub const HEADER: &str = "dtype,math,m,n,k,variant,tile,median_ms,tflops,cublas_ratio,device";

/// Parses the table: [`HEADER`], then one row per line (`#` lines are comments).
pub fn parse(text: &str) -> Result<Vec<Row>> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    match lines.next() {
        Some((_, header)) if header.trim() == HEADER => {}
        other => bail!("auto table: expected the header `{HEADER}`, found {other:?}"),
    }
    lines
        .map(|(i, line)| {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            let row = (|| -> Result<Row> {
                if f.len() != HEADER.split(',').count() {
                    bail!("{} fields", f.len());
                }
                let dtype = match f[0] {
                    "f32" => Dtype::F32,
                    "f64" => Dtype::F64,
                    "bf16" => Dtype::Bf16,
                    "f16" => Dtype::F16,
                    d => bail!("unknown dtype `{d}`"),
                };
                let math =
                    Math::parse(f[1]).ok_or_else(|| anyhow!("unknown contract `{}`", f[1]))?;
                Ok(Row {
                    dtype,
                    math,
                    m: f[2].parse()?,
                    n: f[3].parse()?,
                    k: f[4].parse()?,
                    variant: f[5].to_string(),
                    tile: match f[6] {
                        "-" => None,
                        t => Some(t.parse()?),
                    },
                })
            })();
            row.with_context(|| format!("auto table, line {}: `{line}`", i + 1))
        })
        .collect()
}

/// Whether `auto` may choose a variant in `dtype` under `math`: a GPU kernel whose arithmetic
/// the contract admits.
pub fn is_candidate(v: &Variant, dtype: Dtype, math: Math) -> bool {
    matches!(v, Variant::Kernel(k) if math.admits(k.arithmetic, dtype)
        && (math != Math::Fp32Accurate || k.arithmetic != Arithmetic::Tf32x3 || keeps_f32_range(k)))
}

/// Whether a 3xTF32 kernel keeps FP32 accuracy over f32's whole normal range: it runs the ranges
/// pass ([`kernels_gpu::variants::ranges`]) and scales by it. Chapter 1's `tc-3xtf32` does not
/// (below about 2⁻¹¹⁵ its small parts vanish), so the FP32-accurate contract does not hand it
/// out: an Ampere-class GPU runs the strict kernels under it.
fn keeps_f32_range(k: &kernels_gpu::registry::Variant) -> bool {
    k.ranges_pass().is_some()
}

/// Whether a kernel runs on a device of compute capability `arch` (`sm_XY` as XY); `None` is
/// the emulator, which runs every build. The sm_90a build loads on 9.0 only, the portable one
/// from 8.0 (the oldest embedded module).
pub fn runs_on(v: &Variant, arch: Option<u32>) -> bool {
    match (v, arch) {
        (_, None) => true,
        (Variant::Kernel(k), Some(arch)) => match k.target {
            Target::Sm90a => arch == 90,
            Target::Portable => arch >= 80,
        },
        (_, Some(_)) => true,
    }
}

/// Whether `v` is a candidate for problem `p` under `math` on a device of compute capability
/// `arch` (`None`: the emulator): a GPU kernel whose arithmetic the contract admits
/// ([`is_candidate`]), with a version for the dtype, computing the problem's transposes,
/// supporting its shape (and a batch's strides) and running on the device. The one definition of "a candidate" that
/// `auto` (which picks one from a table) and the tuner (`crate::tuning`, which times them all)
/// share, so that `Algorithm::Tuned` never considers a kernel `Algorithm::Auto` would refuse.
pub fn fits(v: &Variant, p: &Problem, math: Math, arch: Option<u32>) -> bool {
    fits_at(v, None, p, math, arch)
}

/// [`fits`] at `tile` (`None`: the default tile for a batch, any tile for groups), where a
/// kernel's tiles differ in what they run: `wgmma-swap`'s grouped tiles walk members and groups,
/// its others one problem.
pub fn fits_at(v: &Variant, tile: Option<u32>, p: &Problem, math: Math, arch: Option<u32>) -> bool {
    match v {
        Variant::Kernel(k) => {
            (k.supports)(&p.shape, p.dtype).is_ok()
                && k.dtypes.contains(&p.dtype)
                && v.transposes().contains(&p.transposes)
                && is_candidate(v, p.dtype, math)
                && runs_on(v, arch)
                // A batch as `plan` checks it: a form of the kernel that walks members, strides
                // a TMA kernel can step by (whole 16 bytes, members apart).
                && registry::check_batch(*v, tile, p).is_ok()
                && (p.groups == GroupLayout::None || v.runs_grouped(p.dtype, p.transposes, tile))
        }
        _ => false,
    }
}

/// Every candidate for a problem ([`fits`]), in course order.
pub fn candidates(p: &Problem, math: Math, arch: Option<u32>) -> Vec<Variant> {
    registry::all()
        .into_iter()
        .filter(|v| fits(v, p, math, arch))
        .collect()
}

/// log₂ distance between two shapes.
fn distance(row: &Row, s: &Shape) -> f64 {
    let d = |a: u32, b: u32| ((a.max(1) as f64).log2() - (b.max(1) as f64).log2()).abs();
    d(row.m, s.m) + d(row.n, s.n) + d(row.k, s.k)
}

/// The row of `rows` that decides for (`shape`, `dtype`, `math`), if any. The contracts relax
/// f32 only, so the other types take strict's rows whatever the contract.
pub fn nearest<'a>(rows: &'a [Row], shape: &Shape, dtype: Dtype, math: Math) -> Option<&'a Row> {
    let math = if dtype == Dtype::F32 {
        math
    } else {
        Math::Strict
    };
    rows.iter()
        .filter(|r| r.dtype == dtype && r.math == math)
        .fold(None, |best: Option<&Row>, r| match best {
            Some(b) if distance(b, shape) <= distance(r, shape) => Some(b),
            _ => Some(r),
        })
}

/// Multiprocessors of the GPU the rule was measured on (an H100 SXM or an H200: 132).
pub(crate) const SMS: u32 = 132;

/// What the shapes rules read of a shape ([`shape_rule`], and e4m3's
/// `crate::fp8::run::auto_choice`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShapeFeatures {
    /// Whether the TMA store can write C: m and `ldc` multiples of 8 (16-byte pieces of 2-byte
    /// elements).
    pub tma_store: bool,
    /// Whether the 256 × 128 tiles make at least 0.7 of a wave on the multiprocessors.
    pub wide_waves: bool,
    /// The narrow kernels' tile for n ≤ 128: the `wgmma` N as narrow as n (8, 16, 32, 64 or 128).
    pub narrow_tile: u32,
}

/// The share of the slots of its waves that `tiles` fill, one tile per multiprocessor per wave.
pub(crate) fn wave_efficiency(tiles: u32) -> f64 {
    tiles as f64 / (tiles.div_ceil(SMS) * SMS) as f64
}

/// How many times faster L2 serves the swapped tiles' reads than HBM does on the H100: 10 TB/s
/// (12.6 GB of L2 reads in 1.26 ms, `wgmma-tf32-swap:132` at 128256 × 128 × 4096,
/// `docs/results/h100-2026-12-07-tf32-tn/`) against the 3.0 TB/s of a device-to-device copy.
const L2_OVER_HBM: f64 = 3.3;

/// `wgmma-swap`'s tile for a decode step of `s.n ≤ 128` tokens (T,N): of its configurations
/// (16 tokens a tile up to 16 tokens, `--tile 300 + W`; 64 from 17, `100 + W`; from 65 also
/// 128, `W`; W = 32 to 64 rows of weights), the one of the least time in a model of two
/// bandwidths: the weights come from HBM once, but every tile reads its W rows of weights and
/// its box of tokens through L2, `(W + tokens) / W` bytes per byte of weights, times the tile
/// columns that read each row of weights; the time is the larger of HBM's and L2's (L2
/// [`L2_OVER_HBM`] times faster), over the share of its waves' slots the tiles fill. Ties go to
/// the larger tile, then to one consumer warpgroup; 16 rows of weights are a candidate where
/// k ≤ 2048. Where no configuration fills 70% of its waves (m ≤ about 3000), the stream-k grid
/// (`248`, or `264` up to 16 tokens).
///
/// Measured cold on the H200 at Llama-3 8B's and DeepSeek-V3's decode shapes
/// (`docs/results/h200-2026-11-29-swap/`): thinner tiles than 32 rows re-read the tokens from
/// L2 more than they read weights (`:116`, 132 tiles at 2112 × 64 × 7168: 0.81× cuBLAS, the
/// stream-k grid 0.97×), and a 16-token tile's box reads none of the 48 tokens it does not
/// have (4096 × 16 × 4096: 0.92 → 1.00–1.03×). The L2 term is the H100's TF32 suite at 128
/// tokens: the fullest waves alone chose 32 rows by 64 tokens at 128256 × 128 × 4096 and
/// 10240 × 128 × 8192, which read six bytes through L2 per byte of weights and ran 0.60× and
/// 0.62× cuBLAS TF32 (bf16's 10240 × 128 × 8192 0.64×).
pub(crate) fn swap_tile(s: &Shape) -> u32 {
    swap_tile_among(s, &[])
}

/// [`swap_tile`] with `wider` configurations (tile, rows of weights, tokens) among those of
/// 128 tokens: TF32's prefill tiles ([`tf32_rule`]).
fn swap_tile_among(s: &Shape, wider_still: &[(u32, u32, u32)]) -> u32 {
    // (tile, rows of weights, tokens)
    let sixteen = [(332, 32, 16), (348, 48, 16), (356, 56, 16), (364, 64, 16)];
    let sixty_four = [(132, 32, 64), (148, 48, 64), (156, 56, 64), (164, 64, 64)];
    // 16 rows of weights re-read the tokens more the longer k: a wave of them (2112 rows) ran
    // 0.97× cuBLAS at k = 1024 against the stream-k grid's 0.77×, 0.81× against 0.96× at 7168.
    let thin = if s.k <= 2048 {
        &[(116, 16, 64)][..]
    } else {
        &[]
    };
    let one_twenty_eight = [(32, 32, 128), (48, 48, 128), (64, 64, 128)];
    let configurations = if s.n <= 16 { &sixteen } else { &sixty_four };
    let wider = if s.n > 64 { &one_twenty_eight[..] } else { &[] };
    let wider_still = if s.n > 64 { wider_still } else { &[] };
    let time = |rows: u32, tokens: u32| {
        let columns = s.n.div_ceil(tokens);
        let tiles = s.m.div_ceil(rows) * columns;
        let through_l2 = f64::from(rows + tokens) / f64::from(rows) * f64::from(columns);
        (through_l2 / L2_OVER_HBM).max(1.0) / wave_efficiency(tiles)
    };
    // In thousandths, so that configurations within rounding of each other tie.
    let best = configurations
        .iter()
        .chain(if s.n > 16 { thin } else { &[] })
        .chain(wider)
        .chain(wider_still)
        .map(|&(tile, rows, tokens)| {
            let cost = (1000.0 * time(rows, tokens)).round() as u32;
            (
                std::cmp::Reverse(cost),
                rows * tokens,
                u32::from(tokens <= 64),
                tile,
                rows,
                tokens,
            )
        })
        .max()
        .expect("configurations");
    let (_, _, _, tile, rows, tokens) = best;
    let fill = wave_efficiency(s.m.div_ceil(rows) * s.n.div_ceil(tokens));
    match (fill >= 0.7, s.n <= 16) {
        (true, _) => tile,
        (false, true) => 264,
        (false, false) => 248,
    }
}

/// The 256 × 128 tiles of `s`: the wide kernels' count, against which waves are judged.
pub(crate) fn wide_tiles(s: &Shape) -> u32 {
    s.m.div_ceil(256) * s.n.div_ceil(128)
}

/// A wide 16-bit kernel as [`TileModel`] weighs it: its tiles' rows (each tile 128 columns
/// wide), and the blocks of its clusters along n, which share A: each loads `rows / cluster` of
/// A's rows per k-slice and multicasts them to the others.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WideKernel {
    /// The registry's name.
    pub name: &'static str,
    /// Its `--tile`.
    pub tile: u32,
    /// Rows of m per tile.
    pub rows: u32,
    /// Blocks per cluster, along n.
    pub cluster: u32,
    /// Why `auto` takes it, for its report.
    pub why: &'static str,
}

/// The kernels the model chooses among for n > 128 (every layout): in clusters of two, in
/// clusters of four, and the 192-row tiles without clusters.
pub const WIDE_KERNELS: [WideKernel; 3] = [
    WideKernel {
        name: "wgmma-layouts",
        tile: 1,
        rows: 256,
        cluster: 2,
        why: "n > 128: 256 × 128 tiles in clusters of two sharing A, the least time in the tile model (waves, k-slices, L2 lines)",
    },
    WideKernel {
        name: "wgmma-layouts",
        tile: 4,
        rows: 256,
        cluster: 4,
        why: "n > 128: 256 × 128 tiles in clusters of four sharing A, the least time in the tile model (half the L2 requests of clusters of two: operands off the 128-byte line, or equal waves)",
    },
    WideKernel {
        name: "wgmma-waves",
        tile: 1,
        rows: 192,
        cluster: 1,
        why: "n > 128: 192 × 128 tiles, the least time in the tile model (a last wave of 256 × 128 tiles mostly empty)",
    },
];

/// What a wide kernel's time is made of, on the H100 (bf16,
/// `docs/results/h100-2026-12-08-cluster4/`):
///
/// - **Rounds**: a persistent grid runs the tiles a round of one per multiprocessor at a time;
///   a cluster's tiles are its blocks' side by side along n (n's tiles rounded up to whole
///   clusters), and clusters of four fit on fewer multiprocessors than 132 (a cluster's blocks
///   share a GPC, and not every GPC's count is a multiple of four): 4096³ took 5 rounds, not 4,
///   8192³ about 16.5, not 15.5.
/// - **A k-slice** of a round takes the longer of the tensor cores' time and the producer's:
///   each 128-byte row of a TMA box is an L2 request, and a row whose columns start off a
///   128-byte line costs as much as two and a little more. Without clusters, off the line,
///   5000 × 7000 × 3000 N,N ran 0.540 ms against 0.291 on padded operands (768 rows' requests
///   a slice); clusters of two, 0.366 (512); clusters of four, 0.331 (384, on padded operands
///   0.311: their rounds).
/// - **A fixed time**: the pipeline's fill and the last tile's epilogue.
///
/// Its error: on the 18 shapes it was fitted on, each kernel's time within 1.8% (median; 27%
/// at most, the 192 × 128 tiles off the line, 6000 × 3000 × 5000), and its choice the fastest of
/// the three at every one; on the 48 shapes `wgmma-waves` was first
/// measured on (2026-12-07: m 1536–6144, n 2000–7168, k = 4096, padded, N,N and T,N), between
/// clusters of two and the 192 × 128 tiles, the faster at all 48, times within 3.1% (median;
/// 12.6% at most).
#[derive(Clone, Copy, Debug)]
pub struct TileModel {
    /// A k-slice (64 deep) of a 256 × 128 tile on the tensor cores, seconds (8192³: 1.355 ms
    /// over 16 rounds of 128 slices).
    pub slice_seconds: f64,
    /// A 192 × 128 tile's slice over a 256 × 128 one's: three quarters of the work, 1.03 times
    /// the time per element (`wgmma-waves:1` over the wave counts' ratio, 2026-12-07).
    pub narrow_slice: f64,
    /// One 128-byte row of a box through the TMA engine and L2, seconds: at most what the
    /// 192 × 128 tiles' 320 rows a slice allow on aligned operands (6000 × 3000 × 5000: 0.496
    /// µs a slice).
    pub row_seconds: f64,
    /// What a row whose columns start off a 128-byte line costs, in aligned rows: its two lines
    /// and a little more (no cluster, off the line, 5000 × 7000 × 3000: 1.28 µs for 384 rows).
    pub off_line_row: f64,
    /// The tensor cores' slice where an operand lies off the line, over its time on aligned
    /// operands, where the requests keep up: 1.064 (clusters of four, both operands off,
    /// 5000 × 7000 × 3000) and 1.083 (clusters of two, B off, 5120 × 7168 × 3000).
    pub off_line_tensor: f64,
    /// Multiprocessors that clusters of four hold at once.
    pub cluster4_multiprocessors: u32,
    /// A slice of clusters of four over the tensor cores' time above: on aligned operands
    /// their rounds ran 0.93–0.97 of it where clusters of two and no cluster ran 0.96–1.00
    /// (5000 × 7000 × 3000, 6000 × 3000 × 5000, 3000³, 11008 × 2000 × 4096, padded): each
    /// slice of A crosses L2 once for four blocks.
    pub cluster4_slice: f64,
    /// The fill and the last epilogue, seconds.
    pub fixed_seconds: f64,
}

/// The H100's figures (see [`TileModel`]).
pub const H100_TILES: TileModel = TileModel {
    slice_seconds: 0.662e-6,
    narrow_slice: 0.75 * 1.03,
    row_seconds: 1.55e-9,
    off_line_row: 2.15,
    off_line_tensor: 1.07,
    cluster4_multiprocessors: 124,
    cluster4_slice: 0.96,
    fixed_seconds: 10e-6,
};

impl TileModel {
    /// Kernel `k`'s time on `s` with A and B on 128-byte lines or not (`on_line`).
    pub fn seconds(&self, k: &WideKernel, s: &Shape, on_line: (bool, bool)) -> f64 {
        let multiprocessors = if k.cluster > 2 {
            self.cluster4_multiprocessors
        } else {
            SMS
        };
        let tiles = s.m.div_ceil(k.rows) * s.n.div_ceil(128).next_multiple_of(k.cluster);
        let rounds = f64::from(tiles.div_ceil(multiprocessors));
        let slices = f64::from(s.k.div_ceil(64));
        let requests = self.requests(k, on_line);
        let tensor = match (k.rows, k.cluster) {
            (256, 4) => self.slice_seconds * self.cluster4_slice,
            (256, _) => self.slice_seconds,
            _ => self.slice_seconds * self.narrow_slice,
        };
        // An operand off the line costs a few percent even where its requests keep up.
        let off_line = if on_line == (true, true) {
            1.0
        } else {
            self.off_line_tensor
        };
        let slice = (tensor * off_line).max(requests * self.row_seconds);
        rounds * slices * slice + self.fixed_seconds
    }

    /// L2 requests per k-slice of one block, in aligned rows: A's rows it loads and B's, each
    /// weighing [`TileModel::off_line_row`] off the line.
    pub fn requests(&self, k: &WideKernel, (a_on_line, b_on_line): (bool, bool)) -> f64 {
        let lines = |on: bool| if on { 1.0 } else { self.off_line_row };
        f64::from(k.rows / k.cluster) * lines(a_on_line) + 128.0 * lines(b_on_line)
    }
}

/// A wide kernel, and which operands it reads from pitched copies on 128-byte lines.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WidePlan {
    /// The kernel.
    pub kernel: WideKernel,
    /// Whether it reads A from a pitched copy.
    pub copy_a: bool,
    /// Whether it reads B from a pitched copy.
    pub copy_b: bool,
    /// The model's time, the copies' included.
    pub seconds: f64,
}

/// The wide kernel of least time for a 16-bit problem in [`H100_TILES`], each operand whose
/// columns start off a 128-byte line read as it lies or from a pitched copy
/// ([`H100_LINES`]' copy time); equal times go to the fewer L2 requests, then to the first of
/// [`WIDE_KERNELS`].
// ANCHOR: wave_tiles
pub fn wide_plan(p: &Problem) -> WidePlan {
    plan_among(p, &WIDE_KERNELS)
}

/// [`wide_plan`] among `kernels`.
fn plan_among(p: &Problem, kernels: &[WideKernel]) -> WidePlan {
    let (s, bytes) = (&p.shape, p.dtype.bytes());
    let (a_on_line, b_on_line) = line_offsets(p);
    let copy_a = H100_LINES.copy_seconds(p.stored_a(), bytes);
    let copy_b = H100_LINES.copy_seconds(p.stored_b(), bytes);
    let mut best: Option<(WidePlan, f64)> = None;
    for &kernel in kernels {
        for (ca, cb) in [(false, false), (true, false), (false, true), (true, true)] {
            if (ca && a_on_line) || (cb && b_on_line) {
                continue;
            }
            let lines = (a_on_line || ca, b_on_line || cb);
            let seconds = H100_TILES.seconds(&kernel, s, lines)
                + if ca { copy_a } else { 0.0 }
                + if cb { copy_b } else { 0.0 };
            let requests = H100_TILES.requests(&kernel, lines);
            let plan = WidePlan {
                kernel,
                copy_a: ca,
                copy_b: cb,
                seconds,
            };
            let better = match best {
                None => true,
                Some((b, r)) => {
                    seconds < b.seconds * (1.0 - 1e-9)
                        || (seconds <= b.seconds * (1.0 + 1e-9) && requests < r)
                }
            };
            if better {
                best = Some((plan, requests));
            }
        }
    }
    best.expect("a kernel to weigh").0
}

// ANCHOR_END: wave_tiles

/// The one of [`WIDE_KERNELS`] that `chosen` (a name and a tile) is, if any.
fn wide_kernel(chosen: (&str, Option<u32>)) -> Option<WideKernel> {
    WIDE_KERNELS
        .iter()
        .copied()
        .find(|k| (k.name, Some(k.tile)) == chosen)
}

/// Whether `p` is one 16-bit problem: what the lines' copies are weighed for (strided batches
/// and grouped GEMMs are left as they are: their members' copies would be a launch each).
fn one_16bit_problem(p: &Problem) -> bool {
    p.dtype.is_16bit() && !p.batch.is_batched() && p.groups == GroupLayout::None
}

/// The tile model's time for what `auto` chose, where that is one of [`WIDE_KERNELS`] for one
/// 16-bit problem: the kernel on the operands as it reads them, and the copies it makes first
/// (at the pitched copy's speed); `None` for any other choice. The random shapes' page sets it
/// beside the measured time: the model's error on shapes it was not fitted on.
pub fn modelled_seconds(p: &Problem, choice: &Choice) -> Option<f64> {
    let kernel = wide_kernel((choice.variant.name(), choice.tile))?;
    if !one_16bit_problem(p) {
        return None;
    }
    let read = choice.copies.map_or(*p, |c| c.problem_reading_them(p));
    let bytes = p.dtype.bytes();
    let copies = choice.copies.map_or(0.0, |c| {
        let a =
            c.a.map_or(0.0, |_| H100_LINES.copy_seconds(p.stored_a(), bytes));
        a + c
            .b
            .map_or(0.0, |_| H100_LINES.copy_seconds(p.stored_b(), bytes))
    });
    Some(H100_TILES.seconds(&kernel, &read.shape, line_offsets(&read)) + copies)
}

/// The copies a wide kernel `chosen` reads, beside those `given`: its [`plan_among`] on the
/// problem as it reads them; `None` where `chosen` is not one of [`WIDE_KERNELS`] (the lines'
/// older rule, [`line_copies`], decides for the others).
fn wide_copies(
    p: &Problem,
    chosen: (&str, Option<u32>),
    given: Option<crate::launch::Copies>,
) -> Option<Option<crate::launch::Copies>> {
    let kernel = wide_kernel(chosen)?;
    if !one_16bit_problem(p) {
        return Some(given);
    }
    let read = given.map_or(*p, |c| c.problem_reading_them(p));
    let plan = plan_among(&read, &[kernel]);
    Some(pitched_copies(p, given, (plan.copy_a, plan.copy_b)))
}

/// `given`, with a pitched copy (columns [`COPY_PITCH_BYTES`] apart) added for A and for B
/// where `add` says so and `given` copies neither already; `None` for no copy at all.
fn pitched_copies(
    p: &Problem,
    given: Option<crate::launch::Copies>,
    add: (bool, bool),
) -> Option<crate::launch::Copies> {
    use crate::launch::{Copies, Pitch};
    let bytes = p.dtype.bytes();
    let pitched = |copy: bool, (rows, cols): (u32, u32), ld: u32| {
        let to = crate::problem::pitched_ld(rows, bytes, COPY_PITCH_BYTES).ok()?;
        copy.then(|| Pitch::single(rows, cols, ld, to, false))
    };
    let given = given.unwrap_or(Copies { a: None, b: None });
    let added = Copies {
        a: given
            .a
            .or_else(|| pitched(add.0, p.stored_a(), p.shape.lda)),
        b: given
            .b
            .or_else(|| pitched(add.1, p.stored_b(), p.shape.ldb)),
    };
    (added.a.is_some() || added.b.is_some()).then_some(added)
}

/// Whether `s` is wider than a decode step (n > 128) but makes at most one wave of
/// `wgmma-narrow`'s 128 × 64 tiles: 256 × 128 tiles would leave most multiprocessors idle, and
/// the narrow kernel's stream-k grid gives each an equal share of the k-slices
/// ([`shape_rule`]).
pub fn few_tiles(s: &Shape) -> bool {
    s.n > 128 && s.m.div_ceil(128) * s.n.div_ceil(64) <= SMS
}

/// The features of `s`.
pub fn features(s: &Shape) -> ShapeFeatures {
    ShapeFeatures {
        tma_store: s.m.is_multiple_of(8) && s.ldc.is_multiple_of(8),
        wide_waves: 10 * wide_tiles(s) >= 7 * SMS,
        narrow_tile: match s.n {
            0..=8 => 8,
            9..=16 => 16,
            17..=32 => 32,
            33..=64 => 64,
            _ => 128,
        },
    }
}

/// The 16-bit shapes rule: for bf16 and f16, the kernel from the shape's features rather than
/// the nearest measured square (chapter 5, `docs/perf-notes.md`; measured on the model shapes
/// of `host experiment shapes`). `None` leaves the problem to the table (N,N beyond 128 columns,
/// where chapter 3's kernels were measured) and the fallbacks.
///
/// - **n ≤ 16 (a decode step's tokens), T,N**: `wgmma-swap` with 16 tokens a tile, whatever
///   m (`swap_tile`; at 28672 × 16 × 4096 1.00× cuBLAS cold, where the wide tiles ran 0.86×).
/// - **n ≤ 128 and at least 0.7 of a wave of 256-row tiles** (m ≥ about 24 000): the
///   256 × 128 tiles of `wgmma-layouts:2` (half of each wasted at n = 64) keep every
///   multiprocessor busy without stream-k's fixups, and read each row of B half as often.
/// - **n ≤ 128 and fewer 256-row tiles, T,N** (the model's layout): the problem is bound by
///   reading A; `wgmma-swap`, the tokens as the `wgmma`'s M and 32 to 64 rows of weights its
///   N (`swap_tile`).
/// - **n ≤ 128 otherwise** (N,N): `wgmma-narrow` with the tile as narrow as n (8, 16, 32, 64
///   or 128 columns) and a stream-k grid that gives every multiprocessor the same share of A.
/// - **n > 128 with at most a wave of 128 × 64 tiles** (m · n up to about 1024², N,N and T,N):
///   `wgmma-narrow:64` on its stream-k grid. H100, bf16, m = n from 512 to 1536, k from 1024
///   to 8192 (`fewtiles.log` in `docs/results/h100-2026-12-07-pitch/`): at 512² and 1024²
///   (32 and 128 such tiles) 1.00–1.45× cuBLAS where the wide tiles ran 0.29–1.06×; at 1536²
///   (288 tiles) the wide tiles win (0.75–1.17× against 0.53–0.75×).
/// - **n > 128 otherwise**, any layout: the wide kernel of least time in the tile model
///   ([`wide_plan`]: 256 × 128 tiles in clusters of two or four, 192 × 128 tiles), but N,N on
///   128-byte lines where the model takes clusters of two goes to the measured table.
/// - C's rows not a multiple of 8 or `ldc` not a multiple of 8 (the TMA store's constraint):
///   `wgmma-narrow` (C from the registers), 128 columns beyond n = 64.
// ANCHOR: shape_rule
pub fn shape_rule(p: &Problem) -> Option<(&'static str, u32, &'static str)> {
    if !p.dtype.is_16bit() {
        return None;
    }
    if p.groups != GroupLayout::None {
        return Some(group_rule(p));
    }
    if p.batch.is_batched() {
        return Some(batch_rule(p));
    }
    let s = &p.shape;
    let ShapeFeatures {
        tma_store,
        wide_waves,
        narrow_tile,
    } = features(s);
    // Beyond 64 columns, two tiles of 64 beat one of 128 up to k = 4096 (the H100's shapes run:
    // 0.97× against 0.87× cuBLAS at 6144 × 128 × 4096): the finisher of a split tile reads half
    // as much, which weighs more the fewer slices each block streams.
    let narrow = if narrow_tile == 128 && s.k <= 4096 {
        64
    } else {
        narrow_tile
    };
    let swappable = p.transposes == Transposes::ALL[1];
    let narrow_layout = p.transposes == Transposes::NN || swappable;
    if s.n <= 16 && swappable {
        return Some((
            "wgmma-swap",
            swap_tile(s),
            "n ≤ 16, T,N: the tokens as the wgmma's M, 16 a tile, a wave of tiles of weights",
        ));
    }
    if s.n <= 128 {
        if tma_store && wide_waves {
            return Some((
                "wgmma-layouts",
                2,
                "n ≤ 128 with at least 0.7 of a wave of 256 × 128 tiles: the wide tiles, no fixups",
            ));
        }
        if swappable {
            return Some((
                "wgmma-swap",
                swap_tile(s),
                "n ≤ 128, T,N: the tokens as the wgmma's M, a wave of tiles of 32 to 64 rows of weights",
            ));
        }
        return Some((
            "wgmma-narrow",
            narrow,
            "n ≤ 128: a tile as narrow as n, every multiprocessor streaming an equal share of A",
        ));
    }
    if few_tiles(s) && narrow_layout {
        return Some((
            "wgmma-narrow",
            64,
            "n > 128 but at most a wave of 128 × 64 tiles: those tiles on a stream-k grid, every multiprocessor an equal share of k",
        ));
    }
    if !tma_store {
        return Some((
            "wgmma-narrow",
            128,
            "m or ldc not a multiple of 8 (the TMA store's rows): C written from the registers",
        ));
    }
    let plan = wide_plan(p);
    let aligned = !(plan.copy_a || plan.copy_b) && line_offsets(p) == (true, true);
    if p.transposes == Transposes::NN && plan.kernel == WIDE_KERNELS[0] && aligned {
        return None;
    }
    Some((plan.kernel.name, plan.kernel.tile, plan.kernel.why))
}

/// Whether A's and B's columns start on 128-byte lines.
fn line_offsets(p: &Problem) -> (bool, bool) {
    let on_line = |ld: u32| (ld * p.dtype.bytes()).is_multiple_of(COPY_PITCH_BYTES);
    (on_line(p.shape.lda), on_line(p.shape.ldb))
}
// ANCHOR_END: shape_rule

/// The TF32 shapes rule: f32 under `--math tf32`, T,N (the models' layout, the only one whose
/// operands TF32's descriptors read as they lie: both K-major), one problem:
/// `wgmma-tf32-swap`, with the decode tiles bf16 takes for n ≤ 128 (`swap_tile`: the tiles
/// are counted in rows of weights and tokens, whatever the type, the prefill tiles among the
/// 128-token ones), and beyond, 256 rows of weights by 128 tokens (`:1256`, cuBLAS's TF32 tile
/// turned; `:1128` ran 0.74–0.80× cuBLAS TF32 at 4096³ and 8192³ T,N where `:1256` ran
/// 0.97–0.99×, so fuller waves alone do not earn it a prefill shape). Before it, TF32 T,N ran `wgmma-tf32` on A copied
/// transposed: 0.48× cuBLAS TF32 over the Llama-3 suite (H100), the copy of the weights
/// costing more than the GEMM at decode sizes.
pub fn tf32_rule(p: &Problem, math: Math) -> Option<(&'static str, u32, &'static str)> {
    let tn = p.transposes == Transposes::ALL[1];
    if p.dtype != Dtype::F32 || math != Math::Tf32 || !tn {
        return None;
    }
    if p.groups != GroupLayout::None || p.batch.is_batched() {
        return None;
    }
    let s = &p.shape;
    if s.n <= 128 {
        let prefill_tiles = [(1128, 128, 128), (1256, 256, 128)];
        return Some((
            "wgmma-tf32-swap",
            swap_tile_among(s, &prefill_tiles),
            "TF32, T,N, n ≤ 128: the tokens as the wgmma's M, a wave of tiles of weights",
        ));
    }
    Some((
        "wgmma-tf32-swap",
        1256,
        "TF32, T,N, n > 128: 256 rows of weights by 128 tokens, both operands read as they lie",
    ))
}

/// The shapes rule of a grouped GEMM (bf16, f16): `wgmma-layouts:2`, 256 × 128 tiles without
/// clusters, in every layout (the kernels with clusters share an operand between neighbouring
/// tiles, which may be of different groups); `wgmma-16bit` where the TMA store cannot write C
/// (N,N only). Measured on the H100 against `wgmma-layouts:3` (clusters along m sharing B, which
/// keep a cluster in one group): 0.2–6% faster on DeepGEMM's grouped sets.
///
/// In T,N where the TMA store cannot write C (m or ldc off the 8-element grid), the swapped
/// tiles of 64 tokens (`wgmma-swap:564`), which write C from the registers: any m, any
/// capacity (found by the randomized grouped conformance test, which `wgmma-layouts:2`
/// refused).
///
/// But a decode step's masked groups in T,N, a capacity of at most 64 tokens an expert: the
/// swapped tiles, 64 rows of weights by 16 tokens (`wgmma-swap:464`) or 64 (`:564`), their
/// tiles packed ahead of the empty experts'. H100, 8 to 233 experts of 1 to 8 tokens: `:464`
/// 1.29–1.44× cuBLAS's call per expert, `wgmma-layouts:2` 1.27–1.43×
/// (`docs/results/h100-2026-12-07-decode/run2`).
pub fn group_rule(p: &Problem) -> (&'static str, u32, &'static str) {
    let tma_store = features(&p.shape).tma_store;
    if p.transposes == Transposes::ALL[1] && (p.shape.n <= 64 || !tma_store) {
        return match p.shape.n {
            ..=16 => (
                "wgmma-swap",
                464,
                "groups of at most 16 tokens, T,N: the tokens as the wgmma's M, 16 a tile, 64 rows of weights",
            ),
            17..=64 => (
                "wgmma-swap",
                564,
                "groups of at most 64 tokens, T,N: the tokens as the wgmma's M, 64 a tile, 64 rows of weights",
            ),
            _ => (
                "wgmma-swap",
                564,
                "groups in T,N whose m or ldc is not a multiple of 8 (the TMA store's rows): the swapped tiles, C from the registers",
            ),
        };
    }
    if !tma_store && p.transposes == Transposes::NN {
        return (
            "wgmma-16bit",
            1,
            "groups whose m or ldc is not a multiple of 8 (the TMA store's rows): C from the registers",
        );
    }
    (
        "wgmma-layouts",
        2,
        "groups: 256 × 128 tiles without clusters (neighbouring tiles may be of different groups), each finding its group",
    )
}

/// The shapes rule of a strided batch (bf16, f16): the members' tiles fill the waves together
/// (a thousand members of 128 × 128 are 1 024 tiles), so the rule looks at one member's size
/// only to choose the tile's shape, never at how many tiles one member makes. Measured on the
/// H100 over every kernel that runs a batch, 1 024 members (`docs/perf-notes.md`):
///
/// - **n ≤ 128**: the 256 × 128 tiles of `wgmma-layouts:2`, also where m ≤ 128 and half of each
///   tile is empty (128 × 128 × 128: 0.90× cuBLAS, against 0.74× for `wgmma-narrow:128` and
///   0.88× for `:64`: the members are bound by memory, and the wide tile streams it best).
/// - **Otherwise**: `wgmma-layouts:1`, 256 × 128 tiles in clusters of two sharing A.
/// - **Either, with many tiles in all** ([`queue_pays`]): `wgmma-queue:3`,
///   the same 256 × 128 tiles handed out in order from a counter, so that the blocks working at
///   one moment share their members' operands in L2; without clusters, three stages and a whole
///   tile's staging per warpgroup. H200, 1 024 members, N,N / T,N: 0.96 / 0.97× cuBLAS at
///   2048 × 2048 × 128, 0.99 / 0.99× at 2048 × 128 × 2048, 1.05 / 1.05× at 512² × 64,
///   1.06 / 1.06× at 128³: 1.01 / 1.02× geomean. (`:2`, four stages and two staging buffers,
///   led for a while: the queue's publication then cost each unit a GPU-wide fence before its
///   loads, which three stages did not hide; `docs/perf-notes.md`, 2026-11-28.)
/// - C's rows or `ldc` not a multiple of 8 (the TMA store's constraint): `wgmma-16bit`, which
///   writes C from the registers.
pub fn batch_rule(p: &Problem) -> (&'static str, u32, &'static str) {
    let (name, tile, why) = static_batch_rule(p);
    if name == "wgmma-layouts" && queue_pays(p) {
        return (
            "wgmma-queue",
            3,
            "a batch of many tiles: 256 × 128 tiles handed out in order by a tile queue, a whole tile's staging",
        );
    }
    (name, tile, why)
}

/// Whether a batch has tiles enough for the tile queue to pay: at least 1 024 of
/// `wgmma-queue`'s 256 × 128 tiles, about eight per multiprocessor of an H100, so that the
/// static walk would be long enough to drift. Measured on the H100 (`docs/perf-notes.md`,
/// 2026-11-27), `:3` beat the static kernels at every attention shape of 1 024 members, from
/// 1 024 tiles (128³: 0.985–0.998× cuBLAS against 0.951–0.973× for `wgmma-layouts:2`, three
/// runs) to 131 072 (2048 × 2048 × 128: 0.81× against 0.67× for `wgmma-layouts:1`).
pub fn queue_pays(p: &Problem) -> bool {
    let s = &p.shape;
    let per_member = s.m.div_ceil(256) as u64 * s.n.div_ceil(128) as u64;
    per_member * p.batch.count as u64 >= 1024
}

/// [`batch_rule`] without the tile queue: the static walk's kernels.
fn static_batch_rule(p: &Problem) -> (&'static str, u32, &'static str) {
    let s = &p.shape;
    if !features(s).tma_store {
        return (
            "wgmma-16bit",
            1,
            "a batch whose m or ldc is not a multiple of 8 (the TMA store's rows): C from the registers",
        );
    }
    if s.n <= 128 {
        return (
            "wgmma-layouts",
            2,
            "a batch of members with n ≤ 128: 256 × 128 tiles, the members' filling the waves",
        );
    }
    (
        "wgmma-layouts",
        1,
        "a batch: 256 × 128 tiles in clusters of two sharing A, the members' filling the waves",
    )
}

/// The problem with A's and B's leading dimensions padded where a column does not start a
/// multiple of 16 bytes after the last (the TMA engine's rule), and the copies that make them
/// (their columns [`COPY_PITCH_BYTES`] apart); `None` when both are aligned already. In a
/// strided batch each member is copied, and so is an operand whose members overlap (a stride
/// of 0: one matrix for every member) or do not start 16 bytes apart, one copy per member: the
/// kernels read the members as the layers of a tensor map, and layers that overlap are not yet
/// checked on the GPU ([`registry::check_batch`]). C is left as it is: the kernels that cannot
/// store it (the TMA store's `ldc`) have others beside them that can.
pub fn aligned_operands(p: &Problem) -> Option<(Problem, crate::launch::Copies)> {
    use crate::launch::{Copies, Pitch};
    let bytes = p.dtype.bytes();
    let batch = p.batch;
    let pitch = |(rows, cols): (u32, u32), ld: u32, stride: u64| {
        let to = crate::problem::pitched_ld(rows, bytes, COPY_PITCH_BYTES).ok()?;
        let unaligned = !(ld * bytes).is_multiple_of(16);
        let members_apart = batch.is_batched()
            && p.groups == GroupLayout::None
            && (stride < ld as u64 * cols as u64 || !(stride * bytes as u64).is_multiple_of(16));
        (unaligned || members_apart).then(|| {
            Pitch::single(rows, cols, ld, to, false).for_members(batch.count, stride, false)
        })
    };
    let copies = Copies {
        a: pitch(p.stored_a(), p.shape.lda, batch.stride_a),
        b: pitch(p.stored_b(), p.shape.ldb, batch.stride_b),
    };
    if copies.a.is_none() && copies.b.is_none() {
        return None;
    }
    Some((copies.problem_reading_them(p), copies))
}

/// The problem with the operands stored transposed that `which` names (A, B) copied the
/// other way round (`op(X) = X`, the leading dimension padded to 16 bytes), and the copies that
/// make them; `None` when none of them is transposed. One pass over the operand at copy speed,
/// against the GEMM's k passes: for the types whose kernels read only N,N (f32, f64 and TF32)
/// both operands, for a 16-bit B whose layout's kernels cannot store C (see [`choose_from`]).
/// In a strided batch each member is copied; a matrix every member shares (stride 0) once
/// where the kernels read it shared (f32, f64), else once per member.
pub fn normal_operands(
    p: &Problem,
    which: (bool, bool),
) -> Option<(Problem, crate::launch::Copies)> {
    use crate::launch::Copies;
    let t = p.transposes;
    // The f32 and f64 kernels read a shared matrix shared; the 16-bit ones get one per member
    // (their tensor maps reach a member through its layer), but for the contiguous layout's
    // one B, which every group's tiles read as layer 0.
    let (count, shared_a, shared_b) = (
        p.batch.count,
        !p.dtype.is_16bit(),
        !p.dtype.is_16bit() || p.groups == GroupLayout::Contiguous,
    );
    let copy = |stored, ld, stride, stays_shared| {
        transposed_copy(stored, ld, p.dtype).map(|c| c.for_members(count, stride, stays_shared))
    };
    let copies = Copies {
        a: (which.0 && t.transa == Transpose::Yes)
            .then(|| copy(p.stored_a(), p.shape.lda, p.batch.stride_a, shared_a))
            .flatten(),
        b: (which.1 && t.transb == Transpose::Yes)
            .then(|| copy(p.stored_b(), p.shape.ldb, p.batch.stride_b, shared_b))
            .flatten(),
    };
    if copies.a.is_none() && copies.b.is_none() {
        return None;
    }
    Some((copies.problem_reading_them(p), copies))
}

/// The copies that turn a 16-bit B stored transposed the other way round (and A too where
/// `a_too`, if it is transposed), with A copied to aligned columns where it needs it; `None`
/// when B is not transposed.
fn b_turned(p: &Problem, a_too: bool) -> Option<crate::launch::Copies> {
    let (_, transposed) = normal_operands(p, (a_too, true))?;
    let aligned = aligned_operands(p).map(|(_, c)| c);
    Some(crate::launch::Copies {
        a: transposed.a.or(aligned.and_then(|c| c.a)),
        b: transposed.b.or(aligned.and_then(|c| c.b)),
    })
}

/// The copy of a matrix stored `rows × cols` (leading dimension `ld`) the other way round, its
/// columns starting [`COPY_PITCH_BYTES`] apart.
fn transposed_copy(
    (rows, cols): (u32, u32),
    ld: u32,
    dtype: Dtype,
) -> Option<crate::launch::Pitch> {
    let to = crate::problem::pitched_ld(cols, dtype.bytes(), COPY_PITCH_BYTES).ok()?;
    Some(crate::launch::Pitch::single(rows, cols, ld, to, true))
}

/// Bytes between the starts of the columns of an operand's copy: one 128-byte L2 line, a row
/// of a TMA box under the 128-byte swizzle, so that the kernel reads each box row from one
/// line ([`kernels_gpu::variants::pitched_copy`]).
pub const COPY_PITCH_BYTES: u32 = 128;

/// What the model of [`line_copies`] reads: how fast a 16-bit GEMM runs on aligned operands
/// (flops a second at full waves of 256 × 128 tiles), how fast the pitched copy moves bytes
/// (read plus written, a second) and what a launch of it costs, and the share of the GEMM's
/// time that an operand whose columns start off a 128-byte line adds to it: A read
/// MN-major (N,N, N,T: the boxes run down m), A read K-major, and B.
///
/// Measured on the H100 (bf16, `docs/results/h100-2026-12-07-pitch/`, `offgrid-pad.log`): with
/// the leading dimensions off the line against padded to 64 elements, 5000 × 7000 × 3000 N,N
/// 0.541 against 0.292 ms, 3000³ N,N 0.160 against 0.101, 6000 × 3000 × 5000 N,N 0.389 against
/// 0.265; in T,N (A K-major) 5000 × 7000 × 3000 0.372 against 0.290 and 6000 × 3000 × 5000
/// 0.339 against 0.264; B alone off the line (5120 × 7168 × 3000 N,N) 0.343 against 0.291.
#[derive(Clone, Copy, Debug)]
pub struct LineModel {
    /// The GEMM on aligned operands, flops a second at full waves.
    pub gemm_flops_per_second: f64,
    /// The pitched copy, bytes read plus written a second.
    pub copy_bytes_per_second: f64,
    /// A launch of the copy, beside its bytes.
    pub copy_launch_seconds: f64,
    /// The GEMM's time that an A read MN-major off the line adds, as a share of it.
    pub penalty_a_mn_major: f64,
    /// The same for an A read K-major.
    pub penalty_a_k_major: f64,
    /// The same for B, either way.
    pub penalty_b: f64,
}

/// The H100's figures (see [`LineModel`]).
pub const H100_LINES: LineModel = LineModel {
    gemm_flops_per_second: 700e12,
    copy_bytes_per_second: 2.6e12,
    copy_launch_seconds: 4e-6,
    penalty_a_mn_major: 0.55,
    penalty_b: 0.15,
    penalty_a_k_major: 0.12,
};

impl LineModel {
    /// The GEMM's time on aligned operands: its flops at full speed over the share of its
    /// waves' slots that 256 × 128 tiles fill.
    pub fn gemm_seconds(&self, s: &Shape) -> f64 {
        let flops = 2.0 * s.m as f64 * s.n as f64 * s.k as f64;
        flops / self.gemm_flops_per_second / wave_efficiency(wide_tiles(s))
    }

    /// The pitched copy's time for a `rows × cols` matrix of `element_bytes`.
    pub fn copy_seconds(&self, (rows, cols): (u32, u32), element_bytes: u32) -> f64 {
        let bytes = 2.0 * rows as f64 * cols as f64 * element_bytes as f64;
        self.copy_launch_seconds + bytes / self.copy_bytes_per_second
    }
}

/// `copies` with a pitched copy added for each 16-bit A or B that is read where it lies with
/// columns off a 128-byte line, where the copy costs less than the time the lines cost the
/// GEMM ([`LineModel`], [`H100_LINES`]). The kernel's choice does not change: the copy's
/// leading dimension is as aligned as the operand's was and more. Strided batches and grouped
/// GEMMs are left as they are (their members' copies would be one launch each).
// ANCHOR: line_copies
pub fn line_copies(
    p: &Problem,
    copies: Option<crate::launch::Copies>,
) -> Option<crate::launch::Copies> {
    // Measured only where the tiles fill the multiprocessors: the lines then cost L2 and TMA
    // throughput. Below a wave, nothing is known, and nothing is copied.
    if !one_16bit_problem(p) || wide_tiles(&p.shape) < SMS {
        return copies;
    }
    let (model, bytes) = (H100_LINES, p.dtype.bytes());
    let gemm = model.gemm_seconds(&p.shape);
    let (a_on_line, b_on_line) = line_offsets(p);
    let pays = |on_line: bool, stored: (u32, u32), penalty: f64| {
        !on_line && model.copy_seconds(stored, bytes) < penalty * gemm
    };
    let penalty_a = match p.transposes.transa {
        Transpose::No => model.penalty_a_mn_major,
        Transpose::Yes => model.penalty_a_k_major,
    };
    let add = (
        pays(a_on_line, p.stored_a(), penalty_a),
        pays(b_on_line, p.stored_b(), model.penalty_b),
    );
    pitched_copies(p, copies, add)
}
// ANCHOR_END: line_copies

/// What `auto` runs for a problem.
#[derive(Clone)]
pub struct Choice {
    /// The kernel to run.
    pub variant: Variant,
    /// Its `--tile`; `None` for a kernel without a tile parameter.
    pub tile: Option<u32>,
    /// The contract asked for (f64, bf16 and f16 are chosen from strict's rows whatever it is).
    pub math: Math,
    /// The table row that decided it; `None` for a fallback or the shapes rule.
    pub row: Option<Row>,
    /// The branch of the 16-bit shapes rule ([`shape_rule`]) that decided it, in words.
    pub rule: Option<&'static str>,
    /// The copies of A and B the kernel reads, where no candidate reads them as they lie:
    /// with aligned leading dimensions ([`aligned_operands`]) or the other way round
    /// ([`normal_operands`]).
    pub copies: Option<crate::launch::Copies>,
}

impl Choice {
    /// `best:1`, `gemm128`: as tables show a variant and tile.
    pub fn label(&self) -> String {
        match self.tile {
            Some(t) => format!("{}:{t}", self.variant.name()),
            None => self.variant.name().to_string(),
        }
    }

    /// Why it was chosen, in a sentence.
    pub fn reason(&self, dtype: Dtype) -> String {
        let contract = match self.math {
            Math::Strict => format!("{}'s own arithmetic", dtype.name()),
            m => format!("the {} contract", m.name()),
        };
        let why = if let Some(rule) = self.rule {
            format!("{rule} (the 16-bit shapes rule, in {contract})")
        } else {
            match &self.row {
                Some(r) => format!(
                    "the fastest kernel in {contract} measured at {}×{}×{} (the table's nearest shape)",
                    r.m, r.n, r.k
                ),
                None => format!(
                    "no measured row fits this shape, transposes and device: the first fallback in {contract} (then the first kernel of the course) that supports them"
                ),
            }
        };
        match self.copies {
            Some(copies) => format!("{why}; {}", copies.describe()),
            None => why,
        }
    }
}

/// What `auto` runs for a problem on a device (`None`: the emulator), see the module
/// documentation for the rule. The table is parsed once per process: the library asks on
/// every call.
pub fn choose(p: &Problem, math: Math, arch: Option<u32>) -> Result<Choice> {
    static ROWS: std::sync::OnceLock<Result<Vec<Row>, String>> = std::sync::OnceLock::new();
    let rows = ROWS
        .get_or_init(|| parse(TABLE).map_err(|e| format!("{e:#}")))
        .as_ref()
        .map_err(|e| anyhow!("{e}"))?;
    choose_from(rows, p, math, arch)
}

/// Multiply-adds per member below which a batch under FP32-accurate runs on strict's row: small
/// members make 3xTF32's per-tile work (the ranges, the splitting of each slice of B, the
/// unscaling of C) a large share, and the SIMT kernels win. H100, 1 024 members, against cuBLAS
/// SGEMM's strided batch (`docs/results/h100-2026-11-27-tf32-batch/`): 128³ (2²¹) `best:1`
/// 1.17× against `wgmma-3xtf32:1`'s 0.70×, 512 × 512 × 64 (2²⁴) 1.31× against 0.77×;
/// 2048 × 2048 × 128 and 2048 × 128 × 2048 (2²⁹) `wgmma-3xtf32:1` 1.05× and 1.24× against
/// `gemm128`'s 0.98× and 0.94×. The threshold lies between the measured sizes.
pub const FP32_ACCURATE_BATCH_MEMBER_MACS: u64 = 1 << 27;

/// Whether `auto` takes strict's row first for `p` under `math`: a batch under FP32-accurate
/// whose members are smaller than [`FP32_ACCURATE_BATCH_MEMBER_MACS`].
fn strict_first_for_batch(p: &Problem, math: Math) -> bool {
    let s = p.shape;
    let member_macs = s.m as u64 * s.n as u64 * s.k as u64;
    math == Math::Fp32Accurate
        && p.dtype == Dtype::F32
        && p.batch.is_batched()
        && member_macs < FP32_ACCURATE_BATCH_MEMBER_MACS
}

/// [`choose`] by the rows of a given table: the kernel, then the copies of operands whose
/// columns it would read across two L2 lines, where the copy pays ([`line_copies`]).
pub fn choose_from(rows: &[Row], p: &Problem, math: Math, arch: Option<u32>) -> Result<Choice> {
    let choice = choose_kernel(rows, p, math, arch)?;
    let chosen = (choice.variant.name(), choice.tile);
    let copies =
        wide_copies(p, chosen, choice.copies).unwrap_or_else(|| line_copies(p, choice.copies));
    Ok(Choice { copies, ..choice })
}

/// The kernel for `p` and the copies it cannot do without.
// ANCHOR: core_loop
fn choose_kernel(rows: &[Row], p: &Problem, math: Math, arch: Option<u32>) -> Result<Choice> {
    let (shape, dtype) = (&p.shape, p.dtype);
    let fits = |v: &Variant| fits(v, p, math, arch);
    // In 16 bits N,T and T,T with few tiles: B copied transposed (its n·k elements, against the
    // GEMM's m·n·k) lets the narrow kernel's stream-k grid run them as N,N and T,N.
    if dtype.is_16bit()
        && p.groups == GroupLayout::None
        && !p.batch.is_batched()
        && p.transposes.transb == Transpose::Yes
        && few_tiles(shape)
    {
        if let Some(copies) = b_turned(p, false) {
            let choice = choose_kernel(rows, &copies.problem_reading_them(p), math, arch)?;
            return Ok(Choice {
                copies: Some(copies),
                ..choice
            });
        }
    }
    if let Some((name, tile, rule)) = shape_rule(p).or_else(|| tf32_rule(p, math)) {
        let variant = registry::find(name)?;
        if fits_at(&variant, Some(tile), p, math, arch) {
            return Ok(Choice {
                variant,
                tile: Some(tile),
                math,
                row: None,
                rule: Some(rule),
                copies: None,
            });
        }
    }
    // A relaxed contract admits every strict kernel: where the contract's own row's kernel
    // cannot run a batch, strict's row decides, and for a batch of small members under
    // FP32-accurate it decides first ([`strict_first_for_batch`]).
    let relaxed_batch = math != Math::Strict && p.batch.is_batched();
    let rows_order: &[Math] = if strict_first_for_batch(p, math) {
        &[Math::Strict]
    } else if relaxed_batch {
        &[math, Math::Strict]
    } else {
        &[math]
    };
    for &rows_of in rows_order {
        let Some(row) = nearest(rows, shape, dtype, rows_of) else {
            continue;
        };
        let v = registry::find(&row.variant)
            .map_err(|e| anyhow!("auto table names `{}`: {e}", row.variant))?;
        if fits(&v) {
            return Ok(Choice {
                variant: v,
                tile: row.tile,
                math,
                row: Some(row.clone()),
                rule: None,
                copies: None,
            });
        }
    }
    // In 16 bits N,T and T,T store C with the TMA engine, whose rows must start 16 bytes apart:
    // at an m or ldc off that grid no kernel of those layouts runs, where N,N and T,N store C
    // as they go. B is copied transposed first (and A aligned if it needs it), and the choice
    // is the N,N or T,N problem's. A batch's kernel that stores C as it goes reads N,N only:
    // there A is turned too. Grouped GEMMs are copied alike: the masked layout's members
    // whole (every column of the capacity; the counts are read on the device), the contiguous
    // layout's one B as a shared operand is, and each group's A.
    let batched = p.batch.is_batched();
    if dtype.is_16bit()
        && (p.transposes.transb == Transpose::Yes
            || (batched && p.transposes.transa == Transpose::Yes))
    {
        let base = aligned_operands(p).map_or(*p, |(q, _)| q);
        let runs = registry::all()
            .into_iter()
            .any(|v| self::fits(&v, &base, math, arch));
        if !runs {
            if let Some(copies) = b_turned(p, batched) {
                let choice = choose_kernel(rows, &copies.problem_reading_them(p), math, arch)?;
                return Ok(Choice {
                    copies: Some(copies),
                    ..choice
                });
            }
        }
    }
    // In 16 bits every kernel is fed by the TMA engine, which cannot describe a row stride that
    // is not a multiple of 16 bytes, nor members that overlap: such an A or B is copied first
    // into an aligned workspace (one pass over it, against the GEMM's k), and the choice is the
    // aligned problem's.
    if dtype.is_16bit() {
        if let Some((aligned, copies)) = aligned_operands(p) {
            let choice = choose_kernel(rows, &aligned, math, arch)?;
            return Ok(Choice {
                copies: Some(copies),
                ..choice
            });
        }
    }
    let chain = fallbacks(dtype, math);
    let found = chain
        .iter()
        .map(|&(name, tile)| registry::find(name).map(|v| (v, tile)))
        .collect::<Result<Vec<_>>>()?;
    if let Some(&(variant, tile)) = found.iter().find(|(v, _)| fits(v)) {
        return Ok(Choice {
            variant,
            tile: Some(tile),
            math,
            row: None,
            rule: None,
            copies: None,
        });
    }
    if p.transposes == Transposes::NN {
        // The last fallback stands: `plan` then names its constraint, or the backend the
        // build it needs.
        let &(variant, tile) = found.last().expect("every chain has a fallback");
        return Ok(Choice {
            variant,
            tile: Some(tile),
            math,
            row: None,
            rule: None,
            copies: None,
        });
    }
    match registry::all().into_iter().find(|v| fits(v)) {
        Some(variant) => Ok(Choice {
            variant,
            tile: variant.tiles().first().copied(),
            math,
            row: None,
            rule: None,
            copies: None,
        }),
        // f32, f64 and TF32 kernels read N,N only: an operand stored transposed is copied
        // the other way round first, and the choice is the N,N problem's.
        None if !dtype.is_16bit() && normal_operands(p, (true, true)).is_some() =>
        {
            let (normal, copies) = normal_operands(p, (true, true)).expect("tested above");
            let choice = choose_kernel(rows, &normal, math, arch)?;
            Ok(Choice {
                copies: Some(copies),
                ..choice
            })
        }
        None => bail!(
            "auto: no kernel of the course computes {} ({}) in {} under the {} contract for this shape and device (cuBLAS does)",
            p.transposes.formula(),
            p.transposes.letters(),
            dtype.name(),
            math.name()
        ),
    }
}
// ANCHOR_END: core_loop

#[cfg(test)]
mod tests {
    use super::*;

    /// A problem of `shape` and `dtype` with op = N.
    fn problem(shape: Shape, dtype: Dtype) -> Problem {
        Problem {
            shape,
            ..Problem::packed(shape.m, shape.n, shape.k, dtype)
        }
    }

    fn shape(m: u32, n: u32, k: u32) -> Shape {
        Shape {
            m,
            n,
            k,
            lda: m,
            ldb: k,
            ldc: m,
        }
    }

    /// The tile model's choices are the kernels that ran fastest on the H100 among clusters of
    /// two, of four and the 192 × 128 tiles (`docs/results/h100-2026-12-08-cluster4/`), with
    /// the leading dimensions as packed (off the 128-byte line where a column is not a multiple
    /// of 64 elements) and padded to 64 elements; the copies are the model's.
    #[test]
    fn the_tile_model_takes_the_measured_fastest() {
        use crate::problem::Transpose::{No, Yes};
        let up = |x: u32| x.next_multiple_of(64);
        let measured = [
            // (A transposed, m, n, k, padded, fastest)
            (No, 3000, 3000, 3000, false, "wgmma-layouts:4"),
            (No, 3000, 3000, 3000, true, "wgmma-waves:1"),
            (No, 5000, 7000, 3000, false, "wgmma-layouts:4"),
            (No, 5000, 7000, 3000, true, "wgmma-layouts:1"),
            (Yes, 5000, 7000, 3000, false, "wgmma-layouts:4"),
            (Yes, 5000, 7000, 3000, true, "wgmma-layouts:1"),
            (No, 6000, 3000, 5000, false, "wgmma-layouts:4"),
            (No, 6000, 3000, 5000, true, "wgmma-waves:1"),
            (Yes, 6000, 3000, 5000, false, "wgmma-layouts:4"),
            (Yes, 6000, 3000, 5000, true, "wgmma-waves:1"),
            // B alone off the line: clusters of two (0.314 ms against 0.319).
            (No, 5120, 7168, 3000, false, "wgmma-layouts:1"),
            (Yes, 5120, 7168, 3000, false, "wgmma-layouts:4"),
            (Yes, 5120, 7168, 3000, true, "wgmma-layouts:1"),
            // Aligned, equal rounds: the fewer requests (0.250 ms against 0.258).
            (No, 11008, 2000, 4096, false, "wgmma-layouts:4"),
            (Yes, 2112, 4096, 7168, false, "wgmma-waves:1"),
            (Yes, 4096, 4096, 4096, false, "wgmma-layouts:1"),
            (No, 8192, 8192, 8192, false, "wgmma-layouts:1"),
        ];
        for (transa, m, n, k, padded, fastest) in measured {
            let mut p = Problem {
                transposes: Transposes::new(transa, No),
                ..problem(shape(m, n, k), Dtype::Bf16)
            };
            p.shape.lda = p.stored_a().0;
            if padded {
                p.shape.lda = up(p.shape.lda);
                p.shape.ldb = up(p.shape.ldb);
                p.shape.ldc = up(p.shape.ldc);
            }
            let plan = wide_plan(&p);
            let copies = match (plan.copy_a, plan.copy_b) {
                (false, false) => "",
                (true, false) => "+a",
                (false, true) => "+b",
                (true, true) => "+a+b",
            };
            let label = format!("{}:{}{copies}", plan.kernel.name, plan.kernel.tile);
            assert_eq!(label, fastest, "{transa:?} {m}x{n}x{k} padded {padded}");
        }
        // A small A read by many tiles: copied to the line (4 µs of copy against the quarter of
        // the slice its requests would add), B left as it lies; clusters of two, whose 64
        // n-tiles make two rounds where four-block clusters make three. `auto` runs the plan:
        // its kernel, on the copy (A's columns 128 bytes apart: 1024 elements).
        let p = problem(shape(1000, 8000, 3000), Dtype::Bf16);
        let plan = wide_plan(&p);
        assert_eq!(
            (plan.kernel.tile, plan.copy_a, plan.copy_b),
            (1, true, false)
        );
        let c = choose(&p, Math::Strict, Some(90)).unwrap();
        assert_eq!(c.label(), "wgmma-layouts:1");
        let copies = c.copies.expect("copies");
        assert_eq!(
            (copies.a.map(|a| a.to), copies.b.map(|b| b.to)),
            (Some(1024), None)
        );
        // f32's kernels are not fed by the TMA engine: no copies.
        let f32 = problem(shape(5000, 7000, 3000), Dtype::F32);
        assert!(choose(&f32, Math::Strict, Some(90))
            .unwrap()
            .copies
            .is_none());
    }

    /// The model's picture of each wide kernel is the registry's declaration: its cluster (the
    /// tensor maps' launch) and its tile's rows (the grid's blocks for m = 768, n = 512).
    #[test]
    fn the_wide_kernels_are_what_the_registry_declares() {
        use kernels_gpu::registry::Layout;
        for w in WIDE_KERNELS {
            let Variant::Kernel(k) = registry::find(w.name).unwrap() else {
                panic!("{}: not a kernel", w.name)
            };
            let operands = (k.tma.expect("a TMA kernel"))(w.tile, Layout::NN);
            assert_eq!(operands.cluster, w.cluster, "{}:{}", w.name, w.tile);
            let blocks = (k.geometry)(768, 512, 64, 2, w.tile).grid.0;
            assert_eq!(blocks, (768 / w.rows) * 4, "{}:{}", w.name, w.tile);
        }
    }

    /// At most a wave of 128 × 64 tiles takes the narrow kernel's stream-k grid: N,N and T,N as
    /// they lie, N,T and T,T on B copied transposed; a wide GEMM keeps its wide tiles and
    /// reads B as it lies.
    #[test]
    fn few_tiles_take_the_narrow_kernel_in_every_layout() {
        use crate::problem::Transpose::{No, Yes};
        for (transa, transb) in [(No, No), (Yes, No), (No, Yes), (Yes, Yes)] {
            let mut few = Problem {
                transposes: Transposes::new(transa, transb),
                ..problem(shape(1024, 1024, 4096), Dtype::Bf16)
            };
            few.shape.lda = few.stored_a().0;
            few.shape.ldb = few.stored_b().0;
            let c = choose(&few, Math::Strict, Some(90)).unwrap();
            assert_eq!(c.label(), "wgmma-narrow:64", "{transa:?} {transb:?}");
            let b_turned = c.copies.and_then(|c| c.b).is_some_and(|b| b.transposed);
            assert_eq!(b_turned, transb == Yes, "{transa:?} {transb:?}");
            let wide = Problem {
                shape: shape(4096, 4096, 4096),
                ..few
            };
            let c = choose(&wide, Math::Strict, Some(90)).unwrap();
            assert!(c.copies.is_none() && c.label() != "wgmma-narrow:64");
        }
    }

    #[test]
    fn the_table_parses_and_names_candidates_that_run_its_shapes() {
        let rows = parse(TABLE).unwrap();
        assert!(!rows.is_empty());
        for r in &rows {
            let v = registry::find(&r.variant).unwrap();
            assert!(
                is_candidate(&v, r.dtype, r.math),
                "{r:?}: not a GPU kernel the row's contract admits"
            );
            registry::resolve_tile(v, r.tile).unwrap();
            let Variant::Kernel(k) = v else {
                unreachable!()
            };
            assert!(k.dtypes.contains(&r.dtype), "{r:?}");
            // Each row chooses for its own shape, where the 16-bit shapes rule, which decides
            // first, leaves it to the table (it takes 1024³ and 1024 × 1024 × 8192 now).
            let p = problem(shape(r.m, r.n, r.k), r.dtype);
            if shape_rule(&p).is_some() {
                continue;
            }
            let c = choose(&p, r.math, Some(90)).unwrap();
            assert_eq!((c.variant.name(), c.tile), (r.variant.as_str(), r.tile));
            assert_eq!(c.row.as_ref(), Some(r));
        }
    }

    #[test]
    fn nearest_shape_in_log_distance_decides() {
        let text = format!(
            "{HEADER}\n# a comment\nf32,strict,1024,1024,8192,split-k,4,0,0,0,x\nf32,strict,4096,4096,4096,big-tile,1,0,0,0,x\nf64,strict,4096,4096,4096,tc-f64,2,0,0,0,x\n"
        );
        let rows = parse(&text).unwrap();
        let pick = |m, n, k, d| {
            nearest(&rows, &shape(m, n, k), d, Math::Strict).map(|r| r.variant.as_str())
        };
        assert_eq!(pick(1000, 1000, 9000, Dtype::F32), Some("split-k"));
        assert_eq!(pick(3000, 5000, 4000, Dtype::F32), Some("big-tile"));
        assert_eq!(pick(16384, 16384, 16384, Dtype::F32), Some("big-tile"));
        assert_eq!(pick(64, 64, 64, Dtype::F64), Some("tc-f64"));
    }

    #[test]
    fn a_malformed_table_is_refused_with_its_line() {
        assert!(parse("dtype,m\nf32,1").is_err());
        let e = parse(&format!("{HEADER}\nf8,strict,1,1,1,v1,0,0,0,0,x")).unwrap_err();
        assert!(format!("{e:#}").contains("line 2"), "{e:#}");
        assert!(format!("{e:#}").contains("unknown dtype"), "{e:#}");
    }

    /// The rule's branches at the model shapes (m = N, n = tokens, TN) and beside them.
    #[test]
    fn the_shapes_rule_sees_tokens_waves_layout_and_alignment() {
        let tn = |m, n, k| Problem {
            transposes: Transposes::ALL[1],
            ..problem(
                Shape {
                    lda: k,
                    ..shape(m, n, k)
                },
                Dtype::Bf16,
            )
        };
        let label = |p: &Problem| shape_rule(p).map(|(v, t, _)| format!("{v}:{t}"));
        let cases = [
            // A wave of tiles of weights, 16 tokens a tile up to 16 tokens: the fullest waves
            // (6144 rows in 128 tiles of 48), then the widest tile (28672 rows: 512 of 56 and
            // 896 of 32 fill their waves alike).
            ((4096, 16, 4096), "wgmma-swap:332"),
            ((6144, 16, 4096), "wgmma-swap:348"),
            ((7168, 16, 16384), "wgmma-swap:356"),
            ((28672, 16, 4096), "wgmma-swap:356"),
            // Too few rows for a wave of 32-row tiles: stream-k.
            ((2112, 1, 7168), "wgmma-swap:264"),
            ((2112, 64, 7168), "wgmma-swap:248"),
            // Unless k is short: then a wave of 16-row tiles.
            ((2112, 64, 1024), "wgmma-swap:116"),
            ((1024, 64, 4096), "wgmma-swap:248"),
            // 64 tokens a tile from 17.
            ((4096, 30, 7168), "wgmma-swap:132"),
            ((4096, 64, 7168), "wgmma-swap:132"),
            ((6144, 64, 4096), "wgmma-swap:148"),
            ((7168, 64, 2048), "wgmma-swap:156"),
            // From 65, 128 tokens a tile too; equal fills and areas go to one warpgroup.
            ((4096, 128, 4096), "wgmma-swap:164"),
            ((6144, 128, 4096), "wgmma-swap:48"),
            ((8192, 128, 8192), "wgmma-swap:64"),
            ((2112, 128, 7168), "wgmma-swap:132"),
            // Tiles of 64 tokens read each row of weights twice through L2, beside their
            // tokens: six bytes per byte of weights at 32 rows (0.64× cuBLAS here with `:132`).
            ((10240, 128, 8192), "wgmma-swap:48"),
            // 96 of 132 multiprocessors' worth of 256-row tiles: the wide tiles.
            ((24576, 64, 1536), "wgmma-layouts:2"),
            ((128256, 128, 4096), "wgmma-layouts:2"),
            ((4096, 2000, 7168), "wgmma-layouts:1"),
            // The tile model (`wide_plan`), T,N with every leading dimension as packed as it
            // can be: a last wave of 256 × 128 tiles mostly empty goes to 192 × 128 tiles
            // where A and B lie on 128-byte lines, or to clusters of four where they do not
            // (k = 3000 or 5000: 6000 and 10000 bytes), or where the rounds are equal.
            ((2112, 4096, 7168), "wgmma-waves:1"),
            ((3008, 3000, 3008), "wgmma-waves:1"),
            ((4096, 2112, 7168), "wgmma-waves:1"),
            ((3000, 3000, 3000), "wgmma-layouts:4"),
            ((6000, 3000, 5000), "wgmma-layouts:4"),
            ((5000, 7000, 3000), "wgmma-layouts:4"),
            ((5120, 7168, 3000), "wgmma-layouts:4"),
            // Whole waves of 256 × 128 (4096²: 512 tiles, 3.9 rounds; clusters of four make it
            // five): clusters of two.
            ((4096, 4096, 4096), "wgmma-layouts:1"),
        ];
        for ((m, n, k), expected) in cases {
            assert_eq!(
                label(&tn(m, n, k)).as_deref(),
                Some(expected),
                "{m}x{n}x{k}"
            );
        }
        // m off the TMA store's 16 bytes: C from the registers, wide or not (the swapped
        // tiles store from the registers too).
        assert_eq!(
            label(&tn(4097, 2000, 4096)).as_deref(),
            Some("wgmma-narrow:128")
        );
        assert_eq!(
            label(&tn(4097, 64, 4096)).as_deref(),
            Some("wgmma-swap:132")
        );
        // The swapped kernel reads both operands K-major: T,N only; N,N decode steps stay on
        // the narrow tiles.
        let nn = |m, n, k| problem(shape(m, n, k), Dtype::Bf16);
        assert_eq!(
            label(&nn(4096, 64, 7168)).as_deref(),
            Some("wgmma-narrow:64")
        );
        assert_eq!(label(&nn(2112, 1, 7168)).as_deref(), Some("wgmma-narrow:8"));
        // N,N beyond 128 columns on 128-byte lines is the measured table's, unless the tile
        // model takes another kernel than clusters of two; f32 is not the rule's.
        assert_eq!(label(&problem(shape(4096, 4096, 4096), Dtype::Bf16)), None);
        assert_eq!(
            label(&nn(3008, 3000, 3008)).as_deref(),
            Some("wgmma-waves:1")
        );
        assert_eq!(
            label(&nn(3000, 3000, 3000)).as_deref(),
            Some("wgmma-layouts:4")
        );
        assert_eq!(label(&problem(shape(64, 64, 64), Dtype::F32)), None);
        // And `auto` takes what the rule says, with the rule as its reason.
        let c = choose(&tn(4096, 64, 7168), Math::Strict, Some(90)).unwrap();
        assert_eq!(c.label(), "wgmma-swap:132");
        assert!(
            c.reason(Dtype::Bf16).contains("shapes rule"),
            "{}",
            c.reason(Dtype::Bf16)
        );
    }

    /// TF32 under `--math tf32`, T,N: the swapped tiles, decode ones up to 128 tokens (where
    /// the L2 model turns from 64-token tiles read twice), prefill ones beyond; never under
    /// strict, never in another layout.
    #[test]
    fn tf32_in_the_models_layout_takes_the_swapped_tiles() {
        let f32_tn = |m, n, k| Problem {
            transposes: Transposes::ALL[1],
            ..problem(shape(m, n, k), Dtype::F32)
        };
        let label = |p: &Problem, math| tf32_rule(p, math).map(|(v, t, _)| format!("{v}:{t}"));
        let cases = [
            ((4096, 1, 4096), "wgmma-tf32-swap:332"),
            ((4096, 128, 4096), "wgmma-tf32-swap:164"),
            ((10240, 128, 8192), "wgmma-tf32-swap:48"),
            ((128256, 128, 4096), "wgmma-tf32-swap:1256"),
            ((6144, 2000, 4096), "wgmma-tf32-swap:1256"),
            ((4096, 4096, 4096), "wgmma-tf32-swap:1256"),
        ];
        for ((m, n, k), expected) in cases {
            let p = f32_tn(m, n, k);
            assert_eq!(
                label(&p, Math::Tf32).as_deref(),
                Some(expected),
                "{m}x{n}x{k}"
            );
            assert_eq!(label(&p, Math::Strict), None, "{m}x{n}x{k} under strict");
        }
        let nn = problem(shape(4096, 4096, 4096), Dtype::F32);
        assert_eq!(label(&nn, Math::Tf32), None, "N,N");
    }

    #[test]
    fn no_row_for_the_dtype_falls_back() {
        let rows = parse(&format!("{HEADER}\nf32,strict,64,64,64,v1,0,0,0,0,x")).unwrap();
        assert!(nearest(&rows, &shape(8, 8, 8), Dtype::F64, Math::Strict).is_none());
        let e = parse(&format!("{HEADER}\nf32,fast,64,64,64,v1,0,0,0,0,x")).unwrap_err();
        assert!(
            format!("{e:#}").contains("unknown contract `fast`"),
            "{e:#}"
        );
    }

    #[test]
    fn the_16_bit_types_take_the_shapes_rule_then_the_fallbacks() {
        // A table of f32 rows only: the 16-bit problems have no row; the shapes rule decides
        // up to 128 columns, the fallbacks beyond (N,N).
        let f32_only = parse(&format!("{HEADER}\nf32,strict,64,64,64,gemm128,-,0,0,0,x")).unwrap();
        for dtype in [Dtype::Bf16, Dtype::F16] {
            let expected = [
                (shape(64, 64, 64), "wgmma-narrow:64"),
                (shape(4096, 4096, 4096), "wgmma-layouts:1"),
                (shape(8, 1, 8), "wgmma-narrow:8"),
            ];
            for (s, label) in expected {
                let c = choose_from(&f32_only, &problem(s, dtype), Math::Strict, Some(90)).unwrap();
                assert_eq!(c.label(), label, "{dtype:?}");
                assert!(c.row.is_none() && c.variant.dtypes().contains(&dtype));
                assert!(is_candidate(&c.variant, dtype, Math::Strict));
                // And through the real table, what `--variant auto` runs: a 16-bit kernel.
                let auto = Variant::Auto(Math::Strict);
                let launch = crate::run::plan(auto, None, &problem(s, dtype), Some(90)).unwrap();
                let name = launch.name();
                assert!(
                    name.starts_with("gemm_wgmma_") && name.ends_with(dtype.name()),
                    "{name}"
                );
            }
            // lda = 3 is not a 16-byte row for the TMA: A is copied first into a workspace
            // whose columns are 64 elements (128 bytes) apart, and the kernel reads the copy.
            let s = Shape {
                lda: 3,
                ..shape(3, 8, 8)
            };
            let auto = Variant::Auto(Math::Strict);
            let launch = crate::run::plan(auto, None, &problem(s, dtype), Some(90)).unwrap();
            let crate::launch::Launch::Kernel { copies, .. } = launch else {
                panic!("a kernel")
            };
            let a = copies.and_then(|c| c.a).expect("A is copied");
            assert_eq!((a.rows, a.cols, a.from, a.to), (3, 8, 3, 64));
            assert!(
                copies.unwrap().b.is_none(),
                "B (ldb = 8) is read as it lies"
            );
        }
        // f32 and f64 keep theirs.
        let c = choose_from(
            &f32_only,
            &problem(shape(64, 64, 64), Dtype::F64),
            Math::Strict,
            None,
        )
        .unwrap();
        assert_eq!(c.label(), "best:1");
    }

    #[test]
    fn rows_of_a_16_bit_type_choose_for_that_type_only() {
        let text = format!(
            "{HEADER}\nbf16,strict,4096,4096,4096,wgmma-16bit,1,0,0,0,x\nf32,strict,4096,4096,4096,gemm128,-,0,0,0,x\n"
        );
        let rows = parse(&text).unwrap();
        let pick = |d| {
            nearest(&rows, &shape(2048, 2048, 2048), d, Math::Strict).map(|r| r.variant.as_str())
        };
        assert_eq!(pick(Dtype::Bf16), Some("wgmma-16bit"));
        assert_eq!(pick(Dtype::F32), Some("gemm128"));
        assert_eq!(pick(Dtype::F16), None, "bf16's rows do not decide for f16");
        assert_eq!(rows[0].dtype, Dtype::Bf16);
        assert_eq!(rows[0].tile, Some(1));
    }

    #[test]
    fn a_contract_admits_only_what_it_promises() {
        use kernels_gpu::gemm::Arithmetic::{Native, Tf32, Tf32x3};
        for dtype in registry::ALL_DTYPES.iter().copied() {
            for math in Math::ALL {
                assert!(math.admits(Native, dtype), "{math:?} {dtype:?}");
            }
            assert!(!Math::Strict.admits(Tf32x3, dtype) && !Math::Strict.admits(Tf32, dtype));
        }
        assert!(Math::Fp32Accurate.admits(Tf32x3, Dtype::F32));
        assert!(
            !Math::Fp32Accurate.admits(Tf32, Dtype::F32),
            "TF32 is not FP32-accurate"
        );
        assert!(Math::Tf32.admits(Tf32, Dtype::F32) && Math::Tf32.admits(Tf32x3, Dtype::F32));
        assert!(
            !Math::Tf32.admits(Tf32, Dtype::F64),
            "the contract relaxes f32 only"
        );
        for m in Math::ALL {
            assert_eq!(Math::parse(m.name()), Some(m));
        }
    }

    #[test]
    fn every_choice_keeps_its_contract_and_runs_on_its_device() {
        let rows = parse(TABLE).unwrap();
        let shapes = [
            shape(64, 64, 64),
            shape(1000, 1000, 1000),
            shape(4096, 4096, 4096),
            shape(8192, 8192, 8192),
            shape(8192, 256, 8192),
            shape(1024, 1024, 8192),
        ];
        for dtype in [Dtype::F32, Dtype::F64] {
            for math in Math::ALL {
                for arch in [Some(90), Some(80), Some(89), None] {
                    for s in &shapes {
                        let c = choose_from(&rows, &problem(*s, dtype), math, arch).unwrap();
                        let what = format!("{dtype:?} {math:?} {arch:?} {s:?}: {}", c.label());
                        assert!(is_candidate(&c.variant, dtype, math), "{what}");
                        assert!(runs_on(&c.variant, arch), "{what}");
                    }
                }
            }
        }
    }

    #[test]
    fn fp32_accurate_takes_3xtf32_on_hopper_only_and_strict_never_does() {
        let rows = parse(TABLE).unwrap();
        let big = shape(4096, 4096, 4096);
        let pick = |math, arch| choose_from(&rows, &problem(big, Dtype::F32), math, arch).unwrap();
        assert_eq!(
            pick(Math::Fp32Accurate, Some(90)).variant.name(),
            "wgmma-3xtf32"
        );
        // Chapter 1's 3xTF32 has no ranges pass: not FP32-accurate across f32's range.
        assert_eq!(pick(Math::Fp32Accurate, Some(80)).variant.name(), "best");
        assert_eq!(pick(Math::Tf32, Some(80)).variant.name(), "tc-tf32");
        let strict = pick(Math::Strict, Some(90));
        assert_eq!(
            strict.variant.arithmetic(),
            kernels_gpu::gemm::Arithmetic::Native
        );
        // f64 has no relaxed rows: every contract runs strict's choice.
        let f64_choice = |math| {
            choose_from(&rows, &problem(big, Dtype::F64), math, Some(90))
                .unwrap()
                .label()
        };
        assert_eq!(f64_choice(Math::Tf32), f64_choice(Math::Strict));
    }
}
