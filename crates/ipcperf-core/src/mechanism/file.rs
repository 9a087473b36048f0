//! Temp file (Stover): the writer writes everything, then the reader reads it all.
//! The file lives in a private directory under `--dir` (tmpfs or disk).

use std::os::fd::OwnedFd;
use std::path::Path;

use super::{
    Link, LocalEnd, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr, PeerHandoff,
};
use crate::error::{Error, Result};
use ipcperf_sys::fd::{self, OpenFlags};
use ipcperf_sys::names::PrivateDir;

fn setup(opts: &MechOptions) -> Result<Link> {
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

/// A temp file: written whole, then read.
pub struct File;

/// Bytes in GB, MB under one, kB under that (a small tmpfs said "0.0 GB free").
fn amount(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.0} kB", b / 1e3)
    }
}

impl Mechanism for File {
    super::fd_stream_ends!();

    const INFO: MechanismInfo = MechanismInfo {
        reader_after_writer: true,
        names: "temp file",
        in_dir: true,
        ..MechanismInfo::new(
            MechanismKind::File,
            "file",
            "temp file: the writer writes everything, then the reader reads it (--dir)",
        )
    };

    fn setup(opts: &MechOptions, _block: usize) -> Result<Link> {
        setup(opts)
    }

    fn describe(opts: &MechOptions, out: &mut Vec<(String, String)>) {
        out.push(("dir".into(), opts.base_dir().display().to_string()));
    }

    /// A series writes all its bytes before the reader starts: refuse one that
    /// would take more than 90% of the free space where the file goes (a 30 s
    /// series at a few GB/s is tens of GB), rather than fill the disk or fail
    /// half-way.
    fn series_fits(opts: &MechOptions, block: usize, blocks: u64, held: u64) -> Result<()> {
        let dir = opts.base_dir();
        let free = fd::free_bytes(&dir)?.saturating_add(held);
        let need = blocks.saturating_mul(block as u64);
        if need as f64 > free as f64 * 0.9 {
            return Err(Error::Refused(format!(
                "a series would write {} to a file, over 90% of the {} free in {}: \
                 use --count, a shorter --duration or another --dir",
                amount(need),
                amount(free),
                dir.display()
            )));
        }
        Ok(())
    }
}
