//! `ipcperf trend`'s points as a table, markdown, CSV or JSON.

use crate::export::Format;
use crate::fail::Fail;
use crate::fleet::{self, TrendPoint};

pub fn when(ms: u64) -> String {
    jiff::Timestamp::from_millisecond(ms as i64)
        .map(|t| t.strftime("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_else(|_| ms.to_string())
}

pub fn figure(p: &TrendPoint, v: f64) -> String {
    fleet::fmt_figure(v, p.lower_better, &p.case)
}

/// `low`–`high` with their unit said once where they share it ("115–124 MB/s").
fn range(low: &str, high: &str) -> String {
    match (low.split_once(' '), high.split_once(' ')) {
        (Some((l, u)), Some((h, v))) if u == v => format!("{l}–{h} {u}"),
        _ => format!("{low}–{high}"),
    }
}

fn points_text(points: &[TrendPoint], format: Format) -> Result<String, Fail> {
    match format {
        Format::Csv => {
            let mut w = crate::export::csv::CsvOut::default();
            w.row([
                "case",
                "run_id",
                "started_ms",
                "host",
                "label",
                "median",
                "min",
                "max",
                "series",
                "ratio",
                "step_ratio",
                "p",
                "step",
                "why",
                "newest_verdict",
                "newest_ratio",
                "newest_p",
                "could_call",
                "limit",
                "newest_why",
            ]);
            for p in points {
                w.row(
                    [
                        p.case.clone(),
                        p.run_id.to_string(),
                        p.started_ms.to_string(),
                        p.host.clone(),
                        p.label.clone().unwrap_or_default(),
                        p.median.to_string(),
                        p.min.to_string(),
                        p.max.to_string(),
                        p.series.to_string(),
                        p.change.ratio.map(|v| v.to_string()).unwrap_or_default(),
                        p.change
                            .step_ratio
                            .map(|v| v.to_string())
                            .unwrap_or_default(),
                        p.change.p.map(|v| v.to_string()).unwrap_or_default(),
                        p.change.step.to_string(),
                        p.change.why.clone(),
                    ]
                    .into_iter()
                    .chain(newest_cells(p)),
                );
            }
            Ok(w.text().trim_end().to_string())
        }
        _ => {
            let steps: Vec<&TrendPoint> = points.iter().filter(|p| p.change.step).collect();
            let cases: std::collections::BTreeSet<&str> =
                points.iter().map(|p| p.case.as_str()).collect();
            let one = cases.len() == 1;
            // A point is a case in a run: the runs are those of any case.
            let runs: std::collections::BTreeSet<_> = points.iter().map(|p| p.run_id).collect();
            // One host is said once, above the table, not on every row.
            let hosts: std::collections::BTreeSet<&str> =
                points.iter().map(|p| p.host.as_str()).collect();
            let one_host = (hosts.len() == 1).then(|| points[0].host.as_str());
            // With fewer runs than a step needs, "0 steps" read as "steady"
            // where nothing could have been found.
            let mut per_case: std::collections::BTreeMap<(&str, &str), usize> =
                std::collections::BTreeMap::new();
            for p in points {
                *per_case.entry((&p.case, &p.host)).or_default() += 1;
            }
            let most = per_case.values().copied().max().unwrap_or(0);
            let need = super::fewest_runs_for_a_step();
            let short = if most < need {
                format!(
                    " (a step needs {need} runs of a case, {} after it: at most {most} here)",
                    super::CONFIRM_RUNS
                )
            } else {
                String::new()
            };
            let head = format!(
                "{} run{} of {}{}; {} step{}{short}",
                runs.len(),
                if runs.len() == 1 { "" } else { "s" },
                if one {
                    points[0].case.clone()
                } else {
                    format!("{} cases", cases.len())
                },
                one_host.map(|h| format!(" on {h}")).unwrap_or_default(),
                steps.len(),
                if steps.len() == 1 { "" } else { "s" }
            );
            // On a terminal, wrapped to it under an indent.
            // Markdown: a host name an imported run brought, as its cells show it.
            let md = |s: String| match format {
                Format::Markdown => crate::export::markdown::escape(&s),
                _ => s,
            };
            let mut out = String::new();
            super::output::said(&mut out, &md(head), format);
            if let Some(line) = newest_line(points) {
                super::output::said(&mut out, &md(line), format);
            }
            // The step's size is its segments' (in the reason), not the run
            // before's: "1.10× the run before" was runs 8–14 against 1–7,
            // where run 8 was 1.19× run 7.
            for p in points.iter().filter(|p| moved(p)) {
                let (verdict, why) = p.newest.as_ref().map_or((String::new(), ""), |n| {
                    (n.verdict.to_uppercase(), n.why.as_str())
                });
                let line = md(format!(
                    "  newest, run {} ({}, {}): {}, {verdict}: {why}",
                    p.run_id,
                    when(p.started_ms),
                    p.host,
                    p.case,
                ));
                super::output::said(&mut out, &line, format);
            }
            for p in &steps {
                let line = md(format!(
                    "  run {} ({}, {}): {}, {}",
                    p.run_id,
                    when(p.started_ms),
                    p.host,
                    p.case,
                    p.change.why
                ));
                super::output::said(&mut out, &line, format);
            }
            if format == Format::Table {
                // On a terminal, a table for each case under its name: the
                // name on every row made each row six lines tall at 80 columns.
                // The newest run's verdict is a line above its table: in the
                // verdict column it wrapped every row's date at 80 columns.
                for (case, of_case) in super::output::by_case(points, |p| p.case.as_str()) {
                    let mut table = String::new();
                    // A run that moved is said in the first lines, whole.
                    for p in of_case.iter().filter(|p| p.newest.is_some() && !moved(p)) {
                        let host = match one_host {
                            Some(_) => String::new(),
                            None => format!(" on {}", p.host),
                        };
                        let line = format!("newest{host}, run {}: {}", p.run_id, newest_said(p));
                        table.push_str(&format!("{}\n", crate::console::fit_line(&line, 2)));
                    }
                    table.push_str(&points_table(&of_case, false, one_host.is_none(), false));
                    if one {
                        out.push_str(&table);
                    } else {
                        super::output::named(&mut out, case, &table);
                    }
                }
            } else {
                let all: Vec<&TrendPoint> = points.iter().collect();
                if format == Format::Markdown {
                    super::output::above_table(&mut out);
                }
                out.push_str(&points_table(
                    &all,
                    !one,
                    one_host.is_none(),
                    format == Format::Markdown,
                ));
            }
            Ok(out.to_string())
        }
    }
}

/// `points` as a table (or markdown), with the case's and the host's columns
/// where asked (left out where one case or one host is said above it).
fn points_table(points: &[&TrendPoint], case: bool, host: bool, markdown: bool) -> String {
    let head = [
        "case",
        "run",
        "started (UTC)",
        "host",
        "median",
        "range",
        "ratio",
        "verdict",
    ];
    // On a terminal an empty verdict column (no point judged: too few runs,
    // or nothing said) is left out; markdown keeps its columns.
    // On a terminal the step's, and a newest run that moved marked: the
    // reasons are in the lines above.
    let verdict = |p: &TrendPoint| {
        let step = p.change.verdict_cell();
        match (markdown, p.newest.as_ref().filter(|_| moved(p))) {
            (true, _) => verdict_of(p),
            (false, None) => step,
            (false, Some(n)) if step.is_empty() => format!("NEWEST {}", n.verdict.to_uppercase()),
            (false, Some(n)) => format!("{step}; NEWEST {}", n.verdict.to_uppercase()),
        }
    };
    let said = markdown || points.iter().any(|p| !verdict(p).is_empty());
    let rows = points
        .iter()
        .map(|p| {
            vec![
                p.case.clone(),
                p.run_id.to_string(),
                // On a terminal to the minute, as history shows a run: the
                // seconds wrapped the date at 80 columns.
                if markdown {
                    when(p.started_ms)
                } else {
                    when(p.started_ms).chars().take(16).collect()
                },
                p.host.clone(),
                figure(p, p.median),
                range(&figure(p, p.min), &figure(p, p.max)),
                p.change.ratio_cell(),
                verdict(p),
            ]
        })
        .collect();
    let keep = |i: usize| (case || i != 0) && (host || i != 3) && (said || i != 7);
    crate::export::table::plain_columns(markdown, &head, rows, keep)
}

/// A point's verdict: the step's, and where it is its case's newest run, how it
/// stands against the runs before it (in capitals where it moved).
fn verdict_of(p: &TrendPoint) -> String {
    let step = p.change.verdict_cell();
    if p.newest.is_none() {
        return step;
    }
    let said = if moved(p) {
        format!("NEWEST {}", newest_said(p))
    } else {
        format!("newest: {}", newest_said(p))
    };
    if step.is_empty() {
        said
    } else {
        format!("{step}; {said}")
    }
}

/// Whether a point is its case's newest run and moved (slower or faster).
fn moved(p: &TrendPoint) -> bool {
    p.newest
        .as_ref()
        .is_some_and(|n| matches!(n.verdict.as_str(), "slower" | "faster"))
}

/// How the newest run of a case stands against the runs before it, in short
/// ("" where it is not its case's newest run).
fn newest_said(p: &TrendPoint) -> String {
    let Some(n) = &p.newest else {
        return String::new();
    };
    // The reason whole is in the first lines (a case that moved) and in JSON
    // and CSV: in a column it made the newest row fourteen lines tall.
    let pct = |v: Option<f64>| v.map_or(String::new(), |v| format!("{:.1}%", v * 100.0));
    match (n.verdict.as_str(), n.ratio) {
        (v @ ("slower" | "faster"), Some(r)) => format!(
            "{}: {r:.2}× its {} runs before, p {}",
            v.to_uppercase(),
            n.earlier_runs,
            super::fmt_p(n.p.unwrap_or(1.0))
        ),
        ("not judged", _) => format!("not judged ({} runs before it)", n.earlier_runs),
        (v, _) => format!(
            "{v} (could call {}, limit {})",
            pct(n.could_call),
            pct(n.limit)
        ),
    }
}

/// The newest runs' verdicts counted, for the first lines (None where no case
/// has a newest run judged or refused).
fn newest_line(points: &[TrendPoint]) -> Option<String> {
    let all: Vec<&str> = points
        .iter()
        .filter_map(|p| p.newest.as_ref().map(|n| n.verdict.as_str()))
        .collect();
    if all.is_empty() {
        return None;
    }
    let count = |v: &str| all.iter().filter(|w| **w == v).count();
    let judged = all.len() - count("not judged");
    let parts: Vec<String> = [
        "slower",
        "faster",
        "unchanged",
        "could not tell",
        "not judged",
    ]
    .into_iter()
    .filter(|v| count(v) > 0)
    .map(|v| format!("{} {v}", count(v)))
    .collect();
    Some(format!(
        "newest run of each case against the runs before it (since its last step): {}{}",
        parts.join(", "),
        match judged {
            0 | 1 => String::new(),
            m => format!(" (Holm over the {m} cases judged)"),
        }
    ))
}

/// The CSV's cells of a point's newest-run verdict (empty where it has none).
fn newest_cells(p: &TrendPoint) -> Vec<String> {
    let Some(n) = &p.newest else {
        return vec![String::new(); 6];
    };
    let num = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    vec![
        n.verdict.clone(),
        num(n.ratio),
        num(n.p),
        num(n.could_call),
        num(n.limit),
        n.why.clone(),
    ]
}

/// A trend as one document for [`crate::export::emit::emit`].
pub fn trend_document(rows: &[TrendPoint]) -> Result<crate::export::emit::Document, Fail> {
    Ok(crate::export::emit::Document {
        what: "a trend",
        json: serde_json::to_value(rows).map_err(|e| Fail::failure(e.to_string()))?,
        csv: points_text(rows, Format::Csv)?,
        table: points_text(rows, Format::Table)?,
        markdown: points_text(rows, Format::Markdown)?,
    })
}
