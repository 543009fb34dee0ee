//! Running `nvdisasm` on a cubin, and where `cargo xtask sass` keeps that cubin.
//!
//! The one place the reading runs a CUDA tool (the caller finds it in `.tools/`, see `cargo
//! xtask install-cuda-tools`): everything after it works on the text nvdisasm prints, so the
//! unit tests can feed it a hand-written listing instead, on a machine without the tools.
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where `cargo xtask sass` keeps the cubin for `arch`: `target/sass/<arch>/kernels_gpu.cubin`.
pub fn cubin_path(root: &Path, arch: &str) -> PathBuf {
    root.join("target")
        .join("sass")
        .join(arch)
        .join("kernels_gpu.cubin")
}

/// The code sections of a cubin, as `nvdisasm -c` prints them.
///
/// (`nvdisasm -fun` selects functions by symbol *index*, not name, so we disassemble the whole
/// cubin once and cut it into functions with [`parse_functions`](super::parse_functions).)
pub fn disassemble(nvdisasm: &Path, cubin: &Path) -> Result<String> {
    let out = Command::new(nvdisasm)
        .arg("-c")
        .arg(cubin)
        .output()
        .with_context(|| format!("cannot run {}", nvdisasm.display()))?;
    if !out.status.success() {
        bail!(
            "nvdisasm failed on {}:\n{}",
            cubin.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8(out.stdout)?)
}
