//! How much a case moves from one run to the next: its medians in earlier runs
//! of the same host, kernel and CPU model (the history), moderated across the
//! cases (see [`super::moderated`]), and a row judged again against that spread
//! where it is wider than the series' own, or where A is several runs.

use ipcperf_core::record::RunRecord;
use ipcperf_core::stats::spread;

use super::moderated::RunSpread;
use super::{fmt_p, key, settle, smallest_change, stats, Row, Verdict, ALPHA};

/// Earlier runs of the same cases on the same host, kernel and CPU model: each
/// case's (by [`key`]) median figure in each of those runs.
pub type History = std::collections::HashMap<String, Vec<f64>>;

/// The history of `runs` (earlier runs of the same host, kernel and CPU model):
/// each case's median figure in each run it ran in.
pub fn history_of(runs: &[RunRecord]) -> History {
    let mut h = History::new();
    for r in runs {
        for c in &r.cases {
            if let Some(m) = median_of(c) {
                h.entry(key(c)).or_default().push(m);
            }
        }
    }
    h
}

/// Each case's [`super::moderated::Traits`] over `runs` (as [`history_of`]
/// takes them): whether its sides ran on two CPUs, and the mean over the runs
/// of how far its median moves within a run by its series alone.
pub fn traits_of(runs: &[RunRecord]) -> super::moderated::CaseTraits {
    let mut within: std::collections::HashMap<String, (bool, Vec<f64>)> = Default::default();
    for r in runs {
        for c in &r.cases {
            if median_of(c).is_none() {
                continue;
            }
            let entry = within.entry(key(c)).or_insert((across(c), Vec::new()));
            if let Some(v) = median_var(&super::figure(c).values) {
                entry.1.push(v);
            }
        }
    }
    within
        .into_iter()
        .map(|(k, (across, v))| {
            let within_var = if v.is_empty() {
                0.0
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            };
            (k, super::moderated::Traits { across, within_var })
        })
        .collect()
}

/// Whether a case's sides ran on two CPUs (or were not pinned, and may have):
/// the placement by which run-to-run spreads and whole-run moves are grouped.
pub(super) fn across(c: &ipcperf_core::record::CaseRecord) -> bool {
    let p = &c.placement;
    p.writer_cpu.is_none() || p.writer_cpu != p.reader_cpu
}

/// The variance of the median of the logs of `xs` by their spread alone,
/// robustly: (1.4826·MAD)² · π/2 / n (a median's variance against the mean's
/// σ²/n; the MAD so that a lone wild series does not make a case look loud).
/// None under three values or with a value not positive.
pub(crate) fn median_var(xs: &[f64]) -> Option<f64> {
    if xs.len() < 3 || xs.iter().any(|x| *x <= 0.0 || !x.is_finite()) {
        return None;
    }
    let (_, mad) = ipcperf_core::stats::log_median_mad(xs)?;
    Some(mad * mad * std::f64::consts::FRAC_PI_2 / xs.len() as f64)
}

/// A case's median figure in its run, if it ran.
pub(super) fn median_of(c: &ipcperf_core::record::CaseRecord) -> Option<f64> {
    if c.status != ipcperf_core::record::CaseStatus::Ok {
        return None;
    }
    spread(&super::figure(c).values).map(|s| s.median)
}

/// The median time a case's series took (None: no series).
fn series_ns(c: &ipcperf_core::record::CaseRecord) -> Option<f64> {
    let t: Vec<f64> = c.series.iter().map(|s| s.elapsed_ns as f64).collect();
    spread(&t).map(|s| s.median)
}

/// Leave out of earlier runs `runs` each case measured unlike B's same case:
/// series over ten times longer or shorter (`-n 5` beside the default 500 ms),
/// whose figure is another measurement (a 64 B pipe across CPUs: 0.09 MB/s in
/// five blocks, 130 MB/s in half a second), and which made the run-to-run
/// spread 240% and "could call ±5251164931805%". Cases B has not are kept.
pub fn keep_like(runs: &mut [RunRecord], b: &RunRecord) {
    let b_ns: std::collections::HashMap<String, f64> = b
        .cases
        .iter()
        .filter_map(|c| Some((key(c), series_ns(c)?)))
        .collect();
    for r in runs {
        r.cases.retain(|c| match (b_ns.get(&key(c)), series_ns(c)) {
            (Some(&want), Some(got)) if want > 0.0 && got > 0.0 => {
                (got / want).max(want / got) <= 10.0
            }
            _ => true,
        });
    }
}

/// Whether two runs are of one host, kernel and CPU model (the runs whose
/// history can say how much a figure moves from run to run).
pub fn same_machine(a: &RunRecord, b: &RunRecord) -> bool {
    a.machine.host() == b.machine.host()
        && a.machine.kernel == b.machine.kernel
        && a.machine.cpu_model == b.machine.cpu_model
}

/// Whether run `r` measured a case of `a` (a baseline run that shares none is
/// no baseline: `--baseline-runs` counted a matrix or a replay as one of A's).
pub fn shares_a_case(a: &RunRecord, r: &RunRecord) -> bool {
    let keys: Vec<String> = a.cases.iter().map(key).collect();
    r.cases.iter().any(|c| keys.contains(&key(c)))
}

/// The runs of history a case needs before its run-to-run spread is used alone
/// (with a prior fitted over the cases, two do).
pub const HISTORY_RUNS: usize = super::moderated::ALONE_RUNS;

/// A row judged again against the run-to-run spread `runs` of its case, B's
/// median against the geometric mean of `baseline` (the case's median in each
/// of A's runs, A first). The difference of B's log median and the mean of k
/// runs' varies by √(1 + 1/k) times one run's spread. Used in place of the
/// series' own error whatever their sizes: the spread of a run's median over
/// runs holds what its series say of it and what moves between runs (a median
/// of bimodal series can move far less from run to run than its series spread).
pub(super) fn across_runs(row: Row, baseline: &[f64], runs: RunSpread, min_change: f64) -> Row {
    let k = baseline.iter().filter(|v| **v > 0.0).count();
    let (Some(b), Some(_)) = (row.b, row.se_df) else {
        return row;
    };
    if k == 0 || b <= 0.0 {
        return row;
    }
    let mut r = row;
    r.runs = Some((runs.sd, k));
    let se = runs.var.sqrt() * (1.0 + 1.0 / k as f64).sqrt();
    let shrunk = if runs.df.is_finite() && runs.runs as f64 - 1.0 >= runs.df {
        String::new()
    } else {
        " moderated over the cases".to_string()
    };
    let mean_log = baseline
        .iter()
        .filter(|v| **v > 0.0)
        .map(|v| v.ln())
        .sum::<f64>()
        / k as f64;
    let ratio = (b.ln() - mean_log).exp();
    let df = runs.df.min(1e6);
    let t = ratio.ln().abs() / se;
    let p = stats::two_sided_t(t, df);
    let half = stats::t_critical(df, ALPHA) * se;
    r.a = Some(mean_log.exp());
    r.ratio = Some(ratio);
    r.p = Some(p);
    r.se_df = Some((se, df));
    r.interval = Some(((ratio.ln() - half).exp(), (ratio.ln() + half).exp()));
    r.detectable = Some(smallest_change(se, df, 1, min_change));
    let against = if k == 1 {
        String::new()
    } else {
        format!(" B against the mean of {k} runs of A,")
    };
    let runs_said = format!(
        "{against} run-to-run spread {:.1}% over {} runs{shrunk} ({:.0} degrees of freedom)",
        runs.sd * 100.0,
        runs.runs,
        df
    );
    let beyond = ratio.ln().abs() > (1.0 + min_change).ln() + 1e-12;
    if p <= ALPHA && beyond {
        let better = (ratio > 1.0) != r.lower_better;
        r.verdict = if better {
            Verdict::Faster
        } else {
            Verdict::Slower
        };
        r.why = format!(
            "p = {}:{runs_said}, beyond the {:.0}% threshold",
            fmt_p(p),
            min_change * 100.0
        );
        r
    } else if p <= ALPHA {
        r.verdict = Verdict::Unchanged;
        r.why = format!(
            "p = {}:{runs_said}, but under the {:.0}% threshold",
            fmt_p(p),
            min_change * 100.0
        );
        r
    } else {
        r.verdict = Verdict::Unchanged;
        r.why = format!("within the noise: p = {}:{runs_said}", fmt_p(p));
        settle(r, min_change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;
    use ipcperf_core::mode::Mode;

    /// An earlier run's case whose series were ten times shorter than B's
    /// (`-n 5` beside the default) is no history of B's case; one like B's, or
    /// one B has not, is.
    #[test]
    fn a_case_measured_unlike_b_s_is_no_history_of_it() {
        let case = |mech: &str, ms: u64| {
            let mut c = testdata::case(mech, Mode::Processes, 64, "shared-l3", &[100.0; 3]);
            for s in &mut c.series {
                s.elapsed_ns = ms * 1_000_000;
            }
            c
        };
        let mut b = testdata::run();
        b.cases = vec![case("pipe", 500), case("unix", 500)];
        let mut earlier = testdata::run();
        earlier.cases = vec![case("pipe", 2), case("unix", 400), case("tcp", 3)];
        let mut runs = vec![earlier];
        keep_like(&mut runs, &b);
        let kept: Vec<&str> = runs[0].cases.iter().map(|c| c.mechanism.as_str()).collect();
        assert_eq!(kept, ["unix", "tcp"]);
        let h = history_of(&runs);
        assert!(!h.contains_key(&key(&b.cases[0])));
        assert!(h.contains_key(&key(&b.cases[1])));
    }
}
