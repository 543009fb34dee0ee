//! A GEMM planned once and enqueued many times, as a decode loop runs a layer at every step:
//! `cargo run --release -p gpu-gemm --example plan` (on the CPU emulator, at a small size and
//! a few steps, where there is no GPU).
//!
//! On the GPU it enqueues the same 256³ bf16 GEMM 1000 times on one stream, then waits once,
//! and does the same with cuBLAS through the same plan API: at this size a GEMM is a few
//! microseconds of GPU time, so what each call costs on the host decides how fast the loop
//! runs. Five rounds each, alternating; the medians and their ratio.
use gpu_gemm::half::bf16;
use gpu_gemm::{Algorithm, Gemm, GemmConfig, GemmError, Math};
use std::time::Instant;

fn main() -> Result<(), GemmError> {
    let gemm = Gemm::new().unwrap_or_else(|e| {
        println!("{e}\n-> on the emulator");
        Gemm::emulator()
    });
    let (n, steps, rounds) = if gemm.is_gpu() {
        (256, 1000, 5)
    } else {
        (64, 3, 1)
    };
    let data: Vec<bf16> = (0..n * n)
        .map(|i| bf16::from_f32(((i * 7919) % 2001) as f32 / 1000.0 - 1.0))
        .collect();
    let (a, b) = (gemm.upload(&data)?, gemm.upload(&data)?);
    let mut c = gemm.zeros::<bf16>(n * n)?;
    let config = GemmConfig::new(n as u32, n as u32, n as u32);
    let mut contenders = vec![("auto", Algorithm::Auto(Math::Strict))];
    if gemm.is_gpu() {
        contenders.push(("cuBLAS", Algorithm::Cublas));
    }
    let mut medians = Vec::new();
    for (name, algorithm) in &contenders {
        // ANCHOR: plan_loop
        // Chosen, loaded and allocated once; each enqueue only checks the buffers and launches.
        let mut plan = gemm.plan::<bf16>(&config, algorithm)?;
        plan.enqueue(&a, &b, &mut c)?; // the first: its buffers' tensor maps are written
        gemm.synchronize()?;
        let (mut times, mut host) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let start = Instant::now();
            for _ in 0..steps {
                plan.enqueue(&a, &b, &mut c)?;
            }
            host.push(start.elapsed().as_secs_f64() * 1e6 / steps as f64);
            gemm.synchronize()?;
            times.push(start.elapsed().as_secs_f64() * 1e6 / steps as f64);
        }
        // ANCHOR_END: plan_loop
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (median, host) = (median(&mut times), median(&mut host));
        println!(
            "{name:>6}: {steps} enqueues of {n}³ bf16, then one wait: {median:.2} µs a GEMM, {host:.2} µs of it on the host to enqueue (medians of {rounds}; {})",
            plan.choice().variant
        );
        medians.push(median);
    }
    if let [ours, cublas] = medians[..] {
        println!(
            "auto / cuBLAS: {:.3} (time per GEMM, lower is better) on {}",
            ours / cublas,
            gemm.device()
        );
    } else {
        println!("(emulation time, not GPU speed, on {})", gemm.device());
    }
    Ok(())
}
