//! `ipcperf fleet`'s hosts and kernels as a table, markdown, CSV or JSON.

use crate::export::Format;
use crate::fail::Fail;
use crate::fleet::{self, HostRow, KernelRow};

pub fn csv_text(head: &[&str], rows: impl Iterator<Item = Vec<String>>) -> String {
    let mut w = crate::export::csv::CsvOut::default();
    w.row(head);
    for r in rows {
        w.row(r);
    }
    w.text().trim_end().to_string()
}

pub fn opt(v: Option<f64>) -> String {
    v.map(|p| p.to_string()).unwrap_or_default()
}

pub(crate) fn hosts_text(rows: &[HostRow], format: Format) -> Result<String, Fail> {
    match format {
        Format::Csv => {
            let head = [
                "host",
                "cpu_model",
                "kernel",
                "case",
                "figure",
                "group_median",
                "ratio",
                "peers",
                "p",
                "outlier",
                "why",
            ];
            Ok(csv_text(
                &head,
                rows.iter().map(|r| {
                    vec![
                        r.host.clone(),
                        r.cpu_model.clone(),
                        r.kernel.clone(),
                        r.case.clone(),
                        r.figure.to_string(),
                        r.group_median.to_string(),
                        r.ratio.to_string(),
                        r.peers.to_string(),
                        opt(r.p),
                        r.outlier.to_string(),
                        r.why.clone(),
                    ]
                }),
            )
            .to_string())
        }
        _ => {
            let hosts: std::collections::BTreeSet<&str> =
                rows.iter().map(|r| r.host.as_str()).collect();
            let outliers: Vec<&HostRow> = rows.iter().filter(|r| r.outlier).collect();
            let mut out = String::new();
            said(
                &mut out,
                &format!(
                    "{} host{}, {} host-and-case figures; {} outlier{}",
                    hosts.len(),
                    if hosts.len() == 1 { "" } else { "s" },
                    rows.len(),
                    outliers.len(),
                    if outliers.len() == 1 { "" } else { "s" }
                ),
                format,
            );
            // Markdown: a host name an imported run brought, as its cells show it.
            let md = |s: String| match format {
                Format::Markdown => crate::export::markdown::escape(&s),
                _ => s,
            };
            for r in &outliers {
                said(
                    &mut out,
                    &md(format!("  {}", fleet::outlier_line(r))),
                    format,
                );
            }
            // Said once, not on every row (a fleet of three hosts read the same
            // sentence in each of its 36 rows).
            let few = rows.iter().filter(|r| too_few(r)).count();
            if few > 0 {
                let line = format!(
                    "  {few} of them not judged, \"too few peers\": fewer than {} other hosts of \
                     their CPU model and kernel measured the case, too few to know their spread",
                    fleet::MIN_PEERS
                );
                said(&mut out, &line, format);
            }
            let groups = by_case(rows, |r| r.case.as_str());
            if format == Format::Table && groups.len() > 1 && hosts.len() > 1 {
                // On a terminal, a table for each case under its name (outliers'
                // cases first, as the rows come): the name on every row left
                // the verdict a word a line at 80 columns. One host's cases
                // (no peers) stay one table: a row each.
                for (case, of_case) in groups {
                    named(&mut out, case, &hosts_table(&of_case, false, false));
                }
            } else {
                let all: Vec<&HostRow> = rows.iter().collect();
                if format == Format::Markdown {
                    above_table(&mut out);
                }
                out.push_str(&hosts_table(&all, true, format == Format::Markdown));
            }
            Ok(out.to_string())
        }
    }
}

/// A line said above the table. On a terminal, wrapped to it under an indent.
/// In markdown, a paragraph of its own, an indented line a list item, and a
/// blank line before the table: lines one under the other ran together into one
/// paragraph where the page is read (trend's count of runs and its newest run's
/// verdicts read as one sentence).
pub(crate) fn said(out: &mut String, line: &str, format: Format) {
    if format != Format::Markdown {
        out.push_str(&format!("{}\n", crate::console::fit_line(line, 2)));
        return;
    }
    let text = line.trim_start_matches(' ');
    if text.len() < line.len() {
        out.push_str(&format!("- {text}\n"));
    } else {
        above_table(out);
        out.push_str(&format!("{text}\n\n"));
    }
}

/// In markdown, a blank line between what is said above and what comes next.
pub(crate) fn above_table(out: &mut String) {
    if !out.is_empty() && !out.ends_with("\n\n") {
        out.push('\n');
    }
}

/// Hosts' rows as a table (or markdown), with the case's column where asked.
fn hosts_table(rows: &[&HostRow], case: bool, markdown: bool) -> String {
    let head = [
        "host",
        "case",
        "figure",
        "group median",
        "ratio",
        "peers",
        "verdict",
    ];
    let cells = rows
        .iter()
        .map(|r| {
            vec![
                r.host.clone(),
                r.case.clone(),
                fleet::fmt_figure(r.figure, r.lower_better, &r.case),
                // Alone in its group: its own figure is the median, no comparison.
                if r.peers == 0 {
                    "-".into()
                } else {
                    fleet::fmt_figure(r.group_median, r.lower_better, &r.case)
                },
                if r.peers == 0 {
                    "-".into()
                } else {
                    format!("{:.2}×", r.ratio)
                },
                r.peers.to_string(),
                if r.outlier {
                    format!("OUTLIER: {}", r.why)
                } else if too_few(r) {
                    "too few peers".into()
                } else {
                    r.why.clone()
                },
            ]
        })
        .collect();
    crate::export::table::plain_columns(markdown, &head, cells, |i| case || i != 1)
}

/// A row not judged for want of peers (its whole reason in JSON and CSV).
fn too_few(r: &HostRow) -> bool {
    r.p.is_none() && r.peers < fleet::MIN_PEERS && r.figure > 0.0
}

/// `items` by case, in the order their cases first come.
pub(crate) fn by_case<'a, T>(
    items: &'a [T],
    case: impl Fn(&'a T) -> &'a str,
) -> Vec<(&'a str, Vec<&'a T>)> {
    let mut groups: Vec<(&str, Vec<&T>)> = Vec::new();
    for item in items {
        let c = case(item);
        match groups.iter_mut().find(|(name, _)| *name == c) {
            Some((_, of)) => of.push(item),
            None => groups.push((c, vec![item])),
        }
    }
    groups
}

/// `table` under its case's name, a blank line before the name.
pub(crate) fn named(out: &mut String, case: &str, table: &str) {
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!("\n{case}\n{table}"));
}

/// A fleet as one document for [`crate::export::emit::emit`].
pub fn hosts_document(rows: &[HostRow]) -> Result<crate::export::emit::Document, Fail> {
    Ok(crate::export::emit::Document {
        what: "a fleet",
        json: serde_json::to_value(rows).map_err(|e| Fail::failure(e.to_string()))?,
        csv: hosts_text(rows, Format::Csv)?,
        table: hosts_text(rows, Format::Table)?,
        markdown: hosts_text(rows, Format::Markdown)?,
    })
}

fn kernels_text(rows: &[KernelRow], format: Format) -> Result<String, Fail> {
    match format {
        Format::Csv => {
            let head = [
                "cpu_model",
                "case",
                "kernel",
                "hosts",
                "median",
                "ratio",
                "p",
                "step",
                "why",
            ];
            Ok(csv_text(
                &head,
                rows.iter().map(|r| {
                    vec![
                        r.cpu_model.clone(),
                        r.case.clone(),
                        r.kernel.clone(),
                        r.hosts.to_string(),
                        r.median.to_string(),
                        opt(r.change.ratio),
                        opt(r.change.p),
                        r.change.step.to_string(),
                        r.change.why.clone(),
                    ]
                }),
            )
            .to_string())
        }
        _ => {
            let steps: Vec<&KernelRow> = rows.iter().filter(|r| r.change.step).collect();
            let models: std::collections::BTreeSet<&str> =
                rows.iter().map(|r| r.cpu_model.as_str()).collect();
            let mut out = format!(
                "{} CPU model{}, {} kernel-and-case figures; {} step{} between kernels\n",
                models.len(),
                if models.len() == 1 { "" } else { "s" },
                rows.len(),
                steps.len(),
                if steps.len() == 1 { "" } else { "s" }
            );
            for r in &steps {
                out.push_str(&format!(
                    "  {} on {}: {:.2}× from the kernel before, {}\n",
                    r.case,
                    r.kernel,
                    r.change.ratio.unwrap_or(f64::NAN),
                    r.change.why
                ));
            }
            let head = [
                "CPU model",
                "case",
                "kernel",
                "hosts",
                "median",
                "ratio",
                "verdict",
            ];
            let mut cells = Vec::new();
            for r in rows {
                cells.push(vec![
                    r.cpu_model.clone(),
                    r.case.clone(),
                    r.kernel.clone(),
                    r.hosts.to_string(),
                    fleet::fmt_figure(r.median, r.lower_better, &r.case),
                    r.change.ratio_cell(),
                    r.change.verdict_cell(),
                ]);
            }
            let t = crate::export::table::plain(format == Format::Markdown, &head, cells);
            out.push_str(&t.to_string());
            Ok(out.to_string())
        }
    }
}

/// A fleet as one document for [`crate::export::emit::emit`].
pub fn kernels_document(rows: &[KernelRow]) -> Result<crate::export::emit::Document, Fail> {
    Ok(crate::export::emit::Document {
        what: "a fleet",
        json: serde_json::to_value(rows).map_err(|e| Fail::failure(e.to_string()))?,
        csv: kernels_text(rows, Format::Csv)?,
        table: kernels_text(rows, Format::Table)?,
        markdown: kernels_text(rows, Format::Markdown)?,
    })
}
