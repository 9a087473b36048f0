//! `ipcperf plot ID -o chart.svg|chart.png`.

use std::path::PathBuf;

use clap::Args;

use super::db::{load, parse_run_id, DbArgs, RunId};
use crate::{plot, Fail};

#[derive(Args, Debug)]
pub struct PlotArgs {
    /// The run (an id from `ipcperf history`, or `last`).
    #[arg(value_parser = parse_run_id)]
    pub id: RunId,
    /// The file to write; its extension (.svg or .png) chooses the format.
    #[arg(long, short, required = true)]
    pub output: PathBuf,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(a: PlotArgs) -> Result<i32, Fail> {
    let ext = a
        .output
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let png = match ext.as_deref() {
        Some("svg") => false,
        Some("png") => true,
        _ => {
            return Err(Fail::usage(format!(
                "{}: name the file .svg or .png",
                a.output.display()
            )))
        }
    };
    let mut store = a.db.open()?;
    let (id, run) = load(&mut store, a.id)?;
    if run.cases.iter().all(|c| c.median_bytes_per_sec.is_none()) {
        return Err(Fail::usage(format!(
            "run {id} has no case that moved data: nothing to plot"
        )));
    }
    if png {
        plot::throughput_png(&run, &a.output).map_err(Fail::failure)?;
    } else {
        let svg = plot::throughput_svg(&run).map_err(Fail::failure)?;
        std::fs::write(&a.output, svg)
            .map_err(|e| Fail::failure(format!("cannot write {}: {e}", a.output.display())))?;
    }
    eprintln!("ipcperf: run {id} drawn in {}", a.output.display());
    Ok(0)
}
