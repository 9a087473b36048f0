//! Mechanisms: each knows how to set up its kernel object, hand one end to a peer
//! (thread or process) and open the other end. None of them times anything.
//!
//! Each is a type implementing [`Mechanism`] (`registry.rs`), listed once in the
//! `registry!` below. `setup` runs on the side that owns the named objects (the
//! writer's side); it returns a [`Link`]: the local end to open, and a
//! [`PeerHandoff`] (plain data plus file descriptors) that the peer turns into its
//! end with [`Mechanism::open`], in the same process or in another one.

#[macro_use]
mod registry;

pub mod cma;
#[cfg(test)]
pub(crate) mod demo_pair;
pub mod endpoint;
pub mod eventfd;
pub mod fifo;
pub mod file;
#[cfg(feature = "grpc")]
pub mod grpc;
#[cfg(feature = "iceoryx2")]
pub mod iceoryx2;
pub mod ipc_channel;
pub mod msgq;
pub mod other_side;
pub mod pipe;
pub mod shm;
pub mod shm_ring;
pub mod signal;
pub mod sockpair;
pub mod solo;
pub mod tcp;
pub mod udp;
pub mod unix;
pub mod uring;
pub mod uring_msg;
pub mod veth;
pub mod vmsplice;
pub mod wait;
pub mod wake;
#[cfg(feature = "zmq")]
pub mod zmq;

use std::os::fd::OwnedFd;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub use endpoint::{ByteStream, FdStream};
use ipcperf_sys::names::PrivateDir;
pub use registry::{open_local, LossyRead, Mechanism, RoundTripShape};

// The registry: one line per mechanism (beside its `mod` line above), in
// `list`'s order. The kind enum, `list`'s table, the dispatch into monomorphized
// code (`with_mechanism!`) and the conformance suite all come from it.
registry! { $
    Pipe => crate::mechanism::pipe::Pipe,
    Fifo => crate::mechanism::fifo::Fifo,
    Unix => crate::mechanism::unix::Unix,
    Tcp => crate::mechanism::tcp::Tcp,
    File => crate::mechanism::file::File,
    Null => crate::mechanism::solo::Null,
    Memcpy => crate::mechanism::solo::Memcpy,
    SysvMsg => crate::mechanism::msgq::SysvMsg,
    PosixMq => crate::mechanism::msgq::PosixMq,
    UnixDgram => crate::mechanism::sockpair::UnixDgram,
    UnixSeqpacket => crate::mechanism::sockpair::UnixSeqpacket,
    Udp => crate::mechanism::udp::Udp,
    Vmsplice => crate::mechanism::vmsplice::Vmsplice,
    Cma => crate::mechanism::cma::Cma,
    Shm => crate::mechanism::shm::Shm,
    Eventfd => crate::mechanism::eventfd::EventfdMech,
    Signal => crate::mechanism::signal::Signal,
    UringUnix => crate::mechanism::uring::UringUnix,
    UringTcp => crate::mechanism::uring::UringTcp,
    UringPipe => crate::mechanism::uring::UringPipe,
    UringMsgRing => crate::mechanism::uring_msg::UringMsgRing,
    IpcChannel => crate::mechanism::ipc_channel::IpcChannel,
    #[cfg(feature = "iceoryx2")]
    Iceoryx2 => crate::mechanism::iceoryx2::Iceoryx2,
    #[cfg(feature = "zmq")]
    ZmqIpc => crate::mechanism::zmq::ZmqIpc,
    #[cfg(feature = "zmq")]
    ZmqTcp => crate::mechanism::zmq::ZmqTcp,
    #[cfg(feature = "grpc")]
    GrpcUds => crate::mechanism::grpc::GrpcUds,
    #[cfg(test)]
    DemoPair => crate::mechanism::demo_pair::DemoPair,
}

/// Ends made at set-up that stay in this process until a thread of it opens
/// them ([`PeerAddr::InProcess`]): rings and library sockets, which cannot travel
/// as plain data and descriptors.
pub mod in_process {
    use std::any::Any;
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Mutex;

    type Store = HashMap<u64, Box<dyn Any + Send>>;
    static KEPT: Mutex<Option<Store>> = Mutex::new(None);
    static NEXT: AtomicU64 = AtomicU64::new(1);

    fn with<R>(f: impl FnOnce(&mut Store) -> R) -> R {
        let mut g = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        f(g.get_or_insert_with(HashMap::new))
    }

    /// Keep `end` until it is taken; the guard (for the link's guards) drops it
    /// if nobody did.
    pub fn keep<T: Send + 'static>(end: T) -> (u64, Unclaimed) {
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        with(|m| m.insert(id, Box::new(end)));
        (id, Unclaimed(id))
    }

    /// The end kept under `id`, once.
    pub fn take<T: 'static>(id: u64) -> Option<T> {
        let b = with(|m| m.remove(&id))?;
        b.downcast::<T>().ok().map(|b| *b)
    }

    /// A link whose owner's end is `end`, kept here until the owner's thread
    /// opens it, and whose peer opens from `peer`.
    pub fn link<T: Send + 'static>(
        kind: super::MechanismKind,
        opts: &super::MechOptions,
        end: T,
        peer: super::PeerAddr,
        dir: Option<super::PrivateDir>,
    ) -> super::Link {
        let (id, guard) = keep(end);
        let handoff = |addr| super::PeerHandoff {
            kind,
            addr,
            opts: opts.clone(),
            fds: Vec::new(),
        };
        let local = handoff(super::PeerAddr::InProcess { id });
        let mut link = super::Link::new(
            kind,
            opts,
            Some(super::LocalEnd::Handoff(Box::new(local))),
            Some(handoff(peer)),
            dir,
        );
        link.guards.push(Box::new(guard));
        link
    }

    /// Whether an end is still kept under `id`.
    pub fn holds(id: u64) -> bool {
        with(|m| m.contains_key(&id))
    }

    /// Drops the end kept under its id when the link goes, if nobody took it.
    pub struct Unclaimed(u64);

    impl Drop for Unclaimed {
        fn drop(&mut self) {
            // Dropped outside the lock: an end's drop may take time (a socket's linger).
            let end = with(|m| m.remove(&self.0));
            drop(end);
        }
    }
}

/// How long opening or accepting a connection may take before it is an error.
pub const OPEN_TIMEOUT_MS: i32 = 5_000;

mod info;
pub use info::MechanismInfo;
mod options;
pub use options::MechOptions;

impl MechanismKind {
    /// Mechanisms behind a cargo feature this build was made without: name, feature.
    pub const NOT_BUILT: &'static [(&'static str, &'static str)] = &[
        #[cfg(not(feature = "iceoryx2"))]
        ("iceoryx2", "iceoryx2"),
        #[cfg(not(feature = "zmq"))]
        ("zmq-ipc", "zmq"),
        #[cfg(not(feature = "zmq"))]
        ("zmq-tcp", "zmq"),
        #[cfg(not(feature = "grpc"))]
        ("grpc-uds", "grpc"),
    ];

    pub fn name(self) -> &'static str {
        self.info().name
    }

    pub fn from_name(s: &str) -> Option<MechanismKind> {
        MechanismKind::ALL.iter().copied().find(|k| k.name() == s)
    }

    /// How it carries round trips; None: it cannot.
    pub fn round_trip(self) -> Option<RoundTripShape> {
        with_mechanism!(self, M => M::round_trip())
    }

    /// Why it cannot run a stream with this payload treatment (None: it can).
    pub fn refuse_payload(self, p: crate::payload::Payload) -> Option<String> {
        with_mechanism!(self, M => M::refuse_payload(p))
    }

    /// Why it cannot carry `block`-byte messages or blocks (None: it can).
    pub fn refuse_block(self, block: usize, round_trip: bool) -> Option<String> {
        with_mechanism!(self, M => M::refuse_block(block, round_trip))
    }

    /// Round-trip sizes when the user gives none (None: the command's default).
    pub fn default_round_trip_sizes(self) -> Option<&'static [usize]> {
        with_mechanism!(self, M => M::default_round_trip_sizes())
    }

    /// The ways its ends wait (`--wait`), blocking first where they can.
    pub fn waits(self) -> &'static [wait::Wait] {
        with_mechanism!(self, M => M::WAITS)
    }

    /// The mechanism that waits as `w` asks: `--wait uring` on pipe, unix and
    /// tcp runs uring-pipe, uring-unix, uring-tcp; anything else is itself.
    pub fn waiting(self, w: wait::Wait) -> MechanismKind {
        match (self, w) {
            (MechanismKind::Pipe, wait::Wait::Uring) => MechanismKind::UringPipe,
            (MechanismKind::Unix, wait::Wait::Uring) => MechanismKind::UringUnix,
            (MechanismKind::Tcp, wait::Wait::Uring) => MechanismKind::UringTcp,
            _ => self,
        }
    }

    /// The base whose `--wait uring` this is (uring-unix: unix).
    pub fn uring_of(self) -> Option<MechanismKind> {
        [MechanismKind::Pipe, MechanismKind::Unix, MechanismKind::Tcp]
            .into_iter()
            .find(|b| b.waiting(wait::Wait::Uring) == self)
    }

    /// Why it cannot wait as `w` asks (None: it can): said before anything runs.
    pub fn refuse_wait(self, w: wait::Waits) -> Option<String> {
        let own = self.waits();
        let bad = [w.client, w.server]
            .into_iter()
            .find(|x| *x != wait::Wait::Block && !own.contains(x))?;
        let how = if own == [wait::Wait::Block] {
            if self == MechanismKind::Shm {
                " (the ring wakes its own way: --wake)".to_string()
            } else {
                " (it waits its own way)".to_string()
            }
        } else {
            format!(" (it takes {})", wait::Wait::list(own))
        };
        Some(format!(
            "{} cannot wait by {}{how}",
            self.name(),
            bad.name(),
        ))
    }
}

/// Where the peer finds its end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PeerAddr {
    /// The first descriptor handed over is the peer's end.
    Fd,
    Fifo(PathBuf),
    Unix(PathBuf),
    Tcp(std::net::SocketAddr),
    File(PathBuf),
    /// Open the FIFO at this path for writing (the way back of a round trip).
    FifoWriter(PathBuf),
    /// A SysV message queue by id, with the message types this end sends and receives.
    /// `recv_id`: the queue it receives from, when not `id` (fan-in's shared
    /// request queue and typed replies). `send_type` 0: answer with the type of
    /// the message last received (the fan-in server).
    SysvMsg {
        id: i32,
        send_type: i64,
        recv_type: i64,
        max: usize,
        #[serde(default)]
        recv_id: Option<i32>,
    },
    /// A POSIX message queue by name, opened for sending or receiving.
    Mq {
        name: String,
        write: bool,
        max: usize,
    },
    /// A connected UDP socket (the first descriptor); `asker` numbers its messages.
    /// With `connect_to` and no descriptor, the peer makes its own socket (on
    /// another machine or in another network namespace), connects it there and
    /// says hello, so the other side learns where it is.
    Udp {
        asker: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        connect_to: Option<std::net::SocketAddr>,
    },
    /// The vmsplice pipe's write or read end (the first descriptor).
    Vmsplice {
        writer: bool,
    },
    /// A cma sender or receiver (two notification pipe ends travel with it).
    Cma {
        sender: bool,
    },
    /// An eventfd end (the first descriptor), sending or receiving.
    Eventfd {
        sender: bool,
    },
    /// A real-time signal end: `sig` sent (to the owner, or to the peer whose pid
    /// arrives at open) or taken.
    Signal {
        sig: i32,
        sender: bool,
        owner_pid: i32,
        link_id: u64,
    },
    /// An end made at set-up and kept in this process until a thread of it
    /// opens it (uring-msg-ring: rings cannot be handed to another process).
    InProcess {
        id: u64,
    },
    /// A ZeroMQ socket of this pattern, connected to the owner's endpoint.
    Zmq {
        endpoint: String,
        pattern: SocketPattern,
    },
    /// ipc-channel: the one-shot server (a socket path) to connect to for its ends.
    IpcChannel {
        server: String,
    },
    /// gRPC: the owner's socket path to connect to and answer on; `unary`: calls
    /// are unary (round trips), else one bidirectional streaming call.
    Grpc {
        path: PathBuf,
        unary: bool,
    },
    /// iceoryx2's services, by root folder, prefix and name.
    Iceoryx2(Box<Iox2Place>),
    /// memcpy's two buffers, of `len` bytes each (no kernel object).
    Memory {
        len: usize,
    },
    /// An shm ring end (its memfd, unless named, and eventfds travel with it).
    Shm {
        ring: shm_ring::RingHandoff,
        producer: bool,
    },
}

impl PeerAddr {
    /// The directory the peer finds its end in, where it names one (a path
    /// socket's, a FIFO's, ZeroMQ's ipc:// path's, iceoryx2's root): across mnt
    /// it is bind-mounted into the peer's own /tmp.
    pub fn dir(&self) -> Option<PathBuf> {
        match self {
            PeerAddr::Fifo(p)
            | PeerAddr::Unix(p)
            | PeerAddr::File(p)
            | PeerAddr::FifoWriter(p)
            | PeerAddr::Grpc { path: p, .. } => p.parent().map(|d| d.to_path_buf()),
            PeerAddr::Zmq { endpoint, .. } => endpoint
                .strip_prefix("ipc://")
                .and_then(|p| std::path::Path::new(p).parent())
                .map(|d| d.to_path_buf()),
            PeerAddr::Iceoryx2(place) => Some(PathBuf::from(&place.root)),
            _ => None,
        }
    }
}

/// iceoryx2: where both sides find its services (plain data each side opens by).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Iox2Place {
    pub(crate) root: String,
    pub(crate) prefix: String,
    pub(crate) service: String,
    /// The largest write, in bytes (a slice's length).
    pub(crate) max: usize,
    /// The owner's side (publishes on "a", subscribes to "b").
    pub(crate) owner: bool,
    /// The owner's peer-death flag, kept in this process (owner only).
    pub(crate) flag: Option<u64>,
    /// Round trips by request-response (the owner a client, the peer a server)
    /// instead of publish-subscribe each way.
    #[serde(default)]
    pub(crate) request_response: bool,
}

/// A messaging library's socket pattern (ZeroMQ's), for each side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SocketPattern {
    Push,
    Pull,
    Req,
    Rep,
}

/// Everything the peer needs to open its end: serializable data, plus descriptors
/// that travel beside it (SCM_RIGHTS between processes, a move between threads).
#[derive(Debug, Serialize, Deserialize)]
pub struct PeerHandoff {
    pub kind: MechanismKind,
    pub addr: PeerAddr,
    pub opts: MechOptions,
    #[serde(skip)]
    pub fds: Vec<OwnedFd>,
}

/// The owner's end before it is opened.
pub enum LocalEnd {
    /// Already open.
    Ready(OwnedFd),
    /// Open the FIFO at this path for writing once the reader has it open.
    FifoWriter(PathBuf),
    /// Accept one connection.
    UnixListener(std::os::unix::net::UnixListener),
    TcpListener(std::net::TcpListener),
    /// Opened exactly as a peer's end is, from this handoff (mechanisms whose both
    /// ends are opened by name or id: message queues, datagram sockets).
    Handoff(Box<PeerHandoff>),
}

/// A set-up mechanism: the owner's end, the peer's handoff, and the guard of the
/// named objects (dropped last, so paths are removed when the link goes).
pub struct Link {
    /// The guard of a local end that `on_peer_death` may poison (a file writer):
    /// it goes with the descriptor into the local end's stream. First, so that it
    /// is dropped before `local` closes the descriptor.
    pub write_guard: Option<ipcperf_sys::fd::PoisonGuard>,
    pub kind: MechanismKind,
    pub local: Option<LocalEnd>,
    pub peer: Option<PeerHandoff>,
    pub opts: MechOptions,
    /// Facts found during set-up (e.g. the pipe size granted), for the record.
    pub facts: Vec<(String, String)>,
    pub dir: Option<PrivateDir>,
    /// Guards of other named objects (SysV ids, POSIX names), dropped with the link.
    pub guards: Vec<Box<dyn std::any::Any>>,
    /// What wakes a side blocked on this mechanism when its peer has died (for
    /// mechanisms whose waits cannot be bounded otherwise); run repeatedly by the
    /// session's watchdog until the session ends.
    pub on_peer_death: Vec<Box<dyn Fn() + Send>>,
}

/// The owner's end, opened as far as the link can take it: a descriptor for the
/// mechanism to wrap, or a handoff it opens as a peer would.
pub enum Opened {
    Fd(OwnedFd),
    Handoff(Box<PeerHandoff>),
}

impl Link {
    pub fn new(
        kind: MechanismKind,
        opts: &MechOptions,
        local: Option<LocalEnd>,
        peer: Option<PeerHandoff>,
        dir: Option<PrivateDir>,
    ) -> Link {
        Link {
            kind,
            local,
            peer,
            opts: opts.clone(),
            facts: Vec::new(),
            dir,
            guards: Vec::new(),
            on_peer_death: Vec::new(),
            write_guard: None,
        }
    }

    /// Give the owner's (writing) end away as a handoff: the way back of a round
    /// trip over a one-way mechanism, where the peer writes and the owner reads.
    pub fn local_as_handoff(&mut self) -> Result<PeerHandoff> {
        let local = self
            .local
            .take()
            .ok_or_else(|| Error::Invalid("local end already opened".into()))?;
        // The descriptor leaves this process's keeping: it may no longer be poisoned.
        self.write_guard = None;
        let (addr, fds) = match local {
            LocalEnd::Ready(fd) => (PeerAddr::Fd, vec![fd]),
            LocalEnd::FifoWriter(p) => (PeerAddr::FifoWriter(p), Vec::new()),
            LocalEnd::Handoff(h) => return Ok(*h),
            LocalEnd::UnixListener(_) | LocalEnd::TcpListener(_) => {
                return Err(Error::Invalid(format!(
                    "{} is two-way: it needs no second object",
                    self.kind.name()
                )))
            }
        };
        Ok(PeerHandoff {
            kind: self.kind,
            addr,
            opts: self.opts.clone(),
            fds,
        })
    }

    /// Take the peer's handoff (once).
    pub fn take_peer(&mut self) -> Result<PeerHandoff> {
        self.peer
            .take()
            .ok_or_else(|| Error::Invalid(format!("{} has no peer end", self.kind.name())))
    }

    /// Open the owner's end, waiting at most `timeout_ms` for the peer to
    /// arrive (see [`open_local`], which wraps it in the mechanism's end).
    pub fn open_local_raw(&mut self, timeout_ms: i32) -> Result<Opened> {
        let local = self
            .local
            .take()
            .ok_or_else(|| Error::Invalid("local end already opened".into()))?;
        let fd = match local {
            LocalEnd::Ready(fd) => fd,
            LocalEnd::FifoWriter(path) => {
                let fd = fifo::open_writer(&path, timeout_ms)?;
                if let Some(s) = self.opts.pipe_size {
                    let granted = ipcperf_sys::fd::set_pipe_size(std::os::fd::AsFd::as_fd(&fd), s)?;
                    self.facts
                        .push(("pipe_size_granted".into(), granted.to_string()));
                }
                fd
            }
            LocalEnd::UnixListener(l) => unix::accept(&l, &self.opts, timeout_ms)?,
            LocalEnd::TcpListener(l) => tcp::accept(&l, &self.opts, timeout_ms)?,
            LocalEnd::Handoff(h) => return Ok(Opened::Handoff(h)),
        };
        Ok(Opened::Fd(fd))
    }
}

/// The descriptor of a handoff addressed by descriptor or path: what every
/// descriptor mechanism's `open` starts from.
pub fn open_fd(h: &mut PeerHandoff, timeout_ms: i32) -> Result<OwnedFd> {
    match &h.addr {
        PeerAddr::Fd
        | PeerAddr::Udp { .. }
        | PeerAddr::Vmsplice { .. }
        | PeerAddr::Eventfd { .. } => h
            .fds
            .drain(..)
            .next()
            .ok_or_else(|| Error::Peer("handoff carried no descriptor".into())),
        PeerAddr::Fifo(p) => fifo::open_reader(p),
        PeerAddr::Unix(p) => unix::connect(p, &h.opts),
        PeerAddr::Tcp(a) => tcp::connect(*a, &h.opts, timeout_ms),
        PeerAddr::File(p) => file::open_reader(p),
        PeerAddr::FifoWriter(p) => fifo::open_writer(p, timeout_ms),
        other => Err(Error::Peer(format!(
            "{} cannot open a descriptor from {other:?}",
            h.kind.name()
        ))),
    }
}

/// A descriptor stream from a handoff: the `open` of pipes, FIFOs, sockets, files.
pub fn open_fd_stream(mut h: PeerHandoff, timeout_ms: i32) -> Result<FdStream> {
    let fd = open_fd(&mut h, timeout_ms)?;
    Ok(FdStream::new(
        fd,
        h.kind.name(),
        h.opts.nonblocking,
        h.kind.info().reader_after_writer,
    )?
    .filling_blocks(fills_blocks(h.kind)))
}

/// The descriptor mechanisms whose stream reader fills blocks
/// ([`ByteStream::fills_blocks`]): TCP.
fn fills_blocks(kind: MechanismKind) -> bool {
    kind == MechanismKind::Tcp
}

/// The owner's descriptor as a stream: the `from_local_fd` of descriptor mechanisms.
pub fn local_fd_stream(fd: OwnedFd, link: &mut Link) -> Result<FdStream> {
    Ok(FdStream::new(
        fd,
        link.kind.name(),
        link.opts.nonblocking,
        link.kind.info().reader_after_writer,
    )?
    .filling_blocks(fills_blocks(link.kind))
    .with_guard(link.write_guard.take()))
}

/// The plain descriptor mechanisms' `open` and `from_local_fd`, and the probe of
/// single mode: their ends are [`FdStream`]s.
macro_rules! fd_stream_ends {
    () => {
        type End = $crate::mechanism::FdStream;
        fn open(
            h: $crate::mechanism::PeerHandoff,
            timeout_ms: i32,
        ) -> $crate::error::Result<Self::End> {
            $crate::mechanism::open_fd_stream(h, timeout_ms)
        }
        fn from_local_fd(
            fd: std::os::fd::OwnedFd,
            link: &mut $crate::mechanism::Link,
        ) -> $crate::error::Result<Self::End> {
            $crate::mechanism::local_fd_stream(fd, link)
        }
        fn as_fd_stream(end: &mut Self::End) -> Option<&mut $crate::mechanism::FdStream> {
            Some(end)
        }
    };
}
pub(crate) use fd_stream_ends;
