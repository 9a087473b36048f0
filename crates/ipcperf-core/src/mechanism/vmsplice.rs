//! vmsplice: a pipe fed with vmsplice(2) (the writer's pages are mapped into the
//! pipe, not copied) and drained with splice(2) into /dev/null (moved, not
//! copied): the zero-copy path, against which a plain pipe's two copies compare.
//!
//! The reader never sees the bytes (they go to /dev/null) and the writer may not
//! write its buffer again while the pipe still references its pages, so only
//! `--no-touch` streams are meaningful; touch and verify are refused, and so are
//! round trips (the receiver holds nothing to send back).

use std::os::fd::{AsFd, OwnedFd};

use super::info::TWO_SIDES;
use super::{
    Link, LocalEnd, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr, PeerHandoff,
};
use crate::error::{Error, Result};
use crate::mechanism::ByteStream;
use crate::payload::Payload;
use ipcperf_sys::fd;

fn setup(opts: &MechOptions) -> Result<Link> {
    let (r, w) = fd::pipe()?;
    let mut facts = vec![("reader".into(), "splice to /dev/null".into())];
    if let Some(s) = opts.pipe_size {
        let granted = fd::set_pipe_size(w.as_fd(), s)?;
        facts.push(("pipe_size_granted".into(), granted.to_string()));
    }
    let end = |fd, writer| PeerHandoff {
        kind: MechanismKind::Vmsplice,
        addr: PeerAddr::Vmsplice { writer },
        opts: opts.clone(),
        fds: vec![fd],
    };
    let mut link = Link::new(
        MechanismKind::Vmsplice,
        opts,
        Some(LocalEnd::Handoff(Box::new(end(w, true)))),
        Some(end(r, false)),
        None,
    );
    link.facts = facts;
    Ok(link)
}

/// Why a payload treatment cannot run over vmsplice (None: it can).
fn refuse_payload(p: Payload) -> Option<String> {
    (p != Payload::NoTouch).then(|| {
        format!(
            "vmsplice runs with --no-touch only ({} asked): the reader splices the pages to \
             /dev/null without looking at them, and the writer may not write its buffer again \
             while the pipe still holds its pages",
            p.name()
        )
    })
}

/// One end of the vmsplice pipe.
#[derive(Debug)]
pub struct VmspliceEnd {
    pipe: OwnedFd,
    /// The reader's sink (/dev/null); None on the writer.
    sink: Option<OwnedFd>,
}

impl VmspliceEnd {
    pub fn new(pipe: OwnedFd, writer: bool) -> Result<VmspliceEnd> {
        let sink = if writer {
            None
        } else {
            Some(fd::open_path(
                std::path::Path::new("/dev/null"),
                fd::OpenFlags::O_WRONLY,
                0,
            )?)
        };
        Ok(VmspliceEnd { pipe, sink })
    }
}

impl ByteStream for VmspliceEnd {
    #[inline]
    fn write_all(&mut self, mut buf: &[u8]) -> Result<()> {
        while !buf.is_empty() {
            let n = ipcperf_sys::splice::vmsplice(self.pipe.as_fd(), buf)
                .map_err(|e| Error::io("vmsplice", "vmsplice pipe", e))?;
            buf = &buf[n..];
        }
        Ok(())
    }

    #[inline]
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        let Some(sink) = &self.sink else {
            return Err(Error::Invalid("read on the vmsplice writer".into()));
        };
        ipcperf_sys::splice::splice(self.pipe.as_fd(), sink.as_fd(), buf.len())
            .map_err(|e| Error::io("splice", "vmsplice pipe", e))
    }
}

/// The zero-copy pipe: vmsplice in, splice out. No round trips: the receiver
/// splices the pages away and holds nothing to send back.
pub struct Vmsplice;

impl Mechanism for Vmsplice {
    type End = VmspliceEnd;

    const INFO: MechanismInfo = MechanismInfo {
        modes: TWO_SIDES,
        ..MechanismInfo::new(
            MechanismKind::Vmsplice,
            "vmsplice",
            "pipe fed with vmsplice, drained with splice to /dev/null: zero-copy (--no-touch only)",
        )
    };

    fn setup(opts: &MechOptions, _block: usize) -> Result<Link> {
        setup(opts)
    }

    fn open(mut h: PeerHandoff, timeout_ms: i32) -> Result<VmspliceEnd> {
        let PeerAddr::Vmsplice { writer } = h.addr else {
            return Err(Error::Peer(format!("vmsplice cannot open {:?}", h.addr)));
        };
        VmspliceEnd::new(super::open_fd(&mut h, timeout_ms)?, writer)
    }

    fn refuse_payload(p: Payload) -> Option<String> {
        refuse_payload(p)
    }

    fn describe(opts: &MechOptions, out: &mut Vec<(String, String)>) {
        super::pipe::describe_pipe_size(opts, out);
    }
}
