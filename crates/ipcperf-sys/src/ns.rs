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
