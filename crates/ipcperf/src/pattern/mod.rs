//! An application's traffic, as a trace shows it: strace's output (see
//! [`strace`]) or a CSV of `time_ns,direction,size`, read as a stream (one line
//! at a time; what is kept is a few histograms per conversation, never the
//! messages) into its **conversations**: the messages over one channel.
//!
//! A channel is what `-y`/`-yy` names when both ends can be told apart as one (a
//! pipe's inode, a socket pair's two inodes, a FIFO's path): its writers' calls
//! are its messages, side A being the first to send. Without that, each (pid,
//! descriptor) is a channel of its own seen from one side: its writes go A→B, its
//! reads are the messages B→A.

pub mod fitted;
pub mod script;
pub mod strace;

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;

use strace::{BadLine, Call, Way};

/// Sizes and gaps of the messages one way.
#[derive(Clone)]
pub struct Flow {
    pub count: u64,
    pub bytes: u64,
    pub sizes: Histogram<u64>,
    /// Nanoseconds between one message and the next.
    pub gaps: Histogram<u64>,
    pub first_ns: Option<u64>,
    pub last_ns: u64,
    /// Σ ln(size) and Σ ln(size)², for the lognormal fit.
    ln_sum: f64,
    ln_sq: f64,
}

impl Flow {
    fn new() -> Flow {
        Flow {
            count: 0,
            bytes: 0,
            // 3 significant figures: sizes and gaps to 0.1%.
            sizes: Histogram::new(3).unwrap_or_else(|_| unreachable!("3 figures is valid")),
            gaps: Histogram::new(3).unwrap_or_else(|_| unreachable!("3 figures is valid")),
            first_ns: None,
            last_ns: 0,
            ln_sum: 0.0,
            ln_sq: 0.0,
        }
    }

    fn add(&mut self, time_ns: u64, bytes: u64) {
        if self.first_ns.is_none() {
            self.first_ns = Some(time_ns);
        } else {
            // Out of order (a -ff merge, a resumed read): a gap of 0.
            let _ = self.gaps.record(time_ns.saturating_sub(self.last_ns));
        }
        self.last_ns = self.last_ns.max(time_ns);
        self.count += 1;
        self.bytes += bytes;
        let _ = self.sizes.record(bytes);
        let l = (bytes as f64).ln();
        self.ln_sum += l;
        self.ln_sq += l * l;
    }

    fn merge(&mut self, o: &Flow) {
        if o.count == 0 {
            return;
        }
        self.count += o.count;
        self.bytes += o.bytes;
        let _ = self.sizes.add(&o.sizes);
        let _ = self.gaps.add(&o.gaps);
        self.first_ns = Some(match self.first_ns {
            Some(f) => f.min(o.first_ns.unwrap_or(f)),
            None => o.first_ns.unwrap_or(0),
        });
        self.last_ns = self.last_ns.max(o.last_ns);
        self.ln_sum += o.ln_sum;
        self.ln_sq += o.ln_sq;
    }

    /// The sizes fitted: [`fitted::Sizes::Fixed`] when every message had one
    /// size, else a lognormal (the geometric mean and geometric standard deviation).
    pub fn size_fit(&self) -> Option<fitted::Sizes> {
        if self.count == 0 {
            return None;
        }
        if self.sizes.min() == self.sizes.max() {
            return Some(fitted::Sizes::Fixed(self.sizes.min()));
        }
        let n = self.count as f64;
        let mean = self.ln_sum / n;
        let var = (self.ln_sq / n - mean * mean).max(0.0);
        Some(fitted::Sizes::LogNormal {
            median: mean.exp(),
            spread: var.sqrt().exp(),
        })
    }

    /// The gaps fitted: Poisson arrivals at the mean rate.
    pub fn gap_fit(&self) -> Option<fitted::Gaps> {
        let span = self.last_ns.saturating_sub(self.first_ns?);
        if self.count < 2 || span == 0 {
            return None;
        }
        let rate = (self.count - 1) as f64 / (span as f64 / 1e9);
        Some(fitted::Gaps::Poisson(rate.clamp(0.001, 1e7)))
    }
}

/// A fitted pattern's messages (A to B) for `secs` seconds, as a pattern of one
/// conversation: what a description looks like before it is replayed.
pub fn generate(sizes: &fitted::Sizes, gaps: &fitted::Gaps, secs: f64, seed: u64) -> Pattern {
    let mut d = fitted::Draw::new(seed);
    let mut f = Flow::new();
    let end = (secs * 1e9) as u64;
    let mut t = 0u64;
    // At most 10 million messages: a description, not a load.
    while t <= end && f.count < 10_000_000 {
        f.add(t, d.size(sizes));
        t += d.gap_ns(gaps).max(1);
    }
    let calls = f.count;
    Pattern {
        conversations: vec![Conversation {
            number: 1,
            key: String::new(),
            what: Some(format!("--sizes {sizes} --gaps {gaps}")),
            a: Vec::new(),
            b: Vec::new(),
            both_sides: true,
            a_to_b: f,
            b_to_a: Flow::new(),
            first_seen: 0,
        }],
        calls,
        lines: 0,
        clock: "generated",
        unfinished: 0,
    }
}

/// One conversation of a trace.
pub struct Conversation {
    /// From 1, the busiest first.
    pub number: usize,
    /// What strace named the channel (`pipe:[123]`, `UNIX-STREAM:[5->6]`), if it did.
    pub what: Option<String>,
    /// Side A's and side B's (pid, descriptor)s.
    pub a: Vec<(u32, i32)>,
    pub b: Vec<(u32, i32)>,
    /// Whether both ends were in the trace (else: one side's reads and writes).
    pub both_sides: bool,
    pub a_to_b: Flow,
    pub b_to_a: Flow,
    /// Where it came from in the trace (its first message's place), for ties.
    first_seen: u64,
    /// Its channel's key (see [`channel_key`]): how its calls are found again.
    key: String,
}

impl Conversation {
    pub fn messages(&self) -> u64 {
        self.a_to_b.count + self.b_to_a.count
    }
}

/// The calls of one channel, by (pid, descriptor) and way, as they come.
struct Channel {
    key: String,
    what: Option<String>,
    paired: bool,
    first_seen: u64,
    /// The first (pid, fd) to send: side A.
    first_sender: Option<(u32, i32)>,
    ends: Vec<(u32, i32)>,
    flows: HashMap<(u32, i32, bool), Flow>,
}

/// The channel a call belongs to: what -y names when both ends share it, else
/// its (pid, descriptor). None for a device (`/dev/null<char 1:3>`, a tty): not
/// a conversation between processes.
fn channel_key(c: &Call) -> Option<(String, bool)> {
    Some(if let Some(w) = &c.what {
        if w.contains("<char ") || w.contains("<block ") {
            return None;
        }
        if w == "csv" {
            return Some((w.clone(), true));
        }
        // `UNIX-STREAM:[5->6]` from one end is `[6->5]` from the other.
        if let Some((kind, ends)) = w.split_once(":[") {
            if let Some((x, y)) = ends.trim_end_matches(']').split_once("->") {
                let (lo, hi) = if x <= y { (x, y) } else { (y, x) };
                return Some((format!("{kind}:[{lo}<->{hi}]"), true));
            }
            if kind == "pipe" {
                return Some((w.clone(), true));
            }
        }
        // A FIFO by its path (strace shows a FIFO and a file alike: a path
        // counts only when processes on both ends of it were seen).
        if w.starts_with('/') {
            return Some((w.clone(), true));
        }
        (format!("{}/{}", c.pid, c.fd), false)
    } else {
        (format!("{}/{}", c.pid, c.fd), false)
    })
}

/// What a trace holds.
pub struct Pattern {
    /// Busiest first.
    pub conversations: Vec<Conversation>,
    /// The calls read that moved bytes.
    pub calls: u64,
    pub lines: usize,
    pub clock: &'static str,
    /// Calls begun and never returned (a trace cut off).
    pub unfinished: usize,
}

/// Why a trace cannot be used: a bad line, a file that cannot be read, or nothing in it.
#[derive(Debug)]
pub enum TraceError {
    Bad { file: PathBuf, line: BadLine },
    Io { file: PathBuf, why: String },
    Empty(String),
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceError::Bad { file, line } => write!(f, "{}: {line}", file.display()),
            TraceError::Io { file, why } => write!(f, "{}: {why}", file.display()),
            TraceError::Empty(s) => f.write_str(s),
        }
    }
}

/// The files of a trace: `path` itself, or strace -ff's `path.PID` files, each
/// with its pid.
pub fn trace_files(path: &Path) -> Result<Vec<(PathBuf, u32)>, TraceError> {
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
    files.sort();
    Ok(files)
}

/// Whether a file is the CSV form: its first line that is not blank or a
/// comment reads `time_ns,direction,size` or three fields of that shape.
fn is_csv(first: &str) -> bool {
    let f: Vec<&str> = first.trim().split(',').map(str::trim).collect();
    f.len() == 3
        && (f[0] == "time_ns" || (f[0].bytes().all(|b| b.is_ascii_digit()) && !f[0].is_empty()))
}

/// One CSV line's direction: `>`/`a`/`out`/`a>b` is A→B, `<`/`b`/`in`/`b>a` B→A.
fn csv_direction(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        ">" | "a" | "out" | "a>b" | "ab" => Some(true),
        "<" | "b" | "in" | "b>a" | "ba" => Some(false),
        _ => None,
    }
}

/// The longest line read: strace's lines are short unless -s is huge.
const MAX_LINE: usize = 1 << 20;

/// What reading a trace's lines found besides its calls.
struct Lines {
    lines: usize,
    clock: &'static str,
    unfinished: usize,
}

/// Every call of a trace (every file of it) that moved bytes, in the order of
/// its files and lines, read one line at a time.
fn each_call(path: &Path, mut visit: impl FnMut(Call)) -> Result<Lines, TraceError> {
    let mut lines = 0usize;
    let mut clock = "none";
    let mut unfinished = 0;
    let mut untimed = 0;
    for (file, pid) in trace_files(path)? {
        let io = |e: std::io::Error| TraceError::Io {
            file: file.clone(),
            why: e.to_string(),
        };
        // A regular file only: opening a FIFO with no writer would wait forever,
        // and a device (/dev/zero) never ends.
        let meta = std::fs::metadata(&file).map_err(io)?;
        if !meta.is_file() {
            return Err(TraceError::Io {
                file: file.clone(),
                why: "not a regular file: save the trace to a file (strace -o FILE) and name it"
                    .into(),
            });
        }
        let mut r = std::io::BufReader::new(std::fs::File::open(&file).map_err(io)?);
        let mut bytes: Vec<u8> = Vec::new();
        let mut parser = strace::Parser::new(pid);
        let mut csv: Option<bool> = None;
        let mut n = 0usize;
        loop {
            bytes.clear();
            // One line, at most MAX_LINE bytes: a device or a file with no line
            // ends (/dev/zero) is refused, never read whole.
            let got = std::io::Read::take(&mut r, MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut bytes)
                .map_err(|e| TraceError::Io {
                    file: file.clone(),
                    why: format!("line {}: {e}", n + 1),
                })?;
            if got == 0 {
                break;
            }
            n += 1;
            if bytes.len() > MAX_LINE {
                return Err(TraceError::Bad {
                    file: file.clone(),
                    line: BadLine {
                        line: n,
                        why: "longer than 1 MiB: not a trace strace writes".into(),
                    },
                });
            }
            let buf = String::from_utf8_lossy(&bytes);
            let text = buf.trim_end_matches(['\n', '\r']);
            let csv_now = *csv.get_or_insert_with(|| is_csv(text));
            let call = if csv_now {
                if text.trim().is_empty() || text.starts_with('#') || text.starts_with("time_ns") {
                    continue;
                }
                let f: Vec<&str> = text.split(',').map(str::trim).collect();
                let bad = |why: String| TraceError::Bad {
                    file: file.clone(),
                    line: BadLine { line: n, why },
                };
                if f.len() != 3 {
                    return Err(bad(format!(
                        "{} fields where time_ns,direction,size has 3",
                        f.len()
                    )));
                }
                let t: u64 = f[0]
                    .parse()
                    .map_err(|_| bad(format!("time_ns `{}` is not a whole number", f[0])))?;
                let ab = csv_direction(f[1]).ok_or_else(|| {
                    bad(format!(
                        "direction `{}`: write > (A to B) or < (B to A)",
                        f[1]
                    ))
                })?;
                let size: u64 =
                    f[2].parse().ok().filter(|&s| s > 0).ok_or_else(|| {
                        bad(format!("size `{}` is not a byte count above 0", f[2]))
                    })?;
                clock = "nanoseconds (CSV)";
                Some(Call {
                    pid: if ab { 1 } else { 2 },
                    time_ns: t,
                    way: Way::Send,
                    fd: 0,
                    what: Some("csv".into()),
                    bytes: size,
                })
            } else {
                parser.line(text).map_err(|line| TraceError::Bad {
                    file: file.clone(),
                    line,
                })?
            };
            if let Some(call) = call {
                visit(call);
            }
        }
        lines += n;
        if !csv.unwrap_or(false) {
            clock = parser.clock_name();
            unfinished += parser.unfinished();
            untimed += parser.untimed;
        }
    }
    if untimed > 0 {
        return Err(TraceError::Empty(format!(
            "{}: {untimed} calls without a timestamp: trace with -ttt (or -tt, -r) so that \
             the messages have times",
            path.display()
        )));
    }
    Ok(Lines {
        lines,
        clock,
        unfinished,
    })
}

/// Read a trace (every file of it), one line at a time.
pub fn read(path: &Path) -> Result<Pattern, TraceError> {
    let mut channels: HashMap<String, Channel> = HashMap::new();
    let mut seen = 0u64;
    let Lines {
        lines,
        clock,
        unfinished,
    } = each_call(path, |call| {
        seen += 1;
        let Some((key, paired)) = channel_key(&call) else {
            return;
        };
        let ch = channels.entry(key.clone()).or_insert_with(|| Channel {
            key,
            what: call.what.clone(),
            paired,
            first_seen: seen,
            first_sender: None,
            ends: Vec::new(),
            flows: HashMap::new(),
        });
        let end = (call.pid, call.fd);
        if !ch.ends.contains(&end) {
            ch.ends.push(end);
        }
        if call.way == Way::Send && ch.first_sender.is_none() {
            ch.first_sender = Some(end);
        }
        ch.flows
            .entry((call.pid, call.fd, call.way == Way::Send))
            .or_insert_with(Flow::new)
            .add(call.time_ns, call.bytes);
    })?;
    let mut conversations: Vec<Conversation> = channels
        .into_values()
        .filter_map(|ch| {
            let pids: std::collections::BTreeSet<u32> = ch.ends.iter().map(|e| e.0).collect();
            let both = ch.paired && pids.len() > 1;
            // A path read or written by one process: a file, not a conversation.
            if !both && ch.what.as_deref().is_some_and(|w| w.starts_with('/')) {
                return None;
            }
            let mut c = Conversation {
                number: 0,
                key: ch.key.clone(),
                what: ch.what.clone(),
                a: Vec::new(),
                b: Vec::new(),
                both_sides: both,
                a_to_b: Flow::new(),
                b_to_a: Flow::new(),
                first_seen: ch.first_seen,
            };
            // A CSV's `>` is A's, whichever line comes first.
            let a_pid = if ch.what.as_deref() == Some("csv") {
                Some(1)
            } else {
                ch.first_sender.map(|e| e.0)
            };
            for ((pid, fd, send), f) in &ch.flows {
                let on_a = if both { Some(*pid) == a_pid } else { true };
                let side = if on_a { &mut c.a } else { &mut c.b };
                if !side.contains(&(*pid, *fd)) {
                    side.push((*pid, *fd));
                }
                match (both, send, on_a) {
                    // Both ends traced: the writes are the messages.
                    (true, true, true) => c.a_to_b.merge(f),
                    (true, true, false) => c.b_to_a.merge(f),
                    (true, false, _) => {}
                    // One side: its writes go out, its reads came in.
                    (false, true, _) => c.a_to_b.merge(f),
                    (false, false, _) => c.b_to_a.merge(f),
                }
            }
            c.a.sort();
            c.b.sort();
            (c.messages() > 0).then_some(c)
        })
        .collect();
    conversations.sort_by(|x, y| {
        y.messages()
            .cmp(&x.messages())
            .then(x.first_seen.cmp(&y.first_seen))
    });
    for (i, c) in conversations.iter_mut().enumerate() {
        c.number = i + 1;
    }
    if conversations.is_empty() {
        return Err(TraceError::Empty(format!(
            "{}: no conversation: no read, write, send or receive that moved bytes in {lines} \
             lines (trace with -e trace=read,write,sendmsg,recvmsg,sendto,recvfrom)",
            path.display()
        )));
    }
    Ok(Pattern {
        conversations,
        calls: seen,
        lines,
        clock,
        unfinished,
    })
}

#[cfg(test)]
mod tests;
