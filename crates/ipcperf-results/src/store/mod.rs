//! The run history: runs, their machine and every case, kept in SQLite (the
//! default, in the XDG data directory) or PostgreSQL (`--db postgres://...`).
//!
//! The store knows records, not formats. Each case is kept whole (its
//! `CaseRecord` as JSON, so fields added to the record later flow through) next to
//! indexed columns (mechanism, mode, workload, block size, placement) and its raw
//! series figures in their own table. A run is written as it goes: its row first
//! (incomplete), then one transaction per finished case, then its end; a run
//! killed midway keeps its finished cases and stays marked incomplete.
//!
//! Both back ends speak the same SQL through the small [`Conn`] trait; the schema
//! and its migrations live in [`schema`], what `fleet` and `trend` select in
//! [`figures`].

pub mod figures;
pub mod label;
pub use figures::{CaseFigures, FigureFilter};
pub mod postgres;
pub mod schema;
pub mod sqlite;

use std::path::PathBuf;

use ipcperf_core::machine::Machine;
use ipcperf_core::record::{CaseRecord, RunRecord};

/// A store error: what was being done, and why it failed.
#[derive(Debug)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl StoreError {
    pub fn new(s: impl Into<String>) -> StoreError {
        StoreError(s.into())
    }
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// A value bound to or read from a statement. Integers are 64-bit (BIGINT) in
/// both back ends; NULL carries its type because PostgreSQL wants one.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<String>),
}

impl Val {
    pub fn int(&self) -> Option<i64> {
        match self {
            Val::Int(v) => *v,
            _ => None,
        }
    }
    pub fn text(&self) -> Option<&str> {
        match self {
            Val::Text(v) => v.as_deref(),
            _ => None,
        }
    }
}

/// The type of a column read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int,
    Text,
}

/// The kinds of a row of `ints` integer columns, then `texts` text columns.
pub(crate) fn columns(ints: usize, texts: usize) -> Vec<Kind> {
    let mut v = vec![Kind::Int; ints];
    v.resize(ints + texts, Kind::Text);
    v
}

/// Which SQL dialect a connection speaks (only the schema's DDL differs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// The little a back end must do. Parameters are written `$1, $2, ...` in order of
/// appearance, which both SQLite and PostgreSQL accept.
pub trait Conn {
    fn dialect(&self) -> Dialect;
    /// Run statements with no parameters and no result (DDL, BEGIN, COMMIT).
    fn batch(&mut self, sql: &str) -> Result<()>;
    /// Run one statement; returns the rows changed.
    fn exec(&mut self, sql: &str, params: &[Val]) -> Result<u64>;
    /// Run one query; every row is read with the column kinds given.
    fn query(&mut self, sql: &str, params: &[Val], kinds: &[Kind]) -> Result<Vec<Vec<Val>>>;
}

/// One line of `ipcperf history`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunSummary {
    pub id: i64,
    /// The subcommand that made it (`run`, `latency`, `sync`, `matrix`, `pipeline`;
    /// an imported run keeps its own).
    pub kind: String,
    pub started_ms: u64,
    pub finished_ms: Option<u64>,
    pub complete: bool,
    pub hostname: String,
    pub kernel: String,
    pub cases: u64,
    /// Mechanisms measured, in the order they first appear.
    pub mechanisms: Vec<String>,
    /// The run's label (`--label`), if it has one.
    pub label: Option<String>,
}

/// A run history on one connection.
pub struct Store {
    pub(crate) conn: Box<dyn Conn>,
    /// Where it is, for messages.
    pub location: String,
}

/// A run [`Store::import_run`] kept.
#[derive(Debug)]
pub struct Imported {
    pub id: i64,
    /// The run's own fields (its `cases` empty).
    pub head: RunRecord,
    pub cases: usize,
    /// The unfinished run it replaced, and how many cases that one held.
    pub replaced: Option<(i64, usize)>,
}

/// Where the store is: a path for SQLite or a `postgres://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Location {
    /// `--db` as given: a postgres:// or postgresql:// URL, else a file path.
    pub fn parse(s: &str) -> Location {
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            Location::Postgres(s.to_string())
        } else {
            Location::Sqlite(PathBuf::from(s))
        }
    }

    /// `--db` checked: empty, or a URL of a database ipcperf does not speak, is
    /// refused (rather than taken for a file path such as `mysql:/x`).
    pub fn parse_checked(s: &str) -> Result<Location> {
        if s.trim().is_empty() {
            return Err(StoreError::new(
                "--db '': give a file path or a postgres:// URL (or leave --db out)",
            ));
        }
        if let Some((scheme, _)) = s.split_once("://") {
            if !matches!(scheme, "postgres" | "postgresql") {
                return Err(StoreError::new(format!(
                    "--db {}: ipcperf keeps runs in SQLite (a file path) or PostgreSQL \
                     (postgres://...), not {scheme}",
                    redact(s)
                )));
            }
        }
        Ok(Location::parse(s))
    }

    /// `$XDG_DATA_HOME/ipcperf/ipcperf.db`, else `~/.local/share/ipcperf/ipcperf.db`
    /// (the data directory as the `directories` crate finds it, by the XDG rules).
    pub fn default_sqlite() -> Result<Location> {
        let base = directories::BaseDirs::new().ok_or_else(|| {
            StoreError::new(
                "no home directory is known (HOME is not set): give --db PATH or --no-save",
            )
        })?;
        Ok(Location::Sqlite(
            base.data_dir().join("ipcperf").join("ipcperf.db"),
        ))
    }

    /// The location from `--db`, or the default. A `--db` file path must be in
    /// a directory that exists: ipcperf makes no directory a user did not ask
    /// for. The default's directory is made only to write there
    /// ([`Location::make_default_dir`]): a read made it (`history` under a
    /// mistyped HOME left HOME/.local/share/ipcperf behind).
    pub fn from_arg(db: Option<&str>) -> Result<Location> {
        match db {
            Some(s) => {
                let loc = Location::parse_checked(s)?;
                if let Location::Sqlite(p) = &loc {
                    let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
                    if let Some(d) = dir.filter(|d| !d.is_dir()) {
                        return Err(StoreError::new(format!(
                            "--db {}: no such directory {}",
                            p.display(),
                            d.display()
                        )));
                    }
                }
                Ok(loc)
            }
            None => Location::default_sqlite(),
        }
    }

    /// Make the default location's directory (0700) where it is missing, to
    /// write the history there.
    pub fn make_default_dir(&self) -> Result<()> {
        if let Location::Sqlite(p) = self {
            if let Some(d) = p.parent().filter(|d| !d.is_dir()) {
                use std::os::unix::fs::DirBuilderExt;
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(d)
                    .map_err(|e| StoreError::new(format!("cannot create {}: {e}", d.display())))?;
            }
        }
        Ok(())
    }

    /// For messages: the path, or the URL without its password.
    pub fn display(&self) -> String {
        match self {
            Location::Sqlite(p) => p.display().to_string(),
            Location::Postgres(u) => redact(u),
        }
    }
}

/// `postgres://user:secret@host/db` → `postgres://user:***@host/db`.
fn redact(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        if let Some((cred, host)) = rest.split_once('@') {
            if let Some((user, _)) = cred.split_once(':') {
                return format!("{scheme}://{user}:***@{host}");
            }
        }
    }
    url.to_string()
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| StoreError::new(format!("cannot encode a record: {e}")))
}

fn unjson<T: serde::de::DeserializeOwned>(s: &str, what: &str) -> Result<T> {
    serde_json::from_str(s).map_err(|e| StoreError::new(format!("stored {what} unreadable: {e}")))
}

fn enum_name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|j| j.as_str().map(String::from))
        .unwrap_or_default()
}

impl Store {
    /// Open (creating if needed) and bring the schema up to date.
    pub fn open(loc: &Location) -> Result<Store> {
        let conn: Box<dyn Conn> = match loc {
            Location::Sqlite(p) => Box::new(sqlite::SqliteConn::open(p)?),
            Location::Postgres(u) => Box::new(postgres::PgConn::open(u)?),
        };
        Store::on(conn, loc.display())
    }

    /// Open an existing history only to read it, where it cannot be written (a
    /// read-only mount, another user's file): no migration, so its schema must be
    /// this version's.
    pub fn open_read_only(loc: &Location) -> Result<Store> {
        let Location::Sqlite(p) = loc else {
            return Store::open(loc);
        };
        let mut conn: Box<dyn Conn> = Box::new(sqlite::SqliteConn::open_read_only(p)?);
        let rows = conn.query(
            "SELECT COALESCE(MAX(version), 0) FROM schema_version",
            &[],
            &[Kind::Int],
        )?;
        let v = rows.first().and_then(|r| r[0].int()).unwrap_or(0) as usize;
        if v != schema::MIGRATIONS.len() {
            return Err(StoreError::new(format!(
                "{}: schema version {v}, and this ipcperf reads version {}; it cannot \
                 be brought up to date because the file cannot be written",
                loc.display(),
                schema::MIGRATIONS.len()
            )));
        }
        Ok(Store {
            conn,
            location: loc.display(),
        })
    }

    /// Use an open connection, migrating it to the current schema.
    pub fn on(mut conn: Box<dyn Conn>, location: String) -> Result<Store> {
        schema::migrate(conn.as_mut(), schema::MIGRATIONS.len())?;
        Ok(Store { conn, location })
    }

    /// Run `f` in one transaction: committed if it succeeds, rolled back if not.
    fn tx<T>(&mut self, f: impl FnOnce(&mut dyn Conn) -> Result<T>) -> Result<T> {
        tx(self.conn.as_mut(), f)
    }

    /// Record the start of a run (its cases, if any, are added too); returns its id.
    pub fn begin_run(&mut self, run: &RunRecord) -> Result<i64> {
        let machine = json(&run.machine)?;
        let cmd = json(&run.command_line)?;
        let id = self.tx(|c| {
            let rows = c.query(
                "INSERT INTO runs (started_ms, finished_ms, complete, ipcperf_version, \
                 command_line, hostname, kernel, machine, label, cpu_model, kind) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id",
                &[
                    Val::Int(Some(to_i64(run.started_ms))),
                    Val::Int(run.finished_ms.map(to_i64)),
                    Val::Int(Some(0)),
                    Val::Text(Some(run.ipcperf_version.clone())),
                    Val::Text(Some(cmd)),
                    Val::Text(Some(run.machine.host().to_string())),
                    Val::Text(Some(run.machine.kernel.clone())),
                    Val::Text(Some(machine)),
                    Val::Text(run.label.clone()),
                    Val::Text(Some(run.machine.cpu_model.clone())),
                    Val::Text(Some(run.kind_or_guess())),
                ],
                &[Kind::Int],
            )?;
            rows.first()
                .and_then(|r| r[0].int())
                .ok_or_else(|| StoreError::new("the database gave no id for the new run"))
        })?;
        for (i, case) in run.cases.iter().enumerate() {
            self.add_case(id, i, case)?;
        }
        Ok(id)
    }

    /// Keep one finished case of run `id` (case number `seq`, from 0), in one transaction.
    pub fn add_case(&mut self, id: i64, seq: usize, case: &CaseRecord) -> Result<()> {
        self.tx(|c| insert_case(c, id, seq, case))
    }

    /// Keep what the run's end learnt of its machine (others' busy time, a quota's throttling).
    pub fn update_machine(&mut self, id: i64, machine: &Machine) -> Result<()> {
        let m = json(machine)?;
        self.tx(|c| {
            let set = "UPDATE runs SET machine = $1 WHERE id = $2";
            c.exec(set, &[Val::Text(Some(m.clone())), Val::Int(Some(id))])
                .map(|_| ())
        })
    }

    /// Mark run `id` finished (complete or not) at `finished_ms`.
    pub fn finish_run(&mut self, id: i64, finished_ms: u64, complete: bool) -> Result<()> {
        self.tx(|c| {
            let n = c.exec(
                "UPDATE runs SET finished_ms = $1, complete = $2 WHERE id = $3",
                &[
                    Val::Int(Some(to_i64(finished_ms))),
                    Val::Int(Some(complete as i64)),
                    Val::Int(Some(id)),
                ],
            )?;
            if n == 0 {
                return Err(StoreError::new(format!("there is no run {id}")));
            }
            Ok(())
        })
    }

    /// Keep an imported run, all of it or nothing, in one transaction: `fill` hands
    /// each case to the sink as it reads it (so the run is never whole in memory)
    /// and returns the run's own fields (its `cases` left empty). A run already
    /// kept (same start, host, version and command line) is refused with its id,
    /// unless the history holds it unfinished with fewer cases (a run whose
    /// history stopped taking it part-way, written whole elsewhere): that one
    /// is replaced.
    pub fn import_run(
        &mut self,
        fill: impl FnOnce(&mut CaseSink<'_>) -> Result<RunRecord>,
    ) -> Result<Imported> {
        self.tx(|c| {
            let rows = c.query(
                "INSERT INTO runs (started_ms, finished_ms, complete, ipcperf_version, \
                 command_line, hostname, kernel, machine) \
                 VALUES (0, NULL, 0, '', '[]', '', '', '{}') RETURNING id",
                &[],
                &[Kind::Int],
            )?;
            let id = rows
                .first()
                .and_then(|r| r[0].int())
                .ok_or_else(|| StoreError::new("the database gave no id for the new run"))?;
            let mut sink = CaseSink { c, id, next: 0 };
            let head = fill(&mut sink)?;
            let cases = sink.next;
            let cmd = json(&head.command_line)?;
            let dup = c.query(
                "SELECT id, finished_ms, (SELECT COUNT(*) FROM cases WHERE run_id = runs.id) \
                 FROM runs WHERE id <> $1 AND started_ms = $2 AND hostname = $3 \
                 AND ipcperf_version = $4 AND command_line = $5 ORDER BY id",
                &[
                    Val::Int(Some(id)),
                    Val::Int(Some(to_i64(head.started_ms))),
                    Val::Text(Some(head.machine.host().to_string())),
                    Val::Text(Some(head.ipcperf_version.clone())),
                    Val::Text(Some(cmd.clone())),
                ],
                &[Kind::Int, Kind::Int, Kind::Int],
            )?;
            let mut replaced = None;
            if let Some(row) = dup.first() {
                let old = row[0].int().unwrap_or(0);
                let held = row[2].int().unwrap_or(0).max(0) as usize;
                if dup.len() > 1 || row[1].int().is_some() || held >= cases {
                    return Err(StoreError::new(format!(
                        "this run is already kept as run {old} (same start, host, version \
                         and command line): not imported again"
                    )));
                }
                // Its cases, series and figures go with it (ON DELETE CASCADE).
                c.exec("DELETE FROM runs WHERE id = $1", &[Val::Int(Some(old))])?;
                replaced = Some((old, held));
            }
            c.exec(
                "UPDATE runs SET started_ms = $1, finished_ms = $2, complete = $3, \
                 ipcperf_version = $4, command_line = $5, hostname = $6, kernel = $7, \
                 machine = $8, label = $9, cpu_model = $10, kind = $11 WHERE id = $12",
                &[
                    Val::Int(Some(to_i64(head.started_ms))),
                    Val::Int(head.finished_ms.map(to_i64)),
                    Val::Int(Some(head.complete as i64)),
                    Val::Text(Some(head.ipcperf_version.clone())),
                    Val::Text(Some(cmd)),
                    Val::Text(Some(head.machine.host().to_string())),
                    Val::Text(Some(head.machine.kernel.clone())),
                    Val::Text(Some(json(&head.machine)?)),
                    // SQLite numbers `$N` parameters in the order they first appear:
                    // they must appear in the text in order.
                    Val::Text(head.label.clone()),
                    Val::Text(Some(head.machine.cpu_model.clone())),
                    Val::Text(Some(head.kind_or_guess())),
                    Val::Int(Some(id)),
                ],
            )?;
            Ok(Imported {
                id,
                head,
                cases,
                replaced,
            })
        })
    }

    /// Keep a whole run at once (tests; imports stream through [`Store::import_run`]).
    #[cfg(test)]
    pub fn insert_run(&mut self, run: &RunRecord) -> Result<i64> {
        let id = self.begin_run(run)?;
        if let Some(end) = run.finished_ms {
            self.finish_run(id, end, run.complete)?;
        }
        Ok(id)
    }

    /// Every run, oldest first.
    pub fn list_runs(&mut self) -> Result<Vec<RunSummary>> {
        let runs = self.conn.query(
            "SELECT id, started_ms, finished_ms, complete, hostname, kernel, kind, \
             label FROM runs ORDER BY id",
            &[],
            &columns(4, 4),
        )?;
        let mechs = self.conn.query(
            "SELECT run_id, mechanism, MIN(seq), COUNT(*) FROM cases \
             GROUP BY run_id, mechanism ORDER BY run_id, MIN(seq)",
            &[],
            &[Kind::Int, Kind::Text, Kind::Int, Kind::Int],
        )?;
        Ok(runs
            .into_iter()
            .map(|r| {
                let id = r[0].int().unwrap_or(0);
                let mine: Vec<&Vec<Val>> =
                    mechs.iter().filter(|m| m[0].int() == Some(id)).collect();
                RunSummary {
                    id,
                    kind: r[6].text().unwrap_or("?").to_string(),
                    started_ms: r[1].int().unwrap_or(0) as u64,
                    finished_ms: r[2].int().map(|v| v as u64),
                    complete: r[3].int() == Some(1),
                    hostname: r[4].text().unwrap_or("").to_string(),
                    kernel: r[5].text().unwrap_or("").to_string(),
                    cases: mine.iter().map(|m| m[3].int().unwrap_or(0) as u64).sum(),
                    mechanisms: mine
                        .iter()
                        .map(|m| m[1].text().unwrap_or("").to_string())
                        .collect(),
                    label: r[7].text().map(str::to_string),
                }
            })
            .collect())
    }

    /// Run `id` as it was recorded, with every case kept; None if there is no such run.
    pub fn load_run(&mut self, id: i64) -> Result<Option<RunRecord>> {
        let rows = self.conn.query(
            "SELECT started_ms, finished_ms, complete, ipcperf_version, command_line, machine, \
             label, kind FROM runs WHERE id = $1",
            &[Val::Int(Some(id))],
            &columns(3, 5),
        )?;
        let Some(r) = rows.into_iter().next() else {
            return Ok(None);
        };
        let machine: Machine = unjson(r[5].text().unwrap_or("{}"), "machine")?;
        let command_line: Vec<String> = unjson(r[4].text().unwrap_or("[]"), "command line")?;
        let cases = self
            .conn
            .query(
                "SELECT record FROM cases WHERE run_id = $1 ORDER BY seq",
                &[Val::Int(Some(id))],
                &[Kind::Text],
            )?
            .into_iter()
            .map(|c| unjson::<CaseRecord>(c[0].text().unwrap_or(""), "case"))
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(RunRecord {
            ipcperf_version: r[3].text().unwrap_or("").to_string(),
            label: r[6].text().map(str::to_string),
            kind: r[7].text().map_or_else(
                || RunRecord::kind_of_command_line(&command_line),
                str::to_string,
            ),
            command_line,
            started_ms: r[0].int().unwrap_or(0) as u64,
            finished_ms: r[1].int().map(|v| v as u64),
            complete: r[2].int() == Some(1),
            machine,
            cases,
        }))
    }

    /// The schema version the database is at.
    #[cfg(test)]
    pub fn schema_version(&mut self) -> Result<usize> {
        schema::version(self.conn.as_mut())
    }
}

/// Where an import puts its cases, one at a time, inside its transaction.
pub struct CaseSink<'a> {
    c: &'a mut dyn Conn,
    id: i64,
    next: usize,
}

impl CaseSink<'_> {
    pub fn add(&mut self, case: &CaseRecord) -> Result<()> {
        insert_case(self.c, self.id, self.next, case)?;
        self.next += 1;
        Ok(())
    }
}

/// The rows of one case (the record whole, its columns, its series).
fn insert_case(c: &mut dyn Conn, id: i64, seq: usize, case: &CaseRecord) -> Result<()> {
    let record = json(case)?;
    let seq = seq as i64;
    c.exec(
        "INSERT INTO cases (run_id, seq, workload, mechanism, mode, block_size, \
         placement, payload, status, median_bytes_per_sec, record) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        &[
            Val::Int(Some(id)),
            Val::Int(Some(seq)),
            Val::Text(Some(case.workload.name().to_string())),
            Val::Text(Some(case.mechanism.clone())),
            Val::Text(Some(case.mode.name().to_string())),
            Val::Int(Some(to_i64(case.block_size))),
            Val::Text(Some(case.placement.label.clone())),
            Val::Text(Some(case.payload.name().to_string())),
            Val::Text(Some(enum_name(&case.status))),
            Val::Real(case.median_bytes_per_sec),
            Val::Text(Some(record)),
        ],
    )?;
    schema::insert_series(c, id, seq, case)?;
    schema::insert_figures(c, id, seq, case)
}

/// Run `f` in one transaction on `c`.
pub fn tx<T>(c: &mut dyn Conn, f: impl FnOnce(&mut dyn Conn) -> Result<T>) -> Result<T> {
    c.batch(match c.dialect() {
        // Take the write lock at once, so a concurrent writer waits (busy timeout)
        // instead of failing mid-transaction.
        Dialect::Sqlite => "BEGIN IMMEDIATE",
        Dialect::Postgres => "BEGIN",
    })?;
    match f(c) {
        Ok(v) => {
            c.batch("COMMIT")?;
            Ok(v)
        }
        Err(e) => {
            let _ = c.batch("ROLLBACK");
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn locations() {
        assert_eq!(
            Location::parse("postgres://u:p@h/db"),
            Location::Postgres("postgres://u:p@h/db".into())
        );
        assert_eq!(
            Location::parse("/tmp/x.db"),
            Location::Sqlite("/tmp/x.db".into())
        );
        assert_eq!(
            Location::parse("postgresql://u:secret@h/db").display(),
            "postgresql://u:***@h/db"
        );
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
    }
}
