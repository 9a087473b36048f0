//! How B moved as a whole: the median over a placement's cases (all on one CPU,
//! or all across two) of how much slower each ran in B than in A's runs, beside
//! how much the history's runs move as a whole. A row is a test of one case
//! against its own spread; it cannot tell a machine that moved from a change.
//! This says when the cases moved together, so that a reader (or a gate) can
//! tell the machine's move from a case's.

use ipcperf_core::record::RunRecord;

use super::runs::{across, median_of};
use super::{figure, key, stats};

/// The fewest cases of a placement that make a median worth naming.
pub const WHOLE_CASES: usize = 8;

/// The fewest runs of history whose moves as a whole say how far a run strays.
pub const WHOLE_RUNS: usize = 3;

/// How the cases of one placement moved together from A to B.
#[derive(Debug, Clone, PartialEq)]
pub struct Whole {
    /// The cases ran across two CPUs (else on one).
    pub across: bool,
    /// How many cases the median is over.
    pub cases: usize,
    /// The median over those cases of ln(B's time / A's): positive is slower
    /// (a throughput or rate that fell, a latency that rose).
    pub slower_log: f64,
    /// The standard deviation of the history's runs' own moves as a whole (the
    /// same median, each run against the history's mean), and how many runs.
    pub history: Option<(f64, usize)>,
    /// How many runs A is.
    pub k: usize,
    /// The standard error of the median by the scatter of the cases' own moves
    /// (1.2533 · 1.4826 · their MAD / √cases): the least the median can be
    /// known to, whatever the history says (a floor where its runs agree more
    /// than the cases could, as copies of one run do).
    pub cases_se: f64,
    /// B's move as a whole is beyond what the history's runs do
    /// (`t_{runs−1}` at two-sided 0.05 over the placements shown, against
    /// the larger of `sd·√(1 + 1/k)` and [`Whole::cases_se`]).
    pub beyond: bool,
}

impl Whole {
    /// B's move as a fraction: 0.13 = 13% slower, −0.05 = 5% faster.
    pub fn slower(&self) -> f64 {
        self.slower_log.exp() - 1.0
    }

    /// One line: "the 28 cases on one CPU ran 13.0% slower in B than in A (…)".
    pub fn line(&self) -> String {
        let s = self.slower();
        let way = if s >= 0.0 { "slower" } else { "faster" };
        let place = if self.across {
            "across two CPUs"
        } else {
            "on one CPU"
        };
        let a = if self.k > 1 {
            format!("the mean of A's {} runs", self.k)
        } else {
            "A".to_string()
        };
        let said = match self.history {
            None => {
                format!(
                    "no history of {WHOLE_RUNS} runs or more of B's host, kernel and CPU model \
                     says how much a run moves as a whole"
                )
            }
            Some((sd, runs)) if self.beyond => format!(
                "beyond the {:.1}% the history's {runs} runs move as a whole: the machine, or \
                 everything, changed, and a row called here may have moved with it",
                sd * 100.0
            ),
            Some((sd, runs)) => format!(
                "within the {:.1}% the history's {runs} runs move as a whole",
                sd * 100.0
            ),
        };
        format!(
            "As a whole, the {} cases {place} ran {:.1}% {way} in B than in {a} (the median \
             over them); {said}.",
            self.cases,
            s.abs() * 100.0
        )
    }
}

/// A case's log figure oriented so that larger is slower.
fn slow_log(c: &ipcperf_core::record::CaseRecord) -> Option<f64> {
    let m = median_of(c)?;
    (m > 0.0).then(|| {
        if figure(c).lower_better {
            m.ln()
        } else {
            -m.ln()
        }
    })
}

/// Each case of `run` by key: (across two CPUs, its log figure, larger slower).
fn logs(run: &RunRecord) -> std::collections::HashMap<String, (bool, f64)> {
    run.cases
        .iter()
        .filter(|c| c.pairs.is_none())
        .filter_map(|c| Some((key(c), (across(c), slow_log(c)?))))
        .collect()
}

/// B's move as a whole against `baseline` (A's runs, A first), one per
/// placement with [`WHOLE_CASES`] cases or more in B and every run of A,
/// beside `history`'s runs' own moves (the runs the row spreads come from).
pub fn whole_run(history: &[RunRecord], baseline: &[RunRecord], b: &RunRecord) -> Vec<Whole> {
    let lb = logs(b);
    let la: Vec<_> = baseline.iter().map(logs).collect();
    let lh: Vec<_> = history.iter().map(logs).collect();
    let k = baseline.len();
    let mut out = Vec::new();
    for side in [false, true] {
        // Cases of this placement in B and in every run of A.
        let mut keys: Vec<&String> = lb
            .iter()
            .filter(|(key, (ac, _))| *ac == side && la.iter().all(|a| a.contains_key(*key)))
            .map(|(key, _)| key)
            .collect();
        keys.sort();
        if keys.len() < WHOLE_CASES || k == 0 {
            continue;
        }
        let moved: Vec<f64> = keys
            .iter()
            .map(|key| lb[*key].1 - la.iter().map(|a| a[*key].1).sum::<f64>() / k as f64)
            .collect();
        let Some(slower_log) = ipcperf_core::stats::median(&moved) else {
            continue;
        };
        let dev: Vec<f64> = moved.iter().map(|m| (m - slower_log).abs()).collect();
        let mad = 1.4826 * ipcperf_core::stats::median(&dev).unwrap_or(0.0);
        let cases_se = (std::f64::consts::PI / 2.0).sqrt() * mad / (moved.len() as f64).sqrt();
        let history = history_moves(&lh, &keys);
        out.push(Whole {
            across: side,
            cases: keys.len(),
            slower_log,
            history,
            k,
            cases_se,
            beyond: false,
        });
    }
    let shown = out.len().max(1) as f64;
    for w in &mut out {
        if let Some((sd, runs)) = w.history {
            let t = stats::t_critical((runs - 1) as f64, super::ALPHA / shown);
            let se = (sd * (1.0 + 1.0 / w.k as f64).sqrt()).max(w.cases_se);
            w.beyond = w.slower_log.abs() > t * se;
        }
    }
    out
}

/// The standard deviation over the history's runs of each run's move as a whole
/// (the median over `keys` of its log against the mean over the runs that hold
/// every key), and how many runs; None under [`WHOLE_RUNS`].
fn history_moves(
    lh: &[std::collections::HashMap<String, (bool, f64)>],
    keys: &[&String],
) -> Option<(f64, usize)> {
    let full: Vec<_> = lh
        .iter()
        .filter(|h| keys.iter().all(|k| h.contains_key(*k)))
        .collect();
    if full.len() < WHOLE_RUNS {
        return None;
    }
    let n = full.len() as f64;
    let centre: Vec<f64> = keys
        .iter()
        .map(|k| full.iter().map(|h| h[*k].1).sum::<f64>() / n)
        .collect();
    let levels: Vec<f64> = full
        .iter()
        .filter_map(|h| {
            let d: Vec<f64> = keys.iter().zip(&centre).map(|(k, c)| h[*k].1 - c).collect();
            ipcperf_core::stats::median(&d)
        })
        .collect();
    use statrs::statistics::Statistics;
    Some((levels.std_dev(), full.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;
    use ipcperf_core::mode::Mode;

    /// A run of 10 cases on one CPU (0..10) and 10 across (10..20), case i's
    /// MB/s its own level times `factor(i)`.
    fn run_by(factor: impl Fn(usize) -> f64) -> RunRecord {
        let mut r = testdata::run();
        r.cases = (0..20)
            .map(|i| {
                let place = if i < 10 { "same-cpu" } else { "cross-cpu" };
                let m = 100.0 * (1.0 + i as f64) * factor(i);
                testdata::case(
                    "pipe",
                    Mode::Processes,
                    64 << i,
                    place,
                    &[m, m * 1.01, m * 0.99],
                )
            })
            .collect();
        r
    }

    /// Each case on one CPU at `one`, across at `two`, case `slow` (if any)
    /// divided by `by`.
    fn run(one: f64, two: f64, slow: Option<usize>, by: f64) -> RunRecord {
        run_by(|i| {
            let f = if i < 10 { one } else { two };
            if slow == Some(i) {
                f / by
            } else {
                f
            }
        })
    }

    /// Twelve runs whose cases move together by about 2% (sd) on one CPU and
    /// 1% across.
    fn history() -> Vec<RunRecord> {
        let z = [
            -1.5, -1.0, -0.6, -0.3, 0.0, 0.2, 0.4, 0.6, 0.9, 1.2, -0.4, 0.5,
        ];
        z.iter()
            .map(|z: &f64| run((0.02 * z).exp(), (0.01 * -z).exp(), None, 1.0))
            .collect()
    }

    #[test]
    fn a_machine_that_moved_is_named_and_one_case_is_not() {
        let h = history();
        let a = vec![h[11].clone(), h[10].clone(), h[9].clone()];
        // Everything on one CPU 15% slower (MB/s down): beyond a 2% history.
        let b = run(1.0 / 1.15, 1.0, None, 1.0);
        let w = whole_run(&h, &a, &b);
        assert_eq!(w.len(), 2, "{w:?}");
        let one = w.iter().find(|w| !w.across).unwrap();
        assert_eq!(one.cases, 10);
        assert_eq!(one.k, 3);
        let (sd, runs) = one.history.unwrap();
        assert_eq!(runs, 12);
        assert!(sd > 0.01 && sd < 0.03, "{one:?}");
        assert!(one.beyond, "{one:?}");
        assert!(one.slower() > 0.10 && one.slower() < 0.20, "{one:?}");
        assert!(one.line().contains("slower") && one.line().contains("machine"));
        let two = w.iter().find(|w| w.across).unwrap();
        assert!(!two.beyond && two.slower().abs() < 0.03, "{two:?}");
        // One case 30% slower: the median does not follow it.
        let b = run(1.0, 1.0, Some(3), 1.3);
        for w in whole_run(&h, &a, &b) {
            assert!(!w.beyond && w.slower().abs() < 0.03, "{w:?}");
            assert!(w.line().contains("within"), "{}", w.line());
        }
    }

    /// Each case on one CPU `shift` slower in log (MB/s divided by e^shift),
    /// give or take its own 5% or so; those across as they were.
    fn scattered(shift: f64) -> RunRecord {
        let z = [-1.2, 0.8, -0.5, 1.5, 0.1, -0.9, 1.1, -0.2, 0.6, -1.4];
        run_by(|i| {
            if i < 10 {
                (-shift - 0.05 * z[i]).exp()
            } else {
                1.0
            }
        })
    }

    #[test]
    fn a_history_of_copies_does_not_make_every_move_beyond() {
        // Six identical runs: their moves as a whole have no spread at all.
        let h: Vec<RunRecord> = (0..6).map(|_| run(1.0, 1.0, None, 1.0)).collect();
        let w = whole_run(&h, &h[..1], &scattered(0.01));
        let one = w.iter().find(|w| !w.across).unwrap();
        assert_eq!(one.history.unwrap().0, 0.0, "{one:?}");
        // The cases scatter by about 5% each, so their median is known to
        // about 2%: a 1% move is within it.
        assert!(one.cases_se > 0.01 && one.cases_se < 0.04, "{one:?}");
        assert!(!one.beyond, "{one:?}");
        // 30% is beyond both.
        let w = whole_run(&h, &h[..1], &scattered(0.3));
        let one = w.iter().find(|w| !w.across).unwrap();
        assert!(one.beyond && one.slower() > 0.25, "{one:?}");
    }

    #[test]
    fn too_few_cases_or_runs_say_so() {
        let h = history();
        let mut b = run(1.2, 1.0, None, 1.0);
        b.cases.truncate(5);
        assert!(whole_run(&h, &h[..1], &b).is_empty());
        let b = run(1.2, 1.0, None, 1.0);
        let w = whole_run(&h[..2], &h[..1], &b);
        assert!(w.iter().all(|w| w.history.is_none() && !w.beyond), "{w:?}");
        // 20% more MB/s is faster.
        let one = w.iter().find(|w| !w.across).unwrap();
        assert!(one.slower() < -0.15, "{one:?}");
        assert!(one.line().contains("faster") && one.line().contains("no history"));
    }
}
