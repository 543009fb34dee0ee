//! The SASS of the hot loops (what `cargo xtask sass` reports), read from the cubins the library
//! ships (`gpu_gemm::embedded`: ptxas's build of the sm_90 PTX, and of the sm_90a PTX of the
//! Hopper kernels): nvdisasm disassembles them, and the inner loops of
//! the document's progression must have the instruction counts their register tiles imply: `v4`
//! 1/3 of FMA + shared loads, `v5` 2/3, `gemm64` 8/9, `gemm128` 16/17, no local memory anywhere;
//! the `wgmma` kernels' loops issue `HGMMA` with their fragments in 8-byte loads and no barrier.
//!
//! Needs ptxas at build time and nvdisasm (`cargo xtask install-cuda-tools`, as CI runs it):
//! without them the tests fail rather than skip.
use kernels_gpu::gemm::Dtype;
use kernels_gpu::registry::{self, ALL};
use ptx_builder::sass::{self, Class, Fraction, Function, Instruction, Mix, Precision};
use ptx_builder::{find_cuda_tool, workspace_root};
use std::sync::OnceLock;

/// The two builds: every architecture's kernels (sm_90) and Hopper's alone (sm_90a).
const ARCHS: [&str; 2] = ["sm_90", "sm_90a"];

/// Every function of the sm_90 and sm_90a cubins, compiled and disassembled once per test binary.
fn functions() -> &'static [Function] {
    static FUNCTIONS: OnceLock<Vec<Function>> = OnceLock::new();
    FUNCTIONS.get_or_init(|| ARCHS.iter().flat_map(|arch| build(arch)).collect())
}

fn build(arch: &str) -> Vec<Function> {
    let root = workspace_root();
    let nvdisasm = find_cuda_tool(&root, "nvdisasm").expect(
        "nvdisasm not found: run `cargo xtask install-cuda-tools` (installs it from PyPI into .tools/), or set NVDISASM",
    );
    let cubin = shipped_cubin(arch);
    // One file per test binary: another test binary may be disassembling at the same time.
    let file = std::env::temp_dir().join(format!(
        "gpu-gemm-sass-test-{}-{arch}.cubin",
        std::process::id()
    ));
    std::fs::write(&file, cubin).unwrap();
    let text = sass::disassemble(&nvdisasm, &file).unwrap();
    let _ = std::fs::remove_file(&file);
    let functions = sass::parse_functions(&text);
    assert!(!functions.is_empty(), "nvdisasm printed no function");
    functions
}

/// The cubin of `arch` that the library embeds.
fn shipped_cubin(arch: &str) -> Vec<u8> {
    gpu_gemm::embedded::module(arch)
        .and_then(|m| m.sass())
        .unwrap_or_else(|| {
            panic!(
                "the library embeds no {arch} SASS: its build found no ptxas (run `cargo xtask install-cuda-tools`, then `cargo clean -p gpu-gemm`) or had GPU_GEMM_SASS=0"
            )
        })
}

/// The entry points of a PTX module.
fn ptx_entries(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| l.trim().strip_prefix(".visible .entry "))
        .map(|l| l.split('(').next().unwrap().trim().to_string())
        .collect()
}

/// The library ships SASS for every architecture it builds, each cubin compiled from that
/// architecture's PTX: every entry point of the PTX is a function of the cubin. sm_90's PTX is
/// not shipped (sm_80's serves every GPU without a cubin): its cubin holds sm_80's entry points.
#[test]
fn the_shipped_sass_is_the_built_ptx_compiled() {
    use gpu_gemm::embedded::MODULES;
    assert_eq!(
        MODULES.iter().map(|m| m.arch).collect::<Vec<_>>(),
        ptx_builder::EMBEDDED_ARCHS
    );
    for m in MODULES {
        assert_eq!(
            m.has_ptx(),
            ptx_builder::PTX_EMBEDDED_ARCHS.contains(&m.arch),
            "{}: PTX shipped where it should not be, or missing",
            m.arch
        );
        let cubin = shipped_cubin(m.arch);
        assert_eq!(
            &cubin[..4],
            b"\x7fELF",
            "the {} SASS is not a cubin (ELF)",
            m.arch
        );
        let source = if m.arch == "sm_90" { "sm_80" } else { m.arch };
        let ptx = gpu_gemm::embedded::module(source)
            .and_then(|m| m.ptx())
            .unwrap();
        let entries = ptx_entries(&ptx);
        assert!(
            entries.len() > 10,
            "{source}: found {} entry points in the PTX",
            entries.len()
        );
        // The ELF's string table holds each kernel's name, NUL-terminated.
        let strings: std::collections::HashSet<&[u8]> = cubin.split(|&b| b == 0).collect();
        for entry in entries {
            assert!(
                strings.contains(entry.as_bytes()),
                "{}: the PTX's entry point {entry} is not in the shipped cubin: it was built from other PTX",
                m.arch
            );
        }
    }
    // Which GPU may load which: SASS runs on later minor versions of its major architecture
    // only, an `a` build on its own alone; everything else compiles the PTX.
    use gpu_gemm::gpu::sass_runs;
    for (arch, device, runs) in [
        ("sm_90", 90, true),
        ("sm_90a", 90, true),
        ("sm_80", 80, true),
        ("sm_80", 86, true),
        ("sm_80", 89, true),
        ("sm_80", 90, false),
        ("sm_90", 100, false),
        ("sm_90a", 100, false),
        ("sm_90", 89, false),
    ] {
        assert_eq!(
            sass_runs(arch, device),
            runs,
            "{arch} SASS on compute capability {device}"
        );
    }
}

fn function(entry: &str) -> &'static Function {
    functions()
        .iter()
        .find(|f| f.name == entry)
        .unwrap_or_else(|| panic!("{entry} is not in the disassembly"))
}

/// The hot loop of a registered variant (no tile parameter).
fn hot(variant: &str, dtype: Dtype) -> Mix {
    hot_at(variant, dtype, 0)
}

/// The hot loop of a variant at one of its tiles: the loop with the most FMA, or for a
/// tensor-core variant the most HMMA/DMMA (not the epilogue's FFMA).
fn hot_at(variant: &str, dtype: Dtype, tile: u32) -> Mix {
    let entry = registry::find(variant)
        .unwrap()
        .first_entry_name(dtype, tile);
    let f = function(&entry);
    let precision = Precision::of(
        f,
        match dtype {
            Dtype::F32 | Dtype::Bf16 | Dtype::F16 | Dtype::E4m3 | Dtype::E4m3E5m2 => Precision::F32,
            Dtype::F64 => Precision::F64,
        },
    );
    f.hot_loop(precision)
        .unwrap_or_else(|| panic!("{entry}: no loop does an {}", precision.fma_opcode()))
        .1
}

/// FMA, 128-bit shared loads, 32-bit shared loads, barriers, FMA / (FMA + shared loads).
fn counts(m: &Mix) -> (u32, u32, u32, u32, Option<Fraction>) {
    (
        m.fma(),
        m.count_bits(Class::SharedLoad, 128),
        m.count_bits(Class::SharedLoad, 32),
        m.count(Class::Barrier),
        m.fma_per_fma_and_shared_load(),
    )
}

#[test]
fn every_entry_point_is_disassembled_with_an_fma_loop_and_no_local_memory() {
    for variant in ALL {
        for entry in variant.entry_names() {
            let f = function(&entry);
            // A strided batch's twin is its kernel's body.
            let kernel = kernels_gpu::registry::kernel_of_batch_twin(&entry).unwrap_or(&entry);
            let dtype_precision = if kernel.ends_with("_f64") {
                Precision::F64
            } else {
                Precision::F32
            };
            // A tensor-core kernel's loop is found by its HMMA/DMMA, not by the epilogue's FFMA.
            let precision = Precision::of(f, dtype_precision);
            // A split-k reduction adds the parts on the CUDA cores, whatever its GEMM uses; the
            // ranges pass before 3xTF32 only compares magnitudes, the unfused epilogue after
            // a 16-bit GEMM is a pass over C, one pair per thread, with no loop, and the amax's
            // last step is one thread over three words, and the copies move data with no
            // arithmetic.
            let is_reduction = variant.reduce.is_some_and(|r| entry.starts_with(r));
            let is_pass = variant.ranges_pass().is_some_and(|pass| {
                entry == pass || kernels_gpu::registry::kernel_of_batch_twin(&entry) == Some(pass)
            }) || entry.starts_with(kernels_gpu::registry::UNFUSED_EPILOGUE)
                || entry.starts_with(kernels_gpu::registry::TRANSPOSE)
                || entry.starts_with(kernels_gpu::registry::PITCHED_COPY)
                || entry == kernels_gpu::registry::AMAX_SCALE;
            assert_eq!(
                precision.useful_name() == "MMA",
                variant.uses_tensor_cores() && !is_reduction && !is_pass,
                "{entry}: tensor-core instructions where none were expected, or none where the variant's arithmetic needs them"
            );
            let all = Mix::of(&f.instructions, precision);
            let allowed = kernels_gpu::registry::SPILLS_MEASURED
                .iter()
                .any(|(_, name, _)| *name == entry);
            assert!(
                all.count(Class::LocalMemory) == 0 || allowed,
                "{entry}: local memory in the SASS: {:?}",
                all.opcodes_of(Class::LocalMemory)
            );
            // The 16-bit reduction's loop adds f32 parts (FADD), the ranges pass's takes maxima:
            // no FMA loop to find.
            if is_pass || (is_reduction && !kernel.ends_with("_f32") && !kernel.ends_with("_f64")) {
                continue;
            }
            let (_, mix) = f.hot_loop(precision).unwrap_or_else(|| {
                panic!("{entry}: no loop with an {} found", precision.fma_opcode())
            });
            assert!(
                mix.total < all.total,
                "{entry}: the loop is the whole kernel"
            );
        }
    }
}

#[test]
fn gemm128_does_64_fma_per_four_16_byte_shared_loads() {
    let m = hot("gemm128", Dtype::F32);
    // 8 steps of k, each an 8x8 outer product (64 FFMA) from two float4 of A and two of B.
    assert_eq!(counts(&m), (512, 32, 0, 1, Some(Fraction::new(16, 17))));
    assert_eq!(
        sass::document_share("gemm128", Precision::F32).unwrap().1,
        Fraction::new(16, 17)
    );
    assert!(m.fma_share().value() >= 0.85, "{:?}", m.opcodes);
    // The next slice's staging: one float4 of A and one of B.
    assert_eq!(m.count_bits(Class::GlobalLoad, 128), 2);
    assert_eq!(m.count(Class::GlobalLoad), 2);

    // In f64 a 16-byte load holds two doubles: twice the loads for the same 512 DFMA.
    let d = hot("gemm128", Dtype::F64);
    assert_eq!(counts(&d), (512, 64, 0, 1, Some(Fraction::new(8, 9))));
    assert_eq!(d.count(Class::LocalMemory), 0);
    assert!(!d.opcodes.contains_key("FFMA"), "{:?}", d.opcodes);
}

#[test]
fn the_documents_progression_v4_v5_gemm64_gemm128() {
    // v4: one FMA per two scalar loads, 32 steps of k per tile.
    let v4 = hot("v4", Dtype::F32);
    assert_eq!(counts(&v4), (32, 0, 64, 2, Some(Fraction::new(1, 3))));
    // v5: 4 FMA per LDS.128 (A) + LDS (B), 32 steps.
    let v5 = hot("v5", Dtype::F32);
    assert_eq!(counts(&v5), (128, 32, 32, 2, Some(Fraction::new(2, 3))));
    // gemm64: 16 FMA per two LDS.128, 16 steps.
    let gemm64 = hot("gemm64", Dtype::F32);
    assert_eq!(counts(&gemm64), (256, 32, 0, 2, Some(Fraction::new(8, 9))));
    let gemm128 = hot("gemm128", Dtype::F32);
    for (name, mix) in [("v4", &v4), ("v5", &v5), ("gemm64", &gemm64)] {
        assert_eq!(
            mix.fma_per_fma_and_shared_load(),
            Some(sass::document_share(name, Precision::F32).unwrap().1),
            "{name}"
        );
    }
    // Over every instruction of the loop the shares are lower but keep the order.
    let shares: Vec<f64> = [&v4, &v5, &gemm64, &gemm128]
        .iter()
        .map(|m| m.fma_share().value())
        .collect();
    assert!(shares.windows(2).all(|w| w[0] < w[1]), "{shares:?}");
    assert!(shares[0] < 0.34 && shares[3] > 0.85, "{shares:?}");
}

#[test]
fn tensor_core_loops_load_their_fragments_16_bytes_at_a_time() {
    // tc-tf32, 64×64 warp tiles, k-slice 32: 2 steps × (2 blocks × 2 halves × 8 tiles) =
    // 128 HMMA from 2 × (8 B + 8 A) LDS.128, and no cvt: the tensor core truncates.
    let m = hot_at("tc-tf32", Dtype::F32, 1);
    assert_eq!(m.fma(), 128, "{:?}", m.opcodes);
    assert_eq!(m.count_bits(Class::SharedLoad, 128), 32, "{:?}", m.opcodes);
    assert!(!m.opcodes.contains_key("FSETP"), "{:?}", m.opcodes);
    // 3xTF32, 32×32 warp tiles: three HMMA per tile and k-step, 16 LDS.128.
    let m = hot_at("tc-3xtf32", Dtype::F32, 1);
    assert_eq!(m.fma(), 96, "{:?}", m.opcodes);
    assert_eq!(m.count_bits(Class::SharedLoad, 128), 16, "{:?}", m.opcodes);
    // DMMA, 64×32 warp tiles, k-slice 16: 16 m16n8k16 from 24 LDS.128 (pairs of doubles).
    let m = hot_at("tc-f64", Dtype::F64, 2);
    assert_eq!(m.fma(), 16, "{:?}", m.opcodes);
    assert_eq!(m.count_bits(Class::SharedLoad, 128), 24, "{:?}", m.opcodes);
    assert_eq!(m.count(Class::LocalMemory), 0);
}

#[test]
fn big_tile_copies_16_bytes_at_a_time_with_no_bounds_tests_inside_c() {
    // 256×128×16 slice, 16×8 per thread: 16 k-steps × 128 FFMA, A's 16 values per k-step in
    // 4 LDS.128 and B's 8 columns × 16 k in 32 LDS.128 (ptxas merges the two 8-byte loads of
    // `--tile 5` back into one): 96 loads, 2048 FFMA. The interior loop's copies: A 4 and B 2
    // 16-byte LDGSTS per thread, nothing per element, one barrier.
    let m = hot_at("big-tile", Dtype::F32, 5);
    assert_eq!(m.fma(), 2048, "{:?}", m.opcodes);
    assert_eq!(m.count_bits(Class::SharedLoad, 128), 96, "{:?}", m.opcodes);
    assert_eq!(m.count(Class::AsyncCopy), 6, "{:?}", m.opcodes);
    assert_eq!(m.count_bits(Class::AsyncCopy, 128), 6, "{:?}", m.opcodes);
    assert_eq!(m.count(Class::Barrier), 1);
    assert!(m.fma_share().value() >= 0.90, "{:?}", m.opcodes);
    // `--tile 1`, k-slices of 8: half the work per barrier, the same shape of loop.
    let m = hot_at("big-tile", Dtype::F32, 1);
    assert_eq!(
        (
            m.fma(),
            m.count_bits(Class::SharedLoad, 128),
            m.count(Class::AsyncCopy)
        ),
        (1024, 48, 3),
        "{:?}",
        m.opcodes
    );
    // split-k's partial launch is big-tile:5 over a part of k: the same loop.
    let s = hot_at("split-k", Dtype::F32, 0);
    assert_eq!(
        (
            s.fma(),
            s.count_bits(Class::SharedLoad, 128),
            s.count(Class::AsyncCopy)
        ),
        (2048, 96, 6),
        "{:?}",
        s.opcodes
    );
}

/// The `wgmma` kernels' loops: every slice's fragments come in 8-byte loads (2 per k-step and
/// warp row pair), the tensor cores get one `HGMMA` per k-step (three in 3xTF32), no barrier
/// stops the block, and the pipelined loop keeps two groups in flight (`WARPGROUP.DEPBAR.LE
/// gsb0, 0x2`) where the others wait for each (`0x0`).
#[test]
fn wgmma_loops_issue_hgmma_from_8_byte_fragment_loads_without_barriers() {
    let hopper = |variant: &str, tile: u32| {
        let entry = registry::find(variant)
            .unwrap()
            .first_entry_name(Dtype::F32, tile);
        let f = function(&entry);
        assert_eq!(
            Precision::of(f, Precision::F32),
            Precision::Warpgroup,
            "{entry}"
        );
        let (hot, mix) = f.hot_loop(Precision::Warpgroup).unwrap();
        let depbar: Vec<&str> = f
            .range(hot.start, hot.end)
            .iter()
            .filter(|i| i.opcode.starts_with("WARPGROUP.DEPBAR"))
            .map(|i| i.operands.as_str())
            .collect();
        let shape = mix
            .opcodes_of(Class::Fma)
            .first()
            .map(|(op, _)| op.to_string())
            .unwrap_or_default();
        (mix, shape, depbar)
    };
    // Pipelined, 128×256 tiles: one HGMMA.64x256x8 per k-step, four per slice, two in flight.
    let (mix, shape, depbar) = hopper("wgmma-tf32", 1);
    assert_eq!((mix.fma(), shape.as_str()), (4, "HGMMA.64x256x8.F32.TF32"));
    assert_eq!(
        (
            mix.count_bits(Class::SharedLoad, 64),
            mix.count(Class::SharedLoad)
        ),
        (8, 8)
    );
    assert_eq!(
        (mix.count(Class::Barrier), mix.count(Class::LocalMemory)),
        (0, 0)
    );
    assert!(
        depbar.len() == 4 && depbar.iter().all(|d| d.contains("0x2")),
        "{depbar:?}"
    );
    // One group per slice, waited for.
    let (mix, _, depbar) = hopper("wgmma-tf32", 2);
    assert_eq!((mix.fma(), mix.count(Class::SharedLoad)), (4, 8));
    assert!(depbar.iter().all(|d| d.contains("0x0")), "{depbar:?}");
    // 3xTF32, 128×128 tiles: three HGMMA.64x128x8 per k-step.
    let (mix, shape, _) = hopper("wgmma-3xtf32", 1);
    assert_eq!((mix.fma(), shape.as_str()), (12, "HGMMA.64x128x8.F32.TF32"));
    assert_eq!(mix.count(Class::Barrier), 0);
    // The lesson: four HGMMA.64x128x8 per slice, the tiles staged by the threads, two barriers.
    let (mix, shape, _) = hopper("wgmma-tf32-basic", 0);
    assert_eq!((mix.fma(), shape.as_str()), (4, "HGMMA.64x128x8.F32.TF32"));
    assert_eq!(mix.count(Class::Barrier), 2);
}

/// The 16-bit kernels' loops (chapter 3): every slice is four `HGMMA.64x256x16` reading both
/// operands through descriptors (A's, the `wgmma`'s B, transposed: `.tnspB`), no shared load at
/// all, no barrier, and one group kept in flight (`WARPGROUP.DEPBAR.LE gsb0, 0x1`); the same in
/// every step of the chapter and in both types.
#[test]
fn sixteen_bit_loops_issue_four_transposed_hgmma_per_slice_with_one_group_in_flight() {
    for (variant, tile) in [
        ("wgmma-16bit", 1),
        ("wgmma-cluster", 1),
        ("wgmma-tma-store", 1),
        ("wgmma-tma-store", 2),
        ("wgmma-pingpong", 1),
        ("wgmma-split-k", 2),
    ] {
        for (dtype, shape) in [
            (Dtype::Bf16, "HGMMA.64x256x16.F32.BF16"),
            (Dtype::F16, "HGMMA.64x256x16.F32"),
        ] {
            let entry = registry::find(variant)
                .unwrap()
                .first_entry_name(dtype, tile);
            let f = function(&entry);
            let (hot, mix) = f.hot_loop(Precision::Warpgroup).unwrap();
            let hgmma: Vec<&Instruction> = f
                .range(hot.start, hot.end)
                .iter()
                .filter(|i| i.base() == "HGMMA")
                .collect();
            assert_eq!(hgmma.len(), 4, "{entry}: {:?}", mix.opcodes);
            assert!(
                hgmma
                    .iter()
                    .all(|i| i.opcode == shape && i.operands.contains(".tnspB")),
                "{entry}: {hgmma:?}"
            );
            assert_eq!(
                (
                    mix.count(Class::SharedLoad),
                    mix.count(Class::Barrier),
                    mix.count(Class::LocalMemory)
                ),
                (0, 0, 0),
                "{entry}: {:?}",
                mix.opcodes
            );
            let depbar: Vec<&str> = f
                .range(hot.start, hot.end)
                .iter()
                .filter(|i| i.opcode.starts_with("WARPGROUP.DEPBAR"))
                .map(|i| i.operands.as_str())
                .collect();
            assert_eq!(depbar, ["gsb0, 0x1"], "{entry}");
        }
    }
}

/// The TMA-store epilogues load nothing while they store: between the first and the last
/// `STSM` of one tile's store (each copy the kernel holds: the plain store, and the one after
/// the fused epilogue's pass) there is no global load. With `beta` a run-time value, every pair
/// of the plain store carried a branch around its own load of C: the store spread over 1 000–
/// 3 000 instructions with 56–180 `LDG`s among them, and on a short-k batch, where the epilogue
/// is the kernel, the warps waited for instructions to be fetched 40% of their time
/// (`pipeline::epilogue::plain`; `docs/perf-notes.md`, 2026-11-28).
#[test]
fn the_tma_store_epilogues_load_nothing_between_their_stmatrix() {
    // (variant, tile, dtype, `STSM`s per thread and tile)
    for (variant, tile, dtype, per_store) in [
        ("wgmma-tma-store", 1, Dtype::Bf16, 16),
        ("wgmma-tma-store", 4, Dtype::F16, 16),
        ("wgmma-layouts", 2, Dtype::Bf16, 16),
        ("wgmma-queue", 2, Dtype::Bf16, 16),
        ("wgmma-queue", 3, Dtype::F16, 16),
        ("wgmma-fp8-block", 9, Dtype::E4m3, 8),
    ] {
        let entry = registry::find(variant)
            .unwrap()
            .first_entry_name(dtype, tile);
        let f = function(&entry);
        let stores: Vec<usize> = (0..f.instructions.len())
            .filter(|&i| f.instructions[i].base() == "STSM")
            .collect();
        assert!(
            !stores.is_empty() && stores.len().is_multiple_of(per_store),
            "{entry}: {} STSM, not whole stores of {per_store}",
            stores.len()
        );
        for store in stores.chunks(per_store) {
            let span = &f.instructions[store[0]..=store[per_store - 1]];
            let loads: Vec<&Instruction> = span.iter().filter(|i| i.base() == "LDG").collect();
            assert!(
                loads.is_empty(),
                "{entry}: {} global loads among the {} instructions of a store, from {:#x}: {loads:?}",
                loads.len(),
                span.len(),
                span[0].address
            );
        }
    }
}

/// The tile queue of a one-block cluster publishes its units at the block's scope: no fence at
/// the GPU's scope and no invalidation of L1 anywhere in `wgmma-queue:2` and `:3`. Written as
/// a release at cluster scope, each unit cost the producer a `MEMBAR.ALL.GPU` and an `ERRBAR`
/// before its loads (a quarter of the producer's samples under C's write stream), and each
/// reader a `CCTL.IVALL`; `:3`'s three stages did not hide it (2048 × 2048 × 128, 1 024
/// members: 0.80 → 0.97× cuBLAS; `docs/perf-notes.md`, 2026-11-28). The clustered `:1` must
/// publish to its peer at cluster scope and keeps them: the control that the test sees them.
#[test]
fn a_one_block_tile_queue_publishes_without_a_gpu_fence() {
    let fences = |entry: &str| {
        let f = function(entry);
        let count = |opcode: &str| {
            f.instructions
                .iter()
                .filter(|i| i.opcode.starts_with(opcode))
                .count()
        };
        (count("MEMBAR.ALL.GPU"), count("CCTL.IVALL"))
    };
    let variant = registry::find("wgmma-queue").unwrap();
    for dtype in [Dtype::Bf16, Dtype::F16] {
        for tile in [2, 3] {
            let entry = variant.first_entry_name(dtype, tile);
            assert_eq!(
                fences(&entry),
                (0, 0),
                "{entry}: (MEMBAR.ALL.GPU, CCTL.IVALL) in a kernel whose cluster is one block"
            );
        }
        let clustered = variant.first_entry_name(dtype, 1);
        let (membar, cctl) = fences(&clustered);
        assert!(
            membar > 0 && cctl > 0,
            "{clustered}: {membar} MEMBAR.ALL.GPU, {cctl} CCTL.IVALL: its release and acquire at cluster scope should show"
        );
    }
}

/// The pitched copy (`variants/pitched_copy.rs`): eight 2-byte loads and one 16-byte store a
/// thread, the 16 bits moved as bits (no conversion), no shared memory, no local memory.
#[test]
fn the_pitched_copy_loads_eight_halves_and_stores_sixteen_bytes_a_thread() {
    for dtype in ["bf16", "f16"] {
        let f = function(&format!("{}_{dtype}", kernels_gpu::registry::PITCHED_COPY));
        let all = Mix::of(&f.instructions, Precision::F32);
        let counts = [
            all.count(Class::GlobalLoad),
            all.count(Class::GlobalStore),
            all.count(Class::SharedStore),
            all.count(Class::SharedLoad),
            all.count(Class::LocalMemory),
        ];
        assert_eq!(counts, [8, 1, 0, 0, 0], "{dtype}: {:?}", all.opcodes);
        assert!(
            all.opcodes
                .keys()
                .any(|o| o.starts_with("STG") && o.contains("128")),
            "{dtype}: the store is not one 16-byte STG: {:?}",
            all.opcodes
        );
        assert!(
            !all.opcodes
                .keys()
                .any(|o| o.starts_with("F2") || o.starts_with("I2F")),
            "{dtype}: a conversion in a copy of bits: {:?}",
            all.opcodes
        );
    }
}

/// The transposing copy (`variants/transpose.rs`), in every type it is built for: each thread
/// moves four elements in, through the padded tile, and four out, with one barrier between; no
/// arithmetic, no local memory.
#[test]
fn the_transposing_copy_moves_four_elements_a_thread_through_one_barrier() {
    let types = [
        ("f32", Precision::F32),
        ("f64", Precision::F64),
        ("bf16", Precision::F32),
        ("f16", Precision::F32),
    ];
    for (dtype, precision) in types {
        let f = function(&format!("{}_{dtype}", kernels_gpu::registry::TRANSPOSE));
        let all = Mix::of(&f.instructions, precision);
        let counts = [
            all.count(Class::GlobalLoad),
            all.count(Class::SharedStore),
            all.count(Class::Barrier),
            all.count(Class::SharedLoad),
            all.count(Class::GlobalStore),
            all.count(Class::Fma),
            all.count(Class::LocalMemory),
        ];
        assert_eq!(counts, [4, 4, 1, 4, 4, 0, 0], "{dtype}: {:?}", all.opcodes);
        // The 16-bit copy rounds its f32 back with F2FP (exact for a value of the type). An
        // F2I here is ptxas converting a float it was given as bits: the first version's bug,
        // which wrote zeros on the H100 and passed the emulator.
        assert!(
            !all.opcodes.keys().any(|o| o.starts_with("F2I")),
            "{dtype}: a float-to-integer conversion in the copy: {:?}",
            all.opcodes
        );
    }
}
