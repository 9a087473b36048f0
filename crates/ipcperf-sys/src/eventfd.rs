//! eventfd in semaphore mode (EFD_SEMAPHORE), non-blocking, over an owned descriptor
//! that can be handed to a peer and rebuilt there (nix's `EventFd` cannot be made
//! from a received descriptor).

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use nix::sys::eventfd::{EfdFlags, EventFd};

use crate::error::{Context, Errno, SysResult};

#[derive(Debug)]
pub struct Eventfd(OwnedFd);

impl Eventfd {
    /// A semaphore-mode, non-blocking, close-on-exec eventfd with counter `initial`.
    pub fn semaphore(initial: u32) -> SysResult<Eventfd> {
        let fd = EventFd::from_value_and_flags(
            initial,
            EfdFlags::EFD_SEMAPHORE | EfdFlags::EFD_NONBLOCK | EfdFlags::EFD_CLOEXEC,
        )
        .ctx("eventfd", &"EFD_SEMAPHORE")?;
        Ok(Eventfd(OwnedFd::from(fd)))
    }

    /// A counter-mode (not semaphore), blocking, close-on-exec eventfd: a read takes
    /// the whole counter and resets it to 0; a read of 0 blocks.
    pub fn counter(initial: u32) -> SysResult<Eventfd> {
        let fd = EventFd::from_value_and_flags(initial, EfdFlags::EFD_CLOEXEC)
            .ctx("eventfd", &"counter")?;
        Ok(Eventfd(OwnedFd::from(fd)))
    }

    /// An eventfd received from another side.
    pub fn from_fd(fd: OwnedFd) -> Eventfd {
        Eventfd(fd)
    }

    pub fn try_clone_fd(&self) -> SysResult<OwnedFd> {
        self.0.try_clone().ctx("dup", &"eventfd")
    }

    /// Take one from the counter (semaphore mode); EAGAIN when it is zero.
    #[inline]
    pub fn read(&self) -> Result<u64, Errno> {
        let mut b = [0u8; 8];
        loop {
            match nix::unistd::read(&self.0, &mut b) {
                Ok(8) => return Ok(u64::from_ne_bytes(b)),
                Ok(_) => return Err(Errno::EIO),
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Add `v` to the counter.
    #[inline]
    pub fn write(&self, v: u64) -> Result<(), Errno> {
        loop {
            match nix::unistd::write(&self.0, &v.to_ne_bytes()) {
                Ok(8) => return Ok(()),
                Ok(_) => return Err(Errno::EIO),
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

impl AsFd for Eventfd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semaphore_mode_hands_out_one_at_a_time() {
        let e = Eventfd::semaphore(2).unwrap();
        let f = Eventfd::from_fd(e.try_clone_fd().unwrap());
        assert_eq!(e.read(), Ok(1));
        assert_eq!(f.read(), Ok(1));
        assert_eq!(e.read(), Err(Errno::EAGAIN));
        f.write(1).unwrap();
        assert_eq!(e.read(), Ok(1));
    }
}
