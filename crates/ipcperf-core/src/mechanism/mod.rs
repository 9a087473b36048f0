//! Mechanisms: each knows how to set up its kernel object, hand one end to a peer
//! (thread or process) and open the other end. None of them times anything.
//!
//! `setup` runs on the side that owns the named objects (the writer's side); it
//! returns a [`Link`]: the local end to open, and a [`PeerHandoff`] — plain data plus
//! file descriptors — that the peer turns into its endpoint with [`open_peer`],
//! in the same process or in another one.

pub mod cma;
pub mod endpoint;
pub mod eventfd;
mod fifo;
mod file;
pub mod msgq;
mod pipe;
pub mod shm;
pub mod shm_ring;
pub mod signal;
mod sockpair;
mod tcp;
pub mod udp;
mod unix;
pub mod vmsplice;

use std::os::fd::OwnedFd;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub use endpoint::{ByteStream, Endpoint, FdStream};
use ipcperf_sys::names::PrivateDir;

/// How long opening or accepting a connection may take before it is an error.
pub const OPEN_TIMEOUT_MS: i32 = 5_000;

/// Every mechanism ipcperf knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MechanismKind {
    Pipe,
    Fifo,
    Unix,
    Tcp,
    File,
    Null,
    Memcpy,
    SysvMsg,
    PosixMq,
    UnixDgram,
    UnixSeqpacket,
    Udp,
    Vmsplice,
    Cma,
    Shm,
    Eventfd,
    Signal,
}

mod info;
pub use info::{MechanismInfo, MECHANISMS};

impl MechanismKind {
    pub fn info(self) -> &'static MechanismInfo {
        MECHANISMS
            .iter()
            .find(|m| m.kind == self)
            .expect("every kind is listed")
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    pub fn from_name(s: &str) -> Option<MechanismKind> {
        MECHANISMS.iter().find(|m| m.name == s).map(|m| m.kind)
    }
}

/// Options that shape a mechanism's kernel object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MechOptions {
    /// F_SETPIPE_SZ for pipe and fifo.
    pub pipe_size: Option<usize>,
    /// TCP_NODELAY.
    pub nodelay: bool,
    /// SO_SNDBUF / SO_RCVBUF on both sockets.
    pub sndbuf: Option<usize>,
    pub rcvbuf: Option<usize>,
    /// Non-blocking descriptors driven by poll(2).
    pub nonblocking: bool,
    /// TCP over ::1 instead of 127.0.0.1.
    pub ipv6: bool,
    /// Where private directories (FIFOs, socket paths, temp files) go.
    pub dir: Option<PathBuf>,
    /// POSIX message queues: the priority every message is sent with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mq_priority: Option<u32>,
    /// shm: how a waiting side is woken (default futex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shm_wake: Option<shm_ring::Wake>,
    /// shm: a named POSIX object the peer opens by name, instead of a memfd.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shm_named: bool,
    /// shm: the ring's capacity in bytes (a power of two; default 1 MiB or 4 blocks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shm_capacity: Option<usize>,
    /// Round trips: the offered load, round trips per second, sent on a fixed
    /// schedule (open loop); None: back to back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_sec: Option<u64>,
    /// shm streams: the writer builds blocks in the ring, the reader reads them there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shm_zero_copy: bool,
    /// shm with `adaptive` wake: how long a wait spins before it sleeps (ns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shm_spin_ns: Option<u64>,
    /// Throughput: the writer's buffer starts this many bytes past a page boundary
    /// (0: page-aligned, like dd's). The reader's buffer stays page-aligned.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub buffer_offset: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl MechOptions {
    /// The options that apply to `kind`, as name/value pairs for the record.
    pub fn describe(&self, kind: MechanismKind) -> Vec<(String, String)> {
        let mut v = Vec::new();
        match kind {
            MechanismKind::Pipe | MechanismKind::Fifo | MechanismKind::Vmsplice => {
                if let Some(s) = self.pipe_size {
                    v.push(("pipe_size".into(), s.to_string()));
                }
            }
            MechanismKind::Tcp | MechanismKind::Unix => {
                if kind == MechanismKind::Tcp {
                    v.push(("ip".into(), if self.ipv6 { "v6" } else { "v4" }.into()));
                    if self.nodelay {
                        v.push(("nodelay".into(), "true".into()));
                    }
                }
                if let Some(s) = self.sndbuf {
                    v.push(("sndbuf".into(), s.to_string()));
                }
                if let Some(s) = self.rcvbuf {
                    v.push(("rcvbuf".into(), s.to_string()));
                }
            }
            MechanismKind::File => {
                v.push(("dir".into(), self.base_dir().display().to_string()));
            }
            MechanismKind::PosixMq => {
                if let Some(p) = self.mq_priority {
                    v.push(("priority".into(), p.to_string()));
                }
            }
            MechanismKind::UnixDgram | MechanismKind::UnixSeqpacket | MechanismKind::Udp => {
                if kind == MechanismKind::Udp {
                    v.push(("ip".into(), if self.ipv6 { "v6" } else { "v4" }.into()));
                }
                if let Some(s) = self.sndbuf {
                    v.push(("sndbuf".into(), s.to_string()));
                }
                if let Some(s) = self.rcvbuf {
                    v.push(("rcvbuf".into(), s.to_string()));
                }
            }
            MechanismKind::Shm => {
                v.push((
                    "memory".into(),
                    if self.shm_named { "posix-shm" } else { "memfd" }.into(),
                ));
                if let Some(c) = self.shm_capacity {
                    v.push(("ring_capacity".into(), c.to_string()));
                }
                if self.shm_zero_copy {
                    v.push(("zero_copy".into(), "true".into()));
                }
                if self.shm_wake == Some(shm_ring::Wake::Adaptive) {
                    let ns = self.shm_spin_ns.unwrap_or(shm_ring::DEFAULT_SPIN_NS);
                    v.push(("spin_ns".into(), ns.to_string()));
                }
            }
            _ => {}
        }
        if self.nonblocking && !kind.info().solo && kind != MechanismKind::Shm {
            v.push(("nonblocking".into(), "poll".into()));
        }
        if self.buffer_offset != 0 {
            v.push(("buffer_offset".into(), self.buffer_offset.to_string()));
        }
        if let Some(r) = self.rate_per_sec {
            v.push(("rate_per_sec".into(), r.to_string()));
        }
        v
    }

    /// How a side waits, for the record's `wait` field: the shm ring's wake-up
    /// strategy, else `poll` (non-blocking descriptors) or `block`.
    pub fn wait_label(&self, kind: MechanismKind) -> String {
        if kind == MechanismKind::Shm {
            return self.shm_wake.unwrap_or(shm_ring::Wake::Futex).name().into();
        }
        if self.nonblocking { "poll" } else { "block" }.into()
    }

    pub fn base_dir(&self) -> PathBuf {
        self.dir
            .clone()
            .unwrap_or_else(ipcperf_sys::names::default_base)
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
    SysvMsg {
        id: i32,
        send_type: i64,
        recv_type: i64,
        max: usize,
    },
    /// A POSIX message queue by name, opened for sending or receiving.
    Mq {
        name: String,
        write: bool,
        max: usize,
    },
    /// A connected UDP socket (the first descriptor); `asker` numbers its messages.
    Udp {
        asker: bool,
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
    /// An shm ring end (its memfd, unless named, and eventfds travel with it).
    Shm {
        ring: shm_ring::RingHandoff,
        producer: bool,
    },
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

/// Why `kind` cannot run a stream with this payload treatment (None: it can).
pub fn refuse_payload(kind: MechanismKind, p: crate::payload::Payload) -> Option<String> {
    match kind {
        MechanismKind::Vmsplice => vmsplice::refuse_payload(p),
        MechanismKind::Eventfd => Some(eventfd::refuse_stream()),
        MechanismKind::Signal => Some(signal::refuse_stream()),
        _ => None,
    }
}

/// Create the kernel object(s) of `kind` for messages of `block` bytes (message
/// mechanisms size their objects by it and refuse a block beyond this system's limit).
pub fn setup_for(kind: MechanismKind, opts: &MechOptions, block: usize) -> Result<Link> {
    match kind {
        MechanismKind::SysvMsg => msgq::setup_sysv(opts, block),
        MechanismKind::PosixMq => msgq::setup_mq(opts, block),
        MechanismKind::UnixDgram | MechanismKind::UnixSeqpacket => {
            sockpair::setup(kind, opts, block)
        }
        MechanismKind::Udp => udp::setup(opts, block),
        MechanismKind::Vmsplice => vmsplice::setup(opts),
        MechanismKind::Cma => cma::setup(opts),
        MechanismKind::Shm => shm::setup(opts, block),
        MechanismKind::Eventfd => eventfd::setup(opts, block),
        MechanismKind::Signal => signal::setup(opts, block, true),
        _ => setup(kind, opts),
    }
}

/// Create the kernel object(s) of `kind`.
pub fn setup(kind: MechanismKind, opts: &MechOptions) -> Result<Link> {
    match kind {
        MechanismKind::Pipe => pipe::setup(opts),
        MechanismKind::Fifo => fifo::setup(opts),
        MechanismKind::Unix => unix::setup(opts),
        MechanismKind::Tcp => tcp::setup(opts),
        MechanismKind::File => file::setup(opts),
        MechanismKind::Null => {
            let fd = ipcperf_sys::fd::open_path(
                std::path::Path::new("/dev/null"),
                ipcperf_sys::fd::OpenFlags::O_WRONLY,
                0,
            )?;
            Ok(Link::new(kind, opts, Some(LocalEnd::Ready(fd)), None, None))
        }
        MechanismKind::Memcpy => Ok(Link::new(kind, opts, None, None, None)),
        MechanismKind::SysvMsg
        | MechanismKind::PosixMq
        | MechanismKind::UnixDgram
        | MechanismKind::UnixSeqpacket
        | MechanismKind::Udp
        | MechanismKind::Vmsplice
        | MechanismKind::Cma
        | MechanismKind::Shm
        | MechanismKind::Eventfd
        | MechanismKind::Signal => Err(Error::Invalid(format!(
            "{} is sized by its message: set it up with setup_for",
            kind.name()
        ))),
    }
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

    /// Open the owner's end, waiting at most `timeout_ms` for the peer to arrive.
    pub fn open_local(&mut self, timeout_ms: i32) -> Result<Endpoint> {
        let local = self
            .local
            .take()
            .ok_or_else(|| Error::Invalid("local end already opened".into()))?;
        let what = self.kind.name();
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
            LocalEnd::Handoff(h) => return open_peer(*h, timeout_ms),
        };
        Ok(Endpoint::Fd(
            FdStream::new(
                fd,
                what,
                self.opts.nonblocking,
                self.kind == MechanismKind::File,
            )?
            .with_guard(self.write_guard.take()),
        ))
    }
}

/// Open the peer's end from its handoff (in this process or another).
pub fn open_peer(mut h: PeerHandoff, timeout_ms: i32) -> Result<Endpoint> {
    let what = h.kind.name();
    let fd = match &h.addr {
        PeerAddr::Fd => h
            .fds
            .drain(..)
            .next()
            .ok_or_else(|| Error::Peer("handoff carried no descriptor".into()))?,
        PeerAddr::Fifo(p) => fifo::open_reader(p)?,
        PeerAddr::Unix(p) => unix::connect(p, &h.opts)?,
        PeerAddr::Tcp(a) => tcp::connect(*a, &h.opts, timeout_ms)?,
        PeerAddr::File(p) => file::open_reader(p)?,
        PeerAddr::FifoWriter(p) => fifo::open_writer(p, timeout_ms)?,
        PeerAddr::SysvMsg {
            id,
            send_type,
            recv_type,
            max,
        } => {
            return Ok(Endpoint::SysvMsg(msgq::SysvMsgEnd::open(
                *id, *send_type, *recv_type, *max,
            )))
        }
        PeerAddr::Cma { sender } => {
            let fds = std::mem::take(&mut h.fds);
            return Ok(Endpoint::Cma(cma::CmaEnd::new(fds, *sender)?));
        }
        PeerAddr::Vmsplice { writer } => {
            let fd = h
                .fds
                .drain(..)
                .next()
                .ok_or_else(|| Error::Peer("handoff carried no descriptor".into()))?;
            return Ok(Endpoint::Vmsplice(vmsplice::VmspliceEnd::new(fd, *writer)?));
        }
        PeerAddr::Udp { asker } => {
            let fd = h
                .fds
                .drain(..)
                .next()
                .ok_or_else(|| Error::Peer("handoff carried no descriptor".into()))?;
            return Ok(Endpoint::Udp(udp::UdpEnd::new(fd, *asker)?));
        }
        PeerAddr::Signal {
            sig,
            sender,
            owner_pid,
            link_id,
        } => {
            return Ok(Endpoint::Signal(signal::SignalEnd::open(
                *sig, *sender, *owner_pid, *link_id,
            )?))
        }
        PeerAddr::Eventfd { sender } => {
            let fd = h
                .fds
                .drain(..)
                .next()
                .ok_or_else(|| Error::Peer("handoff carried no descriptor".into()))?;
            return Ok(Endpoint::Eventfd(eventfd::EventfdEnd::new(fd, *sender)));
        }
        PeerAddr::Shm { ring, producer } => {
            let fds = std::mem::take(&mut h.fds);
            return Ok(Endpoint::Shm(shm_ring::ShmRing::open_end(
                ring, fds, *producer,
            )?));
        }
        PeerAddr::Mq { name, write, .. } => {
            let fd = h.fds.drain(..).next();
            return Ok(Endpoint::Mq(msgq::MqEnd::open(name, *write, fd, &h.opts)?));
        }
    };
    Ok(Endpoint::Fd(FdStream::new(
        fd,
        what,
        h.opts.nonblocking,
        h.kind == MechanismKind::File,
    )?))
}
