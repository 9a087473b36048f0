//! Replay: an application's messages, both ways, at their recorded times.
//!
//! A [`Script`] is one conversation's messages in the order they happened: each
//! with its time, its size and its way. Both sides walk the same script, so a
//! stream mechanism needs no framing: side A (the owner) sends each A→B message
//! when it is due and receives each B→A message; side B (the peer) receives each
//! A→B message and sends each B→A message when it is due. A B→A message is due
//! its recorded offset after the arrival of the A→B message it answers (the last
//! one before it), or at its own recorded time when it answers none.
//!
//! Nothing is stamped into the messages (a trace's 1-byte messages have no room
//! for a time): each side writes one time per message into an array allocated
//! before the pass — the send time of what it sends, the arrival of what it
//! receives — and the two arrays are put together after the pass. Each message's
//! latency counts from when it was *due*, not from when it went (so a side that
//! fell behind counts its lateness for every message it delayed, as `--rate`
//! does); its lateness is its send time less its due time. Both sides read one
//! clock (CLOCK_MONOTONIC), so replay needs both on this machine.
//!
//! A side receives the other's messages in order before it sends a later one of
//! its own, as the program it replays did: a message due while its side still
//! waits for an earlier one from the other side goes late, and says so.

use std::fs::File;
use std::os::unix::fs::FileExt;

use hdrhistogram::Histogram;
use ipcperf_sys::clock::now_ns;

use super::roundtrip::{wait_until, MessageEnd};
use crate::error::{Error, Result};
use crate::latency::{percentiles, Percentiles};
use crate::payload::PayloadOps;

/// [`Step::anchor`] of an A→B message.
pub const FORWARD: u32 = u32::MAX;
/// [`Step::anchor`] of a B→A message that answers none: due at its own time.
pub const OWN_TIME: u32 = u32::MAX - 1;
/// The largest message a replay carries.
pub const MAX_MESSAGE: u64 = 64 << 20;
/// The most messages one replay series holds (its passes together): two 8-byte
/// times each, on each side.
pub const MAX_STEPS: u64 = 50_000_000;
/// The longest a replay's pass may last (its loops together): 30 days, so
/// that no time in it can overflow.
pub const MAX_SPAN_NS: u64 = 30 * 86_400 * 1_000_000_000;
/// A send this late is behind the schedule.
pub const BEHIND_NS: u64 = 1_000_000;
/// Bins of the timeline (latency against time in the trace).
pub const TIMELINE_BINS: usize = 100;
const STEP_BYTES: usize = 16;

/// Which A→B message a B→A message answers, for [`Script::answering`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answers {
    /// The last A→B message before it (none before it: its own time).
    Previous,
    /// The A→B message with this place among them (0: the first), in time order.
    Request(u32),
    /// None: due at its own recorded time.
    Nothing,
}

/// One message of a script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// When it happened, from the first message (after `--speed`).
    pub at_ns: u64,
    pub size: u32,
    /// [`FORWARD`] (A→B), [`OWN_TIME`], or the index of the A→B message it answers.
    pub anchor: u32,
}

impl Step {
    #[inline(always)]
    pub fn forward(&self) -> bool {
        self.anchor == FORWARD
    }

    fn to_bytes(self) -> [u8; STEP_BYTES] {
        let mut b = [0u8; STEP_BYTES];
        b[..8].copy_from_slice(&self.at_ns.to_le_bytes());
        b[8..12].copy_from_slice(&self.size.to_le_bytes());
        b[12..].copy_from_slice(&self.anchor.to_le_bytes());
        b
    }

    fn from_bytes(b: &[u8]) -> Step {
        let word = |r: std::ops::Range<usize>| {
            let mut w = [0u8; 8];
            w[..r.len()].copy_from_slice(&b[r]);
            u64::from_le_bytes(w)
        };
        Step {
            at_ns: word(0..8),
            size: word(8..12) as u32,
            anchor: word(12..16) as u32,
        }
    }
}

/// The speeds a replay takes (`--speed`): from a thousandth to a million times
/// as fast as recorded.
pub const SPEEDS: std::ops::RangeInclusive<f64> = 0.001..=1e6;

/// `speed` if a replay can go at it: the one check of a speed, for the command
/// line and the script alike.
pub fn check_speed(speed: f64) -> std::result::Result<f64, String> {
    check_speed_as(speed, &speed.to_string())
}

/// [`check_speed`], the speed named as the user wrote it (`1e300`, not its 301
/// digits).
pub fn check_speed_as(speed: f64, written: &str) -> std::result::Result<f64, String> {
    if speed.is_finite() && SPEEDS.contains(&speed) {
        Ok(speed)
    } else {
        Err(format!(
            "speed {written}: from {} to {}",
            SPEEDS.start(),
            SPEEDS.end()
        ))
    }
}

/// One conversation's messages, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Script {
    pub steps: Vec<Step>,
}

impl Script {
    /// A script from `(time_ns, a_to_b, size)` messages in any order (sorted here
    /// by time, stably: a trace merged from strace -ff's files). `speed` 2 replays
    /// twice as fast.
    pub fn new(msgs: Vec<(u64, bool, u64)>, speed: f64) -> Result<Script> {
        Script::answering(
            msgs.into_iter()
                .map(|(t, ab, size)| (t, ab, size, Answers::Previous))
                .collect(),
            speed,
        )
    }

    /// A script whose B→A messages say which A→B message each answers (see
    /// [`Answers`]): a trace that shows when B read each request gives the one
    /// each answer followed, so requests sent several at a time (pipelining)
    /// replay as they ran.
    pub fn answering(mut msgs: Vec<(u64, bool, u64, Answers)>, speed: f64) -> Result<Script> {
        if msgs.is_empty() {
            return Err(Error::Invalid("no message to replay".into()));
        }
        check_speed(speed).map_err(Error::Invalid)?;
        if msgs.len() as u64 > MAX_STEPS {
            return Err(Error::Invalid(format!(
                "{} messages: a replay holds at most {MAX_STEPS}",
                msgs.len()
            )));
        }
        msgs.sort_by_key(|m| m.0);
        let t0 = msgs[0].0;
        let mut last_forward = None;
        // The step index of each A→B message, by its place among them.
        let mut forwards: Vec<u32> = Vec::new();
        let mut steps = Vec::with_capacity(msgs.len());
        for (i, &(t, ab, size, answers)) in msgs.iter().enumerate() {
            if size == 0 || size > MAX_MESSAGE {
                return Err(Error::Invalid(format!(
                    "message {} has {size} bytes: a replay carries 1 B to {} MiB",
                    i + 1,
                    MAX_MESSAGE >> 20
                )));
            }
            let anchor = if ab {
                last_forward = Some(i as u32);
                forwards.push(i as u32);
                FORWARD
            } else {
                match answers {
                    Answers::Previous => last_forward.unwrap_or(OWN_TIME),
                    Answers::Nothing => OWN_TIME,
                    // One not yet sent (a clock that disagrees) counts as the last sent.
                    Answers::Request(k) => forwards
                        .get(k as usize)
                        .copied()
                        .unwrap_or(last_forward.unwrap_or(OWN_TIME)),
                }
            };
            let at_ns = ((t - t0) as f64 / speed) as u64;
            if at_ns > MAX_SPAN_NS {
                return Err(Error::Invalid(format!(
                    "message {} comes {} s after the first: a replay lasts at most 30 days",
                    i + 1,
                    at_ns / 1_000_000_000
                )));
            }
            steps.push(Step {
                at_ns,
                size: size as u32,
                anchor,
            });
        }
        Ok(Script { steps })
    }

    pub fn len(&self) -> usize {
        self.steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// From the first message to the last.
    pub fn span_ns(&self) -> u64 {
        self.steps.last().map_or(0, |s| s.at_ns)
    }

    /// `--loop`: one pass's place in the next, its span and one mean gap (1 ms
    /// for a single message).
    pub fn period_ns(&self) -> u64 {
        // No overflow: the span is at most MAX_SPAN_NS.
        let n = self.steps.len() as u64;
        let gap = if n > 1 {
            self.span_ns() / (n - 1)
        } else {
            1_000_000
        };
        self.span_ns() + gap.max(1)
    }

    /// Whether it is strict request/reply: A→B, then its one answer B→A, and so
    /// on (what a mechanism that pairs each answer with its request can carry).
    pub fn alternates(&self) -> bool {
        self.steps.iter().enumerate().all(|(i, s)| {
            if i % 2 == 0 {
                s.forward()
            } else {
                s.anchor as usize == i - 1
            }
        })
    }

    pub fn largest(&self) -> usize {
        self.steps
            .iter()
            .map(|s| s.size as usize)
            .max()
            .unwrap_or(0)
    }

    /// Bytes and messages each way: (A→B messages, A→B bytes, B→A messages, B→A bytes).
    pub fn counts(&self) -> (u64, u64, u64, u64) {
        self.steps.iter().fold((0, 0, 0, 0), |(a, ab, b, bb), s| {
            if s.forward() {
                (a + 1, ab + s.size as u64, b, bb)
            } else {
                (a, ab, b + 1, bb + s.size as u64)
            }
        })
    }

    /// Write the steps at the start of `f`, a piece at a time.
    pub fn write_to(&self, f: &File) -> std::io::Result<()> {
        let mut at = 0u64;
        let mut buf = Vec::with_capacity(4096 * STEP_BYTES);
        for chunk in self.steps.chunks(4096) {
            buf.clear();
            for s in chunk {
                buf.extend_from_slice(&s.to_bytes());
            }
            f.write_all_at(&buf, at)?;
            at += buf.len() as u64;
        }
        Ok(())
    }

    /// Read `n` steps back from the start of `f`; checks what the loops rely on.
    pub fn read_from(f: &File, n: usize) -> Result<Script> {
        let mut steps = Vec::with_capacity(n);
        let mut buf = vec![0u8; 4096 * STEP_BYTES];
        let mut at = 0u64;
        while steps.len() < n {
            let k = (n - steps.len()).min(4096);
            let b = &mut buf[..k * STEP_BYTES];
            f.read_exact_at(b, at)
                .map_err(|e| Error::Peer(format!("cannot read the script: {e}")))?;
            at += b.len() as u64;
            steps.extend(b.chunks_exact(STEP_BYTES).map(Step::from_bytes));
        }
        for (i, s) in steps.iter().enumerate() {
            let anchored = !s.forward() && s.anchor != OWN_TIME;
            if s.size == 0
                || s.size as u64 > MAX_MESSAGE
                || (anchored && (s.anchor as usize >= i || !steps[s.anchor as usize].forward()))
                || (i > 0 && s.at_ns < steps[i - 1].at_ns)
            {
                return Err(Error::Peer(format!("the script's step {i} is malformed")));
            }
        }
        Ok(Script { steps })
    }
}

/// Where the peer's times start in the script's file (after the steps).
pub fn times_offset(steps: usize) -> u64 {
    (steps * STEP_BYTES) as u64
}

/// When a pass runs: its start (monotonic nanoseconds), how many times the script
/// goes round (`--loop`), each time `period_ns` after the last, and whether the
/// sides spin to each send time instead of sleeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    pub start_ns: u64,
    pub reps: u64,
    pub period_ns: u64,
    pub spin: bool,
}

impl Timing {
    #[inline(always)]
    pub fn due(&self, rep: u64, at_ns: u64) -> u64 {
        self.start_ns + rep * self.period_ns + at_ns
    }
}

/// What a side saw of a pass: messages it waited for that never came (lossy
/// mechanisms only; their time is 0).
pub type Lost = u64;

/// Side A: send the A→B messages when due, receive the B→A ones. `times` (one
/// per step and pass, allocated beforehand) gets each send time or arrival.
pub fn lead_loop<E: MessageEnd, P: PayloadOps>(
    e: &mut E,
    steps: &[Step],
    t: &Timing,
    wbuf: &mut [u8],
    rbuf: &mut [u8],
    times: &mut [u64],
) -> Result<Lost> {
    walk::<E, P, true>(e, steps, t, wbuf, rbuf, times)
}

/// Side B: receive the A→B messages, send each B→A one when due (its recorded
/// offset after the arrival of the message it answers). `times` as [`lead_loop`].
pub fn follow_loop<E: MessageEnd, P: PayloadOps>(
    e: &mut E,
    steps: &[Step],
    t: &Timing,
    wbuf: &mut [u8],
    rbuf: &mut [u8],
    times: &mut [u64],
) -> Result<Lost> {
    walk::<E, P, false>(e, steps, t, wbuf, rbuf, times)
}

/// One side's walk of the script (`LEAD`: side A), monomorphized per side: it
/// sends its own way's messages when due and receives the other's.
#[inline(never)]
fn walk<E: MessageEnd, P: PayloadOps, const LEAD: bool>(
    e: &mut E,
    steps: &[Step],
    t: &Timing,
    wbuf: &mut [u8],
    rbuf: &mut [u8],
    times: &mut [u64],
) -> Result<Lost> {
    let n = steps.len();
    let mut c = Cursors::default();
    for rep in 0..t.reps {
        let base = rep as usize * n;
        for (i, s) in steps.iter().enumerate() {
            let len = s.size as usize;
            times[base + i] = if s.forward() == LEAD {
                let due = if LEAD {
                    t.due(rep, s.at_ns)
                } else {
                    due_back(steps, t, times, rep, base, s)
                };
                give::<E, P>(e, &mut wbuf[..len], &mut c, (base + i) as u64, due, t.spin)?
            } else {
                take::<E, P>(e, &mut rbuf[..len], &mut c)?
            };
        }
    }
    Ok(c.lost)
}

/// Where a side is in each way's byte stream (what `--verify` checks against),
/// and the messages it waited for that never came.
#[derive(Default)]
struct Cursors {
    sent: u64,
    got: u64,
    lost: u64,
}

/// Fill message `seq` (the payload before the wait: not timed), wait until it
/// is due, send it; its send time.
#[inline(always)]
fn give<E: MessageEnd, P: PayloadOps>(
    e: &mut E,
    w: &mut [u8],
    c: &mut Cursors,
    seq: u64,
    due: u64,
    spin: bool,
) -> Result<u64> {
    P::fill(w, c.sent, seq);
    c.sent += w.len() as u64;
    wait_until(due, spin);
    let at = now_ns();
    e.send_msg(w)?;
    Ok(at)
}

/// Receive the next message whole; its arrival time (0: lost, lossy mechanisms only).
#[inline(always)]
fn take<E: MessageEnd, P: PayloadOps>(e: &mut E, r: &mut [u8], c: &mut Cursors) -> Result<u64> {
    let at_stream = c.got;
    c.got += r.len() as u64;
    match e.recv_msg(r) {
        Ok(()) => {}
        Err(Error::Lost(_)) => {
            c.lost += 1;
            return Ok(0);
        }
        Err(err) => return Err(err),
    }
    let at = now_ns();
    // The other side sent this after reading every message of ours before it.
    e.answered();
    P::check(r, at_stream)?;
    Ok(at)
}

/// When B→A message `s` is due: its offset after the arrival (in B's `times`) of
/// the message it answers, else (it answers none, or that one was lost) its own time.
#[inline(always)]
fn due_back(steps: &[Step], t: &Timing, b_times: &[u64], rep: u64, base: usize, s: &Step) -> u64 {
    if s.anchor != OWN_TIME {
        let k = s.anchor as usize;
        let arrived = b_times[base + k];
        if arrived != 0 {
            return arrived + (s.at_ns - steps[k].at_ns);
        }
    }
    t.due(rep, s.at_ns)
}

/// A stretch of sends behind the schedule (each over [`BEHIND_NS`] late), in trace time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Behind {
    pub from_ns: u64,
    pub to_ns: u64,
    pub messages: u64,
    pub max_late_ns: u64,
}

/// One bin of the timeline, filled over every pass.
pub struct Bin {
    pub from_ns: u64,
    pub to_ns: u64,
    pub latency: Histogram<u64>,
    pub late: u64,
}

/// What the passes of a case gave, put together.
pub struct Figures {
    /// Every delivered message's latency (from when it was due), tare off.
    pub all: Histogram<u64>,
    pub a_to_b: Histogram<u64>,
    pub b_to_a: Histogram<u64>,
    /// Each send's lateness.
    pub late: Histogram<u64>,
    pub late_sends: u64,
    pub lost: u64,
    pub over_range: u64,
    /// The worst stretch behind the schedule.
    pub behind: Option<Behind>,
    pub bins: Vec<Bin>,
}

fn hist(digits: u8) -> Histogram<u64> {
    Histogram::new_with_bounds(
        crate::latency::LOWEST_NS,
        crate::latency::HIGHEST_NS,
        digits,
    )
    .unwrap_or_else(|_| unreachable!("constant bounds are valid"))
}

/// What one pass gave.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pass {
    pub delivered: u64,
    pub bytes: u64,
    /// From the start to the last arrival.
    pub elapsed_ns: u64,
    /// The recorded time of the pass over the time its sends took: 1.0 kept the
    /// schedule (None: a single message has no span).
    pub kept: Option<f64>,
    /// The median latency of this pass.
    pub p50_ns: u64,
    pub p99_ns: u64,
}

impl Figures {
    /// Empty, with the timeline's bins over `total_ns` of trace time.
    pub fn new(total_ns: u64) -> Figures {
        let w = (total_ns / TIMELINE_BINS as u64).max(1);
        Figures {
            all: crate::latency::new_histogram(),
            a_to_b: crate::latency::new_histogram(),
            b_to_a: crate::latency::new_histogram(),
            late: crate::latency::new_histogram(),
            late_sends: 0,
            lost: 0,
            over_range: 0,
            behind: None,
            bins: (0..TIMELINE_BINS as u64)
                .map(|i| Bin {
                    from_ns: i * w,
                    to_ns: (i + 1) * w,
                    latency: hist(2),
                    late: 0,
                })
                .collect(),
        }
    }

    /// Put a pass's two sides together: `a` and `b` are A's and B's times,
    /// `tare_ns` the clock's cost taken off each latency.
    pub fn add(&mut self, steps: &[Step], t: &Timing, a: &[u64], b: &[u64], tare_ns: u64) -> Pass {
        let n = steps.len();
        let mut pass = hist(2);
        let (mut delivered, mut bytes, mut last_arrival, mut last_send) = (0u64, 0u64, 0u64, 0u64);
        // A stretch behind is each sender's own: A's late requests are not cut
        // short by B's answers, on time between them.
        let mut runs: [Option<Behind>; 2] = [None, None];
        let bin_w = self.bins[0].to_ns - self.bins[0].from_ns;
        for rep in 0..t.reps {
            let base = rep as usize * n;
            for (i, s) in steps.iter().enumerate() {
                let j = base + i;
                let (send, arrival, due) = if s.forward() {
                    (a[j], b[j], t.due(rep, s.at_ns))
                } else {
                    (b[j], a[j], due_back(steps, t, b, rep, base, s))
                };
                let trace_ns = rep * t.period_ns + s.at_ns;
                let late = send.saturating_sub(due);
                let _ = self.late.record(late.clamp(1, crate::latency::HIGHEST_NS));
                last_send = last_send.max(send);
                let run = &mut runs[usize::from(s.forward())];
                if late > BEHIND_NS {
                    self.late_sends += 1;
                    let r = run.get_or_insert(Behind {
                        from_ns: trace_ns,
                        ..Behind::default()
                    });
                    r.to_ns = trace_ns;
                    r.messages += 1;
                    r.max_late_ns = r.max_late_ns.max(late);
                } else if let Some(r) = run.take() {
                    self.keep_worse(r);
                }
                let bin = ((trace_ns / bin_w) as usize).min(self.bins.len() - 1);
                if late > BEHIND_NS {
                    self.bins[bin].late += 1;
                }
                if arrival == 0 {
                    self.lost += 1;
                    continue;
                }
                let lat = arrival.saturating_sub(due).saturating_sub(tare_ns);
                if lat > crate::latency::HIGHEST_NS {
                    self.over_range += 1;
                }
                let lat = lat.clamp(1, crate::latency::HIGHEST_NS);
                let _ = self.all.record(lat);
                let _ = pass.record(lat);
                let _ = if s.forward() {
                    self.a_to_b.record(lat)
                } else {
                    self.b_to_a.record(lat)
                };
                let _ = self.bins[bin].latency.record(lat);
                delivered += 1;
                bytes += s.size as u64;
                last_arrival = last_arrival.max(arrival);
            }
        }
        for r in runs.into_iter().flatten() {
            self.keep_worse(r);
        }
        let recorded = (t.reps - 1) * t.period_ns + steps.last().map_or(0, |s| s.at_ns);
        let took = last_send.saturating_sub(t.start_ns);
        Pass {
            delivered,
            bytes,
            elapsed_ns: last_arrival.saturating_sub(t.start_ns).max(1),
            kept: (recorded > 0).then(|| recorded as f64 / took.max(recorded) as f64),
            p50_ns: pass.value_at_quantile(0.5),
            p99_ns: pass.value_at_quantile(0.99),
        }
    }

    fn keep_worse(&mut self, r: Behind) {
        let worse = self.behind.is_none_or(|b| {
            (r.max_late_ns, r.to_ns - r.from_ns) > (b.max_late_ns, b.to_ns - b.from_ns)
        });
        if worse {
            self.behind = Some(r);
        }
    }

    /// The percentiles of one way (None: no message went that way).
    pub fn way(h: &Histogram<u64>) -> Option<Percentiles> {
        (!h.is_empty()).then(|| percentiles(h))
    }
}

#[cfg(test)]
mod tests;
