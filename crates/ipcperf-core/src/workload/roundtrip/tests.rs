use super::*;
use std::collections::VecDeque;

/// A loopback "mechanism": what is sent comes back, in pieces of 5 bytes;
/// every `drop_every`-th message is dropped (and reported lost on receive).
struct Echoer {
    q: VecDeque<u8>,
    sent: u64,
    drop_every: u64,
    pending_loss: bool,
}
impl MessageEnd for Echoer {
    fn send_msg(&mut self, buf: &[u8]) -> Result<()> {
        self.sent += 1;
        if self.drop_every > 0 && self.sent.is_multiple_of(self.drop_every) {
            self.pending_loss = true;
        } else {
            self.q.extend(buf);
        }
        Ok(())
    }
    fn recv_msg(&mut self, buf: &mut [u8]) -> Result<()> {
        if std::mem::take(&mut self.pending_loss) {
            return Err(Error::Lost("dropped on purpose".into()));
        }
        for b in buf.iter_mut() {
            *b = self.q.pop_front().ok_or(Error::Peer("empty".into()))?;
        }
        Ok(())
    }
}

#[test]
fn ping_times_every_round_trip_and_verifies() {
    let mut e = Echoer {
        q: VecDeque::new(),
        sent: 0,
        drop_every: 0,
        pending_loss: false,
    };
    let (mut w, mut r) = (vec![0u8; 33], vec![0u8; 33]);
    let mut s = Vec::with_capacity(100);
    let o = ping(Payload::Verify, &mut e, &mut w, &mut r, 100, &mut s).unwrap();
    assert_eq!((o.done, o.lost), (100, 0));
    assert_eq!(s.len(), 100);
    assert!(e.q.is_empty());
}

#[test]
fn lost_round_trips_are_counted_not_sampled() {
    let mut e = Echoer {
        q: VecDeque::new(),
        sent: 0,
        drop_every: 4,
        pending_loss: false,
    };
    let (mut w, mut r) = (vec![0u8; 8], vec![0u8; 8]);
    let mut s = Vec::with_capacity(20);
    let o = ping(Payload::Touch, &mut e, &mut w, &mut r, 20, &mut s).unwrap();
    assert_eq!((o.done, o.lost), (15, 5));
    assert_eq!(s.len(), 15);
}

/// Every answer lost: the series ends as the other side's death after
/// LOST_IN_A_ROW, not after `n` bounded waits (a vanished host would
/// otherwise cost n × 200 ms); losses apart never add up to it.
#[test]
fn losses_in_a_row_end_the_series_as_a_dead_peer() {
    let mut e = Echoer {
        q: VecDeque::new(),
        sent: 0,
        drop_every: 1,
        pending_loss: false,
    };
    let (mut w, mut r) = (vec![0u8; 8], vec![0u8; 8]);
    let mut s = Vec::with_capacity(1000);
    let err = ping(Payload::Touch, &mut e, &mut w, &mut r, 1000, &mut s).unwrap_err();
    assert!(matches!(err, Error::Peer(_)), "{err}");
    assert!(
        err.to_string().contains("10 round trips in a row lost"),
        "{err}"
    );
    assert_eq!(e.sent, LOST_IN_A_ROW as u64);
    // Every other one lost: 500 losses, none ten in a row.
    let mut e = Echoer {
        q: VecDeque::new(),
        sent: 0,
        drop_every: 2,
        pending_loss: false,
    };
    let o = ping(Payload::Touch, &mut e, &mut w, &mut r, 1000, &mut s).unwrap();
    assert_eq!((o.done, o.lost), (500, 500));
}

#[test]
fn pair_sends_on_one_and_receives_on_the_other() {
    struct Sink(Vec<u8>);
    impl ByteStream for Sink {
        fn write_all(&mut self, b: &[u8]) -> Result<()> {
            self.0.extend_from_slice(b);
            Ok(())
        }
        fn read_some(&mut self, b: &mut [u8]) -> Result<usize> {
            let n = b.len().min(self.0.len()).min(3);
            b[..n].copy_from_slice(&self.0[..n]);
            self.0.drain(..n);
            Ok(n)
        }
    }
    let mut p = Pair {
        tx: Sink(Vec::new()),
        rx: Sink(b"hello".to_vec()),
    };
    p.send_msg(b"abc").unwrap();
    let mut b = [0u8; 5];
    p.recv_msg(&mut b).unwrap();
    assert_eq!(&b, b"hello");
    assert_eq!(p.tx.0, b"abc");
    // Closed early: an error, not a short message.
    assert!(matches!(p.recv_msg(&mut b), Err(Error::Peer(_))));
}

/// An echo that answers at once, except that the answer to message `stall_at`
/// takes `stall_ms` (a receiver that stalls once).
struct Staller {
    q: VecDeque<u8>,
    sent: u64,
    stall_at: u64,
    stall_ms: u64,
}
impl MessageEnd for Staller {
    fn send_msg(&mut self, buf: &[u8]) -> Result<()> {
        self.sent += 1;
        if self.sent == self.stall_at {
            std::thread::sleep(std::time::Duration::from_millis(self.stall_ms));
        }
        self.q.extend(buf);
        Ok(())
    }
    fn recv_msg(&mut self, buf: &mut [u8]) -> Result<()> {
        for b in buf.iter_mut() {
            *b = self.q.pop_front().ok_or(Error::Peer("empty".into()))?;
        }
        Ok(())
    }
}

fn staller(stall_ms: u64) -> Staller {
    Staller {
        q: VecDeque::new(),
        sent: 0,
        stall_at: 50,
        stall_ms,
    }
}

#[test]
fn the_pacing_schedule_is_kept_where_the_mechanism_keeps_up() {
    // 400 round trips at 2,000/s: 200 ms, whatever each one costs. A sleeping
    // sender can be woken late on a busy machine (other tests run beside this
    // one): three tries, so only a schedule that is never kept fails.
    let mut last = String::new();
    for _ in 0..3 {
        let mut e = staller(0);
        let (mut w, mut r) = (vec![0u8; 64], vec![0u8; 64]);
        let mut samples = Vec::with_capacity(400);
        let o = ping_with(
            Payload::Verify,
            &mut e,
            &mut w,
            &mut r,
            400,
            &mut samples,
            Some(Pace::every(500_000)),
            false,
        )
        .unwrap();
        let rate = o.done as f64 / (o.elapsed_ns as f64 / 1e9);
        // Sent on time: each sample is the echo's cost plus the sender's lateness.
        samples.sort_unstable();
        if (rate - 2000.0).abs() < 2000.0 * 0.02 && samples[200] < 200_000 {
            return;
        }
        last = format!("achieved {rate}/s, p50 {} ns", samples[200]);
    }
    panic!("the schedule was not kept in 3 tries: {last}");
}

#[test]
fn a_stall_counts_for_every_round_trip_it_delays_only_when_paced() {
    // 1 ms apart; round trip 50 stalls 30 ms: the ~30 due during the stall
    // wait for it, and each counts from when it was due.
    let (mut w, mut r) = (vec![0u8; 64], vec![0u8; 64]);
    let mut paced = Vec::with_capacity(200);
    ping_with(
        Payload::Touch,
        &mut staller(30),
        &mut w,
        &mut r,
        200,
        &mut paced,
        Some(Pace::every(1_000_000)),
        false,
    )
    .unwrap();
    let slow = |v: &[u64]| v.iter().filter(|&&x| x > 5_000_000).count();
    assert!(
        slow(&paced) >= 20,
        "paced: {} slow round trips",
        slow(&paced)
    );
    // Back to back, the same stall is one slow round trip: the others were
    // never sent while it lasted (coordinated omission).
    let mut b2b = Vec::with_capacity(200);
    ping(
        Payload::Touch,
        &mut staller(30),
        &mut w,
        &mut r,
        200,
        &mut b2b,
    )
    .unwrap();
    assert_eq!(slow(&b2b), 1, "back to back");
}

/// A paced series' time is its schedule's, n intervals, never less: one round
/// trip at 10/s said ~1/(its own cost) (thousands a second), three said ~15/s.
/// A series that falls behind (a 300 ms stall in five 10 ms intervals) still
/// counts its real time, so it shows under the offered rate.
#[test]
fn a_paced_series_rate_is_never_more_than_offered() {
    for n in [1u64, 3] {
        let (mut w, mut r) = (vec![0u8; 64], vec![0u8; 64]);
        let mut samples = Vec::with_capacity(n as usize);
        let o = ping_with(
            Payload::Touch,
            &mut staller(0),
            &mut w,
            &mut r,
            n,
            &mut samples,
            Some(Pace::every(100_000_000)),
            false,
        )
        .unwrap();
        let rate = o.done as f64 * 1e9 / o.elapsed_ns as f64;
        assert!(rate <= 10.0 + 1e-9, "{n} round trips at 10/s: {rate}/s");
        assert!(rate > 9.0, "{n} round trips at 10/s: {rate}/s");
    }
    let (mut w, mut r) = (vec![0u8; 64], vec![0u8; 64]);
    let mut samples = Vec::with_capacity(60);
    let mut slow = staller(300);
    slow.stall_at = 2;
    let o = ping_with(
        Payload::Touch,
        &mut slow,
        &mut w,
        &mut r,
        5,
        &mut samples,
        Some(Pace::every(10_000_000)),
        false,
    )
    .unwrap();
    let rate = o.done as f64 * 1e9 / o.elapsed_ns as f64;
    assert!(rate < 20.0, "behind its schedule: {rate}/s of 100 offered");
}
