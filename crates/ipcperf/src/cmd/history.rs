//! `ipcperf history`: the runs kept, oldest first.

use clap::Args;
use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};

use crate::export::Format;
use crate::fail::Fail;
use crate::shared::db::DbArgs;
use crate::store::RunSummary;

#[derive(Args, Debug)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Only the last N runs. (`-n` is a count of blocks or round trips elsewhere,
    /// so here it is `-l`.)
    #[arg(long, short = 'l')]
    pub last: Option<usize>,
    /// Output format.
    #[arg(long, short, value_parser = crate::shared::choice::choice::<Format>(), default_value_t = Format::Table)]
    pub format: Format,
}

fn status(r: &RunSummary) -> String {
    match (r.complete, r.finished_ms) {
        (true, Some(end)) => format!(
            "complete, {:.0} s",
            (end.saturating_sub(r.started_ms)) as f64 / 1e3
        ),
        (true, None) => "complete".into(),
        (false, Some(_)) => "incomplete (stopped)".into(),
        (false, None) => "incomplete (killed or running)".into(),
    }
}

pub fn run(a: HistoryArgs) -> Result<i32, Fail> {
    a.format.refuse_metrics("the run history")?;
    let mut store = a.db.open_read()?;
    let mut runs = store
        .list_runs()
        .map_err(|e| Fail::failure(format!("run history: {e}")))?;
    if let Some(n) = a.last {
        let skip = runs.len().saturating_sub(n);
        runs.drain(..skip);
    }
    if a.format == Format::Json {
        ipcperf_results::outln!("{}", serde_json::to_string_pretty(&runs).expect("json"));
        return Ok(0);
    }
    // One row per run, the same columns in every format.
    let header = [
        "id", "kind", "label", "started", "host", "kernel", "cases", "measured", "status",
    ];
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.id.to_string(),
                r.kind.clone(),
                r.label.clone().unwrap_or_default(),
                crate::units::fmt_utc(r.started_ms),
                r.hostname.clone(),
                r.kernel.clone(),
                r.cases.to_string(),
                r.mechanisms.join(" "),
                status(r),
            ]
        })
        .collect();
    if a.format == Format::Csv {
        let mut w = crate::export::csv::CsvOut::default();
        let mut h = header.map(str::to_string);
        h[3] = "started_utc".into();
        w.row(&h);
        for r in &rows {
            w.row(r);
        }
        crate::console::out(&w.text());
        return Ok(0);
    }
    if runs.is_empty() {
        ipcperf_results::outln!(
            "No runs kept yet in {} (`ipcperf run` saves each run).",
            store.location
        );
        return Ok(0);
    }
    if a.format == Format::Markdown {
        ipcperf_results::outln!("| {} |", header.join(" | "));
        ipcperf_results::outln!("|{}", "---|".repeat(header.len()));
        for r in &rows {
            let cells: Vec<String> = r.iter().map(|c| c.replace('|', "\\|")).collect();
            ipcperf_results::outln!("| {} |", cells.join(" | "));
        }
        return Ok(0);
    }
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header);
    for r in rows {
        t.add_row(r);
    }
    crate::console::fit(&mut t);
    ipcperf_results::outln!("Runs kept in {}\n{t}", store.location);
    Ok(0)
}
