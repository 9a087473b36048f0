//! Two runs case by case: the ratio of their medians, marked as a change only when
//! it exceeds the spread of both runs' series and a minimum change (default 5%:
//! with three series a run's spread can come out small by chance, while runs
//! taken minutes apart on a shared machine differ by more). Records in, a view out.

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
        "µs p50" => format!("{:.2} µs", v / 1e3),
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
    let (fa, fb) = (figure(a), figure(b));
    let case = shown(a, b);
    let (Some(sa), Some(sb)) = (spread(&fa.values), spread(&fb.values)) else {
        let why = if fa.values.is_empty() {
            "did not run in A"
        } else {
            "did not run in B"
        };
        return Row {
            case,
            unit: unit(a),
            a: spread(&fa.values).map(|s| s.median),
            b: spread(&fb.values).map(|s| s.median),
            ratio: None,
            interval: None,
            verdict: Verdict::NotComparable,
            why: why.into(),
            lower_better: fa.lower_better,
        };
    };
    if sa.median <= 0.0 {
        return Row {
            case,
            unit: unit(a),
            a: Some(sa.median),
            b: Some(sb.median),
            ratio: None,
            interval: None,
            verdict: Verdict::NotComparable,
            why: "nothing measured in A".into(),
            lower_better: fa.lower_better,
        };
    }
    let ratio = sb.median / sa.median;
    let row = |verdict, interval, why: String| Row {
        case: case.clone(),
        unit: unit(a),
        a: Some(sa.median),
        b: Some(sb.median),
        ratio: Some(ratio),
        interval,
        verdict,
        why,
        lower_better: fa.lower_better,
    };
    if fa.values.len() < 2 || fb.values.len() < 2 {
        return row(
            Verdict::NoiseUnknown,
            None,
            "one series only: no spread to judge by".to_string(),
        );
    }
    let (lo, hi) = ratio_interval(&fa.values, &fb.values);
    let ci = format!("95% interval {lo:.2}–{hi:.2}×");
    if lo <= 1.0 && hi >= 1.0 {
        return row(
            Verdict::Unchanged,
            Some((lo, hi)),
            format!("within the noise: {ci} holds 1"),
        );
    }
    if ratio.ln().abs() <= (1.0 + min_change).ln() + 1e-12 {
        return row(
            Verdict::Unchanged,
            Some((lo, hi)),
            format!("{ci}, but under the {:.0}% threshold", min_change * 100.0),
        );
    }
    let better = (ratio > 1.0) != fa.lower_better;
    row(
        if better {
            Verdict::Faster
        } else {
            Verdict::Slower
        },
        Some((lo, hi)),
        format!("{ci}, beyond the {:.0}% threshold", min_change * 100.0),
    )
}

/// Every case of `a` and `b`, in `a`'s order then `b`'s new ones.
pub fn compare(a: &RunRecord, b: &RunRecord, min_change: f64) -> Vec<Row> {
    let mut rows = Vec::new();
    for ca in &a.cases {
        let k = key(ca);
        match b.cases.iter().find(|cb| key(cb) == k) {
            Some(cb) => rows.push(compare_case(ca, cb, min_change)),
            None => rows.push(Row {
                case: shown(ca, ca),
                unit: unit(ca),
                a: spread(&figure(ca).values).map(|s| s.median),
                b: None,
                ratio: None,
                interval: None,
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
                verdict: Verdict::NotComparable,
                why: elsewhere(cb, &b.cases, &a.cases, "B", "A"),
                lower_better: figure(cb).lower_better,
            });
        }
    }
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
            ", {} not judged (one series only)",
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
                 p50 round trip for latency (lower is faster), cycles/s for sync. A change is \
                 marked only when the 95% bootstrap interval of B/A (each run's series \
                 resampled) excludes 1 and B/A is beyond {:.0}% either way.",
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
            &[98.0, 100.0, 102.0],
        );
        let b = testdata::case(
            "pipe",
            Mode::Processes,
            4096,
            "same-cpu",
            &[196.0, 200.0, 204.0],
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
            &[90.0, 100.0, 110.0],
        );
        let b = testdata::case(
            "pipe",
            Mode::Processes,
            4096,
            "same-cpu",
            &[95.0, 105.0, 115.0],
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
            &[99.9, 100.0, 100.1],
        );
        let b = testdata::case(
            "pipe",
            Mode::Processes,
            4096,
            "same-cpu",
            &[104.9, 105.0, 105.1],
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
            &[109.9, 110.0, 110.1],
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
            &[100.0, 100.0, 100.0],
        );
        let b = testdata::case(
            "pipe",
            Mode::Processes,
            64,
            "same-cpu",
            &[80.0, 130.0, 180.0],
        );
        assert_eq!(
            compare_case(&a, &b, DEFAULT_MIN_CHANGE).verdict,
            Verdict::Unchanged
        );
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
