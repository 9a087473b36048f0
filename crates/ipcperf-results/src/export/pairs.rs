//! Many pairs at once (`--pairs`): the scaling table. One row per case, in the
//! order they ran: the total over every pair, each pair's own rate (the slowest
//! and the fastest: fairness), the total against the same case with one pair, and
//! the CPU time both sides spent per message and per byte.

use ipcperf_core::record::{CaseRecord, RunRecord};
use ipcperf_core::workload::Workload;

use super::cells::{mechanism_label, Table};
use crate::units::{fmt_mbps, fmt_rate, fmt_size};

/// A pairs case's total rate: MB/s for a stream, round trips/s for round trips.
pub fn total(c: &CaseRecord) -> Option<f64> {
    match c.workload {
        Workload::RoundTrip => c.latency.as_ref().map(|l| l.round_trips_per_sec),
        _ => c.median_bytes_per_sec,
    }
}

/// CPU time of both sides (every pair) per message and per byte, over every series.
pub fn cpu_per(c: &CaseRecord) -> Option<(f64, f64)> {
    let (mut cpu, mut msgs, mut bytes) = (0u64, 0u64, 0u64);
    for s in &c.series {
        cpu += s.writer_cpu_ns + s.reader_cpu_ns.unwrap_or(0);
        msgs += s.blocks;
        bytes += s.bytes;
    }
    (msgs > 0 && bytes > 0).then(|| (cpu as f64 / msgs as f64, cpu as f64 / bytes as f64))
}

/// The same case with one pair, in this run (for the scaling column).
fn one_pair<'a>(run: &'a RunRecord, c: &CaseRecord) -> Option<&'a CaseRecord> {
    run.cases.iter().find(|o| {
        o.pairs.as_ref().is_some_and(|p| {
            let shape = c.pairs.as_ref().map(|q| (q.fan_in, q.fan_out));
            p.count == 1 && Some((p.fan_in, p.fan_out)) == shape
        }) && o.workload == c.workload
            && mechanism_label(o) == mechanism_label(c)
            && o.mode == c.mode
            && o.block_size == c.block_size
            && o.options.get("rate_per_sec") == c.options.get("rate_per_sec")
    })
}

/// `v` ns in the unit the column's largest, `top`, is said in: a column of
/// "9476 ns" beside "10.9 µs" read as two scales. A figure over 100 times
/// smaller (another block size) keeps its own, not "0.00 ms".
fn ns_in(v: f64, top: f64) -> String {
    if top > 100.0 * v {
        ns(v)
    } else if top >= 1e6 {
        format!("{:.2} ms", v / 1e6)
    } else if top >= 10_000.0 {
        let us = v / 1e3;
        if us >= 10.0 {
            format!("{us:.1} µs")
        } else {
            format!("{us:.2} µs")
        }
    } else {
        ns(v)
    }
}

fn ns(v: f64) -> String {
    if v >= 1e6 {
        crate::units::fmt_time_ns(v)
    } else if v >= 10_000.0 {
        format!("{:.1} µs", v / 1e3)
    } else if v >= 10.0 {
        format!("{v:.0} ns")
    } else {
        format!("{v:.2} ns")
    }
}

/// What the count column counts: pairs, clients (fan-in), readers (fan-out).
fn count_header(cases: &[&CaseRecord]) -> &'static str {
    let shapes: Vec<(bool, bool)> = cases
        .iter()
        .filter_map(|c| c.pairs.as_ref().map(|p| (p.fan_in, p.fan_out)))
        .collect();
    let all = |s: (bool, bool)| shapes.iter().all(|&x| x == s);
    if all((false, false)) {
        "pairs"
    } else if all((true, false)) {
        "clients"
    } else if all((false, true)) {
        "readers"
    } else {
        "pairs/clients/readers"
    }
}

/// The scaling table, when the run has many-pair cases.
pub fn table(run: &RunRecord) -> Option<Table> {
    let cases: Vec<&CaseRecord> = run.cases.iter().filter(|c| c.pairs.is_some()).collect();
    if cases.is_empty() {
        return None;
    }
    let trips = cases.iter().any(|c| c.workload == Workload::RoundTrip);
    let unit = if trips { "round trips/s" } else { "MB/s" };
    let fmt = |c: &CaseRecord, v: f64| match c.workload {
        Workload::RoundTrip => fmt_rate(v),
        _ => fmt_mbps(v),
    };
    // Each CPU column in the unit of its largest figure.
    let (top_msg, top_byte) = cases
        .iter()
        .filter_map(|c| cpu_per(c))
        .fold((0f64, 0f64), |(a, b), (m, y)| (a.max(m), b.max(y)));
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for c in &cases {
        let Some(p) = &c.pairs else { continue };
        let mut row = vec![
            mechanism_label(c),
            c.mode.name().to_string(),
            fmt_size(c.block_size),
            p.count.to_string(),
            // The label's count is the pairs column already: `4 pairs spread` → `spread`.
            format!(
                "{}{}",
                match (p.fan_in, p.fan_out) {
                    (true, _) => "fan-in, ",
                    (_, true) => "fan-out, ",
                    _ => "",
                },
                c.placement
                    .label
                    .splitn(3, ' ')
                    .nth(2)
                    .unwrap_or(&c.placement.label)
            ),
        ];
        match total(c) {
            Some(t) if c.is_ok() => {
                row.push(fmt(c, t));
                // Per pair: its own bytes (or round trips) over its own time.
                let per = |x: &ipcperf_core::record::PairRecord| match c.workload {
                    Workload::RoundTrip => x.blocks_per_sec(),
                    _ => x.bytes_per_sec(),
                };
                let rates: Vec<f64> = p.per_pair.iter().map(per).collect();
                let lo = rates.iter().copied().fold(f64::MAX, f64::min);
                let hi = rates.iter().copied().fold(0.0, f64::max);
                row.push(format!("{}–{}", fmt(c, lo), fmt(c, hi)));
                row.push(if hi > 0.0 {
                    format!("{:.2}", lo / hi)
                } else {
                    "-".into()
                });
                row.push(
                    one_pair(run, c)
                        .and_then(total)
                        .filter(|&b| b > 0.0)
                        .map_or("-".into(), |b| format!("{:.2}×", t / b)),
                );
                match cpu_per(c) {
                    Some((m, b)) => {
                        row.push(ns_in(m, top_msg));
                        row.push(ns_in(b, top_byte));
                    }
                    None => row.extend(["-".into(), "-".into()]),
                }
                row.push(
                    c.per_message()
                        .filter(|m| m.reader_switches.is_some())
                        .map_or("-".into(), |m| format!("{:.2}", m.switches())),
                );
            }
            _ => {
                let what = if c.is_ok() { "-" } else { "FAILED" };
                row.push(what.into());
                row.extend(std::iter::repeat_n("-".to_string(), 6));
                if let Some(m) = &c.message {
                    notes.push(format!("{} {}: {m}", mechanism_label(c), c.placement.label));
                }
            }
        }
        rows.push(row);
    }
    notes.push(format!(
        "total = every pair's {} over the wall time from the first start to the last end; \
         per pair = each pair's own over its own time (every pair does the same count); \
         fairness = slowest / fastest",
        if trips { "round trips" } else { "bytes" }
    ));
    notes.push(
        "CPU = writer + reader CPU time of every pair, per message (a round trip counts once) \
         and per byte; switches/msg = the context switches of every side (each client and \
         server, writer and reader) per message, from the kernel's own accounting (median of \
         the series)"
            .into(),
    );
    let mut header: Vec<String> = [
        "mechanism",
        "mode",
        "block",
        count_header(&cases),
        "placement",
        &format!("total {unit}"),
        "each (slowest–fastest)",
        "fairness",
        "× 1 pair",
        "CPU/msg",
        "CPU/byte",
        "switches/msg",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // A "× 1 pair" column no row fills (no one-pair case to scale by) goes.
    let scale = 8;
    if rows.iter().all(|r| r[scale] == "-") {
        header.remove(scale);
        rows.iter_mut().for_each(|r| {
            r.remove(scale);
        });
    }
    let mut t = Table {
        title: "Many pairs at once: scaling and fairness".into(),
        header,
        rows,
        notes,
    };
    // The mode, block and placement every row shares: at 80 columns the
    // twelve columns of a fan-in table broke every name a letter a line ("p"
    // over "r" over "o"…).
    t.say_shared_once(&[1, 2, 4]);
    Some(t)
}

#[cfg(test)]
mod tests {
    use crate::testdata;

    fn table_of(cases: Vec<ipcperf_core::record::CaseRecord>) -> super::Table {
        let mut run = testdata::run();
        run.cases = cases;
        super::table(&run).unwrap()
    }

    /// What every row shares goes to the title, and a "× 1 pair" column no row
    /// fills goes: at 80 columns a fan-in table of eight clients put every
    /// name a letter a line. What differs stays a column.
    #[test]
    fn what_every_row_shares_is_said_once_and_the_table_fits_80_columns() {
        let t = table_of(vec![
            testdata::pairs_case("pipe", 1, 1000.0),
            testdata::pairs_case("pipe", 2, 1800.0),
        ]);
        assert_eq!(
            t.title,
            "Many pairs at once: scaling and fairness · processes · 4 KiB · shared-l3"
        );
        for h in ["mode", "block", "placement"] {
            assert!(!t.header.iter().any(|x| x == h), "{:?}", t.header);
        }
        let scale = t.header.iter().position(|h| h == "× 1 pair").unwrap();
        assert_eq!(t.rows[1][scale], "1.80×");

        let mut mq = testdata::pairs_case("posix-mq", 8, 900.0);
        mq.mode = ipcperf_core::mode::Mode::Threads;
        let t = table_of(vec![testdata::pairs_case("unix", 8, 1000.0), mq]);
        assert!(!t.header.iter().any(|h| h == "× 1 pair"), "{:?}", t.header);
        assert!(t.header.iter().any(|h| h == "mode"), "{:?}", t.header);
        assert!(t.title.ends_with("· 4 KiB · shared-l3"), "{}", t.title);
        let (c, _) = crate::export::table::fit(&t, Some(80));
        let text = c.to_string();
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        // Under the header's rule: a line a row (no name broken), a border.
        let body = text.lines().skip_while(|l| !l.starts_with('╞')).count();
        assert_eq!(body, 1 + t.rows.len() + 1, "{text}");
        assert!(text.contains("│ mechanism ┆"), "{text}");
    }

    /// CPU time per 16 MiB block runs to ms: not "5000.0 µs".
    #[test]
    fn cpu_per_message_reads_in_its_unit() {
        assert_eq!(super::ns(5.0), "5.00 ns");
        assert_eq!(super::ns(812.0), "812 ns");
        assert_eq!(super::ns(46_270.0), "46.3 µs");
        assert_eq!(super::ns(5_000_000.0), "5.00 ms");
        // In a column whose largest is in µs, every figure is.
        assert_eq!(super::ns_in(9_476.0, 10_900.0), "9.48 µs");
        assert_eq!(super::ns_in(10_900.0, 10_900.0), "10.9 µs");
        assert_eq!(super::ns_in(812.0, 5_000_000.0), "812 ns");
        assert_eq!(super::ns_in(900_000.0, 5_000_000.0), "0.90 ms");
        assert_eq!(super::ns_in(9_476.0, 9_476.0), "9476 ns");
    }
}
