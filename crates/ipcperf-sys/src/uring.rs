//! io_uring: a ring that drives reads and writes on one descriptor, a submission
//! at a time ([`UringFd`]), and a ring that passes 96-bit notes to another ring
//! with MSG_RING ([`MsgRing`]).
//!
//! Every wait is bounded: a submission that has not completed within its time is
//! cancelled, and its completion is reaped before the call returns, so the kernel
//! never touches a buffer after the borrow that lent it has ended.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

use io_uring::{cqueue, opcode, squeue, types, IoUring};
use nix::errno::Errno;

/// The user data of the submission a call waits for.
const OP: u64 = 1;
/// The user data of a cancellation (its own completion is ignored).
const CANCEL: u64 = 2;

fn errno(e: std::io::Error) -> Errno {
    e.raw_os_error().map(Errno::from_raw).unwrap_or(Errno::EIO)
}

/// A ring set up for one submitter that waits for its own completions: task
/// work deferred to the wait (fewer interruptions), falling back to a plain ring
/// on kernels without those flags.
fn new_ring(entries: u32) -> Result<IoUring, Errno> {
    let tuned = IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries);
    match tuned {
        Ok(r) => Ok(r),
        Err(_) => IoUring::new(entries).map_err(errno),
    }
}

/// Wait for a completion of the ring for at most `timeout_ms` (ETIME when none
/// came); submits what is queued first.
/// How long a cancelled submission may take to complete before the process
/// gives up on it (a socket's or pipe's completes at once).
const REAP_LIMIT_MS: u64 = 10_000;

fn wait_one(ring: &mut IoUring, timeout_ms: i32) -> Result<cqueue::Entry, Errno> {
    let ms = timeout_ms.max(0) as u64;
    let ts = types::Timespec::new()
        .sec(ms / 1000)
        .nsec((ms % 1000) as u32 * 1_000_000);
    let args = types::SubmitArgs::new().timespec(&ts);
    let mut deadline = 0u64;
    loop {
        if let Some(c) = ring.completion().next() {
            return Ok(c);
        }
        match ring.submitter().submit_with_args(1, &args) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => {
                // A completion may have arrived with the timeout.
                return ring.completion().next().ok_or(Errno::ETIME);
            }
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                // Completions wait to be reaped: the loop reaps them.
            }
            Err(e) => return Err(errno(e)),
        }
        // Woken without a completion (a signal): keep to the overall bound.
        if ring.completion().is_empty() {
            let now = crate::clock::now_ns();
            if deadline == 0 {
                deadline = now + ms * 1_000_000;
            } else if now > deadline {
                return Err(Errno::ETIME);
            }
        }
    }
}

/// The buffer-table slot writes use, and the one reads use.
const WRITE_SLOT: usize = 0;
const READ_SLOT: usize = 1;

/// A descriptor driven by its own io_uring: each read or write is one
/// submission, waited for before the call returns.
///
/// With registered (fixed) buffers, the caller's own buffer is registered in the
/// ring the first time it is used (one slot for writes, one for reads; again
/// only when a buffer outside the registered one comes), and each read or write
/// names it by index: the kernel skips pinning and mapping its pages per call.
/// The kernel reads and writes a registered buffer only through a submission
/// naming part of the slice borrowed for that call, so no memory is touched
/// outside a borrow (pages the slot pinned stay pinned, the kernel's, until the
/// slot is replaced or the ring closes).
pub struct UringFd {
    ring: IoUring,
    /// The registered range (address, length) of each slot; None: plain buffers.
    fixed: Option<[(usize, usize); 2]>,
    /// How many times a slot was (re)registered.
    registrations: u64,
    /// Registered as the ring's file 0, so submissions skip the descriptor lookup;
    /// open for as long as the ring is.
    fd: OwnedFd,
}

impl std::fmt::Debug for UringFd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UringFd(fd {})", self.fd.as_raw_fd())
    }
}

impl UringFd {
    /// A ring of a few entries for `fd`, with `fd` registered in it; `fixed`:
    /// a table of two buffer slots too, filled as buffers come.
    pub fn new(fd: OwnedFd, fixed: bool) -> Result<UringFd, Errno> {
        let ring = new_ring(8)?;
        ring.submitter()
            .register_files(&[fd.as_raw_fd()])
            .map_err(errno)?;
        if fixed {
            ring.submitter().register_buffers_sparse(2).map_err(errno)?;
        }
        Ok(UringFd {
            ring,
            fixed: fixed.then_some([(0, 0); 2]),
            registrations: 0,
            fd,
        })
    }

    /// How many times a buffer was registered (0 with plain buffers).
    pub fn registrations(&self) -> u64 {
        self.registrations
    }

    /// Make slot `slot` hold the range `[ptr, ptr + len)` unless it already
    /// covers it; Ok(false): no fixed buffers (or nothing to register).
    #[inline]
    fn fixed_slot(&mut self, slot: usize, ptr: usize, len: usize) -> Result<bool, Errno> {
        let Some(table) = self.fixed.as_mut() else {
            return Ok(false);
        };
        if len == 0 {
            return Ok(false);
        }
        let (at, n) = table[slot];
        if ptr >= at && ptr + len <= at + n {
            return Ok(true);
        }
        let iov = libc::iovec {
            iov_base: ptr as *mut libc::c_void,
            iov_len: len,
        };
        // SAFETY: registering pins the pages now under `[ptr, ptr + len)`, which
        // the caller's live borrow covers. The kernel reads or writes them only
        // for a submission naming part of the slice borrowed for that call (see
        // `write` and `read`), never on its own; were the range unmapped and
        // mapped again later, the kernel would use the pages it pinned, which
        // are its own until the slot is replaced: no memory of ours outside a
        // borrow is touched.
        unsafe {
            self.ring
                .submitter()
                .register_buffers_update(slot as u32, &[iov], None)
        }
        .map_err(errno)?;
        table[slot] = (ptr, len);
        self.registrations += 1;
        Ok(true)
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Write from `buf` once: the bytes the kernel took.
    #[inline]
    pub fn write(&mut self, buf: &[u8], timeout_ms: i32) -> Result<usize, Errno> {
        let len = buf.len().min(u32::MAX as usize) as u32;
        let e = if self.fixed_slot(WRITE_SLOT, buf.as_ptr() as usize, len as usize)? {
            opcode::WriteFixed::new(types::Fixed(0), buf.as_ptr(), len, WRITE_SLOT as u16)
                .offset(u64::MAX)
                .build()
        } else {
            opcode::Write::new(types::Fixed(0), buf.as_ptr(), len)
                .offset(u64::MAX)
                .build()
        };
        // SAFETY: `buf` is borrowed for this whole call, and `run` returns only
        // after the submission's completion has been reaped (after cancelling it
        // when its time ran out), so the kernel reads it only while it is valid.
        unsafe { self.run(e, timeout_ms) }
    }

    /// Read into `buf` once: the bytes read, 0 at end of stream.
    #[inline]
    pub fn read(&mut self, buf: &mut [u8], timeout_ms: i32) -> Result<usize, Errno> {
        let len = buf.len().min(u32::MAX as usize) as u32;
        let e = if self.fixed_slot(READ_SLOT, buf.as_ptr() as usize, len as usize)? {
            opcode::ReadFixed::new(types::Fixed(0), buf.as_mut_ptr(), len, READ_SLOT as u16)
                .offset(u64::MAX)
                .build()
        } else {
            opcode::Read::new(types::Fixed(0), buf.as_mut_ptr(), len)
                .offset(u64::MAX)
                .build()
        };
        // SAFETY: `buf` is borrowed mutably for this whole call and `run` returns
        // only after the submission's completion has been reaped, so the kernel
        // writes it only while it is valid and nothing else can see it.
        unsafe { self.run(e, timeout_ms) }
    }

    /// Submit `e` and wait for its completion; on timeout, cancel it and reap it.
    ///
    /// # Safety
    /// The memory `e` points at must stay valid until this returns.
    #[inline]
    unsafe fn run(&mut self, e: squeue::Entry, timeout_ms: i32) -> Result<usize, Errno> {
        // SAFETY: the caller keeps the entry's buffer valid until we return, and
        // we return only once its completion is reaped.
        unsafe { self.ring.submission().push(&e.user_data(OP)) }.map_err(|_| Errno::EBUSY)?;
        loop {
            match wait_one(&mut self.ring, timeout_ms) {
                Ok(c) if c.user_data() == OP => {
                    let r = c.result();
                    return if r < 0 {
                        Err(Errno::from_raw(-r))
                    } else {
                        Ok(r as usize)
                    };
                }
                Ok(_) => {} // a stale cancellation's completion
                Err(Errno::ETIME) => {
                    self.cancel_and_reap();
                    return Err(Errno::ETIME);
                }
                Err(e) => {
                    self.cancel_and_reap();
                    return Err(e);
                }
            }
        }
    }

    /// Cancel the submission in flight and wait until its completion is reaped.
    /// A read or write on a socket or pipe waits armed on poll, and cancelling
    /// it completes it at once; the wait is still bounded, in rounds of a second,
    /// but it must not return before the completion: the buffer it names is the
    /// caller's only until then. A ring that neither completes nor cancels
    /// it within [`REAP_LIMIT_MS`] ends the process (named objects removed
    /// first): returning would hand the caller back memory the kernel may still
    /// write, and waiting longer would hang the run.
    #[cold]
    fn cancel_and_reap(&mut self) {
        let c = opcode::AsyncCancel::new(OP).build().user_data(CANCEL);
        // SAFETY: a cancellation names no memory.
        let _ = unsafe { self.ring.submission().push(&c) };
        let start = crate::clock::now_ns();
        loop {
            match wait_one(&mut self.ring, 1000) {
                Ok(c) if c.user_data() == OP => return,
                Ok(_) => {}
                Err(Errno::ETIME) => {
                    // Ask again: the first cancellation may have come too early.
                    // SAFETY: as above.
                    let _ = unsafe { self.ring.submission().push(&c) };
                }
                // A ring that fails at once must not be asked in a busy loop.
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
            }
            if crate::clock::now_ns().saturating_sub(start) > REAP_LIMIT_MS * 1_000_000 {
                eprintln!(
                    "ipcperf: error: an io_uring read or write could not be cancelled within \
                     {} s; the run ends here, since its buffer may still be written by the kernel",
                    REAP_LIMIT_MS / 1000
                );
                crate::cleanup::run_all();
                std::process::exit(1);
            }
        }
    }
}

/// A ring that takes 96-bit notes (a 32-bit result and 64-bit data) posted by
/// other rings with MSG_RING, and posts notes to them.
pub struct MsgRing {
    ring: IoUring,
}

impl std::fmt::Debug for MsgRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MsgRing(fd {})", self.ring.as_raw_fd())
    }
}

/// The user data of a note's own completion in the sender's ring (posted only
/// when the note failed: the others are skipped).
const SENT: u64 = u64::MAX;

impl MsgRing {
    pub fn new() -> Result<MsgRing, Errno> {
        // Notes arrive from another thread: no single-issuer deferral here, which
        // would hold them until this ring's own thread enters the kernel anyway.
        let ring = IoUring::new(64).map_err(errno)?;
        Ok(MsgRing { ring })
    }

    /// A descriptor for this ring, that another [`MsgRing`] posts notes to.
    pub fn dup_fd(&self) -> Result<OwnedFd, Errno> {
        // SAFETY: the ring's descriptor is open for as long as `self` is, and
        // the borrow ends before this returns.
        let fd = unsafe { BorrowedFd::borrow_raw(self.ring.as_raw_fd()) };
        nix::unistd::dup(fd)
    }

    /// Post the note (`res`, `data`) into the ring behind `target`; its arrival
    /// there is not waited for. `data` must not be `u64::MAX`.
    #[inline]
    pub fn post(&mut self, target: BorrowedFd<'_>, res: i32, data: u64) -> Result<(), Errno> {
        let e = opcode::MsgRingData::new(types::Fd(target.as_raw_fd() as RawFd), res, data, None)
            .build()
            .flags(squeue::Flags::SKIP_SUCCESS)
            .user_data(SENT);
        // SAFETY: a MSG_RING submission names no memory of ours.
        unsafe { self.ring.submission().push(&e) }.map_err(|_| Errno::EBUSY)?;
        self.ring.submit().map_err(errno)?;
        Ok(())
    }

    /// Wait at most `timeout_ms` for the next note: (res, data). A note this ring
    /// failed to post is its error.
    #[inline]
    pub fn take(&mut self, timeout_ms: i32) -> Result<(i32, u64), Errno> {
        let c = wait_one(&mut self.ring, timeout_ms)?;
        if c.user_data() == SENT {
            return Err(Errno::from_raw(-c.result()));
        }
        Ok((c.result(), c.user_data()))
    }

    /// The next note if one is here now.
    #[inline]
    pub fn try_take(&mut self) -> Result<Option<(i32, u64)>, Errno> {
        match self.ring.completion().next() {
            None => Ok(None),
            Some(c) if c.user_data() == SENT => Err(Errno::from_raw(-c.result())),
            Some(c) => Ok(Some((c.result(), c.user_data()))),
        }
    }
}

/// Whether this kernel lets this process make an io_uring (a kernel can turn it
/// off: `kernel.io_uring_disabled`); the reason when it does not.
pub fn available() -> Result<(), Errno> {
    IoUring::new(2).map(drop).map_err(errno)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_through_a_ring_carries_bytes_and_times_out() {
        for fixed in [false, true] {
            through_a_ring(fixed);
        }
    }

    fn through_a_ring(fixed: bool) {
        let (r, w) = crate::fd::pipe().unwrap();
        let mut w = UringFd::new(w, fixed).unwrap();
        let mut r = UringFd::new(r, fixed).unwrap();
        // Registered buffers must be writable memory: the caller's, on the heap.
        let (hello, again) = (b"hello".to_vec(), b"again".to_vec());
        assert_eq!(w.write(&hello, 1000).unwrap(), 5);
        let mut buf = [0u8; 16];
        assert_eq!(r.read(&mut buf, 1000).unwrap(), 5);
        assert_eq!(&buf[..5], b"hello");
        let t = std::time::Instant::now();
        assert_eq!(r.read(&mut buf, 100), Err(Errno::ETIME));
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
        // The ring still works after a cancelled read.
        assert_eq!(w.write(&again, 1000).unwrap(), 5);
        assert_eq!(r.read(&mut buf, 1000).unwrap(), 5);
        assert_eq!(&buf[..5], b"again");
        assert_eq!(w.registrations(), if fixed { 2 } else { 0 });
        drop(w);
        assert_eq!(r.read(&mut buf, 1000).unwrap(), 0);
        assert_eq!(r.registrations(), if fixed { 1 } else { 0 });
    }

    /// A registered buffer serves every part of itself without registering
    /// again; a buffer elsewhere takes the slot, and the bytes are the new ones.
    #[test]
    fn fixed_buffers_register_once_per_buffer_and_carry_the_right_bytes() {
        let (r, w) = crate::fd::pipe().unwrap();
        let mut w = UringFd::new(w, true).unwrap();
        let mut r = UringFd::new(r, true).unwrap();
        let out: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
        let mut inb = vec![0u8; 4096];
        for part in [0..4096, 100..200, 4000..4096] {
            let n = w.write(&out[part.clone()], 1000).unwrap();
            assert_eq!(n, part.len());
            let mut got = 0;
            while got < n {
                got += r.read(&mut inb[part.start + got..part.end], 1000).unwrap();
            }
            assert_eq!(inb[part.clone()], out[part]);
        }
        assert_eq!((w.registrations(), r.registrations()), (1, 1));
        let other: Vec<u8> = vec![0xa5; 300];
        assert_eq!(w.write(&other, 1000).unwrap(), 300);
        let mut got = 0;
        while got < 300 {
            got += r.read(&mut inb[got..300], 1000).unwrap();
        }
        assert!(inb[..300].iter().all(|&b| b == 0xa5));
        assert_eq!((w.registrations(), r.registrations()), (2, 1));
    }

    #[test]
    fn notes_pass_between_rings() {
        let mut a = MsgRing::new().unwrap();
        let mut b = MsgRing::new().unwrap();
        let bfd = b.dup_fd().unwrap();
        a.post(bfd.as_fd(), 42, 7).unwrap();
        assert_eq!(b.take(1000).unwrap(), (42, 7));
        assert_eq!(b.take(50), Err(Errno::ETIME));
        assert_eq!(b.try_take().unwrap(), None);
    }
}
