//! `ipcperf clean` after a run killed with SIGKILL: its orphans go, a live
//! process's objects stay.

use std::process::Command;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ipcperf");

fn our_queues_of(pid: u32) -> Vec<i32> {
    ipcperf_sys::sysv_msg::list()
        .into_iter()
        .filter(|q| ipcperf_sys::sysv_msg::owner_of_key(q.key) == Some(pid as i32))
        .map(|q| q.id)
        .collect()
}

#[test]
fn clean_removes_the_orphans_of_a_killed_run_only() {
    let tmp = tempfile::tempdir().unwrap();
    // A live process's directory (ours): must survive.
    let live = tmp
        .path()
        .join(format!("ipcperf-{}-999-live", std::process::id()));
    std::fs::create_dir(&live).unwrap();
    // Someone else's directory: not ours by name, must survive.
    let other = tmp.path().join("other-1-x");
    std::fs::create_dir(&other).unwrap();

    // A directory of a run that is dead (a pid that has exited): must go.
    let mut gone = Command::new("true").spawn().unwrap();
    let dead_pid = gone.id();
    gone.wait().unwrap();
    let orphan_dir = tmp.path().join(format!("ipcperf-{dead_pid}-0-fifo"));
    std::fs::create_dir(&orphan_dir).unwrap();
    std::fs::write(orphan_dir.join("fifo"), b"").unwrap();

    let mut child = Command::new(BIN)
        .args(["latency", "sysv-msg", "fifo", "-d", "20s", "-f", "json"])
        .env("TMPDIR", tmp.path())
        .env("IPCPERF_NO_SAVE", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until the run has made its objects (a SysV queue; then the FIFO dir).
    let deadline = Instant::now() + Duration::from_secs(10);
    while our_queues_of(pid).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!our_queues_of(pid).is_empty(), "the run made no SysV queue");
    ipcperf_sys::signal::kill(pid as i32);
    child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        !our_queues_of(pid).is_empty(),
        "SIGKILL leaves the queue behind"
    );

    let out = Command::new(BIN)
        .args(["clean"])
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("SysV message queue"), "{text}");
    assert!(our_queues_of(pid).is_empty(), "clean left the queue");
    assert!(!orphan_dir.exists(), "clean left a dead run's directory");
    assert!(live.exists(), "clean removed a live process's directory");
    assert!(other.exists(), "clean removed a directory that is not ours");
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!("ipcperf-{pid}-")))
        .collect();
    assert!(leftovers.is_empty(), "left: {leftovers:?}");
}
