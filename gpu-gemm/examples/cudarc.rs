//! A program built on cudarc passes its own `CudaSlice`s to the library, on its own stream:
//! `cargo run --release -p gpu-gemm --example cudarc`. It needs a GPU (cudarc has no
//! emulator); without one it says so and stops.
//!
//! The inputs go up with cudarc on a stream of the program's (`new_stream`: it does not wait
//! for other streams by itself), the GEMM is enqueued in that stream's order, and C comes back
//! with cudarc on the same stream, with no wait in between: the order is the streams'.
use cudarc::driver::CudaContext;
use gpu_gemm::{Algorithm, Gemm, GemmConfig, Math};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The library's loader reports a missing driver as an error; cudarc's would panic.
    if let Err(e) = Gemm::new() {
        println!("{e}\nThis example needs a GPU: cudarc's buffers live in device memory.");
        return Ok(());
    }
    let (m, n, k) = (1000usize, 768usize, 1536usize);
    let a: Vec<f32> = (0..m * k)
        .map(|i| ((i * 7919) % 2001) as f32 / 1000.0 - 1.0)
        .collect();
    let b: Vec<f32> = (0..k * n)
        .map(|i| ((i * 104729) % 1999) as f32 / 999.0 - 1.0)
        .collect();

    // ANCHOR: cudarc
    let context = CudaContext::new(0)?;
    let stream = context.new_stream()?;
    let (a_dev, b_dev) = (stream.clone_htod(&a)?, stream.clone_htod(&b)?);
    let mut c_dev = stream.alloc_zeros::<f32>(m * n)?;

    let gemm = Gemm::on_cudarc(&context)?;
    let config = GemmConfig::new(m as u32, n as u32, k as u32);
    let mut plan = gemm.plan::<f32>(&config, &Algorithm::Auto(Math::Fp32Accurate))?;
    plan.enqueue_cudarc(&stream, &a_dev, &b_dev, &mut c_dev)?;
    let c = stream.clone_dtoh(&c_dev)?; // after the GEMM, in the stream's order
                                        // ANCHOR_END: cudarc

    // Every 97th element against an f64 product, relative to Σ|a·b| (the contract's measure).
    let worst = gpu_gemm::verify::worst_error_relative_to_magnitudes((m, n, k), (&a, &b, &c), 97);
    println!(
        "{m}×{n}×{k} f32 on cudarc's buffers and stream: {} ({})",
        plan.choice().variant,
        gemm.device()
    );
    println!("worst error relative to Σ|a·b| over every 97th element: {worst:.1e}");
    if worst > 1e-5 {
        return Err(format!(
            "error {worst:.1e} above 1e-5: the GEMM did not run in the stream's order"
        )
        .into());
    }
    Ok(())
}
