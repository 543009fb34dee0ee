//! A launch prepared once and enqueued many times ([`Prepared`]): its function and grid, the
//! tensor maps of every set of buffers it was bound to, the passes around the GEMM (operand
//! copies, 3xTF32's ranges, split-k's reduction, the amax's last step, the unfused epilogue),
//! stream-k's scratch and a tile queue's counter, and cuBLAS as the yardstick on the same
//! buffers.
use super::cublas::{cublas_gemm, cublas_half_type, cublas_ops};
use super::passes::{
    enqueue_amax_scale, tile_queue, AmaxPass, OperandCopy, RangesPass, StreamKScratch,
};
use super::Gpu;
use crate::launch::{Fp8Groups, Fp8Pointers, Launch, Pointwise, Reduce};
use crate::problem::{Problem, Scalar, Transpose};
use crate::registry::CublasMath;
use anyhow::{anyhow, bail, Context as _, Result};
use cust::error::CudaError;
use cust::function::Function;
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::stream::Stream;
use kernels_gpu::device::tma::{Swizzle, TensorMap};
use kernels_gpu::gemm::{Batch, Dtype, GroupLayout};
use kernels_gpu::registry::{Shape, Target, TmaOperands};
use kernels_gpu::variants::bias_activation;

/// The words of A's and B's tensor maps (and C's, for a kernel that stores C with the TMA
/// engine), 16 each, then `after` (stream-k's scratch addresses): what a TMA kernel reads
/// through its `maps` pointer. Host work only (`cuTensorMapEncodeTiled`).
fn encode_tensor_maps(
    tma: &TmaOperands,
    (shape, batch): (&Shape, &Batch),
    dtype: Dtype,
    (a, b, c): (u64, u64, u64),
    after: &[u64],
) -> Result<Vec<u64>> {
    use cudarc::driver::sys::{
        cuTensorMapEncodeTiled, CUresult, CUtensorMap, CUtensorMapDataType,
        CUtensorMapFloatOOBfill, CUtensorMapInterleave, CUtensorMapL2promotion, CUtensorMapSwizzle,
    };
    let [a_spec, b_spec] = tma.specs(shape, batch, dtype.bytes(), a, b);
    let c_spec = tma.c_spec(shape, batch, dtype.output().bytes(), c);
    let specs: Vec<_> = [Some(a_spec), Some(b_spec), c_spec]
        .into_iter()
        .zip([dtype, dtype, dtype.output()])
        .zip(["A", "B", "C"])
        .filter_map(|((spec, dtype), name)| spec.map(|s| (s, dtype, name)))
        .collect();
    let mut maps = vec![TensorMap { opaque: [0; 16] }; specs.len()];
    for (map, (spec, dtype, name)) in maps.iter_mut().zip(&specs) {
        spec.validate()
            .map_err(|e| anyhow!("{name}'s tensor map: {e}"))?;
        let swizzle = match spec.swizzle {
            Swizzle::None => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
            Swizzle::B32 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
            Swizzle::B64 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
            Swizzle::B128 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        };
        // By the dtype, not the element size: bf16 and f16 are both 2 bytes, and the TMA
        // engine needs the type (for the out-of-bounds fill, and its checks).
        let data_type = match dtype {
            Dtype::F32 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            Dtype::F64 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
            Dtype::Bf16 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            Dtype::F16 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            // The engine has no FP8 type: it moves bytes, and zero bytes are +0.0 in e4m3.
            Dtype::E4m3 | Dtype::E4m3E5m2 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8,
        };
        // Rank 3: a matrix per layer, the members of a batch (one for a single problem).
        let dims = [spec.dims[0], spec.dims[1], spec.layers];
        let strides = [spec.row_stride_bytes, spec.layer_stride_bytes];
        let (box_dims, element_strides) = ([spec.box_dims[0], spec.box_dims[1], 1], [1u32; 3]);
        // SAFETY: every array has the rank's length (strides: rank - 1), and `map` is a
        // 128-byte, 128-aligned object as `CUtensorMap` is.
        let status = unsafe {
            cuTensorMapEncodeTiled(
                (map as *mut TensorMap).cast::<CUtensorMap>(),
                data_type,
                3,
                spec.address as *mut core::ffi::c_void,
                dims.as_ptr(),
                strides.as_ptr(),
                box_dims.as_ptr(),
                element_strides.as_ptr(),
                CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                swizzle,
                CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        };
        if status != CUresult::CUDA_SUCCESS {
            bail!("cuTensorMapEncodeTiled for {name} failed: {status:?} ({spec:?})");
        }
    }
    // As 16 words a map: the allocation is 256-byte aligned, so each map is 128-byte aligned.
    // Then what the kernel reads after them (stream-k's scratch).
    Ok(maps
        .iter()
        .flat_map(|m| m.opaque)
        .chain(after.iter().copied())
        .collect())
}

/// A launch ready to run on its buffers ([`Gpu::prepare`]), or on any buffers it is bound to
/// ([`Gpu::prepare_unbound`], then [`Prepared::bind`]).
pub struct Prepared<'g> {
    gpu: &'g Gpu,
    launch: Launch,
    /// The problem as the kernel sees it: with the copies' leading dimensions.
    problem: Problem,
    /// A, B and C as the kernel reads them (A or B the copy's, if copied): set by `bind`.
    operands: Option<(u64, u64, u64)>,
    function: Option<Function<'g>>,
    reduce: Option<(Function<'g>, Reduce)>,
    /// The epilogue as a kernel of its own after the GEMM (`unfused`).
    unfused: Option<(Function<'g>, Pointwise)>,
    cublas: Option<cudarc::cublas::sys::cublasHandle_t>,
    /// cuBLAS with the problem's fused epilogue: cuBLASLt.
    cublas_lt: Option<crate::cublaslt::CublasLtEpilogue>,
    /// The fused epilogue's bias vector (0: none): set by [`Prepared::bind_bias`].
    bias: u64,
    /// A grouped problem's table on the device (0: none), and its groups as the host reads the
    /// table (cuBLAS's loop of one call per group): set by [`Prepared::bind_groups`].
    group_table: u64,
    group_runs: Vec<crate::problem::GroupColumns>,
    /// `cublas-grouped`'s arguments, made when the buffers and the table are bound.
    grouped_call: Option<GroupedCall>,
    workspace: Option<DeviceBuffer<u8>>,
    tma: Option<TmaOperands>,
    maps: Option<MapSlots>,
    /// Blocks of a persistent grid.
    resident: u32,
    /// The GEMM kernel launched early (a programmatic dependent launch): set by
    /// [`Prepared::start_early`] for a kernel whose row allows it.
    early_start: bool,
    /// Stream-k's workspace and counters, which the tensor-map buffer points to.
    _stream_k: Option<StreamKScratch>,
    /// A tile queue's counter ([`tile_queue`]), which the tensor-map buffer points to.
    _queue: Option<DeviceBuffer<u32>>,
    /// 3xTF32's pass before the kernel.
    ranges: Option<RangesPass<'g>>,
    /// The amax epilogue's words and its last step after the GEMM.
    amax: Option<AmaxPass<'g>>,
    /// The copies the kernel reads A and B from, made on each enqueue.
    copies: Vec<OperandCopy<'g>>,
}

/// The tensor maps of every set of operands a prepared TMA launch was bound to, each set in a
/// slot of its own in one device buffer, written once and never again: the maps hold the
/// operands' addresses, so a new set of buffers needs new maps, and a slot that a captured CUDA
/// graph reads must keep its contents for the graph's life. A new set is encoded on the host
/// into its slot of a page-locked staging buffer and copied to the device on the stream, before
/// the kernel that reads it (`cuMemcpyHtoDAsync`: asynchronous, and captured as a graph's copy
/// node), so binding never allocates or synchronises.
struct MapSlots {
    tma: TmaOperands,
    /// What the kernel reads after its maps (stream-k's scratch addresses).
    after: Vec<u64>,
    /// Dropped first: freeing device memory waits for the device, so no copy still reads the
    /// staging memory when it is freed.
    device: DeviceBuffer<u64>,
    staging: cust::memory::LockedBuffer<u64>,
    /// The operands of each filled slot, in slot order.
    bound: Vec<(u64, u64, u64)>,
    /// The slot of the operands bound last.
    current: usize,
}

impl MapSlots {
    /// Three maps of 16 words, then `after`; rounded up to 128 bytes, the alignment a map needs.
    fn words(after: &[u64]) -> usize {
        (3 * 16 + after.len()).next_multiple_of(16)
    }

    fn new(tma: TmaOperands, after: Vec<u64>, slots: usize) -> Result<Self> {
        let len = Self::words(&after) * slots.max(1);
        let staging = cust::memory::LockedBuffer::new(&0u64, len)
            .map_err(|e| anyhow!("cannot allocate page-locked memory for the tensor maps: {e}"))?;
        // Not zeroed: a memset would go to the legacy stream, unordered with the slots' copies
        // on ours, and every slot is written before a kernel reads it.
        // SAFETY: u64 has no invalid bit patterns.
        let device = unsafe { DeviceBuffer::uninitialized(len) }
            .map_err(|e| anyhow!("cannot allocate the tensor maps' device buffer: {e}"))?;
        Ok(MapSlots {
            tma,
            after,
            device,
            staging,
            bound: Vec::new(),
            current: 0,
        })
    }

    /// Makes `operands`' maps current: their slot if they had one, else a new slot, filled on
    /// `stream`.
    fn bind(
        &mut self,
        (shape, batch): (&Shape, &Batch),
        dtype: Dtype,
        operands: (u64, u64, u64),
        stream: &Stream,
    ) -> Result<()> {
        if let Some(slot) = self.bound.iter().position(|b| *b == operands) {
            self.current = slot;
            return Ok(());
        }
        let words = Self::words(&self.after);
        let slot = self.bound.len();
        if (slot + 1) * words > self.staging.len() {
            bail!(
                "this plan already holds the tensor maps of {slot} different sets of buffers, all it has room for: make another plan for more"
            );
        }
        let encoded = encode_tensor_maps(&self.tma, (shape, batch), dtype, operands, &self.after)?;
        let range = slot * words..slot * words + encoded.len();
        self.staging[range.clone()].copy_from_slice(&encoded);
        use cudarc::driver::sys::{cuMemcpyHtoDAsync_v2, CUresult};
        let to = self.device.as_device_ptr().as_raw() + (range.start * 8) as u64;
        // SAFETY: the slot lies inside both buffers; the staging memory is page-locked and
        // lives as long as the device buffer, and this slot's words are never written again.
        let status = unsafe {
            cuMemcpyHtoDAsync_v2(
                to,
                self.staging[range.clone()].as_ptr().cast(),
                encoded.len() * 8,
                stream.as_inner() as _,
            )
        };
        if status != CUresult::CUDA_SUCCESS {
            bail!("copying the tensor maps to the device failed: {status:?}");
        }
        self.bound.push(operands);
        self.current = slot;
        Ok(())
    }

    /// The device address of the current maps.
    fn current(&self) -> u64 {
        self.device.as_device_ptr().as_raw() + (self.current * Self::words(&self.after) * 8) as u64
    }
}

impl Prepared<'_> {
    /// Points the launch at device buffers A, B and C (checked by the caller): the operand
    /// copies read from A and B, the tensor maps of a TMA kernel describe them (a new set's
    /// maps are written on the stream, into a slot of their own). Allocates nothing, waits for nothing.
    pub fn bind(&mut self, (a, b, c): (u64, u64, u64)) -> Result<()> {
        let (mut a, mut b) = (a, b);
        for copy in &mut self.copies {
            let to = copy.to.as_device_ptr().as_raw();
            if copy.what == "A" {
                (copy.from, a) = (a, to);
            } else {
                (copy.from, b) = (b, to);
            }
        }
        if let Some(maps) = &mut self.maps {
            let p = &self.problem;
            maps.bind((&p.shape, &p.batch), p.dtype, (a, b, c), &self.gpu.stream)?;
        }
        self.operands = Some((a, b, c));
        self.make_grouped_call()
    }

    /// Launches the GEMM kernel early from now on, where its row allows it
    /// ([`Launch::starts_early`]): it may start while the kernel ahead of it on the stream
    /// finishes, prefetches its weights into L2, and waits for that kernel before it touches
    /// B or C. Returns whether it will (false for any other kernel, and for cuBLAS).
    pub fn start_early(&mut self) -> bool {
        self.early_start = self.launch.starts_early();
        self.early_start
    }

    /// Points the fused epilogue at its bias vector on the device (checked by the caller: as
    /// long as [`Problem::bias_len`] says).
    pub fn bind_bias(&mut self, bias: u64) {
        self.bias = bias;
    }

    /// Points a grouped problem's kernel at its table on the device, `table` as the host holds
    /// it (cuBLAS's yardstick runs a call per group it names).
    pub fn bind_groups(&mut self, device_table: u64, table: &[u32]) -> Result<()> {
        self.group_table = device_table;
        self.group_runs = self.problem.group_columns(table);
        self.make_grouped_call()
    }

    /// Where each run of a grouped problem's columns lies in the bound buffers: its A (its
    /// group's layer), its B and C (its member's, from its first column), and its columns.
    fn group_operands(&self, (a, b, c): (u64, u64, u64)) -> Vec<(u64, u64, u64, u32)> {
        let p = &self.problem;
        let (s, batch, bytes) = (p.shape, p.batch, p.dtype.bytes() as u64);
        let b_step = match p.transposes.transb {
            Transpose::No => s.ldb as u64,
            Transpose::Yes => 1,
        };
        self.group_runs
            .iter()
            .map(|r| {
                let (g, member, first) = (r.group as u64, r.member as u64, r.first as u64);
                (
                    a + g * batch.stride_a * bytes,
                    b + (member * batch.stride_b + first * b_step) * bytes,
                    c + (member * batch.stride_c + first * s.ldc as u64) * bytes,
                    r.columns,
                )
            })
            .collect()
    }

    /// `cublas-grouped`'s arguments for the bound buffers: a group per run of a grouped
    /// problem's columns, else one group of every member; its pointer arrays on the device.
    fn make_grouped_call(&mut self) -> Result<()> {
        let (Launch::Cublas(CublasMath::Grouped), Some((a, b, c))) = (&self.launch, self.operands)
        else {
            return Ok(());
        };
        let p = &self.problem;
        let (s, batch, bytes) = (p.shape, p.batch, p.dtype.bytes() as u64);
        // (A, B and C of the group's first problem, its columns, problems in the group: one
        // group of every member, each a stride on, when the problem is not grouped)
        let groups: Vec<(u64, u64, u64, u32, u32)> = if p.groups == GroupLayout::None {
            vec![(a, b, c, s.n, batch.count)]
        } else {
            let runs = self.group_operands((a, b, c));
            runs.into_iter()
                .map(|(a, b, c, n)| (a, b, c, n, 1))
                .collect()
        };
        let mut pointers = [Vec::new(), Vec::new(), Vec::new()];
        for &(a, b, c, _, count) in &groups {
            for i in 0..count as u64 {
                pointers[0].push(a + i * batch.stride_a * bytes);
                pointers[1].push(b + i * batch.stride_b * bytes);
                pointers[2].push(c + i * batch.stride_c * bytes);
            }
        }
        let all: Vec<u64> = pointers.concat();
        let per = |f: fn(&(u64, u64, u64, u32, u32)) -> i32| groups.iter().map(f).collect();
        let (transa, transb) = cublas_ops(p.transposes);
        self.grouped_call = Some(GroupedCall {
            ops: (vec![transa; groups.len()], vec![transb; groups.len()]),
            m: vec![s.m as i32; groups.len()],
            n: per(|g| g.3 as i32),
            k: vec![s.k as i32; groups.len()],
            ld: (
                vec![s.lda as i32; groups.len()],
                vec![s.ldb as i32; groups.len()],
                vec![s.ldc as i32; groups.len()],
            ),
            scale: (
                vec![p.alpha as f32; groups.len()],
                vec![p.beta as f32; groups.len()],
            ),
            sizes: per(|g| g.4 as i32),
            problems: all.len() / 3,
            pointers: DeviceBuffer::from_slice(&all)
                .context("uploading cublas-grouped's pointer arrays failed")?,
        });
        Ok(())
    }

    /// Enqueues the GEMM on the backend's stream (a kernel, split-k's two, or cuBLAS's), with
    /// alpha and beta as the kernels take them: f32 for the 16-bit types, then the amax's last
    /// step if the epilogue has one. Returns at once.
    pub fn enqueue<T: Scalar>(&self) -> Result<()> {
        self.enqueue_gemm::<T>()?;
        match &self.amax {
            Some(amax) => amax.enqueue(&self.gpu.stream),
            None => Ok(()),
        }
    }

    /// Where the amax epilogue leaves D's amax and its e4m3 scale: two f32 on the device,
    /// written by each enqueue in stream order; `None` without the amax.
    pub fn amax_address(&self) -> Option<u64> {
        self.amax
            .as_ref()
            .map(|a| a.words.as_device_ptr().as_raw() + kernels_gpu::fused::AMAX_RESULT_OFFSET)
    }

    /// D's amax and its e4m3 scale as the last enqueue left them (waits for the stream);
    /// `None` without the amax.
    pub fn read_amax(&self) -> Result<Option<[f32; 2]>> {
        let Some(amax) = &self.amax else {
            return Ok(None);
        };
        self.gpu.stream.synchronize()?;
        let mut words = [0u32; 3];
        amax.words
            .copy_to(&mut words[..])
            .context("reading the amax's words failed")?;
        Ok(Some(kernels_gpu::fused::amax_of(&words)))
    }

    /// [`Prepared::enqueue`]'s GEMM: every pass that writes C.
    fn enqueue_gemm<T: Scalar>(&self) -> Result<()> {
        let (p, s) = (&self.problem, self.problem.shape);
        let (alpha, beta) = (T::factor(p.alpha), T::factor(p.beta));
        let Some((a_ptr, b_ptr, c_ptr)) = self.operands else {
            bail!("{} is not bound to buffers", self.launch.name());
        };
        for copy in &self.copies {
            copy.enqueue(p.dtype.bytes(), &self.gpu.stream)?;
        }
        if let Some(ranges) = &self.ranges {
            ranges.enqueue(&s, (a_ptr, b_ptr), &self.gpu.stream)?;
        }
        let stream = &self.gpu.stream;
        let name = self.launch.name();
        if let Some(lt) = &self.cublas_lt {
            return unsafe { lt.enqueue(stream.as_inner(), (a_ptr, b_ptr, c_ptr), self.bias) };
        }
        // The fused epilogue goes to the pass that writes C last: the GEMM, split-k's reduction
        // or the unfused kernel after the GEMM.
        let amax = self
            .amax
            .as_ref()
            .map_or(0, |a| a.words.as_device_ptr().as_raw());
        let fused = (self.bias, p.epilogue.0, amax);
        let last_writes = self.reduce.is_none() && self.unfused.is_none();
        match (&self.launch, &self.function, self.cublas) {
            (Launch::Kernel { geometry: g, .. }, Some(function), _) => {
                // One GEMM launch into `out` (C, or split-k's workspace: ld m, alpha 1, beta 0);
                // TMA kernels take their tensor maps and a persistent grid, the 16-bit ones
                // their epilogue too.
                let gemm = |out: u64, ld: u32, alpha: T::Factor, beta: T::Factor| -> Result<()> {
                    Ok(match (&self.tma, &self.maps) {
                        (Some(t), Some(maps)) if p.dtype.is_16bit() => {
                            let grid = t.grid(*g, self.resident);
                            let maps = maps.current();
                            let (bias, epilogue, amax) =
                                if last_writes { fused } else { (0, 0, 0) };
                            let members = p.members();
                            let (groups, count) = (p.groups as u32, p.batch.count);
                            let params = [
                                param(&s.m),
                                param(&s.n),
                                param(&s.k),
                                param(&alpha),
                                param(&a_ptr),
                                param(&s.lda),
                                param(&b_ptr),
                                param(&s.ldb),
                                param(&beta),
                                param(&out),
                                param(&ld),
                                param(&maps),
                                param(&bias),
                                param(&epilogue),
                                param(&amax),
                                param(&members.count),
                                param(&members.stride_c),
                                param(&groups),
                                param(&count),
                                param(&self.group_table),
                            ];
                            let dims = ((grid.0, grid.1), g.block, g.shared_bytes);
                            let early = self.early_start;
                            return unsafe { launch_ex(function, dims, stream, &params, early) };
                        }
                        (Some(t), Some(maps)) => {
                            let grid = t.grid(*g, self.resident);
                            let maps = maps.current();
                            let members = p.members();
                            unsafe {
                                launch!(function<<<(grid.0, grid.1, 1), (g.block.0, g.block.1, 1), g.shared_bytes, stream>>>(
                                    s.m, s.n, s.k, alpha, a_ptr, s.lda, b_ptr, s.ldb, beta, out, ld, maps,
                                    members.count, members.stride_c
                                ))
                            }
                        }
                        // A strided batch: the `…_batch` entry point, a layer of the grid per member.
                        _ if p.batch.is_batched() => unsafe {
                            let b = &p.batch;
                            launch!(function<<<(g.grid.0, g.grid.1, b.count), (g.block.0, g.block.1, 1), g.shared_bytes, stream>>>(
                                s.m, s.n, s.k, alpha, a_ptr, s.lda, b_ptr, s.ldb, beta, out, ld,
                                b.stride_a, b.stride_b, b.stride_c
                            ))
                        },
                        _ => unsafe {
                            launch!(function<<<(g.grid.0, g.grid.1, 1), (g.block.0, g.block.1, 1), g.shared_bytes, stream>>>(
                                s.m, s.n, s.k, alpha, a_ptr, s.lda, b_ptr, s.ldb, beta, out, ld
                            ))
                        },
                    }?)
                };
                match (&self.reduce, &self.workspace) {
                    (Some((reduce_fn, r)), Some(w)) => {
                        // Partial products into the workspace, then
                        // C = alpha * their sum + beta * C.
                        let (w_ptr, rg) = (w.as_device_ptr().as_raw(), r.geometry);
                        gemm(w_ptr, s.m, T::factor(1.0), T::factor(0.0))
                            .with_context(|| format!("launching {name} failed"))?;
                        // The reduction writes C last unless the unfused pass follows it.
                        let (bias, epilogue, amax) = if self.unfused.is_none() {
                            fused
                        } else {
                            (0, 0, 0)
                        };
                        let reduced = if p.dtype.is_16bit() {
                            unsafe {
                                launch!(reduce_fn<<<(rg.grid.0, rg.grid.1, 1), (rg.block.0, rg.block.1, 1), rg.shared_bytes, stream>>>(
                                    s.m, s.n, r.splits, alpha, w_ptr, s.m, w_ptr, s.m, beta, c_ptr, s.ldc, bias, epilogue, amax
                                ))
                            }
                        } else {
                            unsafe {
                                launch!(reduce_fn<<<(rg.grid.0, rg.grid.1, 1), (rg.block.0, rg.block.1, 1), rg.shared_bytes, stream>>>(
                                    s.m, s.n, r.splits, alpha, w_ptr, s.m, w_ptr, s.m, beta, c_ptr, s.ldc
                                ))
                            }
                        };
                        reduced.with_context(|| format!("launching {} failed", r.entry))?;
                    }
                    _ => gemm(c_ptr, s.ldc, alpha, beta)
                        .with_context(|| format!("launching {name} failed"))?,
                }
                let Some((pointwise, u)) = &self.unfused else {
                    return Ok(());
                };
                // C = act(C + bias): the arguments of the reduction with no parts.
                let ug = bias_activation::geometry(s.m, s.n, s.ldc, c_ptr % 4 == 0);
                let (bias, epilogue, amax) = fused;
                let (one, zero) = (1f32, 0f32);
                unsafe {
                    launch!(pointwise<<<(ug.grid.0, ug.grid.1, 1), (ug.block.0, ug.block.1, 1), ug.shared_bytes, stream>>>(
                        s.m, s.n, 0u32, one, 0u64, s.m, 0u64, s.m, zero, c_ptr, s.ldc, bias, epilogue, amax
                    ))
                }
                .with_context(|| format!("launching {} failed", u.entry))
            }
            (Launch::Cublas(CublasMath::Grouped), _, Some(handle)) => {
                let call = self.grouped_call.as_ref().expect("bound before enqueued");
                unsafe { call.enqueue(handle, p.dtype) }
            }
            (_, _, Some(handle)) if p.groups != GroupLayout::None => {
                // The yardstick of a grouped GEMM: a call per group, as a program without one
                // makes them.
                for (a, b, c, n) in self.group_operands((a_ptr, b_ptr, c_ptr)) {
                    unsafe { cublas_gemm(handle, p, n, (a, b, c), &Batch::ONE) }
                        .map_err(|e| anyhow!("cuBLAS gemm of a group failed: {e:?}"))?;
                }
                Ok(())
            }
            (_, _, Some(handle)) => {
                unsafe { cublas_gemm(handle, p, s.n, (a_ptr, b_ptr, c_ptr), &p.batch) }
                    .map_err(|e| anyhow!("cuBLAS gemm failed: {e:?}"))
            }
            _ => unreachable!("a kernel has a function, cuBLAS a handle"),
        }
    }
}

/// `cublasGemmGroupedBatchedEx`'s arguments: per group, on the host, its operations, sizes,
/// leading dimensions, alpha and beta and its count of problems; per problem, on the device, the
/// addresses of its A, B and C (three arrays one after the other).
struct GroupedCall {
    ops: (
        Vec<cudarc::cublas::sys::cublasOperation_t>,
        Vec<cudarc::cublas::sys::cublasOperation_t>,
    ),
    m: Vec<i32>,
    n: Vec<i32>,
    k: Vec<i32>,
    ld: (Vec<i32>, Vec<i32>, Vec<i32>),
    scale: (Vec<f32>, Vec<f32>),
    sizes: Vec<i32>,
    problems: usize,
    pointers: DeviceBuffer<u64>,
}

impl GroupedCall {
    /// The call, on the handle's stream (a grouped GEMM whose every column is padding has no
    /// group, and nothing to call).
    ///
    /// # Safety
    /// The pointer arrays name live buffers of the problem's sizes.
    unsafe fn enqueue(
        &self,
        handle: cudarc::cublas::sys::cublasHandle_t,
        dtype: Dtype,
    ) -> Result<()> {
        use cudarc::cublas::sys::{
            cublasComputeType_t, cublasGemmGroupedBatchedEx, cublasStatus_t,
        };
        if self.sizes.is_empty() {
            return Ok(());
        }
        let at = |i: usize| {
            (self.pointers.as_device_ptr().as_raw() + (i * self.problems * 8) as u64) as *const u64
        };
        let data_type = cublas_half_type(dtype);
        let status = unsafe {
            cublasGemmGroupedBatchedEx(
                handle,
                self.ops.0.as_ptr(),
                self.ops.1.as_ptr(),
                self.m.as_ptr(),
                self.n.as_ptr(),
                self.k.as_ptr(),
                self.scale.0.as_ptr().cast(),
                at(0).cast(),
                data_type,
                self.ld.0.as_ptr(),
                at(1).cast(),
                data_type,
                self.ld.1.as_ptr(),
                self.scale.1.as_ptr().cast(),
                at(2) as *const *mut std::ffi::c_void,
                data_type,
                self.ld.2.as_ptr(),
                self.sizes.len() as i32,
                self.sizes.as_ptr(),
                cublasComputeType_t::CUBLAS_COMPUTE_32F,
            )
        };
        if status != cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            bail!("cublasGemmGroupedBatchedEx failed: {status:?}");
        }
        Ok(())
    }
}

/// How many blocks of a kernel with clusters of `cluster` blocks can be resident at once
/// (`cuOccupancyMaxActiveClusters` times the cluster): a cluster's blocks must fit in one GPC,
/// so on an H100 with 132 multiprocessors fewer than 66 clusters of two may fit.
fn resident_cluster_blocks(
    function: &Function<'_>,
    geometry: &kernels_gpu::gemm::Geometry,
    cluster: u32,
    stream: &Stream,
) -> Result<u32> {
    use cudarc::driver::sys::{
        cuOccupancyMaxActiveClusters, CUlaunchAttribute, CUlaunchAttributeID, CUlaunchConfig,
        CUresult,
    };
    // SAFETY: zeroed C structs are valid (no attributes, null pointers) before being filled.
    let mut attribute: CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attribute.id = CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attribute.value.clusterDim.x = cluster;
    attribute.value.clusterDim.y = 1;
    attribute.value.clusterDim.z = 1;
    let config = CUlaunchConfig {
        gridDimX: geometry.grid.0.next_multiple_of(cluster),
        gridDimY: geometry.grid.1,
        gridDimZ: 1,
        blockDimX: geometry.block.0,
        blockDimY: geometry.block.1,
        blockDimZ: 1,
        sharedMemBytes: geometry.shared_bytes,
        hStream: stream.as_inner() as _,
        attrs: &mut attribute,
        numAttrs: 1,
    };
    let mut clusters = 0;
    // SAFETY: the function is loaded, the config points to one live attribute.
    let status =
        unsafe { cuOccupancyMaxActiveClusters(&mut clusters, function.to_raw() as _, &config) };
    if status != CUresult::CUDA_SUCCESS || clusters <= 0 {
        bail!("cuOccupancyMaxActiveClusters for clusters of {cluster} failed: {status:?} ({clusters} clusters)");
    }
    Ok(clusters as u32 * cluster)
}

/// Above 48 KiB of dynamic shared memory a kernel must opt in (`cudaFuncSetAttribute` with
/// `MaxDynamicSharedMemorySize`), or its launch fails with "invalid argument". The H100 allows
/// up to 227 KiB per block.
fn allow_dynamic_shared(function: &Function<'_>, bytes: u32) -> Result<()> {
    const DEFAULT_LIMIT: u32 = 48 * 1024;
    if bytes <= DEFAULT_LIMIT {
        return Ok(());
    }
    use cust::sys::{cuFuncSetAttribute, CUfunction_attribute, CUresult};
    let status = unsafe {
        cuFuncSetAttribute(
            function.to_raw(),
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            bytes as i32,
        )
    };
    if status != CUresult::CUDA_SUCCESS {
        bail!("the device refuses {bytes} bytes of dynamic shared memory per block ({status:?})");
    }
    Ok(())
}

/// Preparing launches: the GPU backend's side of [`Prepared`].
impl Gpu {
    /// A's and B's tensor maps for a TMA kernel, then C's for one that stores C with the TMA
    /// engine (`c_box`), encoded by the driver, in a device buffer. A and B hold `dtype`, C
    /// its [`Dtype::output`] (bf16 for FP8). One problem (the FP8 kernels have no batch).
    fn tensor_maps(
        &self,
        tma: &TmaOperands,
        (shape, layers): (&Shape, &Batch),
        dtype: Dtype,
        operands: (u64, u64, u64),
        after: &[u64],
    ) -> Result<DeviceBuffer<u64>> {
        let words = encode_tensor_maps(tma, (shape, layers), dtype, operands, after)?;
        DeviceBuffer::from_slice(&words).map_err(|e| anyhow!("cannot upload the tensor maps: {e}"))
    }

    /// `data` in a new device buffer, as its bits ([`Scalar::Bits`]).
    pub(super) fn upload<T: Scalar>(
        &self,
        what: &str,
        data: &[T],
        p: &Problem,
    ) -> Result<DeviceBuffer<T::Bits>> {
        DeviceBuffer::from_slice(T::as_bits(data)).map_err(|e| match e {
            CudaError::OutOfMemory => anyhow!(
                "out of device memory allocating {what} for {}×{}×{} {} (the three matrices need {:.2} GiB)",
                p.shape.m, p.shape.n, p.shape.k, p.dtype.name(),
                p.device_bytes() as f64 / (1u64 << 30) as f64
            ),
            e => anyhow!("cannot allocate {what} on the device: {e}"),
        })
    }

    /// Makes `launch` ready to run on device buffers A, B and C (addresses): its entry points
    /// loaded (and allowed their shared memory), cuBLAS's handle, split-k's workspace, the TMA
    /// kernels' tensor maps and the size of a persistent grid: what the timed runs and the
    /// library's calls then repeat with [`Prepared::enqueue`] alone.
    pub fn prepare<'g>(
        &'g self,
        launch: &Launch,
        p: &Problem,
        operands: (u64, u64, u64),
    ) -> Result<Prepared<'g>> {
        let mut prepared = self.prepare_unbound(launch, p, 1)?;
        prepared.bind(operands)?;
        Ok(prepared)
    }

    /// [`Gpu::prepare`] without the operands: everything that does not depend on where A, B
    /// and C lie, and room for the tensor maps of up to `buffer_sets` different sets of
    /// operands ([`Prepared::bind`]). What [`crate::api::Plan`] holds.
    pub fn prepare_unbound<'g>(
        &'g self,
        launch: &Launch,
        p: &Problem,
        buffer_sets: usize,
    ) -> Result<Prepared<'g>> {
        // Operands the kernel reads from copies: from here on the problem and the operands are
        // the copies', and each enqueue makes them first.
        let copies = match launch {
            Launch::Kernel {
                copies: Some(copies),
                ..
            } => [(copies.a, "A"), (copies.b, "B")]
                .into_iter()
                .filter_map(|(pitch, what)| pitch.map(|pitch| (pitch, what)))
                .map(|(pitch, what)| {
                    let bytes = pitch.copy_len() * p.dtype.bytes() as usize;
                    // SAFETY: written by the copy before any kernel reads it.
                    let to = unsafe { DeviceBuffer::<u8>::uninitialized(bytes) }.map_err(|e| {
                        anyhow!("cannot allocate the copy of {what} ({bytes} bytes): {e}")
                    })?;
                    // With the 16-bit kernels in their build; f32's and f64's in every one.
                    let build = if p.dtype.is_16bit() {
                        Target::Sm90a
                    } else {
                        Target::Portable
                    };
                    let (entry, geometry) = pitch.kernel(p.dtype)?;
                    let kernel = self.function(&entry, build)?;
                    Ok(OperandCopy {
                        pitch,
                        from: 0,
                        to,
                        what,
                        kernel,
                        geometry,
                    })
                })
                .collect::<Result<Vec<_>>>()?,
            _ => Vec::new(),
        };
        let p = &match launch {
            Launch::Kernel {
                copies: Some(copies),
                ..
            } => copies.problem_reading_them(p),
            _ => *p,
        };
        let function = match launch {
            Launch::Kernel {
                entry,
                geometry,
                target,
                ..
            } => {
                let function = self.function(entry, *target)?;
                allow_dynamic_shared(&function, geometry.shared_bytes)
                    .with_context(|| format!("preparing {entry}"))?;
                Some(function)
            }
            Launch::Cublas(_) => None,
            Launch::Cpu { entry, .. } => bail!("{entry} is a CPU variant: it runs on the host"),
        };
        let reduce = match launch {
            Launch::Kernel {
                reduce: Some(r),
                target,
                ..
            } => Some((self.function(&r.entry, *target)?, r.clone())),
            _ => None,
        };
        let unfused = match launch {
            Launch::Kernel {
                unfused: Some(u),
                target,
                ..
            } => Some((self.function(&u.entry, *target)?, (**u).clone())),
            _ => None,
        };
        // cuBLAS with a fused epilogue is cuBLASLt's.
        let (cublas, cublas_lt) = match launch {
            Launch::Cublas(_) if !p.epilogue.is_none() => {
                (None, Some(crate::cublaslt::CublasLtEpilogue::new(p)?))
            }
            Launch::Cublas(math) => (Some(self.cublas(*math)?), None),
            _ => (None, None),
        };
        let s = p.shape;
        // Split-k's partial products, as raw bytes: in the element type, or in f32 for the
        // 16-bit types (they accumulate in f32).
        let workspace = match &reduce {
            Some((_, r)) => Some(
                unsafe { DeviceBuffer::<u8>::uninitialized(r.workspace_bytes(s.m, s.n, p.dtype)) }
                    .map_err(|e| {
                        anyhow!(
                            "cannot allocate split-k's workspace ({} splits of {}×{}): {e}",
                            r.splits,
                            s.m,
                            s.n
                        )
                    })?,
            ),
            None => None,
        };
        let tma = match launch {
            Launch::Kernel { tma: Some(t), .. } => Some(*t),
            _ => None,
        };
        // A persistent grid has one block per multiprocessor, or with clusters as many as can
        // be resident at once: all the clusters of the grid must run together, or the last ones
        // wait for the first to finish their whole share of the tiles.
        let resident = match (&tma, &function, launch) {
            (Some(t), Some(f), Launch::Kernel { geometry, .. }) if t.cluster > 1 => {
                let reserved = self.reserved.get().next_multiple_of(t.cluster);
                let blocks = resident_cluster_blocks(f, geometry, t.cluster, &self.stream)?;
                blocks.saturating_sub(reserved).max(t.cluster)
            }
            _ => self.multiprocessors - self.reserved.get(),
        };
        let stream_k = match (&tma, launch) {
            (Some(t), Launch::Kernel { geometry, .. }) => {
                self.stream_k_scratch(t, (&s, p.batch.count), t.grid(*geometry, resident))?
            }
            _ => None,
        };
        let ranges = match (&tma, launch) {
            (Some(t), Launch::Kernel { target, .. }) if t.ranges => {
                Some(self.ranges_pass(&s, p.batch, *target)?)
            }
            _ => None,
        };
        let queue = match &tma {
            Some(t) if t.queue => Some(tile_queue()?),
            _ => None,
        };
        let amax = match launch {
            Launch::Kernel { target, .. } if p.epilogue.amax() => Some(AmaxPass {
                function: self.function(kernels_gpu::registry::AMAX_SCALE, *target)?,
                words: DeviceBuffer::zeroed(3)
                    .map_err(|e| anyhow!("cannot allocate the amax's words: {e}"))?,
            }),
            _ => None,
        };
        let maps = match tma {
            Some(tma) => {
                let mut after = stream_k.as_ref().map(|s| s.addresses()).unwrap_or_default();
                // The kernel reads the address right after its maps: nothing else may be there.
                for (address, what) in [
                    (ranges.as_ref().map(|r| r.words.as_device_ptr()), "ranges"),
                    (queue.as_ref().map(|q| q.as_device_ptr()), "a tile queue"),
                ] {
                    if let Some(address) = address {
                        assert!(
                            after.is_empty(),
                            "a kernel with stream-k or ranges and {what}"
                        );
                        after.push(address.as_raw());
                    }
                }
                Some(MapSlots::new(tma, after, buffer_sets)?)
            }
            None => None,
        };
        Ok(Prepared {
            gpu: self,
            launch: launch.clone(),
            problem: *p,
            operands: None,
            function,
            reduce,
            unfused,
            cublas,
            cublas_lt,
            bias: 0,
            group_table: 0,
            group_runs: Vec::new(),
            grouped_call: None,
            workspace,
            tma,
            maps,
            resident,
            early_start: false,
            _stream_k: stream_k,
            _queue: queue,
            ranges,
            amax,
            copies,
        })
    }

    /// 3xTF32's ranges pass for a problem of `shape`: its entry point, from the same build as
    /// the kernel (a strided batch's twin, which runs a layer of its grid per member), and m + n
    /// words per member.
    fn ranges_pass(&self, shape: &Shape, batch: Batch, target: Target) -> Result<RangesPass<'_>> {
        use kernels_gpu::variants::ranges;
        let entry = if batch.is_batched() {
            kernels_gpu::registry::batch_twin(ranges::ENTRY)
        } else {
            ranges::ENTRY.to_string()
        };
        let function = self.function(&entry, target)?;
        let words = (shape.m + shape.n) as usize * batch.count as usize;
        // SAFETY: zeroed on the stream before each pass.
        let words = unsafe { DeviceBuffer::<u32>::uninitialized(words) }
            .map_err(|e| anyhow!("cannot allocate 3xTF32's ranges ({words} words): {e}"))?;
        Ok(RangesPass {
            function,
            words,
            geometry: ranges::geometry(shape.m, shape.n, shape.k),
            batch,
        })
    }

    /// An FP8 kernel's launch, ready to enqueue on any operands of `shape` with alpha and beta:
    /// its entry point loaded and allowed its shared memory, its persistent grid sized. The
    /// tensor maps depend on the operands' addresses, so they are encoded on each enqueue's
    /// first use of an address (the timed runs reuse one set). With the amax in `epilogue`,
    /// each enqueue is the GEMM and the amax's last step on the pointers' words.
    pub fn fp8_kernel<'g>(
        &'g self,
        launch: &'g Launch,
        shape: Shape,
        (alpha, beta): (f32, f32),
        (groups, epilogue): (Fp8Groups, kernels_gpu::fused::Epilogue),
    ) -> Result<impl Fn(&Fp8Pointers) -> Result<()> + 'g> {
        let Launch::Kernel {
            entry,
            geometry: g,
            target,
            tma: Some(tma),
            ..
        } = launch
        else {
            bail!("{} is not an FP8 kernel", launch.name());
        };
        let function = self.function(entry, *target)?;
        allow_dynamic_shared(&function, g.shared_bytes)
            .with_context(|| format!("preparing {entry}"))?;
        let finish_amax = epilogue
            .amax()
            .then(|| self.function(kernels_gpu::registry::AMAX_SCALE, *target))
            .transpose()?;
        let resident = if tma.cluster > 1 {
            resident_cluster_blocks(&function, g, tma.cluster, &self.stream)?
        } else {
            self.multiprocessors
        };
        let grid = tma.grid(*g, resident);
        let stream_k = self.stream_k_scratch(tma, (&shape, 1), grid)?;
        let after = stream_k.as_ref().map(|s| s.addresses()).unwrap_or_default();
        let (layers, members) = (groups.layers(&shape), groups.members(&shape));
        // The tensor maps, with the operands' addresses they were encoded for.
        type Encoded = Option<((u64, u64, u64), DeviceBuffer<u64>)>;
        let maps: std::cell::RefCell<Encoded> = std::cell::RefCell::new(None);
        Ok(move |p: &Fp8Pointers| -> Result<()> {
            // (The closure owns the workspace the maps point to.)
            let _ = &stream_k;
            let operands = (p.a, p.b, p.c);
            let mut cached = maps.borrow_mut();
            if cached.as_ref().is_none_or(|(at, _)| *at != operands) {
                let encoded =
                    self.tensor_maps(tma, (&shape, &layers), Dtype::E4m3, operands, &after)?;
                *cached = Some((operands, encoded));
            }
            let maps = cached.as_ref().map(|(_, m)| m.as_device_ptr()).unwrap();
            let (s, stream) = (shape, &self.stream);
            unsafe {
                launch!(function<<<(grid.0, grid.1, 1), (g.block.0, g.block.1, 1), g.shared_bytes, stream>>>(
                    s.m, s.n, s.k, alpha, p.a, s.lda, p.b, s.ldb, beta, p.c, s.ldc, maps,
                    p.scale_a, p.scale_b, p.bias, epilogue.0, p.amax, members.count,
                    members.stride_c, groups.layout as u32, groups.count, p.table
                ))
            }
            .with_context(|| format!("launching {entry} failed"))?;
            match &finish_amax {
                Some(finish) => enqueue_amax_scale(finish, p.amax, stream),
                None => Ok(()),
            }
        })
    }
}

/// A kernel parameter as `cuLaunchKernel` takes it: the address of its value.
fn param<T>(value: &T) -> *mut core::ffi::c_void {
    value as *const T as *mut core::ffi::c_void
}

/// `function` launched by `cuLaunchKernelEx` on `stream`; with `early`, under programmatic
/// stream serialisation (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`): it may start
/// once every block of the kernel ahead of it has executed `griddepcontrol.launch_dependents`
/// (or ended), and it waits for that kernel's end itself (`kernels_gpu::device::grid`).
/// Captured into a CUDA graph, the dependency becomes a programmatic edge. Without `early`, the
/// launch `cuLaunchKernel` (cust's `launch!`) makes.
///
/// # Safety
/// `params` are the kernel's parameters, in order, each the address of a value of its type;
/// with `early`, the kernel waits for the grids ahead of it before it touches what they write.
unsafe fn launch_ex(
    function: &Function<'_>,
    ((grid_x, grid_y), (block_x, block_y), shared_bytes): ((u32, u32), (u32, u32), u32),
    stream: &Stream,
    params: &[*mut core::ffi::c_void],
    early: bool,
) -> Result<()> {
    use cudarc::driver::sys::{
        cuLaunchKernelEx, CUlaunchAttribute, CUlaunchAttributeID, CUlaunchAttributeValue,
        CUlaunchConfig, CUresult,
    };
    // SAFETY: the union is plain data; the attribute reads its int member.
    let mut value: CUlaunchAttributeValue = unsafe { core::mem::zeroed() };
    value.programmaticStreamSerializationAllowed = 1;
    let mut attribute = CUlaunchAttribute {
        id: CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
        pad: [0; 4],
        value,
    };
    let config = CUlaunchConfig {
        gridDimX: grid_x,
        gridDimY: grid_y,
        gridDimZ: 1,
        blockDimX: block_x,
        blockDimY: block_y,
        blockDimZ: 1,
        sharedMemBytes: shared_bytes,
        hStream: stream.as_inner() as _,
        attrs: &mut attribute,
        numAttrs: u32::from(early),
    };
    // The driver reads the parameters, never writes them.
    let params = params.as_ptr().cast_mut();
    let launched = unsafe {
        cuLaunchKernelEx(
            &config,
            function.to_raw() as _,
            params,
            core::ptr::null_mut(),
        )
    };
    match launched {
        CUresult::CUDA_SUCCESS => Ok(()),
        status => Err(anyhow!("cuLaunchKernelEx failed: {status:?}")),
    }
}
