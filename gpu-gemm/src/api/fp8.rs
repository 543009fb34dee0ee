//! FP8 through the library: e4m3 operands with their scales, as the FP8 kernels and cuBLASLt
//! read them (the layout of [`crate::fp8`]: "TN", A stored k×m and B k×n, C bf16).
//!
//! An e4m3 operand is not a matrix of numbers until its scales say what each code is worth,
//! so the call takes each operand as its codes and its scales together ([`Fp8`]), one scale
//! per tensor or one per block (DeepSeek-V3's 1×128 of op(A), 128×128 of B): the scales are
//! device memory, as a program that quantises on the GPU (an amax, then a division) has them,
//! and their number is checked against the shape ([`GemmError::ScalesMisshaped`]).
use super::{location, Operand, OperandMut, Result};
use super::{Algorithm, Amax, Choice, Gemm, GemmConfig, GemmError, Memory, MemoryMut};
use crate::fp8::cublaslt::CublasLtFp8;
use crate::fp8::quantize::{self, Format, Fp8Problem, Scaling};
use crate::launch::{Fp8Groups, Fp8Operands, Fp8Pointers, Launch};
use crate::problem::{Init, Problem, Transpose, Transposes};
use crate::registry::{self, CublasMath, Math, Variant};
use crate::run::Backend;
use cust::memory::{CopyDestination, DeviceBuffer};
use kernels_gpu::gemm::GroupLayout;

/// One FP8 operand: its codes (one byte each, stored K-major: k×m for A, k×n for B; e4m3, or
/// e5m2 for B with [`Fp8::e5m2`]) and their scales; an element's value is its scale times its
/// code's value.
pub struct Fp8<'a> {
    codes: Memory<'a, u8>,
    scales: Memory<'a, f32>,
    scaling: Scaling,
    format: Format,
}

impl<'a> Fp8<'a> {
    /// One scale for the whole operand (a buffer of one f32).
    pub fn per_tensor(
        codes: &'a (impl Operand<u8> + ?Sized),
        scale: &'a (impl Operand<f32> + ?Sized),
    ) -> Self {
        Fp8 {
            codes: codes.memory(),
            scales: scale.memory(),
            scaling: Scaling::PerTensor,
            format: Format::E4m3,
        }
    }

    /// One scale per block: for A one per 128 of k in each of its m columns as stored
    /// (`scale[col + (row/128)·m]`), for B one per 128×128 (`scale[(col/128)·⌈k/128⌉ + row/128]`).
    /// A's scales must start 16-byte aligned, as the codes (the kernels copy them into shared
    /// memory in 16-byte pieces; [`GemmError::Misaligned`] otherwise); B's, and both for
    /// cuBLASLt's matmul ([`Algorithm::Cublas`]), only 4.
    pub fn per_block(
        codes: &'a (impl Operand<u8> + ?Sized),
        scales: &'a (impl Operand<f32> + ?Sized),
    ) -> Self {
        Fp8 {
            codes: codes.memory(),
            scales: scales.memory(),
            scaling: Scaling::Block,
            format: Format::E4m3,
        }
    }

    /// The codes are e5m2 rather than e4m3 (five bits of exponent, two of mantissa: the
    /// gradients of FP8 training's backward pass). B only, with one scale per tensor: the
    /// tensor cores take e5m2 for either operand, the kernels built here for B
    /// (`wgmma…e4m3.e5m2`); anything else is [`GemmError::InvalidConfig`].
    pub fn e5m2(self) -> Self {
        Fp8 {
            format: Format::E5m2,
            ..self
        }
    }
}

impl Gemm {
    /// `C = α·Aᵀ·B + β·C` in FP8: A and B e4m3 (B may be e5m2) with their scales, C bf16, α
    /// and β as f32.
    /// `config` must say `transposes(Transpose::Yes, Transpose::No)` with `lda, ldb ≥ k` (the
    /// tensor cores read both operands K-major). `Algorithm::Auto` chooses among the FP8 kernels
    /// for the operands' scaling; `Algorithm::Kernel` names one (`wgmma-fp8`, `wgmma-fp8-narrow`,
    /// `wgmma-fp8-swap`, `wgmma-fp8-block`, `wgmma-fp8-block-narrow`, `wgmma-fp8-block-swap`); `Algorithm::Cublas` is cuBLASLt's FP8 matmul (per-tensor scales).
    ///
    /// A strided batch ([`GemmConfig::batch`], strides in elements: codes for A and B, bf16 for
    /// C, each a multiple of 16 bytes) has each member's scales after the previous member's:
    /// per block `m·⌈k/128⌉` of A's and `⌈n/128⌉·⌈k/128⌉` of B's each, per tensor one each
    /// (`count` scales per operand). It runs in one launch of `wgmma-fp8-block` (per block) or
    /// `wgmma-fp8:6` (per tensor, B e4m3 or e5m2): a batch is the masked grouped layout whose
    /// every count is n, so the call makes that table itself. Not on cuBLASLt, whose batched
    /// matmul reads one scale per tensor for the whole batch.
    ///
    /// A fused epilogue ([`GemmConfig::epilogue`]) without a bias runs here too; one with a
    /// bias, or the amax, is [`Gemm::run_fp8_fused`]'s.
    ///
    /// Returns when C is written.
    pub fn run_fp8(
        &self,
        config: &GemmConfig,
        algorithm: &Algorithm,
        a: Fp8<'_>,
        b: Fp8<'_>,
        c: &mut (impl OperandMut<half::bf16> + ?Sized),
    ) -> Result<Choice> {
        if config.epilogue.amax() {
            return Err(GemmError::InvalidConfig(
                "run_fp8 has nowhere to return D's amax: call Gemm::run_fp8_fused".into(),
            ));
        }
        self.fp8_call(config, algorithm, (a, b, None), (c.memory_mut(), None))
            .map(|(choice, _)| choice)
    }

    /// [`Gemm::run_fp8`] with the configuration's fused epilogue ([`GemmConfig::epilogue`],
    /// [`GemmConfig::amax`]) on D, as the 16-bit kernels apply it: `act(α·Σ + β·C + bias)`
    /// before D's rounding to bf16, `bias` (bf16, m or n values, in the operands' memory) where
    /// the epilogue has one. With the amax, returns D's amax and its e4m3 scale, gathered in the
    /// same launch: what an FP8 layer's output needs to become the next layer's e4m3 input. One
    /// problem (not a batch or groups); every FP8 kernel, not cuBLASLt.
    pub fn run_fp8_fused(
        &self,
        config: &GemmConfig,
        algorithm: &Algorithm,
        (a, b): (Fp8<'_>, Fp8<'_>),
        bias: Option<Memory<'_, half::bf16>>,
        c: &mut (impl OperandMut<half::bf16> + ?Sized),
    ) -> Result<(Choice, Option<Amax>)> {
        let (choice, amax) =
            self.fp8_call(config, algorithm, (a, b, None), (c.memory_mut(), bias))?;
        Ok((choice, amax.map(|[amax, scale]| Amax { amax, scale })))
    }

    /// [`Gemm::run_fp8`] for a grouped GEMM in e4m3 with block scales (a mixture-of-experts
    /// layer, DeepGEMM's layouts, as [`Gemm::run_grouped`] in 16 bits): `config` made with
    /// [`GemmConfig::contiguous_groups`] or [`GemmConfig::masked_groups`], the groups packed
    /// (A's stride `lda·m`; in the masked layout B's `ldb·n` and C's `ldc·n`); A's block scales
    /// each group's after the other (`m·⌈k/128⌉` each), B's each member's (`⌈n/128⌉·⌈k/128⌉`:
    /// one B in the contiguous layout); `table` as [`Gemm::run_grouped`]'s. One launch of
    /// `wgmma-fp8-block` computes every group.
    pub fn run_fp8_grouped(
        &self,
        config: &GemmConfig,
        algorithm: &Algorithm,
        (a, b): (Fp8<'_>, Fp8<'_>),
        table: &(impl Operand<u32> + ?Sized),
        c: &mut (impl OperandMut<half::bf16> + ?Sized),
    ) -> Result<Choice> {
        let table = table.memory();
        self.fp8_call(
            config,
            algorithm,
            (a, b, Some(table)),
            (c.memory_mut(), None),
        )
        .map(|(choice, _)| choice)
    }

    /// The FP8 call, one problem or grouped (`table`), with the fused epilogue's bias where
    /// the configuration has one: what ran, and with the amax D's amax and scale.
    fn fp8_call(
        &self,
        config: &GemmConfig,
        algorithm: &Algorithm,
        (a, b, table): (Fp8<'_>, Fp8<'_>, Option<Memory<'_, u32>>),
        (c, bias): (MemoryMut<'_, half::bf16>, Option<Memory<'_, half::bf16>>),
    ) -> Result<(Choice, Option<[f32; 2]>)> {
        let problem = self.fp8_problem(config, &a, &b)?;
        self.check_bias(&as_problem(&problem), bias.as_ref())?;
        let epilogue = problem.epilogue;
        // A strided batch runs as the masked layout whose every count is n: its table is ours.
        let full_table = match problem.groups.strided {
            Some(_) => Some(self.upload_table(&crate::fp8::run::group_table(&problem))?),
            None => None,
        };
        let table = full_table.as_ref().map(Operand::memory).or(table);
        self.check_groups(&as_problem(&problem), table.as_ref())?;
        let (choice, launch) = self.fp8_choice(algorithm, &problem)?;
        let cublas = launch.is_none();
        if cublas && !epilogue.is_none() {
            return Err(GemmError::Unsupported {
                algorithm: algorithm.label(),
                reason: "cuBLASLt's FP8 matmul runs here without a fused epilogue: use \
                         Algorithm::Auto or name an FP8 kernel"
                    .into(),
            });
        }
        let p = as_problem(&problem);
        let [stored_a, stored_b, stored_c] = p.stored();
        let layers = problem.groups.layers(&problem.shape);
        let members = problem.groups.members(&problem.shape).count;
        self.check_buffer(stored_a, &a.codes, cublas)?;
        self.check_buffer(stored_b, &b.codes, cublas)?;
        self.check_buffer(stored_c, &c.as_memory(), cublas)?;
        for (stored, len, layers) in [
            (
                stored_a,
                location(&a.codes).2,
                (layers.count, layers.stride_a),
            ),
            (stored_b, location(&b.codes).2, (members, layers.stride_b)),
            (
                stored_c,
                location(&c.as_memory()).2,
                (members, layers.stride_c),
            ),
        ] {
            check_layers(stored, len, layers)?;
        }
        for (operand, x, cols, layers) in [
            (quantize::Operand::A, &a, problem.shape.m, layers.count),
            (quantize::Operand::B, &b, problem.shape.n, members),
        ] {
            let needed = layers as usize
                * quantize::scale_count(operand, problem.scaling, problem.shape.k, cols);
            let name = if operand == quantize::Operand::A {
                'A'
            } else {
                'B'
            };
            // The block kernels copy A's block scales into shared memory in 16-byte pieces
            // (`wgmma-fp8-block:8` and `:9`); B's, and one scale per tensor, are read one by one.
            let element_aligned =
                cublas || problem.scaling == Scaling::PerTensor || operand == quantize::Operand::B;
            let scale_shape = (name, needed as u32, 1, needed as u32);
            self.check_buffer(scale_shape, &x.scales, element_aligned)
                .map_err(|e| match e {
                    GemmError::BufferTooSmall { len, .. } => GemmError::ScalesMisshaped {
                        operand: name,
                        len,
                        needed,
                        scaling: scaling_name(problem.scaling),
                    },
                    e => e,
                })?;
        }
        let scalars = (problem.alpha, problem.beta);
        let failed = |e: anyhow::Error| GemmError::Launch(format!("{e:#}"));
        let mut amax = None;
        match (&self.backend, &a, &b, c) {
            (Backend::Gpu(gpu), a, b, MemoryMut::Device { address: c, .. }) => {
                let words = epilogue
                    .amax()
                    .then(|| DeviceBuffer::<u32>::zeroed(3))
                    .transpose()
                    .map_err(|e| {
                        GemmError::Launch(format!("cannot allocate the amax's words: {e}"))
                    })?;
                let pointers = Fp8Pointers {
                    a: device(&a.codes),
                    b: device(&b.codes),
                    scale_a: device(&a.scales),
                    scale_b: device(&b.scales),
                    c,
                    table: table.as_ref().map_or(0, device),
                    bias: bias.as_ref().map_or(0, device),
                    amax: words.as_ref().map_or(0, |w| w.as_device_ptr().as_raw()),
                };
                match &launch {
                    Some(launch) => gpu
                        .fp8_kernel(launch, problem.shape, scalars, (problem.groups, epilogue))
                        .and_then(|enqueue| enqueue(&pointers))
                        .map_err(failed)?,
                    None => {
                        let lt = CublasLtFp8::new(
                            &problem.shape,
                            (problem.scaling, problem.b_format),
                            problem.alpha,
                            problem.beta,
                            false,
                        )
                        .map_err(failed)?;
                        let q = pointers;
                        unsafe {
                            lt.enqueue(gpu.stream().as_inner(), q.a, q.b, q.c, q.scale_a, q.scale_b)
                        }
                        .map_err(failed)?;
                    }
                }
                self.synchronize().map_err(|e| {
                    GemmError::Launch(format!("{} failed on the device ({e})", choice.entry))
                })?;
                if let Some(words) = words {
                    let mut read = [0u32; 3];
                    words.copy_to(&mut read[..]).map_err(|e| {
                        GemmError::Launch(format!("reading the amax's words failed: {e}"))
                    })?;
                    amax = Some(kernels_gpu::fused::amax_of(&read));
                }
            }
            (Backend::Emulator, a, b, MemoryMut::Host(c)) => {
                let launch = launch.expect("the emulator refuses cuBLASLt in fp8_choice");
                let before = c.to_vec();
                let ops = Fp8Operands {
                    a: host(&a.codes),
                    b: host(&b.codes),
                    scale_a: host(&a.scales),
                    scale_b: host(&b.scales),
                    c: &before,
                    groups: problem.groups,
                    table: table.as_ref().map_or(&[], host),
                    fused: (epilogue, bias.as_ref().map_or(&[], host)),
                };
                let mut words = crate::emulator::AMAX_ZEROED;
                crate::emulator::launch_fp8(
                    &launch,
                    &problem.shape,
                    scalars,
                    &ops,
                    (c, &mut words),
                )
                .map_err(failed)?;
                amax = epilogue.amax().then(|| kernels_gpu::fused::amax_of(&words));
            }
            _ => unreachable!("every operand's memory was checked against the backend"),
        }
        Ok((choice, amax))
    }

    /// The FP8 problem of `config` and the operands' scaling, validated.
    fn fp8_problem(&self, config: &GemmConfig, a: &Fp8<'_>, b: &Fp8<'_>) -> Result<Fp8Problem> {
        if (config.transa, config.transb) != (Transpose::Yes, Transpose::No) {
            return Err(GemmError::InvalidConfig(format!(
                "an FP8 GEMM is C = α·Aᵀ·B + β·C with A stored k×m and B k×n, both K-major as the \
                 tensor cores read them: give `transposes(Transpose::Yes, Transpose::No)` \
                 (got op(A) = {:?}, op(B) = {:?})",
                config.transa, config.transb
            )));
        }
        if a.scaling != b.scaling {
            return Err(GemmError::InvalidConfig(format!(
                "A is scaled {} and B {}: the FP8 kernels and cuBLASLt take both per tensor or both per block",
                scaling_name(a.scaling),
                scaling_name(b.scaling)
            )));
        }
        if a.format != Format::E4m3 {
            return Err(GemmError::InvalidConfig(
                "A must be e4m3: the FP8 kernels take e5m2 for B only (the backward pass's \
                 gradients, `Fp8::e5m2` on B)"
                    .into(),
            ));
        }
        if b.format == Format::E5m2 && b.scaling != Scaling::PerTensor {
            return Err(GemmError::InvalidConfig(
                "an e5m2 B takes one scale per tensor: the block-scaled kernels read e4m3 only"
                    .into(),
            ));
        }
        let problem = Fp8Problem {
            b_format: b.format,
            shape: config.shape(),
            alpha: config.alpha as f32,
            beta: config.beta as f32,
            scaling: a.scaling,
            init: Init::Random,
            seed: 0,
            outliers: false,
            epilogue: config.epilogue,
            groups: match config.groups {
                GroupLayout::None if config.batch.is_batched() => Fp8Groups::batch(config.batch),
                GroupLayout::None => Fp8Groups::NONE,
                layout => Fp8Groups::grouped_as(layout, config.batch.count),
            },
        };
        if problem.groups.strided.is_some() {
            check_fp8_batch(&problem)?;
        }
        // The kernels find a group's operands and scales by their packed sizes.
        let packed =
            Fp8Groups::grouped_as(config.groups, config.batch.count).layers(&problem.shape);
        if problem.groups.grouped()
            && problem.groups.strided.is_none()
            && (
                config.batch.stride_a,
                config.batch.stride_b,
                config.batch.stride_c,
            ) != (packed.stride_a, packed.stride_b, packed.stride_c)
        {
            return Err(GemmError::InvalidConfig(format!(
                "a grouped FP8 GEMM takes its groups packed: strides (A, B, C) = ({}, {}, {}), got ({}, {}, {})",
                packed.stride_a,
                packed.stride_b,
                packed.stride_c,
                config.batch.stride_a,
                config.batch.stride_b,
                config.batch.stride_c
            )));
        }
        as_problem(&problem)
            .validate()
            .map_err(|e| GemmError::InvalidConfig(format!("{e:#}")))?;
        crate::fp8::grouped::validate_if_grouped(&problem)
            .map_err(|e| GemmError::InvalidConfig(format!("{e:#}")))?;
        Ok(problem)
    }

    /// What runs an FP8 problem: a kernel's launch, or `None` for cuBLASLt.
    fn fp8_choice(
        &self,
        algorithm: &Algorithm,
        problem: &Fp8Problem,
    ) -> Result<(Choice, Option<Launch>)> {
        let unsupported = |reason: String| GemmError::Unsupported {
            algorithm: algorithm.label(),
            reason,
        };
        let (variant, tile) = match algorithm {
            Algorithm::Auto(_) => (Variant::Auto(Math::Strict), None),
            Algorithm::Kernel { name, tile } => (
                registry::find(name).map_err(|e| GemmError::UnknownAlgorithm(format!("{e:#}")))?,
                *tile,
            ),
            Algorithm::Cublas if problem.scaling == Scaling::Block => {
                return Err(unsupported(
                    "cuBLASLt reads B's block scales in a layout of its own (one per 128×128 \
                     of Bᵀ); this call takes the kernels' layout: use Algorithm::Auto"
                        .into(),
                ))
            }
            Algorithm::Cublas if problem.groups.grouped() => {
                return Err(unsupported(
                    "cuBLASLt's batched FP8 matmul reads one scale per tensor for the whole \
                     batch, and has no grouped layouts; this call takes each member's own: use \
                     Algorithm::Auto"
                        .into(),
                ))
            }
            Algorithm::Cublas => (Variant::Cublas(CublasMath::Default), None),
            Algorithm::Tuned(_) => {
                return Err(unsupported(
                    "FP8 is not tuned: use Algorithm::Auto, or name a kernel".into(),
                ))
            }
        };
        let (launch, label) = crate::fp8::run::plan_launch(variant, tile, problem)
            .map_err(|e| unsupported(format!("{e:#}")))?;
        // The block kernel reads a scale per block: one per tensor would be read past its end.
        if problem.scaling == Scaling::PerTensor
            && launch
                .as_ref()
                .is_some_and(|l| l.name().contains("fp8_block"))
        {
            return Err(unsupported(
                "it reads one scale per block; these operands have one per tensor: give them as Fp8::per_block, or use wgmma-fp8".into(),
            ));
        }
        let device = match &self.backend {
            Backend::Gpu(gpu) => {
                if gpu.arch_number() != 90 {
                    return Err(GemmError::NeedsArch {
                        kernel: label,
                        needs: "sm_90a",
                        device: self.device(),
                    });
                }
                self.device()
            }
            Backend::Emulator if launch.is_none() => {
                return Err(unsupported("cuBLASLt runs only on a GPU".into()))
            }
            Backend::Emulator => self.device(),
        };
        let choice = Choice {
            entry: launch
                .as_ref()
                .map_or("cublasLtMatmul".to_string(), |l| l.name().to_string()),
            variant: label,
            arithmetic: kernels_gpu::gemm::Arithmetic::Native,
            reason: match algorithm {
                Algorithm::Auto(_) => "auto's rule for FP8 (fp8::run::auto_choice)".into(),
                _ => "named by the caller".into(),
            },
            device,
            tuning: None,
        };
        Ok((choice, launch))
    }
}

/// What a strided FP8 batch needs beyond the common checks: strides that the TMA engine can
/// step by (16 bytes: a multiple of 16 codes of A and B, of 8 elements of bf16 C).
fn check_fp8_batch(p: &Fp8Problem) -> Result<()> {
    match as_problem(p).batch_stride_off_tma() {
        Some((name, stride, bytes)) => Err(GemmError::InvalidConfig(format!(
            "the batch stride of {name}, {stride} elements, is not a multiple of 16 bytes: the \
             TMA engine steps from member to member by it (a multiple of {} elements)",
            16 / bytes
        ))),
        None => Ok(()),
    }
}

/// The problem as the common validation and buffer checks see it: FP8, TN.
fn as_problem(p: &Fp8Problem) -> Problem {
    Problem {
        shape: p.shape,
        transposes: Transposes::new(Transpose::Yes, Transpose::No),
        dtype: p.dtype(),
        alpha: p.alpha as f64,
        beta: p.beta as f64,
        init: Init::Random,
        seed: 0,
        epilogue: p.epilogue,
        batch: p.groups.layers(&p.shape),
        groups: p.groups.layout,
    }
}

/// That `len` elements hold `count` layers `stride` apart of the stored matrix `(operand,
/// rows, cols, ld)`.
fn check_layers(
    (operand, rows, cols, ld): (char, u32, u32, u32),
    len: usize,
    (count, stride): (u32, u64),
) -> Result<()> {
    let needed = (count as u64 - 1) * stride + ld as u64 * (cols as u64 - 1) + rows as u64;
    if count > 1 && (len as u64) < needed {
        return Err(GemmError::BatchTooSmall {
            operand,
            len,
            needed,
            count,
            stride,
        });
    }
    Ok(())
}

fn scaling_name(scaling: Scaling) -> &'static str {
    match scaling {
        Scaling::PerTensor => "per tensor",
        Scaling::Block => "per block",
    }
}

/// A checked device operand's address.
fn device<T>(m: &Memory<'_, T>) -> u64 {
    match m {
        Memory::Device { address, .. } => *address,
        Memory::Host(_) => unreachable!("checked: device memory"),
    }
}

/// A checked host operand.
fn host<'a, T>(m: &Memory<'a, T>) -> &'a [T] {
    match m {
        Memory::Host(h) => h,
        Memory::Device { .. } => unreachable!("checked: host memory"),
    }
}

/// e4m3 codes on the host, for the emulator.
impl Operand<u8> for [u8] {
    fn memory(&self) -> Memory<'_, u8> {
        Memory::Host(self)
    }
}

impl Operand<u8> for Vec<u8> {
    fn memory(&self) -> Memory<'_, u8> {
        Memory::Host(self)
    }
}

/// e4m3 codes on the device.
impl Operand<u8> for cust::memory::DeviceSlice<u8> {
    fn memory(&self) -> Memory<'_, u8> {
        Memory::Device {
            address: self.as_device_ptr().as_raw(),
            len: self.len(),
        }
    }
}

impl Operand<u8> for cust::memory::DeviceBuffer<u8> {
    fn memory(&self) -> Memory<'_, u8> {
        Operand::<u8>::memory(&**self)
    }
}
