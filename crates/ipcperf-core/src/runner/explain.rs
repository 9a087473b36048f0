//! The traced series of a round-trip case: one series of round trips with each
//! one's start kept, under the tracing of [`crate::explain::trace`].

use crate::error::Result;
use crate::explain::trace::{Partner, Tracing};
use crate::explain::ExplainRecord;
use crate::mechanism::Mechanism;
use crate::workload::roundtrip::Recorded;
use crate::workload::roundtrip_session::RoundTripSession;

/// Run one traced series of `n` round trips on `s` and cut it into parts.
/// Ok(Err(why)): it could not be traced (no rights, no tracefs, an event
/// missing); the case's figures stand as measured. Err: the series failed.
pub(crate) fn traced<M: Mechanism>(
    s: &mut RoundTripSession<M>,
    n: u64,
    budget_ns: u64,
) -> Result<std::result::Result<ExplainRecord, String>> {
    let partner = Partner::of(s.peer_pid(), &*s.peer);
    let mut t = match Tracing::open(&s.spec.placement, partner) {
        Ok(t) => t,
        Err(why) => return Ok(Err(why)),
    };
    let mut rec = Recorded::new(n);
    if let Err(why) = t.enable() {
        return Ok(Err(why));
    }
    let outcome = s.recorded_series(n, budget_ns, &mut rec);
    t.disable();
    let outcome = outcome?;
    if outcome.ping.lost > 0 {
        return Ok(Err(format!(
            "{} of the traced round trips were lost: the parts need every one",
            outcome.ping.lost
        )));
    }
    let cycles = rec
        .origins
        .iter()
        .map(|c| c.get())
        .zip(s.samples.iter().copied());
    Ok(Ok(t.explain(cycles, s.clock_cost_ns)))
}
