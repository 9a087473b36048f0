//! `ipcperf matrix`'s table: p50 and p99 per ordered CPU pair, and, with
//! `--explain`, each placement class's parts.

use crate::export;
use ipcperf_core::record::RunRecord;

/// The matrix (p50 and p99 in µs), then the median p50 of each placement class.
pub fn render_table(r: &RunRecord, m: &crate::chart::heatmap::Matrix) -> String {
    let mut out = format!(
        "Round trip, {}: p50 (p99) in µs, writer CPU down, reader CPU across\n{}\n",
        m.what,
        crate::chart::heatmap::table(m)
    );
    let mut by_class: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
    for c in &r.cases {
        if let Some(l) = &c.latency {
            by_class
                .entry(c.placement.label.clone())
                .or_default()
                .push(l.p50_ns);
        }
    }
    for (class, mut v) in by_class {
        v.sort_unstable();
        out.push_str(&format!(
            "  {class}: median p50 {:.2} µs over {} pair{}\n",
            v[v.len() / 2] as f64 / 1e3,
            v.len(),
            if v.len() == 1 { "" } else { "s" }
        ));
    }
    out.push_str(&explained_classes(r));
    out.push_str(&crate::chart::heatmap::outside_notes(r, m));
    if let Some(line) = export::explain::not_traced(r) {
        out.push_str(&format!("  {line}\n"));
    }
    let failed = r.cases.iter().filter(|c| c.latency.is_none()).count();
    if failed > 0 {
        out.push_str(&format!(
            "  {failed} pair{} did not run (see the messages above)\n",
            if failed == 1 { "" } else { "s" }
        ));
    }
    out
}

/// `--explain`: each placement class's round trip in parts, each part the
/// median over the class's pairs of their medians (largest first).
pub fn explained_classes(r: &RunRecord) -> String {
    let mut by_class: std::collections::BTreeMap<
        String,
        Vec<&ipcperf_core::explain::ExplainRecord>,
    > = Default::default();
    for c in &r.cases {
        if let Some(x) = c.explain.as_deref() {
            by_class
                .entry(c.placement.label.clone())
                .or_default()
                .push(x);
        }
    }
    let mut out = String::new();
    for (class, xs) in by_class {
        let mut parts: Vec<(u64, &str)> = ipcperf_core::explain::split::PARTS
            .iter()
            .filter_map(|(name, label)| {
                let mut v: Vec<u64> = xs
                    .iter()
                    .filter_map(|x| x.parts.iter().find(|p| p.name == *name))
                    .map(|p| p.median_ns)
                    .collect();
                v.sort_unstable();
                let m = v.get(v.len() / 2).copied().unwrap_or(0);
                (m > 0).then_some((m, *label))
            })
            .collect();
        parts.sort_by_key(|p| std::cmp::Reverse(p.0));
        let shown: Vec<String> = parts
            .iter()
            .map(|(m, label)| format!("{label} {:.2}", *m as f64 / 1e3))
            .collect();
        let line = format!(
            "{class}, where the time goes (µs, median over {} pair{}): {}",
            xs.len(),
            if xs.len() == 1 { "" } else { "s" },
            shown.join(", ")
        );
        let opts = textwrap::Options::new(78)
            .initial_indent("  ")
            .subsequent_indent("    ");
        for l in textwrap::wrap(&line, opts) {
            out.push_str(&format!("{l}\n"));
        }
    }
    out
}
