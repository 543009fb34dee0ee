//! The course's table of contents: [`CHAPTERS`] in reading order, each with the variants it
//! teaches, the files its lesson and code come from and the results it quotes.
//!
//! It is data, kept apart from the code that renders it, because it is what changes when the
//! course grows: a new variant is a new row here (and its notes in `docs/book/chapters/`), never
//! an edit to the generator.
use std::collections::BTreeSet;

/// The part of the book a chapter belongs to, in reading order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Progression,
    OtherDocuments,
    BeyondTheDocuments,
    TensorCores1,
    TensorCores2,
    TensorCores3,
    TensorCores4,
    TensorCores5,
    AcrossGpus,
}

impl Part {
    pub const ALL: [Part; 9] = [
        Part::Progression,
        Part::OtherDocuments,
        Part::BeyondTheDocuments,
        Part::TensorCores1,
        Part::TensorCores2,
        Part::TensorCores3,
        Part::TensorCores4,
        Part::TensorCores5,
        Part::AcrossGpus,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Part::Progression => "The documents' progression: from 1% of cuBLAS to 93%",
            Part::OtherDocuments => "The other documents: precision, CPU sweeps, warp shuffles",
            Part::BeyondTheDocuments => "Beyond the documents, on the CUDA cores",
            Part::TensorCores1 => "Tensor cores, chapter 1: mma.sync",
            Part::TensorCores2 => "Tensor cores, chapter 2: Hopper's TMA and wgmma",
            Part::TensorCores3 => "Tensor cores, chapter 3: 16-bit types on Hopper",
            Part::TensorCores4 => "Tensor cores, chapter 4: FP8 on Hopper",
            Part::TensorCores5 => "Tensor cores, chapter 5: the shapes programs run",
            Part::AcrossGpus => "Across GPUs: one layer over the GPUs of a host",
        }
    }
}

/// How a chapter uses a results page of `docs/results/` (a folder `host experiment` wrote).
#[derive(Clone, Copy, Debug)]
pub enum Measured {
    /// Only the table rows of the chapter's variants (and the cuBLAS yardsticks beside them),
    /// with the chart of each table that has one of them.
    Rows(&'static str),
    /// Every table and chart of the page: the experiment is the chapter's subject.
    Page(&'static str),
}

/// Where a chapter's code comes from: a source file and the name of its anchor.
#[derive(Clone, Copy, Debug)]
pub struct Code {
    pub file: &'static str,
    pub anchor: &'static str,
}

const fn code(file: &'static str) -> Code {
    Code {
        file,
        anchor: "core_loop",
    }
}

/// One step of the course.
#[derive(Clone, Copy, Debug)]
pub struct Chapter {
    /// The page's file name (without `.md`), and the name of its notes in `docs/book/chapters/`.
    pub slug: &'static str,
    pub title: &'static str,
    pub part: Part,
    /// The `--variant` names it teaches (registry names).
    pub variants: &'static [&'static str],
    /// The files whose `//!` doc header is the lesson.
    pub lessons: &'static [&'static str],
    pub code: &'static [Code],
    pub measured: &'static [Measured],
}

macro_rules! variant {
    ($file:literal) => {
        concat!("kernels-gpu/src/variants/", $file)
    };
}

/// The course in reading order.
pub const CHAPTERS: &[Chapter] = &[
    Chapter {
        slug: "v0",
        title: "v0: one thread per element",
        part: Part::Progression,
        variants: &["v0"],
        lessons: &[variant!("v0_uncoalesced.rs")],
        code: &[code(variant!("v0_uncoalesced.rs"))],
        measured: &[Measured::Rows("001-progression")],
    },
    Chapter {
        slug: "v1",
        title: "v1: coalesced loads",
        part: Part::Progression,
        variants: &["v1"],
        lessons: &[variant!("v1_coalesced.rs")],
        code: &[code(variant!("v1_coalesced.rs"))],
        measured: &[Measured::Rows("001-progression")],
    },
    Chapter {
        slug: "v2",
        title: "v2: indices in locals",
        part: Part::Progression,
        variants: &["v2"],
        lessons: &[variant!("v2_local_indices.rs")],
        code: &[code(variant!("v2_local_indices.rs"))],
        measured: &[Measured::Rows("001-progression")],
    },
    Chapter {
        slug: "v3",
        title: "v3: shared-memory tiles",
        part: Part::Progression,
        variants: &["v3"],
        lessons: &[variant!("v3_shared_tiles.rs"), variant!("tiled.rs")],
        code: &[code(variant!("tiled.rs"))],
        measured: &[Measured::Rows("001-progression")],
    },
    Chapter {
        slug: "v4",
        title: "v4: padded tiles, no bank conflicts",
        part: Part::Progression,
        variants: &["v4"],
        lessons: &[variant!("v4_padded_tiles.rs")],
        code: &[code(variant!("tiled.rs"))],
        measured: &[Measured::Rows("001-progression")],
    },
    Chapter {
        slug: "tiled",
        title: "tiled: 000's tile-width sweep",
        part: Part::Progression,
        variants: &["tiled"],
        lessons: &[variant!("tiled.rs")],
        code: &[code(variant!("tiled.rs"))],
        measured: &[Measured::Page("000-tile-sweep")],
    },
    Chapter {
        slug: "v5",
        title: "v5: four outputs per thread, float4, prefetch",
        part: Part::Progression,
        variants: &["v5"],
        lessons: &[variant!("v5_float4.rs")],
        code: &[code(variant!("v5_float4.rs"))],
        measured: &[Measured::Rows("001-progression")],
    },
    Chapter {
        slug: "gemm64",
        title: "gemm64: 64×64 tiles, 4×4 per thread",
        part: Part::Progression,
        variants: &["gemm64"],
        lessons: &[variant!("gemm64.rs")],
        code: &[code(variant!("gemm64.rs"))],
        measured: &[Measured::Rows("001-progression")],
    },
    Chapter {
        slug: "gemm128",
        title: "gemm128: 128×128 tiles, 8×8 per thread, double buffer",
        part: Part::Progression,
        variants: &["gemm128"],
        lessons: &[variant!("gemm128.rs")],
        code: &[code(variant!("gemm128.rs"))],
        measured: &[Measured::Rows("001-progression")],
    },
    Chapter {
        slug: "fynv",
        title: "fynv: the same design, written by another hand",
        part: Part::Progression,
        variants: &["fynv"],
        lessons: &[variant!("fynv.rs")],
        code: &[code(variant!("fynv.rs"))],
        measured: &[Measured::Rows("001-progression")],
    },
    Chapter {
        slug: "alc",
        title: "alc1, alc2, alc3: a tutorial's three kernels",
        part: Part::Progression,
        variants: &["alc1", "alc2", "alc3"],
        lessons: &[
            variant!("alcanderian.rs"),
            variant!("alc1.rs"),
            variant!("alc2.rs"),
            variant!("alc3.rs"),
        ],
        code: &[code(variant!("alcanderian.rs"))],
        measured: &[Measured::Rows("001-progression")],
    },
    Chapter {
        slug: "precision",
        title: "002: naive, Kahan, row-shared, blocked Kahan (precision)",
        part: Part::OtherDocuments,
        variants: &["naive", "kahan", "row-shared", "blocked-kahan"],
        lessons: &[
            variant!("naive.rs"),
            variant!("kahan.rs"),
            variant!("row_shared.rs"),
            variant!("blocked_kahan.rs"),
        ],
        code: &[
            code(variant!("kahan.rs")),
            code(variant!("row_shared.rs")),
            code(variant!("blocked_kahan.rs")),
        ],
        measured: &[Measured::Rows("002-precision")],
    },
    Chapter {
        slug: "sweeps",
        title: "003: the CPU against the GPU (basic, blocked, cpu-*)",
        part: Part::OtherDocuments,
        variants: &[
            "basic",
            "blocked",
            "cpu-naive",
            "cpu-simd",
            "cpu-blocked",
            "cpu-parallel",
            "cpu-ndarray",
        ],
        lessons: &[
            "gpu-gemm/src/cpu/mod.rs",
            "gpu-gemm/src/cpu/naive.rs",
            "gpu-gemm/src/cpu/simd.rs",
            "gpu-gemm/src/cpu/blocked.rs",
            "gpu-gemm/src/cpu/parallel.rs",
            "gpu-gemm/src/cpu/ndarray_gemm.rs",
        ],
        code: &[
            code("gpu-gemm/src/cpu/blocked.rs"),
            code(variant!("naive.rs")),
        ],
        measured: &[Measured::Page("003-sweeps")],
    },
    Chapter {
        slug: "shuffles",
        title: "004: warp shuffles and register tiles (cg-*)",
        part: Part::OtherDocuments,
        variants: &["cg-shuffle", "cg-regs", "cg-tile2x2"],
        lessons: &[
            variant!("cg_shuffle.rs"),
            variant!("cg_regs.rs"),
            variant!("cg_tile2x2.rs"),
        ],
        code: &[
            code(variant!("cg_shuffle.rs")),
            code(variant!("cg_regs.rs")),
            code(variant!("cg_tile2x2.rs")),
        ],
        measured: &[Measured::Page("004-cg")],
    },
    Chapter {
        slug: "best",
        title: "best: warp tiles and a cp.async pipeline",
        part: Part::BeyondTheDocuments,
        variants: &["best"],
        lessons: &[variant!("best.rs")],
        code: &[code(variant!("best.rs"))],
        measured: &[Measured::Rows("001-progression")],
    },
    Chapter {
        slug: "big-tile",
        title: "big-tile: cuBLAS's SIMT design, read from its profile",
        part: Part::BeyondTheDocuments,
        variants: &["big-tile"],
        lessons: &[variant!("big_tile.rs")],
        code: &[code(variant!("big_tile.rs"))],
        measured: &[Measured::Rows("001-progression")],
    },
    Chapter {
        slug: "split-k",
        title: "split-k: more blocks for shapes with few tiles",
        part: Part::BeyondTheDocuments,
        variants: &["split-k"],
        lessons: &[variant!("split_k.rs")],
        code: &[code(variant!("split_k.rs"))],
        measured: &[Measured::Rows("001-progression")],
    },
    Chapter {
        slug: "auto",
        title: "auto: the fastest kernel per shape, from a measured table",
        part: Part::BeyondTheDocuments,
        variants: &["auto"],
        lessons: &["gpu-gemm/src/auto.rs", variant!("transpose.rs")],
        code: &[code("gpu-gemm/src/auto.rs"), code(variant!("transpose.rs"))],
        measured: &[],
    },
    Chapter {
        slug: "library",
        title: "The library: the kernels from your own Rust code",
        part: Part::BeyondTheDocuments,
        variants: &["tuned", "unfused"],
        lessons: &[
            "gpu-gemm/src/api/mod.rs",
            "gpu-gemm/src/api/plan.rs",
            "gpu-gemm/src/api/fp8.rs",
            "gpu-gemm/src/api/cudarc_buffers.rs",
            "kernels-gpu/src/fused.rs",
            variant!("bias_activation.rs"),
            "gpu-gemm/src/tuning.rs",
        ],
        code: &[
            code("gpu-gemm/examples/quickstart.rs"),
            Code {
                file: "gpu-gemm/examples/plan.rs",
                anchor: "plan_loop",
            },
            Code {
                file: "gpu-gemm/examples/cudarc.rs",
                anchor: "cudarc",
            },
            code("gpu-gemm/examples/batch.rs"),
            code("gpu-gemm/examples/grouped.rs"),
        ],
        measured: &[],
    },
    Chapter {
        slug: "tc-tf32-basic",
        title: "tc-tf32-basic: one mma.sync, its fragments by the ISA's table",
        part: Part::TensorCores1,
        variants: &["tc-tf32-basic"],
        lessons: &[variant!("tc_tf32_basic.rs")],
        code: &[code(variant!("tc_tf32_basic.rs"))],
        measured: &[
            Measured::Rows("001-progression"),
            Measured::Rows("002-precision"),
        ],
    },
    Chapter {
        slug: "tc-tf32",
        title: "tc-tf32: a pipelined tensor-core kernel",
        part: Part::TensorCores1,
        variants: &["tc-tf32"],
        lessons: &[variant!("tc_tf32.rs")],
        code: &[code(variant!("tc_tf32.rs"))],
        measured: &[
            Measured::Rows("001-progression"),
            Measured::Rows("002-precision"),
        ],
    },
    Chapter {
        slug: "tc-3xtf32",
        title: "tc-3xtf32: FP32 accuracy from TF32 tensor cores",
        part: Part::TensorCores1,
        variants: &["tc-3xtf32"],
        lessons: &[variant!("tc_3xtf32.rs")],
        code: &[code(variant!("tc_3xtf32.rs"))],
        measured: &[
            Measured::Rows("001-progression"),
            Measured::Rows("002-precision"),
        ],
    },
    Chapter {
        slug: "tc-f64",
        title: "tc-f64: the FP64 tensor cores (DMMA)",
        part: Part::TensorCores1,
        variants: &["tc-f64"],
        lessons: &[variant!("tc_f64.rs")],
        code: &[code(variant!("tc_f64.rs"))],
        measured: &[Measured::Rows("001-progression")],
    },
    Chapter {
        slug: "wgmma-tf32-basic",
        title: "wgmma-tf32-basic: one warpgroup, matrix descriptors",
        part: Part::TensorCores2,
        variants: &["wgmma-tf32-basic"],
        lessons: &[variant!("wgmma_tf32_basic.rs")],
        code: &[code(variant!("wgmma_tf32_basic.rs"))],
        measured: &[Measured::Rows("001-progression")],
    },
    Chapter {
        slug: "wgmma-tf32",
        title: "wgmma-tf32 and wgmma-3xtf32: TMA, mbarriers, producer and consumers",
        part: Part::TensorCores2,
        variants: &["wgmma-tf32", "wgmma-3xtf32"],
        lessons: &[variant!("wgmma_tf32.rs"), variant!("ranges.rs")],
        code: &[
            code(variant!("wgmma_tf32.rs")),
            Code {
                file: variant!("wgmma_tf32.rs"),
                anchor: "split_b",
            },
            Code {
                file: variant!("ranges.rs"),
                anchor: "ranges_pass",
            },
        ],
        measured: &[
            Measured::Rows("001-progression"),
            Measured::Rows("002-precision"),
        ],
    },
    Chapter {
        slug: "pipeline",
        title: "The Hopper skeleton: one pipeline for every chapter-3 kernel",
        part: Part::TensorCores3,
        variants: &[],
        lessons: &[
            "kernels-gpu/src/pipeline/mod.rs",
            "kernels-gpu/src/pipeline/ring.rs",
            "kernels-gpu/src/pipeline/schedule.rs",
            "kernels-gpu/src/pipeline/epilogue.rs",
        ],
        code: &[code("kernels-gpu/src/pipeline/mod.rs")],
        measured: &[],
    },
    Chapter {
        slug: "wgmma-16bit",
        title: "wgmma-16bit: BF16 and FP16 end to end",
        part: Part::TensorCores3,
        variants: &["wgmma-16bit"],
        lessons: &[variant!("wgmma_16bit.rs")],
        code: &[code(variant!("wgmma_16bit.rs"))],
        measured: &[Measured::Rows("005-hopper")],
    },
    Chapter {
        slug: "wgmma-cluster",
        title: "wgmma-cluster: clusters and TMA multicast",
        part: Part::TensorCores3,
        variants: &["wgmma-cluster"],
        lessons: &[variant!("wgmma_cluster.rs")],
        code: &[code(variant!("wgmma_cluster.rs"))],
        measured: &[Measured::Rows("005-hopper")],
    },
    Chapter {
        slug: "wgmma-tma-store",
        title: "wgmma-tma-store: the epilogue through stmatrix and the TMA engine",
        part: Part::TensorCores3,
        variants: &["wgmma-tma-store"],
        lessons: &[variant!("wgmma_tma_store.rs")],
        code: &[code(variant!("wgmma_tma_store.rs"))],
        measured: &[Measured::Rows("005-hopper")],
    },
    Chapter {
        slug: "wgmma-pingpong",
        title: "wgmma-pingpong: two consumers taking turns",
        part: Part::TensorCores3,
        variants: &["wgmma-pingpong"],
        lessons: &[variant!("wgmma_pingpong.rs")],
        code: &[code(variant!("wgmma_pingpong.rs"))],
        measured: &[Measured::Rows("005-hopper")],
    },
    Chapter {
        slug: "wgmma-split-k",
        title: "wgmma-split-k: split-k on the tensor cores",
        part: Part::TensorCores3,
        variants: &["wgmma-split-k"],
        lessons: &[variant!("wgmma_split_k.rs")],
        code: &[code(variant!("wgmma_split_k.rs"))],
        measured: &[Measured::Rows("005-hopper")],
    },
    Chapter {
        slug: "wgmma-fp8",
        title: "wgmma-fp8: e4m3 with one scale per tensor, and what the tensor cores keep",
        part: Part::TensorCores4,
        variants: &["wgmma-fp8"],
        lessons: &[variant!("wgmma_fp8.rs"), "kernels-gpu/src/device/fp8.rs"],
        code: &[code(variant!("wgmma_fp8.rs"))],
        measured: &[],
    },
    Chapter {
        slug: "wgmma-fp8-block",
        title: "wgmma-fp8-block: block scales and promotion to f32",
        part: Part::TensorCores4,
        variants: &["wgmma-fp8-block"],
        lessons: &[variant!("wgmma_fp8_block.rs")],
        code: &[code(variant!("wgmma_fp8_block.rs"))],
        measured: &[],
    },
    Chapter {
        slug: "wgmma-layouts",
        title: "wgmma-layouts: every op(A), op(B), read as it lies",
        part: Part::TensorCores5,
        variants: &["wgmma-layouts"],
        lessons: &[variant!("wgmma_layouts.rs")],
        code: &[code(variant!("wgmma_layouts.rs"))],
        measured: &[],
    },
    Chapter {
        slug: "wgmma-narrow",
        title: "wgmma-narrow: decode-sized tiles and a stream-k grid",
        part: Part::TensorCores5,
        variants: &["wgmma-narrow", "wgmma-fp8-narrow", "wgmma-fp8-block-narrow"],
        lessons: &[
            variant!("wgmma_narrow.rs"),
            "kernels-gpu/src/pipeline/stream.rs",
            "kernels-gpu/src/device/semaphore.rs",
        ],
        code: &[
            code(variant!("wgmma_narrow.rs")),
            code("kernels-gpu/src/pipeline/stream.rs"),
        ],
        measured: &[],
    },
    Chapter {
        slug: "wgmma-fp8-block-swap",
        title: "wgmma-fp8-block-swap: the tokens as the wgmma's M",
        part: Part::TensorCores5,
        variants: &["wgmma-fp8-block-swap"],
        lessons: &[variant!("wgmma_fp8_block_swap.rs")],
        code: &[code(variant!("wgmma_fp8_block_swap.rs"))],
        measured: &[],
    },
    Chapter {
        slug: "wgmma-swap",
        title: "wgmma-swap: the tokens as the wgmma's M, in bf16, e4m3 and TF32",
        part: Part::TensorCores5,
        variants: &["wgmma-swap", "wgmma-fp8-swap", "wgmma-tf32-swap"],
        lessons: &[variant!("wgmma_swap.rs")],
        code: &[code(variant!("wgmma_swap.rs"))],
        measured: &[],
    },
    Chapter {
        slug: "wgmma-stream-k",
        title: "wgmma-stream-k: the wide tiles on a stream-k grid (a measured negative)",
        part: Part::TensorCores5,
        variants: &["wgmma-stream-k"],
        lessons: &[variant!("wgmma_stream_k.rs")],
        code: &[
            Code {
                file: variant!("wgmma_layouts.rs"),
                anchor: "stream_k_config",
            },
            Code {
                file: variant!("wgmma_16bit.rs"),
                anchor: "stream_k",
            },
        ],
        measured: &[],
    },
    Chapter {
        slug: "wgmma-waves",
        title: "wgmma-waves: a tile for the waves (192 × 128, three consumers of 64 rows)",
        part: Part::TensorCores5,
        variants: &["wgmma-waves"],
        lessons: &[variant!("wgmma_waves.rs")],
        code: &[
            Code {
                file: variant!("wgmma_16bit.rs"),
                anchor: "rows_64",
            },
            Code {
                file: "gpu-gemm/src/auto.rs",
                anchor: "wave_tiles",
            },
        ],
        measured: &[],
    },
    Chapter {
        slug: "wgmma-queue",
        title: "wgmma-queue: a batch's tiles handed out in order by a counter",
        part: Part::TensorCores5,
        variants: &["wgmma-queue"],
        lessons: &[
            variant!("wgmma_queue.rs"),
            "kernels-gpu/src/pipeline/queue.rs",
        ],
        code: &[
            Code {
                file: "kernels-gpu/src/pipeline/queue.rs",
                anchor: "publish",
            },
            Code {
                file: "kernels-gpu/src/pipeline/mod.rs",
                anchor: "queue_walk",
            },
        ],
        measured: &[],
    },
    Chapter {
        slug: "shapes",
        title: "Shapes: auto over the models' shapes, beside cuBLAS",
        part: Part::TensorCores5,
        variants: &[],
        lessons: &["host/src/experiments/shapes.rs"],
        code: &[Code {
            file: "gpu-gemm/src/auto.rs",
            anchor: "shape_rule",
        }],
        measured: &[Measured::Page("006-shapes-bf16")],
    },
    Chapter {
        slug: "alignment",
        title: "Shapes nobody tuned for: alignment, L2 lines and waves",
        part: Part::TensorCores5,
        variants: &[],
        lessons: &[
            variant!("pitched_copy.rs"),
            "host/src/experiments/random_shapes.rs",
        ],
        code: &[
            Code {
                file: "gpu-gemm/src/auto.rs",
                anchor: "line_copies",
            },
            code(variant!("pitched_copy.rs")),
        ],
        measured: &[],
    },
    Chapter {
        slug: "decode",
        title: "A decode step as a graph: the chain, and the early start",
        part: Part::TensorCores5,
        variants: &[],
        lessons: &[
            "kernels-gpu/src/device/grid.rs",
            "host/src/experiments/decode.rs",
        ],
        code: &[
            Code {
                file: "kernels-gpu/src/pipeline/mod.rs",
                anchor: "early_start",
            },
            Code {
                file: "gpu-gemm/examples/decode.rs",
                anchor: "decode_graph",
            },
        ],
        measured: &[],
    },
    Chapter {
        slug: "tensor-parallel",
        title: "Tensor parallelism: all-gather and reduce-scatter around the GEMM, overlapped",
        part: Part::AcrossGpus,
        variants: &[],
        lessons: &[
            "gpu-gemm/src/parallel/schedule.rs",
            "gpu-gemm/src/parallel/nccl.rs",
        ],
        code: &[Code {
            file: "gpu-gemm/src/parallel/schedule.rs",
            anchor: "copy_schedule",
        }],
        measured: &[Measured::Page("007-parallel")],
    },
];

/// The variant names the book's chapters teach.
pub fn taught_variants() -> BTreeSet<&'static str> {
    CHAPTERS
        .iter()
        .flat_map(|c| c.variants.iter().copied())
        .collect()
}
