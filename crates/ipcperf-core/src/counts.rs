//! What each message costs the machine: one side's counters over a series
//! (`Counts`, kept in each series record) and what they come to per message,
//! each side's median over the series (`PerMessage`, made by
//! `CaseRecord::per_message`).

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
}

impl Counts {
    /// Both kinds of context switch.
    pub fn switches(&self) -> u64 {
        self.voluntary_switches + self.involuntary_switches
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
        }
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
