//! A trend: one case's figure across runs in time, each run a point at its
//! median with a bar over its series' range; a step beyond the noise is ringed in
//! red and named with its ratio.

use std::path::Path;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::chart::{canvas_with_legend, color, size_with_legend, ticks, FAMILY};
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
    // What every case's name holds is said once, in the title.
    let (shared, short) =
        super::labels::shorten_words(&names.iter().map(|n| n.to_string()).collect::<Vec<_>>());
    let shared: Vec<&str> = shared
        .split_whitespace()
        .filter(|w| !title.split_whitespace().any(|t| t == *w))
        .collect();
    let title = &super::labels::titled(title, &shared.join(" "));
    let root = canvas_with_legend(root, short)?;
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
    let x = (x_lo - pad)..(x_hi + pad);
    // One panel a unit, one above the other on the same time axis: a
    // round trip's µs and a stream's MB/s on one axis drew the MB/s as
    // thousands of "µs".
    let mut units: Vec<&'static str> = Vec::new();
    for p in points {
        if !units.contains(&scale(p).1) {
            units.push(scale(p).1);
        }
    }
    let panels = root.split_evenly((units.len().max(1), 1));
    for (n, (unit, area)) in units.iter().zip(&panels).enumerate() {
        let mine: Vec<&TrendPoint> = points.iter().filter(|p| scale(p).1 == *unit).collect();
        panel(area, (n == 0).then_some(title), &names, &mine, x.clone())?;
    }
    root.present()
}

/// One unit's cases (`points`, all of one [`scale`]) on the time axis `x`,
/// each in its colour of the legend's `names`.
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    title: Option<&str>,
    names: &[&str],
    points: &[&TrendPoint],
    x: std::ops::Range<f64>,
) -> DrawResult<DB::ErrorType> {
    let (k, y_desc) = points.first().map(|p| scale(p)).unwrap_or((1.0, ""));
    let format = time_format(x.end - x.start);
    let (y_lo, y_hi) = points.iter().fold((f64::MAX, f64::MIN), |(a, b), p| {
        (a.min(p.min * k), b.max(p.max * k))
    });
    let mut builder = ChartBuilder::on(area);
    if let Some(title) = title {
        builder.caption(title, (FAMILY, 22).into_font());
    }
    builder
        .margin(16)
        .margin_right(48)
        .x_label_area_size(48)
        .y_label_area_size(80);
    // Figures over twenty times apart (a paced case that fell behind beside
    // ones that kept up: 95 ms and 5 µs) on a log axis, else every case but
    // the largest lay flat on its floor.
    if y_lo > 0.0 && y_hi / y_lo > LOG_SPAN {
        let y = (y_lo / 1.5)..(y_hi * 1.5);
        let keys = ticks::log_points(y.start, y.end);
        let chart = builder.build_cartesian_2d(x, y.log_scale().with_key_points(keys))?;
        let log_desc = format!("{y_desc}, log");
        series(chart, &log_desc, names, points, k, format)
    } else {
        let ypad = ((y_hi - y_lo) * 0.1).max(y_hi.abs() * 0.02);
        let chart = builder.build_cartesian_2d(x, (y_lo - ypad).max(0.0)..(y_hi + ypad))?;
        series(chart, y_desc, names, points, k, format)
    }
}

/// How far apart a panel's figures may be on a linear axis.
const LOG_SPAN: f64 = 20.0;

/// The mesh and every case's points, bars and steps, on a linear or log axis.
fn series<DB: DrawingBackend, Y>(
    mut chart: ChartContext<'_, DB, Cartesian2d<RangedCoordf64, Y>>,
    y_desc: &str,
    names: &[&str],
    points: &[&TrendPoint],
    k: f64,
    format: &str,
) -> DrawResult<DB::ErrorType>
where
    Y: Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
{
    let t = |p: &TrendPoint| p.started_ms as f64;
    // Figures under 10 keep their decimals: a 64 B stream at 8.4 MB/s on an
    // axis of whole numbers read 8, 8, 8.
    let y_top = chart.y_range().end;
    let log = y_desc.ends_with(", log");
    let y_label = |y: &f64| {
        if log {
            ticks::value(*y)
        } else if y_top < 10.0 || *y < 1.0 {
            format!("{}", (y * 100.0).round() / 100.0)
        } else {
            format!("{y:.0}")
        }
    };
    chart
        .configure_mesh()
        .x_desc("run started (UTC)")
        .y_desc(y_desc)
        .x_labels(6)
        .label_style((FAMILY, 14).into_font())
        .axis_desc_style((FAMILY, 16).into_font())
        .x_label_formatter(&|x| when(*x, format))
        .y_label_formatter(&y_label)
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for (i, name) in names.iter().enumerate() {
        let col = color(i);
        let mine: Vec<&TrendPoint> = points.iter().copied().filter(|p| p.case == *name).collect();
        if mine.is_empty() {
            continue;
        }
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
                chart.draw_series(super::ring::ring((t(p), p.median * k), 10, 3, &RED))?;
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
    Ok(())
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
    use crate::chart::svg_text::texts;

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

    fn point(case: &str, run_id: i64, median: f64, lower_better: bool) -> TrendPoint {
        TrendPoint {
            case: case.into(),
            run_id,
            started_ms: 1_780_000_000_000 + run_id as u64 * 60_000,
            host: "vm".into(),
            label: None,
            median,
            min: median * 0.9,
            max: median * 1.1,
            series: 5,
            change: Default::default(),
            lower_better,
            newest: None,
        }
    }

    /// A round trip's µs and a stream's MB/s each get an axis of their own: on
    /// one axis, the round trip's, a stream of 4000 MB/s was drawn at
    /// "4000000 µs".
    #[test]
    fn each_unit_has_its_own_axis() {
        let points = [
            point("round-trip pipe processes 512 B", 1, 46_000.0, true),
            point("stream pipe processes 64 KiB", 2, 4.2e9, false),
            point("stream pipe processes 64 KiB", 3, 4.0e9, false),
        ];
        let both = svg("vm: pipe", &points).unwrap();
        assert!(both.contains("p50 round trip, µs"), "the round trip's axis");
        assert!(both.contains("MB/s (bar"), "the stream's axis");
        // The stream's axis reads in thousands of MB/s, not millions of µs.
        let ticks = texts(&both);
        assert!(ticks.iter().any(|t| t == "4000"), "MB/s ticks: {ticks:?}");
        assert!(
            ticks
                .iter()
                .all(|t| t.parse::<f64>().map_or(true, |v| v < 10_000.0)),
            "no stream drawn in µs: {ticks:?}"
        );
        // One kind of figure: one axis, as before.
        let one = svg("vm: pipe", &points[1..]).unwrap();
        assert!(!one.contains("round trip") && one.contains("MB/s (bar"));
    }

    /// What every case's name holds is said once, in the title (but for the
    /// words the title has already): the legend names what tells them apart.
    #[test]
    fn the_legend_names_what_tells_the_cases_apart() {
        let points = [
            point(
                "stream pipe processes 64 B shared-l3 touch",
                1,
                1.4e8,
                false,
            ),
            point(
                "stream pipe processes 4 KiB shared-l3 touch",
                1,
                2.9e9,
                false,
            ),
        ];
        let t = texts(&svg("vm: pipe", &points).unwrap());
        for want in [
            "vm: pipe · stream processes shared-l3 touch",
            "64 B",
            "4 KiB",
        ] {
            assert!(t.iter().any(|x| x == want), "{want}: {t:?}");
        }
    }

    /// Figures far apart share a log axis: a paced case that fell behind
    /// (95 ms) beside one that kept up (5 µs) drew the 5 µs flat on a linear
    /// axis's 0, its changes unseen.
    #[test]
    fn figures_far_apart_are_drawn_on_a_log_axis() {
        let points = [
            point("round-trip pipe processes 512 B", 1, 5_000.0, true),
            point("round-trip pipe processes 512 B", 2, 6_000.0, true),
            point("round-trip pipe processes 512 B at 20.0k/s", 3, 95e6, true),
        ];
        let far = svg("vm: pipe", &points).unwrap();
        assert!(far.contains("series), log"), "a log axis");
        let ticks = texts(&far);
        for decade in ["10", "100", "1k", "10k"] {
            assert!(ticks.iter().any(|t| t == decade), "{decade}: {ticks:?}");
        }
        // Near figures keep their linear axis.
        let near = svg("vm: pipe", &points[..2]).unwrap();
        assert!(!near.contains(", log") && near.contains("series)"));
    }
}
