//! The conversation between the owner of a case and its peer (a thread or a
//! process): a handoff, then "go" per series and "done" back, then "quit".
//! The same peer code runs in a thread or in a process; only the channel differs.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::kind::DatagramCounts;
use crate::mechanism::{with_mechanism, ByteStream, Mechanism, PeerHandoff, OPEN_TIMEOUT_MS};
use crate::payload::{AlignedBuf, Payload};
use crate::workload::{roundtrip, stream};
use ipcperf_sys::clock::thread_cpu_ns;
use ipcperf_sys::cpu::{current_cpu, PinGuard};

/// What the peer does in a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PeerRole {
    /// Read a stream: `Go { bytes }` reads that many bytes and reports when the last arrived.
    StreamReader,
    /// Sync set/clear: `Go { bytes: n }` answers n tokens (wait, then signal back).
    SyncPartner,
    /// Sync robustness: take the lock (SysV with SEM_UNDO), say ready, hold it until killed.
    SyncHolder,
    /// The same, SysV semaphore taken without SEM_UNDO.
    SyncHolderNoUndo,
    /// Round trips: `Rounds { n }` receives a message and sends the same bytes back,
    /// `n` times, then reports `Echoed`.
    Echo,
}

/// Everything the peer needs, sent once.
#[derive(Debug, Serialize, Deserialize)]
pub struct PeerSetup {
    pub role: PeerRole,
    pub handoff: PeerHandoff,
    pub block_size: usize,
    pub payload: Payload,
    /// CPU to pin the peer to.
    pub cpu: Option<usize>,
    /// The sync primitive's objects (sync roles only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<Box<crate::kind::SyncSetup>>,
    /// Round trips over a one-way mechanism: the end the peer writes answers to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub back: Option<Box<PeerHandoff>>,
    /// How many of the descriptors sent with the setup belong to `handoff` (the rest
    /// are `back`'s). None: all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff_fds: Option<usize>,
}

/// Owner to peer. (`Hello` is large but sent once per case.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Serialize, Deserialize)]
pub enum ToPeer {
    Hello(PeerSetup),
    Go {
        bytes: u64,
    },
    /// Echo `n` messages (role `Echo`).
    Rounds {
        n: u64,
    },
    Quit,
}

/// Peer to owner.
#[derive(Debug, Serialize, Deserialize)]
pub enum FromPeer {
    Ready {
        cpu: Option<usize>,
    },
    /// `cpu_ns`: CPU time the peer's thread used in the series.
    Done {
        end_ns: u64,
        cpu: Option<usize>,
        cpu_ns: u64,
        /// Lossy mechanisms (udp): the bytes that arrived, and the reader's counts.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delivered: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        datagrams: Option<DatagramCounts>,
    },
    Failed {
        message: String,
    },
    /// Role `Echo`: how many messages were echoed (fewer than asked only when a
    /// datagram was lost), and the datagram counts of the peer's end if it has them.
    Echoed {
        echoed: u64,
        cpu: Option<usize>,
        /// CPU time the peer's thread used in the series.
        #[serde(default)]
        cpu_ns: u64,
        datagrams: Option<DatagramCounts>,
    },
}

/// The peer's end of the conversation.
pub trait PeerChannel {
    fn send(&mut self, m: FromPeer) -> Result<()>;
    fn recv(&mut self) -> Result<ToPeer>;
    /// The owner's pid when it is another process (None: a thread of ours).
    fn owner_process(&self) -> Option<i32> {
        None
    }
}

/// The owner's end of the conversation.
pub trait PeerHandle {
    fn send(&mut self, m: ToPeer) -> Result<()>;
    /// The next message, waiting at most `timeout_ms`; a dead peer is an error naming how it died.
    fn recv(&mut self, timeout_ms: i32) -> Result<FromPeer>;
    /// Say quit and wait (bounded) for the peer to end cleanly.
    fn finish(&mut self) -> Result<()>;
    /// Kill the peer if the current series is not over by `deadline_ns` (monotonic
    /// clock); `None` disarms. A process peer enforces it from a watchdog thread, so
    /// a stopped or stuck peer turns into an error instead of a hang.
    fn arm(&mut self, _deadline_ns: Option<u64>) {}
}

/// A peer's job: what it does with its end until told to quit. The transport (a
/// thread or a process) runs whichever job its starter hands it.
pub type Job = fn(&mut dyn PeerChannel, PeerSetup) -> Result<()>;

/// Run `job` as the peer's side of a case: pinned where the setup says; its error
/// is also reported to the owner as `Failed`, so it can say what went wrong here.
pub fn run_job(ch: &mut dyn PeerChannel, setup: PeerSetup, job: Job) -> Result<()> {
    let r = PinGuard::pin(setup.cpu)
        .map_err(Error::from)
        .and_then(|_pin| job(ch, setup));
    if let Err(e) = &r {
        let _ = ch.send(FromPeer::Failed {
            message: e.to_string(),
        });
    }
    r
}

/// The stream reader's and the echo's job (the sync roles are `sync::peer`'s).
pub fn serve(ch: &mut dyn PeerChannel, setup: PeerSetup) -> Result<()> {
    run_job(ch, setup, serve_inner)
}

fn serve_inner(ch: &mut dyn PeerChannel, setup: PeerSetup) -> Result<()> {
    with_mechanism!(setup.handoff.kind, M => serve_with::<M>(ch, setup))
}

/// The stream reader's and the echo's job for mechanism `M` (its loops
/// monomorphized for `M`'s end).
fn serve_with<M: Mechanism>(ch: &mut dyn PeerChannel, setup: PeerSetup) -> Result<()> {
    match setup.role {
        PeerRole::SyncPartner | PeerRole::SyncHolder | PeerRole::SyncHolderNoUndo => Err(
            Error::Invalid("a sync role was handed to the stream and echo job".into()),
        ),
        PeerRole::StreamReader => {
            let mut ep = M::open(setup.handoff, OPEN_TIMEOUT_MS)?;
            let mut buf = AlignedBuf::new(setup.block_size);
            ch.send(FromPeer::Ready { cpu: current_cpu() })?;
            loop {
                match ch.recv()? {
                    ToPeer::Go { bytes } => {
                        ep.prepare_series(false)?;
                        let cpu0 = thread_cpu_ns();
                        let (end_ns, lossy) =
                            match M::read_lossy(&mut ep, setup.payload, &mut buf, bytes) {
                                Some(r) => {
                                    let (end, delivered, counts) = r?;
                                    (end, Some((delivered, counts)))
                                }
                                None => (
                                    stream::read_stream(setup.payload, &mut ep, &mut buf, bytes)?,
                                    None,
                                ),
                            };
                        ch.send(FromPeer::Done {
                            end_ns,
                            cpu: current_cpu(),
                            cpu_ns: thread_cpu_ns() - cpu0,
                            delivered: lossy.map(|l| l.0),
                            datagrams: lossy.map(|l| l.1),
                        })?;
                    }
                    ToPeer::Quit => return Ok(()),
                    ToPeer::Hello(_) => return Err(Error::Peer("a second hello".into())),
                    ToPeer::Rounds { .. } => {
                        return Err(Error::Peer("round trips asked of a stream reader".into()))
                    }
                }
            }
        }
        PeerRole::Echo => {
            let fwd = M::open(setup.handoff, OPEN_TIMEOUT_MS)?;
            let back = match setup.back {
                Some(h) => Some(M::open(*h, OPEN_TIMEOUT_MS)?),
                None => None,
            };
            let mut end = crate::mode::roundtrip::Duplex::for_peer(fwd, back);
            let mut buf = AlignedBuf::new(setup.block_size);
            ch.send(FromPeer::Ready { cpu: current_cpu() })?;
            loop {
                match ch.recv()? {
                    ToPeer::Rounds { n } => {
                        let cpu0 = thread_cpu_ns();
                        let echoed = crate::with_duplex!(&mut end, e => roundtrip::echo(
                            setup.payload,
                            e,
                            &mut buf,
                            n
                        ))?;
                        ch.send(FromPeer::Echoed {
                            echoed,
                            cpu: current_cpu(),
                            cpu_ns: thread_cpu_ns() - cpu0,
                            datagrams: M::take_datagram_counts(end.rx()),
                        })?;
                    }
                    ToPeer::Quit => return Ok(()),
                    ToPeer::Hello(_) => return Err(Error::Peer("a second hello".into())),
                    ToPeer::Go { .. } => {
                        return Err(Error::Peer("a stream asked of an echo peer".into()))
                    }
                }
            }
        }
    }
}
