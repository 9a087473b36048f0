//! `ipcperf pattern`'s conversations as rows: a table within 80 columns, markdown,
//! CSV or JSON.

use crate::export::Format;
use crate::pattern::{self, Conversation, Flow};
use crate::units::fmt_rate;

/// One way of one conversation, as printed.
#[derive(serde::Serialize)]
pub struct Row {
    pub conversation: usize,
    /// Its channels joined by ` + ` (JSON lists them apart, in `channels`).
    pub channel: String,
    #[serde(skip)]
    pub channels: Vec<String>,
    pub both_sides: bool,
    pub way: &'static str,
    pub from: String,
    pub to: String,
    pub messages: u64,
    pub bytes: u64,
    pub size_p50: u64,
    pub size_p90: u64,
    pub size_p99: u64,
    pub size_max: u64,
    pub gap_p50_ns: Option<u64>,
    pub gap_p90_ns: Option<u64>,
    pub gap_p99_ns: Option<u64>,
    pub duration_ns: u64,
    pub rate_per_sec: Option<f64>,
    pub fitted: String,
}

pub fn ends(e: &[(u32, i32)]) -> String {
    if e.is_empty() {
        return "-".into();
    }
    e.iter()
        .map(|(p, f)| format!("pid {p} fd {f}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn rows(c: &Conversation) -> Vec<Row> {
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

pub fn row(
    c: &Conversation,
    way: &'static str,
    f: &Flow,
    channel: String,
    from: String,
    to: String,
) -> Row {
    let gap = |q: f64| f.gap_at(q);
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
        size_p50: f.size_at(0.5),
        size_p90: f.size_at(0.9),
        size_p99: f.size_at(0.99),
        size_max: f.size_range().1,
        gap_p50_ns: gap(0.5),
        gap_p90_ns: gap(0.9),
        gap_p99_ns: gap(0.99),
        duration_ns: span,
        rate_per_sec: (f.count > 1 && span > 0).then(|| (f.count - 1) as f64 / (span as f64 / 1e9)),
        fitted: [
            f.size_fit().map(|s| format!("--size-dist {s}")),
            f.gap_fit().map(|g| format!("--gaps {g}")),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" "),
    }
}

pub fn fmt_ns(ns: u64) -> String {
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

/// A size in at most three figures and a unit: 300 B, 1.5 KiB, 2 MiB.
pub fn short_size(n: u64) -> String {
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

/// One way's cell: `400 × 100 B`, the largest (or the smallest, where the
/// largest reads as the p50) where sizes differ, the p50 gap.
pub fn way_cell(f: &Flow) -> String {
    if f.count == 0 {
        return "-".into();
    }
    let p50 = short_size(f.size_at(0.5));
    let mut cell = format!("{} × {p50}", f.count);
    let (lo, hi) = f.size_range();
    if lo != hi {
        // The end that differs from the p50 as shown: a pipe's 4 KiB writes
        // and a short last one read "27 × 4 KiB, max 4 KiB".
        let (end, size) = if short_size(hi) == p50 {
            ("min", lo)
        } else {
            ("max", hi)
        };
        cell.push_str(&format!("\n{end} {}", short_size(size)));
    }
    if let Some(gap) = f.gap_at(0.5) {
        cell.push_str(&format!("\ngap {}", fmt_ns(gap)));
    }
    cell
}

/// The channel cell: each channel on its line, then the processes.
pub fn channel_cell(c: &Conversation) -> String {
    let pids = |e: &[(u32, i32)]| {
        let mut p: Vec<u32> = e.iter().map(|x| x.0).collect();
        p.dedup();
        p.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
    };
    let mut lines: Vec<String> = c.channels.clone();
    if c.a.is_empty() && c.b.is_empty() {
        // A fitted pattern's: no process sent it.
    } else if c.both_sides {
        lines.push(format!("pid {} ⇄ {}", pids(&c.a), pids(&c.b)));
    } else {
        lines.extend(c.a.iter().map(|(p, f)| format!("pid {p} fd {f}")));
        lines.push("(one side)".into());
    }
    lines.join("\n")
}

/// The table: one row a conversation, both ways in it, within 80 columns for
/// the usual names; the fitted pattern and the notes under it.
pub fn table(
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
    let mut first = format!("{name}: {read}");
    if format == Format::Markdown {
        first = crate::export::markdown::escape(&first);
    }
    for l in textwrap::wrap(&first, width) {
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
        crate::console::table_style()
    });
    // Markdown: each line of a cell escaped (a FIFO's path may hold a `|`), the
    // lines joined by <br>, and no wrapping (a wrapped line is another row there).
    let md = format == Format::Markdown;
    let cell = |c: String| {
        if md {
            c.split('\n')
                .map(crate::export::markdown::escape)
                .collect::<Vec<_>>()
                .join("<br>")
        } else {
            c
        }
    };
    t.set_header(["#", "channel", "A→B", "B→A", "over\nrate"].map(|h| cell(h.into())));
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
        t.add_row(
            [
                c.number.to_string(),
                channel_cell(c),
                way_cell(&c.a_to_b),
                way_cell(&c.b_to_a),
                format!("{}\n{rate}", fmt_ns(over)),
            ]
            .map(cell),
        );
    }
    // The width its heading wraps at: the terminal's, 80 into a pipe or a file
    // (fitted on a terminal only, it kept its natural width in a pipe: 81
    // columns when a run's pids and times came a digit longer).
    if !md {
        t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
            .set_width(width as u16);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    for c in shown {
        for (way, f) in [("A→B", &c.a_to_b), ("B→A", &c.b_to_a)] {
            let fit = [
                f.size_fit().map(|s| format!("--size-dist {s}")),
                f.gap_fit().map(|g| format!("--gaps {g}")),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>();
            if !fit.is_empty() {
                // A way fitted as its commonest size says how many had it.
                let most = match (f.size_fit(), f.commonest(), f.size_range()) {
                    (Some(pattern::fitted::Sizes::Fixed(_)), Some((_, n)), (lo, hi))
                        if lo != hi =>
                    {
                        format!(" ({n} of {} messages at that size)", f.count)
                    }
                    _ => String::new(),
                };
                let line = format!("  {} {way} fitted: {}", c.number, fit.join(" "));
                // The options stay on one line, to be copied whole; the count
                // goes under them where both would pass the width.
                let sep = if line.chars().count() + most.chars().count() > width {
                    "\n   "
                } else {
                    ""
                };
                out.push_str(&format!("{line}{sep}{most}\n"));
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
