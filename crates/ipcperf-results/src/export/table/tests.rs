//! The console table's fitting: spare columns, words and figures kept whole.

use super::*;

/// A table titled "t" of one row.
fn one_row(header: Vec<String>, row: &[&str]) -> Table {
    Table {
        title: "t".into(),
        header,
        rows: vec![row.iter().map(|c| c.to_string()).collect()],
        notes: vec![],
    }
}

/// A heading or title wraps at words on a terminal, every word kept, and
/// is left whole without one.
#[test]
fn a_heading_fits_the_terminal_and_keeps_every_word() {
    let text = "Comparing runs 11, 10, 9, 8, 7 (s11) with run 12 (s12), calls held to \
                run 13: 0 faster, 0 slower, 1 unchanged, 47 could not tell";
    assert_eq!(fitted(text, None), text);
    let shown = fitted(text, Some(40));
    assert!(shown.lines().count() > 2, "{shown}");
    assert!(shown.lines().all(|l| l.chars().count() <= 40), "{shown}");
    assert!(
        shown.lines().skip(1).all(|l| l.starts_with("  ")),
        "{shown}"
    );
    let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    assert_eq!(words(&shown), words(text));
}

/// A note wraps at words within the terminal's width, its later lines under
/// its text; without a terminal it stays one line, word for word.
#[test]
fn a_note_fits_the_terminal_and_keeps_every_word() {
    let text = "idle: each case across CPUs took one more series with no idle state \
                deeper than polling (/dev/cpu_dma_latency held at 0)";
    assert_eq!(note(text, None), format!("  note: {text}\n"));
    let wrapped = note(text, Some(40));
    let lines: Vec<&str> = wrapped.lines().collect();
    assert!(lines.len() > 2, "{wrapped}");
    assert!(lines.iter().all(|l| l.chars().count() <= 40), "{wrapped}");
    assert!(lines[0].starts_with("  note: idle:"), "{wrapped}");
    assert!(lines[1..]
        .iter()
        .all(|l| l.starts_with("        ") && !l.starts_with("         ")));
    // A figure and its unit are never split between lines.
    let sized = note("pipe 512 B shared-l3 0→1, 63.2 µs", Some(17));
    assert!(
        sized
            .lines()
            .all(|l| !l.ends_with(" 512") && !l.ends_with(" 63.2")),
        "{sized}"
    );
    let words: Vec<&str> = wrapped.split_whitespace().collect();
    let full = format!("note: {text}");
    let want: Vec<&str> = full.split_whitespace().collect();
    assert_eq!(words, want);
}

/// The latency table at 80 columns keeps the case, p50 and p99 and says what
/// it left out; unlimited, it keeps everything.
#[test]
fn a_narrow_terminal_breaks_words_before_counters_go_and_never_splits_a_figure() {
    let mut header = crate::export::latency::round_trip_header(false);
    header.extend(["switches/msg", "CPU µs/msg", "lost/dup/reord"].map(String::from));
    let row = [
        "udp",
        "processes",
        "shared-l3 0→1",
        "512 B",
        "12.0k",
        "84.9",
        "81.3",
        "90.1",
        "107",
        "300.2",
        "-",
        "512.5",
        "2.00",
        "54.5",
        "0/0/0",
    ];
    let t = one_row(header, &row);
    // Every word and figure whole, each cell's text on its lines in order.
    let whole = |c: &Comfy, words: &[&str]| {
        let text = c.to_string();
        let cells: Vec<String> = text.lines().map(|l| l.replace(['│', '┆'], " ")).collect();
        words.iter().all(|w| cells.iter().any(|l| l.contains(w)))
    };
    // 80 columns (a table without the datagram column): the spare figures
    // go, the counters stay, the widest columns break at their spaces and
    // slashes, no word is split.
    let mut t8 = t.clone();
    t8.header.pop();
    t8.rows[0].pop();
    let (c, dropped) = fit(&t8, Some(80));
    assert!(width(&c) <= 80, "{c}");
    assert!(
        !dropped.iter().any(|d| d.contains("msg")),
        "{dropped:?}\n{c}"
    );
    assert!(
        whole(&c, &["processes", "shared-l3", "switches/", "54.5", "2.00"]),
        "{c}"
    );
    // 68 (with the datagram column): the counters go too, the names and
    // figures stay whole.
    let (c, dropped) = fit(&t, Some(68));
    assert!(width(&c) <= 68, "{c}");
    assert!(
        dropped.ends_with(&["CPU µs/msg".into(), "switches/msg".into()]),
        "{dropped:?}"
    );
    assert!(
        whole(&c, &["mechanism", "processes", "81.3", "107", "0/0/0"]),
        "{c}"
    );
    // 40: nothing fits; a name may break, a figure never does.
    let (c, _) = fit(&t, Some(40));
    assert!(whole(&c, &["81.3", "107", "0/0/0", "512 B"]), "{c}");
}

/// A long column is narrowed only as far as the table needs: its words
/// share lines where they fit (a comparison's case, one word a line, made
/// its rows five lines tall).
#[test]
fn a_long_column_is_narrowed_only_as_far_as_needed() {
    let header = ["case", "A", "B", "B/A", "change", "could call", "limit"]
        .map(String::from)
        .to_vec();
    let row = [
        "pipe processes 512 B shared-l3 0→1 · switches/msg",
        "231.75 µs",
        "218.63 µs",
        "0.94×",
        "can't tell",
        "±1522%",
        "-",
    ];
    let t = one_row(header, &row);
    let (c, dropped) = fit(&t, Some(80));
    assert!(dropped.is_empty(), "{dropped:?}");
    let w = width(&c);
    assert!((78..=80).contains(&w), "{w}:\n{c}");
    let text = c.to_string();
    assert!(text.contains("pipe processes"), "{text}");
    assert!(text.contains("231.75 µs"), "{text}");
    // 60 columns: the limit and could-call go (said in the note), and the
    // case keeps its words whole (it was broken into pieces three letters
    // wide: "pro", "ces", "ses"), the verdict too.
    let (c, dropped) = fit(&t, Some(60));
    assert_eq!(dropped, ["limit", "could call"], "{c}");
    assert!(width(&c) <= 60, "{c}");
    let text = c.to_string();
    for w in [
        "processes",
        "shared-l3",
        "switches/msg",
        "231.75 µs",
        "can't",
    ] {
        assert!(text.lines().any(|l| l.contains(w)), "{w}:\n{text}");
    }
    // Too narrow for its words: a figure, signed or not, still whole (in a
    // column not spared: here "could call" under another name).
    let mut t40 = t.clone();
    t40.header[5] = "bound".into();
    let text = fit(&t40, Some(40)).0.to_string();
    for f in ["±1522%", "0.94×", "231.75 µs"] {
        assert!(text.contains(f), "{f}:\n{text}");
    }
}

/// A name wider than its column breaks after a hyphen (it came out as
/// "sysv-" "sem-o" "necal" "l"); a figure is never broken.
#[test]
fn a_long_name_breaks_after_its_hyphens() {
    assert_eq!(
        break_long_words("sysv-sem-onecall", 13),
        "sysv-sem-\nonecall"
    );
    assert_eq!(
        break_long_words("build-host-alpha-01 x", 12),
        "build-host-\nalpha-01 x"
    );
    assert_eq!(break_long_words("(44.72M–44.76M)", 5), "(44.72M–44.76M)");
    // A host name breaks after its dots too, a number never.
    assert_eq!(
        break_long_words("ci-runner-0042.lab.example", 10),
        "ci-runner-\n0042.lab.\nexample"
    );
    assert_eq!(break_long_words("pipe", 2), "pipe");
}

/// A header breaks after a slash where a word is wider than its column,
/// but never leaves a unit's stub alone ("MB/" over "s").
#[test]
fn a_header_breaks_after_a_slash_but_keeps_a_unit_whole() {
    assert_eq!(wrap_header("switches/msg", 9), "switches/\nmsg");
    let h = wrap_header("shared-l3 0→1 MB/s (min–max)", 17);
    assert!(!h.lines().any(|l| l.ends_with("MB/")), "{h}");
    assert!(h.contains("MB/s"), "{h}");
    assert_eq!(wrap_header("lost/dup/reord", 5), "lost/\ndup/\nreord");
}

#[test]
fn a_wide_table_drops_spare_columns_in_order_to_fit() {
    let header = crate::export::latency::round_trip_header(false);
    let row = [
        "shm (spin)",
        "processes",
        "shared-l3 0→1",
        "512 B",
        "55.5k",
        "14.0",
        "13.1",
        "14.2",
        "23.5",
        "90.5",
        "90.5",
        "90.5",
    ];
    let t = one_row(header, &row);
    let (c, dropped) = fit(&t, Some(80));
    assert!(width(&c) <= 80, "{c}");
    let text = c.to_string();
    for kept in ["shm (spin)", "shared-l3 0→1", "p50", "p99 "] {
        assert!(text.contains(kept), "{kept} kept:\n{text}");
    }
    assert_eq!(dropped[..3], ["p99.99", "p90", "mean"]);
    let (all, none) = fit(&t, None);
    assert!(none.is_empty() && width(&all) > 80);
}

/// The note that says what a column means goes when the column is left out
/// (pipeline's "CPUs busy = …" stayed under a table without its column).
#[test]
fn a_column_left_out_takes_its_note_with_it() {
    let mut t = one_row(
        [
            "method",
            "what runs",
            "min s",
            "median s",
            "max s",
            "MB/s",
            "CPUs busy",
        ]
        .map(String::from)
        .to_vec(),
        &[
            "sysv-msg",
            "ipcperf's sysv-msg, writer + peer process",
            "1.415",
            "1.606",
            "1.908",
            "334",
            "1.93",
        ],
    );
    t.notes = vec![
        "MB/s = 10^6 bytes per second at the median time".into(),
        "CPUs busy = CPU time of all the method's processes / wall time".into(),
        "CPUs busy: said again another way".into(),
        "CPUs busy is not this note's subject".into(),
    ];
    let narrow = render_tables_at(std::slice::from_ref(&t), Some(60));
    assert!(
        narrow.contains("left out to fit the terminal: CPUs busy"),
        "{narrow}"
    );
    assert!(
        !narrow.contains("CPUs busy = ") && !narrow.contains("said again"),
        "{narrow}"
    );
    assert!(
        narrow.contains("MB/s = 10^6") && narrow.contains("is not this note's"),
        "{narrow}"
    );
    let whole = render_tables_at(std::slice::from_ref(&t), None);
    assert!(
        whole.contains("CPUs busy = ") && whole.contains("said again"),
        "{whole}"
    );
    // The same table twice (the default suite's seven mechanisms): each note,
    // and the columns left out, said once, under the first; a note of its own
    // under the second still said.
    let mut second = t.clone();
    second.notes.push("noisy: the second table's own".into());
    let both = render_tables_at(&[t, second], Some(60));
    assert_eq!(both.matches("MB/s = 10^6").count(), 1, "{both}");
    assert_eq!(both.matches("left out to fit").count(), 1, "{both}");
    assert_eq!(both.matches("the second table's own").count(), 1, "{both}");
    assert_eq!(both.matches("│ sysv-msg").count(), 2, "{both}");
}

/// Two long columns share the cut: a sentence is not left a word a line beside
/// a name kept whole (fleet's verdict at 80 columns was 10 wide, 14 lines, beside
/// a 43-character case on one line).
#[test]
fn long_columns_share_the_cut() {
    let header = ["case", "figure", "verdict"].map(String::from).to_vec();
    let verdict = "p = 0.029, +2.2 of its 3 peers' spread (9.8%); its peers span \
                   0.77–1.18× their median (alone, but not over the 48 hosts and cases \
                   judged together)";
    let row = [
        "stream fifo processes 64 KiB same-cpu touch",
        "5051 MB/s",
        verdict,
    ];
    let t = one_row(header, &row);
    let (c, dropped) = fit(&t, Some(60));
    assert!(dropped.is_empty(), "{dropped:?}");
    assert!(width(&c) <= 60, "{c}");
    let text = c.to_string();
    // Each column's width: the longest line of its cells.
    let mut widths = [0usize; 3];
    for l in text.lines().filter(|l| l.starts_with('│')) {
        for (i, cell) in l.trim_matches('│').split('┆').enumerate() {
            widths[i] = widths[i].max(cell.trim().chars().count());
        }
    }
    // The sentence is at least as wide as the name (within a word's slack),
    // and the row as short as that makes it.
    assert!(widths[2] + 4 >= widths[0], "{widths:?}\n{text}");
    let rows = text.lines().filter(|l| l.starts_with('│')).count();
    assert!(rows <= 9, "{rows} lines:\n{text}");
}

/// A host name kept whole beside a sentence left the sentence a word a line
/// (fleet at 60 columns: seven lines a row, the name 26 wide); broken after its
/// dots and hyphens, each row takes the lines its sentence needs at the width
/// left.
#[test]
fn a_long_name_gives_its_room_to_the_sentence_beside_it() {
    let header = ["host", "figure", "ratio", "verdict"]
        .map(String::from)
        .to_vec();
    let mut t = one_row(
        header,
        &["ci-runner-0042.lab.example", "2320 MB/s", "0.94×", "x"],
    );
    t.rows = (2..6)
        .map(|h| {
            [
                format!("ci-runner-004{h}.lab.example"),
                "2320 MB/s".into(),
                "0.94×".into(),
                format!("p = 0.{h}91, -0.9 of its 3 peers' spread (8.6%)"),
            ]
            .to_vec()
        })
        .collect();
    let (c, dropped) = fit(&t, Some(60));
    assert!(dropped.is_empty(), "{dropped:?}");
    assert!(width(&c) <= 60, "{c}");
    let text = c.to_string();
    let body = text.lines().filter(|l| l.starts_with('│')).count();
    // The header's line and three a host.
    assert!(body <= 1 + 4 * 3, "{body} lines:\n{text}");
    for h in 2..6 {
        assert!(text.contains(&format!("0.{h}91,")), "{text}");
    }
}

/// A table its figures keep wider than the terminal even with every name cut
/// to a letter a line keeps its names whole: trend's "run" was r/u/n at 50
/// columns, and the table still ran past the edge.
#[test]
fn names_are_not_cut_where_cutting_cannot_make_it_fit() {
    let header = ["run", "started (UTC)", "median", "range", "ratio"]
        .map(String::from)
        .to_vec();
    let t = one_row(
        header,
        &[
            "4",
            "2026-11-30 07:13:48",
            "88.86 µs",
            "67.62–93.99 µs",
            "0.73×",
        ],
    );
    let (c, _) = fit(&t, Some(50));
    let text = c.to_string();
    assert!(text.lines().any(|l| l.contains("│ run ")), "{text}");
    assert!(text.contains("ratio"), "{text}");
    // Where cutting does make it fit, it still does: the figures narrower.
    let t = one_row(
        ["mechanism", "p50"].map(String::from).to_vec(),
        &["uring-msg-ring", "1.2 µs"],
    );
    let c = fit(&t, Some(14)).0;
    assert!(width(&c) <= 14, "{c}");
}

/// A range in parentheses is a figure: never split ("(53.8" over "%–70." over
/// "7%)" in replay's "kept" at 80 columns). And where names must be cut, the
/// shorter of two ways: from every name four wide, or from a letter a line
/// (history at 50 columns: 126 lines, its "measured" a letter a line; now 71).
#[test]
fn a_range_in_parentheses_is_a_figure_and_cut_names_keep_four_letters() {
    assert!(figure("(53.8%–70.7%)") && figure("(1.2") && !figure("(killed"));
    let header = [
        "mechanism",
        "mode",
        "placement",
        "messages",
        "p50 µs",
        "p99 µs",
        "kept",
    ]
    .map(String::from)
    .to_vec();
    let row = [
        "pipe",
        "processes",
        "shared-l3 0→1",
        "10000",
        "227",
        "79233",
        "66.9% (53.8%–70.7%)",
    ];
    let text = fit(&one_row(header, &row), Some(62)).0.to_string();
    assert!(text.contains("(53.8%–70.7%)"), "{text}");
    let header = ["id", "kind", "started (UTC)", "cases", "measured", "status"]
        .map(String::from)
        .to_vec();
    let row = [
        "12",
        "latency",
        "2026-11-30 06:49:48",
        "48",
        "pipe unix memcpy",
        "complete, 19 s",
    ];
    let text = fit(&one_row(header, &row), Some(50)).0.to_string();
    // No column of one letter: every cell line of the header row is 4 or more
    // wide where its name is.
    assert!(text.contains("meas"), "{text}");
    assert!(text.lines().count() <= 10, "{text}");
}

/// Names cut to four letters are not then cut further to make other rows
/// shorter: history at 50 columns with many rows put "kind" a letter a line
/// ("r" over "u" over "n", "latency" in seven lines) to keep "measured" whole.
#[test]
fn many_rows_do_not_cut_a_name_column_to_a_letter_a_line() {
    let header = ["id", "kind", "started (UTC)", "cases", "measured", "status"]
        .map(String::from)
        .to_vec();
    let mut t = one_row(header, &[]);
    t.rows = (1..=12)
        .map(|i| {
            let (kind, measured) = match i % 3 {
                0 => ("latency", "pipe fifo unix tcp +18 more"),
                1 => ("run", "tcp"),
                _ => ("run", "pipe fifo unix tcp +3 more"),
            };
            [
                &i.to_string(),
                kind,
                "2026-12-02 16:25:04",
                "48",
                measured,
                &format!("complete, {i} s"),
            ]
            .map(String::from)
            .to_vec()
        })
        .collect();
    let c = fit(&t, Some(50)).0;
    let text = c.to_string();
    assert!(width(&c) <= 50, "{text}");
    // Every column is four wide at least: the header's first line shows
    // "kind" whole, and no cell is one letter beside a border.
    assert!(
        text.lines().nth(1).is_some_and(|l| l.contains(" kind ")),
        "{text}"
    );
    assert!(!text.contains("┆ r ┆") && !text.contains("┆ l ┆"), "{text}");
    // Where not even four each fits (fleet at 40 columns), the narrowest
    // names widen first: its verdict was a letter a line, "t" over "o".
    let header = ["host", "case", "figure", "ratio", "verdict"]
        .map(String::from)
        .to_vec();
    let row = [
        "vm",
        "round-trip pipe processes 512 B shared-l3 touch",
        "46.27 µs",
        "1.00×",
        "too few peers",
    ];
    let text = fit(&one_row(header, &row), Some(40)).0.to_string();
    let body: Vec<&str> = text.lines().filter(|l| l.starts_with('│')).collect();
    assert!(
        body.iter()
            .all(|l| !l.trim_end_matches('│').ends_with("┆ t ")
                && !l.trim_end_matches('│').ends_with("┆ o ")),
        "{text}"
    );
}
