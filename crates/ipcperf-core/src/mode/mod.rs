//! Where the two sides of a case run: one thread, two threads, or two processes;
//! and on which CPUs (placement).

pub mod process;
pub mod protocol;
pub mod roundtrip;
pub mod session;
pub mod start;
pub mod thread;
pub mod watchdog;

pub use crate::kind::{Mode, Placement};
