//! The strace variants and the CSV form, from fixtures written as strace 6.1
//! writes them (src/pattern/fixtures).

use super::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/pattern/fixtures")
        .join(name)
}

fn err(name: &str) -> String {
    match read(&fixture(name)) {
        Ok(_) => panic!("{name} was read"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_socket_pair_and_a_pipe_seen_from_both_ends() {
    let p = read(&fixture("f-ttt-yy.trace")).unwrap();
    assert_eq!(p.clock, "epoch (-ttt)");
    let c = &p.conversations[0];
    assert_eq!(c.number, 1);
    assert!(c.both_sides);
    assert_eq!(
        c.what.as_deref().map(|w| w.starts_with("UNIX-STREAM")),
        Some(true)
    );
    // The first to send is side A; the EAGAIN and the ERESTARTSYS are left out,
    // the receives are the same messages again.
    assert_eq!(c.a, [(20468, 4)]);
    assert_eq!(c.b, [(20413, 3)]);
    assert_eq!((c.a_to_b.count, c.a_to_b.bytes), (2, 200));
    assert_eq!((c.b_to_a.count, c.b_to_a.bytes), (2, 400));
    // A write's time is when it began (the unfinished line's).
    assert_eq!(c.b_to_a.first_ns, Some(1_795_676_566_520_276_000));
    assert_eq!(c.a_to_b.size_fit().unwrap().to_string(), "fixed:100");
    // The pipe: one write, the read of it and the end-of-file read not counted.
    let pipe = p
        .conversations
        .iter()
        .find(|c| c.what.as_deref() == Some("pipe:[777]"))
        .unwrap();
    assert!(pipe.both_sides);
    assert_eq!((pipe.a_to_b.count, pipe.b_to_a.count), (1, 0));
    assert_eq!(
        (pipe.a.clone(), pipe.b.clone()),
        (vec![(20501, 1)], vec![(20502, 0)])
    );
    // The library read (a path one process read: a file) is no conversation.
    assert_eq!(p.conversations.len(), 2);
    assert_eq!(p.unfinished, 0);
}

#[test]
fn ff_files_each_a_pid_and_midnight_in_the_middle() {
    let p = read(&fixture("tt-ff.trace")).unwrap();
    assert_eq!(p.clock, "time-of-day (-t/-tt)");
    // Without -y each (pid, fd) is a conversation of its own, seen from one side.
    assert_eq!(p.conversations.len(), 4);
    let w = &p.conversations[0];
    assert_eq!(w.a, [(301, 4)]);
    assert!(!w.both_sides);
    assert_eq!((w.a_to_b.count, w.a_to_b.bytes), (3, 30));
    // 23:59:59.999000 to 00:00:00.000100 is 1.1 ms, not a day back.
    let gap = w.a_to_b.gap_max().unwrap() as f64;
    assert!((gap - 1.1e6).abs() < 2e3, "{gap}");
    let r = &p.conversations[1];
    assert_eq!(r.a, [(301, 5)]);
    assert_eq!((r.b_to_a.count, r.b_to_a.bytes), (3, 12));
}

#[test]
fn relative_stamps_and_pid_brackets() {
    let p = read(&fixture("r.trace")).unwrap();
    assert_eq!(p.clock, "relative (-r)");
    let c = &p.conversations[0];
    assert_eq!(c.a, [(4000, 3)]);
    assert_eq!((c.a_to_b.count, c.a_to_b.bytes), (3, 6));
    assert_eq!(c.a_to_b.first_ns, Some(0));
    assert_eq!(c.a_to_b.last_ns, 760_000);
    let t = read(&fixture("t.trace")).unwrap();
    assert_eq!(t.conversations[0].a_to_b.count, 2);
}

#[test]
fn a_csv_pattern() {
    let p = read(&fixture("app.csv")).unwrap();
    assert_eq!(p.conversations.len(), 1);
    let c = &p.conversations[0];
    assert!(c.both_sides);
    assert_eq!((c.a_to_b.count, c.a_to_b.bytes), (2, 180));
    assert_eq!((c.b_to_a.count, c.b_to_a.bytes), (2, 2_000_200));
    assert!(c
        .b_to_a
        .size_fit()
        .unwrap()
        .to_string()
        .starts_with("lognormal:"));
    assert_eq!(c.a_to_b.gap_fit().unwrap().to_string(), "poisson:20.0k");
}

/// A CSV is known by its first line that is not blank or a note (one headed
/// by a note was read as strace's and refused); a CSV of another shape is
/// told so, not "neither a call, a signal nor an exit".
#[test]
fn a_csv_headed_by_a_note_is_a_csv() {
    for text in [
        "# my app\n0,>,64\n1000,<,64\n",
        // As a spreadsheet saves "CSV UTF-8": a byte-order mark, CRLF lines.
        "\u{feff}time_ns,direction,size\r\n0,>,64\r\n1000,<,64\r\n",
        "\u{feff}0,>,64\n1000,<,64\n",
        "\n# my app\ntime_ns,direction,size\n0,>,64\n1000,<,64\n",
    ] {
        let (_d, p) = written(text);
        let c = &read(&p).unwrap().conversations[0];
        assert_eq!((c.a_to_b.count, c.b_to_a.count), (1, 1), "{text:?}");
    }
    let (_d, p) = written("# my app\ntime,size\n0,64\n");
    let Err(e) = read(&p) else {
        panic!("a CSV of time,size was read")
    };
    let e = e.to_string();
    assert!(
        e.contains("line 2: ") && e.contains("time_ns,direction,size") && e.contains("2 fields"),
        "{e}"
    );
}

/// A CSV whose rows go back in time (two logs joined) is refused at the row,
/// with the way to sort it: it was read with a gap of 0 and a rate of the rows'
/// span, and both were figures of no traffic. Rows of one time are in order.
#[test]
fn a_csv_out_of_time_order_is_refused_at_the_row() {
    let (_d, p) = written("time_ns,direction,size\n5000000000,>,100\n5000000000,<,100\n3,>,100\n");
    let Err(e) = read(&p) else {
        panic!("rows out of order were read")
    };
    let e = e.to_string();
    assert!(
        e.contains("line 4: time_ns 3 is earlier than line 3's 5000000000")
            && e.contains("sort -t, -k1,1n"),
        "{e}"
    );
}

#[test]
fn bad_traces_say_which_line_and_why() {
    let e = err("bad-line.trace");
    assert!(
        e.contains("bad-line.trace: line 3: ") && e.contains("timestamp"),
        "{e}"
    );
    let e = err("untimed.trace");
    assert!(
        e.contains("without a timestamp") && e.contains("-ttt"),
        "{e}"
    );
    let e = err("none.trace");
    assert!(e.contains("no conversation"), "{e}");
    let e = err("no-such.trace");
    assert!(e.contains("no such file"), "{e}");
    let mut parser = strace::Parser::new(0);
    for (line, why) in [
        ("1795676566.5 write(x, \"a\", 1) = 1", "descriptor"),
        ("1795676566.5 write(3, \"a\", 1)", "result"),
        ("1795676566.5 <... read resumed>\"a\", 1) = 1", "began no"),
        ("1795676566.5 hello world", "neither"),
        ("1795676566.5 write(3, \"a\", 1) = lots", "byte count"),
        ("25:00:00 write(3, \"a\", 1) = 1", "timestamp"),
    ] {
        let e = parser.line(line).unwrap_err();
        assert!(e.why.contains(why), "{line}: {}", e.why);
    }
}

#[test]
fn a_generated_pattern_fits_back_to_its_description() {
    let sizes: fitted::Sizes = "lognormal:300,2".parse().unwrap();
    let gaps: fitted::Gaps = "poisson:20k".parse().unwrap();
    let p = generate(&sizes, &gaps, 1.0, 1);
    let f = &p.conversations[0].a_to_b;
    assert!(
        (f.count as f64 / 20_000.0 - 1.0).abs() < 0.03,
        "{}",
        f.count
    );
    let Some(fitted::Sizes::LogNormal { median, spread }) = f.size_fit() else {
        panic!("{:?}", f.size_fit())
    };
    assert!((median / 300.0 - 1.0).abs() < 0.03 && (spread / 2.0 - 1.0).abs() < 0.03);
    let Some(fitted::Gaps::Poisson(r)) = f.gap_fit() else {
        panic!()
    };
    assert!((r / 20_000.0 - 1.0).abs() < 0.03, "{r}");
    // No process sent it: its channel reads `generated`, not `pid  ⇄  `.
    assert_eq!(table::channel_cell(&p.conversations[0]), "generated");
}

/// A trace written to a file of its own.
fn written(text: &str) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.trace");
    std::fs::write(&p, text).unwrap();
    (d, p)
}

#[test]
fn aligned_results_and_descriptor_calls_are_read() {
    let mut parser = strace::Parser::new(0);
    let mut line = |l: &str| parser.line(l).unwrap();
    // strace pads a short call's result to a column.
    assert_eq!(
        line("7 1.000001 read(3, \"\", 1)                          = 0"),
        None
    );
    assert!(matches!(
        line("7 1.000002 read(3<pipe:[9]>, \"ab\", 2)   = 2"),
        Some(Event::Io(Call {
            bytes: 2,
            fd: 3,
            ..
        }))
    ));
    let fd = |e: Option<Event>| match e {
        Some(Event::Fd { op, .. }) => op,
        e => panic!("{e:?}"),
    };
    assert_eq!(
        fd(line(
            "7 1.1 pipe2([3<pipe:[9]>, 4<pipe:[9]>], O_CLOEXEC) = 0"
        )),
        strace::FdOp::Pipe {
            r: 3,
            w: 4,
            cloexec: true
        }
    );
    assert_eq!(
        fd(line(
            "7 1.2 socketpair(AF_UNIX, SOCK_STREAM, 0, [5, 6]) = 0"
        )),
        strace::FdOp::SocketPair {
            a: 5,
            b: 6,
            cloexec: false
        }
    );
    // A call in two halves.
    assert_eq!(line("7 1.3 dup2(3, 0 <unfinished ...>"), None);
    assert_eq!(
        fd(line("7 1.4 <... dup2 resumed>) = 0")),
        strace::FdOp::Dup {
            old: 3,
            new: 0,
            cloexec: false
        }
    );
    assert_eq!(
        fd(line("7 1.5 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD, child_tidptr=0x7f) = 8")),
        strace::FdOp::Fork { child: 8, shared: false }
    );
    assert_eq!(
        fd(line(
            "7 1.6 openat(AT_FDCWD, \"/tmp/a, b\", O_RDONLY|O_CLOEXEC) = 9</tmp/a, b>"
        )),
        strace::FdOp::Open {
            fd: 9,
            path: "/tmp/a, b".into(),
            cloexec: true
        }
    );
    assert_eq!(
        fd(line(
            "7 1.7 execve(\"/bin/cat\", [\"cat\"], 0x7ffd /* 3 vars */) = 0"
        )),
        strace::FdOp::Exec
    );
    assert_eq!(
        fd(line("7 1.8 close(3)        = 0")),
        strace::FdOp::Close(3)
    );
    // A failed call changes nothing.
    assert_eq!(
        line("7 1.9 close(3) = -1 EBADF (Bad file descriptor)"),
        None
    );
}

/// A coprocess traced without -yy: the shell's two pipes moved onto the child's
/// 0 and 1, the child's first lines before the parent's clone returned, and
/// the library the child reads (opened by name) left out.
const COPROC: &str = "\
10 1795696634.000000 pipe2([3, 4], 0) = 0
10 1795696634.000010 pipe2([5, 6], O_CLOEXEC) = 0
10 1795696634.000020 clone(child_stack=NULL, flags=SIGCHLD <unfinished ...>
11 1795696634.000030 dup2(3, 0) = 0
10 1795696634.000031 <... clone resumed>) = 11
10 1795696634.000032 close(3) = 0
11 1795696634.000040 dup2(6, 1)                 = 1
11 1795696634.000050 close(3) = 0
11 1795696634.000051 close(4) = 0
11 1795696634.000060 execve(\"/usr/bin/answer\", [\"answer\"], 0x1 /* 1 var */) = 0
11 1795696634.000070 openat(AT_FDCWD, \"/lib/libc.so.6\", O_RDONLY|O_CLOEXEC) = 3
11 1795696634.000080 read(3, \"ELF\", 832) = 832
10 1795696634.000100 write(4, \"q\"..., 100) = 100
10 1795696634.000101 write(4, \"q\"..., 100) = 100
11 1795696634.000110 read(0, \"q\"..., 4096) = 200
11 1795696634.000120 write(1, \"a\"..., 300) = 300
11 1795696634.000121 write(1, \"a\"..., 300) = 300
10 1795696634.000130 read(5, \"a\"..., 600) = 600
11 1795696634.000140 read(0, \"\", 4096)                  = 0
";

#[test]
fn a_coprocess_without_yy_is_one_conversation_answered_in_order() {
    let (_d, t) = written(COPROC);
    let p = read(&t).unwrap();
    assert_eq!(p.conversations.len(), 1, "{:?}", p.notes);
    let c = &p.conversations[0];
    assert!(c.both_sides);
    assert_eq!(c.channels, ["pipe[10:3,4]", "pipe[10:5,6]"]);
    assert_eq!((c.a_to_b.count, c.a_to_b.bytes), (2, 200));
    assert_eq!((c.b_to_a.count, c.b_to_a.bytes), (2, 600));
    assert!(p.notes.is_empty(), "{:?}", p.notes);
    // Two requests sent before either answer (pipelining): B read both at once,
    // so both answers follow the second request.
    let m = script::read_once(&t, None).unwrap().into_messages(c);
    use ipcperf_core::workload::replay::Answers;
    let answers: Vec<Answers> = m.iter().filter(|m| !m.1).map(|m| m.3).collect();
    assert_eq!(answers, [Answers::Request(1), Answers::Request(1)]);
    // One channel alone, by its name.
    let one = read_with(&t, Some("pipe[10:5,6]")).unwrap();
    assert_eq!(one.conversations.len(), 1);
    assert_eq!(one.conversations[0].channels, ["pipe[10:5,6]"]);
    assert_eq!(one.conversations[0].messages(), 2);
    assert!(read_with(&t, Some("pipe:[1]")).is_err());
}

#[test]
fn answers_follow_the_request_read_whole() {
    // Three requests of 10 B in one go; B reads them 10 B at a time and answers
    // each before reading the next: each answer follows its own request.
    let text = "\
1 1795696634.000000 write(3<pipe:[1]>, \"q\", 10) = 10
1 1795696634.000001 write(3<pipe:[1]>, \"q\", 10) = 10
1 1795696634.000002 write(3<pipe:[1]>, \"q\", 10) = 10
2 1795696634.000010 read(0<pipe:[1]>, \"q\", 10) = 10
2 1795696634.000011 write(1<pipe:[2]>, \"a\", 5) = 5
2 1795696634.000012 read(0<pipe:[1]>, \"q\", 10) = 10
2 1795696634.000013 write(1<pipe:[2]>, \"a\", 5) = 5
2 1795696634.000014 read(0<pipe:[1]>, \"q\", 10) = 10
2 1795696634.000015 write(1<pipe:[2]>, \"a\", 5) = 5
1 1795696634.000020 read(4<pipe:[2]>, \"a\", 15) = 15
";
    let (_d, t) = written(text);
    let p = read(&t).unwrap();
    assert_eq!(p.conversations.len(), 1);
    let c = &p.conversations[0];
    assert_eq!(c.what.as_deref(), Some("pipe:[1] + pipe:[2]"));
    let m = script::read_once(&t, None).unwrap().into_messages(c);
    use ipcperf_core::workload::replay::{Answers, Script};
    let answers: Vec<Answers> = m.iter().filter(|m| !m.1).map(|m| m.3).collect();
    assert_eq!(
        answers,
        [
            Answers::Request(0),
            Answers::Request(1),
            Answers::Request(2)
        ]
    );
    let s = Script::answering(m, 1.0).unwrap();
    let anchors: Vec<u32> = s.steps.iter().map(|s| s.anchor).collect();
    assert_eq!(&anchors[3..], [0, 1, 2]);
}

/// The conversations' table fits 80 columns into a pipe or a file, as its
/// heading does, whatever this trace's names, pids and times (a run of the
/// conversations test drew 81 when its pids and times came a digit longer:
/// the table was fitted on a terminal only).
#[test]
fn the_table_fits_80_columns_off_a_terminal() {
    let mut p = read(&fixture("app.csv")).unwrap();
    let c = &mut p.conversations[0];
    c.channels = vec![
        "/tmp/.tmpmIsDTf/a-long-directory/fifos-false/up".into(),
        "/tmp/.tmpmIsDTf/a-long-directory/fifos-false/down".into(),
    ];
    c.a = vec![(4_194_301, 3)];
    c.b = vec![(4_194_302, 4)];
    let shown: Vec<&Conversation> = p.conversations.iter().collect();
    let text = table::table(&p, &shown, "app.csv", 10, crate::export::Format::Table);
    assert!(text.contains("4194301"), "{text}");
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 80, "{widest} columns:\n{text}");
}

/// The fitted options with their count ("26 of 27 messages at that size")
/// passed 80 columns: the count goes under them, the options kept on one line.
#[test]
fn a_fitted_line_and_its_count_fit_80_columns() {
    let mut p = read(&fixture("app.csv")).unwrap();
    let mut f = Flow::new();
    for i in 0..27u64 {
        f.add(i * 169_000, if i == 5 { 2_300 } else { 4_096 });
    }
    p.conversations[0].a_to_b = f;
    let shown: Vec<&Conversation> = p.conversations.iter().collect();
    let text = table::table(&p, &shown, "app.csv", 10, crate::export::Format::Table);
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 80, "{widest} columns:\n{text}");
    let at = text
        .find("A→B fitted: --size-dist fixed:4096 --gaps poisson:")
        .unwrap();
    assert!(
        text[at..].contains("\n    (26 of 27 messages at that size)"),
        "{text}"
    );
}

/// A way whose every message had one size is `fixed:` that size, and its
/// figures are the size seen: 100,000,000-byte messages read `lognormal:…,1.00`
/// and a max of 100,007,935 (the histogram bucket's edge, 0.1% wide).
#[test]
fn one_large_size_is_fixed_and_shown_as_seen() {
    let mut f = Flow::new();
    for i in 0..3u64 {
        f.add(i * 1_000_003, 100_000_000);
    }
    assert_eq!(f.size_fit().unwrap().to_string(), "fixed:100000000");
    assert_eq!(f.size_range(), (100_000_000, 100_000_000));
    assert_eq!(f.size_at(0.5), 100_000_000);
    assert_eq!(
        (f.gap_at(0.5), f.gap_max()),
        (Some(1_000_003), Some(1_000_003))
    );
    // Two sizes: each percentile within the sizes seen.
    f.add(4_000_000, 99_999_999);
    assert_eq!(f.size_range(), (99_999_999, 100_000_000));
    assert!(f.size_at(1.0) <= 100_000_000 && f.size_at(0.0) >= 99_999_999);
    assert!(f.size_fit().unwrap().to_string().starts_with("lognormal:"));
    assert_eq!(Flow::new().gap_at(0.5), None);
}

/// A way's cell names the end of its sizes that differs from its p50 as
/// shown: 4 KiB writes and a short last one read "max 4 KiB" beside "× 4 KiB".
#[test]
fn a_way_shows_the_size_that_differs() {
    let mut f = Flow::new();
    for i in 0..26u64 {
        f.add(i * 1000, 4096);
    }
    f.add(26_000, 1500);
    assert_eq!(table::way_cell(&f), "27 × 4 KiB\nmin 1.5 KiB\ngap 1.0 µs");
    f.add(27_000, 65536);
    assert!(
        table::way_cell(&f).contains("\nmax 64 KiB\n"),
        "{}",
        table::way_cell(&f)
    );
}

/// A way of one size but a few others (a pipe's 4 KiB writes and a short last
/// one) is fitted as that size, not a lognormal around it whose draws are
/// never 4096 B, however many other sizes there are; under 90% at one size it
/// stays a lognormal, as does a way whose commonest size cannot be told.
#[test]
fn a_way_mostly_of_one_size_is_fitted_as_that_size() {
    let mut f = Flow::new();
    for i in 0..26u64 {
        f.add(i * 1000, 4096);
    }
    f.add(26_000, 1500);
    assert_eq!(f.commonest(), Some((4096, 26)));
    assert_eq!(f.size_fit().unwrap().to_string(), "fixed:4096");
    for i in 0..3u64 {
        f.add(27_000 + i, 100 + i);
    }
    // 26 of 30: under 90%.
    assert!(f.size_fit().unwrap().to_string().starts_with("lognormal:"));
    let mut many = Flow::new();
    for i in 0..1000u64 {
        many.add(i, if i < 900 { 4096 } else { i });
    }
    // 100 other sizes, 37 of them past the 64 counted: 900 of 1000 is still
    // more than every message left uncounted (it was a lognormal).
    assert_eq!(many.commonest(), Some((4096, 900)));
    assert_eq!(many.size_fit().unwrap().to_string(), "fixed:4096");
    // 100 sizes first, each once, then 4096 half the time: what was left
    // uncounted could be commoner than any size counted.
    let mut late = Flow::new();
    for i in 0..200u64 {
        late.add(i, if i < 100 { 1000 + i } else { 4096 });
    }
    assert_eq!(late.commonest(), None);
    assert!(late
        .size_fit()
        .unwrap()
        .to_string()
        .starts_with("lognormal:"));
    // Merged, a size counted on one side only and left uncounted on the
    // other is dropped, not undercounted.
    let mut merged = late.clone();
    merged.merge(&many);
    assert_eq!(merged.commonest(), None);
    let mut exact = Flow::new();
    exact.add(0, 4096);
    exact.merge(&many);
    assert_eq!(exact.commonest(), Some((4096, 901)));
    // Ways of 61 sizes each, every one counted, merged: at most 128 kept,
    // the commonest among them.
    let mut all = Flow::new();
    for w in 0..10u64 {
        let mut f = Flow::new();
        f.add(0, 512);
        for i in 1..61u64 {
            f.add(i, 10_000 + w * 64 + i);
        }
        all.merge(&f);
    }
    assert_eq!(all.distinct.len(), 128);
    assert_eq!(all.distinct.get(&512), Some(&10));
    assert_eq!(
        all.commonest(),
        None,
        "10 of 610: the uncounted could outnumber it"
    );
    // Merged ways add their counts.
    let mut a = Flow::new();
    a.add(0, 512);
    let mut b = Flow::new();
    b.add(1, 512);
    b.add(2, 512);
    a.merge(&b);
    assert_eq!(a.commonest(), Some((512, 3)));
}
