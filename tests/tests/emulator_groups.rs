//! Grouped GEMM on the emulator (`host --groups`), DeepGEMM's two layouts of a
//! mixture-of-experts layer: every 16-bit kernel whose walk finds each tile's group computes
//! every group with its own A, contiguous (uneven groups, a group in two runs, padding between)
//! and masked (counts that end inside a box, at a tile's edge, fill the capacity, or are 0),
//! each group checked against its f64 reference and every column no group owns required to be
//! as it was; `auto` chooses for the groups; then planted bugs the check must catch, and the
//! refusals.
use gpu_gemm::emulator;
use gpu_gemm::half::bf16;
use gpu_gemm::problem::{EmulatedBody, GroupLayout, Inputs, Problem, Transpose, Transposes};
use gpu_gemm::registry::{self, Variant};
use gpu_gemm::run::{plan, Backend};
use gpu_gemm::verify;
use gpu_gemm::Math;
use kernels_gpu::device::half::Bf16;
use kernels_gpu::device::tma::TensorMap;
use kernels_gpu::gemm::{Dtype, HalfGemmArgs};
use kernels_gpu::pipeline::schedule::Tile;
use kernels_gpu::pipeline::{self, Consumer, Kernel, Problem as Sizes, Stages, Work};
use kernels_gpu::variants::wgmma_16bit::{Plain, Wgmma16};

#[allow(dead_code)]
mod epilogue_cases;
mod group_cases;
use group_cases::{contiguous, grouped_kernels, masked, run_checked, COUNTS, UNEVEN};

const TN: Transposes = Transposes::new(Transpose::Yes, Transpose::No);

#[test]
fn every_grouped_kernel_computes_every_group_in_both_layouts() {
    let kernels = grouped_kernels();
    let names: Vec<_> = kernels
        .iter()
        .map(|(v, tile, _)| format!("{}:{}", v.name(), tile.unwrap_or(1)))
        .collect();
    for expected in [
        "wgmma-16bit:1",
        "wgmma-tma-store:5",
        "wgmma-layouts:2",
        "wgmma-layouts:3",
        "wgmma-swap:432",
        "wgmma-swap:464",
        "wgmma-swap:532",
        "wgmma-swap:564",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} runs no groups: {names:?}"
        );
    }
    // Clusters along n share an operand between neighbouring tiles, which may be of different
    // groups.
    for refused in [
        "wgmma-layouts:1",
        "wgmma-cluster:1",
        "wgmma-tma-store:4",
        "wgmma-narrow:64",
        "wgmma-swap:364",
        "wgmma-swap:264",
    ] {
        assert!(
            !names.iter().any(|n| n == refused),
            "{refused} claims groups: {names:?}"
        );
    }
    group_cases::every_kernel_in_both_layouts(&Backend::Emulator);
}

/// `auto` takes `wgmma-layouts:2` for groups, in the model's layout, but the swapped tiles
/// (`wgmma-swap:464`, `:564`) for masked groups of a decode step's few tokens (a capacity of at
/// most 16 or 64), and a fused epilogue applies to every group (a bias per column: per token).
#[test]
fn auto_chooses_for_the_groups_and_fuses_the_epilogue() {
    // Counts that end inside a 16-token box, fill the capacity, are 0, or one token.
    let (few, some) = ([5, 16, 0, 1], [40, 0, 64, 17]);
    let cases = [
        (GroupLayout::Contiguous, 200, &UNEVEN[..], "wgmma-layouts:2"),
        (GroupLayout::Masked, 200, &COUNTS[..], "wgmma-layouts:2"),
        (GroupLayout::Masked, 16, &few[..], "wgmma-swap:464"),
        (GroupLayout::Masked, 64, &some[..], "wgmma-swap:564"),
    ];
    for (layout, capacity, table, expected) in cases {
        let mut p = if layout == GroupLayout::Contiguous {
            contiguous(Dtype::Bf16, (200, 72), TN, table, 3, 0.0)
        } else {
            masked(Dtype::Bf16, (200, capacity, 72), TN, table, 0.0)
        };
        p.epilogue = gpu_gemm::problem::parse_epilogue("bias-col,gelu").unwrap();
        let auto = Variant::Auto(Math::Strict);
        let choice = gpu_gemm::auto::choose(&p, Math::Strict, None).unwrap();
        assert_eq!(choice.label(), expected, "{layout:?}, capacity {capacity}");
        let check = run_checked::<bf16>(&Backend::Emulator, auto, None, &p, table).unwrap();
        assert!(check.passed(), "{layout:?}: {}", check.summary());
        println!(
            "{layout:?}, capacity {capacity} → {}: {}",
            choice.label(),
            check.summary()
        );
    }
}

/// What a grouped GEMM may not be: refused before anything runs, with the reason.
#[test]
fn groups_the_kernels_cannot_run_are_refused() {
    let p = contiguous(Dtype::Bf16, (136, 64), TN, &UNEVEN, 3, 0.0);
    let refusal = |v: &str, p: &Problem| {
        let variant = registry::find(v).unwrap();
        plan(variant, None, p, None).unwrap_err().to_string()
    };
    // The default tile of wgmma-layouts has clusters.
    assert!(refusal("wgmma-layouts", &p).contains("wgmma-layouts:1 has no grouped form"));
    // It names the kernels that do, from the registry rather than a list in the message.
    let named = refusal("wgmma-narrow", &p);
    assert!(named.contains("bf16 T,N"), "{named}");
    assert!(named.contains("wgmma-layouts:2, :3"), "{named}");
    assert!(!named.contains("wgmma-narrow;"), "{named}");
    assert!(refusal("wgmma-narrow", &p).contains("no grouped form"));
    assert!(refusal("wgmma-stream-k", &p).contains("no grouped form"));
    assert!(refusal("tuned", &p).contains("tuned"));
    let f32 = Problem {
        dtype: Dtype::F32,
        ..p
    };
    assert!(refusal("auto", &f32).contains("no grouped form in f32"));
    // The contiguous layout's columns come in runs of 128, and B and C are shared.
    let ragged = Problem {
        shape: kernels_gpu::registry::Shape { n: 600, ..p.shape },
        ..p
    };
    let e = ragged.validate().unwrap_err().to_string();
    assert!(e.contains("must be a multiple of 128"), "{e}");
    let strided = Problem {
        batch: gpu_gemm::Batch {
            stride_c: 1 << 20,
            ..p.batch
        },
        ..p
    };
    let e = strided.validate().unwrap_err().to_string();
    assert!(e.contains("batch strides must be 0"), "{e}");
}

type Plain16 = Wgmma16<Bf16, Plain<4>>;

/// The bug selectors of [`Planted`].
const NONE: u8 = 0;
/// The contiguous layout's group read one block of columns on: every tile multiplies the A of
/// the group after its own.
const GROUP_ONE_BLOCK_ON: u8 = 1;
/// The masked layout's counts ignored: every tile of the capacity computed and written.
const COUNT_IGNORED: u8 = 2;
/// The copies of A take the next group's layer: a weight of the wrong group (the block-scaled
/// kernel's scale of the wrong group is the same mistake).
const WRONG_GROUPS_A: u8 = 3;

/// `wgmma-16bit`'s arguments, their grouped walk planted with bug `BUG`.
#[derive(Clone, Copy)]
struct PlantedArgs<const BUG: u8>(HalfGemmArgs<Bf16>);

impl<const BUG: u8> Sizes for PlantedArgs<BUG> {
    fn mnk(&self) -> (u32, u32, u32) {
        self.0.mnk()
    }

    fn members(&self) -> u32 {
        self.0.members()
    }

    fn member(self, tile: Tile) -> Self {
        if BUG == COUNT_IGNORED {
            return PlantedArgs(self.0.of_member(tile.member));
        }
        PlantedArgs(self.0.member(tile))
    }

    fn locate(&self, tile: Tile, bn: u32) -> Option<Tile> {
        match BUG {
            GROUP_ONE_BLOCK_ON => {
                group_cases::one_block_on(tile, (bn, self.0.n), |t| self.0.locate(t, bn))
            }
            COUNT_IGNORED => Some(tile),
            _ => self.0.locate(tile, bn),
        }
    }
}

/// `wgmma-16bit:1` (the registry's launch of it fits) on the planted arguments.
#[derive(Clone, Copy)]
struct Planted<const BUG: u8>;

impl<const BUG: u8> Kernel for Planted<BUG> {
    type Args = PlantedArgs<BUG>;
    kernels_gpu::sizes_of!(Plain16);
    const GROUPS: bool = true;

    unsafe fn load(self, maps: *const TensorMap, stages: Stages, s: u32, tile: Tile, slice: u32) {
        let tile = if BUG == WRONG_GROUPS_A {
            Tile {
                group: (tile.group + 1) % 3,
                ..tile
            }
        } else {
            tile
        };
        unsafe { Plain16::default().load(maps, stages, s, tile, slice) }
    }

    unsafe fn consume(
        self,
        args: PlantedArgs<BUG>,
        maps: *const TensorMap,
        consumer: &mut Consumer,
        work: Work,
    ) {
        unsafe { Plain16::default().consume(args.0, maps, consumer, work) }
    }
}

const _: () = assert!(<Planted<NONE> as Kernel>::POOL_BYTES == Plain16::POOL_BYTES);

/// # Safety
/// As `wgmma_16bit::gemm`.
unsafe fn planted<const BUG: u8>(args: HalfGemmArgs<Bf16>, maps: *const TensorMap) {
    unsafe { pipeline::run(Planted::<BUG>, PlantedArgs::<BUG>(args), maps) }
}

/// Runs the planted kernel `body` on `p` with `table` and returns its check.
fn planted_check(
    p: &Problem,
    table: &[u32],
    body: EmulatedBody<HalfGemmArgs<Bf16>>,
) -> verify::Check {
    let inputs = Inputs::<bf16> {
        groups: table.to_vec(),
        ..Inputs::generate(p)
    };
    let kernel = registry::find("wgmma-16bit").unwrap();
    let launch = plan(kernel, None, p, None).unwrap();
    let mut c = inputs.c_for_checked_run(p.beta);
    emulator::launch_planted(&launch, body, p, &inputs, (&mut c, &mut [0; 3])).unwrap();
    let references = verify::references(p, &inputs);
    let uploaded = inputs.c_for_checked_run(p.beta);
    verify::check_groups(p, kernel.arithmetic(), &references, &inputs, &uploaded, &c)
}

#[test]
fn planted_group_bugs_fail_the_check() {
    let nn = Transposes::NN;
    let contiguous_p = contiguous(Dtype::Bf16, (136, 64), nn, &UNEVEN, 3, 0.0);
    let masked_p = masked(Dtype::Bf16, (136, 200, 64), nn, &COUNTS, 0.5);
    let body = |f: unsafe fn(HalfGemmArgs<Bf16>, *const TensorMap)| EmulatedBody::TensorMaps(f);
    let control = [
        planted_check(&contiguous_p, &UNEVEN, body(planted::<NONE>)),
        planted_check(&masked_p, &COUNTS, body(planted::<NONE>)),
    ];
    for c in &control {
        assert!(c.passed(), "the kernel as it is: {}", c.summary());
    }
    let one_block_on = planted_check(&contiguous_p, &UNEVEN, body(planted::<GROUP_ONE_BLOCK_ON>));
    assert!(
        !one_block_on.passed(),
        "the group one block on passed: {}",
        one_block_on.summary()
    );
    let ignored = planted_check(&masked_p, &COUNTS, body(planted::<COUNT_IGNORED>));
    assert!(
        !ignored.passed(),
        "the counts ignored passed: {}",
        ignored.summary()
    );
    assert!(ignored.padding_changed > 0, "{}", ignored.summary());
    let wrong_a = planted_check(&contiguous_p, &UNEVEN, body(planted::<WRONG_GROUPS_A>));
    assert!(
        !wrong_a.passed(),
        "the next group's A passed: {}",
        wrong_a.summary()
    );
    println!(
        "control: {}\ngroup one block on: {}\ncounts ignored: {}\nthe next group's A: {}",
        control[0].summary(),
        one_block_on.summary(),
        ignored.summary(),
        wrong_a.summary()
    );
}

/// The library's form (`GemmConfig::contiguous_groups` / `masked_groups`, `Gemm::run_grouped`):
/// each group's columns are bit for bit those of the same kernel run on that group alone, the
/// columns no group owns are left as they were, and a table of the wrong length, a missing one
/// or one given to a GEMM that is not grouped, and cuBLAS, are refused with typed errors.
#[test]
fn the_library_runs_grouped_gemms_as_each_group_alone() {
    use gpu_gemm::{Algorithm, Gemm, GemmConfig, GemmError, GROUP_COLUMNS};
    let gemm = Gemm::emulator();
    let (m, k, groups) = (136u32, 64u32, 3u32);
    let value = |i: usize| bf16::from_f32(((i * 7919) % 2001) as f32 / 1000.0 - 1.0);
    let kernel = Algorithm::kernel_tile("wgmma-layouts", 2);
    let a: Vec<bf16> = (0..(k * m * groups) as usize).map(value).collect();
    let stride_a = (k * m) as u64;
    let base = GemmConfig::new(m, 0, k)
        .transposes(gpu_gemm::Transpose::Yes, gpu_gemm::Transpose::No)
        .leading_dimensions(k, k, m)
        .scale(0.75, 0.5);
    // Contiguous: UNEVEN's runs.
    let n = UNEVEN.len() as u32 * GROUP_COLUMNS;
    let b: Vec<bf16> = (0..(k * n) as usize).map(|i| value(i + 3)).collect();
    let c0: Vec<bf16> = (0..(m * n) as usize).map(|i| value(i + 11)).collect();
    let config = GemmConfig { n, ..base }.contiguous_groups(groups, stride_a);
    let mut c = c0.clone();
    gemm.run_grouped(&config, &kernel, &a, &b, &UNEVEN.to_vec(), &mut c)
        .unwrap();
    for (j, &group) in UNEVEN.iter().enumerate() {
        let cols = j * GROUP_COLUMNS as usize..(j + 1) * GROUP_COLUMNS as usize;
        let (c_cols, b_cols) = (
            cols.start * m as usize..cols.end * m as usize,
            cols.start * k as usize..cols.end * k as usize,
        );
        if group >= groups {
            assert_eq!(c[c_cols.clone()], c0[c_cols], "padding run {j} was written");
            continue;
        }
        let one = GemmConfig {
            n: GROUP_COLUMNS,
            ..base
        };
        let a_g = &a[group as usize * stride_a as usize..][..stride_a as usize];
        let mut alone = c0[c_cols.clone()].to_vec();
        gemm.run(&one, &kernel, a_g, &b[b_cols], &mut alone)
            .unwrap();
        assert!(
            c[c_cols]
                .iter()
                .zip(&alone)
                .all(|(x, y)| x.to_bits() == y.to_bits()),
            "run {j} (group {group}) differs from the group alone"
        );
    }
    // Masked: COUNTS over a capacity of 200.
    let capacity = 200u32;
    let masked_config = GemmConfig {
        n: capacity,
        ..base
    }
    .masked_groups(
        COUNTS.len() as u32,
        stride_a,
        (k * capacity) as u64,
        (m * capacity) as u64,
    );
    let a4: Vec<bf16> = (0..(k * m) as usize * COUNTS.len()).map(value).collect();
    let b: Vec<bf16> = (0..(k * capacity) as usize * COUNTS.len())
        .map(|i| value(i + 5))
        .collect();
    let c0: Vec<bf16> = (0..(m * capacity) as usize * COUNTS.len())
        .map(|i| value(i + 9))
        .collect();
    let mut c = c0.clone();
    gemm.run_grouped(&masked_config, &kernel, &a4, &b, &COUNTS.to_vec(), &mut c)
        .unwrap();
    for (g, &count) in COUNTS.iter().enumerate() {
        let member = |len: u32| g * len as usize..(g + 1) * len as usize;
        let (c_g, c0_g) = (&c[member(m * capacity)], &c0[member(m * capacity)]);
        let live = (count * m) as usize;
        assert_eq!(
            c_g[live..],
            c0_g[live..],
            "group {g}: columns past its count {count} written"
        );
        if count == 0 {
            continue;
        }
        let one = GemmConfig { n: count, ..base };
        let mut alone = c0_g[..live].to_vec();
        let b_g = &b[member(k * capacity)][..(k * count) as usize];
        gemm.run(&one, &kernel, &a4[member(k * m)], b_g, &mut alone)
            .unwrap();
        assert!(
            c_g[..live]
                .iter()
                .zip(&alone)
                .all(|(x, y)| x.to_bits() == y.to_bits()),
            "group {g} differs from the group alone"
        );
    }
    // The refusals.
    let mut c = c0.clone();
    let short = vec![0u32; 3];
    let e = gemm
        .run_grouped(&masked_config, &kernel, &a4, &b, &short, &mut c)
        .unwrap_err();
    assert!(matches!(e, GemmError::GroupTableMisshaped { .. }), "{e}");
    assert!(e.to_string().contains("a count per group: 4"), "{e}");
    let e = gemm
        .run(&masked_config, &kernel, &a4, &b, &mut c)
        .unwrap_err();
    assert!(
        matches!(e, GemmError::GroupTableMisshaped { .. }) && e.to_string().contains("run_grouped"),
        "{e}"
    );
    let plain = GemmConfig {
        n: capacity,
        ..base
    };
    let e = gemm
        .run_grouped(&plain, &kernel, &a4, &b, &COUNTS.to_vec(), &mut c)
        .unwrap_err();
    assert!(e.to_string().contains("not grouped"), "{e}");
    let e = gemm
        .run_grouped(
            &masked_config,
            &Algorithm::Cublas,
            &a4,
            &b,
            &COUNTS.to_vec(),
            &mut c,
        )
        .unwrap_err();
    assert!(matches!(e, GemmError::Unsupported { .. }), "{e}");
}
