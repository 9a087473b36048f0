//! `--wait`: each side waits as asked (a blocking call, poll, epoll, an io_uring
//! completion, a spin), the bytes still arrive whole, the wait is named, and a
//! mechanism that cannot wait a way is refused before it runs.

mod common;

use std::process::Command;

use common::{bad_input, have, run_json};

fn cases(v: &serde_json::Value) -> &Vec<serde_json::Value> {
    v["cases"].as_array().unwrap()
}

#[test]
fn every_wait_carries_verified_round_trips_and_is_named() {
    let v = run_json(&[
        "latency",
        "pipe",
        "fifo",
        "unix",
        "tcp",
        "unix-seqpacket",
        "udp",
        "--wait",
        "poll,epoll,busy,poll/epoll,try-poll/try-epoll",
        "--sizes",
        "3000",
        "-n",
        "200",
        "-r",
        "1",
        "--verify",
        "--mode",
        "processes",
    ]);
    let cs = cases(&v);
    assert_eq!(cs.len(), 6 * 5, "{v}");
    let mut seen = std::collections::BTreeSet::new();
    for c in cs {
        assert_eq!(c["status"], "ok", "{c}");
        assert_eq!(c["payload"], "verify", "{c}");
        assert_eq!(c["round_trips"], 200, "{c}");
        let wait = c["wait"].as_str().unwrap().to_string();
        seen.insert(wait.clone());
        if wait == "busy" {
            // Neither side ever sleeps: no voluntary switch in the series.
            for s in c["series"].as_array().unwrap() {
                for side in ["writer_counts", "reader_counts"] {
                    assert_eq!(s[side]["voluntary_switches"], 0, "{side}: {c}");
                }
            }
        }
    }
    let want: std::collections::BTreeSet<String> =
        ["poll", "epoll", "busy", "poll/epoll", "try-poll/try-epoll"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    assert_eq!(seen, want);
}

#[test]
fn streams_wait_as_asked_and_deliver_every_byte() {
    let v = run_json(&[
        "run",
        "pipe",
        "unix",
        "tcp",
        "--wait",
        "epoll,busy/poll",
        "--sizes",
        "64k",
        "-n",
        "64",
        "-r",
        "1",
        "--verify",
        "--mode",
        "processes",
    ]);
    let cs = cases(&v);
    assert_eq!(cs.len(), 6, "{v}");
    for c in cs {
        assert_eq!(c["status"], "ok", "{c}");
        assert!(
            ["epoll", "busy/poll"].contains(&c["wait"].as_str().unwrap()),
            "{c}"
        );
        for s in c["series"].as_array().unwrap() {
            assert_eq!(s["bytes"], 64 * 65536, "{c}");
        }
    }
}

/// The system calls each side made, counted by strace over a run.
fn calls(args: &[&str]) -> std::collections::BTreeMap<String, u64> {
    let out = Command::new("strace")
        .args(["-f", "-qq", "-c", "-e"])
        .arg("trace=epoll_wait,epoll_pwait,epoll_pwait2,poll,ppoll")
        .arg(env!("CARGO_BIN_EXE_ipcperf"))
        .args(args)
        .env("IPCPERF_NO_SAVE", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // strace -c's table: % time, seconds, usecs/call, calls, [errors,] syscall.
    err.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let name = f.last()?;
            let n = f.get(3)?.parse().ok()?;
            (f.len() >= 5 && name.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
                .then(|| (name.to_string(), n))
        })
        .collect()
}

#[test]
fn a_client_in_poll_and_a_server_in_epoll_make_those_calls() {
    if !have("strace") {
        eprintln!("skipped: strace is not installed (.ci/run installs it)");
        return;
    }
    let base = [
        "latency",
        "unix",
        "-n",
        "300",
        "-r",
        "1",
        "--mode",
        "processes",
    ];
    let blocking = calls(&base);
    assert_eq!(blocking.get("epoll_wait"), None, "{blocking:?}");
    let mut apart = base.to_vec();
    apart.extend(["--wait", "poll/epoll"]);
    let c = calls(&apart);
    // Each of the 300 timed round trips: one poll on the client, one
    // epoll_wait on the server (and as many in the warm-up).
    assert!(c.get("epoll_wait").copied().unwrap_or(0) >= 300, "{c:?}");
    let polls = c.get("poll").copied().unwrap_or(0) + c.get("ppoll").copied().unwrap_or(0);
    let polls_blocking =
        blocking.get("poll").copied().unwrap_or(0) + blocking.get("ppoll").copied().unwrap_or(0);
    assert!(polls >= polls_blocking + 300, "{c:?} against {blocking:?}");
    // Reading first: each side's read finds nothing at least once a round
    // trip (EAGAIN), then waits; waiting first, no read fails.
    let failed_reads = |w: &str| {
        let out = Command::new("strace")
            .args(["-f", "-qq", "-c", "-e", "trace=read"])
            .arg(env!("CARGO_BIN_EXE_ipcperf"))
            .args(base)
            .args(["--wait", w])
            .env("IPCPERF_NO_SAVE", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        let row = err
            .lines()
            .find(|l| l.trim_end().ends_with(" read"))
            .unwrap_or("");
        let f: Vec<&str> = row.split_whitespace().collect();
        // % time, seconds, usecs/call, calls, errors, syscall: errors only
        // where some call failed.
        if f.len() == 6 {
            f[4].parse::<u64>().unwrap()
        } else {
            0
        }
    };
    assert!(failed_reads("try-poll/try-epoll") >= 600);
    assert!(failed_reads("poll/epoll") < 50);
    // A datagram socket waits the same way: both sides in epoll_wait each
    // round trip.
    let udp = calls(&[
        "latency",
        "udp",
        "-n",
        "300",
        "-r",
        "1",
        "--mode",
        "processes",
        "--wait",
        "epoll",
    ]);
    assert!(
        udp.get("epoll_wait").copied().unwrap_or(0) >= 600,
        "{udp:?}"
    );
}

#[test]
fn uring_runs_the_io_uring_twin_under_its_own_name() {
    let v = run_json(&[
        "latency", "unix", "--wait", "uring", "-n", "100", "-r", "1", "--verify",
    ]);
    let c = &cases(&v)[0];
    // Refused where io_uring is not allowed (a container's seccomp): said so.
    assert_eq!(c["mechanism"], "uring-unix", "{c}");
    assert!(c["status"] == "ok" || c["status"] == "refused", "{c}");
}

#[test]
fn a_mechanism_that_cannot_wait_a_way_is_refused_before_it_runs() {
    bad_input(
        &["latency", "sysv-msg", "--wait", "epoll", "-n", "10"],
        "sysv-msg cannot wait by epoll (it waits its own way)",
    );
    bad_input(
        &["latency", "shm", "--wait", "poll", "-n", "10"],
        "shm cannot wait by poll (the ring wakes its own way: --wake)",
    );
    bad_input(
        &["latency", "pipe", "--wait", "spin"],
        "unknown wait 'spin'",
    );
    bad_input(
        &["latency", "pipe", "--wait", "uring/block"],
        "uring waits on both sides",
    );
    bad_input(
        &["latency", "pipe", "--wait", "busy", "--busy-poll"],
        "--wait busy/block",
    );
    bad_input(
        &[
            "run", "pipe", "--wait", "epoll", "--mode", "single", "-n", "4",
        ],
        "single mode has one side",
    );
    // Named beside one that can, it is still said before anything runs.
    bad_input(
        &[
            "latency",
            "pipe",
            "sysv-msg",
            "--wait",
            "block,epoll",
            "-n",
            "50",
        ],
        "sysv-msg processes 512 B cannot run: sysv-msg cannot wait by epoll",
    );
}

#[test]
fn list_says_which_waits_each_mechanism_takes() {
    let v = run_json(&["list", "unix"]);
    assert_eq!(
        v["waits"],
        serde_json::json!(["block", "poll", "epoll", "try-poll", "try-epoll", "busy"]),
        "{v}"
    );
    assert!(v["waits_text"]
        .as_str()
        .unwrap()
        .contains("uring (runs uring-unix)"));
    let shm = run_json(&["list", "shm"]);
    assert!(
        shm["waits_text"].as_str().unwrap().contains("--wake"),
        "{shm}"
    );
}

#[test]
fn a_replay_waits_as_asked() {
    let out = Command::new(env!("CARGO_BIN_EXE_ipcperf"))
        .args([
            "replay",
            "--size-dist",
            "lognormal:300,2",
            "--gaps",
            "poisson:5k",
        ])
        .args([
            "--for",
            "200ms",
            "unix",
            "--wait",
            "epoll,try-poll/try-epoll",
        ])
        .env("IPCPERF_NO_SAVE", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The same pattern carried whole under both waits: as many messages each
    // (the column found by its header: a mode and placement every row shares
    // are in the title, not columns).
    let col = text
        .lines()
        .find(|l| l.starts_with("| mechanism "))
        .and_then(|h| h.split('|').position(|c| c.trim() == "messages"))
        .unwrap_or_else(|| panic!("no messages column: {text}"));
    let messages: Vec<u64> = ["| unix (epoll) ", "| unix (try-poll/try-epoll) "]
        .iter()
        .map(|row| {
            let line = text
                .lines()
                .find(|l| l.starts_with(row))
                .unwrap_or_else(|| panic!("{row}: {text}"));
            // "5×10001": passes × messages a pass.
            let cell = line.split('|').nth(col).unwrap().trim();
            cell.split('×').map(|n| n.parse::<u64>().unwrap()).product()
        })
        .collect();
    assert!(
        messages[0] > 0 && messages[0] == messages[1],
        "{messages:?}: {text}"
    );
}

/// `--clients N` with `--wait CLIENT/SERVER`: the clients wait for their
/// answers as asked and the server for any client as asked (epoll_wait on one
/// instance, or a poll that never sleeps), every answer still verified; the
/// server's wait is named in the record; a server told to block in one client's
/// read is refused before anything runs.
#[test]
fn a_fan_in_server_and_its_clients_wait_as_asked() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        println!("skipped: one CPU");
        return;
    }
    bad_input(
        &["latency", "unix", "--clients", "2", "--wait", "block"],
        "--wait block with --clients: the server waits for any of its clients in one call",
    );
    let v = run_json(&[
        "latency",
        "unix",
        "tcp",
        "--clients",
        "2",
        "--wait",
        "poll/epoll",
        "-n",
        "200",
        "-r",
        "1",
        "--verify",
    ]);
    for c in cases(&v) {
        assert_eq!(c["status"], "ok", "{c}");
        assert_eq!(c["wait"], "poll/epoll", "{c}");
        let fan_in = c["options"]["fan_in"].as_str().unwrap_or("");
        assert!(fan_in.contains("epoll_wait"), "{c}");
    }
    if !have("strace") {
        eprintln!("skipped the system calls' half: strace is not installed (.ci/run installs it)");
        return;
    }
    let base = [
        "latency",
        "unix",
        "--clients",
        "2",
        "-n",
        "300",
        "-r",
        "1",
        "--mode",
        "processes",
    ];
    let mut apart = base.to_vec();
    apart.extend(["--wait", "poll/epoll"]);
    let c = calls(&apart);
    // 600 requests in all (and the warm-up's): the server waits in epoll_wait
    // at least once for every two (two clients may be ready at once), each
    // client in poll(2) once a round trip.
    assert!(c.get("epoll_wait").copied().unwrap_or(0) >= 300, "{c:?}");
    let polls = c.get("poll").copied().unwrap_or(0) + c.get("ppoll").copied().unwrap_or(0);
    assert!(polls >= 600, "{c:?}");
    // The default server polls and never calls epoll_wait.
    let plain = calls(&base);
    assert_eq!(plain.get("epoll_wait"), None, "{plain:?}");
}
