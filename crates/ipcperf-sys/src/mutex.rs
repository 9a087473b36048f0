//! A pthread mutex in shared memory, process-shared and robust: Duncan's "fast-safe"
//! semaphore. When its owner dies, the next locker gets EOWNERDEAD, may repair the
//! data it guards, and marks the mutex consistent again.

use std::sync::Arc;
use std::time::Duration;

use crate::error::{Errno, SysError, SysResult};
use crate::shm::SharedMem;

extern "C" {
    // glibc >= 2.30: a lock bounded by a CLOCK_MONOTONIC deadline.
    fn pthread_mutex_clocklock(
        m: *mut libc::pthread_mutex_t,
        clock: libc::clockid_t,
        abstime: *const libc::timespec,
    ) -> libc::c_int;
}

pub const MUTEX_SIZE: usize = std::mem::size_of::<libc::pthread_mutex_t>();
pub const MUTEX_ALIGN: usize = std::mem::align_of::<libc::pthread_mutex_t>();

/// How a lock was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locked {
    /// The usual case.
    Clean,
    /// The previous owner died holding it (EOWNERDEAD): we own it now, and must call
    /// [`RobustMutex::consistent`] before unlocking or it becomes unusable.
    OwnerDead,
}

/// A robust, process-shared pthread mutex at an offset in shared memory.
#[derive(Debug)]
pub struct RobustMutex {
    // Keeps the mapping that `p` points into alive.
    _mem: Arc<SharedMem>,
    p: *mut libc::pthread_mutex_t,
    owner: bool,
}

// SAFETY: `p` points into a shared mapping kept alive by `_mem`; a process-shared
// mutex is designed for use from any thread and process.
unsafe impl Send for RobustMutex {}
// SAFETY: as above; pthread mutex operations are thread-safe.
unsafe impl Sync for RobustMutex {}

fn check(r: libc::c_int, op: &'static str) -> SysResult<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(SysError::new(op, "robust mutex", Errno::from_raw(r)))
    }
}

impl RobustMutex {
    /// Initialize a mutex at `off` in `mem` (PTHREAD_PROCESS_SHARED, PTHREAD_MUTEX_ROBUST).
    pub fn init(mem: Arc<SharedMem>, off: usize) -> SysResult<RobustMutex> {
        let p = mem
            .at(off, MUTEX_SIZE, MUTEX_ALIGN)
            .cast::<libc::pthread_mutex_t>();
        let mut attr = std::mem::MaybeUninit::<libc::pthread_mutexattr_t>::uninit();
        // SAFETY: `attr` is initialized by pthread_mutexattr_init before any other use
        // and destroyed once; `p` is inside the mapping, sized and aligned for a mutex.
        unsafe {
            check(
                libc::pthread_mutexattr_init(attr.as_mut_ptr()),
                "pthread_mutexattr_init",
            )?;
            let r = (|| {
                check(
                    libc::pthread_mutexattr_setpshared(
                        attr.as_mut_ptr(),
                        libc::PTHREAD_PROCESS_SHARED,
                    ),
                    "pthread_mutexattr_setpshared",
                )?;
                check(
                    libc::pthread_mutexattr_setrobust(
                        attr.as_mut_ptr(),
                        libc::PTHREAD_MUTEX_ROBUST,
                    ),
                    "pthread_mutexattr_setrobust",
                )?;
                check(
                    libc::pthread_mutex_init(p, attr.as_ptr()),
                    "pthread_mutex_init",
                )
            })();
            libc::pthread_mutexattr_destroy(attr.as_mut_ptr());
            r?;
        }
        Ok(RobustMutex {
            _mem: mem,
            p,
            owner: true,
        })
    }

    /// Use a mutex another side initialized at `off` in the same memory.
    pub fn attach(mem: Arc<SharedMem>, off: usize) -> RobustMutex {
        let p = mem.at(off, MUTEX_SIZE, MUTEX_ALIGN).cast();
        RobustMutex {
            _mem: mem,
            p,
            owner: false,
        }
    }

    #[inline]
    fn p(&self) -> *mut libc::pthread_mutex_t {
        self.p
    }

    fn outcome(r: libc::c_int, op: &'static str) -> SysResult<Option<Locked>> {
        match r {
            0 => Ok(Some(Locked::Clean)),
            libc::EOWNERDEAD => Ok(Some(Locked::OwnerDead)),
            libc::ETIMEDOUT | libc::EBUSY => Ok(None),
            e => Err(SysError::new(op, "robust mutex", Errno::from_raw(e))),
        }
    }

    /// pthread_mutex_lock. Only for uncontended use; waits that may block use
    /// [`lock_timeout`](Self::lock_timeout).
    #[inline]
    pub fn lock(&self) -> SysResult<Locked> {
        // SAFETY: `p` is an initialized mutex in live shared memory.
        let r = unsafe { libc::pthread_mutex_lock(self.p()) };
        Self::outcome(r, "pthread_mutex_lock")?
            .ok_or_else(|| SysError::new("pthread_mutex_lock", "robust mutex", Errno::EBUSY))
    }

    /// pthread_mutex_trylock: None when another owner holds it.
    pub fn try_lock(&self) -> SysResult<Option<Locked>> {
        // SAFETY: `p` is an initialized mutex in live shared memory.
        let r = unsafe { libc::pthread_mutex_trylock(self.p()) };
        Self::outcome(r, "pthread_mutex_trylock")
    }

    /// Lock, waiting at most `timeout`; None when it ran out.
    pub fn lock_timeout(&self, timeout: Duration) -> SysResult<Option<Locked>> {
        let dl = crate::sem::mono_deadline(timeout);
        // SAFETY: `p` is an initialized mutex; `dl` lives across the call.
        let r = unsafe { pthread_mutex_clocklock(self.p(), libc::CLOCK_MONOTONIC, &dl) };
        Self::outcome(r, "pthread_mutex_clocklock")
    }

    /// After [`Locked::OwnerDead`]: the guarded state is repaired, the mutex is usable again.
    pub fn consistent(&self) -> SysResult<()> {
        // SAFETY: `p` is an initialized mutex that this thread owns.
        check(
            unsafe { libc::pthread_mutex_consistent(self.p()) },
            "pthread_mutex_consistent",
        )
    }

    #[inline]
    pub fn unlock(&self) -> SysResult<()> {
        // SAFETY: `p` is an initialized mutex; unlocking one we do not own returns EPERM.
        check(
            unsafe { libc::pthread_mutex_unlock(self.p()) },
            "pthread_mutex_unlock",
        )
    }
}

impl Drop for RobustMutex {
    fn drop(&mut self) {
        if self.owner {
            // SAFETY: initialized by `init`, destroyed once; EBUSY if still locked is ignored.
            unsafe {
                libc::pthread_mutex_destroy(self.p());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_unlock_and_owner_death_in_a_thread() {
        let mem = Arc::new(SharedMem::memfd("t-mutex", 4096).unwrap());
        let m = RobustMutex::init(mem.clone(), 128).unwrap();
        assert_eq!(m.lock().unwrap(), Locked::Clean);
        m.unlock().unwrap();
        // A thread that ends holding a robust mutex: the next locker sees EOWNERDEAD.
        let m2 = RobustMutex::attach(mem.clone(), 128);
        std::thread::spawn(move || {
            assert_eq!(m2.lock().unwrap(), Locked::Clean);
            std::mem::forget(m2);
        })
        .join()
        .unwrap();
        assert_eq!(
            m.lock_timeout(Duration::from_secs(2)).unwrap(),
            Some(Locked::OwnerDead)
        );
        m.consistent().unwrap();
        m.unlock().unwrap();
        assert_eq!(m.try_lock().unwrap(), Some(Locked::Clean));
        m.unlock().unwrap();
    }
}
