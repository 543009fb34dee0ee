//! The SASS in the book: the tables `cargo xtask sass` wrote become appendices, and each
//! chapter quotes its own kernels' rows, with the command to read the loop yourself.
//!
//! The tables are optional (making them needs ptxas and nvdisasm): a chapter builds without
//! them, and every chapter with a GPU kernel gives the command that shows its loop anyway.
use super::results::row_variant;
use super::Chapter;
use anyhow::Result;
use std::fmt::Write as _;
use std::path::Path;

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

pub(super) fn sass_section(root: &Path, chapter: &Chapter) -> Result<String> {
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
