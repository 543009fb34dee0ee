//! GEMM across GPUs: one linear layer sharded over P ranks (tensor parallelism), the
//! communication through NCCL, and the project's own kernels on each rank.
//!
//! - [`schedule`]: the sharding and each rank's steps (GEMMs on a compute stream, NCCL
//!   collectives or copy-engine pulls on a comm stream, the waits between them), for the two forms
//!   (all-gather → GEMM, GEMM → reduce-scatter) and the overlaps (none, chunked, ring, copy). Pure
//!   data, replayed symbolically by its tests. Its header is the lesson and the measurements.
//! - [`data`]: the inputs, a function of each element's position so that every rank makes its
//!   own shards, and the sampled check of each rank's result against the f64 reference.
//! - [`local`]: the ranks as threads on the CPU emulator (no GPU, no NCCL): what CI runs.
//! - [`nccl`] (feature `nccl`): one process per GPU, NCCL loaded at run time through cudarc,
//!   the schedule on two streams with CUDA events, the timings, and a watchdog so that a failed
//!   rank ends every rank with a typed error instead of a hang.
//!
//! The processes are started by whoever runs the job: `host --gpus N --parallel …` starts one
//! per local GPU and passes them NCCL's unique id. Across hosts the same rank program runs
//! wherever NCCL's network transport reaches (a launcher such as `mpirun` or `srun` starts
//! `host rank` on each host with the id, the rank and the count; NCCL then needs its socket or
//! InfiniBand interface, `NCCL_SOCKET_IFNAME` / `NCCL_IB_HCA`).
pub mod data;
pub mod local;
#[cfg(feature = "nccl")]
pub mod nccl;
pub mod planted;
pub mod schedule;

pub use schedule::{Form, Layer, Overlap, Schedule, Sharding, ShardingError};

use crate::api::GemmError;

/// Why a tensor-parallel run failed; every variant names the rank where it happened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParallelError {
    /// The layer does not shard as asked.
    #[error(transparent)]
    Sharding(#[from] ShardingError),
    /// A rank's GEMM was refused or failed.
    #[error("rank {rank}: {source}")]
    Gemm {
        /// The rank.
        rank: u32,
        /// The library's error.
        source: GemmError,
    },
    /// NCCL reported an error (at a call, or asynchronously while the streams ran).
    #[error("rank {rank}: NCCL failed in {call}: {cause}")]
    Nccl {
        /// The rank.
        rank: u32,
        /// The call (`ncclCommInitRank`, `ncclGroupEnd`, the asynchronous error query).
        call: &'static str,
        /// NCCL's result code and its meaning.
        cause: String,
    },
    /// A CUDA call of the rank failed (allocation, copy, event).
    #[error("rank {rank}: {what}: {cause}")]
    Cuda {
        /// The rank.
        rank: u32,
        /// What it was doing.
        what: String,
        /// The driver's error.
        cause: String,
    },
    /// The rank's streams did not finish in time: a peer is gone or stuck. Its communicator was
    /// aborted.
    #[error("rank {rank}: no progress for {seconds} s while {waiting_for}; a peer rank is gone or stuck (its communicator was aborted)")]
    Timeout {
        /// The rank.
        rank: u32,
        /// The watchdog's limit.
        seconds: u64,
        /// What it waited for.
        waiting_for: String,
    },
    /// A failure planted on purpose (`host --fail-rank`), to test that every rank stops.
    #[error("rank {rank}: planted failure ({at})")]
    Planted {
        /// The rank.
        rank: u32,
        /// Where it was planted.
        at: &'static str,
    },
    /// A rank's result failed the check against the f64 reference.
    #[error("rank {rank}: {detail}")]
    WrongResult {
        /// The rank.
        rank: u32,
        /// The first failing element.
        detail: String,
    },
    /// NCCL's library cannot be opened on this machine.
    #[error("no NCCL: {0}; tensor parallelism needs NCCL 2 (libnccl.so.2, e.g. Debian's libnccl2 or the nvidia-nccl wheel's lib folder on LD_LIBRARY_PATH)")]
    NoNccl(String),
    /// A rank's process failed or was stopped (the launcher's view).
    #[error("rank {rank} failed: {cause}")]
    RankFailed {
        /// The rank.
        rank: u32,
        /// Its own message, or how it ended.
        cause: String,
    },
}
