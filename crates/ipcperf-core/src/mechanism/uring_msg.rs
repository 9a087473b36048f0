//! io_uring MSG_RING between two threads' rings: each side has a ring of its
//! own, and a message is a note (a 32-bit result and 64-bit data) that one ring
//! posts into the other's completion queue without any file between them. A note
//! carries no payload, so the bytes go through memory both threads share: a few
//! slots per direction, the note naming the slot and its length, and a credit
//! note back when the slot is free again. Threads only: the rings and the memory
//! are handed over inside one process.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;

use ipcperf_sys::error::{Context, Errno};
use ipcperf_sys::shm::SharedMem;
use ipcperf_sys::uring::MsgRing;

use super::endpoint::WAIT_MS;
use super::{
    ByteStream, Link, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr, PeerHandoff,
    RoundTripShape,
};
use crate::error::{Error, Result};
use crate::kind::Mode;

/// Slots per direction: how many messages may be in flight before the writer
/// waits for a credit.
const SLOTS: usize = 4;
/// The largest slot; a longer write goes in several.
const MAX_SLOT: usize = 1 << 20;

/// What a note says (its data's upper half; the lower half is the slot).
const DATA: u64 = 1 << 32;
const CREDIT: u64 = 2 << 32;
const CLOSED: u64 = 3 << 32;

/// One side: its ring, the other ring's descriptor, the shared slots.
pub struct MsgEnd {
    ring: MsgRing,
    /// A descriptor of the other side's ring (ours to post to, open as long as we are).
    other: OwnedFd,
    mem: Arc<SharedMem>,
    slot: usize,
    /// Where this side's outgoing and incoming slots start in `mem`.
    out_at: usize,
    in_at: usize,
    credits: usize,
    next_out: usize,
    /// Data notes that arrived while this side waited for a credit (in order).
    early: std::collections::VecDeque<(usize, usize)>,
    /// The incoming message being read: slot, read so far, length.
    reading: Option<(usize, usize, usize)>,
    closed: bool,
}

impl std::fmt::Debug for MsgEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MsgEnd({:?}, slot {} B)", self.ring, self.slot)
    }
}

impl MsgEnd {
    #[cold]
    fn failed(&self, op: &'static str, e: Errno) -> Error {
        if e == Errno::ETIME {
            Error::Timeout(format!(
                "uring-msg-ring: no note from the other ring within {WAIT_MS} ms ({op})"
            ))
        } else {
            Error::io(op, "uring-msg-ring", e)
        }
    }

    /// Take the next note and file it: a credit, a data note, or the end.
    #[inline]
    fn take_note(&mut self) -> Result<()> {
        let (res, data) = self
            .ring
            .take(WAIT_MS)
            .map_err(|e| self.failed("wait", e))?;
        match data & !0xffff_ffff {
            CREDIT => self.credits += 1,
            DATA => self
                .early
                .push_back(((data & 0xffff_ffff) as usize, res.max(0) as usize)),
            CLOSED => self.closed = true,
            _ => {
                return Err(Error::Peer(format!(
                    "uring-msg-ring: a note it never sends ({data:#x})"
                )))
            }
        }
        Ok(())
    }

    #[inline]
    fn post(&mut self, res: i32, data: u64) -> Result<()> {
        self.ring
            .post(self.other.as_fd(), res, data)
            .map_err(|e| self.failed("post", e))
    }
}

impl ByteStream for MsgEnd {
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> Result<()> {
        for chunk in buf.chunks(self.slot) {
            while self.credits == 0 {
                if self.closed {
                    return Err(Error::Peer("uring-msg-ring: the other side closed".into()));
                }
                self.take_note()?;
            }
            let s = self.next_out;
            self.mem.write_bytes(self.out_at + s * self.slot, chunk);
            self.credits -= 1;
            self.next_out = (s + 1) % SLOTS;
            self.post(chunk.len() as i32, DATA | s as u64)?;
        }
        Ok(())
    }

    #[inline]
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        if self.reading.is_none() {
            while self.early.is_empty() {
                if self.closed {
                    return Ok(0);
                }
                self.take_note()?;
            }
            let (s, len) = self.early.pop_front().expect("not empty");
            if len > self.slot || s >= SLOTS {
                return Err(Error::Peer(format!(
                    "uring-msg-ring: a note names slot {s} of {len} B"
                )));
            }
            self.reading = Some((s, 0, len));
        }
        let (s, done, len) = self.reading.expect("set above");
        let n = (len - done).min(buf.len());
        self.mem
            .read_bytes(self.in_at + s * self.slot + done, &mut buf[..n]);
        if done + n == len {
            self.reading = None;
            self.post(0, CREDIT | s as u64)?;
        } else {
            self.reading = Some((s, done + n, len));
        }
        Ok(n)
    }
}

impl Drop for MsgEnd {
    fn drop(&mut self) {
        // The other side learns at once that no more notes will come.
        let _ = self.ring.post(self.other.as_fd(), 0, CLOSED);
    }
}

fn setup(opts: &MechOptions, block: usize) -> Result<Link> {
    let slot = block.clamp(1, MAX_SLOT);
    let mem = Arc::new(SharedMem::anonymous(2 * SLOTS * slot)?);
    let refused = |e: Errno| {
        Error::Refused(format!(
            "uring-msg-ring: this kernel refuses io_uring here ({e}; see kernel.io_uring_disabled)"
        ))
    };
    let a = MsgRing::new().map_err(refused)?;
    let b = MsgRing::new().map_err(refused)?;
    let end = |ring: MsgRing, other: OwnedFd, out_at: usize, in_at: usize| MsgEnd {
        ring,
        other,
        mem: mem.clone(),
        slot,
        out_at,
        in_at,
        credits: SLOTS,
        next_out: 0,
        early: std::collections::VecDeque::with_capacity(SLOTS + 1),
        reading: None,
        closed: false,
    };
    let (a_fd, b_fd) = (
        a.dup_fd().ctx("dup", &"io_uring")?,
        b.dup_fd().ctx("dup", &"io_uring")?,
    );
    let half = SLOTS * slot;
    let ours = end(a, b_fd, 0, half);
    let theirs = end(b, a_fd, half, 0);
    // The peer's end is kept too: its thread takes it by id.
    let (id_b, guard_b) = super::in_process::keep(theirs);
    let peer = PeerAddr::InProcess { id: id_b };
    let mut link = super::in_process::link(MechanismKind::UringMsgRing, opts, ours, peer, None);
    link.guards.push(Box::new(guard_b));
    Ok(link)
}

/// io_uring MSG_RING between two threads' rings.
pub struct UringMsgRing;

impl Mechanism for UringMsgRing {
    type End = MsgEnd;
    const POLLS: bool = false;

    const INFO: MechanismInfo = MechanismInfo {
        modes: &[Mode::Threads],
        library: Some(super::info::IO_URING),
        ..MechanismInfo::new(
            MechanismKind::UringMsgRing,
            "uring-msg-ring",
            "io_uring MSG_RING notes between two threads' rings; the bytes in shared slots",
        )
    };

    fn setup(opts: &MechOptions, block: usize) -> Result<Link> {
        setup(opts, block)
    }

    fn open(h: PeerHandoff, _timeout_ms: i32) -> Result<MsgEnd> {
        match h.addr {
            PeerAddr::InProcess { id } => super::in_process::take(id).ok_or_else(|| {
                Error::Peer(
                    "uring-msg-ring: its ends live in the process that made them (--mode threads)"
                        .into(),
                )
            }),
            other => Err(Error::Peer(format!("uring-msg-ring cannot open {other:?}"))),
        }
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::TwoWay)
    }

    fn wait_label(_opts: &MechOptions) -> String {
        "io_uring".into()
    }

    fn describe(_opts: &MechOptions, out: &mut Vec<(String, String)>) {
        out.push(("slots".into(), SLOTS.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(block: usize) -> (MsgEnd, MsgEnd, Link) {
        let mut link = setup(&MechOptions::default(), block).unwrap();
        let peer = UringMsgRing::open(link.take_peer().unwrap(), 1000).unwrap();
        let ours = super::super::open_local::<UringMsgRing>(&mut link, 1000).unwrap();
        (ours, peer, link)
    }

    /// Messages longer than a slot go in pieces, and more than the slots hold
    /// wait for credits: everything arrives, in order.
    #[test]
    fn bytes_arrive_whole_and_in_order_across_threads() {
        let (mut a, mut b, _link) = pair(1000);
        let data: Vec<u8> = (0..20_000u32).map(|i| (i * 7) as u8).collect();
        let expect = data.clone();
        let t = std::thread::spawn(move || {
            a.write_all(&data).unwrap();
            a
        });
        let mut got = Vec::new();
        let mut buf = [0u8; 333];
        while got.len() < expect.len() {
            let n = b.read_some(&mut buf).unwrap();
            assert!(n > 0);
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, expect);
        drop(t.join().unwrap());
        // The writer's end is gone: the reader sees the end at once.
        let t0 = std::time::Instant::now();
        assert_eq!(b.read_some(&mut buf).unwrap(), 0);
        assert!(t0.elapsed() < std::time::Duration::from_millis(500));
    }

    /// A writer whose reader is gone is an error once its slots are full, not a wait.
    #[test]
    fn a_writer_alone_fails_instead_of_waiting() {
        let (mut a, b, _link) = pair(64);
        drop(b);
        let t0 = std::time::Instant::now();
        let mut r = Ok(());
        for _ in 0..SLOTS + 1 {
            r = a.write_all(&[1u8; 64]);
            if r.is_err() {
                break;
            }
        }
        assert!(matches!(r, Err(Error::Peer(_))), "{r:?}");
        assert!(t0.elapsed() < std::time::Duration::from_millis(500));
    }

    /// Ends nobody opened go with their link; another process cannot open one.
    #[test]
    fn unopened_ends_go_with_the_link() {
        let mut link = setup(&MechOptions::default(), 64).unwrap();
        let h = link.take_peer().unwrap();
        let PeerAddr::InProcess { id } = h.addr else {
            panic!("{:?}", h.addr)
        };
        assert!(super::super::in_process::holds(id));
        drop(link);
        assert!(!super::super::in_process::holds(id));
        assert!(matches!(UringMsgRing::open(h, 100), Err(Error::Peer(_))));
    }
}
