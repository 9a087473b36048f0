//! The run history end to end through the binary: saving, a run killed with
//! SIGKILL, history/show/export/import, plots, the HTML report (opened in headless
//! Chromium when it is installed) and compare.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::prelude::*;

mod common;
use common::{cmd, stdout};

/// A short real run saved in `db`: pipe and unix sockets between threads.
fn quick_run(db: &Path, mechs: &str) {
    cmd(
        db,
        &[
            "run",
            mechs,
            "--mode",
            "threads",
            "--sizes",
            "64,4k,64k",
            "--count",
            "300",
            "--repeat",
            "2",
            "--format",
            "json",
        ],
    )
    .assert()
    .success();
}

#[test]
fn a_run_is_saved_and_shown_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    quick_run(&db, "pipe,unix");
    let h = stdout(&mut cmd(&db, &["history"]));
    assert!(h.contains("pipe unix"), "{h}");
    assert!(h.contains("complete"), "{h}");
    assert!(!h.contains("incomplete"), "{h}");
    assert!(h.contains("kind"), "{h}");
    // One machine's runs: its host and kernel said once, above the table.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let first = h.lines().next().unwrap();
    assert!(
        first.contains(&format!("each on {} (Linux ", host.trim())),
        "{h}"
    );
    assert!(!h.contains("kernel"), "{h}");
    // The same as JSON and CSV: the kind is the subcommand that made the run.
    let j: serde_json::Value =
        serde_json::from_str(&stdout(&mut cmd(&db, &["history", "--format", "json"]))).unwrap();
    assert_eq!(j[0]["kind"], "run");
    assert_eq!(j[0]["mechanisms"][1], "unix");
    let csv = stdout(&mut cmd(&db, &["history", "-f", "csv", "-l", "1"]));
    assert_eq!(csv.lines().count(), 2, "{csv}");
    assert!(csv.lines().nth(1).unwrap().starts_with("1,run,"), "{csv}");
    assert!(
        csv.starts_with("id,kind,label,started_utc,host,kernel,"),
        "{csv}"
    );
    let show = stdout(&mut cmd(&db, &["show", "1"]));
    assert!(show.contains("pipe · threads · touch"), "{show}");
    assert!(show.contains("64 KiB"), "{show}");
    // No id is the last run, as `last` is (show, export, plot, report).
    assert_eq!(stdout(&mut cmd(&db, &["show"])), show);
    let last = stdout(&mut cmd(&db, &["export", "last"]));
    assert_eq!(stdout(&mut cmd(&db, &["export"])), last);
    let page = dir.path().join("r.html");
    cmd(&db, &["report", "-o"]).arg(&page).assert().success();
    assert!(std::fs::read_to_string(&page).unwrap().contains("<html"));
    // Unknown runs and bad ids are bad input.
    cmd(&db, &["show", "99"]).assert().code(2);
    cmd(&db, &["show", "x"]).assert().code(2);
}

/// A FIFO named to `import`: a writer that comes late is waited for and its
/// run kept; a FIFO no writer opens ends the import in 20 s, one line, exit 1,
/// where `open` held it for ever.
#[test]
fn import_of_a_fifo_waits_for_its_writer_a_bounded_time() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    quick_run(&a, "pipe");
    let json = stdout(&mut cmd(&a, &["export", "last"]));
    let fifo = dir.path().join("runs");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let writer = {
        let (fifo, json) = (fifo.clone(), json.clone());
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1500));
            std::fs::write(&fifo, json).unwrap();
        })
    };
    let out = stdout(cmd(&b, &["import"]).arg(&fifo));
    assert!(out.contains("kept as run 1"), "{out}");
    writer.join().unwrap();
    let t = Instant::now();
    let mut child = cmd(&b, &["import"])
        .arg(&fifo)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(40) {
            child.kill().unwrap();
            panic!("an import of a FIFO no writer opens still waits after 40 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a FIFO no writer opened within 20 s"), "{err}");
}

#[test]
fn export_then_import_gives_the_same_run() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    quick_run(&a, "pipe");
    let json = dir.path().join("run.json");
    cmd(&a, &["export", "last", "--format", "json", "-o"])
        .arg(&json)
        .assert()
        .success();
    let out = stdout(cmd(&b, &["import"]).arg(&json));
    assert!(out.contains("kept as run 1"), "{out}");
    let again = stdout(&mut cmd(&b, &["export", "1", "--format", "json"]));
    assert_eq!(again, std::fs::read_to_string(&json).unwrap());
    for (fmt, needle) in [("csv", "median_bytes_per_sec"), ("markdown", "| block |")] {
        let f = dir.path().join(format!("x.{fmt}"));
        cmd(&b, &["export", "1", "--format", fmt, "-o"])
            .arg(&f)
            .assert()
            .success();
        assert!(std::fs::read_to_string(&f).unwrap().contains(needle));
    }
    // Not a run record: bad input, nothing kept.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"not\": \"a run\"}").unwrap();
    cmd(&b, &["import"]).arg(&bad).assert().code(2);
    assert_eq!(
        stdout(&mut cmd(&b, &["history"]))
            .matches("complete")
            .count(),
        1
    );
}

#[test]
fn no_save_keeps_nothing_and_the_default_is_the_xdg_data_dir() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ipcperf"))
            .env_remove("IPCPERF_DB")
            .env_remove("IPCPERF_NO_SAVE")
            .env("XDG_DATA_HOME", dir.path())
            .args([
                "run", "pipe", "--mode", "single", "--sizes", "4k", "--count", "100", "--repeat",
                "1",
            ])
            .args(extra)
            .assert()
            .success()
    };
    let db = dir.path().join("ipcperf").join("ipcperf.db");
    run(&["--no-save"]);
    assert!(!db.exists());
    let a = run(&[]);
    assert!(String::from_utf8_lossy(&a.get_output().stderr).contains("saved as run 1"));
    assert!(db.exists());
}

#[test]
fn a_run_killed_midway_leaves_a_readable_history() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    // Many cases, each short: killed after the first few are saved.
    let mut child = cmd(
        &db,
        &[
            "run",
            "pipe",
            "--mode",
            "threads",
            "--sizes",
            "16..16M",
            "--duration",
            "100ms",
            "--repeat",
            "2",
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let saved = |db: &PathBuf| -> usize {
        let out = cmd(db, &["export", "last", "--format", "json"])
            .output()
            .unwrap();
        serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .ok()
            .and_then(|v| v["cases"].as_array().map(|a| a.len()))
            .unwrap_or(0)
    };
    while saved(&db) < 2 {
        assert!(Instant::now() < deadline, "no case was saved within 60 s");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it was killed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let h = stdout(&mut cmd(&db, &["history"]));
    assert!(h.contains("incomplete"), "{h}");
    let show = cmd(&db, &["show", "1"]).output().unwrap();
    assert!(show.status.success());
    assert!(String::from_utf8_lossy(&show.stderr).contains("incomplete"));
    assert!(String::from_utf8_lossy(&show.stdout).contains("pipe · threads"));
    assert!(saved(&db) >= 2);
}

#[test]
fn plots_are_written_as_svg_and_png() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    quick_run(&db, "pipe,unix");
    let svg = dir.path().join("c.svg");
    cmd(&db, &["plot", "1", "-o"]).arg(&svg).assert().success();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("pipe threads ") && text.contains("64 KiB"),
        "{text}"
    );
    assert!(
        !text.contains("unpinned"),
        "no --pin places the sides: {text}"
    );
    let png = dir.path().join("c.png");
    cmd(&db, &["plot", "1", "-o"]).arg(&png).assert().success();
    let img = image::open(&png).unwrap().to_rgb8();
    // The plot (1000 x 640) and a legend row below it for the two lines.
    assert_eq!(img.dimensions(), (1000, 640 + 20 + 12));
    cmd(&db, &["plot", "1", "-o"])
        .arg(dir.path().join("c.gif"))
        .assert()
        .code(2);
}

#[test]
fn compare_reports_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    quick_run(&db, "pipe");
    quick_run(&db, "pipe");
    let out = stdout(&mut cmd(&db, &["compare", "1", "2"]));
    assert!(
        out.contains("faster,") && out.contains("slower,") && out.contains("unchanged"),
        "{out}"
    );
    cmd(&db, &["compare", "1", "3"]).assert().code(2);
    // A run against itself: every row would read 1.00x unchanged.
    let same = cmd(&db, &["compare", "2", "last"]).output().unwrap();
    assert_eq!(same.status.code(), Some(2), "{same:?}");
    let err = String::from_utf8_lossy(&same.stderr);
    assert!(err.contains("both run 2"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(same.stdout.is_empty());
    // A report of one run twice (its section twice, 1.00x against itself): refused,
    // and no file written.
    let html = db.with_file_name("twice.html");
    let twice = cmd(&db, &["report", "1", "2", "last", "-o"])
        .arg(&html)
        .output()
        .unwrap();
    assert_eq!(twice.status.code(), Some(2), "{twice:?}");
    let err = String::from_utf8_lossy(&twice.stderr);
    assert!(err.contains("run 2 is named twice"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!html.exists());
}

#[test]
fn the_report_opens_in_headless_chromium_with_its_charts() {
    let Some(chromium) = common::chromium() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    quick_run(&db, "pipe,unix,tcp");
    quick_run(&db, "pipe,unix,tcp");
    let html = dir.path().join("report.html");
    cmd(&db, &["report", "1", "2", "-o"])
        .arg(&html)
        .assert()
        .success();
    common::assert_self_contained(&std::fs::read_to_string(&html).unwrap());
    let shot = common::screenshot(chromium, dir.path(), &html, (1200, 2600));
    let img = image::open(&shot).unwrap().to_rgb8();
    // The summary (its A-against-B dots may all be grey) and the first run's
    // throughput chart are on the first screen: thousands of pixels of coloured lines.
    let n = common::colored_pixels(&img);
    assert!(
        n > 2000,
        "the screenshot shows no chart ({n} coloured pixels)"
    );
}

#[test]
fn a_shared_postgres_history_through_the_cli() {
    let Ok(admin) = std::env::var("IPCPERF_TEST_PG") else {
        eprintln!(
            "skipped: IPCPERF_TEST_PG is not set (an admin URL such as \
             postgres://ipcperf:ipcperf@127.0.0.1/postgres; .ci/run starts a server and sets it)"
        );
        return;
    };
    let name = format!("ipcperf_cli_{}", std::process::id());
    let mut c = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
    c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    let base = admin.rsplit_once('/').map(|(b, _)| b).unwrap().to_string();
    let url = format!("{base}/{name}");
    let result = std::panic::catch_unwind(|| {
        let db = Path::new(&url);
        quick_run(db, "pipe");
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("run.json");
        cmd(db, &["export", "1", "-o"])
            .arg(&json)
            .assert()
            .success();
        // The same run is refused; a copy started a millisecond later is another
        // run with the same figures.
        let out = cmd(db, &["import"]).arg(&json).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("already kept as run 1"));
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        v["started_ms"] = (v["started_ms"].as_u64().unwrap() + 1).into();
        std::fs::write(&json, serde_json::to_vec(&v).unwrap()).unwrap();
        let said = stdout(cmd(db, &["import"]).arg(&json));
        // PostgreSQL spends an id on the refused import's rolled-back row.
        let id = said
            .trim()
            .rsplit_once("kept as run ")
            .map(|(_, n)| n.to_string())
            .unwrap_or_else(|| panic!("{said}"));
        let h = stdout(&mut cmd(db, &["history"]));
        assert_eq!(h.matches("complete").count(), 2, "{h}");
        assert!(!h.contains(":ipcperf@"), "the password is shown: {h}");
        let out = stdout(&mut cmd(db, &["compare", "1", &id]));
        // The same run imported again: every case equal, none marked.
        assert!(out.contains("0 faster, 0 slower"), "{out}");
    });
    let _ = c.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

#[test]
fn a_latency_run_is_saved_shown_and_drawn_as_percentiles() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("l.db");
    cmd(
        &db,
        &[
            "latency", "pipe", "--mode", "threads", "-d", "100ms", "-f", "json",
        ],
    )
    .assert()
    .success();
    let show = stdout(&mut cmd(&db, &["show", "1"]));
    assert!(
        show.contains("Round-trip latency") && show.contains("p99.99"),
        "{show}"
    );
    let png = dir.path().join("l.png");
    let out = cmd(&db, &["plot", "1", "-o"]).arg(&png).output().unwrap();
    assert!(out.status.success());
    // No throughput chart for a latency-only run: the percentiles go to the file named.
    assert!(String::from_utf8_lossy(&out.stderr).contains("latency percentiles drawn"));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("throughput drawn"));
    assert!(image::open(&png).is_ok());
    let svg = dir.path().join("l.svg");
    cmd(&db, &["plot", "1", "-o"]).arg(&svg).assert().success();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("p99.99") && text.contains("pipe threads"),
        "{text}"
    );
}

/// Ctrl-C in the middle of a run: the cases that finished are kept, and the last
/// line names the partial run's id; `show` reads it back, marked incomplete.
#[test]
fn ctrl_c_names_the_partial_run_it_kept() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let child = cmd(
        &db,
        &[
            "run",
            "pipe",
            "unix",
            "--mode",
            "threads",
            "--sizes",
            "64k",
            "--duration",
            "3s",
            "--repeat",
            "1",
        ],
    )
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    // Stop during the second case, once the first is kept.
    let t0 = std::time::Instant::now();
    loop {
        let o = cmd(&db, &["show", "1", "--format", "json"])
            .output()
            .unwrap();
        let kept = serde_json::from_slice::<serde_json::Value>(&o.stdout)
            .map(|v| v["cases"].as_array().map_or(0, |c| c.len()))
            .unwrap_or(0);
        if kept >= 1 {
            break;
        }
        assert!(t0.elapsed().as_secs() < 30, "the first case was never kept");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("kept as run 1 (incomplete"), "{err}");
    let shown = stdout(&mut cmd(&db, &["show", "1", "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(v["complete"], false);
    assert_eq!(v["cases"][0]["mechanism"], "pipe");
}

#[test]
fn runs_are_labelled_found_by_label_and_keep_it_through_export_and_import() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("l.db");
    for label in ["baseline", "after fix", "baseline"] {
        cmd(
            &db,
            &[
                "run", "pipe", "--mode", "threads", "--sizes", "4k", "--count", "300", "--repeat",
                "2", "--label", label, "-q",
            ],
        )
        .assert()
        .success();
    }
    let h = stdout(&mut cmd(&db, &["history", "--format", "csv"]));
    assert!(h.lines().next().unwrap().contains(",label,"), "{h}");
    assert!(h.contains(",after fix,"), "{h}");
    // A label names its newest run: baseline is run 3, not run 1.
    let c = stdout(&mut cmd(&db, &["compare", "baseline", "after fix"]));
    assert!(
        c.contains("Comparing run 3 (baseline) with run 2 (after fix)"),
        "{c}"
    );
    let j = stdout(&mut cmd(&db, &["export", "after fix", "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&j).unwrap();
    assert_eq!(v["label"], "after fix");
    // Into another history: the label comes with it.
    let file = dir.path().join("r.json");
    std::fs::write(&file, &j).unwrap();
    let db2 = dir.path().join("m.db");
    cmd(&db2, &["import"]).arg(&file).assert().success();
    let h2 = stdout(&mut cmd(&db2, &["history", "--format", "json"]));
    let runs: serde_json::Value = serde_json::from_str(&h2).unwrap();
    assert_eq!(runs[0]["label"], "after fix");
    // Bad labels and unknown ones: one line, exit 2. Digits too many for an id too.
    let big = "9".repeat(20);
    for (args, want) in [
        (
            vec!["run", "pipe", "--label", "42"],
            "would read as a run id",
        ),
        (vec!["run", "pipe", "--label", ""], "1 to 64 characters"),
        (vec!["run", "pipe", "--label", " x"], "or end with a space"),
        (
            vec!["run", "pipe", "--label", &big],
            "would read as a run id",
        ),
        (vec!["show", &big], "is not a run id"),
        (vec!["show", "nosuch"], "no run is labelled 'nosuch'"),
    ] {
        let out = cmd(&db, &args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    // A hostile label in an import is refused with its field named.
    let bad = j.replacen("\"label\": \"after fix\"", "\"label\": \"x\\u0007y\"", 1);
    assert_ne!(bad, j, "the export carries the label as expected");
    std::fs::write(&file, bad).unwrap();
    let out = cmd(&db2, &["import"]).arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("label"));
}

#[test]
fn a_kept_pipeline_run_is_shown_and_drawn_as_stover_had_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    let md = dir.path().join("p.md");
    let first = stdout(
        cmd(
            &db,
            &[
                "pipeline", "--bytes", "1M", "--chunk", "1k", "--repeat", "2", "-q",
            ],
        )
        .arg("--export-markdown")
        .arg(&md),
    );
    let shown = stdout(&mut cmd(&db, &["show", "last"]));
    // One way out: show, export and --export-* render the kept run alike, as
    // the kind kept with it says (not its command line).
    let show_md = stdout(&mut cmd(&db, &["show", "last", "--format", "markdown"]));
    let export_md = stdout(&mut cmd(&db, &["export", "last", "--format", "markdown"]));
    assert!(show_md.contains("Stover's pipelines"), "{show_md}");
    assert_eq!(show_md, export_md);
    assert_eq!(show_md, std::fs::read_to_string(&md).unwrap());
    let json: serde_json::Value = serde_json::from_str(&stdout(&mut cmd(
        &db,
        &["export", "last", "--format", "json"],
    )))
    .unwrap();
    assert_eq!(json["kind"], "pipeline");
    for title in [
        "Stover's pipelines: 1 MiB in 1 KiB chunks, 2 rounds",
        "Throughput relative to the slowest",
    ] {
        assert!(
            first.contains(title) && shown.contains(title),
            "{title}: {shown}"
        );
    }
    // The same methods in the same order, with the same "what runs".
    let rows = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.contains("gen") || l.contains("ipcperf's"))
            .map(|l| l.split('|').skip(1).take(2).collect::<Vec<_>>().join("|"))
            .collect()
    };
    assert_eq!(rows(&first), rows(&shown));
    // Its chart: one dot per method with its spread, not six dots at one size.
    let png = dir.path().join("p.svg");
    cmd(&db, &["plot", "last", "-o"])
        .arg(&png)
        .assert()
        .success();
    let svg = std::fs::read_to_string(&png).unwrap();
    assert!(
        svg.contains("sh-pipe") && svg.contains("MB/s"),
        "{}",
        &svg[..300]
    );
    assert!(
        !svg.contains("block size"),
        "not a throughput-against-size chart"
    );
}

/// Processes that open one new history at the same moment (a Slurm job's tasks
/// on a shared directory) each keep their run: SQLite answers the loser of the
/// switch to WAL "busy" at once, without waiting, and that open failed with
/// "database is locked" (1 start in 16 here, four at a time). Started together
/// through a FIFO, 30 times over.
#[test]
fn processes_opening_one_new_history_at_once_all_keep_their_runs() {
    const N: usize = 4;
    for round in 0..30 {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.db");
        let go = dir.path().join("go");
        assert!(Command::new("mkfifo").arg(&go).status().unwrap().success());
        // Opened read-write before the children, so neither side blocks in
        // open, and should this test stop early each child reads the end.
        let mut fifo = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&go)
            .unwrap();
        let kids: Vec<_> = (0..N)
            .map(|_| {
                let run = cmd(
                    &db,
                    &[
                        "run", "memcpy", "--sizes", "64", "-d", "5ms", "-r", "1", "-q",
                    ],
                );
                Command::new("sh")
                    .args(["-c", r#"read x < "$0"; exec "$@""#])
                    .arg(&go)
                    .arg(run.get_program())
                    .args(run.get_args())
                    .env_remove("IPCPERF_DB")
                    .env_remove("IPCPERF_NO_SAVE")
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        // A line each, written at once once they wait (a late reader still
        // finds its line).
        std::thread::sleep(Duration::from_millis(100));
        std::io::Write::write_all(&mut fifo, "go\n".repeat(N).as_bytes()).unwrap();
        for k in kids {
            let out = k.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        drop(fifo);
        let list = stdout(&mut cmd(&db, &["history", "--format", "json"]));
        let runs: serde_json::Value = serde_json::from_str(&list).unwrap();
        assert_eq!(runs.as_array().map(|a| a.len()), Some(N), "{list}");
    }
}
