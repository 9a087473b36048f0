//! The round-trip table's tests.

use super::*;
use ipcperf_core::latency::{new_histogram, record_samples, summarize};
use ipcperf_core::machine::Machine;
use ipcperf_core::mechanism::MechanismKind;
use ipcperf_core::mode::{Mode, Placement};

use ipcperf_core::plan::{CaseSpec, Length};

fn run_with(rec: CaseRecord) -> RunRecord {
    RunRecord {
        ipcperf_version: "t".into(),
        label: None,
        command_line: vec![],
        kind: "latency".into(),
        started_ms: 0,
        finished_ms: None,
        complete: true,
        machine: Machine::default(),
        cases: vec![rec],
    }
}

fn case() -> CaseRecord {
    let spec = CaseSpec {
        length: Length::Count { blocks: 10 },
        ..CaseSpec::new(
            MechanismKind::Pipe,
            Mode::Processes,
            512,
            Placement::pinned(0, 0),
        )
    };
    let mut r = CaseRecord::for_spec(&spec);
    r.workload = Workload::RoundTrip;
    let mut h = new_histogram();
    record_samples(&mut h, &[4_000, 4_000, 6_000, 10_000], 0);
    r.latency = Some(summarize(&h, 1_000_000, 0, 25, vec![4_000], 0));
    r
}

#[test]
fn a_spinning_wait_on_one_cpu_is_flagged_and_only_that() {
    let mut c = case();
    c.wait = "spin".into();
    let note = |c: &CaseRecord| {
        table(&run_with(c.clone()), false)
            .unwrap()
            .notes
            .iter()
            .any(|n| n.contains("spins out its time slice"))
    };
    // The test case runs on CPUs 0 and 0.
    assert!(note(&c));
    c.placement.reader_cpu = Some(1);
    assert!(!note(&c));
    c.placement.reader_cpu = Some(0);
    c.wait = "futex".into();
    assert!(!note(&c));
    // One side of CLIENT/SERVER spinning is enough.
    c.wait = "poll/busy".into();
    assert!(note(&c));
    c.wait = "poll/epoll".into();
    assert!(!note(&c));
}

/// Every descriptor mechanism has a busy wait: spinning on one CPU is one note
/// naming them all (an advise run's table said the same line eight times).
#[test]
fn spinning_on_one_cpu_is_said_once_for_all() {
    let mut run = run_with(case());
    run.cases.clear();
    for (m, w) in [
        ("pipe", "busy"),
        ("unix", "busy"),
        ("shm", "spin"),
        ("tcp", "block"),
    ] {
        let mut c = case();
        c.mechanism = m.into();
        c.wait = w.into();
        run.cases.push(c);
    }
    let notes = table(&run, false).unwrap().notes;
    let spin: Vec<&String> = notes
        .iter()
        .filter(|n| n.contains("spins out its time slice"))
        .collect();
    assert_eq!(spin.len(), 1, "{notes:#?}");
    assert!(
        spin[0].starts_with("pipe (busy), unix (busy), shm (spin) on one CPU:")
            && spin[0].contains("these are the scheduler's figures"),
        "{spin:?}"
    );
}

/// A case refused at each of its placements says why once.
#[test]
fn a_refusal_repeated_at_each_placement_is_one_note() {
    let mut refused = case();
    refused.status = CaseStatus::Refused;
    refused.latency = None;
    refused.message = Some("runs in threads mode only".into());
    let mut run = run_with(refused.clone());
    refused.placement.reader_cpu = Some(1);
    run.cases.push(refused);
    let t = table(&run, false).unwrap();
    assert_eq!(t.rows.len(), 2);
    let said = t
        .notes
        .iter()
        .filter(|n| n.contains("threads mode only"))
        .count();
    assert_eq!(said, 1, "{:?}", t.notes);
}

#[test]
fn spinning_fan_in_clients_on_their_one_cpu_are_flagged() {
    let mut c = case();
    c.placement.reader_cpu = Some(1);
    c.wait = "busy/epoll".into();
    let note = |c: &CaseRecord| {
        table(&run_with(c.clone()), false)
            .unwrap()
            .notes
            .iter()
            .any(|n| n.contains("clients spin on one CPU (0)"))
    };
    assert!(!note(&c), "one client: a CPU of its own");
    c.pairs = Some(ipcperf_core::record::PairsRecord {
        count: 2,
        fan_in: true,
        fan_out: false,
        per_pair: Vec::new(),
    });
    assert!(note(&c));
    c.wait = "epoll/busy".into();
    assert!(
        !note(&c),
        "the server spinning on a CPU of its own is not flagged"
    );
}

#[test]
fn half_rtt_only_when_asked_and_never_called_one_way() {
    let run = run_with(case());
    let t = table(&run, false).unwrap();
    assert!(!t
        .header
        .iter()
        .any(|h| h.contains("one-way") || h.contains("half")));
    // p50 of 4 round trips: 2 beyond it, marked, and the note says so.
    assert_eq!(t.rows[0][6], "4.00†");
    assert!(
        t.notes.iter().any(|n| n.starts_with(
            "round trips beyond each percentile: p50 2, p90 0, p99 0, p99.9 0, p99.99 0; †"
        )),
        "{:?}",
        t.notes
    );
    let t = table(&run, true).unwrap();
    assert!(!t.header.iter().any(|h| h.contains("one-way")));
    let i = t.header.iter().position(|h| h == "half-rtt p50").unwrap();
    assert_eq!(t.rows[0][i], "2.00");
    assert!(t.notes[0].contains("25 ns"));
}

/// p99.99 is shown where some row rests it on 10 round trips beyond it, and
/// left out (with a note) where every row's would be marked (issue 52:
/// nearly every row of the book's tables carried a † there).
#[test]
fn p9999_shows_only_where_some_row_has_it_firm() {
    let few = table(&run_with(case()), false).unwrap();
    assert!(
        !few.header.iter().any(|h| h == "p99.99"),
        "{:?}",
        few.header
    );
    assert!(few.rows.iter().all(|r| r.len() == few.header.len()));
    assert!(few.notes.iter().any(|n| n.starts_with("p99.99 left out")));
    // 200,000 round trips, the slowest 50 each its own time (exact below
    // 2,048 ns): the p99.99 is the 30th of them, 20 beyond it.
    let mut c = case();
    let mut h = new_histogram();
    let mut samples = vec![1_000u64; 199_950];
    samples.extend(1_500..1_550);
    record_samples(&mut h, &samples, 0);
    c.latency = Some(summarize(&h, 1_000_000, 0, 25, vec![4_000], 0));
    let firm = table(&run_with(c), false).unwrap();
    let i = firm.header.iter().position(|h| h == "p99.99").unwrap();
    assert!(!firm.rows[0][i].ends_with('†'), "{:?}", firm.rows[0]);
    assert!(!firm.notes.iter().any(|n| n.starts_with("p99.99 left out")));
}

/// The noise rule looks at the tail too (issue 52: p50 23.5, mean 54.7,
/// p99 1,523 us printed with no note): series whose p99s disagree are named,
/// steady ones are not.
#[test]
fn a_wandering_tail_is_named_though_the_p50s_agree() {
    let tail_note = |p99s: Vec<u64>| {
        let mut c = case();
        if let Some(l) = c.latency.as_mut() {
            l.series_p50_ns = vec![4_000, 4_000, 4_000];
            l.series_p99_ns = p99s;
        }
        let t = table(&run_with(c), false).unwrap();
        assert!(
            !t.notes.iter().any(|n| n.starts_with("noisy")),
            "{:?}",
            t.notes
        );
        t.notes
            .iter()
            .any(|n| n.starts_with("tail noisy") && n.contains("pipe 512 B"))
    };
    assert!(tail_note(vec![10_000, 30_000, 12_000]));
    assert!(!tail_note(vec![10_000, 10_100, 9_900]));
}

/// Noisy rows that are every row at a placement are that placement, once;
/// a placement some of whose rows are steady keeps the names.
#[test]
fn noisy_rows_that_are_a_whole_placement_are_named_by_it() {
    let noisy = |mech: MechanismKind, reader: usize| {
        let mut c = case();
        c.mechanism = mech.name().into();
        c.placement.reader_cpu = Some(reader);
        c.placement.label = if reader == 0 { "same-cpu" } else { "shared-l3" }.into();
        if let Some(l) = c.latency.as_mut() {
            l.series_p50_ns = vec![4_000, 9_000, 4_000];
        }
        c
    };
    let mut run = run_with(noisy(MechanismKind::Pipe, 1));
    run.cases.push(noisy(MechanismKind::Unix, 1));
    run.cases.push(noisy(MechanismKind::Tcp, 1));
    run.cases.push(noisy(MechanismKind::Pipe, 0));
    run.cases.push(case());
    let t = table(&run, false).unwrap();
    let note = t.notes.iter().find(|n| n.starts_with("noisy")).unwrap();
    assert!(
        note.contains("): every row at shared-l3 0→1, pipe 512 B same-cpu 0→0;"),
        "{note}"
    );
    // Paced cases are named with their rate (three rates read alike).
    let mut paced = noisy(MechanismKind::Pipe, 0);
    paced.options.insert("rate_per_sec".into(), "5000".into());
    let mut r = run_with(paced.clone());
    paced.options.insert("rate_per_sec".into(), "1000".into());
    r.cases.push(paced);
    let t = table(&r, false).unwrap();
    let note = t.notes.iter().find(|n| n.starts_with("noisy")).unwrap();
    assert!(
        note.contains("pipe 512 B at 5.0k/s same-cpu 0→0, pipe 512 B at 1.0k/s same-cpu"),
        "{note}"
    );
    // All but one of many: said as such.
    for m in [MechanismKind::Fifo, MechanismKind::Udp] {
        run.cases.push(noisy(m, 1));
    }
    let mut steady = noisy(MechanismKind::UnixDgram, 1);
    steady.latency.as_mut().unwrap().series_p50_ns = vec![4_000; 3];
    run.cases.push(steady);
    let t = table(&run, false).unwrap();
    let note = t.notes.iter().find(|n| n.starts_with("noisy")).unwrap();
    assert!(
        note.contains("): every row at shared-l3 0→1 but unix-dgram 512 B, pipe 512 B same-cpu"),
        "{note}"
    );
    // Twelve of sixteen: the four steady ones named instead.
    let mut many = run_with(noisy(MechanismKind::Pipe, 1));
    many.cases.clear();
    for i in 0..16 {
        let mut c = noisy(MechanismKind::Pipe, 1);
        c.mechanism = format!("m{i}");
        if i >= 12 {
            c.latency.as_mut().unwrap().series_p50_ns = vec![4_000; 3];
        }
        many.cases.push(c);
    }
    let t = table(&many, false).unwrap();
    let note = t.notes.iter().find(|n| n.starts_with("noisy")).unwrap();
    assert!(
        note.contains(
            "): every row at shared-l3 0→1 but m12 512 B, m13 512 B, m14 512 B and m15 512 B;"
        ),
        "{note}"
    );
}

#[test]
fn measured_one_way_gets_its_own_columns() {
    let mut c = case();
    let mut h = ipcperf_core::latency::new_one_way_histogram();
    // Below 256 ns a 2-digit histogram is exact.
    record_samples(&mut h, &[150, 150, 150, 240], 0);
    if let Some(l) = c.latency.as_mut() {
        l.one_way = Some(ipcperf_core::latency::OneWayLatency::from_histogram(&h, 20));
    }
    let t = table(&run_with(c), false).unwrap();
    let i = t.header.iter().position(|h| h == "one-way p50").unwrap();
    assert_eq!(t.rows[0][i], "0.15†");
    assert_eq!(t.rows[0][i + 1], "0.24†");
    assert!(
        t.notes.iter().any(|n| n.contains("one-way")),
        "{:?}",
        t.notes
    );
}

#[test]
fn json_carries_flat_latency_fields() {
    let run = run_with(case());
    let v = serde_json::to_value(&run).unwrap();
    let c = &v["cases"][0];
    for k in [
        "mechanism",
        "mode",
        "block_size_bytes",
        "p50_ns",
        "p99_ns",
        "round_trips_per_sec",
        "latency_histogram",
    ] {
        assert!(!c[k].is_null(), "missing {k}");
    }
    assert_eq!(c["workload"], "round-trip");
    let back: RunRecord = serde_json::from_value(v).unwrap();
    assert_eq!(back.cases[0].latency, run.cases[0].latency);
}

#[test]
fn stream_records_still_read_without_latency() {
    let mut r = case();
    r.workload = Workload::Stream;
    r.latency = None;
    let json = serde_json::to_string(&run_with(r)).unwrap();
    assert!(!json.contains("p50_ns"));
    let back: RunRecord = serde_json::from_str(&json).unwrap();
    assert!(back.cases[0].latency.is_none());
}

/// Each case's series at polling idle is a column beside its p50, and the note
/// says once what it means: the note listed every case's share (17 of the
/// default suite: 15 lines of an 80-column terminal, every figure in it
/// twice over).
#[test]
fn the_polling_idle_p50_is_a_column_and_the_note_says_it_once() {
    let mut run = run_with(case());
    let mut other = case();
    other.mechanism = "unix".into();
    run.cases.push(other);
    for (c, poll) in run.cases.iter_mut().zip([1_500, 2_500]) {
        c.placement.reader_cpu = Some(1);
        c.idle_probe = Some(ipcperf_core::record::IdleProbe {
            p50_ns: Some(poll),
            p99_ns: None,
            bytes_per_sec: None,
            count: 100,
        });
    }
    let t = table(&run, false).unwrap();
    let col = t
        .header
        .iter()
        .position(|h| h == crate::export::idle::POLL_P50)
        .expect("the column");
    let cells: Vec<&str> = t.rows.iter().map(|r| r[col].as_str()).collect();
    assert_eq!(cells, ["1.50", "2.50"]);
    let idle: Vec<&String> = t.notes.iter().filter(|n| n.starts_with("idle:")).collect();
    assert_eq!(idle.len(), 1, "{:?}", t.notes);
    assert!(idle[0].contains("(2 of 2 cases)"), "{}", idle[0]);
    assert!(idle[0].contains("pipe 512 B") && !idle[0].contains("unix 512 B"));
    // A run without the series: no such column.
    let plain = table(&run_with(case()), false).unwrap();
    assert!(!plain.header.iter().any(|h| h.contains("idle")));
}

/// A mode and placement every row shares are said once, in the title; a
/// column stays where rows differ, and a table of one row keeps its columns.
#[test]
fn a_mode_and_placement_every_row_shares_are_in_the_title() {
    let mut unix = case();
    unix.mechanism = "unix".into();
    let mut run = run_with(case());
    run.cases.push(unix.clone());
    let t = table(&run, false).unwrap();
    assert_eq!(
        t.title,
        format!(
            "Round-trip latency · payload {} · processes · {}",
            run.cases[0].payload.name(),
            run.cases[0].placement.shown()
        )
    );
    assert_eq!(&t.header[..3], ["mechanism", "message", "round trips/s"]);
    assert_eq!(t.rows[1][0], "unix");
    // Another placement: that column stays, the mode goes.
    unix.placement.label = "shared-l3".into();
    unix.placement.reader_cpu = Some(1);
    run.cases[1] = unix;
    let t = table(&run, false).unwrap();
    assert!(t.title.ends_with("· processes"), "{}", t.title);
    assert_eq!(&t.header[..2], ["mechanism", "placement"]);
    // One row: nothing repeats.
    let t = table(&run_with(case()), false).unwrap();
    assert_eq!(&t.header[..3], ["mechanism", "mode", "placement"]);
}
