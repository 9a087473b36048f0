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
#[command(
    after_help = "Examples:\n  ipcperf import nightly.json\n  ipcperf import host-a.json host-b.json --db fleet.db"
)]
pub struct ImportArgs {
    /// Run records as JSON (one run per file; `-`: standard input, as in
    /// `ssh host ipcperf export last --format json | ipcperf import -`; a pipe
    /// or FIFO by name, `<(…)`, is read as standard input is; 128 MiB at most).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(a: ImportArgs) -> Result<i32, Fail> {
    // Each input is read twice (checked, then kept): standard input and any
    // other stream (a pipe, `<(ssh host ipcperf export …)`) is spooled to a
    // file first.
    stdin_checked(&a.files)?;
    let spools = a
        .files
        .iter()
        .map(|f| spooled(f))
        .collect::<Result<Vec<_>, Fail>>()?;
    // Each input: the file read and the name its messages give it ("standard
    // input" for `-`; a stream by its own name, never the spool's path).
    let inputs: Vec<(&Path, String)> = a
        .files
        .iter()
        .zip(&spools)
        .map(|(f, s)| (s.as_ref().map_or(f.as_path(), |t| t.path()), shown(f)))
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

/// How messages name input `f`: `-` as "standard input", a file by its path.
fn shown(f: &Path) -> String {
    if f.as_os_str() == "-" {
        "standard input".to_string()
    } else {
        f.display().to_string()
    }
}

/// `-` (standard input) named at most once, and not a terminal (nothing piped
/// in: the import would wait for typing).
fn stdin_checked(files: &[PathBuf]) -> Result<(), Fail> {
    let dashes = files.iter().filter(|f| f.as_os_str() == "-").count();
    if dashes > 1 {
        return Err(Fail::usage(
            "`-` (standard input) can be named once".to_string(),
        ));
    }
    if dashes == 1 && std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        return Err(Fail::usage(
            "`-` reads a run from standard input, which is a terminal here: pipe one in \
             (`ipcperf export last --format json | ipcperf import -`)"
                .to_string(),
        ));
    }
    Ok(())
}

/// How long an import waits for a writer to open a FIFO it names.
const WRITER_WAIT: std::time::Duration = std::time::Duration::from_secs(20);

/// `f` copied to a temporary file that stands in for it (kept while the
/// handle lives) where it is `-` or a stream (a FIFO, a pipe, a device), which
/// cannot be read twice; None for a file, a directory or a missing path
/// (read_run says what is wrong with those). At most one byte more than an
/// import takes is copied: an endless stream must not fill the temporary
/// directory (read_run then says it is too long).
fn spooled(f: &Path) -> Result<Option<Spool>, Fail> {
    let stdin = f.as_os_str() == "-";
    if !stdin && !std::fs::metadata(f).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return Ok(None);
    }
    let shown = shown(f);
    let mut input: Box<dyn std::io::Read> = if stdin {
        Box::new(std::io::stdin().lock())
    } else {
        // A FIFO no writer opens would hold the import for ever (as `cat`).
        let opened = ipcperf_sys::fd::open_stream(f, WRITER_WAIT)
            .map_err(|e| Fail::usage(format!("cannot read {shown}: {e}")))?;
        let Some((file, first)) = opened else {
            return Err(Fail::failure(format!(
                "{shown}: a FIFO no writer opened within {} s (nothing imported)",
                WRITER_WAIT.as_secs()
            )));
        };
        Box::new(std::io::Read::chain(std::io::Cursor::new(first), file))
    };
    // (tempfile's own error names the file it tried to make.) Removed on
    // Ctrl-C too: a pipe can keep the copy going as long as its writer likes.
    let making = ipcperf_sys::cleanup::creating();
    // Named as our objects are (`ipcperf-<pid>-…`): `ipcperf clean` removes
    // the copy of an import killed outright.
    let prefix = format!("{}-", ipcperf_sys::names::unique("import"));
    let mut spool = tempfile::Builder::new()
        .prefix(&prefix)
        .tempfile()
        .map_err(|e| Fail::failure(format!("{shown}: cannot make its copy: {e}")))?;
    let registered =
        ipcperf_sys::cleanup::register(ipcperf_sys::cleanup::Undo::Path(spool.path().into()));
    drop(making);
    // A failure says which side failed: the input read, or the spool written
    // (a full temporary directory is not a problem of the input).
    let mut left = crate::import::MAX_FILE_BYTES + 1;
    let mut buf = vec![0u8; 64 << 10];
    while left > 0 {
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = match input.read(&mut buf[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Fail::failure(format!("cannot read {shown}: {e}"))),
        };
        std::io::Write::write_all(spool.as_file_mut(), &buf[..n]).map_err(|e| {
            Fail::failure(format!(
                "{shown}: cannot write its copy in {}: {e}",
                std::env::temp_dir().display()
            ))
        })?;
        left -= n as u64;
    }
    Ok(Some(Spool {
        file: spool,
        _registered: registered,
    }))
}

/// A stream's copy: removed when dropped, or by the clean-up of an interruption.
struct Spool {
    file: tempfile::NamedTempFile,
    _registered: ipcperf_sys::cleanup::Registration,
}

impl Spool {
    fn path(&self) -> &Path {
        self.file.path()
    }
}
