//! `--explain` in the report: a stacked bar per traced case, each part's share
//! of the round trip (mean over the traced round trips) as a coloured segment,
//! its name and median in the segment's title, and a legend.

use ipcperf_core::explain::part_label;
use ipcperf_core::record::RunRecord;

use super::esc;

/// A colour per part, in their order on the path (client, there, server, back).
const COLOURS: [&str; 12] = [
    "#9e9e9e", "#1f77b4", "#d62728", "#ff7f0e", "#2ca02c", "#7f7f7f", "#17becf", "#e377c2",
    "#bcbd22", "#8c564b", "#c7c7c7", "#9467bd",
];

/// A stream's parts, each side's in the same order: in a call running, asleep,
/// waiting to run, between calls.
const STREAM_COLOURS: [&str; 4] = ["#1f77b4", "#d62728", "#ff7f0e", "#9e9e9e"];

fn colour(name: &str) -> &'static str {
    use ipcperf_core::explain::{split::PARTS, stream::STREAM_PARTS};
    PARTS
        .iter()
        .position(|(n, _)| *n == name)
        .map(|i| COLOURS[i])
        .or_else(|| {
            STREAM_PARTS
                .iter()
                .position(|(n, _)| *n == name)
                .map(|i| STREAM_COLOURS[i % 4])
        })
        .unwrap_or("#000")
}

/// One bar: `parts`' segments, each its share wide.
fn bar<'a>(
    o: &mut String,
    title: String,
    parts: impl Iterator<Item = &'a ipcperf_core::explain::ExplainPart>,
    seen: &mut Vec<&'a str>,
) {
    o.push_str(&format!(
        "<div class=\"explain\"><div>{title}</div>\
         <div style=\"display:flex;width:100%;height:1.4em\">"
    ));
    for p in parts {
        if p.share < 0.005 {
            continue;
        }
        if !seen.contains(&p.name.as_str()) {
            seen.push(&p.name);
        }
        o.push_str(&format!(
            "<div title=\"{}: median {:.2} µs, {:.0}%\" style=\"width:{:.2}%;background:{}\"></div>",
            esc(part_label(&p.name)),
            p.median_ns as f64 / 1e3,
            p.share * 100.0,
            p.share * 100.0,
            colour(&p.name)
        ));
    }
    o.push_str("</div></div>\n");
}

/// The section (None: no case was explained).
pub fn section(run: &RunRecord) -> Option<String> {
    let cases: Vec<_> = run
        .cases
        .iter()
        .filter_map(|c| c.explain.as_ref().map(|x| (c, x)))
        .collect();
    if cases.is_empty() {
        return None;
    }
    let mut o = String::from(
        "<h3>Where the time goes (--explain)</h3>\n<p>Each bar is one case's round trip, \
         split into the parts the kernel's events bound; a segment's width is the part's share \
         of the round trip. A stream case has a bar for each side: its time per block.</p>\n",
    );
    let mut seen: Vec<&str> = Vec::new();
    for (c, x) in cases {
        let case = format!(
            "{} {} {} {}",
            esc(&c.mechanism),
            esc(c.mode.name()),
            crate::units::fmt_size(c.block_size),
            esc(&c.placement.shown())
        );
        if c.workload == ipcperf_core::workload::Workload::Stream {
            // Each side's parts sum to the block time: a bar each.
            for (side, prefix) in [("writer", "write"), ("reader", "read")] {
                bar(
                    &mut o,
                    format!(
                        "{case} · {side}: {:.1} µs a block",
                        x.traced_median_ns as f64 / 1e3
                    ),
                    x.parts.iter().filter(|p| p.name.starts_with(prefix)),
                    &mut seen,
                );
            }
            continue;
        }
        bar(
            &mut o,
            format!("{case}: {:.1} µs", x.sum_median_ns as f64 / 1e3),
            x.parts.iter(),
            &mut seen,
        );
    }
    o.push_str("<p class=\"legend\">");
    for n in seen {
        o.push_str(&format!(
            "<span style=\"display:inline-block;width:1em;height:1em;background:{}\"></span> {} ",
            colour(n),
            esc(part_label(n))
        ));
    }
    o.push_str("</p>\n");
    Some(o)
}
