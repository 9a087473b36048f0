//! A stream's traced series, cut per side: where the writer's and the reader's
//! time went over the series, per block. Each side's timeline from the series'
//! first clock read to its last is followed through its own events: in a call
//! or between calls (`sys_enter`/`sys_exit`), running, asleep (switched out) or
//! woken and waiting to run (`sched_wakeup` to its next event). Each side's
//! parts therefore sum to the series' time, and per block to the block time.
//!
//! A switch-in the kernel does not record (a secondary CPU's idle task, on some
//! kernels) is taken at the side's next own event: its run-queue time is then
//! in "woken, waiting to run", not lost.

use super::split::{Event, Kind};
use super::{ExplainPart, ExplainRecord};

/// The parts, writer's then reader's, by their JSON names and what the table
/// calls them.
pub const STREAM_PARTS: [(&str, &str); 8] = [
    (
        "write_running",
        "writer: in its write calls, running (copy, locks)",
    ),
    ("write_asleep", "writer: in its calls, asleep (no room)"),
    ("write_runnable", "writer: woken, waiting to run"),
    ("writer_outside", "writer: between its calls"),
    (
        "read_running",
        "reader: in its read calls, running (copy, locks)",
    ),
    ("read_asleep", "reader: in its calls, asleep (no data)"),
    ("read_runnable", "reader: woken, waiting to run"),
    ("reader_outside", "reader: between its calls"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Running,
    Asleep,
    Runnable,
}

/// One side's time in `[t0, t1]`, ns: in a call running, asleep (in a call or
/// not), woken and waiting to run, running between calls.
pub fn side(ev: &[Event], t0: u64, t1: u64, who: &[i64]) -> [u64; 4] {
    let own = |e: &Event| who.contains(&e.tid) && matches!(e.kind, Kind::Enter | Kind::Exit);
    let window = || ev.iter().filter(|e| e.t >= t0 && e.t <= t1);
    // Where the side was at t0, from its first telling event: inside a call
    // if its first call event is an exit; asleep if it is first switched in or
    // woken, running if it is first switched out or makes a call.
    let mut in_call = window()
        .find(|e| own(e))
        .is_some_and(|e| e.kind == Kind::Exit);
    let mut state = State::Running;
    for e in window() {
        match e.kind {
            Kind::Switch { prev, .. } if who.contains(&prev) => break,
            Kind::Switch { next, .. } if who.contains(&next) => {
                state = State::Runnable;
                break;
            }
            Kind::Wakeup(p) if who.contains(&p) => {
                state = State::Asleep;
                break;
            }
            _ if own(e) => break,
            _ => {}
        }
    }
    let mut t = [0u64; 4];
    let mut at = t0;
    for e in window() {
        let slot = match (state, in_call) {
            (State::Running, true) => 0,
            (State::Asleep, _) => 1,
            (State::Runnable, _) => 2,
            (State::Running, false) => 3,
        };
        t[slot] += e.t - at;
        at = e.t;
        match e.kind {
            Kind::Switch { prev, .. } if who.contains(&prev) => state = State::Asleep,
            Kind::Switch { next, .. } if who.contains(&next) => state = State::Running,
            Kind::Wakeup(p) if who.contains(&p) && state == State::Asleep => {
                state = State::Runnable
            }
            _ if who.contains(&e.tid) && !matches!(e.kind, Kind::Switch { .. }) => {
                // Its own event: it runs (a switch-in the kernel did not write).
                state = State::Running;
                match e.kind {
                    Kind::Enter => in_call = true,
                    Kind::Exit => in_call = false,
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let slot = match (state, in_call) {
        (State::Running, true) => 0,
        (State::Asleep, _) => 1,
        (State::Runnable, _) => 2,
        (State::Running, false) => 3,
    };
    t[slot] += t1.saturating_sub(at);
    t
}

/// The record of a traced stream series of `blocks` blocks from `t0` for
/// `elapsed` ns, writer `w` and reader `r`: each part per block (its median and
/// p99 are that mean: one traced series has one value per part), its share of
/// the block time (each side's parts sum to 1), the wake-ups asked a block.
pub fn summarize(
    ev: &[Event],
    (t0, elapsed): (u64, u64),
    blocks: u64,
    w: &[i64],
    r: &[i64],
) -> ExplainRecord {
    let t1 = t0 + elapsed;
    let b = blocks.max(1) as f64;
    let per_block = elapsed as f64 / b;
    let (ws, rs) = (side(ev, t0, t1, w), side(ev, t0, t1, r));
    let parts = STREAM_PARTS
        .iter()
        .zip(ws.iter().chain(rs.iter()))
        .filter(|(_, ns)| **ns > 0)
        .map(|((name, _), ns)| {
            let mean = *ns as f64 / b;
            ExplainPart {
                name: name.to_string(),
                median_ns: mean.round() as u64,
                p99_ns: mean.round() as u64,
                mean_ns: mean,
                share: if per_block > 0.0 {
                    mean / per_block
                } else {
                    0.0
                },
                series_median_ns: Vec::new(),
            }
        })
        .collect();
    let inside = ev.iter().filter(|e| e.t >= t0 && e.t <= t1);
    let both = |p: &i64| w.contains(p) || r.contains(p);
    let wakings = inside
        .clone()
        .filter(|e| matches!(e.kind, Kind::Waking(p) if both(&p)))
        .count();
    let ipis = inside
        .filter(|e| e.kind == Kind::Ipi && both(&e.tid))
        .count();
    let mut x = super::summarize(&[], &[], 0, 0, 0, false, Vec::new());
    x.round_trips = blocks;
    x.parts = parts;
    x.sum_median_ns = (ws.iter().sum::<u64>() as f64 / b).round() as u64;
    x.traced_median_ns = per_block.round() as u64;
    x.traced_p90_ns = 0;
    x.woken_share = 0.0;
    x.ipi_share = (wakings > 0).then(|| ipis as f64 / wakings as f64);
    x.wakings_per_round_trip = Some(wakings as f64 / b);
    x.early_wake_share = None;
    x.server_wakeup_seen_share = None;
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: i64 = 10;
    const R: i64 = 20;

    fn e(t: u64, tid: i64, kind: Kind) -> Event {
        Event { t, tid, kind }
    }

    /// A pipe stream across CPUs, two blocks: the writer copies, fills the pipe
    /// and sleeps for room; the reader, asleep for data at the start, is woken,
    /// runs (its switch-in unseen), copies, wakes the writer.
    #[test]
    fn each_side_is_cut_into_call_sleep_wait_and_its_own_time() {
        let ev = [
            e(1_000, W, Kind::Enter),
            e(1_500, W, Kind::Waking(R)),
            e(1_600, W, Kind::Ipi),
            e(2_000, W, Kind::Switch { prev: W, next: 0 }), // no room
            e(2_400, 0, Kind::Wakeup(R)),
            e(3_000, R, Kind::Exit), // its switch-in unseen
            e(3_100, R, Kind::Enter),
            e(3_600, R, Kind::Waking(W)),
            e(3_700, 0, Kind::Wakeup(W)),
            e(3_900, 0, Kind::Switch { prev: 0, next: W }),
            e(4_000, R, Kind::Exit),
            e(4_200, W, Kind::Exit),
            e(4_500, R, Kind::Enter),
            e(4_600, R, Kind::Switch { prev: R, next: 0 }),
        ];
        let w = side(&ev, 1_000, 5_000, &[W]);
        // Running in its call 1000-2000 and 3900-4200; asleep 2000-3700;
        // runnable 3700-3900; between calls 4200-5000.
        assert_eq!(w, [1_300, 1_700, 200, 800]);
        assert_eq!(w.iter().sum::<u64>(), 4_000);
        let r = side(&ev, 1_000, 5_000, &[R]);
        // Asleep in its read at the start until 2400, runnable to 3000 (the
        // unseen switch-in), in calls 3000-3000, 3100-4000, 4500-4600; between
        // 3000-3100 and 4000-4500; asleep from 4600.
        assert_eq!(r, [1_000, 1_400 + 400, 600, 600]);
        assert_eq!(r.iter().sum::<u64>(), 4_000);
        let x = summarize(&ev, (1_000, 4_000), 2, &[W], &[R]);
        assert_eq!(x.round_trips, 2);
        assert_eq!(x.traced_median_ns, 2_000);
        assert_eq!(x.sum_median_ns, 2_000);
        let shares: f64 = x.parts.iter().map(|p| p.share).sum();
        assert!((shares - 2.0).abs() < 1e-9, "each side sums to 1: {shares}");
        assert_eq!(x.wakings_per_round_trip, Some(1.0));
        assert_eq!(x.ipi_share, Some(0.5));
        assert_eq!(x.parts[0].name, "write_running");
        assert_eq!(x.parts[0].median_ns, 650);
    }

    #[test]
    fn a_side_with_no_event_ran_between_calls_throughout() {
        assert_eq!(side(&[], 0, 1_000, &[W]), [0, 0, 0, 1_000]);
    }
}
