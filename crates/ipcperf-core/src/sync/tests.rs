//! Tests of the sync workload: primitives, locks, channels, robustness.

use super::ends::{AnyChannel, Channel, Side};
use super::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const ALL: [Primitive; 9] = [
    Primitive::SysvSem,
    Primitive::PosixSemNamed,
    Primitive::PosixSem,
    Primitive::Mutex,
    Primitive::Futex,
    Primitive::Eventfd,
    Primitive::Flock,
    Primitive::Fcntl,
    Primitive::Pipe,
];

fn base() -> PathBuf {
    ipcperf_sys::names::default_base()
}

#[test]
fn names_round_trip() {
    for p in ALL {
        assert_eq!(Primitive::from_name(p.name()), Some(p));
    }
    assert_eq!(Primitive::from_name("nope"), None);
}

#[test]
fn request_release_returns_to_first_state_and_objects_go() {
    for p in ALL {
        let objs = Objects::create(p, &base()).unwrap();
        let named = objs.named_objects();
        let mut lock = objs.lock().unwrap();
        let r = crate::with_lock!(&mut lock, |l| {
            assert!(l.is_free().unwrap(), "{} free at first", p.name());
            l.acquire().unwrap();
            assert!(!l.is_free().unwrap(), "{} taken after acquire", p.name());
            l.release().unwrap();
            loops::request_release(l, 1000).unwrap();
            l.is_free().unwrap()
        });
        match r {
            Some(free) => assert!(free, "{} free after 1000 cycles", p.name()),
            None => assert_eq!(p, Primitive::Pipe),
        }
        drop(lock);
        drop(objs);
        assert!(
            named.still_present().is_empty(),
            "left behind: {:?}",
            named.still_present()
        );
    }
}

/// Side B in a thread; a shared baton proves the strict alternation, and each
/// side counts the tokens it took.
#[test]
fn ping_pong_delivers_exactly_n_tokens_each_way() {
    const N: u64 = 2000;
    for p in ALL {
        let mut objs = Objects::create(p, &base()).unwrap();
        let named = objs.named_objects();
        let mut a = objs.channel().unwrap();
        let mut b = objs.channel_b().unwrap();
        if matches!(a, AnyChannel::None) {
            assert!(p.info().no_set_clear.is_some());
            continue;
        }
        let baton = Arc::new(AtomicU64::new(0));
        let bt = baton.clone();
        let t = std::thread::spawn(move || {
            let mut got = 0u64;
            crate::with_channel!(&mut b, |c| {
                for i in 0..N {
                    c.wait().unwrap();
                    got += 1;
                    assert_eq!(bt.load(Ordering::SeqCst), 2 * i + 1);
                    bt.store(2 * i + 2, Ordering::SeqCst);
                    c.signal().unwrap();
                }
                assert!(!c.try_take().unwrap(), "an extra token reached B");
            });
            got
        });
        let mut got_a = 0u64;
        crate::with_channel!(&mut a, |c| {
            for i in 0..N {
                baton.store(2 * i + 1, Ordering::SeqCst);
                c.signal().unwrap();
                c.wait().unwrap();
                got_a += 1;
                assert_eq!(baton.load(Ordering::SeqCst), 2 * i + 2, "{}", p.name());
            }
        });
        let got_b = t.join().unwrap();
        crate::with_channel!(&mut a, |c| assert!(!c.try_take().unwrap()));
        assert_eq!((got_a, got_b), (N, N), "{}", p.name());
        drop((a, objs));
        assert!(named.still_present().is_empty());
    }
}

#[test]
fn a_dead_side_is_a_timeout_not_a_hang() {
    // The other side is a process that has ended: every waiting primitive says so
    // (after a tick) instead of waiting for a token that cannot come.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id() as i32;
    child.wait().unwrap();
    assert!(!ends::process_running(pid));
    assert!(ends::process_running(std::process::id() as i32));
    for p in [
        Primitive::Futex,
        Primitive::SysvSem,
        Primitive::PosixSem,
        Primitive::PosixSemNamed,
        Primitive::Eventfd,
    ] {
        let mut objs = Objects::create(p, &base()).unwrap();
        let mut a = objs.channel().unwrap();
        a.set_other_process(pid);
        let r = crate::with_channel!(&mut a, |c| loops::ping(c, 1)).unwrap();
        assert!(
            matches!(&r, Err(Error::Peer(m)) if m.contains("died")),
            "{}: {r:?}",
            p.name()
        );
    }
    let _ = Side::A;
}

fn spec(p: Primitive) -> SyncSpec {
    SyncSpec {
        idle: Default::default(),
        primitive: p,
        mode: Mode::Threads,
        placement: Placement::UNPINNED,
        series_ns: 5_000_000,
        repeat: 2,
        latency_samples: 500,
        base_dir: base(),
        peer: PeerCommand {
            program: "/nonexistent".into(),
            args: vec![],
        },
        untimed: false,
        explain: false,
    }
}

#[test]
fn a_threads_case_fills_the_record() {
    let r = run_case(&spec(Primitive::PosixSem));
    assert!(r.is_ok(), "{:?}", r.message);
    let s = r.sync.unwrap();
    assert_eq!(s.request_release_series.len(), 2);
    assert_eq!(s.set_clear_series.len(), 2);
    assert!(s
        .set_clear_series
        .iter()
        .all(|x| x.cycles > 0 && x.elapsed_ns > 0));
    let lat = s.set_clear_latency.unwrap();
    assert!(lat.samples > 0 && lat.p50_ns <= lat.p99_ns && lat.p99_ns <= lat.max_ns);
    let r = run_case(&spec(Primitive::Mutex));
    let s = r.sync.unwrap();
    assert!(s.set_clear_per_sec.is_none());
    assert!(s.set_clear_note.unwrap().starts_with("not applicable"));
}

#[test]
fn latency_summary_on_fixed_samples() {
    let s: Vec<u64> = (1..=1000).collect();
    let l = latency_summary(&s, 1);
    assert_eq!(
        (l.p50_ns, l.p90_ns, l.p99_ns, l.p999_ns, l.max_ns),
        (499, 899, 989, 998, 999)
    );
}

fn series(cycles: u64, elapsed_ns: u64, tare_ns: u64) -> SyncSeries {
    SyncSeries {
        cycles,
        elapsed_ns,
        tare_ns,
        atomic_ns: None,
        cost: None,
        partner_cost: None,
    }
}

/// A tare of at most a tenth of the cycle is taken off (a microsecond wake-up
/// around a nanosecond loop); a larger one stands beside the gross figure, which
/// is then the figure (a nanosecond fast path the loop would overlap), so a net
/// figure can never fall below the loop's own work.
#[test]
fn the_tare_is_subtracted_only_where_it_is_small() {
    let s = summarize(&[series(10, 10_000, 500)]).unwrap();
    assert_eq!(
        (s.gross_ns, s.tare_ns, s.net_ns, s.subtracted),
        (1000.0, 50.0, 950.0, true)
    );
    assert!((s.per_sec - 1e9 / 950.0).abs() < 1e-6);
    assert!(tare_note(&s).is_none());
    // 9 ns of loop around a 10 ns lock: the gross 10 ns stands.
    let fast = summarize(&[series(1000, 10_000, 9_000)]).unwrap();
    assert_eq!((fast.net_ns, fast.subtracted), (10.0, false));
    assert!(tare_note(&fast).unwrap().contains("not subtracted"));
    // A tare above the loop: still the gross figure, never a negative one.
    let below = summarize(&[series(10, 100, 200)]).unwrap();
    assert_eq!(below.net_ns, 10.0);
    assert!(summarize(&[series(10, 0, 0)]).is_none());
    // Medians of each: one disturbed tare does not decide the figure.
    let mixed = [
        series(10, 10_000, 100),
        series(10, 11_000, 50_000),
        series(10, 9_000, 100),
    ];
    assert_eq!(summarize(&mixed).unwrap().net_ns, 990.0);
    // The atomic reference: two read-modify-writes a cycle.
    let mut a = series(100, 1000, 100);
    a.atomic_ns = Some(1000);
    assert_eq!(atomic_rmw(&[a]), Some(5.0));
}
