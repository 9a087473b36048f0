//! What `fleet` and `trend` read: each comparable case's figures from the narrow
//! `case_figures` table (schema version 4), chosen in SQL, never the records.

use super::{to_i64, unjson, Result, Store, Val};

/// One comparable case of one complete run, as `fleet` and `trend` read it.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseFigures {
    pub run_id: i64,
    pub started_ms: u64,
    pub host: String,
    pub cpu_model: String,
    pub kernel: String,
    pub label: Option<String>,
    /// The case's identity across hosts (`compare::class_key`).
    pub key: String,
    /// `stream`, `round-trip` or `sync`.
    pub workload: String,
    /// One figure per series (bytes/s, p50 ns, cycles/s).
    pub values: Vec<f64>,
}

/// Which figures [`Store::figures`] selects; every field left out selects all.
#[derive(Debug, Default, Clone)]
pub struct FigureFilter<'a> {
    pub label: Option<&'a str>,
    pub host: Option<&'a str>,
    pub cpu_model: Option<&'a str>,
    pub kernel: Option<&'a str>,
    pub workload: Option<&'a str>,
    pub key: Option<&'a str>,
    pub block_size: Option<u64>,
    pub mechanisms: &'a [String],
    /// Only the default suite's 64 KiB streams and 512 B round trips.
    pub default_cases: bool,
    /// Each host's newest figure of each case, else every run's (oldest first).
    pub newest: bool,
}

impl Store {
    /// The figures `fleet` and `trend` compare, chosen in SQL from the narrow
    /// `case_figures` table (the case records are never read): complete runs only;
    /// each host's newest figure of each case when `f.newest`, else every run's,
    /// oldest first.
    pub fn figures(&mut self, f: &FigureFilter<'_>) -> Result<Vec<CaseFigures>> {
        let mut wh = vec!["r.complete = 1".to_string()];
        let mut params = Vec::new();
        let bind = |v: Val, params: &mut Vec<Val>| {
            params.push(v);
            format!("${}", params.len())
        };
        for (col, v) in [
            ("r.label", f.label),
            ("r.hostname", f.host),
            ("r.cpu_model", f.cpu_model),
            ("r.kernel", f.kernel),
            ("f.workload", f.workload),
            ("f.class_key", f.key),
        ] {
            if let Some(v) = v {
                let p = bind(Val::Text(Some(v.to_string())), &mut params);
                wh.push(format!("{col} = {p}"));
            }
        }
        if let Some(b) = f.block_size {
            let p = bind(Val::Int(Some(to_i64(b))), &mut params);
            wh.push(format!("f.block_size = {p}"));
        }
        if !f.mechanisms.is_empty() {
            let list: Vec<String> = f
                .mechanisms
                .iter()
                .map(|m| bind(Val::Text(Some(m.clone())), &mut params))
                .collect();
            wh.push(format!("f.mechanism IN ({})", list.join(", ")));
        }
        if f.default_cases {
            wh.push(
                "((f.workload = 'stream' AND f.block_size = 65536) OR \
                 (f.workload = 'round-trip' AND f.block_size = 512))"
                    .into(),
            );
        }
        let cols = "r.id, r.started_ms, r.hostname, r.cpu_model, r.kernel, r.label, \
                    f.class_key, f.workload, f.figure_values";
        let from = format!(
            "FROM case_figures f JOIN runs r ON r.id = f.run_id WHERE {}",
            wh.join(" AND ")
        );
        let sql = if f.newest {
            format!(
                "SELECT * FROM (SELECT {cols}, ROW_NUMBER() OVER (PARTITION BY r.hostname, \
                 f.class_key ORDER BY r.started_ms DESC, r.id DESC) AS newest {from}) t \
                 WHERE newest = 1"
            )
        } else {
            format!("SELECT {cols} {from} ORDER BY r.started_ms, r.id, f.seq")
        };
        let kinds = super::columns(2, 7);
        self.conn
            .query(&sql, &params, &kinds)?
            .into_iter()
            .map(|r| {
                let text = |i: usize| r[i].text().unwrap_or("").to_string();
                Ok(CaseFigures {
                    run_id: r[0].int().unwrap_or(0),
                    started_ms: r[1].int().unwrap_or(0).max(0) as u64,
                    host: text(2),
                    cpu_model: text(3),
                    kernel: text(4),
                    label: r[5].text().map(str::to_string),
                    key: text(6),
                    workload: text(7),
                    values: unjson(r[8].text().unwrap_or("[]"), "figures")?,
                })
            })
            .collect()
    }
}
