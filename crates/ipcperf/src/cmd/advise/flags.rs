//! What `advise`'s traffic flags default to, and which traffic each applies to:
//! one given where it changes nothing is bad input (it was dropped without a
//! word: `--traffic stream --fan 8` measured the stream alone).

use super::AdviseArgs;
use crate::advise::{Figure, Pattern};
use crate::fail::Fail;

/// The most CPUs a budget may name: Linux's largest NR_CPUS on x86.
const MOST_CPUS: f64 = 8192.0;

impl AdviseArgs {
    /// Clients of a fan-in, readers of a fan-out.
    pub(super) fn fans(&self) -> u32 {
        self.fan.unwrap_or(4)
    }

    /// The round-trip figure that decides.
    pub(super) fn figure(&self) -> Figure {
        self.latency.unwrap_or(Figure::P99)
    }

    /// `--fan` only for fan-in and fan-out, `--sizes` not for notify,
    /// `--latency` only where round trips are ranked (not a stream's or
    /// fan-out's throughput).
    pub(super) fn check_applies(&self) -> Result<(), Fail> {
        // Above 0, and a count a machine has (1e300 was taken, and printed in
        // the answer's title in 301 digits).
        if self
            .cpu_budget
            .is_some_and(|b| !(b > 0.0 && b <= MOST_CPUS))
        {
            return Err(Fail::usage(
                "--cpu-budget: a number of CPUs above 0, at most 8192 (0.5, 1, 2)",
            ));
        }
        let replayed = self.pattern_file.is_some() || self.source.sizes.is_some();
        let traffic = if replayed {
            "a replayed pattern".to_string()
        } else {
            format!("--traffic {}", self.pattern)
        };
        if self.fan.is_some()
            && (replayed || !matches!(self.pattern, Pattern::FanIn | Pattern::FanOut))
        {
            return Err(Fail::usage(format!(
                "--fan applies to --traffic fan-in (clients) and fan-out (readers), not to {traffic}"
            )));
        }
        // Notify ranks each mechanism at the smallest message it carries
        // (eventfd 8 bytes, signal 4, others 1): a size given went to the
        // others only, 64 KiB pipes ranked against 4-byte signals.
        if self.size.is_some() && !replayed && self.pattern == Pattern::Notify {
            return Err(Fail::usage(
                "--sizes does not apply to --traffic notify, which sends the smallest message \
                 each mechanism carries (1 byte, eventfd 8, signal 4); for messages of a size, \
                 --traffic request-reply --sizes N",
            ));
        }
        if self.latency.is_some()
            && !replayed
            && matches!(self.pattern, Pattern::Stream | Pattern::FanOut)
        {
            return Err(Fail::usage(format!(
                "--latency applies to round trips: {traffic} is ranked by throughput"
            )));
        }
        Ok(())
    }
}
