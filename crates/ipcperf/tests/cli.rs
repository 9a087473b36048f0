//! The binary as a user meets it: bad input gets one line and exit 2, output
//! formats carry what they promise, help, completions and manual pages teach.
//! (A killed peer and Ctrl-C: `peer_death.rs` and `interrupt.rs`; the console
//! as a run goes on: `console_output.rs`.)

use std::process::{Command, Stdio};

use assert_cmd::cargo::cargo_bin_cmd;

mod common;
use common::bad_input;
use predicates::prelude::*;

fn ipcperf() -> assert_cmd::Command {
    let mut c = cargo_bin_cmd!("ipcperf");
    // Tests keep nothing in the user's run history.
    c.env("IPCPERF_NO_SAVE", "1");
    c
}

#[test]
fn bad_input_exits_2_with_a_clear_line() {
    bad_input(&["run", "pipe", "--sizes", "0"], "at least 1 byte");
    bad_input(&["run", "pipe", "--sizes", "12q"], "not a size");
    bad_input(&["run", "nosuch"], "unknown mechanism 'nosuch'");
    // A list that names nothing: it ran no case, saved an empty run and said
    // "nothing could run as asked: " (sync exited 0).
    bad_input(&["run", ""], "'' names no mechanism");
    bad_input(&["latency", ","], "',' names no mechanism");
    bad_input(&["matrix", ""], "names no mechanism");
    // A missing argument comes with its usage ("<B>" alone said little).
    bad_input(
        &["compare", "1"],
        "(usage: ipcperf compare <A> <B>; see --help)",
    );
    bad_input(&["sync", ",,"], "',,' names no primitive");
    bad_input(&["run", "pipe", "--duration", "-1"], "--duration");
    bad_input(&["run", "pipe", "--duration", "0s"], "more than zero");
    bad_input(&["run", "pipe", "--pin", "0,99"], "CPU 99");
    bad_input(&["run", "pipe", "--sizes", "1M..16"], "range");
    bad_input(&["run", "pipe", "--mode", "sideways"], "sideways");
    bad_input(
        &["run", "pipe", "--dir", &common::missing("x")],
        "no such directory",
    );
    // A directory nothing can be made in failed every case as it ran (exit 1).
    for cmd in [&["run", "fifo"][..], &["sync", "flock"], &["pipeline"]] {
        let args = [cmd, &["--dir", "/proc"]].concat();
        bad_input(&args, "--dir /proc: cannot make a directory");
    }
    bad_input(
        &["run", "memcpy", "--buffer-offset", "4096"],
        "--buffer-offset",
    );
    // Found after the plan was made (its series line was the first of two).
    bad_input(
        &["latency", "pipe", "--peer", "127.0.0.1:1"],
        "cannot cross machines",
    );
    bad_input(
        &["run", "tcp", "--peer", "[::1]:99999"],
        "port 99999 is not",
    );
    // A value that starts with '-' is the value, said wrong by its own parser:
    // these read "unexpected argument '-6' found" (clap took -64 for flags).
    bad_input(
        &["run", "pipe", "--sizes", "-64"],
        "'-64': a size cannot be negative",
    );
    bad_input(&["latency", "pipe", "--rate", "-5"], "'-5': a rate from 1");
    bad_input(&["run", "pipe", "--count", "-1"], "'-1': a count from 1");
    bad_input(&["run", "pipe", "--pairs", "-2"], "'-2': a count of pairs");
    bad_input(&["show", "-3"], "'-3' is not a run id");
    bad_input(&["history", "--last", "-1"], "'-1': a count from 1");
    // A flag where a value belongs is named as the value it cannot be.
    bad_input(
        &["run", "pipe", "--sizes", "--verify"],
        "'--verify' is not a size",
    );
    bad_input(
        &["serve", "--listen", "127.0.0.1:99999"],
        "is not ADDR:PORT",
    );
    // Free text does not take a flag for its value: the label is missing.
    bad_input(
        &["run", "pipe", "--label", "--no-save"],
        "a value is required",
    );
}

/// Values that panicked, aborted or were silently ignored: each is one line, exit 2.
#[test]
fn absurd_values_and_flags_that_do_not_apply_exit_2() {
    for cmd in ["run", "latency", "sync"] {
        for d in [
            "99999999999999999999999s",
            "18446744073709551615s",
            "400000000000000000m",
            "25h",
        ] {
            bad_input(&[cmd, "pipe", "--duration", d], "longer than");
        }
        // A bare number was read as seconds without a word (50 meant 50 s).
        bad_input(&[cmd, "pipe", "--duration", "50"], "no unit");
        bad_input(
            &[cmd, "pipe", "--duration", "18446744073709551615"],
            "no unit",
        );
        // A series too short to time (it ran one block without a word).
        bad_input(&[cmd, "pipe", "--duration", "50us"], "too short");
    }
    bad_input(&["run", "pipe", "--sizes", "8E"], "more than a block");
    bad_input(&["latency", "pipe", "--sizes", "2G"], "more than a block");
    bad_input(&["run", "shm", "--shm-capacity", "8E"], "more than a block");
    bad_input(&["run", "pipe", "--pipe-size", "8E"], "more than a block");
    bad_input(
        &["run", "pipe", "--wake", "spin"],
        "--wake applies to the shm",
    );
    bad_input(&["latency", "unix", "tcp", "--shm-named"], "--shm-named");
    bad_input(&["run", "pipe", "--shm-capacity", "64k"], "--shm-capacity");
    bad_input(&["history", "--db", "mysql://x"], "not mysql");
    bad_input(&["history", "--db", ""], "--db ''");
    bad_input(&["__peer"], "internal");
    // clean: a mistyped --dir looked nowhere and said "nothing to clean"; a
    // user name said "invalid digit found in string".
    bad_input(
        &["clean", "--dir", &common::missing("dir")],
        "no such directory",
    );
    bad_input(
        &["clean", "--user", "no-such-user-ipcperf"],
        "neither a uid nor a user",
    );
}

/// `clean --user` takes a user's name as well as a uid (root only).
#[test]
fn clean_takes_a_user_by_name() {
    let out = ipcperf()
        .args(["clean", "--dry-run", "--user", "root"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("only root may") {
        eprintln!("skipped: not root ({err})");
        return;
    }
    assert!(out.status.success(), "{err}");
}

#[test]
fn a_file_series_bigger_than_the_free_space_is_refused_before_it_writes() {
    let dir = tempfile::tempdir().unwrap();
    // The most blocks a series takes (2^26) of the largest size (1 GiB): 72 PB,
    // more than any disk here.
    let out = ipcperf()
        .args([
            "run", "file", "--sizes", "1G", "--count", "67108864", "--dir",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(" free in ") && err.contains("--count"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "wrote nothing, left nothing"
    );
}

#[test]
fn an_offset_writer_buffer_delivers_verified_bytes_and_is_recorded() {
    for mech in ["memcpy", "pipe", "unix"] {
        let out = ipcperf()
            .args([
                "run",
                mech,
                "--sizes",
                "1000",
                "--count",
                "300",
                "--repeat",
                "1",
                "--verify",
                "--buffer-offset",
                "13",
                "--format",
                "json",
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{mech}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let c = &v["cases"][0];
        assert_eq!(c["status"], "ok", "{mech}: {c}");
        assert_eq!(c["series"][0]["bytes"], 300 * 1000, "{mech}");
        assert_eq!(c["options"]["buffer_offset"], "13", "{mech}: {c}");
    }
}

#[test]
fn oversized_single_mode_block_is_refused_with_its_capacity() {
    let out = ipcperf()
        .args([
            "run", "pipe", "--mode", "single", "--sizes", "1M", "--count", "5",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("holds 65536 bytes"), "{err}");
    assert!(err.contains("--pipe-size"), "says how to raise it: {err}");
}

#[test]
fn help_teaches() {
    ipcperf()
        .args(["run", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--sizes").and(predicate::str::contains("bradford")));
    ipcperf()
        .arg("list")
        .assert()
        .success()
        .stdout(predicate::str::contains("fifo").and(predicate::str::contains("fs.pipe-max-size")));
}

#[test]
fn json_carries_the_promised_fields() {
    let out = ipcperf()
        .args([
            "run", "pipe", "unix", "--sizes", "64k", "--count", "200", "--repeat", "2", "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema_version"], 2);
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    for c in cases {
        assert!(c["mechanism"].is_string());
        assert_eq!(c["mode"], "processes");
        assert_eq!(c["block_size_bytes"], 65536);
        assert!(c["median_bytes_per_sec"].as_f64().unwrap() > 0.0);
        assert_eq!(c["series"].as_array().unwrap().len(), 2);
        assert_eq!(c["series"][0]["bytes"], 200 * 65536);
        // No --pin: across the first two CPUs (on the one CPU a machine has).
        assert_ne!(c["placement"]["label"], "unpinned");
        assert!(c["placement"]["writer_cpu"].is_u64(), "{}", c["placement"]);
    }
    assert!(v["machine"]["kernel"].is_string());
}

#[test]
fn csv_and_markdown_have_one_row_per_case() {
    let out = ipcperf()
        .args([
            "run", "pipe", "--sizes", "64,4k", "--count", "100", "--repeat", "1", "--format", "csv",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("workload,mechanism,mode,placement"));
    assert_eq!(lines.count(), 2);
    let out = ipcperf()
        .args([
            "run", "pipe", "--sizes", "64", "--count", "100", "--repeat", "1", "--format",
            "markdown",
        ])
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("| block |") && md.contains("| 64 B |"), "{md}");
}

#[test]
fn a_reader_that_went_away_ends_output_quietly() {
    // `ipcperf list | head -0`: the read end is closed before ipcperf writes.
    for args in [
        &["list"][..],
        &["list", "-f", "csv"],
        &["clean", "--dry-run"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
            .args(args)
            .env("IPCPERF_NO_SAVE", "1")
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn completions_load_in_bash_and_name_every_subcommand() {
    let out = ipcperf().args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let script = String::from_utf8(out.stdout).unwrap();
    for sub in ["run", "latency", "sync", "compare", "clean", "completions"] {
        assert!(script.contains(sub), "{sub} missing");
    }
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("ipcperf.bash");
    std::fs::write(&f, &script).unwrap();
    let st = Command::new("bash")
        .arg("-c")
        .arg(format!("source '{}' && complete -p ipcperf", f.display()))
        .output()
        .unwrap();
    assert!(st.status.success(), "{st:?}");
    bad_input(&["completions", "tcsh"], "tcsh");
}

/// The manual page comes from the same definitions as --help; --dir writes one page
/// a subcommand (and none for clap's own `help`).
#[test]
fn man_pages() {
    let out = ipcperf().arg("man").output().unwrap();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(
        page.contains(".TH ipcperf 1"),
        "{}",
        &page[..200.min(page.len())]
    );
    assert!(page.contains("matrix"), "lists the subcommands");
    let dir = tempfile::tempdir().unwrap();
    ipcperf()
        .args(["man", "--dir"])
        .arg(dir.path())
        .assert()
        .success();
    for name in [
        "ipcperf.1",
        "ipcperf-run.1",
        "ipcperf-latency.1",
        "ipcperf-topology.1",
    ] {
        let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert!(text.contains(".SH OPTIONS"), "{name}");
    }
    assert!(!dir.path().join("ipcperf-help.1").exists());
    bad_input(
        &["man", "--dir", &common::missing("dir")],
        "no such directory",
    );
    let file = dir.path().join("ipcperf.1");
    bad_input(&["man", "--dir", file.to_str().unwrap()], "not a directory");
}

/// -q prints the results and nothing on stderr; -v says every case as it ends; the
/// two together are bad input. Off a terminal there is no colour code anywhere.
#[test]
fn quiet_and_verbose() {
    let args = [
        "latency", "pipe", "--mode", "threads", "--count", "200", "--repeat", "1", "--pin", "0,0",
    ];
    let out = ipcperf().args(args).arg("-q").output().unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("same-cpu 0→0"));
    let out = ipcperf().args(args).arg("--verbose").output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("done pipe threads 512 B same-cpu 0→0"),
        "{err}"
    );
    assert!(!err.contains('\x1b') && !String::from_utf8_lossy(&out.stdout).contains('\x1b'));
    bad_input(&["latency", "pipe", "-q", "-v"], "cannot be used with");
}

/// A library mechanism is in the build with its cargo feature, named with its
/// base and version in `list`; without the feature, asking for it says which
/// feature brings it (exit 2), never "unknown".
#[test]
fn a_library_mechanism_is_built_or_says_which_feature_brings_it() {
    if cfg!(feature = "zmq") {
        ipcperf()
            .args(["list", "--format", "csv"])
            .assert()
            .success()
            .stdout(predicate::str::contains("zmq-ipc,threads processes"))
            .stdout(predicate::str::contains(
                "unix via zmq 0.10.0 (libzmq 4.3.4",
            ));
    } else {
        bad_input(&["latency", "zmq-ipc"], "--features zmq");
    }
    if cfg!(feature = "grpc") {
        ipcperf()
            .args(["list", "--format", "csv"])
            .assert()
            .success()
            .stdout(predicate::str::contains("grpc-uds,threads processes"))
            .stdout(predicate::str::contains("unix via tonic 0.14.9"));
    } else {
        bad_input(&["latency", "grpc-uds"], "--features grpc");
    }
}

/// `--fixed-buffers` measures each io_uring mechanism twice, plain and with its
/// buffers registered, every byte verified both ways; the registered case says
/// so in its options and its label. Asked of no io_uring mechanism, it is bad input.
/// The cases of a run asked with `--format json`, which must have succeeded.
fn json_cases(args: &[&str]) -> Vec<serde_json::Value> {
    let out = ipcperf()
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["cases"].as_array().unwrap().clone()
}

/// `--request-response`: iceoryx2's round trips both ways, publish-subscribe
/// and request-response, every byte verified, in two processes; its streams
/// stay publish-subscribe (the request-response case says why it has none).
#[test]
fn request_response_measures_iceoryx2_round_trips_both_ways_verified() {
    bad_input(
        &["latency", "pipe", "--request-response"],
        "--request-response",
    );
    if !cfg!(feature = "iceoryx2") {
        eprintln!("skipped: iceoryx2 is not built (feature iceoryx2)");
        return;
    }
    let cases = json_cases(&[
        "latency",
        "iceoryx2",
        "--request-response",
        "--mode",
        "processes",
        "--sizes",
        "1,4k",
        "-n",
        "300",
        "-r",
        "1",
        "--verify",
    ]);
    assert_eq!(cases.len(), 4);
    let mut rr = 0;
    for c in cases {
        assert_eq!(c["status"], "ok", "{c}");
        assert_eq!(c["payload"], "verify", "{c}");
        assert_eq!(c["round_trips"], 300, "{c}");
        if c["options"]["pattern"] == "request-response" {
            rr += 1;
        }
    }
    assert_eq!(rr, 2);
    let cases = json_cases(&[
        "run",
        "iceoryx2",
        "--request-response",
        "--sizes",
        "4k",
        "-n",
        "300",
        "-r",
        "1",
    ]);
    assert_eq!(cases.len(), 2, "{cases:?}");
    let refused = cases.iter().find(|c| c["status"] == "refused").unwrap();
    assert!(refused["message"]
        .as_str()
        .unwrap()
        .contains("publish-subscribe"));
}

#[test]
fn fixed_buffers_measure_io_uring_both_ways_verified() {
    for cmd in ["run", "latency"] {
        let cases = json_cases(&[
            cmd,
            "uring-unix",
            "uring-tcp",
            "uring-pipe",
            "--fixed-buffers",
            "--sizes",
            "4k",
            "-n",
            "300",
            "-r",
            "1",
            "--verify",
        ]);
        assert_eq!(cases.len(), 6, "{cmd}");
        let mut registered = 0;
        for c in cases {
            assert_eq!(c["status"], "ok", "{cmd}: {c}");
            if c["options"]["buffers"] == "registered" {
                registered += 1;
            }
        }
        assert_eq!(registered, 3, "{cmd}");
    }
    bad_input(
        &["run", "pipe", "unix", "--fixed-buffers"],
        "--fixed-buffers",
    );
}

/// `list` fits 80 columns (what it wraps to off a terminal) and breaks no word:
/// each mechanism's wrapped lines, joined, are the words of its summary's first
/// clause, in order. `list NAME` says all of one; an unknown name is exit 2.
#[test]
fn list_reads_at_80_columns_without_a_broken_word() {
    let out = ipcperf().arg("list").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for l in text.lines() {
        assert!(l.chars().count() <= 80, "over 80 columns: {l:?}");
    }
    let json = ipcperf()
        .args(["list", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for m in v["mechanisms"].as_array().unwrap() {
        let name = m["name"].as_str().unwrap();
        let summary = m["summary"].as_str().unwrap();
        let start = lines
            .iter()
            .position(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} not listed"));
        // The first line after the name and the modes, then the indented rest.
        let mut words: Vec<&str> = lines[start].split_whitespace().skip(2).collect();
        for l in &lines[start + 1..] {
            if !l.starts_with("   ") {
                break;
            }
            words.extend(l.split_whitespace());
        }
        let shown = words.join(" ");
        let want: Vec<&str> = summary.split_whitespace().collect();
        let want = want.join(" ");
        assert!(
            want.starts_with(&shown),
            "{name}: shown {shown:?} is not the start of {want:?}"
        );
    }
    let one = ipcperf().args(["list", "shm"]).output().unwrap();
    assert!(one.status.success());
    let one = String::from_utf8(one.stdout).unwrap();
    assert!(one.contains("named objects") && one.contains("modes: threads, processes"));
    bad_input(&["list", "no-such-thing"], "unknown mechanism");
    // An empty name or a list is one line, exit 2, in every format (the fuzz found
    // a panic here).
    for f in ["table", "json"] {
        bad_input(&["list", "", "--format", f], "name one mechanism");
        bad_input(&["list", "pipe,unix", "--format", f], "name one mechanism");
    }
}

/// A panic (forced by the test-only IPCPERF_TEST_PANIC, once a case's objects and
/// peer exist) is one line naming the version and where to report it, exit 101,
/// and removes every named object, as Ctrl-C does.
#[test]
fn a_panic_is_one_line_exit_101_and_leaves_nothing() {
    for args in [
        &["run", "fifo"][..],
        &["run", "sysv-msg"],
        &["run", "posix-mq"],
        &["run", "shm", "--shm-named"],
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
            .args(args)
            .args(["-n", "10", "--no-save"])
            .env("TMPDIR", tmp.path())
            .env("IPCPERF_TEST_PANIC", "1")
            .env_remove("RUST_BACKTRACE")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(101), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err
            .lines()
            .filter(|l| l.contains("internal error"))
            .collect();
        assert_eq!(lines.len(), 1, "{args:?}: {err}");
        assert!(
            lines[0].contains(env!("CARGO_PKG_VERSION")) && lines[0].contains("/issues"),
            "{}",
            lines[0]
        );
        assert!(
            !err.contains("panicked") && !err.contains("stack backtrace"),
            "{err}"
        );
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().collect();
        assert!(left.is_empty(), "{args:?} left {left:?}");
        let prefix = format!("ipcperf-{pid}-");
        for dir in ["/dev/shm", "/dev/mqueue"] {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                assert!(!n.contains(&prefix), "{args:?} left {dir}/{n}");
            }
        }
        for q in ipcperf_sys::sysv_msg::list() {
            assert_ne!(
                ipcperf_sys::sysv_msg::owner_of_key(q.key),
                Some(pid as i32),
                "{args:?} left SysV queue {}",
                q.id
            );
        }
    }
}
