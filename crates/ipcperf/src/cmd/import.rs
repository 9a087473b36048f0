//! `ipcperf import run.json`: keep a run exported elsewhere (`ipcperf export --format json`
//! or `ipcperf run --format json`) in this history.

use std::path::PathBuf;

use clap::Args;
use ipcperf_core::record::RunRecord;

use super::db::DbArgs;
use crate::Fail;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Run records as JSON (one run per file).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(a: ImportArgs) -> Result<i32, Fail> {
    // Read and check every file before keeping any.
    let mut runs = Vec::new();
    for f in &a.files {
        let text = std::fs::read_to_string(f)
            .map_err(|e| Fail::usage(format!("cannot read {}: {e}", f.display())))?;
        let run: RunRecord = serde_json::from_str(&text)
            .map_err(|e| Fail::usage(format!("{}: not an ipcperf run record: {e}", f.display())))?;
        runs.push((f, run));
    }
    let mut store = a.db.open()?;
    for (f, run) in runs {
        let id = store
            .insert_run(&run)
            .map_err(|e| Fail::failure(format!("run history: {e}")))?;
        println!(
            "{}: run from {} ({} cases) kept as run {id}",
            f.display(),
            run.machine.hostname,
            run.cases.len()
        );
    }
    Ok(0)
}
