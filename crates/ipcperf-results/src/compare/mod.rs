//! Two runs case by case: the ratio of their medians, marked as a change only when
//! three things hold: Welch's t-test on the logs of the two runs' series says the
//! difference is not chance, with the chance of any false call held to 5% over
//! all the cases compared (Holm: an A/A pair of 48 cases must not show one by
//! luck, nor a real change let a lucky one through); the 95% bootstrap interval
//! of the ratio excludes 1; and the ratio is beyond a minimum change (default
//! 5%). Each row also says the smallest change it could have called (had every
//! series of B moved by it, this case alone), so that a row that could not tell
//! is never counted as unchanged. The series are
//! taken in rounds across the run (see `ipcperf_core::runner::run_all`), so each
//! case's spread holds the drift of the whole run, not only of one second of it.
//! Records in, a view out.

mod confirm;
mod counters;
mod cycles;
mod names;
use names::{elsewhere, placement_key, shown};
pub mod moderated;
mod parts;
pub(crate) mod runs;
#[cfg(test)]
mod simulate;
pub(crate) mod stats;
mod tail;
mod view;
mod whole;
pub use confirm::{called_cases, confirm, Confirmed};
pub use counters::{is_counter, CPU_PER_MSG, SWITCHES};
pub use moderated::Model;
use runs::across_runs;
pub use runs::{history_of, keep_like, same_machine, shares_a_case};
pub use runs::{traits_of, History, HISTORY_RUNS};
pub use stats::ratio_interval;
pub use view::{
    near_limit, records, summary, view, view_against, view_against_model, view_of_rows, view_with,
};
pub use whole::{whole_run, Whole, WHOLE_CASES, WHOLE_RUNS};

use ipcperf_core::record::{CaseRecord, RunRecord};
use ipcperf_core::stats::spread;
use ipcperf_core::workload::Workload;

use crate::units::{fmt_mbps, fmt_size};

/// What became of one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    /// No change beyond the threshold, and one that size would have been called.
    Unchanged,
    /// No change called, but the series are too spread (or too few) for a change
    /// of the threshold's size to have been called: [`Row::detectable`] says what
    /// could have been.
    CouldNotTell,
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
    /// The smallest change (a fraction: 0.08 = 8%) this row could have called,
    /// had every series of B moved by it and no other case: at least the threshold.
    pub detectable: Option<f64>,
    /// The test's standard error (of the difference of mean logs) and degrees
    /// of freedom, for [`Row::detectable`] over the rows compared together.
    pub se_df: Option<(f64, f64)>,
    /// The least [`Row::detectable`] can be whatever the series say: a p99
    /// row's, from the few samples beyond each run's p99 (see [`tail`]).
    pub floor: Option<f64>,
    /// Judged against the history: the case's run-to-run standard deviation
    /// of log figure (its own, over all the runs) and how many runs A is.
    pub runs: Option<(f64, usize)>,
    /// The smallest change any test could call here: [`moderated::limit`] for
    /// [`Row::runs`] over the rows compared together (at least the threshold).
    pub limit: Option<f64>,
}

/// The smallest change callable with standard error `se` and `df` degrees of
/// freedom when `m` rows are compared together (a lone change must reach
/// p ≤ 0.05 / m, under Holm as under Benjamini–Hochberg), and at least
/// `min_change`.
fn smallest_change(se: f64, df: f64, m: usize, min_change: f64) -> f64 {
    let t = stats::t_critical(df, ALPHA / m.max(1) as f64);
    ((t * se).exp() - 1.0).max(min_change)
}

/// The identity of a case across runs (options hold facts found at set-up, such
/// as the pipe size granted, which may differ between machines: left out).
pub(crate) fn key(c: &CaseRecord) -> String {
    key_at(c, &placement_key(&c.placement))
}

/// A case's identity across hosts: as [`key`], with the placement's class
/// (`shared-l3`, `smt-sibling`, `unpinned`) in place of its CPU numbers, which
/// differ from one host to the next. What `fleet` and `trend` match cases by.
pub(crate) fn class_key(c: &CaseRecord) -> String {
    key_at(c, &c.placement.label)
}

/// A case's identity across hosts and its figures (one per series), as the
/// store keeps them for `fleet` and `trend`; None for a case with nothing to
/// compare (failed, skipped, many pairs, no series).
pub(crate) fn comparable(c: &CaseRecord) -> Option<(String, Vec<f64>)> {
    if c.status != ipcperf_core::record::CaseStatus::Ok || c.pairs.is_some() {
        return None;
    }
    let f = figure(c);
    if f.values.is_empty() || f.values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    Some((class_key(c), f.values))
}

fn key_at(c: &CaseRecord, placement: &str) -> String {
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
    // A replay is the same case only for the same pattern, speed and loops.
    let pattern = c
        .replay
        .as_ref()
        .map(|r| {
            let id = r.sha256.as_deref().map_or_else(
                || r.source.clone(),
                |h| format!("{} {}", r.source, &h[..h.len().min(12)]),
            );
            let conv = r.conversation.map(|n| format!(" #{n}")).unwrap_or_default();
            let speed = if r.speed == 1.0 {
                String::new()
            } else {
                format!(" {}×", r.speed)
            };
            let loops = if r.loops > 1 {
                format!(" ×{}", r.loops)
            } else {
                String::new()
            };
            format!(" [{id}{conv}{speed}{loops}]")
        })
        .unwrap_or_default();
    // `--idle`: a case held at another idle state is another case.
    let idle = c
        .options
        .get("idle")
        .map(|v| format!(" idle={v}"))
        .unwrap_or_default();
    format!(
        "{}{pattern} {}{zero_copy} {} {} {} {}{}{}{rate}{idle}",
        c.workload.name(),
        c.mechanism,
        c.mode.name(),
        fmt_size(c.block_size),
        placement,
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
pub(crate) struct Figure {
    pub(crate) values: Vec<f64>,
    /// Lower is better (a latency).
    pub(crate) lower_better: bool,
}

/// Which of a case's figures a row compares: its main one, or (round trips) the
/// 99th percentile beside the median.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stat {
    Main,
    P99,
    /// A sync case's request/release cycles, where its figure is set/clear's.
    RequestRelease,
}

/// A case's figure `stat`: the p99 of each series for round trips that kept it.
fn figure_of(c: &CaseRecord, stat: Stat) -> Figure {
    match stat {
        Stat::Main => figure(c),
        Stat::RequestRelease => cycles::cycles(c, |s| &s.request_release_series),
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
pub(crate) fn figure(c: &CaseRecord) -> Figure {
    match c.workload {
        Workload::Stream => Figure {
            values: c.series.iter().map(|s| s.bytes_per_sec()).collect(),
            lower_better: false,
        },
        Workload::RoundTrip | Workload::Replay => Figure {
            values: c
                .latency
                .as_ref()
                .map(|l| l.series_p50_ns.iter().map(|&x| x as f64).collect())
                .unwrap_or_default(),
            lower_better: true,
        },
        Workload::Sync => cycles::cycles(c, |s| {
            if s.set_clear_series.is_empty() {
                &s.request_release_series
            } else {
                &s.set_clear_series
            }
        }),
    }
}

/// The unit of a case's figure, for the table.
fn unit(c: &CaseRecord) -> &'static str {
    match c.workload {
        Workload::Stream => "MB/s",
        Workload::RoundTrip | Workload::Replay => "µs p50",
        // Which cycle: a primitive that hands a token is compared on set/clear,
        // one only its owner may release on request/release ("cycles/s" said
        // neither).
        Workload::Sync if cycles::set_clear(c) => "set/clear cycles/s",
        Workload::Sync => "request/release cycles/s",
    }
}

/// A figure in its unit, for the table.
fn fmt_value(unit: &str, v: f64) -> String {
    match unit {
        "MB/s" => format!("{} MB/s", fmt_mbps(v)),
        // Significant digits below 0.1 µs: a memcpy's CPU time per message
        // printed "0.00 µs" on both sides of a 1.00× ratio.
        "µs p50" | "µs p99" | PART | CPU_PER_MSG => {
            format!("{} µs", crate::units::fmt_figure(v / 1e3))
        }
        SWITCHES => crate::units::fmt_figure(v),
        _ => format!("{}/s", crate::units::fmt_rate(v)),
    }
}

/// The smallest change marked by default: 5%.
pub const DEFAULT_MIN_CHANGE: f64 = 0.05;

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
        Stat::RequestRelease => {
            case.push_str(" · request/release");
            "request/release cycles/s"
        }
    };
    judge(case, unit, &fa, &fb, min_change)
}

/// A row for one figure in two runs, judged on their series' values: Welch's t
/// on the logs, its interval, the threshold.
fn judge(case: String, unit: &'static str, fa: &Figure, fb: &Figure, min_change: f64) -> Row {
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
            detectable: None,
            se_df: None,
            floor: None,
            runs: None,
            limit: None,
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
            detectable: None,
            se_df: None,
            floor: None,
            runs: None,
            limit: None,
        };
    }
    let ratio = sb.median / sa.median;
    let row = |verdict, interval, p, why: String, se_df: Option<(f64, f64)>| Row {
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
        detectable: se_df.map(|(se, df)| smallest_change(se, df, 1, min_change)),
        se_df,
        floor: None,
        runs: None,
        limit: None,
    };
    let (na, nb) = (fa.values.len(), fb.values.len());
    let Some((p, se, df)) = stats::welch_log(&fa.values, &fb.values) else {
        return row(
            Verdict::NoiseUnknown,
            None,
            None,
            "one series only: no spread to judge by".to_string(),
            None,
        );
    };
    let (lo, hi) = ratio_interval(&fa.values, &fb.values);
    let ci = format!("95% interval {lo:.2}–{hi:.2}×");
    let row = |verdict, why| row(verdict, Some((lo, hi)), Some(p), why, Some((se, df)));
    // Not called: unchanged where a change of the threshold's size would have
    // been, else "could not tell" (settled over the rows in `settle`).
    let quiet = |why: String| {
        let r = row(Verdict::Unchanged, why);
        settle(r, min_change)
    };
    if p > ALPHA {
        return quiet(format!(
            "within the noise: p = {p:.2} ({na} and {nb} series), {ci}"
        ));
    }
    if lo <= 1.0 && hi >= 1.0 {
        return quiet(format!("within the noise: {ci} holds 1"));
    }
    if ratio.ln().abs() <= (1.0 + min_change).ln() + 1e-12 {
        return row(
            Verdict::Unchanged,
            format!(
                "p = {}, {ci}, but under the {:.0}% threshold",
                fmt_p(p),
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
            "p = {}, {ci}, beyond the {:.0}% threshold",
            fmt_p(p),
            min_change * 100.0
        ),
    )
}

/// Whether a row showed a real change smaller than the threshold (p ≤ 0.05, its
/// interval clear of 1, the ratio within the threshold): it told, and is
/// unchanged whatever it could have called.
fn told_small(r: &Row, min_change: f64) -> bool {
    let (Some(p), Some((lo, hi)), Some(ratio)) = (r.p, r.interval, r.ratio) else {
        return false;
    };
    p <= ALPHA && (lo > 1.0 || hi < 1.0) && ratio.ln().abs() <= (1.0 + min_change).ln() + 1e-12
}

/// A p-value in three figures: 0.012, 3.1e-5.
fn fmt_p(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.3}")
    } else {
        format!("{p:.1e}")
    }
}

/// An uncalled row: unchanged where the smallest change it could call is the
/// threshold, else could not tell.
fn settle(mut r: Row, min_change: f64) -> Row {
    if r.verdict == Verdict::Unchanged || r.verdict == Verdict::CouldNotTell {
        let could = r.detectable.unwrap_or(f64::INFINITY);
        r.verdict = if could <= min_change * (1.0 + 1e-9) {
            Verdict::Unchanged
        } else {
            Verdict::CouldNotTell
        };
    }
    r
}

/// The level of the test: a change is called where fewer than 5% of the calls
/// would be chance (over the cases compared together).
pub const ALPHA: f64 = 0.05;

/// How the rows of a family are held together.
#[derive(Clone, Copy)]
enum Hold {
    /// Holm's step-down: the chance of any false call among the family held to
    /// [`ALPHA`], whatever the other rows did (each called row stands on its
    /// own against all compared).
    FamilyWise,
    /// Benjamini–Hochberg's step-up: the expected share of false calls among
    /// the calls held to [`ALPHA`] (a strong call lowers the bar for the next).
    FalseDiscoveries,
}

/// The cases are held family-wise (Holm): a gate's verdicts, read one row at a
/// time, where a slowed case once let a borderline one through under
/// Benjamini–Hochberg (the power measured on real runs, `bench/verdicts/`).
/// `--explain`'s parts and the per-message counters, which say why and are
/// never gated, are families of their own under Benjamini–Hochberg, so that
/// judging them never makes a case harder to call.
fn hold_families(rows: &mut [Row], min_change: f64) {
    hold_in_family(rows, min_change, Hold::FamilyWise, is_case);
    hold_in_family(rows, min_change, Hold::FalseDiscoveries, |r| r.unit == PART);
    hold_in_family(rows, min_change, Hold::FalseDiscoveries, is_counter);
}

/// Whether a row judges a case's own figure: not a part of `--explain`'s nor a
/// counter, which say why and are never gated.
pub fn is_case(r: &Row) -> bool {
    r.unit != PART && !is_counter(r)
}

/// The unit of a row of `--explain`'s parts.
pub const PART: &str = "µs part";

fn hold_in_family(rows: &mut [Row], min_change: f64, hold: Hold, ours: impl Fn(&Row) -> bool) {
    let ps: Vec<f64> = rows
        .iter()
        .filter(|r| ours(r))
        .filter_map(|r| r.p)
        .collect();
    let m = ps.len();
    let (cutoff, how) = match hold {
        Hold::FamilyWise => (
            stats::step_down_cutoff(ps, ALPHA),
            "the chance of any false call held to 5%: Holm",
        ),
        Hold::FalseDiscoveries => (
            stats::step_up_cutoff(ps, ALPHA),
            "at most 5% false calls: Benjamini–Hochberg",
        ),
    };
    for r in rows.iter_mut().filter(|r| ours(r)) {
        // What each row could have called, with the m rows compared together.
        if let Some((se, df)) = r.se_df {
            let could = smallest_change(se, df, m, min_change);
            r.detectable = Some(r.floor.map_or(could, |f| could.max(f)));
        }
        if let Some((sd, k)) = r.runs {
            r.limit = Some(moderated::limit(sd, k, m, min_change));
        }
        let Some(p) = r.p else { continue };
        if matches!(r.verdict, Verdict::Faster | Verdict::Slower) && p > cutoff {
            r.verdict = Verdict::Unchanged;
            r.why = format!(
                "p = {} alone, but not over the {m} rows compared ({how})",
                fmt_p(p)
            );
        }
        if matches!(r.verdict, Verdict::Unchanged | Verdict::CouldNotTell)
            && !told_small(r, min_change)
        {
            let settled = settle(r.clone(), min_change);
            r.verdict = settled.verdict;
        }
    }
}

/// Every case of `a` and `b`, in `a`'s order then `b`'s new ones.
pub fn compare(a: &RunRecord, b: &RunRecord, min_change: f64) -> Vec<Row> {
    compare_with(a, b, min_change, &History::new())
}

/// [`compare`], judging each case that has earlier runs in `history` against
/// the spread of their medians (how much the figure moves from one run to the
/// next, moderated over the cases) in place of its series' spread.
pub fn compare_with(a: &RunRecord, b: &RunRecord, min_change: f64, history: &History) -> Vec<Row> {
    compare_against(std::slice::from_ref(a), b, min_change, history)
}

/// [`compare_with`] with several runs as A (`baseline`, A itself first, then
/// earlier runs of the same machine): each case that has a run-to-run spread in
/// `history` is judged B against the mean of its log medians in those runs.
/// Rows name A's figure as that geometric mean. `baseline` must not be empty.
pub fn compare_against(
    baseline: &[RunRecord],
    b: &RunRecord,
    min_change: f64,
    history: &History,
) -> Vec<Row> {
    compare_against_model(baseline, b, min_change, &moderated::fit(history))
}

/// [`compare_against`] with the run-to-run model already fitted over the
/// history (fit it once where a comparison is shown several ways).
pub fn compare_against_model(
    baseline: &[RunRecord],
    b: &RunRecord,
    min_change: f64,
    model: &moderated::Model,
) -> Vec<Row> {
    let a = &baseline[0];
    let mut rows = Vec::new();
    for ca in &a.cases {
        let k = key(ca);
        match b.cases.iter().find(|cb| key(cb) == k) {
            Some(cb) => {
                let mut row = compare_case(ca, cb, min_change);
                if let Some(spread) = model.spread(&k) {
                    let medians: Vec<f64> = baseline
                        .iter()
                        .filter_map(|r| r.cases.iter().find(|c| key(c) == k))
                        .filter_map(runs::median_of)
                        .collect();
                    row = across_runs(row, &medians, spread, min_change);
                }
                rows.push(row);
                // Round trips: the tail too, where both runs kept each series' p99.
                let kept = |c: &CaseRecord| !figure_of(c, Stat::P99).values.is_empty();
                if kept(ca) && kept(cb) {
                    let row = compare_on(ca, cb, Stat::P99, min_change);
                    rows.push(tail::bound(row, ca, cb, min_change));
                }
                // Sync: request/release too, where both runs took it beside set/clear.
                let both = |c: &CaseRecord| {
                    cycles::set_clear(c) && !figure_of(c, Stat::RequestRelease).values.is_empty()
                };
                if both(ca) && both(cb) {
                    rows.push(compare_on(ca, cb, Stat::RequestRelease, min_change));
                }
                rows.extend(parts::explained_parts(ca, cb, min_change));
                rows.extend(counters::counter_rows(ca, cb, min_change));
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
                detectable: None,
                se_df: None,
                floor: None,
                runs: None,
                limit: None,
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
                detectable: None,
                se_df: None,
                floor: None,
                runs: None,
                limit: None,
            });
        }
    }
    hold_families(&mut rows, min_change);
    rows
}

#[cfg(test)]
mod tests;
