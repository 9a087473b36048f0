//! File locks on a lock file: flock(2) (owned by the open file description) and
//! fcntl(2) record locks (owned by the process). The lock file lives in a
//! [`crate::names::PrivateDir`], which removes it.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use crate::error::{Errno, SysError, SysResult};

/// An open lock file. Each `LockFile` is its own open file description.
#[derive(Debug)]
pub struct LockFile {
    file: File,
    path: PathBuf,
}

impl LockFile {
    /// Open (creating, mode 0600) the lock file at `path`.
    pub fn open(path: &Path) -> SysResult<LockFile> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .map_err(|e| SysError::from_io("open", path.display().to_string(), &e))?;
        Ok(LockFile {
            file,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, op: &'static str) -> SysError {
        SysError::new(op, self.path.display().to_string(), Errno::last())
    }

    fn flock_op(&self, op: libc::c_int, name: &'static str) -> SysResult<bool> {
        loop {
            // SAFETY: a valid descriptor owned by `self.file`.
            if unsafe { libc::flock(self.file.as_raw_fd(), op) } == 0 {
                return Ok(true);
            }
            match Errno::last() {
                Errno::EINTR => continue,
                Errno::EWOULDBLOCK => return Ok(false),
                _ => return Err(self.err(name)),
            }
        }
    }

    /// flock(LOCK_EX), waiting. Only for uncontended use; see [`try_flock`](Self::try_flock).
    #[inline]
    pub fn flock(&self) -> SysResult<()> {
        self.flock_op(libc::LOCK_EX, "flock(LOCK_EX)").map(|_| ())
    }

    /// flock(LOCK_EX | LOCK_NB): false when another description holds it.
    pub fn try_flock(&self) -> SysResult<bool> {
        self.flock_op(libc::LOCK_EX | libc::LOCK_NB, "flock(LOCK_EX|LOCK_NB)")
    }

    #[inline]
    pub fn funlock(&self) -> SysResult<()> {
        self.flock_op(libc::LOCK_UN, "flock(LOCK_UN)").map(|_| ())
    }

    fn setlk(&self, cmd: libc::c_int, ty: libc::c_int, name: &'static str) -> SysResult<bool> {
        let fl = libc::flock {
            l_type: ty as libc::c_short,
            l_whence: libc::SEEK_SET as libc::c_short,
            l_start: 0,
            l_len: 0,
            l_pid: 0,
        };
        loop {
            // SAFETY: a valid descriptor and a valid `struct flock` on the stack.
            if unsafe { libc::fcntl(self.file.as_raw_fd(), cmd, &fl) } == 0 {
                return Ok(true);
            }
            match Errno::last() {
                Errno::EINTR => continue,
                Errno::EAGAIN | Errno::EACCES => return Ok(false),
                _ => return Err(self.err(name)),
            }
        }
    }

    /// fcntl(F_SETLKW, F_WRLCK) on the whole file, waiting. Only for uncontended use.
    #[inline]
    pub fn fcntl_lock(&self) -> SysResult<()> {
        self.setlk(libc::F_SETLKW, libc::F_WRLCK, "fcntl(F_SETLKW)")
            .map(|_| ())
    }

    /// fcntl(F_SETLK, F_WRLCK): false when another process holds it.
    pub fn try_fcntl_lock(&self) -> SysResult<bool> {
        self.setlk(libc::F_SETLK, libc::F_WRLCK, "fcntl(F_SETLK)")
    }

    #[inline]
    pub fn fcntl_unlock(&self) -> SysResult<()> {
        self.setlk(libc::F_SETLK, libc::F_UNLCK, "fcntl(F_SETLK, F_UNLCK)")
            .map(|_| ())
    }

    /// The lock file's inode (to find its locks in /proc/locks).
    pub fn inode(&self) -> SysResult<u64> {
        use std::os::unix::fs::MetadataExt;
        self.file
            .metadata()
            .map(|m| m.ino())
            .map_err(|e| SysError::from_io("fstat", self.path.display().to_string(), &e))
    }
}

/// Locks held on inode `ino` as /proc/locks lists them: (kind FLOCK/POSIX, pid).
pub fn locks_on(ino: u64) -> Vec<(String, i32)> {
    let text = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    let mut v = Vec::new();
    for line in text.lines() {
        // "1: POSIX  ADVISORY  WRITE 1234 08:01:5678 0 EOF"
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 6 || f[1] == "->" {
            continue;
        }
        let dev_ino = f[5];
        if dev_ino
            .rsplit(':')
            .next()
            .and_then(|s| s.parse::<u64>().ok())
            == Some(ino)
        {
            v.push((f[1].to_string(), f[4].parse().unwrap_or(-1)));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::{default_base, PrivateDir};

    #[test]
    fn flock_excludes_another_description() {
        let d = PrivateDir::create(&default_base(), "t-lock").unwrap();
        let a = LockFile::open(&d.join("lock")).unwrap();
        let b = LockFile::open(&d.join("lock")).unwrap();
        a.flock().unwrap();
        assert!(!b.try_flock().unwrap());
        a.funlock().unwrap();
        assert!(b.try_flock().unwrap());
        b.funlock().unwrap();
    }

    #[test]
    fn fcntl_lock_shows_in_proc_locks() {
        let d = PrivateDir::create(&default_base(), "t-lock").unwrap();
        let a = LockFile::open(&d.join("lock")).unwrap();
        let ino = a.inode().unwrap();
        a.fcntl_lock().unwrap();
        let me = std::process::id() as i32;
        assert!(locks_on(ino).contains(&("POSIX".to_string(), me)));
        a.fcntl_unlock().unwrap();
        assert!(!locks_on(ino).iter().any(|(k, _)| k == "POSIX"));
    }
}
