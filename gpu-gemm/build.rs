//! Three jobs, so that `cargo run -p host` works on a fresh clone with no manual step:
//! 1. Build the kernels' PTX (the same builder as `cargo xtask build-ptx`) for each
//!    architecture in `EMBEDDED_ARCHS`, the three at once; rebuilt whenever the kernel sources
//!    change.
//! 2. Compile each PTX ahead of time with `ptxas` (the one `cargo xtask install-cuda-tools`
//!    puts in `.tools/`) as soon as it is built, one cubin per architecture: a GPU the build
//!    targeted loads its SASS in milliseconds instead of waiting 15-30 s for the driver's JIT.
//!    Embed the cubins, and the PTX of `PTX_EMBEDDED_ARCHS` as the fallback for every other GPU
//!    (as nvcc's fatbins do), deflated. Without `ptxas` (or with `GPU_GEMM_SASS=0`) the build
//!    embeds the PTX only and says so.
//! 3. Make the CUDA driver a run-time dependency of the GPU backend only (`src/cuda_driver.rs`,
//!    `cuda-stub/README.md`): on x86-64 Linux, generate the trampolines that define every driver
//!    function `cust` can call, and an empty `libcuda.a` for the `-lcuda` that `cust`'s build
//!    script asks for, so that the binary does not need `libcuda.so.1` to start. Elsewhere,
//!    where no CUDA installation exists, compile a link stub as before.
use ptx_builder::{EMBEDDED_ARCHS, PTX_EMBEDDED_ARCHS};
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let root = ptx_builder::workspace_root();
    println!(
        "cargo:rerun-if-changed={}",
        root.join("kernels-gpu/src").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        root.join("kernels-gpu/Cargo.toml").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        root.join("xtask/src/lib.rs").display()
    );
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    embed_kernels(&root, &out);
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let symbols_file = manifest.join("cuda-stub/symbols.txt");
    println!("cargo:rerun-if-changed={}", symbols_file.display());
    let symbols = std::fs::read_to_string(&symbols_file).unwrap();
    let symbols: Vec<&str> = symbols
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    // The run-time copy of the stub that earlier builds left here would be found by dlopen.
    let _ = std::fs::remove_dir_all(out.join("cuda-stub"));
    let target = (
        std::env::var("CARGO_CFG_TARGET_ARCH").unwrap(),
        std::env::var("CARGO_CFG_TARGET_OS").unwrap(),
    );
    println!("cargo::rustc-check-cfg=cfg(cuda_trampolines)");
    if target == ("x86_64".into(), "linux".into()) {
        println!("cargo:rustc-cfg=cuda_trampolines");
        cuda_trampolines(&out, &symbols);
    } else {
        cuda_link_stub(&out, &symbols);
    }
}

/// `cuda_trampolines.s`: one global function per driver symbol, each a jump through its slot of
/// `gemm_cuda_slots`, which `src/cuda_driver.rs` fills from `libcuda.so.1` when `cuInit` is
/// first called; until then every slot returns `CUDA_ERROR_NOT_INITIALIZED`, as the driver
/// does before `cuInit`. Also `cuda_symbols.rs` (the names, in slot order) and an empty
/// `libcuda.a`, which satisfies `-lcuda` without adding anything.
fn cuda_trampolines(out: &Path, symbols: &[&str]) {
    let init = symbols
        .iter()
        .position(|&s| s == "cuInit")
        .expect("cuInit is in cuda-stub/symbols.txt");
    let mut asm = String::from(".pushsection .text.gemm_cuda_trampolines,\"ax\",@progbits\n");
    for (i, name) in symbols.iter().enumerate() {
        asm += &format!(
            ".p2align 3\n.globl {name}\n.hidden {name}\n.type {name},@function\n{name}:\n    jmp qword ptr [rip + gemm_cuda_slots + {}]\n.size {name}, . - {name}\n",
            8 * i
        );
    }
    // The driver's codes: CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND.
    for (name, code) in [
        ("gemm_cuda_not_initialized", 3),
        ("gemm_cuda_symbol_missing", 302),
    ] {
        asm += &format!(
            ".p2align 3\n.globl {name}\n.hidden {name}\n.type {name},@function\n{name}:\n    mov eax, {code}\n    ret\n.size {name}, . - {name}\n"
        );
    }
    asm += ".popsection\n.pushsection .data.gemm_cuda_slots,\"aw\",@progbits\n.p2align 3\n";
    asm += ".globl gemm_cuda_slots\n.hidden gemm_cuda_slots\n.type gemm_cuda_slots,@object\ngemm_cuda_slots:\n";
    for i in 0..symbols.len() {
        let first = if i == init {
            "gemm_cuda_init_on_first_call"
        } else {
            "gemm_cuda_not_initialized"
        };
        asm += &format!("    .quad {first}\n");
    }
    asm += &format!(
        ".size gemm_cuda_slots, {}\n.popsection\n",
        8 * symbols.len()
    );
    std::fs::write(out.join("cuda_trampolines.s"), asm).unwrap();
    let names: Vec<String> = symbols.iter().map(|s| format!("{s:?}")).collect();
    std::fs::write(
        out.join("cuda_symbols.rs"),
        format!(
            "/// The driver functions, in the order of their slots (gpu-gemm/cuda-stub/symbols.txt).\n\
             pub const SYMBOLS: [&str; {}] = [{}];\n\
             /// The slot of `cuInit`.\npub const CU_INIT: usize = {init};\n",
            symbols.len(),
            names.join(", ")
        ),
    )
    .unwrap();
    let dir = out.join("cuda-link");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("libcuda.a"), b"!<arch>\n").unwrap();
    println!("cargo:rustc-link-search=native={}", dir.display());
}

/// Builds every architecture's kernels at once, each on its own thread: `cargo rustc` to PTX
/// (its own target folder, so the three do not wait for one another's lock), then `ptxas` on
/// it, so that sm_80's cubin is compiled while sm_90a's PTX is still being built. Writes
/// `embedded.rs`: the (deflated) cubins of `EMBEDDED_ARCHS` and PTX of `PTX_EMBEDDED_ARCHS`, as
/// `src/embedded.rs` describes them. Without `ptxas` (or with `GPU_GEMM_SASS=0`) the build
/// embeds the PTX of every architecture and says so; a failing `ptxas` fails the build, since
/// the driver's JIT would then fail on the same PTX.
fn embed_kernels(root: &Path, out: &Path) {
    println!("cargo:rerun-if-env-changed=GPU_GEMM_SASS");
    println!("cargo:rerun-if-env-changed=PTXAS");
    let wanted = std::env::var("GPU_GEMM_SASS").map_or(true, |v| v != "0");
    let ptxas = ptx_builder::find_ptxas(root).filter(|_| wanted);
    if let Some(ptxas) = &ptxas {
        println!("cargo:rerun-if-changed={}", ptxas.display());
    } else if wanted {
        println!(
            "cargo:warning=no ptxas found ($PTXAS, .tools/ or PATH): the kernels are embedded as PTX only, \
             and the first GPU call waits 15-30 s for the driver's JIT; run `cargo xtask install-cuda-tools`, \
             then `cargo clean -p gpu-gemm`"
        );
    }
    let built: Vec<(&str, PathBuf, Option<PathBuf>)> = std::thread::scope(|scope| {
        let running: Vec<_> = EMBEDDED_ARCHS
            .iter()
            .map(|&arch| {
                let ptxas = ptxas.as_deref();
                scope.spawn(move || build_one(root, arch, ptxas))
            })
            .collect();
        running
            .into_iter()
            .map(|job| job.join().expect("a kernel build thread panicked"))
            .collect()
    });

    let mut table = String::from(
        "/// The kernels gpu-gemm/build.rs built, one module per architecture: a `static`, so that\n\
         /// every crate that reads it shares one copy of the bytes (a `const` gave the binary two).\n\
         pub static MODULES: &[Module] = &[\n",
    );
    // One fingerprint of every built module, computed here rather than hashing megabytes of PTX
    // at run time: the tuning cache trusts an entry only from the same kernels.
    let mut fingerprint = ptx_builder::FNV_OFFSET;
    for (arch, ptx, cubin) in &built {
        let text = std::fs::read(ptx).unwrap();
        fingerprint = ptx_builder::fnv1a64(fingerprint, &text);
        let ship_ptx = cubin.is_none() || PTX_EMBEDDED_ARCHS.contains(arch);
        let ptx_field = if ship_ptx {
            format!(
                "Some(include_bytes!({:?}))",
                deflated(out, arch, "ptx", &text)
            )
        } else {
            "None".into()
        };
        let sass_field = match cubin {
            Some(cubin) => format!(
                "Some(include_bytes!({:?}))",
                deflated(out, arch, "cubin", &std::fs::read(cubin).unwrap())
            ),
            None => "None".into(),
        };
        table.push_str(&format!(
            "    Module {{ arch: {arch:?}, ptx: {ptx_field}, sass: {sass_field} }},\n"
        ));
    }
    table.push_str("];\n");
    table.push_str(&format!(
        "/// FNV-1a of the built PTX modules, in the order above (`ptx_builder::fnv1a64`), shipped\n\
         /// or not.\n\
         pub const FINGERPRINT: u64 = {fingerprint:#018x};\n"
    ));
    std::fs::write(out.join("embedded.rs"), table).unwrap();
}

/// One architecture: its PTX, and `ptxas`'s cubin of it (through the cache that the PTX tests
/// read too, `ptx_builder::ptxas_compile`, so a second profile's build finds it compiled).
fn build_one<'a>(
    root: &Path,
    arch: &'a str,
    ptxas: Option<&Path>,
) -> (&'a str, PathBuf, Option<PathBuf>) {
    let built = ptx_builder::build_ptx(root, arch, true).unwrap_or_else(|e| {
        panic!("building the kernels' PTX for {arch} failed: {e:#}\n(try `cargo xtask build-ptx --arch {arch}` for the full output)")
    });
    let cubin = ptxas.map(|ptxas| {
        ptx_builder::ptxas_compile(root, ptxas, &built.ptx, arch)
            .unwrap_or_else(|e| {
                panic!("ptxas failed on the kernels' PTX (the driver's JIT would too): {e:#}")
            })
            .cubin
    });
    (arch, built.ptx, cubin)
}

/// Writes `bytes` deflated into `OUT_DIR` and returns the file's path. PTX is text that shrinks
/// to a sixth, a cubin to a quarter: 103 MB of kernels become 19 MB, inflated at load in
/// tens of milliseconds.
fn deflated(out: &Path, arch: &str, kind: &str, bytes: &[u8]) -> String {
    let file = out.join(format!("kernels_gpu_{arch}.{kind}.deflate"));
    std::fs::write(&file, miniz_oxide::deflate::compress_to_vec(bytes, 6)).unwrap();
    file.display().to_string()
}

/// Is there a real `libcuda.so` where `cust`'s build script looks (other than our stub folder)?
fn cuda_installation_found() -> bool {
    let mut bases: Vec<PathBuf> = std::env::var("CUDA_LIBRARY_PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    bases.extend(["/opt/cuda", "/usr/local/cuda"].map(PathBuf::from));
    if let Ok(entries) = std::fs::read_dir("/usr/local") {
        bases.extend(entries.flatten().map(|e| e.path()).filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("cuda-"))
        }));
    }
    bases.iter().any(|base| {
        [
            "lib64",
            "lib64/stubs",
            "targets/x86_64-linux/lib",
            "targets/x86_64-linux/lib/stubs",
        ]
        .iter()
        .any(|lib| base.join(lib).join("libcuda.so").exists())
    })
}

/// Is a CUDA driver installed (the run-time `libcuda.so.1`)?
fn cuda_driver_installed() -> bool {
    let listed = Command::new("ldconfig")
        .arg("-p")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("libcuda.so.1"))
        .unwrap_or(false);
    listed
        || [
            "/usr/lib/x86_64-linux-gnu",
            "/usr/lib64",
            "/usr/lib/wsl/lib",
            "/usr/local/nvidia/lib64",
        ]
        .iter()
        .any(|d| Path::new(d).join("libcuda.so.1").exists())
}

/// Not x86-64 Linux: `cust` links `libcuda.so` as it was made to, and where no CUDA installation
/// exists this stub stands in for it at link time (the binary then needs the driver to start).
fn cuda_link_stub(out: &Path, symbols: &[&str]) {
    println!("cargo:rerun-if-env-changed=CUDA_LIBRARY_PATH");
    if cuda_installation_found() {
        return;
    }
    let mut source =
        String::from("/* Generated by gpu-gemm/build.rs: see gpu-gemm/cuda-stub/README.md. */\n");
    source.push_str("#define CUDA_ERROR_STUB_LIBRARY 34\n");
    for name in symbols {
        source.push_str(&format!(
            "int {name}(void) {{ return CUDA_ERROR_STUB_LIBRARY; }}\n"
        ));
    }
    let dir = out.join("cuda-link-stub");
    std::fs::create_dir_all(&dir).unwrap();
    let c_file = dir.join("libcuda_stub.c");
    std::fs::write(&c_file, source).unwrap();
    let compiler = cc::Build::new().cargo_metadata(false).get_compiler();
    let status = compiler
        .to_command()
        .args(["-shared", "-fPIC", "-O1", "-Wl,-soname,libcuda.so.1", "-o"])
        .arg(dir.join("libcuda.so"))
        .arg(&c_file)
        .status()
        .expect("cannot run the C compiler to build the CUDA link stub");
    assert!(status.success(), "compiling the CUDA link stub failed");
    // Where no driver exists either, let `cargo run`/`cargo test` load the stub at run time:
    // the host then reports "no CUDA driver" and uses the emulator instead of failing to start.
    let runtime_name = dir.join("libcuda.so.1");
    let _ = std::fs::remove_file(&runtime_name);
    if !cuda_driver_installed() {
        std::fs::copy(dir.join("libcuda.so"), &runtime_name).unwrap();
    }
    println!("cargo:rustc-link-search=native={}", dir.display());
}
