//! The results of one experiment as files: a markdown page (`README.md`) with the tables, charts,
//! run metadata and the computed findings; one CSV and one SVG per table; `results.json` with
//! everything.
use super::chart::{self, Chart};
use super::table::Table;
use anyhow::{Context as _, Result};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// One table of a page, with its chart and what the data says.
pub struct Section {
    pub table: Table,
    /// Drawn into `<table.id>.svg`.
    pub chart: Option<Chart>,
    /// A sentence computed from this table's data.
    pub finding: Option<String>,
    /// Paragraphs shown under the table (method, caveats).
    pub notes: Vec<String>,
    /// Other files the section's data makes, (name, contents), written beside its CSV.
    pub files: Vec<(String, String)>,
}

impl Section {
    pub fn new(table: Table) -> Self {
        Self {
            table,
            chart: None,
            finding: None,
            notes: Vec::new(),
            files: Vec::new(),
        }
    }
}

pub struct Page {
    /// The folder name and JSON id: `000-tile-sweep`.
    pub id: &'static str,
    pub title: String,
    /// What the experiment reproduces, and from which document.
    pub intro: String,
    /// The page's main finding, computed from the data.
    pub headline: String,
    /// Device, date, command line, sizes, seed… in display order.
    pub metadata: Vec<(String, String)>,
    pub sections: Vec<Section>,
    /// Whether every check that ran passed (the exit code follows it).
    pub passed: bool,
}

/// The file name of the page in the results folder.
pub const PAGE_FILE: &str = "README.md";
pub const JSON_FILE: &str = "results.json";

impl Page {
    /// Writes every file into `dir` (created if needed) and returns their paths.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the results folder {}", dir.display()))?;
        let mut written = Vec::new();
        for section in &self.sections {
            let csv = dir.join(format!("{}.csv", section.table.id));
            section.table.write_csv(&csv)?;
            written.push(csv);
            if let Some(spec) = &section.chart {
                let svg = dir.join(format!("{}.svg", section.table.id));
                chart::render(spec, &svg)?;
                written.push(svg);
            }
            for (name, contents) in &section.files {
                let path = dir.join(name);
                std::fs::write(&path, contents)
                    .with_context(|| format!("cannot write {}", path.display()))?;
                written.push(path);
            }
        }
        let json_path = dir.join(JSON_FILE);
        let text = serde_json::to_string_pretty(&self.to_json())?;
        std::fs::write(&json_path, text + "\n")
            .with_context(|| format!("cannot write {}", json_path.display()))?;
        written.push(json_path);
        let page = dir.join(PAGE_FILE);
        std::fs::write(&page, self.to_markdown())
            .with_context(|| format!("cannot write {}", page.display()))?;
        written.push(page);
        Ok(written)
    }

    pub fn to_json(&self) -> Value {
        let metadata: Map<String, Value> = self
            .metadata
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let tables: Vec<Value> = self
            .sections
            .iter()
            .map(|s| {
                let mut t = s.table.to_json();
                t["finding"] = s.finding.clone().map_or(Value::Null, Value::String);
                t
            })
            .collect();
        json!({
            "experiment": self.id,
            "title": self.title,
            "headline": self.headline,
            "all_checks_passed": self.passed,
            "metadata": metadata,
            "tables": tables,
        })
    }

    pub fn to_markdown(&self) -> String {
        let mut out = format!(
            "# {}\n\n{}\n\n**{}**\n\n",
            self.title, self.intro, self.headline
        );
        out += "| run | |\n|---|---|\n";
        for (key, value) in &self.metadata {
            let value = value.replace('|', "\\|");
            // The command line is shown as code, so that it can be copied as it is.
            if key == "command" {
                out += &format!("| {key} | `{value}` |\n");
            } else {
                out += &format!("| {key} | {value} |\n");
            }
        }
        for section in &self.sections {
            out += &format!("\n## {}\n\n", section.table.title);
            if let Some(finding) = &section.finding {
                out += &format!("{finding}\n\n");
            }
            out += &section.table.to_markdown();
            if section.chart.is_some() {
                out += &format!("\n![{}]({}.svg)\n", section.table.title, section.table.id);
            }
            for note in &section.notes {
                out += &format!("\n{note}\n");
            }
        }
        let csvs: Vec<String> = self
            .sections
            .iter()
            .map(|s| format!("[{0}.csv]({0}.csv)", s.table.id))
            .collect();
        out += &format!(
            "\n---\n\nData: {}, [{JSON_FILE}]({JSON_FILE}). This page was written by `host experiment`; \
             the command above regenerates it.\n",
            csvs.join(", ")
        );
        out
    }

    /// What the terminal shows at the end of a run: the headline and every table.
    pub fn to_terminal(&self) -> String {
        let mut out = format!("\n## {}\n\n{}\n", self.title, self.headline);
        for section in &self.sections {
            out += &format!(
                "\n### {}\n\n{}",
                section.table.title,
                section.table.to_markdown()
            );
        }
        out
    }
}
