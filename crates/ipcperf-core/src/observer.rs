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
}

/// An observer that ignores everything.
pub struct Quiet;
impl Observer for Quiet {}
