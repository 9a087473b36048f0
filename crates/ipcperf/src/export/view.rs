//! A run arranged for people: one table per mechanism and mode, block sizes down,
//! placements side by side; then a ranking at one block size, relative to the
//! slowest (Stover's relative-throughput row).

use ipcperf_core::record::{CaseRecord, CaseStatus, RunRecord};

use crate::units::{fmt_mbps, fmt_rate, fmt_size};

/// A titled table of strings.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

/// Everything a person reads about a run.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    pub heading: String,
    pub tables: Vec<Table>,
}

fn group_key(c: &CaseRecord) -> (String, String, String) {
    (
        c.mechanism.clone(),
        c.mode.name().to_string(),
        c.payload.name().to_string(),
    )
}

/// The three cells of one case: MB/s (min–max), blocks/s, CPUs busy.
fn cells(c: &CaseRecord) -> [String; 3] {
    match (c.status.clone(), c.median_bytes_per_sec) {
        (CaseStatus::Ok, Some(m)) => [
            format!(
                "{} ({}–{})",
                fmt_mbps(m),
                fmt_mbps(c.min_bytes_per_sec.unwrap_or(m)),
                fmt_mbps(c.max_bytes_per_sec.unwrap_or(m))
            ),
            fmt_rate(c.median_blocks_per_sec.unwrap_or(0.0)),
            c.median_cpu_load
                .map(|l| format!("{l:.2}"))
                .unwrap_or_else(|| "-".into()),
        ],
        (CaseStatus::Refused, _) => ["skipped".into(), "-".into(), "-".into()],
        _ => ["FAILED".into(), "-".into(), "-".into()],
    }
}

pub fn build(run: &RunRecord, rank_size: Option<usize>) -> View {
    let m = &run.machine;
    let heading = format!(
        "ipcperf {} on {} (Linux {}, {} CPUs, {})",
        run.ipcperf_version, m.hostname, m.kernel, m.cpus, m.cpu_model
    );
    let mut tables = Vec::new();

    // One table per (mechanism, mode, payload), in the order they ran.
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for c in &run.cases {
        let k = group_key(c);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for k in keys {
        let cases: Vec<&CaseRecord> = run.cases.iter().filter(|c| group_key(c) == k).collect();
        let mut placements: Vec<String> = Vec::new();
        let mut sizes: Vec<u64> = Vec::new();
        for c in &cases {
            if !placements.contains(&c.placement.label) {
                placements.push(c.placement.label.clone());
            }
            if !sizes.contains(&c.block_size) {
                sizes.push(c.block_size);
            }
        }
        let mut header = vec!["block".to_string()];
        for p in &placements {
            header.push(format!("{p} MB/s (min–max)"));
            header.push(format!("{p} blocks/s"));
            header.push("CPUs busy".to_string());
        }
        let mut rows = Vec::new();
        let mut notes = Vec::new();
        for s in &sizes {
            let mut row = vec![fmt_size(*s)];
            for p in &placements {
                match cases
                    .iter()
                    .find(|c| c.block_size == *s && &c.placement.label == p)
                {
                    Some(c) => {
                        row.extend(cells(c));
                        if let Some(msg) = &c.message {
                            let note = format!("{} {}: {msg}", fmt_size(*s), p);
                            if !notes.contains(&note) {
                                notes.push(note);
                            }
                        }
                    }
                    None => row.extend(["-".to_string(), "-".into(), "-".into()]),
                }
            }
            rows.push(row);
        }
        let first = cases[0];
        let mut title = format!("{} · {} · {}", k.0, k.1, k.2);
        if first.wait != "block" {
            title.push_str(&format!(" · wait={}", first.wait));
        }
        if first.include_setup {
            title.push_str(" · set-up included");
        }
        let opts: Vec<String> = first
            .options
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if !opts.is_empty() {
            title.push_str(&format!(" · {}", opts.join(" ")));
        }
        tables.push(Table {
            title,
            header,
            rows,
            notes,
        });
    }

    if let Some(t) = ranking(run, rank_size) {
        tables.push(t);
    }
    View { heading, tables }
}

/// Every case that ran at one block size, fastest first, relative to the slowest.
fn ranking(run: &RunRecord, rank_size: Option<usize>) -> Option<Table> {
    let ok: Vec<&CaseRecord> = run
        .cases
        .iter()
        .filter(|c| c.median_bytes_per_sec.is_some())
        .collect();
    let size = match rank_size {
        Some(s) => s as u64,
        None if ok.iter().any(|c| c.block_size == 65536) => 65536,
        None => ok.iter().map(|c| c.block_size).max()?,
    };
    let mut at: Vec<&CaseRecord> = ok.into_iter().filter(|c| c.block_size == size).collect();
    if at.len() < 2 {
        return None;
    }
    at.sort_by(|a, b| {
        b.median_bytes_per_sec
            .unwrap_or(0.0)
            .total_cmp(&a.median_bytes_per_sec.unwrap_or(0.0))
    });
    let slowest = at.last()?.median_bytes_per_sec?;
    let rows = at
        .iter()
        .map(|c| {
            let m = c.median_bytes_per_sec.unwrap_or(0.0);
            vec![
                c.mechanism.clone(),
                c.mode.name().to_string(),
                c.placement.label.clone(),
                fmt_mbps(m),
                format!("{:.2}×", m / slowest),
            ]
        })
        .collect();
    Some(Table {
        title: format!(
            "Ranking at {}: throughput relative to the slowest",
            fmt_size(size)
        ),
        header: ["mechanism", "mode", "placement", "MB/s", "relative"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        rows,
        notes: vec![
            "MB/s = 10^6 bytes per second; median over the series (min–max)".into(),
            "CPUs busy = CPU time of writer + reader / wall time (1.00 = one CPU fully busy)"
                .into(),
        ],
    })
}
