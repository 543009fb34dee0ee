//! The work a prepared launch enqueues around its GEMM, each a piece of its own: the operand
//! copies before it (2D copies or the transposing kernel), 3xTF32's ranges pass, the amax's last
//! step after it, and the scratch a kernel reads beside its tensor maps (stream-k's workspace
//! and counters, a tile queue's counter).
use super::Gpu;
use anyhow::{anyhow, bail, Context as _, Result};
use cust::function::Function;
use cust::launch;
use cust::memory::DeviceBuffer;
use cust::stream::Stream;
use kernels_gpu::gemm::{Batch, Geometry};
use kernels_gpu::registry::{Shape, TmaOperands};

/// The amax epilogue's three words and its last step ([`kernels_gpu::fused::finish_amax`]):
/// the GEMM's warps raise the first word; the one-thread kernel after it turns the word into
/// D's amax and its e4m3 scale (the second and third) and zeroes it for the next launch.
pub(super) struct AmaxPass<'g> {
    pub(super) function: Function<'g>,
    pub(super) words: DeviceBuffer<u32>,
}

impl AmaxPass<'_> {
    pub(super) fn enqueue(&self, stream: &Stream) -> Result<()> {
        enqueue_amax_scale(&self.function, self.words.as_device_ptr().as_raw(), stream)
    }
}

/// The amax's last step (`function`, [`kernels_gpu::registry::AMAX_SCALE`]) on the three words
/// at `words`: one thread, after the GEMM on `stream`.
pub(super) fn enqueue_amax_scale(
    function: &Function<'_>,
    words: u64,
    stream: &Stream,
) -> Result<()> {
    unsafe { launch!(function<<<1, 1, 0, stream>>>(words)) }
        .with_context(|| format!("launching {} failed", kernels_gpu::registry::AMAX_SCALE))
}

/// 3xTF32's ranges pass ([`kernels_gpu::variants::ranges`]): zero the words, gather the
/// largest |x| of each row of A and column of B into them.
pub(super) struct RangesPass<'g> {
    pub(super) function: Function<'g>,
    pub(super) words: DeviceBuffer<u32>,
    pub(super) geometry: kernels_gpu::gemm::Geometry,
    /// A strided batch: the pass's grid has a layer per member, which writes its m + n words
    /// `z·(m + n)` on.
    pub(super) batch: Batch,
}

impl RangesPass<'_> {
    /// Enqueues the zeroing and the pass on A (`lda`) and B (`ldb`) of `shape`, each member's.
    pub(super) fn enqueue(&self, s: &Shape, (a, b): (u64, u64), stream: &Stream) -> Result<()> {
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

/// A tile queue's counter ([`kernels_gpu::pipeline::queue`]), zeroed here once: every launch
/// takes its tickets from zero and its last ticket puts the counter back. It belongs to one plan,
/// whose launches run one after the other on its stream; two launches that used it at once would
/// take each other's tickets.
pub(super) fn tile_queue() -> Result<DeviceBuffer<u32>> {
    DeviceBuffer::<u32>::zeroed(1)
        .map_err(|e| anyhow!("cannot allocate the tile queue's counter: {e}"))
}

/// Stream-k's workspace and its counters on the device ([`TmaOperands::stream_k_scratch`]).
pub(super) struct StreamKScratch {
    pub(super) workspace: DeviceBuffer<u8>,
    pub(super) counters: DeviceBuffer<u32>,
}

impl StreamKScratch {
    /// What the kernel reads after its tensor maps: the two addresses.
    pub(super) fn addresses(&self) -> Vec<u64> {
        vec![
            self.workspace.as_device_ptr().as_raw(),
            self.counters.as_device_ptr().as_raw(),
        ]
    }
}

impl Gpu {
    /// Stream-k's workspace and counters for a launch of `grid` blocks, if the kernel has
    /// stream-k; the counters zeroed here once (every launch leaves them zeroed).
    pub(super) fn stream_k_scratch(
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
pub(super) struct OperandCopy<'g> {
    pub(super) pitch: crate::launch::Pitch,
    /// The caller's operand.
    pub(super) from: u64,
    pub(super) to: DeviceBuffer<u8>,
    pub(super) what: &'static str,
    /// The copy's kernel ([`crate::launch::Pitch::kernel`]) and its launch.
    pub(super) kernel: Function<'g>,
    pub(super) geometry: Geometry,
}

impl OperandCopy<'_> {
    /// Enqueues the copy, one launch of its kernel per copied member of a batch.
    pub(super) fn enqueue(&self, element_bytes: u32, stream: &Stream) -> Result<()> {
        let bytes = element_bytes as u64;
        for member in 0..self.pitch.copies_made() {
            let (from, to) = self.pitch.offsets(member);
            let from = self.from + from * bytes;
            let to = self.to.as_device_ptr().as_raw() + to * bytes;
            self.launch(element_bytes, (from, to), stream)?;
        }
        Ok(())
    }

    /// One member's copy. The copies keep the GEMM signature of their type: A the source, C
    /// the copy.
    fn launch(&self, element_bytes: u32, (from, to): (u64, u64), stream: &Stream) -> Result<()> {
        let (function, g) = (&self.kernel, &self.geometry);
        let pitch = &self.pitch;
        let (rows, cols, ld_from, ld_to) = (pitch.rows, pitch.cols, pitch.from, pitch.to);
        unsafe {
            if element_bytes == 8 {
                launch!(function<<<(g.grid.0, g.grid.1, 1), (g.block.0, g.block.1, 1), g.shared_bytes, stream>>>(
                    rows, cols, 0u32, 0f64, from, ld_from, from, ld_from, 0f64, to, ld_to
                ))
            } else if element_bytes == 2 {
                // The 16-bit kernels' signature: no maps, epilogue, batch or groups read.
                launch!(function<<<(g.grid.0, g.grid.1, 1), (g.block.0, g.block.1, 1), g.shared_bytes, stream>>>(
                    rows, cols, 0u32, 0f32, from, ld_from, from, ld_from, 0f32, to, ld_to,
                    0u64, 0u64, 0u32, 0u64, 1u32, 0u64, 0u32, 0u32, 0u64
                ))
            } else {
                launch!(function<<<(g.grid.0, g.grid.1, 1), (g.block.0, g.block.1, 1), g.shared_bytes, stream>>>(
                    rows, cols, 0u32, 0f32, from, ld_from, from, ld_from, 0f32, to, ld_to
                ))
            }
        }
        .with_context(|| format!("launching the copy of {} failed", self.what))
    }
}
