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
    let gap = w.a_to_b.gaps.max() as f64;
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
}
