//! A run's peer killed mid-series is an error within 2 s, and Ctrl-C to
//! ipcperf alone (not its group) removes its objects and its peer: nothing is
//! left either way.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Children of `pid` (from /proc), to find the peer process.
fn children(pid: u32) -> Vec<u32> {
    let path = format!("/proc/{pid}/task/{pid}/children");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect()
}

fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(t) = f() {
            return t;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn wait_exit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("ipcperf did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn long_run(mech: &str, dir: &Path) -> Child {
    // A file series writes everything first: keep it long but small (1-byte writes,
    // ~50 MB), where a 30 s series of 64 KiB blocks would be tens of GB.
    let length: &[&str] = if mech == "file" {
        &["--sizes", "1", "--count", "50000000"]
    } else {
        &["--sizes", "64k", "--duration", "30s"]
    };
    let mut c = Command::new(env!("CARGO_BIN_EXE_ipcperf"));
    c.env("IPCPERF_NO_SAVE", "1")
        .args(["run", mech])
        .args(length)
        .args(["--repeat", "1"]);
    // --dir where the mechanism makes its objects there (pipe and tcp refuse it).
    if ["fifo", "unix", "file"].contains(&mech) {
        c.arg("--dir").arg(dir);
    }
    c.stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn killed_peer_is_an_error_within_2s_and_leaves_nothing() {
    for mech in ["pipe", "fifo", "unix", "tcp", "file"] {
        let dir = tempfile::tempdir().unwrap();
        let mut child = long_run(mech, dir.path());
        let peer = wait_for("the peer process", || children(child.id()).first().copied());
        // Let it get into the timed series.
        std::thread::sleep(Duration::from_millis(300));
        let killed = Instant::now();
        let _ = Command::new("kill")
            .args(["-9", &peer.to_string()])
            .status();
        let st = wait_exit(&mut child, Duration::from_secs(10));
        let took = killed.elapsed();
        let mut err = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert_eq!(
            st.code(),
            Some(1),
            "{mech}: exit 1 on failure; stderr {err}"
        );
        assert!(
            took < Duration::from_secs(2),
            "{mech}: took {took:?} to notice"
        );
        assert!(
            err.contains("SIGKILL"),
            "{mech}: names how the peer died: {err}"
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{mech}: named objects left behind"
        );
    }
}

#[test]
fn ctrl_c_removes_named_objects_and_the_peer() {
    for mech in ["fifo", "unix"] {
        let dir = tempfile::tempdir().unwrap();
        let mut child = long_run(mech, dir.path());
        let peer = wait_for("the peer process", || children(child.id()).first().copied());
        wait_for("the named object", || {
            (std::fs::read_dir(dir.path()).unwrap().count() > 0).then_some(())
        });
        std::thread::sleep(Duration::from_millis(200));
        let _ = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        let st = wait_exit(&mut child, Duration::from_secs(5));
        assert_eq!(st.code(), Some(130), "{mech}: 128 + SIGINT");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{mech}: objects left after Ctrl-C"
        );
        wait_for("the peer to be gone", || {
            (!Path::new(&format!("/proc/{peer}")).exists()
                || std::fs::read_to_string(format!("/proc/{peer}/stat"))
                    .map(|s| s.contains(") Z "))
                    .unwrap_or(true))
            .then_some(())
        });
    }
}
