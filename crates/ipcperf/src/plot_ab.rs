//! Run A against run B on one chart: each comparable case a row, how much faster B
//! is on a log axis around 1 (B/A of a rate, A/B of a time, so right is always
//! faster: a dot, and its 95% bootstrap interval as a whisker), coloured by the
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

/// How much faster B is than A: B/A for a rate, A/B for a time (None: no ratio).
pub fn speedup(r: &Row) -> Option<f64> {
    r.ratio
        .filter(|x| *x > 0.0 && x.is_finite())
        .map(|x| if r.lower_better { 1.0 / x } else { x })
}

/// The interval of [`speedup`].
fn speedup_interval(r: &Row) -> Option<(f64, f64)> {
    r.interval
        .filter(|(a, b)| *a > 0.0 && *b > 0.0)
        .map(|(a, b)| {
            if r.lower_better {
                (1.0 / b, 1.0 / a)
            } else {
                (a, b)
            }
        })
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    rows: &[&Row],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    fonts();
    root.fill(&WHITE)?;
    let xs = rows.iter().flat_map(|r| {
        let s = speedup(r).unwrap_or(1.0);
        let (lo, hi) = speedup_interval(r).unwrap_or((s, s));
        [lo, hi, s]
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
        // x in log2(B/A), so equal changes either way are equal distances.
        .build_cartesian_2d(-span.log2()..span.log2(), -0.5f64..n as f64 - 0.5)?;
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
        .x_desc("how much faster B is (B/A of a rate, A/B of a latency; log)")
        .label_style((FAMILY, 13).into_font())
        .axis_desc_style((FAMILY, 15).into_font())
        .x_labels(9)
        .x_label_formatter(&|x| format!("{:.2}×", x.exp2()))
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
        vec![(0.0, -0.5), (0.0, n as f64 - 0.5)],
        BLACK.stroke_width(1),
    )))?;
    for (i, r) in rows.iter().enumerate() {
        let y = i as f64;
        let c = verdict_color(r.verdict);
        if let Some((a, b)) = speedup_interval(r) {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(a.log2(), y), (b.log2(), y)],
                c.stroke_width(2),
            )))?;
        }
        if let Some(x) = speedup(r) {
            chart.draw_series(std::iter::once(Circle::new((x.log2(), y), 5, c.filled())))?;
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
            lower_better: false,
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
            s.contains("halved") && s.contains("how much faster B is"),
            "names and axis"
        );
        // A latency that doubled is B twice as slow: left of 1, like a halved rate.
        let lat = Row {
            lower_better: true,
            ..row("p50", 2.0, Verdict::Slower)
        };
        assert_eq!(speedup(&lat), Some(0.5));
        assert_eq!(speedup_interval(&lat), Some((1.0 / 2.1, 1.0 / 1.9)));
        assert!(s.contains(&format!("height=\"{}\"", 120 + 22 * MAX_ROWS)));
    }
}
