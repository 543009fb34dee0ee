//! The FP8 kernels (tensor cores, chapter 4) on the emulator: both against the f64 reference of
//! their dequantised operands at shapes that cross every tile edge, in both scalings; and the
//! planted bugs the chapter names, each caught by the check.
use gpu_gemm::fp8::quantize::{Format, Fp8Problem, Scaling};
use gpu_gemm::fp8::run::{execute_many, kernel_scaling};
use gpu_gemm::problem::Init;
use gpu_gemm::registry;
use gpu_gemm::run::{Backend, Clock, Report, Timing};
use kernels_gpu::registry::Shape;

const ONCE: Timing = Timing {
    warmup: 0,
    iters: 0,
    budget_ms: 0.0,
    check: true,
    cold: false,
    clock: Clock::Events,
};

/// m = 264 and n = 264 leave partial tiles of both kernels (256 × 128 and 128 × 128) in m and n
/// (and, along n, a block of a cluster of two past C's edge, which shares A but stores nothing),
/// k = 200 a partial slice and a partial block of scales; lda and ldb are padded (16-byte rows).
fn problem(scaling: Scaling, outliers: bool) -> Fp8Problem {
    Fp8Problem {
        b_format: gpu_gemm::fp8::quantize::Format::E4m3,
        shape: Shape {
            m: 264,
            n: 264,
            k: 200,
            lda: 208,
            ldb: 224,
            ldc: 272,
        },
        alpha: 1.5,
        beta: -0.5,
        scaling,
        init: Init::Random,
        seed: 5,
        outliers,
        epilogue: kernels_gpu::fused::Epilogue::NONE,
        groups: gpu_gemm::launch::Fp8Groups::NONE,
    }
}

fn run(name: &str, tile: Option<u32>, p: &Fp8Problem) -> Report {
    let variant = registry::find(name).unwrap();
    execute_many(&Backend::Emulator, &[(variant, tile)], p, ONCE, |_| {})
        .pop()
        .unwrap()
        .unwrap_or_else(|e| panic!("{name}: {e:#}"))
}

/// Every e4m3 kernel of the registry in every tile, in the scaling it reads (a block-scaled one
/// also per tensor, its scales broadcast), each run with the next of four fused epilogues in
/// turn: none, a bias per row with GELU and the amax, a bias per column with SiLU and the amax,
/// ReLU alone. The reference applies the same epilogue in f64, and the amax is held to D's.
#[test]
fn every_fp8_kernel_matches_the_reference_in_every_configuration() {
    use kernels_gpu::fused::{Activation, Bias, Epilogue};
    let epilogues = [
        Epilogue::NONE,
        Epilogue::new(Bias::PerRow, Activation::Gelu).with_amax(),
        Epilogue::new(Bias::PerColumn, Activation::Silu).with_amax(),
        Epilogue::new(Bias::None, Activation::Relu),
    ];
    let mut turn = epilogues.iter().cycle();
    let cases = kernels_gpu::registry::ALL
        .iter()
        .filter(|k| k.dtypes.contains(&kernels_gpu::gemm::Dtype::E4m3))
        .flat_map(|k| {
            let scaling = kernel_scaling(k.name).expect("every e4m3 kernel reads a scaling");
            let also = (scaling == Scaling::Block).then_some(Scaling::PerTensor);
            [Some(scaling), also]
                .into_iter()
                .flatten()
                .map(move |s| (k.name, s))
        });
    // The default tile of every kernel, and the sample's share of the others (tests::Sample;
    // `GEMM_FULL_SUITE=1`: every tile). The one problem crosses every tile edge.
    let sample = tests::Sample::from_env();
    for (name, scaling) in cases {
        let tiles = registry::find(name).unwrap().tiles();
        let test = format!("fp8 {scaling:?}");
        for tile in sample.tiles(&test, name, tiles) {
            let epilogue = *turn.next().unwrap();
            let p = Fp8Problem {
                epilogue,
                ..problem(scaling, true)
            };
            let report = run(name, Some(tile), &p);
            let check = report.check.as_ref().unwrap();
            println!(
                "{} {scaling:?} {}: relative error {:.2e}",
                report.variant,
                gpu_gemm::problem::epilogue_name(epilogue),
                check.relative_frobenius
            );
            assert!(report.passed(), "{} {scaling:?}: {check:?}", report.variant);
            assert_eq!(check.amax.is_some(), epilogue.amax(), "{}", report.variant);
        }
    }
}

/// B in e5m2 (`--dtype e4m3-e5m2`): every kernel that reads it, in every tile, and `auto`,
/// against the f64 reference of the dequantised operands; a kernel without e5m2 entry points
/// refuses the problem by name.
#[test]
fn every_e5m2_kernel_matches_the_reference_and_the_others_refuse_it() {
    let p = Fp8Problem {
        b_format: Format::E5m2,
        ..problem(Scaling::PerTensor, true)
    };
    let e5m2 = kernels_gpu::gemm::Dtype::E4m3E5m2;
    let kernels: Vec<_> = kernels_gpu::registry::ALL
        .iter()
        .filter(|k| k.dtypes.contains(&e5m2))
        .collect();
    assert!(!kernels.is_empty(), "no kernel reads e5m2");
    let sample = tests::Sample::from_env();
    for k in kernels {
        for tile in sample.tiles("e5m2", k.name, k.tiles) {
            let report = run(k.name, Some(tile), &p);
            let check = report.check.as_ref().unwrap();
            println!(
                "{}: relative error {:.2e}",
                report.variant, check.relative_frobenius
            );
            assert!(report.passed(), "{}: {check:?}", report.variant);
            assert!(report.entry.ends_with("_e4m3_e5m2"), "{}", report.entry);
        }
    }
    let auto = run("auto", None, &p);
    assert!(
        auto.passed() && auto.entry.ends_with("_e4m3_e5m2"),
        "{}",
        auto.entry
    );
    let variant = registry::find("wgmma-fp8-narrow").unwrap();
    let error = execute_many(&Backend::Emulator, &[(variant, None)], &p, ONCE, |_| {})
        .pop()
        .unwrap()
        .unwrap_err();
    assert!(error.to_string().contains("reads e4m3 B only"), "{error:#}");
}

#[test]
fn a_per_tensor_kernel_refuses_block_scales() {
    let variant = registry::find("wgmma-fp8").unwrap();
    let p = problem(Scaling::Block, false);
    let error = execute_many(&Backend::Emulator, &[(variant, None)], &p, ONCE, |_| {})
        .pop()
        .unwrap()
        .unwrap_err();
    assert!(
        error.to_string().contains("use wgmma-fp8-block"),
        "{error:#}"
    );
}

/// The emulator's FP8 `wgmma` is the H100's as the probe measured it (`gpu_gemm::fp8::probe`,
/// `docs/hopper-isa-notes.md`): aligned to the largest term, 13 bits below its leading bit kept,
/// the rest truncated. The probe runs here on the emulator, and the same candidate must predict
/// every element, while its neighbours (12 and 14 bits, rounding) must not: the probe tells
/// them apart.
#[test]
fn the_emulated_fp8_wgmma_keeps_13_bits_truncated_as_the_h100() {
    use gpu_gemm::fp8::probe::{self, Model};
    let cases = probe::cases();
    // B in e4m3, then in e5m2 (`wgmma…e4m3.e5m2`): the same adder, measured the same.
    for b_format in [Format::E4m3, Format::E5m2] {
        let inputs = probe::operands(&cases, b_format);
        let ops = probe::launch_operands(&inputs);
        let d = gpu_gemm::emulator::run_fp8(
            &probe::launch(b_format),
            &probe::shape(),
            (1.0, -1.0),
            &ops,
            ONCE,
        )
        .unwrap()
        .result;
        let mispredicted = |model: Model| probe::mispredicted(model, &cases, &d);
        let measured = Model {
            fraction_bits: 13,
            truncate: true,
        };
        assert_eq!(
        mispredicted(measured),
        0,
        "B {b_format:?}: the emulator's FP8 wgmma no longer adds as the H100 was measured to (13 bits below the largest term, truncated: docs/hopper-isa-notes.md)"
    );
        for other in [
            Model {
                fraction_bits: 12,
                ..measured
            },
            Model {
                fraction_bits: 14,
                ..measured
            },
            Model {
                truncate: false,
                ..measured
            },
        ] {
            assert!(
                mispredicted(other) > 0,
                "{other:?} predicts the probe too: it cannot tell"
            );
        }
    }
}

/// A leading dimension no FP8 kernel can read is refused by `auto` in the words of the call
/// (the type and its rule), not with the name of the kernel it would have chosen.
#[test]
fn auto_refuses_an_unaligned_fp8_leading_dimension_by_the_types_rule() {
    for scaling in [Scaling::PerTensor, Scaling::Block] {
        let mut p = problem(scaling, false);
        p.shape.lda = 204; // not a multiple of 16 one-byte elements
        let auto = registry::find("auto").unwrap();
        let error = execute_many(&Backend::Emulator, &[(auto, None)], &p, ONCE, |_| {})
            .pop()
            .unwrap()
            .unwrap_err();
        let message = format!("{error:#}");
        assert!(
            message.starts_with("auto: this e4m3 GEMM") && message.contains("lda = 204"),
            "{message}"
        );
        assert!(!message.contains("wgmma-"), "{message}");
    }
}
