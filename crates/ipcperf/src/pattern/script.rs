//! A conversation's messages, in order, for `replay`: read again from the trace
//! (one line at a time; what is kept is the messages of the one conversation),
//! or drawn from a fitted pattern; and the trace's hash, for the record.

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::strace::Way;
use super::{channel_key, each_call, fitted, trace_files, Conversation, TraceError};

/// A message: (time_ns, A to B, size).
pub type Message = (u64, bool, u64);

/// The messages of conversation `c` of the trace at `path`, in trace order
/// (the caller sorts by time: strace -ff's files come one after another).
pub fn messages(path: &Path, c: &Conversation) -> Result<Vec<Message>, TraceError> {
    let mut out = Vec::with_capacity(c.messages().min(1 << 26) as usize);
    each_call(path, |call| {
        if channel_key(&call).is_none_or(|(k, _)| k != c.key) {
            return;
        }
        let end = (call.pid, call.fd);
        let send = call.way == Way::Send;
        let a_to_b = match (c.both_sides, send) {
            // Both ends traced: the writes are the messages, A's going to B.
            (true, true) => c.a.contains(&end),
            (true, false) => return,
            // One side: its writes go out, its reads came in.
            (false, _) => send,
        };
        out.push((call.time_ns, a_to_b, call.bytes));
    })?;
    Ok(out)
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
