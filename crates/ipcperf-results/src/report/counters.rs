//! The per-message counters in the report: for each counted case, its context
//! switches per message and its CPU time per message, each a bar split into
//! the writer's (client's) part and the reader's (server's), on one scale per
//! column, so a case that switches twice per message stands beside one that
//! spins and switches none.

use ipcperf_core::counts::PerMessage;
use ipcperf_core::record::{CaseRecord, RunRecord};

use super::esc;
use super::table::unit_held;

const WRITER: &str = "#1f77b4";
const READER: &str = "#ff7f0e";

/// One bar: the writer's part then the reader's, `scale` the full width.
fn bar(w: f64, r: Option<f64>, scale: f64, unit: &str) -> String {
    let pct = |v: f64| if scale > 0.0 { v / scale * 100.0 } else { 0.0 };
    let mut o = String::from("<div style=\"display:flex;width:100%;height:1.2em\">");
    o.push_str(&format!(
        "<div title=\"writer or client: {w:.3} {unit}\" style=\"width:{:.2}%;background:{WRITER}\"></div>",
        pct(w)
    ));
    if let Some(r) = r {
        o.push_str(&format!(
            "<div title=\"reader or server: {r:.3} {unit}\" style=\"width:{:.2}%;background:{READER}\"></div>",
            pct(r)
        ));
    }
    o.push_str("</div>");
    o
}

/// The section (None: no case of the run was counted).
pub fn section(run: &RunRecord) -> Option<String> {
    let cases: Vec<(&CaseRecord, PerMessage)> = run
        .cases
        .iter()
        .filter(|c| c.is_ok())
        .filter_map(|c| c.per_message().map(|p| (c, p)))
        .collect();
    if cases.is_empty() {
        return None;
    }
    let most = |f: fn(&PerMessage) -> f64| cases.iter().map(|(_, p)| f(p)).fold(0.0_f64, f64::max);
    let (sw, cpu) = (most(PerMessage::switches), most(PerMessage::cpu_ns) / 1e3);
    let mut o = String::from(
        "<h3>What each message costs (counters)</h3>\n<p>Context switches and CPU time per \
         message (a block of a stream, a round trip), from the kernel's own accounting over \
         each series (the median of the series): <span style=\"color:#1f77b4\">■</span> the \
         writer or client, <span style=\"color:#ff7f0e\">■</span> the reader or server. A \
         sleeping wait switches; a spinning one does not, and keeps its CPU busy.</p>\n\
         <div class=\"wide\"><table class=\"counters\"><tr><th>case</th><th>switches / message</th><th></th>\
         <th>CPU µs / message</th><th></th></tr>\n",
    );
    for (c, p) in cases {
        o.push_str(&format!(
            "<tr><td style=\"white-space:nowrap\">{} {} {} {}</td><td class=\"n\">{}</td><td style=\"width:30%\">{}</td><td class=\"n\">{}</td>\
             <td style=\"width:30%\">{}</td></tr>\n",
            esc(&crate::export::cells::mechanism_label(c)),
            esc(c.mode.name()),
            // "64 B" kept on one line where the case wraps.
            unit_held(&crate::units::fmt_size(c.block_size)),
            esc(&c.placement.shown()),
            // Significant digits, as the run's table: 0.012 switches a
            // message read "0.00", a memcpy's CPU time "0.00".
            crate::units::fmt_small(p.switches()),
            bar(p.writer_switches, p.reader_switches, sw, "switches"),
            crate::units::fmt_small(p.cpu_ns() / 1e3),
            bar(
                p.writer_cpu_ns / 1e3,
                p.reader_cpu_ns.map(|r| r / 1e3),
                cpu,
                "µs"
            ),
        ));
    }
    o.push_str("</table></div>\n");
    Some(o)
}

#[cfg(test)]
mod tests {
    /// A small figure keeps its digits: 0.012 switches a message read "0.00",
    /// as a memcpy's CPU time a message did; figures align right, as the
    /// report's other tables' do.
    #[test]
    fn small_counts_keep_their_digits() {
        let mut run = crate::testdata::run();
        run.cases.truncate(1);
        for s in &mut run.cases[0].series {
            s.blocks = 1_000_000;
            s.writer_cpu_ns = 2_100_000;
            s.reader_cpu_ns = None;
            s.reader_counts = None;
            s.writer_counts = Some(ipcperf_core::counts::Counts {
                voluntary_switches: 12_000,
                ..Default::default()
            });
        }
        let html = super::section(&run).expect("a counted case");
        assert!(html.contains("<td class=\"n\">0.012</td>"), "{html}");
        assert!(html.contains("<td class=\"n\">0.0021</td>"), "{html}");
        assert!(html.contains(">pipe processes 64&nbsp;B "), "{html}");
    }
}
