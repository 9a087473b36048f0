//! A trend: one case's figure across runs in time, each run a point at its
//! median with a bar over its series' range; a step beyond the noise is ringed in
//! red and named with its ratio.

use std::path::Path;

use plotters::prelude::*;

use crate::chart::{canvas_with_legend, color, size_with_legend, FAMILY};
use crate::fleet::TrendPoint;

type DrawResult<E> = Result<(), DrawingAreaErrorKind<E>>;

/// A figure as its axis shows it: MB/s, µs or cycles/s.
fn scale(p: &TrendPoint) -> (f64, &'static str) {
    if p.lower_better {
        (1e-3, "p50 round trip, µs (bar: the runs' series)")
    } else if p.case.starts_with("sync") {
        (1.0, "cycles/s (bar: the runs' series)")
    } else {
        (1e-6, "MB/s (bar: the runs' series)")
    }
}

/// The cases of `points`, in order of first appearance.
fn cases(points: &[TrendPoint]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for p in points {
        if !out.contains(&p.case.as_str()) {
            out.push(&p.case);
        }
    }
    out
}

/// How the time axis labels a moment, as fine as its span needs: runs seconds
/// apart would otherwise share one minute's label six times over.
fn time_format(span_ms: f64) -> &'static str {
    if span_ms <= 3_600_000.0 {
        "%H:%M:%S"
    } else if span_ms <= 3.0 * 86_400_000.0 {
        "%m-%d %H:%M"
    } else {
        "%Y-%m-%d"
    }
}

fn when(ms: f64, format: &str) -> String {
    jiff::Timestamp::from_millisecond(ms as i64)
        .map(|t| t.strftime(format).to_string())
        .unwrap_or_default()
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    points: &[TrendPoint],
) -> DrawResult<DB::ErrorType> {
    let names = cases(points);
    let root = canvas_with_legend(root, names.iter().map(|n| n.to_string()))?;
    let (k, y_desc) = points.first().map(scale).unwrap_or((1.0, ""));
    let t = |p: &TrendPoint| p.started_ms as f64;
    let (x_lo, x_hi) = points
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(t(p)), b.max(t(p))));
    // A margin of the span's own size (a minute either side of a lone run).
    let pad = if x_hi > x_lo {
        (x_hi - x_lo) * 0.06
    } else {
        60_000.0
    };
    let format = time_format(x_hi - x_lo + 2.0 * pad);
    let (y_lo, y_hi) = points.iter().fold((f64::MAX, f64::MIN), |(a, b), p| {
        (a.min(p.min * k), b.max(p.max * k))
    });
    let ypad = ((y_hi - y_lo) * 0.1).max(y_hi.abs() * 0.02);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 22).into_font())
        .margin(16)
        .margin_right(48)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(
            (x_lo - pad)..(x_hi + pad),
            (y_lo - ypad).max(0.0)..(y_hi + ypad),
        )?;
    chart
        .configure_mesh()
        .x_desc("run started (UTC)")
        .y_desc(y_desc)
        .x_labels(6)
        .label_style((FAMILY, 14).into_font())
        .axis_desc_style((FAMILY, 16).into_font())
        .x_label_formatter(&|x| when(*x, format))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for (i, name) in names.iter().enumerate() {
        let col = color(i);
        let mine: Vec<&TrendPoint> = points.iter().filter(|p| p.case == *name).collect();
        chart.draw_series(LineSeries::new(
            mine.iter().map(|p| (t(p), p.median * k)),
            col.stroke_width(2),
        ))?;
        for p in &mine {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(t(p), p.min * k), (t(p), p.max * k)],
                col.stroke_width(2),
            )))?;
            chart.draw_series(std::iter::once(Circle::new(
                (t(p), p.median * k),
                4,
                col.filled(),
            )))?;
            if p.change.step {
                chart.draw_series(std::iter::once(Circle::new(
                    (t(p), p.median * k),
                    10,
                    RED.stroke_width(3),
                )))?;
                // The label above the ring, clear of the line.
                chart.draw_series(std::iter::once(
                    EmptyElement::at((t(p), p.max * k))
                        + Text::new(
                            format!("step {:.2}×", p.change.step_ratio.unwrap_or(f64::NAN)),
                            (-30, -28),
                            (FAMILY, 15).into_font().color(&RED),
                        ),
                ))?;
            }
        }
    }
    root.present()
}

/// The trend as an SVG document.
pub fn svg(title: &str, points: &[TrendPoint]) -> Result<String, String> {
    let mut out = String::new();
    {
        let size = size_with_legend(cases(points).len());
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        draw(root, title, points).map_err(|e| format!("cannot draw the chart: {e}"))?;
    }
    Ok(out)
}

/// The trend as a PNG file at `path`.
pub fn png(title: &str, points: &[TrendPoint], path: &Path) -> Result<(), String> {
    super::png::write(path, size_with_legend(cases(points).len()), |root| {
        draw(root, title, points).map_err(|e| e.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Six labels over a span tell six moments apart, whether the runs were
    /// seconds, hours or weeks apart.
    #[test]
    fn labels_tell_their_moments_apart() {
        let start = 1_780_000_000_000.0;
        for span in [130_000.0, 5.0 * 3_600_000.0, 40.0 * 86_400_000.0] {
            let format = time_format(span);
            let labels: std::collections::BTreeSet<String> = (0..6)
                .map(|i| when(start + span * i as f64 / 5.0, format))
                .collect();
            assert_eq!(labels.len(), 6, "{span} ms in {format}: {labels:?}");
        }
        assert_eq!(time_format(130_000.0), "%H:%M:%S");
    }
}
