//! `ipcperf fleet`: many hosts in one history, compared with their peers. For each
//! case, each host's newest figure (its series from its newest complete run that
//! has the case); hosts grouped by CPU model and kernel; each host's ratio to its
//! group's median; an outlier only beyond the noise, by compare's rules: the
//! rank-sum test of the host's series against its peers' pooled series, the 95%
//! bootstrap interval of the ratio excluding 1, a change past the threshold, and
//! Benjamini–Hochberg over every host and case judged together.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use ipcperf_core::stats::median;

use crate::compare::stats::{
    exact_splits, rank_sum_p, rank_sum_p_any, rank_sum_p_normal, ranks_and_ties,
    ratio_interval_any, smallest_p, step_up_cutoff, SMALL,
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
    let mut rows = Vec::new();
    for ((_, (cpu, kernel)), hosts) in groups {
        let medians: Vec<f64> = hosts
            .iter()
            .map(|h| median(&h.values).unwrap_or(0.0))
            .collect();
        let group_median = median(&medians).unwrap_or(0.0);
        // Every host's series against the rest of its group's: the pooled set is
        // the group's whole, so it is ranked once for all its hosts. Where the
        // splits cannot all be counted (more than 5 hosts of 5 series), the
        // test is the rank-sum's normal form (as scipy's beyond 8 a side): a
        // fleet judges thousands of hosts, and drawing 20,000 splits for each
        // took 2 s over 100 hosts × 100 cases.
        let pooled: Vec<f64> = hosts
            .iter()
            .flat_map(|h| h.values.iter().copied())
            .collect();
        let total = pooled.len();
        let large = total > SMALL || hosts.iter().any(|h| !exact_splits(h.values.len(), total));
        let (ranks, ties) = if large {
            ranks_and_ties(&pooled)
        } else {
            (Vec::new(), 0.0)
        };
        let mut at = 0;
        for (i, (h, &fig)) in hosts.iter().zip(&medians).enumerate() {
            let n = h.values.len();
            let mine = at..at + n;
            at += n;
            let others = || -> Vec<f64> {
                hosts
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .flat_map(|(_, o)| o.values.iter().copied())
                    .collect()
            };
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
            if peers < 2 {
                row.why = format!("{peers} peer(s) of its CPU model and kernel: none to judge by");
            } else if smallest_p(n, total - n) > ALPHA {
                row.why = format!("{n} series: too few to judge (take 4 or more: --repeat)");
            } else {
                let p = if large {
                    rank_sum_p_normal(ranks[mine].iter().sum(), n, total, ties)
                } else {
                    rank_sum_p(&h.values, &others())
                };
                row.p = Some(p);
                let beyond = ratio.is_finite() && ratio.ln().abs() > (1.0 + min_change).ln();
                row.why = format!("p {}", fmt_p(p));
                // The interval only decides a call the test and the threshold
                // would make: it is drawn for those alone.
                if p <= ALPHA && beyond {
                    let (lo, hi) = ratio_interval_any(&others(), &h.values);
                    row.interval = Some((lo, hi));
                    row.outlier = lo > 1.0 || hi < 1.0;
                    row.why
                        .push_str(&format!(", 95% interval {lo:.2}–{hi:.2}× its peers"));
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
                a.case.cmp(&b.case).then(a.host.cmp(&b.host))
            }
        })
    });
    rows
}

/// A figure as tables say it: µs for a round trip, cycles/s for a sync
/// primitive, MB/s for a stream.
pub fn fmt_figure(v: f64, lower_better: bool, case: &str) -> String {
    if lower_better {
        format!("{:.2} µs", v / 1e3)
    } else if case.starts_with("sync") {
        format!("{}/s", crate::units::fmt_rate(v))
    } else {
        format!("{:.0} MB/s", v / 1e6)
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
    pub p: Option<f64>,
    pub interval: Option<(f64, f64)>,
    /// A change beyond the noise.
    pub step: bool,
    pub why: String,
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
    /// Against the run before it.
    #[serde(flatten)]
    pub change: Change,
    pub lower_better: bool,
}

/// `ipcperf trend`: each case's runs in time (as the store gives them, oldest
/// first), each against the one before by compare's rules, Benjamini–Hochberg
/// over every neighbour compared.
pub fn trend(figs: &[CaseFigures], min_change: f64) -> Vec<TrendPoint> {
    let mut by_key: BTreeMap<&str, Vec<&CaseFigures>> = BTreeMap::new();
    for f in figs {
        by_key.entry(&f.key).or_default().push(f);
    }
    let mut out = Vec::new();
    for (key, mut runs) in by_key {
        runs.sort_by_key(|f| (f.started_ms, f.run_id));
        let mut prev: Option<&CaseFigures> = None;
        for f in runs {
            let med = median(&f.values).unwrap_or(0.0);
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
            };
            if let Some(b) = prev {
                let ratio = med / median(&b.values).unwrap_or(f64::NAN);
                pt.change = change(&b.values, &f.values, ratio, min_change);
            }
            prev = Some(f);
            out.push(pt);
        }
    }
    step_up(
        out.iter_mut().map(|r| &mut r.change).collect(),
        "neighbours",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fleet of `n` hosts with one CPU and kernel, each with its own series of
    /// the same figure (a seeded spread of ±3%); `scale` multiplies one host's.
    fn fleet(n: usize, odd: Option<(usize, f64)>) -> Vec<Entry> {
        let mut seed = 0x1234_5678_9abc_def1u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 10_000) as f64 / 10_000.0
        };
        (0..n)
            .map(|i| {
                let k = odd.filter(|(h, _)| *h == i).map_or(1.0, |(_, s)| s);
                Entry {
                    host: format!("node{i:02}"),
                    group: ("Xeon 8480".into(), "6.8.0".into()),
                    key: "stream pipe 64 KiB".into(),
                    values: (0..5).map(|_| 1e9 * k * (0.97 + 0.06 * next())).collect(),
                    lower_better: false,
                }
            })
            .collect()
    }

    #[test]
    fn an_a_a_fleet_names_no_outlier() {
        let rows = judge(&fleet(20, None), 0.05);
        assert_eq!(rows.len(), 20);
        assert!(rows.iter().all(|r| !r.outlier), "{rows:#?}");
        assert!(rows.iter().all(|r| r.p.is_some()));
    }

    #[test]
    fn a_host_at_half_speed_is_named_first() {
        let rows = judge(&fleet(13, Some((7, 0.5))), 0.05);
        assert!(rows[0].outlier, "{rows:#?}");
        assert_eq!(rows[0].host, "node07");
        assert!((rows[0].ratio - 0.5).abs() < 0.05, "{}", rows[0].ratio);
        assert_eq!(rows.iter().filter(|r| r.outlier).count(), 1, "{rows:#?}");
        let line = outlier_line(&rows[0]);
        assert!(
            line.starts_with("node07: stream pipe 64 KiB 0.5")
                && line.contains("its 12 peers (Xeon 8480, 6.8.0), p "),
            "{line}"
        );
    }

    #[test]
    fn a_lone_host_or_a_short_series_is_not_judged() {
        let mut f = fleet(2, Some((1, 0.5)));
        let rows = judge(&f, 0.05);
        assert!(rows.iter().all(|r| !r.outlier && r.why.contains("peer")));
        f = fleet(6, Some((1, 0.5)));
        for e in &mut f {
            e.values.truncate(1);
        }
        let rows = judge(&f, 0.05);
        assert!(
            rows.iter().all(|r| !r.outlier && r.why.contains("too few")),
            "{rows:#?}"
        );
    }

    #[test]
    fn kernels_sort_by_version() {
        let mut k = vec![
            "6.10.2",
            "6.8.0-45-generic",
            "6.1.0-31-amd64",
            "6.1.0-28-amd64",
            "5.15.0",
        ];
        k.sort_by(|a, b| version_cmp(a, b));
        assert_eq!(
            k,
            [
                "5.15.0",
                "6.1.0-28-amd64",
                "6.1.0-31-amd64",
                "6.8.0-45-generic",
                "6.10.2"
            ]
        );
    }

    #[test]
    fn a_kernel_step_is_called_and_a_steady_kernel_is_not() {
        // Kernels a, b at the same speed; c 20% slower; 8 hosts each.
        let mut all = Vec::new();
        for (kernel, k) in [("6.1.0", 1.0), ("6.5.0", 1.0), ("6.8.0", 0.8)] {
            for mut e in fleet(8, None) {
                e.group.1 = kernel.into();
                for v in &mut e.values {
                    *v *= k;
                }
                all.push(e);
            }
        }
        // The same seeds for every kernel would make a and b identical: vary b.
        for e in all.iter_mut().filter(|e| e.group.1 == "6.5.0") {
            for v in &mut e.values {
                *v *= 1.001;
            }
        }
        let rows = by_kernel(&all, 0.05);
        let kernels: Vec<&str> = rows.iter().map(|r| r.kernel.as_str()).collect();
        assert_eq!(kernels, ["6.1.0", "6.5.0", "6.8.0"]);
        assert!(!rows[0].change.step && rows[0].change.ratio.is_none());
        assert!(!rows[1].change.step, "{:?}", rows[1]);
        assert!(rows[2].change.step, "{:?}", rows[2]);
        assert!((rows[2].change.ratio.unwrap() - 0.8).abs() < 0.02);
    }

    #[test]
    fn a_large_group_is_judged_as_a_small_one_is() {
        // 400 hosts (2000 pooled figures: the normal form), one at 0.9×.
        let rows = judge(&fleet(400, Some((123, 0.9))), 0.05);
        let outliers: Vec<&HostRow> = rows.iter().filter(|r| r.outlier).collect();
        assert_eq!(outliers.len(), 1, "{:?}", &rows[..3]);
        assert_eq!(outliers[0].host, "node123");
        assert!(outliers[0].p.unwrap() < 0.001);
        let big = judge(&fleet(400, None), 0.05);
        assert!(big.iter().all(|r| !r.outlier));
    }

    #[test]
    fn a_trend_marks_the_step_and_nothing_else() {
        // One host's nightly runs of 10 series each (±3%): from night 7 on, half
        // speed. (Five series a night cannot carry a call over 11 neighbours:
        // their smallest p, 0.008, is above Benjamini–Hochberg's cutoff.)
        let mut seed = 0x5eed_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 10_000) as f64 / 10_000.0
        };
        let figs: Vec<CaseFigures> = (0..12)
            .map(|i| {
                let k = if i >= 7 { 0.5 } else { 1.0 };
                CaseFigures {
                    run_id: i,
                    started_ms: 1_000 * i as u64,
                    host: "node01".into(),
                    cpu_model: "x".into(),
                    kernel: "k".into(),
                    label: None,
                    key: "stream pipe 64 KiB".into(),
                    workload: "stream".into(),
                    values: (0..10).map(|_| 1e9 * k * (0.97 + 0.06 * next())).collect(),
                }
            })
            .collect();
        let pts = trend(&figs, 0.05);
        assert_eq!(pts.len(), 12);
        let steps: Vec<i64> = pts
            .iter()
            .filter(|p| p.change.step)
            .map(|p| p.run_id)
            .collect();
        assert_eq!(steps, [7], "{pts:#?}");
    }
}
