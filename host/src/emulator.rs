//! The emulator backend: the same entry point, grid, block and shared size as the GPU, run by
//! `kernels_gpu::emu` on the CPU over host buffers. Times are wall-clock CPU time: they say
//! how long the emulation took, nothing about GPU performance.
use crate::problem::{Inputs, Problem, Scalar};
use crate::run::{Launch, Measured, Timing};
use anyhow::{anyhow, bail, Result};
use kernels_gpu::device::{Global, GlobalMut};
use kernels_gpu::emu::{self, Buffer, LaunchShape};
use kernels_gpu::gemm::GemmArgs;
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
    let kernel = move || unsafe { body(*(args_at as *const GemmArgs<T>)) };
    let g = geometry;
    let shape = LaunchShape {
        grid: g.grid,
        block: g.block,
        shared_bytes: g.shared_bytes,
    };
    emu::launch(entry, shape, &buffers, &kernel)?;
    Ok(())
}

/// The same protocol as the GPU backend: timed runs, then one checked run on a fresh C.
pub fn run<T: Scalar>(
    launch: &Launch,
    p: &Problem,
    inputs: &Inputs<T>,
    timing: Timing,
) -> Result<Measured<T>> {
    let mut c = inputs.c.data.clone();
    let mut times_ms = Vec::with_capacity(timing.iters);
    for _ in 0..timing.warmup {
        launch_once(launch, p, inputs, &mut c)?;
    }
    while timing.wants_more(times_ms.len(), times_ms.iter().sum()) {
        let start = Instant::now();
        launch_once(launch, p, inputs, &mut c)?;
        times_ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let uploaded_c = inputs.c_for_checked_run(p.beta);
    let mut result = uploaded_c.clone();
    if timing.check {
        launch_once(launch, p, inputs, &mut result)?;
    }
    Ok(Measured {
        times_ms,
        uploaded_c,
        result,
    })
}
