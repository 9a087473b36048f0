//! `ipcperf export ID --format csv|json|markdown -o FILE`.

use std::path::PathBuf;

use clap::Args;

use crate::export;
use crate::export::Format;
use crate::fail::Fail;
use crate::shared::db::{load, parse_run_id, DbArgs, RunId};
use ipcperf_core::record::RunRecord;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  ipcperf export last --format csv -o run.csv\n  ipcperf export nightly --format json -o nightly.json"
)]
pub struct ExportArgs {
    /// The run: an id from `ipcperf history`, `last` (the default) or a label.
    #[arg(value_parser = parse_run_id, default_value = "last")]
    pub id: RunId,
    #[command(flatten)]
    pub db: DbArgs,
    /// json is the run record itself (what `ipcperf import` reads).
    #[arg(long, short, value_parser = crate::shared::choice::choice::<Format>(), default_value_t = Format::Json)]
    pub format: Format,
    /// Write here instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

pub fn run(a: ExportArgs) -> Result<i32, Fail> {
    // A file that cannot be written is bad input (2), as for plot and report;
    // a write that fails later (a full disk) is a failure (1).
    if let Some(p) = &a.output {
        crate::fail::check_writable(p)?;
    }
    let mut store = a.db.open_read()?;
    let (_, run) = load(&mut store, a.id)?;
    if a.format == Format::Json {
        // Straight to the file or stdout, case by case: a large run is never
        // held twice more as a JSON tree and a string.
        return write_json_out(a.output.as_deref(), &run);
    }
    let out = crate::document::document(&run, a.format, None);
    write_out(a.output.as_deref(), &out)
}

fn write_json_out(path: Option<&std::path::Path>, run: &RunRecord) -> Result<i32, Fail> {
    use std::io::Write;
    let shown = path.map_or("standard output".to_string(), |p| p.display().to_string());
    let fail = |e: &dyn std::fmt::Display| Fail::failure(format!("cannot write {shown}: {e}"));
    let sink: Box<dyn Write> = match path {
        Some(p) => Box::new(std::fs::File::create(p).map_err(|e| fail(&e))?),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut w = std::io::BufWriter::new(sink);
    let done = export::write_json(run, &mut w)
        .map_err(std::io::Error::from)
        .and_then(|()| w.write_all(b"\n"))
        .and_then(|()| w.flush());
    match done {
        Ok(()) => Ok(0),
        // A reader that went away (`| head`) is not a failure of ours.
        Err(e) if path.is_none() && e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        Err(e) => Err(fail(&e)),
    }
}

/// Write to `path` (or stdout when None), saying why on failure.
pub fn write_out(path: Option<&std::path::Path>, text: &str) -> Result<i32, Fail> {
    match path {
        Some(p) => std::fs::write(p, text)
            .map_err(|e| Fail::failure(format!("cannot write {}: {e}", p.display())))?,
        None => crate::console::out_result(text)
            .map_err(|e| Fail::failure(format!("cannot write to standard output: {e}")))?,
    }
    Ok(0)
}
