//! Every registered variant × each of its dtypes (f32, f64, bf16, f16) × shapes × fresh random
//! inputs, run on the CPU emulator through the same host pipeline as the GPU (NaN-poisoned C
//! when beta = 0, f64 reference); every dtype a variant lacks must be refused. New variants are
//! covered without touching this file: it iterates the registry.
//!
//! What runs is [`tests::Sample`]'s: by default every kernel at its default tile over every
//! case, each other tile at the cases marked as crossing every tile edge, and a seeded quarter of
//! the rest (the seed is printed); `GEMM_FULL_SUITE=1` runs every tile at every case. The kernels
//! are shared out over several test functions, so that the test harness runs them on every core.
use gpu_gemm::problem::{Init, Problem, Transposes};
use gpu_gemm::registry::{self, Variant};
use gpu_gemm::run::{execute, Backend, Timing};
use kernels_gpu::gemm::Dtype;
use kernels_gpu::registry::Shape;
use tests::Sample;

/// (m, n, k, padding added to each leading dimension, alpha, beta)
type Case = (u32, u32, u32, u32, f64, f64);

/// The cases that cross every tile edge of the kernels they run on: [`CASES`]' 127 × 129 × 130
/// (partial tiles in m, n and k for every tile up to 128 × 128), and the first of
/// [`TMA_CASES`], [`HALF_TMA_CASES`] and [`TRANSPOSED_CASES`] (several tiles per emulated
/// multiprocessor, edges in m, n and k).
fn is_edge(case: &Case) -> bool {
    [
        CASES[4],
        TMA_CASES[0],
        HALF_TMA_CASES[0],
        TRANSPOSED_CASES[0],
    ]
    .contains(case)
}

/// Whether a case runs whatever the sample ([`tests::Sample`]): at the default tile
/// (`tile_index` 0) the edge cases and the small ones (at most 64³ multiply-adds, which cost
/// nothing), in every type and layout; at another tile the edge cases of the kernel's first type
/// and layout (`first`), so that every tile runs somewhere.
fn always_runs(tile_index: usize, case: &Case, first: bool) -> bool {
    let &(m, n, k, ..) = case;
    let small = u64::from(m) * u64::from(n) * u64::from(k) <= 64 * 64 * 64;
    if tile_index == 0 {
        is_edge(case) || small
    } else {
        first && is_edge(case)
    }
}

/// The first of f32, f64, bf16 and f16 that `kernel` computes: the type its other tiles run in.
fn first_dtype(kernel: &kernels_gpu::registry::Variant) -> Option<Dtype> {
    [Dtype::F32, Dtype::F64, Dtype::Bf16, Dtype::F16]
        .into_iter()
        .find(|d| kernel.dtypes.contains(d))
}

const CASES: &[Case] = &[
    (1, 1, 1, 0, 1.0, 0.0),
    (2, 3, 4, 0, -1.5, 0.0),
    (31, 33, 17, 3, 0.75, -2.0),
    (64, 64, 64, 0, 1.0, 0.5),
    (127, 129, 130, 5, 2.5, 0.0),
    (256, 128, 72, 8, -0.5, 1.25),
    // Edge tiles of the 64×64 and 128×128 kernels (m, k multiples of 4, as their 16-byte loads need).
    (132, 70, 44, 4, 1.0, 0.0),
    (128, 256, 40, 0, 0.5, 0.5),
];

/// More shapes for the TMA kernels (leading dimensions multiples of 4), which the cases above
/// mostly fail: edges in m, n and k, and more tiles than the emulator's 3 multiprocessors, so
/// that the persistent loop runs (each block takes several tiles, through the same ring).
/// The first is the edge case a sample always runs (264² × 68: 3 × 3 tiles of 128 × 128 for
/// 3 multiprocessors, k past two 32-wide slices), the second the same at more tiles.
const TMA_CASES: &[Case] = &[
    (264, 264, 68, 4, 1.5, -0.5),
    (300, 520, 100, 0, 1.5, -0.5),
    (129, 260, 36, 4, 1.0, 0.0),
];

/// The same for the TMA kernels in 2-byte types, whose leading dimensions must be multiples of
/// 8 (16 bytes), m, n and k free. The 16-bit kernel's tiles are 256 m × 128 n × 64 k: 304×520
/// is 2×5 tiles on the emulator's 3 multiprocessors (the persistent loop), with edges in m, n
/// and k; 136×264×40 has one k-step, shorter than a tile's, and padded leading dimensions; 1×1×1
/// one element; 33×17×65 edges everywhere and a tile that is mostly outside. Of [`CASES`], four
/// have such leading dimensions (64³, 256×128×72, 132×70×44, 128×256×40) and run too. The
/// first, 264² × 72, is the edge case a sample always runs: 2 × 3 tiles of 256 × 128 (3 × 2 of
/// 128 × 256) for 3 multiprocessors, each edge 8 past a tile, k 8 past a 64-wide slice; a third
/// of 304×520×104's work, which the sample runs one time in four.
const HALF_TMA_CASES: &[Case] = &[
    (264, 264, 72, 8, 1.5, -0.5),
    (304, 520, 104, 0, 1.5, -0.5),
    (136, 264, 40, 8, 1.0, 0.0),
    (1, 1, 1, 7, 1.0, 0.0),
    (33, 17, 65, 7, -0.5, 1.25),
];

fn seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// The shapes each layout other than N,N runs at, for every kernel that computes it: the
/// 16-bit TMA cases (edges in m, n and k, several tiles per emulated multiprocessor, padded
/// leading dimensions), stored as the layout says (A k × m for op(A) = Aᵀ, B n × k for
/// op(B) = Bᵀ).
const TRANSPOSED_CASES: &[Case] = &[
    (264, 264, 72, 8, 1.5, -0.5),
    (304, 520, 104, 8, 1.5, -0.5),
    (33, 17, 65, 7, -0.5, 1.25),
];

/// Every layout but N,N that `variant` computes, at [`TRANSPOSED_CASES`], in each of its dtypes.
fn run_transposed(variant: Variant, tile: Option<u32>, tile_index: usize) -> usize {
    let sample = Sample::from_env();
    let Variant::Kernel(kernel) = variant else {
        return 0;
    };
    let mut runs = 0;
    for transposes in variant
        .transposes()
        .into_iter()
        .filter(|&t| t != Transposes::NN)
    {
        for &dtype in kernel.dtypes.iter().filter(|d| !d.is_fp8()) {
            for (case, &(m, n, k, pad, alpha, beta)) in TRANSPOSED_CASES.iter().enumerate() {
                // A kernel of the model's layout alone runs its other tiles here.
                let first = !variant.transposes().contains(&Transposes::NN)
                    && transposes == variant.transposes()[0]
                    && Some(dtype) == first_dtype(kernel);
                let always = always_runs(tile_index, &TRANSPOSED_CASES[case], first);
                let test = format!("transposed {} {}", transposes.name(), dtype.name());
                if !sample.runs(&test, variant.name(), tile_index, case, always) {
                    continue;
                }
                let mut p = Problem {
                    shape: Shape {
                        m,
                        n,
                        k,
                        lda: 0,
                        ldb: 0,
                        ldc: m + pad,
                    },
                    transposes,
                    dtype,
                    alpha,
                    beta,
                    init: Init::Random,
                    seed: seed(),
                    epilogue: kernels_gpu::fused::Epilogue::NONE,
                    batch: kernels_gpu::gemm::Batch::ONE,
                    groups: kernels_gpu::gemm::GroupLayout::None,
                };
                p.shape.lda = p.stored_a().0 + pad;
                p.shape.ldb = p.stored_b().0 + pad;
                let what = format!(
                    "{} tile {tile:?} {} {} {m}x{n}x{k} ld+{pad} seed {}",
                    variant.name(),
                    transposes.name(),
                    dtype.name(),
                    p.seed
                );
                if (kernel.supports)(&p.shape, dtype).is_err() {
                    continue;
                }
                let timing = Timing::CHECK_ONCE;
                let report = execute(&Backend::Emulator, variant, tile, &p, timing)
                    .unwrap_or_else(|e| panic!("{what}: {e:#}"));
                let check = report.check.expect("checked run");
                assert!(check.passed(), "{what}: {}", check.summary());
                runs += 1;
            }
        }
    }
    runs
}

fn run_all(variant: Variant, tile: Option<u32>, tile_index: usize) -> usize {
    let Variant::Kernel(kernel) = variant else {
        unreachable!("only kernels are emulated")
    };
    let sample = Sample::from_env();
    let started = std::time::Instant::now();
    let mut runs = run_transposed(variant, tile, tile_index);
    // A kernel of the model's layout alone (`wgmma-swap`: T,N) ran its cases above; here it
    // must refuse N,N with the sentence that names what it computes.
    let computes_nn = variant.transposes().contains(&Transposes::NN);
    let has_16bit =
        matches!(variant, Variant::Kernel(k) if k.dtypes.iter().any(|d| d.bytes() == 2));
    assert!(
        computes_nn || runs > 0 || !has_16bit,
        "{} tile {tile:?}: computes no N,N and ran no case in its own layouts",
        variant.name()
    );
    let tma = matches!(variant, Variant::Kernel(k) if k.tma.is_some());
    for dtype in [Dtype::F32, Dtype::F64, Dtype::Bf16, Dtype::F16] {
        let runs_before = runs;
        let half_tma: &[Case] = if tma && dtype.bytes() == 2 {
            HALF_TMA_CASES
        } else {
            &[]
        };
        let cases = CASES
            .iter()
            .chain(if tma { TMA_CASES } else { &[] })
            .chain(half_tma);
        // The first case the kernel supports, run if the sample left this dtype with none.
        let mut first_supported = None;
        for (case, &(m, n, k, pad, alpha, beta)) in cases.enumerate() {
            let always = always_runs(
                tile_index,
                &(m, n, k, pad, alpha, beta),
                Some(dtype) == first_dtype(kernel),
            );
            let shape = Shape {
                m,
                n,
                k,
                lda: m + pad,
                ldb: k + pad,
                ldc: m + pad,
            };
            let p = Problem {
                shape,
                transposes: Transposes::NN,
                dtype,
                alpha,
                beta,
                init: Init::Random,
                seed: seed(),
                epilogue: kernels_gpu::fused::Epilogue::NONE,
                batch: kernels_gpu::gemm::Batch::ONE,
                groups: kernels_gpu::gemm::GroupLayout::None,
            };
            let what = format!(
                "{} tile {tile:?} {} {m}x{n}x{k} ld+{pad} alpha {alpha} beta {beta} seed {}",
                variant.name(),
                dtype.name(),
                p.seed
            );
            let timing = Timing::CHECK_ONCE;
            if !kernel.dtypes.contains(&dtype) {
                let e = execute(&Backend::Emulator, variant, tile, &p, timing)
                    .err()
                    .unwrap_or_else(|| panic!("{what}: ran a dtype it has no entry point for"));
                let message = format!("{e:#}");
                assert!(
                    message.contains(&format!("no {} version", dtype.name())),
                    "{what}: {message}"
                );
                continue;
            }
            if !computes_nn {
                let e = execute(&Backend::Emulator, variant, tile, &p, timing)
                    .err()
                    .unwrap_or_else(|| panic!("{what}: ran N,N, which it does not compute"));
                let message = format!("{e:#}");
                assert!(message.contains("computes"), "{what}: {message}");
                continue;
            }
            match (kernel.supports)(&shape, dtype) {
                Ok(()) => {
                    if !sample.runs(dtype.name(), variant.name(), tile_index, case, always) {
                        first_supported.get_or_insert((p, what));
                        continue;
                    }
                    runs += check_on_emulator(variant, tile, &p, &what);
                }
                Err(constraint) => {
                    // The host must refuse the shape with the registry's reason, not run it.
                    let e = execute(&Backend::Emulator, variant, tile, &p, timing)
                        .err()
                        .unwrap_or_else(|| panic!("{what}: ran a shape its registry row rejects"));
                    let message = format!("{e:#}");
                    assert!(
                        message.contains("does not support") && message.contains(&constraint),
                        "{what}: {message}"
                    );
                }
            }
        }
        // The default tile runs in every type it has, another tile in its first (the sample
        // may take it in others).
        let must_run = tile_index == 0 || Some(dtype) == first_dtype(kernel);
        if runs == runs_before && must_run {
            if let Some((p, what)) = first_supported {
                runs += check_on_emulator(variant, tile, &p, &what);
            }
        }
        if kernel.dtypes.contains(&dtype) && computes_nn && must_run {
            assert!(
                runs > runs_before,
                "{} tile {tile:?}: no case ran in {}",
                variant.name(),
                dtype.name()
            );
        }
    }
    println!(
        "{} tile {tile:?}: {runs} runs in {:.1} s",
        variant.name(),
        started.elapsed().as_secs_f64()
    );
    runs
}

/// One emulated, checked run; 1, for the count.
fn check_on_emulator(variant: Variant, tile: Option<u32>, p: &Problem, what: &str) -> usize {
    let report = execute(&Backend::Emulator, variant, tile, p, Timing::CHECK_ONCE)
        .unwrap_or_else(|e| panic!("{what}: {e:#}"));
    let check = report.check.expect("checked run");
    assert!(check.passed(), "{what}: {}", check.summary());
    1
}

/// The registry's kernels in `share` of `SHARES` parts (by position, so that the long Hopper
/// kernels, which sit together at the end of the registry, spread over the parts), every tile
/// of each; the number of checked runs.
fn run_share(share: usize) -> usize {
    let start = std::time::Instant::now();
    let mut runs = 0;
    let kernels = suite_kernels()
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % SHARES == share);
    for (_, variant) in kernels {
        runs += run_every_tile(variant);
    }
    println!(
        "share {share}: {runs} emulated runs passed in {:.1} s ({})",
        start.elapsed().as_secs_f64(),
        Sample::from_env().describe()
    );
    runs
}

/// The kernels this suite runs: every GPU kernel of the registry's table (cuBLAS runs on a GPU
/// only, the CPU variants in `cpu::tests`).
fn suite_kernels() -> Vec<Variant> {
    registry::all()
        .into_iter()
        .filter(|v| matches!(v, Variant::Kernel(_)))
        .collect()
}

/// A kernel at each of its tiles ([`run_all`]); the checked runs.
fn run_every_tile(variant: Variant) -> usize {
    let Variant::Kernel(kernel) = variant else {
        unreachable!("the suite's kernels")
    };
    if kernel.tiles.is_empty() {
        return run_all(variant, None, 0);
    }
    let tiles = kernel.tiles.iter().enumerate();
    tiles
        .map(|(i, &tile)| run_all(variant, Some(tile), i))
        .sum()
}

/// A kernel is one row of the registry's table: a row added to it (here a copy of `gemm64`'s
/// under another name, running gemm64's entry points) is in `--list`, among `auto`'s
/// candidates, in this suite, and runs checked, with no other edit anywhere.
#[test]
fn a_kernel_added_as_one_table_row_is_listed_chosen_from_and_run_by_the_suite() {
    let gemm64 = kernels_gpu::registry::find("gemm64").expect("gemm64 is registered");
    let fake: &'static kernels_gpu::registry::Variant =
        Box::leak(Box::new(kernels_gpu::registry::Variant {
            name: "fake-gemm64",
            summary: "a test's row: gemm64's kernel under another name",
            ..*gemm64
        }));
    registry::with_kernel_added(fake, || {
        assert!(
            registry::listing()
                .lines()
                .any(|l| l.starts_with("fake-gemm64 ")),
            "not in --list"
        );
        let p = Problem::packed(64, 64, 64, Dtype::F32);
        let candidates = gpu_gemm::auto::candidates(&p, gpu_gemm::auto::Math::Strict, None);
        assert!(
            candidates.iter().any(|v| v.name() == "fake-gemm64"),
            "not among auto's candidates"
        );
        let variant = registry::find("fake-gemm64").expect("found by name");
        assert!(
            suite_kernels().iter().any(|v| v.name() == variant.name()),
            "not in the suite"
        );
        assert!(run_every_tile(variant) > 0, "the suite ran nothing");
    });
    assert!(
        registry::find("fake-gemm64").is_err(),
        "the row outlived the test"
    );
}

/// How many test functions the kernels are shared out over.
const SHARES: usize = 8;

/// One test function per share, so that the harness runs them on every core.
macro_rules! shares {
    ($($name:ident = $share:literal),* $(,)?) => {$(
        #[test]
        fn $name() {
            assert!(run_share($share) > 0);
        }
    )*};
}

shares!(
    every_variant_matches_the_reference_on_the_emulator_0 = 0,
    every_variant_matches_the_reference_on_the_emulator_1 = 1,
    every_variant_matches_the_reference_on_the_emulator_2 = 2,
    every_variant_matches_the_reference_on_the_emulator_3 = 3,
    every_variant_matches_the_reference_on_the_emulator_4 = 4,
    every_variant_matches_the_reference_on_the_emulator_5 = 5,
    every_variant_matches_the_reference_on_the_emulator_6 = 6,
    every_variant_matches_the_reference_on_the_emulator_7 = 7,
);
