//! The per-message counters in a comparison: context switches and CPU time per
//! message (both sides together), a row each where both runs counted them,
//! judged as a case is on its series, in a family of their own (judging them
//! never makes a case harder to call) and never gated: a change in switches per
//! message is often the *why* of a change in latency, not a regression itself.

use ipcperf_core::record::{CaseRecord, SeriesRecord};

use super::parts::shown_row;
use super::{judge, shown, spread, Figure, Row};

/// The unit of a row of context switches per message.
pub const SWITCHES: &str = "switches/msg";
/// The unit of a row of CPU time per message (the values in ns).
pub const CPU_PER_MSG: &str = "CPU µs/msg";

/// Both sides' context switches per message in one series (None: not counted).
fn switches(s: &SeriesRecord) -> Option<f64> {
    let w = s.writer_counts?.switches();
    let r = s.reader_counts.map_or(0, |c| c.switches());
    Some((w + r) as f64 / s.blocks as f64)
}

/// Both sides' CPU time per message in one series, ns.
fn cpu(s: &SeriesRecord) -> Option<f64> {
    s.writer_counts?;
    let r = s.reader_counts.and(s.reader_cpu_ns).unwrap_or(0);
    Some((s.writer_cpu_ns + r) as f64 / s.blocks as f64)
}

/// Two counted cases: a row for switches and one for CPU time per message.
pub(super) fn counter_rows(a: &CaseRecord, b: &CaseRecord, min_change: f64) -> Vec<Row> {
    let values = |c: &CaseRecord, f: fn(&SeriesRecord) -> Option<f64>| -> Vec<f64> {
        c.series
            .iter()
            .filter(|s| s.blocks > 0)
            .filter_map(f)
            .collect()
    };
    let mut rows = Vec::new();
    for (unit, f) in [
        (SWITCHES, switches as fn(&SeriesRecord) -> Option<f64>),
        (CPU_PER_MSG, cpu),
    ] {
        let (va, vb) = (values(a, f), values(b, f));
        if va.is_empty() || vb.is_empty() {
            continue;
        }
        let case = format!("{} · {unit}", shown(a, b));
        // A ratio of logarithms needs figures above 0: a spinning ring makes
        // no switch at all, and no change of nothing can be judged.
        if va.len() >= 2 && vb.len() >= 2 && va.iter().chain(&vb).all(|&v| v > 0.0) {
            let fig = |values| Figure {
                values,
                lower_better: true,
            };
            rows.push(judge(case, unit, &fig(va), &fig(vb), min_change));
        } else {
            let median = |v: &[f64]| spread(v).map(|s| s.median);
            rows.push(shown_row(
                case,
                unit,
                (median(&va), median(&vb)),
                "fewer than two series a side, or a series at 0: the change is shown, not \
                 judged",
            ));
        }
    }
    rows
}

/// Whether a row is a counter's.
pub fn is_counter(r: &Row) -> bool {
    r.unit == SWITCHES || r.unit == CPU_PER_MSG
}
