//! Round-trip cases arranged for people: one table with every case side by side
//! (round trips per second and the percentiles of the round-trip time), then notes
//! for cases that were skipped or failed. Measured one-way latency (`--one-way`)
//! gets columns of its own; half the round trip appears only when asked for
//! (`--half-rtt`), under that name.

use ipcperf_core::record::{CaseRecord, CaseStatus, RunRecord};
use ipcperf_core::workload::Workload;

use super::cells::{Table, TailCounts, View};
use crate::units::{fmt_rate, fmt_size};
use ipcperf_core::stats::NOISY_SD;

pub use super::cells::fmt_us;

fn heading(run: &RunRecord) -> String {
    let m = &run.machine;
    format!(
        "ipcperf {} on {} (Linux {}, {} CPUs, {})",
        run.ipcperf_version, m.hostname, m.kernel, m.cpus, m.cpu_model
    )
}

/// A paced case that achieved less than this share of its offered load fell
/// behind its schedule: saturated.
pub const SATURATED: f64 = 0.99;

/// Whether a paced case fell behind its schedule: it achieved less than
/// [`SATURATED`] of its offered load, or its median round trip (counted from when
/// each was due) took longer than the interval between sends, so that most sends
/// went out late. None: not paced, or no figures.
pub fn saturated(c: &CaseRecord) -> Option<bool> {
    let r = offered(c)? as f64;
    let l = c.latency.as_ref()?;
    Some(l.round_trips_per_sec < SATURATED * r || l.p50_ns as f64 > 1e9 / r)
}

/// The offered load of a paced case (round trips per second), if it was paced.
pub fn offered(c: &CaseRecord) -> Option<u64> {
    c.options.get("rate_per_sec").and_then(|v| v.parse().ok())
}

/// A round-trip case named short of its place: "pipe 512 B", and a paced one
/// with its offered rate ("pipe 512 B at 5.0k/s": a note named three rates of
/// one case alike).
fn short_name(c: &CaseRecord) -> String {
    let rate = offered(c).map_or(String::new(), |r| format!(" at {}/s", fmt_rate(r as f64)));
    format!(
        "{} {}{rate}",
        super::cells::mechanism_label(c),
        fmt_size(c.block_size)
    )
}

/// The round-trip table's columns before any one-way or half-RTT ones (paced:
/// the offered rate beside the achieved one).
pub(crate) fn round_trip_header(paced: bool) -> Vec<String> {
    [
        "mechanism",
        "mode",
        "placement",
        "message",
        if paced { "offered/s" } else { "" },
        "round trips/s",
        "mean",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "p99.99",
        "max",
    ]
    .iter()
    .filter(|s| !s.is_empty())
    .map(|s| s.to_string())
    .collect()
}

/// The latency table of a run (None when it has no round-trip cases).
pub fn table(run: &RunRecord, half_rtt: bool) -> Option<Table> {
    let cases: Vec<&CaseRecord> = run
        .cases
        .iter()
        .filter(|c| c.workload == Workload::RoundTrip)
        .collect();
    if cases.is_empty() {
        return None;
    }
    // Paced cases (--rate): the offered load beside what was achieved.
    let paced = cases.iter().any(|c| offered(c).is_some());
    let mut header = round_trip_header(paced);
    // p99.99 only where some row has it firm (10 round trips beyond it, or a
    // record without the counts), or -v asks: else every cell of the column
    // would be marked, a figure resting on a handful of round trips. JSON and
    // CSV keep it always.
    let firm_9999 = crate::console::verbose()
        || cases.iter().any(|c| {
            c.latency.as_ref().is_some_and(|l| {
                l.beyond()
                    .and_then(|b| b.at("p99.99"))
                    .is_none_or(|n| n >= ipcperf_core::latency::FEW_BEYOND)
            })
        });
    if !firm_9999 {
        header.retain(|h| h != "p99.99");
    }
    let measured = cases
        .iter()
        .any(|c| c.latency.as_ref().is_some_and(|l| l.one_way.is_some()));
    if measured {
        for h in ["one-way p50", "one-way p99", "one-way p99.9"] {
            header.push(h.into());
        }
    }
    if half_rtt {
        header.push("half-rtt p50".into());
        header.push("half-rtt p99".into());
    }
    let counted = super::cells::counted(&cases);
    if counted {
        header.push("switches/msg".into());
        header.push("CPU µs/msg".into());
    }
    let lossy = cases.iter().any(|c| c.datagrams.is_some());
    if lossy {
        header.push("lost/dup/reord".into());
    }
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut noisy: Vec<&CaseRecord> = Vec::new();
    let mut tail_noisy: Vec<&CaseRecord> = Vec::new();
    let mut tares: Vec<u64> = Vec::new();
    let (mut tails, mut one_way_tails) = (TailCounts::default(), TailCounts::default());
    let mixed = super::cells::idle_mixed(cases.iter().copied());
    for c in &cases {
        let mut row = vec![
            super::cells::mechanism_label(c),
            c.mode.name().to_string(),
            super::cells::place(c, mixed),
            fmt_size(c.block_size),
        ];
        if paced {
            row.push(offered(c).map_or("-".into(), |r| fmt_rate(r as f64)));
        }
        if let Some(n) = super::cells::spin_on_one_cpu(c).filter(|n| !notes.contains(n)) {
            notes.push(n);
        }
        match (&c.status, &c.latency) {
            (CaseStatus::Ok, Some(l)) => {
                match offered(c) {
                    // Behind the schedule: its latencies hold a growing backlog.
                    Some(r) if saturated(c) == Some(true) => {
                        row.push(format!("{} saturated", fmt_rate(l.round_trips_per_sec)));
                        notes.push(format!(
                            "{} {} {}: saturated at {} of {} offered round trips/s; its \
                             latencies count the backlog from when each was due",
                            super::cells::mechanism_label(c),
                            fmt_size(c.block_size),
                            super::cells::place(c, mixed),
                            fmt_rate(l.round_trips_per_sec),
                            fmt_rate(r as f64)
                        ));
                    }
                    _ => row.push(fmt_rate(l.round_trips_per_sec)),
                }
                row.push(fmt_us(l.mean_ns));
                let beyond = l.beyond();
                for (name, v) in [
                    ("p50", l.p50_ns),
                    ("p90", l.p90_ns),
                    ("p99", l.p99_ns),
                    ("p99.9", l.p999_ns),
                    ("p99.99", l.p9999_ns),
                ] {
                    let cell = tails.cell(name, fmt_us(v as f64), beyond.as_ref());
                    if name != "p99.99" || firm_9999 {
                        row.push(cell);
                    }
                }
                row.push(fmt_us(l.max_ns as f64));
                if measured {
                    match &l.one_way {
                        Some(w) => {
                            for (name, v) in [
                                ("p50", w.p.p50_ns),
                                ("p99", w.p.p99_ns),
                                ("p99.9", w.p.p999_ns),
                            ] {
                                let b = w.p.beyond.as_ref();
                                row.push(one_way_tails.cell(name, fmt_us(v as f64), b));
                            }
                        }
                        None => row.extend(std::iter::repeat_n("-".to_string(), 3)),
                    }
                }
                if half_rtt {
                    row.push(fmt_us(l.p50_ns as f64 / 2.0));
                    row.push(fmt_us(l.p99_ns as f64 / 2.0));
                }
                if counted {
                    row.push(super::cells::switches_cell(c));
                    row.push(super::cells::cpu_cell(c));
                }
                if !tares.contains(&l.clock_cost_ns) {
                    tares.push(l.clock_cost_ns);
                }
                if l.round_trips_lost > 0 {
                    notes.push(format!(
                        "{} {}: {} of {} round trips lost (no answer within the bounded wait)",
                        c.mechanism,
                        fmt_size(c.block_size),
                        l.round_trips_lost,
                        l.round_trips + l.round_trips_lost
                    ));
                }
                // The tail by the same rule: series whose p99s disagree, or a
                // mean the tail has pulled past twice the p50.
                let p99s: Vec<f64> = l.series_p99_ns.iter().map(|&x| x as f64).collect();
                if ipcperf_core::stats::noisy(&p99s).is_some() || l.mean_ns > 2.0 * l.p50_ns as f64
                {
                    tail_noisy.push(c);
                }
                let p50s: Vec<f64> = l.series_p50_ns.iter().map(|&x| x as f64).collect();
                if let Some(sd) = ipcperf_core::stats::noisy(&p50s) {
                    let lo = *l.series_p50_ns.iter().min().unwrap_or(&0);
                    let hi = *l.series_p50_ns.iter().max().unwrap_or(&0);
                    if crate::console::verbose() {
                        notes.push(format!(
                            "{} {}: noisy, the series' p50 vary by {:.0}% ({}–{} µs)",
                            short_name(c),
                            super::cells::place(c, mixed),
                            sd * 100.0,
                            fmt_us(lo as f64),
                            fmt_us(hi as f64)
                        ));
                    } else {
                        noisy.push(c);
                    }
                }
            }
            (status, _) => {
                let word = if *status == CaseStatus::Refused {
                    "skipped"
                } else {
                    "FAILED"
                };
                row.push(word.into());
                let blanks = header.len() - row.len() - usize::from(lossy);
                row.extend(std::iter::repeat_n("-".to_string(), blanks));
                if let Some(m) = &c.message {
                    // Said once: the same case refused at each placement (and
                    // again at polling idle) said it three times.
                    let n = format!(
                        "{} {} {}: {m}",
                        c.mechanism,
                        c.mode.name(),
                        fmt_size(c.block_size)
                    );
                    if !notes.contains(&n) {
                        notes.push(n);
                    }
                }
            }
        }
        if lossy {
            row.push(match &c.datagrams {
                Some(d) => format!("{}/{}/{}", d.lost, d.duplicated, d.reordered),
                None => "-".into(),
            });
        }
        rows.push(row);
    }
    if !tares.is_empty() {
        notes.insert(
        0,
        format!(
            "times are round trips (RTT) in µs; the clock's own cost ({} ns) is subtracted from each",
            tares
                .iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join("/")
        ),
    );
    }
    notes.extend(tails.note("round trips"));
    if !firm_9999 && cases.iter().any(|c| c.latency.is_some()) {
        notes.push(
            "p99.99 left out: no row has 10 round trips beyond it (run longer for it, or -v \
             shows it marked; JSON and CSV keep it)"
                .into(),
        );
    }
    notes.extend(one_way_tails.note("one-way messages"));
    if !noisy.is_empty() {
        notes.push(format!(
            "noisy (the series' p50 vary by > {:.0}%, standard deviation): {}; -v says each",
            NOISY_SD * 100.0,
            super::cells::name_cases(&noisy, &cases, mixed, short_name)
        ));
    }
    if !tail_noisy.is_empty() {
        notes.push(format!(
            "tail noisy (the series' p99 vary by > {:.0}%, or the mean is over twice the p50: \
             a few slow round trips weigh on it): {}; read its percentiles, and run longer for a \
             firm tail",
            NOISY_SD * 100.0,
            super::cells::name_cases(&tail_noisy, &cases, mixed, short_name)
        ));
    }
    notes.extend(super::idle::held_note(&cases));
    notes.extend(super::idle::round_trip_note(&cases));
    if counted {
        notes.push(super::cells::COUNTERS_NOTE.into());
        notes.extend(super::cells::not_counted_note(run));
    }
    if measured {
        notes.push(
            "one-way = from the send time the sender wrote into the message to when the \
             receiver had all of it (one monotonic clock; within 1%); half-rtt = half the \
             round trip, shown only with --half-rtt"
                .into(),
        );
    }
    let payload = cases[0].payload.name();
    Some(Table {
        title: format!("Round-trip latency · payload {payload}"),
        header,
        rows,
        notes,
    })
}

pub fn build(run: &RunRecord, half_rtt: bool) -> View {
    let mut main = table(run, half_rtt);
    if let (Some(t), Some(line)) = (main.as_mut(), super::explain::not_traced(run)) {
        t.notes.push(line);
    }
    View {
        heading: heading(run),
        tables: main
            .into_iter()
            .chain(super::pairs::table(run))
            .chain(super::explain::tables(run))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
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
            note.contains(
                "): every row at shared-l3 0→1 but unix-dgram 512 B, pipe 512 B same-cpu"
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
}
