//! Run A against run B on one chart: each comparable case a row, B/A on a log axis
//! around 1 (a dot, and its 95% bootstrap interval as a whisker), coloured by the
//! comparison's verdict: green faster, red slower, grey within the noise.

use plotters::prelude::*;

use crate::compare::{Row, Verdict};
use crate::plot::{fonts, FAMILY};

/// The most rows one chart shows: the largest changes first (the rest are in the
/// comparison's table).
pub const MAX_ROWS: usize = 40;

const ROW_PX: u32 = 22;
const WIDTH: u32 = 1000;

/// The rows the chart draws (those with a ratio), largest change first, at most
/// [`MAX_ROWS`]; and how many were left out.
pub fn chosen(rows: &[Row]) -> (Vec<&Row>, usize) {
    let mut v: Vec<&Row> = rows
        .iter()
        .filter(|r| r.ratio.is_some_and(|x| x > 0.0 && x.is_finite()))
        .collect();
    let size = |r: &Row| r.ratio.map_or(0.0, |x| x.ln().abs());
    v.sort_by(|a, b| size(b).total_cmp(&size(a)));
    let left = v.len().saturating_sub(MAX_ROWS);
    v.truncate(MAX_ROWS);
    (v, left)
}

fn verdict_color(v: Verdict) -> RGBColor {
    match v {
        Verdict::Faster => RGBColor(44, 160, 44),
        Verdict::Slower => RGBColor(214, 39, 40),
        _ => RGBColor(127, 127, 127),
    }
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    rows: &[&Row],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    fonts();
    root.fill(&WHITE)?;
    let xs = rows.iter().flat_map(|r| {
        let (lo, hi) = r
            .interval
            .unwrap_or((r.ratio.unwrap_or(1.0), r.ratio.unwrap_or(1.0)));
        [lo, hi, r.ratio.unwrap_or(1.0)]
    });
    let (lo, hi) = xs
        .filter(|x| *x > 0.0 && x.is_finite())
        .fold((1.0f64, 1.0f64), |(a, b), x| (a.min(x), b.max(x)));
    // Symmetric around 1 on the log axis, at least 0.5× to 2×.
    let span = (1.0 / lo).max(hi).max(2.0) * 1.1;
    let n = rows.len().max(1);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 20).into_font())
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(360)
        .build_cartesian_2d((1.0 / span..span).log_scale(), -0.5f64..n as f64 - 0.5)?;
    let names: Vec<String> = rows
        .iter()
        .map(|r| {
            let mut s: String = r.case.chars().take(52).collect();
            if r.case.chars().count() > 52 {
                s.push('…');
            }
            s
        })
        .collect();
    chart
        .configure_mesh()
        .x_desc("B / A (log; right of 1: B is faster)")
        .label_style((FAMILY, 13).into_font())
        .axis_desc_style((FAMILY, 15).into_font())
        .x_labels(12)
        .x_label_formatter(&|x| format!("{x:.2}×"))
        .y_labels(n)
        .y_label_formatter(&|y| {
            let i = y.round();
            if (y - i).abs() > 1e-6 || i < 0.0 {
                return String::new();
            }
            names.get(i as usize).cloned().unwrap_or_default()
        })
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(1.0, -0.5), (1.0, n as f64 - 0.5)],
        BLACK.stroke_width(1),
    )))?;
    for (i, r) in rows.iter().enumerate() {
        let y = i as f64;
        let c = verdict_color(r.verdict);
        if let Some((a, b)) = r.interval.filter(|(a, b)| *a > 0.0 && *b > 0.0) {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(a, y), (b, y)],
                c.stroke_width(2),
            )))?;
        }
        if let Some(x) = r.ratio {
            chart.draw_series(std::iter::once(Circle::new((x, y), 5, c.filled())))?;
        }
    }
    root.present()
}

/// The chart as SVG, sized to its rows.
pub fn svg(title: &str, rows: &[&Row]) -> Result<String, String> {
    let mut out = String::new();
    {
        let h = 120 + ROW_PX * rows.len().max(1) as u32;
        let root = SVGBackend::with_string(&mut out, (WIDTH, h)).into_drawing_area();
        draw(root, title, rows).map_err(|e| format!("cannot draw the chart: {e}"))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(case: &str, ratio: f64, verdict: Verdict) -> Row {
        Row {
            case: case.into(),
            unit: "MB/s",
            a: Some(100.0),
            b: Some(100.0 * ratio),
            ratio: Some(ratio),
            interval: Some((ratio * 0.95, ratio * 1.05)),
            verdict,
            why: String::new(),
        }
    }

    #[test]
    fn the_largest_changes_come_first_and_the_chart_names_them() {
        let mut rows: Vec<Row> = (0..50)
            .map(|i| {
                row(
                    &format!("case {i}"),
                    1.0 + i as f64 / 100.0,
                    Verdict::Unchanged,
                )
            })
            .collect();
        rows.push(row("halved", 0.5, Verdict::Slower));
        rows.push(Row {
            ratio: None,
            ..row("not comparable", 1.0, Verdict::NotComparable)
        });
        let (v, left) = chosen(&rows);
        assert_eq!(v.len(), MAX_ROWS);
        assert_eq!(left, 51 - MAX_ROWS);
        assert_eq!(v[0].case, "halved");
        let s = svg("A against B", &v).unwrap();
        assert!(
            s.contains("halved") && s.contains("B / A"),
            "names and axis"
        );
        assert!(s.contains(&format!("height=\"{}\"", 120 + 22 * MAX_ROWS)));
    }
}
