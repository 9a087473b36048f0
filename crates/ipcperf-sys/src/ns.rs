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

/// Have the process `cmd` starts run in fresh namespaces of the kinds in `flags`
/// (a sum of [`NET`], [`IPC`], [`MNT`], [`UTS`]); spawning fails with unshare's
/// error (EPERM without CAP_SYS_ADMIN).
pub fn command_unshares(cmd: &mut Command, flags: i32) {
    if flags == 0 {
        return;
    }
    // SAFETY: the closure runs in the child between fork and exec and calls only
    // unshare(2) (a system call; nothing allocated, no lock taken) and reads errno.
    unsafe {
        cmd.pre_exec(move || {
            if libc::unshare(flags) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Whether this process may make namespaces (it is root: CAP_SYS_ADMIN).
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
