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
        // RANK, not ROW_NUMBER: every figure of the newest run, where it measured
        // several pairs of one class (pooled below), not one of them at random.
        let sql = if f.newest {
            format!(
                "SELECT * FROM (SELECT {cols}, RANK() OVER (PARTITION BY r.hostname, \
                 f.class_key ORDER BY r.started_ms DESC, r.id DESC) AS newest {from}) t \
                 WHERE newest = 1 ORDER BY started_ms, id"
            )
        } else {
            format!("SELECT {cols} {from} ORDER BY r.started_ms, r.id, f.seq")
        };
        let kinds = super::columns(2, 7);
        let rows: Vec<CaseFigures> = self
            .conn
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
            .collect::<Result<_>>()?;
        Ok(one_per_run(rows))
    }
}

/// One figure of a case a run: a run that measured several pairs of one
/// placement class (a matrix, `--pin 0,1 --pin 0,2`) gives the class's figure
/// over all their series. Each pair was a figure of its own, which `trend`
/// read as runs in time (a step between 0→1 and 1→0 of one matrix) and
/// `fleet` chose one of at random.
fn one_per_run(rows: Vec<CaseFigures>) -> Vec<CaseFigures> {
    let mut at: std::collections::HashMap<(i64, String), usize> = Default::default();
    let mut out: Vec<CaseFigures> = Vec::with_capacity(rows.len());
    for f in rows {
        match at.get(&(f.run_id, f.key.clone())) {
            Some(&i) => out[i].values.extend(f.values),
            None => {
                at.insert((f.run_id, f.key.clone()), out.len());
                out.push(f);
            }
        }
    }
    out
}
