//! Anonymous pipe: pipe2(2); the read end is handed to the peer.

use std::os::fd::AsFd;

use super::{Link, LocalEnd, MechOptions, MechanismKind, PeerAddr, PeerHandoff};
use crate::error::Result;
use ipcperf_sys::fd;

pub(super) fn setup(opts: &MechOptions) -> Result<Link> {
    let (r, w) = fd::pipe()?;
    let mut facts = Vec::new();
    if let Some(s) = opts.pipe_size {
        let granted = fd::set_pipe_size(w.as_fd(), s)?;
        facts.push(("pipe_size_granted".into(), granted.to_string()));
    }
    let peer = PeerHandoff {
        kind: MechanismKind::Pipe,
        addr: PeerAddr::Fd,
        opts: opts.clone(),
        fds: vec![r],
    };
    let mut link = Link::new(
        MechanismKind::Pipe,
        opts,
        Some(LocalEnd::Ready(w)),
        Some(peer),
        None,
    );
    link.facts = facts;
    Ok(link)
}
