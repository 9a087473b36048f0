//! Fan-in (`--clients N`): N client threads, each timing its own round trips, and
//! one server (a thread, or a process) that answers them all (see
//! [`crate::workload::fanin`]). Every client has its own objects (a connection,
//! or a pipe or FIFO each way), set up before the server starts; the series run
//! as many pairs' do (the same count per client, behind one barrier), the server
//! told before each how many requests to answer in all.

use std::sync::Mutex;

use ipcperf_sys::clock::{clock_cost_ns, now_ns};
use ipcperf_sys::counters::ThreadCounters;
use ipcperf_sys::cpu::{current_cpu, PinGuard};

use super::pairs::{
    pairs_record, round_trip_series, with_pairs, PairRoundTrips, PairSession, Server, ServerSeries,
};
use crate::error::{Error, Result};
use crate::mechanism::{open_local, Link, Mechanism, RoundTripShape, OPEN_TIMEOUT_MS};
use crate::mode::protocol::{FromPeer, MoreHandoff, PeerHandle, PeerRole, PeerSetup, ToPeer};
use crate::mode::start::start;
use crate::mode::watchdog::Watchdog;
use crate::observer::Observer;
use crate::payload::AlignedBuf;
use crate::plan::{CaseSpec, RunEnv};
use crate::record::CaseRecord;
use crate::workload::fanin::{fan_in_form, refuse};
use crate::workload::jobs::serve;
use crate::workload::roundtrip;
use crate::workload::roundtrip_session::{Duplex, RoundTripOutcome};

/// The most clients one server takes (a server process gets up to two descriptors
/// a client, handed over in as many messages as they need).
pub const MAX_CLIENTS: usize = 256;

/// One client: its end(s), buffers and samples, in its own (pinned) thread.
struct Client<M: Mechanism> {
    spec: CaseSpec,
    end: Duplex<M::End>,
    wbuf: AlignedBuf,
    rbuf: AlignedBuf,
    samples: Vec<u64>,
    clock_cost_ns: u64,
    _pin: Option<PinGuard>,
}

impl<M: Mechanism> PairSession for Client<M> {
    type Out = PairRoundTrips;

    fn take_facts(&mut self) -> Vec<(String, String)> {
        Vec::new()
    }

    fn peer_process(&self) -> Option<u32> {
        None
    }

    fn run_series(&mut self, n: u64, _budget_ns: u64) -> Result<PairRoundTrips> {
        self.samples.clear();
        self.samples.reserve_exact(n as usize);
        let p = self.spec.payload;
        let interval = roundtrip::Pace::of(&self.spec.opts);
        let (w, r, s) = (&mut self.wbuf, &mut self.rbuf, &mut self.samples);
        let c0 = ThreadCounters::now();
        let stamp = self.spec.opts.one_way;
        let ping = crate::with_duplex!(&mut self.end, e => roundtrip::ping_with(p, e, w, r, n, s, interval, stamp))?;
        let counted = ThreadCounters::now().since(&c0);
        let outcome = RoundTripOutcome {
            ping,
            owner_cpu: current_cpu(),
            peer_cpu: None,
            owner_cpu_ns: counted.cpu_ns,
            peer_cpu_ns: 0,
            datagrams: None,
            one_way: None,
            owner_counts: Some(counted.into()),
            peer_counts: None,
        };
        Ok(PairRoundTrips::new(
            outcome,
            &self.samples,
            self.clock_cost_ns,
        ))
    }

    fn close_pair(self) -> Result<()> {
        Ok(())
    }
}

/// The server as the series see it: told the total, asked its CPU time.
struct ServerSide {
    handle: Box<dyn PeerHandle>,
    pid: Option<u32>,
}

impl Server for ServerSide {
    fn before(&mut self, total: u64, budget_ns: u64) -> Result<()> {
        self.handle.arm(Some(now_ns().saturating_add(budget_ns)));
        self.handle.send(ToPeer::Rounds { n: total })
    }

    fn after(&mut self) -> Result<Option<ServerSeries>> {
        let r = self.handle.recv(10_000);
        self.handle.arm(None);
        match r? {
            FromPeer::Echoed {
                cpu_ns,
                one_way,
                counts,
                ..
            } => Ok(Some(ServerSeries {
                cpu_ns,
                counts,
                one_way,
            })),
            FromPeer::Failed { message } => Err(Error::Peer(format!("the server: {message}"))),
            other => Err(Error::Peer(format!("unexpected message {other:?}"))),
        }
    }

    fn abort(&mut self) {
        // A server process waiting for requests that will not come: end it now
        // (a server thread gives up after its idle bound).
        if let Some(pid) = self.pid {
            super::pairs::kill_our_child(pid);
        }
    }
}

/// A fan-in case: `spec.clients` clients and one server.
pub(crate) fn run<M: Mechanism>(
    spec: &CaseSpec,
    env: &RunEnv,
    obs: &mut dyn Observer,
    rec: &mut CaseRecord,
) -> Result<()> {
    let Some(form) = fan_in_form(M::INFO.kind) else {
        return Err(Error::Refused(refuse(M::INFO.kind).unwrap_or_default()));
    };
    if let Some(why) =
        crate::workload::fanin::refuse_server_wait(M::INFO.kind, spec.opts.wait.server)
    {
        return Err(Error::Refused(why));
    }
    rec.options
        .insert("fan_in".into(), form.describe_as(spec.opts.wait.server));
    if spec.opts.one_way && spec.block_size < 8 {
        return Err(Error::Refused(format!(
            "--one-way writes an 8-byte send time into each message: a {}-byte message \
             has no room for it",
            spec.block_size
        )));
    }
    let Some(shape) = M::round_trip() else {
        return Err(Error::Refused(format!(
            "{} cannot carry round trips",
            M::INFO.name
        )));
    };
    if !M::INFO.modes.contains(&spec.mode) || spec.mode == crate::mode::Mode::Single {
        return Err(Error::Refused(
            "fan-in needs two sides: --mode threads or processes".into(),
        ));
    }
    let n = spec.clients as usize;
    if n == 0 || n > MAX_CLIENTS {
        return Err(Error::Invalid(format!(
            "--clients {n}: from 1 to {MAX_CLIENTS}"
        )));
    }
    // Every client's objects; our reading ends of the ways back first (a FIFO's
    // writer opens only once a reader has).
    let mut links: Vec<Link> = Vec::new();
    let mut fwd: Vec<Link> = Vec::with_capacity(n);
    let mut rxs: Vec<Option<M::End>> = Vec::with_capacity(n);
    let mut handoffs = Vec::with_capacity(n);
    // One object every client sends to, where the mechanism has that form: the
    // clients' ends are opened here, the server's travels.
    let mut shared_ends: Option<Vec<M::End>> = None;
    if let Some(shared) = M::setup_fan_in(&spec.opts, spec.block_size, n) {
        let (mut link, ends) = shared?;
        handoffs.push((link.take_peer()?, None));
        rec.options.extend(link.facts.drain(..));
        let mut opened = Vec::with_capacity(n);
        for h in ends {
            opened.push(M::open(h, OPEN_TIMEOUT_MS)?);
            rxs.push(None);
        }
        shared_ends = Some(opened);
        links.push(link);
    }
    for _ in 0..if shared_ends.is_some() { 0 } else { n } {
        let mut f = M::setup_round_trip(&spec.opts, spec.block_size)?;
        let (srv_back, rx) = match shape {
            RoundTripShape::TwoWay => (None, None),
            RoundTripShape::OneWayPair => {
                let mut back = M::setup_back(&spec.opts, spec.block_size)?;
                let rx = M::open(back.take_peer()?, OPEN_TIMEOUT_MS)?;
                let h = back.local_as_handoff()?;
                links.push(back);
                (Some(h), Some(rx))
            }
        };
        handoffs.push((f.take_peer()?, srv_back));
        fwd.push(f);
        rxs.push(rx);
    }
    let mut more = handoffs.into_iter();
    let Some((first, first_back)) = more.next() else {
        return Err(Error::Invalid("no client".into()));
    };
    let setup = PeerSetup {
        script: None,
        role: PeerRole::EchoMany,
        handoff: first,
        block_size: spec.block_size,
        payload: spec.payload,
        cpu: spec.placement.reader_cpu,
        sync: None,
        back: first_back.map(Box::new),
        handoff_fds: None,
        one_way: spec.opts.one_way,
        more: more
            .map(|(f, b)| MoreHandoff {
                fwd: f,
                back: b,
                fwd_fds: 0,
                back_fds: 0,
            })
            .collect(),
    };
    let mut actions = Vec::new();
    for l in fwd.iter_mut().chain(links.iter_mut()) {
        actions.append(&mut l.on_peer_death);
    }
    let mut started = start(spec.mode, &env.peer, setup, serve, actions)?;
    let txs = started.open_then_ready(|| match shared_ends {
        Some(ends) => Ok(ends),
        None => fwd
            .iter_mut()
            .map(|l| open_local::<M>(l, OPEN_TIMEOUT_MS))
            .collect(),
    })?;
    let _watchdog: Option<Watchdog> = started.watchdog.take();
    let mut server = ServerSide {
        handle: started.handle,
        pid: started.pid,
    };
    let clients: Mutex<Vec<Option<Client<M>>>> = Mutex::new(
        txs.into_iter()
            .zip(rxs)
            .map(|(tx, rx)| {
                Ok(Some(Client {
                    spec: spec.clone(),
                    end: Duplex::new(tx, rx),
                    wbuf: AlignedBuf::new(spec.block_size)?,
                    rbuf: AlignedBuf::new(spec.block_size)?,
                    samples: Vec::new(),
                    clock_cost_ns: 0,
                    _pin: None,
                }))
            })
            .collect::<Result<_>>()?,
    );
    let cpu = spec.placement.writer_cpu;
    let open = |i: usize| -> Result<Client<M>> {
        let pin = PinGuard::pin(cpu)?;
        let taken = clients
            .lock()
            .map_err(|_| Error::Peer("a client thread failed".into()))?
            .get_mut(i)
            .and_then(Option::take);
        let mut c = taken.ok_or_else(|| Error::Peer(format!("client {} is missing", i + 1)))?;
        crate::workload::roundtrip_session::busy_poll(&mut c.end, &c.spec)?;
        // `--wait CLIENT/…`: each client waits for its answer as asked.
        c.end.wait_as(c.spec.opts.wait.client, c.spec.mechanism)?;
        // The tare on the client's own CPU.
        c.clock_cost_ns = clock_cost_ns(20_001);
        c._pin = Some(pin);
        Ok(c)
    };
    let specs: Vec<CaseSpec> = (0..n).map(|_| spec.clone()).collect();
    let mut pr = pairs_record(&specs);
    pr.fan_in = true;
    let out = with_pairs::<Client<M>, ()>(n, &open, |ctl| {
        round_trip_series(spec, env, obs, rec, &mut pr, ctl, &mut server)
    });
    // A failed series may leave a server thread waiting for requests that will not
    // come (a shared SysV queue has no idle bound): its objects go first, which
    // wakes it (EIDRM), then it is joined.
    let mut objects = Some((fwd, links));
    if out.is_err() {
        objects = None;
    }
    let closed = server.handle.finish();
    out?;
    closed?;
    rec.pairs = Some(pr);
    drop(objects);
    Ok(())
}
