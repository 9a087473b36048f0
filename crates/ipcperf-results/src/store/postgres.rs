//! PostgreSQL back end: the same schema on a shared server, so several machines
//! keep one history (`--db postgres://user:password@host/db`).

use postgres::types::ToSql;
use std::time::Duration;

use postgres::{Client, NoTls};

use super::{Conn, Dialect, Kind, Result, StoreError, Val};

pub struct PgConn {
    client: Client,
}

fn err(what: &str, e: postgres::Error) -> StoreError {
    // The error's own text is often just "db error": say what the server said.
    let why = match (e.as_db_error(), std::error::Error::source(&e)) {
        (Some(db), _) => {
            // Our session's own bounds (SESSION_BOUNDS): say which, and how to move it.
            let hint = match db.code().code() {
                "55P03" => {
                    "; another session holds the table locked (20 s unless the URL's options \
                     set lock_timeout, e.g. `?options=-c%20lock_timeout%3D60s`)"
                }
                "57014" if db.message().contains("statement timeout") => {
                    "; the server took longer than a statement may (60 s unless the URL's \
                     options set statement_timeout, e.g. `?options=-c%20statement_timeout%3D300s`)"
                }
                _ => "",
            };
            format!("{} ({}){hint}", db.message(), db.code().code())
        }
        (None, Some(src)) => format!("{e}: {src}"),
        (None, None) => e.to_string(),
    };
    StoreError::new(format!("PostgreSQL: {what}: {why}"))
}

/// How long the server may take to answer a connect, and the kernel to see
/// sent data acknowledged, unless the URL says otherwise.
const ANSWER: Duration = Duration::from_secs(10);

/// Each statement's bound on the server, and a lock wait's (another session
/// holding the table: a migration, a forgotten transaction), as the session's
/// options: the URL's own `options` follow, and a `-c` of theirs wins.
const SESSION_BOUNDS: &str = "-c statement_timeout=60s -c lock_timeout=20s";

impl PgConn {
    /// Connect (no TLS) to `url`, every wait bounded: the connect (10 s), the
    /// connect and handshake together (twice that: something that accepts and
    /// never speaks, a web server on the port named or a stopped PostgreSQL,
    /// held `history` for ever), unacknowledged data (10 s: a host gone), idle
    /// keep-alives from 5 s, and each statement on the server (60 s; a lock
    /// wait 20 s). The URL's own `connect_timeout`, `tcp_user_timeout` and
    /// `keepalives_*` win.
    pub fn open(url: &str) -> Result<PgConn> {
        let shown = super::redact(url);
        let what = format!("cannot connect to {shown}");
        let mut cfg: postgres::Config = url.parse().map_err(|e| err(&what, e))?;
        if cfg.get_connect_timeout().is_none() {
            cfg.connect_timeout(ANSWER);
        }
        let bound = cfg.get_connect_timeout().copied().unwrap_or(ANSWER) * 2;
        if cfg.get_tcp_user_timeout().is_none() {
            cfg.tcp_user_timeout(ANSWER);
        }
        // The library's default idle time is two hours: ours unless the URL set one.
        if cfg.get_keepalives_idle() == Duration::from_secs(2 * 60 * 60) {
            cfg.keepalives_idle(Duration::from_secs(5));
        }
        if cfg.get_keepalives_interval().is_none() {
            cfg.keepalives_interval(Duration::from_secs(2));
        }
        if cfg.get_keepalives_retries().is_none() {
            cfg.keepalives_retries(3);
        }
        let options = match cfg.get_options() {
            Some(theirs) => format!("{SESSION_BOUNDS} {theirs}"),
            None => SESSION_BOUNDS.to_string(),
        };
        cfg.options(&options);
        // The handshake has no bound of the library's: it runs on a thread of
        // its own, which a server that never answers leaves behind as the
        // command ends with the error.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("ipcperf-pg-connect".into())
            .spawn(move || {
                let _ = tx.send(cfg.connect(NoTls));
            })
            .map_err(|e| StoreError::new(format!("PostgreSQL: {what}: {e}")))?;
        let client = match rx.recv_timeout(bound) {
            Ok(r) => r.map_err(|e| err(&what, e))?,
            Err(_) => {
                return Err(StoreError::new(format!(
                    "PostgreSQL: {what}: it took the connection and did not answer within {} s \
                     (is a PostgreSQL server listening there?)",
                    bound.as_secs()
                )))
            }
        };
        Ok(PgConn { client })
    }
}

fn params(v: &[Val]) -> Vec<Box<dyn ToSql + Sync>> {
    v.iter()
        .map(|x| -> Box<dyn ToSql + Sync> {
            match x {
                Val::Int(i) => Box::new(*i),
                Val::Real(f) => Box::new(*f),
                Val::Text(t) => Box::new(t.clone()),
            }
        })
        .collect()
}

impl Conn for PgConn {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn batch(&mut self, sql: &str) -> Result<()> {
        self.client
            .batch_execute(sql)
            .map_err(|e| err("statement failed", e))
    }

    fn exec(&mut self, sql: &str, p: &[Val]) -> Result<u64> {
        let b = params(p);
        let r: Vec<&(dyn ToSql + Sync)> = b.iter().map(|x| x.as_ref()).collect();
        self.client
            .execute(sql, &r)
            .map_err(|e| err("write failed", e))
    }

    fn query(&mut self, sql: &str, p: &[Val], kinds: &[Kind]) -> Result<Vec<Vec<Val>>> {
        let b = params(p);
        let r: Vec<&(dyn ToSql + Sync)> = b.iter().map(|x| x.as_ref()).collect();
        let rows = self
            .client
            .query(sql, &r)
            .map_err(|e| err("query failed", e))?;
        rows.iter()
            .map(|row| {
                kinds
                    .iter()
                    .enumerate()
                    .map(|(i, k)| {
                        Ok(match k {
                            Kind::Int => {
                                Val::Int(row.try_get(i).map_err(|e| err("read failed", e))?)
                            }
                            Kind::Text => {
                                Val::Text(row.try_get(i).map_err(|e| err("read failed", e))?)
                            }
                        })
                    })
                    .collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every session is bounded on the server, a statement at 60 s and a lock
    /// wait at 20 s (before, a table another session held locked kept every
    /// command waiting for ever); the URL's own options win.
    #[test]
    fn a_session_bounds_its_statements_and_lock_waits() {
        let Ok(admin) = std::env::var("IPCPERF_TEST_PG") else {
            eprintln!("skipped: IPCPERF_TEST_PG is not set (.ci/run starts a server and sets it)");
            return;
        };
        let show = |url: &str, what: &str| -> String {
            let mut c = PgConn::open(url).unwrap();
            match c
                .query(&format!("SHOW {what}"), &[], &[Kind::Text])
                .unwrap()[0]
                .as_slice()
            {
                [Val::Text(Some(t))] => t.clone(),
                v => panic!("SHOW {what}: {v:?}"),
            }
        };
        assert_eq!(show(&admin, "statement_timeout"), "1min");
        assert_eq!(show(&admin, "lock_timeout"), "20s");
        let sep = if admin.contains('?') { '&' } else { '?' };
        let theirs = format!("{admin}{sep}options=-c%20lock_timeout%3D1s");
        assert_eq!(show(&theirs, "lock_timeout"), "1s");
        assert_eq!(show(&theirs, "statement_timeout"), "1min");
    }
}
