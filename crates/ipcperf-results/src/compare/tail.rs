//! A p99 row held to what the tail can say. The series' p99s give the t-test
//! its spread, but each rests on the few round trips beyond it: 1,000 round
//! trips a series leave 10. So each run's p99 (over all its round trips) also
//! gets a distribution-free interval from the ranks of its samples
//! ([`ipcperf_core::latency::quantile_interval`]), and a p99 change is called
//! only where the two runs' intervals are apart. Each interval is taken at
//! 83.4% so that two apart is a 5% test (two 95% intervals apart would be a
//! test at about 0.6%); where too few round trips lie beyond the p99 for its
//! interval to close at the top, that run's p99 cannot be called lower or
//! higher than anything, and the row could not tell.

use ipcperf_core::latency::quantile_interval;
use ipcperf_core::record::CaseRecord;

use super::{fmt_p, settle, Row, Verdict};

/// The normal quantile of an 83.4% two-sided interval: two such intervals
/// apart is a difference at the 5% level (Goldstein and Healy 1995).
const Z_APART: f64 = 1.386;

/// A run's p99 interval over all its round trips: (low, high; None where the
/// top is open) and the round trips beyond its p99.
fn interval(c: &CaseRecord) -> Option<(f64, Option<f64>, u64)> {
    let l = c.latency.as_ref()?;
    let h = l.latency_histogram.to_histogram()?;
    let (lo, hi) = quantile_interval(&h, 0.99, Z_APART)?;
    let beyond = l.beyond().map_or(0, |b| b.p99);
    Some((lo as f64, hi.map(|x| x as f64), beyond))
}

/// `row` (a p99 row of `a` against `b`) with the tails' intervals: its interval
/// widened to hold theirs, its smallest callable change at least what their
/// widths allow, and a change it called undone where they overlap.
pub(super) fn bound(mut row: Row, a: &CaseRecord, b: &CaseRecord, min_change: f64) -> Row {
    let (Some((alo, ahi, an)), Some((blo, bhi, bn))) = (interval(a), interval(b)) else {
        return row;
    };
    if alo <= 0.0 || blo <= 0.0 {
        return row;
    }
    // B/A's interval from the two: B's low over A's high, B's high over A's low.
    let lo = ahi.map_or(0.0, |ahi| blo / ahi);
    let hi = bhi.map_or(f64::INFINITY, |bhi| bhi / alo);
    // The smallest change the tails could show: B scaled by r is called slower
    // once r·A's low clears A's high, so r = high / low of the wider run.
    let width = |lo: f64, hi: Option<f64>| hi.map_or(f64::INFINITY, |h| h / lo - 1.0);
    let floor = width(alo, ahi).max(width(blo, bhi)).max(min_change);
    row.floor = Some(floor);
    row.detectable = Some(row.detectable.map_or(floor, |d| d.max(floor)));
    row.interval = row
        .interval
        .map(|(l, h)| (l.min(lo), h.max(hi)))
        .or(Some((lo, hi)));
    let counts = format!("the p99 rests on {an} round trips beyond it in A, {bn} in B");
    let apart = lo > 1.0 || hi < 1.0;
    if matches!(row.verdict, Verdict::Faster | Verdict::Slower) && !apart {
        row.verdict = Verdict::Unchanged;
        row.why = format!(
            "p = {} over the series, but the two runs' p99 intervals from their tails \
             overlap ({})",
            row.p.map_or("-".into(), fmt_p),
            counts
        );
        return settle(row, min_change);
    }
    row.why.push_str(&format!("; {counts}"));
    if matches!(row.verdict, Verdict::Unchanged | Verdict::CouldNotTell) {
        return settle(row, min_change);
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::compare;
    use ipcperf_core::latency::{new_histogram, summarize};
    use ipcperf_core::mode::Mode;
    use ipcperf_core::record::RunRecord;
    use ipcperf_core::workload::Workload;

    /// A round-trip case of 5 series of `trips` round trips each, a steep tail,
    /// the series 1% apart, every time scaled by `factor`.
    fn latency_case(trips: u64, factor: f64) -> CaseRecord {
        let mut c = crate::testdata::case("pipe", Mode::Processes, 64, "shared-l3", &[1.0]);
        c.workload = Workload::RoundTrip;
        let mut h = new_histogram();
        let (mut p50, mut p99) = (Vec::new(), Vec::new());
        for s in 0..5 {
            let mut hs = new_histogram();
            for i in 0..trips {
                let x = i as f64 / trips as f64;
                let v = 10_000.0 * (1.0 + 4.0 * x.powi(8)) * (1.0 + 0.01 * s as f64) * factor;
                h.record(v as u64).unwrap();
                hs.record(v as u64).unwrap();
            }
            p50.push(hs.value_at_quantile(0.5));
            p99.push(hs.value_at_quantile(0.99));
        }
        let mut l = summarize(&h, 1_000_000_000, 0, 20, p50, 0);
        l.series_p99_ns = p99;
        c.latency = Some(l);
        c
    }

    fn run_of(cases: Vec<CaseRecord>) -> RunRecord {
        let mut r = crate::testdata::run();
        r.cases = cases;
        r
    }

    /// A p99 row whose runs have few round trips beyond the p99 cannot call a
    /// change the series alone would call, and says so; with many beyond, the
    /// same change stands.
    #[test]
    fn a_p99_change_needs_round_trips_beyond_it() {
        let p99_row = |trips: u64, factor: f64| {
            let a = run_of(vec![latency_case(trips, 1.0)]);
            let b = run_of(vec![latency_case(trips, factor)]);
            compare(&a, &b, 0.05)
                .into_iter()
                .find(|r| r.case.ends_with("· p99"))
                .unwrap()
        };
        // 1,000 round trips a series: 50 beyond the pooled p99 of 5,000.
        let many = p99_row(1_000, 1.5);
        assert_eq!(many.verdict, Verdict::Slower, "{}", many.why);
        assert!(many.why.contains("round trips beyond it"), "{}", many.why);
        // 60 a series: 3 beyond the p99 of 300; the top of each interval is open.
        let few = p99_row(60, 1.5);
        assert_eq!(few.verdict, Verdict::CouldNotTell, "{}", few.why);
        assert!(
            few.why.contains("intervals from their tails overlap"),
            "{}",
            few.why
        );
        assert_eq!(few.detectable, Some(f64::INFINITY));
        // The median row of the same runs still calls it.
        let a = run_of(vec![latency_case(60, 1.0)]);
        let b = run_of(vec![latency_case(60, 1.5)]);
        assert_eq!(compare(&a, &b, 0.05)[0].verdict, Verdict::Slower);
    }
}
