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

/// Relative spread (max - min) / median, a simple noise figure; 0 for one sample.
pub fn relative_spread(s: &Spread) -> f64 {
    if s.median > 0.0 {
        (s.max - s.min) / s.median
    } else {
        0.0
    }
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
}
