//! The verdicts' power and false-alarm rate, simulated on a real run's series
//! (bench/verdicts/run.sh runs it on a default suite it has just measured):
//!
//! * A/A: both runs' series of every case drawn afresh from that case's own
//!   series (its median times a log-deviation resampled from the real ones),
//!   then compared: how often any of the rows is called (a false alarm).
//! * One changed case: the same, with one case's B series moved by 5%, 10% or
//!   25% (slower), every other case as in A/A: how often that case is called,
//!   by the case's spread ((max − min) / median of its real series).
//!
//! It measures the series noise only: a second run on a VM also moves by what
//! the host did in between, which only repeated runs show (bench/verdicts' real
//! A/A pairs).

use ipcperf_core::record::{CaseRecord, RunRecord};
use ipcperf_core::workload::Workload;

use super::{compare, figure, Verdict, DEFAULT_MIN_CHANGE};

/// A small, seeded generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[(self.next() % v.len() as u64) as usize]
    }
}

/// Set a case's figure series (MB/s as bytes per series of its length, or each
/// series' p50 round trip).
fn set_figure(c: &mut CaseRecord, values: &[f64]) {
    match c.workload {
        Workload::Stream => {
            for (s, v) in c.series.iter_mut().zip(values) {
                s.bytes = (v * s.elapsed_ns as f64 / 1e9).round().max(1.0) as u64;
            }
        }
        _ => {
            if let Some(l) = c.latency.as_mut() {
                l.series_p50_ns = values.iter().map(|v| v.round().max(1.0) as u64).collect();
                l.series_p99_ns.clear();
            }
        }
    }
}

/// A fresh draw of a case's series: its median times resampled log-deviations.
fn draw(real: &[f64], rng: &mut Rng) -> Vec<f64> {
    let mut s = real.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let med = s[s.len() / 2];
    let devs: Vec<f64> = real.iter().map(|v| (v / med).ln()).collect();
    (0..real.len())
        .map(|_| med * rng.pick(&devs).exp())
        .collect()
}

/// The cases that can be compared, with their real series and spread.
fn cases(run: &RunRecord) -> Vec<(usize, Vec<f64>, f64, bool)> {
    run.cases
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let f = figure(c);
            let s = ipcperf_core::stats::spread(&f.values)?;
            (f.values.len() >= 2 && s.median > 0.0).then(|| {
                let spread = (s.max - s.min) / s.median;
                (i, f.values, spread, f.lower_better)
            })
        })
        .collect()
}

/// The rates over `trials` trials: (A/A trials with any call, and per shift the
/// share of trials that called the changed case, by spread bin).
pub fn simulate(run: &RunRecord, trials: usize, seed: u64) -> String {
    let mut run = run.clone();
    for c in &mut run.cases {
        if let Some(l) = c.latency.as_mut() {
            l.series_p99_ns.clear();
        }
    }
    let cs = cases(&run);
    let mut rng = Rng(seed | 1);
    let pair = |rng: &mut Rng, changed: Option<(usize, f64)>| {
        let (mut a, mut b) = (run.clone(), run.clone());
        for (i, real, _, lower_better) in &cs {
            set_figure(&mut a.cases[*i], &draw(real, rng));
            let mut v = draw(real, rng);
            if let Some((k, shift)) = changed {
                if k == *i {
                    // Slower: a time grows, a rate shrinks.
                    let f = if *lower_better {
                        1.0 + shift
                    } else {
                        1.0 / (1.0 + shift)
                    };
                    v.iter_mut().for_each(|x| *x *= f);
                }
            }
            set_figure(&mut b.cases[*i], &v);
        }
        compare(&a, &b, DEFAULT_MIN_CHANGE)
    };
    let mut out = format!(
        "{} cases of {} series; {trials} trials each; threshold {:.0}%\n",
        cs.len(),
        cs.first().map_or(0, |c| c.1.len()),
        DEFAULT_MIN_CHANGE * 100.0
    );
    // A/A: any row called.
    let mut alarms = 0;
    let mut false_rows = 0;
    for _ in 0..trials {
        let rows = pair(&mut rng, None);
        let called = rows
            .iter()
            .filter(|r| matches!(r.verdict, Verdict::Faster | Verdict::Slower))
            .count();
        false_rows += called;
        alarms += usize::from(called > 0);
    }
    out.push_str(&format!(
        "A/A: {alarms} of {trials} trials with a false call ({:.1}%), {false_rows} false rows \
         in {} rows compared\n",
        100.0 * alarms as f64 / trials as f64,
        trials * cs.len()
    ));
    out.push_str("one case slower by | spread ≤3% | ≤10% | ≤30% | all | could call (median)\n");
    for shift in [0.05, 0.10, 0.25] {
        // (called, tried) by spread bin, and the detectable changes.
        let mut bins = [(0usize, 0usize); 4];
        let mut could = Vec::new();
        for (k, (i, _, spread, _)) in cs.iter().enumerate() {
            for _ in 0..trials {
                let rows = pair(&mut rng, Some((*i, shift)));
                let r = &rows[k];
                let hit = r.verdict == Verdict::Slower;
                if let Some(d) = r.detectable {
                    could.push(d);
                }
                for (b, limit) in [0.03, 0.10, 0.30, f64::INFINITY].iter().enumerate() {
                    if spread <= limit {
                        bins[b].1 += 1;
                        bins[b].0 += usize::from(hit);
                    }
                }
            }
        }
        could.sort_by(|a, b| a.total_cmp(b));
        let pct = |(h, n): (usize, usize)| {
            if n == 0 {
                "-".to_string()
            } else {
                format!("{:.0}% of {n}", 100.0 * h as f64 / n as f64)
            }
        };
        out.push_str(&format!(
            "{:>17.0}% | {} | {} | {} | {} | {:.1}%\n",
            shift * 100.0,
            pct(bins[0]),
            pct(bins[1]),
            pct(bins[2]),
            pct(bins[3]),
            could.get(could.len() / 2).copied().unwrap_or(f64::NAN) * 100.0
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bench/verdicts/run.sh: IPCPERF_VERDICT_RUN=run.json (a default suite's
    /// JSON) IPCPERF_VERDICT_TRIALS=N, release build, --ignored --nocapture.
    #[test]
    #[ignore = "a benchmark: bench/verdicts/run.sh runs it on a fresh default suite"]
    fn verdicts_simulated_on_a_real_run() {
        let path = std::env::var("IPCPERF_VERDICT_RUN").expect("IPCPERF_VERDICT_RUN=run.json");
        let run: RunRecord = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let trials = std::env::var("IPCPERF_VERDICT_TRIALS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(20);
        println!("{}", simulate(&run, trials, 0x5eed));
    }

    #[test]
    fn the_simulation_calls_a_large_change_on_tight_series() {
        let mut run = crate::testdata::run();
        run.cases.retain(|c| !c.series.is_empty());
        let text = simulate(&run, 3, 7);
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("25%"))
            .unwrap();
        assert!(line.contains("| 100% of"), "{text}");
        assert!(text.contains("A/A: 0 of 3"), "{text}");
    }
}
