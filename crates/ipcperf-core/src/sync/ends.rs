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
use crate::error::{Error, Result};
use ipcperf_sys::eventfd::Eventfd as EventFd;
use ipcperf_sys::futex::{self, FutexWait};
use ipcperf_sys::lock::{locks_on, LockFile};
use ipcperf_sys::mutex::{Locked, RobustMutex};
use ipcperf_sys::names::PrivateDir;
use ipcperf_sys::sem::{NamedSem, ShmSem, SysvSemSet};
use ipcperf_sys::shm::SharedMem;

/// The longest an uncontended lock may take before it is an error.
pub const WAIT_TIMEOUT: Duration = Duration::from_secs(1);
/// Set/clear waits for the other side in ticks of this length; after each tick
/// the other process is looked at, so its death is an error within a tick.
pub const WAIT_TICK: Duration = Duration::from_millis(250);
/// The longest a set/clear wait lasts while the other side is still alive (a
/// machine so loaded that a token takes this long gives no figures worth keeping).
pub const WAIT_LIMIT: Duration = Duration::from_secs(10);

/// Whether a process runs (exists and is not a zombie waiting to be reaped).
pub fn process_running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(st) => st
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|c| c != 'Z' && c != 'X'),
        Err(_) => false,
    }
}

/// After a wait tick ran out: an error if the other process has died or the wait
/// has lasted [`WAIT_LIMIT`]; otherwise wait another tick.
#[cold]
fn another_tick(other: Option<i32>, ticks: &mut u32) -> Result<()> {
    *ticks += 1;
    if let Some(pid) = other {
        if !process_running(pid) {
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
            Primitive::SysvSem => {
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
            Primitive::SysvSem => {
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

/// Request/release: acquire and release, uncontended in the timed loop.
pub trait Lock {
    fn acquire(&mut self) -> Result<()>;
    fn release(&mut self) -> Result<()>;
    /// Whether the lock is free now (its first state), looked at from outside.
    fn is_free(&mut self) -> Result<bool>;
    /// Acquire, waiting at most `timeout`: None when it ran out; Some(note) says how
    /// it was obtained when that is worth telling (e.g. EOWNERDEAD recovered).
    fn acquire_within(&mut self, timeout: Duration) -> Result<Option<Option<String>>>;
}

/// Poll `try_once` every 50 µs until it succeeds or `timeout` runs out (for locks
/// with no timed form: flock and fcntl).
fn poll_until(timeout: Duration, mut try_once: impl FnMut() -> Result<bool>) -> Result<bool> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if try_once()? {
            return Ok(true);
        }
        if std::time::Instant::now() >= deadline {
            return Ok(false);
        }
        std::thread::sleep(Duration::from_micros(50));
    }
}

pub struct SysvLock(Arc<SysvSemSet>);
impl Lock for SysvLock {
    #[inline]
    fn acquire(&mut self) -> Result<()> {
        // SEM_UNDO: the kernel gives the semaphore back if this process dies holding it.
        if self.0.op(S_LOCK, -1, true, Some(WAIT_TIMEOUT))? {
            Ok(())
        } else {
            Err(timeout("the SysV semaphore"))
        }
    }
    #[inline]
    fn release(&mut self) -> Result<()> {
        self.0.op(S_LOCK, 1, true, None)?;
        Ok(())
    }
    fn is_free(&mut self) -> Result<bool> {
        Ok(self.0.value(S_LOCK)? == 1)
    }
    fn acquire_within(&mut self, t: Duration) -> Result<Option<Option<String>>> {
        Ok(self.0.op(S_LOCK, -1, true, Some(t))?.then_some(None))
    }
}

/// The SysV lock taken without SEM_UNDO (robustness only: what happens without it).
pub struct SysvLockNoUndo(pub Arc<SysvSemSet>);
impl Lock for SysvLockNoUndo {
    fn acquire(&mut self) -> Result<()> {
        if self.0.op(S_LOCK, -1, false, Some(WAIT_TIMEOUT))? {
            Ok(())
        } else {
            Err(timeout("the SysV semaphore"))
        }
    }
    fn release(&mut self) -> Result<()> {
        self.0.op(S_LOCK, 1, false, None)?;
        Ok(())
    }
    fn is_free(&mut self) -> Result<bool> {
        Ok(self.0.value(S_LOCK)? == 1)
    }
    fn acquire_within(&mut self, t: Duration) -> Result<Option<Option<String>>> {
        Ok(self.0.op(S_LOCK, -1, false, Some(t))?.then_some(None))
    }
}

pub struct NamedSemLock(Arc<NamedSem>);
impl Lock for NamedSemLock {
    #[inline]
    fn acquire(&mut self) -> Result<()> {
        // Uncontended in the timed loop: sem_wait's user-space fast path; it cannot block.
        self.0.wait()?;
        Ok(())
    }
    #[inline]
    fn release(&mut self) -> Result<()> {
        self.0.post()?;
        Ok(())
    }
    fn is_free(&mut self) -> Result<bool> {
        Ok(self.0.value()? == 1)
    }
    fn acquire_within(&mut self, t: Duration) -> Result<Option<Option<String>>> {
        Ok(self.0.wait_timeout(t)?.then_some(None))
    }
}

pub struct ShmSemLock(ShmSem);
impl Lock for ShmSemLock {
    #[inline]
    fn acquire(&mut self) -> Result<()> {
        self.0.wait()?;
        Ok(())
    }
    #[inline]
    fn release(&mut self) -> Result<()> {
        self.0.post()?;
        Ok(())
    }
    fn is_free(&mut self) -> Result<bool> {
        Ok(self.0.value()? == 1)
    }
    fn acquire_within(&mut self, t: Duration) -> Result<Option<Option<String>>> {
        Ok(self.0.wait_timeout(t)?.then_some(None))
    }
}

pub struct MutexLock(RobustMutex);
impl Lock for MutexLock {
    #[inline]
    fn acquire(&mut self) -> Result<()> {
        match self.0.lock()? {
            Locked::Clean => Ok(()),
            Locked::OwnerDead => {
                self.0.consistent()?;
                Ok(())
            }
        }
    }
    #[inline]
    fn release(&mut self) -> Result<()> {
        self.0.unlock()?;
        Ok(())
    }
    fn is_free(&mut self) -> Result<bool> {
        match self.0.try_lock()? {
            Some(Locked::Clean) => {
                self.0.unlock()?;
                Ok(true)
            }
            Some(Locked::OwnerDead) => {
                self.0.consistent()?;
                self.0.unlock()?;
                Ok(false)
            }
            None => Ok(false),
        }
    }
    fn acquire_within(&mut self, t: Duration) -> Result<Option<Option<String>>> {
        Ok(match self.0.lock_timeout(t)? {
            None => None,
            Some(Locked::Clean) => Some(None),
            Some(Locked::OwnerDead) => {
                self.0.consistent()?;
                Some(Some(
                    "EOWNERDEAD; pthread_mutex_consistent recovered it".into(),
                ))
            }
        })
    }
}

/// A futex lock (Drepper's "mutex 3"): 0 free, 1 held, 2 held with waiters.
pub struct FutexLock {
    mem: Arc<SharedMem>,
}
impl FutexLock {
    #[inline]
    fn word(&self) -> &AtomicU32 {
        self.mem.atomic_u32(OFF_FUTEX_LOCK)
    }
    fn lock_slow(&self, t: Duration) -> Result<bool> {
        let w = self.word();
        let deadline = std::time::Instant::now() + t;
        loop {
            if w.swap(2, Ordering::Acquire) == 0 {
                return Ok(true);
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            futex::wait(w, 2, left)?;
        }
    }
}
impl Lock for FutexLock {
    #[inline]
    fn acquire(&mut self) -> Result<()> {
        if self
            .word()
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            return Ok(());
        }
        if self.lock_slow(WAIT_TIMEOUT)? {
            Ok(())
        } else {
            Err(timeout("the futex lock"))
        }
    }
    #[inline]
    fn release(&mut self) -> Result<()> {
        if self.word().swap(0, Ordering::Release) == 2 {
            futex::wake(self.word(), 1)?;
        }
        Ok(())
    }
    fn is_free(&mut self) -> Result<bool> {
        Ok(self.word().load(Ordering::SeqCst) == 0)
    }
    fn acquire_within(&mut self, t: Duration) -> Result<Option<Option<String>>> {
        if self
            .word()
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            return Ok(Some(None));
        }
        Ok(self.lock_slow(t)?.then_some(None))
    }
}

/// An eventfd in semaphore mode holding one token: read takes it, write gives it back.
pub struct EventfdLock(Arc<EventFd>);
fn efd_take(e: &EventFd, t: Duration) -> Result<bool> {
    loop {
        match e.read() {
            Ok(_) => return Ok(true),
            Err(nix::errno::Errno::EAGAIN) => {
                if !ipcperf_sys::fd::wait_ready(e.as_fd(), false, t.as_millis() as i32)? {
                    return Ok(false);
                }
            }
            Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(Error::Sys(ipcperf_sys::SysError::new("read", "eventfd", e))),
        }
    }
}
fn efd_give(e: &EventFd) -> Result<()> {
    e.write(1)
        .map_err(|e| Error::Sys(ipcperf_sys::SysError::new("write", "eventfd", e)))?;
    Ok(())
}
fn efd_try(e: &EventFd) -> Result<bool> {
    match e.read() {
        Ok(_) => Ok(true),
        Err(nix::errno::Errno::EAGAIN) => Ok(false),
        Err(e) => Err(Error::Sys(ipcperf_sys::SysError::new("read", "eventfd", e))),
    }
}
impl Lock for EventfdLock {
    #[inline]
    fn acquire(&mut self) -> Result<()> {
        if efd_take(&self.0, WAIT_TIMEOUT)? {
            Ok(())
        } else {
            Err(timeout("the eventfd"))
        }
    }
    #[inline]
    fn release(&mut self) -> Result<()> {
        efd_give(&self.0)
    }
    fn is_free(&mut self) -> Result<bool> {
        if efd_try(&self.0)? {
            // Exactly one token: take it, see that no second one is there, give it back.
            let second = efd_try(&self.0)?;
            efd_give(&self.0)?;
            if second {
                efd_give(&self.0)?;
            }
            Ok(!second)
        } else {
            Ok(false)
        }
    }
    fn acquire_within(&mut self, t: Duration) -> Result<Option<Option<String>>> {
        Ok(efd_take(&self.0, t)?.then_some(None))
    }
}

pub struct FlockLock(LockFile);
impl Lock for FlockLock {
    #[inline]
    fn acquire(&mut self) -> Result<()> {
        self.0.flock()?;
        Ok(())
    }
    #[inline]
    fn release(&mut self) -> Result<()> {
        self.0.funlock()?;
        Ok(())
    }
    fn is_free(&mut self) -> Result<bool> {
        // Another open file description can take it.
        let other = LockFile::open(self.0.path())?;
        let free = other.try_flock()?;
        if free {
            other.funlock()?;
        }
        Ok(free)
    }
    fn acquire_within(&mut self, t: Duration) -> Result<Option<Option<String>>> {
        let f = &self.0;
        Ok(poll_until(t, || Ok(f.try_flock()?))?.then_some(None))
    }
}

pub struct FcntlLock(LockFile);
impl Lock for FcntlLock {
    #[inline]
    fn acquire(&mut self) -> Result<()> {
        self.0.fcntl_lock()?;
        Ok(())
    }
    #[inline]
    fn release(&mut self) -> Result<()> {
        self.0.fcntl_unlock()?;
        Ok(())
    }
    fn is_free(&mut self) -> Result<bool> {
        // fcntl locks belong to the process, so this process cannot test them by
        // locking; the kernel's /proc/locks lists who holds one.
        Ok(!locks_on(self.0.inode()?).iter().any(|(k, _)| k == "POSIX"))
    }
    fn acquire_within(&mut self, t: Duration) -> Result<Option<Option<String>>> {
        let f = &self.0;
        Ok(poll_until(t, || Ok(f.try_fcntl_lock()?))?.then_some(None))
    }
}

/// Duncan's tare: the same loop with a dummy call that returns success.
pub struct NopLock;
impl Lock for NopLock {
    #[inline(never)]
    fn acquire(&mut self) -> Result<()> {
        std::hint::black_box(Ok(()))
    }
    #[inline(never)]
    fn release(&mut self) -> Result<()> {
        std::hint::black_box(Ok(()))
    }
    fn is_free(&mut self) -> Result<bool> {
        Ok(true)
    }
    fn acquire_within(&mut self, _t: Duration) -> Result<Option<Option<String>>> {
        Ok(Some(None))
    }
}

fn timeout(what: &str) -> Error {
    Error::Timeout(format!(
        "{what} was not given back within {} s: the other side died or is stuck",
        WAIT_TIMEOUT.as_secs()
    ))
}

/// A lock end of any primitive; [`with_lock`] turns it into its concrete type once,
/// so the timed loop is monomorphized.
pub enum AnyLock {
    Sysv(SysvLock),
    SysvNoUndo(SysvLockNoUndo),
    NamedSem(NamedSemLock),
    ShmSem(ShmSemLock),
    Mutex(MutexLock),
    Futex(FutexLock),
    Eventfd(EventfdLock),
    Flock(FlockLock),
    Fcntl(FcntlLock),
    /// Not a lock (pipe): request/release does not apply.
    None,
}

impl AnyLock {
    /// The same SysV lock without SEM_UNDO (robustness).
    pub fn without_undo(self) -> AnyLock {
        match self {
            AnyLock::Sysv(SysvLock(s)) => AnyLock::SysvNoUndo(SysvLockNoUndo(s)),
            other => other,
        }
    }
}

/// Run `f` on the concrete lock inside `l`; None for a primitive that is not a lock.
#[macro_export]
macro_rules! with_lock {
    ($l:expr, |$x:ident| $body:expr) => {
        match $l {
            $crate::sync::ends::AnyLock::Sysv($x) => Some($body),
            $crate::sync::ends::AnyLock::SysvNoUndo($x) => Some($body),
            $crate::sync::ends::AnyLock::NamedSem($x) => Some($body),
            $crate::sync::ends::AnyLock::ShmSem($x) => Some($body),
            $crate::sync::ends::AnyLock::Mutex($x) => Some($body),
            $crate::sync::ends::AnyLock::Futex($x) => Some($body),
            $crate::sync::ends::AnyLock::Eventfd($x) => Some($body),
            $crate::sync::ends::AnyLock::Flock($x) => Some($body),
            $crate::sync::ends::AnyLock::Fcntl($x) => Some($body),
            $crate::sync::ends::AnyLock::None => None,
        }
    };
}

fn open_lock(
    s: &SyncSetup,
    mem: Option<Arc<SharedMem>>,
    sysv: Option<Arc<SysvSemSet>>,
    named: &[Arc<NamedSem>],
    efds: &[Arc<EventFd>],
) -> Result<AnyLock> {
    let missing = || Error::Peer(format!("{} objects missing", s.primitive.name()));
    Ok(match s.primitive {
        Primitive::SysvSem => AnyLock::Sysv(SysvLock(sysv.ok_or_else(missing)?)),
        Primitive::PosixSemNamed => {
            AnyLock::NamedSem(NamedSemLock(named.first().ok_or_else(missing)?.clone()))
        }
        Primitive::PosixSem => AnyLock::ShmSem(ShmSemLock(ShmSem::attach(
            mem.ok_or_else(missing)?,
            OFF_SEM_LOCK,
        ))),
        Primitive::Mutex => AnyLock::Mutex(MutexLock(RobustMutex::attach(
            mem.ok_or_else(missing)?,
            OFF_MUTEX,
        ))),
        Primitive::Futex => AnyLock::Futex(FutexLock {
            mem: mem.ok_or_else(missing)?,
        }),
        Primitive::Eventfd => {
            AnyLock::Eventfd(EventfdLock(efds.first().ok_or_else(missing)?.clone()))
        }
        Primitive::Flock => AnyLock::Flock(FlockLock(LockFile::open(
            s.lock_path.as_ref().ok_or_else(missing)?,
        )?)),
        Primitive::Fcntl => AnyLock::Fcntl(FcntlLock(LockFile::open(
            s.lock_path.as_ref().ok_or_else(missing)?,
        )?)),
        Primitive::Pipe => AnyLock::None,
    })
}

// ---------------------------------------------------------------- channels

/// Set/clear: give the other side a token, and wait for one from it.
pub trait Channel {
    /// Hand a token to the other side (set / post / wake).
    fn signal(&mut self) -> Result<()>;
    /// Wait (bounded) for a token from the other side and take it.
    fn wait(&mut self) -> Result<()>;
    /// Take a token from the other side if one is there, without waiting.
    fn try_take(&mut self) -> Result<bool>;
}

pub struct SysvChannel {
    set: Arc<SysvSemSet>,
    mine: u16,
    theirs: u16,
    other: Option<i32>,
}
impl Channel for SysvChannel {
    #[inline]
    fn signal(&mut self) -> Result<()> {
        self.set.op(self.theirs, 1, false, None)?;
        Ok(())
    }
    #[inline]
    fn wait(&mut self) -> Result<()> {
        let mut ticks = 0;
        while !self.set.op(self.mine, -1, false, Some(WAIT_TICK))? {
            another_tick(self.other, &mut ticks)?;
        }
        Ok(())
    }
    fn try_take(&mut self) -> Result<bool> {
        Ok(self.set.try_op(self.mine, -1)?)
    }
}

pub struct NamedSemChannel {
    mine: Arc<NamedSem>,
    theirs: Arc<NamedSem>,
    other: Option<i32>,
}
impl Channel for NamedSemChannel {
    #[inline]
    fn signal(&mut self) -> Result<()> {
        self.theirs.post()?;
        Ok(())
    }
    #[inline]
    fn wait(&mut self) -> Result<()> {
        // The user-space fast path first; the bounded (clock-reading) wait only when
        // we are about to sleep anyway.
        if self.mine.try_wait()? {
            return Ok(());
        }
        let mut ticks = 0;
        while !self.mine.wait_timeout(WAIT_TICK)? {
            another_tick(self.other, &mut ticks)?;
        }
        Ok(())
    }
    fn try_take(&mut self) -> Result<bool> {
        Ok(self.mine.try_wait()?)
    }
}

pub struct ShmSemChannel {
    mine: ShmSem,
    theirs: ShmSem,
    other: Option<i32>,
}
impl Channel for ShmSemChannel {
    #[inline]
    fn signal(&mut self) -> Result<()> {
        self.theirs.post()?;
        Ok(())
    }
    #[inline]
    fn wait(&mut self) -> Result<()> {
        if self.mine.try_wait()? {
            return Ok(());
        }
        let mut ticks = 0;
        while !self.mine.wait_timeout(WAIT_TICK)? {
            another_tick(self.other, &mut ticks)?;
        }
        Ok(())
    }
    fn try_take(&mut self) -> Result<bool> {
        Ok(self.mine.try_wait()?)
    }
}

/// Two futex words, one per direction: 1 = a token is waiting there.
pub struct FutexChannel {
    mem: Arc<SharedMem>,
    mine: usize,
    theirs: usize,
    other: Option<i32>,
}
impl Channel for FutexChannel {
    #[inline]
    fn signal(&mut self) -> Result<()> {
        let w = self.mem.atomic_u32(self.theirs);
        w.store(1, Ordering::Release);
        futex::wake(w, 1)?;
        Ok(())
    }
    #[inline]
    fn wait(&mut self) -> Result<()> {
        let w = self.mem.atomic_u32(self.mine);
        let mut ticks = 0;
        loop {
            if w.swap(0, Ordering::Acquire) == 1 {
                return Ok(());
            }
            if futex::wait(w, 0, WAIT_TICK)? == FutexWait::TimedOut
                && w.load(Ordering::Acquire) == 0
            {
                another_tick(self.other, &mut ticks)?;
            }
        }
    }
    fn try_take(&mut self) -> Result<bool> {
        Ok(self.mem.atomic_u32(self.mine).swap(0, Ordering::Acquire) == 1)
    }
}

pub struct EventfdChannel {
    mine: Arc<EventFd>,
    theirs: Arc<EventFd>,
    other: Option<i32>,
}
impl Channel for EventfdChannel {
    #[inline]
    fn signal(&mut self) -> Result<()> {
        efd_give(&self.theirs)
    }
    #[inline]
    fn wait(&mut self) -> Result<()> {
        // poll, then read: an eventfd has no end-of-file to end a blocking read.
        let mut ticks = 0;
        loop {
            if ipcperf_sys::fd::wait_ready(self.mine.as_fd(), false, WAIT_TICK.as_millis() as i32)?
            {
                if efd_try(&self.mine)? {
                    return Ok(());
                }
            } else {
                another_tick(self.other, &mut ticks)?;
            }
        }
    }
    fn try_take(&mut self) -> Result<bool> {
        efd_try(&self.mine)
    }
}

/// A one-byte token over two pipes. Blocking reads: when the other side dies its
/// write end closes and the read returns end-of-file, so it never hangs.
pub struct PipeChannel {
    w: OwnedFd,
    r: OwnedFd,
    byte: [u8; 1],
}
impl Channel for PipeChannel {
    #[inline]
    fn signal(&mut self) -> Result<()> {
        match ipcperf_sys::fd::write(self.w.as_fd(), &self.byte) {
            Ok(1) => Ok(()),
            Ok(_) => Err(Error::Peer("short write of a one-byte token".into())),
            Err(e) => Err(Error::io("write", "pipe", e)),
        }
    }
    #[inline]
    fn wait(&mut self) -> Result<()> {
        match ipcperf_sys::fd::read(self.r.as_fd(), &mut self.byte) {
            Ok(1) => Ok(()),
            Ok(_) => Err(Error::Peer("the other side closed its pipe".into())),
            Err(e) => Err(Error::io("read", "pipe", e)),
        }
    }
    fn try_take(&mut self) -> Result<bool> {
        if !ipcperf_sys::fd::wait_ready(self.r.as_fd(), false, 0)? {
            return Ok(false);
        }
        // Readable: a token, or end-of-file (no token, the other side is gone).
        match ipcperf_sys::fd::read(self.r.as_fd(), &mut self.byte) {
            Ok(n) => Ok(n == 1),
            Err(e) => Err(Error::io("read", "pipe", e)),
        }
    }
}

/// The set/clear tare: dummy calls that return success.
pub struct NopChannel;
impl Channel for NopChannel {
    #[inline(never)]
    fn signal(&mut self) -> Result<()> {
        std::hint::black_box(Ok(()))
    }
    #[inline(never)]
    fn wait(&mut self) -> Result<()> {
        std::hint::black_box(Ok(()))
    }
    fn try_take(&mut self) -> Result<bool> {
        Ok(false)
    }
}

fn no_token() -> Error {
    Error::Timeout(format!(
        "no token from the other side within {} s: it is stuck or died",
        WAIT_LIMIT.as_secs()
    ))
}

/// A channel end of any primitive; see [`with_channel`].
pub enum AnyChannel {
    Sysv(SysvChannel),
    NamedSem(NamedSemChannel),
    ShmSem(ShmSemChannel),
    Futex(FutexChannel),
    Eventfd(EventfdChannel),
    Pipe(PipeChannel),
    /// Set/clear does not apply (mutex, flock, fcntl: only the owner may release).
    None,
}

impl AnyChannel {
    /// The process on the other side: while waiting for its token, its death is an
    /// error within a [`WAIT_TICK`] (without it, only [`WAIT_LIMIT`] ends a wait).
    /// Pipes need none: the other side's death closes its end.
    pub fn set_other_process(&mut self, pid: i32) {
        match self {
            AnyChannel::Sysv(c) => c.other = Some(pid),
            AnyChannel::NamedSem(c) => c.other = Some(pid),
            AnyChannel::ShmSem(c) => c.other = Some(pid),
            AnyChannel::Futex(c) => c.other = Some(pid),
            AnyChannel::Eventfd(c) => c.other = Some(pid),
            AnyChannel::Pipe(_) | AnyChannel::None => {}
        }
    }
}

/// Run `f` on the concrete channel inside `c`; None when set/clear does not apply.
#[macro_export]
macro_rules! with_channel {
    ($c:expr, |$x:ident| $body:expr) => {
        match $c {
            $crate::sync::ends::AnyChannel::Sysv($x) => Some($body),
            $crate::sync::ends::AnyChannel::NamedSem($x) => Some($body),
            $crate::sync::ends::AnyChannel::ShmSem($x) => Some($body),
            $crate::sync::ends::AnyChannel::Futex($x) => Some($body),
            $crate::sync::ends::AnyChannel::Eventfd($x) => Some($body),
            $crate::sync::ends::AnyChannel::Pipe($x) => Some($body),
            $crate::sync::ends::AnyChannel::None => None,
        }
    };
}

fn open_channel(
    side: Side,
    s: &SyncSetup,
    mem: Option<Arc<SharedMem>>,
    sysv: Option<Arc<SysvSemSet>>,
    named: &[Arc<NamedSem>],
    efds: &[Arc<EventFd>],
    mut pipes: Vec<OwnedFd>,
) -> Result<AnyChannel> {
    let missing = || Error::Peer(format!("{} objects missing", s.primitive.name()));
    // (mine, theirs) as indices 1 = to-B, 2 = to-A.
    let (mine, theirs) = match side {
        Side::A => (2usize, 1usize),
        Side::B => (1, 2),
    };
    Ok(match s.primitive {
        Primitive::SysvSem => AnyChannel::Sysv(SysvChannel {
            set: sysv.ok_or_else(missing)?,
            mine: [S_LOCK, S_TO_B, S_TO_A][mine],
            theirs: [S_LOCK, S_TO_B, S_TO_A][theirs],
            other: None,
        }),
        Primitive::PosixSemNamed => AnyChannel::NamedSem(NamedSemChannel {
            mine: named.get(mine).ok_or_else(missing)?.clone(),
            theirs: named.get(theirs).ok_or_else(missing)?.clone(),
            other: None,
        }),
        Primitive::PosixSem => {
            let mem = mem.ok_or_else(missing)?;
            let off = [OFF_SEM_LOCK, OFF_SEM_TO_B, OFF_SEM_TO_A];
            AnyChannel::ShmSem(ShmSemChannel {
                mine: ShmSem::attach(mem.clone(), off[mine]),
                theirs: ShmSem::attach(mem, off[theirs]),
                other: None,
            })
        }
        Primitive::Futex => {
            let off = [OFF_FUTEX_LOCK, OFF_FUTEX_TO_B, OFF_FUTEX_TO_A];
            AnyChannel::Futex(FutexChannel {
                mem: mem.ok_or_else(missing)?,
                mine: off[mine],
                theirs: off[theirs],
                other: None,
            })
        }
        Primitive::Eventfd => AnyChannel::Eventfd(EventfdChannel {
            mine: efds.get(mine).ok_or_else(missing)?.clone(),
            theirs: efds.get(theirs).ok_or_else(missing)?.clone(),
            other: None,
        }),
        Primitive::Pipe => {
            if pipes.len() != 2 {
                return Err(Error::Invalid(
                    "the pipe channel's ends were already taken".into(),
                ));
            }
            // Owner keeps [to-B write, to-A read]; the peer gets [to-B read, to-A write].
            let (w, r) = match side {
                Side::A => {
                    let r = pipes.pop().expect("two");
                    (pipes.pop().expect("two"), r)
                }
                Side::B => {
                    let w = pipes.pop().expect("two");
                    (w, pipes.pop().expect("two"))
                }
            };
            AnyChannel::Pipe(PipeChannel { w, r, byte: [0] })
        }
        Primitive::Mutex | Primitive::Flock | Primitive::Fcntl => AnyChannel::None,
    })
}
