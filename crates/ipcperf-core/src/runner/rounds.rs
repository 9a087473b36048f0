//! Cases taken in rounds (see [`RunEnv::interleave`]): round `i` takes series
//! `i` of every case that has one, each on a set-up of its own.

use super::{
    fail_record, gone_remote, in_rounds, run_case, run_inner, run_latency_case, run_latency_inner,
    steps, RoundTripTotals,
};
use crate::error::Result;
use crate::kind::Workload;
use crate::mechanism::with_mechanism;
use crate::observer::Observer;
use crate::plan::{CaseSpec, Length, RunEnv};
use crate::record::{CaseRecord, SeriesRecord};

/// A case between rounds: its record so far, the series length its first round
/// calibrated, its round trips so far, and whether it is over (every series
/// taken, or refused or failed).
struct InRounds {
    rec: CaseRecord,
    blocks: u64,
    totals: Option<RoundTripTotals>,
    taken: u32,
    over: bool,
}

/// One round of a case: its first series (checks, set-up, warm-up and
/// calibration, as a case of one series), or a later one (set up afresh, warmed
/// up, and the first round's count of blocks or round trips).
type Round = fn(&CaseSpec, &RunEnv, &mut dyn Observer, &mut InRounds) -> Result<()>;

fn round_spec(spec: &CaseSpec, st: &InRounds) -> CaseSpec {
    let mut one = spec.clone();
    one.repeat = 1;
    // `--explain`: a traced series in each of the first rounds.
    one.opts.explain &= (st.taken as usize) < crate::explain::TRACED_SERIES;
    // The idle probe: once, in the first round.
    one.opts.idle_probe &= st.taken == 0;
    if st.taken > 0 {
        one.length = Length::Count { blocks: st.blocks };
    }
    one
}

fn stream_round(
    spec: &CaseSpec,
    env: &RunEnv,
    obs: &mut dyn Observer,
    st: &mut InRounds,
) -> Result<()> {
    let one = round_spec(spec, st);
    st.blocks = with_mechanism!(spec.mechanism, M => run_inner::<M>(&one, env, obs, &mut st.rec))?;
    Ok(())
}

fn latency_round(
    spec: &CaseSpec,
    env: &RunEnv,
    obs: &mut dyn Observer,
    st: &mut InRounds,
) -> Result<()> {
    let one = round_spec(spec, st);
    st.blocks = with_mechanism!(spec.mechanism, M => run_latency_inner::<M>(
        &one, env, obs, &mut st.rec, &mut st.totals
    ))?;
    Ok(())
}

/// Every case, its series taken in rounds (see [`RunEnv::interleave`]): round
/// `i` takes series `i` of every case that has one. Each case is reported done
/// in the plan's order, as soon as it and every case before it are over.
fn run_rounds(
    specs: &[CaseSpec],
    env: &RunEnv,
    obs: &mut dyn Observer,
    workload: Workload,
    round: Round,
    whole: fn(&CaseSpec, &RunEnv, &mut dyn Observer) -> CaseRecord,
) -> Vec<CaseRecord> {
    let total = steps(specs, env);
    let rounds = specs.iter().map(|s| s.repeat).max().unwrap_or(1);
    let mut states: Vec<InRounds> = specs
        .iter()
        .map(|s| {
            let mut rec = CaseRecord::for_spec(s);
            rec.workload = workload;
            InRounds {
                rec,
                blocks: 0,
                totals: None,
                taken: 0,
                over: false,
            }
        })
        .collect();
    let mut done = 0usize;
    let mut reported = 0usize;
    let mut out: Vec<Option<CaseRecord>> = vec![None; specs.len()];
    // Steps from the start, so that what counts them says so before the first.
    obs.progress(0, total);
    for _ in 0..rounds {
        for (i, spec) in specs.iter().enumerate() {
            let st = &mut states[i];
            if st.over {
                continue;
            }
            obs.case_started(spec, i, specs.len());
            if !in_rounds(spec) {
                // Run whole; reported below with the others.
                let rec = whole(spec, env, &mut Reported(obs));
                st.rec = rec;
                st.over = true;
                done += 1;
            } else {
                let r = round(spec, env, obs, st);
                st.taken += 1;
                done += 1;
                match r {
                    Err(e) => {
                        fail_record(&mut st.rec, gone_remote(env, e));
                        st.over = true;
                        done += (spec.repeat - st.taken) as usize;
                    }
                    Ok(()) if st.taken == spec.repeat => {
                        st.over = true;
                        if let Err(e) = st.totals.take().map_or(Ok(()), |t| t.finish(&mut st.rec)) {
                            fail_record(&mut st.rec, e);
                        } else {
                            st.rec.summarize();
                        }
                    }
                    Ok(()) => {}
                }
            }
            obs.progress(done, total);
            while reported < specs.len() && states[reported].over {
                let rec = std::mem::replace(
                    &mut states[reported].rec,
                    CaseRecord::for_spec(&specs[reported]),
                );
                obs.case_done(&rec);
                out[reported] = Some(rec);
                reported += 1;
            }
        }
    }
    out.into_iter()
        .zip(specs)
        .map(|(r, s)| r.unwrap_or_else(|| CaseRecord::for_spec(s)))
        .collect()
}

/// Passes every event on but `case_done`, which the rounds report in order.
struct Reported<'a>(&'a mut dyn Observer);

impl Observer for Reported<'_> {
    fn series_done(&mut self, spec: &CaseSpec, series: &SeriesRecord) {
        self.0.series_done(spec, series);
    }
}

/// Every stream case, in rounds.
pub(super) fn streams(specs: &[CaseSpec], env: &RunEnv, obs: &mut dyn Observer) -> Vec<CaseRecord> {
    run_rounds(specs, env, obs, Workload::Stream, stream_round, run_case)
}

/// Every round-trip case, in rounds.
pub(super) fn round_trips(
    specs: &[CaseSpec],
    env: &RunEnv,
    obs: &mut dyn Observer,
) -> Vec<CaseRecord> {
    run_rounds(
        specs,
        env,
        obs,
        Workload::RoundTrip,
        latency_round,
        run_latency_case,
    )
}
