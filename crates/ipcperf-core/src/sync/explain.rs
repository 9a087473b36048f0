//! `sync --explain`: after the timed series, one traced series of set/clear
//! cycles, each cut into its parts as a round trip is (this side's set, the
//! partner's wake-up and turn, its set back, this side's wake-up).

use super::{ends, exchange, SyncSpec};
use crate::error::Result;
use crate::explain::trace::{Partner, Tracing};
use crate::explain::{ExplainRecord, TRACED_ROUND_TRIPS};
use crate::mode::protocol::PeerHandle;
use crate::record::CaseRecord;

/// One traced series of set/clear cycles against the started partner (`pid`: a
/// process partner's). Ok(Err(why)): it could not be traced here; the figures
/// stand as measured.
pub(crate) fn set_clear<C: ends::Channel>(
    c: &mut C,
    peer: &mut dyn PeerHandle,
    spec: &SyncSpec,
    pid: Option<i32>,
) -> Result<std::result::Result<ExplainRecord, String>> {
    let partner = Partner::of(pid.and_then(|p| u32::try_from(p).ok()), &*peer);
    let mut t = match Tracing::open(&spec.placement, partner) {
        Ok(t) => t,
        Err(why) => return Ok(Err(why)),
    };
    let n = TRACED_ROUND_TRIPS;
    let mut samples = Vec::with_capacity(n as usize);
    let mut origin = 0u64;
    if let Err(why) = t.enable() {
        return Ok(Err(why));
    }
    let r = exchange(c, peer, n, Some((&mut samples, &mut origin)));
    t.disable();
    r?;
    let clock = ipcperf_sys::clock::clock_cost_ns(10_001);
    let mut at = origin;
    let cycles = samples.iter().map(|&s| {
        let start = at;
        at += s;
        (start, s)
    });
    Ok(Ok(t.explain(cycles, clock)))
}

/// Keep what the traced series found in the case (beside the untraced cycles'
/// p50 and p90, when they were sampled), or why it could not be traced.
pub(crate) fn record(
    rec: &mut CaseRecord,
    x: Option<std::result::Result<ExplainRecord, String>>,
    untraced: Option<(u64, u64)>,
) {
    match x {
        Some(Ok(mut x)) => {
            let (p50, p90) = untraced.unwrap_or((0, 0));
            x.set_untraced(p50, p90);
            rec.explain = Some(Box::new(x));
        }
        Some(Err(why)) => {
            rec.options.insert(crate::explain::NOT_TRACED.into(), why);
        }
        None => {}
    }
}
