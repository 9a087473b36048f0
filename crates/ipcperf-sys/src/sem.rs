//! Semaphores: a SysV semaphore set (semget/semop/semtimedop), POSIX named
//! semaphores (sem_open) and POSIX unnamed semaphores placed in shared memory
//! (sem_init with pshared). Guards remove what they created (IPC_RMID, sem_unlink)
//! on drop and on Ctrl-C. Every blocking wait has a bounded form.

use std::ffi::CString;
use std::sync::Arc;
use std::time::Duration;

use crate::cleanup::{register, Registration, Undo};
use crate::error::{Errno, SysError, SysResult};
use crate::names::unique;
use crate::shm::SharedMem;

extern "C" {
    // glibc >= 2.30 (Debian 12 has 2.36): waits measured against CLOCK_MONOTONIC,
    // so a wall-clock step cannot stretch or cut a bounded wait.
    fn sem_clockwait(
        sem: *mut libc::sem_t,
        clock: libc::clockid_t,
        abstime: *const libc::timespec,
    ) -> libc::c_int;
    fn semtimedop(
        semid: libc::c_int,
        sops: *mut libc::sembuf,
        nsops: libc::size_t,
        timeout: *const libc::timespec,
    ) -> libc::c_int;
}

fn rel_timespec(d: Duration) -> libc::timespec {
    libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    }
}

/// An absolute CLOCK_MONOTONIC deadline `d` from now.
pub(crate) fn mono_deadline(d: Duration) -> libc::timespec {
    let now = crate::clock::now_ns() + d.as_nanos() as u64;
    libc::timespec {
        tv_sec: (now / 1_000_000_000) as libc::time_t,
        tv_nsec: (now % 1_000_000_000) as libc::c_long,
    }
}

// ---------------------------------------------------------------- SysV

// How `ipcperf clean` can know a set is ours: its key is
// `0x7000_0000 | owner_pid << 6 | seq` (the scheme of the SysV message queues:
// four marker bits, a 22-bit pid, a 6-bit sequence), mode 0600, our uid.
const KEY_MARK: u32 = 0x7000_0000;
const KEY_MASK: u32 = 0xF000_0000;

/// The key of set number `seq` of process `pid` (None when the pid does not fit).
pub fn sem_key_for(pid: u32, seq: u32) -> Option<i32> {
    (pid < (1 << 22)).then_some((KEY_MARK | (pid << 6) | (seq & 63)) as i32)
}

/// The owner pid in one of our keys (None if the key is not ours).
pub fn sem_owner_of_key(key: i32) -> Option<i32> {
    let k = key as u32;
    (k & KEY_MASK == KEY_MARK).then_some(((k & !KEY_MASK) >> 6) as i32)
}

/// Every SysV semaphore set on the system: (key, id, uid), from /proc/sysvipc/sem.
pub fn sysv_sem_list() -> Vec<(i32, i32, u32)> {
    let t = std::fs::read_to_string("/proc/sysvipc/sem").unwrap_or_default();
    t.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((
                f.first()?.parse().ok()?,
                f.get(1)?.parse().ok()?,
                f.get(4)?.parse().ok()?,
            ))
        })
        .collect()
}

/// A SysV semaphore set. The creator owns it: IPC_RMID on drop and on Ctrl-C.
/// A set opened by id (a peer) does not remove it.
#[derive(Debug)]
pub struct SysvSemSet {
    id: i32,
    nsems: u16,
    owner: bool,
    _reg: Option<Registration>,
}

/// Remove a SysV semaphore set by id (`ipcperf clean` of an orphaned set).
pub fn sysv_sem_remove(id: i32) {
    rmid(id)
}

fn rmid(id: i32) {
    // SAFETY: IPC_RMID takes no fourth argument; an id that is already gone gives EINVAL.
    unsafe {
        libc::semctl(id, 0, libc::IPC_RMID);
    }
}

impl SysvSemSet {
    /// A new private set of `initial.len()` semaphores with these values (mode 0600).
    pub fn create(initial: &[u16]) -> SysResult<SysvSemSet> {
        static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = initial.len() as i32;
        let pid = std::process::id();
        let mut id = -1;
        // Held until the set is registered (an interruption waits for it).
        let _making = crate::cleanup::creating();
        for _ in 0..64 {
            let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            // A pid beyond 22 bits gets a private key: it works, but `clean` cannot claim it.
            let key = sem_key_for(pid, seq).unwrap_or(libc::IPC_PRIVATE);
            // SAFETY: plain integer arguments; no memory of ours is touched.
            id = unsafe { libc::semget(key, n, libc::IPC_CREAT | libc::IPC_EXCL | 0o600) };
            if id >= 0 {
                break;
            }
            let e = Errno::last();
            if e != Errno::EEXIST {
                return Err(SysError::new(
                    "semget",
                    format!("key 0x{key:08x}, {n} semaphores (kernel.sem limits)"),
                    e,
                ));
            }
        }
        if id < 0 {
            return Err(SysError::new(
                "semget",
                "64 keys of this process",
                Errno::EEXIST,
            ));
        }
        let set = SysvSemSet {
            id,
            nsems: n as u16,
            owner: true,
            _reg: Some(register(Undo::Call(Box::new(move || rmid(id))))),
        };
        for (i, &v) in initial.iter().enumerate() {
            set.set_value(i as u16, v)?;
        }
        Ok(set)
    }

    /// Use a set made by another side (not removed on drop).
    pub fn open(id: i32, nsems: u16) -> SysResult<SysvSemSet> {
        let s = SysvSemSet {
            id,
            nsems,
            owner: false,
            _reg: None,
        };
        s.value(0)?;
        Ok(s)
    }

    pub fn id(&self) -> i32 {
        self.id
    }

    fn check(&self, num: u16) -> SysResult<()> {
        if num >= self.nsems {
            return Err(SysError::new(
                "semop",
                format!("semaphore {num} of a {}-semaphore set", self.nsems),
                Errno::EINVAL,
            ));
        }
        Ok(())
    }

    /// SETVAL.
    pub fn set_value(&self, num: u16, v: u16) -> SysResult<()> {
        self.check(num)?;
        // SAFETY: SETVAL reads `union semun` by value; on Linux its `int val` member is
        // passed exactly like an int in this variadic call.
        let r = unsafe { libc::semctl(self.id, num as i32, libc::SETVAL, v as libc::c_int) };
        if r < 0 {
            return Err(SysError::new(
                "semctl(SETVAL)",
                format!("set {}", self.id),
                Errno::last(),
            ));
        }
        Ok(())
    }

    /// GETVAL.
    pub fn value(&self, num: u16) -> SysResult<i32> {
        self.check(num)?;
        // SAFETY: GETVAL takes no fourth argument.
        let r = unsafe { libc::semctl(self.id, num as i32, libc::GETVAL) };
        if r < 0 {
            return Err(SysError::new(
                "semctl(GETVAL)",
                format!("set {}", self.id),
                Errno::last(),
            ));
        }
        Ok(r)
    }

    /// One semop on semaphore `num` adding `delta`. `undo` sets SEM_UNDO (the kernel
    /// reverses it if this process dies). A blocking operation waits at most
    /// `timeout` (semtimedop); returns false when that ran out.
    #[inline]
    pub fn op(
        &self,
        num: u16,
        delta: i16,
        undo: bool,
        timeout: Option<Duration>,
    ) -> SysResult<bool> {
        let mut sb = libc::sembuf {
            sem_num: num,
            sem_op: delta,
            sem_flg: if undo { libc::SEM_UNDO as i16 } else { 0 },
        };
        self.semop(std::slice::from_mut(&mut sb), timeout)
            .map_err(|e| SysError::new("semop", format!("SysV set {} semaphore {num}", self.id), e))
    }

    /// The operations in `sb`, done together (semop, or semtimedop with a
    /// timeout), retried on EINTR; false when the timeout ran out.
    #[inline]
    fn semop(&self, sb: &mut [libc::sembuf], timeout: Option<Duration>) -> Result<bool, Errno> {
        let ts = timeout.map(rel_timespec);
        loop {
            let r = match &ts {
                // SAFETY: `sb` is a valid slice of sembufs for the call, its length the
                // count; `t` lives across the call.
                Some(t) => unsafe { semtimedop(self.id, sb.as_mut_ptr(), sb.len(), t) },
                // SAFETY: as above, without a timeout.
                None => unsafe { libc::semop(self.id, sb.as_mut_ptr(), sb.len()) },
            };
            if r == 0 {
                return Ok(true);
            }
            match Errno::last() {
                Errno::EAGAIN => return Ok(false),
                Errno::EINTR => continue,
                e => return Err(e),
            }
        }
    }

    /// lmbench's `lat_sem` form: one semop of two operations, done together or not
    /// at all: wait for (take) a unit of semaphore `take`, and with it give one to
    /// `give`. Untimed with `timeout` None (plain semop), else semtimedop; returns
    /// false when the timeout ran out.
    #[inline]
    pub fn take_and_give(
        &self,
        take: u16,
        give: u16,
        timeout: Option<Duration>,
    ) -> SysResult<bool> {
        let mut sb = [
            libc::sembuf {
                sem_num: take,
                sem_op: -1,
                sem_flg: 0,
            },
            libc::sembuf {
                sem_num: give,
                sem_op: 1,
                sem_flg: 0,
            },
        ];
        self.semop(&mut sb, timeout).map_err(|e| {
            SysError::new(
                "semop",
                format!("SysV set {} semaphores {take} and {give}", self.id),
                e,
            )
        })
    }

    /// Without waiting (IPC_NOWAIT): true if the operation happened.
    pub fn try_op(&self, num: u16, delta: i16) -> SysResult<bool> {
        let mut sb = libc::sembuf {
            sem_num: num,
            sem_op: delta,
            sem_flg: libc::IPC_NOWAIT as i16,
        };
        // SAFETY: one valid sembuf on the stack, count 1.
        let r = unsafe { libc::semop(self.id, &mut sb, 1) };
        if r == 0 {
            return Ok(true);
        }
        match Errno::last() {
            Errno::EAGAIN => Ok(false),
            e => Err(SysError::new("semop", format!("SysV set {}", self.id), e)),
        }
    }
}

impl Drop for SysvSemSet {
    fn drop(&mut self) {
        if self.owner {
            rmid(self.id);
        }
    }
}

/// Whether a SysV semaphore set with this id exists.
pub fn sysv_sem_exists(id: i32) -> bool {
    // SAFETY: GETVAL takes no fourth argument; a removed id gives EINVAL/EIDRM.
    unsafe { libc::semctl(id, 0, libc::GETVAL) >= 0 }
}

// ---------------------------------------------------------------- POSIX

/// Operations common to POSIX semaphores, named or unnamed.
fn sem_wait_raw(p: *mut libc::sem_t, what: &str) -> SysResult<()> {
    loop {
        // SAFETY: `p` points at a live, initialized sem_t (guaranteed by the owner type).
        if unsafe { libc::sem_wait(p) } == 0 {
            return Ok(());
        }
        match Errno::last() {
            Errno::EINTR => continue,
            e => return Err(SysError::new("sem_wait", what.to_string(), e)),
        }
    }
}

fn sem_try_raw(p: *mut libc::sem_t, what: &str) -> SysResult<bool> {
    // SAFETY: `p` points at a live, initialized sem_t.
    if unsafe { libc::sem_trywait(p) } == 0 {
        return Ok(true);
    }
    match Errno::last() {
        Errno::EAGAIN | Errno::EINTR => Ok(false),
        e => Err(SysError::new("sem_trywait", what.to_string(), e)),
    }
}

fn sem_timed_raw(p: *mut libc::sem_t, timeout: Duration, what: &str) -> SysResult<bool> {
    let dl = mono_deadline(timeout);
    loop {
        // SAFETY: `p` points at a live sem_t; `dl` lives across the call.
        if unsafe { sem_clockwait(p, libc::CLOCK_MONOTONIC, &dl) } == 0 {
            return Ok(true);
        }
        match Errno::last() {
            Errno::EINTR => continue,
            Errno::ETIMEDOUT => return Ok(false),
            e => return Err(SysError::new("sem_clockwait", what.to_string(), e)),
        }
    }
}

fn sem_post_raw(p: *mut libc::sem_t, what: &str) -> SysResult<()> {
    // SAFETY: `p` points at a live, initialized sem_t.
    if unsafe { libc::sem_post(p) } == 0 {
        return Ok(());
    }
    Err(SysError::new("sem_post", what.to_string(), Errno::last()))
}

fn sem_value_raw(p: *mut libc::sem_t, what: &str) -> SysResult<i32> {
    let mut v: libc::c_int = 0;
    // SAFETY: `p` points at a live sem_t; `v` is a valid out-pointer.
    if unsafe { libc::sem_getvalue(p, &mut v) } == 0 {
        return Ok(v);
    }
    Err(SysError::new(
        "sem_getvalue",
        what.to_string(),
        Errno::last(),
    ))
}

/// A POSIX named semaphore (`/ipcperf-<pid>-<n>-<tag>`). The creator owns the name:
/// sem_unlink on drop and on Ctrl-C; every holder sem_closes on drop.
#[derive(Debug)]
pub struct NamedSem {
    sem: *mut libc::sem_t,
    name: String,
    owner: bool,
    _reg: Option<Registration>,
}

// SAFETY: a sem_t from sem_open is designed for use from any thread and process.
unsafe impl Send for NamedSem {}
// SAFETY: as above; every operation on it is thread-safe.
unsafe impl Sync for NamedSem {}

fn unlink_sem(name: &str) {
    if let Ok(c) = CString::new(name) {
        // SAFETY: a valid NUL-terminated name.
        unsafe {
            libc::sem_unlink(c.as_ptr());
        }
    }
}

impl NamedSem {
    /// Create a new named semaphore (exclusive, mode 0600) with value `value`.
    pub fn create(tag: &str, value: u32) -> SysResult<NamedSem> {
        let name = format!("/{}", unique(tag));
        let c = CString::new(name.clone()).expect("no NUL in our names");
        // Held until the name is registered (an interruption waits for it).
        let _making = crate::cleanup::creating();
        // SAFETY: a valid name; O_CREAT takes the mode and value as further arguments.
        let sem = unsafe {
            libc::sem_open(
                c.as_ptr(),
                libc::O_CREAT | libc::O_EXCL,
                0o600 as libc::c_uint,
                value as libc::c_uint,
            )
        };
        if sem == libc::SEM_FAILED {
            return Err(SysError::new("sem_open", name, Errno::last()));
        }
        let n2 = name.clone();
        Ok(NamedSem {
            sem,
            name,
            owner: true,
            _reg: Some(register(Undo::Call(Box::new(move || unlink_sem(&n2))))),
        })
    }

    /// Open an existing named semaphore (not unlinked on drop).
    pub fn open(name: &str) -> SysResult<NamedSem> {
        let c = CString::new(name)
            .map_err(|_| SysError::new("sem_open", name.to_string(), Errno::EINVAL))?;
        // SAFETY: a valid name; without O_CREAT no further arguments are read.
        let sem = unsafe { libc::sem_open(c.as_ptr(), 0) };
        if sem == libc::SEM_FAILED {
            return Err(SysError::new("sem_open", name.to_string(), Errno::last()));
        }
        Ok(NamedSem {
            sem,
            name: name.to_string(),
            owner: false,
            _reg: None,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    #[inline]
    pub fn wait(&self) -> SysResult<()> {
        sem_wait_raw(self.sem, &self.name)
    }
    #[inline]
    pub fn try_wait(&self) -> SysResult<bool> {
        sem_try_raw(self.sem, &self.name)
    }
    /// Wait at most `timeout`; false when it ran out.
    pub fn wait_timeout(&self, timeout: Duration) -> SysResult<bool> {
        sem_timed_raw(self.sem, timeout, &self.name)
    }
    #[inline]
    pub fn post(&self) -> SysResult<()> {
        sem_post_raw(self.sem, &self.name)
    }
    pub fn value(&self) -> SysResult<i32> {
        sem_value_raw(self.sem, &self.name)
    }
}

impl Drop for NamedSem {
    fn drop(&mut self) {
        // SAFETY: `sem` came from sem_open and is closed once, here.
        unsafe {
            libc::sem_close(self.sem);
        }
        if self.owner {
            unlink_sem(&self.name);
        }
    }
}

/// Whether a POSIX named semaphore exists (glibc keeps them as /dev/shm/sem.<name>).
pub fn named_sem_exists(name: &str) -> bool {
    let c = match CString::new(name) {
        Ok(c) => c,
        Err(_) => return false,
    };
    // SAFETY: a valid name; without O_CREAT no further arguments are read.
    let sem = unsafe { libc::sem_open(c.as_ptr(), 0) };
    if sem == libc::SEM_FAILED {
        return false;
    }
    // SAFETY: `sem` was just opened and is closed once.
    unsafe {
        libc::sem_close(sem);
    }
    true
}

/// Bytes and alignment one `sem_t` takes in shared memory.
pub const SEM_SIZE: usize = std::mem::size_of::<libc::sem_t>();
pub const SEM_ALIGN: usize = std::mem::align_of::<libc::sem_t>();

/// A POSIX unnamed semaphore in shared memory (sem_init, pshared = 1): Duncan's
/// "RAM semaphore". The side that initialized it destroys it on drop.
#[derive(Debug)]
pub struct ShmSem {
    // Keeps the mapping that `p` points into alive.
    _mem: Arc<SharedMem>,
    p: *mut libc::sem_t,
    owner: bool,
}

// SAFETY: `p` points into a shared mapping kept alive by `_mem`; a pshared sem_t is
// designed for use from any thread and process.
unsafe impl Send for ShmSem {}
// SAFETY: as above; every operation on a sem_t is thread-safe.
unsafe impl Sync for ShmSem {}

impl ShmSem {
    /// Initialize a semaphore at `off` in `mem` with `value`.
    pub fn init(mem: Arc<SharedMem>, off: usize, value: u32) -> SysResult<ShmSem> {
        let p = mem.at(off, SEM_SIZE, SEM_ALIGN).cast::<libc::sem_t>();
        // SAFETY: `p` is inside the mapping, sized and aligned for a sem_t; pshared = 1
        // because the memory is shared between processes.
        if unsafe { libc::sem_init(p, 1, value) } != 0 {
            return Err(SysError::new("sem_init", "shared memory", Errno::last()));
        }
        Ok(ShmSem {
            _mem: mem,
            p,
            owner: true,
        })
    }

    /// Use a semaphore another side initialized at `off` in the same memory.
    pub fn attach(mem: Arc<SharedMem>, off: usize) -> ShmSem {
        let p = mem.at(off, SEM_SIZE, SEM_ALIGN).cast();
        ShmSem {
            _mem: mem,
            p,
            owner: false,
        }
    }

    /// Another handle on the same semaphore, that never destroys it (a watcher's).
    pub fn another(&self) -> ShmSem {
        ShmSem {
            _mem: self._mem.clone(),
            p: self.p,
            owner: false,
        }
    }

    #[inline]
    fn p(&self) -> *mut libc::sem_t {
        self.p
    }
    #[inline]
    pub fn wait(&self) -> SysResult<()> {
        sem_wait_raw(self.p(), "unnamed semaphore")
    }
    #[inline]
    pub fn try_wait(&self) -> SysResult<bool> {
        sem_try_raw(self.p(), "unnamed semaphore")
    }
    pub fn wait_timeout(&self, timeout: Duration) -> SysResult<bool> {
        sem_timed_raw(self.p(), timeout, "unnamed semaphore")
    }
    #[inline]
    pub fn post(&self) -> SysResult<()> {
        sem_post_raw(self.p(), "unnamed semaphore")
    }
    pub fn value(&self) -> SysResult<i32> {
        sem_value_raw(self.p(), "unnamed semaphore")
    }
}

impl Drop for ShmSem {
    fn drop(&mut self) {
        if self.owner {
            // SAFETY: initialized by `init`; destroyed once. On Linux it is a no-op
            // and a peer still using it is not harmed.
            unsafe {
                libc::sem_destroy(self.p());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysv_set_ops_and_removal() {
        let s = SysvSemSet::create(&[1, 0]).unwrap();
        let id = s.id();
        // Its key names this process, so `ipcperf clean` can tell it is ours.
        let (key, _, _) = *sysv_sem_list().iter().find(|(_, i, _)| *i == id).unwrap();
        assert_eq!(sem_owner_of_key(key), Some(std::process::id() as i32));
        assert_eq!(sem_owner_of_key(0x1234), None);
        assert_eq!(s.value(0).unwrap(), 1);
        assert!(s.op(0, -1, true, None).unwrap());
        assert_eq!(s.value(0).unwrap(), 0);
        assert!(!s.op(0, -1, false, Some(Duration::from_millis(5))).unwrap());
        assert!(!s.try_op(1, -1).unwrap());
        assert!(s.op(0, 1, true, None).unwrap());
        assert!(s.value(3).is_err());
        let peer = SysvSemSet::open(id, 2).unwrap();
        drop(peer);
        assert!(sysv_sem_exists(id));
        drop(s);
        assert!(!sysv_sem_exists(id));
    }

    #[test]
    fn named_sem_unlinked_on_drop() {
        let s = NamedSem::create("t-sem", 0).unwrap();
        let name = s.name().to_string();
        let o = NamedSem::open(&name).unwrap();
        o.post().unwrap();
        assert_eq!(s.value().unwrap(), 1);
        assert!(s.try_wait().unwrap());
        assert!(!s.wait_timeout(Duration::from_millis(5)).unwrap());
        drop(o);
        assert!(named_sem_exists(&name));
        drop(s);
        assert!(!named_sem_exists(&name));
    }

    #[test]
    fn unnamed_sem_in_shared_memory() {
        let mem = Arc::new(SharedMem::memfd("t-sem", 4096).unwrap());
        let a = ShmSem::init(mem.clone(), 64, 1).unwrap();
        let other = Arc::new(SharedMem::from_fd(mem.dup_fd().unwrap(), 4096).unwrap());
        let b = ShmSem::attach(other, 64);
        a.wait().unwrap();
        assert_eq!(b.value().unwrap(), 0);
        assert!(!b.wait_timeout(Duration::from_millis(5)).unwrap());
        b.post().unwrap();
        assert_eq!(a.value().unwrap(), 1);
    }
}
