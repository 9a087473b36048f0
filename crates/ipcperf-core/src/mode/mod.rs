//! The transport: where the two sides of a case run (one thread, two threads, or
//! two processes) and how they talk. It starts a peer thread or process, hands it
//! its job, carries the messages and watches for its death; it knows no workload
//! (the sessions and jobs are `workload`'s).

pub mod process;
pub mod protocol;
pub mod remote;
pub mod serve;
pub mod start;
pub mod thread;
mod token;
pub mod watchdog;

pub use crate::kind::{Mode, Placement};
