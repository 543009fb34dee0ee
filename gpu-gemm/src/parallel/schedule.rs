//! Tensor parallelism: what each rank does, in what order, and what waits for what. The
//! sharding of one linear layer over P ranks and the schedule of its GEMMs and data movement,
//! as pure data: the GPU runs it on two streams with NCCL, CUDA IPC and events
//! ([`super::nccl`]), the emulator runs it step by step on threads ([`super::local`]), and the
//! tests replay it symbolically without either.
//!
//! **The layer** is `Y[T×N] = X[T×K]·W[N×K]ᵀ` (tokens T, in features K, out features N), which
//! the project's column-major GEMM computes as C (N×T) from A = W stored K×N (`transa = t`) and
//! B = X stored K×T. Every rank's GEMM has the same form: A its weight shard (k_local × m_local),
//! B k_local × T, C m_local × T. A range of tokens is a range of B's and C's columns, contiguous
//! in memory, so a chunk of tokens is a pointer offset: nothing is copied to cut a GEMM.
//! - **All-gather → GEMM** (column-parallel): X's tokens and W's out features are sharded. Each
//!   rank gathers all of X into B and computes its N/P out features for every token.
//! - **GEMM → reduce-scatter** (row-parallel): K is sharded. Each rank's product is a partial Y of
//!   every token (C); the partials are summed and scattered by tokens (D = N × T/P).
//!
//! **The overlaps**, each a lesson measured on 2 × H200 (`host experiment parallel`, page
//! `007-parallel`):
//! - [`Overlap::None`]: NCCL, then the GEMM (or the GEMM, then NCCL), as a framework runs them.
//!   It is the yardstick of the others, and at T = 2048 still the fastest schedule: 0.36 ms for
//!   the all-gather layer N = 10240, against one GPU's 0.44.
//! - [`Overlap::Chunked`]: the shards cut into chunks laid out chunk by chunk (chunk q of every
//!   rank adjacent), so that each chunk moves in one `ncclAllGather` or `ncclReduceScatter`
//!   (a group of P broadcasts took 0.18 ms for what one all-gather moves in 0.13). All-gather
//!   multiplies its own shard while the others arrive; reduce-scatter sends chunk q while the
//!   GEMMs compute chunk q + 1. What it showed: NCCL's kernels need multiprocessors, which a
//!   persistent GEMM holds until its last tile. Started first, NCCL's blocks delay the GEMM's
//!   last ones; started second, they wait for it. Holding 8 multiprocessors back for NCCL
//!   (`--comm-sms 8`, `NCCL_MAX_CTAS=8`) lets both run, but slows the all-gather by 40%
//!   (0.13 ms against 0.09) and leaves the GEMMs 124 multiprocessors of 132.
//! - [`Overlap::Ring`]: reduce-scatter as a ring whose additions the GEMMs make (β = 1 on the
//!   partial sum the previous rank sent): no reduction kernel. Slower than it should be: the
//!   16-bit kernels' epilogue reads C element by element when β ≠ 0, and a GEMM with β = 1 took
//!   0.26 ms where β = 0 took 0.19.
//! - [`Overlap::Copy`]: no NCCL kernel at all beside the GEMMs. Each rank pulls the chunks it needs
//!   from its peers' memory with the copy engines (`cuMemcpyDtoDAsync` on memory opened through
//!   CUDA IPC); where the data is written during the run, the pull first waits for a flag the
//!   peer's stream sets after the GEMM that wrote it (`cuStreamWriteValue32` after,
//!   `cuStreamWaitValue32` before: the flag holds the run's number, so it is never reset). A
//!   16 MB chunk crosses NVLink in 0.05 ms and the GEMM beside it keeps every multiprocessor:
//!   92–94% of the communication hidden at T = 8192, N = 10240, scaling efficiency 0.96–0.97
//!   (two runs).
//! - [`Overlap::CopyFirst`]: the same pulls, then one GEMM over all the tokens, without overlap:
//!   the fastest all-gather schedule at T = 2048 (0.332 ms for N = 10240, sequential 0.361),
//!   because it does not cut the GEMM.
//!
//! **What limits it** at T = 2048 (efficiency 0.60–0.89): not the communication, which the copy
//! engines hide, but the GEMM cut in two. Two GEMMs of 1024 tokens took 0.18 ms each where one of
//! 2048 took 0.27: 160 tiles of 256×128 make 1.2 waves on 132 multiprocessors, and the second
//! wave runs almost empty, twice. The next step is one GEMM over all the tokens whose producer
//! waits for each chunk's flag before loading it (Flux's design), so that the GEMM is never cut.
//! On 4 GPUs (4 × H200) every schedule is further from its ceiling: efficiency 0.61 geomean, the
//! book's chapter sets the measurement beside the prediction.
use std::fmt;
use std::ops::Range;

/// Which tensor-parallel form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Form {
    /// X's tokens sharded and gathered before the GEMM; W split by out features (N).
    #[cfg_attr(feature = "clap", value(name = "allgather"))]
    AllGather,
    /// W and X split by in features (K); the partial products reduced and scattered by tokens.
    #[cfg_attr(feature = "clap", value(name = "reducescatter"))]
    ReduceScatter,
}

impl Form {
    /// As the command line spells it.
    pub const fn name(self) -> &'static str {
        match self {
            Form::AllGather => "allgather",
            Form::ReduceScatter => "reducescatter",
        }
    }
}

/// How the communication meets the GEMM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Overlap {
    /// The collective and the GEMM one after the other.
    None,
    /// The token shards in chunks: the GEMM of one chunk while NCCL moves another.
    Chunked,
    /// Reduce-scatter as a ring whose additions the GEMMs make: each rank adds its product to
    /// the partial sum the previous rank sent (β = 1) and sends it on, chunk by chunk.
    Ring,
    /// The data moved by the copy engines instead of NCCL's kernels: each rank pulls the
    /// chunks it needs from its peers' memory (CUDA IPC), waiting where needed for a flag the
    /// peer sets when the chunk is written. All-gather pulls the others' X chunks while the
    /// GEMM multiplies the ones there; reduce-scatter is the ring, each step pulling the
    /// previous rank's partial sum and adding to it with the GEMM (β = 1).
    Copy,
    /// All-gather only: the copy engines bring every other rank's shard first, then one GEMM
    /// multiplies all the tokens. Nothing overlaps; for layers where cutting the GEMM costs more
    /// than the transfer (a chunk's GEMM runs a second, nearly empty wave of tiles).
    CopyFirst,
}

impl Overlap {
    /// As the command line spells it.
    pub const fn name(self) -> &'static str {
        match self {
            Overlap::None => "none",
            Overlap::Chunked => "chunked",
            Overlap::Ring => "ring",
            Overlap::Copy => "copy",
            Overlap::CopyFirst => "copy-first",
        }
    }
}

/// The linear layer `Y[T×N] = X[T×K]·W[N×K]ᵀ`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layer {
    /// T: rows of X and Y.
    pub tokens: u32,
    /// N: rows of W, columns of Y.
    pub out_features: u32,
    /// K: columns of X and W.
    pub in_features: u32,
}

impl Layer {
    /// Floating-point operations of the whole layer: 2·T·N·K.
    pub fn flops(&self) -> f64 {
        2.0 * self.tokens as f64 * self.out_features as f64 * self.in_features as f64
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "T={} N={} K={}",
            self.tokens, self.out_features, self.in_features
        )
    }
}

/// Why a layer cannot be sharded as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardingError {
    /// A dimension the form splits is not a multiple of the ranks.
    #[error("{form} over {ranks} ranks splits {what} ({value}) into equal shards: it must be a multiple of {ranks}{hint}", form = .form.name())]
    Indivisible {
        /// The form.
        form: Form,
        /// What is split: `tokens (T)`, `out features (N)`, `in features (K)`.
        what: &'static str,
        /// Its value.
        value: u32,
        /// The ranks.
        ranks: u32,
        /// What the kernels further need, if anything.
        hint: &'static str,
    },
    /// No ranks, or a rank outside them.
    #[error("rank {rank} of {ranks}: ranks are numbered 0..{ranks} and there is at least one")]
    BadRank {
        /// The rank asked for.
        rank: u32,
        /// The number of ranks.
        ranks: u32,
    },
    /// The ring is a reduce-scatter schedule.
    #[error("--overlap ring is reduce-scatter's (its additions made by the GEMMs); all-gather overlaps with `chunked`")]
    NoRing,
    /// Copy-first is an all-gather schedule.
    #[error("--overlap copy-first is all-gather's (the shards brought first, one GEMM after); reduce-scatter's product must be summed after the GEMM")]
    NoCopyFirst,
    /// More chunks than a shard has tokens, or none.
    #[error("{chunks} chunks of a shard of {tokens} tokens: give between 1 and {tokens}")]
    BadChunks {
        /// The chunks asked for.
        chunks: u32,
        /// Tokens in one rank's shard.
        tokens: u32,
    },
}

/// One rank's part of the layer: which rows and columns of X, W and Y it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sharding {
    /// The form.
    pub form: Form,
    /// The whole layer.
    pub layer: Layer,
    /// P.
    pub ranks: u32,
    /// This rank.
    pub rank: u32,
}

/// The four buffers of a rank, in the element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Buffer {
    /// The weight shard: A, k_local × m_local.
    A,
    /// X as this rank multiplies it: B, k_local × T (all-gather: gathered here in place).
    B,
    /// The GEMM's output: C, m_local × T (reduce-scatter: the partial product).
    C,
    /// Reduce-scatter's result: N × T/P, the summed Y of this rank's tokens.
    D,
}

impl Sharding {
    /// Rank `rank` of `ranks` in `form`, or why the layer does not split so. The kernels'
    /// TMA needs 16-byte rows, so every split dimension must also stay a multiple of 8 elements.
    pub fn new(form: Form, layer: Layer, ranks: u32, rank: u32) -> Result<Self, ShardingError> {
        if ranks == 0 || rank >= ranks {
            return Err(ShardingError::BadRank { rank, ranks });
        }
        let split = |what, value: u32, hint| {
            if !value.is_multiple_of(ranks) {
                Err(ShardingError::Indivisible {
                    form,
                    what,
                    value,
                    ranks,
                    hint,
                })
            } else {
                Ok(())
            }
        };
        split("tokens (T)", layer.tokens, "")?;
        match form {
            Form::AllGather => split("out features (N)", layer.out_features, "")?,
            Form::ReduceScatter => {
                split("in features (K)", layer.in_features, "")?;
                if !(layer.in_features / ranks).is_multiple_of(8) {
                    return Err(ShardingError::Indivisible {
                        form,
                        what: "in features (K)",
                        value: layer.in_features,
                        ranks: ranks * 8,
                        hint: " (each shard's rows of W and X are 16-byte TMA rows: K/P a multiple of 8)",
                    });
                }
            }
        }
        Ok(Self {
            form,
            layer,
            ranks,
            rank,
        })
    }

    /// The same layer and form on another rank.
    pub fn on_rank(self, rank: u32) -> Self {
        Self { rank, ..self }
    }

    /// Tokens in each rank's shard: T/P.
    pub fn shard_tokens(&self) -> u32 {
        self.layer.tokens / self.ranks
    }

    /// The tokens of rank `owner`'s shard.
    pub fn shard(&self, owner: u32) -> Range<u32> {
        let t = self.shard_tokens();
        owner * t..(owner + 1) * t
    }

    /// Out features this rank computes: rows of its A's stored columns, of C.
    pub fn m_local(&self) -> u32 {
        match self.form {
            Form::AllGather => self.layer.out_features / self.ranks,
            Form::ReduceScatter => self.layer.out_features,
        }
    }

    /// In features this rank sums over: the GEMM's k.
    pub fn k_local(&self) -> u32 {
        match self.form {
            Form::AllGather => self.layer.in_features,
            Form::ReduceScatter => self.layer.in_features / self.ranks,
        }
    }

    /// The out features (rows of W) this rank holds.
    pub fn weight_rows(&self) -> Range<u32> {
        let m = self.m_local();
        match self.form {
            Form::AllGather => self.rank * m..(self.rank + 1) * m,
            Form::ReduceScatter => 0..m,
        }
    }

    /// The in features (columns of W and X) this rank holds.
    pub fn features(&self) -> Range<u32> {
        let k = self.k_local();
        match self.form {
            Form::AllGather => 0..k,
            Form::ReduceScatter => self.rank * k..(self.rank + 1) * k,
        }
    }

    /// The tokens (rows of X) this rank holds before any communication: its shard (all-gather)
    /// or all of them (reduce-scatter).
    pub fn input_tokens(&self) -> Range<u32> {
        match self.form {
            Form::AllGather => self.shard(self.rank),
            Form::ReduceScatter => 0..self.layer.tokens,
        }
    }

    /// Where the rank's result is, and which part of Y it is: (buffer, out features, tokens).
    /// The buffer is column-major with one column per token.
    pub fn result(&self) -> (Buffer, Range<u32>, Range<u32>) {
        match self.form {
            Form::AllGather => (Buffer::C, self.weight_rows(), 0..self.layer.tokens),
            Form::ReduceScatter => (Buffer::D, 0..self.layer.out_features, self.shard(self.rank)),
        }
    }

    /// Elements of each buffer.
    pub fn len(&self, buffer: Buffer) -> usize {
        let (m, k, t) = (
            self.m_local() as usize,
            self.k_local() as usize,
            self.layer.tokens as usize,
        );
        match buffer {
            Buffer::A => k * m,
            Buffer::B => k * t,
            Buffer::C => m * t,
            Buffer::D => match self.form {
                Form::AllGather => 0,
                Form::ReduceScatter => m * self.shard_tokens() as usize,
            },
        }
    }
}

/// A GEMM over a range of tokens: `out[:, tokens] = A·B[:, tokens] (+ out[:, tokens])`
/// (k_local, m_local of the sharding).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GemmStep {
    /// The tokens: columns of B, and of the output.
    pub tokens: Range<u32>,
    /// B's first element for these tokens (all-gather's B holds them in chunk order).
    pub b_offset: usize,
    /// Where the product goes: C, or (the ring's last step) D.
    pub out: Buffer,
    /// The output's first element.
    pub out_offset: usize,
    /// β = 1: the product is added to what the output holds (the ring's partial sums).
    pub accumulate: bool,
}

/// One NCCL collective, on element offsets of the rank's buffers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Collective {
    /// `ncclAllGather` in place: rank r's `per_rank` elements at `offset + r·per_rank` of
    /// `buffer`, every rank's after the call.
    AllGather {
        /// Gathered into.
        buffer: Buffer,
        /// First element of rank 0's piece.
        offset: usize,
        /// Elements each rank contributes.
        per_rank: usize,
    },
    /// `ncclReduceScatter`: `send` holds P pieces of `per_rank` elements from `send_offset`;
    /// rank r receives the sum of every rank's piece r at `recv_offset` of `recv`.
    ReduceScatter {
        /// The partials.
        send: Buffer,
        /// First element of piece 0.
        send_offset: usize,
        /// The rank's sum.
        recv: Buffer,
        /// Where the sum goes.
        recv_offset: usize,
        /// Elements each rank receives.
        per_rank: usize,
    },
    /// `ncclSend` (in a group with the matching `Recv` of the peer): `count` elements at
    /// `offset` of `buffer` to rank `peer`.
    Send {
        /// The receiving rank.
        peer: u32,
        /// Sent from.
        buffer: Buffer,
        /// First element.
        offset: usize,
        /// Elements.
        count: usize,
    },
    /// `ncclRecv`: `count` elements from rank `peer` into `buffer` at `offset`.
    Recv {
        /// The sending rank.
        peer: u32,
        /// Received into.
        buffer: Buffer,
        /// First element.
        offset: usize,
        /// Elements.
        count: usize,
    },
}

/// A copy from a peer's memory into this rank's, by the copy engines (a peer-to-peer
/// `cuMemcpyDtoDAsync` through CUDA IPC): no multiprocessor involved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pull {
    /// The rank whose memory is read.
    pub peer: u32,
    /// The peer's buffer.
    pub from: Buffer,
    /// Its first element.
    pub from_offset: usize,
    /// This rank's buffer.
    pub to: Buffer,
    /// Its first element.
    pub to_offset: usize,
    /// Elements.
    pub count: usize,
    /// The peer's flag that says the data is there (this run's number or more), if the data
    /// is written during the run; `None` for data that was there before it started.
    pub ready: Option<usize>,
}

/// What a step does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// A GEMM, on the compute stream.
    Gemm(GemmStep),
    /// Collectives issued together (one `ncclGroupStart`/`ncclGroupEnd`), on the comm stream.
    Collectives(Vec<Collective>),
    /// A copy from a peer, on the comm stream (after waiting for the peer's flag).
    Pull(Pull),
    /// Sets this rank's flag to the run's number, on the compute stream once the work before it
    /// is done (and its writes visible to the peers: the write is fenced).
    Signal(usize),
}

/// The two streams of a rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lane {
    /// The GEMMs.
    Compute,
    /// The collectives.
    Comm,
}

/// One step: what it does and the steps of the other lane it waits for (steps of its own lane
/// run in order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// What it does.
    pub op: Op,
    /// Indices of earlier steps on the other lane that must finish first.
    pub after: Vec<usize>,
}

impl Step {
    /// The stream it runs on.
    pub fn lane(&self) -> Lane {
        match self.op {
            Op::Gemm(_) | Op::Signal(_) => Lane::Compute,
            Op::Collectives(_) | Op::Pull(_) => Lane::Comm,
        }
    }
}

/// A rank's steps in an order that respects every dependency (so that running them one by one
/// in this order, as the emulator does, is correct), and what they make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// The rank.
    pub sharding: Sharding,
    /// How it overlaps.
    pub overlap: Overlap,
    /// Token chunks per shard ([`Overlap::Chunked`]; 1 otherwise).
    pub chunks: u32,
    /// The steps, in issue order.
    pub steps: Vec<Step>,
    /// Where the rank's own input goes in B before the steps run: each token range of its
    /// shard and the element offset of its first token.
    pub input: Vec<(Range<u32>, usize)>,
}

/// Chunk q of every rank's shard, in chunk order: the layout in which each chunk's pieces are
/// adjacent (chunk q of rank 0, of rank 1, …), so that one all-gather or reduce-scatter moves a
/// whole chunk. With one chunk it is the tokens' own order.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Piece {
    owner: u32,
    q: u32,
    tokens: Range<u32>,
    /// Tokens before this piece in chunk order.
    position: usize,
}

fn pieces(s: &Sharding, chunks: u32) -> Vec<Piece> {
    let mut position = 0;
    let mut all = Vec::new();
    for q in 0..chunks {
        for owner in 0..s.ranks {
            let tokens = chunk(s.shard(owner), q, chunks);
            let len = (tokens.end - tokens.start) as usize;
            all.push(Piece {
                owner,
                q,
                tokens,
                position,
            });
            position += len;
        }
    }
    all
}

/// The tokens of chunk `q` of `shard` cut into `chunks` nearly equal pieces.
fn chunk(shard: Range<u32>, q: u32, chunks: u32) -> Range<u32> {
    let len = shard.end - shard.start;
    let at = |i: u32| shard.start + (len as u64 * i as u64 / chunks as u64) as u32;
    at(q)..at(q + 1)
}

impl Schedule {
    /// The schedule of `sharding`'s rank with `overlap` (`chunks` pieces per token shard).
    pub fn new(sharding: Sharding, overlap: Overlap, chunks: u32) -> Result<Self, ShardingError> {
        let chunks = match overlap {
            Overlap::None | Overlap::CopyFirst => 1,
            Overlap::Chunked | Overlap::Ring | Overlap::Copy => chunks,
        };
        let shard_tokens = sharding.shard_tokens();
        if chunks == 0 || chunks > shard_tokens {
            return Err(ShardingError::BadChunks {
                chunks,
                tokens: shard_tokens,
            });
        }
        let s = sharding;
        let (k, m) = (s.k_local() as usize, s.m_local() as usize);
        let mut steps: Vec<Step> = Vec::new();
        let mut push = |op, after| {
            steps.push(Step { op, after });
            steps.len() - 1
        };
        // A GEMM of `tokens` read from B at `b_at` (in tokens), written to C at `c_at`.
        let gemm = |tokens: Range<u32>, b_at: usize, c_at: usize| {
            Op::Gemm(GemmStep {
                tokens,
                b_offset: b_at * k,
                out: Buffer::C,
                out_offset: c_at * m,
                accumulate: false,
            })
        };
        let layout = pieces(&s, chunks);
        let all = 0..s.layer.tokens;
        let natural = vec![(all.clone(), 0)];
        let input = match (s.form, overlap) {
            (Form::AllGather, Overlap::Copy | Overlap::CopyFirst) => {
                vec![(s.shard(s.rank), s.shard(s.rank).start as usize * k)]
            }
            (Form::AllGather, _) => layout
                .iter()
                .filter(|p| p.owner == s.rank)
                .map(|p| (p.tokens.clone(), p.position * k))
                .collect(),
            (Form::ReduceScatter, _) => natural,
        };
        // The pieces of chunk q, and where the chunk starts in chunk order.
        let group = |q: u32| -> (Vec<&Piece>, usize) {
            let of_q: Vec<&Piece> = layout.iter().filter(|p| p.q == q).collect();
            let start = of_q[0].position;
            (of_q, start)
        };
        match (s.form, overlap) {
            (Form::AllGather, Overlap::None) => {
                let gathered = push(
                    Op::Collectives(vec![Collective::AllGather {
                        buffer: Buffer::B,
                        offset: 0,
                        per_rank: k * shard_tokens as usize,
                    }]),
                    vec![],
                );
                push(gemm(all.clone(), 0, 0), vec![gathered]);
            }
            (Form::ReduceScatter, Overlap::None) => {
                let product = push(gemm(all.clone(), 0, 0), vec![]);
                push(
                    Op::Collectives(vec![Collective::ReduceScatter {
                        send: Buffer::C,
                        send_offset: 0,
                        recv: Buffer::D,
                        recv_offset: 0,
                        per_rank: m * shard_tokens as usize,
                    }]),
                    vec![product],
                );
            }
            (Form::AllGather, Overlap::Chunked) => {
                // The own shard first: it needs nothing from the others.
                for p in layout.iter().filter(|p| p.owner == s.rank) {
                    push(
                        gemm(p.tokens.clone(), p.position, p.tokens.start as usize),
                        vec![],
                    );
                }
                for q in 0..chunks {
                    let (of_q, start) = group(q);
                    let len = (of_q[0].tokens.end - of_q[0].tokens.start) as usize;
                    let gathered = push(
                        Op::Collectives(vec![Collective::AllGather {
                            buffer: Buffer::B,
                            offset: start * k,
                            per_rank: len * k,
                        }]),
                        vec![],
                    );
                    for p in of_q.into_iter().filter(|p| p.owner != s.rank) {
                        let op = gemm(p.tokens.clone(), p.position, p.tokens.start as usize);
                        push(op, vec![gathered]);
                    }
                }
            }
            (Form::ReduceScatter, Overlap::Chunked) => {
                // C holds the partial products in chunk order: chunk q's pieces adjacent, one
                // reduce-scatter each, while the GEMMs go on to chunk q + 1.
                for q in 0..chunks {
                    let (of_q, start) = group(q);
                    let len = (of_q[0].tokens.end - of_q[0].tokens.start) as usize;
                    let own = of_q[s.rank as usize].tokens.start - s.shard(s.rank).start;
                    let products = of_q
                        .iter()
                        .map(|p| {
                            push(
                                gemm(p.tokens.clone(), p.tokens.start as usize, p.position),
                                vec![],
                            )
                        })
                        .collect();
                    push(
                        Op::Collectives(vec![Collective::ReduceScatter {
                            send: Buffer::C,
                            send_offset: start * m,
                            recv: Buffer::D,
                            recv_offset: own as usize * m,
                            per_rank: len * m,
                        }]),
                        products,
                    );
                }
            }
            (Form::AllGather, Overlap::Ring) => {
                return Err(ShardingError::NoRing);
            }
            (Form::AllGather, Overlap::CopyFirst) => {
                let mut pulled = Vec::new();
                for step in 1..s.ranks {
                    let owner = (s.rank + step) % s.ranks;
                    let tokens = s.shard(owner);
                    let at = tokens.start as usize * k;
                    pulled.push(push(
                        Op::Pull(Pull {
                            peer: owner,
                            from: Buffer::B,
                            from_offset: at,
                            to: Buffer::B,
                            to_offset: at,
                            count: (tokens.end - tokens.start) as usize * k,
                            ready: None,
                        }),
                        vec![],
                    ));
                }
                push(gemm(all.clone(), 0, 0), pulled);
            }
            (Form::ReduceScatter, Overlap::CopyFirst) => {
                return Err(ShardingError::NoCopyFirst);
            }
            // ANCHOR: copy_schedule
            (Form::AllGather, Overlap::Copy) => {
                // B in the tokens' own order. The own shard first; then chunk by chunk, each
                // other rank's piece pulled from where it lies in that rank's B (its input,
                // there before the run) and multiplied as soon as it is here.
                let own = s.shard(s.rank);
                push(
                    gemm(own.clone(), own.start as usize, own.start as usize),
                    vec![],
                );
                for q in 0..chunks {
                    for step in 1..s.ranks {
                        let owner = (s.rank + step) % s.ranks;
                        let tokens = chunk(s.shard(owner), q, chunks);
                        let at = tokens.start as usize;
                        let pulled = push(
                            Op::Pull(Pull {
                                peer: owner,
                                from: Buffer::B,
                                from_offset: at * k,
                                to: Buffer::B,
                                to_offset: at * k,
                                count: (tokens.end - tokens.start) as usize * k,
                                ready: None,
                            }),
                            vec![],
                        );
                        push(gemm(tokens, at, at), vec![pulled]);
                    }
                }
            }
            (Form::ReduceScatter, Overlap::Copy) => {
                // The ring of `Ring`, the previous rank's partial sum pulled instead of sent:
                // step t's chunk q waits for that rank's flag t − 1, q.
                let p = s.ranks;
                let block = |t: u32| (s.rank + 2 * p - t - 1) % p;
                let previous = (s.rank + p - 1) % p;
                let flag = |t: u32, q: u32| (t * chunks + q) as usize;
                for t in 0..p {
                    for q in 0..chunks {
                        let tokens = chunk(s.shard(block(t)), q, chunks);
                        let count = (tokens.end - tokens.start) as usize * m;
                        let natural = tokens.start as usize * m;
                        let (out, out_offset) = if t == p - 1 {
                            let first = tokens.start - s.shard(s.rank).start;
                            (Buffer::D, first as usize * m)
                        } else {
                            (Buffer::C, natural)
                        };
                        let after = if t == 0 {
                            vec![]
                        } else {
                            vec![push(
                                Op::Pull(Pull {
                                    peer: previous,
                                    from: Buffer::C,
                                    from_offset: natural,
                                    to: out,
                                    to_offset: out_offset,
                                    count,
                                    ready: Some(flag(t - 1, q)),
                                }),
                                vec![],
                            )]
                        };
                        push(
                            Op::Gemm(GemmStep {
                                b_offset: tokens.start as usize * k,
                                tokens,
                                out,
                                out_offset,
                                accumulate: t > 0,
                            }),
                            after,
                        );
                        if t + 1 < p {
                            push(Op::Signal(flag(t, q)), vec![]);
                        }
                    }
                }
            }
            // ANCHOR_END: copy_schedule
            (Form::ReduceScatter, Overlap::Ring) => {
                // Step t of P: this rank adds its product for the block of rank (r − t − 1) mod P
                // to the partial sum rank r − 1 sent (none at t = 0) and sends it to rank r + 1;
                // at the last step the block is its own, and the sum is final (in D).
                let p = s.ranks;
                let block = |t: u32| (s.rank + 2 * p - t - 1) % p;
                let (next, previous) = ((s.rank + 1) % p, (s.rank + p - 1) % p);
                // Where the partial sum of chunk q of step t lives on this rank.
                let place = |t: u32, q: u32| {
                    let tokens = chunk(s.shard(block(t)), q, chunks);
                    if t == p - 1 {
                        let first = tokens.start - s.shard(s.rank).start;
                        (tokens, Buffer::D, first as usize * m)
                    } else {
                        let first = tokens.start as usize * m;
                        (tokens, Buffer::C, first)
                    }
                };
                // `received[q]`: the group that brought step t's partial of chunk q.
                let mut received: Vec<Option<usize>> = vec![None; chunks as usize];
                for t in 0..p {
                    for q in 0..chunks {
                        let (tokens, out, out_offset) = place(t, q);
                        let count = (tokens.end - tokens.start) as usize * m;
                        let product = push(
                            Op::Gemm(GemmStep {
                                b_offset: tokens.start as usize * k,
                                tokens,
                                out,
                                out_offset,
                                accumulate: t > 0,
                            }),
                            received[q as usize].into_iter().collect(),
                        );
                        if t + 1 < p {
                            // Send this partial on; receive the next step's from the previous rank.
                            let (_, into, into_offset) = place(t + 1, q);
                            let group = vec![
                                Collective::Send {
                                    peer: next,
                                    buffer: out,
                                    offset: out_offset,
                                    count,
                                },
                                Collective::Recv {
                                    peer: previous,
                                    buffer: into,
                                    offset: into_offset,
                                    count,
                                },
                            ];
                            received[q as usize] =
                                Some(push(Op::Collectives(group), vec![product]));
                        }
                    }
                }
            }
        }
        Ok(Self {
            sharding,
            overlap,
            chunks,
            steps,
            input,
        })
    }

    /// The GEMM steps alone (the rank's compute without its communication).
    pub fn gemms_only(&self) -> Self {
        self.filtered(Lane::Compute)
    }

    /// The collective steps alone (the communication without the compute).
    pub fn collectives_only(&self) -> Self {
        self.filtered(Lane::Comm)
    }

    fn filtered(&self, lane: Lane) -> Self {
        let steps = self
            .steps
            .iter()
            .filter(|s| s.lane() == lane)
            .map(|s| Step {
                op: s.op.clone(),
                after: vec![],
            })
            .collect();
        Self {
            steps,
            ..self.clone()
        }
    }

    /// The last step of each lane, if any: what the end of a run waits for.
    pub fn last_of(&self, lane: Lane) -> Option<usize> {
        self.steps.iter().rposition(|s| s.lane() == lane)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(tokens: u32, out_features: u32, in_features: u32) -> Layer {
        Layer {
            tokens,
            out_features,
            in_features,
        }
    }

    /// Replays every rank's schedule symbolically: each position of B holds a token of X (or
    /// nothing yet); each position of C and D holds a token and the set of ranks whose products
    /// it sums. GEMMs read B's positions (which must hold their tokens) and write or add their
    /// rank; collectives run in lockstep, in the order every rank issues them. At the end every
    /// position of the result must hold its own token and the right sum: the rank's product
    /// (all-gather) or every rank's (reduce-scatter), computed once.
    fn replay(form: Form, l: Layer, ranks: u32, overlap: Overlap, chunks: u32) {
        let schedules: Vec<Schedule> = (0..ranks)
            .map(|r| {
                Schedule::new(Sharding::new(form, l, ranks, r).unwrap(), overlap, chunks).unwrap()
            })
            .collect();
        replay_schedules(schedules);
    }

    /// A token and the ranks whose products it sums.
    type Sum = Option<(u32, Vec<u32>)>;

    #[derive(Clone)]
    struct State {
        b: Vec<Option<u32>>,
        c: Vec<Sum>,
        d: Vec<Sum>,
    }

    impl State {
        fn out(&mut self, buffer: Buffer) -> &mut Vec<Sum> {
            match buffer {
                Buffer::C => &mut self.c,
                Buffer::D => &mut self.d,
                other => panic!("{other:?} is not an output"),
            }
        }

        fn sums(&self, buffer: Buffer) -> &Vec<Sum> {
            match buffer {
                Buffer::C => &self.c,
                Buffer::D => &self.d,
                other => panic!("{other:?} holds no sums"),
            }
        }
    }

    #[allow(clippy::needless_range_loop)] // ranks index several per-rank tables at once
    fn replay_schedules(schedules: Vec<Schedule>) {
        let sh = schedules[0].sharding;
        let ranks = sh.ranks as usize;
        for s in &schedules {
            for (i, step) in s.steps.iter().enumerate() {
                for &d in &step.after {
                    assert!(d < i, "step {i} waits for a later step {d}");
                    assert_ne!(s.steps[d].lane(), step.lane(), "a wait within one lane");
                }
            }
        }
        let groups = |s: &Schedule| -> Vec<Vec<Collective>> {
            s.steps
                .iter()
                .filter_map(|st| match &st.op {
                    Op::Collectives(c) => Some(c.clone()),
                    _ => None,
                })
                .collect()
        };
        // NCCL's rule: the same collectives in the same order on every rank (point-to-point
        // groups differ by peer, so only their count is compared).
        let n_groups = groups(&schedules[0]).len();
        for s in &schedules[1..] {
            assert_eq!(groups(s).len(), n_groups);
        }
        let (k, m) = (sh.k_local() as usize, sh.m_local() as usize);
        let t = sh.layer.tokens as usize;
        let shard = sh.shard_tokens() as usize;
        let mut state: Vec<State> = schedules
            .iter()
            .map(|s| {
                let mut b = vec![None; t];
                for (tokens, offset) in &s.input {
                    assert_eq!(offset % k, 0);
                    assert!(s.sharding.input_tokens().start <= tokens.start);
                    assert!(tokens.end <= s.sharding.input_tokens().end);
                    for (i, token) in tokens.clone().enumerate() {
                        b[offset / k + i] = Some(token);
                    }
                }
                State {
                    b,
                    c: vec![None; t],
                    d: vec![None; shard],
                }
            })
            .collect();
        let mut flags: Vec<Vec<usize>> = vec![Vec::new(); ranks];
        let mut next = vec![0usize; ranks];
        let mut round = 0;
        loop {
            let mut progressed = false;
            // Each rank runs as far as it can, in rank order: a pull runs as early as its wait
            // allows, before later ranks' GEMMs, so that a missing wait shows.
            for r in 0..ranks {
                while let Some(step) = schedules[r].steps.get(next[r]) {
                    match &step.op {
                        Op::Gemm(g) => {
                            let st = &mut state[r];
                            assert_eq!((g.b_offset % k, g.out_offset % m), (0, 0));
                            for (i, token) in g.tokens.clone().enumerate() {
                                assert_eq!(
                                    st.b[g.b_offset / k + i],
                                    Some(token),
                                    "rank {r} multiplies token {token} before it arrived"
                                );
                                let slot = &mut st.out(g.out)[g.out_offset / m + i];
                                match (g.accumulate, slot.as_mut()) {
                                    (false, None) => *slot = Some((token, vec![r as u32])),
                                    (false, Some(_)) => {
                                        panic!("rank {r} computes token {token} twice")
                                    }
                                    (true, Some((held, sum))) => {
                                        assert_eq!(
                                            *held, token,
                                            "rank {r} adds token {token} to {held}'s sum"
                                        );
                                        assert!(
                                            !sum.contains(&(r as u32)),
                                            "rank {r} adds its product twice"
                                        );
                                        sum.push(r as u32);
                                    }
                                    (true, None) => panic!(
                                        "rank {r} adds to token {token}'s sum before it arrived"
                                    ),
                                }
                            }
                        }
                        Op::Signal(flag) => flags[r].push(*flag),
                        Op::Pull(p) => {
                            let peer = p.peer as usize;
                            if p.ready.is_some_and(|f| !flags[peer].contains(&f)) {
                                break;
                            }
                            match p.from {
                                Buffer::B => {
                                    assert_eq!(
                                        (p.from_offset % k, p.to_offset % k, p.count % k),
                                        (0, 0, 0)
                                    );
                                    for i in 0..p.count / k {
                                        let token = state[peer].b[p.from_offset / k + i];
                                        assert!(
                                            token.is_some(),
                                            "rank {r} pulls a piece of B rank {peer} lacks"
                                        );
                                        state[r].b[p.to_offset / k + i] = token;
                                    }
                                }
                                from => {
                                    for i in 0..p.count / m {
                                        let sum =
                                            state[peer].sums(from)[p.from_offset / m + i].clone();
                                        assert!(
                                            sum.is_some(),
                                            "rank {r} pulls a partial rank {peer} has not computed"
                                        );
                                        state[r].out(p.to)[p.to_offset / m + i] = sum;
                                    }
                                }
                            }
                        }
                        Op::Collectives(_) => break,
                    }
                    next[r] += 1;
                    progressed = true;
                }
            }
            let at_group = |r: usize| {
                matches!(
                    schedules[r].steps.get(next[r]).map(|s| &s.op),
                    Some(Op::Collectives(_))
                )
            };
            if (0..ranks).all(at_group) {
                let all: Vec<Vec<Collective>> =
                    schedules.iter().map(|s| groups(s)[round].clone()).collect();
                round += 1;
                let before = state.clone();
                for (r, group) in all.iter().enumerate() {
                    for c in group {
                        match *c {
                            Collective::AllGather {
                                offset, per_rank, ..
                            } => {
                                assert_eq!((offset % k, per_rank % k), (0, 0));
                                for p in 0..ranks {
                                    for i in 0..per_rank / k {
                                        let at = offset / k + p * per_rank / k + i;
                                        let token = before[p].b[at];
                                        assert!(
                                            token.is_some(),
                                            "rank {p} sends a piece of B it lacks"
                                        );
                                        state[r].b[at] = token;
                                    }
                                }
                            }
                            Collective::ReduceScatter {
                                send,
                                send_offset,
                                recv,
                                recv_offset,
                                per_rank,
                            } => {
                                for i in 0..per_rank / m {
                                    let at = send_offset / m + r * per_rank / m + i;
                                    let mut total: Option<(u32, Vec<u32>)> = None;
                                    for p in 0..ranks {
                                        let (token, sum) =
                                            before[p].sums(send)[at].clone().unwrap_or_else(|| {
                                                panic!("rank {p}'s partial not computed")
                                            });
                                        let entry = total.get_or_insert((token, Vec::new()));
                                        assert_eq!(entry.0, token, "ranks sum different tokens");
                                        entry.1.extend(sum);
                                    }
                                    state[r].out(recv)[recv_offset / m + i] = total;
                                }
                            }
                            Collective::Send { .. } => {}
                            Collective::Recv {
                                peer,
                                buffer,
                                offset,
                                count,
                            } => {
                                let matching = all[peer as usize].iter().find_map(|c| match *c {
                                    Collective::Send {
                                        peer: to,
                                        buffer,
                                        offset,
                                        count: n,
                                    } if to as usize == r => Some((buffer, offset, n)),
                                    _ => None,
                                });
                                let (from, from_offset, n) =
                                    matching.expect("a receive without its send");
                                assert_eq!(n, count, "send and receive of different sizes");
                                for i in 0..count / m {
                                    let sum = before[peer as usize].sums(from)[from_offset / m + i]
                                        .clone();
                                    assert!(
                                        sum.is_some(),
                                        "rank {peer} sends a partial it has not computed"
                                    );
                                    state[r].out(buffer)[offset / m + i] = sum;
                                }
                            }
                        }
                    }
                }
                for n in next.iter_mut() {
                    *n += 1; // past the collective step
                }
                progressed = true;
            }
            if (0..ranks).all(|r| next[r] == schedules[r].steps.len()) {
                break;
            }
            assert!(
                progressed,
                "the ranks wait for each other forever (at steps {next:?})"
            );
        }
        assert_eq!(round, n_groups);
        let everyone: Vec<u32> = (0..sh.ranks).collect();
        for r in 0..ranks {
            let (which, _, tokens) = sh.on_rank(r as u32).result();
            for (i, token) in tokens.enumerate() {
                let (held, mut sum) = state[r].sums(which)[i]
                    .clone()
                    .unwrap_or_else(|| panic!("rank {r}: token {token} never written"));
                assert_eq!(
                    held, token,
                    "rank {r}: token {token}'s place holds token {held}, not its owner's"
                );
                sum.sort();
                match sh.form {
                    Form::AllGather => assert_eq!(sum, vec![r as u32], "rank {r} token {token}"),
                    Form::ReduceScatter => assert_eq!(sum, everyone, "rank {r} token {token}"),
                }
            }
        }
    }

    #[test]
    fn every_schedule_computes_every_output_once_from_data_that_has_arrived() {
        for form in [Form::AllGather, Form::ReduceScatter] {
            for ranks in [1, 2, 3, 4, 8] {
                let l = layer(24 * ranks, 16 * ranks, 8 * ranks);
                replay(form, l, ranks, Overlap::None, 1);
                for chunks in [1, 2, 3, 5, 24] {
                    replay(form, l, ranks, Overlap::Chunked, chunks);
                    replay(form, l, ranks, Overlap::Copy, chunks);
                    if form == Form::AllGather {
                        replay(form, l, ranks, Overlap::CopyFirst, 1);
                    }
                    if form == Form::ReduceScatter {
                        replay(form, l, ranks, Overlap::Ring, chunks);
                    }
                }
            }
        }
    }

    /// Replays every rank's schedule of `form` with `bug` planted, and returns the message the
    /// replay stopped with.
    fn replay_with(
        form: Form,
        l: Layer,
        ranks: u32,
        overlap: Overlap,
        bug: fn(&mut Schedule),
    ) -> String {
        let result = std::panic::catch_unwind(|| {
            let s: Vec<Schedule> = (0..ranks)
                .map(|r| {
                    let sh = Sharding::new(form, l, ranks, r).unwrap();
                    let mut s = Schedule::new(sh, overlap, 2).unwrap();
                    bug(&mut s);
                    s
                })
                .collect();
            replay_schedules(s);
        });
        let message = result.expect_err("the planted bug passes the replay");
        message
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default()
    }

    #[test]
    fn a_chunk_reduced_into_the_wrong_place_is_caught_by_the_replay() {
        let l = layer(48, 32, 16);
        let text = replay_with(
            Form::ReduceScatter,
            l,
            2,
            Overlap::Chunked,
            crate::parallel::planted::scattered_chunks_swapped,
        );
        assert!(text.contains("not its owner's"), "{text}");
    }

    #[test]
    fn a_pull_that_does_not_wait_for_its_flag_is_caught_by_the_replay() {
        let l = layer(48, 32, 48);
        let text = replay_with(
            Form::ReduceScatter,
            l,
            3,
            Overlap::Copy,
            crate::parallel::planted::pulls_without_flags,
        );
        assert!(text.contains("has not computed"), "{text}");
    }

    #[test]
    fn a_gather_off_by_eight_tokens_and_a_ring_that_overwrites_are_caught_by_the_replay() {
        let l = layer(96, 32, 48);
        let text = replay_with(Form::AllGather, l, 2, Overlap::Chunked, |s| {
            crate::parallel::planted::gather_shifted(s, 8)
        });
        // The shifted gather sends rows of B the rank does not have yet.
        assert!(text.contains("sends a piece of B it lacks"), "{text}");
        let text = replay_with(
            Form::ReduceScatter,
            l,
            3,
            Overlap::Ring,
            crate::parallel::planted::ring_overwrites,
        );
        assert!(text.contains("computes token"), "{text}");
    }

    #[test]
    fn shardings_that_do_not_divide_are_refused_with_the_dimension_named() {
        let e = Sharding::new(Form::AllGather, layer(30, 64, 64), 4, 0).unwrap_err();
        assert!(e.to_string().contains("tokens (T) (30)"), "{e}");
        let e = Sharding::new(Form::ReduceScatter, layer(32, 64, 36), 2, 0).unwrap_err();
        assert!(e.to_string().contains("K/P a multiple of 8"), "{e}");
        assert!(Sharding::new(Form::AllGather, layer(32, 64, 64), 2, 2).is_err());
        let sh = Sharding::new(Form::AllGather, layer(32, 64, 64), 2, 1).unwrap();
        assert!(Schedule::new(sh, Overlap::Chunked, 17).is_err());
        assert!(Schedule::new(sh, Overlap::Chunked, 0).is_err());
    }
}
