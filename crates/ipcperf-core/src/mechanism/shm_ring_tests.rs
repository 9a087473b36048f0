//! Tests of the shm ring: every wake delivers every byte in order; bounded waits.

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
