//! The same kernel objects as `unix`, `tcp` and `pipe`, driven by io_uring: each
//! end has a ring of its own with its descriptor registered in it, and every read
//! and write is one submission whose completion is waited for (the way an
//! application that moved its socket calls to io_uring drives one connection).
//! Set-up is the base mechanism's own; only the ends differ. With `uring_fixed`
//! (`--fixed-buffers`) each side's buffer is registered in its ring and every
//! read and write names it by index (READ_FIXED, WRITE_FIXED).

use std::os::fd::OwnedFd;

use ipcperf_sys::error::Errno;
use ipcperf_sys::uring::UringFd;

use super::endpoint::WAIT_MS;
use super::info::TWO_SIDES;
use super::{
    ByteStream, Link, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerHandoff,
    RoundTripShape,
};
use crate::error::{Error, Result};

/// A descriptor whose reads and writes go through its own io_uring.
#[derive(Debug)]
pub struct UringStream {
    io: UringFd,
    what: &'static str,
}

impl UringStream {
    fn new(fd: OwnedFd, what: &'static str, opts: &MechOptions) -> Result<UringStream> {
        let io = UringFd::new(fd, opts.uring_fixed).map_err(|e| {
            Error::Refused(if opts.uring_fixed {
                format!(
                    "{what}: this kernel refuses io_uring with registered buffers here ({e}; \
                     see kernel.io_uring_disabled, and RLIMIT_MEMLOCK for the pinned pages)"
                )
            } else {
                format!(
                    "{what}: this kernel refuses io_uring here ({e}; see kernel.io_uring_disabled)"
                )
            })
        })?;
        Ok(UringStream { io, what })
    }

    #[cold]
    fn failed(&self, op: &'static str, e: Errno) -> Error {
        if e == Errno::ETIME {
            Error::Timeout(format!("{} {op} not done within {WAIT_MS} ms", self.what))
        } else {
            Error::io(op, self.what, e)
        }
    }
}

impl ByteStream for UringStream {
    #[inline]
    fn write_all(&mut self, mut buf: &[u8]) -> Result<()> {
        while !buf.is_empty() {
            match self.io.write(buf, WAIT_MS) {
                Ok(0) => return Err(self.failed("write", Errno::EPIPE)),
                Ok(n) => buf = &buf[n..],
                Err(Errno::EINTR | Errno::EAGAIN) => {}
                Err(e) => return Err(self.failed("write", e)),
            }
        }
        Ok(())
    }

    #[inline]
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        loop {
            match self.io.read(buf, WAIT_MS) {
                Ok(n) => return Ok(n),
                Err(Errno::EINTR | Errno::EAGAIN) => {}
                Err(e) => return Err(self.failed("read", e)),
            }
        }
    }
}

fn open_end(h: PeerHandoff, timeout_ms: i32) -> Result<UringStream> {
    let name = h.kind.name();
    let mut h = h;
    let fd = super::open_fd(&mut h, timeout_ms)?;
    UringStream::new(fd, name, &h.opts)
}

/// The plain parts every io_uring mechanism shares: its ends, its modes.
macro_rules! uring_ends {
    () => {
        type End = UringStream;
        const POLLS: bool = false;
        const WAITS: &'static [super::wait::Wait] = &[super::wait::Wait::Uring];

        fn open(h: PeerHandoff, timeout_ms: i32) -> Result<Self::End> {
            open_end(h, timeout_ms)
        }

        fn from_local_fd(fd: OwnedFd, link: &mut Link) -> Result<Self::End> {
            UringStream::new(fd, link.kind.name(), &link.opts)
        }

        fn poll_fd(end: &mut Self::End) -> Option<std::os::fd::BorrowedFd<'_>> {
            Some(end.io.fd())
        }

        fn wait_label(_opts: &MechOptions) -> String {
            "io_uring".into()
        }
    };
}

/// A Unix-domain stream socket driven by io_uring.
pub struct UringUnix;

impl Mechanism for UringUnix {
    uring_ends!();

    const INFO: MechanismInfo = MechanismInfo {
        modes: TWO_SIDES,
        names: "socket path",
        in_dir: true,
        base: Some(MechanismKind::Unix),
        library: Some(super::info::IO_URING),
        ..MechanismInfo::new(
            MechanismKind::UringUnix,
            "uring-unix",
            "the unix socket, each read and write an io_uring submission",
        )
    };

    fn setup(opts: &MechOptions, _block: usize) -> Result<Link> {
        super::unix::setup_as(MechanismKind::UringUnix, opts)
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::TwoWay)
    }

    fn describe(opts: &MechOptions, out: &mut Vec<(String, String)>) {
        opts.describe_buffers(out);
        opts.describe_uring(out);
    }
}

/// TCP over loopback driven by io_uring.
pub struct UringTcp;

impl Mechanism for UringTcp {
    uring_ends!();

    const INFO: MechanismInfo = MechanismInfo {
        modes: TWO_SIDES,
        names: "none (ephemeral port)",
        base: Some(MechanismKind::Tcp),
        library: Some(super::info::IO_URING),
        ..MechanismInfo::new(
            MechanismKind::UringTcp,
            "uring-tcp",
            "TCP over loopback, each read and write an io_uring submission",
        )
    };

    fn setup(opts: &MechOptions, _block: usize) -> Result<Link> {
        super::tcp::setup_as(MechanismKind::UringTcp, opts)
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::TwoWay)
    }

    fn describe(opts: &MechOptions, out: &mut Vec<(String, String)>) {
        super::tcp::describe(opts, out);
        opts.describe_uring(out);
    }
}

/// The anonymous pipe driven by io_uring.
pub struct UringPipe;

impl Mechanism for UringPipe {
    uring_ends!();

    const INFO: MechanismInfo = MechanismInfo {
        modes: TWO_SIDES,
        base: Some(MechanismKind::Pipe),
        library: Some(super::info::IO_URING),
        ..MechanismInfo::new(
            MechanismKind::UringPipe,
            "uring-pipe",
            "the anonymous pipe, each read and write an io_uring submission",
        )
    };

    fn setup(opts: &MechOptions, _block: usize) -> Result<Link> {
        super::pipe::setup_as(MechanismKind::UringPipe, opts)
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::OneWayPair)
    }

    fn describe(opts: &MechOptions, out: &mut Vec<(String, String)>) {
        super::pipe::describe_pipe_size(opts, out);
        opts.describe_uring(out);
    }
}
