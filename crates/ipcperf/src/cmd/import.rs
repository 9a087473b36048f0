//! `ipcperf import run.json`: keep a run exported elsewhere (`ipcperf export --format json`
//! or `ipcperf run --format json`) in this history.
//!
//! A file is read as a stream: each case is checked and kept as soon as it is
//! parsed, inside one transaction per run, so memory holds one case at a time and
//! a killed or failed import keeps nothing. Every file is checked in a first pass
//! before any is kept. Values no run of ipcperf can produce (a block of 0 bytes or
//! of 2^64-1, a start in the future) are refused with the field named, and a run
//! already kept is not kept twice.

use std::path::PathBuf;

use clap::Args;

use crate::fail::Fail;
use crate::import::read_run;
use crate::shared::db::DbArgs;
use crate::store::StoreError;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Run records as JSON (one run per file).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(a: ImportArgs) -> Result<i32, Fail> {
    // Check every file before keeping any (a pass that keeps nothing in memory).
    for f in &a.files {
        read_run(f, |_| Ok(())).map_err(Fail::usage)?;
    }
    let mut store = a.db.open()?;
    for f in &a.files {
        // A problem found while keeping is the file's (it was just read whole) or
        // the database's; the transaction keeps nothing either way.
        let mut file_err = None;
        let kept = store.import_run(|sink| {
            read_run(f, |c| sink.add(&c).map_err(|e| e.to_string())).map_err(|e| {
                file_err = Some(e.clone());
                StoreError::new(e)
            })
        });
        match kept {
            Ok(i) => ipcperf_results::outln!(
                "{}: run from {} ({} cases) kept as run {}{}",
                f.display(),
                i.head.machine.hostname,
                i.cases,
                i.id,
                match i.replaced {
                    Some((old, held)) => format!(
                        ", in place of run {old} (the same run, which the history held \
                         unfinished with {held} of its cases)"
                    ),
                    None => String::new(),
                }
            ),
            Err(e) if e.0.contains("already kept as run") => {
                return Err(Fail::usage(format!("{}: {e}", f.display())))
            }
            Err(e) => {
                return Err(match file_err {
                    Some(m) => Fail::usage(m),
                    None => Fail::failure(format!("run history: {e}")),
                })
            }
        }
    }
    Ok(0)
}
