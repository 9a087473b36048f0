//! A trace read once for `replay`: its conversations, every call of its
//! channels kept as it goes by, and the hash of its files, all in one pass;
//! then one conversation's messages in order. Or a fitted pattern's messages.

use std::collections::HashMap;
use std::path::Path;

use ipcperf_core::workload::replay::Answers;
use sha2::{Digest, Sha256};

use super::strace::{Call, Way};
use super::{fitted, read_keeping, Conversation, Pattern, TraceError};

/// A message: (time_ns, A to B, size).
pub type Message = (u64, bool, u64);

/// A message and, for one B to A, which A to B message it answers.
pub type Scripted = (u64, bool, u64, Answers);

/// One call kept, in trace order: 24 bytes (its channel and its end are
/// numbers into [`Calls`]' tables).
#[derive(Clone, Copy)]
struct KeptCall {
    time_ns: u64,
    bytes: u64,
    channel: u32,
    /// The end's number, times two, plus one for a send.
    end_way: u32,
}

/// Every call of every channel, in trace order.
#[derive(Default)]
pub(super) struct Calls {
    calls: Vec<KeptCall>,
    channels: HashMap<String, u32>,
    ends: HashMap<(u32, i32), u32>,
}

impl Calls {
    pub(super) fn keep(&mut self, key: &str, call: &Call) {
        let n = self.channels.len() as u32;
        let channel = match self.channels.get(key) {
            Some(&c) => c,
            None => *self.channels.entry(key.to_string()).or_insert(n),
        };
        let n = self.ends.len() as u32;
        let end = *self.ends.entry((call.pid, call.fd)).or_insert(n);
        self.calls.push(KeptCall {
            time_ns: call.time_ns,
            bytes: call.bytes,
            channel,
            end_way: end * 2 + u32::from(call.way == Way::Send),
        });
    }
}

/// What a pass keeps beside the pattern.
#[derive(Default)]
pub(super) struct Kept {
    pub(super) hash: Sha256,
    pub(super) calls: Calls,
}

/// A trace read once: its pattern, the SHA-256 of its files in the order they
/// were read, and every call, for [`Traced::into_messages`].
pub struct Traced {
    pub pattern: Pattern,
    pub sha256: String,
    calls: Calls,
}

/// Read a trace once for a replay (see [`super::read_with`] for `only`).
pub fn read_once(path: &Path, only: Option<&str>) -> Result<Traced, TraceError> {
    let mut kept = Kept::default();
    let pattern = read_keeping(path, only, Some(&mut kept))?;
    let sha256 = kept
        .hash
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(Traced {
        pattern,
        sha256,
        calls: kept.calls,
    })
}

impl Traced {
    /// The messages of conversation `c`, in trace order; the calls kept are
    /// let go as they are read.
    ///
    /// Where both ends are in the trace and B's reads are too, each B→A message
    /// answers the last A→B message B had read whole when it wrote (counted in
    /// bytes: reads may split or merge writes), so requests sent several at a
    /// time are answered in order, as the program ran; else the last A→B message
    /// before it.
    pub fn into_messages(self, c: &Conversation) -> Vec<Scripted> {
        let Calls {
            calls,
            channels,
            ends,
        } = self.calls;
        let mine: Vec<u32> = c
            .keys
            .iter()
            .filter_map(|k| channels.get(k))
            .copied()
            .collect();
        let mut end_of = vec![(0u32, 0i32); ends.len()];
        for (e, n) in ends {
            end_of[n as usize] = e;
        }
        let mut out = Vec::new();
        // B's reads of A's messages: (time, bytes).
        let mut b_reads: Vec<(u64, u64)> = Vec::new();
        for call in calls.into_iter().filter(|k| mine.contains(&k.channel)) {
            let end = end_of[(call.end_way / 2) as usize];
            let send = call.end_way % 2 == 1;
            let bytes = call.bytes;
            let a_to_b = match (c.both_sides, send) {
                // Both ends traced: the writes are the messages, A's going to B.
                (true, true) => c.a.contains(&end),
                (true, false) => {
                    if c.b.contains(&end) {
                        b_reads.push((call.time_ns, bytes));
                    }
                    continue;
                }
                // One side: its writes go out, its reads came in.
                (false, _) => send,
            };
            out.push((call.time_ns, a_to_b, bytes, Answers::Previous));
        }
        if !b_reads.is_empty() {
            answer(&mut out, &mut b_reads);
        }
        out
    }
}

/// Each B→A message's request: the last A→B message whose every byte B had
/// read by the time it wrote; none while B had read no whole one.
fn answer(msgs: &mut [Scripted], b_reads: &mut [(u64, u64)]) {
    msgs.sort_by_key(|m| m.0);
    b_reads.sort_by_key(|r| r.0);
    // Where each A→B message ends in A's stream of bytes.
    let mut ends: Vec<u64> = Vec::new();
    let mut sent = 0u64;
    for m in msgs.iter().filter(|m| m.1) {
        sent += m.2;
        ends.push(sent);
    }
    let (mut read, mut r) = (0u64, 0usize);
    for m in msgs.iter_mut().filter(|m| !m.1) {
        while r < b_reads.len() && b_reads[r].0 <= m.0 {
            read += b_reads[r].1;
            r += 1;
        }
        let whole = ends.partition_point(|&e| e <= read);
        m.3 = match whole {
            0 => Answers::Nothing,
            k => Answers::Request(k as u32 - 1),
        };
    }
}

/// A fitted pattern's messages (A to B) for `secs` seconds: the ones
/// [`super::generate`] describes with the same seed.
pub fn fitted_messages(
    sizes: &fitted::Sizes,
    gaps: &fitted::Gaps,
    secs: f64,
    seed: u64,
    most: u64,
) -> Vec<Message> {
    let mut d = fitted::Draw::new(seed);
    let end = (secs * 1e9) as u64;
    let mut out = Vec::new();
    let mut t = 0u64;
    while t <= end && (out.len() as u64) < most {
        out.push((t, true, d.size(sizes)));
        t += d.gap_ns(gaps).max(1);
    }
    out
}
