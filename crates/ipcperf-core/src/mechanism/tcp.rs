//! TCP over loopback (127.0.0.1, or ::1 with --ipv6). Buffer sizes are set before
//! listen/connect so the window scale matches; TCP_NODELAY after.

use std::net::{SocketAddr, TcpListener};
use std::os::fd::{AsFd, OwnedFd};

use nix::sys::socket::{
    bind, connect as nix_connect, listen, setsockopt, socket, sockopt, AddressFamily, Backlog,
    SockFlag, SockType, SockaddrStorage,
};

use super::{
    Link, LocalEnd, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr, PeerHandoff,
    RoundTripShape,
};
use crate::error::{Error, Result};
use ipcperf_sys::error::Context;

/// The connection as `kind` (tcp, or a mechanism that drives the same socket).
pub(super) fn setup_as(kind: MechanismKind, opts: &MechOptions) -> Result<Link> {
    // Across a network namespace: a namespace of its own joined by a veth pair,
    // made now, which the peer joins; we listen on our end's address.
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
    let addr: SocketAddr = match &veth {
        Some(v) => SocketAddr::new(v.our_ip.into(), 0),
        None if opts.bind_ip.is_some() => SocketAddr::new(opts.bind_ip.expect("checked"), 0),
        None if opts.ipv6 => "[::1]:0".parse().unwrap(),
        None => "127.0.0.1:0".parse().unwrap(),
    };
    let fd = new_socket(&addr, opts)?;
    setsockopt(&fd, sockopt::ReuseAddr, &true).ctx("setsockopt(SO_REUSEADDR)", &addr)?;
    bind(
        std::os::fd::AsRawFd::as_raw_fd(&fd),
        &SockaddrStorage::from(addr),
    )
    .ctx("bind", &addr)?;
    listen(&fd, Backlog::new(8).unwrap()).ctx("listen", &addr)?;
    let l = TcpListener::from(fd);
    let local_addr = l.local_addr().ctx("getsockname", &addr)?;
    let mut peer_opts = opts.clone();
    peer_opts.netns = veth.as_ref().map(|v| v.path());
    let peer = PeerHandoff {
        kind,
        addr: PeerAddr::Tcp(local_addr),
        opts: peer_opts,
        fds: Vec::new(),
    };
    let mut link = Link::new(kind, opts, Some(LocalEnd::TcpListener(l)), Some(peer), None);
    if let Some(v) = veth {
        link.facts.push(v.path_fact());
        link.guards.push(Box::new(v));
    }
    Ok(link)
}

fn new_socket(addr: &SocketAddr, opts: &MechOptions) -> Result<OwnedFd> {
    let fam = if addr.is_ipv6() {
        AddressFamily::Inet6
    } else {
        AddressFamily::Inet
    };
    let fd = socket(fam, SockType::Stream, SockFlag::SOCK_CLOEXEC, None).ctx("socket", &"tcp")?;
    set_buffers(&fd, opts)?;
    Ok(fd)
}

/// SO_SNDBUF / SO_RCVBUF as asked (the kernel doubles the figure for its bookkeeping).
pub(super) fn set_buffers(fd: &OwnedFd, opts: &MechOptions) -> Result<()> {
    if let Some(n) = opts.sndbuf {
        setsockopt(fd, sockopt::SndBuf, &n).ctx("setsockopt(SO_SNDBUF)", &n)?;
    }
    if let Some(n) = opts.rcvbuf {
        setsockopt(fd, sockopt::RcvBuf, &n).ctx("setsockopt(SO_RCVBUF)", &n)?;
    }
    Ok(())
}

fn set_conn_opts(fd: &OwnedFd, opts: &MechOptions) -> Result<()> {
    if opts.nodelay {
        setsockopt(fd, sockopt::TcpNoDelay, &true).ctx("setsockopt(TCP_NODELAY)", &"tcp")?;
    }
    if opts.bind_ip.is_some() {
        far_peer_bounds(fd)?;
    }
    Ok(())
}

/// How long data may stay unacknowledged on a connection to another machine
/// before the kernel gives it up (TCP_USER_TIMEOUT), in ms.
pub const FAR_UNACKED_MS: u32 = 1_500;

/// A connection to another machine (`--peer`) ends when that machine does: a
/// host that vanishes (powered off, unplugged, its link down) sends no reset,
/// and a write into a full send buffer, or a read of an answer that never
/// comes, would wait for TCP's own give-up, minutes away. Data unacknowledged
/// for [`FAR_UNACKED_MS`] ends the connection (ETIMEDOUT); an idle one is probed
/// every second, its silence bounded the same way. The control connection of
/// `--peer` and `ipcperf serve` is bounded so too.
pub fn far_peer_bounds(fd: &impl std::os::fd::AsFd) -> Result<()> {
    setsockopt(fd, sockopt::TcpUserTimeout, &FAR_UNACKED_MS)
        .ctx("setsockopt(TCP_USER_TIMEOUT)", &"tcp")?;
    setsockopt(fd, sockopt::KeepAlive, &true).ctx("setsockopt(SO_KEEPALIVE)", &"tcp")?;
    let idle = FAR_PROBE_MS / 1000;
    setsockopt(fd, sockopt::TcpKeepIdle, &idle).ctx("setsockopt(TCP_KEEPIDLE)", &"tcp")?;
    setsockopt(fd, sockopt::TcpKeepInterval, &idle).ctx("setsockopt(TCP_KEEPINTVL)", &"tcp")?;
    Ok(())
}

/// How often [`far_peer_bounds`] probes an idle connection, in ms (whole seconds).
pub const FAR_PROBE_MS: u32 = 1_000;

/// How long a connection under [`far_peer_bounds`] may hear nothing from the
/// other machine, its probes unanswered, before that machine counts as gone,
/// in ms: a probe's interval, then half a second or four of the path's round
/// trips (`rtt_ns`), whichever is longer, for its answer. The kernel's own
/// verdict on an idle connection comes only at the probe after next (up to 2 s
/// after the machine vanished); this one, within [`FAR_UNACKED_MS`] of it on
/// a near path, as for unacknowledged data.
pub fn far_silence_bound_ms(rtt_ns: u64) -> u32 {
    let answer = (rtt_ns.saturating_mul(4) / 1_000_000).clamp(500, 60_000) as u32;
    FAR_PROBE_MS + answer
}

pub(super) fn accept(l: &TcpListener, opts: &MechOptions, timeout_ms: i32) -> Result<OwnedFd> {
    if !super::other_side::wait_ready(l.as_fd(), false, timeout_ms, "it connected")? {
        return Err(Error::Timeout(format!(
            "no peer connected over tcp within {timeout_ms} ms"
        )));
    }
    let (s, _) = l.accept().ctx("accept", &"tcp")?;
    let fd = OwnedFd::from(s);
    set_conn_opts(&fd, opts)?;
    Ok(fd)
}

pub(super) fn connect(addr: SocketAddr, opts: &MechOptions, _timeout_ms: i32) -> Result<OwnedFd> {
    // Loopback with a listener already bound: connect completes at once.
    let fd = new_socket(&addr, opts)?;
    nix_connect(
        std::os::fd::AsRawFd::as_raw_fd(&fd),
        &SockaddrStorage::from(addr),
    )
    .ctx("connect", &addr)?;
    set_conn_opts(&fd, opts)?;
    Ok(fd)
}

/// TCP over loopback.
pub struct Tcp;

impl Mechanism for Tcp {
    super::fd_stream_ends!();
    const WAITS: &'static [super::wait::Wait] = super::wait::Wait::DESCRIPTOR;

    const INFO: MechanismInfo = MechanismInfo {
        names: "none (ephemeral port)",
        ..MechanismInfo::new(
            MechanismKind::Tcp,
            "tcp",
            "TCP over loopback (--ipv6, --nodelay, --sndbuf, --rcvbuf, --nonblocking)",
        )
    };

    fn setup(opts: &MechOptions, _block: usize) -> Result<Link> {
        setup_as(MechanismKind::Tcp, opts)
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::TwoWay)
    }

    fn describe(opts: &MechOptions, out: &mut Vec<(String, String)>) {
        describe(opts, out);
    }

    fn single_mode_hint() -> String {
        "; --sndbuf/--rcvbuf raise it, or use --mode threads".into()
    }
}

/// TCP's options for the record (tcp, and what drives the same socket).
pub(super) fn describe(opts: &MechOptions, out: &mut Vec<(String, String)>) {
    out.push(("ip".into(), if opts.ipv6 { "v6" } else { "v4" }.into()));
    if opts.nodelay {
        out.push(("nodelay".into(), "true".into()));
    }
    opts.describe_buffers(out);
}
