//! Tick marks on a log axis: where (round values: 1-2-5, 1-3 or whole decades,
//! by how many decades the axis spans) and how they read (`300`, `30k`, `1.5M`:
//! at most three figures, no trailing zeros). Plotters' own log ticks fall at
//! half decades (`31.62M`) and its plain numbers run to `1000000`.

use std::ops::Range;

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};

/// A linear axis from `lo` to `hi` marked at the given points (log values, for
/// an axis drawn in logarithms); labels come from the chart's formatter.
pub(crate) struct Keyed {
    pub range: Range<f64>,
    pub keys: Vec<f64>,
}

impl Ranged for Keyed {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = (v - self.range.start) / (self.range.end - self.range.start);
        limit.0 + (f * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.keys.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

impl ValueFormatter<f64> for Keyed {
    fn format(v: &f64) -> String {
        figures(*v)
    }
}

/// Round values from `lo` to `hi` (both > 0) to mark on a log axis: at least
/// two where the span allows, no more than about a dozen.
pub(crate) fn log_points(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return Vec::new();
    }
    let decades = (hi / lo).log10();
    let steps: &[&[f64]] = if decades > 12.0 {
        &[&[1.0]]
    } else if decades > 4.5 {
        &[&[1.0], &[1.0, 3.0]]
    } else if decades > 2.5 {
        &[&[1.0, 3.0], &[1.0, 2.0, 5.0]]
    } else if decades > 1.0 {
        &[&[1.0, 2.0, 5.0], &[1.0, 2.0, 3.0, 5.0, 7.0]]
    } else {
        &[
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
            &[1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0],
            &[
                1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.8, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5,
            ],
            &[
                1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0, 2.2, 2.4, 2.6,
            ],
        ]
    };
    let (e0, e1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let mut best = Vec::new();
    for mults in steps {
        let every = if decades > 12.0 {
            (decades / 8.0).ceil() as i32
        } else {
            1
        };
        best = (e0..=e1)
            .filter(|e| e.rem_euclid(every) == 0)
            .flat_map(|e| mults.iter().map(move |m| m * 10f64.powi(e)))
            .filter(|v| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9))
            .collect();
        if best.len() >= 3 {
            break;
        }
    }
    if best.len() < 2 {
        best = vec![lo, hi];
    }
    best
}

/// A value on an axis: `0.5`, `30`, `300`, `1k`, `31.6k`, `1.5M`, `2G`.
pub(crate) fn value(v: f64) -> String {
    let (x, unit) = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(u, _)| v.abs() >= *u * (1.0 - 5e-4))
        .map_or((v, ""), |(u, name)| (v / u, name));
    format!("{}{unit}", figures(x))
}

/// A ratio on an axis: `0.25×`, `1×`, `1.41×`, `16×`.
pub(crate) fn ratio(r: f64) -> String {
    format!("{}×", figures(r))
}

/// At most three significant figures, trailing zeros dropped.
pub(crate) fn figures(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    let places = (2 - magnitude).clamp(0, 12) as usize;
    let s = format!("{x:.places$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_short_and_round() {
        for (v, want) in [
            (1e6, "1M"),
            (1_000_000.0 - 1e-6, "1M"),
            (31_622.776, "31.6k"),
            (29_999.999, "30k"),
            (100.0, "100"),
            (316.2, "316"),
            (1500.0, "1.5k"),
            (0.5, "0.5"),
            (0.0625, "0.0625"),
            (40e6, "40M"),
            (2e9, "2G"),
        ] {
            assert_eq!(value(v), want, "{v}");
        }
        assert_eq!(ratio(16.0), "16×");
        assert_eq!(ratio(0.25), "0.25×");
        assert_eq!(ratio(2f64.sqrt()), "1.41×");
    }

    #[test]
    fn points_are_round_and_fit_the_span() {
        // Three and a half decades: 1 and 3 of each.
        assert_eq!(
            log_points(10e3, 40e6),
            [1e4, 3e4, 1e5, 3e5, 1e6, 3e6, 1e7, 3e7]
        );
        // Under two decades: 1-2-5.
        assert_eq!(
            log_points(66.0, 6800.0),
            [100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0]
        );
        // Whole decades over a wide span.
        assert_eq!(log_points(10.0, 1e6), [10.0, 100.0, 1e3, 1e4, 1e5, 1e6]);
        // A few pairs: every count.
        assert_eq!(log_points(1.0, 4.0), [1.0, 2.0, 3.0, 4.0]);
        // A narrow span still has marks inside it.
        let narrow = log_points(110.0, 250.0);
        assert!(narrow.len() >= 3, "{narrow:?}");
        assert!(narrow.iter().all(|v| (110.0..=250.0).contains(v)));
        // No duplicates, in order, anywhere.
        for (lo, hi) in [(1e-3, 1e9), (3.0, 7.0), (0.9, 1.1), (1e3, 1e30)] {
            let p = log_points(lo, hi);
            assert!(p.len() >= 2 && p.len() <= 16, "{lo}..{hi}: {p:?}");
            assert!(p.windows(2).all(|w| w[0] < w[1]), "{p:?}");
        }
        assert!(log_points(0.0, 1.0).is_empty());
    }
}
