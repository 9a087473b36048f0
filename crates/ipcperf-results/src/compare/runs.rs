//! How much a case moves from one run to the next: its medians in earlier runs
//! of the same host, kernel and CPU model (the history), and a row judged again
//! against that spread where it is wider than the series' own.

use ipcperf_core::record::RunRecord;
use ipcperf_core::stats::spread;

use super::{figure, fmt_p, key, settle, smallest_change, stats, Row, Verdict, ALPHA};

/// Earlier runs of the same cases on the same host, kernel and CPU model: each
/// case's (by [`key`]) median figure in each of those runs.
pub type History = std::collections::HashMap<String, Vec<f64>>;

/// The history of `runs` (earlier runs of the same host, kernel and CPU model):
/// each case's median figure in each run it ran in.
pub fn history_of(runs: &[RunRecord]) -> History {
    let mut h = History::new();
    for r in runs {
        for c in &r.cases {
            if c.status != ipcperf_core::record::CaseStatus::Ok {
                continue;
            }
            if let Some(s) = spread(&figure(c).values) {
                h.entry(key(c)).or_default().push(s.median);
            }
        }
    }
    h
}

/// Whether two runs are of one host, kernel and CPU model (the runs whose
/// history can say how much a figure moves from run to run).
pub fn same_machine(a: &RunRecord, b: &RunRecord) -> bool {
    a.machine.host() == b.machine.host()
        && a.machine.kernel == b.machine.kernel
        && a.machine.cpu_model == b.machine.cpu_model
}

/// The runs of history a case needs before its run-to-run spread is used.
pub const HISTORY_RUNS: usize = 3;

/// A row judged again against the run-to-run spread of `history` (the case's
/// median in each earlier run): the difference of two runs' log medians varies
/// by √2 times the spread of one run's, with the earlier runs' count less one
/// degrees of freedom. Used where that is wider than the series' own error.
pub(super) fn across_runs(row: Row, history: &[f64], min_change: f64) -> Row {
    let (Some(ratio), Some((se, _))) = (row.ratio, row.se_df) else {
        return row;
    };
    let logs: Vec<f64> = history
        .iter()
        .filter(|v| **v > 0.0)
        .map(|v| v.ln())
        .collect();
    if logs.len() < HISTORY_RUNS || ratio <= 0.0 {
        return row;
    }
    let n = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / n;
    let sd = (logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let se_runs = sd * std::f64::consts::SQRT_2;
    if se_runs <= se {
        let mut r = row;
        r.why.push_str(&format!(
            "; {} earlier runs move less than the series",
            logs.len()
        ));
        return r;
    }
    let df = n - 1.0;
    let t = ratio.ln().abs() / se_runs;
    let p = stats::two_sided_t(t, df);
    let mut r = row;
    r.p = Some(p);
    r.se_df = Some((se_runs, df));
    r.detectable = Some(smallest_change(se_runs, df, 1, min_change));
    let beyond = ratio.ln().abs() > (1.0 + min_change).ln() + 1e-12;
    let excluded = r.interval.is_some_and(|(lo, hi)| lo > 1.0 || hi < 1.0);
    let runs = format!(
        "against the run-to-run spread of {} earlier runs ({:.1}%)",
        logs.len(),
        sd * 100.0
    );
    if p <= ALPHA && beyond && excluded {
        let better = (ratio > 1.0) != r.lower_better;
        r.verdict = if better {
            Verdict::Faster
        } else {
            Verdict::Slower
        };
        r.why = format!(
            "p = {} {runs}, beyond the {:.0}% threshold",
            fmt_p(p),
            min_change * 100.0
        );
        r
    } else {
        r.verdict = Verdict::Unchanged;
        r.why = format!("within the noise: p = {} {runs}", fmt_p(p));
        settle(r, min_change)
    }
}
