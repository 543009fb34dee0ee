//! The FP8 pipeline of one run, top to bottom, as [`crate::run`]'s for the other types: resolve
//! what to launch (`plan`), quantise the inputs, launch and time on the backend, check against
//! the f64 reference of the dequantised operands, report.
//!
//! It is a pipeline of its own because an FP8 problem is not one element type: A and B are e4m3
//! codes with scales (per tensor or per block, [`Scaling`]), C is bf16, and the yardstick is
//! cuBLASLt, not cuBLAS.
use super::cublaslt::{blk128_scales, CublasLtFp8};
use super::grouped::{self, GroupedInputs, GroupedLaunch};
use super::quantize::{scale_count, Format, Fp8Inputs, Fp8Problem, Operand, Scaling};
use super::reference::{check, check_amax, reference};
use crate::launch::{Fp8Groups, Fp8Operands, Launch};
use crate::problem::{Problem, Transpose, Transposes};
use crate::registry::{self, CublasMath, Variant};
use crate::run::{median, Backend, Engine, Report, Timing};
use anyhow::{bail, Result};
use kernels_gpu::fused::Epilogue;
use kernels_gpu::gemm::Dtype;
use kernels_gpu::gemm::GroupLayout;
use kernels_gpu::registry::{Scales, Shape};

/// The scaling an FP8 kernel reads, as its registry entry declares it (`scales`): `wgmma-fp8`
/// one scale per tensor, `wgmma-fp8-block` one per block. A block-scaled kernel also runs a
/// per-tensor problem (its scales broadcast).
pub fn kernel_scaling(name: &str) -> Option<Scaling> {
    kernels_gpu::registry::find(name)?
        .scales
        .map(|scales| match scales {
            Scales::PerTensor => Scaling::PerTensor,
            Scales::Block => Scaling::Block,
        })
}

/// `auto` in e4m3. Per tensor, `wgmma-fp8:5` (three consumer warpgroups, 192 × 128 tiles) when
/// m and n are both at least 6144, `:2` (256 × 128, no cluster) below: on the H100
/// (`docs/results/h100-2026-11-25-fp8/run14/`) `:5` was ahead of `:1` and `:2` at 6144³ (2%),
/// 8192³ (1.5%) and 8192×8192×1024 (17%: its shorter tiles leave a fuller last wave and a
/// smaller epilogue per warpgroup), behind at 4096³ and 2048³, where `:2` was the fastest or
/// within 1% in four runs of five; the ping-pong configurations (`:3`, `:4`) were slower
/// everywhere.
///
/// Per tensor, the shapes of chapter 5 first, as in 16 bits (`crate::auto::shape_rule`): up to
/// 128 columns (a decode step's tokens) `wgmma-fp8-narrow` with a tile as narrow as n, unless
/// the 256-row tiles make 0.7 of a wave; and wherever the TMA store cannot write C (m or `ldc`
/// not a multiple of 8), `wgmma-fp8-narrow:128`, which writes C from the registers. On the H100
/// (`docs/results/006-shapes-e4m3/`) this took `auto` from 0.81× to 0.97× cuBLASLt over the
/// models' 63 shapes. Timed cold on the H200 (L2 flushed, `--cold`) that kernel ran
/// 0.57–0.90× cuBLASLt at decode shapes; up to 16 tokens, and up to 128 where the 256-row
/// tiles make less than 0.7 of a wave, `wgmma-fp8-swap` now runs them, the tile of 16-bit's
/// `crate::auto::swap_tile` (`docs/results/h200-2026-11-29-swap/`).
///
/// Per block (`block_choice`), by the waves the tiles make; a grouped GEMM ([`super::grouped`])
/// by the same rule over all its tiles (`by_waves`: `:9` on DeepGEMM's contiguous sets, 1.03–1.05×
/// cuBLASLt called once per group on the H200, `docs/results/h200-2026-11-28-grouped-nine/`;
/// `:8` on its masked sets, where `:9`'s 192-row tiles leave a wave a third empty at 4096 rows);
/// a strided batch with `wgmma-fp8-block:8` (1.00–1.06× `:6` on DeepGEMM's grouped sets,
/// `docs/results/h100-2026-11-28-fp8-staged-scales/`); per tensor (a batch) with `wgmma-fp8:6`, the
/// same skeleton's 128 × 128 tiles with one scale per tensor: over the attention-like batches
/// (`docs/results/h100-2026-11-28-fp8-tensor-batch/`) 0.84–1.07× cuBLASLt's strided batched
/// matmul, where `:2`'s 256-row tiles ran 0.74–0.78× (but at 2048 × 128 × 2048: 0.98× against
/// 1.01×).
///
/// B in e5m2 (`Dtype::E4m3E5m2`) has `wgmma-fp8`'s tiles only: `:5` or `:2` as per tensor
/// above (a batch `:6`), at every shape (the narrow kernels read e4m3); where its TMA store cannot write C (m
/// or `ldc` not a multiple of 8) the problem is refused with that rule.
pub fn auto_choice(p: &Fp8Problem) -> (Variant, Option<u32>) {
    let s = p.shape;
    let crate::auto::ShapeFeatures {
        tma_store,
        wide_waves,
        narrow_tile: narrow,
    } = crate::auto::features(&s);
    let (name, tile) = match p.scaling {
        // The caller's groups by the waves their tiles make (`by_waves`); a strided batch with
        // `:8` (measured on the batches); per tensor (a strided batch), the fastest on the
        // batches.
        Scaling::Block if p.groups.grouped() && p.groups.strided.is_none() => {
            let members = p.groups.members(&s).count;
            match by_waves(|rows| s.m.div_ceil(rows) * s.n.div_ceil(128) * members) {
                // The masked layout's tiles below the counts, packed: `:8`'s kernel walking
                // only them.
                ("wgmma-fp8-block", 8) if p.groups.layout == GroupLayout::Masked => {
                    ("wgmma-fp8-block", 11)
                }
                choice => choice,
            }
        }
        Scaling::Block if p.groups.grouped() => ("wgmma-fp8-block", 8),
        Scaling::PerTensor if p.groups.grouped() => ("wgmma-fp8", 6),
        _ if p.b_format == Format::E5m2 && s.m.min(s.n) >= 6144 => ("wgmma-fp8", 5),
        _ if p.b_format == Format::E5m2 => ("wgmma-fp8", 2),
        Scaling::PerTensor if s.n <= 16 || (s.n <= 128 && !wide_waves) => {
            ("wgmma-fp8-swap", crate::auto::swap_tile(&s))
        }
        Scaling::PerTensor if s.n <= 128 && !tma_store => ("wgmma-fp8-narrow", narrow),
        Scaling::PerTensor if !tma_store => ("wgmma-fp8-narrow", 128),
        Scaling::PerTensor if s.m.min(s.n) >= 6144 => ("wgmma-fp8", 5),
        Scaling::PerTensor => ("wgmma-fp8", 2),
        Scaling::Block => block_choice(&s, tma_store, narrow),
    };
    let variant = registry::find(name).expect("the FP8 kernels are registered");
    (variant, Some(tile))
}

/// `auto` per block, from how the tiles fill the multiprocessors (measured on DeepGEMM's dense
/// set, `docs/results/h100-2026-11-26-fp8-dense/`, cuBLASLt's block-scaled matmul in the same
/// process):
///
/// - **49 to 128 tokens (n), where a tile of the swapped kernel makes one wave of 64 tiles or
///   more** ([`swap_tile`]): `wgmma-fp8-block-swap`, the tokens as the
///   `wgmma`'s M and 16–64 rows of weights as its N, one tile per block over all of k. Of the
///   tiles that make one such wave, the one that makes the most (every multiprocessor
///   streaming its own rows of weights), and of those the widest (each token read for more
///   weights). Timed on cold L2 with the launches queued (`--cold`,
///   `docs/results/h200-2026-11-29-cold/`), it ran 1.06–1.20× cuBLASLt on the eight shapes of
///   DeepGEMM's dense set with 2112 to 7168 rows of weights, where `:10` and `:8` ran 0.88–0.92×
///   at m = 7168, and 1.13–1.20× at 1024 and 1536 rows. Where the best such tile is thin over a
///   long k or leaves a fifth of the multiprocessors idle, the same kernel on a stream-k grid
///   in equal parts, 32 or 48 rows a tile ([`equal_parts_tile`]). Where no tile makes such a
///   wave (m = 24576 and up, or below 1024 rows), the rules below.
/// - **Fewer 128 × 128 tiles than a third of the multiprocessors, n ≤ 128** (a decode step's
///   tokens over a few thousand rows of weights): `wgmma-fp8-block-narrow`, the tile as narrow
///   as n, whose stream-k grid gives every multiprocessor an equal share of the slices. At 17
///   and 32 tiles it ran 1.15× and 1.08× cuBLASLt where `wgmma-fp8-block:6`, on 17 or 32
///   multiprocessors, ran 0.71× and 0.75×. From 56 tiles `:6` was as fast or faster (1.22×
///   against 1.04× at 7168 × 64 × 2048): the stream-k fixup, in which one block reads every
///   part of a tile alone, costs more than the idle multiprocessors.
/// - **Otherwise `wgmma-fp8-block:9`** (three consumer warpgroups, 192 × 128 tiles, A's scales
///   copied beside each stage), **unless its waves fill their slots less than `:8`'s**
///   (128 × 128 tiles, the same copy) **by more than a factor 1.1**. The margin follows
///   `:9`'s lead: with the scales loaded by each consumer thread (`:7`, `:6`) it was three
///   points; the copy made `:9` 7–13% faster than `:7` and `:8` 1–6% faster than `:6`
///   (`docs/results/h100-2026-11-28-fp8-staged-scales/`: eight points, `:9` at 7168 × 4096 ×
///   16384, fill 0.92 against 0.97); the trimmed loop made `:9` 5–7% faster again and `:8`
///   3–5% (`docs/results/h200-2026-11-28-fp8-issue-trim/`), and `:9` now wins at 4096 × 4096
///   × 7168 and 4096³ too (fill 0.89 against 0.97: 0.98× and 0.96× cuBLASLt against 0.95×
///   and 0.92×). `:8` stays where the 192-row tiles leave a third of their last wave or more
///   empty at 64 and 128 tokens (7168 × 64 × 2048: 1.37× against 1.24×; 32768 × 128 × 512:
///   1.35× against 1.31×).
/// - **Fewer 192 × 128 tiles than multiprocessors, n ≤ 128, and at least 32 slices of k per
///   multiprocessor** (long k: 7168 rows of weights over k = 16384): `wgmma-fp8-block:10`, `:9`
///   on a stream-k grid. At 64 and 128 tokens there it ran 0.88–0.94× cuBLASLt where `:8`, on
///   56 of the multiprocessors, ran 0.79–0.83× (`docs/results/h200-2026-11-28-fp8-stream-k/`); at
///   k = 2048 the fixup cost more than it bought (0.67× against 1.05×), and with more tiles than
///   multiprocessors its data-parallel waves ran 11–14% slower than `:9`'s (its loop has more
///   instructions per slice).
/// - Where the TMA store cannot write C (m or `ldc` not a multiple of 8),
///   `wgmma-fp8-block-narrow:128`, which writes C from the registers.
fn block_choice(s: &Shape, tma_store: bool, narrow: u32) -> (&'static str, u32) {
    use crate::auto::SMS;
    let tiles = |rows: u32| s.m.div_ceil(rows) * s.n.div_ceil(128);
    if !tma_store {
        return ("wgmma-fp8-block-narrow", 128);
    }
    if let Some(tile) = swap_tile(s) {
        return ("wgmma-fp8-block-swap", tile);
    }
    if s.n <= 128 && 3 * tiles(128) < SMS {
        return ("wgmma-fp8-block-narrow", narrow);
    }
    let slices = s.k.div_ceil(128);
    if s.n <= 128 && tiles(192) < SMS && tiles(192) * slices >= 32 * SMS {
        return ("wgmma-fp8-block", 10);
    }
    by_waves(tiles)
}

/// The swapped kernel's tile for 49 to 128 tokens ([`block_choice`]): of its configurations
/// (`--tile 100 + W`: W rows of weights by 64 tokens, one consumer warpgroup; `W`: by 128
/// tokens, two; at most 64 tokens only the first, whose tile the tokens fill), those whose
/// tiles make one wave of at least 64 tiles (measured down to 1024 × 64 × 7168, 64 tiles of
/// 16 rows: 1.17× cuBLASLt where the narrow kernel ran 1.01×); the most tiles, then the widest.
/// `None` where none does.
///
/// Where that tile is 16 rows of weights over a long k (k ≥ 6144: each block reads four times
/// as many bytes of tokens as of its own weights, all along k) or its wave leaves a fifth of
/// the multiprocessors idle, the stream-k tiles in equal parts ([`equal_parts_tile`]) when
/// their parts are long enough.
fn swap_tile(s: &Shape) -> Option<u32> {
    let tile = one_wave_swap_tile(s)?;
    let (rows, tokens) = (tile % 100, if tile > 100 { 64 } else { 128 });
    let fill = s.m.div_ceil(rows) * s.n.div_ceil(tokens);
    if (rows == 16 && s.k >= 6144) || 5 * fill < 4 * crate::auto::SMS {
        if let Some(streamed) = equal_parts_tile(s) {
            return Some(streamed);
        }
    }
    Some(tile)
}

/// The stream-k tiles in equal parts (`--tile 400 + W`: W rows of weights by 64 tokens, each
/// tile cut into as many parts as the multiprocessors allow, one block each), for
/// [`swap_tile`]: those that cut each tile in two parts or more, each at least 14 slices of
/// k long; of them the one that keeps the most multiprocessors busy, then the widest (64 rows,
/// measured as `:464`, ran no faster than `:448` where this rule would have taken it, and is
/// not built). Measured cold (`docs/results/h200-2026-11-29-fp8-stream-k/`, × cuBLASLt): 1.58
/// against the one-wave tile's 1.17 at 1024 × 64 × 7168 (`:432`, four parts of 14 slices),
/// 1.45 against 1.19 at 1536 × 64 × 7168, 1.32 against 1.19 at 2112 × 64 × 7168 (`:448`); but
/// 0.94× the 16-row tile's speed at 2112 × 64 × 4096 (`:432`, two parts of 16 slices), and
/// 0.89× the 32-row tile's where that one fills the multiprocessors (4096 × 64 × 7168): the
/// fixup, in which the last part's block reads the others' and stores the tile, is a chain of
/// round trips after the mainloop.
fn equal_parts_tile(s: &Shape) -> Option<u32> {
    use crate::auto::SMS;
    let slices = s.k.div_ceil(128);
    [(432, 32), (448, 48)]
        .into_iter()
        .filter_map(|(tile, rows)| {
            let tiles = s.m.div_ceil(rows) * s.n.div_ceil(64);
            let parts = SMS / tiles;
            (parts >= 2 && slices >= 14 * parts).then_some((tiles * parts, rows, tile))
        })
        .max()
        .map(|(_, _, tile)| tile)
}

/// [`swap_tile`]'s tile of one wave, no split of k.
fn one_wave_swap_tile(s: &Shape) -> Option<u32> {
    use crate::auto::SMS;
    if !(49..=128).contains(&s.n) {
        return None;
    }
    let one_consumer = [(116, 16, 64), (132, 32, 64), (164, 64, 64)];
    let two = [(16, 16, 128), (24, 24, 128), (32, 32, 128)];
    let wide_two = [(48, 48, 128), (56, 56, 128), (64, 64, 128)];
    let configurations = one_consumer
        .iter()
        .chain(if s.n > 64 { &two[..] } else { &[] })
        .chain(if s.n > 64 { &wide_two[..] } else { &[] });
    configurations
        .map(|&(tile, rows, tokens)| (s.m.div_ceil(rows) * s.n.div_ceil(tokens), rows, tile))
        .filter(|&(tiles, _, _)| (64..=SMS).contains(&tiles))
        .max_by_key(|&(tiles, rows, _)| (tiles, rows))
        .map(|(_, _, tile)| tile)
}

/// `wgmma-fp8-block:9` (192 × 128 tiles) unless its waves fill more than a tenth less of their
/// slots than `:8`'s (128 × 128), `tiles(rows)` the tiles of `rows` rows. One GEMM or a grouped
/// GEMM's all (the masked layout's at its capacity).
fn by_waves(tiles: impl Fn(u32) -> u32) -> (&'static str, u32) {
    use crate::auto::wave_efficiency;
    let (two, three) = (wave_efficiency(tiles(128)), wave_efficiency(tiles(192)));
    if 1.1 * three >= two {
        ("wgmma-fp8-block", 9)
    } else {
        ("wgmma-fp8-block", 8)
    }
}

/// What runs a variant on an FP8 problem.
// One per planned call, made once and matched in place: the size of a launch (with its copies)
// costs nothing there, a box would cost an allocation per plan.
#[allow(clippy::large_enum_variant)]
enum Fp8Launch {
    Kernel(Launch),
    /// cuBLASLt's FP8 matmul; `fast_accum`: `CUBLASLT_MATMUL_DESC_FAST_ACCUM`, the tensor
    /// cores' FP8 sums never promoted.
    CublasLt {
        fast_accum: bool,
    },
}

impl Fp8Launch {
    /// Whether it adds the tensor cores' partial sums into f32 registers every 128 of k: the
    /// block-scaled kernel and cuBLASLt by default do; `wgmma-fp8` and cuBLASLt's fast
    /// accumulation keep them in the tensor cores' 13-bit sums over all of k.
    fn promotes(&self) -> bool {
        match self {
            Fp8Launch::Kernel(Launch::Kernel { entry, .. }) => entry.contains("fp8_block"),
            Fp8Launch::Kernel(_) => false,
            Fp8Launch::CublasLt { fast_accum } => !fast_accum,
        }
    }
}

/// Resolves what to launch for a variant and tile, or says why it cannot run.
fn plan(variant: Variant, tile: Option<u32>, p: &Fp8Problem) -> Result<(Fp8Launch, String)> {
    if p.groups.grouped() {
        grouped::validate(p)?;
    }
    match variant {
        Variant::Kernel(k) => {
            let Some(scaling) = kernel_scaling(k.name) else {
                bail!(
                    "variant `{}` has no e4m3 version (the FP8 kernels: {})",
                    k.name,
                    fp8_kernels()
                );
            };
            if !k.dtypes.contains(&p.dtype()) {
                bail!(
                    "`{}` reads e4m3 B only; B in e5m2 runs on {} (one scale per tensor)",
                    k.name,
                    e5m2_kernels()
                );
            }
            if scaling == Scaling::PerTensor && p.scaling == Scaling::Block {
                bail!(
                    "`{}` takes one scale per tensor; this problem has block scales (`--scaling block`): use {}",
                    k.name,
                    crate::registry::kernels_where(|v, _| {
                        matches!(v, Variant::Kernel(k) if k.scales == Some(Scales::Block))
                    })
                );
            }
            let tile = registry::resolve_tile(variant, tile)?;
            let operands = k.tma.map(|operands| operands(tile, kernels_gpu::registry::Layout::TN));
            if p.groups.grouped() && !operands.is_some_and(|o| o.grouped) {
                bail!(
                    "`{}` does not run grouped GEMMs or batches (those that do: {})",
                    registry::label(variant, Some(tile))?,
                    grouped_fp8_kernels()
                );
            }
            if let Err(constraint) = (k.supports)(&p.shape, p.dtype()) {
                bail!(
                    "variant `{}` does not support this shape: {constraint}",
                    k.name
                );
            }
            let members = p.groups.members(&p.shape).count;
            let launch = kernel_launch(k, tile, (&p.shape, members), p.dtype());
            Ok((Fp8Launch::Kernel(launch), registry::label(variant, Some(tile))?))
        }
        Variant::Cublas(CublasMath::Default) if tile.is_none() => Ok((
            Fp8Launch::CublasLt { fast_accum: false },
            "cublas".to_string(),
        )),
        Variant::Auto(_) if tile.is_none() => {
            let (choice, tile) = auto_choice(p);
            // A shape that no FP8 kernel of the problem's scaling runs is refused as the call
            // asked for it, by the type's rule, not by the name of the kernel `auto` took.
            if let Variant::Kernel(k) = choice {
                if let Err(constraint) = (k.supports)(&p.shape, p.dtype()) {
                    let any_runs = crate::registry::kernels().iter().any(|other| {
                        kernel_scaling(other.name) == Some(p.scaling)
                            && other.dtypes.contains(&p.dtype())
                            && (other.supports)(&p.shape, p.dtype()).is_ok()
                    });
                    if !any_runs {
                        let scaling = match p.scaling {
                            Scaling::PerTensor => "one scale per tensor",
                            Scaling::Block => "block scales",
                        };
                        bail!(
                            "auto: this {} GEMM ({scaling}) cannot run: {constraint}; FP8 reads A \
                             and B along k through the TMA engine, whose rows must start 16 bytes \
                             apart (cuBLASLt's FP8 matmul has the same rule)",
                            p.dtype().name()
                        );
                    }
                }
            }
            let (launch, label) = plan(choice, tile, p)?;
            Ok((launch, format!("auto→{label}")))
        }
        _ => bail!(
            "variant `{}` has no e4m3 version (the FP8 kernels: {}; the yardstick `cublas` is cuBLASLt)",
            variant.name(),
            fp8_kernels()
        ),
    }
}

/// The kernels that read e4m3, as a refusal names them (from the registry).
fn fp8_kernels() -> String {
    registry::kernels_where(
        |v, _| matches!(v, Variant::Kernel(k) if kernel_scaling(k.name).is_some()),
    )
}

/// The FP8 kernels (and tiles) that run grouped GEMMs and packed batches, from the registry.
pub fn grouped_fp8_kernels() -> String {
    registry::kernels_where(|v, t| match (v, t) {
        (Variant::Kernel(k), Some(t)) => {
            kernel_scaling(k.name).is_some()
                && k.tma
                    .is_some_and(|o| o(t, kernels_gpu::registry::Layout::TN).grouped)
        }
        _ => false,
    })
}

/// The FP8 kernels that read B in e5m2, from the registry.
pub fn e5m2_kernels() -> String {
    registry::kernels_where(
        |v, _| matches!(v, Variant::Kernel(k) if k.dtypes.contains(&Dtype::E4m3E5m2)),
    )
}

/// The launch of FP8 kernel `k` at `tile` on `members` problems of `shape` (TN; the masked
/// layout's members, a batch's, or 1) in `dtype` (`E4m3`, or `E4m3E5m2` for B in e5m2): its
/// entry point, its grid, its tensor maps. The registry's launch, for a test's kernel body too.
///
/// The walk goes over every member's tiles, so the persistent grid is sized by all of them, as
/// in 16 bits (the backend caps it at what is resident). Sized by one member's, four members of
/// 256 tokens over 4096 rows ran on 64 of the H100's 132 multiprocessors.
pub fn kernel_launch(
    k: &kernels_gpu::registry::Variant,
    tile: u32,
    (s, members): (&Shape, u32),
    dtype: Dtype,
) -> Launch {
    let layout = kernels_gpu::registry::Layout::TN;
    let mut geometry = (k.geometry)(s.m, s.n, s.k, 1, tile);
    geometry.grid.0 = geometry.grid.0.saturating_mul(members);
    Launch::Kernel {
        entry: k.entry_name(dtype, tile, layout),
        geometry,
        reduce: None,
        target: k.target,
        tma: k.tma.map(|operands| operands(tile, layout)),
        copies: None,
        unfused: None,
    }
}

/// What the library launches for a variant and tile: a kernel, or `None` for cuBLASLt (in
/// its default, promoting mode), and the label that reports it.
pub(crate) fn plan_launch(
    variant: Variant,
    tile: Option<u32>,
    p: &Fp8Problem,
) -> Result<(Option<Launch>, String)> {
    let (launch, label) = plan(variant, tile, p)?;
    let launch = match launch {
        Fp8Launch::Kernel(l) => Some(l),
        Fp8Launch::CublasLt { .. } => None,
    };
    Ok((launch, label))
}

/// The scales in the layout `launch` reads: per tensor one each; per block ours
/// ([`super::quantize`]), a per-tensor problem's broadcast to it; for cuBLASLt's block modes
/// B's in its layout ([`blk128_scales`]).
fn scales_for(launch: &Fp8Launch, p: &Fp8Problem, x: &Fp8Inputs) -> (Vec<f32>, Vec<f32>) {
    let s = p.shape;
    let wants_blocks = match launch {
        Fp8Launch::Kernel(Launch::Kernel { entry, .. }) => entry.contains("fp8_block"),
        _ => p.scaling == Scaling::Block,
    };
    let (mut a, mut b) = (x.a.scales.clone(), x.b.scales.clone());
    if wants_blocks && p.scaling == Scaling::PerTensor {
        a = vec![a[0]; scale_count(Operand::A, Scaling::Block, s.k, s.m)];
        b = vec![b[0]; scale_count(Operand::B, Scaling::Block, s.k, s.n)];
    }
    if matches!(launch, Fp8Launch::CublasLt { .. }) && p.scaling == Scaling::Block {
        b = blk128_scales(&b, s.k, s.n);
    }
    (a, b)
}

/// The problem as the common [`Report`] states it (its type; its scaling is in the label): a
/// grouped one with its groups as the batch's members, whose table and flops are the FP8
/// run's.
fn as_problem(p: &Fp8Problem) -> Problem {
    Problem {
        shape: p.shape,
        dtype: p.dtype(),
        alpha: p.alpha as f64,
        beta: p.beta as f64,
        init: p.init,
        seed: p.seed,
        epilogue: p.epilogue,
        transposes: Transposes::new(Transpose::Yes, Transpose::No),
        batch: p.groups.layers(&p.shape),
        groups: p.groups.layout,
    }
}

/// A grouped problem's table: a strided batch's every count n ([`Fp8Groups::batch`]), else the
/// problem's own ([`Problem::group_table`]: the contiguous layout's runs, the masked layout's
/// counts drawn from the seed).
pub fn group_table(p: &Fp8Problem) -> Vec<u32> {
    if p.groups.strided.is_some() {
        vec![p.shape.n; p.groups.count as usize]
    } else {
        as_problem(p).group_table()
    }
}

/// Launches and times `launch` on one problem's inputs: the measured run, the engine and the
/// entry's name.
fn measure(
    backend: &Backend,
    launch: &Fp8Launch,
    label: &str,
    p: &Fp8Problem,
    inputs: &Fp8Inputs,
    timing: Timing,
) -> Result<(crate::run::Measured<half::bf16>, Engine, String)> {
    let (scale_a, scale_b) = scales_for(launch, p, inputs);
    let ops = Fp8Operands {
        a: &inputs.a.codes.data,
        b: &inputs.b.codes.data,
        scale_a: &scale_a,
        scale_b: &scale_b,
        c: &inputs.c.data,
        groups: Fp8Groups::NONE,
        table: &[],
        fused: (p.epilogue, &inputs.bias),
    };
    let scalars = (p.alpha, p.beta);
    match (launch, backend) {
        (Fp8Launch::Kernel(l), Backend::Gpu(gpu)) => {
            let enqueue = gpu.fp8_kernel(l, p.shape, scalars, (Fp8Groups::NONE, p.epilogue))?;
            let m = gpu.run_fp8(l.name(), &p.shape, &ops, timing, &enqueue)?;
            Ok((m, Engine::Gpu, l.name().to_string()))
        }
        (Fp8Launch::Kernel(l), Backend::Emulator) => {
            let m = crate::emulator::run_fp8(l, &p.shape, scalars, &ops, timing)?;
            Ok((m, Engine::Emulator, l.name().to_string()))
        }
        (Fp8Launch::CublasLt { fast_accum }, Backend::Gpu(gpu)) => {
            let lt = CublasLtFp8::new(
                &p.shape,
                (p.scaling, p.b_format),
                p.alpha,
                p.beta,
                *fast_accum,
            )?;
            let stream = gpu.stream().as_inner();
            let enqueue = |q: &crate::launch::Fp8Pointers| unsafe {
                lt.enqueue(stream, q.a, q.b, q.c, q.scale_a, q.scale_b)
            };
            let m = gpu.run_fp8(label, &p.shape, &ops, timing, &enqueue)?;
            Ok((m, Engine::Gpu, label.to_string()))
        }
        (Fp8Launch::CublasLt { .. }, Backend::Emulator) => {
            bail!("cuBLASLt runs only on a GPU (use --backend gpu)")
        }
    }
}

/// Runs several variants on one FP8 problem: the inputs are quantised and the f64 reference
/// computed once; `progress` sees each report as it comes. `cublas` is cuBLASLt (the report's
/// entry says `cublas`, so that tables find their yardstick).
pub fn execute_many(
    backend: &Backend,
    variants: &[(Variant, Option<u32>)],
    p: &Fp8Problem,
    timing: Timing,
    progress: impl FnMut(&Result<Report>),
) -> Vec<Result<Report>> {
    execute_with_yardsticks(backend, variants, false, p, timing, progress)
}

/// [`execute_many`], and with `fast_accum_yardstick` cuBLASLt in fast-accumulation mode too
/// (labelled `cublas-fast-accum`, after the variants), the fair yardstick of a kernel that
/// never promotes.
pub fn execute_with_yardsticks(
    backend: &Backend,
    variants: &[(Variant, Option<u32>)],
    fast_accum_yardstick: bool,
    p: &Fp8Problem,
    timing: Timing,
    mut progress: impl FnMut(&Result<Report>),
) -> Vec<Result<Report>> {
    // A grouped problem's inputs are its groups' and members' own; one problem's, its own.
    let grouped = p
        .groups
        .grouped()
        .then(|| GroupedInputs::generate(p, group_table(p)));
    let inputs = grouped.is_none().then(|| Fp8Inputs::generate(p));
    let (mut expected, mut expected_groups, mut expected_plain) = (None, None, None);
    let mut planned: Vec<Result<(Fp8Launch, String)>> =
        variants.iter().map(|&(v, t)| plan(v, t, p)).collect();
    if fast_accum_yardstick {
        planned.push(Ok((
            Fp8Launch::CublasLt { fast_accum: true },
            "cublas-fast-accum".to_string(),
        )));
    }
    let mut reports = Vec::new();
    for planned in planned {
        let report = planned.and_then(|(launch, label)| {
            let mut shown = label.clone();
            let (measured, engine, entry, fp8_check) = match (&grouped, &inputs) {
                (Some(x), _) => {
                    // A strided batch per tensor has cuBLASLt's strided batched matmul; the
                    // other grouped problems (block scales) a loop of its calls, one per group.
                    let batched = p.groups.strided.is_some() && p.scaling == Scaling::PerTensor;
                    let run = match &launch {
                        Fp8Launch::Kernel(l) => GroupedLaunch::Kernel(l),
                        &Fp8Launch::CublasLt { fast_accum } if batched => {
                            GroupedLaunch::CublasLtBatched { fast_accum }
                        }
                        Fp8Launch::CublasLt { fast_accum: false } => GroupedLaunch::CublasLtLoop,
                        Fp8Launch::CublasLt { .. } => {
                            bail!("the grouped yardstick is cuBLASLt per group, promoting")
                        }
                    };
                    let (m, engine, entry) = grouped::measure(backend, run, &label, p, x, timing)?;
                    let checked = timing.check.then(|| {
                        let r = expected_groups.get_or_insert_with(|| grouped::references(p, x));
                        let c = (&m.uploaded_c[..], &m.result[..]);
                        grouped::check_groups(p, x, r, c, launch.promotes())
                    });
                    (m, engine, entry, checked)
                }
                (None, Some(inputs)) => {
                    // cuBLASLt's FP8 matmul runs here without an epilogue: as a yardstick it
                    // is the plain GEMM, checked as one, and says so.
                    let plain = Fp8Problem {
                        epilogue: Epilogue::NONE,
                        ..*p
                    };
                    let (q, expected) = match launch {
                        Fp8Launch::CublasLt { .. } if !p.epilogue.is_none() => {
                            shown += " (no epilogue)";
                            (&plain, &mut expected_plain)
                        }
                        _ => (p, &mut expected),
                    };
                    let (m, engine, entry) = measure(backend, &launch, &label, q, inputs, timing)?;
                    let checked = timing.check.then(|| {
                        let r = expected.get_or_insert_with(|| reference(q, inputs));
                        let mut checked = check(q, r, &m.uploaded_c, &m.result, launch.promotes());
                        checked.check.amax = m.amax.map(|amax| check_amax(q, &m.result, amax));
                        checked
                    });
                    (m, engine, entry, checked)
                }
                (None, None) => unreachable!("a problem's inputs are made above"),
            };
            let times = &measured.times_ms;
            Ok(Report {
                variant: shown,
                entry,
                engine,
                problem: as_problem(p),
                median_ms: if times.is_empty() {
                    f64::NAN
                } else {
                    median(times)
                },
                min_ms: times.iter().copied().fold(f64::INFINITY, f64::min),
                runs: times.len(),
                check: fp8_check.map(|c| c.check),
            })
        });
        progress(&report);
        reports.push(report);
    }
    reports
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Init;
    use kernels_gpu::registry::Shape;

    fn problem(m: u32, n: u32, k: u32, scaling: Scaling) -> Fp8Problem {
        Fp8Problem {
            b_format: crate::fp8::quantize::Format::E4m3,
            shape: Shape {
                m,
                n,
                k,
                lda: k,
                ldb: k,
                ldc: m + m % 8,
            },
            alpha: 1.0,
            beta: 0.0,
            scaling,
            init: Init::Random,
            seed: 1,
            outliers: false,
            epilogue: kernels_gpu::fused::Epilogue::NONE,
            groups: Fp8Groups::NONE,
        }
    }

    #[test]
    fn auto_takes_the_cluster_configuration_on_large_cubes_and_the_block_kernel_for_block_scales() {
        for ((m, n, k), scaling, expected) in [
            ((8192, 8192, 8192), Scaling::PerTensor, "wgmma-fp8:5"),
            ((4096, 4096, 4096), Scaling::PerTensor, "wgmma-fp8:2"),
            ((8192, 8192, 1024), Scaling::PerTensor, "wgmma-fp8:5"),
            ((8192, 8192, 8192), Scaling::Block, "wgmma-fp8-block:9"),
            ((8192, 8192, 1024), Scaling::Block, "wgmma-fp8-block:9"),
            ((6144, 6144, 6144), Scaling::Block, "wgmma-fp8-block:9"),
            ((4096, 4096, 4096), Scaling::Block, "wgmma-fp8-block:9"),
            ((32768, 128, 512), Scaling::Block, "wgmma-fp8-block:8"),
            // DeepGEMM's dense set (m = N, n = M tokens): few tiles at decode sizes go narrow,
            // the last wave decides between 128- and 192-row tiles.
            ((2112, 64, 7168), Scaling::Block, "wgmma-fp8-block-swap:448"),
            ((2112, 64, 4096), Scaling::Block, "wgmma-fp8-block-swap:116"),
            ((3072, 64, 7168), Scaling::Block, "wgmma-fp8-block-swap:448"),
            ((4096, 64, 7168), Scaling::Block, "wgmma-fp8-block-swap:132"),
            (
                (7168, 64, 16384),
                Scaling::Block,
                "wgmma-fp8-block-swap:164",
            ),
            (
                (4096, 128, 7168),
                Scaling::Block,
                "wgmma-fp8-block-swap:164",
            ),
            ((7168, 128, 2048), Scaling::Block, "wgmma-fp8-block-swap:56"),
            (
                (2112, 128, 7168),
                Scaling::Block,
                "wgmma-fp8-block-swap:132",
            ),
            ((24576, 64, 1536), Scaling::Block, "wgmma-fp8-block:9"),
            (
                (2112, 48, 7168),
                Scaling::Block,
                "wgmma-fp8-block-narrow:64",
            ),
            (
                (1024, 128, 7168),
                Scaling::Block,
                "wgmma-fp8-block-swap:448",
            ),
            ((1024, 64, 7168), Scaling::Block, "wgmma-fp8-block-swap:432"),
            ((1536, 64, 7168), Scaling::Block, "wgmma-fp8-block-swap:448"),
            (
                (1536, 128, 7168),
                Scaling::Block,
                "wgmma-fp8-block-swap:448",
            ),
            ((7168, 64, 2048), Scaling::Block, "wgmma-fp8-block-swap:164"),
            ((2112, 4096, 7168), Scaling::Block, "wgmma-fp8-block:9"),
            ((24576, 4096, 1536), Scaling::Block, "wgmma-fp8-block:9"),
            ((32768, 4096, 512), Scaling::Block, "wgmma-fp8-block:9"),
            ((7168, 4096, 16384), Scaling::Block, "wgmma-fp8-block:9"),
            (
                (1001, 4096, 512),
                Scaling::Block,
                "wgmma-fp8-block-narrow:128",
            ),
        ] {
            let (v, tile) = auto_choice(&problem(m, n, k, scaling));
            assert_eq!(
                registry::label(v, tile).unwrap(),
                expected,
                "{m}x{n}x{k} {scaling:?}"
            );
        }
    }

    /// DeepGEMM's grouped sets: the contiguous ones (many tiles) take `:9`, the masked ones at
    /// 4096 rows `:8`'s tiles (22 tiles of 192 rows per column of tiles leave waves a third
    /// empty), as measured in `docs/results/h200-2026-11-28-grouped-nine/`, walked packed
    /// (`:11`); a strided batch `:8`.
    #[test]
    fn auto_chooses_a_grouped_gemms_tiles_by_their_waves() {
        use kernels_gpu::gemm::GroupLayout;
        let grouped = |(m, n, k): (u32, u32, u32), layout, count| Fp8Problem {
            groups: Fp8Groups::grouped_as(layout, count),
            ..problem(m, n, k, Scaling::Block)
        };
        for (p, expected) in [
            (
                grouped((4096, 32768, 7168), GroupLayout::Contiguous, 4),
                "wgmma-fp8-block:9",
            ),
            (
                grouped((7168, 32768, 2048), GroupLayout::Contiguous, 8),
                "wgmma-fp8-block:9",
            ),
            (
                grouped((4096, 1024, 7168), GroupLayout::Masked, 1),
                "wgmma-fp8-block:11",
            ),
            (
                grouped((4096, 256, 7168), GroupLayout::Masked, 4),
                "wgmma-fp8-block:11",
            ),
            (
                Fp8Problem {
                    groups: Fp8Groups::batch(kernels_gpu::gemm::Batch {
                        count: 64,
                        stride_a: 4096 * 7168,
                        stride_b: 4096 * 7168,
                        stride_c: 4096 * 4096,
                    }),
                    ..problem(4096, 4096, 7168, Scaling::Block)
                },
                "wgmma-fp8-block:8",
            ),
        ] {
            let (v, tile) = auto_choice(&p);
            assert_eq!(
                registry::label(v, tile).unwrap(),
                expected,
                "{:?}",
                p.groups
            );
        }
    }

    #[test]
    fn only_the_block_kernel_and_cublaslt_run_block_scales() {
        let p = problem(256, 256, 256, Scaling::Block);
        let fp8 = registry::find("wgmma-fp8").unwrap();
        let refusal = plan(fp8, None, &p).err().unwrap().to_string();
        assert!(refusal.contains("use wgmma-fp8-block"), "{refusal}");
        let v4 = registry::find("v4").unwrap();
        let refusal = plan(v4, None, &p).err().unwrap().to_string();
        assert!(refusal.contains("no e4m3 version"), "{refusal}");
        let block = registry::find("wgmma-fp8-block").unwrap();
        assert!(plan(block, Some(3), &p).unwrap().0.promotes());
        assert!(
            !plan(fp8, None, &problem(256, 256, 256, Scaling::PerTensor))
                .unwrap()
                .0
                .promotes()
        );
    }
}
