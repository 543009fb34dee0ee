//! Every variant `--variant` accepts: the GPU kernels of `kernels_gpu::registry`, and the
//! host-side ones (cuBLAS as the yardstick).
use anyhow::{bail, Result};
pub use kernels_gpu::registry::{Shape, Variant as KernelVariant};

/// What runs under a name.
#[derive(Clone, Copy)]
pub enum Variant {
    Kernel(&'static KernelVariant),
    /// `cublasSgemm`/`cublasDgemm` on the same buffers: the yardstick (GPU only).
    Cublas,
}

impl Variant {
    pub fn name(&self) -> &'static str {
        match self {
            Variant::Kernel(k) => k.name,
            Variant::Cublas => "cublas",
        }
    }

    pub fn summary(&self) -> &'static str {
        match self {
            Variant::Kernel(k) => k.summary,
            Variant::Cublas => "cuBLAS (cublasSgemm/cublasDgemm, default math mode: no TF32), the yardstick (GPU only)",
        }
    }
}

/// Every variant, in course order.
pub fn all() -> Vec<Variant> {
    kernels_gpu::registry::ALL
        .iter()
        .map(Variant::Kernel)
        .collect()
}

/// The variant called `name`, or an error that lists them all.
pub fn find(name: &str) -> Result<Variant> {
    match all().into_iter().find(|v| v.name() == name) {
        Some(v) => Ok(v),
        None => bail!(
            "unknown variant `{name}`; the variants are: {} (`--list` describes them)",
            all()
                .iter()
                .map(|v| v.name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The `--list` text: one line per variant.
pub fn listing() -> String {
    let width = all().iter().map(|v| v.name().len()).max().unwrap_or(0);
    all()
        .iter()
        .map(|v| {
            let extra = match v {
                Variant::Kernel(k) if !k.tiles.is_empty() => format!(
                    " [--tile {}]",
                    k.tiles
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join("|")
                ),
                _ => String::new(),
            };
            format!("{:width$}  {}{extra}\n", v.name(), v.summary())
        })
        .collect()
}

/// Resolves `--tile` for a kernel variant: its default when absent, an error when not accepted.
pub fn resolve_tile(v: &KernelVariant, tile: Option<u32>) -> Result<u32> {
    match (v.tiles, tile) {
        ([], None) => Ok(0),
        ([], Some(t)) => bail!(
            "variant `{}` has no tile parameter (got --tile {t})",
            v.name
        ),
        ([default, ..], None) => Ok(*default),
        (tiles, Some(t)) if tiles.contains(&t) => Ok(t),
        (tiles, Some(t)) => bail!(
            "variant `{}` does not take --tile {t}; it accepts {}",
            v.name,
            tiles
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_variant_lists_the_known_ones() {
        let e = find("v99").err().unwrap().to_string();
        assert!(
            e.contains("unknown variant `v99`") && e.contains("v4"),
            "{e}"
        );
        assert_eq!(find("v4").unwrap().name(), "v4");
    }

    #[test]
    fn tile_parameter_is_checked() {
        let Ok(Variant::Kernel(tiled)) = find("tiled") else {
            panic!()
        };
        assert_eq!(resolve_tile(tiled, None).unwrap(), tiled.tiles[0]);
        assert_eq!(resolve_tile(tiled, Some(8)).unwrap(), 8);
        assert!(resolve_tile(tiled, Some(3))
            .unwrap_err()
            .to_string()
            .contains("accepts"));
        let Ok(Variant::Kernel(v1)) = find("v1") else {
            panic!()
        };
        assert!(resolve_tile(v1, Some(8)).is_err());
    }

    #[test]
    fn listing_has_every_variant() {
        let text = listing();
        for v in all() {
            assert!(text.contains(v.name()));
        }
        assert!(text.contains("--tile 16|1|2|4|8|32"), "{text}");
    }
}
