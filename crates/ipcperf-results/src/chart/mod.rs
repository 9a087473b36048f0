//! Charts of a run (plotters): MB/s against block size on a log₂ axis, one line
//! per mechanism, mode and placement. SVG (text, for files and the HTML report)
//! or PNG. Text is drawn with the DejaVu Sans font compiled into the binary, so
//! nothing depends on the fonts installed on the machine.

pub mod ab;
pub mod heatmap;
mod labels;
pub mod matrix_table;
pub mod png;
mod ranked;
pub mod replay;
mod ring;
#[cfg(test)]
mod svg_text;
mod throughput;
mod ticks;
pub mod trend;
pub use throughput::{
    stroke, throughput_lines, throughput_png, throughput_svg, title, Line, Mark, Stroke,
};
pub mod xy;

use std::path::Path;
use std::sync::Once;

use ipcperf_core::latency::FEW_BEYOND;
use ipcperf_core::record::RunRecord;
use ipcperf_core::workload::Workload;
use std::ops::Range;

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use crate::units::fmt_size;

/// DejaVu Sans (fonts-dejavu-core; free licence, see assets/DejaVuSans.LICENSE).
static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
pub(crate) const FAMILY: &str = "sans-serif";

pub(crate) fn fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is ours and known good; a failure here would be a build defect.
        if register_font(FAMILY, FontStyle::Normal, FONT).is_err() {
            crate::errln!("ipcperf: warning: the bundled font did not load; charts will lack text");
        }
    });
}

/// A block-size axis: values are log₂(bytes); ticks at whole powers of two,
/// labelled in B, KiB, MiB.
struct Log2Axis(f64, f64);

impl Ranged for Log2Axis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = (v - self.0) / (self.1 - self.0);
        limit.0 + (f * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if !(self.0.is_finite() && self.1.is_finite()) {
            return Vec::new();
        }
        let (lo, hi) = (self.0.ceil() as i64, self.1.floor() as i64);
        let n = (hi - lo + 1).max(1) as usize;
        let step = n.div_ceil(hint.max_num_points().max(1)).max(1);
        (lo..=hi).step_by(step).map(|e| e as f64).collect()
    }

    fn range(&self) -> Range<f64> {
        self.0..self.1
    }
}

impl ValueFormatter<f64> for Log2Axis {
    fn format(v: &f64) -> String {
        fmt_size(2f64.powf(*v).round() as u64)
    }
}

/// Line colours: Tableau 10 (distinct, readable on white), then Palette99.
pub(crate) fn color(i: usize) -> RGBAColor {
    const T10: [(u8, u8, u8); 10] = [
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
    match T10.get(i) {
        Some(&(r, g, b)) => RGBColor(r, g, b).to_rgba(),
        None => Palette99::pick(i).to_rgba(),
    }
}

type DrawResult<E> = Result<(), DrawingAreaErrorKind<E>>;

/// A percentile axis in "nines": x = −log10(1 − p), so p50, p90, p99, p99.9 and
/// p99.99 are evenly spaced and the tail gets the room it deserves.
struct NinesAxis(f64, f64);

/// The percentiles a latency chart can show, as (label, fraction).
pub const PERCENTILES: [(&str, f64); 5] = [
    ("p50", 0.5),
    ("p90", 0.9),
    ("p99", 0.99),
    ("p99.9", 0.999),
    ("p99.99", 0.9999),
];

fn nines(p: f64) -> f64 {
    -(1.0 - p).log10()
}

impl Ranged for NinesAxis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        Log2Axis(self.0, self.1).map(v, limit)
    }

    fn key_points<H: KeyPointHint>(&self, _hint: H) -> Vec<f64> {
        PERCENTILES
            .iter()
            .map(|p| nines(p.1))
            .filter(|x| *x >= self.0 - 1e-9 && *x <= self.1 + 1e-9)
            .collect()
    }

    fn range(&self) -> Range<f64> {
        self.0..self.1
    }
}

impl ValueFormatter<f64> for NinesAxis {
    fn format(v: &f64) -> String {
        PERCENTILES
            .iter()
            .find(|p| (nines(p.1) - v).abs() < 1e-6)
            .map(|p| p.0.to_string())
            .unwrap_or_default()
    }
}

/// One latency curve: (percentile as a fraction, nanoseconds), by percentile.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyLine {
    pub label: String,
    /// The label's parts (mechanism, mode, size, place, …): what every line
    /// of a chart shares goes to its title ([`labels::shorten`]).
    pub parts: Vec<String>,
    pub points: Vec<(f64, f64)>,
    /// For each point, whether fewer than [`FEW_BEYOND`] samples lie beyond it
    /// (the tables mark such a figure †): drawn hollow, its line dashed.
    pub thin: Vec<bool>,
    /// Which of `parts` is the placement: the lines of a mechanism share a
    /// colour and those of a placement a marker ([`latency_styles`]).
    pub place: Option<usize>,
}

impl LatencyLine {
    /// A line labelled by its parts (an empty one left out).
    pub fn new(parts: Vec<String>, points: Vec<(f64, f64)>, thin: Vec<bool>) -> LatencyLine {
        let (_, label) = labels::shorten(std::slice::from_ref(&parts));
        LatencyLine {
            label: label.into_iter().next().unwrap_or_default(),
            parts,
            points,
            thin,
            place: None,
        }
    }

    /// The line with its placement at `parts[i]`.
    pub fn placed_at(self, i: usize) -> LatencyLine {
        LatencyLine {
            place: Some(i),
            ..self
        }
    }
}

/// Each line's (colour, marker) index: a colour per mechanism, mode, size and
/// the rest (every part but the placement), a marker per placement, each in the
/// order first met. Lines of one placement are as before: a colour each, circles.
pub fn latency_styles(lines: &[LatencyLine]) -> Vec<(usize, usize)> {
    let (mut whats, mut places) = (Vec::<Vec<&String>>::new(), Vec::<Option<&String>>::new());
    let mut v = Vec::new();
    for l in lines {
        let place = l.place.and_then(|i| l.parts.get(i));
        let what: Vec<&String> = (0..l.parts.len())
            .filter(|&i| Some(i) != l.place)
            .map(|i| &l.parts[i])
            .collect();
        let c = whats.iter().position(|y| *y == what).unwrap_or_else(|| {
            whats.push(what);
            whats.len() - 1
        });
        let m = places.iter().position(|y| *y == place).unwrap_or_else(|| {
            places.push(place);
            places.len() - 1
        });
        v.push((c, m));
    }
    v
}

/// The points of `pts` (percentile, ns) above zero, each with whether it
/// rests on fewer than [`FEW_BEYOND`] samples beyond it (by `beyond`, None in
/// a record without the counts: firm, as the tables take it). A zero (below
/// the clock's resolution once its cost is taken off) cannot sit on a log
/// axis: it is left out, not bent to fit.
fn percentile_points(
    pts: &[(f64, u64)],
    beyond: Option<ipcperf_core::latency::Beyond>,
) -> (Vec<(f64, f64)>, Vec<bool>) {
    pts.iter()
        .filter(|p| p.1 > 0)
        .map(|&(p, ns)| {
            let name = PERCENTILES
                .iter()
                .find(|q| (q.1 - p).abs() < 1e-12)
                .map_or("", |q| q.0);
            let thin = beyond
                .and_then(|b| b.at(name))
                .is_some_and(|n| n < FEW_BEYOND);
            ((p, ns as f64), thin)
        })
        .unzip()
}

/// Latency percentile curves of a run: round trips (p50 to p99.99, one per
/// mechanism, mode, size and placement) and the sync workload's set/clear
/// latencies (p50 to p99.9, one per primitive, mode and placement).
pub fn latency_lines(run: &RunRecord) -> Vec<LatencyLine> {
    let mut v = Vec::new();
    let round_trips = run
        .cases
        .iter()
        .filter(|c| c.workload == Workload::RoundTrip);
    let mixed = crate::export::cells::idle_mixed(round_trips);
    // Round trips (the latency workload): p50 to p99.99 from the full histogram's summary.
    for c in &run.cases {
        let Some(l) = &c.latency else { continue };
        // A replay's latencies are one way, from when due: its own timeline.
        if l.round_trips == 0 || c.workload == Workload::Replay {
            continue;
        }
        let pts = [
            (0.5, l.p50_ns),
            (0.9, l.p90_ns),
            (0.99, l.p99_ns),
            (0.999, l.p999_ns),
            (0.9999, l.p9999_ns),
        ];
        let (points, thin) = percentile_points(&pts, l.beyond());
        let rate = crate::export::latency::offered(c)
            .map(|r| {
                let behind = crate::export::latency::saturated(c) == Some(true);
                format!(
                    "at {}/s{}",
                    crate::units::fmt_rate(r as f64),
                    if behind { " (saturated)" } else { "" }
                )
            })
            .unwrap_or_default();
        v.push(
            LatencyLine::new(
                vec![
                    crate::export::view::mechanism_label(c),
                    c.mode.name().into(),
                    fmt_size(c.block_size),
                    crate::export::cells::place(c, mixed),
                    rate,
                ],
                points,
                thin,
            )
            .placed_at(3),
        );
    }
    for c in &run.cases {
        let Some(l) = c.sync.as_ref().and_then(|s| s.set_clear_latency.as_ref()) else {
            continue;
        };
        if l.samples == 0 {
            continue;
        }
        let pts = [
            (0.5, l.p50_ns),
            (0.9, l.p90_ns),
            (0.99, l.p99_ns),
            (0.999, l.p999_ns),
        ];
        let (points, thin) = percentile_points(&pts, l.beyond);
        v.push(
            LatencyLine::new(
                vec![
                    c.mechanism.clone(),
                    c.mode.name().into(),
                    c.placement.shown(),
                    "set/clear".into(),
                ],
                points,
                thin,
            )
            .placed_at(2),
        );
    }
    v.retain(|l| !l.points.is_empty());
    v
}

pub(crate) fn draw_latency<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    run: &RunRecord,
    lines: &[LatencyLine],
    shared: &str,
) -> DrawResult<DB::ErrorType> {
    let styles = latency_styles(lines);
    fonts();
    root.fill(&WHITE)?;
    let entries: Vec<_> = lines
        .iter()
        .zip(&styles)
        .map(|(l, &(c, m))| (l.label.clone(), color(c), solid(m)))
        .collect();
    let root = legend_styled(root, &entries)?;
    let xs = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| nines(p.0)));
    let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let (x0, x1) = (x0.min(nines(0.5)), x1.max(nines(0.999)));
    let ns = lines.iter().flat_map(|l| l.points.iter().map(|p| p.1));
    let (lo, hi) = ns.fold((f64::MAX, 0f64), |(a, b), v| (a.min(v), b.max(v)));
    let (y0, y1) = (
        10f64.powf(lo.log10().floor()),
        10f64
            .powf(hi.log10().ceil())
            .max(10f64.powf(lo.log10().floor() + 1.0)),
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "{} — {} (Linux {})",
                labels::titled("Latency percentiles", shared),
                run.machine.hostname,
                run.machine.kernel
            ),
            (FAMILY, 22).into_font(),
        )
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(NinesAxis(x0 - 0.1, x1 + 0.1), (y0..y1).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("percentile")
        .y_desc("latency (log)")
        .label_style((FAMILY, 14).into_font())
        .axis_desc_style((FAMILY, 16).into_font())
        .y_label_formatter(&|y| fmt_ns_tick(*y))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for (l, &(c, m)) in lines.iter().zip(&styles) {
        let (color, mark) = (color(c), solid(m).marker);
        let pts: Vec<(f64, f64)> = l.points.iter().map(|&(p, v)| (nines(p), v)).collect();
        let thin = |j: usize| l.thin.get(j).copied().unwrap_or(false);
        // Solid up to the last firm point; from there, dashed to the thin ones
        // (a figure resting on a handful of samples, as the tables mark †).
        let firm = (0..pts.len()).take_while(|&j| !thin(j)).count();
        chart.draw_series(LineSeries::new(pts[..firm].to_vec(), color.stroke_width(2)))?;
        if firm < pts.len() {
            let from = firm.saturating_sub(1);
            chart.draw_series(DashedLineSeries::new(
                pts[from..].to_vec(),
                6,
                5,
                color.stroke_width(2),
            ))?;
        }
        for (j, &p) in pts.iter().enumerate() {
            throughput::draw_mark(chart.plotting_area(), p, color, mark, thin(j))?;
        }
    }
    if lines.iter().any(|l| l.thin.contains(&true)) {
        root.draw(&Text::new(
            format!("hollow, dashed: fewer than {FEW_BEYOND} samples beyond"),
            (SIZE.0 as i32 - 300, SIZE.1 as i32 - 24),
            (FAMILY, 13).into_font(),
        ))?;
    }
    root.present()
}

/// The latency chart as an SVG document; None when the run has no latency figures.
pub fn latency_svg(run: &RunRecord) -> Option<Result<String, String>> {
    let lines = latency_lines(run);
    if lines.is_empty() {
        return None;
    }
    let mut out = String::new();
    let r = {
        let root =
            SVGBackend::with_string(&mut out, ranked::latency_size(&lines)).into_drawing_area();
        ranked::draw_any_latency(root, run, &lines)
            .map_err(|e| format!("cannot draw the chart: {e}"))
    };
    Some(r.map(|()| out))
}

/// The latency chart as a PNG file; None when the run has no latency figures.
pub fn latency_png(run: &RunRecord, path: &Path) -> Option<Result<(), String>> {
    let lines = latency_lines(run);
    if lines.is_empty() {
        return None;
    }
    Some(png::write(path, ranked::latency_size(&lines), |root| {
        ranked::draw_any_latency(root, run, &lines).map_err(|e| e.to_string())
    }))
}

/// A placement's stroke with its dash left out: solid, its marker alone
/// telling it (a latency line's dash says its figures rest on few samples).
fn solid(i: usize) -> Stroke {
    Stroke {
        dash: None,
        ..stroke(i)
    }
}

/// Chart size in pixels (the plot itself; a legend below adds to the height).
pub const SIZE: (u32, u32) = (1000, 640);

/// Height of one legend row, and how many entries share a row.
const LEGEND_ROW: u32 = 20;
const LEGEND_COLUMNS: usize = 2;

/// The whole image's size for a chart with `entries` legend entries below it:
/// the legend never covers data, however many lines there are.
pub fn size_with_legend(entries: usize) -> (u32, u32) {
    let rows = entries.div_ceil(LEGEND_COLUMNS) as u32;
    (
        SIZE.0,
        SIZE.1 + rows * LEGEND_ROW + if rows > 0 { 12 } else { 0 },
    )
}

/// Split `root` into the plot (above) and its legend (below), and draw the
/// legend: a line of each entry's colour, then its label, in columns.
/// A white canvas with a legend below it of `labels`, each in its line's
/// colour (the `i`th label in `color(i)`): how every line chart starts.
pub(crate) fn canvas_with_legend<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    labels: impl IntoIterator<Item = String>,
) -> Result<DrawingArea<DB, plotters::coord::Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    fonts();
    root.fill(&WHITE)?;
    let entries: Vec<(String, RGBAColor)> = labels
        .into_iter()
        .enumerate()
        .map(|(i, l)| (l, color(i)))
        .collect();
    legend_below(root, &entries)
}

pub(crate) fn legend_below<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    entries: &[(String, RGBAColor)],
) -> Result<DrawingArea<DB, plotters::coord::Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    let solid = stroke(0);
    let styled: Vec<_> = entries
        .iter()
        .map(|(l, c)| (l.clone(), *c, solid))
        .collect();
    legend_styled(root, &styled)
}

/// [`legend_below`] with each entry's own stroke: its swatch dashed and marked
/// as its line is.
pub(crate) fn legend_styled<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    entries: &[(String, RGBAColor, Stroke)],
) -> Result<DrawingArea<DB, plotters::coord::Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    if entries.is_empty() {
        return Ok(root);
    }
    let (top, bottom) = root.split_vertically(SIZE.1);
    let col_w = (SIZE.0 as i32 - 40) / LEGEND_COLUMNS as i32;
    // Lines of several strokes show theirs, marker and all; lines of one, a bar.
    let marked = entries.iter().any(|e| e.2 != entries[0].2);
    for (i, (label, c, st)) in entries.iter().enumerate() {
        let (row, col) = ((i / LEGEND_COLUMNS) as i32, (i % LEGEND_COLUMNS) as i32);
        let (x, y) = (20 + col * col_w, 6 + row * LEGEND_ROW as i32);
        let text_x = if marked {
            throughput::draw_path(&bottom, &[(x, y + 8), (x + 42, y + 8)], *c, *st)?;
            throughput::draw_mark(&bottom, (x + 21, y + 8), *c, st.marker, false)?;
            x + 50
        } else {
            bottom.draw(&PathElement::new(
                vec![(x, y + 8), (x + 24, y + 8)],
                c.stroke_width(3),
            ))?;
            x + 32
        };
        // Long labels are cut to their column, never drawn over the next one.
        let max_chars = ((col_w - 8 - (text_x - x)) * 10 / 68).max(10) as usize;
        let text: String = if label.chars().count() > max_chars {
            let mut t: String = label.chars().take(max_chars - 1).collect();
            t.push('…');
            t
        } else {
            label.clone()
        };
        bottom.draw(&Text::new(text, (text_x, y), (FAMILY, 13).into_font()))?;
    }
    Ok(top)
}

/// Nanoseconds as a time on a log axis: 100 ns, 10 µs, 1 ms, 1 s.
pub(crate) fn fmt_ns_tick(v: f64) -> String {
    let (x, unit) = if v >= 1e9 {
        (v / 1e9, "s")
    } else if v >= 1e6 {
        (v / 1e6, "ms")
    } else if v >= 1e3 {
        (v / 1e3, "µs")
    } else {
        (v, "ns")
    };
    format!("{} {unit}", ticks::figures(x))
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
