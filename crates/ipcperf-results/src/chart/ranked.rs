//! A latency chart of many cases: one row a case, fastest p50 at the top, a
//! dot at its p50, a bar to its p99 and a ring at its p99.9, each row named
//! beside it. Percentile lines of an advise run (57 cases, every wait and idle)
//! were a tangle in colours that repeat past ten, matched to a legend of 57.

use plotters::prelude::*;

use super::{fmt_ns_tick, fonts, size_with_legend, LatencyLine, FAMILY, SIZE};
use ipcperf_core::latency::FEW_BEYOND;
use ipcperf_core::record::RunRecord;

/// Past this many cases the percentile chart is drawn as rows.
pub(crate) const MAX_LINES: usize = 12;

/// Pixels a row, and what the plot needs above and below its rows.
const ROW: u32 = 18;
const FRAME: u32 = 150;
/// The most room the names take, left of the plot (7 pixels a character, and
/// a margin: short names, their common parts in the title, take less).
const NAMES: u32 = 440;
/// A name longer than this many characters is cut (with …).
const NAME_CHARS: usize = 64;

pub(crate) fn size(rows: usize) -> (u32, u32) {
    (SIZE.0, FRAME + ROW * rows as u32)
}

type DrawResult<E> = Result<(), DrawingAreaErrorKind<E>>;

/// A line's figure at percentile `q`, if it has one.
fn at(l: &LatencyLine, q: f64) -> Option<f64> {
    l.points
        .iter()
        .position(|p| (p.0 - q).abs() < 1e-9)
        .map(|i| l.points[i].1)
}

/// Whether the figure at percentile `q` rests on fewer than FEW_BEYOND samples.
fn thin(l: &LatencyLine, q: f64) -> bool {
    l.points
        .iter()
        .position(|p| (p.0 - q).abs() < 1e-9)
        .is_some_and(|i| l.thin.get(i).copied().unwrap_or(false))
}

/// The lines in the order drawn, top to bottom: by p50, fastest first.
pub(crate) fn ranked(lines: &[LatencyLine]) -> Vec<&LatencyLine> {
    let mut v: Vec<&LatencyLine> = lines.iter().filter(|l| at(l, 0.5).is_some()).collect();
    v.sort_by(|a, b| {
        at(a, 0.5)
            .unwrap_or(0.0)
            .total_cmp(&at(b, 0.5).unwrap_or(0.0))
    });
    v
}

fn short(name: &str) -> String {
    if name.chars().count() <= NAME_CHARS {
        name.to_string()
    } else {
        let mut s: String = name.chars().take(NAME_CHARS - 1).collect();
        s.push('…');
        s
    }
}

pub(crate) fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    lines: &[LatencyLine],
) -> DrawResult<DB::ErrorType> {
    fonts();
    root.fill(&WHITE)?;
    let rows = ranked(lines);
    let n = rows.len().max(1);
    let figures = rows.iter().flat_map(|l| l.points.iter().map(|p| p.1));
    let (lo, hi) = figures.fold((f64::MAX, 0f64), |(a, b), v| (a.min(v), b.max(v)));
    let (lo, hi) = if lo.is_finite() && lo > 0.0 {
        (
            10f64.powf(lo.log10().floor()),
            10f64
                .powf(hi.log10().ceil())
                .max(10f64.powf(lo.log10().floor() + 1.0)),
        )
    } else {
        (1.0, 10.0)
    };
    // The title over the whole image: over the plot alone, right of the
    // names, it ran off the image's edge.
    let area = root.titled(title, (FAMILY, 22).into_font())?;
    let longest = rows.iter().map(|l| short(&l.label).chars().count()).max();
    let names = (32 + 7 * longest.unwrap_or(0) as u32).clamp(120, NAMES);
    let mut chart = ChartBuilder::on(&area)
        .margin(16)
        .margin_bottom(40)
        // Room for the last tick's label, centred on the axis's end.
        .margin_right(36)
        .margin_left(names)
        .x_label_area_size(48)
        .build_cartesian_2d((lo..hi).log_scale(), -0.5..(n as f64 - 0.5))?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .disable_y_axis()
        .x_desc("round trip (log): dot p50, bar to p99, ring p99.9")
        .label_style((FAMILY, 14).into_font())
        .axis_desc_style((FAMILY, 16).into_font())
        .x_label_formatter(&|x| fmt_ns_tick(*x))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    let ink = super::color(0);
    let mut any_thin = false;
    for (i, l) in rows.iter().enumerate() {
        // The fastest at the top.
        let y = (n - 1 - i) as f64;
        let Some(p50) = at(l, 0.5) else { continue };
        if let Some(p99) = at(l, 0.99) {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(p50, y), (p99, y)],
                ink.stroke_width(2),
            )))?;
        }
        chart.draw_series(std::iter::once(Circle::new((p50, y), 4, ink.filled())))?;
        if let Some(p999) = at(l, 0.999) {
            let hollow = thin(l, 0.999);
            any_thin |= hollow;
            let (color, width) = if hollow { (ink.mix(0.5), 1) } else { (ink, 2) };
            chart.draw_series(super::ring::ring((p999, y), 5, width, &color))?;
        }
        let (_, py) = chart.backend_coord(&(lo, y));
        root.draw(&Text::new(
            short(&l.label),
            (16, py - 7),
            (FAMILY, 13).into_font(),
        ))?;
    }
    if any_thin {
        let h = root.dim_in_pixel().1 as i32;
        root.draw(&Text::new(
            format!("faint ring: fewer than {FEW_BEYOND} samples beyond its p99.9"),
            (16, h - 24),
            (FAMILY, 13).into_font(),
        ))?;
    }
    root.present()
}

/// Percentile lines for a few cases; past [`MAX_LINES`], a row each.
pub(crate) fn latency_size(lines: &[LatencyLine]) -> (u32, u32) {
    if lines.len() > MAX_LINES {
        size(lines.len())
    } else {
        size_with_legend(lines.len())
    }
}

pub(crate) fn draw_any_latency<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    run: &RunRecord,
    lines: &[LatencyLine],
) -> DrawResult<DB::ErrorType> {
    // What every line shares is said once, in the title.
    let parts: Vec<Vec<String>> = lines.iter().map(|l| l.parts.clone()).collect();
    let (shared, short) = super::labels::shorten(&parts);
    let lines: Vec<LatencyLine> = lines
        .iter()
        .zip(short)
        .map(|(l, label)| LatencyLine { label, ..l.clone() })
        .collect();
    if lines.len() > MAX_LINES {
        let title = format!(
            "{} — {} (Linux {})",
            super::labels::titled("Round trips, fastest p50 first", &shared),
            run.machine.hostname,
            run.machine.kernel
        );
        draw(root, &title, &lines)
    } else {
        super::draw_latency(root, run, &lines, &shared)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::svg_text::texts;

    fn line(label: &str, p50: f64) -> LatencyLine {
        LatencyLine::new(
            vec![label.into()],
            vec![(0.5, p50), (0.99, p50 * 3.0), (0.999, p50 * 9.0)],
            vec![false, false, true],
        )
    }

    /// Every case named once, on its row, fastest first; none in a legend of
    /// colours that repeat.
    #[test]
    fn many_cases_are_rows_fastest_first() {
        let lines: Vec<LatencyLine> = (0..20)
            .map(|i| line(&format!("case {i:02}"), 1_000.0 * (20 - i) as f64))
            .collect();
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, size(lines.len())).into_drawing_area();
            draw(root, "t", &lines).unwrap();
        }
        let names: Vec<String> = texts(&svg)
            .into_iter()
            .filter(|t| t.starts_with("case "))
            .collect();
        let want: Vec<String> = (0..20).rev().map(|i| format!("case {i:02}")).collect();
        assert_eq!(names, want);
        assert!(svg.contains("fewer than 10 samples beyond its p99.9"));
        // One colour: the rows are told apart by their names.
        assert_eq!(svg.matches("stroke=\"#FF7F0E\"").count(), 0);
        let long = "x".repeat(100);
        assert_eq!(short(&long).chars().count(), NAME_CHARS);
    }
}
