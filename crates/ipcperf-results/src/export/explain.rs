//! `--explain`'s tables: for each traced case, its round trip's parts (median,
//! p99, share), the parts' sum beside the traced and the untraced round trip,
//! and what the events could not tell.

use ipcperf_core::explain::modes::ExplainMode;
use ipcperf_core::explain::{part_label, ExplainPart, ExplainRecord};
use ipcperf_core::record::{CaseRecord, RunRecord};
use ipcperf_core::runner::NOT_TRACED;

use super::cells::{fmt_us, mechanism_label, Table};
use crate::units::fmt_size;

/// The case as the explain table's title names it.
fn named(c: &CaseRecord) -> String {
    format!(
        "{} {} {} {}",
        mechanism_label(c),
        c.mode.name(),
        fmt_size(c.block_size),
        c.placement.shown()
    )
}

/// The parts' rows. A part that is zero in nearly every round trip says
/// nothing here (its few nonzero ones stay in the JSON).
fn rows(parts: &[ExplainPart]) -> Vec<Vec<String>> {
    parts
        .iter()
        .filter(|p| p.median_ns > 0 || p.p99_ns > 0)
        .map(|p| {
            vec![
                part_label(&p.name).to_string(),
                fmt_us(p.median_ns as f64),
                fmt_us(p.p99_ns as f64),
                fmt_us(p.mean_ns),
                share(p.share),
            ]
        })
        .collect()
}

/// A part's columns: the share is of the mean, beside it (a run queue's
/// median 1.05 µs and share 38% of a 6.29 µs round trip read as a misprint:
/// a few long waits put its mean at 2.4 µs).
const PART_HEADER: [&str; 5] = ["part", "median", "p99", "mean", "share of mean"];

/// A part's share of the cycle: whole percents, one decimal under 1% (a part
/// of 0.22 µs in 62.8 read "0%").
fn share(f: f64) -> String {
    let pc = f * 100.0;
    if pc > 0.0 && pc < 0.95 {
        format!("{pc:.1}%")
    } else {
        format!("{pc:.0}%")
    }
}

/// The untraced figure beside the traced one and what tracing cost; none
/// measured (sync with --latency-samples 0) is said so, never a zero.
fn untraced(x: &ExplainRecord) -> String {
    if x.untraced_median_ns > 0 {
        format!(
            "untraced {} µs: tracing costs ×{:.2}",
            fmt_us(x.untraced_median_ns as f64),
            x.overhead_ratio
        )
    } else {
        "no untraced median was measured to set it beside".to_string()
    }
}

/// A stream case's table: each side's time per block.
fn stream_table(c: &CaseRecord, x: &ExplainRecord) -> Table {
    let rows = x
        .parts
        .iter()
        .map(|p| {
            vec![
                part_label(&p.name).to_string(),
                fmt_us(p.mean_ns),
                share(p.share),
            ]
        })
        .collect();
    let untraced = untraced(x);
    let mut notes = vec![format!(
        "each side's parts sum to the block time: the traced block {} µs, {untraced}",
        fmt_us(x.traced_median_ns as f64)
    )];
    if let Some(w) = x.wakings_per_round_trip {
        let mut line = format!("{w:.2} wake-ups asked (sched_waking) a block, both sides");
        if let Some(ipi) = x.ipi_share {
            line.push_str(&format!("; {:.0}% of them sent an IPI", ipi * 100.0));
        }
        notes.push(line);
    }
    if !x.tracer.is_empty() {
        notes.push(format!("traced by {} ({})", x.tracer, x.tracer_reason));
    }
    if x.lost_events > 0 {
        notes.push(format!(
            "{} of {} kernel events were lost for want of buffer room: parts may merge",
            x.lost_events,
            x.events + x.lost_events
        ));
    }
    notes.push(
        "each side followed through its own events: in a call (sys_enter to sys_exit) or \
         between calls; running, asleep (switched out) or woken and waiting to run \
         (sched_wakeup to its next event); µs per block over the traced series"
            .into(),
    );
    Table {
        title: format!(
            "Where the time goes · {} ({} traced blocks)",
            named(c),
            x.round_trips
        ),
        header: ["part", "µs per block", "share"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        rows,
        notes,
    }
}

/// One case's table.
pub fn table(c: &CaseRecord, x: &ExplainRecord) -> Table {
    if c.workload == ipcperf_core::workload::Workload::Stream {
        return stream_table(c, x);
    }
    let rows = rows(&x.parts);
    // A sync case's cycle is a set/clear: a token there and back.
    let what = if c.workload == ipcperf_core::workload::Workload::Sync {
        "set/clear cycle"
    } else {
        "round trip"
    };
    let untraced = untraced(x);
    let mut notes = vec![format!(
        "the parts' sum {} µs (median); the traced {what} {} µs, {untraced}",
        fmt_us(x.sum_median_ns as f64),
        fmt_us(x.traced_median_ns as f64),
    )];
    if x.other_regime {
        notes.push(format!(
            "the traced {what}s ran in another regime than the timed ones (traced p50 {} / p90 \
             {} µs, untraced p50 {} / p90 {} µs): these parts explain the traced regime, not \
             the figure",
            fmt_us(x.traced_median_ns as f64),
            fmt_us(x.traced_p90_ns as f64),
            fmt_us(x.untraced_median_ns as f64),
            fmt_us(x.untraced_p90_ns as f64),
        ));
    }
    for m in &x.modes {
        notes.push(format!(
            "two modes: the {} {:.0}% of the traced {what}s (median {} µs) have their own \
             parts in the table below",
            m.name,
            m.share * 100.0,
            fmt_us(m.traced_median_ns as f64)
        ));
    }
    let mut woken = format!(
        "a side was asleep when its message came (a wake-up) in {:.0}% of the {} there-and-backs",
        x.woken_share * 100.0,
        x.round_trips
    );
    if let Some(ipi) = x.ipi_share {
        woken.push_str(&format!(
            "; {:.0}% of the wake-ups sent an IPI",
            ipi * 100.0
        ));
    }
    notes.push(woken);
    if let (Some(w), Some(early)) = (x.wakings_per_round_trip, x.early_wake_share) {
        let mut line = format!("{w:.2} wake-ups asked (sched_waking) a round trip, both sides");
        if early > 0.0 {
            line.push_str(&format!(
                "; the client woken before the server's reply call in {:.0}% (early: its \
                 side's room freed by the server's read, not the reply)",
                early * 100.0
            ));
        }
        notes.push(line);
    }
    if x.wakeups_unseen > 0 {
        notes.push(format!(
            "{} wake-ups showed no sched_wakeup or switch-in (the tracer got no events from \
             that CPU's idle task): their wake-up and run-queue time is in the return part",
            x.wakeups_unseen
        ));
    }
    if x.switch_ins_unseen > 0 {
        notes.push(format!(
            "{} wake-ups showed their sched_wakeup but no switch-in (this kernel records no \
             switch out of a secondary CPU's idle task): their run-queue time is in the \
             return part",
            x.switch_ins_unseen
        ));
    }
    if !x.tracer.is_empty() {
        let seen = x
            .server_wakeup_seen_share
            .map(|s| format!("; it saw {:.1}% of the server's wake-ups", s * 100.0))
            .unwrap_or_default();
        notes.push(format!(
            "traced by {} ({}){seen}",
            match x.tracer.as_str() {
                "tracefs" => "tracefs (a private ftrace instance)",
                _ => "perf (perf_event_open)",
            },
            x.tracer_reason
        ));
    }
    for m in &x.missing_events {
        notes.push(format!("this kernel lacks {m}"));
    }
    if x.lost_events > 0 {
        notes.push(format!(
            "{} of {} kernel events were lost for want of ring space: parts may merge",
            x.lost_events,
            x.events + x.lost_events
        ));
    }
    notes.push(
        "each part runs from one kernel event to the next on the round trip's path (the \
         sched_waking, sched_wakeup and sched_switch tracepoints and the system calls' entries \
         and exits), times in µs"
            .into(),
    );
    Table {
        title: format!(
            "Where the time goes · {} ({} traced {what}s)",
            named(c),
            x.round_trips
        ),
        header: PART_HEADER.iter().map(|s| s.to_string()).collect(),
        rows,
        notes,
    }
}

/// A mode's own table: its cycles' parts.
fn mode_table(c: &CaseRecord, m: &ExplainMode) -> Table {
    Table {
        title: format!(
            "Where the time goes · {} · its {} mode ({:.0}% of the traced cycles, median {} µs)",
            named(c),
            m.name,
            m.share * 100.0,
            fmt_us(m.traced_median_ns as f64)
        ),
        header: PART_HEADER.iter().map(|s| s.to_string()).collect(),
        rows: rows(&m.parts),
        notes: vec![
            "the traced cycles fell in two clusters (a valley between them): each \
                     mode's parts apart, times in µs"
                .into(),
        ],
    }
}

/// Every explained case's table (and its modes' tables), in the run's order.
pub fn tables(run: &RunRecord) -> Vec<Table> {
    run.cases
        .iter()
        .filter_map(|c| c.explain.as_ref().map(|x| (c, x)))
        .flat_map(|(c, x)| {
            std::iter::once(table(c, x)).chain(x.modes.iter().map(move |m| mode_table(c, m)))
        })
        .collect()
}

/// The one line for cases `--explain` could not trace (None: none).
pub fn not_traced(run: &RunRecord) -> Option<String> {
    not_traced_of(&run.cases.iter().collect::<Vec<_>>())
}

/// The same line for some of a run's cases (a group's).
pub fn not_traced_of(cases: &[&CaseRecord]) -> Option<String> {
    let whys: Vec<&String> = cases
        .iter()
        .filter_map(|c| c.options.get(NOT_TRACED))
        .collect();
    let first = whys.first()?;
    Some(format!(
        "--explain: {} case{} not traced: {first}; the figures are measured as always",
        whys.len(),
        if whys.len() == 1 { "" } else { "s" }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipcperf_core::explain::{split::Split, summarize};

    #[test]
    fn a_small_share_is_not_zero() {
        assert_eq!(share(0.0035), "0.4%");
        assert_eq!(share(0.0), "0%");
        assert_eq!(share(0.0096), "1%");
        assert_eq!(share(0.58), "58%");
    }

    #[test]
    fn an_explained_case_gets_a_table_of_its_parts() {
        let mut c = crate::testdata::paced_case("pipe", 1, 1.0, 10_000, 20_000, 30_000);
        c.options.clear();
        let mut s = Split::default();
        s.parts[1] = 2_000;
        s.parts[2] = 6_000;
        s.woken = [true, true];
        s.unseen = [false, true];
        let mut x = summarize(&[s; 4], &[8_100; 4], 0, 40, 2, true, vec![]);
        x.untraced_median_ns = 8_000;
        x.overhead_ratio = 8_100.0 / 8_000.0;
        let t = table(&c, &x);
        assert_eq!(t.rows.len(), 2);
        // The share is of the mean, shown beside it.
        assert_eq!(t.header, PART_HEADER);
        assert_eq!(
            t.rows[1],
            [
                "wake-up (waking to runnable)",
                "6.00",
                "6.00",
                "6.00",
                "75%"
            ]
        );
        assert!(t.title.contains("4 traced round trips"), "{}", t.title);
        let notes = t.notes.join("\n");
        assert!(notes.contains("tracing costs ×1.01"), "{notes}");
        assert!(
            notes.contains("4 wake-ups showed no sched_wakeup"),
            "{notes}"
        );
        assert!(notes.contains("2 of 42 kernel events were lost"), "{notes}");
        let mut run = crate::testdata::run();
        c.options.insert(NOT_TRACED.into(), "needs root".into());
        run.cases = vec![c.clone(), c];
        assert_eq!(
            not_traced(&run).unwrap(),
            "--explain: 2 cases not traced: needs root; the figures are measured as always"
        );
        assert!(tables(&run).is_empty());
    }

    /// A traced series beyond the timed one's spread is said to be another
    /// regime, with both p50 and p90; two modes get a table each.
    #[test]
    fn another_regime_is_flagged_and_two_modes_get_their_tables() {
        let mut c = crate::testdata::paced_case("posix-sem", 1, 1.0, 10_000, 20_000, 30_000);
        c.options.clear();
        let mut fast = Split::default();
        fast.parts[1] = 3_500;
        let mut slow = Split::default();
        slow.parts[2] = 33_000;
        slow.woken = [true, false];
        let mut splits = vec![fast; 120];
        splits.extend(vec![slow; 80]);
        let traced: Vec<u64> = splits.iter().map(|s| s.parts.iter().sum()).collect();
        let mut x = summarize(&splits, &traced, 0, 400, 0, true, vec![]);
        x.modes = ipcperf_core::explain::modes::modes(&splits, &traced);
        x.set_untraced(34_000, 36_000);
        assert!(x.other_regime, "traced p50 3.5 µs, untraced 34");
        let mut run = crate::testdata::run();
        run.cases = vec![c.clone()];
        run.cases[0].explain = Some(Box::new(x.clone()));
        let t = tables(&run);
        assert_eq!(t.len(), 3, "the case's table and one per mode");
        let notes = t[0].notes.join("\n");
        assert!(
            notes.contains("another regime") && notes.contains("untraced p50 34.0 / p90 36.0"),
            "{notes}"
        );
        assert!(t[1].title.contains("fast mode (60%"), "{}", t[1].title);
        assert_eq!(t[2].rows[0][0], "wake-up (waking to runnable)");
        // Alike, no flag.
        x.set_untraced(3_400, 34_000);
        assert!(!x.other_regime);
    }

    /// A stream case's table gives each side's parts per block.
    #[test]
    fn a_stream_case_gets_its_sides_per_block() {
        use ipcperf_core::explain::split::{Event, Kind};
        let mut c = crate::testdata::paced_case("pipe", 1, 1.0, 10_000, 20_000, 30_000);
        c.workload = ipcperf_core::workload::Workload::Stream;
        let ev = [
            Event {
                t: 0,
                tid: 1,
                kind: Kind::Enter,
            },
            Event {
                t: 100,
                tid: 2,
                kind: Kind::Enter,
            },
            Event {
                t: 600,
                tid: 1,
                kind: Kind::Exit,
            },
        ];
        let mut x = ipcperf_core::explain::stream::summarize(&ev, (0, 1_000), 1, &[1], &[2]);
        x.set_untraced(900, 900);
        let t = table(&c, &x);
        assert_eq!(t.header, ["part", "µs per block", "share"]);
        assert_eq!(
            t.rows[0],
            [
                "writer: in its write calls, running (copy, locks)",
                "0.60",
                "60%"
            ]
        );
        assert!(t.title.contains("1 traced blocks"), "{}", t.title);
        assert!(t.notes[0].contains("tracing costs ×1.11"), "{}", t.notes[0]);
    }
}
