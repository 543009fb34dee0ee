//! The GPU backend: `cust` on device 0 (its primary context), the embedded kernels, CUDA
//! events. Here the device, its context and stream, loading a kernel and timing runs; beside it,
//! one concern a file:
//! - `gpu/modules.rs`: which embedded module (SASS or PTX) a device loads, and loading it;
//! - `gpu/prepared.rs`: a launch prepared once and enqueued many times, with its tensor maps;
//! - `gpu/passes.rs`: what a launch enqueues around its GEMM (operand copies, 3xTF32's ranges,
//!   the amax's last step) and the scratch a kernel reads (stream-k's, a tile queue's);
//! - `gpu/cublas.rs`: cuBLAS, the yardstick, on the same stream.
use crate::kernel_clock::KernelClock;
use crate::launch::{Fp8Operands, Fp8Pointers, Launch};
use crate::problem::{Inputs, Problem, Scalar};
use crate::registry::CublasMath;
use crate::timing::{Clock, Measured, Timing};
use anyhow::{anyhow, bail, Context as _, Result};
use cublas::CublasHandle;
use cust::context::Context;
use cust::device::{Device, DeviceAttribute};
use cust::error::CudaError;
use cust::event::{Event, EventFlags};
use cust::function::Function;
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::stream::{Stream, StreamFlags};
use kernels_gpu::registry::{Shape, Target};
pub use modules::sass_runs;
use modules::{arch_number, LazyModule, Modules};
pub use prepared::Prepared;

mod cublas;
mod modules;
mod passes;
mod prepared;

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
}
