//! Linux namespaces for a child process: the peer of a case run "across" a
//! boundary starts in fresh namespaces of the kinds asked (unshare(2) between
//! fork and exec).

use std::os::unix::process::CommandExt;
use std::process::Command;

/// The unshare(2) flags of the namespace kinds a peer can be started in.
pub const NET: i32 = libc::CLONE_NEWNET;
pub const IPC: i32 = libc::CLONE_NEWIPC;
pub const MNT: i32 = libc::CLONE_NEWNS;
pub const UTS: i32 = libc::CLONE_NEWUTS;
/// A new PID namespace holds the *children* of the process that unshares: see
/// [`become_pid_one`].
pub const PID: i32 = libc::CLONE_NEWPID;
/// A user namespace: what lets a process without root make the others. Its
/// one uid and gid map to ours, so files keep their owner.
pub const USER: i32 = libc::CLONE_NEWUSER;

/// In a process that unshared [`PID`] (its children are born in the new PID
/// namespace): fork once. The child, PID 1 there, returns `Ok(())` and goes on,
/// dying with this process (PR_SET_PDEATHSIG); this process lets go of its
/// standard input (so the child alone holds it), waits for the child and exits
/// with its status: it never returns.
pub fn become_pid_one() -> std::io::Result<()> {
    // SAFETY: called at the start of a single-threaded process (the peer's main,
    // before it starts any thread), so the child of fork(2) may run anything.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: prctl(2) with PR_SET_PDEATHSIG and a signal number; no memory
        // is passed.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
        return Ok(());
    }
    let null = std::fs::File::open("/dev/null")?;
    // SAFETY: dup2(2) of a descriptor we own onto standard input.
    unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&null), 0) };
    let mut status = 0;
    // SAFETY: waitpid(2) on our own child, with a pointer to a local int.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            std::process::exit(1);
        }
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    std::process::exit(code)
}

/// Have the process `cmd` starts run in fresh namespaces of the kinds in `flags`
/// (a sum of [`NET`], [`IPC`], [`MNT`], [`UTS`], [`PID`]); spawning fails with unshare's
/// error (EPERM without CAP_SYS_ADMIN).
pub fn command_unshares(cmd: &mut Command, flags: i32) {
    if flags == 0 {
        return;
    }
    // With a user namespace: its maps, written by the child itself (a process
    // may map its own uid and gid in a namespace it made), made here.
    // SAFETY: getuid(2) and getgid(2) take nothing and cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let uid_map = format!("{uid} {uid} 1\n").into_bytes();
    let gid_map = format!("{gid} {gid} 1\n").into_bytes();
    // SAFETY: the closure runs in the child between fork and exec and calls only
    // system calls (unshare, open, write, close) on buffers made before the fork;
    // nothing is allocated and no lock taken; errno is read on failure.
    unsafe {
        cmd.pre_exec(move || {
            if libc::unshare(flags) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if flags & USER != 0 {
                let put = |path: &std::ffi::CStr, what: &[u8]| -> std::io::Result<()> {
                    let fd = libc::open(path.as_ptr(), libc::O_WRONLY);
                    if fd < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    let n = libc::write(fd, what.as_ptr().cast(), what.len());
                    let e = std::io::Error::last_os_error();
                    libc::close(fd);
                    if n != what.len() as isize {
                        return Err(e);
                    }
                    Ok(())
                };
                put(c"/proc/self/setgroups", b"deny")?;
                put(c"/proc/self/uid_map", &uid_map)?;
                put(c"/proc/self/gid_map", &gid_map)?;
            }
            Ok(())
        });
    }
}

/// `/proc/self/fd/N` for `fd`, in `buf`, NUL-terminated (no allocation: for use
/// between fork and exec).
fn fd_path(fd: i32, buf: &mut [u8; 32]) {
    const HEAD: &[u8] = b"/proc/self/fd/";
    buf[..HEAD.len()].copy_from_slice(HEAD);
    let mut digits = [0u8; 10];
    let (mut n, mut k) = (fd.max(0) as u32, 0);
    loop {
        digits[k] = b'0' + (n % 10) as u8;
        k += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for (i, d) in digits[..k].iter().rev().enumerate() {
        buf[HEAD.len() + i] = *d;
    }
    buf[HEAD.len() + k] = 0;
}

/// In the fresh mount namespace of a process `cmd` starts (call after
/// [`command_unshares`] with [`MNT`]): nothing it mounts reaches ours, and its
/// /tmp is an empty tmpfs that holds only the directories in `keep` that lie
/// under /tmp (each bind-mounted from ours, at any depth: `TMPDIR=/tmp/job7`
/// gives `/tmp/job7/ipcperf-…`, whose parents are made empty in the tmpfs), as a
/// container given those shared directories sees it.
pub fn command_private_tmp(cmd: &mut Command, keep: &[std::path::PathBuf]) {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let tmp = std::path::Path::new("/tmp");
    let under: Vec<&std::path::Path> = keep
        .iter()
        .filter(|k| k.starts_with(tmp) && k.as_path() != tmp)
        .map(|k| k.as_path())
        .collect();
    // Every directory between /tmp and a kept one, parents first, each once.
    let mut parents: Vec<CString> = Vec::new();
    for k in &under {
        let mut chain: Vec<&std::path::Path> = k
            .ancestors()
            .skip(1)
            .take_while(|a| *a != tmp && a.starts_with(tmp))
            .collect();
        chain.reverse();
        for a in chain {
            if let Ok(c) = CString::new(a.as_os_str().as_bytes()) {
                if !parents.contains(&c) {
                    parents.push(c);
                }
            }
        }
    }
    let keep: Vec<CString> = under
        .iter()
        .filter_map(|k| CString::new(k.as_os_str().as_bytes()).ok())
        .collect();
    // One descriptor a directory (a fan-in case has one per client), made here:
    // the child only writes into it.
    let mut fds = vec![-1i32; keep.len()];
    // SAFETY: the closure runs in the child between fork and exec and calls only
    // system calls (mount, open, mkdir, close) on C strings made here, before the
    // fork, and on buffers on its stack; it allocates nothing and takes no lock
    // (`last_os_error` reads errno).
    unsafe {
        cmd.pre_exec(move || {
            let err = || Err(std::io::Error::last_os_error());
            if libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                return err();
            }
            // The shared directories, held open across the tmpfs that hides them.
            for (k, fd) in keep.iter().zip(fds.iter_mut()) {
                *fd = libc::open(k.as_ptr(), libc::O_PATH | libc::O_DIRECTORY);
                if *fd < 0 {
                    return err();
                }
            }
            if libc::mount(
                c"tmpfs".as_ptr(),
                c"/tmp".as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                c"mode=1777".as_ptr().cast(),
            ) != 0
            {
                return err();
            }
            for p in &parents {
                if libc::mkdir(p.as_ptr(), 0o755) != 0
                    && std::io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST)
                {
                    return err();
                }
            }
            for (k, &fd) in keep.iter().zip(fds.iter()) {
                let mut src = [0u8; 32];
                fd_path(fd, &mut src);
                if libc::mkdir(k.as_ptr(), 0o700) != 0
                    || libc::mount(
                        src.as_ptr().cast(),
                        k.as_ptr(),
                        std::ptr::null(),
                        libc::MS_BIND,
                        std::ptr::null(),
                    ) != 0
                {
                    return err();
                }
                libc::close(fd);
            }
            Ok(())
        });
    }
}

/// Whether this process may make namespaces without a user namespace of their
/// own (it is root: CAP_SYS_ADMIN).
pub fn may_unshare() -> bool {
    // SAFETY: geteuid(2) takes nothing and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Have the process `cmd` starts join the network namespace open as `ns` (a
/// `/run/netns/NAME` file) before it runs: setns(2) between fork and exec.
/// `ns` must stay open until the spawn returns.
pub fn command_joins_net(cmd: &mut Command, ns: &std::os::fd::OwnedFd) {
    use std::os::fd::AsRawFd;
    let fd = ns.as_raw_fd();
    // SAFETY: the closure runs in the child between fork and exec and calls only
    // setns(2) on a descriptor the parent keeps open across the spawn (the child
    // has its copy), then reads errno.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fd_paths_are_spelled_without_allocating() {
        let mut b = [0u8; 32];
        super::fd_path(7, &mut b);
        assert_eq!(&b[..17], b"/proc/self/fd/7\0\0");
        super::fd_path(1234567890, &mut b);
        assert_eq!(&b[..25], b"/proc/self/fd/1234567890\0");
        super::fd_path(40, &mut b);
        assert_eq!(&b[..17], b"/proc/self/fd/40\0");
    }
}
