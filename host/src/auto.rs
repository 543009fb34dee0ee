//! `--variant auto`: the fastest kernel for a shape and dtype, from a table measured on a GPU.
//!
//! The rule, in full:
//! 1. The candidates are the kernels whose arithmetic is the element type's own fused
//!    multiply-add (`Arithmetic::Native`): `auto` never trades accuracy for speed. In f32 that
//!    means the CUDA-core kernels (TF32 and 3xTF32 are chosen by name, not by `auto`); in f64 it
//!    includes the FP64 tensor cores, whose DMMA is IEEE FP64 fused multiply-add; in bf16 and
//!    f16 the 16-bit tensor-core kernels (exact products, f32 accumulation, C rounded once).
//! 2. [`TABLE`] holds, per dtype and measured shape, the fastest candidate (median, checks
//!    passing). `host experiment auto` measures it; `host/src/auto-table.csv` is its output,
//!    copied here from the results folder (the README's "Regenerate `auto`'s table").
//! 3. A problem takes the choice of the table row of its dtype whose shape is nearest in
//!    log₂ m + log₂ n + log₂ k distance (ties: the first row), provided the kernel supports
//!    the shape; otherwise, or with no row for the dtype, the dtype's [`fallback`]: `best:1`
//!    in f32 and f64, `wgmma-16bit:1` in bf16 and f16 (the 16-bit pipeline with the fewest
//!    constraints; on a GPU other than an H100/H200 the backend says that it needs sm_90a, and
//!    for a shape it does not support `plan` names the constraint). The 16-bit rows come from
//!    `host experiment auto --dtype bf16,f16`.
use crate::registry::{self, Variant};
use anyhow::{anyhow, bail, Context as _, Result};
use kernels_gpu::gemm::Dtype;
use kernels_gpu::registry::Shape;

/// The measured table (see the module documentation).
pub const TABLE: &str = include_str!("auto-table.csv");

/// What `auto` runs in f32 and f64 when the table has nothing for a problem.
pub const FALLBACK: (&str, u32) = ("best", 1);

/// What `auto` runs in bf16 and f16 when the table has nothing for a problem.
pub const FALLBACK_16BIT: (&str, u32) = ("wgmma-16bit", 1);

/// The variant and tile `auto` runs in `dtype` when the table has nothing for a problem.
pub fn fallback(dtype: Dtype) -> (&'static str, u32) {
    if dtype.is_16bit() {
        FALLBACK_16BIT
    } else {
        FALLBACK
    }
}

/// One measured row: the shape and the fastest candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub dtype: Dtype,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub variant: String,
    /// `--tile`, `-` in the CSV for a kernel without one.
    pub tile: Option<u32>,
}

/// The CSV header `host experiment auto` writes and [`parse`] reads.
pub const HEADER: &str = "dtype,m,n,k,variant,tile,median_ms,tflops,cublas_ratio,device";

/// Parses the table: [`HEADER`], then one row per line (`#` lines are comments).
pub fn parse(text: &str) -> Result<Vec<Row>> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    match lines.next() {
        Some((_, header)) if header.trim() == HEADER => {}
        other => bail!("auto table: expected the header `{HEADER}`, found {other:?}"),
    }
    lines
        .map(|(i, line)| {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            let row = (|| -> Result<Row> {
                if f.len() != HEADER.split(',').count() {
                    bail!("{} fields", f.len());
                }
                let dtype = match f[0] {
                    "f32" => Dtype::F32,
                    "f64" => Dtype::F64,
                    "bf16" => Dtype::Bf16,
                    "f16" => Dtype::F16,
                    d => bail!("unknown dtype `{d}`"),
                };
                Ok(Row {
                    dtype,
                    m: f[1].parse()?,
                    n: f[2].parse()?,
                    k: f[3].parse()?,
                    variant: f[4].to_string(),
                    tile: match f[5] {
                        "-" => None,
                        t => Some(t.parse()?),
                    },
                })
            })();
            row.with_context(|| format!("auto table, line {}: `{line}`", i + 1))
        })
        .collect()
}

/// Whether `auto` may choose a variant: a GPU kernel computing in the dtype's own arithmetic.
pub fn is_candidate(v: &Variant) -> bool {
    matches!(v, Variant::Kernel(k) if k.arithmetic == kernels_gpu::gemm::Arithmetic::Native)
}

/// log₂ distance between two shapes.
fn distance(row: &Row, s: &Shape) -> f64 {
    let d = |a: u32, b: u32| ((a.max(1) as f64).log2() - (b.max(1) as f64).log2()).abs();
    d(row.m, s.m) + d(row.n, s.n) + d(row.k, s.k)
}

/// The row of `rows` that decides for (`shape`, `dtype`), if any.
pub fn nearest<'a>(rows: &'a [Row], shape: &Shape, dtype: Dtype) -> Option<&'a Row> {
    rows.iter()
        .filter(|r| r.dtype == dtype)
        .fold(None, |best: Option<&Row>, r| match best {
            Some(b) if distance(b, shape) <= distance(r, shape) => Some(b),
            _ => Some(r),
        })
}

/// What `auto` runs for a problem.
#[derive(Clone)]
pub struct Choice {
    pub variant: Variant,
    pub tile: Option<u32>,
    /// The table row that decided it; `None` for the [`fallback`].
    pub row: Option<Row>,
}

impl Choice {
    /// `best:1`, `gemm128`: as tables show a variant and tile.
    pub fn label(&self) -> String {
        match self.tile {
            Some(t) => format!("{}:{t}", self.variant.name()),
            None => self.variant.name().to_string(),
        }
    }
}

/// What `auto` runs for a problem (see the module documentation for the rule).
pub fn choose(shape: &Shape, dtype: Dtype) -> Result<Choice> {
    choose_from(&parse(TABLE)?, shape, dtype)
}

/// [`choose`] by the rows of a given table.
// ANCHOR: core_loop
pub fn choose_from(rows: &[Row], shape: &Shape, dtype: Dtype) -> Result<Choice> {
    if let Some(row) = nearest(rows, shape, dtype) {
        let v = registry::find(&row.variant)
            .map_err(|e| anyhow!("auto table names `{}`: {e}", row.variant))?;
        let supported = match v {
            Variant::Kernel(k) => (k.supports)(shape, dtype).is_ok() && k.dtypes.contains(&dtype),
            _ => false,
        };
        if supported && is_candidate(&v) {
            return Ok(Choice {
                variant: v,
                tile: row.tile,
                row: Some(row.clone()),
            });
        }
    }
    let (name, tile) = fallback(dtype);
    Ok(Choice {
        variant: registry::find(name)?,
        tile: Some(tile),
        row: None,
    })
}
// ANCHOR_END: core_loop

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(m: u32, n: u32, k: u32) -> Shape {
        Shape {
            m,
            n,
            k,
            lda: m,
            ldb: k,
            ldc: m,
        }
    }

    #[test]
    fn the_table_parses_and_names_candidates_that_run_its_shapes() {
        let rows = parse(TABLE).unwrap();
        assert!(!rows.is_empty());
        for r in &rows {
            let v = registry::find(&r.variant).unwrap();
            assert!(
                is_candidate(&v),
                "{r:?}: not a native-arithmetic GPU kernel"
            );
            registry::resolve_tile(v, r.tile).unwrap();
            let Variant::Kernel(k) = v else {
                unreachable!()
            };
            assert!(k.dtypes.contains(&r.dtype), "{r:?}");
            // Each row chooses for its own shape.
            let c = choose(&shape(r.m, r.n, r.k), r.dtype).unwrap();
            assert_eq!((c.variant.name(), c.tile), (r.variant.as_str(), r.tile));
            assert_eq!(c.row.as_ref(), Some(r));
        }
    }

    #[test]
    fn nearest_shape_in_log_distance_decides() {
        let text = format!(
            "{HEADER}\n# a comment\nf32,1024,1024,8192,split-k,4,0,0,0,x\nf32,4096,4096,4096,big-tile,1,0,0,0,x\nf64,4096,4096,4096,tc-f64,2,0,0,0,x\n"
        );
        let rows = parse(&text).unwrap();
        let pick = |m, n, k, d| nearest(&rows, &shape(m, n, k), d).map(|r| r.variant.as_str());
        assert_eq!(pick(1000, 1000, 9000, Dtype::F32), Some("split-k"));
        assert_eq!(pick(3000, 5000, 4000, Dtype::F32), Some("big-tile"));
        assert_eq!(pick(16384, 16384, 16384, Dtype::F32), Some("big-tile"));
        assert_eq!(pick(64, 64, 64, Dtype::F64), Some("tc-f64"));
    }

    #[test]
    fn a_malformed_table_is_refused_with_its_line() {
        assert!(parse("dtype,m\nf32,1").is_err());
        let e = parse(&format!("{HEADER}\nf8,1,1,1,v1,0,0,0,0,x")).unwrap_err();
        assert!(format!("{e:#}").contains("line 2"), "{e:#}");
        assert!(format!("{e:#}").contains("unknown dtype"), "{e:#}");
    }

    #[test]
    fn no_row_for_the_dtype_falls_back() {
        let rows = parse(&format!("{HEADER}\nf32,64,64,64,v1,0,0,0,0,x")).unwrap();
        assert!(nearest(&rows, &shape(8, 8, 8), Dtype::F64).is_none());
    }

    #[test]
    fn the_16_bit_types_fall_back_to_the_16_bit_kernel() {
        // A table of f32 rows only: the 16-bit problems have no row and fall back.
        let f32_only = parse(&format!("{HEADER}\nf32,64,64,64,gemm128,-,0,0,0,x")).unwrap();
        let problem = |shape, dtype| crate::problem::Problem {
            shape,
            dtype,
            alpha: 1.0,
            beta: 0.0,
            init: crate::problem::Init::Random,
            seed: 1,
        };
        for dtype in [Dtype::Bf16, Dtype::F16] {
            for s in [shape(64, 64, 64), shape(4096, 4096, 4096), shape(8, 1, 8)] {
                let c = choose_from(&f32_only, &s, dtype).unwrap();
                assert_eq!(c.label(), "wgmma-16bit:1", "{dtype:?}");
                assert!(c.row.is_none() && c.variant.dtypes().contains(&dtype));
                assert!(is_candidate(&c.variant));
                // And through the real table, what `--variant auto` runs: a 16-bit kernel.
                let launch = crate::run::plan(Variant::Auto, None, &problem(s, dtype)).unwrap();
                let name = launch.name();
                assert!(
                    name.starts_with("gemm_wgmma_") && name.ends_with(dtype.name()),
                    "{name}"
                );
            }
            // lda = 3 is not a 16-byte row for the TMA: the fallback's constraint is the error.
            let s = Shape {
                lda: 3,
                ..shape(3, 8, 8)
            };
            let e = crate::run::plan(Variant::Auto, None, &problem(s, dtype)).unwrap_err();
            assert!(format!("{e:#}").contains("lda = 3"), "{e:#}");
        }
        // f32 and f64 keep theirs.
        let c = choose_from(&f32_only, &shape(64, 64, 64), Dtype::F64).unwrap();
        assert_eq!(c.label(), "best:1");
    }

    #[test]
    fn rows_of_a_16_bit_type_choose_for_that_type_only() {
        let text = format!(
            "{HEADER}\nbf16,4096,4096,4096,wgmma-16bit,1,0,0,0,x\nf32,4096,4096,4096,gemm128,-,0,0,0,x\n"
        );
        let rows = parse(&text).unwrap();
        let pick = |d| nearest(&rows, &shape(2048, 2048, 2048), d).map(|r| r.variant.as_str());
        assert_eq!(pick(Dtype::Bf16), Some("wgmma-16bit"));
        assert_eq!(pick(Dtype::F32), Some("gemm128"));
        assert_eq!(pick(Dtype::F16), None, "bf16's rows do not decide for f16");
        assert_eq!(rows[0].dtype, Dtype::Bf16);
        assert_eq!(rows[0].tile, Some(1));
    }
}
