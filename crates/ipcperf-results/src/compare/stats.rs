//! The statistics `compare` judges a change by: Welch's t-test on the logs of
//! the series, a bootstrap interval of the ratio of medians; and the
//! Mann–Whitney rank-sum test (exact where the splits can be counted, drawn with
//! a seed from the data beyond), which `fleet` and `trend` rank by.

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
    let ratios: Vec<f64> = (0..BOOT)
        .filter_map(|_| {
            let (ma, mb) = (resample(a, &mut ba), resample(b, &mut bb));
            (ma > 0.0).then(|| mb / ma)
        })
        .collect();
    central_95(ratios)
}

/// The 2.5th and 97.5th percentiles of bootstrap ratios (0 to infinity when
/// none could be taken).
fn central_95(mut ratios: Vec<f64>) -> (f64, f64) {
    ratios.sort_by(|x, y| x.total_cmp(y));
    if ratios.is_empty() {
        return (0.0, f64::INFINITY);
    }
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    (at(0.025), at(0.975))
}

/// Welch's t-test on the logarithms of two runs' series (a change is a ratio,
/// and series spread by a share of their value): the two-sided p-value, the
/// standard error of the difference of the mean logs, and the degrees of
/// freedom (Welch–Satterthwaite). None with fewer than 2 series a side.
///
/// Unlike the rank-sum test, whose smallest p-value with 5 series a side is
/// 2/252 = 0.008 however far apart they are, this one can reach what a
/// correction over 48 cases asks (p ≤ 0.001) when a change is large beside the
/// series' spread.
pub fn welch_log(a: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|x| *x <= 0.0 || !x.is_finite()) {
        return None;
    }
    let stats = |xs: &[f64]| {
        let l: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
        let n = l.len() as f64;
        let mean = l.iter().sum::<f64>() / n;
        let var = l.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var, n)
    };
    let (ma, va, na) = stats(a);
    let (mb, vb, nb) = stats(b);
    let (qa, qb) = (va / na, vb / nb);
    let se = (qa + qb).sqrt();
    // A floor for the spread of series identical to the last bit: one part in 10^6.
    let se = se.max(1e-6);
    let df = if qa + qb > 0.0 {
        ((qa + qb).powi(2) / (qa * qa / (na - 1.0) + qb * qb / (nb - 1.0))).max(1.0)
    } else {
        na + nb - 2.0
    };
    let t = (mb - ma).abs() / se;
    Some((2.0 * student_upper(t, df), se, df))
}

/// The two-sided p-value of `t` for Student's t with `df` degrees of freedom.
pub fn two_sided_t(t: f64, df: f64) -> f64 {
    (2.0 * student_upper(t.abs(), df)).min(1.0)
}

/// P(T > t) for Student's t with `df` degrees of freedom.
fn student_upper(t: f64, df: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    match StudentsT::new(0.0, 1.0, df) {
        Ok(d) => d.sf(t).clamp(0.0, 1.0),
        Err(_) => 1.0,
    }
}

/// The t value beyond which a two-sided test at level `alpha` calls a change.
pub fn t_critical(df: f64, alpha: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    match StudentsT::new(0.0, 1.0, df.max(1.0)) {
        Ok(d) => d.inverse_cdf(1.0 - alpha / 2.0),
        Err(_) => f64::INFINITY,
    }
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

/// Holm's step-down cutoff over p-values tested together: sorted ascending,
/// p(1) .. p(k) stand while each p(i) <= alpha / (m − i + 1), and the cutoff is
/// the last that stands. It holds the chance of any false call among the m to
/// alpha whatever the others did: a strong call does not lower the bar for the
/// next, as Benjamini–Hochberg's step-up does. The first row's bar, alpha / m,
/// is the same in both. Minus infinity when none qualifies.
pub fn step_down_cutoff(mut ps: Vec<f64>, alpha: f64) -> f64 {
    ps.sort_by(|x, y| x.total_cmp(y));
    let m = ps.len();
    ps.iter()
        .enumerate()
        .take_while(|(i, p)| **p <= alpha / (m - i) as f64)
        .map(|(_, p)| *p)
        .fold(f64::NEG_INFINITY, f64::max)
}

/// At or below this many pooled figures, [`judge_pair`] uses the exact (or drawn)
/// rank-sum test and the full bootstrap; beyond, their large-sample forms.
pub const SMALL: usize = 80;

/// The two-sided p-value of the rank-sum test from a rank sum already taken: `w`
/// the sum of the `n` ranks of one sample among `total` pooled figures, `ties`
/// the sum of t³ − t over the pooled figures' groups of ties. The normal
/// approximation with its tie and continuity corrections (as scipy's
/// `mannwhitneyu` uses beyond 8 a side): for pooled samples past [`SMALL`].
pub fn rank_sum_p_normal(w: f64, n: usize, total: usize, ties: f64) -> f64 {
    let (n, m, t) = (n as f64, (total - n) as f64, total as f64);
    if n == 0.0 || m == 0.0 {
        return 1.0;
    }
    let mean = n * (t + 1.0) / 2.0;
    let var = n * m / 12.0 * ((t + 1.0) - ties / (t * (t - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((w - mean).abs() - 0.5).max(0.0) / var.sqrt();
    statrs::function::erf::erfc(z / std::f64::consts::SQRT_2).min(1.0)
}

/// Mid-ranks of `xs` (from 1) and the tie term Σ(t³ − t) over its groups of ties.
pub fn ranks_and_ties(xs: &[f64]) -> (Vec<f64>, f64) {
    let ranks = mid_ranks(xs);
    let mut sorted: Vec<f64> = xs.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let mut ties = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[i] {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        i = j + 1;
    }
    (ranks, ties)
}

/// A seeded xorshift, the same for the same figures.
struct Rng(u64);

impl Rng {
    fn from(xs: &[f64], ys: &[f64]) -> Rng {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for x in xs.iter().chain(ys) {
            seed = (seed ^ x.to_bits()).wrapping_mul(0x0100_0000_01b3) | 1;
        }
        Rng(seed)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in (0, 1).
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit(), self.unit());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// The median of one bootstrap resample of `sorted` (ascending). Up to [`SMALL`]
/// figures it resamples them; beyond, it draws the resample's middle order
/// statistic directly: the k-th smallest of m uniform draws is Beta(k, m−k+1),
/// taken here by its normal approximation (k > 40), and mapped to an index.
fn boot_median(sorted: &[f64], rng: &mut Rng, buf: &mut Vec<f64>) -> f64 {
    let m = sorted.len();
    if m <= SMALL {
        buf.clear();
        for _ in 0..m {
            buf.push(sorted[(rng.next() % m as u64) as usize]);
        }
        return median(buf).unwrap_or(0.0);
    }
    let mf = m as f64;
    let at = |k: f64, rng: &mut Rng| {
        let (a, b) = (k, mf - k + 1.0);
        let mean = a / (a + b);
        let sd = (a * b / ((a + b) * (a + b) * (a + b + 1.0))).sqrt();
        let u = (mean + sd * rng.normal()).clamp(0.0, 1.0 - f64::EPSILON);
        sorted[((u * mf) as usize).min(m - 1)]
    };
    if m % 2 == 1 {
        at(mf.div_euclid(2.0) + 1.0, rng)
    } else {
        (at(mf / 2.0, rng) + at(mf / 2.0 + 1.0, rng)) / 2.0
    }
}

/// The 95% bootstrap interval of median(b)/median(a), for samples of any size:
/// [`ratio_interval`] itself when both are small, else each side's resampled
/// median drawn as [`boot_median`] does.
pub fn ratio_interval_any(a: &[f64], b: &[f64]) -> (f64, f64) {
    if a.len() <= SMALL && b.len() <= SMALL {
        return ratio_interval(a, b);
    }
    let mut rng = Rng::from(a, b);
    let (mut sa, mut sb) = (a.to_vec(), b.to_vec());
    sa.sort_by(|x, y| x.total_cmp(y));
    sb.sort_by(|x, y| x.total_cmp(y));
    let (mut ba, mut bb) = (Vec::new(), Vec::new());
    let ratios: Vec<f64> = (0..BOOT)
        .filter_map(|_| {
            let ma = boot_median(&sa, &mut rng, &mut ba);
            let mb = boot_median(&sb, &mut rng, &mut bb);
            (ma > 0.0).then(|| mb / ma)
        })
        .collect();
    central_95(ratios)
}

/// The rank-sum p of `a` against `b` for samples of any size: [`rank_sum_p`] up to
/// [`SMALL`] pooled figures, its normal approximation beyond.
pub fn rank_sum_p_any(a: &[f64], b: &[f64]) -> f64 {
    let total = a.len() + b.len();
    if total <= SMALL {
        return rank_sum_p(a, b);
    }
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let (ranks, ties) = ranks_and_ties(&pooled);
    rank_sum_p_normal(ranks[..a.len()].iter().sum(), a.len(), total, ties)
}

#[cfg(test)]
mod large {
    use super::*;

    /// `n` figures around `centre` with a seeded ±3% spread.
    fn sample(n: usize, centre: f64, seed: u64) -> Vec<f64> {
        let mut r = Rng(seed | 1);
        (0..n).map(|_| centre * (0.97 + 0.06 * r.unit())).collect()
    }

    #[test]
    fn the_large_sample_forms_agree_with_the_exact_ones() {
        // Sizes where both can be computed: 8 against 150.
        for (shift, seed) in [(1.0, 3), (1.01, 5), (1.02, 7), (0.97, 11)] {
            let a = sample(150, 1.0, seed);
            let b = sample(8, shift, seed * 13);
            let exact = rank_sum_p(&b, &a);
            let normal = rank_sum_p_any(&b, &a);
            assert!(
                (exact - normal).abs() < 0.02 + 0.1 * exact,
                "shift {shift}: exact {exact} normal {normal}"
            );
            // The full bootstrap of both against the drawn order statistic.
            let full = {
                // ratio_interval itself, forced to resample all 150.
                let mut rng = Rng::from(&a, &b);
                let (mut ba, mut bb) = (Vec::new(), Vec::new());
                let mut rs: Vec<f64> = (0..BOOT)
                    .map(|_| {
                        ba.clear();
                        bb.clear();
                        for _ in 0..a.len() {
                            ba.push(a[(rng.next() % a.len() as u64) as usize]);
                        }
                        for _ in 0..b.len() {
                            bb.push(b[(rng.next() % b.len() as u64) as usize]);
                        }
                        median(&bb).unwrap() / median(&ba).unwrap()
                    })
                    .collect();
                rs.sort_by(|x, y| x.total_cmp(y));
                (
                    rs[(BOOT as f64 * 0.025) as usize],
                    rs[(BOOT as f64 * 0.975) as usize],
                )
            };
            let drawn = ratio_interval_any(&a, &b);
            assert!(
                (full.0 - drawn.0).abs() < 0.004 && (full.1 - drawn.1).abs() < 0.004,
                "shift {shift}: full {full:?} drawn {drawn:?}"
            );
        }
    }

    #[test]
    fn ties_and_sides() {
        let (r, t) = ranks_and_ties(&[1.0, 2.0, 2.0, 3.0]);
        assert_eq!(r, vec![1.0, 2.5, 2.5, 4.0]);
        assert_eq!(t, 6.0);
        // All of one sample beyond all of the other: a tiny p; identical: 1.
        let a: Vec<f64> = (0..100).map(|i| i as f64).collect();
        let b: Vec<f64> = (0..10).map(|i| 1000.0 + i as f64).collect();
        assert!(rank_sum_p_any(&b, &a) < 1e-6);
        assert_eq!(rank_sum_p_any(&[5.0; 50], &[5.0; 50]), 1.0);
    }
}

#[cfg(test)]
mod holds {
    use super::*;

    #[test]
    fn holm_does_not_let_a_borderline_row_through_behind_a_strong_one() {
        // 48 rows: one strong change and two at p = 0.0025 (over 0.05/47 alone).
        let mut ps = vec![0.5; 45];
        ps.extend([1e-9, 0.0025, 0.0026]);
        // Benjamini–Hochberg: the third's bar is 3/48 · 0.05 = 0.0031, so all three stand.
        assert_eq!(step_up_cutoff(ps.clone(), 0.05), 0.0026);
        // Holm: the second's bar is 0.05/47 = 0.00106; only the strong one stands.
        assert_eq!(step_down_cutoff(ps.clone(), 0.05), 1e-9);
        // Rows each past their own step stand: 0.001 <= 0.05/48, 0.00105 <= 0.05/47.
        let mut two = vec![0.5; 46];
        two.extend([0.001, 0.00105]);
        assert_eq!(step_down_cutoff(two, 0.05), 0.00105);
        // None past the first step: nothing stands.
        assert_eq!(
            step_down_cutoff(vec![0.02, 0.021, 0.5], 0.05),
            f64::NEG_INFINITY
        );
        assert_eq!(step_down_cutoff(vec![0.01, 0.02, 0.5], 0.05), 0.02);
        assert_eq!(step_down_cutoff(Vec::new(), 0.05), f64::NEG_INFINITY);
    }
}
