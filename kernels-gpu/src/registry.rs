//! The registry of GPU variants: one row per variant, iterated by the host, the emulator tests
//! and the PTX tests.
//!
//! Adding a variant: write its file in [`crate::variants`] (doc header: source document, what
//! changed and why, what the PTX/SASS shows, what it measured), add its entry points to
//! [`crate::entry`], and a row to [`ALL`].
//!
//! Three files: `registry/row.rs` says what a row declares ([`Variant`], [`TmaOperands`],
//! [`Layout`], [`Target`], [`Scales`]); `registry/table.rs` holds the rows themselves, with each
//! kernel's launch shapes; this file the queries on rows (their entry points, batch twins,
//! lookups by name) and the helper kernels' names.
use crate::gemm::Dtype;

mod row;
mod table;
pub use row::{
    Layout, Scales, Shape, Target, TmaOperands, Variant, BOTH_DTYPES, HALF_DTYPES, NN_ONLY,
};
pub use table::ALL;

/// The f32 and f64 variants that run a strided batch as their grid's z: each of their entry
/// points has a twin `…_batch` that takes the batch's strides (`crate::entry`). The twin is a
/// second copy of the kernel in the module (15 twins add 3 MB of PTX and 1.3 MB of SASS per
/// architecture), so the list names those in `auto`'s table for f32 and f64 under the strict
/// contract, which is also what the FP32-accurate contract runs on a batch; not every lesson.
pub const GRID_BATCHED: &[&str] = &["gemm128", "best", "tc-f64"];

/// The entry point of `entry`'s strided-batch twin (a `NAME | NAME_batch` row of
/// `crate::entry`; the PTX build's `apply_launch_bounds` knows the suffix too).
pub fn batch_twin(entry: &str) -> String {
    format!("{entry}{BATCH_TWIN_SUFFIX}")
}

/// The kernel whose strided-batch twin `entry` is, if it is one.
pub fn kernel_of_batch_twin(entry: &str) -> Option<&str> {
    entry.strip_suffix(BATCH_TWIN_SUFFIX)
}

const BATCH_TWIN_SUFFIX: &str = "_batch";

/// The kernels allowed local memory, each with its bound in bytes (stack frame, spill stores,
/// spill loads) and the architecture. The PTX and SASS tests hold every other kernel to none.
///
/// - The strided batch's twin of `best:1` in f32 for sm_90. `best:1`'s 128 threads are held to
///   128 registers (four blocks per SM), all of which it uses; in the twin, A and B offset by
///   the block's grid layer are pointers in registers where the parameters were free, and
///   ptxas keeps three words in local memory: one `LDL` per 16-step slice of 1 247
///   instructions. In the one entry point that served both, single problems ran 5% slower at
///   4096³ (H100); now they run the kernel as it was. The sm_80 build of the twin does not
///   spill.
/// - `wgmma-queue:2` in each layout and type, since the amax epilogue
///   (`crate::fused::Fused::gather_amax`): at its cap of 168 registers, ptxas keeps one or
///   three words of the consumer's tile setup (before the tile's first `HGMMA`) in local
///   memory, one to three `STL`/`LDL` pairs per tile. Five arrangements of the amax's code were
///   tried (`docs/perf-notes.md`); on the H100 the kernel without the amax ran within 2% of the
///   build before at three shapes, `docs/results/h100-2026-11-27-amax/`. Since the walk's
///   vote on a tile's group (`pipeline::locate`), 12 + 8 bytes (NN, TN) and 20 + 16 (NT, TT),
///   still outside the mainloop; on the H200 unchanged within 1% at 4096³ and on a batch of
///   1024 × 512² × 64, `docs/results/h200-2026-11-28-grouped-nine/run6/`. Since the store
///   reads no C where `beta` is zero (`pipeline::epilogue::plain`), 8 + 8 bytes in every
///   layout; `auto` takes this configuration for large batches.
/// - `wgmma-fp8-block:10` (`:9` on a stream-k grid): the stream-k walk keeps 48 bytes in local
///   memory, in the 32-register producer and in the consumers' per-work set-up (88 bytes
///   stored, 72 loaded since the trimmed loop, 80 and 68 before); the consumers' mainloop has
///   none. A 40-register producer spilled nothing itself, but the consumers' 152
///   then spilled in their mainloop and ran 2–4% slower (H200,
///   `docs/results/h200-2026-11-28-fp8-stream-k/run2/`).
/// - `wgmma-stream-k:1` in each layout and type, since the store reads no C where `beta` is
///   zero (`pipeline::epilogue::plain`): one word of a work unit's set-up, stored before its
///   mainloop and loaded in its epilogue (one `STL` and one `LDL` per unit). On the H200 the
///   new build ran level or faster than the one before (2048² × 8192: 566/564 against
///   568/560 TFLOP/s; 1024² × 16384 +3%; 4096³ +2%),
///   `docs/results/h200-2026-11-28-store-path/run8-stream-k/`.
pub const SPILLS_MEASURED: &[(&str, &str, (u32, u32, u32))] = &[
    ("sm_90", "gemm_best_c1_f32_batch", (16, 12, 36)),
    ("sm_90a", "gemm_wgmma_queue_nn_c2_bf16", (8, 8, 8)),
    ("sm_90a", "gemm_wgmma_queue_nn_c2_f16", (8, 8, 8)),
    ("sm_90a", "gemm_wgmma_queue_tn_c2_bf16", (8, 8, 8)),
    ("sm_90a", "gemm_wgmma_queue_tn_c2_f16", (8, 8, 8)),
    ("sm_90a", "gemm_wgmma_queue_nt_c2_bf16", (8, 8, 8)),
    ("sm_90a", "gemm_wgmma_queue_nt_c2_f16", (8, 8, 8)),
    ("sm_90a", "gemm_wgmma_queue_tt_c2_bf16", (8, 8, 8)),
    ("sm_90a", "gemm_wgmma_queue_tt_c2_f16", (8, 8, 8)),
    ("sm_90a", "gemm_wgmma_fp8_block_c10_e4m3", (48, 88, 72)),
    ("sm_90a", "gemm_wgmma_stream_k_nn_c1_bf16", (8, 4, 4)),
    ("sm_90a", "gemm_wgmma_stream_k_nn_c1_f16", (8, 4, 4)),
    ("sm_90a", "gemm_wgmma_stream_k_tn_c1_bf16", (8, 4, 4)),
    ("sm_90a", "gemm_wgmma_stream_k_tn_c1_f16", (8, 4, 4)),
    ("sm_90a", "gemm_wgmma_stream_k_nt_c1_bf16", (8, 4, 4)),
    ("sm_90a", "gemm_wgmma_stream_k_nt_c1_f16", (8, 4, 4)),
    ("sm_90a", "gemm_wgmma_stream_k_tt_c1_bf16", (8, 4, 4)),
    ("sm_90a", "gemm_wgmma_stream_k_tt_c1_f16", (8, 4, 4)),
];

impl Variant {
    /// Whether it runs a strided batch as its grid's z ([`GRID_BATCHED`]).
    pub fn grid_batched(&self) -> bool {
        GRID_BATCHED.contains(&self.name)
    }

    /// Whether each of its entry points has a strided batch's twin, `NAME_batch` ([`batch_twin`]):
    /// the kernels of [`GRID_BATCHED`], and the Hopper TF32 kernels, whose twins walk every
    /// member's tiles while the kernel itself computes one problem with no division in its walk
    /// (`wgmma_tf32::Tf32Pipeline`'s `BATCH`).
    pub fn has_batch_twins(&self) -> bool {
        self.grid_batched()
            || (self.target == Target::Sm90a
                && self.dtypes == [Dtype::F32]
                && self.tma.is_some_and(|t| t(1, self.layouts[0]).batched))
    }

    /// The PTX entry point for a dtype, tile width and layout.
    pub fn entry_name(&self, dtype: Dtype, tile: u32, layout: Layout) -> String {
        let base = self
            .entry
            .replace("{tile}", &tile.to_string())
            .replace("{ops}", layout.letters());
        format!("{base}_{}", dtype.name())
    }

    /// The entry point for a dtype and tile in the variant's first layout (N,N for all but the
    /// TN-only FP8 kernels).
    pub fn first_entry_name(&self, dtype: Dtype, tile: u32) -> String {
        self.entry_name(dtype, tile, self.layouts[0])
    }

    /// Whether it computes on the tensor cores (`mma.sync`): the chapter's variants are the
    /// ones named `tc-…`, and their SASS must show HMMA/DMMA where the others show FFMA/DFMA.
    pub fn uses_tensor_cores(&self) -> bool {
        self.name.starts_with("tc-") || self.uses_wgmma()
    }

    /// Whether it computes with Hopper's warpgroup MMA (`wgmma`, `HGMMA` in SASS): the variants
    /// named `wgmma-…`.
    pub fn uses_wgmma(&self) -> bool {
        self.name.starts_with("wgmma-")
    }

    /// Every entry point this variant can launch.
    pub fn entry_names(&self) -> impl Iterator<Item = String> + '_ {
        // A runtime parameter (no `{tile}` in the name) is one entry point for every value.
        let tiles: &[u32] = if self.tiles.is_empty() || !self.entry.contains("{tile}") {
            &[0]
        } else {
            self.tiles
        };
        let reduce = self
            .reduce
            .into_iter()
            .flat_map(|r| self.dtypes.iter().map(move |d| format!("{r}_{}", d.name())));
        // A layout is an entry point of its own only where the entry names it.
        let layouts: &[Layout] = if self.entry.contains("{ops}") {
            self.layouts
        } else {
            &self.layouts[..1]
        };
        self.dtypes
            .iter()
            .copied()
            .flat_map(move |d| {
                tiles
                    .iter()
                    .flat_map(move |t| layouts.iter().map(move |l| self.entry_name(d, *t, *l)))
            })
            .flat_map(|name| {
                let batched = self.has_batch_twins().then(|| batch_twin(&name));
                core::iter::once(name).chain(batched)
            })
            .chain(reduce)
            .chain(
                self.ranges_pass()
                    .into_iter()
                    .flat_map(|pass| [pass.to_string(), batch_twin(pass)]),
            )
            .chain(self.unfused_epilogues())
            .chain(self.amax_scale())
            .chain(self.operand_copies())
    }

    /// The copies that may run before this variant's kernels: the transposing copy
    /// ([`TRANSPOSE`]) of an operand stored transposed, in f32 and f64 from the portable
    /// module, whatever the kernel's (the Hopper TF32 kernels read it too), in bf16 and f16
    /// from the sm_90a one; and there the pitched copy ([`PITCHED_COPY`]) of an operand whose
    /// columns the TMA engine cannot read, or reads slowly, where they lie.
    fn operand_copies(&self) -> impl Iterator<Item = String> + '_ {
        self.dtypes
            .iter()
            .filter(|d| match self.target {
                Target::Portable => matches!(d, Dtype::F32 | Dtype::F64),
                Target::Sm90a => d.is_16bit(),
            })
            .flat_map(|d| {
                let pitched = d.is_16bit().then(|| format!("{PITCHED_COPY}_{}", d.name()));
                [Some(format!("{TRANSPOSE}_{}", d.name())), pitched]
            })
            .flatten()
    }

    /// The amax epilogue's last step ([`AMAX_SCALE`]), after this variant's 16-bit Hopper
    /// kernels.
    fn amax_scale(&self) -> Option<String> {
        (self.target == Target::Sm90a && self.dtypes.iter().any(|d| d.is_16bit()))
            .then(|| AMAX_SCALE.to_string())
    }

    /// The entry points of the unfused epilogue that may follow this variant's 16-bit Hopper
    /// kernels ([`UNFUSED_EPILOGUE`]).
    fn unfused_epilogues(&self) -> impl Iterator<Item = String> + '_ {
        self.dtypes
            .iter()
            .filter(|d| d.is_16bit() && self.target == Target::Sm90a)
            .map(|d| format!("{UNFUSED_EPILOGUE}_{}", d.name()))
    }

    /// The entry point of the pass this variant's launches run first, if any: 3xTF32's ranges
    /// ([`TmaOperands::ranges`]; a strided batch runs its twin, [`batch_twin`]).
    pub fn ranges_pass(&self) -> Option<&'static str> {
        let ranged = self.tma.is_some_and(|operands| {
            self.tiles
                .iter()
                .chain([&1])
                .any(|&t| operands(t, self.layouts[0]).ranges)
        });
        ranged.then_some(crate::variants::ranges::ENTRY)
    }
}

/// The unfused epilogue's entry point, before the dtype's suffix: `C = act(C + bias)` as a
/// kernel of its own after a 16-bit GEMM ([`crate::variants::bias_activation`]).
pub const UNFUSED_EPILOGUE: &str = "gemm_bias_activation";

/// The transposing copy's entry point, before the dtype's suffix (f32 and f64 in every build,
/// bf16 and f16 in sm_90a's): an operand stored the other way round, copied so that a kernel
/// that reads it the other way reads it ([`crate::variants::transpose`]).
pub const TRANSPOSE: &str = "gemm_transpose";

/// The pitched copy's entry point, before the dtype's suffix (bf16 and f16, sm_90a's build): a
/// 16-bit operand copied to columns 128 bytes apart ([`crate::variants::pitched_copy`]).
pub const PITCHED_COPY: &str = "gemm_pitched_copy";

/// The amax epilogue's last step, in the sm_90a build: a kernel of one thread after a 16-bit
/// GEMM whose epilogue gathers D's amax ([`crate::fused::finish_amax`]).
pub const AMAX_SCALE: &str = "gemm_amax_scale";

/// The variant called `name`.
pub fn find(name: &str) -> Option<&'static Variant> {
    ALL.iter().find(|v| v.name == name)
}
