//! Experiment 005: the Hopper ladder — every step of tensor cores chapter 3 (and chapter 2's
//! TF32 kernels on the same skeleton) at each shape, beside cuBLAS of the same type.
//!
//! A ladder is one element type and its yardstick: BF16 and FP16 (`cublasGemmEx`, f32
//! accumulation), TF32 (`CUBLAS_TF32_TENSOR_OP_MATH`) and 3xTF32 (FP32 SGEMM, whose accuracy it
//! matches). Each step is a kernel configuration that adds one thing to the step before it;
//! the page shows every step's TFLOP/s and its ratio to the yardstick per shape, a chart of the
//! ratios per ladder, and which step is fastest where. All runs of one shape and element type
//! share their inputs and f64 reference ([`Context::measure`]).
use super::chart::{BarChart, Chart};
use super::context::{all_passed, describe, valid_time, Common, Context};
use super::page::{Page, Section};
use super::progress::Progress;
use super::table::{index_of_min, Cell, Table};
use anyhow::Result;
use gpu_gemm::problem::Problem;
use gpu_gemm::registry::{self, CublasMath, Variant};
use gpu_gemm::run::Report;
use kernels_gpu::gemm::Dtype;

pub const ID: &str = "005-hopper";

/// One ladder of the page, as `--ladders` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LadderArg {
    Bf16,
    F16,
    Tf32,
    #[value(name = "3xtf32")]
    ThreeTf32,
}

#[derive(clap::Args, Debug, Clone, Default)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
    /// The ladders, separated by commas [default: all four]
    #[arg(long, value_enum, value_delimiter = ',')]
    pub ladders: Vec<LadderArg>,
    /// Only these shapes, as MxNxK separated by commas [default: chapter 3's seven on the GPU,
    /// one that crosses every tile edge on the emulator]
    #[arg(long, value_delimiter = ',', value_parser = super::auto::parse_shape)]
    pub shapes: Vec<(u32, u32, u32)>,
}

/// Chapter 3's shapes: the squares, a short k, and two with fewer 256×128 tiles than SMs.
pub const GPU_SHAPES: [(u32, u32, u32); 7] = [
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (6144, 6144, 6144),
    (8192, 8192, 8192),
    (8192, 8192, 1024),
    (8192, 256, 8192),
    (1024, 1024, 8192),
];

/// On the emulator: one tile and a bit in each of m and n, four 64-deep k-slices and a bit.
const EMULATOR_SHAPE: (u32, u32, u32) = (264, 136, 264);

/// One rung: a kernel configuration and what it adds to the rung before it.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    pub variant: &'static str,
    pub tile: u32,
    pub adds: &'static str,
    /// Run only where the problem has fewer output tiles than the H100 has SMs (split-k: with
    /// many tiles it only adds the workspace's traffic).
    pub few_tiles_only: bool,
}

const fn step(variant: &'static str, tile: u32, adds: &'static str) -> Step {
    Step {
        variant,
        tile,
        adds,
        few_tiles_only: false,
    }
}

/// One ladder: an element type, its steps, and the cuBLAS it is measured against.
pub struct Ladder {
    pub name: &'static str,
    pub dtype: Dtype,
    pub yardstick: CublasMath,
    pub steps: &'static [Step],
}

const SIXTEEN_BIT_STEPS: &[Step] = &[
    step(
        "wgmma-16bit",
        1,
        "chapter 2's pipeline in 16 bits: both operands through descriptors, m64n256k16, 256×128×64 tiles",
    ),
    step("wgmma-cluster", 1, "2×1 clusters: the two CTAs share A by TMA multicast"),
    step(
        "wgmma-tma-store",
        1,
        "the epilogue through shared memory: stmatrix, then a TMA store",
    ),
    step("wgmma-tma-store", 2, "the same TMA store without clusters"),
    step(
        "wgmma-tma-store",
        3,
        "the whole tile staged at once (3 stages to make room)",
    ),
    step(
        "wgmma-tma-store",
        4,
        "cuBLAS's orientation, C = A·B: two m64n128k16 per consumer, A the transposed operand",
    ),
    step("wgmma-tma-store", 5, "the same without clusters"),
    step(
        "wgmma-pingpong",
        1,
        "ping-pong: each consumer a whole 256×64 tile, epilogues under the other's mainloop",
    ),
    Step {
        variant: "wgmma-split-k",
        tile: 4,
        adds: "k split 4 ways into an f32 workspace, a second launch adds them",
        few_tiles_only: true,
    },
];

/// The ladders in page order.
pub const LADDERS: [Ladder; 4] = [
    Ladder {
        name: "bf16",
        dtype: Dtype::Bf16,
        yardstick: CublasMath::Default,
        steps: SIXTEEN_BIT_STEPS,
    },
    Ladder {
        name: "f16",
        dtype: Dtype::F16,
        yardstick: CublasMath::Default,
        steps: SIXTEEN_BIT_STEPS,
    },
    Ladder {
        name: "tf32",
        dtype: Dtype::F32,
        yardstick: CublasMath::Tf32,
        steps: &[
            step(
                "wgmma-tf32",
                1,
                "chapter 2's kernel on the shared skeleton: 128×256×32, A from registers",
            ),
            step("wgmma-tf32", 4, "tiles in groups of 16 tile-rows (not 8)"),
            step("wgmma-tf32", 5, "2×1 clusters sharing B by TMA multicast"),
            step("wgmma-tf32", 6, "clusters and groups of 16"),
        ],
    },
    Ladder {
        name: "3xtf32",
        dtype: Dtype::F32,
        yardstick: CublasMath::Default,
        steps: &[
            step("wgmma-3xtf32", 1, "FP32 accuracy from three TF32 products"),
            step("wgmma-3xtf32", 2, "2×1 clusters sharing B by TMA multicast"),
        ],
    },
];

impl LadderArg {
    fn ladder(self) -> &'static Ladder {
        let name = match self {
            LadderArg::Bf16 => "bf16",
            LadderArg::F16 => "f16",
            LadderArg::Tf32 => "tf32",
            LadderArg::ThreeTf32 => "3xtf32",
        };
        LADDERS.iter().find(|l| l.name == name).expect("a ladder")
    }
}

/// SMs of the H100 the ladder is tuned on.
const SMS: u32 = 132;

/// Whether `step` runs on problem `p`.
fn runs_on(step: &Step, p: &Problem) -> bool {
    if !step.few_tiles_only {
        return true;
    }
    let kernel = kernels_gpu::registry::find("wgmma-16bit").expect("a registered kernel");
    let grid = (kernel.geometry)(p.shape.m, p.shape.n, p.shape.k, p.dtype.bytes(), 1).grid;
    grid.0 * grid.1 < SMS
}

/// One ladder's runs on one shape: a report per step (None: the step does not run there) and
/// the yardstick's.
struct Rung {
    problem: Problem,
    steps: Vec<Option<Result<Report>>>,
    yardstick: Option<Result<Report>>,
}

impl Rung {
    /// The step's throughput in TFLOP/s, if its check passed.
    fn tflops(&self, i: usize) -> Option<f64> {
        let ms = valid_time(self.steps[i].as_ref()?)?;
        Some(self.problem.flops() / (ms * 1e-3) / 1e12)
    }

    fn yardstick_ms(&self) -> Option<f64> {
        valid_time(self.yardstick.as_ref()?)
    }

    /// Yardstick time / step time: above 1 is faster than cuBLAS.
    fn ratio(&self, i: usize) -> Option<f64> {
        Some(self.yardstick_ms()? / valid_time(self.steps[i].as_ref()?)?)
    }

    fn fastest(&self) -> Option<usize> {
        index_of_min(self.steps.iter().map(|r| r.as_ref().and_then(valid_time)))
    }
}

pub fn run(ctx: &Context, args: &Args) -> Result<Page> {
    let ladders: Vec<&Ladder> = if args.ladders.is_empty() {
        LADDERS.iter().collect()
    } else {
        args.ladders.iter().map(|l| l.ladder()).collect()
    };
    let shapes = if !args.shapes.is_empty() {
        args.shapes.clone()
    } else if ctx.gpu {
        GPU_SHAPES.to_vec()
    } else {
        vec![EMULATOR_SHAPE]
    };
    // One batch per element type and shape: the f32 ladders share inputs and reference.
    let mut dtypes: Vec<Dtype> = ladders.iter().map(|l| l.dtype).collect();
    dtypes.dedup();
    let batch = |dtype: Dtype, p: &Problem| -> Result<Vec<(Variant, Option<u32>)>> {
        let mut runs: Vec<(Variant, Option<u32>)> = Vec::new();
        for ladder in ladders.iter().filter(|l| l.dtype == dtype) {
            for s in ladder.steps.iter().filter(|s| runs_on(s, p)) {
                runs.push((registry::find(s.variant)?, Some(s.tile)));
            }
            if ctx.gpu && !runs.iter().any(|(v, _)| is(v, ladder.yardstick)) {
                runs.push((Variant::Cublas(ladder.yardstick), None));
            }
        }
        Ok(runs)
    };
    let mut batches = Vec::new();
    for &dtype in &dtypes {
        for &shape in &shapes {
            let p = ctx.problem(dtype, shape);
            let runs = batch(dtype, &p)?;
            batches.push((p, runs));
        }
    }
    let progress = Progress::new("005 hopper", batches.iter().map(|(_, r)| r.len()).sum());
    let timing = ctx.timing();
    let measured: Vec<Measured> = batches
        .into_iter()
        .map(|(p, runs)| {
            let reports = ctx.measure(&progress, &runs, &p, timing);
            (p, runs, reports)
        })
        .collect();
    progress.finish();

    // Hand each ladder its reports back, shape by shape.
    let mut rungs: Vec<Vec<Rung>> = Vec::new();
    for ladder in &ladders {
        let mine = measured
            .iter()
            .filter(|(p, _, _)| p.dtype == ladder.dtype)
            .map(|(p, runs, reports)| {
                let find = |want: &dyn Fn(&Variant, Option<u32>) -> bool| {
                    runs.iter()
                        .position(|(v, t)| want(v, *t))
                        .map(|i| clone_report(&reports[i]))
                };
                Rung {
                    problem: *p,
                    steps: ladder
                        .steps
                        .iter()
                        .map(|s| find(&|v, t| v.name() == s.variant && t == Some(s.tile)))
                        .collect(),
                    yardstick: find(&|v, _| is(v, ladder.yardstick)),
                }
            })
            .collect();
        rungs.push(mine);
    }
    let passed = measured.iter().all(|(_, _, r)| all_passed(r));
    Ok(page(ctx, timing, &ladders, &rungs, passed))
}

/// One batch's problem, its runs and their reports.
type Measured = (Problem, Vec<(Variant, Option<u32>)>, Vec<Result<Report>>);

fn is(v: &Variant, math: CublasMath) -> bool {
    matches!(v, Variant::Cublas(m) if *m == math)
}

/// A report for a second table: reports are not `Clone` because errors are not.
fn clone_report(r: &Result<Report>) -> Result<Report> {
    match r {
        Ok(r) => Ok(r.clone()),
        Err(e) => Err(anyhow::anyhow!("{e:#}")),
    }
}

fn step_label(s: &Step) -> String {
    format!("{}:{}", s.variant, s.tile)
}

fn page(
    ctx: &Context,
    timing: gpu_gemm::run::Timing,
    ladders: &[&Ladder],
    rungs: &[Vec<Rung>],
    passed: bool,
) -> Page {
    let mut summary = Table::new("hopper-best", "The fastest step per ladder and shape")
        .text_column("ladder")
        .text_column("shape")
        .text_column("fastest step")
        .number_column(ctx.time_column())
        .number_column("TFLOP/s")
        .number_column("cuBLAS TFLOP/s")
        .number_column("× cuBLAS");
    let mut findings = Vec::new();
    let mut sections = Vec::new();
    for (ladder, rungs) in ladders.iter().zip(rungs) {
        let yardstick = match ladder.yardstick {
            CublasMath::Default if ladder.dtype == Dtype::F32 => "cuBLAS SGEMM",
            CublasMath::Default => "cuBLAS (cublasGemmEx, f32 accumulation)",
            CublasMath::Tf32 => "cuBLAS TF32",
            CublasMath::Grouped => "cuBLAS grouped (cublasGemmGroupedBatchedEx)",
        };
        let shapes: Vec<String> = rungs.iter().map(|r| describe(&r.problem)).collect();
        let mut speed = Table::new(
            &format!("hopper-{}-speed", ladder.name),
            &if ctx.gpu {
                format!("{}: TFLOP/s per step and shape", ladder.name)
            } else {
                format!(
                    "{}: emulator wall ms per step and shape (not GPU speed)",
                    ladder.name
                )
            },
        )
        .text_column("step")
        .text_column("adds");
        let mut ratios = Table::new(
            &format!("hopper-{}-ratio", ladder.name),
            &format!("{}: × {yardstick} (its time / the step's)", ladder.name),
        )
        .text_column("step");
        for s in &shapes {
            speed = speed.number_column(s);
            ratios = ratios.number_column(s);
        }
        let cell = |rung: &Rung, i: usize, value: Option<f64>, digits| match (&rung.steps[i], value)
        {
            (None, _) => Cell::missing("not run"),
            (Some(_), Some(v)) => Cell::fixed(v, digits),
            (Some(Err(e)), None) => super::context::error_cell(e),
            (Some(Ok(r)), None) if !r.passed() => Cell::missing("FAIL"),
            (Some(Ok(_)), None) if !ctx.gpu => Cell::missing("n/a (emulator)"),
            (Some(Ok(_)), None) => Cell::missing("-"),
        };
        for (i, s) in ladder.steps.iter().enumerate() {
            let mut row = vec![Cell::text(step_label(s)), Cell::text(s.adds)];
            let mut ratio_row = vec![Cell::text(step_label(s))];
            for rung in rungs {
                row.push(if ctx.gpu {
                    cell(rung, i, rung.tflops(i), 1)
                } else {
                    // The emulator's wall time: what ran, not how fast a GPU is.
                    cell(rung, i, rung.steps[i].as_ref().and_then(valid_time), 1)
                });
                ratio_row.push(cell(rung, i, rung.ratio(i), 3));
            }
            speed.push(row);
            ratios.push(ratio_row);
        }
        if ctx.gpu {
            let mut row = vec![Cell::text(yardstick), Cell::text("the yardstick")];
            for rung in rungs {
                row.push(match rung.yardstick_ms() {
                    Some(ms) => Cell::fixed(rung.problem.flops() / (ms * 1e-3) / 1e12, 1),
                    None => Cell::missing("-"),
                });
            }
            speed.push(row);
        }
        let mut best_ratios = Vec::new();
        for rung in rungs {
            let best = rung.fastest();
            let (name, ms, tflops, ratio) = match best {
                Some(b) => (
                    Cell::text(step_label(&ladder.steps[b])),
                    Cell::fixed(valid_time(rung.steps[b].as_ref().unwrap()).unwrap(), 3),
                    if ctx.gpu {
                        Cell::fixed(rung.tflops(b).unwrap(), 1)
                    } else {
                        Cell::missing("n/a (emulator)")
                    },
                    match rung.ratio(b) {
                        Some(r) => Cell::fixed(r, 3),
                        None => Cell::missing(if ctx.gpu { "-" } else { "n/a (emulator)" }),
                    },
                ),
                None => (
                    Cell::missing("no step passed"),
                    Cell::missing("-"),
                    Cell::missing("-"),
                    Cell::missing("-"),
                ),
            };
            if let Some(r) = best.and_then(|b| rung.ratio(b)) {
                best_ratios.push((describe(&rung.problem), r));
            }
            summary.push(vec![
                Cell::text(ladder.name),
                Cell::text(describe(&rung.problem)),
                name,
                ms,
                tflops,
                match rung.yardstick_ms() {
                    Some(ms) => Cell::fixed(rung.problem.flops() / (ms * 1e-3) / 1e12, 1),
                    None => Cell::missing(if ctx.gpu { "-" } else { "n/a (emulator)" }),
                },
                ratio,
            ]);
        }
        let finding = ladder_finding(ladder.name, &best_ratios);
        findings.extend(finding.clone());
        let categories: Vec<String> = ladder.steps.iter().map(step_label).collect();
        let chart = if ctx.gpu {
            BarChart {
                title: format!("{}: each step × {yardstick}", ladder.name),
                value_label: format!("× {yardstick}"),
                categories,
                groups: rungs
                    .iter()
                    .map(|rung| {
                        (
                            describe(&rung.problem),
                            (0..ladder.steps.len()).map(|i| rung.ratio(i)).collect(),
                        )
                    })
                    .collect(),
                reference: Some((1.0, "cuBLAS".into())),
            }
        } else {
            BarChart {
                title: format!("{}: emulator wall time (not GPU speed)", ladder.name),
                value_label: "emulator wall ms".into(),
                categories,
                groups: rungs
                    .iter()
                    .map(|rung| {
                        (
                            describe(&rung.problem),
                            rung.steps
                                .iter()
                                .map(|r| r.as_ref().and_then(valid_time))
                                .collect(),
                        )
                    })
                    .collect(),
                reference: None,
            }
        };
        let mut speed_section = Section::new(speed);
        speed_section.notes.push(format!(
            "\"not run\": split-k runs only where the problem has fewer 256×128 output tiles than \
             the H100's {SMS} SMs. FAIL: the step's check failed (its time is not shown)."
        ));
        let mut ratio_section = Section::new(ratios);
        ratio_section.finding = finding;
        // The chart draws the ratios on a GPU, the emulator's wall times on the emulator.
        if ctx.gpu {
            ratio_section.chart = Some(Chart::Bars(chart));
        } else {
            speed_section.chart = Some(Chart::Bars(chart));
        }
        sections.push(speed_section);
        sections.push(ratio_section);
    }
    let headline = if ctx.gpu {
        if findings.is_empty() {
            "No step produced a checked time beside cuBLAS.".to_string()
        } else {
            findings.join(" ")
        }
    } else {
        "On the emulator every step runs and is checked; the times are CPU wall time and say \
         nothing about the GPU (the ratios to cuBLAS need one)."
            .to_string()
    };
    let mut first = Section::new(summary);
    first.notes.push(
        "× cuBLAS is cuBLAS's median time / the step's, on the same inputs in the same process: \
         above 1 is faster. The TF32 ladder is measured against cuBLAS TF32, 3xTF32 against \
         FP32 SGEMM (the accuracy it keeps), BF16 and FP16 against cublasGemmEx with f32 \
         accumulation."
            .into(),
    );
    sections.insert(0, first);
    let names: Vec<&str> = ladders.iter().map(|l| l.name).collect();
    Page {
        id: ID,
        title: "005 · The Hopper ladder: each step of the tensor-core chapters against cuBLAS"
            .into(),
        intro: "Tensor cores chapter 3 builds a BF16/FP16 GEMM on one pipeline skeleton (stage \
                ring, producer and consumer warpgroups, tile scheduler, epilogue) and adds one \
                Hopper feature per step: clusters with TMA multicast, a TMA-store epilogue, \
                ping-pong consumers, split-k. Chapter 2's TF32 and 3xTF32 kernels run on the \
                same skeleton. This page measures every step at each shape beside cuBLAS of the \
                same type."
            .into(),
        headline,
        metadata: ctx.metadata(
            timing,
            vec![
                ("ladders", names.join(", ")),
                (
                    "inputs",
                    format!(
                        "uniform in [-1, 1) rounded to the element type, seed {}; C = A·B, \
                         column-major, tight leading dimensions",
                        ctx.seed
                    ),
                ),
            ],
            passed,
        ),
        sections,
        passed,
    }
}

/// `bf16: fastest 0.968–1.088× cuBLAS (8192×256×8192 … 2048³).`
fn ladder_finding(name: &str, best: &[(String, f64)]) -> Option<String> {
    let low = best.iter().min_by(|a, b| a.1.total_cmp(&b.1))?;
    let high = best.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    Some(format!(
        "{name}: the fastest step per shape is {:.3}× cuBLAS at {} to {:.3}× at {}.",
        low.1, low.0, high.1, high.0
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::context::testing::{gpu_context, report};
    use gpu_gemm::problem::Init;
    use kernels_gpu::registry::Shape;

    #[test]
    fn every_step_names_a_registered_configuration_of_its_ladders_type() {
        for ladder in &LADDERS {
            for s in ladder.steps {
                let v = registry::find(s.variant).unwrap();
                assert!(v.tiles().contains(&s.tile), "{}", step_label(s));
                assert!(v.dtypes().contains(&ladder.dtype), "{}", step_label(s));
            }
        }
    }

    #[test]
    fn split_k_runs_only_where_tiles_are_fewer_than_sms() {
        let ctx = gpu_context();
        let split = &SIXTEEN_BIT_STEPS[SIXTEEN_BIT_STEPS.len() - 1];
        let on = |m, n, k| {
            let mut p = ctx.square(m, Dtype::Bf16, Init::Random);
            p.shape = Shape {
                m,
                n,
                k,
                lda: m,
                ldb: k,
                ldc: m,
            };
            runs_on(split, &p)
        };
        assert!(on(8192, 256, 8192));
        assert!(on(1024, 1024, 8192));
        assert!(!on(4096, 4096, 4096));
        assert!(!on(8192, 8192, 1024));
    }

    #[test]
    fn ratios_fastest_steps_and_the_headline() {
        let ctx = gpu_context();
        let ladder = &LADDERS[0];
        let p = ctx.square(4096, Dtype::Bf16, Init::Random);
        let mut steps: Vec<Option<Result<Report>>> = ladder
            .steps
            .iter()
            .map(|s| Some(report(s.variant, &p, 2.0, true)))
            .collect();
        steps[2] = Some(report("wgmma-tma-store", &p, 1.6, true));
        // Faster still, but its check failed: never the fastest.
        steps[3] = Some(report("wgmma-tma-store", &p, 1.0, false));
        steps[8] = None;
        let rung = Rung {
            problem: p,
            steps,
            yardstick: Some(report("cublas", &p, 1.8, true)),
        };
        assert_eq!(rung.fastest(), Some(2));
        assert!((rung.ratio(2).unwrap() - 1.125).abs() < 1e-12);
        assert_eq!(rung.ratio(3), None);
        let page = page(&ctx, ctx.timing(), &[ladder], &[vec![rung]], false);
        let ratios = &page.sections[2].table;
        let column = ratios.column_index("4096³");
        let shown: Vec<String> = ratios.rows.iter().map(|r| r[column].shown()).collect();
        assert_eq!(shown[2], "1.125");
        assert_eq!(shown[3], "FAIL");
        assert_eq!(shown[8], "not run");
        assert_eq!(
            page.headline,
            "bf16: the fastest step per shape is 1.125× cuBLAS at 4096³ to 1.125× at 4096³."
        );
        let best = &page.sections[0].table.rows[0];
        assert_eq!(best[2].shown(), "wgmma-tma-store:1");
    }
}
