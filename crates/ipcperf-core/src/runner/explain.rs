//! The traced series of a case, after its timed ones: round trips with each
//! one's start kept, or a stream's blocks, under the tracing of
//! [`crate::explain::trace`].

use crate::error::Result;
use crate::explain::trace::{Partner, Tracing};
use crate::explain::{ExplainRecord, NOT_TRACED, TRACED_SERIES};
use crate::mechanism::Mechanism;
use crate::plan::CaseSpec;
use crate::record::CaseRecord;
use crate::workload::roundtrip::Recorded;
use crate::workload::roundtrip_session::RoundTripSession;
use crate::workload::stream_session::StreamSession;

/// Blocks a traced stream series takes at most (fewer where the timed series
/// had fewer): within the tracers' buffers at a few events a block.
pub const TRACED_BLOCKS: u64 = 20_000;

/// Keep a traced series' record in the case (the first, or another series of
/// its parts), or why it could not be traced; false: stop tracing.
fn kept(rec: &mut CaseRecord, x: std::result::Result<ExplainRecord, String>) -> bool {
    match x {
        Ok(x) => {
            match rec.explain.as_mut() {
                Some(first) => first.add_series(&x),
                None => rec.explain = Some(Box::new(x)),
            }
            true
        }
        Err(why) => {
            rec.options.insert(NOT_TRACED.into(), why);
            false
        }
    }
}

/// `--explain` of a round-trip case: traced series after the timed ones, one
/// for each of them up to a few (taken in rounds: one a round, in the first
/// few), so that compare can judge each part by their spread.
pub(crate) fn round_trips<M: Mechanism>(
    s: &mut RoundTripSession<M>,
    n: u64,
    budget_ns: u64,
    rec: &mut CaseRecord,
) -> Result<()> {
    if !s.spec.opts.explain || rec.options.contains_key(NOT_TRACED) {
        return Ok(());
    }
    let n = n.min(crate::explain::TRACED_ROUND_TRIPS);
    for _ in 0..(s.spec.repeat as usize).clamp(1, TRACED_SERIES) {
        let x = traced(s, n, budget_ns)?;
        if !kept(rec, x) {
            break;
        }
    }
    Ok(())
}

/// `run --explain`: traced stream series after the timed ones (one for each,
/// up to a few), each side's time per block; the untraced block time (the
/// timed series' median) beside it.
pub(crate) fn streams<M: Mechanism>(
    s: &mut StreamSession<M>,
    spec: &CaseSpec,
    blocks: u64,
    budget_ns: u64,
    rec: &mut CaseRecord,
) -> Result<()> {
    if !spec.opts.explain || rec.options.contains_key(NOT_TRACED) {
        return Ok(());
    }
    let Some(peer) = s.peer() else {
        rec.options.insert(
            NOT_TRACED.into(),
            "one thread writes and reads here (single mode, or a writer alone): there is no \
             other side to trace"
                .into(),
        );
        return Ok(());
    };
    let partner = Partner::of(s.peer_pid(), peer);
    let mut per_block: Vec<u64> = rec
        .series
        .iter()
        .map(|x| x.elapsed_ns / x.blocks.max(1))
        .collect();
    per_block.sort_unstable();
    let (p50, p90) = match per_block.len() {
        0 => (0, 0),
        k => (per_block[(k - 1) / 2], per_block[(k * 9).div_ceil(10) - 1]),
    };
    let n = blocks.min(TRACED_BLOCKS);
    for _ in 0..(rec.series.len()).clamp(1, TRACED_SERIES) {
        let x = match Tracing::open(&spec.placement, partner) {
            Err(why) => Err(why),
            Ok(mut t) => match t.enable() {
                Err(why) => Err(why),
                Ok(()) => {
                    let o = s.series(n, budget_ns);
                    t.disable();
                    let o = o?;
                    let mut x = t.explain_stream((o.start_ns, o.elapsed_ns), n);
                    x.set_untraced(p50, p90);
                    Ok(x)
                }
            },
        };
        if !kept(rec, x) {
            break;
        }
    }
    Ok(())
}

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
