//! `host experiment decode`: a decode step as a program runs it — the GEMMs of a model's
//! layers, 32 layers deep, captured into one CUDA graph and launched as one, beside the same
//! chain of cuBLAS calls captured the same way; `auto`'s chain twice, as launched before and
//! with the early start ([`gpu_gemm::Plan::start_early`], `kernels_gpu::device::grid`). Two
//! models: Llama-3 8B's dense layer, and DeepSeek-V3's mixture of experts as two grouped GEMMs
//! in DeepGEMM's masked layout (cuBLAS, which has none, a call per expert with tokens).
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
//! that read its input before the previous kernel wrote it fails the check. Then the graphs
//! are launched in alternation and timed with CUDA events around each launch.
use super::context::{Common, Context};
use super::page::{Page, Section};
use super::progress::Progress;
use super::shapes::{bytes_moved, datasheet_bandwidth, geomean};
use super::table::{Cell, Table};
use super::timeline::Timeline;
use anyhow::{bail, Result};
use gpu_gemm::half::{bf16, f16};
use gpu_gemm::kernel_clock::KernelClock;
use gpu_gemm::timing::median;
use gpu_gemm::{
    Algorithm, Buffer, Element, Gemm, GemmConfig, GemmError, Graph, Math, Plan, Transpose,
};
use rand::{Rng, SeedableRng};

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
    /// Which layers, separated by commas: llama3 (Llama-3 8B), moe (DeepSeek-V3's experts)
    /// [default: both]
    #[arg(long, value_enum, value_delimiter = ',')]
    pub model: Vec<Model>,
    /// Timed launches of each graph, alternating [default: 20 on the GPU, 1 on the emulator]
    #[arg(long, value_parser = crate::args::positive_count)]
    pub launches: Option<usize>,
    /// GPU runs only: after the timing, launch each chain once more under CUPTI's kernel
    /// records and report its timeline: the µs a layer spends in kernels, between them and in
    /// two at once (the early start's overlap), and the middle layer's kernels one by one. It
    /// needs libcupti (CUDA's extras/CUPTI/lib64) on LD_LIBRARY_PATH; once CUPTI records, the
    /// later token counts are timed with it recording
    #[arg(long)]
    pub timeline: bool,
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

/// One layer of DeepSeek-V3's mixture of experts: 256 routed experts, each a gate-up
/// projection (2 × 2048 from the hidden 7168) and a down projection; every token goes to 8.
pub const DEEPSEEK_V3_EXPERT: [Step; 2] = [
    Step {
        name: "gate-up",
        out: 2 * 2048,
        k: 7168,
    },
    Step {
        name: "down",
        out: 7168,
        k: 2048,
    },
];
/// DeepSeek-V3's routed experts, and the experts each token goes to.
pub const DEEPSEEK_V3_EXPERTS: (u32, u32) = (256, 8);

/// The emulator's layers: the models', every size divided by this, 8 experts and 2 a token.
pub const EMULATOR_DIVISOR: u32 = 64;
const EMULATOR_EXPERTS: (u32, u32) = (8, 2);

/// The chain's rows of sampled output checked per GEMM (spread over the output features).
const CHECKED_ROWS: u32 = 8;

/// The two layers the page runs (`--model`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// Llama-3 8B: four dense GEMMs a layer.
    Llama3,
    /// DeepSeek-V3's MoE layer: two grouped GEMMs a layer, in DeepGEMM's masked layout.
    #[value(name = "moe")]
    DeepSeekMoe,
}

impl Model {
    pub fn name(self) -> &'static str {
        match self {
            Model::Llama3 => "Llama-3 8B",
            Model::DeepSeekMoe => "DeepSeek-V3 MoE",
        }
    }

    /// The layer's GEMMs at the backend's size, and its (experts, experts a token): (1, 1)
    /// for a dense layer.
    pub fn layer(self, gpu: bool) -> (Vec<Step>, (u32, u32)) {
        let divisor = if gpu { 1 } else { EMULATOR_DIVISOR };
        let (steps, experts): (&[Step], _) = match (self, gpu) {
            (Model::Llama3, _) => (&LLAMA3_8B, (1, 1)),
            (Model::DeepSeekMoe, true) => (&DEEPSEEK_V3_EXPERT, DEEPSEEK_V3_EXPERTS),
            (Model::DeepSeekMoe, false) => (&DEEPSEEK_V3_EXPERT, EMULATOR_EXPERTS),
        };
        let steps = steps
            .iter()
            .map(|s| Step {
                out: s.out / divisor,
                k: s.k / divisor,
                ..*s
            })
            .collect();
        (steps, experts)
    }
}

/// What ran the chain: `auto` or cuBLAS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Contender {
    Auto,
    /// `auto`'s kernels launched early ([`gpu_gemm::Plan::start_early`]).
    AutoEarly,
    Cublas,
    /// `auto`, but a call per expert as cuBLAS's chain makes them: what the tests run on the
    /// emulator, which has no cuBLAS, to check that chain's parts of the buffers.
    #[cfg(test)]
    AutoPerExpert,
}

impl Contender {
    fn name(self) -> &'static str {
        match self {
            Contender::Auto => "auto",
            Contender::AutoEarly => "auto, early start",
            Contender::Cublas => "cuBLAS",
            #[cfg(test)]
            Contender::AutoPerExpert => "auto, a call per expert",
        }
    }

    fn algorithm(self) -> Algorithm {
        match self {
            Contender::Auto | Contender::AutoEarly => Algorithm::Auto(Math::Strict),
            Contender::Cublas => Algorithm::Cublas,
            #[cfg(test)]
            Contender::AutoPerExpert => Algorithm::Auto(Math::Strict),
        }
    }

    /// Whether a grouped layer runs as a call per expert with tokens (cuBLAS has no masked
    /// grouped GEMM).
    fn per_expert(self) -> bool {
        match self {
            Contender::Cublas => true,
            #[cfg(test)]
            Contender::AutoPerExpert => true,
            _ => false,
        }
    }
}

/// The plans of one step of a layer: one for every expert at once (a dense GEMM, or `auto`'s
/// grouped GEMM), or one per expert that has tokens (cuBLAS, which has no masked grouped
/// GEMM: a call per expert, as a program without one makes them).
struct StepPlans<'g, T: Element> {
    plans: Vec<(Option<u32>, Plan<'g, T>)>,
}

/// A chain at one token count, for one contender: its GEMMs' plans and its activations.
struct Chain<'g, T: Element> {
    /// The plans of step `s`, which every layer's GEMM of step `s` enqueues.
    steps: Vec<StepPlans<'g, T>>,
    /// The model's input, then the output of every GEMM in chain order.
    activations: Vec<Buffer<T>>,
}

/// The chain's shared inputs: one weight matrix per step and expert, the routing.
struct Weights<T: Element> {
    steps: Vec<Step>,
    layers: u32,
    /// The experts each token goes to (1 in a dense layer).
    per_token: u32,
    /// Tokens each expert computes (for a dense layer, one expert with all of them), and the
    /// columns each expert's slot of the activations holds (the masked layout's capacity).
    counts: Vec<u32>,
    capacity: u32,
    /// Every expert's weights of each step, one after the other.
    weights: Vec<Buffer<T>>,
    /// The same weights on the host, for the check.
    host: Vec<Vec<T>>,
    /// The counts where the kernels read them (a grouped layer's table).
    table: Option<gpu_gemm::Table>,
}

impl<T: Element> Weights<T> {
    /// Weights of step s uniform in ±√(3/k), so that an input of variance 1/3 gives an output
    /// of variance 1/3, layer after layer, for `experts.0` experts of which each token goes to
    /// `experts.1`; no tokens until [`Weights::route`].
    fn new(
        gemm: &Gemm,
        (steps, experts): (&[Step], (u32, u32)),
        layers: u32,
        seed: u64,
    ) -> Result<Self> {
        let (first, last) = (steps[0], steps[steps.len() - 1]);
        if first.k != last.out {
            bail!(
                "a layer's first GEMM reads {} features, its last writes {}: not a residual stream",
                first.k,
                last.out
            );
        }
        let mut host = Vec::new();
        let mut weights = Vec::new();
        for (i, s) in steps.iter().enumerate() {
            let bound = (3.0 / s.k as f64).sqrt();
            let len = s.k as usize * s.out as usize * experts.0 as usize;
            let values = uniform(len, bound, seed + i as u64);
            weights.push(gemm.upload(&values)?);
            host.push(values);
        }
        Ok(Weights {
            steps: steps.to_vec(),
            layers,
            per_token: experts.1,
            counts: vec![0; experts.0 as usize],
            capacity: 0,
            weights,
            host,
            table: None,
        })
    }

    /// Routes each of `tokens` to its experts, drawn from `seed` (all of them to the one
    /// expert of a dense layer): the counts, the capacity of each expert's slot and the table
    /// the grouped kernels read.
    fn route(&mut self, gemm: &Gemm, tokens: u32, seed: u64) -> Result<()> {
        let experts = self.experts();
        self.counts = route(tokens, (experts, self.per_token), seed);
        // A slot of 8 columns at least: 16 bytes of every column of a 16-bit slot.
        let most = self.counts.iter().copied().max().unwrap_or(1);
        self.capacity = if experts == 1 {
            tokens
        } else {
            most.next_multiple_of(8)
        };
        self.table = match experts {
            1 => None,
            _ => Some(gemm.upload_table(&self.counts)?),
        };
        Ok(())
    }

    fn experts(&self) -> u32 {
        self.counts.len() as u32
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

    /// Step `s`'s configuration for all experts, reading an input of leading dimension `ld`:
    /// a dense GEMM, or the masked layout's grouped GEMM over every expert's slot.
    fn config(&self, step: Step, ld: u32) -> GemmConfig {
        let config = GemmConfig::new(step.out, self.capacity, step.k)
            .transposes(Transpose::Yes, Transpose::No)
            .leading_dimensions(step.k, ld, step.out);
        if self.experts() == 1 {
            return config;
        }
        let cap = self.capacity as u64;
        let (out, k) = (step.out as u64, step.k as u64);
        config.masked_groups(self.experts(), out * k, ld as u64 * cap, out * cap)
    }

    /// Expert `e`'s part of step `step`'s weights, of an input of leading dimension `ld`, and
    /// of its output: element ranges of the whole buffers.
    fn expert_ranges(&self, e: u32, step: Step, ld: u32) -> [std::ops::Range<usize>; 3] {
        let (e, cap, n) = (
            e as usize,
            self.capacity as usize,
            self.counts[e as usize] as usize,
        );
        let (out, k, ld) = (step.out as usize, step.k as usize, ld as usize);
        let at = |first: usize, len: usize| first..first + len;
        [
            at(e * out * k, out * k),
            at(e * ld * cap, ld * (n - 1) + k),
            at(e * out * cap, out * n),
        ]
    }

    /// `contender`'s plans and zeroed activations.
    fn chain<'g>(&self, gemm: &'g Gemm, contender: Contender) -> Result<Chain<'g, T>> {
        let slots = (self.capacity * self.experts()) as usize;
        let input = uniform(self.steps[0].k as usize * slots, 1.0, u64::MAX);
        let mut activations = vec![gemm.upload(&input)?];
        let mut steps = Vec::new();
        for (i, (_, step, ld)) in self.gemms().enumerate() {
            activations.push(gemm.zeros::<T>(step.out as usize * slots)?);
            // Layer 0's GEMMs plan every layer's: the same configurations.
            if i >= self.steps.len() {
                continue;
            }
            let algorithm = contender.algorithm();
            let mut plans = Vec::new();
            if self.experts() > 1 && contender.per_expert() {
                for e in (0..self.experts()).filter(|&e| self.counts[e as usize] > 0) {
                    let config = GemmConfig::new(step.out, self.counts[e as usize], step.k)
                        .transposes(Transpose::Yes, Transpose::No)
                        .leading_dimensions(step.k, ld, step.out);
                    plans.push((Some(e), gemm.plan::<T>(&config, &algorithm)?));
                }
            } else {
                let mut plan = gemm.plan::<T>(&self.config(step, ld), &algorithm)?;
                if contender == Contender::AutoEarly {
                    plan.start_early();
                }
                plans.push((None, plan));
            }
            steps.push(StepPlans { plans });
        }
        Ok(Chain { steps, activations })
    }

    /// Enqueues the whole chain: the body of the graph.
    fn enqueue(&self, chain: &mut Chain<'_, T>) -> Result<(), GemmError> {
        for (i, (s, step, ld)) in self.gemms().enumerate() {
            let (read, written) = chain.activations.split_at_mut(i + 1);
            let (input, output, w) = (&read[i], &mut written[0], &self.weights[s]);
            for (expert, plan) in &mut chain.steps[s].plans {
                match (expert, &self.table) {
                    (Some(e), _) => {
                        let [a, b, c] = self.expert_ranges(*e, step, ld);
                        plan.enqueue(&w.range(a), &input.range(b), &mut output.range_mut(c))?;
                    }
                    (None, Some(table)) => plan.enqueue_grouped(w, input, table, output)?,
                    (None, None) => plan.enqueue(w, input, output)?,
                }
            }
        }
        Ok(())
    }

    /// The bytes a step moves: each GEMM's weights of the experts that have tokens, its
    /// input and its output.
    fn bytes(&self, dtype: kernels_gpu::gemm::Dtype) -> f64 {
        let per_layer: f64 = self
            .steps
            .iter()
            .flat_map(|s| {
                self.counts
                    .iter()
                    .filter(|&&n| n > 0)
                    .map(|&n| bytes_moved(s.out, n, s.k, dtype))
            })
            .sum();
        per_layer * self.layers as f64
    }
}

/// Each expert's tokens when each of `tokens` goes to `experts.1` different experts of
/// `experts.0`, drawn from `seed` (every token to the one expert of a dense layer).
fn route(tokens: u32, (experts, per_token): (u32, u32), seed: u64) -> Vec<u32> {
    let mut counts = vec![0u32; experts as usize];
    if experts == 1 {
        counts[0] = tokens;
        return counts;
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..tokens {
        let mut chosen = Vec::new();
        while chosen.len() < per_token as usize {
            let e = rng.random_range(0..experts);
            if !chosen.contains(&e) {
                chosen.push(e);
            }
        }
        for e in chosen {
            counts[e as usize] += 1;
        }
    }
    counts
}

/// `len` values uniform in ±`bound`, from `seed`: a hash of each index, so that the values
/// do not depend on how the work is shared out.
fn uniform<T: Element>(len: usize, bound: f64, seed: u64) -> Vec<T> {
    let mix = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let value = |i: u64| {
        let h = (i.wrapping_add(1)).wrapping_mul(mix);
        let h = (h ^ (h >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        let unit = (h >> 11) as f64 / (1u64 << 53) as f64;
        T::from_f64(bound * (2.0 * unit - 1.0))
    };
    let mut values = vec![T::from_f64(0.0); len];
    // DeepSeek-V3's 256 experts are 11 billion weights: filled on every core.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = len.div_ceil(threads).max(1 << 16);
    std::thread::scope(|scope| {
        for (c, part) in values.chunks_mut(chunk).enumerate() {
            scope.spawn(move || {
                for (j, v) in part.iter_mut().enumerate() {
                    *v = value((c * chunk + j) as u64);
                }
            });
        }
    });
    values
}

/// The worst error of one GEMM of the chain, relative to Σ|w·x| of its element (the check's
/// measure), over [`CHECKED_ROWS`] rows and `tokens` tokens: `c` against the f64 product of
/// `w` (k × out, read transposed) and `x` (k × tokens, leading dimension `ld`).
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

/// Checks every GEMM of `chain` after its first launch: each expert's tokens.
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
        for e in (0..weights.experts()).filter(|&e| weights.counts[e as usize] > 0) {
            let [a, b, cr] = weights.expert_ranges(e, step, ld);
            let n = weights.counts[e as usize];
            let parts = (&weights.host[s][a], &x[b], ld, &c[cr]);
            worst = worst.max(worst_error(step, n, parts));
        }
        for (_, plan) in &chain.steps[s].plans {
            let arithmetic = plan.choice().arithmetic;
            tolerance = tolerance.min(gpu_gemm::verify::tolerance(T::DTYPE, arithmetic, step.k));
        }
    }
    let variants = chain
        .steps
        .iter()
        .map(|p| {
            let first = p.plans[0].1.choice().variant.clone();
            match p.plans.len() {
                1 => first,
                n => format!("{first} ×{n}"),
            }
        })
        .collect();
    Ok(Checked {
        variants,
        worst,
        tolerance,
    })
}

/// One row of the page: a token count, each contender's check and times.
struct Row {
    tokens: u32,
    /// The bytes the step moves ([`Weights::bytes`]), and the experts that had tokens.
    bytes: f64,
    active_experts: u32,
    checked: Vec<Checked>,
    /// Each contender's launches, in ms.
    times: Vec<Vec<f64>>,
    /// With `--timeline`, each contender's chain on the kernels' clock, or why there is none.
    timelines: Option<Result<Vec<Option<Timeline>>, String>>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Page> {
    match args.dtype {
        DecodeDtype::Bf16 => run_typed::<bf16>(ctx, args),
        DecodeDtype::F16 => run_typed::<f16>(ctx, args),
    }
}

/// The page's settings: token counts, layers, timed launches, contenders.
struct Settings {
    tokens: Vec<u32>,
    layers: u32,
    launches: usize,
    contenders: Vec<Contender>,
    timeline: bool,
}

fn run_typed<T: Element>(ctx: &Context, args: &Args) -> Result<Page> {
    if args.timeline && !ctx.gpu {
        bail!("--timeline reads the GPU's kernel records (CUPTI): the emulator has none");
    }
    let settings = Settings {
        tokens: match (args.tokens.is_empty(), ctx.gpu) {
            (false, _) => args.tokens.clone(),
            (true, true) => vec![1, 16, 64, 128],
            (true, false) => vec![1, 16],
        },
        layers: args.layers.unwrap_or(if ctx.gpu { 32 } else { 2 }),
        launches: args.launches.unwrap_or(if ctx.gpu { 20 } else { 1 }),
        timeline: args.timeline,
        contenders: if ctx.gpu {
            vec![Contender::Auto, Contender::AutoEarly, Contender::Cublas]
        } else {
            vec![Contender::Auto, Contender::AutoEarly]
        },
    };
    let models = match &args.model[..] {
        [] => vec![Model::Llama3, Model::DeepSeekMoe],
        chosen => chosen.to_vec(),
    };
    let progress = Progress::new("decode", models.len() * settings.tokens.len());
    let mut sections = Vec::new();
    let mut passed = true;
    for &model in &models {
        let mut rows = Vec::new();
        progress.running(&format!("{}: weights", model.name()));
        let (steps, experts) = model.layer(ctx.gpu);
        let gemm = ctx.gemm();
        let mut weights = Weights::<T>::new(gemm, (&steps, experts), settings.layers, ctx.seed)?;
        for &t in &settings.tokens {
            weights.route(gemm, t, ctx.seed)?;
            let row = run_tokens::<T>(ctx, &progress, (model, t, &weights), &settings)?;
            progress.done(&row_line(model, &row, &settings.contenders, ctx.gpu));
            passed &= row.checked.iter().all(Checked::passed);
            rows.push(row);
        }
        sections.push(section(ctx, model, &settings, &rows));
        if settings.timeline {
            sections.push(timeline_section(model, &settings, &rows));
        }
    }
    progress.finish();
    Ok(page(ctx, T::DTYPE, &settings, sections, passed))
}

/// One model's chain at `tokens`: each contender's graph checked after its first launch, then
/// the graphs timed in alternation.
fn run_tokens<T: Element>(
    ctx: &Context,
    progress: &Progress,
    (model, tokens, weights): (Model, u32, &Weights<T>),
    settings: &Settings,
) -> Result<Row> {
    let gemm = ctx.gemm();
    let what = format!("{} at {tokens} tokens", model.name());
    let mut chains = Vec::new();
    let mut checked = Vec::new();
    for &c in &settings.contenders {
        progress.running(&format!("{what}: {}'s chain, checked", c.name()));
        let mut chain = weights.chain(gemm, c)?;
        {
            let mut graph = gemm.capture(|| weights.enqueue(&mut chain))?;
            graph.launch()?;
        }
        gemm.synchronize()?;
        checked.push(check(gemm, weights, &chain)?);
        chains.push(chain);
    }
    progress.running(&format!("{what}: timing"));
    let mut graphs = chains
        .iter_mut()
        .map(|chain| gemm.capture(move || weights.enqueue(chain)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut times = vec![Vec::new(); graphs.len()];
    // A launch of each first, untimed; then in alternation, so that drift falls on all.
    for graph in &mut graphs {
        graph.launch()?;
    }
    for _ in 0..settings.launches {
        for (graph, times) in graphs.iter_mut().zip(&mut times) {
            times.push(graph.launch_timed()?);
        }
    }
    let timelines = settings.timeline.then(|| {
        progress.running(&format!("{what}: timelines"));
        timelines(gemm, &mut graphs, settings.layers).map_err(|e| format!("{e:#}"))
    });
    Ok(Row {
        tokens,
        bytes: weights.bytes(T::DTYPE),
        active_experts: weights.counts.iter().filter(|&&n| n > 0).count() as u32,
        checked,
        times,
        timelines,
    })
}

/// Each graph launched once more with the kernels' records on: its [`Timeline`] (`None` where
/// CUPTI delivered no stamps).
fn timelines(gemm: &Gemm, graphs: &mut [Graph<'_>], layers: u32) -> Result<Vec<Option<Timeline>>> {
    let clock = KernelClock::get()?;
    let mut timelines = Vec::new();
    for graph in graphs {
        let since = clock.begin()?;
        graph.launch()?;
        gemm.synchronize()?;
        timelines.push(Timeline::of(&clock.stamps(since)?, layers));
    }
    Ok(timelines)
}

/// One model's chains on the kernels' clock: per token count and contender, a layer's µs in
/// kernels, between them and in two at once, and the middle layer's kernels.
fn timeline_section(model: Model, settings: &Settings, rows: &[Row]) -> Section {
    let id = match model {
        Model::Llama3 => "decode-llama3-timeline",
        Model::DeepSeekMoe => "decode-deepseek-moe-timeline",
    };
    let title = format!("{}'s chain on the kernels' clock, a layer", model.name());
    let mut table = Table::new(id, &title)
        .text_column("tokens")
        .text_column("chain")
        .number_column("kernels a step")
        .number_column("in kernels µs")
        .number_column("between kernels µs")
        .number_column("two at once µs")
        .text_column("the middle layer's kernels: gap µs: start–end µs");
    for row in rows {
        let Some(timelines) = &row.timelines else {
            continue;
        };
        for (i, c) in settings.contenders.iter().enumerate() {
            let mut cells = vec![Cell::text(row.tokens.to_string()), Cell::text(c.name())];
            let timeline = match timelines {
                Ok(t) => t
                    .get(i)
                    .cloned()
                    .flatten()
                    .ok_or("CUPTI delivered no stamps"),
                Err(why) => Err(why.as_str()),
            };
            match timeline {
                Ok(t) => {
                    cells.push(Cell::fixed(t.kernels as f64, 0));
                    for us in [t.busy_us, t.idle_us, t.overlap_us] {
                        cells.push(Cell::fixed(us, 2));
                    }
                    cells.push(Cell::text(t.layer_text()));
                }
                Err(why) => {
                    cells.extend((0..4).map(|_| Cell::missing(why)));
                    cells.push(Cell::text(why));
                }
            }
            table.push(cells);
        }
    }
    let mut section = Section::new(table);
    section.notes.push(format!(
        "Each chain launched once more after its timing, with CUPTI's kernel records on (the \
         kernels' own start and end stamps); each figure a mean over the {} layers. In \
         kernels: the time some kernel ran; between kernels: the time none did, from the first \
         start to the last end; two at once: the kernels' summed spans past that, which is \
         where an early-started kernel waits for the one ahead (its stamps start with its \
         first block). The middle layer's kernels: each one's start and end from the layer's \
         first start, and before each the gap from the one ahead's end (negative: it started \
         before that one ended).",
        settings.layers
    ));
    section
}

/// The printed line of a finished token count.
fn row_line(model: Model, row: &Row, contenders: &[Contender], gpu: bool) -> String {
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
    format!(
        "  {} {} tokens: {}",
        model.name(),
        row.tokens,
        parts.join("; ")
    )
}

/// One model's table: per token count, each contender's time per step and per layer, the
/// bandwidth its weights stream at, its check, and what `auto` chose.
fn section(ctx: &Context, model: Model, settings: &Settings, rows: &[Row]) -> Section {
    let (layers, contenders) = (settings.layers, &settings.contenders);
    let (steps, experts) = model.layer(ctx.gpu);
    let (peak, peak_name) = datasheet_bandwidth(&ctx.backend().describe());
    let unit = if ctx.gpu { "µs" } else { "emulator ms" };
    let id = match model {
        Model::Llama3 => "decode-llama3",
        Model::DeepSeekMoe => "decode-deepseek-moe",
    };
    let mut table = Table::new(
        id,
        &format!("{layers} layers of {}'s GEMMs in one graph", model.name()),
    )
    .text_column("tokens");
    if experts.0 > 1 {
        table = table.number_column("experts with tokens");
    }
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
    let names: Vec<&str> = steps.iter().map(|s| s.name).collect();
    table = table
        .text_column("check")
        .text_column(&format!("auto chose ({})", names.join(", ")));
    let mut ratios = Vec::new();
    for row in rows {
        let medians: Vec<f64> = row.times.iter().map(|t| median(t)).collect();
        let mut cells = vec![Cell::text(row.tokens.to_string())];
        if experts.0 > 1 {
            cells.push(Cell::fixed(row.active_experts as f64, 0));
        }
        let scale = if ctx.gpu { 1e3 } else { 1.0 };
        cells.extend(medians.iter().map(|ms| Cell::fixed(ms * scale, 1)));
        if let [ours, early, cublas] = medians[..] {
            ratios.push(cublas / early);
            cells.push(Cell::times(cublas / ours, 3));
            cells.push(Cell::times(cublas / early, 3));
            cells.push(Cell::times(ours / early, 3));
            cells.push(Cell::fixed(early * 1e3 / layers as f64, 2));
            for ms in [early, cublas] {
                cells.push(Cell::fixed(100.0 * row.bytes / (ms * 1e-3) / peak, 1));
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
    section.finding = geomean(ratios.iter().copied()).map(|g| {
        format!(
            "auto's chain, its kernels started early, is {g:.3}× the speed of cuBLAS's \
             (geomean over {} token counts; {} to {}).",
            ratios.len(),
            fmt_times(ratios.iter().copied().fold(f64::INFINITY, f64::min)),
            fmt_times(ratios.iter().copied().fold(0.0, f64::max)),
        )
    });
    let shapes = steps
        .iter()
        .map(|s| format!("{} {}×{}", s.name, s.out, s.k))
        .collect::<Vec<_>>()
        .join(", ");
    let form = if experts.0 > 1 {
        format!(
            "each a grouped GEMM over {} experts in the masked layout, each token routed to {} \
             of them (drawn from the seed); cuBLAS: a call per expert with tokens",
            experts.0, experts.1
        )
    } else {
        "each dense".to_string()
    };
    section.notes.push(format!(
        "Each row: {layers} layers × {} GEMMs (T,N; {shapes}; {form}) captured into one CUDA \
         graph per contender, checked after its first launch from zeroed activations, then \
         the graphs launched in alternation, {} timed launches each (CUDA events around each \
         launch; the median). Early start: the kernels that allow it launched as programmatic \
         dependent launches, each starting while the one ahead finishes, prefetching its first \
         weights into L2, then waiting for it. % of HBM: the weights (of the experts with \
         tokens) and activations each GEMM reads and writes, over the step's time, against the \
         {peak_name}.",
        steps.len(),
        settings.launches,
    ));
    section
}

/// The page: a section per model.
fn page(
    ctx: &Context,
    dtype: kernels_gpu::gemm::Dtype,
    settings: &Settings,
    sections: Vec<Section>,
    passed: bool,
) -> Page {
    let headline = if ctx.gpu {
        let findings: Vec<String> = sections
            .iter()
            .filter_map(|s| Some(format!("{}: {}", s.table.title, s.finding.as_ref()?)))
            .collect();
        format!(
            "A graph-captured decode step in {}. {}",
            dtype.name(),
            findings.join(" ")
        )
    } else {
        format!(
            "The decode chains ran and were checked on the CPU emulator at 1/{EMULATOR_DIVISOR} \
             of the models' sizes; times are the emulation's."
        )
    };
    Page {
        id: ID,
        title: "A decode step as a graph: a model's GEMMs, layer after layer".into(),
        intro: "The GEMMs of a decode step run back to back, each reading what the one before \
                wrote, captured into one CUDA graph as serving programs run them; beside the \
                same chain of cuBLAS calls captured the same way."
            .into(),
        headline,
        metadata: ctx.metadata(
            ctx.timing_with(1, settings.launches),
            vec![
                ("layers", settings.layers.to_string()),
                ("launches", settings.launches.to_string()),
                ("dtype", dtype.name().to_string()),
            ],
            passed,
        ),
        sections,
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
        assert_eq!(page.sections.len(), 2, "both models");
        for section in &page.sections {
            assert_eq!(section.table.rows.len(), 1);
            let markdown = section.table.to_markdown();
            assert!(markdown.contains("auto, early start pass"), "{markdown}");
        }
    }

    /// The timeline's table: a row per token count and chain, the middle layer's kernels
    /// where there are stamps, and why not where there are none.
    #[test]
    fn the_timeline_table_tells_each_chain_or_why_not() {
        let settings = Settings {
            tokens: vec![1, 16],
            layers: 2,
            launches: 1,
            contenders: vec![Contender::Auto, Contender::AutoEarly, Contender::Cublas],
            timeline: true,
        };
        let ns = |a: u64, b: u64| (a * 1000, b * 1000);
        let early = Timeline::of(&[ns(0, 10), ns(8, 20), ns(20, 30), ns(28, 40)], 2);
        let row = |tokens, timelines| Row {
            tokens,
            bytes: 1.0,
            active_experts: 1,
            checked: Vec::new(),
            times: Vec::new(),
            timelines: Some(timelines),
        };
        let rows = [
            row(1, Ok(vec![early.clone(), early, None])),
            row(16, Err("libcupti.so: cannot open".to_string())),
        ];
        let markdown = timeline_section(Model::Llama3, &settings, &rows)
            .table
            .to_markdown();
        assert!(
            markdown.contains("| 1 | auto, early start | 4 |"),
            "{markdown}"
        );
        assert!(markdown.contains("0.0–10.0, -2.0: 8.0–20.0"), "{markdown}");
        assert!(markdown.contains("CUPTI delivered no stamps"), "{markdown}");
        assert!(markdown.contains("libcupti.so: cannot open"), "{markdown}");
    }

    /// The timeline reads the GPU's kernel records: asked for on the emulator, it is refused
    /// before anything runs.
    #[test]
    fn a_timeline_on_the_emulator_is_refused() {
        let args = Args {
            timeline: true,
            ..Args::default()
        };
        let Err(e) = run(&emulator(), &args) else {
            panic!("a timeline on the emulator ran");
        };
        let e = e.to_string();
        assert!(e.contains("--timeline") && e.contains("emulator"), "{e}");
    }

    /// The chain of a call per expert (cuBLAS's form on the GPU) reads and writes each
    /// expert's part of the buffers as the grouped GEMM does: the same check passes.
    #[test]
    fn a_call_per_expert_computes_the_grouped_layer() {
        let ctx = emulator();
        let gemm = ctx.gemm();
        let (steps, experts) = Model::DeepSeekMoe.layer(false);
        let mut weights = Weights::<bf16>::new(gemm, (&steps, experts), 2, 3).unwrap();
        weights.route(gemm, 5, 3).unwrap();
        let mut chain = weights.chain(gemm, Contender::AutoPerExpert).unwrap();
        let active = weights.counts.iter().filter(|&&n| n > 0).count();
        assert!(
            active > 1 && active < experts.0 as usize,
            "{:?}",
            weights.counts
        );
        assert_eq!(chain.steps[0].plans.len(), active);
        weights.enqueue(&mut chain).unwrap();
        let checked = check(gemm, &weights, &chain).unwrap();
        assert!(
            checked.passed(),
            "{} > {}",
            checked.worst,
            checked.tolerance
        );
    }

    /// The check reads each GEMM's input as the chain left it: a GEMM that ran on its input
    /// before the GEMM ahead wrote it (zeros, here) fails it, as an early start that read
    /// before its wait would.
    #[test]
    fn a_gemm_that_read_its_input_too_early_fails_the_chain_check() {
        let ctx = emulator();
        let gemm = ctx.gemm();
        let (steps, experts) = Model::Llama3.layer(false);
        let mut weights = Weights::<bf16>::new(gemm, (&steps, experts), 1, 1).unwrap();
        weights.route(gemm, 2, 1).unwrap();
        let mut chain = weights.chain(gemm, Contender::Auto).unwrap();
        weights.enqueue(&mut chain).unwrap();
        assert!(check(gemm, &weights, &chain).unwrap().passed());
        // gate-up (GEMM 2) again, on what O's output was before O ran.
        let before = gemm.zeros::<bf16>(steps[1].out as usize * 2).unwrap();
        chain.steps[2].plans[0]
            .1
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
