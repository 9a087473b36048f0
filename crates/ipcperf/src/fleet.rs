//! `ipcperf fleet`: many hosts in one history, compared with their peers. For each
//! case, each host's newest figure (its series from its newest complete run that
//! has the case); hosts grouped by CPU model and kernel; each host's ratio to its
//! group's median; an outlier only beyond the noise, by compare's rules: the
//! rank-sum test of the host's series against its peers' pooled series, the 95%
//! bootstrap interval of the ratio excluding 1, a change past the threshold, and
//! Benjamini–Hochberg over every host and case judged together.

use std::collections::BTreeMap;

use ipcperf_core::record::{CaseRecord, CaseStatus, RunRecord};
use ipcperf_core::stats::median;

use crate::compare::stats::{rank_sum_p, ratio_interval, smallest_p, step_up_cutoff};
use crate::compare::ALPHA;

/// One host's figure for one case.
#[derive(Debug, Clone)]
pub struct Entry {
    pub host: String,
    /// CPU model and kernel: the peers a host is held against.
    pub group: (String, String),
    pub run_started_ms: u64,
    /// compare's identity of the case, and how tables show it.
    pub key: String,
    pub shown: String,
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

/// The cases the fleet shows by default: the default suite's 64 KiB streams and
/// its 512 B round trips.
pub fn default_case(c: &CaseRecord) -> bool {
    use ipcperf_core::kind::Workload;
    match c.workload {
        Workload::Stream => c.block_size == 64 << 10,
        Workload::RoundTrip => c.block_size == 512,
        Workload::Sync => false,
    }
}

/// Each host's newest figure for each case `pick` takes, from complete runs.
pub fn entries(runs: &[RunRecord], pick: &dyn Fn(&CaseRecord) -> bool) -> Vec<Entry> {
    let mut newest: BTreeMap<(String, String), Entry> = BTreeMap::new();
    for r in runs.iter().filter(|r| r.complete) {
        for c in r
            .cases
            .iter()
            .filter(|c| c.status == CaseStatus::Ok && c.pairs.is_none() && pick(c))
        {
            let f = crate::compare::figure(c);
            if f.values.is_empty() {
                continue;
            }
            let e = Entry {
                host: r.machine.hostname.clone(),
                group: (r.machine.cpu_model.clone(), r.machine.kernel.clone()),
                run_started_ms: r.started_ms,
                key: crate::compare::key(c),
                shown: crate::compare::shown_one(c),
                values: f.values,
                lower_better: f.lower_better,
            };
            let slot = (e.host.clone(), e.key.clone());
            if newest
                .get(&slot)
                .is_none_or(|old| old.run_started_ms < e.run_started_ms)
            {
                newest.insert(slot, e);
            }
        }
    }
    newest.into_values().collect()
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
        for (h, &fig) in hosts.iter().zip(&medians) {
            let others: Vec<f64> = hosts
                .iter()
                .filter(|o| o.host != h.host)
                .flat_map(|o| o.values.iter().copied())
                .collect();
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
                case: h.shown.clone(),
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
            } else if smallest_p(h.values.len(), others.len()) > ALPHA {
                row.why = format!(
                    "{} series: too few to judge (take 4 or more: --repeat)",
                    h.values.len()
                );
            } else {
                let p = rank_sum_p(&h.values, &others);
                let (lo, hi) = ratio_interval(&others, &h.values);
                row.p = Some(p);
                row.interval = Some((lo, hi));
                let beyond = ratio.is_finite() && ratio.ln().abs() > (1.0 + min_change).ln();
                row.outlier = p <= ALPHA && (lo > 1.0 || hi < 1.0) && beyond;
                row.why = format!("p {}, 95% interval {lo:.2}–{hi:.2}× its peers", fmt_p(p));
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
                    run_started_ms: 1,
                    key: "stream pipe 64 KiB".into(),
                    shown: "pipe 64 KiB".into(),
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
            line.starts_with("node07: pipe 64 KiB 0.5")
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
}
