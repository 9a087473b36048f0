//! Ctrl-Z, then `fg`: the whole process group stopped mid-run (SIGSTOP: the
//! same stop as the terminal's SIGTSTP, which a test's orphaned group would not
//! be sent) for longer than any wait for a peer (2 s), then continued. The run
//! must end as it would (exit 0: no live peer called dead, as the shm case was,
//! "peer process … did not answer within 2000 ms"), say it was stopped, and keep
//! the stop out of its figures (it held a round trip of 3 s, or a series at a
//! third of its rate, with nothing said), in one pair, many pairs, fan-in, fan-out,
//! sync, replay and pipeline alike.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

const STOP: Duration = Duration::from_secs(3);

fn signal(sig: &str, pgid: u32) {
    let ok = Command::new("kill")
        .args([sig, "--", &format!("-{pgid}")])
        .status()
        .unwrap();
    assert!(ok.success(), "kill {sig} -{pgid}");
}

/// `child` (the leader of a group of its own) stopped `after` its start for
/// [`STOP`], continued, and waited for (90 s at most): its exit, or None when it
/// had ended before the stop.
fn stop_and_wait(child: &mut Child, after: Duration, what: &str) -> Option<ExitStatus> {
    let pgid = child.id();
    std::thread::sleep(after);
    if child.try_wait().unwrap().is_some() {
        return None;
    }
    signal("-STOP", pgid);
    std::thread::sleep(STOP);
    signal("-CONT", pgid);
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return Some(st);
        }
        if t0.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("{what}: still running 90 s after it was continued");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `ipcperf ARGS` in a group of its own, stopped `after` its start for [`STOP`];
/// its stderr and its run as JSON.
fn stopped(args: &[&str], after: Duration) -> (String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
        .args(args)
        .env("IPCPERF_DB", &db)
        .env_remove("IPCPERF_NO_SAVE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let st = stop_and_wait(&mut child, after, &format!("{args:?}"))
        .unwrap_or_else(|| panic!("{args:?} ended before it was stopped: give it longer series"));
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(st.code(), Some(0), "{args:?}: {err}");
    assert!(
        err.contains("the run was stopped and continued 1 time (Ctrl-Z, SIGSTOP)"),
        "{args:?}: {err}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
        .args(["export", "last", "--format", "json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    (err, serde_json::from_slice(&out.stdout).unwrap())
}

/// Round trips between two processes over shared memory woken by futex (the
/// case a stop failed), and between two threads over a pipe: every round trip
/// kept is far shorter than the stop.
#[test]
fn a_stop_is_in_no_round_trip() {
    let cases: [&[&str]; 2] = [
        &["latency", "shm", "-d", "1s", "-r", "3"],
        &["latency", "pipe", "-m", "threads", "-d", "1s", "-r", "3"],
    ];
    std::thread::scope(|s| {
        for args in cases {
            s.spawn(move || {
                let (err, run) = stopped(args, Duration::from_millis(1500));
                for c in run["cases"].as_array().unwrap() {
                    assert_eq!(c["status"], "ok", "{args:?}: {c}\n{err}");
                    let max = c["max_ns"].as_u64().unwrap();
                    assert!(
                        max < STOP.as_nanos() as u64 / 2,
                        "{args:?}: a round trip of {max} ns holds the stop\n{err}"
                    );
                }
            });
        }
    });
}

/// How long each kept series of a case lasted (and each sync series' tare): a
/// series that held the stop lasted at least the stop.
fn spans(c: &serde_json::Value) -> Vec<u64> {
    let of = |v: &serde_json::Value, keys: &[&str]| -> Vec<u64> {
        let v = v.as_array().unwrap();
        assert!(!v.is_empty(), "no series: {c}");
        v.iter()
            .flat_map(|s| keys.iter().map(|k| s[*k].as_u64().unwrap()))
            .collect()
    };
    match c.get("sync") {
        Some(s) => ["request_release_series", "set_clear_series"]
            .iter()
            .flat_map(|k| of(&s[*k], &["elapsed_ns", "tare_ns"]))
            .collect(),
        None => of(&c["series"], &["elapsed_ns"]),
    }
}

/// Each kind of case, stopped mid-series: a stream between two processes, many
/// pairs, fan-in, fan-out, a sync case between processes, a replay and the
/// pipelines (whose shell rounds run in a group a Ctrl-Z does not stop). No
/// kept series (series of 0.5 s, replay passes of 1 s, pipeline rounds under
/// 1 s) lasted the stop, no round trip or message held it.
#[test]
fn a_stop_is_in_no_series() {
    let series: &[&str] = &["-d", "500ms", "-r", "5"];
    let cases: [&[&str]; 7] = [
        &["run", "pipe", "-s", "64k"],
        &["run", "pipe", "-s", "64k", "--pairs", "2"],
        &["latency", "pipe", "--clients", "2"],
        &["run", "pipe", "-s", "64k", "--subscribers", "2"],
        &["sync", "futex", "--mode", "processes"],
        &[
            "replay",
            "--size-dist",
            "fixed:64",
            "--gaps",
            "fixed:1ms",
            "unix",
        ],
        &["pipeline", "--bytes", "128M", "--repeat", "3"],
    ];
    std::thread::scope(|s| {
        for case in cases {
            s.spawn(move || {
                let timed = matches!(case[0], "run" | "latency" | "sync");
                let args = [case, if timed { series } else { &[] }].concat();
                let (err, run) = stopped(&args, Duration::from_millis(1500));
                let cases = run["cases"].as_array().unwrap();
                assert!(!cases.is_empty(), "{args:?}: no case\n{err}");
                for c in cases {
                    assert_eq!(c["status"], "ok", "{args:?}: {c}\n{err}");
                    let spans = spans(c);
                    assert!(
                        spans.iter().all(|&t| t < STOP.as_nanos() as u64),
                        "{args:?}: a series holds the stop: {spans:?} ns\n{err}"
                    );
                    if let Some(max) = c["max_ns"].as_u64() {
                        assert!(
                            max < STOP.as_nanos() as u64 / 2,
                            "{args:?}: a round trip of {max} ns holds the stop\n{err}"
                        );
                    }
                }
            });
        }
    });
}

/// `topology --measure` stopped mid-pair: each pair's own limit (2 s) counted
/// the stop and failed the whole measurement ("CPUs 0 and 1 did not take turns
/// within 2 s"); the pair is measured again. Its pairs take about 0.25 s each
/// on 2 CPUs, so the stop falls 150 ms in.
#[test]
fn a_stop_fails_no_cpu_pair() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c2c.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
        .args(["topology", "--measure", "--format", "json"])
        // Nothing kept in the user's history (it kept a topology run per test).
        .env("IPCPERF_NO_SAVE", "1")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let Some(st) = stop_and_wait(&mut child, Duration::from_millis(150), "topology --measure")
    else {
        eprintln!("skipped: topology --measure ended before it was stopped");
        return;
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    if err.contains("measuring needs two CPUs") {
        eprintln!("skipped: one CPU here: {err}");
        return;
    }
    assert_eq!(st.code(), Some(0), "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let pairs = v["measured"]["pairs"].as_array().unwrap();
    assert!(!pairs.is_empty(), "{v}");
}
