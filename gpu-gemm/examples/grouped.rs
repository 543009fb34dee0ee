//! A mixture-of-experts layer as one grouped GEMM, in DeepGEMM's two layouts:
//! `cargo run --release -p gpu-gemm --example grouped` (on the CPU emulator where there is no
//! GPU). Each expert multiplies its own weights by the tokens routed to it; one launch computes
//! every expert.
//!
//! - *Contiguous* (training, prefill): the experts' tokens one after another in one activation
//!   matrix, each expert's a multiple of 128; the table names the expert of each run of 128.
//! - *Masked* (decoding under CUDA graphs): a slot of fixed capacity per expert and a count per
//!   expert, read by the kernel on the device, so the host never waits for the router.
//!
//! Row-major `Y[tokens × out] = X[tokens × in] · W[out × in]ᵀ` read column-major is
//! `Yᵀ = W·Xᵀ`: A is W (stored in × out, `op(A) = Aᵀ`), B is Xᵀ (in × tokens), C is Yᵀ.
use gpu_gemm::half::bf16;
use gpu_gemm::{Algorithm, Gemm, GemmConfig, GemmError, Math, Transpose, GROUP_COLUMNS};

fn main() -> Result<(), GemmError> {
    let gemm = Gemm::new().unwrap_or_else(|e| {
        println!("{e}\n-> on the emulator");
        Gemm::emulator()
    });
    let (out_features, in_features, experts) = if gemm.is_gpu() {
        (4096, 7168, 8)
    } else {
        (128, 64, 4)
    };
    let value = |i: usize| bf16::from_f32(((i * 7919) % 2001) as f32 / 1000.0 - 1.0);
    let weights: Vec<bf16> = (0..out_features * in_features * experts)
        .map(value)
        .collect();
    let expert_size = (out_features * in_features) as u64;
    let w = gemm.upload(&weights)?;
    let auto = Algorithm::Auto(Math::Strict);

    // ANCHOR: core_loop
    // Contiguous: runs of 128 tokens, the third one padding (a word of `experts` or more).
    let table: Vec<u32> = vec![0, 1, 1, experts as u32, 3];
    let tokens = table.len() * GROUP_COLUMNS as usize;
    let x: Vec<bf16> = (0..in_features * tokens).map(|i| value(i + 17)).collect();
    let (xb, table_dev) = (gemm.upload(&x)?, gemm.upload_table(&table)?);
    let mut y = gemm.zeros::<bf16>(out_features * tokens)?;
    let config = GemmConfig::new(out_features as u32, tokens as u32, in_features as u32)
        .transposes(Transpose::Yes, Transpose::No)
        .leading_dimensions(in_features as u32, in_features as u32, out_features as u32)
        .contiguous_groups(experts as u32, expert_size);
    let choice = gemm.run_grouped(&config, &auto, &w, &xb, &table_dev, &mut y)?;
    // ANCHOR_END: core_loop
    let y = gemm.download(&y)?;
    // Token t of run j goes through expert table[j]: check a few against f64.
    let mut worst = 0f64;
    for t in [0, 130, 300, 600] {
        let expert = table[t / GROUP_COLUMNS as usize] as usize;
        for row in [0, out_features / 2, out_features - 1] {
            let got = y[row + t * out_features].to_f64();
            if expert >= experts {
                assert_eq!(got, 0.0, "padding token {t} was written");
                continue;
            }
            let exact: f64 = (0..in_features)
                .map(|q| {
                    let wq = weights[expert * expert_size as usize + q + row * in_features];
                    wq.to_f64() * x[q + t * in_features].to_f64()
                })
                .sum();
            worst = worst.max((got - exact).abs() / exact.abs().max(1.0));
        }
    }
    println!(
        "{experts} experts of {out_features} × {in_features}, {tokens} tokens (runs {table:?}) on {}\n  contiguous: ran {choice}\n  worst relative error {worst:.1e} against f64",
        gemm.device()
    );
    assert!(worst < 2e-2, "the grouped result is wrong");

    // Masked: a slot of 128 tokens per expert, the counts written on the device.
    let capacity = 128;
    let counts = [100, 0, 128, 5]
        .into_iter()
        .cycle()
        .take(experts)
        .collect::<Vec<u32>>();
    let x: Vec<bf16> = (0..in_features * capacity * experts)
        .map(|i| value(i + 5))
        .collect();
    let (xb, counts_dev) = (gemm.upload(&x)?, gemm.upload_table(&counts)?);
    let mut y = gemm.zeros::<bf16>(out_features * capacity * experts)?;
    let slot = |rows: usize| (rows * capacity) as u64;
    let config = GemmConfig::new(out_features as u32, capacity as u32, in_features as u32)
        .transposes(Transpose::Yes, Transpose::No)
        .leading_dimensions(in_features as u32, in_features as u32, out_features as u32)
        .masked_groups(
            experts as u32,
            expert_size,
            slot(in_features),
            slot(out_features),
        );
    let mut plan = gemm.plan::<bf16>(&config, &auto)?;
    plan.enqueue_grouped(&w, &xb, &counts_dev, &mut y)?;
    gemm.synchronize()?;
    let y = gemm.download(&y)?;
    let written = |e: usize, t: usize| y[(e * capacity + t) * out_features] != bf16::ZERO;
    for (e, &count) in counts.iter().enumerate() {
        assert!(
            (0..capacity).all(|t| written(e, t) == (t < count as usize)),
            "expert {e}: a token past its count {count} was written, or one before it was not"
        );
    }
    println!(
        "  masked: ran {}; counts {counts:?}, each expert's tokens past its count untouched",
        plan.choice()
    );
    Ok(())
}
