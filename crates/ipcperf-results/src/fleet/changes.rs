//! Change points in a series of runs: E-divisive with means (Matteson and James,
//! "A Nonparametric Approach for Multiple Change Point Analysis of Multivariate
//! Data", 2014), the method MongoDB's performance CI and the Hunter tool track
//! nightly figures with. A split of a segment is scored by the energy distance
//! between the runs before it and after it; the best split of a segment is a
//! change point when a permutation test (the segment's runs shuffled) gives it
//! p ≤ `alpha`, and each side is searched again. Each side of a split must hold
//! at least `min_size` runs: a step is confirmed by that many runs after it, and
//! a single odd night is never a step.

/// Change points of `x` (the index of the first run after each), in order, each
/// with its permutation p-value.
pub fn e_divisive(x: &[f64], min_size: usize, perms: usize, alpha: f64) -> Vec<(usize, f64)> {
    let min_size = min_size.max(1);
    let mut found = Vec::new();
    let mut segments = vec![(0, x.len())];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ x.len() as u64;
    for v in x {
        seed = (seed ^ v.to_bits()).wrapping_mul(0x0100_0000_01b3);
    }
    while let Some((s, e)) = segments.pop() {
        if e - s < 2 * min_size {
            continue;
        }
        let seg = &x[s..e];
        let Some((tau, q)) = best_split(seg, min_size) else {
            continue;
        };
        // The permutation test: how often a shuffled segment splits as well.
        let mut shuffled = seg.to_vec();
        let mut as_good = 0usize;
        for _ in 0..perms {
            for i in (1..shuffled.len()).rev() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                shuffled.swap(i, (seed % (i as u64 + 1)) as usize);
            }
            if best_split(&shuffled, min_size).is_some_and(|(_, qq)| qq >= q) {
                as_good += 1;
            }
        }
        let p = (as_good + 1) as f64 / (perms + 1) as f64;
        if p <= alpha {
            found.push((s + tau, p));
            segments.push((s, s + tau));
            segments.push((s + tau, e));
        }
    }
    found.sort_by_key(|c| c.0);
    found
}

/// The split of `x` (at least `min_size` on each side) with the largest energy
/// statistic, and that statistic.
fn best_split(x: &[f64], min_size: usize) -> Option<(usize, f64)> {
    let n = x.len();
    if n < 2 * min_size {
        return None;
    }
    // P[i][j]: the sum of |x_a − x_b| over a < i, b < j (prefix sums of the
    // distance matrix), so that every within- and between-sum is a lookup.
    let w = n + 1;
    let mut p = vec![0.0f64; w * w];
    for i in 0..n {
        let mut row = 0.0;
        for j in 0..n {
            row += (x[i] - x[j]).abs();
            p[(i + 1) * w + (j + 1)] = p[i * w + (j + 1)] + row;
        }
    }
    let block = |a: usize, b: usize, c: usize, d: usize| {
        p[b * w + d] - p[a * w + d] - p[b * w + c] + p[a * w + c]
    };
    let mut best: Option<(usize, f64)> = None;
    for tau in min_size..=n - min_size {
        let (m, k) = (tau as f64, (n - tau) as f64);
        let between = block(0, tau, tau, n) / (m * k);
        let within = |len: f64, sum: f64| {
            if len > 1.0 {
                sum / (len * (len - 1.0))
            } else {
                0.0
            }
        };
        let wx = within(m, block(0, tau, 0, tau));
        let wy = within(k, block(tau, n, tau, n));
        let q = m * k / (m + k) * (2.0 * between - wx - wy);
        if best.is_none_or(|(_, b)| q > b) {
            best = Some((tau, q));
        }
    }
    best
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Seeded standard normal draws (xorshift, Box–Muller), for the simulations.
    pub(in crate::fleet) fn normals(seed: u64) -> impl FnMut() -> f64 {
        let mut s = seed | 1;
        let mut unit = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        move || {
            let (u, v) = (unit().max(1e-12), unit());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
    }

    fn noisy(n: usize, step_at: Option<(usize, f64)>, sd: f64, seed: u64) -> Vec<f64> {
        let mut normal = normals(seed);
        (0..n)
            .map(|i| {
                let z = normal();
                let level = match step_at {
                    Some((at, f)) if i >= at => f.ln(),
                    _ => 0.0,
                };
                level + sd * z
            })
            .collect()
    }

    /// 30 nights of 3% noise, 10% slower from night 20: the step is placed
    /// within a night of it in nearly every simulated month; months without a
    /// step show almost none.
    #[test]
    fn a_ten_percent_step_in_three_percent_noise() {
        let sims: usize = 100;
        let mut placed = 0;
        for k in 0..sims {
            let x = noisy(30, Some((20, 0.9)), 0.03, 100 + k as u64);
            let c = e_divisive(&x, 3, super::super::PERMUTATIONS, 0.01);
            placed += usize::from(c.iter().any(|(i, _)| i.abs_diff(20) <= 1));
        }
        assert!(placed * 100 >= 90 * sims, "placed in {placed} of {sims}");
        let mut false_steps = 0;
        for k in 0..sims {
            false_steps += e_divisive(
                &noisy(30, None, 0.03, 900 + k as u64),
                3,
                super::super::PERMUTATIONS,
                0.01,
            )
            .len();
        }
        // At most one false step per 100 nights: 30 a month, 100 months.
        assert!(
            false_steps * 100 <= 30 * sims,
            "{false_steps} false steps in {} nights",
            30 * sims
        );
        println!(
            "step placed within a night in {placed}/{sims}; {false_steps} false steps in {} nights",
            30 * sims
        );
    }

    #[test]
    fn one_odd_night_is_not_a_step() {
        let mut x = noisy(30, None, 0.01, 7);
        x[12] += 0.5;
        assert!(e_divisive(&x, 3, super::super::PERMUTATIONS, 0.01).is_empty());
        // Two steps, both found.
        let mut y = noisy(40, Some((15, 0.7)), 0.01, 8);
        for v in &mut y[28..] {
            *v += 0.4;
        }
        let at: Vec<usize> = e_divisive(&y, 3, super::super::PERMUTATIONS, 0.01)
            .iter()
            .map(|c| c.0)
            .collect();
        assert_eq!(at, [15, 28]);
    }
}
