//! Unix-domain datagram and sequenced-packet sockets: an anonymous socketpair(2)
//! (no name to leave behind), one end handed to the peer. Both keep message
//! boundaries and both are two-way; a connected Unix datagram sender blocks when
//! the receiver's queue is full, so nothing is lost.

use std::os::fd::AsFd;

use nix::sys::socket::{recv, send, socketpair, AddressFamily, MsgFlags, SockFlag, SockType};

use super::{
    Link, LocalEnd, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr, PeerHandoff,
    RoundTripShape,
};
use crate::error::{Error, Result};
use ipcperf_sys::error::{Context, Errno};

fn sock_type(kind: MechanismKind) -> SockType {
    if kind == MechanismKind::UnixSeqpacket {
        SockType::SeqPacket
    } else {
        SockType::Datagram
    }
}

fn setup(kind: MechanismKind, opts: &MechOptions, block: usize) -> Result<Link> {
    let (a, b) = socketpair(
        AddressFamily::Unix,
        sock_type(kind),
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .ctx("socketpair", &kind.name())?;
    super::tcp::set_buffers(&a, opts)?;
    super::tcp::set_buffers(&b, opts)?;
    // The limit, found by trying: one message of `block` bytes, without waiting.
    let probe = vec![0u8; block];
    match send(
        std::os::fd::AsRawFd::as_raw_fd(&a),
        &probe,
        MsgFlags::MSG_DONTWAIT,
    ) {
        Ok(_) => {
            let mut sink = vec![0u8; block];
            recv(
                std::os::fd::AsRawFd::as_raw_fd(&b),
                &mut sink,
                MsgFlags::MSG_DONTWAIT,
            )
            .ctx("recv", &kind.name())?;
        }
        Err(Errno::EMSGSIZE) | Err(Errno::ENOBUFS) | Err(Errno::EAGAIN) => {
            let sndbuf =
                nix::sys::socket::getsockopt(&a, nix::sys::socket::sockopt::SndBuf).unwrap_or(0);
            return Err(Error::Refused(format!(
                "a {block}-byte message is larger than one {} message may be here: \
                 SO_SNDBUF is {sndbuf} bytes (default net.core.wmem_default; --sndbuf raises it \
                 up to net.core.wmem_max)",
                kind.name()
            )));
        }
        Err(e) => return Err(Error::io("send", kind.name(), e)),
    }
    // A blocked recv on a datagram socket does not see its peer close: when the
    // peer process dies, the watchdog shuts our socket down, which wakes it (read 0).
    let ours = a.as_fd().try_clone_to_owned().ctx("dup", &kind.name())?;
    let peer = PeerHandoff {
        kind,
        addr: PeerAddr::Fd,
        opts: opts.clone(),
        fds: vec![b],
    };
    let mut link = Link::new(kind, opts, Some(LocalEnd::Ready(a)), Some(peer), None);
    if kind == MechanismKind::UnixDgram {
        link.on_peer_death.push(Box::new(move || {
            let _ = nix::sys::socket::shutdown(
                std::os::fd::AsRawFd::as_raw_fd(&ours),
                nix::sys::socket::Shutdown::Both,
            );
        }));
    }
    Ok(link)
}

/// A Unix-domain datagram socketpair.
pub struct UnixDgram;

impl Mechanism for UnixDgram {
    super::fd_stream_ends!();
    const WAITS: &'static [super::wait::Wait] = super::wait::Wait::DESCRIPTOR;

    const INFO: MechanismInfo = MechanismInfo {
        names: "none (socketpair)",
        ..MechanismInfo::new(
            MechanismKind::UnixDgram,
            "unix-dgram",
            "Unix-domain datagram socketpair (message boundaries kept, no loss)",
        )
    };

    fn setup(opts: &MechOptions, block: usize) -> Result<Link> {
        setup(MechanismKind::UnixDgram, opts, block)
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::TwoWay)
    }

    fn describe(opts: &MechOptions, out: &mut Vec<(String, String)>) {
        opts.describe_buffers(out);
    }
}

/// A Unix-domain sequenced-packet socketpair.
pub struct UnixSeqpacket;

impl Mechanism for UnixSeqpacket {
    super::fd_stream_ends!();
    const WAITS: &'static [super::wait::Wait] = super::wait::Wait::DESCRIPTOR;

    const INFO: MechanismInfo = MechanismInfo {
        names: "none (socketpair)",
        ..MechanismInfo::new(
            MechanismKind::UnixSeqpacket,
            "unix-seqpacket",
            "Unix-domain SOCK_SEQPACKET socketpair",
        )
    };

    fn setup(opts: &MechOptions, block: usize) -> Result<Link> {
        setup(MechanismKind::UnixSeqpacket, opts, block)
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::TwoWay)
    }

    fn describe(opts: &MechOptions, out: &mut Vec<(String, String)>) {
        opts.describe_buffers(out);
    }
}
