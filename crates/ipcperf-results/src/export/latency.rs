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
    // Each case across CPUs' one series at polling idle, beside its p50.
    let probed = cases
        .iter()
        .any(|c| c.idle_probe.as_ref().is_some_and(|p| p.p50_ns.is_some()));
    if probed {
        header.push(super::idle::POLL_P50.into());
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
                if probed {
                    row.push(super::idle::poll_p50_cell(c));
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
    notes.extend(super::cells::spin_notes(cases.iter().copied()));
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
    let mut t = Table {
        title: format!("Round-trip latency · payload {payload}"),
        header,
        rows,
        notes,
    };
    // The mode and placement, where every row has the same.
    t.say_shared_once(&[1, 2]);
    Some(t)
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
mod tests;
