//! Links: the markdown the book quotes was written for the repository (`docs/…`, relative
//! paths), and the book is another tree. [`BookMap`] maps a repository file to its page, and
//! rewrites each link for the page that shows it.
//!
//! A link to a file the book does not hold keeps the file's name, as code, rather than becoming
//! a link that leads nowhere in the book: the reader still learns which file to open.
use super::{APPENDICES, BOOK_DOCS, CHAPTERS, FRONT, HARDWARE, SASS_PAGES};
use std::fmt::Write as _;
use std::path::{Component, Path};

/// Where each repository file the book links to is in the book.
pub(super) struct BookMap<'a> {
    pub(super) results: &'a [String],
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
    pub(super) fn rewrite_links(&self, text: &str, from: &str, page: &str) -> String {
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
}
