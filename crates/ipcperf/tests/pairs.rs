//! Many pairs at once (`--pairs`): every pair delivers exactly its bytes, verified;
//! round trips over many pairs are all counted; a dead pair is an error within 2 s
//! and leaves no process; bad counts and placements are one line, exit 2.

mod common;
use common::run_json;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ipcperf");

fn per_pair(c: &serde_json::Value) -> &Vec<serde_json::Value> {
    c["pairs"]["per_pair"].as_array().unwrap()
}

#[test]
fn every_pair_of_a_stream_delivers_exactly_its_blocks_verified() {
    for (mech, mode, n) in [("pipe", "threads", 3usize), ("unix", "processes", 2)] {
        let v = run_json(&[
            "run",
            mech,
            "--mode",
            mode,
            "--pairs",
            &n.to_string(),
            "--sizes",
            "4k",
            "-n",
            "3000",
            "--repeat",
            "2",
            "--verify",
        ]);
        let cases = v["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 1);
        let c = &cases[0];
        assert_eq!(c["status"], "ok", "{c}");
        assert_eq!(c["pairs"]["count"], n);
        let pp = per_pair(c);
        assert_eq!(pp.len(), n);
        for p in pp {
            // Two series of 3000 blocks each, every byte checked by its reader.
            assert_eq!(p["blocks"], 6000, "{p}");
            assert_eq!(p["bytes"], 6000 * 4096, "{p}");
            assert!(p["elapsed_ns"].as_u64().unwrap() > 0);
            assert!(p["reader_cpu_ns"].as_u64().is_some(), "{p}");
        }
        // The series hold the totals of every pair.
        for s in c["series"].as_array().unwrap() {
            assert_eq!(s["blocks"], 3000 * n as u64, "{s}");
            assert_eq!(s["bytes"], 3000 * 4096 * n as u64, "{s}");
        }
        assert!(c["placement"]["label"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{n} pair")));
    }
}

#[test]
fn round_trips_over_many_pairs_are_each_counted_and_checked() {
    let v = run_json(&[
        "latency", "tcp", "unix", "--mode", "threads", "--pairs", "1,2", "--sizes", "64", "-n",
        "400", "--repeat", "2", "--verify",
    ]);
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 4);
    for c in cases {
        assert_eq!(c["status"], "ok", "{c}");
        let n = c["pairs"]["count"].as_u64().unwrap();
        assert_eq!(c["round_trips"], 800 * n, "{c}");
        for p in per_pair(c) {
            assert_eq!(p["blocks"], 800);
            // Both ways: 2 x 64 bytes a round trip.
            assert_eq!(p["bytes"], 800 * 128);
        }
    }
}

#[test]
fn the_scaling_table_shows_totals_fairness_and_cpu_per_message() {
    let out = Command::new(BIN)
        .args([
            "run", "pipe", "--mode", "threads", "--pairs", "1..2", "--sizes", "4k", "-n", "2000",
            "--repeat", "1",
        ])
        .env("IPCPERF_NO_SAVE", "1")
        .env("COLUMNS", "250")
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("Many pairs at once"), "{t}");
    for h in [
        "total MB/s",
        "fairness",
        "× 1 pair",
        "CPU/msg",
        "CPU/byte",
        "switches/msg",
    ] {
        assert!(t.contains(h), "{h} in {t}");
    }
    assert!(t.contains("2 pairs"), "{t}");
}

/// Child processes of every thread of `pid` (each pair's thread starts its own peer).
fn children(pid: u32) -> Vec<u32> {
    let mut v: Vec<u32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|t| {
            std::fs::read_to_string(t.path().join("children"))
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|s| s.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect();
    v.sort_unstable();
    v
}

fn gone(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit_once(')')
                .is_none_or(|(_, r)| r.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

/// How a run ended after it was hit mid-series.
struct Hit {
    code: Option<i32>,
    err: String,
    /// From the hit to the exit.
    took: Duration,
    /// Its child processes (peers, server, readers) as they were when it was hit.
    children: Vec<u32>,
    pid: u32,
}

/// Start ipcperf with `args` (a long series; `tmp` as TMPDIR), wait for its `n`
/// child processes and a little of the series, then `hit` it (given its pid and
/// children); wait (5 s at most) for it to end. Its children must all be gone a
/// second later.
fn hit_midway(
    args: &[&str],
    n: usize,
    tmp: &std::path::Path,
    hit: impl FnOnce(u32, &[u32]),
) -> Hit {
    let mut child = Command::new(BIN)
        .args(args)
        .args(["-d", "30s", "--repeat", "1", "--no-save"])
        .env("TMPDIR", tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let t0 = Instant::now();
    let mut kids = Vec::new();
    while kids.len() < n && t0.elapsed() < Duration::from_secs(10) {
        kids = children(pid);
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(kids.len(), n, "{args:?}: {n} child processes");
    std::thread::sleep(Duration::from_millis(400));
    let at = Instant::now();
    hit(pid, &kids);
    let st = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if at.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            panic!("{args:?}: still running 5 s after the hit");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = at.elapsed();
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    let t = Instant::now();
    while !kids.iter().all(|&p| gone(p)) && t.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        kids.iter().all(|&p| gone(p)),
        "{args:?}: child processes left: {err}"
    );
    Hit {
        code: st.code(),
        err,
        took,
        children: kids,
        pid,
    }
}

#[test]
fn one_dead_pair_ends_the_case_within_2s_and_leaves_no_process() {
    for mech in ["pipe", "shm"] {
        let tmp = tempfile::tempdir().unwrap();
        let args = [
            "run",
            mech,
            "--mode",
            "processes",
            "--pairs",
            "3",
            "--sizes",
            "4k",
        ];
        let h = hit_midway(&args, 3, tmp.path(), |_, kids| {
            ipcperf_sys::signal::kill(kids[1] as i32)
        });
        assert!(
            h.took < Duration::from_secs(2),
            "{mech}: took {:?}: {}",
            h.took,
            h.err
        );
        assert_eq!(h.code, Some(1), "{mech}: {}", h.err);
        assert!(h.err.contains("SIGKILL"), "{mech}: {}", h.err);
    }
}

#[test]
fn bad_pair_counts_and_placements_are_one_line_exit_2() {
    for (args, want) in [
        (
            vec!["run", "pipe", "--pairs", "0"],
            "a count of pairs from 1 to 256",
        ),
        (
            vec!["run", "pipe", "--pairs", "257"],
            "a count of pairs from 1 to 256",
        ),
        (vec!["latency", "pipe", "--pairs", "4..2"], "ends below"),
        (
            vec![
                "run", "pipe", "--pairs", "4", "--pin", "0,1", "--pin", "1,0",
            ],
            "give --pin W,R once per pair",
        ),
        (
            vec!["run", "pipe", "--pairs", "2", "--placements", "all"],
            "every pair takes one placement",
        ),
        (
            vec!["run", "pipe", "--pairs", "2", "--pin", "other-numa"],
            "no other-numa pair",
        ),
    ] {
        let out = Command::new(BIN)
            .args(&args)
            .env("IPCPERF_NO_SAVE", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// Explicit CPUs: `--pin W,R` once per pair puts pair i on the i-th, once for
/// all puts every pair there; each pair's record says where it asked to run and
/// where it was seen.
#[test]
fn pairs_run_on_the_cpus_given() {
    for (pins, want) in [
        (&["--pin", "0,1", "--pin", "1,0"][..], [(0, 1), (1, 0)]),
        (&["--pin", "1,0"][..], [(1, 0), (1, 0)]),
    ] {
        let mut args = vec!["run", "pipe", "--pairs", "2", "-n", "500", "--sizes", "4k"];
        args.extend_from_slice(pins);
        args.extend_from_slice(&["-r", "1", "--verify"]);
        let v = run_json(&args);
        let c = &v["cases"][0];
        assert_eq!(c["status"], "ok", "{c}");
        for (p, (w, r)) in per_pair(c).iter().zip(want) {
            assert_eq!(
                (p["writer_cpu"].as_u64(), p["reader_cpu"].as_u64()),
                (Some(w), Some(r)),
                "{p}"
            );
            assert_eq!(p["seen_writer_cpu"], w, "{p}");
            assert_eq!(p["seen_reader_cpu"], r, "{p}");
            assert_eq!(p["blocks"], 500, "{p}");
        }
    }
}

#[test]
fn ctrl_c_during_many_pairs_ends_within_2s_and_removes_every_pairs_objects() {
    for mech in ["posix-mq", "fifo"] {
        let tmp = tempfile::tempdir().unwrap();
        let args = [
            "run",
            mech,
            "--mode",
            "processes",
            "--pairs",
            "3",
            "--sizes",
            "1k",
        ];
        let h = hit_midway(&args, 3, tmp.path(), |pid, _| {
            ipcperf_sys::signal::interrupt(pid as i32)
        });
        assert!(h.took < Duration::from_secs(2), "{mech}: {}", h.err);
        assert_eq!(h.code, Some(130), "{mech}: {}", h.err);
        let prefix = format!("ipcperf-{}-", h.pid);
        let queues = ipcperf_sys::mqueue::list().unwrap_or_default();
        assert!(
            !queues
                .iter()
                .any(|q| q.trim_start_matches('/').starts_with(&prefix)),
            "{mech}: {queues:?}"
        );
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().collect();
        assert!(left.is_empty(), "{mech}: {left:?}");
        assert_eq!(h.children.len(), 3);
    }
}

#[test]
fn fan_in_answers_every_request_once_to_the_client_that_sent_it() {
    for mode in ["threads", "processes"] {
        let v = run_json(&[
            "latency",
            "pipe",
            "fifo",
            "unix",
            "tcp",
            "unix-seqpacket",
            "unix-dgram",
            "udp",
            "posix-mq",
            "sysv-msg",
            "shm",
            "--clients",
            "3",
            "--mode",
            mode,
            "--sizes",
            "64",
            "-n",
            "300",
            "--repeat",
            "2",
            "--verify",
        ]);
        let cases = v["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 10);
        for c in cases {
            assert_eq!(c["status"], "ok", "{mode} {c}");
            assert_eq!(c["pairs"]["fan_in"], true);
            // Each in its natural many-to-one form, named in the record.
            let form = c["options"]["fan_in"].as_str().unwrap();
            let want = match c["mechanism"].as_str().unwrap() {
                "sysv-msg" => "one request queue",
                "shm" => "spins over every client's ring",
                _ => "polls every client's descriptor",
            };
            assert!(form.contains(want), "{mode} {form}");
            assert_eq!(c["pairs"]["count"], 3);
            // Every client got exactly its 2 x 300 answers, each checked byte by
            // byte against what it sent (an answer sent to another client would
            // fail its check, or leave one waiting).
            for p in per_pair(c) {
                assert_eq!(p["blocks"], 600, "{mode} {p}");
            }
            assert_eq!(c["round_trips"], 1800, "{mode} {c}");
            // The one server's CPU time is counted once per series.
            for s in c["series"].as_array().unwrap() {
                assert!(s["reader_cpu_ns"].as_u64().unwrap() > 0, "{s}");
            }
            assert!(c["placement"]["label"]
                .as_str()
                .unwrap()
                .starts_with("3 clients→1"));
        }
    }
}

/// A server process gets every client's descriptors, more than one message of
/// SCM_RIGHTS carries: 64 clients of pipe (four descriptors a client), unix,
/// posix-mq and shm all answer every request, verified, in processes mode.
#[test]
fn fan_in_of_64_clients_in_processes_mode() {
    let v = run_json(&[
        "latency",
        "pipe",
        "unix",
        "posix-mq",
        "shm",
        "--clients",
        "64",
        "--mode",
        "processes",
        "--sizes",
        "64",
        "-n",
        "40",
        "--repeat",
        "1",
        "--verify",
    ]);
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 4);
    for c in cases {
        assert_eq!(c["status"], "ok", "{c}");
        assert_eq!(c["pairs"]["count"], 64);
        let pp = per_pair(c);
        assert_eq!(pp.len(), 64);
        for p in pp {
            assert_eq!(p["blocks"], 40, "{p}");
        }
        assert_eq!(c["round_trips"], 64 * 40, "{c}");
    }
}

/// The shm server takes a client's new request as word that its last answer was
/// read whole (it then writes without looking at that client's read cursor):
/// answers many times the ring's size, multi-record ones among them, all arrive
/// checked byte by byte.
#[test]
fn fan_in_shm_answers_arrive_whole_through_many_ring_wraps() {
    for mode in ["threads", "processes"] {
        let v = run_json(&[
            "latency",
            "shm",
            "--clients",
            "2",
            "--mode",
            mode,
            "--sizes",
            "100,40k",
            "-n",
            "400",
            "--repeat",
            "1",
            "--verify",
        ]);
        let cases = v["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 2, "{mode}");
        for c in cases {
            assert_eq!(c["status"], "ok", "{mode} {c}");
            for p in per_pair(c) {
                assert_eq!(p["blocks"], 400, "{mode} {p}");
            }
        }
    }
}

#[test]
fn fan_in_without_a_server_form_is_refused_and_a_dead_server_ends_it_in_2s() {
    let out = Command::new(BIN)
        .args(["latency", "eventfd", "--clients", "2"])
        .env("IPCPERF_NO_SAVE", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("eventfd has no such form"), "{err}");

    // Each form: a polling, a shared-queue and a sweeping server.
    for mech in ["unix", "sysv-msg", "shm"] {
        let tmp = tempfile::tempdir().unwrap();
        let args = [
            "latency",
            mech,
            "--mode",
            "processes",
            "--clients",
            "3",
            "--sizes",
            "64",
        ];
        // One server process for three clients.
        let h = hit_midway(&args, 1, tmp.path(), |_, kids| {
            ipcperf_sys::signal::kill(kids[0] as i32)
        });
        assert!(h.took < Duration::from_secs(2), "{mech}: {}", h.err);
        assert_eq!(h.code, Some(1), "{mech}: {}", h.err);
        assert!(
            h.err.contains("SIGKILL") || h.err.contains("closed") || h.err.contains("gone"),
            "{mech}: {}",
            h.err
        );
        // Its queues went with it.
        let left: Vec<_> = ipcperf_sys::sysv_msg::list()
            .into_iter()
            .filter(|q| ipcperf_sys::sysv_msg::owner_of_key(q.key) == Some(h.pid as i32))
            .collect();
        assert!(left.is_empty(), "{mech}: {left:?}");
    }
}

#[test]
fn fan_out_delivers_every_block_to_every_reader_verified() {
    for mode in ["threads", "processes"] {
        let v = run_json(&[
            "run",
            "pipe",
            "fifo",
            "unix",
            "tcp",
            "unix-seqpacket",
            "unix-dgram",
            "shm",
            "--subscribers",
            "3",
            "--mode",
            mode,
            "--sizes",
            "4k",
            "-n",
            "2000",
            "--repeat",
            "2",
            "--verify",
        ]);
        let mut cases = v["cases"].as_array().unwrap().clone();
        assert_eq!(cases.len(), 7);
        // The ring's other ways of waiting for the slowest reader.
        for wake in ["spin", "adaptive"] {
            let v = run_json(&[
                "run",
                "shm",
                "--wake",
                wake,
                "--subscribers",
                "3",
                "--mode",
                mode,
                "--sizes",
                "4k",
                "-n",
                "2000",
                "--repeat",
                "2",
                "--verify",
            ]);
            cases.extend(v["cases"].as_array().unwrap().iter().cloned());
        }
        for c in &cases {
            assert_eq!(c["status"], "ok", "{mode} {c}");
            assert_eq!(c["pairs"]["fan_out"], true);
            if c["mechanism"] == "shm" {
                // One ring, read whole by every reader.
                let form = c["options"]["fan_out"].as_str().unwrap();
                assert!(form.contains("one ring, 3 readers"), "{form}");
            }
            // Each reader checked every byte of all 2 x 2000 blocks.
            for p in per_pair(c) {
                assert_eq!(p["blocks"], 4000, "{mode} {p}");
                assert_eq!(p["bytes"], 4000 * 4096, "{mode} {p}");
            }
            for s in c["series"].as_array().unwrap() {
                assert_eq!(s["bytes"], 3 * 2000 * 4096, "{s}");
            }
            assert!(c["placement"]["label"]
                .as_str()
                .unwrap()
                .starts_with("1→3 readers"));
        }
    }
    // A reader killed mid-series: the writer's case ends within 2 s, no reader
    // left (the ring's writer waits for the slowest reader: the dead one).
    for mech in ["unix", "shm"] {
        let tmp = tempfile::tempdir().unwrap();
        let args = [
            "run",
            mech,
            "--mode",
            "processes",
            "--subscribers",
            "3",
            "--sizes",
            "4k",
        ];
        let h = hit_midway(&args, 3, tmp.path(), |_, kids| {
            ipcperf_sys::signal::kill(kids[2] as i32)
        });
        assert!(h.took < Duration::from_secs(2), "{mech}: {}", h.err);
        assert_eq!(h.code, Some(1), "{mech}: {}", h.err);
    }
    // A wake that rouses one waiter per post cannot serve many readers: refused.
    let out = Command::new(BIN)
        .args(["run", "shm", "--wake", "eventfd", "--subscribers", "2"])
        .args(["--sizes", "4k", "-n", "100"])
        .env("IPCPERF_NO_SAVE", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("wakes one waiter per post"), "{err}");
}

#[test]
fn fan_in_measures_one_way_at_the_server_for_every_request() {
    for mode in ["threads", "processes"] {
        let v = run_json(&[
            "latency",
            "unix",
            "pipe",
            "--clients",
            "3",
            "--mode",
            mode,
            "--sizes",
            "64",
            "-n",
            "300",
            "--repeat",
            "2",
            "--one-way",
            "--verify",
        ]);
        for c in v["cases"].as_array().unwrap() {
            assert_eq!(c["status"], "ok", "{mode} {c}");
            // Every request of every client, stamped by its client, timed by the server.
            assert_eq!(c["one_way"]["samples"], 1800, "{mode} {c}");
            let (w, rtt) = (
                c["one_way"]["p50_ns"].as_u64().unwrap(),
                c["p50_ns"].as_u64().unwrap(),
            );
            assert!(
                w > 0 && w as f64 <= rtt as f64 * 1.01,
                "one-way {w} RTT {rtt}"
            );
        }
    }
}
