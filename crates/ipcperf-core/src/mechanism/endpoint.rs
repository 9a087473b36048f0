//! Ends: what a workload reads and writes ([`ByteStream`]), and the descriptor
//! stream most mechanisms' ends are. `send`/`recv` neither print nor allocate.

use std::os::fd::{AsFd, OwnedFd};

use ipcperf_sys::error::Errno;
use ipcperf_sys::fd;

use crate::error::{Error, Result};

/// How long a non-blocking endpoint waits for readiness before it is an error.
pub const WAIT_MS: i32 = 5_000;

/// A byte stream as the throughput workload sees it.
pub trait ByteStream {
    /// Write all of `buf`.
    fn write_all(&mut self, buf: &[u8]) -> Result<()>;
    /// Read up to `buf.len()` bytes; 0 means the other side closed.
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize>;
    /// Get ready for a new series (a file writer truncates, a file reader rewinds).
    fn prepare_series(&mut self, _writer: bool) -> Result<()> {
        Ok(())
    }
    /// `--busy-poll`: make this end's waits spin (a non-blocking descriptor,
    /// retried at once) instead of sleeping; false: it has no such wait.
    fn set_busy_poll(&mut self) -> Result<bool> {
        Ok(false)
    }
    /// `--wait`: wait this way for input and room from now on; false: this end
    /// cannot (its waits are its own). By default an end blocks, and spins
    /// where it can busy-poll.
    fn set_wait(&mut self, w: super::wait::Wait) -> Result<bool> {
        match w {
            super::wait::Wait::Block => Ok(true),
            super::wait::Wait::Busy => self.set_busy_poll(),
            _ => Ok(false),
        }
    }
    /// A stream reader on this end takes the writer's blocks whole: each read
    /// asks only for the rest of the block it is filling, never past it, as
    /// iperf3's server reads. False (most ends): each read asks for a whole block.
    /// Only where it is measured faster: a TCP reader across a veth pair moves
    /// ~10% more data per second filling 128 KiB blocks than asking for 128 KiB
    /// on every read (bench/floor/tcp-stream.c, `recv ... fill`, beside the plain
    /// reader), and loopback TCP is no slower; a Unix stream socket's reader at
    /// 64 KiB is ~5% slower filling, so it does not.
    #[inline]
    fn fills_blocks(&self) -> bool {
        false
    }
    /// A writing end hears that its reader has read everything written so far
    /// (a round trip's answer came, and an answer is sent only after the whole
    /// message was read): a ring counts the bytes as given back without loading
    /// the reader's cursor, a line the reader has just written. Nothing to do
    /// for the others.
    #[inline]
    fn all_read(&mut self) {}
    /// A second descriptor of this end's socket, for a watchdog to shut it down
    /// when the other machine is gone (`--peer`): the timed loop's next call then
    /// fails, where a datagram written into nothing never would. None: this end
    /// has no descriptor of its own (only sockets are ever shut down).
    fn cut_handle(&self) -> Option<OwnedFd> {
        None
    }
    /// Zero-copy: write `blocks` blocks of `len` bytes, each built by `P` in the
    /// mechanism's own memory (a loan), where the mechanism lends it (shm with
    /// `--zero-copy`). None: it does not; the caller writes from its buffer.
    #[inline]
    fn write_blocks_in_place<P: crate::payload::PayloadOps>(
        &mut self,
        _len: usize,
        _blocks: u64,
    ) -> Option<Result<()>> {
        None
    }
    /// Zero-copy: take `total` bytes, each piece looked at by `P` where it lies,
    /// then released. None: the mechanism lends nothing; the caller reads.
    #[inline]
    fn read_in_place<P: crate::payload::PayloadOps>(&mut self, _total: u64) -> Option<Result<()>> {
        None
    }
}

/// `--wait`: make `end` wait as `w` asks; blocking (every end's own) and
/// io_uring (the uring-* mechanisms' own) change nothing. A mechanism whose end
/// cannot is refused before it is measured (`MechanismKind::refuse_wait`); this
/// is the last word should one slip through.
pub fn wait_as<E: ByteStream>(
    end: &mut E,
    w: super::wait::Wait,
    kind: super::MechanismKind,
) -> Result<()> {
    use super::wait::Wait;
    if matches!(w, Wait::Block | Wait::Uring) || end.set_wait(w)? {
        return Ok(());
    }
    Err(Error::Refused(format!(
        "{} cannot wait by {}",
        kind.name(),
        w.name()
    )))
}

/// Hand out the rest of a received message from `*off` into `buf`: the bytes
/// copied, `*off` moved past them (message mechanisms whose reads may be shorter
/// than a message).
#[inline]
pub fn hand_out(msg: &[u8], off: &mut usize, buf: &mut [u8]) -> usize {
    let n = (msg.len() - *off).min(buf.len());
    buf[..n].copy_from_slice(&msg[*off..*off + n]);
    *off += n;
    n
}

/// How an [`FdStream`] waits (see [`super::wait::Wait`]).
#[derive(Debug)]
enum FdWait {
    /// A blocking descriptor; or a non-blocking one that tries each call
    /// first and waits in poll(2) when it is not ready (a stream's writer).
    Block,
    /// A non-blocking descriptor waited on in poll(2), or in `epoll`'s
    /// instances (input, room) where it has them. Reads wait `first` and then
    /// read, as an event loop (`--wait poll`, `epoll`), or read first and wait
    /// only when the read would block (`try-poll`, `try-epoll`); writes always
    /// write first.
    Ready {
        first: bool,
        epoll: Option<(ipcperf_sys::epoll::EpollOne, ipcperf_sys::epoll::EpollOne)>,
    },
    /// EAGAIN retried at once (`--busy-poll`, `--wait busy`).
    Spin,
}

/// A descriptor-backed stream: pipe, FIFO, socket, file, /dev/null.
/// Every wait is bounded by [`WAIT_MS`].
#[derive(Debug)]
pub struct FdStream {
    /// Declared before `fd`, so it is dropped before the descriptor is closed.
    _poison_guard: Option<fd::PoisonGuard>,
    /// Declared before `fd`: the epoll instances go before the descriptor they hold.
    wait: FdWait,
    fd: OwnedFd,
    what: &'static str,
    is_file: bool,
    /// See [`ByteStream::fills_blocks`].
    fill_blocks: bool,
}

/// A spinning retry's bound: the clock is read once every 4096 tries, and after
/// [`WAIT_MS`] without progress the wait is an error, as a poll(2) wait's is.
pub struct SpinBound {
    tries: u32,
    since: u64,
}

impl SpinBound {
    #[inline]
    pub fn new() -> SpinBound {
        SpinBound { tries: 0, since: 0 }
    }

    /// One more try; false once `limit_ms` has passed since the first.
    #[inline]
    pub fn again(&mut self, limit_ms: u64) -> bool {
        std::hint::spin_loop();
        self.tries = self.tries.wrapping_add(1);
        if self.tries.is_multiple_of(4096) {
            let now = ipcperf_sys::clock::now_ns();
            if self.since == 0 {
                self.since = now;
            } else if now.saturating_sub(self.since) > limit_ms * 1_000_000 {
                return false;
            }
        }
        true
    }
}

impl Default for SpinBound {
    fn default() -> Self {
        SpinBound::new()
    }
}

impl FdStream {
    /// `nonblocking` (`--nonblocking`): each read and write tried first,
    /// poll(2) when it would block, as `--wait try-poll`.
    pub fn new(fd: OwnedFd, what: &'static str, nonblocking: bool, is_file: bool) -> Result<Self> {
        fd::set_nonblocking(fd.as_fd(), nonblocking)?;
        Ok(FdStream {
            _poison_guard: None,
            wait: if nonblocking && !is_file {
                FdWait::Ready {
                    first: false,
                    epoll: None,
                }
            } else {
                FdWait::Block
            },
            fd,
            what,
            is_file,
            fill_blocks: false,
        })
    }

    /// A stream reader on this end fills blocks ([`ByteStream::fills_blocks`]).
    pub fn filling_blocks(mut self, on: bool) -> Self {
        self.fill_blocks = on;
        self
    }

    /// Keep the guard of a poisonable descriptor (see [`fd::poisonable`]) for as
    /// long as the descriptor is open.
    pub fn with_guard(mut self, guard: Option<fd::PoisonGuard>) -> Self {
        self._poison_guard = guard;
        self
    }

    pub fn set_nonblocking(&mut self, on: bool) -> Result<()> {
        Ok(fd::set_nonblocking(self.fd.as_fd(), on)?)
    }

    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// One write, for probing: bytes accepted, or 0 when the buffer is full.
    pub fn try_write(&mut self, buf: &[u8]) -> Result<usize> {
        match fd::write(self.fd.as_fd(), buf) {
            Ok(n) => Ok(n),
            Err(Errno::EAGAIN) => Ok(0),
            Err(e) => Err(Error::io("write", self.what, e)),
        }
    }

    /// Wait for input (or room) the way this end waits: poll(2), or its epoll
    /// instance for that direction.
    #[inline]
    fn wait(&self, write: bool) -> Result<()> {
        let mut mark = ipcperf_sys::signal::continues_mark();
        loop {
            let ready = match &self.wait {
                FdWait::Ready {
                    epoll: Some((input, room)),
                    ..
                } => if write { room } else { input }.wait(WAIT_MS)?,
                _ => fd::wait_ready(self.fd.as_fd(), write, WAIT_MS)?,
            };
            // A stop (Ctrl-Z, `fg`) that ran the wait out is not the peer's.
            if ready || !ipcperf_sys::signal::continued_since(mark) {
                return self.waited(ready, write);
            }
            mark = ipcperf_sys::signal::continues();
        }
    }

    #[inline]
    fn waited(&self, ready: bool, write: bool) -> Result<()> {
        if ready {
            Ok(())
        } else {
            Err(Error::Timeout(format!(
                "{} not {} within {} ms",
                self.what,
                if write { "writable" } else { "readable" },
                WAIT_MS
            )))
        }
    }
}

impl ByteStream for FdStream {
    fn cut_handle(&self) -> Option<OwnedFd> {
        self.fd.try_clone().ok()
    }

    #[inline]
    fn write_all(&mut self, mut buf: &[u8]) -> Result<()> {
        let mut bound = SpinBound::new();
        while !buf.is_empty() {
            match fd::write(self.fd.as_fd(), buf) {
                Ok(n) => buf = &buf[n..],
                Err(Errno::EAGAIN) if matches!(self.wait, FdWait::Spin) => {
                    if !bound.again(WAIT_MS as u64) {
                        self.wait(true)?;
                    }
                }
                Err(Errno::EAGAIN) => self.wait(true)?,
                Err(e) => return Err(Error::io("write", self.what, e)),
            }
        }
        Ok(())
    }

    #[inline]
    fn fills_blocks(&self) -> bool {
        self.fill_blocks
    }

    #[inline]
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut bound = SpinBound::new();
        // An event loop's order: wait for input, then read (a read that finds
        // nothing after all waits again).
        if matches!(self.wait, FdWait::Ready { first: true, .. }) {
            self.wait(false)?;
        }
        loop {
            match fd::read(self.fd.as_fd(), buf) {
                Ok(n) => return Ok(n),
                Err(Errno::EAGAIN) if matches!(self.wait, FdWait::Spin) => {
                    // Past the bound, one last bounded wait decides.
                    if !bound.again(WAIT_MS as u64) {
                        self.wait(false)?;
                    }
                }
                Err(Errno::EAGAIN) => self.wait(false)?,
                Err(e) => return Err(Error::io("read", self.what, e)),
            }
        }
    }

    fn set_busy_poll(&mut self) -> Result<bool> {
        if self.is_file {
            return Ok(false);
        }
        self.set_nonblocking(true)?;
        self.wait = FdWait::Spin;
        Ok(true)
    }

    fn set_wait(&mut self, w: super::wait::Wait) -> Result<bool> {
        use super::wait::Wait;
        if self.is_file {
            return Ok(w == Wait::Block);
        }
        self.wait = match w {
            Wait::Block => {
                self.set_nonblocking(false)?;
                FdWait::Block
            }
            Wait::Poll | Wait::Epoll | Wait::TryPoll | Wait::TryEpoll => {
                self.set_nonblocking(true)?;
                let epoll = if matches!(w, Wait::Epoll | Wait::TryEpoll) {
                    Some((
                        ipcperf_sys::epoll::EpollOne::new(self.fd.as_fd(), false)?,
                        ipcperf_sys::epoll::EpollOne::new(self.fd.as_fd(), true)?,
                    ))
                } else {
                    None
                };
                FdWait::Ready {
                    first: matches!(w, Wait::Poll | Wait::Epoll),
                    epoll,
                }
            }
            Wait::Busy => return self.set_busy_poll(),
            Wait::Uring => return Ok(false),
        };
        Ok(true)
    }

    fn prepare_series(&mut self, writer: bool) -> Result<()> {
        if self.is_file {
            fd::rewind(self.fd.as_fd(), writer)?;
        }
        Ok(())
    }
}
