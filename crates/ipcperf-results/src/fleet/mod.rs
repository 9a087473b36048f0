//! `ipcperf fleet`: many hosts in one history, compared with their peers. For each
//! case, each host's newest figure (its series from its newest complete run that
//! has the case); hosts grouped by CPU model and kernel; each host's ratio to its
//! group's median; an outlier only beyond the noise of hosts, not of series: the
//! host's figure against the spread of its peer hosts' figures (their median and
//! MAD, with the MAD's lesser certainty, at least what a host's own series move it by), a change past the
//! threshold, and Benjamini–Hochberg over every host and case judged together.
//! Healthy hosts differ by a few percent; pooling their series and ranking one
//! host's against them called that normal spread an outlier.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use ipcperf_core::stats::median;

use crate::compare::stats::{
    rank_sum_p_any, ratio_interval_any, smallest_p, step_up_cutoff, two_sided_t,
};
use crate::compare::ALPHA;
use crate::store::CaseFigures;

/// One host's figure for one case.
#[derive(Debug, Clone)]
pub struct Entry {
    pub host: String,
    /// CPU model and kernel: the peers a host is held against.
    pub group: (String, String),
    /// The case's identity across hosts (`compare::class_key`), as tables show it.
    pub key: String,
    pub values: Vec<f64>,
    pub lower_better: bool,
}

/// One host in one case, as the fleet table shows it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HostRow {
    pub host: String,
    pub cpu_model: String,
    pub kernel: String,
    pub case: String,
    pub figure: f64,
    pub group_median: f64,
    pub ratio: f64,
    pub peers: usize,
    pub p: Option<f64>,
    pub interval: Option<(f64, f64)>,
    pub outlier: bool,
    pub why: String,
    pub lower_better: bool,
}

/// Each host's newest figures (as the store selected them) as entries.
pub fn entries(figs: Vec<CaseFigures>) -> Vec<Entry> {
    figs.into_iter()
        .map(|f| Entry {
            lower_better: f.workload == "round-trip",
            host: f.host,
            group: (f.cpu_model, f.kernel),
            key: f.key,
            values: f.values,
        })
        .collect()
}

/// The fewest peers (hosts of one CPU model and kernel, besides the host) whose
/// spread a host is judged against.
pub const MIN_PEERS: usize = 3;

/// Every host against its group, case by case; outliers first (the smallest p
/// first), then by case and host. `min_change`: the smallest ratio change called
/// (0.05 = 5%, on a log scale either way).
pub fn judge(entries: &[Entry], min_change: f64) -> Vec<HostRow> {
    let mut groups: BTreeMap<(String, (String, String)), Vec<&Entry>> = BTreeMap::new();
    for e in entries {
        groups
            .entry((e.key.clone(), e.group.clone()))
            .or_default()
            .push(e);
    }
    // Each case's spread over its hosts is moderated toward the spread typical
    // of all the cases (empirical Bayes, as `compare` moderates run-to-run
    // spreads): a fleet of a few hosts a case borrows degrees of freedom from
    // the other cases. The prior is fitted over the groups' whole MADs.
    let prior = crate::compare::moderated::fit_prior(
        &groups
            .values()
            .filter(|h| h.len() >= 4)
            .filter_map(|h| {
                let medians: Vec<f64> =
                    h.iter().map(|e| median(&e.values).unwrap_or(0.0)).collect();
                let (_, mad, k) = centre_and_mad(&medians, None);
                (mad > 0.0).then_some((mad * mad, MAD_EFFICIENCY * (k - 1.0)))
            })
            .collect::<Vec<_>>(),
    );
    let mut rows = Vec::new();
    for ((_, (cpu, kernel)), hosts) in groups {
        let medians: Vec<f64> = hosts
            .iter()
            .map(|h| median(&h.values).unwrap_or(0.0))
            .collect();
        let group_median = median(&medians).unwrap_or(0.0);
        // How much a host's figure moves by chance within one host: its series'
        // spread (of the logs), pooled over the group, over the series a host has.
        let within = within_sd(&hosts);
        // Past 40 hosts one host moves its peers' median and MAD by little: they
        // are taken once over the whole group instead of once for each host
        // (a fleet of 1,000 hosts would take a million medians a case).
        let whole = (hosts.len() > 40).then(|| centre_and_mad(&medians, None));
        for (i, (h, &fig)) in hosts.iter().zip(&medians).enumerate() {
            let n = h.values.len();
            let peers = hosts.len() - 1;
            let ratio = if group_median > 0.0 {
                fig / group_median
            } else {
                f64::NAN
            };
            let mut row = HostRow {
                host: h.host.clone(),
                cpu_model: cpu.clone(),
                kernel: kernel.clone(),
                case: h.key.clone(),
                figure: fig,
                group_median,
                ratio,
                peers,
                p: None,
                interval: None,
                outlier: false,
                why: String::new(),
                lower_better: h.lower_better,
            };
            if fig <= 0.0 {
                row.why = "a figure of 0: nothing to judge".into();
            } else if peers < MIN_PEERS {
                row.why = format!(
                    "{peers} peer{} of its CPU model and kernel: too few to know their spread \
                     (it takes {MIN_PEERS})",
                    if peers == 1 { "" } else { "s" }
                );
            } else {
                // The host against its peers' hosts: how far its figure sits from
                // their median, in their spread (1.4826 × the MAD of their log
                // figures, a standard deviation where they are normal, robust
                // to other outliers among them), at least what a host's own
                // series make it move by; as a prediction for one more host
                // (× √(1 + 1/peers)), with peers − 1 degrees of freedom.
                let (centre, mad, k) = whole.unwrap_or_else(|| centre_and_mad(&medians, Some(i)));
                // The MAD is a robust spread but a less certain one: it is worth
                // about 37% of as many peers as a standard deviation would be.
                let own_df = MAD_EFFICIENCY * (k - 1.0);
                let (mad, df) = match prior {
                    Some(p) if p.d0.is_finite() => (
                        ((p.d0 * p.s0_sq + own_df * mad * mad) / (p.d0 + own_df)).sqrt(),
                        p.d0 + own_df,
                    ),
                    Some(p) => (p.s0_sq.sqrt(), 1e6),
                    None => (mad, own_df),
                };
                let df = df.max(1.0);
                let scale = mad.max(within * (2.0 / n.max(1) as f64).sqrt()).max(1e-6);
                let z = (fig.ln() - centre) / (scale * (1.0 + 1.0 / k).sqrt());
                let p = two_sided_t(z, df);
                row.p = Some(p);
                let spread_pct = (scale.exp() - 1.0) * 100.0;
                row.why = format!(
                    "p {}, {:+.1} of its {peers} peers' spread ({spread_pct:.1}%)",
                    fmt_p(p),
                    z
                );
                let beyond = ratio.is_finite() && ratio.ln().abs() > (1.0 + min_change).ln();
                if p <= ALPHA && beyond {
                    // Where a host like its peers would be, 95% of the time.
                    let t = crate::compare::stats::t_critical(df, ALPHA);
                    let half = t * scale * (1.0 + 1.0 / k).sqrt();
                    let (lo, hi) = (
                        (centre - half).exp() / group_median,
                        (centre + half).exp() / group_median,
                    );
                    row.interval = Some((lo, hi));
                    row.outlier = true;
                    row.why
                        .push_str(&format!("; its peers span {lo:.2}–{hi:.2}× their median"));
                } else if p <= ALPHA {
                    row.why
                        .push_str(&format!(", within {:.0}% of its peers", min_change * 100.0));
                }
            }
            rows.push(row);
        }
    }
    // Benjamini–Hochberg over every host and case judged: an outlier stands only
    // within the step-up cutoff.
    let ps: Vec<f64> = rows.iter().filter_map(|r| r.p).collect();
    let m = ps.len();
    let cutoff = step_up_cutoff(ps, ALPHA);
    for r in rows.iter_mut().filter(|r| r.outlier) {
        if r.p.is_some_and(|p| p > cutoff) {
            r.outlier = false;
            r.why.push_str(&format!(
                " (alone, but not over the {m} hosts and cases judged together)"
            ));
        }
    }
    // Outliers first, the smallest p first; the rest by case and host.
    rows.sort_by(|a, b| {
        b.outlier.cmp(&a.outlier).then_with(|| {
            if a.outlier {
                a.p.unwrap_or(1.0).total_cmp(&b.p.unwrap_or(1.0))
            } else {
                crate::units::case_order(&a.case, &b.case).then(a.host.cmp(&b.host))
            }
        })
    });
    rows
}

/// The median of the hosts' log figures and 1.4826 × their MAD (a standard
/// deviation for normal figures), leaving host `skip` out; and how many hosts.
fn centre_and_mad(medians: &[f64], skip: Option<usize>) -> (f64, f64, f64) {
    let kept: Vec<f64> = medians
        .iter()
        .enumerate()
        .filter(|(j, m)| Some(*j) != skip && **m > 0.0 && m.is_finite())
        .map(|(_, m)| *m)
        .collect();
    let (centre, mad) = ipcperf_core::stats::log_median_mad(&kept).unwrap_or((0.0, 0.0));
    (centre, mad, kept.len() as f64)
}

/// The MAD's efficiency beside the standard deviation for normal figures.
const MAD_EFFICIENCY: f64 = 0.37;

/// The spread of a host's own series (the standard deviation of their logs),
/// pooled over the hosts of a group: what a host's figure moves by within it.
fn within_sd(hosts: &[&Entry]) -> f64 {
    let (mut ss, mut df) = (0.0, 0.0);
    for h in hosts {
        let l: Vec<f64> = h
            .values
            .iter()
            .filter(|v| **v > 0.0)
            .map(|v| v.ln())
            .collect();
        if l.len() < 2 {
            continue;
        }
        let m = l.iter().sum::<f64>() / l.len() as f64;
        ss += l.iter().map(|x| (x - m).powi(2)).sum::<f64>();
        df += (l.len() - 1) as f64;
    }
    if df > 0.0 {
        (ss / df).sqrt()
    } else {
        0.0
    }
}

/// A figure as tables say it: µs for a round trip, cycles/s for a sync
/// primitive, MB/s for a stream.
pub fn fmt_figure(v: f64, lower_better: bool, case: &str) -> String {
    if lower_better {
        crate::units::fmt_time_ns(v)
    } else if case.starts_with("sync") {
        format!("{}/s", crate::units::fmt_rate(v))
    } else {
        // Three figures at least: a 64 B stream at 0.13 MB/s read "0 MB/s".
        format!("{} MB/s", crate::units::fmt_mbps(v))
    }
}

/// A p-value as the tables say it: three places, or `< 0.001`.
fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else {
        format!("= {p:.3}")
    }
}

/// An outlier as one line: `node17: pipe 64 KiB 0.61× its 12 peers (CPU, kernel), p = 0.002`.
pub fn outlier_line(r: &HostRow) -> String {
    format!(
        "{}: {} {:.2}× its {} peers ({}, {}), p {}",
        r.host,
        r.case,
        r.ratio,
        r.peers,
        r.cpu_model,
        r.kernel,
        fmt_p(r.p.unwrap_or(1.0))
    )
}

/// Kernel versions in version order: runs of digits compared as numbers, the
/// rest as text (`6.1.0-28` < `6.1.0-31` < `6.8.0-45` < `6.10.2`).
pub fn version_cmp(a: &str, b: &str) -> Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for (x, y) in ca.iter().zip(&cb) {
        let o = match (x, y) {
            ((true, x), (true, y)) => {
                let (x, y) = (x.trim_start_matches('0'), y.trim_start_matches('0'));
                x.len().cmp(&y.len()).then_with(|| x.cmp(y))
            }
            ((_, x), (_, y)) => x.cmp(y),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    ca.len().cmp(&cb.len()).then_with(|| a.cmp(b))
}

/// One figure against the one before it (a kernel against the kernel before,
/// a run against the run before), by compare's rules.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Change {
    /// Against the one before (None for the first).
    pub ratio: Option<f64>,
    /// At a trend's change point: the segments either side of it, after over
    /// before (medians of their runs' medians); `ratio` stays the run before's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_ratio: Option<f64>,
    pub p: Option<f64>,
    pub interval: Option<(f64, f64)>,
    /// A change beyond the noise.
    pub step: bool,
    pub why: String,
}

impl Change {
    /// Its ratio as a table shows it ("0.94×"; empty for the first).
    pub fn ratio_cell(&self) -> String {
        self.ratio.map(|r| format!("{r:.2}×")).unwrap_or_default()
    }

    /// Its verdict as a table shows it: the reason, after "STEP: " where it
    /// is a step.
    pub fn verdict_cell(&self) -> String {
        if self.step {
            format!("STEP: {}", self.why)
        } else {
            self.why.clone()
        }
    }
}

/// `now` (its figure `ratio` times the one before) against `before`: the
/// rank-sum test of their series, and, only where the test and `min_change`
/// would call it, the 95% bootstrap interval of the ratio, which must exclude 1.
fn change(before: &[f64], now: &[f64], ratio: f64, min_change: f64) -> Change {
    let mut c = Change {
        ratio: Some(ratio),
        ..Change::default()
    };
    if smallest_p(now.len(), before.len()) > ALPHA {
        c.why = format!(
            "{}+{} series: too few to judge (take 4 or more: --repeat)",
            before.len(),
            now.len()
        );
        return c;
    }
    let p = rank_sum_p_any(now, before);
    c.p = Some(p);
    c.why = format!("p {}", fmt_p(p));
    let beyond = ratio.is_finite() && ratio.ln().abs() > (1.0 + min_change).ln();
    if p <= ALPHA && beyond {
        let (lo, hi) = ratio_interval_any(before, now);
        c.interval = Some((lo, hi));
        c.step = lo > 1.0 || hi < 1.0;
        c.why.push_str(&format!(", 95% interval {lo:.2}–{hi:.2}×"));
    }
    c
}

/// Benjamini–Hochberg over every change judged: a step stands only within the
/// step-up cutoff. `what`: what was judged, for the reason.
fn step_up(changes: Vec<&mut Change>, what: &str) {
    let ps: Vec<f64> = changes.iter().filter_map(|c| c.p).collect();
    let m = ps.len();
    let cutoff = step_up_cutoff(ps, ALPHA);
    for c in changes.into_iter().filter(|c| c.step) {
        if c.p.is_some_and(|p| p > cutoff) {
            c.step = false;
            c.why.push_str(&format!(
                " (alone, but not over the {m} {what} judged together: more series per run, \
                 --repeat, can carry it)"
            ));
        }
    }
}

/// One kernel's figure for one CPU model and case: the median of its hosts' own.
#[derive(Debug, Clone, serde::Serialize)]
pub struct KernelRow {
    pub cpu_model: String,
    pub case: String,
    pub kernel: String,
    pub hosts: usize,
    pub median: f64,
    /// Against the kernel before it.
    #[serde(flatten)]
    pub change: Change,
    pub lower_better: bool,
}

/// `fleet --by kernel`: for each CPU model and case, its kernels in version order,
/// each with its hosts' median; a change between neighbours is a step only beyond
/// the noise (the rank-sum test of their pooled series, the bootstrap interval of
/// the ratio excluding 1, past `min_change`; Benjamini–Hochberg over every
/// neighbour compared).
pub fn by_kernel(entries: &[Entry], min_change: f64) -> Vec<KernelRow> {
    let mut groups: BTreeMap<(String, String), BTreeMap<String, Vec<&Entry>>> = BTreeMap::new();
    for e in entries {
        groups
            .entry((e.group.0.clone(), e.key.clone()))
            .or_default()
            .entry(e.group.1.clone())
            .or_default()
            .push(e);
    }
    let mut groups: Vec<_> = groups.into_iter().collect();
    groups.sort_by(|(a, _), (b, _)| a.0.cmp(&b.0).then(crate::units::case_order(&a.1, &b.1)));
    let mut rows = Vec::new();
    for ((cpu, _), kernels) in groups {
        let mut kernels: Vec<(String, Vec<&Entry>)> = kernels.into_iter().collect();
        kernels.sort_by(|a, b| version_cmp(&a.0, &b.0));
        let mut before: Option<(f64, Vec<f64>)> = None;
        for (kernel, hosts) in kernels {
            let medians: Vec<f64> = hosts
                .iter()
                .map(|h| median(&h.values).unwrap_or(0.0))
                .collect();
            let med = median(&medians).unwrap_or(0.0);
            let pooled: Vec<f64> = hosts
                .iter()
                .flat_map(|h| h.values.iter().copied())
                .collect();
            let mut row = KernelRow {
                cpu_model: cpu.clone(),
                case: hosts[0].key.clone(),
                kernel,
                hosts: hosts.len(),
                median: med,
                change: Change::default(),
                lower_better: hosts[0].lower_better,
            };
            if let Some((prev_med, prev)) = &before {
                row.change = change(prev, &pooled, med / prev_med, min_change);
            }
            before = Some((med, pooled));
            rows.push(row);
        }
    }
    step_up(rows.iter_mut().map(|r| &mut r.change).collect(), "steps");
    rows
}

/// One run's figure in a trend.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TrendPoint {
    pub case: String,
    pub run_id: i64,
    pub started_ms: u64,
    pub host: String,
    pub label: Option<String>,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub series: usize,
    /// Its ratio to the run before it; at a change point, also the segments
    /// either side of it compared (their ratio, its p, whether it is a step).
    #[serde(flatten)]
    pub change: Change,
    pub lower_better: bool,
    /// Where it is its case's newest run: judged against the runs before it
    /// ([`newest::judge`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newest: Option<newest::Newest>,
}

/// Runs after a change point that confirm it (and before it): a step is called
/// once this many runs stand on each side of it, and one odd run is never one.
pub const CONFIRM_RUNS: usize = 3;

/// The permutations of the change-point test, and its level.
pub(super) const PERMUTATIONS: usize = 999;
const CHANGE_ALPHA: f64 = 0.01;

/// The fewest runs of a case in which a step can be found: CONFIRM_RUNS each
/// side, and enough for the permutation test to reach CHANGE_ALPHA (a shuffle
/// that puts the same runs on the same sides, either way round, splits as
/// well: 2 in C(n, n/2) at best; 10 runs at 0.01).
pub fn fewest_runs_for_a_step() -> usize {
    let ways = |n: usize| (1..=n / 2).fold(1.0, |c, i| c * (n + 1 - i) as f64 / i as f64);
    (2 * CONFIRM_RUNS..)
        .find(|&n| 2.0 / ways(n) <= CHANGE_ALPHA)
        .unwrap_or(2 * CONFIRM_RUNS)
}

/// `ipcperf trend`: each case's runs in time on each host (as the store gives
/// them, oldest first: a host is only ever compared with itself), its change
/// points found by E-divisive means over the runs' medians (see [`changes`]),
/// each a step where the segments either side of it differ beyond the
/// threshold; Benjamini–Hochberg over every change point found. Each run also
/// shows its ratio to the run before.
pub fn trend(figs: &[CaseFigures], min_change: f64) -> Vec<TrendPoint> {
    let mut by_key: BTreeMap<(&str, &str), Vec<&CaseFigures>> = BTreeMap::new();
    for f in figs {
        by_key.entry((&f.key, &f.host)).or_default().push(f);
    }
    let mut by_key: Vec<_> = by_key.into_iter().collect();
    by_key.sort_by(|(a, _), (b, _)| crate::units::case_order(a.0, b.0).then(a.1.cmp(b.1)));
    let mut out = Vec::new();
    for ((key, _), mut runs) in by_key {
        runs.sort_by_key(|f| (f.started_ms, f.run_id));
        let medians: Vec<f64> = runs
            .iter()
            .map(|f| median(&f.values).unwrap_or(0.0))
            .collect();
        let first = out.len();
        for (i, f) in runs.iter().enumerate() {
            let med = medians[i];
            let mut pt = TrendPoint {
                case: key.to_string(),
                run_id: f.run_id,
                started_ms: f.started_ms,
                host: f.host.clone(),
                label: f.label.clone(),
                median: med,
                min: f.values.iter().copied().fold(f64::INFINITY, f64::min),
                max: f.values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                series: f.values.len(),
                change: Change::default(),
                lower_better: f.workload == "round-trip",
                newest: None,
            };
            if i > 0 && medians[i - 1] > 0.0 {
                pt.change.ratio = Some(med / medians[i - 1]);
            }
            out.push(pt);
        }
        if medians.iter().any(|m| *m <= 0.0) {
            continue;
        }
        let logs: Vec<f64> = medians.iter().map(|m| m.ln()).collect();
        let found = changes::e_divisive(&logs, CONFIRM_RUNS, PERMUTATIONS, CHANGE_ALPHA);
        let bounds: Vec<usize> = std::iter::once(0)
            .chain(found.iter().map(|c| c.0))
            .chain(std::iter::once(medians.len()))
            .collect();
        for (n, &(at, p)) in found.iter().enumerate() {
            // The segments either side of it, up to the neighbouring change points.
            let (from, to) = (bounds[n], bounds[n + 2]);
            let before = median(&medians[from..at]).unwrap_or(f64::NAN);
            let after = median(&medians[at..to]).unwrap_or(f64::NAN);
            let ratio = after / before;
            let beyond = ratio.is_finite() && ratio.ln().abs() > (1.0 + min_change).ln();
            let c = &mut out[first + at].change;
            c.step_ratio = Some(ratio);
            c.p = Some(p);
            c.step = beyond;
            c.why = format!(
                "a change point (E-divisive, p {}): runs {}–{} {:.3}× runs {}–{}{}",
                fmt_p(p),
                at + 1,
                to,
                ratio,
                from + 1,
                at,
                if beyond {
                    String::new()
                } else {
                    format!(", within {:.0}%", min_change * 100.0)
                }
            );
        }
    }
    step_up(
        out.iter_mut()
            .map(|r| &mut r.change)
            .filter(|c| c.p.is_some())
            .collect(),
        "change points",
    );
    out
}

mod changes;
pub mod newest;

pub mod output;
#[cfg(test)]
mod tests;
pub mod trend_output;
