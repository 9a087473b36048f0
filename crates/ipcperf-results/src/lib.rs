//! ipcperf's results: what happens to the records `ipcperf-core` makes. The
//! store (SQLite, PostgreSQL), the exporters (tables, JSON, CSV, markdown,
//! OpenMetrics), charts, the HTML report, verdicts (compare, fleet, trend),
//! advice, and reading an application's traffic (pattern). No command line
//! here: the `ipcperf` binary parses arguments and calls in.

#![forbid(unsafe_code)]

pub mod advise;
pub mod chart;
pub mod choice;
pub mod compare;
pub mod console;
pub mod document;
pub mod export;
pub mod fail;
pub mod fleet;
pub mod import;
pub mod measured;
pub mod pattern;
pub mod report;
pub mod store;
#[doc(hidden)]
pub mod testdata;
pub mod units;
