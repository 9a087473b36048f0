//! Tests of the shm ring: every wake delivers every byte in order; bounded waits.

use super::records::{header, header_len};
use super::*;
use crate::payload::{check_pattern, fill_pattern};

fn transfer(wake: Wake, named: bool, total: usize, block: usize) {
    let (mut w, h, fds) = ShmRing::create(64 * 1024, wake, named).unwrap();
    let name = h.name.clone();
    let mut r = ShmRing::open(&h, fds).unwrap();
    let t = std::thread::spawn(move || {
        let mut got = Vec::with_capacity(total);
        let mut buf = vec![0u8; 7777];
        loop {
            let n = r.read_some(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        got
    });
    let mut sent = 0usize;
    let mut b = vec![0u8; block];
    while sent < total {
        let n = block.min(total - sent);
        fill_pattern(&mut b[..n], sent as u64);
        w.write_all(&b[..n]).unwrap();
        sent += n;
    }
    drop(w);
    let got = t.join().unwrap();
    assert_eq!(got.len(), total, "{}", wake.name());
    check_pattern(&got, 0).unwrap();
    if let Some(n) = name {
        assert!(!ipcperf_sys::shm::shm_exists(&n), "{n} left behind");
    }
}

#[test]
fn every_wake_delivers_every_byte_in_order() {
    for wake in Wake::ALL {
        transfer(wake, false, 3 << 20, 65536 + 13);
        transfer(wake, true, 1 << 20, 100);
    }
}

#[test]
fn a_silent_producer_is_a_timeout_not_a_hang() {
    let (w, h, fds) = ShmRing::create(4096, Wake::Futex, false).unwrap();
    let mut r = ShmRing::open(&h, fds).unwrap();
    let mut b = [0u8; 16];
    let e = r.read_some(&mut b).unwrap_err();
    assert!(matches!(e, Error::Timeout(_)), "{e}");
    drop(w);
    assert_eq!(r.read_some(&mut b).unwrap(), 0);
    assert!(ShmRing::create(1000, Wake::Spin, false).is_err());
}

/// The message layout: blocks of many sizes (some larger than a record holds,
/// so split; most not dividing the ring, so records wrap often) read through
/// buffers smaller and larger than a record, every byte in order, each wake;
/// and with one slot (every record the whole ring).
#[test]
fn the_message_layout_delivers_every_byte_across_wraps_with_every_wake() {
    for (cap, wake, one_slot) in Wake::ALL
        .into_iter()
        .map(|w| (4096, w, false))
        .chain([(512, Wake::Spin, false), (512, Wake::Futex, false)])
        .chain([(512, Wake::Spin, true), (1024, Wake::Futex, true)])
    {
        let obj = RingObject::create(cap, wake, false)
            .unwrap()
            .messages(true)
            .unwrap()
            .one_slot(one_slot)
            .unwrap();
        let mut w = ShmRing::open_end(&obj.handoff, obj.end_fds().unwrap(), true).unwrap();
        let mut r = ShmRing::open_end(&obj.handoff, obj.end_fds().unwrap(), false).unwrap();
        let sizes = [1usize, 7, 56, 57, 64, 1000, 1016, 1017, 3000, 4096 + 5];
        let total: usize = sizes.iter().cycle().take(2000).sum();
        let t = std::thread::spawn(move || {
            let mut got = Vec::with_capacity(total);
            let reads = [3usize, 64, 1016, 5000];
            let mut buf = vec![0u8; 5000];
            for i in 0.. {
                let want = reads[i % reads.len()];
                let n = r.read_some(&mut buf[..want]).unwrap();
                if n == 0 {
                    break;
                }
                assert!(n <= want);
                got.extend_from_slice(&buf[..n]);
            }
            got
        });
        let mut sent = 0usize;
        let mut b = vec![0u8; 4096 + 5];
        for &n in sizes.iter().cycle().take(2000) {
            fill_pattern(&mut b[..n], sent as u64);
            w.write_all(&b[..n]).unwrap();
            sent += n;
        }
        drop(w);
        let got = t.join().unwrap();
        assert_eq!(got.len(), total, "{} {cap} {one_slot}", wake.name());
        check_pattern(&got, 0).unwrap();
    }
}

/// A header word is taken only at the position it was written for: the same
/// slot's header of any earlier lap, and never-written memory, decode to more
/// than any record's length.
#[test]
fn a_stale_or_empty_header_never_reads_as_a_record() {
    // The limits: a quarter of the ring, and the ring less a byte (one slot).
    for (cap, quarter) in [512u64, 4096, 1 << 20, 1 << 30]
        .into_iter()
        .flat_map(|c| [(c, true), (c, false)])
    {
        let limit = if quarter { cap / 4 } else { cap - 1 };
        for pos in [0u64, 64, cap - 64, 5 * cap + 128, u64::MAX / 2] {
            let pos = pos & !63;
            for len in [0u64, 1, limit - 8, limit] {
                let word = header(len, pos);
                assert_eq!(header_len(word, pos, limit), Some(len));
                for laps in [1u64, 2, 3, 1000] {
                    let later = pos + laps * cap;
                    assert_eq!(header_len(word, later, limit), None, "{pos} {laps}");
                }
            }
            assert_eq!(header_len(0, pos, limit), None);
        }
    }
}

/// One slot is a form of the message layout: asked of the stream layout, it is
/// refused.
#[test]
fn one_slot_needs_the_message_layout() {
    let e = RingObject::create(4096, Wake::Spin, false)
        .unwrap()
        .one_slot(true)
        .err()
        .unwrap();
    assert!(matches!(e, Error::Invalid(_)), "{e}");
}

/// A record whose payload ends inside an 8-byte word leaves the rest of that
/// word as an earlier lap had it. Where that rest is the high bytes of an old
/// header (two nearby positions' complements agree there), the payload's low
/// bytes could complete a header that decodes, at a later lap's position, to a
/// small length: a record the writer never wrote (a replay of mixed sizes
/// read one ~1.5% of its wraps and then stalled). Planted here without a race:
/// lap 0 stamps a header at every 64 B; lap 1's first record ends 2 bytes into
/// the word at 64, those bytes the low bytes of a header of 8 B at the position
/// lap 2 reaches there; lap 2's reader, standing at 64, must see no record.
#[test]
fn a_payload_ending_inside_an_old_header_never_reads_as_a_record() {
    let cap = 4096usize;
    let obj = RingObject::create(cap, Wake::Spin, false)
        .unwrap()
        .messages(true)
        .unwrap();
    let mut w = ShmRing::open_end(&obj.handoff, obj.end_fds().unwrap(), true).unwrap();
    let mut r = ShmRing::open_end(&obj.handoff, obj.end_fds().unwrap(), false).unwrap();
    let mut buf = vec![0u8; 256];
    let mut pass = |w: &mut ShmRing, r: &mut ShmRing, msg: &[u8]| {
        w.write_all(msg).unwrap();
        let n = r.read_some(&mut buf[..msg.len()]).unwrap();
        assert_eq!(&buf[..n], msg);
    };
    // Lap 0: 64 records of 56 B (64 ring bytes each): a header every 64 B.
    for _ in 0..cap / 64 {
        pass(&mut w, &mut r, &[1u8; 56]);
    }
    // The word lap 2 will read at offset 64 (position 2 * cap + 64).
    let planted = header(8, 2 * cap as u64 + 64).to_le_bytes();
    let old = header(56, 64).to_le_bytes();
    // Only its two low bytes differ from the old header's there: a payload
    // ending two bytes into that word would complete it.
    assert_eq!(planted[2..], old[2..]);
    // Lap 1: 58 B at offset 0 (payload 8..66: the word at 64 is cut after two
    // bytes), then 62 records of 56 B, so lap 2 starts at offset 0 again.
    let mut first = vec![2u8; 58];
    first[56..].copy_from_slice(&planted[..2]);
    pass(&mut w, &mut r, &first);
    for _ in 0..62 {
        pass(&mut w, &mut r, &[3u8; 56]);
    }
    // Lap 2: one record at offset 0; the reader then stands at 64, where
    // nothing of lap 2 was written.
    pass(&mut w, &mut r, &[4u8; 56]);
    assert!(!r.has_data(), "a record read where none was written");
    drop(w);
    assert_eq!(r.read_some(&mut buf).unwrap(), 0);
}
