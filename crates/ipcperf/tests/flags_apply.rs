//! Flags that do not apply to what was asked are bad input (one line, exit 2),
//! never dropped without a word: a flag of a mechanism's kernel object that
//! none of the run's mechanisms applies, and the flags of timing given to
//! `sync --robustness`, which times nothing; a ranking at a size not measured.

use assert_cmd::cargo::cargo_bin_cmd;

mod common;
use common::bad_input;

#[test]
fn a_mechanism_flag_none_of_the_mechanisms_applies_exits_2() {
    // A flag of a mechanism's object that none of the run's mechanisms applies:
    // each ran, saved, and said nothing (`latency unix --nodelay` measured Unix
    // sockets as if the flag had been taken).
    bad_input(&["run", "unix", "--nodelay"], "--nodelay applies to tcp");
    bad_input(&["latency", "unix", "--ipv6"], "--ipv6 applies to tcp, udp");
    bad_input(
        &["latency", "pipe", "--priority", "5"],
        "--priority applies to posix-mq",
    );
    bad_input(
        &["run", "pipe", "--sndbuf", "64k"],
        "--sndbuf applies to unix",
    );
    bad_input(
        &["run", "fifo", "--rcvbuf", "64k"],
        "--rcvbuf applies to unix",
    );
    bad_input(
        &["run", "unix", "--pipe-size", "64k"],
        "--pipe-size applies to pipe",
    );
    bad_input(
        &["run", "shm", "--nonblocking"],
        "--nonblocking applies to pipe",
    );
    bad_input(&["matrix", "pipe", "--nodelay"], "none of pipe is one");
    // --dir where nothing goes: pipe and tcp make no file (it was taken, and
    // nothing went there); fifo's record names it.
    bad_input(
        &["run", "pipe,tcp", "--dir", "/tmp"],
        // (then uring-unix, and the library mechanisms of a build with them)
        "--dir applies to fifo, unix, file",
    );
    bad_input(
        &["sync", "futex,mutex", "--dir", "/tmp"],
        "--dir holds the lock file of flock and fcntl, and neither is measured",
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let v = common::run_json(&[
        "run", "fifo", "--dir", d, "-s", "4k", "-d", "20ms", "-r", "1",
    ]);
    assert_eq!(v["cases"][0]["options"]["dir"], d, "{v}");
}

/// `--spin-for` is adaptive's spin: with no adaptive wake-up (futex is the
/// default) it was taken and spun nothing.
#[test]
fn a_spin_without_an_adaptive_wake_exits_2() {
    bad_input(
        &["latency", "shm", "--spin-for", "1ms"],
        "--spin-for applies to --wake adaptive (spin, then sleep); this run's wake-ups: futex",
    );
    bad_input(
        &["run", "shm", "--wake", "spin,futex", "--spin-for", "1ms"],
        "this run's wake-ups: spin, futex",
    );
}

/// `--tracer` without `--explain` traced nothing and said nothing.
#[test]
fn a_tracer_without_explain_exits_2() {
    for cmd in [
        &["run", "pipe"][..],
        &["latency", "pipe"],
        &["matrix", "pipe"],
        &["sync"],
    ] {
        let mut args = cmd.to_vec();
        args.extend(["--tracer", "perf"]);
        bad_input(&args, "--explain");
    }
}

#[test]
fn sync_robustness_refuses_the_flags_of_timing() {
    // --robustness kills a holder process placed by the scheduler: these were
    // dropped without a word (--mode threads ran as processes).
    for flag in [
        &["--mode", "threads"][..],
        &["--pin", "0,0"],
        &["--repeat", "3"],
        &["--duration", "1s"],
        &["--latency-samples", "5"],
        &["--untimed"],
    ] {
        let mut args = vec!["sync", "--robustness", "futex"];
        args.extend_from_slice(flag);
        bad_input(&args, flag[0].trim_start_matches('-'));
    }
    // It times no series: no plan of series is said (it said "1 case × 5
    // series of 600 ms").
    let dir = tempfile::tempdir().unwrap();
    let out = cargo_bin_cmd!("ipcperf")
        .args(["sync", "--robustness", "pipe", "--db"])
        .arg(dir.path().join("r.db"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("series of"), "{err}");
}

/// `--rank-size` names a block size the run measures (run: before anything is
/// measured) or measured (show); one it did not printed no ranking and said
/// nothing.
#[test]
fn a_ranking_at_a_size_not_measured_exits_2() {
    bad_input(
        &[
            "run",
            "pipe",
            "unix",
            "--sizes",
            "64,4k",
            "--rank-size",
            "3k",
        ],
        "--rank-size 3 KiB: not a block size measured (64 B, 4 KiB)",
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let kept = cargo_bin_cmd!("ipcperf")
        .args(["latency", "pipe", "-n", "100", "-r", "1", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(kept.status.success(), "{kept:?}");
    let out = cargo_bin_cmd!("ipcperf")
        .args(["show", "last", "--rank-size", "64k", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no stream was measured"), "{err}");
    assert!(out.stdout.is_empty());
}
