//! The names users give advise's patterns and figures (`--pattern`, `--latency`).

use super::{Figure, Pattern};

impl crate::choice::Choice for Pattern {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (
            Pattern::RequestReply,
            "request-reply",
            "Round trips: a request and its answer",
        ),
        (
            Pattern::Stream,
            "stream",
            "A one-way flow of blocks (throughput)",
        ),
        (
            Pattern::Notify,
            "notify",
            "A wake-up with (almost) no payload: one side tells the other something happened",
        ),
        (
            Pattern::FanIn,
            "fan-in",
            "Many clients, one server answering each (ranked over every request)",
        ),
        (
            Pattern::FanOut,
            "fan-out",
            "One writer, every block to each of many readers (ranked by the slowest reader)",
        ),
    ];
}

impl crate::choice::Choice for Figure {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (Figure::P50, "p50", ""),
        (Figure::P99, "p99", ""),
        (Figure::P999, "p99.9", ""),
    ];
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::choice::Choice;
        f.write_str(self.choice_name().unwrap_or("replay"))
    }
}

impl std::fmt::Display for Figure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
