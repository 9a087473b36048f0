//! `--across`: the peer in fresh namespaces (root only; each test says why it
//! skips otherwise). Bytes verified across each kind; the peer really is in other
//! namespaces; what does not cross is refused with the reason; `list --across`
//! checks each mechanism here; advise leaves out what does not cross.

mod common;
use common::run_json;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ipcperf");

/// The first child of process `p`, waited for (at most 10 s).
fn child_of(p: &str) -> String {
    let t0 = Instant::now();
    loop {
        let kids =
            std::fs::read_to_string(format!("/proc/{p}/task/{p}/children")).unwrap_or_default();
        if let Some(c) = kids.split_whitespace().next() {
            return c.to_string();
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "no child of {p}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn root() -> bool {
    // The owner of our own /proc entry.
    let ok =
        std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0);
    if !ok {
        eprintln!("skipped: --across needs root (unshare takes CAP_SYS_ADMIN)");
    }
    ok
}

#[test]
fn bytes_cross_every_kind_and_what_does_not_cross_is_refused() {
    if !root() {
        return;
    }
    let v = run_json(&[
        "latency",
        "pipe",
        "unix",
        "fifo",
        "shm",
        "unix-seqpacket",
        "sysv-msg",
        "posix-mq",
        "tcp",
        "udp",
        "signal",
        "--across",
        "uts,mnt,ipc,net,pid",
        "--sizes",
        "4",
        "-n",
        "300",
        "-r",
        "1",
        "--verify",
    ]);
    for c in v["cases"].as_array().unwrap() {
        let m = c["mechanism"].as_str().unwrap();
        match m {
            // tcp and udp cross too, over a veth pair (udp's peer makes its own
            // socket there and says hello).
            "sysv-msg" | "posix-mq" => {
                assert_eq!(c["status"], "refused", "{c}");
                let why = c["message"].as_str().unwrap();
                assert!(why.contains("across ipc"), "{m}: {why}");
            }
            // A pid names a process in its own PID namespace.
            "signal" => {
                assert_eq!(c["status"], "refused", "{c}");
                let why = c["message"].as_str().unwrap();
                assert!(why.contains("across pid"), "{m}: {why}");
            }
            _ => {
                assert_eq!(c["status"], "ok", "{c}");
                assert_eq!(c["round_trips"], 300, "{c}");
                assert_eq!(c["options"]["across"], "net,ipc,mnt,uts,pid", "{c}");
                if m == "udp" || m == "tcp" {
                    assert!(
                        c["options"]["path"].as_str().unwrap().starts_with("veth"),
                        "{c}"
                    );
                }
            }
        }
    }
    // Threads share their process's namespaces: refused, with why.
    let out = Command::new(BIN)
        .args([
            "latency", "pipe", "--across", "net", "--mode", "threads", "-n", "10",
        ])
        .args(["--no-save"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--mode processes"), "{err}");
    // Kinds not offered: one line, exit 2.
    for (kind, want) in [
        ("cgroup", "net, ipc, mnt, uts, pid or user"),
        ("time", "net, ipc, mnt, uts, pid or user"),
    ] {
        let out = Command::new(BIN)
            .args(["latency", "pipe", "--across", kind, "--no-save"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "{err}");
    }
}

/// The peer process's namespaces are not ours, of each kind asked.
/// The layered mechanisms cross every kind by their base's means; where the
/// peer finds its end by a path (ZeroMQ's ipc:// path, iceoryx2's root folder),
/// that directory is bind-mounted across mnt (gRPC's socket path too). ipc-channel's one-shot socket is
/// in a temp folder of the crate's own: refused across mnt, with why.
#[test]
fn libraries_and_io_uring_cross_every_kind_they_claim() {
    if !root() {
        return;
    }
    let mut args = vec![
        "latency",
        "uring-unix",
        "uring-tcp",
        "uring-pipe",
        "ipc-channel",
    ];
    if cfg!(feature = "zmq") {
        args.push("zmq-ipc");
    }
    if cfg!(feature = "iceoryx2") {
        args.push("iceoryx2");
    }
    if cfg!(feature = "grpc") {
        args.push("grpc-uds");
    }
    args.extend([
        "--across",
        "uts,mnt,ipc,net,pid",
        "--sizes",
        "100",
        "-n",
        "200",
        "-r",
        "1",
        "--verify",
    ]);
    let v = run_json(&args);
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(
        cases.len(),
        args.iter().take_while(|a| **a != "--across").count() - 1
    );
    for c in cases {
        let m = c["mechanism"].as_str().unwrap();
        if m == "ipc-channel" {
            assert_eq!(c["status"], "refused", "{c}");
            assert!(c["message"].as_str().unwrap().contains("across mnt"), "{c}");
        } else {
            assert_eq!(c["status"], "ok", "{c}");
            assert_eq!(c["round_trips"], 200, "{c}");
        }
    }
}

#[test]
fn the_peer_runs_in_namespaces_of_its_own() {
    if !root() {
        return;
    }
    let mut child = Command::new(BIN)
        .args([
            "latency",
            "pipe",
            "--across",
            "net,ipc,mnt,uts,pid",
            "-d",
            "30s",
            "-r",
            "1",
        ])
        .args(["--no-save", "-q"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // A new PID namespace holds the children of the process that made it: the
    // peer process forks once, and its child (PID 1 there) is the peer.
    let first = child_of(&pid.to_string());
    let peer = child_of(&first);
    std::thread::sleep(Duration::from_millis(200));
    for kind in ["net", "ipc", "mnt", "uts", "pid"] {
        let ours = std::fs::read_link(format!("/proc/{pid}/ns/{kind}")).unwrap();
        let theirs = std::fs::read_link(format!("/proc/{peer}/ns/{kind}")).unwrap();
        assert_ne!(ours, theirs, "{kind}: the peer shares ipcperf's namespace");
    }
    // Its own /tmp: empty (a pipe has no directory to share), ours untouched.
    let theirs: Vec<_> = std::fs::read_dir(format!("/proc/{peer}/root/tmp"))
        .unwrap()
        .collect();
    assert!(theirs.is_empty(), "{theirs:?}");
    // PID 1 in its namespace.
    let status = std::fs::read_to_string(format!("/proc/{peer}/status")).unwrap();
    let nspid = status.lines().find(|l| l.starts_with("NSpid:")).unwrap();
    assert!(nspid.trim_end().ends_with("\t1"), "{nspid}");
    // The kind the peer was not given stays shared.
    let ours = std::fs::read_link(format!("/proc/{pid}/ns/cgroup")).unwrap();
    let theirs = std::fs::read_link(format!("/proc/{peer}/ns/cgroup")).unwrap();
    assert_eq!(ours, theirs);
    ipcperf_sys::signal::interrupt(pid as i32);
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(130));
    // The peer went with it (a zombie waiting for init to reap it is gone too).
    let gone = || {
        [&first, &peer].iter().all(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .map(|s| {
                    s.rsplit_once(')')
                        .is_none_or(|(_, r)| r.trim_start().starts_with('Z'))
                })
                .unwrap_or(true)
        })
    };
    let t = Instant::now();
    while !gone() && t.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(gone(), "the peer {peer} outlived the run");
}

/// `list --across` tries each mechanism here: what crosses, what the rules refuse
/// and what happened when it tried anyway.
#[test]
fn list_across_checks_each_mechanism_here_and_advise_leaves_out_what_does_not_cross() {
    if !root() {
        return;
    }
    let out = Command::new(BIN)
        .args(["list", "--across", "ipc", "-f", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = |m: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|r| r["mechanism"] == m)
            .unwrap()
            .clone()
    };
    assert_eq!(row("pipe")["crosses"], true);
    assert_eq!(row("shm")["crosses"], true);
    // SysV: refused by the rule, and here the peer could not reach the queue.
    let sysv = row("sysv-msg");
    assert_eq!(sysv["crosses"], false);
    assert!(
        sysv["checked"].as_str().unwrap().starts_with("failed"),
        "{sysv}"
    );
    // POSIX mq: refused although a passed descriptor works (containers share none).
    let mq = row("posix-mq");
    assert_eq!(mq["crosses"], false);
    assert!(mq["rule"].as_str().unwrap().contains("descriptor"), "{mq}");
    assert!(mq["checked"].as_str().unwrap().contains("verified"), "{mq}");

    let out = Command::new(BIN)
        .args([
            "advise",
            "--quick",
            "--only",
            "pipe,sysv-msg",
            "--across",
            "ipc",
        ])
        .args(["--placement", "same-cpu", "--no-save"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("First choice: pipe"), "{text}");
    assert!(text.contains("left out: sysv-msg"), "{text}");
    assert!(text.contains("IPC namespace"), "{text}");
}

/// TCP across a network namespace runs over a veth pair made for it (the path is
/// in the record), which goes with the run; one left by a killed run is removed
/// by `ipcperf clean`.
#[test]
fn tcp_crosses_a_network_namespace_over_a_veth_pair_and_leaves_nothing() {
    if !root() {
        return;
    }
    let has_ip = Command::new("ip")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_ip {
        eprintln!("skipped: iproute2's ip is not installed");
        return;
    }
    let netns = || -> Vec<String> {
        std::fs::read_dir("/run/netns")
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let v = run_json(&[
        "latency", "tcp", "--across", "net", "--sizes", "64", "-n", "500", "-r", "1", "--verify",
    ]);
    let c = &v["cases"][0];
    assert_eq!(c["status"], "ok", "{c}");
    assert_eq!(c["round_trips"], 500);
    let path = c["options"]["path"].as_str().unwrap();
    assert!(path.starts_with("veth ") && path.contains("MTU"), "{path}");
    let v = run_json(&[
        "run", "tcp", "--across", "net", "--sizes", "64k", "-n", "200", "-r", "1", "--verify",
    ]);
    assert_eq!(v["cases"][0]["status"], "ok", "{}", v["cases"][0]);
    // Nothing of ours is left (other tests may be running theirs).
    let pid_of = |n: &str| n.split('-').nth(1).and_then(|p| p.parse::<u32>().ok());
    let alive = |p: u32| std::path::Path::new(&format!("/proc/{p}")).exists();
    assert!(
        netns()
            .iter()
            .all(|n| !n.starts_with("ipcperf-") || pid_of(n).is_some_and(alive)),
        "{:?}",
        netns()
    );

    // A run killed outright leaves its namespace; clean removes it.
    let mut child = Command::new(BIN)
        .args([
            "latency",
            "tcp",
            "--across",
            "net",
            "-d",
            "30s",
            "-r",
            "1",
            "--no-save",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mine = format!("ipcperf-{pid}-");
    let t0 = Instant::now();
    while !netns().iter().any(|n| n.starts_with(&mine)) {
        assert!(t0.elapsed() < Duration::from_secs(10), "no namespace made");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    ipcperf_sys::signal::kill(pid as i32);
    child.wait().unwrap();
    assert!(netns().iter().any(|n| n.starts_with(&mine)));
    let out = Command::new(BIN).arg("clean").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("network namespace"), "{text}");
    assert!(
        !netns().iter().any(|n| n.starts_with(&mine)),
        "{:?}",
        netns()
    );
}

/// Across mnt, the peer's /tmp is a tmpfs of its own holding only the case's
/// directory, bind-mounted: what a container given one shared directory sees.
#[test]
fn across_mnt_the_peer_sees_only_the_shared_directory() {
    if !root() {
        return;
    }
    let mut child = Command::new(BIN)
        .args(["latency", "unix", "--across", "mnt", "-d", "30s", "-r", "1"])
        .args(["--no-save", "-q"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let peer = child_of(&pid.to_string());
    std::thread::sleep(Duration::from_millis(300));
    let theirs: Vec<String> = std::fs::read_dir(format!("/proc/{peer}/root/tmp"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(theirs.len(), 1, "{theirs:?}");
    assert!(
        theirs[0].starts_with(&format!("ipcperf-{pid}-")),
        "{theirs:?}"
    );
    // The same directory on our side, with the socket in it.
    let ours = std::path::Path::new("/tmp").join(&theirs[0]);
    assert!(ours.is_dir());
    assert!(std::fs::read_dir(&ours).unwrap().next().is_some());
    ipcperf_sys::signal::interrupt(pid as i32);
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(!ours.exists(), "{ours:?} left behind");
}

/// Without root, a user namespace of the peer's own carries the others (its one
/// uid and gid mapped to ours): run as nobody, verified round trips across
/// user,ipc,mnt,uts,pid; without user, one line and exit 2; tcp across net
/// (a veth pair) refused with the reason.
#[test]
fn without_root_a_user_namespace_carries_the_others() {
    if !root() {
        return;
    }
    let nobody = |args: &[&str]| {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN])
            .args(args)
            .args(["--no-save"])
            .env_remove("IPCPERF_DB")
            .env("TMPDIR", "/tmp")
            .output()
    };
    let Ok(out) = nobody(&[
        "latency",
        "pipe",
        "unix",
        "fifo",
        "shm",
        "sysv-msg",
        "--across",
        "user,ipc,mnt,uts,pid",
        "--sizes",
        "64",
        "-n",
        "200",
        "-r",
        "1",
        "--verify",
        "-f",
        "json",
    ]) else {
        eprintln!("skipped: setpriv (util-linux) is not installed");
        return;
    };
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("Operation not permitted") && err.contains("namespace") {
        eprintln!("skipped: this kernel lets no unprivileged user make a user namespace: {err}");
        return;
    }
    assert!(out.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for c in v["cases"].as_array().unwrap() {
        if c["mechanism"] == "sysv-msg" {
            assert_eq!(c["status"], "refused", "{c}");
        } else {
            assert_eq!(c["status"], "ok", "{c}");
            assert_eq!(c["round_trips"], 200, "{c}");
            assert_eq!(c["options"]["across"], "ipc,mnt,uts,pid,user", "{c}");
        }
    }
    let out = nobody(&["latency", "pipe", "--across", "ipc", "-n", "10"]).unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("add user"), "{err}");
    let out = nobody(&["latency", "tcp", "--across", "user,net", "-n", "10"]).unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("takes root"), "{err}");
}

/// `list --across` in each document format: CSV a row per mechanism and kind
/// (as JSON), markdown the table's columns; the metrics formats refused at once,
/// before any peer is started.
#[test]
fn list_across_writes_each_format_asked_for() {
    if !root() {
        return;
    }
    let run = |f: &str| {
        Command::new(BIN)
            .args(["list", "--across", "ipc", "-f", f])
            .output()
            .unwrap()
    };
    let out = run("csv");
    let csv = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{csv}");
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("mechanism,namespace,crosses,rule,checked")
    );
    assert!(
        lines.any(|l| l.starts_with("sysv-msg,ipc,false,") && l.contains(",failed")),
        "{csv}"
    );
    assert!(
        csv.contains("\npipe,ipc,true,,50 verified round trips\n"),
        "{csv}"
    );

    let out = run("markdown");
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{md}");
    assert!(
        md.starts_with("| mechanism | reaches its peer by | across ipc |\n|---|---|---|\n"),
        "{md}"
    );
    assert!(!md.contains("+---"), "a console table in markdown: {md}");

    let t0 = Instant::now();
    let out = run("openmetrics");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not the namespace crossings"));
    assert!(out.stdout.is_empty());
    // Refused before the probes (which take seconds), not after them.
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
}

/// zmq-tcp across net: its peer, in a network namespace whose loopback is not
/// ours, has no route to the owner's endpoint and says so as it opens (libzmq
/// would retry its connect in silence until the 5 s open bound ran out).
#[cfg(feature = "zmq")]
#[test]
fn zmq_tcp_across_net_says_it_has_no_route_at_once() {
    if !root() {
        return;
    }
    let out = Command::new(BIN)
        .args(["list", "--across", "net", "-f", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cell = v
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["mechanism"] == "zmq-tcp")
        .unwrap_or_else(|| panic!("no zmq-tcp: {v}"));
    assert_eq!(cell["crosses"], false, "{cell}");
    let checked = cell["checked"].as_str().unwrap();
    assert!(checked.contains("no route to tcp://127.0.0.1:"), "{cell}");
}

/// `list --across` makes what a run makes (a SysV queue, a FIFO's directory, a
/// network namespace and its veth pair): Ctrl-C while a queue of its is there
/// removes it and ends the command 130, as for a run (it used to die at once and
/// leave the queue for `ipcperf clean`).
#[test]
fn list_across_interrupted_removes_what_it_made() {
    if !root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(["list", "--across", "net", "-f", "json"])
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let ours = || {
        ipcperf_sys::sysv_msg::list()
            .into_iter()
            .filter(|q| ipcperf_sys::sysv_msg::owner_of_key(q.key) == Some(pid as i32))
            .map(|q| q.id)
            .collect::<Vec<_>>()
    };
    // The sysv-msg cell: its queue is in our IPC namespace (the peer's is a new
    // network namespace only).
    let t0 = Instant::now();
    while ours().is_empty() {
        assert!(
            child.try_wait().unwrap().is_none() && t0.elapsed() < Duration::from_secs(30),
            "no SysV queue of run {pid} seen"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    ipcperf_sys::signal::interrupt(pid as i32);
    let t1 = Instant::now();
    let st = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(t1.elapsed() < Duration::from_secs(2), "{:?}", t1.elapsed());
    assert_eq!(st.code(), Some(130), "{st}: {err}");
    assert!(err.contains("interrupted by SIGINT"), "{err}");
    assert!(ours().is_empty(), "left: SysV queues {:?}", ours());
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    let netns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let netns = String::from_utf8_lossy(&netns.stdout);
    assert!(
        !netns.contains(&format!("ipcperf-{pid}-")),
        "left a network namespace: {netns}"
    );
}
