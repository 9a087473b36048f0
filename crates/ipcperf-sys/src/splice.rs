//! Zero-copy pipe calls: vmsplice(2) maps user pages into a pipe, splice(2) moves
//! pipe buffers to another descriptor without copying them through user memory.

use std::io::IoSlice;
use std::os::fd::BorrowedFd;

use nix::fcntl::SpliceFFlags;

use crate::error::Errno;

/// vmsplice(2) as much of `buf` as the pipe takes now; returns the bytes taken.
/// The pages stay referenced by the pipe until the reader has consumed them: the
/// caller must not write to `buf` again before then.
#[inline]
pub fn vmsplice(pipe_w: BorrowedFd<'_>, buf: &[u8]) -> Result<usize, Errno> {
    let iov = [IoSlice::new(buf)];
    loop {
        match nix::fcntl::vmsplice(pipe_w, &iov, SpliceFFlags::empty()) {
            Err(Errno::EINTR) => continue,
            r => return r,
        }
    }
}

/// splice(2) up to `len` bytes from `from` (a pipe) to `to`; returns the bytes
/// moved (0: the writer closed the pipe).
#[inline]
pub fn splice(from: BorrowedFd<'_>, to: BorrowedFd<'_>, len: usize) -> Result<usize, Errno> {
    loop {
        match nix::fcntl::splice(from, None, to, None, len, SpliceFFlags::SPLICE_F_MOVE) {
            Err(Errno::EINTR) => continue,
            r => return r,
        }
    }
}
