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
                "p",
                "step",
                "why",
            ]);
            for p in points {
                w.row([
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
                    p.change.p.map(|v| v.to_string()).unwrap_or_default(),
                    p.change.step.to_string(),
                    p.change.why.clone(),
                ]);
            }
            Ok(w.text().trim_end().to_string())
        }
        _ => {
            let steps: Vec<&TrendPoint> = points.iter().filter(|p| p.change.step).collect();
            let cases: std::collections::BTreeSet<&str> =
                points.iter().map(|p| p.case.as_str()).collect();
            let one = cases.len() == 1;
            let mut out = format!(
                "{} run{} of {}; {} step{}\n",
                points.len(),
                if points.len() == 1 { "" } else { "s" },
                if one {
                    points[0].case.clone()
                } else {
                    format!("{} cases", cases.len())
                },
                steps.len(),
                if steps.len() == 1 { "" } else { "s" }
            );
            for p in &steps {
                out.push_str(&format!(
                    "  run {} ({}, {}): {} {:.2}× the run before, {}\n",
                    p.run_id,
                    when(p.started_ms),
                    p.host,
                    p.case,
                    p.change.ratio.unwrap_or(f64::NAN),
                    p.change.why
                ));
            }
            let mut t = comfy_table::Table::new();
            t.load_style(if format == Format::Markdown {
                comfy_table::presets::ASCII_MARKDOWN
            } else {
                crate::console::table_style()
            });
            let mut head = vec![
                "case",
                "run",
                "started (UTC)",
                "host",
                "median",
                "range",
                "ratio",
                "verdict",
            ];
            if one {
                head.remove(0);
            }
            t.set_header(head);
            for p in points {
                let mut row = vec![
                    p.case.clone(),
                    p.run_id.to_string(),
                    when(p.started_ms),
                    p.host.clone(),
                    figure(p, p.median),
                    format!("{}–{}", figure(p, p.min), figure(p, p.max)),
                    p.change
                        .ratio
                        .map(|r| format!("{r:.2}×"))
                        .unwrap_or_default(),
                    if p.change.step {
                        format!("STEP: {}", p.change.why)
                    } else {
                        p.change.why.clone()
                    },
                ];
                if one {
                    row.remove(0);
                }
                t.add_row(row);
            }
            crate::console::fit(&mut t);
            out.push_str(&t.to_string());
            Ok(out.to_string())
        }
    }
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
