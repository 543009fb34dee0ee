//! A strided batch, attention's shape: one launch for every head of every sequence, each
//! member's A, B and C a fixed stride after the last (`cublasGemmStridedBatchedEx`'s layout):
//! `cargo run --release -p gpu-gemm --example batch` (on the CPU emulator, with a few small
//! members, where there is no GPU). Checks two members against a product computed here, and on a
//! GPU times the batch beside cuBLAS's strided batched GEMM.
use gpu_gemm::half::bf16;
use gpu_gemm::{Algorithm, Gemm, GemmConfig, GemmError, Math};
use std::time::Instant;

fn main() -> Result<(), GemmError> {
    let gemm = Gemm::new().unwrap_or_else(|e| {
        println!("{e}\n-> on the emulator");
        Gemm::emulator()
    });
    // Members of 128 × 128 × 128 (a head's scores, `Q·Kᵀ`); a thousand of them on a GPU.
    let (size, count, runs) = if gemm.is_gpu() {
        (128, 1024, 20)
    } else {
        (64, 3, 1)
    };
    let member = size * size;
    let value = |i: usize| bf16::from_f32(((i * 7919) % 2001) as f32 / 1000.0 - 1.0);
    let data: Vec<bf16> = (0..member * count).map(value).collect();
    // ANCHOR: core_loop
    let (a, b) = (gemm.upload(&data)?, gemm.upload(&data)?);
    let mut c = gemm.zeros::<bf16>(member * count)?;
    let stride = member as u64;
    let config = GemmConfig::new(size as u32, size as u32, size as u32).batch(
        count as u32,
        stride,
        stride,
        stride,
    );
    let auto = Algorithm::Auto(Math::Strict);
    let choice = gemm.run(&config, &auto, &a, &b, &mut c)?;
    // ANCHOR_END: core_loop
    let result = gemm.download(&c)?;
    let mut worst = 0f64;
    for m in [0, count - 1] {
        let x = &data[m * member..(m + 1) * member];
        for (col, row) in [(0, 0), (size - 1, size / 2), (size / 3, size - 1)] {
            let exact: f64 = (0..size)
                .map(|q| x[row + q * size].to_f64() * x[q + col * size].to_f64())
                .sum();
            let got = result[m * member + row + col * size].to_f64();
            worst = worst.max((got - exact).abs() / exact.abs().max(1.0));
        }
    }
    println!(
        "{count} members of {size}³ bf16 on {}\n  ran {choice}\n  members 0 and {}: worst relative error {worst:.1e} against f64",
        gemm.device(),
        count - 1
    );
    assert!(worst < 2e-2, "the batch's result is wrong");
    if gemm.is_gpu() {
        for (name, algorithm) in [("ours", auto), ("cuBLAS", Algorithm::Cublas)] {
            gemm.run(&config, &algorithm, &a, &b, &mut c)?;
            let start = Instant::now();
            for _ in 0..runs {
                gemm.run(&config, &algorithm, &a, &b, &mut c)?;
            }
            let ms = start.elapsed().as_secs_f64() * 1e3 / runs as f64;
            println!("  {name}: {ms:.3} ms a call (each call waits for the GPU)");
        }
    }
    Ok(())
}
