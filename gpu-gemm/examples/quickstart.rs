//! The fastest FP32-accurate GEMM the course has for this GPU, called from a program:
//! `cargo run --release -p gpu-gemm --example quickstart` (on the CPU emulator, at a small
//! size, where there is no GPU).
use gpu_gemm::{Algorithm, Gemm, GemmConfig, GemmError, Math};
use std::time::Instant;

fn main() -> Result<(), GemmError> {
    let gemm = Gemm::new().unwrap_or_else(|e| {
        println!("{e}\n-> on the emulator");
        Gemm::emulator()
    });
    let (n, runs) = if gemm.is_gpu() { (8192, 20) } else { (128, 1) };
    let data: Vec<f32> = (0..n * n)
        .map(|i| ((i * 7919) % 2001) as f32 / 1000.0 - 1.0)
        .collect();
    // ANCHOR: core_loop
    let (a, b) = (gemm.upload(&data)?, gemm.upload(&data)?);
    let mut c = gemm.zeros::<f32>(n * n)?;
    let config = GemmConfig::new(n as u32, n as u32, n as u32);
    let fp32_accurate = Algorithm::Auto(Math::Fp32Accurate);
    // The first call also has the driver compile the kernel's module: not timed.
    let choice = gemm.run(&config, &fp32_accurate, &a, &b, &mut c)?;
    let start = Instant::now();
    for _ in 0..runs {
        gemm.run(&config, &fp32_accurate, &a, &b, &mut c)?;
    }
    // ANCHOR_END: core_loop
    let ms = start.elapsed().as_secs_f64() * 1e3 / runs as f64;
    let speed = 2.0 * (n as f64).powi(3) / (ms * 1e-3) / 1e12;
    println!("{n}³ f32 on {}\n  ran {choice}", gemm.device());
    println!(
        "  {ms:.3} ms a call ({speed:.1} TFLOP/s{})",
        if gemm.is_gpu() {
            ""
        } else {
            ": emulation time, not GPU speed"
        }
    );
    Ok(())
}
