//! The HTML report: one self-contained file (inline CSS and SVG, no scripts, no
//! outside requests) with each run's machine, every table, the chart, Stover's
//! relative-throughput table, Bradford's pipe-versus-socket ratio and his question
//! of how many network links this host's loopback rate would fill. Records in,
//! text out.

mod counters;
mod explain;
pub mod fleet;
mod stover;
pub mod summary;
mod table;

use ipcperf_core::record::{CaseRecord, RunRecord};
use ipcperf_core::workload::Workload;

use crate::compare;
use crate::export::view::Table;
use crate::units::{fmt_mbps, fmt_size};

pub use stover::stover;
pub use table::table_html;
use table::tables_html;

pub(crate) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Highest median MB/s (and its block size) of `mech` for each mode and placement.
fn peaks(run: &RunRecord, mech: &str) -> Vec<(String, String, f64, u64)> {
    let mut v: Vec<(String, String, f64, u64)> = Vec::new();
    for c in run
        .cases
        .iter()
        .filter(|c| c.mechanism == mech && c.workload == Workload::Stream)
    {
        let Some(m) = c.median_bytes_per_sec else {
            continue;
        };
        let (mode, pl) = (c.mode.name().to_string(), c.placement.shown());
        match v.iter_mut().find(|p| p.0 == mode && p.1 == pl) {
            Some(p) if p.2 >= m => {}
            Some(p) => {
                p.2 = m;
                p.3 = c.block_size;
            }
            None => v.push((mode, pl, m, c.block_size)),
        }
    }
    v
}

/// Bradford's comparison: the best pipe rate against the best socket rate
/// (TCP as he measured, and Unix sockets), for each mode and placement.
pub fn bradford_ratio(run: &RunRecord) -> Option<Table> {
    let pipe = peaks(run, "pipe");
    let tcp = peaks(run, "tcp");
    let unix = peaks(run, "unix");
    let mut rows = Vec::new();
    for (mode, pl, p, ps) in &pipe {
        let find = |v: &[(String, String, f64, u64)]| {
            v.iter()
                .find(|x| &x.0 == mode && &x.1 == pl)
                .map(|x| (x.2, x.3))
        };
        let (t, u) = (find(&tcp), find(&unix));
        if t.is_none() && u.is_none() {
            continue;
        }
        let rate = |x: Option<(f64, u64)>| {
            x.map(|(m, s)| format!("{} at {}", fmt_mbps(m), fmt_size(s)))
                .unwrap_or_else(|| "-".into())
        };
        let ratio = |x: Option<(f64, u64)>| {
            x.map(|(m, _)| format!("{:.2}×", p / m))
                .unwrap_or_else(|| "-".into())
        };
        rows.push(vec![
            mode.clone(),
            pl.clone(),
            format!("{} at {}", fmt_mbps(*p), fmt_size(*ps)),
            rate(t),
            ratio(t),
            rate(u),
            ratio(u),
        ]);
    }
    if rows.is_empty() {
        return None;
    }
    Some(Table {
        title: "Bradford's pipe-versus-socket ratio (best rate of each)".into(),
        header: strs(&[
            "mode",
            "placement",
            "pipe MB/s",
            "tcp MB/s",
            "pipe/tcp",
            "unix MB/s",
            "pipe/unix",
        ]),
        rows,
        notes: vec![
            "Bradford (2001) found Linux pipes roughly 5 times faster than Linux (TCP) sockets."
                .into(),
        ],
    })
}

/// Bradford's sockspeedp6 question across the runs of a report: a network
/// mechanism's rate between two machines (`--peer`: placement `other-host`)
/// against its rate over loopback, same mechanism, mode and block size, the best
/// of each where several runs have it.
pub fn loopback_vs_network(runs: &[(String, RunRecord)]) -> Option<Table> {
    use ipcperf_core::kind::Workload;
    type Key = (String, String, u64);
    let mut net: Vec<(Key, f64, String)> = Vec::new();
    let mut lo: Vec<(Key, f64, String)> = Vec::new();
    for (id, run) in runs {
        for c in &run.cases {
            let (Some(m), true) = (c.median_bytes_per_sec, c.workload == Workload::Stream) else {
                continue;
            };
            if !is_network(&c.mechanism) || !c.is_ok() {
                continue;
            }
            let key = (c.mechanism.clone(), c.mode.name().to_string(), c.block_size);
            let side = if c.placement.label == "other-host" {
                &mut net
            } else {
                &mut lo
            };
            match side.iter_mut().find(|x| x.0 == key) {
                Some(x) if x.1 >= m => {}
                Some(x) => {
                    x.1 = m;
                    x.2 = id.clone();
                }
                None => side.push((key, m, id.clone())),
            }
        }
    }
    let rows: Vec<Vec<String>> = net
        .iter()
        .filter_map(|(k, n, nid)| {
            let (_, l, lid) = lo.iter().find(|x| &x.0 == k)?;
            Some(vec![
                k.0.clone(),
                k.1.clone(),
                fmt_size(k.2),
                format!("{} (run {nid})", fmt_mbps(*n)),
                format!("{} (run {lid})", fmt_mbps(*l)),
                format!("{:.2}×", n / l),
            ])
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Table {
        title: "Bradford's loopback-versus-network ratio (two machines against one)".into(),
        header: strs(&[
            "mechanism",
            "mode",
            "block",
            "between machines MB/s",
            "loopback MB/s",
            "network/loopback",
        ]),
        rows,
        notes: vec![
            "Bradford's sockspeedp6 ran its two sides on different machines and set the rate \
             against loopback's; here the between-machines rate is a run with --peer \
             (placement other-host), loopback the same case in a run on one machine."
                .into(),
        ],
    })
}

/// Each mechanism built on another (a library over a socket, io_uring over a
/// pipe) against that base, measured in the same run: same workload, mode,
/// size and placement. Streams compare MB/s, round trips the p50.
pub fn over_base(run: &RunRecord) -> Option<Table> {
    let mut rows = Vec::new();
    let mixed = crate::export::cells::idle_mixed(&run.cases);
    for c in run.cases.iter().filter(|c| c.is_ok()) {
        let Some(base) = c.options.get("over") else {
            continue;
        };
        let same = |d: &&CaseRecord| {
            d.is_ok()
                && &d.mechanism == base
                && d.workload == c.workload
                && d.mode == c.mode
                && d.block_size == c.block_size
                && d.placement.shown() == c.placement.shown()
                && d.options.get("idle") == c.options.get("idle")
                && d.payload == c.payload
        };
        let Some(b) = run.cases.iter().find(same) else {
            continue;
        };
        let figures = match (c.workload, &c.latency, &b.latency) {
            (Workload::RoundTrip, Some(x), Some(y)) if y.p50_ns > 0 => {
                let us = |ns: u64| format!("{:.1} µs p50", ns as f64 / 1e3);
                Some((
                    us(x.p50_ns),
                    us(y.p50_ns),
                    x.p50_ns as f64 / y.p50_ns as f64,
                ))
            }
            (Workload::Stream, _, _) => match (c.median_bytes_per_sec, b.median_bytes_per_sec) {
                (Some(x), Some(y)) if y > 0.0 => Some((
                    format!("{} MB/s", fmt_mbps(x)),
                    format!("{} MB/s", fmt_mbps(y)),
                    y / x,
                )),
                _ => None,
            },
            _ => None,
        };
        let Some((mine, theirs, cost)) = figures else {
            continue;
        };
        rows.push(vec![
            crate::export::view::mechanism_label(c),
            c.options
                .get("library")
                .map(|l| format!("{base} via {l}"))
                .unwrap_or_else(|| base.clone()),
            c.workload.name().to_string(),
            c.mode.name().to_string(),
            crate::export::cells::place(c, mixed),
            fmt_size(c.block_size),
            mine,
            theirs,
            format!("{cost:.2}×"),
        ]);
    }
    if rows.is_empty() {
        return None;
    }
    Some(Table {
        title: "What each layer costs over the mechanism beneath it (same run)".into(),
        header: strs(&[
            "mechanism",
            "built on",
            "workload",
            "mode",
            "placement",
            "size",
            "it",
            "its base",
            "cost",
        ]),
        rows,
        notes: vec![
            "cost: the time per byte or per round trip against the base's (1.00× costs \
             nothing; 1.50× takes half as long again; below 1 it is faster than its base)."
                .into(),
        ],
    })
}

/// Mechanisms that would carry data between machines.
pub fn is_network(mech: &str) -> bool {
    ["tcp", "udp", "sctp"].iter().any(|p| mech.starts_with(p))
}

/// Link speeds Bradford's question is asked for, in Gb/s.
pub const LINKS_GBPS: [f64; 4] = [1.0, 10.0, 25.0, 100.0];

/// Bradford's question: this host's best loopback rate over each network
/// mechanism, and how many 1, 10, 25 and 100 Gb/s links it would fill.
pub fn links(run: &RunRecord) -> Option<Table> {
    let mut mechs: Vec<&str> = Vec::new();
    for c in &run.cases {
        if is_network(&c.mechanism) && !mechs.contains(&c.mechanism.as_str()) {
            mechs.push(&c.mechanism);
        }
    }
    let mut rows = Vec::new();
    for m in mechs {
        for (mode, pl, rate, size) in peaks(run, m) {
            let gbps = rate * 8.0 / 1e9;
            let mut row = vec![
                m.to_string(),
                mode,
                pl,
                format!("{} at {}", fmt_mbps(rate), fmt_size(size)),
                format!("{gbps:.2}"),
            ];
            row.extend(LINKS_GBPS.iter().map(|l| format!("{:.2}", gbps / l)));
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return None;
    }
    Some(Table {
        title: "Bradford's question: how many network links would this host's loopback rate fill?".into(),
        header: strs(&["mechanism", "mode", "placement", "best MB/s", "Gb/s", "1 Gb/s links", "10 Gb/s links", "25 Gb/s links", "100 Gb/s links"]),
        rows,
        notes: vec!["Loopback moves no data through an adapter: this is the rate the CPU and kernel sustain, the ceiling a real link would meet.".into()],
    })
}

fn machine_table(id: &str, run: &RunRecord) -> Table {
    let m = &run.machine;
    let mut rows = vec![
        vec!["run".to_string(), id.to_string()],
        vec!["started".into(), crate::units::fmt_utc(run.started_ms)],
        vec![
            "status".into(),
            if run.complete {
                "complete".into()
            } else {
                "INCOMPLETE: stopped before its end".to_string()
            },
        ],
        vec!["ipcperf".into(), run.ipcperf_version.clone()],
        vec!["command line".into(), run.command_line.join(" ")],
        vec!["host".into(), m.hostname.clone()],
        vec!["kernel".into(), m.kernel.clone()],
        vec!["OS".into(), m.os.clone()],
        vec!["architecture".into(), m.arch.clone()],
        vec!["CPU".into(), m.cpu_model.clone()],
        vec!["CPUs".into(), m.cpus.to_string()],
        vec![
            "memory".into(),
            format!("{:.1} GiB", m.memory_bytes as f64 / (1u64 << 30) as f64),
        ],
        vec![
            "virtualization".into(),
            m.virtualization
                .clone()
                .unwrap_or_else(|| "none seen".into()),
        ],
        vec![
            "CPU governor".into(),
            m.cpu_governor
                .clone()
                .unwrap_or_else(|| "not exposed".into()),
        ],
    ];
    // `--peer`: the other machine, as its server described itself.
    if let Some(p) = run.cases.iter().find_map(|c| c.peer_machine.as_deref()) {
        rows.push(vec![
            "peer machine".into(),
            format!(
                "{} (Linux {}, {}, {} CPUs, {:.1} GiB{})",
                p.hostname,
                p.kernel,
                p.cpu_model,
                p.cpus,
                p.memory_bytes as f64 / (1u64 << 30) as f64,
                p.virtualization
                    .as_deref()
                    .map(|v| format!(", {v}"))
                    .unwrap_or_default()
            ),
        ]);
    }
    if let Some(t) = &m.topology {
        let usable: Vec<usize> = t.cpus.iter().map(|p| p.cpu).collect();
        rows.push(vec![
            "topology".into(),
            format!(
                "{} usable CPUs ({}): {}, {}, {} cores, SMT {}; last-level caches {}",
                usable.len(),
                ipcperf_core::topology::format_cpu_list(&usable),
                counted(t.packages(), "package"),
                counted(t.nodes(), "NUMA node"),
                t.cores(),
                if t.smt() { "on" } else { "off" },
                t.l3_domains()
                    .iter()
                    .map(|d| ipcperf_core::topology::format_cpu_list(d))
                    .collect::<Vec<_>>()
                    .join(" | ")
            ),
        ]);
    }
    if let Some(st) = &m.state {
        rows.push(vec![
            "clocksource".into(),
            st.clocksource
                .clone()
                .unwrap_or_else(|| "not exposed".into()),
        ]);
        let w = st.warnings();
        if !w.is_empty() {
            rows.push(vec!["warnings".into(), w.join("; ")]);
        }
    }
    Table {
        title: format!("Machine of run {id}"),
        header: vec![],
        rows,
        notes: vec![],
    }
}

/// The IPC limits and vulnerability mitigations of the run's machine.
fn limits_table(run: &RunRecord) -> Table {
    let m = &run.machine;
    let mut rows: Vec<Vec<String>> = m
        .limits
        .iter()
        .map(|(k, v)| vec![k.clone(), v.clone()])
        .collect();
    rows.extend(
        m.mitigations
            .iter()
            .map(|(k, v)| vec![format!("vulnerability {k}"), v.clone()]),
    );
    Table {
        title: "IPC limits and vulnerability mitigations".into(),
        header: vec![],
        rows,
        notes: vec![],
    }
}

pub(crate) const STYLE: &str = "body{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}\
table{border-collapse:collapse;margin:1em 0}caption{text-align:left;font-weight:bold;padding:.3em 0}\
th,td{border:1px solid #bbb;padding:.2em .6em}th{background:#eee}td.n{text-align:right}.wide{overflow-x:auto}.opt{white-space:nowrap}\
.note{font-size:90%;color:#555;margin:.2em 0 1em}.chart svg{max-width:100%;height:auto;border:1px solid #ddd}\
h2{border-bottom:2px solid #444;margin-top:2em}summary{cursor:pointer;margin:1em 0}";

/// The whole report for `runs` (id, record), in the order given.
pub fn html(runs: &[(String, RunRecord)]) -> String {
    let ids: Vec<&str> = runs.iter().map(|r| r.0.as_str()).collect();
    let mut o = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>ipcperf report: run {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>ipcperf report: run {}</h1>\n",
        esc(&ids.join(", ")),
        esc(&ids.join(", "))
    );
    o.push_str(&crate::report::summary::html(runs, esc));
    for (id, run) in runs {
        o.push_str(&format!(
            "<section id=\"run-{0}\">\n<h2>Run {0}: {1} (Linux {2})</h2>\n",
            esc(id),
            esc(&run.machine.hostname),
            esc(&run.machine.kernel)
        ));
        o.push_str(&table_html(&machine_table(id, run)));
        let matrix = crate::chart::heatmap::from_run(run);
        if let Some(m) = &matrix {
            o.push_str(
                "<h3>Core to core: p50 round trip of every CPU pair</h3>\n<div class=\"chart\">\n",
            );
            match crate::chart::heatmap::svg(m) {
                Ok(svg) => o.push_str(&svg),
                Err(e) => o.push_str(&format!("<p>{}</p>", esc(&e))),
            }
            o.push_str("</div>\n");
        }
        o.push_str(&crate::measured::report_html(run, esc));
        // Every chart the run has (a matrix's percentiles are its heatmap).
        for c in crate::chart::xy::charts(run)
            .into_iter()
            .filter(|c| matrix.is_none() || matches!(c, crate::chart::xy::Chart::Throughput))
        {
            o.push_str(&format!(
                "<h3>{}</h3>\n<div class=\"chart\">\n",
                esc(c.heading())
            ));
            match c.svg(run) {
                Ok(svg) => o.push_str(&svg),
                Err(e) => o.push_str(&format!("<p>{}</p>", esc(&e))),
            }
            o.push_str("</div>\n");
        }
        if let Some(svg) = crate::chart::replay::svg(run) {
            o.push_str(
                "<h3>Replay: latency against time in the trace</h3>\n<div class=\"chart\">\n",
            );
            o.push_str(&svg.unwrap_or_else(|e| format!("<p>{}</p>", esc(&e))));
            o.push_str("</div>\n");
        }
        o.push_str(&explain::section(run).unwrap_or_default());
        o.push_str(&counters::section(run).unwrap_or_default());
        // What `ipcperf advise` would answer from this run's figures.
        for t in crate::advise::report_answers(run) {
            o.push_str(&table_html(&t));
        }
        o.push_str("<h3>Tables</h3>\n");
        let views = crate::export::views(run, None);
        let more: Vec<Table> = [stover(run), bradford_ratio(run), links(run), over_base(run)]
            .into_iter()
            .flatten()
            .collect();
        o.push_str(&tables_html(
            views.iter().flat_map(|v| &v.tables).chain(&more),
        ));
        let limits = limits_table(run);
        if !limits.rows.is_empty() {
            o.push_str("<details>\n<summary>IPC limits and vulnerability mitigations</summary>\n");
            o.push_str(&table_html(&limits));
            o.push_str("</details>\n");
        }
        o.push_str("</section>\n");
    }
    if let Some(t) = loopback_vs_network(runs) {
        o.push_str("<section id=\"network\">\n<h2>Between machines and loopback</h2>\n");
        o.push_str(&table_html(&t));
        o.push_str("</section>\n");
    }
    if runs.len() >= 2 {
        o.push_str("<section id=\"compare\">\n<h2>Comparisons</h2>\n");
        let (a_id, a) = &runs[0];
        for (b_id, b) in &runs[1..] {
            let v = compare::view(a_id, a, b_id, b, compare::DEFAULT_MIN_CHANGE);
            let mut parts = v.heading.split("\n\n");
            if let Some(first) = parts.next() {
                o.push_str(&format!("<p><b>{}</b></p>\n", esc(first)));
            }
            for p in parts {
                o.push_str(&format!("<p>{}</p>\n", esc(p)));
            }
            o.push_str(&tables_html(&v.tables));
        }
        o.push_str("</section>\n");
    }
    o.push_str("</body>\n</html>\n");
    o
}

/// `n` things, "1 package", "2 packages".
fn counted(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests;
