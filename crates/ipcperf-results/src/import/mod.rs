//! A run read back from its JSON (`ipcperf import`): as a stream, each case checked
//! as soon as it is parsed and handed on, so memory holds one case at a time; values
//! no run of ipcperf can produce are refused with the field named.

use hdrhistogram::Histogram;
use ipcperf_core::latency::{
    percentiles, HistogramRecord, HIGHEST_NS, LOWEST_NS, SIGNIFICANT_DIGITS,
};
use ipcperf_core::machine::Machine;
use ipcperf_core::record::{unix_ms, CaseRecord, RunRecord};
use ipcperf_core::workload::Workload;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::path::Path;

/// The largest file imported: 128 MiB of JSON. With [`MAX_CASES`] this bounds what
/// `show`, `export`, `plot` and `report` hold of an imported run: measured at the
/// limits (100,000 stream cases in 88 MB; 10,500 latency cases in 128 MiB), each
/// peaked below 450 MB. The import itself holds one case at a time (9 MB peak).
pub const MAX_FILE_BYTES: u64 = 128 << 20;

/// The most cases one imported run may carry.
pub const MAX_CASES: usize = 100_000;

/// No run started before 2000-01-01.
pub const EARLIEST_MS: u64 = 946_684_800_000;

/// A clock a day fast is forgiven; more is a bad record.
pub const FUTURE_SLACK_MS: u64 = 86_400_000;

/// Why a record cannot be kept: the field, and what is wrong with it.
pub fn bad(field: impl fmt::Display, why: impl fmt::Display) -> String {
    format!("{field}: {why}")
}

/// A case as ipcperf could have written it, or the first field that is not.
pub fn check_case(i: usize, c: &CaseRecord) -> Result<(), String> {
    let f = |name: &str| format!("cases[{i}].{name}");
    let max_block = crate::units::MAX_BLOCK as u64;
    let sized = c.workload != Workload::Sync;
    if sized && c.block_size == 0 {
        return Err(bad(f("block_size_bytes"), "0 bytes is not a block size"));
    }
    if c.block_size > max_block {
        return Err(bad(
            f("block_size_bytes"),
            format_args!("{} is more than a block may be (1 GiB)", c.block_size),
        ));
    }
    if c.mechanism.is_empty() || c.mechanism.len() > 64 {
        return Err(bad(f("mechanism"), "empty or longer than 64 characters"));
    }
    no_control(&f("mechanism"), Some(&c.mechanism))?;
    for (k, v) in summary_figures(c) {
        if let Some(x) = v.filter(|x| !(x.is_finite() && *x >= 0.0)) {
            return Err(bad(f(k), format_args!("{x} is not a rate")));
        }
    }
    for (n, s) in c.series.iter().enumerate() {
        if s.elapsed_ns == 0 && (s.bytes > 0 || s.blocks > 0) {
            return Err(bad(
                f(&format!("series[{n}].elapsed_ns")),
                "0 ns for a series that moved data",
            ));
        }
        if sized && s.blocks.checked_mul(c.block_size).is_none() {
            return Err(bad(
                f(&format!("series[{n}].blocks")),
                format_args!("{} blocks of {} bytes overflow", s.blocks, c.block_size),
            ));
        }
    }
    Ok(())
}

/// A case's summary figures, each with its field's name.
fn summary_figures(c: &CaseRecord) -> [(&'static str, Option<f64>); 5] {
    [
        ("median_bytes_per_sec", c.median_bytes_per_sec),
        ("min_bytes_per_sec", c.min_bytes_per_sec),
        ("max_bytes_per_sec", c.max_bytes_per_sec),
        ("median_blocks_per_sec", c.median_blocks_per_sec),
        ("median_cpu_load", c.median_cpu_load),
    ]
}

/// Why a figure kept without the series it sums up is refused.
fn no_series(field: String, x: f64) -> String {
    bad(
        field,
        format_args!("{x}, with no series: a figure comes from the series it sums up"),
    )
}

/// A case's summary figures (median, min and max MB/s, blocks/s, CPUs busy) are
/// its series' own, so they are taken again from them: a figure edited alone (or
/// series edited without it) cannot show what no series gave. Figures with no
/// series at all are refused: they come from nowhere.
pub fn figures_from_series(i: usize, c: &mut CaseRecord) -> Result<(), String> {
    if c.series.is_empty() {
        for (k, v) in summary_figures(c) {
            if let Some(x) = v {
                return Err(no_series(format!("cases[{i}].{k}"), x));
            }
        }
    } else {
        c.summarize();
    }
    latency_from_histogram(i, c)?;
    sync_from_series(i, c)
}

/// A sync case's figures (ns and cycles/s, each side) are its series', taken
/// again from them as the run took them; a side's figure with no series is
/// refused.
fn sync_from_series(i: usize, c: &mut CaseRecord) -> Result<(), String> {
    let Some(s) = c.sync.as_mut() else {
        return Ok(());
    };
    let sides = [
        (
            "request_release",
            s.request_release_series.is_empty(),
            [
                s.request_release_ns,
                s.request_release_gross_ns,
                s.request_release_tare_ns,
                s.request_release_per_sec,
            ],
        ),
        (
            "set_clear",
            s.set_clear_series.is_empty(),
            [
                s.set_clear_ns,
                s.set_clear_gross_ns,
                s.set_clear_tare_ns,
                s.set_clear_per_sec,
            ],
        ),
    ];
    for (side, empty, figures) in sides {
        if let Some(x) = figures.iter().flatten().next().filter(|_| empty) {
            return Err(no_series(format!("cases[{i}].sync.{side}"), *x));
        }
    }
    ipcperf_core::sync::refigure(s);
    Ok(())
}

/// A round-trip case's percentiles (and a one-way summary's) are its
/// histogram's, so they are taken again from it as the rates are from the
/// series: a p99 edited alone cannot show what no round trip took. A histogram
/// is held to the bounds ipcperf writes (1 ns to 10 s, 2 or 3 digits), which
/// also bounds what reading it back costs.
fn latency_from_histogram(i: usize, c: &mut CaseRecord) -> Result<(), String> {
    let Some(l) = c.latency.as_mut() else {
        return Ok(());
    };
    let h = histogram_of(
        &format!("cases[{i}].latency_histogram"),
        &l.latency_histogram,
    )?;
    if h.len() != l.round_trips {
        return Err(bad(
            format!("cases[{i}].round_trips"),
            format_args!(
                "{}, where its histogram holds {} round trips",
                l.round_trips,
                h.len()
            ),
        ));
    }
    if !h.is_empty() {
        let p = percentiles(&h);
        (l.mean_ns, l.min_ns, l.max_ns) = (p.mean_ns, p.min_ns, p.max_ns);
        (l.p50_ns, l.p90_ns, l.p99_ns) = (p.p50_ns, p.p90_ns, p.p99_ns);
        (l.p999_ns, l.p9999_ns, l.beyond) = (p.p999_ns, p.p9999_ns, p.beyond);
    }
    if let Some(ow) = l.one_way.as_mut() {
        let h = histogram_of(&format!("cases[{i}].one_way.histogram"), &ow.histogram)?;
        ow.p = percentiles(&h);
    }
    Ok(())
}

/// A kept histogram read back, or why it is not one ipcperf writes.
fn histogram_of(field: &str, r: &HistogramRecord) -> Result<Histogram<u64>, String> {
    if (r.lowest_ns, r.highest_ns) != (LOWEST_NS, HIGHEST_NS)
        || !(2..=SIGNIFICANT_DIGITS).contains(&r.significant_digits)
    {
        return Err(bad(
            field,
            format_args!(
                "bounds {}–{} ns at {} digits, where ipcperf keeps {LOWEST_NS}–{HIGHEST_NS} ns at 2 or {SIGNIFICANT_DIGITS}",
                r.lowest_ns, r.highest_ns, r.significant_digits
            ),
        ));
    }
    // The histogram adds its counts saturating: two of 2^64 - 1 read as one.
    if r.counts
        .iter()
        .try_fold(0u64, |t, &[_, n]| t.checked_add(n))
        .is_none()
    {
        return Err(bad(field, "its counts add up past 2^64 round trips"));
    }
    r.to_histogram()
        .ok_or_else(|| bad(field, "a count is past the histogram's bounds or overflows"))
}

/// The run's own fields, or the first that is not one ipcperf could have written.
pub fn check_head(r: &RunRecord, now_ms: u64) -> Result<(), String> {
    let latest = now_ms.saturating_add(FUTURE_SLACK_MS);
    if r.started_ms < EARLIEST_MS {
        return Err(bad(
            "started_ms",
            format_args!("{} is before 2000", r.started_ms),
        ));
    }
    if r.started_ms > latest {
        return Err(bad(
            "started_ms",
            format_args!("{} is in the future", r.started_ms),
        ));
    }
    if let Some(end) = r.finished_ms {
        if end < r.started_ms || end > latest {
            return Err(bad(
                "finished_ms",
                format_args!("{end} is before the start or in the future"),
            ));
        }
    }
    if r.machine.hostname.len() > 255 {
        return Err(bad("machine.hostname", "longer than 255 characters"));
    }
    let (m, sched) = (&r.machine, r.machine.scheduler.as_ref());
    let named = [
        ("machine.hostname", Some(&m.hostname)),
        ("machine.kernel", Some(&m.kernel)),
        ("machine.os", Some(&m.os)),
        ("machine.arch", Some(&m.arch)),
        ("machine.cpu_model", Some(&m.cpu_model)),
        ("machine.virtualization", m.virtualization.as_ref()),
        ("machine.cpu_governor", m.cpu_governor.as_ref()),
        (
            "machine.scheduler.node",
            sched.and_then(|s| s.node.as_ref()),
        ),
        ("machine.scheduler.pod", sched.and_then(|s| s.pod.as_ref())),
        (
            "machine.scheduler.job_id",
            sched.and_then(|s| s.job_id.as_ref()),
        ),
        ("label", r.label.as_ref()),
        ("kind", Some(&r.kind)),
        ("ipcperf_version", Some(&r.ipcperf_version)),
    ];
    for (field, text) in named {
        no_control(field, text.map(String::as_str))?;
    }
    Ok(())
}

/// A name shown in every table (a host, a kernel, a label) holds no control
/// character: a line break split rows, an escape sequence reached the terminal.
fn no_control(field: &str, text: Option<&str>) -> Result<(), String> {
    match text.and_then(|t| t.chars().find(|c| c.is_control())) {
        Some(c) => Err(bad(
            field,
            format_args!(
                "holds a control character (U+{:04X}), which no name ipcperf writes holds",
                u32::from(c)
            ),
        )),
        None => Ok(()),
    }
}

/// A run record read as a stream: its fields are kept, each case goes to `on_case`.
pub struct RunSeed<'f, F> {
    on_case: &'f mut F,
}

pub struct CasesSeed<'f, F> {
    on_case: &'f mut F,
}

impl<'de, F: FnMut(CaseRecord) -> Result<(), String>> DeserializeSeed<'de> for CasesSeed<'_, F> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(CaseRecord) -> Result<(), String>> Visitor<'de> for CasesSeed<'_, F> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of cases")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut n = 0usize;
        while let Some(c) = seq.next_element::<CaseRecord>()? {
            n += 1;
            if n > MAX_CASES {
                return Err(de::Error::custom(format!(
                    "cases: more than {MAX_CASES} in one run"
                )));
            }
            (self.on_case)(c).map_err(de::Error::custom)?;
        }
        Ok(())
    }
}

impl<'de, F: FnMut(CaseRecord) -> Result<(), String>> DeserializeSeed<'de> for RunSeed<'_, F> {
    type Value = RunRecord;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<RunRecord, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, F: FnMut(CaseRecord) -> Result<(), String>> Visitor<'de> for RunSeed<'_, F> {
    type Value = RunRecord;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an ipcperf run record (a JSON object)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RunRecord, A::Error> {
        let mut version: Option<String> = None;
        let mut command_line: Option<Vec<String>> = None;
        let mut started_ms: Option<u64> = None;
        let mut finished_ms: Option<Option<u64>> = None;
        let mut complete: Option<bool> = None;
        let mut machine: Option<Machine> = None;
        let mut label: Option<String> = None;
        let mut kind: Option<String> = None;
        let mut cases = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "ipcperf_version" => version = Some(map.next_value()?),
                "command_line" => command_line = Some(map.next_value()?),
                "started_ms" => started_ms = Some(map.next_value()?),
                "finished_ms" => finished_ms = Some(map.next_value()?),
                "complete" => complete = Some(map.next_value()?),
                "machine" => machine = Some(map.next_value()?),
                "kind" => {
                    let k: String = map.next_value()?;
                    if !ipcperf_core::record::is_kind(&k) {
                        return Err(de::Error::custom(format!(
                            "kind: '{}' is not a command's name",
                            k.chars().take(40).collect::<String>()
                        )));
                    }
                    kind = Some(k);
                }
                "label" => {
                    let l: String = map.next_value()?;
                    label = Some(
                        crate::store::label::check_label(&l)
                            .map_err(|e| de::Error::custom(format!("label: {e}")))?,
                    );
                }
                "cases" => {
                    map.next_value_seed(CasesSeed {
                        on_case: &mut *self.on_case,
                    })?;
                    cases = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let missing = |k: &'static str| de::Error::missing_field(k);
        if !cases {
            return Err(missing("cases"));
        }
        let command_line = command_line.ok_or_else(|| missing("command_line"))?;
        // A run exported before kinds were recorded: read from its command line.
        let kind = kind.unwrap_or_else(|| RunRecord::kind_of_command_line(&command_line));
        Ok(RunRecord {
            ipcperf_version: version.ok_or_else(|| missing("ipcperf_version"))?,
            label,
            command_line,
            kind,
            started_ms: started_ms.ok_or_else(|| missing("started_ms"))?,
            finished_ms: finished_ms.unwrap_or(None),
            complete: complete.ok_or_else(|| missing("complete"))?,
            machine: machine.ok_or_else(|| missing("machine"))?,
            cases: Vec::new(),
        })
    }
}

/// Read the run in `path` as a stream, handing each checked case to `on_case`;
/// returns the run's own fields, checked. Errors name the file.
pub fn read_run(
    path: &Path,
    on_case: impl FnMut(CaseRecord) -> Result<(), String>,
) -> Result<RunRecord, String> {
    read_run_as(path, &path.display().to_string(), on_case)
}

/// [`read_run`], its errors naming the input `shown` (a file that stands in for
/// another input, as a spool of standard input does).
pub fn read_run_as(
    path: &Path,
    shown: &str,
    mut on_case: impl FnMut(CaseRecord) -> Result<(), String>,
) -> Result<RunRecord, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > MAX_FILE_BYTES {
        return Err(format!(
            "{shown}: more than a run import takes ({} MiB)",
            MAX_FILE_BYTES >> 20
        ));
    }
    let mut n = 0usize;
    let mut each = |mut c: CaseRecord| {
        check_case(n, &c)?;
        figures_from_series(n, &mut c)?;
        n += 1;
        on_case(c)
    };
    // Bounded also where the size is not known first (a pipe, a device): an
    // endless stream ends at the limit, said as such.
    let mut limited = std::io::Read::take(&file, MAX_FILE_BYTES + 1);
    let mut reader = std::io::BufReader::new(&mut limited);
    // A UTF-8 byte-order mark (some editors write one on save) is no part of
    // the JSON: a hand-edited run was refused as "expected value at column 1".
    if std::io::BufRead::fill_buf(&mut reader).is_ok_and(|b| b.starts_with(b"\xEF\xBB\xBF")) {
        std::io::BufRead::consume(&mut reader, 3);
    }
    let mut de = serde_json::Deserializer::from_reader(reader);
    let read = RunSeed { on_case: &mut each }
        .deserialize(&mut de)
        .and_then(|r| de.end().map(|()| r));
    drop(de);
    if limited.limit() == 0 {
        return Err(format!(
            "{shown}: more than a run import takes ({} MiB)",
            MAX_FILE_BYTES >> 20
        ));
    }
    let head = read.map_err(|e| format!("{shown}: not an ipcperf run record: {e}"))?;
    check_head(&head, unix_ms()).map_err(|e| format!("{shown}: {e}"))?;
    Ok(head)
}

#[cfg(test)]
mod tests;
