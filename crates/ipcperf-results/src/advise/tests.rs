use super::*;
use crate::testdata;
use ipcperf_core::mode::Mode;

fn rr(mech: &str, wait: &str, place: &str, p50: u64, p99: u64, load: f64) -> CaseRecord {
    let mut c = testdata::paced_case(mech, 1, 1.0, p50, p99, p99 * 2);
    c.options.clear();
    c.wait = wait.into();
    c.placement.label = place.into();
    if let Some(l) = c.latency.as_mut() {
        l.series_p50_ns = vec![p50 * 95 / 100, p50, p50 * 105 / 100];
    }
    c.median_cpu_load = Some(load);
    c
}

/// The ranked mechanisms, in order.
fn ranked(a: &Answer) -> Vec<&str> {
    a.ranked.iter().map(|r| r.name.as_str()).collect()
}

fn run_of(cases: Vec<CaseRecord>) -> RunRecord {
    let mut r = testdata::run();
    r.cases = cases;
    r
}

fn ask(p: Pattern) -> Ask {
    Ask {
        pattern: p,
        figure: Figure::P99,
        cpu_budget: None,
        posix_only: false,
        messages: false,
    }
}

#[test]
fn the_ranking_follows_the_figure_at_the_worst_placement() {
    let run = run_of(vec![
        rr("pipe", "block", "same-cpu", 4_000, 9_000, 1.0),
        rr("pipe", "block", "shared-l3", 20_000, 40_000, 0.6),
        rr("unix", "block", "same-cpu", 6_000, 12_000, 1.0),
        rr("unix", "block", "shared-l3", 15_000, 30_000, 0.6),
    ]);
    let a = rank(&run, &ask(Pattern::RequestReply));
    let names = ranked(&a);
    // pipe wins on one CPU but loses across two: unix's worst is better.
    assert_eq!(names, ["unix", "pipe"]);
    assert_eq!(a.ranked[0].value, 30_000.0);
    assert_eq!(a.ranked[0].placement, "shared-l3");
    assert!(a
        .first
        .as_deref()
        .unwrap()
        .starts_with("unix: its p99 round trip of 30.0 µs"));
    // The runner-up wins where both run on one CPU; the caveat says pin.
    let ru = a.runner_up.unwrap();
    assert!(ru.contains("wins where both sides run same-cpu"), "{ru}");
    assert!(
        a.caveats.iter().any(|c| c.contains("placement matters")),
        "{:?}",
        a.caveats
    );
    // At p50, pipe's worst (20 µs) loses to unix's (15 µs) too.
    let mut p50 = ask(Pattern::RequestReply);
    p50.figure = Figure::P50;
    assert_eq!(rank(&run, &p50).ranked[0].name, "unix");
}

#[test]
fn a_cpu_budget_leaves_out_spinning_and_the_constraints_filter() {
    let run = run_of(vec![
        rr("shm", "spin", "shared-l3", 300, 900, 2.0),
        rr("shm", "futex", "shared-l3", 12_000, 30_000, 0.7),
        rr("pipe", "block", "shared-l3", 14_000, 35_000, 0.6),
        rr("posix-mq", "block", "shared-l3", 16_000, 40_000, 0.6),
        rr("eventfd", "block", "shared-l3", 9_000, 20_000, 0.6),
    ]);
    let free = rank(&run, &ask(Pattern::RequestReply));
    assert_eq!(free.ranked[0].name, "shm (spin)");
    assert!(free
        .caveats
        .iter()
        .any(|c| c.contains("keeps 2.00 CPUs busy")));

    let mut budget = ask(Pattern::RequestReply);
    budget.cpu_budget = Some(1.0);
    let a = rank(&run, &budget);
    assert_eq!(a.ranked[0].name, "eventfd");
    assert!(a
        .excluded
        .iter()
        .any(|(n, w)| n == "shm (spin)" && w.contains("over the budget of 1")));

    budget.posix_only = true;
    let a = rank(&run, &budget);
    let names = ranked(&a);
    assert_eq!(names, ["pipe", "posix-mq"]);

    budget.messages = true;
    let a = rank(&run, &budget);
    let names = ranked(&a);
    assert_eq!(names, ["posix-mq"]);
    assert!(a
        .excluded
        .iter()
        .any(|(n, w)| n == "pipe" && w.contains("byte stream")));
}

/// io_uring and epoll are Linux calls: under --posix-only a case that waits in
/// them is left out, whatever its mechanism; without it, it is marked Linux only.
#[test]
fn posix_only_leaves_out_io_uring_and_epoll_waits() {
    let run = run_of(vec![
        rr("uring-pipe", "io_uring", "shared-l3", 9_000, 20_000, 0.6),
        rr("pipe", "epoll", "shared-l3", 10_000, 22_000, 0.6),
        rr("pipe", "block", "shared-l3", 14_000, 35_000, 0.6),
        rr("posix-mq", "block", "shared-l3", 16_000, 40_000, 0.6),
    ]);
    let mut posix = ask(Pattern::RequestReply);
    posix.posix_only = true;
    let a = rank(&run, &posix);
    assert_eq!(ranked(&a), ["pipe", "posix-mq"]);
    for (name, call) in [("uring-pipe", "io_uring"), ("pipe (epoll)", "epoll")] {
        assert!(
            a.excluded
                .iter()
                .any(|(n, w)| n == name && w.contains(&format!("{call} is Linux only"))),
            "{name}: {:?}",
            a.excluded
        );
    }
    let a = rank(&run, &ask(Pattern::RequestReply));
    let why = |name: &str| {
        a.ranked
            .iter()
            .find(|r| r.name == name)
            .unwrap()
            .why
            .clone()
    };
    assert_eq!(why("uring-pipe"), "Linux only");
    assert_eq!(why("pipe (epoll)"), "Linux only");
    assert_eq!(why("pipe"), "");
}

/// What was left out for one reason is one line, its names together, the
/// reason said without the name it began with; other reasons keep their own.
#[test]
fn what_was_left_out_for_one_reason_is_one_line() {
    let ex = |n: &str, w: &str| (n.to_string(), w.to_string());
    let lines = left_out_lines(&[
        ex("pipe", "pipe is a byte stream (--messages)"),
        ex("cma", "cma is Linux only (--posix-only)"),
        ex("pipe (busy)", "pipe (busy) is a byte stream (--messages)"),
        ex("uring-tcp", "uring-tcp: io_uring is Linux only"),
        ex("sysv-msg", "a SysV queue lives in its IPC namespace"),
        ex(
            "shm (spin)",
            "shm (spin) kept 2.00 CPUs busy, over the budget of 1",
        ),
        ex("pipes", "pipes is a name of its own"),
    ]);
    let want = [
        ("pipe, pipe (busy)", "a byte stream (--messages)"),
        ("cma", "Linux only (--posix-only)"),
        ("uring-tcp", "io_uring is Linux only"),
        ("sysv-msg", "a SysV queue lives in its IPC namespace"),
        ("shm (spin)", "kept 2.00 CPUs busy, over the budget of 1"),
        ("pipes", "a name of its own"),
    ];
    let got: Vec<(&str, &str)> = lines
        .iter()
        .map(|(n, w)| (n.as_str(), w.as_str()))
        .collect();
    assert_eq!(got, want);
}

/// The polling-idle section heads its columns with the figure ranked: MB/s
/// for a stream (it said "p99 polling" over MB/s figures).
#[test]
fn the_polling_section_names_the_figure_ranked() {
    let run = testdata::run();
    let stream = ask(Pattern::Stream);
    let a = rank(&run, &stream);
    assert!(!a.ranked.is_empty());
    let s = idle::section(&a, &a, &stream);
    assert!(
        s.contains("MB/s polling") && s.contains("MB/s as-is"),
        "{s}"
    );
    assert!(!s.contains("p99"), "{s}");
    let rr = ask(Pattern::RequestReply);
    let run = run_of(vec![rr_case("pipe"), rr_case("unix")]);
    let a = rank(&run, &rr);
    let s = idle::section(&a, &a, &rr);
    assert!(s.contains("p99 polling") && s.contains("p99 as-is"), "{s}");
    assert!(!s.contains("worst on one CPU"), "{s}");
    // A row whose worst is on one CPU is said to carry its figure over.
    let one_cpu = self::rr("unix", "block", "same-cpu", 10_000, 20_000, 0.6);
    let run = run_of(vec![rr_case("pipe"), one_cpu]);
    let a = rank(&run, &rr);
    let s = idle::section(&a, &a, &rr);
    assert!(s.contains("worst on one CPU"), "{s}");
    assert!(s.contains("both columns): unix"), "{s}");
}

fn rr_case(mech: &str) -> CaseRecord {
    rr(mech, "block", "shared-l3", 10_000, 20_000, 0.6)
}

#[test]
fn a_report_carries_the_answer_its_run_supports() {
    // The test run: pipe 1000, unix 800, tcp 500 MB/s at every size.
    let tables = report_answers(&testdata::run());
    assert_eq!(tables.len(), 1, "{tables:?}");
    let t = &tables[0];
    assert!(t.title.contains("stream, 65536 B blocks"), "{}", t.title);
    let names: Vec<&str> = t.rows.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(names, ["pipe", "unix", "tcp"]);
    assert!(
        t.notes[0].starts_with("first choice: pipe"),
        "{:?}",
        t.notes
    );

    // Round trips: one answer per message size.
    let run = run_of(vec![
        rr("pipe", "block", "shared-l3", 10_000, 20_000, 0.6),
        rr("unix", "block", "shared-l3", 30_000, 60_000, 0.6),
    ]);
    let t = report_answers(&run);
    assert_eq!(t.len(), 1);
    assert!(
        t[0].title.contains("request-reply, 64 B messages"),
        "{}",
        t[0].title
    );
    assert_eq!(t[0].rows[0][1], "pipe");
}

/// Busy CPUs are put down to spinning only where the wait spins: a
/// sleeping wait kept as busy is working, and is not called a spinner.
#[test]
fn only_a_spinning_wait_is_called_spinning() {
    let run = run_of(vec![
        rr("shm", "spin", "shared-l3", 300, 900, 1.9),
        rr("uring-unix", "io_uring", "shared-l3", 9_000, 20_000, 1.8),
        rr("pipe", "block", "shared-l3", 14_000, 35_000, 1.7),
    ]);
    let a = rank(&run, &ask(Pattern::RequestReply));
    let spinning: Vec<&String> = a
        .caveats
        .iter()
        .filter(|c| c.contains("a spinning wait"))
        .collect();
    assert_eq!(spinning.len(), 1, "{:?}", a.caveats);
    assert!(
        spinning[0].starts_with("shm (spin) keeps 1.90"),
        "{spinning:?}"
    );
}

#[test]
fn a_rate_of_round_trips_ranks_the_highest_first() {
    let mut a = rr("pipe", "block", "shared-l3", 10_000, 20_000, 0.6);
    let mut b = rr("unix", "block", "shared-l3", 9_000, 30_000, 0.6);
    a.latency.as_mut().unwrap().round_trips_per_sec = 90_000.0;
    b.latency.as_mut().unwrap().round_trips_per_sec = 50_000.0;
    let mut q = ask(Pattern::RequestReply);
    q.figure = Figure::Rate;
    let ans = rank(&run_of(vec![b, a]), &q);
    let names = ranked(&ans);
    assert_eq!(names, ["pipe", "unix"]);
    let first = ans.first.unwrap();
    assert!(first.contains("rate of round trips of 90.0k/s"), "{first}");
    // The range goes as one over the series' p50s: the fastest series, the most.
    let r = &ans.ranked[0];
    assert!(r.low < r.value && r.value < r.high, "{r:?}");
}

#[test]
fn overlapping_spreads_are_called_a_tie() {
    let run = run_of(vec![
        rr("pipe", "block", "shared-l3", 10_000, 20_000, 0.6),
        rr("unix", "block", "shared-l3", 10_200, 20_400, 0.6),
        rr("tcp", "block", "shared-l3", 30_000, 60_000, 0.6),
    ]);
    let a = rank(&run, &ask(Pattern::RequestReply));
    assert!(tie(&a.ranked[0], &a.ranked[1]));
    assert!(!tie(&a.ranked[1], &a.ranked[2]));
    assert!(a.runner_up.unwrap().contains("a tie with the first"));
    assert!(a
        .caveats
        .iter()
        .any(|c| c.contains("within each other's noise")));
}

/// Ties do not chain (issue 52: ranks 2 to 18 were all "=" across 58.7 to
/// 163.3 us, each overlapping the row above): A~B and B~C with A and C apart
/// make C a rank of its own; D, overlapping C alone, ties C.
#[test]
fn ties_are_groups_that_all_overlap_never_a_chain() {
    let row = |name: &str, low: f64, high: f64| Row {
        name: name.into(),
        value: (low + high) / 2.0,
        low,
        high,
        placement: "shared-l3".into(),
        cpu_load: 0.6,
        spins: false,
        why: String::new(),
        by_placement: Default::default(),
        beyond: None,
        switches: None,
    };
    let rows = vec![
        row("a", 10.0, 20.0),
        row("b", 18.0, 30.0),
        row("c", 25.0, 40.0),
        row("d", 35.0, 50.0),
        row("e", 60.0, 70.0),
    ];
    assert!(tie(&rows[0], &rows[1]) && tie(&rows[1], &rows[2]));
    assert!(!tie(&rows[0], &rows[2]));
    assert_eq!(tie_groups(&rows), [0, 0, 2, 2, 4]);
    // The table marks "=" within a group only.
    let ans = Answer {
        ranked: rows,
        ..rank(&run_of(Vec::new()), &ask(Pattern::RequestReply))
    };
    let t = ranked_table(&ans, &ask(Pattern::RequestReply), String::new());
    let ranks: Vec<&str> = t.rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(ranks, ["1", "2 =", "3", "4 =", "5"]);
}

/// memcpy and null (one side, no IPC) are ceilings beside the ranking, never
/// in it (issue 52: the report's "first choice: memcpy").
#[test]
fn ceilings_stand_beside_the_ranking_never_in_it() {
    let run = run_of(vec![
        testdata::case(
            "memcpy",
            Mode::Single,
            65536,
            "same-cpu",
            &[20000.0, 21000.0],
        ),
        testdata::case("null", Mode::Single, 65536, "same-cpu", &[90000.0, 91000.0]),
        testdata::case(
            "pipe",
            Mode::Processes,
            65536,
            "shared-l3",
            &[3000.0, 3100.0],
        ),
        testdata::case(
            "unix",
            Mode::Processes,
            65536,
            "shared-l3",
            &[5000.0, 5200.0],
        ),
    ]);
    let a = rank(&run, &ask(Pattern::Stream));
    assert_eq!(ranked(&a), ["unix", "pipe"]);
    assert!(
        a.first.as_ref().unwrap().starts_with("unix"),
        "{:?}",
        a.first
    );
    let names: Vec<&str> = a.ceilings.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["memcpy", "null"]);
    let t = ranked_table(&a, &ask(Pattern::Stream), String::new());
    let note = t.notes.iter().find(|n| n.starts_with("ceilings")).unwrap();
    assert!(note.contains("memcpy") && note.contains("null"), "{note}");
    assert!(t.rows.iter().all(|r| r[1] != "memcpy" && r[1] != "null"));
}

#[test]
fn streams_rank_by_throughput_and_failures_are_listed_not_ranked() {
    let mut bad = testdata::case("udp", Mode::Processes, 65536, "shared-l3", &[100.0]);
    bad.status = CaseStatus::Refused;
    bad.message = Some("too big".into());
    let run = run_of(vec![
        testdata::case(
            "pipe",
            Mode::Processes,
            65536,
            "shared-l3",
            &[3000.0, 3100.0],
        ),
        testdata::case(
            "unix",
            Mode::Processes,
            65536,
            "shared-l3",
            &[5000.0, 5200.0],
        ),
        bad,
    ]);
    let a = rank(&run, &ask(Pattern::Stream));
    let names = ranked(&a);
    assert_eq!(names, ["unix", "pipe"]);
    assert!(a.first.unwrap().contains("throughput of 5"));
    assert_eq!(a.not_run.len(), 1);
    assert!(a.not_run[0].1.contains("too big"));
    // One mechanism refused for one reason at two placements is one line
    // (uring-msg-ring's "threads mode only" was said once per placement).
    let mut here = run.clone();
    let mut other = here.cases[2].clone();
    other.placement.label = "same-cpu".into();
    here.cases.push(other);
    let mut other_reason = here.cases[2].clone();
    other_reason.message = Some("no such device".into());
    here.cases.push(other_reason);
    let a = rank(&here, &ask(Pattern::Stream));
    assert_eq!(a.not_run.len(), 2, "{:?}", a.not_run);
    assert_eq!(
        a.not_run[0],
        ("udp shared-l3, same-cpu".into(), "too big".into())
    );
    assert_eq!(a.not_run[1].0, "udp shared-l3");
}

/// Ranked on the p99, a tie is judged from the series' own p99s: two candidates
/// whose p50s spread ±5% but whose series' p99s do not overlap are no tie; and
/// two whose p99s do overlap are, though their p50s are tight.
#[test]
fn p99_ties_come_from_the_series_p99s() {
    let with_p99s = |mech: &str, p99: u64, spread: &[u64]| {
        let mut c = rr(mech, "block", "shared-l3", 10_000, p99, 0.6);
        if let Some(l) = c.latency.as_mut() {
            l.series_p99_ns = spread.to_vec();
        }
        c
    };
    let apart = run_of(vec![
        with_p99s("pipe", 20_000, &[19_800, 20_000, 20_200]),
        with_p99s("unix", 21_000, &[20_800, 21_000, 21_200]),
    ]);
    let a = rank(&apart, &ask(Pattern::RequestReply));
    assert!(!tie(&a.ranked[0], &a.ranked[1]), "{:?}", a.ranked);
    let overlapping = run_of(vec![
        with_p99s("pipe", 20_000, &[15_000, 20_000, 25_000]),
        with_p99s("unix", 21_000, &[16_000, 21_000, 26_000]),
    ]);
    let a = rank(&overlapping, &ask(Pattern::RequestReply));
    assert!(tie(&a.ranked[0], &a.ranked[1]), "{:?}", a.ranked);
}

/// The ranked percentile carries the round trips beyond it: a p99 over three
/// round trips is marked, and the note gives the counts at each row's placement.
#[test]
fn the_ranked_percentile_carries_its_count() {
    let run = run_of(vec![
        rr("pipe", "block", "shared-l3", 20_000, 40_000, 1.0),
        rr("unix", "block", "shared-l3", 30_000, 60_000, 1.0),
    ]);
    let a = ask(Pattern::RequestReply);
    let ans = rank(&run, &a);
    let t = ranked_table(&ans, &a, "t".into());
    // paced_case's histogram holds three round trips: none beyond its p99.
    assert!(t.rows[0][2].ends_with('†'), "{:?}", t.rows);
    assert!(
        t.notes
            .iter()
            .any(|n| n.starts_with("round trips beyond each percentile: p99 ")),
        "{:?}",
        t.notes
    );
    // Throughput carries no count.
    let mut s = a;
    s.pattern = Pattern::Stream;
    let streams = run_of(vec![testdata::case(
        "pipe",
        Mode::Processes,
        65536,
        "shared-l3",
        &[1e9, 1e9],
    )]);
    let t = ranked_table(&rank(&streams, &s), &s, "t".into());
    assert!(!t.rows.is_empty() && t.rows.iter().all(|r| !r[2].contains('†')));
    assert!(
        !t.notes.iter().any(|n| n.contains("beyond")),
        "{:?}",
        t.notes
    );
}

/// Every descriptor mechanism has a busy wait: its spinners on one CPU and
/// the CPUs they keep busy are said once for all, each named.
#[test]
fn many_spinning_waits_are_said_in_one_line_each() {
    let one_cpu = |mut c: CaseRecord| {
        c.placement.label = "same-cpu".into();
        c.placement.writer_cpu = Some(0);
        c.placement.reader_cpu = Some(0);
        c
    };
    let run = run_of(vec![
        one_cpu(rr("pipe", "busy", "same-cpu", 8_000_000, 8_100_000, 2.0)),
        one_cpu(rr("unix", "busy", "same-cpu", 8_000_000, 8_100_000, 1.99)),
        rr("pipe", "epoll", "shared-l3", 14_000, 35_000, 1.0),
    ]);
    let a = rank(&run, &ask(Pattern::RequestReply));
    let on_one: Vec<&String> = a
        .caveats
        .iter()
        .filter(|c| c.contains("on one CPU"))
        .collect();
    assert_eq!(on_one.len(), 1, "{:?}", a.caveats);
    assert!(
        on_one[0].starts_with("pipe (busy), unix (busy) on one CPU"),
        "{on_one:?}"
    );
    let busy: Vec<&String> = a
        .caveats
        .iter()
        .filter(|c| c.contains("burns a CPU"))
        .collect();
    assert_eq!(busy.len(), 1, "{:?}", a.caveats);
    assert!(
        busy[0].contains("pipe (busy)") && busy[0].contains("unix (busy)"),
        "{busy:?}"
    );
    assert!(
        busy[0].contains("2.00") && busy[0].contains("1.99"),
        "{busy:?}"
    );
}
