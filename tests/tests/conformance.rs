//! The randomized conformance test: GEMMs drawn at random, as a program would call them, which
//! `auto` must compute on the emulator wherever cuBLAS computes them.
//!
//! Each problem draws its type and contract (f32 strict, TF32 and FP32-accurate, f64, bf16,
//! f16), its layout (N,N, T,N, N,T, T,T), m, n and k in 1..=96 (so that every edge of every
//! tile, and the transposing copy's 32 × 32 tiles, is crossed somewhere), leading dimensions
//! padded by 0 to 5 elements, and α and β; one problem in four is a strided batch of two or
//! three members, each operand's members packed, padded apart, or (A or B) one matrix that
//! every member shares (a stride of 0). Its result must match an f64 reference within the
//! type's bound, element by element, relative to `|α|·Σ|a·b| + |β·c|` (the error a dot product
//! of that type can make, whatever cancels), plus half a subnormal step of C's type (an f16
//! result below 2⁻¹⁴ is rounded to a fixed step, whatever its scale).
//!
//! What cuBLAS computes and `auto` still refuses is written below, in [`known_gap`], and
//! nowhere else, with the refusal it must meet: a problem on the list must be refused with
//! that message, and one that runs fails the test too, so that the list shrinks as kernels land.
//!
//! A second test draws grouped GEMMs (a mixture of experts' layer, bf16 and f16, every layout):
//! DeepGEMM's masked layout (1 to 5 groups, counts anywhere in 0..=capacity, empty groups
//! included) and its contiguous one (runs of 128 columns, each a group's or padding), every
//! group's columns checked with its own A and every other element of C required unchanged; it
//! prints which kernel `auto` took how often. Its first runs found T,N groups at an m off the
//! 8-element grid with more than 64 tokens, and N,T and T,T groups at such an m, refused in
//! both layouts: they run now (the swapped tiles; B, and A, copied as a batch's are).
//!
//! The draws come from the emulator suite's seed (`tests/lib.rs`, printed in the log;
//! `GEMM_SUITE_SEED=N` replays a run): 200 problems a run (a few seconds), 2000 with
//! `GEMM_FULL_SUITE=1`; 40 grouped GEMMs, 400.
use gpu_gemm::half::{bf16, f16};
use gpu_gemm::{Algorithm, Element, Gemm, GemmConfig, Math, Transpose};
use tests::Sample;

/// splitmix64: enough for drawing sizes, and the same on every machine.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// In `lo..=hi`.
    fn between(&mut self, lo: u32, hi: u32) -> u32 {
        lo + (self.next() % u64::from(hi - lo + 1)) as u32
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[(self.next() % from.len() as u64) as usize]
    }

    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Type {
    F32(Math),
    F64,
    Bf16,
    F16,
}

impl Type {
    const ALL: [Type; 6] = [
        Type::F32(Math::Strict),
        Type::F32(Math::Tf32),
        Type::F32(Math::Fp32Accurate),
        Type::F64,
        Type::Bf16,
        Type::F16,
    ];

    /// The error a result in the type's subnormal range may carry whatever its scale: half the
    /// spacing of the subnormals of C's type (f16's start at 2⁻¹⁴, 2⁻²⁴ apart; bf16's and
    /// f32's at 2⁻¹²⁶, 2⁻¹⁴⁹ apart).
    fn subnormal_floor(self) -> f64 {
        match self {
            Type::F16 => 2f64.powi(-25),
            Type::F64 => 2f64.powi(-1075),
            _ => 2f64.powi(-150),
        }
    }

    /// The largest error allowed, relative to `|α|·Σ|a·b| + |β·c|`: k + 2 roundings of the
    /// accumulation type, and for the types that round their inputs or C, those roundings.
    fn bound(self, k: u32) -> f64 {
        let accumulated = |unit: f64| f64::from(k + 2) * unit;
        match self {
            Type::F64 => accumulated(2f64.powi(-53)),
            // Both inputs cut to 10 bits of mantissa (truncated, in the kernels that truncate).
            Type::F32(Math::Tf32) => 2.0 * 2f64.powi(-10) + accumulated(2f64.powi(-24)),
            // 3xTF32 drops each product's low × low part, at most 2⁻²² of it.
            Type::F32(Math::Fp32Accurate) => 2f64.powi(-22) + accumulated(2f64.powi(-24)),
            Type::F32(_) => accumulated(2f64.powi(-24)),
            Type::Bf16 => 2f64.powi(-8) + accumulated(2f64.powi(-24)),
            Type::F16 => 2f64.powi(-11) + accumulated(2f64.powi(-24)),
        }
    }
}

/// What cuBLAS computes and `auto` does not yet, among the problems drawn here, as the words its
/// refusal must hold; `None` for a problem that must run. Single problems all run since
/// 2026-12-07 (16-bit N,T and T,T at an m or ldc off the 16-byte grid go through a transposed
/// copy of B), and so do batches whose A or B is transposed, unaligned or shared (copied per
/// member). What is left: a 16-bit batch whose members of C do not start 16 bytes apart (C is
/// stored through the TMA engine's layers, and is not copied).
fn known_gap(t: Type, config: &GemmConfig) -> Option<&'static str> {
    let b = &config.batch;
    let sixteen_bit = matches!(t, Type::Bf16 | Type::F16);
    (sixteen_bit && b.count > 1 && !b.stride_c.is_multiple_of(8))
        .then_some("not a multiple of 16 bytes")
}

/// One problem drawn: its type, its configuration, and its seed for the inputs.
fn draw_problem(draw: &mut Draw) -> (Type, GemmConfig) {
    let t = draw.pick(&Type::ALL);
    let size = |draw: &mut Draw| match draw.between(0, 3) {
        0 => draw.between(1, 16),
        _ => draw.between(17, 96),
    };
    let (m, n, k) = (size(draw), size(draw), size(draw));
    let layout = (
        draw.pick(&[Transpose::No, Transpose::Yes]),
        draw.pick(&[Transpose::No, Transpose::Yes]),
    );
    let stored_rows = |op: Transpose, rows: u32, cols: u32| match op {
        Transpose::No => rows,
        Transpose::Yes => cols,
    };
    let pad = |draw: &mut Draw| match draw.between(0, 2) {
        0 => 0,
        _ => draw.between(1, 5),
    };
    let lda = stored_rows(layout.0, m, k) + pad(draw);
    let ldb = stored_rows(layout.1, k, n) + pad(draw);
    let ldc = m + pad(draw);
    let mut config = GemmConfig::new(m, n, k)
        .transposes(layout.0, layout.1)
        .leading_dimensions(lda, ldb, ldc);
    config.alpha = draw.pick(&[1.0, 0.5, -2.0]);
    config.beta = draw.pick(&[0.0, 0.0, 1.0, -0.25]);
    if draw.between(0, 3) == 0 {
        // Each member right after the last, a few elements apart, or (A and B) one matrix that
        // every member shares: a stride of 0.
        let mut stride = |matrix: u32, may_share: bool| match draw.between(0, 3) {
            0 if may_share => 0,
            1 => u64::from(matrix + draw.between(1, 7)),
            _ => u64::from(matrix),
        };
        let (a, b) = (
            stride(lda * stored_rows(layout.0, k, m), true),
            stride(ldb * stored_rows(layout.1, n, k), true),
        );
        let c = stride(ldc * n, false);
        config = config.batch(draw.between(2, 3), a, b, c);
    }
    (t, config)
}

/// A problem's operands as they lie in memory (every member, the padding and the gaps between
/// them), and C before and after the run.
struct Laid<T> {
    a: Vec<T>,
    b: Vec<T>,
    c_before: Vec<T>,
    c: Vec<T>,
}

impl<T: Element> Laid<T> {
    /// Values in [-1, 1) for every element of A, B and C that `config`'s members reach.
    fn draw(config: &GemmConfig, draw: &mut Draw) -> Self {
        let columns = |op: Transpose, rows: u32, cols: u32| match op {
            Transpose::No => cols,
            Transpose::Yes => rows,
        };
        let (m, n, k) = (config.m, config.n, config.k);
        let batch = config.batch;
        let members = batch.count.max(1) as usize;
        // Every member's elements: the last one's start plus one matrix.
        let len = |matrix: u32, stride: u64| (members - 1) * stride as usize + matrix as usize;
        let a_len = len(config.lda * columns(config.transa, m, k), batch.stride_a);
        let b_len = len(config.ldb * columns(config.transb, k, n), batch.stride_b);
        let c_len = len(config.ldc * n, batch.stride_c);
        let mut values =
            |len: usize| -> Vec<T> { (0..len).map(|_| T::from_f64(draw.unit())).collect() };
        let (a, b, c_before) = (values(a_len), values(b_len), values(c_len));
        let c = c_before.clone();
        Laid { a, b, c_before, c }
    }

    /// Checks C(i, j) of the problem whose A, B and C start at elements `from` against an f64
    /// reference: within `t`'s bound of `|α|·Σ|a·b| + |β·c|`, plus its subnormal floor. Marks
    /// the element `written`; returns its error relative to that scale.
    fn check(
        &self,
        (t, config): (Type, &GemmConfig),
        (a_from, b_from, c_from): (usize, usize, usize),
        (i, j): (usize, usize),
        written: &mut [bool],
    ) -> Result<f64, String> {
        let (lda, ldb, ldc) = (
            config.lda as usize,
            config.ldb as usize,
            config.ldc as usize,
        );
        let a_at = |i: usize, l: usize| match config.transa {
            Transpose::No => self.a[a_from + i + l * lda].to_f64(),
            Transpose::Yes => self.a[a_from + l + i * lda].to_f64(),
        };
        let b_at = |l: usize, j: usize| match config.transb {
            Transpose::No => self.b[b_from + l + j * ldb].to_f64(),
            Transpose::Yes => self.b[b_from + j + l * ldb].to_f64(),
        };
        let (mut dot, mut magnitude) = (0f64, 0f64);
        for l in 0..config.k as usize {
            let product = a_at(i, l) * b_at(l, j);
            dot += product;
            magnitude += product.abs();
        }
        let at = c_from + i + j * ldc;
        written[at] = true;
        let old = self.c_before[at].to_f64();
        let want = config.alpha * dot + config.beta * old;
        let scale = config.alpha.abs() * magnitude + (config.beta * old).abs();
        let got = self.c[at].to_f64();
        let error = (got - want).abs();
        let (bound, floor) = (t.bound(config.k), t.subnormal_floor());
        if error > bound * scale + floor {
            return Err(format!(
                "C({i}, {j}) = {got} where the reference is {want:e}: error {error:.2e}, above \
                 {bound:.2e} of its scale {scale:.2e} (+ {floor:.1e})"
            ));
        }
        Ok(error / scale.max(f64::MIN_POSITIVE))
    }

    /// The first element of C that no check marked `written` and that the run changed: C's
    /// padding and the gaps between members keep what they held.
    fn changed_outside(&self, written: &[bool]) -> Option<usize> {
        (0..self.c.len()).find(|&at| {
            !written[at] && self.c[at].to_f64().to_bits() != self.c_before[at].to_f64().to_bits()
        })
    }
}

/// Runs `auto` on one problem; `Err` says how it failed.
fn conform<T: Element>(t: Type, config: &GemmConfig, draw: &mut Draw) -> Result<String, String> {
    let math = match t {
        Type::F32(math) => math,
        _ => Math::Strict,
    };
    let mut laid = Laid::<T>::draw(config, draw);
    let ran = Gemm::emulator().run(
        config,
        &Algorithm::Auto(math),
        &laid.a,
        &laid.b,
        &mut laid.c,
    );
    match (ran, known_gap(t, config)) {
        (Err(e), Some(refusal)) if e.to_string().contains(refusal) => {
            return Ok(format!("refused (known gap: {refusal})"))
        }
        (Err(e), _) => return Err(format!("refused: {e}")),
        (Ok(choice), Some(_)) => {
            return Err(format!(
                "ran ({}), but `known_gap` lists it: take it off the list",
                choice.variant
            ))
        }
        (Ok(_), None) => {}
    }
    let batch = config.batch;
    let mut worst = 0f64;
    // C's elements that some member's op(C) holds; every other element keeps what it held.
    let mut written = vec![false; laid.c.len()];
    for member in 0..batch.count.max(1) as usize {
        let from = (
            member * batch.stride_a as usize,
            member * batch.stride_b as usize,
            member * batch.stride_c as usize,
        );
        for j in 0..config.n as usize {
            for i in 0..config.m as usize {
                let error = laid
                    .check((t, config), from, (i, j), &mut written)
                    .map_err(|e| format!("member {member}: {e}"))?;
                worst = worst.max(error);
            }
        }
    }
    if let Some(at) = laid.changed_outside(&written) {
        return Err(format!(
            "wrote element {at} of C, outside every member's m × n"
        ));
    }
    Ok(format!("error {worst:.1e} of the scale"))
}

/// Fails with every failure of `count` draws of `what`, and the seed that replays them.
fn none_failed(failures: &[String], count: usize, what: &str, sample: &Sample) {
    assert!(
        failures.is_empty(),
        "{} of {count} random {what} failed ({}):\n{}",
        failures.len(),
        sample.describe(),
        failures.join("\n")
    );
}

#[test]
fn auto_computes_random_problems_in_every_type_and_layout() {
    let sample = Sample::from_env();
    let (seed, count) = match sample {
        Sample::Full => (1, 2000),
        Sample::Seeded(seed) => (seed, 200),
    };
    let mut draw = Draw(seed ^ 0x636f_6e66_6f72_6d73);
    let mut failures = Vec::new();
    let (mut gaps, mut batches) = (0, 0);
    for number in 0..count {
        let (t, config) = draw_problem(&mut draw);
        batches += usize::from(config.batch.count > 1);
        let outcome = match t {
            Type::F32(_) => conform::<f32>(t, &config, &mut draw),
            Type::F64 => conform::<f64>(t, &config, &mut draw),
            Type::Bf16 => conform::<bf16>(t, &config, &mut draw),
            Type::F16 => conform::<f16>(t, &config, &mut draw),
        };
        let b = config.batch;
        let batch = if b.count > 1 {
            format!(
                " batch {} strides {} {} {}",
                b.count, b.stride_a, b.stride_b, b.stride_c
            )
        } else {
            String::new()
        };
        let what = format!(
            "#{number} {t:?} {}×{}×{} {:?}{:?} lda {} ldb {} ldc {} α {} β {}{batch}",
            config.m,
            config.n,
            config.k,
            config.transa,
            config.transb,
            config.lda,
            config.ldb,
            config.ldc,
            config.alpha,
            config.beta
        );
        match outcome {
            Ok(note) => {
                gaps += usize::from(note.starts_with("refused"));
                println!("{what}: {note}");
            }
            Err(e) => failures.push(format!("{what}: {e}")),
        }
    }
    none_failed(&failures, count, "problems", &sample);
    println!("{count} problems ({batches} strided batches), {gaps} refused as known gaps");
}

/// One grouped GEMM drawn (a mixture of experts' layer), bf16 or f16, in any layout, in one of
/// DeepGEMM's two layouts, with the table the kernel reads:
///
/// - **masked** (decode): 1 to 5 groups (experts) of up to `capacity` columns (tokens) each,
///   the counts anywhere in `0..=capacity`, empty groups included. The capacity reaches past 64
///   so that `auto`'s two rules for groups, the swapped tiles up to 64 tokens in T,N and the
///   wide tiles beyond, are both drawn.
/// - **contiguous** (prefill): one B and one C of 1 to 4 runs of 128 columns, each run a group's
///   (of 1 to 3, each with its own A) or padding, which no group owns.
///
/// Leading dimensions and the members' strides are whole 16-byte steps (the TMA engine steps
/// by them).
fn draw_grouped(draw: &mut Draw) -> (Type, GemmConfig, Vec<u32>) {
    let t = draw.pick(&[Type::Bf16, Type::F16]);
    let size = |draw: &mut Draw| match draw.between(0, 3) {
        0 => draw.between(1, 16),
        _ => draw.between(17, 96),
    };
    let (m, k) = (size(draw), size(draw));
    let contiguous = draw.between(0, 3) == 0;
    let n = if contiguous {
        128 * draw.between(1, 4)
    } else {
        match draw.between(0, 2) {
            0 => draw.between(1, 16),
            1 => draw.between(17, 64),
            _ => draw.between(65, 96),
        }
    };
    let layout = (
        draw.pick(&[Transpose::No, Transpose::Yes]),
        draw.pick(&[Transpose::No, Transpose::Yes]),
    );
    let stored_rows = |op: Transpose, rows: u32, cols: u32| match op {
        Transpose::No => rows,
        Transpose::Yes => cols,
    };
    let aligned = |draw: &mut Draw, rows: u32| rows.next_multiple_of(8) + 8 * draw.between(0, 1);
    let lda = aligned(draw, stored_rows(layout.0, m, k));
    let ldb = aligned(draw, stored_rows(layout.1, k, n));
    let ldc = aligned(draw, m);
    let stride = |draw: &mut Draw, matrix: u32| u64::from(matrix + 8 * draw.between(0, 1));
    let config = GemmConfig::new(m, n, k)
        .transposes(layout.0, layout.1)
        .leading_dimensions(lda, ldb, ldc);
    let sa = stride(draw, lda * stored_rows(layout.0, k, m));
    let (mut config, table) = if contiguous {
        let groups = draw.between(1, 3);
        let runs = (0..n / 128)
            .map(|_| match draw.between(0, 4) {
                0 => u32::MAX,
                _ => draw.between(0, groups - 1),
            })
            .collect();
        (config.contiguous_groups(groups, sa), runs)
    } else {
        let groups = draw.between(1, 5);
        let counts = (0..groups)
            .map(|_| match draw.between(0, 3) {
                0 => 0,
                1 => n,
                _ => draw.between(1, n),
            })
            .collect();
        let sb = stride(draw, ldb * stored_rows(layout.1, n, k));
        let sc = stride(draw, ldc * n);
        (config.masked_groups(groups, sa, sb, sc), counts)
    };
    config.alpha = draw.pick(&[1.0, 0.5, -2.0]);
    config.beta = draw.pick(&[0.0, 0.0, 1.0, -0.25]);
    (t, config, table)
}

/// Runs `auto` on one grouped GEMM: every column a group owns (masked: below its count;
/// contiguous: its runs) against an f64 reference within the type's bound, with the group's
/// own A; every other element of C as it was.
fn conform_grouped<T: Element>(
    t: Type,
    config: &GemmConfig,
    table: &[u32],
    draw: &mut Draw,
) -> Result<String, String> {
    let mut laid = Laid::<T>::draw(config, draw);
    let choice = Gemm::emulator()
        .run_grouped(
            config,
            &Algorithm::Auto(Math::Strict),
            &laid.a,
            &laid.b,
            table,
            &mut laid.c,
        )
        .map_err(|e| format!("refused: {e}"))?;
    let batch = config.batch;
    let members = batch.count as usize;
    // The columns the groups own: (group, its member of B and C, column).
    let owned: Vec<(usize, usize, usize)> = if config.groups == gpu_gemm::GroupLayout::Masked {
        (0..members)
            .flat_map(|g| (0..table[g] as usize).map(move |j| (g, g, j)))
            .collect()
    } else {
        (0..config.n as usize)
            .filter_map(|j| {
                let g = table[j / 128] as usize;
                (g < members).then_some((g, 0, j))
            })
            .collect()
    };
    let mut worst = 0f64;
    let mut written = vec![false; laid.c.len()];
    for (group, member, j) in owned {
        let from = (
            group * batch.stride_a as usize,
            member * batch.stride_b as usize,
            member * batch.stride_c as usize,
        );
        for i in 0..config.m as usize {
            let error = laid
                .check((t, config), from, (i, j), &mut written)
                .map_err(|e| format!("{}: group {group}: {e}", choice.variant))?;
            worst = worst.max(error);
        }
    }
    if let Some(at) = laid.changed_outside(&written) {
        return Err(format!(
            "{}: wrote element {at} of C, outside every group's columns",
            choice.variant
        ));
    }
    Ok(format!(
        "{} — error {worst:.1e} of the scale",
        choice.variant
    ))
}

#[test]
fn auto_computes_random_grouped_gemms_in_every_layout() {
    let sample = Sample::from_env();
    let (seed, count) = match sample {
        Sample::Full => (1, 400),
        Sample::Seeded(seed) => (seed, 40),
    };
    let mut draw = Draw(seed ^ 0x6772_6f75_7073);
    let mut failures = Vec::new();
    let mut kernels = std::collections::BTreeMap::<String, usize>::new();
    for number in 0..count {
        let (t, config, table) = draw_grouped(&mut draw);
        let outcome = match t {
            Type::Bf16 => conform_grouped::<bf16>(t, &config, &table, &mut draw),
            _ => conform_grouped::<f16>(t, &config, &table, &mut draw),
        };
        let b = config.batch;
        let what = format!(
            "#{number} {t:?} {}×{}×{} {:?}{:?} {:?} lda {} ldb {} ldc {} α {} β {} table \
             {table:?} strides {} {} {}",
            config.m,
            config.n,
            config.k,
            config.transa,
            config.transb,
            config.groups,
            config.lda,
            config.ldb,
            config.ldc,
            config.alpha,
            config.beta,
            b.stride_a,
            b.stride_b,
            b.stride_c
        );
        match outcome {
            Ok(note) => {
                let kernel = note.split(" — ").next().unwrap_or_default().to_string();
                *kernels.entry(kernel).or_default() += 1;
                println!("{what}: {note}");
            }
            Err(e) => failures.push(format!("{what}: {e}")),
        }
    }
    none_failed(&failures, count, "grouped GEMMs", &sample);
    println!("{count} grouped GEMMs, by kernel: {kernels:?}");
}
