//! A conversation's messages, in order, for `replay`: read again from the trace
//! (one line at a time; what is kept is the messages of the one conversation),
//! or drawn from a fitted pattern; and the trace's hash, for the record.

use std::io::Read;
use std::path::Path;

use ipcperf_core::workload::replay::Answers;
use sha2::{Digest, Sha256};

use super::strace::Way;
use super::{each_call, fitted, trace_files, Conversation, TraceError};

/// A message: (time_ns, A to B, size).
pub type Message = (u64, bool, u64);

/// A message and, for one B to A, which A to B message it answers.
pub type Scripted = (u64, bool, u64, Answers);

/// The messages of conversation `c` of the trace at `path`, in trace order
/// (the caller sorts by time: strace -ff's files come one after another).
///
/// Where both ends are in the trace and B's reads are too, each B→A message
/// answers the last A→B message B had read whole when it wrote (counted in
/// bytes: reads may split or merge writes), so requests sent several at a time
/// are answered in order, as the program ran; else the last A→B message before it.
pub fn messages(path: &Path, c: &Conversation) -> Result<Vec<Scripted>, TraceError> {
    let mut out = Vec::with_capacity(c.messages().min(1 << 26) as usize);
    // B's reads of A's messages: (time, bytes).
    let mut b_reads: Vec<(u64, u64)> = Vec::new();
    each_call(path, |call, key| {
        if key.is_none_or(|k| !c.keys.contains(&k.key)) {
            return;
        }
        let end = (call.pid, call.fd);
        let send = call.way == Way::Send;
        let a_to_b = match (c.both_sides, send) {
            // Both ends traced: the writes are the messages, A's going to B.
            (true, true) => c.a.contains(&end),
            (true, false) => {
                if c.b.contains(&end) {
                    b_reads.push((call.time_ns, call.bytes));
                }
                return;
            }
            // One side: its writes go out, its reads came in.
            (false, _) => send,
        };
        out.push((call.time_ns, a_to_b, call.bytes, Answers::Previous));
    })?;
    if !b_reads.is_empty() {
        answer(&mut out, &mut b_reads);
    }
    Ok(out)
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

/// The SHA-256 of the trace's files, in the order they are read.
pub fn sha256(path: &Path) -> Result<String, TraceError> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    for (file, _) in trace_files(path)? {
        let io = |e: std::io::Error| TraceError::Io {
            file: file.clone(),
            why: e.to_string(),
        };
        let mut f = std::fs::File::open(&file).map_err(io)?;
        loop {
            let n = f.read(&mut buf).map_err(io)?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
        }
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}
