//! A fuzz test of the command line: seeded argument vectors over every subcommand
//! (sizes, durations, counts, pins, mechanisms and modes, paths, hostile strings).
//! Each must end within its bound with exit 0, 1 or 2 — never a signal, a panic
//! or an abort — and leave no named object, directory or process behind.
//!
//! IPCPERF_FUZZ_SEED=S reproduces a run (the seed is printed on failure);
//! IPCPERF_FUZZ_N=N changes how many vectors are tried (default 1000).

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ipcperf");

/// xorshift64*: small, seeded, the same vectors on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

const MECHS: &[&str] = &[
    "pipe",
    "fifo",
    "unix",
    "tcp",
    "file",
    "null",
    "memcpy",
    "sysv-msg",
    "posix-mq",
    "unix-dgram",
    "unix-seqpacket",
    "udp",
    "vmsplice",
    "cma",
    "shm",
    "eventfd",
    "signal",
    "nosuch",
    "",
    "PIPE",
];
const PRIMITIVES: &[&str] = &[
    "sysv-sem",
    "posix-sem",
    "posix-sem-named",
    "mutex",
    "futex",
    "eventfd",
    "flock",
    "fcntl",
    "pipe",
    "nosuch",
];
const SIZES: &[&str] = &[
    "1",
    "8",
    "64",
    "4k",
    "64k",
    "1M",
    "16..4k",
    "4k..1k",
    "0",
    "-1",
    "8E",
    "1T",
    "2G",
    "12q",
    "",
    "bradford",
    "64,4k",
    "1.5k",
    "99999999999999999999999",
];
const DURATIONS: &[&str] = &[
    "1ms",
    "5ms",
    "20ms",
    "50us",
    "1ns",
    "0s",
    "-1s",
    "99999999999999999999999",
    "18446744073709551615",
    "400000000000000000m",
    "1e400s",
    "NaN",
    "inf",
    "2x",
    "",
];
const COUNTS: &[&str] = &["1", "10", "1000", "0", "-5", "18446744073709551616", "x"];
const PINS: &[&str] = &[
    "0,0",
    "0,1",
    "same",
    "cross",
    "none",
    "0,99",
    "99,0",
    "a,b",
    "0",
    "-1,0",
    "",
    "0,,1",
    "shared-l3",
    "smt-sibling",
    "other-socket",
    "all",
    "same-cpu",
];
const MODES: &[&str] = &["single", "threads", "processes", "sideways", ""];
const FORMATS: &[&str] = &["table", "json", "csv", "markdown", "text", "xml", ""];
const WAKES: &[&str] = &[
    "spin",
    "futex",
    "eventfd",
    "sem",
    "adaptive",
    "spin,futex,adaptive",
    "nap",
    "",
];
const IDS: &[&str] = &["1", "last", "0", "-1", "x", "99999999999999999999", "2"];
const HOSTILE: &[&str] = &[
    "",
    "-",
    "--",
    "%s%n%x",
    "../../../../etc/passwd",
    "\u{202e}evil",
    "a\nb",
    "$(reboot)",
    "/dev/full",
    "/dev/null/x",
];

/// One argument vector for `sub`.
fn vector(r: &mut Rng, sub: &str, dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = vec![sub.to_string()];
    let d = dir.display().to_string();
    // Paths that do not exist, inside our own directory: a bug that made them
    // must not touch anything outside it.
    let nx = format!("{d}/nonexistent/x");
    let nxdb = format!("{d}/nonexistent/x/y.db");
    let nxpng = format!("{d}/nonexistent/x.png");
    let push = |v: &mut Vec<String>, a: &str, b: &str| {
        v.push(a.to_string());
        v.push(b.to_string());
    };
    match sub {
        "run" | "latency" => {
            // Mechanisms: one or two, rarely none (the default suite).
            if !r.chance(4) {
                for _ in 0..1 + r.below(2) {
                    v.push(r.pick(MECHS).to_string());
                }
            }
            let mut timed = false;
            for _ in 0..r.below(6) {
                match r.below(16) {
                    0 => push(&mut v, "--sizes", r.pick(SIZES)),
                    1 => {
                        push(&mut v, "--duration", r.pick(DURATIONS));
                        timed = true;
                    }
                    2 => {
                        push(&mut v, "--count", r.pick(COUNTS));
                        timed = true;
                    }
                    3 => push(&mut v, "--pin", r.pick(PINS)),
                    4 => push(&mut v, "--mode", r.pick(MODES)),
                    5 => push(&mut v, "--repeat", r.pick(&["1", "2", "0", "100000"])),
                    6 => v.push(
                        r.pick(&["--verify", "--no-touch", "--include-setup"])
                            .into(),
                    ),
                    7 => push(&mut v, "--wake", r.pick(WAKES)),
                    8 => {
                        if r.chance(50) {
                            v.push("--shm-named".into());
                        } else {
                            push(&mut v, "--spin-for", r.pick(DURATIONS));
                        }
                    }
                    9 => push(&mut v, "--shm-capacity", r.pick(SIZES)),
                    10 => push(&mut v, "--pipe-size", r.pick(SIZES)),
                    11 => push(&mut v, "--format", r.pick(FORMATS)),
                    12 => push(&mut v, "--dir", r.pick(&[&d, &nx, "", "/dev/null"])),
                    13 if sub == "latency" && r.chance(50) => push(
                        &mut v,
                        "--rate",
                        r.pick(&["2k", "50k", "10M", "0", "1k,5k", "x", "1e3"]),
                    ),
                    13 => push(&mut v, "--sndbuf", r.pick(SIZES)),
                    14 if r.chance(50) => push(
                        &mut v,
                        "--background",
                        r.pick(&["cpu:1", "memory:1", "cpu:0", "gpu:1", "cpu:", "cpu:99999"]),
                    ),
                    14 => v.push(
                        r.pick(&[
                            "--nodelay",
                            "--nonblocking",
                            "--ipv6",
                            "--zero-copy",
                            "--placements=all",
                        ])
                        .into(),
                    ),
                    _ => v.push(r.pick(HOSTILE).to_string()),
                }
            }
            if !timed {
                // Keep a valid vector short: a measurement, not a benchmark.
                push(&mut v, "--duration", r.pick(&["1ms", "5ms", "20ms"]));
            }
            if !v.iter().any(|a| a == "--repeat") {
                push(&mut v, "--repeat", "1");
            }
        }
        "matrix" => {
            if !r.chance(5) {
                v.push(r.pick(MECHS).to_string());
            }
            for _ in 0..r.below(5) {
                match r.below(7) {
                    0 => push(
                        &mut v,
                        "--cpus",
                        r.pick(&["0-1", "0", "1-0", "x", "0,4096", "0-99999999"]),
                    ),
                    1 => push(&mut v, "--sizes", r.pick(SIZES)),
                    2 => push(&mut v, "--mode", r.pick(MODES)),
                    3 => push(&mut v, "--heatmap", r.pick(&[&nxpng, "x.gif", ""])),
                    4 => push(&mut v, "--wake", r.pick(WAKES)),
                    5 => push(&mut v, "--format", r.pick(FORMATS)),
                    _ => v.push(r.pick(HOSTILE).to_string()),
                }
            }
            push(&mut v, "--duration", r.pick(&["1ms", "2ms", "5ms"]));
        }
        "topology" => {
            for _ in 0..r.below(3) {
                match r.below(4) {
                    0 => v.push("--cpus".into()),
                    1 => push(&mut v, "--sysfs", r.pick(&[&d, &nx, "", "/dev/null"])),
                    2 => push(&mut v, "--format", r.pick(FORMATS)),
                    _ => v.push(r.pick(HOSTILE).to_string()),
                }
            }
        }
        "sync" => {
            for _ in 0..r.below(3) {
                v.push(r.pick(PRIMITIVES).to_string());
            }
            if v.len() == 1 && !r.chance(10) {
                v.push("futex".into());
            }
            for _ in 0..r.below(4) {
                match r.below(6) {
                    0 => push(&mut v, "--mode", r.pick(MODES)),
                    1 => push(&mut v, "--pin", r.pick(PINS)),
                    2 => push(&mut v, "--format", r.pick(FORMATS)),
                    3 => push(&mut v, "--duration", r.pick(DURATIONS)),
                    4 => push(&mut v, "--count", r.pick(COUNTS)),
                    _ => v.push(r.pick(HOSTILE).to_string()),
                }
            }
            if !v.iter().any(|a| a == "--duration" || a == "--count") {
                push(&mut v, "--duration", "5ms");
            }
        }
        "gen" => {
            // No huge valid --bytes: gen would rightly write it all, like `yes`.
            push(
                &mut v,
                "--bytes",
                r.pick(&["1", "64k", "1M", "0", "99999999999999999999", "x", "1MB"]),
            );
            if r.chance(50) {
                push(&mut v, "--chunk", r.pick(SIZES));
            }
            if r.chance(50) {
                push(
                    &mut v,
                    "--seed",
                    r.pick(&["1", "-1", "x", "18446744073709551615"]),
                );
            }
        }
        "sink" => {
            if r.chance(50) {
                push(&mut v, "--chunk", r.pick(SIZES));
            }
            if r.chance(40) {
                push(&mut v, "--verify-seed", r.pick(&["1", "x"]));
            }
            if r.chance(40) {
                push(&mut v, "--bytes", r.pick(&["0", "1", "64k"]));
            }
            if r.chance(30) {
                push(&mut v, "--format", r.pick(&["text", "json", "csv"]));
            }
        }
        "pipeline" => {
            push(
                &mut v,
                "--bytes",
                r.pick(&["64k", "256k", "0", "8E", "1T", "1000", "x"]),
            );
            push(
                &mut v,
                "--chunk",
                r.pick(&["1k", "4k", "64k", "0", "8E", "1T", "3"]),
            );
            push(&mut v, "--repeat", r.pick(&["1", "0", "1001"]));
            if r.chance(30) {
                push(&mut v, "--dir", r.pick(&[&d, &nx, ""]));
            }
            if r.chance(30) {
                push(&mut v, "--format", r.pick(FORMATS));
            }
        }
        "list" | "clean" => {
            if sub == "clean" {
                v.push("--dry-run".into());
                push(&mut v, "--dir", r.pick(&[&d, &nx, "", "/dev/null"]));
                if r.chance(20) {
                    push(&mut v, "--user", r.pick(&["0", "65534", "x", "-1"]));
                }
            } else if r.chance(60) {
                push(&mut v, "--format", r.pick(FORMATS));
            }
        }
        "history" | "show" | "export" | "plot" | "report" | "compare" | "import" => {
            match sub {
                "history" => {}
                "import" => v.push(
                    r.pick(&[
                        &format!("{d}/run.json"),
                        &format!("{d}/bad.json"),
                        "/dev/null",
                        &nx,
                        "",
                        "/proc/self/status",
                    ])
                    .to_string(),
                ),
                "compare" => {
                    v.push(r.pick(IDS).into());
                    v.push(r.pick(IDS).into());
                }
                _ => v.push(r.pick(IDS).into()),
            }
            let db = format!("{d}/h.db");
            let other = format!("{d}/other.db");
            push(
                &mut v,
                "--db",
                r.pick(&[
                    &db,
                    &db,
                    &db,
                    &other,
                    "",
                    "mysql://x",
                    "/dev/null",
                    &nxdb,
                    "postgres://nobody@127.0.0.1:1/x",
                ]),
            );
            if matches!(sub, "plot" | "report" | "export") && r.chance(60) {
                let out = format!("{d}/out.{}", r.pick(&["png", "svg", "html", "json", "txt"]));
                push(&mut v, "-o", r.pick(&[&out, &out, &nxpng, "/dev/full", ""]));
            }
            if matches!(sub, "export" | "history" | "show" | "compare") && r.chance(40) {
                push(&mut v, "--format", r.pick(FORMATS));
            }
            if r.chance(15) {
                v.push(r.pick(HOSTILE).to_string());
            }
        }
        "completions" => {
            v.push(r.pick(&["bash", "zsh", "fish", "tcsh", ""]).into());
            if r.chance(30) {
                let out = format!("{d}/completions.sh");
                push(&mut v, "-o", r.pick(&[&out, "/dev/full", &nx]));
            }
        }
        _ => {
            for _ in 0..r.below(4) {
                v.push(r.pick(HOSTILE).to_string());
            }
        }
    }
    v
}

/// Processes still running with `marker` in their environment (a vector's own).
fn marked(marker: &str) -> Vec<String> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        if env.split(|&b| b == 0).any(|kv| kv == marker.as_bytes()) {
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            if !stat
                .rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
            {
                v.push(e.file_name().to_string_lossy().into_owned());
            }
        }
    }
    v
}

/// Named objects of run `pid` left in `tmp`, /dev/shm, SysV or POSIX queues.
fn objects_of(pid: u32, tmp: &Path) -> Vec<String> {
    let prefix = format!("ipcperf-{pid}-");
    let ours = |n: &str| {
        let n = n.trim_start_matches('/');
        n.strip_prefix("sem.").unwrap_or(n).starts_with(&prefix)
    };
    let mut left = Vec::new();
    for dir in [tmp, Path::new("/dev/shm")] {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if ours(&e.file_name().to_string_lossy()) {
                left.push(e.path().display().to_string());
            }
        }
    }
    for q in ipcperf_sys::sysv_msg::list() {
        if ipcperf_sys::sysv_msg::owner_of_key(q.key) == Some(pid as i32) {
            left.push(format!("SysV queue {}", q.id));
        }
    }
    for (key, id, _) in ipcperf_sys::sem::sysv_sem_list() {
        if ipcperf_sys::sem::sem_owner_of_key(key) == Some(pid as i32) {
            left.push(format!("SysV semaphores {id}"));
        }
    }
    for n in ipcperf_sys::mqueue::list().unwrap_or_default() {
        if ours(&n) {
            left.push(format!("POSIX queue {n}"));
        }
    }
    left
}

/// How many vectors ended with exit 0, 1 and 2.
static EXITS: [std::sync::atomic::AtomicUsize; 3] =
    [const { std::sync::atomic::AtomicUsize::new(0) }; 3];

/// Run one vector; None when it kept every promise.
fn try_one(n: usize, args: &[String], dir: &Path) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;
    let marker = format!("IPCPERF_FUZZ_CASE={}-{n}", std::process::id());
    let (k, v) = marker.split_once('=').unwrap();
    let mut child = Command::new(BIN)
        .args(args)
        .env("TMPDIR", dir)
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir)
        .env("IPCPERF_NO_SAVE", "1")
        .env(k, v)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut s);
        s
    });
    let t0 = Instant::now();
    let limit = Duration::from_secs(60);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Some(format!("still running after {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let err = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    if let Some(sig) = status.signal() {
        return Some(format!("killed by signal {sig}; stderr: {err}"));
    }
    match status.code() {
        Some(c @ 0..=2) => {
            EXITS[c as usize].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        _ => return Some(format!("exit {status}; stderr: {err}")),
    }
    if err.contains("panicked") || err.contains("RUST_BACKTRACE") {
        return Some(format!("panicked: {err}"));
    }
    if status.code() == Some(2) && !err.starts_with("ipcperf") {
        return Some(format!("bad input without ipcperf's one line: {err:?}"));
    }
    // Children die with their parent: give a peer a moment to go.
    let t = Instant::now();
    let mut alive = marked(&marker);
    while !alive.is_empty() && t.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
        alive = marked(&marker);
    }
    if !alive.is_empty() {
        return Some(format!("left processes {alive:?}"));
    }
    let left = objects_of(pid, dir);
    (!left.is_empty()).then(|| format!("left objects {left:?}"))
}

#[test]
fn a_thousand_generated_command_lines_each_end_cleanly() {
    let seed: u64 = std::env::var("IPCPERF_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x1bc_9e7f_2026_1123);
    let count: usize = std::env::var("IPCPERF_FUZZ_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A history with a run in it, a run file to import and a broken one.
    let out = Command::new(BIN)
        .args([
            "run", "pipe", "--sizes", "64,4k", "-d", "5ms", "--repeat", "1", "-f", "json", "--db",
        ])
        .arg(d.join("h.db"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    std::fs::write(d.join("run.json"), &out.stdout).unwrap();
    std::fs::write(d.join("bad.json"), &out.stdout[..out.stdout.len() / 2]).unwrap();

    const SUBS: &[&str] = &[
        "run",
        "run",
        "run",
        "run",
        "latency",
        "latency",
        "latency",
        "sync",
        "sync",
        "matrix",
        "topology",
        "gen",
        "sink",
        "pipeline",
        "list",
        "clean",
        "history",
        "show",
        "export",
        "plot",
        "report",
        "compare",
        "import",
        "nosuch",
        "__peer",
        "--help",
        "--version",
        "",
    ];
    let mut r = Rng((seed ^ 0x9e37_79b9_7f4a_7c15) | 1);
    let vectors: Vec<Vec<String>> = (0..count)
        .map(|_| {
            let sub = r.pick(SUBS);
            vector(&mut r, sub, d)
        })
        .collect();
    let next = Mutex::new(0usize);
    let failures = Mutex::new(Vec::new());
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    let i = *n;
                    *n += 1;
                    i
                };
                let Some(args) = vectors.get(i) else {
                    return;
                };
                if let Some(why) = try_one(i, args, d) {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("#{i} {args:?}: {why}"));
                }
            });
        }
    });
    let mut f = failures.into_inner().unwrap();
    if d.join("nonexistent").exists() {
        f.push("a directory named only in a path argument was made".into());
    }
    assert!(
        f.is_empty(),
        "seed {seed}: {} of {count} vectors broke a promise:\n{}",
        f.len(),
        f.join("\n")
    );
    let e: Vec<usize> = EXITS
        .iter()
        .map(|x| x.load(std::sync::atomic::Ordering::Relaxed))
        .collect();
    eprintln!(
        "seed {seed}: {count} command lines ended cleanly in {:.0?} (exit 0: {}, 1: {}, 2: {})",
        t0.elapsed(),
        e[0],
        e[1],
        e[2]
    );
    // The vectors must reach real runs and real failures, not only argument errors.
    assert!(e[0] > count / 10 && e[2] > count / 10, "{e:?}");
}
