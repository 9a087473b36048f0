//! `ipcperf sync` from the outside: bad input, JSON fields, the table.

use assert_cmd::Command;
use predicates::prelude::*;

fn ipcperf() -> Command {
    let mut c = Command::cargo_bin("ipcperf").unwrap();
    // Tests keep nothing in the user's run history.
    c.env("IPCPERF_NO_SAVE", "1");
    c
}

#[test]
fn unknown_primitive_is_exit_2_with_one_line() {
    ipcperf()
        .args(["sync", "semaphore-of-doom"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "unknown primitive 'semaphore-of-doom'",
        ))
        .stderr(predicate::str::contains("panicked").not());
}

#[test]
fn json_carries_primitive_mode_and_both_rates() {
    let out = ipcperf()
        .args([
            "sync",
            "futex,mutex",
            "--mode",
            "threads",
            "--duration",
            "20ms",
            "--repeat",
            "1",
            "--latency-samples",
            "100",
            "--format",
            "json",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    // A rate is a number, or null with the reason beside it (a loop that did not
    // rise above its tare on a noisy machine is reported, never clamped).
    let rate_or_reason = |s: &serde_json::Value, what: &str| {
        let r = &s[format!("{what}_per_sec")];
        assert!(
            r.as_f64().is_some_and(|x| x > 0.0) || s[format!("{what}_note")].is_string(),
            "{what}: {s}"
        );
    };
    let futex = &cases[0]["sync"];
    assert_eq!(futex["primitive"], "futex");
    assert_eq!(futex["mode"], "threads");
    assert!(futex.get("request_release_per_sec").is_some());
    assert!(futex.get("set_clear_per_sec").is_some());
    rate_or_reason(futex, "request_release");
    rate_or_reason(futex, "set_clear");
    assert!(futex["set_clear_series"][0]["cycles"]
        .as_u64()
        .is_some_and(|n| n > 0));
    let mutex = &cases[1]["sync"];
    assert_eq!(mutex["primitive"], "mutex");
    rate_or_reason(mutex, "request_release");
    assert!(mutex["set_clear_per_sec"].is_null());
    assert!(mutex["set_clear_note"]
        .as_str()
        .unwrap()
        .starts_with("not applicable"));
    assert_eq!(cases[0]["workload"], "sync");
    // The fields at the top level of each case, as the section has them.
    for c in cases {
        assert_eq!(c["primitive"], c["sync"]["primitive"], "{c}");
        assert_eq!(c["mode"], c["sync"]["mode"], "{c}");
        for k in ["request_release_per_sec", "set_clear_per_sec"] {
            assert!(c.get(k).is_some(), "{k} missing at the top: {c}");
            assert_eq!(c[k], c["sync"][k], "{k}");
        }
    }
}

#[test]
fn table_has_duncans_columns() {
    ipcperf()
        .args([
            "sync",
            "posix-sem",
            "--duration",
            "20ms",
            "--repeat",
            "1",
            "--latency-samples",
            "100",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("request/release cycles/s"))
        .stdout(predicate::str::contains("set/clear cycles/s"))
        .stdout(predicate::str::contains("tare"))
        .stdout(predicate::str::contains("posix-sem"));
}
