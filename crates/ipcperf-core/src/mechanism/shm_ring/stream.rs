//! The ring as a [`ByteStream`]: the calls every mechanism answers, over either
//! layout.

use super::*;

impl ByteStream for ShmRing {
    #[inline]
    fn all_read(&mut self) {
        // One reader's word for it (a fan-out ring's other readers have not
        // spoken): the next records need no load of its cursor's line. The
        // message layout only: in the stream layout, whose reader waits on the
        // shared head, leaving the tail's line alone made round trips slower,
        // not faster (64 B, processes: p50 ~600 vs ~500 ns in this VM's far
        // state, 190 vs 140 ns in its near one).
        if self.producer && self.readers == 1 && self.messages {
            self.seen = self.mine;
        }
    }

    fn write_all(&mut self, mut buf: &[u8]) -> Result<()> {
        debug_assert!(self.producer);
        if self.messages {
            return self.write_records(buf);
        }
        while !buf.is_empty() {
            let free = self.space(buf.len())?;
            let at = (self.mine as usize) & (self.cap - 1);
            let n = buf.len().min(free).min(self.cap - at);
            self.mem.write_bytes(HDR + at, &buf[..n]);
            self.publish(n)?;
            buf = &buf[n..];
        }
        Ok(())
    }

    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        debug_assert!(!self.producer);
        if buf.is_empty() {
            return Ok(0);
        }
        if self.messages {
            return self.read_records(buf);
        }
        let avail = self.ready()?;
        if avail == 0 {
            return Ok(0); // closed and drained
        }
        let at = (self.mine as usize) & (self.cap - 1);
        // As in `read_records`: the usual copy (all the reader asked for is
        // there, before the wrap) takes its length from the buffer, not from
        // the head just loaded.
        let n = if buf.len() <= avail && buf.len() <= self.cap - at {
            self.mem.read_bytes(HDR + at, buf);
            buf.len()
        } else {
            let n = buf.len().min(avail).min(self.cap - at);
            self.mem.read_bytes(HDR + at, &mut buf[..n]);
            n
        };
        self.release(n)?;
        Ok(n)
    }

    /// Zero-copy: each block is built where it will be read (in at most two
    /// pieces, at the wrap), then published.
    fn write_blocks_in_place<P: crate::payload::PayloadOps>(
        &mut self,
        len: usize,
        blocks: u64,
    ) -> Option<Result<()>> {
        if !self.zero_copy {
            return None;
        }
        let mut run = || -> Result<()> {
            for i in 0..blocks {
                let mut off = 0usize;
                while off < len {
                    let free = self.space((len - off).min(LOAN_STEP))?;
                    let at = (self.mine as usize) & (self.cap - 1);
                    // Published in steps, so the reader starts on a block while
                    // its first lines are still in this CPU's cache.
                    let n = (len - off).min(free).min(self.cap - at).min(LOAN_STEP);
                    let pos = i * len as u64 + off as u64;
                    self.mem.with_bytes_mut(HDR + at, n, |b| P::fill(b, pos, i));
                    self.publish(n)?;
                    off += n;
                }
            }
            Ok(())
        };
        Some(run())
    }

    /// Zero-copy: each piece is looked at where it lies, then released.
    fn read_in_place<P: crate::payload::PayloadOps>(&mut self, total: u64) -> Option<Result<()>> {
        if !self.zero_copy {
            return None;
        }
        let mut run = || -> Result<()> {
            let mut got = 0u64;
            while got < total {
                let avail = self.ready()?;
                if avail == 0 {
                    return Err(Error::Peer(format!(
                        "the stream ended after {got} of {total} bytes"
                    )));
                }
                let at = (self.mine as usize) & (self.cap - 1);
                let n = (avail as u64).min((self.cap - at) as u64).min(total - got) as usize;
                self.mem.with_bytes(HDR + at, n, |b| P::check(b, got))?;
                self.release(n)?;
                got += n as u64;
            }
            Ok(())
        };
        Some(run())
    }
}
