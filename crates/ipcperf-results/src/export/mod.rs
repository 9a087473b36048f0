//! Exporters: records in, text out. They know nothing of system calls.
//!
//! `view` arranges a run into titled tables of plain strings; the console table
//! and markdown render that same view. JSON is the run record itself; CSV is one
//! row per case.

pub mod cells;
pub mod csv;
pub mod emit;
pub mod explain;
pub mod idle;
pub mod latency;
pub mod list;
pub(crate) mod markdown;
pub mod metrics;
pub mod pairs;
pub mod pipeline;
pub mod replay;
pub mod sync;
pub mod table;
pub mod view;

use ipcperf_core::record::RunRecord;
use ipcperf_core::workload::Workload;

/// How a command writes its results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Csv,
    Markdown,
    OpenMetrics,
    Prometheus,
}

impl crate::choice::Choice for Format {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (
            Format::Table,
            "table",
            "Human-readable tables (the default)",
        ),
        (Format::Json, "json", ""),
        (Format::Csv, "csv", ""),
        (Format::Markdown, "markdown", ""),
        (
            Format::OpenMetrics,
            "openmetrics",
            "OpenMetrics text, each sample stamped with the run's start (backfill: \
             `promtool tsdb create-blocks-from openmetrics`)",
        ),
        (
            Format::Prometheus,
            "prometheus",
            "Prometheus text without timestamps (node_exporter's textfile collector, the \
             Pushgateway)",
        ),
    ];
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::choice::Choice;
        f.write_str(self.choice_name().unwrap_or("?"))
    }
}

impl Format {
    /// The metrics formats, which only runs have.
    pub fn is_metrics(self) -> bool {
        matches!(self, Format::OpenMetrics | Format::Prometheus)
    }

    /// For what is not a run (`what`: "the run history", "a comparison"): the
    /// metrics formats refused, in the one wording every command uses.
    pub fn refuse_metrics(self, what: &str) -> Result<(), crate::fail::Fail> {
        if self.is_metrics() {
            Err(self.not_a_run(what))
        } else {
            Ok(())
        }
    }

    /// The refusal itself, for a `match` on the format.
    pub fn not_a_run(self, what: &str) -> crate::fail::Fail {
        crate::fail::Fail::usage(format!(
            "--format {self} is for a run's figures (`ipcperf export ID --format {self}`), not \
             {what}: use table, json, csv or markdown"
        ))
    }
}

/// Render a run in `format`.
pub fn render(run: &RunRecord, format: Format, rank_size: Option<usize>) -> String {
    render_with(run, format, || view::build(run, rank_size))
}

/// Render a run in `format`, with a view of the caller's own for tables and
/// markdown (a subcommand that arranges its cases differently, e.g. `pipeline`).
pub fn render_with(run: &RunRecord, format: Format, view: impl FnOnce() -> view::View) -> String {
    match format {
        Format::Json => {
            let mut out = Vec::new();
            // Writing into memory fails only if a record cannot serialize.
            let _ = write_json(run, &mut out);
            let mut s = String::from_utf8(out).unwrap_or_default();
            s.push('\n');
            s
        }
        Format::Csv => csv::render(run),
        Format::OpenMetrics => metrics::render(run, metrics::Flavor::OpenMetrics),
        Format::Prometheus => metrics::render(run, metrics::Flavor::Prometheus),
        Format::Table => table::render(&view()),
        Format::Markdown => markdown::render(&view()),
    }
}

/// Write the run as `--format json` shows it (see [`json`]) to `w`, case by case:
/// no copy of the whole run is built as a JSON tree first.
/// The version of the JSON a run is written as (the book, docs/src/json.md): raised when a
/// field changes meaning or goes; new fields may come within a version. Import
/// reads any version it knows and ignores fields it does not.
/// 2: `block_size` became `block_size_bytes` (import reads both).
pub const SCHEMA_VERSION: u32 = 2;

pub fn write_json(run: &RunRecord, w: impl std::io::Write) -> serde_json::Result<()> {
    use serde::ser::{SerializeSeq, SerializeStruct};
    struct Cases<'a>(&'a [ipcperf_core::record::CaseRecord]);
    impl serde::Serialize for Cases<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut seq = s.serialize_seq(Some(self.0.len()))?;
            for c in self.0 {
                seq.serialize_element(&case_json(c).map_err(serde::ser::Error::custom)?)?;
            }
            seq.end()
        }
    }
    struct Run<'a>(&'a RunRecord);
    impl serde::Serialize for Run<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let r = self.0;
            // The fields of RunRecord, in its order.
            let mut st = s.serialize_struct("RunRecord", 8)?;
            st.serialize_field("schema_version", &SCHEMA_VERSION)?;
            st.serialize_field("ipcperf_version", &r.ipcperf_version)?;
            if let Some(l) = &r.label {
                st.serialize_field("label", l)?;
            }
            st.serialize_field("command_line", &r.command_line)?;
            if !r.kind.is_empty() {
                st.serialize_field("kind", &r.kind)?;
            }
            st.serialize_field("started_ms", &r.started_ms)?;
            st.serialize_field("finished_ms", &r.finished_ms)?;
            st.serialize_field("complete", &r.complete)?;
            st.serialize_field("machine", &r.machine)?;
            st.serialize_field("cases", &Cases(&r.cases))?;
            st.end()
        }
    }
    serde_json::to_writer_pretty(w, &Run(run))
}

/// One case as JSON, with a sync case's headline figures (`primitive`,
/// `request_release_per_sec`, `set_clear_per_sec`) also at the top level of the
/// case, beside `mechanism` and `mode`, as round-trip cases carry `p50_ns`. The
/// record itself keeps them in its `sync` section; import ignores the copies.
fn case_json(c: &ipcperf_core::record::CaseRecord) -> serde_json::Result<serde_json::Value> {
    let mut v = serde_json::to_value(c)?;
    if let Some(obj) = v.as_object_mut() {
        if let Some(sync) = obj.get("sync").and_then(|s| s.as_object()).cloned() {
            for key in ["primitive", "request_release_per_sec", "set_clear_per_sec"] {
                if let Some(x) = sync.get(key) {
                    obj.entry(key).or_insert_with(|| x.clone());
                }
            }
        }
    }
    Ok(v)
}

/// Render a run of round-trip cases in `format`; `half_rtt` adds RTT/2 columns,
/// labelled half-rtt.
pub fn render_latency(run: &RunRecord, format: Format, half_rtt: bool) -> String {
    match format {
        Format::Json | Format::Csv | Format::OpenMetrics | Format::Prometheus => {
            render(run, format, None)
        }
        Format::Table => table::render(&latency::build(run, half_rtt)),
        Format::Markdown => markdown::render(&latency::build(run, half_rtt)),
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
            Workload::Replay => replay::build(r),
        })
        .collect()
}

/// Render a kept run, whatever workloads it holds (`show`, `export`). JSON is the
/// whole record; other formats show each workload with its own view.
pub fn render_any(run: &RunRecord, format: Format, rank_size: Option<usize>) -> String {
    let parts = split(run);
    if format == Format::Json
        || format.is_metrics()
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
            Workload::Replay => replay::render(r, format),
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
