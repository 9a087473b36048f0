//! Named pipe: mkfifo(3) in a private directory; the peer opens it by path for
//! reading, the owner for writing.

use std::os::fd::OwnedFd;
use std::path::Path;

use super::{
    Link, LocalEnd, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr, PeerHandoff,
    RoundTripShape,
};
use crate::error::{Error, Result};
use ipcperf_sys::error::Errno;
use ipcperf_sys::fd::{self, OpenFlags};
use ipcperf_sys::names::PrivateDir;

fn setup(opts: &MechOptions) -> Result<Link> {
    let dir = PrivateDir::create(&opts.base_dir(), "fifo")?;
    let path = dir.join("fifo");
    fd::mkfifo(&path)?;
    let peer = PeerHandoff {
        kind: MechanismKind::Fifo,
        addr: PeerAddr::Fifo(path.clone()),
        opts: opts.clone(),
        fds: Vec::new(),
    };
    Ok(Link::new(
        MechanismKind::Fifo,
        opts,
        Some(LocalEnd::FifoWriter(path)),
        Some(peer),
        Some(dir),
    ))
}

/// Open for reading without waiting for a writer (O_NONBLOCK; the caller sets the
/// blocking mode it wants afterwards).
pub(super) fn open_reader(path: &Path) -> Result<OwnedFd> {
    Ok(fd::open_path(
        path,
        OpenFlags::O_RDONLY | OpenFlags::O_NONBLOCK,
        0,
    )?)
}

/// Open for writing once a reader has the FIFO open; ENXIO means "no reader yet".
pub(super) fn open_writer(path: &Path, timeout_ms: i32) -> Result<OwnedFd> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(timeout_ms as u64);
    // Polls 20 µs apart at first, doubling to 100 µs: a reader is seen within
    // about 100 µs of its open (fixed 1 ms polls put up to 1 ms of harness into a
    // set-up-timed series). No event says "a reader opened" at a lower cost:
    // an inotify watch's close waits out an SRCU grace period, 4-15 ms here.
    let mut pause = std::time::Duration::from_micros(20);
    loop {
        match fd::open_path(path, OpenFlags::O_WRONLY | OpenFlags::O_NONBLOCK, 0) {
            Ok(fd) => return Ok(fd),
            Err(e) if e.errno == Errno::ENXIO && super::other_side::gone() => {
                return Err(super::other_side::gone_error("it opened the FIFO to read"));
            }
            Err(e) if e.errno == Errno::ENXIO && std::time::Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_micros(100));
            }
            Err(e) if e.errno == Errno::ENXIO => {
                return Err(Error::Timeout(format!(
                    "no reader opened {} within {timeout_ms} ms",
                    path.display()
                )))
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// The named pipe.
pub struct Fifo;

impl Mechanism for Fifo {
    super::fd_stream_ends!();
    const WAITS: &'static [super::wait::Wait] = super::wait::Wait::DESCRIPTOR;

    const INFO: MechanismInfo = MechanismInfo {
        names: "FIFO path",
        in_dir: true,
        ..MechanismInfo::new(
            MechanismKind::Fifo,
            "fifo",
            "named pipe (mkfifo) in a private directory",
        )
    };

    fn setup(opts: &MechOptions, _block: usize) -> Result<Link> {
        setup(opts)
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::OneWayPair)
    }

    fn describe(opts: &MechOptions, out: &mut Vec<(String, String)>) {
        super::pipe::describe_pipe_size(opts, out);
    }

    fn single_mode_hint() -> String {
        super::pipe::pipe_size_hint()
    }
}
