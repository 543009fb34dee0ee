//! The command line of `host`.
use crate::args::{positive_count, positive_size, DtypeArg};
use crate::experiments::Experiment;
use anyhow::{bail, Result};
use clap::{Parser, Subcommand};
use gpu_gemm::fp8::quantize::Scaling;
use gpu_gemm::parallel::{Form, Overlap};
use gpu_gemm::problem::{Batch, GroupLayout, Init, Problem, Transpose, Transposes};
use gpu_gemm::registry::Math;
use gpu_gemm::run::{BackendChoice, Clock};
use kernels_gpu::gemm::Dtype;
use kernels_gpu::registry::Shape;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "host",
    about = "Run one GEMM variant (C = alpha*op(A)*op(B) + beta*C, column-major) on the GPU, the CPU emulator or (the cpu-* variants) the host CPU, verify it against an f64 reference and time it",
    after_help = "Examples:\n  host --list\n  host --variant v4                       # 4096³ f32 on GPU 0\n  host --variant tiled --tile 8 --dtype f64 --init seed\n  host --variant v1 --m 1000 --n 1023 --k 999 --lda 1024\n  host --variant v4 --backend emu --size 67 # on the CPU emulator, no GPU needed\n  host --variant v0,v1,v3,v4 --both-dtypes --compare cublas   # a table\n  host --variant cpu-simd,cpu-blocked:512,cpu-parallel,cpu-ndarray --size 1024   # CPU variants\n  host --variant v4,gemm128 --size 1000 --pitch-compare   # leading dimensions as given and pitched to 512 B\n  host --variant wgmma-16bit --dtype bf16 --compare cublas   # bf16, f32 accumulation (H100/H200)\n  host --variant auto --math fp32-accurate --compare cublas   # auto may choose 3xTF32 (FP32 accuracy)\n  host --variant tuned --math fp32-accurate --size 4096   # time auto's candidates once, then read the tuning cache\n  host experiment 000                     # the 000 tile sweep: tables, CSV, JSON, chart, page\n  host experiment all --out results       # every experiment (`host experiment --help`)\n  host --parallel allgather --gpus 2 --parts   # one layer across 2 GPUs (NCCL): sequential and chunked overlap\n  host --parallel reducescatter --gpus 3 --backend emu --tokens 96 --out-features 96 --in-features 48   # the ranks as threads on the emulator",
    // `host experiment …` has its own options; the run options apply without it.
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The variant to run (see --list), or several separated by commas for a table; `NAME:TILE` sets a tile width
    #[arg(long, required_unless_present_any = ["list", "parallel"])]
    pub variant: Option<String>,
    /// Also run these yardsticks (`cublas`, `cublas-tf32`, `cublas-grouped`, separated by
    /// commas) and print each time as a ratio to each; in e4m3 `cublas` is cuBLASLt, and
    /// `cublas-fast-accum` cuBLASLt with CUBLASLT_MATMUL_DESC_FAST_ACCUM (FP8 sums never
    /// promoted to f32, as wgmma-fp8), with --batch per tensor its strided batched matmul; with
    /// --groups (and an e4m3 --batch with block scales) `cublas` is a call per group and
    /// `cublas-grouped` cublasGemmGroupedBatchedEx
    #[arg(long, value_delimiter = ',', value_parser = ["cublas", "cublas-tf32", "cublas-grouped", "cublas-fast-accum"])]
    pub compare: Vec<String>,
    /// With several variants, also run each at f32 and f64 ("both"; not the 16-bit types,
    /// which only the 16-bit kernels and cuBLAS have: give `--dtype bf16` or `f16` instead)
    #[arg(long)]
    pub both_dtypes: bool,
    /// List the variants with a one-line description, then exit
    #[arg(long)]
    pub list: bool,
    /// m = n = k = SIZE [default: 4096 on the GPU, 64 on the emulator, 512 when only cpu-* variants run]
    #[arg(long, value_parser = positive_size)]
    pub size: Option<u32>,
    /// Rows of A and C (overrides --size)
    #[arg(long, value_parser = positive_size)]
    pub m: Option<u32>,
    /// Columns of B and C (overrides --size)
    #[arg(long, value_parser = positive_size)]
    pub n: Option<u32>,
    /// Columns of A, rows of B (overrides --size)
    #[arg(long, value_parser = positive_size)]
    pub k: Option<u32>,
    /// op(A) in C = alpha*op(A)*op(B) + beta*C: n, A (stored m×k), or t, Aᵀ (A stored k×m); cublas computes every combination, the kernels n,n unless --list says more
    #[arg(long, value_enum, default_value_t = Transpose::No, ignore_case = true, hide_possible_values = true)]
    pub transa: Transpose,
    /// op(B): n, B (stored k×n), or t, Bᵀ (B stored n×k)
    #[arg(long, value_enum, default_value_t = Transpose::No, ignore_case = true, hide_possible_values = true)]
    pub transb: Transpose,
    /// Leading dimension of A [default: its rows as stored: m, or k with --transa t]
    #[arg(long)]
    pub lda: Option<u32>,
    /// Leading dimension of B [default: its rows as stored: k, or n with --transb t]
    #[arg(long)]
    pub ldb: Option<u32>,
    /// Leading dimension of C [default: m]
    #[arg(long)]
    pub ldc: Option<u32>,
    /// Pad every leading dimension so that each column starts at a multiple of BYTES (the
    /// layout of cudaMallocPitch, 002); BYTES is a multiple of 8, 512 when omitted
    #[arg(long, value_name = "BYTES", num_args = 0..=1, default_missing_value = "512",
          value_parser = parse_pitch, conflicts_with_all = ["lda", "ldb", "ldc"])]
    pub pitch: Option<u32>,
    /// Run every variant twice, with the leading dimensions unpadded and pitched (to --pitch
    /// BYTES, or 512), and report both
    #[arg(long, conflicts_with_all = ["lda", "ldb", "ldc"])]
    pub pitch_compare: bool,
    /// Element type
    #[arg(long, value_enum, default_value_t = DtypeArg::F32)]
    pub dtype: DtypeArg,
    /// e4m3: how A and B are quantised, one scale per tensor or per block (auto then chooses
    /// wgmma-fp8 or wgmma-fp8-block)
    #[arg(long, value_enum, default_value_t = Scaling::PerTensor)]
    pub scaling: Scaling,
    /// e4m3: make every 97th row of op(A) 1000× larger (the outliers of activations)
    #[arg(long)]
    pub outliers: bool,
    /// A fused epilogue, C = act(alpha·op(A)·op(B) + beta·C + bias), in bf16, f16 and (one
    /// problem) e4m3 with its bf16 D: at most one bias (`bias`: one per row of C, cuBLASLt's;
    /// `bias-col`: one per column) and one activation (`relu`, `gelu` in its tanh form,
    /// `silu`), e.g. `bias,gelu`; and `amax`: D's largest |element| and the scale 448/amax that
    /// maps D onto e4m3 for the next layer, checked against C. `--variant cublas` is then
    /// cuBLASLt's epilogue (in 16 bits, without the amax; in e4m3 the plain FP8 matmul),
    /// `--variant unfused` auto's GEMM and a separate kernel (16 bits)
    #[arg(long, value_parser = gpu_gemm::problem::parse_epilogue)]
    pub epilogue: Option<gpu_gemm::problem::Epilogue>,
    /// A strided batch of COUNT problems of these sizes in one launch (cuBLAS's
    /// cublasGemmStridedBatchedEx): member i of A, B and C lies i·stride elements after member
    /// 0's, by default right after the one before. bf16, f16 and f32 (wgmma-tf32,
    /// wgmma-3xtf32) on the Hopper kernels (`auto` chooses for the batch as a whole), f32 and f64
    /// on gemm128, best and tc-f64 (a layer of the grid per member, at most 65 535), e4m3 (and
    /// e4m3-e5m2) on wgmma-fp8-block with --scaling block, wgmma-fp8:6 per tensor (the grouped
    /// walk: the masked layout whose every count is n; the members packed, each with its own
    /// scales; cublas is cuBLASLt per member with block scales, its strided batched matmul per
    /// tensor, the members then sharing one scale), and cublas; the check
    /// compares the first four members and the last with the f64 reference (e4m3: every member)
    #[arg(long, value_name = "COUNT", value_parser = positive_size)]
    pub batch: Option<u32>,
    /// The batch strides of A, B and C, in elements (`A,B,C`), each at least one member's matrix
    /// (ld × columns as stored) [default: the members packed]
    #[arg(long, value_name = "A,B,C", requires = "batch", value_parser = parse_strides,
          conflicts_with_all = ["pitch", "pitch_compare"])]
    pub batch_strides: Option<Strides>,
    /// A grouped GEMM of G groups in one launch, as a mixture-of-experts layer runs its experts
    /// (DeepGEMM's layouts): each group multiplies its own A (an expert's weights, m × k) by its
    /// own columns of B (its tokens). Contiguous by default: the groups' --group-m columns one
    /// after another in one B and one C (n = G·M, M a multiple of 128); with --masked, a batch
    /// of G members of M columns each, of which group g computes only its first count(g),
    /// the counts drawn from the seed between M/2 and M and read by the kernel on the device.
    /// bf16 and f16 on wgmma-layouts:2 and :3, wgmma-16bit, wgmma-tma-store:5, wgmma-swap:432,
    /// :464, :532 and :564 (T,N: a decode step's few tokens per expert), auto, and cublas (a
    /// call per group, the yardstick); e4m3 with --scaling block on wgmma-fp8-block (but :4 and
    /// :7), auto, and cublas (cuBLASLt per group; a masked count is then a multiple of 16);
    /// every group checked against its f64 reference, and every column no group owns must be
    /// left as it was
    #[arg(long, value_name = "G", value_parser = positive_size, requires = "group_m",
          conflicts_with_all = ["batch", "n", "pitch", "pitch_compare"])]
    pub groups: Option<u32>,
    /// Columns of B and C per group (a group's tokens; the masked layout's capacity)
    #[arg(long, value_name = "M", value_parser = positive_size, requires = "groups")]
    pub group_m: Option<u32>,
    /// The masked layout (decoding under CUDA graphs) instead of the contiguous one
    #[arg(long, requires = "groups")]
    pub masked: bool,
    /// The precision contract of `--variant auto` and `--variant tuned`: what arithmetic they
    /// may choose in f32 (f64, bf16 and f16 always run in their own) [default: strict]
    #[arg(long, value_enum)]
    pub math: Option<Math>,
    /// The file where `--variant tuned` keeps its winners [default: $GPU_GEMM_TUNING_CACHE, else
    /// $XDG_CACHE_HOME/gpu-gemm/tuning.csv, else ~/.cache/gpu-gemm/tuning.csv]
    #[arg(long, value_name = "PATH")]
    pub tuning_cache: Option<PathBuf>,
    /// How A, B and C are filled
    #[arg(long, value_enum, default_value_t = Init::Random)]
    pub init: Init,
    /// Seed of the random inputs [default: drawn from the clock, and printed]
    #[arg(long)]
    pub seed: Option<u64>,
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub alpha: f64,
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub beta: f64,
    /// Timed runs, at least 1; without --iters, timing on the GPU or of only cpu-* variants stops early after 3 s (at least 3 runs, and the report says so) [default: 20 on the GPU and for only cpu-* variants, 1 on the emulator]
    #[arg(long, value_parser = positive_count)]
    pub iters: Option<usize>,
    /// Untimed runs before timing [default: 3 on the GPU, 1 for only cpu-* variants, 0 on the emulator]
    #[arg(long)]
    pub warmup: Option<usize>,
    /// Skip the check against the f64 reference
    #[arg(long)]
    pub no_check: bool,
    /// GPU runs only: time on cold caches. Before each run the GPU writes 256 MiB over a scratch buffer (L2 then holds none of the operands, as DeepGEMM's and Triton's benchmarks flush it), and the run's launch waits in the stream meanwhile, so the times leave out the host's launch latency (a few µs: most of the difference at decode sizes; --clock kernels also leaves out the stream's gaps around the kernels). Without it each run is launched after the last one finished, on warm caches
    #[arg(long)]
    pub cold: bool,
    /// GPU runs only: what a run's time is read from. `events`: CUDA events on the stream around the run, which hold the kernels and the stream's gaps around them. `kernels`: the kernels' own start and end stamps, from CUPTI, the profiler's clock (torch.profiler's, and so DeepGEMM's published figures'), a few µs less than the events at any size; it needs libcupti (CUDA's extras/CUPTI/lib64) on LD_LIBRARY_PATH. DeepGEMM's protocol is `--cold --clock kernels`
    #[arg(long, value_enum, default_value_t = Clock::Events)]
    pub clock: Clock,
    /// Tile width (or block size, or the CPU variants' blockL) of a parameterised variant
    #[arg(long)]
    pub tile: Option<u32>,
    /// Where to run the GPU variants [default: gpu when a CUDA driver and device exist, else emu]; cpu-* variants always run on the host CPU
    #[arg(long, value_enum)]
    pub backend: Option<BackendChoice>,
    /// Load this PTX instead of the embedded one (from `cargo xtask build-ptx --arch …`)
    #[arg(long)]
    pub ptx: Option<PathBuf>,
    #[command(flatten)]
    pub parallel: ParallelOptions,
}

/// `--parallel`: one linear layer `Y[T×N] = X[T×K]·W[N×K]ᵀ` across GPUs (tensor parallelism,
/// NCCL), in bf16 or f16.
#[derive(clap::Args, Debug, Clone)]
#[command(next_help_heading = "Tensor parallelism (--parallel)")]
pub struct ParallelOptions {
    /// Run one linear layer across --gpus GPUs of this host: `allgather` (X's tokens sharded and
    /// gathered, W split by out features) or `reducescatter` (W and X split by in features, the
    /// partial products reduced and scattered by tokens); with --backend emu the ranks are
    /// threads on the emulator. In bf16, or f16 with --dtype f16 (--dtype f32, the default of
    /// single runs, means bf16 here; f64 and e4m3 are refused)
    #[arg(long, value_enum, conflicts_with_all = ["variant", "list"])]
    pub parallel: Option<Form>,
    /// Ranks, one per GPU (devices 0..N)
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64), requires = "parallel")]
    pub gpus: u32,
    /// The overlaps to time, each checked: none (the collective, then the GEMM), chunked (the
    /// GEMM of one chunk of tokens while NCCL moves another), ring (reduce-scatter only: each
    /// rank's GEMM adds its product to the partial sum the previous rank sent, β = 1, and sends
    /// it on), copy (the data moved by the copy engines from the peers' memory, CUDA IPC, each
    /// chunk's readiness a flag the stream waits on: no NCCL kernel beside the GEMMs),
    /// copy-first (allgather only: the copy engines bring the shards, then one GEMM)
    /// [default: none,chunked,copy, with copy-first for allgather and ring for reducescatter]
    #[arg(long, value_enum, value_delimiter = ',', requires = "parallel")]
    pub overlap: Vec<Overlap>,
    /// Token chunks per rank's shard (--overlap chunked); several separated by commas time one
    /// chunked run each
    #[arg(long, value_delimiter = ',', default_value = "1,2,4", value_parser = clap::value_parser!(u32).range(1..), requires = "parallel")]
    pub chunks: Vec<u32>,
    /// T: tokens, rows of X and Y
    #[arg(long, default_value_t = 8192, value_parser = positive_size, requires = "parallel")]
    pub tokens: u32,
    /// N: out features, rows of W
    #[arg(long, default_value_t = 28672, value_parser = positive_size, requires = "parallel")]
    pub out_features: u32,
    /// K: in features, columns of X and W
    #[arg(long, default_value_t = 8192, value_parser = positive_size, requires = "parallel")]
    pub in_features: u32,
    /// Multiprocessors the GEMMs leave to NCCL when it runs beside them (chunked, ring: their
    /// persistent grids shrink by as many), and NCCL's cap on blocks (NCCL_MAX_CTAS, for every
    /// collective of the run); 0 leaves all to the GEMMs and NCCL uncapped
    #[arg(long, default_value_t = 0, requires = "parallel")]
    pub comm_sms: u32,
    /// Seconds a rank waits for its streams before it aborts its communicator and fails
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..), requires = "parallel")]
    pub watchdog: u64,
    /// Make this rank fail before it joins the communicator (to see every rank stop)
    #[arg(long, requires = "parallel")]
    pub fail_rank: Option<u32>,
    /// Also time each rank's GEMMs alone, the collectives alone, and the whole layer on GPU 0
    /// alone (the scaling efficiency's yardstick)
    #[arg(long, requires = "parallel")]
    pub parts: bool,
    /// Every GEMM by `auto`'s choice; by default `tuned`: each distinct GEMM of a run (a chunk's,
    /// the whole layer's) times auto's candidates once on the rank's buffers and keeps the
    /// fastest
    #[arg(long, requires = "parallel")]
    pub untuned: bool,
    /// Also write the run and every rank's report to this JSON file (`host experiment
    /// parallel --runs DIR` makes the page of a folder of them)
    #[arg(long, value_name = "FILE", requires = "parallel")]
    pub json: Option<PathBuf>,
}

impl Cli {
    /// The tensor-parallel run `--parallel` describes, if given.
    pub fn parallel_run(&self, seed: u64) -> Option<Result<crate::parallel::ParallelRun>> {
        let o = &self.parallel;
        let form = o.parallel?;
        Some((|| {
            let dtype = match self.dtype {
                DtypeArg::Bf16 => "bf16",
                DtypeArg::F16 => "f16",
                DtypeArg::F32 => "bf16", // the default --dtype: tensor parallelism runs in bf16
                other => bail!(
                    "--parallel runs bf16 or f16 (the types frameworks shard layers in), not {}",
                    other.dtype().name()
                ),
            };
            if let Some(r) = o.fail_rank.filter(|&r| r >= o.gpus) {
                bail!("--fail-rank {r}: the ranks are 0..{}", o.gpus);
            }
            Ok(crate::parallel::ParallelRun {
                form,
                layer: gpu_gemm::parallel::Layer {
                    tokens: o.tokens,
                    out_features: o.out_features,
                    in_features: o.in_features,
                },
                gpus: o.gpus,
                overlaps: if o.overlap.is_empty() {
                    match form {
                        Form::AllGather => vec![
                            Overlap::None,
                            Overlap::Chunked,
                            Overlap::Copy,
                            Overlap::CopyFirst,
                        ],
                        Form::ReduceScatter => {
                            vec![
                                Overlap::None,
                                Overlap::Chunked,
                                Overlap::Ring,
                                Overlap::Copy,
                            ]
                        }
                    }
                } else {
                    o.overlap.clone()
                },
                chunks: o.chunks.clone(),
                parts: o.parts,
                whole: o.parts,
                dtype,
                warmup: self.warmup.unwrap_or(3),
                iters: self.iters.unwrap_or(20),
                seed,
                comm_sms: o.comm_sms,
                watchdog: std::time::Duration::from_secs(o.watchdog),
                fail_rank: o.fail_rank,
                untuned: o.untuned,
            })
        })())
    }

    /// The problem the options describe; `default_size` applies when no size is given.
    pub fn problem(&self, default_size: u32, seed: u64) -> Result<Problem> {
        let size = self.size.unwrap_or(default_size);
        // A grouped problem's n is its groups' columns: all of them (contiguous) or one
        // member's room (masked).
        let n = match (self.groups, self.group_m) {
            (Some(groups), Some(m)) if !self.masked => groups
                .checked_mul(m)
                .ok_or_else(|| anyhow::anyhow!("--groups {groups} × --group-m {m} overflows n"))?,
            (Some(_), Some(m)) => m,
            _ => self.n.unwrap_or(size),
        };
        let (m, k) = (self.m.unwrap_or(size), self.k.unwrap_or(size));
        let mut p = Problem {
            shape: Shape {
                m,
                n,
                k,
                lda: 0,
                ldb: 0,
                ldc: self.ldc.unwrap_or(m),
            },
            transposes: Transposes::new(self.transa, self.transb),
            dtype: self.dtype.dtype(),
            alpha: self.alpha,
            beta: self.beta,
            init: self.init,
            seed,
            epilogue: self.epilogue.unwrap_or_default(),
            batch: Batch::ONE,
            groups: GroupLayout::None,
        };
        if !p.epilogue.is_none() && !p.dtype.is_16bit() && !p.dtype.is_fp8() {
            bail!("--epilogue is fused into the 16-bit and FP8 kernels: give --dtype bf16, f16 or e4m3");
        }
        if !p.epilogue.is_none()
            && p.dtype.is_fp8()
            && (self.batch.is_some() || self.groups.is_some())
        {
            bail!("--epilogue in e4m3 runs on one problem: no --batch or --groups");
        }
        if p.dtype.is_fp8() && self.batch.is_some() && self.batch_strides.is_some() {
            bail!(
                "--batch in FP8 runs its members packed (no --batch-strides): the grouped walk of {}, a batch being the masked layout whose every count is n (the library's Gemm::run_fp8 takes any strides)",
                gpu_gemm::fp8::run::grouped_fp8_kernels()
            );
        }
        if p.dtype == Dtype::E4m3E5m2
            && (self.groups.is_some() || self.scaling != Scaling::PerTensor)
        {
            bail!(
                "--dtype e4m3-e5m2 runs one problem with one scale per tensor ({}): no --groups, no --scaling block",
                gpu_gemm::fp8::run::e5m2_kernels()
            );
        }
        if !p.dtype.is_16bit() && self.groups.is_some() {
            if p.dtype != Dtype::E4m3 {
                bail!("--groups runs bf16, f16 and e4m3 (with --scaling block)");
            }
            if self.scaling != Scaling::Block {
                bail!("--groups in e4m3 runs with block scales: give --scaling block");
            }
        }
        if p.dtype.is_fp8() {
            if p.transposes != Transposes::new(Transpose::Yes, Transpose::No) {
                bail!("e4m3 is computed as cuBLASLt computes it on Hopper, op(A) = Aᵀ and op(B) = B, both read along k (FP8 wgmma has no transposed operands): give --transa t (and no --transb t)");
            }
        } else if self.scaling != Scaling::PerTensor || self.outliers {
            bail!("--scaling and --outliers describe FP8 data: give --dtype e4m3 (or e4m3-e5m2)");
        }
        // By default A and B are packed: their leading dimension is their rows as stored.
        p.shape.lda = self.lda.unwrap_or(p.stored_a().0);
        p.shape.ldb = self.ldb.unwrap_or(p.stored_b().0);
        if let Some(count) = self.batch {
            p.batch = match self.batch_strides {
                Some(Strides([stride_a, stride_b, stride_c])) => Batch {
                    count,
                    stride_a,
                    stride_b,
                    stride_c,
                },
                None => p.packed_strides(count),
            };
        }
        if let Some(groups) = self.groups {
            let m = self.group_m.unwrap_or(0);
            if !self.masked && !m.is_multiple_of(kernels_gpu::gemm::GROUP_COLUMNS) {
                bail!("--group-m {m}: a contiguous group's columns are whole runs of {} (DeepGEMM pads each expert's tokens so); give a multiple, or --masked", kernels_gpu::gemm::GROUP_COLUMNS);
            }
            if self.masked {
                p.groups = GroupLayout::Masked;
                p.batch = p.packed_strides(groups);
            } else {
                p.groups = GroupLayout::Contiguous;
                p.batch = Batch {
                    stride_b: 0,
                    stride_c: 0,
                    ..p.packed_strides(groups)
                };
            }
        }
        p.validate()?;
        Ok(p)
    }

    /// The leading-dimension layouts a run covers, each as the pitch in bytes to pad the
    /// columns to; `None` is the leading dimensions as given (`--lda` etc., by default the row
    /// counts). `--pitch` gives the pitched layout only, `--pitch-compare` both, the unpadded
    /// one first.
    pub fn layouts(&self) -> Vec<Option<u32>> {
        if self.pitch_compare {
            vec![None, Some(self.pitch.unwrap_or(DEFAULT_PITCH_BYTES))]
        } else {
            vec![self.pitch]
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Regenerate an experiment of the source documents: markdown tables, CSV, JSON, an SVG chart and a results page
    #[command(subcommand)]
    Experiment(Experiment),
    /// One rank of a tensor-parallel run, on its GPU: what `--parallel` starts once per GPU,
    /// and what a multi-host launcher (mpirun, srun) would start on every host with the same id
    #[command(hide = true)]
    Rank(RankArgs),
}

/// `host rank`: one process of a tensor-parallel run.
#[derive(clap::Args, Debug, Clone)]
pub struct RankArgs {
    /// NCCL's unique id, 256 hex digits (made by the launcher)
    #[arg(long)]
    pub id: String,
    #[arg(long)]
    pub rank: u32,
    #[arg(long)]
    pub ranks: u32,
    /// The CUDA device [default: the rank]
    #[arg(long)]
    pub device: Option<u32>,
    #[arg(long, value_enum)]
    pub parallel: Form,
    #[arg(long)]
    pub tokens: u32,
    #[arg(long)]
    pub out_features: u32,
    #[arg(long)]
    pub in_features: u32,
    #[arg(long, value_enum, value_delimiter = ',')]
    pub overlap: Vec<Overlap>,
    #[arg(long, value_delimiter = ',', default_value = "1")]
    pub chunks: Vec<u32>,
    #[arg(long, value_enum, default_value_t = DtypeArg::Bf16)]
    pub dtype: DtypeArg,
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    #[arg(long, default_value_t = 20)]
    pub iters: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, default_value_t = 0)]
    pub comm_sms: u32,
    #[arg(long, default_value_t = 60)]
    pub watchdog: u64,
    #[arg(long)]
    pub parts: bool,
    #[arg(long)]
    pub whole: bool,
    #[arg(long)]
    pub fail: bool,
    /// `auto` for every GEMM instead of `tuned` (each distinct GEMM's candidates timed once)
    #[arg(long)]
    pub untuned: bool,
}

impl RankArgs {
    /// What this rank runs.
    pub fn plan(&self) -> Result<gpu_gemm::parallel::nccl::RankPlan> {
        use gpu_gemm::{Algorithm, Math};
        if !matches!(self.dtype, DtypeArg::Bf16 | DtypeArg::F16) {
            bail!("a rank runs bf16 or f16");
        }
        Ok(gpu_gemm::parallel::nccl::RankPlan {
            form: self.parallel,
            layer: gpu_gemm::parallel::Layer {
                tokens: self.tokens,
                out_features: self.out_features,
                in_features: self.in_features,
            },
            ranks: self.ranks,
            rank: self.rank,
            device: self.device.unwrap_or(self.rank),
            overlaps: self.overlap.clone(),
            chunks: self.chunks.clone(),
            parts: self.parts,
            whole: self.whole,
            algorithm: if self.untuned {
                Algorithm::Auto(Math::Strict)
            } else {
                Algorithm::Tuned(Math::Strict)
            },
            timing: gpu_gemm::timing::Timing {
                warmup: self.warmup,
                iters: self.iters,
                budget_ms: f64::INFINITY,
                check: true,
                cold: false,
                clock: Clock::Events,
            },
            seed: self.seed,
            comm_sms: self.comm_sms,
            watchdog: std::time::Duration::from_secs(self.watchdog),
            fail: self.fail,
        })
    }
}

/// The pitch of a bare `--pitch` (keep `default_missing_value` in step): the row padding
/// `cudaMallocPitch` was observed to use on Kepler and Maxwell GPUs (NVIDIA developer forum,
/// "Understanding Memory Pitch Alignment"). Not queried on this project's GPUs.
pub const DEFAULT_PITCH_BYTES: u32 = 512;

/// `--pitch BYTES`: a positive multiple of 8, so that f32 and f64 columns both fit it exactly.
/// `--batch-strides`: A's, B's and C's, in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strides(pub [u64; 3]);

fn parse_strides(text: &str) -> Result<Strides, String> {
    let parts: Vec<_> = text.split(',').map(|s| s.trim().parse::<u64>()).collect();
    match parts.as_slice() {
        [Ok(a), Ok(b), Ok(c)] => Ok(Strides([*a, *b, *c])),
        _ => Err(format!(
            "`{text}`: three strides in elements, A's, B's and C's (e.g. 262144,262144,4194304)"
        )),
    }
}

fn parse_pitch(text: &str) -> Result<u32, String> {
    match text.parse::<u32>() {
        Ok(bytes) if bytes > 0 && bytes.is_multiple_of(8) => Ok(bytes),
        _ => Err(format!(
            "`{text}`: the pitch is a number of bytes, a positive multiple of 8 (e.g. 512)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels_gpu::gemm::Dtype;

    fn parse(args: &str) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("host").chain(args.split_whitespace()))
    }

    #[test]
    fn defaults() {
        let c = parse("--variant v4").unwrap();
        assert_eq!(c.variant.as_deref(), Some("v4"));
        assert_eq!(
            (c.dtype, c.init, c.alpha, c.beta),
            (DtypeArg::F32, Init::Random, 1.0, 0.0)
        );
        assert_eq!(
            (c.size, c.iters, c.backend, c.no_check, c.cold, c.clock),
            (None, None, None, false, false, Clock::Events)
        );
    }

    #[test]
    fn all_options() {
        let c = parse(
            "--variant tiled --m 10 --n 20 --k 30 --lda 11 --dtype f64 --init seed --alpha -2 --beta 0.5 \
             --iters 5 --warmup 1 --no-check --cold --clock kernels --tile 8 --backend emu --seed 42",
        )
        .unwrap();
        assert!(c.cold);
        assert_eq!(c.clock, Clock::Kernels);
        assert_eq!(
            (c.m, c.n, c.k, c.lda, c.ldb),
            (Some(10), Some(20), Some(30), Some(11), None)
        );
        assert_eq!(
            (c.dtype, c.init, c.alpha, c.beta),
            (DtypeArg::F64, Init::Seed, -2.0, 0.5)
        );
        assert_eq!(
            (c.iters, c.warmup, c.no_check, c.tile),
            (Some(5), Some(1), true, Some(8))
        );
        assert_eq!((c.backend, c.seed), (Some(BackendChoice::Emu), Some(42)));
    }

    #[test]
    fn the_16_bit_dtypes_are_accepted_for_runs_and_by_the_experiments_that_measure_them() {
        for (name, dtype) in [
            ("f32", Dtype::F32),
            ("f64", Dtype::F64),
            ("bf16", Dtype::Bf16),
            ("f16", Dtype::F16),
        ] {
            let c = parse(&format!("--variant wgmma-16bit --dtype {name}")).unwrap();
            assert_eq!(c.dtype.dtype(), dtype);
            assert_eq!(c.dtype.dtype().name(), name);
        }
        assert!(parse("experiment progression --dtype f64").is_ok());
        assert!(parse("experiment auto --dtype bf16,f16").is_ok());
        assert!(parse("experiment hopper --ladders bf16,3xtf32").is_ok());
        assert!(parse("experiment hopper --ladders f64").is_err());
        for experiment in ["progression", "precision"] {
            for half in ["bf16", "f16"] {
                assert!(
                    parse(&format!("experiment {experiment} --dtype {half}")).is_err(),
                    "{experiment} {half}"
                );
            }
        }
    }

    #[test]
    fn experiments_are_subcommands_with_their_own_options() {
        let c = parse("experiment 000 --backend emu --size 16 --out /tmp/x").unwrap();
        let Some(Command::Experiment(Experiment::TileSweep(a))) = c.command else {
            panic!("{c:?}")
        };
        assert_eq!(
            (a.size, a.common.backend),
            (Some(16), Some(BackendChoice::Emu))
        );
        assert!(matches!(
            parse("experiment progression").unwrap().command,
            Some(Command::Experiment(Experiment::Progression(_)))
        ));
        assert!(parse("experiment 003 --parts gpu-threads,scaling --cpu-time-limit 5").is_ok());
        let c = parse("experiment shapes --suite 1 --cold --clock kernels").unwrap();
        let Some(Command::Experiment(Experiment::Shapes(a))) = c.command else {
            panic!("{c:?}")
        };
        assert_eq!((a.common.cold, a.common.clock), (true, Clock::Kernels));
        assert!(parse("experiment shapes --clock wall").is_err());
        assert!(matches!(
            parse("experiment 005 --shapes 264x136x264")
                .unwrap()
                .command,
            Some(Command::Experiment(Experiment::Hopper(_)))
        ));
        assert!(parse("experiment 006").is_err());
        for refused in [
            "000 --iters 0",
            "000 --size 0",
            "000 --budget-ms 0",
            "002 --sizes 16,0",
            "003 --cpu-time-limit -1",
            "003 --scaling-sizes 0",
            "all --cpu-time-limit 0",
        ] {
            assert!(
                parse(&format!("experiment {refused}")).is_err(),
                "{refused}"
            );
        }
        assert!(
            parse("--variant v4 experiment 000").is_err(),
            "run options and experiments do not mix"
        );
        assert!(parse("--variant v4").unwrap().command.is_none());
    }

    #[test]
    fn shapes_takes_its_dtypes_suites_layouts_and_variants() {
        use crate::experiments::shapes::{LayoutArg, ShapesDtype};
        let c = parse(
            "experiment shapes --dtype tf32 --suite 1,2 --layout nn --variant auto,wgmma-tf32:4 \
             --no-check --iters 5",
        )
        .unwrap();
        let Some(Command::Experiment(Experiment::Shapes(a))) = c.command else {
            panic!("{c:?}")
        };
        assert_eq!((a.dtype, a.layout), (ShapesDtype::Tf32, LayoutArg::Nn));
        assert_eq!(a.suite, [1, 2]);
        assert_eq!(a.variant, ["auto", "wgmma-tf32:4"]);
        assert!(a.no_check);
        assert_eq!(a.common.iters, Some(5));
        let d = parse("experiment shapes").unwrap();
        let Some(Command::Experiment(e @ Experiment::Shapes(_))) = d.command else {
            panic!("{d:?}")
        };
        assert_eq!(e.id(), "shapes-bf16", "bf16, TN, every suite by default");
        for refused in ["--suite 4", "--suite 0", "--dtype f32", "--layout tt"] {
            assert!(
                parse(&format!("experiment shapes {refused}")).is_err(),
                "{refused}"
            );
        }
    }

    #[test]
    fn pitch_takes_an_optional_alignment_and_excludes_explicit_leading_dimensions() {
        let pitch = |args| parse(args).map(|c| (c.pitch, c.pitch_compare));
        assert_eq!(pitch("--variant v4").unwrap(), (None, false));
        assert_eq!(
            pitch("--variant v4 --pitch").unwrap(),
            (Some(DEFAULT_PITCH_BYTES), false)
        );
        assert_eq!(
            pitch("--pitch --variant v4").unwrap(),
            (Some(512), false),
            "a following option is not taken for the value"
        );
        assert_eq!(
            pitch("--variant v4 --pitch 128").unwrap(),
            (Some(128), false)
        );
        assert_eq!(pitch("--variant v4 --pitch=16").unwrap(), (Some(16), false));
        assert_eq!(pitch("--variant v4 --pitch-compare").unwrap(), (None, true));
        assert_eq!(
            pitch("--variant v4 --pitch-compare --pitch 256").unwrap(),
            (Some(256), true)
        );
        for bad in [
            "--pitch 0",
            "--pitch 12",
            "--pitch x",
            "--pitch 512 --lda 1024",
        ] {
            assert!(parse(&format!("--variant v4 {bad}")).is_err(), "{bad}");
        }
        assert!(parse("--variant v4 --pitch-compare --ldc 99").is_err());
    }

    #[test]
    fn math_takes_the_three_contracts() {
        for (name, math) in [
            ("strict", Math::Strict),
            ("fp32-accurate", Math::Fp32Accurate),
            ("tf32", Math::Tf32),
        ] {
            let c = parse(&format!("--variant auto --math {name}")).unwrap();
            assert_eq!(c.math, Some(math));
            assert_eq!(math.name(), name);
        }
        assert_eq!(parse("--variant auto").unwrap().math, None);
        assert!(parse("--variant auto --math fast").is_err());
        assert!(parse("experiment auto --math strict,fp32-accurate,tf32").is_ok());
    }

    #[test]
    fn tuned_takes_a_contract_and_a_cache_file() {
        let c = parse("--variant tuned --math fp32-accurate --tuning-cache /tmp/t.csv").unwrap();
        assert_eq!(c.math, Some(Math::Fp32Accurate));
        assert_eq!(c.tuning_cache, Some(PathBuf::from("/tmp/t.csv")));
        assert_eq!(parse("--variant tuned").unwrap().tuning_cache, None);
        assert!(
            parse("--variant tuned --tuning-cache").is_err(),
            "a path is needed"
        );
    }

    #[test]
    fn list_needs_no_variant_and_bad_values_are_rejected() {
        assert!(parse("--list").unwrap().list);
        assert!(parse("").is_err(), "a variant is required");
        assert!(parse("--variant v4 --dtype f8").is_err());
        assert!(parse("--variant v4 --dtype fp16").is_err());
        assert!(parse("--variant v4 --size -3").is_err());
        for zero in ["--size 0", "--m 0", "--n 0", "--k 0", "--iters 0"] {
            let e = parse(&format!("--variant v4 {zero}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("at least 1"), "{zero}: {e}");
        }
        assert_eq!(parse("--variant v4 --warmup 0").unwrap().warmup, Some(0));
        assert!(parse("--variant v4 --backend tpu").is_err());
    }

    #[test]
    fn problem_sizes_from_the_command_line() {
        let cli = Cli::parse_from([
            "host",
            "--variant",
            "v1",
            "--size",
            "100",
            "--k",
            "7",
            "--ldc",
            "128",
        ]);
        let p = cli.problem(4096, 1).unwrap();
        assert_eq!(
            p.shape,
            Shape {
                m: 100,
                n: 100,
                k: 7,
                lda: 100,
                ldb: 7,
                ldc: 128
            }
        );
        let cli = Cli::parse_from(["host", "--variant", "v1"]);
        assert_eq!(cli.problem(64, 1).unwrap().shape.m, 64);
        let cli = Cli::parse_from(["host", "--variant", "v1", "--m", "10", "--lda", "5"]);
        assert!(cli.problem(64, 1).unwrap_err().to_string().contains("lda"));
    }

    #[test]
    fn transposes_are_n_by_default_and_set_the_stored_leading_dimensions() {
        let c = parse("--variant cublas").unwrap();
        assert_eq!((c.transa, c.transb), (Transpose::No, Transpose::No));
        let c = parse("--variant cublas --transa t --transb n --m 100 --n 30 --k 7").unwrap();
        assert_eq!((c.transa, c.transb), (Transpose::Yes, Transpose::No));
        let p = c.problem(64, 1).unwrap();
        assert_eq!(p.transposes.name(), "TN");
        // A stored k×m, B k×n: packed, lda = k and ldb = k.
        assert_eq!((p.shape.lda, p.shape.ldb, p.shape.ldc), (7, 7, 100));
        let p = parse("--variant cublas --transb t --m 100 --n 30 --k 7")
            .unwrap()
            .problem(64, 1)
            .unwrap();
        assert_eq!((p.shape.lda, p.shape.ldb), (100, 30), "B stored n×k");
        let e = parse("--variant cublas --transa t --m 100 --k 7 --lda 6")
            .unwrap()
            .problem(64, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("lda = 6") && e.contains("stored k×m"), "{e}");
        // BLAS's capitals too.
        assert_eq!(
            parse("--variant cublas --transb T").unwrap().transb,
            Transpose::Yes
        );
        for bad in ["--transa x", "--transb yes", "--transa"] {
            assert!(parse(&format!("--variant cublas {bad}")).is_err(), "{bad}");
        }
    }

    #[test]
    fn pitch_options_choose_the_layouts() {
        let layouts_of = |args: &str| {
            let cli = Cli::parse_from(
                ["host", "--variant", "v4"]
                    .into_iter()
                    .chain(args.split_whitespace()),
            );
            cli.layouts()
        };
        assert_eq!(layouts_of(""), [None]);
        assert_eq!(layouts_of("--pitch"), [Some(512)]);
        assert_eq!(layouts_of("--pitch 64"), [Some(64)]);
        assert_eq!(layouts_of("--pitch-compare"), [None, Some(512)]);
        assert_eq!(layouts_of("--pitch-compare --pitch 128"), [None, Some(128)]);
        let cli = Cli::parse_from(["host", "--variant", "v4", "--m", "100", "--k", "3"]);
        let p = cli.problem(64, 1).unwrap();
        assert_eq!(gpu_gemm::run::with_layout(p, None).unwrap(), p);
        let pitched = gpu_gemm::run::with_layout(p, Some(512)).unwrap().shape;
        assert_eq!((pitched.lda, pitched.ldb, pitched.ldc), (128, 128, 128));
    }
}
