//! Two one-way channels that carry one conversation: requests one way, answers
//! the other, between the same two processes (two pipes, two FIFOs, two socket
//! pairs each used one way: a coprocess, a worker, `popen` both ways).
//!
//! Two channels are joined when each is written by one process and read by one
//! other, the same two processes the other way round, no other channel runs
//! between them, and the process that answers wrote every answer after it had
//! read from the requests' channel. Otherwise they stay apart, and a note says
//! why: a process that writes before it has read anything streams both ways at
//! once; channels that chain three processes are a pipeline; several channels
//! each way cannot be told apart.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::Channel;

/// The order of each process's own reads and writes, as far as joining needs it.
#[derive(Default)]
pub(super) struct Order {
    /// Per pid, the channels it has read from so far.
    read_from: HashMap<u32, HashSet<String>>,
    /// Per pid, the channels it has written to so far.
    written: HashMap<u32, HashSet<String>>,
    /// (channel X, channel Y, pid): X's writes by pid before it first read Y.
    before: HashMap<(String, String, u32), u64>,
    /// The last few (pid, channel, read) seen: a trace repeats them call after
    /// call, and a match skips hashing the channel's name.
    recent: Vec<(u32, String, bool)>,
}

/// How many recent (pid, channel, way) [`Order`] remembers.
const RECENT: usize = 8;

impl Order {
    /// `pid` read from channel `key`; `writes(X)`: pid's writes on X so far.
    pub(super) fn read(&mut self, pid: u32, key: &str, writes: impl Fn(&str) -> u64) {
        if self.seen(pid, key, true) {
            return;
        }
        let r = self.read_from.entry(pid).or_default();
        if r.contains(key) {
            return;
        }
        r.insert(key.to_string());
        for x in self.written.get(&pid).into_iter().flatten() {
            let n = writes(x);
            if n > 0 {
                self.before.insert((x.clone(), key.to_string(), pid), n);
            }
        }
    }

    /// `pid` wrote to channel `key`.
    pub(super) fn wrote(&mut self, pid: u32, key: &str) {
        if self.seen(pid, key, false) {
            return;
        }
        let w = self.written.entry(pid).or_default();
        if !w.contains(key) {
            w.insert(key.to_string());
        }
    }

    /// Whether (pid, key, read) was among the last few seen (noting it if not):
    /// then it was recorded already.
    fn seen(&mut self, pid: u32, key: &str, read: bool) -> bool {
        if self
            .recent
            .iter()
            .any(|(p, k, r)| *p == pid && *r == read && k == key)
        {
            return true;
        }
        if self.recent.len() == RECENT {
            self.recent.remove(0);
        }
        self.recent.push((pid, key.to_string(), read));
        false
    }

    /// Of `pid`'s `writes` on channel `x`, how many came after it first read `y`.
    fn after(&self, pid: u32, x: &str, y: &str, writes: u64) -> u64 {
        if !self.read_from.get(&pid).is_some_and(|r| r.contains(y)) {
            return 0;
        }
        let key = (x.to_string(), y.to_string(), pid);
        writes.saturating_sub(self.before.get(&key).copied().unwrap_or(0))
    }
}

/// A channel written by one process and read by one other: (index, writer, reader).
type OneWay = (usize, u32, u32);

fn name(c: &Channel) -> &str {
    c.what.as_deref().unwrap_or(&c.key)
}

/// When a channel's first message was written.
fn first_write(c: &Channel) -> u64 {
    c.flows
        .iter()
        .filter(|((_, _, send), _)| *send)
        .filter_map(|(_, f)| f.first_ns)
        .min()
        .unwrap_or(u64::MAX)
}

/// The channels, each alone or two joined (the requests' channel first), with a
/// note for each pair of channels left apart that a reader might expect joined.
pub(super) fn join(
    channels: HashMap<String, Channel>,
    order: &Order,
    notes: &mut Vec<String>,
) -> Vec<Vec<Channel>> {
    let mut chans: Vec<Channel> = channels.into_values().collect();
    chans.sort_by_key(|c| c.first_seen);
    // The channels written by one process and read by one other: (index, writer, reader).
    let one_way: Vec<OneWay> = chans
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            if !c.paired || c.key == "csv" || c.writers.len() != 1 || c.readers.len() != 1 {
                return None;
            }
            let (w, r) = (*c.writers.first()?, *c.readers.first()?);
            (w != r).then_some((i, w, r))
        })
        .collect();
    let mut by_pair: BTreeMap<(u32, u32), Vec<OneWay>> = BTreeMap::new();
    for &(i, w, r) in &one_way {
        by_pair
            .entry((w.min(r), w.max(r)))
            .or_default()
            .push((i, w, r));
    }
    let mut joined: Vec<(usize, usize)> = Vec::new();
    for ((lo, hi), chs) in &by_pair {
        let fwd: Vec<_> = chs.iter().filter(|c| c.1 == *lo).collect();
        let back: Vec<_> = chs.iter().filter(|c| c.1 == *hi).collect();
        if fwd.is_empty() || back.is_empty() {
            continue;
        }
        if fwd.len() > 1 || back.len() > 1 {
            let names: Vec<&str> = chs.iter().map(|c| name(&chans[c.0])).collect();
            notes.push(format!(
                "{} left apart: several channels each way between pids {lo} and {hi} \
                 (--channel replays one)",
                names.join(", ")
            ));
            continue;
        }
        let (x, y) = (fwd[0], back[0]);
        let (req, ans) = if first_write(&chans[x.0]) <= first_write(&chans[y.0]) {
            (x, y)
        } else {
            (y, x)
        };
        let q = ans.1;
        let writes = chans[ans.0].writes_by.get(&q).copied().unwrap_or(0);
        let after = order.after(q, &chans[ans.0].key, &chans[req.0].key, writes);
        if after == writes {
            joined.push((req.0, ans.0));
        } else {
            notes.push(format!(
                "{} and {} left apart: pid {q} wrote {} of its {writes} messages on {} before it \
                 read from {}: streams both ways at once, not requests and answers",
                name(&chans[req.0]),
                name(&chans[ans.0]),
                writes - after,
                name(&chans[ans.0]),
                name(&chans[req.0]),
            ));
        }
    }
    // Channels that chain three processes: a pipeline, each its own conversation.
    let in_joined = |i: usize| joined.iter().any(|&(a, b)| a == i || b == i);
    let mut chained = 0;
    for &(i, w1, r1) in &one_way {
        for &(j, w2, r2) in &one_way {
            if i == j || r1 != w2 || r2 == w1 || in_joined(i) || in_joined(j) {
                continue;
            }
            chained += 1;
            if chained <= 5 {
                notes.push(format!(
                    "{} and {} left apart: they chain three processes (pid {w1} → {r1} → {r2}), \
                     a pipeline",
                    name(&chans[i]),
                    name(&chans[j])
                ));
            }
        }
    }
    if chained > 5 {
        notes.push(format!(
            "and {} more chains of three processes",
            chained - 5
        ));
    }
    let mut slots: Vec<Option<Channel>> = chans.into_iter().map(Some).collect();
    let mut groups = Vec::with_capacity(slots.len());
    for (req, ans) in joined {
        if let (Some(a), Some(b)) = (slots[req].take(), slots[ans].take()) {
            groups.push(vec![a, b]);
        }
    }
    groups.extend(slots.into_iter().flatten().map(|c| vec![c]));
    groups
}
