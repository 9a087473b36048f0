//! Runs cases: warm-up and calibration, then the kept series, into a record.

mod explain;
pub mod fanin;
pub mod fanout;
pub mod pairs;
pub mod replay;
mod rounds;

use ipcperf_sys::clock::now_ns;

use crate::calibrate::{calibrate, Calibration, Target};
use crate::error::{Error, Result};
use crate::kind::{DatagramCounts, Workload};
use crate::latency;
use crate::mechanism::{with_mechanism, Mechanism};
use crate::observer::Observer;
use crate::plan::{CaseSpec, Length, RunEnv};
use crate::record::{CaseRecord, SeriesRecord};
use crate::workload::roundtrip_session::RoundTripSession;
use crate::workload::stream_session::{SeriesOutcome, StreamSession};

/// With IPCPERF_TEST_PANIC set, a panic once a stream case's objects and peer exist: the tests'
/// way to show that a panic removes them (never set by users; read once a case, untimed).
fn panic_on_purpose() {
    if std::env::var_os("IPCPERF_TEST_PANIC").is_some() {
        panic!("IPCPERF_TEST_PANIC: a panic on purpose, the case's objects made");
    }
}

/// How long the warm-up aims to run.
pub fn warmup_target_ns(spec: &CaseSpec) -> u64 {
    match spec.length {
        Length::Duration { ns } => (ns / 4).clamp(10_000_000, 250_000_000),
        Length::Count { .. } => 50_000_000,
    }
}

/// Calibrate a case's series: `series(n, budget)` runs `n` units (blocks, round trips) and
/// says how long they took; `first` and `cap` bound a run.
pub(crate) fn calibrate_case(
    spec: &CaseSpec,
    first: u64,
    cap: u64,
    mut series: impl FnMut(u64) -> Result<u64>,
) -> Result<Calibration> {
    let (count, series_ns) = match spec.length {
        Length::Count { blocks } => (Some(blocks), 0),
        Length::Duration { ns } => (None, ns),
    };
    let t = Target {
        warmup_ns: warmup_target_ns(spec),
        first,
        cap,
        count,
        series_ns,
    };
    calibrate(t, &mut series)
}

pub(crate) use crate::stop::unstopped;

/// Time allowed to a kept series before its peer is declared stuck.
pub(crate) fn budget_ns(cal: &Calibration, stall_ns: u64) -> u64 {
    stall_ns.saturating_add(cal.expected_ns.saturating_mul(3))
}

pub(crate) fn keep(
    rec: &mut CaseRecord,
    spec: &CaseSpec,
    blocks: u64,
    o: SeriesOutcome,
    obs: &mut dyn Observer,
) {
    // A lossy mechanism counts what arrived, not what was sent.
    let bytes = o.delivered_bytes.unwrap_or(blocks * spec.block_size as u64);
    let s = SeriesRecord {
        blocks: bytes / spec.block_size.max(1) as u64,
        bytes,
        elapsed_ns: o.elapsed_ns,
        writer_cpu_ns: o.writer_cpu_ns,
        reader_cpu_ns: o.reader_cpu_ns,
        writer_counts: o.writer_counts,
        reader_counts: o.reader_counts,
    };
    obs.series_done(spec, &s);
    rec.series.push(s);
    rec.placement.seen_writer_cpu = o.writer_cpu;
    rec.placement.seen_reader_cpu = o.reader_cpu;
    if let Some(d) = o.datagrams {
        let acc = rec.datagrams.get_or_insert_with(Default::default);
        acc.add(&d);
        // Lost: sent and never received once (recomputed over the series so far).
        acc.lost = acc
            .sent
            .saturating_sub(acc.received.saturating_sub(acc.duplicated));
    }
}

/// Run a stream case's series; returns the blocks a series was calibrated to.
fn run_inner<M: Mechanism>(
    spec: &CaseSpec,
    env: &RunEnv,
    obs: &mut dyn Observer,
    rec: &mut CaseRecord,
) -> Result<u64> {
    if spec.repeat == 0 {
        return Err(Error::Invalid("--repeat 0".into()));
    }
    remote_fits(spec, env)?;
    // `--idle`: the latency request held while this case's series run.
    let _idle = spec.opts.idle.hold()?;
    crate::crossing::check(
        M::INFO.kind,
        spec.mode == crate::mode::Mode::Processes,
        &spec.opts.across,
        spec.opts.across_probe,
    )?;
    if let Length::Count { blocks } = spec.length {
        M::series_fits(&spec.opts, spec.block_size, blocks, 0)?;
    }
    if spec.clients > 0 {
        return Err(Error::Refused(
            "--clients is fan-in of round trips (ipcperf latency)".into(),
        ));
    }
    if spec.subscribers > 0 {
        return fanout::run::<M>(spec, env, obs, rec).map(|()| 0);
    }
    if !spec.pairs.is_empty() {
        return pairs::run_stream::<M>(spec, env, obs, rec).map(|()| 0);
    }
    let mut s = StreamSession::<M>::open(spec, env)?;
    panic_on_purpose();
    rec.options.extend(s.facts.drain(..));
    if s.peer_machine.is_some() {
        rec.peer_machine = s.peer_machine.take();
    }
    // Each calibration series is held to what fits too (a file's disk): it
    // grows until it lasts long enough, and failed half-way with ENOSPC. The
    // last series' bytes are still there, freed as the next one starts.
    let block = spec.block_size;
    let mut held = 0u64;
    let cal = unstopped(&mut rec.options, || {
        calibrate_case(spec, 1, 1 << 40, |n| {
            M::series_fits(&spec.opts, block, n, held)?;
            held = n.saturating_mul(block as u64);
            s.series(n, env.stall_ns).map(|o| o.elapsed_ns)
        })
    })?;
    let blocks = cal.units;
    if let Length::Duration { .. } = spec.length {
        M::series_fits(&spec.opts, block, blocks, held)?;
    }
    if !spec.include_setup {
        for _ in 0..spec.repeat {
            let o = unstopped(&mut rec.options, || {
                s.series(blocks, budget_ns(&cal, env.stall_ns))
            })?;
            keep(rec, spec, blocks, o, obs);
        }
        explain::streams(&mut s, spec, blocks, budget_ns(&cal, env.stall_ns), rec)?;
        if spec.opts.idle_probe {
            if let Some(_poll) = crate::idle::probe_hold(&mut rec.options) {
                let o = unstopped(&mut rec.options, || {
                    s.series(blocks, budget_ns(&cal, env.stall_ns))
                })?;
                let bytes = (blocks * spec.block_size as u64) as f64;
                rec.idle_probe = Some(crate::record::IdleProbe::stream(
                    bytes,
                    o.elapsed_ns,
                    blocks,
                ));
            }
        }
        return s.close().map(|()| blocks);
    }
    s.close()?;
    for _ in 0..spec.repeat {
        let o = unstopped(&mut rec.options, || {
            let t0 = now_ns();
            let mut s = StreamSession::<M>::open(spec, env)?;
            let mut o = s.series(blocks, budget_ns(&cal, env.stall_ns))?;
            s.close()?;
            o.elapsed_ns = now_ns() - t0;
            Ok(o)
        })?;
        keep(rec, spec, blocks, o, obs);
    }
    Ok(blocks)
}

/// `--peer`: what crosses machines here is one pair over TCP, its peer a process
/// on the other machine.
fn remote_fits(spec: &CaseSpec, env: &RunEnv) -> Result<()> {
    let Some(remote) = &env.remote else {
        return Ok(());
    };
    if let Some(why) = remote_refusal(spec) {
        return Err(Error::Refused(why));
    }
    remote.still_there()
}

/// Whether mechanism `m` can have its peer on another machine (`--peer`).
pub fn crosses_machines(m: crate::mechanism::MechanismKind) -> bool {
    use crate::mechanism::MechanismKind as K;
    matches!(m, K::Tcp | K::Udp)
}

/// Why a case cannot run with `--peer` (its peer on another machine), if it
/// cannot: known from the plan alone, so a named mechanism is refused before
/// anything is measured.
pub fn remote_refusal(spec: &CaseSpec) -> Option<String> {
    if !crosses_machines(spec.mechanism) {
        return Some(format!(
            "{} cannot cross machines: --peer measures tcp and udp",
            spec.mechanism.name()
        ));
    }
    if spec.mode != crate::mode::Mode::Processes {
        return Some(
            "--peer runs the peer as a process on the other machine: --mode processes".into(),
        );
    }
    if !spec.pairs.is_empty() || spec.clients > 0 || spec.subscribers > 0 {
        return Some("--peer runs one pair: no --pairs, --clients or --subscribers".into());
    }
    if !spec.opts.across.is_empty() {
        return Some("--peer with --across: one or the other".into());
    }
    if spec.opts.one_way {
        return Some(
            "--one-way reads the sender's clock on the receiver: two machines have two clocks \
             (round trips are timed on this side alone)"
                .into(),
        );
    }
    None
}

/// Run one case. Never fails: a refusal or failure is recorded with its reason.
pub fn run_case(spec: &CaseSpec, env: &RunEnv, obs: &mut dyn Observer) -> CaseRecord {
    let mut rec = CaseRecord::for_spec(spec);
    match with_mechanism!(spec.mechanism, M => run_inner::<M>(spec, env, obs, &mut rec)) {
        Ok(_) => rec.summarize(),
        Err(e) => fail_record(&mut rec, gone_remote(env, e)),
    }
    obs.case_done(&rec);
    rec
}

/// Run every case in order with `one` (a stream or a round-trip runner), reporting to `obs`.
fn run_each(
    specs: &[CaseSpec],
    env: &RunEnv,
    obs: &mut dyn Observer,
    one: fn(&CaseSpec, &RunEnv, &mut dyn Observer) -> CaseRecord,
) -> Vec<CaseRecord> {
    let total = specs.len();
    specs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            obs.case_started(spec, i, total);
            one(spec, env, obs)
        })
        .collect()
}

/// Whether a case's series can be taken one per round, each on a set-up of its own. Many
/// pairs, fan-in, fan-out and timed set-ups run whole, in the first round.
fn in_rounds(spec: &CaseSpec) -> bool {
    spec.repeat > 1
        && !spec.include_setup
        && spec.pairs.is_empty()
        && spec.clients == 0
        && spec.subscribers == 0
}

/// How many steps a run of `specs` takes (for progress): a case taken in rounds
/// is one step a series, any other case one step.
pub fn steps(specs: &[CaseSpec], env: &RunEnv) -> usize {
    if !interleaved(specs, env) {
        return specs.len();
    }
    specs
        .iter()
        .map(|s| if in_rounds(s) { s.repeat as usize } else { 1 })
        .sum()
}

fn interleaved(specs: &[CaseSpec], env: &RunEnv) -> bool {
    env.interleave && specs.len() > 1 && specs.iter().any(in_rounds)
}

/// Run every stream case, reporting to `obs`: in rounds (see
/// [`RunEnv::interleave`]) where the env asks and more than one case has more
/// than one series, else one case after another.
pub fn run_all(specs: &[CaseSpec], env: &RunEnv, obs: &mut dyn Observer) -> Vec<CaseRecord> {
    if interleaved(specs, env) {
        return rounds::streams(specs, env, obs);
    }
    run_each(specs, env, obs, run_case)
}

/// Run a round-trip case's series, adding to `totals` (made by the first call);
/// returns the round trips a series was calibrated to. Many pairs and fan-in
/// finish the record themselves.
fn run_latency_inner<M: Mechanism>(
    spec: &CaseSpec,
    env: &RunEnv,
    obs: &mut dyn Observer,
    rec: &mut CaseRecord,
    totals: &mut Option<RoundTripTotals>,
) -> Result<u64> {
    if spec.repeat == 0 {
        return Err(Error::Invalid("--repeat 0".into()));
    }
    remote_fits(spec, env)?;
    if spec.include_setup {
        return Err(Error::Refused(
            "--include-setup applies to throughput only: round trips are timed one by one".into(),
        ));
    }
    let _idle = spec.opts.idle.hold()?;
    crate::crossing::check(
        M::INFO.kind,
        spec.mode == crate::mode::Mode::Processes,
        &spec.opts.across,
        spec.opts.across_probe,
    )?;
    if spec.clients > 0 {
        return fanin::run::<M>(spec, env, obs, rec).map(|()| 0);
    }
    if spec.subscribers > 0 {
        return Err(Error::Refused(
            "--subscribers is fan-out of a stream (ipcperf run)".into(),
        ));
    }
    if !spec.pairs.is_empty() {
        return pairs::run_round_trips::<M>(spec, env, obs, rec).map(|()| 0);
    }
    let mut s = RoundTripSession::<M>::open(spec, env)?;
    rec.options.extend(s.facts.drain(..));
    if s.peer_machine.is_some() {
        rec.peer_machine = s.peer_machine.take();
    }
    // Samples are kept in memory (8 bytes each): a series has at most 64M.
    let cal = unstopped(&mut rec.options, || {
        calibrate_case(spec, 16, 1 << 26, |n| {
            s.series(n, env.stall_ns).map(|o| o.ping.elapsed_ns)
        })
    })?;
    let n = cal.units;
    let tare = s.clock_cost_ns;
    let t = totals.get_or_insert_with(|| RoundTripTotals::new(tare));
    for _ in 0..spec.repeat {
        let o = unstopped(&mut rec.options, || {
            s.series(n, budget_ns(&cal, env.stall_ns))
        })?;
        if let Some(w) = &o.one_way {
            t.one_way.add(w);
        }
        t.over += latency::record_samples(&mut t.h, &s.samples, tare);
        s.samples.sort_unstable();
        if let Some(m) = s.samples.get(s.samples.len() / 2) {
            t.series_p50.push(m.saturating_sub(tare));
        }
        if let Some(m) = s.samples.get(s.samples.len() * 99 / 100) {
            t.series_p99.push(m.saturating_sub(tare));
        }
        t.lost += o.ping.lost;
        t.elapsed += o.ping.elapsed_ns;
        if let Some(d) = o.datagrams {
            t.datagrams.get_or_insert_with(Default::default).add(&d);
        }
        keep(
            rec,
            spec,
            o.ping.done,
            SeriesOutcome {
                start_ns: o.ping.start_ns,
                elapsed_ns: o.ping.elapsed_ns.max(1),
                writer_cpu: o.owner_cpu,
                reader_cpu: o.peer_cpu,
                writer_cpu_ns: o.owner_cpu_ns,
                reader_cpu_ns: Some(o.peer_cpu_ns),
                writer_counts: o.owner_counts,
                reader_counts: o.peer_counts,
                ..Default::default()
            },
            obs,
        );
        // Both ways: the bytes of a round trip are 2 × the block.
        if let Some(last) = rec.series.last_mut() {
            last.bytes *= 2;
        }
    }
    if spec.opts.idle_probe {
        if let Some(_poll) = crate::idle::probe_hold(&mut rec.options) {
            unstopped(&mut rec.options, || {
                s.series(n, budget_ns(&cal, env.stall_ns))
            })?;
            rec.idle_probe = Some(crate::record::IdleProbe::round_trips(&mut s.samples, tare));
        }
    }
    explain::round_trips(&mut s, n, budget_ns(&cal, env.stall_ns), rec)?;
    s.close()?;
    Ok(n)
}

pub use crate::explain::NOT_TRACED;

/// What the kept series of a round-trip case add up to (one pair, many pairs or
/// fan-in alike), and the record's latency figures made from it.
pub(crate) struct RoundTripTotals {
    /// Every round trip, the tare taken off.
    pub h: hdrhistogram::Histogram<u64>,
    pub lost: u64,
    /// Wall time of the series, summed.
    pub elapsed: u64,
    pub over: u64,
    /// The clock's cost taken off each sample.
    pub tare: u64,
    pub series_p50: Vec<u64>,
    pub series_p99: Vec<u64>,
    pub datagrams: Option<DatagramCounts>,
    pub one_way: latency::OneWayAcc,
}

impl RoundTripTotals {
    pub fn new(tare: u64) -> RoundTripTotals {
        RoundTripTotals {
            h: latency::new_histogram(),
            lost: 0,
            elapsed: 0,
            over: 0,
            tare,
            series_p50: Vec::new(),
            series_p99: Vec::new(),
            datagrams: None,
            one_way: latency::OneWayAcc::default(),
        }
    }

    /// The latency summary (and datagram counts) into `rec`; no round trip at all
    /// is a failure.
    pub fn finish(self, rec: &mut CaseRecord) -> Result<()> {
        if self.h.is_empty() {
            return Err(Error::Peer(format!(
                "no round trip completed ({} lost)",
                self.lost
            )));
        }
        let mut summary = latency::summarize(
            &self.h,
            self.elapsed,
            self.lost,
            self.tare,
            self.series_p50,
            self.over,
        );
        summary.one_way = self.one_way.finish();
        summary.series_p99_ns = self.series_p99;
        if let Some(x) = rec.explain.as_mut() {
            x.set_untraced(summary.p50_ns, summary.p90_ns);
        }
        rec.latency = Some(summary);
        rec.datagrams = self.datagrams.map(|mut d| {
            // Lost: sent and never received once (both directions summed).
            d.lost = d
                .sent
                .saturating_sub(d.received.saturating_sub(d.duplicated));
            d
        });
        Ok(())
    }
}

/// Run one round-trip case. Never fails: a refusal or failure is recorded with its reason.
pub fn run_latency_case(spec: &CaseSpec, env: &RunEnv, obs: &mut dyn Observer) -> CaseRecord {
    let mut rec = CaseRecord::for_spec(spec);
    rec.workload = Workload::RoundTrip;
    let mut totals = None;
    let r = with_mechanism!(spec.mechanism, M => run_latency_inner::<M>(
        spec, env, obs, &mut rec, &mut totals
    ))
    .and_then(|_| totals.map_or(Ok(()), |t| t.finish(&mut rec)));
    match r {
        Ok(()) => rec.summarize(),
        Err(e) => fail_record(&mut rec, gone_remote(env, e)),
    }
    obs.case_done(&rec);
    rec
}

/// `e`, having marked the `--peer` server's machine gone (or no server there)
/// where `e` says so.
pub(crate) fn gone_remote(env: &RunEnv, e: Error) -> Error {
    if let Some(r) = env
        .remote
        .as_ref()
        .filter(|_| e.machine_gone() || e.serve_unreached())
    {
        r.mark_gone(&e);
    }
    e
}

/// Record a refusal or failure. A case asked wrongly (`Invalid`: a block size of
/// 0, `--repeat 0`) is a refusal here, never a failure of the mechanism.
fn fail_record(rec: &mut CaseRecord, e: Error) {
    rec.fail(match e {
        Error::Invalid(m) => Error::Refused(m),
        e => e,
    });
}

/// Run every round-trip case in order, reporting to `obs`.
pub fn run_all_latency(
    specs: &[CaseSpec],
    env: &RunEnv,
    obs: &mut dyn Observer,
) -> Vec<CaseRecord> {
    if interleaved(specs, env) {
        return rounds::round_trips(specs, env, obs);
    }
    run_each(specs, env, obs, run_latency_case)
}
