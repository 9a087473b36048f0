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

/// A descriptor driven by its own io_uring: each read or write is one
/// submission, waited for before the call returns.
pub struct UringFd {
    ring: IoUring,
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
    /// A ring of a few entries for `fd`, with `fd` registered in it.
    pub fn new(fd: OwnedFd) -> Result<UringFd, Errno> {
        let ring = new_ring(8)?;
        ring.submitter()
            .register_files(&[fd.as_raw_fd()])
            .map_err(errno)?;
        Ok(UringFd { ring, fd })
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Write from `buf` once: the bytes the kernel took.
    #[inline]
    pub fn write(&mut self, buf: &[u8], timeout_ms: i32) -> Result<usize, Errno> {
        let len = buf.len().min(u32::MAX as usize) as u32;
        let e = opcode::Write::new(types::Fixed(0), buf.as_ptr(), len)
            .offset(u64::MAX)
            .build();
        // SAFETY: `buf` is borrowed for this whole call, and `run` returns only
        // after the submission's completion has been reaped (after cancelling it
        // when its time ran out), so the kernel reads it only while it is valid.
        unsafe { self.run(e, timeout_ms) }
    }

    /// Read into `buf` once: the bytes read, 0 at end of stream.
    #[inline]
    pub fn read(&mut self, buf: &mut [u8], timeout_ms: i32) -> Result<usize, Errno> {
        let len = buf.len().min(u32::MAX as usize) as u32;
        let e = opcode::Read::new(types::Fixed(0), buf.as_mut_ptr(), len)
            .offset(u64::MAX)
            .build();
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
    /// caller's only until then.
    #[cold]
    fn cancel_and_reap(&mut self) {
        let c = opcode::AsyncCancel::new(OP).build().user_data(CANCEL);
        // SAFETY: a cancellation names no memory.
        let _ = unsafe { self.ring.submission().push(&c) };
        loop {
            match wait_one(&mut self.ring, 1000) {
                Ok(c) if c.user_data() == OP => return,
                Ok(_) => {}
                Err(Errno::ETIME) => {
                    // Ask again: the first cancellation may have come too early.
                    // SAFETY: as above.
                    let _ = unsafe { self.ring.submission().push(&c) };
                }
                Err(_) => {}
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
        let (r, w) = crate::fd::pipe().unwrap();
        let mut w = UringFd::new(w).unwrap();
        let mut r = UringFd::new(r).unwrap();
        assert_eq!(w.write(b"hello", 1000).unwrap(), 5);
        let mut buf = [0u8; 16];
        assert_eq!(r.read(&mut buf, 1000).unwrap(), 5);
        assert_eq!(&buf[..5], b"hello");
        let t = std::time::Instant::now();
        assert_eq!(r.read(&mut buf, 100), Err(Errno::ETIME));
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
        // The ring still works after a cancelled read.
        assert_eq!(w.write(b"again", 1000).unwrap(), 5);
        assert_eq!(r.read(&mut buf, 1000).unwrap(), 5);
        assert_eq!(&buf[..5], b"again");
        drop(w);
        assert_eq!(r.read(&mut buf, 1000).unwrap(), 0);
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
