//! A trend's newest run against the host's own runs before it: the nightly
//! question "did last night move?", answered the day it ran, where a step needs
//! three runs after it. Judged as `compare` judges B against the mean of A's
//! runs on their history: each case's run-to-run spread over the runs before
//! the newest (since the case's last step, of the newest's kernel and CPU
//! model, the newest 30), moderated over every case those runs measured
//! (empirical Bayes, [`crate::compare::moderated`]), Holm over the cases judged.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::compare::moderated::{self, CaseTraits, Traits};
use crate::compare::stats::{step_down_cutoff, t_critical, two_sided_t};
use crate::compare::{History, ALPHA};
use crate::store::CaseFigures;

use super::TrendPoint;

/// The runs before the newest a case's spread is taken over, at most (as
/// `compare`'s history).
const EARLIER_RUNS: usize = 30;

/// A case's newest run against its runs before it.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Newest {
    /// How many runs before it it was judged against (0: none to judge by).
    pub earlier_runs: usize,
    /// Its median over the geometric mean of theirs.
    pub ratio: Option<f64>,
    /// The case's own run-to-run standard deviation of its log median over
    /// those runs (what the limit is computed from), and the one it was judged
    /// by (moderated over the cases where a prior was fitted) with its degrees
    /// of freedom.
    pub sd: Option<f64>,
    pub judged_sd: Option<f64>,
    pub df: Option<f64>,
    pub p: Option<f64>,
    /// The smallest change it could have called, and the limit for its spread:
    /// e^(z·sd·√(1 + 1/k)) − 1 among the cases judged, at least the threshold.
    pub could_call: Option<f64>,
    pub limit: Option<f64>,
    /// `slower`, `faster`, `unchanged`, `could not tell` or `not judged`.
    pub verdict: String,
    pub why: String,
}

/// The machine a run was measured on: its host, kernel and CPU model.
type Machine<'a> = (&'a str, &'a str, &'a str);

/// Each case's newest point in `points` (of each host) judged against the runs
/// before it; `all`: every case of the hosts' runs (their spreads lend the
/// prior). `min_change`: the threshold.
pub fn judge(points: &mut [TrendPoint], all: &[CaseFigures], min_change: f64) {
    let machine: HashMap<i64, Machine> = all
        .iter()
        .map(|f| {
            (
                f.run_id,
                (f.host.as_str(), f.kernel.as_str(), f.cpu_model.as_str()),
            )
        })
        .collect();
    let mut groups: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (i, p) in points.iter().enumerate() {
        groups
            .entry((p.case.clone(), p.host.clone()))
            .or_default()
            .push(i);
    }
    // (point, spread, k, ratio, t) of each case judged.
    let mut judged: Vec<(usize, moderated::RunSpread, usize, f64, f64)> = Vec::new();
    for ((case, _), idx) in groups {
        let Some((&last, before)) = idx.split_last() else {
            continue;
        };
        let (newest_run, newest_median) = (points[last].run_id, points[last].median);
        let Some(&here) = machine.get(&newest_run) else {
            continue;
        };
        // Since its last step (the step's run is the first of its segment).
        let from = before
            .iter()
            .rposition(|&i| points[i].change.step)
            .unwrap_or(0);
        let earlier: Vec<usize> = before[from..]
            .iter()
            .copied()
            .filter(|&i| machine.get(&points[i].run_id) == Some(&here))
            .collect();
        let earlier = &earlier[earlier.len().saturating_sub(EARLIER_RUNS)..];
        let runs: HashSet<i64> = earlier.iter().map(|&i| points[i].run_id).collect();
        let (history, traits) = history_of(all, &runs);
        let model = moderated::fit_with(&history, &traits);
        let medians: Vec<f64> = earlier
            .iter()
            .map(|&i| points[i].median)
            .filter(|m| *m > 0.0)
            .collect();
        let k = medians.len();
        let spread = model
            .spread(&case)
            .filter(|_| newest_median > 0.0 && k >= 2);
        let Some(spread) = spread else {
            let why = format!(
                "{k} run{} before it since its last step, of its kernel and CPU model: \
                 too few to know its spread (it takes {})",
                if k == 1 { "" } else { "s" },
                if model.prior.is_some() {
                    2
                } else {
                    moderated::ALONE_RUNS
                }
            );
            points[last].newest = Some(Newest {
                earlier_runs: k,
                verdict: "not judged".into(),
                why,
                ..Newest::default()
            });
            continue;
        };
        let mean_log = medians.iter().map(|m| m.ln()).sum::<f64>() / k as f64;
        let ratio = (newest_median.ln() - mean_log).exp();
        let se = spread.var.sqrt() * (1.0 + 1.0 / k as f64).sqrt();
        judged.push((last, spread, k, ratio, ratio.ln() / se));
    }
    // Holm over the cases judged: a lone move among them must reach 0.05 / m.
    let m = judged.len();
    let ps: Vec<f64> = judged
        .iter()
        .map(|j| two_sided_t(j.4, j.1.df.min(1e6)))
        .collect();
    let cutoff = step_down_cutoff(ps.clone(), ALPHA);
    for ((at, spread, k, ratio, _), p) in judged.into_iter().zip(ps) {
        let lower_better = points[at].lower_better;
        let df = spread.df.min(1e6);
        let se = spread.var.sqrt() * (1.0 + 1.0 / k as f64).sqrt();
        let could = ((t_critical(df, ALPHA / m as f64) * se).exp() - 1.0).max(min_change);
        let limit = moderated::limit(spread.sd, k, m, min_change);
        let beyond = ratio.ln().abs() > (1.0 + min_change).ln() + 1e-12;
        let verdict = if p <= cutoff && beyond {
            if (ratio > 1.0) != lower_better {
                "faster"
            } else {
                "slower"
            }
        } else if could <= min_change + 1e-12 || p <= cutoff {
            "unchanged"
        } else {
            "could not tell"
        };
        points[at].newest = Some(Newest {
            earlier_runs: k,
            ratio: Some(ratio),
            sd: Some(spread.sd),
            judged_sd: Some(spread.var.sqrt()),
            df: Some(df),
            p: Some(p),
            could_call: Some(could),
            limit: Some(limit),
            verdict: verdict.into(),
            why: format!(
                "{ratio:.2}× the mean of its {k} runs before, run to run {:.1}%{} ({df:.0} degrees \
                 of freedom), p {}, could call {:.1}% (limit {:.1}%, over {m} case{})",
                spread.sd * 100.0,
                if spread.runs as f64 - 1.0 >= df {
                    ""
                } else {
                    " moderated over the cases"
                },
                super::fmt_p(p),
                could * 100.0,
                limit * 100.0,
                if m == 1 { "" } else { "s" }
            ),
        });
    }
}

/// Each case's median in each of `runs` (of `all`), and its traits: whether
/// its sides ran on two CPUs, and how far its median moves within a run.
fn history_of(all: &[CaseFigures], runs: &HashSet<i64>) -> (History, CaseTraits) {
    let mut history = History::new();
    let mut within: HashMap<&str, Vec<f64>> = HashMap::new();
    for f in all.iter().filter(|f| runs.contains(&f.run_id)) {
        let Some(m) = ipcperf_core::stats::median(&f.values).filter(|m| *m > 0.0) else {
            continue;
        };
        history.entry(f.key.clone()).or_default().push(m);
        if let Some(v) = crate::compare::runs::median_var(&f.values) {
            within.entry(&f.key).or_default().push(v);
        }
    }
    let traits = history
        .keys()
        .map(|k| {
            let v = within.get(k.as_str()).map_or(&[][..], Vec::as_slice);
            let within_var = if v.is_empty() {
                0.0
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            };
            // A case on one CPU says so in its placement; any other (two
            // CPUs, or unpinned and so maybe two) is across.
            let across = !k.split(' ').any(|w| w == "same-cpu");
            (k.clone(), Traits { across, within_var })
        })
        .collect();
    (history, traits)
}
