//! How a UDP end waits under `--wait poll|epoll|try-poll|try-epoll`: a
//! non-blocking socket waited on in poll(2) or in its epoll instances, each wait
//! bounded by the end's `wait_ms` as SO_RCVTIMEO bounds a blocking receive.

use super::UdpEnd;
use crate::error::Result;
use crate::mechanism::wait::Wait;
use crate::mechanism::ByteStream;

/// How an end waits in poll(2) or epoll_wait(2).
#[derive(Debug)]
pub(super) struct Ready {
    /// Wait before each receive, as an event loop does; else only when it would block.
    pub first: bool,
    pub epoll: Option<(ipcperf_sys::epoll::EpollOne, ipcperf_sys::epoll::EpollOne)>,
}

impl UdpEnd {
    /// Under `--wait poll|epoll|…`: wait at most `wait_ms` for input (or room);
    /// false on time-out.
    pub(super) fn wait_ready(&self, write: bool) -> Result<bool> {
        let ms = self.wait_ms.min(i32::MAX as u64) as i32;
        let fd = std::os::fd::AsFd::as_fd(&self.fd);
        Ok(match self.ready.as_ref().and_then(|r| r.epoll.as_ref()) {
            Some((input, room)) => if write { room } else { input }.wait(ms)?,
            None => ipcperf_sys::fd::wait_ready(fd, write, ms)?,
        })
    }

    /// `--wait`: block, wait in poll(2) or epoll_wait(2) (first, or when a call
    /// would block), or spin.
    pub(super) fn wait_as(&mut self, w: Wait) -> Result<bool> {
        let fd = std::os::fd::AsFd::as_fd(&self.fd);
        match w {
            Wait::Block => {
                ipcperf_sys::fd::set_nonblocking(fd, false)?;
                self.spin = false;
                self.ready = None;
            }
            Wait::Poll | Wait::Epoll | Wait::TryPoll | Wait::TryEpoll => {
                ipcperf_sys::fd::set_nonblocking(fd, true)?;
                let epoll = if matches!(w, Wait::Epoll | Wait::TryEpoll) {
                    Some((
                        ipcperf_sys::epoll::EpollOne::new(fd, false)?,
                        ipcperf_sys::epoll::EpollOne::new(fd, true)?,
                    ))
                } else {
                    None
                };
                self.spin = false;
                self.ready = Some(Ready {
                    first: matches!(w, Wait::Poll | Wait::Epoll),
                    epoll,
                });
            }
            Wait::Busy => return self.set_busy_poll(),
            Wait::Uring => return Ok(false),
        }
        Ok(true)
    }
}
