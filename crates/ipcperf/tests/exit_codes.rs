//! Each outcome its own exit code (0 ok, 1 a case failed, 2 bad input, 3 a
//! regression called), what the plan already knows refused before anything is
//! measured, each command's --format help listing only what it takes, no read
//! making a history, and -q printing the results alone.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::cmd;

fn ipcperf() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ipcperf"));
    c.env_remove("IPCPERF_DB").env("IPCPERF_NO_SAVE", "1");
    c
}

#[test]
fn a_run_that_measured_everything_exits_0() {
    let out = ipcperf()
        .args(["latency", "pipe", "-n", "200", "-r", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

/// A case that failed while it ran (its peer killed): 1.
#[test]
fn a_case_that_failed_exits_1() {
    let child = ipcperf()
        .args([
            "run",
            "pipe",
            "--sizes",
            "64k",
            "--duration",
            "30s",
            "-r",
            "1",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let children = format!("/proc/{0}/task/{0}/children", child.id());
    let deadline = Instant::now() + Duration::from_secs(20);
    let peer = loop {
        let list = std::fs::read_to_string(&children).unwrap_or_default();
        if let Some(p) = list.split_whitespace().next() {
            break p.to_string();
        }
        assert!(Instant::now() < deadline, "no peer process");
        std::thread::sleep(Duration::from_millis(10));
    };
    std::thread::sleep(Duration::from_millis(300));
    Command::new("kill").args(["-9", &peer]).status().unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("FAILED"), "{err}");
}

/// What the plan already knows cannot run, for a mechanism the user named, is
/// bad input said before anything is measured: one line, nothing on stdout.
#[test]
fn what_the_plan_knows_is_refused_up_front_with_2() {
    for (args, why) in [
        (
            &["latency", "pipe", "eventfd", "--sizes", "64"][..],
            "8-byte counter",
        ),
        (&["latency", "eventfd", "--sizes", "64"][..], "--sizes 8"),
        (
            &["latency", "pipe", "--one-way", "--sizes", "4"][..],
            "no room",
        ),
        (
            &["latency", "signal", "--sizes", "8"][..],
            "at most 4 bytes",
        ),
        (&["run", "vmsplice", "--verify"][..], "--no-touch only"),
        (&["run", "eventfd"][..], "not a byte stream"),
    ] {
        let started = Instant::now();
        let out = ipcperf().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: a table was printed");
        let errors: Vec<_> = err.lines().filter(|l| l.contains("error")).collect();
        assert_eq!(errors.len(), 1, "{args:?}: {err}");
        assert!(errors[0].contains(why), "{args:?}: {err}");
        // No warning about the machine: those come only before a measurement.
        assert!(!err.contains("warning"), "{args:?}: {err}");
        assert!(started.elapsed() < Duration::from_secs(5), "{args:?}");
    }
    // A TMPDIR that is not a directory: one line before anything runs (every
    // case that makes a FIFO or a socket there used to fail on its own).
    let out = ipcperf()
        .args(["run", "pipe", "fifo", "unix", "-n", "50", "-r", "1"])
        .env("TMPDIR", "/nonexistent-ipcperf-tmp")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty(), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("TMPDIR=/nonexistent-ipcperf-tmp is not a directory"),
        "{err}"
    );
    // vmsplice with the payload left to ipcperf runs the one way it can.
    let out = ipcperf()
        .args(["run", "vmsplice", "--sizes", "64k", "-d", "20ms", "-r", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("vmsplice runs with --no-touch"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("no-touch"));
}

/// A regression called by `compare --fail-on-regression`: 3, apart from a failed
/// case's 1. B is A's own run with every series carrying a quarter of the bytes.
#[test]
fn a_regression_called_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let run = [
        "run", "pipe", "--sizes", "4k", "-d", "20ms", "-r", "5", "--format", "json",
    ];
    let out = cmd(&db, &run).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["started_ms"] = (v["started_ms"].as_u64().unwrap() + 1).into();
    for c in v["cases"].as_array_mut().unwrap() {
        for s in c["series"].as_array_mut().unwrap() {
            s["bytes"] = (s["bytes"].as_u64().unwrap() / 4).into();
        }
    }
    let json = dir.path().join("slower.json");
    std::fs::write(&json, serde_json::to_vec(&v).unwrap()).unwrap();
    // Through standard input (`… | ipcperf import -`), said as such.
    let out = assert_cmd::Command::from_std(cmd(&db, &["import", "-"]))
        .write_stdin(serde_json::to_vec(&v).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.starts_with("standard input: run from "), "{said}");
    // Bad input there is one line naming it; `-` twice is bad input.
    for (args, stdin, says) in [
        (
            &["import", "-"][..],
            "garbage",
            "standard input: not an ipcperf run record",
        ),
        (&["import", "-", "-"], "", "can be named once"),
    ] {
        let out = assert_cmd::Command::from_std(cmd(&db, args))
            .write_stdin(stdin)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
    // The same run again (said of standard input, not of the spool's path), and
    // a spool that cannot be made (exit 1: not the input's fault).
    let again = assert_cmd::Command::from_std(cmd(&db, &["import", "-"]))
        .write_stdin(serde_json::to_vec(&v).unwrap())
        .output()
        .unwrap();
    let mut no_tmp = cmd(&db, &["import", "-"]);
    no_tmp.env("TMPDIR", dir.path().join("gone"));
    let no_tmp = assert_cmd::Command::from_std(no_tmp)
        .write_stdin(serde_json::to_vec(&v).unwrap())
        .output()
        .unwrap();
    for (out, code, says) in [
        (again, 2, "standard input: this run is already kept as run"),
        (no_tmp, 1, "standard input: cannot make its copy: "),
    ] {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{err}");
        assert!(err.contains(says) && err.lines().count() == 1, "{err}");
    }
    let gate = |a: &str, b: &str| {
        cmd(&db, &["compare", a, b, "--fail-on-regression"])
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(gate("1", "2"), Some(3));
    // The other way B is faster: nothing to gate.
    assert_eq!(gate("2", "1"), Some(0));
}

/// The `--format` values a command's help lists (its "Possible values").
fn formats_listed(command: &str) -> Vec<String> {
    let out = ipcperf().args([command, "--help"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let start = help
        .find("--format <FORMAT>")
        .unwrap_or_else(|| panic!("{command}"));
    help[start..]
        .lines()
        .skip_while(|l| !l.contains("Possible values"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.trim_start().starts_with("- "))
        .map(|l| {
            let v = l.trim_start().trim_start_matches("- ");
            v.split([':', ' ']).next().unwrap().to_string()
        })
        .collect()
}

/// Each command's help lists the formats it takes, and takes every one listed:
/// what is not a run's figures has no metrics formats.
#[test]
fn each_help_lists_only_the_formats_its_command_takes() {
    let documents = ["table", "json", "csv", "markdown"];
    let metrics = ["openmetrics", "prometheus"];
    for c in [
        "advise", "compare", "fleet", "history", "list", "pattern", "topology", "trend",
    ] {
        assert_eq!(formats_listed(c), documents, "{c}");
        for m in metrics {
            let out = ipcperf().args([c, "--format", m]).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{c} --format {m}");
        }
    }
    for c in [
        "run", "latency", "sync", "replay", "matrix", "pipeline", "show", "export",
    ] {
        let listed = formats_listed(c);
        for f in documents.iter().chain(&metrics) {
            assert!(listed.iter().any(|l| l == f), "{c}: {listed:?}");
        }
    }
}

/// A read names a history that must be there: a missing file is bad input,
/// and no empty history is made in its place (by --db or IPCPERF_DB).
#[test]
fn no_read_creates_a_history() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("mistyped.db");
    for args in [
        &["history"][..],
        &["show", "last"][..],
        &["show"][..],
        &["report", "-o", "r.html"][..],
        &["compare", "1", "2"][..],
        &["export", "last"][..],
        &["report", "last", "-o", "r.html"][..],
        &["plot", "last", "-o", "p.png"][..],
        &["trend", "pipe"][..],
        &["fleet"][..],
    ] {
        for by_env in [false, true] {
            let mut c = ipcperf();
            c.current_dir(dir.path()).args(args);
            if by_env {
                c.env("IPCPERF_DB", &missing);
            } else {
                c.arg("--db").arg(&missing);
            }
            let out = c.output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains("no run history at"), "{args:?}: {err}");
            // One line, as the words were meant: no run of blanks left by a
            // string broken across source lines.
            assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
            assert!(!err.contains("  "), "{args:?}: a run of blanks in {err:?}");
            assert!(!missing.exists(), "{args:?} made {}", missing.display());
        }
    }
    // Nor the default's directory: a read under a mistyped HOME left
    // HOME/.local/share/ipcperf behind (and the next test that took that
    // path for one that is not there found it).
    let home = dir.path().join("no-such-home");
    let out = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
        .arg("history")
        .env("HOME", &home)
        .env_remove("XDG_DATA_HOME")
        .env_remove("IPCPERF_DB")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(!home.exists(), "a read made {}", home.display());
}

/// --db naming what cannot be a history (a directory, a file of something
/// else, a device, a FIFO) is bad input, said in one line before anything is
/// measured, and the file is left as it was (it was 1, in SQLite's words:
/// "cannot set WAL mode: file is not a database").
/// A missing argument's usage line is the command's, whether the history is
/// named by `IPCPERF_DB` or not: an option set from the environment is not one
/// the command needs (it read "usage: ipcperf compare --db <PATH|URL> <A> <B>").
#[test]
fn a_history_named_in_the_environment_is_not_in_the_usage_line() {
    let dir = tempfile::tempdir().unwrap();
    for db in [None, Some(dir.path().join("h.db"))] {
        let mut c = ipcperf();
        if let Some(db) = &db {
            c.env("IPCPERF_DB", db);
        }
        let out = c.args(["compare", "1"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("(usage: ipcperf compare <A> <B>; see --help)"),
            "{db:?}: {err}"
        );
    }
    // Typed on the command line, it stays.
    let out = ipcperf()
        .args(["compare", "--db"])
        .arg(dir.path().join("h.db"))
        .arg("1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("(usage: ipcperf compare --db <PATH|URL> <A> <B>; see --help)"),
        "{err}"
    );
}

#[test]
fn a_db_that_cannot_be_a_history_is_refused_with_2() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "my notes\n").unwrap();
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    let mut paths = vec![
        (dir.path().to_path_buf(), "a directory"),
        (text.clone(), "not a run history"),
        ("/dev/null".into(), "not a regular file"),
    ];
    if made.is_ok_and(|s| s.success()) {
        paths.push((fifo, "not a regular file"));
    } else {
        eprintln!("skipped the FIFO: mkfifo did not make one");
    }
    for (db, why) in paths {
        for args in [
            &["history"][..],
            &["run", "pipe", "--sizes", "64", "-d", "10ms", "-r", "1"][..],
        ] {
            let out = cmd(&db, args).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{db:?} {args:?}: {err}");
            assert!(err.contains(why), "{db:?} {args:?}: {err}");
            assert!(out.stdout.is_empty(), "{db:?} {args:?}: measured anyway");
        }
    }
    assert_eq!(std::fs::read_to_string(&text).unwrap(), "my notes\n");
}

/// -q: the results alone, no banner naming the machine above them.
#[test]
fn quiet_prints_the_tables_alone() {
    let out = ipcperf()
        .args(["-q", "latency", "pipe", "-n", "200", "-r", "1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("Round-trip latency"), "{text}");
    assert!(!text.contains("ipcperf 0."), "{text}");
    let out = ipcperf()
        .args(["latency", "pipe", "-n", "200", "-r", "1"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("ipcperf "));
}

/// `list shm` names every way the ring waits, as `--wake` takes them.
#[test]
fn list_shm_names_every_wake() {
    let out = ipcperf().args(["list", "shm"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let help = ipcperf().args(["latency", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for w in ["spin", "futex", "eventfd", "sem", "adaptive"] {
        assert!(text.contains(w), "list shm leaves out {w}: {text}");
        assert!(help.contains(w), "--wake's help leaves out {w}");
    }
}

/// `advise --format`: its ranking as JSON (figures, ranges, tie groups) and
/// CSV (a row a candidate); the metrics formats refused before measuring.
#[test]
fn advise_answers_in_json_and_csv() {
    // One wait, so a row a mechanism (by default each is ranked per wait).
    let args = [
        "advise",
        "--only",
        "pipe,unix",
        "--wait",
        "block",
        "-d",
        "20ms",
        "--format",
    ];
    let out = ipcperf().args(args).arg("json").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ranked = j["ranked"].as_array().unwrap();
    assert_eq!(ranked.len(), 2, "{j}");
    for (i, r) in ranked.iter().enumerate() {
        assert_eq!(r["rank"], i + 1);
        assert!(r["tie_with_rank"].as_u64().unwrap() <= r["rank"].as_u64().unwrap());
        assert!(r["low"].as_f64().unwrap() <= r["value"].as_f64().unwrap());
        assert!(r["value"].as_f64().unwrap() <= r["high"].as_f64().unwrap());
    }
    assert!(j["first_choice"]
        .as_str()
        .unwrap()
        .starts_with(ranked[0]["mechanism"].as_str().unwrap()));
    let out = ipcperf().args(args).arg("csv").output().unwrap();
    let csv = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv.starts_with("rank,mechanism,"), "{csv}");
    let out = ipcperf().args(args).arg("prometheus").output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty());
}

/// `--color always|never|auto`: colour in warnings and errors when asked,
/// never when not, and by default only on a terminal (these pipes are none).
#[test]
fn colour_is_asked_for_or_left_out() {
    let stderr = |color: Option<&str>| {
        let mut c = ipcperf();
        if let Some(w) = color {
            c.args(["--color", w]);
        }
        let out = c
            .args(["latency", "eventfd", "--sizes", "64"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8(out.stderr).unwrap()
    };
    assert!(stderr(Some("always")).contains("\x1b[31merror:\x1b[0m"));
    for w in [Some("never"), Some("auto"), None] {
        assert!(!stderr(w).contains('\x1b'), "{w:?}");
    }
    let out = ipcperf()
        .args(["--color", "sometimes", "list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A result that cannot be written (standard output a full disk: /dev/full) is
/// a failure said, exit 1: `show`, `export` as csv, markdown or openmetrics,
/// and a run's closing table left it unsaid and exited 0 (the file empty, the
/// script none the wiser). A reader that went away (`| head`) is still no error.
/// The error's errno by name: "(ENOSPC)", where std said "(os error 28)".
#[test]
fn a_result_that_cannot_be_written_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let with_db = |args: &[&str]| {
        let mut c = ipcperf();
        c.env_remove("IPCPERF_NO_SAVE")
            .env("IPCPERF_DB", &db)
            .args(args);
        c
    };
    let out = with_db(&[
        "run", "pipe", "-s", "64", "-n", "200", "-r", "1", "--format", "json",
    ])
    .stdout(full())
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot write to standard output") && err.contains("the run is kept"),
        "{err}"
    );
    for args in [&["--help"][..], &["--version"], &["run", "--help"]] {
        let out = ipcperf().args(args).stdout(full()).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
    }
    for args in [
        &["show", "last"][..],
        &["show", "last", "--format", "csv"],
        &["export", "last", "--format", "csv"],
        &["export", "last", "--format", "markdown"],
        &["export", "last", "--format", "openmetrics"],
        &["export", "last", "--format", "json"],
    ] {
        let out = with_db(args).stdout(full()).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        // errno named as a system call's error is, not std's "(os error 28)".
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("cannot write") && err.contains("No space left on device (ENOSPC)"),
            "{args:?}: {err}"
        );
        // The reader takes one line and goes.
        let mut c = with_db(args);
        let mut child = c.stdout(Stdio::piped()).spawn().unwrap();
        drop(child.stdout.take());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{args:?} into a closed pipe");
    }
}

/// A picture that cannot be written once the measuring is done (`-o` a link to
/// /dev/full: a disk that filled) is a failure said after the tables, exit 1;
/// the tables are printed and the run is kept complete. matrix and replay
/// returned before both (the run "incomplete (killed or running)"), topology
/// --measure kept nothing.
#[test]
fn a_picture_that_cannot_be_written_loses_neither_tables_nor_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    for (args, ext) in [
        (&["matrix", "pipe", "-n", "200"][..], "svg"),
        (&["matrix", "pipe", "-n", "200"], "png"),
        (&["topology", "--measure"], "png"),
        (
            &[
                "replay",
                "--size-dist",
                "fixed:64",
                "--gaps",
                "poisson:1k",
                "--loop",
                "200ms",
                "unix",
            ],
            "png",
        ),
    ] {
        let full = dir.path().join(format!("full-{}.{ext}", args[0]));
        let _ = std::fs::remove_file(&full);
        std::os::unix::fs::symlink("/dev/full", &full).unwrap();
        let out = ipcperf()
            .env_remove("IPCPERF_NO_SAVE")
            .env("IPCPERF_DB", &db)
            .args(args)
            .arg("-o")
            .arg(&full)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("needs two CPUs") || err.contains("at least two CPUs") {
            eprintln!("skipped {args:?}: one CPU here");
            continue;
        }
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("No space left on device"), "{args:?}: {err}");
        // Said as the I/O error it is, not the drawing library's debug text
        // ("backend error: Drawing backend error: ImageError(IoError(...))").
        assert!(
            err.contains("cannot write") && !err.contains("backend error"),
            "{args:?}: {err}"
        );
        let saved = err.find("saved as run").expect("the run is kept");
        assert!(saved < err.find("error").unwrap(), "said after: {err}");
        assert!(!out.stdout.is_empty(), "{args:?}: the tables are printed");
        let h = ipcperf()
            .env("IPCPERF_DB", &db)
            .args(["history", "--format", "csv"])
            .output()
            .unwrap();
        let last = String::from_utf8_lossy(&h.stdout)
            .lines()
            .last()
            .unwrap_or("")
            .to_string();
        assert!(
            last.contains(args[0]) && last.contains("complete") && !last.contains("incomplete"),
            "{args:?}: {last}"
        );
    }
}
