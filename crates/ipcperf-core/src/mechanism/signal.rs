//! `signal`: a real-time signal sent with sigqueue(3), carrying a 32-bit value —
//! the modern form of Duncan's OS/2 event flags (round trips only). Owner→peer
//! uses `ping_signal`, peer→owner `pong_signal`; each side takes only its own with
//! sigtimedwait(2), in ticks of [`TICK_MS`], at most [`WAIT_MS`] in all.
//!
//! The signals must be blocked in every thread of both processes before any
//! thread starts (the binary calls `ipcperf_sys::rtsig::block_all()` first thing in
//! `main`), or their default action would end the process: opening an end where
//! they are not blocked is refused. In threads mode both sides live in one process
//! and the signals are process-directed; that works because each thread waits
//! only for its own signal and every thread blocks both. For the same reason only
//! one `signal` case may run at a time in a process.
//!
//! The sender needs the receiver's pid: the owner's is known at set-up; the peer's
//! reaches the owner in a first `pong` (its value is the peer's pid), sent when the
//! peer opens its receiving end.

use std::sync::atomic::{AtomicU64, Ordering};

use ipcperf_sys::rtsig;

use super::info::TWO_SIDES;
use super::{
    Link, LocalEnd, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr, PeerHandoff,
    RoundTripShape, OPEN_TIMEOUT_MS,
};
use crate::error::{Error, Result};
use crate::mechanism::ByteStream;

/// The largest message: a sigval's 32-bit integer.
pub const MAX_MESSAGE: usize = 4;
pub const TICK_MS: u64 = 100;
pub const WAIT_MS: u64 = 5_000;

/// The link whose peer the watchdog last saw die (0: none).
static HUNG_UP: AtomicU64 = AtomicU64::new(0);
static NEXT_LINK: AtomicU64 = AtomicU64::new(1);

/// Why signal cannot carry a stream.
fn refuse_stream() -> String {
    "signal carries a wake-up with one 32-bit value, not a byte stream: \
     measure it with `ipcperf latency signal --sizes 4`"
        .into()
}

fn check_blocked() -> Result<()> {
    for s in [rtsig::ping_signal(), rtsig::pong_signal()] {
        if !rtsig::is_blocked(s) {
            return Err(Error::Refused(format!(
                "real-time signal {s} is not blocked in this thread: block ipcperf's \
                 signals (ipcperf_sys::rtsig::block_all) before any thread starts, \
                 or the signal would end the process instead of being queued"
            )));
        }
    }
    Ok(())
}

/// Set up one direction: `to_peer` (ping: the owner sends) or the way back (pong).
/// Why a message of `block` bytes cannot go (None: it can).
fn refuse_block(block: usize) -> Option<String> {
    (block > MAX_MESSAGE).then(|| {
        format!(
            "a real-time signal carries one 32-bit value (sigval): at most 4 bytes, \
             not {block}"
        )
    })
}

fn setup(opts: &MechOptions, block: usize, to_peer: bool) -> Result<Link> {
    if let Some(why) = refuse_block(block) {
        return Err(Error::Refused(why));
    }
    check_blocked()?;
    let sig = if to_peer {
        rtsig::ping_signal()
    } else {
        rtsig::pong_signal()
    };
    // Leftovers of an earlier case in this process would be taken for messages.
    while let Ok(Some(_)) = rtsig::wait(sig, 0) {}
    let link_id = NEXT_LINK.fetch_add(1, Ordering::Relaxed);
    let owner_pid = std::process::id() as i32;
    let end = |sender: bool| PeerHandoff {
        kind: MechanismKind::Signal,
        addr: PeerAddr::Signal {
            sig,
            sender,
            owner_pid,
            link_id,
        },
        opts: opts.clone(),
        fds: Vec::new(),
    };
    // As for every one-way mechanism, the local end sends and the peer's receives;
    // a round trip swaps the ends of the way back (pong: the peer sends).
    let mut link = Link::new(
        MechanismKind::Signal,
        opts,
        Some(LocalEnd::Handoff(Box::new(end(true)))),
        Some(end(false)),
        None,
    );
    link.facts.push(("signal".into(), sig.to_string()));
    link.on_peer_death.push(Box::new(move || {
        HUNG_UP.store(link_id, Ordering::SeqCst);
    }));
    Ok(link)
}

/// A real-time signal carrying a 32-bit value.
pub struct Signal;

impl Mechanism for Signal {
    type End = SignalEnd;

    const INFO: MechanismInfo = MechanismInfo {
        modes: TWO_SIDES,
        ..MechanismInfo::new(
            MechanismKind::Signal,
            "signal",
            "real-time signal with sigqueue carrying a 32-bit value (latency only, <= 4 B)",
        )
    };

    fn setup(opts: &MechOptions, block: usize) -> Result<Link> {
        setup(opts, block, true)
    }

    /// The way back is the other signal (pong: the peer sends it to the owner).
    fn setup_back(opts: &MechOptions, block: usize) -> Result<Link> {
        setup(opts, block, false)
    }

    fn open(h: PeerHandoff, _timeout_ms: i32) -> Result<SignalEnd> {
        match h.addr {
            PeerAddr::Signal {
                sig,
                sender,
                owner_pid,
                link_id,
            } => SignalEnd::open(sig, sender, owner_pid, link_id),
            other => Err(Error::Peer(format!("signal cannot open {other:?}"))),
        }
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::OneWayPair)
    }

    fn refuse_payload(_p: crate::payload::Payload) -> Option<String> {
        Some(refuse_stream())
    }

    fn refuse_block(block: usize, _round_trip: bool) -> Option<String> {
        refuse_block(block)
    }

    fn default_round_trip_sizes() -> Option<&'static [usize]> {
        Some(&[MAX_MESSAGE])
    }
}

/// One end of one direction.
#[derive(Debug)]
pub struct SignalEnd {
    sig: i32,
    /// Sender: the pid it queues to.
    target: i32,
    sender: bool,
    link_id: u64,
}

impl SignalEnd {
    pub(super) fn open(sig: i32, sender: bool, owner_pid: i32, link_id: u64) -> Result<SignalEnd> {
        check_blocked()?;
        let me = std::process::id() as i32;
        let target = if sig == rtsig::ping_signal() && sender {
            // The owner's ping sender: learn the peer's pid from its hello.
            let hello = super::other_side::wait_for(OPEN_TIMEOUT_MS, "it said hello", |ms| {
                rtsig::wait(rtsig::pong_signal(), ms.max(0) as u64)
                    .map_err(|e| Error::io("sigtimedwait", "signal", e))
            })?;
            match hello {
                Some(pid) => pid,
                None => {
                    return Err(Error::Timeout(
                        "the peer did not say hello with a signal within 5 s".into(),
                    ))
                }
            }
        } else if sig == rtsig::ping_signal() {
            // The peer's ping receiver: say hello to the owner with our pid.
            rtsig::queue(owner_pid, rtsig::pong_signal(), me).map_err(queue_failed)?;
            0
        } else if sender {
            owner_pid
        } else {
            0
        };
        Ok(SignalEnd {
            sig,
            target,
            sender,
            link_id,
        })
    }
}

/// A failed sigqueue, said with its cause: the other side gone, or this
/// user's queue of pending signals full (EAGAIN: `ulimit -i`, 0 refusing all).
fn queue_failed(e: ipcperf_sys::error::Errno) -> Error {
    use ipcperf_sys::error::Errno;
    match e {
        Errno::ESRCH => Error::Peer("sigqueue: the other side's process is gone".into()),
        Errno::EAGAIN => Error::Refused(format!(
            "sigqueue: this user's queued signals are at their limit, RLIMIT_SIGPENDING{} \
             (`ulimit -i`)",
            rtsig::pending_limit()
                .map(|n| format!(" = {n}"))
                .unwrap_or_default()
        )),
        e => Error::io("sigqueue", "signal", e),
    }
}

impl ByteStream for SignalEnd {
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> Result<()> {
        debug_assert!(self.sender);
        if buf.len() > MAX_MESSAGE {
            return Err(Error::Invalid(format!(
                "a {}-byte message on signal (at most 4)",
                buf.len()
            )));
        }
        let mut v = [0u8; 4];
        v[..buf.len()].copy_from_slice(buf);
        rtsig::queue(self.target, self.sig, i32::from_ne_bytes(v)).map_err(queue_failed)
    }

    #[inline]
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        debug_assert!(!self.sender);
        let mut waited = 0u64;
        loop {
            match rtsig::wait(self.sig, TICK_MS) {
                Ok(Some(v)) => {
                    let n = buf.len().min(MAX_MESSAGE);
                    buf[..n].copy_from_slice(&v.to_ne_bytes()[..n]);
                    return Ok(n);
                }
                Ok(None) => {}
                Err(e) => return Err(Error::io("sigtimedwait", "signal", e)),
            }
            if HUNG_UP.load(Ordering::Relaxed) == self.link_id {
                return Err(Error::Peer(
                    "the other side is gone (no signal will come)".into(),
                ));
            }
            waited += TICK_MS;
            if waited >= WAIT_MS {
                return Err(Error::Timeout(format!(
                    "no signal {} within {} s",
                    self.sig,
                    WAIT_MS / 1000
                )));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_where_the_signals_are_not_blocked_and_above_four_bytes() {
        std::thread::spawn(|| {
            // Nothing in this test binary blocks them (the ipcperf binary does, in main).
            assert!(!rtsig::is_blocked(rtsig::ping_signal()));
            let e = setup(&MechOptions::default(), 4, true).err().unwrap();
            assert!(e.to_string().contains("not blocked"), "{e}");
            let e = setup(&MechOptions::default(), 8, true).err().unwrap();
            assert!(e.to_string().contains("at most 4 bytes"), "{e}");
        })
        .join()
        .unwrap();
    }
}
