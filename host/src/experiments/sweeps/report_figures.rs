//! The figures of the `003` lab report, quoted beside ours in every table, and `quote3`, which
//! writes a row of three of them as the report does. They are data copied from the document,
//! not results, so they sit apart from the code that measures: one place to check them against
//! the report. The three one-parameter sweeps take their values from them, so that each of our
//! rows has the report's row beside it.

// The report's figures, in ms (`003_…txt`). CPU: an Intel i5-8265U, one thread, gcc -O2 -mfma.
// GPU: not named in the report (a Xeon Silver 4210 host, nvcc 10.2); 2.3.2 and 2.3.3 timed
// with nvprof, 2.3.1 with clock() around the whole call. None is the report's "N/A".
/// 1.3.1: n → (baseline, AVX, AVX blocked with blockL 64).
pub(super) const REPORT_CPU_SIZES: [(u32, [Option<f64>; 3]); 4] = [
    (512, [Some(250.0), Some(16.0), Some(31.0)]),
    (1024, [Some(4219.0), Some(156.0), Some(188.0)]),
    (2048, [Some(65078.0), Some(2172.0), Some(1734.0)]),
    (4096, [None, Some(18109.0), Some(13703.0)]),
];
/// 1.3.2: blockL → AVX blocked at 2^11.
pub(super) const REPORT_CPU_BLOCKING: [(u32, f64); 9] = [
    (8, 3141.0),
    (16, 2172.0),
    (32, 1750.0),
    (64, 1734.0),
    (128, 1531.0),
    (256, 1484.0),
    (512, 1297.0),
    (1024, 2063.0),
    (2048, 2172.0),
];
/// 2.3.2: block size → basic GPU kernel at 2^13.
pub(super) const REPORT_GPU_THREADS: [(u32, f64); 10] = [
    (2, 65443.0),
    (4, 34350.0),
    (8, 19655.0),
    (16, 13560.0),
    (32, 6919.0),
    (64, 5776.0),
    (128, 5652.0),
    (256, 5651.0),
    (512, 5625.0),
    (1024, 5505.0),
];
/// 2.3.3: blockL → blocked GPU kernel at 2^13.
pub(super) const REPORT_GPU_BLOCKING: [(u32, f64); 5] = [
    (2, 20123.0),
    (4, 3802.0),
    (8, 1287.0),
    (16, 644.0),
    (32, 500.0),
];
/// 2.3.1: n → (CPU baseline, GPU basic, GPU blocked), block size = blockL = 32.
pub(super) const REPORT_SCALING: [(u32, [Option<f64>; 3]); 6] = [
    (512, [Some(475.0), Some(248.0), Some(3.0)]),
    (1024, [Some(3781.0), Some(248.0), Some(8.0)]),
    (2048, [Some(49729.0), Some(346.0), Some(25.0)]),
    (4096, [None, Some(1333.0), Some(124.0)]),
    (8192, [None, Some(7593.0), Some(741.0)]),
    (16384, [None, Some(57881.0), Some(5713.0)]),
];

pub(super) fn quote3(values: &[Option<f64>; 3]) -> String {
    values
        .iter()
        .map(|v| v.map_or("N/A".into(), |v| format!("{v:.0}")))
        .collect::<Vec<_>>()
        .join(" / ")
}
