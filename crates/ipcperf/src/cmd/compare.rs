//! `ipcperf compare A B`: did this kernel, container or machine change IPC speed?

use clap::Args;

use super::db::{load, parse_run_id, DbArgs, RunId};
use crate::export::Format;
use crate::{compare, export, Fail};

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
    /// Output format (table or markdown).
    #[arg(long, short, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(a: CompareArgs) -> Result<i32, Fail> {
    if matches!(a.format, Format::Json | Format::Csv) {
        return Err(Fail::usage("compare prints a table or markdown"));
    }
    let mut store = a.db.open_read()?;
    let (ia, ra) = load(&mut store, a.a)?;
    let (ib, rb) = load(&mut store, a.b)?;
    let v = compare::view(&ia.to_string(), &ra, &ib.to_string(), &rb, a.threshold);
    crate::console::out(&export::render_view(&v, a.format));
    Ok(0)
}
