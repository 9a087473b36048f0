//! `ipcperf latency` from the command line: JSON fields, tables, bad input.

use assert_cmd::Command;
use predicates::str::contains;

fn ipcperf() -> Command {
    let mut c = Command::cargo_bin("ipcperf").unwrap();
    // Tests keep nothing in the user's run history.
    c.env("IPCPERF_NO_SAVE", "1");
    c
}

#[test]
fn json_carries_the_latency_fields_per_case() {
    let out = ipcperf()
        .args([
            "latency",
            "pipe",
            "unix-seqpacket",
            "--sizes",
            "64",
            "--count",
            "500",
            "--repeat",
            "2",
            "--mode",
            "threads",
            "--verify",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    for c in cases {
        assert_eq!(c["workload"], "round-trip");
        assert_eq!(c["block_size_bytes"], 64);
        assert_eq!(c["mode"], "threads");
        assert_eq!(c["round_trips"], 1000);
        for k in ["p50_ns", "p99_ns", "round_trips_per_sec", "clock_cost_ns"] {
            assert!(c[k].is_number(), "{k} in {c}");
        }
        assert!(c["latency_histogram"]["counts"].as_array().unwrap().len() > 1);
    }
}

#[test]
fn table_shows_percentiles_and_one_way_only_when_asked() {
    ipcperf()
        .args([
            "latency", "unix", "--sizes", "16", "--count", "200", "--repeat", "1",
        ])
        .assert()
        .success()
        .stdout(contains("p99.99"))
        .stdout(contains("round trips/s"))
        .stdout(contains("one-way").not());
    ipcperf()
        .args([
            "latency",
            "unix",
            "--sizes",
            "16",
            "--count",
            "200",
            "--repeat",
            "1",
            "--half-rtt",
        ])
        .assert()
        .success()
        .stdout(contains("half-rtt p50"))
        .stdout(contains("one-way").not());
}

#[test]
fn one_way_is_measured_from_a_timestamp_in_each_message_and_kept() {
    for mode in ["threads", "processes"] {
        let out = ipcperf()
            .args([
                "latency",
                "pipe",
                "unix",
                "--sizes",
                "8,4k",
                "--count",
                "500",
                "--repeat",
                "2",
                "--mode",
                mode,
                "--one-way",
                "--verify",
                "--format",
                "json",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for c in v["cases"].as_array().unwrap() {
            assert_eq!(c["status"], "ok", "{c}");
            let w = &c["one_way"];
            // Every message of both series measured by its receiver.
            assert_eq!(w["samples"], 1000, "{mode} {c}");
            let (p50, rtt50) = (w["p50_ns"].as_u64().unwrap(), c["p50_ns"].as_u64().unwrap());
            assert!(p50 > 0, "{w}");
            // One way is part of the round trip: never more than the whole median
            // (2 significant digits: 1% of room).
            assert!(
                p50 as f64 <= rtt50 as f64 * 1.01,
                "one-way {p50} RTT {rtt50}"
            );
            assert!(w["histogram"]["counts"].as_array().unwrap().len() > 1);
        }
    }
    // No room for the timestamp: refused before anything is measured, one
    // line that says so, not a figure.
    let out = ipcperf()
        .args([
            "latency",
            "unix",
            "--sizes",
            "4",
            "--count",
            "100",
            "--one-way",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("8-byte send time"),
        "{out:?}"
    );
}

#[test]
fn csv_has_latency_columns() {
    ipcperf()
        .args([
            "latency", "tcp", "--sizes", "8", "--count", "100", "--repeat", "1", "-f", "csv",
        ])
        .assert()
        .success()
        .stdout(contains("p50_ns"))
        .stdout(contains("round_trips_per_sec"));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for args in [
        vec!["latency", "file"],
        vec!["latency", "pipe", "--mode", "single"],
        vec!["latency", "nosuch"],
        vec!["latency", "sysv-msg", "--sizes", "16M", "--count", "10"],
    ] {
        ipcperf()
            .args(&args)
            .assert()
            .code(2)
            .stderr(contains("ipcperf"));
    }
}

use predicates::prelude::PredicateBooleanExt;

#[test]
fn paced_round_trips_keep_their_schedule_and_name_a_saturated_rate() {
    let out = ipcperf()
        .args([
            "latency", "pipe", "--mode", "threads", "--sizes", "64", "--rate", "2k,5M", "-d",
            "300ms", "--repeat", "2", "--verify", "--format", "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    let by_rate = |r: &str| {
        cases
            .iter()
            .find(|c| c["options"]["rate_per_sec"] == r)
            .unwrap_or_else(|| panic!("no case at {r}/s"))
    };
    // Far from saturation, the achieved rate is the offered one: never above
    // it, and below it only by the last reply of each series, which comes at
    // most the slowest round trip after its send time (each round trip is
    // timed from when it was due: a stall counts in its time, so this holds
    // on a machine that stalls; 2% was broken by one 40 ms stall at the end).
    let c = by_rate("2000");
    assert_eq!(c["status"], "ok", "{}", c["message"]);
    let got = c["round_trips_per_sec"].as_f64().unwrap();
    // About 300 ms x 2000/s in each of 2 series (sized by a paced warm-up).
    let n = c["round_trips"].as_u64().unwrap();
    assert!((1100..=1260).contains(&n), "{n} round trips");
    let max_s = c["max_ns"].as_f64().unwrap() / 1e9;
    let floor = n as f64 / (n as f64 / 2000.0 + 2.0 * max_s);
    assert!(
        got <= 2000.0 * 1.001 && got >= floor * 0.999,
        "achieved {got}/s of 2000 (the slowest round trip {max_s} s: at least {floor}/s)"
    );
    // 5M/s is beyond a pipe: the table says saturated, not a lower latency.
    let c = by_rate("5000000");
    assert_eq!(c["status"], "ok", "{}", c["message"]);
    assert!(c["round_trips_per_sec"].as_f64().unwrap() < 0.99 * 5e6);
    let table = ipcperf()
        .args([
            "latency", "pipe", "--mode", "threads", "--sizes", "64", "--rate", "5M", "-d", "100ms",
            "--repeat", "1",
        ])
        .output()
        .unwrap();
    let t = String::from_utf8(table.stdout).unwrap();
    assert!(t.contains("offered/s") && t.contains("saturated"), "{t}");
    ipcperf()
        .args(["latency", "pipe", "--rate", "0"])
        .assert()
        .code(2)
        .stderr(contains("a rate from 1"));
}

#[test]
fn busy_poll_spins_the_client_only_and_is_named_with_its_cpu_cost() {
    let out = ipcperf()
        .args(["latency", "udp", "tcp", "pipe", "shm", "--busy-poll"])
        .args(["--rate", "2000", "--sizes", "64", "-n", "400", "-r", "1"])
        .args(["--verify", "--mode", "processes", "--format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 4);
    for c in cases {
        assert_eq!(c["wait"], "busy-poll", "{c}");
        assert_eq!(c["options"]["busy_poll"], "client", "{c}");
        if c["mechanism"] == "shm" {
            // The ring waits its own way: refused, with the option that spins.
            assert_eq!(c["status"], "refused", "{c}");
            assert!(c.to_string().contains("--wake spin"), "{c}");
            continue;
        }
        assert_eq!(c["status"], "ok", "{c}");
        // 400 verified round trips, paced at 2,000/s: the client spun through
        // the gaps (its CPU time is most of the series), the server slept.
        assert_eq!(c["round_trips"], 400, "{c}");
        for s in c["series"].as_array().unwrap() {
            let wall = s["elapsed_ns"].as_f64().unwrap();
            let client = s["writer_cpu_ns"].as_f64().unwrap();
            let server = s["reader_cpu_ns"].as_f64().unwrap();
            assert!(client > 0.3 * wall, "client {client} of {wall}: {c}");
            assert!(server < 0.5 * wall, "server {server} of {wall}: {c}");
        }
    }
}
