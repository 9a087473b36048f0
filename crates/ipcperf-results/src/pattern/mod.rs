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

pub mod ends;
mod fdcalls;
pub mod fitted;
mod flow;
mod join;
pub mod script;
pub mod strace;

use std::collections::{BTreeSet, HashMap};
use std::io::BufRead;
use std::path::{Path, PathBuf};

pub use flow::Flow;
use strace::{BadLine, Call, Event, Way};

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
            keys: Vec::new(),
            channels: vec!["generated".into()],
            what: Some(format!("--size-dist {sizes} --gaps {gaps}")),
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
        notes: Vec::new(),
    }
}

/// One conversation of a trace.
pub struct Conversation {
    /// From 1, the busiest first.
    pub number: usize,
    /// What strace named the channel (`pipe:[123]`, `UNIX-STREAM:[5->6]`), or
    /// what the trace's calls made it (`pipe[100:3,4]`), if either did; the
    /// channels joined by ` + ` where two carry one conversation.
    pub what: Option<String>,
    /// Each channel's name, where the channel has one (two where joined: the
    /// requests' first).
    pub channels: Vec<String>,
    /// Side A's and side B's (pid, descriptor)s.
    pub a: Vec<(u32, i32)>,
    pub b: Vec<(u32, i32)>,
    /// Whether both ends were in the trace (else: one side's reads and writes).
    pub both_sides: bool,
    pub a_to_b: Flow,
    pub b_to_a: Flow,
    /// Where it came from in the trace (its first message's place), for ties.
    first_seen: u64,
    /// Its channels' keys (see [`channel_key`]): how its calls are found again.
    keys: Vec<String>,
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
    /// A path opened by name: a file unless one process writes it and another reads it.
    path: bool,
    first_seen: u64,
    /// The first (pid, fd) to send: side A.
    first_sender: Option<(u32, i32)>,
    ends: Vec<(u32, i32)>,
    flows: HashMap<(u32, i32, bool), Flow>,
    /// The pids that wrote to it and that read from it.
    writers: BTreeSet<u32>,
    readers: BTreeSet<u32>,
    /// Its writes, by pid.
    writes_by: HashMap<u32, u64>,
}

/// A channel's key and what it is.
pub(crate) struct ChannelKey {
    key: String,
    /// The same from every end (a pipe, a socket pair, a path, the CSV).
    paired: bool,
    path: bool,
    /// Its name where `-yy` gave none (the calls that made it did).
    name: Option<String>,
}

/// A `-yy` name as a key: `UNIX-STREAM:[5->6]` from one end is `[6->5]` from
/// the other; a pipe and a path are their own key. None for one end's name.
fn named_key(w: &str) -> Option<String> {
    if let Some((kind, ends)) = w.split_once(":[") {
        if let Some((x, y)) = ends.trim_end_matches(']').split_once("->") {
            let (lo, hi) = if x <= y { (x, y) } else { (y, x) };
            return Some(format!("{kind}:[{lo}<->{hi}]"));
        }
        if kind == "pipe" {
            return Some(w.to_string());
        }
    }
    (w.starts_with('/') || w == "csv").then(|| w.to_string())
}

/// The channel a call belongs to: what -yy names when both ends share it, or
/// what the trace's own pipe/socketpair/fork/dup calls say it is ([`ends`]),
/// else its (pid, descriptor). None for a device (`/dev/null<char 1:3>`, a
/// tty) and a regular file opened by name that -yy does not show: not a
/// conversation between processes.
fn channel_key(c: &Call, e: &mut ends::Ends) -> Option<ChannelKey> {
    let own = || ChannelKey {
        key: format!("{}/{}", c.pid, c.fd),
        paired: false,
        path: false,
        name: None,
    };
    if let Some(w) = &c.what {
        if w.contains("<char ") || w.contains("<block ") {
            return None;
        }
        // A FIFO by its path (strace shows a FIFO and a file alike: a path
        // counts only when one process writes it and another reads it).
        return Some(match named_key(w) {
            Some(key) => ChannelKey {
                key,
                paired: true,
                path: w.starts_with('/'),
                name: None,
            },
            None => own(),
        });
    }
    Some(match e.key(c.pid, c.fd) {
        Some(k) => ChannelKey {
            key: k.name.clone(),
            paired: k.both_ends,
            path: k.path,
            name: Some(k.name),
        },
        None => own(),
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
    /// What the reader has to say of the whole: channels left apart and why,
    /// how to trace so that both ends can be paired.
    pub notes: Vec<String>,
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
    /// Whether -y/-yy named any descriptor.
    named: bool,
    /// Whether the trace made pipes or socket pairs, or forked (see [`ends`]).
    followed: bool,
}

/// Every call of a trace (every file of it) that moved bytes, with its channel
/// (None: not a conversation's), in the order of its files and lines, read one
/// line at a time.
fn each_call(
    path: &Path,
    mut hash: Option<&mut sha2::Sha256>,
    mut visit: impl FnMut(Call, Option<ChannelKey>),
) -> Result<Lines, TraceError> {
    let mut lines = 0usize;
    let mut clock = "none";
    let mut unfinished = 0;
    let mut untimed = 0;
    let mut named = false;
    let mut tables = ends::Ends::default();
    for (file, pid) in strace::trace_files(path)? {
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
        // A CSV's rows are in time order: one earlier than the row before (two
        // logs joined) would be a gap of 0 and a span that is not the traffic's.
        let mut csv_last: Option<(u64, usize)> = None;
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
            if let Some(h) = hash.as_deref_mut() {
                sha2::Digest::update(h, &bytes);
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
            // A spreadsheet's "CSV UTF-8" starts with a byte-order mark: no
            // part of the first line ("neither strace's output nor the CSV form").
            let text = match n {
                1 => text.strip_prefix('\u{feff}').unwrap_or(text),
                _ => text,
            };
            // Which form the file is, from its first line that is not blank
            // or a comment (a CSV headed by a note was read as strace's).
            let deciding = csv.is_none();
            if deciding && (text.trim().is_empty() || text.starts_with('#')) {
                continue;
            }
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
                if let Some((before, at)) = csv_last.filter(|&(b, _)| t < b) {
                    return Err(bad(format!(
                        "time_ns {t} is earlier than line {at}'s {before}: the rows must be in \
                         time order (sort -t, -k1,1n)"
                    )));
                }
                csv_last = Some((t, n));
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
                Some(Event::Io(Call {
                    pid: if ab { 1 } else { 2 },
                    time_ns: t,
                    way: Way::Send,
                    fd: 0,
                    what: Some("csv".into()),
                    bytes: size,
                }))
            } else {
                parser.line(text).map_err(|mut line| {
                    // The file's line (the parser does not see leading notes).
                    line.line = n;
                    // A first line of commas and no call: a CSV of another shape.
                    if deciding && text.contains(',') && !text.contains('(') {
                        line.why = format!(
                            "neither strace's output nor the CSV form time_ns,direction,size \
                             (this line has {} fields)",
                            text.split(',').count()
                        );
                    }
                    TraceError::Bad {
                        file: file.clone(),
                        line,
                    }
                })?
            };
            match call {
                Some(Event::Io(call)) => {
                    if csv_now {
                        let key = ChannelKey {
                            key: "csv".into(),
                            paired: true,
                            path: false,
                            name: None,
                        };
                        visit(call, Some(key));
                        continue;
                    }
                    if !tables.knows(call.pid) {
                        tables.meet(call.pid, &parser.forking());
                    }
                    named |= call.what.is_some();
                    let key = channel_key(&call, &mut tables);
                    visit(call, key);
                }
                Some(Event::Fd { pid, op }) => {
                    if !tables.knows(pid) {
                        tables.meet(pid, &parser.forking());
                    }
                    tables.apply(pid, &op);
                }
                None => {}
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
        named,
        followed: tables.followed,
    })
}

/// Read a trace (every file of it), one line at a time.
pub fn read(path: &Path) -> Result<Pattern, TraceError> {
    read_with(path, None)
}

/// Read a trace; with `only`, the one channel of that name (`pipe:[335]`,
/// `pipe[100:3,4]`, `/tmp/fifo`, `PID/FD`) as a conversation of its own, never
/// joined to another.
pub fn read_with(path: &Path, only: Option<&str>) -> Result<Pattern, TraceError> {
    read_keeping(path, only, None)
}

/// [`read_with`], also keeping every call of every channel and the trace's
/// hash in `keep` (for a replay: one pass over the trace).
fn read_keeping(
    path: &Path,
    only: Option<&str>,
    keep: Option<&mut script::Kept>,
) -> Result<Pattern, TraceError> {
    let only_key = only.map(|o| named_key(o).unwrap_or_else(|| o.to_string()));
    let mut channels: HashMap<String, Channel> = HashMap::new();
    let mut order = join::Order::default();
    let mut seen = 0u64;
    let (hash, mut calls) = match keep {
        Some(k) => (Some(&mut k.hash), Some(&mut k.calls)),
        None => (None, None),
    };
    let lines = each_call(path, hash, |call, key| {
        seen += 1;
        let Some(key) = key else {
            return;
        };
        let send = call.way == Way::Send;
        if let Some(calls) = calls.as_deref_mut() {
            calls.keep(&key.key, &call);
        }
        if !send {
            order.read(call.pid, &key.key, |x| {
                channels
                    .get(x)
                    .and_then(|c| c.writes_by.get(&call.pid))
                    .copied()
                    .unwrap_or(0)
            });
        }
        let ch = channels.entry(key.key.clone()).or_insert_with(|| Channel {
            key: key.key.clone(),
            what: call.what.clone().or(key.name),
            paired: key.paired,
            path: key.path,
            first_seen: seen,
            first_sender: None,
            ends: Vec::new(),
            flows: HashMap::new(),
            writers: BTreeSet::new(),
            readers: BTreeSet::new(),
            writes_by: HashMap::new(),
        });
        let end = (call.pid, call.fd);
        if !ch.ends.contains(&end) {
            ch.ends.push(end);
        }
        if send {
            if ch.first_sender.is_none() {
                ch.first_sender = Some(end);
            }
            ch.writers.insert(call.pid);
            *ch.writes_by.entry(call.pid).or_default() += 1;
            order.wrote(call.pid, &key.key);
        } else {
            ch.readers.insert(call.pid);
        }
        ch.flows
            .entry((call.pid, call.fd, send))
            .or_insert_with(Flow::new)
            .add(call.time_ns, call.bytes);
    })?;
    let Lines {
        lines,
        clock,
        unfinished,
        named,
        followed,
    } = lines;
    let mut notes = Vec::new();
    if let Some(o) = &only_key {
        channels.retain(|k, ch| k == o || ch.what.as_deref() == only);
        if channels.is_empty() {
            return Err(TraceError::Empty(format!(
                "{}: no channel {} (ipcperf pattern {} names them)",
                path.display(),
                only.unwrap_or_default(),
                path.display()
            )));
        }
    }
    let groups = if only.is_some() {
        channels.into_values().map(|c| vec![c]).collect()
    } else {
        join::join(channels, &order, &mut notes)
    };
    let mut conversations: Vec<Conversation> =
        groups.into_iter().filter_map(conversation).collect();
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
    if clock != "nanoseconds (CSV)" && !named && !followed {
        notes.push(
            "no -yy names and no pipe, socketpair or fork calls in the trace: each process's \
             descriptor is a conversation seen from its side; to pair both ends trace with \
             strace -f -ttt -yy"
                .into(),
        );
    }
    Ok(Pattern {
        conversations,
        calls: seen,
        lines,
        clock,
        unfinished,
        notes,
    })
}

/// One conversation from its channels (one, or two joined: the requests' first).
fn conversation(chs: Vec<Channel>) -> Option<Conversation> {
    let first = chs.first()?;
    let joined = chs.len() > 1;
    let pids: BTreeSet<u32> = chs
        .iter()
        .flat_map(|c| c.ends.iter().map(|e| e.0))
        .collect();
    let both = joined || (first.paired && pids.len() > 1);
    // A path that no process wrote for another to read: a file, not a conversation.
    if !joined
        && first.path
        && !first
            .writers
            .iter()
            .any(|w| first.readers.iter().any(|r| r != w))
    {
        return None;
    }
    let names: Vec<String> = chs.iter().filter_map(|c| c.what.clone()).collect();
    let mut c = Conversation {
        number: 0,
        keys: chs.iter().map(|c| c.key.clone()).collect(),
        what: (!names.is_empty()).then(|| names.join(" + ")),
        channels: names,
        a: Vec::new(),
        b: Vec::new(),
        both_sides: both,
        a_to_b: Flow::new(),
        b_to_a: Flow::new(),
        first_seen: chs.iter().map(|c| c.first_seen).min().unwrap_or(0),
    };
    // A CSV's `>` is A's, whichever line comes first; joined, the requests' writer.
    let a_pid = if first.what.as_deref() == Some("csv") {
        Some(1)
    } else {
        first.first_sender.map(|e| e.0)
    };
    for ch in &chs {
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
    }
    c.a.sort();
    c.b.sort();
    (c.messages() > 0).then_some(c)
}

pub mod table;
#[cfg(test)]
mod tests;
