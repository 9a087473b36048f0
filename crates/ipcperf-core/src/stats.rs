//! Pure statistics over samples: median, min, max, spread. Unit-tested on fixed data.

use serde::{Deserialize, Serialize};

/// Median, min and max of a series of figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// The median of `xs` (mean of the two middle values for an even count); None if empty.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Median, min and max; None if empty.
pub fn spread(xs: &[f64]) -> Option<Spread> {
    let median = median(xs)?;
    let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(Spread { median, min, max })
}

/// The median of the logarithms of `xs` (positive, finite ones) and 1.4826 ×
/// their median absolute deviation: a standard deviation for log-normal
/// figures that one wild value barely moves. None without such a value.
pub fn log_median_mad(xs: &[f64]) -> Option<(f64, f64)> {
    let logs: Vec<f64> = xs
        .iter()
        .filter(|x| **x > 0.0 && x.is_finite())
        .map(|x| x.ln())
        .collect();
    let centre = median(&logs)?;
    let dev: Vec<f64> = logs.iter().map(|l| (l - centre).abs()).collect();
    Some((centre, 1.4826 * median(&dev)?))
}

/// Relative spread (max - min) / median, a simple noise figure; 0 for one sample.
pub fn relative_spread(s: &Spread) -> f64 {
    if s.median > 0.0 {
        (s.max - s.min) / s.median
    } else {
        0.0
    }
}

/// A case is noisy where its series' [`log_sd`] is above this: 8%, about where
/// the old rule (five series whose max − min passed 20% of their median) flagged.
pub const NOISY_SD: f64 = 0.08;

/// The one noise figure of ipcperf: the standard deviation of the logarithms of
/// a case's series figures (about their relative standard deviation: 0.08 is
/// 8%). Unlike max − min, it does not grow with the number of series: ten
/// series of the same case are no noisier than five. None under two series or
/// with a figure that is not positive.
pub fn log_sd(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 || xs.iter().any(|x| !x.is_finite() || *x <= 0.0) {
        return None;
    }
    let logs: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
    let n = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / n;
    Some((logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt())
}

/// The noise figure of `xs` where it is over [`NOISY_SD`] (the series disagree).
pub fn noisy(xs: &[f64]) -> Option<f64> {
    log_sd(xs).filter(|&sd| sd > NOISY_SD)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_even_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn spread_of_series() {
        let s = spread(&[10.0, 30.0, 20.0]).unwrap();
        assert_eq!(
            s,
            Spread {
                median: 20.0,
                min: 10.0,
                max: 30.0
            }
        );
        assert!((relative_spread(&s) - 1.0).abs() < 1e-12);
    }

    /// The noise figure stays put as series are added (max − min grows): 3 and
    /// 30 series drawn from one spread of 5% read within 15% of 5% on average.
    #[test]
    fn the_noise_figure_does_not_grow_with_the_series_count() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut uniform = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut normal = || {
            let (u, v) = (uniform().max(1e-12), uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        };
        let mut mean_of = |n: usize| {
            let (mut sd, mut range) = (0.0, 0.0);
            for _ in 0..400 {
                let xs: Vec<f64> = (0..n).map(|_| 1000.0 * (0.05 * normal()).exp()).collect();
                sd += log_sd(&xs).unwrap() / 400.0;
                range += relative_spread(&spread(&xs).unwrap()) / 400.0;
            }
            (sd, range)
        };
        let (sd3, range3) = mean_of(3);
        let (sd30, range30) = mean_of(30);
        for sd in [sd3, sd30] {
            assert!((sd - 0.05).abs() < 0.05 * 0.15, "{sd3} {sd30}");
        }
        assert!(range30 > 2.0 * range3, "{range3} {range30}");
        assert_eq!(log_sd(&[1.0]), None);
        assert_eq!(log_sd(&[1.0, 0.0]), None);
        assert!(noisy(&[1000.0, 1500.0, 1000.0]).is_some());
        assert!(noisy(&[1000.0, 1050.0, 1000.0]).is_none());
    }
}
