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
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| StoreError::new(format!("cannot create {}: {e}", dir.display())))?;
        }
        let db = Connection::open(path).map_err(|e| err(&shown, "cannot open", e))?;
        let path = shown;
        db.busy_timeout(Duration::from_secs(10))
            .map_err(|e| err(&path, "busy timeout", e))?;
        // WAL: readers never block the writer, and a commit is one append; with
        // synchronous=NORMAL a killed process loses nothing committed.
        let mode: String = db
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(|e| err(&path, "cannot set WAL mode", e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::new(format!(
                "{path}: the database would not use WAL (journal mode {mode})"
            )));
        }
        db.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
            .map_err(|e| err(&path, "pragmas", e))?;
        Ok(SqliteConn { db, path })
    }
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
