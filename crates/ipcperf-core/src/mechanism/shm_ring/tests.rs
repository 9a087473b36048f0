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
