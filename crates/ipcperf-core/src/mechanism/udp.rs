//! UDP over loopback: two sockets bound to 127.0.0.1 (or ::1) and connected to
//! each other; the peer's is handed over as a descriptor. Every datagram carries
//! an 8-byte sequence number before the block (sendmsg/recvmsg with two iovecs, so
//! the payload is never moved), and each end counts what it sent, received,
//! received twice and received out of order; what was lost is what was sent and
//! never received. Receives wait at most a bounded time (SO_RCVTIMEO, no extra
//! system call): a lost datagram is counted, never a hang.

use std::io::{IoSlice, IoSliceMut};
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, OwnedFd};

use nix::sys::socket::{
    bind, connect, getsockname, setsockopt, socket, sockopt, AddressFamily, SockFlag, SockType,
    SockaddrStorage,
};
use nix::sys::time::TimeVal;

use super::{
    Link, LocalEnd, LossyRead, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr,
    PeerHandoff, RoundTripShape,
};
use crate::error::{Error, Result};
use crate::kind::DatagramCounts;
use crate::mechanism::ByteStream;
use ipcperf_sys::error::{Context, Errno};

mod wait;

/// IPv4's largest UDP payload: 65,535 − 20 (IP header) − 8 (UDP header).
pub const MAX_DATAGRAM_V4: usize = 65_507;
/// IPv6's: 65,535 − 8 (the IPv6 header is not counted in its payload length).
pub const MAX_DATAGRAM_V6: usize = 65_527;
/// ipcperf's sequence number in front of every block.
pub const SEQ_BYTES: usize = 8;
/// How long the side that asks (owner) waits for an answer before the round trip is lost.
pub const ASK_WAIT_MS: u64 = 200;
/// How long the side that answers (peer) waits for a message before it gives up
/// on the series (longer than [`ASK_WAIT_MS`], so it outlives the asker's losses).
pub const ANSWER_WAIT_MS: u64 = 1_000;

fn new_socket(addr: &SocketAddr, opts: &MechOptions) -> Result<OwnedFd> {
    let fam = if addr.is_ipv6() {
        AddressFamily::Inet6
    } else {
        AddressFamily::Inet
    };
    let fd = socket(fam, SockType::Datagram, SockFlag::SOCK_CLOEXEC, None).ctx("socket", &"udp")?;
    super::tcp::set_buffers(&fd, opts)?;
    bind(fd.as_raw_fd(), &SockaddrStorage::from(*addr)).ctx("bind", addr)?;
    Ok(fd)
}

/// The sequence number of a far peer's hello (a datagram of the header alone).
const HELLO: u64 = u64::MAX;
/// Hellos a far peer sends (a datagram can be lost; the others are skipped).
const HELLOS: usize = 3;

/// A far peer's socket: its own, connected to ours at `to`, and hello said.
fn far_socket(to: SocketAddr, opts: &MechOptions) -> Result<OwnedFd> {
    let any: SocketAddr = if to.is_ipv6() {
        "[::]:0".parse().unwrap()
    } else {
        "0.0.0.0:0".parse().unwrap()
    };
    let fd = new_socket(&any, opts)?;
    connect(fd.as_raw_fd(), &SockaddrStorage::from(to)).ctx("connect", &to)?;
    for _ in 0..HELLOS {
        ipcperf_sys::fd::writev(
            std::os::fd::AsFd::as_fd(&fd),
            &[IoSlice::new(&HELLO.to_le_bytes())],
        )
        .map_err(|e| Error::io("writev", "udp hello", e))?;
    }
    Ok(fd)
}

/// Our socket, for a far peer: wait (bounded) for its hello and connect to where
/// it came from.
fn learn_peer(fd: &OwnedFd, timeout_ms: i32) -> Result<()> {
    let hello = std::os::fd::AsFd::as_fd(fd);
    if !super::other_side::wait_ready(hello, false, timeout_ms, "its hello came")? {
        return Err(Error::Timeout(format!(
            "udp: the peer's hello did not come within {timeout_ms} ms"
        )));
    }
    let mut b = [0u8; SEQ_BYTES];
    let (n, from) = nix::sys::socket::recvfrom::<SockaddrStorage>(fd.as_raw_fd(), &mut b)
        .ctx("recvfrom", &"udp hello")?;
    let from = from.ok_or_else(|| Error::Peer("udp: a hello from nowhere".into()))?;
    if n != SEQ_BYTES || u64::from_le_bytes(b) != HELLO {
        return Err(Error::Peer(
            "udp: the first datagram was not the peer's hello".into(),
        ));
    }
    connect(fd.as_raw_fd(), &from).ctx("connect", &"udp")?;
    Ok(())
}

fn local_addr(fd: &OwnedFd) -> Result<SockaddrStorage> {
    Ok(getsockname::<SockaddrStorage>(fd.as_raw_fd()).ctx("getsockname", &"udp")?)
}

fn setup(opts: &MechOptions, block: usize) -> Result<Link> {
    let max = if opts.ipv6 {
        MAX_DATAGRAM_V6
    } else {
        MAX_DATAGRAM_V4
    } - SEQ_BYTES;
    if block > max {
        return Err(Error::Refused(format!(
            "a {block}-byte block does not fit in one UDP datagram: the largest is {} bytes over \
             IPv{} (a limit of IP's 16-bit length, no sysctl raises it), {max} after ipcperf's \
             {SEQ_BYTES}-byte sequence number",
            max + SEQ_BYTES,
            if opts.ipv6 { 6 } else { 4 }
        )));
    }
    let veth = if opts.across.contains(&crate::namespace::Namespace::Net) {
        if opts.ipv6 {
            return Err(Error::Refused(
                "--across net with --ipv6: the veth pair is IPv4 only".into(),
            ));
        }
        Some(super::veth::VethNs::create()?)
    } else {
        None
    };
    // The peer elsewhere (another machine, another network namespace): it makes
    // its own socket and says hello to ours.
    let far = match (&veth, opts.bind_ip) {
        (Some(v), _) => Some(SocketAddr::new(v.our_ip.into(), 0)),
        (None, Some(ip)) => Some(SocketAddr::new(ip, 0)),
        (None, None) => None,
    };
    if let Some(at) = far {
        let a = new_socket(&at, opts)?;
        let ours = local_addr(&a)?;
        let ours = ours
            .as_sockaddr_in()
            .map(|s| SocketAddr::new(s.ip().into(), s.port()))
            .or_else(|| {
                ours.as_sockaddr_in6()
                    .map(|s| SocketAddr::new(s.ip().into(), s.port()))
            })
            .ok_or_else(|| Error::Peer("udp: our socket has no IP address".into()))?;
        let mut peer_opts = opts.clone();
        peer_opts.netns = veth.as_ref().map(|v| v.path());
        let mut link = Link::new(
            MechanismKind::Udp,
            opts,
            Some(LocalEnd::Handoff(Box::new(PeerHandoff {
                kind: MechanismKind::Udp,
                addr: PeerAddr::Udp {
                    asker: true,
                    connect_to: None,
                },
                opts: opts.clone(),
                fds: vec![a],
            }))),
            Some(PeerHandoff {
                kind: MechanismKind::Udp,
                addr: PeerAddr::Udp {
                    asker: false,
                    connect_to: Some(ours),
                },
                opts: peer_opts,
                fds: Vec::new(),
            }),
            None,
        );
        link.facts.push(("udp_max_block".into(), max.to_string()));
        if let Some(v) = veth {
            link.facts.push(v.path_fact());
            link.guards.push(Box::new(v));
        }
        return Ok(link);
    }
    let any: SocketAddr = if opts.ipv6 {
        "[::1]:0".parse().unwrap()
    } else {
        "127.0.0.1:0".parse().unwrap()
    };
    let a = new_socket(&any, opts)?;
    let b = new_socket(&any, opts)?;
    let (aa, ba) = (local_addr(&a)?, local_addr(&b)?);
    connect(a.as_raw_fd(), &ba).ctx("connect", &"udp")?;
    connect(b.as_raw_fd(), &aa).ctx("connect", &"udp")?;
    let end = |fd, asker| PeerHandoff {
        kind: MechanismKind::Udp,
        addr: PeerAddr::Udp {
            asker,
            connect_to: None,
        },
        opts: opts.clone(),
        fds: vec![fd],
    };
    let mut link = Link::new(
        MechanismKind::Udp,
        opts,
        Some(LocalEnd::Handoff(Box::new(end(a, true)))),
        Some(end(b, false)),
        None,
    );
    link.facts.push(("udp_max_block".into(), max.to_string()));
    Ok(link)
}

/// One UDP end. The asker numbers its messages; the answerer answers each with
/// the number of the message it answers.
#[derive(Debug)]
pub struct UdpEnd {
    fd: OwnedFd,
    asker: bool,
    next_seq: u64,
    answer_seq: u64,
    highest: Option<u64>,
    /// Bit i set: sequence number `highest - i` was received (i < 64).
    window: u64,
    counts: DatagramCounts,
    wait_ms: u64,
    /// `--busy-poll`: a non-blocking socket, retried at once.
    spin: bool,
    /// `--wait poll|epoll|try-poll|try-epoll`: a non-blocking socket waited on
    /// in poll(2), or in its epoll instances (input, room); `first`: wait
    /// before each receive, as an event loop does, else only when it would block.
    ready: Option<wait::Ready>,
    /// Tests: throw away every n-th datagram on arrival, as a lossy network would.
    #[cfg(test)]
    drop_every: u64,
    #[cfg(test)]
    arrived: u64,
}

impl UdpEnd {
    pub fn new(fd: OwnedFd, asker: bool) -> Result<UdpEnd> {
        let wait_ms = if asker { ASK_WAIT_MS } else { ANSWER_WAIT_MS };
        let mut e = UdpEnd {
            fd,
            asker,
            next_seq: 0,
            answer_seq: 0,
            highest: None,
            window: 0,
            counts: DatagramCounts::default(),
            wait_ms,
            spin: false,
            ready: None,
            #[cfg(test)]
            drop_every: 0,
            #[cfg(test)]
            arrived: 0,
        };
        e.set_wait_ms(wait_ms)?;
        Ok(e)
    }

    /// The bounded wait of a receive (SO_RCVTIMEO; under `--wait poll|epoll`
    /// the wait's own time-out).
    pub fn set_wait_ms(&mut self, ms: u64) -> Result<()> {
        let tv = TimeVal::new((ms / 1000) as _, ((ms % 1000) * 1000) as _);
        setsockopt(&self.fd, sockopt::ReceiveTimeout, &tv)
            .ctx("setsockopt(SO_RCVTIMEO)", &"udp")?;
        self.wait_ms = ms;
        Ok(())
    }

    /// What this end counted since the last call (`lost` is left to the sum of
    /// both ends: sent − received once).
    pub fn take_counts(&mut self) -> DatagramCounts {
        std::mem::take(&mut self.counts)
    }

    #[inline]
    fn send_seq(&mut self, seq: u64, buf: &[u8]) -> Result<()> {
        let hdr = seq.to_le_bytes();
        let iov = [IoSlice::new(&hdr), IoSlice::new(buf)];
        let mut bound = super::endpoint::SpinBound::new();
        // writev on the connected socket: one datagram, header and block.
        loop {
            match ipcperf_sys::fd::writev(std::os::fd::AsFd::as_fd(&self.fd), &iov) {
                Ok(_) => {
                    self.counts.sent += 1;
                    return Ok(());
                }
                // Busy-poll: a full send buffer is retried (bounded).
                Err(Errno::EAGAIN) if self.spin && bound.again(self.wait_ms) => {}
                // An event loop's socket: wait for room (bounded), then again.
                Err(Errno::EAGAIN) if self.ready.is_some() => {
                    if !self.wait_ready(true)? {
                        return Err(Error::Timeout(format!(
                            "udp: no room to send within {} ms",
                            self.wait_ms
                        )));
                    }
                }
                Err(Errno::ECONNREFUSED) => return Err(Self::closed()),
                Err(e) => return Err(Error::io("writev", "udp", e)),
            }
        }
    }

    #[cold]
    fn lost(&self) -> Error {
        let seen = match self.highest {
            Some(h) => format!(
                "; so far {} received, highest sequence number {h}",
                self.counts.received
            ),
            None => String::new(),
        };
        Error::Lost(format!(
            "udp: no datagram within {} ms{seen} (datagrams were lost: a receiver that \
             falls behind loses what overflows its buffer; --rcvbuf enlarges it)",
            self.wait_ms
        ))
    }

    #[cold]
    fn closed() -> Error {
        Error::Peer("udp: the other side's socket is closed (port unreachable)".into())
    }

    /// Note `seq` as received; false if it was received before (a duplicate).
    #[inline]
    fn note(&mut self, seq: u64) -> bool {
        self.counts.received += 1;
        match self.highest {
            None => {
                self.highest = Some(seq);
                self.window = 1;
                true
            }
            Some(h) if seq > h => {
                let shift = seq - h;
                self.window = if shift >= 64 { 0 } else { self.window << shift } | 1;
                self.highest = Some(seq);
                true
            }
            Some(h) => {
                let d = h - seq;
                if d < 64 && self.window & (1 << d) != 0 {
                    self.counts.duplicated += 1;
                    false
                } else {
                    if d < 64 {
                        self.window |= 1 << d;
                    }
                    self.counts.reordered += 1;
                    true
                }
            }
        }
    }

    /// Receive the next datagram this end should take; returns its payload length.
    #[inline]
    fn recv_one(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut hdr = [0u8; SEQ_BYTES];
        let mut bound = super::endpoint::SpinBound::new();
        // An event loop's order: wait for input, then receive.
        let mut wait_first = self.ready.as_ref().is_some_and(|r| r.first);
        loop {
            if wait_first && !self.wait_ready(false)? {
                return Err(self.lost());
            }
            let n = {
                let mut iov = [IoSliceMut::new(&mut hdr), IoSliceMut::new(buf)];
                match ipcperf_sys::fd::readv(std::os::fd::AsFd::as_fd(&self.fd), &mut iov) {
                    Ok(n) => n,
                    // Busy-poll: nothing yet, look again (bounded as the wait is).
                    Err(Errno::EAGAIN) if self.spin && bound.again(self.wait_ms) => continue,
                    // Nothing after all (or try-first): wait, then receive again.
                    Err(Errno::EAGAIN) if self.ready.is_some() => {
                        wait_first = true;
                        continue;
                    }
                    Err(Errno::EAGAIN) => return Err(self.lost()),
                    Err(Errno::ECONNREFUSED) => return Err(Self::closed()),
                    Err(e) => return Err(Error::io("readv", "udp", e)),
                }
            };
            if n < SEQ_BYTES {
                return Err(Error::Peer(format!(
                    "udp: a {n}-byte datagram carries no sequence number"
                )));
            }
            // A far peer's hello (sent more than once): not a message.
            if n == SEQ_BYTES && u64::from_le_bytes(hdr) == HELLO {
                continue;
            }
            #[cfg(test)]
            {
                self.arrived += 1;
                if self.drop_every > 0 && self.arrived.is_multiple_of(self.drop_every) {
                    continue;
                }
            }
            let seq = u64::from_le_bytes(hdr);
            let new = self.note(seq);
            if self.asker {
                // Only the answer to the message just sent completes the round trip;
                // a late answer to an earlier one is counted and dropped.
                if new && seq + 1 == self.next_seq {
                    return Ok(n - SEQ_BYTES);
                }
            } else if new {
                self.answer_seq = seq;
                return Ok(n - SEQ_BYTES);
            }
        }
    }
}

impl ByteStream for UdpEnd {
    fn cut_handle(&self) -> Option<OwnedFd> {
        self.fd.try_clone().ok()
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> Result<()> {
        let seq = if self.asker {
            let s = self.next_seq;
            self.next_seq += 1;
            s
        } else {
            self.answer_seq
        };
        self.send_seq(seq, buf)
    }

    #[inline]
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.recv_one(buf)
    }

    fn set_busy_poll(&mut self) -> Result<bool> {
        ipcperf_sys::fd::set_nonblocking(std::os::fd::AsFd::as_fd(&self.fd), true)?;
        self.spin = true;
        self.ready = None;
        Ok(true)
    }

    fn set_wait(&mut self, w: super::wait::Wait) -> Result<bool> {
        self.wait_as(w)
    }

    /// A stream series numbers its datagrams from 0 again, so that sequence number
    /// `i` is block `i` (the position `--verify` checks it at).
    fn prepare_series(&mut self, _writer: bool) -> Result<()> {
        self.next_seq = 0;
        self.highest = None;
        self.window = 0;
        Ok(())
    }
}

/// How long the stream reader waits after the last datagram before it decides the
/// rest was lost (the writer sends back to back: a gap this long means it is done).
pub const STREAM_IDLE_MS: u64 = 50;

/// Read a UDP stream of `total` bytes sent as blocks of `buf.len()`: until every
/// block arrived, or none came for [`STREAM_IDLE_MS`] (the rest is lost). Returns
/// the clock when the last datagram arrived (the idle wait taken off, to the
/// kernel timer's granularity) and the bytes delivered once. Loss, duplicates and
/// reordering are in the end's counts. No clock read per datagram.
pub fn read_stream_lossy(
    p: crate::payload::Payload,
    u: &mut UdpEnd,
    buf: &mut [u8],
    total: u64,
) -> Result<(u64, u64)> {
    crate::with_payload!(p, P => lossy::<P>(u, buf, total))
}

#[inline(never)]
fn lossy<P: crate::payload::PayloadOps>(
    u: &mut UdpEnd,
    buf: &mut [u8],
    total: u64,
) -> Result<(u64, u64)> {
    let len = buf.len() as u64;
    let want = total.div_ceil(len.max(1));
    let first_wait = u.wait_ms;
    let mut got = 0u64;
    let mut idle = false;
    while got < want {
        match u.recv_one(buf) {
            Ok(n) => {
                let seq = u.answer_seq;
                P::check(&buf[..n], seq * len)?;
                got += 1;
                if got == 1 {
                    u.set_wait_ms(STREAM_IDLE_MS)?;
                }
            }
            Err(Error::Lost(_)) if got > 0 => {
                idle = true;
                break;
            }
            Err(e) => {
                let _ = u.set_wait_ms(first_wait);
                return Err(e);
            }
        }
    }
    let mut end = ipcperf_sys::clock::now_ns();
    if idle {
        end = end.saturating_sub(STREAM_IDLE_MS * 1_000_000);
    }
    u.set_wait_ms(first_wait)?;
    Ok((end, (got * len).min(total)))
}

/// UDP over loopback.
pub struct Udp;

impl Mechanism for Udp {
    type End = UdpEnd;
    const WAITS: &'static [super::wait::Wait] = super::wait::Wait::DESCRIPTOR;

    fn poll_fd(end: &mut UdpEnd) -> Option<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        Some(end.fd.as_fd())
    }

    const INFO: MechanismInfo = MechanismInfo {
        names: "none (ephemeral ports)",
        ..MechanismInfo::new(MechanismKind::Udp, "udp", "UDP over loopback; sequence-numbered datagrams, loss/duplication/reordering counted (max 65,507 B)")
    };

    fn setup(opts: &MechOptions, block: usize) -> Result<Link> {
        setup(opts, block)
    }

    fn open(mut h: PeerHandoff, timeout_ms: i32) -> Result<UdpEnd> {
        let PeerAddr::Udp { asker, connect_to } = h.addr else {
            return Err(Error::Peer(format!("udp cannot open {:?}", h.addr)));
        };
        if let (Some(to), true) = (connect_to, h.fds.is_empty()) {
            return UdpEnd::new(far_socket(to, &h.opts)?, asker);
        }
        let fd = super::open_fd(&mut h, timeout_ms)?;
        let far =
            h.opts.bind_ip.is_some() || h.opts.across.contains(&crate::namespace::Namespace::Net);
        if asker && far {
            learn_peer(&fd, timeout_ms)?;
        }
        UdpEnd::new(fd, asker)
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::TwoWay)
    }

    fn describe(opts: &MechOptions, out: &mut Vec<(String, String)>) {
        out.push(("ip".into(), if opts.ipv6 { "v6" } else { "v4" }.into()));
        opts.describe_buffers(out);
    }

    fn take_datagram_counts(end: &mut UdpEnd) -> Option<DatagramCounts> {
        Some(end.take_counts())
    }

    fn read_lossy(
        end: &mut UdpEnd,
        p: crate::payload::Payload,
        buf: &mut [u8],
        total: u64,
    ) -> Option<Result<LossyRead>> {
        Some(
            read_stream_lossy(p, end, buf, total)
                .map(|(t, delivered)| (t, delivered, end.take_counts())),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::Payload;
    use crate::workload::roundtrip::{echo, ping, MessageEnd};

    fn pair() -> (UdpEnd, UdpEnd) {
        let mut l = setup(&MechOptions::default(), 64).unwrap();
        let a = match l.local.take() {
            Some(LocalEnd::Handoff(mut h)) => UdpEnd::new(h.fds.remove(0), true).unwrap(),
            _ => panic!("udp's local end is a handoff"),
        };
        let mut h = l.take_peer().unwrap();
        let b = UdpEnd::new(h.fds.remove(0), false).unwrap();
        (a, b)
    }

    #[test]
    fn lost_datagrams_are_counted_and_never_hang() {
        let (mut a, mut b) = pair();
        a.set_wait_ms(20).unwrap();
        b.set_wait_ms(300).unwrap();
        // The answerer's socket throws away every 5th datagram that arrives.
        b.drop_every = 5;
        let t = std::thread::spawn(move || {
            let mut buf = vec![0u8; 64];
            // It is asked 100 times but receives only 80: its bounded wait ends the series.
            let echoed = echo(Payload::Touch, &mut b, &mut buf, 100, None).unwrap();
            (echoed, b.take_counts())
        });
        let (mut w, mut r) = (vec![0u8; 64], vec![0u8; 64]);
        let mut s = Vec::with_capacity(100);
        let o = ping(Payload::Verify, &mut a, &mut w, &mut r, 100, &mut s).unwrap();
        let (echoed, bc) = t.join().unwrap();
        assert_eq!(echoed, 80);
        assert_eq!((o.done, o.lost), (80, 20));
        assert_eq!(s.len(), 80);
        let mut c = a.take_counts();
        assert_eq!((c.sent, c.received), (100, 80));
        assert_eq!((bc.sent, bc.received), (80, 80));
        c.add(&bc);
        assert_eq!(
            c.sent - (c.received - c.duplicated),
            20,
            "lost = sent - received once"
        );
    }

    #[test]
    fn duplicates_and_late_answers_are_counted_not_taken() {
        let (mut a, mut b) = pair();
        a.set_wait_ms(50).unwrap();
        let mut buf = [7u8; 64];
        let mut got = [0u8; 64];
        // Round trip 0, answered twice.
        a.write_all(&buf).unwrap();
        b.read_some(&mut got).unwrap();
        b.write_all(&got).unwrap();
        b.write_all(&got).unwrap();
        a.recv_msg(&mut got).unwrap();
        // Round trip 1: the duplicate of 0 arrives first and is dropped.
        buf[0] = 1;
        a.write_all(&buf).unwrap();
        b.read_some(&mut got).unwrap();
        b.write_all(&got).unwrap();
        a.recv_msg(&mut got).unwrap();
        assert_eq!(got[0], 1);
        let c = a.take_counts();
        assert_eq!((c.received, c.duplicated), (3, 1));
        // Nothing more: a bounded wait, reported as lost.
        assert!(matches!(a.recv_msg(&mut got), Err(Error::Lost(_))));
    }
}
