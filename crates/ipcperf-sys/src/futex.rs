//! Raw futexes on a shared 32-bit word (`syscall(SYS_futex)`), the process-shared
//! (non-private) form, so the word may live in memory shared between processes.
//! Every wait is bounded by a timeout.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

use crate::error::{Errno, SysError, SysResult};

/// How a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FutexWait {
    /// Woken (or a spurious return, EINTR): look at the word again.
    Woken,
    /// The word did not hold the expected value: no sleep happened.
    Changed,
    /// The timeout ran out.
    TimedOut,
}

/// FUTEX_WAIT: sleep while `*word == expected`, for at most `timeout`.
pub fn wait(word: &AtomicU32, expected: u32, timeout: Duration) -> SysResult<FutexWait> {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    wait_for(word, expected, &ts)
}

/// FUTEX_WAIT with no timeout: sleep while `*word == expected` until woken (a
/// program's wait: no timer armed).
pub fn wait_untimed(word: &AtomicU32, expected: u32) -> SysResult<FutexWait> {
    wait_for(word, expected, std::ptr::null())
}

fn wait_for(word: &AtomicU32, expected: u32, ts: *const libc::timespec) -> SysResult<FutexWait> {
    // SAFETY: `word` is a valid, aligned u32 for the duration of the call (a borrowed
    // atomic); `ts` is null (no timeout) or points to a timespec the caller keeps
    // alive across the call; the other arguments are unused by FUTEX_WAIT.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            ts,
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    if r == 0 {
        return Ok(FutexWait::Woken);
    }
    match Errno::last() {
        Errno::EAGAIN => Ok(FutexWait::Changed),
        Errno::ETIMEDOUT => Ok(FutexWait::TimedOut),
        Errno::EINTR => Ok(FutexWait::Woken),
        e => Err(SysError::new("futex(FUTEX_WAIT)", "shared word", e)),
    }
}

/// FUTEX_WAKE: wake at most `n` waiters on `word`; returns how many were woken.
pub fn wake(word: &AtomicU32, n: u32) -> SysResult<u32> {
    // SAFETY: `word` is a valid, aligned u32 for the duration of the call; the kernel
    // only uses its address as a key. The remaining arguments are unused by FUTEX_WAKE.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            n.min(i32::MAX as u32),
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    if r < 0 {
        return Err(SysError::new(
            "futex(FUTEX_WAKE)",
            "shared word",
            Errno::last(),
        ));
    }
    Ok(r as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    #[test]
    fn wait_returns_changed_timed_out_and_woken() {
        let w = AtomicU32::new(1);
        assert_eq!(
            wait(&w, 0, Duration::from_secs(1)).unwrap(),
            FutexWait::Changed
        );
        assert_eq!(
            wait(&w, 1, Duration::from_millis(5)).unwrap(),
            FutexWait::TimedOut
        );
        let w = Arc::new(AtomicU32::new(0));
        let w2 = w.clone();
        let t = std::thread::spawn(move || {
            while w2.load(Ordering::SeqCst) == 0 {
                let _ = wait(&w2, 0, Duration::from_secs(5)).unwrap();
            }
        });
        std::thread::sleep(Duration::from_millis(20));
        w.store(1, Ordering::SeqCst);
        wake(&w, 1).unwrap();
        t.join().unwrap();
    }
}
