//! Dot charts (a row per case, a value with its spread on a log axis), and the
//! first of them: run A against run B on one chart: each comparable case a row, how much faster B
//! is on a log axis around 1 (B/A of a rate, A/B of a time, so right is always
//! faster: a dot, and its 95% bootstrap interval as a whisker), coloured by the
//! comparison's verdict: green faster, red slower, grey within the noise.

use plotters::prelude::*;

use crate::chart::{fonts, ticks, FAMILY};
use crate::compare::{Row, Verdict};

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

/// One row of a dot chart: a value, its spread, its colour.
#[derive(Debug, Clone, PartialEq)]
pub struct Dot {
    pub label: String,
    pub x: f64,
    pub range: Option<(f64, f64)>,
    pub color: RGBAColor,
}

/// A dot chart's x axis: a ratio around 1 (log2, symmetric, ticks as `1.41×`) or
/// plain positive values (log10, ticks as `1.2k`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    Ratio,
    Values,
}

/// A whole dot chart: a row per dot, top to bottom.
#[derive(Debug, Clone, PartialEq)]
pub struct DotChart {
    pub title: String,
    pub x_desc: String,
    pub axis: Axis,
    pub dots: Vec<Dot>,
}

/// Where a ratio axis spanning 1/2^`span` to 2^`span` (log2 units) is marked,
/// in log2 units: whole powers of two over a wide span (every one, or every
/// other, ...), else round ratios (0.8×, 1.25×) around 1.
fn ratio_points(span: f64) -> Vec<f64> {
    if span > 1.5 {
        let step = (2.0 * span / 8.0).ceil();
        let k = (span / step).floor() as i32;
        (-k..=k).map(|i| f64::from(i) * step).collect()
    } else {
        [0.5, 2.0 / 3.0, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0]
            .iter()
            .map(|r: &f64| r.log2())
            .filter(|x| x.abs() <= span)
            .collect()
    }
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    c: &DotChart,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    fonts();
    root.fill(&WHITE)?;
    let pos = |x: f64| x > 0.0 && x.is_finite();
    let xs = c.dots.iter().flat_map(|d| {
        let (lo, hi) = d.range.unwrap_or((d.x, d.x));
        [lo, hi, d.x]
    });
    let start = if c.axis == Axis::Ratio { 1.0 } else { f64::MAX };
    let (lo, hi) = xs.filter(|x| pos(*x)).fold(
        (start, if c.axis == Axis::Ratio { 1.0f64 } else { 0.0 }),
        |(a, b), x| (a.min(x), b.max(x)),
    );
    // Coordinates are logarithms: log2 around 1 for a ratio (at least 0.5× to
    // 2×, symmetric), log10 for values (a little room either side).
    let (x0, x1, base) = match c.axis {
        Axis::Ratio => {
            let span = (1.0 / lo).max(hi).max(2.0) * 1.1;
            (-span.log2(), span.log2(), 2f64)
        }
        Axis::Values if hi > 0.0 => ((lo / 1.5).log10(), (hi * 1.5).log10(), 10f64),
        Axis::Values => (0.0, 1.0, 10f64),
    };
    let to = |x: f64| x.log(base);
    let n = c.dots.len().max(1);
    let keys = match c.axis {
        Axis::Ratio => ratio_points(x1),
        Axis::Values => ticks::log_points(10f64.powf(x0), 10f64.powf(x1))
            .into_iter()
            .map(f64::log10)
            .collect(),
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(&c.title, (FAMILY, 20).into_font())
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(360)
        .build_cartesian_2d(
            ticks::Keyed {
                range: x0..x1,
                keys,
            },
            -0.5f64..n as f64 - 0.5,
        )?;
    let names: Vec<String> = c
        .dots
        .iter()
        .map(|d| {
            let mut s: String = d.label.chars().take(52).collect();
            if d.label.chars().count() > 52 {
                s.push('…');
            }
            s
        })
        .collect();
    let axis = c.axis;
    chart
        .configure_mesh()
        .x_desc(c.x_desc.as_str())
        .label_style((FAMILY, 13).into_font())
        .axis_desc_style((FAMILY, 15).into_font())
        .x_label_formatter(&|x| match axis {
            Axis::Ratio => ticks::ratio(x.exp2()),
            Axis::Values => ticks::value(10f64.powf(*x)),
        })
        .y_labels(n)
        .y_label_formatter(&|y| {
            let i = y.round();
            if (y - i).abs() > 1e-6 || i < 0.0 {
                return String::new();
            }
            // Row 0 on top.
            (n - 1)
                .checked_sub(i as usize)
                .and_then(|k| names.get(k))
                .cloned()
                .unwrap_or_default()
        })
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    if c.axis == Axis::Ratio {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, -0.5), (0.0, n as f64 - 0.5)],
            BLACK.stroke_width(1),
        )))?;
    }
    for (i, d) in c.dots.iter().enumerate() {
        let y = (n - 1 - i) as f64;
        if let Some((a, b)) = d.range.filter(|(a, b)| pos(*a) && pos(*b)) {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(to(a), y), (to(b), y)],
                d.color.stroke_width(2),
            )))?;
        }
        if pos(d.x) {
            chart.draw_series(std::iter::once(Circle::new(
                (to(d.x), y),
                5,
                d.color.filled(),
            )))?;
        }
    }
    root.present()
}

fn height(c: &DotChart) -> u32 {
    120 + ROW_PX * c.dots.len().max(1) as u32
}

/// A dot chart as SVG, sized to its rows.
pub fn dot_svg(c: &DotChart) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, height(c))).into_drawing_area();
        draw(root, c).map_err(|e| format!("cannot draw the chart: {e}"))?;
    }
    Ok(out)
}

/// A dot chart as a PNG file.
pub fn dot_png(c: &DotChart, path: &std::path::Path) -> Result<(), String> {
    super::png::write(path, (WIDTH, height(c)), |root| {
        draw(root, c).map_err(|e| e.to_string())
    })
}

/// Run B against run A, case by case, as SVG.
/// What every row's name holds is said once, in the title.
pub fn svg(title: &str, rows: &[&Row]) -> Result<String, String> {
    let names: Vec<String> = rows.iter().map(|r| r.case.clone()).collect();
    let (shared, names) = crate::chart::labels::shorten_words(&names);
    dot_svg(&DotChart {
        title: crate::chart::labels::titled(title, &shared),
        x_desc: "how much faster B is (B/A of a rate, A/B of a latency; log)".into(),
        axis: Axis::Ratio,
        dots: rows
            .iter()
            .zip(names)
            .map(|(r, label)| Dot {
                label,
                x: speedup(r).unwrap_or(0.0),
                range: speedup_interval(r),
                color: verdict_color(r.verdict).to_rgba(),
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::svg_text::texts;

    fn row(case: &str, ratio: f64, verdict: Verdict) -> Row {
        Row {
            case: case.into(),
            unit: "MB/s",
            a: Some(100.0),
            b: Some(100.0 * ratio),
            ratio: Some(ratio),
            interval: Some((ratio * 0.95, ratio * 1.05)),
            p: Some(0.01),
            verdict,
            why: String::new(),
            lower_better: false,
            detectable: Some(0.05),
            se_df: None,
            floor: None,
            runs: None,
            limit: None,
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
        // Ratios from 0.5 to 1.49: round ones marked, as they read (`2×`, not `2.00×`).
        let marks = texts(&s);
        for want in ["0.5×", "0.8×", "1×", "1.25×", "2×"] {
            assert!(marks.iter().any(|t| t == want), "{want}: {marks:?}");
        }
    }

    /// What every row's name holds is said once, in the title: the rows were
    /// cut at 52 characters, which left "stream pipe processes 64 B shared-l3
    /// 0→1 touch · swi…", the one word that told the row apart cut off.
    #[test]
    fn words_every_row_holds_are_said_once_in_the_title() {
        let rows = [
            row(
                "stream pipe processes 64 B shared-l3 0→1 touch · switches/msg",
                0.2,
                Verdict::Unchanged,
            ),
            row(
                "stream pipe processes 64 B shared-l3 0→1 touch · CPU µs/msg",
                1.1,
                Verdict::Unchanged,
            ),
            row(
                "stream unix processes 4 KiB shared-l3 0→1 touch",
                1.0,
                Verdict::Unchanged,
            ),
        ];
        let marks = texts(&svg("Run 2 against run 1", &rows.iter().collect::<Vec<_>>()).unwrap());
        for want in [
            "Run 2 against run 1 · stream processes shared-l3 0→1 touch",
            "pipe 64 B · switches/msg",
            "pipe 64 B · CPU µs/msg",
            "unix 4 KiB",
        ] {
            assert!(marks.iter().any(|t| t == want), "{want}: {marks:?}");
        }
    }

    /// Over 2^±4: whole powers of two, every other one.
    #[test]
    fn a_wide_ratio_axis_is_marked_at_powers_of_two() {
        let rows = [row("x16", 16.0, Verdict::Faster)];
        let marks = texts(&svg("A against B", &rows.iter().collect::<Vec<_>>()).unwrap());
        for want in ["0.0625×", "0.25×", "1×", "4×", "16×"] {
            assert!(marks.iter().any(|t| t == want), "{want}: {marks:?}");
        }
    }
}
