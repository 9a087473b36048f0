//! Two regimes in one traced series: where the traced cycles fall into two
//! clusters (a partner still running, or asleep; a CPU that halted, or not),
//! the parts of each cluster apart, so that neither cluster's parts are read
//! as the other's.

use serde::{Deserialize, Serialize};

use super::split::Split;
use super::{summarize, ExplainPart};

/// One cluster of the traced cycles and its parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExplainMode {
    /// `fast` or `slow`.
    pub name: String,
    /// Its share of the traced cycles.
    pub share: f64,
    /// Its cycles' median (tare off).
    pub traced_median_ns: u64,
    pub parts: Vec<ExplainPart>,
}

/// Where `v` splits in two clusters: Otsu's threshold on the logarithms (the
/// cut that leaves the least spread within the two, each side at least a tenth
/// of the cycles), kept only where the histogram (40 bins of the logarithms
/// between p1 and p99, smoothed over 3) dips between the two sides' peaks to
/// under half the lower peak: a valley, not one hump cut in two. Returns the
/// largest value of the fast cluster.
pub fn cut(v: &[u64]) -> Option<u64> {
    let n = v.len();
    if n < 50 {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_unstable();
    let l: Vec<f64> = s.iter().map(|x| (*x).max(1) as f64).map(f64::ln).collect();
    let mut sum = vec![0.0; n + 1];
    let mut sq = vec![0.0; n + 1];
    for (i, x) in l.iter().enumerate() {
        sum[i + 1] = sum[i] + x;
        sq[i + 1] = sq[i] + x * x;
    }
    let stats = |a: usize, b: usize| {
        let k = (b - a) as f64;
        let m = (sum[b] - sum[a]) / k;
        (m, ((sq[b] - sq[a]) / k - m * m).max(0.0))
    };
    let mut best: Option<(f64, usize)> = None;
    for i in n / 10..=(n - n / 10) {
        if i == 0 || i == n || s[i - 1] == s[i] {
            continue;
        }
        let (m1, _) = stats(0, i);
        let (m2, _) = stats(i, n);
        let w = i as f64 / n as f64;
        let between = w * (1.0 - w) * (m2 - m1).powi(2);
        if best.is_none_or(|(b, _)| between > b) {
            best = Some((between, i));
        }
    }
    let (_, i) = best?;
    const BINS: usize = 40;
    let (lo, hi) = (l[n / 100], l[n - 1 - n / 100]);
    if hi <= lo {
        return None;
    }
    let bin = |x: f64| (((x - lo) / (hi - lo) * BINS as f64) as usize).min(BINS - 1);
    let mut h = [0.0f64; BINS];
    for x in l.iter().filter(|x| (lo..=hi).contains(*x)) {
        h[bin(*x)] += 1.0;
    }
    let sm: Vec<f64> = (0..BINS)
        .map(|b| {
            let r = b.saturating_sub(1)..(b + 2).min(BINS);
            h[r.clone()].iter().sum::<f64>() / r.len() as f64
        })
        .collect();
    let at = bin(l[i]);
    let peak = |r: std::ops::Range<usize>| {
        r.clone()
            .max_by(|a, b| sm[*a].total_cmp(&sm[*b]))
            .map(|b| (b, sm[b]))
    };
    let (b1, p1) = peak(0..at.max(1))?;
    let (b2, p2) = peak(at..BINS)?;
    let valley = sm[b1..=b2].iter().copied().fold(f64::INFINITY, f64::min);
    (valley < 0.5 * p1.min(p2)).then(|| s[i - 1])
}

/// The parts of each cluster, where the traced cycles (`traced`, beside their
/// `splits`) fall in two; empty where they do not.
pub fn modes(splits: &[Split], traced: &[u64]) -> Vec<ExplainMode> {
    let Some(c) = cut(traced) else {
        return Vec::new();
    };
    let n = traced.len().max(1) as f64;
    [("fast", true), ("slow", false)]
        .into_iter()
        .map(|(name, fast)| {
            let (s, t): (Vec<Split>, Vec<u64>) = splits
                .iter()
                .zip(traced)
                .filter(|(_, t)| (**t <= c) == fast)
                .map(|(s, t)| (*s, *t))
                .unzip();
            let x = summarize(&s, &t, 0, 0, 0, false, Vec::new());
            ExplainMode {
                name: name.into(),
                share: t.len() as f64 / n,
                traced_median_ns: x.traced_median_ns,
                parts: x.parts,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic spread around `at`, ±10%.
    fn around(at: u64, n: usize, seed: u64) -> Vec<u64> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                at - at / 10 + x % (at / 5)
            })
            .collect()
    }

    #[test]
    fn two_clusters_are_cut_between_them_and_one_is_not_cut() {
        let mut v = around(3_500, 700, 1);
        v.extend(around(33_000, 1_300, 2));
        let c = cut(&v).expect("two clusters");
        assert!((3_150..29_700).contains(&c), "{c}");
        assert_eq!(cut(&around(10_000, 2_000, 3)), None);
        // A cluster of a twentieth is not a mode of its own.
        let mut w = around(3_500, 1_900, 4);
        w.extend(around(33_000, 100, 5));
        assert_eq!(cut(&w), None);
        assert_eq!(cut(&[1, 100]), None, "too few to tell");
    }

    #[test]
    fn each_mode_has_its_own_parts() {
        let mut splits = Vec::new();
        let mut traced = Vec::new();
        for (i, t) in around(3_500, 300, 6)
            .into_iter()
            .chain(around(33_000, 200, 7))
            .enumerate()
        {
            let mut s = Split::default();
            // The slow cycles' time is a wake-up; the fast ones' a send call.
            s.parts[if t > 10_000 { 2 } else { 1 }] = t;
            s.woken = [t > 10_000 || i == 0, false];
            splits.push(s);
            traced.push(t);
        }
        let m = modes(&splits, &traced);
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].name.as_str(), m[1].name.as_str()), ("fast", "slow"));
        assert!((m[0].share - 0.6).abs() < 1e-9);
        assert_eq!(m[0].parts[0].name, "send_call");
        assert_eq!(m[1].parts[0].name, "wake");
        assert!(m[1].traced_median_ns > 29_000);
    }
}
