//! Many pairs at once (`--pairs N`): N independent sessions of one case, each in a
//! thread of its own (pinned to its pair's writer CPU) with its own peer, run
//! together series by series.
//!
//! Every pair runs the same count of blocks (or round trips) per series, started
//! behind one barrier; the series' wall time runs from the first pair's start to
//! the last pair's end, so the total rate is everything delivered over that time.
//! A pair that gets less of the machine takes longer: its own rate (its count over
//! its own time) is kept per pair, and the slowest against the fastest is the
//! fairness. (hackbench and `perf bench sched messaging` also give every group the
//! same loop count; they report only the total time.)
//!
//! The coordinator (the caller's thread) talks to the pair threads over channels:
//! nothing crosses threads inside a timed series.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Barrier;

use hdrhistogram::Histogram;

use super::{budget_ns, calibrate_case, keep, unstopped, RoundTripTotals};
use crate::error::{Error, Result};
use crate::latency;
use crate::mechanism::Mechanism;
use crate::observer::Observer;
use crate::plan::{CaseSpec, RunEnv};
use crate::record::{CaseRecord, Counts};
use crate::record::{PairRecord, PairsRecord};
use crate::workload::roundtrip_session::{RoundTripOutcome, RoundTripSession};
use crate::workload::stream_session::{SeriesOutcome, StreamSession};

/// The most pairs one case runs (each is a thread here and, in processes mode,
/// a process).
pub const MAX_PAIRS: usize = 256;

/// A session one pair thread owns.
pub(crate) trait PairSession: Sized {
    type Out: Send;
    fn take_facts(&mut self) -> Vec<(String, String)>;
    /// The peer process, when there is one (so a series can be cut short).
    fn peer_process(&self) -> Option<u32>;
    fn run_series(&mut self, n: u64, budget_ns: u64) -> Result<Self::Out>;
    fn close_pair(self) -> Result<()>;
}

impl<M: Mechanism> PairSession for StreamSession<M> {
    type Out = SeriesOutcome;
    fn take_facts(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.facts)
    }
    fn peer_process(&self) -> Option<u32> {
        self.peer_pid()
    }
    fn run_series(&mut self, n: u64, budget_ns: u64) -> Result<SeriesOutcome> {
        self.series(n, budget_ns)
    }
    fn close_pair(self) -> Result<()> {
        self.close()
    }
}

/// One pair's series of round trips, its samples already in a histogram (made
/// after the series, in the pair's thread).
pub(crate) struct PairRoundTrips {
    pub outcome: RoundTripOutcome,
    pub histogram: Histogram<u64>,
    pub over_range: u64,
    pub clock_cost_ns: u64,
}

impl PairRoundTrips {
    /// The series' raw samples into a histogram, the tare taken off.
    pub fn new(outcome: RoundTripOutcome, samples: &[u64], tare: u64) -> PairRoundTrips {
        let mut histogram = latency::new_histogram();
        let over_range = latency::record_samples(&mut histogram, samples, tare);
        PairRoundTrips {
            outcome,
            histogram,
            over_range,
            clock_cost_ns: tare,
        }
    }
}

impl<M: Mechanism> PairSession for RoundTripSession<M> {
    type Out = PairRoundTrips;
    fn take_facts(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.facts)
    }
    fn peer_process(&self) -> Option<u32> {
        self.peer_pid()
    }
    fn run_series(&mut self, n: u64, budget_ns: u64) -> Result<PairRoundTrips> {
        let outcome = self.series(n, budget_ns)?;
        Ok(PairRoundTrips::new(
            outcome,
            &self.samples,
            self.clock_cost_ns,
        ))
    }
    fn close_pair(self) -> Result<()> {
        self.close()
    }
}

/// A pair's set-up facts and peer process (or why it did not open), by pair.
type Opened = (usize, Result<(Vec<(String, String)>, Option<u32>)>);

enum Cmd {
    Series { n: u64, budget_ns: u64 },
    Quit,
}

/// The coordinator's side: one channel to each pair thread, one back from all.
pub(crate) struct PairsCtl<O> {
    to: Vec<Sender<Cmd>>,
    from: Receiver<(usize, Result<O>)>,
    /// Each pair's peer process (processes mode).
    peers: Vec<Option<u32>>,
    /// Longest the coordinator waits for a series beyond its budget (every pair's
    /// own waits are bounded by its budget; this only names a stuck thread).
    slack_ms: u64,
}

impl<O> PairsCtl<O> {
    /// One series on every pair at once; their outcomes, by pair.
    pub fn round(&mut self, n: u64, budget_ns: u64) -> Result<Vec<O>> {
        for t in &self.to {
            t.send(Cmd::Series { n, budget_ns })
                .map_err(|_| Error::Peer("a pair's thread ended".into()))?;
        }
        self.collect(budget_ns / 1_000_000 + self.slack_ms)
    }

    fn collect(&mut self, wait_ms: u64) -> Result<Vec<O>> {
        let mut got: Vec<Option<O>> = (0..self.to.len()).map(|_| None).collect();
        let mut first_err = None;
        for _ in 0..self.to.len() {
            match self
                .from
                .recv_timeout(std::time::Duration::from_millis(wait_ms))
            {
                Ok((i, Ok(o))) => got[i] = Some(o),
                Ok((i, Err(e))) => {
                    if first_err.is_none() {
                        // The case has failed: cut the other pairs' series short
                        // (their peers die, their series fail at once) rather than
                        // wait out series that can no longer count.
                        for (j, p) in self.peers.iter().enumerate() {
                            if j != i && got[j].is_none() {
                                p.map(kill_our_child);
                            }
                        }
                    }
                    first_err.get_or_insert(Error::Peer(format!("pair {}: {e}", i + 1)));
                }
                Err(_) => {
                    return Err(Error::Timeout(format!(
                        "a pair gave no answer within {} s",
                        wait_ms / 1000
                    )))
                }
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        Ok(got.into_iter().flatten().collect())
    }
}

/// Open `n` sessions, each in a thread of its own (`open(i)` runs there: it may
/// pin the thread), hand the coordinator to `body`, then close every session. The
/// facts of the first session's set-up are returned beside `body`'s result.
pub(crate) fn with_pairs<S: PairSession, T>(
    n: usize,
    open: &(dyn Fn(usize) -> Result<S> + Sync),
    body: impl FnOnce(&mut PairsCtl<S::Out>) -> Result<T>,
) -> Result<(T, Vec<(String, String)>)> {
    let barrier = Barrier::new(n);
    let (back_tx, back_rx) = channel::<(usize, Result<S::Out>)>();
    let (open_tx, open_rx) = channel::<Opened>();
    std::thread::scope(|scope| {
        let mut to = Vec::with_capacity(n);
        for i in 0..n {
            let (tx, rx) = channel::<Cmd>();
            to.push(tx);
            let (back, opened, barrier) = (back_tx.clone(), open_tx.clone(), &barrier);
            let spawned = std::thread::Builder::new()
                .name(format!("pair-{}", i + 1))
                .spawn_scoped(scope, move || {
                    pair_thread::<S>(i, open, rx, back, opened, barrier)
                });
            if let Err(e) = spawned {
                // The threads already started have our senders: dropping them
                // (below) ends each one's wait for a command.
                drop(to);
                return Err(Error::Peer(format!(
                    "starting pair {}'s thread: {e}",
                    i + 1
                )));
            }
        }
        drop((back_tx, open_tx));
        let mut ctl = PairsCtl {
            to,
            from: back_rx,
            peers: vec![None; n],
            slack_ms: 15_000,
        };
        // Every pair opens (each within its own bounded waits) before any series.
        let mut facts = Vec::new();
        let mut first_err = None;
        for _ in 0..n {
            match open_rx.recv() {
                Ok((i, Ok((f, pid)))) => {
                    ctl.peers[i] = pid;
                    if i == 0 {
                        facts = f;
                    }
                }
                Ok((i, Err(e))) => {
                    first_err.get_or_insert(if n == 1 {
                        e
                    } else {
                        match e {
                            Error::Refused(m) => Error::Refused(format!("pair {}: {m}", i + 1)),
                            e => Error::Peer(format!("pair {}: {e}", i + 1)),
                        }
                    });
                }
                Err(_) => break,
            }
        }
        let out = match first_err {
            Some(e) => Err(e),
            None => body(&mut ctl),
        };
        for t in &ctl.to {
            let _ = t.send(Cmd::Quit);
        }
        out.map(|t| (t, facts))
    })
}

fn pair_thread<S: PairSession>(
    i: usize,
    open: &(dyn Fn(usize) -> Result<S> + Sync),
    rx: Receiver<Cmd>,
    back: Sender<(usize, Result<S::Out>)>,
    opened: Sender<Opened>,
    barrier: &Barrier,
) {
    let mut s = match open(i) {
        Ok(s) => s,
        Err(e) => {
            let _ = opened.send((i, Err(e)));
            // Every pair thread must still reach each barrier the others reach:
            // none does, since the coordinator runs no series after a failed open.
            return;
        }
    };
    let _ = opened.send((i, Ok((s.take_facts(), s.peer_process()))));
    while let Ok(Cmd::Series { n, budget_ns }) = rx.recv() {
        barrier.wait();
        let r = s.run_series(n, budget_ns);
        if back.send((i, r)).is_err() {
            break;
        }
    }
    let _ = s.close_pair();
}

/// Kill process `pid` if it is still a child of this process (never another's
/// process that took a reused pid).
pub(crate) fn kill_our_child(pid: u32) {
    let ours = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let (_, rest) = s.rsplit_once(')')?;
            rest.split_whitespace().nth(1)?.parse::<u32>().ok()
        })
        == Some(std::process::id());
    if ours {
        ipcperf_sys::signal::kill(pid as i32);
    }
}

/// Lay every pair's series on one wall clock: (first start, last end).
pub(crate) fn wall(spans: impl Iterator<Item = (u64, u64)>) -> u64 {
    let (lo, hi) = spans.fold((u64::MAX, 0u64), |(lo, hi), (s, e)| {
        (lo.min(s), hi.max(s.saturating_add(e)))
    });
    hi.saturating_sub(lo).max(1)
}

/// The per-pair record, empty, with each pair's asked CPUs.
pub(crate) fn pairs_record(specs: &[CaseSpec]) -> PairsRecord {
    PairsRecord {
        count: specs.len() as u32,
        fan_in: false,
        fan_out: false,
        per_pair: specs
            .iter()
            .map(|s| PairRecord {
                writer_cpu: s.placement.writer_cpu,
                reader_cpu: s.placement.reader_cpu,
                seen_writer_cpu: None,
                seen_reader_cpu: None,
                blocks: 0,
                bytes: 0,
                elapsed_ns: 0,
                writer_cpu_ns: 0,
                reader_cpu_ns: None,
            })
            .collect(),
    }
}

/// One spec per pair: the case's spec with that pair's placement.
pub(crate) fn pair_specs(spec: &CaseSpec) -> Vec<CaseSpec> {
    spec.pairs
        .iter()
        .map(|&p| CaseSpec {
            placement: p,
            pairs: Vec::new(),
            clients: 0,
            subscribers: 0,
            ..spec.clone()
        })
        .collect()
}

/// A stream case over many pairs: every pair writes the same count of blocks per
/// series; the series record holds the totals over the wall time.
pub(crate) fn run_stream<M: Mechanism>(
    spec: &CaseSpec,
    env: &RunEnv,
    obs: &mut dyn Observer,
    rec: &mut CaseRecord,
) -> Result<()> {
    if spec.include_setup {
        return Err(Error::Refused(
            "--include-setup times one pair's set-up: not with --pairs".into(),
        ));
    }
    let specs = pair_specs(spec);
    let mut pr = pairs_record(&specs);
    let per_block = spec.block_size as u64;
    let open = |i: usize| StreamSession::<M>::open(&specs[i], env);
    let ((), facts) = with_pairs::<StreamSession<M>, ()>(specs.len(), &open, |ctl| {
        let cal = unstopped(&mut rec.options, || {
            calibrate_case(spec, 1, 1 << 40, |n| {
                let v = ctl.round(n, env.stall_ns)?;
                Ok(wall(v.iter().map(|o| (o.start_ns, o.elapsed_ns))))
            })
        })?;
        let blocks = cal.units;
        for _ in 0..spec.repeat {
            let v = unstopped(&mut rec.options, || {
                ctl.round(blocks, budget_ns(&cal, env.stall_ns))
            })?;
            let mut total = SeriesOutcome {
                start_ns: 0,
                elapsed_ns: wall(v.iter().map(|o| (o.start_ns, o.elapsed_ns))),
                writer_cpu: None,
                reader_cpu: None,
                writer_cpu_ns: 0,
                reader_cpu_ns: None,
                writer_counts: None,
                reader_counts: None,
                delivered_bytes: Some(0),
                datagrams: None,
            };
            for (o, p) in v.iter().zip(pr.per_pair.iter_mut()) {
                let bytes = o.delivered_bytes.unwrap_or(blocks * per_block);
                p.blocks += bytes / per_block.max(1);
                p.bytes += bytes;
                p.elapsed_ns += o.elapsed_ns;
                p.writer_cpu_ns += o.writer_cpu_ns;
                p.seen_writer_cpu = o.writer_cpu;
                p.seen_reader_cpu = o.reader_cpu;
                if let Some(r) = o.reader_cpu_ns {
                    *p.reader_cpu_ns.get_or_insert(0) += r;
                    *total.reader_cpu_ns.get_or_insert(0) += r;
                }
                total.writer_cpu_ns += o.writer_cpu_ns;
                total.delivered_bytes = total.delivered_bytes.map(|b| b + bytes);
                if let Some(d) = &o.datagrams {
                    total.datagrams.get_or_insert_with(Default::default).add(d);
                }
            }
            // Every pair's sides together: the record's counts are per block of all.
            total.writer_counts = Counts::sum(v.iter().map(|o| o.writer_counts.as_ref()));
            total.reader_counts = Counts::sum(v.iter().map(|o| o.reader_counts.as_ref()));
            keep(rec, spec, blocks * specs.len() as u64, total, obs);
        }
        Ok(())
    })?;
    rec.options.extend(facts);
    rec.pairs = Some(pr);
    Ok(())
}

/// A round-trip case over many pairs: every pair does the same count of round
/// trips per series; the percentiles are over every round trip of every pair, the
/// rate is all of them over the wall time.
pub(crate) fn run_round_trips<M: Mechanism>(
    spec: &CaseSpec,
    env: &RunEnv,
    obs: &mut dyn Observer,
    rec: &mut CaseRecord,
) -> Result<()> {
    let specs = pair_specs(spec);
    let mut pr = pairs_record(&specs);
    let open = |i: usize| RoundTripSession::<M>::open(&specs[i], env);
    let ((), facts) = with_pairs::<RoundTripSession<M>, ()>(specs.len(), &open, |ctl| {
        round_trip_series(spec, env, obs, rec, &mut pr, ctl, &mut NoServer)
    })?;
    rec.options.extend(facts);
    rec.pairs = Some(pr);
    Ok(())
}

/// What the shared side reports of a series: its CPU time, and the one-way
/// delays it measured (`--one-way`: its histogram and clock cost).
pub(crate) struct ServerSeries {
    pub cpu_ns: u64,
    /// Its thread's counters over the series (absent from an older peer).
    pub counts: Option<Counts>,
    pub one_way: Option<(latency::HistogramRecord, u64)>,
}

/// The one side every client of a case shares (a fan-in server): told before each
/// series how many round trips to answer in all, asked after it for its figures.
pub(crate) trait Server {
    fn before(&mut self, total: u64, budget_ns: u64) -> Result<()>;
    /// Its figures over the series (None: no shared side).
    fn after(&mut self) -> Result<Option<ServerSeries>>;
    /// The series failed on some client: stop the server's side of it.
    fn abort(&mut self) {}
}

/// Independent pairs: no shared side.
pub(crate) struct NoServer;

impl Server for NoServer {
    fn before(&mut self, _total: u64, _budget_ns: u64) -> Result<()> {
        Ok(())
    }
    fn after(&mut self) -> Result<Option<ServerSeries>> {
        Ok(None)
    }
}

/// One series on every client, with the server told and asked around it.
fn round(
    ctl: &mut PairsCtl<PairRoundTrips>,
    server: &mut dyn Server,
    n: u64,
    budget_ns: u64,
) -> Result<(Vec<PairRoundTrips>, Option<ServerSeries>)> {
    server.before(n * ctl.to.len() as u64, budget_ns)?;
    match ctl.round(n, budget_ns) {
        Ok(v) => Ok((v, server.after()?)),
        Err(e) => {
            server.abort();
            Err(e)
        }
    }
}

/// Calibrate, then run the kept series of round trips on every client (pair), and
/// keep it all in `rec` and `pr`: the percentiles over every round trip, the rate
/// over the wall time, each client's own figures.
pub(crate) fn round_trip_series(
    spec: &CaseSpec,
    env: &RunEnv,
    obs: &mut dyn Observer,
    rec: &mut CaseRecord,
    pr: &mut PairsRecord,
    ctl: &mut PairsCtl<PairRoundTrips>,
    server: &mut dyn Server,
) -> Result<()> {
    let count = ctl.to.len() as u64;
    let span = |v: &[PairRoundTrips]| {
        wall(
            v.iter()
                .map(|o| (o.outcome.ping.start_ns, o.outcome.ping.elapsed_ns)),
        )
    };
    // Samples are kept in memory (8 bytes each): at most 64M over all pairs.
    let cal = unstopped(&mut rec.options, || {
        calibrate_case(spec, 16, (1 << 26) / count, |n| {
            let (v, _) = round(ctl, server, n, env.stall_ns)?;
            Ok(span(&v))
        })
    })?;
    let n = cal.units;
    let mut t = RoundTripTotals::new(0);
    for _ in 0..spec.repeat {
        let (v, shared) = unstopped(&mut rec.options, || {
            round(ctl, server, n, budget_ns(&cal, env.stall_ns))
        })?;
        let server_cpu = shared.as_ref().map(|s| s.cpu_ns);
        if let Some(w) = shared.as_ref().and_then(|s| s.one_way.as_ref()) {
            t.one_way.add(w);
        }
        let w = span(&v);
        let mut series_h = latency::new_histogram();
        let mut total = SeriesOutcome {
            start_ns: 0,
            elapsed_ns: w,
            writer_cpu: None,
            reader_cpu: None,
            writer_cpu_ns: 0,
            reader_cpu_ns: Some(server_cpu.unwrap_or(0)),
            ..Default::default()
        };
        let mut done = 0;
        for (o, p) in v.iter().zip(pr.per_pair.iter_mut()) {
            let _ = series_h.add(&o.histogram);
            t.over += o.over_range;
            t.tare = t.tare.max(o.clock_cost_ns);
            let ping = &o.outcome.ping;
            t.lost += ping.lost;
            done += ping.done;
            p.blocks += ping.done;
            p.bytes += 2 * ping.done * spec.block_size as u64;
            p.elapsed_ns += ping.elapsed_ns;
            p.writer_cpu_ns += o.outcome.owner_cpu_ns;
            p.seen_writer_cpu = o.outcome.owner_cpu;
            total.writer_cpu_ns += o.outcome.owner_cpu_ns;
            if server_cpu.is_none() {
                // A pair's own peer: its CPU time is this pair's.
                *p.reader_cpu_ns.get_or_insert(0) += o.outcome.peer_cpu_ns;
                p.seen_reader_cpu = o.outcome.peer_cpu;
                total.reader_cpu_ns = total.reader_cpu_ns.map(|r| r + o.outcome.peer_cpu_ns);
            }
            if let Some(d) = &o.outcome.datagrams {
                t.datagrams.get_or_insert_with(Default::default).add(d);
            }
            if let Some(w) = &o.outcome.one_way {
                t.one_way.add(w);
            }
        }
        if !series_h.is_empty() {
            t.series_p50.push(series_h.value_at_quantile(0.5));
            t.series_p99.push(series_h.value_at_quantile(0.99));
        }
        let _ = t.h.add(&series_h);
        t.elapsed += w;
        // Every client together; the server's own, or every pair's peer.
        total.writer_counts = Counts::sum(v.iter().map(|o| o.outcome.owner_counts.as_ref()));
        total.reader_counts = match &shared {
            Some(s) => s.counts,
            None => Counts::sum(v.iter().map(|o| o.outcome.peer_counts.as_ref())),
        };
        keep(rec, spec, done, total, obs);
        // Both ways: the bytes of a round trip are 2 × the block.
        if let Some(last) = rec.series.last_mut() {
            last.bytes *= 2;
        }
    }
    t.finish(rec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wall_runs_from_first_start_to_last_end() {
        assert_eq!(wall([(100, 50), (120, 100), (90, 10)].into_iter()), 130);
        assert_eq!(wall(std::iter::empty()), 1);
    }
}
