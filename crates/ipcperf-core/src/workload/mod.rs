//! Workloads: the timed loops. Each is generic over the endpoint and the payload
//! treatment, so the hot loop holds the system calls under test and nothing else.

pub mod roundtrip;
pub mod stream;

pub use crate::kind::Workload;
