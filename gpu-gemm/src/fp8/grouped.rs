//! Grouped FP8 GEMMs on the host: a mixture-of-experts layer in e4m3 with block scales, in
//! DeepGEMM's contiguous and masked layouts ([`kernels_gpu::gemm::Groups`]), as one launch of
//! `wgmma-fp8-block` or as cuBLASLt called once per group (the yardstick); and a strided batch,
//! the masked layout whose every count is n, with block scales or one scale per tensor
//! (`wgmma-fp8:6`; its yardstick cuBLASLt's strided batched matmul, the members sharing one
//! scale).
//!
//! The problem ([`Fp8Problem`] with [`Fp8Groups`]) is described as in 16 bits: `shape` is one
//! group's A (m × k, `lda`) and, in the contiguous layout, all of B's and C's columns (the
//! groups' runs of 128 after one another), in the masked layout one member's room. Each group
//! has its own A with its scales; B and C are one matrix (contiguous) or one per group (masked),
//! so that the operands a launch takes are the groups' and members' own, one after another:
//! group `g`'s A `g·lda·m` codes on, its scales `g·m·⌈k/128⌉` on; member `j`'s B `j·ldb·n`,
//! its scales `j·⌈n/128⌉·⌈k/128⌉`, its C `j·ldc·n` on.
//!
//! Each group is checked against the f64 reference of its own dequantised operands, and every
//! column no group owns (a masked group's columns past its count) must be as it was uploaded.
use super::cublaslt::{blk128_scales, CublasLtFp8};
use super::quantize::{quantize_as, quantize_with, Format, Fp8Problem, Operand, Quantized};
use super::quantize::{scale_count, Scaling, BLOCK};
use super::quantize::{OUTLIER_EVERY, OUTLIER_FACTOR};
use super::reference::{check, reference_of, Fp8Check};
use crate::launch::{Fp8Groups, Fp8Operands, Fp8Pointers, Launch};
use crate::problem::{GroupColumns, Matrix};
use crate::run::{Backend, Engine};
use crate::verify::{group_columns_written, Reference};
use anyhow::Result;
use kernels_gpu::fused::Epilogue;
use kernels_gpu::gemm::GroupLayout;
use kernels_gpu::registry::Shape;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A grouped FP8 GEMM's inputs: each group's A and each member's B and C, quantised with block
/// scales, and the table the kernel reads.
pub struct GroupedInputs {
    /// Group `g`'s A, stored k × m (`lda`), with its scales.
    pub a: Vec<Quantized>,
    /// B: one k × n matrix (contiguous) or one per member (masked), with its scales.
    pub b: Vec<Quantized>,
    /// C before the GEMM, as B: m × n (`ldc`), bf16.
    pub c: Vec<Matrix<half::bf16>>,
    /// The contiguous layout's group of each 128 columns, or the masked layout's counts.
    pub table: Vec<u32>,
}

/// The operands of one launch: the groups' and members' own, one after another.
pub struct Concatenated {
    /// The groups' A, one after another.
    pub a: Vec<u8>,
    /// Their scales.
    pub scale_a: Vec<f32>,
    /// The members' B.
    pub b: Vec<u8>,
    /// Their scales, in the kernels' layout.
    pub scale_b: Vec<f32>,
    /// The members' C.
    pub c: Vec<half::bf16>,
}

impl GroupedInputs {
    /// The inputs of `p` with table `table` (the problem's own, [`crate::problem::Problem::group_table`],
    /// or a test's): uniform in [-1, 1) from ChaCha8 seeded with `p.seed`, each group's A then
    /// each member's B then C; `p.outliers` makes every 97th row of each A 1000× larger.
    pub fn generate(p: &Fp8Problem, table: Vec<u32>) -> Self {
        let s = p.shape;
        let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
        let mut uniform = move || rng.random_range(-1.0..1.0f64);
        let members = p.groups.members(&s).count;
        let a: Vec<_> = (0..p.groups.count)
            .map(|_| {
                let mut a = Matrix::from_fn(s.k, s.m, s.lda, f32::NAN, |_, _| uniform() as f32);
                if p.outliers {
                    for i in (0..s.m).step_by(OUTLIER_EVERY as usize) {
                        for q in 0..s.k {
                            a.data[(q + i * s.lda) as usize] *= OUTLIER_FACTOR;
                        }
                    }
                }
                a
            })
            .collect();
        let b: Vec<_> = (0..members)
            .map(|_| Matrix::from_fn(s.k, s.n, s.ldb, f32::NAN, |_, _| uniform() as f32))
            .collect();
        let (a, b) = (
            quantized(&a, Operand::A, p.scaling, Format::E4m3),
            quantized(&b, Operand::B, p.scaling, p.b_format),
        );
        let c = (0..members)
            .map(|_| {
                Matrix::from_fn(s.m, s.n, s.ldc, half::bf16::NAN, |_, _| {
                    half::bf16::from_f64(uniform())
                })
            })
            .collect();
        GroupedInputs { a, b, c, table }
    }

    /// The operands as a kernel's launch takes them ([`Concatenated`]).
    pub fn concatenated(&self) -> Concatenated {
        let codes = |q: &[Quantized]| q.iter().flat_map(|q| q.codes.data.clone()).collect();
        let scales = |q: &[Quantized]| q.iter().flat_map(|q| q.scales.clone()).collect();
        Concatenated {
            a: codes(&self.a),
            scale_a: scales(&self.a),
            b: codes(&self.b),
            scale_b: scales(&self.b),
            c: self.c.iter().flat_map(|c| c.data.clone()).collect(),
        }
    }

    /// Group `run` as an FP8 problem of its own: the problem, its B's and C's columns cut out of
    /// its member's, and the offset of its first element in the concatenated C.
    pub fn group(
        &self,
        p: &Fp8Problem,
        run: GroupColumns,
    ) -> (Fp8Problem, Quantized, Matrix<half::bf16>, usize) {
        let s = p.shape;
        let problem = Fp8Problem {
            shape: Shape {
                n: run.columns,
                ..s
            },
            groups: Fp8Groups::NONE,
            seed: p.seed.wrapping_add(run.group as u64),
            ..*p
        };
        let b = &self.b[run.member as usize];
        let k_blocks = s.k.div_ceil(BLOCK) as usize;
        let first_block = (run.first / BLOCK) as usize;
        let blocks = run.columns.div_ceil(BLOCK) as usize;
        let scales = match p.scaling {
            Scaling::Block => {
                b.scales[first_block * k_blocks..(first_block + blocks) * k_blocks].to_vec()
            }
            Scaling::PerTensor => b.scales.clone(),
        };
        let b = Quantized {
            codes: columns(&b.codes, run.first, run.columns),
            scales,
            operand: b.operand,
            scaling: b.scaling,
            format: b.format,
        };
        let c = columns(&self.c[run.member as usize], run.first, run.columns);
        let at = (run.member as u64 * p.groups.layers(&s).stride_c
            + run.first as u64 * s.ldc as u64) as usize;
        (problem, b, c, at)
    }
}

/// Each of `sources` quantised with `scaling`; one scale per tensor is the largest of them all,
/// shared (the kernels read each member's own, cuBLASLt's batched matmul one for the batch: with
/// the same in each, both compute the same problem).
fn quantized(
    sources: &[Matrix<f32>],
    operand: Operand,
    scaling: Scaling,
    format: Format,
) -> Vec<Quantized> {
    let each = sources
        .iter()
        .map(|s| quantize_as(s, operand, scaling, format));
    if scaling == Scaling::Block {
        return each.collect();
    }
    let largest = each.map(|q| q.scales[0]).fold(0f32, f32::max);
    let shared = (Scaling::PerTensor, vec![largest]);
    sources
        .iter()
        .map(|s| quantize_with(s, operand, shared.clone(), format))
        .collect()
}

/// Columns `first..first + count` of `m`.
fn columns<T: Copy>(m: &Matrix<T>, first: u32, count: u32) -> Matrix<T> {
    let (from, to) = (
        first as usize * m.ld as usize,
        (first + count) as usize * m.ld as usize,
    );
    Matrix {
        cols: count,
        data: m.data[from..to].to_vec(),
        ..*m
    }
}

/// The groups' runs of columns in `p` with `table`.
pub fn runs(p: &Fp8Problem, table: &[u32]) -> Vec<GroupColumns> {
    crate::problem::group_columns(p.groups.layout, p.groups.count, p.shape.n, table)
}

/// Each group's reference ([`reference_of`] its own operands), in the order of [`runs`].
pub fn references(p: &Fp8Problem, x: &GroupedInputs) -> Vec<Reference> {
    runs(p, &x.table)
        .into_iter()
        .map(|run| {
            let (group, b, c, _) = x.group(p, run);
            reference_of(&group, (&x.a[run.group as usize], &b, &c, &[]))
        })
        .collect()
}

/// The check of a grouped run: each group against its reference, the worst returned, with
/// every group's NaN counted and every column no group owns required unchanged, bit for bit.
pub fn check_groups(
    p: &Fp8Problem,
    x: &GroupedInputs,
    references: &[Reference],
    (uploaded_c, result): (&[half::bf16], &[half::bf16]),
    promotes: bool,
) -> Fp8Check {
    let runs = runs(p, &x.table);
    let badness = |c: &Fp8Check| (!c.passed(), c.check.relative_frobenius / c.check.tolerance);
    let mut worst: Option<Fp8Check> = None;
    for (&run, reference) in runs.iter().zip(references) {
        let (group, _, c, at) = x.group(p, run);
        let len = c.data.len();
        let checked = check(
            &group,
            reference,
            &uploaded_c[at..at + len],
            &result[at..at + len],
            promotes,
        );
        if worst
            .as_ref()
            .is_none_or(|w| badness(&checked) > badness(w))
        {
            worst = Some(checked);
        }
    }
    let mut worst = worst.expect("a grouped problem has at least one group with columns");
    let members = p.groups.members(&p.shape);
    let (non_finite, changed) = group_columns_written(
        &runs,
        &p.shape,
        (members.count, members.stride_c),
        uploaded_c,
        result,
    );
    worst.check.non_finite = non_finite;
    worst.check.padding_changed += changed;
    let (units, owner) = match p.groups.strided {
        Some(_) => ("members", "member"),
        None => ("groups", "group"),
    };
    worst.check.coverage = format!(
        "{} {units} (the worst shown), each {}; every column no {owner} owns unchanged",
        runs.len(),
        worst.check.coverage
    );
    worst
}

/// cuBLASLt called once per group, as a program without a grouped FP8 GEMM does: B's scales
/// in cuBLASLt's layout, each group's cut out of its member's and laid one after another
/// (at the offsets it returns beside them).
pub fn cublaslt_scale_b(p: &Fp8Problem, x: &GroupedInputs) -> (Vec<f32>, Vec<usize>) {
    let (mut all, mut offsets) = (Vec::new(), Vec::new());
    for run in runs(p, &x.table) {
        let (group, b, _, _) = x.group(p, run);
        offsets.push(all.len());
        match p.scaling {
            Scaling::Block => all.extend(blk128_scales(&b.scales, group.shape.k, group.shape.n)),
            Scaling::PerTensor => all.extend(&b.scales),
        }
    }
    (all, offsets)
}

/// The per-group cuBLASLt calls of the loop, ready to enqueue on a launch's operands: each
/// group's shape and matmul, and the byte offsets of its A, A's scales, B, C and B's scales (in
/// [`cublaslt_scale_b`]'s layout).
pub struct CublasLtLoop {
    calls: Vec<(CublasLtFp8, [u64; 5])>,
}

impl CublasLtLoop {
    /// The calls of `p` with inputs `x`, B's scales where `scale_b_offsets` says
    /// ([`cublaslt_scale_b`]).
    pub fn new(p: &Fp8Problem, x: &GroupedInputs, scale_b_offsets: &[usize]) -> Result<Self> {
        let s = p.shape;
        let a_scales = scale_count(Operand::A, p.scaling, s.k, s.m) as u64;
        let layers = p.groups.layers(&s);
        let calls = runs(p, &x.table)
            .into_iter()
            .zip(scale_b_offsets)
            .map(|(run, &sb)| {
                let group = Shape {
                    n: run.columns,
                    ..s
                };
                let lt = CublasLtFp8::new(&group, (p.scaling, p.b_format), p.alpha, p.beta, false)?;
                let (g, j, first) = (run.group as u64, run.member as u64, run.first as u64);
                let offsets = [
                    g * layers.stride_a,
                    4 * g * a_scales,
                    j * layers.stride_b + first * s.ldb as u64,
                    2 * (j * layers.stride_c + first * s.ldc as u64),
                    4 * sb as u64,
                ];
                Ok((lt, offsets))
            })
            .collect::<Result<_>>()?;
        Ok(CublasLtLoop { calls })
    }

    /// Enqueues every group's call on `stream`.
    ///
    /// # Safety
    /// `q` holds the operands [`CublasLtLoop::new`] was made for, B's scales in
    /// [`cublaslt_scale_b`]'s layout.
    pub unsafe fn enqueue(&self, stream: cust::sys::CUstream, q: &Fp8Pointers) -> Result<()> {
        for (lt, [a, sa, b, c, sb]) in &self.calls {
            unsafe {
                lt.enqueue(
                    stream,
                    q.a + a,
                    q.b + b,
                    q.c + c,
                    q.scale_a + sa,
                    q.scale_b + sb,
                )?
            };
        }
        Ok(())
    }
}

/// What runs a grouped problem, from [`super::run`]'s plan: a kernel's launch, or cuBLASLt's
/// loop, or its strided batch.
pub enum GroupedLaunch<'l> {
    /// One launch of a kernel that walks the groups.
    Kernel(&'l Launch),
    /// cuBLASLt called once per group ([`CublasLtLoop`]).
    CublasLtLoop,
    /// A strided batch with one scale per tensor: cuBLASLt's strided batched matmul, one call
    /// (the members share their scale: [`GroupedInputs::generate`]).
    CublasLtBatched {
        /// As [`super::cublaslt::CublasLtFp8::new`]'s.
        fast_accum: bool,
    },
}

/// Launches and times `launch` on `p`'s grouped inputs `x`: the measured run (C's upload and
/// result are all members' C, concatenated), the engine and the entry's name.
pub fn measure(
    backend: &Backend,
    launch: GroupedLaunch<'_>,
    label: &str,
    p: &Fp8Problem,
    x: &GroupedInputs,
    timing: crate::run::Timing,
) -> Result<(crate::run::Measured<half::bf16>, Engine, String)> {
    let operands = x.concatenated();
    let scalars = (p.alpha, p.beta);
    fn with<'o>(
        o: &'o Concatenated,
        scale_b: &'o [f32],
        x: &'o GroupedInputs,
        groups: Fp8Groups,
    ) -> Fp8Operands<'o> {
        Fp8Operands {
            a: &o.a,
            b: &o.b,
            scale_a: &o.scale_a,
            scale_b,
            c: &o.c,
            groups,
            table: &x.table,
            fused: (Epilogue::NONE, &[]),
        }
    }
    let ops = |scale_b| with(&operands, scale_b, x, p.groups);
    match (launch, backend) {
        (GroupedLaunch::Kernel(l), Backend::Gpu(gpu)) => {
            let enqueue = gpu.fp8_kernel(l, p.shape, scalars, (p.groups, Epilogue::NONE))?;
            let m = gpu.run_fp8(
                l.name(),
                &p.shape,
                &ops(&operands.scale_b),
                timing,
                &enqueue,
            )?;
            Ok((m, Engine::Gpu, l.name().to_string()))
        }
        (GroupedLaunch::Kernel(l), Backend::Emulator) => {
            let ops = ops(&operands.scale_b);
            let m = crate::emulator::run_fp8(l, &p.shape, scalars, &ops, timing)?;
            Ok((m, Engine::Emulator, l.name().to_string()))
        }
        (GroupedLaunch::CublasLtLoop, Backend::Gpu(gpu)) => {
            let (scale_b, offsets) = cublaslt_scale_b(p, x);
            let calls = CublasLtLoop::new(p, x, &offsets)?;
            let stream = gpu.stream().as_inner();
            let enqueue = |q: &Fp8Pointers| unsafe { calls.enqueue(stream, q) };
            let m = gpu.run_fp8(label, &p.shape, &ops(&scale_b), timing, &enqueue)?;
            Ok((m, Engine::Gpu, label.to_string()))
        }
        (GroupedLaunch::CublasLtBatched { fast_accum }, Backend::Gpu(gpu)) => {
            let batch = p
                .groups
                .strided
                .expect("cuBLASLt's batch runs strided batches");
            let lt = CublasLtFp8::new(
                &p.shape,
                (p.scaling, p.b_format),
                p.alpha,
                p.beta,
                fast_accum,
            )?
            .batched(
                batch.count,
                [batch.stride_a, batch.stride_b, batch.stride_c],
            )?;
            let stream = gpu.stream().as_inner();
            // Every member's scales are the same: the first member's stand for the batch.
            let enqueue = |q: &Fp8Pointers| unsafe {
                lt.enqueue(stream, q.a, q.b, q.c, q.scale_a, q.scale_b)
            };
            let m = gpu.run_fp8(label, &p.shape, &ops(&operands.scale_b), timing, &enqueue)?;
            Ok((m, Engine::Gpu, label.to_string()))
        }
        (
            GroupedLaunch::CublasLtLoop | GroupedLaunch::CublasLtBatched { .. },
            Backend::Emulator,
        ) => {
            anyhow::bail!("cuBLASLt runs only on a GPU (use --backend gpu)")
        }
    }
}

/// [`validate`] for a grouped problem; one problem passes.
pub fn validate_if_grouped(p: &Fp8Problem) -> Result<()> {
    if p.groups.grouped() {
        validate(p)
    } else {
        Ok(())
    }
}

/// Whether `p` is a grouped problem the FP8 kernels compute: block scales, or one scale per
/// tensor in a strided batch (each member's own; the grouped layouts' experts take block
/// scales, as DeepSeek-V3's), A and B K-major, and in the contiguous layout n a multiple of the
/// table's 128 columns.
pub fn validate(p: &Fp8Problem) -> Result<()> {
    if p.scaling != Scaling::Block && p.groups.strided.is_none() {
        anyhow::bail!("a grouped e4m3 GEMM runs with block scales: give --scaling block");
    }
    if !p.epilogue.is_none() {
        anyhow::bail!(
            "the FP8 epilogue (bias, activation, amax) runs on one problem: a grouped GEMM or \
             batch in e4m3 writes D as it is (each expert would want its own bias)"
        );
    }
    if p.groups.layout == GroupLayout::Contiguous
        && !p.shape.n.is_multiple_of(kernels_gpu::gemm::GROUP_COLUMNS)
    {
        anyhow::bail!(
            "a contiguous grouped GEMM's columns are runs of {} (n = {})",
            kernels_gpu::gemm::GROUP_COLUMNS,
            p.shape.n
        );
    }
    if p.groups.count == 0 {
        anyhow::bail!("a grouped GEMM needs at least one group");
    }
    Ok(())
}
