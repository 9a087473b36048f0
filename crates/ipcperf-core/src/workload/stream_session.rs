//! A stream session: a mechanism set up and both ends opened, in the chosen mode,
//! ready to run timed series. Set-up and tear-down happen here, outside the
//! timed series (the runner times them only for `--include-setup`).

use ipcperf_sys::clock::now_ns;
use ipcperf_sys::counters::ThreadCounters;

use crate::counts::{Counts, Meter};
use ipcperf_sys::cpu::{current_cpu, PinGuard};

use super::jobs::serve;
use super::stream;
use crate::error::{Error, Result};
use crate::mechanism::{open_local, ByteStream, FdStream, Link, Mechanism, OPEN_TIMEOUT_MS};
use crate::mode::protocol::{FromPeer, PeerHandle, PeerRole, PeerSetup, ToPeer};
use crate::mode::start::start_in;
use crate::mode::watchdog::Watchdog;
use crate::mode::Mode;
use crate::payload::AlignedBuf;
use crate::plan::{CaseSpec, RunEnv};

/// What one series measured.
#[derive(Debug, Clone, Copy, Default)]
pub struct SeriesOutcome {
    /// When the timed series began (CLOCK_MONOTONIC), so many pairs' series can
    /// be laid on one wall clock.
    pub start_ns: u64,
    pub elapsed_ns: u64,
    pub writer_cpu: Option<usize>,
    pub reader_cpu: Option<usize>,
    /// CPU time used by the writer's and the reader's thread during the series
    /// (the same thread in single mode; no reader for solo mechanisms).
    pub writer_cpu_ns: u64,
    pub reader_cpu_ns: Option<u64>,
    /// Each side's counters over the series (`record::Counts`), where read.
    pub writer_counts: Option<crate::record::Counts>,
    pub reader_counts: Option<crate::record::Counts>,
    /// Lossy mechanisms (udp): the bytes that arrived (the rest was lost) and the
    /// datagram counts of both ends.
    pub delivered_bytes: Option<u64>,
    pub datagrams: Option<crate::kind::DatagramCounts>,
}

pub struct StreamSession<M: Mechanism> {
    spec: CaseSpec,
    writer: Option<M::End>,
    /// Single mode: the reader lives in this thread too.
    reader: Option<M::End>,
    peer: Option<Box<dyn PeerHandle>>,
    wbuf: AlignedBuf,
    rbuf: AlignedBuf,
    pub facts: Vec<(String, String)>,
    /// `--peer`: the other machine.
    pub peer_machine: Option<Box<crate::machine::Machine>>,
    /// The reader is on another machine (`--peer`): its clock is not ours.
    remote: bool,
    /// This side's counters around each series.
    meter: Meter,
    _watchdog: Option<Watchdog>,
    peer_pid: Option<u32>,
    _pin: PinGuard,
    /// Dropped last: removes the named objects after both ends are closed.
    _link: Link,
}

impl<M: Mechanism> StreamSession<M> {
    /// Set up the mechanism, start the peer, open both ends.
    pub fn open(spec: &CaseSpec, env: &RunEnv) -> Result<StreamSession<M>> {
        Self::open_with(spec, env, None)
    }

    /// As [`StreamSession::open`], on a link already set up (fan-out's one object
    /// for many readers); a link without a local end makes a session with a
    /// reader only.
    pub fn open_with(
        spec: &CaseSpec,
        env: &RunEnv,
        link: Option<Link>,
    ) -> Result<StreamSession<M>> {
        let info = &M::INFO;
        if let Some(why) = spec.refusal(false) {
            return Err(Error::Refused(why));
        }
        if spec.block_size == 0 {
            return Err(Error::Invalid("block size 0".into()));
        }
        if spec.mode == Mode::Single && !info.solo {
            // Before set-up: nothing is made for a block that cannot go.
            M::single_block_fits(spec.block_size)?;
        }
        let pin = PinGuard::pin(spec.placement.writer_cpu)?;
        let mut link = match link {
            Some(l) => l,
            None => M::setup(&spec.opts, spec.block_size)?,
        };
        let block = spec.block_size;
        let mut s = StreamSession {
            spec: spec.clone(),
            writer: None,
            reader: None,
            peer: None,
            wbuf: AlignedBuf::with_offset(block, spec.opts.buffer_offset)?,
            rbuf: AlignedBuf::new(0)?,
            facts: Vec::new(),
            peer_machine: None,
            remote: env.remote.is_some(),
            _watchdog: None,
            meter: Meter::open(),
            peer_pid: None,
            _pin: pin,
            _link: Link::new(spec.mechanism, &spec.opts, None, None, None),
        };
        let mut remote_facts = Vec::new();
        match spec.mode {
            Mode::Single if info.solo => {
                s.writer = Some(open_local::<M>(&mut link, OPEN_TIMEOUT_MS)?);
            }
            Mode::Single => {
                // The reader first: a FIFO's writer can only open once a reader has.
                let mut r = M::open(link.take_peer()?, OPEN_TIMEOUT_MS)?;
                let mut w = open_local::<M>(&mut link, OPEN_TIMEOUT_MS)?;
                s.rbuf = AlignedBuf::new(block)?;
                // Bounded waits on both ends: one thread must never block on itself.
                // (Message endpoints check their limits before the run instead.)
                if let (Some(wf), Some(rf)) = (M::as_fd_stream(&mut w), M::as_fd_stream(&mut r)) {
                    wf.set_nonblocking(true)?;
                    rf.set_nonblocking(true)?;
                    probe_capacity::<M>(spec, wf, rf, &mut s.rbuf)?;
                }
                s.writer = Some(w);
                s.reader = Some(r);
            }
            Mode::Threads | Mode::Processes => {
                let setup = PeerSetup {
                    script: None,
                    more: Vec::new(),
                    one_way: false,
                    role: PeerRole::StreamReader,
                    handoff: link.take_peer()?,
                    block_size: block,
                    payload: spec.payload,
                    cpu: spec.placement.reader_cpu,
                    sync: None,
                    back: None,
                    handoff_fds: None,
                };
                let on_death = std::mem::take(&mut link.on_peer_death);
                let mut started = start_in(
                    env.remote.as_ref(),
                    spec.mode,
                    &env.peer,
                    setup,
                    serve,
                    on_death,
                )?;
                remote_facts = std::mem::take(&mut started.facts);
                s.peer_machine = started.peer_machine.take();
                s.peer_pid = started.pid;
                s._watchdog = started.watchdog.take();
                s.writer = if link.local.is_some() {
                    let mut w =
                        started.open_then_ready(|| open_local::<M>(&mut link, OPEN_TIMEOUT_MS))?;
                    started.cut_on_death(&w);
                    crate::mechanism::endpoint::wait_as(
                        &mut w,
                        spec.opts.wait.client,
                        spec.mechanism,
                    )?;
                    Some(w)
                } else {
                    started.ready(Ok(()))?;
                    None
                };
                let peer = started.handle;
                s.peer = Some(peer);
            }
        }
        s.facts = std::mem::take(&mut link.facts);
        s.facts.append(&mut remote_facts);
        s._link = link;
        Ok(s)
    }

    /// The peer process's pid (two-process cases).
    pub fn peer_pid(&self) -> Option<u32> {
        self.peer_pid
    }

    /// The other side, where it is not this thread (None: single mode, a solo writer).
    pub fn peer(&self) -> Option<&dyn PeerHandle> {
        self.peer.as_deref()
    }

    /// Run one series of `blocks` blocks and time it. A peer process that has not
    /// finished it within `budget_ns` is killed, and the series fails.
    pub fn series(&mut self, blocks: u64, budget_ns: u64) -> Result<SeriesOutcome> {
        let p = self.spec.payload;
        let bytes = blocks * self.spec.block_size as u64;
        let w = self.writer.as_mut().ok_or_else(|| {
            Error::Invalid("a series asked of a reader-only session (fan-out's shared ring)".into())
        })?;
        w.prepare_series(true)?;
        if let Some(r) = self.reader.as_mut() {
            r.prepare_series(false)?;
            let c0 = self.meter.mark();
            let start = now_ns();
            stream::echo_stream(p, w, r, &mut self.wbuf, &mut self.rbuf, blocks)?;
            let end = now_ns();
            let ours = self.meter.since(&c0);
            return Ok(self.outcome(start, end - start, ours));
        }
        let Some(peer) = self.peer.as_mut() else {
            // Solo writer (null).
            let c0 = self.meter.mark();
            let start = now_ns();
            stream::write_stream(p, w, &mut self.wbuf, blocks)?;
            let end = now_ns();
            let ours = self.meter.since(&c0);
            return Ok(self.outcome(start, end - start, ours));
        };
        let after = M::INFO.reader_after_writer;
        peer.arm(Some(now_ns().saturating_add(budget_ns)));
        if !after {
            peer.send(ToPeer::Go { bytes })?;
        }
        let c0 = self.meter.mark();
        let start = now_ns();
        let wrote = stream::write_stream(p, w, &mut self.wbuf, blocks);
        let write_end = now_ns();
        let ours = self.meter.since(&c0);
        if let Err(e) = wrote {
            if e.machine_gone() {
                return Err(e);
            }
            // The peer's own account of what went wrong beats our broken pipe (its
            // death, or the stall watchdog's time-out). A reader that only starts
            // after the writer (a file) has not begun: it can only have died (which
            // poisons our writes), so a short look does, and a silent peer leaves
            // the write's own error (a full disk) standing.
            let look_ms = if after { 200 } else { 2_000 };
            return Err(match peer.recv(look_ms) {
                Ok(FromPeer::Failed { message }) => Error::Peer(message),
                Err(pe @ Error::Peer(_)) => pe,
                Err(pe @ Error::Timeout(_)) if !after => pe,
                _ => e,
            });
        }
        if after {
            peer.send(ToPeer::Go { bytes })?;
        }
        // The reader has at most what is buffered left to read (all of it for a file).
        let wait_ms = 10_000 + 2 * ((write_end - start) / 1_000_000).min(600_000) as i32;
        let reply = peer.recv(wait_ms);
        peer.arm(None);
        match reply? {
            FromPeer::Done {
                end_ns,
                cpu,
                cpu_ns,
                delivered,
                datagrams,
                since_go_ns,
                counts,
            } => {
                // Another machine's clock is not ours: its reader's own span, from
                // our "go" (sent just before the first byte) to its last byte.
                let elapsed = match (self.remote, since_go_ns) {
                    (true, Some(d)) => d.max(1),
                    _ => end_ns.saturating_sub(start),
                };
                let mut o = self.outcome(start, elapsed, ours);
                o.reader_cpu = cpu;
                o.reader_cpu_ns = Some(cpu_ns);
                o.reader_counts = counts;
                o.delivered_bytes = delivered;
                o.datagrams = datagrams.map(|mut d| {
                    if let Some(w) = self.writer.as_mut().and_then(M::take_datagram_counts) {
                        d.add(&w);
                    }
                    d
                });
                Ok(o)
            }
            FromPeer::Failed { message } => Err(Error::Peer(message)),
            other => Err(Error::Peer(format!("unexpected message {other:?}"))),
        }
    }

    /// Fan-out: one series on every session at once, written by this thread
    /// alone: each block, filled once in `wbuf`, goes to every session's reader in
    /// turn. Each reader's outcome (from the common start to its last byte), by
    /// session.
    pub fn fan_out_series(
        sessions: &mut [StreamSession<M>],
        wbuf: &mut [u8],
        blocks: u64,
        budget_ns: u64,
    ) -> Result<Vec<SeriesOutcome>> {
        let Some(p) = sessions.first().map(|s| s.spec.payload) else {
            return Ok(Vec::new());
        };
        let bytes = blocks * wbuf.len() as u64;
        let deadline = now_ns().saturating_add(budget_ns);
        for s in sessions.iter_mut() {
            // One writer for all when the readers share one object.
            if let Some(w) = s.writer.as_mut() {
                w.prepare_series(true)?;
            }
            let peer = s
                .peer
                .as_mut()
                .ok_or_else(|| Error::Invalid("a fan-out session without its reader".into()))?;
            peer.arm(Some(deadline));
            peer.send(ToPeer::Go { bytes })?;
        }
        let mut ends: Vec<&mut M::End> = sessions
            .iter_mut()
            .filter_map(|s| s.writer.as_mut())
            .collect();
        let c0 = ThreadCounters::now();
        let start = now_ns();
        let wrote = stream::write_stream_to_all(p, &mut ends, wbuf, blocks);
        let d = ThreadCounters::now().since(&c0);
        let ours = (d.cpu_ns, d.into());
        drop(ends);
        let wait_ms = 10_000 + 2 * ((now_ns() - start) / 1_000_000).min(600_000) as i32;
        let mut out = Vec::with_capacity(sessions.len());
        let mut first_err = wrote.err();
        for (i, s) in sessions.iter_mut().enumerate() {
            let Some(peer) = s.peer.as_mut() else {
                continue;
            };
            // After a failed write, a short look: a reader's own account of its
            // death beats our broken pipe.
            let r = peer.recv(if first_err.is_some() { 200 } else { wait_ms });
            peer.arm(None);
            match r {
                Ok(FromPeer::Done {
                    end_ns,
                    cpu,
                    cpu_ns,
                    counts,
                    ..
                }) => {
                    let mut o = s.outcome(start, end_ns.saturating_sub(start), ours);
                    o.reader_cpu = cpu;
                    o.reader_cpu_ns = Some(cpu_ns);
                    o.reader_counts = counts;
                    out.push(o);
                }
                Ok(FromPeer::Failed { message }) => {
                    first_err = Some(Error::Peer(format!("reader {}: {message}", i + 1)));
                    break;
                }
                Err(e @ Error::Peer(_)) => {
                    first_err = Some(Error::Peer(format!("reader {}: {e}", i + 1)));
                    break;
                }
                Err(e) if first_err.is_none() => first_err = Some(e),
                Err(_) => {}
                Ok(other) => {
                    first_err = Some(Error::Peer(format!("unexpected message {other:?}")));
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// The series' outcome from this side: `ours`, the writer's CPU time and
    /// counts over it.
    fn outcome(&self, start_ns: u64, elapsed_ns: u64, ours: (u64, Counts)) -> SeriesOutcome {
        let cpu = current_cpu();
        let single = self.spec.mode == Mode::Single;
        SeriesOutcome {
            start_ns,
            elapsed_ns: elapsed_ns.max(1),
            writer_cpu: cpu,
            reader_cpu: if single { cpu } else { None },
            writer_cpu_ns: ours.0,
            reader_cpu_ns: None,
            writer_counts: Some(ours.1),
            reader_counts: None,
            delivered_bytes: None,
            datagrams: None,
        }
    }

    /// Tell the peer to quit and wait (bounded) for it; close everything.
    pub fn close(mut self) -> Result<()> {
        // Close the writer first so a peer still reading sees end-of-file.
        self.writer = None;
        if let Some(mut p) = self.peer.take() {
            p.finish()?;
        }
        Ok(())
    }
}

/// Single mode: one block must fit in the mechanism's buffer, or the thread would
/// block on its own write. Try it with non-blocking ends and refuse with the
/// measured capacity when it does not fit.
fn probe_capacity<M: Mechanism>(
    spec: &CaseSpec,
    w: &mut FdStream,
    r: &mut FdStream,
    rbuf: &mut [u8],
) -> Result<()> {
    let block = spec.block_size;
    let probe = vec![0u8; block];
    let first = w.try_write(&probe)?;
    if first == block {
        drain(r, rbuf, block)?;
        return Ok(());
    }
    // Fill it up to learn the capacity, then empty it.
    let mut cap = first;
    let chunk = vec![0u8; 4096];
    loop {
        let n = w.try_write(&chunk)?;
        if n == 0 {
            break;
        }
        cap += n;
    }
    drain(r, rbuf, cap)?;
    let hint = M::single_mode_hint();
    Err(Error::Refused(format!(
        "a {block}-byte block does not fit in one {} buffer in single mode: it holds {cap} bytes{hint}",
        spec.mechanism.name()
    )))
}

/// Read and discard `n` bytes.
fn drain(r: &mut FdStream, buf: &mut [u8], mut n: usize) -> Result<()> {
    while n > 0 {
        let want = n.min(buf.len());
        stream::recv_exact(r, &mut buf[..want])?;
        n -= want;
    }
    Ok(())
}
