//! The two ceilings with one side only: `null` (the writer alone into /dev/null)
//! and `memcpy` (one thread copying between two buffers).

use super::info::SOLO;
use super::{
    ByteStream, Link, LocalEnd, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr,
    PeerHandoff,
};
use crate::error::{Error, Result};
use crate::payload::{AlignedBuf, PayloadOps};

/// The writer alone into /dev/null: a sender's ceiling.
pub struct Null;

impl Mechanism for Null {
    super::fd_stream_ends!();

    const INFO: MechanismInfo = MechanismInfo {
        modes: SOLO,
        solo: true,
        ..MechanismInfo::new(
            MechanismKind::Null,
            "null",
            "the writer alone into /dev/null: a sender's ceiling",
        )
    };

    fn setup(opts: &MechOptions, _block: usize) -> Result<Link> {
        let fd = ipcperf_sys::fd::open_path(
            std::path::Path::new("/dev/null"),
            ipcperf_sys::fd::OpenFlags::O_WRONLY,
            0,
        )?;
        Ok(Link::new(
            MechanismKind::Null,
            opts,
            Some(LocalEnd::Ready(fd)),
            None,
            None,
        ))
    }
}

/// One thread copying between two buffers: the memory-bandwidth ceiling.
pub struct Memcpy;

/// The copying end: a series copies the block from `src` into `dst` once per block.
#[derive(Debug)]
pub struct MemcpyEnd {
    src: AlignedBuf,
    dst: AlignedBuf,
}

impl ByteStream for MemcpyEnd {
    fn write_all(&mut self, buf: &[u8]) -> Result<()> {
        let n = buf.len().min(self.dst.len());
        self.dst[..n].copy_from_slice(&buf[..n]);
        Ok(())
    }

    fn read_some(&mut self, _buf: &mut [u8]) -> Result<usize> {
        Err(Error::Invalid("memcpy has no reader".into()))
    }

    /// The whole series: the source is built once (the pattern at offset 0 with
    /// --verify), copied `blocks` times, and the copy checked once.
    fn write_blocks_in_place<P: PayloadOps>(
        &mut self,
        len: usize,
        blocks: u64,
    ) -> Option<Result<()>> {
        if len != self.src.len() {
            return Some(Err(Error::Invalid(format!(
                "memcpy was set up for {}-byte blocks, not {len}",
                self.src.len()
            ))));
        }
        P::fill(&mut self.src, 0, 0);
        copy_blocks(&self.src, &mut self.dst, blocks);
        Some(P::check(&self.dst, 0))
    }
}

/// Copy `src` into `dst`, `blocks` times: the ceiling of every copy. The loop
/// holds the copy and nothing else: `black_box(&mut *dst)` stored the slice on
/// the stack each time round, and memcpy 64 B then turned on where the stack
/// began (0.84× in a quarter of a process's stack positions).
#[inline(never)]
fn copy_blocks(src: &[u8], dst: &mut [u8], blocks: u64) {
    for _ in 0..blocks {
        dst.copy_from_slice(src);
        ipcperf_sys::hint::clobber(dst.as_ptr());
    }
}

impl Mechanism for Memcpy {
    type End = MemcpyEnd;

    const INFO: MechanismInfo = MechanismInfo {
        modes: SOLO,
        solo: true,
        ..MechanismInfo::new(
            MechanismKind::Memcpy,
            "memcpy",
            "one thread copying between two buffers: the memory-bandwidth ceiling",
        )
    };

    fn setup(opts: &MechOptions, block: usize) -> Result<Link> {
        let h = PeerHandoff {
            kind: MechanismKind::Memcpy,
            addr: PeerAddr::Memory { len: block },
            opts: opts.clone(),
            fds: Vec::new(),
        };
        Ok(Link::new(
            MechanismKind::Memcpy,
            opts,
            Some(LocalEnd::Handoff(Box::new(h))),
            None,
            None,
        ))
    }

    fn open(h: PeerHandoff, _timeout_ms: i32) -> Result<MemcpyEnd> {
        match h.addr {
            PeerAddr::Memory { len } => Ok(MemcpyEnd {
                src: AlignedBuf::with_offset(len, h.opts.buffer_offset)?,
                dst: AlignedBuf::new(len)?,
            }),
            other => Err(Error::Peer(format!("memcpy cannot open {other:?}"))),
        }
    }
}
