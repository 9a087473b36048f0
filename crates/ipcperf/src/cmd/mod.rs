//! One file per subcommand.

pub mod advise;
pub mod args;
pub mod clean;
pub mod compare;
pub mod completions;
pub mod db;
pub mod ending;
pub mod export;
pub mod fleet;
pub mod gen;
pub mod history;
pub mod import;
pub mod latency;
pub mod list;
pub mod man;
pub mod matrix;
pub mod pipeline;
pub mod plot;
pub mod report;
pub mod run;
pub mod serve;
pub mod show;
pub mod sink;
pub mod sync;
pub mod topology;
pub mod values;
