//! `eventfd`, `signal` and `shm` through the binary (which blocks the real-time
//! signals in `main` before any thread starts): verified round trips in threads
//! and processes, the wait strategy in the record, and the refusals (streams of
//! wake-up mechanisms, sizes they cannot carry) with their reasons.

use assert_cmd::Command;
use predicates::str::contains;

fn ipcperf() -> Command {
    let mut c = Command::cargo_bin("ipcperf").unwrap();
    // Keep the user's history out of it (and tests off each other's database).
    c.env("IPCPERF_NO_SAVE", "1");
    c
}

fn latency_json(args: &[&str]) -> Vec<serde_json::Value> {
    let mut a = vec![
        "latency",
        "--count",
        "400",
        "--repeat",
        "1",
        "--mode",
        "threads,processes",
        "--verify",
        "--format",
        "json",
    ];
    a.extend_from_slice(args);
    let out = ipcperf().args(&a).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["cases"].as_array().unwrap().clone()
}

fn assert_verified_round_trips(cases: &[serde_json::Value], n: usize, size: u64) {
    assert_eq!(cases.len(), n, "{cases:?}");
    for c in cases {
        assert_eq!(c["status"], "ok", "{c}");
        assert_eq!(c["block_size_bytes"], size);
        assert_eq!(c["round_trips"], 400, "{c}");
        assert!(c["p50_ns"].as_u64().unwrap() > 0);
        assert_eq!(c["series"][0]["bytes"], 2 * 400 * size, "{c}");
    }
}

#[test]
fn eventfd_round_trips_verified_8_bytes_only() {
    let cases = latency_json(&["eventfd", "--sizes", "8"]);
    assert_verified_round_trips(&cases, 2, 8);
    ipcperf()
        .args(["latency", "eventfd", "--sizes", "16", "--count", "10"])
        .assert()
        .code(2)
        .stderr(contains("8-byte counter"));
    ipcperf()
        .args(["run", "eventfd", "--sizes", "8", "--count", "10"])
        .assert()
        .code(2)
        .stderr(contains("not a byte stream"));
}

#[test]
fn signal_round_trips_verified_up_to_4_bytes() {
    for size in ["1", "4"] {
        let cases = latency_json(&["signal", "--sizes", size]);
        assert_verified_round_trips(&cases, 2, size.parse().unwrap());
    }
    ipcperf()
        .args(["latency", "signal", "--sizes", "8", "--count", "10"])
        .assert()
        .code(2)
        .stderr(contains("at most 4 bytes"));
    ipcperf()
        .args(["run", "signal", "--sizes", "4", "--count", "10"])
        .assert()
        .code(2)
        .stderr(contains("not a byte stream"));
}

#[test]
fn shm_round_trips_name_their_wake_strategy() {
    for wake in ["spin", "futex", "eventfd", "sem"] {
        let cases = latency_json(&["shm", "--sizes", "512", "--wake", wake]);
        assert_verified_round_trips(&cases, 2, 512);
        for c in &cases {
            assert_eq!(c["wait"], wake);
        }
    }
    let cases = latency_json(&["shm", "--sizes", "64", "--shm-named"]);
    assert_verified_round_trips(&cases, 2, 64);
    for c in &cases {
        let name = c["options"]["shm_name"].as_str().unwrap();
        assert!(!ipcperf_sys::shm::shm_exists(name), "{name} left behind");
    }
    ipcperf()
        .args(["latency", "shm", "--wake", "yield"])
        .assert()
        .code(2)
        .stderr(contains("unknown wake-up"));
}

#[test]
fn several_wakes_are_measured_side_by_side_and_told_apart() {
    let cases = latency_json(&[
        "shm",
        "--sizes",
        "64",
        "--wake",
        "spin,futex,adaptive",
        "--spin-for",
        "20us",
    ]);
    assert_verified_round_trips(&cases, 6, 64);
    let waits: Vec<&str> = cases.iter().map(|c| c["wait"].as_str().unwrap()).collect();
    for w in ["spin", "futex", "adaptive"] {
        assert_eq!(waits.iter().filter(|x| **x == w).count(), 2, "{waits:?}");
    }
    for c in cases.iter().filter(|c| c["wait"] == "adaptive") {
        assert_eq!(c["options"]["spin_ns"], "20000", "{c}");
    }
    // The table names each: three rows, one per wake-up.
    let out = ipcperf()
        .args([
            "latency",
            "shm",
            "--sizes",
            "64",
            "--count",
            "200",
            "--repeat",
            "1",
            "--wake",
            "spin,futex,adaptive",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let t = String::from_utf8(out.stdout).unwrap();
    for w in ["shm (spin)", "shm (futex)", "shm (adaptive)"] {
        assert!(t.contains(w), "{t}");
    }
}

#[test]
fn shm_spin_throughput_reports_the_cpu_it_burns() {
    let out = ipcperf()
        .args([
            "run", "shm", "--mode", "threads", "--sizes", "64k", "--count", "200", "--repeat", "1",
            "--wake", "spin", "--verify",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("wait=spin"), "{s}");
    assert!(s.contains("CPUs busy"), "{s}");
}
