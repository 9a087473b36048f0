//! Workloads: the timed loops (each generic over the endpoint and the payload
//! treatment, so the hot loop holds the system calls under test and nothing else),
//! the sessions that set a case up and run its series (generic over the
//! mechanism), and the peer's jobs.

pub mod duplex;
pub mod fanin;
pub mod jobs;
pub mod replay;
pub mod replay_peer;
pub mod replay_session;
pub mod roundtrip;
pub mod roundtrip_session;
pub mod stream;
pub mod stream_session;

pub use crate::kind::Workload;
