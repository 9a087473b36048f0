//! Names for ipcperf's kernel objects, and the guard of its private directory.
//!
//! Every named object carries the prefix `ipcperf-<owner pid>-`, so `ipcperf clean`
//! can tell ours from anyone else's and can tell whether the owner is still alive.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::cleanup::{register, Registration, Undo};
use crate::error::{Context, SysResult};

pub const PREFIX: &str = "ipcperf-";

static SEQ: AtomicU32 = AtomicU32::new(0);

/// A fresh name `ipcperf-<pid>-<seq>-<tag>`, unique within this process.
pub fn unique(tag: &str) -> String {
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    format!("{PREFIX}{}-{n}-{tag}", std::process::id())
}

/// The owner pid in a name made by [`unique`] (None if the name is not ours).
pub fn owner_pid(name: &str) -> Option<i32> {
    let rest = name
        .strip_prefix('/')
        .unwrap_or(name)
        .strip_prefix(PREFIX)?;
    rest.split('-').next()?.parse().ok()
}

/// Whether a process with this pid exists (signal 0 probe; EPERM means it exists).
pub fn pid_alive(pid: i32) -> bool {
    use nix::errno::Errno;
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
        Ok(()) => true,
        Err(Errno::EPERM) => true,
        Err(_) => false,
    }
}

/// Whether process `pid` runs: it exists and is not a zombie waiting to be reaped
/// (the state letter in `/proc/<pid>/stat`, read after the command name, which
/// may itself hold spaces and parentheses).
pub fn process_running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(st) => st
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|c| c != 'Z' && c != 'X'),
        Err(_) => false,
    }
}

/// Whether our child `pid` still runs (not exited, nor a zombie), asked of the
/// kernel (waitid with WNOWAIT: it stays to be reaped by whoever waits for it),
/// not of /proc, whose pids are another namespace's where /proc was not mounted
/// again (under `unshare --pid`). A pid that is no child of ours (or one reaped
/// already) is looked up as [`process_running`] does.
pub fn child_running(pid: i32) -> bool {
    use nix::sys::wait::{waitid, Id, WaitPidFlag, WaitStatus};
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    match waitid(Id::Pid(nix::unistd::Pid::from_raw(pid)), flags) {
        Ok(WaitStatus::StillAlive) => true,
        Ok(_) => false,
        Err(_) => process_running(pid),
    }
}

/// A private directory (mode 0700) for FIFOs, socket paths and temp files.
/// Removed with everything in it on drop, or by [`crate::cleanup::run_all`].
#[derive(Debug)]
pub struct PrivateDir {
    path: PathBuf,
    _reg: Registration,
}

impl PrivateDir {
    /// Create `<base>/ipcperf-<pid>-<seq>-<tag>`.
    pub fn create(base: &Path, tag: &str) -> SysResult<PrivateDir> {
        use std::os::unix::fs::DirBuilderExt;
        let path = base.join(unique(tag));
        // Held until the directory is registered (an interruption waits for it).
        let _making = crate::cleanup::creating();
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .ctx("mkdir", &path.display())?;
        let reg = register(Undo::Path(path.clone()));
        Ok(PrivateDir { path, _reg: reg })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A path inside the directory.
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The default base directory for private directories: $TMPDIR or /tmp.
pub fn default_base() -> PathBuf {
    std::env::temp_dir()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_runs_until_it_exits_and_stays_to_be_reaped() {
        let mut c = std::process::Command::new("sleep")
            .arg("0.2")
            .spawn()
            .unwrap();
        let pid = c.id() as i32;
        assert!(child_running(pid));
        let t0 = std::time::Instant::now();
        while child_running(pid) {
            assert!(t0.elapsed() < std::time::Duration::from_secs(5));
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // Asked, not reaped: its status is still there for its owner.
        assert!(c.try_wait().unwrap().is_some_and(|s| s.success()));
        assert!(!child_running(pid));
        // Not a child of ours: as /proc says.
        assert!(child_running(std::process::id() as i32));
    }

    #[test]
    fn names_carry_owner_pid() {
        let n = unique("x");
        assert_eq!(owner_pid(&n), Some(std::process::id() as i32));
        assert_eq!(owner_pid("/ipcperf-42-0-q"), Some(42));
        assert_eq!(owner_pid("other-42"), None);
    }

    #[test]
    fn private_dir_is_removed_on_drop() {
        let d = PrivateDir::create(&default_base(), "t").unwrap();
        let p = d.path().to_path_buf();
        std::fs::write(d.join("f"), b"x").unwrap();
        assert!(p.is_dir());
        drop(d);
        assert!(!p.exists());
    }
}
