//! Fan-out (`--subscribers N`): one writer thread sends every block to each of N
//! readers (threads or processes), each over a descriptor of its own, in turn.
//! Each reader is a stream session's reader; the writer writes to all of them in
//! one loop. The series runs from the common start to the last reader's last
//! byte; each reader's own rate (its bytes over its own time from the start)
//! shows the slowest.

use super::pairs::{pairs_record, wall};
use super::{budget_ns, calibrate_case, keep, unstopped};
use crate::error::{Error, Result};
use crate::mechanism::Mechanism;
use crate::observer::Observer;
use crate::payload::AlignedBuf;
use crate::plan::{CaseSpec, RunEnv};
use crate::record::{CaseRecord, Counts};
use crate::workload::fanin::refuse_fan_out;
use crate::workload::stream_session::{SeriesOutcome, StreamSession};

/// The most readers one writer feeds.
pub const MAX_SUBSCRIBERS: usize = 64;

pub(crate) fn run<M: Mechanism>(
    spec: &CaseSpec,
    env: &RunEnv,
    obs: &mut dyn Observer,
    rec: &mut CaseRecord,
) -> Result<()> {
    if let Some(why) = refuse_fan_out(M::INFO.kind) {
        return Err(Error::Refused(why));
    }
    if spec.mode == crate::mode::Mode::Single {
        return Err(Error::Refused(
            "fan-out needs readers of their own: --mode threads or processes".into(),
        ));
    }
    if spec.include_setup {
        return Err(Error::Refused(
            "--include-setup times one pair's set-up: not with --subscribers".into(),
        ));
    }
    let n = spec.subscribers as usize;
    if n == 0 || n > MAX_SUBSCRIBERS {
        return Err(Error::Invalid(format!(
            "--subscribers {n}: from 1 to {MAX_SUBSCRIBERS}"
        )));
    }
    let one = CaseSpec {
        subscribers: 0,
        ..spec.clone()
    };
    let mut sessions: Vec<StreamSession<M>> = Vec::with_capacity(n);
    let r = fan_out(spec, &one, env, obs, rec, &mut sessions);
    // Closed last-opened first: each session's pin guard restores the CPUs the
    // thread had when that session opened.
    let mut closed = Ok(());
    while let Some(s) = sessions.pop() {
        let c = s.close();
        if closed.is_ok() {
            closed = c;
        }
    }
    r?;
    closed
}

fn fan_out<M: Mechanism>(
    spec: &CaseSpec,
    one: &CaseSpec,
    env: &RunEnv,
    obs: &mut dyn Observer,
    rec: &mut CaseRecord,
    sessions: &mut Vec<StreamSession<M>>,
) -> Result<()> {
    let n = spec.subscribers as usize;
    // One object all readers read whole, where the mechanism has that form (the
    // first link holds the writer's end and the object: its session closes last).
    let mut shared = match M::setup_fan_out(&spec.opts, spec.block_size, n) {
        Some(links) => links?.into_iter().map(Some).collect(),
        None => Vec::new(),
    };
    for i in 0..n {
        let link = shared.get_mut(i).and_then(Option::take);
        let mut s = StreamSession::<M>::open_with(one, env, link).map_err(|e| match e {
            Error::Refused(m) => Error::Refused(m),
            e => Error::Peer(format!("reader {}: {e}", i + 1)),
        })?;
        if i == 0 {
            rec.options.extend(s.facts.drain(..));
        }
        sessions.push(s);
    }
    let specs: Vec<CaseSpec> = (0..n).map(|_| one.clone()).collect();
    let mut pr = pairs_record(&specs);
    pr.fan_out = true;
    let mut wbuf = AlignedBuf::with_offset(spec.block_size, spec.opts.buffer_offset)?;
    let span = |v: &[SeriesOutcome]| wall(v.iter().map(|o| (o.start_ns, o.elapsed_ns)));
    let cal = unstopped(&mut rec.options, || {
        calibrate_case(spec, 1, 1 << 40, |k| {
            let v = StreamSession::fan_out_series(sessions, &mut wbuf, k, env.stall_ns)?;
            Ok(span(&v))
        })
    })?;
    let blocks = cal.units;
    let per_reader = blocks * spec.block_size as u64;
    for _ in 0..spec.repeat {
        let v = unstopped(&mut rec.options, || {
            StreamSession::fan_out_series(
                sessions,
                &mut wbuf,
                blocks,
                budget_ns(&cal, env.stall_ns),
            )
        })?;
        let mut total = SeriesOutcome {
            start_ns: 0,
            elapsed_ns: span(&v),
            writer_cpu: v.first().and_then(|o| o.writer_cpu),
            reader_cpu: None,
            // One writer wrote to every reader: its CPU time once.
            writer_cpu_ns: v.first().map_or(0, |o| o.writer_cpu_ns),
            reader_cpu_ns: Some(0),
            writer_counts: None,
            reader_counts: None,
            delivered_bytes: Some(per_reader * n as u64),
            datagrams: None,
        };
        for (o, p) in v.iter().zip(pr.per_pair.iter_mut()) {
            p.blocks += blocks;
            p.bytes += per_reader;
            p.elapsed_ns += o.elapsed_ns;
            p.seen_writer_cpu = o.writer_cpu;
            p.seen_reader_cpu = o.reader_cpu;
            if let Some(r) = o.reader_cpu_ns {
                *p.reader_cpu_ns.get_or_insert(0) += r;
                total.reader_cpu_ns = total.reader_cpu_ns.map(|t| t + r);
            }
        }
        // One writer for all (its counts once), every reader's together.
        total.writer_counts = v.first().and_then(|o| o.writer_counts);
        total.reader_counts = Counts::sum(v.iter().map(|o| o.reader_counts.as_ref()));
        keep(rec, spec, blocks * n as u64, total, obs);
    }
    rec.pairs = Some(pr);
    Ok(())
}
