//! `host experiment shapes --random N`: shapes nobody tuned for, drawn with a seed, beside
//! cuBLAS in one process.
//!
//! The fixed suite ([`super::shapes`]) holds the shapes models run, and every N and K in it is
//! a multiple of 128. A program that is not one of those models calls a GEMM with a k of 3000,
//! an m of 37 or a leading dimension padded by three elements, and nothing about the suite says
//! what that costs. This experiment draws `N` problems from a seed: m, n and k log-uniform in
//! [`GPU_RANGE`] (every size equally likely per octave, none rounded onto a grid), one of the
//! four layouts, and each leading dimension either the stored rows or the rows plus a few
//! elements ([`MAX_PADDING`]). At each one `auto` runs beside the yardstick of the type, on the
//! same inputs, checked against the f64 reference. The page gives the geomean and the minimum
//! per layout and over all, how many shapes fall below [`FLOOR`], and the ten worst with what
//! `auto` chose for them: the list to profile first.
//!
//! The same seed draws the same shapes on every machine (ChaCha8), so a result names its
//! shapes by the seed alone; a rule that is to generalise is fitted on one seed and judged on
//! others. On the emulator the draw is the same distribution over [`EMULATOR_RANGE`], 64 times
//! smaller: it checks that every drawn form runs and is correct, never how fast.
use super::context::{all_passed, describe, error_cell, time_cell, valid_time};
use super::context::{check_cell, Context};
use super::page::{Page, Section};
use super::progress::Progress;
use super::shapes::{measure_beside_yardstick, spread, ShapesDtype, Spread};
use super::table::{Cell, Table};
use anyhow::Result;
use gpu_gemm::problem::{Problem, Transposes};
use gpu_gemm::run::{Report, Timing};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// m, n and k are drawn log-uniform between these on the GPU (both included).
pub const GPU_RANGE: (u32, u32) = (256, 16384);
/// …and between these on the emulator: the same distribution, 64 times smaller.
pub const EMULATOR_RANGE: (u32, u32) = (4, 256);
/// A padded leading dimension is the stored rows plus 1 to this many elements.
pub const MAX_PADDING: u32 = 8;
/// The ratio to the yardstick below which a shape counts as a loss to look at.
pub const FLOOR: f64 = 0.85;
/// How many of the slowest shapes the page lists.
pub const WORST: usize = 10;

/// One drawn problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drawn {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub transposes: Transposes,
    /// Elements added to the stored rows of A, B and C for their leading dimensions.
    pub padding: [u32; 3],
}

/// A size log-uniform in `lo..=hi`.
fn log_uniform(rng: &mut ChaCha8Rng, (lo, hi): (u32, u32)) -> u32 {
    let (lo_ln, hi_ln) = ((lo as f64).ln(), ((hi + 1) as f64).ln());
    let size = rng.random_range(lo_ln..hi_ln).exp().floor() as u32;
    size.clamp(lo, hi)
}

/// `count` problems from `seed`, sizes in `range`, layouts among `layouts`.
pub fn draw(count: usize, seed: u64, range: (u32, u32), layouts: &[Transposes]) -> Vec<Drawn> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5_4A9E5);
    (0..count)
        .map(|_| {
            let (m, n, k) = (
                log_uniform(&mut rng, range),
                log_uniform(&mut rng, range),
                log_uniform(&mut rng, range),
            );
            let transposes = layouts[rng.random_range(0..layouts.len())];
            // Half the operands are packed (the leading dimension is the rows), half padded.
            let padding = core::array::from_fn(|_| {
                if rng.random_bool(0.5) {
                    0
                } else {
                    rng.random_range(1..=MAX_PADDING)
                }
            });
            Drawn {
                m,
                n,
                k,
                transposes,
                padding,
            }
        })
        .collect()
}

/// The layouts a type is drawn in: e4m3 has T,N only (as cuBLASLt's FP8), the others all four.
pub fn layouts(dtype: ShapesDtype) -> Vec<Transposes> {
    match dtype {
        ShapesDtype::E4m3 => vec![Transposes::ALL[1]],
        _ => Transposes::ALL.to_vec(),
    }
}

impl Drawn {
    /// The problem it runs: α = 1, β = 0, random inputs of the context's seed. In e4m3 each
    /// leading dimension is rounded up to 16 bytes, which cuBLASLt's FP8 and ours both require.
    pub fn problem(&self, ctx: &Context, dtype: ShapesDtype) -> Problem {
        let mut p = ctx.problem(dtype.dtype(), (self.m, self.n, self.k));
        p.transposes = self.transposes;
        let sizes = [p.dtype.bytes(), p.dtype.bytes(), p.dtype.output().bytes()];
        let rows = [p.stored_a().0, p.stored_b().0, self.m];
        let [lda, ldb, ldc] = core::array::from_fn(|i| {
            let ld = rows[i] + self.padding[i];
            match dtype {
                ShapesDtype::E4m3 => ld.next_multiple_of(16 / sizes[i]),
                _ => ld,
            }
        });
        (p.shape.lda, p.shape.ldb, p.shape.ldc) = (lda, ldb, ldc);
        p
    }
}

/// What `auto` chooses for `p`; `None` where it refuses (the run says why).
fn auto_choice(ctx: &Context, dtype: ShapesDtype, p: &Problem) -> Option<gpu_gemm::auto::Choice> {
    let gpu_gemm::registry::Variant::Auto(math) = dtype.auto() else {
        unreachable!("the experiment runs auto")
    };
    gpu_gemm::auto::choose(p, math, ctx.backend().arch()).ok()
}

/// The operands `auto` copies before its kernel runs (transposed, or to columns on 128-byte
/// lines), as `A T, B 128`; `-` for none.
fn copies(dtype: ShapesDtype, choice: Option<&gpu_gemm::auto::Choice>) -> String {
    let Some(copies) = choice
        .and_then(|c| c.copies)
        .filter(|_| dtype != ShapesDtype::E4m3)
    else {
        return "-".into();
    };
    let one = |pitch: Option<gpu_gemm::launch::Pitch>, name: &str| {
        pitch.map(|p| format!("{name} {}", if p.transposed { "T" } else { "128" }))
    };
    [one(copies.a, "A"), one(copies.b, "B")]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ")
}

/// The leading dimensions whose columns do not start 16 bytes apart, the TMA's and the vector
/// loads' alignment.
fn unaligned(p: &Problem) -> Vec<&'static str> {
    let bytes = [p.dtype.bytes(), p.dtype.bytes(), p.dtype.output().bytes()];
    let lds = [p.shape.lda, p.shape.ldb, p.shape.ldc];
    ["lda", "ldb", "ldc"]
        .into_iter()
        .zip(lds.iter().zip(bytes))
        .filter(|&(_, (&ld, size))| !(ld * size).is_multiple_of(16))
        .map(|(name, _)| name)
        .collect()
}

/// [`unaligned`] as a cell: `lda ldc`, or `-`.
fn unaligned_cell(p: &Problem) -> Cell {
    match unaligned(p) {
        names if names.is_empty() => Cell::text("-"),
        names => Cell::text(names.join(" ")),
    }
}

struct Measured {
    problem: Problem,
    /// What `auto` copies first ([`copies`]).
    copies: String,
    /// The tile model's time for `auto`'s choice, ms, where it is one of the wide kernels
    /// ([`gpu_gemm::auto::modelled_seconds`]).
    model_ms: Option<f64>,
    ours: Result<Report>,
    /// `None` on the emulator.
    yardstick: Option<Result<Report>>,
}

impl Measured {
    /// The model's time over the measured one, where both exist.
    fn model_error(&self) -> Option<f64> {
        Some(self.model_ms? / valid_time(&self.ours)? - 1.0)
    }

    fn ratio(&self) -> Option<f64> {
        let yardstick = valid_time(self.yardstick.as_ref()?)?;
        Some(yardstick / valid_time(&self.ours)?)
    }

    fn choice(&self) -> Cell {
        match &self.ours {
            Ok(r) => Cell::text(
                r.variant
                    .split_once('→')
                    .map_or(r.variant.as_str(), |c| c.1),
            ),
            Err(e) => error_cell(e),
        }
    }

    /// Its time, or `-` where the choice column says why there is none.
    fn time(&self) -> Cell {
        match &self.ours {
            Ok(_) => time_cell(&self.ours),
            Err(_) => Cell::missing("-"),
        }
    }
}

/// What the page says of the tile model's `errors` (model / measured − 1, where `auto` took one
/// of the wide kernels and the time passed its check): the shapes were drawn after it was
/// fitted, so this is its error on held-out shapes.
fn model_note(gpu: bool, errors: &[f64]) -> String {
    let what = "`model ms` is the time `auto`'s tile model (`gpu_gemm::auto::wide_plan`, fitted \
                on an H100) gives the wide kernel it chose, its copies included; `-` where it \
                chose another kernel.";
    if !gpu {
        return format!("{what} On the emulator it is not compared.");
    }
    let mut magnitudes: Vec<f64> = errors.iter().map(|e| e.abs()).collect();
    magnitudes.sort_by(f64::total_cmp);
    let Some(&largest) = magnitudes.last() else {
        return format!("{what} No shape here took one of its kernels.");
    };
    let mut signed = errors.to_vec();
    signed.sort_by(f64::total_cmp);
    format!(
        "{what} Its error on these {} shapes, drawn after it was fitted: median |model / \
         measured − 1| {:.1}% (signed median {:+.1}%), at most {:.1}%.",
        errors.len(),
        100.0 * magnitudes[magnitudes.len() / 2],
        100.0 * signed[signed.len() / 2],
        100.0 * largest,
    )
}

/// Draws `count` shapes of `seed` and runs `auto` (and the yardstick on a GPU) at each.
pub fn run(ctx: &Context, dtype: ShapesDtype, count: usize, check: bool) -> Result<Page> {
    let range = if ctx.gpu { GPU_RANGE } else { EMULATOR_RANGE };
    let drawn = draw(count, ctx.seed, range, &layouts(dtype));
    let timing = Timing {
        check,
        ..ctx.timing_with(2, 20)
    };
    let auto = [(dtype.auto(), None)];
    let progress = Progress::new(
        &format!("random shapes {}", dtype.name()),
        drawn.len() * (1 + usize::from(ctx.gpu)),
    );
    let measured: Vec<Measured> = drawn
        .iter()
        .map(|d| {
            let p = d.problem(ctx, dtype);
            let (mut reports, yardstick) =
                measure_beside_yardstick(ctx, &progress, &auto, &p, dtype, timing);
            let choice = auto_choice(ctx, dtype, &p);
            Measured {
                copies: copies(dtype, choice.as_ref()),
                model_ms: choice
                    .as_ref()
                    .and_then(|c| gpu_gemm::auto::modelled_seconds(&p, c))
                    .map(|s| s * 1e3),
                problem: p,
                ours: reports.pop().expect("auto's report"),
                yardstick,
            }
        })
        .collect();
    progress.finish();
    Ok(page(ctx, dtype, count, range, timing, &measured))
}

/// The summary row of the shapes in `of`.
fn summary_row(ctx: &Context, what: &str, measured: &[Measured], of: &[usize]) -> Vec<Cell> {
    let ratios: Vec<Option<f64>> = of.iter().map(|&i| measured[i].ratio()).collect();
    let s: Spread = spread(&ratios);
    let na = || Cell::missing(if ctx.gpu { "-" } else { "n/a (emulator)" });
    let below = ratios.iter().flatten().filter(|&&r| r < FLOOR).count();
    vec![
        Cell::text(what),
        Cell::fixed(of.len() as f64, 0),
        Cell::fixed(s.counted as f64, 0),
        s.geomean.map_or_else(na, |g| Cell::fixed(g, 3)),
        s.min.map_or_else(na, |(low, _)| Cell::fixed(low, 3)),
        if ctx.gpu {
            Cell::fixed(below as f64, 0)
        } else {
            na()
        },
        match s.min {
            Some((_, at)) => Cell::text(describe(&measured[of[at]].problem)),
            None => na(),
        },
    ]
}

fn page(
    ctx: &Context,
    dtype: ShapesDtype,
    count: usize,
    range: (u32, u32),
    timing: Timing,
    measured: &[Measured],
) -> Page {
    let yardstick = dtype.yardstick_name();
    let mut table = Table::new(
        &format!("random-{}", dtype.name()),
        &format!(
            "{}: {count} shapes drawn with seed {}, auto beside {}",
            dtype.name(),
            ctx.seed,
            if ctx.gpu {
                yardstick
            } else {
                "nothing (emulator)"
            }
        ),
    )
    .number_column("#")
    .text_column("m×n×k")
    .text_column("layout")
    .text_column("lda, ldb, ldc")
    .text_column("not 16-byte aligned")
    .text_column("auto chose")
    .text_column("copies")
    .number_column(ctx.time_column())
    .number_column("model ms")
    .number_column("yardstick ms")
    .number_column("× yardstick")
    .text_column("check");
    for (i, m) in measured.iter().enumerate() {
        let s = m.problem.shape;
        table.push(vec![
            Cell::fixed(i as f64, 0),
            Cell::text(format!("{}×{}×{}", s.m, s.n, s.k)),
            Cell::text(m.problem.transposes.name()),
            Cell::text(format!("{}, {}, {}", s.lda, s.ldb, s.ldc)),
            unaligned_cell(&m.problem),
            m.choice(),
            Cell::text(&m.copies),
            m.time(),
            match m.model_ms {
                Some(t) => Cell::fixed(t, 3),
                None => Cell::missing("-"),
            },
            match &m.yardstick {
                Some(y) => time_cell(y),
                None => Cell::missing("n/a (emulator)"),
            },
            match m.ratio() {
                Some(r) => Cell::fixed(r, 3),
                None if !ctx.gpu => Cell::missing("n/a (emulator)"),
                None => Cell::missing("-"),
            },
            check_cell(&m.ours),
        ]);
    }

    let mut summary = Table::new(
        &format!("random-{}-summary", dtype.name()),
        &format!("Per layout: auto against {yardstick}"),
    )
    .text_column("shapes")
    .number_column("drawn")
    .number_column("with both times")
    .number_column("geomean ×")
    .number_column("min ×")
    .number_column(&format!("below {FLOOR:.2}×"))
    .text_column("the minimum's shape");
    let all: Vec<usize> = (0..measured.len()).collect();
    let shapes_where = |holds: &dyn Fn(&Problem) -> bool| -> Vec<usize> {
        all.iter()
            .copied()
            .filter(|&i| holds(&measured[i].problem))
            .collect()
    };
    summary.push(summary_row(ctx, "all", measured, &all));
    for layout in layouts(dtype) {
        let of = shapes_where(&|p| p.transposes == layout);
        summary.push(summary_row(ctx, &layout.name(), measured, &of));
    }
    for (what, aligned) in [("all lds 16-byte aligned", true), ("some ld not", false)] {
        let of = shapes_where(&|p| unaligned(p).is_empty() == aligned);
        summary.push(summary_row(ctx, what, measured, &of));
    }

    let mut worst_order: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| measured[i].ratio().is_some())
        .collect();
    worst_order.sort_by(|&a, &b| {
        measured[a]
            .ratio()
            .partial_cmp(&measured[b].ratio())
            .unwrap()
    });
    let mut worst = Table::new(
        &format!("random-{}-worst", dtype.name()),
        &format!("The {WORST} slowest against the yardstick, and what auto chose"),
    )
    .number_column("#")
    .text_column("m×n×k")
    .text_column("layout")
    .text_column("not 16-byte aligned")
    .text_column("auto chose")
    .text_column("copies")
    .number_column("× yardstick");
    for &i in worst_order.iter().take(WORST) {
        let m = &measured[i];
        let s = m.problem.shape;
        worst.push(vec![
            Cell::fixed(i as f64, 0),
            Cell::text(format!("{}×{}×{}", s.m, s.n, s.k)),
            Cell::text(m.problem.transposes.name()),
            unaligned_cell(&m.problem),
            m.choice(),
            Cell::text(&m.copies),
            m.ratio()
                .map_or_else(|| Cell::missing("-"), |r| Cell::fixed(r, 3)),
        ]);
    }

    let refused = measured.iter().filter(|m| m.ours.is_err()).count();
    let failed = measured
        .iter()
        .filter(|m| m.ours.as_ref().is_ok_and(|r| !r.passed()))
        .count();
    let s = spread(&measured.iter().map(Measured::ratio).collect::<Vec<_>>());
    let headline = match (ctx.gpu, s.geomean, s.min) {
        (true, Some(g), Some((low, at))) => format!(
            "auto in {} over {} random shapes (seed {}): geomean {g:.3}× {}, lowest {low:.3}× \
             at {} {}; {} below {FLOOR:.2}×; {refused} refused, {failed} failed the check.",
            dtype.name(),
            s.counted,
            ctx.seed,
            dtype.yardstick_short(),
            describe(&measured[at].problem),
            measured[at].problem.transposes.name(),
            measured
                .iter()
                .filter_map(Measured::ratio)
                .filter(|&r| r < FLOOR)
                .count(),
        ),
        _ => format!(
            "{} of {} random shapes ran through auto ({failed} failed the check), {refused} \
             were refused.{}",
            measured.len() - refused,
            measured.len(),
            if ctx.gpu {
                " No shape has both times."
            } else {
                " On the emulator: times are CPU wall time, and there is no yardstick."
            }
        ),
    };

    let passed = measured
        .iter()
        .all(|m| all_passed(std::iter::once(&m.ours).chain(&m.yardstick)));
    let mut main = Section::new(table);
    main.notes.push(format!(
        "m, n and k are drawn log-uniform in [{}, {}] with ChaCha8 from the seed, the layout \
         uniformly among {}, and each leading dimension is the stored rows, or (one time in \
         two) those plus 1 to {MAX_PADDING} elements{}. `not 16-byte aligned` names the \
         leading dimensions whose columns do not start on 16 bytes, which the TMA and the \
         vector loads need; `copies` the operands `auto` copies before its kernel runs, \
         transposed (T) or to columns on 128-byte lines (128: unaligned, or off the line where \
         the GEMM repays the copy).",
        range.0,
        range.1,
        layouts(dtype)
            .iter()
            .map(|l| l.name())
            .collect::<Vec<_>>()
            .join(", "),
        if dtype == ShapesDtype::E4m3 {
            ", rounded up to 16 bytes (FP8's constraint, cuBLASLt's too)"
        } else {
            ""
        }
    ));
    main.notes.push(format!(
        "× yardstick is the median time of {yardstick} / auto's, on the same inputs in the same \
         process: above 1 is faster. A refusal shows as `error: …` and a failed check as FAIL; \
         neither counts in the summary."
    ));
    let errors: Vec<f64> = measured.iter().filter_map(Measured::model_error).collect();
    main.notes.push(model_note(ctx.gpu, &errors));
    let mut per_layout = Section::new(summary);
    per_layout.notes.push(format!(
        "The geomeans and minima count the shapes with a checked time of both; `below \
         {FLOOR:.2}×` is the issue's floor."
    ));
    Page {
        id: dtype.random_id(),
        title: format!("auto at random shapes: {}", dtype.name()),
        intro: "Shapes drawn with a seed, none rounded onto a grid, in every layout, with \
                packed and padded leading dimensions: what a program that is not one of the \
                measured models meets."
            .into(),
        headline,
        metadata: ctx.metadata(
            timing,
            vec![
                ("dtype", dtype.name().to_string()),
                ("yardstick", yardstick.to_string()),
                ("shapes", format!("{count}, seed {}", ctx.seed)),
                (
                    "check",
                    if timing.check {
                        "every run against the f64 reference (a seeded sample of rows and \
                         columns above m·n·k = 2^37)"
                            .into()
                    } else {
                        "skipped (--no-check): times only".into()
                    },
                ),
            ],
            passed,
        ),
        sections: vec![main, per_layout, Section::new(worst)],
        passed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_draw_is_the_seeds_and_covers_the_range_off_the_grid() {
        let shapes = draw(2000, 7, GPU_RANGE, &Transposes::ALL);
        assert_eq!(shapes, draw(2000, 7, GPU_RANGE, &Transposes::ALL));
        assert_ne!(shapes, draw(2000, 8, GPU_RANGE, &Transposes::ALL));
        let sizes = || shapes.iter().flat_map(|d| [d.m, d.n, d.k]);
        assert!(sizes().all(|s| (GPU_RANGE.0..=GPU_RANGE.1).contains(&s)));
        // Log-uniform: each of the six octaves holds about a sixth of the 6000 sizes.
        for octave in 0..6 {
            let (lo, hi) = (256 << octave, 512 << octave);
            let inside = sizes().filter(|s| (lo..hi).contains(s)).count();
            assert!((800..1200).contains(&inside), "octave {lo}..{hi}: {inside}");
        }
        // Not fitted to a grid: about one in 64 sizes is a multiple of 64.
        let on_grid = sizes().filter(|s| s % 64 == 0).count();
        assert!(on_grid < 200, "{on_grid} of 6000 on the 64-grid");
        for layout in Transposes::ALL {
            let n = shapes.iter().filter(|d| d.transposes == layout).count();
            assert!((400..600).contains(&n), "{}: {n}", layout.name());
        }
        let padded = shapes.iter().flat_map(|d| d.padding).filter(|&p| p > 0);
        assert!(padded.clone().all(|p| p <= MAX_PADDING));
        assert!((2700..3300).contains(&padded.count()));
    }

    /// The page states the model's error as measured: the median and the largest magnitude, the
    /// signed median; and says when there is nothing to compare.
    #[test]
    fn the_model_note_gives_its_error_on_the_drawn_shapes() {
        let note = model_note(true, &[0.10, -0.05, 0.02]);
        assert!(note.contains("these 3 shapes"), "{note}");
        assert!(note.contains("|model / measured − 1| 5.0%"), "{note}");
        assert!(note.contains("signed median +2.0%"), "{note}");
        assert!(note.contains("at most 10.0%"), "{note}");
        assert!(model_note(true, &[]).contains("No shape here took one of its kernels"));
        assert!(model_note(false, &[0.1]).contains("not compared"));
    }

    #[test]
    fn e4m3_is_drawn_t_n_only() {
        let shapes = draw(50, 1, GPU_RANGE, &layouts(ShapesDtype::E4m3));
        assert!(shapes.iter().all(|d| d.transposes.name() == "TN"));
    }
}
