//! The emulator backend: the same entry point, grid, block and shared size as the GPU, run by
//! `kernels_gpu::emu` on the CPU over host buffers. Times are wall-clock CPU time: they say
//! how long the emulation took, nothing about GPU performance.
use crate::launch::{Fp8Operands, Launch, Pitch};
use crate::problem::{EmulatedBody, Epilogue, Inputs, Problem, Scalar};
use crate::progress::{dims, Step};
use crate::timing::{Measured, Timing};
use anyhow::{anyhow, bail, Result};
use kernels_gpu::device::tma::TensorMap;
use kernels_gpu::device::GlobalWords;
use kernels_gpu::emu::{self, Buffer, LaunchShape};
use kernels_gpu::gemm::{Batch, Geometry, GroupLayout, Groups, Members};

/// A launch of a problem that is not grouped.
const NOT_GROUPED: (GroupLayout, u32, &[u32]) = (GroupLayout::None, 0, &[]);

/// A launch's batch as the kernel takes it, and its groups' layout, count and table.
type Batched<'a> = (Members, (GroupLayout, u32, &'a [u32]));
use kernels_gpu::registry::{Shape, TmaOperands};
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
    launch_on(
        launch,
        p,
        (&inputs.a.data, &inputs.b.data, &inputs.bias, &inputs.groups),
        (c, &mut [0; 3]),
        None,
    )
}

/// The amax epilogue's three words as a launch finds them: the accumulator zeroed
/// ([`kernels_gpu::fused::finish_amax`]).
pub const AMAX_ZEROED: [u32; 3] = [0; 3];

pub use kernels_gpu::fused::amax_of;

/// [`launch_on`] with `body` run in place of the GEMM kernel of `launch`'s entry point, over
/// the same launch (grid, tensor maps, scratch): how the tests plant a bug in a kernel and show
/// that the check catches it. `amax` as [`launch_on`]'s.
pub fn launch_planted<T: Scalar>(
    launch: &Launch,
    body: EmulatedBody<T::Args>,
    p: &Problem,
    inputs: &Inputs<T>,
    (c, amax): (&mut [T], &mut [u32; 3]),
) -> Result<()> {
    let operands = (
        &inputs.a.data[..],
        &inputs.b.data[..],
        &inputs.bias[..],
        &inputs.groups[..],
    );
    launch_with(launch, Some(body), p, operands, (c, amax), None)
}

/// [`launch_once`] on A, B, the fused epilogue's bias and a grouped problem's table as given,
/// counting each block on `step` as its first thread starts. With the amax epilogue, the GEMM
/// raises `amax[0]` and the last step ([`kernels_gpu::fused::finish_amax`]) leaves D's amax
/// and scale in the other two words and zeroes it, as on the GPU ([`amax_of`] reads them).
pub fn launch_on<T: Scalar>(
    launch: &Launch,
    p: &Problem,
    operands: (&[T], &[T], &[T], &[u32]),
    (c, amax): (&mut [T], &mut [u32; 3]),
    step: Option<&Step>,
) -> Result<()> {
    launch_with(launch, None, p, operands, (c, amax), step)
}

/// [`launch_on`], the GEMM kernel's body `planted` where given.
fn launch_with<T: Scalar>(
    launch: &Launch,
    planted: Option<EmulatedBody<T::Args>>,
    p: &Problem,
    (a, b, bias, table): (&[T], &[T], &[T], &[u32]),
    (c, amax): (&mut [T], &mut [u32; 3]),
    step: Option<&Step>,
) -> Result<()> {
    launch_gemm(launch, planted, p, (a, b, bias, table), (c, amax), step)?;
    if p.epilogue.amax() {
        emulate_amax_scale(amax)?;
    }
    Ok(())
}

/// The amax epilogue's last step after the GEMM, as on the GPU: its entry point
/// ([`kernels_gpu::registry::AMAX_SCALE`]) on one thread over the three words.
fn emulate_amax_scale(words: &mut [u32; 3]) -> Result<()> {
    use kernels_gpu::entry::KernelBody;
    let entry = kernels_gpu::registry::AMAX_SCALE;
    let Some(KernelBody::Words(body)) = kernels_gpu::entry::find(entry) else {
        bail!("`{entry}` is not in the kernel table as a kernel of one pointer");
    };
    let at = words.as_mut_ptr() as usize;
    let one = LaunchShape {
        grid: (1, 1),
        block: (1, 1),
        shared_bytes: 0,
        cluster: (1, 1),
    };
    emu::launch(
        entry,
        one,
        &[amax_buffer(words.as_mut_ptr())],
        &move || unsafe { body(at as *mut u32) },
    )?;
    Ok(())
}

/// [`launch_with`]'s GEMM: every pass that writes C.
fn launch_gemm<T: Scalar>(
    launch: &Launch,
    planted: Option<EmulatedBody<T::Args>>,
    p: &Problem,
    (a, b, bias, table): (&[T], &[T], &[T], &[u32]),
    (c, amax): (&mut [T], &mut [u32; 3]),
    step: Option<&Step>,
) -> Result<()> {
    // Operands the kernel reads from copies: made here as the GPU makes them (their kernels),
    // then the launch on the copies.
    if let Launch::Kernel {
        copies: Some(copies),
        ..
    } = launch
    {
        let mut on_copies = launch.clone();
        if let Launch::Kernel { copies, .. } = &mut on_copies {
            *copies = None;
        }
        let aligned = copies.problem_reading_them(p);
        let a_copy = copies.a.map(|pitch| emulate_copy(pitch, a)).transpose()?;
        let b_copy = copies.b.map(|pitch| emulate_copy(pitch, b)).transpose()?;
        let operands = (
            a_copy.as_deref().unwrap_or(a),
            b_copy.as_deref().unwrap_or(b),
            bias,
            table,
        );
        return launch_gemm(&on_copies, planted, &aligned, operands, (c, amax), step);
    }
    let Launch::Kernel {
        entry,
        geometry,
        reduce,
        tma,
        unfused,
        ..
    } = launch
    else {
        bail!("cuBLAS runs only on a GPU (use --backend gpu)");
    };
    let s = p.shape;
    let (alpha, beta) = (T::factor(p.alpha), T::factor(p.beta));
    // TMA kernels: A's and B's (and C's) tensor maps, a persistent grid, the registry's cluster
    // (on the GPU it is fixed in the PTX, `.reqnctapercluster`; the emulator takes it from the
    // launch, and runs each cluster's blocks together, as they share memory).
    let mut g = *geometry;
    if let Some(t) = tma {
        g.grid = t.grid(g, EMULATED_MULTIPROCESSORS);
    }
    let cluster = tma.map_or(1, |t| t.cluster);
    // A kernel the GPU may start early runs here as such a launch, every time: the emulator then
    // checks that no thread touches an operand before it waits for the kernel ahead.
    let early = launch.starts_early();
    let mut scratch = Vec::new();
    let mut stream_k = (Vec::new(), Vec::new());
    // A tile queue's counter, zeroed, its address after the maps as the GPU backend places it.
    let mut queue = [0u32];
    // (The ranges' words live until the kernel has run: it reads them through the maps.)
    let (maps, _ranges) = match tma {
        Some(t) => {
            let mut maps = tensor_maps(t, (&p.shape, &p.batch), (a, b, c))?;
            stream_k = stream_k_scratch(t, (&s, p.batch.count), g.grid, &mut maps);
            if t.stream_k.is_some() {
                scratch = vec![
                    buffer("stream-k workspace", &stream_k.0),
                    buffer("stream-k counters", &stream_k.1),
                ];
            }
            let ranges = if t.ranges {
                let words = ranges_pass(p, (a, b), &mut maps)?;
                scratch.push(buffer("ranges", &words));
                words
            } else {
                Vec::new()
            };
            if t.queue {
                push_after(&mut maps, &[queue.as_mut_ptr() as u64]);
                scratch.push(buffer("tile queue", &queue));
            }
            (Some(maps), ranges)
        }
        None => (None, Vec::new()),
    };
    let counters = &stream_k.1;
    // The epilogue goes into the GEMM, or split-k's reduction, or the unfused kernel after.
    let amax = if p.epilogue.amax() {
        amax.as_mut_ptr()
    } else {
        core::ptr::null_mut()
    };
    let fused = (p.epilogue, bias, amax);
    let none = (Epilogue::NONE, &[][..], core::ptr::null_mut());
    match reduce {
        // A strided batch on a kernel without tensor maps: on the GPU its grid's z, here a
        // launch per member (the emulator's grids have two dimensions).
        None if tma.is_none() && p.batch.is_batched() => {
            let batch = p.batch;
            let [a_len, b_len, c_len] = p
                .stored()
                .map(|(_, _, cols, ld)| ld as usize * cols as usize);
            for z in 0..batch.count as usize {
                let at = |stride: u64| z * stride as usize;
                let (a, b) = (
                    &a[at(batch.stride_a)..][..a_len],
                    &b[at(batch.stride_b)..][..b_len],
                );
                let c = &mut c[at(batch.stride_c)..][..c_len];
                let args = (s.m, s.n, s.k, alpha, a, s.lda, b, s.ldb, beta);
                let c = ("C", c, s.ldc, (Members::ONE, NOT_GROUPED));
                emulate(
                    (entry, planted),
                    (g, cluster, early),
                    args,
                    c,
                    (None, &[]),
                    none,
                    step,
                )?;
            }
            Ok(())
        }
        None => {
            let args = (s.m, s.n, s.k, alpha, a, s.lda, b, s.ldb, beta);
            let launched = emulate(
                (entry, planted),
                (g, cluster, early),
                args,
                (
                    "C",
                    c,
                    s.ldc,
                    (p.members(), (p.groups, p.batch.count, table)),
                ),
                (maps.as_deref(), &scratch),
                if unfused.is_some() { none } else { fused },
                step,
            );
            // Every launch leaves the counters as it found them: the next one on a stream
            // relies on it.
            if launched.is_ok() && counters.iter().any(|&c| c != 0) {
                bail!("`{entry}` left stream-k counters nonzero ({counters:?}): the next launch would add its parts wrongly");
            }
            if launched.is_ok() && queue[0] != 0 {
                bail!("`{entry}` left its tile queue's counter at {}: the next launch would skip that many units", queue[0]);
            }
            launched?;
            match unfused {
                Some(u) => emulate_unfused(&u.entry, p, c, fused),
                None => Ok(()),
            }
        }
        Some(r) => {
            // As on the GPU: partial products into a workspace (ld m, alpha 1, beta 0), in the
            // element type or, for the 16-bit types, in f32; then their sum into C.
            let bytes = r.workspace_bytes(s.m, s.n, p.dtype);
            // NaN as f64, and as two f32: the parts must all be written.
            let poison = if p.dtype == kernels_gpu::gemm::Dtype::F64 {
                f64::NAN.to_bits()
            } else {
                u64::from(f32::NAN.to_bits()) * 0x1_0000_0001
            };
            let mut words = vec![poison; bytes.div_ceil(8)];
            // SAFETY: the workspace's bytes as `T`s (8-byte aligned, enough for every type); for
            // the 16-bit types they are f32 bits, which the partial kernel writes as such.
            let workspace: &mut [T] = unsafe {
                core::slice::from_raw_parts_mut(words.as_mut_ptr().cast(), bytes / size_of::<T>())
            };
            let (one, zero) = (T::factor(1.0), T::factor(0.0));
            let args = (s.m, s.n, s.k, one, a, s.lda, b, s.ldb, zero);
            let partial = (g, cluster, early);
            emulate(
                (entry, planted),
                partial,
                args,
                ("workspace", workspace, s.m, (Members::ONE, NOT_GROUPED)),
                (maps.as_deref(), &[]),
                none,
                step,
            )?;
            if p.dtype.is_16bit() {
                // The reduction writes C last unless the unfused pass follows it.
                let reduce = (&r.entry[..], r.geometry, r.splits);
                return match unfused {
                    None => emulate_half_pass(reduce, p, &words, c, fused),
                    Some(u) => {
                        emulate_half_pass(reduce, p, &words, c, none)?;
                        emulate_unfused(&u.entry, p, c, fused)
                    }
                };
            }
            let args = (
                s.m,
                s.n,
                r.splits,
                alpha,
                &workspace[..],
                s.m,
                &workspace[..],
                s.m,
                beta,
            );
            emulate(
                (&r.entry, None),
                (r.geometry, 1, false),
                args,
                ("C", c, s.ldc, (Members::ONE, NOT_GROUPED)),
                (None, &[]),
                none,
                None,
            )
        }
    }
}

/// An operand's copy ([`crate::launch::Copies`]) as the GPU makes it: its kernel
/// ([`Pitch::kernel`]) run here as any kernel is, once per copied member.
fn emulate_copy<T: Scalar>(pitch: Pitch, source: &[T]) -> Result<Vec<T>> {
    let (entry, geometry) = pitch.kernel(T::DTYPE)?;
    let mut copy = vec![source[0]; pitch.copy_len()];
    let zero = T::factor(0.0);
    for member in 0..pitch.copies_made() {
        let (from, to) = pitch.offsets(member);
        let (source, out) = (
            &source[from as usize..],
            &mut copy[to as usize..to as usize + pitch.matrix_len()],
        );
        let args = (
            pitch.rows, pitch.cols, 0, zero, source, pitch.from, source, pitch.from, zero,
        );
        // The 16-bit copy has the 16-bit kernels' signature, maps and all, and reads none of them.
        let no_maps: Option<&[TensorMap]> = T::DTYPE.is_16bit().then_some(&[]);
        emulate(
            (&entry, None),
            (geometry, 1, false),
            args,
            ("copy", out, pitch.to, (Members::ONE, NOT_GROUPED)),
            (no_maps, &[]),
            (Epilogue::NONE, &[], core::ptr::null_mut()),
            None,
        )?;
    }
    Ok(copy)
}

/// The unfused epilogue on the emulator: `C = act(C + bias)` as a kernel of its own, its grid
/// sized by C's alignment as on the GPU.
fn emulate_unfused<T: Scalar>(
    entry: &str,
    p: &Problem,
    c: &mut [T],
    fused: FusedOperands<'_, T>,
) -> Result<()> {
    let s = p.shape;
    let aligned = (c.as_ptr() as usize).is_multiple_of(4);
    let g = kernels_gpu::variants::bias_activation::geometry(s.m, s.n, s.ldc, aligned);
    emulate_half_pass((entry, g, 0), p, &[], c, fused)
}

/// The fused epilogue as the emulator hands it to a kernel: its word, the bias (empty without
/// one), and the amax's words (null without the amax).
type FusedOperands<'a, T> = (Epilogue, &'a [T], *mut u32);

/// The amax's words as a buffer the emulator checks the kernel's atomics against.
fn amax_buffer(words: *mut u32) -> Buffer {
    Buffer {
        name: "amax",
        address: words as usize,
        bytes: 3 * size_of::<u32>(),
    }
}

/// A 16-bit pass over C after the GEMM on the emulator: split-k's reduction (`splits` f32
/// parts in `workspace`, as bits) or the unfused epilogue (no parts), then the fused epilogue
/// (`fused`: none where a later pass applies it).
fn emulate_half_pass<T: Scalar>(
    (entry, geometry, splits): (&str, Geometry, u32),
    p: &Problem,
    workspace: &[u64],
    c: &mut [T],
    (epilogue, bias, amax): FusedOperands<'_, T>,
) -> Result<()> {
    use kernels_gpu::device::half::{Bf16, GlobalHalf, GlobalHalfMut, F16};
    use kernels_gpu::device::Global;
    use kernels_gpu::entry::KernelBody;
    use kernels_gpu::fused::Fused;
    use kernels_gpu::gemm::{Dtype, HalfReduceArgs};
    let s = p.shape;
    let mut buffers = vec![buffer("workspace", workspace), buffer("C", c)];
    if !bias.is_empty() {
        buffers.push(buffer("bias", bias));
    }
    if !amax.is_null() {
        buffers.push(amax_buffer(amax));
    }
    let ws = Global::new(workspace.as_ptr().cast::<f32>());
    let (alpha, beta) = (p.alpha as f32, p.beta as f32);
    let body = kernels_gpu::entry::find(entry)
        .ok_or_else(|| anyhow!("entry point `{entry}` is not in the kernel table"))?;
    let g = geometry;
    let shape = LaunchShape {
        grid: g.grid,
        block: g.block,
        shared_bytes: g.shared_bytes,
        cluster: (1, 1),
    };
    // The kernel runs on several worker threads; the arguments travel as an address.
    macro_rules! run {
        ($h:ty, $f:expr) => {{
            let args = HalfReduceArgs {
                m: s.m,
                n: s.n,
                splits,
                alpha,
                workspace: ws,
                ldw: s.m,
                beta,
                c: GlobalHalfMut::new(c.as_mut_ptr().cast::<$h>()),
                ldc: s.ldc,
                fused: Fused {
                    epilogue,
                    bias: GlobalHalf::new(bias.as_ptr().cast::<$h>()),
                    amax,
                },
            };
            let at = &args as *const HalfReduceArgs<$h> as usize;
            let f = $f;
            emu::launch(entry, shape, &buffers, &move || unsafe {
                f(*(at as *const HalfReduceArgs<$h>))
            })?;
        }};
    }
    match (body, p.dtype) {
        (KernelBody::Bf16Reduce(f), Dtype::Bf16) => run!(Bf16, f),
        (KernelBody::F16Reduce(f), Dtype::F16) => run!(F16, f),
        _ => bail!(
            "`{entry}` is not a 16-bit pass over C in {}",
            p.dtype.name()
        ),
    }
    Ok(())
}

/// 3xTF32's ranges pass ([`kernels_gpu::variants::ranges`]) as the GPU runs it before the
/// kernel: m + n zeroed words, the pass's atomic maxima into them, their address after `maps`.
fn ranges_pass<T: Scalar>(
    p: &Problem,
    (a, b): (&[T], &[T]),
    maps: &mut Vec<TensorMap>,
) -> Result<Vec<T>> {
    use kernels_gpu::variants::ranges;
    let (s, batch) = (p.shape, p.batch);
    // Zero bits in every element type: the pass reads and writes them as u32 words (f32 only).
    // m + n words per member, one member after the other; on the GPU a batch is the layers of
    // one launch of the pass's twin, here a launch per member.
    let per_member = (s.m + s.n) as usize;
    let mut words = vec![T::from_f64(0.0); per_member * batch.count as usize];
    let (one, zero) = (T::factor(1.0), T::factor(0.0));
    for (z, words) in words.chunks_mut(per_member).enumerate() {
        let at = |stride: u64| z * stride as usize;
        let (a, b) = (&a[at(batch.stride_a)..], &b[at(batch.stride_b)..]);
        emulate(
            (ranges::ENTRY, None),
            (ranges::geometry(s.m, s.n, s.k), 1, false),
            (s.m, s.n, s.k, one, a, s.lda, b, s.ldb, zero),
            ("ranges", words, s.m, (Members::ONE, NOT_GROUPED)),
            (None, &[]),
            (Epilogue::NONE, &[], core::ptr::null_mut()),
            None,
        )?;
    }
    push_after(maps, &[words.as_ptr() as u64]);
    Ok(words)
}

/// Stream-k's workspace (NaN-poisoned: every part read must have been written) and its zeroed
/// counters for a launch of `grid` blocks, their addresses appended after `maps` as the GPU
/// backend places them; empty for a kernel without stream-k.
fn stream_k_scratch(
    tma: &TmaOperands,
    (shape, members): (&Shape, u32),
    grid: (u32, u32),
    maps: &mut Vec<TensorMap>,
) -> (Vec<f32>, Vec<u32>) {
    let Some((bytes, tiles)) = tma.stream_k_scratch(shape, members, grid) else {
        return (Vec::new(), Vec::new());
    };
    let (mut workspace, mut counters) = (vec![f32::NAN; bytes / 4], vec![0u32; tiles]);
    push_after(
        maps,
        &[workspace.as_mut_ptr() as u64, counters.as_mut_ptr() as u64],
    );
    (workspace, counters)
}

/// The words a kernel reads after its tensor maps (stream-k's scratch, 3xTF32's ranges, a tile
/// queue's counter), in a slot of their own after the maps, as the GPU backend places them.
fn push_after(maps: &mut Vec<TensorMap>, words: &[u64]) {
    let mut after = TensorMap { opaque: [0; 16] };
    after.opaque[..words.len()].copy_from_slice(words);
    maps.push(after);
}

/// The multiprocessors of the emulator's notional GPU: a persistent kernel's grid is capped at
/// this many blocks. Few, so that each block loops over several tiles (as on an H100 at the
/// sizes that matter) and the loop's edges are exercised at the emulator's small sizes.
pub const EMULATED_MULTIPROCESSORS: u32 = 3;

/// A's and B's tensor maps for the emulator, then C's for a kernel that stores C with the TMA
/// engine (`c_box`), in one buffer (the kernel reads them from "global memory", as on the GPU).
fn tensor_maps<T, C>(
    tma: &TmaOperands,
    (shape, batch): (&Shape, &Batch),
    (a, b, c): (&[T], &[T], &[C]),
) -> Result<Vec<TensorMap>> {
    let bytes = size_of::<T>() as u32;
    let [a_spec, b_spec] = tma.specs(shape, batch, bytes, a.as_ptr() as u64, b.as_ptr() as u64);
    let c_spec = tma.c_spec(shape, batch, size_of::<C>() as u32, c.as_ptr() as u64);
    [Some(a_spec), Some(b_spec), c_spec]
        .into_iter()
        .zip(["A", "B", "C"])
        .filter_map(|(spec, name)| spec.map(|s| (s, name)))
        .map(|(spec, name)| {
            spec.encode_for_emulator()
                .map_err(|e| anyhow!("{name}'s tensor map: {e}"))
        })
        .collect()
}

/// The arguments of a launch before C: m, n, k, alpha, A, lda, B, ldb, beta.
type Args<'a, T> = (
    u32,
    u32,
    u32,
    <T as Scalar>::Factor,
    &'a [T],
    u32,
    &'a [T],
    u32,
    <T as Scalar>::Factor,
);

/// Runs `entry` over host buffers with its geometry and blocks per cluster (along x), C named
/// for the emulator's reports.
fn emulate<T: Scalar>(
    (entry, planted): (&str, Option<EmulatedBody<T::Args>>),
    (g, cluster, early): (Geometry, u32, bool),
    (m, n, k, alpha, a, lda, b, ldb, beta): Args<'_, T>,
    (c_name, c, ldc, (batch, (layout, groups, table))): (&'static str, &mut [T], u32, Batched),
    (maps, scratch): (Option<&[TensorMap]>, &[Buffer]),
    (epilogue, bias, amax): FusedOperands<'_, T>,
    step: Option<&Step>,
) -> Result<()> {
    let body = kernels_gpu::entry::find(entry)
        .ok_or_else(|| anyhow!("entry point `{entry}` is not in the kernel table"))?;
    let body = T::kernel_body(body).ok_or_else(|| {
        anyhow!(
            "entry point `{entry}` does not take {} elements",
            T::DTYPE.name()
        )
    })?;
    let body = planted.unwrap_or(body);
    let args = T::kernel_args(
        m,
        n,
        k,
        alpha,
        a.as_ptr(),
        lda,
        b.as_ptr(),
        ldb,
        beta,
        c.as_mut_ptr(),
        ldc,
        (epilogue, bias.as_ptr(), amax),
        (
            batch,
            Groups {
                layout,
                count: groups,
                table: GlobalWords::new(table.as_ptr()),
            },
        ),
    );
    // A and B may be the same buffer (split-k's reduction reads the workspace as both).
    let mut buffers = vec![buffer("A", a), buffer(c_name, c)];
    if b.as_ptr() != a.as_ptr() {
        buffers.push(buffer("B", b));
    }
    if !bias.is_empty() {
        buffers.push(buffer("bias", bias));
    }
    if !table.is_empty() {
        buffers.push(buffer("group table", table));
    }
    if !amax.is_null() {
        buffers.push(amax_buffer(amax));
    }
    let maps_at = maps.map_or(0, |m| {
        buffers.push(buffer("tensor maps", m));
        m.as_ptr() as usize
    });
    buffers.extend(scratch.iter().cloned());
    if matches!(body, EmulatedBody::TensorMaps(_)) && maps.is_none() {
        bail!("`{entry}` reads A and B through tensor maps, and its registry row has none");
    }
    // The kernel runs on several worker threads; GemmArgs holds raw pointers, so it travels as
    // an address. The buffers outlive the launch, and every access is bounds-checked.
    let args_at = &args as *const T::Args as usize;
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
        let args = unsafe { *(args_at as *const T::Args) };
        match body {
            EmulatedBody::Plain(f) => unsafe { f(args) },
            EmulatedBody::TensorMaps(f) => unsafe { f(args, maps_at as *const TensorMap) },
        }
    };
    let shape = LaunchShape {
        grid: g.grid,
        block: g.block,
        shared_bytes: g.shared_bytes,
        cluster: (cluster, 1),
    };
    // Started early, the kernel ahead may still write everything but the tensor maps (the
    // host writes those).
    let written: Vec<&str> = buffers
        .iter()
        .map(|b| b.name)
        .filter(|name| early && *name != "tensor maps")
        .collect();
    emu::launch_dependent(entry, shape, &buffers, &written, &kernel)?;
    Ok(())
}

/// One launch of an FP8 kernel over `ops` into `c` (C on entry, D on return); with the amax
/// epilogue, the GEMM raises `amax[0]` and the last step leaves D's amax and scale in the
/// other two words, as [`launch_on`]'s.
pub fn launch_fp8(
    launch: &Launch,
    shape: &Shape,
    scalars: (f32, f32),
    ops: &Fp8Operands<'_>,
    (c, amax): (&mut [half::bf16], &mut [u32; 3]),
) -> Result<()> {
    use kernels_gpu::entry::KernelBody;
    let Launch::Kernel { entry, .. } = launch else {
        bail!(
            "{} is not an FP8 kernel (cuBLASLt runs only on a GPU)",
            launch.name()
        );
    };
    let Some(KernelBody::E4m3TensorMaps(body)) = kernels_gpu::entry::find(entry) else {
        bail!("entry point `{entry}` is not an FP8 kernel of the kernel table");
    };
    launch_fp8_body(launch, body, shape, scalars, ops, (c, amax))
}

/// [`launch_fp8`] with the kernel's body given: `launch`'s geometry and tensor maps, another
/// body (a test's kernel with a planted bug).
pub fn launch_fp8_body(
    launch: &Launch,
    body: unsafe fn(kernels_gpu::gemm::Fp8GemmArgs, *const TensorMap),
    shape: &Shape,
    (alpha, beta): (f32, f32),
    ops: &Fp8Operands<'_>,
    (c, amax_words): (&mut [half::bf16], &mut [u32; 3]),
) -> Result<()> {
    use kernels_gpu::device::half::{Bf16, GlobalHalf, GlobalHalfMut};
    use kernels_gpu::device::Global;
    use kernels_gpu::fused::Fused;
    use kernels_gpu::gemm::Fp8GemmArgs;
    let Launch::Kernel {
        entry,
        geometry,
        tma: Some(tma),
        ..
    } = launch
    else {
        bail!("{} is not a TMA kernel's launch", launch.name());
    };
    let mut g = *geometry;
    g.grid = tma.grid(g, EMULATED_MULTIPROCESSORS);
    let layers = ops.groups.layers(shape);
    let mut maps = tensor_maps(tma, (shape, &layers), (ops.a, ops.b, &c[..]))?;
    let (workspace, counters) = stream_k_scratch(tma, (shape, 1), g.grid, &mut maps);
    let mut buffers = vec![
        buffer("A", ops.a),
        buffer("B", ops.b),
        buffer("A's scales", ops.scale_a),
        buffer("B's scales", ops.scale_b),
        buffer("C", c),
        buffer("tensor maps", &maps),
    ];
    if tma.stream_k.is_some() {
        buffers.push(buffer("stream-k workspace", &workspace));
        buffers.push(buffer("stream-k counters", &counters));
    }
    if ops.groups.grouped() {
        buffers.push(buffer("group table", ops.table));
    }
    let (epilogue, bias) = ops.fused;
    if !bias.is_empty() {
        buffers.push(buffer("bias", bias));
    }
    let amax = if epilogue.amax() {
        buffers.push(amax_buffer(amax_words.as_mut_ptr()));
        amax_words.as_mut_ptr()
    } else {
        std::ptr::null_mut()
    };
    let args = Fp8GemmArgs {
        m: shape.m,
        n: shape.n,
        k: shape.k,
        alpha,
        a: ops.a.as_ptr().cast(),
        lda: shape.lda,
        b: ops.b.as_ptr().cast(),
        ldb: shape.ldb,
        beta,
        c: GlobalHalfMut::new(c.as_mut_ptr().cast::<Bf16>()),
        ldc: shape.ldc,
        scale_a: Global::new(ops.scale_a.as_ptr()),
        scale_b: Global::new(ops.scale_b.as_ptr()),
        fused: Fused {
            epilogue,
            bias: GlobalHalf::new(bias.as_ptr().cast::<Bf16>()),
            amax,
        },
        batch: ops.groups.members(shape),
        groups: Groups {
            layout: ops.groups.layout,
            count: ops.groups.count,
            table: GlobalWords::new(ops.table.as_ptr()),
        },
    };
    // The kernel runs on several worker threads; the arguments travel as addresses.
    let (args_at, maps_at) = (&args as *const Fp8GemmArgs as usize, maps.as_ptr() as usize);
    let shape = LaunchShape {
        grid: g.grid,
        block: g.block,
        shared_bytes: g.shared_bytes,
        cluster: (tma.cluster, 1),
    };
    emu::launch(entry, shape, &buffers, &move || unsafe {
        body(
            *(args_at as *const Fp8GemmArgs),
            maps_at as *const TensorMap,
        )
    })?;
    // Every launch leaves the counters as it found them: the next one relies on it.
    if counters.iter().any(|&c| c != 0) {
        bail!("`{entry}` left stream-k counters nonzero ({counters:?}): the next launch would add its parts wrongly");
    }
    drop(workspace);
    if epilogue.amax() {
        emulate_amax_scale(amax_words)?;
    }
    Ok(())
}

/// The timing protocol of [`run`] for an FP8 kernel: timed launches, then one on `ops.c`.
pub fn run_fp8(
    launch: &Launch,
    shape: &Shape,
    scalars: (f32, f32),
    ops: &Fp8Operands<'_>,
    timing: Timing,
) -> Result<Measured<half::bf16>> {
    let (mut c, mut amax) = (ops.c.to_vec(), AMAX_ZEROED);
    let mut times_ms = Vec::with_capacity(timing.iters);
    for _ in 0..timing.warmup {
        launch_fp8(launch, shape, scalars, ops, (&mut c, &mut amax))?;
    }
    while timing.wants_more(times_ms.len(), times_ms.iter().sum()) {
        let start = Instant::now();
        launch_fp8(launch, shape, scalars, ops, (&mut c, &mut amax))?;
        times_ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let uploaded_c = ops.c.to_vec();
    let mut result = uploaded_c.clone();
    if timing.check {
        launch_fp8(launch, shape, scalars, ops, (&mut result, &mut amax))?;
    }
    Ok(Measured {
        times_ms,
        uploaded_c,
        result,
        amax: (timing.check && ops.fused.0.amax()).then(|| amax_of(&amax)),
    })
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
        Launch::Kernel {
            entry, geometry, ..
        } if p.flops() / 2.0 * launches as f64 >= SHOW_PROGRESS_FROM => {
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
    let operands = (
        &inputs.a.data[..],
        &inputs.b.data[..],
        &inputs.bias[..],
        &inputs.groups[..],
    );
    // The amax's words live across the launches, as a GPU plan's do.
    let mut amax = AMAX_ZEROED;
    let mut once = |c: &mut [T]| launch_on(launch, p, operands, (c, &mut amax), step);
    for _ in 0..timing.warmup {
        once(&mut c)?;
    }
    while timing.wants_more(times_ms.len(), times_ms.iter().sum()) {
        let start = Instant::now();
        once(&mut c)?;
        times_ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let uploaded_c = inputs.c_for_checked_run(p.beta);
    let mut result = uploaded_c.clone();
    if timing.check {
        once(&mut result)?;
    }
    if let Some(step) = owned {
        step.finish();
    }
    Ok(Measured {
        times_ms,
        uploaded_c,
        result,
        amax: (timing.check && p.epilogue.amax()).then(|| amax_of(&amax)),
    })
}
