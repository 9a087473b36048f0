//! The report's opening: what each run measured and its headline figures, then
//! each comparison's verdict and A against B on one chart. Every figure is read
//! from the runs shown; nothing is said that a table below does not hold.

use ipcperf_core::record::{CaseRecord, CaseStatus, RunRecord};
use ipcperf_core::workload::Workload;

use crate::compare;
use crate::export::cells::one_sided;
use crate::export::latency::fmt_us;
use crate::export::view::mechanism_label;
use crate::units::{fmt_mbps, fmt_rate, fmt_size};

/// A case as a headline names it; `mixed`: the run holds cases at polling
/// idle beside as-is ones, and the place says which.
fn who(c: &CaseRecord, mixed: bool) -> String {
    format!(
        "{} {} {}",
        mechanism_label(c),
        c.mode.name(),
        crate::export::cells::place(c, mixed)
    )
}

/// The headline figures of a run, one sentence each.
pub fn headlines(run: &RunRecord) -> Vec<String> {
    let mut v = Vec::new();
    let mixed = crate::export::cells::idle_mixed(&run.cases);
    let ok = |w: Workload| {
        run.cases
            .iter()
            .filter(move |c| c.workload == w && c.status == CaseStatus::Ok)
    };
    // Streams: the fastest and the slowest at the ranking size (64 KiB when
    // measured, else the largest).
    let mut streams: Vec<&CaseRecord> = ok(Workload::Stream)
        .filter(|c| c.median_bytes_per_sec.is_some_and(|m| m > 0.0))
        .collect();
    // A reference with one side (null, memcpy: bytes moved without IPC) is no
    // stream between processes: "fastest stream: null" named it the winner.
    if streams.iter().any(|c| !one_sided(c)) {
        streams.retain(|c| !one_sided(c));
    }
    let size = if streams.iter().any(|c| c.block_size == 65536) {
        Some(65536)
    } else {
        streams.iter().map(|c| c.block_size).max()
    };
    if let Some(size) = size {
        let at: Vec<&&CaseRecord> = streams.iter().filter(|c| c.block_size == size).collect();
        let by = |c: &&&CaseRecord| c.median_bytes_per_sec.unwrap_or(0.0);
        if let (Some(hi), Some(lo)) = (
            at.iter().max_by(|a, b| by(a).total_cmp(&by(b))),
            at.iter().min_by(|a, b| by(a).total_cmp(&by(b))),
        ) {
            let (h, l) = (by(hi), by(lo));
            v.push(if at.len() > 1 {
                format!(
                    "Fastest stream at {}: {} at {} MB/s; slowest: {} at {} MB/s ({:.1}× apart).",
                    fmt_size(size),
                    who(hi, mixed),
                    fmt_mbps(h),
                    who(lo, mixed),
                    fmt_mbps(l),
                    h / l
                )
            } else {
                format!(
                    "Stream at {}: {} at {} MB/s.",
                    fmt_size(size),
                    who(hi, mixed),
                    fmt_mbps(h)
                )
            });
        }
    }
    // Round trips: the lowest and highest p50.
    let trips: Vec<&CaseRecord> = ok(Workload::RoundTrip)
        .filter(|c| c.latency.as_ref().is_some_and(|l| l.round_trips > 0))
        .collect();
    let p50 = |c: &CaseRecord| c.latency.as_ref().map_or(0, |l| l.p50_ns);
    let lowest = trips.iter().copied().min_by_key(|c| p50(c));
    let highest = trips.iter().copied().max_by_key(|c| p50(c));
    if let (Some(lo), Some(hi)) = (lowest, highest) {
        v.push(if trips.len() > 1 {
            format!(
                "Lowest p50 round trip: {} ({} µs, {} B); highest: {} ({} µs).",
                who(lo, mixed),
                fmt_us(p50(lo) as f64),
                lo.block_size,
                who(hi, mixed),
                fmt_us(p50(hi) as f64)
            )
        } else {
            format!(
                "p50 round trip: {} µs ({}).",
                fmt_us(p50(lo) as f64),
                who(lo, mixed)
            )
        });
    }
    // Sync: the fastest set/clear.
    let sync = ok(Workload::Sync).filter_map(|c| {
        let s = c.sync.as_ref()?;
        Some((s.set_clear_per_sec?, &s.primitive, c))
    });
    if let Some((r, p, c)) = sync.max_by(|a, b| a.0.total_cmp(&b.0)) {
        v.push(format!(
            "Fastest set/clear: {p} ({} {}) at {} cycles/s.",
            c.mode.name(),
            c.placement.shown(),
            fmt_rate(r)
        ));
    }
    let refused = run
        .cases
        .iter()
        .filter(|c| c.status == CaseStatus::Refused)
        .count();
    let failed = run
        .cases
        .iter()
        .filter(|c| c.status == CaseStatus::Failed)
        .count();
    // Only what happened: "1 case refused and 0 failed" said a nothing.
    let said: Vec<String> = [(refused, "refused"), (failed, "failed")]
        .into_iter()
        .filter(|&(n, _)| n > 0)
        .map(|(n, what)| format!("{n} case{} {what}", if n == 1 { "" } else { "s" }))
        .collect();
    if !said.is_empty() {
        let each = if refused + failed == 1 {
            "its reason"
        } else {
            "each with its reason"
        };
        v.push(format!("{} ({each} in the tables).", said.join(" and ")));
    }
    v
}

/// What a run measured, in one line: its kind, mechanisms, cases, machine, date.
pub fn what(id: &str, run: &RunRecord) -> String {
    let (before, command, after) = what_parts(id, run);
    format!("{before}`{command}`{after}")
}

/// [`what`] in three parts: the text before the command, the command
/// (`ipcperf run`), and the text after it, so HTML can set the command as
/// code rather than show Markdown's backticks.
fn what_parts(id: &str, run: &RunRecord) -> (String, String, String) {
    let mut mechs: Vec<&str> = Vec::new();
    for c in &run.cases {
        if !mechs.contains(&c.mechanism.as_str()) {
            mechs.push(&c.mechanism);
        }
    }
    let kind = if run.kind.is_empty() {
        "run"
    } else {
        run.kind.as_str()
    };
    let before = format!(
        "Run {id}{}: ",
        run.label
            .as_ref()
            .map(|l| format!(" ({l})"))
            .unwrap_or_default()
    );
    let after = format!(
        "{} — {} case{} on {} (Linux {}, {} CPUs), {}{}.",
        // A run stopped before its first case has no mechanism to name
        // ("`ipcperf run` of  — 0 cases").
        if mechs.is_empty() {
            String::new()
        } else {
            format!(" of {}", mechs.join(", "))
        },
        run.cases.len(),
        if run.cases.len() == 1 { "" } else { "s" },
        run.machine.hostname,
        run.machine.kernel,
        run.machine.cpus,
        crate::units::fmt_utc(run.started_ms),
        if run.complete { "" } else { ", incomplete" }
    );
    (before, format!("ipcperf {kind}"), after)
}

/// The summary section's HTML (`esc` escapes text for HTML).
pub fn html(runs: &[(String, RunRecord)], esc: fn(&str) -> String) -> String {
    let mut o = String::from("<section id=\"summary\">\n<h2>Summary</h2>\n<ul>\n");
    for (id, run) in runs {
        let (before, command, after) = what_parts(id, run);
        o.push_str(&format!(
            "<li><b>{}<code>{}</code>{}</b>",
            esc(&before),
            esc(&command),
            esc(&after)
        ));
        let h = headlines(run);
        if !h.is_empty() {
            o.push_str("<ul>");
            for line in h {
                o.push_str(&format!("<li>{}</li>", esc(&line)));
            }
            o.push_str("</ul>");
        }
        o.push_str("</li>\n");
    }
    o.push_str("</ul>\n");
    if let Some((a_id, a)) = runs.first() {
        for (b_id, b) in runs.iter().skip(1) {
            let rows = compare::compare(a, b, compare::DEFAULT_MIN_CHANGE);
            o.push_str(&format!(
                "<p><b>Run {} against run {}:</b> {}</p>\n",
                esc(b_id),
                esc(a_id),
                esc(&compare::summary(&rows))
            ));
            let (shown, left) = crate::chart::ab::chosen(&rows);
            if shown.is_empty() {
                o.push_str("<p>No case of one run has a counterpart in the other to draw.</p>\n");
                continue;
            }
            let title = format!("Run {b_id} against run {a_id}, case by case");
            o.push_str("<div class=\"chart\">\n");
            match crate::chart::ab::svg(&title, &shown) {
                Ok(svg) => o.push_str(&svg),
                Err(e) => o.push_str(&format!("<p>{}</p>", esc(&e))),
            }
            o.push_str("</div>\n");
            if left > 0 {
                o.push_str(&format!(
                    "<p>The {} largest changes are drawn; {left} more are in the comparison below.</p>\n",
                    shown.len()
                ));
            }
        }
    }
    o.push_str("</section>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;
    use ipcperf_core::mode::Mode;

    #[test]
    fn headlines_name_the_fastest_and_slowest_from_the_figures() {
        let run = testdata::run();
        let h = headlines(&run);
        // testdata at 64 KiB: pipe same-cpu 1000 MB/s the fastest, tcp cross-cpu
        // 250 MB/s the slowest; one case refused, one failed.
        assert!(
            h[0].starts_with("Fastest stream at 64 KiB: pipe processes same-cpu"),
            "{h:?}"
        );
        assert!(
            h[0].contains("slowest: tcp processes cross-cpu") && h[0].contains("4.0× apart"),
            "{h:?}"
        );
        assert!(
            h[1].starts_with("1 case refused and 1 case failed (each"),
            "{h:?}"
        );
        let mut one = run.clone();
        one.cases.retain(|c| c.status != CaseStatus::Failed);
        let h1 = headlines(&one);
        assert_eq!(
            h1[1], "1 case refused (its reason in the tables).",
            "{h1:?}"
        );
        // A reference with one side, faster than any, is no stream between
        // processes: the headline is still pipe's.
        let mut with_null = run.clone();
        let mut null = testdata::case("null", Mode::Single, 65536, "same-cpu", &[40_000.0]);
        null.workload = Workload::Stream;
        with_null.cases.push(null);
        let h = headlines(&with_null);
        assert!(
            h[0].starts_with("Fastest stream at 64 KiB: pipe processes"),
            "{h:?}"
        );
        // A twin held at polling idle beside as-is cases is named as such.
        let mut held = run.clone();
        let mut twin = testdata::case("pipe", Mode::Processes, 65536, "same-cpu", &[9_000.0]);
        twin.workload = Workload::Stream;
        twin.options.insert("idle".into(), "poll".into());
        held.cases.push(twin);
        let h = headlines(&held);
        assert!(
            h[0].starts_with("Fastest stream at 64 KiB: pipe processes same-cpu 0→0 idle=poll at"),
            "{h:?}"
        );
        let w = what("7", &run);
        assert!(
            w.starts_with("Run 7: `ipcperf run` of pipe, unix, tcp"),
            "{w}"
        );
        // Stopped before its first case: no empty "of" to read.
        let mut empty = run.clone();
        empty.cases.clear();
        let w = what("8", &empty);
        assert!(w.starts_with("Run 8: `ipcperf run` — 0 cases on "), "{w}");
    }

    #[test]
    fn the_summary_compares_and_draws_a_against_b() {
        let a = testdata::run();
        let mut b = testdata::run();
        b.label = Some("after".into());
        for c in &mut b.cases {
            for s in &mut c.series {
                s.bytes *= 2;
            }
            c.summarize();
        }
        let html = html(&[("1".into(), a), ("2".into(), b)], |s| {
            s.replace('<', "&lt;")
        });
        assert!(html.contains("Run 2 (after)"), "the label");
        // The command is set as code, not shown with Markdown's backticks.
        assert!(
            html.contains("<code>ipcperf run</code> of pipe") && !html.contains('`'),
            "{html}"
        );
        assert!(html.contains("Run 2 against run 1:</b>"), "{html}");
        assert!(html.contains("faster"), "the verdict");
        assert!(
            html.contains("<svg") && html.contains("how much faster B is"),
            "the chart"
        );
    }
}
