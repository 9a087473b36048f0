//! SQLite back end (rusqlite, SQLite compiled in): one file, WAL journal, so a
//! process killed between two cases leaves every committed case readable.

use std::path::Path;
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{Connection, ToSql};

use super::{Conn, Dialect, Kind, Result, StoreError, Val};

pub struct SqliteConn {
    db: Connection,
    path: String,
}

fn err(path: &str, what: &str, e: rusqlite::Error) -> StoreError {
    StoreError::new(format!("{path}: {what}: {e}"))
}

impl ToSql for Val {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Val::Int(Some(v)) => ToSqlOutput::Owned(Value::Integer(*v)),
            Val::Real(Some(v)) => ToSqlOutput::Owned(Value::Real(*v)),
            Val::Text(Some(v)) => ToSqlOutput::Borrowed(ValueRef::Text(v.as_bytes())),
            Val::Int(None) | Val::Real(None) | Val::Text(None) => ToSqlOutput::Owned(Value::Null),
        })
    }
}

impl SqliteConn {
    /// Open or create the database at `path` (and its directory).
    pub fn open(path: &Path) -> Result<SqliteConn> {
        let shown = path.display().to_string();
        // The directory must exist: only the default location's is made (by
        // `Location::default_sqlite`), never one a --db path names.
        let db = Connection::open(path).map_err(|e| err(&shown, "cannot open", e))?;
        let path = shown;
        db.busy_timeout(BUSY_WAIT)
            .map_err(|e| err(&path, "busy timeout", e))?;
        // WAL: readers never block the writer, and a commit is one append; with
        // synchronous=NORMAL a killed process loses nothing committed.
        let mode = wal_mode(&db).map_err(|e| err(&path, "cannot set WAL mode", e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::new(format!(
                "{path}: the database would not use WAL (journal mode {mode})"
            )));
        }
        db.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
            .map_err(|e| err(&path, "pragmas", e))?;
        Ok(SqliteConn { db, path })
    }

    /// Open an existing database only to read it: a file this user may not write
    /// (another user's), or one on a read-only mount. SQLite's WAL mode wants to
    /// create its `-shm` file beside the database; where it cannot, the file is
    /// read as immutable (nothing else can be writing to a read-only mount).
    pub fn open_read_only(path: &Path) -> Result<SqliteConn> {
        use rusqlite::OpenFlags;
        let shown = path.display().to_string();
        if !path.is_file() {
            return Err(StoreError::new(format!("{shown}: no such database")));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut last = None;
        for query in ["mode=ro", "mode=ro&immutable=1"] {
            let uri = format!("file:{}?{query}", uri_path(path));
            match Connection::open_with_flags(&uri, flags) {
                Ok(db) => {
                    // Opening is lazy: read the schema to know the file is usable.
                    match db.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| {
                        r.get::<_, i64>(0)
                    }) {
                        Ok(_) => return Ok(SqliteConn { db, path: shown }),
                        Err(e) => last = Some(e),
                    }
                }
                Err(e) => last = Some(e),
            }
        }
        Err(match last {
            Some(e) => err(&shown, "cannot open to read", e),
            None => StoreError::new(format!("{shown}: cannot open to read")),
        })
    }
}

/// How long an open waits for another process's hold on the database.
const BUSY_WAIT: Duration = Duration::from_secs(10);

/// Put `db` in WAL mode. Two processes opening one new history at once (a
/// Slurm job's tasks on a shared directory) contend for the switch, and SQLite
/// answers the loser SQLITE_BUSY at once, without its busy handler (waiting could
/// deadlock): so try again, for as long as the busy timeout would have waited.
fn wal_mode(db: &Connection) -> rusqlite::Result<String> {
    let deadline = std::time::Instant::now() + BUSY_WAIT;
    loop {
        match db.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0)) {
            Err(rusqlite::Error::SqliteFailure(f, _))
                if matches!(
                    f.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            other => return other,
        }
    }
}

/// A path as a `file:` URI path: `%`, `?` and `#` escaped, made absolute.
fn uri_path(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = String::new();
    for b in abs.to_string_lossy().bytes() {
        match b {
            b'%' | b'?' | b'#' => out.push_str(&format!("%{b:02X}")),
            _ => out.push(b as char),
        }
    }
    out
}

impl Conn for SqliteConn {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn batch(&mut self, sql: &str) -> Result<()> {
        self.db
            .execute_batch(sql)
            .map_err(|e| err(&self.path, "statement failed", e))
    }

    fn exec(&mut self, sql: &str, params: &[Val]) -> Result<u64> {
        let p: Vec<&dyn ToSql> = params.iter().map(|v| v as &dyn ToSql).collect();
        self.db
            .execute(sql, p.as_slice())
            .map(|n| n as u64)
            .map_err(|e| err(&self.path, "write failed", e))
    }

    fn query(&mut self, sql: &str, params: &[Val], kinds: &[Kind]) -> Result<Vec<Vec<Val>>> {
        let path = self.path.clone();
        let p: Vec<&dyn ToSql> = params.iter().map(|v| v as &dyn ToSql).collect();
        let mut st = self
            .db
            .prepare(sql)
            .map_err(|e| err(&path, "query failed", e))?;
        let rows = st
            .query_map(p.as_slice(), |r| {
                kinds
                    .iter()
                    .enumerate()
                    .map(|(i, k)| {
                        Ok(match k {
                            Kind::Int => Val::Int(r.get(i)?),
                            Kind::Text => Val::Text(r.get(i)?),
                        })
                    })
                    .collect::<rusqlite::Result<Vec<Val>>>()
            })
            .map_err(|e| err(&path, "query failed", e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| err(&path, "read failed", e))
    }
}
