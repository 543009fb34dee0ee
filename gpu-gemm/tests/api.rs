//! The library's call on the CPU emulator: every way a call is refused, each with its message,
//! and results against an f64 product for each type and contract. (The GPU's side of the same
//! call is in `tests/tests/gpu.rs`.)
use gpu_gemm::api::{Memory, Operand};
use gpu_gemm::half::{bf16, f16};
use gpu_gemm::{Algorithm, Element, Gemm, GemmConfig, GemmError, Math, Transpose, Tuning};

/// Column-major inputs in [-1, 1) from a small generator, rounded to the type.
fn matrix<T: Element>(rows: usize, cols: usize, seed: u64) -> Vec<T> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..rows * cols)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            T::from_f64(((state >> 40) as f64 / (1u64 << 24) as f64) * 2.0 - 1.0)
        })
        .collect()
}

/// `α·A·B + β·C` in f64, column-major with the config's leading dimensions.
fn reference<T: Element>(c: &GemmConfig, a: &[T], b: &[T], c0: &[T]) -> Vec<f64> {
    let mut out: Vec<f64> = c0.iter().map(|x| x.to_f64()).collect();
    for j in 0..c.n as usize {
        for i in 0..c.m as usize {
            let dot: f64 = (0..c.k as usize)
                .map(|l| a[i + l * c.lda as usize].to_f64() * b[l + j * c.ldb as usize].to_f64())
                .sum();
            let at = i + j * c.ldc as usize;
            out[at] = c.alpha * dot + c.beta * out[at];
        }
    }
    out
}

/// The largest error over C relative to the largest |C|.
fn relative_error<T: Element>(got: &[T], want: &[f64]) -> f64 {
    let scale = want.iter().fold(0f64, |m, x| m.max(x.abs()));
    got.iter()
        .zip(want)
        .map(|(g, w)| (g.to_f64() - w).abs())
        .fold(0f64, f64::max)
        / scale
}

/// Runs a call on the emulator and returns its relative error and what ran.
fn run_on_emulator<T: Element>(config: GemmConfig, algorithm: Algorithm) -> (f64, String) {
    let gemm = Gemm::emulator();
    let a = matrix::<T>(config.lda as usize, config.k as usize, 1);
    let b = matrix::<T>(config.ldb as usize, config.n as usize, 2);
    let c0 = matrix::<T>(config.ldc as usize, config.n as usize, 3);
    let mut c = c0.clone();
    let choice = gemm.run(&config, &algorithm, &a, &b, &mut c).unwrap();
    let want = reference(&config, &a, &b, &c0);
    (relative_error(&c, &want), choice.variant)
}

#[test]
fn every_type_and_contract_computes_the_product() {
    let config = GemmConfig::new(130, 72, 96)
        .scale(0.5, -1.25)
        .leading_dimensions(136, 96, 132);
    // (type, contract, bound on the error relative to max |C|, what must have run)
    let (e, v) = run_on_emulator::<f32>(config, Algorithm::Auto(Math::Strict));
    assert!(e < 1e-5, "f32 strict {v}: {e:e}");
    let (e, v) = run_on_emulator::<f32>(config, Algorithm::Auto(Math::Fp32Accurate));
    assert!(v.starts_with("wgmma-3xtf32"), "{v}");
    assert!(e < 1e-5, "f32 fp32-accurate {v}: {e:e}");
    let (e, v) = run_on_emulator::<f32>(config, Algorithm::Auto(Math::Tf32));
    assert!(v.starts_with("wgmma-tf32"), "{v}");
    assert!(e < 1e-2 && e > 1e-6, "TF32 is not f32: {v}: {e:e}");
    let (e, v) = run_on_emulator::<f64>(config, Algorithm::Auto(Math::Fp32Accurate));
    assert!(
        e < 1e-13,
        "f64 runs its own arithmetic whatever the contract: {v}: {e:e}"
    );
    // The 16-bit kernels read rows through the TMA, whose strides are multiples of 16 bytes.
    let half_config = config.leading_dimensions(136, 96, 136);
    let (e, v) = run_on_emulator::<bf16>(half_config, Algorithm::Auto(Math::Strict));
    assert!(e < 2e-2, "bf16 {v}: {e:e}");
    // The TMA store writes C's columns in 16-byte pieces: m a multiple of 8.
    let stored = GemmConfig::new(136, 72, 96).scale(0.5, -1.25);
    let (e, v) = run_on_emulator::<f16>(stored, Algorithm::kernel_tile("wgmma-tma-store", 2));
    assert_eq!(v, "wgmma-tma-store:2");
    assert!(e < 2e-3, "f16 {v}: {e:e}");
}

#[test]
fn buffers_made_by_the_handle_run_and_come_back() {
    let gemm = Gemm::emulator();
    assert!(!gemm.is_gpu() && gemm.stream().is_none());
    assert_eq!(gemm.device(), "the CPU emulator");
    let config = GemmConfig::new(64, 64, 64);
    let a = matrix::<f32>(64, 64, 7);
    let (ab, bb) = (gemm.upload(&a).unwrap(), gemm.upload(&a).unwrap());
    let mut cb = gemm.zeros::<f32>(64 * 64).unwrap();
    let algorithm = Algorithm::kernel("v4");
    let choice = gemm.run(&config, &algorithm, &ab, &bb, &mut cb).unwrap();
    assert_eq!(choice.entry, "gemm_v4_f32");
    assert_eq!(
        gemm.choose::<f32>(&config, &algorithm).unwrap(),
        choice,
        "choose says what run runs"
    );
    let c = gemm.download(&cb).unwrap();
    let want = reference(&config, &a, &a, &vec![0f32; 64 * 64]);
    assert!(relative_error(&c, &want) < 1e-5);
    assert!(choice.to_string().contains("gemm_v4_f32"), "{choice}");
}

/// A call refused: its error, whose message must contain `says`.
#[track_caller]
fn refused<T: Element>(
    config: GemmConfig,
    algorithm: Algorithm,
    (a, b, c): (&[T], &[T], &mut [T]),
    says: &str,
) -> GemmError {
    let e = Gemm::emulator()
        .run(&config, &algorithm, a, b, c)
        .expect_err("the call must be refused");
    assert!(e.to_string().contains(says), "`{e}` does not say `{says}`");
    e
}

fn buffers(config: &GemmConfig) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    (
        matrix(config.lda as usize, config.k as usize, 1),
        matrix(config.ldb as usize, config.n as usize, 2),
        vec![0.0; config.ldc as usize * config.n as usize],
    )
}

#[test]
fn sizes_and_leading_dimensions_that_describe_no_matrix_are_refused() {
    let good = GemmConfig::new(8, 8, 8);
    let (a, b, mut c) = buffers(&good);
    let auto = Algorithm::Auto(Math::Strict);
    let e = refused(
        GemmConfig::new(0, 8, 8),
        auto.clone(),
        (&a, &b, &mut c),
        "m, n and k must be at least 1",
    );
    assert!(matches!(e, GemmError::InvalidConfig(_)));
    let e = refused(
        good.leading_dimensions(4, 8, 8),
        auto,
        (&a, &b, &mut c),
        "lda = 4 is smaller than the number of rows (8)",
    );
    assert!(matches!(e, GemmError::InvalidConfig(_)));
    // A transposed A is stored k×m: lda is checked against k.
    let e = refused(
        GemmConfig::new(8, 8, 16)
            .transposes(Transpose::Yes, Transpose::No)
            .leading_dimensions(8, 16, 8),
        Algorithm::Cublas,
        (&a, &b, &mut c),
        "lda = 8 is smaller than the number of rows (16) of A, stored k×m since op(A) = Aᵀ",
    );
    assert!(matches!(e, GemmError::InvalidConfig(_)));
}

#[test]
fn unknown_and_unsupported_algorithms_are_refused_with_the_reason() {
    let config = GemmConfig::new(8, 8, 8);
    let (a, b, mut c) = buffers(&config);
    let e = refused(
        config,
        Algorithm::kernel("v99"),
        (&a, &b, &mut c),
        "unknown variant `v99`",
    );
    assert!(matches!(e, GemmError::UnknownAlgorithm(_)));
    let e = refused(
        config,
        Algorithm::kernel("cpu-naive"),
        (&a, &b, &mut c),
        "not a GPU kernel",
    );
    assert!(matches!(e, GemmError::UnknownAlgorithm(_)));
    // A type the kernel has no version of.
    let e = refused(
        config,
        Algorithm::kernel("tc-f64"),
        (&a, &b, &mut c),
        "has no f32 version",
    );
    assert!(matches!(e, GemmError::Unsupported { .. }));
    // A tile it does not take.
    let e = refused(
        config,
        Algorithm::kernel_tile("v4", 3),
        (&a, &b, &mut c),
        "has no tile parameter",
    );
    assert!(matches!(e, GemmError::Unsupported { .. }));
    // Transposes: a kernel that computes N,N only says so; `auto` runs it, a strided batch
    // included, on copies of A turned the other way round, one per member.
    let transposed = config.transposes(Transpose::Yes, Transpose::No);
    let e = refused(
        transposed,
        Algorithm::kernel("wgmma-3xtf32"),
        (&a, &b, &mut c),
        "`wgmma-3xtf32` cannot run this GEMM: wgmma-3xtf32 computes op(A)=A, op(B)=B only (N,N); asked for T,N (op(A)=Aᵀ, op(B)=B)",
    );
    assert!(matches!(e, GemmError::Unsupported { .. }));
    let (batched, (ab, bb, mut cb)) = transposed_batch();
    let choice = Gemm::emulator()
        .run(&batched, &Algorithm::Auto(Math::Strict), &ab, &bb, &mut cb)
        .unwrap();
    assert!(
        choice
            .reason
            .contains("A copied transposed (ld 32, each of its 2 members)"),
        "{}",
        choice.reason
    );
    // cuBLAS computes it, on a GPU.
    let e = refused(
        transposed,
        Algorithm::Cublas,
        (&a, &b, &mut c),
        "cuBLAS runs on a GPU only",
    );
    assert!(matches!(e, GemmError::Unsupported { .. }));
    // cuBLAS needs a GPU.
    let e = refused(
        config,
        Algorithm::Cublas,
        (&a, &b, &mut c),
        "cuBLAS runs on a GPU only",
    );
    assert!(matches!(e, GemmError::Unsupported { .. }));
}

#[test]
fn a_shape_outside_a_kernels_constraints_is_refused_with_the_constraint() {
    // The 16-bit kernels load rows through the TMA, whose rows are multiples of 16 bytes: an
    // odd lda in bf16 is 2 bytes short of one.
    let config = GemmConfig::new(7, 8, 8).leading_dimensions(7, 8, 8);
    let a = vec![bf16::ZERO; 7 * 8];
    let b = vec![bf16::ZERO; 8 * 8];
    let mut c = vec![bf16::ZERO; 7 * 8];
    let e = refused(
        config,
        Algorithm::kernel("wgmma-16bit"),
        (&a, &b, &mut c),
        "lda = 7",
    );
    assert!(matches!(e, GemmError::Unsupported { .. }), "{e:?}");
}

#[test]
fn buffers_too_small_for_their_leading_dimensions_are_refused() {
    let config = GemmConfig::new(8, 8, 8).leading_dimensions(8, 8, 10);
    let (a, b, _) = buffers(&config);
    // C needs ldc·(n - 1) + m = 10·7 + 8 = 78 elements.
    let mut c = vec![0f32; 77];
    let e = refused(
        config,
        Algorithm::kernel("v4"),
        (&a, &b, &mut c),
        "C holds 77 elements; a 8×8 matrix with leading dimension 10 needs 78",
    );
    assert!(matches!(
        e,
        GemmError::BufferTooSmall {
            operand: 'C',
            len: 77,
            needed: 78,
            ..
        }
    ));
    let mut c = vec![0f32; 78];
    let e = refused(
        config,
        Algorithm::kernel("v4"),
        (&a[..63], &b, &mut c),
        "A holds 63 elements",
    );
    assert!(matches!(e, GemmError::BufferTooSmall { operand: 'A', .. }));
}

#[test]
fn an_operand_off_a_16_byte_boundary_is_refused() {
    let config = GemmConfig::new(8, 8, 8);
    let (a, _, mut c) = buffers(&config);
    let storage = vec![0f32; 8 * 8 + 4];
    // An offset of 1 to 3 elements that leaves the 16-byte grid, whatever the allocator gave.
    let offset = (1..4)
        .find(|o| !(storage.as_ptr() as usize + 4 * o).is_multiple_of(16))
        .unwrap();
    let shifted = &storage[offset..offset + 64];
    let e = refused(
        config,
        Algorithm::kernel("v4"),
        (&a, shifted, &mut c),
        "not a multiple of 16 bytes",
    );
    assert!(matches!(
        e,
        GemmError::Misaligned {
            operand: 'B',
            align: 16,
            ..
        }
    ));
}

/// Device memory as a program could describe it: the emulator cannot read it.
struct ForeignDeviceMemory;

impl Operand<f32> for ForeignDeviceMemory {
    fn memory(&self) -> Memory<'_, f32> {
        Memory::Device {
            address: 0x7f00_0000_0000,
            len: 64,
        }
    }
}

#[test]
fn device_memory_given_to_the_emulator_is_refused() {
    let config = GemmConfig::new(8, 8, 8);
    let (a, _, mut c) = buffers(&config);
    let e = Gemm::emulator()
        .run(
            &config,
            &Algorithm::kernel("v4"),
            &a,
            &ForeignDeviceMemory,
            &mut c,
        )
        .unwrap_err();
    assert!(matches!(
        e,
        GemmError::WrongMemory {
            operand: 'B',
            found: "device",
            needs: "host",
            ..
        }
    ));
    assert_eq!(
        e.to_string(),
        "B is in device memory, but this handle runs on the CPU emulator, which needs host memory"
    );
}

#[test]
fn without_a_driver_the_gpu_handle_says_so_and_names_the_emulator() {
    match Gemm::new() {
        Ok(gemm) => {
            // A machine with a GPU: the handle runs there (tests/tests/gpu.rs checks results).
            assert!(gemm.is_gpu());
            eprintln!(
                "a GPU is present ({}): the missing-driver error cannot be triggered here",
                gemm.device()
            );
        }
        Err(e) => {
            assert!(matches!(e, GemmError::NoGpu(_)), "{e:?}");
            let text = e.to_string();
            assert!(text.starts_with("no GPU to run on: "), "{text}");
            assert!(
                text.contains("`Gemm::emulator()` runs the same kernels on the CPU"),
                "{text}"
            );
        }
    }
}

#[test]
fn tuned_on_the_emulator_runs_autos_choice_and_leaves_the_cache_alone() {
    let cache =
        std::env::temp_dir().join(format!("gpu-gemm-api-{}/tuning.csv", std::process::id()));
    let gemm = Gemm::emulator().with_tuning_cache(&cache);
    assert_eq!(gemm.tuning_cache().as_deref(), Some(cache.as_path()));
    let config = GemmConfig::new(130, 72, 96)
        .scale(0.5, -1.25)
        .leading_dimensions(136, 96, 132);
    let a = matrix::<f32>(136, 96, 1);
    let b = matrix::<f32>(96, 72, 2);
    let c0 = matrix::<f32>(132, 72, 3);
    let mut c = c0.clone();
    let tuned = Algorithm::Tuned(Math::Fp32Accurate);
    let choice = gemm.run(&config, &tuned, &a, &b, &mut c).unwrap();
    let auto = gemm
        .choose::<f32>(&config, &Algorithm::Auto(Math::Fp32Accurate))
        .unwrap();
    assert_eq!(
        (&choice.variant, &choice.entry),
        (&auto.variant, &auto.entry)
    );
    assert_eq!(choice.tuning, Some(Tuning::NotTuned));
    assert!(
        choice.reason.starts_with("not tuned: on the CPU emulator")
            && choice.reason.ends_with(&auto.reason),
        "{choice}"
    );
    assert!(relative_error(&c, &reference(&config, &a, &b, &c0)) < 1e-5);
    assert!(!cache.exists(), "the emulator writes no cache");
    assert_eq!(gemm.choose::<f32>(&config, &tuned).unwrap(), choice);
    // The other algorithms say nothing of tuning.
    assert_eq!(auto.tuning, None);
}

/// A, B and C on the host.
type HostBuffers = (Vec<f32>, Vec<f32>, Vec<f32>);

/// Two 8×8×8 members in f32 with A stored transposed, and their buffers: a batch that `auto`
/// runs on a transposed copy of each member's A, and that tuning refuses (it times one problem).
fn transposed_batch() -> (GemmConfig, HostBuffers) {
    let config = GemmConfig::new(8, 8, 8)
        .transposes(Transpose::Yes, Transpose::No)
        .batch(2, 64, 64, 64);
    (config, (vec![0.0; 128], vec![0.0; 128], vec![0.0; 128]))
}

/// `C = op(A)·op(B)` in f64, A and B as stored under the config's transposes.
fn reference_with_transposes<T: Element>(c: &GemmConfig, a: &[T], b: &[T]) -> Vec<f64> {
    let (lda, ldb) = (c.lda as usize, c.ldb as usize);
    let a_at = |i: usize, l: usize| match c.transa {
        Transpose::No => a[i + l * lda],
        Transpose::Yes => a[l + i * lda],
    };
    let b_at = |l: usize, j: usize| match c.transb {
        Transpose::No => b[l + j * ldb],
        Transpose::Yes => b[j + l * ldb],
    };
    let mut out = vec![0f64; c.ldc as usize * c.n as usize];
    for j in 0..c.n as usize {
        for i in 0..c.m as usize {
            out[i + j * c.ldc as usize] = (0..c.k as usize)
                .map(|l| a_at(i, l).to_f64() * b_at(l, j).to_f64())
                .sum();
        }
    }
    out
}

/// A row-major program's f32 and f64 GEMMs (`Y = X·Wᵀ` and the rest of the four layouts) run:
/// `auto` copies each operand stored transposed the other way round with the transposing
/// kernel, then runs an N,N kernel on the copy, in every contract. The shape crosses the copy's
/// 32 × 32 tiles, and the leading dimensions are padded by odd amounts.
#[test]
fn every_layout_runs_in_f32_and_f64_through_a_transposing_copy() {
    fn run<T: Element>(layout: (Transpose, Transpose), math: Math) {
        let (m, n, k) = (70, 33, 45);
        let stored = |op: Transpose, rows: u32, cols: u32| match op {
            Transpose::No => (rows, cols),
            Transpose::Yes => (cols, rows),
        };
        let (a_rows, a_cols) = stored(layout.0, m, k);
        let (b_rows, b_cols) = stored(layout.1, k, n);
        let config = GemmConfig::new(m, n, k)
            .transposes(layout.0, layout.1)
            .leading_dimensions(a_rows + 3, b_rows + 5, m + 1);
        let a = matrix::<T>((a_rows + 3) as usize, a_cols as usize, 11);
        let b = matrix::<T>((b_rows + 5) as usize, b_cols as usize, 12);
        let mut c = vec![T::from_f64(0.0); (m + 1) as usize * n as usize];
        let choice = Gemm::emulator()
            .run(&config, &Algorithm::Auto(math), &a, &b, &mut c)
            .unwrap_or_else(|e| panic!("{layout:?} {math:?}: {e}"));
        assert!(
            choice.reason.contains("copied transposed"),
            "{layout:?}: {}",
            choice.reason
        );
        let error = relative_error(&c, &reference_with_transposes(&config, &a, &b));
        let tolerance = if math == Math::Tf32 { 1e-2 } else { 1e-5 };
        assert!(
            error < tolerance,
            "{layout:?} {math:?} ({}): error {error}",
            choice.variant
        );
    }
    use Transpose::{No, Yes};
    for layout in [(Yes, No), (No, Yes), (Yes, Yes)] {
        for math in [Math::Strict, Math::Tf32, Math::Fp32Accurate] {
            run::<f32>(layout, math);
        }
        run::<f64>(layout, Math::Strict);
    }
}

/// bf16 and f16 N,T and T,T at an m (and ldc) off the 16-byte grid, which their kernels cannot
/// store C at: `auto` copies B transposed and runs the N,N or T,N kernel, which can.
#[test]
fn sixteen_bit_n_t_and_t_t_run_at_any_m_through_a_transposed_b() {
    fn run<T: Element>(transa: Transpose) {
        let (m, n, k) = (37, 40, 48);
        let a_rows = if transa == Transpose::Yes { k } else { m };
        let a_cols = if transa == Transpose::Yes { m } else { k };
        let config = GemmConfig::new(m, n, k)
            .transposes(transa, Transpose::Yes)
            .leading_dimensions(a_rows, n + 3, m);
        let a = matrix::<T>(a_rows as usize, a_cols as usize, 21);
        let b = matrix::<T>((n + 3) as usize, k as usize, 22);
        let mut c = vec![T::from_f64(0.0); (m * n) as usize];
        let choice = Gemm::emulator()
            .run(&config, &Algorithm::Auto(Math::Strict), &a, &b, &mut c)
            .unwrap_or_else(|e| panic!("{transa:?},T: {e}"));
        assert!(
            choice.reason.contains("B copied transposed"),
            "{}",
            choice.reason
        );
        let error = relative_error(&c, &reference_with_transposes(&config, &a, &b));
        assert!(
            error < 1e-2,
            "{transa:?},T ({}): error {error}",
            choice.variant
        );
    }
    for transa in [Transpose::No, Transpose::Yes] {
        run::<bf16>(transa);
        run::<f16>(transa);
    }
}

#[test]
fn tuned_runs_auto_s_choice_where_the_operands_are_copied_first() {
    // A batch is refused by `Tuned` itself (it times one problem), and by `Auto` with its reason.
    let (config, (a, b, mut c)) = transposed_batch();
    let e = refused(
        config,
        Algorithm::Tuned(Math::Strict),
        (&a, &b, &mut c),
        "`tuned (strict)` cannot run this GEMM: tuning times one problem",
    );
    assert!(matches!(e, GemmError::Unsupported { .. }));
    // f32 T,N: no kernel reads A as it lies, `auto` copies it transposed first, and `Tuned`
    // runs auto's choice, as `Auto` does.
    let config = GemmConfig::new(8, 8, 8).transposes(Transpose::Yes, Transpose::No);
    let (a, b, mut c) = buffers(&config);
    let gemm = Gemm::emulator();
    let tuned = gemm
        .run(&config, &Algorithm::Tuned(Math::Strict), &a, &b, &mut c)
        .unwrap();
    let auto = gemm
        .run(&config, &Algorithm::Auto(Math::Strict), &a, &b, &mut c)
        .unwrap();
    assert_eq!(tuned.variant, auto.variant);
    assert!(
        tuned.reason.contains("A copied transposed"),
        "{}",
        tuned.reason
    );
    // bf16 with a leading dimension that is not a 16-byte row: no kernel reads A as it lies,
    // `auto` copies it to aligned rows first, and `Tuned` runs auto's choice, as `Auto` does.
    let config = GemmConfig::new(7, 8, 8);
    let (a, b, mut c) = (
        vec![bf16::ZERO; 7 * 8],
        vec![bf16::ZERO; 8 * 8],
        vec![bf16::ZERO; 7 * 8],
    );
    let gemm = Gemm::emulator();
    let tuned = gemm
        .run(&config, &Algorithm::Tuned(Math::Strict), &a, &b, &mut c)
        .unwrap();
    let auto = gemm
        .run(&config, &Algorithm::Auto(Math::Strict), &a, &b, &mut c)
        .unwrap();
    assert_eq!(tuned.variant, auto.variant);
    // And buffers are checked as for any kernel.
    let config = GemmConfig::new(8, 8, 8);
    let (a, b, _) = buffers(&config);
    let mut short = vec![0f32; 63];
    let e = refused(
        config,
        Algorithm::Tuned(Math::Strict),
        (&a, &b, &mut short),
        "C holds 63 elements",
    );
    assert!(matches!(e, GemmError::BufferTooSmall { operand: 'C', .. }));
}

/// A plan chooses once and runs on any buffers of its configuration: on the emulator, two
/// enqueues on different buffers give each its own product, as `run` does, with the same
/// choice; buffers that do not fit the plan's configuration are refused as `run` refuses them.
#[test]
fn a_plan_runs_on_each_set_of_buffers_it_is_given() {
    let gemm = Gemm::emulator();
    let config = GemmConfig::new(40, 24, 72)
        .scale(1.5, -0.5)
        .leading_dimensions(44, 72, 40);
    let algorithm = Algorithm::Auto(Math::Strict);
    let mut plan = gemm.plan::<f32>(&config, &algorithm).unwrap();
    let once = gemm.choose::<f32>(&config, &algorithm).unwrap();
    assert_eq!(plan.choice().variant, once.variant);
    for seed in [1, 7] {
        let a = matrix::<f32>(44, 72, seed);
        let b = matrix::<f32>(72, 24, seed + 1);
        let c0 = matrix::<f32>(40, 24, seed + 2);
        let mut c = c0.clone();
        plan.enqueue(&a, &b, &mut c).unwrap();
        gemm.synchronize().unwrap();
        let error = relative_error(&c, &reference(&config, &a, &b, &c0));
        assert!(error < 1e-5, "seed {seed}: relative error {error:.1e}");
    }
    let (a, b, mut short_c) = (
        matrix::<f32>(44, 72, 1),
        matrix::<f32>(72, 24, 2),
        vec![0f32; 40 * 24 - 1],
    );
    let e = plan.enqueue(&a, &b, &mut short_c).unwrap_err();
    assert!(
        matches!(e, GemmError::BufferTooSmall { operand: 'C', .. }),
        "{e}"
    );
}

/// A 16-bit A whose columns are not 16 bytes apart (lda = 25) is no TMA tensor: `auto` has the
/// kernel read an aligned copy, in the library as in `host` (once, the library refused it).
#[test]
fn auto_reads_an_aligned_copy_of_an_operand_the_tma_cannot_describe() {
    let config = GemmConfig::new(24, 16, 40)
        .scale(1.0, 0.5)
        .leading_dimensions(25, 40, 24);
    let (error, variant) = run_on_emulator::<bf16>(config, Algorithm::Auto(Math::Strict));
    assert!(error < 1e-2, "{variant}: relative error {error:.1e}");
}

/// FP8 through the library on the emulator: e4m3 codes and their scales, per tensor and per
/// block, against the f64 product of the dequantised operands; and every malformed call
/// refused with its typed error.
#[test]
fn fp8_operands_with_their_scales_compute_the_dequantised_product() {
    use gpu_gemm::fp8::quantize::{quantize, Operand as Which, Scaling};
    use gpu_gemm::problem::Matrix;
    use gpu_gemm::Fp8;
    let gemm = Gemm::emulator();
    let (m, n, k) = (128u32, 48u32, 256u32);
    let config = fp8_config(m, n, k);
    let source = |rows, cols, seed| {
        let values = matrix::<f32>(rows as usize, cols as usize, seed);
        Matrix::from_fn(rows, cols, rows, 0.0, |r, c| {
            values[(r + c * rows) as usize]
        })
    };
    let (a_source, b_source) = (source(k, m, 1), source(k, n, 2));
    let c0: Vec<bf16> = matrix::<bf16>(m as usize, n as usize, 3);
    for scaling in [Scaling::PerTensor, Scaling::Block] {
        let (a, b) = (
            quantize(&a_source, Which::A, scaling),
            quantize(&b_source, Which::B, scaling),
        );
        let (a_codes, a_scales) = (&a.codes.data[..], &a.scales[..]);
        let (b_codes, b_scales) = (&b.codes.data[..], &b.scales[..]);
        let fp8 = |codes, scales| fp8_operand(scaling, codes, scales);
        let mut c = c0.clone();
        let choice = gemm
            .run_fp8(
                &config,
                &Algorithm::Auto(Math::Strict),
                fp8(a_codes, a_scales),
                fp8(b_codes, b_scales),
                &mut c,
            )
            .unwrap();
        let worst = fp8_worst_error((&a, &b), &c0, &c, (m, n, k));
        assert!(
            worst < 1e-2,
            "{scaling:?} {}: worst error {worst:.1e}",
            choice.variant
        );
        // A scale too few.
        let mut c = c0.clone();
        let e = gemm
            .run_fp8(
                &config,
                &Algorithm::Auto(Math::Strict),
                fp8(a_codes, a_scales),
                fp8(b_codes, &b_scales[..b_scales.len() - 1]),
                &mut c,
            )
            .unwrap_err();
        assert!(
            matches!(e, GemmError::ScalesMisshaped { operand: 'B', .. }),
            "{scaling:?}: {e}"
        );
        // A's scales one float off 16 bytes: the block kernels copy them in 16-byte pieces,
        // one scale per tensor is read alone.
        let shifted: Vec<f32> = [0.0].iter().chain(a_scales).copied().collect();
        let mut c = c0.clone();
        let off = gemm.run_fp8(
            &config,
            &Algorithm::Auto(Math::Strict),
            fp8(a_codes, &shifted[1..]),
            fp8(b_codes, b_scales),
            &mut c,
        );
        match scaling {
            Scaling::Block => assert!(
                matches!(
                    off,
                    Err(GemmError::Misaligned {
                        operand: 'A',
                        align: 16,
                        ..
                    })
                ),
                "{off:?}"
            ),
            Scaling::PerTensor => assert!(off.is_ok(), "{off:?}"),
        }
    }
    let (a, b) = (
        quantize(&a_source, Which::A, Scaling::PerTensor),
        quantize(&b_source, Which::B, Scaling::Block),
    );
    let mut c = c0.clone();
    let mixed = gemm.run_fp8(
        &config,
        &Algorithm::Auto(Math::Strict),
        Fp8::per_tensor(&a.codes.data, &a.scales),
        Fp8::per_block(&b.codes.data, &b.scales),
        &mut c,
    );
    assert!(
        matches!(mixed, Err(GemmError::InvalidConfig(_))),
        "{mixed:?}"
    );
    let b = quantize(&b_source, Which::B, Scaling::PerTensor);
    let per_tensor = || {
        (
            Fp8::per_tensor(&a.codes.data, &a.scales),
            Fp8::per_tensor(&b.codes.data, &b.scales),
        )
    };
    let (fa, fb) = per_tensor();
    let nn = gemm.run_fp8(
        &GemmConfig::new(m, n, k),
        &Algorithm::Auto(Math::Strict),
        fa,
        fb,
        &mut c,
    );
    assert!(
        matches!(nn, Err(GemmError::InvalidConfig(ref why)) if why.contains("Transpose::Yes")),
        "{nn:?}"
    );
    let (fa, fb) = per_tensor();
    let block_kernel = gemm.run_fp8(
        &config,
        &Algorithm::kernel("wgmma-fp8-block"),
        fa,
        fb,
        &mut c,
    );
    assert!(
        matches!(block_kernel, Err(GemmError::Unsupported { ref reason, .. }) if reason.contains("per_block")),
        "{block_kernel:?}"
    );
}

/// B in e5m2 through the library on the emulator (`Fp8::e5m2`): the dequantised product, with
/// `auto` and with `wgmma-fp8` named, on the e5m2 entry points; an e5m2 A, an e5m2 B with block
/// scales and a kernel that reads e4m3 only are refused with their typed errors.
#[test]
fn fp8_with_b_in_e5m2_computes_the_dequantised_product() {
    use gpu_gemm::fp8::quantize::{quantize, quantize_as, Format, Operand as Which, Scaling};
    use gpu_gemm::problem::Matrix;
    use gpu_gemm::Fp8;
    let gemm = Gemm::emulator();
    let (m, n, k) = (128u32, 48u32, 256u32);
    let config = fp8_config(m, n, k);
    let values = |rows: u32, cols: u32, seed| {
        let v = matrix::<f32>(rows as usize, cols as usize, seed);
        // Columns 2⁻⁸…2⁸ apart, as gradients' are: e5m2's range.
        Matrix::from_fn(rows, cols, rows, 0.0, move |r, c| {
            v[(r + c * rows) as usize] * 2f32.powi((c % 17) as i32 - 8)
        })
    };
    let a = quantize(&values(k, m, 1), Which::A, Scaling::PerTensor);
    let b = quantize_as(&values(k, n, 2), Which::B, Scaling::PerTensor, Format::E5m2);
    let c0: Vec<bf16> = matrix::<bf16>(m as usize, n as usize, 3);
    for algorithm in [
        Algorithm::Auto(Math::Strict),
        Algorithm::kernel("wgmma-fp8"),
    ] {
        let mut c = c0.clone();
        let choice = gemm
            .run_fp8(
                &config,
                &algorithm,
                Fp8::per_tensor(&a.codes.data, &a.scales),
                Fp8::per_tensor(&b.codes.data, &b.scales).e5m2(),
                &mut c,
            )
            .unwrap();
        assert!(choice.entry.ends_with("_e4m3_e5m2"), "{}", choice.entry);
        let worst = fp8_worst_error((&a, &b), &c0, &c, (m, n, k));
        assert!(worst < 1e-2, "{}: worst error {worst:.1e}", choice.variant);
    }
    let mut c = c0.clone();
    let refused = |result: Result<_, GemmError>, says: &str| match result {
        Err(GemmError::InvalidConfig(why)) | Err(GemmError::Unsupported { reason: why, .. })
            if why.contains(says) => {}
        other => panic!("expected a refusal saying {says:?}, got {other:?}"),
    };
    let e5m2_a = gemm.run_fp8(
        &config,
        &Algorithm::Auto(Math::Strict),
        Fp8::per_tensor(&b.codes.data, &b.scales).e5m2(),
        Fp8::per_tensor(&a.codes.data, &a.scales),
        &mut c,
    );
    refused(e5m2_a, "A must be e4m3");
    let blocks = quantize(&values(k, n, 2), Which::B, Scaling::Block);
    let block_a = quantize(&values(k, m, 1), Which::A, Scaling::Block);
    let e5m2_blocks = gemm.run_fp8(
        &config,
        &Algorithm::Auto(Math::Strict),
        Fp8::per_block(&block_a.codes.data, &block_a.scales),
        Fp8::per_block(&blocks.codes.data, &blocks.scales).e5m2(),
        &mut c,
    );
    refused(e5m2_blocks, "one scale per tensor");
    let narrow = gemm.run_fp8(
        &config,
        &Algorithm::kernel("wgmma-fp8-narrow"),
        Fp8::per_tensor(&a.codes.data, &a.scales),
        Fp8::per_tensor(&b.codes.data, &b.scales).e5m2(),
        &mut c,
    );
    refused(narrow, "reads e4m3 B only");
}

/// The FP8 calls' configuration: TN (A stored k×m), packed, α = 1, β = 0.5.
/// FP8's fused epilogue through the library on the emulator (`run_fp8_fused`): D with a bias
/// per row and ReLU is `relu(D + bias)` of the plain call's D within the two calls' roundings,
/// the amax returned is D's largest |element| (exactly, once rounded to bf16) with its scale
/// `448 / amax`; a missing bias, the amax asked of `run_fp8` and an epilogue on a batch are
/// refused.
#[test]
fn fp8_runs_the_fused_epilogue_and_returns_the_amax() {
    use gpu_gemm::fp8::quantize::{quantize, Operand as Which, Scaling};
    use gpu_gemm::problem::Matrix;
    use gpu_gemm::{Activation, Bias, Fp8};
    let gemm = Gemm::emulator();
    let (m, n, k) = (136u32, 40u32, 256u32);
    let plain = fp8_config(m, n, k);
    let values = |rows: u32, cols: u32, seed| {
        let v = matrix::<f32>(rows as usize, cols as usize, seed);
        Matrix::from_fn(rows, cols, rows, 0.0, move |r, c| {
            v[(r + c * rows) as usize]
        })
    };
    let a = quantize(&values(k, m, 1), Which::A, Scaling::Block);
    let b = quantize(&values(k, n, 2), Which::B, Scaling::Block);
    let operands = || {
        (
            Fp8::per_block(&a.codes.data, &a.scales),
            Fp8::per_block(&b.codes.data, &b.scales),
        )
    };
    let c0: Vec<bf16> = matrix(m as usize, n as usize, 3);
    let bias: Vec<bf16> = matrix(m as usize, 1, 4);
    let auto = Algorithm::Auto(Math::Strict);
    let mut d = c0.clone();
    let (fa, fb) = operands();
    gemm.run_fp8(&plain, &auto, fa, fb, &mut d).unwrap();
    let fused = plain.epilogue(Bias::PerRow, Activation::Relu).amax();
    let mut e = c0.clone();
    let (choice, amax) = gemm
        .run_fp8_fused(&fused, &auto, operands(), Some(bias.memory()), &mut e)
        .unwrap();
    let amax = amax.expect("the amax was asked for");
    let mut largest = 0f64;
    for j in 0..n as usize {
        for (i, add) in bias.iter().enumerate() {
            let at = i + j * m as usize;
            let (plain_d, add) = (d[at].to_f64(), add.to_f64());
            let want = (plain_d + add).max(0.0);
            let bound = 2f64.powi(-7) * (plain_d.abs() + add.abs()) + 1e-6;
            let got = e[at].to_f64();
            assert!(
                (got - want).abs() <= bound,
                "{}: D({i}, {j}) = {got}, relu(D + bias) = {want}",
                choice.entry
            );
            largest = largest.max(got.abs());
        }
    }
    assert_eq!(
        bf16::from_f32(amax.amax).to_f64(),
        largest,
        "{}",
        choice.entry
    );
    assert_eq!(amax.scale, 448.0 / amax.amax);
    // A missing bias; the amax asked of run_fp8; an epilogue on a batch.
    let mut c = c0.clone();
    let missing = gemm.run_fp8_fused(&fused, &auto, operands(), None, &mut c);
    assert!(
        matches!(missing, Err(GemmError::BiasMisshaped { .. })),
        "{missing:?}"
    );
    let (fa, fb) = operands();
    let nowhere = gemm.run_fp8(&plain.amax(), &auto, fa, fb, &mut c);
    assert!(
        matches!(&nowhere, Err(GemmError::InvalidConfig(why)) if why.contains("run_fp8_fused")),
        "{nowhere:?}"
    );
    let batch = plain
        .amax()
        .batch(2, (k * m) as u64, (k * n) as u64, (m * n) as u64);
    let mut c2 = [c0.clone(), c0.clone()].concat();
    let twice = |x: &[u8]| [x, x].concat();
    let (a2, b2) = (twice(&a.codes.data), twice(&b.codes.data));
    let (sa2, sb2) = (
        [&a.scales[..], &a.scales].concat(),
        [&b.scales[..], &b.scales].concat(),
    );
    let on_batch = gemm.run_fp8_fused(
        &batch,
        &auto,
        (Fp8::per_block(&a2, &sa2), Fp8::per_block(&b2, &sb2)),
        None,
        &mut c2,
    );
    assert!(
        matches!(&on_batch, Err(GemmError::InvalidConfig(why)) if why.contains("one problem")),
        "{on_batch:?}"
    );
}

fn fp8_config(m: u32, n: u32, k: u32) -> GemmConfig {
    GemmConfig::new(m, n, k)
        .scale(1.0, 0.5)
        .transposes(Transpose::Yes, Transpose::No)
        .leading_dimensions(k, k, m)
}

/// The worst element error of an FP8 call's `c` (from `c0`, β = 0.5) against the f64 product of
/// the dequantised operands, relative to 1 + Σ|a·b|: the FP8 sums keep 13 bits below their
/// largest term, so an element whose terms cancel is as exact as its terms, not as itself.
fn fp8_worst_error(
    (a, b): (
        &gpu_gemm::fp8::quantize::Quantized,
        &gpu_gemm::fp8::quantize::Quantized,
    ),
    c0: &[bf16],
    c: &[bf16],
    (m, n, k): (u32, u32, u32),
) -> f64 {
    let mut worst = 0f64;
    for j in 0..n {
        for i in 0..m {
            let terms = (0..k).map(|l| a.dequantized(l, i) * b.dequantized(l, j));
            let (dot, size) = terms.fold((0.0, 0.0), |(s, z), t| (s + t, z + t.abs()));
            let at = (i + j * m) as usize;
            let want = dot + 0.5 * c0[at].to_f64();
            worst = worst.max((c[at].to_f64() - want).abs() / (1.0 + size));
        }
    }
    worst
}

/// An FP8 operand of either scaling.
fn fp8_operand<'a>(
    scaling: gpu_gemm::fp8::quantize::Scaling,
    codes: &'a [u8],
    scales: &'a [f32],
) -> gpu_gemm::Fp8<'a> {
    match scaling {
        gpu_gemm::fp8::quantize::Scaling::PerTensor => gpu_gemm::Fp8::per_tensor(codes, scales),
        gpu_gemm::fp8::quantize::Scaling::Block => gpu_gemm::Fp8::per_block(codes, scales),
    }
}

/// The FP32-accurate contract over f32's whole normal range: A's rows from 2⁻¹²⁶ up and B's
/// columns down to 2⁻¹²⁶, paired so that every product is in range. 3xTF32 (every
/// configuration `auto` may take) stays within 2× the strict kernels' worst error, where
/// without its ranges pass the small parts of the tiny operands vanished (the H100 measured
/// 190×).
#[test]
fn fp32_accurate_keeps_its_contract_across_the_normal_range() {
    let gemm = Gemm::emulator();
    let (m, n, k) = (160usize, 136usize, 100usize);
    let config = GemmConfig::new(m as u32, n as u32, k as u32);
    for (rows, cols) in gpu_gemm::verify::WIDE_RANGES {
        let (a, b) = gpu_gemm::verify::wide_range_operands((m, n, k), (rows, cols), 1);
        let run = |algorithm: &Algorithm| {
            let mut c = vec![0f32; m * n];
            let choice = gemm.run(&config, algorithm, &a, &b, &mut c).unwrap();
            let error =
                gpu_gemm::verify::worst_error_relative_to_magnitudes((m, n, k), (&a, &b, &c), 1);
            (error, choice.variant)
        };
        let (strict, strict_variant) = run(&Algorithm::Auto(Math::Strict));
        for algorithm in [
            Algorithm::Auto(Math::Fp32Accurate),
            Algorithm::kernel_tile("wgmma-3xtf32", 1),
            Algorithm::kernel_tile("wgmma-3xtf32", 2),
        ] {
            let (error, variant) = run(&algorithm);
            eprintln!("rows 2^{rows:?}, columns 2^{cols:?}: {variant} {error:.1e}, {strict_variant} {strict:.1e}");
            assert!(variant.starts_with("wgmma-3xtf32"), "{variant}");
            assert!(
                error <= 2.0 * strict,
                "rows 2^{rows:?}, columns 2^{cols:?}: {variant}'s error {error:.1e} is over 2× strict's {strict:.1e}"
            );
        }
    }
}
