//! The command line of `cargo xtask` (here rather than in the binary, so that a test can check
//! that every `cargo xtask …` the documents name exists).
use crate::sass::Precision;
use crate::DEFAULT_ARCH;
use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};
use kernels_gpu::gemm::Dtype;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "Developer commands of the Rust GEMM course"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Cmd,
}

#[derive(Subcommand)]
pub enum Cmd {
    /// Compile kernels-gpu to PTX with rustc's nvptx64 backend: `target/ptx/<arch>/kernels_gpu.ptx`
    BuildPtx {
        /// GPU architecture (sm_80, sm_86, sm_89, sm_90, …)
        #[arg(long, default_value = DEFAULT_ARCH)]
        arch: String,
    },
    /// Build the course as an HTML book into target/book/ (mdBook; installed from PyPI into
    /// .tools/mdbook the first time), generated from the sources and docs/results/
    Book,
    /// Write README.md's results tables from docs/results/ (the numbered experiments'
    /// results.json); with --check, only say whether they are current
    Readme {
        /// Change nothing; fail if the README's tables differ from docs/results/
        #[arg(long)]
        check: bool,
    },
    /// Install ptxas and nvdisasm from PyPI into .tools/cuda (no CUDA installation needed)
    InstallCudaTools,
    /// Build the PTX and print ptxas's resource report (registers, shared memory, spills) per kernel
    Ptxas {
        /// Architecture to compile the PTX for with ptxas
        #[arg(long, default_value = DEFAULT_ARCH)]
        arch: String,
    },
    /// Compile with ptxas, disassemble with nvdisasm, and count the instructions of a variant's
    /// hot loop (FMA share, shared/global loads by width, barriers, local memory)
    Sass(SassArgs),
    /// Build what the GPU machine runs into .gpu/: the release `host` (the sm_80 and sm_90 PTX
    /// embedded), the GPU test binaries, the PTX files and xtask/scripts/gpu-session.sh; then say
    /// how to run it
    GpuBundle {
        /// The bundle folder, emptied first (relative to the workspace root)
        #[arg(long, default_value = ".gpu")]
        out: PathBuf,
        /// Also bundle the dev-profile host as `host-dev`, for gpu-session.sh's `dev-vs-release`
        #[arg(long)]
        dev_host: bool,
    },
}

#[derive(Args)]
#[command(group(ArgGroup::new("what").required(true).args(["variant", "all"])))]
pub struct SassArgs {
    /// The variant to read (`cargo run -p host -- --list` lists them)
    #[arg(long)]
    pub variant: Option<String>,
    /// One row per registered variant (at its default tile) instead of one variant in detail
    #[arg(long)]
    pub all: bool,
    /// Architecture to build the PTX and the cubin for [default: the variant's build: sm_90, or
    /// sm_90a for the Hopper (`wgmma-…`) variants; with --all, sm_90, and sm_90a lists those]
    #[arg(long)]
    pub arch: Option<String>,
    /// Element type of the entry point
    #[arg(long, value_enum, default_value = "f32")]
    pub dtype: DtypeArg,
    /// Tile width, for variants that take one (default: the registry's default)
    #[arg(long, conflicts_with = "all")]
    pub tile: Option<u32>,
    /// Also list every loop of the function, not only the hot one
    #[arg(long, conflicts_with = "all")]
    pub all_loops: bool,
    /// Also print the hot loop's SASS
    #[arg(long, conflicts_with = "all")]
    pub listing: bool,
    /// Print JSON instead of Markdown
    #[arg(long)]
    pub json: bool,
    /// With --all: also write the table, with the tool versions and notes, as a Markdown page
    #[arg(long, requires = "all")]
    pub markdown_page: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum DtypeArg {
    F32,
    F64,
    Bf16,
    F16,
    /// FP8 (the chapter 4 kernels; their loops are found by their `QGMMA`)
    E4m3,
}

impl DtypeArg {
    pub fn dtype(self) -> Dtype {
        match self {
            DtypeArg::F32 => Dtype::F32,
            DtypeArg::F64 => Dtype::F64,
            DtypeArg::Bf16 => Dtype::Bf16,
            DtypeArg::F16 => Dtype::F16,
            DtypeArg::E4m3 => Dtype::E4m3,
        }
    }

    /// The precision of the FMAs a kernel of this type would use on the CUDA cores (the 16-bit
    /// kernels accumulate in f32; their loops are found by their `HGMMA` anyway).
    pub fn precision(self) -> Precision {
        match self {
            DtypeArg::F32 | DtypeArg::Bf16 | DtypeArg::F16 | DtypeArg::E4m3 => Precision::F32,
            DtypeArg::F64 => Precision::F64,
        }
    }
}
