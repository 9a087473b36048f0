//! `ipcperf show ID`: a kept run's tables again.

use std::io::Write;

use clap::Args;

use super::db::{load, parse_run_id, DbArgs, RunId};
use crate::export::Format;
use crate::fail::Fail;
use crate::{export, units};

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The run (an id from `ipcperf history`, or `last`).
    #[arg(value_parser = parse_run_id)]
    pub id: RunId,
    #[command(flatten)]
    pub db: DbArgs,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Block size for the closing ranking (default: 64 KiB if measured, else the largest).
    #[arg(long, value_parser = units::parse_size)]
    pub rank_size: Option<usize>,
}

pub fn run(a: ShowArgs) -> Result<i32, Fail> {
    let mut store = a.db.open_read()?;
    let (id, run) = load(&mut store, a.id)?;
    if !run.complete {
        eprintln!(
            "ipcperf: run {id} is incomplete (stopped, killed or still running): {} cases kept",
            run.cases.len()
        );
    }
    // A pipeline run is shown as Stover's tables, as `ipcperf pipeline` printed it.
    let out = if units::subcommand(&run.command_line) == Some("pipeline") {
        export::render_with(&run, a.format, || super::pipeline::view_of(&run))
    } else {
        export::render_any(&run, a.format, a.rank_size)
    };
    // A run that measured the topology (`topology --measure`) shows it.
    let out =
        match (&run.machine.measured, a.format) {
            (Some(m), Format::Table | Format::Markdown) => {
                let topo = run.machine.topology.clone().unwrap_or_else(|| {
                    ipcperf_core::topology::Topology {
                        cpus: Vec::new(),
                        offline: Vec::new(),
                        not_allowed: Vec::new(),
                        isolated: Vec::new(),
                    }
                });
                format!(
                    "{out}\n{}\n",
                    crate::measured::text(
                        m,
                        &topo,
                        run.machine.virtualization.is_some(),
                        a.format == Format::Markdown
                    )
                    .trim_end()
                )
            }
            _ => out,
        };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
    Ok(0)
}
