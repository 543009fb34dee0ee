//! What the book takes from the Rust sources themselves: a file's `//!` doc header as the
//! lesson, and the anchored region mdBook embeds as the code.
//!
//! Both are read from the files the compiler builds, so the book cannot drift from the code;
//! the price is that a missing header or anchor must stop the build, which these functions do
//! with a message that names the file.
use super::{read, Code};
use anyhow::{bail, Result};
use std::path::Path;

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
pub(super) fn intra_doc_links_as_code(line: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::CHAPTERS;

    #[test]
    fn rustdoc_links_become_code() {
        assert_eq!(
            intra_doc_links_as_code("see [`crate::x`] and [`y`](z)"),
            "see `crate::x` and [`y`](z)"
        );
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
