//! A run arranged for people: one table per mechanism and mode, block sizes down,
//! placements side by side; then a ranking at one block size, relative to the
//! slowest (Stover's relative-throughput row).

use ipcperf_core::record::{CaseRecord, CaseStatus, RunRecord};
use ipcperf_core::stats::{noisy, NOISY_SD};
use ipcperf_core::workload::Workload;

use crate::units::{fmt_mbps, fmt_rate, fmt_size};

use super::cells::one_sided;
pub use super::cells::{mechanism_label, spin_notes, spin_on_one_cpu, Table, View};

fn group_key(c: &CaseRecord) -> (String, String, String, String) {
    (
        mechanism_label(c),
        c.mode.name().to_string(),
        c.payload.name().to_string(),
        // One table per way of waiting (shm's wake-ups side by side).
        c.wait.clone(),
    )
}

/// The three cells of one case: MB/s (min–max), blocks/s, CPUs busy.
fn cells(c: &CaseRecord) -> [String; 3] {
    match (c.status.clone(), c.median_bytes_per_sec) {
        (CaseStatus::Ok, Some(m)) => [
            format!(
                "{} ({}–{})",
                fmt_mbps(m),
                fmt_mbps(c.min_bytes_per_sec.unwrap_or(m)),
                fmt_mbps(c.max_bytes_per_sec.unwrap_or(m))
            ),
            fmt_rate(c.median_blocks_per_sec.unwrap_or(0.0)),
            c.median_cpu_load
                .map(|l| format!("{l:.2}"))
                .unwrap_or_else(|| "-".into()),
        ],
        (CaseStatus::Refused, _) => ["skipped".into(), "-".into(), "-".into()],
        _ => ["FAILED".into(), "-".into(), "-".into()],
    }
}

/// A warning when a case's series disagree (their noise figure, the standard
/// deviation of their logarithms, over [`NOISY_SD`]): the machine was busy, or
/// the case is unstable; its median deserves less trust.
pub fn noise(c: &CaseRecord) -> Option<String> {
    noise_sd(c).map(|sd| {
        format!(
            "noisy: the series vary by {:.0}% (standard deviation); repeat on a quiet machine \
             or with --repeat",
            sd * 100.0
        )
    })
}

/// A case's noise figure (the standard deviation of its series' logarithms)
/// where it is over [`NOISY_SD`].
pub fn noise_sd(c: &CaseRecord) -> Option<f64> {
    let figures: Vec<f64> = c.series.iter().map(|s| s.bytes_per_sec()).collect();
    noisy(&figures)
}

/// One line for a table's noisy cells, `(placement, size)` in the order met:
/// "noisy (series vary by > 8%): 64 B, 4 KiB same-cpu 0→0; 1 MiB shared-l3 0→1".
pub fn noisy_line(cells: &[(String, String)]) -> Option<String> {
    if cells.is_empty() {
        return None;
    }
    let mut places: Vec<(&str, Vec<&str>)> = Vec::new();
    for (p, s) in cells {
        match places.iter_mut().find(|(q, _)| q == p) {
            Some((_, v)) => v.push(s),
            None => places.push((p, vec![s])),
        }
    }
    let parts: Vec<String> = places
        .iter()
        .map(|(p, v)| format!("{} {p}", v.join(", ")))
        .collect();
    Some(format!(
        "noisy (series vary by > {:.0}%, standard deviation): {}; -v says each, --repeat or a \
         quieter machine steadies them",
        NOISY_SD * 100.0,
        parts.join("; ")
    ))
}

/// The first line of every view: the version and the machine.
pub fn heading(run: &RunRecord) -> String {
    let m = &run.machine;
    format!(
        "ipcperf {} on {} (Linux {}, {} CPUs, {})",
        run.ipcperf_version, m.hostname, m.kernel, m.cpus, m.cpu_model
    )
}

pub fn build(run: &RunRecord, rank_size: Option<usize>) -> View {
    let heading = heading(run);
    let mut tables = group_tables(run);
    if let Some(t) = ranking(run, rank_size) {
        tables.push(t);
    }
    // Round-trip cases, if the run has any, in their own table.
    tables.extend(super::latency::table(run, false));
    tables.extend(super::pairs::table(run));
    // `run --explain`: each traced case's parts (why a case was not traced is
    // under its group's table).
    tables.extend(super::explain::tables(run));
    View { heading, tables }
}

/// The group a stream case's table is (`run` prints a table as soon as its
/// group's last case has finished).
pub fn group_of(c: &CaseRecord) -> (String, String, String, String) {
    group_key(c)
}

/// One table per (mechanism, mode, payload, wait) of the run's stream cases, in
/// the order they ran.
pub fn group_tables(run: &RunRecord) -> Vec<Table> {
    let mut tables = Vec::new();
    // One table per (mechanism, mode, payload), in the order they ran.
    let mut keys: Vec<(String, String, String, String)> = Vec::new();
    for c in run.cases.iter().filter(|c| c.workload == Workload::Stream) {
        let k = group_key(c);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for k in keys {
        let cases: Vec<&CaseRecord> = run
            .cases
            .iter()
            .filter(|c| c.workload == Workload::Stream && group_key(c) == k)
            .collect();
        let mixed = super::cells::idle_mixed(cases.iter().copied());
        let place = |c: &CaseRecord| super::cells::place(c, mixed);
        let mut placements: Vec<String> = Vec::new();
        let mut sizes: Vec<u64> = Vec::new();
        for c in &cases {
            if !placements.contains(&place(c)) {
                placements.push(place(c));
            }
            if !sizes.contains(&c.block_size) {
                sizes.push(c.block_size);
            }
        }
        let counted = super::cells::counted(&cases);
        // A placement whose cases took a series at polling idle: its MB/s there.
        let probed: Vec<bool> = placements
            .iter()
            .map(|p| {
                cases
                    .iter()
                    .any(|c| &place(c) == p && super::idle::poll_mbps(c).is_some())
            })
            .collect();
        let mut header = vec!["block".to_string()];
        for (p, &probed) in placements.iter().zip(&probed) {
            header.push(format!("{p} MB/s (min–max)"));
            header.push(format!("{p} blocks/s"));
            header.push("CPUs busy".to_string());
            if counted {
                header.push("switches/msg".to_string());
            }
            if probed {
                header.push(format!("{p} {}", super::idle::POLL_MBPS));
            }
        }
        let mut rows = Vec::new();
        let mut notes = Vec::new();
        let mut noisy: Vec<(String, String)> = Vec::new();
        for s in &sizes {
            let mut row = vec![fmt_size(*s)];
            for (p, &probed) in placements.iter().zip(&probed) {
                let case = cases.iter().find(|c| c.block_size == *s && &place(c) == p);
                let poll_cell = case
                    .and_then(|c| super::idle::poll_mbps(c))
                    .map_or("-".to_string(), fmt_mbps);
                match case {
                    Some(c) => {
                        row.extend(cells(c));
                        if counted {
                            row.push(super::cells::switches_cell(c));
                        }
                        if let Some(n) = noise(c) {
                            if crate::console::verbose() {
                                notes.push(format!("{} {p}: {n}", fmt_size(*s)));
                            } else {
                                noisy.push((p.clone(), fmt_size(*s)));
                            }
                        }
                        if let Some(n) = spin_on_one_cpu(c).filter(|n| !notes.contains(n)) {
                            notes.push(n);
                        }
                        if let Some(d) = c.datagrams.filter(|d| d.lost + d.duplicated > 0) {
                            notes.push(format!(
                                "{} {p}: {} of {} datagrams lost, {} duplicated, {} reordered; \
                                 MB/s counts the bytes delivered",
                                fmt_size(*s),
                                d.lost,
                                d.sent,
                                d.duplicated,
                                d.reordered
                            ));
                        }
                        if let Some(msg) = &c.message {
                            let note = format!("{} {}: {msg}", fmt_size(*s), p);
                            if !notes.contains(&note) {
                                notes.push(note);
                            }
                        }
                    }
                    None => {
                        row.extend(["-".to_string(), "-".into(), "-".into()]);
                        if counted {
                            row.push("-".into());
                        }
                    }
                }
                if probed {
                    row.push(poll_cell);
                }
            }
            rows.push(row);
        }
        notes.extend(noisy_line(&noisy));
        notes.extend(super::idle::stream_note(&cases));
        notes.extend(super::explain::not_traced_of(&cases));
        if counted {
            notes.push(super::cells::STREAM_COUNTERS_NOTE.into());
            // What perf could not count, once, under the first table.
            if tables.is_empty() {
                notes.extend(super::cells::not_counted_note(run));
            }
        }
        let first = cases[0];
        let mut title = format!("{} · {} · {}", first.mechanism, k.1, k.2);
        if first.wait != "block" {
            title.push_str(&format!(" · wait={}", first.wait));
        }
        if first.include_setup {
            title.push_str(" · set-up included");
        }
        let opts: Vec<String> = first
            .options
            .iter()
            // (Why a case was not traced is a note of its own.)
            .filter(|(k, _)| {
                k.as_str() != ipcperf_core::idle::NO_IDLE_PROBE
                    && k.as_str() != ipcperf_core::runner::NOT_TRACED
            })
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if !opts.is_empty() {
            title.push_str(&format!(" · {}", opts.join(" ")));
        }
        tables.push(Table {
            title,
            header,
            rows,
            notes,
        });
    }
    tables
}

/// Every case that ran at one block size, fastest first, relative to the slowest.
fn ranking(run: &RunRecord, rank_size: Option<usize>) -> Option<Table> {
    let ok: Vec<&CaseRecord> = run
        .cases
        .iter()
        .filter(|c| c.workload == Workload::Stream && c.median_bytes_per_sec.is_some())
        .collect();
    let size = match rank_size {
        Some(s) => s as u64,
        None if ok.iter().any(|c| c.block_size == 65536) => 65536,
        None => ok.iter().map(|c| c.block_size).max()?,
    };
    let mut at: Vec<&CaseRecord> = ok.into_iter().filter(|c| c.block_size == size).collect();
    // A reference with one side (null, memcpy: bytes moved, no IPC) is said
    // beside the ranking, not ranked in it: it topped the default suite's
    // ranking at 60× the slowest pipe, the answer to a question nobody asked.
    let mut references: Vec<&CaseRecord> = Vec::new();
    if at.iter().filter(|c| !one_sided(c)).count() >= 2 {
        references = at.iter().copied().filter(|c| one_sided(c)).collect();
        at.retain(|c| !one_sided(c));
    }
    if at.len() < 2 {
        return None;
    }
    at.sort_by(|a, b| {
        b.median_bytes_per_sec
            .unwrap_or(0.0)
            .total_cmp(&a.median_bytes_per_sec.unwrap_or(0.0))
    });
    let slowest = at.last()?.median_bytes_per_sec?;
    let mixed = super::cells::idle_mixed(at.iter().copied());
    let rows = at
        .iter()
        .map(|c| {
            let m = c.median_bytes_per_sec.unwrap_or(0.0);
            vec![
                mechanism_label(c),
                c.mode.name().to_string(),
                super::cells::place(c, mixed),
                fmt_mbps(m),
                format!("{:.2}×", m / slowest),
            ]
        })
        .collect();
    Some(Table {
        title: format!(
            "Ranking at {}: throughput relative to the slowest",
            fmt_size(size)
        ),
        header: ["mechanism", "mode", "placement", "MB/s", "relative"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        rows,
        notes: references_note(&references)
            .into_iter()
            .chain([
                "MB/s = 10^6 bytes per second; median over the series (min–max)".into(),
                "CPUs busy = CPU time of writer + reader / wall time (1.00 = one CPU fully \
                 busy)"
                    .into(),
            ])
            .collect(),
    })
}

/// The references left out of a ranking, each with its figure: "not ranked,
/// one side and no IPC (references beside them): null 44031 MB/s,
/// memcpy 40220 MB/s".
fn references_note(refs: &[&CaseRecord]) -> Option<String> {
    if refs.is_empty() {
        return None;
    }
    let each: Vec<String> = refs
        .iter()
        .map(|c| {
            format!(
                "{} {} MB/s",
                mechanism_label(c),
                fmt_mbps(c.median_bytes_per_sec.unwrap_or(0.0))
            )
        })
        .collect();
    Some(format!(
        "not ranked, one side and no IPC (references beside them): {}",
        each.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipcperf_core::machine::Machine;
    use ipcperf_core::mechanism::MechanismKind;
    use ipcperf_core::mode::{Mode, Placement};

    use ipcperf_core::plan::CaseSpec;
    use ipcperf_core::record::SeriesRecord;

    /// A record of `mech` at 64 KiB whose series took these many ms for 1e9 bytes.
    fn case(mech: MechanismKind, pl: Placement, ms: &[u64]) -> CaseRecord {
        let spec = CaseSpec {
            repeat: ms.len() as u32,
            ..CaseSpec::new(mech, Mode::Processes, 65536, pl)
        };
        let mut r = CaseRecord::for_spec(&spec);
        r.series = ms
            .iter()
            .map(|&m| SeriesRecord {
                blocks: 15259,
                bytes: 1_000_000_000,
                elapsed_ns: m * 1_000_000,
                writer_cpu_ns: m * 1_000_000,
                reader_cpu_ns: Some(0),
                writer_counts: None,
                reader_counts: None,
            })
            .collect();
        r.summarize();
        r
    }

    fn run(cases: Vec<CaseRecord>) -> RunRecord {
        RunRecord {
            ipcperf_version: "0".into(),
            label: None,
            command_line: vec![],
            kind: "run".into(),
            started_ms: 0,
            finished_ms: None,
            complete: true,
            machine: Machine::default(),
            cases,
        }
    }

    #[test]
    fn ranking_is_relative_to_the_slowest() {
        let same = Placement::pinned(0, 0);
        let v = build(
            &run(vec![
                case(MechanismKind::Pipe, same, &[250, 250, 250]),
                case(MechanismKind::Tcp, same, &[1000, 1000, 1000]),
            ]),
            None,
        );
        let rank = v.tables.last().unwrap();
        assert!(rank.title.contains("64 KiB"));
        assert_eq!(rank.rows[0][0], "pipe");
        assert_eq!(rank.rows[0][3], "4000");
        assert_eq!(rank.rows[0][4], "4.00×");
        assert_eq!(rank.rows[1][4], "1.00×");
    }

    #[test]
    fn placements_side_by_side_and_refusals_named() {
        let mut refused = case(MechanismKind::Pipe, Placement::pinned(0, 1), &[]);
        refused.status = CaseStatus::Refused;
        refused.message = Some("too big".into());
        let v = build(
            &run(vec![
                case(MechanismKind::Pipe, Placement::pinned(0, 0), &[1000]),
                refused,
            ]),
            None,
        );
        let t = &v.tables[0];
        assert_eq!(t.header[1], "same-cpu 0→0 MB/s (min–max)");
        assert_eq!(t.header[4], "cross-cpu 0→1 MB/s (min–max)");
        assert_eq!(t.rows[0][1], "1000 (1000–1000)");
        assert_eq!(t.rows[0][3], "1.00", "CPUs busy");
        assert_eq!(t.rows[0][4], "skipped");
        assert!(t.notes.iter().any(|n| n.contains("too big")));
    }

    /// A run that holds some cases at polling idle and not others (advise's
    /// twins) shows both, each place saying which: the table kept one column
    /// for both, the ranking read one placement twice, and the metrics dropped
    /// the held case as a repeat.
    #[test]
    fn cases_held_at_an_idle_state_beside_as_is_ones_say_so() {
        let cross = Placement::pinned(0, 1);
        let mut held = case(MechanismKind::Pipe, cross, &[250, 250]);
        held.options.insert("idle".into(), "poll".into());
        let r = run(vec![
            case(MechanismKind::Pipe, cross, &[1000, 1000]),
            held,
            case(MechanismKind::Unix, cross, &[500, 500]),
        ]);
        let v = build(&r, None);
        let t = &v.tables[0];
        assert_eq!(t.header[1], "cross-cpu 0→1 MB/s (min–max)");
        assert_eq!(t.header[4], "cross-cpu 0→1 idle=poll MB/s (min–max)");
        assert_eq!(t.rows[0][1], "1000 (1000–1000)");
        assert_eq!(t.rows[0][4], "4000 (4000–4000)");
        let rank = v.tables.last().unwrap();
        let places: Vec<&str> = rank.rows.iter().map(|r| r[2].as_str()).collect();
        assert_eq!(
            places,
            ["cross-cpu 0→1 idle=poll", "cross-cpu 0→1", "cross-cpu 0→1"]
        );
        let m = crate::export::metrics::render(&r, crate::export::metrics::Flavor::Prometheus);
        let samples = m
            .lines()
            .filter(|l| l.starts_with("ipcperf_throughput_bytes_per_second{"))
            .count();
        assert_eq!(samples, 3, "{m}");
        assert!(m.contains("idle=\"poll\"} 4000000000"), "{m}");
        // Every case held alike: no place says it (the run's note does).
        let mut all = r.clone();
        all.cases.retain(|c| c.options.contains_key("idle"));
        let t = &build(&all, None).tables[0];
        assert_eq!(t.header[1], "cross-cpu 0→1 MB/s (min–max)");
    }

    /// A placement's series at polling idle is a column beside it: its
    /// figures were a list in a note under every mechanism's table.
    #[test]
    fn the_polling_idle_series_is_a_column_of_its_placement() {
        let (one, cross) = (Placement::pinned(0, 0), Placement::pinned(0, 1));
        let mut probed = case(MechanismKind::Pipe, cross, &[1000, 1000]);
        probed.idle_probe = Some(ipcperf_core::record::IdleProbe::stream(
            3e9,
            1_000_000_000,
            1,
        ));
        let r = run(vec![case(MechanismKind::Pipe, one, &[900, 900]), probed]);
        let t = &build(&r, None).tables[0];
        let col = t
            .header
            .iter()
            .position(|h| h == "cross-cpu 0→1 MB/s idle=poll")
            .expect("the column");
        assert_eq!(t.rows[0][col], "3000");
        assert!(!t
            .header
            .iter()
            .any(|h| h.starts_with("same-cpu") && h.contains("idle")));
        let idle: Vec<&String> = t.notes.iter().filter(|n| n.starts_with("idle")).collect();
        assert_eq!(
            idle.len(),
            2,
            "what the column is, then this table's: {idle:?}"
        );
        assert!(
            idle[1].contains("range in 1 of 1 (the furthest: "),
            "{}",
            idle[1]
        );
    }

    #[test]
    fn noisy_series_are_flagged_and_steady_ones_not() {
        let noisy = case(
            MechanismKind::Pipe,
            Placement::UNPINNED,
            &[1000, 1500, 1000],
        );
        let steady = case(
            MechanismKind::Unix,
            Placement::UNPINNED,
            &[1000, 1050, 1000],
        );
        assert!(noise(&noisy).is_some());
        assert!(noise(&steady).is_none());
    }

    /// A pipeline's noisy methods are one note, each with its figure (they were
    /// a three-line note each at 80 columns).
    #[test]
    fn a_pipelines_noisy_methods_are_one_note() {
        let r = run(vec![
            case(
                MechanismKind::Pipe,
                Placement::UNPINNED,
                &[1000, 1500, 1000],
            ),
            case(
                MechanismKind::Unix,
                Placement::UNPINNED,
                &[1000, 1050, 1000],
            ),
            case(MechanismKind::Tcp, Placement::UNPINNED, &[1000, 1400, 1000]),
        ]);
        let labels = ["sh-pipe", "unix", "tcp"].map(|n| (n.to_string(), String::new()));
        let v = super::super::pipeline::build_view(&r, &labels, 1 << 20, 1024, 3);
        let noisy: Vec<&String> = v.tables[0]
            .notes
            .iter()
            .filter(|n| n.contains("noisy"))
            .collect();
        assert_eq!(noisy.len(), 1, "{noisy:?}");
        assert!(noisy[0].contains(": sh-pipe 23.4%"), "{noisy:?}");
        assert!(noisy[0].contains(", tcp 19.4%;"), "{noisy:?}");
        assert!(!noisy[0].contains("unix"), "{noisy:?}");
    }

    /// One-sided references (null, memcpy) are named beside the ranking with
    /// their figures, not ranked in it; alone with one IPC case they still rank.
    #[test]
    fn references_are_beside_the_ranking_not_in_it() {
        let null = case(MechanismKind::Null, Placement::pinned(0, 0), &[10]);
        let r = run(vec![
            case(MechanismKind::Pipe, Placement::pinned(0, 0), &[500]),
            case(MechanismKind::Unix, Placement::pinned(0, 0), &[1000]),
            null.clone(),
        ]);
        let t = ranking(&r, None).unwrap();
        let names: Vec<&str> = t.rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(names, ["pipe", "unix"], "{:?}", t.rows);
        assert!(t.rows[1][4] == "1.00×", "{:?}", t.rows);
        assert!(
            t.notes[0].starts_with("not ranked, one side and no IPC")
                && t.notes[0].contains("null "),
            "{:?}",
            t.notes
        );
        let r = run(vec![
            case(MechanismKind::Pipe, Placement::pinned(0, 0), &[500]),
            null,
        ]);
        let t = ranking(&r, None).unwrap();
        assert_eq!(t.rows.len(), 2, "{:?}", t.rows);
        assert!(!t.notes[0].starts_with("not ranked"), "{:?}", t.notes);
    }
}
