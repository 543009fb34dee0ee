//! The measurements: which folders of `docs/results/` the book includes, their charts copied
//! beside the pages, and a chapter's share of their tables.
//!
//! A chapter quotes only its own rows (with the cuBLAS yardsticks beside them), or the whole page
//! when the experiment is its subject: the numbers stay in one place, `docs/results/`, as
//! `host experiment` wrote them, and the book never holds a copy typed by hand.
use super::links::BookMap;
use super::{read, Chapter, Measured};
use anyhow::Result;
use std::fmt::Write as _;
use std::path::Path;

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

/// Copies a results folder's charts and data (not its README, which becomes a page).
pub(super) fn copy_assets(from: &Path, to: &Path) -> Result<()> {
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
pub(super) fn row_variant(row: &str) -> String {
    let cell = row.trim_start_matches('|').split('|').next().unwrap_or("");
    let cell = cell.replace(['*', '★', '`'], "");
    cell.trim()
        .split(':')
        .next()
        .unwrap_or("")
        .trim()
        .to_string()
}

pub(super) fn measured_section(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_rows_are_found_by_variant() {
        assert_eq!(row_variant("| **★ cg-regs** | x |"), "cg-regs");
        assert_eq!(row_variant("| wgmma-tf32:1 | x |"), "wgmma-tf32");
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
}
