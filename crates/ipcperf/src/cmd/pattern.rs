//! `ipcperf pattern TRACE`: what an application's traffic looks like, from an
//! strace trace (or a CSV of time_ns,direction,size): its conversations, the
//! busiest first, each way's messages, sizes, gaps, duration and rate, and the
//! fitted pattern that describes it.

use std::path::PathBuf;

use clap::Args;

use crate::export::Format;
use crate::fail::Fail;
use crate::pattern::{self, Conversation, Flow};
use crate::units::fmt_rate;

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  strace -f -ttt -yy -e trace=read,write,sendmsg,recvmsg,sendto,recvfrom -o app.trace ./myapp
  ipcperf pattern app.trace                # its conversations, the busiest first
  ipcperf pattern app.trace --format json
  ipcperf pattern pattern.csv              # time_ns,direction,size per line (> A to B, < B to A)
  ipcperf pattern --sizes lognormal:300,2 --gaps poisson:20k --for 1s   # a described pattern

strace's -yy names what each descriptor is, so both ends of a pipe or socket pair are
found as one channel; without it, the ends are paired from the pipe, socketpair, dup,
close, fork/clone and execve calls when the trace holds them (trace them too, or
everything), else each process's descriptor is one, seen from its side. Two one-way
channels between two processes, requests on one and answers on the other, are one
conversation. -ff traces (FILE.PID) are read by naming FILE.")]
pub struct PatternArgs {
    /// The trace: strace's output (-f or -ff, with -t, -tt, -ttt or -r), or a CSV.
    #[arg(required_unless_present = "sizes")]
    pub trace: Option<PathBuf>,
    /// Instead of a trace, a fitted pattern's sizes: fixed:512, uniform:64,4k,
    /// lognormal:MEDIAN,SPREAD (with --gaps).
    #[arg(long, requires = "gaps", conflicts_with = "trace", value_parser = clap::value_parser!(pattern::fitted::Sizes))]
    pub sizes: Option<pattern::fitted::Sizes>,
    /// Its gaps: fixed:RATE, poisson:RATE, bursts:COUNT,RATE_IN_A_BURST,BURSTS_A_SECOND.
    #[arg(long, requires = "sizes", value_parser = clap::value_parser!(pattern::fitted::Gaps))]
    pub gaps: Option<pattern::fitted::Gaps>,
    /// How long a fitted pattern runs (at most 10 million messages).
    #[arg(long = "for", default_value = "1s", value_parser = crate::units::parse_duration, value_name = "DURATION")]
    pub for_: std::time::Duration,
    /// Show at most this many conversations (the busiest).
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Output format: table, markdown, json or csv (one record per conversation and way).
    #[arg(long, short, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// One way of one conversation, as printed.
#[derive(serde::Serialize)]
struct Row {
    conversation: usize,
    /// Its channels joined by ` + ` (JSON lists them apart, in `channels`).
    channel: String,
    #[serde(skip)]
    channels: Vec<String>,
    both_sides: bool,
    way: &'static str,
    from: String,
    to: String,
    messages: u64,
    bytes: u64,
    size_p50: u64,
    size_p90: u64,
    size_p99: u64,
    size_max: u64,
    gap_p50_ns: Option<u64>,
    gap_p90_ns: Option<u64>,
    gap_p99_ns: Option<u64>,
    duration_ns: u64,
    rate_per_sec: Option<f64>,
    fitted: String,
}

fn ends(e: &[(u32, i32)]) -> String {
    if e.is_empty() {
        return "-".into();
    }
    e.iter()
        .map(|(p, f)| format!("pid {p} fd {f}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn rows(c: &Conversation) -> Vec<Row> {
    let channel = c.what.clone().unwrap_or_else(|| "descriptor".into());
    let mut out = Vec::new();
    for (way, f, from, to) in [
        ("A→B", &c.a_to_b, &c.a, &c.b),
        ("B→A", &c.b_to_a, &c.b, &c.a),
    ] {
        if f.count == 0 {
            continue;
        }
        // Seen from one side: B is the other end, not in the trace.
        let (from, to) = if c.both_sides {
            (ends(from), ends(to))
        } else if way == "A→B" {
            (ends(from), "its peer".into())
        } else {
            ("its peer".into(), ends(&c.a))
        };
        out.push(row(c, way, f, channel.clone(), from, to));
    }
    out
}

fn row(
    c: &Conversation,
    way: &'static str,
    f: &Flow,
    channel: String,
    from: String,
    to: String,
) -> Row {
    let gap = |q: f64| (f.count > 1).then(|| f.gaps.value_at_quantile(q));
    let span = f.last_ns.saturating_sub(f.first_ns.unwrap_or(0));
    Row {
        conversation: c.number,
        channel,
        channels: c.channels.clone(),
        both_sides: c.both_sides,
        way,
        from,
        to,
        messages: f.count,
        bytes: f.bytes,
        size_p50: f.sizes.value_at_quantile(0.5),
        size_p90: f.sizes.value_at_quantile(0.9),
        size_p99: f.sizes.value_at_quantile(0.99),
        size_max: f.sizes.max(),
        gap_p50_ns: gap(0.5),
        gap_p90_ns: gap(0.9),
        gap_p99_ns: gap(0.99),
        duration_ns: span,
        rate_per_sec: (f.count > 1 && span > 0).then(|| (f.count - 1) as f64 / (span as f64 / 1e9)),
        fitted: [
            f.size_fit().map(|s| format!("--sizes {s}")),
            f.gap_fit().map(|g| format!("--gaps {g}")),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" "),
    }
}

fn fmt_ns(ns: u64) -> String {
    let v = ns as f64;
    if v >= 1e9 {
        format!("{:.2} s", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.2} ms", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} µs", v / 1e3)
    } else {
        format!("{ns} ns")
    }
}

pub fn run(a: PatternArgs) -> Result<i32, Fail> {
    if a.format.is_metrics() {
        return Err(Fail::usage(
            "--format openmetrics and prometheus are for a run's figures: use table, json, csv \
             or markdown",
        ));
    }
    let (p, name) = match (&a.trace, &a.sizes, &a.gaps) {
        (_, Some(s), Some(g)) => (
            pattern::generate(s, g, a.for_.as_secs_f64(), 1),
            "a fitted pattern".to_string(),
        ),
        (Some(t), _, _) => (
            pattern::read(t).map_err(|e| Fail::usage(e.to_string()))?,
            t.display().to_string(),
        ),
        _ => return Err(Fail::usage("give a trace, or --sizes and --gaps")),
    };
    let shown: Vec<&Conversation> = p.conversations.iter().take(a.top.max(1)).collect();
    let rows: Vec<Row> = shown.iter().flat_map(|c| rows(c)).collect();
    match a.format {
        Format::Json => {
            // Each record lists its conversation's channels.
            let mut v = serde_json::to_value(&rows).map_err(|e| Fail::failure(e.to_string()))?;
            if let Some(list) = v.as_array_mut() {
                for (j, r) in list.iter_mut().zip(&rows) {
                    j["channels"] = serde_json::json!(r.channels);
                }
            }
            crate::outln!(
                "{}",
                serde_json::to_string_pretty(&v).map_err(|e| Fail::failure(e.to_string()))?
            );
            for n in &p.notes {
                crate::console::note(n);
            }
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            for r in &rows {
                w.serialize(r).map_err(|e| Fail::failure(e.to_string()))?;
            }
            crate::outln!(
                "{}",
                String::from_utf8(w.into_inner().unwrap_or_default())
                    .unwrap_or_default()
                    .trim_end()
            );
            for n in &p.notes {
                crate::console::note(n);
            }
        }
        _ => crate::outln!("{}", table(&p, &shown, &name, a.top, a.format)),
    }
    Ok(0)
}

/// A size in at most three figures and a unit: 300 B, 1.5 KiB, 2 MiB.
fn short_size(n: u64) -> String {
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < 3 {
        v /= 1024.0;
        unit += 1;
    }
    let u = ["B", "KiB", "MiB", "GiB"][unit];
    if unit == 0 || v >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0} {u}")
    } else {
        format!("{v:.1} {u}")
    }
}

/// One way's cell: `400 × 100 B`, the largest where sizes differ, the p50 gap.
fn way_cell(f: &Flow) -> String {
    if f.count == 0 {
        return "-".into();
    }
    let mut cell = format!(
        "{} × {}",
        f.count,
        short_size(f.sizes.value_at_quantile(0.5))
    );
    if f.sizes.max() != f.sizes.min() {
        cell.push_str(&format!("\nmax {}", short_size(f.sizes.max())));
    }
    if f.count > 1 {
        cell.push_str(&format!("\ngap {}", fmt_ns(f.gaps.value_at_quantile(0.5))));
    }
    cell
}

/// The channel cell: each channel on its line, then the processes.
fn channel_cell(c: &Conversation) -> String {
    let pids = |e: &[(u32, i32)]| {
        let mut p: Vec<u32> = e.iter().map(|x| x.0).collect();
        p.dedup();
        p.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
    };
    let mut lines: Vec<String> = c.channels.clone();
    if c.both_sides {
        lines.push(format!("pid {} ⇄ {}", pids(&c.a), pids(&c.b)));
    } else {
        lines.extend(c.a.iter().map(|(p, f)| format!("pid {p} fd {f}")));
        lines.push("(one side)".into());
    }
    lines.join("\n")
}

/// The table: one row a conversation, both ways in it, within 80 columns for
/// the usual names; the fitted pattern and the notes under it.
fn table(
    p: &pattern::Pattern,
    shown: &[&Conversation],
    name: &str,
    top: usize,
    format: Format,
) -> String {
    let read = if p.clock == "generated" {
        format!("{} messages drawn (seed 1)", p.calls)
    } else {
        format!(
            "{} lines, {} calls that moved bytes (timestamps: {})",
            p.lines, p.calls, p.clock
        )
    };
    let n = p.conversations.len();
    // Wrapped to the terminal, 80 columns into a pipe or a file.
    let width = crate::console::terminal_width().map_or(80, usize::from);
    let mut out = String::new();
    for l in textwrap::wrap(&format!("{name}: {read}"), width) {
        out.push_str(&format!("{l}\n"));
    }
    out.push_str(&format!(
        "{n} conversation{}{}\n",
        if n == 1 { "" } else { "s, the busiest first" },
        if n > top {
            format!(" (the first {top} shown: --top)")
        } else {
            String::new()
        }
    ));
    let mut t = comfy_table::Table::new();
    t.load_style(if format == Format::Markdown {
        comfy_table::presets::ASCII_MARKDOWN
    } else {
        comfy_table::presets::UTF8_FULL_CONDENSED
    });
    t.set_header(["#", "channel", "A→B", "B→A", "over\nrate"]);
    for c in shown {
        let span = |f: &Flow| f.first_ns.map(|s| (s, f.last_ns));
        let (first, last) = [span(&c.a_to_b), span(&c.b_to_a)]
            .into_iter()
            .flatten()
            .fold((u64::MAX, 0), |(a, b), (s, e)| (a.min(s), b.max(e)));
        let over = last.saturating_sub(first.min(last));
        let rate = if c.messages() > 1 && over > 0 {
            let r = (c.messages() - 1) as f64 / (over as f64 / 1e9);
            format!("{}/s", fmt_rate(r))
        } else {
            "-".into()
        };
        let (mut chan, mut ab, mut ba) =
            (channel_cell(c), way_cell(&c.a_to_b), way_cell(&c.b_to_a));
        if format == Format::Markdown {
            for cell in [&mut chan, &mut ab, &mut ba] {
                *cell = cell.replace('\n', "<br>");
            }
        }
        t.add_row([
            c.number.to_string(),
            chan,
            ab,
            ba,
            format!("{}\n{rate}", fmt_ns(over)),
        ]);
    }
    crate::console::fit(&mut t);
    out.push_str(&t.to_string());
    out.push('\n');
    for c in shown {
        for (way, f) in [("A→B", &c.a_to_b), ("B→A", &c.b_to_a)] {
            let fit = [
                f.size_fit().map(|s| format!("--sizes {s}")),
                f.gap_fit().map(|g| format!("--gaps {g}")),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>();
            if !fit.is_empty() {
                out.push_str(&format!("  {} {way} fitted: {}\n", c.number, fit.join(" ")));
            }
        }
    }
    let mut notes = p.notes.clone();
    if p.unfinished > 0 {
        notes.insert(
            0,
            format!(
                "{} calls began and never returned (the trace was cut off): left out",
                p.unfinished
            ),
        );
    }
    let wrap = textwrap::Options::new(width)
        .initial_indent("  note: ")
        .subsequent_indent("        ");
    for n in &notes {
        for l in textwrap::wrap(n, &wrap) {
            out.push_str(&format!("{l}\n"));
        }
    }
    out.trim_end().to_string()
}
