//! The charts of the experiment pages, drawn with `plotters` into SVG files.
//!
//! An experiment describes its chart as data ([`Chart`]); [`render`] draws it. SVG keeps the
//! build free of font libraries: plotters writes the labels as `<text>` elements and the
//! browser that shows the page picks the font.
use anyhow::{anyhow, Result};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ops::Range;
use std::path::Path;

/// What to draw.
#[derive(Clone, Debug)]
pub enum Chart {
    Lines(LineChart),
    Bars(BarChart),
}

/// Lines through points, one per series, with an optional horizontal threshold line.
#[derive(Clone, Debug)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// The x values are powers of two (tile widths, sizes): a log2 axis labelled with the values.
    pub x_powers_of_two: bool,
    /// A logarithmic y axis (times that span decades, errors).
    pub y_log: bool,
    pub series: Vec<Series>,
    /// A dashed horizontal line at this value, with its legend text.
    pub threshold: Option<(f64, String)>,
    /// Where the legend goes: the corner the data leaves empty.
    pub legend: Corner,
}

/// A corner of the plot area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corner {
    UpperLeft,
    UpperRight,
}

#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Horizontal bars, one row per category and one bar per group in each row, with an optional
/// dashed vertical reference line (cuBLAS).
#[derive(Clone, Debug)]
pub struct BarChart {
    pub title: String,
    pub value_label: String,
    pub categories: Vec<String>,
    /// (group name, one value per category; None draws no bar).
    pub groups: Vec<(String, Vec<Option<f64>>)>,
    pub reference: Option<(f64, String)>,
}

const WIDTH: u32 = 900;

/// Tableau's ten categorical colours: distinct on white, and in print.
const PALETTE: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

fn color(i: usize) -> RGBColor {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    RGBColor(r, g, b)
}

/// Draws `chart` into the SVG file `path`.
pub fn render(chart: &Chart, path: &Path) -> Result<()> {
    match chart {
        Chart::Lines(spec) => render_lines(spec, path),
        Chart::Bars(spec) => render_bars(spec, path),
    }
    .map_err(|e| anyhow!("drawing {}: {e}", path.display()))
}

/// Short axis and bar labels: `0.5`, `12.3`, `1234`, and `1e-6` for very small or large ones.
pub fn compact(v: f64) -> String {
    let a = v.abs();
    let fixed = if v == 0.0 {
        return "0".into();
    } else if !(1e-3..1e5).contains(&a) {
        return format!("{v:.0e}");
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    };
    if fixed.contains('.') {
        fixed
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        fixed
    }
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn render_lines(spec: &LineChart, path: &Path) -> DrawResult {
    let root = SVGBackend::new(path, (WIDTH, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let x_of = |x: f64| if spec.x_powers_of_two { x.log2() } else { x };
    let xs: Vec<f64> = spec
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| x_of(p.0)))
        .filter(|x| x.is_finite())
        .collect();
    let ys: Vec<f64> = spec
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .chain(spec.threshold.as_ref().map(|t| t.0))
        .filter(|y| y.is_finite() && (!spec.y_log || *y > 0.0))
        .collect();
    let x_range = if spec.x_powers_of_two {
        // Half a doubling each side, so that only the data's powers of two get labels.
        let r = padded(&xs, 0.0);
        r.start - 0.4..r.end + 0.4
    } else {
        padded(&xs, 0.05)
    };
    let (y_lo, y_hi) = (
        ys.iter().copied().fold(f64::INFINITY, f64::min),
        ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    if spec.y_log {
        let (lo, hi) = if ys.is_empty() {
            (1e-3, 1.0)
        } else {
            (y_lo / 2.0, y_hi * 2.0)
        };
        draw_lines(&root, spec, x_range, (lo..hi).log_scale())?;
    } else {
        let hi = if ys.is_empty() {
            1.0
        } else {
            y_hi.max(0.0) * 1.1
        };
        draw_lines(
            &root,
            spec,
            x_range,
            y_lo.min(0.0)..hi.max(f64::MIN_POSITIVE),
        )?;
    }
    root.present()?;
    Ok(())
}

/// The range of `values` widened by `pad` of its width on each side (±1 for a single value
/// when `pad` is not 0).
fn padded(values: &[f64], pad: f64) -> Range<f64> {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if values.is_empty() {
        0.0..1.0
    } else if hi - lo < 1e-12 && pad > 0.0 {
        lo - 1.0..hi + 1.0
    } else {
        let w = (hi - lo) * pad;
        lo - w..hi + w
    }
}

fn draw_lines<Y>(root: &Area, spec: &LineChart, x: Range<f64>, y: Y) -> DrawResult
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let (x_lo, x_hi) = (x.start, x.end);
    let mut chart = ChartBuilder::on(root)
        .caption(&spec.title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(x, y)?;
    let powers = spec.x_powers_of_two;
    let x_format = move |v: &f64| {
        if powers {
            compact(2f64.powf(*v).round())
        } else {
            compact(*v)
        }
    };
    // On a log2 axis, one label per power of two in range.
    let x_labels = if powers {
        (x_hi.floor() - x_lo.ceil()) as usize + 1
    } else {
        10
    };
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .x_desc(spec.x_label.as_str())
        .y_desc(spec.y_label.as_str())
        .x_labels(x_labels)
        .x_label_formatter(&x_format)
        .y_label_formatter(&|v: &f64| compact(*v))
        .draw()?;
    for (i, series) in spec.series.iter().enumerate() {
        if series.points.is_empty() {
            continue; // nothing measured (skipped, not registered): no legend entry either
        }
        let color = color(i);
        let points: Vec<(f64, f64)> = series
            .points
            .iter()
            .map(|&(x, y)| (if powers { x.log2() } else { x }, y))
            .filter(|&(x, y)| x.is_finite() && y.is_finite() && (y > 0.0 || !spec.y_log))
            .collect();
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)).point_size(4))?
            .label(series.name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    if let Some((value, label)) = &spec.threshold {
        let style = BLACK.stroke_width(1);
        chart
            .draw_series(DashedLineSeries::new(
                vec![(x_lo, *value), (x_hi, *value)],
                6,
                4,
                style,
            ))?
            .label(label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    chart
        .configure_series_labels()
        .position(match spec.legend {
            Corner::UpperLeft => SeriesLabelPosition::UpperLeft,
            Corner::UpperRight => SeriesLabelPosition::UpperRight,
        })
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

fn render_bars(spec: &BarChart, path: &Path) -> DrawResult {
    let n = spec.categories.len().max(1);
    let groups = spec.groups.len().max(1);
    let row_px = 14 * groups as u32 + 12;
    let height = 130 + row_px * n as u32;
    let root = SVGBackend::new(path, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let values = spec
        .groups
        .iter()
        .flat_map(|g| g.1.iter().flatten().copied());
    let max = values
        .chain(spec.reference.as_ref().map(|r| r.0))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    // Room past the longest bar for its value, and for the legend past the reference line.
    let x_hi = if max > 0.0 { max * 1.25 } else { 1.0 };
    let longest = spec.categories.iter().map(|c| c.len()).max().unwrap_or(4);
    let top = n as f64 - 0.5;
    let mut chart: ChartContext<_, Cartesian2d<RangedCoordf64, RangedCoordf64>> =
        ChartBuilder::on(&root)
            .caption(&spec.title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(16 + 8 * longest as u32)
            .build_cartesian_2d(0.0..x_hi, -0.5..top)?;
    // Category i is drawn at y = n - 1 - i, so that the first one is at the top.
    let label_of = |y: &f64| {
        let i = n as f64 - 1.0 - y.round();
        if (y - y.round()).abs() < 1e-6 && i >= 0.0 && (i as usize) < spec.categories.len() {
            spec.categories[i as usize].clone()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .light_line_style(TRANSPARENT)
        .y_labels(n + 1)
        .y_label_formatter(&label_of)
        .x_label_formatter(&|v: &f64| compact(*v))
        .x_desc(spec.value_label.as_str())
        .draw()?;
    let thickness = 0.8 / groups as f64;
    // A legend only when it tells something: several groups, or the reference line.
    let legend = spec.groups.len() > 1 || spec.reference.is_some();
    let value_style =
        TextStyle::from(("sans-serif", 12).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (g, (name, values)) in spec.groups.iter().enumerate() {
        let color = color(g);
        let bars = values.iter().enumerate().filter_map(|(i, v)| {
            let v = v.filter(|v| v.is_finite())?;
            // The first group on top, as the legend lists them.
            let y0 = (n - 1 - i) as f64 + 0.4 - (g + 1) as f64 * thickness;
            Some((v, y0))
        });
        let bars: Vec<(f64, f64)> = bars.collect();
        let drawn = chart
            .draw_series(bars.iter().map(|&(v, y0)| {
                Rectangle::new([(0.0, y0), (v, y0 + thickness)], color.filled())
            }))?;
        if legend {
            drawn.label(name.as_str()).legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled())
            });
        }
        // The value just past the bar's end.
        let gap = x_hi * 0.005;
        chart.draw_series(bars.iter().map(|&(v, y0)| {
            Text::new(
                compact(v),
                (v + gap, y0 + thickness / 2.0),
                value_style.clone(),
            )
        }))?;
    }
    if let Some((value, label)) = &spec.reference {
        let style = BLACK.stroke_width(2);
        chart
            .draw_series(DashedLineSeries::new(
                vec![(*value, -0.5), (*value, top)],
                6,
                4,
                style,
            ))?
            .label(label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    if legend {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_labels() {
        assert_eq!(compact(0.0), "0");
        assert_eq!(compact(0.5), "0.5");
        assert_eq!(compact(12.34), "12.3");
        assert_eq!(compact(1234.0), "1234");
        assert_eq!(compact(1e-6), "1e-6");
        assert_eq!(compact(2.0), "2");
        assert_eq!(compact(16.0), "16");
        assert_eq!(compact(80.0), "80");
        assert_eq!(compact(0.25), "0.25");
        assert_eq!(compact(2e5), "2e5");
    }

    #[test]
    fn both_kinds_render_to_svg_with_their_labels() {
        let dir = std::env::temp_dir().join(format!("chart-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lines = Chart::Lines(LineChart {
            title: "error vs size".into(),
            x_label: "n".into(),
            y_label: "relative error".into(),
            x_powers_of_two: true,
            y_log: true,
            series: vec![Series {
                name: "naive".into(),
                points: vec![(256.0, 1e-7), (512.0, 2e-7), (1024.0, 0.0)],
            }],
            threshold: Some((1e-6, "1e-6".into())),
            legend: Corner::UpperLeft,
        });
        render(&lines, &dir.join("lines.svg")).unwrap();
        let svg = std::fs::read_to_string(dir.join("lines.svg")).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("naive") && svg.contains("512"));

        let bars = Chart::Bars(BarChart {
            title: "% of cuBLAS".into(),
            value_label: "% of cuBLAS".into(),
            categories: vec!["cg-shuffle".into(), "cg-regs".into(), "cg-tile2x2".into()],
            groups: vec![
                ("this run".into(), vec![Some(10.2), Some(32.7), None]),
                ("004 notes".into(), vec![Some(7.0), Some(20.0), Some(22.0)]),
            ],
            reference: Some((100.0, "cuBLAS".into())),
        });
        render(&bars, &dir.join("bars.svg")).unwrap();
        let svg = std::fs::read_to_string(dir.join("bars.svg")).unwrap();
        for text in ["cg-tile2x2", "cuBLAS", "32.7", "004 notes", "this run"] {
            assert!(svg.contains(text), "{text}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
