//! `ipcperf serve` and `--peer`, over loopback: verified bytes with a token, a
//! wrong or missing token refused, garbage, oversized and silent handshakes
//! refused within their bound while the server keeps serving and a real client
//! measures through them, a second client told "busy" and waiting its turn, a
//! killed client freeing the server, and a killed server an error on the client
//! within 2 s.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::run_json;

const BIN: &str = env!("CARGO_BIN_EXE_ipcperf");

/// A server on a free loopback port; its address, and its log.
struct Server {
    child: Child,
    addr: SocketAddr,
    log: std::sync::mpsc::Receiver<String>,
}

impl Server {
    fn start(token: Option<&std::path::Path>, extra: &[&str]) -> Server {
        let mut c = Command::new(BIN);
        c.args(["serve", "--listen", "127.0.0.1:0"]).args(extra);
        if let Some(t) = token {
            c.arg("--token-file").arg(t);
        }
        let mut child = c.stderr(Stdio::piped()).spawn().unwrap();
        let err: ChildStderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let first = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        let addr = first
            .split("listening on ")
            .nth(1)
            .and_then(|r| r.split(',').next())
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("no address in {first:?}"));
        Server {
            child,
            addr,
            log: rx,
        }
    }

    fn peer(&self) -> String {
        self.addr.to_string()
    }

    /// Log lines so far.
    fn lines(&self) -> Vec<String> {
        self.log.try_iter().collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `ipcperf ARGS`, kept out of the history: its exit code and standard error.
fn ipcperf(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(BIN)
        .args(args)
        .env("IPCPERF_NO_SAVE", "1")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn token_file(dir: &std::path::Path, name: &str, token: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("{token}\n")).unwrap();
    p
}

/// A run through the server with the right token: every byte verified, both
/// machines named.
fn good_run(s: &Server, token: &std::path::Path) {
    let j = run_json(&[
        "run",
        "tcp",
        "--peer",
        &s.peer(),
        "--token-file",
        token.to_str().unwrap(),
        "--sizes",
        "4k",
        "-d",
        "50ms",
        "--repeat",
        "2",
        "--verify",
    ]);
    let c = &j["cases"][0];
    assert_eq!(c["status"], "ok", "{c}");
    assert_eq!(c["series"].as_array().unwrap().len(), 2);
    assert!(c["options"]["peer_host"]
        .as_str()
        .unwrap()
        .contains(&s.peer()));
    // The path: the interface of our address and its MTU, and a measured round trip.
    assert!(
        c["options"]["path"].as_str().unwrap().contains("MTU"),
        "{c}"
    );
    let rtt: u64 = c["options"]["path_rtt_ns"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(rtt > 0 && rtt < 1_000_000_000, "{c}");
    assert_eq!(c["placement"]["label"], "other-host", "{c}");
    // The other machine, whole, as its server described itself.
    assert!(c["peer_machine"]["hostname"].is_string(), "{c}");
    assert!(c["peer_machine"]["kernel"].is_string(), "{c}");
}

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
    // Not tcp or udp: refused with the reason, nothing measured.
    let (_, err) = ipcperf(&["run", "unix", "--peer", &peer, "--sizes", "4k"]);
    assert!(err.contains("unix cannot cross machines"), "{err}");
    // The server still serves.
    good_run(&s, &token);
    let log = s.lines().join("\n");
    assert!(log.contains("wrong or missing token"), "{log}");
}

/// Read what the server says until it closes; how long that took.
fn until_closed(c: &mut TcpStream) -> (Vec<u8>, Duration) {
    let t0 = Instant::now();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    (got, t0.elapsed())
}

#[test]
fn hostile_handshakes_are_refused_within_their_bound_and_hold_no_run_slot() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path(), "t", "s3cret");
    let s = Server::start(Some(&token), &[]);
    // Garbage: a frame that is not JSON.
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.write_all(&[0, 0, 0, 5, b'x', b'y', b'z', b'!', b'?'])
        .unwrap();
    let (_, took) = until_closed(&mut c);
    assert!(took < Duration::from_secs(3), "garbage held {took:?}");
    // Oversized: a length of 4 GiB is refused without reading it.
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.write_all(&[0xff, 0xff, 0xff, 0xff]).unwrap();
    let (_, took) = until_closed(&mut c);
    assert!(took < Duration::from_secs(3), "oversized held {took:?}");
    // Silent: dropped after the handshake's bound (2 s), and meanwhile a real
    // client gets through: a connection that never proves its token holds no slot.
    let mut silent = TcpStream::connect(s.addr).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let t0 = Instant::now();
    good_run(&s, &token);
    assert!(
        t0.elapsed() < Duration::from_secs(2) || silent_gone(&mut silent),
        "the real client waited for the silent one"
    );
    let (banner, took) = until_closed(&mut silent);
    assert!(String::from_utf8_lossy(&banner).contains("Banner"));
    assert!(took < Duration::from_secs(4), "silent held {took:?}");
    // Its log line may trail the close by a moment.
    let mut log = s.lines().join("\n");
    let t0 = Instant::now();
    while !log.contains("sent nothing") && t0.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(50));
        log.push('\n');
        log.push_str(&s.lines().join("\n"));
    }
    assert!(log.contains("garbled"), "{log}");
    assert!(log.contains("bytes: more than"), "{log}");
    assert!(log.contains("sent nothing"), "{log}");
}

/// Whether the server has closed this connection already (it answered nothing).
fn silent_gone(c: &mut TcpStream) -> bool {
    c.set_nonblocking(true).unwrap();
    let mut b = [0u8; 4096];
    let gone = loop {
        match c.read(&mut b) {
            Ok(0) => break true,
            Ok(_) => continue,
            Err(_) => break false,
        }
    };
    c.set_nonblocking(false).unwrap();
    gone
}

/// A fleet's server under attack while a real client measures: garbage, a 4 GiB
/// length, a byte-a-second drip, 60 connections at once and silent ones, all
/// at the same time; the real client gets its figures, every hostile connection
/// is closed within its bound, and the server serves on.
#[test]
fn a_real_client_measures_through_a_flood_of_hostile_connections() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path(), "t", "fleet");
    let s = Server::start(Some(&token), &[]);
    let addr = s.addr;
    let mut hostile = Vec::new();
    // 60 at once that never speak.
    for _ in 0..60 {
        hostile.push(std::thread::spawn(move || {
            let mut c = TcpStream::connect(addr).unwrap();
            until_closed(&mut c).1
        }));
    }
    // A drip: a plausible hello, one byte a second.
    hostile.push(std::thread::spawn(move || {
        let mut c = TcpStream::connect(addr).unwrap();
        let t0 = Instant::now();
        let body = br#"{"ipcperf":"0","protocol":1,"proof":null,"run":"x","over":false,"pings":0}"#;
        let mut bytes = (body.len() as u32).to_be_bytes().to_vec();
        bytes.extend_from_slice(body);
        for b in bytes {
            if c.write_all(&[b]).is_err() || t0.elapsed() > Duration::from_secs(8) {
                break;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        t0.elapsed()
    }));
    // Garbage and a 4 GiB length, over and over.
    for bytes in [
        vec![0, 0, 0, 3, b'{', b'{', b'{'],
        vec![0xff, 0xff, 0xff, 0xff],
    ] {
        hostile.push(std::thread::spawn(move || {
            let t0 = Instant::now();
            let mut worst = Duration::ZERO;
            while t0.elapsed() < Duration::from_secs(3) {
                let mut c = TcpStream::connect(addr).unwrap();
                let _ = c.write_all(&bytes);
                worst = worst.max(until_closed(&mut c).1);
            }
            worst
        }));
    }
    std::thread::sleep(Duration::from_millis(200));
    // The real client, meanwhile.
    good_run(&s, &token);
    for h in hostile {
        let held = h.join().unwrap();
        assert!(
            held < Duration::from_secs(5),
            "a hostile connection held {held:?}"
        );
    }
    // Serving still.
    good_run(&s, &token);
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

/// Two network namespaces joined by a veth pair, removed on drop.
struct TwoHosts {
    names: [String; 2],
}

impl TwoHosts {
    fn make() -> Option<TwoHosts> {
        let ip = |args: &[&str]| {
            Command::new("ip")
                .args(args)
                .status()
                .is_ok_and(|s| s.success())
        };
        let pid = std::process::id();
        let names = [format!("ipcperf-{pid}-sva"), format!("ipcperf-{pid}-svb")];
        let hosts = TwoHosts {
            names: names.clone(),
        };
        let (a, b) = (&names[0], &names[1]);
        let (va, vb) = (
            format!("ipsva{}", pid % 100_000),
            format!("ipsvb{}", pid % 100_000),
        );
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
    let Some(hosts) = TwoHosts::make() else {
        eprintln!("skipped: cannot make network namespaces here (iproute2 and CAP_NET_ADMIN)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path(), "t", "across");
    let mut server = Command::new("ip")
        .args(["netns", "exec", &hosts.names[0], BIN, "serve"])
        .args(["--listen", "10.235.0.1:7787", "--once", "--token-file"])
        .arg(&token)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(server.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(line.contains("listening on 10.235.0.1:7787"), "{line}");
    // Keep reading its log, so the pipe stays open.
    std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = err.read_to_string(&mut rest);
    });
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

/// Read one frame (4-byte big-endian length, then JSON) within `t`.
fn read_frame_json(c: &mut TcpStream, t: Duration) -> Option<serde_json::Value> {
    c.set_read_timeout(Some(t)).ok()?;
    let mut len = [0u8; 4];
    c.read_exact(&mut len).ok()?;
    let n = u32::from_be_bytes(len) as usize;
    if n > 1 << 20 {
        return None;
    }
    let mut body = vec![0u8; n];
    c.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut f = (body.len() as u32).to_be_bytes().to_vec();
    f.extend_from_slice(body);
    f
}

/// A protocol fuzz: seeded connections that each read the banner and answer with
/// garbage bytes, lying length prefixes, JSON of every shape, hellos with fields
/// of the wrong type or a wrong proof, and (with the right proof) garbage where
/// the run's messages belong. Each connection is closed by the server within its
/// bound, and afterwards a real client still gets its figures.
/// IPCPERF_FUZZ_SEED=S replays a run.
#[test]
fn a_protocol_fuzz_leaves_the_server_serving() {
    let seed: u64 = std::env::var("IPCPERF_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5e7e_2026_1126);
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path(), "t", "s3cret");
    let mut s = Server::start(Some(&token), &[]);
    let version = env!("CARGO_PKG_VERSION");
    for i in 0..200u32 {
        let mut c = TcpStream::connect(s.addr).unwrap();
        let banner = read_frame_json(&mut c, Duration::from_secs(5))
            .unwrap_or_else(|| panic!("seed {seed} #{i}: no banner"));
        let nonce_hex = banner["Banner"]["nonce"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let nonce: Vec<u8> = (0..nonce_hex.len() / 2)
            .filter_map(|k| u8::from_str_radix(&nonce_hex[2 * k..2 * k + 2], 16).ok())
            .collect();
        let right = ipcperf_core::mode::remote::proof(b"s3cret", &nonce);
        let junk: Vec<u8> = (0..next() % 64).map(|_| next() as u8).collect();
        let shapes = [
            serde_json::json!(null),
            serde_json::json!(next()),
            serde_json::json!("ClientHello"),
            serde_json::json!([1, 2, {"a": []}]),
            serde_json::json!({"ipcperf": 7, "protocol": "one"}),
            serde_json::json!({"ipcperf": version, "protocol": 1, "proof": "zz"}),
            serde_json::json!({"ipcperf": version, "protocol": 1, "proof": right.clone()[..10]}),
            serde_json::json!({"ipcperf": version, "protocol": 99, "proof": right.clone()}),
            serde_json::json!({"ipcperf": version, "protocol": 1, "proof": right.clone(), "run": "x".repeat(5000), "pings": u32::MAX}),
            serde_json::json!({"ipcperf": "0.0.0", "protocol": 1, "proof": right.clone(), "over": "yes"}),
        ];
        let mut bytes = Vec::new();
        let case = next() % 6;
        match case {
            0 => bytes.extend(&junk),
            1 => {
                let lens = [0u32, 1, 0x7fff_ffff, (1 << 20) + 1, junk.len() as u32 + 9];
                bytes.extend(lens[(next() % 5) as usize].to_be_bytes());
                bytes.extend(&junk);
            }
            2 | 3 => {
                let v = &shapes[(next() % shapes.len() as u64) as usize];
                bytes.extend(frame(v.to_string().as_bytes()));
            }
            _ => {
                // The right proof, then garbage where the run's messages go.
                let hello = serde_json::json!({"ipcperf": version, "protocol": 1, "proof": right, "run": format!("fuzz-{i}")});
                bytes.extend(frame(hello.to_string().as_bytes()));
                let after = [
                    frame(&junk),
                    frame(b"{\"Go\":{\"bytes\":\"lots\"}}"),
                    frame(b"\"Quit\""),
                    frame(b"{\"Hello\":17}"),
                    junk.clone(),
                ];
                bytes.extend(&after[(next() % 5) as usize]);
            }
        }
        let _ = c.write_all(&bytes);
        let _ = c.shutdown(std::net::Shutdown::Write);
        let (_, took) = until_closed(&mut c);
        assert!(
            took < Duration::from_secs(5),
            "seed {seed} #{i} (case {case}): the server held the connection {took:?}"
        );
        assert!(
            s.child.try_wait().unwrap().is_none(),
            "seed {seed} #{i} (case {case}): the server died; its log: {:?}",
            s.lines()
        );
    }
    good_run(&s, &token);
    let log = s.lines().join("\n");
    assert!(
        !log.contains("panicked") && !log.contains("internal error"),
        "{log}"
    );
}
