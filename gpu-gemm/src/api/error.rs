//! Why a call was refused or failed: [`GemmError`], one variant per way.
/// Why a call was refused or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GemmError {
    /// No CUDA driver, no device, or no context to run on.
    #[error("no GPU to run on: {0} (`Gemm::emulator()` runs the same kernels on the CPU)")]
    NoGpu(String),
    /// Sizes or leading dimensions that describe no matrix.
    #[error("invalid GEMM: {0}")]
    InvalidConfig(String),
    /// No algorithm of that name.
    #[error("{0}")]
    UnknownAlgorithm(String),
    /// The algorithm exists but cannot compute this GEMM: a type it has no version for, a
    /// transpose, a shape or leading dimension outside its constraints.
    #[error("`{algorithm}` cannot run this GEMM: {reason}")]
    Unsupported {
        /// The algorithm as asked for (`auto (strict)`, `wgmma-16bit:1`, `cublas`).
        algorithm: String,
        /// The constraint it breaks, in the words of the kernel's registry entry.
        reason: String,
    },
    /// The kernel is built for an architecture the device is not.
    #[error("`{kernel}` needs {needs} (Hopper's wgmma: H100, H200); this device is {device}")]
    NeedsArch {
        /// The kernel's entry point.
        kernel: String,
        /// The PTX target it is built for (`sm_90a`).
        needs: &'static str,
        /// The device's name and compute capability.
        device: String,
    },
    /// A buffer shorter than the members of a strided batch span.
    #[error(
        "{operand} holds {len} elements; {count} members {stride} elements apart need {needed}"
    )]
    BatchTooSmall {
        /// `A`, `B` or `C`.
        operand: char,
        /// Elements in the buffer.
        len: usize,
        /// Elements the batch spans: `stride·(count − 1)` and the last member's matrix.
        needed: u64,
        /// Members of the batch.
        count: u32,
        /// The operand's batch stride.
        stride: u64,
    },
    /// A grouped GEMM's table of the wrong length, or a table for a GEMM that is not grouped
    /// (or none for one that is).
    #[error("the group table holds {given}; {needed}")]
    GroupTableMisshaped {
        /// What was given.
        given: String,
        /// What the configuration needs.
        needed: String,
    },
    /// A buffer shorter than its matrix.
    #[error("{operand} holds {len} elements; a {rows}×{cols} matrix with leading dimension {ld} needs {needed}")]
    BufferTooSmall {
        /// `A`, `B` or `C`.
        operand: char,
        /// Elements in the buffer.
        len: usize,
        /// Elements the matrix spans: `ld·(cols − 1) + rows`.
        needed: usize,
        /// The matrix's rows.
        rows: u32,
        /// The matrix's columns.
        cols: u32,
        /// Its leading dimension.
        ld: u32,
    },
    /// A buffer whose address the kernels' vector loads and the TMA engine cannot use.
    #[error("{operand} starts at {address:#x}, not a multiple of {align} bytes, which the kernels' vector loads and TMA need (cudaMalloc and Rust's allocator give at least that)")]
    Misaligned {
        /// `A`, `B` or `C`.
        operand: char,
        /// The buffer's first element.
        address: u64,
        /// The alignment needed, in bytes.
        align: u64,
    },
    /// Host memory given to the GPU, or device memory to the emulator.
    #[error("{operand} is in {found} memory, but this handle runs on {backend}, which needs {needs} memory")]
    WrongMemory {
        /// `A`, `B` or `C`.
        operand: char,
        /// `device` or `host`: where the buffer is.
        found: &'static str,
        /// Where the handle needs it.
        needs: &'static str,
        /// What the handle runs on ([`Gemm::device`](crate::api::Gemm::device)).
        backend: String,
    },
    /// A fused epilogue's bias: missing where the configuration's epilogue adds one, given where
    /// it adds none, or shorter than it needs (m values per row of C, n per column).
    #[error("the epilogue's bias: {given}, where this epilogue needs {needed}")]
    BiasMisshaped {
        /// What was given: `none`, `N values`.
        given: String,
        /// What the epilogue needs: `no bias`, `m = N values (one per row of C)`, ….
        needed: String,
    },
    /// An FP8 operand's scales: fewer than its shape and scaling need.
    #[error("{operand}'s scales are {len} f32, {scaling}; a {scaling} scaling of this shape needs {needed}")]
    ScalesMisshaped {
        /// `A` or `B`.
        operand: char,
        /// Scales in the buffer.
        len: usize,
        /// Scales the shape needs.
        needed: usize,
        /// `per tensor` or `per block`.
        scaling: &'static str,
    },
    /// D's amax asked of a plan whose configuration does not gather it.
    #[error("this plan gathers no amax: its configuration needs GemmConfig::amax")]
    NoAmax,
    /// The driver, a launch, or the emulator failed (the emulator names the faulting thread).
    #[error("{0}")]
    Launch(String),
}
