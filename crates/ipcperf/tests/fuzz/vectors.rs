//! The fuzz test's generator: a small seeded RNG, the values it draws from, and
//! the command line it builds for each subcommand.

use std::path::Path;

/// xorshift64*: small, seeded, the same vectors on every machine.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub(crate) fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

pub(crate) const MECHS: &[&str] = &[
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
    "uring-unix",
    "uring-tcp",
    "uring-pipe",
    "uring-msg-ring",
    "ipc-channel",
    "iceoryx2",
    "zmq-ipc",
    "zmq-tcp",
    "grpc-uds",
    "nosuch",
    "",
    "PIPE",
];
pub(crate) const PRIMITIVES: &[&str] = &[
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
pub(crate) const SIZES: &[&str] = &[
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
pub(crate) const DURATIONS: &[&str] = &[
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
// A real count stays small: 1000 blocks of each default size (up to 1 MiB) of
// three shm wakes and tcp took a debug build 36 s alone and over the 60 s bound
// beside the other tests: a slow vector, not a hang.
pub(crate) const COUNTS: &[&str] = &["1", "10", "200", "0", "-5", "18446744073709551616", "x"];
pub(crate) const PINS: &[&str] = &[
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
pub(crate) const MODES: &[&str] = &["single", "threads", "processes", "sideways", ""];
pub(crate) const FORMATS: &[&str] = &["table", "json", "csv", "markdown", "text", "xml", ""];
pub(crate) const WAKES: &[&str] = &[
    "spin",
    "futex",
    "eventfd",
    "sem",
    "adaptive",
    "spin,futex,adaptive",
    "nap",
    "",
];
pub(crate) const IDS: &[&str] = &["1", "last", "0", "-1", "x", "99999999999999999999", "2"];
pub(crate) const HOSTILE: &[&str] = &[
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
    "-q",
    "-v",
    "--dir",
];

/// One argument vector for `sub`.
pub(crate) fn vector(r: &mut Rng, sub: &str, dir: &Path) -> Vec<String> {
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
                match r.below(17) {
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
                            "--fixed-buffers",
                            "--request-response",
                            "--placements=all",
                        ])
                        .into(),
                    ),
                    // Many pairs, fan-in, fan-out, labels, one-way: valid and not.
                    15 => match r.below(6) {
                        0 => push(
                            &mut v,
                            "--pairs",
                            r.pick(&["1", "2", "1..2", "0", "257", "x"]),
                        ),
                        1 if sub == "latency" => {
                            push(&mut v, "--clients", r.pick(&["1", "2", "0", "65", "2..1"]))
                        }
                        1 => push(&mut v, "--subscribers", r.pick(&["1", "2", "0", "65", "x"])),
                        2 => push(
                            &mut v,
                            "--label",
                            r.pick(&["a b", "", "12", "last", "x\u{7}"]),
                        ),
                        3 if sub == "latency" => {
                            v.push(r.pick(&["--one-way", "--half-rtt", "--busy-poll"]).into())
                        }
                        4 => push(
                            &mut v,
                            "--across",
                            r.pick(&["net", "ipc,mnt", "pid", "x", "", "uts,uts"]),
                        ),
                        _ => push(&mut v, "--pin", r.pick(&["none", "other-numa", "0,1"])),
                    },
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
