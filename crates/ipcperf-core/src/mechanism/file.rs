//! Temp file (Stover): the writer writes everything, then the reader reads it all.
//! The file lives in a private directory under `--dir` (tmpfs or disk).

use std::os::fd::OwnedFd;
use std::path::Path;

use super::{Link, LocalEnd, MechOptions, MechanismKind, PeerAddr, PeerHandoff};
use crate::error::Result;
use ipcperf_sys::fd::{self, OpenFlags};
use ipcperf_sys::names::PrivateDir;

pub(super) fn setup(opts: &MechOptions) -> Result<Link> {
    let dir = PrivateDir::create(&opts.base_dir(), "file")?;
    let path = dir.join("data");
    let w = fd::open_path(
        &path,
        OpenFlags::O_WRONLY | OpenFlags::O_CREAT | OpenFlags::O_TRUNC,
        0o600,
    )?;
    let peer = PeerHandoff {
        kind: MechanismKind::File,
        addr: PeerAddr::File(path),
        opts: opts.clone(),
        fds: Vec::new(),
    };
    // The writer writes everything before the reader starts and never blocks, so
    // it would not notice a dead reader until its whole series is written: when the
    // peer dies, its descriptor is swapped for /dev/full and the next write fails.
    let (guard, poison) = fd::poisonable(&w)?;
    let mut link = Link::new(
        MechanismKind::File,
        opts,
        Some(LocalEnd::Ready(w)),
        Some(peer),
        Some(dir),
    );
    link.write_guard = Some(guard);
    link.on_peer_death.push(Box::new(move || poison.poison()));
    Ok(link)
}

pub(super) fn open_reader(path: &Path) -> Result<OwnedFd> {
    Ok(fd::open_path(path, OpenFlags::O_RDONLY, 0)?)
}
