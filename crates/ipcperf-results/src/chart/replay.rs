//! A replay's timeline: each mechanism's message latency against time in the
//! trace (the median of each stretch as a line, its 99th percentile as a thin
//! one, on a log axis), with a red mark above each stretch where sends went more
//! than 1 ms late: where that mechanism fell behind.

use std::path::Path;

use ipcperf_core::record::{CaseRecord, RunRecord};
use ipcperf_core::workload::Workload;
use plotters::prelude::*;

use crate::chart::{canvas_with_legend, color, fmt_ns_tick, size_with_legend, FAMILY};
use crate::export::cells::mechanism_label;
use crate::fail::Fail;

type DrawResult<E> = Result<(), DrawingAreaErrorKind<E>>;

/// `-o FILE`: a .png or a .svg.
pub fn check_path(p: &Path) -> Result<(), Fail> {
    let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
    if matches!(ext, "png" | "svg") {
        Ok(())
    } else {
        Err(Fail::usage(format!(
            "--output {}: name a .png or .svg file",
            p.display()
        )))
    }
}

fn cases(run: &RunRecord) -> Vec<&CaseRecord> {
    run.cases
        .iter()
        .filter(|c| c.workload == Workload::Replay && c.is_ok() && c.replay.is_some())
        .collect()
}

/// A case's name in parts: mechanism, mode, placement.
fn parts(c: &CaseRecord) -> Vec<String> {
    vec![
        mechanism_label(c),
        c.mode.name().to_string(),
        c.placement.shown(),
    ]
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    run: &RunRecord,
) -> DrawResult<DB::ErrorType> {
    let cs = cases(run);
    // What every case shares is said once, in the title; the legend names the rest.
    let (shared, names) = super::labels::shorten(&cs.iter().map(|c| parts(c)).collect::<Vec<_>>());
    let root = canvas_with_legend(root, names)?;
    let bins = |c: &CaseRecord| {
        c.replay
            .as_ref()
            .map(|r| r.timeline.clone())
            .unwrap_or_default()
    };
    let x_hi = cs
        .iter()
        .flat_map(|c| bins(c).last().map(|b| b.to_ns as f64 / 1e9))
        .fold(0.0f64, f64::max)
        .max(1e-6);
    let (mut y_lo, mut y_hi) = (f64::MAX, 0.0f64);
    for c in &cs {
        for b in bins(c).iter().filter(|b| b.messages > 0) {
            y_lo = y_lo.min(b.p50_ns as f64);
            y_hi = y_hi.max(b.p99_ns as f64);
        }
    }
    if y_hi <= 0.0 {
        (y_lo, y_hi) = (100.0, 1e6);
    }
    let (y_lo, (y_hi, bar_y)) = ((y_lo / 2.0).max(10.0), bar_rows(y_hi, cs.len()));
    let source = cs
        .first()
        .and_then(|c| c.replay.as_ref())
        .map(|r| r.source.clone())
        .unwrap_or_default();
    let mut chart = ChartBuilder::on(&root)
        .caption(
            super::labels::titled(
                &format!("Replay of {source}: latency against time in the trace"),
                &shared,
            ),
            (FAMILY, 20).into_font(),
        )
        .margin(16)
        .margin_right(40)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..x_hi, (y_lo..y_hi).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("time in the trace, s")
        .y_desc("message latency from when due (p50 thick, p99 thin)")
        .label_style((FAMILY, 14).into_font())
        .axis_desc_style((FAMILY, 15).into_font())
        .y_label_formatter(&|y| fmt_ns_tick(*y))
        .x_label_formatter(&|x| format!("{x:.2}"))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    chart.draw_series(std::iter::once(Text::new(
        "bars at the top: stretches with sends over 1 ms late (behind)",
        (x_hi * 0.01, y_hi / 1.1),
        (FAMILY, 13).into_font().color(&RED),
    )))?;
    for (i, c) in cs.iter().enumerate() {
        let col = color(i);
        let b = bins(c);
        let mid = |x: &ipcperf_core::record::TimelineBin| (x.from_ns + x.to_ns) as f64 / 2e9;
        let seen: Vec<_> = b.iter().filter(|x| x.messages > 0).collect();
        chart.draw_series(LineSeries::new(
            seen.iter().map(|x| (mid(x), x.p50_ns.max(1) as f64)),
            col.stroke_width(3),
        ))?;
        chart.draw_series(LineSeries::new(
            seen.iter().map(|x| (mid(x), x.p99_ns.max(1) as f64)),
            col.mix(0.6).stroke_width(1),
        ))?;
        // Behind: a bar in its colour over the stretch, one row per mechanism.
        let y = bar_y[i];
        for x in b.iter().filter(|x| x.late > 0) {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x.from_ns as f64 / 1e9, y), (x.to_ns as f64 / 1e9, y)],
                col.stroke_width(6),
            )))?;
        }
    }
    root.present()
}

/// The top of the latency axis over data reaching `data_hi` with `n` rows of
/// "behind" bars above it, and each row's height: every row clear of the data
/// (above 1.5× its highest p99; the rows sat within it past two mechanisms, a
/// p99 peak drawn through them) and of the note at the top.
fn bar_rows(data_hi: f64, n: usize) -> (f64, Vec<f64>) {
    let top = data_hi * 1.5 * 1.3f64.powi(n as i32 + 1);
    (
        top,
        (0..n).map(|i| top / 1.3f64.powi(i as i32 + 2)).collect(),
    )
}

/// The timeline as an SVG document (None: the run replayed nothing).
pub fn svg(run: &RunRecord) -> Option<Result<String, String>> {
    let n = cases(run).len();
    if n == 0 {
        return None;
    }
    let mut out = String::new();
    let r = {
        let root = SVGBackend::with_string(&mut out, size_with_legend(n)).into_drawing_area();
        draw(root, run).map_err(|e| format!("cannot draw the chart: {e}"))
    };
    Some(r.map(|()| out))
}

/// Draw the timeline of `run`'s replay cases to `path` (.png or .svg).
pub fn write(run: &RunRecord, path: &Path) -> Result<(), Fail> {
    let n = cases(run).len();
    if n == 0 {
        return Err(Fail::failure(format!(
            "no replay case ran: nothing to draw in {}",
            path.display()
        )));
    }
    let size = size_with_legend(n);
    let r = if path.extension().and_then(|e| e.to_str()) == Some("svg") {
        let out = svg(run)
            .unwrap_or_else(|| Ok(String::new()))
            .map_err(Fail::failure)?;
        std::fs::write(path, out).map_err(|e| format!("cannot write {}: {e}", path.display()))
    } else {
        super::png::write(path, size, |root| {
            draw(root, run).map_err(|e| e.to_string())
        })
    };
    r.map_err(Fail::failure)
}

#[cfg(test)]
mod tests {
    use super::bar_rows;

    #[test]
    fn behind_bars_sit_above_the_data_and_below_the_note() {
        for n in 1..=8 {
            let (top, rows) = bar_rows(3e6, n);
            assert_eq!(rows.len(), n);
            assert!(
                rows.iter().all(|&y| y >= 3e6 * 1.5 * 0.999),
                "{n}: {rows:?}"
            );
            assert!(rows.iter().all(|&y| y < top / 1.1), "{n}: {rows:?}");
            assert!(rows.windows(2).all(|w| w[0] > w[1]), "{rows:?}");
        }
    }
}
