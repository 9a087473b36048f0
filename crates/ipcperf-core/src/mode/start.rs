//! Starting the other side of a case, the same way for every workload: a thread
//! doing the job it is handed, or an `ipcperf __peer` process (which finds its
//! job by the role in its setup); the watchdog that wakes the survivor when it
//! dies; and the wait for its hello.

use super::process::ProcessPeer;
use super::protocol::{FromPeer, Job, PeerHandle, PeerSetup};
use super::thread::ThreadPeer;
use super::watchdog::{WakeUp, Watchdog};
use super::Mode;
use crate::error::{Error, Result};
use crate::kind::PeerCommand;
use crate::mechanism::other_side::{self, Alive};
use crate::mechanism::OPEN_TIMEOUT_MS;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// A started peer: the handle to talk to it, its pid (a process), and the
/// watchdog that runs `on_death` once it is gone.
pub struct Started {
    pub handle: Box<dyn PeerHandle>,
    pub pid: Option<u32>,
    pub watchdog: Option<Watchdog>,
    /// What the record should say of where the peer runs (another machine's).
    pub facts: Vec<(String, String)>,
    /// `--peer`: the other machine.
    pub peer_machine: Option<Box<crate::machine::Machine>>,
    /// Whether the peer still lives (a local one), for the owner's waits while
    /// it opens its end ([`Started::open_then_ready`]).
    alive: Option<Alive>,
    /// `--peer`: our data sockets, shut down by the watchdog once the other
    /// machine's job is gone ([`Started::cut_on_death`]).
    cut: Option<Cut>,
}

/// Descriptors to shut down when the peer is gone.
type Cut = Arc<std::sync::Mutex<Vec<std::os::fd::OwnedFd>>>;

/// Start the peer: on the machine `--peer` names when there is one (its
/// `ipcperf serve` runs the job in a process of its own), else as [`start`].
pub fn start_in(
    remote: Option<&super::remote::Remote>,
    mode: Mode,
    cmd: &PeerCommand,
    setup: PeerSetup,
    job: Job,
    on_death: Vec<WakeUp>,
) -> Result<Started> {
    let Some(r) = remote else {
        return start(mode, cmd, setup, job, on_death);
    };
    let p = super::remote::RemotePeer::start(r, setup)?;
    let m = &p.machine;
    let facts = vec![
        (
            "peer_host".into(),
            format!(
                "{} at {} (Linux {}, {} CPUs, {})",
                m.hostname, p.addr, m.kernel, m.cpus, m.cpu_model
            ),
        ),
        ("peer_ipcperf".into(), p.version.clone()),
        ("path".into(), super::remote::path_of(r.local_ip()?, p.addr)),
        ("path_rtt_ns".into(), p.rtt_ns.to_string()),
    ];
    let machine = Box::new(p.machine.clone());
    let alive = p.alive();
    // A write into nothing never fails (a datagram's), nor a read that has a
    // bound of its own soon enough: once the job there is gone (its control
    // connection closed, broken, timed out, or its failure waiting in it), our
    // data sockets are shut down, so the timed loop's next call fails, within
    // the watchdog's 50 ms of it, and the case says why.
    let cut = Cut::default();
    let watchdog = alive.clone().and_then(|alive| {
        let fds = cut.clone();
        let shut: WakeUp = Box::new(move || {
            for fd in fds.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                let how = nix::sys::socket::Shutdown::Both;
                let _ = nix::sys::socket::shutdown(std::os::fd::AsRawFd::as_raw_fd(fd), how);
            }
        });
        let mut actions = on_death;
        actions.push(shut);
        Watchdog::start_with(move || !alive(), actions)
    });
    Ok(Started {
        handle: Box::new(p),
        pid: None,
        watchdog,
        facts,
        peer_machine: Some(machine),
        alive,
        cut: Some(cut),
    })
}

/// Start the peer of a two-sided case: a process for [`Mode::Processes`], else a
/// thread doing `job`.
pub fn start(
    mode: Mode,
    cmd: &PeerCommand,
    setup: PeerSetup,
    job: Job,
    on_death: Vec<WakeUp>,
) -> Result<Started> {
    if mode == Mode::Processes {
        let p = ProcessPeer::spawn(cmd, setup)?;
        let pid = p.pid();
        // A zombie is gone too: the peer that failed has said why before it exits.
        let alive: Alive = Arc::new(move || ipcperf_sys::names::child_running(pid as i32));
        Ok(Started {
            alive: Some(alive),
            watchdog: Watchdog::start(pid, on_death),
            pid: Some(pid),
            handle: Box::new(p),
            facts: Vec::new(),
            peer_machine: None,
            cut: None,
        })
    } else {
        let t = ThreadPeer::spawn_job(setup, job)?;
        let done = t.done_flag();
        let alive: Alive = Arc::new(move || !done.load(Ordering::Acquire));
        Ok(Started {
            alive: Some(alive),
            watchdog: Watchdog::for_thread(t.done_flag(), on_death),
            pid: None,
            handle: Box::new(t),
            facts: Vec::new(),
            peer_machine: None,
            cut: None,
        })
    }
}

impl Started {
    /// `--peer`: shut `end`'s socket down once the other machine's job is gone
    /// (a second descriptor of it, [`ByteStream::cut_handle`]); nothing for a
    /// local peer, whose death its own end hears of.
    ///
    /// [`ByteStream::cut_handle`]: crate::mechanism::ByteStream::cut_handle
    pub fn cut_on_death(&self, end: &impl crate::mechanism::ByteStream) {
        if let (Some(cut), Some(fd)) = (&self.cut, end.cut_handle()) {
            cut.lock().unwrap_or_else(|e| e.into_inner()).push(fd);
        }
    }

    /// Open our own end with `open` while the peer opens its, then wait for its
    /// hello ([`Started::ready`]). A peer that fails or dies meanwhile ends our
    /// waits for it at once ([`other_side`]), not when their bound runs out.
    pub fn open_then_ready<T>(&mut self, open: impl FnOnce() -> Result<T>) -> Result<T> {
        let opened = other_side::watching(self.alive.clone(), open);
        self.ready(opened)
    }

    /// Wait for the peer's hello; `opened` is our own end, opened meanwhile. The
    /// peer's account of a failure comes first: it says more than ours.
    pub fn ready<T>(&mut self, opened: Result<T>) -> Result<T> {
        let hello = self.handle.recv(OPEN_TIMEOUT_MS * 2);
        match (opened, hello) {
            (Ok(t), Ok(FromPeer::Ready { .. })) => Ok(t),
            (_, Ok(FromPeer::Failed { message })) => Err(Error::Peer(message)),
            (_, Err(e)) => Err(e),
            (Err(e), _) => Err(e),
            (_, Ok(other)) => Err(Error::Peer(format!("unexpected message {other:?}"))),
        }
    }
}
