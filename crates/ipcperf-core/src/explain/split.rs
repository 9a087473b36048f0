//! One round trip cut into its parts from the kernel's events: pure, over events
//! already decoded (see [`super::trace`]) and the round trip's two instants from
//! ipcperf's own clock (the same CLOCK_MONOTONIC the events are stamped on).
//!
//! The parts are consecutive intervals between milestones, each the first (or,
//! for a call that ends a side's wait, the last) event of its kind after the one
//! before; a milestone not found takes the one before's instant, so its part is
//! zero and its time falls into the next part found. The parts of a round trip
//! therefore sum to it exactly: what the events say is where the time went.

/// A kernel event, as the split needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A system call entered (`raw_syscalls:sys_enter`).
    Enter,
    /// A system call returned (`raw_syscalls:sys_exit`).
    Exit,
    /// `sched_waking`: the waker asks for task `pid` to be woken.
    Waking(i64),
    /// `sched_wakeup`: task `pid` is runnable (on its CPU's run queue).
    Wakeup(i64),
    /// `sched_switch`: the CPU leaves `prev` for `next`.
    Switch { prev: i64, next: i64 },
    /// `ipi:ipi_send_cpu`: an inter-processor interrupt sent (to wake a CPU).
    Ipi,
}

/// An event: when (ns, CLOCK_MONOTONIC), by which thread (the one current on
/// its CPU), what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub t: u64,
    pub tid: i64,
    pub kind: Kind,
}

/// The parts, in the order they follow each other on the round trip's path,
/// by their JSON names and what the table calls them.
pub const PARTS: [(&str, &str); 12] = [
    ("client_to_send", "client, to its send call"),
    ("send_call", "send call, to the wake-up"),
    ("wake", "wake-up (waking to runnable)"),
    ("run_queue", "run queue (runnable to running)"),
    ("receive_return", "server's return from its wait"),
    ("server_turn", "server, to its reply call"),
    ("reply_call", "reply call, to the wake-up"),
    ("reply_wake", "wake-up back"),
    ("reply_run_queue", "run queue back"),
    ("reply_return", "client's return from its wait"),
    ("client_after", "client, after its wait"),
    ("user_only", "no kernel event (spinning)"),
];

/// One round trip's parts (ns, in [`PARTS`]'s order) and what happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Split {
    pub parts: [u64; 12],
    /// The server was woken (a `sched_waking` of it by the client), and back.
    pub woken: [bool; 2],
    /// An IPI went with that wake-up.
    pub ipi: [bool; 2],
    /// Woken, but neither `sched_wakeup` nor the switch in was seen: the
    /// wake-up and run-queue time is in the return part.
    pub unseen: [bool; 2],
    /// Woken, its `sched_wakeup` seen, but not the switch in (a secondary CPU's
    /// idle task, whose switch out some kernels never record): the run-queue
    /// time is in the return part.
    pub no_switch_in: [bool; 2],
    /// Woken, and its `sched_wakeup` seen.
    pub wakeup_seen: [bool; 2],
    /// Every `sched_waking` of either side in the round trip, on the path or
    /// not (a wake-up that finds nothing to read and sleeps again counts).
    pub wakings: u32,
    /// The client was woken before the server's reply call entered: early,
    /// by something other than the reply (a Unix stream socket's reader
    /// frees room and wakes the writer's side).
    pub early: bool,
}

/// Cut the round trip `[t0, t1]` of client `a` (its threads' ids) and server
/// `b` out of `ev` (every event of the window, in time order).
pub fn split(ev: &[Event], t0: u64, t1: u64, a: &[i64], b: &[i64]) -> Split {
    let mut s = Split::default();
    let total = t1.saturating_sub(t0);
    let ours = |e: &Event| a.contains(&e.tid) || b.contains(&e.tid);
    if !ev.iter().any(ours) {
        s.parts[11] = total;
        return s;
    }
    let first = |from: u64, f: &dyn Fn(&Event) -> bool| {
        ev.iter()
            .find(|e| e.t >= from && e.t <= t1 && f(e))
            .map(|e| e.t)
    };
    let last = |from: u64, to: u64, f: &dyn Fn(&Event) -> bool| {
        ev.iter()
            .rev()
            .find(|e| e.t >= from && e.t <= to && f(e))
            .map(|e| e.t)
    };
    let mut m = [t0; 10];
    // One way: `x` sends, `y` waits. Returns the five milestones from `from`,
    // whether `y` was woken, with an IPI, and whether its wake-up went unseen.
    let way = |from: u64, x: &[i64], y: &[i64], last_exit: bool| {
        let is = |e: &Event, who: &[i64], k: Kind| who.contains(&e.tid) && e.kind == k;
        let enter = first(from, &|e| is(e, x, Kind::Enter)).unwrap_or(from);
        // Where `y` has its message: its call's return (the client's last in
        // the round trip: it may make several calls while it waits).
        let ret = if last_exit {
            last(enter, t1, &|e| is(e, y, Kind::Exit))
        } else {
            first(enter, &|e| is(e, y, Kind::Exit))
        };
        let end = ret.unwrap_or(t1);
        let within = |lo: u64, f: &dyn Fn(&Event) -> bool| first(lo, f).filter(|t| *t <= end);
        // The latest wake-up of `y` before it returned is the one that counts
        // (a socket's reader can wake the writer's side early, for room).
        let waking = ev.iter().rev().find(|e| {
            e.t >= from && e.t <= end && matches!(e.kind, Kind::Waking(p) if y.contains(&p))
        });
        let sent = within(enter, &|e| is(e, x, Kind::Exit)).unwrap_or(enter);
        match waking {
            Some(w) => {
                let up = within(
                    w.t,
                    &|e| matches!(e.kind, Kind::Wakeup(p) if y.contains(&p)),
                );
                let run = within(
                    up.unwrap_or(w.t),
                    &|e| matches!(e.kind, Kind::Switch { next, .. } if y.contains(&next)),
                );
                let unseen = up.is_none() && run.is_none();
                let seen = (up.is_some(), up.is_some() && run.is_none());
                if x.contains(&w.tid) && w.t >= enter {
                    // Woken from inside the send call.
                    let send = last(from, w.t, &|e| is(e, x, Kind::Enter)).unwrap_or(enter);
                    let up = up.unwrap_or(w.t);
                    let run = run.unwrap_or(up);
                    // The IPI goes between the waking and the wakee running
                    // (up to its return when those events went unseen).
                    let upto = if unseen { ret.unwrap_or(run) } else { up };
                    let ipi = ev
                        .iter()
                        .any(|e| e.t >= send && e.t <= upto && is(e, x, Kind::Ipi));
                    (
                        [send, w.t, up, run, ret.unwrap_or(run)],
                        true,
                        ipi,
                        unseen,
                        seen,
                    )
                } else {
                    // Woken before the message was sent: only the wake-up's
                    // tail after the send call is on the path.
                    let up = up.map_or(sent, |u| u.max(sent));
                    let run = run.map_or(up, |r| r.max(up));
                    (
                        [enter, sent, up, run, ret.unwrap_or(run)],
                        true,
                        false,
                        unseen,
                        seen,
                    )
                }
            }
            None => {
                // No wake-up asked for in the round trip: `y` was running, or
                // was woken before it (its wake-up and switch-in may still
                // come after the send call).
                let up = within(
                    sent,
                    &|e| matches!(e.kind, Kind::Wakeup(p) if y.contains(&p)),
                );
                let run = within(
                    up.unwrap_or(sent),
                    &|e| matches!(e.kind, Kind::Switch { next, .. } if y.contains(&next)),
                );
                // A switch in without a wake-up is a preempted side's return
                // to its CPU: run-queue time, but no wake-up.
                let woke = up.is_some();
                let up = up.unwrap_or(sent);
                let run = run.unwrap_or(up);
                let ret = ret.unwrap_or(run);
                let sent = sent.min(ret.max(enter));
                (
                    [enter, sent, up.min(ret), run.min(ret), ret],
                    woke,
                    false,
                    false,
                    (woke, false),
                )
            }
        }
    };
    let (fwd, w0, i0, u0, v0) = way(t0, a, b, false);
    m[..5].copy_from_slice(&fwd);
    let (back, w1, i1, u1, v1) = way(m[4], b, a, true);
    m[5..].copy_from_slice(&back);
    // Milestones only go forward, and never past the round trip's end.
    let mut prev = t0;
    for x in m.iter_mut() {
        *x = (*x).clamp(prev, t1.max(prev));
        prev = *x;
    }
    let mut at = t0;
    for (i, &x) in m.iter().enumerate() {
        s.parts[i] = x - at;
        at = x;
    }
    s.parts[10] = t1.saturating_sub(at);
    s.woken = [w0, w1];
    s.ipi = [i0, i1];
    s.unseen = [u0, u1];
    s.wakeup_seen = [w0 && v0.0, w1 && v1.0];
    s.no_switch_in = [w0 && v0.1, w1 && v1.1];
    let wakes = |e: &&Event, who: &[i64]| matches!(e.kind, Kind::Waking(p) if who.contains(&p));
    let inside: Vec<&Event> = ev.iter().filter(|e| e.t >= t0 && e.t <= t1).collect();
    s.wakings = inside.iter().filter(|e| wakes(e, a) || wakes(e, b)).count() as u32;
    // m[0]: the client's send call; m[5]: the server's reply call.
    s.early = inside
        .iter()
        .any(|e| wakes(e, a) && e.t >= m[0] && e.t < m[5] && m[5] > m[4]);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: i64 = 100;
    const B: i64 = 200;

    fn e(t: u64, tid: i64, kind: Kind) -> Event {
        Event { t, tid, kind }
    }

    /// A pipe round trip across CPUs as the kernel tells it: each part is the
    /// interval between its two events, and they sum to the round trip.
    #[test]
    fn a_blocking_round_trip_splits_at_each_event() {
        let ev = [
            e(1_000, A, Kind::Enter), // write
            e(1_500, A, Kind::Waking(B)),
            e(1_600, A, Kind::Ipi),
            e(1_800, A, Kind::Exit),
            e(1_900, A, Kind::Enter), // read, then A sleeps
            e(2_000, A, Kind::Switch { prev: A, next: 0 }),
            e(5_000, 0, Kind::Wakeup(B)),
            e(6_000, 0, Kind::Switch { prev: 0, next: B }),
            e(6_400, B, Kind::Exit),  // B's read returns
            e(6_900, B, Kind::Enter), // B's write
            e(7_200, B, Kind::Waking(A)),
            e(7_500, B, Kind::Exit),
            e(9_000, 0, Kind::Wakeup(A)),
            e(9_300, 0, Kind::Switch { prev: 0, next: A }),
            e(9_800, A, Kind::Exit), // A's read returns
        ];
        let s = split(&ev, 900, 10_000, &[A], &[B]);
        // Two wake-ups asked, each by the message itself: none early.
        assert_eq!(s.wakings, 2);
        assert!(!s.early);
        assert_eq!(
            s.parts,
            [100, 500, 3_500, 1_000, 400, 500, 300, 1_800, 300, 500, 200, 0]
        );
        assert_eq!(s.parts.iter().sum::<u64>(), 10_000 - 900);
        assert_eq!(s.woken, [true, true]);
        assert_eq!(s.ipi, [true, false]);
        assert_eq!(s.unseen, [false, false]);
        // The same without the server's CPU's wake-up and switch (a kernel that
        // gives perf no events from an idle CPU): that time is in its return.
        let blind: Vec<Event> = ev
            .iter()
            .copied()
            .filter(|x| !matches!(x.kind, Kind::Wakeup(B) | Kind::Switch { next: B, .. }))
            .collect();
        let s = split(&blind, 900, 10_000, &[A], &[B]);
        assert_eq!(s.unseen, [true, false]);
        assert_eq!(s.ipi, [true, false]);
        assert_eq!(&s.parts[2..5], &[0, 0, 4_900]);
        assert_eq!(s.parts.iter().sum::<u64>(), 9_100);
    }

    /// A unix stream socket's reader wakes the writer's side early (for room):
    /// the client is woken by the server's read, before the reply is sent, and
    /// only the wake-up's tail after the reply call is on the path.
    #[test]
    fn an_early_wake_up_counts_only_after_the_send() {
        let ev = [
            e(341, A, Kind::Enter),
            e(1_873, A, Kind::Exit),
            e(2_634, A, Kind::Enter),
            e(4_427, A, Kind::Switch { prev: A, next: 0 }),
            e(8_633, B, Kind::Waking(A)),
            e(16_816, B, Kind::Exit),
            e(19_209, B, Kind::Enter),
            e(20_922, B, Kind::Exit),
            e(21_703, B, Kind::Enter),
            e(23_115, 0, Kind::Wakeup(A)),
            e(23_746, B, Kind::Switch { prev: B, next: 0 }),
            e(24_937, 0, Kind::Switch { prev: 0, next: A }),
            e(27_992, A, Kind::Exit),
        ];
        let s = split(&ev, 0, 28_653, &[A], &[B]);
        assert_eq!(s.parts.iter().sum::<u64>(), 28_653);
        // There: the server was already awake; back: reply call 19,209..20,922,
        // then the rest of the wake-up, the run queue and the return.
        assert_eq!(&s.parts[5..11], &[2_393, 1_713, 2_193, 1_822, 3_055, 661]);
        assert_eq!(s.woken, [false, true]);
        // One wake-up asked, of the client, before the reply call: early.
        assert_eq!(s.wakings, 1);
        assert!(s.early);
    }

    /// No wake-up (the server was running, e.g. busy-polling): the wake and run
    /// queue parts are zero; a round trip with no event of either side is all
    /// user time.
    #[test]
    fn without_wake_ups_the_wake_parts_are_zero() {
        let ev = [
            e(1_000, A, Kind::Enter),
            e(1_300, A, Kind::Exit),
            e(1_400, B, Kind::Exit),
            e(1_600, B, Kind::Enter),
            e(1_700, B, Kind::Exit),
            e(1_750, A, Kind::Enter),
            e(1_900, A, Kind::Exit),
        ];
        let s = split(&ev, 900, 2_000, &[A], &[B]);
        assert_eq!(s.parts.iter().sum::<u64>(), 1_100);
        assert_eq!(s.woken, [false, false]);
        for i in [2, 3, 7, 8] {
            assert_eq!(s.parts[i], 0, "part {i}: {:?}", s.parts);
        }
        let quiet = split(&[e(1_000, 7, Kind::Enter)], 900, 2_000, &[A], &[B]);
        assert_eq!(quiet.parts[11], 1_100);
        assert_eq!(quiet.parts.iter().sum::<u64>(), 1_100);
    }
}
