//! Results as plain serializable records: the one contract for everything
//! downstream (tables, exporters, the store, reports). Raw per-series figures are
//! kept so any summary can be computed again later.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::kind::Mode;
use crate::kind::Workload;
use crate::latency::LatencySummary as RoundTripLatency;
use crate::machine::Machine;
use crate::payload::Payload;
use crate::stats::{spread, Spread};

/// How a case ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaseStatus {
    Ok,
    /// It cannot run here as asked (a limit or capacity); `message` says which.
    Refused,
    /// It started and failed; `message` says why.
    Failed,
}

/// Placement as asked and as seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacementRecord {
    /// `same-cpu`, `cross-cpu`, `unpinned`, `partly-pinned`.
    pub label: String,
    pub writer_cpu: Option<usize>,
    pub reader_cpu: Option<usize>,
    /// Where each side was when the last series ended (telling for unpinned runs).
    pub seen_writer_cpu: Option<usize>,
    pub seen_reader_cpu: Option<usize>,
    /// The two CPUs' one-way latency as measured (a `--pin measured:...`
    /// placement), ns, beside the sysfs class its label names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_one_way_ns: Option<u32>,
}

impl CaseRecord {
    /// Record why the case did not run (a refusal) or failed: its status and reason,
    /// and no figures. The one failure path of every workload.
    pub fn fail(&mut self, e: crate::error::Error) {
        use crate::error::Error;
        self.status = match e {
            Error::Refused(_) => CaseStatus::Refused,
            _ => CaseStatus::Failed,
        };
        self.message = Some(match e {
            Error::Refused(m) => m,
            e => e.to_string(),
        });
        self.series.clear();
        self.latency = None;
        self.pairs = None;
    }
}

impl PlacementRecord {
    /// The placement as every table, legend and report row shows it: its label
    /// and, when pinned, both CPUs (`shared-l3 0→8`).
    pub fn shown(&self) -> String {
        match (self.writer_cpu, self.reader_cpu, self.measured_one_way_ns) {
            // Placed by measurement: the sysfs class, and the distance measured.
            (Some(w), Some(r), Some(ns)) => format!("{} {w}→{r} (measured {ns} ns)", self.label),
            (Some(w), Some(r), None) => format!("{} {w}→{r}", self.label),
            _ => self.label.clone(),
        }
    }
}

/// One timed series.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeriesRecord {
    pub blocks: u64,
    pub bytes: u64,
    pub elapsed_ns: u64,
    /// CPU time the writer's thread used in the series (the only thread in single mode).
    #[serde(default)]
    pub writer_cpu_ns: u64,
    /// CPU time the reader's thread used (absent in single mode and for solo mechanisms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader_cpu_ns: Option<u64>,
    /// What the writer's thread (the client's, for round trips) cost the kernel
    /// over exactly the series: context switches, page faults, migrations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_counts: Option<Counts>,
    /// The same of the reader's thread (the server's), where there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader_counts: Option<Counts>,
}

pub use crate::counts::{Cost, Counts, PerMessage};

impl SeriesRecord {
    pub fn bytes_per_sec(&self) -> f64 {
        self.bytes as f64 * 1e9 / self.elapsed_ns.max(1) as f64
    }
    pub fn blocks_per_sec(&self) -> f64 {
        self.blocks as f64 * 1e9 / self.elapsed_ns.max(1) as f64
    }
    /// CPUs kept busy on average: (writer + reader CPU time) / wall time. 1.0 = one
    /// CPU fully busy; a spinning side shows here.
    pub fn cpu_load(&self) -> f64 {
        (self.writer_cpu_ns + self.reader_cpu_ns.unwrap_or(0)) as f64
            / self.elapsed_ns.max(1) as f64
    }
}

/// One case's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseRecord {
    pub workload: Workload,
    pub mechanism: String,
    pub mode: Mode,
    /// Bytes per block or message (JSON `block_size_bytes` since schema 2; the
    /// older name is still read).
    #[serde(rename = "block_size_bytes", alias = "block_size")]
    pub block_size: u64,
    pub placement: PlacementRecord,
    pub payload: Payload,
    /// How a side waits for the other: `block` (the kernel puts it to sleep) or `poll`.
    pub wait: String,
    pub include_setup: bool,
    /// Mechanism options and facts found at set-up (e.g. the pipe size granted).
    pub options: BTreeMap<String, String>,
    pub status: CaseStatus,
    pub message: Option<String>,
    pub series: Vec<SeriesRecord>,
    /// Median over the series (absent unless the case ran).
    pub median_bytes_per_sec: Option<f64>,
    pub min_bytes_per_sec: Option<f64>,
    pub max_bytes_per_sec: Option<f64>,
    pub median_blocks_per_sec: Option<f64>,
    /// Median CPUs kept busy by both sides together (see [`SeriesRecord::cpu_load`]).
    #[serde(default)]
    pub median_cpu_load: Option<f64>,
    /// Round-trip cases only: the latency summary, flattened so each case carries
    /// `p50_ns`, `p99_ns`, `round_trips_per_sec`, ... and `latency_histogram`.
    #[serde(default, flatten, skip_serializing_if = "Option::is_none")]
    pub latency: Option<RoundTripLatency>,
    /// Datagram mechanisms only: what was sent, received, lost, duplicated, reordered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datagrams: Option<DatagramCounts>,
    /// Synchronization-primitive figures (workload `sync`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncRecord>,
    /// Many pairs at once (`--pairs`): each pair's own figures. The series then
    /// hold the totals of every pair (bytes, blocks, CPU time) over the wall time
    /// from the first pair's start to the last pair's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<PairsRecord>,
    /// `--peer`: the other machine, as its `ipcperf serve` described itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_machine: Option<Box<Machine>>,
    /// `--explain`: the round trip's parts, from the kernel's events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<Box<crate::explain::ExplainRecord>>,
    /// Workload `replay`: what was replayed and how the schedule was kept. Its
    /// latency (the flattened summary) is each message's, one way, from when
    /// it was due; `round_trips` there counts messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<Box<ReplayRecord>>,
    /// The case measured again with the CPUs held at polling idle (one series
    /// after the timed ones): the part of its figure that is wake-ups from idle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_probe: Option<IdleProbe>,
}

/// One series of a case with no idle state deeper than polling
/// (`/dev/cpu_dma_latency` held at 0), taken after its timed series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdleProbe {
    /// Round trips: the series' p50 and p99, ns (the clock's cost taken off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ns: Option<u64>,
    /// Streams: the series' bytes a second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_sec: Option<f64>,
    /// Round trips or blocks in the series.
    pub count: u64,
}

impl IdleProbe {
    /// A round-trip series' samples (sorted here), less the clock's cost.
    pub fn round_trips(samples: &mut [u64], tare: u64) -> IdleProbe {
        samples.sort_unstable();
        let at = |q: usize| {
            samples
                .get(samples.len() * q / 100)
                .map(|v| v.saturating_sub(tare))
        };
        IdleProbe {
            p50_ns: at(50),
            p99_ns: at(99),
            bytes_per_sec: None,
            count: samples.len() as u64,
        }
    }

    /// A stream series: `bytes` in `elapsed_ns`.
    pub fn stream(bytes: f64, elapsed_ns: u64, blocks: u64) -> IdleProbe {
        IdleProbe {
            p50_ns: None,
            p99_ns: None,
            bytes_per_sec: Some(bytes * 1e9 / elapsed_ns.max(1) as f64),
            count: blocks,
        }
    }
}

/// A replayed pattern and what became of its schedule (workload `replay`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ReplayRecord {
    /// The trace's file name, or the fitted pattern (`--sizes .. --gaps ..`).
    pub source: String,
    /// The trace's SHA-256 (every file of it, in order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<usize>,
    /// What strace named the channel (`pipe:[123]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// The pattern in `--sizes .. --gaps ..` form, as `pattern` fits it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fitted: Option<String>,
    /// One pass of the script: messages each way and their bytes.
    pub a_to_b: u64,
    pub a_to_b_bytes: u64,
    pub b_to_a: u64,
    pub b_to_a_bytes: u64,
    pub largest_bytes: u64,
    /// `--speed`: how much faster than recorded.
    pub speed: f64,
    /// `--loop`: times round the script in a pass.
    pub loops: u64,
    /// One pass's recorded length (every loop, after --speed).
    pub recorded_ns: u64,
    /// Each pass's schedule kept: its recorded length over the time its sends
    /// took (1.0: every message went on time).
    pub kept: Vec<f64>,
    /// Sends more than 1 ms behind their time, and the lateness of all sends.
    pub late_sends: u64,
    pub late_p99_ns: u64,
    pub late_max_ns: u64,
    /// The worst stretch of sends behind the schedule (trace time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind: Option<BehindRecord>,
    /// Latency each way (A→B, B→A).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a_to_b_latency: Option<crate::latency::Percentiles>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b_to_a_latency: Option<crate::latency::Percentiles>,
    /// Latency against time in the trace, over every pass.
    pub timeline: Vec<TimelineBin>,
}

/// Sends behind the schedule, from `from_ns` to `to_ns` of the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BehindRecord {
    pub from_ns: u64,
    pub to_ns: u64,
    pub messages: u64,
    pub max_late_ns: u64,
}

/// One stretch of trace time: its messages' latency (within 1%) and late sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineBin {
    pub from_ns: u64,
    pub to_ns: u64,
    pub messages: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    pub late: u64,
}

/// Every pair of a many-pair case. Each pair runs the same count of blocks (or
/// round trips) per series, so a pair that gets less of the machine takes longer:
/// its own rate shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairsRecord {
    pub count: u32,
    /// Fan-in (`--clients`): the entries are clients of one server, not pairs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fan_in: bool,
    /// Fan-out (`--subscribers`): the entries are the readers of one writer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fan_out: bool,
    pub per_pair: Vec<PairRecord>,
}

/// One pair's CPUs and figures, summed over the kept series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairRecord {
    pub writer_cpu: Option<usize>,
    pub reader_cpu: Option<usize>,
    /// Where each side was when the last series ended.
    pub seen_writer_cpu: Option<usize>,
    pub seen_reader_cpu: Option<usize>,
    /// Blocks (stream) or round trips (latency) this pair completed.
    pub blocks: u64,
    pub bytes: u64,
    /// This pair's own time from its start to its end, summed over the series.
    pub elapsed_ns: u64,
    pub writer_cpu_ns: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader_cpu_ns: Option<u64>,
}

impl PairRecord {
    /// This pair's own rate: blocks (or round trips) per second of its own time.
    pub fn blocks_per_sec(&self) -> f64 {
        self.blocks as f64 * 1e9 / self.elapsed_ns.max(1) as f64
    }
    pub fn bytes_per_sec(&self) -> f64 {
        self.bytes as f64 * 1e9 / self.elapsed_ns.max(1) as f64
    }
}

impl PairsRecord {
    /// The placement label of a many-pair case: the count, then `unpinned` when
    /// no pair is pinned, the class when every pair is of one (`4 pairs
    /// shared-l3`), else `spread` (pairs on CPUs of their own, of several classes).
    pub fn label(pairs: &[crate::kind::Placement]) -> String {
        let n = pairs.len();
        let how = if pairs
            .iter()
            .all(|p| p.writer_cpu.is_none() && p.reader_cpu.is_none())
        {
            "unpinned"
        } else {
            let first = pairs.first().map(|p| p.label());
            match first {
                Some(l) if pairs.iter().all(|p| Some(p.label()) == first) => l,
                _ => "spread",
            }
        };
        format!("{n} pair{} {how}", if n == 1 { "" } else { "s" })
    }

    /// Fairness: the slowest and the fastest pair's own rate (blocks or round
    /// trips per second).
    pub fn min_max_blocks_per_sec(&self) -> Option<(f64, f64)> {
        let r: Vec<f64> = self.per_pair.iter().map(|p| p.blocks_per_sec()).collect();
        let min = r.iter().copied().reduce(f64::min)?;
        let max = r.iter().copied().reduce(f64::max)?;
        Some((min, max))
    }
}

/// One timed series of a sync loop, and its tare: the same loop, the same number of
/// cycles, with a dummy call that returns success in place of each operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncSeries {
    pub cycles: u64,
    pub elapsed_ns: u64,
    pub tare_ns: u64,
    /// Request/release only: the same count of cycles of two atomic
    /// read-modify-writes on an uncontended word (a lock's fast path, bare),
    /// timed the same way in the same series: what no lock can beat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic_ns: Option<u64>,
    /// This side's CPU time and counts over the series' loop, and (set/clear)
    /// the partner's: absent in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partner_cost: Option<Cost>,
}

/// Per-cycle set/clear latency (each cycle timed alone; the clock's median cost subtracted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CycleLatency {
    pub samples: u64,
    pub clock_cost_ns: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
    /// The cycles beyond each percentile (None in records saved before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beyond: Option<crate::latency::Beyond>,
}

/// What happened to a waiter when the holder of a primitive was killed (SIGKILL).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RobustnessRecord {
    /// How the holder took it (e.g. `SEM_UNDO`, `no SEM_UNDO`, `robust`).
    pub variant: String,
    /// Whether the waiter got the primitive within `bound_ns` of the kill.
    pub freed: bool,
    /// From kill(2) to the waiter holding it.
    pub freed_after_ns: Option<u64>,
    /// The bound the waiter waited (it never waits unbounded).
    pub bound_ns: u64,
    /// How it was freed, or why it never would be.
    pub note: String,
}

/// A synchronization primitive's figures: Duncan's Table 2 row, and more.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncRecord {
    pub primitive: String,
    pub mode: Mode,
    /// Request/release cycles per second, tare subtracted (one thread, uncontended).
    pub request_release_per_sec: Option<f64>,
    /// Set/clear cycles per second, tare subtracted: a token there and back between two sides.
    pub set_clear_per_sec: Option<f64>,
    pub request_release_ns: Option<f64>,
    pub set_clear_ns: Option<f64>,
    /// The empty loop per cycle (median over series): subtracted only where it is
    /// at most a tenth of the gross time (see `sync::TARE_SHARE`).
    pub request_release_tare_ns: Option<f64>,
    pub set_clear_tare_ns: Option<f64>,
    /// The loop's own time per cycle, nothing subtracted (median over series).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_release_gross_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_clear_gross_ns: Option<f64>,
    /// One atomic read-modify-write on this machine, in the same run (half a cycle
    /// of the atomic reference loop): the floor under request/release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic_rmw_ns: Option<f64>,
    /// Why a figure is absent (does not apply, failed).
    pub request_release_note: Option<String>,
    pub set_clear_note: Option<String>,
    pub request_release_series: Vec<SyncSeries>,
    pub set_clear_series: Vec<SyncSeries>,
    pub set_clear_latency: Option<CycleLatency>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robustness: Option<RobustnessRecord>,
}

impl SyncRecord {
    /// `primitive` in `mode` with nothing measured yet.
    pub fn new(primitive: String, mode: Mode) -> SyncRecord {
        SyncRecord {
            primitive,
            mode,
            request_release_per_sec: None,
            set_clear_per_sec: None,
            request_release_ns: None,
            set_clear_ns: None,
            request_release_tare_ns: None,
            set_clear_tare_ns: None,
            request_release_gross_ns: None,
            set_clear_gross_ns: None,
            atomic_rmw_ns: None,
            request_release_note: None,
            set_clear_note: None,
            request_release_series: Vec::new(),
            set_clear_series: Vec::new(),
            set_clear_latency: None,
            robustness: None,
        }
    }
}

pub use crate::kind::DatagramCounts;

impl CaseRecord {
    /// Fill the summary fields from the series.
    pub fn summarize(&mut self) {
        let bps: Vec<f64> = self.series.iter().map(|s| s.bytes_per_sec()).collect();
        let blk: Vec<f64> = self.series.iter().map(|s| s.blocks_per_sec()).collect();
        if let Some(Spread { median, min, max }) = spread(&bps) {
            self.median_bytes_per_sec = Some(median);
            self.min_bytes_per_sec = Some(min);
            self.max_bytes_per_sec = Some(max);
        }
        self.median_blocks_per_sec = spread(&blk).map(|s| s.median);
        let load: Vec<f64> = self.series.iter().map(|s| s.cpu_load()).collect();
        self.median_cpu_load = spread(&load).map(|s| s.median);
    }

    pub fn is_ok(&self) -> bool {
        self.status == CaseStatus::Ok
    }

    /// What one message cost each side, the median over the series that were
    /// counted (None where none was: an older record, a kind not counted yet).
    pub fn per_message(&self) -> Option<PerMessage> {
        let med = |f: &dyn Fn(&SeriesRecord) -> Option<f64>| -> Option<f64> {
            let v: Vec<f64> = self
                .series
                .iter()
                .filter(|s| s.blocks > 0)
                .filter_map(f)
                .collect();
            spread(&v).map(|s| s.median)
        };
        let per = |s: &SeriesRecord, x: u64| x as f64 / s.blocks as f64;
        let w = |f: fn(&Counts) -> u64| med(&|s| s.writer_counts.map(|c| per(s, f(&c))));
        let r = |f: fn(&Counts) -> u64| med(&|s| s.reader_counts.map(|c| per(s, f(&c))));
        Some(PerMessage {
            writer_switches: w(|c| c.switches())?,
            reader_switches: r(|c| c.switches()),
            writer_involuntary: w(|c| c.involuntary_switches)?,
            reader_involuntary: r(|c| c.involuntary_switches),
            writer_cpu_ns: med(&|s| s.writer_counts.map(|_| per(s, s.writer_cpu_ns)))?,
            reader_cpu_ns: med(&|s| s.reader_counts.and(s.reader_cpu_ns).map(|n| per(s, n))),
            writer_migrations: med(&|s| {
                s.writer_counts
                    .and_then(|c| c.migrations)
                    .map(|m| per(s, m))
            }),
            reader_migrations: med(&|s| {
                s.reader_counts
                    .and_then(|c| c.migrations)
                    .map(|m| per(s, m))
            }),
            writer_faults: w(|c| c.minor_faults + c.major_faults)?,
            reader_faults: r(|c| c.minor_faults + c.major_faults),
        })
    }
}

/// A whole run: what was asked, on which machine, and every case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub ipcperf_version: String,
    /// A name the user gave the run (`--label`), to find and compare it by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub command_line: Vec<String>,
    /// The command that made the run (`run`, `latency`, `matrix`, `sync`,
    /// `pipeline`, `replay`, `advise`, `topology`): how it is shown. Runs kept
    /// before it was recorded have it from their command line, once, where they
    /// are read in (the store's schema 6, `import`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Milliseconds since the Unix epoch.
    pub started_ms: u64,
    pub finished_ms: Option<u64>,
    pub complete: bool,
    pub machine: Machine,
    pub cases: Vec<CaseRecord>,
}

impl RunRecord {
    /// A run of command `kind` starting now on this machine, with no cases yet.
    pub fn begin(kind: &str, command_line: Vec<String>) -> RunRecord {
        RunRecord {
            ipcperf_version: env!("CARGO_PKG_VERSION").to_string(),
            label: None,
            command_line,
            kind: kind.to_string(),
            started_ms: unix_ms(),
            finished_ms: None,
            complete: false,
            machine: Machine::collect(),
            cases: Vec::new(),
        }
    }
}

impl RunRecord {
    /// The kind of a run kept before kinds were recorded: the subcommand of its
    /// command line (its first argument after the program that is not an
    /// option), else `run`. Read once where such a run comes in.
    pub fn kind_of_command_line(command_line: &[String]) -> String {
        command_line
            .iter()
            .skip(1)
            .map(String::as_str)
            .find(|a| !a.starts_with('-'))
            .filter(|k| is_kind(k))
            .unwrap_or("run")
            .to_string()
    }

    /// Its kind, or, for a record from before kinds were kept, its command line's.
    pub fn kind_or_guess(&self) -> String {
        if self.kind.is_empty() {
            Self::kind_of_command_line(&self.command_line)
        } else {
            self.kind.clone()
        }
    }
}

/// Whether `k` can be a run's kind: a command's name (lowercase, at most 16).
pub fn is_kind(k: &str) -> bool {
    !k.is_empty() && k.len() <= 16 && k.chars().all(|c| c.is_ascii_lowercase() || c == '_')
}

/// Now, in milliseconds since the Unix epoch.
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
