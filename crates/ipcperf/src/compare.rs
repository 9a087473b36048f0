//! Two runs case by case: the ratio of their medians, marked as a change only when
//! three things hold: a rank-sum (Mann–Whitney) test of the two runs' series says
//! the difference is not chance, with false discoveries held to 5% over all the
//! cases compared (Benjamini–Hochberg: an A/A pair of 48 cases must not show two
//! by luck); the 95% bootstrap interval of the ratio excludes 1; and the ratio is
//! beyond a minimum change (default 5%). The series are taken in rounds across
//! the run (see `ipcperf_core::runner::run_all`), so each case's spread holds the
//! drift of the whole run, not only of one second of it. Records in, a view out.

use ipcperf_core::record::{CaseRecord, RunRecord};
use ipcperf_core::stats::{median, spread};
use ipcperf_core::workload::Workload;

use crate::export::view::{Table, View};
use crate::units::{fmt_mbps, fmt_size};

/// What became of one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    /// The difference is inside the noise of at least one run.
    Unchanged,
    /// One side has a single series: its noise is unknown, so nothing is claimed.
    NoiseUnknown,
    /// A side did not run (refused or failed) or the case is only in one run.
    NotComparable,
}

/// One row of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub case: String,
    /// What `a` and `b` are in: MB/s, µs p50, cycles/s.
    pub unit: &'static str,
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// b / a.
    pub ratio: Option<f64>,
    /// The 95% bootstrap interval of b / a.
    pub interval: Option<(f64, f64)>,
    /// The rank-sum test's two-sided p-value (the chance of a split of the
    /// series at least this lopsided if both runs measured the same thing).
    pub p: Option<f64>,
    pub verdict: Verdict,
    pub why: String,
    /// The figure is a time (latency p50): B/A below 1 is B faster.
    pub lower_better: bool,
}

/// The identity of a case across runs (options hold facts found at set-up, such
/// as the pipe size granted, which may differ between machines: left out).
fn key(c: &CaseRecord) -> String {
    let rate = crate::export::latency::offered(c)
        .map(|r| format!(" at {}/s", crate::units::fmt_rate(r as f64)))
        .unwrap_or_default();
    let zero_copy = if c.options.get("zero_copy").is_some_and(|v| v == "true") {
        " zero-copy"
    } else if c.options.get("buffers").is_some_and(|v| v == "registered") {
        " fixed-buffers"
    } else if c.options.get("ring_layout").is_some_and(|v| v == "message") {
        " message-ring"
    } else {
        ""
    };
    format!(
        "{} {}{zero_copy} {} {} {} {}{}{}{rate}",
        c.workload.name(),
        c.mechanism,
        c.mode.name(),
        fmt_size(c.block_size),
        placement_key(&c.placement),
        c.payload.name(),
        if c.wait == "block" {
            String::new()
        } else {
            format!(" wait={}", c.wait)
        },
        if c.include_setup { " +setup" } else { "" }
    )
}

/// What a case is compared on, series by series, and which way is better.
struct Figure {
    values: Vec<f64>,
    /// Lower is better (a latency).
    lower_better: bool,
}

/// Which of a case's figures a row compares: its main one, or (round trips) the
/// 99th percentile beside the median.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stat {
    Main,
    P99,
}

/// A case's figure `stat`: the p99 of each series for round trips that kept it.
fn figure_of(c: &CaseRecord, stat: Stat) -> Figure {
    match stat {
        Stat::Main => figure(c),
        Stat::P99 => Figure {
            values: c
                .latency
                .as_ref()
                .map(|l| l.series_p99_ns.iter().map(|&x| x as f64).collect())
                .unwrap_or_default(),
            lower_better: true,
        },
    }
}

/// The figure of a case: MB/s for a stream, the p50 round trip (each series' own
/// p50, tare off) for round trips, cycles/s for a sync primitive (set/clear, else
/// request/release).
fn figure(c: &CaseRecord) -> Figure {
    match c.workload {
        Workload::Stream => Figure {
            values: c.series.iter().map(|s| s.bytes_per_sec()).collect(),
            lower_better: false,
        },
        Workload::RoundTrip => Figure {
            values: c
                .latency
                .as_ref()
                .map(|l| l.series_p50_ns.iter().map(|&x| x as f64).collect())
                .unwrap_or_default(),
            lower_better: true,
        },
        Workload::Sync => Figure {
            values: c
                .sync
                .as_ref()
                .map(|s| {
                    let series = if s.set_clear_series.is_empty() {
                        &s.request_release_series
                    } else {
                        &s.set_clear_series
                    };
                    series
                        .iter()
                        .filter(|x| x.elapsed_ns > 0)
                        .map(|x| x.cycles as f64 / (x.elapsed_ns as f64 / 1e9))
                        .collect()
                })
                .unwrap_or_default(),
            lower_better: false,
        },
    }
}

/// The unit of a case's figure, for the table.
fn unit(c: &CaseRecord) -> &'static str {
    match c.workload {
        Workload::Stream => "MB/s",
        Workload::RoundTrip => "µs p50",
        Workload::Sync => "cycles/s",
    }
}

/// A figure in its unit, for the table.
fn fmt_value(unit: &str, v: f64) -> String {
    match unit {
        "MB/s" => format!("{} MB/s", fmt_mbps(v)),
        "µs p50" | "µs p99" => format!("{:.2} µs", v / 1e3),
        _ => format!("{}/s", crate::units::fmt_rate(v)),
    }
}

/// The smallest change marked by default: 5%.
pub const DEFAULT_MIN_CHANGE: f64 = 0.05;

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

/// Compare one case in two runs on its figure. A change is marked when the 95%
/// bootstrap interval of B/A excludes 1 **and** B/A is beyond `min_change` (a
/// fraction: 0.05 = 5%) either way, measured on a log scale so that 1.05× and
/// 1/1.05× count alike.
pub fn compare_case(a: &CaseRecord, b: &CaseRecord, min_change: f64) -> Row {
    compare_on(a, b, Stat::Main, min_change)
}

/// [`compare_case`] on figure `stat`: a round trip's p99 row is named `… · p99`.
fn compare_on(a: &CaseRecord, b: &CaseRecord, stat: Stat, min_change: f64) -> Row {
    let (fa, fb) = (figure_of(a, stat), figure_of(b, stat));
    let mut case = shown(a, b);
    let unit = match stat {
        Stat::Main => unit(a),
        Stat::P99 => {
            case.push_str(" · p99");
            "µs p99"
        }
    };
    let (Some(sa), Some(sb)) = (spread(&fa.values), spread(&fb.values)) else {
        let why = if fa.values.is_empty() {
            "did not run in A"
        } else {
            "did not run in B"
        };
        return Row {
            case,
            unit,
            a: spread(&fa.values).map(|s| s.median),
            b: spread(&fb.values).map(|s| s.median),
            ratio: None,
            interval: None,
            p: None,
            verdict: Verdict::NotComparable,
            why: why.into(),
            lower_better: fa.lower_better,
        };
    };
    if sa.median <= 0.0 {
        return Row {
            case,
            unit,
            a: Some(sa.median),
            b: Some(sb.median),
            ratio: None,
            interval: None,
            p: None,
            verdict: Verdict::NotComparable,
            why: "nothing measured in A".into(),
            lower_better: fa.lower_better,
        };
    }
    let ratio = sb.median / sa.median;
    let row = |verdict, interval, p, why: String| Row {
        case: case.clone(),
        unit,
        a: Some(sa.median),
        b: Some(sb.median),
        ratio: Some(ratio),
        interval,
        p,
        verdict,
        why,
        lower_better: fa.lower_better,
    };
    let (na, nb) = (fa.values.len(), fb.values.len());
    if na < 2 || nb < 2 {
        return row(
            Verdict::NoiseUnknown,
            None,
            None,
            "one series only: no spread to judge by".to_string(),
        );
    }
    if smallest_p(na, nb) > ALPHA {
        return row(
            Verdict::NoiseUnknown,
            None,
            None,
            format!(
                "{na} and {nb} series: even with no overlap at all the split could be chance \
                 (p ≥ {:.2}); take 4 or more a side (--repeat)",
                smallest_p(na, nb)
            ),
        );
    }
    let p = rank_sum_p(&fa.values, &fb.values);
    let (lo, hi) = ratio_interval(&fa.values, &fb.values);
    let ci = format!("95% interval {lo:.2}–{hi:.2}×");
    let row = |verdict, why| row(verdict, Some((lo, hi)), Some(p), why);
    if p > ALPHA {
        return row(
            Verdict::Unchanged,
            format!("within the noise: p = {p:.2} ({na} and {nb} series ranked), {ci}"),
        );
    }
    if lo <= 1.0 && hi >= 1.0 {
        return row(
            Verdict::Unchanged,
            format!("within the noise: {ci} holds 1"),
        );
    }
    if ratio.ln().abs() <= (1.0 + min_change).ln() + 1e-12 {
        return row(
            Verdict::Unchanged,
            format!(
                "p = {p:.3}, {ci}, but under the {:.0}% threshold",
                min_change * 100.0
            ),
        );
    }
    let better = (ratio > 1.0) != fa.lower_better;
    row(
        if better {
            Verdict::Faster
        } else {
            Verdict::Slower
        },
        format!(
            "p = {p:.3}, {ci}, beyond the {:.0}% threshold",
            min_change * 100.0
        ),
    )
}

/// The level of the test: a change is called where fewer than 5% of the calls
/// would be chance (over the cases compared together).
pub const ALPHA: f64 = 0.05;

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

/// Benjamini–Hochberg over the rows compared together: a change stands only
/// where its p-value is within the step-up cutoff, which holds the expected
/// share of false calls among the calls to [`ALPHA`] (and, when nothing changed,
/// the chance of any call at all).
fn hold_false_discoveries(rows: &mut [Row]) {
    let mut ps: Vec<f64> = rows.iter().filter_map(|r| r.p).collect();
    let m = ps.len();
    ps.sort_by(|x, y| x.total_cmp(y));
    let cutoff = ps
        .iter()
        .enumerate()
        .filter(|(k, p)| **p <= (k + 1) as f64 / m as f64 * ALPHA)
        .map(|(_, p)| *p)
        .fold(f64::NEG_INFINITY, f64::max);
    for r in rows.iter_mut() {
        let Some(p) = r.p else { continue };
        if matches!(r.verdict, Verdict::Faster | Verdict::Slower) && p > cutoff {
            r.verdict = Verdict::Unchanged;
            r.why = format!(
                "p = {p:.3} alone, but not over the {m} cases compared (at most 5% false \
                 calls: Benjamini–Hochberg)"
            );
        }
    }
}

/// Every case of `a` and `b`, in `a`'s order then `b`'s new ones.
pub fn compare(a: &RunRecord, b: &RunRecord, min_change: f64) -> Vec<Row> {
    let mut rows = Vec::new();
    for ca in &a.cases {
        let k = key(ca);
        match b.cases.iter().find(|cb| key(cb) == k) {
            Some(cb) => {
                rows.push(compare_case(ca, cb, min_change));
                // Round trips: the tail too, where both runs kept each series' p99.
                let kept = |c: &CaseRecord| !figure_of(c, Stat::P99).values.is_empty();
                if kept(ca) && kept(cb) {
                    rows.push(compare_on(ca, cb, Stat::P99, min_change));
                }
            }
            None => rows.push(Row {
                case: shown(ca, ca),
                unit: unit(ca),
                a: spread(&figure(ca).values).map(|s| s.median),
                b: None,
                ratio: None,
                interval: None,
                p: None,
                verdict: Verdict::NotComparable,
                why: elsewhere(ca, &a.cases, &b.cases, "A", "B"),
                lower_better: figure(ca).lower_better,
            }),
        }
    }
    for cb in &b.cases {
        let k = key(cb);
        if !a.cases.iter().any(|ca| key(ca) == k) {
            rows.push(Row {
                case: shown(cb, cb),
                unit: unit(cb),
                a: None,
                b: spread(&figure(cb).values).map(|s| s.median),
                ratio: None,
                interval: None,
                p: None,
                verdict: Verdict::NotComparable,
                why: elsewhere(cb, &b.cases, &a.cases, "B", "A"),
                lower_better: figure(cb).lower_better,
            });
        }
    }
    hold_false_discoveries(&mut rows);
    rows
}

/// Why a case of run `this` has no match in `other`: only there, or (the same case
/// on other CPUs) the CPUs differ, which is a different placement, not compared.
fn elsewhere(
    c: &CaseRecord,
    mine: &[CaseRecord],
    other: &[CaseRecord],
    this: &str,
    that: &str,
) -> String {
    let sans = |x: &CaseRecord| key(x).replacen(&placement_key(&x.placement), "", 1);
    // The other run's placements of this case that this run did not measure.
    let cpus: Vec<String> = other
        .iter()
        .filter(|o| sans(o) == sans(c) && !mine.iter().any(|m| key(m) == key(o)))
        .map(|o| o.placement.shown())
        .collect();
    if cpus.is_empty() {
        format!("only in {this}")
    } else {
        format!(
            "the CPUs differ: {that} ran it on {}; a different placement is not compared",
            cpus.join(", ")
        )
    }
}

/// How many cases got faster, slower, did not change, and could not be judged.
pub fn summary(rows: &[Row]) -> String {
    let n = |v: Verdict| rows.iter().filter(|r| r.verdict == v).count();
    let mut s = format!(
        "{} faster, {} slower, {} unchanged (within the noise)",
        n(Verdict::Faster),
        n(Verdict::Slower),
        n(Verdict::Unchanged)
    );
    if n(Verdict::NoiseUnknown) > 0 {
        s.push_str(&format!(
            ", {} not judged (too few series)",
            n(Verdict::NoiseUnknown)
        ));
    }
    if n(Verdict::NotComparable) > 0 {
        s.push_str(&format!(
            ", {} not comparable (absent from or not run in one of them)",
            n(Verdict::NotComparable)
        ));
    }
    s
}

/// The rows as records for `--format json|csv`.
pub fn records(rows: &[Row]) -> Vec<serde_json::Value> {
    rows.iter()
        .map(|r| {
            serde_json::json!({
                "case": r.case,
                "unit": r.unit,
                "a": r.a,
                "b": r.b,
                "ratio_b_over_a": r.ratio,
                "interval_low": r.interval.map(|i| i.0),
                "interval_high": r.interval.map(|i| i.1),
                "p_value": r.p,
                "change": match r.verdict {
                    Verdict::Faster => "faster",
                    Verdict::Slower => "slower",
                    Verdict::Unchanged => "unchanged",
                    Verdict::NoiseUnknown => "not-judged",
                    Verdict::NotComparable => "not-comparable",
                },
                "why": r.why,
            })
        })
        .collect()
}

fn describe(label: &str, id: &str, r: &RunRecord) -> String {
    format!(
        "{label} = run {id} on {} (Linux {}, {} CPUs)",
        r.machine.hostname, r.machine.kernel, r.machine.cpus
    )
}

/// The comparison as a view for the table and markdown renderers.
pub fn view(a_id: &str, a: &RunRecord, b_id: &str, b: &RunRecord, min_change: f64) -> View {
    let rows = compare(a, b, min_change);
    let mark = |v: Verdict| match v {
        Verdict::Faster => "FASTER",
        Verdict::Slower => "SLOWER",
        Verdict::Unchanged => "",
        Verdict::NoiseUnknown => "?",
        Verdict::NotComparable => "-",
    };
    let table = Table {
        title: format!("{}; {}", describe("A", a_id, a), describe("B", b_id, b)),
        header: ["case", "A", "B", "B/A", "change", "why"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        rows: rows
            .iter()
            .map(|r| {
                let opt = |v: Option<f64>| {
                    v.map(|x| fmt_value(r.unit, x))
                        .unwrap_or_else(|| "-".into())
                };
                vec![
                    r.case.clone(),
                    opt(r.a),
                    opt(r.b),
                    r.ratio
                        .map(|x| format!("{x:.2}×"))
                        .unwrap_or_else(|| "-".into()),
                    mark(r.verdict).to_string(),
                    r.why.clone(),
                ]
            })
            .collect(),
        notes: vec![
            format!(
                "Each case is compared on its median over the series: MB/s for streams, the \
                 p50 and p99 round trip for latency (each series' own; lower is faster), \
                 cycles/s for sync. A change is \
                 marked only when a rank-sum test of the two runs' series gives p ≤ 0.05 with \
                 false calls held to 5% over all the cases compared (Benjamini–Hochberg), the \
                 95% bootstrap interval of B/A excludes 1, and B/A is beyond {:.0}% either \
                 way. Fewer than 4 series a side cannot show a change.",
                min_change * 100.0
            ),
            summary(&rows),
        ],
    };
    View {
        heading: format!(
            "Comparing run {a_id}{} with run {b_id}{}: {}",
            named(a),
            named(b),
            summary(&rows)
        ),
        tables: vec![table],
    }
}

/// A run's label in a heading: ` (baseline)`, or nothing.
fn named(r: &RunRecord) -> String {
    r.label
        .as_ref()
        .map(|l| format!(" ({l})"))
        .unwrap_or_default()
}

/// A matched pair's name as rows show it: its key, with the placement shown as B
/// labels it (`shared-l3 0→1`), and A's label beside when it differs (a run saved
/// before placement classes: `cross-cpu`).
fn shown(a: &CaseRecord, b: &CaseRecord) -> String {
    let mut k = key(a).replacen(&placement_key(&a.placement), &b.placement.shown(), 1);
    if a.placement.label != b.placement.label {
        k.push_str(&format!(" (A: {})", a.placement.label));
    }
    k
}

/// A case's placement as compare matches it: the exact CPUs when pinned (so runs
/// saved before placement classes, labelled `cross-cpu`, still match their
/// `shared-l3` successors on the same CPUs), else its label (`unpinned`).
fn placement_key(p: &ipcperf_core::record::PlacementRecord) -> String {
    // Two machines' CPU numbers are not one machine's: never the same case.
    if p.label == "other-host" {
        return format!(
            "other-host {}→{}",
            p.writer_cpu.map_or("-".into(), |c| c.to_string()),
            p.reader_cpu.map_or("-".into(), |c| c.to_string())
        );
    }
    match (p.writer_cpu, p.reader_cpu) {
        (Some(w), Some(r)) => format!("cpus {w}→{r}"),
        _ => p.label.clone(),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_same_case_on_other_cpus_is_named_not_matched() {
        let a = crate::testdata::run();
        let mut b = crate::testdata::run();
        for c in &mut b.cases {
            if c.placement.writer_cpu != c.placement.reader_cpu {
                c.placement.reader_cpu = Some(8);
                c.placement.label = "other-l3".into();
            }
        }
        let rows = compare(&a, &b, 0.05);
        let moved: Vec<&Row> = rows
            .iter()
            .filter(|r| r.why.starts_with("the CPUs differ"))
            .collect();
        assert!(!moved.is_empty());
        assert!(
            moved
                .iter()
                .any(|r| r.why.contains("B ran it on other-l3 0→8")),
            "{moved:?}"
        );
        assert!(
            moved
                .iter()
                .any(|r| r.why.contains("A ran it on cross-cpu 0→1")),
            "{moved:?}"
        );
        assert!(rows.iter().all(|r| r.why != "only in A"));
    }

    use super::*;
    use crate::testdata;
    use ipcperf_core::mode::Mode;

    #[test]
    fn doubled_throughput_is_marked_faster() {
        let a = testdata::case(
            "pipe",
            Mode::Processes,
            4096,
            "same-cpu",
            &[97.0, 98.0, 100.0, 102.0, 103.0],
        );
        let b = testdata::case(
            "pipe",
            Mode::Processes,
            4096,
            "same-cpu",
            &[194.0, 196.0, 200.0, 204.0, 206.0],
        );
        let r = compare_case(&a, &b, DEFAULT_MIN_CHANGE);
        assert_eq!(r.verdict, Verdict::Faster);
        assert!((r.ratio.unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(
            compare_case(&b, &a, DEFAULT_MIN_CHANGE).verdict,
            Verdict::Slower
        );
    }

    #[test]
    fn difference_inside_the_noise_is_not_marked() {
        // 5% apart, but each run's series spread over 20%.
        let a = testdata::case(
            "pipe",
            Mode::Processes,
            4096,
            "same-cpu",
            &[90.0, 95.0, 100.0, 105.0, 110.0],
        );
        let b = testdata::case(
            "pipe",
            Mode::Processes,
            4096,
            "same-cpu",
            &[95.0, 100.0, 105.0, 110.0, 115.0],
        );
        let r = compare_case(&a, &b, DEFAULT_MIN_CHANGE);
        assert_eq!(r.verdict, Verdict::Unchanged, "{r:?}");
        // The same 5% with tight series is beyond the spread, but not beyond the
        // default threshold; with no threshold it is a change, and 10% is one anyway.
        let a = testdata::case(
            "pipe",
            Mode::Processes,
            4096,
            "same-cpu",
            &[99.8, 99.9, 100.0, 100.1, 100.2],
        );
        let b = testdata::case(
            "pipe",
            Mode::Processes,
            4096,
            "same-cpu",
            &[104.8, 104.9, 105.0, 105.1, 105.2],
        );
        let r = compare_case(&a, &b, DEFAULT_MIN_CHANGE);
        assert_eq!(r.verdict, Verdict::Unchanged, "{r:?}");
        assert!(r.why.contains("threshold"), "{r:?}");
        assert_eq!(compare_case(&a, &b, 0.0).verdict, Verdict::Faster);
        let c = testdata::case(
            "pipe",
            Mode::Processes,
            4096,
            "same-cpu",
            &[109.8, 109.9, 110.0, 110.1, 110.2],
        );
        assert_eq!(
            compare_case(&a, &c, DEFAULT_MIN_CHANGE).verdict,
            Verdict::Faster
        );
    }

    #[test]
    fn noisy_b_alone_is_enough_to_hold_back_a_verdict() {
        let a = testdata::case(
            "pipe",
            Mode::Processes,
            64,
            "same-cpu",
            &[100.0, 100.0, 100.0, 100.0, 100.0],
        );
        let b = testdata::case(
            "pipe",
            Mode::Processes,
            64,
            "same-cpu",
            &[80.0, 105.0, 130.0, 155.0, 180.0],
        );
        assert_eq!(
            compare_case(&a, &b, DEFAULT_MIN_CHANGE).verdict,
            Verdict::Unchanged
        );
    }

    #[test]
    fn rank_sum_p_values_are_exact_for_small_runs_and_drawn_for_large() {
        // No overlap: 2 of the C(6,3) = 20 splits are as lopsided.
        assert!((rank_sum_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]) - 0.1).abs() < 1e-12);
        assert!((smallest_p(3, 3) - 0.1).abs() < 1e-12);
        assert!(
            (rank_sum_p(&[6.0, 7.0, 8.0, 9.0, 10.0], &[1.0, 2.0, 3.0, 4.0, 5.0]) - 2.0 / 252.0)
                .abs()
                < 1e-12
        );
        // Interleaved values: nothing to see.
        let p = rank_sum_p(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]);
        assert!(p > 0.5, "{p}");
        // All equal: every split ties, p = 1.
        assert_eq!(rank_sum_p(&[5.0; 4], &[5.0; 4]), 1.0);
        // 12 a side (2.7M splits): drawn, and the same data gives the same p.
        let a: Vec<f64> = (0..12).map(f64::from).collect();
        let b: Vec<f64> = (100..112).map(f64::from).collect();
        let p = rank_sum_p(&a, &b);
        assert!(p < 1e-3, "{p}");
        assert_eq!(p, rank_sum_p(&a, &b));
        let mixed: Vec<f64> = (0..12).map(|i| f64::from(i) + 0.5).collect();
        assert!(rank_sum_p(&a, &mixed) > 0.3);
    }

    #[test]
    fn three_series_a_side_cannot_show_a_change() {
        let a = testdata::case(
            "pipe",
            Mode::Processes,
            64,
            "same-cpu",
            &[99.0, 100.0, 101.0],
        );
        let b = testdata::case(
            "pipe",
            Mode::Processes,
            64,
            "same-cpu",
            &[199.0, 200.0, 201.0],
        );
        let r = compare_case(&a, &b, DEFAULT_MIN_CHANGE);
        assert_eq!(r.verdict, Verdict::NoiseUnknown, "{r:?}");
        assert!(r.why.contains("--repeat"), "{r:?}");
    }

    /// One case of twenty at p = 0.008 is what chance gives now and then: not a
    /// change. Twenty at that p are.
    #[test]
    fn false_discoveries_are_held_over_the_cases_compared() {
        let a5 = [97.0, 98.0, 100.0, 102.0, 103.0];
        let same = [97.5, 98.5, 100.5, 101.5, 103.5];
        let up = [110.0, 111.0, 112.0, 113.0, 114.0];
        let make = |sizes: usize, changed: usize| {
            let mut a = testdata::run();
            a.cases.clear();
            let mut b = a.clone();
            for i in 0..sizes {
                let size = 64u64 << i;
                a.cases.push(testdata::case(
                    "pipe",
                    Mode::Processes,
                    size,
                    "same-cpu",
                    &a5,
                ));
                let v: &[f64] = if i < changed { &up } else { &same };
                b.cases
                    .push(testdata::case("pipe", Mode::Processes, size, "same-cpu", v));
            }
            compare(&a, &b, DEFAULT_MIN_CHANGE)
        };
        let one = make(20, 1);
        assert_eq!(one[0].verdict, Verdict::Unchanged, "{:?}", one[0]);
        assert!(one[0].why.contains("Benjamini"), "{:?}", one[0]);
        assert!(one.iter().all(|r| r.verdict == Verdict::Unchanged));
        // Alone, the same case is a change.
        let alone = make(1, 1);
        assert_eq!(alone[0].verdict, Verdict::Faster, "{:?}", alone[0]);
        let all = make(20, 20);
        assert!(all.iter().all(|r| r.verdict == Verdict::Faster), "{all:?}");
    }

    /// Latency is compared on its median and its tail: the same p50 with p99
    /// doubled is a slower p99 row and an unchanged p50 row.
    #[test]
    fn round_trips_are_compared_on_p50_and_p99() {
        let lat = |p50: &[u64], p99: &[u64]| {
            let mut c = testdata::paced_case("unix", 1000, 1000.0, 10_000, 20_000, 30_000);
            let l = c.latency.as_mut().unwrap();
            l.series_p50_ns = p50.to_vec();
            l.series_p99_ns = p99.to_vec();
            c
        };
        let mut a = testdata::run();
        a.cases = vec![lat(
            &[9_800, 9_900, 10_000, 10_100, 10_200],
            &[19_800, 19_900, 20_000, 20_100, 20_200],
        )];
        let mut b = a.clone();
        b.cases = vec![lat(
            &[9_850, 9_950, 10_050, 10_150, 10_250],
            &[39_800, 39_900, 40_000, 40_100, 40_200],
        )];
        let rows = compare(&a, &b, DEFAULT_MIN_CHANGE);
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(rows[0].unit, "µs p50");
        assert_eq!(rows[0].verdict, Verdict::Unchanged, "{:?}", rows[0]);
        assert_eq!(rows[1].unit, "µs p99");
        assert!(rows[1].case.ends_with("· p99"), "{}", rows[1].case);
        assert_eq!(rows[1].verdict, Verdict::Slower, "{:?}", rows[1]);
        assert!((rows[1].ratio.unwrap() - 2.0).abs() < 1e-9);
        // A run kept before series p99 existed: the p50 row alone.
        let mut old = a.clone();
        old.cases[0].latency.as_mut().unwrap().series_p99_ns.clear();
        assert_eq!(compare(&old, &b, DEFAULT_MIN_CHANGE).len(), 1);
    }

    /// A case between two machines is never the same case as one on this
    /// machine's CPUs of the same numbers.
    #[test]
    fn other_host_is_not_matched_with_the_same_cpu_numbers_here() {
        let a = testdata::run();
        let mut b = testdata::run();
        for c in &mut b.cases {
            c.placement.label = "other-host".into();
        }
        let rows = compare(&a, &b, DEFAULT_MIN_CHANGE);
        let judged = rows
            .iter()
            .filter(|r| r.verdict != Verdict::NotComparable)
            .count();
        assert_eq!(judged, 0, "{rows:?}");
        // Two --peer runs do match each other.
        let rows = compare(&b, &b, DEFAULT_MIN_CHANGE);
        assert!(rows.iter().any(|r| r.verdict == Verdict::Unchanged));
    }

    #[test]
    fn single_series_and_missing_cases_are_not_judged() {
        let a = testdata::case("pipe", Mode::Processes, 64, "same-cpu", &[100.0]);
        let b = testdata::case("pipe", Mode::Processes, 64, "same-cpu", &[300.0]);
        assert_eq!(
            compare_case(&a, &b, DEFAULT_MIN_CHANGE).verdict,
            Verdict::NoiseUnknown
        );

        let run_a = testdata::run();
        let mut run_b = testdata::run();
        run_b.cases.retain(|c| c.mechanism != "tcp");
        for c in &mut run_b.cases {
            if c.mechanism == "pipe" {
                for s in &mut c.series {
                    s.bytes *= 2;
                }
                c.summarize();
            }
        }
        let rows = compare(&run_a, &run_b, DEFAULT_MIN_CHANGE);
        assert_eq!(rows.len(), run_a.cases.len());
        assert_eq!(
            summary(&rows),
            "6 faster, 0 slower, 6 unchanged (within the noise), 8 not comparable (absent from or not run in one of them)"
        );
    }
}
