//! `eventfd`: a wake-up carrying an 8-byte counter (round trips only). One eventfd
//! per direction, in counter mode and blocking: the sender adds to the counter with
//! write(2), the receiver takes it (and resets it) with read(2).
//!
//! A message is exactly 8 bytes, the counter's width. A write of 0 wakes no one
//! and the counter stops at 2^64-2, so each message travels as `(v ^ K) + 1` (K a
//! fixed constant, so the payloads ipcperf sends — zeros, repeated bytes, the
//! verify pattern — all fit); the three values that cannot are refused when sent.
//! The largest counter, 2^64-2, is the hang-up: an end writes it when dropped and
//! the watchdog writes it when the peer dies, so a blocked read never hangs.

use std::os::fd::AsFd;

use ipcperf_sys::eventfd::Eventfd;

use super::info::TWO_SIDES;
use super::{
    Link, LocalEnd, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr, PeerHandoff,
    RoundTripShape,
};
use crate::error::{Error, Result};
use crate::mechanism::ByteStream;

const K: u64 = 0x0123_4567_89ab_cdef;
const HANGUP: u64 = u64::MAX - 1;

pub const MESSAGE: usize = 8;

/// Why eventfd cannot carry a stream.
fn refuse_stream() -> String {
    "eventfd carries a wake-up with an 8-byte counter, not a byte stream \
     (consecutive writes add up): measure it with `ipcperf latency eventfd --sizes 8`"
        .into()
}

/// Why a message of `block` bytes cannot go (None: it can).
fn refuse_block(block: usize) -> Option<String> {
    (block != MESSAGE).then(|| {
        format!(
            "eventfd carries exactly one 8-byte counter per message, not {block} bytes \
             (use --sizes 8)"
        )
    })
}

fn setup(opts: &MechOptions, block: usize) -> Result<Link> {
    if let Some(why) = refuse_block(block) {
        return Err(Error::Refused(why));
    }
    let e = Eventfd::counter(0)?;
    let end = |sender: bool| -> Result<PeerHandoff> {
        Ok(PeerHandoff {
            kind: MechanismKind::Eventfd,
            addr: PeerAddr::Eventfd { sender },
            opts: opts.clone(),
            fds: vec![e.try_clone_fd()?],
        })
    };
    let mut link = Link::new(
        MechanismKind::Eventfd,
        opts,
        Some(LocalEnd::Handoff(Box::new(end(true)?))),
        Some(end(false)?),
        None,
    );
    // The peer is gone. Every end shares this eventfd's open description, so making
    // it non-blocking makes the survivor's next wait fail (EAGAIN) instead of
    // waiting forever; the hang-up wakes a read already waiting (its counter is 0
    // then). Tried every tick until it fits; never a blocking write here, which
    // would hang this thread (and the session that joins it) on a full counter.
    let done = std::sync::atomic::AtomicBool::new(false);
    link.on_peer_death.push(Box::new(move || {
        if done.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let _ = ipcperf_sys::fd::set_nonblocking(e.as_fd(), true);
        if e.write(HANGUP).is_ok() {
            done.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }));
    Ok(link)
}

/// One end of one direction.
#[derive(Debug)]
pub struct EventfdEnd {
    e: Eventfd,
    sender: bool,
}

impl EventfdEnd {
    pub(super) fn new(fd: std::os::fd::OwnedFd, sender: bool) -> EventfdEnd {
        EventfdEnd {
            e: Eventfd::from_fd(fd),
            sender,
        }
    }
}

impl ByteStream for EventfdEnd {
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> Result<()> {
        let Ok(b) = <[u8; 8]>::try_from(buf) else {
            return Err(Error::Invalid(format!(
                "a {}-byte message on eventfd (exactly 8)",
                buf.len()
            )));
        };
        let c = (u64::from_ne_bytes(b) ^ K).wrapping_add(1);
        if c == 0 || c >= HANGUP {
            return Err(Error::Invalid(format!(
                "the 8-byte value {:#x} cannot travel in an eventfd counter",
                u64::from_ne_bytes(b)
            )));
        }
        self.e.write(c).map_err(|e| match e {
            ipcperf_sys::error::Errno::EAGAIN => {
                Error::Peer("write on eventfd: the other side is gone (the peer ended)".into())
            }
            e => Error::io("write", "eventfd", e),
        })
    }

    #[inline]
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        if buf.len() < MESSAGE {
            return Err(Error::Invalid("eventfd reads 8 bytes at a time".into()));
        }
        let c = self.e.read().map_err(|e| match e {
            // Only the watchdog makes the eventfd non-blocking: the peer has died.
            ipcperf_sys::error::Errno::EAGAIN => {
                Error::Peer("read on eventfd: the other side is gone (the peer ended)".into())
            }
            e => Error::io("read", "eventfd", e),
        })?;
        if c >= HANGUP {
            return Ok(0); // the other side hung up
        }
        buf[..8].copy_from_slice(&((c - 1) ^ K).to_ne_bytes());
        Ok(MESSAGE)
    }
}

impl Drop for EventfdEnd {
    fn drop(&mut self) {
        if self.sender && ipcperf_sys::fd::wait_ready(self.e.as_fd(), true, 0).unwrap_or(false) {
            let _ = self.e.write(HANGUP);
        }
    }
}

/// The eventfd counter, one per direction.
pub struct EventfdMech;

impl Mechanism for EventfdMech {
    type End = EventfdEnd;

    const INFO: MechanismInfo = MechanismInfo {
        modes: TWO_SIDES,
        ..MechanismInfo::new(
            MechanismKind::Eventfd,
            "eventfd",
            "wake-up carrying an 8-byte counter, one eventfd per direction (latency only, 8 B)",
        )
    };

    fn setup(opts: &MechOptions, block: usize) -> Result<Link> {
        setup(opts, block)
    }

    fn open(mut h: PeerHandoff, timeout_ms: i32) -> Result<EventfdEnd> {
        let PeerAddr::Eventfd { sender } = h.addr else {
            return Err(Error::Peer(format!("eventfd cannot open {:?}", h.addr)));
        };
        Ok(EventfdEnd::new(super::open_fd(&mut h, timeout_ms)?, sender))
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::OneWayPair)
    }

    fn refuse_payload(_p: crate::payload::Payload) -> Option<String> {
        Some(refuse_stream())
    }

    fn refuse_block(block: usize, round_trip: bool) -> Option<String> {
        if round_trip {
            refuse_block(block)
        } else {
            Some(refuse_stream())
        }
    }

    fn default_round_trip_sizes() -> Option<&'static [usize]> {
        Some(&[MESSAGE])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_travel_and_a_drop_hangs_up() {
        let mut l = setup(&MechOptions::default(), 8).unwrap();
        let mut rx = EventfdMech::open(l.take_peer().unwrap(), 1000).unwrap();
        let mut tx = super::super::open_local::<EventfdMech>(&mut l, 1000).unwrap();
        let mut b = [0u8; 8];
        for v in [0u64, 7, u64::MAX, 0x2020_2020_2020_2020] {
            tx.write_all(&v.to_ne_bytes()).unwrap();
            let n = rx.read_some(&mut b).unwrap();
            assert_eq!((n, u64::from_ne_bytes(b)), (8, v));
        }
        let bad = (K ^ (u64::MAX - 1)).to_ne_bytes();
        assert!(tx.write_all(&bad).is_err());
        drop(tx);
        assert_eq!(rx.read_some(&mut b).unwrap(), 0);
        assert!(setup(&MechOptions::default(), 16).is_err());
    }
}
