//! The topology as measured, through the binary: `topology --measure` (every
//! ordered CPU pair's one-way latency by cache-line ping-pong) in each format,
//! saved with the machine record and shown, exported, compared and reported from
//! the history; its heatmap; `--pin measured:closest` placing a case by the
//! measurement it finds there; bad input refused in one line; Ctrl-C honoured.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ipcperf");

fn usable() -> usize {
    let out = Command::new(BIN)
        .args(["topology", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["topology"]["cpus"].as_array().unwrap().len()
}

/// `ipcperf ARGS` with the history at `db`: (status, stdout, stderr).
fn ipcperf(db: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .env("IPCPERF_DB", db)
        .env_remove("IPCPERF_NO_SAVE")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(db: &Path, args: &[&str]) -> String {
    let (code, out, err) = ipcperf(db, args);
    assert_eq!(code, Some(0), "{args:?}: {err}");
    out
}

#[test]
fn measured_saved_shown_compared_reported_and_placed_by() {
    let n = usable();
    if n < 2 {
        eprintln!("skipped: one usable CPU here (a pair needs two)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let png = dir.path().join("c2c.png");
    let v: serde_json::Value = serde_json::from_str(&ok(
        &db,
        &[
            "topology",
            "--measure",
            "--format",
            "json",
            "--heatmap",
            png.to_str().unwrap(),
        ],
    ))
    .unwrap();
    let m = &v["measured"];
    let pairs = m["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), n * (n - 1));
    for p in pairs {
        let ns = p["one_way_ns"].as_f64().unwrap();
        assert!(ns > 0.0 && ns < 1e6, "{p}");
        assert_eq!(p["series_ns"].as_array().unwrap().len(), 3);
        assert_ne!(p["ping"], p["pong"]);
    }
    // Every pair in exactly one level; the matrix n × n with an empty diagonal.
    let in_levels: usize = m["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["pairs"].as_array().unwrap().len())
        .sum();
    assert_eq!(in_levels, pairs.len());
    let rows = v["matrix"]["one_way_ns"].as_array().unwrap();
    assert_eq!(rows.len(), n);
    assert!(rows[0][0].is_null() && rows[0][1].as_f64().unwrap() > 0.0);
    assert!(!m["boot_id"].as_str().unwrap().is_empty());
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));

    // Saved with the machine record: history, show, export, compare, report.
    let hist = ok(&db, &["history"]);
    assert!(hist.contains("topology"), "{hist}");
    let shown = ok(&db, &["show", "1"]);
    assert!(
        shown.contains("Measured one-way latency") && shown.contains("Levels"),
        "{shown}"
    );
    let exported: serde_json::Value =
        serde_json::from_str(&ok(&db, &["export", "1", "--format", "json"])).unwrap();
    assert_eq!(exported["machine"]["measured"]["pairs"], m["pairs"]);
    // Its CSV is the pairs' (it was a header of cases with no row), each with
    // the figure the JSON holds.
    let csv = ok(&db, &["export", "1", "--format", "csv"]);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("ping,pong,one_way_ns,spread,sysfs_class")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), pairs.len(), "{csv}");
    for (r, p) in rows.iter().zip(pairs) {
        assert_eq!(r[0], p["ping"].to_string());
        assert_eq!(r[1], p["pong"].to_string());
        let ns: f64 = r[2].parse().unwrap();
        assert!(
            (ns - p["one_way_ns"].as_f64().unwrap()).abs() < 0.01,
            "{r:?}"
        );
    }
    // As metrics, a sample a pair (it was the run's info line alone).
    let om = ok(&db, &["export", "1", "--format", "openmetrics"]);
    let samples: Vec<&str> = om
        .lines()
        .filter(|l| l.starts_with("ipcperf_cpu_pair_one_way_seconds{"))
        .collect();
    assert_eq!(samples.len(), pairs.len(), "{om}");
    let p = &pairs[0];
    let want = format!("ping=\"{}\",pong=\"{}\"", p["ping"], p["pong"]);
    let s0 = samples.iter().find(|l| l.contains(&want)).expect(&om);
    let secs: f64 = s0.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(
        (secs * 1e9 - p["one_way_ns"].as_f64().unwrap()).abs() < 0.01,
        "{s0}"
    );
    assert!(om.ends_with("# EOF\n"), "{om}");
    ok(&db, &["topology", "--measure"]);
    let cmp = ok(&db, &["compare", "1", "2"]);
    assert!(
        cmp.contains("Measured topology") && cmp.contains("B/A"),
        "{cmp}"
    );
    let html = dir.path().join("r.html");
    ok(&db, &["report", "2", "-o", html.to_str().unwrap()]);
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("Measured topology: one-way latency of every CPU pair"));

    // Placed by the newest measurement of this boot: the pair it found
    // closest, recorded with its sysfs class and the distance measured.
    let closest_run = [
        "latency",
        "pipe",
        "--pin",
        "measured:closest",
        "-n",
        "100",
        "-r",
        "1",
    ];
    let (code, out, err) = ipcperf(&db, &[&closest_run[..], &["--format", "json"]].concat());
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("placing by the measurement of"), "{err}");
    let run: serde_json::Value = serde_json::from_str(&out).unwrap();
    let pl = &run["cases"][0]["placement"];
    let ns = pl["measured_one_way_ns"].as_u64().unwrap();
    let closest = pairs
        .iter()
        .map(|p| p["one_way_ns"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    let second: serde_json::Value =
        serde_json::from_str(&ok(&db, &["export", "2", "--format", "json"])).unwrap();
    let closest2 = second["machine"]["measured"]["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["one_way_ns"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(
        ns,
        closest2.round() as u64,
        "the newest: {closest} {closest2}"
    );
    // The measurement is read from the history the command names with --db,
    // whatever $IPCPERF_DB says: with the environment pointing at an empty
    // history, --db finds it (nothing is measured again).
    let elsewhere = db.with_file_name("elsewhere.db");
    let out = Command::new(BIN)
        .args(closest_run)
        .arg("--db")
        .arg(&db)
        .env("IPCPERF_DB", &elsewhere)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("placing by the measurement of"), "{err}");
    assert!(!err.contains("measuring"), "measured again: {err}");
    assert!(pl["label"].as_str().unwrap() != "unpinned");
    assert_ne!(pl["writer_cpu"], pl["reader_cpu"]);
}

#[test]
fn bad_input_is_one_line_and_nothing_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let sysfs = dir.path().join("sys");
    std::fs::create_dir_all(sysfs.join("devices/system/cpu")).unwrap();
    let sysfs = sysfs.to_str().unwrap();
    for (args, want) in [
        (
            vec!["topology", "--measure", "--heatmap", "x.gif"],
            ".svg or .png",
        ),
        (vec!["topology", "--measure", "--sysfs", sysfs], "--sysfs"),
        (
            vec!["topology", "--measure", "--only", "0,4095"],
            "CPU 4095",
        ),
        (
            vec!["topology", "--measure", "--format", "prometheus"],
            "a run's figures",
        ),
        (vec!["topology", "--heatmap", "x.png"], "--measure"),
        (
            vec!["latency", "pipe", "--pin", "measured:nearest"],
            "measured:closest",
        ),
    ] {
        let t0 = Instant::now();
        let (code, _, err) = ipcperf(&db, &args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "{args:?} measured first"
        );
        assert!(!err.contains("measuring"), "{args:?}: {err}");
    }
    assert!(!db.exists(), "a refused command saved a run");
}

#[test]
fn ctrl_c_mid_measurement_exits_130_and_saves_nothing() {
    if usable() < 2 {
        eprintln!("skipped: one usable CPU here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let mut child = Command::new(BIN)
        .args(["topology", "--measure"])
        .env("IPCPERF_DB", &db)
        .env_remove("IPCPERF_NO_SAVE")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The cost is said just before the measuring starts: interrupt then.
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while err.read_line(&mut line).unwrap() > 0 && !line.contains("measuring") {
        line.clear();
    }
    assert!(line.contains("measuring"), "{line}");
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let t0 = Instant::now();
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(130), "128 + SIGINT");
    assert!(t0.elapsed() < Duration::from_secs(2));
    assert!(!Path::new(&format!("/proc/{}", child.id())).exists());
    let (_, hist, _) = ipcperf(&db, &["history", "--format", "json"]);
    assert!(!hist.contains("topology"), "{hist}");
}
