//! Each case net of its run's move as a whole. The cases of one run share some
//! of their move from the last: on a VM whose host is busier, every case on one
//! CPU runs a few percent slower at once. That shared part, the median over a
//! placement's cases of how far each strays from its mean over the history (see
//! [`super::whole`]), is taken off each case whose own history it makes
//! quieter, so a row is judged on what is its own. Where B as a whole moved
//! beyond what the history's runs do, nothing is taken off (the rows are judged
//! as measured, and the move is named): a move that large may be a change of
//! everything, and taking it off would turn the cases that did not move into
//! calls the other way.

use std::collections::{HashMap, HashSet};

use ipcperf_core::record::RunRecord;

use super::whole::{logs, WHOLE_CASES};
use super::History;

/// The fewest runs of history whose moves as a whole are taken off a case.
pub const NET_RUNS: usize = 8;

/// What is taken off each case: per placement (one CPU, two), the cases whose
/// median is the run's move, each case's mean over the history, and the cases
/// whose history is quieter net of the move.
#[derive(Debug, Clone, Default)]
pub struct Net {
    keys: [Vec<String>; 2],
    centre: HashMap<String, f64>,
    follow: HashSet<String>,
    /// How many cases could follow their placement's move (those in `keys`).
    pub cases: usize,
}

impl Net {
    /// The moves of `history` (earlier runs of one machine); None under
    /// [`NET_RUNS`] runs holding a placement's [`WHOLE_CASES`] cases each.
    pub fn of(history: &[RunRecord]) -> Option<Net> {
        let lh: Vec<_> = history.iter().map(logs).collect();
        let first = lh.first()?;
        let mut net = Net::default();
        for side in [false, true] {
            // The cases of this placement in every run of the history.
            let mut keys: Vec<String> = first
                .iter()
                .filter(|(k, (ac, _))| *ac == side && lh.iter().all(|h| h.contains_key(*k)))
                .map(|(k, _)| k.clone())
                .collect();
            keys.sort();
            if keys.len() < WHOLE_CASES || lh.len() < NET_RUNS {
                continue;
            }
            let n = lh.len() as f64;
            for k in &keys {
                let c = lh.iter().map(|h| h[k].1).sum::<f64>() / n;
                net.centre.insert(k.clone(), c);
            }
            net.keys[usize::from(side)] = keys;
        }
        net.cases = net.keys.iter().map(Vec::len).sum();
        if net.cases == 0 {
            return None;
        }
        // Each history run's move, then which cases it quiets.
        let levels: Vec<[Option<f64>; 2]> = lh.iter().map(|h| net.level_of(h)).collect();
        for side in [false, true] {
            for k in &net.keys[usize::from(side)] {
                let raw: Vec<f64> = lh.iter().map(|h| h[k].1).collect();
                let netted: Vec<f64> = lh
                    .iter()
                    .zip(&levels)
                    .map(|(h, l)| h[k].1 - l[usize::from(side)].unwrap_or(0.0))
                    .collect();
                if 2.0 * sum_sq(&netted) < sum_sq(&raw) {
                    net.follow.insert(k.clone());
                }
            }
        }
        Some(net)
    }

    /// A run's move per placement (larger slower, a log): the median over the
    /// placement's cases of each one's log against its history's mean; None
    /// where the run lacks one of them.
    fn level_of(&self, l: &HashMap<String, (bool, f64)>) -> [Option<f64>; 2] {
        let mut out = [None, None];
        for (i, keys) in self.keys.iter().enumerate() {
            if keys.is_empty() || !keys.iter().all(|k| l.contains_key(k)) {
                continue;
            }
            let d: Vec<f64> = keys.iter().map(|k| l[k].1 - self.centre[k]).collect();
            out[i] = ipcperf_core::stats::median(&d);
        }
        out
    }

    /// [`Net::level_of`] a run.
    pub fn level(&self, run: &RunRecord) -> [Option<f64>; 2] {
        self.level_of(&logs(run))
    }

    /// Whether case `key`'s history is quieter net of its placement's move.
    pub fn follows(&self, key: &str) -> bool {
        self.follow.contains(key)
    }

    /// How many cases follow their placement's move.
    pub fn following(&self) -> usize {
        self.follow.len()
    }

    /// A case's median `m` in a run of move `level`, net of the move where the
    /// case follows it (a time is divided by the run's slowness, a rate
    /// multiplied); as it is otherwise.
    pub fn netted(&self, key: &str, m: f64, lower_better: bool, level: [Option<f64>; 2]) -> f64 {
        if !self.follows(key) {
            return m;
        }
        let side = self.keys[1].iter().any(|k| k == key);
        let Some(l) = level[usize::from(side)] else {
            return m;
        };
        if lower_better {
            m * (-l).exp()
        } else {
            m * l.exp()
        }
    }

    /// The history of `runs` ([`super::history_of`]) with each following
    /// case's median net of its run's move.
    pub fn history(&self, runs: &[RunRecord]) -> History {
        let mut h = History::new();
        for r in runs {
            let level = self.level(r);
            for c in &r.cases {
                if let Some(m) = super::runs::median_of(c) {
                    let k = super::key(c);
                    let v = self.netted(&k, m, super::figure(c).lower_better, level);
                    h.entry(k).or_default().push(v);
                }
            }
        }
        h
    }
}

fn sum_sq(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    xs.iter().map(|x| (x - mean).powi(2)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{compare_against_net, moderated, Verdict, DEFAULT_MIN_CHANGE};
    use crate::testdata;
    use ipcperf_core::mode::Mode;

    /// Run `j` of a history: ten cases on one CPU that share the run's move
    /// (`level`, a log; MB/s falls as it rises) besides their own 0.5%, and a
    /// quiet eleventh that does not move with them; case `slow` divided by `by`.
    fn run(j: usize, level: f64, slow: Option<usize>, by: f64) -> RunRecord {
        let own = [-1.3, -0.8, -0.3, 0.0, 0.3, 0.8, 1.3, -0.5, 0.5, 0.1];
        let mut r = testdata::run();
        r.cases = (0..11)
            .map(|i| {
                let e = 0.005 * own[(i + j) % own.len()];
                let mut m = 100.0 * (1.0 + i as f64) * (e - if i < 10 { level } else { 0.0 }).exp();
                if slow == Some(i) {
                    m /= by;
                }
                testdata::case(
                    "pipe",
                    Mode::Processes,
                    64 << i,
                    "same-cpu",
                    &[m, m * 1.01, m * 0.99],
                )
            })
            .collect();
        r
    }

    fn history() -> Vec<RunRecord> {
        let z = [
            -1.5, -1.0, -0.6, -0.3, 0.0, 0.2, 0.4, 0.6, 0.9, 1.2, -0.4, 0.5,
        ];
        z.iter()
            .enumerate()
            .map(|(j, z)| run(j, 0.03 * z, None, 1.0))
            .collect()
    }

    #[test]
    fn cases_that_share_their_runs_move_are_judged_net_of_it() {
        let h = history();
        let net = Net::of(&h).expect("12 runs of 11 cases on one CPU");
        assert_eq!(net.cases, 11);
        let key = |i: usize| crate::compare::key(&h[0].cases[i]);
        assert!((0..10).all(|i| net.follows(&key(i))), "{net:?}");
        assert!(
            !net.follows(&key(10)),
            "the quiet case does not share the moves"
        );
        // Net, a shared case's history moves by its own 0.5%, not the runs' 3%.
        let netted = net.history(&h);
        let sd = |v: &[f64]| {
            let l: Vec<f64> = v.iter().map(|x| x.ln()).collect();
            let m = l.iter().sum::<f64>() / l.len() as f64;
            (l.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (l.len() - 1) as f64).sqrt()
        };
        assert!(sd(&netted[&key(2)]) < 0.012, "{:?}", netted[&key(2)]);
        let raw = crate::compare::history_of(&h);
        assert!(sd(&raw[&key(2)]) > 0.02);
        // B: its run 1% fast as a whole, case 3 8% slower besides. Against the
        // history as measured a 3% spread hides it; net of the move it is called,
        // and no other case is.
        let b = run(3, -0.01, Some(3), 1.08);
        let a = vec![
            h[11].clone(),
            h[10].clone(),
            h[9].clone(),
            h[8].clone(),
            h[7].clone(),
        ];
        let judge = |net: Option<&Net>, history: &crate::compare::History| {
            let model = moderated::fit(history);
            compare_against_net(&a, &b, DEFAULT_MIN_CHANGE, &model, net)
        };
        let main = |rows: &[crate::compare::Row]| -> Vec<Verdict> {
            rows.iter()
                .filter(|r| r.unit == "MB/s")
                .map(|r| r.verdict)
                .collect()
        };
        let as_measured = main(&judge(None, &raw));
        assert_ne!(as_measured[3], Verdict::Slower, "{as_measured:?}");
        let rows = judge(Some(&net), &netted);
        let v = main(&rows);
        assert_eq!(v[3], Verdict::Slower, "{rows:?}");
        for (i, x) in v.iter().enumerate().filter(|(i, _)| *i != 3) {
            assert!(
                !matches!(x, Verdict::Faster | Verdict::Slower),
                "case {i}: {x:?}"
            );
        }
        let r3 = rows.iter().filter(|r| r.unit == "MB/s").nth(3).unwrap();
        assert!(r3.why.contains("net of each run's move"), "{}", r3.why);
        // A shows as measured (the mean of A's five runs), the ratio net.
        assert!(
            r3.ratio.unwrap() < 0.95 && r3.ratio.unwrap() > 0.90,
            "{r3:?}"
        );
    }

    #[test]
    fn too_short_a_history_takes_nothing_off() {
        let h = history();
        assert!(Net::of(&h[..NET_RUNS - 1]).is_none());
        assert!(Net::of(&[]).is_none());
    }
}
