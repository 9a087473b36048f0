//! `ipcperf export ID --format csv|json|markdown -o FILE`.

use std::path::PathBuf;

use clap::Args;

use super::db::{load, parse_run_id, DbArgs, RunId};
use crate::cli::Format;
use crate::{export, Fail};

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The run (an id from `ipcperf history`, or `last`).
    #[arg(value_parser = parse_run_id)]
    pub id: RunId,
    #[command(flatten)]
    pub db: DbArgs,
    /// json is the run record itself (what `ipcperf import` reads).
    #[arg(long, short, value_enum, default_value_t = Format::Json)]
    pub format: Format,
    /// Write here instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

pub fn run(a: ExportArgs) -> Result<i32, Fail> {
    let mut store = a.db.open()?;
    let (_, run) = load(&mut store, a.id)?;
    let out = export::render_any(&run, a.format, None);
    write_out(a.output.as_deref(), out.as_bytes())
}

/// Write to `path` (or stdout when None), saying why on failure.
pub fn write_out(path: Option<&std::path::Path>, bytes: &[u8]) -> Result<i32, Fail> {
    use std::io::Write;
    match path {
        Some(p) => std::fs::write(p, bytes)
            .map_err(|e| Fail::failure(format!("cannot write {}: {e}", p.display())))?,
        None => {
            let mut o = std::io::stdout().lock();
            let _ = o.write_all(bytes);
            let _ = o.flush();
        }
    }
    Ok(0)
}
