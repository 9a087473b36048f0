//! A run stopped and continued (Ctrl-Z then `fg`, SIGSTOP): every clock we time
//! with counts a stop as time passed, so what held one is taken again.

use crate::error::Result;
use std::collections::BTreeMap;

/// The fact a case keeps when a stop fell in its calibration or a series, which
/// was then taken again: how many times.
pub const RETAKEN_AFTER_STOP: &str = "retaken_after_stop";

/// Take a series (or a calibration, or a whole measurement) in which the process
/// was not stopped: one that held a stop is taken again (up to 3 times; the fourth
/// is kept as it is), each retake counted in the case's `options` as [`RETAKEN_AFTER_STOP`].
pub fn unstopped<T>(
    options: &mut BTreeMap<String, String>,
    mut take: impl FnMut() -> Result<T>,
) -> Result<T> {
    for _ in 0..3 {
        let mark = ipcperf_sys::signal::continues();
        let o = take()?;
        if ipcperf_sys::signal::continues() == mark {
            return Ok(o);
        }
        let n = options
            .get(RETAKEN_AFTER_STOP)
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0);
        options.insert(RETAKEN_AFTER_STOP.into(), (n + 1).to_string());
    }
    take()
}
