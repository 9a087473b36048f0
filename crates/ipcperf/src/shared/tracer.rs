//! `--tracer`: which tracer `--explain` uses, an option of the commands that
//! explain (run, latency, matrix, sync), set once for the process.

use clap::Args;

/// The tracer of `--explain`.
#[derive(Args, Debug, Clone)]
pub struct TracerArg {
    /// The tracer of --explain: auto (a short probe on the case's CPUs keeps
    /// the one that sees more of the wake-ups, else the cheaper), perf
    /// (perf_event_open) or tracefs (a private ftrace instance, removed after).
    #[arg(long, value_name = "TRACER", default_value = "auto", value_parser = ["auto", "perf", "tracefs"], requires = "explain")]
    pub tracer: String,
}

impl TracerArg {
    /// Make it the process's choice (the explain code reads it there).
    pub fn apply(&self) {
        if let Some(t) = ipcperf_core::explain::tracer::TracerChoice::parse(&self.tracer) {
            ipcperf_core::explain::tracer::set_tracer(t);
        }
    }
}
