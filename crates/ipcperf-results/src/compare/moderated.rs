//! How much each case moves from run to run, with strength borrowed across the
//! cases: a moderated variance (empirical Bayes, Smyth 2004, "Linear models and
//! empirical Bayes methods for assessing differential expression in microarray
//! experiments"; limma's `squeezeVar`).
//!
//! Each case's run-to-run variance `s²` (of its log median over the earlier
//! runs, `d = runs − 1` degrees of freedom) is taken as drawn from a scaled
//! inverse χ² prior with `d0` degrees of freedom about `s0²`, fitted over all the
//! cases of the history by moments of `ln s²`. Each case is then judged with the
//! posterior `(d0·s0² + d·s²) / (d0 + d)` on `d0 + d` degrees of freedom (at most
//! the history's whole degrees of freedom): with 48 cases of 4 runs each, a
//! row's t needs far fewer degrees of freedom from its own runs, so a verdict can
//! come near the limit its spread allows. A case whose own spread lies outside
//! the central 95% the prior predicts for it (a case far quieter or louder than
//! the others) keeps its own: the prior does not describe it.
//!
//! Where the history says more of each case than its medians ([`Traits`]:
//! whether its two sides ran on two CPUs, how far its median moves within one
//! run by its series alone), the prior's `s0²` follows them: `ln s²` is
//! regressed on those covariates and each case shrunk toward its own fitted
//! value (limma's `trend`, Law et al. 2014, "voom"; Phipson et al. 2016,
//! "Robust hyperparameter estimation"). Cases across CPUs and cases whose
//! series scatter are louder from run to run; once the prior knows it, the
//! cases scatter less about it, so it holds more degrees of freedom, and a
//! quiet case is no longer pulled toward the loud ones.

use std::collections::HashMap;

/// The prior over the cases' run-to-run variances: `s0²` on `d0` degrees of
/// freedom (`d0` infinite where the cases' variances scatter no more than
/// sampling alone explains: every case then shares `s0²`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prior {
    /// `s0²` of a typical case (at the cases' mean covariates).
    pub s0_sq: f64,
    pub d0: f64,
    /// How many cases it was fitted over.
    pub cases: usize,
    /// Where `s0²` follows the cases' [`Traits`]: the fitted coefficients.
    pub trend: Option<Trend>,
}

/// `ln s0²` of a case as a line in its covariates: `intercept + across·[two
/// CPUs] + within·ln(within-run variance)`, a coefficient 0 where that covariate
/// was not used (too few cases, or one side of it empty).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trend {
    pub intercept: f64,
    pub across: f64,
    pub within: f64,
    /// How much of the cases' scatter of `ln s²` beyond sampling the
    /// covariates explain (0–1), as fitted.
    pub explained: f64,
}

impl Prior {
    /// `s0²` for a case of traits `t` (the typical one where the prior has no
    /// trend or the case no traits).
    pub fn s0_sq_for(&self, t: Option<&Traits>) -> f64 {
        match (self.trend, t) {
            (Some(tr), Some(t)) if t.within_var > 0.0 || tr.within == 0.0 => {
                let x = tr.intercept
                    + tr.across * f64::from(u8::from(t.across))
                    + tr.within * t.within_var.max(f64::MIN_POSITIVE).ln();
                x.exp() * self.d0_factor()
            }
            _ => self.s0_sq,
        }
    }

    /// `e^(ψ(d0/2) − ln(d0/2))`: from the mean of `ln s²` to `ln s0²`.
    fn d0_factor(&self) -> f64 {
        if self.d0.is_finite() {
            (digamma(self.d0 / 2.0) - (self.d0 / 2.0).ln()).exp()
        } else {
            1.0
        }
    }
}

/// What the history says of a case besides its medians.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Traits {
    /// Its two sides ran on two CPUs.
    pub across: bool,
    /// The variance of its log median within one run, from its series alone
    /// (a robust one: (1.4826·MAD)²·π/2 over the series' count), the mean over
    /// the runs of the history.
    pub within_var: f64,
}

/// Each case's [`Traits`], by the same key as the history.
pub type CaseTraits = HashMap<String, Traits>;

/// One case's run-to-run spread, from the history.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunSpread {
    /// The standard deviation of its log median over the runs (its own, not
    /// shrunk): what the limit is computed from.
    pub sd: f64,
    /// How many runs it is from.
    pub runs: usize,
    /// The variance judged by (moderated where a prior was fitted) and its
    /// degrees of freedom.
    pub var: f64,
    pub df: f64,
}

/// The cases' spreads and the prior they share.
#[derive(Debug, Clone, Default)]
pub struct Model {
    pub prior: Option<Prior>,
    spreads: HashMap<String, RunSpread>,
}

/// The fewest cases a prior is fitted over.
pub const PRIOR_CASES: usize = 4;

/// The runs a case needs before its own spread is used without a prior.
pub const ALONE_RUNS: usize = 3;

impl Model {
    /// The spread of case `key`, where the history can say it.
    pub fn spread(&self, key: &str) -> Option<RunSpread> {
        self.spreads.get(key).copied()
    }

    /// How many cases have a spread.
    pub fn len(&self) -> usize {
        self.spreads.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spreads.is_empty()
    }
}

/// Mean and sample variance of the logs of `values` (positive ones), with their count.
fn log_moments(values: &[f64]) -> Option<(f64, f64, usize)> {
    let logs: Vec<f64> = values
        .iter()
        .filter(|v| **v > 0.0 && v.is_finite())
        .map(|v| v.ln())
        .collect();
    let n = logs.len();
    if n < 2 {
        return None;
    }
    let mean = logs.iter().sum::<f64>() / n as f64;
    let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0);
    Some((mean, var, n))
}

/// The model of `history` (each case's median in each earlier run).
pub fn fit(history: &super::History) -> Model {
    fit_with(history, &CaseTraits::new())
}

/// [`fit`], the prior following each case's `traits` where every case has them.
pub fn fit_with(history: &super::History, traits: &CaseTraits) -> Model {
    let mut own: Vec<(&String, f64, usize)> = history
        .iter()
        .filter_map(|(k, v)| log_moments(v).map(|(_, var, n)| (k, var, n)))
        .collect();
    // One order whatever the map's: the fit sums in it.
    own.sort_by(|a, b| a.0.cmp(b.0));
    let fitted: Vec<(f64, f64, Option<Traits>)> = own
        .iter()
        .filter(|(_, var, _)| *var > 0.0)
        .map(|(k, var, n)| (*var, (*n - 1) as f64, traits.get(*k).copied()))
        .collect();
    let prior = fit_prior_traits(&fitted);
    let total_df: f64 = fitted.iter().map(|(_, d, _)| d).sum();
    let spreads = own
        .into_iter()
        .filter_map(|(k, var, n)| {
            let d = (n - 1) as f64;
            // The prior as it stands for this case.
            let prior = prior.map(|p| Prior {
                s0_sq: p.s0_sq_for(traits.get(k)),
                ..p
            });
            let (v, df) = match prior {
                // A case the prior does not hold (its spread outside the central
                // 95% the prior predicts for its runs): its own, unshrunk. Robust
                // empirical Bayes in short: a case unusually quiet or unusually
                // loud is not pulled toward the others.
                Some(p) if !within_prior(var, d, p) => (var, d),
                Some(p) if p.d0.is_finite() => ((p.d0 * p.s0_sq + d * var) / (p.d0 + d), p.d0 + d),
                Some(p) => (p.s0_sq, f64::INFINITY),
                None if n >= ALONE_RUNS => (var, d),
                None => return None,
            };
            let df = df.min(total_df.max(d));
            Some((
                k.clone(),
                RunSpread {
                    sd: var.sqrt(),
                    runs: n,
                    var: v,
                    df,
                },
            ))
        })
        .collect();
    Model { prior, spreads }
}

/// Whether a case's variance `var` on `d` degrees of freedom is within the
/// central 95% the prior predicts: `var / s0²` against F(d, d0) (χ²(d)/d where
/// d0 is infinite).
pub fn within_prior(var: f64, d: f64, p: Prior) -> bool {
    use statrs::distribution::{ChiSquared, ContinuousCDF, FisherSnedecor};
    if p.s0_sq <= 0.0 || d < 1.0 || var <= 0.0 {
        return true;
    }
    let x = var / p.s0_sq;
    let cdf = if p.d0.is_finite() {
        FisherSnedecor::new(d, p.d0).ok().map(|f| f.cdf(x))
    } else {
        ChiSquared::new(d).ok().map(|c| c.cdf(x * d))
    };
    cdf.is_none_or(|c| (0.025..=0.975).contains(&c))
}

/// The scaled inverse χ² prior of variances `s2` with `d` degrees of freedom
/// each, by moments of `ln s²` (Smyth 2004, section 6.2; limma's `fitFDist`).
pub fn fit_prior(s2_d: &[(f64, f64)]) -> Option<Prior> {
    let plain: Vec<(f64, f64, Option<Traits>)> = s2_d.iter().map(|&(s, d)| (s, d, None)).collect();
    fit_prior_traits(&plain)
}

/// The fewest cases on each side of the across-CPUs covariate, and the fewest
/// cases beyond the covariates' count, before a covariate enters the prior.
const TREND_SIDE: usize = 3;

/// [`fit_prior`] with `ln s0²` a line in the cases' traits where every case
/// has them (limma's `fitFDist` with a design: the moments of the residuals
/// of `ln s²` regressed on the covariates).
pub fn fit_prior_traits(cases: &[(f64, f64, Option<Traits>)]) -> Option<Prior> {
    let n = cases.len();
    if n < PRIOR_CASES {
        return None;
    }
    let e: Vec<f64> = cases
        .iter()
        .map(|(s2, d, _)| s2.ln() - digamma(d / 2.0) + (d / 2.0).ln())
        .collect();
    let traits: Option<Vec<Traits>> = cases.iter().map(|c| c.2).collect();
    // The covariates worth fitting: two CPUs where both sides hold a few cases,
    // the series' spread where every case has one.
    let (use_across, use_within) = match &traits {
        Some(t) => {
            let across = t.iter().filter(|t| t.across).count();
            (
                across >= TREND_SIDE && n - across >= TREND_SIDE,
                t.iter()
                    .all(|t| t.within_var > 0.0 && t.within_var.is_finite()),
            )
        }
        None => (false, false),
    };
    let mut columns: Vec<Vec<f64>> = vec![vec![1.0; n]];
    if let Some(t) = &traits {
        if use_across {
            columns.push(t.iter().map(|t| f64::from(u8::from(t.across))).collect());
        }
        if use_within {
            columns.push(t.iter().map(|t| t.within_var.ln()).collect());
        }
    }
    if n < columns.len() + PRIOR_CASES {
        columns.truncate(1);
    }
    let (coef, fitted) = least_squares(&columns, &e).unwrap_or_else(|| {
        columns.truncate(1);
        let mean = e.iter().sum::<f64>() / n as f64;
        (vec![mean], vec![mean; n])
    });
    let p = columns.len();
    let resid = e
        .iter()
        .zip(&fitted)
        .map(|(y, f)| (y - f).powi(2))
        .sum::<f64>();
    let var = resid / (n - p) as f64;
    let sampling = cases.iter().map(|(_, d, _)| trigamma(d / 2.0)).sum::<f64>() / n as f64;
    let mean_fitted = fitted.iter().sum::<f64>() / n as f64;
    let excess = var - sampling;
    let d0 = if excess > 0.0 {
        2.0 * trigamma_inverse(excess)
    } else {
        f64::INFINITY
    };
    let trend = (p > 1).then(|| {
        let mut it = coef.iter().skip(1);
        let across = if use_across {
            *it.next().unwrap_or(&0.0)
        } else {
            0.0
        };
        let within = if use_within {
            *it.next().unwrap_or(&0.0)
        } else {
            0.0
        };
        let mean_e = e.iter().sum::<f64>() / n as f64;
        let total = e.iter().map(|y| (y - mean_e).powi(2)).sum::<f64>() / (n - 1) as f64;
        Trend {
            intercept: coef[0],
            across,
            within,
            explained: if total - sampling > 0.0 {
                ((total - var) / (total - sampling)).clamp(0.0, 1.0)
            } else {
                0.0
            },
        }
    });
    let mut prior = Prior {
        s0_sq: mean_fitted.exp(),
        d0,
        cases: n,
        trend,
    };
    prior.s0_sq *= prior.d0_factor();
    Some(prior)
}

/// Ordinary least squares of `y` on `columns` (each one value a row): the
/// coefficients and the fitted values, None where the columns are not
/// independent.
fn least_squares(columns: &[Vec<f64>], y: &[f64]) -> Option<(Vec<f64>, Vec<f64>)> {
    let p = columns.len();
    let n = y.len();
    // The normal equations [XᵀX | Xᵀy], solved by Gauss–Jordan with pivoting.
    let mut m: Vec<Vec<f64>> = (0..p)
        .map(|i| {
            let mut row: Vec<f64> = (0..p)
                .map(|j| (0..n).map(|t| columns[i][t] * columns[j][t]).sum())
                .collect();
            row.push((0..n).map(|t| columns[i][t] * y[t]).sum());
            row
        })
        .collect();
    for i in 0..p {
        let pivot = (i..p).max_by(|a, b| m[*a][i].abs().total_cmp(&m[*b][i].abs()))?;
        m.swap(i, pivot);
        let d = m[i][i];
        if d.abs() < 1e-12 * (1.0 + m[i].iter().map(|x| x.abs()).fold(0.0, f64::max)) {
            return None;
        }
        for v in m[i].iter_mut() {
            *v /= d;
        }
        for r in 0..p {
            if r != i {
                let f = m[r][i];
                let pivot_row = m[i].clone();
                for (v, pv) in m[r].iter_mut().zip(&pivot_row) {
                    *v -= f * pv;
                }
            }
        }
    }
    let coef: Vec<f64> = m.iter().map(|row| row[p]).collect();
    let fitted = (0..n)
        .map(|t| (0..p).map(|j| coef[j] * columns[j][t]).sum())
        .collect();
    Some((coef, fitted))
}

fn digamma(x: f64) -> f64 {
    statrs::function::gamma::digamma(x)
}

/// ψ'(x), x > 0: the recurrence up to 6, then the asymptotic series.
pub fn trigamma(mut x: f64) -> f64 {
    let mut acc = 0.0;
    while x < 6.0 {
        acc += 1.0 / (x * x);
        x += 1.0;
    }
    let x2 = 1.0 / (x * x);
    acc + 1.0 / x
        + x2 / 2.0
        + (1.0 / x) * x2 * (1.0 / 6.0 - x2 * (1.0 / 30.0 - x2 * (1.0 / 42.0 - x2 / 30.0)))
}

/// The x > 0 with ψ'(x) = y (ψ' falls from ∞ to 0): bisection on the log scale.
pub fn trigamma_inverse(y: f64) -> f64 {
    if y > 1e7 {
        return 1.0 / y.sqrt();
    }
    if y < 1e-6 {
        return 1.0 / y;
    }
    let (mut lo, mut hi) = (1e-8_f64.ln(), 1e8_f64.ln());
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if trigamma(mid.exp()) > y {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    ((lo + hi) / 2.0).exp()
}

/// The limit of one run against the mean of `k` runs for a case whose run-to-run
/// standard deviation of log figure is `sd`, among `m` rows compared together:
/// no test calls a lone change smaller than e^(z·sd·√(1 + 1/k)) − 1, with z the
/// normal quantile at two-sided 0.05/m (3.28 for 48 rows), and never below
/// `min_change`.
pub fn limit(sd: f64, k: usize, m: usize, min_change: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    let z = Normal::standard().inverse_cdf(1.0 - super::ALPHA / (2.0 * m.max(1) as f64));
    ((z * sd * (1.0 + 1.0 / k.max(1) as f64).sqrt()).exp() - 1.0).max(min_change)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigamma_matches_known_values_and_inverts() {
        // ψ'(1) = π²/6, ψ'(1/2) = π²/2, ψ'(10) ≈ 0.10516633.
        let pi2 = std::f64::consts::PI.powi(2);
        assert!((trigamma(1.0) - pi2 / 6.0).abs() < 1e-9);
        assert!((trigamma(0.5) - pi2 / 2.0).abs() < 1e-9);
        assert!((trigamma(10.0) - 0.105_166_335_6).abs() < 1e-8);
        for x in [0.05, 0.7, 3.0, 40.0, 900.0] {
            let back = trigamma_inverse(trigamma(x));
            assert!((back / x - 1.0).abs() < 1e-6, "{x} → {back}");
        }
    }

    /// A deterministic normal draw (Box–Muller over a small LCG).
    struct Draw(u64);
    impl Draw {
        fn uniform(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
        /// χ² with `d` (whole) degrees of freedom.
        fn chi2(&mut self, d: usize) -> f64 {
            (0..d).map(|_| self.normal().powi(2)).sum()
        }
    }

    #[test]
    fn the_prior_is_recovered_from_cases_drawn_from_it() {
        // 400 cases, each variance drawn from s0² = 0.0009 (3%) on d0 = 8, each
        // case's sample variance then on 4 degrees of freedom (5 runs).
        let mut g = Draw(7);
        let (s0_sq, d0) = (0.0009, 8usize);
        let s2: Vec<(f64, f64)> = (0..400)
            .map(|_| {
                let sigma_sq = d0 as f64 * s0_sq / g.chi2(d0);
                (sigma_sq * g.chi2(4) / 4.0, 4.0)
            })
            .collect();
        let p = fit_prior(&s2).unwrap();
        assert!((p.s0_sq / s0_sq - 1.0).abs() < 0.2, "{p:?}");
        assert!(p.d0 > 4.0 && p.d0 < 16.0, "{p:?}");
    }

    #[test]
    fn equal_variances_give_an_infinite_prior_and_the_common_value() {
        // Every case truly 2%: the sample variances scatter only by sampling.
        let mut g = Draw(11);
        let s2: Vec<(f64, f64)> = (0..400).map(|_| (0.0004 * g.chi2(3) / 3.0, 3.0)).collect();
        let p = fit_prior(&s2).unwrap();
        assert!(p.d0 > 50.0, "{p:?}");
        assert!((p.s0_sq / 0.0004 - 1.0).abs() < 0.15, "{p:?}");
    }

    #[test]
    fn a_prior_that_follows_the_cases_kind_is_tighter_and_keeps_a_quiet_kind_quiet() {
        // 200 cases on 4 degrees of freedom each: half on one CPU moving 2% from
        // run to run, half across CPUs moving 8%, each about its kind by an
        // inverse χ² on 20 degrees of freedom; each case's within-run variance
        // a fixed share of its own.
        let mut g = Draw(5);
        let cases: Vec<(f64, f64, Option<Traits>)> = (0..200)
            .map(|i| {
                let across = i % 2 == 1;
                let kind: f64 = if across { 0.0064 } else { 0.0004 };
                let sigma_sq = 20.0 * kind / g.chi2(20);
                (
                    sigma_sq * g.chi2(4) / 4.0,
                    4.0,
                    Some(Traits {
                        across,
                        within_var: sigma_sq * 0.3,
                    }),
                )
            })
            .collect();
        let plain: Vec<(f64, f64)> = cases.iter().map(|c| (c.0, c.1)).collect();
        let plain = fit_prior(&plain).unwrap();
        let trend = fit_prior_traits(&cases).unwrap();
        assert!(plain.trend.is_none());
        let t = trend.trend.expect("a trend over two kinds");
        // The kinds explain most of the scatter: many more degrees of freedom.
        assert!(plain.d0 < 5.0, "{plain:?}");
        assert!(trend.d0 > 2.0 * plain.d0, "{trend:?} against {plain:?}");
        assert!(t.explained > 0.5, "{t:?}");
        // Each kind's s0² near its own.
        let quiet = trend.s0_sq_for(Some(&Traits {
            across: false,
            within_var: 0.0004 * 0.3,
        }));
        let loud = trend.s0_sq_for(Some(&Traits {
            across: true,
            within_var: 0.0064 * 0.3,
        }));
        assert!((quiet / 0.0004 - 1.0).abs() < 0.35, "{quiet} {trend:?}");
        assert!((loud / 0.0064 - 1.0).abs() < 0.35, "{loud} {trend:?}");
        // Without traits for a case, the typical one.
        assert_eq!(trend.s0_sq_for(None), trend.s0_sq);
        // A covariate one side of which is empty is left out, as are traits
        // some cases lack.
        let one_side: Vec<_> = cases
            .iter()
            .map(|c| (c.0, c.1, c.2.map(|t| Traits { across: false, ..t })))
            .collect();
        let t = fit_prior_traits(&one_side).unwrap().trend.unwrap();
        assert_eq!(t.across, 0.0);
        assert!(t.within > 0.5, "{t:?}");
        let mut some = cases.clone();
        some[0].2 = None;
        assert!(fit_prior_traits(&some).unwrap().trend.is_none());
    }

    #[test]
    fn a_case_is_shrunk_toward_the_prior_with_its_degrees_of_freedom_added() {
        let mut h = super::super::History::new();
        // Five quiet cases and one loud: the loud one's variance is pulled down,
        // not to the others', and it gains degrees of freedom.
        for (i, spread) in [0.01, 0.012, 0.009, 0.011, 0.010, 0.05].iter().enumerate() {
            let v: Vec<f64> = [-1.0, 0.0, 1.0, 0.5, -0.5]
                .iter()
                .map(|z| 100.0 * (z * spread * 1.2f64).exp())
                .collect();
            h.insert(format!("case {i}"), v);
        }
        let m = fit(&h);
        assert!(m.prior.is_some());
        let loud = m.spread("case 5").unwrap();
        assert!(loud.var < loud.sd.powi(2), "{loud:?}");
        assert!(loud.df >= 4.0, "{loud:?}");
        assert_eq!(loud.runs, 5);
        // A case with one run has no spread.
        h.insert("alone".into(), vec![5.0]);
        assert!(fit(&h).spread("alone").is_none());
    }

    #[test]
    fn a_case_the_prior_does_not_hold_keeps_its_own_spread() {
        let p = Prior {
            s0_sq: 0.09f64.powi(2),
            d0: 5.4,
            cases: 48,
            trend: None,
        };
        // 3.2% over 13 runs where the cases are typically 9%: far quieter than
        // the prior allows; 8% is within it.
        assert!(!within_prior(0.032f64.powi(2), 12.0, p));
        assert!(within_prior(0.08f64.powi(2), 12.0, p));
        let mut h = super::super::History::new();
        for i in 0..20 {
            let spread = if i == 0 {
                0.004
            } else {
                0.04 + 0.002 * (i % 5) as f64
            };
            let v: Vec<f64> = [
                -1.26, -0.63, 0.0, 0.63, 1.26, -1.0, 1.0, 0.2, -0.2, 0.5, -0.5, 0.1, -0.1,
            ]
            .iter()
            .map(|z| 100.0 * (z * spread).exp())
            .collect();
            h.insert(format!("case {i}"), v);
        }
        let m = fit(&h);
        let quiet = m.spread("case 0").unwrap();
        assert_eq!(quiet.var, quiet.sd.powi(2), "{quiet:?} {:?}", m.prior);
        assert_eq!(quiet.df, 12.0);
        let typical = m.spread("case 3").unwrap();
        assert!(typical.df > 12.0, "{typical:?} {:?}", m.prior);
    }

    #[test]
    fn the_limit_is_the_issue_s_formula() {
        // σ = 3%, one run against one, 48 rows: about 15%; against 5 runs about 11%.
        let one = limit(0.03, 1, 48, 0.0);
        let five = limit(0.03, 5, 48, 0.0);
        assert!((one - 0.149).abs() < 0.005, "{one}");
        assert!((five - 0.114).abs() < 0.005, "{five}");
        // Never below the threshold.
        assert_eq!(limit(0.001, 5, 48, 0.05), 0.05);
    }
}
