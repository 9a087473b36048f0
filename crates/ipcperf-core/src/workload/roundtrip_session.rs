//! A round-trip session: a mechanism set up for both directions, the echo peer
//! started (thread or process), and series of timed round trips.
//!
//! Two-way mechanisms (sockets, a SysV queue with one message type per direction)
//! need one object; one-way mechanisms (pipe, FIFO, POSIX queue, vmsplice) need
//! two: the forward one as in a stream case, and a second one whose ends are
//! swapped — the peer writes into its owner's end ([`Link::local_as_handoff`]) and
//! the owner reads from the peer's end.
//!
//! Generic over the [`Mechanism`], chosen once per case: the timed loop is
//! monomorphized for its end (or pair of ends).

use ipcperf_sys::clock::{clock_cost_ns, now_ns};
use ipcperf_sys::cpu::{current_cpu, PinGuard};

pub use super::duplex::Duplex;
use super::jobs::serve;
use super::roundtrip::{self, PingOutcome};
use crate::counts::Meter;
use crate::error::{Error, Result};
use crate::kind::DatagramCounts;
use crate::mechanism::{open_local, Link, Mechanism, RoundTripShape, OPEN_TIMEOUT_MS};
use crate::mode::protocol::{FromPeer, PeerHandle, PeerRole, PeerSetup, ToPeer};
use crate::mode::start::start_in;
use crate::mode::watchdog::Watchdog;
use crate::payload::AlignedBuf;
use crate::plan::{CaseSpec, RunEnv};

/// `--busy-poll`: the timing side's ends spin instead of sleeping; refused for
/// a mechanism whose waits are its own.
pub fn busy_poll<E: crate::mechanism::ByteStream>(
    d: &mut Duplex<E>,
    spec: &CaseSpec,
) -> Result<()> {
    if spec.opts.busy_poll && !d.set_busy_poll()? {
        return Err(Error::Refused(format!(
            "--busy-poll spins on a non-blocking descriptor: {} waits its own way{}",
            spec.mechanism.name(),
            if spec.mechanism == crate::mechanism::MechanismKind::Shm {
                " (--wake spin is its busy-poll)"
            } else {
                ""
            }
        )));
    }
    Ok(())
}

/// What one kept series of round trips gave.
#[derive(Debug, Clone)]
pub struct RoundTripOutcome {
    pub ping: PingOutcome,
    pub owner_cpu: Option<usize>,
    pub peer_cpu: Option<usize>,
    /// CPU time of the owner's and the peer's thread during the series.
    pub owner_cpu_ns: u64,
    pub peer_cpu_ns: u64,
    /// Each side's counters over the series (`record::Counts`), where read.
    pub owner_counts: Option<crate::record::Counts>,
    pub peer_counts: Option<crate::record::Counts>,
    /// Both sides' datagram counts, when the mechanism keeps them.
    pub datagrams: Option<DatagramCounts>,
    /// `--one-way`: the receiver's histogram of delays, and its clock cost.
    pub one_way: Option<(crate::latency::HistogramRecord, u64)>,
}

pub struct RoundTripSession<M: Mechanism> {
    pub(crate) spec: CaseSpec,
    pub(crate) end: Duplex<M::End>,
    pub(crate) peer: Box<dyn PeerHandle>,
    pub(crate) wbuf: AlignedBuf,
    pub(crate) rbuf: AlignedBuf,
    /// Raw samples of the last series (clock cost included).
    pub samples: Vec<u64>,
    /// The median cost of one clock read, measured at open: the tare.
    pub clock_cost_ns: u64,
    pub facts: Vec<(String, String)>,
    /// `--peer`: the other machine.
    pub peer_machine: Option<Box<crate::machine::Machine>>,
    _watchdog: Option<Watchdog>,
    /// This side's counters around each series (a replay's passes too).
    pub(super) meter: Meter,
    peer_pid: Option<u32>,
    _pin: PinGuard,
    /// Dropped last: removes the named objects after both ends are closed.
    _links: Vec<Link>,
}

impl<M: Mechanism> RoundTripSession<M> {
    pub fn open(spec: &CaseSpec, env: &RunEnv) -> Result<RoundTripSession<M>> {
        Self::open_as(spec, env, PeerRole::Echo, None)
    }

    /// Set the mechanism up both ways and start a peer in `role` (`script`: a
    /// replay's, handed over with the setup).
    pub(crate) fn open_as(
        spec: &CaseSpec,
        env: &RunEnv,
        role: PeerRole,
        script: Option<crate::mode::protocol::ScriptHandoff>,
    ) -> Result<RoundTripSession<M>> {
        if let Some(why) = spec.refusal(true) {
            return Err(Error::Refused(why));
        }
        let Some(shape) = M::round_trip() else {
            return Err(Error::Refused("no round trips".into()));
        };
        if spec.block_size == 0 {
            return Err(Error::Invalid("block size 0".into()));
        }
        let pin = PinGuard::pin(spec.placement.writer_cpu)?;
        // The tare: measured here, on the owner's CPU, before anything else runs.
        let clock_cost_ns = clock_cost_ns(20_001);
        let mut fwd = M::setup_round_trip(&spec.opts, spec.block_size)?;
        let mut links = Vec::new();
        let (back_handoff, back_rx) = match shape {
            RoundTripShape::TwoWay => (None, None),
            RoundTripShape::OneWayPair => {
                let mut back = M::setup_back(&spec.opts, spec.block_size)?;
                // Our reading end first: a FIFO's writer opens only once a reader has.
                let rx = M::open(back.take_peer()?, OPEN_TIMEOUT_MS)?;
                let h = back.local_as_handoff()?;
                links.push(back);
                (Some(h), Some(rx))
            }
        };
        let setup = PeerSetup {
            script,
            more: Vec::new(),
            one_way: spec.opts.one_way,
            role,
            handoff: fwd.take_peer()?,
            block_size: spec.block_size,
            payload: spec.payload,
            cpu: spec.placement.reader_cpu,
            back: back_handoff.map(Box::new),
            handoff_fds: None,
            sync: None,
        };
        let mut actions = std::mem::take(&mut fwd.on_peer_death);
        for l in &mut links {
            actions.append(&mut l.on_peer_death);
        }
        let mut started = start_in(
            env.remote.as_ref(),
            spec.mode,
            &env.peer,
            setup,
            serve,
            actions,
        )?;
        let tx = started.open_then_ready(|| open_local::<M>(&mut fwd, OPEN_TIMEOUT_MS))?;
        started.cut_on_death(&tx);
        if let Some(b) = &back_rx {
            started.cut_on_death(b);
        }
        let mut started_facts = std::mem::take(&mut started.facts);
        let peer_machine = started.peer_machine.take();
        let (peer, peer_pid, watchdog) = (started.handle, started.pid, started.watchdog);
        let mut facts = std::mem::take(&mut fwd.facts);
        facts.append(&mut started_facts);
        for l in &mut links {
            facts.append(&mut l.facts);
        }
        links.insert(0, fwd);
        let mut end = Duplex::new(tx, back_rx);
        busy_poll(&mut end, spec)?;
        end.wait_as(spec.opts.wait.client, spec.mechanism)?;
        Ok(RoundTripSession {
            spec: spec.clone(),
            end,
            peer,
            wbuf: AlignedBuf::new(spec.block_size)?,
            rbuf: AlignedBuf::new(spec.block_size)?,
            samples: Vec::new(),
            clock_cost_ns,
            facts,
            peer_machine,
            _watchdog: watchdog,
            meter: Meter::open(),
            peer_pid,
            _pin: pin,
            _links: links,
        })
    }

    /// The peer process's pid (two-process cases).
    pub fn peer_pid(&self) -> Option<u32> {
        self.peer_pid
    }

    /// Run `n` round trips, each timed; the raw samples are left in `self.samples`.
    /// A peer process that has not finished within `budget_ns` is killed and the
    /// series fails.
    pub fn series(&mut self, n: u64, budget_ns: u64) -> Result<RoundTripOutcome> {
        self.series_kept(n, budget_ns, None)
    }

    /// [`RoundTripSession::series`] back to back, each round trip's start kept
    /// in `rec` (`--explain`'s traced series).
    pub fn recorded_series(
        &mut self,
        n: u64,
        budget_ns: u64,
        rec: &mut roundtrip::Recorded,
    ) -> Result<RoundTripOutcome> {
        self.series_kept(n, budget_ns, Some(rec))
    }

    fn series_kept(
        &mut self,
        n: u64,
        budget_ns: u64,
        rec: Option<&mut roundtrip::Recorded>,
    ) -> Result<RoundTripOutcome> {
        self.samples.clear();
        self.samples.reserve_exact(n as usize);
        self.peer.arm(Some(now_ns().saturating_add(budget_ns)));
        let r = self.series_inner(n, rec);
        self.peer.arm(None);
        r
    }

    fn series_inner(
        &mut self,
        n: u64,
        rec: Option<&mut roundtrip::Recorded>,
    ) -> Result<RoundTripOutcome> {
        self.peer.send(ToPeer::Rounds { n })?;
        let p = self.spec.payload;
        let (wbuf, rbuf, samples) = (&mut self.wbuf, &mut self.rbuf, &mut self.samples);
        let c0 = self.meter.mark();
        let interval = roundtrip::Pace::of(&self.spec.opts);
        let stamp = self.spec.opts.one_way;
        let r = match rec {
            Some(rec) => {
                crate::with_duplex!(&mut self.end, e => roundtrip::ping_recorded(p, e, wbuf, rbuf, n, samples, rec))
            }
            None => {
                crate::with_duplex!(&mut self.end, e => roundtrip::ping_with(p, e, wbuf, rbuf, n, samples, interval, stamp))
            }
        };
        let counted = self.meter.since(&c0);
        let ping = match r {
            Ok(o) => o,
            Err(e) if e.machine_gone() => return Err(e),
            Err(e) => {
                // The peer's own account of what went wrong beats our broken pipe.
                return Err(match self.peer.recv(2_000) {
                    Ok(FromPeer::Failed { message }) => Error::Peer(message),
                    Err(pe @ (Error::Peer(_) | Error::Timeout(_))) => pe,
                    _ => e,
                });
            }
        };
        let mut ours = M::take_datagram_counts(self.end.rx());
        match self.peer.recv(10_000)? {
            FromPeer::Echoed {
                echoed: _,
                cpu,
                cpu_ns,
                datagrams,
                one_way,
                counts,
            } => {
                if let Some(d) = datagrams {
                    ours.get_or_insert_with(DatagramCounts::default).add(&d);
                }
                Ok(RoundTripOutcome {
                    ping,
                    owner_cpu: current_cpu(),
                    peer_cpu: cpu,
                    owner_cpu_ns: counted.0,
                    peer_cpu_ns: cpu_ns,
                    owner_counts: Some(counted.1),
                    peer_counts: counts,
                    datagrams: ours,
                    one_way,
                })
            }
            FromPeer::Failed { message } => Err(Error::Peer(message)),
            other => Err(Error::Peer(format!("unexpected message {other:?}"))),
        }
    }

    /// Tell the peer to quit and wait (bounded) for it; close everything.
    pub fn close(mut self) -> Result<()> {
        let r = self.peer.finish();
        drop(self.end);
        r
    }
}
