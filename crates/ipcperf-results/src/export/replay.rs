//! Replay cases arranged for people: what was replayed, then one table with
//! every mechanism side by side (each message's latency from when it was due,
//! the schedule kept, late sends, CPU of both sides, the time a pass took), then
//! where each fell behind, and the cases that were skipped or failed.

use ipcperf_core::record::{CaseRecord, CaseStatus, ReplayRecord, RunRecord};
use ipcperf_core::workload::Workload;

use super::cells::{mechanism_label, Table, View};
use super::latency::fmt_us;
use super::Format;
use crate::units::fmt_size;

/// Trace time: seconds to the millisecond, or below a millisecond in µs.
pub fn fmt_secs(ns: u64) -> String {
    if ns == 0 || ns >= 1_000_000 {
        format!("{:.3} s", ns as f64 / 1e9)
    } else {
        format!("{:.1} µs", ns as f64 / 1e3)
    }
}

/// The pattern, in one line: where it came from and what it holds.
pub fn describe(r: &ReplayRecord) -> String {
    let mut s = r.source.clone();
    if let Some(n) = r.conversation {
        s.push_str(&format!(", conversation {n}"));
    }
    if let Some(c) = &r.channel {
        s.push_str(&format!(" ({c})"));
    }
    s.push_str(&format!(
        ": {} messages A→B ({}), {} B→A ({}), largest {}, {} recorded",
        r.a_to_b,
        fmt_size(r.a_to_b_bytes),
        r.b_to_a,
        fmt_size(r.b_to_a_bytes),
        fmt_size(r.largest_bytes),
        fmt_secs(r.recorded_ns)
    ));
    if r.speed != 1.0 {
        s.push_str(&format!(" at {}× speed", r.speed));
    }
    if r.loops > 1 {
        s.push_str(&format!(", {} loops", r.loops));
    }
    s
}

/// The schedule kept: the median pass, with the range when there are several.
fn kept(r: &ReplayRecord) -> String {
    let mut k = r.kept.clone();
    if k.is_empty() {
        return "-".into();
    }
    k.sort_by(f64::total_cmp);
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    let mid = k[k.len() / 2];
    if k.len() > 1 && k[0] < k[k.len() - 1] - 0.0005 {
        format!("{} ({}–{})", pct(mid), pct(k[0]), pct(k[k.len() - 1]))
    } else {
        pct(mid)
    }
}

/// The worst stretch behind the schedule, for the notes.
pub fn behind_note(c: &CaseRecord) -> Option<String> {
    let r = c.replay.as_ref()?;
    let b = r.behind?;
    let (from, to) = (fmt_secs(b.from_ns), fmt_secs(b.to_ns));
    // A burst within the shown precision is one instant ("from 0.028 s to
    // 0.028 s" read as a typo).
    let when = if from == to {
        format!("at {from}")
    } else {
        format!("from {from} to {to}")
    };
    Some(format!(
        "{}: fell behind {when} of the trace ({} send{}, up to {:.1} ms late)",
        mechanism_label(c),
        b.messages,
        if b.messages == 1 { "" } else { "s" },
        b.max_late_ns as f64 / 1e6
    ))
}

/// The messages of a case measured over `passes` passes: "5×10001" where each
/// pass sent as many (the figure alone read as one pass's beside the note of the
/// pattern's 10001), else the total.
fn messages_cell(total: u64, passes: usize) -> String {
    match passes as u64 {
        n if n > 1 && total.is_multiple_of(n) => format!("{n}×{}", total / n),
        _ => total.to_string(),
    }
}

/// The replay table of a run (None when it has no replay cases).
pub fn table(run: &RunRecord) -> Option<Table> {
    let cases: Vec<&CaseRecord> = run
        .cases
        .iter()
        .filter(|c| c.workload == Workload::Replay)
        .collect();
    if cases.is_empty() {
        return None;
    }
    let mut header: Vec<String> = [
        "mechanism",
        "mode",
        "placement",
        "messages",
        "p50 µs",
        "p99 µs",
        "max µs",
        "kept",
        "late >1ms",
        "CPU",
        "pass",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // What each message cost: both sides' switches and CPU time a message
    // (runs before the counters have none).
    let counted = super::cells::counted(&cases);
    if counted {
        header.push("switches/msg".into());
        header.push("CPU µs/msg".into());
    }
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut tails = super::cells::TailCounts::default();
    if let Some(r) = cases.iter().find_map(|c| c.replay.as_ref()) {
        notes.push(format!("replayed {}", describe(r)));
    }
    for c in &cases {
        let label = mechanism_label(c);
        let (lat, rep) = match (&c.latency, &c.replay, &c.status) {
            (Some(l), Some(r), CaseStatus::Ok) => (l, r),
            _ => {
                let word = if c.status == CaseStatus::Refused {
                    "skipped"
                } else {
                    "FAILED"
                };
                notes.push(format!(
                    "{label} {word}: {}",
                    c.message.as_deref().unwrap_or("no figures")
                ));
                continue;
            }
        };
        let pass = c
            .series
            .iter()
            .map(|s| s.elapsed_ns)
            .max()
            .map_or("-".into(), fmt_secs);
        let cpu = c
            .median_cpu_load
            .map_or("-".into(), |l| format!("{:.0}%", l * 100.0));
        let mut row = vec![
            label,
            c.mode.name().to_string(),
            c.placement.shown(),
            messages_cell(lat.round_trips, c.series.len()),
            tails.cell("p50", fmt_us(lat.p50_ns as f64), lat.beyond().as_ref()),
            tails.cell("p99", fmt_us(lat.p99_ns as f64), lat.beyond().as_ref()),
            fmt_us(lat.max_ns as f64),
            kept(rep),
            rep.late_sends.to_string(),
            cpu,
            pass,
        ];
        if counted {
            row.push(super::cells::switches_cell(c));
            row.push(super::cells::cpu_cell(c));
        }
        rows.push(row);
        if lat.round_trips_lost > 0 {
            notes.push(format!(
                "{}: {} messages lost",
                mechanism_label(c),
                lat.round_trips_lost
            ));
        }
        if let Some(n) = behind_note(c) {
            notes.push(n);
        }
    }
    if rows.iter().any(|r| r[3].contains('×')) {
        notes.push(
            "messages: passes × messages a pass; the latency columns and late >1ms count \
             every pass"
                .into(),
        );
    }
    notes.push(
        "latency: each message's, one way, from when it was due (its recorded time) to when \
         all of it had arrived; kept: the recorded time of a pass over the time its sends took; \
         CPU: both sides' CPU time over the pass"
            .into(),
    );
    if counted {
        notes.push(super::cells::COUNTERS_NOTE.into());
        notes.extend(super::cells::not_counted_note(run));
    }
    notes.extend(tails.note("messages"));
    // A mode and placement every row shares is said once, in the title, as a
    // run's table says them: at 80 columns their cells broke into "proces/ses"
    // and "shar/ed-/l3" beside the figures.
    let mut title = "Replay".to_string();
    if let Some(first) = rows.first().cloned() {
        for i in [2, 1] {
            if rows.iter().all(|r| r[i] == first[i]) {
                header.remove(i);
                rows.iter_mut().for_each(|r| {
                    r.remove(i);
                });
            }
        }
        let said: Vec<&str> = [1, 2]
            .iter()
            .filter(|&&i| !header.iter().any(|h| h == ["", "mode", "placement"][i]))
            .map(|&i| first[i].as_str())
            .collect();
        for s in said {
            title.push_str(&format!(" · {s}"));
        }
    }
    Some(Table {
        title,
        header,
        rows,
        notes,
    })
}

pub fn build(run: &RunRecord) -> View {
    let m = &run.machine;
    View {
        heading: format!(
            "ipcperf {} replay on {} (Linux {}, {} CPUs, {})",
            run.ipcperf_version, m.hostname, m.kernel, m.cpus, m.cpu_model
        ),
        tables: table(run).into_iter().collect(),
    }
}

pub fn render(run: &RunRecord, format: Format) -> String {
    match format {
        Format::Table => super::table::render(&build(run)),
        Format::Markdown => super::markdown::render(&build(run)),
        _ => super::render(run, format, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replayed(mech: &str, place: &str) -> CaseRecord {
        let mut c = crate::testdata::paced_case(mech, 1, 1.0, 50_000, 900_000, 2_000_000);
        c.workload = Workload::Replay;
        c.placement.label = place.into();
        c.replay = Some(Box::new(ReplayRecord {
            kept: vec![1.0],
            ..Default::default()
        }));
        c
    }

    /// The mode and placement every row shares go to the title; a column
    /// whose rows differ stays.
    #[test]
    fn what_every_row_shares_is_said_once_in_the_title() {
        let mut run = crate::testdata::run();
        run.cases = vec![replayed("unix", "shared-l3"), replayed("shm", "shared-l3")];
        let t = table(&run).unwrap();
        assert!(
            !t.header.iter().any(|h| h == "mode" || h == "placement"),
            "{:?}",
            t.header
        );
        assert!(t.title.starts_with("Replay · processes · "), "{}", t.title);
        assert_eq!(t.rows[0].len(), t.header.len());
        assert_eq!(t.rows[0][0], "unix");
        run.cases.push(replayed("pipe", "same-cpu"));
        let t = table(&run).unwrap();
        assert!(t.header.iter().any(|h| h == "placement"), "{:?}", t.header);
        assert!(!t.header.iter().any(|h| h == "mode"), "{:?}", t.header);
        assert_eq!(t.title, "Replay · processes");
        assert_eq!(t.rows[2].len(), t.header.len());
    }

    /// A stretch behind the schedule shorter than the time's precision is
    /// said as one instant, a longer one as its start and end.
    #[test]
    fn a_burst_behind_the_schedule_reads_as_one_instant() {
        let mut c = replayed("pipe", "shared-l3");
        let behind = |from_ns, to_ns| ipcperf_core::record::BehindRecord {
            from_ns,
            to_ns,
            messages: 7,
            max_late_ns: 2_400_000,
        };
        c.replay.as_mut().unwrap().behind = Some(behind(28_100_000, 28_300_000));
        assert_eq!(
            behind_note(&c).unwrap(),
            "pipe: fell behind at 0.028 s of the trace (7 sends, up to 2.4 ms late)"
        );
        c.replay.as_mut().unwrap().behind = Some(behind(28_100_000, 41_000_000));
        assert_eq!(
            behind_note(&c).unwrap(),
            "pipe: fell behind from 0.028 s to 0.041 s of the trace (7 sends, up to 2.4 ms late)"
        );
    }

    /// Messages over five passes say so ("5×10001"): the total alone read as
    /// one pass's beside the pattern's note of 10001 a pass.
    #[test]
    fn messages_over_several_passes_are_shown_as_passes_times_a_pass() {
        let mut run = crate::testdata::run();
        let mut c = replayed("pipe", "shared-l3");
        let one = c.series[0].clone();
        c.series = vec![one; 5];
        c.latency.as_mut().unwrap().round_trips = 50_005;
        run.cases = vec![c];
        let t = table(&run).unwrap();
        let col = t.header.iter().position(|h| h == "messages").unwrap();
        assert_eq!(t.rows[0][col], "5×10001");
        assert!(
            t.notes.iter().any(|n| n.starts_with("messages: passes ×")),
            "{:?}",
            t.notes
        );
        // One pass, or passes of unequal counts: the total, no note.
        run.cases[0].series.truncate(1);
        let t = table(&run).unwrap();
        assert_eq!(t.rows[0][col], "50005");
        assert!(
            !t.notes.iter().any(|n| n.starts_with("messages:")),
            "{:?}",
            t.notes
        );
        run.cases[0].series = vec![run.cases[0].series[0].clone(); 3];
        assert_eq!(table(&run).unwrap().rows[0][col], "50005");
    }
}
