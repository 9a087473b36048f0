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

#[cfg(test)]
mod tests {
    use super::super::{compare, counters, moderated, view, History, Verdict};
    use crate::testdata;

    /// The summary counts cases; the note of rows that could not tell counts rows,
    /// counters' among them, and says how many of each, so the two agree.
    #[test]
    fn the_rows_that_could_not_tell_say_whose_they_are() {
        let a = testdata::run();
        let b = testdata::run();
        let mut rows = compare(&a, &b, 0.05);
        let mut counter = rows[0].clone();
        counter.case = format!("{} · switches/msg", counter.case);
        counter.unit = counters::SWITCHES;
        for r in rows.iter_mut().chain([&mut counter]) {
            r.verdict = Verdict::CouldNotTell;
        }
        let cases = rows.len();
        rows.push(counter);
        let model = moderated::fit(&History::new());
        let v = view::view_of_rows("1", &[a], "2", &b, 0.05, &model, (&rows, None));
        let notes: Vec<&String> = v.tables.iter().flat_map(|t| &t.notes).collect();
        let want = format!(
            "{} rows could not tell a 5% change ({cases} of cases' figures, 1 of per-message \
             counters)",
            cases + 1
        );
        assert!(
            notes.iter().any(|n| n.contains(&want)),
            "{want}\n{notes:#?}"
        );
        assert!(
            v.heading.contains(&format!("{cases} could not tell")),
            "{}",
            v.heading
        );
    }

    /// A counter's row says fewer or more of it, a case's faster or slower: a
    /// switches/msg row called "FASTER" read as if the switches had sped up.
    #[test]
    fn a_counter_row_is_fewer_or_more_not_faster() {
        let a = testdata::run();
        let b = testdata::run();
        let mut rows = compare(&a, &b, 0.05);
        let base = rows[0].clone();
        let mut extra = Vec::new();
        for (unit, verdict) in [
            (counters::SWITCHES, Verdict::Faster),
            (counters::SWITCHES, Verdict::Slower),
            (counters::CPU_PER_MSG, Verdict::Faster),
            (counters::CPU_PER_MSG, Verdict::Slower),
        ] {
            let mut r = base.clone();
            r.case = format!("{} · {unit}", base.case);
            r.unit = unit;
            r.verdict = verdict;
            extra.push(r);
        }
        rows[0].verdict = Verdict::Faster;
        rows.truncate(1);
        rows.extend(extra);
        let model = moderated::fit(&History::new());
        let v = view::view_of_rows("1", &[a], "2", &b, 0.05, &model, (&rows, None));
        let t = &v.tables[0];
        let col = t.header.iter().position(|h| h == "change").unwrap();
        let marks: Vec<&str> = t.rows.iter().map(|r| r[col].as_str()).collect();
        assert_eq!(marks, ["FASTER", "FEWER", "MORE", "LESS", "MORE"], "{t:?}");
    }
}
