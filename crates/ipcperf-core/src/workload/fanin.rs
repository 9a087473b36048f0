//! Fan-in (`--clients N`), and which mechanisms have a fan-out form
//! (`--subscribers N`, whose writer loop is [`super::stream`]'s).
//!
//! Fan-in: N clients send requests to one server, which answers
//! each on the client's own way back. The server waits on every client's end at
//! once (poll(2) over their descriptors, as a server over connected sockets or
//! per-client pipes does) and answers whichever is ready.
//!
//! The clients are timed (their round trips); the server's loop is not, but it is
//! on every round trip's path, so it holds nothing but the calls: the poll set
//! and the ready list are built before the series, nothing is allocated in it.

use ipcperf_sys::clock::thread_cpu_ns;
use ipcperf_sys::cpu::current_cpu;
use ipcperf_sys::fd::PollSet;

use super::roundtrip::{MessageEnd, Pair};
use crate::error::{Error, Result};
use crate::mechanism::{Mechanism, MechanismKind, PeerHandoff, OPEN_TIMEOUT_MS};
use crate::mode::protocol::{FromPeer, PeerChannel, PeerSetup, ToPeer};
use crate::payload::{AlignedBuf, NoTouch, Payload, PayloadOps, Touch};

/// The mechanisms whose fan-in form is built: a server polling every client's
/// descriptor (connected sockets; a pipe, FIFO or POSIX queue each way per
/// client).
pub const FAN_IN: &[MechanismKind] = &[
    MechanismKind::Pipe,
    MechanismKind::Fifo,
    MechanismKind::Unix,
    MechanismKind::Tcp,
    MechanismKind::UnixSeqpacket,
    MechanismKind::UnixDgram,
    MechanismKind::Udp,
    MechanismKind::PosixMq,
];

/// The mechanisms whose fan-out form is built: a descriptor per reader, written
/// in turn.
pub const FAN_OUT: &[MechanismKind] = &[
    MechanismKind::Pipe,
    MechanismKind::Fifo,
    MechanismKind::Unix,
    MechanismKind::Tcp,
    MechanismKind::UnixSeqpacket,
    MechanismKind::UnixDgram,
];

/// Why `kind` has no fan-in form here (None: it has one).
pub fn refuse(kind: MechanismKind) -> Option<String> {
    (!FAN_IN.contains(&kind)).then(|| {
        format!(
            "fan-in is built for the mechanisms a server polls by descriptor ({}); {}'s \
             many-to-one form (one SysV queue with a message type per client, one ring per \
             client polled by the server) is not built yet",
            FAN_IN
                .iter()
                .map(|k| k.name())
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
            "fan-out is built for the mechanisms with a descriptor per reader ({}); {}'s \
             form (one ring read by N readers with cursors of their own) is not built yet",
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

/// Answer `n` requests in all, from whichever clients are ready. `ready` must
/// have room for every client.
/// `STAMP` (`--one-way`): each request's delay since the send time in its first 8
/// bytes goes into `delays` (room made beforehand; never grown here).
#[inline(never)]
pub fn serve_loop<E: MessageEnd, P: PayloadOps, const STAMP: bool>(
    ends: &mut [E],
    set: &mut PollSet,
    ready: &mut Vec<usize>,
    buf: &mut [u8],
    n: u64,
    delays: &mut Vec<u64>,
) -> Result<u64> {
    let mut left = n;
    while left > 0 {
        if !set.wait(IDLE_MS, ready)? {
            return Err(Error::Timeout(format!(
                "no request from any of {} clients within {} s ({left} of {n} unanswered)",
                ends.len(),
                IDLE_MS / 1000
            )));
        }
        for &i in ready.iter() {
            let e = &mut ends[i];
            e.recv_msg(buf)?;
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
    if let Some(why) = refuse(M::INFO.kind) {
        return Err(Error::Refused(why));
    }
    let more = std::mem::take(&mut setup.more);
    // Every client's ends: one two-way end each (sockets), or a pair (pipes).
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
    add(setup.handoff, setup.back.map(|b| *b))?;
    for m in more {
        add(m.fwd, m.back)?;
    }
    let clients = one.len() + two.len();
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
    let mut set = PollSet::new(&fds);
    drop(fds);
    let mut ready = Vec::with_capacity(clients);
    // One-way: this side's clock cost is the tare of each delay it measures.
    let tare = if setup.one_way {
        ipcperf_sys::clock::clock_cost_ns(20_001)
    } else {
        0
    };
    let mut delays: Vec<u64> = Vec::new();
    let mut buf = AlignedBuf::new(setup.block_size);
    ch.send(FromPeer::Ready { cpu: current_cpu() })?;
    loop {
        match ch.recv()? {
            ToPeer::Rounds { n } => {
                let stamp = setup.one_way;
                if stamp {
                    // Room for every delay before the series (at most 64M, as the
                    // round-trip samples).
                    delays.clear();
                    delays.reserve_exact((n as usize).min(1 << 26));
                }
                let cpu0 = thread_cpu_ns();
                let (b, r, st, d) = (&mut buf[..], &mut ready, &mut set, &mut delays);
                // The loop monomorphized for the payload, the ends' shape (one two-way
                // end, or a pair) and whether requests carry a send time.
                macro_rules! go {
                    ($p:ty, $s:literal) => {
                        if one.is_empty() {
                            serve_loop::<_, $p, $s>(&mut two, st, r, b, n, d)?
                        } else {
                            serve_loop::<_, $p, $s>(&mut one, st, r, b, n, d)?
                        }
                    };
                }
                // The clients check what comes back; the server reads every byte.
                let echoed = match (setup.payload, stamp) {
                    (Payload::NoTouch, false) => go!(NoTouch, false),
                    (Payload::NoTouch, true) => go!(NoTouch, true),
                    (_, false) => go!(Touch, false),
                    (_, true) => go!(Touch, true),
                };
                let cpu_ns = thread_cpu_ns() - cpu0;
                let one_way = stamp.then(|| {
                    let mut h = crate::latency::new_one_way_histogram();
                    crate::latency::record_samples(&mut h, &delays, tare);
                    (crate::latency::HistogramRecord::from_histogram(&h), tare)
                });
                ch.send(FromPeer::Echoed {
                    echoed,
                    cpu: current_cpu(),
                    cpu_ns,
                    datagrams: None,
                    one_way,
                })?;
            }
            ToPeer::Quit => return Ok(()),
            ToPeer::Hello(_) => return Err(Error::Peer("a second hello".into())),
            ToPeer::Go { .. } => {
                return Err(Error::Peer("a stream asked of a fan-in server".into()))
            }
        }
    }
}
