//! CSV: one row per case, with the summary and the raw series figures.

use ipcperf_core::record::RunRecord;

/// The one CSV writer: every CSV ipcperf prints (runs, sync, compare, fleet,
/// trend, history, pattern) is written through it, so quoting is the same
/// everywhere.
pub struct CsvOut(csv::Writer<Vec<u8>>);

impl Default for CsvOut {
    fn default() -> Self {
        CsvOut(csv::Writer::from_writer(Vec::new()))
    }
}

impl CsvOut {
    /// One record: a header or a row. Writing text into memory does not fail.
    /// A text cell a spreadsheet would take for a formula (one that begins
    /// `=`, `+`, `-`, `@`, a tab or a carriage return and is no number: a
    /// label or a name from an imported run) is written with a `'` before it,
    /// as OWASP's CSV-injection advice says; numbers keep their sign.
    pub fn row<I, C>(&mut self, cells: I)
    where
        I: IntoIterator<Item = C>,
        C: AsRef<[u8]>,
    {
        let cells: Vec<C> = cells.into_iter().collect();
        let _ = self.0.write_record(cells.iter().map(|c| inert(c.as_ref())));
    }

    /// One row from a struct's fields (the header from the first row's names).
    pub fn serialize<T: serde::Serialize>(&mut self, row: &T) -> Result<(), String> {
        self.0.serialize(row).map_err(|e| e.to_string())
    }

    /// The text written, a newline after each record.
    pub fn text(self) -> String {
        String::from_utf8(self.0.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}

/// `cell` as a spreadsheet reads it as text (see [`CsvOut::row`]).
fn inert(cell: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    // A lone "-" (no value) is no formula.
    let formula = cell.len() > 1 && matches!(cell[0], b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r');
    let number = || {
        std::str::from_utf8(cell)
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
            .is_some()
    };
    if formula && !number() {
        let mut quoted = Vec::with_capacity(cell.len() + 1);
        quoted.push(b'\'');
        quoted.extend_from_slice(cell);
        quoted.into()
    } else {
        cell.into()
    }
}

pub const HEADER: &[&str] = &[
    "workload",
    "mechanism",
    "mode",
    "placement",
    "writer_cpu",
    "reader_cpu",
    "block_size_bytes",
    "payload",
    "wait",
    "status",
    "median_bytes_per_sec",
    "min_bytes_per_sec",
    "max_bytes_per_sec",
    "median_blocks_per_sec",
    "median_cpu_load",
    "series_elapsed_ns",
    "series_bytes",
    "options",
    "message",
    "round_trips",
    "round_trips_lost",
    "round_trips_per_sec",
    "clock_cost_ns",
    "mean_ns",
    "min_ns",
    "p50_ns",
    "p90_ns",
    "p99_ns",
    "p999_ns",
    "p9999_ns",
    "max_ns",
    "beyond_p50_samples",
    "beyond_p90_samples",
    "beyond_p99_samples",
    "beyond_p999_samples",
    "beyond_p9999_samples",
    "datagrams_lost",
    "datagrams_duplicated",
    "datagrams_reordered",
    "one_way_p50_ns",
    "one_way_p99_ns",
    "one_way_p999_ns",
    "one_way_beyond_p50_samples",
    "one_way_beyond_p99_samples",
    "one_way_beyond_p999_samples",
    "pairs",
    "pair_min_blocks_per_sec",
    "pair_max_blocks_per_sec",
    "explain_sum_median_ns",
    "explain_traced_median_ns",
    "explain_untraced_median_ns",
    "explain_parts",
    "series_writer_cpu_ns",
    "series_reader_cpu_ns",
    "series_writer_voluntary_switches",
    "series_writer_involuntary_switches",
    "series_reader_voluntary_switches",
    "series_reader_involuntary_switches",
    "series_writer_migrations",
    "series_reader_migrations",
    "series_writer_faults",
    "series_reader_faults",
    "switches_per_msg",
    "cpu_ns_per_msg",
    "series_writer_perf_switches",
    "series_reader_perf_switches",
    "series_writer_perf_migrations",
    "series_reader_perf_migrations",
    "series_writer_perf_faults",
    "series_reader_perf_faults",
    "series_writer_task_clock_ns",
    "series_reader_task_clock_ns",
    "series_writer_cycles",
    "series_reader_cycles",
    "series_writer_instructions",
    "series_reader_instructions",
    "series_writer_llc_references",
    "series_reader_llc_references",
    "series_writer_llc_misses",
    "series_reader_llc_misses",
    // The one series at polling idle (after the timed ones; last, so that the
    // columns before keep their places).
    "idle_poll_p50_ns",
    "idle_poll_p99_ns",
    "idle_poll_bytes_per_sec",
];

/// perf's counters of a side, in the CSV's order (after the switches): each
/// `series_writer_NAME`, then `series_reader_NAME`.
const PERF: [fn(&ipcperf_core::record::Counts) -> Option<u64>; 8] = [
    |c| c.perf_switches,
    |c| c.perf_migrations,
    |c| c.perf_faults,
    |c| c.task_clock_ns,
    |c| c.cycles,
    |c| c.instructions,
    |c| c.llc_references,
    |c| c.llc_misses,
];

/// Each series' counters, ';' between series (empty where not counted), then
/// the two per-message figures (both sides, median of the series).
fn counter_cells(c: &ipcperf_core::record::CaseRecord) -> Vec<String> {
    use ipcperf_core::record::{Counts, SeriesRecord};
    let each = |f: &dyn Fn(&SeriesRecord) -> Option<u64>| -> String {
        c.series
            .iter()
            .map(|s| opt(f(s)))
            .collect::<Vec<_>>()
            .join(";")
    };
    let w = |f: fn(&Counts) -> Option<u64>| each(&|s| s.writer_counts.as_ref().and_then(f));
    let r = |f: fn(&Counts) -> Option<u64>| each(&|s| s.reader_counts.as_ref().and_then(f));
    let pm = c.per_message();
    vec![
        each(&|s| s.writer_counts.map(|_| s.writer_cpu_ns)),
        each(&|s| s.reader_counts.and(s.reader_cpu_ns)),
        w(|c| Some(c.voluntary_switches)),
        w(|c| Some(c.involuntary_switches)),
        r(|c| Some(c.voluntary_switches)),
        r(|c| Some(c.involuntary_switches)),
        w(|c| c.migrations),
        r(|c| c.migrations),
        w(|c| Some(c.minor_faults + c.major_faults)),
        r(|c| Some(c.minor_faults + c.major_faults)),
        opt(pm.map(|p| format!("{:.4}", p.switches()))),
        opt(pm.map(|p| format!("{:.1}", p.cpu_ns()))),
    ]
    .into_iter()
    .chain(PERF.iter().flat_map(|&f| [w(f), r(f)]))
    .collect()
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

pub fn render(run: &RunRecord) -> String {
    let mut w = CsvOut::default();
    w.row(HEADER);
    for c in &run.cases {
        let l = c.latency.as_ref();
        let ow = l.and_then(|l| l.one_way.as_ref());
        // The samples beyond each percentile (kept, or counted from the histogram).
        let b = l.and_then(|l| l.beyond());
        let owb = ow.and_then(|w| w.p.beyond);
        let fair = c.pairs.as_ref().and_then(|p| p.min_max_blocks_per_sec());
        let x = c.explain.as_deref();
        let status = serde_json::to_value(&c.status)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let mut row = vec![
            c.workload.name().to_string(),
            c.mechanism.clone(),
            c.mode.name().to_string(),
            c.placement.label.clone(),
            opt(c.placement.writer_cpu),
            opt(c.placement.reader_cpu),
            c.block_size.to_string(),
            c.payload.name().to_string(),
            c.wait.clone(),
            status,
            opt(c.median_bytes_per_sec.map(|v| format!("{v:.0}"))),
            opt(c.min_bytes_per_sec.map(|v| format!("{v:.0}"))),
            opt(c.max_bytes_per_sec.map(|v| format!("{v:.0}"))),
            opt(c.median_blocks_per_sec.map(|v| format!("{v:.0}"))),
            opt(c.median_cpu_load.map(|v| format!("{v:.3}"))),
            c.series
                .iter()
                .map(|s| s.elapsed_ns.to_string())
                .collect::<Vec<_>>()
                .join(";"),
            c.series
                .iter()
                .map(|s| s.bytes.to_string())
                .collect::<Vec<_>>()
                .join(";"),
            c.options
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
            c.message.clone().unwrap_or_default(),
            opt(l.map(|l| l.round_trips)),
            opt(l.map(|l| l.round_trips_lost)),
            opt(l.map(|l| format!("{:.0}", l.round_trips_per_sec))),
            opt(l.map(|l| l.clock_cost_ns)),
            opt(l.map(|l| format!("{:.0}", l.mean_ns))),
            opt(l.map(|l| l.min_ns)),
            opt(l.map(|l| l.p50_ns)),
            opt(l.map(|l| l.p90_ns)),
            opt(l.map(|l| l.p99_ns)),
            opt(l.map(|l| l.p999_ns)),
            opt(l.map(|l| l.p9999_ns)),
            opt(l.map(|l| l.max_ns)),
            opt(b.map(|b| b.p50)),
            opt(b.map(|b| b.p90)),
            opt(b.map(|b| b.p99)),
            opt(b.map(|b| b.p999)),
            opt(b.map(|b| b.p9999)),
            opt(c.datagrams.map(|d| d.lost)),
            opt(c.datagrams.map(|d| d.duplicated)),
            opt(c.datagrams.map(|d| d.reordered)),
            opt(ow.map(|w| w.p.p50_ns)),
            opt(ow.map(|w| w.p.p99_ns)),
            opt(ow.map(|w| w.p.p999_ns)),
            opt(owb.map(|b| b.p50)),
            opt(owb.map(|b| b.p99)),
            opt(owb.map(|b| b.p999)),
            opt(c.pairs.as_ref().map(|p| p.count)),
            opt(fair.map(|f| format!("{:.0}", f.0))),
            opt(fair.map(|f| format!("{:.0}", f.1))),
            opt(x.map(|x| x.sum_median_ns)),
            opt(x.map(|x| x.traced_median_ns)),
            opt(x.map(|x| x.untraced_median_ns).filter(|&v| v > 0)),
            // Each part: name=median_ns/p99_ns, ';' between them.
            x.map(|x| {
                x.parts
                    .iter()
                    .map(|p| format!("{}={}/{}", p.name, p.median_ns, p.p99_ns))
                    .collect::<Vec<_>>()
                    .join(";")
            })
            .unwrap_or_default(),
        ];
        row.extend(counter_cells(c));
        let probe = c.idle_probe.as_ref();
        row.push(opt(probe.and_then(|p| p.p50_ns)));
        row.push(opt(probe.and_then(|p| p.p99_ns)));
        row.push(opt(probe
            .and_then(|p| p.bytes_per_sec)
            .map(|v| format!("{v:.0}"))));
        w.row(row);
    }
    w.text()
}

#[cfg(test)]
mod tests {
    /// A name that reads as a formula is text; a negative number stays one,
    /// and a lone "-" (no value) as it is.
    #[test]
    fn a_formula_is_written_as_text_and_a_number_as_it_is() {
        let mut w = super::CsvOut::default();
        w.row([
            "=HYPERLINK(\"http://x\")",
            "-1.5",
            "+cmd|' /C calc'!A0",
            "@SUM(A1)",
            "pipe",
            "-",
        ]);
        assert_eq!(
            w.text(),
            "\"'=HYPERLINK(\"\"http://x\"\")\",-1.5,'+cmd|' /C calc'!A0,'@SUM(A1),pipe,-\n"
        );
    }

    /// The series at polling idle the table shows is in the CSV too, in the
    /// last columns (those before keep their places).
    #[test]
    fn the_polling_idle_series_is_in_the_last_columns() {
        let mut run = crate::testdata::run();
        run.cases[1].idle_probe = Some(ipcperf_core::record::IdleProbe::stream(
            2.5e9,
            1_000_000_000,
            1,
        ));
        let text = super::render(&run);
        let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(',').collect()).collect();
        let at = rows[0].len() - 3;
        assert_eq!(
            rows[0][at..],
            [
                "idle_poll_p50_ns",
                "idle_poll_p99_ns",
                "idle_poll_bytes_per_sec"
            ]
        );
        assert_eq!(rows[2][at..], ["", "", "2500000000"]);
        assert_eq!(rows[1][at..], ["", "", ""]);
    }
}
