//! One rank on its GPU: NCCL (through cudarc, loaded at run time), the schedule on two streams,
//! CUDA events between them, the timings, and the watchdog.
//!
//! - **Two streams.** GEMMs go to the [`Gemm`] handle's stream (the compute lane), collectives to
//!   a second one (the comm lane). A step that waits for the other lane waits for that step's
//!   event (`cuStreamWaitEvent`): the host never blocks between steps, so a whole run is
//!   enqueued at once and the streams overlap as far as the data allows.
//! - **Multiprocessors for NCCL.** A persistent GEMM fills every multiprocessor with blocks that
//!   stay until the last tile, and NCCL's kernels need multiprocessors too: started first, they
//!   take some and the GEMM's last blocks wait for them; started second, they wait for the
//!   GEMM. [`RankPlan::comm_sms`] leaves that many multiprocessors out of the GEMMs' persistent
//!   grids where NCCL runs beside them (chunked, ring) and caps NCCL at as many blocks
//!   (`NCCL_MAX_CTAS`, for the whole process). [`Overlap::Copy`] needs neither: the copy engines
//!   move its data.
//! - **The copy engines** ([`Overlap::Copy`]). Each rank's B, C and flags are exported with
//!   `cuIpcGetMemHandle`; the handles travel in one `ncclAllGather` and every rank opens its
//!   peers' (`cuIpcOpenMemHandle` with peer access), so that a pull is a `cuMemcpyDtoDAsync`
//!   from a peer's address over NVLink. A flag is a `u32` in the writer's memory, set to the run's
//!   number by `cuStreamWriteValue32` (fenced after the stream's work) and waited for by the
//!   reader's stream with `cuStreamWaitValue32` (≥): no host round trip, no reset between runs.
//! - **Each chunk its own tile.** With `Algorithm::Tuned` (the default of `host --parallel`)
//!   every distinct GEMM of a run (a chunk's, the whole layer's) times `auto`'s candidates once
//!   on the rank's buffers, B filled with real data first (a tensor core runs faster on zeros).
//! - **Nothing hangs.** A rank waits for its streams by polling their last event, NCCL's
//!   asynchronous error (`ncclCommGetAsyncError`) and a clock: an error or no progress within
//!   [`RankPlan::watchdog`] aborts the communicator (`ncclCommAbort`, which ends the rank's
//!   pending collectives) and returns a typed error naming the rank and the cause.
use super::data::{self, SampleCheck};
use super::local::gemm_config;
use super::schedule::{Buffer, Collective, Lane, Layer, Op, Overlap, Schedule, Sharding};
use super::{Form, ParallelError};
use crate::api::{Algorithm, Gemm};
use crate::gpu::{Gpu, Prepared};
use crate::launch::Launch;
use crate::problem::Problem;
use crate::run::Backend;
use crate::timing::Timing;
use crate::Element;
use cudarc::driver::sys as cu;
use cudarc::nccl::result as nccl;
use cudarc::nccl::sys as nccl_sys;
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::stream::{Stream, StreamFlags};
use kernels_gpu::gemm::Dtype;
use std::time::{Duration, Instant};

/// Whether NCCL's library can be opened on this machine.
pub fn available() -> bool {
    // SAFETY: only tries to open the library.
    unsafe { nccl_sys::is_culib_present() }
}

/// What the processes started from now on need in `LD_LIBRARY_PATH` to open NCCL through
/// cudarc, or `None` when they open it already.
///
/// cudarc asks the loader for `libnccl.so` (and `.so.1`, `.so.9`…`.so.13`), but NCCL installs
/// itself as `libnccl.so.2` (the `libnccl.so` link comes with its development package only).
/// So this process opens `libnccl.so.2` as the loader finds it, reads where it is from
/// `/proc/self/maps`, and makes a folder holding a link `libnccl.so` to it: the folder,
/// prepended to `LD_LIBRARY_PATH`, is the answer.
pub fn loader_path() -> Result<Option<std::ffi::OsString>, ParallelError> {
    if available() {
        return Ok(None);
    }
    let no_nccl = |cause: String| ParallelError::NoNccl(cause);
    // SAFETY: NCCL's initialisers only set up its own state.
    let library = unsafe { libloading::Library::new("libnccl.so.2") }
        .map_err(|e| no_nccl(format!("neither libnccl.so nor libnccl.so.2 opens ({e})")))?;
    let maps = std::fs::read_to_string("/proc/self/maps").map_err(|e| {
        no_nccl(format!(
            "cannot read /proc/self/maps to find libnccl.so.2: {e}"
        ))
    })?;
    let path = maps
        .lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .find(|p| p.contains("libnccl.so"))
        .ok_or_else(|| no_nccl("libnccl.so.2 opened but is not in /proc/self/maps".into()))?
        .to_string();
    drop(library);
    let folder = std::env::temp_dir().join(format!("gpu-gemm-nccl-{}", std::process::id()));
    let link = folder.join("libnccl.so");
    let made = std::fs::create_dir_all(&folder)
        .and_then(|()| match std::fs::remove_file(&link) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        })
        .and_then(|()| std::os::unix::fs::symlink(&path, &link));
    made.map_err(|e| no_nccl(format!("cannot link {} to {path}: {e}", link.display())))?;
    let mut value = folder.into_os_string();
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
        value.push(":");
        value.push(old);
    }
    Ok(Some(value))
}

/// NCCL's unique id: made by one process, given to every rank to find the others.
#[derive(Clone, Copy)]
pub struct UniqueId(nccl_sys::ncclUniqueId);

impl UniqueId {
    /// A new id (`ncclGetUniqueId`; it opens a socket that the ranks' init connects to).
    pub fn new() -> Result<Self, ParallelError> {
        if !available() {
            return Err(ParallelError::NoNccl(
                "cudarc cannot open libnccl.so (a launcher's `loader_path` makes it findable)"
                    .into(),
            ));
        }
        nccl::get_uniqueid()
            .map(UniqueId)
            .map_err(|e| nccl_error(0, "ncclGetUniqueId", e.0))
    }

    /// The id as 256 hex digits, to pass on a command line.
    pub fn to_hex(&self) -> String {
        self.0
            .internal
            .iter()
            .map(|&c| format!("{:02x}", c as u8))
            .collect()
    }

    /// The id from [`UniqueId::to_hex`]'s text.
    pub fn from_hex(text: &str) -> Result<Self, String> {
        let bytes: Vec<u8> = (0..text.len())
            .step_by(2)
            .map(|i| {
                text.get(i..i + 2)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| format!("not hex at {i}"))
            })
            .collect::<Result<_, _>>()?;
        let mut id = nccl_sys::ncclUniqueId { internal: [0; 128] };
        if bytes.len() != id.internal.len() {
            return Err(format!(
                "an NCCL id has 128 bytes (256 hex digits), this has {}",
                bytes.len()
            ));
        }
        for (to, from) in id.internal.iter_mut().zip(bytes) {
            *to = from as core::ffi::c_char;
        }
        Ok(UniqueId(id))
    }
}

fn nccl_error(rank: u32, call: &'static str, code: nccl_sys::ncclResult_t) -> ParallelError {
    // SAFETY: NCCL returns a static string for every code.
    let text = unsafe {
        let p = nccl_sys::ncclGetErrorString(code);
        if p.is_null() {
            String::new()
        } else {
            std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    };
    ParallelError::Nccl {
        rank,
        call,
        cause: format!("{code:?} ({text})"),
    }
}

/// A communicator of one rank.
pub struct Comm {
    comm: nccl_sys::ncclComm_t,
    /// This rank.
    pub rank: u32,
    /// All ranks.
    pub ranks: u32,
    aborted: bool,
}

impl Comm {
    /// Joins the communicator `id` as `rank` of `ranks`, on the current CUDA context's device.
    /// Blocks until every rank has joined.
    pub fn init(id: &UniqueId, rank: u32, ranks: u32) -> Result<Self, ParallelError> {
        let mut comm = std::ptr::null_mut();
        // SAFETY: `comm` receives the new communicator.
        unsafe { nccl::comm_init_rank(&mut comm, ranks as i32, id.0, rank as i32) }
            .map_err(|e| nccl_error(rank, "ncclCommInitRank", e.0))?;
        Ok(Self {
            comm,
            rank,
            ranks,
            aborted: false,
        })
    }

    fn call(
        &self,
        call: &'static str,
        result: Result<nccl::NcclStatus, nccl::NcclError>,
    ) -> Result<(), ParallelError> {
        result
            .map(|_| ())
            .map_err(|e| nccl_error(self.rank, call, e.0))
    }

    /// An error NCCL found while the streams ran, if any.
    fn async_error(&self) -> Result<(), ParallelError> {
        let mut code = nccl_sys::ncclResult_t::ncclSuccess;
        // SAFETY: a live communicator and a place for the code.
        unsafe { nccl_sys::ncclCommGetAsyncError(self.comm, &mut code) };
        match code {
            nccl_sys::ncclResult_t::ncclSuccess | nccl_sys::ncclResult_t::ncclInProgress => Ok(()),
            code => Err(nccl_error(self.rank, "the asynchronous error query", code)),
        }
    }

    /// Ends every pending collective of this rank; the communicator is unusable afterwards.
    fn abort(&mut self) {
        if !self.aborted {
            // SAFETY: a live communicator, aborted once.
            let _ = unsafe { nccl::comm_abort(self.comm) };
            self.aborted = true;
        }
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        if !self.aborted {
            // SAFETY: a live communicator, destroyed once.
            let _ = unsafe { nccl::comm_destroy(self.comm) };
        }
    }
}

fn nccl_type(dtype: Dtype) -> nccl_sys::ncclDataType_t {
    match dtype {
        Dtype::Bf16 => nccl_sys::ncclDataType_t::ncclBfloat16,
        Dtype::F16 => nccl_sys::ncclDataType_t::ncclFloat16,
        Dtype::F32 => nccl_sys::ncclDataType_t::ncclFloat32,
        Dtype::F64 => nccl_sys::ncclDataType_t::ncclFloat64,
        Dtype::E4m3 | Dtype::E4m3E5m2 => nccl_sys::ncclDataType_t::ncclUint8,
    }
}

/// A CUDA event that records time (the driver's, so that streams of either crate can wait on it).
struct Event(cu::CUevent);

impl Event {
    fn new(rank: u32) -> Result<Self, ParallelError> {
        let mut event = std::ptr::null_mut();
        // SAFETY: `event` receives a new event of the current context.
        cuda(rank, "creating an event", unsafe {
            cu::cuEventCreate(&mut event, 0)
        })?;
        Ok(Event(event))
    }

    fn record(&self, rank: u32, stream: &Stream) -> Result<(), ParallelError> {
        // SAFETY: a live event and stream of the same context.
        cuda(rank, "recording an event", unsafe {
            cu::cuEventRecord(self.0, stream.as_inner() as _)
        })
    }

    /// Makes `stream` wait for this event's last record.
    fn wait_on(&self, rank: u32, stream: &Stream) -> Result<(), ParallelError> {
        // SAFETY: as `record`.
        cuda(rank, "making a stream wait for an event", unsafe {
            cu::cuStreamWaitEvent(stream.as_inner() as _, self.0, 0)
        })
    }

    fn done(&self, rank: u32) -> Result<bool, ParallelError> {
        // SAFETY: a live event.
        match unsafe { cu::cuEventQuery(self.0) } {
            cu::CUresult::CUDA_SUCCESS => Ok(true),
            cu::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            e => cuda(rank, "waiting for the streams", e).map(|_| false),
        }
    }

    /// Milliseconds from `start` to this event (both complete).
    fn since(&self, rank: u32, start: &Event) -> Result<f64, ParallelError> {
        let mut ms = 0f32;
        // SAFETY: both events recorded and complete.
        cuda(rank, "reading an event's time", unsafe {
            cu::cuEventElapsedTime_v2(&mut ms, start.0, self.0)
        })?;
        Ok(ms as f64)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: destroyed once.
        unsafe { cu::cuEventDestroy_v2(self.0) };
    }
}

fn cuda(rank: u32, what: &str, status: cu::CUresult) -> Result<(), ParallelError> {
    if status == cu::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(ParallelError::Cuda {
            rank,
            what: what.to_string(),
            cause: format!("{status:?}"),
        })
    }
}

/// A plain description of what one rank runs: the layer and its sharding, the measurements,
/// the GPU, the limits.
#[derive(Clone, Debug)]
pub struct RankPlan {
    /// The form.
    pub form: Form,
    /// The whole layer.
    pub layer: Layer,
    /// P.
    pub ranks: u32,
    /// This rank: its GPU is device `rank` of the host (`device` overrides).
    pub rank: u32,
    /// The CUDA device ordinal.
    pub device: u32,
    /// The overlaps to time (`None` is the sequential run).
    pub overlaps: Vec<Overlap>,
    /// Token chunks per shard for [`Overlap::Chunked`]: one timed run per count, named
    /// `chunked:N`.
    pub chunks: Vec<u32>,
    /// Also time the rank's GEMMs alone and its collectives alone.
    pub parts: bool,
    /// Also time the whole layer on this GPU alone (the single-GPU yardstick).
    pub whole: bool,
    /// The GEMM's algorithm on every rank.
    pub algorithm: Algorithm,
    /// Warm-ups and timed runs.
    pub timing: Timing,
    /// The inputs' seed.
    pub seed: u64,
    /// Multiprocessors left out of the GEMMs' persistent grids for NCCL (0: none).
    pub comm_sms: u32,
    /// How long a rank waits for its streams before it gives up.
    pub watchdog: Duration,
    /// A failure planted on this rank before its first collective (the fault test).
    pub fail: bool,
}

/// The time of one kind of run.
#[derive(Clone, Debug)]
pub struct Measured {
    /// `gemm`, `comm`, `none`, `chunked`, `whole`.
    pub name: String,
    /// Milliseconds of each timed run.
    pub times: Vec<f64>,
}

impl Measured {
    /// The median of the timed runs.
    pub fn median(&self) -> f64 {
        crate::timing::median(&self.times)
    }
}

/// One step of a run as the events saw it.
#[derive(Clone, Debug)]
pub struct Span {
    /// The step's lane.
    pub lane: Lane,
    /// What it did (`gemm tokens 0..4096`, `broadcast ×2`).
    pub what: String,
    /// Milliseconds from the run's start to the step's start and end.
    pub begin: f64,
    /// See `begin`.
    pub end: f64,
}

/// What a rank measured and checked.
#[derive(Clone, Debug)]
pub struct RankReport {
    /// The rank.
    pub rank: u32,
    /// The GPU.
    pub device: String,
    /// What the rank's GEMM of all its tokens runs (auto's choice and why).
    pub choice: String,
    /// Each timed kind of run.
    pub measured: Vec<Measured>,
    /// The sampled checks of the runs that produce the result.
    pub checks: Vec<(String, SampleCheck)>,
    /// The steps of the last timed run of each overlap.
    pub timelines: Vec<(String, Vec<Span>)>,
}

/// The rank's device buffers.
struct Buffers {
    a: DeviceBuffer<u16>,
    b: DeviceBuffer<u16>,
    c: DeviceBuffer<u16>,
    d: Option<DeviceBuffer<u16>>,
}

impl Buffers {
    fn address(&self, which: Buffer) -> u64 {
        let b = match which {
            Buffer::A => &self.a,
            Buffer::B => &self.b,
            Buffer::C => &self.c,
            Buffer::D => self.d.as_ref().unwrap_or(&self.c),
        };
        b.as_device_ptr().as_raw()
    }
}

/// Runs one rank: opens its GPU, joins the communicator, times and checks what `plan` asks.
pub fn run_rank<T: Element<Bits = u16>>(
    plan: &RankPlan,
    id: &UniqueId,
) -> Result<RankReport, ParallelError> {
    let rank = plan.rank;
    let sharding = Sharding::new(plan.form, plan.layer, plan.ranks, rank)?;
    let gpu = Gpu::open_device(plan.device, None).map_err(|e| ParallelError::Cuda {
        rank,
        what: format!("opening GPU {}", plan.device),
        cause: format!("{e:#}"),
    })?;
    // `Algorithm::Tuned` keeps this rank's winners in its own file: ranks tune at once.
    let cache = std::env::temp_dir().join(format!("gpu-gemm-tp-rank{rank}-tuning.csv"));
    let gemm = Gemm::on(Backend::Gpu(Box::new(gpu.quiet()))).with_tuning_cache(cache);
    let Backend::Gpu(gpu) = gemm.backend() else {
        unreachable!("made on the GPU above")
    };
    let mut report = RankReport {
        rank,
        device: gpu.device_name.clone(),
        choice: gemm
            .choose::<T>(
                &gemm_config(&sharding, plan.layer.tokens, false),
                &plan.algorithm,
            )
            .map(|c| c.to_string())
            .map_err(|source| ParallelError::Gemm { rank, source })?,
        measured: Vec::new(),
        checks: Vec::new(),
        timelines: Vec::new(),
    };
    if plan.whole {
        // The yardstick has the whole GPU.
        let (measured, check) = time_whole::<T>(&gemm, gpu, plan)?;
        report.measured.push(measured);
        report.checks.push(("whole".into(), check));
    }
    // NCCL: NVLink multicast stays off on shared hosts; NCCL's blocks capped where the GEMMs
    // leave it room.
    std::env::set_var("NCCL_NVLS_ENABLE", "0");
    if plan.comm_sms > 0 {
        std::env::set_var("NCCL_MAX_CTAS", plan.comm_sms.to_string());
    }
    if plan.fail {
        return Err(ParallelError::Planted {
            rank,
            at: "before joining the communicator",
        });
    }
    let mut comm = Comm::init(id, rank, plan.ranks)?;
    let mut runner = Runner::<T>::new(&gemm, gpu, &sharding, plan)?;
    let result = (|| {
        let none = Schedule::new(sharding, Overlap::None, 1)?;
        if plan.parts {
            // The collectives first, on B holding the rank's shard: all-gather's then leaves
            // the whole X in B, so that the GEMMs alone multiply real data (a tensor core runs
            // faster on zeros than on random numbers, and an unwritten buffer may be zeros).
            runner.poison(&none)?;
            for (name, schedule) in [
                ("comm", none.collectives_only()),
                ("gemm", none.gemms_only()),
            ] {
                let (measured, _) = runner.time(&mut comm, &schedule, name, false)?;
                report.measured.push(measured);
            }
        }
        let runs = plan.overlaps.iter().flat_map(|&overlap| match overlap {
            // The sequential run is `none`; copy-first, which has no chunks either, `copy-first:1`
            // so that it counts among the overlaps it is compared with.
            Overlap::None => vec![(overlap, 1, "none".to_string())],
            Overlap::CopyFirst => vec![(overlap, 1, format!("{}:1", overlap.name()))],
            Overlap::Chunked | Overlap::Ring | Overlap::Copy => plan
                .chunks
                .iter()
                .map(|&c| (overlap, c, format!("{}:{c}", overlap.name())))
                .collect(),
        });
        for (overlap, chunks, name) in runs {
            let schedule = Schedule::new(sharding, overlap, chunks)?;
            let (measured, (check, timeline)) = runner.time(&mut comm, &schedule, &name, true)?;
            report.measured.push(measured);
            report.checks.push((name.clone(), check));
            report.timelines.push((name, timeline));
        }
        Ok(())
    })();
    if result.is_err() {
        comm.abort();
    }
    result.map(|()| report)
}

/// A rank's buffers, streams and events, ready to run schedules.
struct Runner<'g, T> {
    gemm: &'g Gemm,
    gpu: &'g Gpu,
    plan: &'g RankPlan,
    sharding: Sharding,
    buffers: Buffers,
    /// The rank's own input shard, put back into B before each checked run.
    input: Vec<T>,
    comm_stream: Stream,
    /// One float all ranks sum before each run, so that they start together.
    barrier: DeviceBuffer<f32>,
    /// The flags this rank sets for its peers ([`Op::Signal`]), each to the run's number.
    flags: DeviceBuffer<u32>,
    /// The peers' buffers and flags mapped here, once a schedule pulls.
    peers: Option<Peers>,
    /// Runs so far: the number a flag is set to, and waited for, in the next one.
    runs: std::cell::Cell<u32>,
}

/// Flags each rank has for its peers: more than any schedule's steps × chunks.
const FLAGS: usize = 4096;

/// The peers' B, C and flags in this rank's address space (CUDA IPC), by rank; this rank's own
/// addresses at its own index.
struct Peers {
    b: Vec<u64>,
    c: Vec<u64>,
    flags: Vec<u64>,
    /// What `cuIpcOpenMemHandle` mapped, closed on drop.
    opened: Vec<u64>,
}

impl Drop for Peers {
    fn drop(&mut self) {
        for &address in &self.opened {
            // SAFETY: mapped by cuIpcOpenMemHandle, closed once.
            unsafe { cu::cuIpcCloseMemHandle(address) };
        }
    }
}

/// What a failed `cust` call of `rank` doing `what` becomes.
fn failed(rank: u32, what: &str) -> impl Fn(cust::error::CudaError) -> ParallelError {
    let what = what.to_string();
    move |e| ParallelError::Cuda {
        rank,
        what: what.clone(),
        cause: e.to_string(),
    }
}

fn alloc(rank: u32, what: &str, len: usize) -> Result<DeviceBuffer<u16>, ParallelError> {
    // SAFETY: every element is written (memset or upload) before it is read.
    unsafe { DeviceBuffer::uninitialized(len.max(1)) }.map_err(|e| ParallelError::Cuda {
        rank,
        what: format!("allocating {what} ({len} elements)"),
        cause: e.to_string(),
    })
}

impl<'g, T: Element<Bits = u16>> Runner<'g, T> {
    fn new(
        gemm: &'g Gemm,
        gpu: &'g Gpu,
        sharding: &Sharding,
        plan: &'g RankPlan,
    ) -> Result<Self, ParallelError> {
        let rank = plan.rank;
        let s = sharding;
        let failed = |what: &str| failed(rank, what);
        let weights = data::weight_shard::<T>(s, plan.seed);
        let mut a = alloc(rank, "the weight shard", s.len(Buffer::A))?;
        a.copy_from(T::as_bits(&weights))
            .map_err(failed("uploading the weight shard"))?;
        drop(weights);
        let d = match s.form {
            Form::ReduceScatter => Some(alloc(rank, "D", s.len(Buffer::D))?),
            Form::AllGather => None,
        };
        Ok(Self {
            gemm,
            gpu,
            plan,
            sharding: *s,
            buffers: Buffers {
                a,
                b: alloc(rank, "B", s.len(Buffer::B))?,
                c: alloc(rank, "C", s.len(Buffer::C))?,
                d,
            },
            input: data::input_shard::<T>(s, plan.seed),
            comm_stream: Stream::new(StreamFlags::NON_BLOCKING, None)
                .map_err(failed("creating the comm stream"))?,
            barrier: DeviceBuffer::zeroed(1).map_err(failed("allocating the barrier"))?,
            flags: DeviceBuffer::zeroed(FLAGS).map_err(failed("allocating the flags"))?,
            peers: None,
            runs: std::cell::Cell::new(0),
        })
    }

    fn fail(&self, what: &str) -> impl Fn(cust::error::CudaError) -> ParallelError {
        failed(self.plan.rank, what)
    }

    /// Every buffer the run writes set to NaN, and the rank's input put in B where `schedule`
    /// wants it: an element a run fails to gather, compute or reduce is then NaN and fails the
    /// check.
    fn poison(&mut self, schedule: &Schedule) -> Result<(), ParallelError> {
        let nan = T::as_bits(&[T::from_f64(f64::NAN)])[0];
        let b = &mut self.buffers;
        for buffer in [&mut b.c].into_iter().chain(b.d.as_mut()) {
            buffer
                .set_16(nan)
                .map_err(failed(self.plan.rank, "filling a buffer with NaN"))?;
        }
        // B as the schedule wants it on the host (NaN but the rank's pieces), then uploaded.
        let mut b = vec![T::from_f64(f64::NAN); self.buffers.b.len()];
        super::local::place_input(schedule, &self.input, &mut b);
        self.buffers
            .b
            .copy_from(T::as_bits(&b))
            .map_err(self.fail("uploading B"))
    }

    /// Maps every peer's B, C and flags here: each rank's IPC handles gathered through NCCL,
    /// then opened (with peer access, so that copies go over NVLink by the copy engines).
    fn map_peers(&mut self, comm: &mut Comm) -> Result<(), ParallelError> {
        if self.peers.is_some() {
            return Ok(());
        }
        let rank = self.plan.rank;
        let own = [
            self.buffers.address(Buffer::B),
            self.buffers.address(Buffer::C),
            self.flags.as_device_ptr().as_raw(),
        ];
        let size = std::mem::size_of::<cu::CUipcMemHandle>();
        let mut mine = Vec::with_capacity(3 * size);
        for address in own {
            // SAFETY: a zeroed handle is filled by the driver for an allocation's base address.
            let mut handle: cu::CUipcMemHandle = unsafe { std::mem::zeroed() };
            cuda(rank, "making an IPC handle", unsafe {
                cu::cuIpcGetMemHandle(&mut handle, address)
            })?;
            // SAFETY: the handle is plain bytes.
            mine.extend_from_slice(unsafe {
                std::slice::from_raw_parts(&handle as *const _ as *const u8, size)
            });
        }
        let ranks = self.plan.ranks as usize;
        let each = mine.len();
        let mut all = vec![0u8; each * ranks];
        all[rank as usize * each..(rank as usize + 1) * each].copy_from_slice(&mine);
        let gathered =
            DeviceBuffer::from_slice(&all).map_err(self.fail("uploading IPC handles"))?;
        let base = gathered.as_device_ptr().as_raw();
        comm.call("ncclAllGather (the IPC handles)", unsafe {
            nccl::all_gather(
                (base + (rank as usize * each) as u64) as *const _,
                base as *mut _,
                each,
                nccl_sys::ncclDataType_t::ncclUint8,
                comm.comm,
                self.comm_stream.as_inner() as _,
            )
        })?;
        let done = Event::new(rank)?;
        done.record(rank, &self.comm_stream)?;
        self.wait(comm, &done, "the IPC handles' all-gather")?;
        gathered
            .copy_to(&mut all[..])
            .map_err(self.fail("downloading IPC handles"))?;
        drop(gathered);
        let mut peers = Peers {
            b: vec![0; ranks],
            c: vec![0; ranks],
            flags: vec![0; ranks],
            opened: Vec::new(),
        };
        for peer in 0..ranks {
            for (i, slot) in [&mut peers.b, &mut peers.c, &mut peers.flags]
                .into_iter()
                .enumerate()
            {
                if peer == rank as usize {
                    slot[peer] = own[i];
                    continue;
                }
                let at = peer * each + i * size;
                // SAFETY: the bytes are a handle another rank's driver made.
                let handle: cu::CUipcMemHandle =
                    unsafe { std::ptr::read_unaligned(all[at..].as_ptr() as *const _) };
                let mut address = 0;
                cuda(rank, "opening a peer's IPC handle", unsafe {
                    cu::cuIpcOpenMemHandle_v2(
                        &mut address,
                        handle,
                        cu::CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as u32,
                    )
                })?;
                slot[peer] = address;
                peers.opened.push(address);
            }
        }
        self.peers = Some(peers);
        Ok(())
    }

    /// Times `schedule` (warm-ups, then timed runs), after one checked run if `check`.
    fn time(
        &mut self,
        comm: &mut Comm,
        schedule: &Schedule,
        name: &str,
        check: bool,
    ) -> Result<(Measured, (SampleCheck, Vec<Span>)), ParallelError> {
        let rank = self.plan.rank;
        if schedule
            .steps
            .iter()
            .any(|s| matches!(s.op, Op::Pull(_) | Op::Signal(_)))
        {
            self.map_peers(comm)?;
        }
        // NCCL's kernels beside the GEMMs (chunked, ring) get the multiprocessors the plan
        // leaves them; alone (sequential) or absent (copy), none is held back.
        let beside = matches!(schedule.overlap, Overlap::Chunked | Overlap::Ring)
            && schedule.steps.iter().any(|s| matches!(s.op, Op::Gemm(_)));
        self.gpu
            .reserve_multiprocessors(if beside { self.plan.comm_sms } else { 0 });
        // `Algorithm::Tuned`: each distinct GEMM of the schedule timed once at every candidate
        // on the rank's own buffers (with the multiprocessors it will have), so that a chunk
        // gets the tile that suits its size, not the whole GEMM's.
        if matches!(self.plan.algorithm, Algorithm::Tuned(_)) {
            // The candidates are timed on real numbers (a tensor core runs faster on zeros):
            // B filled with X's values, as if every token had arrived.
            let x = match self.sharding.form {
                Form::AllGather => {
                    let whole = Sharding::new(Form::AllGather, self.plan.layer, 1, 0)?;
                    data::input_shard::<T>(&whole, self.plan.seed)
                }
                Form::ReduceScatter => self.input.clone(),
            };
            self.buffers
                .b
                .copy_from(T::as_bits(&x))
                .map_err(self.fail("filling B for tuning"))?;
            drop(x);
            let mut seen = Vec::new();
            for step in &schedule.steps {
                if let Op::Gemm(g) = &step.op {
                    let key = (g.tokens.end - g.tokens.start, g.accumulate);
                    if !seen.contains(&key) {
                        seen.push(key);
                        self.tune(g)?;
                    }
                }
            }
        }
        // The GEMM of each step prepared once: its launch, tensor maps, grid.
        let mut launches: Vec<Option<(Launch, Problem)>> = Vec::new();
        for step in &schedule.steps {
            launches.push(match &step.op {
                Op::Gemm(g) => Some(self.launch_of(g)?),
                Op::Collectives(_) | Op::Pull(_) | Op::Signal(_) => None,
            });
        }
        let mut prepared: Vec<Option<Prepared<'_>>> = Vec::new();
        for (step, launch) in schedule.steps.iter().zip(&launches) {
            prepared.push(match (&step.op, launch) {
                (Op::Gemm(g), Some((launch, problem))) => {
                    let operands = (
                        self.buffers.address(Buffer::A),
                        self.buffers.address(Buffer::B) + 2 * g.b_offset as u64,
                        self.buffers.address(g.out) + 2 * g.out_offset as u64,
                    );
                    Some(self.gpu.prepare(launch, problem, operands).map_err(|e| {
                        ParallelError::Cuda {
                            rank,
                            what: format!("preparing the GEMM of {:?}", g.tokens),
                            cause: format!("{e:#}"),
                        }
                    })?)
                }
                _ => None,
            });
        }
        let events = Events::new(rank, schedule.steps.len())?;
        let mut verdict = SampleCheck {
            checked: 0,
            worst: 0.0,
            first_failure: None,
        };
        if check {
            self.poison(schedule)?;
            self.run_once(comm, schedule, &prepared, &events)?;
            verdict = self.check()?;
            if let Some((n, t, got, want)) = verdict.first_failure {
                return Err(ParallelError::WrongResult {
                    rank,
                    detail: format!(
                        "{name}: Y[token {t}, feature {n}] = {got}, the f64 reference {want} \
                         (worst error {:.2}× its bound over {} sampled elements)",
                        verdict.worst, verdict.checked
                    ),
                });
            }
        }
        for _ in 0..self.plan.timing.warmup {
            self.run_once(comm, schedule, &prepared, &events)?;
        }
        let mut times = Vec::new();
        for _ in 0..self.plan.timing.iters.max(1) {
            times.push(self.run_once(comm, schedule, &prepared, &events)?);
        }
        let kernels: Vec<Option<String>> = launches
            .iter()
            .map(|l| l.as_ref().map(|(launch, _)| launch.name().to_string()))
            .collect();
        let timeline = events.spans(rank, schedule, &kernels)?;
        Ok((
            Measured {
                name: name.to_string(),
                times,
            },
            (verdict, timeline),
        ))
    }

    /// Runs the GEMM of `g` once through `Gemm::run` with the plan's `Algorithm::Tuned`, which
    /// times the candidates on these buffers the first time (C's input restored when β = 1)
    /// and keeps the winner for [`Runner::launch_of`].
    fn tune(&self, g: &super::schedule::GemmStep) -> Result<(), ParallelError> {
        let rank = self.plan.rank;
        let config = gemm_config(&self.sharding, g.tokens.end - g.tokens.start, g.accumulate);
        let slice = |address: u64, len: usize| Raw { address, len };
        let b = &self.buffers;
        let a = slice(b.address(Buffer::A), b.a.len());
        let bb = slice(
            b.address(Buffer::B) + 2 * g.b_offset as u64,
            b.b.len() - g.b_offset,
        );
        let out_len = match g.out {
            Buffer::D => b.d.as_ref().map_or(0, |d| d.len()),
            _ => b.c.len(),
        };
        let mut c = slice(
            b.address(g.out) + 2 * g.out_offset as u64,
            out_len - g.out_offset,
        );
        self.gemm
            .run::<T>(&config, &self.plan.algorithm, &a, &bb, &mut c)
            .map(|_| ())
            .map_err(|source| ParallelError::Gemm { rank, source })
    }

    /// What the GEMM of `tokens` launches: `Gemm`'s own choice and checks.
    fn launch_of(&self, g: &super::schedule::GemmStep) -> Result<(Launch, Problem), ParallelError> {
        let config = gemm_config(&self.sharding, g.tokens.end - g.tokens.start, g.accumulate);
        self.gemm
            .launch_for::<T>(&config, &self.plan.algorithm)
            .map(|(_, launch, problem)| (launch, problem))
            .map_err(|source| ParallelError::Gemm {
                rank: self.plan.rank,
                source,
            })
    }

    /// Enqueues one run of `schedule` and waits for it under the watchdog; returns its
    /// milliseconds from the barrier's end to the last step's end.
    fn run_once(
        &self,
        comm: &mut Comm,
        schedule: &Schedule,
        prepared: &[Option<Prepared<'_>>],
        events: &Events,
    ) -> Result<f64, ParallelError> {
        let rank = self.plan.rank;
        let compute = self.gpu.stream();
        let lane = |l| match l {
            Lane::Compute => compute,
            Lane::Comm => &self.comm_stream,
        };
        // Both streams start after every rank arrived: a one-float all-reduce.
        let barrier = self.barrier.as_device_ptr().as_raw() as *mut core::ffi::c_void;
        comm.call("ncclAllReduce (the barrier before a run)", unsafe {
            nccl::all_reduce(
                barrier,
                barrier,
                1,
                nccl_sys::ncclDataType_t::ncclFloat32,
                nccl_sys::ncclRedOp_t::ncclSum,
                comm.comm,
                self.comm_stream.as_inner() as _,
            )
        })?;
        events.start.record(rank, &self.comm_stream)?;
        events.start.wait_on(rank, compute)?;
        let dtype = nccl_type(T::DTYPE);
        let run = self.runs.get() + 1;
        self.runs.set(run);
        for (i, step) in schedule.steps.iter().enumerate() {
            let stream = lane(step.lane());
            for &d in &step.after {
                events.end[d].wait_on(rank, stream)?;
            }
            events.begin[i].record(rank, stream)?;
            match &step.op {
                Op::Gemm(_) => prepared[i]
                    .as_ref()
                    .expect("every GEMM step is prepared")
                    .enqueue::<T>()
                    .map_err(|e| ParallelError::Cuda {
                        rank,
                        what: "launching a GEMM".into(),
                        cause: format!("{e:#}"),
                    })?,
                Op::Pull(p) => {
                    let peers = self.peers.as_ref().expect("mapped before a pulling run");
                    if let Some(flag) = p.ready {
                        // SAFETY: the peer's flags, mapped here; the stream waits on the GPU.
                        cuda(rank, "waiting for a peer's flag", unsafe {
                            cu::cuStreamWaitValue32_v2(
                                stream.as_inner() as _,
                                peers.flags[p.peer as usize] + 4 * flag as u64,
                                run,
                                0, // CU_STREAM_WAIT_VALUE_GEQ
                            )
                        })?;
                    }
                    let from = match p.from {
                        Buffer::B => peers.b[p.peer as usize],
                        Buffer::C => peers.c[p.peer as usize],
                        other => unreachable!("no schedule pulls from {other:?}"),
                    };
                    // SAFETY: both ranges lie inside their buffers (the schedule's tests).
                    cuda(rank, "copying from a peer", unsafe {
                        cu::cuMemcpyDtoDAsync_v2(
                            self.buffers.address(p.to) + 2 * p.to_offset as u64,
                            from + 2 * p.from_offset as u64,
                            2 * p.count,
                            stream.as_inner() as _,
                        )
                    })?;
                }
                Op::Signal(flag) => {
                    // SAFETY: this rank's flags; the write is fenced after the stream's work.
                    cuda(rank, "setting a flag", unsafe {
                        cu::cuStreamWriteValue32_v2(
                            stream.as_inner() as _,
                            self.flags.as_device_ptr().as_raw() + 4 * *flag as u64,
                            run,
                            0, // CU_STREAM_WRITE_VALUE_DEFAULT: fenced
                        )
                    })?;
                }
                Op::Collectives(group) => {
                    comm.call("ncclGroupStart", nccl::group_start())?;
                    for c in group {
                        self.collective(comm, c, dtype)?;
                    }
                    comm.call("ncclGroupEnd", nccl::group_end())?;
                }
            }
            events.end[i].record(rank, stream)?;
        }
        // The run ends when both lanes have.
        for l in [Lane::Compute, Lane::Comm] {
            if let Some(last) = schedule.last_of(l) {
                events.end[last].wait_on(rank, compute)?;
            }
        }
        events.stop.record(rank, compute)?;
        self.wait(comm, &events.stop, "a run's GEMMs and collectives")?;
        events.stop.since(rank, &events.start)
    }

    /// One collective of a group, on the comm stream.
    fn collective(
        &self,
        comm: &Comm,
        c: &Collective,
        dtype: nccl_sys::ncclDataType_t,
    ) -> Result<(), ParallelError> {
        let at = |b: Buffer, offset: usize| (self.buffers.address(b) + 2 * offset as u64) as *mut _;
        let stream = self.comm_stream.as_inner() as _;
        let sum = nccl_sys::ncclRedOp_t::ncclSum;
        let rank = comm.rank as usize;
        // SAFETY: every offset and count lies inside its buffer (the schedule's tests), the
        // buffers are the rank's own device memory, and the stream is of the same context.
        unsafe {
            match *c {
                Collective::AllGather {
                    buffer,
                    offset,
                    per_rank,
                } => comm.call(
                    "ncclAllGather",
                    nccl::all_gather(
                        at(buffer, offset + rank * per_rank),
                        at(buffer, offset),
                        per_rank,
                        dtype,
                        comm.comm,
                        stream,
                    ),
                ),
                Collective::ReduceScatter {
                    send,
                    send_offset,
                    recv,
                    recv_offset,
                    per_rank,
                } => comm.call(
                    "ncclReduceScatter",
                    nccl::reduce_scatter(
                        at(send, send_offset),
                        at(recv, recv_offset),
                        per_rank,
                        dtype,
                        sum,
                        comm.comm,
                        stream,
                    ),
                ),
                Collective::Send {
                    peer,
                    buffer,
                    offset,
                    count,
                } => comm.call(
                    "ncclSend",
                    nccl::send(
                        at(buffer, offset),
                        count,
                        dtype,
                        peer as i32,
                        comm.comm,
                        stream,
                    ),
                ),
                Collective::Recv {
                    peer,
                    buffer,
                    offset,
                    count,
                } => comm.call(
                    "ncclRecv",
                    nccl::recv(
                        at(buffer, offset),
                        count,
                        dtype,
                        peer as i32,
                        comm.comm,
                        stream,
                    ),
                ),
            }
        }
    }

    /// Waits for `event` while watching NCCL's asynchronous errors and the clock.
    fn wait(&self, comm: &mut Comm, event: &Event, what: &str) -> Result<(), ParallelError> {
        let rank = self.plan.rank;
        let started = Instant::now();
        loop {
            if event.done(rank)? {
                return Ok(());
            }
            if let Err(e) = comm.async_error() {
                comm.abort();
                return Err(e);
            }
            if started.elapsed() > self.plan.watchdog {
                comm.abort();
                return Err(ParallelError::Timeout {
                    rank,
                    seconds: self.plan.watchdog.as_secs(),
                    waiting_for: what.to_string(),
                });
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    /// The sampled check of the rank's result after a checked run.
    fn check(&self) -> Result<SampleCheck, ParallelError> {
        let (which, _, _) = self.sharding.result();
        let buffer = match which {
            Buffer::D => self.buffers.d.as_ref().expect("reduce-scatter has D"),
            _ => &self.buffers.c,
        };
        let mut host = vec![T::from_f64(0.0); buffer.len()];
        buffer
            .copy_to(T::as_bits_mut(&mut host))
            .map_err(self.fail("downloading the result"))?;
        Ok(data::check_result(
            &self.sharding,
            self.plan.seed,
            &host,
            48,
        ))
    }
}

/// A range of the rank's own device memory as an operand of [`Gemm::run`].
struct Raw {
    address: u64,
    len: usize,
}

impl<T: Element> crate::Operand<T> for Raw {
    fn memory(&self) -> crate::api::Memory<'_, T> {
        crate::api::Memory::Device {
            address: self.address,
            len: self.len,
        }
    }
}

impl<T: Element> crate::OperandMut<T> for Raw {
    fn memory_mut(&mut self) -> crate::api::MemoryMut<'_, T> {
        crate::api::MemoryMut::Device {
            address: self.address,
            len: self.len,
        }
    }
}

/// The events of a run: its start and end, and each step's begin and end.
struct Events {
    start: Event,
    stop: Event,
    begin: Vec<Event>,
    end: Vec<Event>,
}

impl Events {
    fn new(rank: u32, steps: usize) -> Result<Self, ParallelError> {
        let many = |n| {
            (0..n)
                .map(|_| Event::new(rank))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Self {
            start: Event::new(rank)?,
            stop: Event::new(rank)?,
            begin: many(steps)?,
            end: many(steps)?,
        })
    }

    /// The last run's steps, in milliseconds from its start.
    fn spans(
        &self,
        rank: u32,
        schedule: &Schedule,
        kernels: &[Option<String>],
    ) -> Result<Vec<Span>, ParallelError> {
        schedule
            .steps
            .iter()
            .enumerate()
            .map(|(i, step)| {
                Ok(Span {
                    lane: step.lane(),
                    what: match &kernels[i] {
                        Some(kernel) => format!("{} [{kernel}]", describe(&step.op)),
                        None => describe(&step.op),
                    },
                    begin: self.begin[i].since(rank, &self.start)?,
                    end: self.end[i].since(rank, &self.start)?,
                })
            })
            .collect()
    }
}

/// A step in a few words, for the timeline.
pub fn describe(op: &Op) -> String {
    match op {
        Op::Gemm(g) => format!(
            "gemm tokens {}..{}{}",
            g.tokens.start,
            g.tokens.end,
            if g.accumulate { " (+= received)" } else { "" }
        ),
        Op::Pull(p) => format!(
            "pull {} elements of {:?} from rank {}{}",
            p.count,
            p.from,
            p.peer,
            if p.ready.is_some() {
                " (after its flag)"
            } else {
                ""
            }
        ),
        Op::Signal(flag) => format!("flag {flag}"),
        Op::Collectives(group) => {
            let name = match group.first() {
                Some(Collective::AllGather { .. }) => "all-gather",
                Some(Collective::ReduceScatter { .. }) => "reduce-scatter",
                Some(Collective::Send { .. } | Collective::Recv { .. }) => "send+receive",
                None => "nothing",
            };
            if group.len() > 1 && !name.contains('+') {
                format!("{name} ×{}", group.len())
            } else {
                name.to_string()
            }
        }
    }
}

/// The whole layer on this GPU alone, timed (the yardstick of the scaling efficiency) and
/// checked.
fn time_whole<T: Element<Bits = u16>>(
    gemm: &Gemm,
    gpu: &Gpu,
    plan: &RankPlan,
) -> Result<(Measured, SampleCheck), ParallelError> {
    let rank = plan.rank;
    let one = Sharding::new(Form::AllGather, plan.layer, 1, 0)?;
    let failed = |what: &str| failed(rank, what);
    let (w, x) = data::whole::<T>(plan.layer, plan.seed);
    let mut a = alloc(rank, "the whole W", w.len())?;
    a.copy_from(T::as_bits(&w)).map_err(failed("uploading W"))?;
    let mut b = alloc(rank, "the whole X", x.len())?;
    b.copy_from(T::as_bits(&x)).map_err(failed("uploading X"))?;
    drop((w, x));
    let c = alloc(rank, "the whole Y", one.len(Buffer::C))?;
    let config = gemm_config(&one, plan.layer.tokens, false);
    if matches!(plan.algorithm, Algorithm::Tuned(_)) {
        let raw = |b: &DeviceBuffer<u16>| Raw {
            address: b.as_device_ptr().as_raw(),
            len: b.len(),
        };
        gemm.run::<T>(&config, &plan.algorithm, &raw(&a), &raw(&b), &mut raw(&c))
            .map_err(|source| ParallelError::Gemm { rank, source })?;
    }
    let (_, launch, problem) = gemm
        .launch_for::<T>(&config, &plan.algorithm)
        .map_err(|source| ParallelError::Gemm { rank, source })?;
    let raw = |b: &DeviceBuffer<u16>| b.as_device_ptr().as_raw();
    let prepared = gpu
        .prepare(&launch, &problem, (raw(&a), raw(&b), raw(&c)))
        .map_err(|e| ParallelError::Cuda {
            rank,
            what: "preparing the whole layer's GEMM".into(),
            cause: format!("{e:#}"),
        })?;
    let (start, stop) = (Event::new(rank)?, Event::new(rank)?);
    let stream = gpu.stream();
    let run = || -> Result<f64, ParallelError> {
        start.record(rank, stream)?;
        prepared.enqueue::<T>().map_err(|e| ParallelError::Cuda {
            rank,
            what: "launching the whole layer's GEMM".into(),
            cause: format!("{e:#}"),
        })?;
        stop.record(rank, stream)?;
        stream
            .synchronize()
            .map_err(failed("running the whole layer's GEMM"))?;
        stop.since(rank, &start)
    };
    run()?;
    let mut host = vec![T::from_f64(0.0); c.len()];
    c.copy_to(T::as_bits_mut(&mut host))
        .map_err(failed("downloading the whole Y"))?;
    let check = data::check_result(&one, plan.seed, &host, 48);
    for _ in 0..plan.timing.warmup {
        run()?;
    }
    let times = (0..plan.timing.iters.max(1))
        .map(|_| run())
        .collect::<Result<Vec<_>, _>>()?;
    Ok((
        Measured {
            name: "whole".into(),
            times,
        },
        check,
    ))
}
