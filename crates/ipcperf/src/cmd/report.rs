//! `ipcperf report ID [ID...] -o report.html`.

use std::path::PathBuf;

use clap::Args;

use crate::fail::Fail;
use crate::report;
use crate::shared::db::{load, parse_run_id, DbArgs, RunId};

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  ipcperf report -o report.html\n  ipcperf report baseline last -o ab.html   # the first is the baseline"
)]
pub struct ReportArgs {
    /// Runs to put in the report (ids from `ipcperf history`, `last` or
    /// labels; default: the last); the first is the baseline the others are
    /// compared with.
    #[arg(value_parser = parse_run_id, default_value = "last")]
    pub ids: Vec<RunId>,
    /// The HTML file to write.
    #[arg(long, short, required = true)]
    pub output: PathBuf,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(a: ReportArgs) -> Result<i32, Fail> {
    crate::fail::check_writable(&a.output)?;
    let mut store = a.db.open_read()?;
    let mut runs = Vec::new();
    for id in &a.ids {
        let (n, r) = load(&mut store, id.clone())?;
        let n = n.to_string();
        if runs.iter().any(|(m, _)| *m == n) {
            // Its section twice, and a row of 1.00x against itself where it is
            // the baseline: nothing a reader can use.
            return Err(Fail::usage(format!(
                "run {n} is named twice: a report holds each run once (`ipcperf history` lists them)"
            )));
        }
        runs.push((n, r));
    }
    let html = report::html(&runs);
    std::fs::write(&a.output, html)
        .map_err(|e| Fail::failure(format!("cannot write {}: {e}", a.output.display())))?;
    ipcperf_results::errln!("ipcperf: report written to {}", a.output.display());
    Ok(0)
}
