//! Runs cases: warm-up and calibration, then the kept series, into a record.

use ipcperf_sys::clock::now_ns;

use crate::error::{Error, Result};
use crate::mode::session::{SeriesOutcome, StreamSession};
use crate::observer::Observer;
use crate::plan::{CaseSpec, Length, RunEnv};
use crate::record::{CaseRecord, CaseStatus, SeriesRecord};

/// How long the warm-up aims to run.
fn warmup_target_ns(spec: &CaseSpec) -> u64 {
    match spec.length {
        Length::Duration { ns } => (ns / 4).clamp(20_000_000, 250_000_000),
        Length::Count { .. } => 50_000_000,
    }
}

/// What calibration learned: blocks per kept series and the time one should take.
struct Calibration {
    blocks: u64,
    expected_ns: u64,
    stall_ns: u64,
}

impl Calibration {
    /// Time allowed to a kept series before its peer is declared stuck.
    fn budget_ns(&self) -> u64 {
        self.stall_ns
            .saturating_add(self.expected_ns.saturating_mul(3))
    }
}

/// Warm up with uncounted series of growing length until one lasts long enough to
/// give a rate (never more blocks than a counted series has); then size the kept
/// series from that rate.
fn calibrate(s: &mut StreamSession, spec: &CaseSpec, stall_ns: u64) -> Result<Calibration> {
    let target = warmup_target_ns(spec);
    let cap = match spec.length {
        Length::Count { blocks } => blocks,
        Length::Duration { .. } => 1 << 40,
    };
    let mut blocks = 1u64;
    loop {
        let o = s.series(blocks, stall_ns)?;
        if o.elapsed_ns >= target || blocks >= cap {
            let per_block = o.elapsed_ns as f64 / blocks as f64;
            let kept = match spec.length {
                Length::Count { blocks } => blocks,
                Length::Duration { ns } => ((ns as f64 / per_block) as u64).max(1),
            };
            return Ok(Calibration {
                blocks: kept,
                expected_ns: (kept as f64 * per_block) as u64,
                stall_ns,
            });
        }
        let grow = (target as f64 / o.elapsed_ns as f64 * 1.2).clamp(2.0, 64.0);
        blocks = ((blocks as f64 * grow) as u64).max(blocks + 1).min(cap);
    }
}

fn keep(
    rec: &mut CaseRecord,
    spec: &CaseSpec,
    blocks: u64,
    o: SeriesOutcome,
    obs: &mut dyn Observer,
) {
    let s = SeriesRecord {
        blocks,
        bytes: blocks * spec.block_size as u64,
        elapsed_ns: o.elapsed_ns,
        writer_cpu_ns: o.writer_cpu_ns,
        reader_cpu_ns: o.reader_cpu_ns,
    };
    obs.series_done(spec, &s);
    rec.series.push(s);
    rec.placement.seen_writer_cpu = o.writer_cpu;
    rec.placement.seen_reader_cpu = o.reader_cpu;
}

fn run_inner(
    spec: &CaseSpec,
    env: &RunEnv,
    obs: &mut dyn Observer,
    rec: &mut CaseRecord,
) -> Result<()> {
    if spec.repeat == 0 {
        return Err(Error::Invalid("--repeat 0".into()));
    }
    let mut s = StreamSession::open(spec, env)?;
    rec.options.extend(s.facts.drain(..));
    let cal = calibrate(&mut s, spec, env.stall_ns)?;
    let blocks = cal.blocks;
    if !spec.include_setup {
        for _ in 0..spec.repeat {
            let o = s.series(blocks, cal.budget_ns())?;
            keep(rec, spec, blocks, o, obs);
        }
        return s.close();
    }
    s.close()?;
    for _ in 0..spec.repeat {
        let t0 = now_ns();
        let mut s = StreamSession::open(spec, env)?;
        let mut o = s.series(blocks, cal.budget_ns())?;
        s.close()?;
        o.elapsed_ns = now_ns() - t0;
        keep(rec, spec, blocks, o, obs);
    }
    Ok(())
}

/// Run one case. Never fails: a refusal or failure is recorded with its reason.
pub fn run_case(spec: &CaseSpec, env: &RunEnv, obs: &mut dyn Observer) -> CaseRecord {
    let mut rec = CaseRecord::for_spec(spec);
    match run_inner(spec, env, obs, &mut rec) {
        Ok(()) => rec.summarize(),
        Err(e) => {
            rec.status = match e {
                Error::Refused(_) | Error::Invalid(_) => CaseStatus::Refused,
                _ => CaseStatus::Failed,
            };
            rec.message = Some(match e {
                Error::Refused(m) | Error::Invalid(m) => m,
                e => e.to_string(),
            });
            rec.series.clear();
        }
    }
    obs.case_done(&rec);
    rec
}

/// Run every case in order, reporting to `obs`.
pub fn run_all(specs: &[CaseSpec], env: &RunEnv, obs: &mut dyn Observer) -> Vec<CaseRecord> {
    let total = specs.len();
    specs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            obs.case_started(spec, i, total);
            run_case(spec, env, obs)
        })
        .collect()
}
