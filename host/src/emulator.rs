//! The emulator backend: the same entry point, grid, block and shared size as the GPU, run by
//! `kernels_gpu::emu` on the CPU over host buffers. Times are wall-clock CPU time: they say
//! how long the emulation took, nothing about GPU performance.
use crate::problem::{Inputs, Problem, Scalar};
use crate::progress::{dims, Step};
use crate::run::{Launch, Measured, Timing};
use anyhow::{anyhow, bail, Result};
use kernels_gpu::device::{Global, GlobalMut};
use kernels_gpu::emu::{self, Buffer, LaunchShape};
use kernels_gpu::gemm::GemmArgs;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

fn buffer<T>(name: &'static str, data: &[T]) -> Buffer {
    Buffer {
        name,
        address: data.as_ptr() as usize,
        bytes: std::mem::size_of_val(data),
    }
}

/// Runs one launch of `launch.entry` on the emulator over `c`.
pub fn launch_once<T: Scalar>(
    launch: &Launch,
    p: &Problem,
    inputs: &Inputs<T>,
    c: &mut [T],
) -> Result<()> {
    launch_counted(launch, p, inputs, c, None)
}

/// [`launch_once`], counting each block on `step` as its first thread starts.
fn launch_counted<T: Scalar>(
    launch: &Launch,
    p: &Problem,
    inputs: &Inputs<T>,
    c: &mut [T],
    step: Option<&Step>,
) -> Result<()> {
    let Launch::Kernel { entry, geometry } = launch else {
        bail!("cuBLAS runs only on a GPU (use --backend gpu)");
    };
    let body = kernels_gpu::entry::find(entry)
        .and_then(T::kernel_body)
        .ok_or_else(|| anyhow!("entry point `{entry}` is not in the kernel table"))?;
    let s = p.shape;
    let args = GemmArgs {
        m: s.m,
        n: s.n,
        k: s.k,
        alpha: T::from_f64(p.alpha),
        a: Global::new(inputs.a.data.as_ptr()),
        lda: s.lda,
        b: Global::new(inputs.b.data.as_ptr()),
        ldb: s.ldb,
        beta: T::from_f64(p.beta),
        c: GlobalMut::new(c.as_mut_ptr()),
        ldc: s.ldc,
    };
    let buffers = [
        buffer("A", &inputs.a.data),
        buffer("B", &inputs.b.data),
        buffer("C", c),
    ];
    // The kernel runs on several worker threads; GemmArgs holds raw pointers, so it travels as
    // an address. The buffers outlive the launch, and every access is bounds-checked.
    let args_at = &args as *const GemmArgs<T> as usize;
    let g = geometry;
    let threads_per_block = g.block.0 as u64 * g.block.1 as u64;
    let started = AtomicU64::new(0);
    let kernel = move || {
        if let Some(step) = step {
            if started
                .fetch_add(1, Ordering::Relaxed)
                .is_multiple_of(threads_per_block)
            {
                step.inc(1);
            }
        }
        unsafe { body(*(args_at as *const GemmArgs<T>)) }
    };
    let shape = LaunchShape {
        grid: g.grid,
        block: g.block,
        shared_bytes: g.shared_bytes,
    };
    emu::launch(entry, shape, &buffers, &kernel)?;
    Ok(())
}

/// m·n·k times launches from which [`run`] shows its progress: 2²⁶ is 512³ once, or 256³ four
/// times, about 1 s of `v4` with 2 cores (the naive kernels take longer); emulation time grows
/// with m·n·k.
pub const SHOW_PROGRESS_FROM: f64 = (1u64 << 26) as f64;

/// The same protocol as the GPU backend: timed runs, then one checked run on a fresh C.
pub fn run<T: Scalar>(
    launch: &Launch,
    p: &Problem,
    inputs: &Inputs<T>,
    timing: Timing,
) -> Result<Measured<T>> {
    let mut c = inputs.c.data.clone();
    let mut times_ms = Vec::with_capacity(timing.iters);
    // With an infinite budget (the emulator's default) exactly `iters` timed runs happen.
    let launches = timing.warmup + timing.iters + usize::from(timing.check);
    let s = p.shape;
    let owned = match launch {
        Launch::Kernel { entry, geometry }
            if p.flops() / 2.0 * launches as f64 >= SHOW_PROGRESS_FROM =>
        {
            let blocks = geometry.grid.0 as u64 * geometry.grid.1 as u64;
            Some(Step::start(
                format!(
                    "emulating {entry} ({}, {launches} launch{} of {blocks} blocks)",
                    dims(s.m, s.n, s.k),
                    if launches == 1 { "" } else { "es" }
                ),
                blocks * launches as u64,
                "blocks",
            ))
        }
        _ => None,
    };
    let step = owned.as_ref();
    for _ in 0..timing.warmup {
        launch_counted(launch, p, inputs, &mut c, step)?;
    }
    while timing.wants_more(times_ms.len(), times_ms.iter().sum()) {
        let start = Instant::now();
        launch_counted(launch, p, inputs, &mut c, step)?;
        times_ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let uploaded_c = inputs.c_for_checked_run(p.beta);
    let mut result = uploaded_c.clone();
    if timing.check {
        launch_counted(launch, p, inputs, &mut result, step)?;
    }
    if let Some(step) = owned {
        step.finish();
    }
    Ok(Measured {
        times_ms,
        uploaded_c,
        result,
    })
}
