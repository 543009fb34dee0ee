//! Every variant `--variant` accepts: the GPU kernels of `kernels_gpu::registry`, the CPU
//! variants of [`crate::cpu::registry`], cuBLAS as the yardstick, and `auto` and `tuned` under
//! a precision contract ([`Math`]).
use crate::cpu::CpuVariant;
use crate::problem::Transposes;
use anyhow::{bail, Result};
use kernels_gpu::gemm::{Arithmetic, Dtype};
pub use kernels_gpu::registry::{Shape, Variant as KernelVariant};

/// Every element type: what cuBLAS's default math and `auto` run.
pub const ALL_DTYPES: &[Dtype] = &[Dtype::F32, Dtype::F64, Dtype::Bf16, Dtype::F16];

/// N,N alone: the CPU variants, whose loops walk A's columns contiguously.
const NN_ONLY: &[Transposes] = &[Transposes::NN];

/// cuBLAS's math mode: the two yardsticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CublasMath {
    /// `CUBLAS_DEFAULT_MATH`: FP32 SGEMM on the CUDA cores; DGEMM (FP64 tensor cores on an H100);
    /// for bf16 and f16 `cublasGemmEx` with f32 accumulation (`CUBLAS_COMPUTE_32F`), on the
    /// tensor cores.
    Default,
    /// `CUBLAS_TF32_TENSOR_OP_MATH`: SGEMM on the TF32 tensor cores (inputs rounded to TF32).
    Tf32,
    /// `cublasGemmGroupedBatchedEx` (bf16, f16; default math): a grouped GEMM's groups in one
    /// call, a group of one problem each (a strided batch: one group of all its members; one
    /// GEMM: a group of one). The grouped yardstick beside `cublas`, whose call per group is
    /// what a program without a grouped GEMM does.
    Grouped,
}

/// The precision contract of `auto` (the command line's `--math`, the library's
/// `Algorithm::Auto`): which arithmetic it may choose, as cuBLAS's compute types let a caller
/// state what precision it accepts. The contract relaxes f32 only: f64, bf16 and f16 always run
/// in their own arithmetic (bf16 and f16 with f32 accumulation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Math {
    /// Fused multiply-adds in the operand type, the inputs used exactly (`CUBLAS_COMPUTE_32F`
    /// without TF32): the CUDA-core kernels in f32
    #[default]
    Strict,
    /// Any kernel whose error is at most native SGEMM's, relative to Σ|a·b| of each element,
    /// for every normal f32 input: Hopper's 3xTF32 `wgmma` (which scales rows and columns into
    /// range first), or a strict one
    #[cfg_attr(feature = "clap", value(name = "fp32-accurate"))]
    Fp32Accurate,
    /// The TF32 tensor cores (inputs cut to 10 mantissa bits, `CUBLAS_COMPUTE_32F_FAST_TF32`),
    /// or anything more accurate when it is faster
    Tf32,
}

impl Math {
    /// Every contract, strictest first.
    pub const ALL: [Math; 3] = [Math::Strict, Math::Fp32Accurate, Math::Tf32];

    /// As the command line and the auto table spell it.
    pub const fn name(self) -> &'static str {
        match self {
            Math::Strict => "strict",
            Math::Fp32Accurate => "fp32-accurate",
            Math::Tf32 => "tf32",
        }
    }

    /// The contract spelled `name`.
    pub fn parse(name: &str) -> Option<Math> {
        Math::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Whether a kernel computing in `arithmetic` keeps this contract in `dtype`.
    pub fn admits(self, arithmetic: Arithmetic, dtype: Dtype) -> bool {
        match (arithmetic, self) {
            (Arithmetic::Native, _) => true,
            (_, Math::Strict) => false,
            (_, _) if dtype != Dtype::F32 => false,
            (Arithmetic::Tf32x3, _) => true,
            (Arithmetic::Tf32, m) => m == Math::Tf32,
        }
    }
}

/// What runs under a name.
#[derive(Clone, Copy)]
pub enum Variant {
    /// A GPU kernel of `kernels_gpu::registry`, on the backend (GPU or emulator).
    Kernel(&'static KernelVariant),
    /// Runs on the host CPU whatever the backend (`crate::cpu`).
    Cpu(&'static CpuVariant),
    /// `cublasSgemm`/`cublasDgemm` (`cublasGemmEx` in bf16 and f16) on the same buffers, in a
    /// math mode: the yardstick (GPU only).
    Cublas(CublasMath),
    /// The fastest kernel for the shape and dtype that keeps a precision contract, from a
    /// measured table ([`crate::auto`]); `--variant auto` is `Auto(Math::Strict)`.
    Auto(Math),
    /// The fastest of `auto`'s candidates timed on this GPU, driver and shape, once, then read
    /// from a file ([`crate::tuning`]). It times on the caller's buffers, so it runs through the
    /// library's call (`Algorithm::Tuned`); `host --variant tuned` makes that call first and
    /// then runs its choice.
    Tuned(Math),
    /// `auto`'s kernel without the problem's fused epilogue, then the epilogue as a kernel of
    /// its own over C ([`kernels_gpu::variants::bias_activation`]): what the fused epilogue
    /// saves is measured against it.
    Unfused(Math),
}

impl Variant {
    /// The name `--variant` takes.
    pub fn name(&self) -> &'static str {
        match self {
            Variant::Kernel(k) => k.name,
            Variant::Cpu(c) => c.name,
            Variant::Cublas(CublasMath::Default) => "cublas",
            Variant::Cublas(CublasMath::Tf32) => "cublas-tf32",
            Variant::Cublas(CublasMath::Grouped) => "cublas-grouped",
            Variant::Auto(_) => "auto",
            Variant::Tuned(_) => "tuned",
            Variant::Unfused(_) => "unfused",
        }
    }

    /// One line for `--list`.
    pub fn summary(&self) -> &'static str {
        match self {
            Variant::Kernel(k) => k.summary,
            Variant::Cpu(c) => c.summary,
            Variant::Cublas(CublasMath::Default) => "cuBLAS (cublasSgemm/cublasDgemm, default math mode: no TF32; bf16/f16: cublasGemmEx with f32 accumulation), the yardstick (GPU only)",
            Variant::Cublas(CublasMath::Tf32) => "cuBLAS SGEMM with CUBLAS_TF32_TENSOR_OP_MATH: the TF32 tensor-core yardstick (GPU only, f32)",
            Variant::Cublas(CublasMath::Grouped) => "cuBLAS's grouped GEMM (cublasGemmGroupedBatchedEx, bf16/f16, f32 accumulation): a grouped GEMM's groups in one call, beside cublas's call per group (GPU only; any other problem as one group)",
            Variant::Auto(_) => "the fastest kernel for the shape and dtype, from a table measured on an H100 (gpu-gemm/src/auto-table.csv): in the dtype's own arithmetic, or with --math fp32-accurate (3xTF32) or tf32 in f32; in e4m3 wgmma-fp8 (--scaling tensor) or wgmma-fp8-block (block); the report names the choice",
            Variant::Tuned(_) => "auto's candidates under the same contract (--math), every tile, timed on this GPU for the shape the first time and stored in a tuning cache (--tuning-cache) keyed by GPU, driver, build and shape; later runs read it; the report names the choice and whether it was cached (on the emulator: auto's choice, not tuned)",
            Variant::Unfused(_) => "with --epilogue (bf16, f16): auto's kernel without the epilogue, then the bias and activation as a kernel of their own over C (gemm_bias_activation): the baseline of the fused epilogue",
        }
    }

    /// The element types it runs: the CPU variants compute on the host in f32 and f64 only;
    /// cuBLAS's default math and `auto` in every type; cuBLAS TF32 in f32.
    pub fn dtypes(&self) -> &'static [Dtype] {
        match self {
            Variant::Kernel(k) => k.dtypes,
            Variant::Cpu(_) => kernels_gpu::registry::BOTH_DTYPES,
            Variant::Cublas(CublasMath::Default) | Variant::Auto(_) | Variant::Tuned(_) => {
                ALL_DTYPES
            }
            Variant::Cublas(CublasMath::Tf32) => &[Dtype::F32],
            Variant::Cublas(CublasMath::Grouped) | Variant::Unfused(_) => {
                &[Dtype::Bf16, Dtype::F16]
            }
        }
    }

    /// How it computes, which sets the tolerance of its check (`auto`: as its choice, which
    /// [`crate::run::plan`] resolves; `Native` here).
    pub fn arithmetic(&self) -> Arithmetic {
        match self {
            Variant::Kernel(k) => k.arithmetic,
            Variant::Cpu(_)
            | Variant::Cublas(CublasMath::Default)
            | Variant::Cublas(CublasMath::Grouped)
            | Variant::Auto(_)
            | Variant::Tuned(_)
            | Variant::Unfused(_) => Arithmetic::Native,
            Variant::Cublas(CublasMath::Tf32) => Arithmetic::Tf32,
        }
    }

    /// The (op(A), op(B)) it computes: a kernel's layouts (its registry row: the kernels read A
    /// and B in the order their tiles and loads were designed for), N,N for the CPU variants;
    /// all four for cuBLAS and for `auto`, which refuses a combination when no kernel of the
    /// course computes it.
    pub fn transposes(&self) -> Vec<Transposes> {
        match self {
            Variant::Kernel(k) => k.layouts.iter().map(|&l| Transposes::from(l)).collect(),
            Variant::Cpu(_) => NN_ONLY.to_vec(),
            Variant::Cublas(_) | Variant::Auto(_) | Variant::Tuned(_) | Variant::Unfused(_) => {
                Transposes::ALL.to_vec()
            }
        }
    }

    /// `Err` with the sentence that names the variant, the combination asked for and the ones
    /// it computes, when it does not compute `t`.
    pub fn check_transposes(&self, t: Transposes) -> Result<()> {
        let supported = self.transposes();
        if supported.contains(&t) {
            return Ok(());
        }
        let computes = match supported.as_slice() {
            [one] => format!("{} only ({})", one.formula(), one.letters()),
            many => format!(
                "only {}",
                many.iter()
                    .map(|t| t.letters())
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        };
        bail!(
            "{} computes {computes}; asked for {} ({})",
            self.name(),
            t.letters(),
            t.formula()
        )
    }

    /// Whether it runs a strided batch in one launch, in `dtype` and the layout `transposes`:
    /// in bf16 and f16 the Hopper kernels, whose persistent walk goes over the tiles of every
    /// member ([`kernels_gpu::pipeline::schedule`]), but split-k (its workspace is one problem's)
    /// and `wgmma-stream-k` (`TmaOperands::batched`); in f32 the Hopper TF32 and 3xTF32 kernels
    /// (`wgmma-tf32`, `wgmma-3xtf32`: the same walk); in f32 and f64 the kernels
    /// [`kernels_gpu::registry::GRID_BATCHED`] names, a layer of the grid per member (a twin
    /// entry point, `kernels_gpu::entry`); and cuBLAS (`cublas…StridedBatched`). `auto` and
    /// `tuned` choose among the kernels. At `tile`, or with `None` at the default tile (where
    /// some of a kernel's tiles walk members and others do not: `wgmma-swap`'s grouped ones).
    pub fn runs_batched(&self, dtype: Dtype, transposes: Transposes, tile: Option<u32>) -> bool {
        match self {
            // The Hopper kernels walk the members' tiles (their tensor maps have a layer per
            // member); the others launch a layer of their grid per member.
            Variant::Kernel(k)
                if k.target == kernels_gpu::registry::Target::Sm90a
                    && (dtype.is_16bit() || dtype == Dtype::F32) =>
            {
                let layout = transposes.into();
                k.dtypes.contains(&dtype)
                    && k.reduce.is_none()
                    && k.tma.is_some_and(|t| {
                        t(tile.or(k.tiles.first().copied()).unwrap_or(1), layout).batched
                    })
            }
            Variant::Kernel(k) => matches!(dtype, Dtype::F32 | Dtype::F64) && k.grid_batched(),
            Variant::Cublas(_) => true,
            Variant::Auto(_) | Variant::Tuned(_) => !dtype.is_fp8(),
            Variant::Cpu(_) | Variant::Unfused(_) => false,
        }
    }

    /// Whether it runs a grouped GEMM in one launch, in `dtype` and the layout `transposes`:
    /// the 16-bit Hopper kernels without clusters along n whose walk finds each tile's group
    /// (`TmaOperands::grouped`: `wgmma-16bit`, `wgmma-tma-store:5`, `wgmma-layouts:2` and `:3`): at
    /// `tile`, or with `None` at one of its tiles; `auto`, and cuBLAS as the yardstick (a call
    /// per group). (e4m3's grouped kernel, `wgmma-fp8-block`, is planned by
    /// [`crate::fp8::run`].)
    pub fn runs_grouped(&self, dtype: Dtype, transposes: Transposes, tile: Option<u32>) -> bool {
        match self {
            Variant::Kernel(k) => {
                let tiles: &[u32] = match &tile {
                    Some(tile) => std::slice::from_ref(tile),
                    None if k.tiles.is_empty() => &[1],
                    None => k.tiles,
                };
                dtype.is_16bit()
                    && k.dtypes.contains(&dtype)
                    && k.target == kernels_gpu::registry::Target::Sm90a
                    && k.reduce.is_none()
                    && k.tma.is_some_and(|t| {
                        tiles.iter().any(|&tile| t(tile, transposes.into()).grouped)
                    })
            }
            Variant::Cublas(_) => dtype.is_16bit(),
            Variant::Auto(_) => dtype.is_16bit(),
            Variant::Cpu(_) | Variant::Unfused(_) | Variant::Tuned(_) => false,
        }
    }

    /// Whether it is a cuBLAS yardstick.
    pub fn is_cublas(&self) -> bool {
        matches!(self, Variant::Cublas(_))
    }

    /// The values `--tile` accepts, the default first; empty when there is no parameter.
    pub fn tiles(&self) -> &'static [u32] {
        match self {
            Variant::Kernel(k) => k.tiles,
            Variant::Cpu(c) => c.tiles,
            Variant::Cublas(_) | Variant::Auto(_) | Variant::Tuned(_) | Variant::Unfused(_) => &[],
        }
    }
}

thread_local! {
    /// Rows a caller added to the GPU kernels' table on this thread ([`with_kernel_added`]).
    static ADDED: std::cell::RefCell<Vec<&'static KernelVariant>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` with `kernel` as one more row of the GPU kernels' table
/// (`kernels_gpu::registry::ALL`), on this thread: every query of the table — [`all`],
/// [`find`], [`listing`], [`kernels_where`], `auto`'s candidates, what `plan` runs — sees it.
/// How a test shows that a kernel is one registry entry and no other edit.
pub fn with_kernel_added<R>(kernel: &'static KernelVariant, f: impl FnOnce() -> R) -> R {
    ADDED.with(|added| added.borrow_mut().push(kernel));
    // Taken out again on the way out, a panic's included, so that one test leaks into no other.
    struct Remove;
    impl Drop for Remove {
        fn drop(&mut self) {
            ADDED.with(|added| added.borrow_mut().pop());
        }
    }
    let _remove = Remove;
    f()
}

/// The GPU kernels' table: `kernels_gpu::registry::ALL`, in course order, and the rows added
/// on this thread ([`with_kernel_added`]).
pub fn kernels() -> Vec<&'static KernelVariant> {
    let added = ADDED.with(|added| added.borrow().clone());
    kernels_gpu::registry::ALL.iter().chain(added).collect()
}

/// Every variant, in course order.
pub fn all() -> Vec<Variant> {
    let kernels = kernels().into_iter().map(Variant::Kernel);
    kernels
        .chain([
            Variant::Auto(Math::Strict),
            Variant::Tuned(Math::Strict),
            Variant::Unfused(Math::Strict),
        ])
        .chain(crate::cpu::registry::ALL.iter().map(Variant::Cpu))
        .chain([
            Variant::Cublas(CublasMath::Default),
            Variant::Cublas(CublasMath::Tf32),
            Variant::Cublas(CublasMath::Grouped),
        ])
        .collect()
}

/// The variant called `name`, or an error that lists them all.
pub fn find(name: &str) -> Result<Variant> {
    match all().into_iter().find(|v| v.name() == name) {
        Some(v) => Ok(v),
        None => bail!(
            "unknown variant `{name}`; the variants are: {} (`--list` describes them)",
            all()
                .iter()
                .map(|v| v.name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The `--list` text: one line per variant.
pub fn listing() -> String {
    let width = all().iter().map(|v| v.name().len()).max().unwrap_or(0);
    all()
        .iter()
        .map(|v| {
            let mut extra = String::new();
            if !v.tiles().is_empty() {
                extra += &format!(" [--tile {}]", join(v.tiles(), "|"));
            }
            // N,N goes without saying; any other combination a variant computes is named
            // (`auto`'s are its kernels').
            let chooses = matches!(
                v,
                Variant::Auto(_) | Variant::Tuned(_) | Variant::Unfused(_)
            );
            if v.transposes() != NN_ONLY && !chooses {
                let names: Vec<String> = v.transposes().iter().map(|t| t.name()).collect();
                extra += &format!(" [--transa/--transb {}]", names.join("|"));
            }
            // Which SIMD path this CPU takes, as the reports' entry names will say.
            if let Variant::Cpu(c) = v {
                extra += &format!(" [{}_*]", c.entry_name(Dtype::F32).trim_end_matches("_f32"));
            }
            format!("{:width$}  {}{extra}\n", v.name(), v.summary())
        })
        .collect()
}

/// Resolves `--tile` for a variant: its default when absent, an error when not accepted, 0
/// for a variant without a tile parameter.
pub fn resolve_tile(v: Variant, tile: Option<u32>) -> Result<u32> {
    match (v.tiles(), tile) {
        ([], None) => Ok(0),
        ([], Some(t)) => bail!(
            "variant `{}` has no tile parameter (got --tile {t})",
            v.name()
        ),
        ([default, ..], None) => Ok(*default),
        (tiles, Some(t)) if tiles.contains(&t) => Ok(t),
        (tiles, Some(t)) => bail!(
            "variant `{}` does not take --tile {t}; it accepts {}",
            v.name(),
            join(tiles, ", ")
        ),
    }
}

/// A variant as reports name it: `best:1` with its resolved tile, or the bare name for one
/// without a tile parameter (`gemm128`, `cublas`).
pub fn label(v: Variant, tile: Option<u32>) -> Result<String> {
    Ok(if v.tiles().is_empty() {
        v.name().to_string()
    } else {
        format!("{}:{}", v.name(), resolve_tile(v, tile)?)
    })
}

/// The kernels for which `holds(kernel, tile)` is true, named as `--variant` and `--tile` take
/// them (`wgmma-layouts:2, :3; wgmma-16bit`; a kernel whose every tile holds goes by its name
/// alone), or `none`. Refusals name what does run from here, so that a new kernel appears in
/// them by its registry entry alone, not through a list kept by hand in a message.
pub fn kernels_where(holds: impl Fn(Variant, Option<u32>) -> bool) -> String {
    let mut named = Vec::new();
    for kernel in kernels() {
        let variant = Variant::Kernel(kernel);
        if kernel.tiles.is_empty() {
            if holds(variant, None) {
                named.push(kernel.name.to_string());
            }
            continue;
        }
        let tiles: Vec<u32> = kernel
            .tiles
            .iter()
            .copied()
            .filter(|&t| holds(variant, Some(t)))
            .collect();
        match tiles.as_slice() {
            [] => {}
            all if all.len() == kernel.tiles.len() => named.push(kernel.name.to_string()),
            [first, rest @ ..] => {
                let mut text = format!("{}:{first}", kernel.name);
                for t in rest {
                    text += &format!(", :{t}");
                }
                named.push(text);
            }
        }
    }
    if named.is_empty() {
        "none".to_string()
    } else {
        named.join("; ")
    }
}

fn join(tiles: &[u32], separator: &str) -> String {
    tiles
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(separator)
}

/// Refuses a strided batch where it would not run as one: what runs batched is
/// [`Variant::runs_batched`]'s, with the TMA's rule that each member starts 16 bytes after the
/// last (the batch strides are the layers' strides of the tensor maps). At `tile`, or the
/// default tile.
pub fn check_batch(variant: Variant, tile: Option<u32>, p: &crate::problem::Problem) -> Result<()> {
    let b = &p.batch;
    if !b.is_batched() {
        return Ok(());
    }
    if !variant.runs_batched(p.dtype, p.transposes, tile) {
        bail!(
            "{} has no strided batched form in {} {}: a batch runs in one launch there on auto, \
             on cuBLAS, and on {}",
            variant.name(),
            p.dtype.name(),
            p.transposes.letters(),
            kernels_where(|v, t| v.runs_batched(p.dtype, p.transposes, t))
        );
    }
    if variant.is_cublas() && !p.epilogue.is_none() {
        bail!("cuBLAS's yardstick for a fused epilogue (cuBLASLt) runs one problem, not a batch");
    }
    if matches!(variant, Variant::Kernel(k) if k.grid_batched()) && b.count > 65_535 {
        bail!(
            "{} members: the f32 and f64 kernels launch a layer of their grid per member, and a grid has at most 65 535",
            b.count
        );
    }
    if matches!(variant, Variant::Kernel(k) if k.tma.is_some()) {
        if let Some((name, stride, bytes)) = p.batch_stride_off_tma() {
            bail!(
                "the batch stride of {name}, {stride} elements, is not a multiple of 16 bytes: the TMA engine steps from member to member by it (a multiple of {} elements)",
                16 / bytes
            );
        }
        // A lone TMA load reads overlapping layers as a pointer walk would (H100), but no GEMM
        // reading them has been checked on the GPU yet (`docs/perf-notes/hopper-16bit.md`,
        // 2026-12-07). `auto` copies such members apart first.
        if let Some((name, stride, matrix)) = p.overlapping_input() {
            let what = if stride == 0 {
                format!("0: one {name} that every member multiplies")
            } else {
                format!("{stride} elements, less than one of its matrices ({matrix})")
            };
            bail!(
                "the batch stride of {name} is {what}: {} reads each member's {name} as a layer \
                 of a TMA tensor map, and reading layers that overlap is not checked on the GPU \
                 yet (auto copies the members apart first)",
                variant.name()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_variant_lists_the_known_ones() {
        let e = find("v99").err().unwrap().to_string();
        assert!(
            e.contains("unknown variant `v99`") && e.contains("v4"),
            "{e}"
        );
        assert_eq!(find("v4").unwrap().name(), "v4");
        assert!(matches!(
            find("cublas"),
            Ok(Variant::Cublas(CublasMath::Default))
        ));
        assert!(matches!(
            find("cublas-tf32"),
            Ok(Variant::Cublas(CublasMath::Tf32))
        ));
    }

    #[test]
    fn tile_parameter_is_checked() {
        let tiled = find("tiled").unwrap();
        assert_eq!(resolve_tile(tiled, None).unwrap(), tiled.tiles()[0]);
        assert_eq!(resolve_tile(tiled, Some(8)).unwrap(), 8);
        assert!(resolve_tile(tiled, Some(3))
            .unwrap_err()
            .to_string()
            .contains("accepts"));
        assert!(resolve_tile(find("v1").unwrap(), Some(8)).is_err());
        assert!(resolve_tile(Variant::Cublas(CublasMath::Default), Some(8)).is_err());
    }

    #[test]
    fn cpu_variants_are_found_and_take_block_sizes() {
        let blocked = find("cpu-blocked").unwrap();
        assert!(matches!(blocked, Variant::Cpu(_)));
        assert_eq!(resolve_tile(blocked, None).unwrap(), 64);
        for t in [8, 2048] {
            assert_eq!(resolve_tile(blocked, Some(t)).unwrap(), t);
        }
        assert!(resolve_tile(blocked, Some(48)).is_err());
        assert_eq!(resolve_tile(find("cpu-naive").unwrap(), None).unwrap(), 0);
        assert!(resolve_tile(find("cpu-simd").unwrap(), Some(64)).is_err());
    }

    #[test]
    fn the_16_bit_types_are_offered_where_they_run() {
        for d in [Dtype::Bf16, Dtype::F16] {
            assert!(find("wgmma-16bit").unwrap().dtypes().contains(&d));
            assert!(find("cublas").unwrap().dtypes().contains(&d));
            assert!(find("auto").unwrap().dtypes().contains(&d));
            assert!(!find("cublas-tf32").unwrap().dtypes().contains(&d));
            assert!(!find("cpu-simd").unwrap().dtypes().contains(&d));
            assert!(!find("v4").unwrap().dtypes().contains(&d));
        }
    }

    #[test]
    fn every_kernel_computes_some_layout_and_says_which() {
        for v in all() {
            assert!(!v.transposes().is_empty(), "{}", v.name());
        }
        assert_eq!(
            find("wgmma-fp8").unwrap().transposes(),
            [Transposes::ALL[1]],
            "FP8 is TN only"
        );
        assert_eq!(find("v4").unwrap().transposes(), [Transposes::NN]);
        assert_eq!(find("cublas").unwrap().transposes(), Transposes::ALL);
        assert!(find("cpu-simd")
            .unwrap()
            .check_transposes(Transposes::ALL[3])
            .unwrap_err()
            .to_string()
            .contains("cpu-simd computes op(A)=A, op(B)=B only (N,N); asked for T,T"));
    }

    #[test]
    fn listing_has_every_variant() {
        let text = listing();
        for v in all() {
            assert!(text.contains(v.name()));
        }
        assert!(text.contains("--tile 16|1|2|4|8|32"), "{text}");
        assert!(text.contains("[--transa/--transb NN|TN|NT|TT]"), "{text}");
        assert!(
            text.contains("[--tile 64|8|16|32|128|256|512|1024|2048]"),
            "{text}"
        );
        let path = crate::cpu::simd::Path::detect().name();
        assert!(text.contains(&format!("[cpu_simd_{path}_*]")), "{text}");
    }
}
