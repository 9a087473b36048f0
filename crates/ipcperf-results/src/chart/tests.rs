//! The charts' unit tests (kept apart so plot.rs stays readable).

use super::*;
use crate::testdata;

#[test]
fn one_line_per_mechanism_mode_and_placement() {
    let lines = throughput_lines(&testdata::run());
    let labels: Vec<&str> = lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "pipe processes same-cpu 0→0",
            "pipe processes cross-cpu 0→1",
            "unix processes same-cpu 0→0",
            "unix processes cross-cpu 0→1",
            "tcp processes same-cpu 0→0",
            "tcp processes cross-cpu 0→1"
        ]
    );
    assert_eq!(lines[0].points.len(), 3);
    assert_eq!(lines[0].points[2].0, 65536);
    assert!((lines[0].points[2].1 - 1000.0).abs() < 1e-6);
}

#[test]
fn a_case_of_no_size_is_left_out_not_a_panic() {
    // An imported or hand-made record: block size 0 has no place on a log axis.
    let mut run = testdata::run();
    run.cases[0].block_size = 0;
    let lines = throughput_lines(&run);
    assert!(lines.iter().all(|l| l.points.iter().all(|p| p.0 > 0)));
    assert!(throughput_svg(&run).unwrap().starts_with("<svg"));
    for c in &mut run.cases {
        c.block_size = 0;
    }
    assert!(throughput_lines(&run).is_empty());
    assert!(throughput_svg(&run).is_ok());
}

#[test]
fn svg_has_title_units_and_legend_as_text() {
    let svg = throughput_svg(&testdata::run()).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
    for needle in [
        "testhost",
        "6.1.0-test",
        "64 B",
        "4 KiB",
        "64 KiB",
        "pipe processes same-cpu",
        "MB/s",
    ] {
        assert!(svg.contains(needle), "the SVG lacks {needle:?}");
    }
    // MB/s decades read `1k`, not `1000` (nor `1000000` for a memcpy's TB/s).
    let marks = crate::chart::svg_text::texts(&svg);
    assert!(marks.iter().any(|t| t == "1k"), "{marks:?}");
    assert!(!marks.iter().any(|t| t.ends_with("000")), "{marks:?}");
}

/// Three pairs of one class (shared-l3 on three CPU pairs) are three lines, each
/// with one y per x: never several pairs joined into one zig-zag.
#[test]
fn three_pairs_of_one_class_draw_three_lines() {
    let mut run = testdata::run();
    let template = run.cases[0].clone();
    run.cases.clear();
    for (w, r) in [(0, 1), (2, 3), (0, 8)] {
        for size in [64u64, 4096] {
            let mut c = template.clone();
            c.block_size = size;
            c.placement.label = "shared-l3".into();
            c.placement.writer_cpu = Some(w);
            c.placement.reader_cpu = Some(r);
            run.cases.push(c);
        }
    }
    let lines = throughput_lines(&run);
    let labels: Vec<&str> = lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "pipe processes shared-l3 0→1",
            "pipe processes shared-l3 2→3",
            "pipe processes shared-l3 0→8"
        ]
    );
    for l in &lines {
        let xs: Vec<u64> = l.points.iter().map(|p| p.0).collect();
        assert_eq!(xs, [64, 4096], "{}: one point per block size", l.label);
    }
}

#[test]
fn latency_curves_from_sync_cases() {
    let mut run = testdata::run();
    assert!(latency_lines(&run).is_empty());
    assert!(latency_svg(&run).is_none());
    run.cases
        .push(testdata::sync_case("futex", 900, 1_500, 6_000, 40_000));
    run.cases
        .push(testdata::sync_case("sysv-sem", 0, 3_000, 9_000, 70_000));
    let lines = latency_lines(&run);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0].label, "futex threads cross-cpu 0→1 set/clear");
    assert_eq!(lines[0].points[0], (0.5, 900.0));
    assert_eq!(lines[0].points.len(), 4);
    // A zero p50 (below the clock's resolution) is left out, not drawn at 1 ns.
    assert_eq!(lines[1].points[0], (0.9, 3000.0));
    let svg = latency_svg(&run).unwrap().unwrap();
    for needle in ["p50", "p99.9"] {
        assert!(svg.contains(needle), "the SVG lacks {needle:?}");
    }
    // What both lines share is said once, in the title; each is named by the rest.
    let texts = crate::chart::svg_text::texts(&svg);
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("Latency percentiles · threads cross-cpu 0→1 set/clear — ")),
        "{texts:?}"
    );
    for name in ["futex", "sysv-sem"] {
        assert!(texts.iter().any(|t| t == name), "{name}: {texts:?}");
    }
}

/// A percentile resting on fewer than 10 samples beyond it is drawn hollow on
/// a dashed line and said so under the chart, as the tables mark it †: p99.99
/// of 4000 round trips was drawn as firm as p50.
#[test]
fn a_percentile_on_few_samples_is_drawn_as_such() {
    let mut run = testdata::run();
    let mut c = testdata::sync_case("futex", 900, 1_500, 6_000, 40_000);
    if let Some(l) = c.sync.as_mut().and_then(|s| s.set_clear_latency.as_mut()) {
        l.beyond = Some(ipcperf_core::latency::Beyond {
            p50: 5000,
            p90: 1000,
            p99: 100,
            p999: 4,
            p9999: 0,
        });
    }
    run.cases.push(c);
    let lines = latency_lines(&run);
    assert_eq!(lines[0].thin, [false, false, false, true]);
    let svg = latency_svg(&run).unwrap().unwrap();
    assert!(svg.contains("fewer than 10 samples beyond"), "the note");
    // Without the counts (an older record): firm, as the tables take it.
    run.cases
        .push(testdata::sync_case("sysv-sem", 800, 3_000, 9_000, 70_000));
    let lines = latency_lines(&run);
    assert_eq!(lines[1].thin, [false; 4]);
}

#[test]
fn png_is_written_with_drawn_text() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.png");
    throughput_png(&testdata::run(), &p).unwrap();
    let bytes = std::fs::read(&p).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert!(
        bytes.len() > 10_000,
        "a chart with text and lines is not {} bytes",
        bytes.len()
    );
}

#[test]
fn throughput_lines_carry_their_series_spread_as_a_band() {
    let mut run = testdata::run();
    // Three series: 900, 1000, 1200 MB/s at one size of the first line.
    run.cases[0] = testdata::case(
        "pipe",
        ipcperf_core::mode::Mode::Processes,
        64,
        "same-cpu",
        &[900.0, 1000.0, 1200.0],
    );
    let lines = throughput_lines(&run);
    let b = lines[0].band.iter().find(|b| b.0 == 64).unwrap();
    assert!(
        (b.1 - 900.0).abs() < 1e-6 && (b.2 - 1200.0).abs() < 1e-6,
        "{b:?}"
    );
    let svg = throughput_svg(&run).unwrap();
    assert!(svg.contains("band: their min–max"));
    assert!(
        svg.contains("<polygon") || svg.contains("<path"),
        "a band is drawn"
    );
}

#[test]
fn legends_sit_below_the_plot_and_latency_reads_in_time_units() {
    // Twelve latency lines: the image grows by their legend rows; the plot keeps
    // its whole size, so no entry covers a line.
    let mut run = testdata::run();
    run.cases = (0..12)
        .map(|i| {
            let mut c =
                testdata::paced_case("unix", 1000 * (i + 1), 1000.0, 20_000, 90_000, 400_000);
            c.options.clear();
            c.block_size = 64 << (i % 4);
            c
        })
        .collect();
    assert_eq!(latency_lines(&run).len(), 12);
    let svg = latency_svg(&run).unwrap().unwrap();
    let (w, h) = size_with_legend(12);
    assert_eq!((w, h), (SIZE.0, SIZE.1 + 6 * 20 + 12));
    assert!(svg.contains(&format!("height=\"{h}\"")), "{}", &svg[..200]);
    // Ticks in µs and ms, not raw nanoseconds.
    assert!(
        svg.contains("µs") && svg.contains("ms"),
        "time units on the axis"
    );
    assert!(!svg.contains(">100000<") && !svg.contains(">1000000<"));
    assert_eq!(fmt_ns_tick(1e5), "100 µs");
    assert_eq!(fmt_ns_tick(1e6), "1 ms");
    assert_eq!(fmt_ns_tick(1e9), "1 s");
    assert_eq!(fmt_ns_tick(100.0), "100 ns");
    // Past twelve, a row each (chart/ranked.rs), its height the rows'.
    let mut more = run.clone();
    more.cases
        .extend(run.cases.iter().take(4).cloned().map(|mut c| {
            c.mechanism = "pipe".into();
            c
        }));
    let svg = latency_svg(&more).unwrap().unwrap();
    let h = ranked::size(16).1;
    assert!(svg.contains(&format!("height=\"{h}\"")) && svg.contains("fastest p50 first"));
}

/// The stroke colour of every 2-pixel path of an SVG chart: its data lines (and
/// the legend's swatches drawn in their lines' strokes, of the same colours).
fn line_colours(svg: &str) -> Vec<&str> {
    svg.split("<polyline")
        .skip(1)
        .filter(|p| p.contains("stroke-width=\"2\""))
        .filter_map(|p| p.split("stroke=\"").nth(1)?.split('"').next())
        .collect()
}

/// A mechanism keeps its colour over its placements, a placement its stroke over
/// the mechanisms: six lines read as three colours by two strokes, the dashed
/// ones drawn in dashes (each a short path of the line's colour) so a line under
/// another shows between them.
#[test]
fn a_mechanism_keeps_its_colour_and_a_placement_its_stroke() {
    let run = testdata::run();
    let lines = throughput_lines(&run);
    let colors: Vec<usize> = lines.iter().map(|l| l.color).collect();
    let strokes: Vec<usize> = lines.iter().map(|l| l.stroke).collect();
    assert_eq!(colors, [0, 0, 1, 1, 2, 2]);
    assert_eq!(strokes, [0, 1, 0, 1, 0, 1]);
    assert_ne!(stroke(0), stroke(1));
    assert!(stroke(0).dash.is_none() && stroke(1).dash.is_some());
    assert_ne!(stroke(0).marker, stroke(1).marker);
    let svg = throughput_svg(&run).unwrap();
    let lines_drawn = line_colours(&svg);
    let mut distinct = lines_drawn.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 3, "one colour per mechanism: {distinct:?}");
    // Three solid lines are three paths; the dashed ones, many each.
    assert!(
        lines_drawn.len() > 3 + 3 * 10,
        "{} paths",
        lines_drawn.len()
    );
}

/// Latency curves, as the throughput chart: a primitive keeps its colour over
/// its placements and a placement its marker (a dash there says few samples,
/// so the lines stay solid); one placement only draws as before, a colour a line.
#[test]
fn latency_curves_colour_a_mechanism_and_mark_a_placement() {
    let mut run = testdata::run();
    run.cases.clear();
    for p in ["futex", "sysv-sem"] {
        let across = testdata::sync_case(p, 900, 1_500, 6_000, 40_000);
        let mut same = across.clone();
        same.placement.label = "same-cpu".into();
        same.placement.reader_cpu = same.placement.writer_cpu;
        run.cases.extend([same, across]);
    }
    let lines = latency_lines(&run);
    assert_eq!(latency_styles(&lines), [(0, 0), (0, 1), (1, 0), (1, 1)]);
    let svg = latency_svg(&run).unwrap().unwrap();
    let mut drawn = line_colours(&svg);
    drawn.sort();
    drawn.dedup();
    assert_eq!(drawn.len(), 2, "one colour per primitive: {drawn:?}");
    // A diamond marks the second placement's points: a filled four-cornered polygon.
    assert!(svg.contains("<polygon"), "no diamond marker");
    // One placement: a colour and a circle each.
    run.cases.retain(|c| c.placement.label == "cross-cpu");
    assert_eq!(latency_styles(&latency_lines(&run)), [(0, 0), (1, 0)]);
}

/// Where a run used several payloads, a payload is a colour of its own and its
/// name still ends the line's label, after the placement.
#[test]
fn a_payload_of_its_own_is_a_colour_of_its_own() {
    let mut run = testdata::run();
    run.cases.retain(|c| c.mechanism == "pipe");
    let untouched: Vec<_> = run
        .cases
        .iter()
        .cloned()
        .map(|mut c| {
            c.payload = ipcperf_core::payload::Payload::NoTouch;
            c
        })
        .collect();
    run.cases.extend(untouched);
    let lines = throughput_lines(&run);
    let names: Vec<&str> = lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        names,
        [
            "pipe processes same-cpu 0→0 touch",
            "pipe processes cross-cpu 0→1 touch",
            "pipe processes same-cpu 0→0 no-touch",
            "pipe processes cross-cpu 0→1 no-touch"
        ]
    );
    let styles: Vec<(usize, usize)> = lines.iter().map(|l| (l.color, l.stroke)).collect();
    assert_eq!(styles, [(0, 0), (0, 1), (1, 0), (1, 1)]);
}
