//! Cross-memory attach (`cma`): the receiver copies the sender's block straight
//! out of the sender's memory with process_vm_readv(2) — one copy, no kernel
//! buffer. Two pipes carry the notifications: the sender writes a 24-byte note
//! (its pid, the block's address and length) and waits for a one-byte
//! acknowledgement before it may touch its buffer again; the receiver reads the
//! note, copies, and acknowledges. A dead side shows as end-of-file or a broken
//! pipe on the notification pipes, so no wait is unbounded.

use std::os::fd::{AsFd, OwnedFd};

use super::info::TWO_SIDES;
use super::{
    Link, LocalEnd, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr, PeerHandoff,
    RoundTripShape,
};
use crate::error::{Error, Result};
use crate::mechanism::ByteStream;
use ipcperf_sys::error::Errno;
use ipcperf_sys::fd;

const NOTE: usize = 24;

fn setup(opts: &MechOptions) -> Result<Link> {
    let (note_r, note_w) = fd::pipe()?;
    let (ack_r, ack_w) = fd::pipe()?;
    let end = |fds, sender| PeerHandoff {
        kind: MechanismKind::Cma,
        addr: PeerAddr::Cma { sender },
        opts: opts.clone(),
        fds,
    };
    let mut link = Link::new(
        MechanismKind::Cma,
        opts,
        Some(LocalEnd::Handoff(Box::new(end(vec![note_w, ack_r], true)))),
        Some(end(vec![note_r, ack_w], false)),
        None,
    );
    link.facts.push(("notify".into(), "pipe".into()));
    Ok(link)
}

/// One side of a cma link: the sender holds (note writer, ack reader), the
/// receiver (note reader, ack writer).
#[derive(Debug)]
pub struct CmaEnd {
    note: OwnedFd,
    ack: OwnedFd,
    sender: bool,
    pid: u32,
}

impl CmaEnd {
    pub fn new(mut fds: Vec<OwnedFd>, sender: bool) -> Result<CmaEnd> {
        if fds.len() != 2 {
            return Err(Error::Peer("cma handoff needs two descriptors".into()));
        }
        let ack = fds.pop().expect("two");
        let note = fds.pop().expect("two");
        Ok(CmaEnd {
            note,
            ack,
            sender,
            pid: std::process::id(),
        })
    }

    #[inline]
    fn write_exact(fd: &OwnedFd, mut b: &[u8]) -> Result<()> {
        while !b.is_empty() {
            match fd::write(fd.as_fd(), b) {
                Ok(n) => b = &b[n..],
                Err(e) => return Err(Error::io("write", "cma notification pipe", e)),
            }
        }
        Ok(())
    }

    /// Read exactly `b.len()` bytes; false at end-of-file before the first byte.
    #[inline]
    fn read_exact(fd: &OwnedFd, b: &mut [u8]) -> Result<bool> {
        let mut got = 0;
        while got < b.len() {
            match fd::read(fd.as_fd(), &mut b[got..]) {
                Ok(0) if got == 0 => return Ok(false),
                Ok(0) => return Err(Error::Peer("cma: a notification was cut short".into())),
                Ok(n) => got += n,
                Err(e) => return Err(Error::io("read", "cma notification pipe", e)),
            }
        }
        Ok(true)
    }
}

impl ByteStream for CmaEnd {
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> Result<()> {
        if !self.sender {
            return Err(Error::Invalid("send on the cma receiver".into()));
        }
        let mut note = [0u8; NOTE];
        note[..8].copy_from_slice(&(self.pid as u64).to_le_bytes());
        note[8..16].copy_from_slice(&(buf.as_ptr() as u64).to_le_bytes());
        note[16..].copy_from_slice(&(buf.len() as u64).to_le_bytes());
        Self::write_exact(&self.note, &note)?;
        let mut a = [0u8; 1];
        if !Self::read_exact(&self.ack, &mut a)? {
            return Err(Error::Peer(
                "cma: the receiver closed before acknowledging".into(),
            ));
        }
        Ok(())
    }

    #[inline]
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        if self.sender {
            return Err(Error::Invalid("receive on the cma sender".into()));
        }
        let mut note = [0u8; NOTE];
        if !Self::read_exact(&self.note, &mut note)? {
            return Ok(0);
        }
        let word = |i: usize| u64::from_le_bytes(note[i..i + 8].try_into().expect("8 bytes"));
        let (pid, addr, len) = (word(0) as i32, word(8) as usize, word(16) as usize);
        if len > buf.len() {
            return Err(Error::Invalid(format!(
                "cma: a {len}-byte block for a {}-byte buffer",
                buf.len()
            )));
        }
        let n = match ipcperf_sys::cma::read_from(pid, addr, &mut buf[..len]) {
            Ok(n) => n,
            Err(Errno::EPERM) => {
                return Err(Error::Refused(format!(
                    "process_vm_readv of process {pid} is not permitted here (ptrace access: \
                     same user and kernel.yama.ptrace_scope = 0 needed)"
                )))
            }
            Err(Errno::ESRCH) => return Err(Error::Peer(format!("cma: process {pid} is gone"))),
            Err(e) => return Err(Error::io("process_vm_readv", "cma", e)),
        };
        Self::write_exact(&self.ack, &[1])?;
        Ok(n)
    }
}

/// Cross-memory attach, notified over pipes.
pub struct Cma;

impl Mechanism for Cma {
    type End = CmaEnd;

    const INFO: MechanismInfo = MechanismInfo {
        modes: TWO_SIDES,
        ..MechanismInfo::new(
            MechanismKind::Cma,
            "cma",
            "cross-memory attach: the receiver copies with process_vm_readv; pipes notify",
        )
    };

    fn setup(opts: &MechOptions, _block: usize) -> Result<Link> {
        setup(opts)
    }

    fn open(mut h: PeerHandoff, _timeout_ms: i32) -> Result<CmaEnd> {
        let PeerAddr::Cma { sender } = h.addr else {
            return Err(Error::Peer(format!("cma cannot open {:?}", h.addr)));
        };
        CmaEnd::new(std::mem::take(&mut h.fds), sender)
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::OneWayPair)
    }
}
