//! The fused epilogues on the emulator (`kernels_gpu::fused`): every way a 16-bit kernel writes C
//! applies `act(alpha·acc + beta·C + bias)` before its one rounding, checked against the same
//! function in f64; then planted bugs that the check must catch.
use gpu_gemm::emulator;
use gpu_gemm::problem::{parse_epilogue, Epilogue, Inputs, Problem, Transposes};
use gpu_gemm::registry;
use gpu_gemm::run::{execute, plan, Backend};
use gpu_gemm::verify;
use kernels_gpu::gemm::Dtype;

mod epilogue_cases;
use epilogue_cases::{cases, problem, ONCE};

#[test]
fn every_16bit_epilogue_applies_bias_and_activation_before_rounding() {
    for (name, tile, dtype, dims, t, beta, e) in cases() {
        let p = problem(dtype, dims, t, beta, e);
        let variant = registry::find(name).unwrap();
        let what = format!("{name}:{tile:?} {} {dims:?} {e}", dtype.name());
        let report = execute(&Backend::Emulator, variant, tile, &p, ONCE)
            .unwrap_or_else(|e| panic!("{what}: {e:#}"));
        let check = report.check.expect("checked run");
        assert!(check.passed(), "{what}: {}", check.summary());
        println!("{what}: {}", check.summary());
    }
}

/// What a kernel with the epilogue dropped, or with its bias along the wrong axis, writes: the
/// check (against the f64 reference of the problem as asked) fails each, and passes the kernel
/// as it is.
#[test]
fn planted_epilogue_bugs_fail_the_check() {
    let p = problem(Dtype::Bf16, (136, 72, 64), Transposes::NN, 0.0, "bias,gelu");
    let inputs = Inputs::<gpu_gemm::half::bf16>::generate(&p);
    let reference = verify::Reference::compute(&p, &inputs);
    let kernel = registry::find("wgmma-16bit").unwrap();
    // The kernel runs `computed` on the problem's inputs (its bias too) and is checked as `p`.
    let run = |computed: &Problem| {
        let launch = plan(kernel, None, computed, None).unwrap();
        let mut c = inputs.c_for_checked_run(p.beta);
        let uploaded = c.clone();
        emulator::launch_once(&launch, computed, &inputs, &mut c).unwrap();
        verify::check_against(&p, kernel.arithmetic(), &reference, &uploaded, &c)
    };
    let control = run(&p);
    assert!(
        control.passed(),
        "the kernel as it is: {}",
        control.summary()
    );
    let dropped = run(&Problem {
        epilogue: Epilogue::NONE,
        ..p
    });
    assert!(
        !dropped.passed(),
        "a GEMM without its epilogue passed: {}",
        dropped.summary()
    );
    // The bias read per column (the first n of its m values) instead of per row.
    let swapped = run(&Problem {
        epilogue: parse_epilogue("bias-col,gelu").unwrap(),
        ..p
    });
    assert!(
        !swapped.passed(),
        "a bias along the wrong axis passed: {}",
        swapped.summary()
    );
    println!(
        "dropped: {}\nswapped: {}",
        dropped.summary(),
        swapped.summary()
    );
}

/// The library's form: `GemmConfig::epilogue` and `Gemm::run_with_bias` on the emulator, the
/// result against the f64 reference with the same epilogue; a missing or short bias is a typed
/// error before anything runs.
#[test]
fn the_library_runs_a_fused_epilogue_and_refuses_a_misshaped_bias() {
    use gpu_gemm::half::bf16;
    use gpu_gemm::{Activation, Algorithm, Bias, Gemm, GemmConfig, GemmError};
    let (m, n, k) = (72u32, 40u32, 64u32);
    let p = problem(Dtype::Bf16, (m, n, k), Transposes::NN, 0.0, "bias,silu");
    let inputs = Inputs::<bf16>::generate(&p);
    let s = p.shape;
    let config = GemmConfig::new(m, n, k)
        .scale(p.alpha, 0.0)
        .leading_dimensions(s.lda, s.ldb, s.ldc)
        .epilogue(Bias::PerRow, Activation::Silu);
    let gemm = Gemm::emulator();
    let mut c = inputs.c_for_checked_run(0.0);
    let uploaded = c.clone();
    let choice = gemm
        .run_with_bias(
            &config,
            &Algorithm::Auto(gpu_gemm::Math::Strict),
            &inputs.a.data[..],
            &inputs.b.data[..],
            &inputs.bias[..],
            &mut c[..],
        )
        .unwrap();
    let reference = verify::Reference::compute(&p, &inputs);
    let check = verify::check_against(&p, choice.arithmetic, &reference, &uploaded, &c);
    assert!(check.passed(), "{}: {}", choice.entry, check.summary());
    // No bias, and a short one.
    let missing = gemm.run(
        &config,
        &Algorithm::Auto(gpu_gemm::Math::Strict),
        &inputs.a.data[..],
        &inputs.b.data[..],
        &mut c[..],
    );
    assert!(
        matches!(missing, Err(GemmError::BiasMisshaped { .. })),
        "{missing:?}"
    );
    let short = gemm.run_with_bias(
        &config,
        &Algorithm::Auto(gpu_gemm::Math::Strict),
        &inputs.a.data[..],
        &inputs.b.data[..],
        &inputs.bias[..(m as usize - 1)],
        &mut c[..],
    );
    assert!(
        matches!(short, Err(GemmError::BiasMisshaped { .. })),
        "{short:?}"
    );
    println!("{}", short.unwrap_err());
}
