//! ipcperf-core: the measuring library.
//!
//! Mechanisms (`mechanism`: one type each, one registry) open ends and know
//! nothing of timing; workloads (`workload`) hold the timed loops, generic over an
//! end so the hot loop is monomorphized, the sessions that set a case up and run
//! its series, and the peer's jobs; the transport (`mode`) starts the other side in
//! a thread or a process and carries its messages; `runner` turns a
//! [`plan::CaseSpec`] into a [`record::CaseRecord`] through one calibration and
//! reports progress to an [`observer::Observer`]; `topology` says where CPUs sit;
//! `peer` is a peer process's entry. The plain types they all name live in `kind`,
//! at the bottom, so no module imports one that imports it back (tests/layout.rs in
//! the binary checks). Nothing here prints.

#![forbid(unsafe_code)]

pub mod c2c;
pub mod calibrate;
pub mod cgroup;
pub mod conformance;
pub mod counts;
pub mod crossing;
pub mod error;
pub mod explain;
pub mod gen;
pub mod idle;
pub mod kind;
pub mod latency;
pub mod machine;
pub mod machine_state;
pub mod mechanism;
pub mod mode;
pub mod namespace;
pub mod observer;
pub mod orphans;
pub mod payload;
pub mod peer;
pub mod plan;
pub mod record;
pub mod runner;
pub mod stats;
pub mod stop;
pub mod sync;
mod sysfs;
pub mod topology;
pub mod workload;

pub use error::{Error, Result};
/// Whether Ctrl-C (SIGTERM, SIGHUP) is being handled: the process is about to
/// exit, its named objects removed under the case that was running, which then
/// fails of that (EIDRM) and is neither a result nor a failure to report.
pub use ipcperf_sys::signal::interrupted;
