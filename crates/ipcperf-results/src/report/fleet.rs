//! The fleet page: hosts × cases as a heat table (each cell a host's ratio to its
//! group's median, coloured by better or worse), the outliers, the kernel steps
//! and trend charts. One self-contained file, as the run report is.

use std::collections::{BTreeMap, BTreeSet};

use crate::fleet::{outlier_line, HostRow, KernelRow};
use crate::report::{esc, STYLE};

/// Most hosts the heat table shows (outliers first); the rest are counted.
pub const MAX_HOSTS: usize = 300;

/// What the page shows.
pub struct Page<'a> {
    /// What was read: the history and its selection.
    pub source: String,
    pub rows: &'a [HostRow],
    pub kernels: &'a [KernelRow],
    /// (heading, SVG) of each trend chart.
    pub trends: Vec<(String, String)>,
}

/// A cell's background: white at the group's median, toward red as the host is
/// worse and toward blue as it is better (full at 30% either way).
fn shade(r: &HostRow) -> String {
    if !r.ratio.is_finite() || r.ratio <= 0.0 {
        return "#eee".into();
    }
    let good = if r.lower_better {
        -r.ratio.ln()
    } else {
        r.ratio.ln()
    };
    let t = (good.abs() / 0.3_f64.ln_1p()).min(1.0);
    let mix = |to: u8| (255.0 - (255.0 - to as f64) * t).round() as u8;
    let (r_, g, b) = if good < 0.0 {
        (mix(214), mix(39), mix(40))
    } else {
        (mix(31), mix(119), mix(180))
    };
    let ink = if t > 0.6 { ";color:#fff" } else { "" };
    format!("#{r_:02x}{g:02x}{b:02x}{ink}")
}

/// The words every case's name holds (said once above the table) and each
/// case's name without them, for the heat table's headers: 12 headers of
/// "stream fifo processes 64 KiB same-cpu touch" made the page scroll sideways.
fn short_heads(cases: &[&str]) -> (String, Vec<String>) {
    let words = |c: &str| c.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    let common: Vec<String> = match cases {
        [first, _, ..] => words(first)
            .into_iter()
            .filter(|w| cases.iter().all(|c| c.split_whitespace().any(|x| x == w)))
            .collect(),
        _ => Vec::new(),
    };
    let heads = cases
        .iter()
        .map(|c| {
            let left: Vec<String> = words(c)
                .into_iter()
                .filter(|w| !common.contains(w))
                .collect();
            if left.is_empty() {
                c.to_string()
            } else {
                left.join(" ")
            }
        })
        .collect();
    (common.join(" "), heads)
}

/// The page as HTML.
pub fn html(p: &Page<'_>) -> String {
    let hosts: BTreeSet<&str> = p.rows.iter().map(|r| r.host.as_str()).collect();
    let outliers: Vec<&HostRow> = p.rows.iter().filter(|r| r.outlier).collect();
    let mut o = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>ipcperf fleet</title>\n<style>{STYLE}\
         td.h{{font-weight:bold;outline:2px solid #000;outline-offset:-2px}}\
         table.heat td{{text-align:right;font-variant-numeric:tabular-nums}}\
         .key span{{display:inline-block;padding:0 .5em;margin:0 .2em;text-align:center;border:1px solid #bbb}}\
         td.m{{white-space:nowrap}}table.heat td.m,table.heat td:first-child{{text-align:left}}\
         li.out{{margin:.3em 0}}table.heat .s{{position:sticky;left:0;background:#fff;white-space:nowrap}}</style>\n</head>\n<body>\n\
         <h1>ipcperf fleet</h1>\n<p class=\"note\">{} — {} hosts, {} host-and-case figures, \
         {} outlier{}. Each host is held against its peers: the hosts of its CPU model \
         and kernel.</p>\n",
        esc(&p.source),
        hosts.len(),
        p.rows.len(),
        outliers.len(),
        if outliers.len() == 1 { "" } else { "s" }
    );
    // The heat table: one row per host, one column per case, the cases by size.
    let cases: BTreeSet<&str> = p.rows.iter().map(|r| r.case.as_str()).collect();
    let mut cases: Vec<&str> = cases.into_iter().collect();
    cases.sort_by(|a, b| crate::units::case_order(a, b));
    let (common, heads) = short_heads(&cases);
    let mut by_host: BTreeMap<&str, BTreeMap<&str, &HostRow>> = BTreeMap::new();
    for r in p.rows {
        by_host.entry(&r.host).or_default().insert(&r.case, r);
    }
    let mut order: Vec<&str> = Vec::new();
    for r in &outliers {
        if !order.contains(&r.host.as_str()) {
            order.push(&r.host);
        }
    }
    for h in by_host.keys() {
        if !order.contains(h) {
            order.push(h);
        }
    }
    o.push_str(
        "<h2>Hosts against their peers</h2>\n<p class=\"key\">Each cell: the host's figure over \
         its group's median. <span style=\"background:#d62728;color:#fff\">worse</span> \
         <span style=\"background:#fff\">1.00×</span> <span style=\"background:#1f77b4;color:#fff\">\
         better</span> (full colour at 30%); an outlined cell is an outlier, beyond the \
         noise. Hover a cell for its figure and test.</p>\n",
    );
    // One CPU model and kernel for every host: said once, not a column of it.
    let groups: BTreeSet<(&str, &str)> = p
        .rows
        .iter()
        .map(|r| (r.cpu_model.as_str(), r.kernel.as_str()))
        .collect();
    let one_group = (groups.len() == 1)
        .then(|| groups.iter().next().copied())
        .flatten();
    let mut every = Vec::new();
    if let Some((cpu, kernel)) = one_group {
        every.push(format!("Every host here: {cpu}, {kernel}."));
    }
    if !common.is_empty() {
        every.push(format!("Every case here: {common}."));
    }
    if !every.is_empty() {
        o.push_str(&format!(
            "<p class=\"note\">{}</p>\n",
            esc(&every.join(" "))
        ));
    }
    // A wide fleet of cases scrolls inside its box, the hosts kept in view (the
    // page itself scrolled sideways).
    o.push_str(
        "<div style=\"overflow-x:auto\"><table class=\"heat\">\n\
         <thead><tr><th class=\"s\">host</th>",
    );
    if one_group.is_none() {
        o.push_str("<th>CPU model, kernel</th>");
    }
    for (c, h) in cases.iter().zip(&heads) {
        o.push_str(&format!("<th title=\"{}\">{}</th>", esc(c), esc(h)));
    }
    o.push_str("</tr></thead>\n<tbody>\n");
    for h in order.iter().take(MAX_HOSTS) {
        let cells = &by_host[h];
        let any = cells.values().next().copied();
        o.push_str(&format!("<tr><td class=\"s\">{}</td>", esc(h)));
        if one_group.is_none() {
            o.push_str(&format!(
                "<td class=\"m\">{}</td>",
                esc(&any
                    .map(|r| format!("{}, {}", r.cpu_model, r.kernel))
                    .unwrap_or_default())
            ));
        }
        for c in &cases {
            match cells.get(c) {
                Some(r) => o.push_str(&format!(
                    "<td{} style=\"background:{}\" title=\"{}: {} (group median {}); {}\">{:.2}×</td>",
                    if r.outlier { " class=\"h\"" } else { "" },
                    shade(r),
                    esc(&r.case),
                    esc(&crate::fleet::fmt_figure(r.figure, r.lower_better, &r.case)),
                    esc(&crate::fleet::fmt_figure(r.group_median, r.lower_better, &r.case)),
                    esc(&r.why),
                    r.ratio
                )),
                None => o.push_str("<td>–</td>"),
            }
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</tbody>\n</table></div>\n");
    if order.len() > MAX_HOSTS {
        o.push_str(&format!(
            "<p class=\"note\">{} more hosts, none an outlier, are left out of this table: \
             <code>ipcperf fleet --format csv</code> lists every one.</p>\n",
            order.len() - MAX_HOSTS
        ));
    }
    o.push_str("<h2>Outliers</h2>\n");
    if outliers.is_empty() {
        o.push_str(
            "<p>None: no host differs from its peers beyond the noise (rank-sum test and \
             bootstrap interval, Benjamini–Hochberg over the fleet).</p>\n",
        );
    } else {
        o.push_str("<ul>\n");
        for r in &outliers {
            o.push_str(&format!(
                "<li class=\"out\">{}</li>\n",
                esc(&outlier_line(r))
            ));
        }
        o.push_str("</ul>\n");
    }
    o.push_str("<h2>Kernels</h2>\n");
    let mut groups: BTreeMap<(&str, &str), Vec<&KernelRow>> = BTreeMap::new();
    for k in p.kernels {
        groups.entry((&k.cpu_model, &k.case)).or_default().push(k);
    }
    let multi: Vec<_> = groups.iter().filter(|(_, ks)| ks.len() > 1).collect();
    if multi.is_empty() {
        o.push_str(
            "<p>Each CPU model runs one kernel here: there is no step between kernels to \
             show.</p>\n",
        );
    }
    for ((cpu, case), ks) in multi {
        o.push_str(&format!(
            "<table>\n<caption>{} — {}</caption>\n<thead><tr><th>kernel</th><th>hosts</th>\
             <th>median</th><th>against the one before</th><th>verdict</th></tr></thead>\n<tbody>\n",
            esc(cpu),
            esc(case)
        ));
        for k in ks {
            o.push_str(&format!(
                "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td{}>{}</td></tr>\n",
                esc(&k.kernel),
                k.hosts,
                esc(&crate::fleet::fmt_figure(k.median, k.lower_better, &k.case)),
                k.change.ratio_cell(),
                if k.change.step { " class=\"h\"" } else { "" },
                esc(&k.change.verdict_cell())
            ));
        }
        o.push_str("</tbody>\n</table>\n");
    }
    o.push_str("<h2>Trends</h2>\n");
    if p.trends.is_empty() {
        o.push_str("<p>No host has more than one run of a case shown here.</p>\n");
    }
    for (h, svg) in &p.trends {
        o.push_str(&format!(
            "<h3>{}</h3>\n<div class=\"chart\">\n{svg}</div>\n",
            esc(h)
        ));
    }
    o.push_str("</body>\n</html>\n");
    o
}

#[cfg(test)]
mod tests {
    /// The heat table's headers leave out what every case shares, said once;
    /// one case keeps its whole name.
    #[test]
    fn headers_leave_out_the_words_every_case_shares() {
        let cases = [
            "stream fifo processes 64 KiB same-cpu touch",
            "stream memcpy single 64 KiB same-cpu touch",
        ];
        let (common, heads) = super::short_heads(&cases);
        assert_eq!(common, "stream 64 KiB same-cpu touch");
        assert_eq!(heads, ["fifo processes", "memcpy single"]);
        let (common, heads) = super::short_heads(&cases[..1]);
        assert_eq!((common.as_str(), heads[0].as_str()), ("", cases[0]));
    }
}
