//! Latency statistics: raw round-trip samples in, an HDR histogram and a summary
//! out. Pure functions, unit-tested on fixed samples.
//!
//! The histogram covers 1 ns to 10 s with 3 significant digits. It is kept in the
//! record as its non-empty buckets (`[value, count]` pairs), so any percentile can
//! be computed again later without re-running (see [`HistogramRecord::to_histogram`]).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

pub const LOWEST_NS: u64 = 1;
pub const HIGHEST_NS: u64 = 10_000_000_000;
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// An empty histogram with ipcperf's bounds.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
        .expect("constant bounds are valid")
}

/// Significant digits of a one-way histogram: 2 (each figure within 1%), so the
/// peer's histogram of a series fits in one control message (a few thousand
/// buckets at most, where 3 digits could need ten times more).
pub const ONE_WAY_DIGITS: u8 = 2;

/// An empty one-way histogram (see [`ONE_WAY_DIGITS`]).
pub fn new_one_way_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(LOWEST_NS, HIGHEST_NS, ONE_WAY_DIGITS)
        .expect("constant bounds are valid")
}

/// One-way latency (`--one-way`): from the send time the sender wrote into each
/// message to when the receiver had all of it, read on one host's monotonic
/// clock; the receiver's clock cost taken off. Percentiles within 1%.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OneWayLatency {
    /// `samples`, `mean_ns`, `min_ns`, `p50_ns` … `p9999_ns`, `max_ns`.
    #[serde(flatten)]
    pub p: Percentiles,
    pub clock_cost_ns: u64,
    pub histogram: HistogramRecord,
}

impl OneWayLatency {
    pub fn from_histogram(h: &Histogram<u64>, clock_cost_ns: u64) -> OneWayLatency {
        OneWayLatency {
            p: percentiles(h),
            clock_cost_ns,
            histogram: HistogramRecord::from_histogram(h),
        }
    }
}

/// One-way delays gathered over series (and pairs): each receiver's histogram
/// added in; the summary at the end.
#[derive(Debug, Default)]
pub struct OneWayAcc {
    h: Option<Histogram<u64>>,
    clock_cost_ns: u64,
}

impl OneWayAcc {
    /// Add one receiver's series (its histogram and clock cost).
    pub fn add(&mut self, part: &(HistogramRecord, u64)) {
        let Some(p) = part.0.to_histogram() else {
            return;
        };
        let h = self.h.get_or_insert_with(new_one_way_histogram);
        let _ = h.add(&p);
        self.clock_cost_ns = self.clock_cost_ns.max(part.1);
    }

    /// The summary; None when nothing was measured.
    pub fn finish(&self) -> Option<OneWayLatency> {
        let h = self.h.as_ref().filter(|h| !h.is_empty())?;
        Some(OneWayLatency::from_histogram(h, self.clock_cost_ns))
    }
}

/// Record raw samples with the tare (the clock's own cost) taken off each.
/// A sample above 10 s is recorded as 10 s and counted in the return value (it
/// cannot happen with bounded waits of 5 s, but it would not be hidden).
pub fn record_samples(h: &mut Histogram<u64>, samples: &[u64], tare_ns: u64) -> u64 {
    let mut over = 0;
    for &s in samples {
        let v = s.saturating_sub(tare_ns);
        if v > HIGHEST_NS {
            over += 1;
        }
        h.saturating_record(v);
    }
    over
}

/// A histogram as plain data: its bounds and every non-empty bucket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistogramRecord {
    pub lowest_ns: u64,
    pub highest_ns: u64,
    pub significant_digits: u8,
    /// `[value_ns, count]` for every non-empty bucket, lowest first. The value is the
    /// highest value equivalent to the bucket (what percentiles report).
    pub counts: Vec<[u64; 2]>,
}

impl HistogramRecord {
    pub fn from_histogram(h: &Histogram<u64>) -> HistogramRecord {
        HistogramRecord {
            lowest_ns: h.low(),
            highest_ns: h.high(),
            significant_digits: h.sigfig(),
            counts: h
                .iter_recorded()
                .map(|v| [v.value_iterated_to(), v.count_at_value()])
                .collect(),
        }
    }

    /// The histogram again, for percentiles the summary does not carry.
    pub fn to_histogram(&self) -> Option<Histogram<u64>> {
        let mut h =
            Histogram::new_with_bounds(self.lowest_ns, self.highest_ns, self.significant_digits)
                .ok()?;
        for &[v, n] in &self.counts {
            h.record_n(v, n).ok()?;
        }
        Some(h)
    }
}

/// What a latency case reports. All times are round trips (RTT) with the clock's
/// cost taken off; one-way figures are never stored, only shown (labelled) by views.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Round trips timed (warm-up excluded).
    pub round_trips: u64,
    /// Round trips whose message or answer never arrived (datagram mechanisms).
    pub round_trips_lost: u64,
    /// Round trips completed per second of wall time over the timed series.
    pub round_trips_per_sec: f64,
    /// The median cost of reading the clock once, measured at start and subtracted
    /// from every sample (the tare).
    pub clock_cost_ns: u64,
    pub mean_ns: f64,
    pub min_ns: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub p9999_ns: u64,
    pub max_ns: u64,
    /// The median of each series on its own (their spread is the run's noise).
    pub series_p50_ns: Vec<u64>,
    /// The 99th percentile of each series on its own (`compare` tests p99 on it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series_p99_ns: Vec<u64>,
    /// Samples above the histogram's 10 s ceiling (recorded as 10 s).
    pub over_range: u64,
    pub latency_histogram: HistogramRecord,
    /// The round trips beyond each percentile (None in records saved before it
    /// was kept: [`LatencySummary::beyond`] counts them from the histogram).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beyond: Option<Beyond>,
    /// Measured one-way latency (`--one-way`), beside the round trips.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_way: Option<OneWayLatency>,
}

/// The percentiles every latency figure of ipcperf reports (round trips and sync
/// cycles alike), all from one HDR histogram: the one percentile computation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub samples: u64,
    pub mean_ns: f64,
    pub min_ns: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub p9999_ns: u64,
    pub max_ns: u64,
    /// The samples beyond each percentile (None in records saved before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beyond: Option<Beyond>,
}

/// How many samples lie above each percentile's value: what each tail figure
/// rests on. A p99.99 of 18,000 round trips has about 2 beyond it, and is as
/// good as those 2 round trips; views mark a figure with fewer than
/// [`FEW_BEYOND`] beyond it.
/// In JSON each count is named for its percentile and what it counts
/// (`p99_samples`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Beyond {
    #[serde(rename = "p50_samples")]
    pub p50: u64,
    #[serde(rename = "p90_samples")]
    pub p90: u64,
    #[serde(rename = "p99_samples")]
    pub p99: u64,
    #[serde(rename = "p999_samples")]
    pub p999: u64,
    #[serde(rename = "p9999_samples")]
    pub p9999: u64,
}

/// Fewer samples than this beyond a percentile: the figure is marked as resting
/// on a handful of samples.
pub const FEW_BEYOND: u64 = 10;

impl Beyond {
    /// The count beyond the percentile named as the tables name it (`p99.9`).
    pub fn at(&self, name: &str) -> Option<u64> {
        Some(match name {
            "p50" => self.p50,
            "p90" => self.p90,
            "p99" => self.p99,
            "p99.9" => self.p999,
            "p99.99" => self.p9999,
            _ => return None,
        })
    }
}

/// The samples of `h` above `value` (values as percentiles report them: the
/// highest equivalent of their bucket, so the count is exact per bucket).
pub fn count_above(h: &Histogram<u64>, value: u64) -> u64 {
    h.iter_recorded()
        .filter(|v| v.value_iterated_to() > value)
        .map(|v| v.count_at_value())
        .sum()
}

/// The samples beyond each of the percentiles `p` of `h`.
pub fn beyond(h: &Histogram<u64>, p: &Percentiles) -> Beyond {
    Beyond {
        p50: count_above(h, p.p50_ns),
        p90: count_above(h, p.p90_ns),
        p99: count_above(h, p.p99_ns),
        p999: count_above(h, p.p999_ns),
        p9999: count_above(h, p.p9999_ns),
    }
}

/// The percentiles of a histogram (0 everywhere for an empty one).
pub fn percentiles(h: &Histogram<u64>) -> Percentiles {
    let q = |p: f64| h.value_at_quantile(p);
    let mut p = Percentiles {
        samples: h.len(),
        mean_ns: h.mean(),
        min_ns: h.min(),
        p50_ns: q(0.50),
        p90_ns: q(0.90),
        p99_ns: q(0.99),
        p999_ns: q(0.999),
        p9999_ns: q(0.9999),
        max_ns: h.max(),
        beyond: None,
    };
    p.beyond = Some(beyond(h, &p));
    p
}

/// A distribution-free interval for quantile `q` of the samples in `h`: the
/// values at the ranks `n·q ∓ z·√(n·q·(1−q))` (the normal approximation to the
/// binomial count of samples below the true quantile). Where few samples lie
/// beyond the quantile the upper rank runs past the last sample and the interval
/// is open-ended (None for its top): the tail cannot say how high it goes.
pub fn quantile_interval(h: &Histogram<u64>, q: f64, z: f64) -> Option<(u64, Option<u64>)> {
    let n = h.len();
    if n == 0 {
        return None;
    }
    let nf = n as f64;
    let half = z * (nf * q * (1.0 - q)).sqrt();
    let lo_rank = (nf * q - half).floor().max(1.0) as u64;
    let hi_rank = (nf * q + half).ceil() as u64 + 1;
    let at_rank = |r: u64| h.value_at_quantile((r as f64 - 0.5) / nf);
    let top = (hi_rank <= n).then(|| at_rank(hi_rank));
    Some((at_rank(lo_rank.min(n)), top))
}

/// Summarize a histogram. `elapsed_ns` is the wall time of the timed series.
pub fn summarize(
    h: &Histogram<u64>,
    elapsed_ns: u64,
    lost: u64,
    clock_cost_ns: u64,
    series_p50_ns: Vec<u64>,
    over_range: u64,
) -> LatencySummary {
    let p = percentiles(h);
    LatencySummary {
        round_trips: p.samples,
        round_trips_lost: lost,
        round_trips_per_sec: p.samples as f64 * 1e9 / elapsed_ns.max(1) as f64,
        clock_cost_ns,
        mean_ns: p.mean_ns,
        min_ns: p.min_ns,
        p50_ns: p.p50_ns,
        p90_ns: p.p90_ns,
        p99_ns: p.p99_ns,
        p999_ns: p.p999_ns,
        p9999_ns: p.p9999_ns,
        max_ns: p.max_ns,
        series_p50_ns,
        series_p99_ns: Vec::new(),
        over_range,
        latency_histogram: HistogramRecord::from_histogram(h),
        beyond: p.beyond,
        one_way: None,
    }
}

impl LatencySummary {
    /// The round trips beyond each percentile: as kept, else counted from the
    /// histogram (runs saved before the counts were kept).
    pub fn beyond(&self) -> Option<Beyond> {
        self.beyond.or_else(|| {
            let h = self.latency_histogram.to_histogram()?;
            let p = Percentiles {
                samples: h.len(),
                mean_ns: self.mean_ns,
                min_ns: self.min_ns,
                p50_ns: self.p50_ns,
                p90_ns: self.p90_ns,
                p99_ns: self.p99_ns,
                p999_ns: self.p999_ns,
                p9999_ns: self.p9999_ns,
                max_ns: self.max_ns,
                beyond: None,
            };
            (!h.is_empty()).then(|| beyond(&h, &p))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1..=1000 µs, one sample each, plus a 1 s outlier: known percentiles.
    fn fixed() -> Vec<u64> {
        let mut v: Vec<u64> = (1..=1000u64).map(|i| i * 1000 + 40).collect();
        v.push(1_000_000_040);
        v
    }

    #[test]
    fn summary_of_fixed_samples() {
        let mut h = new_histogram();
        let over = record_samples(&mut h, &fixed(), 40);
        assert_eq!(over, 0);
        let s = summarize(&h, 2_000_000_000, 3, 40, vec![500_000], over);
        assert_eq!(s.round_trips, 1001);
        assert_eq!(s.round_trips_lost, 3);
        assert!((s.round_trips_per_sec - 500.5).abs() < 1e-9);
        // 3 significant digits: each figure within 0.1% of the exact one.
        let near = |got: u64, want: u64| (got as f64 - want as f64).abs() <= want as f64 * 1e-3;
        assert!(near(s.min_ns, 1_000), "min {}", s.min_ns);
        assert!(near(s.p50_ns, 501_000), "p50 {}", s.p50_ns);
        assert!(near(s.p90_ns, 901_000), "p90 {}", s.p90_ns);
        assert!(near(s.p99_ns, 991_000), "p99 {}", s.p99_ns);
        assert!(near(s.p999_ns, 1_000_000), "p99.9 {}", s.p999_ns);
        assert!(near(s.p9999_ns, 1_000_000_000), "p99.99 {}", s.p9999_ns);
        assert!(near(s.max_ns, 1_000_000_000), "max {}", s.max_ns);
        let exact_mean = (500_500_000.0 + 1e9) / 1001.0;
        assert!((s.mean_ns - exact_mean).abs() / exact_mean < 1e-3);
    }

    /// Each percentile comes with the samples beyond it, kept in the summary and
    /// counted again from the histogram for a record saved without them.
    #[test]
    fn samples_beyond_each_percentile_are_counted() {
        let mut h = new_histogram();
        record_samples(&mut h, &fixed(), 40);
        let mut s = summarize(&h, 1, 0, 40, vec![], 0);
        let want = Beyond {
            p50: 500,
            p90: 100,
            p99: 10,
            p999: 1,
            p9999: 0,
        };
        assert_eq!(s.beyond, Some(want));
        s.beyond = None;
        assert_eq!(s.beyond(), Some(want));
        assert_eq!(want.at("p99.9"), Some(1));
        assert_eq!(want.at("max"), None);
        // Kept in JSON, and a record without them still reads.
        let mut v = serde_json::to_value(summarize(&h, 1, 0, 40, vec![], 0)).unwrap();
        assert_eq!(v["beyond"]["p99_samples"], 10);
        v.as_object_mut().unwrap().remove("beyond");
        let back: LatencySummary = serde_json::from_value(v).unwrap();
        assert_eq!(back.beyond, None);
        assert_eq!(back.beyond(), Some(want));
    }

    /// The quantile interval brackets the median by the binomial spread of its
    /// rank, and is open at the top where too few samples lie beyond.
    #[test]
    fn quantile_interval_widens_and_opens_in_the_tail() {
        let mut h = new_histogram();
        let v: Vec<u64> = (1..=1000u64).map(|i| i * 1000).collect();
        record_samples(&mut h, &v, 0);
        let (lo, hi) = quantile_interval(&h, 0.5, 1.96).unwrap();
        let near = |got: u64, want: u64| (got as f64 - want as f64).abs() <= want as f64 * 2e-3;
        assert!(near(lo, 469_000), "{lo}");
        assert!(near(hi.unwrap(), 533_000), "{hi:?}");
        // p99: 10 beyond, ranks 984..=997.
        let (lo, hi) = quantile_interval(&h, 0.99, 1.96).unwrap();
        assert!(
            near(lo, 983_000) && near(hi.unwrap(), 998_000),
            "{lo} {hi:?}"
        );
        // p99.9: one sample beyond; the top is unknown.
        assert_eq!(quantile_interval(&h, 0.999, 1.96).unwrap().1, None);
        assert_eq!(quantile_interval(&new_histogram(), 0.5, 1.96), None);
    }

    #[test]
    fn tare_is_taken_off_and_never_goes_below_zero() {
        let mut h = new_histogram();
        record_samples(&mut h, &[30, 100, 1_000], 50);
        assert_eq!(h.min(), 0);
        assert_eq!(h.max(), 950);
        assert_eq!(h.len(), 3);
    }

    #[test]
    fn over_range_is_counted() {
        let mut h = new_histogram();
        assert_eq!(record_samples(&mut h, &[5, 20_000_000_000], 0), 1);
        assert_eq!(h.len(), 2);
    }

    #[test]
    fn histogram_record_round_trips() {
        let mut h = new_histogram();
        record_samples(&mut h, &fixed(), 0);
        let r = HistogramRecord::from_histogram(&h);
        let json = serde_json::to_string(&r).unwrap();
        let back: HistogramRecord = serde_json::from_str(&json).unwrap();
        let h2 = back.to_histogram().unwrap();
        assert_eq!(h2.len(), h.len());
        for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(h2.value_at_quantile(q), h.value_at_quantile(q), "q={q}");
        }
    }
}
