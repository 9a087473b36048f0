//! POSIX message queues: an owned descriptor (closed on drop) and a guard that
//! owns the name (unlinked on drop and on Ctrl-C).

use nix::mqueue::{mq_attr_member_t, MQ_OFlag, MqAttr, MqdT};
use nix::sys::stat::Mode;

use crate::cleanup::{register, Registration, Undo};
use crate::error::{Context, Errno, SysError, SysResult};

/// An open queue descriptor; closed on drop.
#[derive(Debug)]
pub struct Mq {
    mqd: Option<MqdT>,
    name: String,
}

/// A queue descriptor is a file descriptor on Linux: poll(2) reports it readable
/// when a message waits.
impl std::os::fd::AsFd for Mq {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.mqd().as_fd()
    }
}

impl Mq {
    fn mqd(&self) -> &MqdT {
        self.mqd.as_ref().expect("open until dropped")
    }

    /// Open an existing queue by name (`/ipcperf-...`).
    pub fn open(name: &str, write: bool) -> SysResult<Mq> {
        let flags = if write {
            MQ_OFlag::O_WRONLY
        } else {
            MQ_OFlag::O_RDONLY
        } | MQ_OFlag::O_CLOEXEC;
        let mqd = nix::mqueue::mq_open(name, flags, Mode::empty(), None).ctx("mq_open", &name)?;
        Ok(Mq {
            mqd: Some(mqd),
            name: name.to_string(),
        })
    }

    /// Send one message (blocks while the queue is full).
    #[inline]
    pub fn send(&self, msg: &[u8], prio: u32) -> Result<(), Errno> {
        let fd = std::os::fd::AsRawFd::as_raw_fd(self.mqd());
        // mq_timedsend with no time-out, the system call itself (see `fd::retry_syscall`).
        // SAFETY: `fd` is this open queue descriptor, `msg` is readable for its
        // length, and a null timeout means "block".
        crate::fd::retry_syscall(|| unsafe {
            libc::syscall(
                libc::SYS_mq_timedsend,
                fd,
                msg.as_ptr(),
                msg.len(),
                prio as libc::c_long,
                std::ptr::null::<libc::timespec>(),
            )
        })
        .map(|_| ())
    }

    /// Send without waiting (hang-up notes on the way out).
    pub fn try_send(&self, msg: &[u8]) -> Result<(), Errno> {
        let fd = std::os::fd::AsRawFd::as_raw_fd(self.mqd());
        // SAFETY: `fd` is this open queue descriptor; `msg` is a valid slice; a
        // timeout in the past makes mq_timedsend return at once when the queue is full.
        let r = unsafe {
            let ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            libc::mq_timedsend(fd, msg.as_ptr().cast(), msg.len(), 0, &ts)
        };
        if r == 0 {
            Ok(())
        } else {
            Err(Errno::last())
        }
    }

    /// Receive without waiting (None when the queue is empty).
    pub fn try_receive(&self, buf: &mut [u8]) -> Option<usize> {
        let fd = std::os::fd::AsRawFd::as_raw_fd(self.mqd());
        let mut prio = 0u32;
        // SAFETY: `fd` is this open queue descriptor; `buf` is writable for its
        // length; a zero timeout makes mq_timedreceive return at once when empty.
        let r = unsafe {
            let ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            libc::mq_timedreceive(fd, buf.as_mut_ptr().cast(), buf.len(), &mut prio, &ts)
        };
        (r >= 0).then_some(r as usize)
    }

    /// Receive one message into `buf` (at least the queue's message size); blocks.
    #[inline]
    pub fn receive(&self, buf: &mut [u8]) -> Result<usize, Errno> {
        let mut prio = 0u32;
        let fd = std::os::fd::AsRawFd::as_raw_fd(self.mqd());
        // mq_timedreceive with no time-out, the system call itself (see `send`).
        // SAFETY: `fd` is this open queue descriptor, `buf` is writable for its
        // length, `prio` is a valid u32, and a null timeout means "block".
        crate::fd::retry_syscall(|| unsafe {
            libc::syscall(
                libc::SYS_mq_timedreceive,
                fd,
                buf.as_mut_ptr(),
                buf.len(),
                &mut prio as *mut u32,
                std::ptr::null::<libc::timespec>(),
            )
        })
    }

    /// The largest message the queue holds (a receive needs a buffer this long).
    pub fn msg_size(&self) -> Result<usize, Errno> {
        nix::mqueue::mq_getattr(self.mqd()).map(|a| a.msgsize() as usize)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Take ownership of a queue descriptor (one handed over with SCM_RIGHTS or
    /// kept from [`Mq::try_clone`]).
    pub fn from_fd(fd: std::os::fd::OwnedFd, name: &str) -> Mq {
        let raw = std::os::fd::IntoRawFd::into_raw_fd(fd);
        // SAFETY: `raw` came out of an OwnedFd, so it is open and now owned by the
        // MqdT alone (closed once, by `mq_close` in Drop).
        let mqd = unsafe { std::os::fd::FromRawFd::from_raw_fd(raw) };
        Mq {
            mqd: Some(mqd),
            name: name.to_string(),
        }
    }

    /// A second descriptor sharing this one's open file description (so its
    /// O_NONBLOCK flag), as an owned fd that can travel.
    pub fn try_clone_fd(&self) -> SysResult<std::os::fd::OwnedFd> {
        std::os::fd::AsFd::as_fd(self.mqd())
            .try_clone_to_owned()
            .ctx("dup", &self.name)
    }

    /// Make every send and receive through this open description (and every
    /// descriptor sharing it) fail with EAGAIN instead of waiting: how a watchdog
    /// stops a side whose peer has died.
    pub fn set_nonblocking(&self) -> SysResult<()> {
        nix::mqueue::mq_set_nonblock(self.mqd())
            .map(|_| ())
            .ctx("mq_setattr", &self.name)
    }

    /// A second descriptor for the same queue (for a watchdog's hang-up note).
    pub fn reopen_for_writing(&self) -> SysResult<Mq> {
        Mq::open(&self.name, true)
    }
}

impl Drop for Mq {
    fn drop(&mut self) {
        if let Some(m) = self.mqd.take() {
            let _ = nix::mqueue::mq_close(m);
        }
    }
}

/// Raise RLIMIT_MSGQUEUE's soft limit to its hard one, or, where that changes
/// nothing and we may (CAP_SYS_RESOURCE), both to twice what they are. Whether it rose.
fn raise_msgqueue_limit() -> bool {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_MSGQUEUE) else {
        return false;
    };
    if soft < hard {
        return setrlimit(Resource::RLIMIT_MSGQUEUE, hard, hard).is_ok();
    }
    let more = hard.saturating_mul(2).max(1 << 20);
    setrlimit(Resource::RLIMIT_MSGQUEUE, more, more).is_ok()
}

/// Owns a queue's name: created exclusively, unlinked on drop and on Ctrl-C.
#[derive(Debug)]
pub struct MqName {
    name: String,
    _reg: Registration,
}

impl MqName {
    /// Create `name` (must start with `/`) holding up to `maxmsg` messages of `msgsize` bytes.
    /// When the queues' bytes would pass this process's RLIMIT_MSGQUEUE (mq_open's
    /// EMFILE), the soft limit is raised to the hard one (root: both doubled) once
    /// and the queue tried again; still over, the error names the limit (its
    /// object; the errno's own words, "Too many open files", would mislead).
    pub fn create(name: &str, maxmsg: usize, msgsize: usize) -> SysResult<MqName> {
        match Self::create_once(name, maxmsg, msgsize) {
            Err(e) if e.errno == Errno::EMFILE && raise_msgqueue_limit() => {
                Self::create_once(name, maxmsg, msgsize)
            }
            r => r,
        }
        .map_err(|e| {
            let limit = match e.errno {
                Errno::EMFILE => {
                    let bytes = nix::sys::resource::getrlimit(
                        nix::sys::resource::Resource::RLIMIT_MSGQUEUE,
                    )
                    .map_or(0, |(soft, _)| soft);
                    format!(
                        "this user's queues are at their limit, RLIMIT_MSGQUEUE = {bytes} bytes \
                         (`ulimit -q`)"
                    )
                }
                Errno::ENOSPC => {
                    let n = std::fs::read_to_string("/proc/sys/fs/mqueue/queues_max")
                        .map(|s| s.trim().to_string())
                        .unwrap_or_else(|_| "?".into());
                    format!(
                        "this IPC namespace's queues are at their limit, fs.mqueue.queues_max = {n}"
                    )
                }
                _ => return e,
            };
            SysError::new("mq_open(O_CREAT)", format!("{name}: {limit}"), e.errno)
        })
    }

    fn create_once(name: &str, maxmsg: usize, msgsize: usize) -> SysResult<MqName> {
        let attr = MqAttr::new(
            0,
            maxmsg as mq_attr_member_t,
            msgsize as mq_attr_member_t,
            0,
        );
        // Held until the queue is registered (an interruption waits for it).
        let _making = crate::cleanup::creating();
        let mqd = nix::mqueue::mq_open(
            name,
            MQ_OFlag::O_CREAT | MQ_OFlag::O_EXCL | MQ_OFlag::O_RDWR | MQ_OFlag::O_CLOEXEC,
            Mode::S_IRUSR | Mode::S_IWUSR,
            Some(&attr),
        )
        .ctx("mq_open(O_CREAT)", &name)?;
        let _ = nix::mqueue::mq_close(mqd);
        let owned = name.to_string();
        let reg = register(Undo::Call(Box::new(move || {
            let _ = unlink(&owned);
        })));
        Ok(MqName {
            name: name.to_string(),
            _reg: reg,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for MqName {
    fn drop(&mut self) {
        let _ = unlink(&self.name);
    }
}

/// mq_unlink(3).
pub fn unlink(name: &str) -> SysResult<()> {
    nix::mqueue::mq_unlink(name).ctx("mq_unlink", &name)
}

/// Whether a queue of this name exists (tests use it to prove guards let go).
pub fn exists(name: &str) -> bool {
    match Mq::open(name, false) {
        Ok(_) => true,
        Err(SysError { errno, .. }) => errno != Errno::ENOENT,
    }
}

/// Names (`/name`) of this IPC namespace's POSIX queues, read from a mounted
/// mqueue file system. When none is mounted (as on machines without systemd), one
/// is mounted for the look on a fresh directory and detached right after; that
/// needs CAP_SYS_ADMIN. None: there is no way to list them here.
pub fn list() -> Option<Vec<String>> {
    list_owned().map(|v| v.into_iter().map(|(n, _)| n).collect())
}

/// As [`list`], with each queue's owner uid.
pub fn list_owned() -> Option<Vec<(String, u32)>> {
    match mount_point() {
        Some(dir) => read_names(&dir),
        None => {
            let look = Look::mount()?;
            read_names(&look.dir)
        }
    }
}

fn read_names(dir: &std::path::Path) -> Option<Vec<(String, u32)>> {
    use std::os::unix::fs::MetadataExt;
    let rd = std::fs::read_dir(dir).ok()?;
    Some(
        rd.filter_map(|e| e.ok())
            .filter_map(|e| {
                let uid = e.metadata().ok()?.uid();
                Some((format!("/{}", e.file_name().to_string_lossy()), uid))
            })
            .collect(),
    )
}

/// Where an mqueue file system is mounted in this process's view, if anywhere.
fn mount_point() -> Option<std::path::PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    mounts.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        let (_, at, kind) = (f.next()?, f.next()?, f.next()?);
        // Paths with spaces are escaped (\040): not ones we can use as they are.
        (kind == "mqueue" && !at.contains('\\')).then(|| at.into())
    })
}

/// An mqueue file system mounted on a fresh directory for one look; detached and
/// the (empty) directory removed on drop. The directory's name does not start
/// with [`crate::names::PREFIX`], so `ipcperf clean` never takes it for a dead
/// run's directory, and it is only ever removed with rmdir: never recursively,
/// which through the mount would delete the queues themselves.
struct Look {
    dir: std::path::PathBuf,
}

impl Look {
    fn mount() -> Option<Look> {
        use nix::mount::{mount, MsFlags};
        use std::os::unix::fs::DirBuilderExt;
        static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(".mqueue-look-{}-{n}", std::process::id()));
        std::fs::DirBuilder::new().mode(0o700).create(&dir).ok()?;
        let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
        match mount(Some("mqueue"), &dir, Some("mqueue"), flags, None::<&str>) {
            Ok(()) => Some(Look { dir }),
            Err(_) => {
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }
}

impl Drop for Look {
    fn drop(&mut self) {
        if nix::mount::umount2(&self.dir, nix::mount::MntFlags::MNT_DETACH).is_ok() {
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_made_here_is_listed_and_the_look_leaves_no_mount() {
        let name = format!("/{}", crate::names::unique("mq-list"));
        let q = MqName::create(&name, 4, 64).unwrap();
        let Some(names) = list() else {
            eprintln!(
                "skipped: no mqueue file system mounted and none can be (needs CAP_SYS_ADMIN)"
            );
            return;
        };
        assert!(names.contains(&name), "{name} not in {names:?}");
        let mine = format!(".mqueue-look-{}-", std::process::id());
        let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&mine))
            .collect();
        assert!(left.is_empty(), "left behind: {left:?}");
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
        assert!(!mounts.contains(&mine), "still mounted: {mounts}");
        drop(q);
        assert!(
            !list().unwrap().contains(&name),
            "{name} still listed after drop"
        );
    }
}
