//! One file per subcommand.

pub mod list;
pub mod run;
