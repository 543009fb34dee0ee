//! `host experiment decode`: a decode step as a program runs it — the GEMMs of a model's
//! layers, 32 layers deep, captured into one CUDA graph and launched as one, beside the same
//! chain of cuBLAS calls captured the same way.
//!
//! The shapes suite ([`super::shapes`]) times each GEMM alone, warm, with nothing before it.
//! A decode step runs them back to back: each layer's QKV projection, attention's output
//! projection O, the MLP's gate and up projections (one GEMM), and its down projection, each
//! reading what the one before wrote. Between two kernels of the chain sit the first one's
//! tail (its last blocks, the rest of the GPU idle), the second one's launch and prologue, and
//! its ramp to full bandwidth; a graph removes the host from between them, not these. Every
//! weight is read once per step, so each GEMM streams its weights from HBM: one layer of
//! Llama-3 8B is 436 MB of bf16 weights, the L2 50 MB, so even with one set of weights shared
//! by every layer (as here, to keep 32 layers in memory beside cuBLAS's buffers) no layer finds
//! the last one's weights in the L2. The chain is cold the way a decode step is.
//!
//! The chain is row-major `Y = X·Wᵀ` read column-major, the layout models call (T,N): A is the
//! weights (k × out, `op(A) = Aᵀ`), B the activations (k × tokens), C the next activations
//! (out × tokens). Attention itself and the MLP's SiLU are not GEMMs and are left out: O reads
//! the first 4096 rows of QKV's output in attention's place, and down the first 14 336 rows of
//! gate-up's in the product's place (a leading dimension larger than k, as a view of a wider
//! buffer is), so that each GEMM reads its predecessor's output and the chain is a chain.
//!
//! Every GEMM's output is checked after the graph's first launch, from buffers zeroed before
//! it: sampled rows, every token, against an f64 product of the buffers it read — so a kernel
//! that read its input before the previous kernel wrote it fails the check. Then the two
//! graphs are launched in alternation and timed with CUDA events around each launch.
use super::context::{Common, Context};
use super::page::{Page, Section};
use super::progress::Progress;
use super::shapes::{bytes_moved, datasheet_bandwidth, geomean};
use super::table::{Cell, Table};
use anyhow::{bail, Result};
use gpu_gemm::half::{bf16, f16};
use gpu_gemm::timing::median;
use gpu_gemm::{Algorithm, Buffer, Element, Gemm, GemmConfig, GemmError, Math, Plan, Transpose};

pub const ID: &str = "008-decode";

/// The element type of the chain.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DecodeDtype {
    #[default]
    Bf16,
    F16,
}

#[derive(clap::Args, Debug, Clone, Default)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
    /// Tokens of the step, separated by commas (the GEMMs' n) [default: 1,16,64,128 on the GPU,
    /// 1,16 on the emulator]
    #[arg(long, value_delimiter = ',', value_parser = crate::args::positive_size)]
    pub tokens: Vec<u32>,
    /// Layers in the chain [default: 32 on the GPU, 2 on the emulator]
    #[arg(long, value_parser = crate::args::positive_size)]
    pub layers: Option<u32>,
    /// Element type of weights and activations
    #[arg(long, value_enum, default_value_t = DecodeDtype::Bf16)]
    pub dtype: DecodeDtype,
    /// Timed launches of each graph, alternating [default: 20 on the GPU, 1 on the emulator]
    #[arg(long, value_parser = crate::args::positive_count)]
    pub launches: Option<usize>,
}

/// One GEMM of a layer: `out` output features from `k` input features. It reads the output
/// of the GEMM before it (the previous layer's last, or the model's input), whose first `k`
/// rows it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub name: &'static str,
    pub out: u32,
    pub k: u32,
}

/// One layer of Llama-3 8B: hidden size 4096, 32 query heads and 8 key-value heads of 128,
/// the MLP 14 336 wide.
pub const LLAMA3_8B: [Step; 4] = [
    Step {
        name: "QKV",
        out: 4096 + 2 * 1024,
        k: 4096,
    },
    Step {
        name: "O",
        out: 4096,
        k: 4096,
    },
    Step {
        name: "gate-up",
        out: 2 * 14336,
        k: 4096,
    },
    Step {
        name: "down",
        out: 4096,
        k: 14336,
    },
];

/// The emulator's layer: Llama-3 8B's, every size divided by this.
pub const EMULATOR_DIVISOR: u32 = 64;

/// The chain's rows of sampled output checked per GEMM (spread over the output features).
const CHECKED_ROWS: u32 = 8;

/// A layer's GEMMs at the backend's size.
pub fn layer(gpu: bool) -> Vec<Step> {
    let divisor = if gpu { 1 } else { EMULATOR_DIVISOR };
    LLAMA3_8B
        .iter()
        .map(|s| Step {
            out: s.out / divisor,
            k: s.k / divisor,
            ..*s
        })
        .collect()
}

/// What ran the chain: `auto` or cuBLAS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Contender {
    Auto,
    /// `auto`'s kernels launched early ([`gpu_gemm::Plan::start_early`]).
    AutoEarly,
    Cublas,
}

impl Contender {
    fn name(self) -> &'static str {
        match self {
            Contender::Auto => "auto",
            Contender::AutoEarly => "auto, early start",
            Contender::Cublas => "cuBLAS",
        }
    }

    fn algorithm(self) -> Algorithm {
        match self {
            Contender::Auto | Contender::AutoEarly => Algorithm::Auto(Math::Strict),
            Contender::Cublas => Algorithm::Cublas,
        }
    }
}

/// A chain at one token count, for one contender: its GEMMs' plans and its activations.
struct Chain<'g, T: Element> {
    /// The GEMM of step `s` of every layer.
    plans: Vec<Plan<'g, T>>,
    /// The model's input, then the output of every GEMM in chain order.
    activations: Vec<Buffer<T>>,
}

/// The chain's shared inputs: one weight matrix per step, the model's input.
struct Weights<T: Element> {
    steps: Vec<Step>,
    layers: u32,
    tokens: u32,
    weights: Vec<Buffer<T>>,
    /// The same weights on the host, for the check.
    host: Vec<Vec<T>>,
}

impl<T: Element> Weights<T> {
    /// Weights of step s uniform in ±√(3/k), so that an input of variance 1/3 gives an output
    /// of variance 1/3, layer after layer; the model's input uniform in ±1.
    fn new(gemm: &Gemm, steps: &[Step], layers: u32, tokens: u32, seed: u64) -> Result<Self> {
        let mut host = Vec::new();
        let mut weights = Vec::new();
        let (first, last) = (steps[0], steps[steps.len() - 1]);
        if first.k != last.out {
            bail!(
                "a layer's first GEMM reads {} features, its last writes {}: not a residual stream",
                first.k,
                last.out
            );
        }
        for (i, s) in steps.iter().enumerate() {
            let bound = (3.0 / s.k as f64).sqrt();
            let values = uniform(s.k as usize * s.out as usize, bound, seed + i as u64);
            weights.push(gemm.upload(&values)?);
            host.push(values);
        }
        Ok(Weights {
            steps: steps.to_vec(),
            layers,
            tokens,
            weights,
            host,
        })
    }

    /// The chain's GEMMs in order: (step, the leading dimension of the activations it
    /// reads: the output of the step before, the model's input for the first, which is as
    /// wide as a layer's output).
    fn gemms(&self) -> impl Iterator<Item = (usize, Step, u32)> + '_ {
        let count = self.steps.len();
        (0..self.layers as usize * count).map(move |i| {
            let s = i % count;
            (s, self.steps[s], self.steps[(s + count - 1) % count].out)
        })
    }

    /// Step `s`'s configuration, reading an input of leading dimension `ld`.
    fn config(&self, step: Step, ld: u32) -> GemmConfig {
        GemmConfig::new(step.out, self.tokens, step.k)
            .transposes(Transpose::Yes, Transpose::No)
            .leading_dimensions(step.k, ld, step.out)
    }

    /// `contender`'s plans and zeroed activations.
    fn chain<'g>(&self, gemm: &'g Gemm, contender: Contender) -> Result<Chain<'g, T>> {
        let input = uniform(
            self.steps[0].k as usize * self.tokens as usize,
            1.0,
            u64::MAX,
        );
        let mut activations = vec![gemm.upload(&input)?];
        let mut plans = Vec::new();
        for (i, (_, step, ld)) in self.gemms().enumerate() {
            activations.push(gemm.zeros::<T>(step.out as usize * self.tokens as usize)?);
            // Layer 0's GEMMs plan every layer's: the same configurations.
            if i < self.steps.len() {
                let mut plan = gemm.plan::<T>(&self.config(step, ld), &contender.algorithm())?;
                if contender == Contender::AutoEarly {
                    plan.start_early();
                }
                plans.push(plan);
            }
        }
        Ok(Chain { plans, activations })
    }

    /// Enqueues the whole chain: the body of the graph.
    fn enqueue(&self, chain: &mut Chain<'_, T>) -> Result<(), GemmError> {
        for (i, (s, _, _)) in self.gemms().enumerate() {
            let (read, written) = chain.activations.split_at_mut(i + 1);
            chain.plans[s].enqueue(&self.weights[s], &read[i], &mut written[0])?;
        }
        Ok(())
    }
}

/// `len` values uniform in ±`bound`, from `seed` (a multiplicative hash: fast enough for the
/// 218 million weights of a Llama-3 8B layer).
fn uniform<T: Element>(len: usize, bound: f64, seed: u64) -> Vec<T> {
    let mix = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len as u64)
        .map(|i| {
            let h = (i.wrapping_add(1)).wrapping_mul(mix);
            let h = (h ^ (h >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            let unit = (h >> 11) as f64 / (1u64 << 53) as f64;
            T::from_f64(bound * (2.0 * unit - 1.0))
        })
        .collect()
}

/// The worst error of one GEMM of the chain, relative to Σ|w·x| of its element (the check's
/// measure), over [`CHECKED_ROWS`] rows and every token: `c` against the f64 product of `w`
/// (k × out, read transposed) and `x` (k × tokens, leading dimension `ld`).
fn worst_error<T: Element>(step: Step, tokens: u32, (w, x, ld, c): (&[T], &[T], u32, &[T])) -> f64 {
    let (k, out) = (step.k as usize, step.out as usize);
    let rows = (0..CHECKED_ROWS as usize).map(|j| j * (out - 1) / (CHECKED_ROWS as usize - 1));
    let mut worst = 0f64;
    for row in rows {
        for t in 0..tokens as usize {
            let (mut exact, mut magnitude) = (0f64, 0f64);
            for q in 0..k {
                let term = w[q + row * k].to_f64() * x[q + t * ld as usize].to_f64();
                exact += term;
                magnitude += term.abs();
            }
            let error = (c[row + t * out].to_f64() - exact).abs();
            worst = worst.max(if magnitude == 0.0 {
                error
            } else {
                error / magnitude
            });
        }
    }
    worst
}

/// One contender's chain at one token count: checked after its graph's first launch.
struct Checked {
    /// The variant of each step, as `auto` chose (or `cublas`).
    variants: Vec<String>,
    /// The worst error over every GEMM of the chain, and the tolerance it is held to.
    worst: f64,
    tolerance: f64,
}

impl Checked {
    fn passed(&self) -> bool {
        self.worst <= self.tolerance
    }
}

/// Checks every GEMM of `chain` after its first launch.
fn check<T: Element>(gemm: &Gemm, weights: &Weights<T>, chain: &Chain<'_, T>) -> Result<Checked> {
    let activations = chain
        .activations
        .iter()
        .map(|a| gemm.download(a))
        .collect::<Result<Vec<_>, _>>()?;
    let mut worst = 0f64;
    let mut tolerance = f64::INFINITY;
    for (i, (s, step, ld)) in weights.gemms().enumerate() {
        let (x, c) = (&activations[i], &activations[i + 1]);
        worst = worst.max(worst_error(
            step,
            weights.tokens,
            (&weights.host[s], x, ld, c),
        ));
        let arithmetic = chain.plans[s].choice().arithmetic;
        tolerance = tolerance.min(gpu_gemm::verify::tolerance(T::DTYPE, arithmetic, step.k));
    }
    Ok(Checked {
        variants: chain
            .plans
            .iter()
            .map(|p| p.choice().variant.clone())
            .collect(),
        worst,
        tolerance,
    })
}

/// One row of the page: a token count, each contender's check and times.
struct Row {
    tokens: u32,
    checked: Vec<Checked>,
    /// Each contender's launches, in ms.
    times: Vec<Vec<f64>>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Page> {
    match args.dtype {
        DecodeDtype::Bf16 => run_typed::<bf16>(ctx, args),
        DecodeDtype::F16 => run_typed::<f16>(ctx, args),
    }
}

fn run_typed<T: Element>(ctx: &Context, args: &Args) -> Result<Page> {
    let gemm = ctx.gemm();
    let tokens = if args.tokens.is_empty() {
        if ctx.gpu {
            vec![1, 16, 64, 128]
        } else {
            vec![1, 16]
        }
    } else {
        args.tokens.clone()
    };
    let layers = args.layers.unwrap_or(if ctx.gpu { 32 } else { 2 });
    let launches = args.launches.unwrap_or(if ctx.gpu { 20 } else { 1 });
    let contenders = if ctx.gpu {
        vec![Contender::Auto, Contender::AutoEarly, Contender::Cublas]
    } else {
        vec![Contender::Auto, Contender::AutoEarly]
    };
    let steps = layer(ctx.gpu);
    let progress = Progress::new("decode", tokens.len());
    let mut rows = Vec::new();
    for &t in &tokens {
        progress.running(&format!("{t} tokens: weights"));
        let weights = Weights::<T>::new(gemm, &steps, layers, t, ctx.seed)?;
        let mut chains = Vec::new();
        let mut checked = Vec::new();
        for &c in &contenders {
            progress.running(&format!("{t} tokens: {}'s chain, checked", c.name()));
            let mut chain = weights.chain(gemm, c)?;
            {
                let mut graph = gemm.capture(|| weights.enqueue(&mut chain))?;
                graph.launch()?;
            }
            gemm.synchronize()?;
            checked.push(check(gemm, &weights, &chain)?);
            chains.push(chain);
        }
        progress.running(&format!("{t} tokens: timing"));
        let mut graphs = chains
            .iter_mut()
            .map(|chain| {
                let weights = &weights;
                gemm.capture(move || weights.enqueue(chain))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut times = vec![Vec::new(); graphs.len()];
        // A launch of each first, untimed; then in alternation, so that drift falls on both.
        for graph in &mut graphs {
            graph.launch()?;
        }
        for _ in 0..launches {
            for (graph, times) in graphs.iter_mut().zip(&mut times) {
                times.push(graph.launch_timed()?);
            }
        }
        drop(graphs);
        let row = Row {
            tokens: t,
            checked,
            times,
        };
        progress.done(&row_line(&row, &contenders, ctx.gpu));
        rows.push(row);
    }
    progress.finish();
    Ok(page(
        ctx,
        T::DTYPE,
        &steps,
        layers,
        launches,
        &contenders,
        &rows,
    ))
}

/// The printed line of a finished token count.
fn row_line(row: &Row, contenders: &[Contender], gpu: bool) -> String {
    let parts: Vec<String> = contenders
        .iter()
        .zip(&row.times)
        .zip(&row.checked)
        .map(|((c, times), checked)| {
            format!(
                "{} {:.1} {} ({}, check {})",
                c.name(),
                median(times) * if gpu { 1e3 } else { 1.0 },
                if gpu { "µs" } else { "emulator ms" },
                checked.variants.join(" "),
                if checked.passed() { "pass" } else { "FAIL" }
            )
        })
        .collect();
    format!("  {} tokens: {}", row.tokens, parts.join("; "))
}

/// The page: per token count, each contender's time per step and per layer, the bandwidth
/// its weights stream at, its check, and what `auto` chose.
fn page(
    ctx: &Context,
    dtype: kernels_gpu::gemm::Dtype,
    steps: &[Step],
    layers: u32,
    launches: usize,
    contenders: &[Contender],
    rows: &[Row],
) -> Page {
    let device = ctx.backend().describe();
    let (peak, peak_name) = datasheet_bandwidth(&device);
    let passed = rows.iter().all(|r| r.checked.iter().all(Checked::passed));
    let unit = if ctx.gpu { "µs" } else { "emulator ms" };
    let mut table = Table::new(
        "decode",
        &format!("{layers} layers of Llama-3 8B's GEMMs in one graph"),
    )
    .text_column("tokens");
    for c in contenders {
        table = table.number_column(&format!("{} step ({unit})", c.name()));
    }
    if ctx.gpu {
        table = table
            .number_column("cuBLAS / auto")
            .number_column("cuBLAS / auto early")
            .number_column("early start's gain")
            .number_column("auto early µs a layer")
            .number_column("auto early % of HBM")
            .number_column("cuBLAS % of HBM");
    }
    table = table
        .text_column("check")
        .text_column("auto chose (QKV, O, gate-up, down)");
    let mut ratios = Vec::new();
    for row in rows {
        let bytes: f64 = steps
            .iter()
            .map(|s| bytes_moved(s.out, row.tokens, s.k, dtype))
            .sum::<f64>()
            * layers as f64;
        let medians: Vec<f64> = row.times.iter().map(|t| median(t)).collect();
        let mut cells = vec![Cell::text(row.tokens.to_string())];
        let scale = if ctx.gpu { 1e3 } else { 1.0 };
        cells.extend(medians.iter().map(|ms| Cell::fixed(ms * scale, 1)));
        if let [ours, early, cublas] = medians[..] {
            ratios.push(cublas / early);
            cells.push(Cell::times(cublas / ours, 3));
            cells.push(Cell::times(cublas / early, 3));
            cells.push(Cell::times(ours / early, 3));
            cells.push(Cell::fixed(early * 1e3 / layers as f64, 2));
            for ms in [early, cublas] {
                cells.push(Cell::fixed(100.0 * bytes / (ms * 1e-3) / peak, 1));
            }
        }
        let checks: Vec<String> = contenders
            .iter()
            .zip(&row.checked)
            .map(|(c, k)| {
                format!(
                    "{} {} ({:.1e} ≤ {:.1e})",
                    c.name(),
                    if k.passed() { "pass" } else { "FAIL" },
                    k.worst,
                    k.tolerance
                )
            })
            .collect();
        cells.push(Cell::text(checks.join(", ")));
        cells.push(Cell::text(row.checked[0].variants.join(", ")));
        table.push(cells);
    }
    let mut section = Section::new(table);
    section.notes.push(format!(
        "Each row: {layers} layers × {} GEMMs (T,N; weights {}) captured into one CUDA graph \
         per contender, checked after its first launch from zeroed activations, then the \
         graphs launched in alternation, {launches} timed launches each (CUDA events around \
         each launch; the median). Early start: the kernels that allow it launched as \
         programmatic dependent launches, each starting while the one ahead finishes, \
         prefetching its first weights into L2, then waiting for it. % of HBM: the weights and activations each GEMM reads and \
         writes, over the step's time, against the {peak_name}.",
        steps.len(),
        steps
            .iter()
            .map(|s| format!("{} {}×{}", s.name, s.out, s.k))
            .collect::<Vec<_>>()
            .join(", "),
    ));
    let headline = match geomean(ratios.iter().copied()) {
        Some(g) => format!(
            "A graph-captured decode step of {layers} Llama-3 8B layers: auto's chain, its \
             kernels started early, is {g:.3}× the speed of cuBLAS's (geomean over {} token \
             counts; {} to {}).",
            ratios.len(),
            fmt_times(ratios.iter().copied().fold(f64::INFINITY, f64::min)),
            fmt_times(ratios.iter().copied().fold(0.0, f64::max)),
        ),
        None => format!(
            "The decode chain ran and was checked on {device} at {} of Llama-3 8B's sizes; \
             times are the emulation's.",
            format_args!("1/{EMULATOR_DIVISOR}")
        ),
    };
    Page {
        id: ID,
        title: "A decode step as a graph: Llama-3 8B's GEMMs, layer after layer".into(),
        intro: "The GEMMs of a decode step run back to back, each reading what the one before \
                wrote, captured into one CUDA graph as serving programs run them; beside the \
                same chain of cuBLAS calls captured the same way."
            .into(),
        headline,
        metadata: ctx.metadata(
            ctx.timing_with(1, launches),
            vec![
                ("layers", layers.to_string()),
                ("launches", launches.to_string()),
            ],
            passed,
        ),
        sections: vec![section],
        passed,
    }
}

fn fmt_times(x: f64) -> String {
    format!("{x:.3}×")
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_gemm::run::Backend;

    fn emulator() -> Context {
        Context::new(Backend::Emulator, &Common::default(), "host test".into())
    }

    #[test]
    fn the_chain_runs_checked_on_the_emulator_with_and_without_the_early_start() {
        let ctx = emulator();
        let args = Args {
            tokens: vec![3],
            layers: Some(1),
            ..Args::default()
        };
        let page = run(&ctx, &args).unwrap();
        assert!(page.passed, "{}", page.to_terminal());
        let table = &page.sections[0].table;
        assert_eq!(table.rows.len(), 1);
        let markdown = table.to_markdown();
        assert!(markdown.contains("auto, early start pass"), "{markdown}");
    }

    /// The check reads each GEMM's input as the chain left it: a GEMM that ran on its input
    /// before the GEMM ahead wrote it (zeros, here) fails it, as an early start that read
    /// before its wait would.
    #[test]
    fn a_gemm_that_read_its_input_too_early_fails_the_chain_check() {
        let ctx = emulator();
        let gemm = ctx.gemm();
        let steps = layer(false);
        let weights = Weights::<bf16>::new(gemm, &steps, 1, 2, 1).unwrap();
        let mut chain = weights.chain(gemm, Contender::Auto).unwrap();
        weights.enqueue(&mut chain).unwrap();
        assert!(check(gemm, &weights, &chain).unwrap().passed());
        // gate-up (GEMM 2) again, on what O's output was before O ran.
        let before = gemm.zeros::<bf16>(steps[1].out as usize * 2).unwrap();
        chain.plans[2]
            .enqueue(&weights.weights[2], &before, &mut chain.activations[3])
            .unwrap();
        let checked = check(gemm, &weights, &chain).unwrap();
        assert!(
            !checked.passed(),
            "gate-up computed from zeros passed: {} ≤ {}",
            checked.worst,
            checked.tolerance
        );
    }
}
