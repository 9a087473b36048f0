//! The conversation between the owner of a case and its peer (a thread or a
//! process): a handoff, then "go" per series and "done" back, then "quit".
//! The same peer code runs in a thread or in a process; only the channel differs.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::kind::DatagramCounts;
use crate::mechanism::PeerHandoff;
use crate::payload::Payload;
use ipcperf_sys::cpu::PinGuard;

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
    /// Fan-in: one server for many clients (the handoff, then `more`): `Rounds { n }`
    /// answers `n` messages in all, each to the client it came from, whichever
    /// is ready first (poll over every client's end), then reports `Echoed`.
    EchoMany,
    /// Replay: receive the script's A→B messages and send its B→A ones when due
    /// (`Replay { .. }`), then report `Echoed` with its times in the script's file.
    Replay,
}

/// One more client's ends for a fan-in server (role `EchoMany`): the end it reads
/// requests from, the end it answers on (one-way mechanisms), and how many of the
/// descriptors sent with the setup are each one's.
#[derive(Debug, Serialize, Deserialize)]
pub struct MoreHandoff {
    pub fwd: PeerHandoff,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub back: Option<PeerHandoff>,
    #[serde(default)]
    pub fwd_fds: usize,
    #[serde(default)]
    pub back_fds: usize,
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
    /// Role `Echo`, `--one-way`: measure each message's delay from the send time
    /// in its first 8 bytes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub one_way: bool,
    /// Role `EchoMany`: the clients after the first (whose ends are `handoff`
    /// and `back`). Their descriptors follow `handoff`'s and `back`'s.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more: Vec<MoreHandoff>,
    /// Role `Replay`: the script, in a file handed over with the setup (its
    /// descriptor travels last).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<ScriptHandoff>,
}

#[cfg(test)]
impl PeerSetup {
    /// A setup with a role and its end, nothing else (64-byte touched blocks).
    pub(crate) fn bare(role: PeerRole, handoff: crate::mechanism::PeerHandoff) -> PeerSetup {
        PeerSetup {
            role,
            handoff,
            block_size: 64,
            payload: crate::payload::Payload::Touch,
            cpu: None,
            sync: None,
            back: None,
            handoff_fds: None,
            one_way: false,
            more: Vec::new(),
            script: None,
        }
    }
}

/// A replay's script for the peer: `steps` steps at the start of `file`; the peer
/// writes its `times` (one 8-byte time per step and pass) after them.
#[derive(Debug, Serialize, Deserialize)]
pub struct ScriptHandoff {
    pub steps: u64,
    #[serde(skip)]
    pub file: Option<std::fs::File>,
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
    /// Replay the script (role `Replay`) from `start_ns` (monotonic), `reps`
    /// times, each `period_ns` after the last; `spin` to each send time.
    Replay {
        start_ns: u64,
        reps: u64,
        period_ns: u64,
        spin: bool,
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
        /// From the reader's "go" to its last byte, on its own clock: the series'
        /// length when the reader is on another machine, whose clock is not ours.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        since_go_ns: Option<u64>,
        /// The peer's thread's counters over the series (absent from an older peer).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        counts: Option<crate::record::Counts>,
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
        /// `--one-way`: the delays measured this series (2 significant digits, the
        /// peer's clock cost taken off) and that cost.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        one_way: Option<(crate::latency::HistogramRecord, u64)>,
        /// The peer's thread's counters over the series (absent from an older peer).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        counts: Option<crate::record::Counts>,
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
    /// The thread id of a peer that is a thread of this process (what tracing
    /// follows as the other side); None for a process or another machine.
    fn thread_id(&self) -> Option<i64> {
        None
    }
}

/// A peer's job: what it does with its end until told to quit. The transport (a
/// thread or a process) runs whichever job its starter hands it.
pub type Job = fn(&mut dyn PeerChannel, PeerSetup) -> Result<()>;

/// Run `job` as the peer's side of a case: pinned where the setup says; its error
/// is also reported to the owner as `Failed`, so it can say what went wrong here.
pub fn run_job(ch: &mut dyn PeerChannel, setup: PeerSetup, job: Job) -> Result<()> {
    let r = PinGuard::pin(setup.cpu)
        .map_err(Error::from)
        .and_then(|_pin| {
            // The tests' peer that fails before it opens its end: the owner must
            // hear of it at once, not when its own wait for the peer runs out.
            if std::env::var_os("IPCPERF_TEST_PEER_FAILS").is_some() {
                return Err(Error::Peer(
                    "IPCPERF_TEST_PEER_FAILS: the peer failed on purpose before opening its end"
                        .into(),
                ));
            }
            job(ch, setup)
        });
    if let Err(e) = &r {
        let _ = ch.send(FromPeer::Failed {
            message: e.to_string(),
        });
    }
    r
}
