//! What each message costs the machine: one side's counters over a series
//! (`Counts`, kept in each series record) and what they come to per message,
//! each side's median over the series (`PerMessage`, made by
//! `CaseRecord::per_message`).

use std::sync::atomic::{AtomicUsize, Ordering};

use ipcperf_sys::counters::ThreadCounters;
use ipcperf_sys::perfcount::{self, Reading, ThreadPerf};
use serde::{Deserialize, Serialize};

/// One side's counters over one series, from the kernel's own accounting
/// (getrusage(RUSAGE_THREAD), the scheduler's migrations): readable by any
/// user. Its CPU time is the series' `writer_cpu_ns` / `reader_cpu_ns`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Context switches the thread asked for (it blocked).
    pub voluntary_switches: u64,
    /// Context switches forced on it (preempted).
    pub involuntary_switches: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    /// Moves between CPUs; absent where the kernel keeps no count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migrations: Option<u64>,
    /// perf's software events, the kernel's share counted (where allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perf_switches: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perf_migrations: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perf_faults: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_clock_ns: Option<u64>,
    /// The processor's counters, where it exposes them (and, where the kernel's
    /// share is not allowed, user space only: the machine state says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llc_references: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llc_misses: Option<u64>,
}

impl Counts {
    /// Both kinds of context switch.
    pub fn switches(&self) -> u64 {
        self.voluntary_switches + self.involuntary_switches
    }

    /// Two threads' counts together (many pairs' writers, fan-out's readers):
    /// a counter one of them lacks is absent from the sum.
    pub fn plus(&self, o: &Counts) -> Counts {
        let both = |a: Option<u64>, b: Option<u64>| Some(a? + b?);
        Counts {
            voluntary_switches: self.voluntary_switches + o.voluntary_switches,
            involuntary_switches: self.involuntary_switches + o.involuntary_switches,
            minor_faults: self.minor_faults + o.minor_faults,
            major_faults: self.major_faults + o.major_faults,
            migrations: both(self.migrations, o.migrations),
            perf_switches: both(self.perf_switches, o.perf_switches),
            perf_migrations: both(self.perf_migrations, o.perf_migrations),
            perf_faults: both(self.perf_faults, o.perf_faults),
            task_clock_ns: both(self.task_clock_ns, o.task_clock_ns),
            cycles: both(self.cycles, o.cycles),
            instructions: both(self.instructions, o.instructions),
            llc_references: both(self.llc_references, o.llc_references),
            llc_misses: both(self.llc_misses, o.llc_misses),
        }
    }

    /// Every thread's counts together; None where any was not counted (a sum
    /// that left one out would read as a cheaper message).
    pub fn sum<'a>(all: impl IntoIterator<Item = Option<&'a Counts>>) -> Option<Counts> {
        let mut total: Option<Counts> = None;
        for c in all {
            let c = c?;
            total = Some(total.map_or(*c, |t| t.plus(c)));
        }
        total
    }
}

impl From<ipcperf_sys::counters::ThreadCounters> for Counts {
    fn from(c: ipcperf_sys::counters::ThreadCounters) -> Self {
        Counts {
            voluntary_switches: c.voluntary_switches,
            involuntary_switches: c.involuntary_switches,
            minor_faults: c.minor_faults,
            major_faults: c.major_faults,
            migrations: c.migrations,
            ..Counts::default()
        }
    }
}

/// One side's CPU time and counts over a series.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cost {
    pub cpu_ns: u64,
    #[serde(flatten)]
    pub counts: Counts,
}

impl From<(u64, Counts)> for Cost {
    fn from((cpu_ns, counts): (u64, Counts)) -> Self {
        Cost { cpu_ns, counts }
    }
}

/// One thread's counters around its series: the kernel's own accounting,
/// and perf's counters where this thread may open them (opened once, by the
/// thread it counts, and read only by that thread). At most
/// [`MAX_PERF_METERS`] meters of a process hold perf counters (eight
/// descriptors each), so that many pairs or clients never run a process out of
/// descriptors; the rest count with the kernel's accounting alone.
#[derive(Debug)]
pub struct Meter {
    perf: Option<ThreadPerf>,
    thread: std::thread::ThreadId,
}

/// Whether perf's counters were asked for (`IPCPERF_PERF_COUNTERS`, set and
/// not empty; a peer process inherits it). Off by default: a per-thread perf
/// counter costs the kernel work at every context switch of the thread it
/// counts, a pipe round trip on one CPU here half as long again
/// (`bench/counters.sh`), so by default each series is counted by the kernel's
/// own accounting alone, which costs its figures nothing.
pub fn perf_wanted() -> bool {
    std::env::var_os("IPCPERF_PERF_COUNTERS").is_some_and(|v| !v.is_empty())
}

/// The most meters of one process that hold perf counters at once.
pub const MAX_PERF_METERS: usize = 4;
static PERF_METERS: AtomicUsize = AtomicUsize::new(0);

impl Drop for Meter {
    fn drop(&mut self) {
        if self.perf.is_some() {
            PERF_METERS.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// A meter's reading before a series.
#[derive(Debug, Clone)]
pub struct Mark {
    counters: ThreadCounters,
    perf: Reading,
}

impl Meter {
    /// A meter for the calling thread (what perf cannot count is left out: the
    /// run's machine state says which, and why).
    pub fn open() -> Meter {
        let wanted = perf_wanted();
        let perf = if PERF_METERS.fetch_add(1, Ordering::SeqCst) < MAX_PERF_METERS && wanted {
            Some(ThreadPerf::open().0).filter(|p| !p.is_empty())
        } else {
            None
        };
        if perf.is_none() {
            PERF_METERS.fetch_sub(1, Ordering::SeqCst);
        }
        Meter {
            perf,
            thread: std::thread::current().id(),
        }
    }

    /// perf's counters, when read by the thread they count.
    fn perf(&self) -> Reading {
        match &self.perf {
            Some(p) if std::thread::current().id() == self.thread => p.read(),
            _ => Reading::new(),
        }
    }

    /// The reading before a series.
    pub fn mark(&self) -> Mark {
        Mark {
            perf: self.perf(),
            counters: ThreadCounters::now(),
        }
    }

    /// What the series since `m` cost this thread: its CPU time (ns), and its
    /// counts.
    pub fn since(&self, m: &Mark) -> (u64, Counts) {
        let c = ThreadCounters::now().since(&m.counters);
        let perf = perfcount::since(&self.perf(), &m.perf);
        let get = |name: &str| perf.iter().find(|(n, _)| *n == name).map(|p| p.1);
        let counts = Counts {
            perf_switches: get("context_switches"),
            perf_migrations: get("cpu_migrations"),
            perf_faults: get("page_faults"),
            task_clock_ns: get("task_clock_ns"),
            cycles: get("cycles"),
            instructions: get("instructions"),
            llc_references: get("llc_references"),
            llc_misses: get("llc_misses"),
            ..Counts::from(c)
        };
        (c.cpu_ns, counts)
    }
}

/// What one message (a block of a stream, a round trip, a set/clear cycle) cost
/// each side: the median over the series that counted it. The writer is the
/// client for round trips, the reader the server; a reader figure is absent
/// where there is no second thread (single mode, solo mechanisms) or it was not
/// counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PerMessage {
    /// Context switches, both kinds.
    pub writer_switches: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader_switches: Option<f64>,
    /// Of those, forced ones (preemptions).
    pub writer_involuntary: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader_involuntary: Option<f64>,
    /// CPU time, ns.
    pub writer_cpu_ns: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader_cpu_ns: Option<f64>,
    /// Migrations between CPUs (absent where the kernel keeps no count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_migrations: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader_migrations: Option<f64>,
    /// Page faults, minor and major.
    pub writer_faults: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader_faults: Option<f64>,
}

impl PerMessage {
    /// Context switches of both sides together.
    pub fn switches(&self) -> f64 {
        self.writer_switches + self.reader_switches.unwrap_or(0.0)
    }
    /// CPU time of both sides together, ns.
    pub fn cpu_ns(&self) -> f64 {
        self.writer_cpu_ns + self.reader_cpu_ns.unwrap_or(0.0)
    }
}
