//! `ipcperf compare A B`: did this kernel, container or machine change IPC speed?

use clap::Args;

use super::db::{load, parse_run_id, DbArgs, RunId};
use crate::export::Format;
use crate::fail::Fail;
use crate::{compare, export};

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The earlier (baseline) run: an id from `ipcperf history`.
    #[arg(value_parser = parse_run_id)]
    pub a: RunId,
    /// The later run; ratios are B/A.
    #[arg(value_parser = parse_run_id)]
    pub b: RunId,
    #[command(flatten)]
    pub db: DbArgs,
    /// Smallest change to mark, beyond both runs' spread (5%, 2.5; 0 marks every
    /// difference beyond the spread).
    #[arg(long, default_value = "5%", value_parser = crate::units::parse_percent)]
    pub threshold: f64,
    /// Output format: table, markdown, json or csv (one record per case).
    #[arg(long, short, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Exit 1 when any case got slower (for CI); the output is the same.
    #[arg(long)]
    pub fail_on_regression: bool,
}

pub fn run(a: CompareArgs) -> Result<i32, Fail> {
    let mut store = a.db.open_read()?;
    let (ia, ra) = load(&mut store, a.a)?;
    let (ib, rb) = load(&mut store, a.b)?;
    let rows = compare::compare(&ra, &rb, a.threshold);
    match a.format {
        Format::Json => {
            let doc = serde_json::json!({
                "a": ia,
                "b": ib,
                "threshold": a.threshold,
                "summary": compare::summary(&rows),
                "cases": compare::records(&rows),
            });
            let text = serde_json::to_string_pretty(&doc)
                .map_err(|e| Fail::failure(format!("cannot write JSON: {e}")))?;
            crate::outln!("{text}");
        }
        Format::OpenMetrics | Format::Prometheus => {
            return Err(Fail::usage(format!(
                "--format {} is for runs' figures, not a comparison: use json, csv or markdown",
                if a.format == Format::OpenMetrics {
                    "openmetrics"
                } else {
                    "prometheus"
                }
            )))
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            let fields = [
                "case",
                "unit",
                "a",
                "b",
                "ratio_b_over_a",
                "interval_low",
                "interval_high",
                "p_value",
                "change",
                "why",
            ];
            let cell = |v: &serde_json::Value| match v {
                serde_json::Value::Null => String::new(),
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let mut write = || -> Result<(), csv::Error> {
                w.write_record(fields)?;
                for r in compare::records(&rows) {
                    w.write_record(fields.iter().map(|f| cell(&r[*f])))?;
                }
                Ok(())
            };
            write().map_err(|e| Fail::failure(format!("cannot write CSV: {e}")))?;
            let bytes = w
                .into_inner()
                .map_err(|e| Fail::failure(format!("cannot write CSV: {e}")))?;
            crate::console::out(&String::from_utf8_lossy(&bytes));
        }
        Format::Table | Format::Markdown => {
            let v = compare::view(&ia.to_string(), &ra, &ib.to_string(), &rb, a.threshold);
            crate::console::out(&export::render_view(&v, a.format));
            // Two measured topologies: what moved between the snapshots.
            if let (Some(x), Some(y), Some(t)) = (
                &ra.machine.measured,
                &rb.machine.measured,
                &rb.machine.topology,
            ) {
                crate::console::out(&format!("\n{}", crate::measured::compare_text(x, y, t)));
            }
        }
    }
    let slower = rows.iter().any(|r| r.verdict == compare::Verdict::Slower);
    Ok(i32::from(a.fail_on_regression && slower))
}
