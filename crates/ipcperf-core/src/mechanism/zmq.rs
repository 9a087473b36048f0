//! ZeroMQ (libzmq through the `zmq` crate) over a Unix socket path (`zmq-ipc`,
//! `ipc://`) and over TCP loopback (`zmq-tcp`): PUSH/PULL for streams, REQ/REP
//! for round trips, as its users write them. Each write is one message (libzmq
//! copies it into a message of its own, as `zmq_send` does); a read takes a
//! message and hands it out piece by piece.
//!
//! The owner binds (its socket is made at set-up and kept for its thread); the
//! peer connects. libzmq reconnects quietly where a socket would report its peer
//! gone, so every wait is in slices of [`SLICE_MS`]: between them an end checks
//! whether the watchdog has seen its peer die, and the whole wait is bounded.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::endpoint::WAIT_MS;
use super::info::TWO_SIDES;
use super::{
    ByteStream, Link, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr, PeerHandoff,
    RoundTripShape, SocketPattern as Pattern,
};
use crate::error::{Error, Result};
use ipcperf_sys::names::PrivateDir;

/// One slice of a wait: how soon a dead peer is noticed.
const SLICE_MS: i32 = 100;
/// How long closing a socket may still push out what it holds.
const LINGER_MS: i32 = 1000;

fn socket_type(p: Pattern) -> zmq::SocketType {
    match p {
        Pattern::Push => zmq::PUSH,
        Pattern::Pull => zmq::PULL,
        Pattern::Req => zmq::REQ,
        Pattern::Rep => zmq::REP,
    }
}

/// One side: its context and socket, the message being read, and the flag the
/// watchdog sets when the peer has died.
pub struct ZmqEnd {
    sock: zmq::Socket,
    /// Declared after the socket: a context outlives its sockets.
    _ctx: zmq::Context,
    msg: zmq::Message,
    /// How much of `msg` has been handed out.
    off: usize,
    peer_dead: Arc<AtomicBool>,
    what: &'static str,
}

impl std::fmt::Debug for ZmqEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ZmqEnd({})", self.what)
    }
}

fn failed(what: &str, op: &str, e: zmq::Error) -> Error {
    Error::Peer(format!("{what}: {op}: {e}"))
}

impl ZmqEnd {
    fn new(kind: MechanismKind, pattern: Pattern, peer_dead: Arc<AtomicBool>) -> Result<ZmqEnd> {
        let what = kind.name();
        let ctx = zmq::Context::new();
        let sock = ctx
            .socket(socket_type(pattern))
            .map_err(|e| failed(what, "socket", e))?;
        for (op, r) in [
            ("ZMQ_LINGER", sock.set_linger(LINGER_MS)),
            ("ZMQ_RCVTIMEO", sock.set_rcvtimeo(SLICE_MS)),
            ("ZMQ_SNDTIMEO", sock.set_sndtimeo(SLICE_MS)),
        ] {
            r.map_err(|e| failed(what, op, e))?;
        }
        let end = ZmqEnd {
            sock,
            _ctx: ctx,
            msg: zmq::Message::new(),
            off: 0,
            peer_dead,
            what,
        };
        Ok(end)
    }

    /// Another slice of waiting, or why not: the peer died, or the bound passed.
    #[cold]
    fn wait_more(&self, op: &str, waited_ms: &mut i32) -> Result<()> {
        if self.peer_dead.load(Ordering::Relaxed) {
            return Err(Error::Peer(format!(
                "{}: the other side died (its {op} will never complete)",
                self.what
            )));
        }
        *waited_ms += SLICE_MS;
        if *waited_ms >= WAIT_MS {
            return Err(Error::Timeout(format!(
                "{} {op} not done within {WAIT_MS} ms",
                self.what
            )));
        }
        Ok(())
    }
}

impl ByteStream for ZmqEnd {
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> Result<()> {
        let mut waited = 0;
        loop {
            match self.sock.send(buf, 0) {
                Ok(()) => return Ok(()),
                Err(zmq::Error::EAGAIN | zmq::Error::EINTR) => {
                    self.wait_more("send", &mut waited)?
                }
                Err(e) => return Err(failed(self.what, "send", e)),
            }
        }
    }

    #[inline]
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        if self.off >= self.msg.len() {
            let mut waited = 0;
            loop {
                match self.sock.recv(&mut self.msg, 0) {
                    Ok(()) => break,
                    Err(zmq::Error::EAGAIN | zmq::Error::EINTR) => {
                        self.wait_more("receive", &mut waited)?
                    }
                    Err(e) => return Err(failed(self.what, "receive", e)),
                }
            }
            self.off = 0;
        }
        Ok(super::endpoint::hand_out(&self.msg, &mut self.off, buf))
    }
}

/// Where the peer connects, and how.
fn endpoint_for(kind: MechanismKind, dir: Option<&PrivateDir>) -> String {
    match (kind, dir) {
        (MechanismKind::ZmqIpc, Some(d)) => format!("ipc://{}", d.join("zmq").display()),
        _ => "tcp://127.0.0.1:*".into(),
    }
}

fn setup(kind: MechanismKind, opts: &MechOptions, ours: Pattern, theirs: Pattern) -> Result<Link> {
    let dir = match kind {
        MechanismKind::ZmqIpc => Some(PrivateDir::create(&opts.base_dir(), "zmq")?),
        _ => None,
    };
    let dead = Arc::new(AtomicBool::new(false));
    let end = ZmqEnd::new(kind, ours, dead.clone())?;
    let asked = endpoint_for(kind, dir.as_ref());
    end.sock
        .bind(&asked)
        .map_err(|e| failed(kind.name(), &format!("bind {asked}"), e))?;
    let endpoint = match end.sock.get_last_endpoint() {
        Ok(Ok(s)) => s,
        _ => asked,
    };
    let peer = PeerAddr::Zmq {
        endpoint,
        pattern: theirs,
    };
    let mut link = super::in_process::link(kind, opts, end, peer, dir);
    link.on_peer_death
        .push(Box::new(move || dead.store(true, Ordering::Relaxed)));
    link.facts
        .push(("zmq_pattern".into(), format!("{ours:?}/{theirs:?}")));
    Ok(link)
}

fn open(h: PeerHandoff) -> Result<ZmqEnd> {
    match h.addr {
        PeerAddr::InProcess { id } => super::in_process::take(id).ok_or_else(|| {
            Error::Peer(format!(
                "{}: the bound end is not in this process",
                h.kind.name()
            ))
        }),
        PeerAddr::Zmq { endpoint, pattern } => {
            // Nobody tells a connecting end that its peer died: the binding side
            // is the one the watchdog guards.
            let end = ZmqEnd::new(h.kind, pattern, Arc::new(AtomicBool::new(false)))?;
            reachable(h.kind.name(), &endpoint)?;
            end.sock
                .connect(&endpoint)
                .map_err(|e| failed(h.kind.name(), &format!("connect {endpoint}"), e))?;
            Ok(end)
        }
        other => Err(Error::Peer(format!(
            "{} cannot open {other:?}",
            h.kind.name()
        ))),
    }
}

/// A tcp:// endpoint this side has no route to (another network namespace's
/// loopback, `--across net`) is an error now: libzmq would retry its connect
/// in silence until the open's bound ran out. A route is looked up, nothing sent.
fn reachable(name: &str, endpoint: &str) -> Result<()> {
    let Some(addr) = endpoint
        .strip_prefix("tcp://")
        .and_then(|a| a.parse::<std::net::SocketAddr>().ok())
    else {
        return Ok(());
    };
    let any: std::net::SocketAddr = if addr.is_ipv6() {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    };
    std::net::UdpSocket::bind(any)
        .and_then(|u| u.connect(addr))
        .map_err(|e| Error::Peer(format!("{name}: no route to {endpoint} from here: {e}")))
}

/// The libzmq this build carries, for every result.
pub const LIBRARY: &str = "zmq 0.10.0 (libzmq 4.3.4, vendored)";

macro_rules! zmq_mechanism {
    ($ty:ident, $kind:ident, $name:literal, $summary:literal, $names:literal, $base:ident) => {
        #[doc = $summary]
        pub struct $ty;

        impl Mechanism for $ty {
            type End = ZmqEnd;
            const POLLS: bool = false;

            const INFO: MechanismInfo = MechanismInfo {
                modes: TWO_SIDES,
                names: $names,
                in_dir: matches!(MechanismKind::$kind, MechanismKind::ZmqIpc),
                base: Some(MechanismKind::$base),
                library: Some(LIBRARY),
                ..MechanismInfo::new(MechanismKind::$kind, $name, $summary)
            };

            fn setup(opts: &MechOptions, _block: usize) -> Result<Link> {
                setup(MechanismKind::$kind, opts, Pattern::Push, Pattern::Pull)
            }

            fn setup_round_trip(opts: &MechOptions, _block: usize) -> Result<Link> {
                setup(MechanismKind::$kind, opts, Pattern::Req, Pattern::Rep)
            }

            fn open(h: PeerHandoff, _timeout_ms: i32) -> Result<ZmqEnd> {
                open(h)
            }

            fn round_trip() -> Option<RoundTripShape> {
                Some(RoundTripShape::TwoWay)
            }

            fn wait_label(_opts: &MechOptions) -> String {
                "block".into()
            }
        }
    };
}

zmq_mechanism!(
    ZmqIpc,
    ZmqIpc,
    "zmq-ipc",
    "ZeroMQ over ipc:// (a Unix stream socket path): PUSH/PULL streams, REQ/REP round trips",
    "socket path",
    Unix
);
zmq_mechanism!(
    ZmqTcp,
    ZmqTcp,
    "zmq-tcp",
    "ZeroMQ over tcp:// on loopback: PUSH/PULL streams, REQ/REP round trips",
    "none (ephemeral port)",
    Tcp
);

#[cfg(test)]
mod tests {
    /// The libzmq linked in is the one every result names.
    #[test]
    fn the_named_libzmq_is_the_linked_one() {
        let (a, b, c) = zmq::version();
        assert!(
            super::LIBRARY.contains(&format!("libzmq {a}.{b}.{c}")),
            "{a}.{b}.{c}"
        );
    }
}
