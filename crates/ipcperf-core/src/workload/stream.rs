//! Stream throughput: the writer sends `blocks` blocks; the reader reads until every
//! byte has arrived. Neither loop allocates, formats, locks or reads the clock
//! per block: the clock is read once before the first write and once after the
//! last byte is read.

use ipcperf_sys::clock::now_ns;

use crate::error::{Error, Result};
use crate::mechanism::ByteStream;
use crate::payload::{Payload, PayloadOps};

/// Write `blocks` blocks of `buf.len()` bytes.
#[inline(never)]
pub fn write_blocks<S: ByteStream, P: PayloadOps>(
    s: &mut S,
    buf: &mut [u8],
    blocks: u64,
) -> Result<()> {
    // A mechanism that lends its memory builds each block there (once per series).
    if let Some(r) = s.write_blocks_in_place::<P>(buf.len(), blocks) {
        return r;
    }
    let len = buf.len() as u64;
    for i in 0..blocks {
        P::fill(buf, i * len, i);
        s.write_all(buf)?;
    }
    Ok(())
}

/// Fan-out: write each of `blocks` blocks to every one of `ends`, in turn (the
/// block filled once, as a publisher builds a message once for all subscribers).
#[inline(never)]
pub fn write_blocks_to_all<S: ByteStream, P: PayloadOps>(
    ends: &mut [&mut S],
    buf: &mut [u8],
    blocks: u64,
) -> Result<()> {
    let len = buf.len() as u64;
    for i in 0..blocks {
        P::fill(buf, i * len, i);
        for s in ends.iter_mut() {
            s.write_all(buf)?;
        }
    }
    Ok(())
}

/// Read exactly `total` bytes; returns the clock right after the last byte
/// arrived. `buf` is one block. Each read asks for a whole block, or, where the
/// end [fills blocks](ByteStream::fills_blocks), for the rest of the block it is
/// filling.
#[inline(never)]
pub fn read_bytes<S: ByteStream, P: PayloadOps>(
    s: &mut S,
    buf: &mut [u8],
    total: u64,
) -> Result<u64> {
    if let Some(r) = s.read_in_place::<P>(total) {
        return r.map(|()| now_ns());
    }
    let len = buf.len();
    let fill = s.fills_blocks();
    let mut got = 0u64;
    // Where in the block the next read lands: always 0 unless the end fills blocks.
    let mut at = 0usize;
    while got < total {
        let want = (total - got).min((len - at) as u64) as usize;
        let n = s.read_some(&mut buf[at..at + want])?;
        if n == 0 {
            return Err(Error::Peer(format!(
                "the stream ended after {got} of {total} bytes"
            )));
        }
        P::check(&buf[at..at + n], got)?;
        got += n as u64;
        if fill {
            at += n;
            if at == len {
                at = 0;
            }
        }
    }
    Ok(now_ns())
}

/// One thread: write a block, read it back, `blocks` times (Bradford's pipespeed2).
#[inline(never)]
pub fn echo_blocks<W: ByteStream, R: ByteStream, P: PayloadOps>(
    w: &mut W,
    r: &mut R,
    wbuf: &mut [u8],
    rbuf: &mut [u8],
    blocks: u64,
) -> Result<()> {
    let len = wbuf.len() as u64;
    for i in 0..blocks {
        P::fill(wbuf, i * len, i);
        w.write_all(wbuf)?;
        recv_exact(r, rbuf)?;
        P::check(rbuf, i * len)?;
    }
    Ok(())
}

/// Read until `buf` is full; end of stream before that is the peer's failure.
#[inline]
pub fn recv_exact<S: ByteStream>(s: &mut S, buf: &mut [u8]) -> Result<()> {
    let mut got = 0usize;
    while got < buf.len() {
        let n = s.read_some(&mut buf[got..])?;
        if n == 0 {
            return Err(Error::Peer(format!(
                "the stream ended after {got} of {} bytes",
                buf.len()
            )));
        }
        got += n;
    }
    Ok(())
}

/// [`write_blocks`] with the payload treatment chosen at run time.
pub fn write_stream<S: ByteStream>(
    p: Payload,
    s: &mut S,
    buf: &mut [u8],
    blocks: u64,
) -> Result<()> {
    crate::with_payload!(p, P => write_blocks::<S, P>(s, buf, blocks))
}

/// [`write_blocks_to_all`] with the payload treatment chosen at run time.
pub fn write_stream_to_all<S: ByteStream>(
    p: Payload,
    ends: &mut [&mut S],
    buf: &mut [u8],
    blocks: u64,
) -> Result<()> {
    crate::with_payload!(p, P => write_blocks_to_all::<S, P>(ends, buf, blocks))
}

/// [`read_bytes`] with the payload treatment chosen at run time.
pub fn read_stream<S: ByteStream>(
    p: Payload,
    s: &mut S,
    buf: &mut [u8],
    total: u64,
) -> Result<u64> {
    crate::with_payload!(p, P => read_bytes::<S, P>(s, buf, total))
}

/// [`echo_blocks`] with the payload treatment chosen at run time.
pub fn echo_stream<W: ByteStream, R: ByteStream>(
    p: Payload,
    w: &mut W,
    r: &mut R,
    wbuf: &mut [u8],
    rbuf: &mut [u8],
    blocks: u64,
) -> Result<()> {
    crate::with_payload!(p, P => echo_blocks::<W, R, P>(w, r, wbuf, rbuf, blocks))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An in-memory stream that hands out reads in odd-sized pieces.
    #[derive(Default)]
    struct Mem {
        data: Vec<u8>,
        pos: usize,
        /// Its reader fills blocks.
        fill: bool,
        /// Where each read started in the stream, and how much it asked for.
        asks: Vec<(usize, usize)>,
    }
    impl ByteStream for Mem {
        fn write_all(&mut self, buf: &[u8]) -> Result<()> {
            self.data.extend_from_slice(buf);
            Ok(())
        }
        fn fills_blocks(&self) -> bool {
            self.fill
        }
        fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
            self.asks.push((self.pos, buf.len()));
            let n = buf.len().min(7).min(self.data.len() - self.pos);
            buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    #[test]
    fn verify_survives_odd_read_sizes_and_catches_truncation() {
        let mut m = Mem::default();
        let mut wb = vec![0u8; 100];
        write_stream(Payload::Verify, &mut m, &mut wb, 5).unwrap();
        assert_eq!(m.data.len(), 500);
        let mut rb = vec![0u8; 64];
        read_stream(Payload::Verify, &mut m, &mut rb, 500).unwrap();
        m.pos = 0;
        m.data[321] ^= 0x80;
        match read_stream(Payload::Verify, &mut m, &mut rb, 500) {
            Err(Error::Verify { offset, .. }) => assert_eq!(offset, 321),
            other => panic!("expected a verify error, got {other:?}"),
        }
        m.pos = 0;
        m.data.truncate(499);
        m.data[321] ^= 0x80;
        assert!(matches!(
            read_stream(Payload::Verify, &mut m, &mut rb, 500),
            Err(Error::Peer(_))
        ));
    }

    /// A reader that fills blocks never asks past the end of the block it is
    /// filling, and still delivers and verifies every byte; one that does not
    /// asks for a whole block every time (or what is left of the stream).
    #[test]
    fn a_filling_reader_asks_for_the_rest_of_its_block() {
        for fill in [true, false] {
            let mut m = Mem {
                fill,
                ..Mem::default()
            };
            let mut wb = vec![0u8; 100];
            write_stream(Payload::Verify, &mut m, &mut wb, 5).unwrap();
            let mut rb = vec![0u8; 100];
            read_stream(Payload::Verify, &mut m, &mut rb, 450).unwrap();
            assert_eq!(m.pos, 450, "fill {fill}");
            for &(pos, ask) in &m.asks {
                if fill {
                    assert_eq!(ask, (100 - pos % 100).min(450 - pos), "read at {pos}");
                } else {
                    assert_eq!(ask, 100.min(450 - pos), "read at {pos}");
                }
            }
            // Corruption found at its offset whichever way the reads fall.
            m.pos = 0;
            m.data[257] ^= 1;
            match read_stream(Payload::Verify, &mut m, &mut rb, 500) {
                Err(Error::Verify { offset, .. }) => assert_eq!(offset, 257, "fill {fill}"),
                other => panic!("expected a verify error, got {other:?}"),
            }
        }
    }
}
