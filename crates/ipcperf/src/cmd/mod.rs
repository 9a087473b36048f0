//! One file per subcommand.

pub mod gen;
pub mod list;
pub mod pipeline;
pub mod run;
pub mod sink;
pub mod sync;
