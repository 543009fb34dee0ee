//! The fused epilogues' test cases, shared by the emulator's test and the GPU's.
use gpu_gemm::problem::{parse_epilogue, Init, Problem, Transpose, Transposes};
use gpu_gemm::run::Timing;
use kernels_gpu::gemm::Dtype;
use kernels_gpu::registry::Shape;

pub const ONCE: Timing = Timing::CHECK_ONCE;

/// An m × n × k problem, TN or NN, beta as given, every matrix padded (its rows a multiple of
/// 16 bytes, as the TMA engine needs): m and n cross the 128-row and 64-column tile
/// edges, so every epilogue meets partial tiles and pairs that straddle C's last row.
pub fn problem(
    dtype: Dtype,
    (m, n, k): (u32, u32, u32),
    t: Transposes,
    beta: f64,
    e: &str,
) -> Problem {
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
        seed: 7,
        epilogue: parse_epilogue(e).unwrap(),
        batch: kernels_gpu::gemm::Batch::ONE,
        groups: kernels_gpu::gemm::GroupLayout::None,
    };
    p.shape.lda = p.stored_a().0.next_multiple_of(8);
    p.shape.ldb = p.stored_b().0.next_multiple_of(8);
    p
}

/// Each way C is written, with the epilogue the row names: the register epilogue
/// (`wgmma-16bit`), the TMA stores (both orientations), ping-pong, split-k's reduction,
/// stream-k's finishing block, the narrow decode kernel, `auto`, and the unfused baseline;
/// most with the amax, which the check holds against C: (variant, tile, dtype, (m, n, k),
/// transposes, beta, epilogue).
#[allow(clippy::type_complexity)]
pub fn cases() -> Vec<(
    &'static str,
    Option<u32>,
    Dtype,
    (u32, u32, u32),
    Transposes,
    f64,
    &'static str,
)> {
    let tn = Transposes::new(Transpose::Yes, Transpose::No);
    vec![
        (
            "wgmma-16bit",
            None,
            Dtype::Bf16,
            (201, 72, 96),
            Transposes::NN,
            0.0,
            "bias,gelu,amax",
        ),
        (
            "wgmma-tma-store",
            Some(2),
            Dtype::F16,
            (200, 72, 96),
            Transposes::NN,
            0.5,
            "bias-col,silu,amax",
        ),
        (
            "wgmma-tma-store",
            Some(5),
            Dtype::Bf16,
            (136, 72, 64),
            Transposes::NN,
            0.0,
            "bias,relu",
        ),
        (
            "wgmma-pingpong",
            Some(1),
            Dtype::Bf16,
            (136, 200, 64),
            Transposes::NN,
            0.0,
            "bias,silu,amax",
        ),
        (
            "wgmma-split-k",
            None,
            Dtype::Bf16,
            (131, 70, 256),
            Transposes::NN,
            0.5,
            "bias,gelu,amax",
        ),
        (
            "wgmma-stream-k",
            None,
            Dtype::Bf16,
            (136, 200, 192),
            tn,
            0.0,
            "bias-col,gelu,amax",
        ),
        (
            "wgmma-narrow",
            None,
            Dtype::Bf16,
            (201, 9, 128),
            tn,
            0.0,
            "bias,gelu,amax",
        ),
        (
            "wgmma-swap",
            Some(332),
            Dtype::F16,
            (201, 40, 128),
            tn,
            0.5,
            "bias,gelu,amax",
        ),
        (
            "wgmma-swap",
            Some(248),
            Dtype::Bf16,
            (150, 70, 640),
            tn,
            0.0,
            "bias-col,silu,amax",
        ),
        ("auto", None, Dtype::F16, (100, 40, 64), tn, 0.25, "gelu"),
        (
            "unfused",
            None,
            Dtype::Bf16,
            (101, 33, 64),
            Transposes::NN,
            0.5,
            "bias,gelu,amax",
        ),
    ]
}
