//! Strided batched GEMM on the emulator (`GemmConfig::batch`, `host --batch`): every 16-bit
//! Hopper kernel that runs a batch computes every member, each with its own A, B and C at its
//! strides, checked against the f64 reference of each member; `auto` chooses for the batch; then
//! planted bugs the check must catch, and the refusals.
use gpu_gemm::emulator;
use gpu_gemm::half::bf16;
use gpu_gemm::problem::{EmulatedBody, Inputs, Matrix, Problem, Transpose, Transposes};
use gpu_gemm::registry::{self, Variant};
use gpu_gemm::run::{execute, plan, Backend};
use gpu_gemm::verify;
use gpu_gemm::{Algorithm, Batch, Gemm, GemmConfig, GemmError, Math};
use kernels_gpu::device::half::Bf16;
use kernels_gpu::device::tma::TensorMap;
use kernels_gpu::gemm::{Dtype, GemmArgs, HalfGemmArgs};
use kernels_gpu::pipeline::schedule::Tile;
use kernels_gpu::pipeline::{self, Consumer, Kernel, Ring, Stages, Work};
use kernels_gpu::variants::wgmma_16bit::{Plain, Wgmma16};
use kernels_gpu::variants::wgmma_tf32::Tf32Pipeline;

mod batch_cases;
#[allow(dead_code)]
mod epilogue_cases;
use batch_cases::{batched_kernels, problem, ONCE};

#[test]
fn every_batched_kernel_computes_every_member() {
    let kernels = batched_kernels();
    let names: Vec<_> = kernels.iter().map(|(v, _)| v.name()).collect();
    for expected in [
        "wgmma-16bit",
        "wgmma-tma-store",
        "wgmma-layouts",
        "wgmma-queue",
        "wgmma-narrow",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} runs no batch: {names:?}"
        );
    }
    assert!(
        !names.contains(&"wgmma-split-k") && !names.contains(&"wgmma-stream-k"),
        "{names:?}"
    );
    for (i, (variant, t)) in kernels.into_iter().enumerate() {
        // Alternate the types, and beta (C read through each member's offset).
        let dtype = [Dtype::Bf16, Dtype::F16][i % 2];
        let beta = [0.0, 0.5][i / 2 % 2];
        // m crosses the 128- and 256-row tiles, n the 64-column ones.
        let p = problem(dtype, (136, 72, 64), t, beta);
        let what = format!(
            "{} {} {} beta {beta}",
            variant.name(),
            t.name(),
            dtype.name()
        );
        let report = execute(&Backend::Emulator, variant, None, &p, ONCE)
            .unwrap_or_else(|e| panic!("{what}: {e:#}"));
        let check = report.check.expect("checked run");
        assert!(check.passed(), "{what}: {}", check.summary());
        assert!(
            check.coverage.starts_with("members 0, 1, 2, 3, 4 of 5"),
            "{}",
            check.coverage
        );
        println!("{what}: {}", check.summary());
    }
}

/// `wgmma-queue` with many units per block: each of the emulator's three blocks (or, at `:1`,
/// its cluster of two, whose leader publishes each unit into its peer) takes several of the
/// 45 units (nine tiles per member, five members) from the queue. Every member is still
/// computed, and the launch leaves the counter at zero (the emulator fails a launch that does
/// not). The test above runs the default tile on small members, in every layout.
#[test]
fn the_tile_queue_hands_out_every_members_tiles() {
    let variant = registry::find("wgmma-queue").unwrap();
    for (tile, beta) in [(3, 0.5), (1, 0.0)] {
        let p = problem(Dtype::Bf16, (600, 300, 64), Transposes::NN, beta);
        let report = execute(&Backend::Emulator, variant, Some(tile), &p, ONCE)
            .unwrap_or_else(|e| panic!("wgmma-queue:{tile}: {e:#}"));
        let check = report.check.expect("checked run");
        assert!(check.passed(), "wgmma-queue:{tile}: {}", check.summary());
        assert!(check.coverage.starts_with("members 0, 1, 2, 3, 4 of 5"));
        println!("wgmma-queue:{tile}: {}", check.summary());
    }
}

/// `auto` takes the tile queue for a batch of at least 1 024 tiles (the attention shapes at
/// 1 024 members), and the static walk for fewer.
#[test]
fn auto_takes_the_tile_queue_where_the_batch_has_many_tiles() {
    for (dims, count, expected) in [
        ((2048, 2048, 128), 1024, ("wgmma-queue", 3)),
        ((2048, 128, 2048), 1024, ("wgmma-queue", 3)),
        ((512, 512, 64), 1024, ("wgmma-queue", 3)),
        ((128, 128, 128), 1024, ("wgmma-queue", 3)),
        ((128, 128, 128), 512, ("wgmma-layouts", 2)),
        ((2048, 2048, 128), 4, ("wgmma-layouts", 1)),
    ] {
        let mut p = problem(Dtype::Bf16, dims, Transposes::NN, 0.0);
        p.batch = p.packed_strides(count);
        let (name, tile, why) = gpu_gemm::auto::batch_rule(&p);
        assert_eq!((name, tile), expected, "{dims:?} × {count}: {why}");
    }
}

/// The f32 and f64 kernels of `GRID_BATCHED` run a batch as their grid's z (on the emulator, a
/// launch per member): each at its default tile, every member against its reference, and
/// `auto`.
#[test]
fn the_f32_and_f64_kernels_compute_every_member() {
    for (i, name) in batch_cases::full_precision().iter().enumerate() {
        let variant = registry::find(name).unwrap();
        let dtypes = [Dtype::F32, Dtype::F64];
        for dtype in dtypes.into_iter().filter(|d| variant.dtypes().contains(d)) {
            let beta = [0.0, 0.5][i % 2];
            let p = problem(dtype, (72, 40, 48), Transposes::NN, beta);
            let what = format!("{name} {} beta {beta}", dtype.name());
            let report = execute(&Backend::Emulator, variant, None, &p, ONCE)
                .unwrap_or_else(|e| panic!("{what}: {e:#}"));
            let check = report.check.expect("checked run");
            assert!(check.passed(), "{what}: {}", check.summary());
            assert!(check.coverage.starts_with("members 0, 1, 2, 3, 4 of 5"));
            println!("{what} ({}): {}", report.variant, check.summary());
        }
    }
}

/// One A or one B shared by every member (a stride of 0), through the pipeline's own inputs
/// and check (the GPU test runs the same cases): `auto` copies the shared matrix apart for the
/// 16-bit kernels, the f32 ones read it shared, and each member's reference holds the matrix
/// the buffer holds, not the member's own draw (the check got that wrong once, and a right
/// result FAILed on the H100).
#[test]
fn a_matrix_shared_by_every_member_is_computed_and_checked_as_shared() {
    for (dtype, t) in [
        (Dtype::Bf16, Transposes::ALL[1]),
        (Dtype::F16, Transposes::NN),
        (Dtype::F32, Transposes::ALL[2]),
    ] {
        for shared in ['A', 'B'] {
            let mut p = problem(dtype, (72, 40, 48), t, 0.5);
            p.batch = p.packed_strides(5);
            match shared {
                'A' => p.batch.stride_a = 0,
                _ => p.batch.stride_b = 0,
            }
            let what = format!("auto {} {} {shared} shared", dtype.name(), t.name());
            let report = execute(
                &Backend::Emulator,
                registry::find("auto").unwrap(),
                None,
                &p,
                ONCE,
            )
            .unwrap_or_else(|e| panic!("{what}: {e:#}"));
            let check = report.check.expect("checked run");
            assert!(check.passed(), "{what}: {}", check.summary());
            println!("{what} ({}): {}", report.variant, check.summary());
        }
    }
}

/// The Hopper TF32 and 3xTF32 kernels at every tile (clusters of two down m included, whose
/// second block may fall past a member's last row) compute every member: their walk goes over
/// the members' tiles, the copies take the member as their maps' layer, the epilogue offsets C.
#[test]
fn the_tf32_kernels_compute_every_member_at_every_tile() {
    let kernels = batch_cases::hopper_f32();
    assert_eq!(kernels, ["wgmma-tf32", "wgmma-3xtf32"]);
    for name in kernels {
        let variant = registry::find(name).unwrap();
        for (i, &tile) in variant.tiles().iter().enumerate() {
            let beta = [0.0, 0.5][i % 2];
            let p = problem(Dtype::F32, (136, 72, 64), Transposes::NN, beta);
            let what = format!("{name}:{tile} beta {beta}");
            let report = execute(&Backend::Emulator, variant, Some(tile), &p, ONCE)
                .unwrap_or_else(|e| panic!("{what}: {e:#}"));
            let check = report.check.expect("checked run");
            assert!(check.passed(), "{what}: {}", check.summary());
            assert!(check.coverage.starts_with("members 0, 1, 2, 3, 4 of 5"));
            println!("{what}: {}", check.summary());
        }
    }
}

type ThreeTf32 = Tf32Pipeline<64, 128, 4, false, true, 8, 1, true>;

/// `wgmma-3xtf32:1` with the ranges of member 0 read for every member, when `BUG`: the splitters'
/// column scales and the consumers' row scales (the tile's member changed for the ranges alone:
/// the copies and the epilogue keep the right one).
#[derive(Clone, Copy)]
struct MemberZeroRanges<const BUG: bool>;

impl<const BUG: bool> MemberZeroRanges<BUG> {
    fn ranges_tile(tile: Tile) -> Tile {
        if BUG {
            Tile::of_member(tile.row, tile.col, 0)
        } else {
            tile
        }
    }
}

impl<const BUG: bool> Kernel for MemberZeroRanges<BUG> {
    type Args = GemmArgs<f32>;
    kernels_gpu::sizes_of!(ThreeTf32);

    unsafe fn load(self, maps: *const TensorMap, stages: Stages, s: u32, tile: Tile, slice: u32) {
        unsafe { ThreeTf32 {}.load(maps, stages, s, tile, slice) }
    }

    unsafe fn assist(
        self,
        args: GemmArgs<f32>,
        maps: *const TensorMap,
        stages: Stages,
        ring: &mut Ring,
        thread: u32,
        tile: Tile,
        slices: u32,
    ) {
        let tile = Self::ranges_tile(tile);
        unsafe { ThreeTf32 {}.assist(args, maps, stages, ring, thread, tile, slices) }
    }

    unsafe fn consume(
        self,
        args: GemmArgs<f32>,
        maps: *const TensorMap,
        consumer: &mut Consumer,
        work: Work,
    ) {
        let work = Work {
            tile: Self::ranges_tile(work.tile),
            ..work
        };
        unsafe { ThreeTf32 {}.consume(args, maps, consumer, work) }
    }
}

/// Errors as `[4.2e-8, 1.0e-7]`.
fn sci(errors: &[f64]) -> String {
    let each: Vec<_> = errors.iter().map(|e| format!("{e:.1e}")).collect();
    format!("[{}]", each.join(", "))
}

/// # Safety
/// As `wgmma_tf32::gemm`.
unsafe fn member_zero_ranges<const BUG: bool>(args: GemmArgs<f32>, maps: *const TensorMap) {
    unsafe { pipeline::run(MemberZeroRanges::<BUG>, args, maps) }
}

/// 3xTF32 over a batch whose two members span f32's range the opposite ways
/// ([`verify::WIDE_RANGES`]: member 0's rows of A tiny and columns of B large, member 1's the
/// reverse). The ranges pass writes m + n words per member and each member is scaled by its
/// own: every configuration keeps each member within 2× the strict kernel's error. The kernel
/// planted to read member 0's ranges for every member scales member 1 the wrong way, and its
/// small parts vanish (or its products overflow): far over the bound.
#[test]
fn three_tf32_scales_each_member_by_its_own_ranges() {
    let (m, n, k) = (136usize, 72usize, 64usize);
    let mut p = batch_cases::problem(
        Dtype::F32,
        (m as u32, n as u32, k as u32),
        Transposes::NN,
        0.0,
    );
    p.alpha = 1.0;
    p.shape.lda = m as u32;
    p.shape.ldb = k as u32;
    p.shape.ldc = m as u32;
    p.batch = p.packed_strides(2);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (z, ranges) in verify::WIDE_RANGES.into_iter().enumerate() {
        let (az, bz) = verify::wide_range_operands((m, n, k), ranges, z as u64 + 1);
        a.extend(az);
        b.extend(bz);
    }
    let errors = |c: &[f32]| -> Vec<f64> {
        (0..2)
            .map(|z| {
                let member = (
                    &a[z * m * k..][..m * k],
                    &b[z * k * n..][..k * n],
                    &c[z * m * n..][..m * n],
                );
                verify::worst_error_relative_to_magnitudes((m, n, k), member, 1)
            })
            .collect()
    };
    let run = |name: &str, tile: Option<u32>| {
        let launch = plan(registry::find(name).unwrap(), tile, &p, None).unwrap();
        let mut c = vec![f32::NAN; 2 * m * n];
        emulator::launch_on(&launch, &p, (&a, &b, &[], &[]), (&mut c, &mut [0; 3]), None).unwrap();
        errors(&c)
    };
    let strict = run("gemm128", None);
    for tile in [1, 2] {
        let error = run("wgmma-3xtf32", Some(tile));
        println!(
            "wgmma-3xtf32:{tile}: {}, gemm128 {}",
            sci(&error),
            sci(&strict)
        );
        for z in 0..2 {
            assert!(
                error[z] <= 2.0 * strict[z],
                "wgmma-3xtf32:{tile}, member {z}: {:.1e} is over 2× strict's {:.1e}",
                error[z],
                strict[z]
            );
        }
    }
    let planted = |bug: bool| {
        let launch = plan(registry::find("wgmma-3xtf32").unwrap(), Some(1), &p, None).unwrap();
        let body = if bug {
            EmulatedBody::TensorMaps(member_zero_ranges::<true> as _)
        } else {
            EmulatedBody::TensorMaps(member_zero_ranges::<false> as _)
        };
        let inputs = Inputs {
            a: Matrix {
                rows: m as u32,
                cols: (2 * k) as u32,
                ld: m as u32,
                data: a.clone(),
            },
            b: Matrix {
                rows: k as u32,
                cols: (2 * n) as u32,
                ld: k as u32,
                data: b.clone(),
            },
            c: Matrix {
                rows: m as u32,
                cols: (2 * n) as u32,
                ld: m as u32,
                data: vec![0.0; 2 * m * n],
            },
            bias: Vec::new(),
            groups: Vec::new(),
        };
        let mut c = vec![f32::NAN; 2 * m * n];
        emulator::launch_planted(&launch, body, &p, &inputs, (&mut c, &mut [0; 3])).unwrap();
        errors(&c)
    };
    let control = planted(false);
    assert!(
        control[0] <= 2.0 * strict[0] && control[1] <= 2.0 * strict[1],
        "the wrapper without its bug: {} against {}",
        sci(&control),
        sci(&strict)
    );
    let bug = planted(true);
    println!("member 0's ranges for every member: {}", sci(&bug));
    assert!(
        bug[0] <= 2.0 * strict[0],
        "member 0 is scaled by its own: {}",
        sci(&bug)
    );
    assert!(
        bug[1].is_nan() || bug[1] > 100.0 * strict[1],
        "member 1 scaled by member 0's ranges passed: {:.1e} against strict's {:.1e}",
        bug[1],
        strict[1]
    );
}

/// `auto` over a batch takes the batch rule's kernel for each kind of member, and a fused
/// epilogue applies to every member (one bias for all).
#[test]
fn auto_chooses_for_the_batch_and_fuses_the_epilogue_into_every_member() {
    let tn = Transposes::new(Transpose::Yes, Transpose::No);
    for (dims, t, expected) in [
        ((64, 64, 64), tn, "wgmma-layouts:2"),
        ((70, 64, 64), Transposes::NN, "wgmma-16bit"),
        ((200, 72, 64), Transposes::NN, "wgmma-layouts:2"),
        ((136, 200, 64), tn, "wgmma-layouts:1"),
    ] {
        let mut p = problem(Dtype::Bf16, dims, t, 0.0);
        if dims == (200, 72, 64) {
            p.epilogue = gpu_gemm::problem::parse_epilogue("bias,gelu").unwrap();
        }
        let report = execute(
            &Backend::Emulator,
            Variant::Auto(Math::Strict),
            None,
            &p,
            ONCE,
        )
        .unwrap_or_else(|e| panic!("{dims:?}: {e:#}"));
        assert!(
            report.variant.contains(expected),
            "{dims:?}: {}",
            report.variant
        );
        let check = report.check.expect("checked run");
        assert!(check.passed(), "{dims:?}: {}", check.summary());
        println!("{dims:?} → {}: {}", report.variant, check.summary());
    }
}

/// What a batch may not be: refused before anything runs, with the reason.
#[test]
fn batches_the_kernels_cannot_run_are_refused() {
    let p = problem(Dtype::Bf16, (136, 72, 64), Transposes::NN, 0.0);
    let refusal = |v: &str, p: &Problem| {
        let variant = registry::find(v).unwrap();
        plan(variant, None, p, None).unwrap_err().to_string()
    };
    let f32 = Problem {
        dtype: Dtype::F32,
        ..p
    };
    assert!(refusal("split-k", &f32).contains("has no strided batched form in f32"));
    assert!(refusal("wgmma-tf32-basic", &f32).contains("has no strided batched form in f32"));
    assert!(refusal("cpu-naive", &f32).contains("has no strided batched form in f32"));
    // The refusal names what does run the batch, from the registry: the grid-batched
    // kernels of f32 and the Hopper TF32 ones.
    let named = refusal("v5", &f32);
    for kernel in kernels_gpu::registry::GRID_BATCHED
        .iter()
        .filter(|k| registry::find(k).unwrap().dtypes().contains(&Dtype::F32))
        .chain(&["wgmma-tf32", "wgmma-3xtf32"])
    {
        assert!(named.contains(kernel), "{kernel} not in: {named}");
    }
    assert!(refusal("wgmma-split-k", &p).contains("no strided batched form"));
    assert!(refusal("wgmma-stream-k", &p).contains("no strided batched form"));
    // A stride the TMA engine cannot step by.
    let odd = Problem {
        batch: Batch {
            stride_c: p.batch.stride_c + 1,
            ..p.batch
        },
        ..p
    };
    assert!(refusal("wgmma-16bit", &odd).contains("not a multiple of 16 bytes"));
    // Members of C that overlap are refused whatever runs them; members of A that overlap are
    // legal (cuBLAS runs them, and `auto` on copies), but a TMA kernel refuses them.
    let c_overlaps = Problem {
        batch: Batch {
            stride_c: 8,
            ..p.batch
        },
        ..p
    };
    let e = c_overlaps.validate().unwrap_err().to_string();
    assert!(
        e.contains("two members would write the same elements of C"),
        "{e}"
    );
    for stride_a in [0, 8] {
        let a_overlaps = Problem {
            batch: Batch {
                stride_a,
                ..p.batch
            },
            ..p
        };
        a_overlaps.validate().unwrap();
        let e = refusal("wgmma-16bit", &a_overlaps);
        assert!(e.contains("auto copies the members apart first"), "{e}");
        plan(registry::find("auto").unwrap(), None, &a_overlaps, None).unwrap();
    }
}

type Plain16 = Wgmma16<Bf16, Plain<4>>;

/// The bug selectors of [`Planted`].
const NONE: u8 = 0;
/// The copies read member 0 for every member: the layer of the tensor maps left out, the bug a
/// kernel that gained the batch in its epilogue only would have.
const COPIES_IGNORE_THE_MEMBER: u8 = 1;
/// The producer keeps 48 registers beside consumers at 232: together 2 × 128 × 232 plus
/// 128 × 48, 65 536, but a block of 384 threads holds 168 × 384 = 64 512 at launch, and the
/// consumers' `setmaxnreg.inc` waits for 1 024 registers no warp gives back. Every kernel hung on
/// the H100 when the skeleton's producer was raised to 48 to make room for the batch's walk;
/// the emulator now reports it.
const PRODUCER_KEEPS_TOO_MANY: u8 = 2;

/// `wgmma-16bit:1` (the registry's launch of it fits) with bug `BUG` planted.
#[derive(Clone, Copy)]
struct Planted<const BUG: u8>;

impl<const BUG: u8> Kernel for Planted<BUG> {
    type Args = HalfGemmArgs<Bf16>;
    kernels_gpu::sizes_of!(Plain16);
    const PRODUCER_REGISTERS: u32 = if BUG == PRODUCER_KEEPS_TOO_MANY {
        48
    } else {
        Plain16::PRODUCER_REGISTERS
    };
    const CONSUMER_REGISTERS: u32 = Plain16::CONSUMER_REGISTERS;

    unsafe fn load(self, maps: *const TensorMap, stages: Stages, s: u32, tile: Tile, slice: u32) {
        let tile = if BUG == COPIES_IGNORE_THE_MEMBER {
            Tile::of_member(tile.row, tile.col, 0)
        } else {
            tile
        };
        unsafe { Plain16::default().load(maps, stages, s, tile, slice) }
    }

    unsafe fn consume(
        self,
        args: HalfGemmArgs<Bf16>,
        maps: *const TensorMap,
        consumer: &mut Consumer,
        work: Work,
    ) {
        unsafe { Plain16::default().consume(args, maps, consumer, work) }
    }
}

const _: () = assert!(<Planted<NONE> as Kernel>::POOL_BYTES == Plain16::POOL_BYTES);

/// # Safety
/// As `wgmma_16bit::gemm`.
unsafe fn planted<const BUG: u8>(args: HalfGemmArgs<Bf16>, maps: *const TensorMap) {
    unsafe { pipeline::run(Planted::<BUG>, args, maps) }
}

#[test]
fn planted_batch_bugs_fail_the_check() {
    let p = problem(Dtype::Bf16, (136, 72, 64), Transposes::NN, 0.0);
    let inputs = Inputs::<bf16>::generate(&p);
    let references = verify::batch_references(&p, &inputs);
    let kernel = registry::find("wgmma-16bit").unwrap();
    let launch = plan(kernel, None, &p, None).unwrap();
    let check = |c: &[bf16]| {
        let uploaded = inputs.c_for_checked_run(p.beta);
        verify::check_run(&p, kernel.arithmetic(), &references, &uploaded, c)
    };
    let control = {
        let mut c = inputs.c_for_checked_run(p.beta);
        emulator::launch_once(&launch, &p, &inputs, &mut c).unwrap();
        check(&c)
    };
    assert!(
        control.passed(),
        "the kernel as it is: {}",
        control.summary()
    );
    let ignored = {
        let mut c = inputs.c_for_checked_run(p.beta);
        let body = EmulatedBody::TensorMaps(planted::<COPIES_IGNORE_THE_MEMBER> as _);
        emulator::launch_planted(&launch, body, &p, &inputs, (&mut c, &mut [0; 3])).unwrap();
        check(&c)
    };
    assert!(
        !ignored.passed(),
        "copies of member 0 for every member passed: {}",
        ignored.summary()
    );
    // The walk one member short (its units counted without the last member).
    let short = {
        let fewer = Problem {
            batch: Batch {
                count: p.batch.count - 1,
                ..p.batch
            },
            ..p
        };
        let mut c = inputs.c_for_checked_run(p.beta);
        emulator::launch_once(
            &plan(kernel, None, &fewer, None).unwrap(),
            &fewer,
            &inputs,
            &mut c,
        )
        .unwrap();
        check(&c)
    };
    assert!(
        !short.passed(),
        "a member never computed passed: {}",
        short.summary()
    );
    assert!(short.non_finite > 0, "{}", short.summary());
    println!(
        "control: {}\ncopies ignore the member: {}\none member short: {}",
        control.summary(),
        ignored.summary(),
        short.summary()
    );
}

/// The library's form: `GemmConfig::batch` with `Gemm::run` on the emulator, every member
/// against an f64 product computed here; a buffer shorter than the batch is a typed error.
#[test]
fn the_library_runs_a_batch_and_refuses_short_buffers() {
    let (m, n, k, count) = (72usize, 40usize, 64usize, 3usize);
    let gemm = Gemm::emulator();
    let config = GemmConfig::new(m as u32, n as u32, k as u32).batch(
        count as u32,
        (m * k) as u64,
        (k * n) as u64,
        (m * n) as u64,
    );
    let value =
        |i: usize, salt: usize| bf16::from_f32((((i * 7 + salt * 13) % 17) as f32 - 8.0) / 8.0);
    let a: Vec<bf16> = (0..m * k * count).map(|i| value(i, 1)).collect();
    let b: Vec<bf16> = (0..k * n * count).map(|i| value(i, 2)).collect();
    let mut c = vec![bf16::ZERO; m * n * count];
    let choice = gemm
        .run(
            &config,
            &Algorithm::Auto(Math::Strict),
            &a[..],
            &b[..],
            &mut c[..],
        )
        .unwrap();
    println!("{choice:?}");
    for member in 0..count {
        for col in 0..n {
            for row in 0..m {
                let exact: f64 = (0..k)
                    .map(|q| {
                        let x = a[member * m * k + row + q * m].to_f64();
                        let y = b[member * k * n + q + col * k].to_f64();
                        x * y
                    })
                    .sum();
                let got = c[member * m * n + row + col * m].to_f64();
                assert!(
                    (got - exact).abs() <= 1e-2 * exact.abs().max(1.0),
                    "member {member} ({row}, {col}): {got} against {exact}"
                );
            }
        }
    }
    let mut short = vec![bf16::ZERO; m * n * count - 1];
    let e = gemm
        .run(
            &config,
            &Algorithm::Auto(Math::Strict),
            &a[..],
            &b[..],
            &mut short[..],
        )
        .unwrap_err();
    assert!(
        matches!(e, GemmError::BatchTooSmall { operand: 'C', .. }),
        "{e}"
    );
    let e = gemm
        .run(
            &config,
            &Algorithm::Tuned(Math::Strict),
            &a[..],
            &b[..],
            &mut c[..],
        )
        .unwrap_err();
    assert!(e.to_string().contains("not a strided batch"), "{e}");
}

/// The device layer's layers (`cp.async.bulk.tensor.3d`): a box copied from layer `z` of a map
/// of two layers holds that layer's elements, found `layer_stride_bytes` apart; a layer outside
/// the tensor arrives as zeros, as every out-of-bounds element does; a store to layer 1 writes
/// that layer only, and one to a layer outside the tensor writes nothing.
#[test]
fn the_tensor_copies_address_each_layer() {
    use kernels_gpu::device::mbarrier::{fence_mbarrier_init, MBarrier};
    use kernels_gpu::device::tma::{self, Swizzle, TensorMapSpec};
    use kernels_gpu::device::wgmma::fence_proxy_async;
    use kernels_gpu::device::{named_barrier, pool_address, pool_padding_to, store, thread_idx_x};
    use kernels_gpu::device::{GlobalMut, Shared};
    use kernels_gpu::emu::{launch, Buffer, LaunchShape};
    // Two layers of an 8 × 8 f32 matrix (ld 8), 80 elements apart: 16 of padding between them.
    const LAYER: usize = 80;
    let source: Vec<f32> = (0..2 * LAYER).map(|i| i as f32).collect();
    let mut loaded = vec![f32::NAN; 3 * 32];
    let mut stored = vec![-1f32; 2 * LAYER];
    let spec = |address: u64| TensorMapSpec {
        layers: 2,
        layer_stride_bytes: LAYER as u64 * 4,
        ..TensorMapSpec::single(address, 4, [8, 8], 32, [4, 8], Swizzle::None)
    };
    let maps = Box::new([
        spec(source.as_ptr() as u64).encode_for_emulator().unwrap(),
        spec(stored.as_mut_ptr() as u64)
            .encode_for_emulator()
            .unwrap(),
    ]);
    let (maps_at, loaded_at) = (maps.as_ptr() as usize, loaded.as_mut_ptr() as usize);
    let buffers = [
        Buffer {
            name: "source",
            address: source.as_ptr() as usize,
            bytes: std::mem::size_of_val(&source[..]),
        },
        Buffer {
            name: "loaded",
            address: loaded_at,
            bytes: std::mem::size_of_val(&loaded[..]),
        },
        Buffer {
            name: "stored",
            address: stored.as_mut_ptr() as usize,
            bytes: std::mem::size_of_val(&stored[..]),
        },
        Buffer {
            name: "tensor maps",
            address: maps_at,
            bytes: 256,
        },
    ];
    let shape = LaunchShape {
        grid: (1, 1),
        block: (32, 1),
        shared_bytes: 1024 + 3 * 128 + 64,
        cluster: (1, 1),
    };
    launch("layers", shape, &buffers, &|| {
        let maps = maps_at as *const TensorMap;
        let lane = thread_idx_x();
        let base = pool_padding_to(128);
        let tile = |j: u32| base + 128 * j;
        let bar = |j: u32| MBarrier::at(base + 3 * 128 + 8 * j);
        if lane == 0 {
            for j in 0..3 {
                bar(j).init(1);
            }
            fence_mbarrier_init();
        }
        named_barrier(1, 32);
        if lane == 0 {
            // The box: 4 elements of dimension 0 by 8 of dimension 1,
            // from (4, 0) of layers 1, 0 and 2 (outside).
            for (j, layer) in [(0, 1), (1, 0), (2, 2)] {
                bar(j).arrive_expect_tx(128);
                unsafe { tma::load_box(maps, pool_address(tile(j)), 4, 0, layer, bar(j)) };
            }
        }
        let out = GlobalMut::new(loaded_at as *mut f32);
        for j in 0..3 {
            bar(j).wait(0);
            let value = Shared::<f32>::at(tile(j), 32).load(lane);
            unsafe { out.store((32 * j + lane) as usize, value) };
        }
        // Tile 0 (layer 1's box) stored to layer 1 of `stored`, and to layer 2 (nothing).
        fence_proxy_async();
        named_barrier(1, 32);
        if lane == 0 {
            unsafe {
                store::store_box(maps.wrapping_add(1), pool_address(tile(0)), 4, 0, 1);
                store::store_box(maps.wrapping_add(1), pool_address(tile(0)), 4, 0, 2);
            }
            store::commit();
            store::wait::<0>();
        }
    })
    .unwrap();
    // Element (x, y) of the box is (4 + x, y) of its layer: at 4 + x + 8y, plus 80 per layer.
    let expected = |layer: usize, i: usize| (layer * LAYER + 4 + i % 4 + 8 * (i / 4)) as f32;
    for i in 0..32 {
        assert_eq!(loaded[i], expected(1, i), "layer 1, element {i}");
        assert_eq!(loaded[32 + i], expected(0, i), "layer 0, element {i}");
        assert_eq!(loaded[64 + i], 0.0, "layer 2 (outside), element {i}");
    }
    for (at, &value) in stored.iter().enumerate() {
        let (layer, within) = (at / LAYER, at % LAYER);
        let in_box = layer == 1 && within < 64 && (4..8).contains(&(within % 8));
        let want = if in_box {
            expected(1, within % 8 - 4 + 4 * (within / 8))
        } else {
            -1.0
        };
        assert_eq!(value, want, "stored element {at}");
    }
}

/// [`PRODUCER_KEEPS_TOO_MANY`]: the emulator reports the hang when the block exits.
#[test]
fn registers_the_block_does_not_hold_are_a_hang() {
    let p = Problem {
        batch: Batch::ONE,
        groups: kernels_gpu::gemm::GroupLayout::None,
        ..problem(Dtype::Bf16, (136, 72, 64), Transposes::NN, 0.0)
    };
    let inputs = Inputs::<bf16>::generate(&p);
    let launch = plan(registry::find("wgmma-16bit").unwrap(), None, &p, None).unwrap();
    let mut c = inputs.c_for_checked_run(p.beta);
    let body = EmulatedBody::TensorMaps(planted::<PRODUCER_KEEPS_TOO_MANY> as _);
    let e =
        emulator::launch_planted(&launch, body, &p, &inputs, (&mut c, &mut [0; 3])).unwrap_err();
    let message = format!("{e:#}");
    println!("{message}");
    assert!(
        message.contains("deadlock") && message.contains("64512"),
        "{message}"
    );
    // The skeleton's own share fits.
    let mut c = inputs.c_for_checked_run(p.beta);
    emulator::launch_once(&launch, &p, &inputs, &mut c).unwrap();
}

/// Under FP32-accurate, `auto` runs a batch of large members on 3xTF32 (the members'
/// tiles walked by `wgmma-3xtf32`'s batch twin) and one of small members on strict's row, where
/// 3xTF32's per-tile work dominates (H100, 1 024 members: `best:1` 1.17–1.31× cuBLAS SGEMM's
/// strided batch at 128³ and 512 × 512 × 64 against 3xTF32's 0.70–0.77×; 3xTF32 1.05–1.24× at
/// the 2048 members against `gemm128`'s 0.94–0.98×). TF32 takes its own row's kernel.
#[test]
fn fp32_accurate_takes_3xtf32_for_large_members_and_stricts_row_for_small() {
    for (dims, large) in [
        ((2048, 128, 2048), true),
        ((2048, 2048, 128), true),
        ((512, 512, 64), false),
        ((128, 128, 128), false),
    ] {
        let mut p = problem(Dtype::F32, dims, Transposes::NN, 0.0);
        p.batch = p.packed_strides(1024);
        let strict = gpu_gemm::auto::choose(&p, Math::Strict, Some(90)).unwrap();
        let accurate = gpu_gemm::auto::choose(&p, Math::Fp32Accurate, Some(90)).unwrap();
        let tf32 = gpu_gemm::auto::choose(&p, Math::Tf32, Some(90)).unwrap();
        assert!(strict
            .variant
            .runs_batched(Dtype::F32, Transposes::NN, None));
        assert_eq!(accurate.math, Math::Fp32Accurate);
        if large {
            assert_eq!(accurate.variant.name(), "wgmma-3xtf32", "{dims:?}");
        } else {
            assert_eq!(
                (accurate.variant.name(), accurate.tile),
                (strict.variant.name(), strict.tile),
                "{dims:?}"
            );
        }
        assert_eq!(tf32.variant.name(), "wgmma-tf32", "{dims:?}");
        // Members one element apart are not 16 bytes apart: the TMA kernels cannot step by
        // them, and every contract falls back to a kernel that launches a layer per member.
        p.batch.stride_c += 1;
        for math in [Math::Fp32Accurate, Math::Tf32] {
            let choice = gpu_gemm::auto::choose(&p, math, Some(90)).unwrap();
            assert!(
                choice
                    .variant
                    .runs_batched(Dtype::F32, Transposes::NN, None)
                    && kernels_gpu::registry::GRID_BATCHED.contains(&choice.variant.name()),
                "{dims:?} {math:?} with an odd stride: {}",
                choice.variant.name()
            );
        }
    }
}
