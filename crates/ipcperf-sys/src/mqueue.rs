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
        loop {
            match nix::mqueue::mq_send(self.mqd(), msg, prio) {
                Err(Errno::EINTR) => continue,
                r => return r,
            }
        }
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
        loop {
            match nix::mqueue::mq_receive(self.mqd(), buf, &mut prio) {
                Err(Errno::EINTR) => continue,
                r => return r,
            }
        }
    }

    pub fn name(&self) -> &str {
        &self.name
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

/// Owns a queue's name: created exclusively, unlinked on drop and on Ctrl-C.
#[derive(Debug)]
pub struct MqName {
    name: String,
    _reg: Registration,
}

impl MqName {
    /// Create `name` (must start with `/`) holding up to `maxmsg` messages of `msgsize` bytes.
    pub fn create(name: &str, maxmsg: usize, msgsize: usize) -> SysResult<MqName> {
        let attr = MqAttr::new(
            0,
            maxmsg as mq_attr_member_t,
            msgsize as mq_attr_member_t,
            0,
        );
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

/// Names of the queues in /dev/mqueue (None when it is not mounted here).
pub fn list() -> Option<Vec<String>> {
    if !is_mounted() {
        return None;
    }
    let rd = std::fs::read_dir("/dev/mqueue").ok()?;
    Some(
        rd.filter_map(|e| e.ok())
            .map(|e| format!("/{}", e.file_name().to_string_lossy()))
            .collect(),
    )
}

fn is_mounted() -> bool {
    std::fs::read_to_string("/proc/self/mounts")
        .map(|m| {
            m.lines()
                .any(|l| l.split_whitespace().nth(2) == Some("mqueue"))
        })
        .unwrap_or(false)
}
