//! Workloads: the timed loops. Each is generic over the endpoint and the payload
//! treatment, so the hot loop holds the system calls under test and nothing else.

pub mod roundtrip;
pub mod stream;

use serde::{Deserialize, Serialize};

/// What a case measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// One-way throughput of a byte stream.
    Stream,
    /// Synchronization primitives: request/release and set/clear cycles.
    Sync,
    /// Round-trip latency: S bytes there, the same S bytes back, each timed.
    RoundTrip,
}

impl Workload {
    pub fn name(self) -> &'static str {
        match self {
            Workload::Stream => "stream",
            Workload::Sync => "sync",
            Workload::RoundTrip => "round-trip",
        }
    }
}
