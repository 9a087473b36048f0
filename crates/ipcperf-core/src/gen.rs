//! Stover's generator data: a reproducible stream of random printable ASCII.
//!
//! Generating fresh random characters costs more per byte than a 1 KiB pipe write,
//! so the stream is cut from a pool: 1 MiB of random printable characters made from
//! the seed (wyrand, one word per 8 bytes). Each 1 KiB block of the stream is the
//! pool's 1 KiB at a random start drawn from the seed and the block number. A
//! writer can then hand the kernel a block straight from the pool ([`Printable::next`]),
//! and byte `i` depends only on the seed and `i`: a reader can regenerate any part
//! of the stream whatever chunk sizes the writer and reader used. That is what
//! `ipcperf sink --verify-seed` checks against.
//!
//! The price: windows of one pool overlap now and then, so a compressor finds a
//! little to squeeze (gzip -6 left 80.4% of 32 MiB here; its Huffman codes alone
//! would leave about 83% of independent random characters).

use crate::error::{Error, Result};

/// The first and last printable ASCII characters: 95 characters, space to tilde.
pub const FIRST: u8 = b' ';
pub const LAST: u8 = b'~';
const SPAN: u16 = (LAST - FIRST + 1) as u16;

/// Pool size, and the stream's block: each block is one window of the pool.
const POOL: usize = 1 << 20;
const BLOCK: usize = 1024;
/// Keeps the block starts' random words apart from the pool's.
const START_SALT: u64 = 0x8bb8_4b93_962e_acc9;

/// The random word number `index` for `seed`: wyrand's output for the state
/// `seed + (index + 1) * P0`.
#[inline]
fn word(seed: u64, index: u64) -> u64 {
    const P0: u64 = 0xa076_1d64_78bd_642f;
    const P1: u64 = 0xe703_7ed1_a0b4_28db;
    let s = seed.wrapping_add(index.wrapping_add(1).wrapping_mul(P0));
    let t = (s as u128).wrapping_mul((s ^ P1) as u128);
    (t >> 64) as u64 ^ t as u64
}

/// The stream of one seed, read from the start in pieces of any size.
#[derive(Debug, Clone)]
pub struct Printable {
    seed: u64,
    pool: Box<[u8]>,
    offset: u64,
}

impl Printable {
    pub fn new(seed: u64) -> Printable {
        let mut pool = vec![0u8; POOL].into_boxed_slice();
        for (i, w) in pool.chunks_exact_mut(8).enumerate() {
            w.copy_from_slice(&word(seed, i as u64).to_le_bytes());
        }
        // Random bytes onto the 95 printable characters (a multiply-shift: vectorizes).
        for b in pool.iter_mut() {
            *b = FIRST + ((*b as u16 * SPAN) >> 8) as u8;
        }
        Printable {
            seed,
            pool,
            offset: 0,
        }
    }

    /// The stream position of the next byte [`next`](Self::next) or [`fill`](Self::fill) gives.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The pool bytes of block `block`, from `from` within it.
    #[inline]
    fn block(&self, block: u64, from: usize, len: usize) -> &[u8] {
        let r = word(self.seed ^ START_SALT, block) as u128 * (POOL - BLOCK + 1) as u128;
        let start = (r >> 64) as usize + from;
        &self.pool[start..start + len]
    }

    /// The next `scratch.len()` bytes of the stream: straight from the pool when they
    /// lie in one block (no copy), else copied into `scratch`.
    pub fn next<'a>(&'a mut self, scratch: &'a mut [u8]) -> &'a [u8] {
        let len = scratch.len();
        let from = (self.offset % BLOCK as u64) as usize;
        if from + len > BLOCK {
            self.fill(scratch);
            return scratch;
        }
        let block = self.offset / BLOCK as u64;
        self.offset += len as u64;
        self.block(block, from, len)
    }

    /// Write the next `buf.len()` bytes of the stream into `buf`.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let len = buf.len();
        let mut block = self.offset / BLOCK as u64;
        // A block split by the previous call: finish it first.
        let from = (self.offset % BLOCK as u64) as usize;
        let head = if from == 0 {
            0
        } else {
            (BLOCK - from).min(len)
        };
        let (head_buf, rest) = buf.split_at_mut(head);
        if head > 0 {
            head_buf.copy_from_slice(self.block(block, from, head));
            block += 1;
        }
        let mut whole = rest.chunks_exact_mut(BLOCK);
        for b in &mut whole {
            b.copy_from_slice(self.block(block, 0, BLOCK));
            block += 1;
        }
        let tail = whole.into_remainder();
        let n = tail.len();
        tail.copy_from_slice(self.block(block, 0, n));
        self.offset += len as u64;
    }
}

/// Check `got` against the next `got.len()` bytes of `stream`; the error names the
/// first wrong byte's offset. `scratch` must hold at least `got.len()` bytes.
pub fn check(stream: &mut Printable, got: &[u8], scratch: &mut [u8]) -> Result<()> {
    let at = stream.offset();
    let expected = stream.next(&mut scratch[..got.len()]);
    if got == expected {
        return Ok(()); // memcmp: the common case, fast
    }
    let i = got.iter().zip(expected).position(|(g, e)| g != e);
    let i = i.expect("unequal slices of one length differ somewhere");
    Err(Error::Verify {
        offset: at + i as u64,
        expected: expected[i],
        got: got[i],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(seed: u64, pieces: &[usize]) -> Vec<u8> {
        let mut g = Printable::new(seed);
        let mut out = Vec::new();
        for &n in pieces {
            let mut b = vec![0u8; n];
            g.fill(&mut b);
            out.extend_from_slice(&b);
        }
        out
    }

    #[test]
    fn same_bytes_whatever_the_pieces() {
        let whole = take(7, &[5000]);
        assert_eq!(take(7, &[1, 2, 3, 5, 8, 13, 1000, 2000, 1968]), whole);
        assert_eq!(take(7, &[7, 1017, 1024, 2952]), whole);
        assert_ne!(take(8, &[5000]), whole, "another seed, another stream");
    }

    #[test]
    fn next_gives_the_same_bytes_as_fill() {
        for pieces in [&[1024, 1024, 1024][..], &[1000, 48, 3000], &[512, 700, 1]] {
            let mut g = Printable::new(9);
            let mut got = Vec::new();
            for &n in pieces {
                let mut scratch = vec![0u8; n];
                got.extend_from_slice(g.next(&mut scratch));
            }
            assert_eq!(got, take(9, &[got.len()]), "pieces {pieces:?}");
        }
    }

    #[test]
    fn printable_and_spread_over_all_95() {
        let b = take(1, &[1 << 16]);
        assert!(b.iter().all(|&c| (FIRST..=LAST).contains(&c)));
        let mut seen = [0u32; 256];
        for &c in &b {
            seen[c as usize] += 1;
        }
        // 65536 bytes over 95 characters: each should appear roughly 690 times.
        for c in FIRST..=LAST {
            let n = seen[c as usize];
            assert!(
                (400..1000).contains(&n),
                "{:?} appeared {n} times",
                c as char
            );
        }
    }

    #[test]
    fn a_changed_byte_is_found_at_its_offset() {
        let mut data = take(3, &[3000]);
        let mut scratch = vec![0u8; 1500];
        let mut g = Printable::new(3);
        check(&mut g, &data[..1500], &mut scratch).unwrap();
        data[2222] ^= 1;
        match check(&mut g, &data[1500..], &mut scratch) {
            Err(Error::Verify { offset, got, .. }) => {
                assert_eq!((offset, got), (2222, data[2222]));
            }
            other => panic!("expected a verify error, got {other:?}"),
        }
    }
}
