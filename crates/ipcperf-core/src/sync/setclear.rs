//! Set/clear against a started partner: each run of cycles timed, checked with
//! the partner's own account, and counted on both sides (each side's CPU time,
//! context switches and faults over exactly its loop: `counts::Meter`).

use super::{calibrate, ends, loops, SyncSpec};
use crate::counts::{Cost, Meter};
use crate::error::{Error, Result};
use crate::mode::protocol::{FromPeer, PeerHandle, ToPeer};
use crate::record::{CycleLatency, SyncSeries};
use ends::NopChannel;

/// One set/clear run of `n` cycles against the partner: its time, checked with the
/// partner's own account.
pub(super) fn exchange<C: ends::Channel>(
    c: &mut C,
    peer: &mut dyn PeerHandle,
    n: u64,
    samples: Option<(&mut Vec<u64>, &mut u64)>,
) -> Result<u64> {
    exchange_counted(c, peer, n, samples, None).map(|r| r.0)
}

/// [`exchange`], with this side's cost over its loop where `meter` is given,
/// and the partner's as it sent it.
fn exchange_counted<C: ends::Channel>(
    c: &mut C,
    peer: &mut dyn PeerHandle,
    n: u64,
    samples: Option<(&mut Vec<u64>, &mut u64)>,
    meter: Option<&Meter>,
) -> Result<(u64, Option<Cost>, Option<Cost>)> {
    peer.send(ToPeer::Go { bytes: n })?;
    let mark = meter.map(Meter::mark);
    let r = match samples {
        Some((s, origin)) => loops::ping_sampled(c, n, s, origin),
        None => loops::ping(c, n),
    };
    let ours = meter
        .zip(mark.as_ref())
        .map(|(m, k)| Cost::from(m.since(k)));
    let ms = 2 * ends::WAIT_LIMIT.as_millis() as i32;
    let elapsed = match r {
        Ok(t) => t,
        Err(e) => {
            // The partner's own account of what went wrong beats our time-out.
            return Err(match peer.recv(ms) {
                Ok(FromPeer::Failed { message }) => Error::Peer(message),
                Err(pe @ Error::Peer(_)) => pe,
                _ => e,
            });
        }
    };
    match peer.recv(ms)? {
        FromPeer::Done { cpu_ns, counts, .. } => {
            Ok((elapsed, ours, counts.map(|c| Cost::from((cpu_ns, c)))))
        }
        FromPeer::Failed { message } => Err(Error::Peer(message)),
        other => Err(Error::Peer(format!("unexpected message {other:?}"))),
    }
}

/// Set/clear against a started partner: calibrated series each with its tare, then
/// one series timed cycle by cycle for the percentiles.
pub fn measure_set_clear<C: ends::Channel>(
    c: &mut C,
    peer: &mut dyn PeerHandle,
    spec: &SyncSpec,
) -> Result<(Vec<SyncSeries>, Option<CycleLatency>)> {
    let n = calibrate(spec.series_ns, |n| exchange(c, peer, n, None))?;
    let mut nop = NopChannel;
    let meter = Meter::open();
    let mut v = Vec::new();
    for _ in 0..spec.repeat {
        let (elapsed_ns, cost, partner_cost) = exchange_counted(c, peer, n, None, Some(&meter))?;
        let tare_ns = loops::ping(&mut nop, n)?;
        v.push(SyncSeries {
            cycles: n,
            elapsed_ns,
            tare_ns,
            atomic_ns: None,
            cost,
            partner_cost,
        });
    }
    let lat = if spec.latency_samples > 0 {
        let k = (n as usize).clamp(1, spec.latency_samples);
        let mut s = Vec::with_capacity(k);
        let clock = ipcperf_sys::clock::clock_cost_ns(10_001);
        exchange(c, peer, k as u64, Some((&mut s, &mut 0)))?;
        Some(latency_summary(&s, clock))
    } else {
        None
    };
    // Exactly n tokens went each way: none is left over on our side.
    if c.try_take()? {
        return Err(Error::Invalid(format!(
            "{}: a token too many came back",
            spec.primitive.name()
        )));
    }
    Ok((v, lat))
}

/// Percentiles of per-cycle samples with the clock's cost subtracted (never below
/// 0), through the same histogram and percentiles as round trips.
pub fn latency_summary(s: &[u64], clock_cost_ns: u64) -> CycleLatency {
    let mut h = crate::latency::new_histogram();
    crate::latency::record_samples(&mut h, s, clock_cost_ns);
    let p = crate::latency::percentiles(&h);
    CycleLatency {
        samples: p.samples,
        clock_cost_ns,
        p50_ns: p.p50_ns,
        p90_ns: p.p90_ns,
        p99_ns: p.p99_ns,
        p999_ns: p.p999_ns,
        max_ns: p.max_ns,
        beyond: p.beyond,
    }
}
