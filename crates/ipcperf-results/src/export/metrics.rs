//! Prometheus' two text formats, one sample per case and figure, units in the
//! names, the case in labels:
//! - `openmetrics`: OpenMetrics 1.0 (`# TYPE`, `# UNIT`, `# EOF`), each sample
//!   stamped with the run's start (seconds): what `promtool tsdb
//!   create-blocks-from openmetrics` backfills a Prometheus from.
//! - `prometheus`: the classic text format without timestamps, as node_exporter's
//!   textfile collector and the Pushgateway take it (both refuse client-side
//!   timestamps); `promtool check metrics` lints it.
//!
//! Families: `ipcperf_throughput_bytes_per_second` (a stream's median over its
//! series), `ipcperf_round_trip_seconds` (a summary: p50, p99, p99.9, with the
//! count of round trips and their sum), `ipcperf_sync_cycles_per_second`
//! (request/release and set/clear), and `ipcperf_run_info` (the run's host,
//! kernel, CPU model, version, label).

use std::collections::BTreeSet;
use std::fmt::Write;

use ipcperf_core::record::{CaseRecord, CaseStatus, RunRecord};

/// Which of the two text formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    OpenMetrics,
    Prometheus,
}

/// A label value as both formats escape it: backslash, double quote, newline.
fn escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for ch in v.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

fn labels(pairs: &[(&str, String)]) -> String {
    // An empty value is no label at all to Prometheus: left out.
    let inner: Vec<String> = pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// A number as both formats read it (no exponent surprises, NaN spelled).
fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "NaN".into()
    }
}

/// One metric family: its name, type, unit and help, and its sample lines.
struct Family {
    name: &'static str,
    kind: &'static str,
    unit: &'static str,
    help: &'static str,
    samples: Vec<String>,
    /// Label sets already written (a duplicate series is left out).
    seen: BTreeSet<String>,
}

impl Family {
    fn new(name: &'static str, kind: &'static str, unit: &'static str, help: &'static str) -> Self {
        Family {
            name,
            kind,
            unit,
            help,
            samples: Vec::new(),
            seen: BTreeSet::new(),
        }
    }
}

/// The labels that name a case: what it measured, where, on which host.
fn case_labels(run: &RunRecord, c: &CaseRecord) -> Vec<(&'static str, String)> {
    let cpu = |v: Option<usize>| v.map(|c| c.to_string()).unwrap_or_default();
    let mut v = vec![
        ("host", run.machine.hostname.clone()),
        ("mechanism", super::cells::mechanism_label(c)),
        ("mode", c.mode.name().to_string()),
        ("placement", c.placement.label.clone()),
        ("writer_cpu", cpu(c.placement.writer_cpu)),
        ("reader_cpu", cpu(c.placement.reader_cpu)),
    ];
    if c.sync.is_none() {
        v.push(("block_bytes", c.block_size.to_string()));
    }
    // A case held at an idle state (`--idle`; advise's polling twins) is
    // another series than the same case as-is, which the exporter dropped as a
    // repeat of the first.
    if let Some(idle) = c.options.get("idle") {
        v.push(("idle", idle.clone()));
    }
    v
}

/// Render the run's figures in `flavor`.
pub fn render(run: &RunRecord, flavor: Flavor) -> String {
    let stamp = match flavor {
        // The run's start, in seconds (OpenMetrics' timestamps).
        Flavor::OpenMetrics => format!(" {}", num(run.started_ms as f64 / 1e3)),
        Flavor::Prometheus => String::new(),
    };
    let mut info = Family::new(
        "ipcperf_run_info",
        "gauge",
        "",
        "The run: host, kernel, CPU model, ipcperf version, label (always 1).",
    );
    let mut tput = Family::new(
        "ipcperf_throughput_bytes_per_second",
        "gauge",
        "bytes_per_second",
        "A stream's throughput: the median of its series.",
    );
    let mut rtt = Family::new(
        "ipcperf_round_trip_seconds",
        "summary",
        "seconds",
        "Round-trip latency: p50, p99 and p99.9 of every round trip, their count and sum.",
    );
    let mut sync = Family::new(
        "ipcperf_sync_cycles_per_second",
        "gauge",
        "",
        "A synchronization primitive's cycles per second, tare subtracted (cycle: request-release or set-clear).",
    );
    // `topology --measure`'s pairs (a run of them alone held only its info line).
    let mut pair = Family::new(
        "ipcperf_cpu_pair_one_way_seconds",
        "gauge",
        "seconds",
        "A measured pair of CPUs' one-way latency: half a cache-line ping-pong's round trip.",
    );
    let m = &run.machine;
    for p in m.measured.iter().flat_map(|x| &x.pairs) {
        let class = m.topology.as_ref().and_then(|t| t.classify(p.ping, p.pong));
        pair.samples.push(format!(
            "{}{} {}{stamp}",
            pair.name,
            labels(&[
                ("host", m.hostname.clone()),
                ("ping", p.ping.to_string()),
                ("pong", p.pong.to_string()),
                ("sysfs_class", class.map_or("", |c| c.name()).to_string()),
            ]),
            num(p.one_way_ns / 1e9)
        ));
    }
    info.samples.push(format!(
        "ipcperf_run_info{} 1{stamp}",
        labels(&[
            ("host", m.hostname.clone()),
            ("kernel", m.kernel.clone()),
            ("cpu_model", m.cpu_model.clone()),
            ("ipcperf_version", run.ipcperf_version.clone()),
            ("label", run.label.clone().unwrap_or_default()),
        ])
    ));
    for c in run.cases.iter().filter(|c| c.status == CaseStatus::Ok) {
        let base = case_labels(run, c);
        let key = labels(&base);
        if let Some(s) = &c.sync {
            for (cycle, v) in [
                ("request-release", s.request_release_per_sec),
                ("set-clear", s.set_clear_per_sec),
            ] {
                let Some(v) = v else { continue };
                let mut l = base.clone();
                l.push(("cycle", cycle.into()));
                let l = labels(&l);
                if sync.seen.insert(l.clone()) {
                    sync.samples
                        .push(format!("{}{l} {}{stamp}", sync.name, num(v)));
                }
            }
        } else if let Some(lat) = &c.latency {
            if !rtt.seen.insert(key.clone()) {
                continue;
            }
            for (q, ns) in [
                ("0.5", lat.p50_ns),
                ("0.99", lat.p99_ns),
                ("0.999", lat.p999_ns),
            ] {
                let mut l = base.clone();
                l.push(("quantile", q.into()));
                rtt.samples.push(format!(
                    "{}{} {}{stamp}",
                    rtt.name,
                    labels(&l),
                    num(ns as f64 / 1e9)
                ));
            }
            rtt.samples.push(format!(
                "{}_sum{key} {}{stamp}",
                rtt.name,
                num(lat.mean_ns * lat.round_trips as f64 / 1e9)
            ));
            rtt.samples.push(format!(
                "{}_count{key} {}{stamp}",
                rtt.name, lat.round_trips
            ));
        } else if let Some(bps) = c.median_bytes_per_sec {
            if tput.seen.insert(key.clone()) {
                tput.samples
                    .push(format!("{}{key} {}{stamp}", tput.name, num(bps)));
            }
        }
    }
    let mut out = String::new();
    for f in [&info, &tput, &rtt, &sync, &pair] {
        if f.samples.is_empty() {
            continue;
        }
        let _ = writeln!(out, "# HELP {} {}", f.name, f.help);
        let _ = writeln!(out, "# TYPE {} {}", f.name, f.kind);
        if flavor == Flavor::OpenMetrics && !f.unit.is_empty() {
            let _ = writeln!(out, "# UNIT {} {}", f.name, f.unit);
        }
        for s in &f.samples {
            out.push_str(s);
            out.push('\n');
        }
    }
    if flavor == Flavor::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ok_case_is_a_sample_with_its_labels_and_the_run_time() {
        let run = crate::testdata::run();
        let om = render(&run, Flavor::OpenMetrics);
        assert!(om.ends_with("# EOF\n"), "{om}");
        assert!(om.contains("# UNIT ipcperf_throughput_bytes_per_second bytes_per_second"));
        let stamp = format!(" {}", num(run.started_ms as f64 / 1e3));
        let ok = run
            .cases
            .iter()
            .filter(|c| c.status == CaseStatus::Ok && c.median_bytes_per_sec.is_some())
            .count();
        let samples: Vec<&str> = om
            .lines()
            .filter(|l| l.starts_with("ipcperf_throughput_bytes_per_second{"))
            .collect();
        assert_eq!(samples.len(), ok, "{om}");
        assert!(samples.iter().all(|l| l.ends_with(&stamp)), "{om}");
        assert!(samples[0].contains("mechanism=\""), "{om}");
        // The Prometheus flavor: the same samples, no timestamps, no UNIT or EOF.
        let p = render(&run, Flavor::Prometheus);
        assert!(!p.contains("# EOF") && !p.contains("# UNIT"), "{p}");
        let ps: Vec<&str> = p
            .lines()
            .filter(|l| l.starts_with("ipcperf_throughput_bytes_per_second{"))
            .collect();
        assert_eq!(ps.len(), ok);
        assert!(ps.iter().all(|l| l.split(' ').count() == 2), "{p}");
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
