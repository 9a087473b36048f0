//! The monotonic clock, as nanoseconds comparable across processes on this machine.

use nix::time::{clock_gettime, ClockId};

/// CLOCK_MONOTONIC in nanoseconds. The same clock in every process, so a writer's
/// start and a reader's end (read in another process) can be subtracted.
///
/// libc's call directly, not nix's wrapper: on a KVM guest the wrapper cost
/// 30 ns a read where libc's (and C's) cost 20, and every timed round trip holds
/// one read's cost (its tare).
#[inline]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration; with
    // CLOCK_MONOTONIC (always present on Linux) the call cannot fail, and if it
    // did `ts` would stay zero, not uninitialized.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The median cost of one `now_ns()` call, measured over `n` back-to-back reads.
pub fn clock_cost_ns(n: usize) -> u64 {
    let mut d: Vec<u64> = Vec::with_capacity(n);
    for _ in 0..n {
        let a = now_ns();
        let b = now_ns();
        d.push(b - a);
    }
    d.sort_unstable();
    d.get(d.len() / 2).copied().unwrap_or(0)
}

/// CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID), in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(|ts| ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64)
        .unwrap_or(0)
}

/// CPU time (user + system) of every child process this process has waited for,
/// with their own waited-for descendants (getrusage(RUSAGE_CHILDREN)), in nanoseconds.
pub fn children_cpu_ns() -> u64 {
    use nix::sys::resource::{getrusage, UsageWho};
    let ns =
        |t: nix::sys::time::TimeVal| t.tv_sec() as u64 * 1_000_000_000 + t.tv_usec() as u64 * 1000;
    getrusage(UsageWho::RUSAGE_CHILDREN)
        .map(|u| ns(u.user_time()) + ns(u.system_time()))
        .unwrap_or(0)
}

/// CPU time (user + system) of this process, all its threads, in nanoseconds.
pub fn process_cpu_ns() -> u64 {
    use nix::sys::resource::{getrusage, UsageWho};
    let ns =
        |t: nix::sys::time::TimeVal| t.tv_sec() as u64 * 1_000_000_000 + t.tv_usec() as u64 * 1000;
    getrusage(UsageWho::RUSAGE_SELF)
        .map(|u| ns(u.user_time()) + ns(u.system_time()))
        .unwrap_or(0)
}

/// Sleep until CLOCK_MONOTONIC reads `deadline_ns` (clock_nanosleep, absolute: an
/// interruption resumes toward the same instant). Returns at once if it has passed.
pub fn sleep_until_ns(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    loop {
        // SAFETY: `ts` is a valid timespec; the remaining-time pointer may be null
        // with TIMER_ABSTIME.
        let r = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if r != libc::EINTR {
            return;
        }
    }
}

/// Let this thread's timed sleeps end as close to their deadline as the kernel can
/// (PR_SET_TIMERSLACK to 1 ns; the default lets a sleep run 50 µs late).
pub fn tight_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and touches no memory.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}
