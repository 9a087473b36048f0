//! The fuzz test's generator: a small seeded RNG, the values it draws from, and
//! the command lines it builds from the binary's own command tree
//! (`ipcperf __cli-tree`): every subcommand, every flag, each value drawn by the
//! kind of value the flag takes, so a flag is fuzzed the day it lands.

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
    // A traversal that cannot resolve (its first part does not exist), so no
    // vector can name a file of the machine's.
    "nonexistent/../../../../etc/passwd",
    "\u{202e}evil",
    "a\nb",
    "$(reboot)",
    "/dev/full",
    "/dev/null/x",
    "-q",
    "-v",
    "--dir",
];

/// One argument as the command tree gives it.
#[derive(Debug, Clone)]
pub(crate) struct Arg {
    pub(crate) id: String,
    pub(crate) long: Option<String>,
    pub(crate) short: Option<String>,
    pub(crate) positional: bool,
    pub(crate) takes_value: bool,
    pub(crate) value_name: String,
    pub(crate) values: Vec<String>,
    pub(crate) many: bool,
}

/// A subcommand and its arguments.
#[derive(Debug, Clone)]
pub(crate) struct Sub {
    pub(crate) name: String,
    pub(crate) args: Vec<Arg>,
}

/// The binary's command tree.
pub(crate) fn tree(bin: &str) -> Vec<Sub> {
    let out = std::process::Command::new(bin)
        .arg("__cli-tree")
        .output()
        .unwrap();
    assert!(out.status.success(), "__cli-tree: {out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let arg = |a: &serde_json::Value| Arg {
        id: a["id"].as_str().unwrap_or_default().into(),
        long: a["long"].as_str().map(String::from),
        short: a["short"].as_str().map(String::from),
        positional: a["positional"].as_bool().unwrap_or(false),
        takes_value: a["takes_value"].as_bool().unwrap_or(false),
        value_name: a["value_name"].as_str().unwrap_or_default().into(),
        values: a["values"]
            .as_array()
            .map(|v| {
                v.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default(),
        many: a["many"].as_bool().unwrap_or(false),
    };
    v["subcommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| Sub {
            name: s["name"].as_str().unwrap().into(),
            args: s["args"].as_array().unwrap().iter().map(arg).collect(),
        })
        .collect()
}

/// The kind of value an argument takes, from its names.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    Choice,
    Size,
    GenBytes,
    Bytes,
    Duration,
    Count,
    Repeat,
    Counts,
    SmallInt,
    Number,
    Pin,
    Class,
    Cpus,
    Wake,
    Rate,
    Across,
    Background,
    Path,
    Db,
    Label,
    Id,
    Mechanism,
    Primitive,
    Host,
    Text,
}

pub(crate) fn kind(sub: &str, a: &Arg) -> Kind {
    let name = a.long.clone().unwrap_or_else(|| a.id.clone());
    match name.as_str() {
        _ if !a.values.is_empty() => Kind::Choice,
        "bytes" if sub == "gen" => Kind::GenBytes,
        "bytes" => Kind::Bytes,
        "sizes" | "size" | "shm-capacity" | "pipe-size" | "sndbuf" | "rcvbuf" | "chunk"
        | "rank-size" => Kind::Size,
        "duration" | "spin-for" | "max-duration" => Kind::Duration,
        "count" => Kind::Count,
        "repeat" => Kind::Repeat,
        "pairs" | "clients" | "subscribers" => Kind::Counts,
        "fan" | "priority" | "buffer-offset" | "last" | "user" => Kind::SmallInt,
        "threshold" | "cpu-budget" | "seed" | "verify-seed" => Kind::Number,
        "pin" => Kind::Pin,
        "placement" | "placements" => Kind::Class,
        "cpus" | "peer-pin" => Kind::Cpus,
        "wake" => Kind::Wake,
        "rate" => Kind::Rate,
        "across" => Kind::Across,
        "background" => Kind::Background,
        "db" => Kind::Db,
        "label" => Kind::Label,
        "peer" | "listen" => Kind::Host,
        "only" => Kind::Mechanism,
        _ => match a.value_name.as_str() {
            "FILE" | "DIR" | "OUTPUT" | "PATH" => Kind::Path,
            "ID" | "IDS" | "A" | "B" => Kind::Id,
            "MECHANISM" => Kind::Mechanism,
            "PRIMITIVE" => Kind::Primitive,
            _ if sub == "import" => Kind::Path,
            _ => Kind::Text,
        },
    }
}

/// Places a vector may name: inside the test's own directory (existing or not)
/// and a few the system has; nothing a bug could harm.
fn paths(d: &str) -> Vec<String> {
    vec![
        format!("{d}/out.png"),
        format!("{d}/out.svg"),
        format!("{d}/out.json"),
        format!("{d}/run.json"),
        format!("{d}/bad.json"),
        format!("{d}/man"),
        d.to_string(),
        format!("{d}/nonexistent/x"),
        format!("{d}/nonexistent/x.png"),
        "/dev/null".into(),
        "/dev/full".into(),
        "/proc/self/status".into(),
        "".into(),
    ]
}

/// A value of kind `k` (sometimes one no flag of that kind takes).
pub(crate) fn value(r: &mut Rng, k: Kind, a: &Arg, d: &str) -> String {
    if r.chance(6) {
        return r.pick(HOSTILE).to_string();
    }
    let db = format!("{d}/h.db");
    let other = format!("{d}/other.db");
    let nxdb = format!("{d}/nonexistent/x/y.db");
    match k {
        Kind::Choice => {
            let v: Vec<&str> = a.values.iter().map(String::as_str).collect();
            if r.chance(85) {
                r.pick(&v).to_string()
            } else {
                r.pick(&["", "nosuch", "ALL"]).to_string()
            }
        }
        Kind::Size => r.pick(SIZES).into(),
        // gen writes what it is asked, like `yes`: a valid count stays small (1T of
        // it is minutes of work, not a bug); pipeline refuses what does not fit its
        // temporary directory, so it gets the huge ones too.
        Kind::GenBytes => r
            .pick(&["1", "64k", "1M", "0", "99999999999999999999", "x", "1MB"])
            .into(),
        Kind::Bytes => r
            .pick(&["64k", "256k", "0", "8E", "1T", "1000", "x"])
            .into(),
        Kind::Duration => r.pick(DURATIONS).into(),
        Kind::Count => r.pick(COUNTS).into(),
        Kind::Repeat => r.pick(&["1", "2", "0", "100000", "-1", "x"]).into(),
        Kind::Counts => r
            .pick(&["1", "2", "1..2", "0", "65", "257", "2..1", "x", "1,2"])
            .into(),
        Kind::SmallInt => r
            .pick(&[
                "0", "1", "2", "3", "4", "16", "65", "65534", "-1", "x", "4096",
            ])
            .into(),
        Kind::Number => r
            .pick(&[
                "0",
                "1",
                "0.5",
                "-1",
                "1e9",
                "NaN",
                "inf",
                "x",
                "18446744073709551615",
            ])
            .into(),
        Kind::Pin => r.pick(PINS).into(),
        Kind::Class => r
            .pick(&[
                "all",
                "same-cpu",
                "shared-l3",
                "smt-sibling",
                "other-numa",
                "x",
                "",
            ])
            .into(),
        Kind::Cpus => r
            .pick(&["0-1", "0", "1", "1-0", "x", "0,4096", "0-99999999", "-1"])
            .into(),
        Kind::Wake => r.pick(WAKES).into(),
        Kind::Rate => r
            .pick(&["2k", "50k", "10M", "0", "1k,5k", "x", "1e3"])
            .into(),
        Kind::Across => r
            .pick(&["net", "ipc,mnt", "pid", "uts", "user", "x", "", "uts,uts"])
            .into(),
        Kind::Background => r
            .pick(&["cpu:1", "memory:1", "cpu:0", "gpu:1", "cpu:", "cpu:99999"])
            .into(),
        Kind::Path => {
            let p = paths(d);
            let v: Vec<&str> = p.iter().map(String::as_str).collect();
            r.pick(&v).to_string()
        }
        Kind::Db => r
            .pick(&[
                &db,
                &db,
                &db,
                &other,
                "",
                "mysql://x",
                "/dev/null",
                &nxdb,
                "postgres://nobody@127.0.0.1:1/x",
            ])
            .into(),
        Kind::Label => r
            .pick(&["baseline", "a b", "", "12", "last", "x\u{7}", "v1.2"])
            .into(),
        Kind::Id => r.pick(IDS).into(),
        Kind::Mechanism => r.pick(MECHS).into(),
        Kind::Primitive => r.pick(PRIMITIVES).into(),
        // Only this machine, or names that cannot be resolved anywhere.
        Kind::Host => r
            .pick(&[
                "127.0.0.1:1",
                "[::1]:1",
                "127.0.0.1:99999",
                "127.0.0.1:",
                ":::",
                "[::1",
            ])
            .into(),
        Kind::Text => r.pick(HOSTILE).into(),
    }
}

/// Subcommands left out of the generated lines, with why.
pub(crate) const NOT_GENERATED: &[(&str, &str)] = &[(
    "serve",
    "serves until stopped: tests/serve.rs throws hostile input at it",
)];

/// One argument vector for subcommand `s`.
pub(crate) fn vector(r: &mut Rng, s: &Sub, dir: &Path) -> Vec<String> {
    let d = dir.display().to_string();
    let mut v: Vec<String> = vec![s.name.clone()];
    let positionals: Vec<&Arg> = s.args.iter().filter(|a| a.positional).collect();
    for a in &positionals {
        let n = if a.many {
            r.below(3)
        } else {
            usize::from(r.chance(85))
        };
        for _ in 0..n {
            let k = kind(&s.name, a);
            v.push(value(r, k, a, &d));
        }
    }
    let options: Vec<&Arg> = s.args.iter().filter(|a| !a.positional).collect();
    for _ in 0..r.below(6) {
        if options.is_empty() {
            break;
        }
        let a = options[r.below(options.len())];
        let flag = match (&a.long, &a.short) {
            (Some(_), Some(sh)) if r.chance(30) => format!("-{sh}"),
            (Some(l), _) => format!("--{l}"),
            (None, Some(sh)) => format!("-{sh}"),
            (None, None) => continue,
        };
        if a.takes_value {
            let val = value(r, kind(&s.name, a), a, &d);
            if flag.starts_with("--") && r.chance(20) {
                v.push(format!("{flag}={val}"));
            } else {
                v.push(flag);
                v.push(val);
            }
        } else {
            v.push(flag);
        }
    }
    if r.chance(8) {
        v.push(r.pick(HOSTILE).to_string());
    }
    keep_short(&mut v, s);
    v
}

/// A valid vector must stay a measurement, not a benchmark: a series of a few
/// ms unless the vector set its own length, one series unless it set a count,
/// advise on two candidates, clean only looking.
fn keep_short(v: &mut Vec<String>, s: &Sub) {
    let has = |v: &Vec<String>, f: &[&str]| {
        v.iter()
            .any(|a| f.iter().any(|x| a == x || a.starts_with(&format!("{x}="))))
    };
    let flag = |name: &str| s.args.iter().any(|a| a.long.as_deref() == Some(name));
    // advise's series length is refused beside what measures nothing or replays
    // a pattern of its own length: those keep their own paths.
    let own_length =
        s.name == "advise" && has(v, &["--from-history", "--pattern-file", "--size-dist"]);
    if flag("duration") && !own_length && !has(v, &["--duration", "-d", "--count", "-n"]) {
        v.extend(["--duration".into(), "5ms".into()]);
    }
    if flag("repeat") && !has(v, &["--repeat", "-r"]) {
        v.extend(["--repeat".into(), "1".into()]);
    }
    match s.name.as_str() {
        "advise" => {
            v.push("--quick".into());
            if !has(v, &["--only"]) {
                v.extend(["--only".into(), "pipe,unix".into()]);
            }
        }
        "clean" => v.push("--dry-run".into()),
        // Stover's pipelines default to 512 MiB a run: a few KiB here.
        "pipeline" | "gen" if !has(v, &["--bytes"]) => {
            v.extend(["--bytes".into(), "64k".into()]);
        }
        _ => {}
    }
}
