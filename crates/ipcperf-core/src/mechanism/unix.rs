//! Unix-domain stream socket: the owner listens on a path in a private directory,
//! the peer connects to it.

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;

use super::{
    Link, LocalEnd, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr, PeerHandoff,
    RoundTripShape,
};
use crate::error::{Error, Result};
use ipcperf_sys::error::Context;
use ipcperf_sys::names::PrivateDir;

/// The socket as `kind` (unix, or a mechanism that drives the same socket).
pub(super) fn setup_as(kind: MechanismKind, opts: &MechOptions) -> Result<Link> {
    let dir = PrivateDir::create(&opts.base_dir(), "unix")?;
    let path = dir.join("sock");
    let l = UnixListener::bind(&path).ctx("bind", &path.display())?;
    let peer = PeerHandoff {
        kind,
        addr: PeerAddr::Unix(path),
        opts: opts.clone(),
        fds: Vec::new(),
    };
    Ok(Link::new(
        kind,
        opts,
        Some(LocalEnd::UnixListener(l)),
        Some(peer),
        Some(dir),
    ))
}

pub(super) fn accept(l: &UnixListener, opts: &MechOptions, timeout_ms: i32) -> Result<OwnedFd> {
    if !super::other_side::wait_ready(l.as_fd(), false, timeout_ms, "it connected")? {
        return Err(Error::Timeout(format!(
            "no peer connected to the unix socket within {timeout_ms} ms"
        )));
    }
    let (s, _) = l.accept().ctx("accept", &"unix socket")?;
    let fd = OwnedFd::from(s);
    super::tcp::set_buffers(&fd, opts)?;
    Ok(fd)
}

pub(super) fn connect(path: &Path, opts: &MechOptions) -> Result<OwnedFd> {
    let s = UnixStream::connect(path).ctx("connect", &path.display())?;
    let fd = OwnedFd::from(s);
    super::tcp::set_buffers(&fd, opts)?;
    Ok(fd)
}

/// The Unix-domain stream socket on a path.
pub struct Unix;

impl Mechanism for Unix {
    super::fd_stream_ends!();
    const WAITS: &'static [super::wait::Wait] = super::wait::Wait::DESCRIPTOR;

    const INFO: MechanismInfo = MechanismInfo {
        names: "socket path",
        in_dir: true,
        ..MechanismInfo::new(
            MechanismKind::Unix,
            "unix",
            "Unix-domain stream socket on a path",
        )
    };

    fn setup(opts: &MechOptions, _block: usize) -> Result<Link> {
        setup_as(MechanismKind::Unix, opts)
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::TwoWay)
    }

    fn describe(opts: &MechOptions, out: &mut Vec<(String, String)>) {
        opts.describe_buffers(out);
    }

    fn single_mode_hint() -> String {
        "; --sndbuf/--rcvbuf raise it, or use --mode threads".into()
    }
}
