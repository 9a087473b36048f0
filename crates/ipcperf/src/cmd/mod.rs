//! One file per subcommand.

pub mod clean;
pub mod gen;
pub mod latency;
pub mod list;
pub mod pipeline;
pub mod run;
pub mod sink;
pub mod sync;
