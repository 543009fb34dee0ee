//! Builds the PTX module from `kernels-gpu` with rustc's own NVPTX backend.
//!
//! Used by `cargo xtask build-ptx` and by `host`'s build script (so `cargo run -p host` works on
//! a fresh clone). The steps, each explained in `docs/toolchain.md`:
//! 1. `cargo rustc -p kernels-gpu --target nvptx64-nvidia-cuda -Zbuild-std=core --crate-type
//!    cdylib --profile ptx` (fat LTO, `panic = "abort"`), with `-C target-cpu=sm_XX`;
//! 2. rustc hands the LTO'd bitcode to a *linker* in the `llbc` flavour. rustc's own
//!    `llvm-bitcode-linker` cannot be installed here, so we write a small one that runs the
//!    pinned toolchain's `llvm-link` → `opt -O3` → `llc -O3`. `opt` matters: without it rustc's
//!    memcpy-through-alloca patterns stay as local memory; `-unroll-threshold` lets register
//!    tiles (8×8 accumulators) unroll fully and live in registers.
//!
//! Also: [`find_ptxas`] and friends locate the CUDA tools the project installs from PyPI into
//! `.tools/` (see `cargo xtask install-cuda-tools`), and [`sass`] reads what ptxas makes of the
//! PTX (`cargo xtask sass`).
#[cfg(feature = "cli")]
pub mod book;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "cli")]
pub mod front_page;
pub mod sass;

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Architectures `build-ptx` accepts: Ampere and newer, and Hopper's architecture-specific
/// `sm_90a` (the only build with the `wgmma` kernels; it loads on compute capability 9.0 only).
pub const ARCHS: &[&str] = &[
    "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_120",
];
pub const DEFAULT_ARCH: &str = "sm_90";
/// The architectures the library builds (gpu-gemm's build script) and ships as SASS, one cubin
/// each: the lowest the kernels support (Ampere: its cubin runs on sm_80, sm_86 and sm_89),
/// Hopper's own, and Hopper's architecture-specific build with the `wgmma` kernels (loaded
/// beside the sm_90 module on compute capability 9.0).
pub const EMBEDDED_ARCHS: &[&str] = &["sm_80", "sm_90", "sm_90a"];
/// The architectures whose PTX the library ships beside their SASS, for the GPUs no cubin runs
/// on: sm_80's, which the driver compiles for any newer GPU (Blackwell included), and sm_90a's,
/// the only form of the `wgmma` kernels, for a driver too old to load the cubin. sm_90's PTX
/// would add nothing sm_80's does not already give such a GPU.
pub const PTX_EMBEDDED_ARCHS: &[&str] = &["sm_80", "sm_90a"];
/// The loop-unroll threshold of the link step's `opt` (LLVM's default is 300).
const UNROLL_THRESHOLD: u32 = 4000;

/// The workspace root (the folder holding `kernels-gpu/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask is inside the workspace")
        .to_path_buf()
}

/// Where `build-ptx` writes the module for `arch`: `target/ptx/<arch>/kernels_gpu.ptx`.
pub fn ptx_path(root: &Path, arch: &str) -> PathBuf {
    root.join("target")
        .join("ptx")
        .join(arch)
        .join("kernels_gpu.ptx")
}

pub struct Built {
    pub ptx: PathBuf,
    pub elapsed: Duration,
    pub entry_points: usize,
    pub bytes: u64,
}

/// Checks `arch` is one `build-ptx` supports.
pub fn check_arch(arch: &str) -> Result<()> {
    if !ARCHS.contains(&arch) {
        bail!(
            "unsupported architecture `{arch}`: choose one of {}",
            ARCHS.join(", ")
        );
    }
    Ok(())
}

/// Compiles `kernels-gpu` to PTX for `arch` and returns where it is.
///
/// `quiet` hides cargo's progress (the host's build script uses it).
pub fn build_ptx(root: &Path, arch: &str, quiet: bool) -> Result<Built> {
    check_arch(arch)?;
    let start = Instant::now();
    let tools = LlvmTools::locate()?;
    let build_dir = root.join("target").join("ptx-build").join(arch);
    std::fs::create_dir_all(&build_dir)?;
    let linker = build_dir.join("ptx-linker.sh");
    std::fs::write(&linker, tools.linker_script())?;
    make_executable(&linker)?;

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut cmd = Command::new(cargo);
    clear_outer_cargo_env(&mut cmd);
    cmd.current_dir(root)
        .args([
            "rustc",
            "--package",
            "kernels-gpu",
            "--lib",
            "--crate-type",
            "cdylib",
        ])
        .args([
            "--profile",
            "ptx",
            "--target",
            "nvptx64-nvidia-cuda",
            "-Zbuild-std=core",
        ])
        .arg("--target-dir")
        .arg(&build_dir)
        .env(
            "CARGO_TARGET_NVPTX64_NVIDIA_CUDA_RUSTFLAGS",
            format!("-Ctarget-cpu={arch} -Clinker-flavor=llbc -Zunstable-options"),
        )
        .env("CARGO_TARGET_NVPTX64_NVIDIA_CUDA_LINKER", &linker);
    if quiet {
        cmd.arg("--quiet");
    }
    let status = cmd.status().context("cannot run cargo to build the PTX")?;
    if !status.success() {
        bail!(
            "building the PTX for {arch} failed (cargo rustc for nvptx64-nvidia-cuda, see above)"
        );
    }
    let produced = build_dir
        .join("nvptx64-nvidia-cuda")
        .join("ptx")
        .join("kernels_gpu.ptx");
    let ptx = ptx_path(root, arch);
    std::fs::create_dir_all(ptx.parent().unwrap())?;
    let text = std::fs::read_to_string(&produced)
        .with_context(|| format!("the build did not produce {}", produced.display()))?;
    let text = apply_launch_bounds(&text)?;
    std::fs::write(&ptx, &text)?;
    Ok(Built {
        entry_points: entry_points(&text).len(),
        bytes: text.len() as u64,
        ptx,
        elapsed: start.elapsed(),
    })
}

/// Writes one kernel's PTX directive from the words of its `// launch_bounds` or `// cluster`
/// comment.
type Directive = fn(&[&str]) -> String;

/// Gives each kernel that asked for launch bounds its `.maxntid` and `.minnctapersm`
/// directives (CUDA's `__launch_bounds__(threads, blocks)`), which make ptxas cap its
/// registers so that `blocks` blocks of `threads` threads fit on an SM; and each kernel that
/// asked for a cluster its `.reqnctapercluster` (CUDA's `__cluster_dims__(x, 1, 1)`), which
/// makes an ordinary launch form clusters of that many blocks.
///
/// Rust has no attribute for them, so `kernels-gpu`'s entry table writes module-level PTX
/// comments, `// launch_bounds NAME THREADS BLOCKS` and `// cluster NAME X`, and this step turns
/// them into directives between the entry's parameter list and its body, where PTX wants them;
/// a strided batch's twin entry `NAME_batch` gets `NAME`'s.
pub fn apply_launch_bounds(ptx: &str) -> Result<String> {
    // Per kernel: its directives, and how many comments asked for them.
    let mut directives: std::collections::HashMap<String, (String, usize)> = Default::default();
    let mut requests = 0;
    for line in ptx.lines() {
        let line = line.trim();
        let (words, directive): (Vec<&str>, Directive) =
            if let Some(rest) = line.strip_prefix("// launch_bounds ") {
                (rest.split_whitespace().collect(), |w| {
                    format!(".maxntid {}, 1, 1\n.minnctapersm {}\n", w[1], w[2])
                })
            } else if let Some(rest) = line.strip_prefix("// cluster ") {
                (rest.split_whitespace().collect(), |w| {
                    format!(".reqnctapercluster {}, 1, 1\n", w[1])
                })
            } else {
                continue;
            };
        let expected = if line.starts_with("// cluster") { 2 } else { 3 };
        if words.len() != expected || words[1..].iter().any(|w| w.parse::<u32>().is_err()) {
            bail!("malformed launch directive comment in the PTX: `{line}`");
        }
        let entry = directives.entry(words[0].to_string()).or_default();
        entry.0.push_str(&directive(&words));
        entry.1 += 1;
        requests += 1;
    }
    let mut out = String::with_capacity(ptx.len() + 64 * directives.len());
    let mut pending = None;
    let mut applied = 0;
    for line in ptx.lines() {
        out.push_str(line);
        out.push('\n');
        if let Some(rest) = line.trim_start().strip_prefix(".visible .entry ") {
            let name = rest.split('(').next().unwrap_or(rest).trim();
            // A strided batch's twin (`NAME_batch`, `kernels-gpu`'s entry table) is the same
            // kernel and takes its directives: it counts no request of its own.
            pending = directives.get(name).map(|d| (d, true)).or_else(|| {
                let base = name.strip_suffix("_batch")?;
                directives.get(base).map(|d| (d, false))
            });
        } else if pending.is_some() && line.starts_with(')') {
            let ((text, count), requested) = pending.take().unwrap();
            out.push_str(text);
            if requested {
                applied += count;
            }
        }
    }
    if applied != requests {
        bail!("launch directives were requested {requests} times but applied {applied} times (a kernel named in a comment is missing)");
    }
    Ok(out)
}

/// The names of the `.entry` functions in a PTX module.
pub fn entry_points(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| l.trim_start().strip_prefix(".visible .entry "))
        .map(|rest| rest.split('(').next().unwrap_or(rest).trim().to_string())
        .collect()
}

/// The `.target` of a PTX module (`sm_90`), if it has one.
pub fn ptx_target(ptx: &str) -> Option<&str> {
    ptx.lines()
        .find_map(|l| l.trim().strip_prefix(".target "))
        .map(|t| t.split(',').next().unwrap().trim())
}

/// A 64-bit FNV-1a hash of `bytes`, continuing from `seed` (start with [`FNV_OFFSET`]): the
/// fingerprint of a PTX build that the library's tuning cache keys its entries by. Stable
/// across processes, builds and Rust versions, which `std`'s `DefaultHasher` does not promise,
/// so `build.rs` and the library compute the same value.
pub fn fnv1a64(seed: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(seed, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// FNV-1a's starting value.
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// rustc's `llvm-tools` component: the three programs of the link step.
struct LlvmTools {
    bin: PathBuf,
}

impl LlvmTools {
    fn locate() -> Result<Self> {
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
        let out = Command::new(&rustc)
            .args(["--print", "sysroot"])
            .output()
            .with_context(|| format!("cannot run `{rustc}`: is the Rust toolchain installed?"))?;
        let sysroot = PathBuf::from(String::from_utf8(out.stdout)?.trim());
        let host = host_triple(&rustc)?;
        if !sysroot.join("lib/rustlib/src/rust/library/core").exists() {
            bail!(
                "the toolchain at {} has no `rust-src` (needed by -Zbuild-std=core). \
                 Install it with `rustup component add rust-src`, or run `rustup toolchain install` \
                 in the repository to get everything rust-toolchain.toml names.",
                sysroot.display()
            );
        }
        let bin = sysroot.join("lib/rustlib").join(host).join("bin");
        for tool in ["llvm-link", "opt", "llc"] {
            if !bin.join(tool).exists() {
                bail!(
                    "`{tool}` not found in {}: install the `llvm-tools` component with \
                     `rustup component add llvm-tools` (or `rustup toolchain install` in the repository).",
                    bin.display()
                );
            }
        }
        Ok(Self { bin })
    }

    /// A linker in rustc's `llbc` flavour: `--target-cpu CPU -o OUT.ptx INPUT.o …`.
    fn linker_script(&self) -> String {
        let bin = self.bin.display();
        format!(
            r#"#!/bin/sh
# Written by `cargo xtask build-ptx`: the link step rustc's llvm-bitcode-linker would do.
set -e
objects=""; out=""; cpu=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift 2;;
    --target-cpu) cpu="$2"; shift 2;;
    --target|-L|--export-symbol) shift 2;;
    *.o) objects="$objects $1"; shift;;
    *) shift;;
  esac
done
"{bin}/llvm-link" $objects -o "$out.linked.bc"
"{bin}/opt" -O3 -mcpu="$cpu" -unroll-threshold={UNROLL_THRESHOLD} "$out.linked.bc" -o "$out.opt.bc"
"{bin}/llc" -O3 -mcpu="$cpu" "$out.opt.bc" -o "$out"
"#
        )
    }
}

pub fn host_triple(rustc: &str) -> Result<String> {
    let out = Command::new(rustc).arg("-vV").output()?;
    let text = String::from_utf8(out.stdout)?;
    text.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_string)
        .context("`rustc -vV` printed no host triple")
}

/// A build script runs inside cargo: strip what the outer build set, or the inner cargo would
/// inherit its target, flags and profile.
pub fn clear_outer_cargo_env(cmd: &mut Command) {
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        let outer = (key.starts_with("CARGO_") && key != "CARGO_HOME")
            || key.starts_with("RUSTC")
            || key == "RUSTFLAGS"
            || key == "RUSTDOCFLAGS"
            || key == "TARGET"
            || key == "HOST"
            || key == "OUT_DIR"
            || key == "OPT_LEVEL"
            || key == "PROFILE"
            || key == "DEBUG";
        if outer {
            cmd.env_remove(key);
        }
    }
}

fn make_executable(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

/// Where `cargo xtask install-cuda-tools` puts the PyPI CUDA tools.
pub fn cuda_tools_dir(root: &Path) -> PathBuf {
    root.join(".tools").join("cuda")
}

/// `ptxas`: `$PTXAS`, then the project's `.tools/`, then `PATH`.
pub fn find_ptxas(root: &Path) -> Option<PathBuf> {
    find_cuda_tool(root, "ptxas")
}

/// A CUDA command-line tool (`ptxas`, `nvdisasm`, `cuobjdump`): `$NAME` in upper case, then
/// the project's `.tools/`, then `PATH`.
pub fn find_cuda_tool(root: &Path, name: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(name.to_uppercase()) {
        return Some(PathBuf::from(p));
    }
    let local = cuda_tools_dir(root).join("nvidia/cu13/bin").join(name);
    if local.exists() {
        return Some(local);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.exists())
    })
}

/// The PyPI packages `install-cuda-tools` installs (CUDA 13.0, the GPU machine's version).
pub const CUDA_TOOL_PACKAGES: &[&str] =
    &["nvidia-cuda-nvcc==13.0.88", "nvidia-cuda-nvdisasm==13.2.51"];

/// What `ptxas -v` reports for one kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resources {
    pub kernel: String,
    pub registers: u32,
    pub stack_frame: u32,
    pub spill_stores: u32,
    pub spill_loads: u32,
    pub shared_bytes: u32,
}

/// What one `ptxas -arch=<arch> -v -O3` run made of a PTX file: the cubin, and ptxas's report
/// (per kernel its registers, stack frame and spills; the advisories such as a serialized
/// `wgmma`, C7510).
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The cubin, in the cache folder: copy it, it may be replaced by a later run.
    pub cubin: PathBuf,
    /// ptxas's standard error and output, as it printed them.
    pub report: String,
}

/// Compiles `ptx` for `arch` with `ptxas -v -O3`, or returns the result of an earlier run on the
/// same bytes with the same `ptxas`.
///
/// The same three modules (sm_80, sm_90, sm_90a, 15-90 s of ptxas each) used to be compiled by
/// the library's build script once per cargo profile and again by the PTX tests, which only
/// read the report of the same run: about five minutes of a CI run on two cores. ptxas is
/// deterministic, so the cubin and report are kept in `target/ptxas-cache/`, keyed by the PTX's
/// FNV-1a, the architecture and the `ptxas` file (path, size, modification time); `-v` does not
/// change the cubin, so one run serves the build and the tests. A new entry is written to a
/// temporary name and renamed, so that test binaries running at once never read half a file.
pub fn ptxas_compile(root: &Path, ptxas: &Path, ptx: &Path, arch: &str) -> Result<Compiled> {
    let text = std::fs::read(ptx).with_context(|| format!("reading {}", ptx.display()))?;
    let tool =
        std::fs::metadata(ptxas).with_context(|| format!("cannot run {}", ptxas.display()))?;
    let modified = tool
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64);
    let mut key = fnv1a64(FNV_OFFSET, &text);
    key = fnv1a64(
        key,
        format!(
            "{arch} -v -O3 {PTXAS_THREADS} {} {} {modified}",
            ptxas.display(),
            tool.len()
        )
        .as_bytes(),
    );
    let dir = root.join("target").join("ptxas-cache");
    std::fs::create_dir_all(&dir)?;
    let cubin = dir.join(format!("{arch}-{key:016x}.cubin"));
    let log = dir.join(format!("{arch}-{key:016x}.log"));
    if cubin.is_file() {
        if let Ok(report) = std::fs::read_to_string(&log) {
            return Ok(Compiled { cubin, report });
        }
    }
    let unique = format!("{}-{:?}", std::process::id(), std::thread::current().id());
    let partial = dir.join(format!(
        "{arch}-{key:016x}.{}.part",
        unique.replace(['(', ')'], "")
    ));
    let out = Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .args(["-v", "-O3", PTXAS_THREADS, "-o"])
        .arg(&partial)
        .arg(ptx)
        .output()
        .with_context(|| format!("cannot run {}", ptxas.display()))?;
    let report =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let _ = std::fs::remove_file(&partial);
        bail!("ptxas -arch={arch} failed on {}:\n{report}", ptx.display());
    }
    // The log first: a cubin without its log is a miss, never a hit with an empty report.
    let partial_log = partial.with_extension("log.part");
    std::fs::write(&partial_log, &report)?;
    std::fs::rename(&partial_log, &log)?;
    std::fs::rename(&partial, &cubin)?;
    Ok(Compiled { cubin, report })
}

/// ptxas optimises a module's kernels on every core (`--split-compile 0`): the sm_90a module in
/// 32 s instead of 55 s on two cores. Each kernel's SASS is the same as one thread makes (the
/// disassembly of all 213 sm_90a functions compared, 2026-12-07); only their order in the cubin
/// differs.
const PTXAS_THREADS: &str = "--split-compile=0";

/// Runs `ptxas -v -arch=<arch>` on a PTX file (through [`ptxas_compile`]'s cache), copies the
/// cubin to `cubin` and parses the per-kernel report.
pub fn ptxas_resources(
    ptxas: &Path,
    ptx: &Path,
    arch: &str,
    cubin: &Path,
) -> Result<Vec<Resources>> {
    let compiled = ptxas_compile(&workspace_root(), ptxas, ptx, arch)?;
    std::fs::copy(&compiled.cubin, cubin)
        .with_context(|| format!("copying the cubin to {}", cubin.display()))?;
    Ok(parse_ptxas_report(&compiled.report))
}

/// Parses `ptxas -v` output: "Compiling entry function 'NAME'", then "N bytes stack frame, N
/// bytes spill stores, N bytes spill loads", then "Used N registers, … N bytes smem".
pub fn parse_ptxas_report(text: &str) -> Vec<Resources> {
    let number_before = |line: &str, unit: &str| -> u32 {
        line.split(',')
            .find(|part| part.contains(unit))
            .and_then(|part| part.split_whitespace().find_map(|w| w.parse().ok()))
            .unwrap_or(0)
    };
    let mut all: Vec<Resources> = Vec::new();
    // ptxas also prints "Function properties" for the functions a kernel calls (a panic
    // path, say): only the kernel's own block describes the kernel.
    let mut properties_of = String::new();
    for line in text.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            all.push(Resources {
                kernel: rest.split('\'').next().unwrap_or("").to_string(),
                ..Default::default()
            });
        } else if let Some(rest) = line.split("Function properties for ").nth(1) {
            properties_of = rest.trim().to_string();
        } else if let Some(r) = all.last_mut() {
            if line.contains("stack frame") && properties_of == r.kernel {
                r.stack_frame = number_before(line, "stack frame");
                r.spill_stores = number_before(line, "spill stores");
                r.spill_loads = number_before(line, "spill loads");
            } else if line.contains("Used") && line.contains("registers") {
                r.registers = line
                    .split("Used ")
                    .nth(1)
                    .and_then(|s| s.split_whitespace().next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                r.shared_bytes = number_before(line, "smem");
            }
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_bounds_become_directives_of_their_entry() {
        let ptx = "// launch_bounds k2 256 2\n\
            .visible .entry k1(\n\t.param .u32 k1_param_0\n)\n{\n}\n\
            .visible .entry k2(\n\t.param .u32 k2_param_0\n)  // @k2\n{\n}\n";
        let out = apply_launch_bounds(ptx).unwrap();
        assert!(
            out.contains(")  // @k2\n.maxntid 256, 1, 1\n.minnctapersm 2\n{"),
            "{out}"
        );
        assert_eq!(out.matches(".maxntid").count(), 1);
        assert!(apply_launch_bounds("// launch_bounds missing 64 1\n").is_err());
        let ptx = "// launch_bounds k2 384 1\n// cluster k2 2\n\
                   .visible .entry k2(\n\t.param .u32 p\n)  // @k2\n{\n}\n";
        let out = apply_launch_bounds(ptx).unwrap();
        assert!(
            out.contains(
                ")  // @k2\n.maxntid 384, 1, 1\n.minnctapersm 1\n.reqnctapercluster 2, 1, 1\n{"
            ),
            "{out}"
        );
        assert!(apply_launch_bounds("// cluster k2 two\n").is_err());
        // A strided batch's twin takes its kernel's bounds.
        let ptx = "// launch_bounds k2 128 4\n\
                   .visible .entry k2(\n)\n{\n}\n.visible .entry k2_batch(\n)\n{\n}\n";
        let out = apply_launch_bounds(ptx).unwrap();
        assert!(
            out.contains("k2_batch(\n)\n.maxntid 128, 1, 1\n.minnctapersm 4\n{"),
            "{out}"
        );
        assert_eq!(out.matches(".maxntid").count(), 2);
    }

    #[test]
    fn a_callee_does_not_hide_the_kernels_stack_frame() {
        let report = "ptxas info    : Compiling entry function 'k' for 'sm_90'\n\
            ptxas info    : Function properties for k\n\
            \x20   296 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
            ptxas info    : Function properties for panic_const_div_by_zero\n\
            \x20   0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
            ptxas info    : Used 128 registers, used 1 barriers, 296 bytes cumulative stack size\n";
        let r = parse_ptxas_report(report);
        assert_eq!((r.len(), r[0].stack_frame, r[0].registers), (1, 296, 128));
    }

    #[test]
    fn parses_a_ptxas_report() {
        let report = "ptxas info    : 0 bytes gmem\n\
            ptxas info    : Compiling entry function 'gemm_v1_f32' for 'sm_90'\n\
            ptxas info    : Function properties for gemm_v1_f32\n\
            \x20   8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n\
            ptxas info    : Used 24 registers, used 0 barriers, 2176 bytes smem, 416 bytes cmem[0]\n";
        let r = parse_ptxas_report(report);
        assert_eq!(
            r,
            vec![Resources {
                kernel: "gemm_v1_f32".into(),
                registers: 24,
                stack_frame: 8,
                spill_stores: 4,
                spill_loads: 12,
                shared_bytes: 2176
            }]
        );
    }

    #[test]
    fn finds_entry_points_and_target() {
        let ptx = ".version 7.8\n.target sm_90\n.visible .entry gemm_v0_f32(\n.param .u32 a\n)\n";
        assert_eq!(entry_points(ptx), vec!["gemm_v0_f32"]);
        assert_eq!(ptx_target(ptx), Some("sm_90"));
    }

    #[test]
    fn rejects_unknown_arch() {
        assert!(check_arch("sm_90").is_ok());
        let e = check_arch("sm_70").unwrap_err().to_string();
        assert!(e.contains("sm_80"), "{e}");
    }
}
