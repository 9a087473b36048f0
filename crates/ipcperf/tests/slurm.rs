//! deploy/slurm on a real Slurm: `deploy/slurm/testbed.sh` starts munged,
//! slurmctld and slurmd (Debian's slurm-wlm and munge) with this machine as one
//! node and two more nodes in network namespaces of their own (partition
//! `pair`); the suite job (`-N2`: one task on each node) and the pair job are
//! submitted with `sbatch --wait`, bounded; then the history (an SQLite file:
//! the namespace nodes do not reach a PostgreSQL on this machine's loopback)
//! must hold exactly one complete suite run and one 512 B round-trip run on each
//! node, of one job, and the pair's tcp and udp runs from one node to the other
//! through `serve`.
//! Everything started is stopped. Skips with a reason without root or Slurm.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

mod common;

const BIN: &str = env!("CARGO_BIN_EXE_ipcperf");

fn repo(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// The cluster, stopped (and its directory removed) on drop.
struct Testbed {
    dir: std::path::PathBuf,
    conf: String,
}

impl Testbed {
    /// This machine as one node, and `more` nodes in namespaces (partition `pair`).
    fn start(dir: &Path, more: usize) -> Testbed {
        let out = Command::new("bash")
            .arg(repo("deploy/slurm/testbed.sh"))
            .arg("start")
            .arg(dir)
            .arg(more.to_string())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let bed = Testbed {
            dir: dir.to_path_buf(),
            conf: text
                .trim()
                .strip_prefix("export SLURM_CONF=")
                .unwrap_or_default()
                .to_string(),
        };
        assert!(
            out.status.success() && !bed.conf.is_empty(),
            "testbed.sh start: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        bed
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(repo("deploy/slurm/testbed.sh"))
            .arg("stop")
            .arg(&self.dir)
            .status();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `sbatch --wait ARGS SCRIPT`, bounded; its output files' text on failure.
fn sbatch(bed: &Testbed, work: &Path, env: &[(&str, String)], args: &[&str], script: &str) {
    let mut c = Command::new("timeout");
    c.args(["180", "sbatch", "--wait"])
        .args(args)
        .arg(repo(script))
        .current_dir(work)
        .env("SLURM_CONF", &bed.conf)
        .env("HOME", work)
        .env("IPCPERF", BIN);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    if !out.status.success() {
        let mut logs = String::new();
        for e in std::fs::read_dir(work).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "out") {
                logs.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
            }
        }
        panic!(
            "sbatch {script} failed: {}{}\n{logs}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `ipcperf ARGS --db DB` (a path or a PostgreSQL URL); its JSON.
fn ipcperf_json(db: &str, args: &[&str]) -> Value {
    serde_json::from_str(&common::stdout(&mut common::cmd(Path::new(db), args))).unwrap()
}

/// The runs of the history with `label`, as exported.
fn runs_labelled(db: &str, label: &str) -> Vec<Value> {
    let list = ipcperf_json(db, &["history", "--format", "json"]);
    list.as_array()
        .unwrap()
        .iter()
        .filter(|r| r["label"] == label)
        .map(|r| {
            let id = r["id"].to_string();
            ipcperf_json(db, &["export", &id, "--format", "json"])
        })
        .collect()
}

#[test]
fn the_suite_once_on_each_node_and_the_pair_fill_their_histories() {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0"));
    if !root {
        eprintln!("skipped: the Slurm testbed needs root");
        return;
    }
    if !(common::have("slurmctld")
        && common::have("slurmd")
        && common::have("munged")
        && common::have("sbatch"))
    {
        eprintln!("skipped: no Slurm here (apt-get install slurm-wlm munge)");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let before = namespaces();
    let bed = Testbed::start(&work.path().join("testbed"), 2);
    let ours: Vec<String> = namespaces()
        .into_iter()
        .filter(|n| !before.contains(n))
        .collect();
    assert_eq!(ours.len(), 2, "one namespace per extra node: {ours:?}");
    // The suite on the two namespace nodes, one job: exactly one run on each. Its
    // history is an SQLite file: the namespaces do not reach the PostgreSQL
    // server, which listens on this machine's loopback only.
    let db = work.path().join("h.db").to_string_lossy().into_owned();
    // The URL in a file only we may read: never on a command line.
    let dbfile = work.path().join("db");
    std::fs::write(&dbfile, format!("{db}\n")).unwrap();
    std::fs::set_permissions(&dbfile, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let label = format!("slurm-test-{}", std::process::id());
    let t0 = std::time::Instant::now();
    sbatch(
        &bed,
        work.path(),
        &[
            ("IPCPERF_DB_FILE", dbfile.to_string_lossy().into_owned()),
            ("IPCPERF_LABEL", label.clone()),
            ("IPCPERF_ARGS", "pipe unix -s 64k -d 20ms -r 1".into()),
            (
                "IPCPERF_LATENCY_ARGS",
                "pipe unix --sizes 512 -n 200 -r 1".into(),
            ),
        ],
        &["-p", "pair", "-N2"],
        "deploy/slurm/suite.sbatch",
    );
    let all = runs_labelled(&db, &label);
    // Each node: the suite's streams, then the 512 B round trips fleet shows.
    let trips = |r: &&Value| {
        r["cases"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["workload"] == "round-trip" && c["block_size_bytes"] == 512)
    };
    let node = |r: &Value| {
        r["machine"]["scheduler"]["node"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let mut trip_nodes: Vec<String> = all.iter().filter(trips).map(node).collect();
    trip_nodes.sort();
    let runs: Vec<Value> = all.iter().filter(|r| !trips(r)).cloned().collect();
    let mut nodes: Vec<String> = runs.iter().map(node).collect();
    nodes.sort();
    assert_eq!(nodes.len(), 2, "one suite run per node: {nodes:?}");
    assert_ne!(nodes[0], nodes[1], "two nodes, one run each: {nodes:?}");
    assert!(nodes.iter().all(|n| n.starts_with("ipn")), "{nodes:?}");
    assert_eq!(trip_nodes, nodes, "the 512 B round trips on each node");
    let mut jobs: Vec<String> = Vec::new();
    for r in &runs {
        assert_eq!(r["complete"], true, "{}", r["machine"]["scheduler"]);
        let s = &r["machine"]["scheduler"];
        assert_eq!(s["kind"], "slurm", "{s}");
        assert_eq!(s["node"], r["machine"]["hostname"], "{s}");
        jobs.push(s["job_id"].as_str().unwrap().to_string());
        for c in r["cases"].as_array().unwrap() {
            assert_eq!(c["status"], "ok", "{c}");
        }
    }
    assert_eq!(jobs[0], jobs[1], "one job");
    // The pair job on the two namespace nodes: serve on the first, run and latency
    // tcp udp --peer from the second, over the bridge between them.
    let pair = format!("{label}-pair");
    let pair_db = work.path().join("pair.db").to_string_lossy().into_owned();
    let pair_dbfile = work.path().join("pair-db");
    std::fs::write(&pair_dbfile, format!("{pair_db}\n")).unwrap();
    sbatch(
        &bed,
        work.path(),
        &[
            (
                "IPCPERF_DB_FILE",
                pair_dbfile.to_string_lossy().into_owned(),
            ),
            ("IPCPERF_LABEL", pair.clone()),
            ("IPCPERF_PORT", free_port().to_string()),
            ("IPCPERF_PAIR_ARGS", "-s 4k -d 50ms -r 1".into()),
        ],
        &["-p", "pair", "-N2"],
        "deploy/slurm/pair.sbatch",
    );
    let runs = runs_labelled(&pair_db, &pair);
    assert_eq!(runs.len(), 2, "run and latency");
    for r in &runs {
        let s = &r["machine"]["scheduler"];
        assert_eq!(s["kind"], "slurm");
        let me = r["machine"]["hostname"].as_str().unwrap();
        assert_eq!(s["node"], me, "{s}");
        assert!(
            me.starts_with("ipn") && me.ends_with("-2"),
            "the client on node 2: {me}"
        );
        let mechs: Vec<&str> = r["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                assert_eq!(c["status"], "ok", "{c}");
                assert_eq!(c["placement"]["label"], "other-host", "{c}");
                let peer = c["peer_machine"]["hostname"].as_str().unwrap();
                assert!(
                    peer.starts_with("ipn") && peer.ends_with("-1"),
                    "the server on node 1: {peer}"
                );
                c["mechanism"].as_str().unwrap()
            })
            .collect();
        assert_eq!(mechs, ["tcp", "udp"]);
    }
    // The token file the job made: the user's alone.
    let mode = std::fs::metadata(work.path().join(".ipcperf-token"))
        .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777)
        .unwrap();
    assert_eq!(mode, 0o600);
    eprintln!(
        "slurm: the suite on two nodes and a pair job in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    assert!(t0.elapsed() < Duration::from_secs(240));
    drop(bed);
    // Stopped: no daemon of the testbed left.
    let left = Command::new("pgrep")
        .args(["-f", &work.path().join("testbed").to_string_lossy()])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&left.stdout)
    );
    let left: Vec<String> = namespaces()
        .into_iter()
        .filter(|n| ours.contains(n))
        .collect();
    assert!(left.is_empty(), "namespaces left: {left:?}");
}

/// The testbeds' network namespaces now (`ipcperf-sl…`).
fn namespaces() -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with("ipcperf-sl"))
        .map(str::to_string)
        .collect()
}
