//! The kernel objects of each primitive, and the two kinds of end the timed loops use:
//! a [`Lock`] (request/release) and a [`Channel`] (set/clear: hand a token to the
//! other side and wait for it to come back).
//!
//! The owner creates every object ([`Objects::create`]); the other side (a thread
//! or a process) opens its ends from a serializable [`SyncSetup`] plus descriptors.
//! Every wait that can block is bounded: locks by [`WAIT_TIMEOUT`], set/clear
//! waits by [`WAIT_LIMIT`], looking every [`WAIT_TICK`] whether the other process
//! still runs; pipe reads end with end-of-file when the other side dies.

use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Primitive;

mod channels;
mod locks;
use crate::error::{Error, Result};
pub use channels::*;
use ipcperf_sys::eventfd::Eventfd as EventFd;
use ipcperf_sys::futex::{self, FutexWait};
use ipcperf_sys::lock::{locks_on, LockFile};
use ipcperf_sys::mutex::{Locked, RobustMutex};
use ipcperf_sys::names::PrivateDir;
use ipcperf_sys::sem::{NamedSem, ShmSem, SysvSemSet};
use ipcperf_sys::shm::SharedMem;
pub use locks::*;

/// The longest an uncontended lock may take before it is an error.
pub const WAIT_TIMEOUT: Duration = Duration::from_secs(1);
/// Set/clear waits for the other side in ticks of this length; after each tick
/// the other process is looked at, so its death is an error within a tick.
pub const WAIT_TICK: Duration = Duration::from_millis(250);
/// The longest a set/clear wait lasts while the other side is still alive (a
/// machine so loaded that a token takes this long gives no figures worth keeping).
pub const WAIT_LIMIT: Duration = Duration::from_secs(10);

pub use ipcperf_sys::names::process_running;

/// After a wait tick ran out: an error if the other process has died or the wait
/// has lasted [`WAIT_LIMIT`]; otherwise wait another tick.
#[cold]
fn another_tick(other: Option<i32>, ticks: &mut u32) -> Result<()> {
    *ticks += 1;
    if let Some(pid) = other {
        // Our child is asked of the kernel; the owner, from its peer, of /proc.
        if !ipcperf_sys::names::child_running(pid) {
            return Err(Error::Peer(format!(
                "process {pid} on the other side died while we waited for its token"
            )));
        }
    }
    if WAIT_TICK * *ticks >= WAIT_LIMIT {
        return Err(no_token());
    }
    Ok(())
}

// Layout of the shared page: one cache line per object.
const SHM_LEN: usize = 4096;
const OFF_FUTEX_LOCK: usize = 0;
const OFF_FUTEX_TO_B: usize = 64;
const OFF_FUTEX_TO_A: usize = 128;
const OFF_SEM_LOCK: usize = 192;
const OFF_SEM_TO_B: usize = 256;
const OFF_SEM_TO_A: usize = 320;
const OFF_MUTEX: usize = 384;

// SysV set and named semaphores: lock, to-B, to-A.
const S_LOCK: u16 = 0;
const S_TO_B: u16 = 1;
const S_TO_A: u16 = 2;

/// Which side of a set/clear exchange: A (the owner) sends first, B answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Side {
    A,
    B,
}

pub use crate::kind::SyncSetup;

/// The owner's objects: guards that remove every named object on drop.
pub struct Objects {
    pub setup: SyncSetup,
    mem: Option<Arc<SharedMem>>,
    sysv: Option<Arc<SysvSemSet>>,
    named: Vec<Arc<NamedSem>>,
    // Dropped after the lock files opened in it.
    dir: Option<PrivateDir>,
    efds: Vec<Arc<EventFd>>,
    /// The initializing owners of the semaphores / mutex in shared memory (they
    /// destroy them on drop, after every end is gone).
    _shm_sems: Vec<ShmSem>,
    _mutex: Option<RobustMutex>,
    /// Pipe ends the owner keeps: to-B write end, to-A read end.
    pipes: Vec<OwnedFd>,
    /// Descriptors for the other side, until taken.
    peer_fds: Vec<OwnedFd>,
}

impl Objects {
    /// Create the objects of `p`, in their first state: the lock free, no token in flight.
    pub fn create(p: Primitive, base: &std::path::Path) -> Result<Objects> {
        let mut o = Objects {
            setup: SyncSetup {
                primitive: p,
                sysv_id: None,
                names: Vec::new(),
                lock_path: None,
                shm_len: 0,
                fd_count: 0,
                untimed: false,
            },
            mem: None,
            sysv: None,
            named: Vec::new(),
            dir: None,
            efds: Vec::new(),
            _shm_sems: Vec::new(),
            _mutex: None,
            pipes: Vec::new(),
            peer_fds: Vec::new(),
        };
        match p {
            Primitive::SysvSem | Primitive::SysvSemOneCall => {
                let s = SysvSemSet::create(&[1, 0, 0])?;
                o.setup.sysv_id = Some(s.id());
                o.sysv = Some(Arc::new(s));
            }
            Primitive::PosixSemNamed => {
                for (tag, v) in [("sem-lock", 1), ("sem-to-b", 0), ("sem-to-a", 0)] {
                    let s = NamedSem::create(tag, v)?;
                    o.setup.names.push(s.name().to_string());
                    o.named.push(Arc::new(s));
                }
            }
            Primitive::PosixSem | Primitive::Mutex | Primitive::Futex => {
                let mem = Arc::new(SharedMem::memfd("sync", SHM_LEN)?);
                match p {
                    Primitive::PosixSem => {
                        o._shm_sems = vec![
                            ShmSem::init(mem.clone(), OFF_SEM_LOCK, 1)?,
                            ShmSem::init(mem.clone(), OFF_SEM_TO_B, 0)?,
                            ShmSem::init(mem.clone(), OFF_SEM_TO_A, 0)?,
                        ];
                    }
                    Primitive::Mutex => {
                        o._mutex = Some(RobustMutex::init(mem.clone(), OFF_MUTEX)?);
                    }
                    _ => {}
                }
                o.peer_fds.push(mem.dup_fd()?);
                o.setup.shm_len = SHM_LEN;
                o.mem = Some(mem);
            }
            Primitive::Eventfd => {
                for v in [1, 0, 0] {
                    let e = EventFd::semaphore(v)?;
                    o.peer_fds.push(e.try_clone_fd()?);
                    o.efds.push(Arc::new(e));
                }
            }
            Primitive::Pipe => {
                let (b_r, a_w) = ipcperf_sys::fd::pipe()?; // to-B
                let (a_r, b_w) = ipcperf_sys::fd::pipe()?; // to-A
                o.pipes = vec![a_w, a_r];
                o.peer_fds = vec![b_r, b_w];
            }
            Primitive::Flock | Primitive::Fcntl => {
                let dir = PrivateDir::create(base, "sync")?;
                let path = dir.join("lock");
                drop(LockFile::open(&path)?);
                o.setup.lock_path = Some(path);
                o.dir = Some(dir);
            }
        }
        o.setup.fd_count = o.peer_fds.len();
        Ok(o)
    }

    /// The descriptors for the other side (once; later calls get duplicates, so a
    /// second peer, e.g. the holder of a robustness test, can have them too).
    pub fn peer_fds(&mut self) -> Result<Vec<OwnedFd>> {
        if !self.peer_fds.is_empty() && self.setup.primitive == Primitive::Pipe {
            // The owner must not keep the peer's pipe ends, or it would never see EOF.
            return Ok(std::mem::take(&mut self.peer_fds));
        }
        self.peer_fds
            .iter()
            .map(|f| {
                f.try_clone()
                    .map_err(|e| Error::Sys(ipcperf_sys::SysError::from_io("dup", "handoff", &e)))
            })
            .collect()
    }

    /// The owner's lock end.
    pub fn lock(&self) -> Result<AnyLock> {
        open_lock(
            &self.setup,
            self.mem.clone(),
            self.sysv.clone(),
            &self.named,
            &self.efds,
        )
    }

    /// The owner's channel end (side A).
    pub fn channel(&mut self) -> Result<AnyChannel> {
        let pipes = std::mem::take(&mut self.pipes);
        open_channel(
            Side::A,
            &self.setup,
            self.mem.clone(),
            self.sysv.clone(),
            &self.named,
            &self.efds,
            pipes,
        )
    }

    /// The other side's channel end (side B) opened here, for threads that share
    /// this process's objects directly (tests).
    pub fn channel_b(&mut self) -> Result<AnyChannel> {
        let fds = self.peer_fds()?;
        Ends::open(&self.setup, fds)?.channel(Side::B)
    }

    /// Names of every named object, for checks that they are gone.
    pub fn named_objects(&self) -> NamedObjects {
        NamedObjects {
            sysv_id: self.setup.sysv_id,
            sem_names: self.setup.names.clone(),
            dir: self.dir.as_ref().map(|d| d.path().to_path_buf()),
        }
    }
}

/// What an [`Objects`] created by name, to check it is all gone after drop.
#[derive(Debug, Clone)]
pub struct NamedObjects {
    pub sysv_id: Option<i32>,
    pub sem_names: Vec<String>,
    pub dir: Option<PathBuf>,
}

impl NamedObjects {
    /// Every object still present, described.
    pub fn still_present(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(id) = self.sysv_id {
            if ipcperf_sys::sem::sysv_sem_exists(id) {
                v.push(format!("SysV semaphore set {id}"));
            }
        }
        for n in &self.sem_names {
            if ipcperf_sys::sem::named_sem_exists(n) {
                v.push(format!("POSIX semaphore {n}"));
            }
        }
        if let Some(d) = &self.dir {
            if d.exists() {
                v.push(format!("directory {}", d.display()));
            }
        }
        v
    }
}

/// The other side's objects, opened from a [`SyncSetup`] and its descriptors.
pub struct Ends {
    setup: SyncSetup,
    mem: Option<Arc<SharedMem>>,
    sysv: Option<Arc<SysvSemSet>>,
    named: Vec<Arc<NamedSem>>,
    efds: Vec<Arc<EventFd>>,
    pipes: Vec<OwnedFd>,
}

impl Ends {
    pub fn open(setup: &SyncSetup, mut fds: Vec<OwnedFd>) -> Result<Ends> {
        if fds.len() != setup.fd_count {
            return Err(Error::Peer(format!(
                "the handoff carried {} descriptors, {} expected",
                fds.len(),
                setup.fd_count
            )));
        }
        let mut e = Ends {
            setup: setup.clone(),
            mem: None,
            sysv: None,
            named: Vec::new(),
            efds: Vec::new(),
            pipes: Vec::new(),
        };
        match setup.primitive {
            Primitive::SysvSem | Primitive::SysvSemOneCall => {
                let id = setup
                    .sysv_id
                    .ok_or_else(|| Error::Peer("no SysV id in the handoff".into()))?;
                e.sysv = Some(Arc::new(SysvSemSet::open(id, 3)?));
            }
            Primitive::PosixSemNamed => {
                for n in &setup.names {
                    e.named.push(Arc::new(NamedSem::open(n)?));
                }
            }
            Primitive::PosixSem | Primitive::Mutex | Primitive::Futex => {
                let fd = fds.remove(0);
                e.mem = Some(Arc::new(SharedMem::from_fd(fd, setup.shm_len)?));
            }
            Primitive::Eventfd => {
                e.efds = fds
                    .into_iter()
                    .map(|f| Arc::new(EventFd::from_fd(f)))
                    .collect()
            }
            Primitive::Pipe => e.pipes = fds,
            Primitive::Flock | Primitive::Fcntl => {}
        }
        Ok(e)
    }

    pub fn lock(&self) -> Result<AnyLock> {
        open_lock(
            &self.setup,
            self.mem.clone(),
            self.sysv.clone(),
            &self.named,
            &self.efds,
        )
    }

    pub fn channel(&mut self, side: Side) -> Result<AnyChannel> {
        let pipes = std::mem::take(&mut self.pipes);
        open_channel(
            side,
            &self.setup,
            self.mem.clone(),
            self.sysv.clone(),
            &self.named,
            &self.efds,
            pipes,
        )
    }
}

// ---------------------------------------------------------------- locks
