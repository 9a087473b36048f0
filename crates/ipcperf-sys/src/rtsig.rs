//! Real-time signals as an IPC mechanism: sigqueue(3) carries a value to a process,
//! sigtimedwait(2) takes it from the queue within a bounded wait.
//!
//! The signals must be blocked in every thread of both processes, or the default
//! action (termination) runs instead of queueing: call [`block_all`] first thing
//! in `main`, before any thread exists, so every later thread inherits the mask.

use std::mem::MaybeUninit;

use crate::error::{Errno, SysError, SysResult};

/// The real-time signals ipcperf uses: one for each direction of a round trip.
pub fn ping_signal() -> i32 {
    libc::SIGRTMIN() + 1
}
pub fn pong_signal() -> i32 {
    libc::SIGRTMIN() + 2
}

fn set_of(sigs: &[i32]) -> libc::sigset_t {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set it is given; sigaddset only writes into
    // that initialised set, with signal numbers from SIGRTMIN..=SIGRTMAX.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        for &s in sigs {
            libc::sigaddset(set.as_mut_ptr(), s);
        }
        set.assume_init()
    }
}

/// Block ipcperf's signals in the calling thread (and in threads it starts later).
pub fn block_all() -> SysResult<()> {
    let set = set_of(&[ping_signal(), pong_signal()]);
    // SAFETY: `set` is an initialised sigset_t; the old mask is not asked for.
    let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if r != 0 {
        return Err(SysError::new(
            "pthread_sigmask",
            "SIG_BLOCK",
            Errno::from_raw(r),
        ));
    }
    Ok(())
}

/// Whether `sig` is blocked in the calling thread.
pub fn is_blocked(sig: i32) -> bool {
    let mut old = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: with a null new set pthread_sigmask only writes the current mask into `old`.
    let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), old.as_mut_ptr()) };
    // SAFETY: on success `old` was initialised by the call above.
    r == 0 && unsafe { libc::sigismember(old.as_ptr(), sig) } == 1
}

/// This user's limit of queued signals (RLIMIT_SIGPENDING, `ulimit -i`).
pub fn pending_limit() -> Option<u64> {
    use nix::sys::resource::{getrlimit, Resource};
    getrlimit(Resource::RLIMIT_SIGPENDING)
        .ok()
        .map(|(soft, _)| soft)
}

/// Queue `sig` carrying `value` to process `pid`.
#[inline]
pub fn queue(pid: i32, sig: i32, value: i32) -> Result<(), Errno> {
    let val = libc::sigval {
        sival_ptr: value as isize as *mut libc::c_void,
    };
    // SAFETY: sigqueue takes plain values; the pointer in `val` is never dereferenced.
    let r = unsafe { libc::sigqueue(pid, sig, val) };
    if r == 0 {
        Ok(())
    } else {
        Err(Errno::last())
    }
}

/// Take `sig` from the queue, waiting at most `timeout_ms`; the value it carried,
/// or None when the wait ran out. The signal must be blocked in this thread.
#[inline]
pub fn wait(sig: i32, timeout_ms: u64) -> Result<Option<i32>, Errno> {
    let set = set_of(&[sig]);
    let ts = libc::timespec {
        tv_sec: (timeout_ms / 1000) as libc::time_t,
        tv_nsec: ((timeout_ms % 1000) * 1_000_000) as libc::c_long,
    };
    let mut info = MaybeUninit::<libc::siginfo_t>::uninit();
    loop {
        // SAFETY: `set` and `ts` are initialised; the kernel writes `info` on success.
        let r = unsafe { libc::sigtimedwait(&set, info.as_mut_ptr(), &ts) };
        if r == sig {
            // SAFETY: sigtimedwait returned the signal, so `info` is filled in, and a
            // signal sent with sigqueue carries its value in si_value.
            let v = unsafe { info.assume_init_ref().si_value().sival_ptr } as isize as i32;
            return Ok(Some(v));
        }
        match Errno::last() {
            Errno::EAGAIN => return Ok(None),
            Errno::EINTR => continue,
            e => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_and_bounded() {
        // Only this thread blocks it (the harness's threads do not), so nothing is
        // sent here: a process-directed signal could land in another thread. The
        // value's journey is tested end to end through the binary, which blocks
        // these signals in main before any thread starts.
        block_all().unwrap();
        assert!(is_blocked(ping_signal()));
        // Nothing queued: a bounded wait returns None.
        assert_eq!(wait(ping_signal(), 10).unwrap(), None);
    }
}
