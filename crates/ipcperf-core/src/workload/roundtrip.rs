//! Round-trip latency: side A sends S bytes, side B receives all S and sends S back;
//! every round trip is timed on its own. Reading the clock around each round trip is
//! the point of this workload; nothing else happens in the loop (samples go into a
//! buffer allocated beforehand, the histogram is filled after the series).
//!
//! Both loops are generic over a [`MessageEnd`], so they are monomorphized per
//! mechanism. Any [`ByteStream`] is a `MessageEnd` (a message is `len` bytes read
//! in as many reads as it takes); a mechanism with one object per direction (a
//! pipe, a FIFO, a POSIX queue) uses a [`Pair`] of a sending and a receiving end.

use ipcperf_sys::clock::now_ns;

use crate::error::{Error, Result};
use crate::mechanism::ByteStream;
use crate::payload::{NoTouch, Payload, PayloadOps, Touch};

/// One side of a round trip: send a whole message, receive a whole message.
///
/// `recv_msg` fills all of `buf` (one message of `buf.len()` bytes) or fails.
/// A lossy mechanism returns [`Error::Lost`] when its bounded wait runs out; the
/// workload counts that round trip as lost and goes on. Neither call may print or
/// allocate.
pub trait MessageEnd {
    fn send_msg(&mut self, buf: &[u8]) -> Result<()>;
    fn recv_msg(&mut self, buf: &mut [u8]) -> Result<()>;
    /// A message came from the other side, which sends only after it has read
    /// the whole of ours: what this end sent is all read (see
    /// [`ByteStream::all_read`]).
    #[inline]
    fn answered(&mut self) {}
}

impl<T: ByteStream> MessageEnd for T {
    #[inline]
    fn send_msg(&mut self, buf: &[u8]) -> Result<()> {
        self.write_all(buf)
    }

    #[inline]
    fn recv_msg(&mut self, buf: &mut [u8]) -> Result<()> {
        let mut got = 0usize;
        while got < buf.len() {
            let n = self.read_some(&mut buf[got..])?;
            if n == 0 {
                return Err(Error::Peer(format!(
                    "the other side closed after {got} of {} bytes of a message",
                    buf.len()
                )));
            }
            got += n;
        }
        Ok(())
    }

    #[inline]
    fn answered(&mut self) {
        self.all_read();
    }
}

/// Two one-way objects used as one duplex end: send on `tx`, receive on `rx`.
#[derive(Debug)]
pub struct Pair<T, R> {
    pub tx: T,
    pub rx: R,
}

impl<T: MessageEnd, R: MessageEnd> MessageEnd for Pair<T, R> {
    #[inline]
    fn send_msg(&mut self, buf: &[u8]) -> Result<()> {
        self.tx.send_msg(buf)
    }
    #[inline]
    fn recv_msg(&mut self, buf: &mut [u8]) -> Result<()> {
        self.rx.recv_msg(buf)
    }
    #[inline]
    fn answered(&mut self) {
        self.tx.answered();
    }
}

/// What one series of round trips gave, before the tare is taken off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PingOutcome {
    /// Round trips that completed (one sample each).
    pub done: u64,
    /// Round trips whose message or answer never came (lossy mechanisms only).
    pub lost: u64,
    /// When the series began (CLOCK_MONOTONIC) and its wall time.
    pub start_ns: u64,
    pub elapsed_ns: u64,
}

/// When each round trip of a series goes out, and from when its time counts.
/// Monomorphized into [`ping_loop`], so back to back costs what it always did.
pub trait Schedule {
    /// The series begins; returns when its wall time counts from.
    fn start(&mut self) -> u64;
    /// Wait until round trip `i` may go; returns the instant its sample counts from.
    fn origin(&self, i: u64) -> u64;
    /// The least wall time `n` round trips take by the schedule itself (0: back
    /// to back). A series' time is never less, so its rate is never more than
    /// the schedule's.
    fn span(&self, _n: u64) -> u64 {
        0
    }
}

/// Back to back: each round trip goes at once and counts from just before its send.
pub struct BackToBack;

impl Schedule for BackToBack {
    fn start(&mut self) -> u64 {
        now_ns()
    }
    #[inline(always)]
    fn origin(&self, _i: u64) -> u64 {
        now_ns()
    }
}

/// Back to back, keeping when each round trip began (`--explain`: the traced
/// series' round trips are cut out of the kernel's events by these instants).
/// The instants go into cells made before the series, one a round trip.
pub struct Recorded {
    pub origins: Vec<std::cell::Cell<u64>>,
}

impl Recorded {
    /// Room for `n` round trips.
    pub fn new(n: u64) -> Recorded {
        Recorded {
            origins: (0..n).map(|_| std::cell::Cell::new(0)).collect(),
        }
    }
}

impl Schedule for Recorded {
    fn start(&mut self) -> u64 {
        now_ns()
    }
    #[inline(always)]
    fn origin(&self, i: u64) -> u64 {
        let t = now_ns();
        if let Some(c) = self.origins.get(i as usize) {
            c.set(t);
        }
        t
    }
}

/// [`ping_loop`] back to back, each round trip's start kept in `rec`.
pub fn ping_recorded<E: MessageEnd>(
    p: Payload,
    e: &mut E,
    wbuf: &mut [u8],
    rbuf: &mut [u8],
    n: u64,
    samples: &mut Vec<u64>,
    rec: &mut Recorded,
) -> Result<PingOutcome> {
    scheduled(p, e, wbuf, rbuf, n, samples, rec, false)
}

/// How close to a paced send the sender stops sleeping and spins: a sleeping
/// thread wakes late (by 10-25 µs on a VM without a cpuidle driver, a few µs on
/// bare metal), and lateness would count as latency.
pub const PACE_SPIN_NS: u64 = 30_000;

/// A paced (open-loop) load: round trip `i` is due at `start + i × interval`,
/// whatever happened before it. The sender sleeps (then spins the last
/// [`PACE_SPIN_NS`]) until a message is due, or sends at once when it is behind;
/// each sample counts from when its message was *due*, so a stall counts for
/// every round trip it delays, not only the one it hit (no coordinated omission).
/// (The runner sizes a series from a paced warm-up, so a mechanism that cannot
/// keep the rate gets as many round trips as it can do in the series' time.)
pub struct Paced {
    pub interval_ns: u64,
    /// `--busy-poll`: spin all the way to each send time, never sleep.
    spin: bool,
    start: u64,
}

impl Paced {
    pub fn new(pace: Pace) -> Paced {
        Paced {
            interval_ns: pace.interval_ns.max(1),
            spin: pace.spin,
            start: 0,
        }
    }
}

/// A paced load as a case asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    pub interval_ns: u64,
    pub spin: bool,
}

impl Pace {
    /// One round trip every `interval_ns`, sleeping between them.
    pub fn every(interval_ns: u64) -> Pace {
        Pace {
            interval_ns,
            spin: false,
        }
    }

    /// The case's pace: its `--rate`, spinning between sends under `--busy-poll`
    /// (None: back to back). Tightens this thread's timer slack when it sleeps.
    pub fn of(opts: &crate::mechanism::MechOptions) -> Option<Pace> {
        let rate = opts.rate_per_sec.filter(|&r| r > 0)?;
        if !opts.busy_poll {
            ipcperf_sys::clock::tight_timer_slack();
        }
        Some(Pace {
            interval_ns: (1_000_000_000 / rate).max(1),
            spin: opts.busy_poll,
        })
    }
}

impl Schedule for Paced {
    fn start(&mut self) -> u64 {
        self.start = now_ns() + self.interval_ns;
        self.start
    }
    #[inline]
    fn origin(&self, i: u64) -> u64 {
        let due = self.start + i * self.interval_ns;
        wait_until(due, self.spin);
        due
    }
    /// `n` intervals, one for each round trip: the last one's answer comes
    /// (n − 1) intervals after the first was due, plus its own round trip, and
    /// a series timed to then said 3.4k round trips/s of one at 1/s offered,
    /// 103/s of 31 at 100/s.
    fn span(&self, n: u64) -> u64 {
        n.saturating_mul(self.interval_ns)
    }
}

/// Wait until `due` (monotonic nanoseconds): sleep until [`PACE_SPIN_NS`] before
/// it, then spin (`spin`: spin all the way); at once when it has passed.
#[inline]
pub fn wait_until(due: u64, spin: bool) {
    let mut now = now_ns();
    while now < due {
        if !spin && due - now > PACE_SPIN_NS {
            ipcperf_sys::clock::sleep_until_ns(due - PACE_SPIN_NS);
        } else {
            std::hint::spin_loop();
        }
        now = now_ns();
    }
}

/// Round trips lost one after another that end a series as the other side's
/// death: with udp's 200 ms wait for an answer, 2 s of silence.
pub const LOST_IN_A_ROW: u32 = 10;

/// Side A: `n` round trips, each timed from its origin (see [`Schedule`]) to
/// after the whole answer arrived. Raw samples (nanoseconds, clock cost included)
/// are appended to `samples`, which must have room for `n` (it is never grown in
/// the loop).
///
/// `STAMP` (`--one-way`): just before each send, the send time goes into the
/// message's first 8 bytes (the pattern there is put back in the answer before
/// it is checked, so `--verify` still checks every byte).
#[inline(never)]
pub fn ping_loop<E: MessageEnd, P: PayloadOps, S: Schedule, const STAMP: bool>(
    e: &mut E,
    wbuf: &mut [u8],
    rbuf: &mut [u8],
    n: u64,
    samples: &mut Vec<u64>,
    schedule: &mut S,
) -> Result<PingOutcome> {
    debug_assert!(samples.capacity() - samples.len() >= n as usize);
    let len = wbuf.len() as u64;
    let mut lost = 0u64;
    // Losses in a row (kept on the loss path only): past LOST_IN_A_ROW nothing
    // has come back for that many bounded waits, and the other side is gone.
    let (mut last_lost, mut in_a_row) = (u64::MAX, 0u32);
    let start = schedule.start();
    for i in 0..n {
        P::fill(wbuf, i * len, i);
        let t0 = schedule.origin(i);
        let covered = if STAMP { stamp(wbuf) } else { [0; 8] };
        e.send_msg(wbuf)?;
        match e.recv_msg(rbuf) {
            Ok(()) => {}
            Err(Error::Lost(why)) => {
                lost += 1;
                in_a_row = if last_lost.wrapping_add(1) == i {
                    in_a_row + 1
                } else {
                    1
                };
                last_lost = i;
                if in_a_row >= LOST_IN_A_ROW {
                    return Err(Error::Peer(format!(
                        "{LOST_IN_A_ROW} round trips in a row lost, nothing came back \
                         (the last: {why}): the other side is gone, or the path to it"
                    )));
                }
                continue;
            }
            Err(err) => return Err(err),
        }
        let t1 = now_ns();
        e.answered();
        if samples.len() < samples.capacity() {
            samples.push(t1 - t0);
        }
        if STAMP {
            if let Some(head) = rbuf.get_mut(..8) {
                head.copy_from_slice(&covered);
            }
        }
        P::check(rbuf, i * len)?;
    }
    let elapsed_ns = (now_ns() - start).max(schedule.span(n));
    Ok(PingOutcome {
        start_ns: start,
        done: n - lost,
        lost,
        elapsed_ns,
    })
}

/// Side B: receive a message and send the same bytes back, up to `n` times.
/// Returns how many it echoed: fewer than `n` only on a lossy mechanism, whose
/// receive ran out of its bounded wait because a message never came.
///
/// `STAMP` (`--one-way`): on each arrival, the delay since the send time in the
/// message's first 8 bytes goes into `delays` (which must have room: it is never
/// grown here).
#[inline(never)]
pub fn echo_loop<E: MessageEnd, P: PayloadOps, const STAMP: bool>(
    e: &mut E,
    buf: &mut [u8],
    n: u64,
    delays: &mut Vec<u64>,
) -> Result<u64> {
    let len = buf.len() as u64;
    for i in 0..n {
        match e.recv_msg(buf) {
            Ok(()) => {}
            Err(Error::Lost(_)) => return Ok(i),
            Err(err) => return Err(err),
        }
        // The other side sends its next message only once it has read our
        // answer to the last.
        e.answered();
        if STAMP {
            let t = now_ns();
            if let (Some(head), true) = (buf.get(..8), delays.len() < delays.capacity()) {
                let mut b = [0u8; 8];
                b.copy_from_slice(head);
                delays.push(t.saturating_sub(u64::from_ne_bytes(b)));
            }
        }
        P::check(buf, i * len)?;
        e.send_msg(buf)?;
    }
    Ok(n)
}

/// Write the send time into the first 8 bytes of `buf`; returns what was there.
#[inline(always)]
fn stamp(buf: &mut [u8]) -> [u8; 8] {
    let mut covered = [0u8; 8];
    if let Some(head) = buf.get_mut(..8) {
        covered.copy_from_slice(head);
        head.copy_from_slice(&now_ns().to_ne_bytes());
    }
    covered
}

/// [`ping_loop`], back to back, with the payload treatment chosen at run time.
pub fn ping<E: MessageEnd>(
    p: Payload,
    e: &mut E,
    wbuf: &mut [u8],
    rbuf: &mut [u8],
    n: u64,
    samples: &mut Vec<u64>,
) -> Result<PingOutcome> {
    scheduled(p, e, wbuf, rbuf, n, samples, &mut BackToBack, false)
}

/// [`ping_loop`] with everything chosen at run time: paced when `interval_ns` is
/// given, stamped (one-way) when `stamp`.
#[allow(clippy::too_many_arguments)]
pub fn ping_with<E: MessageEnd>(
    p: Payload,
    e: &mut E,
    wbuf: &mut [u8],
    rbuf: &mut [u8],
    n: u64,
    samples: &mut Vec<u64>,
    pace: Option<Pace>,
    stamp: bool,
) -> Result<PingOutcome> {
    match pace {
        Some(i) => scheduled(p, e, wbuf, rbuf, n, samples, &mut Paced::new(i), stamp),
        None => scheduled(p, e, wbuf, rbuf, n, samples, &mut BackToBack, stamp),
    }
}

#[allow(clippy::too_many_arguments)]
fn scheduled<E: MessageEnd, S: Schedule>(
    p: Payload,
    e: &mut E,
    wbuf: &mut [u8],
    rbuf: &mut [u8],
    n: u64,
    samples: &mut Vec<u64>,
    s: &mut S,
    stamp: bool,
) -> Result<PingOutcome> {
    if stamp {
        crate::with_payload!(p, P => ping_loop::<E, P, S, true>(e, wbuf, rbuf, n, samples, s))
    } else {
        crate::with_payload!(p, P => ping_loop::<E, P, S, false>(e, wbuf, rbuf, n, samples, s))
    }
}

/// [`echo_loop`] with the payload treatment chosen at run time. Under `verify`, B
/// reads every byte (as `touch`) and sends back exactly what it got: A checks every
/// byte of the answer against what it sent, which covers both legs; B checking by
/// its own count would mistake a lost datagram for corruption.
/// `delays`: stamped (one-way) round trips, measured into it.
pub fn echo<E: MessageEnd>(
    p: Payload,
    e: &mut E,
    buf: &mut [u8],
    n: u64,
    delays: Option<&mut Vec<u64>>,
) -> Result<u64> {
    let mut none = Vec::new();
    match (p, delays) {
        (Payload::Touch | Payload::Verify, Some(d)) => echo_loop::<E, Touch, true>(e, buf, n, d),
        (Payload::NoTouch, Some(d)) => echo_loop::<E, NoTouch, true>(e, buf, n, d),
        (Payload::Touch | Payload::Verify, None) => {
            echo_loop::<E, Touch, false>(e, buf, n, &mut none)
        }
        (Payload::NoTouch, None) => echo_loop::<E, NoTouch, false>(e, buf, n, &mut none),
    }
}

#[cfg(test)]
mod tests;
