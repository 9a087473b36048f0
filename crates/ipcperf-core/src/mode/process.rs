//! A peer in another process: ipcperf itself, started as `ipcperf __peer` with a
//! SOCK_SEQPACKET control socket as its standard input. The handoff travels as one
//! JSON message with the descriptors attached (SCM_RIGHTS); named objects are opened
//! by name. The peer dies with its parent (PR_SET_PDEATHSIG), and a peer that dies
//! shows up here as end-of-file on the control socket, never as a hang.

use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};

use super::protocol::{FromPeer, Job, PeerChannel, PeerHandle, PeerSetup, ToPeer};
use crate::error::{Error, Result};
use ipcperf_sys::cleanup::{register, Registration, Undo};
use ipcperf_sys::clock::now_ns;
use ipcperf_sys::error::Context;
use ipcperf_sys::fdpass;

const MAX_MSG: usize = 1 << 16;
/// Set for a peer started in a new PID namespace (see [`peer_main`]).
const PID_NS_ENV: &str = "IPCPERF_PEER_PID_NS";

pub use crate::kind::PeerCommand;

fn seqpacket_pair() -> Result<(OwnedFd, OwnedFd)> {
    Ok(socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .ctx("socketpair(SOCK_SEQPACKET)", &"control")?)
}

pub struct ProcessPeer {
    ctl: UnixStream,
    child: Child,
    buf: Vec<u8>,
    watch: Arc<Watch>,
    watchdog: Option<std::thread::JoinHandle<()>>,
    armed_at: Arc<AtomicU64>,
    _reg: Registration,
}

/// Shared with the watchdog thread: the deadline of the series under way.
struct Watch {
    deadline_ns: AtomicU64,
    fired_after_ms: AtomicU64,
    stop: AtomicBool,
    /// [`ipcperf_sys::signal::continues`] when the deadline was set: a stop
    /// (Ctrl-Z) since then moves the deadline instead of killing the peer.
    continues: std::sync::atomic::AtomicU32,
}

const NO_DEADLINE: u64 = u64::MAX;

fn watchdog(pid: u32, w: Arc<Watch>, armed_at: Arc<AtomicU64>) {
    // It sleeps until the deadline, not in ticks: a thread that woke every few
    // milliseconds would take those moments from a measured thread on the same
    // CPU. [`PeerHandle::arm`] and the drop unpark it to look again.
    while !w.stop.load(Ordering::Acquire) {
        let d = w.deadline_ns.load(Ordering::Acquire);
        if d == NO_DEADLINE {
            std::thread::park_timeout(Duration::from_secs(1));
            continue;
        }
        let now = now_ns();
        let mark = w.continues.load(Ordering::Acquire);
        if now > d && ipcperf_sys::signal::continued_since(mark) {
            // Stopped and continued (Ctrl-Z, `fg`): the stop is not the peer's.
            // The series gets its whole budget again from now (the runner
            // takes a series that held a stop again); an `arm` meanwhile wins.
            let budget = d.saturating_sub(armed_at.load(Ordering::Acquire));
            let _ = w.continues.compare_exchange(
                mark,
                ipcperf_sys::signal::continues(),
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            let _ = w.deadline_ns.compare_exchange(
                d,
                now_ns().saturating_add(budget),
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            continue;
        }
        if now > d {
            let ms = (d - armed_at.load(Ordering::Acquire)) / 1_000_000;
            w.fired_after_ms.store(ms.max(1), Ordering::Release);
            ipcperf_sys::signal::kill(pid as i32);
            return;
        }
        std::thread::park_timeout(Duration::from_nanos(d - now));
    }
}

/// The directories a case's named objects are in (a FIFO's, a socket's or a
/// file's path, each direction's and each fan-in client's), which a peer in a
/// fresh mount namespace is given.
fn shared_dirs(setup: &PeerSetup) -> Vec<std::path::PathBuf> {
    let more = setup
        .more
        .iter()
        .flat_map(|m| [Some(&m.fwd), m.back.as_ref()]);
    [Some(&setup.handoff), setup.back.as_deref()]
        .into_iter()
        .chain(more)
        .flatten()
        .filter_map(|h| h.addr.dir())
        .fold(Vec::new(), |mut v, d| {
            if !v.contains(&d) {
                v.push(d);
            }
            v
        })
}

impl ProcessPeer {
    pub fn spawn(cmd: &PeerCommand, mut setup: PeerSetup) -> Result<ProcessPeer> {
        let (ours, theirs) = seqpacket_pair()?;
        let across = &setup.handoff.opts.across;
        let mut flags = crate::namespace::flags(across);
        // Across mnt the peer's /tmp is its own, which would hide a program that
        // lives under /tmp: it is run from a descriptor opened here (the exec
        // resolves /proc/self/fd/N before closing it).
        let program = if flags & ipcperf_sys::ns::MNT != 0 {
            let f = std::fs::File::open(&cmd.program)
                .map_err(|e| Error::Peer(format!("cannot open {}: {e}", cmd.program.display())))?;
            Some(f)
        } else {
            None
        };
        let mut command = match &program {
            Some(f) => Command::new(format!(
                "/proc/self/fd/{}",
                std::os::fd::AsRawFd::as_raw_fd(f)
            )),
            None => Command::new(&cmd.program),
        };
        command
            .args(&cmd.args)
            .stdin(Stdio::from(theirs))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        // `--across`: the peer in fresh namespaces of the kinds asked; a network
        // namespace made with the link (TCP's veth pair) is joined instead.
        let netns = match &setup.handoff.opts.netns {
            Some(path) => {
                let f = std::fs::File::open(path).map_err(|e| {
                    Error::Peer(format!("cannot open the network namespace {path}: {e}"))
                })?;
                flags &= !ipcperf_sys::ns::NET;
                Some(std::os::fd::OwnedFd::from(f))
            }
            None => None,
        };
        if let Some(ns) = &netns {
            ipcperf_sys::ns::command_joins_net(&mut command, ns);
        }
        ipcperf_sys::ns::command_unshares(&mut command, flags);
        if flags & ipcperf_sys::ns::MNT != 0 {
            // As a container: a /tmp of its own, holding only the case's directory.
            ipcperf_sys::ns::command_private_tmp(&mut command, &shared_dirs(&setup));
        }
        if flags & ipcperf_sys::ns::PID != 0 {
            // A new PID namespace holds the children of the process that made it:
            // the peer forks once and its child, PID 1 there, does the job.
            command.env(PID_NS_ENV, "1");
        }
        // Held until the peer is registered (an interruption waits for it, then
        // kills it).
        let making = ipcperf_sys::cleanup::creating();
        let child = command.spawn().map_err(|e| {
            Error::Peer(format!(
                "cannot start peer process {}{}: {e}",
                cmd.program.display(),
                if across.is_empty() {
                    String::new()
                } else {
                    format!(
                        " in new {} namespaces",
                        crate::namespace::Namespace::list_name(across)
                    )
                }
            ))
        })?;
        let reg = register(Undo::Kill(child.id() as i32));
        drop(making);
        let ctl = UnixStream::from(ours);
        let mut fds = std::mem::take(&mut setup.handoff.fds);
        if let Some(b) = setup.back.as_mut() {
            setup.handoff_fds = Some(fds.len());
            fds.append(&mut b.fds);
        }
        // A fan-in server's other clients: each one's descriptors after these.
        for m in &mut setup.more {
            m.fwd_fds = m.fwd.fds.len();
            fds.append(&mut m.fwd.fds);
            if let Some(b) = m.back.as_mut() {
                m.back_fds = b.fds.len();
                fds.append(&mut b.fds);
            }
        }
        // A replay's script: its file's descriptor last.
        if let Some(f) = setup.script.as_mut().and_then(|s| s.file.take()) {
            fds.push(OwnedFd::from(f));
        }
        let msg = serde_json::to_vec(&ToPeer::Hello(setup)).expect("setup serializes");
        let borrowed: Vec<_> = fds.iter().map(|f| f.as_fd()).collect();
        let watch = Arc::new(Watch {
            deadline_ns: AtomicU64::new(NO_DEADLINE),
            fired_after_ms: AtomicU64::new(0),
            continues: std::sync::atomic::AtomicU32::new(ipcperf_sys::signal::continues()),
            stop: AtomicBool::new(false),
        });
        let armed_at = Arc::new(AtomicU64::new(0));
        let pid = child.id();
        let (w2, a2) = (watch.clone(), armed_at.clone());
        // Its own descriptor table: the thread that measures must not share one.
        let watchdog =
            ipcperf_sys::fd::spawn_helper("ipcperf-watchdog", move || watchdog(pid, w2, a2)).ok();
        let mut peer = ProcessPeer {
            ctl,
            child,
            buf: vec![0; MAX_MSG],
            watch,
            watchdog,
            armed_at,
            _reg: reg,
        };
        if let Err(e) = fdpass::send_with_fds(&peer.ctl, &msg, &borrowed) {
            return Err(peer.death().unwrap_or(Error::Sys(e)));
        }
        // Our copies of the peer's descriptors close here: the peer holds the only ones,
        // so its death is seen as end-of-file or a broken pipe on our side.
        drop(fds);
        Ok(peer)
    }

    /// If the peer has died (or dies within a second), say how.
    fn death(&mut self) -> Option<Error> {
        let fired = self.watch.fired_after_ms.load(Ordering::Acquire);
        if fired > 0 {
            let _ = self.child.wait();
            return Some(Error::Timeout(format!(
                "peer process {} did not finish the series within {} ms; killed it",
                self.child.id(),
                fired
            )));
        }
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            match self.child.try_wait() {
                Ok(Some(st)) => return Some(Error::Peer(describe_exit(self.child.id(), st))),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(1))
                }
                _ => return None,
            }
        }
    }

    /// The control socket, to poll beside other descriptors (`ipcperf serve`).
    pub fn control(&self) -> std::os::fd::BorrowedFd<'_> {
        self.ctl.as_fd()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

fn describe_exit(pid: u32, st: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (st.code(), st.signal()) {
        (_, Some(sig)) => {
            let name = nix::sys::signal::Signal::try_from(sig)
                .map(|s| s.as_str().to_string())
                .unwrap_or_else(|_| sig.to_string());
            format!("peer process {pid} was killed by {name}")
        }
        (Some(c), _) => format!("peer process {pid} exited with status {c}"),
        _ => format!("peer process {pid} ended"),
    }
}

impl PeerHandle for ProcessPeer {
    fn send(&mut self, m: ToPeer) -> Result<()> {
        let msg = serde_json::to_vec(&m).expect("message serializes");
        if self.ctl.write_all(&msg).is_err() {
            return Err(self
                .death()
                .unwrap_or_else(|| Error::Peer("the control socket broke".into())));
        }
        Ok(())
    }

    fn recv(&mut self, timeout_ms: i32) -> Result<FromPeer> {
        let mut mark = ipcperf_sys::signal::continues();
        while !ipcperf_sys::fd::wait_ready(self.ctl.as_fd(), false, timeout_ms)? {
            // A stop (Ctrl-Z) ran the wait out, the peer's as much as ours:
            // wait again from the continue.
            if ipcperf_sys::signal::continued_since(mark) {
                mark = ipcperf_sys::signal::continues();
                continue;
            }
            return Err(Error::Timeout(format!(
                "peer process {} did not answer within {timeout_ms} ms",
                self.child.id()
            )));
        }
        // A read error here is the peer's death as surely as end-of-file.
        let n = self.ctl.read(&mut self.buf).unwrap_or_default();
        if n == 0 {
            return Err(self
                .death()
                .unwrap_or_else(|| Error::Peer("the peer closed its control socket".into())));
        }
        serde_json::from_slice(&self.buf[..n])
            .map_err(|e| Error::Peer(format!("bad message from the peer: {e}")))
    }

    fn arm(&mut self, deadline_ns: Option<u64>) {
        self.armed_at.store(now_ns(), Ordering::Release);
        self.watch
            .continues
            .store(ipcperf_sys::signal::continues(), Ordering::Release);
        self.watch
            .deadline_ns
            .store(deadline_ns.unwrap_or(NO_DEADLINE), Ordering::Release);
        if let Some(w) = &self.watchdog {
            w.thread().unpark();
        }
    }

    fn finish(&mut self) -> Result<()> {
        let _ = self.send(ToPeer::Quit);
        let deadline = Instant::now() + Duration::from_secs(2);
        // Readable once the peer has exited: the wait ends then, not at the
        // next poll (a set-up-timed series counts the close).
        let exited = ipcperf_sys::signal::pidfd_open(self.child.id() as i32).ok();
        loop {
            match self.child.try_wait() {
                Ok(Some(st)) if st.success() => return Ok(()),
                Ok(Some(st)) => return Err(Error::Peer(describe_exit(self.child.id(), st))),
                Ok(None) if Instant::now() < deadline => match &exited {
                    Some(fd) => {
                        let _ = ipcperf_sys::fd::wait_ready(fd.as_fd(), false, 50);
                    }
                    None => std::thread::sleep(Duration::from_millis(1)),
                },
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err(Error::Timeout(format!(
                        "peer process {} did not exit within 2 s of quit; killed",
                        self.child.id()
                    )));
                }
            }
        }
    }
}

impl Drop for ProcessPeer {
    fn drop(&mut self) {
        self.watch.stop.store(true, Ordering::Release);
        if let Some(w) = self.watchdog.take() {
            w.thread().unpark();
            let _ = w.join();
        }
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

struct SocketChannel {
    ctl: UnixStream,
    buf: Vec<u8>,
}

impl PeerChannel for SocketChannel {
    fn send(&mut self, m: FromPeer) -> Result<()> {
        let msg = serde_json::to_vec(&m).expect("message serializes");
        self.ctl
            .write_all(&msg)
            .map_err(|e| Error::Peer(format!("the owner is gone: {e}")))
    }
    fn owner_process(&self) -> Option<i32> {
        // The owner started us (and we die with it: PR_SET_PDEATHSIG).
        Some(nix::unistd::getppid().as_raw())
    }

    fn recv(&mut self) -> Result<ToPeer> {
        let n = self
            .ctl
            .read(&mut self.buf)
            .map_err(|e| Error::Peer(format!("the owner is gone: {e}")))?;
        if n == 0 {
            return Err(Error::Peer("the owner closed the control socket".into()));
        }
        serde_json::from_slice(&self.buf[..n])
            .map_err(|e| Error::Peer(format!("bad message from the owner: {e}")))
    }
}

/// The peer process's whole life: read the handoff from standard input (the control
/// socket), serve until told to quit. Dies with its parent.
pub fn peer_main(job: Job) -> Result<()> {
    // ipcperf hands its peer a Unix socket as standard input; anything else is
    // somebody typing `ipcperf __peer`.
    let is_socket = nix::sys::stat::fstat(std::io::stdin().as_fd()).is_ok_and(|st| {
        nix::sys::stat::SFlag::from_bits_truncate(st.st_mode) & nix::sys::stat::SFlag::S_IFMT
            == nix::sys::stat::SFlag::S_IFSOCK
    });
    if !is_socket {
        return Err(Error::Invalid(
            "`__peer` is internal: ipcperf starts it itself, with a control socket on \
             standard input (try `ipcperf run` or `ipcperf latency`)"
                .into(),
        ));
    }
    let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL);
    if std::env::var_os(PID_NS_ENV).is_some() {
        ipcperf_sys::ns::become_pid_one().ctx("fork", &"a new PID namespace")?;
    }
    let fd = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .ctx("dup", &"standard input")?;
    let ctl = UnixStream::from(fd);
    let (hello, fds) = fdpass::recv_with_fds(&ctl)?;
    if hello.is_empty() {
        return Err(Error::Peer(
            "no handoff on standard input: `__peer` is started by ipcperf itself".into(),
        ));
    }
    let msg: ToPeer =
        serde_json::from_slice(&hello).map_err(|e| Error::Peer(format!("bad handoff: {e}")))?;
    let ToPeer::Hello(mut setup) = msg else {
        return Err(Error::Peer("the first message was not a handoff".into()));
    };
    let mut fds = fds;
    if let Some(s) = setup.script.as_mut() {
        let f = fds.pop().ok_or_else(|| {
            Error::Peer("the handoff lost the script's descriptor on the way".into())
        })?;
        s.file = Some(std::fs::File::from(f));
    }
    let more: usize = setup.more.iter().map(|m| m.fwd_fds + m.back_fds).sum();
    if more > fds.len() {
        return Err(Error::Peer(
            "the handoff lost descriptors on the way".into(),
        ));
    }
    let mut rest = fds.split_off(fds.len() - more);
    for m in &mut setup.more {
        let tail = rest.split_off(m.fwd_fds);
        m.fwd.fds = std::mem::replace(&mut rest, tail);
        if let Some(b) = m.back.as_mut() {
            let tail = rest.split_off(m.back_fds);
            b.fds = std::mem::replace(&mut rest, tail);
        }
    }
    setup.handoff.fds = fds;
    if let (Some(n), Some(b)) = (setup.handoff_fds, setup.back.as_mut()) {
        if n > setup.handoff.fds.len() {
            return Err(Error::Peer(
                "the handoff lost descriptors on the way".into(),
            ));
        }
        b.fds = setup.handoff.fds.split_off(n);
    }
    let mut ch = SocketChannel {
        ctl,
        buf: vec![0u8; MAX_MSG],
    };
    job(&mut ch, setup)
}
