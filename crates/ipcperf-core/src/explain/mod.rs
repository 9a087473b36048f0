//! `--explain`: where a round trip's time goes, from the kernel's own events.
//! After a case's timed series, one more series runs with the scheduler's and
//! the system calls' tracepoints sampled (`perf_event_open`, see
//! `ipcperf_sys::trace`, driven by `runner::explain`); each of its round trips
//! is cut into consecutive parts ([`split`]) and each part summarized over the
//! round trips.

mod formats;
pub mod modes;
pub mod split;
pub mod stream;
pub(crate) mod trace;
pub mod tracer;

use serde::{Deserialize, Serialize};

/// The round trips a traced series takes at most (fewer where the timed series
/// had fewer).
pub const TRACED_ROUND_TRIPS: u64 = 2_000;

/// Traced series at most a case takes (one per `--repeat`, up to this many):
/// several give `compare` a spread to judge each part by.
pub const TRACED_SERIES: usize = 5;

/// The option that says why `--explain` could not trace a case.
pub const NOT_TRACED: &str = "explain_not_traced";

/// One part over the traced round trips.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExplainPart {
    /// Its name (see [`split::PARTS`]).
    pub name: String,
    pub median_ns: u64,
    pub p99_ns: u64,
    pub mean_ns: f64,
    /// Its mean over the round trips' mean: the parts' shares sum to 1.
    pub share: f64,
    /// Its median in each traced series, the first being `median_ns` (one series
    /// a case unless `--repeat` asks for more): what `compare` judges a part by.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series_median_ns: Vec<u64>,
}

/// What `--explain` found for a case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExplainRecord {
    /// Round trips traced (and cut into parts).
    pub round_trips: u64,
    /// Kernel events read, and those the kernel dropped for want of room.
    pub events: u64,
    pub lost_events: u64,
    /// The parts with any time in them, in the order they follow each other.
    pub parts: Vec<ExplainPart>,
    /// The median over round trips of the parts' sum (bounded by ipcperf's own
    /// clock reads), less the clock's cost as the round trips have it taken off.
    pub sum_median_ns: u64,
    /// The traced series' median round trip (the tare taken off).
    pub traced_median_ns: u64,
    /// The traced series' p90 (tare off).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub traced_p90_ns: u64,
    /// The untraced p90 (absent where no untraced series was measured).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub untraced_p90_ns: u64,
    /// The traced median lies beyond the untraced series' spread, or the
    /// untraced median beyond the traced one's (p50 past the other's p90): the
    /// traced cycles ran in another regime, and their parts explain that
    /// regime, not the figure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub other_regime: bool,
    /// Where the traced cycles fall in two clusters, each one's parts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modes: Vec<modes::ExplainMode>,
    /// The case's median round trip without tracing (its p50); absent (0) when
    /// none was measured (sync with `--latency-samples 0`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub untraced_median_ns: u64,
    /// Traced over untraced: what tracing costs the round trip (absent with no
    /// untraced median).
    #[serde(default, skip_serializing_if = "is_zero_f")]
    pub overhead_ratio: f64,
    /// Of the wake-ups a round trip can hold (there and back), the share that
    /// happened (a side asleep when its message came).
    pub woken_share: f64,
    /// Of those wake-ups, the share with an IPI sent (None: the kernel has no
    /// `ipi:ipi_send_cpu`, Linux 6.3 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipi_share: Option<f64>,
    /// Wake-ups whose `sched_wakeup` and switch-in were never seen (some
    /// kernels give perf no events from an idle CPU's task): their wake-up and
    /// run-queue time is in the return part.
    #[serde(default)]
    pub wakeups_unseen: u64,
    /// Of the round trips whose server was woken, the share whose
    /// `sched_wakeup` the tracer saw (absent in records made before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_wakeup_seen_share: Option<f64>,
    /// Wake-ups whose `sched_wakeup` was seen but not the switch in (this
    /// kernel writes no switch out of a secondary CPU's idle task): their
    /// run-queue time is in the return part.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub switch_ins_unseen: u64,
    /// The tracer that ran (`perf` or `tracefs`), and why it was chosen.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tracer: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tracer_reason: String,
    /// Events this kernel lacks, whose parts merge into their neighbours.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_events: Vec<String>,
    /// `sched_waking` events of either side per round trip, on the path or not
    /// (absent in records made before it was counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wakings_per_round_trip: Option<f64>,
    /// The share of round trips whose client was woken before the server's
    /// reply call (early, by the server's read freeing room).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub early_wake_share: Option<f64>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero_f(v: &f64) -> bool {
    *v == 0.0
}

/// The value at quantile `q` of sorted `v`.
fn quantile(v: &[u64], q: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v[((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1]
}

impl ExplainRecord {
    /// Traced series taken (1 for a record kept before several could be).
    pub fn series(&self) -> usize {
        self.parts
            .iter()
            .map(|p| p.series_median_ns.len())
            .max()
            .unwrap_or(0)
            .max(1)
    }

    /// Add a later traced series' parts: each part's median joins its series'
    /// medians (0 for a part that series did not have); the summary stays the
    /// first series'.
    pub fn add_series(&mut self, later: &ExplainRecord) {
        let n = self.series();
        for p in &mut self.parts {
            if p.series_median_ns.is_empty() {
                p.series_median_ns.push(p.median_ns);
            }
            p.series_median_ns.resize(n, 0);
            let m = later
                .parts
                .iter()
                .find(|q| q.name == p.name)
                .map_or(0, |q| q.median_ns);
            p.series_median_ns.push(m);
        }
    }

    /// The untraced median and p90 beside the traced ones, what tracing cost,
    /// and whether the traced cycles ran in another regime.
    pub fn set_untraced(&mut self, p50_ns: u64, p90_ns: u64) {
        self.untraced_median_ns = p50_ns;
        self.untraced_p90_ns = p90_ns;
        self.other_regime = p90_ns > 0
            && self.traced_p90_ns > 0
            && (self.traced_median_ns > p90_ns || p50_ns > self.traced_p90_ns);
        self.overhead_ratio = if p50_ns > 0 {
            self.traced_median_ns as f64 / p50_ns as f64
        } else {
            0.0
        };
    }
}

/// Summarize the round trips' splits. `traced` are the traced round trips as
/// timed (tare off), `untraced_median_ns` the case's p50.
pub fn summarize(
    splits: &[split::Split],
    traced: &[u64],
    untraced_median_ns: u64,
    events: u64,
    lost_events: u64,
    ipi_known: bool,
    missing_events: Vec<String>,
) -> ExplainRecord {
    let n = splits.len().max(1) as f64;
    let mut sums: Vec<u64> = splits.iter().map(|s| s.parts.iter().sum()).collect();
    sums.sort_unstable();
    let total_mean = sums.iter().sum::<u64>() as f64 / n;
    let mut parts = Vec::new();
    for (i, (name, _)) in split::PARTS.iter().enumerate() {
        let mut v: Vec<u64> = splits.iter().map(|s| s.parts[i]).collect();
        let mean = v.iter().sum::<u64>() as f64 / n;
        if mean <= 0.0 {
            continue;
        }
        v.sort_unstable();
        parts.push(ExplainPart {
            name: name.to_string(),
            median_ns: quantile(&v, 0.5),
            p99_ns: quantile(&v, 0.99),
            mean_ns: mean,
            share: if total_mean > 0.0 {
                mean / total_mean
            } else {
                0.0
            },
            series_median_ns: Vec::new(),
        });
    }
    let mut t = traced.to_vec();
    t.sort_unstable();
    let traced_median_ns = quantile(&t, 0.5);
    let wakes: usize = splits
        .iter()
        .map(|s| s.woken.iter().filter(|w| **w).count())
        .sum();
    let ipis: usize = splits
        .iter()
        .map(|s| s.ipi.iter().filter(|w| **w).count())
        .sum();
    let unseen: usize = splits
        .iter()
        .map(|s| s.unseen.iter().filter(|w| **w).count())
        .sum();
    ExplainRecord {
        round_trips: splits.len() as u64,
        events,
        lost_events,
        parts,
        sum_median_ns: quantile(&sums, 0.5),
        traced_median_ns,
        traced_p90_ns: quantile(&t, 0.9),
        untraced_p90_ns: 0,
        other_regime: false,
        modes: Vec::new(),
        untraced_median_ns,
        overhead_ratio: if untraced_median_ns > 0 {
            traced_median_ns as f64 / untraced_median_ns as f64
        } else {
            0.0
        },
        woken_share: wakes as f64 / (2.0 * n),
        ipi_share: ipi_known.then(|| {
            if wakes > 0 {
                ipis as f64 / wakes as f64
            } else {
                0.0
            }
        }),
        wakeups_unseen: unseen as u64,
        server_wakeup_seen_share: {
            let woken = splits.iter().filter(|s| s.woken[0]).count();
            let seen = splits.iter().filter(|s| s.wakeup_seen[0]).count();
            (woken > 0).then(|| seen as f64 / woken as f64)
        },
        switch_ins_unseen: splits
            .iter()
            .map(|s| s.no_switch_in.iter().filter(|w| **w).count() as u64)
            .sum(),
        tracer: String::new(),
        tracer_reason: String::new(),
        missing_events,
        wakings_per_round_trip: Some(splits.iter().map(|s| s.wakings as f64).sum::<f64>() / n),
        early_wake_share: Some(splits.iter().filter(|s| s.early).count() as f64 / n),
    }
}

/// A part's name as the table shows it (a round trip's or a stream's).
pub fn part_label(name: &str) -> &'static str {
    split::PARTS
        .iter()
        .chain(stream::STREAM_PARTS.iter())
        .find(|(n, _)| *n == name)
        .map_or("?", |(_, l)| l)
}

#[cfg(test)]
mod tests {
    use super::split::Split;
    use super::*;

    #[test]
    fn the_summary_takes_each_part_over_the_round_trips() {
        let mut a = Split::default();
        a.parts[1] = 100;
        a.parts[2] = 300;
        a.woken = [true, false];
        a.ipi = [true, false];
        let mut b = a;
        b.parts[2] = 500;
        let r = summarize(&[a, b, a], &[390, 410, 600], 350, 30, 0, true, vec![]);
        assert_eq!(r.round_trips, 3);
        assert_eq!(r.parts.len(), 2, "parts with no time are left out");
        assert_eq!(r.parts[0].name, "send_call");
        assert_eq!(r.parts[1].median_ns, 300);
        assert_eq!(r.parts[1].p99_ns, 500);
        let shares: f64 = r.parts.iter().map(|p| p.share).sum();
        assert!((shares - 1.0).abs() < 1e-9);
        assert_eq!(r.sum_median_ns, 400);
        assert_eq!(r.traced_median_ns, 410);
        assert!((r.overhead_ratio - 410.0 / 350.0).abs() < 1e-9);
        assert!((r.woken_share - 0.5).abs() < 1e-9);
        assert_eq!(r.ipi_share, Some(1.0));
        assert_eq!(part_label("wake"), "wake-up (waking to runnable)");
    }

    /// Later traced series join each part's series medians; the first series'
    /// summary stays.
    #[test]
    fn traced_series_add_up_part_by_part() {
        use super::split::Split;
        let rec = |wake: u64| {
            let mut s = Split::default();
            s.parts[1] = 1_000;
            s.parts[7] = wake;
            summarize(&[s; 3], &[5_000; 3], 4_000, 9, 0, true, vec![])
        };
        let mut x = rec(10_000);
        assert_eq!(x.series(), 1);
        x.add_series(&rec(12_000));
        x.add_series(&rec(14_000));
        assert_eq!(x.series(), 3);
        let wake = x.parts.iter().find(|p| p.median_ns == 10_000).unwrap();
        assert_eq!(wake.series_median_ns, [10_000, 12_000, 14_000]);
        assert_eq!(x.round_trips, 3, "the first series' summary stays");
    }
}
