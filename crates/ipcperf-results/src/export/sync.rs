//! Sync runs for people: Duncan's Table 2 (request/release and set/clear cycles per
//! second, tare subtracted) with ns per cycle and the tare shown; and the
//! robustness table. JSON is the run record; CSV is one row per case.

use ipcperf_core::record::{CaseRecord, CaseStatus, RunRecord, SyncSeries};

use super::cells::{Table, View};
use super::Format;
use crate::units::fmt_rate;

fn ns(x: Option<f64>) -> String {
    match x {
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
        None => "-".into(),
    }
}

fn us(x: u64) -> String {
    if x >= 1_000_000 {
        crate::units::fmt_time_ns(x as f64)
    } else if x >= 10_000 {
        format!("{:.0} µs", x as f64 / 1e3)
    } else {
        format!("{:.1} µs", x as f64 / 1e3)
    }
}

/// "1.23M (1.20M–1.25M)": the figure and the range of the series (each less the
/// tare where the figure's tare was taken off: gross − net), or why there is no
/// figure.
fn rate_cell(
    rate: Option<f64>,
    (gross, net): (Option<f64>, Option<f64>),
    series: &[SyncSeries],
    note: &Option<String>,
) -> String {
    match rate {
        Some(r) => {
            let t = match (gross, net) {
                (Some(g), Some(n)) => g - n,
                _ => 0.0,
            };
            let rates: Vec<f64> = series
                .iter()
                .map(|s| s.elapsed_ns as f64 / s.cycles.max(1) as f64 - t)
                .filter(|&n| n > 0.0)
                .map(|n| 1e9 / n)
                .collect();
            let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = rates.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if rates.len() > 1 {
                format!("{} ({}–{})", fmt_rate(r), fmt_rate(lo), fmt_rate(hi))
            } else {
                fmt_rate(r)
            }
        }
        None => match note {
            Some(n) if n.starts_with("not applicable") => "n/a".into(),
            _ => "-".into(),
        },
    }
}

fn timing_table(cases: &[&CaseRecord], mode: &str, placement: &str) -> Table {
    // The switches column where some case was counted (records before the
    // counters have none).
    let counted = cases.iter().any(|c| {
        c.sync
            .as_ref()
            .is_some_and(|s| s.set_clear_series.iter().any(|x| x.cost.is_some()))
    });
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut atomics: Vec<f64> = Vec::new();
    let mut said: Vec<(String, Vec<String>)> = Vec::new();
    let mut stood: Vec<String> = Vec::new();
    let mut tails = super::cells::TailCounts::default();
    for c in cases {
        let Some(s) = &c.sync else { continue };
        if c.status != CaseStatus::Ok {
            let word = if c.status == CaseStatus::Refused {
                "skipped"
            } else {
                "FAILED"
            };
            rows.push(vec![
                s.primitive.clone(),
                word.into(),
                word.into(),
                "-".into(),
                "-".into(),
                "-".into(),
            ]);
            if counted {
                rows.last_mut().expect("just pushed").push("-".into());
            }
            notes.push(format!(
                "{}: {}",
                s.primitive,
                c.message.as_deref().unwrap_or("")
            ));
            continue;
        }
        let lat = s
            .set_clear_latency
            .as_ref()
            .map(|l| {
                let b = l.beyond.as_ref();
                format!(
                    "{} / {}",
                    tails.cell("p50", us(l.p50_ns), b),
                    tails.cell("p99", us(l.p99_ns), b)
                )
            })
            .unwrap_or_else(|| "-".into());
        rows.push(vec![
            s.primitive.clone(),
            rate_cell(
                s.request_release_per_sec,
                (s.request_release_gross_ns, s.request_release_ns),
                &s.request_release_series,
                &s.request_release_note,
            ),
            rate_cell(
                s.set_clear_per_sec,
                (s.set_clear_gross_ns, s.set_clear_ns),
                &s.set_clear_series,
                &s.set_clear_note,
            ),
            format!("{} / {}", ns(s.request_release_ns), ns(s.set_clear_ns)),
            format!(
                "{} / {}",
                ns(s.request_release_tare_ns),
                ns(s.set_clear_tare_ns)
            ),
            lat,
        ]);
        if counted {
            let row = rows.last_mut().expect("just pushed");
            row.push(switches_per_cycle(&s.set_clear_series));
        }
        atomics.extend(s.atomic_rmw_ns);
        for (n, tare, gross, what) in [
            (
                &s.request_release_note,
                s.request_release_tare_ns,
                s.request_release_gross_ns,
                "request/release",
            ),
            (
                &s.set_clear_note,
                s.set_clear_tare_ns,
                s.set_clear_gross_ns,
                "set/clear",
            ),
        ] {
            let Some(n) = n else { continue };
            if let (true, Some(t), Some(g)) = (n.starts_with("gross:"), tare, gross) {
                let who = if what == "request/release" {
                    s.primitive.clone()
                } else {
                    format!("{} {what}", s.primitive)
                };
                stood.push(format!("{who} {} of {}", ns(Some(t)), ns(Some(g))));
                continue;
            }
            match said.iter_mut().find(|(text, _)| text == n) {
                Some((_, who)) if !who.contains(&s.primitive) => who.push(s.primitive.clone()),
                Some(_) => {}
                None => said.push((n.clone(), vec![s.primitive.clone()])),
            }
        }
    }
    // Each case measures the atomic floor: one line for them all (it was a line
    // a case, unnamed); a reason shared by several primitives names them once.
    let (lo, hi) = atomics
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &a| {
            (l.min(a), h.max(a))
        });
    if !atomics.is_empty() {
        let span = if format!("{lo:.1}") == format!("{hi:.1}") {
            format!("{lo:.1} ns")
        } else {
            format!("{lo:.1}–{hi:.1} ns (fewest–most over the rows)")
        };
        notes.push(format!(
            "one atomic read-modify-write here: {span}, the floor of request/release, which \
             takes two"
        ));
    }
    if !stood.is_empty() {
        notes.push(format!(
            "gross, the empty loop left in where it is over {:.0}% of the cycle (it would \
             overlap away the work it wraps): {} ns",
            ipcperf_core::sync::TARE_SHARE * 100.0,
            stood.join(", ")
        ));
    }
    notes.extend(
        said.into_iter()
            .map(|(text, who)| format!("{}: {text}", who.join(", "))),
    );
    notes.push(
        "cycles/s and ns per cycle have the tare (the same loop around dummy calls) subtracted \
         where it is at most 10% of the cycle, else the loop's gross time stands; set/clear = a token to the other side and back (two wake-ups); p50/p99 per set/clear cycle, \
         clock cost subtracted"
            .into(),
    );
    if counted {
        notes.push(
            "switches/cycle: context switches per set/clear cycle, both sides together (JSON: \
             every counter of each series, `cost` and `partner_cost`)"
                .into(),
        );
    }
    notes.extend(tails.note("set/clear cycles"));
    Table {
        title: format!(
            "Synchronization primitives, set/clear partner: {mode}, {placement} (Duncan 1989, Table 2)"
        ),
        header: vec![
            "primitive".into(),
            "request/release cycles/s".into(),
            "set/clear cycles/s".into(),
            "ns per cycle (r/r / s/c)".into(),
            "tare ns/cycle (r/r / s/c)".into(),
            "set/clear p50 / p99".into(),
        ]
        .into_iter()
        .chain(counted.then(|| "switches/cycle".into()))
        .collect(),
        rows,
        notes,
    }
}

/// Context switches per set/clear cycle, both sides together, the median over
/// the series that were counted ("-" where none was).
fn switches_per_cycle(series: &[ipcperf_core::record::SyncSeries]) -> String {
    let v: Vec<f64> = series
        .iter()
        .filter(|s| s.cycles > 0)
        .filter_map(|s| {
            let ours = s.cost?.counts.switches();
            let theirs = s.partner_cost.map_or(0, |c| c.counts.switches());
            Some((ours + theirs) as f64 / s.cycles as f64)
        })
        .collect();
    ipcperf_core::stats::spread(&v).map_or("-".into(), |m| format!("{:.2}", m.median))
}

fn robustness_table(cases: &[&CaseRecord]) -> Table {
    let results: Vec<_> = cases
        .iter()
        .map(|c| c.sync.as_ref().and_then(|s| s.robustness.as_ref()))
        .collect();
    // A reason that several rows share ("not given back: nothing undoes…") is
    // said once under the table, its head in each row; so is the wait's bound
    // where every waiter not freed waited as long (a narrow terminal otherwise
    // wraps the same four lines under each of them).
    let shared = |note: &str| {
        results
            .iter()
            .filter(|r| r.is_some_and(|r| r.note == note))
            .count()
            > 1
    };
    let mut bounds: Vec<u64> = results
        .iter()
        .flatten()
        .filter(|r| !r.freed)
        .map(|r| r.bound_ns)
        .collect();
    bounds.dedup();
    let one_bound = (bounds.len() == 1).then(|| bounds[0]);
    let mut rows = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    for (c, r) in cases.iter().zip(&results) {
        let holder = c.options.get("holder").cloned().unwrap_or_default();
        match r {
            Some(r) => rows.push(vec![
                c.mechanism.clone(),
                r.variant.clone(),
                match (r.freed, one_bound) {
                    (true, _) => "yes".into(),
                    (false, Some(_)) => "no".into(),
                    (false, None) => format!("no (not within {} ms)", r.bound_ns / 1_000_000),
                },
                r.freed_after_ns.map(us).unwrap_or_else(|| "never".into()),
                match r.note.split_once(": ").filter(|_| shared(&r.note)) {
                    Some((head, _)) => {
                        if !notes.contains(&r.note) {
                            notes.push(r.note.clone());
                        }
                        head.into()
                    }
                    None => r.note.clone(),
                },
            ]),
            None => {
                rows.push(vec![
                    c.mechanism.clone(),
                    holder,
                    if c.status == CaseStatus::Refused {
                        "skipped".into()
                    } else {
                        "FAILED".into()
                    },
                    "-".into(),
                    c.message.clone().unwrap_or_default(),
                ]);
            }
        }
    }
    notes.insert(
        0,
        "a holder process takes the primitive and is killed with SIGKILL; the waiter (this process) \
         then waits, bounded; 'after' runs from kill(2) to the waiter holding it"
            .into(),
    );
    if let Some(b) = one_bound {
        notes.insert(
            1,
            format!(
                "no: not freed within {} ms (the waiter's bound)",
                b / 1_000_000
            ),
        );
    }
    Table {
        title: "Robustness: the holder dies; is a waiter freed?".into(),
        header: vec![
            "primitive".into(),
            "holder".into(),
            "waiter freed".into(),
            "after".into(),
            "how".into(),
        ],
        rows,
        notes,
    }
}

/// The table a sync case goes in: its mode and placement (with the CPUs asked).
pub fn group_key(c: &CaseRecord) -> (String, String) {
    let p = &c.placement;
    let cpus = match (p.writer_cpu, p.reader_cpu) {
        (Some(w), Some(r)) => format!("{} (CPUs {w},{r})", p.label),
        _ => p.label.clone(),
    };
    (c.mode.name().to_string(), cpus)
}

pub fn build(run: &RunRecord) -> View {
    let m = &run.machine;
    let heading = format!(
        "ipcperf {} sync on {} (Linux {}, {} CPUs, {})",
        run.ipcperf_version, m.hostname, m.kernel, m.cpus, m.cpu_model
    );
    let mut tables = Vec::new();
    let robust: Vec<&CaseRecord> = run
        .cases
        .iter()
        .filter(|c| {
            c.options.contains_key("holder")
                || c.sync.as_ref().is_some_and(|s| s.robustness.is_some())
        })
        .collect();
    if !robust.is_empty() {
        tables.push(robustness_table(&robust));
    }
    // One table per (mode, placement), in the order they ran.
    let key = group_key;
    let mut keys: Vec<(String, String)> = Vec::new();
    for c in &run.cases {
        if !robust.iter().any(|r| std::ptr::eq(*r, c)) && !keys.contains(&key(c)) {
            keys.push(key(c));
        }
    }
    for k in keys {
        let cases: Vec<&CaseRecord> = run
            .cases
            .iter()
            .filter(|c| key(c) == k && !robust.iter().any(|r| std::ptr::eq(*r, *c)))
            .collect();
        tables.push(timing_table(&cases, &k.0, &k.1));
    }
    // `--explain`: where each set/clear cycle's time goes, and why a case was not
    // traced.
    if let (Some(t), Some(line)) = (tables.last_mut(), super::explain::not_traced(run)) {
        t.notes.push(line);
    }
    tables.extend(super::explain::tables(run));
    View { heading, tables }
}

fn csv(run: &RunRecord) -> String {
    let mut w = super::csv::CsvOut::default();
    w.row([
        "primitive",
        "mode",
        "status",
        "request_release_per_sec",
        "set_clear_per_sec",
        "request_release_ns",
        "set_clear_ns",
        "request_release_tare_ns",
        "set_clear_tare_ns",
        "request_release_gross_ns",
        "set_clear_gross_ns",
        "atomic_rmw_ns",
        "set_clear_p50_ns",
        "set_clear_p99_ns",
        "set_clear_beyond_p50_samples",
        "set_clear_beyond_p99_samples",
        "robust_variant",
        "robust_freed",
        "robust_freed_after_ns",
        "message",
    ]);
    let f = |x: Option<f64>| x.map(|v| format!("{v:.3}")).unwrap_or_default();
    for c in &run.cases {
        let Some(s) = &c.sync else { continue };
        let lat = s.set_clear_latency.as_ref();
        let beyond = lat.and_then(|l| l.beyond);
        let rb = s.robustness.as_ref();
        w.row([
            s.primitive.clone(),
            s.mode.name().to_string(),
            format!("{:?}", c.status).to_lowercase(),
            f(s.request_release_per_sec),
            f(s.set_clear_per_sec),
            f(s.request_release_ns),
            f(s.set_clear_ns),
            f(s.request_release_tare_ns),
            f(s.set_clear_tare_ns),
            f(s.request_release_gross_ns),
            f(s.set_clear_gross_ns),
            f(s.atomic_rmw_ns),
            lat.map(|l| l.p50_ns.to_string()).unwrap_or_default(),
            lat.map(|l| l.p99_ns.to_string()).unwrap_or_default(),
            beyond.map(|b| b.p50.to_string()).unwrap_or_default(),
            beyond.map(|b| b.p99.to_string()).unwrap_or_default(),
            rb.map(|r| r.variant.clone()).unwrap_or_default(),
            rb.map(|r| r.freed.to_string()).unwrap_or_default(),
            rb.and_then(|r| r.freed_after_ns.map(|n| n.to_string()))
                .unwrap_or_default(),
            c.message.clone().unwrap_or_default(),
        ]);
    }
    w.text()
}

/// Render a sync run in `format`.
pub fn render(run: &RunRecord, format: Format) -> String {
    match format {
        Format::Json => super::render(run, Format::Json, None),
        Format::Csv => csv(run),
        Format::OpenMetrics | Format::Prometheus => super::render(run, format, None),
        Format::Table => super::table::render(&build(run)),
        Format::Markdown => super::markdown::render(&build(run)),
    }
}

#[cfg(test)]
mod tests {
    use crate::testdata;

    /// A stalled set/clear's p99 (tens of ms on a busy VM) reads in ms, as does
    /// robustness's 'after'.
    #[test]
    fn long_times_read_in_their_unit() {
        assert_eq!(super::us(113_400), "113 µs");
        assert_eq!(super::us(9_870), "9.9 µs");
        assert_eq!(super::us(42_500_000), "42.50 ms");
        // A robust futex handed on 1.8 ms after its holder was killed.
        assert_eq!(super::us(1_841_000), "1.84 ms");
    }

    /// The atomic floor each case measures is one line (it was a line a case,
    /// no primitive named: seven lines of 6.4 to 8.7 ns); the figures shown
    /// gross are one line naming each; a reason several primitives share names
    /// them once.
    #[test]
    fn notes_are_said_once_and_name_their_rows() {
        let mut cases = Vec::new();
        for (i, p) in ["futex", "mutex", "flock"].into_iter().enumerate() {
            let mut c = testdata::sync_case(p, 1_000, 2_000, 3_000, 4_000);
            let s = c.sync.as_mut().unwrap();
            s.atomic_rmw_ns = Some(6.0 + i as f64);
            if p != "flock" {
                s.request_release_tare_ns = Some(3.0);
                s.request_release_gross_ns = Some(20.0 + i as f64);
                s.request_release_note = Some("gross: the empty loop (3.0 ns) is …".into());
            }
            if p != "futex" {
                s.set_clear_note = Some("not applicable: only the owner may release it".into());
            }
            cases.push(c);
        }
        let refs: Vec<&_> = cases.iter().collect();
        let t = super::timing_table(&refs, "threads", "cross-cpu");
        let atomic: Vec<&String> = t.notes.iter().filter(|n| n.contains("atomic")).collect();
        assert_eq!(atomic.len(), 1, "{:?}", t.notes);
        assert!(atomic[0].contains("6.0–8.0 ns"), "{atomic:?}");
        let gross: Vec<&String> = t.notes.iter().filter(|n| n.contains("gross")).collect();
        assert_eq!(
            gross.len(),
            2,
            "the line and the tare's note: {:?}",
            t.notes
        );
        assert!(
            gross[0].ends_with(": futex 3.0 of 20.0, mutex 3.0 of 21.0 ns"),
            "{gross:?}"
        );
        assert!(
            t.notes
                .contains(&"mutex, flock: not applicable: only the owner may release it".into()),
            "{:?}",
            t.notes
        );
    }

    /// A reason several dead holders share is said once under the table, its
    /// head in their rows (at 80 columns the same four lines stood under five
    /// rows); a reason of one row stays whole in it; the bound is a note where
    /// every waiter not freed waited as long, and in the cell where not.
    #[test]
    fn a_shared_robustness_reason_is_said_once() {
        use ipcperf_core::record::RobustnessRecord;
        let gone = "not given back: nothing undoes a dead holder's take";
        let case = |p: &str, freed: bool, bound_s: u64, note: &str| {
            let mut c = testdata::sync_case(p, 1_000, 2_000, 3_000, 4_000);
            c.sync.as_mut().unwrap().robustness = Some(RobustnessRecord {
                variant: "plain".into(),
                freed,
                freed_after_ns: freed.then_some(50_000),
                bound_ns: bound_s * 1_000_000_000,
                note: note.into(),
            });
            c
        };
        let cases = [
            case("futex", false, 1, gone),
            case("eventfd", false, 1, gone),
            case("mutex", true, 1, "EOWNERDEAD: made consistent"),
        ];
        let t = super::robustness_table(&cases.iter().collect::<Vec<_>>());
        let how: Vec<&str> = t.rows.iter().map(|r| r[4].as_str()).collect();
        assert_eq!(
            how,
            [
                "not given back",
                "not given back",
                "EOWNERDEAD: made consistent"
            ]
        );
        assert_eq!(
            t.notes.iter().filter(|n| *n == gone).count(),
            1,
            "{:?}",
            t.notes
        );
        assert_eq!(t.rows[0][2], "no");
        assert!(
            t.notes.iter().any(|n| n.contains("within 1000 ms")),
            "{:?}",
            t.notes
        );

        // One of each: whole in its row; bounds that differ stay in their cells.
        let cases = [
            case("futex", false, 1, gone),
            case("eventfd", false, 2, "other"),
        ];
        let t = super::robustness_table(&cases.iter().collect::<Vec<_>>());
        assert_eq!(t.rows[0][4], gone);
        assert_eq!(t.rows[0][2], "no (not within 1000 ms)");
        assert_eq!(t.rows[1][2], "no (not within 2000 ms)");
        assert!(!t.notes.iter().any(|n| n.contains(gone)), "{:?}", t.notes);
    }
}
