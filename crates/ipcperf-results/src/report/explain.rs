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

fn colour(name: &str) -> &'static str {
    ipcperf_core::explain::split::PARTS
        .iter()
        .position(|(n, _)| *n == name)
        .map_or("#000", |i| COLOURS[i])
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
         of the round trip.</p>\n",
    );
    let mut seen: Vec<&str> = Vec::new();
    for (c, x) in cases {
        o.push_str(&format!(
            "<div class=\"explain\"><div>{} {} {} B {}: {:.1} µs</div>\
             <div style=\"display:flex;width:100%;height:1.4em\">",
            esc(&c.mechanism),
            esc(c.mode.name()),
            c.block_size,
            esc(&c.placement.shown()),
            x.sum_median_ns as f64 / 1e3
        ));
        for p in &x.parts {
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
