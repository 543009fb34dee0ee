//! The PTX module: it builds, holds every registered entry point, and ptxas compiles it for
//! sm_80 and sm_90 with no spills and no stack frame in any kernel (no local memory).
use ptx_builder::{build_ptx, entry_points, find_ptxas, ptxas_resources, workspace_root};
use std::sync::OnceLock;

/// The PTX for `arch` (seconds to build when the kernels changed).
fn build(arch: &str) -> (std::path::PathBuf, String) {
    let built = build_ptx(&workspace_root(), arch, true)
        .unwrap_or_else(|e| panic!("cargo xtask build-ptx --arch {arch} failed: {e:#}"));
    let text = std::fs::read_to_string(&built.ptx).unwrap();
    (built.ptx, text)
}

/// The sm_90 PTX, built once per test binary.
fn ptx() -> &'static (std::path::PathBuf, String) {
    static PTX: OnceLock<(std::path::PathBuf, String)> = OnceLock::new();
    PTX.get_or_init(|| build("sm_90"))
}

#[test]
fn every_registered_entry_point_is_in_the_ptx() {
    let (_, text) = ptx();
    let entries = entry_points(text);
    for variant in kernels_gpu::registry::ALL {
        for name in variant.entry_names() {
            assert!(
                entries.contains(&name),
                "variant {}: entry point {name} missing from the PTX",
                variant.name
            );
        }
    }
    // And the emulator's table has exactly the PTX's entry points.
    let mut emulated: Vec<String> = kernels_gpu::entry::ENTRIES
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    let mut in_ptx = entries.clone();
    emulated.sort();
    in_ptx.sort();
    assert_eq!(emulated, in_ptx);
}

#[test]
fn ptx_uses_fma_and_shared_state_space() {
    let (_, text) = ptx();
    assert!(
        text.contains("fma.rn.f32") && text.contains("fma.rn.f64"),
        "no fused multiply-add in the PTX"
    );
    assert!(
        text.contains("ld.shared.f32") && text.contains("st.shared.f32"),
        "shared tiles must use ld/st.shared"
    );
    assert!(
        !text.contains("ld.local") && !text.contains("st.local"),
        "local memory in the PTX"
    );
    assert!(text.contains(".target sm_90"));
}

#[test]
fn ptxas_reports_no_spills_and_no_stack_frame() {
    let root = workspace_root();
    let ptxas = find_ptxas(&root).expect(
        "ptxas not found: run `cargo xtask install-cuda-tools` (installs it from PyPI into .tools/), or set PTXAS",
    );
    for arch in ["sm_80", "sm_90"] {
        let (path, text) = &build(arch);
        assert!(text.contains(&format!(".target {arch}")));
        let kernels = entry_points(text).len();
        let cubin = path.with_extension(format!("test.{arch}.cubin"));
        let report = ptxas_resources(&ptxas, path, arch, &cubin).unwrap();
        assert_eq!(
            report.len(),
            kernels,
            "ptxas reported {} of {kernels} kernels for {arch}",
            report.len()
        );
        for r in &report {
            assert_eq!(
                (r.stack_frame, r.spill_stores, r.spill_loads),
                (0, 0, 0),
                "{arch} {}: {} bytes stack frame, {} + {} bytes spilled",
                r.kernel,
                r.stack_frame,
                r.spill_stores,
                r.spill_loads
            );
            assert!(
                r.registers > 0 && r.registers <= 255,
                "{arch} {}: {} registers",
                r.kernel,
                r.registers
            );
        }
    }
}
