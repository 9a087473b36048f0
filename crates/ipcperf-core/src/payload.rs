//! What travels in a block: touched by the writer and reader (Bradford's "touched"
//! memory), left untouched, or a position-dependent pattern checked byte by byte.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How the payload is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Payload {
    /// The writer writes every byte before sending; the reader reads every byte it got.
    #[default]
    Touch,
    /// The buffer is sent as it is and not looked at on arrival.
    NoTouch,
    /// A pattern that depends on the byte's position in the stream; every byte checked.
    Verify,
}

impl Payload {
    pub fn name(self) -> &'static str {
        match self {
            Payload::Touch => "touch",
            Payload::NoTouch => "no-touch",
            Payload::Verify => "verify",
        }
    }
}

/// Run `$body` with `$P` naming the [`PayloadOps`] type of `$p` (a [`Payload`]):
/// the one dispatch per series into a loop monomorphized for the payload.
#[macro_export]
macro_rules! with_payload {
    ($p:expr, $P:ident => $body:expr) => {
        match $p {
            $crate::payload::Payload::Touch => {
                type $P = $crate::payload::Touch;
                $body
            }
            $crate::payload::Payload::NoTouch => {
                type $P = $crate::payload::NoTouch;
                $body
            }
            $crate::payload::Payload::Verify => {
                type $P = $crate::payload::Verify;
                $body
            }
        }
    };
}

/// The operations a workload applies to each block; zero-sized implementations let
/// the hot loop be monomorphized per payload.
pub trait PayloadOps {
    /// Prepare `buf` for sending; `offset` is its position in the stream, `seq` the block number.
    fn fill(buf: &mut [u8], offset: u64, seq: u64);
    /// Look at `buf` after receiving it at stream position `offset`.
    fn check(buf: &[u8], offset: u64) -> Result<()>;
}

pub struct Touch;
pub struct NoTouch;
pub struct Verify;

impl PayloadOps for Touch {
    #[inline]
    fn fill(buf: &mut [u8], _offset: u64, seq: u64) {
        buf.fill(seq as u8);
    }
    #[inline]
    fn check(buf: &[u8], _offset: u64) -> Result<()> {
        std::hint::black_box(sum(buf));
        Ok(())
    }
}

impl PayloadOps for NoTouch {
    #[inline]
    fn fill(_buf: &mut [u8], _offset: u64, _seq: u64) {}
    #[inline]
    fn check(_buf: &[u8], _offset: u64) -> Result<()> {
        Ok(())
    }
}

impl PayloadOps for Verify {
    fn fill(buf: &mut [u8], offset: u64, _seq: u64) {
        fill_pattern(buf, offset);
    }
    fn check(buf: &[u8], offset: u64) -> Result<()> {
        check_pattern(buf, offset)
    }
}

/// Read every byte: a sum over 8-byte words, so the reader really loads the data.
#[inline]
pub fn sum(buf: &[u8]) -> u64 {
    let mut chunks = buf.chunks_exact(8);
    let mut s = 0u64;
    for c in &mut chunks {
        s = s.wrapping_add(u64::from_ne_bytes(c.try_into().unwrap()));
    }
    for &b in chunks.remainder() {
        s = s.wrapping_add(b as u64);
    }
    s
}

#[inline]
fn mix(w: u64) -> u64 {
    // splitmix64 finaliser: every 8-byte word of the stream differs from its neighbours.
    let mut z = w.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The pattern byte at stream position `offset`.
#[inline]
pub fn pattern_byte(offset: u64) -> u8 {
    (mix(offset >> 3) >> ((offset & 7) * 8)) as u8
}

/// Fill `buf` with the pattern as it stands at stream position `offset`.
/// One mix per 8-byte word of the stream (a word is `mix(word).to_le_bytes()`).
pub fn fill_pattern(buf: &mut [u8], offset: u64) {
    let head = (offset.wrapping_neg() & 7).min(buf.len() as u64) as usize;
    let (first, rest) = buf.split_at_mut(head);
    for (i, b) in first.iter_mut().enumerate() {
        *b = pattern_byte(offset + i as u64);
    }
    let mut word = (offset + head as u64) >> 3;
    let mut words = rest.chunks_exact_mut(8);
    for w in &mut words {
        w.copy_from_slice(&mix(word).to_le_bytes());
        word += 1;
    }
    for (i, b) in words.into_remainder().iter_mut().enumerate() {
        *b = pattern_byte((word << 3) + i as u64);
    }
}

/// Check `buf` against the pattern; the error names the first wrong byte's offset.
pub fn check_pattern(buf: &[u8], offset: u64) -> Result<()> {
    let head = (offset.wrapping_neg() & 7).min(buf.len() as u64) as usize;
    check_bytes(&buf[..head], offset)?;
    let mut at = offset + head as u64;
    let mut words = buf[head..].chunks_exact(8);
    for w in &mut words {
        if w != mix(at >> 3).to_le_bytes() {
            return check_bytes(w, at);
        }
        at += 8;
    }
    check_bytes(words.remainder(), at)
}

/// Byte by byte: where the first difference is.
fn check_bytes(buf: &[u8], offset: u64) -> Result<()> {
    for (i, &b) in buf.iter().enumerate() {
        let o = offset + i as u64;
        let e = pattern_byte(o);
        if b != e {
            return Err(Error::Verify {
                offset: o,
                expected: e,
                got: b,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_fill_matches_the_byte_definition_at_every_start_and_length() {
        for start in 0..17u64 {
            for len in [0usize, 1, 5, 8, 9, 31, 64, 100] {
                let mut a = vec![0u8; len];
                fill_pattern(&mut a, start);
                let want: Vec<u8> = (0..len as u64).map(|i| pattern_byte(start + i)).collect();
                assert_eq!(a, want, "start {start} len {len}");
                check_pattern(&a, start).unwrap();
                if len > 0 {
                    let k = len / 2;
                    a[k] ^= 0x40;
                    match check_pattern(&a, start) {
                        Err(Error::Verify { offset, .. }) => assert_eq!(offset, start + k as u64),
                        other => panic!("start {start} len {len}: {other:?}"),
                    }
                }
            }
        }
    }

    #[test]
    fn pattern_round_trips_at_any_split() {
        let mut a = vec![0u8; 1000];
        fill_pattern(&mut a, 12345);
        check_pattern(&a[..333], 12345).unwrap();
        check_pattern(&a[333..], 12345 + 333).unwrap();
    }

    #[test]
    fn pattern_detects_changed_byte_and_shift() {
        let mut a = vec![0u8; 4096];
        fill_pattern(&mut a, 0);
        a[1234] ^= 1;
        match check_pattern(&a, 0) {
            Err(Error::Verify { offset, .. }) => assert_eq!(offset, 1234),
            other => panic!("expected verify error, got {other:?}"),
        }
        let mut b = vec![0u8; 64];
        fill_pattern(&mut b, 8);
        assert!(
            check_pattern(&b, 0).is_err(),
            "a shifted stream must not verify"
        );
    }

    #[test]
    fn sum_reads_every_byte() {
        assert_eq!(sum(&[1u8; 13]), u64::from_ne_bytes([1; 8]) + 5);
    }
}

/// A buffer that starts on a page boundary, as dd's does: the kernel's copies to
/// and from user memory run at their best from aligned buffers, and a fair
/// comparison gives ipcperf's loops the same start. Every page is written once
/// when it is made: a zeroed allocation nobody has written maps each of its pages
/// to the kernel's one zero page, so a `--no-touch` writer would copy the same
/// 4 KiB of memory whatever the block size, through as many addresses as the
/// block has pages (on AMD's cores, whose L1 is looked up by address, that
/// aliasing alone cost the 1 MiB shm ring 15 %).
#[derive(Debug, Clone)]
pub struct AlignedBuf {
    raw: Vec<u8>,
    off: usize,
    len: usize,
}

impl AlignedBuf {
    pub const ALIGN: usize = 4096;
    /// What a new buffer holds (any byte but zero: see above).
    pub const FILL: u8 = 0x5a;

    pub fn new(len: usize) -> Result<AlignedBuf> {
        AlignedBuf::with_offset(len, 0)
    }

    /// A buffer that starts `offset` bytes past a page boundary (`offset` < 4096):
    /// how far source and destination are out of line changes what a copy costs.
    /// A buffer the process cannot have (`ulimit -v`, memory exhausted) is the
    /// case's refusal, not an abort of the whole run.
    pub fn with_offset(len: usize, offset: usize) -> Result<AlignedBuf> {
        if offset >= Self::ALIGN {
            return Err(Error::Invalid(format!(
                "buffer offset {offset} >= {}",
                Self::ALIGN
            )));
        }
        let want = len.saturating_add(2 * Self::ALIGN);
        let mut raw = Vec::new();
        ipcperf_sys::alloc::fallible(|| raw.try_reserve_exact(want)).map_err(|_| {
            Error::Refused(format!(
                "no memory for a {len}-byte block buffer (the address-space limit, `ulimit -v`, or memory exhausted)"
            ))
        })?;
        // Not zero: a fill of zeros over zeroed memory may be left out by the
        // compiler, and then the pages stay the zero page.
        raw.resize(want, Self::FILL);
        let off = raw.as_ptr().align_offset(Self::ALIGN) + offset;
        Ok(AlignedBuf { raw, off, len })
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.raw[self.off..self.off + self.len]
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.raw[self.off..self.off + self.len]
    }
}

#[cfg(test)]
mod aligned_tests {
    use super::AlignedBuf;

    #[test]
    fn starts_on_a_page_and_has_its_length() {
        for len in [0, 1, 4093, 65536] {
            let mut b = AlignedBuf::new(len).unwrap();
            assert_eq!(b.len(), len);
            assert_eq!(b.as_ptr() as usize % AlignedBuf::ALIGN, 0);
            // Written when made: no page of it is left to the shared zero page.
            assert!(b.iter().all(|&x| x == AlignedBuf::FILL));
            b.fill(7);
            assert!(b.iter().all(|&x| x == 7));
        }
    }

    #[test]
    fn a_buffer_that_cannot_be_had_is_a_refusal_not_an_abort() {
        // More than any address space: the allocation fails as it would under `ulimit -v`.
        let e = AlignedBuf::new(usize::MAX / 2).unwrap_err();
        assert!(matches!(e, crate::error::Error::Refused(_)), "{e}");
        assert!(e.to_string().contains("ulimit -v"), "{e}");
        assert!(AlignedBuf::with_offset(64, 4096).is_err());
    }

    #[test]
    fn an_offset_buffer_starts_that_far_past_a_page() {
        for off in [1, 16, 4095] {
            let mut b = AlignedBuf::with_offset(65536, off).unwrap();
            assert_eq!(b.len(), 65536);
            assert_eq!(b.as_ptr() as usize % AlignedBuf::ALIGN, off);
            b.fill(9);
            assert!(b.iter().all(|&x| x == 9));
        }
    }
}
