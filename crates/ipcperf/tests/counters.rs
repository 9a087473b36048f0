//! What each message costs: every series carries each side's counters (context
//! switches, page faults, migrations) beside its CPU time, read from the
//! kernel's own accounting without rights; the tables add switches per
//! message, the CSV every counter, and `compare` judges them apart from the
//! cases.

use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_ipcperf");

fn root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
        .is_some_and(|u| u == "0")
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `ipcperf ARGS --format json --no-save`, as the user `nobody` when `nobody`
/// (and we are root), its JSON.
fn json(args: &[&str], nobody: bool) -> Value {
    let mut cmd = if nobody {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN]);
        c
    } else {
        Command::new(BIN)
    };
    let out = cmd
        .args(args)
        .args(["--format", "json", "--no-save"])
        .env_remove("IPCPERF_DB")
        .env("TMPDIR", "/tmp")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {err}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"))
}

/// A side's counts in a series, where counted.
fn counts<'a>(s: &'a Value, side: &str) -> Option<&'a Value> {
    s.get(format!("{side}_counts")).filter(|v| v.is_object())
}

fn n(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"))
}

/// A pipe round trip between two processes: each series has both sides'
/// counters, and the client, whose read finds the pipe empty until the server
/// answers, blocks on it: at least one voluntary switch for every two round
/// trips (one each, as it blocks). As an unprivileged user too.
#[test]
fn round_trips_carry_both_sides_counters_without_rights() {
    if cpus() < 2 {
        println!("skipped: one CPU, so no round trip across two");
        return;
    }
    let users: &[bool] = if root() { &[false, true] } else { &[false] };
    if !root() {
        println!("skipped the as-nobody half: not root, so setpriv cannot drop to nobody");
    }
    for &nobody in users {
        let run = json(
            &[
                "latency",
                "pipe",
                "--mode",
                "processes",
                "--pin",
                "0,1",
                "-n",
                "2000",
                "-r",
                "2",
            ],
            nobody,
        );
        let case = &run["cases"][0];
        assert_eq!(case["status"], "ok", "{case}");
        let series = case["series"].as_array().unwrap();
        assert_eq!(series.len(), 2);
        for s in series {
            let round_trips = n(s, "blocks");
            let client = counts(s, "writer").unwrap_or_else(|| panic!("no client counts: {s}"));
            let server = counts(s, "reader").unwrap_or_else(|| panic!("no server counts: {s}"));
            assert!(
                n(client, "voluntary_switches") * 2 >= round_trips,
                "nobody={nobody}: {client} over {round_trips} round trips"
            );
            assert!(
                n(server, "voluntary_switches") * 2 >= round_trips,
                "nobody={nobody}: {server} over {round_trips} round trips"
            );
            assert!(
                n(s, "writer_cpu_ns") > 0 && n(s, "reader_cpu_ns") > 0,
                "{s}"
            );
        }
    }
}

/// One thread writing and reading its own pipe never waits for anyone: no
/// voluntary switch in the timed window, whatever the machine (a preemption is
/// involuntary, and counted apart).
#[test]
fn one_thread_that_never_blocks_makes_no_voluntary_switch() {
    let run = json(
        &[
            "run", "pipe", "--mode", "single", "--pin", "0,0", "--sizes", "4k", "-d", "50ms", "-r",
            "2",
        ],
        false,
    );
    let case = &run["cases"][0];
    assert_eq!(case["status"], "ok", "{case}");
    for s in case["series"].as_array().unwrap() {
        let w = counts(s, "writer").unwrap_or_else(|| panic!("no counts: {s}"));
        assert_eq!(n(w, "voluntary_switches"), 0, "{s}");
        assert!(counts(s, "reader").is_none(), "one thread, one side: {s}");
        assert!(n(s, "blocks") > 0);
    }
}

/// The table shows switches per message, the CSV every counter of every
/// series, and `compare` of two counted runs adds the counters' rows, never
/// gated.
#[test]
fn tables_csv_and_compare_carry_the_counters() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let db = db.to_str().unwrap();
    let args = [
        "run", "pipe", "--mode", "threads", "--pin", "0,0", "--sizes", "4k", "-d", "30ms", "-r",
        "3", "--db", db,
    ];
    for label in ["a", "b"] {
        let out = Command::new(BIN)
            .args(args)
            .args(["--label", label])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let table = String::from_utf8_lossy(&out.stdout);
        assert!(table.contains("switches/msg"), "{table}");
    }
    let csv = Command::new(BIN)
        .args(["show", "a", "--db", db, "--format", "csv"])
        .output()
        .unwrap();
    assert!(
        csv.status.success(),
        "{}",
        String::from_utf8_lossy(&csv.stderr)
    );
    let text = String::from_utf8_lossy(&csv.stdout);
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let row = rows.records().next().unwrap().unwrap();
    let writer_switches = &row[col("series_writer_voluntary_switches")];
    assert_eq!(writer_switches.split(';').count(), 3, "{writer_switches}");
    assert!(
        row[col("switches_per_msg")].parse::<f64>().is_ok(),
        "{text}"
    );
    let cmp = Command::new(BIN)
        .args(["compare", "a", "b", "--db", db, "--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&cmp.stdout).unwrap();
    let units: Vec<&str> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["unit"].as_str())
        .collect();
    assert!(units.contains(&"switches/msg"), "{units:?}");
    assert!(units.contains(&"CPU µs/msg"), "{units:?}");
}

/// Set/clear cycles are counted on both sides: each side waits for the other's
/// token, so each blocks at some point of a series and spends CPU time. Not
/// once every two cycles: a side that finds the token already there reads it
/// without blocking (47 cycles, the partner's 22 waits, under CI's load).
#[test]
fn set_clear_cycles_carry_both_sides_counts() {
    if cpus() < 2 {
        println!("skipped: one CPU, so no set/clear across two");
        return;
    }
    let run = json(
        &[
            "sync",
            "eventfd",
            "--mode",
            "processes",
            "--pin",
            "0,1",
            "-d",
            "50ms",
            "-r",
            "2",
        ],
        false,
    );
    let case = &run["cases"][0];
    assert_eq!(case["status"], "ok", "{case}");
    let series = case["sync"]["set_clear_series"].as_array().unwrap();
    assert_eq!(series.len(), 2, "{case}");
    for s in series {
        let cycles = n(s, "cycles");
        let ours = &s["cost"];
        let theirs = &s["partner_cost"];
        assert!(cycles > 0, "{s}");
        for side in [ours, theirs] {
            assert!(n(side, "cpu_ns") > 0, "{s}");
            assert!(n(side, "voluntary_switches") > 0, "{s}");
        }
    }
}

/// perf's counters only when asked for: by default no series carries them and
/// the machine state says nothing of them; asked for, each series carries
/// perf's context switches or the machine state says in a line why not.
#[test]
fn perf_counters_are_asked_for_and_say_why_when_they_cannot_count() {
    let args = [
        "latency",
        "pipe",
        "--mode",
        "threads",
        "--pin",
        "0,0",
        "-n",
        "500",
        "-r",
        "1",
        "--format",
        "json",
        "--no-save",
    ];
    let plain = Command::new(BIN).args(args).output().unwrap();
    let plain: Value = serde_json::from_slice(&plain.stdout).unwrap();
    let w = &plain["cases"][0]["series"][0]["writer_counts"];
    assert!(w.is_object() && w.get("perf_switches").is_none(), "{w}");
    assert!(plain["machine"]["state"].get("perf_not_counted").is_none());
    let asked = Command::new(BIN)
        .args(args)
        .env("IPCPERF_PERF_COUNTERS", "1")
        .output()
        .unwrap();
    let asked: Value = serde_json::from_slice(&asked.stdout).unwrap();
    let w = &asked["cases"][0]["series"][0]["writer_counts"];
    let lines = asked["machine"]["state"]["perf_not_counted"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    match w.get("perf_switches") {
        // Counted with the kernel's share: the thread blocked once a round trip.
        Some(v) => assert!(v.as_u64().unwrap() >= 250, "{w}"),
        None => assert!(
            lines
                .iter()
                .any(|l| l.as_str().unwrap().contains("context switches")),
            "neither counted nor said why: {lines:?}"
        ),
    }
    // The processor's counters: counted, or a line says why not.
    assert!(
        w.get("cycles").is_some() || lines.iter().any(|l| l.as_str().unwrap().contains("cycles")),
        "{w} {lines:?}"
    );
}

/// Many pairs, fan-in and fan-out count every side too: a series' counts are
/// all its clients' (writers') together and all its servers' (readers')
/// together, or the one shared side's, so a message's cost is per message of
/// them all. Each pair's client blocks for its answer: at least one voluntary
/// switch for every two round trips of all the pairs.
#[test]
fn pairs_fan_in_and_fan_out_count_every_side() {
    if cpus() < 2 {
        println!("skipped: one CPU");
        return;
    }
    let pairs = json(
        &[
            "latency",
            "pipe",
            "--mode",
            "processes",
            "--pairs",
            "2",
            "-n",
            "500",
            "-r",
            "2",
        ],
        false,
    );
    let fan_in = json(
        &[
            "latency",
            "unix",
            "--mode",
            "processes",
            "--clients",
            "2",
            "-n",
            "500",
            "-r",
            "2",
        ],
        false,
    );
    let fan_out = json(
        &[
            "run",
            "pipe",
            "--mode",
            "processes",
            "--subscribers",
            "2",
            "--sizes",
            "4k",
            "-d",
            "30ms",
            "-r",
            "2",
        ],
        false,
    );
    for (what, run) in [
        ("pairs", &pairs),
        ("fan-in", &fan_in),
        ("fan-out", &fan_out),
    ] {
        let case = &run["cases"][0];
        assert_eq!(case["status"], "ok", "{what}: {case}");
        for s in case["series"].as_array().unwrap() {
            let w = counts(s, "writer").unwrap_or_else(|| panic!("{what}: no writer counts: {s}"));
            assert!(
                counts(s, "reader").is_some(),
                "{what}: no reader counts: {s}"
            );
            if what == "pairs" {
                let round_trips = n(s, "blocks");
                assert!(
                    n(w, "voluntary_switches") * 2 >= round_trips,
                    "{w} over {round_trips} round trips of both pairs"
                );
            }
        }
    }
}

/// A replay's passes are counted on both sides as a round trip's series are:
/// the peer (side B) waits for the messages of a paced pattern in a blocking
/// read, so its own counts hold switches; the table adds switches and CPU time
/// per message. (How many is the scheduler's: one per message or two on an
/// idle machine, 92 over 201 beside other tests in CI, where a late writer
/// sends what it owes back to back and B reads them without a wait.)
#[test]
fn a_replay_counts_both_sides() {
    if cpus() < 2 {
        println!("skipped: one CPU");
        return;
    }
    let args = [
        "replay",
        "pipe",
        "--size-dist",
        "fixed:512",
        "--gaps",
        "fixed:2k",
        "--for",
        "100ms",
        "--pin",
        "0,1",
    ];
    let run = json(&args, false);
    let case = &run["cases"][0];
    assert_eq!(case["status"], "ok", "{case}");
    for s in case["series"].as_array().unwrap() {
        let messages = n(s, "blocks");
        assert!(messages >= 100, "{s}");
        assert!(counts(s, "writer").is_some(), "no side A counts: {s}");
        let b = counts(s, "reader").unwrap_or_else(|| panic!("no side B counts: {s}"));
        assert!(
            n(b, "voluntary_switches") >= 1,
            "{b} over {messages} messages"
        );
    }
    let out = Command::new(BIN)
        .args(args)
        .args(["--format", "markdown", "--no-save"])
        .env_remove("IPCPERF_DB")
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{table}");
    assert!(
        table.contains("switches/msg") && table.contains("CPU µs/msg"),
        "{table}"
    );
}
