//! The table model every experiment fills, and its three renderings: a markdown table for the
//! terminal and the page, a CSV file, and JSON rows.
//!
//! A cell keeps its value apart from how it is shown, so that CSV and JSON carry full-precision
//! numbers while markdown shows them rounded. A cell with no value (a skipped or failed run)
//! carries the reason instead, and every rendering shows that reason.
use anyhow::{Context as _, Result};
use serde_json::{json, Map, Value};
use std::path::Path;

/// How a number is shown in markdown.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Format {
    /// `digits` after the decimal point: `12.35`.
    Fixed(usize),
    /// Scientific with `digits` after the point: `1.24e-7`.
    Sci(usize),
    /// A ratio with `digits` after the point and a `×`: `7.9×`.
    Times(usize),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Text(String),
    Number(f64, Format),
    /// No value; the text says why ("skipped: est. 180 s > 20 s limit", "no cuBLAS on the emulator").
    Missing(String),
}

impl Cell {
    pub fn text(s: impl Into<String>) -> Self {
        Cell::Text(s.into())
    }

    pub fn fixed(value: f64, digits: usize) -> Self {
        Cell::Number(value, Format::Fixed(digits))
    }

    pub fn sci(value: f64, digits: usize) -> Self {
        Cell::Number(value, Format::Sci(digits))
    }

    pub fn times(value: f64, digits: usize) -> Self {
        Cell::Number(value, Format::Times(digits))
    }

    pub fn missing(why: impl Into<String>) -> Self {
        Cell::Missing(why.into())
    }

    /// The number in this cell, if it holds one.
    pub fn value(&self) -> Option<f64> {
        match self {
            Cell::Number(v, _) => Some(*v),
            _ => None,
        }
    }

    /// As shown in markdown (and on the terminal).
    pub fn shown(&self) -> String {
        match self {
            Cell::Text(s) | Cell::Missing(s) => s.clone(),
            Cell::Number(v, _) if !v.is_finite() => v.to_string(),
            Cell::Number(v, Format::Fixed(d)) => format!("{v:.d$}"),
            Cell::Number(v, Format::Sci(d)) => format!("{v:.d$e}"),
            Cell::Number(v, Format::Times(d)) => format!("{v:.d$}×"),
        }
    }

    /// As written to CSV: numbers at full precision.
    fn csv(&self) -> String {
        match self {
            Cell::Number(v, _) => v.to_string(),
            other => other.shown(),
        }
    }

    /// As written to JSON: numbers as numbers (null when not finite, which JSON cannot hold),
    /// text and missing-value reasons as strings.
    fn json(&self) -> Value {
        match self {
            Cell::Number(v, _) => {
                serde_json::Number::from_f64(*v).map_or(Value::Null, Value::Number)
            }
            Cell::Text(s) | Cell::Missing(s) => Value::String(s.clone()),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    /// Right-aligned in markdown.
    pub numeric: bool,
}

/// One table of an experiment, rendered to `<id>.csv`, to JSON and to markdown.
#[derive(Clone, Debug)]
pub struct Table {
    /// The file stem of the table's CSV and chart: `tile-sweep`.
    pub id: String,
    pub title: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
    /// `Some(best)` when the table marks a best row (`best` itself may be None when no row
    /// qualifies): markdown shows that row bold with a ★, CSV and JSON get a `best` column.
    pub best: Option<Option<usize>>,
}

impl Table {
    pub fn new(id: &str, title: &str) -> Self {
        Self {
            id: id.to_string(),
            title: title.to_string(),
            columns: Vec::new(),
            rows: Vec::new(),
            best: None,
        }
    }

    /// Adds a left-aligned text column.
    pub fn text_column(mut self, name: &str) -> Self {
        self.columns.push(Column {
            name: name.to_string(),
            numeric: false,
        });
        self
    }

    /// Adds a right-aligned number column.
    pub fn number_column(mut self, name: &str) -> Self {
        self.columns.push(Column {
            name: name.to_string(),
            numeric: true,
        });
        self
    }

    pub fn push(&mut self, row: Vec<Cell>) {
        assert_eq!(
            row.len(),
            self.columns.len(),
            "a row of table `{}` has {} cells for {} columns",
            self.id,
            row.len(),
            self.columns.len()
        );
        self.rows.push(row);
    }

    /// Gives the table a best-row mark: `row` (None when no row qualifies).
    pub fn mark_best(&mut self, row: Option<usize>) {
        self.best = Some(row);
    }

    /// The numbers of `column`, one per row (None for a text or missing cell).
    pub fn values(&self, column: &str) -> Vec<Option<f64>> {
        let at = self.column_index(column);
        self.rows.iter().map(|r| r[at].value()).collect()
    }

    pub fn column_index(&self, name: &str) -> usize {
        self.columns
            .iter()
            .position(|c| c.name == name)
            .unwrap_or_else(|| panic!("table `{}` has no column `{name}`", self.id))
    }

    fn is_best(&self, row: usize) -> bool {
        self.best == Some(Some(row))
    }

    pub fn to_markdown(&self) -> String {
        let escape = |s: &str| s.replace('|', "\\|");
        let mut out = String::new();
        let header: Vec<String> = self.columns.iter().map(|c| escape(&c.name)).collect();
        out += &format!("| {} |\n", header.join(" | "));
        let rule: Vec<&str> = self
            .columns
            .iter()
            .map(|c| if c.numeric { "---:" } else { "---" })
            .collect();
        out += &format!("|{}|\n", rule.join("|"));
        for (i, row) in self.rows.iter().enumerate() {
            let best = self.is_best(i);
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(j, cell)| {
                    let shown = escape(&cell.shown());
                    match (best, j) {
                        (true, 0) => format!("**★ {shown}**"),
                        (true, _) if !shown.is_empty() => format!("**{shown}**"),
                        _ => shown,
                    }
                })
                .collect();
            out += &format!("| {} |\n", cells.join(" | "));
        }
        out
    }

    pub fn write_csv(&self, path: &Path) -> Result<()> {
        let mut w = csv::Writer::from_path(path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        let mut header: Vec<&str> = self.columns.iter().map(|c| c.name.as_str()).collect();
        if self.best.is_some() {
            header.push("best");
        }
        w.write_record(&header)?;
        for (i, row) in self.rows.iter().enumerate() {
            let mut record: Vec<String> = row.iter().map(Cell::csv).collect();
            if self.best.is_some() {
                record.push(self.is_best(i).to_string());
            }
            w.write_record(&record)?;
        }
        w.flush()?;
        Ok(())
    }

    /// `{id, title, columns, rows: [{column: value, …}]}`.
    pub fn to_json(&self) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, row)| {
                let mut object = Map::new();
                for (column, cell) in self.columns.iter().zip(row) {
                    object.insert(column.name.clone(), cell.json());
                }
                if self.best.is_some() {
                    object.insert("best".into(), Value::Bool(self.is_best(i)));
                }
                Value::Object(object)
            })
            .collect();
        let columns: Vec<&str> = self.columns.iter().map(|c| c.name.as_str()).collect();
        json!({ "id": self.id, "title": self.title, "columns": columns, "rows": rows })
    }
}

/// The index of the smallest finite value, the first one on ties; None when there is none.
/// "Best" always means fastest among the runs that produced a time (a failed or skipped run has
/// no value and cannot win).
pub fn index_of_min(values: impl IntoIterator<Item = Option<f64>>) -> Option<usize> {
    values
        .into_iter()
        .enumerate()
        .filter_map(|(i, v)| v.filter(|v| v.is_finite()).map(|v| (i, v)))
        .fold(None, |best: Option<(usize, f64)>, (i, v)| match best {
            Some((_, b)) if b <= v => best,
            _ => Some((i, v)),
        })
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new("sweep", "A sweep")
            .text_column("tile")
            .number_column("median ms")
            .number_column("speed-up");
        t.push(vec![
            Cell::text("32"),
            Cell::fixed(1.23456, 2),
            Cell::times(7.91, 1),
        ]);
        t.push(vec![
            Cell::text("16"),
            Cell::fixed(0.5, 2),
            Cell::times(19.5, 1),
        ]);
        t.push(vec![
            Cell::text("a|b"),
            Cell::missing("skipped: est. 180 s > 20 s limit"),
            Cell::sci(1.5e-7, 1),
        ]);
        t
    }

    #[test]
    fn best_is_the_smallest_finite_value_first_on_ties() {
        assert_eq!(index_of_min([Some(3.0), Some(1.0), Some(2.0)]), Some(1));
        assert_eq!(
            index_of_min([None, Some(f64::NAN), Some(5.0), Some(4.0)]),
            Some(3)
        );
        assert_eq!(index_of_min([Some(2.0), Some(2.0)]), Some(0));
        assert_eq!(index_of_min([Some(f64::INFINITY), None]), None);
        assert_eq!(index_of_min(std::iter::empty()), None);
    }

    #[test]
    fn markdown_marks_the_best_row_and_escapes_pipes() {
        let mut t = sample();
        t.mark_best(index_of_min(t.values("median ms")));
        assert_eq!(t.best, Some(Some(1)));
        let md = t.to_markdown();
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines[0], "| tile | median ms | speed-up |");
        assert_eq!(lines[1], "|---|---:|---:|");
        assert_eq!(lines[2], "| 32 | 1.23 | 7.9× |");
        assert_eq!(lines[3], "| **★ 16** | **0.50** | **19.5×** |");
        assert_eq!(
            lines[4],
            "| a\\|b | skipped: est. 180 s > 20 s limit | 1.5e-7 |"
        );
    }

    #[test]
    fn csv_and_json_keep_full_precision_and_the_best_column() {
        let mut t = sample();
        t.mark_best(Some(1));
        let path = std::env::temp_dir().join(format!("table-test-{}.csv", std::process::id()));
        t.write_csv(&path).unwrap();
        let mut reader = csv::Reader::from_path(&path).unwrap();
        let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(header, ["tile", "median ms", "speed-up", "best"]);
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 3);
        assert_eq!(&rows[0][1], "1.23456");
        assert_eq!(&rows[1][3], "true");
        assert_eq!(&rows[2][0], "a|b");
        assert_eq!(&rows[2][1], "skipped: est. 180 s > 20 s limit");
        std::fs::remove_file(&path).unwrap();

        let json = t.to_json();
        assert_eq!(json["rows"][0]["median ms"], 1.23456);
        assert_eq!(json["rows"][1]["best"], true);
        assert_eq!(json["rows"][0]["best"], false);
        assert!(json["rows"][2]["median ms"].is_string());
        assert_eq!(json["columns"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn non_finite_numbers_are_null_in_json() {
        assert_eq!(Cell::fixed(f64::INFINITY, 1).json(), Value::Null);
        assert_eq!(Cell::fixed(f64::INFINITY, 1).shown(), "inf");
    }
}
