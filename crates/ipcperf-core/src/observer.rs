//! Progress events from the runner. Every method defaults to doing nothing; the
//! binary's console observer draws progress bars and saves records as they come.

use crate::plan::CaseSpec;
use crate::record::{CaseRecord, SeriesRecord};

pub trait Observer {
    /// Case `index` (from 0) of `total` starts.
    fn case_started(&mut self, _spec: &CaseSpec, _index: usize, _total: usize) {}
    /// One kept series finished.
    fn series_done(&mut self, _spec: &CaseSpec, _series: &SeriesRecord) {}
    /// A case finished (ran, was refused, or failed).
    fn case_done(&mut self, _record: &CaseRecord) {}
    /// Series taken in rounds: `done` of `total` steps (a step is one case's
    /// series in one round, or a whole case that is not taken in rounds).
    fn progress(&mut self, _done: usize, _total: usize) {}
}

/// An observer that ignores everything.
pub struct Quiet;
impl Observer for Quiet {}
