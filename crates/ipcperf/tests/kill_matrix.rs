//! The kill matrix: every mechanism in every mode it has, and every sync primitive
//! with set/clear (its waits untimed, `--untimed`), each killed three ways
//! mid-series — SIGINT to ipcperf, SIGKILL to the peer process, SIGKILL to ipcperf
//! then `ipcperf clean`. Each must end (or be cleaned) within 2 s, say why, and
//! leave no named object, directory or process behind.
//!
//! The cases run a few at a time. `clean` removes every dead run's orphans, so a
//! case that checks what its own dead run left holds a read lock while it looks,
//! and `clean` runs under the write lock.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ipcperf");

static CLEAN: RwLock<()> = RwLock::new(());

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kill {
    Interrupt,
    PeerKilled,
    MainKilledThenClean,
    /// The peer killed during round trips (`latency`): a mechanism may set
    /// round trips up apart from streams (ZeroMQ's REQ/REP, gRPC's unary calls).
    PeerKilledInRoundTrips,
}

/// The mechanisms, their modes, and the arguments of a long series of each.
fn matrix() -> Vec<(&'static str, &'static str, Kill)> {
    // Every registered mechanism in every mode it declares: a new mechanism is
    // in the matrix from its registry line on.
    let mut v = Vec::new();
    for info in ipcperf_core::mechanism::MechanismKind::INFOS {
        for mode in info.modes {
            let mode = mode.name();
            v.push((info.name, mode, Kill::Interrupt));
            v.push((info.name, mode, Kill::MainKilledThenClean));
            if mode == "processes" {
                v.push((info.name, mode, Kill::PeerKilled));
                // eventfd and signal run as round trips in every row already.
                if info.kind.round_trip().is_some() && !matches!(info.name, "eventfd" | "signal") {
                    v.push((info.name, mode, Kill::PeerKilledInRoundTrips));
                }
            }
        }
    }
    assert!(
        v.len() > 50,
        "the registry lists too few mechanisms: {}",
        v.len()
    );
    // Every sync primitive, its waits untimed: where a token crosses (set/clear), a
    // waiter with no timeout armed must still end within 2 s when its other side
    // is killed.
    let before = v.len();
    for p in ipcperf_core::sync::PRIMITIVES {
        // Leaked on purpose: a name that lives as long as the test.
        let name: &'static str = Box::leak(format!("sync:{}", p.name).into_boxed_str());
        if p.no_set_clear.is_some() {
            // A lock only its owner gives back (mutex, flock, fcntl): request/release
            // in one thread, no partner; interrupted or killed mid-series.
            v.push((name, "threads", Kill::Interrupt));
            v.push((name, "threads", Kill::MainKilledThenClean));
            continue;
        }
        for mode in ["threads", "processes"] {
            v.push((name, mode, Kill::Interrupt));
            v.push((name, mode, Kill::MainKilledThenClean));
            if mode == "processes" {
                v.push((name, mode, Kill::PeerKilled));
            }
        }
    }
    assert!(
        v.len() - before >= 30,
        "too few sync rows: {}",
        v.len() - before
    );
    v
}

/// A sync case's series: long enough that the kill, 0.4 s after the set/clear
/// partner appears, lands in set/clear.
const SYNC_SERIES: &str = "1500ms";

/// Each case's series: a count, not a duration. A duration's series is sized
/// from the warm-up's rate, and a warm-up stalled on a loaded machine (the cases
/// run a few at a time on CI's 2 CPUs) can size a "30 s" series to a fraction
/// of that: the likely way one SIGINT case once found its run over (status 0,
/// the end-of-run warnings on stderr). A count cannot shrink: 60M units are
/// seconds of work at the fastest (memcpy at 4 KiB, ~3 s; 64 B shm round
/// trips, ~8 s), far past the kill at 0.4 s.
const LONG: &str = "60000000";

fn start(mech: &str, mode: &str, kill: Kill, tmp: &Path) -> Child {
    let mut c = Command::new(BIN);
    if let Some(prim) = mech.strip_prefix("sync:") {
        c.args(["sync", prim, "--untimed", "--duration", SYNC_SERIES])
            .args(["--latency-samples", "0"]);
    } else if kill == Kill::PeerKilledInRoundTrips {
        c.args(["latency", mech, "--count", LONG]);
        match mech {
            "eventfd" => c.args(["--sizes", "8"]),
            "signal" => c.args(["--sizes", "4"]),
            _ => c.args(["--sizes", "64"]),
        };
    } else {
        match mech {
            // Latency only: the sizes they carry.
            "eventfd" => c.args(["latency", mech, "--sizes", "8", "--count", LONG]),
            "signal" => c.args(["latency", mech, "--sizes", "4", "--count", LONG]),
            // Everything written before the reader starts: long but small.
            "file" => c.args(["run", mech, "--sizes", "1", "--count", "50000000"]),
            "vmsplice" => c.args(["run", mech, "--no-touch", "--sizes", "4k", "--count", LONG]),
            _ => c.args(["run", mech, "--sizes", "4k", "--count", LONG]),
        };
    }
    c.args(["--mode", mode, "--repeat", "1", "--no-save"])
        .env("TMPDIR", tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Whether process `pid` runs a peer thread now.
fn has_peer_thread(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|t| {
            std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == "ipcperf-peer")
        })
}

fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect()
}

/// Gone, or a zombie nobody reaped yet.
fn gone(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit_once(')')
                .is_none_or(|(_, r)| r.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

fn wait_exit(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return Some(st);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Every named object or directory of the runs of `pids` still here.
fn leftovers(pids: &[u32], tmp: &Path) -> Vec<String> {
    let prefixes: Vec<String> = pids.iter().map(|p| format!("ipcperf-{p}-")).collect();
    let ours = |name: &str| {
        let n = name.trim_start_matches('/');
        let n = n.strip_prefix("sem.").unwrap_or(n);
        prefixes.iter().any(|p| n.starts_with(p.as_str()))
    };
    let mut left = Vec::new();
    for dir in [tmp, Path::new("/dev/shm")] {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if dir == tmp || ours(&n) {
                left.push(e.path().display().to_string());
            }
        }
    }
    for q in ipcperf_sys::sysv_msg::list() {
        if ipcperf_sys::sysv_msg::owner_of_key(q.key).is_some_and(|p| pids.contains(&(p as u32))) {
            left.push(format!("SysV queue {}", q.id));
        }
    }
    for (key, id, _) in ipcperf_sys::sem::sysv_sem_list() {
        if ipcperf_sys::sem::sem_owner_of_key(key).is_some_and(|p| pids.contains(&(p as u32))) {
            left.push(format!("SysV semaphore set {id}"));
        }
    }
    for n in ipcperf_sys::mqueue::list().unwrap_or_default() {
        if ours(&n) {
            left.push(format!("POSIX queue {n}"));
        }
    }
    for &p in pids {
        if !gone(p) {
            left.push(format!("process {p}"));
        }
    }
    left
}

/// Run one case; None when it held, else what went wrong.
fn one(mech: &str, mode: &str, kill: Kill) -> Option<String> {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = start(mech, mode, kill, tmp.path());
    let pid = child.id();
    // Into the timed series: the peer process (when there is one) is up, then a bit.
    let t0 = Instant::now();
    let mut peer = None;
    if mode == "processes" {
        while peer.is_none() && t0.elapsed() < Duration::from_secs(10) {
            peer = children(pid).first().copied();
            std::thread::sleep(Duration::from_millis(10));
        }
        if peer.is_none() {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            return Some(format!(
                "no peer process appeared; {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    // A sync case in threads mode has no peer process: its set/clear partner is
    // a thread (`ipcperf-peer`), started once request/release is over.
    let partner = mech.strip_prefix("sync:").is_some_and(|p| {
        ipcperf_core::sync::PRIMITIVES
            .iter()
            .any(|i| i.name == p && i.no_set_clear.is_none())
    });
    if partner && mode == "threads" {
        while !has_peer_thread(pid) && t0.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    std::thread::sleep(Duration::from_millis(400));
    if let Ok(Some(st)) = child.try_wait() {
        let mut err = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
        return Some(format!("ended before the kill ({st}): {err}"));
    }
    let pids: Vec<u32> = std::iter::once(pid).chain(peer).collect();
    let _look = CLEAN.read().unwrap_or_else(|p| p.into_inner());
    let killed = Instant::now();
    match kill {
        Kill::Interrupt => ipcperf_sys::signal::interrupt(pid as i32),
        Kill::PeerKilled | Kill::PeerKilledInRoundTrips => {
            ipcperf_sys::signal::kill(peer.unwrap() as i32)
        }
        Kill::MainKilledThenClean => ipcperf_sys::signal::kill(pid as i32),
    }
    let Some(st) = wait_exit(&mut child, Duration::from_secs(5)) else {
        return Some("did not exit within 5 s".into());
    };
    let took = killed.elapsed();
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    if took > Duration::from_secs(2) {
        return Some(format!("took {took:?} to end; stderr: {err}"));
    }
    match kill {
        Kill::Interrupt => {
            if st.code() != Some(130) || !err.contains("interrupted by SIGINT") {
                return Some(format!("SIGINT: {st}, stderr: {err}"));
            }
        }
        Kill::PeerKilled | Kill::PeerKilledInRoundTrips => {
            if st.code() != Some(1) || !err.contains("SIGKILL") {
                return Some(format!("peer SIGKILL: {st}, stderr: {err}"));
            }
        }
        Kill::MainKilledThenClean => {
            // The peer dies with its parent.
            let t = Instant::now();
            while !pids.iter().all(|&p| gone(p)) && t.elapsed() < Duration::from_secs(2) {
                std::thread::sleep(Duration::from_millis(10));
            }
            drop(_look);
            let _w = CLEAN.write().unwrap_or_else(|p| p.into_inner());
            let out = Command::new(BIN)
                .arg("clean")
                .env("TMPDIR", tmp.path())
                .output()
                .unwrap();
            if !out.status.success() {
                return Some(format!("clean failed: {out:?}"));
            }
            let left = leftovers(&pids, tmp.path());
            return (!left.is_empty()).then(|| format!("left after clean: {left:?}"));
        }
    }
    // Give a reaped peer's zombie a moment to go.
    let t = Instant::now();
    let mut left = leftovers(&pids, tmp.path());
    while !left.is_empty() && t.elapsed() < Duration::from_millis(500) {
        std::thread::sleep(Duration::from_millis(20));
        left = leftovers(&pids, tmp.path());
    }
    (!left.is_empty()).then(|| format!("left behind: {left:?}"))
}

#[test]
fn every_mechanism_and_mode_killed_three_ways_ends_in_2s_and_leaves_nothing() {
    // IPCPERF_KILL_ONLY=posix-mq runs one mechanism's cases (to chase a failure).
    let only = std::env::var("IPCPERF_KILL_ONLY").ok();
    let mut m = matrix();
    m.retain(|(mech, _, _)| only.as_deref().is_none_or(|o| o == *mech));
    let cases = Mutex::new(m);
    let total = cases.lock().unwrap().len();
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| loop {
                let Some((m, mode, kill)) = cases.lock().unwrap().pop() else {
                    return;
                };
                if let Some(why) = one(m, mode, kill) {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("{m} {mode} {kill:?}: {why}"));
                }
            });
        }
    });
    let f = failures.into_inner().unwrap();
    assert!(
        f.is_empty(),
        "{} of {total} cases failed:\n{}",
        f.len(),
        f.join("\n")
    );
    eprintln!("{total} kill cases held");
}
