//! The strided batches' test cases, shared by the emulator's test and the GPU's.
use gpu_gemm::problem::{Batch, Init, Problem, Transposes};
use gpu_gemm::registry::{self, Variant};
use gpu_gemm::run::Timing;
use kernels_gpu::gemm::Dtype;
use kernels_gpu::registry::Shape;

pub const ONCE: Timing = Timing {
    warmup: 0,
    iters: 1,
    budget_ms: f64::INFINITY,
    check: true,
};

/// Five members (four distinct, the fifth repeating the first: `Inputs::generate`) of an
/// m × n × k problem, each matrix padded and each member `gap` elements after the end of the
/// one before, so that a kernel which steps by a member's size instead of the stride, or
/// writes past a member, shows.
pub fn problem(dtype: Dtype, (m, n, k): (u32, u32, u32), t: Transposes, beta: f64) -> Problem {
    let mut p = Problem {
        shape: Shape {
            m,
            n,
            k,
            lda: 0,
            ldb: 0,
            ldc: m.next_multiple_of(8) + 8,
        },
        transposes: t,
        dtype,
        alpha: 0.75,
        beta,
        init: Init::Random,
        seed: 11,
        epilogue: kernels_gpu::fused::Epilogue::NONE,
        batch: Batch::ONE,
    };
    p.shape.lda = p.stored_a().0.next_multiple_of(8);
    p.shape.ldb = p.stored_b().0.next_multiple_of(8);
    let packed = p.packed_strides(5);
    let gap = 64;
    p.batch = Batch {
        stride_a: packed.stride_a + gap,
        stride_b: packed.stride_b + gap,
        stride_c: packed.stride_c + gap,
        ..packed
    };
    p.validate().unwrap();
    p
}

/// The kernels that run a batch, each at its default tile, in every layout it computes.
pub fn batched_kernels() -> Vec<(Variant, Transposes)> {
    registry::all()
        .into_iter()
        .filter(|v| matches!(v, Variant::Kernel(_)))
        .flat_map(|v| v.transposes().into_iter().map(move |t| (v, t)))
        .filter(|(v, t)| v.runs_batched(Dtype::Bf16, *t))
        .collect()
}
