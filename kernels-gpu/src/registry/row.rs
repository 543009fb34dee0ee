//! What a registry row declares: a [`Variant`] (its name, entry points, layouts, tiles, types,
//! arithmetic, launch shape, constraints, build and tensor maps) and the types its fields take.
use crate::gemm::{Arithmetic, Dtype, Geometry};

/// A problem's sizes and leading dimensions, as the registry checks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub lda: u32,
    pub ldb: u32,
    pub ldc: u32,
}

/// Which operands a kernel reads transposed: `op(A) = Aᵀ` (A stored k × m) and `op(B) = Bᵀ`
/// (B stored n × k), BLAS's `transa` and `transb`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    pub a_transposed: bool,
    pub b_transposed: bool,
}

impl Layout {
    pub const NN: Layout = Layout::new(false, false);
    pub const TN: Layout = Layout::new(true, false);
    pub const NT: Layout = Layout::new(false, true);
    pub const TT: Layout = Layout::new(true, true);
    /// The four, N,N first.
    pub const ALL: [Layout; 4] = [Layout::NN, Layout::TN, Layout::NT, Layout::TT];

    pub const fn new(a_transposed: bool, b_transposed: bool) -> Self {
        Layout {
            a_transposed,
            b_transposed,
        }
    }

    /// `nn`, `tn`, `nt` or `tt`: what an entry point's `{ops}` stands for.
    pub const fn letters(self) -> &'static str {
        match (self.a_transposed, self.b_transposed) {
            (false, false) => "nn",
            (true, false) => "tn",
            (false, true) => "nt",
            (true, true) => "tt",
        }
    }
}

/// The layouts of a kernel that reads op(A) = A, op(B) = B only.
pub const NN_ONLY: &[Layout] = &[Layout::NN];

/// One GPU variant.
pub struct Variant {
    /// The name `--variant` takes.
    pub name: &'static str,
    /// One line for `--list`.
    pub summary: &'static str,
    /// Where it comes from in the source documents.
    pub source: &'static str,
    /// The PTX entry point without its `_f32`/`_f64` suffix; `{tile}` stands for the tile width,
    /// `{ops}` for the layout (`tn`: [`Layout::letters`]).
    pub entry: &'static str,
    /// The layouts it computes, each an entry point where the entry has `{ops}`.
    pub layouts: &'static [Layout],
    /// The tile widths `--tile` accepts, the default first; empty when there is no parameter.
    pub tiles: &'static [u32],
    /// Grid, block and shared memory for a problem (`tile` is 0 when `tiles` is empty).
    pub geometry: fn(m: u32, n: u32, k: u32, element_bytes: u32, tile: u32) -> Geometry,
    /// `Err(constraint)` for shapes the kernel does not handle.
    pub supports: fn(&Shape, Dtype) -> Result<(), String>,
    /// The element types it has entry points for (most have both).
    pub dtypes: &'static [Dtype],
    /// How it computes: the host checks its result against the tolerance of this arithmetic.
    pub arithmetic: Arithmetic,
    /// A second launch that finishes the first's work: `Some(entry)` for split-k, whose first
    /// launch writes `grid.1` partial products into a workspace and whose second (this entry,
    /// [`split_k::reduce_geometry`](crate::variants::split_k::reduce_geometry)) adds them into C. See [`split_k`](crate::variants::split_k).
    pub reduce: Option<&'static str>,
    /// The PTX build that holds its entry points.
    pub target: Target,
    /// For kernels fed by the TMA engine: their tensor maps and grid ([`TmaOperands`]) for a
    /// tile configuration and layout.
    pub tma: Option<fn(tile: u32, layout: Layout) -> TmaOperands>,
    /// The FP8 kernels' scales: one per tensor, or one per block (a block-scaled kernel also
    /// runs a per-tensor problem, its scales broadcast); `None` for every other type.
    pub scales: Option<Scales>,
}

/// How an FP8 kernel reads the operands' scales.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scales {
    /// One f32 scale per operand.
    PerTensor,
    /// One per 1 × 128 of op(A) and per 128 × 128 of B (DeepSeek-V3's scheme).
    Block,
}

/// Which PTX build a variant's entry points are in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Every architecture the project builds (sm_80 and newer): the sm_80 and sm_90 PTX.
    Portable,
    /// Hopper's architecture-specific features (`wgmma`, `setmaxnreg`): only in the sm_90a PTX,
    /// which the driver loads on compute capability 9.0 exactly (H100, H200).
    Sm90a,
}

impl Target {
    /// The `build-ptx` architecture whose PTX holds the entry points.
    pub const fn arch(self) -> &'static str {
        match self {
            Target::Portable => "sm_90",
            Target::Sm90a => "sm_90a",
        }
    }
}

/// How a kernel whose A and B are read by the TMA engine is launched: the host encodes one
/// tensor map per operand (A as m × k, B as k × n, column-major: dimension 0 is the rows) with
/// these boxes and swizzle, and passes their address as the kernel's last parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TmaOperands {
    /// A's box: rows (m) × columns (k); with `a_transposed`, rows (k) × columns (m).
    pub a_box: [u32; 2],
    /// A is stored k × m (op(A) = Aᵀ, `lda ≥ k`): the FP8 kernels' K-major A.
    pub a_transposed: bool,
    /// B's box: rows (k) × columns (n); with `b_transposed`, rows (n) × columns (k).
    pub b_box: [u32; 2],
    /// B is stored n × k (op(B) = Bᵀ, `ldb ≥ n`).
    pub b_transposed: bool,
    pub swizzle: crate::device::tma::Swizzle,
    /// The grid is persistent: at most one block per multiprocessor, each looping over tiles
    /// (`geometry` gives one block per tile; the backend caps it).
    pub persistent: bool,
    /// Blocks per cluster along x (the kernel's `.reqnctapercluster`, fixed in its PTX): the
    /// grid is a multiple of it.
    pub cluster: u32,
    /// C's box (rows (m) × columns (n)), for a kernel that stores C with the TMA engine: a third
    /// tensor map follows A's and B's.
    pub c_box: Option<[u32; 2]>,
    /// Stream-k's tile (rows × columns of C, [`crate::pipeline::stream`]): after the tensor maps
    /// the host writes the addresses of an f32 workspace of two tiles per block of the grid and
    /// of one zeroed u32 counter per tile.
    pub stream_k: Option<[u32; 2]>,
    /// Whether the kernel runs a strided batch (its tensor maps have a layer per member, and
    /// its walk goes over every member's tiles: [`crate::pipeline::Kernel::BATCHES`]).
    pub batched: bool,
    /// Whether it runs a grouped GEMM ([`crate::gemm::Groups`]): the kernel's walk finds each
    /// tile's group ([`crate::pipeline::Kernel::GROUPS`]); the host passes the layout, the
    /// groups and the table's address after the batch.
    pub grouped: bool,
    /// 3xTF32's ranges ([`crate::variants::ranges`]): before the kernel the host zeroes m + n
    /// words and runs the pass that gathers the largest |x| of each row of A and column of B
    /// into them, and writes their address after the tensor maps.
    pub ranges: bool,
    /// A tile queue ([`crate::pipeline::queue`], [`crate::pipeline::Kernel::DYNAMIC`]): the host
    /// writes the address of a zeroed u32 counter after the tensor maps, which every launch
    /// leaves zeroed; one launch at a time may use it.
    pub queue: bool,
    /// Whether the host may launch it early (a programmatic dependent launch,
    /// [`crate::device::grid`]): the kernel runs on the skeleton ([`crate::pipeline::run`]),
    /// whose threads wait for the kernel ahead before they touch global memory, and prefetches
    /// its A's first slices into L2 before that wait ([`crate::pipeline::Kernel::prefetch`]).
    pub early_start: bool,
}

impl TmaOperands {
    /// The tensor maps of a problem's A (m × k, leading dimension `lda`, or k × m with
    /// `a_transposed`) and B (k × n, `ldb`, or n × k with `b_transposed`) at `a` and `b`,
    /// elements of `element_bytes` bytes, column-major; a layer per member of `batch`.
    pub fn specs(
        &self,
        shape: &Shape,
        batch: &crate::gemm::Batch,
        element_bytes: u32,
        a: u64,
        b: u64,
    ) -> [crate::device::tma::TensorMapSpec; 2] {
        let spec = |address, rows: u32, cols: u32, ld: u32, stride: u64, box_dims| {
            self.spec(
                address,
                element_bytes,
                (rows, cols, ld),
                (batch.count, stride),
                box_dims,
            )
        };
        let (s, (sa, sb)) = (shape, (batch.stride_a, batch.stride_b));
        [
            if self.a_transposed {
                spec(a, s.k, s.m, s.lda, sa, self.a_box)
            } else {
                spec(a, s.m, s.k, s.lda, sa, self.a_box)
            },
            if self.b_transposed {
                spec(b, s.n, s.k, s.ldb, sb, self.b_box)
            } else {
                spec(b, s.k, s.n, s.ldb, sb, self.b_box)
            },
        ]
    }

    /// C's tensor map (m × n, leading dimension `ldc`) at `c`, for a kernel with `c_box`.
    pub fn c_spec(
        &self,
        shape: &Shape,
        batch: &crate::gemm::Batch,
        element_bytes: u32,
        c: u64,
    ) -> Option<crate::device::tma::TensorMapSpec> {
        let (s, members) = (shape, (batch.count, batch.stride_c));
        self.c_box
            .map(|box_dims| self.spec(c, element_bytes, (s.m, s.n, s.ldc), members, box_dims))
    }

    /// A matrix of `rows × cols` (leading dimension `ld`) at `address`; `count` of them,
    /// `stride` elements apart, as layers when `count > 1`. A stride of 0 is one matrix that
    /// every member shares (a contiguous grouped GEMM's B and C): one layer.
    fn spec(
        &self,
        address: u64,
        element_bytes: u32,
        (rows, cols, ld): (u32, u32, u32),
        (count, stride): (u32, u64),
        box_dims: [u32; 2],
    ) -> crate::device::tma::TensorMapSpec {
        let row_stride_bytes = ld as u64 * element_bytes as u64;
        let single = crate::device::tma::TensorMapSpec::single(
            address,
            element_bytes,
            [rows as u64, cols as u64],
            row_stride_bytes,
            box_dims,
            self.swizzle,
        );
        // Members as the layers of the map, `stride` apart; a stride of 0 (a contiguous grouped
        // GEMM's one B and C) is one matrix. (A batch whose A or B overlaps never gets here: it
        // is copied apart first, see `gpu_gemm::auto::aligned_operands`.)
        if count > 1 && stride > 0 {
            crate::device::tma::TensorMapSpec {
                layers: count as u64,
                layer_stride_bytes: stride * element_bytes as u64,
                ..single
            }
        } else {
            single
        }
    }

    /// Stream-k's workspace for a launch of `grid` blocks: (bytes of the f32 workspace, number of
    /// counters: one per tile of each of `members` problems), or `None` for a kernel without
    /// stream-k.
    pub fn stream_k_scratch(
        &self,
        shape: &Shape,
        members: u32,
        grid: (u32, u32),
    ) -> Option<(usize, usize)> {
        self.stream_k.map(|[bm, bn]| {
            let per_member = shape.m.div_ceil(bm) as usize * shape.n.div_ceil(bn) as usize;
            let tiles = per_member * members as usize;
            let slabs = 2 * grid.0 as usize;
            (slabs * (bm * bn) as usize * 4, tiles)
        })
    }

    /// The grid of a launch on a device with `multiprocessors` SMs: one block per SM at most
    /// when persistent, and a multiple of the cluster.
    pub fn grid(&self, geometry: Geometry, multiprocessors: u32) -> (u32, u32) {
        let x = if self.persistent {
            geometry.grid.0.min(multiprocessors)
        } else {
            geometry.grid.0
        };
        (
            x.next_multiple_of(self.cluster).max(self.cluster),
            geometry.grid.1,
        )
    }

    /// The TMA's constraint on a problem, as a `supports` message: the row strides of A and B
    /// must be multiples of 16 bytes.
    pub fn check(shape: &Shape, element_bytes: u32) -> Result<(), String> {
        Self::check_lds(&[("lda", shape.lda), ("ldb", shape.ldb)], element_bytes)
    }

    /// [`TmaOperands::check`] for a kernel that also stores C with the TMA engine: `ldc` too,
    /// and m a multiple of 16 bytes' worth of elements, because the engine clips a store's
    /// columns of C at 16-byte granularity (measured on the H100): it would overwrite the
    /// padding rows of C up to the next multiple.
    pub fn check_with_c(shape: &Shape, element_bytes: u32) -> Result<(), String> {
        let lds = [("lda", shape.lda), ("ldb", shape.ldb), ("ldc", shape.ldc)];
        Self::check_lds(&lds, element_bytes)?;
        let per_16_bytes = 16 / element_bytes;
        if !shape.m.is_multiple_of(per_16_bytes) {
            return Err(format!(
                "m = {}: the TMA engine stores C's columns in 16-byte pieces, so m must be a multiple of {per_16_bytes} (or the rows past m would be overwritten)",
                shape.m
            ));
        }
        Ok(())
    }

    fn check_lds(lds: &[(&str, u32)], element_bytes: u32) -> Result<(), String> {
        for &(name, ld) in lds {
            if !(ld as u64 * element_bytes as u64).is_multiple_of(16) {
                return Err(format!(
                    "{name} = {ld}: the TMA engine reads rows whose stride is a multiple of 16 bytes ({name} a multiple of {})",
                    16 / element_bytes
                ));
            }
        }
        Ok(())
    }
}

/// f32 and f64: the variants written generically over [`crate::device::Real`].
pub const BOTH_DTYPES: &[Dtype] = &[Dtype::F32, Dtype::F64];

/// bf16 and f16: the 16-bit kernels.
pub const HALF_DTYPES: &[Dtype] = &[Dtype::Bf16, Dtype::F16];
