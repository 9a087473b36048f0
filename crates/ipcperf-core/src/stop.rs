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
        count_retaken(options, 1);
    }
    take()
}

/// How many series or calibrations of a case were taken again after a stop.
pub fn retaken(options: &BTreeMap<String, String>) -> u32 {
    options
        .get(RETAKEN_AFTER_STOP)
        .and_then(|v| v.parse::<u32>().ok())
        .unwrap_or(0)
}

/// Count `n` more taken again (none: the case says nothing).
pub fn count_retaken(options: &mut BTreeMap<String, String>, n: u32) {
    if n > 0 {
        let total = retaken(options) + n;
        options.insert(RETAKEN_AFTER_STOP.into(), total.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// None taken again leaves the case saying nothing; counts add up.
    #[test]
    fn retakes_are_counted_and_none_is_not_said() {
        let mut o = BTreeMap::new();
        count_retaken(&mut o, 0);
        assert!(o.is_empty());
        count_retaken(&mut o, 2);
        count_retaken(&mut o, 1);
        assert_eq!(o[RETAKEN_AFTER_STOP], "3");
        assert_eq!(retaken(&o), 3);
    }
}
