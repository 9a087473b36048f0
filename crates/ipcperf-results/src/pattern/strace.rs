//! strace's output, read a line at a time: `-f` (a pid before each line) or
//! `-ff` (one file per pid), timestamps from `-t`, `-tt`, `-ttt` or `-r`,
//! `<unfinished ...>` and `<... NAME resumed>` joined, strings however
//! truncated (`-s`). Each read, write, send or receive that moved bytes becomes a
//! [`Call`]: its pid, descriptor (and, with `-y`/`-yy`, what the descriptor is),
//! the bytes it returned and when. Failed calls (`= -1 EAGAIN`, EINTR, ...) and
//! reads at end of file (`= 0`) are left out; so is every other syscall.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::TraceError;

pub use super::fdcalls::FdOp;
use super::fdcalls::{fd_call, fd_op, lead_num};

/// Which way a call moved bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    Send,
    Recv,
}

/// One call that moved bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub pid: u32,
    /// Nanoseconds on the trace's own clock (its first timestamp's scale).
    pub time_ns: u64,
    pub way: Way,
    pub fd: i32,
    /// What the descriptor is, from `-y`/`-yy` (`pipe:[1234]`,
    /// `UNIX-STREAM:[5->6]`), if shown.
    pub what: Option<String>,
    pub bytes: u64,
}

/// What a line holds that matters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A call that moved bytes.
    Io(Call),
    /// A call of [`FdOp`], in process `pid`.
    Fd { pid: u32, op: FdOp },
}

/// A line that cannot be read: its number (from 1) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    pub line: usize,
    pub why: String,
}

impl std::fmt::Display for BadLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.why)
    }
}

/// How the trace's timestamps read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clock {
    /// `-t`/`-tt`: the time of day; a step back of more than 12 h is midnight.
    TimeOfDay,
    /// `-ttt`: seconds since the epoch.
    Epoch,
    /// `-r`: seconds since the line before.
    Relative,
}

/// The syscalls that move a message, and which way.
fn way_of(name: &str) -> Option<Way> {
    match name {
        "write" | "writev" | "pwrite64" | "pwritev" | "pwritev2" | "send" | "sendto"
        | "sendmsg" => Some(Way::Send),
        "read" | "readv" | "pread64" | "preadv" | "preadv2" | "recv" | "recvfrom" | "recvmsg" => {
            Some(Way::Recv)
        }
        _ => None,
    }
}

/// A call begun and not yet returned (`<unfinished ...>`): its first half.
struct Pending {
    name: String,
    args: String,
    time_ns: Option<u64>,
}

/// The reader's state across lines.
pub struct Parser {
    /// The pid of a file without pid columns (`-ff`'s `NAME.PID`), else 0.
    default_pid: u32,
    clock: Option<Clock>,
    /// Time of day: the last raw value and the days added at midnight.
    last_raw: u64,
    day_ns: u64,
    /// `-r`: the running sum.
    sum_ns: u64,
    pending: HashMap<u32, Pending>,
    line: usize,
    /// Lines without a timestamp where one was needed.
    pub untimed: usize,
}

const DAY_NS: u64 = 86_400 * 1_000_000_000;

impl Parser {
    pub fn new(default_pid: u32) -> Parser {
        Parser {
            default_pid,
            clock: None,
            last_raw: 0,
            day_ns: 0,
            sum_ns: 0,
            pending: HashMap::new(),
            line: 0,
            untimed: 0,
        }
    }

    fn bad(&self, why: impl Into<String>) -> BadLine {
        BadLine {
            line: self.line,
            why: why.into(),
        }
    }

    /// The next line: a call that moved bytes, nothing (any other line), or why
    /// it cannot be read.
    pub fn line(&mut self, text: &str) -> Result<Option<Event>, BadLine> {
        self.line += 1;
        let mut rest = text.trim_end_matches(['\n', '\r']).trim_start();
        if rest.is_empty() || rest.starts_with("strace: ") {
            return Ok(None);
        }
        // `[pid  123] ` (strace to a terminal) or `123  ` (-f into a file).
        let mut pid = self.default_pid;
        if let Some(r) = rest.strip_prefix("[pid") {
            let (n, r) = r
                .split_once(']')
                .ok_or_else(|| self.bad("`[pid` without its `]`"))?;
            pid = n
                .trim()
                .parse()
                .map_err(|_| self.bad(format!("pid `{}` is not a number", n.trim())))?;
            rest = r.trim_start();
        } else if let Some((first, r)) = rest.split_once(char::is_whitespace) {
            if !first.is_empty() && first.bytes().all(|b| b.is_ascii_digit()) {
                pid = first
                    .parse()
                    .map_err(|_| self.bad(format!("pid `{first}` is too large")))?;
                rest = r.trim_start();
            }
        }
        // The timestamp, if any: digits, dots and colons before the call.
        let mut time_ns = None;
        if rest.starts_with(|c: char| c.is_ascii_digit()) {
            let (stamp, r) = rest
                .split_once(char::is_whitespace)
                .ok_or_else(|| self.bad("a timestamp and nothing after it"))?;
            time_ns = Some(self.stamp(stamp)?);
            rest = r.trim_start();
        }
        if rest.starts_with("---") || rest.starts_with("+++") {
            return Ok(None); // a signal, an exit
        }
        // `<... NAME resumed> ...) = RET`: the call's two halves made one.
        if let Some(r) = rest.strip_prefix("<... ") {
            let (name, tail) = r
                .split_once(" resumed>")
                .ok_or_else(|| self.bad("`<...` without `resumed>`"))?;
            if way_of(name).is_none() && !fd_call(name) {
                self.pending.remove(&pid);
                return Ok(None);
            }
            let Some(p) = self.pending.remove(&pid).filter(|p| p.name == name) else {
                if way_of(name).is_none() {
                    return Ok(None);
                }
                return Err(self.bad(format!(
                    "`{name}` resumed in pid {pid}, which began no `{name}`"
                )));
            };
            let args = format!("{}{tail}", p.args);
            // A read's message arrived when it returned; a write's left when it began.
            let t = match way_of(name) {
                Some(Way::Recv) => time_ns.or(p.time_ns),
                _ => p.time_ns,
            };
            return self.call(pid, name, &args, t);
        }
        let (name, args) = rest
            .split_once('(')
            .ok_or_else(|| self.bad("neither a call, a signal nor an exit"))?;
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(self.bad(format!("`{name}` is not a syscall's name")));
        }
        if way_of(name).is_none() && !fd_call(name) {
            if rest.ends_with("<unfinished ...>") {
                self.pending.insert(
                    pid,
                    Pending {
                        name: name.to_string(),
                        args: String::new(),
                        time_ns: None,
                    },
                );
            }
            return Ok(None);
        }
        if let Some(first) = args.strip_suffix("<unfinished ...>") {
            self.pending.insert(
                pid,
                Pending {
                    name: name.to_string(),
                    args: first.to_string(),
                    time_ns,
                },
            );
            return Ok(None);
        }
        self.call(pid, name, args, time_ns)
    }

    /// A whole call (`NAME(` already read): `args` runs from after the `(` to
    /// the line's end.
    fn call(
        &mut self,
        pid: u32,
        name: &str,
        args: &str,
        time_ns: Option<u64>,
    ) -> Result<Option<Event>, BadLine> {
        let Some(way) = way_of(name) else {
            // A descriptor call: its result, if it succeeded.
            let Some(ret) = self.result(args)? else {
                return Ok(None);
            };
            if ret < 0 {
                return Ok(None);
            }
            return Ok(fd_op(name, args, ret).map(|op| Event::Fd { pid, op }));
        };
        let t = match time_ns {
            Some(t) => t,
            None => {
                self.untimed += 1;
                0
            }
        };
        let (fd, what) = self.fd(args)?;
        let Some(bytes) = self.result(args)?.filter(|&n| n > 0) else {
            return Ok(None);
        };
        Ok(Some(Event::Io(Call {
            pid,
            time_ns: t,
            way,
            fd,
            what,
            bytes: bytes as u64,
        })))
    }

    /// A timestamp in nanoseconds on the trace's clock.
    fn stamp(&mut self, s: &str) -> Result<u64, BadLine> {
        let bad = || self.bad(format!("`{s}` is not a timestamp strace writes"));
        let frac_ns = |f: &str| -> Option<u64> {
            if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some(f.parse::<u64>().ok()? * 10u64.pow(9 - f.len() as u32))
        };
        if s.contains(':') {
            let (hms, frac) = s.split_once('.').map_or((s, None), |(a, b)| (a, Some(b)));
            let parts: Vec<&str> = hms.split(':').collect();
            if parts.len() != 3 {
                return Err(bad());
            }
            let mut secs = 0u64;
            for (p, limit) in parts.iter().zip([24, 60, 61]) {
                let v: u64 = p.parse().map_err(|_| bad())?;
                if v >= limit || p.len() != 2 {
                    return Err(bad());
                }
                secs = secs * 60 + v;
            }
            let raw = secs * 1_000_000_000 + frac.map_or(Some(0), frac_ns).ok_or_else(bad)?;
            self.check_clock(Clock::TimeOfDay)?;
            if raw + DAY_NS / 2 < self.last_raw {
                self.day_ns += DAY_NS;
            }
            self.last_raw = raw;
            return Ok(raw + self.day_ns);
        }
        let (whole, frac) = s.split_once('.').ok_or_else(bad)?;
        if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) || whole.len() > 12 {
            return Err(bad());
        }
        let ns = whole.parse::<u64>().map_err(|_| bad())? * 1_000_000_000
            + frac_ns(frac).ok_or_else(bad)?;
        // -ttt is seconds since 1970 (over a million); -r a delta (far less).
        let kind = if ns >= 1_000_000 * 1_000_000_000 {
            Clock::Epoch
        } else {
            Clock::Relative
        };
        let kind = match self.clock {
            // A -ttt trace's first stamp decides; later lines must agree.
            Some(Clock::Epoch) if kind == Clock::Relative => return Err(bad()),
            Some(Clock::Relative) => Clock::Relative,
            _ => kind,
        };
        self.check_clock(kind)?;
        Ok(match kind {
            Clock::Relative => {
                self.sum_ns += ns;
                self.sum_ns
            }
            _ => ns,
        })
    }

    fn check_clock(&mut self, c: Clock) -> Result<(), BadLine> {
        match self.clock {
            None => {
                self.clock = Some(c);
                Ok(())
            }
            Some(k) if k == c => Ok(()),
            Some(k) => Err(self.bad(format!(
                "a {} timestamp in a trace whose lines so far had {}",
                clock_name(c),
                clock_name(k)
            ))),
        }
    }

    /// The descriptor (first argument) and, with -y, what it is.
    fn fd(&self, args: &str) -> Result<(i32, Option<String>), BadLine> {
        let end = args.find([',', '<', ')', ' ']).unwrap_or(args.len());
        let n = &args[..end];
        let fd: i32 = n
            .parse()
            .map_err(|_| self.bad(format!("the descriptor `{n}` is not a number")))?;
        let what = args[end..].strip_prefix('<').and_then(|r| {
            // `<pipe:[123]>`; a path may hold `>`: up to the `>` before `,` or `)`.
            let close = r
                .find(">,")
                .or_else(|| r.find(">)"))
                .or_else(|| r.rfind('>'))?;
            Some(r[..close].to_string())
        });
        Ok((fd, what))
    }

    /// What a call returned: None for an unknown result (`= ?`), a negative
    /// number for a failure. strace pads short calls to a column
    /// (`read(3, "", 1)                   = 0`), so any blanks may stand between
    /// the `)` and the `=`.
    fn result(&self, tail: &str) -> Result<Option<i64>, BadLine> {
        let Some((call, r)) = tail.rsplit_once(" = ").or_else(|| tail.rsplit_once(")= ")) else {
            return Err(self.bad("a call without its result (`) = N`)"));
        };
        if !(call.trim_end().ends_with(')') || tail.contains(")= ")) {
            return Err(self.bad("a call without its result (`) = N`)"));
        }
        let tok = r.split_whitespace().next().unwrap_or("");
        if tok == "?" {
            return Ok(None);
        }
        // `3</tmp/f>` (-y), `0x7f..` (an address), `-1 ENOENT (...)`.
        let n = if let Some(h) = tok.strip_prefix("0x") {
            i64::from_str_radix(h, 16).ok()
        } else {
            lead_num(tok)
        };
        n.map(Some)
            .ok_or_else(|| self.bad(format!("the result `{tok}` is not a byte count")))
    }

    /// The processes whose fork (`clone`, `fork`, `vfork`, `clone3`) is under
    /// way: a new pid seen now is one of their children.
    pub fn forking(&self) -> Vec<u32> {
        self.pending
            .iter()
            .filter(|(_, p)| matches!(p.name.as_str(), "clone" | "clone3" | "fork" | "vfork"))
            .map(|(pid, _)| *pid)
            .collect()
    }

    /// The calls begun and never returned (a trace cut off).
    pub fn unfinished(&self) -> usize {
        self.pending.len()
    }

    /// How the timestamps read.
    pub fn clock_name(&self) -> &'static str {
        self.clock.map_or("none", clock_name)
    }
}

fn clock_name(c: Clock) -> &'static str {
    match c {
        Clock::TimeOfDay => "time-of-day (-t/-tt)",
        Clock::Epoch => "epoch (-ttt)",
        Clock::Relative => "relative (-r)",
    }
}

/// The files of a trace: `path` itself, or strace -ff's `path.PID` files, each
/// with its pid.
pub fn trace_files(path: &Path) -> Result<Vec<(PathBuf, u32)>, TraceError> {
    // An empty name is no file (and its "strace -ff" files would be any `.N`
    // in the working directory).
    if path.as_os_str().is_empty() {
        return Err(TraceError::Empty(
            "'' names no trace file (strace's output or a CSV)".into(),
        ));
    }
    if path.exists() {
        return Ok(vec![(path.to_path_buf(), 0)]);
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let stem = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut files = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name
                .strip_prefix(&stem)
                .and_then(|r| r.strip_prefix('.'))
                .and_then(|p| p.parse::<u32>().ok())
            {
                files.push((e.path(), pid));
            }
        }
    }
    if files.is_empty() {
        return Err(TraceError::Io {
            file: path.to_path_buf(),
            why: "no such file (nor strace -ff's FILE.PID files)".into(),
        });
    }
    // By pid: a parent (whose fork hands its descriptors on) before its children.
    files.sort_by(|x, y| x.1.cmp(&y.1).then_with(|| x.0.cmp(&y.0)));
    Ok(files)
}
