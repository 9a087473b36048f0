//! A pipeline run (`ipcperf pipeline`) as Stover's two tables: times over the
//! rounds, then throughput relative to the slowest.

use ipcperf_core::record::{CaseRecord, CaseStatus, RunRecord};
use ipcperf_core::stats::spread;

use super::view;
use crate::units::{fmt_mbps, fmt_size};

/// The seconds of each series of a case.
pub fn seconds(c: &CaseRecord) -> Vec<f64> {
    c.series.iter().map(|s| s.elapsed_ns as f64 / 1e9).collect()
}

/// A kept pipeline run's view (`show`): the methods, bytes, chunk and rounds read
/// back from its records (each case's mechanism and `what` option, its series).
pub fn view_of(run: &RunRecord) -> view::View {
    let labels: Vec<(String, String)> = run
        .cases
        .iter()
        .map(|c| {
            let what = c.options.get("what").cloned().unwrap_or_default();
            (c.mechanism.clone(), what)
        })
        .collect();
    let first = run.cases.iter().find(|c| !c.series.is_empty());
    let bytes = first.and_then(|c| c.series.first()).map_or(0, |s| s.bytes) as usize;
    let chunk = first.map_or(0, |c| c.block_size) as usize;
    let repeat = first.map_or(0, |c| c.series.len()) as u32;
    build_view(run, &labels, bytes, chunk, repeat)
}

/// Stover's two tables: times over the rounds, then throughput relative to the
/// slowest. `labels`: each case's method name and what runs, in the cases' order.
pub fn build_view(
    run: &RunRecord,
    labels: &[(String, String)],
    bytes: usize,
    chunk: usize,
    repeat: u32,
) -> view::View {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut medians = Vec::new();
    let mut noisy = Vec::new();
    for ((name, label), c) in labels.iter().zip(&run.cases) {
        match spread(&seconds(c)) {
            Some(s) if c.is_ok() => {
                rows.push(vec![
                    name.clone(),
                    label.clone(),
                    format!("{:.3}", s.min),
                    format!("{:.3}", s.median),
                    format!("{:.3}", s.max),
                    fmt_mbps(bytes as f64 / s.median),
                    c.median_cpu_load
                        .map_or_else(|| "-".into(), |l| format!("{l:.2}")),
                ]);
                medians.push((name.as_str(), s.median));
                if let Some(sd) = view::noise_sd(c) {
                    noisy.push(format!("{name} {:.1}%", sd * 100.0));
                }
            }
            _ => {
                let status = if c.status == CaseStatus::Refused {
                    "skipped"
                } else {
                    "FAILED"
                };
                rows.push(vec![
                    name.clone(),
                    label.clone(),
                    status.into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                ]);
                notes.push(format!(
                    "{name}: {}",
                    c.message.as_deref().unwrap_or("no result")
                ));
            }
        }
    }
    if !noisy.is_empty() {
        // One line for them all, as a run's table says its noisy cells.
        notes.push(format!(
            "noisy (rounds vary by > {:.0}%, standard deviation): {}; --repeat or a \
                 quieter machine steadies them",
            ipcperf_core::stats::NOISY_SD * 100.0,
            noisy.join(", ")
        ));
    }
    notes.push(
        "shell methods: ipcperf gen and sink through /bin/sh, random printable ASCII, the \
         sink's byte count checked; ipcperf's mechanisms: its own writer and reader loops \
         (payload touched, an untimed warm-up before each round)"
            .into(),
    );
    notes.push("MB/s = 10^6 bytes per second at the median time".into());
    notes.push("CPUs busy = CPU time of all the method's processes / wall time (median)".into());
    let times = view::Table {
        title: format!(
            "Stover's pipelines: {} in {} chunks, {repeat} round{}; seconds from start to the last process's exit",
            fmt_size(bytes as u64),
            fmt_size(chunk as u64),
            if repeat == 1 { "" } else { "s" }
        ),
        header: [
            "method",
            "what runs",
            "min s",
            "median s",
            "max s",
            "MB/s",
            "CPUs busy",
        ]
            .map(String::from)
            .to_vec(),
        rows,
        notes,
    };
    let mut tables = vec![times];
    if let Some(slowest) = medians.iter().map(|m| m.1).reduce(f64::max) {
        let mut header = vec![String::new()];
        let mut row = vec!["relative".to_string()];
        for (name, t) in &medians {
            header.push(name.to_string());
            row.push(format!("{:.2}", slowest / t));
        }
        tables.push(view::Table {
            title: "Throughput relative to the slowest (Stover's row; median times)".into(),
            header,
            rows: vec![row],
            notes: Vec::new(),
        });
    }
    view::View {
        heading: view::heading(run),
        tables,
    }
}
