//! System V message queues (msgget/msgsnd/msgrcv/msgctl) and the guard that
//! removes a queue on drop and on Ctrl-C.
//!
//! How `ipcperf clean` knows a queue is ours: its key is
//! `0x7000_0000 | owner_pid << 6 | seq` (see [`key_for`]) — four marker bits, the
//! creator's pid (pids fit in 22 bits: the kernel's PID_MAX_LIMIT) and a 6-bit
//! sequence — created with mode 0600 by our uid. `clean` removes a queue only when
//! all of that holds and the pid in the key is dead.

use crate::cleanup::{register, Registration, Undo};
use crate::error::{Errno, SysError, SysResult};

const KEY_MARK: u32 = 0x7000_0000;
const KEY_MASK: u32 = 0xF000_0000;
const MODE: i32 = 0o600;

/// The key for queue number `seq` of process `pid` (None when the pid does not fit).
pub fn key_for(pid: u32, seq: u32) -> Option<i32> {
    (pid < (1 << 22)).then_some((KEY_MARK | (pid << 6) | (seq & 63)) as i32)
}

/// The owner pid encoded in one of our keys (None if the key is not ours).
pub fn owner_of_key(key: i32) -> Option<i32> {
    let k = key as u32;
    (k & KEY_MASK == KEY_MARK).then_some(((k & !KEY_MASK) >> 6) as i32)
}

/// A queue we created; removed (IPC_RMID) on drop.
#[derive(Debug)]
pub struct SysvMsgQueue {
    id: i32,
    _reg: Registration,
}

impl SysvMsgQueue {
    /// Create a fresh queue with one of our keys (mode 0600).
    pub fn create() -> SysResult<SysvMsgQueue> {
        let pid = std::process::id();
        static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        // Held until the queue is registered (an interruption waits for it).
        let _making = crate::cleanup::creating();
        for _ in 0..64 {
            let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            // A pid beyond 22 bits gets a private key: it works, but `clean` cannot claim it.
            let key = key_for(pid, seq).unwrap_or(libc::IPC_PRIVATE);
            // SAFETY: msgget takes plain integers and touches no memory of ours.
            let id = unsafe { libc::msgget(key, libc::IPC_CREAT | libc::IPC_EXCL | MODE) };
            if id >= 0 {
                let reg = register(Undo::Call(Box::new(move || {
                    let _ = remove(id);
                })));
                return Ok(SysvMsgQueue { id, _reg: reg });
            }
            let e = Errno::last();
            if e != Errno::EEXIST {
                return Err(SysError::new("msgget", format!("key 0x{key:08x}"), e));
            }
        }
        Err(SysError::new(
            "msgget",
            "64 keys of this process",
            Errno::EEXIST,
        ))
    }

    pub fn id(&self) -> i32 {
        self.id
    }
}

impl Drop for SysvMsgQueue {
    fn drop(&mut self) {
        let _ = remove(self.id);
    }
}

/// msgctl(IPC_RMID).
pub fn remove(id: i32) -> SysResult<()> {
    // SAFETY: IPC_RMID takes no buffer (a null pointer is allowed).
    let r = unsafe { libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
    if r == 0 {
        Ok(())
    } else {
        Err(SysError::new(
            "msgctl(IPC_RMID)",
            format!("id {id}"),
            Errno::last(),
        ))
    }
}

/// Whether a queue with this id exists (tests use it to prove guards let go).
pub fn exists(id: i32) -> bool {
    // SAFETY: `ds` is a valid, writable msqid_ds for IPC_STAT to fill.
    unsafe {
        let mut ds: libc::msqid_ds = std::mem::zeroed();
        libc::msgctl(id, libc::IPC_STAT, &mut ds) == 0
    }
}

/// The most bytes queue `id` may hold at once (msg_qbytes, set from
/// kernel.msgmnb when it was made); None when it cannot be read.
pub fn qbytes(id: i32) -> Option<usize> {
    // SAFETY: `ds` is a valid, writable msqid_ds for IPC_STAT to fill.
    unsafe {
        let mut ds: libc::msqid_ds = std::mem::zeroed();
        (libc::msgctl(id, libc::IPC_STAT, &mut ds) == 0).then_some(ds.msg_qbytes as usize)
    }
}

/// A message buffer: the `long mtype` header then room for `max` bytes of text.
#[derive(Debug)]
pub struct MsgBuf {
    words: Vec<libc::c_long>,
    max: usize,
}

const HDR: usize = std::mem::size_of::<libc::c_long>();

impl MsgBuf {
    pub fn new(max: usize) -> MsgBuf {
        MsgBuf {
            words: vec![0; 1 + max.div_ceil(HDR)],
            max,
        }
    }

    /// The type of the message last received into this buffer (or last sent).
    // `c_long` is i64 only on 64-bit targets.
    #[allow(clippy::unnecessary_cast)]
    pub fn mtype(&self) -> i64 {
        self.words.first().map_or(0, |&t| t as i64)
    }

    fn text_mut(&mut self) -> &mut [u8] {
        let max = self.max;
        // SAFETY: `words` holds 1 + ceil(max/8) longs, so the bytes after the first
        // long are at least `max` long; u8 has no alignment or validity needs.
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr().add(1).cast::<u8>(), max) }
    }

    fn text(&self) -> &[u8] {
        // SAFETY: as in `text_mut`, read-only.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().add(1).cast::<u8>(), self.max) }
    }
}

/// msgsnd(2) of `msg` (at most the buffer's size) with type `mtype`; blocks while full.
#[inline]
pub fn send(id: i32, mtype: i64, msg: &[u8], b: &mut MsgBuf, nowait: bool) -> Result<(), Errno> {
    let n = msg.len().min(b.max);
    b.words[0] = mtype as libc::c_long;
    b.text_mut()[..n].copy_from_slice(&msg[..n]);
    let flags = if nowait { libc::IPC_NOWAIT } else { 0 };
    // The system call itself (see `fd::retry_syscall`).
    // SAFETY: `words` is a valid msgbuf (mtype then at least `n` bytes of text).
    crate::fd::retry_syscall(|| unsafe {
        libc::syscall(
            libc::SYS_msgsnd,
            id,
            b.words.as_ptr(),
            n,
            flags as libc::c_long,
        )
    })
    .map(|_| ())
}

/// msgrcv(2) of the next message of type `mtype` into `out`; blocks. Returns its length.
#[inline]
pub fn recv(id: i32, mtype: i64, out: &mut [u8], b: &mut MsgBuf) -> Result<usize, Errno> {
    // The system call itself (see `fd::retry_syscall`).
    // SAFETY: `words` is a valid msgbuf with room for `b.max` bytes of text.
    let len = crate::fd::retry_syscall(|| unsafe {
        libc::syscall(
            libc::SYS_msgrcv,
            id,
            b.words.as_mut_ptr(),
            b.max,
            mtype as libc::c_long,
            0 as libc::c_long,
        )
    })?;
    let n = len.min(out.len());
    out[..n].copy_from_slice(&b.text()[..n]);
    Ok(len)
}

/// One queue as /proc/sysvipc/msg shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueInfo {
    pub key: i32,
    pub id: i32,
    pub mode: u32,
    pub uid: u32,
}

/// Every SysV message queue on the system (from /proc/sysvipc/msg).
pub fn list() -> Vec<QueueInfo> {
    let Ok(s) = std::fs::read_to_string("/proc/sysvipc/msg") else {
        return Vec::new();
    };
    s.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // key msqid perms cbytes qnum lspid lrpid uid gid cuid cgid ...
            Some(QueueInfo {
                key: f.first()?.parse().ok()?,
                id: f.get(1)?.parse().ok()?,
                mode: u32::from_str_radix(f.get(2)?, 8).ok()?,
                uid: f.get(7)?.parse().ok()?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_carry_the_owner() {
        let k = key_for(32767, 5).unwrap();
        assert_eq!(owner_of_key(k), Some(32767));
        assert_eq!(owner_of_key(0x1234), None);
        assert!(key_for(1 << 22, 0).is_none());
    }

    #[test]
    fn queue_carries_typed_messages_and_is_removed_on_drop() {
        let q = SysvMsgQueue::create().unwrap();
        let id = q.id();
        let mut b = MsgBuf::new(100);
        send(id, 2, b"two", &mut b, false).unwrap();
        send(id, 1, b"one!", &mut b, false).unwrap();
        let mut out = [0u8; 100];
        assert_eq!(recv(id, 1, &mut out, &mut b).unwrap(), 4);
        assert_eq!(&out[..4], b"one!");
        assert_eq!(recv(id, 2, &mut out, &mut b).unwrap(), 3);
        assert!(list().iter().any(|i| i.id == id && i.mode & 0o777 == 0o600));
        assert!(exists(id));
        drop(q);
        assert!(!exists(id));
    }
}
