use super::*;
use crate::payload::Verify;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

/// A socket pair as a message end: a message is `len` bytes, read whole.
struct Sock(UnixStream);

impl MessageEnd for Sock {
    fn send_msg(&mut self, buf: &[u8]) -> Result<()> {
        self.0
            .write_all(buf)
            .map_err(|e| Error::Peer(e.to_string()))
    }
    fn recv_msg(&mut self, buf: &mut [u8]) -> Result<()> {
        self.0
            .read_exact(buf)
            .map_err(|e| Error::Peer(e.to_string()))
    }
}

/// Requests of 90 B every 2 ms, each answered 300 µs later by 200 B and then
/// 5,000 B, and one B→A notice before the first request.
fn request_reply(n: u64) -> Vec<(u64, bool, u64)> {
    let mut m = vec![(0, false, 16)];
    for i in 0..n {
        let t = 1_000_000 + i * 2_000_000;
        m.push((t, true, 90));
        m.push((t + 300_000, false, 200));
        m.push((t + 310_000, false, 5_000));
    }
    m
}

#[test]
fn a_script_anchors_each_answer_to_the_request_before_it() {
    let mut msgs = request_reply(3);
    msgs.reverse(); // any order: sorted by time
    let s = Script::new(msgs, 2.0).unwrap();
    assert_eq!(s.len(), 10);
    assert_eq!(s.steps[0].anchor, OWN_TIME);
    assert!(s.steps[1].forward());
    assert_eq!((s.steps[2].anchor, s.steps[3].anchor), (1, 1));
    assert_eq!((s.steps[5].anchor, s.steps[6].anchor), (4, 4));
    // --speed 2: half the recorded times.
    assert_eq!(s.steps[1].at_ns, 500_000);
    assert_eq!(s.span_ns(), (1_000_000 + 2 * 2_000_000 + 310_000) / 2);
    assert_eq!(s.counts(), (3, 270, 7, 15_616));
    assert_eq!(s.largest(), 5_000);
    assert!(!s.alternates());
    let strict = Script::new(
        vec![(0, true, 9), (5, false, 9), (9, true, 9), (12, false, 1)],
        1.0,
    );
    assert!(strict.unwrap().alternates());
    assert!(!Script::new(vec![(0, true, 9), (5, true, 9)], 1.0)
        .unwrap()
        .alternates());
}

#[test]
fn answers_named_by_their_request_keep_a_pipelined_order() {
    // Three requests at once, then their three answers, each answering its own
    // request in order; one answer before any request; one left to the rule.
    let msgs = vec![
        (5, false, 4, Answers::Nothing),
        (10, true, 8, Answers::Previous),
        (11, true, 8, Answers::Previous),
        (12, true, 8, Answers::Previous),
        (20, false, 4, Answers::Request(0)),
        (21, false, 4, Answers::Request(1)),
        (22, false, 4, Answers::Request(2)),
        (23, false, 4, Answers::Previous),
        // A request that was never sent: the last one sent.
        (24, false, 4, Answers::Request(9)),
    ];
    let s = Script::answering(msgs, 1.0).unwrap();
    let anchors: Vec<u32> = s.steps.iter().map(|s| s.anchor).collect();
    assert_eq!(
        anchors,
        [OWN_TIME, FORWARD, FORWARD, FORWARD, 1, 2, 3, 3, 3]
    );
}

#[test]
fn bad_scripts_are_refused() {
    assert!(Script::new(Vec::new(), 1.0).is_err());
    assert!(Script::new(vec![(0, true, 0)], 1.0).is_err());
    assert!(Script::new(vec![(0, true, MAX_MESSAGE + 1)], 1.0).is_err());
    assert!(Script::new(vec![(0, true, 1)], 0.0).is_err());
    assert!(Script::new(vec![(0, true, 1)], f64::NAN).is_err());
}

#[test]
fn a_script_travels_through_a_file_and_a_damaged_one_is_refused() {
    let s = Script::new(request_reply(5000), 1.0).unwrap();
    let f = ipcperf_sys::shm::memfd_file("t-script").unwrap();
    s.write_to(&f).unwrap();
    assert_eq!(Script::read_from(&f, s.len()).unwrap(), s);
    // An answer pointing at itself.
    let mut bad = s.clone();
    bad.steps[3].anchor = 3;
    bad.write_to(&f).unwrap();
    assert!(Script::read_from(&f, s.len()).is_err());
    // Fewer steps in the file than asked.
    assert!(Script::read_from(&f, s.len() + 1).is_err());
}

/// Replay `script` over a socket pair, A in this thread and B in another.
fn replay(script: &Script, reps: u64) -> (Figures, Pass) {
    let (f, p, _) = replay_times(script, reps);
    (f, p)
}

/// As [`replay`], with the pass's timing and both sides' times.
fn replay_times(script: &Script, reps: u64) -> (Figures, Pass, (Timing, Vec<u64>, Vec<u64>)) {
    let (x, y) = UnixStream::pair().unwrap();
    let n = script.len() * reps as usize;
    let t = Timing {
        start_ns: now_ns() + 5_000_000,
        reps,
        period_ns: script.period_ns(),
        spin: false,
    };
    let steps = script.steps.clone();
    let big = script.largest();
    let peer = std::thread::spawn(move || {
        let mut times = vec![0u64; n];
        let (mut w, mut r) = (vec![0u8; big], vec![0u8; big]);
        follow_loop::<_, Verify>(&mut Sock(y), &steps, &t, &mut w, &mut r, &mut times)
            .map(|lost| (lost, times))
    });
    let mut a = vec![0u64; n];
    let (mut w, mut r) = (vec![0u8; big], vec![0u8; big]);
    let lost = lead_loop::<_, Verify>(&mut Sock(x), &script.steps, &t, &mut w, &mut r, &mut a);
    let (blost, b) = peer.join().unwrap().unwrap();
    assert_eq!((lost.unwrap(), blost), (0, 0));
    let mut f = Figures::new(reps * t.period_ns);
    let p = f.add(&script.steps, &t, &a, &b, 0);
    (f, p, (t, a, b))
}

/// What the walk guarantees on any machine: every message delivered, none
/// sent before it was due (A's at their recorded times, each answer its
/// recorded offset after its request arrived), each latency counted from when
/// it was due. How closely a busy machine keeps the schedule (a sleeper woken
/// late now and then) is a benchmark's figure (bench/replay/run.sh), not this
/// test's: a bound on it held on one VM's scheduler only.
#[test]
fn both_sides_walk_the_script_and_keep_its_schedule() {
    // 100 requests 2 ms apart: 0.2 s.
    let script = Script::new(request_reply(100), 1.0).unwrap();
    let (f, p, (t, a, b)) = replay_times(&script, 1);
    assert_eq!(p.delivered, 301);
    assert_eq!(p.bytes, 16 + 100 * 5290);
    assert_eq!(f.all.len(), 301);
    assert_eq!((f.a_to_b.len(), f.b_to_a.len()), (100, 201));
    assert_eq!(f.late.len(), 301);
    assert_eq!(f.bins.iter().map(|b| b.latency.len()).sum::<u64>(), 301);
    for (i, s) in script.steps.iter().enumerate() {
        if s.forward() {
            assert!(a[i] >= t.due(0, s.at_ns), "request {i} sent early");
            assert!(b[i] >= a[i], "request {i} arrived before it went");
        } else {
            let due = if s.anchor == super::OWN_TIME {
                t.due(0, s.at_ns)
            } else {
                let k = s.anchor as usize;
                b[k] + (s.at_ns - script.steps[k].at_ns)
            };
            assert!(b[i] >= due, "answer {i} sent before its request's offset");
            assert!(a[i] >= b[i], "answer {i} arrived before it went");
        }
    }
    let kept = p.kept.unwrap();
    assert!(kept > 0.0 && kept <= 1.0, "{kept}");
}

#[test]
fn a_loop_goes_round_the_script_again_each_period() {
    let script = Script::new(request_reply(20), 4.0).unwrap();
    let (f, p) = replay(&script, 3);
    assert_eq!(p.delivered, 3 * 61);
    assert_eq!(f.all.len(), 3 * 61);
    let t_last = 2 * script.period_ns() + script.span_ns();
    assert!(p.elapsed_ns >= t_last, "{} < {t_last}", p.elapsed_ns);
}

#[test]
fn a_stall_shows_as_a_stretch_behind_the_schedule() {
    // Steps as the peer would time them: A→B at 0, 1, 2, ... ms; the sends from
    // 10 to 14 ms went 5 ms late.
    let steps: Vec<Step> = (0..30)
        .map(|i| Step {
            at_ns: i * 1_000_000,
            size: 8,
            anchor: FORWARD,
        })
        .collect();
    let t = Timing {
        start_ns: 1_000_000_000,
        reps: 1,
        period_ns: 31_000_000,
        spin: false,
    };
    let a: Vec<u64> = (0..30u64)
        .map(|i| {
            let due = t.due(0, i * 1_000_000);
            if (10..15).contains(&i) {
                due + 5_000_000
            } else {
                due + 1_000
            }
        })
        .collect();
    let b: Vec<u64> = a.iter().map(|x| x + 2_000).collect();
    let mut f = Figures::new(t.period_ns);
    let p = f.add(&steps, &t, &a, &b, 0);
    let behind = f.behind.unwrap();
    assert_eq!(
        (behind.from_ns, behind.to_ns, behind.messages),
        (10_000_000, 14_000_000, 5)
    );
    assert_eq!(behind.max_late_ns, 5_000_000);
    assert_eq!(f.late_sends, 5);
    // The latency of a late message counts from when it was due.
    assert!(f.all.max() >= 5_000_000);
    assert!(p.kept.unwrap() > 0.99);
}

/// A's requests all late, B's answers (due from each request's arrival) on
/// time between them: the stretch is A's, all of it, not one send (a replay
/// said "1 send" behind beside 4,907 late sends).
#[test]
fn a_stretch_behind_is_one_senders() {
    let steps: Vec<Step> = (0..20u32)
        .map(|i| Step {
            at_ns: u64::from(i) * 1_000_000,
            size: 8,
            anchor: if i % 2 == 0 { FORWARD } else { i - 1 },
        })
        .collect();
    let t = Timing {
        start_ns: 1_000_000_000,
        reps: 1,
        period_ns: 21_000_000,
        spin: false,
    };
    // A sends each request 3 ms late; B answers 1 ms after it arrives (its
    // recorded offset), and A reads the answer at once.
    let (mut a, mut b) = (vec![0u64; 20], vec![0u64; 20]);
    for i in (0..20).step_by(2) {
        a[i] = t.due(0, steps[i].at_ns) + 3_000_000;
        b[i] = a[i] + 2_000;
        b[i + 1] = b[i] + 1_000_000;
        a[i + 1] = b[i + 1] + 2_000;
    }
    let mut f = Figures::new(t.period_ns);
    f.add(&steps, &t, &a, &b, 0);
    assert_eq!(f.late_sends, 10);
    let behind = f.behind.unwrap();
    assert_eq!(
        (behind.from_ns, behind.to_ns, behind.messages),
        (0, 18_000_000, 10)
    );
}
