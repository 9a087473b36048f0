//! Interruption: Ctrl-C, SIGTERM and SIGHUP undo everything registered, then exit.

use nix::sys::signal::{SigSet, SigmaskHow, Signal};

/// Block SIGINT/SIGTERM/SIGHUP in this thread (and so in every thread started after
/// it) and start a thread that waits for them; on one, it runs
/// [`crate::cleanup::run_all`] and exits with 128 + the signal number.
///
/// Call it first thing in `main`, before any other thread exists. Child processes
/// started by `std::process::Command` get an empty signal mask again.
pub fn cleanup_on_interrupt() {
    let mut set = SigSet::empty();
    set.add(Signal::SIGINT);
    set.add(Signal::SIGTERM);
    set.add(Signal::SIGHUP);
    if nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None).is_err() {
        return;
    }
    // Its own descriptor table: the thread that measures must not share one.
    crate::fd::spawn_helper("ipcperf-signals", move || {
        if let Ok(sig) = set.wait() {
            crate::cleanup::run_all();
            eprintln!("ipcperf: interrupted by {sig:?}; named objects removed");
            std::process::exit(128 + sig as i32);
        }
    })
    .ok();
}

/// Send SIGKILL to a process.
pub fn kill(pid: i32) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
}
