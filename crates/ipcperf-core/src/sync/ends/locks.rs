//! Request/release: the [`Lock`] of each primitive, opened from its objects.

use super::*;
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
pub(super) fn poll_until(
    timeout: Duration,
    mut try_once: impl FnMut() -> Result<bool>,
) -> Result<bool> {
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

/// The SysV semaphore as a lock; `UNDO`: taken with SEM_UNDO (the kernel gives it
/// back if this process dies holding it). Without it is for robustness only: what
/// happens then.
pub struct SysvLock<const UNDO: bool>(pub Arc<SysvSemSet>);
impl<const UNDO: bool> Lock for SysvLock<UNDO> {
    #[inline]
    fn acquire(&mut self) -> Result<()> {
        if self.0.op(S_LOCK, -1, UNDO, Some(WAIT_TIMEOUT))? {
            Ok(())
        } else {
            Err(timeout("the SysV semaphore"))
        }
    }
    #[inline]
    fn release(&mut self) -> Result<()> {
        self.0.op(S_LOCK, 1, UNDO, None)?;
        Ok(())
    }
    fn is_free(&mut self) -> Result<bool> {
        Ok(self.0.value(S_LOCK)? == 1)
    }
    fn acquire_within(&mut self, t: Duration) -> Result<Option<Option<String>>> {
        Ok(self.0.op(S_LOCK, -1, UNDO, Some(t))?.then_some(None))
    }
}

/// The calls a POSIX semaphore has, named (sem_open) or in shared memory
/// (sem_init) alike.
pub trait PosixSemaphore {
    fn wait(&self) -> ipcperf_sys::SysResult<()>;
    fn try_wait(&self) -> ipcperf_sys::SysResult<bool>;
    fn wait_timeout(&self, t: Duration) -> ipcperf_sys::SysResult<bool>;
    fn post(&self) -> ipcperf_sys::SysResult<()>;
    fn value(&self) -> ipcperf_sys::SysResult<i32>;
}

macro_rules! posix_semaphore {
    ($t:ty, $inner:ident) => {
        impl PosixSemaphore for $t {
            #[inline]
            fn wait(&self) -> ipcperf_sys::SysResult<()> {
                $inner::wait(self)
            }
            #[inline]
            fn try_wait(&self) -> ipcperf_sys::SysResult<bool> {
                $inner::try_wait(self)
            }
            fn wait_timeout(&self, t: Duration) -> ipcperf_sys::SysResult<bool> {
                $inner::wait_timeout(self, t)
            }
            #[inline]
            fn post(&self) -> ipcperf_sys::SysResult<()> {
                $inner::post(self)
            }
            fn value(&self) -> ipcperf_sys::SysResult<i32> {
                $inner::value(self)
            }
        }
    };
}
posix_semaphore!(Arc<NamedSem>, NamedSem);
posix_semaphore!(ShmSem, ShmSem);

/// A POSIX semaphore holding one token as a lock. Uncontended in the timed loop:
/// sem_wait's user-space fast path; it cannot block.
pub struct SemLock<S>(S);
impl<S: PosixSemaphore> Lock for SemLock<S> {
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
pub(super) fn efd_take(e: &EventFd, t: Duration) -> Result<bool> {
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
pub(super) fn efd_give(e: &EventFd) -> Result<()> {
    e.write(1)
        .map_err(|e| Error::Sys(ipcperf_sys::SysError::new("write", "eventfd", e)))?;
    Ok(())
}
pub(super) fn efd_try(e: &EventFd) -> Result<bool> {
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
/// The floor under every lock: an uncontended word taken with a compare-exchange
/// and given back with a swap, two atomic read-modify-writes a cycle (a futex
/// lock's fast path with nothing else), inlined into the loop as a lock's would be.
#[derive(Default)]
pub struct AtomicPair(std::sync::atomic::AtomicU32);
impl Lock for AtomicPair {
    #[inline]
    fn acquire(&mut self) -> Result<()> {
        match self
            .0
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => Ok(()),
            Err(_) => Err(Error::Invalid("the atomic reference word was taken".into())),
        }
    }
    #[inline]
    fn release(&mut self) -> Result<()> {
        self.0.swap(0, Ordering::Release);
        Ok(())
    }
    fn is_free(&mut self) -> Result<bool> {
        Ok(self.0.load(Ordering::Acquire) == 0)
    }
    fn acquire_within(&mut self, _t: Duration) -> Result<Option<Option<String>>> {
        Ok(self.acquire().ok().map(|()| None))
    }
}

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

pub(super) fn timeout(what: &str) -> Error {
    Error::Timeout(format!(
        "{what} was not given back within {} s: the other side died or is stuck",
        WAIT_TIMEOUT.as_secs()
    ))
}

/// A lock end of any primitive; [`with_lock`] turns it into its concrete type once,
/// so the timed loop is monomorphized.
pub enum AnyLock {
    Sysv(SysvLock<true>),
    SysvNoUndo(SysvLock<false>),
    NamedSem(SemLock<Arc<NamedSem>>),
    ShmSem(SemLock<ShmSem>),
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
            AnyLock::Sysv(SysvLock(s)) => AnyLock::SysvNoUndo(SysvLock(s)),
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

pub(super) fn open_lock(
    s: &SyncSetup,
    mem: Option<Arc<SharedMem>>,
    sysv: Option<Arc<SysvSemSet>>,
    named: &[Arc<NamedSem>],
    efds: &[Arc<EventFd>],
) -> Result<AnyLock> {
    let missing = || Error::Peer(format!("{} objects missing", s.primitive.name()));
    Ok(match s.primitive {
        Primitive::SysvSem | Primitive::SysvSemOneCall => {
            AnyLock::Sysv(SysvLock(sysv.ok_or_else(missing)?))
        }
        Primitive::PosixSemNamed => {
            AnyLock::NamedSem(SemLock(named.first().ok_or_else(missing)?.clone()))
        }
        Primitive::PosixSem => AnyLock::ShmSem(SemLock(ShmSem::attach(
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
