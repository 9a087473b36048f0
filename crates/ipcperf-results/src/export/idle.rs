//! What the tables say of the idle state: the share of a cross-CPU figure
//! that is wake-ups from idle (from each case's series at polling idle), and the
//! idle a run was held at.

use ipcperf_core::record::CaseRecord;

use crate::units::fmt_size;

fn us(ns: u64) -> String {
    let v = ns as f64 / 1e3;
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The idle the cases were held at, where not the machine's own: "idle held at
/// poll …" (None when every case ran as-is).
pub fn held_note(cases: &[&CaseRecord]) -> Option<String> {
    let mut held: Vec<&str> = cases
        .iter()
        .filter_map(|c| c.options.get("idle").map(String::as_str))
        .collect();
    held.sort_unstable();
    held.dedup();
    let all = held.len() == 1 && cases.iter().all(|c| c.options.contains_key("idle"));
    (!held.is_empty()).then(|| {
        format!(
            "idle held at {} while the series ran ({}/dev/cpu_dma_latency; `poll`: no idle \
             state deeper than polling): the mechanism without wake-ups from a halted CPU",
            held.join(", "),
            if all { "every case; " } else { "some cases; " }
        )
    })
}

/// The round-trip table's column of each case's p50 at polling idle.
pub const POLL_P50: &str = "p50 idle=poll";

/// A case's [`POLL_P50`] cell: its series at polling idle's p50 in µs, `-`
/// where it took none (same CPU, refused, another idle held).
pub fn poll_p50_cell(c: &CaseRecord) -> String {
    c.idle_probe
        .as_ref()
        .and_then(|p| p.p50_ns)
        .map_or("-".into(), |ns| super::cells::fmt_us(ns as f64))
}

/// Round trips: what the [`POLL_P50`] column is, and what it says once, on
/// the first case whose p50 there is below every one of its timed series'
/// p50s (a share beyond the noise): "~47.7 of pipe 512 B shared-l3 0→1's
/// 54.5 µs". Each case's share was a list as long as the table (17 cases of
/// the default suite: 15 lines on an 80-column terminal).
pub fn round_trip_note(cases: &[&CaseRecord]) -> Option<String> {
    let mut first = None;
    let mut shares = 0;
    let mut level = Vec::new();
    for c in cases {
        let (Some(l), Some(p)) = (&c.latency, &c.idle_probe) else {
            continue;
        };
        let Some(poll) = p.p50_ns else { continue };
        let low = l.series_p50_ns.iter().copied().min().unwrap_or(l.p50_ns);
        // Named as its row is: "shm (futex)", not "shm" beside "shm (spin)".
        let name = format!(
            "{} {} {}",
            super::cells::mechanism_label(c),
            fmt_size(c.block_size),
            c.placement.shown()
        );
        if poll < low {
            shares += 1;
            first.get_or_insert(format!(
                "~{} µs of {name}'s {} µs p50",
                us(l.p50_ns.saturating_sub(poll)),
                us(l.p50_ns)
            ));
        } else {
            level.push(name);
        }
    }
    if shares == 0 && level.is_empty() {
        return None;
    }
    // Not headed by the column's name: a note so headed goes with its column
    // when a narrow terminal leaves the column out, and this one says what
    // the wake-ups cost.
    let mut s = format!(
        "idle: each case across CPUs took one more series with no idle state deeper than \
         polling (/dev/cpu_dma_latency held at 0), its p50 there in the column '{POLL_P50}'"
    );
    if let Some(first) = first {
        s.push_str(&format!(
            "; where it is below every timed series' p50 ({shares} of {} case{}), the rest of \
             the p50 is wake-ups from idle ({first}); --idle poll measures the mechanism \
             without them (a CPU then polls while idle: more power)",
            shares + level.len(),
            if shares + level.len() == 1 { "" } else { "s" }
        ));
    }
    if !level.is_empty() {
        s.push_str(&format!(
            "; no share beyond the series' spread: {}",
            level.join(", ")
        ));
    }
    Some(s)
}

/// Many pairs (`matrix`): the wake-ups' share over the pairs that took a series
/// at polling idle (one of each placement class), as medians: "wake-ups from idle are ~44.1 µs of the
/// pairs' 50.2 µs p50 (median over 2 pairs; 6.1 at polling idle)".
pub fn summary_note(cases: &[&CaseRecord]) -> Option<String> {
    let mut p50 = Vec::new();
    let mut poll = Vec::new();
    for c in cases {
        if let (Some(l), Some(p)) = (&c.latency, c.idle_probe.as_ref().and_then(|p| p.p50_ns)) {
            p50.push(l.p50_ns);
            poll.push(p);
        }
    }
    if p50.is_empty() {
        return None;
    }
    let median = |v: &mut Vec<u64>| {
        v.sort_unstable();
        v[v.len() / 2]
    };
    let n = p50.len();
    let (a, b) = (median(&mut p50), median(&mut poll));
    Some(format!(
        "idle: wake-ups from idle are ~{} µs of these pairs' {} µs p50 (medians over {n} \
         pair{}, one of each class, that took one series with no idle state deeper than \
         polling: {} µs there); --idle poll measures without them",
        us(a.saturating_sub(b)),
        us(a),
        if n == 1 { "" } else { "s" },
        us(b)
    ))
}

/// A stream table's column (after the placement) of each block size's MB/s
/// at polling idle.
pub const POLL_MBPS: &str = "MB/s idle=poll";

/// A stream case's bytes a second in its series at polling idle.
pub fn poll_mbps(c: &CaseRecord) -> Option<f64> {
    c.idle_probe.as_ref().and_then(|p| p.bytes_per_sec)
}

/// Streams: what the [`POLL_MBPS`] columns are, and the first block size
/// whose MB/s there is outside its timed series' range, with the ratio:
/// "1 MiB shared-l3 0→1: 553 → 2002 MB/s, 3.62×". Each block size's figures
/// were a list under every mechanism's table (four sizes: 8 lines of 80
/// columns, each figure beside itself in the table). Two notes: what the
/// column is, the same under every table (so said once), then the table's own.
pub fn stream_note(cases: &[&CaseRecord]) -> Vec<String> {
    // The example: the block size polling idle moved furthest, either way.
    let mut first: Option<(f64, String)> = None;
    let (mut beyond, mut all) = (0, 0);
    for c in cases {
        let (Some(m), Some(poll)) = (c.median_bytes_per_sec, poll_mbps(c)) else {
            continue;
        };
        all += 1;
        let high = c.max_bytes_per_sec.unwrap_or(m);
        let low = c.min_bytes_per_sec.unwrap_or(m);
        // Said only beyond the timed series' range, either way.
        if poll > high || poll < low {
            beyond += 1;
            let ratio = poll / m.max(1.0);
            if first.as_ref().is_none_or(|f| ratio.ln().abs() > f.0) {
                first = Some((
                    ratio.ln().abs(),
                    format!(
                        "{} {}: {:.0} → {:.0} MB/s, {ratio:.2}×",
                        fmt_size(c.block_size),
                        c.placement.shown(),
                        m / 1e6,
                        poll / 1e6,
                    ),
                ));
            }
        }
    }
    if all == 0 {
        return Vec::new();
    }
    let mut own = format!("idle=poll: outside the timed series' range in {beyond} of {all}");
    if let Some((_, first)) = first {
        own.push_str(&format!(" (the furthest: {first})"));
    }
    vec![
        format!(
            "idle: each block size across CPUs took one more series with no idle state deeper \
             than polling (/dev/cpu_dma_latency held at 0), its MB/s there in the column \
             '… {POLL_MBPS}'; --idle poll measures without wake-ups from idle"
        ),
        own,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipcperf_core::mode::Mode;

    /// A share is said only where the polling-idle p50 is below every timed
    /// series' p50; a streams' change only above the series' best.
    #[test]
    fn a_share_is_said_only_beyond_the_spread() {
        let mut case = crate::testdata::paced_case("pipe", 1000, 1000.0, 45_000, 60_000, 90_000);
        let c = &mut case;
        let l = c.latency.as_mut().unwrap();
        l.p50_ns = 45_000;
        l.series_p50_ns = vec![44_000, 45_000, 46_000];
        c.idle_probe = Some(ipcperf_core::record::IdleProbe {
            p50_ns: Some(5_000),
            p99_ns: None,
            bytes_per_sec: None,
            count: 100,
        });
        let n = round_trip_note(&[&*c]).unwrap();
        assert!(
            n.contains("~40.0 µs of pipe 64 B shared-l3 0→1's 45.0 µs p50"),
            "{n}"
        );
        assert_eq!(poll_p50_cell(c), "5.00");
        c.idle_probe.as_mut().unwrap().p50_ns = Some(44_500);
        let n = round_trip_note(&[&*c]).unwrap();
        assert!(
            n.contains("no share beyond") && !n.contains("of 45.0"),
            "{n}"
        );
        // Each case named as its row is: the wait beside the mechanism.
        c.wait = "futex".into();
        let n = round_trip_note(&[&*c]).unwrap();
        assert!(
            n.contains("beyond the series' spread: pipe (futex) 64 B"),
            "{n}"
        );
        c.idle_probe = None;
        assert_eq!(round_trip_note(&[&*c]), None);
        // A stream: the ratio beyond the timed range either way, none inside it.
        let mut s = crate::testdata::case("pipe", Mode::Processes, 65536, "shared-l3", &[1e9]);
        s.median_bytes_per_sec = Some(1.0e9);
        s.min_bytes_per_sec = Some(0.9e9);
        s.max_bytes_per_sec = Some(1.1e9);
        for (poll, want) in [
            (
                2.5e9,
                "1 of 1 (the furthest: 64 KiB shared-l3 0→1: 1000 → 2500 MB/s, 2.50×)",
            ),
            (0.5e9, ": 64 KiB shared-l3 0→1: 1000 → 500 MB/s, 0.50×)"),
            (1.05e9, "range in 0 of 1"),
        ] {
            s.idle_probe = Some(ipcperf_core::record::IdleProbe::stream(
                poll,
                1_000_000_000,
                1,
            ));
            let n = stream_note(&[&s]);
            assert_eq!(n.len(), 2, "{n:?}");
            // What the column is, the same under every table, said apart.
            assert!(!n[0].contains("range"), "{n:?}");
            assert!(n[1].contains(want), "{poll}: {n:?}");
        }
    }
}
