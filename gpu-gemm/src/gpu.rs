//! The GPU backend: `cust` on device 0 (its primary context), the embedded kernels
//! (`gpu/modules.rs`), CUDA events.
use crate::kernel_clock::KernelClock;
use crate::launch::{Fp8Groups, Fp8Operands, Fp8Pointers, Launch, Pointwise, Reduce};
use crate::problem::{Inputs, Problem, Scalar, Transpose, Transposes};
use crate::registry::CublasMath;
use crate::timing::{Clock, Measured, Timing};
use anyhow::{anyhow, bail, Context as _, Result};
use cust::context::Context;
use cust::device::{Device, DeviceAttribute};
use cust::error::CudaError;
use cust::event::{Event, EventFlags};
use cust::function::Function;
use cust::launch;
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::stream::{Stream, StreamFlags};
use kernels_gpu::device::tma::{Swizzle, TensorMap};
use kernels_gpu::gemm::{Batch, Dtype, GroupLayout};
use kernels_gpu::registry::{Shape, Target, TmaOperands};
use kernels_gpu::variants::bias_activation;
pub use modules::sass_runs;
use modules::{arch_number, LazyModule, Modules};

mod modules;

/// The GPU backend: one device's context (made by [`Gpu::open`] or the caller's), its PTX
/// modules, one stream for every launch, and cuBLAS handles made on first use.
pub struct Gpu {
    /// The device's name as the driver gives it (`NVIDIA H100 80GB HBM3`).
    pub device_name: String,
    /// Compute capability as `sm_XY`.
    pub arch: String,
    /// Where the kernels came from: "embedded sm_90 SASS + sm_90a SASS" (compiled ahead of
    /// time), "embedded sm_90 PTX + …" (compiled by the driver), or a PTX file's path.
    pub ptx_origin: String,
    /// A fingerprint of the kernels this backend runs: the built PTX's (computed by
    /// `build.rs`), combined with a given PTX file's. The tuning cache keys its entries by it.
    pub ptx_fingerprint: u64,
    /// The CUDA version the driver supports, as `cuDriverGetVersion` gives it (13000 is 13.0).
    pub driver_version: i32,
    /// The kernels of every architecture (sm_80 or sm_90 build).
    portable: LazyModule,
    /// The sm_90a build (the `wgmma` kernels), on compute capability 9.0 only.
    hopper: Option<LazyModule>,
    multiprocessors: u32,
    /// Multiprocessors left out of persistent grids for other work running beside the GEMMs
    /// (a tensor-parallel rank's NCCL kernels): [`Gpu::reserve_multiprocessors`].
    reserved: std::cell::Cell<u32>,
    stream: Stream,
    /// Created on first use, on `stream`: one handle per math mode.
    cublas: [std::cell::OnceCell<CublasHandle>; 2],
    /// What [`Timing::cold`] writes over before each run, allocated on its first use.
    cold_scratch: std::cell::OnceCell<DeviceBuffer<u32>>,
    /// Whether a slow first load of a module is reported on stderr (the command line's pause
    /// explained); a library prints nothing ([`Gpu::quiet`]).
    report_slow_loads: bool,
    /// The context this backend made (`open`); `None` on the caller's ([`Gpu::on_current_context`]).
    _context: Option<Context>,
}

/// A cuBLAS handle bound to the backend's stream.
struct CublasHandle(cudarc::cublas::sys::cublasHandle_t);

impl Drop for CublasHandle {
    fn drop(&mut self) {
        unsafe {
            let _ = cudarc::cublas::result::destroy_handle(self.0);
        }
    }
}

/// cuBLAS's GEMM for a dtype, column-major, with op(A) and op(B), on device buffers of that
/// dtype: `cublasSgemm` and `cublasDgemm` for f32 and f64; for bf16 and f16
/// `cublasGemmEx` with A, B and C in the 16-bit type, `CUBLAS_COMPUTE_32F` (f32 accumulation
/// and f32 alpha, beta: what the course's 16-bit kernels do, so the ratio compares like with
/// like) and the default algorithm choice.
///
/// `p`'s GEMM with `n` columns of B and C, at `(a, b, c)`, as `batch` (a group of a grouped
/// problem is one such GEMM).
///
/// # Safety
/// Device pointers valid for the sizes and leading dimensions given, holding `dtype` elements.
unsafe fn cublas_gemm(
    handle: cudarc::cublas::sys::cublasHandle_t,
    p: &Problem,
    n: u32,
    (a, b, c): (u64, u64, u64),
    batch: &Batch,
) -> Result<(), cudarc::cublas::result::CublasError> {
    use cudarc::cublas::result;
    let (dtype, transposes, (alpha, beta), s) = (p.dtype, p.transposes, (p.alpha, p.beta), p.shape);
    let (m, n, k) = (s.m as i32, n as i32, s.k as i32);
    let (lda, ldb, ldc) = (s.lda as i32, s.ldb as i32, s.ldc as i32);
    if batch.is_batched() {
        return unsafe {
            cublas_gemm_strided_batched(
                handle,
                dtype,
                transposes,
                (m, n, k),
                (alpha, beta),
                (a, lda),
                (b, ldb),
                (c, ldc),
                batch,
            )
        };
    }
    use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t};
    let (transa, transb) = cublas_ops(transposes);
    use std::ffi::c_void;
    unsafe {
        match dtype {
            Dtype::F32 => {
                let (alpha, beta) = (alpha as f32, beta as f32);
                result::sgemm(
                    handle,
                    transa,
                    transb,
                    m,
                    n,
                    k,
                    &alpha,
                    a as *const f32,
                    lda,
                    b as *const f32,
                    ldb,
                    &beta,
                    c as *mut f32,
                    ldc,
                )
            }
            Dtype::F64 => result::dgemm(
                handle,
                transa,
                transb,
                m,
                n,
                k,
                &alpha,
                a as *const f64,
                lda,
                b as *const f64,
                ldb,
                &beta,
                c as *mut f64,
                ldc,
            ),
            // FP8 has no `cublasGemmEx`: its yardstick is cuBLASLt (`fp8::cublaslt`).
            Dtype::E4m3 | Dtype::E4m3E5m2 => Err(cudarc::cublas::result::CublasError(
                cudarc::cublas::sys::cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED,
            )),
            Dtype::Bf16 | Dtype::F16 => {
                let data_type = cublas_half_type(dtype);
                // CUBLAS_COMPUTE_32F takes alpha and beta as f32.
                let (alpha, beta) = (alpha as f32, beta as f32);
                result::gemm_ex(
                    handle,
                    transa,
                    transb,
                    m,
                    n,
                    k,
                    (&alpha as *const f32).cast::<c_void>(),
                    a as *const c_void,
                    data_type,
                    lda,
                    b as *const c_void,
                    data_type,
                    ldb,
                    (&beta as *const f32).cast::<c_void>(),
                    c as *mut c_void,
                    data_type,
                    ldc,
                    cublasComputeType_t::CUBLAS_COMPUTE_32F,
                    cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            }
        }
    }
}

/// cuBLAS's op(A) and op(B).
fn cublas_ops(
    transposes: Transposes,
) -> (
    cudarc::cublas::sys::cublasOperation_t,
    cudarc::cublas::sys::cublasOperation_t,
) {
    use cudarc::cublas::sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
    let op = |t| match t {
        Transpose::No => CUBLAS_OP_N,
        Transpose::Yes => CUBLAS_OP_T,
    };
    (op(transposes.transa), op(transposes.transb))
}

/// cuBLAS's name of a 16-bit type (bf16, else f16).
fn cublas_half_type(dtype: Dtype) -> cudarc::cublas::sys::cudaDataType {
    use cudarc::cublas::sys::cudaDataType;
    match dtype {
        Dtype::Bf16 => cudaDataType::CUDA_R_16BF,
        _ => cudaDataType::CUDA_R_16F,
    }
}

/// [`cublas_gemm`] over a strided batch, one call: `cublasSgemmStridedBatched`,
/// `cublasDgemmStridedBatched`, and for bf16 and f16 `cublasGemmStridedBatchedEx` with
/// `CUBLAS_COMPUTE_32F`.
///
/// # Safety
/// As [`cublas_gemm`], for every member at its stride.
#[allow(clippy::too_many_arguments)]
unsafe fn cublas_gemm_strided_batched(
    handle: cudarc::cublas::sys::cublasHandle_t,
    dtype: Dtype,
    transposes: Transposes,
    (m, n, k): (i32, i32, i32),
    (alpha, beta): (f64, f64),
    (a, lda): (u64, i32),
    (b, ldb): (u64, i32),
    (c, ldc): (u64, i32),
    batch: &Batch,
) -> Result<(), cudarc::cublas::result::CublasError> {
    use cudarc::cublas::result;
    use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t};
    use std::ffi::c_void;
    let (transa, transb) = cublas_ops(transposes);
    let (sa, sb, sc) = (
        batch.stride_a as i64,
        batch.stride_b as i64,
        batch.stride_c as i64,
    );
    let count = batch.count as i32;
    unsafe {
        match dtype {
            Dtype::F32 => {
                let (alpha, beta) = (alpha as f32, beta as f32);
                result::sgemm_strided_batched(
                    handle,
                    transa,
                    transb,
                    m,
                    n,
                    k,
                    &alpha,
                    a as *const f32,
                    lda,
                    sa,
                    b as *const f32,
                    ldb,
                    sb,
                    &beta,
                    c as *mut f32,
                    ldc,
                    sc,
                    count,
                )
            }
            Dtype::F64 => result::dgemm_strided_batched(
                handle,
                transa,
                transb,
                m,
                n,
                k,
                &alpha,
                a as *const f64,
                lda,
                sa,
                b as *const f64,
                ldb,
                sb,
                &beta,
                c as *mut f64,
                ldc,
                sc,
                count,
            ),
            Dtype::E4m3 | Dtype::E4m3E5m2 => Err(cudarc::cublas::result::CublasError(
                cudarc::cublas::sys::cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED,
            )),
            Dtype::Bf16 | Dtype::F16 => {
                let data_type = cublas_half_type(dtype);
                let (alpha, beta) = (alpha as f32, beta as f32);
                result::gemm_strided_batched_ex(
                    handle,
                    transa,
                    transb,
                    m,
                    n,
                    k,
                    (&alpha as *const f32).cast::<c_void>(),
                    a as *const c_void,
                    data_type,
                    lda,
                    sa,
                    b as *const c_void,
                    data_type,
                    ldb,
                    sb,
                    (&beta as *const f32).cast::<c_void>(),
                    c as *mut c_void,
                    data_type,
                    ldc,
                    sc,
                    count,
                    cublasComputeType_t::CUBLAS_COMPUTE_32F,
                    cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            }
        }
    }
}

impl Gpu {
    /// Loads and initialises the CUDA driver. The error says what is missing, a driver or a
    /// device.
    pub fn init_driver() -> Result<()> {
        crate::cuda_driver::load()
            .map_err(|e| anyhow!("cannot load the CUDA driver ({e}); install the NVIDIA driver"))?;
        cust::init(cust::CudaFlags::empty()).map_err(|e| match e {
            // Debug, not Display: cust's Display asks the driver for the message, and a missing
            // driver (or the build's link stub) cannot answer.
            CudaError::NoDevice => anyhow!("no CUDA device found (cuInit: {e:?})"),
            _ => anyhow!("no usable CUDA driver (cuInit failed: {e:?}); install the NVIDIA driver"),
        })?;
        if Device::num_devices()? == 0 {
            bail!("the CUDA driver reports no device");
        }
        Ok(())
    }

    /// Initialises the driver and device 0, makes a context and a stream, and finds the kernels
    /// (each module is compiled on first use). The error says what is missing: a driver, a
    /// device, or PTX the device can run.
    pub fn open(ptx_file: Option<&std::path::Path>) -> Result<Self> {
        Self::open_device(0, ptx_file)
    }

    /// As [`Gpu::open`], on device `ordinal` (a tensor-parallel rank's own GPU).
    pub fn open_device(ordinal: u32, ptx_file: Option<&std::path::Path>) -> Result<Self> {
        Self::init_driver()?;
        let count = Device::num_devices()?;
        if ordinal >= count {
            bail!("there is no device {ordinal}: the driver reports {count}");
        }
        let device = Device::get_device(ordinal)?;
        let context = Context::new(device)
            .with_context(|| format!("cannot create a context on device {ordinal}"))?;
        let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
        Self::on_device(device, Some(context), stream, ptx_file)
    }

    /// On the caller's current context (made with `cust`), launching on `stream`, or on a new
    /// non-blocking stream.
    pub fn on_current_context(stream: Option<Stream>) -> Result<Self> {
        Self::init_driver()?;
        let device = cust::context::CurrentContext::get_device().map_err(|e| {
            anyhow!(
                "no current CUDA context ({e:?}): make one with cust first (`cust::quick_init()`)"
            )
        })?;
        let stream = match stream {
            Some(s) => s,
            None => Stream::new(StreamFlags::NON_BLOCKING, None)?,
        };
        Self::on_device(device, None, stream, None)
    }

    fn on_device(
        device: Device,
        context: Option<Context>,
        stream: Stream,
        ptx_file: Option<&std::path::Path>,
    ) -> Result<Self> {
        let major = device.get_attribute(DeviceAttribute::ComputeCapabilityMajor)? as u32;
        let minor = device.get_attribute(DeviceAttribute::ComputeCapabilityMinor)? as u32;
        let device_arch = major * 10 + minor;
        let arch = format!("sm_{device_arch}");
        let device_name = device.name()?;
        let driver_version = cust::CudaApiVersion::get()
            .map(|v| v.major() * 1000 + v.minor() * 10)
            .context("cuDriverGetVersion failed")?;
        let modules = Modules::for_device(device_arch, &device_name, ptx_file)?;
        let multiprocessors = device.get_attribute(DeviceAttribute::MultiprocessorCount)? as u32;
        Ok(Self {
            device_name,
            arch,
            ptx_origin: modules.origin,
            ptx_fingerprint: modules.fingerprint,
            driver_version,
            portable: modules.portable,
            hopper: modules.hopper,
            multiprocessors,
            reserved: std::cell::Cell::new(0),
            stream,
            cublas: Default::default(),
            cold_scratch: Default::default(),
            report_slow_loads: true,
            _context: context,
        })
    }

    /// Leaves `count` multiprocessors out of the persistent grids prepared from now on, so that
    /// kernels running beside them (NCCL's) find multiprocessors free; 0 gives them all back.
    pub fn reserve_multiprocessors(&self, count: u32) {
        self.reserved.set(count.min(self.multiprocessors - 1));
    }

    /// The same backend, printing nothing.
    pub fn quiet(self) -> Self {
        Gpu {
            report_slow_loads: false,
            ..self
        }
    }

    /// The compute capability as `XY` (9.0 is 90).
    pub fn arch_number(&self) -> u32 {
        arch_number(&self.arch).expect("`arch` is written as sm_XY")
    }

    fn cublas(&self, math: CublasMath) -> Result<cudarc::cublas::sys::cublasHandle_t> {
        use cudarc::cublas::sys::{cublasMath_t, cublasSetMathMode, cublasStatus_t};
        let (slot, mode) = match math {
            CublasMath::Default | CublasMath::Grouped => (0, cublasMath_t::CUBLAS_DEFAULT_MATH),
            CublasMath::Tf32 => (1, cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH),
        };
        if let Some(h) = self.cublas[slot].get() {
            return Ok(h.0);
        }
        // cudarc loads libcublas at run time; a missing library panics inside it, so catch that.
        let handle = std::panic::catch_unwind(cudarc::cublas::result::create_handle)
            .map_err(|_| anyhow!("cannot load cuBLAS (libcublas.so.13): is the CUDA 13 toolkit or its cuBLAS installed?"))?
            .map_err(|e| anyhow!("cublasCreate failed: {e:?}"))?;
        unsafe { cudarc::cublas::result::set_stream(handle, self.stream.as_inner() as _) }
            .map_err(|e| anyhow!("cublasSetStream failed: {e:?}"))?;
        let status = unsafe { cublasSetMathMode(handle, mode) };
        if status != cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            bail!("cublasSetMathMode({mode:?}) failed: {status:?}");
        }
        let _ = self.cublas[slot].set(CublasHandle(handle));
        Ok(handle)
    }

    /// The entry point, from the module of its build: the portable one, or for `Sm90a` the
    /// sm_90a module (or a given PTX file built for sm_90a).
    fn function(&self, entry: &str, target: Target) -> Result<Function<'_>> {
        let lazy = match target {
            Target::Portable => &self.portable,
            Target::Sm90a => match &self.hopper {
                Some(m) => m,
                None => bail!(
                    "`{entry}` uses Hopper's wgmma (the sm_90a build), which runs on compute capability 9.0 only (H100, H200): this {} is {}",
                    self.device_name,
                    self.arch
                ),
            },
        };
        lazy.get(self.report_slow_loads)?
            .get_function(entry)
            .with_context(|| format!("entry point `{entry}` is not in the PTX ({})", lazy.origin))
    }

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
    fn upload<T: Scalar>(
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
                    let transpose = if pitch.transposed {
                        let entry =
                            format!("{}_{}", kernels_gpu::registry::TRANSPOSE, p.dtype.name());
                        Some(self.function(&entry, Target::Portable)?)
                    } else {
                        None
                    };
                    Ok(OperandCopy {
                        pitch,
                        from: 0,
                        to,
                        what,
                        transpose,
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

    /// The stream every launch of this backend goes to.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Times a device-to-device copy of `bytes` (`cuMemcpyDtoDAsync` on the backend's stream,
    /// between CUDA events, with the warm-ups and runs of `timing`, as a kernel is timed) and
    /// returns the milliseconds of each timed run. A copy reads and writes every byte, so
    /// `2·bytes / time` is the bandwidth that memory alone sustains on this GPU: the practical
    /// ceiling of a GEMM whose time is spent streaming its operands (decode-sized ones).
    pub fn time_device_copy(&self, bytes: usize, timing: Timing) -> Result<Vec<f64>> {
        let allocate = |what: &str| {
            // SAFETY: a byte buffer; what it holds is never read on the host.
            unsafe { DeviceBuffer::<u8>::uninitialized(bytes) }.map_err(|e| {
                anyhow!(
                    "cannot allocate the copy's {what} ({:.2} GiB): {e}",
                    bytes as f64 / (1u64 << 30) as f64
                )
            })
        };
        let (source, destination) = (allocate("source")?, allocate("destination")?);
        let (src, dst) = (
            source.as_device_ptr().as_raw(),
            destination.as_device_ptr().as_raw(),
        );
        let stream = self.stream.as_inner();
        self.time("cuMemcpyDtoDAsync", timing, &|| {
            use cust::sys::{cuMemcpyDtoDAsync_v2, CUresult};
            // SAFETY: both buffers are live device allocations of `bytes` bytes.
            let status = unsafe { cuMemcpyDtoDAsync_v2(dst, src, bytes, stream) };
            if status != CUresult::CUDA_SUCCESS {
                bail!("cuMemcpyDtoDAsync of {bytes} bytes failed: {status:?}");
            }
            Ok(())
        })
    }

    /// Uploads, times `timing.iters` launches after `timing.warmup`, then runs once more on a
    /// fresh (NaN-poisoned when beta = 0) C and downloads it for the check.
    pub fn run<T: Scalar>(
        &self,
        launch: &Launch,
        p: &Problem,
        inputs: &Inputs<T>,
        timing: Timing,
    ) -> Result<Measured<T>> {
        let a = self.upload("A", &inputs.a.data, p)?;
        let b = self.upload("B", &inputs.b.data, p)?;
        let mut c = self.upload("C", &inputs.c.data, p)?;
        let bias = if inputs.bias.is_empty() {
            None
        } else {
            Some(self.upload("the bias", &inputs.bias, p)?)
        };
        let operands = (
            a.as_device_ptr().as_raw(),
            b.as_device_ptr().as_raw(),
            c.as_device_ptr().as_raw(),
        );
        // Everything but the launches, once, outside the timed runs.
        let mut prepared = self.prepare(launch, p, operands)?;
        if let Some(bias) = &bias {
            prepared.bind_bias(bias.as_device_ptr().as_raw());
        }
        // (The table lives until the runs are done.)
        let _table = if inputs.groups.is_empty() {
            None
        } else {
            let table = DeviceBuffer::from_slice(&inputs.groups)
                .context("uploading the group table failed")?;
            prepared.bind_groups(table.as_device_ptr().as_raw(), &inputs.groups)?;
            Some(table)
        };
        let stream = &self.stream;
        let name = launch.name();
        let times_ms = self.time(name, timing, &|| prepared.enqueue::<T>())?;
        let uploaded_c = inputs.c_for_checked_run(p.beta);
        let mut result = uploaded_c.clone();
        if timing.check {
            c.copy_from(T::as_bits(&uploaded_c))?;
            prepared.enqueue::<T>()?;
            stream
                .synchronize()
                .with_context(|| format!("{name} failed on the device"))?;
            c.copy_to(T::as_bits_mut(&mut result))?;
        }
        let amax = if timing.check {
            prepared.read_amax()?
        } else {
            None
        };
        Ok(Measured {
            times_ms,
            uploaded_c,
            result,
            amax,
        })
    }
}

impl Gpu {
    /// The timing protocol's launches: `timing.warmup` untimed, then timed ones while
    /// [`Timing::wants_more`], each read from CUDA events around its `enqueue` or from its
    /// kernels' stamps ([`Timing::clock`]); with [`Timing::cold`], each behind a write of
    /// [`COLD_BYTES`](crate::timing::COLD_BYTES) on the stream.
    pub fn time(
        &self,
        name: &str,
        timing: Timing,
        enqueue: &dyn Fn() -> Result<()>,
    ) -> Result<Vec<f64>> {
        let stream = &self.stream;
        let (start, stop) = (
            Event::new(EventFlags::DEFAULT)?,
            Event::new(EventFlags::DEFAULT)?,
        );
        let mut times_ms: Vec<f64> = Vec::with_capacity(timing.iters);
        let mut warmups = 0;
        let cold = if timing.cold {
            let words = crate::timing::COLD_BYTES / 4;
            let scratch = match self.cold_scratch.get() {
                Some(s) => s,
                None => {
                    let s = unsafe { DeviceBuffer::<u32>::uninitialized(words) }
                        .context("allocating the 256 MiB that --cold writes before each run")?;
                    self.cold_scratch.get_or_init(|| s)
                }
            };
            Some(scratch)
        } else {
            None
        };
        let kernel_clock = match timing.clock {
            Clock::Events => None,
            Clock::Kernels => {
                let clock = KernelClock::get()?;
                Some((clock, clock.begin()?))
            }
        };
        while warmups < timing.warmup || timing.wants_more(times_ms.len(), times_ms.iter().sum()) {
            if let Some(scratch) = cold {
                // Some 60–90 µs of writes at HBM's pace: the launch below is queued long before
                // they end, and they evict the operands from L2.
                use cudarc::driver::sys::{cuMemsetD32Async, CUresult};
                let (words, count) = (scratch.as_device_ptr().as_raw(), scratch.len());
                // SAFETY: the buffer holds `count` words.
                let status =
                    unsafe { cuMemsetD32Async(words, 0x5A5A_5A5A, count, stream.as_inner() as _) };
                if status != CUresult::CUDA_SUCCESS {
                    bail!("writing --cold's 256 MiB failed: {status:?}");
                }
            }
            start.record(stream)?;
            enqueue()?;
            stop.record(stream)?;
            stop.synchronize()
                .with_context(|| format!("{name} failed on the device"))?;
            if warmups < timing.warmup {
                warmups += 1;
            } else {
                // The events' times also decide when the budget is spent.
                times_ms.push(stop.elapsed_time_f32(&start)? as f64);
            }
        }
        if let Some((clock, since)) = kernel_clock {
            let spans = clock
                .spans_ms(since, warmups + times_ms.len())
                .with_context(|| format!("timing {name} by its kernels' stamps"))?;
            times_ms = spans[warmups..].to_vec();
        }
        Ok(times_ms)
    }

    /// An FP8 GEMM (`shape` in the "TN" layout of [`Fp8Operands`]) on device copies of `ops`:
    /// `enqueue`, given where they lie, is timed as [`Gpu::run`] times a kernel, then run once
    /// more on `ops.c` for the check. The kernels' enqueue is [`Gpu::fp8_kernel`]'s; cuBLASLt's
    /// is the yardstick's.
    pub fn run_fp8(
        &self,
        name: &str,
        shape: &Shape,
        ops: &Fp8Operands<'_>,
        timing: Timing,
        enqueue: &dyn Fn(&Fp8Pointers) -> Result<()>,
    ) -> Result<Measured<half::bf16>> {
        let upload_error = |what: &str, e: CudaError| {
            anyhow!(
                "cannot allocate {what} of {}×{}×{} e4m3 on the device: {e}",
                shape.m,
                shape.n,
                shape.k
            )
        };
        let a = DeviceBuffer::from_slice(ops.a).map_err(|e| upload_error("A", e))?;
        let b = DeviceBuffer::from_slice(ops.b).map_err(|e| upload_error("B", e))?;
        let scale_a =
            DeviceBuffer::from_slice(ops.scale_a).map_err(|e| upload_error("A's scales", e))?;
        let scale_b =
            DeviceBuffer::from_slice(ops.scale_b).map_err(|e| upload_error("B's scales", e))?;
        let mut c = DeviceBuffer::from_slice(half::bf16::as_bits(ops.c))
            .map_err(|e| upload_error("C", e))?;
        // (A buffer of one word where there is no table: the kernel never reads it.)
        let table = DeviceBuffer::from_slice(if ops.table.is_empty() {
            &[0]
        } else {
            ops.table
        })
        .map_err(|e| upload_error("the group table", e))?;
        let (epilogue, bias) = ops.fused;
        let bias = (!bias.is_empty())
            .then(|| DeviceBuffer::from_slice(half::bf16::as_bits(bias)))
            .transpose()
            .map_err(|e| upload_error("the bias", e))?;
        let amax = epilogue
            .amax()
            .then(|| DeviceBuffer::<u32>::zeroed(3))
            .transpose()
            .map_err(|e| upload_error("the amax's words", e))?;
        let pointers = Fp8Pointers {
            a: a.as_device_ptr().as_raw(),
            b: b.as_device_ptr().as_raw(),
            scale_a: scale_a.as_device_ptr().as_raw(),
            scale_b: scale_b.as_device_ptr().as_raw(),
            c: c.as_device_ptr().as_raw(),
            table: table.as_device_ptr().as_raw(),
            bias: bias.as_ref().map_or(0, |b| b.as_device_ptr().as_raw()),
            amax: amax.as_ref().map_or(0, |w| w.as_device_ptr().as_raw()),
        };
        let times_ms = self.time(name, timing, &|| enqueue(&pointers))?;
        let uploaded_c = ops.c.to_vec();
        let mut result = uploaded_c.clone();
        if timing.check {
            c.copy_from(half::bf16::as_bits(ops.c))?;
            enqueue(&pointers)?;
            self.stream
                .synchronize()
                .with_context(|| format!("{name} failed on the device"))?;
            c.copy_to(half::bf16::as_bits_mut(&mut result))?;
        }
        let amax = match (&amax, timing.check) {
            (Some(words), true) => {
                let mut read = [0u32; 3];
                words.copy_to(&mut read[..])?;
                Some(kernels_gpu::fused::amax_of(&read))
            }
            _ => None,
        };
        Ok(Measured {
            times_ms,
            uploaded_c,
            result,
            amax,
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

/// The amax epilogue's three words and its last step ([`kernels_gpu::fused::finish_amax`]):
/// the GEMM's warps raise the first word; the one-thread kernel after it turns the word into
/// D's amax and its e4m3 scale (the second and third) and zeroes it for the next launch.
struct AmaxPass<'g> {
    function: Function<'g>,
    words: DeviceBuffer<u32>,
}

impl AmaxPass<'_> {
    fn enqueue(&self, stream: &Stream) -> Result<()> {
        enqueue_amax_scale(&self.function, self.words.as_device_ptr().as_raw(), stream)
    }
}

/// The amax's last step (`function`, [`kernels_gpu::registry::AMAX_SCALE`]) on the three words
/// at `words`: one thread, after the GEMM on `stream`.
fn enqueue_amax_scale(function: &Function<'_>, words: u64, stream: &Stream) -> Result<()> {
    unsafe { launch!(function<<<1, 1, 0, stream>>>(words)) }
        .with_context(|| format!("launching {} failed", kernels_gpu::registry::AMAX_SCALE))
}

/// 3xTF32's ranges pass ([`kernels_gpu::variants::ranges`]): zero the words, gather the
/// largest |x| of each row of A and column of B into them.
struct RangesPass<'g> {
    function: Function<'g>,
    words: DeviceBuffer<u32>,
    geometry: kernels_gpu::gemm::Geometry,
    /// A strided batch: the pass's grid has a layer per member, which writes its m + n words
    /// `z·(m + n)` on.
    batch: Batch,
}

impl RangesPass<'_> {
    /// Enqueues the zeroing and the pass on A (`lda`) and B (`ldb`) of `shape`, each member's.
    fn enqueue(&self, s: &Shape, (a, b): (u64, u64), stream: &Stream) -> Result<()> {
        use cudarc::driver::sys::{cuMemsetD32Async, CUresult};
        let words = self.words.as_device_ptr().as_raw();
        // SAFETY: the buffer holds m + n words.
        let status =
            unsafe { cuMemsetD32Async(words, 0, self.words.len(), stream.as_inner() as _) };
        if status != CUresult::CUDA_SUCCESS {
            bail!("zeroing 3xTF32's ranges failed: {status:?}");
        }
        let (g, function, batch) = (self.geometry, &self.function, &self.batch);
        let words_per_member = u64::from(s.m + s.n);
        unsafe {
            if batch.is_batched() {
                launch!(function<<<(g.grid.0, g.grid.1, batch.count), (g.block.0, g.block.1, 1), g.shared_bytes, stream>>>(
                    s.m, s.n, s.k, 1f32, a, s.lda, b, s.ldb, 0f32, words, s.m,
                    batch.stride_a, batch.stride_b, words_per_member
                ))
            } else {
                launch!(function<<<(g.grid.0, g.grid.1, 1), (g.block.0, g.block.1, 1), g.shared_bytes, stream>>>(
                    s.m, s.n, s.k, 1f32, a, s.lda, b, s.ldb, 0f32, words, s.m
                ))
            }
        }
        .context("launching 3xTF32's ranges pass failed")
    }
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

/// A tile queue's counter ([`kernels_gpu::pipeline::queue`]), zeroed here once: every launch
/// takes its tickets from zero and its last ticket puts the counter back. It belongs to one plan,
/// whose launches run one after the other on its stream; two launches that used it at once would
/// take each other's tickets.
fn tile_queue() -> Result<DeviceBuffer<u32>> {
    DeviceBuffer::<u32>::zeroed(1)
        .map_err(|e| anyhow!("cannot allocate the tile queue's counter: {e}"))
}

/// Stream-k's workspace and its counters on the device ([`TmaOperands::stream_k_scratch`]).
struct StreamKScratch {
    workspace: DeviceBuffer<u8>,
    counters: DeviceBuffer<u32>,
}

impl StreamKScratch {
    /// What the kernel reads after its tensor maps: the two addresses.
    fn addresses(&self) -> Vec<u64> {
        vec![
            self.workspace.as_device_ptr().as_raw(),
            self.counters.as_device_ptr().as_raw(),
        ]
    }
}

impl Gpu {
    /// Stream-k's workspace and counters for a launch of `grid` blocks, if the kernel has
    /// stream-k; the counters zeroed here once (every launch leaves them zeroed).
    fn stream_k_scratch(
        &self,
        tma: &TmaOperands,
        (shape, members): (&Shape, u32),
        grid: (u32, u32),
    ) -> Result<Option<StreamKScratch>> {
        let Some((bytes, counters)) = tma.stream_k_scratch(shape, members, grid) else {
            return Ok(None);
        };
        // SAFETY: every slab is written before it is read (the fixup's protocol).
        let workspace = unsafe { DeviceBuffer::<u8>::uninitialized(bytes) }
            .map_err(|e| anyhow!("cannot allocate stream-k's workspace ({bytes} bytes): {e}"))?;
        let counters = DeviceBuffer::<u32>::zeroed(counters)
            .map_err(|e| anyhow!("cannot allocate stream-k's counters: {e}"))?;
        Ok(Some(StreamKScratch {
            workspace,
            counters,
        }))
    }
}

/// An operand copied into a workspace before the kernel ([`crate::launch::Copies`]).
struct OperandCopy<'g> {
    pitch: crate::launch::Pitch,
    /// The caller's operand.
    from: u64,
    to: DeviceBuffer<u8>,
    what: &'static str,
    /// The transposing kernel, for a copy the other way round.
    transpose: Option<Function<'g>>,
}

impl OperandCopy<'_> {
    /// Enqueues the copy: the transposing kernel ([`kernels_gpu::variants::transpose`]), or
    /// column by column `cuMemcpy2DAsync` from the caller's pitch to the workspace's.
    fn enqueue(&self, element_bytes: u32, stream: &Stream) -> Result<()> {
        let pitch = &self.pitch;
        let to = self.to.as_device_ptr().as_raw();
        if let Some(function) = &self.transpose {
            let g =
                kernels_gpu::variants::transpose::geometry(pitch.rows, pitch.cols, element_bytes);
            // The GEMM signature, as the kernel reads it: A the source, C the copy.
            let (rows, cols, from, ld_from, ld_to) =
                (pitch.rows, pitch.cols, self.from, pitch.from, pitch.to);
            return unsafe {
                if element_bytes == 8 {
                    launch!(function<<<(g.grid.0, g.grid.1, 1), (g.block.0, g.block.1, 1), g.shared_bytes, stream>>>(
                        rows, cols, 0u32, 0f64, from, ld_from, from, ld_from, 0f64, to, ld_to
                    ))
                } else {
                    launch!(function<<<(g.grid.0, g.grid.1, 1), (g.block.0, g.block.1, 1), g.shared_bytes, stream>>>(
                        rows, cols, 0u32, 0f32, from, ld_from, from, ld_from, 0f32, to, ld_to
                    ))
                }
            }
            .with_context(|| format!("launching the transposing copy of {} failed", self.what));
        }
        use cudarc::driver::sys::{cuMemcpy2DAsync_v2, CUmemorytype, CUresult, CUDA_MEMCPY2D};
        let bytes = element_bytes as usize;
        // Every field written: the memory types are enums whose zero is no value.
        let copy = CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
            srcHost: std::ptr::null(),
            srcDevice: self.from,
            srcArray: std::ptr::null_mut(),
            srcPitch: self.pitch.from as usize * bytes,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
            dstHost: std::ptr::null_mut(),
            dstDevice: to,
            dstArray: std::ptr::null_mut(),
            dstPitch: self.pitch.to as usize * bytes,
            WidthInBytes: self.pitch.rows as usize * bytes,
            Height: self.pitch.cols as usize,
        };
        // SAFETY: both pitched regions lie inside their allocations (the problem was validated
        // against the caller's buffers, the workspace was sized from the pitch).
        let status = unsafe { cuMemcpy2DAsync_v2(&copy, stream.as_inner() as _) };
        if status != CUresult::CUDA_SUCCESS {
            bail!(
                "copying {} into its aligned workspace failed: {status:?}",
                self.what
            );
        }
        Ok(())
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
                let gemm = |out: u64, ld: u32, alpha: T::Factor, beta: T::Factor| match (
                    &self.tma, &self.maps,
                ) {
                    (Some(t), Some(maps)) if p.dtype.is_16bit() => {
                        let grid = t.grid(*g, self.resident);
                        let maps = maps.current();
                        let (bias, epilogue, amax) = if last_writes { fused } else { (0, 0, 0) };
                        let members = p.members();
                        unsafe {
                            launch!(function<<<(grid.0, grid.1, 1), (g.block.0, g.block.1, 1), g.shared_bytes, stream>>>(
                                s.m, s.n, s.k, alpha, a_ptr, s.lda, b_ptr, s.ldb, beta, out, ld, maps, bias, epilogue, amax,
                                members.count, members.stride_c, p.groups as u32, p.batch.count, self.group_table
                            ))
                        }
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
