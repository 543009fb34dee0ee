//! What the backends launch: the [`Launch`] that [`crate::run::plan`] resolves for a variant
//! (an entry point with its grid, cuBLAS, or a CPU variant). Below the pipeline, so that the GPU
//! backend and the emulator depend on it and not on the pipeline that drives them.
use crate::cpu::CpuVariant;
use crate::problem::{Problem, Transpose};
use crate::registry::{CublasMath, Variant};
use kernels_gpu::gemm::{Batch, Dtype, Geometry, GroupLayout, Members};
use kernels_gpu::registry::{Target, TmaOperands};

/// What a backend launches: a kernel entry point with its grid, block and shared memory, or
/// cuBLAS on the same buffers; or a CPU variant, which runs on the host whatever the backend.
// A launch is made once per plan and run, never held by the thousand: the kernel's form
// stays inline rather than boxed behind every match on it.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Launch {
    /// A `kernels_gpu` kernel, on the GPU or the emulator.
    Kernel {
        /// The PTX entry point: the registry's entry with `{tile}` filled in and the dtype's
        /// suffix (`gemm_tiled_w16_f32`).
        entry: String,
        /// Grid, block and dynamic shared memory in bytes (for a persistent grid, one block per
        /// tile: the GPU backend caps it).
        geometry: Geometry,
        /// Split-k's second launch, which adds the first's partial products into C.
        reduce: Option<Reduce>,
        /// The PTX build that holds the entry point (sm_90a: Hopper only).
        target: Target,
        /// Tensor maps for A and B (TMA kernels), and whether the grid is persistent.
        tma: Option<TmaOperands>,
        /// Operands copied first into workspaces the kernel can read (`auto` only).
        copies: Option<Copies>,
        /// The problem's epilogue as a kernel of its own after the GEMM, which then runs without
        /// it (`unfused`, the fused epilogue's baseline).
        unfused: Option<Box<Pointwise>>,
    },
    /// cuBLAS in this math mode, on the same buffers (GPU only).
    Cublas(CublasMath),
    /// `tile` is the resolved `--tile` (`blockL`), 0 for a variant without one.
    Cpu {
        /// The name reports show, with this CPU's SIMD path and the dtype
        /// (`cpu_blocked_avx2_fma_f32`).
        entry: String,
        /// The registry row, which names the function that runs.
        variant: &'static CpuVariant,
        /// `blockL`, as resolved by [`crate::registry::resolve_tile`].
        tile: u32,
    },
}

/// Operands the kernel cannot read as they lie, each copied first into a workspace that it can
/// ([`crate::auto`] plans it, the backends do it), and the kernel reads the copy:
/// - a 16-bit row stride that is not a multiple of 16 bytes, which the TMA engine cannot
///   describe, or not of 128 bytes where the copy pays ([`crate::auto::line_copies`]): copied
///   column by column (the kernel [`kernels_gpu::variants::pitched_copy`]) into a workspace
///   whose columns start 128 bytes apart;
/// - an operand stored transposed (`op(X) = Xᵀ`) where no kernel reads that layout: copied
///   transposed (the kernel [`kernels_gpu::variants::transpose`]), so that the kernel reads
///   `op(X) = X`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Copies {
    /// A's copy, if A needs one.
    pub a: Option<Pitch>,
    /// B's copy, if B needs one.
    pub b: Option<Pitch>,
}

impl Copies {
    /// The problem the kernel computes on the copies: their leading dimensions, and `op(X) = X`
    /// for an operand copied transposed.
    pub fn problem_reading_them(&self, p: &Problem) -> Problem {
        let mut copied = *p;
        if let Some(a) = self.a {
            copied.shape.lda = a.to;
            copied.batch.stride_a = a.to_stride;
            if a.transposed {
                copied.transposes.transa = Transpose::No;
            }
        }
        if let Some(b) = self.b {
            copied.shape.ldb = b.to;
            copied.batch.stride_b = b.to_stride;
            if b.transposed {
                copied.transposes.transb = Transpose::No;
            }
        }
        copied
    }

    /// What is copied, for a choice's reason: "reading A copied transposed and B with its
    /// leading dimension aligned".
    pub fn describe(&self) -> String {
        let one = |pitch: Option<Pitch>, name: &str| {
            pitch.map(|p| {
                let members = match (p.members, p.copies_made()) {
                    (1, _) => String::new(),
                    (n, 1) => format!(", once for its {n} members"),
                    (n, _) => format!(", each of its {n} members"),
                };
                match p.transposed {
                    true => format!("{name} copied transposed (ld {}{members})", p.to),
                    false => format!("{name} copied to ld {} (128-byte rows{members})", p.to),
                }
            })
        };
        let parts: Vec<String> = [one(self.a, "A"), one(self.b, "B")]
            .into_iter()
            .flatten()
            .collect();
        format!("reading {}", parts.join(" and "))
    }
}

/// A stored matrix of `rows × cols`, its leading dimension `from` in the caller's buffer and
/// `to` in the copy; in a strided batch, each member's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pitch {
    /// Rows of the stored matrix (the contiguous dimension).
    pub rows: u32,
    /// Its columns.
    pub cols: u32,
    /// Its leading dimension in the caller's buffer.
    pub from: u32,
    /// Its leading dimension in the copy: a multiple of 128 bytes.
    pub to: u32,
    /// The copy is the matrix transposed: `cols × rows`, leading dimension `to`.
    pub transposed: bool,
    /// The members of a strided batch (1 for one problem).
    pub members: u32,
    /// The elements from one member's matrix to the next in the caller's buffer (0: one matrix
    /// for every member)…
    pub from_stride: u64,
    /// …and in the copy: 0 for one copy that every member reads (a shared matrix the kernel
    /// reads shared), else one copy per member, packed ([`Pitch::matrix_len`] apart).
    pub to_stride: u64,
}

impl Pitch {
    /// One problem's matrix: no batch.
    pub fn single(rows: u32, cols: u32, from: u32, to: u32, transposed: bool) -> Pitch {
        Pitch {
            rows,
            cols,
            from,
            to,
            transposed,
            members: 1,
            from_stride: 0,
            to_stride: 0,
        }
    }

    /// The same copy for each member of a batch of `members`, `from_stride` apart in the
    /// caller's buffer: one shared copy where the members share one matrix (`from_stride` 0)
    /// and `shared_stays_shared`, else one packed copy per member (the kernels that cannot read
    /// a shared operand get one each).
    pub fn for_members(self, members: u32, from_stride: u64, shared_stays_shared: bool) -> Pitch {
        let shared = from_stride == 0 && shared_stays_shared;
        Pitch {
            members,
            from_stride,
            to_stride: if members < 2 || shared {
                0
            } else {
                self.matrix_len() as u64
            },
            ..self
        }
    }

    /// Columns of the copy.
    pub fn copied_cols(&self) -> u32 {
        if self.transposed {
            self.rows
        } else {
            self.cols
        }
    }

    /// Elements of one member's copy.
    pub fn matrix_len(&self) -> usize {
        self.to as usize * self.copied_cols() as usize
    }

    /// Copies made: one per member, or one that every member reads.
    pub fn copies_made(&self) -> u32 {
        if self.to_stride == 0 {
            1
        } else {
            self.members
        }
    }

    /// Elements of the copy's workspace (every member's).
    pub fn copy_len(&self) -> usize {
        self.matrix_len() * self.copies_made() as usize
    }

    /// Where copy `i` reads from and writes to, in elements from the start of the caller's
    /// operand and of the workspace.
    pub fn offsets(&self, i: u32) -> (u64, u64) {
        (i as u64 * self.from_stride, i as u64 * self.to_stride)
    }

    /// The kernel that makes this copy in `dtype`, its entry point and launch, on the GPU as
    /// on the emulator: the transposing copy ([`kernels_gpu::variants::transpose`]) for a copy
    /// the other way round, else the 16-bit pitched copy
    /// ([`kernels_gpu::variants::pitched_copy`]). A straight copy of another type is refused:
    /// `auto` plans one only for the 16-bit operands that the TMA engine reads.
    pub fn kernel(&self, dtype: Dtype) -> anyhow::Result<(String, Geometry)> {
        let (name, geometry) = if self.transposed {
            let g = kernels_gpu::variants::transpose::geometry(self.rows, self.cols, dtype.bytes());
            (kernels_gpu::registry::TRANSPOSE, g)
        } else if dtype.is_16bit() {
            let g = kernels_gpu::variants::pitched_copy::geometry(self.rows, self.cols);
            (kernels_gpu::registry::PITCHED_COPY, g)
        } else {
            anyhow::bail!(
                "no kernel copies a {} operand to aligned columns (only bf16 and f16 operands are copied that way)",
                dtype.name()
            )
        };
        Ok((format!("{name}_{}", dtype.name()), geometry))
    }
}

/// The second launch of a split-k variant (`kernels_gpu::variants::split_k`): the first writes
/// `splits` partial products, m×n each with leading dimension m, into a workspace; this one
/// reads them as its A (`k = splits`, `lda = m`) and writes `C = α·Σ + β·C`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reduce {
    /// The reduction's entry point, with the dtype's suffix.
    pub entry: String,
    /// Its launch: one thread per element of C.
    pub geometry: Geometry,
    /// Partial products in the workspace: the first launch's `grid.1`, one per slice of k.
    pub splits: u32,
}

impl Reduce {
    /// Elements of the workspace for an m×n C.
    pub fn workspace_len(&self, m: u32, n: u32) -> usize {
        self.splits as usize * m as usize * n as usize
    }

    /// Bytes of the workspace for an m×n C: in the element type, or in f32 for the 16-bit types,
    /// whose kernels accumulate (and write their partial products) in f32.
    pub fn workspace_bytes(&self, m: u32, n: u32, dtype: Dtype) -> usize {
        let element = if dtype.is_16bit() {
            4
        } else {
            dtype.bytes() as usize
        };
        self.workspace_len(m, n) * element
    }
}

/// A kernel over C after the GEMM ([`kernels_gpu::variants::bias_activation`]): `C = act(C +
/// bias)`, with the split-k reduction's arguments and no parts. Its grid depends on C's
/// address (pairs of elements where C is 4-byte aligned), so the backends size it at launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pointwise {
    /// Its entry point, with the dtype's suffix.
    pub entry: String,
}

/// An FP8 GEMM's operands on the host, as the kernels and cuBLASLt take them ("TN",
/// `kernels_gpu::gemm::Fp8GemmArgs`): A's and B's e4m3 codes (k × m and k × n, column-major),
/// their scales in the layout the launched kernel reads (one each, or per block), and C.
#[derive(Clone, Copy)]
pub struct Fp8Operands<'a> {
    /// A's codes, stored k × m (`lda`).
    pub a: &'a [u8],
    /// B's codes, stored k × n (`ldb`).
    pub b: &'a [u8],
    /// A's scales.
    pub scale_a: &'a [f32],
    /// B's scales.
    pub scale_b: &'a [f32],
    /// C as the checked run starts from it (bf16, m × n, `ldc`).
    pub c: &'a [half::bf16],
    /// A grouped GEMM's layout and groups ([`Fp8Groups::NONE`] for one problem): then A holds a
    /// layer per group, with its scales, and in the masked layout B, B's scales and C a layer
    /// per group.
    pub groups: Fp8Groups,
    /// A grouped GEMM's table (empty for one problem).
    pub table: &'a [u32],
    /// The fused epilogue ([`kernels_gpu::fused::Epilogue::NONE`] for none) and its bias (m or
    /// n values, or empty).
    pub fused: (kernels_gpu::fused::Epilogue, &'a [half::bf16]),
}

/// A grouped FP8 GEMM's layout and number of groups, as the kernels take them
/// ([`kernels_gpu::gemm::Fp8GemmArgs`]): the shape is one group's A (m × k) and all of B's and
/// C's columns (contiguous) or one member's room (masked), as for the 16-bit types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fp8Groups {
    /// Contiguous, masked, or none.
    pub layout: GroupLayout,
    /// Groups: layers of A (1 for one problem).
    pub count: u32,
    /// A strided batch ([`Fp8Groups::batch`]): its members' strides, in the masked layout
    /// whose every count is n (a table the caller does not give: the pipeline makes it).
    pub strided: Option<Batch>,
}

impl Fp8Groups {
    /// One problem.
    pub const NONE: Fp8Groups = Fp8Groups {
        layout: GroupLayout::None,
        count: 1,
        strided: None,
    };

    /// A strided batch, each member its own A, B and C (at `batch`'s strides) with its own
    /// scales (packed, one member's after the other's: per block as a group's, per tensor one
    /// each): the masked layout whose every count is n. A batch is a grouped GEMM with equal groups, so the FP8 kernels run it on
    /// the grouped walk (`host --batch` in e4m3, and `Gemm::run_fp8` with
    /// `GemmConfig::batch`).
    pub const fn batch(batch: Batch) -> Fp8Groups {
        Fp8Groups {
            layout: GroupLayout::Masked,
            count: batch.count,
            strided: Some(batch),
        }
    }

    /// A grouped GEMM's layout and groups, the table the caller's.
    pub const fn grouped_as(layout: GroupLayout, count: u32) -> Fp8Groups {
        Fp8Groups {
            layout,
            count,
            strided: None,
        }
    }

    /// Whether it is a grouped GEMM.
    pub fn grouped(&self) -> bool {
        self.layout != GroupLayout::None
    }

    /// The layers of the operands' tensor maps: a strided batch's own; else a layer of A per
    /// group, packed, and in the masked layout a layer of B and C per group too (a stride of
    /// 0: one layer).
    pub fn layers(&self, s: &kernels_gpu::registry::Shape) -> Batch {
        if let Some(batch) = self.strided {
            return batch;
        }
        if !self.grouped() {
            return Batch::ONE;
        }
        let per_member = |ld: u32| match self.layout {
            GroupLayout::Masked => ld as u64 * s.n as u64,
            _ => 0,
        };
        Batch {
            count: self.count,
            stride_a: s.lda as u64 * s.m as u64,
            stride_b: per_member(s.ldb),
            stride_c: per_member(s.ldc),
        }
    }

    /// The members the kernel walks: the masked layout's groups; one problem otherwise.
    pub fn members(&self, s: &kernels_gpu::registry::Shape) -> Members {
        match self.layout {
            GroupLayout::Masked => Members {
                count: self.count,
                stride_c: self.layers(s).stride_c,
                member: 0,
            },
            _ => Members::ONE,
        }
    }
}

/// Where an FP8 GEMM's operands lie on the device: what a kernel's or cuBLASLt's enqueue takes.
#[derive(Clone, Copy, Debug)]
pub struct Fp8Pointers {
    /// A's codes.
    pub a: u64,
    /// B's codes.
    pub b: u64,
    /// A's scales.
    pub scale_a: u64,
    /// B's scales.
    pub scale_b: u64,
    /// C, written in place.
    pub c: u64,
    /// A grouped GEMM's table (0 for one problem).
    pub table: u64,
    /// The fused epilogue's bias (0 without one).
    pub bias: u64,
    /// The amax epilogue's three words (0 without it): the GEMM raises the first, the last
    /// step after it ([`kernels_gpu::fused::finish_amax`]) leaves D's amax and scale.
    pub amax: u64,
}

impl Launch {
    /// The kernel's or CPU variant's entry point, or "cublas" / "cublas-tf32".
    pub fn name(&self) -> &str {
        match self {
            Launch::Kernel { entry, .. } | Launch::Cpu { entry, .. } => entry,
            Launch::Cublas(math) => Variant::Cublas(*math).name(),
        }
    }

    /// Whether the GEMM kernel may be launched early, a programmatic dependent launch (its
    /// row's [`TmaOperands::early_start`]): on the GPU when a plan asks
    /// ([`crate::api::Plan::start_early`]), on the emulator always, which checks its waits.
    pub fn starts_early(&self) -> bool {
        matches!(self, Launch::Kernel { tma: Some(t), .. } if t.early_start)
    }
}
