//! An `ipcperf serve` on a free loopback port, and what the serve tests share.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::Duration;

use super::run_json;

pub const BIN: &str = env!("CARGO_BIN_EXE_ipcperf");

/// A server on a free loopback port; its address, and its log.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    pub log: std::sync::mpsc::Receiver<String>,
}

impl Server {
    pub fn start(token: Option<&std::path::Path>, extra: &[&str]) -> Server {
        Server::start_with_env(token, extra, &[])
    }

    /// [`Server::start`], its process given the environment variables `env`.
    pub fn start_with_env(
        token: Option<&std::path::Path>,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Server {
        let mut c = Command::new(BIN);
        c.args(["serve", "--listen", "127.0.0.1:0"]).args(extra);
        c.envs(env.iter().copied());
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
        // The address is on the "listening on" line; a warning (a token file
        // others may read) can come first. A server that never says it is
        // killed before the panic, not left running.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let mut said = Vec::new();
        let addr = loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let Ok(line) = rx.recv_timeout(left) else {
                let _ = child.kill();
                let _ = child.wait();
                panic!("no address in {said:?}");
            };
            let addr = line
                .split("listening on ")
                .nth(1)
                .and_then(|r| r.split(',').next())
                .and_then(|a| a.parse().ok());
            said.push(line);
            if let Some(a) = addr {
                break a;
            }
        };
        Server {
            child,
            addr,
            log: rx,
        }
    }

    pub fn peer(&self) -> String {
        self.addr.to_string()
    }

    /// Log lines so far.
    pub fn lines(&self) -> Vec<String> {
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
pub fn ipcperf(args: &[&str]) -> (Option<i32>, String) {
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

pub fn token_file(dir: &std::path::Path, name: &str, token: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("{token}\n")).unwrap();
    p
}

/// A run through the server with the right token: every byte verified, both
/// machines named.
pub fn good_run(s: &Server, token: &std::path::Path) {
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
