//! A prepared GEMM: the work of a call done once, then enqueued as often as the program needs.
//!
//! [`Gemm::run`] does everything on every call: it chooses the kernel, loads it, allocates
//! split-k's workspace, encodes the TMA kernels' tensor maps, launches and waits for the
//! stream. A program that runs the same GEMM thousands of times (a layer at every step of a
//! decode loop) pays that host time on each call, and cannot capture the call into a CUDA
//! graph: a graph records stream work, and allocations and waits are not stream work.
//!
//! [`Gemm::plan`] does the choosing, loading and allocating once; [`Plan::enqueue`] then only
//! checks the buffers (lengths and alignment, on the host) and puts the GEMM on the handle's
//! stream, returning at once. The tensor maps are the one thing that depends on the buffers
//! (they hold their addresses): a plan keeps the maps of each set of buffers it has seen in a
//! slot of its own, and writes a new set's maps with an asynchronous copy on the stream
//! before the kernel, so an enqueue on new buffers is still stream work only. Up to
//! [`PLAN_BUFFER_SETS`] sets of buffers per plan.
use super::{Algorithm, Amax, Memory, MemoryMut};
use super::{Choice, Element, Gemm, GemmConfig, GemmError, Operand, OperandMut, Result};
use crate::emulator;
use crate::gpu::Prepared;
use crate::launch::Launch;
use crate::problem::Problem;
use crate::run::Backend;
use std::marker::PhantomData;

/// Different sets of buffers (A, B, C addresses) one [`Plan`] can be enqueued on: their tensor
/// maps take 384 or 512 bytes a set on the device and in page-locked host memory.
pub const PLAN_BUFFER_SETS: usize = 64;

/// A GEMM of one configuration, chosen and prepared once ([`Gemm::plan`]), enqueued on the
/// handle's stream with [`Plan::enqueue`]. It borrows the handle, whose stream it runs on.
pub struct Plan<'g, T: Element> {
    pub(super) gemm: &'g Gemm,
    choice: Choice,
    problem: Problem,
    /// cuBLAS needs its operands aligned to the element only.
    cublas: bool,
    ready: Ready<'g>,
    /// The events of [`Plan::enqueue_cudarc`], made on its first call.
    pub(super) joins: Option<super::cudarc_buffers::Joins>,
    _element: PhantomData<fn(&T)>,
}

/// What a plan launches: on the GPU a prepared launch, on the emulator the launch itself and
/// the amax epilogue's words (kept across launches, as the GPU's are).
pub(super) enum Ready<'g> {
    Gpu(Box<Prepared<'g>>),
    Emulator(Box<Launch>, [u32; 3]),
}

impl<'g> Ready<'g> {
    /// `launch` of `problem` made ready on `gemm`'s backend, with room for the tensor maps of
    /// `buffer_sets` sets of buffers.
    pub(super) fn new(
        gemm: &'g Gemm,
        launch: Launch,
        problem: &Problem,
        buffer_sets: usize,
    ) -> Result<Self> {
        Ok(match &gemm.backend {
            Backend::Gpu(gpu) => Ready::Gpu(Box::new(
                gpu.prepare_unbound(&launch, problem, buffer_sets)
                    .map_err(|e| GemmError::Launch(format!("{e:#}")))?,
            )),
            Backend::Emulator => Ready::Emulator(Box::new(launch), emulator::AMAX_ZEROED),
        })
    }

    /// D's amax and scale as the last launch left them (`None` without the amax).
    fn amax(&self) -> Result<Option<[f32; 2]>> {
        match self {
            Ready::Gpu(prepared) => prepared
                .read_amax()
                .map_err(|e| GemmError::Launch(format!("{e:#}"))),
            Ready::Emulator(_, words) => Ok(Some(emulator::amax_of(words))),
        }
    }

    /// Enqueues the GEMM on checked buffers (on the emulator: runs it).
    pub(super) fn enqueue<T: Element>(
        &mut self,
        problem: &Problem,
        (a, b, c): (&Memory<'_, T>, &Memory<'_, T>, &mut MemoryMut<'_, T>),
        (bias, table): (Option<&Memory<'_, T>>, Option<&Memory<'_, u32>>),
    ) -> Result<()> {
        let failed = |e: anyhow::Error| GemmError::Launch(format!("{e:#}"));
        match (self, a, b, c) {
            (
                Ready::Gpu(prepared),
                Memory::Device { address: a, .. },
                Memory::Device { address: b, .. },
                MemoryMut::Device { address: c, .. },
            ) => {
                prepared.bind((*a, *b, *c)).map_err(failed)?;
                if let Some(Memory::Device { address, .. }) = bias {
                    prepared.bind_bias(*address);
                }
                if let Some(Memory::Device { address, .. }) = table {
                    // (The host's copy of the table is cuBLAS's, which a grouped plan never is.)
                    prepared.bind_groups(*address, &[]).map_err(failed)?;
                }
                prepared.enqueue::<T>().map_err(failed)
            }
            (
                Ready::Emulator(launch, amax),
                Memory::Host(a),
                Memory::Host(b),
                MemoryMut::Host(c),
            ) => {
                let bias = match bias {
                    Some(Memory::Host(bias)) => *bias,
                    _ => &[],
                };
                let table = match table {
                    Some(Memory::Host(table)) => *table,
                    _ => &[],
                };
                emulator::launch_on(launch, problem, (*a, *b, bias, table), (c, amax), None)
                    .map_err(failed)
            }
            _ => unreachable!("every operand's memory was checked against the backend"),
        }
    }
}

impl Gemm {
    /// Chooses and prepares `C = α·op(A)·op(B) + β·C` for `config` under `algorithm` (as
    /// [`Gemm::run`] would: the same choice, the same errors), without running it: the kernel
    /// is loaded, its workspace allocated. [`Algorithm::Tuned`] takes the tuning cache's winner
    /// if it has one and otherwise `Auto`'s choice (a plan has no buffers to time candidates
    /// on; [`Gemm::run`] with `Tuned` tunes and stores the winner).
    pub fn plan<T: Element>(
        &self,
        config: &GemmConfig,
        algorithm: &Algorithm,
    ) -> Result<Plan<'_, T>> {
        self.plan_for::<T>(config, algorithm, PLAN_BUFFER_SETS)
    }

    /// [`Gemm::plan`] with room for the tensor maps of `buffer_sets` sets of buffers.
    pub(super) fn plan_for<T: Element>(
        &self,
        config: &GemmConfig,
        algorithm: &Algorithm,
        buffer_sets: usize,
    ) -> Result<Plan<'_, T>> {
        let (choice, launch, problem) = self.resolve::<T>(config, algorithm)?;
        let cublas = matches!(launch, Launch::Cublas(_));
        let ready = Ready::new(self, launch, &problem, buffer_sets)?;
        Ok(Plan {
            gemm: self,
            choice,
            problem,
            cublas,
            ready,
            joins: None,
            _element: PhantomData,
        })
    }
}

impl<T: Element> Plan<'_, T> {
    /// What the plan runs, and why.
    pub fn choice(&self) -> &Choice {
        &self.choice
    }

    /// D's amax and its e4m3 scale as the last enqueue left them, with the amax epilogue
    /// ([`GemmConfig::amax`](super::GemmConfig::amax)): waits for the handle's stream.
    /// [`GemmError::NoAmax`] for a plan without it.
    pub fn amax(&self) -> Result<Amax> {
        if !self.problem.epilogue.amax() {
            return Err(GemmError::NoAmax);
        }
        match self.ready.amax()? {
            Some([amax, scale]) => Ok(Amax { amax, scale }),
            None => Err(GemmError::NoAmax),
        }
    }

    /// Where the amax epilogue leaves D's amax and its e4m3 scale on the device: two f32,
    /// `(amax, scale)`, rewritten in stream order by every enqueue. What the next layer's
    /// quantization reads without the host (in a captured CUDA graph too); the plan owns
    /// them. `None` without the amax, and on the emulator.
    pub fn amax_device_address(&self) -> Option<u64> {
        match &self.ready {
            Ready::Gpu(prepared) => prepared.amax_address(),
            Ready::Emulator(..) => None,
        }
    }

    /// From the next enqueue on, launches the GEMM kernel early (a programmatic dependent
    /// launch, `kernels_gpu::device::grid`): it may start while the kernel ahead of it on the
    /// stream finishes its last tiles, bring the first slices of its A (the weights) into L2,
    /// and wait for that kernel before any of its threads reads B or writes C. What a chain
    /// of decode GEMMs gains: the gap between two kernels. A (which it only prefetches, a hint
    /// that changes no result) may be written by the kernel ahead too. Returns whether the
    /// chosen kernel starts early: the 16-bit decode kernels (`wgmma-swap`, `wgmma-narrow`)
    /// do, other kernels and cuBLAS launch as before. On the emulator those kernels always run
    /// as early launches, whose waits it checks.
    pub fn start_early(&mut self) -> bool {
        match &mut self.ready {
            Ready::Gpu(prepared) => prepared.start_early(),
            Ready::Emulator(launch, _) => launch.starts_early(),
        }
    }

    /// Puts the GEMM on A, B and C on the handle's stream and returns: C is written when the
    /// stream reaches it (wait with [`Gemm::synchronize`], or an event of your own on the
    /// stream). The buffers are checked as [`Gemm::run`] checks them; nothing is allocated,
    /// nothing waited for, so the call can be captured into a CUDA graph, and the graph
    /// replayed while the plan lives (the graph reads the plan's tensor maps and workspace).
    /// The launches of one plan share that workspace (stream-k's counters, a tile queue's
    /// counter, split-k's partial sums): replay its graphs one after another, not on two
    /// streams at once. On the emulator the GEMM runs before the call returns.
    pub fn enqueue(
        &mut self,
        a: &(impl Operand<T> + ?Sized),
        b: &(impl Operand<T> + ?Sized),
        c: &mut (impl OperandMut<T> + ?Sized),
    ) -> Result<()> {
        self.enqueue_fused(a, b, (None, None), c)
    }

    /// [`Plan::enqueue`] with the bias vector of the configuration's fused epilogue
    /// ([`GemmConfig::epilogue`](super::GemmConfig::epilogue)): m values (a bias per row of C)
    /// or n (per column), in the operands' memory and type.
    pub fn enqueue_with_bias(
        &mut self,
        a: &(impl Operand<T> + ?Sized),
        b: &(impl Operand<T> + ?Sized),
        bias: &(impl Operand<T> + ?Sized),
        c: &mut (impl OperandMut<T> + ?Sized),
    ) -> Result<()> {
        self.enqueue_fused(a, b, (Some(&bias.memory()), None), c)
    }

    /// [`Plan::enqueue`] for a grouped GEMM ([`GemmConfig::contiguous_groups`],
    /// [`GemmConfig::masked_groups`]) with its table, in the operands' memory: the masked
    /// layout's counts are read by the kernel, so a program may write them on the device
    /// (its router's output) and replay a captured graph without the host seeing them.
    ///
    /// [`GemmConfig::contiguous_groups`]: super::GemmConfig::contiguous_groups
    /// [`GemmConfig::masked_groups`]: super::GemmConfig::masked_groups
    pub fn enqueue_grouped(
        &mut self,
        a: &(impl Operand<T> + ?Sized),
        b: &(impl Operand<T> + ?Sized),
        table: &(impl Operand<u32> + ?Sized),
        c: &mut (impl OperandMut<T> + ?Sized),
    ) -> Result<()> {
        self.enqueue_fused(a, b, (None, Some(&table.memory())), c)
    }

    fn enqueue_fused(
        &mut self,
        a: &(impl Operand<T> + ?Sized),
        b: &(impl Operand<T> + ?Sized),
        (bias, table): (Option<&Memory<'_, T>>, Option<&Memory<'_, u32>>),
        c: &mut (impl OperandMut<T> + ?Sized),
    ) -> Result<()> {
        let (a, b) = (a.memory(), b.memory());
        let mut c = c.memory_mut();
        self.gemm
            .check_buffers(&self.problem, self.cublas, [&a, &b, &c.as_memory()])?;
        self.gemm.check_bias(&self.problem, bias)?;
        self.gemm.check_groups(&self.problem, table)?;
        self.ready
            .enqueue(&self.problem, (&a, &b, &mut c), (bias, table))
    }
}
