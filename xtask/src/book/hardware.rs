//! The hardware pages: one per file of the device layer (and the emulator), made of its doc
//! header, a table of its public items and the chapters that use it.
//!
//! The chapters teach kernels; these pages are where a reader looks up a feature (`mma.sync`,
//! TMA, `wgmma`, …) once, instead of finding it explained again in each kernel that uses it.
use super::sources::intra_doc_links_as_code;
use super::{html_escaped, read, CHAPTERS};
use anyhow::Result;
use std::path::Path;

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

/// A table of a source file's public items (types, functions, methods) with the first line of
/// each one's doc comment: the page's reference to the code.
pub(super) fn api_table(source: &str) -> String {
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
pub(super) fn used_by(root: &Path, needle: &str) -> Result<String> {
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
