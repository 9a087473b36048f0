//! Fan-in (`--clients N`), and which mechanisms have a fan-out form
//! (`--subscribers N`, whose writer loop is [`super::stream`]'s).
//!
//! Fan-in: N clients send requests to one server, which answers
//! each on the client's own way back, through the mechanism's natural
//! many-to-one form ([`FanInForm`]): poll(2) over every client's descriptor (a
//! server over connected sockets or per-client pipes), one shared SysV request
//! queue with answers typed per client, or a sweep over per-client shm rings.
//!
//! The clients are timed (their round trips); the server's loop is not, but it is
//! on every round trip's path, so it holds nothing but the calls: the poll set
//! and the ready list are built before the series, nothing is allocated in it.

use ipcperf_sys::counters::ThreadCounters;
use ipcperf_sys::cpu::current_cpu;
use ipcperf_sys::epoll::EpollSet;
use ipcperf_sys::fd::PollSet;

use super::roundtrip::{MessageEnd, Pair};
use crate::error::{Error, Result};
use crate::mechanism::wait::Wait;
use crate::mechanism::{Mechanism, MechanismKind, PeerHandoff, OPEN_TIMEOUT_MS};
use crate::mode::protocol::{FromPeer, PeerChannel, PeerSetup, ToPeer};
use crate::payload::{AlignedBuf, NoTouch, Payload, PayloadOps, Touch};

/// How a fan-in server waits for the next request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FanInForm {
    /// poll(2) over every client's descriptor (connected sockets; a pipe, FIFO or
    /// POSIX queue each way per client).
    Poll,
    /// One shared object all clients send to, its receive waiting for any of them
    /// (one SysV request queue; each client's answers by message type).
    Shared,
    /// A spinning sweep over every client's ring (shared memory has no descriptor
    /// to poll: the server checks each ring's index in turn).
    Sweep,
}

impl FanInForm {
    /// How the server waits, for the record.
    pub fn describe(self) -> &'static str {
        match self {
            FanInForm::Poll => "the server polls every client's descriptor",
            FanInForm::Shared => "one request queue, answers by message type",
            FanInForm::Sweep => {
                "the server spins over every client's ring (the clients wait by their --wake)"
            }
        }
    }

    /// [`FanInForm::describe`] for a server that waits by `w` (`--wait …/W`).
    pub fn describe_as(self, w: Wait) -> String {
        match (self, w) {
            (FanInForm::Poll, Wait::Epoll) => {
                "the server waits in epoll_wait(2) on every client's descriptor".into()
            }
            (FanInForm::Poll, Wait::Busy) => "the server polls every client's descriptor with a \
                                              zero time-out, again at once (it never sleeps)"
                .into(),
            _ => self.describe().into(),
        }
    }
}

/// The mechanisms whose fan-in form is built, and that form.
pub const FAN_IN: &[(MechanismKind, FanInForm)] = &[
    (MechanismKind::Pipe, FanInForm::Poll),
    (MechanismKind::Fifo, FanInForm::Poll),
    (MechanismKind::Unix, FanInForm::Poll),
    (MechanismKind::Tcp, FanInForm::Poll),
    (MechanismKind::UnixSeqpacket, FanInForm::Poll),
    (MechanismKind::UnixDgram, FanInForm::Poll),
    (MechanismKind::Udp, FanInForm::Poll),
    (MechanismKind::PosixMq, FanInForm::Poll),
    (MechanismKind::SysvMsg, FanInForm::Shared),
    (MechanismKind::Shm, FanInForm::Sweep),
];

/// `kind`'s fan-in form (None: it has none).
pub fn fan_in_form(kind: MechanismKind) -> Option<FanInForm> {
    FAN_IN.iter().find(|(k, _)| *k == kind).map(|&(_, f)| f)
}

/// The mechanisms whose fan-out form is built: a descriptor per reader, written
/// in turn; shm: one ring read by every reader, each with a cursor of its own.
pub const FAN_OUT: &[MechanismKind] = &[
    MechanismKind::Pipe,
    MechanismKind::Fifo,
    MechanismKind::Unix,
    MechanismKind::Tcp,
    MechanismKind::UnixSeqpacket,
    MechanismKind::UnixDgram,
    MechanismKind::Shm,
];

/// Why `kind` has no fan-in form here (None: it has one).
pub fn refuse(kind: MechanismKind) -> Option<String> {
    fan_in_form(kind).is_none().then(|| {
        format!(
            "fan-in needs a server that can wait for any of many clients: built for {}; \
             {} has no such form",
            FAN_IN
                .iter()
                .map(|(k, _)| k.name())
                .collect::<Vec<_>>()
                .join(", "),
            kind.name()
        )
    })
}

/// Why `kind` has no fan-out form here (None: it has one): one writer sending
/// every block to each reader over a descriptor of its own.
pub fn refuse_fan_out(kind: MechanismKind) -> Option<String> {
    match kind {
        k if FAN_OUT.contains(&k) => None,
        MechanismKind::PosixMq | MechanismKind::SysvMsg => Some(format!(
            "{} is one-to-one: each message is received by one reader, so it cannot \
             deliver every block to every reader",
            kind.name()
        )),
        k => Some(format!(
            "fan-out is built for {}; {} has no way to deliver every block to many readers",
            FAN_OUT
                .iter()
                .map(|k| k.name())
                .collect::<Vec<_>>()
                .join(", "),
            k.name()
        )),
    }
}

/// How long the server waits for any request before it calls the clients gone.
pub const IDLE_MS: i32 = 5_000;

/// How the server finds the clients with a request waiting.
pub trait Waiter<E> {
    /// Fill `ready` with the indices of the ends with a request (false: none
    /// within [`IDLE_MS`]).
    fn wait(&mut self, ends: &mut [E], ready: &mut Vec<usize>) -> Result<bool>;
    /// One end serves every client (a shared queue): a request on it says
    /// nothing of what another client has read.
    const SHARED: bool = false;
}

impl<E> Waiter<E> for PollSet {
    #[inline]
    fn wait(&mut self, _ends: &mut [E], ready: &mut Vec<usize>) -> Result<bool> {
        Ok(PollSet::wait(self, IDLE_MS, ready)?)
    }
}

/// `--wait …/epoll`: the clients' descriptors in one epoll instance.
impl<E> Waiter<E> for EpollSet {
    #[inline]
    fn wait(&mut self, _ends: &mut [E], ready: &mut Vec<usize>) -> Result<bool> {
        Ok(EpollSet::wait(self, IDLE_MS, ready)?)
    }
}

/// `--wait …/busy`: poll(2) with a zero time-out, again at once until a client
/// has a request (the server never sleeps), within the [`IdleBound`].
pub struct BusyPoll(pub PollSet);

impl<E> Waiter<E> for BusyPoll {
    #[inline]
    fn wait(&mut self, _ends: &mut [E], ready: &mut Vec<usize>) -> Result<bool> {
        let mut idle = IdleBound::default();
        loop {
            if self.0.wait(0, ready)? {
                return Ok(true);
            }
            if idle.passed() {
                return Ok(false);
            }
        }
    }
}

/// The idle bound of a server that spins ([`BusyPoll`], [`Sweep`]): after
/// [`IDLE_MS`] of empty turns the clients are gone. The clock is read once
/// every 1024 turns, so the empty turns stay a poll or a sweep each.
#[derive(Default)]
struct IdleBound {
    turns: u32,
    since: u64,
}

impl IdleBound {
    /// Count one empty turn; true once [`IDLE_MS`] have passed since the first
    /// clock read.
    #[inline]
    fn passed(&mut self) -> bool {
        self.turns = self.turns.wrapping_add(1);
        if !self.turns.is_multiple_of(1024) {
            return false;
        }
        let now = ipcperf_sys::clock::now_ns();
        if self.since == 0 {
            self.since = now;
            false
        } else {
            now.saturating_sub(self.since) > IDLE_MS as u64 * 1_000_000
        }
    }
}

/// The waits a fan-in server of descriptors takes (`--wait CLIENT/SERVER` with
/// `--clients`): one call that waits for any client. The default (`block`, no
/// `--wait`) is poll(2).
pub const SERVER_WAITS: &[Wait] = &[Wait::Poll, Wait::Epoll, Wait::Busy];

/// Why a fan-in server cannot wait by `w` (None: it can; `block` stands for
/// the default, poll(2)).
pub fn refuse_server_wait(kind: MechanismKind, w: Wait) -> Option<String> {
    match fan_in_form(kind) {
        Some(FanInForm::Poll) if w == Wait::Block || SERVER_WAITS.contains(&w) => None,
        Some(FanInForm::Poll) => Some(format!(
            "a fan-in server waits for any of its clients in one call: its wait is one of {} \
             (CLIENT/SERVER, e.g. --wait block/epoll), not {}",
            Wait::list(SERVER_WAITS),
            w.name()
        )),
        Some(_) if w == Wait::Block => None,
        Some(f) => Some(format!(
            "{}'s fan-in server has no descriptor wait ({}): --wait does not apply",
            kind.name(),
            f.describe()
        )),
        None => None,
    }
}

/// One shared end whose receive waits for any client ([`FanInForm::Shared`]).
pub struct SharedEnd;

impl<E> Waiter<E> for SharedEnd {
    const SHARED: bool = true;
    #[inline]
    fn wait(&mut self, _ends: &mut [E], ready: &mut Vec<usize>) -> Result<bool> {
        ready.clear();
        ready.push(0);
        Ok(true)
    }
}

/// A spinning sweep over every end ([`FanInForm::Sweep`]): `has` says, without
/// waiting, whether an end has a request, within the [`IdleBound`].
pub struct Sweep<F>(pub F);

impl<E, F: FnMut(&mut E) -> Result<bool>> Waiter<E> for Sweep<F> {
    #[inline]
    fn wait(&mut self, ends: &mut [E], ready: &mut Vec<usize>) -> Result<bool> {
        ready.clear();
        let mut idle = IdleBound::default();
        loop {
            for (i, e) in ends.iter_mut().enumerate() {
                if (self.0)(e)? {
                    ready.push(i);
                }
            }
            if !ready.is_empty() {
                return Ok(true);
            }
            std::hint::spin_loop();
            if idle.passed() {
                return Ok(false);
            }
        }
    }
}

/// Answer `n` requests in all, from whichever clients are ready. `ready` must
/// have room for every client.
/// `STAMP` (`--one-way`): each request's delay since the send time in its first 8
/// bytes goes into `delays` (room made beforehand; never grown here).
#[inline(never)]
pub fn serve_loop<E: MessageEnd, W: Waiter<E>, P: PayloadOps, const STAMP: bool>(
    ends: &mut [E],
    waiter: &mut W,
    ready: &mut Vec<usize>,
    buf: &mut [u8],
    n: u64,
    delays: &mut Vec<u64>,
) -> Result<u64> {
    let mut left = n;
    while left > 0 {
        if !waiter.wait(ends, ready)? {
            return Err(Error::Timeout(format!(
                "no request from any of {} clients within {} s ({left} of {n} unanswered)",
                ends.len(),
                IDLE_MS / 1000
            )));
        }
        for &i in ready.iter() {
            let e = &mut ends[i];
            e.recv_msg(buf)?;
            // A client asks again only once it has read our last answer whole.
            if !W::SHARED {
                e.answered();
            }
            if STAMP {
                let t = ipcperf_sys::clock::now_ns();
                if let (Some(head), true) = (buf.get(..8), delays.len() < delays.capacity()) {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(head);
                    delays.push(t.saturating_sub(u64::from_ne_bytes(b)));
                }
            }
            P::check(buf, 0)?;
            e.send_msg(buf)?;
            left = left.saturating_sub(1);
        }
    }
    Ok(n)
}

/// The fan-in server's job (role `EchoMany`) for mechanism `M`.
pub fn serve<M: Mechanism>(ch: &mut dyn PeerChannel, mut setup: PeerSetup) -> Result<()> {
    let Some(form) = fan_in_form(M::INFO.kind) else {
        return Err(Error::Refused(refuse(M::INFO.kind).unwrap_or_default()));
    };
    let more = std::mem::take(&mut setup.more);
    let wait = setup.handoff.opts.wait.server;
    // Every client's ends: one two-way end each (sockets), or a pair (pipes); the
    // shared form's one end serves them all.
    let mut one: Vec<M::End> = Vec::new();
    let mut two: Vec<Pair<M::End, M::End>> = Vec::new();
    let mut add = |fwd: PeerHandoff, back: Option<PeerHandoff>| -> Result<()> {
        let rx = M::open(fwd, OPEN_TIMEOUT_MS)?;
        match back {
            Some(h) => two.push(Pair {
                tx: M::open(h, OPEN_TIMEOUT_MS)?,
                rx,
            }),
            None => one.push(rx),
        }
        Ok(())
    };
    add(setup.handoff, setup.back.take().map(|b| *b))?;
    for m in more {
        add(m.fwd, m.back)?;
    }
    let clients = one.len() + two.len();
    let mut ready = Vec::with_capacity(clients);
    if let Some(why) = refuse_server_wait(M::INFO.kind, wait) {
        return Err(Error::Refused(why));
    }
    let mut s = Server {
        ch,
        block_size: setup.block_size,
        payload: setup.payload,
        one_way: setup.one_way,
    };
    match form {
        FanInForm::Poll => {
            let mut fds = Vec::with_capacity(clients);
            for rx in one.iter_mut().chain(two.iter_mut().map(|p| &mut p.rx)) {
                match M::poll_fd(rx) {
                    Some(fd) => fds.push(fd),
                    None => {
                        return Err(Error::Refused(format!(
                            "{}: no descriptor to poll",
                            M::INFO.name
                        )))
                    }
                }
            }
            // The set holds the clients' numbers; their ends stay open below.
            match wait {
                Wait::Epoll => {
                    let mut set = EpollSet::new(&fds)?;
                    drop(fds);
                    if one.is_empty() {
                        s.rounds(&mut two, &mut set, &mut ready)
                    } else {
                        s.rounds(&mut one, &mut set, &mut ready)
                    }
                }
                Wait::Busy => {
                    let mut set = BusyPoll(PollSet::new(&fds));
                    drop(fds);
                    if one.is_empty() {
                        s.rounds(&mut two, &mut set, &mut ready)
                    } else {
                        s.rounds(&mut one, &mut set, &mut ready)
                    }
                }
                _ => {
                    let mut set = PollSet::new(&fds);
                    drop(fds);
                    if one.is_empty() {
                        s.rounds(&mut two, &mut set, &mut ready)
                    } else {
                        s.rounds(&mut one, &mut set, &mut ready)
                    }
                }
            }
        }
        FanInForm::Shared => s.rounds(&mut one, &mut SharedEnd, &mut ready),
        FanInForm::Sweep => {
            let has = |p: &mut Pair<M::End, M::End>| -> Result<bool> {
                M::has_message(&mut p.rx).unwrap_or_else(|| {
                    Err(Error::Refused(format!(
                        "{}: cannot tell whether a request waits",
                        M::INFO.name
                    )))
                })
            };
            s.rounds(&mut two, &mut Sweep(has), &mut ready)
        }
    }
}

/// The server between series: told how many requests to answer, it answers
/// them and reports its CPU time (and, one-way, the delays).
struct Server<'c> {
    ch: &'c mut dyn PeerChannel,
    block_size: usize,
    payload: Payload,
    one_way: bool,
}

impl Server<'_> {
    fn rounds<E: MessageEnd, W: Waiter<E>>(
        &mut self,
        ends: &mut [E],
        waiter: &mut W,
        ready: &mut Vec<usize>,
    ) -> Result<()> {
        // One-way: this side's clock cost is the tare of each delay it measures.
        let tare = if self.one_way {
            ipcperf_sys::clock::clock_cost_ns(20_001)
        } else {
            0
        };
        let mut delays: Vec<u64> = Vec::new();
        let mut buf = AlignedBuf::new(self.block_size)?;
        self.ch.send(FromPeer::Ready { cpu: current_cpu() })?;
        loop {
            match self.ch.recv()? {
                ToPeer::Rounds { n } => {
                    let stamp = self.one_way;
                    if stamp {
                        // Room for every delay before the series (at most 64M, as the
                        // round-trip samples).
                        delays.clear();
                        delays.reserve_exact((n as usize).min(1 << 26));
                    }
                    let c0 = ThreadCounters::now();
                    let (b, d) = (&mut buf[..], &mut delays);
                    // The loop monomorphized for the payload and whether requests
                    // carry a send time. The clients check what comes back; the
                    // server reads every byte.
                    let echoed = match (self.payload, stamp) {
                        (Payload::NoTouch, false) => {
                            serve_loop::<_, _, NoTouch, false>(ends, waiter, ready, b, n, d)?
                        }
                        (Payload::NoTouch, true) => {
                            serve_loop::<_, _, NoTouch, true>(ends, waiter, ready, b, n, d)?
                        }
                        (_, false) => {
                            serve_loop::<_, _, Touch, false>(ends, waiter, ready, b, n, d)?
                        }
                        (_, true) => serve_loop::<_, _, Touch, true>(ends, waiter, ready, b, n, d)?,
                    };
                    let counted = ThreadCounters::now().since(&c0);
                    let cpu_ns = counted.cpu_ns;
                    let one_way = stamp.then(|| {
                        let mut h = crate::latency::new_one_way_histogram();
                        crate::latency::record_samples(&mut h, &delays, tare);
                        (crate::latency::HistogramRecord::from_histogram(&h), tare)
                    });
                    self.ch.send(FromPeer::Echoed {
                        echoed,
                        cpu: current_cpu(),
                        cpu_ns,
                        datagrams: None,
                        one_way,
                        counts: Some(counted.into()),
                    })?;
                }
                ToPeer::Quit => return Ok(()),
                ToPeer::Hello(_) => return Err(Error::Peer("a second hello".into())),
                ToPeer::Go { .. } | ToPeer::Replay { .. } => {
                    return Err(Error::Peer(
                        "a stream or a replay asked of a fan-in server".into(),
                    ))
                }
            }
        }
    }
}
