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

/// Our POSIX queues of run `pid`; None when they cannot be listed here.
fn posix_queues_of(pid: u32) -> Option<Vec<String>> {
    let prefix = format!("/ipcperf-{pid}-");
    ipcperf_sys::mqueue::list().map(|v| v.into_iter().filter(|n| n.starts_with(&prefix)).collect())
}

fn wait_until(what: &str, f: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !f() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(f(), "{what}");
}

fn long_latency_run(mechs: &[&str], tmp: &std::path::Path) -> std::process::Child {
    Command::new(BIN)
        .arg("latency")
        .args(mechs)
        .args(["-d", "20s", "-f", "json"])
        .env("TMPDIR", tmp)
        .env("IPCPERF_NO_SAVE", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

// One test, one `clean`: two tests cleaning at once would take each other's orphans.
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
    // A file of the dead run (a killed `import -`'s copy of its stream): must
    // go; one of the live process: must stay.
    let orphan_file = tmp.path().join(format!("ipcperf-{dead_pid}-1-import-x1y2"));
    std::fs::write(&orphan_file, b"{").unwrap();
    let live_file = tmp
        .path()
        .join(format!("ipcperf-{}-998-import-x1y2", std::process::id()));
    std::fs::write(&live_file, b"{").unwrap();

    let mut child = long_latency_run(&["sysv-msg", "fifo"], tmp.path());
    let pid = child.id();
    // A second killed run, on a POSIX queue, where queues can be listed (root, or
    // an mqueue file system mounted).
    let can_list_mq = ipcperf_sys::mqueue::list().is_some();
    if !can_list_mq {
        eprintln!("POSIX queue part skipped: no mqueue file system, and none can be mounted here");
    }
    let mut mq_child = can_list_mq.then(|| long_latency_run(&["posix-mq"], tmp.path()));
    // Wait until the runs have made their objects.
    wait_until("the run made no SysV queue", || {
        !our_queues_of(pid).is_empty()
    });
    if let Some(c) = &mq_child {
        let p = c.id();
        wait_until("the run made no POSIX queue", || {
            !posix_queues_of(p).unwrap().is_empty()
        });
    }
    ipcperf_sys::signal::kill(pid as i32);
    child.wait().unwrap();
    let mq_pid = mq_child.as_mut().map(|c| {
        ipcperf_sys::signal::kill(c.id() as i32);
        c.wait().unwrap();
        c.id()
    });
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        !our_queues_of(pid).is_empty(),
        "SIGKILL leaves the queue behind"
    );
    if let Some(p) = mq_pid {
        assert!(
            !posix_queues_of(p).unwrap().is_empty(),
            "SIGKILL leaves the POSIX queue behind"
        );
    }

    let out = Command::new(BIN)
        .args(["clean"])
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("SysV message queue"), "{text}");
    assert!(our_queues_of(pid).is_empty(), "clean left the queue");
    if let Some(p) = mq_pid {
        assert!(text.contains("POSIX message queue"), "{text}");
        assert_eq!(
            posix_queues_of(p).unwrap(),
            Vec::<String>::new(),
            "clean left the POSIX queue"
        );
    }
    assert!(!orphan_dir.exists(), "clean left a dead run's directory");
    assert!(!orphan_file.exists(), "clean left a dead import's copy");
    assert!(live_file.exists(), "clean removed a live process's file");
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
