//! A pattern described without a trace: message sizes and the gaps between
//! messages drawn from named distributions, the syntax `pattern` prints for a
//! trace it fitted and the one a replay will take.
//!
//! Sizes: `fixed:512`, `uniform:64,4k` (every size between, alike),
//! `lognormal:300,2` (median 300 B, geometric standard deviation 2: two thirds
//! of the sizes between 150 B and 600 B). Gaps: `fixed:20k` (one message every
//! 1/20,000 s), `poisson:20k` (20,000 a second on average, arriving at random),
//! `bursts:8,100k,60` (60 bursts a second, arriving at random, each of 8
//! messages at 100,000 a second). Sizes take units (4k, 1M: binary); rates k and
//! M (decimal).

use std::fmt;

/// How big each message is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sizes {
    Fixed(u64),
    Uniform(u64, u64),
    LogNormal { median: f64, spread: f64 },
}

/// When each message goes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gaps {
    /// Messages a second, evenly spaced.
    Fixed(f64),
    /// Messages a second on average, exponential gaps.
    Poisson(f64),
    /// `count` messages at `inner` a second, bursts at `rate` a second (Poisson).
    Bursts { count: u64, inner: f64, rate: f64 },
}

/// The largest message a pattern may name or draw: what a replay carries
/// (64 MiB), so that every pattern described can be replayed.
const MAX_SIZE: u64 = ipcperf_core::workload::replay::MAX_MESSAGE;

fn size(s: &str) -> Result<u64, String> {
    let v = crate::units::parse_size(s)? as u64;
    if v > MAX_SIZE {
        return Err(format!(
            "'{s}': a message of at most {} MiB (what a replay carries)",
            MAX_SIZE >> 20
        ));
    }
    Ok(v)
}

/// A rate: messages a second, 0.001 to 10M (k and M decimal).
/// A rate a second (`20k`, `500`), or the gap between messages as a duration
/// (`1ms`: 1,000 a second; `50us`: 20,000).
fn rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    if ["ns", "us", "µs", "ms", "s"].iter().any(|u| t.ends_with(u)) {
        let gap = crate::units::parse_duration(t)?.as_nanos();
        if gap == 0 {
            return Err(format!("'{s}': a gap longer than 0"));
        }
        let r = 1e9 / gap as f64;
        if !(0.001..=1e7).contains(&r) {
            return Err(format!("'{s}': a gap from 100ns to 1000s"));
        }
        return Ok(r);
    }
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1e3),
        Some((i, 'M')) => (&t[..i], 1e6),
        _ => (t, 1.0),
    };
    let r = num
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .map(|x| x * mult)
        .ok_or_else(|| format!("'{s}' is neither a rate nor a gap; try 20k, 500 or 1ms"))?;
    if !(0.001..=1e7).contains(&r) {
        return Err(format!("'{s}': a rate from 0.001 to 10M a second"));
    }
    Ok(r)
}

fn fmt_rate(r: f64) -> String {
    if r >= 1.0 {
        crate::units::fmt_rate(r)
    } else {
        format!("{r:.3}")
    }
}

/// `NAME:A[,B[,C]]` split, with the number of arguments checked.
fn split<'a>(s: &'a str, what: &str) -> Result<(&'a str, Vec<&'a str>), String> {
    let (name, args) = s
        .trim()
        .split_once(':')
        .ok_or_else(|| format!("'{s}': write {what} as NAME:ARGS (e.g. {})", example(what)))?;
    Ok((name, args.split(',').map(str::trim).collect()))
}

fn example(what: &str) -> &'static str {
    if what == "sizes" {
        "fixed:512, uniform:64,4k, lognormal:300,2"
    } else {
        "fixed:20k, poisson:20k, bursts:8,100k,60"
    }
}

fn want(args: &[&str], n: usize, s: &str, form: &str) -> Result<(), String> {
    if args.len() == n {
        Ok(())
    } else {
        Err(format!("'{s}': {form}"))
    }
}

impl std::str::FromStr for Sizes {
    type Err = String;
    fn from_str(s: &str) -> Result<Sizes, String> {
        let (name, a) = split(s, "sizes")?;
        match name {
            "fixed" => {
                want(&a, 1, s, "fixed:SIZE")?;
                Ok(Sizes::Fixed(size(a[0])?))
            }
            "uniform" => {
                want(&a, 2, s, "uniform:MIN,MAX")?;
                let (lo, hi) = (size(a[0])?, size(a[1])?);
                if lo > hi {
                    return Err(format!("'{s}': the smallest size first"));
                }
                Ok(Sizes::Uniform(lo, hi))
            }
            "lognormal" => {
                want(
                    &a,
                    2,
                    s,
                    "lognormal:MEDIAN,SPREAD (spread: 1 or more, e.g. 2)",
                )?;
                let median = size(a[0])? as f64;
                let spread: f64 = a[1]
                    .parse()
                    .ok()
                    .filter(|x: &f64| x.is_finite() && (1.0..=100.0).contains(x))
                    .ok_or_else(|| {
                        format!("'{s}': the spread is a factor from 1 to 100 (e.g. 2)")
                    })?;
                Ok(Sizes::LogNormal { median, spread })
            }
            other => Err(format!(
                "'{s}': no size distribution '{other}' (known: fixed, uniform, lognormal)"
            )),
        }
    }
}

impl std::str::FromStr for Gaps {
    type Err = String;
    fn from_str(s: &str) -> Result<Gaps, String> {
        let (name, a) = split(s, "gaps")?;
        match name {
            "fixed" => {
                want(&a, 1, s, "fixed:RATE")?;
                Ok(Gaps::Fixed(rate(a[0])?))
            }
            "poisson" => {
                want(&a, 1, s, "poisson:RATE")?;
                Ok(Gaps::Poisson(rate(a[0])?))
            }
            "bursts" => {
                want(&a, 3, s, "bursts:COUNT,RATE_IN_A_BURST,BURSTS_A_SECOND")?;
                let count: u64 = a[0]
                    .parse()
                    .ok()
                    .filter(|&n| (1..=1_000_000).contains(&n))
                    .ok_or_else(|| format!("'{s}': a burst of 1 to 1,000,000 messages"))?;
                Ok(Gaps::Bursts {
                    count,
                    inner: rate(a[1])?,
                    rate: rate(a[2])?,
                })
            }
            other => Err(format!(
                "'{s}': no gap distribution '{other}' (known: fixed, poisson, bursts)"
            )),
        }
    }
}

impl fmt::Display for Sizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sizes::Fixed(n) => write!(f, "fixed:{n}"),
            Sizes::Uniform(a, b) => write!(f, "uniform:{a},{b}"),
            Sizes::LogNormal { median, spread } => write!(f, "lognormal:{median:.0},{spread:.2}"),
        }
    }
}

impl fmt::Display for Gaps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Gaps::Fixed(r) => write!(f, "fixed:{}", fmt_rate(*r)),
            Gaps::Poisson(r) => write!(f, "poisson:{}", fmt_rate(*r)),
            Gaps::Bursts { count, inner, rate } => {
                write!(f, "bursts:{count},{},{}", fmt_rate(*inner), fmt_rate(*rate))
            }
        }
    }
}

/// A seeded source of sizes and gaps: the same seed, the same pattern.
pub struct Draw {
    state: u64,
    /// Messages left in the current burst.
    left: u64,
}

impl Draw {
    pub fn new(seed: u64) -> Draw {
        Draw {
            state: seed | 1,
            left: 0,
        }
    }

    fn next(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    /// Uniform in (0, 1).
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit(), self.unit());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    fn exponential(&mut self, rate: f64) -> f64 {
        -self.unit().ln() / rate
    }

    /// The next message's size, 1 byte to 64 MiB (a larger draw is 64 MiB).
    pub fn size(&mut self, s: &Sizes) -> u64 {
        let v = match *s {
            Sizes::Fixed(n) => n,
            Sizes::Uniform(a, b) => a + self.next() % (b - a + 1),
            Sizes::LogNormal { median, spread } => {
                (median * (spread.ln() * self.normal()).exp()).round() as u64
            }
        };
        v.clamp(1, MAX_SIZE)
    }

    /// Nanoseconds from the last message to the next.
    pub fn gap_ns(&mut self, g: &Gaps) -> u64 {
        let secs = match *g {
            Gaps::Fixed(r) => 1.0 / r,
            Gaps::Poisson(r) => self.exponential(r),
            Gaps::Bursts { count, inner, rate } => {
                if self.left == 0 {
                    self.left = count - 1;
                    self.exponential(rate)
                } else {
                    self.left -= 1;
                    1.0 / inner
                }
            }
        };
        (secs * 1e9).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_printed_reads_back() {
        for s in ["fixed:512", "uniform:64,4096", "lognormal:300,2.00"] {
            assert_eq!(s.parse::<Sizes>().unwrap().to_string(), s);
        }
        for s in [
            "fixed:20.0k",
            "poisson:7",
            "poisson:0.250",
            "bursts:8,100.0k,60",
        ] {
            assert_eq!(s.parse::<Gaps>().unwrap().to_string(), s);
        }
        assert_eq!(
            "uniform:64,4k".parse::<Sizes>().unwrap(),
            Sizes::Uniform(64, 4096)
        );
        assert_eq!(
            "poisson:20k".parse::<Gaps>().unwrap(),
            Gaps::Poisson(20_000.0)
        );
        // A gap may be given as the time between messages instead of a rate.
        assert_eq!(
            "poisson:50us".parse::<Gaps>(),
            "poisson:20k".parse::<Gaps>()
        );
        assert_eq!("fixed:1ms".parse::<Gaps>().unwrap(), Gaps::Fixed(1000.0));
        assert_eq!(
            "bursts:8,10us,2s".parse::<Gaps>().unwrap(),
            Gaps::Bursts {
                count: 8,
                inner: 100_000.0,
                rate: 0.5
            }
        );
    }

    #[test]
    fn bad_patterns_say_what_is_wanted() {
        for (s, want) in [
            ("512", "NAME:ARGS"),
            ("normal:3,4", "known: fixed, uniform, lognormal"),
            ("uniform:4k,64", "smallest size first"),
            ("lognormal:300", "MEDIAN,SPREAD"),
            ("lognormal:300,0.5", "spread"),
            ("fixed:0", "at least 1 byte"),
            ("fixed:2G", "64 MiB"),
            ("uniform:1,65M", "64 MiB"),
        ] {
            let e = s.parse::<Sizes>().unwrap_err();
            assert!(e.contains(want), "{s}: {e}");
        }
        for (s, want) in [
            ("poisson", "NAME:ARGS"),
            ("poisson:fast", "neither a rate nor a gap"),
            ("fixed:0s", "more than zero"),
            ("fixed:10ns", "from 100ns"),
            ("fixed:1ks", "unknown unit"),
            ("poisson:20M", "10M"),
            ("bursts:0,1k,10", "burst of 1"),
            ("bursts:8,1k", "COUNT"),
            ("gamma:3", "known: fixed, poisson, bursts"),
        ] {
            let e = s.parse::<Gaps>().unwrap_err();
            assert!(e.contains(want), "{s}: {e}");
        }
    }

    #[test]
    fn draws_follow_their_distributions() {
        let mut d = Draw::new(42);
        let n = 20_000;
        // Lognormal: the median and the share within one spread of it.
        let s = "lognormal:300,2".parse::<Sizes>().unwrap();
        let mut v: Vec<u64> = (0..n).map(|_| d.size(&s)).collect();
        v.sort_unstable();
        let med = v[n / 2] as f64;
        assert!((med / 300.0 - 1.0).abs() < 0.05, "{med}");
        let within = v.iter().filter(|&&x| (150..=600).contains(&x)).count() as f64 / n as f64;
        assert!((within - 0.683).abs() < 0.03, "{within}");
        // Uniform: inside its bounds, both ends reached.
        let u = "uniform:64,128".parse::<Sizes>().unwrap();
        let v: Vec<u64> = (0..n).map(|_| d.size(&u)).collect();
        assert!(v.iter().all(|x| (64..=128).contains(x)));
        assert!(v.contains(&64) && v.contains(&128));
        // Poisson: the mean gap, and gaps of every length (not evenly spaced).
        let g = "poisson:20k".parse::<Gaps>().unwrap();
        let gaps: Vec<u64> = (0..n).map(|_| d.gap_ns(&g)).collect();
        let mean = gaps.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean / 50_000.0 - 1.0).abs() < 0.03, "{mean}");
        let sd = (gaps.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        assert!(
            (sd / mean - 1.0).abs() < 0.05,
            "an exponential's sd is its mean: {sd}"
        );
        // Bursts: 8 messages 10 µs apart, then a gap from the burst rate.
        let b = "bursts:8,100k,60".parse::<Gaps>().unwrap();
        let gaps: Vec<u64> = (0..8 * 1000).map(|_| d.gap_ns(&b)).collect();
        for burst in gaps.chunks(8) {
            assert!(burst[1..].iter().all(|&g| g == 10_000), "{burst:?}");
        }
        let between: f64 = gaps.chunks(8).map(|c| c[0] as f64).sum::<f64>() / 1000.0;
        assert!((between / (1e9 / 60.0) - 1.0).abs() < 0.1, "{between}");
        // Fixed: exactly one interval; a seed gives the same draws again.
        assert_eq!(d.gap_ns(&"fixed:1k".parse().unwrap()), 1_000_000);
        let (mut a, mut b2) = (Draw::new(7), Draw::new(7));
        assert!((0..100).all(|_| a.size(&s) == b2.size(&s)));
    }

    /// Every size a pattern draws can be replayed: `lognormal:10M,4` drew
    /// 1 GiB messages that `replay` then refused ("message 1 has 1073741824
    /// bytes: a replay carries 1 B to 64 MiB").
    #[test]
    fn every_size_drawn_is_one_a_replay_carries() {
        let max = ipcperf_core::workload::replay::MAX_MESSAGE;
        let s = "lognormal:10M,4".parse::<Sizes>().unwrap();
        let mut d = Draw::new(1);
        let v: Vec<u64> = (0..10_000).map(|_| d.size(&s)).collect();
        assert!(v.iter().all(|&x| (1..=max).contains(&x)));
        assert!(v.contains(&max), "some draws are past 64 MiB");
        assert!("fixed:64M".parse::<Sizes>().is_ok());
    }
}
