//! PostgreSQL back end: the same schema on a shared server, so several machines
//! keep one history (`--db postgres://user:password@host/db`).

use postgres::types::ToSql;
use std::sync::mpsc;
use std::time::Duration;

use postgres::{Client, NoTls};

use super::{Conn, Dialect, Kind, Result, StoreError, Val};

/// A PostgreSQL connection. The client lives on a thread of its own and each
/// statement waits for its answer within a bound: the library's sync client
/// has none, and a server that stops answering mid-statement (stopped, a VM
/// paused) still has its kernel acknowledge every packet and keep-alive, so a
/// read of it waited for ever.
pub struct PgConn {
    asks: mpsc::Sender<Job>,
    /// The server's statement bound plus [`ANSWER`]; None where the session
    /// has no statement bound (the URL set `statement_timeout=0`: theirs).
    bound: Option<Duration>,
    /// Set once a statement went unanswered: the connection is lost.
    lost: Option<String>,
}

enum Ask {
    Batch(String),
    Exec(String, Vec<Val>),
    Query(String, Vec<Val>, Vec<Kind>),
}

enum Answer {
    Done,
    Count(u64),
    Rows(Vec<Vec<Val>>),
}

struct Job {
    ask: Ask,
    reply: mpsc::Sender<Result<Answer>>,
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
/// sent data acknowledged, unless the URL says otherwise; and how long past
/// its own statement bound a statement's answer may take to arrive.
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
    /// keep-alives from 5 s, each statement on the server (60 s; a lock wait
    /// 20 s) and its answer here (the server's bound and 10 s more). The URL's
    /// own `connect_timeout`, `tcp_user_timeout`, `keepalives_*` and options win.
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
        // The client's thread: a server that never answers leaves it behind
        // as the command ends with the error.
        let (ready_tx, ready) = mpsc::channel();
        let (asks, jobs) = mpsc::channel::<Job>();
        let thread_what = what.clone();
        std::thread::Builder::new()
            .name("ipcperf-pg".into())
            .spawn(move || {
                let mut client = match cfg.connect(NoTls) {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = ready_tx.send(Err(err(&thread_what, e)));
                        return;
                    }
                };
                // The session's statement bound as the server holds it (ours,
                // or the URL's): `0` is none.
                let limit = client
                    .query_one(
                        "SELECT extract(epoch FROM \
                         current_setting('statement_timeout')::interval)::float8",
                        &[],
                    )
                    .and_then(|row| row.try_get::<_, f64>(0))
                    .map_err(|e| err(&thread_what, e));
                let failed = limit.is_err();
                let _ = ready_tx.send(limit);
                if failed {
                    return;
                }
                for job in jobs {
                    let _ = job.reply.send(serve(&mut client, job.ask));
                }
            })
            .map_err(|e| StoreError::new(format!("PostgreSQL: {what}: {e}")))?;
        let limit = match ready.recv_timeout(bound) {
            Ok(r) => r?,
            Err(_) => {
                return Err(StoreError::new(format!(
                    "PostgreSQL: {what}: it took the connection and did not answer within {} s \
                     (is a PostgreSQL server listening there?)",
                    bound.as_secs()
                )))
            }
        };
        let bound = (limit.is_finite() && limit > 0.0)
            .then(|| Duration::from_secs_f64(limit.min(1e9)) + ANSWER);
        Ok(PgConn {
            asks,
            bound,
            lost: None,
        })
    }

    /// Hand `ask` to the client's thread and wait for its answer within the bound.
    fn ask(&mut self, ask: Ask) -> Result<Answer> {
        if let Some(why) = &self.lost {
            return Err(StoreError::new(why.clone()));
        }
        let (reply, answer) = mpsc::channel();
        let gone = || StoreError::new("PostgreSQL: the connection's thread is gone");
        self.asks.send(Job { ask, reply }).map_err(|_| gone())?;
        let got = match self.bound {
            Some(b) => answer.recv_timeout(b).map_err(|e| match e {
                mpsc::RecvTimeoutError::Timeout => Some(b),
                mpsc::RecvTimeoutError::Disconnected => None,
            }),
            None => answer.recv().map_err(|_| None),
        };
        match got {
            Ok(r) => r,
            Err(None) => Err(gone()),
            Err(Some(b)) => {
                let why = format!(
                    "PostgreSQL: the server did not answer a statement within {} s, {} s past \
                     its own statement_timeout (is it stopped or overloaded?)",
                    b.as_secs(),
                    ANSWER.as_secs()
                );
                self.lost = Some(why.clone());
                Err(StoreError::new(why))
            }
        }
    }
}

/// Run one statement on the client's thread.
fn serve(client: &mut Client, ask: Ask) -> Result<Answer> {
    match ask {
        Ask::Batch(sql) => client
            .batch_execute(&sql)
            .map(|()| Answer::Done)
            .map_err(|e| err("statement failed", e)),
        Ask::Exec(sql, p) => {
            let b = params(&p);
            let r: Vec<&(dyn ToSql + Sync)> = b.iter().map(|x| x.as_ref()).collect();
            client
                .execute(&sql, &r)
                .map(Answer::Count)
                .map_err(|e| err("write failed", e))
        }
        Ask::Query(sql, p, kinds) => {
            let b = params(&p);
            let r: Vec<&(dyn ToSql + Sync)> = b.iter().map(|x| x.as_ref()).collect();
            let rows = client.query(&sql, &r).map_err(|e| err("query failed", e))?;
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
                .collect::<Result<_>>()
                .map(Answer::Rows)
        }
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
        self.ask(Ask::Batch(sql.to_string())).map(|_| ())
    }

    fn exec(&mut self, sql: &str, p: &[Val]) -> Result<u64> {
        match self.ask(Ask::Exec(sql.to_string(), p.to_vec()))? {
            Answer::Count(n) => Ok(n),
            _ => Err(StoreError::new(
                "PostgreSQL: a write answered as something else",
            )),
        }
    }

    fn query(&mut self, sql: &str, p: &[Val], kinds: &[Kind]) -> Result<Vec<Vec<Val>>> {
        match self.ask(Ask::Query(sql.to_string(), p.to_vec(), kinds.to_vec()))? {
            Answer::Rows(rows) => Ok(rows),
            _ => Err(StoreError::new(
                "PostgreSQL: a query answered as something else",
            )),
        }
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

    /// A server that stops answering mid-statement (its backend stopped: the
    /// kernel still acknowledges every packet and keep-alive, so neither
    /// tcp_user_timeout nor keep-alives see it) is an error within the
    /// session's statement bound and 10 s; before, the statement waited for ever.
    #[test]
    fn a_server_that_stops_answering_is_an_error_within_its_bound() {
        use std::process::Command;
        use std::time::Instant;
        let Ok(admin) = std::env::var("IPCPERF_TEST_PG") else {
            eprintln!("skipped: IPCPERF_TEST_PG is not set (.ci/run starts a server and sets it)");
            return;
        };
        let sep = if admin.contains('?') { '&' } else { '?' };
        let url = format!("{admin}{sep}options=-c%20statement_timeout%3D1s");
        let mut c = PgConn::open(&url).unwrap();
        let pid = match c
            .query("SELECT pg_backend_pid()::bigint", &[], &[Kind::Int])
            .unwrap()[0]
            .as_slice()
        {
            [Val::Int(Some(p))] => p.to_string(),
            v => panic!("pg_backend_pid: {v:?}"),
        };
        /// Lets our own backend go on, however the test ends.
        struct Cont(String);
        impl Drop for Cont {
            fn drop(&mut self) {
                let _ = Command::new("kill").args(["-CONT", &self.0]).status();
            }
        }
        if !Command::new("kill")
            .args(["-STOP", &pid])
            .status()
            .is_ok_and(|s| s.success())
        {
            eprintln!("skipped: cannot stop backend {pid} (a server on another host or user)");
            return;
        }
        let _cont = Cont(pid);
        let (tx, rx) = mpsc::channel();
        let t0 = Instant::now();
        std::thread::spawn(move || {
            let r = c.query("SELECT 1::bigint", &[], &[Kind::Int]);
            let _ = tx.send(r.map(|_| ()).map_err(|e| e.0));
        });
        let r = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("a stopped server held a statement 30 s");
        let took = t0.elapsed();
        let e = r.expect_err("a stopped server answered");
        assert!(e.contains("did not answer a statement within 11 s"), "{e}");
        assert!(
            took >= Duration::from_secs(10) && took < Duration::from_secs(20),
            "{took:?}"
        );
    }
}
