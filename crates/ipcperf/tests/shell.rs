//! `gen`, `sink` and `pipeline` as a user runs them: through the built binary.

use std::process::{Command, Output, Stdio};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;

mod common;

fn ipcperf() -> Command {
    let mut c = Command::cargo_bin("ipcperf").expect("the ipcperf binary is built");
    // Tests keep nothing in the user's run history.
    c.env("IPCPERF_NO_SAVE", "1");
    c
}

fn gen(args: &[&str]) -> Vec<u8> {
    let out = ipcperf().arg("gen").args(args).output().unwrap();
    assert!(out.status.success(), "gen {args:?}: {out:?}");
    assert!(out.stderr.is_empty(), "gen is quiet: {out:?}");
    out.stdout
}

/// Run sink with `input` on its stdin.
fn sink(args: &[&str], input: &[u8]) -> Output {
    let mut child = ipcperf()
        .arg("sink")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let feeder = std::thread::spawn(move || {
        use std::io::Write;
        // The sink may stop early on a mismatch: a broken pipe here is expected.
        let _ = stdin.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

fn json_report(out: &Output) -> Value {
    let text = String::from_utf8_lossy(&out.stderr);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text:?}"))
}

#[test]
fn gen_writes_exactly_the_bytes_in_printable_ascii() {
    for (bytes, n) in [
        ("1", 1),
        ("1000", 1000),
        ("64k", 65536),
        ("100001", 100_001),
    ] {
        let out = gen(&["--bytes", bytes, "--chunk", "1k", "--seed", "5"]);
        assert_eq!(out.len(), n, "--bytes {bytes}");
        assert!(
            out.iter().all(|b| (b' '..=b'~').contains(b)),
            "--bytes {bytes}: not printable ASCII"
        );
    }
}

#[test]
fn gen_is_reproducible_by_seed_and_independent_of_chunk() {
    let a = gen(&["--bytes", "50000", "--chunk", "1k", "--seed", "42"]);
    assert_eq!(
        a,
        gen(&["--bytes", "50000", "--chunk", "1k", "--seed", "42"])
    );
    assert_eq!(
        a,
        gen(&["--bytes", "50000", "--chunk", "7", "--seed", "42"])
    );
    assert_eq!(&a[..1000], &gen(&["--bytes", "1000", "--seed", "42"])[..]);
    let b = gen(&["--bytes", "50000", "--chunk", "1k", "--seed", "43"]);
    let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
    // Two random printable streams agree on about 1 byte in 95.
    assert!(
        same < 2000,
        "seeds 42 and 43 agree on {same} of 50000 bytes"
    );
    let unseeded = gen(&["--bytes", "50000"]);
    assert_ne!(
        unseeded,
        gen(&["--bytes", "50000"]),
        "no seed: a fresh stream each run"
    );
}

#[test]
fn gen_stops_quietly_when_the_reader_goes() {
    // `head -c 10` reads 10 bytes and exits: gen's next write gets EPIPE.
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!(
            "'{}' gen --bytes 1G --chunk 1k --seed 1 | head -c 10",
            assert_cmd::cargo::cargo_bin("ipcperf").display()
        ))
        .output()
        .unwrap();
    assert_eq!(out.stdout.len(), 10);
    assert!(
        out.stderr.is_empty(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // And gen's own exit status on a closed pipe is 0.
    let mut child = ipcperf()
        .args(["gen", "--bytes", "1G", "--seed", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
}

#[test]
fn sink_counts_exactly_and_verifies_every_byte() {
    let data = gen(&["--bytes", "300007", "--chunk", "1k", "--seed", "9"]);
    let out = sink(
        &[
            "--chunk",
            "4k",
            "--format",
            "json",
            "--verify-seed",
            "9",
            "--bytes",
            "300007",
        ],
        &data,
    );
    assert!(out.status.success(), "{out:?}");
    let r = json_report(&out);
    assert_eq!(r["bytes"], 300_007);
    assert_eq!(r["verified_seed"], 9);
    assert!(r["seconds"].as_f64().unwrap() > 0.0);
    assert!(r["mb_per_sec"].as_f64().unwrap() > 0.0);

    let out = sink(&[], &data);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("300007 bytes") && text.contains("MB/s"),
        "{text}"
    );
    assert!(out.stdout.is_empty());

    // Nothing came: no rate was measured, and none is given (0 MB/s would read
    // as a slow pipe).
    let out = sink(&["--format", "json"], b"");
    assert!(out.status.success(), "{out:?}");
    let r = json_report(&out);
    assert_eq!(r["bytes"], 0);
    assert!(r["mb_per_sec"].is_null(), "{r}");
    let out = sink(&[], b"");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("no rate") && !text.contains("MB/s"), "{text}");
}

#[test]
fn sink_reads_in_chunks() {
    // From a file every read but the last is full: 300007 bytes in 4 KiB reads is 74.
    let mut file = tempfile::tempfile().unwrap();
    std::io::Write::write_all(&mut file, &gen(&["--bytes", "300007", "--seed", "1"])).unwrap();
    std::io::Seek::rewind(&mut file).unwrap();
    let out = ipcperf()
        .args(["sink", "--chunk", "4k", "--format", "json"])
        .stdin(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let r = json_report(&out);
    assert_eq!(
        (r["bytes"].as_u64(), r["reads"].as_u64()),
        (Some(300_007), Some(74))
    );
}

#[test]
fn sink_names_the_offset_of_a_changed_byte() {
    let mut data = gen(&["--bytes", "100000", "--seed", "3"]);
    data[77_777] = if data[77_777] == b'A' { b'B' } else { b'A' };
    let out = sink(&["--verify-seed", "3", "--bytes", "100000"], &data);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("offset 77777"), "{text}");

    // The right bytes against the wrong seed fail at once.
    let out = sink(
        &["--verify-seed", "4", "--bytes", "1000"],
        &gen(&["--bytes", "1000", "--seed", "3"]),
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

#[test]
fn sink_fails_a_stream_cut_short() {
    let data = gen(&["--bytes", "100000", "--seed", "5"]);
    // Every byte it got is right, but 1000 are missing at the end.
    let out = sink(
        &["--verify-seed", "5", "--bytes", "100000"],
        &data[..99_000],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("99000 bytes where 100000"), "{text}");
    assert!(text.contains("cut short"), "{text}");
    // And the whole stream passes.
    let out = sink(&["--verify-seed", "5", "--bytes", "100000"], &data);
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn gen_pipes_into_sink_through_the_shell() {
    let exe = assert_cmd::cargo::cargo_bin("ipcperf");
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!(
            "'{0}' gen --bytes 2M --chunk 1k --seed 11 | '{0}' sink --verify-seed 11 --bytes 2M --format json",
            exe.display()
        ))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(json_report(&out)["bytes"], 2 << 20);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = common::missing("ipcperf-test");
    for args in [
        &["gen", "--bytes", "0"][..],
        &["gen", "--chunk", "12q"],
        &["sink", "--chunk", "0"],
        &["sink", "--verify-seed", "x"],
        &["sink", "--verify-seed", "1"],
        &["sink", "--chunk", "8E"],
        &["sink", "--chunk", "1T"],
        &["gen", "--chunk", "2G"],
        &["pipeline", "--bytes", "8E", "--chunk", "8E"],
        &["pipeline", "--bytes", "1T", "--chunk", "1T"],
        &["pipeline", "--bytes", "64T", "--chunk", "1k"],
        &["pipeline", "--bytes", "0"],
        &["pipeline", "--chunk", "12q"],
        &["pipeline", "--bytes", "1000", "--chunk", "1k"],
        &["pipeline", "--bytes", "1k", "--dir", &dir],
        &["gen", "--no-such-flag"],
    ] {
        let out = ipcperf().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("ipcperf: error: "), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// A seed that is no whole number says what a seed is ("invalid digit found
/// in string" was all `--seed -1` got); a read that fails says its errno as
/// every system call's error does, "Is a directory (EISDIR)", not
/// "EISDIR: Is a directory"; a directory given as the input is bad input
/// (exit 2), as a directory named to --out is.
#[test]
fn a_bad_seed_and_a_failed_read_are_said_plainly() {
    for args in [
        &["gen", "--seed", "-1"][..],
        &["sink", "--bytes", "1k", "--verify-seed", "1.5"],
    ] {
        let out = ipcperf().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("is not a seed: a whole number from 0 to 18446744073709551615"),
            "{args:?}: {err}"
        );
    }
    let out = ipcperf()
        .arg("sink")
        .stdin(std::fs::File::open("/").unwrap())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("sink: read from stdin: Is a directory (EISDIR)"),
        "{err}"
    );
}

const ROWS: [&str; 6] = ["sysv-msg", "tmp-file", "unix", "sh-pipe", "cat", "dev-null"];

#[test]
fn pipeline_produces_every_row_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = ipcperf()
        .args([
            "pipeline", "--bytes", "256k", "--chunk", "1k", "--repeat", "2",
        ])
        .args(["--format", "json", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind in --dir: {left:?}");
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cases = run["cases"].as_array().unwrap();
    let names: Vec<&str> = cases
        .iter()
        .map(|c| c["mechanism"].as_str().unwrap())
        .collect();
    assert_eq!(names, ROWS);
    for c in cases {
        let name = c["mechanism"].as_str().unwrap();
        assert_eq!(c["include_setup"], true, "{name}");
        assert_eq!(c["block_size_bytes"], 1024, "{name}");
        if c["status"] != "ok" {
            // Only a mechanism this build lacks may be missing, and it says so.
            assert_eq!(c["status"], "refused", "{name}: {c}");
            assert_eq!(c["message"], "not available in this build", "{name}");
            assert!(c["series"].as_array().unwrap().is_empty());
            continue;
        }
        let series = c["series"].as_array().unwrap();
        assert_eq!(series.len(), 2, "{name}: one series per round");
        for s in series {
            assert_eq!(s["bytes"], 256 * 1024, "{name}");
            assert!(s["elapsed_ns"].as_u64().unwrap() > 0, "{name}");
        }
    }
    for must_run in ROWS {
        let c = cases.iter().find(|c| c["mechanism"] == must_run).unwrap();
        assert_eq!(c["status"], "ok", "{must_run}: {c}");
    }
}

#[test]
fn pipeline_is_saved_like_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
            .env_remove("IPCPERF_NO_SAVE")
            .env_remove("IPCPERF_DB")
            .args(args)
            .arg("--db")
            .arg(&db)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        out
    };
    let saved = run(&[
        "pipeline", "--bytes", "64k", "--repeat", "1", "--format", "json",
    ]);
    assert!(String::from_utf8_lossy(&saved.stderr).contains("saved as run"));
    let printed: Value = serde_json::from_slice(&saved.stdout).unwrap();
    let kept: Value =
        serde_json::from_slice(&run(&["export", "last", "--format", "json"]).stdout).unwrap();
    assert_eq!(
        kept["cases"], printed["cases"],
        "the kept run is the printed one"
    );
    assert_eq!(kept["complete"], true);
    assert_eq!(kept["cases"].as_array().unwrap().len(), ROWS.len());
    // Where it was kept is said after the results, as every run says it (it
    // came before pipeline's tables).
    let both = Command::new("sh")
        .arg("-c")
        .arg(r#""$0" pipeline --bytes 64k --repeat 1 --db "$1" 2>&1"#)
        .arg(env!("CARGO_BIN_EXE_ipcperf"))
        .arg(&db)
        .env_remove("IPCPERF_NO_SAVE")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&both.stdout);
    let saved_at = text.find("saved as run").expect("saved");
    let table_at = text.rfind("dev-null").expect("the table");
    assert!(table_at < saved_at, "{text}");
}

#[test]
fn pipeline_table_has_stovers_rows_and_relative_row() {
    let out = ipcperf()
        .args(["pipeline", "--bytes", "64k", "--repeat", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    for row in ROWS {
        assert!(text.contains(row), "no {row} row:\n{text}");
    }
    assert!(text.contains("relative"), "{text}");
    // Every row has figures, or says why not: never a number for a missing mechanism.
    for row in ROWS {
        let line = text
            .lines()
            .find(|l| l.contains(row) && l.starts_with('|'))
            .unwrap();
        let has_figures = line.matches('.').count() >= 3;
        assert!(has_figures || line.contains("skipped"), "{line}");
    }
    if text.contains("not available in this build") {
        assert!(
            text.contains("sysv-msg: not available in this build"),
            "{text}"
        );
    }
}
