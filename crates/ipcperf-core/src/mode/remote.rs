//! The peer on another machine: `ipcperf serve` there, `--peer HOST` here.
//!
//! One control connection (TCP) carries a versioned handshake, then the same
//! messages a local peer process reads and writes ([`ToPeer`], [`FromPeer`]), each
//! as a frame: a 4-byte big-endian length, then JSON. The data flows on the
//! mechanism's own connection, which the server's peer opens to the address the
//! client names (only ever the client's own address).
//!
//! The handshake, server first:
//! - `Banner`: the server's ipcperf version and protocol, a fresh 32-byte nonce,
//!   and whether it wants a token; or `Busy` (too many handshakes at once), then
//!   close.
//! - `ClientHello`: the client's version and protocol, and with a token the proof
//!   that it knows it: HMAC-SHA256(token, nonce ‖ "ipcperf client"), so the token
//!   itself never crosses the wire.
//! - `Welcome` with the server's machine; `Busy` when another run holds the one
//!   run slot (taken only by a client that got this far: a connection that never
//!   proves its token cannot keep runs out); or `Refused` with the reason (a
//!   protocol mismatch names both versions), then close. A busy server is tried
//!   again until the client's `--peer-wait` has passed.
//!
//! Everything is bounded: each frame's read, whole, by [`HANDSHAKE`] (a byte-a-
//! second drip cannot stretch it), a frame by [`MAX_FRAME`], the handshakes in
//! progress by the server's limit, the whole run by its `--max-duration`.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::protocol::{FromPeer, PeerHandle, PeerSetup, ToPeer};
use super::token::{hex, unhex};
pub use super::token::{nonce, proof, proves};
use crate::error::{Error, Result, UNREACHED};
use crate::machine::Machine;
use crate::mechanism::PeerAddr;

/// The control protocol's version: both sides must speak the same one.
pub const PROTOCOL: u32 = 1;
/// The default port of `ipcperf serve`.
pub const DEFAULT_PORT: u16 = 7787;
/// How long each handshake step may take.
pub const HANDSHAKE: Duration = Duration::from_secs(2);
/// The largest frame either side accepts.
pub const MAX_FRAME: usize = 1 << 20;

/// Server to client, before the run.
#[derive(Debug, Serialize, Deserialize)]
pub enum ServerSays {
    Banner {
        ipcperf: String,
        protocol: u32,
        nonce: String,
        token: bool,
    },
    Busy,
    Welcome {
        machine: Box<Machine>,
    },
    Refused {
        why: String,
    },
}

/// Client to server, in the handshake.
#[derive(Debug, Serialize, Deserialize)]
pub struct ClientHello {
    pub ipcperf: String,
    pub protocol: u32,
    /// HMAC-SHA256(token, nonce ‖ "ipcperf client"), hex; None without a token.
    pub proof: Option<String>,
    /// The client's run (one id for all of a run's connections: each series of a
    /// run is a connection of its own).
    #[serde(default)]
    pub run: String,
    /// The run is over: nothing follows this handshake (`serve --once` ends).
    #[serde(default)]
    pub over: bool,
    /// After the welcome, this many empty frames go back and forth (the client
    /// times them: the path's round trip).
    #[serde(default)]
    pub pings: u32,
}

/// Empty frames timed after the welcome; the fastest is the path's round trip.
pub const PINGS: u32 = 5;

/// Write one frame.
pub fn write_frame<T: Serialize>(s: &mut TcpStream, m: &T) -> Result<()> {
    let body = serde_json::to_vec(m).map_err(|e| Error::Peer(format!("cannot encode: {e}")))?;
    let mut frame = (body.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(&body);
    s.write_all(&frame).map_err(broke)
}

/// The control connection's own failure: a reset or close, or a time-out that
/// says the other machine is gone (`TCP_USER_TIMEOUT` or unanswered keepalive
/// probes, [`crate::mechanism::tcp::far_peer_bounds`]).
fn broke(e: std::io::Error) -> Error {
    let errno = e.raw_os_error().map(nix::errno::Errno::from_raw);
    if let Some(n) = errno.filter(|&n| crate::error::gone_errno(n)) {
        Error::Peer(format!(
            "the control connection: the other machine stopped answering ({n}): {}",
            crate::error::GONE
        ))
    } else {
        Error::Peer(format!("the control connection broke: {e}"))
    }
}

/// How long the control connection `s` has heard nothing from the other
/// machine, in ms, where that is past its bound for a path of round trip
/// `rtt_ns` ([`crate::mechanism::tcp::far_silence_bound_ms`]); None while it
/// answers (or where the kernel cannot say).
fn silent(s: &TcpStream, rtt_ns: u64) -> Option<u32> {
    let ms = ipcperf_sys::fd::tcp_silent_ms(s.as_fd()).ok()?;
    (ms >= crate::mechanism::tcp::far_silence_bound_ms(rtt_ns)).then_some(ms)
}

/// `e` told after what it happened on: a peer's words without a second "peer failed".
fn told(e: &Error) -> String {
    match e {
        Error::Peer(s) => s.clone(),
        e => e.to_string(),
    }
}

/// Read one frame of at most `max` bytes, each read bounded by `timeout`.
pub fn read_frame<T: for<'de> Deserialize<'de>>(
    s: &mut TcpStream,
    max: usize,
    timeout: Duration,
) -> Result<T> {
    // One bound for the whole frame: a peer that drips a byte at a time cannot
    // stretch it (a per-read timeout would restart with every byte).
    let deadline = Instant::now() + timeout;
    let mut len = [0u8; 4];
    read_all(s, &mut len, deadline, timeout)?;
    let n = u32::from_be_bytes(len) as usize;
    if n > max {
        return Err(Error::Peer(format!(
            "a control message of {n} bytes: more than the {max} allowed"
        )));
    }
    let mut body = vec![0u8; n];
    read_all(s, &mut body, deadline, timeout)?;
    serde_json::from_slice(&body)
        .map_err(|e| Error::Peer(format!("a garbled control message: {e}")))
}

fn read_all(s: &mut TcpStream, buf: &mut [u8], deadline: Instant, timeout: Duration) -> Result<()> {
    let late = || {
        Error::Timeout(format!(
            "the other side sent nothing for {} ms (or not a whole message within it)",
            timeout.as_millis()
        ))
    };
    let mut got = 0;
    while got < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(late());
        }
        s.set_read_timeout(Some(left))
            .map_err(|e| Error::Peer(format!("control connection: {e}")))?;
        match s.read(&mut buf[got..]) {
            Ok(0) => {
                return Err(Error::Peer(
                    "the other side closed the control connection".into(),
                ))
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            // SO_RCVTIMEO's expiry (EAGAIN); ETIMEDOUT is the connection's own.
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Err(late()),
            Err(e) => return Err(broke(e)),
        }
    }
    Ok(())
}

/// Where the server is, and the token to prove.
#[derive(Debug, Clone)]
pub struct Remote {
    pub addr: SocketAddr,
    pub token: Option<Vec<u8>>,
    /// This run's id, the same on each of its connections.
    pub run: String,
    /// How long to keep trying a server that says it is busy (`--peer-wait`).
    pub wait: Duration,
    /// Set once a case found the server's machine gone ([`Error::machine_gone`])
    /// or no server there ([`Error::serve_unreached`]): what it found. The cases
    /// after it are not tried (each would wait out a connect to nothing, or fail
    /// alike), nor is the server told the run is over.
    gone: std::sync::Arc<std::sync::Mutex<Option<String>>>,
}

/// How long a client keeps trying a busy server unless told otherwise.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(30);

impl Remote {
    pub fn new(addr: SocketAddr, token: Option<Vec<u8>>) -> Remote {
        let run = format!("{}-{}", std::process::id(), ipcperf_sys::clock::now_ns());
        Remote {
            addr,
            token,
            run,
            wait: DEFAULT_WAIT,
            gone: Default::default(),
        }
    }

    /// A case found the server's machine gone, or no server at the address:
    /// `why`, its error.
    pub fn mark_gone(&self, why: &Error) {
        let said = told(why);
        let found = match said.strip_prefix(&format!("{UNREACHED} {}: ", self.addr)) {
            Some(reason) => format!("found no ipcperf serve at {}: {reason}", self.addr),
            None => format!(
                "found ipcperf serve's machine at {} gone ({said})",
                self.addr
            ),
        };
        if let Ok(mut g) = self.gone.lock() {
            g.get_or_insert(found);
        }
    }

    /// Refused where an earlier case of this run found the server's machine
    /// gone, or no server there.
    pub fn still_there(&self) -> Result<()> {
        match self.gone.lock().ok().and_then(|g| g.clone()) {
            Some(found) => Err(Error::Peer(format!(
                "not tried: an earlier case of this run {found}"
            ))),
            None => Ok(()),
        }
    }

    /// Keep trying a busy server this long (zero: fail at once).
    pub fn with_wait(mut self, wait: Duration) -> Remote {
        self.wait = wait;
        self
    }

    /// Tell the server the run is over (`serve --once` then ends); best effort.
    pub fn say_over(&self) -> Result<()> {
        self.still_there()?;
        let (s, _, _) = handshake(self, true)?;
        let _ = s.shutdown(std::net::Shutdown::Both);
        Ok(())
    }

    /// The address of ours the server reaches us at (no packet is sent).
    pub fn local_ip(&self) -> Result<IpAddr> {
        let any: SocketAddr = if self.addr.is_ipv6() {
            "[::]:0".parse().expect("an address")
        } else {
            "0.0.0.0:0".parse().expect("an address")
        };
        let u = std::net::UdpSocket::bind(any)
            .and_then(|u| u.connect(self.addr).map(|()| u))
            .and_then(|u| u.local_addr())
            .map_err(|e| Error::Peer(format!("no route to {}: {e}", self.addr)))?;
        Ok(u.ip())
    }
}

/// The path from here to `peer`: the interface holding our address `ip` and its
/// MTU, as a line for the record.
pub fn path_of(ip: IpAddr, peer: SocketAddr) -> String {
    let found = nix::ifaddrs::getifaddrs().ok().and_then(|mut all| {
        all.find(|a| {
            a.address.as_ref().is_some_and(|sa| {
                sa.as_sockaddr_in()
                    .is_some_and(|s| IpAddr::V4(s.ip()) == ip)
                    || sa
                        .as_sockaddr_in6()
                        .is_some_and(|s| IpAddr::V6(s.ip()) == ip)
            })
        })
    });
    match found {
        Some(a) => {
            let mtu = std::fs::read_to_string(format!("/sys/class/net/{}/mtu", a.interface_name))
                .ok()
                .map(|m| format!(", MTU {}", m.trim()))
                .unwrap_or_default();
            format!("{} {ip} to {peer}{mtu}", a.interface_name)
        }
        None => format!("{ip} to {peer}"),
    }
}

/// The client's end: the control connection to `ipcperf serve`.
pub struct RemotePeer {
    s: TcpStream,
    pub addr: SocketAddr,
    /// The fastest of [`PINGS`] empty frames there and back on the control
    /// connection: the path's round trip, both sides' wake-ups included.
    pub rtt_ns: u64,
    /// The server's machine, from its welcome.
    pub machine: Machine,
    /// The server's ipcperf version, from its banner.
    pub version: String,
}

impl RemotePeer {
    /// Connect, shake hands and hand over `setup`.
    pub fn start(r: &Remote, setup: PeerSetup) -> Result<RemotePeer> {
        let (mut s, (machine, version), rtt_ns) = handshake(r, false)?;
        write_frame(&mut s, &ToPeer::Hello(setup))?;
        Ok(RemotePeer {
            s,
            addr: r.addr,
            rtt_ns,
            machine,
            version,
        })
    }

    /// Whether the job there still lives, without reading what it said: a peek
    /// at the control connection finds it closed, or a whole frame waiting that
    /// says the peer failed. For the owner's waits while it opens its end.
    pub fn alive(&self) -> Option<crate::mechanism::other_side::Alive> {
        let s = self.s.try_clone().ok()?;
        let rtt_ns = self.rtt_ns;
        Some(std::sync::Arc::new(move || {
            if silent(&s, rtt_ns).is_some() {
                return false;
            }
            use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
            use nix::sys::socket::{recv, MsgFlags};
            // An error waiting on the connection (a time-out, a reset) is looked
            // at, never read: a read would take it, and the owner's own read of
            // the connection would then find only its end, not why.
            let mut pfd = [PollFd::new(s.as_fd(), PollFlags::POLLIN)];
            match poll(&mut pfd, PollTimeout::ZERO) {
                Ok(0) => return true,
                Ok(_) => {
                    let ev = pfd[0].revents().unwrap_or(PollFlags::empty());
                    if ev.intersects(PollFlags::POLLERR | PollFlags::POLLHUP) {
                        return false;
                    }
                }
                Err(_) => return true,
            }
            let mut buf = [0u8; 4096];
            let flags = MsgFlags::MSG_PEEK | MsgFlags::MSG_DONTWAIT;
            match recv(std::os::fd::AsRawFd::as_raw_fd(&s), &mut buf, flags) {
                Ok(0) => false,
                Ok(n) if n >= 4 => {
                    let len = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
                    let failed = buf.get(4..4 + len).is_some_and(|body| {
                        matches!(
                            serde_json::from_slice::<FromPeer>(body),
                            Ok(FromPeer::Failed { .. })
                        )
                    });
                    !failed
                }
                Ok(_) | Err(nix::errno::Errno::EAGAIN) | Err(nix::errno::Errno::EINTR) => true,
                Err(_) => false,
            }
        }))
    }
}

/// A connection that got through the handshake: the stream, the server's
/// machine and version, the path's round trip.
type Shaken = (TcpStream, (Machine, String), u64);

/// Connect to the server and shake hands; the connection, the server's machine
/// and version, and the path's round trip (timed after the welcome). A server
/// busy with another run is tried again, with a growing pause (0.1 s doubling to
/// 2 s), until `r.wait` has passed.
fn handshake(r: &Remote, over: bool) -> Result<Shaken> {
    let give_up = Instant::now() + r.wait;
    let mut pause = Duration::from_millis(100);
    loop {
        match handshake_once(r, over)? {
            Some(done) => return Ok(done),
            None if Instant::now() + pause > give_up => {
                return Err(Error::Peer(format!(
                    "ipcperf serve at {} is busy with another run{}; try again when it ends \
                     (--peer-wait waits longer)",
                    r.addr,
                    if r.wait.is_zero() {
                        String::new()
                    } else {
                        format!(", still after {} s", r.wait.as_secs_f64().round())
                    }
                )))
            }
            None => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_secs(2));
            }
        }
    }
}

/// One try: None when the server said it is busy.
fn handshake_once(r: &Remote, over: bool) -> Result<Option<Shaken>> {
    {
        let at = r.addr;
        let mut s = TcpStream::connect_timeout(&at, HANDSHAKE)
            .map_err(|e| crate::error::unreached(at, &e, HANDSHAKE))?;
        let _ = s.set_nodelay(true);
        // A server whose machine vanishes is an error in seconds, not minutes.
        crate::mechanism::tcp::far_peer_bounds(&s)?;
        let said = |e: Error| Error::Peer(format!("ipcperf serve at {at}: {}", told(&e)));
        // What answers a connection there but sends no banner is not ipcperf
        // serve (or is one that hangs): no later case would fare better.
        let banner: ServerSays = read_frame(&mut s, MAX_FRAME, HANDSHAKE).map_err(|e| {
            let why = match e {
                Error::Timeout(_) => format!("within {} s", HANDSHAKE.as_secs()),
                e => format!("({})", told(&e)),
            };
            Error::Peer(format!(
                "{UNREACHED} {at}: the port answered but sent no ipcperf banner {why}"
            ))
        })?;
        let (nonce, wants, version) = match banner {
            ServerSays::Banner {
                ipcperf,
                protocol,
                nonce,
                token,
            } => {
                if protocol != PROTOCOL {
                    return Err(Error::Peer(format!(
                        "ipcperf serve at {at} is ipcperf {ipcperf} (control protocol {protocol}); \
                         this is ipcperf {} (protocol {PROTOCOL}): use the same version on both",
                        env!("CARGO_PKG_VERSION")
                    )));
                }
                (unhex(&nonce).unwrap_or_default(), token, ipcperf)
            }
            ServerSays::Busy => return Ok(None),
            other => return Err(said(Error::Peer(format!("unexpected {other:?}")))),
        };
        if wants && r.token.is_none() {
            return Err(Error::Peer(format!(
                "ipcperf serve at {at} wants a token: give it with --token-file"
            )));
        }
        let hello = ClientHello {
            ipcperf: env!("CARGO_PKG_VERSION").into(),
            protocol: PROTOCOL,
            proof: r.token.as_ref().map(|t| proof(t, &nonce)),
            run: r.run.clone(),
            over,
            pings: if over { 0 } else { PINGS },
        };
        write_frame(&mut s, &hello).map_err(said)?;
        let machine = match read_frame(&mut s, MAX_FRAME, HANDSHAKE).map_err(said)? {
            ServerSays::Welcome { machine } => *machine,
            // Told after the token was proven: the one run slot is taken.
            ServerSays::Busy => return Ok(None),
            ServerSays::Refused { why } => {
                return Err(Error::Peer(format!("ipcperf serve at {at} refused: {why}")))
            }
            other => return Err(said(Error::Peer(format!("unexpected {other:?}")))),
        };
        let mut rtt = u64::MAX;
        if !over {
            for _ in 0..PINGS {
                let t0 = ipcperf_sys::clock::now_ns();
                write_frame(&mut s, &()).map_err(said)?;
                read_frame::<()>(&mut s, 16, HANDSHAKE).map_err(said)?;
                rtt = rtt.min(ipcperf_sys::clock::now_ns() - t0);
            }
        }
        Ok(Some((s, (machine, version), rtt)))
    }
}

impl PeerHandle for RemotePeer {
    fn send(&mut self, m: ToPeer) -> Result<()> {
        write_frame(&mut self.s, &m)
    }

    fn recv(&mut self, timeout_ms: i32) -> Result<FromPeer> {
        // Waited in slices, each a look at whether the machine there went
        // silent: a vanished machine is told within its bound, not the kernel's.
        let deadline = Instant::now() + Duration::from_millis(timeout_ms.max(0) as u64);
        loop {
            if let Some(ms) = silent(&self.s, self.rtt_ns) {
                return Err(Error::Peer(format!(
                    "the control connection: the other machine stopped answering (nothing \
                     heard for {ms} ms, probed each second): {}",
                    crate::error::GONE
                )));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let slice = left.min(Duration::from_millis(100)).as_millis() as i32;
            if ipcperf_sys::fd::wait_ready(self.s.as_fd(), false, slice)? {
                break;
            }
            if left.is_zero() || Instant::now() >= deadline {
                return Err(Error::Timeout(format!(
                    "ipcperf serve at {} did not answer within {timeout_ms} ms",
                    self.addr
                )));
            }
        }
        read_frame(&mut self.s, MAX_FRAME, HANDSHAKE)
            .map_err(|e| Error::Peer(format!("ipcperf serve at {}: {}", self.addr, told(&e))))
    }

    fn finish(&mut self) -> Result<()> {
        let _ = self.send(ToPeer::Quit);
        // The server closes once its peer has ended.
        let deadline = Instant::now() + Duration::from_secs(2);
        let mut b = [0u8; 256];
        let _ = self.s.set_read_timeout(Some(Duration::from_millis(100)));
        while Instant::now() < deadline {
            match self.s.read(&mut b) {
                Ok(0) => return Ok(()),
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => return Ok(()),
            }
        }
        Err(Error::Timeout(format!(
            "ipcperf serve at {} did not end the run within 2 s of quit",
            self.addr
        )))
    }
}

/// What a server accepts of a client's setup: a mechanism that crosses machines
/// by connecting to an address, and that address the client's own.
pub fn check_setup(setup: &PeerSetup, client: IpAddr) -> Result<()> {
    let check = |h: &crate::mechanism::PeerHandoff| {
        // Nothing the client names may reach beyond the data socket: no
        // namespace to join or make, no directory.
        if h.opts.netns.is_some() || !h.opts.across.is_empty() || h.opts.dir.is_some() {
            return Err(Error::Refused(
                "ipcperf serve takes no namespaces or directories from a client".into(),
            ));
        }
        let to = match &h.addr {
            PeerAddr::Tcp(a) => Some(*a),
            PeerAddr::Udp { connect_to, .. } => *connect_to,
            _ => None,
        };
        match to {
            Some(a) if a.ip() == client && h.fds.is_empty() => Ok(()),
            Some(a) => Err(Error::Refused(format!(
                "the data would go to {a}, not to the client ({client})"
            ))),
            None => Err(Error::Refused(format!(
                "{} cannot cross machines: ipcperf serve measures tcp and udp",
                h.kind.name()
            ))),
        }
    };
    check(&setup.handoff)?;
    if let Some(b) = &setup.back {
        check(b)?;
    }
    if setup.sync.is_some() || !setup.more.is_empty() {
        return Err(Error::Refused(
            "ipcperf serve runs one pair's stream or round trips".into(),
        ));
    }
    Ok(())
}

/// The banner for a nonce.
pub fn banner(nonce: &[u8], token: bool) -> ServerSays {
    ServerSays::Banner {
        ipcperf: env!("CARGO_PKG_VERSION").into(),
        protocol: PROTOCOL,
        nonce: hex(nonce),
        token,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a server takes from a client: a data socket to the client's own
    /// address, nothing else.
    #[test]
    fn a_server_takes_only_a_data_socket_to_its_client() {
        use crate::mechanism::{MechOptions, MechanismKind, PeerHandoff};
        use crate::mode::protocol::PeerRole;
        let client: IpAddr = "10.0.0.2".parse().unwrap();
        let setup = |addr: PeerAddr, opts: MechOptions| {
            let end = PeerHandoff {
                kind: MechanismKind::Tcp,
                addr,
                opts,
                fds: Vec::new(),
            };
            PeerSetup::bare(PeerRole::Echo, end)
        };
        let to_client = PeerAddr::Tcp("10.0.0.2:4000".parse().unwrap());
        assert!(check_setup(&setup(to_client.clone(), MechOptions::default()), client).is_ok());
        let udp = PeerAddr::Udp {
            asker: false,
            connect_to: Some("10.0.0.2:4001".parse().unwrap()),
        };
        assert!(check_setup(&setup(udp, MechOptions::default()), client).is_ok());
        let elsewhere = PeerAddr::Tcp("10.0.0.9:4000".parse().unwrap());
        assert!(check_setup(&setup(elsewhere, MechOptions::default()), client).is_err());
        let unix = PeerAddr::Unix("/tmp/x".into());
        assert!(check_setup(&setup(unix, MechOptions::default()), client).is_err());
        for opts in [
            MechOptions {
                netns: Some("/run/netns/x".into()),
                ..MechOptions::default()
            },
            MechOptions {
                across: vec![crate::namespace::Namespace::Net],
                ..MechOptions::default()
            },
            MechOptions {
                dir: Some("/etc".into()),
                ..MechOptions::default()
            },
        ] {
            assert!(check_setup(&setup(to_client.clone(), opts), client).is_err());
        }
    }

    #[test]
    fn a_proof_holds_for_its_token_and_nonce_only() {
        let p = proof(b"secret", b"nonce-1");
        assert!(proves(b"secret", b"nonce-1", &p));
        assert!(!proves(b"secret", b"nonce-2", &p));
        assert!(!proves(b"other", b"nonce-1", &p));
        assert!(!proves(b"secret", b"nonce-1", "zz"));
        assert!(!proves(b"secret", b"nonce-1", ""));
        assert_eq!(unhex(&hex(&[0, 1, 254, 255])), Some(vec![0, 1, 254, 255]));
    }
}
