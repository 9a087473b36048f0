//! `ipcperf serve` and `--peer`, over loopback: verified bytes with a token, a
//! wrong or missing token refused, a second client told "busy" and waiting its
//! turn (hostile clients: `serve_hostile.rs`), a
//! killed client freeing the server, and a killed server an error on the client
//! within 2 s.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::run_json;

use common::server::{good_run, ipcperf, token_file, Server, BIN};

#[test]
fn a_run_through_the_server_is_verified_and_a_wrong_token_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path(), "t", "s3cret");
    let s = Server::start(Some(&token), &[]);
    good_run(&s, &token);
    let j = run_json(&[
        "latency",
        "tcp",
        "--peer",
        &s.peer(),
        "--token-file",
        token.to_str().unwrap(),
        "--sizes",
        "64",
        "-d",
        "50ms",
        "--repeat",
        "2",
        "--verify",
        "--peer-pin",
        "1",
    ]);
    assert_eq!(j["cases"][0]["status"], "ok", "{}", j["cases"][0]);
    // The peer ran where --peer-pin put it, on the other machine.
    let p = &j["cases"][0]["placement"];
    assert_eq!(p["reader_cpu"], 1, "{p}");
    assert_eq!(p["seen_reader_cpu"], 1, "{p}");
    assert!(j["cases"][0]["round_trips"].as_u64().unwrap() > 0);
    // udp: the peer makes its own socket there and says hello; verified both ways,
    // and a stream's loss counted.
    let j = run_json(&[
        "latency",
        "udp",
        "--peer",
        &s.peer(),
        "--token-file",
        token.to_str().unwrap(),
        "--sizes",
        "64,1k",
        "-n",
        "300",
        "--repeat",
        "2",
        "--verify",
    ]);
    for c in j["cases"].as_array().unwrap() {
        assert_eq!(c["status"], "ok", "{c}");
        assert_eq!(
            c["round_trips"].as_u64().unwrap() + c["round_trips_lost"].as_u64().unwrap(),
            600,
            "{c}"
        );
    }
    let j = run_json(&[
        "run",
        "udp",
        "--peer",
        &s.peer(),
        "--token-file",
        token.to_str().unwrap(),
        "--sizes",
        "1k",
        "-d",
        "50ms",
        "--repeat",
        "2",
        "--verify",
    ]);
    let c = &j["cases"][0];
    assert_eq!(c["status"], "ok", "{c}");
    assert!(c["datagrams"]["sent"].as_u64().unwrap() > 0, "{c}");
    // A wrong token, and none: refused, said so, exit 1.
    let wrong = token_file(dir.path(), "w", "guess");
    let peer = s.peer();
    let tok = token.to_str().unwrap();
    for args in [vec!["--token-file", wrong.to_str().unwrap()], Vec::new()] {
        let mut a = vec!["run", "tcp", "--peer", &peer, "--sizes", "4k", "-d", "50ms"];
        a.extend(args);
        let (code, err) = ipcperf(&a);
        assert_eq!(code, Some(1), "{err}");
        assert!(err.contains("token"), "{err}");
    }
    // One-way delays need one clock: refused.
    let (_, err) = ipcperf(&[
        "latency",
        "tcp",
        "--peer",
        &peer,
        "--one-way",
        "--sizes",
        "64",
        "--token-file",
        tok,
    ]);
    assert!(err.contains("two clocks"), "{err}");
    // Not tcp or udp: refused with the reason in one line, bad input (2), before
    // anything is measured (it printed a table of one skipped row first).
    let (code, err) = ipcperf(&["run", "unix", "--peer", &peer, "--sizes", "4k"]);
    assert!(
        err.contains("unix processes 4 KiB cannot run: unix cannot cross machines"),
        "{err}"
    );
    assert_eq!(code, Some(2), "{err}");
    // The server still serves.
    good_run(&s, &token);
    let log = s.lines().join("\n");
    assert!(log.contains("wrong or missing token"), "{log}");
}

/// One run at a time: a second real client is told "busy" after its handshake
/// and waits (--peer-wait) until the first ends, then measures; with
/// --peer-wait 0 it fails at once, saying so.
#[test]
fn a_busy_server_is_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path(), "t", "wait");
    let s = Server::start(Some(&token), &[]);
    let tok = token.to_str().unwrap().to_string();
    let peer = s.peer();
    let first = {
        let (peer, tok) = (peer.clone(), tok.clone());
        std::thread::spawn(move || {
            ipcperf(&[
                "run",
                "tcp",
                "--peer",
                &peer,
                "--token-file",
                &tok,
                "--sizes",
                "64k",
                "-d",
                "1500ms",
                "--repeat",
                "1",
                "--consecutive",
            ])
        })
    };
    std::thread::sleep(Duration::from_millis(700));
    let (code, err) = ipcperf(&[
        "run",
        "tcp",
        "--peer",
        &peer,
        "--token-file",
        &tok,
        "--sizes",
        "4k",
        "-d",
        "50ms",
        "--peer-wait",
        "0",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("busy with another run"), "{err}");
    let t0 = Instant::now();
    let j = run_json(&[
        "run",
        "tcp",
        "--peer",
        &peer,
        "--token-file",
        &tok,
        "--sizes",
        "4k",
        "-d",
        "50ms",
        "--repeat",
        "1",
        "--peer-wait",
        "20s",
    ]);
    assert_eq!(j["cases"][0]["status"], "ok", "{}", j["cases"][0]);
    assert!(t0.elapsed() < Duration::from_secs(15));
    let (code, err) = first.join().unwrap();
    assert_eq!(code, Some(0), "{err}");
    assert!(s
        .lines()
        .join("\n")
        .contains("busy with another run; told so"));
}

/// Without a token, serve listens on loopback only: another address is bad input
/// unless --no-token says so.
#[test]
fn serve_without_a_token_stays_on_loopback() {
    let (code, err) = ipcperf(&["serve", "--listen", "0.0.0.0:0"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--no-token"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let s = Server::start(None, &[]);
    assert!(s.addr.ip().is_loopback());
    let mut c = Command::new(BIN)
        .args(["serve", "--listen", "0.0.0.0:0", "--no-token"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(c.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = c.kill();
    let _ = c.wait();
    assert!(line.contains("listening on 0.0.0.0:"), "{line}");
}

/// An address serve cannot have is bad input, one line, exit 2: a port in use,
/// an address not of this machine (TEST-NET-1).
#[test]
fn serve_on_an_address_it_cannot_have_is_bad_input() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    for (listen, why) in [
        (format!("127.0.0.1:{port}"), "choose another port"),
        (
            "192.0.2.1:5555".to_string(),
            "not an address of this machine",
        ),
    ] {
        let (code, err) = ipcperf(&["serve", "--listen", &listen, "--no-token"]);
        assert_eq!(code, Some(2), "{listen}: {err}");
        assert!(
            err.contains(why) && err.contains("--listen"),
            "{listen}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{listen}: {err}");
    }
}

#[test]
fn a_killed_client_frees_the_server_and_a_killed_server_fails_the_client_in_2_s() {
    let s = Server::start(None, &[]);
    let long = |peer: &str| {
        Command::new(BIN)
            .args([
                "run", "tcp", "--peer", peer, "--sizes", "64k", "-d", "3s", "--repeat", "2",
            ])
            .env("IPCPERF_NO_SAVE", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut client = long(&s.peer());
    std::thread::sleep(Duration::from_millis(1500));
    client.kill().unwrap();
    client.wait().unwrap();
    // Free within 2 s: a run goes through.
    std::thread::sleep(Duration::from_secs(2));
    let j = run_json(&[
        "run",
        "tcp",
        "--peer",
        &s.peer(),
        "--sizes",
        "4k",
        "-d",
        "50ms",
        "--repeat",
        "2",
    ]);
    assert_eq!(j["cases"][0]["status"], "ok", "{}", j["cases"][0]);
    // The server killed mid-run: the client says so within 2 s, exit 1.
    let mut s = s;
    let mut client = long(&s.peer());
    std::thread::sleep(Duration::from_millis(1500));
    s.child.kill().unwrap();
    let t0 = Instant::now();
    let status = loop {
        if let Some(st) = client.try_wait().unwrap() {
            break st;
        }
        assert!(t0.elapsed() < Duration::from_secs(5), "the client hangs");
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = t0.elapsed();
    let mut err = String::new();
    client
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(took < Duration::from_secs(2), "{took:?}: {err}");
}

/// Two network namespaces joined by a veth pair (`tag` tells apart those of
/// tests running at once), removed on drop.
struct TwoHosts {
    names: [String; 2],
    /// The server's end of the veth pair, in the first namespace.
    server_link: String,
    /// The client's end of the veth pair, in the second namespace.
    client_link: String,
}

impl TwoHosts {
    fn make(tag: &str) -> Option<TwoHosts> {
        let ip = |args: &[&str]| {
            Command::new("ip")
                .args(args)
                .status()
                .is_ok_and(|s| s.success())
        };
        let pid = std::process::id();
        let names = [
            format!("ipcperf-{pid}-{tag}a"),
            format!("ipcperf-{pid}-{tag}b"),
        ];
        let (va, vb) = (
            format!("i{tag}a{}", pid % 100_000),
            format!("i{tag}b{}", pid % 100_000),
        );
        let hosts = TwoHosts {
            names: names.clone(),
            server_link: va.clone(),
            client_link: vb.clone(),
        };
        let (a, b) = (&names[0], &names[1]);
        let ok = ip(&["netns", "add", a])
            && ip(&["netns", "add", b])
            && ip(&["link", "add", &va, "type", "veth", "peer", "name", &vb])
            && ip(&["link", "set", &va, "netns", a])
            && ip(&["link", "set", &vb, "netns", b])
            && ip(&["-n", a, "addr", "add", "10.235.0.1/30", "dev", &va])
            && ip(&["-n", b, "addr", "add", "10.235.0.2/30", "dev", &vb])
            && ip(&["-n", a, "link", "set", &va, "up"])
            && ip(&["-n", b, "link", "set", &vb, "up"])
            && ip(&["-n", a, "link", "set", "lo", "up"])
            && ip(&["-n", b, "link", "set", "lo", "up"]);
        ok.then_some(hosts)
    }
}

impl TwoHosts {
    /// `ipcperf serve` on the first host at 10.235.0.1:7787 with `args`, once it
    /// says it listens (its log read on, so the pipe stays open).
    fn serve(&self, args: &[&std::ffi::OsStr]) -> std::process::Child {
        let mut server = Command::new("ip")
            .args(["netns", "exec", &self.names[0], BIN, "serve"])
            .args(["--listen", "10.235.0.1:7787"])
            .args(args)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = BufReader::new(server.stderr.take().unwrap());
        // A warning may come first (a token file others may read); a server
        // that never says it listens is killed before the panic.
        let mut said = String::new();
        loop {
            let mut line = String::new();
            if err.read_line(&mut line).unwrap_or(0) == 0 {
                let _ = server.kill();
                let _ = server.wait();
                panic!("the server never said it listens: {said}");
            }
            said.push_str(&line);
            if line.contains("listening on 10.235.0.1:7787") {
                break;
            }
        }
        std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = err.read_to_string(&mut rest);
        });
        server
    }
}

impl Drop for TwoHosts {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

/// `ipcperf serve` in one network namespace, the client in another, joined by a
/// veth pair (two machines as far as the network goes): bytes verified, the run
/// saved with the server's machine named.
#[test]
fn serve_and_peer_across_two_network_namespaces() {
    // Root: the owner of our own /proc entry.
    if !std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
    {
        eprintln!("skipped: network namespaces need root");
        return;
    }
    let Some(hosts) = TwoHosts::make("sv") else {
        eprintln!("skipped: cannot make network namespaces here (iproute2 and CAP_NET_ADMIN)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path(), "t", "across");
    let mut server = hosts.serve(&[
        "--once".as_ref(),
        "--token-file".as_ref(),
        token.as_os_str(),
    ]);
    let db = dir.path().join("h.db");
    let out = Command::new("ip")
        .args(["netns", "exec", &hosts.names[1], BIN, "run", "tcp"])
        .args(["--peer", "10.235.0.1", "--token-file"])
        .arg(&token)
        .args([
            "--sizes", "4k,64k", "-d", "50ms", "--repeat", "1", "--verify", "--db",
        ])
        .arg(&db)
        .env_remove("IPCPERF_NO_SAVE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = common::stdout(&mut common::cmd(&db, &["export", "last", "-f", "json"]));
    let v: serde_json::Value = serde_json::from_str(&j).unwrap();
    for c in v["cases"].as_array().unwrap() {
        assert_eq!(c["status"], "ok", "{c}");
        assert!(c["options"]["peer_host"]
            .as_str()
            .unwrap()
            .contains("10.235.0.1:7787"));
    }
    // --once: the server is gone after its run.
    let t0 = Instant::now();
    while server.try_wait().unwrap().is_none() {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "serve --once did not exit"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(hosts);
}

/// A placement named by relation is two CPUs of this machine: with --peer it is
/// refused as bad input before anything is reached (port 1 here would refuse the
/// connection, an exit 1, had it been tried), and plain CPU numbers get through
/// to that attempt.
#[test]
fn peer_with_a_placement_class_is_refused_as_bad_input() {
    for (cmd, pin) in [
        ("run", ["--pin", "same-cpu"]),
        ("run", ["--pin", "cross"]),
        ("latency", ["--pin", "all"]),
        ("latency", ["--placements", "all"]),
    ] {
        let (code, err) = ipcperf(&[cmd, "tcp", "--peer", "127.0.0.1:1", pin[0], pin[1]]);
        assert_eq!(code, Some(2), "{cmd} {pin:?}: {err}");
        assert!(err.contains("--peer-pin"), "{cmd} {pin:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{cmd} {pin:?}: {err}");
    }
    let (code, err) = ipcperf(&[
        "run",
        "tcp",
        "--peer",
        "127.0.0.1:1",
        "--pin",
        "0,0",
        "-d",
        "100ms",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("cannot reach"), "{err}");
}

/// The server's machine vanishes mid-series: its link goes down (no reset, no
/// FIN, nothing sent back, as for a host powered off), or the client's own does.
/// The client ends with the case failed, saying the machine is gone, within the
/// guide's 2 s (the bound asserted here is 2.5 s: six runs at once on a loaded
/// machine). For udp, nothing on the data path can tell: the control connection,
/// probed each second, is what hears of it, and the client counts the machine
/// gone 1.5 s after it last heard from it, where the kernel would wait for the
/// probe after next (up to 2 s after the vanish; measured 1.17-2.03 s for `run
/// udp` at random moments, 0.54-1.56 s now). Before,
/// `run tcp` was still blocked in write() 12 minutes later, `run udp` sent into
/// nothing to the series' end (18 s of a 30 s series), and each later case of
/// the run waited out a connect to nothing; now they are not tried, and say why.
#[test]
fn a_vanished_server_machine_fails_the_client_in_seconds() {
    if !std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
    {
        eprintln!("skipped: network namespaces need root");
        return;
    }
    // (arguments, its cases, whose link goes down: the server's (true) or the client's)
    let cases: [(&[&str], usize, bool); 6] = [
        (&["run", "tcp", "--sizes", "64k"], 1, true),
        (&["latency", "tcp"], 1, true),
        (&["latency", "udp"], 1, true),
        (&["run", "udp", "--sizes", "1k"], 1, true),
        (&["run", "tcp", "--sizes", "64k"], 1, false),
        (&["run", "tcp", "udp", "--sizes", "1k,4k"], 4, true),
    ];
    let Some(probe) = TwoHosts::make("gp") else {
        eprintln!("skipped: cannot make network namespaces here (iproute2 and CAP_NET_ADMIN)");
        return;
    };
    drop(probe);
    let runs: Vec<_> = cases
        .into_iter()
        .enumerate()
        .map(|(i, (args, n, server_side))| {
            std::thread::spawn(move || vanish(&format!("g{i}"), args, n, server_side))
        })
        .collect();
    // Every run ends (and takes its namespaces with it) before any failure is told.
    let failures: Vec<_> = runs.into_iter().filter_map(|r| r.join().err()).collect();
    if let Some(e) = failures.into_iter().next() {
        std::panic::resume_unwind(e);
    }
}

/// One run of [`a_vanished_server_machine_fails_the_client_in_seconds`].
fn vanish(tag: &str, args: &[&str], cases: usize, server_side: bool) {
    let hosts = TwoHosts::make(tag).expect("namespaces, as the probe made");
    let mut server = hosts.serve(&["--no-token".as_ref()]);
    let mut client = Command::new("ip")
        .args(["netns", "exec", &hosts.names[1], BIN])
        .args(args)
        .args(["--peer", "10.235.0.1", "-d", "30s", "-r", "1", "--no-save"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Into its first series (a 30 s one: it cannot end on its own meanwhile).
    std::thread::sleep(Duration::from_millis(1500));
    assert!(client.try_wait().unwrap().is_none(), "{args:?} ended early");
    let (ns, link) = if server_side {
        (&hosts.names[0], &hosts.server_link)
    } else {
        (&hosts.names[1], &hosts.client_link)
    };
    let down = Command::new("ip")
        .args(["-n", ns, "link", "set", link, "down"])
        .status()
        .unwrap();
    assert!(down.success());
    let t0 = Instant::now();
    let st = loop {
        if let Some(st) = client.try_wait().unwrap() {
            break Some(st);
        }
        if t0.elapsed() > Duration::from_secs(40) {
            let _ = client.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = t0.elapsed();
    let side = if server_side { "server's" } else { "client's" };
    eprintln!("{args:?}, the {side} link down: ended after {took:?}");
    let mut err = String::new();
    let _ = client.stderr.take().unwrap().read_to_string(&mut err);
    let _ = server.kill();
    let _ = server.wait();
    let st = st.unwrap_or_else(|| panic!("{args:?}: still running 40 s after the link went down"));
    // Measured here: 0.5-1.6 s (1.5 s of unacknowledged data, or of silence
    // where the control connection's probes go unanswered).
    assert!(
        took < Duration::from_millis(2500),
        "{args:?}: {took:?}: {err}"
    );
    assert_eq!(st.code(), Some(1), "{args:?}: {err}");
    let failed: Vec<&str> = err.lines().filter(|l| l.contains("FAILED")).collect();
    assert!(!failed.is_empty(), "{args:?}: {err}");
    assert!(
        failed[0].contains("the other machine stopped answering"),
        "{args:?}: {err}"
    );
    // A udp series is told by the control connection's silence, before the
    // kernel's own verdict on it (a later keepalive tick).
    if args[1] == "udp" {
        assert!(failed[0].contains("nothing heard for"), "{args:?}: {err}");
    }
    // The rest of the run's cases, not tried.
    assert_eq!(failed.len(), cases, "{args:?}: {err}");
    for f in &failed[1..] {
        assert!(f.contains("not tried: an earlier case"), "{args:?}: {f}");
    }
    drop(hosts);
}

/// A token file that is a FIFO no writer opens: one line, exit 2, in 20 s,
/// where the open waited for ever (`--token-file <(cmd)` still reads, its
/// writer being there).
#[test]
fn a_token_fifo_without_a_writer_is_said_in_20_s() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("token");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let t = std::time::Instant::now();
    let mut c = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--once", "--token-file"])
        .arg(&fifo)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while c.try_wait().unwrap().is_none() {
        if t.elapsed() > std::time::Duration::from_secs(40) {
            let _ = c.kill();
            panic!("serve still waits for its token FIFO after 40 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = c.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("a FIFO no writer opened within 20 s"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
