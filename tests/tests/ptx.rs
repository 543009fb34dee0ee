//! The PTX modules: they build, hold every registered entry point (the Hopper variants in the
//! sm_90a build, the others in the sm_80 and sm_90 builds), and ptxas compiles them with no
//! spills and no stack frame in any kernel (no local memory) but the one measured exception,
//! `kernels_gpu::registry::SPILLS_MEASURED`.
use kernels_gpu::registry::{Target, SPILLS_MEASURED};
use ptx_builder::{
    build_ptx, entry_points, find_ptxas, ptxas_compile, ptxas_resources, workspace_root,
};
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

/// The sm_90a PTX (the Hopper kernels alone), built once per test binary.
fn ptx_sm90a() -> &'static (std::path::PathBuf, String) {
    static PTX: OnceLock<(std::path::PathBuf, String)> = OnceLock::new();
    PTX.get_or_init(|| build("sm_90a"))
}

#[test]
fn every_registered_entry_point_is_in_the_ptx_of_its_target() {
    let portable = entry_points(&ptx().1);
    let hopper = entry_points(&ptx_sm90a().1);
    for variant in kernels_gpu::registry::ALL {
        let (entries, arch) = match variant.target {
            Target::Portable => (&portable, "sm_90"),
            Target::Sm90a => (&hopper, "sm_90a"),
        };
        assert_eq!(variant.target.arch(), arch);
        for name in variant.entry_names() {
            assert!(
                entries.contains(&name),
                "variant {}: entry point {name} missing from the {arch} PTX",
                variant.name
            );
        }
    }
    // Each build holds its own kernels only: the driver compiles a whole module when it loads
    // it, and the sm_90a build is loaded beside the sm_90 one.
    assert!(
        portable.iter().all(|e| !hopper.contains(e)),
        "a kernel is in both builds"
    );
    assert!(ptx_sm90a().1.contains(".target sm_90a") && ptx_sm90a().1.contains("wgmma.mma_async"));
    // And the emulator's table has exactly the two builds' entry points.
    let mut emulated: Vec<String> = kernels_gpu::entry::all()
        .map(|(n, _)| n.to_string())
        .collect();
    let mut in_ptx: Vec<String> = portable.iter().chain(&hopper).cloned().collect();
    emulated.sort();
    in_ptx.sort();
    assert_eq!(emulated, in_ptx);
    // And every entry point in the builds is one a registered variant launches: an entry point
    // whose tile fell out of the registry (an edit to one variant's `tiles` that matched
    // another's) would otherwise be dead code that no test or measurement reaches.
    let registered: Vec<String> = kernels_gpu::registry::ALL
        .iter()
        .flat_map(|v| v.entry_names())
        .collect();
    let unlaunched: Vec<&String> = in_ptx.iter().filter(|e| !registered.contains(e)).collect();
    assert!(
        unlaunched.is_empty(),
        "entry points no registered variant launches: {unlaunched:?}"
    );
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
    for arch in ["sm_80", "sm_90", "sm_90a"] {
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
            let allowed = SPILLS_MEASURED
                .iter()
                .find(|(a, kernel, _)| *a == arch && *kernel == r.kernel)
                .map_or((0, 0, 0), |(_, _, bytes)| *bytes);
            assert!(
                r.stack_frame <= allowed.0
                    && r.spill_stores <= allowed.1
                    && r.spill_loads <= allowed.2,
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

/// ptxas says when it cannot pipeline `wgmma` ("wgmma.mma_async instructions are serialized
/// …": C7510, C7513, C7514, C7515, the code naming the reason, which differs between ptxas
/// versions), when it waits for a group the kernel did not wait for (C7517: "warpgroup.wait is
/// injected"), when it ignores `setmaxnreg` (C7508), and when it had to add a `wgmma.fence` the
/// kernel lacked (C7519): each would cost the Hopper kernels their speed without failing.
/// (`wgmma-fp8-block:3` had C7514 and C7517 while this test knew only C7510: it ran its
/// `wgmma`s one at a time, and was measured 3% slower than `:1` for it.)
#[test]
fn ptxas_pipelines_the_hopper_kernels_as_written() {
    let root = workspace_root();
    let ptxas = find_ptxas(&root).expect("ptxas not found: run `cargo xtask install-cuda-tools`");
    let (path, _) = ptx_sm90a();
    // The same `ptxas -v -O3` run whose cubin the library embeds (cached by the PTX's bytes).
    let report = ptxas_compile(&root, &ptxas, path, "sm_90a")
        .unwrap_or_else(|e| panic!("{e:#}"))
        .report;
    let codes = [
        "C7508", "C7510", "C7513", "C7514", "C7515", "C7517", "C7519",
    ];
    for code in codes.iter().copied().chain(["serialized", "is injected"]) {
        assert!(
            !report.contains(code),
            "ptxas reports {code} for the sm_90a kernels:\n{}",
            report
                .lines()
                .filter(|l| l.contains(code))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}
