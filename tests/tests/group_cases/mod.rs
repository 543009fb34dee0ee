//! The grouped GEMMs' test cases, shared by the emulator's test and the GPU's (each declares
//! `epilogue_cases` too: a group's matrices are its padded problems).
use gpu_gemm::half::{bf16, f16};
use gpu_gemm::problem::{Batch, GroupLayout, Inputs, Problem, Scalar, Transposes};
use gpu_gemm::registry::{self, Variant};
use gpu_gemm::run::{plan, Backend};
use gpu_gemm::verify::{self, Check};
use kernels_gpu::gemm::Dtype;

pub use super::epilogue_cases::ONCE;

/// A word of a contiguous table that names no group: padding.
pub const PADDING: u32 = u32::MAX;

/// A contiguous grouped problem: `table.len()` runs of 128 columns in one B and one C, an A per
/// group of `groups` (each `gap` elements after the last, so that a kernel which steps by a
/// matrix's size instead of the stride shows).
pub fn contiguous(
    dtype: Dtype,
    (m, k): (u32, u32),
    t: Transposes,
    table: &[u32],
    groups: u32,
    beta: f64,
) -> Problem {
    let n = 128 * table.len() as u32;
    let mut p = super::epilogue_cases::problem(dtype, (m, n, k), t, beta, "none");
    let packed = p.packed_strides(groups);
    p.batch = Batch {
        stride_a: packed.stride_a + 64,
        stride_b: 0,
        stride_c: 0,
        ..packed
    };
    p.groups = GroupLayout::Contiguous;
    p.validate().unwrap();
    p
}

/// A masked grouped problem: `counts.len()` members of `capacity` columns each, `gap` elements
/// apart, member `g` computing its first `counts[g]`.
pub fn masked(
    dtype: Dtype,
    (m, capacity, k): (u32, u32, u32),
    t: Transposes,
    counts: &[u32],
    beta: f64,
) -> Problem {
    let mut p = super::epilogue_cases::problem(dtype, (m, capacity, k), t, beta, "none");
    let packed = p.packed_strides(counts.len() as u32);
    p.batch = Batch {
        stride_a: packed.stride_a + 64,
        stride_b: packed.stride_b + 64,
        stride_c: packed.stride_c + 64,
        ..packed
    };
    p.groups = GroupLayout::Masked;
    p.validate().unwrap();
    p
}

/// The contiguous table of the tests: groups of one and two runs, a group's runs apart, and
/// padding between them (`[2, 0, PADDING, 0, 1]`, three groups over 640 columns).
pub const UNEVEN: [u32; 5] = [2, 0, PADDING, 0, 1];
/// The masked counts of the tests: past the first 64-column box, the whole capacity, none, and
/// exactly one 128-column tile (the tile after it skipped).
pub const COUNTS: [u32; 4] = [77, 200, 0, 128];

/// The kernels that run a grouped GEMM, each at the tile that does, in every layout it computes.
pub fn grouped_kernels() -> Vec<(Variant, Option<u32>, Transposes)> {
    registry::all()
        .into_iter()
        .filter(|v| matches!(v, Variant::Kernel(_)))
        .flat_map(|v| {
            let tiles: Vec<Option<u32>> = if v.tiles().is_empty() {
                vec![None]
            } else {
                v.tiles().iter().map(|&t| Some(t)).collect()
            };
            tiles
                .into_iter()
                .flat_map(move |tile| v.transposes().into_iter().map(move |t| (v, tile, t)))
        })
        .filter(|&(v, tile, t)| v.runs_grouped(Dtype::Bf16, t, Some(tile.unwrap_or(1))))
        .collect()
}

/// Runs `variant` once on `p` with the group table `table` on `backend`, and checks every
/// group against its f64 reference and every column no group owns for changes.
pub fn run_checked<T: Scalar>(
    backend: &Backend,
    variant: Variant,
    tile: Option<u32>,
    p: &Problem,
    table: &[u32],
) -> anyhow::Result<Check> {
    let inputs = Inputs::<T> {
        groups: table.to_vec(),
        ..Inputs::generate(p)
    };
    let launch = plan(variant, tile, p, backend.arch())?;
    let measured = match backend {
        Backend::Gpu(gpu) => gpu.run(&launch, p, &inputs, ONCE)?,
        Backend::Emulator => gpu_gemm::emulator::run(&launch, p, &inputs, ONCE)?,
    };
    let references = verify::references(p, &inputs);
    Ok(verify::check_groups(
        p,
        variant.arithmetic(),
        &references,
        &inputs,
        &measured.uploaded_c,
        &measured.result,
    ))
}

/// Every kernel of [`grouped_kernels`] in both layouts on `backend`: contiguous over [`UNEVEN`]
/// in bf16, masked over [`COUNTS`] in f16, beta 0 and 0.5 in turn; m crosses the 256-row tiles'
/// edge, the masked capacity the 128-column tiles'. Panics with the first failure.
pub fn every_kernel_in_both_layouts(backend: &Backend) {
    for (i, (variant, tile, t)) in grouped_kernels().into_iter().enumerate() {
        let beta = [0.0, 0.5][i % 2];
        for layout in [GroupLayout::Contiguous, GroupLayout::Masked] {
            let what = format!(
                "{}:{} {} {layout:?} beta {beta}",
                variant.name(),
                tile.unwrap_or(1),
                t.name()
            );
            let check = if layout == GroupLayout::Contiguous {
                let p = contiguous(Dtype::Bf16, (136, 64), t, &UNEVEN, 3, beta);
                run_checked::<bf16>(backend, variant, tile, &p, &UNEVEN)
            } else {
                let p = masked(Dtype::F16, (136, 200, 64), t, &COUNTS, beta);
                run_checked::<f16>(backend, variant, tile, &p, &COUNTS)
            }
            .unwrap_or_else(|e| panic!("{what}: {e:#}"));
            assert!(check.passed(), "{what}: {}", check.summary());
            println!("{what}: {}", check.summary());
        }
    }
}

/// The planted bug "a group read one block of columns on", shared by the 16-bit and the FP8
/// grouped tests: where `tile` lies by `locate`, but with the group of the block after it
/// (its own where the table ends: no block after the last).
pub fn one_block_on(
    tile: kernels_gpu::pipeline::schedule::Tile,
    (bn, n): (u32, u32),
    locate: impl Fn(
        kernels_gpu::pipeline::schedule::Tile,
    ) -> Option<kernels_gpu::pipeline::schedule::Tile>,
) -> Option<kernels_gpu::pipeline::schedule::Tile> {
    use kernels_gpu::pipeline::schedule::Tile;
    let next = Tile {
        col: tile.col + 1,
        ..tile
    };
    let inside = (tile.col + 1) * bn < n;
    let group = match inside.then(|| locate(next)).flatten() {
        Some(t) => t.group,
        None => tile.group,
    };
    locate(tile).map(|t| Tile { group, ..t })
}
