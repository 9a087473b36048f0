//! PostgreSQL back end: the same schema on a shared server, so several machines
//! keep one history (`--db postgres://user:password@host/db`).

use postgres::types::ToSql;
use postgres::{Client, NoTls};

use super::{Conn, Dialect, Kind, Result, StoreError, Val};

pub struct PgConn {
    client: Client,
}

fn err(what: &str, e: postgres::Error) -> StoreError {
    // The error's own text is often just "db error": say what the server said.
    let why = match (e.as_db_error(), std::error::Error::source(&e)) {
        (Some(db), _) => format!("{} ({})", db.message(), db.code().code()),
        (None, Some(src)) => format!("{e}: {src}"),
        (None, None) => e.to_string(),
    };
    StoreError::new(format!("PostgreSQL: {what}: {why}"))
}

impl PgConn {
    /// Connect (no TLS) to `url`.
    pub fn open(url: &str) -> Result<PgConn> {
        let client = Client::connect(url, NoTls)
            .map_err(|e| err(&format!("cannot connect to {}", super::redact(url)), e))?;
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
