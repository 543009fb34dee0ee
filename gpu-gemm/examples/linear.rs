//! A transformer's linear layer as one GEMM, ready for an FP8 layer after it: `D = GELU(W·x +
//! b)`, with D's amax and the e4m3 scale `448 / amax` gathered in the same epilogue (current
//! scaling, as TransformerEngine's recipe computes it, without reading D back):
//! `cargo run --release -p gpu-gemm --example linear` (on the CPU emulator, at a small size,
//! where there is no GPU). Checks the amax against D's largest element and quantizes D to e4m3
//! with the scale; on a GPU it also shows where the pair lies for the next kernel to read.
use gpu_gemm::fp8::quantize::Format;
use gpu_gemm::half::bf16;
use gpu_gemm::{Activation, Algorithm, Bias, Gemm, GemmConfig, GemmError, Math};

fn main() -> Result<(), GemmError> {
    let gemm = Gemm::new().unwrap_or_else(|e| {
        println!("{e}\n-> on the emulator");
        Gemm::emulator()
    });
    // Out features × tokens × in features: Llama-3 8B's attention output at 4096 tokens.
    let (m, n, k) = if gemm.is_gpu() {
        (4096, 4096, 4096)
    } else {
        (96, 40, 64)
    };
    let value = |i: usize, scale: f32| {
        bf16::from_f32(((i * 7919) % 2001) as f32 / 1000.0 - 1.0) * bf16::from_f32(scale)
    };
    let w: Vec<bf16> = (0..m * k).map(|i| value(i, 0.05)).collect();
    let x: Vec<bf16> = (0..k * n).map(|i| value(i + 17, 1.0)).collect();
    let b: Vec<bf16> = (0..m).map(|i| value(3 * i, 0.5)).collect();
    // ANCHOR: core_loop
    let config = GemmConfig::new(m as u32, n as u32, k as u32)
        .epilogue(Bias::PerRow, Activation::Gelu)
        .amax();
    let mut plan = gemm.plan::<bf16>(&config, &Algorithm::Auto(Math::Strict))?;
    let (w, x, b) = (gemm.upload(&w)?, gemm.upload(&x)?, gemm.upload(&b)?);
    let mut d = gemm.zeros::<bf16>(m * n)?;
    plan.enqueue_with_bias(&w, &x, &b, &mut d)?;
    let amax = plan.amax()?; // waits for the stream
                             // ANCHOR_END: core_loop
    let d = gemm.download(&d)?;
    let largest = d.iter().map(|v| v.to_f32().abs()).fold(0f32, f32::max);
    println!(
        "D = GELU(W·x + b), {m} × {n} × {k} bf16 on {}\n  ran {}\n  amax {} (D's largest |element| {largest}), e4m3 scale {}",
        gemm.device(),
        plan.choice(),
        amax.amax,
        amax.scale
    );
    assert_eq!(
        bf16::from_f32(amax.amax).to_f32(),
        largest,
        "the amax is D's largest element before its rounding to bf16"
    );
    // The next layer's input: D·scale in e4m3, whose largest element lands on e4m3's largest.
    let codes: Vec<u8> = d
        .iter()
        .map(|v| Format::E4m3.encode(f64::from(v.to_f32() * amax.scale)))
        .collect();
    let top = codes
        .iter()
        .map(|&c| Format::E4m3.decode(c).abs())
        .fold(0f64, f64::max);
    println!("  D in e4m3: its largest code {top} (e4m3's largest 448)");
    assert!(
        top > 400.0 && top <= 448.0,
        "the scale does not fill e4m3's range"
    );
    if let Some(address) = plan.amax_device_address() {
        println!("  (amax, scale) at {address:#x} on the device, rewritten by every enqueue");
    }
    Ok(())
}
