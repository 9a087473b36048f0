//! The message layout's records: each message a header word and its payload
//! (see the module above for why one word says both that a record is there and
//! how long it is), written and read in place.

use super::*;

/// A record's header in the message layout: one word (see [`header`]).
pub(super) const REC_HDR: usize = 8;

/// The ring bytes a record of `n` payload bytes takes: header and payload,
/// rounded up to a cache line so every record starts on one.
pub fn rec_size(n: usize) -> usize {
    (REC_HDR + n + 63) & !63
}

/// The header word of a record of `len` bytes at stream position `pos`.
#[inline]
pub(super) fn header(len: u64, pos: u64) -> u64 {
    len ^ !(pos + 1)
}

/// The length the header word `word` holds if it was written for position
/// `pos` (this lap's record there): any other word decodes to more than `limit`
/// (a quarter of the ring, or the ring less a byte with one slot) but by the
/// chance the module's text gives.
#[inline]
pub(super) fn header_len(word: u64, pos: u64, limit: u64) -> Option<u64> {
    let len = word ^ !(pos + 1);
    (len <= limit).then_some(len)
}

impl ShmRing {
    /// Message layout: publish a record (`len`: its payload's length, or
    /// [`ShmRing::wrap_len`]) of `size` ring bytes whose payload is in place at
    /// `at`: its header word, stored last.
    #[inline]
    pub(super) fn stamp(&mut self, at: usize, len: u64, size: usize) -> Result<()> {
        self.mem
            .atomic_u64(HDR + at)
            .store(header(len, self.mine), Ordering::Release);
        self.mine += size as u64;
        self.notify(DATA)
    }

    /// Message layout: the length that says "the rest of this lap is skipped; go
    /// on at its start" (more than any record holds, and the most a header may
    /// decode to).
    #[inline]
    pub(super) fn wrap_len(&self) -> u64 {
        if self.one_slot {
            (self.cap - 1) as u64
        } else {
            (self.cap / 4) as u64
        }
    }

    /// Message layout: the most payload one record holds.
    #[inline]
    pub(super) fn rec_most(&self) -> usize {
        if self.one_slot {
            self.cap - REC_HDR
        } else {
            self.cap / 4 - REC_HDR
        }
    }

    /// Message layout: the ring bytes a record of `n` payload bytes takes.
    #[inline]
    pub(super) fn rec_bytes(&self, n: usize) -> usize {
        if self.one_slot {
            self.cap
        } else {
            rec_size(n)
        }
    }

    /// Message layout: each piece of `buf` (at most a quarter of the ring) a
    /// record.
    pub(super) fn write_records(&mut self, mut buf: &[u8]) -> Result<()> {
        let most = self.rec_most();
        while !buf.is_empty() {
            let n = buf.len().min(most);
            let size = self.rec_bytes(n);
            let mut at = (self.mine as usize) & (self.cap - 1);
            if size > self.cap - at {
                // The rest of the lap is skipped; the record goes at its start.
                let skip = self.cap - at;
                self.room(skip)?;
                self.stamp(at, self.wrap_len(), skip)?;
                at = 0;
            }
            self.room(size)?;
            self.mem.write_bytes(HDR + at + REC_HDR, &buf[..n]);
            // The payload's last word whole: its bytes past the payload zero,
            // so no word of the ring is part this lap's and part an earlier
            // one's (see the module's text). In the record's own line, which
            // the writer is writing anyway.
            let cut = n % 8;
            if cut != 0 {
                self.mem
                    .write_bytes(HDR + at + REC_HDR + n, &[0u8; 8][..8 - cut]);
            }
            self.stamp(at, n as u64, size)?;
            buf = &buf[n..];
        }
        Ok(())
    }

    /// Message layout: the length of the record where this consumer stands, if
    /// it is there (one load: the header word holds both).
    #[inline]
    pub(super) fn record(&self) -> Option<u64> {
        let at = (self.mine as usize) & (self.cap - 1);
        let word = self.mem.atomic_u64(HDR + at).load(Ordering::Acquire);
        header_len(word, self.mine, self.wrap_len())
    }

    #[inline]
    pub(super) fn stamped(&self) -> bool {
        self.record().is_some()
    }

    /// Message layout, spin and adaptive wakes: spin here, inlined, for a record
    /// that comes within a few thousand turns (spin) or 64 (adaptive, unless its
    /// budget is nil: ~1-2 µs spun ahead of the budget, which starts at the wait's
    /// first clock read), so every round trip's answer, back to back, is taken
    /// without a call into the wait; its length if it came. Measured (64 B,
    /// processes, p50): adaptive 130 ns against 140-150 through the wait, spin 120.
    #[inline(always)]
    pub(super) fn spin_for_record(&self) -> Option<u64> {
        let turns = match self.wake {
            Wake::Spin => 4096,
            Wake::Adaptive if self.spin_ns > 0 => 64,
            _ => return None,
        };
        for _ in 0..turns {
            std::hint::spin_loop();
            if let Some(len) = self.record() {
                return Some(len);
            }
        }
        None
    }

    /// Message layout: read from the record where this consumer stands (waiting,
    /// bounded, for it); 0 when the ring is closed and drained.
    pub(super) fn read_records(&mut self, buf: &mut [u8]) -> Result<usize> {
        while self.left == 0 {
            let len = match self.record().or_else(|| self.spin_for_record()) {
                Some(len) => len,
                None => {
                    self.wait_for(DATA, |r| {
                        r.stamped() || r.closed().load(Ordering::Acquire) != 0
                    })?;
                    match self.record() {
                        Some(len) => len,
                        None => return Ok(0), // closed and drained
                    }
                }
            };
            let at = (self.mine as usize) & (self.cap - 1);
            if len == self.wrap_len() {
                // Skip to the lap's start, giving the skipped bytes back.
                self.release(self.cap - at)?;
                continue;
            }
            if len as usize > self.rec_most() {
                return Err(Error::Peer(format!(
                    "the shm ring holds a record of {len} bytes at {at}: not one this ring wrote"
                )));
            }
            self.left = len as usize;
            self.rec_at = at + REC_HDR;
            self.rec_end = self.mine + self.rec_bytes(self.left) as u64;
            if self.left == 0 {
                self.release((self.rec_end - self.mine) as usize)?;
            }
        }
        // Two copies, so the usual one (the reader's buffer holds the rest of the
        // record) takes its length from the buffer, not from the header word just
        // read: the copy starts on a predicted branch instead of waiting on the
        // loaded length.
        let n = if buf.len() <= self.left {
            self.mem.read_bytes(HDR + self.rec_at, buf);
            buf.len()
        } else {
            let n = self.left;
            self.mem.read_bytes(HDR + self.rec_at, &mut buf[..n]);
            n
        };
        self.rec_at += n;
        self.left -= n;
        if self.left == 0 {
            self.release((self.rec_end - self.mine) as usize)?;
        }
        Ok(n)
    }
}
