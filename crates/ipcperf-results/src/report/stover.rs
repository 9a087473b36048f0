//! Stover's relative-throughput table: each mechanism's time for a megabyte,
//! summed over the configurations every mechanism ran in, against the slowest.

use ipcperf_core::record::{CaseRecord, RunRecord};
use ipcperf_core::workload::Workload;

use super::strs;
use crate::export::cells::one_sided;
use crate::export::view::Table;

/// Stover's table: for the configurations (mode, block size, placement) every
/// mechanism ran in, each mechanism's total time per megabyte, and the slowest
/// total divided by each (1.00 for the slowest, larger is faster).
pub fn stover(run: &RunRecord) -> Option<Table> {
    let mut ok: Vec<&CaseRecord> = run
        .cases
        .iter()
        .filter(|c| c.workload == Workload::Stream)
        .filter(|c| c.median_bytes_per_sec.is_some_and(|m| m > 0.0))
        .collect();
    // One-sided references (null, memcpy) run in single mode only, so no
    // configuration had every mechanism and the default suite's report had no
    // Stover table at all: they are left out where two-sided ones ran.
    let mut left_out: Vec<String> = Vec::new();
    if ok.iter().any(|c| !one_sided(c)) {
        for c in ok.iter().filter(|c| one_sided(c)) {
            let l = crate::export::view::mechanism_label(c);
            if !left_out.contains(&l) {
                left_out.push(l);
            }
        }
        ok.retain(|c| !one_sided(c));
    }
    // Each mechanism as the tables name it: a wake or registered buffers make
    // a case of its own (shm (spin) is not summed with shm (futex)).
    let label = crate::export::view::mechanism_label;
    let mut mechs: Vec<String> = Vec::new();
    for c in &ok {
        let l = label(c);
        if !mechs.contains(&l) {
            mechs.push(l);
        }
    }
    if mechs.len() < 2 {
        return None;
    }
    let config = |c: &CaseRecord| (c.mode, c.block_size, c.placement.shown(), c.payload);
    let mut configs: Vec<_> = Vec::new();
    for c in &ok {
        let k = config(c);
        if !configs.contains(&k)
            && mechs
                .iter()
                .all(|m| ok.iter().any(|d| label(d) == *m && config(d) == k))
        {
            configs.push(k);
        }
    }
    if configs.is_empty() {
        return None;
    }
    // Seconds per MB summed over the shared configurations, like Stover's sums of run times.
    let sums: Vec<(&str, f64)> = mechs
        .iter()
        .map(|m| {
            let s = ok
                .iter()
                .filter(|c| label(c) == *m && configs.contains(&config(c)))
                .map(|c| 1e6 / c.median_bytes_per_sec.unwrap_or(1.0))
                .sum();
            (m.as_str(), s)
        })
        .collect();
    let slowest = sums.iter().map(|s| s.1).fold(0.0, f64::max);
    let mut rows: Vec<(&str, f64, f64)> = sums.iter().map(|&(m, s)| (m, s, slowest / s)).collect();
    rows.sort_by(|a, b| b.2.total_cmp(&a.2));
    Some(Table {
        title: "Stover's relative throughput: every mechanism against the slowest".into(),
        header: strs(&[
            "mechanism",
            "time for 1 MB, summed (ms)",
            "relative throughput",
        ]),
        rows: rows
            .iter()
            .map(|(m, s, r)| vec![m.to_string(), format!("{:.3}", s * 1e3), format!("{r:.2}")])
            .collect(),
        notes: std::iter::once(format!(
            "Summed over the {} configurations (mode, block size, placement) that every \
             mechanism ran in; 1.00 is the slowest, larger is faster.",
            configs.len()
        ))
        .chain((!left_out.is_empty()).then(|| {
            format!(
                "Not in it: {} (one side, no IPC; their figures are in the run's tables).",
                left_out.join(", ")
            )
        }))
        .collect(),
    })
}
