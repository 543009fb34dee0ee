//! Every GEMM variant of the course, written in Rust for the GPU.
//!
//! The same source is compiled twice:
//! - for `nvptx64-nvidia-cuda` by `cargo xtask build-ptx` (rustc's own NVPTX backend, `no_std`),
//!   giving the PTX module that `host` loads with `cust`;
//! - for the host CPU by a plain `cargo build`, where [`device`] is implemented in software and
//!   [`emu`] runs a grid of GPU threads with real SIMT semantics (the CPU emulator).
//!
//! Layers, from the bottom:
//! - [`device`]: the only module that knows about inline PTX: thread/block indices, the block
//!   barrier, the dynamic shared-memory pool and its typed views, 16-byte and read-only global
//!   loads, warp shuffles. Its `Real` trait gives f32 and f64 one interface (FMA included).
//! - [`gemm`]: the problem every variant solves, `C = alpha*A*B + beta*C`, column-major with
//!   leading dimensions (cuBLAS's convention), and the epilogue every kernel shares; [`fused`]
//!   the bias and activation the 16-bit kernels fuse into it.
//! - [`variants`]: one file per kernel; each file's header says where it comes from, what it
//!   changes and what it measured. [`registry`] lists them (host builds only).
//! - [`entry`]: the table of kernel entry points. On the GPU each row becomes an
//!   `extern "ptx-kernel"` function; on the host the same table feeds the emulator.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_ptx,
        stdarch_nvptx,
        asm_experimental_arch,
        core_intrinsics,
        portable_simd,
        f16
    )
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

pub mod device;
pub mod dtype;
#[cfg(not(target_arch = "nvptx64"))]
pub mod emu;
pub mod entry;
pub mod fused;
pub mod gemm;
// The Hopper GEMM skeleton (built for the GPU in the sm_90a PTX only).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod pipeline;
#[cfg(not(target_arch = "nvptx64"))]
pub mod registry;
pub mod tile_order;
pub mod variants;

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn on_panic(_: &core::panic::PanicInfo) -> ! {
    // A kernel has no way to report; trap so the launch fails with an error the host sees
    // (CUDA_ERROR_ILLEGAL_INSTRUCTION) instead of leaving C half-written.
    unsafe { core::arch::nvptx::trap() }
}
