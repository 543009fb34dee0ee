//! Every variant on the GPU at 1×1×1, 33×17×65 (lda > m), 1000×1023×999, 1024³, and shapes for
//! the TMA kernels (whose rows must start 16 bytes apart: leading dimensions multiples of 4 in
//! f32, 8 in bf16 and f16): 1000×1020×996 (edges in m, n and k), 4096×2048×96 (more tiles than
//! SMs: the persistent loop), and for the 16-bit types 1000×1020×1000 (edges in m, n and k)
//! with an odd ldc (C stored element by element) and with ldc = 1008 (16-byte rows of C, as the
//! kernels that store C with the TMA engine need; its padding rows must stay untouched), and
//! 1×1×1 with lda = ldb = 8; in every dtype each variant has (f32, f64, bf16, f16),
//! against the f64 reference; a dtype a variant lacks must be refused. Skips, saying so, where
//! there is no CUDA driver or device.
use gpu_gemm::problem::{Init, Problem, Transpose, Transposes};
use gpu_gemm::registry::{self, Variant};
use gpu_gemm::run::{execute, execute_many, Backend, Clock, Timing};
use kernels_gpu::fused::Epilogue;
use kernels_gpu::gemm::Dtype;
use kernels_gpu::registry::Shape;

const SHAPES: &[Shape] = &[
    Shape {
        m: 1,
        n: 1,
        k: 1,
        lda: 1,
        ldb: 1,
        ldc: 1,
    },
    Shape {
        m: 33,
        n: 17,
        k: 65,
        lda: 40,
        ldb: 65,
        ldc: 33,
    },
    Shape {
        m: 1000,
        n: 1023,
        k: 999,
        lda: 1000,
        ldb: 999,
        ldc: 1000,
    },
    Shape {
        m: 1024,
        n: 1024,
        k: 1024,
        lda: 1024,
        ldb: 1024,
        ldc: 1024,
    },
    Shape {
        m: 1000,
        n: 1020,
        k: 996,
        lda: 1000,
        ldb: 996,
        ldc: 1003,
    },
    Shape {
        m: 4096,
        n: 2048,
        k: 96,
        lda: 4096,
        ldb: 96,
        ldc: 4096,
    },
    Shape {
        m: 1000,
        n: 1020,
        k: 1000,
        lda: 1000,
        ldb: 1000,
        ldc: 1003,
    },
    Shape {
        m: 1000,
        n: 1020,
        k: 1000,
        lda: 1000,
        ldb: 1000,
        ldc: 1008,
    },
    Shape {
        m: 1,
        n: 1,
        k: 1,
        lda: 8,
        ldb: 8,
        ldc: 1,
    },
];

/// The GPU tests take the GPU one at a time. Side by side in one process (the harness's
/// default), tests that capture a CUDA graph or read CUPTI's activity records failed with the
/// driver's "unknown error", and once plain allocations beside them did too (H100, 2026-12-07: 2
/// of 17 tests in one run, 6 in another); each passed alone, and all 17 with `--test-threads=1`.
/// A capture and CUPTI's activity buffers are state of the whole process, which the harness's
/// threads share, so a test is the unit that owns the GPU. Without a GPU the tests skip at once.
fn one_gpu_test_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static GPU: std::sync::Mutex<()> = std::sync::Mutex::new(());
    // A test that failed holding the lock leaves it poisoned; the others still run.
    GPU.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The GPU backend, or `None` after saying that the test is skipped and what covers it
/// without a GPU (`elsewhere`).
fn gpu_or_skip(elsewhere: &str) -> Option<Backend> {
    match Backend::open(Some(gpu_gemm::run::BackendChoice::Gpu), None) {
        Ok((backend, _)) => Some(backend),
        Err(e) => {
            eprintln!("SKIPPED: no GPU here ({e:#}); {elsewhere}");
            None
        }
    }
}

/// As [`gpu_or_skip`], the GPU itself.
fn the_gpu_or_skip(elsewhere: &str) -> Option<Box<gpu_gemm::gpu::Gpu>> {
    match gpu_or_skip(elsewhere)? {
        Backend::Gpu(gpu) => Some(gpu),
        _ => unreachable!("asked for the GPU"),
    }
}

#[test]
fn every_variant_matches_the_reference_on_the_gpu() {
    let _one_at_a_time = one_gpu_test_at_a_time();
    let Some(backend) = gpu_or_skip("the emulator suite covers the same variants") else {
        return;
    };
    println!("on {}", backend.describe());
    let mut variants = Vec::new();
    for v in registry::all() {
        match v {
            Variant::Kernel(k) if !k.tiles.is_empty() => {
                variants.extend(k.tiles.iter().map(|t| (v, Some(*t))))
            }
            // They run on the host, not the GPU; host's own tests (cpu::tests) check them.
            Variant::Cpu(_) => {}
            // It times its candidates on a call's buffers, through the library:
            // `the_tuner_times_on_the_callers_buffers_and_keeps_c` below.
            Variant::Tuned(_) => {}
            // The baseline of a fused epilogue, which these plain problems have not:
            // `fused_epilogues_match_the_f64_reference` below runs it.
            Variant::Unfused(_) => {}
            _ => variants.push((v, None)),
        }
    }
    let timing = Timing::CHECK_ONCE;
    let mut failures = Vec::new();
    let mut runs = 0;
    for dtype in [Dtype::F32, Dtype::F64, Dtype::Bf16, Dtype::F16] {
        for &shape in SHAPES {
            let seed = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64;
            let p = Problem {
                shape,
                transposes: Transposes::NN,
                dtype,
                alpha: 1.5,
                beta: -0.5,
                init: Init::Random,
                seed,
                epilogue: kernels_gpu::fused::Epilogue::NONE,
                batch: kernels_gpu::gemm::Batch::ONE,
                groups: kernels_gpu::gemm::GroupLayout::None,
            };
            for (report, (v, tile)) in execute_many(&backend, &variants, &p, timing, |_| {})
                .into_iter()
                .zip(&variants)
            {
                let what = format!(
                    "{} tile {tile:?} {} {}x{}x{} seed {seed}",
                    v.name(),
                    dtype.name(),
                    shape.m,
                    shape.n,
                    shape.k
                );
                match (report, v) {
                    (Ok(r), _) => {
                        runs += 1;
                        if !r.passed() {
                            failures.push(format!("{what}: {}", r.check.unwrap().summary()));
                        }
                    }
                    // A dtype the variant lacks, or a shape the registry rejects, must be
                    // refused with the reason.
                    (Err(e), _) if !v.dtypes().contains(&dtype) => {
                        let expected = format!("no {} version", dtype.name());
                        assert!(format!("{e:#}").contains(&expected), "{what}: {e:#}");
                    }
                    // A kernel that computes other layouts only (the swapped ones: T,N) names
                    // what it computes; the graph test and the fused epilogues' cases run them
                    // on the GPU, the emulator suite in their own layouts at every tile edge.
                    (Err(e), _) if !v.transposes().contains(&Transposes::NN) => {
                        assert!(format!("{e:#}").contains("computes"), "{what}: {e:#}");
                    }
                    (Err(e), Variant::Kernel(k)) if (k.supports)(&shape, dtype).is_err() => {
                        assert!(
                            format!("{e:#}").contains("does not support"),
                            "{what}: {e:#}"
                        );
                    }
                    // `auto` in bf16 and f16 has one kernel to choose (the TMA-fed one), and
                    // says so when its leading dimensions are not 16-byte rows.
                    (Err(e), Variant::Auto(_)) if auto_choice_refuses(&p) => {
                        assert!(
                            format!("{e:#}").contains("does not support"),
                            "{what}: {e:#}"
                        );
                    }
                    (Err(e), _) => failures.push(format!("{what}: {e:#}")),
                }
            }
        }
    }
    println!("{runs} GPU runs");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `auto` in every layout and type on the GPU, at shapes where no kernel reads a transposed
/// operand as it lies (f32, f64, TF32) or stores C (16-bit N,T and T,T at m = 37): the
/// transposing copies run before the kernel, and the result must pass the pipeline's check.
/// (The 16-bit copy's first version passed the emulator and wrote zeros on the H100.)
#[test]
fn auto_computes_every_layout_through_its_copies_on_the_gpu() {
    let _one_at_a_time = one_gpu_test_at_a_time();
    let Some(backend) = gpu_or_skip("tests/tests/conformance.rs runs the same on the emulator")
    else {
        return;
    };
    let mut failures = Vec::new();
    for (dtype, math) in [
        (Dtype::F32, gpu_gemm::Math::Strict),
        (Dtype::F32, gpu_gemm::Math::Tf32),
        (Dtype::F64, gpu_gemm::Math::Strict),
        (Dtype::Bf16, gpu_gemm::Math::Strict),
        (Dtype::F16, gpu_gemm::Math::Strict),
    ] {
        for transposes in Transposes::ALL {
            let (m, n, k) = (37, 200, 72);
            let (lda, ldb) = match (transposes.transa, transposes.transb) {
                (Transpose::No, Transpose::No) => (m, k),
                (Transpose::Yes, Transpose::No) => (k, k),
                (Transpose::No, Transpose::Yes) => (m, n),
                (Transpose::Yes, Transpose::Yes) => (k, n),
            };
            let p = Problem {
                shape: Shape {
                    m,
                    n,
                    k,
                    lda,
                    ldb,
                    ldc: m,
                },
                transposes,
                dtype,
                alpha: 1.5,
                beta: -0.5,
                init: Init::Random,
                seed: 7,
                epilogue: kernels_gpu::fused::Epilogue::NONE,
                batch: kernels_gpu::gemm::Batch::ONE,
                groups: kernels_gpu::gemm::GroupLayout::None,
            };
            let what = format!(
                "auto {} {} {}",
                math.name(),
                dtype.name(),
                transposes.letters()
            );
            match execute(&backend, Variant::Auto(math), None, &p, Timing::CHECK_ONCE) {
                Ok(r) if r.passed() => {}
                Ok(r) => failures.push(format!("{what}: {}", r.check.unwrap().summary())),
                Err(e) => failures.push(format!("{what}: {e:#}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Whether the kernel `auto` chooses for a problem rejects its shape.
fn auto_choice_refuses(p: &Problem) -> bool {
    match gpu_gemm::auto::choose(p, gpu_gemm::Math::Strict, Some(90)).map(|c| c.variant) {
        Ok(Variant::Kernel(k)) => (k.supports)(&p.shape, p.dtype).is_err(),
        _ => false,
    }
}

/// The PTX ISA leaves the `.tf32` operand layout to the implementation; the emulator reads an
/// unconverted f32 as the tensor core is known to, truncated to its top 19 bits
/// (`kernels_gpu::device::mma::Tf32::truncate`). At k = 1 every element of C is one exact
/// product (`alpha = 1`, `beta = 0`), so the GPU must agree with the emulator bit for bit, for
/// the kernel that truncates (`tc-tf32`) and for the one that rounds with `cvt.rna`
/// (`tc-tf32-basic`), and the two must differ where rounding and truncation do.
#[test]
fn tensor_cores_read_tf32_operands_as_the_emulator_does() {
    let _one_at_a_time = one_gpu_test_at_a_time();
    let Some(gpu) = the_gpu_or_skip("the emulator's TF32 semantics are tested in emulator_mma.rs")
    else {
        return;
    };
    let p = Problem {
        shape: Shape {
            m: 128,
            n: 128,
            k: 1,
            lda: 128,
            ldb: 1,
            ldc: 128,
        },
        transposes: Transposes::NN,
        dtype: Dtype::F32,
        alpha: 1.0,
        beta: 0.0,
        init: Init::Random,
        seed: 7,
        epilogue: kernels_gpu::fused::Epilogue::NONE,
        batch: kernels_gpu::gemm::Batch::ONE,
        groups: kernels_gpu::gemm::GroupLayout::None,
    };
    let inputs = gpu_gemm::problem::Inputs::<f32>::generate(&p);
    let timing = Timing {
        warmup: 0,
        iters: 0,
        budget_ms: 0.0,
        check: true,
        cold: false,
        clock: Clock::Events,
    };
    let mut results = Vec::new();
    for name in ["tc-tf32", "tc-tf32-basic"] {
        let variant = registry::find(name).unwrap();
        let launch = gpu_gemm::run::plan(variant, None, &p, Some(90)).unwrap();
        let on_gpu = gpu.run(&launch, &p, &inputs, timing).unwrap().result;
        let emulated = gpu_gemm::emulator::run(&launch, &p, &inputs, timing)
            .unwrap()
            .result;
        let differing = on_gpu
            .iter()
            .zip(&emulated)
            .filter(|(g, e)| g.to_bits() != e.to_bits())
            .count();
        println!(
            "{name}: {differing} of {} elements differ between the GPU and the emulator",
            on_gpu.len()
        );
        assert_eq!(
            differing, 0,
            "{name}: the GPU's TF32 operands are not the emulator's"
        );
        results.push(on_gpu);
    }
    let rounding_differs = results[0]
        .iter()
        .zip(&results[1])
        .filter(|(t, r)| t != r)
        .count();
    println!(
        "truncated vs rounded: {rounding_differs} of {} elements differ",
        results[0].len()
    );
    assert!(
        rounding_differs > results[0].len() / 4,
        "the test cannot tell truncation from rounding"
    );
}

/// The 16-bit kernels round `alpha·acc + beta·C` to bf16 or f16 with `cvt.rn` on the GPU and
/// with `half`'s `from_f32` on the emulator (`kernels_gpu::device::half`); both claim round to
/// nearest even. At k = 1 every element is one exact product, scaled and added in f32 with one
/// fused multiply-add and rounded once, so the GPU and the emulator must agree bit for bit
/// (alpha 1.5 and beta -0.5: C is read, and the tiles' edges in m and n are written).
#[test]
fn the_16_bit_kernels_round_as_the_emulator_does() {
    let _one_at_a_time = one_gpu_test_at_a_time();
    let Some(gpu) = the_gpu_or_skip("the emulator suite runs the 16-bit kernels") else {
        return;
    };
    if gpu.arch != "sm_90" {
        eprintln!(
            "SKIPPED: the 16-bit kernels need sm_90a (H100, H200); this {} is {}",
            gpu.device_name, gpu.arch
        );
        return;
    }
    let mut compared = 0;
    for v in registry::all() {
        let Variant::Kernel(kernel) = v else { continue };
        // Every configuration: each has its own epilogue path (rows, `stmatrix`, `.trans`).
        let tiles: Vec<Option<u32>> = match v.tiles() {
            [] => vec![None],
            tiles => tiles.iter().map(|&t| Some(t)).collect(),
        };
        // N,N where the kernel computes it; the swapped decode kernels compute T,N only (A
        // stored k × m, its leading dimension k padded to TMA's 16 bytes).
        let transposes = v.transposes()[0];
        let lda = match transposes.transa {
            gpu_gemm::Transpose::No => 304,
            gpu_gemm::Transpose::Yes => 8,
        };
        for (&dtype, tile) in kernel
            .dtypes
            .iter()
            .filter(|d| d.is_16bit())
            .flat_map(|d| tiles.iter().map(move |&t| (d, t)))
        {
            let p = Problem {
                shape: Shape {
                    m: 304,
                    n: 520,
                    k: 1,
                    lda,
                    ldb: 8,
                    ldc: 304,
                },
                transposes,
                dtype,
                alpha: 1.5,
                beta: -0.5,
                init: Init::Random,
                seed: 11,
                epilogue: kernels_gpu::fused::Epilogue::NONE,
                batch: kernels_gpu::gemm::Batch::ONE,
                groups: kernels_gpu::gemm::GroupLayout::None,
            };
            let differing = match dtype {
                Dtype::Bf16 => differing::<gpu_gemm::half::bf16>(&gpu, v, tile, &p),
                _ => differing::<gpu_gemm::half::f16>(&gpu, v, tile, &p),
            };
            println!(
                "{}{} {}: {differing} of {} elements differ between the GPU and the emulator",
                v.name(),
                tile.map_or(String::new(), |t| format!(":{t}")),
                dtype.name(),
                304 * 520
            );
            assert_eq!(differing, 0, "{} {tile:?} {}", v.name(), dtype.name());
            compared += 1;
        }
    }
    assert!(compared >= 2, "no 16-bit kernel was compared");
}

/// Elements of C (its padding included) whose bits differ between the GPU and the emulator.
fn differing<H: gpu_gemm::problem::Scalar>(
    gpu: &gpu_gemm::gpu::Gpu,
    v: Variant,
    tile: Option<u32>,
    p: &Problem,
) -> usize {
    let inputs = gpu_gemm::problem::Inputs::<H>::generate(p);
    let timing = Timing {
        warmup: 0,
        iters: 0,
        budget_ms: 0.0,
        check: true,
        cold: false,
        clock: Clock::Events,
    };
    let launch = gpu_gemm::run::plan(v, tile, p, Some(90)).unwrap();
    let on_gpu = gpu.run(&launch, p, &inputs, timing).unwrap().result;
    let emulated = gpu_gemm::emulator::run(&launch, p, &inputs, timing)
        .unwrap()
        .result;
    H::as_bits(&on_gpu)
        .iter()
        .zip(H::as_bits(&emulated))
        .filter(|(g, e)| g != e)
        .count()
}

/// The library's call as a program makes it: on device buffers it allocated itself, `Auto`
/// under the strict and FP32-accurate contracts, against the f64 product; and host memory
/// refused by the GPU handle.
/// The library tests' f32 problem (edges in m, n and k for every tile, leading dimensions
/// multiples of 4 for the TMA), its inputs from `seed` and their f64 reference.
fn library_problem(
    seed: u64,
) -> (
    gpu_gemm::GemmConfig,
    Problem,
    gpu_gemm::problem::Inputs<f32>,
    gpu_gemm::verify::Reference,
) {
    let config = gpu_gemm::GemmConfig::new(1000, 1020, 996)
        .scale(1.5, -0.5)
        .leading_dimensions(1004, 996, 1000);
    let p = Problem {
        shape: Shape {
            m: config.m,
            n: config.n,
            k: config.k,
            lda: config.lda,
            ldb: config.ldb,
            ldc: config.ldc,
        },
        transposes: Transposes::NN,
        dtype: Dtype::F32,
        alpha: config.alpha,
        beta: config.beta,
        init: Init::Random,
        seed,
        epilogue: kernels_gpu::fused::Epilogue::NONE,
        batch: kernels_gpu::gemm::Batch::ONE,
        groups: kernels_gpu::gemm::GroupLayout::None,
    };
    let inputs = gpu_gemm::problem::Inputs::<f32>::generate(&p);
    let reference = gpu_gemm::verify::Reference::compute(&p, &inputs);
    (config, p, inputs, reference)
}

#[test]
fn the_library_runs_on_device_buffers_the_caller_owns() {
    let _one_at_a_time = one_gpu_test_at_a_time();
    use cust::memory::{CopyDestination, DeviceBuffer};
    use gpu_gemm::{Algorithm, Gemm, GemmError, Math};
    let gemm = match Gemm::new() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            return;
        }
    };
    // Edges in m, n and k for every tile; leading dimensions multiples of 4 for the TMA.
    let (config, p, inputs, reference) = library_problem(11);
    let a = DeviceBuffer::from_slice(&inputs.a.data).unwrap();
    let b = DeviceBuffer::from_slice(&inputs.b.data).unwrap();
    for math in [Math::Strict, Math::Fp32Accurate] {
        let mut c = DeviceBuffer::from_slice(&inputs.c.data).unwrap();
        let choice = gemm
            .run(&config, &Algorithm::Auto(math), &a, &b, &mut c)
            .unwrap();
        let mut result = inputs.c.data.clone();
        c.copy_to(&mut result[..]).unwrap();
        let check = gpu_gemm::verify::check_against(
            &p,
            choice.arithmetic,
            &reference,
            &inputs.c.data,
            &result,
        );
        assert!(check.passed(), "{math:?} {choice}: {}", check.summary());
        if math == Math::Fp32Accurate && gemm.device().contains("sm_90") {
            assert!(choice.variant.starts_with("wgmma-3xtf32"), "{choice}");
        }
        eprintln!("{math:?}: {choice}; {}", check.summary());
    }
    let host_c = &mut inputs.c.data.clone();
    let e = gemm
        .run(&config, &Algorithm::Auto(Math::Strict), &a, &b, host_c)
        .unwrap_err();
    assert!(
        matches!(
            e,
            GemmError::WrongMemory {
                operand: 'C',
                found: "host",
                needs: "device",
                ..
            }
        ),
        "{e}"
    );
}

/// `Algorithm::Tuned` on the GPU: the first call times the candidates on the caller's
/// buffers, with β ≠ 0, and C still holds the product (checked against the f64 reference);
/// the file it writes names the winner; a second handle reads it without timing; the result
/// of the cached call is the same product.
#[test]
fn the_tuner_times_on_the_callers_buffers_and_keeps_c() {
    let _one_at_a_time = one_gpu_test_at_a_time();
    use cust::memory::{CopyDestination, DeviceBuffer};
    use gpu_gemm::{Algorithm, Gemm, Math, Tuning};
    let cache = std::env::temp_dir()
        .join(format!("gpu-gemm-gpu-test-{}", std::process::id()))
        .join("tuning.csv");
    let open = || match Gemm::new() {
        Ok(g) => Some(g.with_tuning_cache(&cache)),
        Err(e) => {
            eprintln!("SKIPPED: {e}; gpu-gemm's tuning tests run the same code on the emulator");
            None
        }
    };
    let Some(gemm) = open() else { return };
    let (config, p, inputs, reference) = library_problem(12);
    let a = DeviceBuffer::from_slice(&inputs.a.data).unwrap();
    let b = DeviceBuffer::from_slice(&inputs.b.data).unwrap();
    let mut winners = Vec::new();
    for (handle, expect_cached) in [(gemm, false), (open().unwrap(), true)] {
        for math in [Math::Strict, Math::Fp32Accurate] {
            let mut c = DeviceBuffer::from_slice(&inputs.c.data).unwrap();
            let start = std::time::Instant::now();
            let choice = handle
                .run(&config, &Algorithm::Tuned(math), &a, &b, &mut c)
                .unwrap();
            let seconds = start.elapsed().as_secs_f64();
            let mut result = inputs.c.data.clone();
            c.copy_to(&mut result[..]).unwrap();
            let check = gpu_gemm::verify::check_against(
                &p,
                choice.arithmetic,
                &reference,
                &inputs.c.data,
                &result,
            );
            assert!(check.passed(), "{math:?} {choice}: {}", check.summary());
            match (&choice.tuning, expect_cached) {
                (Some(Tuning::Measured { ranking, stored }), false) => {
                    assert_eq!(stored.as_deref(), Some(cache.as_path()), "{choice}");
                    assert_eq!(ranking[0].0, choice.variant);
                    winners.push(choice.variant.clone());
                }
                (Some(Tuning::Cached { .. }), true) => {
                    assert!(winners.contains(&choice.variant), "{choice}")
                }
                other => panic!("{math:?}, cached expected: {expect_cached}: {other:?}"),
            }
            eprintln!("{math:?} in {seconds:.2} s: {choice}; {}", check.summary());
        }
    }
    eprintln!("{}", std::fs::read_to_string(&cache).unwrap());
    let _ = std::fs::remove_dir_all(cache.parent().unwrap());
}

/// Both FP8 kernels and cuBLASLt on the GPU against the f64 reference of the dequantised
/// operands, per tensor and per block (and with B in e5m2 per tensor), with outlier rows, at shapes that cross every tile edge
/// (m, n, k not multiples of the tiles, padded leading dimensions) and one with more tiles than
/// multiprocessors.
#[test]
fn the_fp8_kernels_match_the_reference_on_the_gpu() {
    let _one_at_a_time = one_gpu_test_at_a_time();
    use gpu_gemm::fp8::quantize::{Fp8Problem, Scaling};
    let Some(backend) = gpu_or_skip("tests/emulator_fp8.rs runs the FP8 kernels") else {
        return;
    };
    if backend.arch() != Some(90) {
        eprintln!("SKIPPED: the FP8 kernels need sm_90a (H100, H200)");
        return;
    }
    let timing = Timing::CHECK_ONCE;
    let shapes = [
        (1000, 1020, 1000, 1008, 1024, 1000),
        (264, 136, 200, 208, 224, 272),
        (4096, 2048, 1024, 1024, 1024, 4096),
    ];
    let mut failures = Vec::new();
    for (m, n, k, lda, ldb, ldc) in shapes {
        // B in e4m3 with either scaling, and in e5m2 per tensor; e4m3 again with a fused
        // epilogue (the amax held to D's exactly).
        use gpu_gemm::fp8::quantize::Format;
        use kernels_gpu::fused::{Activation, Bias};
        let gelu = Epilogue::new(Bias::PerRow, Activation::Gelu).with_amax();
        let silu = Epilogue::new(Bias::PerColumn, Activation::Silu).with_amax();
        for (scaling, b_format, epilogue) in [
            (Scaling::PerTensor, Format::E4m3, Epilogue::NONE),
            (Scaling::Block, Format::E4m3, Epilogue::NONE),
            (Scaling::PerTensor, Format::E5m2, Epilogue::NONE),
            (Scaling::PerTensor, Format::E4m3, gelu),
            (Scaling::Block, Format::E4m3, silu),
        ] {
            let p = Fp8Problem {
                b_format,
                shape: Shape {
                    m,
                    n,
                    k,
                    lda,
                    ldb,
                    ldc,
                },
                alpha: 1.5,
                beta: -0.5,
                scaling,
                init: Init::Random,
                seed: 17,
                outliers: true,
                epilogue,
                groups: gpu_gemm::launch::Fp8Groups::NONE,
            };
            // Every configuration of each kernel that takes this scaling.
            // (A block-scaled kernel also runs a per-tensor problem, its scales broadcast.)
            let names = kernels_gpu::registry::ALL
                .iter()
                .filter(|k| k.dtypes.contains(&p.dtype()))
                .filter(|k| {
                    let reads = gpu_gemm::fp8::run::kernel_scaling(k.name);
                    reads == Some(Scaling::Block) || reads == Some(scaling)
                })
                .map(|k| k.name);
            let mut variants: Vec<_> = names
                .map(|name| registry::find(name).unwrap())
                .flat_map(|v| v.tiles().iter().map(move |&t| (v, Some(t))))
                .collect();
            // cuBLASLt finds no FP8 algorithm unless m, n and k are multiples of 16 (CUDA 13.0 on
            // the H100: NOT_SUPPORTED at 1000×1020×1000 and 264×136×200).
            if [m, n, k].iter().all(|d| d % 16 == 0) {
                variants.push((registry::find("cublas").unwrap(), None));
            }
            let reports = gpu_gemm::fp8::run::execute_many(&backend, &variants, &p, timing, |_| {});
            for report in reports {
                match report {
                    Ok(r) => {
                        let c = r.check.as_ref().unwrap();
                        println!(
                            "{m}x{n}x{k} {scaling:?} B {b_format:?} {} {}: relative error {:.2e} (tolerance {:.1e}){}",
                            gpu_gemm::problem::epilogue_name(epilogue),
                            r.variant, c.relative_frobenius, c.tolerance,
                            c.amax.as_ref().map_or(String::new(), |a| format!("; {}", a.summary()))
                        );
                        if !r.passed() {
                            failures.push(format!("{m}x{n}x{k} {scaling:?} {}: {c:?}", r.variant));
                        }
                    }
                    Err(e) => failures.push(format!("{m}x{n}x{k} {scaling:?}: {e:#}")),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The probe of `gpu_gemm::fp8::probe`: how the FP8 `wgmma` adds into its accumulator. Prints
/// every case's result per column, and which candidate behaviours predict all of them; then
/// the emulator must agree with the GPU bit for bit.
#[test]
fn fp8_wgmma_accumulates_as_the_emulator_does() {
    let _one_at_a_time = one_gpu_test_at_a_time();
    use gpu_gemm::fp8::probe::{self, Model};
    use gpu_gemm::fp8::quantize::Format;
    use gpu_gemm::launch::Fp8Groups;
    let Some(gpu) = the_gpu_or_skip("tests/emulator_fp8.rs has the emulator's side") else {
        return;
    };
    if gpu.arch_number() != 90 {
        eprintln!("SKIPPED: the FP8 wgmma needs sm_90a (H100, H200)");
        return;
    }
    let cases = probe::cases();
    // B in e4m3, then in e5m2 (`wgmma…e4m3.e5m2`, whose accumulation the ISA leaves as open).
    for b_format in [Format::E4m3, Format::E5m2] {
        println!("== B in {b_format:?}");
        let inputs = probe::operands(&cases, b_format);
        let ops = probe::launch_operands(&inputs);
        let (launch, shape) = (probe::launch(b_format), probe::shape());
        let timing = Timing {
            warmup: 0,
            iters: 0,
            budget_ms: 0.0,
            check: true,
            cold: false,
            clock: Clock::Events,
        };
        let enqueue = gpu
            .fp8_kernel(
                &launch,
                shape,
                (1.0, -1.0),
                (Fp8Groups::NONE, Epilogue::NONE),
            )
            .unwrap();
        let on_gpu = gpu
            .run_fp8("probe", &shape, &ops, timing, &enqueue)
            .unwrap()
            .result;
        let emulated = gpu_gemm::emulator::run_fp8(&launch, &shape, (1.0, -1.0), &ops, timing)
            .unwrap()
            .result;
        println!("case | small part that survived, columns j = 0..8 (small·2^-j)");
        for (i, case) in cases.iter().enumerate() {
            let e = case
                .a
                .iter()
                .skip(1)
                .find(|v| **v != 0.0)
                .copied()
                .unwrap_or(0.0);
            let row: Vec<String> = (0..probe::COLUMNS)
                .map(|j| format!("{:e}", probe::survived(&on_gpu, cases.len(), i, j)))
                .collect();
            println!(
                "{i:3} {} (first small {e:e}): {}",
                case.family,
                row.join(" ")
            );
        }
        for model in Model::candidates() {
            let wrong = probe::mispredicted(model, &cases, &on_gpu);
            println!(
                "model {model:?}: {wrong} of {} elements mispredicted",
                cases.len() * 8
            );
        }
        let differing = on_gpu
            .iter()
            .zip(&emulated)
            .filter(|(g, e)| g.to_bits() != e.to_bits())
            .count();
        println!(
            "{differing} of {} elements differ between the GPU and the emulator",
            on_gpu.len()
        );
        assert_eq!(
            differing, 0,
            "B {b_format:?}: the emulator's FP8 accumulation is not the H100's"
        );
    }
}

/// A plan's enqueues captured into a CUDA graph: every path `auto` takes (the CUDA-core
/// kernels, 3xTF32 and TF32 `wgmma`, f64 DMMA, the 16-bit pipeline with its TMA store, the
/// narrow decode kernel, split-k's workspace and second launch, the copy of an operand whose
/// rows the TMA cannot describe, C written element by element, a batch whose tiles come from
/// the tile queue's counter, which each launch must leave at zero), each enqueued twice in one
/// capture on two sets of buffers, the graph replayed and both results checked against the
/// f64 reference. A call that allocated or waited would end the capture with an error. As
/// a control, capturing `Gemm::run` (which allocates and waits) must fail.
#[test]
fn plans_enqueue_into_a_cuda_graph_without_allocating_or_waiting() {
    let _one_at_a_time = one_gpu_test_at_a_time();
    use gpu_gemm::{Algorithm, Gemm, GemmConfig, Math, Transpose};
    let gemm = match Gemm::new() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            return;
        }
    };
    let auto = Algorithm::Auto;
    let cases: Vec<(&str, GemmConfig, Algorithm, Dtype)> = vec![
        (
            "f32 strict",
            GemmConfig::new(1000, 1020, 996)
                .scale(1.5, -0.5)
                .leading_dimensions(1004, 996, 1000),
            auto(Math::Strict),
            Dtype::F32,
        ),
        (
            "f32 fp32-accurate",
            GemmConfig::new(1000, 1020, 996)
                .scale(1.5, -0.5)
                .leading_dimensions(1004, 996, 1000),
            auto(Math::Fp32Accurate),
            Dtype::F32,
        ),
        (
            "f32 tf32",
            GemmConfig::new(2048, 2048, 512),
            auto(Math::Tf32),
            Dtype::F32,
        ),
        (
            "f64",
            GemmConfig::new(512, 384, 256).scale(1.0, 1.0),
            auto(Math::Strict),
            Dtype::F64,
        ),
        (
            "bf16 square",
            GemmConfig::new(4096, 4096, 1024),
            auto(Math::Strict),
            Dtype::Bf16,
        ),
        (
            "bf16 decode",
            GemmConfig::new(4096, 8, 4096),
            auto(Math::Strict),
            Dtype::Bf16,
        ),
        (
            "bf16 decode, T,N, 16 tokens a tile",
            GemmConfig::new(4096, 16, 4096)
                .transposes(Transpose::Yes, Transpose::No)
                .leading_dimensions(4096, 4096, 4096),
            auto(Math::Strict),
            Dtype::Bf16,
        ),
        (
            "bf16 decode, T,N, stream-k (its counters left at zero)",
            GemmConfig::new(2112, 64, 4096)
                .transposes(Transpose::Yes, Transpose::No)
                .leading_dimensions(4096, 4096, 2112),
            auto(Math::Strict),
            Dtype::Bf16,
        ),
        (
            "bf16 long k",
            GemmConfig::new(256, 256, 16384),
            auto(Math::Strict),
            Dtype::Bf16,
        ),
        (
            "bf16 batch (tile queue)",
            GemmConfig::new(1024, 1024, 64).batch(300, 1024 * 64, 64 * 1024, 1024 * 1024),
            auto(Math::Strict),
            Dtype::Bf16,
        ),
        (
            "f16 odd lda, odd ldc",
            GemmConfig::new(1000, 1020, 1000)
                .scale(1.0, 0.5)
                .leading_dimensions(1001, 1000, 1003),
            auto(Math::Strict),
            Dtype::F16,
        ),
    ];
    let mut variants = Vec::new();
    for (name, config, algorithm, dtype) in cases {
        let variant = match dtype {
            Dtype::F32 => captured_and_replayed::<f32>(&gemm, name, config, &algorithm),
            Dtype::F64 => captured_and_replayed::<f64>(&gemm, name, config, &algorithm),
            Dtype::Bf16 => {
                captured_and_replayed::<gpu_gemm::half::bf16>(&gemm, name, config, &algorithm)
            }
            Dtype::F16 => {
                captured_and_replayed::<gpu_gemm::half::f16>(&gemm, name, config, &algorithm)
            }
            Dtype::E4m3 | Dtype::E4m3E5m2 => unreachable!(),
        };
        variants.push(variant);
    }
    eprintln!("captured and replayed: {}", variants.join(", "));
    assert!(
        variants
            .iter()
            .any(|v| v.starts_with("bf16 batch (tile queue): wgmma-queue")),
        "the batch did not take the tile queue: {variants:?}"
    );
    for (case, expected) in [
        ("16 tokens a tile", "wgmma-swap:332"),
        ("stream-k", "wgmma-swap:248"),
    ] {
        assert!(
            variants
                .iter()
                .any(|v| v.contains(case) && v.ends_with(expected)),
            "the decode case `{case}` did not take {expected}: {variants:?}"
        );
    }
    // The control: `run` inside a capture allocates and waits, and the capture says so.
    let config = GemmConfig::new(256, 256, 256);
    let a = gemm.upload(&vec![1f32; 256 * 256]).unwrap();
    let mut c = gemm.zeros::<f32>(256 * 256).unwrap();
    let stream = capture_stream(&gemm);
    begin_capture(stream);
    let ran = gemm.run(&config, &auto(Math::Strict), &a, &a, &mut c);
    let ended = end_capture(stream);
    assert!(
        ran.is_err() || ended.is_err(),
        "capturing Gemm::run succeeded, so the capture cannot tell a call that waits"
    );
    eprintln!(
        "control: run inside a capture: {:?} / {:?}",
        ran.err().map(|e| e.to_string()),
        ended.err()
    );
}

/// The raw stream of the handle, for the driver's graph calls.
fn capture_stream(gemm: &gpu_gemm::Gemm) -> cudarc::driver::sys::CUstream {
    gemm.stream().expect("a GPU handle has a stream").as_inner() as _
}

fn begin_capture(stream: cudarc::driver::sys::CUstream) {
    use cudarc::driver::sys::{cuStreamBeginCapture_v2, CUresult, CUstreamCaptureMode};
    let status = unsafe {
        cuStreamBeginCapture_v2(stream, CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL)
    };
    assert_eq!(status, CUresult::CUDA_SUCCESS, "cuStreamBeginCapture");
}

/// Ends the capture: the graph, or the status that says the capture was broken.
fn end_capture(
    stream: cudarc::driver::sys::CUstream,
) -> Result<cudarc::driver::sys::CUgraph, cudarc::driver::sys::CUresult> {
    use cudarc::driver::sys::{cuStreamEndCapture, CUresult};
    let mut graph = std::ptr::null_mut();
    match unsafe { cuStreamEndCapture(stream, &mut graph) } {
        CUresult::CUDA_SUCCESS => Ok(graph),
        status => Err(status),
    }
}

/// One configuration: the result of `run` and of a replayed graph of two enqueues, each
/// checked against the f64 reference. Returns the variant that ran.
fn captured_and_replayed<T: gpu_gemm::Element>(
    gemm: &gpu_gemm::Gemm,
    name: &str,
    config: gpu_gemm::GemmConfig,
    algorithm: &gpu_gemm::Algorithm,
) -> String {
    use cudarc::driver::sys::{
        cuGraphDestroy, cuGraphExecDestroy, cuGraphInstantiateWithFlags, cuGraphLaunch, CUresult,
    };
    let p = Problem {
        shape: Shape {
            m: config.m,
            n: config.n,
            k: config.k,
            lda: config.lda,
            ldb: config.ldb,
            ldc: config.ldc,
        },
        transposes: Transposes::new(config.transa, config.transb),
        dtype: T::DTYPE,
        alpha: config.alpha,
        beta: config.beta,
        init: Init::Random,
        seed: 5,
        epilogue: kernels_gpu::fused::Epilogue::NONE,
        batch: config.batch,
        groups: kernels_gpu::gemm::GroupLayout::None,
    };
    let inputs = gpu_gemm::problem::Inputs::<T>::generate(&p);
    let reference = gpu_gemm::verify::Reference::compute(&p, &inputs);
    let a = gemm.upload(&inputs.a.data).unwrap();
    let b = gemm.upload(&inputs.b.data).unwrap();
    let check = |result: &[T], what: &str, arithmetic| {
        let check =
            gpu_gemm::verify::check_against(&p, arithmetic, &reference, &inputs.c.data, result);
        assert!(check.passed(), "{name}, {what}: {}", check.summary());
    };
    let mut c = gemm.upload(&inputs.c.data).unwrap();
    let choice = gemm.run(&config, algorithm, &a, &b, &mut c).unwrap();
    check(&gemm.download(&c).unwrap(), "run", choice.arithmetic);

    let mut plan = gemm.plan::<T>(&config, algorithm).unwrap();
    assert_eq!(
        plan.choice().variant,
        choice.variant,
        "{name}: plan and run chose differently"
    );
    let mut c1 = gemm.upload(&inputs.c.data).unwrap();
    let mut c2 = gemm.upload(&inputs.c.data).unwrap();
    gemm.synchronize().unwrap();
    let stream = capture_stream(gemm);
    begin_capture(stream);
    let enqueued = plan
        .enqueue(&a, &b, &mut c1)
        .and_then(|()| plan.enqueue(&a, &b, &mut c2));
    let graph = end_capture(stream);
    enqueued.unwrap_or_else(|e| panic!("{name}: enqueue under capture failed: {e}"));
    let graph =
        graph.unwrap_or_else(|s| panic!("{name} ({}): the capture broke: {s:?}", choice.variant));
    let mut exec = std::ptr::null_mut();
    unsafe {
        assert_eq!(
            cuGraphInstantiateWithFlags(&mut exec, graph, 0),
            CUresult::CUDA_SUCCESS
        );
        // Nothing ran while capturing: C still holds C0 until the graph runs.
        assert_eq!(cuGraphLaunch(exec, stream), CUresult::CUDA_SUCCESS);
    }
    gemm.synchronize().unwrap();
    check(
        &gemm.download(&c1).unwrap(),
        "graph, first buffers",
        choice.arithmetic,
    );
    check(
        &gemm.download(&c2).unwrap(),
        "graph, second buffers",
        choice.arithmetic,
    );
    unsafe {
        cuGraphExecDestroy(exec);
        cuGraphDestroy(graph);
    }
    format!("{name}: {}", choice.variant)
}

/// FP8 through the library on the GPU: e4m3 codes and scales in device buffers the caller
/// owns, per tensor (auto and cuBLASLt) and per block (auto), each against the f64 product of
/// the dequantised operands at every 7th element; and with `auto`, per tensor and per block, as
/// a strided batch of two members, the second's A scales doubled: member 0 is within the one
/// problem's bound, member 1 twice it, bit for bit.
#[test]
fn the_library_runs_fp8_with_its_scales_on_device_buffers() {
    let _one_at_a_time = one_gpu_test_at_a_time();
    use cust::memory::{CopyDestination, DeviceBuffer};
    use gpu_gemm::fp8::quantize::{quantize, Operand as Which, Scaling};
    use gpu_gemm::problem::Matrix;
    use gpu_gemm::{Algorithm, Fp8, Gemm, GemmConfig, Math, Transpose};
    let gemm = match Gemm::new() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            return;
        }
    };
    let (m, n, k) = (1024u32, 520u32, 2048u32);
    let config = GemmConfig::new(m, n, k)
        .transposes(Transpose::Yes, Transpose::No)
        .leading_dimensions(k, k, m);
    let mut state = 7u64;
    let mut source = |rows: u32, cols: u32| {
        Matrix::from_fn(rows, cols, rows, 0.0, |_, _| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 40) as f64 / (1u64 << 24) as f64 * 2.0 - 1.0) as f32
        })
    };
    let (a_source, b_source) = (source(k, m), source(k, n));
    /// `codes` with `scales` as `scaling` lays them out.
    fn operand<'a>(
        scaling: Scaling,
        codes: &'a DeviceBuffer<u8>,
        scales: &'a DeviceBuffer<f32>,
    ) -> Fp8<'a> {
        match scaling {
            Scaling::PerTensor => Fp8::per_tensor(codes, scales),
            Scaling::Block => Fp8::per_block(codes, scales),
        }
    }
    for (scaling, algorithm) in [
        (Scaling::PerTensor, Algorithm::Auto(Math::Strict)),
        (Scaling::PerTensor, Algorithm::Cublas),
        (Scaling::Block, Algorithm::Auto(Math::Strict)),
    ] {
        let (a, b) = (
            quantize(&a_source, Which::A, scaling),
            quantize(&b_source, Which::B, scaling),
        );
        let up = |x: &[u8]| DeviceBuffer::from_slice(x).unwrap();
        let (a_codes, b_codes) = (up(&a.codes.data), up(&b.codes.data));
        let (a_scales, b_scales) = (
            DeviceBuffer::from_slice(&a.scales).unwrap(),
            DeviceBuffer::from_slice(&b.scales).unwrap(),
        );
        let mut c = DeviceBuffer::<u16>::zeroed((m * n) as usize).unwrap();
        let (fa, fb) = (
            operand(scaling, &a_codes, &a_scales),
            operand(scaling, &b_codes, &b_scales),
        );
        let choice = gemm.run_fp8(&config, &algorithm, fa, fb, &mut c).unwrap();
        let mut bits = vec![0u16; (m * n) as usize];
        c.copy_to(&mut bits[..]).unwrap();
        let worst_of = |bits: &[u16]| {
            let mut worst = 0f64;
            for at in (0..(m * n) as usize).step_by(7) {
                let (i, j) = (at as u32 % m, at as u32 / m);
                let (mut want, mut magnitude) = (0f64, 0f64);
                for l in 0..k {
                    let product = a.dequantized(l, i) * b.dequantized(l, j);
                    want += product;
                    magnitude += product.abs();
                }
                let got = gpu_gemm::half::bf16::from_bits(bits[at]).to_f64();
                worst = worst.max((got - want).abs() / magnitude);
            }
            worst
        };
        let worst = worst_of(&bits);
        eprintln!(
            "{scaling:?} {}: worst error relative to Σ|a·b| {worst:.1e}",
            choice.variant
        );
        assert!(worst < 1e-2, "{scaling:?} {}: {worst:.1e}", choice.variant);
        if algorithm == Algorithm::Cublas {
            continue;
        }
        let twice = |x: &[u8]| DeviceBuffer::from_slice(&[x, x].concat()).unwrap();
        let doubled: Vec<f32> = a.scales.iter().map(|s| 2.0 * s).collect();
        let a_scales = DeviceBuffer::from_slice(&[&a.scales[..], &doubled].concat()).unwrap();
        let b_scales = DeviceBuffer::from_slice(&[&b.scales[..], &b.scales].concat()).unwrap();
        let (a_codes, b_codes) = (twice(&a.codes.data), twice(&b.codes.data));
        let (size_a, size_b, size_c) = ((k * m) as u64, (k * n) as u64, (m * n) as u64);
        let batch = config.batch(2, size_a, size_b, size_c);
        let mut c = DeviceBuffer::<u16>::zeroed(2 * (m * n) as usize).unwrap();
        let (fa, fb) = (
            operand(scaling, &a_codes, &a_scales),
            operand(scaling, &b_codes, &b_scales),
        );
        let choice = gemm.run_fp8(&batch, &algorithm, fa, fb, &mut c).unwrap();
        let mut members = vec![0u16; 2 * (m * n) as usize];
        c.copy_to(&mut members[..]).unwrap();
        let (first, second) = members.split_at((m * n) as usize);
        let worst = worst_of(first);
        assert!(
            worst < 1e-2,
            "{}: member 0's error {worst:.1e}",
            choice.entry
        );
        let value = |x: &u16| gpu_gemm::half::bf16::from_bits(*x).to_f32();
        assert!(
            second
                .iter()
                .zip(first)
                .all(|(y, x)| value(y) == 2.0 * value(x)),
            "{}: member 1 is not twice member 0",
            choice.entry
        );
        eprintln!(
            "a batch of two, {scaling:?}, {}: member 0's worst error {worst:.1e}, member 1 twice it",
            choice.entry
        );
    }
}

/// The FP32-accurate contract across f32's normal range on the GPU
/// ([`gpu_gemm::verify::WIDE_RANGES`]): every 3xTF32 configuration `auto` may choose on Hopper
/// within 2× the strict kernels' worst error relative to Σ|a·b|, at an edge shape and a large
/// one. Prints the contract's table (TF32 and chapter 1's `tc-3xtf32`, which Ampere-class GPUs
/// run and which has no ranges pass, for comparison).
#[test]
fn fp32_accurate_keeps_its_contract_across_the_normal_range_on_the_gpu() {
    let _one_at_a_time = one_gpu_test_at_a_time();
    use gpu_gemm::verify::{wide_range_operands, worst_error_relative_to_magnitudes, WIDE_RANGES};
    use gpu_gemm::{Algorithm, Gemm, GemmConfig, Math};
    let gemm = match Gemm::new() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            return;
        }
    };
    eprintln!("| m×n×k | rows of A, columns of B | algorithm | ran | worst error / Σ|a·b| |");
    eprintln!("|---|---|---|---|---:|");
    for (m, n, k) in [(1000usize, 1020usize, 996usize), (4096, 4096, 1024)] {
        let config = GemmConfig::new(m as u32, n as u32, k as u32);
        for (rows, cols) in WIDE_RANGES {
            let (a, b) = wide_range_operands((m, n, k), (rows, cols), 3);
            let (a_dev, b_dev) = (gemm.upload(&a).unwrap(), gemm.upload(&b).unwrap());
            let run = |algorithm: &Algorithm| {
                let mut c = gemm.zeros::<f32>(m * n).unwrap();
                let choice = gemm
                    .run(&config, algorithm, &a_dev, &b_dev, &mut c)
                    .unwrap();
                let c = gemm.download(&c).unwrap();
                let error = worst_error_relative_to_magnitudes((m, n, k), (&a, &b, &c), 97);
                eprintln!(
                    "| {m}×{n}×{k} | 2^{rows:?}, 2^{cols:?} | {} | {} | {error:.1e} |",
                    algorithm.label(),
                    choice.variant
                );
                error
            };
            let strict = run(&Algorithm::Auto(Math::Strict));
            for algorithm in [
                Algorithm::Auto(Math::Fp32Accurate),
                Algorithm::kernel_tile("wgmma-3xtf32", 1),
                Algorithm::kernel_tile("wgmma-3xtf32", 2),
            ] {
                let error = run(&algorithm);
                assert!(
                    error <= 2.0 * strict,
                    "{m}×{n}×{k}, rows 2^{rows:?}, columns 2^{cols:?}: {}'s error {error:.1e} is over 2× strict's {strict:.1e}",
                    algorithm.label()
                );
            }
            run(&Algorithm::kernel_tile("tc-3xtf32", 1));
            run(&Algorithm::Auto(Math::Tf32));
        }
    }
    // A strided batch whose two members span the range the opposite ways: each member is
    // scaled by its own ranges (the pass writes m + n words per member).
    let (m, n, k) = (1000usize, 1020usize, 996usize);
    let config = GemmConfig::new(m as u32, n as u32, k as u32).batch(
        2,
        (m * k) as u64,
        (k * n) as u64,
        (m * n) as u64,
    );
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (z, ranges) in WIDE_RANGES.into_iter().enumerate() {
        let (az, bz) = wide_range_operands((m, n, k), ranges, 5 + z as u64);
        a.extend(az);
        b.extend(bz);
    }
    let (a_dev, b_dev) = (gemm.upload(&a).unwrap(), gemm.upload(&b).unwrap());
    let run = |algorithm: &Algorithm| -> Vec<f64> {
        let mut c = gemm.zeros::<f32>(2 * m * n).unwrap();
        let choice = gemm
            .run(&config, algorithm, &a_dev, &b_dev, &mut c)
            .unwrap();
        let c = gemm.download(&c).unwrap();
        let errors: Vec<f64> = (0..2)
            .map(|z| {
                let member = (
                    &a[z * m * k..][..m * k],
                    &b[z * k * n..][..k * n],
                    &c[z * m * n..][..m * n],
                );
                worst_error_relative_to_magnitudes((m, n, k), member, 97)
            })
            .collect();
        eprintln!(
            "| {m}×{n}×{k} × 2 members | both ranges | {} | {} | {:.1e}, {:.1e} |",
            algorithm.label(),
            choice.variant,
            errors[0],
            errors[1]
        );
        errors
    };
    let strict = run(&Algorithm::Auto(Math::Strict));
    for algorithm in [
        Algorithm::Auto(Math::Fp32Accurate),
        Algorithm::kernel_tile("wgmma-3xtf32", 1),
        Algorithm::kernel_tile("wgmma-3xtf32", 2),
    ] {
        let errors = run(&algorithm);
        for z in 0..2 {
            assert!(
                errors[z] <= 2.0 * strict[z],
                "batch member {z}: {}'s error {:.1e} is over 2× strict's {:.1e}",
                algorithm.label(),
                errors[z],
                strict[z]
            );
        }
    }
}

mod epilogue_cases;

/// The fused epilogues on the GPU: the emulator's cases (`emulator_epilogue.rs`), every way a
/// 16-bit kernel writes C, against the f64 reference with the same epilogue.
#[test]
fn fused_epilogues_match_the_f64_reference() {
    let _one_at_a_time = one_gpu_test_at_a_time();
    let Some(backend) = gpu_or_skip("tests/emulator_epilogue.rs runs the same cases") else {
        return;
    };
    for (name, tile, dtype, dims, t, beta, e) in epilogue_cases::cases() {
        let p = epilogue_cases::problem(dtype, dims, t, beta, e);
        let variant = registry::find(name).unwrap();
        let what = format!("{name}:{tile:?} {} {dims:?} {e}", dtype.name());
        let report = gpu_gemm::run::execute(&backend, variant, tile, &p, epilogue_cases::ONCE)
            .unwrap_or_else(|e| panic!("{what}: {e:#}"));
        let check = report.check.expect("checked run");
        assert!(check.passed(), "{what}: {}", check.summary());
        println!("{what}: {}", check.summary());
    }
}

/// The amax epilogue in a CUDA graph: a plan's `enqueue_with_bias` (the GEMM and the
/// one-thread last step) captured once and replayed twice. After each replay the amax and its
/// scale equal C's largest |element| and 448 / amax exactly, the same both times (each replay
/// finds the accumulator zeroed by the one before, with no memset in the graph), and the two
/// f32 at `Plan::amax_device_address` are those `Plan::amax` reads.
#[test]
fn the_amax_epilogue_replays_in_a_cuda_graph() {
    let _one_at_a_time = one_gpu_test_at_a_time();
    use cudarc::driver::sys::{
        cuGraphDestroy, cuGraphExecDestroy, cuGraphInstantiateWithFlags, cuGraphLaunch,
        cuMemcpyDtoH_v2, CUresult,
    };
    use gpu_gemm::half::bf16;
    use gpu_gemm::{Activation, Algorithm, Bias, Gemm, GemmConfig, Math};
    let gemm = match Gemm::new() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            return;
        }
    };
    let p = epilogue_cases::problem(
        Dtype::Bf16,
        (2048, 2000, 1024),
        Transposes::NN,
        0.0,
        "bias,gelu,amax",
    );
    let s = p.shape;
    let inputs = gpu_gemm::problem::Inputs::<bf16>::generate(&p);
    let config = GemmConfig::new(s.m, s.n, s.k)
        .scale(p.alpha, 0.0)
        .leading_dimensions(s.lda, s.ldb, s.ldc)
        .epilogue(Bias::PerRow, Activation::Gelu)
        .amax();
    let (a, b, bias) = (
        gemm.upload(&inputs.a.data).unwrap(),
        gemm.upload(&inputs.b.data).unwrap(),
        gemm.upload(&inputs.bias).unwrap(),
    );
    let mut c = gemm.upload(&inputs.c.data).unwrap();
    let mut plan = gemm
        .plan::<bf16>(&config, &Algorithm::Auto(Math::Strict))
        .unwrap();
    gemm.synchronize().unwrap();
    let stream = capture_stream(&gemm);
    begin_capture(stream);
    let enqueued = plan.enqueue_with_bias(&a, &b, &bias, &mut c);
    let graph = end_capture(stream);
    enqueued.unwrap();
    let graph = graph.expect("the capture broke");
    let mut exec = std::ptr::null_mut();
    let address = plan
        .amax_device_address()
        .expect("a GPU plan with the amax");
    let mut seen = Vec::new();
    for replay in 0..2 {
        unsafe {
            if replay == 0 {
                assert_eq!(
                    cuGraphInstantiateWithFlags(&mut exec, graph, 0),
                    CUresult::CUDA_SUCCESS
                );
            }
            assert_eq!(cuGraphLaunch(exec, stream), CUresult::CUDA_SUCCESS);
        }
        gemm.synchronize().unwrap();
        let amax = plan.amax().unwrap();
        let result = gemm.download(&c).unwrap();
        let check = gpu_gemm::verify::check_amax(&p, &result, [amax.amax, amax.scale]);
        assert!(check.passed(), "replay {replay}: {}", check.summary());
        let mut on_device = [0f32; 2];
        let status = unsafe { cuMemcpyDtoH_v2(on_device.as_mut_ptr().cast(), address, 8) };
        assert_eq!(status, CUresult::CUDA_SUCCESS);
        assert_eq!(on_device, [amax.amax, amax.scale], "replay {replay}");
        println!(
            "replay {replay} ({}): {}",
            plan.choice().entry,
            check.summary()
        );
        seen.push(amax);
    }
    assert_eq!(
        seen[0], seen[1],
        "the second replay found the accumulator not zeroed"
    );
    unsafe {
        cuGraphExecDestroy(exec);
        cuGraphDestroy(graph);
    }
}

mod batch_cases;

/// Strided batches on the GPU: the emulator's cases (`emulator_batch.rs`), every 16-bit kernel
/// that runs a batch in every layout it computes, the f32 and f64 ones at their default tiles, then `auto`
/// and cuBLAS's strided batched GEMM at a size whose members fill several waves, each member
/// checked against its f64 reference.
#[test]
fn strided_batches_match_the_f64_reference() {
    let _one_at_a_time = one_gpu_test_at_a_time();
    let Some(backend) = gpu_or_skip("tests/emulator_batch.rs runs the same cases") else {
        return;
    };
    for (i, (variant, t)) in batch_cases::batched_kernels().into_iter().enumerate() {
        let dtype = [Dtype::Bf16, Dtype::F16][i % 2];
        let beta = [0.0, 0.5][i / 2 % 2];
        let p = batch_cases::problem(dtype, (136, 72, 64), t, beta);
        let what = format!(
            "{} {} {} beta {beta}",
            variant.name(),
            t.name(),
            dtype.name()
        );
        let report = gpu_gemm::run::execute(&backend, variant, None, &p, batch_cases::ONCE)
            .unwrap_or_else(|e| panic!("{what}: {e:#}"));
        let check = report.check.expect("checked run");
        assert!(check.passed(), "{what}: {}", check.summary());
        println!("{what}: {}", check.summary());
    }
    // Runs one checked batch and prints its check, the kernel `auto` took included.
    let checked = |variant: Variant, p: &Problem, what: String| {
        let report = gpu_gemm::run::execute(&backend, variant, None, p, batch_cases::ONCE)
            .unwrap_or_else(|e| panic!("{what}: {e:#}"));
        let check = report.check.expect("checked run");
        assert!(check.passed(), "{what}: {}", check.summary());
        println!("{what} ({}): {}", report.variant, check.summary());
    };
    for (i, name) in batch_cases::full_precision().iter().enumerate() {
        let variant = registry::find(name).unwrap();
        let dtypes = [Dtype::F32, Dtype::F64];
        for dtype in dtypes.into_iter().filter(|d| variant.dtypes().contains(d)) {
            let beta = [0.0, 0.5][i % 2];
            let p = batch_cases::problem(dtype, (136, 72, 64), Transposes::NN, beta);
            checked(variant, &p, format!("{name} {} beta {beta}", dtype.name()));
        }
    }
    for dims in [(128, 128, 128), (512, 512, 64), (2048, 128, 512)] {
        let mut p = batch_cases::problem(Dtype::Bf16, dims, Transposes::NN, 0.0);
        p.batch = p.packed_strides(300);
        for name in ["auto", "cublas"] {
            checked(
                registry::find(name).unwrap(),
                &p,
                format!("{name} {dims:?} × 300"),
            );
        }
    }
    // One A or one B shared by every member (a stride of 0), read by the TMA kernels as the
    // overlapping layers of a map; a transposed B in f32, copied once for every member.
    for (dtype, t) in [
        (Dtype::Bf16, Transposes::ALL[1]),
        (Dtype::F16, Transposes::NN),
        (Dtype::F32, Transposes::ALL[2]),
    ] {
        for shared in ['A', 'B'] {
            let mut p = batch_cases::problem(dtype, (136, 72, 64), t, 0.5);
            p.batch = p.packed_strides(5);
            match shared {
                'A' => p.batch.stride_a = 0,
                _ => p.batch.stride_b = 0,
            }
            for name in ["auto", "cublas"] {
                let what = format!(
                    "{name} {} {} {shared} shared by 5 members",
                    dtype.name(),
                    t.name()
                );
                checked(registry::find(name).unwrap(), &p, what);
            }
        }
    }
}

#[path = "group_cases/mod.rs"]
#[allow(dead_code)]
mod group_cases;

/// Grouped GEMMs on the GPU: the emulator's cases (`emulator_groups.rs`), every kernel that runs
/// groups in every layout it computes, contiguous and masked; then `auto`, cuBLAS's call per
/// group and cuBLAS's grouped GEMM at a size of DeepGEMM's sets (fewer tokens), each group
/// checked against its f64 reference and every column no group owns left as it was.
#[test]
fn grouped_gemms_match_the_f64_reference() {
    let _one_at_a_time = one_gpu_test_at_a_time();
    use gpu_gemm::half::bf16;
    use gpu_gemm::problem::Transpose;
    let Some(backend) = gpu_or_skip("tests/emulator_groups.rs runs the same cases") else {
        return;
    };
    group_cases::every_kernel_in_both_layouts(&backend);
    let tn = Transposes::new(Transpose::Yes, Transpose::No);
    let table: Vec<u32> = (0..32).map(|j| j / 8).collect();
    let contiguous = group_cases::contiguous(Dtype::Bf16, (4096, 2048), tn, &table, 4, 0.0);
    let masked = group_cases::masked(Dtype::Bf16, (4096, 512, 2048), tn, &[512, 300, 77, 0], 0.0);
    for (p, table) in [(contiguous, &table[..]), (masked, &[512, 300, 77, 0][..])] {
        for variant in ["auto", "cublas", "cublas-grouped"].map(|v| registry::find(v).unwrap()) {
            let what = format!("{} {:?}", variant.name(), p.groups);
            let check = group_cases::run_checked::<bf16>(&backend, variant, None, &p, table)
                .unwrap_or_else(|e| panic!("{what}: {e:#}"));
            assert!(check.passed(), "{what}: {}", check.summary());
            println!("{what}: {}", check.summary());
        }
    }
}

/// The block-scaled e4m3 grouped GEMM on the GPU, both layouts, every configuration that walks
/// groups, `auto`, and cuBLASLt called once per group: each group against the f64 reference of
/// its dequantised operands, every column no group owns unchanged (the emulator's side, with
/// uneven tables and planted bugs, is `tests/emulator_fp8_groups.rs`).
#[test]
fn grouped_fp8_gemms_match_the_f64_reference() {
    let _one_at_a_time = one_gpu_test_at_a_time();
    use gpu_gemm::fp8::quantize::{Fp8Problem, Scaling};
    use gpu_gemm::fp8::run::execute_many;
    use gpu_gemm::launch::Fp8Groups;
    use kernels_gpu::gemm::GroupLayout;
    let Some(backend) = gpu_or_skip("tests/emulator_fp8_groups.rs has the emulator's side") else {
        return;
    };
    if backend.arch() != Some(90) {
        eprintln!("SKIPPED: the FP8 kernels need sm_90a (H100, H200)");
        return;
    }
    let timing = Timing::CHECK_ONCE;
    // `auto` takes `:9` (contiguous) and `:11` (masked, `:8`'s kernel walking packed tiles).
    let mut variants: Vec<_> = [6, 1, 2, 3, 5, 8]
        .into_iter()
        .map(|t| (registry::find("wgmma-fp8-block").unwrap(), Some(t)))
        .collect();
    variants.push((registry::find("auto").unwrap(), None));
    variants.push((registry::find("cublas").unwrap(), None));
    let mut failures = Vec::new();
    // Contiguous: three groups of 384 columns; masked: four of up to 336 (counts drawn from the
    // seed in multiples of 16). m = 1008 ends inside a tile and k = 1008 inside a block of
    // scales; both are multiples of 16, without which cuBLASLt's FP8 matmul has no algorithm.
    for (layout, n, groups) in [
        (GroupLayout::Contiguous, 1152, 3),
        (GroupLayout::Masked, 336, 4),
    ] {
        let p = Fp8Problem {
            b_format: gpu_gemm::fp8::quantize::Format::E4m3,
            shape: Shape {
                m: 1008,
                n,
                k: 1008,
                lda: 1024,
                ldb: 1040,
                ldc: 1008,
            },
            alpha: 1.5,
            beta: -0.5,
            scaling: Scaling::Block,
            init: Init::Random,
            seed: 29,
            outliers: true,
            epilogue: kernels_gpu::fused::Epilogue::NONE,
            groups: Fp8Groups::grouped_as(layout, groups),
        };
        for report in execute_many(&backend, &variants, &p, timing, |_| {}) {
            match report {
                Ok(r) => {
                    let check = r.check.as_ref().unwrap();
                    println!(
                        "{layout:?} {}: relative error {:.2e}",
                        r.variant, check.relative_frobenius
                    );
                    if !r.passed() {
                        failures.push(format!("{layout:?} {}: {check:?}", r.variant));
                    }
                }
                Err(e) => failures.push(format!("{layout:?}: {e:#}")),
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A bf16 decode step, T,N: 64 tokens through 2112 rows of weights over `k`, random inputs.
fn decode_step(k: u32, beta: f64) -> Problem {
    Problem {
        shape: Shape {
            m: 2112,
            n: 64,
            k,
            lda: k,
            ldb: k,
            ldc: 2112,
        },
        transposes: Transposes::new(
            gpu_gemm::problem::Transpose::Yes,
            gpu_gemm::problem::Transpose::No,
        ),
        dtype: Dtype::Bf16,
        alpha: 1.0,
        beta,
        init: Init::Random,
        seed: 11,
        epilogue: Epilogue::NONE,
        batch: kernels_gpu::gemm::Batch::ONE,
        groups: kernels_gpu::gemm::GroupLayout::None,
    }
}

/// `Timing::cold` (`--cold`): each run behind a 256 MiB write on the stream, which must leave
/// the operands and C alone (the check passes after it), and whose runs are timed and counted
/// as the warm ones are; cuBLAS's yardstick goes through the same protocol.
#[test]
fn cold_timing_writes_before_each_run_and_leaves_the_result_alone() {
    let _one_at_a_time = one_gpu_test_at_a_time();
    let Some(backend) = gpu_or_skip("the CLI's parse of --cold is tested in host/src/cli.rs")
    else {
        return;
    };
    let p = decode_step(1024, 0.5);
    let timing = Timing {
        warmup: 1,
        iters: 5,
        budget_ms: f64::INFINITY,
        check: true,
        cold: true,
        clock: Clock::Events,
    };
    for name in ["auto", "cublas"] {
        let variant = registry::find(name).unwrap();
        let r = gpu_gemm::run::execute(&backend, variant, None, &p, timing).unwrap();
        let check = r.check.as_ref().expect("checked");
        println!(
            "{} cold: median {:.4} ms over {} runs; {}",
            r.variant,
            r.median_ms,
            r.runs,
            check.summary()
        );
        assert_eq!(r.runs, 5, "{name}");
        assert!(r.min_ms > 0.0 && r.median_ms.is_finite(), "{name}");
        assert!(r.passed(), "{name}: {}", check.summary());
    }
}

/// `Clock::Kernels` (`--clock kernels`): the same runs timed by the kernels' own stamps take
/// less than the events around them, which also hold the stream's gaps, and more than nothing;
/// cuBLAS's split-k at this shape runs two kernels a call, and their span is its time. Skips
/// where CUPTI cannot be loaded (a driver without the toolkit's extras/CUPTI).
#[test]
fn the_kernels_clock_reads_less_than_the_events_around_them() {
    let _one_at_a_time = one_gpu_test_at_a_time();
    let Some(backend) = gpu_or_skip("the spans' arithmetic is tested in kernel_clock.rs") else {
        return;
    };
    if let Err(e) = gpu_gemm::kernel_clock::KernelClock::get() {
        eprintln!("SKIPPED: {e:#}");
        return;
    }
    let p = decode_step(7168, 0.0);
    for name in ["auto", "cublas"] {
        let variant = registry::find(name).unwrap();
        let [events, kernels] = [Clock::Events, Clock::Kernels].map(|clock| {
            let timing = Timing {
                warmup: 2,
                iters: 20,
                budget_ms: f64::INFINITY,
                check: clock == Clock::Kernels,
                cold: true,
                clock,
            };
            gpu_gemm::run::execute(&backend, variant, None, &p, timing).unwrap()
        });
        println!(
            "{}: median {:.4} ms by events, {:.4} ms by the kernels' stamps",
            kernels.variant, events.median_ms, kernels.median_ms
        );
        assert_eq!(kernels.runs, 20, "{name}");
        assert!(kernels.min_ms > 0.0, "{name}");
        assert!(kernels.median_ms < events.median_ms, "{name}");
        assert!(kernels.passed(), "{name}");
    }
}
