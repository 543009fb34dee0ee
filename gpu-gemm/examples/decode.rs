//! A decode step as a serving program runs it: a layer's GEMMs planned once, the whole chain
//! of layers captured into one CUDA graph, launched at every token:
//! `cargo run --release -p gpu-gemm --example decode` (on the CPU emulator, at 1/64 of the
//! sizes and two layers, where there is no GPU).
//!
//! Each GEMM reads what the one before wrote (row-major `Y = X·Wᵀ`, read column-major as T,N:
//! A the weights, B the activations). The plans ask for the early start
//! ([`Plan::start_early`]): each decode kernel may begin while the one ahead finishes, and
//! brings its first weights into L2 before it waits for it. `host experiment decode` runs the
//! same chain for Llama-3 8B and DeepSeek-V3's experts beside cuBLAS, checked.
use gpu_gemm::half::bf16;
use gpu_gemm::{Algorithm, Buffer, Gemm, GemmConfig, GemmError, Math, Plan, Transpose};

fn main() -> Result<(), GemmError> {
    let gemm = Gemm::new().unwrap_or_else(|e| {
        println!("{e}\n-> on the emulator");
        Gemm::emulator()
    });
    let (divisor, layers, tokens) = if gemm.is_gpu() {
        (1, 32, 16)
    } else {
        (64, 2, 4)
    };
    // Llama-3 8B's layer: QKV, O, gate-up, down (out features, in features).
    let shapes = [(6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336)]
        .map(|(out, k): (u32, u32)| (out / divisor, k / divisor));
    let value = |i: usize, k: u32| {
        let unit = ((i * 7919) % 2001) as f32 / 1000.0 - 1.0;
        bf16::from_f32(unit * (3.0 / k as f32).sqrt())
    };
    let weights = shapes
        .iter()
        .map(|&(out, k)| {
            gemm.upload(
                &(0..(out * k) as usize)
                    .map(|i| value(i, k))
                    .collect::<Vec<_>>(),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;

    // ANCHOR: decode_graph
    // One plan per GEMM of the layer; B's leading dimension is the previous output's rows.
    let auto = Algorithm::Auto(Math::Strict);
    let mut plans = Vec::new();
    for (s, &(out, k)) in shapes.iter().enumerate() {
        let ld = shapes[(s + shapes.len() - 1) % shapes.len()].0;
        let config = GemmConfig::new(out, tokens, k)
            .transposes(Transpose::Yes, Transpose::No)
            .leading_dimensions(k, ld, out);
        let mut plan: Plan<bf16> = gemm.plan(&config, &auto)?;
        plan.start_early();
        plans.push(plan);
    }
    // The activations: the input, then every GEMM's output, so that the chain is a chain.
    let x: Vec<bf16> = (0..(shapes[0].1 * tokens) as usize)
        .map(|i| value(i, 3))
        .collect();
    let mut activations: Vec<Buffer<bf16>> = vec![gemm.upload(&x)?];
    for _ in 0..layers {
        for &(out, _) in &shapes {
            activations.push(gemm.zeros((out * tokens) as usize)?);
        }
    }
    let mut step = gemm.capture(|| {
        for i in 0..activations.len() - 1 {
            let s = i % shapes.len();
            let (read, written) = activations.split_at_mut(i + 1);
            plans[s].enqueue(&weights[s], &read[i], &mut written[0])?;
        }
        Ok(())
    })?;
    step.launch()?; // a token's step; the host does nothing else per GEMM
                    // ANCHOR_END: decode_graph
    let mut times: Vec<f64> = (0..5)
        .map(|_| step.launch_timed())
        .collect::<Result<_, _>>()?;
    times.sort_by(f64::total_cmp);
    drop(step);
    let last = gemm.download(activations.last().expect("an output"))?;
    println!(
        "{layers} layers × {} GEMMs at {tokens} tokens in one graph: {:.1} µs a step (median of 5; {}), {} ({})",
        shapes.len(),
        times[2] * 1e3,
        if gemm.is_gpu() { "GPU time" } else { "emulation time" },
        plans[0].choice().variant,
        gemm.device()
    );
    // Every activation stays in range layer after layer (the weights' scale), and the last
    // layer's output is not the zeros it started as: the chain ran to its end.
    assert!(last.iter().all(|v| v.to_f32().is_finite()));
    assert!(
        last.iter().any(|v| v.to_f32() != 0.0),
        "the last output was never written"
    );
    Ok(())
}
