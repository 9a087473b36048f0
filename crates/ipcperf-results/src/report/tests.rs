use super::table::{options_held, unit_held};
use super::*;
use crate::testdata;

#[test]
fn stover_normalises_to_the_slowest() {
    let t = stover(&testdata::run()).unwrap();
    // pipe 1000, unix 800, tcp 500 at every configuration: 2.00, 1.60, 1.00.
    let rel: Vec<(&str, &str)> = t
        .rows
        .iter()
        .map(|r| (r[0].as_str(), r[2].as_str()))
        .collect();
    assert_eq!(rel, [("pipe", "2.00"), ("unix", "1.60"), ("tcp", "1.00")]);
    assert!(t.notes[0].contains("6 configurations"), "{:?}", t.notes);
    // A one-sided reference runs in single mode only: with it counted, no
    // configuration had every mechanism and the table was not drawn at all.
    let mut r = testdata::run();
    r.cases.push(testdata::case(
        "null",
        ipcperf_core::mode::Mode::Single,
        65536,
        "same-cpu",
        &[40_000.0],
    ));
    let t = stover(&r).expect("Stover's table beside a reference");
    assert_eq!(t.rows.len(), 3, "{:?}", t.rows);
    assert!(t.notes[1].starts_with("Not in it: null"), "{:?}", t.notes);
}

#[test]
fn bradford_ratio_and_links() {
    let r = testdata::run();
    let b = bradford_ratio(&r).unwrap();
    assert_eq!(b.rows[0][4], "2.00×"); // pipe 1000 / tcp 500
    assert_eq!(b.rows[0][6], "1.25×"); // pipe 1000 / unix 800
    let l = links(&r).unwrap();
    // tcp same-cpu peaks at 500 MB/s = 4 Gb/s: 4 one-gigabit links, 0.4 ten-gigabit.
    assert_eq!(l.rows[0][0], "tcp");
    assert_eq!(&l.rows[0][4..], ["4.00", "4.00", "0.40", "0.16", "0.04"]);
    assert_eq!(l.rows.len(), 2);
}

/// A run across machines and a run on loopback: their tcp rates side by side,
/// the ratio per block size; neither alone makes the table.
#[test]
fn loopback_against_the_network_when_both_are_reported() {
    let lo = testdata::run();
    let mut net = testdata::run();
    net.cases.retain(|c| c.mechanism == "tcp");
    for c in &mut net.cases {
        c.placement.label = "other-host".into();
        for s in &mut c.series {
            s.bytes /= 4;
        }
        c.summarize();
    }
    assert!(loopback_vs_network(&[("1".into(), lo.clone())]).is_none());
    assert!(loopback_vs_network(&[("2".into(), net.clone())]).is_none());
    let runs = [("1".into(), lo), ("2".into(), net)];
    let t = loopback_vs_network(&runs).unwrap();
    assert!(!t.rows.is_empty());
    for r in &t.rows {
        assert_eq!(r[0], "tcp");
        assert_eq!(r[5], "0.25×", "{r:?}");
        assert!(
            r[3].contains("(run 2)") && r[4].contains("(run 1)"),
            "{r:?}"
        );
    }
    assert!(html(&runs).contains("loopback-versus-network"));
}

/// A mechanism built on another is set beside it where the same run has the
/// same case of its base; without the base there is no table.
#[test]
fn a_layer_is_set_beside_its_base_in_the_same_run() {
    let mut r = testdata::run();
    r.cases.retain(|c| c.mechanism == "unix");
    let mut layered: Vec<CaseRecord> = r.cases.clone();
    for c in &mut layered {
        c.mechanism = "uring-unix".into();
        c.options.insert("over".into(), "unix".into());
        c.options.insert("library".into(), "io-uring 0.7.15".into());
        for s in &mut c.series {
            s.bytes /= 2;
        }
        c.summarize();
    }
    let alone = RunRecord {
        cases: layered.clone(),
        ..r.clone()
    };
    assert!(over_base(&alone).is_none());
    r.cases.extend(layered.clone());
    let t = over_base(&r).unwrap();
    assert!(!t.rows.is_empty());
    for row in &t.rows {
        assert_eq!(row[0], "uring-unix");
        assert_eq!(row[1], "unix via io-uring 0.7.15");
        assert_eq!(row[8], "2.00×", "{row:?}");
    }
    assert!(html(&[("1".into(), r.clone())]).contains("costs over the mechanism beneath"));

    // The same mechanism with registered buffers is a row of its own, named
    // as the tables name it, in this table and in Stover's.
    for c in &mut layered {
        c.wait = "io_uring".into();
        c.options.insert("buffers".into(), "registered".into());
        for s in &mut c.series {
            s.bytes /= 2;
        }
        c.summarize();
    }
    r.cases.extend(layered);
    let t = over_base(&r).unwrap();
    let fixed: Vec<_> = t
        .rows
        .iter()
        .filter(|row| row[0] == "uring-unix (fixed buffers)")
        .collect();
    assert_eq!(fixed.len() * 2, t.rows.len(), "{:?}", t.rows);
    assert!(fixed.iter().all(|row| row[8] == "4.00×"), "{fixed:?}");
    let st = stover(&r).unwrap();
    let names: Vec<&str> = st.rows.iter().map(|row| row[0].as_str()).collect();
    assert_eq!(
        names,
        ["unix", "uring-unix", "uring-unix (fixed buffers)"],
        "{:?}",
        st.rows
    );
    assert_eq!(st.rows[2][2], "1.00");
    assert_eq!(st.rows[0][2], "4.00");
}

#[test]
fn html_is_self_contained_and_escaped() {
    let mut r = testdata::run();
    r.machine.hostname = "<b>host&co</b>".into();
    let h = html(&[("7".into(), r.clone()), ("8".into(), r)]);
    assert!(h.contains("&lt;b&gt;host&amp;co&lt;/b&gt;"));
    assert!(!h.contains("<b>host"));
    // Each run's throughput chart, and run 8 against run 7 in the summary.
    assert_eq!(h.matches("<svg").count(), 3);
    // A run with latency figures gets their chart too.
    let mut lat = testdata::run();
    lat.cases
        .push(testdata::sync_case("futex", 900, 1_500, 6_000, 40_000));
    let h2 = html(&[("9".into(), lat)]);
    assert!(h2.contains("Latency percentiles"));
    assert_eq!(h2.matches("<svg").count(), 2);
    for outside in ["http://", "https://", "<script", "<link", "@import", "url("] {
        let allowed = h.matches("http://www.w3.org/").count();
        if outside == "http://" {
            assert_eq!(
                h.matches(outside).count(),
                allowed,
                "outside reference in the report"
            );
        } else {
            assert!(!h.contains(outside), "the report holds {outside}");
        }
    }
    for needle in [
        "Stover",
        "Bradford",
        "100 Gb/s links",
        "Comparing run 7 with run 8",
        "KVM",
    ] {
        assert!(h.contains(needle), "the report lacks {needle}");
    }
}

/// The page carries the answer its run supports (advise's reading of its figures).
#[test]
fn the_page_says_which_to_use() {
    let html = html(&[("1".into(), testdata::run())]);
    assert!(html.contains("Which to use here: stream, 65536 B blocks"));
}

/// Figures are right-aligned, words left: the robustness table's "how" and
/// "holder" read as text (every column after the first was right-aligned).
#[test]
fn figures_align_right_and_words_left() {
    let t = crate::export::view::Table {
        title: "robustness".into(),
        header: vec![
            "primitive".into(),
            "holder".into(),
            "after".into(),
            "how".into(),
        ],
        rows: vec![
            vec![
                "sysv-sem".into(),
                "SEM_UNDO".into(),
                "1841 µs".into(),
                "the kernel undid it".into(),
            ],
            vec![
                "futex".into(),
                "plain".into(),
                "never".into(),
                "nothing undoes it".into(),
            ],
            vec![
                "flock".into(),
                "plain".into(),
                "763 µs".into(),
                "closed at exit".into(),
            ],
        ],
        notes: Vec::new(),
    };
    let html = table_html(&t);
    let row = html.lines().find(|l| l.contains("sysv-sem")).unwrap();
    assert_eq!(
        row,
        "<tr><td>sysv-sem</td><td>SEM_UNDO</td><td class=\"n\">1841&nbsp;µs</td>\
         <td>the kernel undid it</td></tr>"
    );
    // A range may still break before its parenthesis; the table scrolls in
    // its own box where it is wider than the page.
    assert_eq!(
        unit_held("124 (117–133) MB/s"),
        "124 (117–\u{2060}133)&nbsp;MB/s"
    );
    assert_eq!(unit_held("97.1 µs†"), "97.1&nbsp;µs†");
    assert!(html.starts_with("<div class=\"wide\"><table>") && html.contains("</table></div>"));
}

/// A block size in the first column is held whole ("64 KiB" broke into
/// "64 / KiB"), and a note word for word as under an earlier table of the run
/// is said once, a note of a table's own still said.
#[test]
fn sizes_held_and_a_note_said_once() {
    let t = |note: &str| crate::export::view::Table {
        title: "pipe".into(),
        header: vec!["block".into(), "MB/s".into()],
        rows: vec![vec!["64 KiB".into(), "2252 (2085–2468)".into()]],
        notes: vec!["switches/msg: per block".into(), note.into()],
    };
    let (a, b) = (t("noisy: 64 KiB"), t("noisy: 1 MiB"));
    let html = tables_html([&a, &b]);
    assert!(html.contains("<td>64&nbsp;KiB</td>"), "{html}");
    assert_eq!(html.matches("switches/msg: per block").count(), 1, "{html}");
    assert!(
        html.contains("noisy: 64 KiB") && html.contains("noisy: 1 MiB"),
        "{html}"
    );
    assert_eq!(table_html(&b).matches("switches/msg").count(), 1);
    // An option in a note stays whole, and reads as itself when copied.
    assert_eq!(
        options_held("-v says each, --repeat or a quieter machine; --"),
        "-v says each, <span class=\"opt\">--repeat</span> or a quieter machine; --"
    );
}
