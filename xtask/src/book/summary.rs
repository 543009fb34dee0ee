//! The whole book in one pass: [`generate`] writes every page in reading order (the front
//! matter, the chapters part by part, the hardware pages, the measurements, the appendices) and
//! `SUMMARY.md`, mdBook's table of contents, as it goes, so the two cannot disagree.
//!
//! The lists of the front matter and the appendices live here too, since only the order
//! `generate` writes them in (and `links`, which maps their files to pages) reads them; the
//! hardware and SASS pages' lists sit with the code that fills those pages.
use super::chapter_page::{chapter_page, up_to_repo};
use super::hardware::{api_table, used_by};
use super::links::BookMap;
use super::results::copy_assets;
use super::{lesson_of, read, results_folders, Part, CHAPTERS, HARDWARE, SASS_PAGES};
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Documents of `docs/` that become appendices: (file, page slug, title).
pub const APPENDICES: &[(&str, &str, &str)] = &[
    (
        "docs/perf-notes.md",
        "perf-notes",
        "Performance notes: what was tried",
    ),
    (
        "docs/perf-notes/cuda-cores.md",
        "perf-notes-cuda-cores",
        "Performance notes: the CUDA cores",
    ),
    (
        "docs/perf-notes/tensor-cores-mma.md",
        "perf-notes-tensor-cores-mma",
        "Performance notes: tensor cores, chapter 1 (`mma.sync`)",
    ),
    (
        "docs/perf-notes/hopper-tf32.md",
        "perf-notes-hopper-tf32",
        "Performance notes: tensor cores, chapter 2 (Hopper's TMA and `wgmma`, TF32)",
    ),
    (
        "docs/perf-notes/hopper-16bit.md",
        "perf-notes-hopper-16bit",
        "Performance notes: tensor cores, chapter 3 (BF16 and FP16 on the Hopper skeleton)",
    ),
    (
        "docs/perf-notes/fp8.md",
        "perf-notes-fp8",
        "Performance notes: tensor cores, chapter 4 (FP8)",
    ),
    (
        "docs/perf-notes/shapes-and-decode.md",
        "perf-notes-shapes-and-decode",
        "Performance notes: tensor cores, chapter 5 (the shapes models run, and decode)",
    ),
    (
        "docs/perf-notes/library-and-house.md",
        "perf-notes-library-and-house",
        "Performance notes: the library, across GPUs, CI and a program's size",
    ),
    (
        "docs/results-history.md",
        "results-history",
        "Results, run by run",
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
