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
            // A progress line on the terminal is cleared first.
            if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
                eprint!("\r\x1b[K");
            }
            eprintln!("ipcperf: interrupted by {sig:?}; named objects removed");
            let note = INTERRUPT_NOTE.lock().map(|n| n.clone()).unwrap_or_default();
            if let Some(n) = note {
                eprintln!("ipcperf: {n}");
            }
            std::process::exit(128 + sig as i32);
        }
    })
    .ok();
}

/// What to say when interrupted, after the clean-up (e.g. where the partial run is
/// kept).
static INTERRUPT_NOTE: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Say `note` on stderr if the process is interrupted from now on.
pub fn on_interrupt_say(note: String) {
    if let Ok(mut n) = INTERRUPT_NOTE.lock() {
        *n = Some(note);
    }
}

/// Send SIGKILL to a process.
pub fn kill(pid: i32) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
}

/// Die (SIGKILL) when the thread that started this process ends: for helper
/// processes (`gen`, `sink` under a pipeline's shell) that must not outlive a
/// killed ipcperf. Checks the parent after arming, so a parent that died first is
/// not missed.
pub fn die_with_parent() {
    let parent = nix::unistd::getppid();
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    if nix::unistd::getppid() != parent {
        std::process::exit(1);
    }
}

/// Have the process `cmd` starts die (SIGKILL) when the calling thread ends, even
/// if ipcperf itself is killed with SIGKILL.
pub fn command_dies_with_parent(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let parent = nix::unistd::getpid();
    // SAFETY: the closure runs in the child between fork and exec, and calls only
    // prctl, getppid and _exit, which are async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent.as_raw() {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// Send SIGINT to a process (what Ctrl-C sends).
pub fn interrupt(pid: i32) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGINT);
}

/// Wait for child `pid` to end; returns its raw wait status and the most memory it
/// held at once (ru_maxrss, KiB). For tests that bound a command's memory.
pub fn wait_with_max_rss(pid: u32) -> Result<(i32, u64), crate::error::Errno> {
    let mut status = 0;
    // SAFETY: `rusage` is a zeroed, writable struct for wait4 to fill; `status` is a
    // valid int; `pid` names one child of ours.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: as above.
        let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut ru) };
        if r >= 0 {
            return Ok((status, ru.ru_maxrss.max(0) as u64));
        }
        match crate::error::Errno::last() {
            crate::error::Errno::EINTR => continue,
            e => return Err(e),
        }
    }
}
