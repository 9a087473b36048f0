//! What `gen`, `sink` and `pipeline` share: a fresh seed, and what the sink says
//! it saw.

use serde::{Deserialize, Serialize};

/// A seed no two runs are likely to share (std's per-process random hash keys).
pub fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(ipcperf_sys::clock::now_ns());
    h.finish()
}

/// What the sink saw, as `--format json` writes it on stderr.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SinkReport {
    pub bytes: u64,
    pub reads: u64,
    /// From just before the first read to end of file.
    pub seconds: f64,
    /// 10^6 bytes per second; none where nothing came (end of file at once: no
    /// rate was measured, and 0 would read as a slow pipe).
    pub mb_per_sec: Option<f64>,
    /// The seed every byte was checked against, if any.
    pub verified_seed: Option<u64>,
}
