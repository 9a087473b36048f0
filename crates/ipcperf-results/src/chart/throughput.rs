//! The throughput chart: MB/s against block size on a log₂ axis, one line per
//! mechanism, mode and placement. A mechanism keeps one colour over its
//! placements and a placement one stroke over the mechanisms (solid, dashed,
//! dotted, …, each with its own marker), so twelve lines read as seven colours
//! by two strokes, and a line drawn under another of its placement still shows
//! between the other's dashes.

use std::path::Path;

use ipcperf_core::record::{CaseRecord, RunRecord};
use ipcperf_core::workload::Workload;
use plotters::prelude::*;

use super::{
    color, fonts, legend_styled, png, size_with_legend, ticks, DrawResult, Log2Axis, FAMILY, SIZE,
};

/// One line of the throughput chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub label: String,
    /// Colour index: the lines of one mechanism and mode (and payload, when a run
    /// used several) share it.
    pub color: usize,
    /// Stroke index: the lines of one placement share it ([`stroke`]).
    pub stroke: usize,
    /// (block size, MB/s), by size.
    pub points: Vec<(u64, f64)>,
    /// (block size, min MB/s, max MB/s) over the series, by size: drawn as a band.
    pub band: Vec<(u64, f64, f64)>,
}

/// How the lines of a placement are drawn: a dash (`None`: solid) and a marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stroke {
    /// (dash, gap) in pixels.
    pub dash: Option<(u32, u32)>,
    pub marker: Mark,
}

/// A point's marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Circle,
    Diamond,
    Triangle,
    Cross,
}

/// The stroke of the `i`th placement of a chart: solid with circles, dashed
/// with diamonds, dotted with triangles, long dashes with crosses, then again.
pub fn stroke(i: usize) -> Stroke {
    const STROKES: [Stroke; 4] = [
        Stroke {
            dash: None,
            marker: Mark::Circle,
        },
        Stroke {
            dash: Some((9, 5)),
            marker: Mark::Diamond,
        },
        Stroke {
            dash: Some((2, 4)),
            marker: Mark::Triangle,
        },
        Stroke {
            dash: Some((16, 6)),
            marker: Mark::Cross,
        },
    ];
    STROKES[i % STROKES.len()]
}

/// The lines of the throughput chart: every case that ran, grouped by mechanism,
/// mode, placement (and payload treatment when the run used several).
pub fn throughput_lines(run: &RunRecord) -> Vec<Line> {
    let payloads: Vec<_> = run.cases.iter().map(|c| c.payload).collect();
    let many_payloads = payloads.iter().any(|p| *p != payloads[0]);
    let streams = run.cases.iter().filter(|c| c.workload == Workload::Stream);
    let mixed = crate::export::cells::idle_mixed(streams);
    // A line's name ("pipe processes same-cpu 0→0 touch"), what its colour
    // follows (all of it but the placement) and what its stroke follows.
    let named = |c: &CaseRecord| {
        // shm's wake-ups and zero-copy are lines of their own: "shm (spin, zero-copy)".
        let what = format!(
            "{} {}",
            crate::export::view::mechanism_label(c),
            c.mode.name()
        );
        let place = crate::export::cells::place(c, mixed);
        let payload = if many_payloads {
            format!(" {}", c.payload.name())
        } else {
            String::new()
        };
        (
            format!("{what} {place}{payload}"),
            format!("{what}{payload}"),
            place,
        )
    };
    let (mut whats, mut places) = (Vec::<String>::new(), Vec::<String>::new());
    let index = |v: &mut Vec<String>, s: String| match v.iter().position(|x| *x == s) {
        Some(i) => i,
        None => {
            v.push(s);
            v.len() - 1
        }
    };
    let mut lines: Vec<Line> = Vec::new();
    for c in run.cases.iter().filter(|c| c.workload == Workload::Stream) {
        // A point needs a size on the log axis and a finite rate (an imported or
        // hand-edited record may carry neither).
        let Some(m) = c.median_bytes_per_sec.filter(|m| *m > 0.0 && m.is_finite()) else {
            continue;
        };
        if c.block_size == 0 {
            continue;
        }
        let (l, w, p) = named(c);
        let i = match lines.iter().position(|x| x.label == l) {
            Some(i) => i,
            None => {
                lines.push(Line {
                    label: l,
                    color: index(&mut whats, w),
                    stroke: index(&mut places, p),
                    points: Vec::new(),
                    band: Vec::new(),
                });
                lines.len() - 1
            }
        };
        lines[i].points.push((c.block_size, m / 1e6));
        if let (Some(lo), Some(hi)) = (c.min_bytes_per_sec, c.max_bytes_per_sec) {
            if lo > 0.0 && hi.is_finite() && lo <= hi {
                lines[i].band.push((c.block_size, lo / 1e6, hi / 1e6));
            }
        }
    }
    for l in &mut lines {
        l.points.sort_by_key(|p| p.0);
        l.band.sort_by_key(|p| p.0);
    }
    lines
}

/// The chart's title: what, where.
pub fn title(run: &RunRecord) -> String {
    format!(
        "MB/s against block size — {} (Linux {})",
        run.machine.hostname, run.machine.kernel
    )
}

/// The legend's entries: each line's label, colour and stroke.
fn legend(lines: &[Line]) -> Vec<(String, RGBAColor, Stroke)> {
    lines
        .iter()
        .map(|l| (l.label.clone(), color(l.color), stroke(l.stroke)))
        .collect()
}

/// A line's points in `st`'s stroke: solid or dashed.
pub(crate) fn draw_path<DB: DrawingBackend, CT: plotters::coord::CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    pts: &[CT::From],
    col: RGBAColor,
    st: Stroke,
) -> DrawResult<DB::ErrorType>
where
    CT::From: Clone + 'static,
{
    match st.dash {
        None => area.draw(&PathElement::new(pts.to_vec(), col.stroke_width(2))),
        Some((dash, gap)) => {
            for e in DashedLineSeries::new(pts.to_vec(), dash, gap, col.stroke_width(2)) {
                area.draw(&e)?;
            }
            Ok(())
        }
    }
}

/// A point's marker around `at`: filled, or `hollow` (a figure on few samples).
pub(crate) fn draw_mark<DB: DrawingBackend, CT: plotters::coord::CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    at: CT::From,
    col: RGBAColor,
    mark: Mark,
    hollow: bool,
) -> DrawResult<DB::ErrorType>
where
    CT::From: Clone + 'static,
{
    let style = if hollow {
        col.stroke_width(2)
    } else {
        col.filled()
    };
    match mark {
        Mark::Circle if hollow => {
            for c in super::ring::ring(at, 4, 2, &col) {
                area.draw(&c)?;
            }
            Ok(())
        }
        Mark::Circle => area.draw(&Circle::new(at, 4, style)),
        Mark::Diamond if hollow => {
            let edge = vec![(0, -6), (6, 0), (0, 6), (-6, 0), (0, -6)];
            area.draw(&(EmptyElement::at(at) + PathElement::new(edge, style)))
        }
        Mark::Diamond => {
            let edge = vec![(0, -6), (6, 0), (0, 6), (-6, 0)];
            area.draw(&(EmptyElement::at(at) + Polygon::new(edge, style)))
        }
        Mark::Triangle => area.draw(&TriangleMarker::new(at, 6, style)),
        Mark::Cross => area.draw(&Cross::new(at, 5, col.stroke_width(2))),
    }
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    run: &RunRecord,
) -> DrawResult<DB::ErrorType> {
    let lines = throughput_lines(run);
    fonts();
    root.fill(&WHITE)?;
    let root = legend_styled(root, &legend(&lines))?;
    if lines.is_empty() {
        root.draw(&Text::new(
            "no case in this run moved any data",
            (40, 40),
            (FAMILY, 20).into_font(),
        ))?;
        return root.present();
    }
    let sizes = lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
    let (lo, hi) = sizes.fold((u64::MAX, 0), |(a, b), s| (a.min(s), b.max(s)));
    let (x0, x1) = (
        (lo as f64).log2().floor(),
        (hi as f64)
            .log2()
            .ceil()
            .max((lo as f64).log2().floor() + 1.0),
    );
    let rates = lines.iter().flat_map(|l| {
        l.points
            .iter()
            .map(|p| p.1)
            .chain(l.band.iter().flat_map(|b| [b.1, b.2]))
    });
    let (ymin, ymax) = rates.fold((f64::MAX, 0f64), |(a, b), r| (a.min(r), b.max(r)));
    // Whole decades around the data, so the log axis has labelled ticks.
    let (y0, y1) = (
        10f64.powf(ymin.log10().floor()),
        10f64
            .powf(ymax.log10().ceil())
            .max(10f64.powf(ymin.log10().floor() + 1.0)),
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(title(run), (FAMILY, 22).into_font())
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(Log2Axis(x0, x1), (y0..y1).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("block size (log₂)")
        .y_desc("MB/s (10⁶ bytes/s, log)")
        .label_style((FAMILY, 14).into_font())
        .axis_desc_style((FAMILY, 16).into_font())
        .x_labels(16)
        .y_label_formatter(&|y| ticks::value(*y))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    // The bands first, all of them, so no band covers another line.
    for l in &lines {
        let color = color(l.color);
        // The series' min–max as a band behind the median line (a single size:
        // a bar at that size).
        if l.band.len() > 1 {
            let mut poly: Vec<(f64, f64)> =
                l.band.iter().map(|b| ((b.0 as f64).log2(), b.2)).collect();
            poly.extend(l.band.iter().rev().map(|b| ((b.0 as f64).log2(), b.1)));
            chart.draw_series(std::iter::once(Polygon::new(
                poly,
                color.mix(0.14).filled(),
            )))?;
        } else if let Some(b) = l.band.first() {
            let x = (b.0 as f64).log2();
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, b.1), (x, b.2)],
                color.mix(0.5).stroke_width(6),
            )))?;
        }
    }
    let area = chart.plotting_area();
    for l in &lines {
        let (col, st) = (color(l.color), stroke(l.stroke));
        let pts: Vec<(f64, f64)> = l
            .points
            .iter()
            .map(|&(s, m)| ((s as f64).log2(), m))
            .collect();
        draw_path(area, &pts, col, st)?;
        for &p in &pts {
            draw_mark(area, p, col, st.marker, false)?;
        }
    }
    // What the colours and strokes are (where placements differ) and the bands,
    // either side of the axis title.
    if lines.iter().any(|l| l.stroke != 0) {
        root.draw(&Text::new(
            "colour: mechanism and mode; stroke and marker: placement",
            (16, SIZE.1 as i32 - 24),
            (FAMILY, 13).into_font(),
        ))?;
    }
    root.draw(&Text::new(
        "line: median of the series; band: their min–max",
        (SIZE.0 as i32 - 330, SIZE.1 as i32 - 24),
        (FAMILY, 13).into_font(),
    ))?;
    root.present()
}

/// The throughput chart as an SVG document.
pub fn throughput_svg(run: &RunRecord) -> Result<String, String> {
    let mut out = String::new();
    {
        let size = size_with_legend(throughput_lines(run).len());
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        draw(root, run).map_err(|e| format!("cannot draw the chart: {e}"))?;
    }
    Ok(out)
}

/// The throughput chart as a PNG file at `path`.
pub fn throughput_png(run: &RunRecord, path: &Path) -> Result<(), String> {
    let size = size_with_legend(throughput_lines(run).len());
    png::write(path, size, |root| {
        draw(root, run).map_err(|e| e.to_string())
    })
}
