//! `ipcperf serve` against hostile clients: garbage, oversized and silent
//! handshakes refused within their bound holding no run slot, a real client
//! measuring through a flood of them, and a fuzzed protocol that leaves the
//! server serving.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

mod common;
use common::server::{good_run, token_file, Server};

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
