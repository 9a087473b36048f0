//! Passing file descriptors between processes over a Unix socket (SCM_RIGHTS).
//!
//! One message carries at most [`MAX_FDS`] descriptors (the kernel's SCM_MAX_FD is 253)
//! and [`CHUNK`] bytes (a seqpacket socket refuses a record larger than its send
//! buffer), so a handoff with more goes as several messages: the first starts with
//! the total number of descriptors and of bytes, then as many of each as fit; each
//! further message carries the next bytes and descriptors, until both are all sent.

use std::io::{IoSlice, IoSliceMut};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;

use nix::cmsg_space;
use nix::sys::socket::{recvmsg, sendmsg, ControlMessage, ControlMessageOwned, MsgFlags};

use crate::error::{Context, Errno, SysError, SysResult};

/// The most descriptors one message carries.
pub const MAX_FDS: usize = 128;

/// The most bytes of data one message carries.
pub const CHUNK: usize = 32 * 1024;

/// The most descriptors one handoff carries in all.
pub const MAX_TOTAL_FDS: usize = 4096;

/// The most bytes one handoff carries in all.
pub const MAX_TOTAL_BYTES: usize = 16 << 20;

const PREFIX: usize = 8;

fn proto(what: &str) -> SysError {
    SysError::new("recvmsg", format!("control socket ({what})"), Errno::EPROTO)
}

fn send_one(sock: &UnixStream, data: &[&[u8]], fds: &[BorrowedFd<'_>]) -> SysResult<()> {
    let raw: Vec<RawFd> = fds.iter().map(|f| f.as_raw_fd()).collect();
    let iov: Vec<IoSlice> = data.iter().map(|d| IoSlice::new(d)).collect();
    let want: usize = data.iter().map(|d| d.len()).sum();
    let cmsg = [ControlMessage::ScmRights(&raw)];
    let cmsgs: &[ControlMessage] = if raw.is_empty() { &[] } else { &cmsg };
    let n = sendmsg::<()>(sock.as_raw_fd(), &iov, cmsgs, MsgFlags::empty(), None)
        .ctx("sendmsg(SCM_RIGHTS)", &"control socket")?;
    if n != want {
        return Err(SysError::new(
            "sendmsg",
            "control socket (short)",
            Errno::EMSGSIZE,
        ));
    }
    Ok(())
}

/// Send `data` (at least one byte) with `fds` attached, in as many messages as they
/// need. [`recv_with_fds`] reads it back.
pub fn send_with_fds(sock: &UnixStream, data: &[u8], fds: &[BorrowedFd<'_>]) -> SysResult<()> {
    if data.is_empty() || fds.len() > MAX_TOTAL_FDS || data.len() > MAX_TOTAL_BYTES {
        return Err(SysError::new(
            "sendmsg",
            "control socket (an empty handoff, or one too large)",
            Errno::EINVAL,
        ));
    }
    let mut head = [0u8; PREFIX];
    head[..4].copy_from_slice(&(fds.len() as u32).to_le_bytes());
    head[4..].copy_from_slice(&(data.len() as u32).to_le_bytes());
    let (mut d, mut f) = (data, fds);
    let mut first = true;
    while first || !d.is_empty() || !f.is_empty() {
        let room = if first { CHUNK - PREFIX } else { CHUNK };
        let (dn, fnn) = (d.len().min(room), f.len().min(MAX_FDS));
        // Every message carries at least one byte.
        let pad = [0u8; 1];
        let body: &[u8] = if dn == 0 && !first { &pad } else { &d[..dn] };
        if first {
            send_one(sock, &[&head, body], &f[..fnn])?;
        } else {
            send_one(sock, &[body], &f[..fnn])?;
        }
        d = &d[dn..];
        f = &f[fnn..];
        first = false;
    }
    Ok(())
}

fn recv_one(sock: &UnixStream, buf: &mut [u8], fds: &mut Vec<OwnedFd>) -> SysResult<usize> {
    let mut space = cmsg_space!([RawFd; MAX_FDS]);
    let mut iov = [IoSliceMut::new(buf)];
    let msg = recvmsg::<()>(
        sock.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )
    .ctx("recvmsg(SCM_RIGHTS)", &"control socket")?;
    for c in msg.cmsgs().ctx("recvmsg cmsgs", &"control socket")? {
        if let ControlMessageOwned::ScmRights(raw) = c {
            for r in raw {
                // SAFETY: the kernel just installed `r` in our table for this message; we
                // are its only owner.
                fds.push(unsafe { OwnedFd::from_raw_fd(r) });
            }
        }
    }
    if msg
        .flags
        .intersects(MsgFlags::MSG_CTRUNC | MsgFlags::MSG_TRUNC)
    {
        return Err(proto("a message cut short"));
    }
    Ok(msg.bytes)
}

/// Receive one handoff sent by [`send_with_fds`]: its data (empty at end of file)
/// and every descriptor it carried, in order.
pub fn recv_with_fds(sock: &UnixStream) -> SysResult<(Vec<u8>, Vec<OwnedFd>)> {
    let mut fds = Vec::new();
    let mut buf = vec![0u8; CHUNK];
    let n = recv_one(sock, &mut buf, &mut fds)?;
    if n == 0 {
        return Ok((Vec::new(), fds));
    }
    if n < PREFIX {
        return Err(proto("no handoff header"));
    }
    let total_fds = u32::from_le_bytes(buf[..4].try_into().expect("4 bytes")) as usize;
    let total = u32::from_le_bytes(buf[4..8].try_into().expect("4 bytes")) as usize;
    if total_fds > MAX_TOTAL_FDS || total > MAX_TOTAL_BYTES || total == 0 {
        return Err(proto("handoff header"));
    }
    let mut data = Vec::with_capacity(total);
    data.extend_from_slice(&buf[PREFIX..n]);
    while data.len() < total || fds.len() < total_fds {
        if data.len() > total || fds.len() > total_fds {
            break;
        }
        let m = recv_one(sock, &mut buf, &mut fds)?;
        if m == 0 {
            return Err(proto("the handoff ended early"));
        }
        if data.len() < total {
            data.extend_from_slice(&buf[..m]);
        }
    }
    if data.len() != total || fds.len() != total_fds {
        return Err(proto("handoff lengths"));
    }
    Ok((data, fds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    /// A seqpacket pair, as the peer's control socket is.
    fn seqpacket() -> (UnixStream, UnixStream) {
        use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
        let (a, b) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .unwrap();
        (UnixStream::from(a), UnixStream::from(b))
    }

    #[test]
    fn many_descriptors_cross_in_order() {
        let (a, b) = seqpacket();
        // 300 descriptors: three messages; each a distinct pipe end we can identify.
        let pipes: Vec<_> = (0..150).map(|_| nix::unistd::pipe().unwrap()).collect();
        let mut fds: Vec<BorrowedFd> = Vec::new();
        for (r, w) in &pipes {
            fds.push(r.as_fd());
            fds.push(w.as_fd());
        }
        // 100 KB of data too: four messages' worth.
        let big: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let t = std::thread::spawn(move || recv_with_fds(&b));
        send_with_fds(&a, &big, &fds).unwrap();
        let (data, got) = t.join().unwrap().unwrap();
        assert_eq!(data, big);
        assert_eq!(got.len(), 300);
        // Write through each received write end; read from our own read end.
        for (i, (r, _)) in pipes.iter().enumerate() {
            let w = &got[2 * i + 1];
            nix::unistd::write(w, &[i as u8]).unwrap();
            let mut one = [0u8; 1];
            nix::unistd::read(r, &mut one).unwrap();
            assert_eq!(one[0], i as u8);
        }
    }

    #[test]
    fn no_descriptors_and_end_of_file() {
        let (a, b) = seqpacket();
        send_with_fds(&a, b"x", &[]).unwrap();
        let (d, f) = recv_with_fds(&b).unwrap();
        assert_eq!((&d[..], f.len()), (&b"x"[..], 0));
        drop(a);
        assert!(recv_with_fds(&b).unwrap().0.is_empty());
        assert!(send_with_fds(&b, b"", &[]).is_err());
    }
}
