//! The flags every measuring command takes alike: where the two sides run, how
//! many series, and how long each lasts.

use clap::Args;

use crate::shared::values::{parse_pin, PinArg};
use crate::units;

/// What every command that measures two sides takes alike (`run`, `latency`,
/// `sync`, `replay`; `advise` plans them for you, `matrix` takes every pair of
/// `--cpus`): where the two sides run and how many series each case is
/// measured in.
#[derive(Args, Debug, Clone)]
pub struct MeasureArgs {
    /// Pin the two sides: `A,B` CPU numbers (0,0 same CPU), a placement class
    /// (same-cpu, smt-sibling, shared-l2, shared-l3, other-l3, other-numa,
    /// other-socket: its pair as `ipcperf topology` shows), `all` (one pair of every
    /// class this machine has), `measured:closest|farthest|median` (by `topology
    /// --measure`), `same`, `cross` or `none`. Repeat to measure several placements
    /// side by side; every result names both CPUs and their class. Default:
    /// across the first two CPUs (`cross`; one CPU: on it), and for `run`'s
    /// default suite on one CPU and across two; `none` leaves the sides to the
    /// scheduler.
    #[arg(long, value_parser = parse_pin)]
    pub pin: Vec<PinArg>,

    /// Series per case, each timed on its own (a replay's passes; a stream's
    /// summary is their median, min and max; round trips all go into one
    /// histogram). `compare` judges a change from their spread: more series,
    /// smaller changes it can call.
    #[arg(long, short, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
}

/// How long each series of `run` and `latency` lasts: a duration, or a count of
/// blocks (round trips) instead; declared once so the two cannot drift.
#[derive(Args, Debug, Clone)]
pub struct SeriesArgs {
    /// Length of each series (2s, 500ms); the count is calibrated in the warm-up.
    /// Default: 10 s of series shared by the whole plan (cases × --repeat), each
    /// 40ms to 600ms (one case: 600ms; the default suite: 40ms); a pair of
    /// `matrix`: 100ms.
    #[arg(long, short, value_parser = units::parse_series_duration, conflicts_with = "count", allow_hyphen_values = true)]
    pub duration: Option<std::time::Duration>,

    /// Blocks (`run`) or round trips (`latency`, `matrix`: each pair's) per
    /// series, instead of a duration: 1 to 2^26 (67,108,864; `10k` = 10,000).
    #[arg(long, short = 'n', value_parser = units::parse_series_count)]
    pub count: Option<u64>,
}
