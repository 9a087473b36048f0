//! `--format openmetrics` and `--format prometheus`, read by Prometheus' own
//! tool: `promtool check metrics` lints the Prometheus text (as node_exporter's
//! textfile collector and the Pushgateway take it), and `promtool tsdb
//! create-blocks-from openmetrics` backfills a TSDB from the OpenMetrics text,
//! one sample per figure, at the run's time. Skips with a reason without
//! promtool (Debian's `prometheus`; .ci/run installs it).

use std::process::{Command, Stdio};

mod common;

const BIN: &str = env!("CARGO_BIN_EXE_ipcperf");

fn promtool() -> bool {
    let ok = Command::new("promtool")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: no promtool (Debian's prometheus package)");
    }
    ok
}

fn ipcperf(db: &std::path::Path, args: &[&str]) -> String {
    common::stdout(&mut common::cmd(db, args))
}

#[test]
fn promtool_reads_both_formats() {
    if !promtool() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    // A stream run (two mechanisms), a latency run, a sync run.
    let prom = ipcperf(
        &db,
        &[
            "run",
            "pipe",
            "unix",
            "-s",
            "4k,64k",
            "-d",
            "20ms",
            "-r",
            "2",
            "--format",
            "prometheus",
        ],
    );
    let lat = ipcperf(
        &db,
        &[
            "latency",
            "pipe",
            "-n",
            "300",
            "-r",
            "1",
            "--format",
            "openmetrics",
        ],
    );
    let sync = ipcperf(
        &db,
        &["sync", "futex", "-d", "10ms", "--format", "openmetrics"],
    );
    // Prometheus text: lints clean, no timestamps, one sample per stream case.
    let mut check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(check.stdin.as_mut().unwrap(), prom.as_bytes()).unwrap();
    let out = check.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics: {}\n{prom}",
        String::from_utf8_lossy(&out.stderr)
    );
    let samples: Vec<&str> = prom
        .lines()
        .filter(|l| l.starts_with("ipcperf_throughput_bytes_per_second{"))
        .collect();
    assert_eq!(samples.len(), 4, "{prom}");
    for s in &samples {
        assert_eq!(s.split(' ').count(), 2, "no timestamp: {s}");
        let v: f64 = s.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(v > 0.0, "{s}");
    }
    // OpenMetrics: backfilled into a TSDB, every sample at the run's time.
    for (text, want) in [(&lat, 1 + 5), (&sync, 1 + 2)] {
        assert!(text.ends_with("# EOF\n"), "{text}");
        let f = dir.path().join("m.om");
        std::fs::write(&f, text).unwrap();
        let tsdb = dir.path().join("tsdb");
        let out = Command::new("promtool")
            .args(["tsdb", "create-blocks-from", "openmetrics"])
            .arg(&f)
            .arg(&tsdb)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{said}\n{text}");
        // The block's line: ULID, min time, max time, duration, samples, ...
        let block = said
            .lines()
            .find(|l| l.split_whitespace().count() >= 8 && !l.starts_with("BLOCK"))
            .unwrap_or_else(|| panic!("{said}"));
        let samples: usize = block.split_whitespace().nth(4).unwrap().parse().unwrap();
        assert_eq!(samples, want, "{said}\n{text}");
        std::fs::remove_dir_all(&tsdb).unwrap();
    }
    // A kept run exports the same way; a format for runs only is bad input elsewhere.
    let again = ipcperf(&db, &["export", "last", "--format", "openmetrics"]);
    assert!(again.contains("ipcperf_sync_cycles_per_second{"), "{again}");
    let out = Command::new(BIN)
        .args(["topology", "--format", "openmetrics"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = common::cmd(&db, &["history", "--format", "prometheus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
