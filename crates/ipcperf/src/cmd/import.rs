//! `ipcperf import run.json`: keep a run exported elsewhere (`ipcperf export --format json`
//! or `ipcperf run --format json`) in this history.
//!
//! A file is read as a stream: each case is checked and kept as soon as it is
//! parsed, inside one transaction per run, so memory holds one case at a time and
//! a killed or failed import keeps nothing. Every file is checked in a first pass
//! before any is kept. Values no run of ipcperf can produce (a block of 0 bytes or
//! of 2^64-1, a start in the future) are refused with the field named, and a run
//! already kept is not kept twice.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::fail::Fail;
use crate::import::read_run_as;
use crate::shared::db::DbArgs;
use crate::store::StoreError;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Run records as JSON (one run per file; `-`: standard input, as in
    /// `ssh host ipcperf export last --format json | ipcperf import -`).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(a: ImportArgs) -> Result<i32, Fail> {
    // Standard input is read twice (checked, then kept): spooled to a file first.
    let spool = stdin_spooled(&a.files)?;
    // Each input: the file read and the name its messages give it ("standard
    // input" for the spool, never the spool's path).
    let inputs: Vec<(&Path, String)> = a
        .files
        .iter()
        .map(|f| match &spool {
            Some(s) if f.as_os_str() == "-" => (s.path(), "standard input".to_string()),
            _ => (f.as_path(), f.display().to_string()),
        })
        .collect();
    // Check every file before keeping any (a pass that keeps nothing in memory).
    for (f, shown) in &inputs {
        read_run_as(f, shown, |_| Ok(())).map_err(Fail::usage)?;
    }
    let mut store = a.db.open()?;
    for (f, shown) in &inputs {
        // A problem found while keeping is the file's (it was just read whole) or
        // the database's; the transaction keeps nothing either way.
        let mut file_err = None;
        let kept = store.import_run(|sink| {
            read_run_as(f, shown, |c| sink.add(&c).map_err(|e| e.to_string())).map_err(|e| {
                file_err = Some(e.clone());
                StoreError::new(e)
            })
        });
        match kept {
            Ok(i) => ipcperf_results::outln!(
                "{shown}: run from {} ({} cases) kept as run {}{}",
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
                return Err(Fail::usage(format!("{shown}: {e}")))
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

/// Where `files` names `-`, standard input copied to a temporary file that
/// stands in for it (kept while the returned handle lives); `-` twice is bad
/// input, and so is a terminal (nothing piped in: the import would wait for
/// typing).
fn stdin_spooled(files: &[PathBuf]) -> Result<Option<tempfile::NamedTempFile>, Fail> {
    let dashes = files.iter().filter(|f| f.as_os_str() == "-").count();
    if dashes == 0 {
        return Ok(None);
    }
    if dashes > 1 {
        return Err(Fail::usage(
            "`-` (standard input) can be named once".to_string(),
        ));
    }
    let stdin = std::io::stdin();
    if std::io::IsTerminal::is_terminal(&stdin) {
        return Err(Fail::usage(
            "`-` reads a run from standard input, which is a terminal here: pipe one in \
             (`ipcperf export last --format json | ipcperf import -`)"
                .to_string(),
        ));
    }
    // A failure says which side failed: the pipe read, or the spool written
    // (a full temporary directory is not a problem of standard input).
    let spooled = |e: std::io::Error| {
        Fail::failure(format!(
            "standard input: cannot write its copy in {}: {e}",
            std::env::temp_dir().display()
        ))
    };
    // (tempfile's own error names the file it tried to make.)
    let mut f = tempfile::Builder::new()
        .prefix("ipcperf-import-")
        .tempfile()
        .map_err(|e| Fail::failure(format!("standard input: cannot make its copy: {e}")))?;
    // No more than an import takes (read_run says so): an endless pipe must
    // not fill the temporary directory.
    let mut left = crate::import::MAX_FILE_BYTES + 1;
    let mut input = stdin.lock();
    let mut buf = vec![0u8; 64 << 10];
    while left > 0 {
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = match std::io::Read::read(&mut input, &mut buf[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Fail::failure(format!("cannot read standard input: {e}"))),
        };
        std::io::Write::write_all(f.as_file_mut(), &buf[..n]).map_err(spooled)?;
        left -= n as u64;
    }
    Ok(Some(f))
}
