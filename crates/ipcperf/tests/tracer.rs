//! `--explain`'s two tracers, as root: each forced one traces and names itself;
//! tracefs sees the server's wake-up on a secondary CPU, whatever that CPU's
//! idle task does; `auto` names the one it chose and why; the private ftrace
//! instance is gone after success, Ctrl-C and SIGTERM, and after SIGKILL the
//! next traced run and `clean` remove it; `run --explain` cuts a stream per side.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::run_json;

/// Root, on a kernel whose tracing answers (else the reason is printed).
fn root() -> bool {
    common::can_trace()
}

/// tracefs's instances directory, where it is mounted (else the test skips).
fn instances() -> Option<PathBuf> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .map(|d| Path::new(d).join("instances"))
        .find(|p| p.is_dir())
}

/// The instances of process `pid`.
fn of(dir: &Path, pid: u32) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!("ipcperf-{pid}-")))
        .collect()
}

fn explained(tracer: &str) -> serde_json::Value {
    let j = run_json(&[
        "latency",
        "pipe",
        "--pin",
        "0,1",
        "--explain",
        "-n",
        "2000",
        "-r",
        "1",
        "--tracer",
        tracer,
    ]);
    let c = &j["cases"][0];
    assert_eq!(c["status"], "ok", "{c}");
    assert!(c["options"]["explain_not_traced"].is_null(), "{c}");
    c["explain"].clone()
}

#[test]
fn each_tracer_traces_and_names_itself() {
    if !root() || instances().is_none() {
        return;
    }
    for t in ["perf", "tracefs"] {
        let x = explained(t);
        assert_eq!(x["tracer"], t, "{x}");
        assert_eq!(x["tracer_reason"], format!("--tracer {t}"), "{x}");
        assert_eq!(x["round_trips"], 2000, "{x}");
        assert_eq!(x["sum_median_ns"], x["traced_median_ns"], "{x}");
        let shares: f64 = x["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["share"].as_f64().unwrap())
            .sum();
        assert!((shares - 1.0).abs() < 1e-6, "{t}: {x}");
        if t == "tracefs" && x["lost_events"] == 0 {
            // A server woken by an IPI is woken in interrupt context, whose
            // sched_wakeup the kernel writes on any CPU, and an instance with
            // room loses none. One woken while its CPU polls in idle (haltpoll's
            // poll window, --idle poll) needs no IPI: the idle task wakes it in
            // task context, which some kernels (6.18 here) do not write on a
            // secondary CPU. How many wake-ups find the CPU polling depends on
            // the machine's idle state and load (96% seen under CI's load here,
            // 99-100% in bench/explain-tracers.sh on a quiet machine), so the
            // test asserts that most are seen, where perf saw none.
            if let Some(seen) = x["server_wakeup_seen_share"].as_f64() {
                assert!(seen > 0.5, "{x}");
            }
        }
    }
    let x = explained("auto");
    assert!(
        matches!(x["tracer"].as_str(), Some("perf" | "tracefs")),
        "{x}"
    );
    let why = x["tracer_reason"].as_str().unwrap();
    assert!(why.contains("probe") || why.contains("cannot run"), "{why}");
}

fn spawn_traced(tmp: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_ipcperf"))
        .args([
            "latency",
            "pipe",
            "unix",
            "tcp",
            "--pin",
            "0,1",
            "--explain",
        ])
        .args(["-n", "2000", "-r", "5", "--no-save", "--tracer", "tracefs"])
        .env("TMPDIR", tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Wait until `f` holds (10 s at most).
fn until(what: &str, f: impl Fn() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < Duration::from_secs(10), "{what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn the_instance_goes_on_ctrl_c_and_sigterm_and_after_sigkill() {
    let Some(dir) = instances() else {
        eprintln!(
            "skipped: tracefs is not mounted (as root: mount -t tracefs nodev /sys/kernel/tracing)"
        );
        return;
    };
    if !root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for sig in ["INT", "TERM"] {
        let mut child = spawn_traced(tmp.path());
        let pid = child.id();
        until("an instance appears", || !of(&dir, pid).is_empty());
        Command::new("kill")
            .args([&format!("-{sig}"), &pid.to_string()])
            .status()
            .unwrap();
        let _ = child.wait();
        assert!(of(&dir, pid).is_empty(), "SIG{sig}: {:?}", of(&dir, pid));
    }
    // SIGKILL leaves it; the next traced run sweeps it.
    let mut child = spawn_traced(tmp.path());
    let pid = child.id();
    until("an instance appears", || !of(&dir, pid).is_empty());
    let _ = child.kill();
    let _ = child.wait();
    assert!(!of(&dir, pid).is_empty(), "SIGKILL cannot be caught");
    explained("tracefs");
    assert!(of(&dir, pid).is_empty(), "{:?}", of(&dir, pid));
}

#[test]
fn clean_removes_a_dead_runs_instance_only() {
    let Some(dir) = instances() else {
        eprintln!(
            "skipped: tracefs is not mounted (as root: mount -t tracefs nodev /sys/kernel/tracing)"
        );
        return;
    };
    if !root() {
        return;
    }
    // A pid above pid_max is never alive; a name not ours is never touched.
    let dead = dir.join("ipcperf-99999998-0-trace");
    let theirs = dir.join("someone-elses-trace");
    std::fs::create_dir(&dead).unwrap();
    std::fs::create_dir(&theirs).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
        .arg("clean")
        .output()
        .unwrap();
    let kept = theirs.is_dir();
    let _ = std::fs::remove_dir(&theirs);
    assert!(out.status.success(), "{out:?}");
    assert!(!dead.exists(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(kept, "clean removed an instance not ours");
}

/// `run --explain`: a stream's traced series cut per side, each side's parts
/// summing to the block time; single mode has no other side and says so;
/// fan-out is refused.
#[test]
fn a_stream_is_explained_per_side_and_block() {
    // Single mode is refused before any tracing, on any machine.
    let j = run_json(&[
        "run",
        "pipe",
        "-s",
        "64k",
        "--mode",
        "single",
        "--explain",
        "-d",
        "50ms",
        "-r",
        "1",
    ]);
    let c = &j["cases"][0];
    let why = c["options"]["explain_not_traced"]
        .as_str()
        .unwrap_or_default();
    assert!(why.contains("no other side"), "{c}");
    let out = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
        .args([
            "run",
            "pipe",
            "--subscribers",
            "2",
            "--explain",
            "--no-save",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    if !root() {
        return;
    }
    let j = run_json(&[
        "run",
        "pipe",
        "-s",
        "64k",
        "--pin",
        "0,1",
        "--explain",
        "-d",
        "100ms",
        "-r",
        "1",
    ]);
    let c = &j["cases"][0];
    assert!(c["options"]["explain_not_traced"].is_null(), "{c}");
    let x = &c["explain"];
    assert!(x["round_trips"].as_u64().unwrap() > 0, "{x}");
    let parts = x["parts"].as_array().unwrap();
    for side in ["write", "read"] {
        let share: f64 = parts
            .iter()
            // (write_… and writer_outside; read_… and reader_outside)
            .filter(|p| p["name"].as_str().unwrap().starts_with(side))
            .map(|p| p["share"].as_f64().unwrap())
            .sum();
        assert!((share - 1.0).abs() < 0.02, "{side}: {share}: {x}");
    }
    let (sum, traced) = (
        x["sum_median_ns"].as_f64().unwrap(),
        x["traced_median_ns"].as_f64().unwrap(),
    );
    assert!((sum / traced - 1.0).abs() < 0.02, "{x}");
    // The copy is there: each side spends time running in its calls.
    assert!(parts.iter().any(|p| p["name"] == "write_running"), "{x}");
    assert!(parts.iter().any(|p| p["name"] == "read_running"), "{x}");
}

/// `--tracer` belongs to the commands that explain; another refuses it as bad input.
#[test]
fn only_the_commands_that_explain_take_a_tracer() {
    for args in [
        &["clean", "--tracer", "perf"][..],
        &["history", "--tracer", "tracefs"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
        .args(["latency", "--tracer", "ftrace"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    for cmd in ["run", "latency", "matrix", "sync"] {
        let out = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
            .args([cmd, "--help"])
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("--tracer"),
            "{cmd} --help"
        );
    }
}
