//! Passing file descriptors between processes over a Unix socket (SCM_RIGHTS).

use std::io::{IoSlice, IoSliceMut};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;

use nix::cmsg_space;
use nix::sys::socket::{recvmsg, sendmsg, ControlMessage, ControlMessageOwned, MsgFlags};

use crate::error::{Context, Errno, SysError, SysResult};

/// The most descriptors one message carries.
pub const MAX_FDS: usize = 8;

/// Send `data` (at least one byte) with `fds` attached.
pub fn send_with_fds(sock: &UnixStream, data: &[u8], fds: &[BorrowedFd<'_>]) -> SysResult<()> {
    assert!(!data.is_empty() && fds.len() <= MAX_FDS);
    let raw: Vec<RawFd> = fds.iter().map(|f| f.as_raw_fd()).collect();
    let iov = [IoSlice::new(data)];
    let cmsg = [ControlMessage::ScmRights(&raw)];
    let cmsgs: &[ControlMessage] = if raw.is_empty() { &[] } else { &cmsg };
    let n = sendmsg::<()>(sock.as_raw_fd(), &iov, cmsgs, MsgFlags::empty(), None)
        .ctx("sendmsg(SCM_RIGHTS)", &"control socket")?;
    if n != data.len() {
        return Err(SysError::new(
            "sendmsg",
            "control socket (short)",
            Errno::EMSGSIZE,
        ));
    }
    Ok(())
}

/// Receive one message into `buf`; returns its length and the descriptors it carried.
pub fn recv_with_fds(sock: &UnixStream, buf: &mut [u8]) -> SysResult<(usize, Vec<OwnedFd>)> {
    let mut space = cmsg_space!([RawFd; MAX_FDS]);
    let mut iov = [IoSliceMut::new(buf)];
    let msg = recvmsg::<()>(
        sock.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )
    .ctx("recvmsg(SCM_RIGHTS)", &"control socket")?;
    let mut fds = Vec::new();
    for c in msg.cmsgs().ctx("recvmsg cmsgs", &"control socket")? {
        if let ControlMessageOwned::ScmRights(raw) = c {
            for r in raw {
                // SAFETY: the kernel just installed `r` in our table for this message; we
                // are its only owner.
                fds.push(unsafe { OwnedFd::from_raw_fd(r) });
            }
        }
    }
    Ok((msg.bytes, fds))
}
