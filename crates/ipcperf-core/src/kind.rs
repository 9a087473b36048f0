//! The plain types every layer shares, with no behaviour that reaches another
//! module: how a case's two sides run (`Mode`, `Placement`), what it measures
//! (`Workload`), the datagram counts a lossy mechanism reports, and what a sync
//! peer needs to open its primitive (`Primitive`, `SyncSetup`). Kept at the bottom
//! so that mechanisms, workloads, modes, plans and records can all name them
//! without importing one another.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use crate::topology::PlacementClass;

/// How the two sides of a case are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// One thread writes a block, then reads it back (Bradford's pipespeed2).
    Single,
    /// A writer thread and a reader thread in one process (pipespeed2t).
    Threads,
    /// A writer process and a reader process; the reader is ipcperf itself.
    Processes,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Single, Mode::Threads, Mode::Processes];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Single => "single",
            Mode::Threads => "threads",
            Mode::Processes => "processes",
        }
    }

    pub fn from_name(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// CPUs the two sides are pinned to (None: not pinned).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
pub struct Placement {
    pub writer_cpu: Option<usize>,
    pub reader_cpu: Option<usize>,
    /// How the two CPUs relate (see [`crate::topology`]), when it is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<PlacementClass>,
    /// Their one-way latency as measured (`--pin measured:...`), ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_ns: Option<u32>,
}

impl Placement {
    pub const UNPINNED: Placement = Placement {
        writer_cpu: None,
        reader_cpu: None,
        class: None,
        measured_ns: None,
    };

    pub fn pinned(writer: usize, reader: usize) -> Placement {
        Placement {
            writer_cpu: Some(writer),
            reader_cpu: Some(reader),
            class: None,
            measured_ns: None,
        }
    }

    /// The same placement with its CPUs' measured one-way latency.
    pub fn with_measured(mut self, ns: Option<u32>) -> Placement {
        self.measured_ns = ns;
        self
    }

    /// The same placement with the relation of its CPUs named.
    pub fn with_class(mut self, class: Option<PlacementClass>) -> Placement {
        self.class = class;
        self
    }

    /// The class's name (`shared-l3`, ...) when known; else `same-cpu`,
    /// `cross-cpu`, `unpinned` or `partly-pinned`.
    pub fn label(&self) -> &'static str {
        // Two machines: that is the relation, whatever is pinned on each.
        if self.class == Some(PlacementClass::OtherHost) {
            return PlacementClass::OtherHost.name();
        }
        if let (Some(c), Some(_), Some(_)) = (self.class, self.writer_cpu, self.reader_cpu) {
            return c.name();
        }
        match (self.writer_cpu, self.reader_cpu) {
            (Some(a), Some(b)) if a == b => "same-cpu",
            (Some(_), Some(_)) => "cross-cpu",
            (None, None) => "unpinned",
            _ => "partly-pinned",
        }
    }
}

/// What a case measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// One-way throughput of a byte stream.
    Stream,
    /// Synchronization primitives: request/release and set/clear cycles.
    Sync,
    /// Round-trip latency: S bytes there, the same S bytes back, each timed.
    RoundTrip,
    /// A recorded or fitted message pattern, both ways, at its times.
    Replay,
}

impl Workload {
    pub fn name(self) -> &'static str {
        match self {
            Workload::Stream => "stream",
            Workload::Sync => "sync",
            Workload::RoundTrip => "round-trip",
            Workload::Replay => "replay",
        }
    }
}

/// Datagram accounting over the timed series (both directions summed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DatagramCounts {
    pub sent: u64,
    pub received: u64,
    /// Sequence numbers never seen.
    pub lost: u64,
    /// A sequence number seen twice.
    pub duplicated: u64,
    /// Arrived after a later sequence number.
    pub reordered: u64,
}

impl DatagramCounts {
    pub fn add(&mut self, o: &DatagramCounts) {
        self.sent += o.sent;
        self.received += o.received;
        self.lost += o.lost;
        self.duplicated += o.duplicated;
        self.reordered += o.reordered;
    }
}

/// Every primitive a Linux program can coordinate another process with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Primitive {
    SysvSem,
    /// The SysV set, set/clear in lmbench's `lat_sem` form: one semop a side.
    SysvSemOneCall,
    PosixSemNamed,
    PosixSem,
    Mutex,
    Futex,
    Eventfd,
    Flock,
    Fcntl,
    /// Not a primitive: a one-byte token over two pipes, the reference wake-up.
    Pipe,
}

/// What the other side needs to open its ends (descriptors travel beside it, in
/// the order this records).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncSetup {
    pub primitive: Primitive,
    /// SysV set id (sysv-sem).
    pub sysv_id: Option<i32>,
    /// Named semaphores: lock, to-B, to-A (posix-sem-named).
    pub names: Vec<String>,
    /// The lock file (flock, fcntl).
    pub lock_path: Option<PathBuf>,
    /// fds[0] is a memfd of this many bytes (posix-sem, mutex, futex).
    pub shm_len: usize,
    /// Descriptors handed over: eventfd lock, to-B, to-A; or pipes to-B read end,
    /// to-A write end.
    pub fd_count: usize,
    /// Waits as a program's: no timeout armed (a dead peer is noticed by a
    /// watcher that wakes the waiter instead).
    #[serde(default)]
    pub untimed: bool,
}

/// How to start a peer process: the program and its arguments (the binary passes
/// itself and `__peer`; tests pass the built binary).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl PeerCommand {
    /// This executable, run as `<exe> __peer`.
    pub fn current_exe() -> crate::error::Result<PeerCommand> {
        let program = std::env::current_exe()
            .map_err(|e| crate::error::Error::Peer(format!("cannot find this executable: {e}")))?;
        Ok(PeerCommand {
            program,
            args: vec!["__peer".into()],
        })
    }
}
