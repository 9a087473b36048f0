//! Two charts over log-log axes: the scaling of many pairs (total rate against the
//! number of pairs, one line per mechanism, mode and size) and latency under a
//! paced load (p50, p99, p99.9 against the offered load, one colour per
//! mechanism, one marker per percentile; a saturated point is hollow).

use std::path::Path;

use ipcperf_core::record::{CaseRecord, RunRecord};
use ipcperf_core::workload::Workload;
use plotters::prelude::*;

use crate::chart::{color, fonts, legend_below, size_with_legend, ticks, FAMILY, SIZE};
use crate::export::view::mechanism_label;
use crate::units::fmt_size;

/// How a point is marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Triangle,
    Square,
}

/// One line of an x-y chart.
#[derive(Debug, Clone, PartialEq)]
pub struct XyLine {
    pub label: String,
    /// Colour index (lines of one mechanism share it).
    pub color: usize,
    pub marker: Marker,
    /// (x, y, hollow), by x.
    pub points: Vec<(f64, f64, bool)>,
}

/// A whole chart: its lines and words.
#[derive(Debug, Clone, PartialEq)]
pub struct XyChart {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub lines: Vec<XyLine>,
    /// A line under the title (e.g. what a hollow point means).
    pub note: Option<String>,
    /// The y values are microseconds (ticks say µs, ms, s), else counts.
    pub y_micros: bool,
}

fn push(lines: &mut Vec<XyLine>, label: String, color: usize, marker: Marker, p: (f64, f64, bool)) {
    if !(p.0 > 0.0 && p.1 > 0.0 && p.0.is_finite() && p.1.is_finite()) {
        return;
    }
    match lines.iter_mut().find(|l| l.label == label) {
        Some(l) => l.points.push(p),
        None => lines.push(XyLine {
            label,
            color,
            marker,
            points: vec![p],
        }),
    }
}

fn finish(mut lines: Vec<XyLine>) -> Vec<XyLine> {
    for l in &mut lines {
        l.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    lines
}

/// The scaling chart of a run's many-pair cases; None without any, or with one
/// count of pairs only (a line needs two).
pub fn scaling(run: &RunRecord) -> Option<XyChart> {
    let cases: Vec<&CaseRecord> = run
        .cases
        .iter()
        .filter(|c| c.pairs.is_some() && c.is_ok())
        .collect();
    let trips = cases.iter().any(|c| c.workload == Workload::RoundTrip);
    let cases: Vec<(&CaseRecord, &ipcperf_core::record::PairsRecord, f64)> = cases
        .iter()
        .filter_map(|c| Some((*c, c.pairs.as_ref()?, crate::export::pairs::total(c)?)))
        .collect();
    // Mechanism, mode and size: what every line shares goes to the title.
    let parts: Vec<Vec<String>> = cases
        .iter()
        .map(|(c, _, _)| {
            vec![
                mechanism_label(c),
                c.mode.name().to_string(),
                fmt_size(c.block_size),
            ]
        })
        .collect();
    let (shared, labels) = crate::chart::labels::shorten(&parts);
    let mut lines = Vec::new();
    for ((_, p, t), label) in cases.iter().zip(labels) {
        let y = if trips { *t } else { t / 1e6 };
        let n = lines.len();
        push(
            &mut lines,
            label,
            n,
            Marker::Circle,
            (p.count as f64, y, false),
        );
    }
    let lines = finish(lines);
    if !lines.iter().any(|l| l.points.len() > 1) {
        return None;
    }
    Some(XyChart {
        title: format!(
            "{} — {} (Linux {})",
            crate::chart::labels::titled("Many pairs at once", &shared),
            run.machine.hostname,
            run.machine.kernel
        ),
        x_desc: "pairs running at once (log)".into(),
        y_desc: if trips {
            "round trips/s, all pairs (log)".into()
        } else {
            "MB/s, all pairs (10⁶ bytes/s, log)".into()
        },
        lines,
        note: None,
        y_micros: false,
    })
}

/// The latency-under-load chart of a run's paced round trips; None unless some
/// case was measured at two offered loads or more.
pub fn load(run: &RunRecord) -> Option<XyChart> {
    let mut lines = Vec::new();
    let mut colors: Vec<String> = Vec::new();
    let paced: Vec<_> = run
        .cases
        .iter()
        .filter(|c| c.is_ok())
        .filter_map(|c| Some((c, crate::export::latency::offered(c)?, c.latency.as_ref()?)))
        .collect();
    // Mechanism, mode, size and place: what every line shares goes to the title.
    let parts: Vec<Vec<String>> = paced
        .iter()
        .map(|(c, _, _)| {
            vec![
                mechanism_label(c),
                c.mode.name().to_string(),
                fmt_size(c.block_size),
                c.placement.shown(),
            ]
        })
        .collect();
    let (shared, keys) = crate::chart::labels::shorten(&parts);
    for ((c, r, l), key) in paced.into_iter().zip(keys) {
        let color = match colors.iter().position(|k| *k == key) {
            Some(i) => i,
            None => {
                colors.push(key.clone());
                colors.len() - 1
            }
        };
        let hollow = crate::export::latency::saturated(c) == Some(true);
        for (name, v, m) in [
            ("p50", l.p50_ns, Marker::Circle),
            ("p99", l.p99_ns, Marker::Triangle),
            ("p99.9", l.p999_ns, Marker::Square),
        ] {
            push(
                &mut lines,
                if name == "p50" {
                    key.clone()
                } else {
                    format!("{key} {name}")
                },
                color,
                m,
                (r as f64, v as f64 / 1e3, hollow),
            );
        }
    }
    let lines = finish(lines);
    if !lines.iter().any(|l| l.points.len() > 1) {
        return None;
    }
    Some(XyChart {
        title: format!(
            "{} — {} (Linux {})",
            crate::chart::labels::titled("Round trips under a paced load", &shared),
            run.machine.hostname,
            run.machine.kernel
        ),
        x_desc: "offered load, round trips/s (log)".into(),
        y_desc: "round trip, from when it was due (log)".into(),
        lines,
        note: Some(
            "● p50 (thick)  ▲ p99  ■ p99.9; hollow: saturated (the mechanism fell behind the \
             schedule, so its latencies hold the backlog)"
                .into(),
        ),
        y_micros: true,
    })
}

/// One chart a run can be drawn as.
pub enum Chart {
    /// A row per case (a pipeline's methods, a sync run's cycles/s).
    Dots(&'static str, crate::chart::ab::DotChart),
    Throughput,
    Scaling(XyChart),
    Load(XyChart),
    Latency,
}

impl Chart {
    pub fn kind(&self) -> &'static str {
        match self {
            Chart::Dots(k, _) => k,
            Chart::Throughput => "throughput",
            Chart::Scaling(_) => "pairs",
            Chart::Load(_) => "load",
            Chart::Latency => "latency",
        }
    }

    pub fn what(&self) -> &'static str {
        match self {
            Chart::Dots("methods", _) => "the pipeline's methods",
            Chart::Dots(..) => "cycles per second",
            Chart::Throughput => "throughput",
            Chart::Scaling(_) => "scaling over pairs",
            Chart::Load(_) => "latency against offered load",
            Chart::Latency => "latency percentiles",
        }
    }

    /// The chart's heading in the report.
    pub fn heading(&self) -> &'static str {
        match self {
            Chart::Dots("methods", _) => "Stover's pipelines: MB/s of each method",
            Chart::Dots(..) => "Synchronization primitives: cycles per second",
            Chart::Throughput => "Throughput against block size",
            Chart::Scaling(_) => "Many pairs at once: total against the number of pairs",
            Chart::Load(_) => "Round trips under a paced load: percentiles against offered load",
            Chart::Latency => "Latency percentiles",
        }
    }

    pub fn svg(&self, run: &RunRecord) -> Result<String, String> {
        match self {
            Chart::Dots(_, c) => crate::chart::ab::dot_svg(c),
            Chart::Throughput => crate::chart::throughput_svg(run),
            Chart::Scaling(c) | Chart::Load(c) => svg(c),
            Chart::Latency => {
                crate::chart::latency_svg(run).unwrap_or_else(|| Err("no latencies".into()))
            }
        }
    }

    pub fn png(&self, run: &RunRecord, path: &Path) -> Result<(), String> {
        match self {
            Chart::Dots(_, c) => crate::chart::ab::dot_png(c, path),
            Chart::Throughput => crate::chart::throughput_png(run, path),
            Chart::Scaling(c) | Chart::Load(c) => png(c, path),
            Chart::Latency => crate::chart::latency_png(run, path).unwrap_or(Ok(())),
        }
    }
}

/// The charts a run has, in the order they are drawn: throughput against block
/// size (when a line has two sizes, or nothing else is drawn), scaling over
/// pairs, latency against offered load, latency percentiles.
pub fn charts(run: &RunRecord) -> Vec<Chart> {
    let mut v = Vec::new();
    // A pipeline is one size and six methods: a row each, not six dots at 1 KiB.
    if run.kind == "pipeline" {
        v.extend(pipeline_dots(run).map(|c| Chart::Dots("methods", c)));
        return v;
    }
    v.extend(sync_dots(run).map(|c| Chart::Dots("cycles", c)));
    let scaling = scaling(run);
    let load = load(run);
    let lines = crate::chart::throughput_lines(run);
    if lines.iter().any(|l| l.points.len() > 1) || (!lines.is_empty() && scaling.is_none()) {
        v.push(Chart::Throughput);
    }
    v.extend(scaling.map(Chart::Scaling));
    v.extend(load.map(Chart::Load));
    if !crate::chart::latency_lines(run).is_empty() {
        v.push(Chart::Latency);
    }
    v
}

/// A pipeline run's methods: MB/s at the median time, the rounds' min–max.
pub fn pipeline_dots(run: &RunRecord) -> Option<crate::chart::ab::DotChart> {
    let dots: Vec<crate::chart::ab::Dot> = run
        .cases
        .iter()
        .filter(|c| c.is_ok())
        .enumerate()
        .filter_map(|(i, c)| {
            let secs: Vec<f64> = c.series.iter().map(|s| s.elapsed_ns as f64 / 1e9).collect();
            let bytes = c.series.first()?.bytes as f64;
            let s = ipcperf_core::stats::spread(&secs)?;
            let what = c.options.get("what").map(String::as_str).unwrap_or("");
            Some(crate::chart::ab::Dot {
                label: format!("{}: {what}", c.mechanism),
                x: bytes / s.median / 1e6,
                range: Some((bytes / s.max / 1e6, bytes / s.min / 1e6)),
                color: color(i),
            })
        })
        .collect();
    (!dots.is_empty()).then(|| crate::chart::ab::DotChart {
        title: format!(
            "Stover's pipelines — {} (Linux {})",
            run.machine.hostname, run.machine.kernel
        ),
        x_desc: "MB/s at the median time (the rounds' min–max; log)".into(),
        axis: crate::chart::ab::Axis::Values,
        dots,
    })
}

/// A sync run's cycle rates: set/clear and request/release, tare taken off.
pub fn sync_dots(run: &RunRecord) -> Option<crate::chart::ab::DotChart> {
    let cases: Vec<_> = run
        .cases
        .iter()
        .filter(|c| c.is_ok())
        .filter_map(|c| Some((c, c.sync.as_ref()?)))
        .collect();
    // Primitive, mode and place: what every case shares goes to the title.
    let parts: Vec<Vec<String>> = cases
        .iter()
        .map(|(c, s)| {
            vec![
                s.primitive.clone(),
                c.mode.name().into(),
                c.placement.shown(),
            ]
        })
        .collect();
    let (shared, names) = crate::chart::labels::shorten(&parts);
    let mut dots = Vec::new();
    for ((_, s), at) in cases.iter().zip(names) {
        for (what, v, i) in [
            ("set/clear", s.set_clear_per_sec, 0),
            ("request/release", s.request_release_per_sec, 1),
        ] {
            if let Some(v) = v.filter(|v| *v > 0.0 && v.is_finite()) {
                dots.push(crate::chart::ab::Dot {
                    label: format!("{at} {what}"),
                    x: v,
                    range: None,
                    color: color(i),
                });
            }
        }
    }
    (!dots.is_empty()).then(|| crate::chart::ab::DotChart {
        title: format!(
            "{} — {} (Linux {})",
            crate::chart::labels::titled("Cycles per second", &shared),
            run.machine.hostname,
            run.machine.kernel
        ),
        x_desc: "cycles/s, tare taken off (log); blue set/clear, orange request/release".into(),
        axis: crate::chart::ab::Axis::Values,
        dots,
    })
}

/// Whole decades around `lo..hi`, so a log axis has labelled ticks.
fn decades(lo: f64, hi: f64) -> (f64, f64) {
    let a = 10f64.powf(lo.log10().floor());
    let b = 10f64.powf(hi.log10().ceil()).max(a * 10.0);
    (a, b)
}

/// The nearest of 1, 2, 5 × 10ⁿ at or above `v` (`up`), or at or below it.
fn step_125(v: f64, up: bool) -> f64 {
    let d = 10f64.powf(v.log10().floor());
    let steps = [1.0, 2.0, 5.0, 10.0].map(|m| m * d);
    // A hair's tolerance: 20000 computed as 19999.999… is 20k, not 50k.
    let near = |x: f64| (x - v).abs() <= v * 1e-9;
    if up {
        steps
            .into_iter()
            .find(|&x| x >= v || near(x))
            .unwrap_or(10.0 * d)
    } else {
        steps
            .into_iter()
            .rev()
            .find(|&x| x <= v || near(x))
            .unwrap_or(d)
    }
}

/// Microseconds as a time: 10 µs, 1 ms, 1 s.
fn micros(v: f64) -> String {
    if v >= 1e6 {
        format!("{} s", ticks::figures(v / 1e6))
    } else if v >= 1e3 {
        format!("{} ms", ticks::figures(v / 1e3))
    } else {
        format!("{} µs", ticks::figures(v))
    }
}

type DrawResult<E> = Result<(), DrawingAreaErrorKind<E>>;

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    c: &XyChart,
) -> DrawResult<DB::ErrorType> {
    fonts();
    root.fill(&WHITE)?;
    let root = legend_below(root, &legend(c))?;
    let xs = c.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
    let ys = c.lines.iter().flat_map(|l| l.points.iter().map(|p| p.1));
    let (x_lo, x_hi) = xs.fold((f64::MAX, 0f64), |(a, b), v| (a.min(v), b.max(v)));
    let (y_lo, y_hi) = ys.fold((f64::MAX, 0f64), |(a, b), v| (a.min(v), b.max(v)));
    // x: whole decades over a wide range (so its ends are labelled), else a little
    // room either side of the data (counts of pairs are small numbers).
    let ((x0, x1), x_keys) = if x_hi / x_lo >= 10.0 {
        // From the 1-2-5 step at or below the data to the one at or above it:
        // loads of 1k to 20k drew an empty half decade out to 100k.
        let (a, b) = (step_125(x_lo, false), step_125(x_hi, true));
        ((a, b), ticks::log_points(a, b))
    } else {
        // Marks only where there is data: no 0.8 pairs, nor 1.2 and 1.5
        // between 1 and 2 (a few values: each its own mark).
        let mut at: Vec<f64> = c
            .lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.0))
            .collect();
        at.sort_by(f64::total_cmp);
        at.dedup();
        let keys = if at.len() <= 8 {
            at
        } else {
            ticks::log_points(x_lo, x_hi)
        };
        ((x_lo / 1.3, x_hi * 1.3), keys)
    };
    let (y0, y1) = decades(y_lo, y_hi);
    let root = match &c.note {
        Some(n) => {
            let (top, rest) = root.split_vertically(SIZE.1 - 24);
            rest.draw(&Text::new(n.clone(), (70, 2), (FAMILY, 14).into_font()))?;
            top
        }
        None => root,
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(&c.title, (FAMILY, 22).into_font())
        .margin(16)
        // Room for the last x label, centred on the axis's end.
        .margin_right(32)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(
            (x0..x1).log_scale().with_key_points(x_keys),
            (y0..y1)
                .log_scale()
                .with_key_points(ticks::log_points(y0, y1)),
        )?;
    chart
        .configure_mesh()
        .x_desc(c.x_desc.as_str())
        .y_desc(c.y_desc.as_str())
        .label_style((FAMILY, 14).into_font())
        .axis_desc_style((FAMILY, 16).into_font())
        .x_label_formatter(&|x| ticks::value(*x))
        .y_label_formatter(&|y| {
            if c.y_micros {
                micros(*y)
            } else {
                ticks::value(*y)
            }
        })
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for l in &c.lines {
        let col = color(l.color);
        let pts: Vec<(f64, f64)> = l.points.iter().map(|p| (p.0, p.1)).collect();
        let m = l.marker;
        // The main line (circles) is thick and named in the legend; the others
        // (higher percentiles of the same case) are thin and share its colour.
        let width = if m == Marker::Circle { 2 } else { 1 };
        chart.draw_series(LineSeries::new(pts, col.stroke_width(width)))?;
        for &(x, y, hollow) in &l.points {
            let style = if hollow {
                col.stroke_width(2)
            } else {
                col.filled()
            };
            match m {
                Marker::Circle if hollow => {
                    chart.draw_series(super::ring::ring((x, y), 4, 2, &col))?
                }
                Marker::Circle => {
                    chart.draw_series(std::iter::once(Circle::new((x, y), 4, style)))?
                }
                Marker::Triangle => {
                    chart.draw_series(std::iter::once(TriangleMarker::new((x, y), 6, style)))?
                }
                Marker::Square => chart.draw_series(std::iter::once(
                    EmptyElement::at((x, y)) + Rectangle::new([(-4, -4), (4, 4)], style),
                ))?,
            };
        }
    }
    root.present()
}

/// The legend's entries: the main (circle-marked) line of each case.
fn legend(c: &XyChart) -> Vec<(String, RGBAColor)> {
    c.lines
        .iter()
        .filter(|l| l.marker == Marker::Circle)
        .map(|l| (l.label.clone(), color(l.color)))
        .collect()
}

/// The chart as an SVG document.
pub fn svg(c: &XyChart) -> Result<String, String> {
    let mut out = String::new();
    {
        let size = size_with_legend(legend(c).len());
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        draw(root, c).map_err(|e| format!("cannot draw the chart: {e}"))?;
    }
    Ok(out)
}

/// The chart as a PNG file at `path`.
pub fn png(c: &XyChart, path: &Path) -> Result<(), String> {
    super::png::write(path, size_with_legend(legend(c).len()), |root| {
        draw(root, c).map_err(|e| e.to_string())
    })
}

#[cfg(test)]
#[path = "xy_tests.rs"]
mod tests;
