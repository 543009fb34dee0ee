//! `cargo xtask gpu-bundle`: everything the GPU machine runs, built here, in one folder.
//!
//! The GPU machine has the NVIDIA driver (and ncu, compute-sanitizer) but no Rust. It gets a copy
//! of the repository with this folder beside it and runs `bash xtask/scripts/gpu-session.sh
//! STEP…` (or the copy of the script in the folder), which finds:
//! - `host`: the release binary, with the kernels of `EMBEDDED_ARCHS` embedded; it loads the driver
//!   at run time and needs no CUDA toolkit (cuBLAS, for `--compare cublas`, is loaded when used);
//! - `tests-<name>`: the release test binaries of the GPU tests ([`GPU_TESTS`]);
//! - `quickstart`, `plan`, `cudarc`, `batch`, `grouped`, `linear`, `decode`: the library's examples ([`EXAMPLES`], `gpu-gemm/examples/`), in release;
//! - `ptx/<arch>/kernels_gpu.ptx`: the PTX the embedded kernels were built from, as files, for `host --ptx` and ncu's source
//!   view;
//! - `gpu-session.sh`, and `BUNDLE.md`: what was built, from which commit, and how to run it;
//! - with `--dev-host`, `host-dev`: the dev-profile host, which the step `dev-vs-release` times
//!   against the release one (`cargo run` without `--release` must not be slow).
use anyhow::{bail, Context, Result};
use ptx_builder::{clear_outer_cargo_env, host_triple, ptx_path, EMBEDDED_ARCHS};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The integration tests that need a GPU, as (package, test target): `tests-<target>` in the
/// bundle.
pub const GPU_TESTS: &[(&str, &str)] = &[("tests", "gpu")];

/// The library's examples the bundle carries (`gpu-gemm/examples/`).
pub const EXAMPLES: &[&str] = &[
    "quickstart",
    "plan",
    "cudarc",
    "batch",
    "grouped",
    "linear",
    "decode",
];

/// The session script, relative to the workspace root.
pub const SESSION_SCRIPT: &str = "xtask/scripts/gpu-session.sh";

fn cargo(root: &Path) -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    clear_outer_cargo_env(&mut cmd);
    cmd.current_dir(root);
    cmd
}

/// The executable of each `--message-format=json` artifact line whose target is named `name`.
fn executables(json_lines: &str, name: &str) -> Vec<PathBuf> {
    json_lines
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["reason"] == "compiler-artifact" && v["target"]["name"] == name)
        .filter_map(|v| v["executable"].as_str().map(PathBuf::from))
        .collect()
}

pub fn run(root: &Path, out: &Path, dev_host: bool) -> Result<()> {
    let start = std::time::Instant::now();
    println!(
        "building the release host (the PTX for {} embedded)…",
        EMBEDDED_ARCHS.join(", ")
    );
    let status = cargo(root)
        .args(["build", "--release", "--package", "host", "--bin", "host"])
        .status()
        .context("cannot run cargo")?;
    if !status.success() {
        bail!("building the release host failed (see above)");
    }
    let host = root.join("target/release/host");
    println!(
        "building the library's examples (release): {}…",
        EXAMPLES.join(", ")
    );
    let mut build_examples = cargo(root);
    build_examples.args(["build", "--release", "--package", "gpu-gemm"]);
    for example in EXAMPLES {
        build_examples.args(["--example", example]);
    }
    let status = build_examples.status().context("cannot run cargo")?;
    if !status.success() {
        bail!("building the library's examples failed (see above)");
    }
    if dev_host {
        println!("building the dev-profile host (`cargo run -p host` without --release)…");
        let status = cargo(root)
            .args(["build", "--package", "host", "--bin", "host"])
            .status()
            .context("cannot run cargo")?;
        if !status.success() {
            bail!("building the dev-profile host failed (see above)");
        }
    }

    let mut tests = Vec::new();
    for &(package, target) in GPU_TESTS {
        println!("building the GPU test `{target}` of {package} (release)…");
        let output = cargo(root)
            .args([
                "test",
                "--release",
                "--no-run",
                "--message-format=json-render-diagnostics",
            ])
            .args(["--package", package, "--test", target])
            .stderr(Stdio::inherit())
            .output()
            .context("cannot run cargo")?;
        if !output.status.success() {
            bail!("building the test `{target}` of {package} failed (see above)");
        }
        match executables(&String::from_utf8_lossy(&output.stdout), target)[..] {
            [ref exe] => tests.push((format!("tests-{target}"), exe.clone())),
            ref found => bail!(
                "cargo reported {} executables for the test `{target}`",
                found.len()
            ),
        }
    }

    // Empty only a folder that holds a bundle (or nothing), never a folder given by mistake.
    let is_bundle = out.join("BUNDLE.md").exists() || out.file_name() == Some(".gpu".as_ref());
    let is_empty = std::fs::read_dir(out).map_or(true, |mut d| d.next().is_none());
    if out.exists() && !is_bundle && !is_empty {
        bail!(
            "{} is not empty and holds no bundle (BUNDLE.md): choose a new or empty folder",
            out.display()
        );
    }
    if out.exists() {
        std::fs::remove_dir_all(out).with_context(|| format!("cannot empty {}", out.display()))?;
    }
    std::fs::create_dir_all(out)?;
    let mut made: Vec<(PathBuf, String)> = Vec::new();
    let mut copy = |from: &Path, to: &str, what: &str| -> Result<()> {
        let dest = out.join(to);
        std::fs::create_dir_all(dest.parent().unwrap())?;
        std::fs::copy(from, &dest)
            .with_context(|| format!("cannot copy {} to {}", from.display(), dest.display()))?;
        made.push((dest, what.to_string()));
        Ok(())
    };
    copy(&host, "host", "release host, PTX and SASS embedded")?;
    for example in EXAMPLES {
        copy(
            &root.join("target/release/examples").join(example),
            example,
            &format!("the library's example `{example}` (gpu-gemm/examples/{example}.rs), release"),
        )?;
    }
    if dev_host {
        let dev = root.join("target/debug/host");
        copy(
            &dev,
            "host-dev",
            "dev-profile host without its debug info, for dev-vs-release",
        )?;
        // 100 MiB with it; the code, and so the timing, is the same without.
        strip_debug_info(&out.join("host-dev"))?;
    }
    for (name, exe) in &tests {
        copy(exe, name, "GPU test binary (skips without a GPU)")?;
    }
    for arch in EMBEDDED_ARCHS {
        // The host's build script wrote them when it built the embedded PTX.
        let ptx = ptx_path(root, arch);
        if !ptx.exists() {
            bail!(
                "{} is missing: run `cargo xtask build-ptx --arch {arch}`",
                ptx.display()
            );
        }
        copy(
            &ptx,
            &format!("ptx/{arch}/kernels_gpu.ptx"),
            "as embedded, for host --ptx",
        )?;
    }
    copy(
        &root.join(SESSION_SCRIPT),
        "gpu-session.sh",
        "the session script",
    )?;

    let commit = Command::new("git")
        .args(["describe", "--always", "--dirty", "--abbrev=12"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
    let mut listing = String::new();
    for (path, what) in &made {
        let bytes = std::fs::metadata(path)?.len();
        listing += &format!(
            "- `{}` ({:.1} MiB): {what}\n",
            rel(path),
            bytes as f64 / (1 << 20) as f64
        );
    }
    let how = usage(&rel(out));
    std::fs::write(
        out.join("BUNDLE.md"),
        format!(
            "# GPU bundle of {commit}\n\nMade by `cargo xtask gpu-bundle`.\n\n{listing}\n{how}"
        ),
    )?;
    println!(
        "\nbundled {commit} into {} in {:.0} s:\n{listing}\n{how}",
        rel(out),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Removes the debug sections of a binary: `strip`, or the toolchain's `llvm-strip`.
fn strip_debug_info(binary: &Path) -> Result<()> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let mut strips = vec![PathBuf::from("strip")];
    if let (Ok(sysroot), Ok(triple)) = (
        Command::new(&rustc).args(["--print", "sysroot"]).output(),
        host_triple(&rustc),
    ) {
        let sysroot = String::from_utf8_lossy(&sysroot.stdout).trim().to_string();
        strips.push(
            Path::new(&sysroot)
                .join("lib/rustlib")
                .join(triple)
                .join("bin/llvm-strip"),
        );
    }
    for strip in strips {
        let status = Command::new(&strip)
            .arg("--strip-debug")
            .arg(binary)
            .stderr(Stdio::null())
            .status();
        if status.is_ok_and(|s| s.success()) {
            return Ok(());
        }
    }
    bail!(
        "neither strip nor the toolchain's llvm-strip could strip {}",
        binary.display()
    )
}

/// How to run the bundle, with the session script's steps.
fn usage(bundle: &str) -> String {
    format!(
        "On the GPU machine (NVIDIA driver, sm_80 or newer; no Rust needed), in a copy of the \
         repository with `{bundle}/` beside `xtask/`:\n\n\
         ```sh\n\
         bash xtask/scripts/gpu-session.sh tests progression   # logs into $OUT (default gpu-out/)\n\
         {bundle}/host --variant v4 --compare cublas           # or any host command\n\
         ```\n\n\
         Steps of the session script: {}; any other argument is passed to host as it is.\n",
        session_steps().join(", ")
    )
}

/// The step names of the session script's `case` (`tests)`, `foundation)`, …).
pub fn session_steps() -> Vec<String> {
    let script = include_str!("../scripts/gpu-session.sh");
    script
        .lines()
        .filter_map(|l| l.trim().strip_suffix(')'))
        .filter(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        })
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_test_executable_in_cargo_json() {
        let lines = r#"{"reason":"compiler-artifact","target":{"name":"host","kind":["lib"]},"executable":null}
{"reason":"compiler-artifact","target":{"name":"gpu","kind":["test"]},"executable":"/t/release/deps/gpu-abc"}
{"reason":"build-finished","success":true}"#;
        assert_eq!(
            executables(lines, "gpu"),
            [PathBuf::from("/t/release/deps/gpu-abc")]
        );
        assert!(executables(lines, "ptx").is_empty());
    }

    #[test]
    fn lists_the_session_steps() {
        let steps = session_steps();
        for step in [
            "tests",
            "progression",
            "experiments",
            "sanitize",
            "ch3",
            "ch3-sanitize",
            "ladder",
            "auto16",
        ] {
            assert!(steps.iter().any(|s| s == step), "{step}: {steps:?}");
        }
    }
}
