//! What every history subcommand shares: `--db`, run ids, opening the store, and
//! the observer that saves a run case by case while it runs.

use clap::Args;
use ipcperf_core::observer::Observer;
use ipcperf_core::plan::CaseSpec;
use ipcperf_core::record::{unix_ms, CaseRecord, RunRecord, SeriesRecord};

use crate::fail::Fail;
use crate::store::label::{check_label, check_new_label};
use crate::store::{Location, Store};

/// Where the history is.
#[derive(Args, Debug, Clone, Default)]
pub struct DbArgs {
    /// The run history: an SQLite file, or postgres://user:password@host/db for a
    /// shared one. Default: $XDG_DATA_HOME/ipcperf/ipcperf.db (else
    /// ~/.local/share/ipcperf/ipcperf.db).
    #[arg(long, env = "IPCPERF_DB", value_name = "PATH|URL")]
    pub db: Option<String>,
}

/// `--db` and `--no-save` for `ipcperf run`.
#[derive(Args, Debug, Clone, Default)]
pub struct SaveArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Name the run (up to 64 characters, not a number, no space at either
    /// end): `history` shows it, and `show`, `compare`, `plot`, `report` and
    /// `export` take it in place of an id (the newest run of that label).
    #[arg(long, value_parser = check_new_label, value_name = "NAME")]
    pub label: Option<String>,
    /// Do not keep this run in the history (wins over --db).
    #[arg(long, env = "IPCPERF_NO_SAVE", value_parser = clap::builder::BoolishValueParser::new())]
    pub no_save: bool,
    /// Also write the run as JSON to FILE, rewritten as each case finishes (a run
    /// stopped half-way leaves the cases it finished).
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<std::path::PathBuf>,
    /// The same as CSV.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<std::path::PathBuf>,
    /// The same as Markdown tables.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<std::path::PathBuf>,
}

impl SaveArgs {
    /// The files to write during the run, with their formats; a file whose
    /// directory does not exist is bad input, said before anything runs.
    fn exports(&self) -> Result<Vec<(std::path::PathBuf, crate::export::Format)>, Fail> {
        use crate::export::Format;
        let mut v = Vec::new();
        for (p, f) in [
            (&self.export_json, Format::Json),
            (&self.export_csv, Format::Csv),
            (&self.export_markdown, Format::Markdown),
        ] {
            let Some(p) = p else { continue };
            v.push((crate::fail::check_rewritable(p)?, f));
        }
        Ok(v)
    }
}

impl DbArgs {
    /// Where the history is. A path that names something that cannot be one (a
    /// directory, a file of something else) is bad input, said in one line; it
    /// was a failure (1) in SQLite's words ("cannot set WAL mode: file is not
    /// a database").
    pub fn location(&self) -> Result<Location, Fail> {
        let loc = Location::from_arg(self.db.as_deref()).map_err(|e| Fail::usage(e.to_string()))?;
        if let crate::store::Location::Sqlite(p) = &loc {
            not_a_history(p)?;
        }
        Ok(loc)
    }

    /// Open the store (creating it if needed; the default's directory too).
    pub fn open(&self) -> Result<Store, Fail> {
        let loc = self.location()?;
        if self.db.is_none() {
            loc.make_default_dir()
                .map_err(|e| Fail::usage(e.to_string()))?;
        }
        Store::open(&loc).map_err(|e| Fail::failure(format!("run history: {e}{}", room(&loc))))
    }

    /// Open the store to read it: as [`DbArgs::open`], or, where an existing
    /// SQLite file cannot be written (a read-only mount, another user's file),
    /// read-only. A read makes nothing: an SQLite file that is not there is
    /// bad input (a mistyped --db or IPCPERF_DB), never a new empty history.
    pub fn open_read(&self) -> Result<Store, Fail> {
        let loc = self.location()?;
        if let crate::store::Location::Sqlite(p) = &loc {
            if !p.exists() {
                return Err(Fail::usage(format!(
                    "no run history at {}: nothing was kept there (a measuring command such as `ipcperf run` keeps its runs there; --db or IPCPERF_DB names another)",
                    p.display()
                )));
            }
        }
        match Store::open(&loc) {
            Ok(s) => Ok(s),
            Err(e) => match &loc {
                crate::store::Location::Sqlite(p) if p.is_file() => Store::open_read_only(&loc)
                    .map_err(|e2| Fail::failure(format!("run history: {e}; read-only: {e2}"))),
                _ => Err(Fail::failure(format!("run history: {e}"))),
            },
        }
    }
}

/// Where an SQLite history's file system is (nearly) full, a note saying so: SQLite
/// calls a full disk "disk I/O error" when it cannot make its WAL.
fn room(loc: &Location) -> String {
    let Location::Sqlite(p) = loc else {
        return String::new();
    };
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    // A history not there yet whose file cannot be made (a directory of /proc,
    // /sys, one not ours): the system's reason, which SQLite's "unable to open
    // database file" leaves out. Made here, it is ours and removed at once.
    if !p.exists() {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(p)
        {
            Ok(_) => {
                let _ = std::fs::remove_file(p);
            }
            Err(e) => return format!(" (cannot create {}: {e})", p.display()),
        }
    }
    let sized = ipcperf_sys::fd::fs_bytes(dir).is_ok_and(|b| b > 0);
    let mut why = match ipcperf_sys::fd::free_bytes(dir) {
        Ok(free) if sized && free < 1 << 20 => format!(
            " (the file system holding {} has {} free)",
            dir.display(),
            small_size(free)
        ),
        _ => String::new(),
    };
    // A write past `ulimit -f` fails as SQLite's "disk I/O error".
    if let Some(most) = ipcperf_sys::fd::file_size_limit() {
        why.push_str(&format!(
            " (files are limited to {} here: `ulimit -f`)",
            small_size(most)
        ));
    }
    why
}

/// A size under a few MiB as it would be read: bytes below 1 KiB (never "0 KiB").
fn small_size(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else {
        format!("{} KiB", bytes / 1024)
    }
}

/// A run as named on the command line: its number, or `last`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunId {
    Id(i64),
    Last,
    /// The newest run with this label.
    Label(String),
}

pub fn parse_run_id(s: &str) -> Result<RunId, String> {
    if s == "last" {
        return Ok(RunId::Last);
    }
    match s.parse::<i64>() {
        Ok(n) if n > 0 => Ok(RunId::Id(n)),
        Ok(_) => Err(format!(
            "'{s}' is not a run id (a number from `ipcperf history`, `last`, or a label)"
        )),
        Err(_) => check_label(s).map(RunId::Label).map_err(|_| {
            format!("'{s}' is not a run id (a number from `ipcperf history`, `last`, or a label)")
        }),
    }
}

/// Refuse a path that is there and cannot be an SQLite history: a directory,
/// or a file that is not empty and does not begin as SQLite's files do.
fn not_a_history(p: &std::path::Path) -> Result<(), Fail> {
    use std::io::Read;
    const HEADER: &[u8; 16] = b"SQLite format 3\0";
    match std::fs::metadata(p) {
        Ok(m) if m.is_dir() => {
            return Err(Fail::usage(format!(
                "{}: a directory, not a run history (name a file, e.g. {})",
                p.display(),
                p.join("ipcperf.db").display()
            )))
        }
        // A device or a FIFO (whose open would wait for a writer): never a history.
        Ok(m) if !m.is_file() => {
            return Err(Fail::usage(format!(
                "{}: not a regular file, so not a run history",
                p.display()
            )))
        }
        Ok(_) => {}
        // Not there (a new history), or not ours to look at: SQLite says which.
        Err(_) => return Ok(()),
    }
    let Ok(mut f) = std::fs::File::open(p) else {
        // Not there (a new history), or not ours to read: SQLite says which.
        return Ok(());
    };
    let mut head = Vec::with_capacity(16);
    if f.by_ref().take(16).read_to_end(&mut head).is_ok() && !head.is_empty() && head != HEADER {
        return Err(Fail::usage(format!(
            "{}: not a run history (not an SQLite database); name the file ipcperf keeps \
             its runs in, or a new one",
            p.display()
        )));
    }
    Ok(())
}

/// Load run `id` from `store`, or say why not (exit 2 for an unknown id).
pub fn load(store: &mut Store, id: RunId) -> Result<(i64, RunRecord), Fail> {
    let fail = |e: crate::store::StoreError| Fail::failure(format!("run history: {e}"));
    let n = match id {
        RunId::Id(n) => n,
        RunId::Last => store
            .list_runs()
            .map_err(fail)?
            .last()
            .map(|r| r.id)
            .ok_or_else(|| Fail::usage(format!("no runs are kept in {}", store.location)))?,
        RunId::Label(l) => store
            .list_runs()
            .map_err(fail)?
            .iter()
            .rev()
            .find(|r| r.label.as_deref() == Some(l.as_str()))
            .map(|r| r.id)
            .ok_or_else(|| {
                Fail::usage(format!(
                    "no run is labelled '{l}' in {} (see `ipcperf history`)",
                    store.location
                ))
            })?,
    };
    match store.load_run(n).map_err(fail)? {
        Some(r) => Ok((n, r)),
        None => Err(Fail::usage(format!(
            "there is no run {n} in {} (see `ipcperf history`)",
            store.location
        ))),
    }
}

/// Saves a run while it runs: the run's row when it starts, each case as it
/// finishes (one transaction each), the end mark when it is over. A store that
/// fails mid-run is reported once on stderr; the measuring goes on.
pub struct Saver {
    store: Option<(Store, i64)>,
    /// Where `store` is (to say how full its disk is).
    loc: Option<Location>,
    next: usize,
    /// `--export-*` files, rewritten from `partial` as each case finishes.
    exports: Vec<(std::path::PathBuf, crate::export::Format)>,
    partial: Option<RunRecord>,
    /// Why the history stopped taking this run's cases (a full disk, a lost
    /// server): the whole run is then written to a file at its end.
    lost: Option<(i64, String)>,
}

impl Saver {
    /// Start saving `run` (nothing is saved with `--no-save`).
    pub fn start(a: &SaveArgs, run: &mut RunRecord) -> Result<Saver, Fail> {
        run.label = a.label.clone();
        let run = &*run;
        let exports = a.exports()?;
        let partial = (!exports.is_empty()).then(|| run.clone());
        if a.no_save {
            return Ok(Saver {
                store: None,
                loc: None,
                next: 0,
                exports,
                partial,
                lost: None,
            });
        }
        let mut store = a.db.open().map_err(|f| Fail {
            message: format!("{} (or run with --no-save)", f.message),
            ..f
        })?;
        let id = store.begin_run(run).map_err(|e| {
            let room = a.db.location().map(|l| room(&l)).unwrap_or_default();
            Fail::failure(format!("run history: {e}{room} (or run with --no-save)"))
        })?;
        ipcperf_sys::signal::on_interrupt_say(format!(
            "the cases that finished, if any, are kept as run {id} (incomplete; `ipcperf show {id}`)"
        ));
        // Marked stopped when interrupted: `history` then says "incomplete
        // (stopped)", not "(killed or running)". Through a connection of its own,
        // opened then: this one may be inside a case's transaction.
        if let Ok(loc) = a.db.location() {
            ipcperf_sys::signal::on_interrupt_finish(move || {
                if let Ok(mut s) = Store::open(&loc) {
                    let _ = s.finish_run(id, unix_ms(), false);
                }
            });
        }
        Ok(Saver {
            store: Some((store, id)),
            loc: a.db.location().ok(),
            next: run.cases.len(),
            exports,
            partial,
            lost: None,
        })
    }

    /// Rewrite every export file from `run` (each through a temporary file renamed
    /// over it, so a reader never sees half a file). A file that cannot be written
    /// is said once, and exporting stops.
    fn export(&mut self, run: &RunRecord) {
        for (path, format) in &self.exports {
            let text = crate::document::document(run, *format, None);
            let tmp = path.with_extension("ipcperf-tmp");
            // Ctrl-C mid-write removes the half-written file (an export of a
            // big run takes a while).
            let making = ipcperf_sys::cleanup::creating();
            let _registered =
                ipcperf_sys::cleanup::register(ipcperf_sys::cleanup::Undo::Path(tmp.clone()));
            drop(making);
            if let Err(e) = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path)) {
                let _ = std::fs::remove_file(&tmp);
                ipcperf_results::errln!(
                    "ipcperf: warning: cannot write {}: {e}; exporting stops",
                    path.display()
                );
                self.exports.clear();
                return;
            }
        }
    }

    /// Keep one finished case (for commands that run cases without an observer).
    pub fn save_case(&mut self, r: &CaseRecord) {
        // A case failing under Ctrl-C's clean-up did not finish: the run keeps
        // the cases that did.
        if r.status == ipcperf_core::record::CaseStatus::Failed && ipcperf_core::interrupted() {
            return;
        }
        if let Some(mut p) = self.partial.take() {
            p.cases.push(r.clone());
            self.export(&p);
            self.partial = Some(p);
        }
        if let Some((store, id)) = &mut self.store {
            if let Err(e) = store.add_case(*id, self.next, r) {
                ipcperf_results::errln!(
                    "ipcperf: warning: this run is no longer being saved: {e}{}; at its end it \
                     is written to a file to import",
                    self.loc.as_ref().map(room).unwrap_or_default()
                );
                self.lost = Some((*id, e.to_string()));
                self.store = None;
            }
        }
        self.next += 1;
    }

    /// Mark the run finished and write the export files; what to say of where it
    /// was kept, to print (with [`Kept::say`]) after the results.
    pub fn finish_quietly(&mut self, run: &RunRecord) -> Option<Kept> {
        // Ended by an interruption being handled (its clean-up failed the case
        // under way): the handler marks the run stopped and exits; marking it
        // finished here would race that (a run of no case said "complete").
        if ipcperf_core::interrupted() {
            return None;
        }
        self.export(run);
        if let Some((id, why)) = &self.lost {
            return Some(Kept::Rescued(rescue(run, *id, why)));
        }
        let (store, id) = self.store.as_mut()?;
        let result = store.update_machine(*id, &run.machine).and_then(|()| {
            store.finish_run(*id, run.finished_ms.unwrap_or_else(unix_ms), run.complete)
        });
        // Finished: an interruption from now on (while the tables print) must
        // not mark it stopped.
        ipcperf_sys::signal::forget_interrupt_finish();
        if result.is_ok() {
            ipcperf_sys::signal::on_interrupt_say(format!(
                "run {id} is kept (`ipcperf show {id}`)"
            ));
        }
        Some(Kept::Saved(match result {
            Ok(()) => format!("saved as run {id} in {}", store.location),
            Err(e) => format!("warning: could not mark run {id} finished: {e}"),
        }))
    }

    /// The run's id in the history (None with `--no-save`).
    pub fn run_id(&self) -> Option<i64> {
        self.store
            .as_ref()
            .map(|(_, id)| *id)
            .or(self.lost.as_ref().map(|(id, _)| *id))
    }

    /// Whether the history lost this run part-way (said by [`Saver::finish_quietly`]).
    pub fn lost(&self) -> bool {
        self.lost.is_some()
    }

    /// An observer that hands every event to `inner` and saves each finished case.
    pub fn observe<'a>(&'a mut self, inner: &'a mut dyn Observer) -> Saving<'a> {
        Saving { saver: self, inner }
    }
}

/// Where a finished run was kept: said after its results.
#[derive(Debug)]
pub enum Kept {
    /// In the history (or why it could not be marked finished): a note, which
    /// `-q` keeps quiet.
    Saved(String),
    /// Not in the history: where the whole run went instead, or that it went
    /// nowhere. Said whatever the verbosity: `-q` must not hide where a run is.
    Rescued(String),
}

impl Kept {
    pub fn say(&self) {
        match self {
            Kept::Saved(line) => crate::console::note(line),
            Kept::Rescued(line) => crate::console::warn_always(line),
        }
    }
}

/// A run the history stopped taking (`why`), written whole as JSON to the
/// temporary directory for `ipcperf import`; the line saying where, or that even
/// that failed. The file is made new (`O_EXCL`, mode 0600) under a name no one
/// can guess: in a shared /tmp another user's symlink or file at a predictable
/// name is never followed nor overwritten.
fn rescue(run: &RunRecord, id: i64, why: &str) -> String {
    rescue_in(&std::env::temp_dir(), run, id, why)
}

fn rescue_in(dir: &std::path::Path, run: &RunRecord, id: i64, why: &str) -> String {
    let text = crate::document::document(run, crate::export::Format::Json, None);
    let written = tempfile::Builder::new()
        .prefix(&format!("ipcperf-run-{id}-"))
        .suffix(".json")
        .tempfile_in(dir)
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(text.as_bytes())?;
            f.as_file().sync_all()?;
            // Kept: a NamedTempFile is removed when dropped.
            f.keep().map_err(|e| e.error)
        });
    match written {
        Ok((_, path)) => format!(
            "run {id} is not kept whole in the history ({why}): the whole run is in {}; \
             `ipcperf import {}` keeps it once there is room",
            path.display(),
            path.display()
        ),
        Err(e) => format!(
            "run {id} is not kept whole in the history ({why}), nor could it be written to \
             {}: {e}; the results above are all there is of it",
            dir.display()
        ),
    }
}

pub struct Saving<'a> {
    saver: &'a mut Saver,
    inner: &'a mut dyn Observer,
}

impl Observer for Saving<'_> {
    fn case_started(&mut self, spec: &CaseSpec, index: usize, total: usize) {
        self.inner.case_started(spec, index, total);
    }
    fn series_done(&mut self, spec: &CaseSpec, series: &SeriesRecord) {
        self.inner.series_done(spec, series);
    }
    fn case_done(&mut self, record: &CaseRecord) {
        self.saver.save_case(record);
        self.inner.case_done(record);
    }
    fn progress(&mut self, done: usize, total: usize) {
        self.inner.progress(done, total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_limit_reads_in_bytes_not_zero_kib() {
        assert_eq!(small_size(512), "512 bytes");
        assert_eq!(small_size(0), "0 bytes");
        assert_eq!(small_size(20_000), "19 KiB");
    }

    #[test]
    fn run_ids() {
        assert_eq!(parse_run_id("12"), Ok(RunId::Id(12)));
        assert_eq!(parse_run_id("last"), Ok(RunId::Last));
        assert!(parse_run_id("0").is_err());
        assert!(parse_run_id("-3").is_err());
        // Anything else that could be a label is one.
        assert_eq!(parse_run_id("x"), Ok(RunId::Label("x".into())));
        assert_eq!(
            parse_run_id("after fix"),
            Ok(RunId::Label("after fix".into()))
        );
        assert!(parse_run_id("").is_err());
        assert!(parse_run_id("a\u{7}b").is_err());
        assert!(parse_run_id(&"y".repeat(65)).is_err());
    }

    /// The rescue file is made new each time, private, under a name no one can
    /// guess: two rescues of one run are two files (the old fixed name was
    /// overwritten), and each line names its file.
    #[test]
    fn a_rescue_is_a_new_private_file_each_time() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let run = RunRecord::begin("run", vec!["ipcperf".into(), "run".into()]);
        let lines: Vec<String> = (0..2)
            .map(|_| rescue_in(dir.path(), &run, 7, "disk full"))
            .collect();
        let files: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 2, "{lines:?}");
        for f in &files {
            let name = f.file_name().unwrap().to_string_lossy().to_string();
            assert!(
                name.starts_with("ipcperf-run-7-") && name.ends_with(".json"),
                "{name}"
            );
            let meta = std::fs::symlink_metadata(f).unwrap();
            assert!(meta.file_type().is_file());
            assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{name}");
            let back: serde_json::Value =
                serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap();
            assert_eq!(back["kind"], "run", "{name}");
            assert_eq!(
                lines
                    .iter()
                    .filter(|l| l.contains(&*f.to_string_lossy()))
                    .count(),
                1
            );
        }
        // A directory that cannot take it: said, nothing pretended.
        let line = rescue_in(&dir.path().join("gone"), &run, 7, "disk full");
        assert!(line.contains("nor could it be written"), "{line}");
    }
}
