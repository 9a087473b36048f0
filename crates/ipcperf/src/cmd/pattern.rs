//! `ipcperf pattern TRACE`: what an application's traffic looks like, from an
//! strace trace (or a CSV of time_ns,direction,size): its conversations, the
//! busiest first, each way's messages, sizes, gaps, duration and rate, and the
//! fitted pattern that describes it.

use std::path::PathBuf;

use clap::Args;

use crate::export::Format;
use crate::fail::Fail;
use crate::pattern::{self, Conversation, Flow};
use crate::units::{fmt_rate, fmt_size};

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  strace -f -ttt -yy -e trace=read,write,sendmsg,recvmsg,sendto,recvfrom -o app.trace ./myapp
  ipcperf pattern app.trace                # its conversations, the busiest first
  ipcperf pattern app.trace --format json
  ipcperf pattern pattern.csv              # time_ns,direction,size per line (> A to B, < B to A)
  ipcperf pattern --sizes lognormal:300,2 --gaps poisson:20k --for 1s   # a described pattern

strace's -yy names what each descriptor is, so both ends of a pipe or socket pair are
found as one conversation; without it, each process's descriptor is one, seen from
its side. -ff traces (FILE.PID) are read by naming FILE.")]
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
    channel: String,
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
    let shown: Vec<Row> = p
        .conversations
        .iter()
        .take(a.top.max(1))
        .flat_map(rows)
        .collect();
    match a.format {
        Format::Json => crate::outln!(
            "{}",
            serde_json::to_string_pretty(&shown).map_err(|e| Fail::failure(e.to_string()))?
        ),
        Format::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            for r in &shown {
                w.serialize(r).map_err(|e| Fail::failure(e.to_string()))?;
            }
            crate::outln!(
                "{}",
                String::from_utf8(w.into_inner().unwrap_or_default())
                    .unwrap_or_default()
                    .trim_end()
            );
        }
        _ => {
            let read = if p.clock == "generated" {
                format!("{} messages drawn (seed 1)", p.calls)
            } else {
                format!(
                    "{} lines, {} calls that moved bytes (timestamps: {})",
                    p.lines, p.calls, p.clock
                )
            };
            let mut out = format!(
                "{}: {read}; {} conversation{}, the busiest first{}\n",
                name,
                p.conversations.len(),
                if p.conversations.len() == 1 { "" } else { "s" },
                if p.conversations.len() > a.top {
                    format!(" (the first {} shown: --top)", a.top)
                } else {
                    String::new()
                }
            );
            if p.unfinished > 0 {
                out.push_str(&format!(
                    "  note: {} calls began and never returned (the trace was cut off): left out\n",
                    p.unfinished
                ));
            }
            let mut t = comfy_table::Table::new();
            t.load_style(if a.format == Format::Markdown {
                comfy_table::presets::ASCII_MARKDOWN
            } else {
                comfy_table::presets::UTF8_FULL_CONDENSED
            });
            t.set_header([
                "#",
                "channel",
                "way",
                "from → to",
                "messages",
                "size p50 / p99 / max",
                "gap p50 / p99",
                "over",
                "rate",
                "fitted",
            ]);
            for r in &shown {
                t.add_row([
                    r.conversation.to_string(),
                    r.channel.clone(),
                    r.way.to_string(),
                    format!("{} → {}", r.from, r.to),
                    r.messages.to_string(),
                    format!(
                        "{} / {} / {}",
                        fmt_size(r.size_p50),
                        fmt_size(r.size_p99),
                        fmt_size(r.size_max)
                    ),
                    match (r.gap_p50_ns, r.gap_p99_ns) {
                        (Some(a), Some(b)) => format!("{} / {}", fmt_ns(a), fmt_ns(b)),
                        _ => "-".into(),
                    },
                    fmt_ns(r.duration_ns),
                    r.rate_per_sec
                        .map(|v| format!("{}/s", fmt_rate(v)))
                        .unwrap_or_else(|| "-".into()),
                    r.fitted.clone(),
                ]);
            }
            crate::console::fit(&mut t);
            out.push_str(&t.to_string());
            crate::outln!("{out}");
        }
    }
    Ok(0)
}
