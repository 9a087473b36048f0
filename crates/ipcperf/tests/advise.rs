//! `ipcperf advise`, measured for real (short series, -d 20ms): a ranked answer whose every
//! figure is in the run it saved, constraints that leave candidates out with
//! their reason, and bad questions refused in one line.

mod common;
use common::{cmd, stdout};

/// The figure of a ranked row, as the table prints it: "12.3 µs" → ns.
fn ns(s: &str) -> f64 {
    // A figure resting on fewer than 10 round trips beyond it is marked †.
    let s = s.trim().trim_end_matches('†');
    let (v, unit) = s.split_once(' ').unwrap();
    let v: f64 = v.parse().unwrap();
    v * match unit {
        "ns" => 1.0,
        "µs" => 1e3,
        "ms" => 1e6,
        u => panic!("unit {u}"),
    }
}

/// A saved case's name as the answer shows it: `shm (spin)`, `pipe`.
fn label(c: &serde_json::Value) -> String {
    let m = c["mechanism"].as_str().unwrap();
    match c["wait"].as_str().unwrap() {
        "block" => m.to_string(),
        w => format!("{m} ({w})"),
    }
}

#[test]
fn a_quick_answer_is_ranked_by_the_figure_and_kept_as_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let out = stdout(&mut cmd(
        &db,
        &[
            "advise",
            "--quick",
            "-d",
            "20ms",
            "--only",
            "pipe,unix,shm",
            "--sizes",
            "64",
            "--latency",
            "p50",
            "--cpu-budget",
            "1.3",
        ],
    ));
    assert!(
        out.contains("Which to use here: request-reply, 64 B"),
        "{out}"
    );
    // The ranked rows, in order, with their p50 (worst placement) and CPUs busy
    // (the answer's table: the ranking at polling idle, where measured, is below).
    let answer = out.split("\nAt polling idle").next().unwrap();
    let rows: Vec<(String, f64, f64)> = answer
        .lines()
        .filter(|l| l.starts_with('|') && !l.contains("mechanism"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (
                cells[2].to_string(),
                ns(cells[3]),
                cells[6].parse::<f64>().unwrap(),
            )
        })
        .collect();
    let names: Vec<&str> = rows.iter().map(|(n, _, _)| n.as_str()).collect();
    assert!(names.contains(&"pipe") && names.contains(&"unix"), "{out}");
    assert!(
        rows.windows(2).all(|w| w[0].1 <= w[1].1),
        "not in order: {rows:?}"
    );
    // Within the budget, each ranked one; the spinning ring, when it kept more
    // than the budget busy (two CPUs on an idle machine), is left out with why.
    assert!(rows.iter().all(|r| r.2 <= 1.35), "{out}");
    let first = out
        .lines()
        .find(|l| l.starts_with("First choice: "))
        .unwrap();
    assert!(first.contains(&rows[0].0), "{first} / {rows:?}");

    // The figures are the saved run's: its first-ranked case has that p50.
    let json = stdout(&mut cmd(&db, &["export", "last", "-f", "json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["command_line"][1] == "advise", "{}", v["command_line"]);
    let worst = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| label(c) == rows[0].0 && c["options"]["idle"].is_null())
        .map(|c| c["p50_ns"].as_f64().unwrap())
        .fold(0.0, f64::max);
    for c in v["cases"].as_array().unwrap() {
        let name = label(c);
        if c["median_cpu_load"].as_f64().unwrap_or(0.0) > 1.35 {
            // One line a reason: "left out: NAME, NAME: kept 2.00 CPUs busy, …".
            assert!(
                out.lines().any(|l| l
                    .strip_prefix("  left out: ")
                    .and_then(|l| l.split_once(": kept "))
                    .is_some_and(|(names, _)| names.split(", ").any(|n| n == name))),
                "{name}: {out}"
            );
            assert!(out.contains("over the budget of 1.3"), "{out}");
        }
    }
    let shown = rows[0].1;
    assert!(
        (worst - shown).abs() <= shown * 0.01 + 100.0,
        "shown {shown} ns, saved {worst} ns"
    );
}

#[test]
fn streams_and_message_boundaries() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let out = stdout(&mut cmd(
        &db,
        &[
            "advise",
            "--pattern",
            "stream",
            "--quick",
            "-d",
            "20ms",
            "--only",
            "pipe,unix-seqpacket",
            "--size",
            "4k",
            "--messages",
            "--no-save",
        ],
    ));
    assert!(out.contains("ranked by throughput"), "{out}");
    assert!(
        out.contains("left out: pipe, pipe (busy), pipe (epoll): a byte stream"),
        "{out}"
    );
    assert!(out.contains("First choice: unix-seqpacket"), "{out}");
    // Round trips ranked by their rate instead of a latency.
    let out = stdout(&mut cmd(
        &db,
        &[
            "advise",
            "--throughput",
            "--quick",
            "-d",
            "20ms",
            "--only",
            "pipe,unix",
            "--placement",
            "same-cpu",
            "--no-save",
        ],
    ));
    assert!(out.contains("ranked by round trips per second"), "{out}");
    assert!(out.contains("| round trips/s |"), "{out}");
    assert!(
        out.contains("round trips/s and range: the median and the range"),
        "{out}"
    );
}

/// --from-history measures nothing: it ranks the newest kept figure of each
/// case, names the runs it read and the cases no run has.
#[test]
fn from_history_ranks_kept_runs_without_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let none = cmd(&db, &["advise", "--from-history", "--only", "pipe"])
        .output()
        .unwrap();
    // No history at all is bad input (a read makes none).
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("no run history at"));
    assert!(!db.exists());
    stdout(&mut cmd(
        &db,
        &[
            "latency",
            "pipe",
            "unix",
            "--sizes",
            "512",
            "--placements",
            "all",
            "-n",
            "300",
            "-r",
            "2",
            "-q",
        ],
    ));
    let out = stdout(&mut cmd(
        &db,
        &["advise", "--from-history", "--only", "pipe,unix,tcp"],
    ));
    assert!(out.contains("First choice: "), "{out}");
    assert!(out.contains("Figures from kept run 1 ("), "{out}");
    assert!(out.contains("not in any kept run"), "{out}");
    assert!(out.contains("tcp "), "{out}");
    // Each case missing is named once, its wait and idle with it ("tcp
    // same-cpu" was said once for each of its three waits).
    let line: String = out
        .split("not in any kept run (measure them without --from-history): ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let names: Vec<&str> = line.split(", ").collect();
    let mut distinct = names.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), names.len(), "{line}");
    // What the question rules out is left out, not looked for as missing.
    let out = stdout(&mut cmd(
        &db,
        &[
            "advise",
            "--from-history",
            "--only",
            "pipe,unix,uring-unix",
            "--posix-only",
        ],
    ));
    assert!(
        out.contains("left out: uring-unix: io_uring is Linux only"),
        "{out}"
    );
    let missing = out.split("not in any kept run").nth(1).unwrap_or_default();
    assert!(!missing.contains("uring-unix"), "{out}");
    // Nothing new was kept.
    let h = stdout(&mut cmd(&db, &["history", "-f", "json"]));
    let v: serde_json::Value = serde_json::from_str(&h).unwrap();
    assert_eq!(v.as_array().map(|a| a.len()), Some(1), "{h}");
}

/// Fan-in ranks over every client's requests; fan-out by the slowest reader.
#[test]
fn fan_in_and_fan_out_are_ranked_by_their_own_figures() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let out = stdout(&mut cmd(
        &db,
        &[
            "advise",
            "--pattern",
            "fan-in",
            "--fan",
            "2",
            "--quick",
            "-d",
            "20ms",
            "--only",
            "pipe,unix",
            "--size",
            "64",
            "--placement",
            "same-cpu",
            "--no-save",
        ],
    ));
    assert!(out.contains("fan-in, 2 clients to one server"), "{out}");
    assert!(out.contains("round trip over every client"), "{out}");
    assert!(out.contains("2 clients→1"), "{out}");
    let out = stdout(&mut cmd(
        &db,
        &[
            "advise",
            "--pattern",
            "fan-out",
            "--fan",
            "2",
            "--quick",
            "-d",
            "20ms",
            "--only",
            "pipe,shm",
            "--size",
            "4k",
            "--placement",
            "same-cpu",
            "--no-save",
        ],
    ));
    assert!(out.contains("one writer to 2 readers"), "{out}");
    assert!(out.contains("slowest reader's throughput"), "{out}");
    assert!(out.contains("1→2 readers"), "{out}");
}

/// `-d` sets each series' length, said in the estimate and kept in the run.
#[test]
fn duration_sets_each_series_length() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let out = cmd(
        &db,
        &[
            "advise",
            "-d",
            "20ms",
            "--only",
            "pipe",
            "--placement",
            "same-cpu",
            "--export-json",
        ],
    )
    .arg(dir.path().join("a.json"))
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // Three cases (pipe's block, epoll and busy waits), each 6 × 20 ms and its set-up.
    assert!(
        err.contains("measuring 3 cases for the answer, about 1 s"),
        "{err}"
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("a.json")).unwrap()).unwrap();
    let mut elapsed: Vec<f64> = Vec::new();
    for c in v["cases"].as_array().unwrap() {
        assert_eq!(c["status"], "ok", "{c}");
        let series = c["series"].as_array().unwrap();
        assert_eq!(series.len(), 5, "{c}");
        elapsed.extend(series.iter().map(|s| s["elapsed_ns"].as_f64().unwrap()));
    }
    elapsed.sort_by(f64::total_cmp);
    // Calibrated to 20 ms: the median is far from --quick's 100 ms.
    let median = elapsed[elapsed.len() / 2];
    assert!(median < 60e6, "median series {median} ns: {elapsed:?}");
}

#[test]
fn bad_questions_are_one_line_exit_2() {
    let trace = common::missing("app.trace");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    for (args, want) in [
        (&["advise", "--cpu-budget", "0"][..], "--cpu-budget"),
        // It was taken, and the answer's title wrote it out in 301 digits.
        (
            &["advise", "--cpu-budget", "1e300"][..],
            "--cpu-budget: a number of CPUs above 0, at most 8192",
        ),
        (
            &["advise", "--only", "nope"][..],
            "--mechanisms nope: unknown mechanism",
        ),
        // An empty name was "--mechanisms : not a candidate".
        (
            &["advise", "--mechanisms", ","][..],
            "',' names no mechanism",
        ),
        (&["advise", "--only", "memcpy"][..], "not a candidate"),
        // Named by the flag given (it was refused as a bad --pin).
        (
            &["advise", "--placement", "sideways"][..],
            "'sideways' for '--placement",
        ),
        (&["advise", "--size", "0"][..], "size"),
        (
            &["advise", "--pattern", "fan-in", "--fan", "1"][..],
            "--fan",
        ),
        (
            &["advise", "--throughput", "--latency", "p50"][..],
            "--throughput",
        ),
        // Flags of another traffic: they were dropped without a word.
        (
            &["advise", "--traffic", "stream", "--fan", "8"][..],
            "--fan applies to --traffic fan-in (clients) and fan-out (readers), not to --traffic stream",
        ),
        // Applied to some candidates only: 64 KiB pipes against 4-byte signals.
        (
            &["advise", "--traffic", "notify", "--sizes", "64k"][..],
            "--sizes does not apply to --traffic notify",
        ),
        (
            &["advise", "--traffic", "fan-out", "--latency", "p50"][..],
            "--latency applies to round trips: --traffic fan-out is ranked by throughput",
        ),
        (&["advise", "--pattern-file", &trace][..], "no such file"),
        (
            &["advise", "--pattern-file", "x.csv", "--pattern", "stream"][..],
            "--pattern",
        ),
        (
            &[
                "advise",
                "--size-dist",
                "fixed:64",
                "--gaps",
                "fixed:1k",
                "--throughput",
            ][..],
            "--throughput",
        ),
        (&["advise", "-d", "10us"][..], "too short"),
        (&["advise", "--from-history", "-d", "1s"][..], "--duration"),
        (
            &[
                "advise",
                "--size-dist",
                "fixed:64",
                "--gaps",
                "fixed:1k",
                "-d",
                "20ms",
            ][..],
            "--for",
        ),
    ] {
        let out = cmd(&db, args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn a_replayed_pattern_is_ranked_with_the_pattern_beside_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    // A client's 90 B queries every 2 ms, each answered 200 µs later by 2 KiB.
    let csv = dir.path().join("app.csv");
    let mut text = String::from("time_ns,direction,size\n");
    for i in 0..100u64 {
        text.push_str(&format!(
            "{},>,90\n{},<,2048\n",
            i * 2_000_000,
            i * 2_000_000 + 200_000
        ));
    }
    std::fs::write(&csv, text).unwrap();
    let out = stdout(&mut cmd(
        &db,
        &[
            "advise",
            "--pattern-file",
            csv.to_str().unwrap(),
            "--only",
            "pipe,unix,tcp",
            "--quick",
        ],
    ));
    assert!(
        out.contains("Which to use here: the replayed pattern, ranked by the p99 message latency"),
        "{out}"
    );
    assert!(out.contains("First choice: "), "{out}");
    assert!(
        out.contains("The pattern: app.csv, conversation 1 (csv): 100 messages A→B (9000 B), 100 B→A (200 KiB)"),
        "{out}"
    );
    // Every candidate ranked, and each figure is a saved replay case's.
    let run: serde_json::Value =
        serde_json::from_str(&stdout(&mut cmd(&db, &["show", "1", "--format", "json"]))).unwrap();
    let cases = run["cases"].as_array().unwrap();
    assert!(
        cases
            .iter()
            .all(|c| c["workload"] == "replay" && c["status"] == "ok"),
        "{run}"
    );
    for m in ["pipe", "unix", "tcp"] {
        assert!(cases.iter().any(|c| c["mechanism"] == m), "{m}");
        let line = out
            .lines()
            .find(|l| l.contains(&format!("| {m} ")))
            .unwrap_or_else(|| panic!("{m}: {out}"));
        let p99 = ns(line.split('|').nth(3).unwrap());
        let worst = cases
            .iter()
            .filter(|c| c["mechanism"] == m)
            .map(|c| c["p99_ns"].as_f64().unwrap())
            .fold(0.0, f64::max);
        assert!(
            (p99 - worst).abs() <= worst * 0.01 + 100.0,
            "{m}: {p99} vs {worst}"
        );
    }
    // TCP as programs that send small messages in a row use it: no Nagle.
    assert!(
        cases
            .iter()
            .filter(|c| c["mechanism"] == "tcp")
            .all(|c| c["options"]["nodelay"] == "true"),
        "{run}"
    );
}

#[test]
fn descriptor_candidates_are_ranked_with_each_wait_named() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let out = stdout(&mut cmd(
        &db,
        &[
            "advise",
            "--quick",
            "-d",
            "20ms",
            "--only",
            "unix,shm",
            "--sizes",
            "64",
            "--latency",
            "p50",
            "--cpu-budget",
            "1",
            "--idle",
            "as-is",
            "--format",
            "json",
        ],
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let names: Vec<String> = v["ranked"]
        .as_array()
        .unwrap()
        .iter()
        .chain(v["left_out"].as_array().unwrap())
        .map(|r| r["mechanism"].as_str().unwrap().to_string())
        .collect();
    // Under a budget of one CPU nothing spins: unix blocking and in epoll, the
    // ring by its futex (its spin measured, then left out by the budget).
    for want in ["unix", "unix (epoll)", "shm (futex)"] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
    assert!(!names.iter().any(|n| n == "unix (busy)"), "{names:?}");
    // --wait narrows the waits tried.
    let out = stdout(&mut cmd(
        &db,
        &[
            "advise",
            "--quick",
            "-d",
            "20ms",
            "--only",
            "unix",
            "--sizes",
            "64",
            "--wait",
            "poll/epoll",
            "--format",
            "json",
        ],
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = v["ranked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["mechanism"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["unix (poll/epoll)"], "{v}");
}

/// What --messages or --posix-only leaves out whatever it measures is left
/// out unmeasured (the run holds none of it), and said; a question that leaves
/// nothing to measure is bad input.
#[test]
fn what_a_constraint_leaves_out_is_not_measured() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let out = stdout(&mut cmd(
        &db,
        &[
            "advise",
            "--quick",
            "-d",
            "20ms",
            "--mechanisms",
            "pipe,unix-dgram,uring-unix",
            "--messages",
            "--posix-only",
            "--placement",
            "same-cpu",
        ],
    ));
    assert!(
        out.contains("left out: pipe, pipe (busy), pipe (poll): a byte stream"),
        "{out}"
    );
    assert!(out.contains("uring-unix: io_uring is Linux only"), "{out}");
    let json = stdout(&mut cmd(&db, &["export", "last", "-f", "json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let measured: Vec<String> = v["cases"].as_array().unwrap().iter().map(label).collect();
    assert!(!measured.is_empty());
    assert!(
        measured
            .iter()
            .all(|m| m.starts_with("unix-dgram") && !m.contains("epoll")),
        "{measured:?}"
    );
    let out = cmd(
        &db,
        &[
            "advise",
            "--messages",
            "--mechanisms",
            "pipe,tcp",
            "--no-save",
        ],
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no candidate is left to measure: pipe"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}
