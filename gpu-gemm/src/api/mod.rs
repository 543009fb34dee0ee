//! The library's call: `C = α·op(A)·op(B) + β·C` on buffers the caller owns, by any of the
//! course's kernels, on the GPU or the CPU emulator.
//!
//! ```
//! use gpu_gemm::{Algorithm, Gemm, GemmConfig, GemmError, Math};
//!
//! fn main() -> Result<(), GemmError> {
//!     // Without a GPU (as here, in the doctest), the emulator runs the same kernels on the CPU.
//!     let gemm = Gemm::new().unwrap_or_else(|_| Gemm::emulator());
//!     let (m, n, k) = (48, 40, 33);
//!     let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 - 3.0).collect();
//!     let b: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32 * 0.5).collect();
//!     let (a_buf, b_buf) = (gemm.upload(&a)?, gemm.upload(&b)?);
//!     let mut c_buf = gemm.zeros::<f32>(m * n)?;
//!     let config = GemmConfig::new(m as u32, n as u32, k as u32);
//!     let choice = gemm.run(&config, &Algorithm::Auto(Math::Strict), &a_buf, &b_buf, &mut c_buf)?;
//!     let c = gemm.download(&c_buf)?;
//!     // Column-major: C(i, j) is c[i + j·m]. Small integers and halves: the sums are exact.
//!     let expected: f32 = (0..k).map(|l| a[3 + l * m] * b[l + 5 * k]).sum();
//!     assert_eq!(c[3 + 5 * m], expected);
//!     println!("{choice}");
//!     Ok(())
//! }
//! ```
//!
//! What the call checks before it launches anything, each refusal a [`GemmError`]: the sizes
//! and leading dimensions (of A and B as stored: k×m for a transposed A, n×k for a transposed
//! B), whether the algorithm computes the transposes asked for (cuBLAS all four, the course's
//! kernels N,N: `host --list` and `Variant::transposes` say which), its constraints on the
//! shape, the device's architecture (the `wgmma` kernels need sm_90a), where each buffer lives,
//! its length and its alignment.
//!
//! The rest of the library's surface, one file each:
//! - [`Plan`] (`plan.rs`): the choice, loading and allocation done once, then
//!   [`Plan::enqueue`] on the caller's stream with nothing allocated and nothing waited for,
//!   so that it can be captured into a CUDA graph; [`Gemm::run`] is the one-line form.
//! - [`Gemm::run_fp8`] (`fp8.rs`): e4m3 operands with their scales, per tensor or per block.
//! - [`Gemm::capture`] and [`Graph`] (`graph.rs`): a chain of enqueues recorded once as a CUDA
//!   graph and launched as one (a decode step).
//! - [`Plan::enqueue_cudarc`] and [`Gemm::on_cudarc`] (`cudarc_buffers.rs`): a cudarc program's
//!   `CudaSlice`s and stream.
//!
//! [`Math::Fp32Accurate`] promises an error at or below SGEMM's relative to Σ|a·b| of each
//! element, for every normal f32 input: its 3xTF32 kernel scales each row of A and column of B
//! by a power of two first (`kernels_gpu::variants::ranges`), so that the small halves of its
//! split stay normal anywhere in f32's range; a kernel without that pass (chapter 1's
//! `tc-3xtf32`) is not handed out under it.
mod buffers;
mod config;
mod cudarc_buffers;
mod error;
mod fp8;
mod graph;
mod plan;
pub use buffers::{Buffer, Memory, MemoryMut, Operand, OperandMut, Table};
pub use config::{Algorithm, Amax, Choice, GemmConfig, Tuning};
pub use error::GemmError;
pub use fp8::Fp8;
pub use graph::Graph;
pub use plan::{Plan, PLAN_BUFFER_SETS};

use crate::auto;
use crate::emulator;
use crate::gpu::Gpu;
use crate::launch::{Copies, Launch};
use crate::problem::{Init, Problem, Transposes};
use crate::registry::{self, CublasMath, Math, Variant};
use crate::run::{self, Backend};
use crate::timing::{Clock, Timing};
use crate::tuning::{self, Cache, Candidate, Key, Measurement, Protocol, Timed};
use cust::memory::{
    AsyncCopyDestination, CopyDestination, DeviceBuffer, DevicePointer, DeviceSlice,
};
use cust::stream::Stream;
use kernels_gpu::registry::Target;
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// An element type of the kernels: `f32`, `f64`, [`half::bf16`] and [`half::f16`]. The 16-bit
/// types accumulate in f32 and take α and β as f32.
pub use crate::problem::Scalar as Element;

type Result<T> = std::result::Result<T, GemmError>;

pub use crate::problem::{
    Activation, Batch, Bias, Epilogue, GroupLayout, Transpose, GROUP_COLUMNS,
};

/// The kernels' vector loads (16 bytes) and the TMA engine need operands at 16-byte addresses.
const OPERAND_ALIGN: u64 = 16;

/// A handle on the GPU (a context and a stream) or on the CPU emulator. The kernels' PTX
/// modules are compiled by the driver on first use, so the first call of a module is slow; the
/// driver caches the result for later processes.
pub struct Gemm {
    backend: Backend,
    /// [`Algorithm::Tuned`]'s cache: its file and what this handle read or tuned.
    cache: RefCell<Cache>,
    /// Tuning on the emulator, for the tests: a device to key by and a clock.
    clock: Option<EmulatorClock>,
}

/// What lets the tests tune on the emulator: the device its keys name, and the milliseconds
/// each run of a candidate (by label) is said to take. The emulator still runs every candidate
/// on the buffers, so that what tuning does to C is the real thing.
struct EmulatorClock {
    device: tuning::Device,
    time: RefCell<ClockFn>,
}

/// A candidate's label → the milliseconds a run of it is said to take.
type ClockFn = Box<dyn FnMut(&str) -> f64 + Send>;

/// C's input, kept while candidates overwrite it.
enum SavedC<T: Element> {
    Device(DeviceBuffer<T::Bits>),
    Host(Vec<T>),
}

impl Gemm {
    /// On device 0: initialises the driver, makes a context and a non-blocking stream.
    pub fn new() -> Result<Self> {
        let gpu = Gpu::open(None).map_err(|e| GemmError::NoGpu(format!("{e:#}")))?;
        Ok(Gemm::on(Backend::Gpu(Box::new(gpu.quiet()))))
    }

    /// On the caller's current `cust` context, launching on `stream` (or a new non-blocking
    /// stream): calls are ordered after the work the caller queued there before.
    pub fn on_current_context(stream: Option<Stream>) -> Result<Self> {
        let gpu =
            Gpu::on_current_context(stream).map_err(|e| GemmError::NoGpu(format!("{e:#}")))?;
        Ok(Gemm::on(Backend::Gpu(Box::new(gpu.quiet()))))
    }

    /// On the CPU emulator: the same kernels over host memory, every access checked. Slow
    /// (seconds for a 256³ product), for programs and tests without a GPU.
    pub fn emulator() -> Self {
        Gemm::on(Backend::Emulator)
    }

    /// On a backend the pipeline opened (`host` runs its GPU or emulator through it), with the
    /// default tuning cache ([`tuning::default_path`]).
    pub fn on(backend: Backend) -> Self {
        Gemm {
            backend,
            cache: RefCell::new(Cache::new(tuning::default_path())),
            clock: None,
        }
    }

    /// The backend calls run on.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// With [`Algorithm::Tuned`]'s cache in the file `path` instead of the default
    /// (`$GPU_GEMM_TUNING_CACHE`, else `$XDG_CACHE_HOME/gpu-gemm/tuning.csv`, else
    /// `~/.cache/gpu-gemm/tuning.csv`). Its folder is made when the first winner is written. A
    /// file that cannot be written never fails a call: the [`Choice`]'s reason says so, and the
    /// handle remembers its winners in memory.
    ///
    /// ```
    /// use gpu_gemm::{Algorithm, Gemm, GemmConfig, GemmError, Math, Tuning};
    ///
    /// fn main() -> Result<(), GemmError> {
    ///     let cache = std::env::temp_dir().join("gpu-gemm-doctest").join("tuning.csv");
    ///     let _ = std::fs::remove_file(&cache); // so that the first call below tunes
    ///     let gemm = Gemm::new()
    ///         .unwrap_or_else(|_| Gemm::emulator())
    ///         .with_tuning_cache(&cache);
    ///     let (m, n, k) = (64, 48, 32);
    ///     let (a, b) = (gemm.upload(&vec![1.0f32; m * k])?, gemm.upload(&vec![0.5f32; k * n])?);
    ///     let mut c = gemm.zeros::<f32>(m * n)?;
    ///     let config = GemmConfig::new(m as u32, n as u32, k as u32);
    ///     let tuned = Algorithm::Tuned(Math::Strict);
    ///     let first = gemm.run(&config, &tuned, &a, &b, &mut c)?;
    ///     let later = gemm.run(&config, &tuned, &a, &b, &mut c)?;
    ///     match (&first.tuning, &later.tuning) {
    ///         // On a GPU: every candidate timed by the first call, the winner read back after.
    ///         (Some(Tuning::Measured { ranking, .. }), Some(Tuning::Cached { .. })) => {
    ///             assert_eq!(ranking[0].0, later.variant);
    ///         }
    ///         // On the emulator (as here, in the doctest): auto's choice, nothing timed.
    ///         (Some(Tuning::NotTuned), Some(Tuning::NotTuned)) => assert!(!gemm.is_gpu()),
    ///         other => panic!("{other:?}"),
    ///     }
    ///     // Whatever ran, C is the product: 32 × 1 × 0.5.
    ///     assert!(gemm.download(&c)?.iter().all(|&x| x == 16.0));
    ///     println!("{later}");
    ///     Ok(())
    /// }
    /// ```
    pub fn with_tuning_cache(self, path: impl Into<PathBuf>) -> Self {
        Gemm {
            cache: RefCell::new(Cache::new(Some(path.into()))),
            ..self
        }
    }

    /// The tuning cache's file, if there is one.
    pub fn tuning_cache(&self) -> Option<PathBuf> {
        self.cache.borrow().path().map(Path::to_path_buf)
    }

    /// The emulator, tuning with a clock of the tests' own: `time` gives each run of a
    /// candidate (by label) its milliseconds, and the keys name `device`.
    #[cfg(test)]
    pub(crate) fn emulator_with_clock(
        device: tuning::Device,
        time: impl FnMut(&str) -> f64 + Send + 'static,
    ) -> Self {
        Gemm {
            clock: Some(EmulatorClock {
                device,
                time: RefCell::new(Box::new(time)),
            }),
            ..Gemm::emulator()
        }
    }

    /// Whether calls run on a GPU.
    pub fn is_gpu(&self) -> bool {
        self.backend.is_gpu()
    }

    /// The GPU's name, architecture and PTX, or "the CPU emulator".
    pub fn device(&self) -> String {
        self.backend.describe()
    }

    /// The stream calls are launched on (`None` on the emulator).
    pub fn stream(&self) -> Option<&Stream> {
        match &self.backend {
            Backend::Gpu(g) => Some(g.stream()),
            Backend::Emulator => None,
        }
    }

    /// `data` in the handle's memory.
    pub fn upload<T: Element>(&self, data: &[T]) -> Result<Buffer<T>> {
        match &self.backend {
            Backend::Gpu(_) => DeviceBuffer::from_slice(T::as_bits(data))
                .map(Buffer::Device)
                .map_err(|e| {
                    GemmError::Launch(format!("cannot upload {} elements: {e}", data.len()))
                }),
            Backend::Emulator => Ok(Buffer::Host(data.to_vec())),
        }
    }

    /// A grouped GEMM's table ([`Gemm::run_grouped`]) in the handle's memory.
    pub fn upload_table(&self, words: &[u32]) -> Result<Table> {
        match &self.backend {
            Backend::Gpu(_) => DeviceBuffer::from_slice(words)
                .map(Table::Device)
                .map_err(|e| {
                    GemmError::Launch(format!(
                        "cannot upload a table of {} words: {e}",
                        words.len()
                    ))
                }),
            Backend::Emulator => Ok(Table::Host(words.to_vec())),
        }
    }

    /// `len` zeros in the handle's memory.
    pub fn zeros<T: Element>(&self, len: usize) -> Result<Buffer<T>> {
        self.upload(&vec![T::from_f64(0.0); len])
    }

    /// A buffer's elements, copied to the host (after the calls before it finished).
    pub fn download<T: Element>(&self, buffer: &Buffer<T>) -> Result<Vec<T>> {
        match buffer {
            Buffer::Device(d) => {
                let mut out = vec![T::from_f64(0.0); d.len()];
                d.copy_to(T::as_bits_mut(&mut out))
                    .map_err(|e| GemmError::Launch(format!("cannot download: {e}")))?;
                Ok(out)
            }
            Buffer::Host(h) => Ok(h.clone()),
        }
    }

    /// What a call with this configuration and algorithm would run on this handle, and why,
    /// or why it would be refused; nothing is launched.
    pub fn choose<T: Element>(&self, config: &GemmConfig, algorithm: &Algorithm) -> Result<Choice> {
        self.resolve::<T>(config, algorithm)
            .map(|(choice, _, _)| choice)
    }

    /// Runs `C = α·op(A)·op(B) + β·C` and returns when C is written (on the GPU: after the
    /// stream's work up to it finished). Returns what ran and why. The one-line form of
    /// [`Gemm::plan`], [`Plan::enqueue`] and [`Gemm::synchronize`]; a program that runs the
    /// same GEMM often plans it once.
    pub fn run<T: Element>(
        &self,
        config: &GemmConfig,
        algorithm: &Algorithm,
        a: &(impl Operand<T> + ?Sized),
        b: &(impl Operand<T> + ?Sized),
        c: &mut (impl OperandMut<T> + ?Sized),
    ) -> Result<Choice> {
        if let Algorithm::Tuned(math) = algorithm {
            if !config.epilogue.is_none() {
                return Err(GemmError::Unsupported {
                    algorithm: algorithm.label(),
                    reason: "tuning times its candidates without a fused epilogue: use \
                             Algorithm::Auto"
                        .into(),
                });
            }
            if config.batch.is_batched() || config.groups != GroupLayout::None {
                return Err(GemmError::Unsupported {
                    algorithm: algorithm.label(),
                    reason: "tuning times one problem, not a strided batch or groups: use \
                             Algorithm::Auto"
                        .into(),
                });
            }
            return self.run_tuned(config, *math, a, b, c);
        }
        self.run_once(config, algorithm, |plan| plan.enqueue(a, b, c))
    }

    /// [`Gemm::run`] with the bias vector of the configuration's fused epilogue
    /// ([`GemmConfig::epilogue`]), in the operands' memory and type.
    pub fn run_with_bias<T: Element>(
        &self,
        config: &GemmConfig,
        algorithm: &Algorithm,
        a: &(impl Operand<T> + ?Sized),
        b: &(impl Operand<T> + ?Sized),
        bias: &(impl Operand<T> + ?Sized),
        c: &mut (impl OperandMut<T> + ?Sized),
    ) -> Result<Choice> {
        self.run_once(config, algorithm, |plan| {
            plan.enqueue_with_bias(a, b, bias, c)
        })
    }

    /// [`Gemm::run`] for a grouped GEMM ([`GemmConfig::contiguous_groups`],
    /// [`GemmConfig::masked_groups`]) with its table: a word per [`GROUP_COLUMNS`] columns of C
    /// (contiguous: each run's group) or per group (masked: its count), in the operands' memory.
    /// One launch computes every group.
    pub fn run_grouped<T: Element>(
        &self,
        config: &GemmConfig,
        algorithm: &Algorithm,
        a: &(impl Operand<T> + ?Sized),
        b: &(impl Operand<T> + ?Sized),
        table: &(impl Operand<u32> + ?Sized),
        c: &mut (impl OperandMut<T> + ?Sized),
    ) -> Result<Choice> {
        self.run_once(config, algorithm, |plan| {
            plan.enqueue_grouped(a, b, table, c)
        })
    }

    /// The table a grouped problem needs against what was given: its length, and the handle's
    /// memory.
    fn check_groups(&self, problem: &Problem, table: Option<&Memory<'_, u32>>) -> Result<()> {
        let needed = match problem.groups {
            GroupLayout::None => None,
            GroupLayout::Contiguous => Some((
                (problem.shape.n / GROUP_COLUMNS) as usize,
                format!(
                    "a contiguous grouped GEMM of n = {} needs a word per {GROUP_COLUMNS} columns",
                    problem.shape.n
                ),
            )),
            GroupLayout::Masked => Some((
                problem.batch.count as usize,
                format!(
                    "a masked grouped GEMM of {} groups needs a count per group",
                    problem.batch.count
                ),
            )),
        };
        let misshaped =
            |given: String, needed: String| GemmError::GroupTableMisshaped { given, needed };
        let (table, (words, needs)) = match (table, needed) {
            (None, None) => return Ok(()),
            (Some(t), None) => return Err(misshaped(
                format!("{} words", location(t).2),
                "the GEMM is not grouped (GemmConfig::contiguous_groups or masked_groups make one)"
                    .into(),
            )),
            (None, Some((_, needs))) => {
                return Err(misshaped(
                    "nothing".into(),
                    format!("{needs}: give it to Gemm::run_grouped or Plan::enqueue_grouped"),
                ))
            }
            (Some(t), Some(needed)) => (t, needed),
        };
        let (found, _, len, _) = location(table);
        if len != words {
            return Err(misshaped(
                format!("{len} words"),
                format!("{needs}: {words}"),
            ));
        }
        let memory = if self.is_gpu() { "device" } else { "host" };
        if found != memory {
            return Err(GemmError::WrongMemory {
                operand: 't',
                found,
                needs: memory,
                backend: self.device(),
            });
        }
        Ok(())
    }

    /// A plan for one set of buffers, `enqueue` on it, and the wait for the stream: the one-line
    /// forms' body.
    fn run_once<T: Element>(
        &self,
        config: &GemmConfig,
        algorithm: &Algorithm,
        enqueue: impl FnOnce(&mut Plan<'_, T>) -> Result<()>,
    ) -> Result<Choice> {
        let mut plan = self.plan_for::<T>(config, algorithm, 1)?;
        enqueue(&mut plan)?;
        self.synchronize().map_err(|e| {
            GemmError::Launch(format!(
                "{} failed on the device ({e})",
                plan.choice().entry
            ))
        })?;
        Ok(plan.choice().clone())
    }

    /// The bias the problem's epilogue needs against what was given: its length, and the
    /// handle's memory.
    fn check_bias<T>(&self, problem: &Problem, bias: Option<&Memory<'_, T>>) -> Result<()> {
        let needed = problem.bias_len();
        let needs = match problem.epilogue.bias() {
            Bias::None => "no bias".to_string(),
            Bias::PerRow => format!("m = {needed} values (one per row of C)"),
            Bias::PerColumn => format!("n = {needed} values (one per column of C)"),
        };
        let misshaped = |given: String| GemmError::BiasMisshaped {
            given,
            needed: needs.clone(),
        };
        let Some(bias) = bias else {
            return match needed {
                0 => Ok(()),
                _ => Err(misshaped("none".into())),
            };
        };
        let (found, _, len, _) = location(bias);
        if needed == 0 || len < needed {
            return Err(misshaped(format!("{len} values")));
        }
        let memory = if self.is_gpu() { "device" } else { "host" };
        if found != memory {
            return Err(GemmError::WrongMemory {
                operand: 'b',
                found,
                needs: memory,
                backend: self.device(),
            });
        }
        Ok(())
    }

    /// Waits until the handle's stream has done everything enqueued on it (a no-op on the
    /// emulator, which runs each GEMM as it is enqueued). A kernel's failure on the device is
    /// reported here.
    pub fn synchronize(&self) -> Result<()> {
        match &self.backend {
            Backend::Gpu(gpu) => gpu.stream().synchronize().map_err(|e| {
                GemmError::Launch(format!("the work on the handle's stream failed: {e}"))
            }),
            Backend::Emulator => Ok(()),
        }
    }

    /// Whether each buffer is in the handle's memory, long enough for its matrix, and aligned
    /// for the kernels' vector loads and TMA (cuBLAS needs only the element's alignment).
    fn check_buffers<T: Element>(
        &self,
        problem: &Problem,
        cublas: bool,
        buffers: [&Memory<'_, T>; 3],
    ) -> Result<()> {
        let b = &problem.batch;
        let strides = [b.stride_a, b.stride_b, b.stride_c];
        for ((stored, memory), stride) in problem.stored().into_iter().zip(buffers).zip(strides) {
            self.check_buffer(stored, memory, cublas)?;
            let (operand, rows, cols, ld) = stored;
            let needed =
                (b.count as u64 - 1) * stride + ld as u64 * (cols as u64 - 1) + rows as u64;
            let len = location(memory).2;
            if b.is_batched() && (len as u64) < needed {
                return Err(GemmError::BatchTooSmall {
                    operand,
                    len,
                    needed,
                    count: b.count,
                    stride,
                });
            }
        }
        Ok(())
    }

    /// One buffer: in the handle's memory, at least `ld·(cols − 1) + rows` elements long, and
    /// 16-byte aligned (or, `element_aligned`, aligned to its element, as cuBLAS needs).
    fn check_buffer<T>(
        &self,
        (operand, rows, cols, ld): (char, u32, u32, u32),
        memory: &Memory<'_, T>,
        element_aligned: bool,
    ) -> Result<()> {
        let needs = if self.is_gpu() { "device" } else { "host" };
        let (found, address, len, element) = location(memory);
        if found != needs {
            return Err(GemmError::WrongMemory {
                operand,
                found,
                needs,
                backend: self.device(),
            });
        }
        let needed = ld as usize * (cols as usize - 1) + rows as usize;
        if len < needed {
            return Err(GemmError::BufferTooSmall {
                operand,
                len,
                needed,
                rows,
                cols,
                ld,
            });
        }
        let align = if element_aligned {
            element
        } else {
            OPERAND_ALIGN
        };
        if address % align != 0 {
            return Err(GemmError::Misaligned {
                operand,
                address,
                align,
            });
        }
        Ok(())
    }

    /// One launch on checked buffers, returning when C is written.
    fn launch_on<T: Element>(
        &self,
        entry: &str,
        launch: &Launch,
        problem: &Problem,
        (a, b, c): (&Memory<'_, T>, &Memory<'_, T>, &mut MemoryMut<'_, T>),
    ) -> Result<()> {
        plan::Ready::new(self, launch.clone(), problem, 1)?.enqueue(
            problem,
            (a, b, c),
            (None, None),
        )?;
        self.synchronize()
            .map_err(|e| GemmError::Launch(format!("{entry} failed on the device ({e})")))
    }

    /// [`Algorithm::Tuned`]: the cached winner, or every candidate timed on these buffers (the
    /// rules: [`crate::tuning`]).
    fn run_tuned<T: Element>(
        &self,
        config: &GemmConfig,
        math: Math,
        a: &(impl Operand<T> + ?Sized),
        b: &(impl Operand<T> + ?Sized),
        c: &mut (impl OperandMut<T> + ?Sized),
    ) -> Result<Choice> {
        let problem = self.problem::<T>(config)?;
        let (a, b) = (a.memory(), b.memory());
        let mut c = c.memory_mut();
        // Every candidate is a kernel of the course: the buffers are checked as for any.
        self.check_buffers(&problem, false, [&a, &b, &c.as_memory()])?;
        // Operands no kernel reads as they lie (`auto` copies them to aligned rows first) leave
        // no candidate to time: auto's choice runs, as on the emulator.
        let copied = auto::choose(&problem, math, self.backend.arch())
            .is_ok_and(|choice| choice.copies.is_some());
        let device = self.tuning_device().filter(|_| !copied);
        let Some(device) = device else {
            let (choice, launch) = self.untuned(&problem, math)?;
            self.launch_on(&choice.entry, &launch, &problem, (&a, &b, &mut c))?;
            return Ok(choice);
        };
        let key = Key::new(device, &problem, math);
        let (cached, warnings) = self.cached_choice(&key, &problem, math);
        if let Some((mut choice, launch)) = cached {
            append_warnings(&mut choice.reason, &warnings);
            self.launch_on(&choice.entry, &launch, &problem, (&a, &b, &mut c))?;
            return Ok(choice);
        }
        let algorithm = Algorithm::Tuned(math);
        let candidates = tuning::candidates(&problem, math, self.backend.arch());
        if candidates.is_empty() {
            // `auto` names the constraint that leaves none (its fallback's plan fails), or
            // that no kernel computes the transposes.
            self.auto_choice(&algorithm, &problem, math)?;
            return Err(GemmError::Unsupported {
                algorithm: algorithm.label(),
                reason: "no kernel of the course supports this shape, type and device".into(),
            });
        }
        // Every candidate's runs write C: with β ≠ 0 its input must come back for the winner.
        let saved = if problem.beta == 0.0 {
            None
        } else {
            Some(self.save_c(&problem, &c)?)
        };
        let mut timed: Vec<Timed> = Vec::new();
        for candidate in candidates {
            let best = tuning::best_ms(&timed);
            let outcome = self
                .plan_choice(&algorithm, candidate, String::new(), &problem)
                .map_err(|e| e.to_string())
                .and_then(|(_, launch)| {
                    self.time_candidate(&candidate, &launch, &problem, (&a, &b, &mut c), best)
                        .map_err(|e| format!("{e:#}"))
                });
            timed.push(Timed { candidate, outcome });
        }
        if let Some(saved) = &saved {
            self.restore_c(saved, &mut c)?;
        }
        let summary = tuning::summary(&timed, &Protocol::DEFAULT);
        let ranking = tuning::ranking(&timed);
        let (Some(entry), Some(&(&winner, _))) = (tuning::entry(&ranking), ranking.first()) else {
            return Err(GemmError::Launch(format!(
                "tuning found no candidate that runs: {summary}"
            )));
        };
        let ranking: Vec<(String, f64)> = ranking
            .iter()
            .map(|(c, m)| (c.label(), m.median_ms))
            .collect();
        let (mut choice, launch) = self.plan_choice(&algorithm, winner, String::new(), &problem)?;
        let stored = self.cache.borrow_mut().store(key, entry);
        choice.reason = format!("tuned now under the {} contract: {summary}; ", math.name());
        match &stored {
            Ok(path) => choice.reason += &format!("stored in {}", path.display()),
            Err(why) => choice.reason += &format!("not stored ({why}); this handle remembers it"),
        }
        append_warnings(&mut choice.reason, &warnings);
        choice.tuning = Some(Tuning::Measured {
            ranking,
            stored: stored.ok(),
        });
        self.launch_on(&choice.entry, &launch, &problem, (&a, &b, &mut c))?;
        Ok(choice)
    }

    /// The device and build the cache keys by: the GPU's; on the emulator, the tests' clock's,
    /// and `None` without one (the emulator is not tuned).
    fn tuning_device(&self) -> Option<tuning::Device> {
        match (&self.backend, &self.clock) {
            (Backend::Gpu(gpu), _) => Some(tuning::Device::new(
                &gpu.device_name,
                gpu.driver_version,
                &gpu.arch,
                tuning::build_id(gpu.ptx_fingerprint),
            )),
            (Backend::Emulator, Some(clock)) => Some(clock.device.clone()),
            (Backend::Emulator, None) => None,
        }
    }

    /// `Tuned` where nothing is timed: `Auto`'s choice, saying why.
    fn untuned(&self, problem: &Problem, math: Math) -> Result<(Choice, Launch)> {
        let (mut choice, launch) = self.auto_choice(&Algorithm::Tuned(math), problem, math)?;
        let why = if self.is_gpu() {
            "A or B is first copied to rows the kernels can read, which leaves no candidate to \
             time"
        } else {
            "on the CPU emulator a time is the emulation's wall time, which ranks nothing on a GPU"
        };
        choice.reason = format!(
            "not tuned: {why}, so `Tuned` runs auto's choice and leaves the tuning cache alone; \
             auto: {}",
            choice.reason
        );
        choice.tuning = Some(Tuning::NotTuned);
        Ok((choice, launch))
    }

    /// `Auto`'s choice, refused under `algorithm`'s name.
    fn auto_choice(
        &self,
        algorithm: &Algorithm,
        problem: &Problem,
        math: Math,
    ) -> Result<(Choice, Launch)> {
        let choice = auto::choose(problem, math, self.backend.arch()).map_err(|e| {
            GemmError::Unsupported {
                algorithm: algorithm.label(),
                reason: format!("{e:#}"),
            }
        })?;
        let reason = choice.reason(problem.dtype);
        let candidate = Candidate {
            variant: choice.variant,
            tile: choice.tile,
        };
        self.plan_choice_reading(algorithm, candidate, reason, problem, choice.copies)
    }

    /// The cache's winner for `key`, planned, if it has a usable one; and the warnings to
    /// report (a file that could not be read, an entry that no longer runs).
    fn cached_choice(
        &self,
        key: &Key,
        problem: &Problem,
        math: Math,
    ) -> (Option<(Choice, Launch)>, Vec<String>) {
        let mut cache = self.cache.borrow_mut();
        let (entry, warning) = cache.lookup(key);
        let mut warnings: Vec<String> = warning.into_iter().collect();
        let Some(entry) = entry else {
            return (None, warnings);
        };
        let algorithm = Algorithm::Tuned(math);
        let planned = tuning::candidate_named(&entry.winner, problem, math, self.backend.arch())
            .and_then(|candidate| {
                self.plan_choice(&algorithm, candidate, String::new(), problem)
                    .map_err(|e| e.to_string())
            });
        match planned {
            Ok((mut choice, launch)) => {
                let file = match cache.path() {
                    Some(path) => format!("the tuning cache {}", path.display()),
                    None => "this handle's memory".into(),
                };
                choice.reason = format!(
                    "from {file}: tuned earlier on this GPU, driver and build under the {} contract ({:.4} ms)",
                    key.math.name(),
                    entry.median_ms
                );
                choice.tuning = Some(Tuning::Cached {
                    median_ms: entry.median_ms,
                });
                (Some((choice, launch)), warnings)
            }
            Err(why) => {
                warnings.push(format!(
                    "the cache's entry for this problem names `{}`, which cannot run it ({why}), so it was tuned again",
                    entry.winner
                ));
                (None, warnings)
            }
        }
    }

    /// Times one candidate on the call's buffers with [`Protocol::DEFAULT`]: CUDA events around
    /// each launch on the GPU (the backend's [`Gpu::time`]); on the emulator, the tests' clock
    /// after each emulated launch.
    fn time_candidate<T: Element>(
        &self,
        candidate: &Candidate,
        launch: &Launch,
        problem: &Problem,
        (a, b, c): (&Memory<'_, T>, &Memory<'_, T>, &mut MemoryMut<'_, T>),
        best_ms: Option<f64>,
    ) -> anyhow::Result<Measurement> {
        let protocol = Protocol::DEFAULT;
        match (&self.backend, a, b, c) {
            (
                Backend::Gpu(gpu),
                Memory::Device { address: a, .. },
                Memory::Device { address: b, .. },
                MemoryMut::Device { address: c, .. },
            ) => {
                // Loading, shared memory, tensor maps, workspace: once, outside the times.
                let prepared = gpu.prepare(launch, problem, (*a, *b, *c))?;
                let once = Timing {
                    warmup: 0,
                    iters: 1,
                    budget_ms: f64::INFINITY,
                    check: false,
                    cold: false,
                    clock: Clock::Events,
                };
                protocol.measure(best_ms, || {
                    Ok(gpu.time(launch.name(), once, &|| prepared.enqueue::<T>())?[0])
                })
            }
            (Backend::Emulator, Memory::Host(a), Memory::Host(b), MemoryMut::Host(c)) => {
                let clock = self
                    .clock
                    .as_ref()
                    .ok_or_else(|| anyhow::anyhow!("the emulator is not tuned"))?;
                let label = candidate.label();
                protocol.measure(best_ms, || {
                    emulator::launch_on(
                        launch,
                        problem,
                        (*a, *b, &[], &[]),
                        (c, &mut [0; 3]),
                        None,
                    )?;
                    Ok((clock.time.borrow_mut())(&label))
                })
            }
            _ => unreachable!("every operand's memory was checked against the backend"),
        }
    }

    /// A copy of the part of C the GEMM covers (`ldc·(n − 1) + m` elements), on the handle's
    /// stream, so that it is taken after the caller's earlier work and before any candidate.
    fn save_c<T: Element>(&self, problem: &Problem, c: &MemoryMut<'_, T>) -> Result<SavedC<T>> {
        let s = problem.shape;
        let span = s.ldc as usize * (s.n as usize - 1) + s.m as usize;
        let failed = |e: cust::error::CudaError| {
            GemmError::Launch(format!("cannot keep C's input while tuning: {e}"))
        };
        match (&self.backend, c) {
            (Backend::Gpu(gpu), MemoryMut::Device { address, .. }) => {
                // SAFETY: C holds at least `span` elements of the handle's context
                // (`check_buffers`), and the copy has exactly `span`.
                unsafe {
                    let c = DeviceSlice::<T::Bits>::from_raw_parts(
                        DevicePointer::from_raw(*address),
                        span,
                    );
                    let mut copy = DeviceBuffer::<T::Bits>::uninitialized(span).map_err(failed)?;
                    c.async_copy_to(&mut copy, gpu.stream()).map_err(failed)?;
                    Ok(SavedC::Device(copy))
                }
            }
            (_, MemoryMut::Host(h)) => Ok(SavedC::Host(h[..span].to_vec())),
            _ => unreachable!("C's memory was checked against the backend"),
        }
    }

    /// Puts C's input back, before the winner's final run.
    fn restore_c<T: Element>(&self, saved: &SavedC<T>, c: &mut MemoryMut<'_, T>) -> Result<()> {
        let failed = |e: cust::error::CudaError| {
            GemmError::Launch(format!("cannot restore C's input after tuning: {e}"))
        };
        match (&self.backend, saved, c) {
            (Backend::Gpu(gpu), SavedC::Device(copy), MemoryMut::Device { address, .. }) => {
                // SAFETY: as in `save_c`, the same span of the same C.
                unsafe {
                    let mut c = DeviceSlice::<T::Bits>::from_raw_parts_mut(
                        DevicePointer::from_raw(*address),
                        copy.len(),
                    );
                    c.async_copy_from(copy, gpu.stream()).map_err(failed)?;
                }
                gpu.stream().synchronize().map_err(failed)
            }
            (_, SavedC::Host(copy), MemoryMut::Host(h)) => {
                h[..copy.len()].copy_from_slice(copy);
                Ok(())
            }
            _ => unreachable!("C's memory was checked against the backend"),
        }
    }

    /// What a call with this configuration and algorithm launches, and the problem it
    /// describes, for the crate's own launchers that enqueue on buffers they made themselves
    /// (the tensor-parallel ranks): the same choice and checks as [`Gemm::run`] before buffers.
    #[cfg_attr(not(feature = "nccl"), allow(dead_code))]
    pub(crate) fn launch_for<T: Element>(
        &self,
        config: &GemmConfig,
        algorithm: &Algorithm,
    ) -> Result<(Choice, Launch, Problem)> {
        self.resolve::<T>(config, algorithm)
    }

    /// The checks that need no buffer, and what to launch.
    fn resolve<T: Element>(
        &self,
        config: &GemmConfig,
        algorithm: &Algorithm,
    ) -> Result<(Choice, Launch, Problem)> {
        let problem = self.problem::<T>(config)?;
        let caller = |reason: &str| reason.to_string();
        let (candidate, reason) = match algorithm {
            Algorithm::Auto(math) => {
                let (choice, launch) = self.auto_choice(algorithm, &problem, *math)?;
                return Ok((choice, launch, problem));
            }
            Algorithm::Tuned(math) => {
                let (choice, launch) = self.tuned_without_timing(&problem, *math)?;
                return Ok((choice, launch, problem));
            }
            Algorithm::Kernel { name, tile } => match registry::find(name) {
                Ok(variant @ Variant::Kernel(_)) => (
                    Candidate {
                        variant,
                        tile: *tile,
                    },
                    caller("named by the caller"),
                ),
                Ok(_) => {
                    return Err(GemmError::UnknownAlgorithm(format!(
                        "`{name}` is not a GPU kernel (the CPU variants, `auto` and `tuned` run \
                         through `host`; here, `Algorithm::Auto`, `Algorithm::Tuned` and \
                         `Algorithm::Cublas`)"
                    )))
                }
                Err(e) => return Err(GemmError::UnknownAlgorithm(format!("{e:#}"))),
            },
            Algorithm::Cublas if problem.groups != GroupLayout::None => {
                return Err(GemmError::Unsupported {
                    algorithm: algorithm.label(),
                    reason: "cuBLAS has no grouped GEMM of these layouts; its yardstick, a call \
                             per group, reads the table on the host (host --groups --compare \
                             cublas)"
                        .into(),
                })
            }
            Algorithm::Cublas => (
                Candidate {
                    variant: Variant::Cublas(CublasMath::Default),
                    tile: None,
                },
                caller("named by the caller"),
            ),
        };
        let (choice, launch) = self.plan_choice(algorithm, candidate, reason, &problem)?;
        Ok((choice, launch, problem))
    }

    /// The problem a configuration describes in `T`, or why it describes none.
    fn problem<T: Element>(&self, config: &GemmConfig) -> Result<Problem> {
        let problem = Problem {
            shape: config.shape(),
            transposes: Transposes::new(config.transa, config.transb),
            dtype: T::DTYPE,
            alpha: config.alpha,
            beta: config.beta,
            init: Init::Random,
            seed: 0,
            epilogue: config.epilogue,
            batch: config.batch,
            groups: config.groups,
        };
        problem
            .validate()
            .map_err(|e| GemmError::InvalidConfig(format!("{e:#}")))?;
        Ok(problem)
    }

    /// What to launch for a kernel (or cuBLAS) at a tile, checked against the problem and the
    /// device, and the [`Choice`] that reports it with `reason`; refusals name `algorithm`.
    fn plan_choice(
        &self,
        algorithm: &Algorithm,
        candidate: Candidate,
        reason: String,
        problem: &Problem,
    ) -> Result<(Choice, Launch)> {
        self.plan_choice_reading(algorithm, candidate, reason, problem, None)
    }

    /// [`Gemm::plan_choice`], the kernel reading aligned copies of A and B where
    /// `copies` (as `auto` plans them when no kernel reads A and B as they lie).
    fn plan_choice_reading(
        &self,
        algorithm: &Algorithm,
        Candidate { variant, tile }: Candidate,
        reason: String,
        problem: &Problem,
        copies: Option<Copies>,
    ) -> Result<(Choice, Launch)> {
        let unsupported = |reason: String| GemmError::Unsupported {
            algorithm: algorithm.label(),
            reason,
        };
        let arch = self.backend.arch();
        let launch = match copies {
            Some(copies) => run::plan_reading_copies(variant, tile, problem, copies, arch),
            None => run::plan(variant, tile, problem, arch),
        }
        .map_err(|e| unsupported(format!("{e:#}")))?;
        let device = match &self.backend {
            Backend::Gpu(gpu) => Some((
                gpu.arch_number(),
                format!("{} ({})", gpu.device_name, gpu.arch),
            )),
            Backend::Emulator => None,
        };
        check_device(&variant, &launch, device).map_err(|e| match e {
            GemmError::Unsupported { reason, .. } => unsupported(reason),
            e => e,
        })?;
        let label = registry::label(variant, tile).map_err(|e| unsupported(format!("{e:#}")))?;
        let choice = Choice {
            variant: label,
            entry: launch.name().to_string(),
            arithmetic: variant.arithmetic(),
            reason,
            device: self.device(),
            tuning: None,
        };
        Ok((choice, launch))
    }

    /// What `Tuned` runs without timing anything ([`Gemm::choose`]): the cached winner, or
    /// else `Auto`'s choice, saying that a run would tune first.
    fn tuned_without_timing(&self, problem: &Problem, math: Math) -> Result<(Choice, Launch)> {
        let Some(device) = self.tuning_device() else {
            return self.untuned(problem, math);
        };
        let (cached, warnings) =
            self.cached_choice(&Key::new(device, problem, math), problem, math);
        let (mut choice, launch) = match cached {
            Some(known) => known,
            None => {
                let algorithm = Algorithm::Tuned(math);
                let (mut choice, launch) = self.auto_choice(&algorithm, problem, math)?;
                let count = tuning::candidates(problem, math, self.backend.arch()).len();
                choice.reason = format!(
                    "not tuned yet: a run would time {count} candidate configurations on its \
                     buffers and run the fastest; until then, auto's choice: {}",
                    choice.reason
                );
                choice.tuning = Some(Tuning::NotTuned);
                (choice, launch)
            }
        };
        append_warnings(&mut choice.reason, &warnings);
        Ok((choice, launch))
    }
}

/// The cache's warnings, after a choice's reason.
fn append_warnings(reason: &mut String, warnings: &[String]) {
    for warning in warnings {
        *reason += &format!("; warning: {warning}");
    }
}

/// Whether the device (compute capability and name; `None`: the emulator, which runs every
/// build) can run the launch, by `auto`'s rule ([`auto::runs_on`]); cuBLAS needs a GPU.
fn check_device(variant: &Variant, launch: &Launch, device: Option<(u32, String)>) -> Result<()> {
    match (launch, device) {
        (Launch::Cublas(_), None) => Err(GemmError::Unsupported {
            algorithm: "cublas".into(),
            reason: "cuBLAS runs on a GPU only".into(),
        }),
        (Launch::Kernel { target, entry, .. }, Some((arch, device)))
            if !auto::runs_on(variant, Some(arch)) =>
        {
            Err(GemmError::NeedsArch {
                kernel: entry.clone(),
                needs: match target {
                    Target::Sm90a => "sm_90a",
                    Target::Portable => "sm_80 or newer",
                },
                device,
            })
        }
        _ => Ok(()),
    }
}

/// (memory kind, address, length, the element's alignment) of an operand.
fn location<T>(m: &Memory<'_, T>) -> (&'static str, u64, usize, u64) {
    let element = std::mem::align_of::<T>() as u64;
    match m {
        Memory::Device { address, len } => ("device", *address, *len, element),
        Memory::Host(h) => ("host", h.as_ptr() as u64, h.len(), element),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels_gpu::gemm::Dtype;

    #[test]
    fn a_hopper_kernel_on_another_gpu_is_refused_with_both_architectures() {
        let p = Problem {
            shape: GemmConfig::new(256, 256, 256).shape(),
            transposes: Transposes::NN,
            dtype: Dtype::Bf16,
            alpha: 1.0,
            beta: 0.0,
            init: Init::Random,
            seed: 0,
            epilogue: kernels_gpu::fused::Epilogue::NONE,
            batch: kernels_gpu::gemm::Batch::ONE,
            groups: kernels_gpu::gemm::GroupLayout::None,
        };
        let v = registry::find("wgmma-16bit").unwrap();
        let launch = run::plan(v, None, &p, Some(80)).unwrap();
        let a100 = Some((80, "NVIDIA A100-SXM4-80GB (sm_80)".to_string()));
        let e = check_device(&v, &launch, a100).unwrap_err();
        assert!(matches!(e, GemmError::NeedsArch { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "`gemm_wgmma_16bit_c1_bf16` needs sm_90a (Hopper's wgmma: H100, H200); this device is NVIDIA A100-SXM4-80GB (sm_80)"
        );
        let h100 = Some((90, "NVIDIA H100 80GB HBM3 (sm_90)".to_string()));
        assert!(check_device(&v, &launch, h100).is_ok());
        assert!(
            check_device(&v, &launch, None).is_ok(),
            "the emulator runs every build"
        );
        let best = registry::find("best").unwrap();
        let portable = run::plan(
            best,
            None,
            &Problem {
                dtype: Dtype::F32,
                ..p
            },
            Some(80),
        )
        .unwrap();
        assert!(check_device(&best, &portable, Some((80, "A100".into()))).is_ok());
    }
}
