//! Every registered variant × f32, f64 × shapes × fresh random inputs, run on the CPU emulator
//! through the same host pipeline as the GPU (NaN-poisoned C when beta = 0, f64 reference).
//! New variants are covered without touching this file: it iterates the registry.
use host::problem::{Init, Problem};
use host::registry::{self, Variant};
use host::run::{execute, Backend, Timing};
use kernels_gpu::gemm::Dtype;
use kernels_gpu::registry::Shape;

/// (m, n, k, padding added to each leading dimension, alpha, beta)
const CASES: &[(u32, u32, u32, u32, f64, f64)] = &[
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
const TMA_CASES: &[(u32, u32, u32, u32, f64, f64)] =
    &[(300, 520, 100, 0, 1.5, -0.5), (129, 260, 36, 4, 1.0, 0.0)];

fn seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

fn run_all(variant: Variant, tile: Option<u32>) -> usize {
    let mut runs = 0;
    let tma = matches!(variant, Variant::Kernel(k) if k.tma.is_some());
    let cases = CASES.iter().chain(if tma { TMA_CASES } else { &[] });
    for dtype in [Dtype::F32, Dtype::F64] {
        for &(m, n, k, pad, alpha, beta) in cases.clone() {
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
                dtype,
                alpha,
                beta,
                init: Init::Random,
                seed: seed(),
            };
            let what = format!(
                "{} tile {tile:?} {} {m}x{n}x{k} ld+{pad} alpha {alpha} beta {beta} seed {}",
                variant.name(),
                dtype.name(),
                p.seed
            );
            let timing = Timing {
                warmup: 0,
                iters: 1,
                budget_ms: f64::INFINITY,
                check: true,
            };
            let Variant::Kernel(kernel) = variant else {
                unreachable!("only kernels are emulated")
            };
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
            match (kernel.supports)(&shape, dtype) {
                Ok(()) => {
                    let report = execute(&Backend::Emulator, variant, tile, &p, timing)
                        .unwrap_or_else(|e| panic!("{what}: {e:#}"));
                    let check = report.check.expect("checked run");
                    assert!(check.passed(), "{what}: {}", check.summary());
                    runs += 1;
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
    }
    runs
}

#[test]
fn every_variant_matches_the_reference_on_the_emulator() {
    let start = std::time::Instant::now();
    let mut runs = 0;
    for variant in registry::all() {
        let Variant::Kernel(kernel) = variant else {
            continue; // cuBLAS: GPU only; the CPU variants: host's own tests (cpu::tests)
        };
        if kernel.tiles.is_empty() {
            runs += run_all(variant, None);
        } else {
            for &tile in kernel.tiles {
                runs += run_all(variant, Some(tile));
            }
        }
    }
    println!(
        "{runs} emulated runs passed in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    assert!(
        runs >= kernels_gpu::registry::ALL.len() * 2,
        "too few runs: {runs}"
    );
}
