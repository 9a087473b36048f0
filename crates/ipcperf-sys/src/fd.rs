//! File descriptors: pipes, FIFOs, flags, and the read/write calls the hot loops use.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::Path;

use nix::fcntl::{fcntl, open, FcntlArg, OFlag};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::stat::Mode;

use crate::error::{Context, Errno, SysError, SysResult};

/// An anonymous pipe: (read end, write end), both close-on-exec.
pub fn pipe() -> SysResult<(OwnedFd, OwnedFd)> {
    nix::unistd::pipe2(OFlag::O_CLOEXEC).ctx("pipe2", &"")
}

/// Ask the kernel for a pipe buffer of `bytes` (F_SETPIPE_SZ); returns the size granted.
pub fn set_pipe_size(fd: BorrowedFd<'_>, bytes: usize) -> SysResult<usize> {
    let granted = fcntl(fd, FcntlArg::F_SETPIPE_SZ(bytes as libc::c_int))
        .ctx("fcntl(F_SETPIPE_SZ)", &format!("{bytes} bytes"))?;
    Ok(granted as usize)
}

/// The pipe's buffer size in bytes (F_GETPIPE_SZ).
pub fn pipe_size(fd: BorrowedFd<'_>) -> SysResult<usize> {
    let n = fcntl(fd, FcntlArg::F_GETPIPE_SZ).ctx("fcntl(F_GETPIPE_SZ)", &"")?;
    Ok(n as usize)
}

/// Switch O_NONBLOCK on or off.
pub fn set_nonblocking(fd: BorrowedFd<'_>, on: bool) -> SysResult<()> {
    let flags = fcntl(fd, FcntlArg::F_GETFL).ctx("fcntl(F_GETFL)", &"")?;
    let mut flags = OFlag::from_bits_truncate(flags);
    flags.set(OFlag::O_NONBLOCK, on);
    fcntl(fd, FcntlArg::F_SETFL(flags)).ctx("fcntl(F_SETFL)", &"")?;
    Ok(())
}

/// Run a raw system call (`libc::syscall`, which returns -1 and sets errno on
/// failure) until it is not interrupted; its result as a byte count. The measured
/// loops call the kernel this way rather than through glibc's wrappers, which add
/// cancellation bookkeeping once a process has had a second thread (a cost of the
/// harness, not of the mechanism: dd, single-threaded, never pays it).
#[inline(always)]
pub(crate) fn retry_syscall(mut call: impl FnMut() -> libc::c_long) -> Result<usize, Errno> {
    loop {
        match Errno::result(call()) {
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(e),
            Ok(n) => return Ok(n as usize),
        }
    }
}

/// writev(2), the system call itself (see [`write`]): one datagram on a connected
/// datagram socket.
pub fn writev(fd: BorrowedFd<'_>, iov: &[std::io::IoSlice<'_>]) -> Result<usize, Errno> {
    // SAFETY: IoSlice is ABI-compatible with struct iovec on Unix; every slice is
    // readable for the duration of the call, and `iov.len()` is their count.
    retry_syscall(|| unsafe {
        libc::syscall(
            libc::SYS_writev,
            fd.as_raw_fd(),
            iov.as_ptr(),
            iov.len() as libc::c_long,
        )
    })
}

/// readv(2), the system call itself (see [`write`]).
pub fn readv(fd: BorrowedFd<'_>, iov: &mut [std::io::IoSliceMut<'_>]) -> Result<usize, Errno> {
    // SAFETY: IoSliceMut is ABI-compatible with struct iovec on Unix; every slice
    // is writable for the duration of the call, and `iov.len()` is their count.
    retry_syscall(|| unsafe {
        libc::syscall(
            libc::SYS_readv,
            fd.as_raw_fd(),
            iov.as_mut_ptr(),
            iov.len() as libc::c_long,
        )
    })
}

/// Give the calling thread a descriptor table of its own, holding only stdin,
/// stdout and stderr. While a process's threads share one table, the kernel takes
/// and drops a reference on the file at every read and write (fdget): the
/// measuring thread would pay for a helper thread's mere existence (measured here:
/// 1 KiB writes to /dev/null 29% slower with glibc's threaded path as well). A
/// helper that needs no descriptor calls this first; it then also holds no copy of
/// a pipe end, so end-of-file still comes when the owner closes its end.
pub fn own_fd_table() -> SysResult<()> {
    nix::sched::unshare(nix::sched::CloneFlags::CLONE_FILES).ctx("unshare", &"CLONE_FILES")?;
    // SAFETY: close_range(3, ~0, 0) closes descriptors 3 and up in this thread's
    // table, which unshare has just made private: no other thread's are touched.
    let r = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
    if r != 0 {
        return Err(SysError::new("close_range", "3..", Errno::last()));
    }
    Ok(())
}

/// Start a helper thread with a descriptor table of its own ([`own_fd_table`]);
/// returns once the thread has let go of the shared table, so no descriptor the
/// caller opens or closes afterwards is ever held by it.
pub fn spawn_helper(
    name: &str,
    f: impl FnOnce() + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let join = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let _ = own_fd_table();
            let _ = tx.send(());
            f()
        })?;
    let _ = rx.recv_timeout(std::time::Duration::from_secs(2));
    Ok(join)
}

/// Bytes an unprivileged writer may still put on the file system holding `path`.
pub fn free_bytes(path: &Path) -> SysResult<u64> {
    let v = nix::sys::statvfs::statvfs(path).ctx("statvfs", &path.display())?;
    Ok(v.blocks_available() as u64 * v.fragment_size() as u64)
}

/// The size of the file system holding `path`, in bytes: 0 for one that keeps
/// no blocks of its own (proc, sysfs, ramfs), whose "0 bytes free" means nothing.
pub fn fs_bytes(path: &Path) -> SysResult<u64> {
    let v = nix::sys::statvfs::statvfs(path).ctx("statvfs", &path.display())?;
    Ok(v.blocks() as u64 * v.fragment_size() as u64)
}

/// Another thread's way to cut short the writes of a descriptor's owner, when
/// nothing else would (a file writer never blocks, so it never notices that its
/// reader died): [`Poison::poison`] replaces the descriptor in place (dup2) with
/// /dev/full, and the owner's next write fails with ENOSPC.
///
/// The owner keeps the [`PoisonGuard`] beside the descriptor and drops it first;
/// once the guard is gone, poisoning does nothing, so a descriptor number closed
/// and reused by someone else is never touched.
pub fn poisonable(fd: &OwnedFd) -> SysResult<(PoisonGuard, Poison)> {
    let full = open(
        "/dev/full",
        OFlag::O_WRONLY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .ctx("open", &"/dev/full")?;
    let target = std::sync::Arc::new(std::sync::Mutex::new(Some(fd.as_raw_fd())));
    Ok((
        PoisonGuard {
            target: target.clone(),
        },
        Poison { target, full },
    ))
}

/// Held by a poisonable descriptor's owner; see [`poisonable`].
#[derive(Debug)]
pub struct PoisonGuard {
    target: std::sync::Arc<std::sync::Mutex<Option<std::os::fd::RawFd>>>,
}

impl Drop for PoisonGuard {
    fn drop(&mut self) {
        *self.target.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Held by whoever may cut the owner's writes short; see [`poisonable`].
#[derive(Debug)]
pub struct Poison {
    target: std::sync::Arc<std::sync::Mutex<Option<std::os::fd::RawFd>>>,
    full: OwnedFd,
}

impl Poison {
    /// Make the owner's next write fail (ENOSPC); nothing once its guard is gone.
    pub fn poison(&self) {
        let target = self.target.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(fd) = *target {
            // SAFETY: `fd` is still open and still the owner's: the owner drops its
            // guard (which takes this lock and clears the number) before it closes
            // the descriptor, and we hold the lock. dup2 swaps the open file behind
            // the number atomically; `self.full` is our own open descriptor.
            unsafe {
                libc::dup2(self.full.as_raw_fd(), fd);
            }
        }
    }
}

/// Make a FIFO (mode 0600) at `path`.
pub fn mkfifo(path: &Path) -> SysResult<()> {
    nix::unistd::mkfifo(path, Mode::S_IRUSR | Mode::S_IWUSR).ctx("mkfifo", &path.display())
}

/// open(2) with close-on-exec added.
pub fn open_path(path: &Path, flags: OFlag, mode: u32) -> SysResult<OwnedFd> {
    open(
        path,
        flags | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(mode as libc::mode_t),
    )
    .ctx("open", &path.display())
}

pub use nix::fcntl::OFlag as OpenFlags;

/// One write(2). Returns bytes written; EINTR is retried.
#[inline]
pub fn write(fd: BorrowedFd<'_>, buf: &[u8]) -> Result<usize, Errno> {
    // SAFETY: `fd` is a valid borrowed descriptor and `buf` is readable for its
    // whole length for the duration of the call.
    retry_syscall(|| unsafe {
        libc::syscall(libc::SYS_write, fd.as_raw_fd(), buf.as_ptr(), buf.len())
    })
}

/// One read(2). Returns bytes read (0 at end of file); EINTR is retried.
#[inline]
pub fn read(fd: BorrowedFd<'_>, buf: &mut [u8]) -> Result<usize, Errno> {
    // SAFETY: `fd` is a valid borrowed descriptor and `buf` is writable for its
    // whole length for the duration of the call.
    retry_syscall(|| unsafe {
        libc::syscall(libc::SYS_read, fd.as_raw_fd(), buf.as_mut_ptr(), buf.len())
    })
}

/// How long since a TCP connection last heard from its peer, in ms: the age
/// of the last acknowledgement received (`tcpi_last_ack_recv` of TCP_INFO).
/// An idle connection with keepalive probes answered stays under the probe
/// interval and the round trip; a peer that vanished lets it grow.
pub fn tcp_silent_ms(fd: BorrowedFd<'_>) -> SysResult<u32> {
    // SAFETY: tcp_info is plain old data (integers only), so all zeroes is a
    // valid value of it.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `fd` is a valid borrowed descriptor; `info` is writable for `len`
    // bytes and `len` is a valid in/out length, both live for the call.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return Err(SysError::new("getsockopt(TCP_INFO)", "", Errno::last()));
    }
    Ok(info.tcpi_last_ack_recv)
}

/// Wait until `fd` is readable (or writable when `write` is set), for at most `timeout_ms`.
/// Returns false on time-out. Hang-ups and errors count as ready: the next call reports them.
pub fn wait_ready(fd: BorrowedFd<'_>, write: bool, timeout_ms: i32) -> SysResult<bool> {
    let ev = if write {
        PollFlags::POLLOUT
    } else {
        PollFlags::POLLIN
    };
    let mut fds = [PollFd::new(fd, ev)];
    let t = PollTimeout::try_from(timeout_ms.max(0)).unwrap_or(PollTimeout::MAX);
    loop {
        match poll(&mut fds, t) {
            Ok(n) => return Ok(n > 0),
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(SysError::new("poll", format!("fd {}", fd.as_raw_fd()), e)),
        }
    }
}

/// Wait until `fd` is readable, with no timeout (an untimed wait, as a program's).
pub fn wait_readable_untimed(fd: BorrowedFd<'_>) -> SysResult<()> {
    let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
    loop {
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => return Ok(()),
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(SysError::new("poll", format!("fd {}", fd.as_raw_fd()), e)),
        }
    }
}

/// A fixed set of descriptors waited on together (a server's clients). It keeps
/// their numbers, not the descriptors: its owner keeps them open while it waits.
#[derive(Debug)]
pub struct PollSet {
    fds: Vec<libc::pollfd>,
}

impl PollSet {
    /// Wait for input on each of `fds`.
    pub fn new(fds: &[BorrowedFd<'_>]) -> PollSet {
        PollSet {
            fds: fds
                .iter()
                .map(|f| libc::pollfd {
                    fd: f.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect(),
        }
    }

    /// Wait at most `timeout_ms` until one or more has input (or hung up, or
    /// failed: the next read says how); their indices go into `ready` (cleared
    /// first, never grown past the set's size when it has that capacity).
    /// Returns false on time-out.
    pub fn wait(&mut self, timeout_ms: i32, ready: &mut Vec<usize>) -> SysResult<bool> {
        ready.clear();
        loop {
            // SAFETY: `fds` is a valid array of `len` pollfd structures for the whole
            // call; poll(2) only writes their `revents`. A number that is no longer
            // open is reported as POLLNVAL, never read through.
            let n = unsafe {
                libc::poll(
                    self.fds.as_mut_ptr(),
                    self.fds.len() as libc::nfds_t,
                    timeout_ms.max(0),
                )
            };
            if n < 0 {
                let e = Errno::last();
                if e == Errno::EINTR {
                    continue;
                }
                return Err(SysError::new(
                    "poll",
                    format!("{} descriptors", self.fds.len()),
                    e,
                ));
            }
            if n == 0 {
                return Ok(false);
            }
            for (i, f) in self.fds.iter().enumerate() {
                if f.revents != 0 {
                    ready.push(i);
                }
            }
            return Ok(true);
        }
    }
}

/// ftruncate(2) to `len` and lseek(2) to 0: a file endpoint ready for a new series.
pub fn rewind(fd: BorrowedFd<'_>, truncate: bool) -> SysResult<()> {
    if truncate {
        nix::unistd::ftruncate(fd, 0).ctx("ftruncate", &"")?;
    }
    nix::unistd::lseek(fd, 0, nix::unistd::Whence::SeekSet).ctx("lseek", &"")?;
    Ok(())
}

/// A raw fd number for messages.
pub fn raw<F: AsFd>(f: &F) -> i32 {
    f.as_fd().as_raw_fd()
}

/// The open-file limit (RLIMIT_NOFILE): its soft limit raised to `want` where
/// the hard limit allows (never lowered, the hard limit never touched), as
/// many tools do at start; the soft and hard limits now.
pub fn raise_open_files(want: u64) -> SysResult<(u64, u64)> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ctx("getrlimit", &"RLIMIT_NOFILE")?;
    let to = want.min(hard);
    if to > soft {
        setrlimit(Resource::RLIMIT_NOFILE, to, hard).ctx("setrlimit", &"RLIMIT_NOFILE")?;
        return Ok((to, hard));
    }
    Ok((soft, hard))
}

/// The main thread's stack limit (RLIMIT_STACK, `ulimit -s`): a soft limit
/// under `want` raised toward it as far as the hard one allows (the kernel
/// checks the limit as the stack grows, so this takes effect at once); the
/// soft limit now, in bytes.
pub fn raise_stack(want: u64) -> SysResult<u64> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (soft, hard) = getrlimit(Resource::RLIMIT_STACK).ctx("getrlimit", &"RLIMIT_STACK")?;
    let to = want.min(hard);
    if to > soft {
        setrlimit(Resource::RLIMIT_STACK, to, hard).ctx("setrlimit", &"RLIMIT_STACK")?;
        return Ok(to);
    }
    Ok(soft)
}

/// Open a stream to read (a FIFO, a device) without blocking on a FIFO that no
/// writer has open, as `open(2)` would for ever: wait at most `bound` for a
/// writer. Returns the file, blocking again, and the bytes already read from it
/// (a FIFO's writer is seen by a read: EOF means none, EAGAIN one with nothing
/// written yet); None when no writer came within `bound`.
pub fn open_stream(
    path: &Path,
    bound: std::time::Duration,
) -> std::io::Result<Option<(std::fs::File, Vec<u8>)>> {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let fifo = f.metadata()?.file_type().is_fifo();
    let t = std::time::Instant::now();
    let mut first = vec![0u8; 4096];
    let got = loop {
        if !fifo {
            break 0;
        }
        match f.read(&mut first) {
            Ok(0) if t.elapsed() < bound => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Ok(0) => return Ok(None),
            Ok(n) => break n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break 0,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    };
    first.truncate(got);
    set_nonblocking(f.as_fd(), false).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(Some((f, first)))
}

/// The file-size limit (RLIMIT_FSIZE, `ulimit -f`) in bytes, where one is set.
pub fn file_size_limit() -> Option<u64> {
    use nix::sys::resource::{getrlimit, Resource, RLIM_INFINITY};
    match getrlimit(Resource::RLIMIT_FSIZE) {
        Ok((soft, _)) if soft != RLIM_INFINITY => Some(soft),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether threads `a` and `b` share one descriptor table (kcmp with
    /// KCMP_FILES = 2); None where kcmp is not built into the kernel.
    fn same_fd_table(a: libc::pid_t, b: libc::pid_t) -> Option<bool> {
        // SAFETY: kcmp only compares kernel objects of the two tasks; no memory is passed.
        let r = unsafe { libc::syscall(libc::SYS_kcmp, a, b, 2 as libc::c_int, 0u64, 0u64) };
        (r >= 0).then_some(r == 0)
    }

    /// A thread that reports its tid, then waits until told to end.
    fn parked(
        start: impl FnOnce(Box<dyn FnOnce() + Send>) -> std::thread::JoinHandle<()>,
    ) -> (
        libc::pid_t,
        std::sync::mpsc::Sender<()>,
        std::thread::JoinHandle<()>,
    ) {
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let (quit_tx, quit_rx) = std::sync::mpsc::channel::<()>();
        let join = start(Box::new(move || {
            // SAFETY: gettid takes no arguments.
            tid_tx.send(unsafe { libc::gettid() }).unwrap();
            let _ = quit_rx.recv();
        }));
        (tid_rx.recv().unwrap(), quit_tx, join)
    }

    #[test]
    fn a_helper_thread_has_its_own_table_and_holds_no_earlier_descriptor() {
        let (r, w) = pipe().unwrap();
        // SAFETY: gettid takes no arguments.
        let me = unsafe { libc::gettid() };
        let (plain, plain_quit, plain_join) = parked(std::thread::spawn);
        let (helper, helper_quit, helper_join) =
            parked(|f| spawn_helper("test-helper", f).unwrap());
        match (same_fd_table(me, plain), same_fd_table(me, helper)) {
            // A plain thread shares the table (the control), the helper must not.
            (Some(true), Some(shared)) => assert!(!shared, "the helper shares our table"),
            other => eprintln!("kcmp part skipped: kcmp(KCMP_FILES) answered {other:?}"),
        }
        plain_quit.send(()).unwrap();
        plain_join.join().unwrap();
        // The helper started after the pipe was made; closing our write end must
        // still give end-of-file, so the helper holds no copy of it.
        drop(w);
        let mut b = [0u8; 1];
        assert_eq!(
            read(r.as_fd(), &mut b),
            Ok(0),
            "the helper kept a pipe end open"
        );
        helper_quit.send(()).unwrap();
        helper_join.join().unwrap();
    }

    #[test]
    fn poison_fails_the_next_write_and_does_nothing_once_the_guard_is_gone() {
        let (_r, w) = pipe().unwrap();
        let (guard, poison) = poisonable(&w).unwrap();
        assert_eq!(write(w.as_fd(), b"x"), Ok(1));
        poison.poison();
        assert_eq!(write(w.as_fd(), b"x"), Err(Errno::ENOSPC));
        drop(guard);

        let (_r2, w2) = pipe().unwrap();
        let (guard2, poison2) = poisonable(&w2).unwrap();
        drop(guard2);
        poison2.poison();
        assert_eq!(
            write(w2.as_fd(), b"x"),
            Ok(1),
            "poisoned after its guard was gone"
        );
    }
}
