//! Exporters: records in, text out. They know nothing of system calls.
//!
//! `view` arranges a run into titled tables of plain strings; the console table
//! and markdown render that same view. JSON is the run record itself; CSV is one
//! row per case.

mod csv;
pub mod latency;
mod markdown;
pub mod sync;
mod table;
pub mod view;

#[cfg(test)]
mod snapshot_tests;

use ipcperf_core::record::RunRecord;
use ipcperf_core::workload::Workload;

use crate::cli::Format;

/// Render a run in `format`.
pub fn render(run: &RunRecord, format: Format, rank_size: Option<usize>) -> String {
    render_with(run, format, || view::build(run, rank_size))
}

/// Render a run in `format`, with a view of the caller's own for tables and
/// markdown (a subcommand that arranges its cases differently, e.g. `pipeline`).
pub fn render_with(run: &RunRecord, format: Format, view: impl FnOnce() -> view::View) -> String {
    match format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&json(run)).expect("records serialize");
            s.push('\n');
            s
        }
        Format::Csv => csv::render(run),
        Format::Table => table::render(&view()),
        Format::Markdown => markdown::render(&view()),
    }
}

/// The run record as JSON, with a sync case's headline figures (`primitive`,
/// `request_release_per_sec`, `set_clear_per_sec`) also at the top level of the
/// case, beside `mechanism` and `mode`, as round-trip cases carry `p50_ns`. The
/// record itself keeps them in its `sync` section; import ignores the copies.
pub fn json(run: &RunRecord) -> serde_json::Value {
    let mut v = serde_json::to_value(run).expect("records serialize");
    if let Some(cases) = v.get_mut("cases").and_then(|c| c.as_array_mut()) {
        for c in cases {
            let Some(obj) = c.as_object_mut() else {
                continue;
            };
            let Some(sync) = obj.get("sync").and_then(|s| s.as_object()).cloned() else {
                continue;
            };
            for key in ["primitive", "request_release_per_sec", "set_clear_per_sec"] {
                if let Some(x) = sync.get(key) {
                    obj.entry(key).or_insert_with(|| x.clone());
                }
            }
        }
    }
    v
}

/// Render a run of round-trip cases in `format`; `one_way` adds RTT/2 columns, labelled.
pub fn render_latency(run: &RunRecord, format: Format, one_way: bool) -> String {
    match format {
        Format::Json | Format::Csv => render(run, format, None),
        Format::Table => table::render(&latency::build(run, one_way)),
        Format::Markdown => markdown::render(&latency::build(run, one_way)),
    }
}

/// The run's cases grouped by workload, each group shown by its own view, in the
/// order the workloads first appear.
pub fn split(run: &RunRecord) -> Vec<(Workload, RunRecord)> {
    let mut order: Vec<Workload> = Vec::new();
    for c in &run.cases {
        if !order.contains(&c.workload) {
            order.push(c.workload);
        }
    }
    order
        .into_iter()
        .map(|w| {
            let mut r = run.clone();
            r.cases.retain(|c| c.workload == w);
            (w, r)
        })
        .collect()
}

/// The views of a kept run, whatever workloads it holds.
pub fn views(run: &RunRecord, rank_size: Option<usize>) -> Vec<view::View> {
    let parts = split(run);
    if parts.is_empty() {
        return vec![view::build(run, rank_size)];
    }
    parts
        .iter()
        .map(|(w, r)| match w {
            Workload::Stream => view::build(r, rank_size),
            Workload::RoundTrip => latency::build(r, false),
            Workload::Sync => sync::build(r),
        })
        .collect()
}

/// Render a kept run, whatever workloads it holds (`show`, `export`). JSON is the
/// whole record; other formats show each workload with its own view.
pub fn render_any(run: &RunRecord, format: Format, rank_size: Option<usize>) -> String {
    let parts = split(run);
    if format == Format::Json
        || parts.len() <= 1 && parts.first().is_none_or(|p| p.0 == Workload::Stream)
    {
        return render(run, format, rank_size);
    }
    parts
        .iter()
        .map(|(w, r)| match w {
            Workload::Stream => render(r, format, rank_size),
            Workload::RoundTrip => render_latency(r, format, false),
            Workload::Sync => sync::render(r, format),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Render an already built view as a table (markdown for `Format::Markdown`).
pub fn render_view(v: &view::View, format: Format) -> String {
    match format {
        Format::Markdown => markdown::render(v),
        _ => table::render(v),
    }
}
