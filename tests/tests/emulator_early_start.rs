//! The early start (programmatic dependent launch, `kernels_gpu::device::grid`) on the emulator:
//! a kernel whose row lets the GPU start it while the kernel ahead of it finishes runs on the
//! emulator as such a launch every time, and a thread that touches an operand before its own
//! `griddepcontrol.wait` is reported. The skeleton's kernels pass (the emulator suite runs them
//! all so); a planted kernel that reads B first, as a kernel that forgot the wait would, fails.
use gpu_gemm::emulator;
use gpu_gemm::half::bf16;
use gpu_gemm::launch::Launch;
use gpu_gemm::problem::{EmulatedBody, Inputs, Problem, Transpose, Transposes};
use gpu_gemm::registry;
use gpu_gemm::run::plan;
use kernels_gpu::device::half::Bf16;
use kernels_gpu::device::tma::TensorMap;
use kernels_gpu::gemm::{Dtype, HalfGemmArgs};
use kernels_gpu::pipeline;
use kernels_gpu::variants::wgmma_narrow::Sixteen;
use kernels_gpu::variants::wgmma_swap::WgmmaSwap;

/// `wgmma-swap:132` (`gemm_wgmma_swap_tn_w132_bf16`): 32 rows of weights by 64 tokens a tile.
type Swap132 = WgmmaSwap<Sixteen<Bf16>, 16, 64, false>;

/// The real kernel.
///
/// # Safety
/// As `wgmma_swap::gemm`.
unsafe fn as_built(args: HalfGemmArgs<Bf16>, maps: *const TensorMap) {
    unsafe { pipeline::run(Swap132::default(), args, maps) }
}

/// The planted bug: one element of B (the activations, which the kernel ahead writes) read
/// before the skeleton's wait.
///
/// # Safety
/// As `wgmma_swap::gemm`.
unsafe fn reads_b_before_waiting(args: HalfGemmArgs<Bf16>, maps: *const TensorMap) {
    let early = unsafe { args.b.load(0) };
    core::hint::black_box(early);
    unsafe { pipeline::run(Swap132::default(), args, maps) }
}

/// `body` in place of `wgmma-swap:132` at a decode-like T,N shape: the emulator's answer.
fn run(body: unsafe fn(HalfGemmArgs<Bf16>, *const TensorMap)) -> Result<(), String> {
    let (m, n, k) = (96, 24, 128);
    let mut p = Problem {
        transposes: Transposes::new(Transpose::Yes, Transpose::No),
        ..Problem::packed(m, n, k, Dtype::Bf16)
    };
    p.shape.lda = k; // A stored k × m
    let kernel = registry::find("wgmma-swap").unwrap();
    let launch = plan(kernel, Some(132), &p, None).unwrap();
    let Launch::Kernel { tma, .. } = &launch else {
        panic!("wgmma-swap planned as no kernel");
    };
    let early = tma.is_some_and(|t| t.early_start);
    assert!(early, "wgmma-swap's row no longer lets it start early");
    let inputs = Inputs::<bf16>::generate(&p);
    let mut c = inputs.c_for_checked_run(p.beta);
    let body = EmulatedBody::TensorMaps(body);
    emulator::launch_planted(&launch, body, &p, &inputs, (&mut c, &mut [0; 3]))
        .map_err(|e| format!("{e:#}"))
}

#[test]
fn a_kernel_that_reads_its_input_before_waiting_for_the_kernel_ahead_is_reported() {
    run(as_built).expect("the skeleton waits before any thread touches an operand");
    let fault = run(reads_b_before_waiting).expect_err("a read of B before the wait passed");
    assert!(
        fault.contains("before griddepcontrol.wait") && fault.contains("buffer `B`"),
        "the fault does not name the early read of B: {fault}"
    );
    eprintln!("planted: {fault}");
}
