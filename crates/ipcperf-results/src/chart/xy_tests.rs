use super::*;
use crate::testdata;

fn run_of(cases: Vec<CaseRecord>) -> RunRecord {
    let mut r = testdata::run();
    r.cases = cases;
    r
}

#[test]
fn scaling_draws_one_line_per_case_over_its_pair_counts() {
    let run = run_of(vec![
        testdata::pairs_case("pipe", 1, 1000.0),
        testdata::pairs_case("pipe", 2, 1800.0),
        testdata::pairs_case("pipe", 4, 2000.0),
        testdata::pairs_case("unix", 1, 700.0),
        testdata::pairs_case("unix", 2, 1300.0),
    ]);
    let c = scaling(&run).unwrap();
    assert_eq!(c.lines.len(), 2);
    // Mode and size, the same on every line, are said once in the title.
    assert_eq!(c.lines[0].label, "pipe");
    assert!(
        c.title
            .starts_with("Many pairs at once · processes 4 KiB — "),
        "{}",
        c.title
    );
    let xs: Vec<(f64, f64)> = c.lines[0].points.iter().map(|p| (p.0, p.1)).collect();
    assert_eq!(xs, vec![(1.0, 1000.0), (2.0, 1800.0), (4.0, 2000.0)]);
    let svg = svg(&c).unwrap();
    // Every text the SVG draws, trimmed.
    let texts: Vec<&str> = svg
        .split("</text>")
        .filter_map(|t| t.rsplit_once('>').map(|(_, w)| w.trim()))
        .collect();
    assert!(
        svg.contains("pairs running at once") && texts.contains(&"unix"),
        "{texts:?}"
    );
    // The x axis is marked at the counts measured, not between them: no
    // "1.5" pairs (nor "3", which did not run).
    for mark in ["1", "2", "4"] {
        assert!(texts.contains(&mark), "{mark}: {texts:?}");
    }
    for mark in ["1.2", "1.5", "3"] {
        assert!(!texts.contains(&mark), "{mark}: {texts:?}");
    }
    // One count of pairs only: no line to draw.
    assert!(scaling(&run_of(vec![testdata::pairs_case("pipe", 2, 1.0)])).is_none());
    assert!(scaling(&testdata::run()).is_none());
}

#[test]
fn load_draws_three_percentiles_per_case_and_marks_saturation_hollow() {
    let run = run_of(vec![
        testdata::paced_case("unix", 1000, 1000.0, 20_000, 40_000, 90_000),
        testdata::paced_case("unix", 10_000, 9_990.0, 25_000, 60_000, 200_000),
        // Achieved half the offered load: saturated.
        testdata::paced_case("unix", 100_000, 50_000.0, 9_000_000, 20_000_000, 30_000_000),
    ]);
    let c = load(&run).unwrap();
    assert_eq!(c.lines.len(), 3, "{:?}", c.lines);
    let p50 = &c.lines[0];
    assert_eq!(p50.marker, Marker::Circle);
    let pts: Vec<(f64, f64, bool)> = p50.points.clone();
    assert_eq!(
        pts,
        vec![
            (1000.0, 20.0, false),
            (10_000.0, 25.0, false),
            (100_000.0, 9000.0, true)
        ]
    );
    assert!(c
        .lines
        .iter()
        .any(|l| l.marker == Marker::Square && l.label.ends_with("p99.9")));
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("load.png");
    png(&c, &p).unwrap();
    assert!(std::fs::metadata(&p).unwrap().len() > 10_000);
    // Back-to-back round trips have no offered load: no chart.
    assert!(load(&testdata::run()).is_none());
}

#[test]
fn a_run_lists_its_charts_in_order() {
    let run = run_of(vec![
        testdata::pairs_case("pipe", 1, 1000.0),
        testdata::pairs_case("pipe", 2, 1800.0),
    ]);
    let kinds: Vec<&str> = charts(&run).iter().map(|c| c.kind()).collect();
    // One block size: the throughput chart would be dots; scaling says it all.
    assert_eq!(kinds, vec!["pairs"]);
    let kinds: Vec<&str> = charts(&testdata::run()).iter().map(|c| c.kind()).collect();
    assert_eq!(kinds[0], "throughput");
}

#[test]
fn a_sync_run_draws_its_cycle_rates_before_its_latencies() {
    let mut run = testdata::run();
    let mut c = testdata::sync_case("futex", 900, 1_500, 6_000, 40_000);
    if let Some(s) = c.sync.as_mut() {
        s.set_clear_per_sec = Some(250_000.0);
        s.request_release_per_sec = Some(40_000_000.0);
    }
    run.cases = vec![c];
    let kinds: Vec<&str> = charts(&run).iter().map(|c| c.kind()).collect();
    assert_eq!(kinds, vec!["cycles", "latency"]);
    let d = sync_dots(&run).unwrap();
    let xs: Vec<f64> = d.dots.iter().map(|x| x.x).collect();
    assert_eq!(xs, vec![250_000.0, 40_000_000.0]);
    assert!(d.dots[0].label.starts_with("futex"), "{:?}", d.dots);
    let svg = crate::chart::ab::dot_svg(&d).unwrap();
    assert!(svg.contains("cycles/s") && svg.contains("futex"));
    // 250k to 40M: marked at round values (not plotters' half decades, `31.62M`).
    let marks = crate::chart::svg_text::texts(&svg);
    for want in ["300k", "1M", "3M", "10M", "30M"] {
        assert!(marks.iter().any(|t| t == want), "{want}: {marks:?}");
    }
    assert!(!marks.iter().any(|t| t.contains(".62")), "{marks:?}");
    // Two primitives at one mode and place: those said once, in the title.
    let mut m = run.cases[0].clone();
    m.sync.as_mut().unwrap().primitive = "mutex".into();
    run.cases.push(m);
    let d = sync_dots(&run).unwrap();
    assert!(
        d.title
            .starts_with("Cycles per second · threads cross-cpu 0→1 — "),
        "{}",
        d.title
    );
    let labels: Vec<&str> = d.dots.iter().map(|d| d.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "futex set/clear",
            "futex request/release",
            "mutex set/clear",
            "mutex request/release"
        ]
    );
}

/// The paced chart's load axis reads `1k`, `10k`, `100k` (not `100.0k`), its
/// latency axis `3 ms`.
#[test]
fn log_axes_read_as_round_short_values() {
    let c = XyChart {
        title: "t".into(),
        x_desc: "offered load".into(),
        y_desc: "round trip".into(),
        y_micros: true,
        note: None,
        lines: vec![XyLine {
            label: "pipe".into(),
            color: 0,
            marker: Marker::Circle,
            points: vec![(1e3, 270.0, false), (1e4, 15e3, true), (1e5, 72e3, true)],
        }],
    };
    let marks = crate::chart::svg_text::texts(&svg(&c).unwrap());
    for want in ["1k", "2k", "10k", "100k", "300 µs", "3 ms", "100 ms"] {
        assert!(marks.iter().any(|t| t == want), "{want}: {marks:?}");
    }
}

/// The load axis ends at the 1-2-5 step at or beyond the highest load (loads of
/// 1k to 20k drew an empty stretch out to 100k), and what every line shares is
/// in the title, the legend naming each mechanism.
#[test]
fn the_load_axis_ends_near_the_data_and_the_title_says_what_is_shared() {
    let run = run_of(vec![
        testdata::paced_case("unix", 1000, 1000.0, 20_000, 40_000, 90_000),
        testdata::paced_case("unix", 20_000, 19_990.0, 25_000, 60_000, 200_000),
        testdata::paced_case("pipe", 1000, 1000.0, 18_000, 40_000, 90_000),
        testdata::paced_case("pipe", 20_000, 19_990.0, 22_000, 60_000, 200_000),
    ]);
    let c = load(&run).unwrap();
    assert!(
        c.title.starts_with("Round trips under a paced load · "),
        "{}",
        c.title
    );
    let names: Vec<&str> = c
        .lines
        .iter()
        .filter(|l| l.marker == Marker::Circle)
        .map(|l| l.label.as_str())
        .collect();
    assert_eq!(names, ["unix", "pipe"]);
    let marks = crate::chart::svg_text::texts(&svg(&c).unwrap());
    assert!(marks.iter().any(|t| t == "20k"), "{marks:?}");
    assert!(
        !marks.iter().any(|t| t == "50k" || t == "100k"),
        "{marks:?}"
    );
    assert_eq!(step_125(20_000.0, true), 20_000.0);
    assert_eq!(step_125(21_000.0, true), 50_000.0);
    assert_eq!(step_125(1_500.0, false), 1_000.0);
    assert_eq!(step_125(3_000.0, false), 2_000.0);
}
