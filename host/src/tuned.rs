//! `--variant tuned`: the library's `Algorithm::Tuned` chooses on the run's own problem (its
//! inputs uploaded once for the purpose), then the pipeline runs the choice like any variant:
//! checked against the f64 reference, timed, compared. The command line so exercises the same
//! call a program makes, cache file included, rather than a second implementation of tuning.
use anyhow::{bail, Result};
use gpu_gemm::problem::{Inputs, Problem};
use gpu_gemm::registry::{self, Math, Variant};
use gpu_gemm::{Algorithm, Choice, Element, Gemm, GemmConfig, Tuning};
use kernels_gpu::gemm::Dtype;

/// What `tuned` chose for a problem.
pub struct Resolved {
    /// The kernel to run.
    pub variant: Variant,
    /// Its tile.
    pub tile: Option<u32>,
    /// The report's name for it: `tuned→best:1 (cached)`, `tuned[fp32-accurate]→… (tuned now)`.
    pub label: String,
    /// The library's account: what, where, and why (cached or timed, the times, the file).
    pub choice: Choice,
}

/// `tuned` under `math` for `p` on `gemm`'s backend: reads the cache, or times the candidates.
/// `tile` must be `None`: tuning chooses the tile.
pub fn resolve(gemm: &Gemm, p: &Problem, math: Math, tile: Option<u32>) -> Result<Resolved> {
    if let Some(t) = tile {
        bail!("tuned chooses its own configuration (got --tile {t})");
    }
    let choice = match p.dtype {
        Dtype::F32 => call::<f32>(gemm, p, math)?,
        Dtype::F64 => call::<f64>(gemm, p, math)?,
        Dtype::Bf16 => call::<half::bf16>(gemm, p, math)?,
        Dtype::F16 => call::<half::f16>(gemm, p, math)?,
        Dtype::E4m3 | Dtype::E4m3E5m2 => bail!(
            "tuned runs in the library's types, f32, f64, bf16 and f16; in e4m3 `--variant auto` chooses"
        ),
    };
    let (name, tile) = match choice.variant.split_once(':') {
        Some((name, tile)) => (name, Some(tile.parse()?)),
        None => (choice.variant.as_str(), None),
    };
    let variant = registry::find(name)?;
    let source = match choice.tuning {
        Some(Tuning::Cached { .. }) => "cached",
        Some(Tuning::Measured { .. }) => "tuned now",
        _ => "not tuned: auto's choice",
    };
    let contract = match math {
        Math::Strict => String::new(),
        m => format!("[{}]", m.name()),
    };
    Ok(Resolved {
        variant,
        tile,
        label: format!("tuned{contract}→{} ({source})", choice.variant),
        choice,
    })
}

/// The library's call on the problem's inputs, in `T`.
fn call<T: Element>(gemm: &Gemm, p: &Problem, math: Math) -> Result<Choice> {
    let inputs = Inputs::<T>::generate(p);
    let s = p.shape;
    let config = GemmConfig::new(s.m, s.n, s.k)
        .scale(p.alpha, p.beta)
        .transposes(p.transposes.transa, p.transposes.transb)
        .leading_dimensions(s.lda, s.ldb, s.ldc);
    let a = gemm.upload(&inputs.a.data)?;
    let b = gemm.upload(&inputs.b.data)?;
    let mut c = gemm.upload(&inputs.c.data)?;
    Ok(gemm.run(&config, &Algorithm::Tuned(math), &a, &b, &mut c)?)
}
