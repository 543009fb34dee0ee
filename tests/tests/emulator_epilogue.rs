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

/// The amax epilogue's planted bugs. The bias of C's last column stands out, so D's amax lies
/// in the second of the two tiles along n, the partial one at C's edge, which the persistent
/// walk gives block 1. A kernel whose block 1 gathers nothing (an amax that misses the edge
/// tiles), and a launch that finds the accumulator left by an earlier, larger GEMM (a last
/// step that forgot to zero it), each fail the check; the kernel as it is passes, and leaves
/// the accumulator zeroed.
#[test]
fn planted_amax_bugs_fail_the_check() {
    use gpu_gemm::half::bf16;
    use gpu_gemm::problem::EmulatedBody;
    let p = problem(
        Dtype::Bf16,
        (200, 200, 64),
        Transposes::NN,
        0.0,
        "bias-col,gelu,amax",
    );
    let mut inputs = Inputs::<bf16>::generate(&p);
    let spike = 64.0;
    *inputs.bias.last_mut().unwrap() = bf16::from_f32(spike);
    let kernel = registry::find("wgmma-16bit").unwrap();
    let launch = plan(kernel, None, &p, None).unwrap();
    let operands = (
        &inputs.a.data[..],
        &inputs.b.data[..],
        &inputs.bias[..],
        &[][..],
    );
    let check = |c: &[bf16], words: &[u32; 3]| verify::check_amax(&p, c, emulator::amax_of(words));

    let mut c = inputs.c_for_checked_run(p.beta);
    let mut words = emulator::AMAX_ZEROED;
    emulator::launch_on(&launch, &p, operands, (&mut c, &mut words), None).unwrap();
    let control = check(&c, &words);
    assert!(
        control.passed(),
        "the kernel as it is: {}",
        control.summary()
    );
    assert!(
        control.amax > spike / 2.0,
        "the spike is D's largest: {control:?}"
    );
    assert_eq!(words[0], 0, "the last step leaves the accumulator zeroed");

    let mut c = inputs.c_for_checked_run(p.beta);
    let mut words = emulator::AMAX_ZEROED;
    let body = EmulatedBody::TensorMaps(block_one_gathers_no_amax);
    emulator::launch_planted(&launch, body, &p, &inputs, (&mut c, &mut words)).unwrap();
    let skipped = check(&c, &words);
    assert!(
        !skipped.passed(),
        "an amax without the edge tile passed: {}",
        skipped.summary()
    );

    let mut c = inputs.c_for_checked_run(p.beta);
    let mut words = [(2.0 * control.amax).to_bits(), 0, 0];
    emulator::launch_on(&launch, &p, operands, (&mut c, &mut words), None).unwrap();
    let stale = check(&c, &words);
    assert!(
        !stale.passed(),
        "an amax left from an earlier GEMM passed: {}",
        stale.summary()
    );
    println!(
        "control: {}\nedge tile skipped: {}\nstale accumulator: {}",
        control.summary(),
        skipped.summary(),
        stale.summary()
    );
}

/// `wgmma-16bit` whose block 1 applies the epilogue without gathering the amax.
unsafe fn block_one_gathers_no_amax(
    mut args: kernels_gpu::gemm::HalfGemmArgs<kernels_gpu::device::half::Bf16>,
    maps: *const kernels_gpu::device::tma::TensorMap,
) {
    use kernels_gpu::variants::wgmma_16bit;
    if kernels_gpu::device::block_idx_x() == 1 {
        args.fused.epilogue = args.fused.epilogue.without_amax();
    }
    unsafe {
        wgmma_16bit::gemm::<kernels_gpu::device::half::Bf16, wgmma_16bit::Plain<4>>(args, maps)
    }
}

/// The library's amax: `GemmConfig::amax` over a strided batch on the emulator, read back with
/// `Plan::amax` after each of two enqueues (the second on a D half as large: the accumulator
/// starts from zero each time), against C; a plan without it is a typed error.
#[test]
fn the_library_gathers_the_amax_of_every_member_and_each_enqueue() {
    use gpu_gemm::half::bf16;
    use gpu_gemm::{Activation, Algorithm, Bias, Gemm, GemmConfig, GemmError};
    let (m, n, k, members) = (72u32, 40u32, 64u32, 3u32);
    let mut p = problem(
        Dtype::Bf16,
        (m, n, k),
        Transposes::NN,
        0.0,
        "bias,relu,amax",
    );
    let s = p.shape;
    let (stride_a, stride_b, stride_c) = (
        u64::from(s.lda) * u64::from(k),
        u64::from(s.ldb) * u64::from(n),
        u64::from(s.ldc) * u64::from(n),
    );
    p.batch = kernels_gpu::gemm::Batch {
        count: members,
        stride_a,
        stride_b,
        stride_c,
    };
    let inputs = Inputs::<bf16>::generate(&p);
    let config = GemmConfig::new(m, n, k)
        .scale(p.alpha, 0.0)
        .leading_dimensions(s.lda, s.ldb, s.ldc)
        .batch(members, stride_a, stride_b, stride_c)
        .amax()
        .epilogue(Bias::PerRow, Activation::Relu);
    let gemm = Gemm::emulator();
    let algorithm = Algorithm::Auto(gpu_gemm::Math::Strict);
    let mut plan = gemm.plan::<bf16>(&config, &algorithm).unwrap();
    let halved: Vec<bf16> = inputs
        .a
        .data
        .iter()
        .map(|x| *x * bf16::from_f32(0.5))
        .collect();
    let mut seen = Vec::new();
    for a in [&inputs.a.data, &halved] {
        let mut c = inputs.c_for_checked_run(0.0);
        plan.enqueue_with_bias(&a[..], &inputs.b.data[..], &inputs.bias[..], &mut c[..])
            .unwrap();
        let amax = plan.amax().unwrap();
        let check = verify::check_amax(&p, &c, [amax.amax, amax.scale]);
        assert!(
            check.passed(),
            "{}: {}",
            plan.choice().entry,
            check.summary()
        );
        seen.push(amax);
    }
    assert!(seen[1].amax < seen[0].amax, "{seen:?}");
    let plain = gemm
        .plan::<bf16>(
            &GemmConfig::new(m, n, k).leading_dimensions(s.lda, s.ldb, s.ldc),
            &algorithm,
        )
        .unwrap();
    assert!(matches!(plain.amax(), Err(GemmError::NoAmax)));
    assert_eq!(plain.amax_device_address(), None);
    println!("{seen:?}");
}
