//! Two runs case by case: the ratio of their medians, marked as a change only when
//! it exceeds the spread of both runs' series and a minimum change (default 5%:
//! with three series a run's spread can come out small by chance, while runs
//! taken minutes apart on a shared machine differ by more). Records in, a view out.

use ipcperf_core::record::{CaseRecord, RunRecord};
use ipcperf_core::stats::{relative_spread, spread};
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
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// b / a.
    pub ratio: Option<f64>,
    pub verdict: Verdict,
    pub why: String,
}

/// The identity of a case across runs (options hold facts found at set-up, such
/// as the pipe size granted, which may differ between machines: left out).
fn key(c: &CaseRecord) -> String {
    format!(
        "{} {} {} {} {} {}{}{}",
        c.workload.name(),
        c.mechanism,
        c.mode.name(),
        fmt_size(c.block_size),
        c.placement.label,
        c.payload.name(),
        if c.wait == "block" {
            String::new()
        } else {
            format!(" wait={}", c.wait)
        },
        if c.include_setup { " +setup" } else { "" }
    )
}

/// Per-series throughput figures.
fn rates(c: &CaseRecord) -> Vec<f64> {
    c.series.iter().map(|s| s.bytes_per_sec()).collect()
}

/// The smallest change marked by default: 5%.
pub const DEFAULT_MIN_CHANGE: f64 = 0.05;

/// Compare one case in two runs; a change must exceed both spreads and `min_change`
/// (a fraction: 0.05 = 5%).
pub fn compare_case(a: &CaseRecord, b: &CaseRecord, min_change: f64) -> Row {
    let (ra, rb) = (rates(a), rates(b));
    let case = key(a);
    let (Some(sa), Some(sb)) = (spread(&ra), spread(&rb)) else {
        let why = if a.workload != Workload::Stream {
            "compare covers stream throughput only"
        } else if ra.is_empty() {
            "did not run in A"
        } else {
            "did not run in B"
        };
        return Row {
            case,
            a: spread(&ra).map(|s| s.median),
            b: spread(&rb).map(|s| s.median),
            ratio: None,
            verdict: Verdict::NotComparable,
            why: why.into(),
        };
    };
    if sa.median <= 0.0 {
        return Row {
            case,
            a: Some(sa.median),
            b: Some(sb.median),
            ratio: None,
            verdict: Verdict::NotComparable,
            why: "nothing moved in A".into(),
        };
    }
    let ratio = sb.median / sa.median;
    let noise = relative_spread(&sa).max(relative_spread(&sb));
    let bar = noise.max(min_change);
    let (verdict, why) = if ra.len() < 2 || rb.len() < 2 {
        (
            Verdict::NoiseUnknown,
            "one series only: no spread to judge by".to_string(),
        )
    } else if ratio.ln().abs() > (1.0 + bar).ln() {
        (
            if ratio > 1.0 {
                Verdict::Faster
            } else {
                Verdict::Slower
            },
            format!(
                "beyond the spread of both runs (±{:.0}%) and the {:.0}% threshold",
                noise * 100.0,
                min_change * 100.0
            ),
        )
    } else if ratio.ln().abs() > (1.0 + noise).ln() {
        (
            Verdict::Unchanged,
            format!(
                "beyond the spread (±{:.0}%) but under the {:.0}% threshold",
                noise * 100.0,
                min_change * 100.0
            ),
        )
    } else {
        (
            Verdict::Unchanged,
            format!("within the spread (±{:.0}%)", noise * 100.0),
        )
    };
    Row {
        case,
        a: Some(sa.median),
        b: Some(sb.median),
        ratio: Some(ratio),
        verdict,
        why,
    }
}

/// Every case of `a` and `b`, in `a`'s order then `b`'s new ones.
pub fn compare(a: &RunRecord, b: &RunRecord, min_change: f64) -> Vec<Row> {
    let mut rows = Vec::new();
    for ca in &a.cases {
        let k = key(ca);
        match b.cases.iter().find(|cb| key(cb) == k) {
            Some(cb) => rows.push(compare_case(ca, cb, min_change)),
            None => rows.push(Row {
                case: k,
                a: ca.median_bytes_per_sec,
                b: None,
                ratio: None,
                verdict: Verdict::NotComparable,
                why: "only in A".into(),
            }),
        }
    }
    for cb in &b.cases {
        let k = key(cb);
        if !a.cases.iter().any(|ca| key(ca) == k) {
            rows.push(Row {
                case: k,
                a: None,
                b: cb.median_bytes_per_sec,
                ratio: None,
                verdict: Verdict::NotComparable,
                why: "only in B".into(),
            });
        }
    }
    rows
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
    let opt = |v: Option<f64>| v.map(fmt_mbps).unwrap_or_else(|| "-".into());
    let table = Table {
        title: format!("{}; {}", describe("A", a_id, a), describe("B", b_id, b)),
        header: ["case", "A MB/s", "B MB/s", "B/A", "change", "why"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        rows: rows
            .iter()
            .map(|r| {
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
                "MB/s: median over each run's series. A change is marked only when B/A lies \
                 beyond the relative spread (max−min)/median of both runs and beyond {:.0}%.",
                min_change * 100.0
            ),
            summary(&rows),
        ],
    };
    View {
        heading: format!("Comparing run {a_id} with run {b_id}: {}", summary(&rows)),
        tables: vec![table],
    }
}

#[cfg(test)]
mod tests {
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
