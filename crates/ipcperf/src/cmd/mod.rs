//! One file per subcommand. A command module never imports another: what
//! commands share is in `crate::shared` or the results library.

pub mod advise;
pub mod clean;
pub mod compare;
pub mod completions;
pub mod export;
pub mod fleet;
pub mod gen;
pub mod history;
pub mod import;
pub mod latency;
pub mod list;
pub mod man;
pub mod matrix;
pub mod pattern;
pub mod pipeline;
pub mod plot;
pub mod replay;
pub mod report;
pub mod run;
pub mod serve;
pub mod show;
pub mod sink;
pub mod sync;
pub mod topology;
pub mod trend;
