//! Store tests, run on SQLite always and on PostgreSQL when `IPCPERF_TEST_PG`
//! names a server (an admin URL such as postgres://ipcperf:ipcperf@127.0.0.1/postgres;
//! `.ci/run` starts one). Each PostgreSQL test gets a database of its own.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::postgres::PgConn;
use super::sqlite::SqliteConn;
use super::*;
use crate::testdata;

/// A fresh, empty database of one kind, removed when dropped.
enum Fresh {
    Sqlite(tempfile::TempDir),
    Pg {
        admin: String,
        url: String,
        name: String,
    },
}

impl Fresh {
    fn conn(&self) -> Box<dyn Conn> {
        match self {
            Fresh::Sqlite(d) => Box::new(SqliteConn::open(&d.path().join("t.db")).unwrap()),
            Fresh::Pg { url, .. } => Box::new(PgConn::open(url).unwrap()),
        }
    }
    fn store(&self) -> Store {
        Store::on(self.conn(), "test".into()).unwrap()
    }
}

impl Drop for Fresh {
    fn drop(&mut self) {
        if let Fresh::Pg { admin, name, .. } = self {
            if let Ok(mut c) = PgConn::open(admin) {
                let _ = c.batch(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
            }
        }
    }
}

fn sqlite() -> Fresh {
    Fresh::Sqlite(tempfile::tempdir().unwrap())
}

/// A fresh PostgreSQL database, or None (with the reason printed) when no server is given.
fn pg(test: &str) -> Option<Fresh> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let Ok(admin) = std::env::var("IPCPERF_TEST_PG") else {
        eprintln!(
            "skipped {test} on PostgreSQL: IPCPERF_TEST_PG is not set (an admin URL such as \
             postgres://ipcperf:ipcperf@127.0.0.1/postgres; .ci/run starts a server and sets it)"
        );
        return None;
    };
    let name = format!(
        "ipcperf_test_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    let mut c =
        PgConn::open(&admin).expect("IPCPERF_TEST_PG is set but the server does not answer");
    c.batch(&format!("CREATE DATABASE {name}")).unwrap();
    let base = admin.rsplit_once('/').map(|(b, _)| b).unwrap_or(&admin);
    Some(Fresh::Pg {
        url: format!("{base}/{name}"),
        admin,
        name,
    })
}

fn both(test: &str, f: impl Fn(&Fresh)) {
    f(&sqlite());
    if let Some(p) = pg(test) {
        f(&p);
    }
}

#[test]
fn store_then_load_gives_the_same_run() {
    both("store_then_load", |db| {
        let run = testdata::run();
        let mut s = db.store();
        let id = s.insert_run(&run).unwrap();
        let back = s.load_run(id).unwrap().unwrap();
        assert_eq!(back, run);
        // A second store on the same database sees it too.
        let mut s2 = db.store();
        assert_eq!(s2.load_run(id).unwrap().unwrap(), run);
        assert_eq!(s2.load_run(id + 1).unwrap(), None);
        let h = s2.list_runs().unwrap();
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].id, id);
        assert!(h[0].complete);
        assert_eq!(h[0].cases, run.cases.len() as u64);
        assert_eq!(h[0].mechanisms, ["pipe", "unix", "tcp", "fifo", "file"]);
        assert_eq!(h[0].hostname, "testhost");
    });
}

#[test]
fn a_label_is_kept_listed_and_imported() {
    both("labels", |db| {
        let mut run = testdata::run();
        run.label = Some("baseline über".into());
        let mut s = db.store();
        let id = s.insert_run(&run).unwrap();
        assert_eq!(s.load_run(id).unwrap().unwrap(), run);
        let id2 = s
            .import_run(|_| {
                let mut head = run.clone();
                head.cases.clear();
                head.started_ms += 1;
                head.label = Some("imported".into());
                Ok(head)
            })
            .unwrap()
            .id;
        let labels: Vec<(i64, Option<String>)> = s
            .list_runs()
            .unwrap()
            .into_iter()
            .map(|r| (r.id, r.label))
            .collect();
        assert_eq!(
            labels,
            [
                (id, Some("baseline über".to_string())),
                (id2, Some("imported".to_string()))
            ]
        );
    });
}

#[test]
fn fields_unknown_to_the_columns_flow_through_the_record() {
    both("fields_flow_through", |db| {
        let mut run = testdata::run();
        run.cases[0]
            .options
            .insert("pipe_size_granted".into(), "1048576".into());
        run.cases[0].message = Some("quoted 'text' and ünïcode".into());
        run.machine
            .mitigations
            .insert("spectre_v2".into(), "Mitigation: Retpolines".into());
        run.machine.cpu_governor = Some("performance".into());
        let mut s = db.store();
        let id = s.insert_run(&run).unwrap();
        assert_eq!(s.load_run(id).unwrap().unwrap(), run);
    });
}

#[test]
fn a_run_cut_short_keeps_its_finished_cases_and_shows_incomplete() {
    both("run_cut_short", |db| {
        let full = testdata::run();
        let mut start = full.clone();
        start.cases.clear();
        start.finished_ms = None;
        start.complete = false;
        let mut s = db.store();
        let id = s.begin_run(&start).unwrap();
        s.add_case(id, 0, &full.cases[0]).unwrap();
        s.add_case(id, 1, &full.cases[1]).unwrap();
        drop(s); // as if the process died here
        let mut s = db.store();
        let back = s.load_run(id).unwrap().unwrap();
        assert!(!back.complete);
        assert_eq!(back.finished_ms, None);
        assert_eq!(back.cases, full.cases[..2]);
        let h = s.list_runs().unwrap();
        assert!(!h[0].complete);
        assert_eq!(h[0].cases, 2);
        // The same case number twice is refused, and the refusal changes nothing.
        assert!(s.add_case(id, 1, &full.cases[2]).is_err());
        assert_eq!(s.load_run(id).unwrap().unwrap().cases.len(), 2);
        s.finish_run(id, 5, true).unwrap();
        assert!(s.load_run(id).unwrap().unwrap().complete);
        assert!(s.finish_run(id + 100, 5, true).is_err());
    });
}

fn count(c: &mut dyn Conn, sql: &str) -> i64 {
    c.query(sql, &[], &[Kind::Int]).unwrap()[0][0]
        .int()
        .unwrap()
}

#[test]
fn migrations_on_an_empty_database() {
    both("migrations_empty", |db| {
        let mut c = db.conn();
        assert_eq!(schema::version(c.as_mut()).unwrap(), 0);
        schema::migrate(c.as_mut(), schema::MIGRATIONS.len()).unwrap();
        assert_eq!(
            schema::version(c.as_mut()).unwrap(),
            schema::MIGRATIONS.len()
        );
        // Applying them again changes nothing.
        schema::migrate(c.as_mut(), schema::MIGRATIONS.len()).unwrap();
        assert_eq!(
            count(c.as_mut(), "SELECT COUNT(*) FROM schema_version"),
            schema::MIGRATIONS.len() as i64
        );
        assert_eq!(count(c.as_mut(), "SELECT COUNT(*) FROM runs"), 0);
        assert_eq!(count(c.as_mut(), "SELECT COUNT(*) FROM series"), 0);
    });
}

#[test]
fn migrations_on_a_database_made_by_the_previous_schema() {
    both("migrations_previous", |db| {
        let run = testdata::run();
        // Build a version-1 database by hand, as ipcperf 1 wrote it.
        let mut c = db.conn();
        schema::migrate(c.as_mut(), 1).unwrap();
        assert_eq!(schema::version(c.as_mut()).unwrap(), 1);
        let id = c
            .query(
                "INSERT INTO runs (started_ms, finished_ms, complete, ipcperf_version, command_line, \
                 hostname, kernel, machine) VALUES ($1, $2, 1, $3, $4, $5, $6, $7) RETURNING id",
                &[
                    Val::Int(Some(run.started_ms as i64)),
                    Val::Int(run.finished_ms.map(|v| v as i64)),
                    Val::Text(Some(run.ipcperf_version.clone())),
                    Val::Text(Some(serde_json::to_string(&run.command_line).unwrap())),
                    Val::Text(Some(run.machine.hostname.clone())),
                    Val::Text(Some(run.machine.kernel.clone())),
                    Val::Text(Some(serde_json::to_string(&run.machine).unwrap())),
                ],
                &[Kind::Int],
            )
            .unwrap()[0][0]
            .int()
            .unwrap();
        for (i, case) in run.cases.iter().enumerate() {
            c.exec(
                "INSERT INTO cases (run_id, seq, workload, mechanism, mode, block_size, placement, \
                 payload, status, median_bytes_per_sec, record) \
                 VALUES ($1, $2, 'stream', $3, 'processes', $4, $5, 'touch', 'ok', $6, $7)",
                &[
                    Val::Int(Some(id)),
                    Val::Int(Some(i as i64)),
                    Val::Text(Some(case.mechanism.clone())),
                    Val::Int(Some(case.block_size as i64)),
                    Val::Text(Some(case.placement.label.clone())),
                    Val::Real(case.median_bytes_per_sec),
                    Val::Text(Some(serde_json::to_string(case).unwrap())),
                ],
            )
            .unwrap();
        }
        drop(c);
        // Opening the store brings it to the current schema and fills the series table.
        let mut s = db.store();
        assert_eq!(s.schema_version().unwrap(), schema::MIGRATIONS.len());
        assert_eq!(s.load_run(id).unwrap().unwrap(), run);
        let mut c = db.conn();
        let series: usize = run.cases.iter().map(|c| c.series.len()).sum();
        assert_eq!(
            count(c.as_mut(), "SELECT COUNT(*) FROM series"),
            series as i64
        );
        assert_eq!(
            count(
                c.as_mut(),
                "SELECT CAST(SUM(bytes) AS BIGINT) FROM series WHERE seq = 0"
            ),
            run.cases[0]
                .series
                .iter()
                .map(|s| s.bytes as i64)
                .sum::<i64>()
        );
        // Version 4 filled the CPU model and the figures of every comparable case
        // (18 measured; the refused and failed ones have none).
        assert_eq!(
            count(
                c.as_mut(),
                "SELECT COUNT(*) FROM runs WHERE cpu_model IS NOT NULL AND cpu_model <> ''"
            ),
            1
        );
        assert_eq!(count(c.as_mut(), "SELECT COUNT(*) FROM case_figures"), 18);
        let all = s
            .figures(&FigureFilter {
                newest: true,
                ..FigureFilter::default()
            })
            .unwrap();
        assert_eq!(all.len(), 18);
        let pipe = all
            .iter()
            .find(|f| f.key.starts_with("stream pipe") && f.key.contains("64 KiB"))
            .unwrap();
        assert_eq!(pipe.values.len(), 5);
        assert_eq!(pipe.cpu_model, run.machine.cpu_model);
        // And new runs go in as usual.
        let id2 = s.insert_run(&run).unwrap();
        assert_eq!(s.load_run(id2).unwrap().unwrap(), run);
    });
}

#[test]
fn figures_are_each_hosts_newest_and_filtered_in_sql() {
    both("figures", |db| {
        let mut s = db.store();
        let base = testdata::run();
        // Two hosts; node-a ran twice (the second run 10% faster), node-b once,
        // labelled; one incomplete run on node-b that must not count.
        let mut runs = Vec::new();
        for (host, t, k, label, complete) in [
            ("node-a", 0u64, 1.0, None, true),
            ("node-a", 1000, 1.1, None, true),
            ("node-b", 500, 1.0, Some("c1"), true),
            ("node-b", 2000, 3.0, None, false),
        ] {
            let mut r = base.clone();
            r.machine.hostname = host.into();
            r.started_ms += t;
            r.label = label.map(str::to_string);
            r.complete = complete;
            for c in &mut r.cases {
                for x in &mut c.series {
                    x.elapsed_ns = (x.elapsed_ns as f64 / k) as u64;
                }
            }
            runs.push(s.insert_run(&r).unwrap());
        }
        let newest = s
            .figures(&FigureFilter {
                newest: true,
                default_cases: true,
                ..FigureFilter::default()
            })
            .unwrap();
        // 64 KiB streams only: 3 mechanisms × 2 placements, per host.
        assert_eq!(newest.len(), 12, "{newest:#?}");
        assert!(newest
            .iter()
            .filter(|f| f.host == "node-a")
            .all(|f| f.run_id == runs[1]));
        assert!(newest
            .iter()
            .filter(|f| f.host == "node-b")
            .all(|f| f.run_id == runs[2]));
        let mechs = ["unix".to_string()];
        let labelled = s
            .figures(&FigureFilter {
                label: Some("c1"),
                mechanisms: &mechs,
                block_size: Some(4096),
                ..FigureFilter::default()
            })
            .unwrap();
        assert_eq!(labelled.len(), 2);
        assert!(labelled
            .iter()
            .all(|f| f.host == "node-b" && f.key.starts_with("stream unix")));
        // Every run of one case on one host, oldest first.
        let key = newest[0].key.clone();
        let trend = s
            .figures(&FigureFilter {
                host: Some("node-a"),
                key: Some(&key),
                ..FigureFilter::default()
            })
            .unwrap();
        assert_eq!(
            trend.iter().map(|f| f.run_id).collect::<Vec<_>>(),
            [runs[0], runs[1]]
        );
    });
}

/// A run that measured two pairs of one placement class (`--pin 0,1 --pin
/// 0,2`, a matrix) is one figure of the case, over both pairs' series: `trend`
/// read each pair as a run of its own (a step between 0→1 and 1→0), `fleet`'s
/// newest took one of them at random.
#[test]
fn two_pairs_of_one_class_in_a_run_are_one_figure() {
    both("pairs", |db| {
        let mut s = db.store();
        let mut run = testdata::run();
        let pipe =
            |c: &ipcperf_core::record::CaseRecord| c.mechanism == "pipe" && c.block_size == 65536;
        let first = run.cases.iter().position(pipe).unwrap();
        let mut twin = run.cases[first].clone();
        twin.placement.reader_cpu = twin.placement.reader_cpu.map(|c| c + 7);
        for x in &mut twin.series {
            x.elapsed_ns *= 2;
        }
        run.cases.insert(first + 1, twin);
        let n = run.cases[first].series.len();
        let id = s.insert_run(&run).unwrap();
        let key = |f: &CaseFigures| f.key.starts_with("stream pipe") && f.key.contains("64 KiB");
        // The twin's key: the first such figure in the run's own order.
        let all = s.figures(&FigureFilter::default()).unwrap();
        let twin_key = all.iter().find(|g| key(g)).unwrap().key.clone();
        for newest in [false, true] {
            let figs = s
                .figures(&FigureFilter {
                    newest,
                    ..FigureFilter::default()
                })
                .unwrap();
            let same: Vec<&CaseFigures> = figs.iter().filter(|f| f.key == twin_key).collect();
            assert_eq!(same.len(), 1, "newest {newest}: {same:#?}");
            assert_eq!(same[0].run_id, id);
            assert_eq!(same[0].values.len(), 2 * n, "newest {newest}");
        }
    });
}

#[test]
fn a_newer_schema_is_refused() {
    let db = sqlite();
    let mut c = db.conn();
    schema::migrate(c.as_mut(), schema::MIGRATIONS.len()).unwrap();
    c.exec(
        "INSERT INTO schema_version (version, applied_ms) VALUES ($1, 0)",
        &[Val::Int(Some(99))],
    )
    .unwrap();
    let e = Store::on(c, "t".into()).err().unwrap();
    assert!(e.to_string().contains("newer"), "{e}");
}

#[test]
fn sqlite_file_uses_wal() {
    let db = sqlite();
    let mut c = db.conn();
    let mode = c.query("PRAGMA journal_mode", &[], &[Kind::Text]).unwrap();
    assert_eq!(mode[0][0].text(), Some("wal"));
}

/// A run launched by a scheduler is kept under its node: two nights' pods on
/// one node are one host, and runs kept before that (under the pod's name)
/// move to their node when the schema is brought up to date.
#[test]
fn hosts_are_scheduler_nodes() {
    both("hosts_are_nodes", |db| {
        let pod = |name: &str, t: u64| {
            let mut r = testdata::run();
            r.machine.hostname = name.into();
            r.machine.scheduler = Some(ipcperf_core::machine::Scheduler {
                kind: "kubernetes".into(),
                job_id: Some("suite".into()),
                array_job_id: None,
                array_task_id: None,
                node: Some("node-7".into()),
                pod: Some(name.into()),
            });
            r.started_ms += t;
            r
        };
        // Before version 5: a night's run kept under its pod's name.
        let mut c = db.conn();
        schema::migrate(c.as_mut(), 4).unwrap();
        let old = pod("suite-abc12", 0);
        c.exec(
            "INSERT INTO runs (started_ms, finished_ms, complete, ipcperf_version, command_line, \
             hostname, kernel, machine) VALUES ($1, $2, 1, $3, $4, $5, $6, $7)",
            &[
                Val::Int(Some(old.started_ms as i64)),
                Val::Int(old.finished_ms.map(|v| v as i64)),
                Val::Text(Some(old.ipcperf_version.clone())),
                Val::Text(Some("[]".into())),
                Val::Text(Some(old.machine.hostname.clone())),
                Val::Text(Some(old.machine.kernel.clone())),
                Val::Text(Some(serde_json::to_string(&old.machine).unwrap())),
            ],
        )
        .unwrap();
        drop(c);
        let mut s = db.store();
        // The next night, another pod on the same node.
        s.insert_run(&pod("suite-xyz34", 86_400_000)).unwrap();
        let hosts: Vec<String> = s
            .list_runs()
            .unwrap()
            .into_iter()
            .map(|h| h.hostname)
            .collect();
        assert_eq!(hosts, ["node-7", "node-7"]);
        let all = s
            .figures(&FigureFilter {
                host: Some("node-7"),
                ..FigureFilter::default()
            })
            .unwrap();
        assert!(!all.is_empty() && all.iter().all(|f| f.host == "node-7"));
        // The pod is still in the record.
        let id = s.list_runs().unwrap()[1].id;
        let back = s.load_run(id).unwrap().unwrap();
        assert_eq!(back.machine.hostname, "suite-xyz34");
        assert_eq!(back.machine.host(), "node-7");
    });
}

/// A run is shown by the kind of command that made it, kept with it: runs kept
/// before kinds were recorded get theirs from their command line once, when
/// the schema comes up to version 6; a new run keeps the kind it was made with
/// whatever its command line says.
#[test]
fn runs_keep_their_kind() {
    both("run_kinds", |db| {
        let mut c = db.conn();
        schema::migrate(c.as_mut(), 5).unwrap();
        for line in [
            r#"["ipcperf","-q","pipeline","--bytes","1M"]"#,
            r#"["ipcperf","matrix","shm"]"#,
            r#"[]"#,
        ] {
            c.exec(
                "INSERT INTO runs (started_ms, finished_ms, complete, ipcperf_version, \
                 command_line, hostname, kernel, machine) VALUES (1, 2, 1, 'x', $1, 'h', 'k', $2)",
                &[
                    Val::Text(Some(line.into())),
                    Val::Text(Some(serde_json::to_string(&testdata::machine()).unwrap())),
                ],
            )
            .unwrap();
        }
        drop(c);
        let mut s = db.store();
        let mut fresh = testdata::run();
        fresh.kind = "replay".into();
        s.insert_run(&fresh).unwrap();
        let kinds: Vec<String> = s.list_runs().unwrap().into_iter().map(|r| r.kind).collect();
        assert_eq!(kinds, ["pipeline", "matrix", "run", "replay"]);
        let ids: Vec<i64> = s.list_runs().unwrap().into_iter().map(|r| r.id).collect();
        assert_eq!(s.load_run(ids[0]).unwrap().unwrap().kind, "pipeline");
        // testdata's command line says `run`; the record says replay.
        assert_eq!(s.load_run(ids[3]).unwrap().unwrap().kind, "replay");
    });
}

/// An import of a run the history holds unfinished with fewer cases (its
/// history stopped taking it part-way) replaces that run; of a finished one, or
/// of one holding as many cases, is refused. An imported run keeps its kind.
#[test]
fn an_import_completes_a_run_the_history_held_unfinished() {
    both("import_completes", |db| {
        let mut s = db.store();
        let mut run = testdata::run();
        run.kind = "latency".into();
        assert!(!run.cases.is_empty());
        // begin_run keeps the cases it is given: the first of them.
        let mut started = run.clone();
        started.cases.truncate(1);
        started.finished_ms = None;
        let id = s.begin_run(&started).unwrap();
        let import = |s: &mut Store, run: &RunRecord| {
            s.import_run(|sink| {
                for c in &run.cases {
                    sink.add(c).unwrap();
                }
                let mut head = run.clone();
                head.cases.clear();
                Ok(head)
            })
        };
        let mut whole = run.clone();
        whole.cases.push(run.cases[0].clone());
        let i = import(&mut s, &whole).unwrap();
        assert_eq!(i.replaced, Some((id, 1)));
        let runs = s.list_runs().unwrap();
        assert_eq!(runs.len(), 1, "{runs:?}");
        assert_eq!(runs[0].id, i.id);
        assert_eq!(runs[0].kind, "latency");
        assert!(s.load_run(id).unwrap().is_none());
        assert_eq!(
            s.load_run(i.id).unwrap().unwrap().cases.len(),
            whole.cases.len()
        );
        // Now held whole (and finished): the same file again is refused.
        let again = import(&mut s, &whole).unwrap_err();
        assert!(
            again.0.contains(&format!("already kept as run {}", i.id)),
            "{again}"
        );
        // An unfinished run holding as many cases as the file: refused too.
        let mut other = run.clone();
        other.started_ms += 1;
        other.finished_ms = None;
        let id2 = s.begin_run(&other).unwrap();
        let same = import(&mut s, &other).unwrap_err();
        assert!(
            same.0.contains(&format!("already kept as run {id2}")),
            "{same}"
        );
        assert_eq!(s.list_runs().unwrap().len(), 2);
    });
}
