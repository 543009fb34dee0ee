//! The problem a run solves: sizes, leading dimensions, element type, scalars, inputs.
use anyhow::{bail, Result};
use cust::memory::DeviceCopy;
use half::slice::HalfFloatSliceExt;
use kernels_gpu::device::half::{Bf16, GlobalHalf, GlobalHalfMut, F16};
use kernels_gpu::device::tma::TensorMap;
use kernels_gpu::device::{Global, GlobalMut};
use kernels_gpu::entry::KernelBody;
use kernels_gpu::fused::Fused;
pub use kernels_gpu::fused::{Activation, Bias, Epilogue};
pub use kernels_gpu::gemm::{Batch, GroupLayout, GROUP_COLUMNS};
use kernels_gpu::gemm::{Dtype, GemmArgs, Groups, HalfGemmArgs, Members};
use kernels_gpu::registry::Shape;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How A, B and C are filled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Init {
    /// Uniform in [-1, 1) from a seeded generator (the seed is printed), rounded to the type.
    Random,
    /// The formulas of `000_…txt`: a(i,j) = (i - 0.1 j + 1)/(i + j + 1),
    /// b(i,j) = (j - 0.2 i + 1)(i + j + 1)/(i² + j² + 1), rounded to the type; C starts at zero.
    Seed,
}

/// BLAS's `op(X)`: the matrix as stored, or its transpose. A transposed operand is stored with
/// its rows and columns swapped (cuBLAS's `CUBLAS_OP_T`): the kernel reads Xᵀ's columns as
/// rows, which changes which accesses are contiguous, so a kernel supports it or not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Transpose {
    /// op(X) = X (BLAS's `N`)
    #[default]
    #[cfg_attr(feature = "clap", value(name = "n"))]
    No,
    /// op(X) = Xᵀ (BLAS's `T`): X is stored with op(X)'s rows as its columns
    #[cfg_attr(feature = "clap", value(name = "t"))]
    Yes,
}

impl Transpose {
    /// `N` or `T`, as BLAS spells it.
    pub const fn letter(self) -> char {
        match self {
            Transpose::No => 'N',
            Transpose::Yes => 'T',
        }
    }
}

/// BLAS's `transa` and `transb`: the pair a kernel supports or not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Transposes {
    /// op(A).
    pub transa: Transpose,
    /// op(B).
    pub transb: Transpose,
}

impl Transposes {
    /// `C = α·A·B + β·C`: what every kernel of the course computes.
    pub const NN: Transposes = Transposes::new(Transpose::No, Transpose::No);
    /// The four combinations, N,N first.
    pub const ALL: [Transposes; 4] = [
        Transposes::NN,
        Transposes::new(Transpose::Yes, Transpose::No),
        Transposes::new(Transpose::No, Transpose::Yes),
        Transposes::new(Transpose::Yes, Transpose::Yes),
    ];

    /// op(A) and op(B).
    pub const fn new(transa: Transpose, transb: Transpose) -> Self {
        Transposes { transa, transb }
    }

    /// `TN`: how reports name the layout (cuBLAS's and CUTLASS's spelling).
    pub fn name(self) -> String {
        format!("{}{}", self.transa.letter(), self.transb.letter())
    }

    /// `T,N`: as the refusals spell a combination, beside [`Transposes::formula`].
    pub fn letters(self) -> String {
        format!("{},{}", self.transa.letter(), self.transb.letter())
    }

    /// `op(A)=Aᵀ, op(B)=B`.
    pub fn formula(self) -> String {
        let op = |x: &str, t: Transpose| match t {
            Transpose::No => format!("op({x})={x}"),
            Transpose::Yes => format!("op({x})={x}ᵀ"),
        };
        format!("{}, {}", op("A", self.transa), op("B", self.transb))
    }
}

impl From<kernels_gpu::registry::Layout> for Transposes {
    fn from(l: kernels_gpu::registry::Layout) -> Self {
        let op = |t| if t { Transpose::Yes } else { Transpose::No };
        Transposes::new(op(l.a_transposed), op(l.b_transposed))
    }
}

impl From<Transposes> for kernels_gpu::registry::Layout {
    fn from(t: Transposes) -> Self {
        kernels_gpu::registry::Layout::new(t.transa == Transpose::Yes, t.transb == Transpose::Yes)
    }
}

/// Everything that defines one GEMM, as the user asked for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Problem {
    /// m, n, k of `op(A)·op(B)` and the leading dimensions of A, B and C as stored, in
    /// elements (column-major).
    pub shape: Shape,
    /// op(A) and op(B): `C = α·op(A)·op(B) + β·C`, the stored shape of A and B as
    /// [`Problem::stored_a`] and [`Problem::stored_b`] say.
    pub transposes: Transposes,
    /// Element type of A, B and C.
    pub dtype: Dtype,
    /// α as given; the kernels take it rounded to [`Scalar::Factor`] (f32 except in f64).
    pub alpha: f64,
    /// β as given, rounded like α; at 0 C is not read, and the checked run NaN-poisons it to
    /// prove it.
    pub beta: f64,
    /// How A, B and C are filled.
    pub init: Init,
    /// Seeds [`Init::Random`]'s generator (ChaCha8) and the check's sample of rows and columns;
    /// [`Init::Seed`]'s inputs do not depend on it.
    pub seed: u64,
    /// The fused epilogue: `C = act(α·op(A)·op(B) + β·C + bias)` ([`kernels_gpu::fused`]);
    /// [`Epilogue::NONE`] for a plain GEMM. The 16-bit kernels apply it.
    pub epilogue: Epilogue,
    /// A strided batch of `count` such problems ([`Batch`]); [`Batch::ONE`] for one. Sizes,
    /// flops and inputs are the batch's; [`Problem::member`] is one of its problems.
    pub batch: Batch,
    /// A grouped GEMM, one GEMM per group of columns ([`kernels_gpu::gemm::Groups`]), its
    /// groups the batch's members: [`GroupLayout::Contiguous`], one B and one C (their batch
    /// strides 0) whose columns the groups share in equal runs, an A per group; or
    /// [`GroupLayout::Masked`], a strided batch whose member `g` computes only its first
    /// `count(g)` columns. [`Problem::group_table`] gives the table the kernel reads.
    pub groups: GroupLayout,
}

/// The table a grouped GEMM's kernel reads ([`kernels_gpu::gemm::Groups`]), for `groups`
/// groups over `n` columns: in the contiguous layout the group of each [`GROUP_COLUMNS`]
/// columns, equal runs of n / groups columns each (as DeepGEMM's benchmarks lay them out); in
/// the masked layout each member's count, drawn from `seed` between n/2 and n (as a router's
/// counts vary), rounded down to a multiple of `count_multiple` (at least one multiple, or n).
/// Empty when not grouped.
pub fn group_table(
    layout: GroupLayout,
    groups: u32,
    n: u32,
    seed: u64,
    count_multiple: u32,
) -> Vec<u32> {
    match layout {
        GroupLayout::None => Vec::new(),
        GroupLayout::Contiguous => {
            let blocks = n / GROUP_COLUMNS;
            let per_group = (blocks / groups).max(1);
            (0..blocks)
                .map(|j| (j / per_group).min(groups - 1))
                .collect()
        }
        GroupLayout::Masked => {
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6E0_0B5);
            (0..groups)
                .map(|_| {
                    let count = rng.random_range(n.div_ceil(2)..=n);
                    (count - count % count_multiple).max(count_multiple.min(n))
                })
                .collect()
        }
    }
}

/// The groups of a grouped GEMM of `groups` groups over `n` columns with table `table`
/// ([`group_table`]'s or the caller's), in order: contiguous runs of the same word (padding,
/// words of `groups` or more, left out), or each member's count.
pub fn group_columns(layout: GroupLayout, groups: u32, n: u32, table: &[u32]) -> Vec<GroupColumns> {
    match layout {
        GroupLayout::None => Vec::new(),
        GroupLayout::Contiguous => {
            let mut runs: Vec<GroupColumns> = Vec::new();
            for (j, &group) in table.iter().enumerate() {
                if group >= groups {
                    continue;
                }
                let first = j as u32 * GROUP_COLUMNS;
                let columns = GROUP_COLUMNS.min(n - first);
                match runs.last_mut() {
                    Some(run) if run.group == group && run.first + run.columns == first => {
                        run.columns += columns
                    }
                    _ => runs.push(GroupColumns {
                        group,
                        member: 0,
                        first,
                        columns,
                    }),
                }
            }
            runs
        }
        GroupLayout::Masked => table
            .iter()
            .enumerate()
            .map(|(g, &count)| GroupColumns {
                group: g as u32,
                member: g as u32,
                first: 0,
                columns: count.min(n),
            })
            .collect(),
    }
}

/// Where the columns of one group of a grouped problem lie: its first column in B and C
/// (contiguous) or its member (masked), and its columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupColumns {
    /// The group: the layer of A it multiplies.
    pub group: u32,
    /// The member whose B and C hold the group's columns (0 in the contiguous layout).
    pub member: u32,
    /// Its first column in that member's B and C.
    pub first: u32,
    /// How many columns.
    pub columns: u32,
}

impl Problem {
    /// `C = A·B` (N,N) of `m × n × k` in `dtype`, every matrix packed (each leading dimension
    /// its rows), α = 1, β = 0, random inputs of seed 1: no epilogue, batch or groups. The
    /// plain problem that tests and examples start from and change a field of.
    pub fn packed(m: u32, n: u32, k: u32, dtype: Dtype) -> Problem {
        Problem {
            shape: Shape {
                m,
                n,
                k,
                lda: m,
                ldb: k,
                ldc: m,
            },
            transposes: Transposes::NN,
            dtype,
            alpha: 1.0,
            beta: 0.0,
            init: Init::Random,
            seed: 1,
            epilogue: kernels_gpu::fused::Epilogue::NONE,
            batch: kernels_gpu::gemm::Batch::ONE,
            groups: kernels_gpu::gemm::GroupLayout::None,
        }
    }

    /// The table a grouped problem's kernel reads ([`group_table`]), its groups the batch's
    /// members. Empty for a problem that is not grouped. In e4m3 a masked group's count is a
    /// multiple of 16: cuBLASLt's FP8 matmul, the yardstick called once per group, finds no
    /// algorithm for other n (CUDA 13.0 on the H100).
    pub fn group_table(&self) -> Vec<u32> {
        let multiple = if self.dtype.is_fp8() { 16 } else { 1 };
        group_table(
            self.groups,
            self.batch.count,
            self.shape.n,
            self.seed,
            multiple,
        )
    }

    /// The groups of a grouped problem with table `table` ([`group_columns`]).
    pub fn group_columns(&self, table: &[u32]) -> Vec<GroupColumns> {
        group_columns(self.groups, self.batch.count, self.shape.n, table)
    }

    /// Values in the bias vector: m (one per row of C), n (per column) or none.
    pub fn bias_len(&self) -> usize {
        match self.epilogue.bias() {
            Bias::None => 0,
            Bias::PerRow => self.shape.m as usize,
            Bias::PerColumn => self.shape.n as usize,
        }
    }

    /// Floating-point operations of the product: 2·m·n·k (the convention of every table), times
    /// the members of a batch.
    pub fn flops(&self) -> f64 {
        let s = &self.shape;
        let columns = match self.groups {
            GroupLayout::None => s.n as f64 * self.batch.count as f64,
            _ => {
                let groups = self.group_columns(&self.group_table());
                groups.iter().map(|g| g.columns as f64).sum()
            }
        };
        2.0 * s.m as f64 * columns * s.k as f64
    }

    /// Member `member` of a batch as a problem of its own (its inputs drawn with the seed
    /// `seed + member`, as [`Inputs::generate`] draws the batch's).
    pub fn member(&self, member: u32) -> Problem {
        Problem {
            batch: Batch::ONE,
            groups: kernels_gpu::gemm::GroupLayout::None,
            seed: self.seed.wrapping_add(member as u64),
            ..*self
        }
    }

    /// The batch as the kernels take it: the members and C's stride. A contiguous grouped
    /// problem's walk is one problem's (its B and C are one matrix; the groups are A's layers).
    pub fn members(&self) -> Members {
        if self.groups == GroupLayout::Contiguous {
            return Members::ONE;
        }
        Members {
            count: self.batch.count,
            stride_c: self.batch.stride_c,
            member: 0,
        }
    }

    /// The first of A's, B's and C's batch strides (its letter, the stride in elements and an
    /// element's bytes: C's are the output type's, bf16 for FP8) that is not a multiple of 16
    /// bytes, which the TMA engine needs to step from member to member (the layers of its
    /// tensor maps); `None` for one problem or strides that all are.
    pub fn batch_stride_off_tma(&self) -> Option<(char, u64, u32)> {
        let b = &self.batch;
        if !b.is_batched() {
            return None;
        }
        let (input, output) = (self.dtype.bytes(), self.dtype.output().bytes());
        [
            ('A', b.stride_a, input),
            ('B', b.stride_b, input),
            ('C', b.stride_c, output),
        ]
        .into_iter()
        .find(|&(_, stride, bytes)| !(stride * bytes as u64).is_multiple_of(16))
    }

    /// The first of A and B whose members overlap (a batch stride smaller than one matrix as
    /// stored, 0 for one matrix shared by every member): (its name, its stride, one matrix's
    /// elements). Legal ([`Problem::validate`]), but not every kernel reads it.
    pub fn overlapping_input(&self) -> Option<(char, u64, u64)> {
        let b = &self.batch;
        // A grouped GEMM's members are groups: a contiguous one's B is one matrix by design.
        if !b.is_batched() || self.groups != GroupLayout::None {
            return None;
        }
        let stored = self.stored();
        [(stored[0], b.stride_a), (stored[1], b.stride_b)]
            .into_iter()
            .map(|((name, _, cols, ld), stride)| (name, stride, ld as u64 * cols as u64))
            .find(|&(_, stride, matrix)| stride < matrix)
    }

    /// The strides of a batch whose members lie one right after the other (`ld × columns`
    /// elements of each operand as stored).
    pub fn packed_strides(&self, count: u32) -> Batch {
        let [a, b, c] = self
            .stored()
            .map(|(_, _, cols, ld)| ld as u64 * cols as u64);
        Batch {
            count,
            stride_a: a,
            stride_b: b,
            stride_c: c,
        }
    }

    /// Elements of each operand's buffer (A, B, C as stored): up to the end of the last member.
    pub fn buffer_elements(&self) -> [u64; 3] {
        let b = &self.batch;
        let last = (b.count.max(1) - 1) as u64;
        let strides = [b.stride_a, b.stride_b, b.stride_c];
        let stored = self.stored();
        core::array::from_fn(|i| {
            let (_, _, cols, ld) = stored[i];
            last * strides[i] + ld as u64 * cols as u64
        })
    }

    /// (rows, columns) of A as stored: m×k, or k×m when op(A) = Aᵀ (cuBLAS's convention).
    pub fn stored_a(&self) -> (u32, u32) {
        let s = &self.shape;
        match self.transposes.transa {
            Transpose::No => (s.m, s.k),
            Transpose::Yes => (s.k, s.m),
        }
    }

    /// (rows, columns) of B as stored: k×n, or n×k when op(B) = Bᵀ.
    pub fn stored_b(&self) -> (u32, u32) {
        let s = &self.shape;
        match self.transposes.transb {
            Transpose::No => (s.k, s.n),
            Transpose::Yes => (s.n, s.k),
        }
    }

    /// (name, rows, columns, leading dimension) of A, B and C as stored.
    pub fn stored(&self) -> [(char, u32, u32, u32); 3] {
        let s = &self.shape;
        let ((ar, ac), (br, bc)) = (self.stored_a(), self.stored_b());
        [
            ('A', ar, ac, s.lda),
            ('B', br, bc, s.ldb),
            ('C', s.m, s.n, s.ldc),
        ]
    }

    /// Checks sizes and leading dimensions; the message names the constraint.
    pub fn validate(&self) -> Result<()> {
        let s = &self.shape;
        if s.m == 0 || s.n == 0 || s.k == 0 {
            bail!(
                "m, n and k must be at least 1 (got m={}, n={}, k={})",
                s.m,
                s.n,
                s.k
            );
        }
        for (name, rows, cols, ld) in self.stored() {
            if ld < rows {
                let stored = match (name, self.transposes) {
                    (
                        'A',
                        Transposes {
                            transa: Transpose::Yes,
                            ..
                        },
                    ) => ", stored k×m since op(A) = Aᵀ",
                    (
                        'B',
                        Transposes {
                            transb: Transpose::Yes,
                            ..
                        },
                    ) => ", stored n×k since op(B) = Bᵀ",
                    _ => "",
                };
                let ld_name = format!("ld{}", name.to_ascii_lowercase());
                bail!("{ld_name} = {ld} is smaller than the number of rows ({rows}) of {name}{stored}; column-major storage needs {ld_name} >= rows");
            }
            if ld as u64 * cols as u64 >= 1 << 32 {
                bail!("{name} has {} elements (ld × columns); the kernels index with 32 bits, so it must stay under 2^32", ld as u64 * cols as u64);
            }
        }
        let b = &self.batch;
        if b.count == 0 {
            bail!("a batch needs at least one member (got --batch 0)");
        }
        if self.groups == GroupLayout::Contiguous {
            if b.stride_b != 0 || b.stride_c != 0 {
                bail!("a contiguous grouped GEMM has one B and one C, whose columns the groups share: their batch strides must be 0 (got {} and {})", b.stride_b, b.stride_c);
            }
            if !s.n.is_multiple_of(GROUP_COLUMNS) {
                bail!("a contiguous grouped GEMM's n ({}) must be a multiple of {GROUP_COLUMNS}: each group's columns are whole runs of {GROUP_COLUMNS}, as DeepGEMM aligns them", s.n);
            }
        }
        // A and B may overlap from member to member, as cublasGemmStridedBatchedEx lets them:
        // a member only reads them, and a stride of 0 is one matrix every member multiplies (a
        // shared weight, a shared key). C may not: two members would write the same elements.
        // (A contiguous grouped GEMM's one C is the groups' columns side by side: no stride.)
        if b.is_batched() && self.groups != GroupLayout::Contiguous {
            let (_, _, cols, ld) = self.stored()[2];
            let matrix = ld as u64 * cols as u64;
            if b.stride_c < matrix {
                bail!("the batch stride of C is {} elements, less than one of its matrices (ldc × n = {matrix}): two members would write the same elements of C (A's and B's members may overlap, C's may not)", b.stride_c);
            }
        }
        Ok(())
    }

    /// The same problem with every leading dimension padded to `align_bytes` (a pitched
    /// layout, see [`pitched_ld`]); an error when a padded matrix outgrows 32-bit indexing.
    pub fn pitched(self, align_bytes: u32) -> Result<Problem> {
        let s = self.shape;
        let bytes = self.dtype.bytes();
        let ld = |rows| pitched_ld(rows, bytes, align_bytes);
        let mut p = Problem {
            shape: Shape {
                lda: ld(self.stored_a().0)?,
                ldb: ld(self.stored_b().0)?,
                ldc: ld(s.m)?,
                ..s
            },
            ..self
        };
        if self.batch.is_batched() {
            // The members follow one another in the pitched layout.
            p.batch = p.packed_strides(self.batch.count);
        }
        p.validate()?;
        Ok(p)
    }

    /// Bytes of device memory the three matrices need (every member of a batch).
    pub fn device_bytes(&self) -> u64 {
        let elements: u64 = self.buffer_elements().iter().sum();
        elements * self.dtype.bytes() as u64
    }
}

/// The leading dimension, in elements, of a column of `rows` elements of `element_bytes`
/// each, padded so that every column starts at a multiple of `align_bytes`: the layout
/// `cudaMallocPitch` allocates (002 pads 1000-float rows so that each starts aligned, since
/// the memory controller reads most efficiently from aligned addresses). `align_bytes` must be
/// a positive multiple of `element_bytes`; `--pitch` checks it is a multiple of 8.
pub fn pitched_ld(rows: u32, element_bytes: u32, align_bytes: u32) -> Result<u32> {
    assert!(
        align_bytes > 0 && align_bytes.is_multiple_of(element_bytes),
        "the pitch ({align_bytes} B) must be a positive multiple of the element size"
    );
    let column_bytes = rows as u64 * element_bytes as u64;
    let pitch = column_bytes.div_ceil(align_bytes as u64) * align_bytes as u64;
    let ld = pitch / element_bytes as u64;
    u32::try_from(ld)
        .map_err(|_| anyhow::anyhow!("a pitched column of {rows} rows needs ld = {ld} >= 2^32"))
}

/// Members of a batch whose inputs are drawn; the others repeat them ([`Inputs::generate`]).
pub const DISTINCT_MEMBERS: u32 = 4;

/// A column-major matrix with a leading dimension; rows past `rows` are padding. For a batch,
/// `data` holds every member at its stride ([`Problem::buffer_elements`]), and `rows`, `cols`,
/// `ld` describe each.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix<T> {
    /// Rows of the matrix proper; rows `rows..ld` of each column are padding.
    pub rows: u32,
    /// Columns.
    pub cols: u32,
    /// Elements from the start of one column to the next (at least `rows`).
    pub ld: u32,
    /// `ld × cols` elements, column after column, padding included.
    pub data: Vec<T>,
}

impl<T: Copy> Matrix<T> {
    /// Element (`row`, `col`): `data[row + col·ld]`.
    pub fn at(&self, row: u32, col: u32) -> T {
        self.data[(row + col * self.ld) as usize]
    }

    /// A `rows × cols` matrix with element (row, col) `f(row, col)` and `padding` in the rows past
    /// `rows`. `f` is called column by column, so a random generator draws in storage order.
    pub fn from_fn(
        rows: u32,
        cols: u32,
        ld: u32,
        padding: T,
        mut f: impl FnMut(u32, u32) -> T,
    ) -> Self {
        let mut data = vec![padding; ld as usize * cols as usize];
        for col in 0..cols {
            for row in 0..rows {
                data[(row + col * ld) as usize] = f(row, col);
            }
        }
        Self {
            rows,
            cols,
            ld,
            data,
        }
    }
}

/// A kernel body as the emulator calls it, over its argument struct `A` ([`Scalar::Args`]:
/// `GemmArgs<f32>`, `GemmArgs<f64>`, or for the 16-bit types `HalfGemmArgs<Bf16>` and
/// `HalfGemmArgs<F16>`, whose bodies all read A and B through tensor maps).
#[derive(Clone, Copy)]
pub enum EmulatedBody<A> {
    /// Takes the argument struct alone.
    Plain(unsafe fn(A)),
    /// Also takes the address of A's and B's tensor maps.
    TensorMaps(unsafe fn(A, *const TensorMap)),
}

/// The element types a run can use: f32, f64, and the 16-bit `half::bf16` and `half::f16`.
///
/// Everything the pipeline does with an element goes through this trait, so that one generic
/// pipeline (inputs, launch, check, report) serves all four: make the inputs (`from_f64`,
/// which rounds to the type, so that the f64 reference sees the values the kernel sees), read
/// C back for the check (`to_f64`), pass alpha and beta as the kernels take them (`Factor`),
/// upload (`Bits`) and build the emulated kernel's arguments (`Args`). Arithmetic is not part
/// of it: the 16-bit types have none on the host (their kernels accumulate in f32), and the CPU
/// variants, which do compute on the host, ask for it on top ([`crate::cpu::CpuScalar`]).
pub trait Scalar: Copy + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// The element type a [`Problem`] names for this type.
    const DTYPE: Dtype;
    /// alpha and beta as the kernels and cuBLAS take them: the element type for f32 and f64;
    /// f32 for the 16-bit types, which accumulate in f32 and round C once at the end
    /// (`cublasGemmEx` with `CUBLAS_COMPUTE_32F` takes f32 scalars too).
    type Factor: Copy + std::fmt::Debug + DeviceCopy + Send + Sync + 'static;
    /// The element as a device buffer holds it: the same bits, in a type `cust` can copy
    /// (`half` 2.x's types do not implement `DeviceCopy`, so bf16 and f16 travel as `u16`).
    type Bits: DeviceCopy + PartialEq + std::fmt::Debug;
    /// The argument struct of this type's kernels, as the emulator passes it.
    type Args: Copy;

    /// `v` rounded to nearest (even) in this type.
    fn from_f64(v: f64) -> Self;
    /// The exact f64 value (every value of the four types is an f64).
    fn to_f64(self) -> f64;
    /// alpha or beta as the kernels take it.
    fn factor(v: f64) -> Self::Factor;
    /// The elements as the device buffer's type (the same bits).
    fn as_bits(data: &[Self]) -> &[Self::Bits];
    /// The elements as the device buffer's type, writable: what a download fills.
    fn as_bits_mut(data: &mut [Self]) -> &mut [Self::Bits];
    /// This type's kernel body in an entry-point table row, if the row is of this type.
    fn kernel_body(body: KernelBody) -> Option<EmulatedBody<Self::Args>>;
    /// The kernel's arguments over host buffers (the emulator checks every access).
    #[allow(clippy::too_many_arguments)]
    fn kernel_args(
        m: u32,
        n: u32,
        k: u32,
        alpha: Self::Factor,
        a: *const Self,
        lda: u32,
        b: *const Self,
        ldb: u32,
        beta: Self::Factor,
        c: *mut Self,
        ldc: u32,
        fused: (Epilogue, *const Self, *mut u32),
        batch: (Members, Groups),
    ) -> Self::Args;
}

/// f32 and f64: elements, scalars and device values are the type itself, and the kernels take
/// `GemmArgs` of it.
macro_rules! full_precision_scalar {
    ($t:ty, $dtype:expr, $plain:ident, [$($maps:ident)?], [$($other:ident),*]) => {
        impl Scalar for $t {
            const DTYPE: Dtype = $dtype;
            type Factor = $t;
            type Bits = $t;
            type Args = GemmArgs<$t>;

            fn from_f64(v: f64) -> Self {
                v as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn factor(v: f64) -> $t {
                v as $t
            }
            fn as_bits(data: &[$t]) -> &[$t] {
                data
            }
            fn as_bits_mut(data: &mut [$t]) -> &mut [$t] {
                data
            }
            fn kernel_body(body: KernelBody) -> Option<EmulatedBody<GemmArgs<$t>>> {
                match body {
                    KernelBody::$plain(f) => Some(EmulatedBody::Plain(f)),
                    $(KernelBody::$maps(f) => Some(EmulatedBody::TensorMaps(f)),)?
                    $(KernelBody::$other(_) => None,)*
                }
            }
            fn kernel_args(
                m: u32,
                n: u32,
                k: u32,
                alpha: $t,
                a: *const $t,
                lda: u32,
                b: *const $t,
                ldb: u32,
                beta: $t,
                c: *mut $t,
                ldc: u32,
                // The f32 and f64 kernels have no fused epilogue and no groups (`run::plan`
                // refuses both); the Hopper TF32 kernels walk a batch's members themselves.
                _fused: (Epilogue, *const $t, *mut u32),
                (batch, _groups): (Members, Groups),
            ) -> GemmArgs<$t> {
                GemmArgs {
                    m,
                    n,
                    k,
                    alpha,
                    a: Global::new(a),
                    lda,
                    b: Global::new(b),
                    ldb,
                    beta,
                    c: GlobalMut::new(c),
                    ldc,
                    stride_c: batch.stride_c,
                    members: batch.count,
                }
            }
        }
    };
}
full_precision_scalar!(
    f32,
    Dtype::F32,
    F32,
    [F32TensorMaps],
    [
        F64,
        Bf16TensorMaps,
        F16TensorMaps,
        Bf16Reduce,
        F16Reduce,
        E4m3TensorMaps,
        Words
    ]
);
full_precision_scalar!(
    f64,
    Dtype::F64,
    F64,
    [],
    [
        F32,
        F32TensorMaps,
        Bf16TensorMaps,
        F16TensorMaps,
        Bf16Reduce,
        F16Reduce,
        E4m3TensorMaps,
        Words
    ]
);

/// bf16 and f16: `half`'s types on the host, the kernels' [`device::half`] types (the same 16
/// bits, both `repr(transparent)` over `u16`) in their `HalfGemmArgs`, `u16` on the device,
/// alpha and beta in f32.
macro_rules! half_scalar {
    ($t:ty, $dtype:expr, $device:ty, $body:ident, [$($other:ident),*]) => {
        impl Scalar for $t {
            const DTYPE: Dtype = $dtype;
            type Factor = f32;
            type Bits = u16;
            type Args = HalfGemmArgs<$device>;

            fn from_f64(v: f64) -> Self {
                <$t>::from_f64(v)
            }
            fn to_f64(self) -> f64 {
                <$t>::to_f64(self)
            }
            fn factor(v: f64) -> f32 {
                v as f32
            }
            fn as_bits(data: &[$t]) -> &[u16] {
                data.reinterpret_cast()
            }
            fn as_bits_mut(data: &mut [$t]) -> &mut [u16] {
                data.reinterpret_cast_mut()
            }
            fn kernel_body(body: KernelBody) -> Option<EmulatedBody<HalfGemmArgs<$device>>> {
                match body {
                    KernelBody::$body(f) => Some(EmulatedBody::TensorMaps(f)),
                    $(KernelBody::$other(_) => None,)*
                }
            }
            fn kernel_args(
                m: u32,
                n: u32,
                k: u32,
                alpha: f32,
                a: *const $t,
                lda: u32,
                b: *const $t,
                ldb: u32,
                beta: f32,
                c: *mut $t,
                ldc: u32,
                (epilogue, bias, amax): (Epilogue, *const $t, *mut u32),
                (batch, groups): (Members, Groups),
            ) -> HalfGemmArgs<$device> {
                // The same bits under the kernels' name for them: a cast, no conversion.
                HalfGemmArgs {
                    m,
                    n,
                    k,
                    alpha,
                    a: GlobalHalf::new(a.cast::<$device>()),
                    lda,
                    b: GlobalHalf::new(b.cast::<$device>()),
                    ldb,
                    beta,
                    c: GlobalHalfMut::new(c.cast::<$device>()),
                    ldc,
                    fused: Fused {
                        epilogue,
                        bias: GlobalHalf::new(bias.cast::<$device>()),
                        amax,
                    },
                    batch,
                    groups,
                }
            }
        }
    };
}
half_scalar!(
    half::bf16,
    Dtype::Bf16,
    Bf16,
    Bf16TensorMaps,
    // The split-k reduction has arguments of its own (`emulator::emulate_half_reduce`).
    [
        F32,
        F64,
        F32TensorMaps,
        F16TensorMaps,
        Bf16Reduce,
        F16Reduce,
        E4m3TensorMaps,
        Words
    ]
);
half_scalar!(
    half::f16,
    Dtype::F16,
    F16,
    F16TensorMaps,
    [
        F32,
        F64,
        F32TensorMaps,
        Bf16TensorMaps,
        Bf16Reduce,
        F16Reduce,
        E4m3TensorMaps,
        Words
    ]
);

// The casts of `kernel_args` and `as_bits` rely on these: the host's and the kernels' 16-bit
// types are the same two bytes.
const _: () = {
    assert!(size_of::<half::bf16>() == 2 && size_of::<Bf16>() == 2);
    assert!(size_of::<half::f16>() == 2 && size_of::<F16>() == 2);
    assert!(align_of::<half::bf16>() == align_of::<Bf16>());
    assert!(align_of::<half::f16>() == align_of::<F16>());
};

/// Parses a fused epilogue as `--epilogue` takes it: a comma-separated list of at most one
/// bias (`bias`, one value per row of C; `bias-col`, one per column), at most one activation
/// (`relu`, `gelu`, `silu`) and `amax` (D's amax and its e4m3 scale), e.g. `bias,gelu`;
/// `none` for none.
pub fn parse_epilogue(text: &str) -> Result<Epilogue> {
    let (mut bias, mut activation, mut amax) = (None, None, false);
    for item in text.split(',').map(str::trim) {
        let (slot, value) = match item {
            "none" => continue,
            "amax" => {
                amax = true;
                continue;
            }
            "bias" => (&mut bias, Some(Bias::PerRow)),
            "bias-col" => (&mut bias, Some(Bias::PerColumn)),
            _ => {
                let a = match item {
                    "relu" => Activation::Relu,
                    "gelu" => Activation::Gelu,
                    "silu" => Activation::Silu,
                    _ => bail!("unknown epilogue item `{item}`: the items are bias, bias-col, relu, gelu, silu, amax (e.g. `bias,gelu`)"),
                };
                if activation.replace(a).is_some() {
                    bail!("`{text}` names two activations; an epilogue applies one");
                }
                continue;
            }
        };
        if std::mem::replace(slot, value).is_some() {
            bail!("`{text}` names two biases; an epilogue adds one");
        }
    }
    let epilogue = Epilogue::new(
        bias.unwrap_or(Bias::None),
        activation.unwrap_or(Activation::Identity),
    );
    Ok(if amax { epilogue.with_amax() } else { epilogue })
}

/// An epilogue as [`parse_epilogue`] reads it: `bias,gelu`, `none`.
pub fn epilogue_name(e: Epilogue) -> String {
    let bias = match e.bias() {
        Bias::None => None,
        Bias::PerRow => Some("bias"),
        Bias::PerColumn => Some("bias-col"),
    };
    let activation = match e.activation() {
        Activation::Identity => None,
        Activation::Relu => Some("relu"),
        Activation::Gelu => Some("gelu"),
        Activation::Silu => Some("silu"),
    };
    let amax = e.amax().then_some("amax");
    let items: Vec<&str> = [bias, activation, amax].into_iter().flatten().collect();
    if items.is_empty() {
        "none".into()
    } else {
        items.join(",")
    }
}

/// The value `000_…txt` gives A(i, j).
pub fn seed_a(i: u32, j: u32) -> f64 {
    let (i, j) = (i as f64, j as f64);
    (i - 0.1 * j + 1.0) / (i + j + 1.0)
}

/// The value `000_…txt` gives B(i, j).
pub fn seed_b(i: u32, j: u32) -> f64 {
    let (i, j) = (i as f64, j as f64);
    (j - 0.2 * i + 1.0) * (i + j + 1.0) / (i * i + j * j + 1.0)
}

/// The three inputs of a run. Padding rows of every matrix hold NaN, so a kernel that reads
/// them by mistake is caught by the check.
///
/// Every value is drawn (or computed by the seed formulas) in f64 and rounded once to `T`: the
/// matrices hold exactly what the kernel reads, and the f64 reference is computed from these
/// rounded values, so that the check measures the kernel's arithmetic, not the rounding of its
/// inputs (which a bf16 input, 2⁻⁸ relative, would otherwise dominate).
pub struct Inputs<T> {
    /// A as stored ([`Problem::stored_a`]: m×k, or k×m when transposed), leading dimension `lda`.
    pub a: Matrix<T>,
    /// B as stored ([`Problem::stored_b`]: k×n, or n×k when transposed), leading dimension `ldb`.
    pub b: Matrix<T>,
    /// C before the GEMM (C0): m×n, leading dimension `ldc`; read only when β ≠ 0.
    pub c: Matrix<T>,
    /// The fused epilogue's bias ([`Problem::bias_len`] values; empty without one).
    pub bias: Vec<T>,
    /// A grouped problem's table ([`Problem::group_table`]; empty for one not grouped).
    pub groups: Vec<u32>,
}

impl<T: Scalar> Inputs<T> {
    /// A, B and C0 for `p`, as stored, padding NaN. [`Init::Random`] draws A, then B, then C0
    /// in storage order, then the bias, from one generator seeded with `p.seed`, so that the
    /// seed reproduces the inputs (and a problem with a bias multiplies the same matrices as
    /// one without). [`Init::Seed`]'s formulas give op(A) and op(B), so that a transposed
    /// problem multiplies the same matrices as the untransposed one.
    ///
    /// A batch's members are drawn as [`Problem::member`]s, the first [`DISTINCT_MEMBERS`] of
    /// them, and repeated in that cycle over the rest (member `i` holds member
    /// `i mod DISTINCT_MEMBERS`'s values): a thousand members of 2048 × 2048 would take minutes to
    /// draw and as long to check, and a kernel that mixes up members, reads a member's
    /// neighbour or drops one still shows in the distinct ones and the last
    /// ([`crate::verify::checked_members`]). Every matrix holds all members, at their strides.
    ///
    /// A grouped problem's table is [`Problem::group_table`]'s.
    pub fn generate(p: &Problem) -> Self {
        let operands = if p.batch.is_batched() {
            Self::generate_batch(p)
        } else {
            Self::generate_one(p)
        };
        Inputs {
            groups: p.group_table(),
            ..operands
        }
    }

    /// [`Inputs::generate`] for one problem.
    fn generate_one(p: &Problem) -> Self {
        let s = &p.shape;
        let nan = T::from_f64(f64::NAN);
        let ((ar, ac), (br, bc)) = (p.stored_a(), p.stored_b());
        match p.init {
            Init::Random => {
                let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
                let mut uniform = move |_, _| T::from_f64(rng.random_range(-1.0..1.0));
                Self {
                    a: Matrix::from_fn(ar, ac, s.lda, nan, &mut uniform),
                    b: Matrix::from_fn(br, bc, s.ldb, nan, &mut uniform),
                    c: Matrix::from_fn(s.m, s.n, s.ldc, nan, &mut uniform),
                    bias: (0..p.bias_len()).map(|i| uniform(i as u32, 0)).collect(),
                    groups: Vec::new(),
                }
            }
            Init::Seed => {
                // Stored (row, col) of X is op(X)'s (col, row) when op(X) = Xᵀ.
                let op = |t, f: fn(u32, u32) -> f64| {
                    move |i, j| {
                        T::from_f64(match t {
                            Transpose::No => f(i, j),
                            Transpose::Yes => f(j, i),
                        })
                    }
                };
                let t = p.transposes;
                Self {
                    a: Matrix::from_fn(ar, ac, s.lda, nan, op(t.transa, seed_a)),
                    b: Matrix::from_fn(br, bc, s.ldb, nan, op(t.transb, seed_b)),
                    c: Matrix::from_fn(s.m, s.n, s.ldc, nan, |_, _| T::from_f64(0.0)),
                    // A bias that steps through the activations' bend: -1, -0.75, … 1, -1, …
                    bias: (0..p.bias_len())
                        .map(|i| T::from_f64((i % 9) as f64 / 4.0 - 1.0))
                        .collect(),
                    groups: Vec::new(),
                }
            }
        }
    }

    /// [`Inputs::generate`] for a batch: its distinct members, placed at every member's offset.
    fn generate_batch(p: &Problem) -> Self {
        let distinct: Vec<Inputs<T>> = (0..p.batch.count.min(DISTINCT_MEMBERS))
            .map(|d| {
                let member = p.member(d);
                if d > 0 && p.groups == GroupLayout::Contiguous {
                    // B and C are member 0's (their stride is 0): draw only this member's A,
                    // which comes first from the generator whatever n is.
                    let narrow = Problem {
                        shape: Shape {
                            n: 1,
                            ..member.shape
                        },
                        ..member
                    };
                    return Self::generate(&narrow);
                }
                Self::generate(&member)
            })
            .collect();
        let b = &p.batch;
        let [a_len, b_len, c_len] = p.buffer_elements();
        let nan = T::from_f64(f64::NAN);
        let stack = |len: u64, stride: u64, member: fn(&Inputs<T>) -> &Matrix<T>| {
            let first = member(&distinct[0]);
            let mut data = vec![nan; len as usize];
            // A matrix every member shares (stride 0): member 0's.
            let count = if stride == 0 { 1 } else { b.count as u64 };
            for i in 0..count {
                let from = &member(&distinct[(i % distinct.len() as u64) as usize]).data;
                let at = (i * stride) as usize;
                data[at..at + from.len()].copy_from_slice(from);
            }
            Matrix {
                rows: first.rows,
                cols: first.cols,
                ld: first.ld,
                data,
            }
        };
        Self {
            a: stack(a_len, b.stride_a, |i| &i.a),
            b: stack(b_len, b.stride_b, |i| &i.b),
            c: stack(c_len, b.stride_c, |i| &i.c),
            // One bias for every member.
            bias: distinct[0].bias.clone(),
            groups: Vec::new(),
        }
    }

    /// C as the kernel receives it in a checked run: when beta is 0 every element is NaN
    /// (BLAS semantics say C is not read; any element the kernel fails to write stays NaN).
    pub fn c_for_checked_run(&self, beta: f64) -> Vec<T> {
        if beta == 0.0 {
            vec![T::from_f64(f64::NAN); self.c.data.len()]
        } else {
            self.c.data.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A contiguous table's runs: a group's blocks next to each other make one run, a group
    /// apart from itself two, padding none; the masked counts are clipped at the capacity; the
    /// flops count the groups' columns only.
    #[test]
    fn group_columns_follow_the_table() {
        let contiguous = Problem {
            batch: Batch {
                count: 3,
                stride_a: 64 * 64,
                stride_b: 0,
                stride_c: 0,
            },
            groups: GroupLayout::Contiguous,
            ..problem(64, 5 * 128, 64)
        };
        contiguous.validate().unwrap();
        let runs = contiguous.group_columns(&[2, 0, 0, 7, 2]);
        let spans: Vec<_> = runs.iter().map(|r| (r.group, r.first, r.columns)).collect();
        assert_eq!(spans, [(2, 0, 128), (0, 128, 256), (2, 512, 128)]);
        assert!(runs.iter().all(|r| r.member == 0));
        // The default table: equal runs.
        assert_eq!(contiguous.group_table(), [0, 1, 2, 2, 2]);
        let masked = Problem {
            groups: GroupLayout::Masked,
            ..problem(64, 200, 64)
        };
        let masked = Problem {
            batch: masked.packed_strides(3),
            ..masked
        };
        let runs = masked.group_columns(&[77, 500, 0]);
        let spans: Vec<_> = runs
            .iter()
            .map(|r| (r.member, r.first, r.columns))
            .collect();
        assert_eq!(spans, [(0, 0, 77), (1, 0, 200), (2, 0, 0)]);
        let counts = masked.group_table();
        assert!(
            counts.iter().all(|&c| (100..=200).contains(&c)),
            "{counts:?}"
        );
        let columns: u32 = counts.iter().sum();
        assert_eq!(masked.flops(), 2.0 * 64.0 * columns as f64 * 64.0);
        // A contiguous problem's B and C are shared: strides other than 0 are refused.
        let strided = Problem {
            batch: Batch {
                stride_c: 64 * 640,
                ..contiguous.batch
            },
            ..contiguous
        };
        assert!(strided
            .validate()
            .unwrap_err()
            .to_string()
            .contains("must be 0"));
    }

    fn problem(m: u32, n: u32, k: u32) -> Problem {
        Problem::packed(m, n, k, Dtype::F32)
    }

    #[test]
    fn epilogues_parse_and_print_back() {
        for text in [
            "bias,gelu",
            "bias-col,silu",
            "relu",
            "bias",
            "none",
            "gelu",
            "bias,gelu,amax",
            "amax",
        ] {
            assert_eq!(epilogue_name(parse_epilogue(text).unwrap()), text);
        }
        assert_eq!(
            parse_epilogue("gelu, bias").unwrap(),
            Epilogue::new(Bias::PerRow, Activation::Gelu)
        );
        for bad in ["gelu,relu", "bias,bias-col", "tanh"] {
            assert!(parse_epilogue(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn seed_values_match_hand_computation() {
        // a(0,0) = 1/1; a(2,3) = (2 - 0.3 + 1)/6 = 0.45; a(0,10) = (1 - 1)/11 = 0
        assert_eq!(seed_a(0, 0), 1.0);
        assert!((seed_a(2, 3) - 0.45).abs() < 1e-15);
        assert_eq!(seed_a(0, 10), 0.0);
        // b(0,0) = 1·1/1; b(1,2) = (2 - 0.2 + 1)(4)/(1 + 4 + 1) = 2.8·4/6; b(5,0) = (0 - 1 + 1)… = 0
        assert_eq!(seed_b(0, 0), 1.0);
        assert!((seed_b(1, 2) - 2.8 * 4.0 / 6.0).abs() < 1e-15);
        assert_eq!(seed_b(5, 0), 0.0);
    }

    #[test]
    fn seed_inputs_use_the_formulas_and_column_major_layout() {
        let mut p = problem(3, 2, 4);
        p.init = Init::Seed;
        p.shape.lda = 5;
        let inputs = Inputs::<f64>::generate(&p);
        assert_eq!(inputs.a.at(2, 3), seed_a(2, 3));
        assert_eq!(inputs.a.data[2 + 3 * 5], seed_a(2, 3));
        assert!(inputs.a.data[3].is_nan(), "padding rows are NaN");
        assert_eq!(inputs.b.at(1, 1), seed_b(1, 1));
        assert!(inputs.c.data.iter().all(|&x| x == 0.0));
    }

    #[test]
    fn random_inputs_are_seeded() {
        let p = problem(8, 8, 8);
        let x = Inputs::<f32>::generate(&p);
        let y = Inputs::<f32>::generate(&p);
        assert_eq!(x.a, y.a);
        let z = Inputs::<f32>::generate(&Problem { seed: 2, ..p });
        assert_ne!(x.a, z.a);
        assert!(x.a.data.iter().all(|v| (-1.0..1.0).contains(v)));
    }

    #[test]
    fn sixteen_bit_inputs_are_the_f64_values_rounded_once() {
        fn same<H: Scalar>(wide: &Matrix<f64>, narrow: &Matrix<H>) {
            assert_eq!(wide.data.len(), narrow.data.len());
            for (w, h) in wide.data.iter().zip(&narrow.data) {
                if w.is_nan() {
                    assert!(h.to_f64().is_nan(), "padding stays NaN");
                } else {
                    assert_eq!(*h, H::from_f64(*w), "{w}");
                }
            }
        }
        for init in [Init::Random, Init::Seed] {
            let mut p = problem(9, 7, 5);
            p.init = init;
            p.shape.lda = 12;
            p.shape.ldc = 10;
            let wide = Inputs::<f64>::generate(&p);
            let bf16 = Inputs::<half::bf16>::generate(&Problem {
                dtype: Dtype::Bf16,
                ..p
            });
            let f16 = Inputs::<half::f16>::generate(&Problem {
                dtype: Dtype::F16,
                ..p
            });
            for (w, b, f) in [
                (&wide.a, &bf16.a, &f16.a),
                (&wide.b, &bf16.b, &f16.b),
                (&wide.c, &bf16.c, &f16.c),
            ] {
                same(w, b);
                same(w, f);
            }
        }
        // Rounded, not truncated, and to nearest even: 1 + 2⁻⁸ is halfway between two bf16.
        assert_eq!(half::bf16::from_f64(1.0 + 2f64.powi(-8)), half::bf16::ONE);
        assert_eq!(<half::bf16 as Scalar>::from_f64(1.0 - 1e-4).to_f64(), 1.0);
    }

    #[test]
    fn sixteen_bit_elements_travel_as_their_bits() {
        let x = [half::bf16::from_f32(1.5), half::bf16::from_f32(-2.0)];
        assert_eq!(
            <half::bf16 as Scalar>::as_bits(&x),
            &[x[0].to_bits(), x[1].to_bits()]
        );
        assert_eq!(<half::f16 as Scalar>::factor(0.5), 0.5f32);
        assert_eq!(<f64 as Scalar>::factor(0.1), 0.1f64);
    }

    #[test]
    fn flops_are_2mnk() {
        assert_eq!(problem(4096, 4096, 4096).flops(), 2.0 * 4096f64.powi(3));
        assert_eq!(
            problem(1000, 1023, 999).flops(),
            2.0 * 1000.0 * 1023.0 * 999.0
        );
    }

    #[test]
    fn validation_names_the_constraint() {
        assert!(problem(1, 1, 1).validate().is_ok());
        let e = problem(0, 5, 5).validate().unwrap_err().to_string();
        assert!(e.contains("at least 1"), "{e}");
        let mut p = problem(10, 10, 10);
        p.shape.lda = 9;
        let e = p.validate().unwrap_err().to_string();
        assert!(e.contains("lda = 9") && e.contains(">= rows"), "{e}");
        let e = problem(70000, 70000, 4).validate().unwrap_err().to_string();
        assert!(e.contains("2^32"), "{e}");
    }

    #[test]
    fn a_transposed_operand_is_stored_with_rows_and_columns_swapped() {
        let mut p = problem(200, 6, 4);
        p.transposes = Transposes::new(Transpose::Yes, Transpose::No);
        // A is stored k×m = 4×200: lda = 4 is enough, 3 too small.
        assert_eq!((p.stored_a(), p.stored_b()), ((4, 200), (4, 6)));
        p.shape.lda = 4;
        assert!(p.validate().is_ok());
        p.shape.lda = 3;
        let e = p.validate().unwrap_err().to_string();
        assert_eq!(
            e,
            "lda = 3 is smaller than the number of rows (4) of A, stored k×m since op(A) = Aᵀ; column-major storage needs lda >= rows"
        );
        // B stored n×k = 6×4: ldb = k = 4 is too small.
        p.transposes = Transposes::new(Transpose::No, Transpose::Yes);
        p.shape.lda = 200;
        assert_eq!(p.stored_b(), (6, 4));
        let e = p.validate().unwrap_err().to_string();
        assert!(
            e.starts_with("ldb = 4 is smaller than the number of rows (6) of B, stored n×k"),
            "{e}"
        );
        p.shape.ldb = 6;
        assert_eq!(p.device_bytes(), (200 * 4 + 6 * 4 + 200 * 6) * 4);
        // Pitched, each leading dimension follows its stored rows: 200 f32 pad to 256, 4 or 6
        // to 128.
        let pitched = p.pitched(512).unwrap().shape;
        assert_eq!((pitched.lda, pitched.ldb, pitched.ldc), (256, 128, 256));
        p.transposes = Transposes::new(Transpose::Yes, Transpose::No);
        assert_eq!(p.pitched(512).unwrap().shape.lda, 128);
    }

    #[test]
    fn seed_inputs_give_the_same_op_a_and_op_b_whatever_the_storage() {
        let mut p = problem(3, 2, 4);
        p.init = Init::Seed;
        let plain = Inputs::<f64>::generate(&p);
        for t in Transposes::ALL {
            p.transposes = t;
            p.shape.lda = p.stored_a().0;
            p.shape.ldb = p.stored_b().0;
            let x = Inputs::<f64>::generate(&p);
            assert_eq!((x.a.rows, x.a.cols), p.stored_a());
            assert_eq!((x.b.rows, x.b.cols), p.stored_b());
            for (i, q) in [(0, 0), (2, 3), (1, 2)] {
                let a = match t.transa {
                    Transpose::No => x.a.at(i, q),
                    Transpose::Yes => x.a.at(q, i),
                };
                assert_eq!(a, plain.a.at(i, q), "{t:?}");
            }
            for (q, j) in [(0, 0), (3, 1), (2, 0)] {
                let b = match t.transb {
                    Transpose::No => x.b.at(q, j),
                    Transpose::Yes => x.b.at(j, q),
                };
                assert_eq!(b, plain.b.at(q, j), "{t:?}");
            }
        }
    }

    #[test]
    fn transposes_are_named_as_blas_spells_them() {
        let tn = Transposes::new(Transpose::Yes, Transpose::No);
        assert_eq!((tn.name(), tn.letters()), ("TN".into(), "T,N".into()));
        assert_eq!(tn.formula(), "op(A)=Aᵀ, op(B)=B");
        assert_eq!(Transposes::NN.formula(), "op(A)=A, op(B)=B");
        let names: Vec<String> = Transposes::ALL.iter().map(|t| t.name()).collect();
        assert_eq!(names, ["NN", "TN", "NT", "TT"]);
    }

    #[test]
    fn pitched_leading_dimensions_round_up_to_the_alignment() {
        // 1000 f32 = 4000 B → 4096 B = 1024 elements; 1000 f64 = 8000 B → 8192 B = 1024.
        assert_eq!(pitched_ld(1000, 4, 512).unwrap(), 1024);
        assert_eq!(pitched_ld(1000, 8, 512).unwrap(), 1024);
        // Already aligned: unchanged (128 f32 = 512 B, 64 f64 = 512 B).
        assert_eq!(pitched_ld(128, 4, 512).unwrap(), 128);
        assert_eq!(pitched_ld(64, 8, 512).unwrap(), 64);
        assert_eq!(pitched_ld(4096, 4, 512).unwrap(), 4096);
        // One element: a whole pitch.
        assert_eq!(pitched_ld(1, 4, 512).unwrap(), 128);
        assert_eq!(pitched_ld(1, 8, 512).unwrap(), 64);
        // A smaller alignment: 33 f32 = 132 B → 144 B (16-byte alignment, 002's example).
        assert_eq!(pitched_ld(33, 4, 16).unwrap(), 36);
        assert_eq!(pitched_ld(33, 8, 16).unwrap(), 34);
        assert_eq!(pitched_ld(32, 8, 16).unwrap(), 32);
        assert!(pitched_ld(u32::MAX, 8, 512).is_err());
    }

    #[test]
    fn a_pitched_problem_pads_every_leading_dimension_by_its_own_rows() {
        let p = problem(1000, 7, 33);
        let f32_pitched = p.pitched(512).unwrap().shape;
        assert_eq!(
            (f32_pitched.lda, f32_pitched.ldb, f32_pitched.ldc),
            (1024, 128, 1024)
        );
        let f64_pitched = Problem {
            dtype: Dtype::F64,
            ..p
        }
        .pitched(512)
        .unwrap()
        .shape;
        assert_eq!(
            (f64_pitched.lda, f64_pitched.ldb, f64_pitched.ldc),
            (1024, 64, 1024)
        );
        assert_eq!((f64_pitched.m, f64_pitched.n, f64_pitched.k), (1000, 7, 33));
        // The random values do not depend on the layout, only the padding does.
        let packed = Inputs::<f32>::generate(&p);
        let pitched = Inputs::<f32>::generate(&p.pitched(512).unwrap());
        assert_eq!(packed.a.at(999, 32), pitched.a.at(999, 32));
        assert_eq!(packed.b.at(32, 6), pitched.b.at(32, 6));
        assert!(pitched.a.data[1000].is_nan(), "padding rows are NaN");
    }

    #[test]
    fn checked_runs_poison_c_only_when_beta_is_zero() {
        let p = problem(4, 4, 4);
        let inputs = Inputs::<f32>::generate(&p);
        assert!(inputs.c_for_checked_run(0.0).iter().all(|x| x.is_nan()));
        assert_eq!(inputs.c_for_checked_run(0.5), inputs.c.data);
    }
}
