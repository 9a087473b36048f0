//! Unix-domain stream socket: the owner listens on a path in a private directory,
//! the peer connects to it.

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;

use super::{Link, LocalEnd, MechOptions, MechanismKind, PeerAddr, PeerHandoff};
use crate::error::{Error, Result};
use ipcperf_sys::error::Context;
use ipcperf_sys::names::PrivateDir;

pub(super) fn setup(opts: &MechOptions) -> Result<Link> {
    let dir = PrivateDir::create(&opts.base_dir(), "unix")?;
    let path = dir.join("sock");
    let l = UnixListener::bind(&path).ctx("bind", &path.display())?;
    let peer = PeerHandoff {
        kind: MechanismKind::Unix,
        addr: PeerAddr::Unix(path),
        opts: opts.clone(),
        fds: Vec::new(),
    };
    Ok(Link::new(
        MechanismKind::Unix,
        opts,
        Some(LocalEnd::UnixListener(l)),
        Some(peer),
        Some(dir),
    ))
}

pub(super) fn accept(l: &UnixListener, opts: &MechOptions, timeout_ms: i32) -> Result<OwnedFd> {
    if !ipcperf_sys::fd::wait_ready(l.as_fd(), false, timeout_ms)? {
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
