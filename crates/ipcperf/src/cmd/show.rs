//! `ipcperf show ID`: a kept run's tables again.

use clap::Args;

use crate::export::Format;
use crate::fail::Fail;
use crate::shared::db::{load, parse_run_id, DbArgs, RunId};
use crate::units;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  ipcperf show\n  ipcperf show 12 --format markdown\n  ipcperf show nightly --rank-size 4k"
)]
pub struct ShowArgs {
    /// The run: an id from `ipcperf history`, `last` (the default) or a label.
    #[arg(value_parser = parse_run_id, default_value = "last")]
    pub id: RunId,
    #[command(flatten)]
    pub db: DbArgs,
    /// Output format.
    #[arg(long, short, value_parser = crate::shared::choice::choice::<Format>(), default_value_t = Format::Table)]
    pub format: Format,
    /// Block size for the closing ranking (default: 64 KiB if measured, else the largest).
    #[arg(long, value_parser = units::parse_size)]
    pub rank_size: Option<usize>,
}

pub fn run(a: ShowArgs) -> Result<i32, Fail> {
    let mut store = a.db.open_read()?;
    let (id, run) = load(&mut store, a.id)?;
    crate::shared::stream::check_rank_size(
        a.rank_size,
        run.cases
            .iter()
            .filter(|c| c.workload == ipcperf_core::workload::Workload::Stream)
            .map(|c| c.block_size),
    )?;
    if !run.complete {
        ipcperf_results::errln!(
            "ipcperf: run {id} is incomplete (stopped, killed or still running): {} cases kept",
            run.cases.len()
        );
    }
    // One way out: the library decides how a kept run looks.
    let out = crate::document::document(&run, a.format, a.rank_size);
    crate::console::out_result(&out)
        .map_err(|e| Fail::failure(format!("cannot write to standard output: {e}")))?;
    Ok(0)
}
