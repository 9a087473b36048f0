//! Anonymous pipe: pipe2(2); the read end is handed to the peer.

use std::os::fd::AsFd;

use super::{
    Link, LocalEnd, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr, PeerHandoff,
    RoundTripShape,
};
use crate::error::Result;
use ipcperf_sys::fd;

/// The pipe as `kind` (pipe, or a mechanism that drives the same pipe).
pub(super) fn setup_as(kind: MechanismKind, opts: &MechOptions) -> Result<Link> {
    let (r, w) = fd::pipe()?;
    let mut facts = Vec::new();
    if let Some(s) = opts.pipe_size {
        let granted = fd::set_pipe_size(w.as_fd(), s)?;
        facts.push(("pipe_size_granted".into(), granted.to_string()));
    }
    let peer = PeerHandoff {
        kind,
        addr: PeerAddr::Fd,
        opts: opts.clone(),
        fds: vec![r],
    };
    let mut link = Link::new(kind, opts, Some(LocalEnd::Ready(w)), Some(peer), None);
    link.facts = facts;
    Ok(link)
}

/// The anonymous pipe.
pub struct Pipe;

impl Mechanism for Pipe {
    super::fd_stream_ends!();
    const WAITS: &'static [super::wait::Wait] = super::wait::Wait::DESCRIPTOR;

    const INFO: MechanismInfo = MechanismInfo::new(
        MechanismKind::Pipe,
        "pipe",
        "anonymous pipe (pipe2); --pipe-size sets its buffer",
    );

    fn setup(opts: &MechOptions, _block: usize) -> Result<Link> {
        setup_as(MechanismKind::Pipe, opts)
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::OneWayPair)
    }

    fn describe(opts: &MechOptions, out: &mut Vec<(String, String)>) {
        describe_pipe_size(opts, out);
    }

    fn single_mode_hint() -> String {
        pipe_size_hint()
    }
}

/// `pipe_size` for the record (pipe, FIFO, vmsplice).
pub(super) fn describe_pipe_size(opts: &MechOptions, out: &mut Vec<(String, String)>) {
    if let Some(s) = opts.pipe_size {
        out.push(("pipe_size".into(), s.to_string()));
    }
}

/// What raises a pipe's buffer.
pub(super) fn pipe_size_hint() -> String {
    let max = std::fs::read_to_string("/proc/sys/fs/pipe-max-size").unwrap_or_default();
    format!(
        "; --pipe-size raises it (up to fs.pipe-max-size = {} for unprivileged users)",
        max.trim()
    )
}
