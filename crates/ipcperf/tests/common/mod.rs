//! Helpers the test binaries share: the binary on a given history, or a run's
//! JSON. Each binary uses some of them.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// `ipcperf <subcommand> --db <db> <args...>`, with the user's history settings unset.
pub fn cmd(db: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ipcperf"));
    c.env_remove("IPCPERF_DB")
        .env_remove("IPCPERF_NO_SAVE")
        .arg(args[0])
        .arg("--db")
        .arg(db)
        .args(&args[1..]);
    c
}

/// Its standard output; the command must succeed.
pub fn stdout(c: &mut Command) -> String {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{c:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `ipcperf <args...> --format json`, kept out of the history; it must succeed.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
        .args(args)
        .args(["--format", "json"])
        .env("IPCPERF_NO_SAVE", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
