//! One chapter's page, in the order every chapter follows: the variants it teaches, the
//! lesson, the code, the measurements, the SASS, and the hand-written notes that end in an
//! exercise.
//!
//! The same order on every page is what lets a reader compare two steps of the course; the
//! exercise is checked here because a chapter without one is not finished.
use super::links::BookMap;
use super::results::measured_section;
use super::sass_rows::sass_section;
use super::{check_anchor, html_escaped, lesson_of, read, Chapter, BOOK_DOCS};
use anyhow::{bail, Context, Result};
use std::fmt::Write as _;
use std::path::Path;

/// The path from a page (relative to `src/`) back up to the repository root, for `#include`
/// (relative, so that the generated markdown does not name this machine's folders): `src_dir`
/// is `target/book-src/src` in a reader's build.
pub(super) fn up_to_repo(root: &Path, src_dir: &Path, page: &str) -> String {
    match src_dir.strip_prefix(root) {
        Ok(inside) => "../".repeat(inside.components().count() + page.matches('/').count()),
        Err(_) => format!("{}/", root.display()),
    }
}

pub(super) fn chapter_page(
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
