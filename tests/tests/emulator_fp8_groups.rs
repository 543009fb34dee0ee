//! The block-scaled e4m3 grouped GEMM on the emulator (`host --dtype e4m3 --scaling block
//! --groups`): every configuration of `wgmma-fp8-block` that walks groups computes every group
//! with its own A and A's scales, contiguous (uneven groups, a group in two runs, padding
//! between) and masked (counts that end inside a box, at a tile's edge, fill the capacity, or
//! are 0), each group checked against the f64 reference of its own dequantised operands and
//! every column no group owns required to be as it was; then the planted bugs of issue 29 and
//! the refusals.
use gpu_gemm::emulator::launch_fp8_body;
use gpu_gemm::fp8::grouped::{self, GroupedInputs, GroupedLaunch};
use gpu_gemm::fp8::quantize::{Fp8Problem, Scaling};
use gpu_gemm::fp8::reference::Fp8Check;
use gpu_gemm::fp8::run::{execute_many, kernel_launch};
use gpu_gemm::launch::{Fp8Groups, Fp8Operands, Launch};
use gpu_gemm::problem::Init;
use gpu_gemm::registry;
use gpu_gemm::run::{Backend, Clock, Timing};
use kernels_gpu::device::tma::TensorMap;
use kernels_gpu::gemm::{Fp8GemmArgs, GroupLayout};
use kernels_gpu::pipeline::schedule::Tile;
use kernels_gpu::pipeline::{self, Consumer, Kernel, Problem as Sizes, Stages, Work};
use kernels_gpu::registry::Shape;
use kernels_gpu::variants::wgmma_fp8_block::WgmmaFp8Block;

#[allow(dead_code)]
mod epilogue_cases;
#[allow(dead_code)]
mod group_cases;
use group_cases::{COUNTS, UNEVEN};

const ONCE: Timing = Timing {
    warmup: 0,
    iters: 0,
    budget_ms: 0.0,
    check: true,
    cold: false,
    clock: Clock::Events,
};

/// The groups of the contiguous table [`UNEVEN`] (the 16-bit test's cases).
const GROUPS: u32 = 3;

/// m = 136 leaves a partial tile in m; k = 384 is three blocks of scales; lda and ldb padded.
fn problem(layout: GroupLayout, n: u32, count: u32) -> Fp8Problem {
    Fp8Problem {
        b_format: gpu_gemm::fp8::quantize::Format::E4m3,
        shape: Shape {
            m: 136,
            n,
            k: 384,
            lda: 400,
            ldb: 416,
            ldc: 144,
        },
        alpha: 1.5,
        beta: -0.5,
        scaling: Scaling::Block,
        init: Init::Random,
        seed: 29,
        outliers: false,
        epilogue: kernels_gpu::fused::Epilogue::NONE,
        groups: Fp8Groups::grouped_as(layout, count),
    }
}

fn contiguous() -> (Fp8Problem, Vec<u32>) {
    let n = 128 * UNEVEN.len() as u32;
    (problem(GroupLayout::Contiguous, n, GROUPS), UNEVEN.to_vec())
}

fn masked() -> (Fp8Problem, Vec<u32>) {
    let p = problem(GroupLayout::Masked, 200, COUNTS.len() as u32);
    (p, COUNTS.to_vec())
}

/// The inputs of `p` with `table`, each group's A (and its scales) `4·(g + 1)` times larger,
/// so that the scales of one group are far from another's: uniform data alone gives every
/// group's blocks scales within about 1% of each other, and a kernel that took the wrong
/// group's would pass.
fn inputs(p: &Fp8Problem, table: Vec<u32>) -> GroupedInputs {
    let mut x = GroupedInputs::generate(p, table);
    for (g, a) in x.a.iter_mut().enumerate() {
        for scale in &mut a.scales {
            *scale *= 4.0 * (g + 1) as f32;
        }
    }
    x
}

/// Runs `name:tile` on `p` with `table` on the emulator and returns its check.
fn run(name: &str, tile: Option<u32>, p: &Fp8Problem, table: &[u32]) -> Fp8Check {
    let x = inputs(p, table.to_vec());
    let tile = tile.unwrap_or(kernels_gpu::registry::find(name).unwrap().tiles[0]);
    let launch = launch_of(name, tile, p);
    let (m, _, _) = grouped::measure(
        &Backend::Emulator,
        GroupedLaunch::Kernel(&launch),
        name,
        p,
        &x,
        ONCE,
    )
    .unwrap_or_else(|e| panic!("{name}:{tile}: {e:#}"));
    let references = grouped::references(p, &x);
    grouped::check_groups(p, &x, &references, (&m.uploaded_c, &m.result), true)
}

/// The registry's launch of `name:tile` on `p`'s members.
fn launch_of(name: &str, tile: u32, p: &Fp8Problem) -> Launch {
    kernel_launch(
        kernels_gpu::registry::find(name).unwrap(),
        tile,
        (&p.shape, p.groups.members(&p.shape).count),
        kernels_gpu::gemm::Dtype::E4m3,
    )
}

#[test]
fn every_grouped_fp8_configuration_computes_every_group_in_both_layouts() {
    let block = kernels_gpu::registry::find("wgmma-fp8-block").unwrap();
    let grouped: Vec<u32> = block
        .tiles
        .iter()
        .copied()
        .filter(|&t| (block.tma.unwrap())(t, kernels_gpu::registry::Layout::TN).grouped)
        .collect();
    assert_eq!(
        grouped,
        [6, 1, 2, 3, 5, 8, 9, 11],
        "the configurations that walk groups"
    );
    // The default configuration in both layouts, the others as tests::Sample draws them.
    let sample = tests::Sample::from_env();
    for (p, table) in [contiguous(), masked()] {
        let layout = format!("{:?}", p.groups.layout);
        for (i, &tile) in grouped.iter().enumerate() {
            if !sample.runs(&layout, "wgmma-fp8-block", i, 0, false) {
                continue;
            }
            let check = run("wgmma-fp8-block", Some(tile), &p, &table);
            println!(
                "wgmma-fp8-block:{tile} {:?}: {}",
                p.groups.layout,
                check.summary()
            );
            assert!(
                check.passed(),
                "{tile} {:?}: {}",
                p.groups.layout,
                check.summary()
            );
        }
    }
}

/// `auto` and the host's pipeline (the problem's own table: equal runs, or counts drawn from
/// the seed in multiples of 16) take `wgmma-fp8-block:8` (the masked layout `:11`), and the
/// kernels that cannot walk groups, or a per-tensor scaling, are refused with the reason.
#[test]
fn auto_runs_the_groups_and_the_others_are_refused() {
    let p = Fp8Problem {
        shape: Shape {
            n: 384,
            ..contiguous().0.shape
        },
        ..contiguous().0
    };
    let (masked_p, _) = masked();
    let kernels = |names: &[&str]| -> Vec<_> {
        names
            .iter()
            .map(|n| {
                let (name, tile) = n
                    .split_once(':')
                    .map_or((*n, None), |(n, t)| (n, Some(t.parse::<u32>().unwrap())));
                (registry::find(name).unwrap(), tile)
            })
            .collect()
    };
    // The masked layout's own `:11`: `:8` walking the tiles below the counts, packed.
    for (p, tile) in [(&p, 8), (&masked_p, 11)] {
        let reports = execute_many(&Backend::Emulator, &kernels(&["auto"]), p, ONCE, |_| {});
        let report = reports[0].as_ref().unwrap();
        assert_eq!(report.variant, format!("auto→wgmma-fp8-block:{tile}"));
        assert!(report.passed(), "{:?}", report.check);
    }
    let refusals = execute_many(
        &Backend::Emulator,
        &kernels(&[
            "wgmma-fp8-block:4",
            "wgmma-fp8-block:7",
            "wgmma-fp8-block-narrow",
            "wgmma-fp8",
        ]),
        &p,
        ONCE,
        |_| {},
    );
    // The refusal names the configurations that do run groups, from the registry.
    let named = refusals[0]
        .as_ref()
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        named.contains("wgmma-fp8-block:6, :1, :2, :3, :5, :8, :9, :11")
            && named.contains("wgmma-fp8:2, :6")
            && !named.contains(":4,"),
        "{named}"
    );
    let reasons = [
        ("block:4", "does not run grouped GEMMs"),
        ("block:7", "does not run grouped GEMMs"),
        ("narrow", "does not run grouped GEMMs"),
        ("wgmma-fp8", "takes one scale per tensor"),
    ];
    for ((name, reason), r) in reasons.iter().zip(&refusals) {
        let e = r
            .as_ref()
            .err()
            .unwrap_or_else(|| panic!("{name} ran groups"))
            .to_string();
        assert!(e.contains(reason), "{name}: {e}");
    }
    let per_tensor = Fp8Problem {
        scaling: Scaling::PerTensor,
        ..p
    };
    let e = execute_many(
        &Backend::Emulator,
        &kernels(&["auto"]),
        &per_tensor,
        ONCE,
        |_| {},
    )
    .pop()
    .unwrap()
    .unwrap_err()
    .to_string();
    assert!(e.contains("give --scaling block"), "{e}");
}

/// The bug selectors of [`PlantedArgs`].
const NONE: u8 = 0;
/// The contiguous layout's group read one block of columns on: a tile multiplies the A of the
/// group after its own, with that group's scales.
const GROUP_ONE_BLOCK_ON: u8 = 1;
/// The masked layout's counts ignored: every tile of the capacity computed and written.
const COUNT_IGNORED: u8 = 2;
/// A's scales taken from the next group's block (the right group's A).
const WRONG_GROUPS_SCALES: u8 = 3;

/// `wgmma-fp8-block:1`'s arguments, their grouped walk planted with bug `BUG`.
#[derive(Clone, Copy)]
struct PlantedArgs<const BUG: u8>(Fp8GemmArgs);

impl<const BUG: u8> Sizes for PlantedArgs<BUG> {
    fn mnk(&self) -> (u32, u32, u32) {
        self.0.mnk()
    }

    fn members(&self) -> u32 {
        self.0.members()
    }

    /// What the kernel's own `member_args` gives its mainloop (the group's and member's
    /// scales; its epilogue finds the member's C after the mainloop), with the bug.
    fn member(self, tile: Tile) -> Self {
        let scales_of = |args: Fp8GemmArgs, tile| Kernel::member_args(Block::default(), args, tile);
        match BUG {
            COUNT_IGNORED => PlantedArgs(scales_of(
                Fp8GemmArgs {
                    groups: kernels_gpu::gemm::Groups::NONE,
                    ..self.0
                },
                tile,
            )),
            WRONG_GROUPS_SCALES => {
                let next = Tile {
                    group: (tile.group + 1) % GROUPS,
                    ..tile
                };
                PlantedArgs(Fp8GemmArgs {
                    scale_a: scales_of(self.0, next).scale_a,
                    ..scales_of(self.0, tile)
                })
            }
            _ => PlantedArgs(scales_of(self.0, tile)),
        }
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

/// The kernel the registry launches as `wgmma-fp8-block:1`.
type Block = WgmmaFp8Block<5>;

/// `wgmma-fp8-block:1` on the planted arguments.
#[derive(Clone, Copy)]
struct Planted<const BUG: u8>;

impl<const BUG: u8> Kernel for Planted<BUG> {
    type Args = PlantedArgs<BUG>;
    kernels_gpu::sizes_of!(Block);
    const GROUPS: bool = true;

    unsafe fn load(self, maps: *const TensorMap, stages: Stages, s: u32, tile: Tile, slice: u32) {
        unsafe { Kernel::load(Block::default(), maps, stages, s, tile, slice) }
    }

    unsafe fn consume(
        self,
        args: PlantedArgs<BUG>,
        maps: *const TensorMap,
        consumer: &mut Consumer,
        work: Work,
    ) {
        unsafe { Block::default().consume(args.0, maps, consumer, work) }
    }

    fn drain(self, consumer: &Consumer) {
        Kernel::drain(Block::default(), consumer)
    }
}

const _: () = assert!(<Planted<NONE> as Kernel>::POOL_BYTES == Block::POOL_BYTES);

/// # Safety
/// As `wgmma_fp8_block::gemm`.
unsafe fn planted<const BUG: u8>(args: Fp8GemmArgs, maps: *const TensorMap) {
    unsafe { pipeline::run(Planted::<BUG>, PlantedArgs::<BUG>(args), maps) }
}

/// Runs bug `BUG` on `p` with `table` (the registry's launch of `wgmma-fp8-block:1`) and
/// returns the check.
fn planted_check<const BUG: u8>((p, table): (Fp8Problem, Vec<u32>)) -> Fp8Check {
    let x = inputs(&p, table);
    let operands = x.concatenated();
    let ops = Fp8Operands {
        a: &operands.a,
        b: &operands.b,
        scale_a: &operands.scale_a,
        scale_b: &operands.scale_b,
        c: &operands.c,
        groups: p.groups,
        table: &x.table,
        fused: (kernels_gpu::fused::Epilogue::NONE, &[]),
    };
    let launch = launch_of("wgmma-fp8-block", 1, &p);
    let mut c = operands.c.clone();
    launch_fp8_body(
        &launch,
        planted::<BUG>,
        &p.shape,
        (p.alpha, p.beta),
        &ops,
        (&mut c, &mut gpu_gemm::emulator::AMAX_ZEROED.clone()),
    )
    .unwrap_or_else(|e| panic!("bug {BUG}: {e:#}"));
    let references = grouped::references(&p, &x);
    grouped::check_groups(&p, &x, &references, (&operands.c, &c), true)
}

#[test]
fn planted_group_bugs_fail_the_check() {
    let control = [
        planted_check::<NONE>(contiguous()),
        planted_check::<NONE>(masked()),
    ];
    for c in &control {
        assert!(c.passed(), "the kernel as it is: {}", c.summary());
    }
    let one_block_on = planted_check::<GROUP_ONE_BLOCK_ON>(contiguous());
    let ignored = planted_check::<COUNT_IGNORED>(masked());
    let wrong_scales = planted_check::<WRONG_GROUPS_SCALES>(contiguous());
    let wrong_scales_masked = planted_check::<WRONG_GROUPS_SCALES>(masked());
    println!(
        "control: {}\ngroup one block on: {}\ncounts ignored: {}\nscales of the next group: {}\n\
         … masked: {}",
        control[0].summary(),
        one_block_on.summary(),
        ignored.summary(),
        wrong_scales.summary(),
        wrong_scales_masked.summary()
    );
    assert!(!one_block_on.passed(), "the group one block on passed");
    assert!(!ignored.passed(), "the counts ignored passed");
    assert!(ignored.check.padding_changed > 0, "{}", ignored.summary());
    assert!(!wrong_scales.passed(), "the next group's scales passed");
    assert!(
        !wrong_scales_masked.passed(),
        "the next group's scales passed (masked)"
    );
}

/// The library's form (`Gemm::run_fp8_grouped`): each group's columns are bit for bit those of
/// the same kernel run on that group alone (`Gemm::run_fp8`), the columns no group owns are
/// left as they were; a table of the wrong length and groups that are not packed are refused
/// with typed errors.
#[test]
fn the_library_runs_fp8_groups_as_each_group_alone() {
    use gpu_gemm::fp8::quantize::BLOCK;
    use gpu_gemm::{Algorithm, Fp8, Gemm, GemmConfig, GemmError, Transpose};
    let gemm = Gemm::emulator();
    let (p, table) = contiguous();
    let s = p.shape;
    let x = inputs(&p, table.clone());
    let o = x.concatenated();
    let kernel = Algorithm::kernel_tile("wgmma-fp8-block", 1);
    let base = GemmConfig::new(s.m, s.n, s.k)
        .transposes(Transpose::Yes, Transpose::No)
        .leading_dimensions(s.lda, s.ldb, s.ldc)
        .scale(p.alpha as f64, p.beta as f64);
    let (stride_a, k_blocks) = ((s.lda * s.m) as usize, s.k.div_ceil(BLOCK) as usize);
    let config = base.contiguous_groups(GROUPS, stride_a as u64);
    let mut c = o.c.clone();
    fn operands<'o>(o: &'o grouped::Concatenated, a_scales: &'o [f32]) -> (Fp8<'o>, Fp8<'o>) {
        (
            Fp8::per_block(&o.a, a_scales),
            Fp8::per_block(&o.b, &o.scale_b),
        )
    }
    gemm.run_fp8_grouped(&config, &kernel, operands(&o, &o.scale_a), &table, &mut c)
        .unwrap();
    for run in grouped::runs(&p, &table) {
        let (g, first, cols) = (run.group as usize, run.first as usize, run.columns as usize);
        let (ldb, ldc) = (s.ldb as usize, s.ldc as usize);
        let one = GemmConfig {
            n: run.columns,
            ..base
        };
        let a = &o.a[g * stride_a..][..stride_a];
        let a_scales = &o.scale_a[g * s.m as usize * k_blocks..][..s.m as usize * k_blocks];
        let b = &o.b[first * ldb..(first + cols) * ldb];
        let blocks = first / BLOCK as usize..(first + cols).div_ceil(BLOCK as usize);
        let b_scales = &o.scale_b[blocks.start * k_blocks..blocks.end * k_blocks];
        let mut alone = o.c[first * ldc..(first + cols) * ldc].to_vec();
        gemm.run_fp8(
            &one,
            &kernel,
            Fp8::per_block(a, a_scales),
            Fp8::per_block(b, b_scales),
            &mut alone,
        )
        .unwrap();
        let grouped = &c[first * ldc..(first + cols) * ldc];
        assert!(
            grouped
                .iter()
                .zip(&alone)
                .all(|(x, y)| x.to_bits() == y.to_bits()),
            "group {g} at column {first} differs from the group alone"
        );
    }
    // The padding run (the third) is as it was.
    let padding = 2 * 128 * s.ldc as usize..3 * 128 * s.ldc as usize;
    assert!(c[padding.clone()]
        .iter()
        .zip(&o.c[padding])
        .all(|(x, y)| x.to_bits() == y.to_bits()));
    // A table one word short, and groups not packed.
    let mut c = o.c.clone();
    let short = &table[..table.len() - 1];
    let e = gemm
        .run_fp8_grouped(
            &config,
            &kernel,
            operands(&o, &o.scale_a),
            &short.to_vec(),
            &mut c,
        )
        .unwrap_err();
    assert!(matches!(e, GemmError::GroupTableMisshaped { .. }), "{e}");
    let spaced = base.contiguous_groups(GROUPS, stride_a as u64 + 64);
    let e = gemm
        .run_fp8_grouped(&spaced, &kernel, operands(&o, &o.scale_a), &table, &mut c)
        .unwrap_err();
    assert!(
        matches!(&e, GemmError::InvalidConfig(m) if m.contains("packed")),
        "{e}"
    );
    // A's scales for two groups of three.
    let two = &o.scale_a[..2 * s.m as usize * k_blocks];
    let e = gemm
        .run_fp8_grouped(&config, &kernel, operands(&o, two), &table, &mut c)
        .unwrap_err();
    assert!(matches!(e, GemmError::ScalesMisshaped { .. }), "{e}");
}

/// A strided batch with block scales is the masked layout with every count n: `run_fp8` with
/// `GemmConfig::batch` gives C bit for bit as `run_fp8_grouped` with a full table does, and
/// each member as the same kernel on that member alone; with members spaced apart (strides
/// past the packed ones) the gaps are left as they were. Scales per tensor on the block kernel,
/// and a stride off the TMA's 16 bytes, are refused.
#[test]
fn a_strided_batch_is_masked_groups_whose_every_count_is_n() {
    use gpu_gemm::fp8::quantize::BLOCK;
    use gpu_gemm::{Algorithm, Fp8, Gemm, GemmConfig, GemmError, Transpose};
    let gemm = Gemm::emulator();
    let members = 3u32;
    let p = problem(GroupLayout::Masked, 200, members);
    let s = p.shape;
    let table = vec![s.n; members as usize];
    let o = inputs(&p, table.clone()).concatenated();
    let kernel = Algorithm::kernel_tile("wgmma-fp8-block", 1);
    let base = GemmConfig::new(s.m, s.n, s.k)
        .transposes(Transpose::Yes, Transpose::No)
        .leading_dimensions(s.lda, s.ldb, s.ldc)
        .scale(p.alpha as f64, p.beta as f64);
    let [stride_a, stride_b, stride_c] =
        [s.lda * s.m, s.ldb * s.n, s.ldc * s.n].map(|x| x as usize);
    let k_blocks = s.k.div_ceil(BLOCK) as usize;
    let (a_scales, b_scales) = (
        s.m as usize * k_blocks,
        s.n.div_ceil(BLOCK) as usize * k_blocks,
    );
    let strides = (stride_a as u64, stride_b as u64, stride_c as u64);
    let operands = || {
        (
            Fp8::per_block(&o.a, &o.scale_a),
            Fp8::per_block(&o.b, &o.scale_b),
        )
    };
    // The batch, and the same launch as masked groups with a full table.
    let batch = base.batch(members, strides.0, strides.1, strides.2);
    let mut batched = o.c.clone();
    let (a, b) = operands();
    gemm.run_fp8(&batch, &kernel, a, b, &mut batched).unwrap();
    let config = base.masked_groups(members, strides.0, strides.1, strides.2);
    let mut grouped = o.c.clone();
    gemm.run_fp8_grouped(&config, &kernel, operands(), &table, &mut grouped)
        .unwrap();
    let same = |x: &[gpu_gemm::half::bf16], y: &[gpu_gemm::half::bf16]| {
        x.len() == y.len() && x.iter().zip(y).all(|(x, y)| x.to_bits() == y.to_bits())
    };
    assert!(
        same(&batched, &grouped),
        "the batch differs from the masked groups"
    );
    assert!(!same(&batched, &o.c), "the batch wrote nothing");
    for j in 0..members as usize {
        let mut alone = o.c[j * stride_c..][..stride_c].to_vec();
        gemm.run_fp8(
            &base,
            &kernel,
            Fp8::per_block(
                &o.a[j * stride_a..][..stride_a],
                &o.scale_a[j * a_scales..][..a_scales],
            ),
            Fp8::per_block(
                &o.b[j * stride_b..][..stride_b],
                &o.scale_b[j * b_scales..][..b_scales],
            ),
            &mut alone,
        )
        .unwrap();
        assert!(
            same(&batched[j * stride_c..][..stride_c], &alone),
            "member {j} differs from the member alone"
        );
    }
    // Members spaced apart: 32 codes after each A and B, 16 elements after each C.
    let gaps = (32usize, 32usize, 16usize);
    let spread = |packed: usize, gap: usize, data: &[u8]| -> Vec<u8> {
        data.chunks(packed)
            .flat_map(|m| m.iter().copied().chain(std::iter::repeat_n(0x7f, gap)))
            .collect()
    };
    let (a, b) = (
        spread(stride_a, gaps.0, &o.a),
        spread(stride_b, gaps.1, &o.b),
    );
    let sentinel = gpu_gemm::half::bf16::from_f32(-1234.0);
    let mut c: Vec<gpu_gemm::half::bf16> =
        o.c.chunks(stride_c)
            .flat_map(|m| {
                m.iter()
                    .copied()
                    .chain(std::iter::repeat_n(sentinel, gaps.2))
            })
            .collect();
    let spaced = base.batch(
        members,
        (stride_a + gaps.0) as u64,
        (stride_b + gaps.1) as u64,
        (stride_c + gaps.2) as u64,
    );
    gemm.run_fp8(
        &spaced,
        &kernel,
        Fp8::per_block(&a, &o.scale_a),
        Fp8::per_block(&b, &o.scale_b),
        &mut c,
    )
    .unwrap();
    for (j, member) in c.chunks(stride_c + gaps.2).enumerate() {
        assert!(
            same(&member[..stride_c], &batched[j * stride_c..][..stride_c]),
            "member {j} at spaced strides differs from the packed batch's"
        );
        assert!(
            member[stride_c..]
                .iter()
                .all(|x| x.to_bits() == sentinel.to_bits()),
            "the gap after member {j} was written"
        );
    }
    // One scale per tensor on the block kernel, and a stride off 16 bytes.
    let one = vec![1.0f32; members as usize];
    let e = gemm
        .run_fp8(
            &batch,
            &kernel,
            Fp8::per_tensor(&o.a, &one),
            Fp8::per_tensor(&o.b, &one),
            &mut o.c.clone(),
        )
        .unwrap_err();
    assert!(
        matches!(&e, GemmError::Unsupported { reason, .. } if reason.contains("one scale per block")),
        "{e}"
    );
    let (a, b) = operands();
    let odd = base.batch(members, strides.0, strides.1, strides.2 + 4);
    let mut c = vec![gpu_gemm::half::bf16::ZERO; members as usize * (stride_c + 4)];
    let e = gemm.run_fp8(&odd, &kernel, a, b, &mut c).unwrap_err();
    assert!(
        matches!(&e, GemmError::InvalidConfig(m) if m.contains("16 bytes")),
        "{e}"
    );
}

/// `host --batch` in e4m3 (`Fp8Problem::per_tensor` of a batched problem, block scales): the
/// masked layout whose every count is n, every member checked against its own reference.
#[test]
fn an_e4m3_batch_runs_on_the_grouped_walk_with_every_count_full() {
    let mut p = epilogue_cases::problem(
        kernels_gpu::gemm::Dtype::E4m3,
        (136, 72, 256),
        gpu_gemm::problem::Transposes::new(
            gpu_gemm::problem::Transpose::Yes,
            gpu_gemm::problem::Transpose::No,
        ),
        0.5,
        "none",
    );
    p.batch = p.packed_strides(3);
    p.validate().unwrap();
    let fp8 = Fp8Problem {
        scaling: Scaling::Block,
        ..Fp8Problem::per_tensor(&p)
    };
    assert_eq!(fp8.groups, Fp8Groups::batch(p.batch));
    assert_eq!(gpu_gemm::fp8::run::group_table(&fp8), [72, 72, 72]);
    let variants = [
        (registry::find("auto").unwrap(), None),
        (registry::find("wgmma-fp8-block").unwrap(), Some(1)),
    ];
    for report in execute_many(&Backend::Emulator, &variants, &fp8, ONCE, |_| {}) {
        let report = report.unwrap();
        let check = report.check.expect("checked run");
        assert!(check.passed(), "{}: {}", report.variant, check.summary());
        println!("{}: {}", report.variant, check.summary());
    }
}

/// The kernel the registry launches as `wgmma-fp8:2`, the per-tensor configuration that walks
/// batches.
type PerTensor = kernels_gpu::variants::wgmma_fp8::WgmmaFp8<
    kernels_gpu::variants::wgmma_tma_store::TmaStore<
        kernels_gpu::variants::wgmma_16bit::Plain<4>,
        false,
        true,
    >,
>;

/// `wgmma-fp8:2` whose members all read the first member's scales (`BUG`), or as it is.
#[derive(Clone, Copy)]
struct FirstMembersScales<const BUG: bool>;

impl<const BUG: bool> Kernel for FirstMembersScales<BUG> {
    type Args = Fp8GemmArgs;
    kernels_gpu::sizes_of!(PerTensor);
    const GROUPS: bool = <PerTensor as Kernel>::GROUPS;

    unsafe fn load(self, maps: *const TensorMap, stages: Stages, s: u32, tile: Tile, slice: u32) {
        unsafe { Kernel::load(PerTensor::default(), maps, stages, s, tile, slice) }
    }

    unsafe fn consume(self, args: Fp8GemmArgs, maps: *const TensorMap, c: &mut Consumer, w: Work) {
        unsafe { PerTensor::default().consume(args, maps, c, w) }
    }

    fn drain(self, consumer: &Consumer) {
        Kernel::drain(PerTensor::default(), consumer)
    }

    fn member_args(self, args: Fp8GemmArgs, tile: Tile) -> Fp8GemmArgs {
        let member = PerTensor::default().member_args(args, tile);
        if BUG {
            Fp8GemmArgs {
                scale_a: args.scale_a,
                scale_b: args.scale_b,
                ..member
            }
        } else {
            member
        }
    }
}

/// # Safety
/// As `wgmma_fp8::gemm`.
unsafe fn first_members_scales<const BUG: bool>(args: Fp8GemmArgs, maps: *const TensorMap) {
    unsafe { pipeline::run(FirstMembersScales::<BUG>, args, maps) }
}

/// A strided batch with one scale per tensor (`host --batch` in e4m3 per tensor,
/// `Gemm::run_fp8` with `Fp8::per_tensor`): `wgmma-fp8:2` (and `:6`, `auto`'s) walks it as the masked layout whose
/// every count is n, each member with its own A and B scale (`scale_a[j]`, `scale_b[j]`), here
/// far apart; `:6` (128 × 128 tiles) too. Every member is checked against its own reference; the planted bug (every member
/// reads member 0's scales) fails that check; the library's batch is each member alone, bit for
/// bit, and cuBLASLt (one scale for the whole batch) is refused.
#[test]
fn a_per_tensor_batch_reads_each_members_own_scales() {
    use gpu_gemm::{Algorithm, Fp8, Gemm, GemmConfig, GemmError, Transpose};
    let members = 3u32;
    let shape = problem(GroupLayout::Masked, 72, members).shape;
    let layers = gpu_gemm::problem::Batch {
        count: members,
        stride_a: (shape.lda * shape.m) as u64,
        stride_b: (shape.ldb * shape.n) as u64,
        stride_c: (shape.ldc * shape.n) as u64,
    };
    let p = Fp8Problem {
        scaling: Scaling::PerTensor,
        groups: Fp8Groups::batch(layers),
        ..problem(GroupLayout::Masked, 72, members)
    };
    let table = gpu_gemm::fp8::run::group_table(&p);
    let mut x = inputs(&p, table.clone());
    for (j, b) in x.b.iter_mut().enumerate() {
        b.scales[0] *= [1.0, 0.125, 8.0][j];
    }
    let o = x.concatenated();
    assert_eq!((o.scale_a.len(), o.scale_b.len()), (3, 3));
    let references = grouped::references(&p, &x);
    let ops = Fp8Operands {
        a: &o.a,
        b: &o.b,
        scale_a: &o.scale_a,
        scale_b: &o.scale_b,
        c: &o.c,
        groups: p.groups,
        table: &table,
        fused: (kernels_gpu::fused::Epilogue::NONE, &[]),
    };
    let launch = launch_of("wgmma-fp8", 2, &p);
    let checked = |body: unsafe fn(Fp8GemmArgs, *const TensorMap)| {
        let mut c = o.c.clone();
        let words = &mut gpu_gemm::emulator::AMAX_ZEROED.clone();
        launch_fp8_body(
            &launch,
            body,
            &p.shape,
            (p.alpha, p.beta),
            &ops,
            (&mut c, words),
        )
        .unwrap();
        grouped::check_groups(&p, &x, &references, (&o.c, &c), false)
    };
    let (right, planted) = (
        checked(first_members_scales::<false>),
        checked(first_members_scales::<true>),
    );
    println!(
        "per-tensor batch: {}\nevery member with member 0's scales: {}",
        right.summary(),
        planted.summary()
    );
    assert!(right.passed(), "{}", right.summary());
    assert!(!planted.passed(), "member 0's scales passed");
    // `:6` (the block kernel's skeleton, 128 × 128 tiles) walks batches too.
    let block_skeleton = launch_of("wgmma-fp8", 6, &p);
    let (m, _, _) = grouped::measure(
        &Backend::Emulator,
        GroupedLaunch::Kernel(&block_skeleton),
        "wgmma-fp8:6",
        &p,
        &x,
        ONCE,
    )
    .unwrap();
    let c = (&m.uploaded_c[..], &m.result[..]);
    let tiles_of_128 = grouped::check_groups(&p, &x, &references, c, false);
    assert!(
        tiles_of_128.passed(),
        "wgmma-fp8:6: {}",
        tiles_of_128.summary()
    );
    // The library: the batch, and each member alone.
    let gemm = Gemm::emulator();
    let s = p.shape;
    let base = GemmConfig::new(s.m, s.n, s.k)
        .transposes(Transpose::Yes, Transpose::No)
        .leading_dimensions(s.lda, s.ldb, s.ldc)
        .scale(p.alpha as f64, p.beta as f64);
    let batch = base.batch(members, layers.stride_a, layers.stride_b, layers.stride_c);
    let mut batched = o.c.clone();
    let (a, b) = (
        || Fp8::per_tensor(&o.a, &o.scale_a),
        || Fp8::per_tensor(&o.b, &o.scale_b),
    );
    let choice = gemm.run_fp8(
        &batch,
        &Algorithm::Auto(gpu_gemm::Math::Strict),
        a(),
        b(),
        &mut batched,
    );
    assert_eq!(choice.unwrap().entry, "gemm_wgmma_fp8_c6_e4m3");
    let [stride_a, stride_b, stride_c] =
        [layers.stride_a, layers.stride_b, layers.stride_c].map(|x| x as usize);
    for j in 0..members as usize {
        let mut alone = o.c[j * stride_c..][..stride_c].to_vec();
        gemm.run_fp8(
            &base,
            &Algorithm::kernel_tile("wgmma-fp8", 6),
            Fp8::per_tensor(&o.a[j * stride_a..][..stride_a], &o.scale_a[j..][..1]),
            Fp8::per_tensor(&o.b[j * stride_b..][..stride_b], &o.scale_b[j..][..1]),
            &mut alone,
        )
        .unwrap();
        let member = &batched[j * stride_c..][..stride_c];
        assert!(
            member
                .iter()
                .zip(&alone)
                .all(|(x, y)| x.to_bits() == y.to_bits()),
            "member {j} differs from the member alone"
        );
    }
    // Too few scales for the members, and cuBLASLt.
    let short = gemm
        .run_fp8(
            &batch,
            &Algorithm::Auto(gpu_gemm::Math::Strict),
            Fp8::per_tensor(&o.a, &o.scale_a[..1]),
            b(),
            &mut o.c.clone(),
        )
        .unwrap_err();
    assert!(
        matches!(short, GemmError::ScalesMisshaped { needed: 3, .. }),
        "{short}"
    );
    let e = gemm
        .run_fp8(&batch, &Algorithm::Cublas, a(), b(), &mut o.c.clone())
        .unwrap_err();
    assert!(
        matches!(&e, GemmError::Unsupported { reason, .. } if reason.contains("whole batch")),
        "{e}"
    );
}
