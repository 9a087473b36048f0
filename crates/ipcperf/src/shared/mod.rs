//! What two or more commands share: argument groups and value parsers, the
//! history's flags and the saver, the ending of a measuring command. A command
//! module imports these and the results library, never another command module.

pub mod applies;
pub mod args;
pub mod choice;
pub mod db;
pub mod ending;
pub mod gen_sink;
pub mod measure;
pub mod peer;
pub mod plan;
pub mod remeasure;
pub mod replay;
pub mod round_trip;
pub mod stream;
pub mod tracer;
pub mod values;
pub mod waits;

/// What a measuring command runs, its inputs checked: the cases in order, the
/// load beside them (`--background`, held until dropped) and what they share.
pub type Prepared = (
    Vec<ipcperf_core::plan::CaseSpec>,
    Option<crate::background::Hogs>,
    ipcperf_core::plan::RunEnv,
);
