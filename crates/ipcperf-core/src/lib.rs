//! ipcperf-core: the measuring library.
//!
//! Mechanisms (`mechanism`) open endpoints and know nothing of timing; workloads
//! (`workload`) are the timed loops, generic over an endpoint so the hot loop is
//! monomorphized; modes (`mode`) place the two sides in one thread, two threads or
//! two processes; `runner` turns a [`plan::CaseSpec`] into a [`record::CaseRecord`]
//! and reports progress to an [`observer::Observer`]. Nothing here prints.

pub mod error;
pub mod gen;
pub mod latency;
pub mod machine;
pub mod mechanism;
pub mod mode;
pub mod observer;
pub mod payload;
pub mod plan;
pub mod record;
pub mod runner;
pub mod stats;
pub mod sync;
pub mod workload;

pub use error::{Error, Result};
