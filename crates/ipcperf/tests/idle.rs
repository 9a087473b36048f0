//! The idle state as a variable: kept in every run's machine record as sysfs
//! says it, `--idle poll` refused in one line where it cannot be set, and the
//! latency request gone once the run ends, however it ends.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

const BIN: &str = env!("CARGO_BIN_EXE_ipcperf");
const DEVICE: &str = "/dev/cpu_dma_latency";

fn root() -> bool {
    let uid = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
        .unwrap();
    uid == "0"
}

fn sysfs(p: &str) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The cpuidle driver, where one is (not "none").
fn driver() -> Option<String> {
    sysfs("/sys/devices/system/cpu/cpuidle/current_driver").filter(|d| d != "none")
}

/// Whether an idle state deeper than polling is there for a request to forbid.
fn request_matters() -> bool {
    driver().is_some()
        && (0..)
            .map_while(|i| {
                sysfs(&format!(
                    "/sys/devices/system/cpu/cpu0/cpuidle/state{i}/name"
                ))
            })
            .any(|n| !n.eq_ignore_ascii_case("poll"))
}

/// The request in force, µs, as the device reads.
fn in_force() -> i32 {
    use std::io::Read;
    let mut b = [0u8; 4];
    std::fs::File::open(DEVICE)
        .unwrap()
        .read_exact(&mut b)
        .unwrap();
    i32::from_ne_bytes(b)
}

/// The processes holding the device open, with their command lines: who to
/// name when a request outlives its run.
fn holders() -> Vec<String> {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .flatten()
        .filter(|p| p.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter(|p| {
            std::fs::read_dir(p.path().join("fd")).is_ok_and(|fds| {
                fds.flatten().any(|fd| {
                    std::fs::read_link(fd.path()).is_ok_and(|l| l == std::path::Path::new(DEVICE))
                })
            })
        })
        .map(|p| {
            let cmd = std::fs::read(p.path().join("cmdline")).unwrap_or_default();
            format!(
                "{} {}",
                p.file_name().to_string_lossy(),
                String::from_utf8_lossy(&cmd).replace('\0', " ")
            )
        })
        .collect()
}

/// A run's machine record holds the idle state as sysfs says it: the driver
/// (or none), cpu0's states by name, haltpoll's parameters where the module is.
#[test]
fn every_run_keeps_the_idle_state_as_sysfs_says_it() {
    let v = common::run_json(&[
        "run", "pipe", "--sizes", "4k", "-n", "50", "-r", "1", "--pin", "0,0",
    ]);
    let idle = &v["machine"]["state"]["idle"];
    assert!(idle.is_object(), "{}", v["machine"]);
    assert_eq!(
        idle["driver"].as_str().map(str::to_string),
        driver(),
        "{idle}"
    );
    let names: Vec<String> = (0..)
        .map_while(|i| {
            sysfs(&format!(
                "/sys/devices/system/cpu/cpu0/cpuidle/state{i}/name"
            ))
        })
        .collect();
    let kept: Vec<String> = idle["states"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| s["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(kept, names, "{idle}");
    if let Some(p) = sysfs("/sys/module/haltpoll/parameters/guest_halt_poll_ns") {
        assert_eq!(idle["haltpoll"]["guest_halt_poll_ns"], p.as_str(), "{idle}");
    }
    // And topology says it in words.
    let out = Command::new(BIN).arg("topology").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.trim_start().starts_with("idle: "));
    match driver() {
        Some(d) => assert!(line.is_some_and(|l| l.contains(&d)), "{text}"),
        None => assert!(
            line.is_some_and(|l| l.contains("no cpuidle driver")),
            "{text}"
        ),
    }
}

/// Without the rights to the device (or where no request would change
/// anything), `--idle poll` is one line and the bad-input code, before any
/// measuring; a value that is not one is refused the same way.
#[test]
fn idle_poll_without_rights_is_one_line_exit_2() {
    common::bad_input(&["latency", "pipe", "--idle", "fast"], "--idle");
    if !root() {
        println!("skipped the as-nobody half: not root, so setpriv cannot drop to nobody");
        return;
    }
    for cmd in [
        &["latency", "pipe"][..],
        &["sync", "futex"][..],
        &["run", "pipe"][..],
    ] {
        let out = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN])
            .args(cmd)
            .args(["--idle", "poll", "--no-save", "-d", "50ms"])
            .env_remove("IPCPERF_DB")
            .env("TMPDIR", "/tmp")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{cmd:?}: {err}");
        assert!(err.contains("--idle poll"), "{cmd:?}: {err}");
        if request_matters() {
            assert!(err.contains("permission denied"), "{cmd:?}: {err}");
        }
        assert!(out.stdout.is_empty(), "{cmd:?}");
    }
}

/// `--idle poll` holds the request at 0 while the series run, and the kernel
/// drops it when the run ends and when it is killed (SIGKILL): the device
/// reads what it read before, within the 2 s any dead peer is given. Not at
/// once: a kill that lands while the run is starting its peer leaves the
/// request in the forked child's copy of the descriptors until that child's
/// exec closes it (CI saw 0 read just after one such kill; who held it then
/// was not known, which is why a failure now names the holders).
#[test]
fn the_request_is_held_while_it_runs_and_gone_after_an_end_or_a_kill() {
    if !root() || !request_matters() {
        println!("skipped: needs root and a cpuidle state deeper than polling");
        return;
    }
    let before = in_force();
    if before == 0 {
        println!(
            "skipped: another process holds the request at 0 already ({:?}), so ours cannot be seen",
            holders()
        );
        return;
    }
    for kill in [false, true] {
        let mut child = Command::new(BIN)
            .args(["latency", "pipe", "--idle", "poll", "--no-save", "-q"])
            .args(["-d", if kill { "5s" } else { "300ms" }, "-r", "1"])
            .env_remove("IPCPERF_DB")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Held: the device reads 0 while the series runs.
        let t0 = Instant::now();
        let mut seen = false;
        while t0.elapsed() < Duration::from_secs(4) {
            if in_force() == 0 {
                seen = true;
                break;
            }
            if !kill && child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(seen, "the request was never 0 while it ran (kill: {kill})");
        if kill {
            child.kill().unwrap();
        }
        let status = child.wait().unwrap();
        if !kill {
            assert!(status.success(), "{status:?}");
        }
        // Released: the kernel drops it with the last descriptor.
        let t0 = Instant::now();
        while in_force() != before && t0.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(2));
        }
        assert_eq!(
            in_force(),
            before,
            "after the run (kill: {kill}), 2 s on; held by: {:?}",
            holders()
        );
    }
}
