//! Interruption: Ctrl-C, `Ctrl-\`, SIGTERM and SIGHUP undo everything registered, then exit.

use nix::sys::signal::{SigSet, SigmaskHow, Signal};

/// Block SIGINT/SIGTERM/SIGHUP/SIGQUIT in this thread (and so in every thread started after
/// it) and start a thread that waits for them; on one, it runs
/// [`crate::cleanup::run_all`] and exits with 128 + the signal number.
///
/// Call it first thing in `main`, before any other thread exists. Child processes
/// started by `std::process::Command` get an empty signal mask again.
///
/// SIGHUP stays ignored where this process was started ignoring it: a run under
/// `nohup` outlives the terminal it was started from; so does SIGQUIT (`Ctrl-\`,
/// whose default would dump core and leave every named object behind), ignored by
/// a shell's background job. (SIGINT and SIGTERM are always taken: a Ctrl-C or a
/// kill must clean up, whoever started us.)
pub fn cleanup_on_interrupt() {
    let mut set = SigSet::empty();
    set.add(Signal::SIGINT);
    set.add(Signal::SIGTERM);
    for sig in [Signal::SIGHUP, Signal::SIGQUIT] {
        if !ignored(sig) {
            set.add(sig);
        }
    }
    if nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None).is_err() {
        return;
    }
    // Its own descriptor table: the thread that measures must not share one.
    crate::fd::spawn_helper("ipcperf-signals", move || {
        if let Ok(sig) = set.wait() {
            end_as_interrupted(&format!("interrupted by {sig:?}"), 128 + sig as i32);
        }
    })
    .ok();
}

/// End the process as an interruption does: every registered object removed,
/// the work of [`on_interrupt_finish`] done (≤ 1 s), "ipcperf: WHY; named
/// objects removed" and the note of [`on_interrupt_say`] on stderr, exit `code`.
/// The Ctrl-C handler's ending; also a measuring command's whose standard output
/// went away (`ipcperf run | head -3`), as SIGPIPE would have ended it.
pub fn end_as_interrupted(why: &str, code: i32) -> ! {
    INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
    crate::cleanup::run_all();
    finish();
    // Written without eprintln!, which panics where stderr is gone. A progress
    // line on the terminal is cleared first.
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    if std::io::IsTerminal::is_terminal(&err) {
        let _ = write!(err, "\r\x1b[K");
    }
    let _ = writeln!(err, "ipcperf: {why}; named objects removed");
    let note = INTERRUPT_NOTE.lock().map(|n| n.clone()).unwrap_or_default();
    if let Some(n) = note {
        let _ = writeln!(err, "ipcperf: {n}");
    }
    drop(err);
    std::process::exit(code)
}

/// Whether `sig` is ignored now (SIG_IGN, inherited across exec).
fn ignored(sig: Signal) -> bool {
    // SAFETY: a zeroed sigaction is a valid value for the kernel to write into.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: with a null new action sigaction only reads the current one into
    // `old`, which lives for the call; nothing is changed.
    let r = unsafe { libc::sigaction(sig as libc::c_int, std::ptr::null(), &mut old) };
    r == 0 && old.sa_sigaction == libc::SIG_IGN
}

/// Set once an interruption is being handled: the clean-up removes objects under
/// the feet of the measuring thread, whose case then fails; its ending must not
/// race the handler's exit (128 + the signal) with one of its own.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether an interruption is being handled (the process is about to exit with
/// 128 + the signal): the main thread waits for that instead of exiting itself.
pub fn interrupted() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)
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

/// How to reach the thread that runs [`on_interrupt_finish`]'s work: send it a
/// channel, on which it answers once done.
type Finisher = std::sync::mpsc::Sender<std::sync::mpsc::Sender<()>>;
static FINISHER: std::sync::Mutex<Option<Finisher>> = std::sync::Mutex::new(None);

/// Run `f` if the process is interrupted from now on, after the clean-up and
/// before the exit, for at most a second (e.g. marking a saved run stopped).
/// `f` runs on a thread started now in the process's own descriptor table (the
/// handler's thread has a table of its own, where a file the process has open,
/// a database, is not the same file); a later call replaces an earlier one's work.
pub fn on_interrupt_finish(f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = std::sync::mpsc::channel::<std::sync::mpsc::Sender<()>>();
    let started = std::thread::Builder::new()
        .name("ipcperf-finish".into())
        .spawn(move || {
            // A sender dropped (replaced, or the process ending) ends the thread
            // without running `f`.
            if let Ok(done) = rx.recv() {
                f();
                let _ = done.send(());
            }
        });
    if started.is_ok() {
        if let Ok(mut slot) = FINISHER.lock() {
            *slot = Some(tx);
        }
    }
}

/// Forget the work of [`on_interrupt_finish`] (the run it would mark stopped
/// has finished) and the note of [`on_interrupt_say`]: an interruption from
/// now on must not undo what was done.
pub fn forget_interrupt_finish() {
    if let Ok(mut slot) = FINISHER.lock() {
        slot.take();
    }
    if let Ok(mut n) = INTERRUPT_NOTE.lock() {
        n.take();
    }
}

/// The handler's part of [`on_interrupt_finish`]: run the work, wait ≤ 1 s.
fn finish() {
    let Some(tx) = FINISHER.lock().ok().and_then(|mut f| f.take()) else {
        return;
    };
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    if tx.send(done_tx).is_ok() {
        let _ = done_rx.recv_timeout(std::time::Duration::from_secs(1));
    }
}

/// SIGCONTs received: each is the end of a stop (SIGSTOP, SIGTSTP: Ctrl-Z then
/// `fg`), which every clock we time with counts as time passed.
static CONTINUES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Where SIGCONT is read (see [`count_continues`]); unset: a handler counts it.
static CONTINUED: std::sync::OnceLock<nix::sys::signalfd::SignalFd> = std::sync::OnceLock::new();

extern "C" fn on_continue(_: libc::c_int) {
    CONTINUES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

/// Count this process's stops, so that a bounded wait that a stop ran out
/// waits again instead of calling a live peer dead, and a series that held a
/// stop is taken again. Call it in `main` before any other thread exists.
///
/// SIGCONT is blocked in this thread, and so in every thread started after it
/// (a child `std::process::Command` starts gets an empty mask again), and read
/// from a signalfd by [`continues`]: it is pending from the moment the stop
/// ends, before any thread of ours runs again. A handler, which ran in
/// whichever thread the kernel picked, could run after the thread that timed
/// a series had already found the count unchanged (a pipeline round that held
/// a stop of 3 s was kept). SIGCONT continues a process whatever its mask.
/// Where no signalfd can be had, the handler (SA_RESTART) counts them.
pub fn count_continues() {
    use nix::sys::signalfd::{SfdFlags, SignalFd};
    let mut set = SigSet::empty();
    set.add(Signal::SIGCONT);
    if set.thread_block().is_ok() {
        match SignalFd::with_flags(&set, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC) {
            Ok(fd) => {
                let _ = CONTINUED.set(fd);
                return;
            }
            Err(_) => {
                let _ = set.thread_unblock();
            }
        }
    }
    use nix::sys::signal::{SaFlags, SigAction, SigHandler};
    let act = SigAction::new(
        SigHandler::Handler(on_continue),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    // SAFETY: the handler only adds to a static atomic, which is
    // async-signal-safe; it touches no lock, no allocation, no errno.
    let _ = unsafe { nix::sys::signal::sigaction(Signal::SIGCONT, &act) };
}

/// How many times this process has been continued after a stop (see
/// [`count_continues`]); a mark to give [`continued_since`].
pub fn continues() -> u32 {
    if let Some(fd) = CONTINUED.get() {
        // A SIGCONT pending is taken here (one at most: a signal of the
        // standard kind does not queue, and two stops unread read as one).
        while let Ok(Some(_)) = fd.read_signal() {
            CONTINUES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    CONTINUES.load(std::sync::atomic::Ordering::SeqCst)
}

/// A mark for [`continued_since`] taken without a system call, for a wait in a
/// timed loop: [`continues`] reads the signalfd, a `read(2)` that would add a
/// failed call to each round trip. A stop not yet read when the mark is taken
/// counts as one after it, so a wait that ran out waits once more; it never
/// hides one.
#[inline]
pub fn continues_mark() -> u32 {
    CONTINUES.load(std::sync::atomic::Ordering::SeqCst)
}

/// Whether this process was stopped and continued since `mark` (a value of
/// [`continues`]). Read from the signalfd, the answer is there at once; a
/// handler runs in whichever thread the kernel picks, which may not yet have
/// run when a wait that the stop ran out returns in another, so without the
/// signalfd this looks again 20 ms later before saying no.
pub fn continued_since(mark: u32) -> bool {
    if continues() != mark {
        return true;
    }
    if CONTINUED.get().is_some() {
        return false;
    }
    std::thread::sleep(std::time::Duration::from_millis(20));
    continues() != mark
}

/// Ignore SIGXFSZ: a write past the file-size limit (`ulimit -f`) then fails
/// with EFBIG, said as any failed write is, where the signal's default
/// killed the process without a word (exit 153, mid-run, nothing cleaned up).
pub fn ignore_file_size_limit_signal() {
    // SAFETY: SIG_IGN installs no handler, so no code runs in signal context;
    // setting a disposition is async-signal-safe and touches no memory of ours.
    let _ =
        unsafe { nix::sys::signal::signal(Signal::SIGXFSZ, nix::sys::signal::SigHandler::SigIgn) };
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

/// A process's pidfd (pidfd_open): readable once the process has ended, so a
/// watcher can sleep on it instead of looking at the process now and then.
pub fn pidfd_open(pid: i32) -> crate::error::SysResult<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open(2) takes a pid and flags and returns a new descriptor or -1.
    let r = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if r < 0 {
        return Err(crate::error::SysError::new(
            "pidfd_open",
            format!("process {pid}"),
            crate::error::Errno::last(),
        ));
    }
    // SAFETY: the kernel just gave us this descriptor; we are its only owner.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(r as i32) })
}

/// A thread asleep on another process's pidfd until that process ends (then it
/// calls its function once) or the watch is dropped. It arms no timer and wakes
/// no one while the process lives. Its descriptor table is its own, holding only
/// the pidfd, the stop eventfd and the descriptors `keep` names (what its
/// function writes to), so the measuring thread keeps the kernel's unshared fast
/// path (see [`crate::fd::own_fd_table`]).
pub struct ProcessWatch {
    stop: crate::eventfd::Eventfd,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ProcessWatch {
    pub fn start(
        pid: i32,
        keep: &[i32],
        on_end: Box<dyn FnOnce() + Send>,
    ) -> crate::error::SysResult<ProcessWatch> {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        let pidfd = pidfd_open(pid)?;
        let stop = crate::eventfd::Eventfd::counter(0)?;
        let (p, s) = (
            pidfd.as_raw_fd(),
            std::os::fd::AsFd::as_fd(&stop).as_raw_fd(),
        );
        let mut kept = vec![p, s];
        kept.extend_from_slice(keep);
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("ipcperf-watch".into())
            .spawn(move || {
                // A private copy of the table, then everything but our two closed.
                let ok = nix::sched::unshare(nix::sched::CloneFlags::CLONE_FILES).is_ok()
                    && close_all_but(&kept);
                let _ = tx.send(ok);
                if !ok {
                    return;
                }
                // SAFETY: this thread's table is private (unshare above) and holds
                // `p` and `s`, copies of the owner's: closing them here closes only
                // these copies, once each, when the thread ends.
                let (pidfd, stop) = unsafe { (OwnedFd::from_raw_fd(p), OwnedFd::from_raw_fd(s)) };
                use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
                use std::os::fd::AsFd;
                loop {
                    let mut fds = [
                        PollFd::new(pidfd.as_fd(), PollFlags::POLLIN),
                        PollFd::new(stop.as_fd(), PollFlags::POLLIN),
                    ];
                    match poll(&mut fds, PollTimeout::NONE) {
                        Ok(_) => {}
                        Err(nix::errno::Errno::EINTR) => continue,
                        Err(_) => return,
                    }
                    let ready = |f: &PollFd| f.revents().is_some_and(|r| !r.is_empty());
                    if ready(&fds[1]) {
                        return;
                    }
                    if ready(&fds[0]) {
                        on_end();
                        return;
                    }
                }
            })
            .map_err(|e| crate::error::SysError::from_io("spawn", "process watch", &e))?;
        let started = rx
            .recv_timeout(std::time::Duration::from_secs(2))
            .unwrap_or(false);
        // Our copy of the pidfd goes; the stop eventfd stays, to wake the thread.
        drop(pidfd);
        if !started {
            let _ = thread.join();
            return Err(crate::error::SysError::new(
                "unshare",
                "process watch",
                crate::error::Errno::EAGAIN,
            ));
        }
        Ok(ProcessWatch {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for ProcessWatch {
    fn drop(&mut self) {
        let _ = self.stop.write(1);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Close every descriptor from 3 up but those in `keep` (in this thread's table).
fn close_all_but(keep: &[i32]) -> bool {
    let mut keep: Vec<u32> = keep.iter().map(|&k| k as u32).collect();
    keep.sort_unstable();
    let mut from = 3u32;
    for k in keep {
        if k > from {
            // SAFETY: close_range(2) on this thread's private table (after unshare).
            if unsafe { libc::syscall(libc::SYS_close_range, from, k - 1, 0u32) } != 0 {
                return false;
            }
        }
        from = from.max(k + 1);
    }
    // SAFETY: as above, the rest of the range.
    unsafe { libc::syscall(libc::SYS_close_range, from, u32::MAX, 0u32) == 0 }
}
