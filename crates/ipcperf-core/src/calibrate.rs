//! The one calibration every workload uses (streams, round trips, sync loops): warm
//! up with uncounted runs of growing length until one lasts long enough to give a
//! rate, then size the kept series from that rate.

use crate::error::Result;

/// What to calibrate for.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// How long the warm-up run that settles it should last.
    pub warmup_ns: u64,
    /// The first run's length in units (blocks, round trips, cycles).
    pub first: u64,
    /// Never more units than this in one run.
    pub cap: u64,
    /// A counted series: this many units, whatever the rate.
    pub count: Option<u64>,
    /// Otherwise a series lasts this long.
    pub series_ns: u64,
}

/// What calibration learned: units per kept series and the time one should take.
#[derive(Debug, Clone, Copy)]
pub struct Calibration {
    pub units: u64,
    pub expected_ns: u64,
}

/// Run `run(n)` (n units; it returns their time in ns) with growing `n` until one
/// lasts `t.warmup_ns` or reaches the cap; then size the kept series. A paced
/// workload warms up on its schedule too: a series gets what the offered rate
/// fills in its time, or, saturated, what the mechanism did.
pub fn calibrate(t: Target, mut run: impl FnMut(u64) -> Result<u64>) -> Result<Calibration> {
    // A counted series (a later round of a case, or `--count`) warms up with at
    // most a quarter of its count: its length is known, so the warm-up only has
    // to bring caches and the peer up to speed, not to measure a rate.
    let cap = t.count.map_or(t.cap, |c| (c / 4).min(t.cap)).max(1);
    let mut n = t.first.clamp(1, cap);
    // The time a unit took in the last run long enough to go by (0.1 ms).
    let mut before: Option<f64> = None;
    loop {
        let el = run(n)?.max(1);
        if el >= t.warmup_ns || n >= cap {
            let mut per = el as f64 / n as f64;
            // A stall in the run that settles it (the machine busy elsewhere
            // for a while) would size a series far short of its time: when a
            // unit took more than twice what it took in the run before, that
            // run goes once more and the faster of the two counts (a counted
            // series keeps its count whatever the rate).
            if t.count.is_none() && before.is_some_and(|b| per > 2.0 * b) {
                per = per.min(run(n)?.max(1) as f64 / n as f64);
            }
            let units = match t.count {
                Some(c) => c,
                None => ((t.series_ns as f64 / per) as u64).clamp(1, t.cap),
            };
            return Ok(Calibration {
                units,
                expected_ns: (units as f64 * per) as u64,
            });
        }
        if el >= 100_000 {
            before = Some(el as f64 / n as f64);
        }
        let grow = (t.warmup_ns as f64 / el as f64 * 1.2).clamp(2.0, 64.0);
        n = ((n as f64 * grow) as u64).max(n + 1).min(cap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loop that takes 10 ns a unit: the warm-up grows until it lasts 1 ms, and a
    /// 10 ms series is sized to 1,000,000 units; a counted one keeps its count.
    #[test]
    fn sizes_the_series_from_the_warmup_rate() {
        let mut runs = Vec::new();
        let t = Target {
            warmup_ns: 1_000_000,
            first: 16,
            cap: 1 << 40,
            count: None,
            series_ns: 10_000_000,
        };
        let c = calibrate(t, |n| {
            runs.push(n);
            Ok(n * 10)
        })
        .unwrap();
        assert_eq!(c.units, 1_000_000);
        assert_eq!(c.expected_ns, 10_000_000);
        assert!(runs.windows(2).all(|w| w[1] > w[0]), "{runs:?}");
        assert!(*runs.last().unwrap() * 10 >= 1_000_000);
        let c = calibrate(
            Target {
                count: Some(5),
                ..t
            },
            |n| Ok(n * 10),
        )
        .unwrap();
        assert_eq!(c.units, 5);
    }

    /// 10 ns a unit, but the run that reaches the warm-up's length stalls (100 ns
    /// a unit): it goes once more, and the series is sized from the faster run.
    /// A stall that lasts through the second run sizes it from that run; a
    /// loop that is slow from the start is taken at its word, with no rerun.
    #[test]
    fn a_stalled_settling_run_goes_once_more() {
        let t = Target {
            warmup_ns: 20_000_000,
            first: 16,
            cap: 1 << 40,
            count: None,
            series_ns: 1_000_000_000,
        };
        for (stalls, per) in [(1, 10), (2, 100)] {
            let mut runs = Vec::new();
            let mut long = 0;
            let c = calibrate(t, |n| {
                runs.push(n);
                // The first `stalls` runs long enough to settle it stall.
                if n * 10 >= 20_000_000 {
                    long += 1;
                }
                let stalled = n * 10 >= 20_000_000 && long <= stalls;
                Ok(n * if stalled { 100 } else { 10 })
            })
            .unwrap();
            assert_eq!(c.units, 1_000_000_000 / per, "stalls {stalls}: {runs:?}");
            let last = runs.len() - 1;
            assert_eq!(runs[last], runs[last - 1], "the settling run went again");
        }
        // Every run but a repeated one is longer than the one before.
        let mut runs = Vec::new();
        let c = calibrate(t, |n| {
            runs.push(n);
            Ok(n * 100)
        })
        .unwrap();
        assert_eq!(c.units, 10_000_000);
        assert!(
            runs.windows(2).all(|w| w[1] > w[0]),
            "a run was repeated: {runs:?}"
        );
    }
}
