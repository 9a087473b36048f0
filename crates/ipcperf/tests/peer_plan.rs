//! What `run` and `latency --peer` plan, over loopback: without mechanism
//! names, the default suite's cases that cross machines, each once (before,
//! `run --peer HOST` measured each tcp case twice, its suite's two placements
//! both becoming `other-host`, beside 44 rows "cannot cross machines" that
//! shared the series' budget: 41 ms series where 500 ms fit). No `ipcperf serve`
//! at the address (a closed port, or one that answers but never speaks): the
//! first case says so, the rest are not tried (before, each waited out its own
//! handshake, the cases in rounds even after a machine was found gone).

use std::net::TcpListener;
use std::time::{Duration, Instant};

mod common;
use common::run_json;
use common::server::{ipcperf, Server};

/// (mechanism, block or message size, placement) of each case of `j`, each ok.
fn cases(j: &serde_json::Value) -> Vec<(String, u64, String)> {
    j["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["status"], "ok", "{c}");
            (
                c["mechanism"].as_str().unwrap().to_string(),
                c["block_size_bytes"].as_u64().unwrap(),
                c["placement"]["label"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_default_suite_with_peer_is_what_crosses_machines_each_once() {
    let s = Server::start(None, &[]);
    let peer = s.peer();
    let got = cases(&run_json(&[
        "run", "--peer", &peer, "-d", "40ms", "-r", "1",
    ]));
    let want: Vec<(String, u64, String)> = [64, 4096, 65536, 1 << 20]
        .into_iter()
        .map(|n| ("tcp".to_string(), n, "other-host".to_string()))
        .collect();
    assert_eq!(got, want);
    let got = cases(&run_json(&[
        "latency", "--peer", &peer, "-d", "40ms", "-r", "1",
    ]));
    let mechs: Vec<&str> = got.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(mechs, ["tcp", "udp"], "{got:?}");
    assert!(got.iter().all(|c| c.2 == "other-host"), "{got:?}");
}

#[test]
fn no_server_at_the_peer_address_fails_the_first_case_and_tries_no_other() {
    // A closed port (bound, then let go) and one that takes connections but
    // never sends a banner (a listener nobody accepts on: the kernel completes
    // the connection into its backlog).
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let quiet = silent.local_addr().unwrap();
    for (addr, why) in [
        (closed, "Connection refused (ECONNREFUSED)"),
        (
            quiet,
            "the port answered but sent no ipcperf banner within 2 s",
        ),
    ] {
        let addr = addr.to_string();
        let t0 = Instant::now();
        // Five series a case (the default): taken in rounds.
        let (code, err) = ipcperf(&[
            "run",
            "tcp",
            "--peer",
            &addr,
            "--sizes",
            "64,4k,64k,1m",
            "-d",
            "40ms",
        ]);
        let took = t0.elapsed();
        assert_eq!(code, Some(1), "{err}");
        let failed: Vec<&str> = err.lines().filter(|l| l.contains("FAILED")).collect();
        assert_eq!(failed.len(), 4, "{err}");
        assert!(
            failed[0].contains(&format!("cannot reach ipcperf serve at {addr}: {why}")),
            "{err}"
        );
        for f in &failed[1..] {
            assert!(
                f.contains(&format!(
                    "not tried: an earlier case of this run found no ipcperf serve at {addr}: {why}"
                )),
                "{f}"
            );
        }
        // One handshake's bound (2 s), not one a case (8 s for the silent port).
        assert!(took < Duration::from_secs(6), "{addr}: {took:?}: {err}");
    }
    drop(silent);
}
