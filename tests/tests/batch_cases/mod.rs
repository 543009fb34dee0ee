//! The strided batches' test cases, shared by the emulator's test and the GPU's (each declares
//! `epilogue_cases` too: a batch's members are its padded problems).
use gpu_gemm::problem::{Batch, Problem, Transposes};
use gpu_gemm::registry::{self, Variant};
use kernels_gpu::gemm::Dtype;

pub use super::epilogue_cases::ONCE;

/// Five members (four distinct, the fifth repeating the first: `Inputs::generate`) of an
/// m × n × k problem, each matrix padded and each member `gap` elements after the end of the
/// one before, so that a kernel which steps by a member's size instead of the stride, or
/// writes past a member, shows.
pub fn problem(dtype: Dtype, dims: (u32, u32, u32), t: Transposes, beta: f64) -> Problem {
    let mut p = super::epilogue_cases::problem(dtype, dims, t, beta, "none");
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
        .filter(|(v, t)| v.runs_batched(Dtype::Bf16, *t, None))
        .collect()
}

/// The f32 and f64 kernels (and `auto`) the batch's tests run: every one that launches a layer
/// of its grid per member, and the Hopper TF32 and 3xTF32 kernels, which walk the members.
pub fn full_precision() -> Vec<&'static str> {
    let mut names = kernels_gpu::registry::GRID_BATCHED.to_vec();
    names.extend(hopper_f32());
    names.push("auto");
    names
}

/// The Hopper f32 kernels that run a batch: their walk goes over every member's tiles.
pub fn hopper_f32() -> Vec<&'static str> {
    registry::all()
        .into_iter()
        .filter_map(|v| match v {
            Variant::Kernel(k)
                if k.target == kernels_gpu::registry::Target::Sm90a
                    && v.runs_batched(Dtype::F32, Transposes::NN, None) =>
            {
                Some(k.name)
            }
            _ => None,
        })
        .collect()
}
