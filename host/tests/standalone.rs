//! The built `host` binary starts without the CUDA driver, however it is started:
//! run with no library path (cargo's build folders, where a link stub could hide the problem,
//! are not on it), `--help`, `--list` and a tiny emulator run succeed, the dynamic loader is
//! not asked for `libcuda`, and `--backend gpu` on a machine without the driver fails with a
//! message that names it.
//!
//! The trampolines that make this so exist on x86-64 Linux only (`gpu-gemm/src/cuda_driver.rs`).
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]
use std::process::{Command, Output};

/// `host ARGS` with no library path and no preloads.
fn host(args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_host"));
    for var in ["LD_LIBRARY_PATH", "LD_PRELOAD", "LD_TRACE_LOADED_OBJECTS"] {
        command.env_remove(var);
    }
    command
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("the host binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[track_caller]
fn succeeds(args: &[&str]) -> String {
    let out = host(args);
    assert!(
        out.status.success(),
        "host {args:?}: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

#[test]
fn the_dynamic_loader_is_not_asked_for_libcuda() {
    // glibc's loader lists what it would load (as `ldd` does) and exits.
    let out = Command::new(env!("CARGO_BIN_EXE_host"))
        .env_remove("LD_LIBRARY_PATH")
        .env("LD_TRACE_LOADED_OBJECTS", "1")
        .output()
        .unwrap();
    let listing = text(&out.stdout);
    assert!(listing.contains("libc.so"), "no loader listing: {listing}");
    assert!(!listing.contains("libcuda"), "{listing}");
}

#[test]
fn help_list_and_the_emulator_run_with_no_library_path() {
    assert!(succeeds(&["--help"]).contains("--backend"));
    assert!(succeeds(&["experiment", "--help"]).contains("tile-sweep"));
    let listing = succeeds(&["--list"]);
    assert!(listing.lines().any(|l| l.starts_with("v4 ")), "{listing}");
    let run = succeeds(&[
        "--variant",
        "v4",
        "--backend",
        "emu",
        "--size",
        "8",
        "--seed",
        "1",
    ]);
    assert!(run.contains("check: ") && run.contains("PASS"), "{run}");
    // --math is auto's contract: with a named kernel it is refused, not ignored.
    let out = host(&[
        "--variant",
        "v4",
        "--math",
        "tf32",
        "--backend",
        "emu",
        "--size",
        "8",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--math tf32 is the contract of `--variant auto`"),
        "{}",
        text(&out.stderr)
    );
    // --cold times the GPU's runs: on the emulator it is refused, not ignored.
    let out = host(&[
        "--variant",
        "v4",
        "--cold",
        "--backend",
        "emu",
        "--size",
        "8",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--cold times GPU runs"),
        "{}",
        text(&out.stderr)
    );
    // Only CPU variants: no backend is opened at all.
    assert!(succeeds(&["--variant", "cpu-naive", "--size", "8"]).contains("PASS"));
}

#[test]
fn the_gpu_backend_without_a_driver_says_what_is_missing() {
    if gpu_gemm::cuda_driver::load().is_ok() {
        eprintln!("SKIPPED: this machine has a CUDA driver");
        return;
    }
    let out = host(&["--variant", "v4", "--size", "8", "--backend", "gpu"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("libcuda.so.1") && stderr.contains("--backend emu"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    // Without --backend, the same run falls back to the emulator and says why.
    let auto = succeeds(&["--variant", "v4", "--size", "8", "--seed", "1"]);
    assert!(
        auto.starts_with("no GPU (cannot load the CUDA driver (libcuda.so.1"),
        "{auto}"
    );
}

/// A stand-in `libcuda.so.1` with one initialised driver and no device, compiled with the
/// system's C compiler (skipped without one), found through `LD_LIBRARY_PATH` as the real one
/// would be: the GPU backend loads it on `cuInit`, and `cuDeviceGetCount`'s pointer argument
/// goes through the trampoline and comes back with 0.
#[test]
fn the_driver_is_loaded_from_the_library_path_and_called_through_the_trampolines() {
    let dir = std::env::temp_dir().join(format!("host-fake-libcuda-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("fake_cuda.c");
    std::fs::write(
        &source,
        "int cuInit(unsigned int flags) { return flags == 0 ? 0 : 1; }\n\
         int cuDeviceGetCount(int *count) { *count = 0; return 0; }\n",
    )
    .unwrap();
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(&compiler)
        .args(["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o"])
        .arg(dir.join("libcuda.so.1"))
        .arg(&source)
        .status();
    if !built.is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED: no C compiler ({compiler}) to build the stand-in driver");
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_host"))
        .args(["--variant", "v4", "--size", "8", "--backend", "gpu"])
        .env("LD_LIBRARY_PATH", &dir)
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the CUDA driver reports no device"),
        "{stderr}"
    );
}
