//! One descriptor watched by its own epoll instance (level-triggered), as an
//! event loop waits: `epoll_wait` for one event, then the call.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd};

use nix::errno::Errno;
use nix::poll::PollTimeout;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags};

use crate::error::{SysError, SysResult};

/// An epoll instance holding one descriptor, for input or for room.
#[derive(Debug)]
pub struct EpollOne {
    ep: Epoll,
    what: &'static str,
}

impl EpollOne {
    /// Watch `fd` for input (`write` false) or room (`write` true), level-triggered.
    /// The instance keeps the descriptor's number in its list: close the
    /// instance before or with the descriptor.
    pub fn new(fd: BorrowedFd<'_>, write: bool) -> SysResult<EpollOne> {
        let ep = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)
            .map_err(|e| SysError::new("epoll_create1", "", e))?;
        let flags = if write {
            EpollFlags::EPOLLOUT
        } else {
            EpollFlags::EPOLLIN
        };
        ep.add(fd, EpollEvent::new(flags, fd.as_raw_fd() as u64))
            .map_err(|e| SysError::new("epoll_ctl", format!("fd {}", fd.as_raw_fd()), e))?;
        Ok(EpollOne {
            ep,
            what: if write { "room" } else { "input" },
        })
    }

    /// Wait at most `timeout_ms` for the descriptor to be ready (a hang-up or an
    /// error counts: the next call reports it). False on time-out.
    #[inline]
    pub fn wait(&self, timeout_ms: i32) -> SysResult<bool> {
        let mut ev = [EpollEvent::empty()];
        let t = PollTimeout::try_from(timeout_ms.max(0)).unwrap_or(PollTimeout::MAX);
        loop {
            match self.ep.wait(&mut ev, t) {
                Ok(n) => return Ok(n > 0),
                Err(Errno::EINTR) => continue,
                Err(e) => {
                    return Err(SysError::new(
                        "epoll_wait",
                        format!("for {} on fd {}", self.what, self.ep.0.as_fd().as_raw_fd()),
                        e,
                    ))
                }
            }
        }
    }
}

/// One epoll instance holding a fixed set of descriptors, each for input and
/// level-triggered (a server's clients, as an event loop holds them): a wait
/// gives the indices of those with input. It keeps their numbers, not the
/// descriptors: its owner keeps them open while it waits.
#[derive(Debug)]
pub struct EpollSet {
    ep: Epoll,
    events: Vec<EpollEvent>,
}

impl EpollSet {
    /// Watch each of `fds` for input; a ready one is reported by its index.
    pub fn new(fds: &[BorrowedFd<'_>]) -> SysResult<EpollSet> {
        let ep = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)
            .map_err(|e| SysError::new("epoll_create1", "", e))?;
        for (i, fd) in fds.iter().enumerate() {
            ep.add(fd, EpollEvent::new(EpollFlags::EPOLLIN, i as u64))
                .map_err(|e| SysError::new("epoll_ctl", format!("fd {}", fd.as_raw_fd()), e))?;
        }
        Ok(EpollSet {
            ep,
            events: vec![EpollEvent::empty(); fds.len().max(1)],
        })
    }

    /// Wait at most `timeout_ms` until one or more has input (or hung up, or
    /// failed: the next read says how); their indices go into `ready` (cleared
    /// first, never grown past the set's size when it has that capacity).
    /// Returns false on time-out.
    #[inline]
    pub fn wait(&mut self, timeout_ms: i32, ready: &mut Vec<usize>) -> SysResult<bool> {
        ready.clear();
        let t = PollTimeout::try_from(timeout_ms.max(0)).unwrap_or(PollTimeout::MAX);
        loop {
            match self.ep.wait(&mut self.events, t) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    ready.extend(self.events[..n].iter().map(|e| e.data() as usize));
                    return Ok(true);
                }
                Err(Errno::EINTR) => continue,
                Err(e) => {
                    return Err(SysError::new(
                        "epoll_wait",
                        format!("{} descriptors", self.events.len()),
                        e,
                    ))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_names_the_descriptors_with_input_by_index() {
        let (r0, _w0) = crate::fd::pipe().unwrap();
        let (r1, w1) = crate::fd::pipe().unwrap();
        let mut set = EpollSet::new(&[r0.as_fd(), r1.as_fd()]).unwrap();
        let mut ready = Vec::with_capacity(2);
        assert!(!set.wait(0, &mut ready).unwrap(), "nothing written yet");
        assert!(ready.is_empty());
        crate::fd::write(w1.as_fd(), b"x").unwrap();
        assert!(set.wait(1000, &mut ready).unwrap());
        assert_eq!(ready, vec![1]);
    }

    #[test]
    fn a_pipe_is_ready_once_written_and_not_before() {
        let (r, w) = crate::fd::pipe().unwrap();
        let ep = EpollOne::new(r.as_fd(), false).unwrap();
        assert!(!ep.wait(0).unwrap(), "an empty pipe is not readable");
        crate::fd::write(w.as_fd(), b"x").unwrap();
        assert!(ep.wait(1000).unwrap(), "a written pipe is readable");
        // Level-triggered: still ready until read.
        assert!(ep.wait(0).unwrap());
        let mut b = [0u8; 1];
        crate::fd::read(r.as_fd(), &mut b).unwrap();
        assert!(!ep.wait(0).unwrap(), "read empty again");
        let room = EpollOne::new(w.as_fd(), true).unwrap();
        assert!(room.wait(0).unwrap(), "an empty pipe has room");
    }

    #[test]
    fn a_hang_up_counts_as_ready() {
        let (r, w) = crate::fd::pipe().unwrap();
        let ep = EpollOne::new(r.as_fd(), false).unwrap();
        drop(w);
        assert!(ep.wait(1000).unwrap());
    }
}
