//! The statistics `compare` judges a change by: a bootstrap interval of the
//! ratio of medians, and the Mann–Whitney rank-sum test, exact where the splits
//! can be counted and drawn with a seed from the data beyond.

use ipcperf_core::stats::median;

/// Resamplings of the bootstrap.
const BOOT: usize = 4000;

/// A 95% bootstrap interval of the ratio of medians median(b)/median(a): each
/// run's series resampled with replacement. Seeded by the data, so the same two
/// runs always give the same interval.
pub fn ratio_interval(a: &[f64], b: &[f64]) -> (f64, f64) {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for x in a.iter().chain(b) {
        seed = (seed ^ x.to_bits()).wrapping_mul(0x0100_0000_01b3);
    }
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut resample = |xs: &[f64], buf: &mut Vec<f64>| {
        buf.clear();
        for _ in 0..xs.len() {
            buf.push(xs[(next() % xs.len() as u64) as usize]);
        }
        median(buf).unwrap_or(0.0)
    };
    let (mut ba, mut bb) = (Vec::new(), Vec::new());
    let mut ratios: Vec<f64> = (0..BOOT)
        .filter_map(|_| {
            let (ma, mb) = (resample(a, &mut ba), resample(b, &mut bb));
            (ma > 0.0).then(|| mb / ma)
        })
        .collect();
    ratios.sort_by(|x, y| x.total_cmp(y));
    if ratios.is_empty() {
        return (0.0, f64::INFINITY);
    }
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    (at(0.025), at(0.975))
}

/// C(n, k), saturating.
fn choose(n: usize, k: usize) -> u64 {
    let k = k.min(n - k);
    let mut c: u128 = 1;
    for i in 0..k {
        c = c * (n - i) as u128 / (i + 1) as u128;
        if c > u64::MAX as u128 {
            return u64::MAX;
        }
    }
    c as u64
}

/// The smallest two-sided p-value the rank-sum test can give with `na` and `nb`
/// distinct values: every one of one run beyond every one of the other.
pub fn smallest_p(na: usize, nb: usize) -> f64 {
    2.0 / choose(na + nb, na) as f64
}

/// Ranks from 1, ties sharing the mean of their ranks.
fn mid_ranks(xs: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&i, &j| xs[i].total_cmp(&xs[j]));
    let mut ranks = vec![0.0; xs.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && xs[order[j + 1]] == xs[order[i]] {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = r;
        }
        i = j + 1;
    }
    ranks
}

/// Splits enumerated one by one up to this many; beyond, drawn at random.
const EXACT_SPLITS: u64 = 200_000;
const DRAWN_SPLITS: u64 = 20_000;

/// The two-sided p-value of the Mann–Whitney (Wilcoxon rank-sum) test that `a`
/// and `b` come from one distribution: the share of the ways to split the pooled
/// values into groups of their sizes whose rank sum lies at least as far from
/// its mean as `a`'s does. Exact (every split) up to 200,000 splits, else from
/// 20,000 splits drawn with a seed taken from the data (the same runs, the same
/// p). Ties share their mean rank.
pub fn rank_sum_p(a: &[f64], b: &[f64]) -> f64 {
    let (n, total) = (a.len(), a.len() + b.len());
    if n == 0 || b.is_empty() {
        return 1.0;
    }
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let ranks = mid_ranks(&pooled);
    let mean = n as f64 * (total as f64 + 1.0) / 2.0;
    let far = |w: f64| (w - mean).abs() >= (ranks[..n].iter().sum::<f64>() - mean).abs() - 1e-9;
    let (mut hits, mut all) = (0u64, 0u64);
    if choose(total, n) <= EXACT_SPLITS {
        let mut idx: Vec<usize> = (0..n).collect();
        loop {
            all += 1;
            hits += u64::from(far(idx.iter().map(|&i| ranks[i]).sum()));
            // The next n-subset of 0..total in lexicographic order.
            let mut i = n;
            while i > 0 && idx[i - 1] == total - n + i - 1 {
                i -= 1;
            }
            if i == 0 {
                break;
            }
            idx[i - 1] += 1;
            for j in i..n {
                idx[j] = idx[j - 1] + 1;
            }
        }
        return hits as f64 / all as f64;
    }
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for x in &pooled {
        seed = (seed ^ x.to_bits()).wrapping_mul(0x0100_0000_01b3) | 1;
    }
    let mut perm: Vec<usize> = (0..total).collect();
    for _ in 0..DRAWN_SPLITS {
        // The first n of a partial Fisher–Yates shuffle: a uniform n-subset.
        for i in 0..n {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let j = i + (seed % (total - i) as u64) as usize;
            perm.swap(i, j);
        }
        hits += u64::from(far(perm[..n].iter().map(|&i| ranks[i]).sum()));
    }
    // The observed split counts as one of those drawn.
    (hits + 1) as f64 / (DRAWN_SPLITS + 1) as f64
}

/// Benjamini–Hochberg's step-up cutoff over p-values tested together: the
/// largest p(k) with p(k) <= k/m * alpha (sorted ascending); a call stands only
/// at or below it. Minus infinity when none qualifies.
pub fn step_up_cutoff(mut ps: Vec<f64>, alpha: f64) -> f64 {
    ps.sort_by(|x, y| x.total_cmp(y));
    let m = ps.len() as f64;
    ps.iter()
        .enumerate()
        .filter(|(k, p)| **p <= (k + 1) as f64 / m * alpha)
        .map(|(_, p)| *p)
        .fold(f64::NEG_INFINITY, f64::max)
}
