//! The problem every variant solves, and what kernels share.
//!
//! `C = alpha * A * B + beta * C` with `A` m×k, `B` k×n, `C` m×n, all **column-major** with
//! leading dimensions (cuBLAS's convention, as in `001_…txt`): element (row, col) of A is
//! `A[row + col * lda]`, `lda >= m`. Indices are 32-bit (the host rejects matrices with
//! `ld * cols >= 2^32` elements): 32-bit index arithmetic is what CUDA C++ kernels use too.

use crate::device::half::{GlobalHalf, GlobalHalfMut, Half};
use crate::device::{Global, GlobalMut, GlobalWords, Real, Shared};
pub use crate::dtype::Dtype;
use crate::fused::Fused;
pub use crate::tile_order::{rasterise, rasterise_in_groups};

/// The arguments of every GEMM kernel, in cuBLAS order.
#[derive(Clone, Copy)]
pub struct GemmArgs<T> {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub alpha: T,
    pub a: Global<T>,
    pub lda: u32,
    pub b: Global<T>,
    pub ldb: u32,
    pub beta: T,
    pub c: GlobalMut<T>,
    pub ldc: u32,
    /// Elements between the C of consecutive members of a strided batch, whose member is the
    /// block's grid layer z (0 for one problem; on the emulator, which launches each member on
    /// its own, always 0). A and B are offset by the entry point; C's offset is taken where C
    /// is read and written ([`GemmArgs::member_c`]), because a pointer computed before the
    /// mainloop stays live across it, where `c` itself is a parameter that costs no register
    /// (`best:1` in f32, at its 128-register cap, spilled 8 bytes).
    pub stride_c: u64,
    /// Members of a strided batch that the kernel walks itself: the Hopper TF32 kernels, whose
    /// persistent grid has one layer and whose walk goes over every member's tiles
    /// ([`crate::pipeline::Problem::member`] offsets C by `stride_c`). 1 in every other
    /// kernel, whose grid's layer z is its member.
    pub members: u32,
}

impl<T: Real> GemmArgs<T> {
    /// This block's member's C: `c`, `z · stride_c` elements on.
    #[inline(always)]
    pub fn member_c(&self) -> GlobalMut<T> {
        self.c
            .offset((crate::device::block_idx_z() as u64 * self.stride_c) as isize)
    }

    /// Offset of A(row, col).
    #[inline(always)]
    pub fn a_at(&self, row: u32, col: u32) -> usize {
        (row + col * self.lda) as usize
    }

    /// Offset of B(row, col).
    #[inline(always)]
    pub fn b_at(&self, row: u32, col: u32) -> usize {
        (row + col * self.ldb) as usize
    }

    /// Offset of C(row, col).
    #[inline(always)]
    pub fn c_at(&self, row: u32, col: u32) -> usize {
        (row + col * self.ldc) as usize
    }

    /// A(row, col), or zero outside A: how tile kernels stage edge tiles, so that the inner
    /// loop needs no bounds checks.
    ///
    /// # Safety
    /// A must be valid for the sizes and `lda` of `self`.
    #[inline(always)]
    pub unsafe fn a_or_zero(&self, row: u32, col: u32) -> T {
        if row < self.m && col < self.k {
            unsafe { self.a.load(self.a_at(row, col)) }
        } else {
            T::ZERO
        }
    }

    /// B(row, col), or zero outside B.
    ///
    /// # Safety
    /// B must be valid for the sizes and `ldb` of `self`.
    #[inline(always)]
    pub unsafe fn b_or_zero(&self, row: u32, col: u32) -> T {
        if row < self.k && col < self.n {
            unsafe { self.b.load(self.b_at(row, col)) }
        } else {
            T::ZERO
        }
    }

    /// A(row..row+4, col) as one 16-byte load, or zeros outside A. `row` and `m` must be
    /// multiples of 4 (the 16-byte kernels require it), so the run is all in or all out.
    ///
    /// # Safety
    /// As [`GemmArgs::a_or_zero`], and A(row, col) 16-byte aligned.
    #[inline(always)]
    pub unsafe fn a4_or_zero(&self, row: u32, col: u32) -> [T; 4] {
        if row < self.m && col < self.k {
            unsafe { self.a.load4(self.a_at(row, col)) }
        } else {
            [T::ZERO; 4]
        }
    }

    /// B(row..row+4, col) as one 16-byte load, or zeros outside B (`row`, `k` multiples of 4).
    ///
    /// # Safety
    /// As [`GemmArgs::b_or_zero`], and B(row, col) 16-byte aligned.
    #[inline(always)]
    pub unsafe fn b4_or_zero(&self, row: u32, col: u32) -> [T; 4] {
        if row < self.k && col < self.n {
            unsafe { self.b.load4(self.b_at(row, col)) }
        } else {
            [T::ZERO; 4]
        }
    }

    /// Starts the asynchronous copy of A(row..row+4, col) into `dst[at..at+4]`, zeros outside A
    /// (`row` and `m` multiples of 4, as for [`GemmArgs::a4_or_zero`]).
    ///
    /// # Safety
    /// As [`GemmArgs::a4_or_zero`].
    #[inline(always)]
    pub unsafe fn copy_a4_async(&self, dst: Shared<T>, at: u32, row: u32, col: u32) {
        let inside = row < self.m && col < self.k;
        let from = if inside { self.a_at(row, col) } else { 0 };
        unsafe { dst.copy4_async(at, self.a, from, inside) }
    }

    /// Starts the asynchronous copy of A(row, col) into `dst[at]`, zero outside A.
    ///
    /// # Safety
    /// As [`GemmArgs::a_or_zero`].
    #[inline(always)]
    pub unsafe fn copy_a_async(&self, dst: Shared<T>, at: u32, row: u32, col: u32) {
        let inside = row < self.m && col < self.k;
        let from = if inside { self.a_at(row, col) } else { 0 };
        unsafe { dst.copy_async(at, self.a, from, inside) }
    }

    /// Starts the asynchronous copy of B(row..row+4, col) into `dst[at..at+4]`, zeros outside B
    /// (`row` and `k` multiples of 4: a column of B is k-contiguous, so the run lies in one
    /// column and is all inside or all outside).
    ///
    /// # Safety
    /// As [`GemmArgs::b4_or_zero`].
    #[inline(always)]
    pub unsafe fn copy_b4_async(&self, dst: Shared<T>, at: u32, row: u32, col: u32) {
        let inside = row < self.k && col < self.n;
        let from = if inside { self.b_at(row, col) } else { 0 };
        unsafe { dst.copy4_async(at, self.b, from, inside) }
    }

    /// Starts the asynchronous copy of B(row, col) into `dst[at]`, zero outside B.
    ///
    /// # Safety
    /// As [`GemmArgs::b_or_zero`].
    #[inline(always)]
    pub unsafe fn copy_b_async(&self, dst: Shared<T>, at: u32, row: u32, col: u32) {
        let inside = row < self.k && col < self.n;
        let from = if inside { self.b_at(row, col) } else { 0 };
        unsafe { dst.copy_async(at, self.b, from, inside) }
    }

    /// Whether A and B can be staged in 16-byte pieces: m, k, lda, ldb multiples of 4 and both
    /// pointers 16-byte aligned, so that every 4-element run of a column is all inside or all
    /// outside its matrix and aligned.
    #[inline(always)]
    pub fn ab_vec4_ok(&self) -> bool {
        (self.m | self.k | self.lda | self.ldb).is_multiple_of(4)
            && self.a.is_aligned_to(16)
            && self.b.is_aligned_to(16)
    }

    /// Whether A and B can be staged in pairs of elements (one 8-byte `cp.async` of f32, one
    /// 16-byte of f64): m, k, lda, ldb even and both pointers aligned to a pair, so that every
    /// pair of a column is all inside or all outside its matrix and aligned.
    #[inline(always)]
    pub fn ab_pairs_ok(&self) -> bool {
        (self.m | self.k | self.lda | self.ldb).is_multiple_of(2)
            && self.a.is_aligned_to(2 * T::BYTES as usize)
            && self.b.is_aligned_to(2 * T::BYTES as usize)
    }

    /// Whether C can be written in 16-byte pieces: m and ldc multiples of 4, C 16-byte aligned.
    #[inline(always)]
    pub fn c_vec4_ok(&self) -> bool {
        (self.m | self.ldc).is_multiple_of(4) && self.member_c().is_aligned_to(16)
    }

    /// The epilogue for C[i..i+4] (16-byte aligned): `alpha * acc + beta * C`, one 16-byte
    /// load and store; C is not read when `beta == 0`.
    ///
    /// # Safety
    /// `i..i+4` must be inside C and 16-byte aligned.
    #[inline(always)]
    pub unsafe fn store_c4(&self, i: usize, acc: [T; 4]) {
        let value = self.scaled(acc, || unsafe { self.member_c().load4(i) });
        unsafe { self.member_c().store4(i, value) }
    }

    /// Runs the store `f` on these arguments, written twice: once for `beta == 0` with a `beta`
    /// the compiler sees is zero, so that the common case's code holds no load of C and no
    /// branch on `beta` between its elements, and once as it is. (Interleaved, every pair of a
    /// Hopper epilogue carried a branch around its load of C, and the instructions executed
    /// lay so far apart that the warps waited for them to be fetched: `docs/perf-notes.md`,
    /// 2026-11-28.)
    #[inline(always)]
    pub fn split_on_beta<R>(&self, f: impl Fn(&Self) -> R) -> R {
        if self.beta == T::ZERO {
            f(&Self {
                beta: T::ZERO,
                ..*self
            })
        } else {
            f(self)
        }
    }

    #[inline(always)]
    fn scaled<const N: usize>(&self, acc: [T; N], old: impl FnOnce() -> [T; N]) -> [T; N] {
        scaled(self.alpha, self.beta, acc, old)
    }

    /// Whether C can be written in pairs: ldc even and C aligned to a pair.
    #[inline(always)]
    pub fn c_pairs_ok(&self) -> bool {
        self.ldc.is_multiple_of(2) && self.member_c().is_aligned_to(2 * T::BYTES as usize)
    }

    /// The epilogue for C[i..i+2] (aligned to a pair): one 8-byte (f32) load and store.
    ///
    /// # Safety
    /// `i..i+2` must be inside C and aligned to the pair.
    #[inline(always)]
    pub unsafe fn store_c2(&self, i: usize, acc: [T; 2]) {
        let value = self.scaled(acc, || unsafe { self.member_c().load2(i) });
        unsafe { self.member_c().store2(i, value) }
    }

    /// The epilogue: `C[i] = alpha * acc + beta * C[i]`.
    ///
    /// With `beta == 0` C is not read (BLAS semantics: C may hold anything, NaN included, and
    /// `0 * NaN` would be NaN).
    ///
    /// # Safety
    /// `i` must be inside C.
    #[inline(always)]
    pub unsafe fn store_c(&self, i: usize, acc: T) {
        let value = if self.beta == T::ZERO {
            self.alpha * acc
        } else {
            self.alpha
                .fma(acc, self.beta * unsafe { self.member_c().load(i) })
        };
        unsafe { self.member_c().store(i, value) }
    }
}

/// The arguments of the 16-bit kernels (bf16, f16), in cuBLAS order: A, B and C in the 16-bit
/// type `H`, alpha and beta in f32 (`cublasGemmEx` with `CUBLAS_COMPUTE_32F`), then the fused
/// epilogue ([`crate::fused`]).
#[derive(Clone, Copy)]
pub struct HalfGemmArgs<H> {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub alpha: f32,
    pub a: GlobalHalf<H>,
    pub lda: u32,
    pub b: GlobalHalf<H>,
    pub ldb: u32,
    pub beta: f32,
    pub c: GlobalHalfMut<H>,
    pub ldc: u32,
    pub fused: Fused<H>,
    /// A strided batch: the members there are, C's stride, and which member these arguments
    /// describe ([`HalfGemmArgs::of_member`]).
    pub batch: Members,
    /// A grouped GEMM's layout and table; [`Groups::NONE`] otherwise.
    pub groups: Groups,
}

/// A grouped GEMM: one GEMM per group (an expert of a mixture-of-experts layer, on the tokens
/// routed to it), all in one persistent launch. In this crate's terms (C = op(A)·op(B),
/// column-major; DeepGEMM's `D[M×N] = X[M×K]·W[N×K]ᵀ` read column-major is m = N, n = M), a
/// group's tokens are columns of B and C, and each group has its own A, the expert's weights:
/// layer `g` of A's tensor map. DeepGEMM's two layouts:
///
/// - **Contiguous** (training, prefill): the groups' columns one after another in one B and one
///   C, each group's a multiple of [`GROUP_COLUMNS`]; `table[j]` is the group of columns
///   `GROUP_COLUMNS·j ..`, and a word of `count` or more marks padding, which no tile computes
///   or writes. The walk is the one problem's; each tile finds its group in the table.
/// - **Masked** (decoding under CUDA graphs): a strided batch of `count` members, each with
///   room for `n` columns, of which the first `table[g]` are group `g`'s tokens. The counts are
///   read on the device, so the host launches without knowing them: tiles past a group's count
///   compute nothing, and no column past it is written.
#[derive(Clone, Copy)]
pub struct Groups {
    pub layout: GroupLayout,
    /// Groups: A's layers.
    pub count: u32,
    pub table: GlobalWords,
}

/// How a grouped GEMM's groups lie ([`Groups`]); `None` for a plain GEMM or batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum GroupLayout {
    None = 0,
    Contiguous = 1,
    Masked = 2,
}

impl GroupLayout {
    /// The layout a kernel parameter names (0, 1, 2; anything else is none).
    #[inline(always)]
    pub fn from_word(word: u32) -> Self {
        match word {
            1 => GroupLayout::Contiguous,
            2 => GroupLayout::Masked,
            _ => GroupLayout::None,
        }
    }
}

/// Columns of n per word of a contiguous layout's table: DeepGEMM's alignment of each group's
/// rows (`get_mk_alignment_for_contiguous_layout`), a multiple of every grouped kernel's tile.
pub const GROUP_COLUMNS: u32 = 128;

impl Groups {
    /// Not grouped.
    pub const NONE: Groups = Groups {
        layout: GroupLayout::None,
        count: 0,
        table: GlobalWords::NONE,
    };

    /// Contiguous layout: the group of column `col` (a word of `count` or more: padding).
    ///
    /// # Safety
    /// The table holds a word per [`GROUP_COLUMNS`] columns of C.
    #[inline(always)]
    pub unsafe fn group_of(&self, col: u32) -> u32 {
        unsafe { self.table.load((col / GROUP_COLUMNS) as usize) }
    }

    /// Masked layout: the columns of member `member` that hold its tokens, its count.
    ///
    /// # Safety
    /// The table holds a word per member.
    #[inline(always)]
    pub unsafe fn columns(&self, member: u32) -> u32 {
        unsafe { self.table.load(member as usize) }
    }

    /// Where a tile of the walk lies ([`crate::pipeline::Problem::locate`]), `bn` its columns:
    /// in the contiguous layout the group its columns belong to, or `None` for padding; in the
    /// masked layout `None` past its member's count.
    #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
    #[inline(always)]
    pub fn locate(
        &self,
        tile: crate::pipeline::schedule::Tile,
        bn: u32,
    ) -> Option<crate::pipeline::schedule::Tile> {
        let col = tile.col * bn;
        match self.layout {
            GroupLayout::None => Some(tile),
            GroupLayout::Contiguous => {
                let group = unsafe { self.group_of(col) };
                (group < self.count).then_some(crate::pipeline::schedule::Tile { group, ..tile })
            }
            GroupLayout::Masked => (col < unsafe { self.columns(tile.member) }).then_some(tile),
        }
    }

    /// Whether C's columns past a member's `n` must be left as they are, though its tensor map
    /// reaches further (the TMA store would write them): the masked layout.
    #[inline(always)]
    pub fn clips(&self) -> bool {
        self.layout == GroupLayout::Masked
    }
}

/// A strided batch as the host gives it (cuBLAS's `cublasGemmStridedBatchedEx`): `count`
/// problems of the same sizes and leading dimensions, member `i` of A, B and C `i·stride`
/// elements after member 0's. The strides are at least one member's matrix (`ld × columns`
/// as stored): members do not overlap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    pub count: u32,
    pub stride_a: u64,
    pub stride_b: u64,
    pub stride_c: u64,
}

impl Batch {
    /// One problem.
    pub const ONE: Batch = Batch {
        count: 1,
        stride_a: 0,
        stride_b: 0,
        stride_c: 0,
    };

    /// Whether there is more than one member.
    pub const fn is_batched(&self) -> bool {
        self.count > 1
    }
}

/// The batch as a kernel's epilogue sees it: the members, C's stride (the copies reach A's and
/// B's members through their tensor maps' layers), and the member being written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Members {
    pub count: u32,
    pub stride_c: u64,
    pub member: u32,
}

impl Members {
    /// One problem.
    pub const ONE: Members = Members {
        count: 1,
        stride_c: 0,
        member: 0,
    };
}

impl<H: Half> HalfGemmArgs<H> {
    /// The arguments of member `member` of the batch: its C (`member·stride_c` elements on),
    /// and the member's number, the layer of C's tensor map for a TMA store.
    #[inline(always)]
    pub fn of_member(self, member: u32) -> Self {
        HalfGemmArgs {
            c: self.c.advanced(member as u64 * self.batch.stride_c),
            batch: Members {
                member,
                ..self.batch
            },
            ..self
        }
    }

    /// Offset of C(row, col).
    #[inline(always)]
    pub fn c_at(&self, row: u32, col: u32) -> usize {
        (row + col * self.ldc) as usize
    }

    /// Whether C can be written in pairs of adjacent rows: ldc even and C 4-byte aligned.
    #[inline(always)]
    pub fn c_pairs_ok(&self) -> bool {
        self.ldc.is_multiple_of(2) && self.c.is_aligned_to(4)
    }

    /// The epilogue for C[i..i+2] (4-byte aligned): `alpha·acc + beta·C` in f32, rounded once
    /// to the 16-bit type; C is not read when `beta == 0`. (A fused epilogue has been applied
    /// to the registers before: [`crate::pipeline::epilogue::fuse`].)
    ///
    /// # Safety
    /// `i..i+2` inside C, element `i` 4-byte aligned.
    #[inline(always)]
    pub unsafe fn store_c2(&self, i: usize, acc: [f32; 2]) {
        let value = scaled(self.alpha, self.beta, acc, || unsafe { self.c.load2(i) });
        unsafe { self.c.store2(i, value) }
    }

    /// The epilogue for one element.
    ///
    /// # Safety
    /// `i` inside C.
    #[inline(always)]
    pub unsafe fn store_c(&self, i: usize, acc: f32) {
        let [value] = scaled(self.alpha, self.beta, [acc], || [unsafe { self.c.load(i) }]);
        unsafe { self.c.store(i, value) }
    }
}

/// The arguments of the FP8 kernels, in cuBLASLt's order and layout on Hopper ("TN"): `D =
/// alpha·op(A)·op(B) + beta·C` with A stored k×m (`lda ≥ k`, op(A) = Aᵀ) and B stored k×n
/// (`ldb ≥ k`), both e4m3 and so both K-major, which is all an 8-bit `wgmma` reads; C, m×n
/// bf16, written in place; alpha, beta and the scales f32.
///
/// The scales say what the codes stand for: element (i, κ) of op(A) is `scale_a(i, κ)·A[κ, i]`.
/// Per tensor, `scale_a` and `scale_b` point at one f32 each (a batch's members, one each after
/// another). Per block (DeepSeek-V3's scheme,
/// DeepGEMM's layout), A has one scale per row of op(A) and 128 of k, `scale_a[i + (κ/128)·m]`,
/// and B one per 128 × 128 block, `scale_b[(j/128)·⌈k/128⌉ + κ/128]`.
#[derive(Clone, Copy)]
pub struct Fp8GemmArgs {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub alpha: f32,
    /// Read by the TMA engine only (the host encodes the tensor maps from them).
    pub a: *const crate::device::fp8::E4m3,
    pub lda: u32,
    pub b: *const crate::device::fp8::E4m3,
    pub ldb: u32,
    pub beta: f32,
    pub c: GlobalHalfMut<crate::device::half::Bf16>,
    pub ldc: u32,
    pub scale_a: Global<f32>,
    pub scale_b: Global<f32>,
    /// The fused epilogue on the bf16 output (bias, activation, D's amax), as the 16-bit
    /// kernels apply it: `act(alpha·acc + beta·C + bias)`, the per-tensor scales in alpha
    /// ([`Fp8GemmArgs::output`]), the block scales already in the accumulators.
    pub fused: Fused<crate::device::half::Bf16>,
    /// A grouped GEMM's members (the masked layout's; C's stride) and groups, as in
    /// [`HalfGemmArgs`]: group `g` multiplies layer `g` of A with its scales, `g·m·⌈k/128⌉` on
    /// (per tensor `g` on: one each); member `j` is layer `j` of B and C, B's scales
    /// `j·⌈n/128⌉·⌈k/128⌉` on (per tensor `j`).
    pub batch: Members,
    pub groups: Groups,
}

impl Fp8GemmArgs {
    /// The arguments of `tile`'s member and group ([`crate::pipeline::Problem::member`]): its
    /// C (and C's layer for the TMA store), its A's and B's block scales, and in the masked
    /// layout its columns cut at the group's count.
    #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
    #[inline(always)]
    pub fn of_tile(self, tile: crate::pipeline::schedule::Tile) -> Self {
        let scales = self.block_scales_per_layer();
        self.of_tile_with_scales(tile, scales)
    }

    /// [`Fp8GemmArgs::of_tile`] with one scale per tensor: group `g`'s A scale is `scale_a[g]`,
    /// member `j`'s B scale `scale_b[j]` (a strided batch's members each have their own, one
    /// after the other, as with block scales).
    #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
    #[inline(always)]
    pub fn of_tile_per_tensor(self, tile: crate::pipeline::schedule::Tile) -> Self {
        self.of_tile_with_scales(tile, (1, 1))
    }

    /// The member's and group's arguments, with `(a_scales, b_scales)` scales per group of A
    /// and per member of B.
    #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
    #[inline(always)]
    fn of_tile_with_scales(
        self,
        tile: crate::pipeline::schedule::Tile,
        scales: (u32, u32),
    ) -> Self {
        self.scales_of_tile(tile, scales).output_of_tile(tile)
    }

    /// [`Fp8GemmArgs::of_tile`]'s first half, what a mainloop reads: the group's A scales and
    /// the member's B scales, `(a_scales, b_scales)` per group and per member.
    #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
    #[inline(always)]
    pub fn scales_of_tile(
        self,
        tile: crate::pipeline::schedule::Tile,
        (a_scales, b_scales): (u32, u32),
    ) -> Self {
        Fp8GemmArgs {
            scale_a: self.scale_a.offset(tile.group as isize * a_scales as isize),
            scale_b: self
                .scale_b
                .offset(tile.member as isize * b_scales as isize),
            ..self
        }
    }

    /// [`Fp8GemmArgs::of_tile`]'s second half, what an epilogue writes: the member's C (and its
    /// layer for the TMA store), in the masked layout its columns cut at the group's count.
    #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
    #[inline(always)]
    pub fn output_of_tile(self, tile: crate::pipeline::schedule::Tile) -> Self {
        let n = if self.groups.clips() {
            self.n.min(unsafe { self.groups.columns(tile.member) })
        } else {
            self.n
        };
        Fp8GemmArgs {
            n,
            c: self.c.advanced(tile.member as u64 * self.batch.stride_c),
            batch: Members {
                member: tile.member,
                ..self.batch
            },
            ..self
        }
    }

    /// The block scales per group of A and per member of B ([`Fp8GemmArgs::of_tile`]).
    #[inline(always)]
    pub fn block_scales_per_layer(&self) -> (u32, u32) {
        let k_blocks = self.k.div_ceil(128);
        (self.m * k_blocks, self.n.div_ceil(128) * k_blocks)
    }

    /// The bf16 problem the epilogue writes, with `alpha` as given (the per-tensor kernel
    /// passes `alpha·scale_a·scale_b`, the block-scaled one `alpha`: its accumulators are
    /// already scaled). Its A and B are never read.
    #[inline(always)]
    pub fn output(&self, alpha: f32) -> HalfGemmArgs<crate::device::half::Bf16> {
        HalfGemmArgs {
            m: self.m,
            n: self.n,
            k: self.k,
            alpha,
            a: GlobalHalf::new(self.a.cast()),
            lda: self.lda,
            b: GlobalHalf::new(self.b.cast()),
            ldb: self.ldb,
            beta: self.beta,
            c: self.c,
            ldc: self.ldc,
            fused: self.fused,
            batch: self.batch,
            groups: self.groups,
        }
    }
}

/// The arguments of the 16-bit split-k reduction ([`crate::variants::wgmma_split_k::reduce`]):
/// `splits` f32 partial products of m×n, leading dimension `ldw`, in one workspace, and the
/// caller's alpha, beta and 16-bit C. On the GPU they arrive in the GEMM argument order, the
/// workspace as A (and B, unused), the number of parts as k.
#[derive(Clone, Copy)]
pub struct HalfReduceArgs<H> {
    pub m: u32,
    pub n: u32,
    pub splits: u32,
    pub alpha: f32,
    pub workspace: Global<f32>,
    pub ldw: u32,
    pub beta: f32,
    pub c: GlobalHalfMut<H>,
    pub ldc: u32,
    /// Applied here, to the sum: the partial products are raw.
    pub fused: Fused<H>,
}

/// `alpha * acc + beta * C` for a run of C (one rounding per element: a fused multiply-add),
/// which `old` loads only when `beta != 0`.
#[inline(always)]
pub fn scaled<T: Real, const N: usize>(
    alpha: T,
    beta: T,
    acc: [T; N],
    old: impl FnOnce() -> [T; N],
) -> [T; N] {
    if beta == T::ZERO {
        acc.map(|x| alpha * x)
    } else {
        let old = old();
        core::array::from_fn(|q| alpha.fma(acc[q], beta * old[q]))
    }
}

/// How a kernel is launched: grid and block shape (x, y) and dynamic shared memory in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub grid: (u32, u32),
    pub block: (u32, u32),
    pub shared_bytes: u32,
}

/// The stage after `stage` in a ring of `stages` pipeline stages (shared-memory buffers that
/// the copies fill in turn).
#[inline(always)]
pub const fn next_stage(stage: u32, stages: u32) -> u32 {
    if stage + 1 == stages {
        0
    } else {
        stage + 1
    }
}

/// `ceil(a / b)`.
#[inline(always)]
pub const fn blocks_for(a: u32, b: u32) -> u32 {
    a.div_ceil(b)
}

/// How a kernel multiplies and adds: what its result's error is made of, and so the tolerance
/// the host's check holds it to (`gpu-gemm/src/verify.rs` derives one from each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arithmetic {
    /// Fused multiply-adds in the element type (CUDA cores; the FP64 tensor cores' DMMA is IEEE
    /// FP64 fused multiply-add too): the inputs are used exactly.
    Native,
    /// The tensor cores' TF32 mode: each f32 input cut to 10 explicit mantissa bits (rounded
    /// by `cvt.rna.tf32.f32`, or truncated by the tensor core), products exact, sums in at
    /// least f32.
    Tf32,
    /// Three TF32 products per term (`big·big + big·small + small·big`, each input split into a
    /// TF32 `big` part and the TF32 part of `x - big`): FP32 accuracy from tensor cores.
    Tf32x3,
}

impl Arithmetic {
    pub const fn name(self) -> &'static str {
        match self {
            Arithmetic::Native => "native",
            Arithmetic::Tf32 => "TF32",
            Arithmetic::Tf32x3 => "3xTF32",
        }
    }
}
