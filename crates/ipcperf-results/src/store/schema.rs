//! The schema and its migrations, from the first one on.
//!
//! `schema_version` holds one row per migration applied. Each migration runs in
//! its own transaction (both SQLite and PostgreSQL roll DDL back), re-checking the
//! version once it holds the lock, so two processes opening the store at once
//! apply each migration exactly once. Never edit a released migration: add one.

use ipcperf_core::record::{CaseRecord, RunRecord};

use super::{tx, unjson, Conn, Dialect, Kind, Result, StoreError, Val};

/// One step of the schema.
pub struct Migration {
    pub version: usize,
    pub what: &'static str,
    /// The DDL, for a dialect.
    pub ddl: fn(Dialect) -> String,
    /// Data moved or derived after the DDL, in the same transaction.
    pub backfill: Option<fn(&mut dyn Conn) -> Result<()>>,
}

fn id_column(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => "INTEGER PRIMARY KEY AUTOINCREMENT",
        Dialect::Postgres => "BIGSERIAL PRIMARY KEY",
    }
}

/// Version 1: runs (with the machine as JSON) and cases (each record whole, plus
/// the columns one filters on).
fn v1(d: Dialect) -> String {
    format!(
        "CREATE TABLE runs (
            id {id},
            started_ms BIGINT NOT NULL,
            finished_ms BIGINT,
            complete BIGINT NOT NULL DEFAULT 0,
            ipcperf_version TEXT NOT NULL,
            command_line TEXT NOT NULL,
            hostname TEXT NOT NULL,
            kernel TEXT NOT NULL,
            machine TEXT NOT NULL
        );
        CREATE TABLE cases (
            run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            seq BIGINT NOT NULL,
            workload TEXT NOT NULL,
            mechanism TEXT NOT NULL,
            mode TEXT NOT NULL,
            block_size BIGINT NOT NULL,
            placement TEXT NOT NULL,
            payload TEXT NOT NULL,
            status TEXT NOT NULL,
            median_bytes_per_sec DOUBLE PRECISION,
            record TEXT NOT NULL,
            PRIMARY KEY (run_id, seq)
        );",
        id = id_column(d)
    )
}

/// Version 2: every series' raw figures in a table of their own (so SQL can reach
/// them), and an index for looking a case up across runs.
fn v2(_: Dialect) -> String {
    "CREATE TABLE series (
        run_id BIGINT NOT NULL,
        seq BIGINT NOT NULL,
        n BIGINT NOT NULL,
        blocks BIGINT NOT NULL,
        bytes BIGINT NOT NULL,
        elapsed_ns BIGINT NOT NULL,
        PRIMARY KEY (run_id, seq, n),
        FOREIGN KEY (run_id, seq) REFERENCES cases(run_id, seq) ON DELETE CASCADE
    );
    CREATE INDEX cases_by_case ON cases (mechanism, mode, workload, block_size, placement);"
        .to_string()
}

/// Version 3: a run's label (`--label`), to find and compare it by.
fn v3(_: Dialect) -> String {
    "ALTER TABLE runs ADD COLUMN label TEXT;
    CREATE INDEX runs_by_label ON runs (label);"
        .to_string()
}

/// Version 4: what `fleet` and `trend` select by. Each run's CPU model; and a
/// narrow table of each comparable case's identity across hosts (its placement
/// class, not its CPU numbers) and figures (one per series, as `compare` judges
/// them), kept apart from the wide case records so that selecting a thousand
/// hosts' figures never reads the records; indexes for a host's runs in time and
/// one case across runs.
fn v4(_: Dialect) -> String {
    "ALTER TABLE runs ADD COLUMN cpu_model TEXT;
    CREATE TABLE case_figures (
        run_id BIGINT NOT NULL,
        seq BIGINT NOT NULL,
        class_key TEXT NOT NULL,
        workload TEXT NOT NULL,
        mechanism TEXT NOT NULL,
        block_size BIGINT NOT NULL,
        figure_values TEXT NOT NULL,
        PRIMARY KEY (run_id, seq),
        FOREIGN KEY (run_id, seq) REFERENCES cases(run_id, seq) ON DELETE CASCADE
    );
    CREATE INDEX case_figures_by_class ON case_figures (class_key, run_id);
    CREATE INDEX runs_by_host ON runs (hostname, started_ms);"
        .to_string()
}

/// Each kept run's id and machine (as plain JSON: a machine of any age).
fn run_machines(c: &mut dyn Conn) -> Result<Vec<(Option<i64>, serde_json::Value)>> {
    c.query(
        "SELECT id, machine FROM runs",
        &[],
        &[Kind::Int, Kind::Text],
    )?
    .into_iter()
    .map(|r| Ok((r[0].int(), unjson(r[1].text().unwrap_or("{}"), "machine")?)))
    .collect()
}

/// Fill version 4's column and table from the runs and cases kept before it.
fn v4_backfill(c: &mut dyn Conn) -> Result<()> {
    for (id, m) in run_machines(c)? {
        // Only the CPU model is read: a machine of any age has it or not.
        c.exec(
            "UPDATE runs SET cpu_model = $1 WHERE id = $2",
            &[
                Val::Text(Some(m["cpu_model"].as_str().unwrap_or("").to_string())),
                Val::Int(id),
            ],
        )?;
    }
    each_case(c, insert_figures)
}

/// Every case kept, in order, handed to `f` with its run id and number.
fn each_case(
    c: &mut dyn Conn,
    f: fn(&mut dyn Conn, i64, i64, &CaseRecord) -> Result<()>,
) -> Result<()> {
    let rows = c.query(
        "SELECT run_id, seq, record FROM cases ORDER BY run_id, seq",
        &[],
        &[Kind::Int, Kind::Int, Kind::Text],
    )?;
    for r in rows {
        let case: CaseRecord = unjson(r[2].text().unwrap_or(""), "case")?;
        f(c, r[0].int().unwrap_or(0), r[1].int().unwrap_or(0), &case)?;
    }
    Ok(())
}

/// Version 5: an index for labelled histories (the host key needs no DDL).
fn v5(_: Dialect) -> String {
    "CREATE INDEX IF NOT EXISTS runs_by_label ON runs (label, started_ms);".to_string()
}

/// A run's host is its scheduler's node where one launched it: runs kept
/// before version 5 under a pod's or a job's host name move to their node.
fn v5_backfill(c: &mut dyn Conn) -> Result<()> {
    for (id, m) in run_machines(c)? {
        let node = m["scheduler"]["node"].as_str().unwrap_or("").trim();
        if !node.is_empty() {
            c.exec(
                "UPDATE runs SET hostname = $1 WHERE id = $2",
                &[Val::Text(Some(node.to_string())), Val::Int(id)],
            )?;
        }
    }
    Ok(())
}

/// Version 6: each run's kind (the command that made it), how it is shown.
fn v6(_: Dialect) -> String {
    "ALTER TABLE runs ADD COLUMN kind TEXT;".to_string()
}

/// Runs kept before version 6 have their kind from their command line, once.
fn v6_backfill(c: &mut dyn Conn) -> Result<()> {
    let rows = c.query(
        "SELECT id, command_line FROM runs",
        &[],
        &[Kind::Int, Kind::Text],
    )?;
    for r in rows {
        let line: Vec<String> = unjson(r[1].text().unwrap_or("[]"), "command line")?;
        c.exec(
            "UPDATE runs SET kind = $1 WHERE id = $2",
            &[
                Val::Text(Some(RunRecord::kind_of_command_line(&line))),
                Val::Int(r[0].int()),
            ],
        )?;
    }
    Ok(())
}

/// The figures of case (`run_id`, `seq`), if the fleet has any to compare
/// (none for a failed case or a many-pairs one).
pub fn insert_figures(c: &mut dyn Conn, run_id: i64, seq: i64, case: &CaseRecord) -> Result<()> {
    let Some((key, values)) = crate::compare::comparable(case) else {
        return Ok(());
    };
    let values = serde_json::to_string(&values)
        .map_err(|e| StoreError::new(format!("cannot encode a case's figures: {e}")))?;
    c.exec(
        "INSERT INTO case_figures (run_id, seq, class_key, workload, mechanism, block_size, \
         figure_values) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        &[
            Val::Int(Some(run_id)),
            Val::Int(Some(seq)),
            Val::Text(Some(key)),
            Val::Text(Some(case.workload.name().to_string())),
            Val::Text(Some(case.mechanism.clone())),
            Val::Int(Some(i64::try_from(case.block_size).unwrap_or(i64::MAX))),
            Val::Text(Some(values)),
        ],
    )?;
    Ok(())
}

/// Fill `series` from the case records kept before version 2.
fn v2_backfill(c: &mut dyn Conn) -> Result<()> {
    each_case(c, insert_series)
}

/// Every migration, in order; the last is the current schema.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        what: "runs and cases",
        ddl: v1,
        backfill: None,
    },
    Migration {
        version: 2,
        what: "raw series table, case index",
        ddl: v2,
        backfill: Some(v2_backfill),
    },
    Migration {
        version: 3,
        what: "run labels",
        ddl: v3,
        backfill: None,
    },
    Migration {
        version: 4,
        what: "fleet columns and indexes",
        ddl: v4,
        backfill: Some(v4_backfill),
    },
    Migration {
        version: 5,
        what: "hosts are scheduler nodes",
        ddl: v5,
        backfill: Some(v5_backfill),
    },
    Migration {
        version: 6,
        what: "run kinds",
        ddl: v6,
        backfill: Some(v6_backfill),
    },
];

/// The raw series of case (`run_id`, `seq`), once the series table exists.
pub fn insert_series(c: &mut dyn Conn, run_id: i64, seq: i64, case: &CaseRecord) -> Result<()> {
    for (n, s) in case.series.iter().enumerate() {
        c.exec(
            "INSERT INTO series (run_id, seq, n, blocks, bytes, elapsed_ns) \
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                Val::Int(Some(run_id)),
                Val::Int(Some(seq)),
                Val::Int(Some(n as i64)),
                Val::Int(Some(s.blocks as i64)),
                Val::Int(Some(s.bytes as i64)),
                Val::Int(Some(s.elapsed_ns as i64)),
            ],
        )?;
    }
    Ok(())
}

const VERSION_TABLE: &str = "CREATE TABLE IF NOT EXISTS schema_version (
    version BIGINT PRIMARY KEY,
    applied_ms BIGINT NOT NULL
)";

/// The highest migration applied (0 for an empty database).
pub fn version(c: &mut dyn Conn) -> Result<usize> {
    c.batch(VERSION_TABLE)?;
    let rows = c.query(
        "SELECT COALESCE(MAX(version), 0) FROM schema_version",
        &[],
        &[Kind::Int],
    )?;
    Ok(rows.first().and_then(|r| r[0].int()).unwrap_or(0) as usize)
}

/// Apply migrations up to and including `target`.
pub fn migrate(c: &mut dyn Conn, target: usize) -> Result<()> {
    let now = version(c)?;
    if now > MIGRATIONS.len() {
        return Err(StoreError::new(format!(
            "the database has schema version {now}, newer than this ipcperf knows ({}): \
             upgrade ipcperf",
            MIGRATIONS.len()
        )));
    }
    for m in MIGRATIONS
        .iter()
        .filter(|m| m.version > now && m.version <= target)
    {
        tx(c, |c| {
            if c.dialect() == Dialect::Postgres {
                // Serialize migrations between clients sharing one server.
                c.query("SELECT pg_advisory_xact_lock(7243101)", &[], &[])?;
            }
            // Another process may have applied it while we waited for the lock.
            let done = c.query(
                "SELECT COUNT(*) FROM schema_version WHERE version = $1",
                &[Val::Int(Some(m.version as i64))],
                &[Kind::Int],
            )?;
            if done.first().and_then(|r| r[0].int()).unwrap_or(0) > 0 {
                return Ok(());
            }
            c.batch(&(m.ddl)(c.dialect())).map_err(|e| {
                StoreError::new(format!("migration {} ({}): {e}", m.version, m.what))
            })?;
            if let Some(f) = m.backfill {
                f(c)?;
            }
            c.exec(
                "INSERT INTO schema_version (version, applied_ms) VALUES ($1, $2)",
                &[
                    Val::Int(Some(m.version as i64)),
                    Val::Int(Some(ipcperf_core::record::unix_ms() as i64)),
                ],
            )?;
            Ok(())
        })?;
    }
    Ok(())
}
