//! Conversations carried on two one-way channels, found in traces of real
//! programs: `tests/programs/conv.c` (compiled with cc) over two pipes, two
//! FIFOs, two socket pairs, a coprocess on its standard input and output, and
//! with requests sent three at a time; a bash coprocess
//! (`tests/programs/coproc.sh`); each traced by Debian's strace with `-yy` and
//! without it (then paired from the pipe, socketpair, dup, close, clone and
//! execve calls). Each must be one conversation of 25 requests of 100 B and 25
//! answers of 300 B, and replay both ways; a pipeline of three processes and
//! streams both ways at once must stay apart, saying why.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

const BIN: &str = env!("CARGO_BIN_EXE_ipcperf");
const CONV: &str = include_str!("programs/conv.c");
const COPROC: &str = include_str!("programs/coproc.sh");
/// The calls that move bytes: the book's filter.
const IO: &str = "read,write,readv,writev,sendmsg,recvmsg,sendto,recvfrom";
/// And the calls that make and move descriptors, for a trace without -yy.
const FDS: &str = "pipe,pipe2,socketpair,dup,dup2,dup3,fcntl,close,close_range,clone,clone3,\
                   fork,vfork,execve,open,openat";

fn skip() -> bool {
    let missing = !common::have("strace") || !common::have("cc") || !common::have("bash");
    if missing {
        eprintln!("skipped: needs strace, cc and bash (apt-get install strace gcc; .ci/run does)");
    }
    missing
}

fn compile(dir: &Path) -> PathBuf {
    common::compile_c(dir, "conv", CONV)
}

/// The program traced: with `-yy` (the book's filter), or without it and with
/// the descriptor calls too.
fn trace(dir: &Path, name: &str, yy: bool, program: &[&str]) -> PathBuf {
    let t = dir.join(format!("{name}.{}", if yy { "yy" } else { "fd" }));
    let filter = if yy {
        format!("trace={IO}")
    } else {
        format!("trace={IO},{FDS}")
    };
    let mut c = Command::new("strace");
    c.args(["-f", "-ttt"]);
    if yy {
        c.arg("-yy");
    }
    let out = c
        .args(["-e", &filter, "-o"])
        .arg(&t)
        .args(program)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    t
}

/// `ipcperf pattern TRACE --format json`: the records and the notes (stderr).
fn pattern(t: &Path) -> (Vec<serde_json::Value>, String) {
    let out = Command::new(BIN)
        .arg("pattern")
        .arg(t)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        serde_json::from_slice(&out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// (conversation, way, messages, size p50, channels) of each record.
fn shape(rows: &[serde_json::Value]) -> Vec<(u64, String, u64, u64, usize)> {
    rows.iter()
        .map(|r| {
            (
                r["conversation"].as_u64().unwrap(),
                r["way"].as_str().unwrap().to_string(),
                r["messages"].as_u64().unwrap(),
                r["size_p50"].as_u64().unwrap(),
                r["channels"].as_array().unwrap().len(),
            )
        })
        .collect()
}

fn one_conversation() -> Vec<(u64, String, u64, u64, usize)> {
    vec![(1, "A→B".into(), 25, 100, 2), (1, "B→A".into(), 25, 300, 2)]
}

#[test]
fn two_channels_one_conversation_in_programs_traced_with_and_without_yy() {
    if skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path());
    let exe = exe.to_str().unwrap();
    let script = dir.path().join("coproc.sh");
    std::fs::write(&script, COPROC).unwrap();
    let script = script.to_str().unwrap();
    for yy in [true, false] {
        let fifos = dir.path().join(format!("fifos-{yy}"));
        std::fs::create_dir(&fifos).unwrap();
        let cases: [(&str, Vec<&str>); 6] = [
            ("pipes", vec![exe, "pipes"]),
            ("fifos", vec![exe, "fifos", fifos.to_str().unwrap()]),
            ("socks", vec![exe, "socks"]),
            ("coproc", vec![exe, "coproc"]),
            ("pipelined", vec![exe, "pipelined"]),
            ("bash", vec!["bash", script]),
        ];
        for (name, program) in cases {
            let t = trace(dir.path(), name, yy, &program);
            let (rows, notes) = pattern(&t);
            let joined: Vec<_> = shape(&rows).into_iter().take(2).collect();
            assert_eq!(
                joined,
                one_conversation(),
                "{name} yy={yy}: {rows:#?} {notes}"
            );
            let r = &rows[0];
            assert_eq!(r["both_sides"], true, "{name}");
            let channels = r["channels"].as_array().unwrap();
            let want = match (name, yy) {
                ("fifos", _) => "/down",
                ("socks", true) => "UNIX-STREAM:[",
                ("socks", false) => "socketpair[",
                (_, true) => "pipe:[",
                (_, false) => "pipe[",
            };
            assert!(
                channels.iter().any(|c| c.as_str().unwrap().contains(want)),
                "{name} yy={yy}: {channels:?}"
            );
            // The table: one row, both ways, within 80 columns.
            let out = Command::new(BIN).arg("pattern").arg(&t).output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                text.contains("25 × 100 B") && text.contains("25 × 300 B"),
                "{text}"
            );
            let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
            assert!(widest <= 80, "{name} yy={yy}: {widest} columns\n{text}");
        }
    }
}

#[test]
fn a_pipeline_and_streams_both_ways_stay_apart_and_say_why() {
    if skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path());
    let exe = exe.to_str().unwrap();
    for yy in [true, false] {
        for (name, why) in [
            ("chain", "chain three processes"),
            ("streams", "streams both ways at once"),
        ] {
            let t = trace(dir.path(), name, yy, &[exe, name]);
            let (rows, notes) = pattern(&t);
            let mut s = shape(&rows);
            s.truncate(2);
            s.sort_by_key(|r| r.3);
            assert_eq!(
                s.iter()
                    .map(|r| (r.1.as_str(), r.2, r.3, r.4))
                    .collect::<Vec<_>>(),
                [("A→B", 25, 100, 1), ("A→B", 25, 300, 1)],
                "{name} yy={yy}: {rows:#?}"
            );
            assert!(notes.contains(why), "{name} yy={yy}: {notes}");
        }
    }
    // Neither -yy nor the descriptor calls: one line says how to trace.
    let t = dir.path().join("plain.trace");
    let out = Command::new("strace")
        .args(["-f", "-ttt", "-e", &format!("trace={IO}"), "-o"])
        .arg(&t)
        .args([exe, "pipes"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let (rows, notes) = pattern(&t);
    assert!(rows.iter().all(|r| r["both_sides"] == false));
    assert!(notes.contains("strace -f -ttt -yy"), "{notes}");
}

#[test]
fn a_two_pipe_conversation_replays_both_ways_and_one_channel_alone() {
    if skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path());
    let exe = exe.to_str().unwrap();
    for yy in [true, false] {
        let t = trace(dir.path(), "pipes", yy, &[exe, "pipes"]);
        let t = t.to_str().unwrap();
        let run = common::run_json(&[
            "replay",
            t,
            "pipe",
            "unix",
            "--verify",
            "-r",
            "2",
            "--no-save",
        ]);
        for c in run["cases"].as_array().unwrap() {
            assert_eq!(c["status"], "ok", "{c}");
            assert_eq!(c["round_trips"], 100, "{c}");
            assert_eq!(c["round_trips_lost"], 0);
            let r = &c["replay"];
            assert_eq!(
                (r["a_to_b"].as_u64(), r["b_to_a"].as_u64()),
                (Some(25), Some(25))
            );
            assert_eq!(
                (r["a_to_b_bytes"].as_u64(), r["b_to_a_bytes"].as_u64()),
                (Some(2500), Some(7500))
            );
            assert!(r["channel"].as_str().unwrap().contains(" + "), "{r}");
        }
        // One channel alone: the answers' pipe, by the name pattern shows.
        let (rows, _) = pattern(Path::new(t));
        let answers = rows[0]["channels"][1].as_str().unwrap().to_string();
        let run = common::run_json(&[
            "replay",
            t,
            "--channel",
            &answers,
            "unix",
            "-r",
            "1",
            "--no-save",
        ]);
        let r = &run["cases"][0]["replay"];
        assert_eq!(r["channel"], answers.as_str());
        assert_eq!(
            (r["a_to_b"].as_u64(), r["b_to_a"].as_u64()),
            (Some(25), Some(0)),
            "{r}"
        );
        let out = Command::new(BIN)
            .args(["replay", t, "--channel", "pipe:[1]", "unix", "--no-save"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("no channel pipe:[1]"));
    }
}
