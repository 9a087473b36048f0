//! The watcher of untimed waits: a [`ProcessWatch`] asleep on the other
//! process's pidfd arms no timer and wakes nobody while both sides live; when
//! the other process ends, it marks the waiting end's other side dead and gives
//! it a token, and the wait returns an error at once.

use crate::error::Result;
use ipcperf_sys::signal::ProcessWatch;

/// Watches one process until dropped.
pub struct DeathWatch(#[allow(dead_code)] ProcessWatch);

impl DeathWatch {
    /// Start watching `pid`; `poison` runs once if it ends before the watch is
    /// dropped, in a thread whose descriptor table holds only `keep` of ours.
    pub fn start(pid: i32, keep: &[i32], poison: Box<dyn Fn() + Send>) -> Result<DeathWatch> {
        Ok(DeathWatch(ProcessWatch::start(
            pid,
            keep,
            Box::new(poison),
        )?))
    }
}
