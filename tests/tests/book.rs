//! The book (`cargo xtask book`) as a reader gets it: every variant `host --list` names has a
//! chapter, every chapter's code is really embedded from its source, no internal link or image
//! is broken, and headless Chromium shows the index and a chapter with its chart.
//!
//! The tests build their own copy into `target/book-test/` (mdBook from `.tools/mdbook/`,
//! installed from PyPI the first time, as `cargo xtask book` does).
use ptx_builder::book::{self, Generated, CHAPTERS};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn root() -> PathBuf {
    ptx_builder::workspace_root()
}

fn html_dir() -> PathBuf {
    root().join("target/book-test/html")
}

/// The book, built once for all the tests of this file.
fn built() -> &'static Generated {
    static BOOK: OnceLock<Generated> = OnceLock::new();
    BOOK.get_or_init(|| {
        let root = root();
        book::build_at(&root, &root.join("target/book-test/src"), &html_dir())
            .expect("the book builds")
    })
}

fn page_html(page: &str) -> String {
    let html = html_dir().join(page.replace(".md", ".html"));
    std::fs::read_to_string(&html).unwrap_or_else(|e| panic!("{}: {e}", html.display()))
}

#[test]
fn every_variant_of_host_list_has_a_chapter() {
    let taught = book::taught_variants();
    let mut without = Vec::new();
    for variant in gpu_gemm::registry::all() {
        if !variant.is_cublas() && !taught.contains(variant.name()) {
            without.push(variant.name());
        }
    }
    assert!(
        without.is_empty(),
        "variants without a chapter in xtask/src/book.rs's CHAPTERS: {without:?}"
    );
    // And no chapter teaches a name the registry does not have (a renamed variant).
    for name in &taught {
        assert!(
            gpu_gemm::registry::find(name).is_ok(),
            "chapter names `{name}`"
        );
    }
    assert!(taught.len() >= 40, "{taught:?}");
}

#[test]
fn every_chapter_embeds_its_code_from_the_source() {
    built();
    for chapter in CHAPTERS {
        let html = page_html(&format!("chapters/{}.md", chapter.slug));
        assert!(
            !html.contains("{{#include"),
            "{}: include left",
            chapter.slug
        );
        for code in chapter.code {
            book::check_anchor(&root(), code).unwrap();
            // The first line of the anchored region, as the reader sees it in the page.
            let source = std::fs::read_to_string(root().join(code.file)).unwrap();
            let first = source
                .lines()
                .skip_while(|l| !l.trim_end().ends_with(&format!("ANCHOR: {}", code.anchor)))
                .nth(1)
                .unwrap()
                .trim();
            let escaped = first
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;");
            let shown = |text: &str| html.contains(text) || strip_tags(&html).contains(text);
            assert!(
                shown(&escaped) || shown(first),
                "{}: `{first}` of {}:{} is not in the page",
                chapter.slug,
                code.file,
                code.anchor
            );
        }
        assert!(
            html.contains("id=\"exercise\""),
            "{}: no exercise",
            chapter.slug
        );
    }
}

#[test]
fn the_book_has_no_broken_internal_link_or_image() {
    let generated = built();
    let dir = html_dir();
    let mut checked = 0;
    let mut broken = Vec::new();
    for page in &generated.pages {
        let html = page_html(page);
        let page_path = dir.join(page.replace(".md", ".html"));
        for target in attribute_values(&html, "href")
            .into_iter()
            .chain(attribute_values(&html, "src"))
        {
            if target.contains("://") || target.starts_with("mailto:") || target.starts_with('#') {
                continue;
            }
            let (path, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let path = path.split('?').next().unwrap();
            let file = page_path.parent().unwrap().join(path);
            checked += 1;
            if !file.is_file() {
                broken.push(format!("{page}: {target}"));
            } else if !fragment.is_empty() && file.extension().is_some_and(|e| e == "html") {
                let linked = std::fs::read_to_string(&file).unwrap();
                if !linked.contains(&format!("id=\"{fragment}\"")) {
                    broken.push(format!("{page}: {target} (no such heading)"));
                }
            }
        }
    }
    assert!(checked > 1000, "only {checked} links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_charts_are_in_the_book_and_are_svg() {
    let generated = built();
    let mut charts = 0;
    for page in &generated.pages {
        let html = page_html(page);
        let page_path = html_dir().join(page.replace(".md", ".html"));
        for src in attribute_values(&html, "src") {
            if src.ends_with(".svg") {
                let svg = std::fs::read_to_string(page_path.parent().unwrap().join(&src))
                    .unwrap_or_else(|e| panic!("{page}: {src}: {e}"));
                assert!(svg.contains("<svg"), "{page}: {src} is not an SVG");
                charts += 1;
            }
        }
    }
    // Every results page's charts, and the chapters' (at least one per chapter with results).
    assert!(charts >= 30, "{charts} charts");
    for folder in ["000-tile-sweep", "001-progression", "003-sweeps", "004-cg"] {
        assert!(generated.results.iter().any(|r| r == folder), "{folder}");
    }
}

#[test]
fn the_book_names_no_internal_issue_number() {
    let generated = built();
    for page in &generated.pages {
        let text = std::fs::read_to_string(generated.root.join("src").join(page)).unwrap();
        for (at, _) in text.match_indices("issue ") {
            // "issue 6" names a ticket; "issue 52%" is an issue rate, which the notes measure.
            let after = &text[at + "issue ".len()..];
            let digits = after.chars().take_while(char::is_ascii_digit).count();
            let names_a_ticket = digits > 0 && !after[digits..].starts_with('%');
            assert!(
                !names_a_ticket,
                "{page}: `{}`",
                &text[at..(at + 12).min(text.len())]
            );
        }
    }
}

#[test]
fn a_missing_anchor_stops_the_build() {
    let missing = book::Code {
        file: "kernels-gpu/src/variants/gemm128.rs",
        anchor: "not_there",
    };
    let error = book::check_anchor(&root(), &missing)
        .unwrap_err()
        .to_string();
    assert!(error.contains("not_there"), "{error}");
}

/// Headless Chromium, if this machine has it (Debian's `chromium`).
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

fn run_chromium(chromium: &Path, args: &[&str], url: &str) -> String {
    let profile = root().join("target/book-test/chromium-profile");
    let _ = std::fs::remove_dir_all(&profile);
    let output = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--allow-file-access-from-files",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .output()
        .expect("chromium runs");
    assert!(
        output.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).to_string()
}

/// The chapter the screenshot shows: a short lesson, its code, a table and a chart.
const SCREENSHOT_CHAPTER: &str = "chapters/v4.html";

/// A page that opens `page` in a frame and writes, once the frame and its images have loaded,
/// what the reader got: each image loaded or broken, the code blocks, the title, the chapters
/// in the sidebar.
fn probe(page: &str) -> String {
    format!(
        r#"<!doctype html><html><body><pre id="report">not loaded</pre>
<iframe id="page" src="{page}" width="1280" height="2000"></iframe>
<script>
const frame = document.getElementById('page');
frame.addEventListener('load', () => {{
  const doc = frame.contentDocument;
  const images = [...doc.images];
  const loads = images.map(i => i.complete ? Promise.resolve()
    : new Promise(done => {{ i.onload = done; i.onerror = done; }}));
  Promise.all(loads).then(() => {{
    const lines = images.map(i =>
      (i.naturalWidth > 0 ? 'image loaded ' : 'image broken ') + i.getAttribute('src'));
    lines.push('code blocks ' + doc.querySelectorAll('pre code').length);
    lines.push('sidebar chapters ' + doc.querySelectorAll('.chapter li.chapter-item').length);
    lines.push('title ' + doc.title);
    document.getElementById('report').textContent = lines.join('\n');
  }});
}});
</script></body></html>"#
    )
}

/// What the probe of `page` reported.
fn report_of(chromium: &Path, page: &str, name: &str) -> String {
    let probe_file = html_dir().join(format!("probe-{name}.html"));
    std::fs::write(&probe_file, probe(page)).unwrap();
    let dom = run_chromium(
        chromium,
        &["--dump-dom", "--virtual-time-budget=15000"],
        &format!("file://{}", probe_file.display()),
    );
    let start = dom.find("<pre id=\"report\">").expect("the probe's report") + 17;
    let end = dom[start..].find("</pre>").unwrap() + start;
    dom[start..end].to_string()
}

#[test]
fn chromium_shows_the_index_and_a_chapter_with_its_chart() {
    let Some(chromium) = chromium() else {
        println!(
            "SKIPPED: no Chromium at /usr/bin/chromium (Debian: `apt-get install chromium`, or \
             set CHROMIUM): the book's rendering is not checked in a browser here"
        );
        return;
    };
    built();
    let index = report_of(&chromium, "index.html", "index");
    println!("index.html:\n{index}");
    assert!(index.contains("title Introduction"), "{index}");
    let sidebar: usize = index
        .lines()
        .find_map(|l| l.strip_prefix("sidebar chapters "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    assert!(
        sidebar >= CHAPTERS.len(),
        "the sidebar lists {sidebar} pages: {index}"
    );

    let chapter = report_of(&chromium, SCREENSHOT_CHAPTER, "chapter");
    println!("{SCREENSHOT_CHAPTER}:\n{chapter}");
    assert!(!chapter.contains("image broken"), "{chapter}");
    assert!(
        chapter.contains("image loaded") && chapter.contains(".svg"),
        "no chart: {chapter}"
    );
    assert!(chapter.contains("title v4"), "{chapter}");
    assert!(!chapter.contains("code blocks 0"), "{chapter}");

    // The screenshot: lesson, code and chart in one picture. BOOK_SCREENSHOT puts it elsewhere
    // (the repository's docs/book-screenshot.png is one).
    let png = std::env::var_os("BOOK_SCREENSHOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/book-test/chapter.png"));
    let page = html_dir().join(SCREENSHOT_CHAPTER);
    run_chromium(
        &chromium,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1280,2100",
            "--hide-scrollbars",
        ],
        &format!("file://{}", page.display()),
    );
    let bytes = std::fs::read(&png).unwrap();
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 50_000,
        "{}",
        png.display()
    );
}

/// The values of `name="…"` attributes in an HTML text.
fn attribute_values(html: &str, name: &str) -> Vec<String> {
    let marker = format!(" {name}=\"");
    html.match_indices(&marker)
        .filter_map(|(at, _)| {
            let start = at + marker.len();
            html[start..]
                .find('"')
                .map(|end| html[start..start + end].to_string())
        })
        .collect()
}

/// The text of an HTML fragment without its tags (syntax highlighting splits lines into spans).
fn strip_tags(html: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}
