//! A replay session: the mechanism set up both ways as for round trips, the
//! peer started in role `Replay` with the script in a memfd handed over with its
//! setup, and passes over the script (see [`super::replay`]).

use std::fs::File;
use std::os::unix::fs::FileExt;

use ipcperf_sys::clock::now_ns;
use ipcperf_sys::cpu::current_cpu;

use super::replay::{self, Script, Timing};
use super::roundtrip_session::RoundTripSession;
use crate::error::{Error, Result};
use crate::mechanism::Mechanism;
use crate::mode::protocol::{FromPeer, PeerRole, ScriptHandoff, ToPeer};
use crate::plan::{CaseSpec, RunEnv};
use crate::record::Counts;

/// How long before a pass's first message the peer is told of it.
const LEAD_NS: u64 = 20_000_000;

/// What a pass left beside both sides' times ([`ReplaySession::times`]): where
/// and at what CPU cost each side ran.
pub struct PassTimes {
    pub timing: Timing,
    pub owner_cpu: Option<usize>,
    pub peer_cpu: Option<usize>,
    pub owner_cpu_ns: u64,
    pub peer_cpu_ns: u64,
    /// Each side's counters over the pass (the peer's where it sent them).
    pub owner_counts: Counts,
    pub peer_counts: Option<Counts>,
}

pub struct ReplaySession<'s, M: Mechanism> {
    rt: RoundTripSession<M>,
    script: &'s Script,
    file: File,
    a: Vec<u64>,
    b: Vec<u64>,
}

impl<'s, M: Mechanism> ReplaySession<'s, M> {
    /// `spec.block_size` must be the script's largest message.
    pub fn open(spec: &CaseSpec, env: &RunEnv, script: &'s Script) -> Result<Self> {
        if env.remote.is_some() {
            return Err(Error::Refused(
                "a replay times both sides on one clock: its peer runs on this machine".into(),
            ));
        }
        if script.is_empty() {
            return Err(Error::Invalid("an empty script".into()));
        }
        let file = ipcperf_sys::shm::memfd_file("replay")?;
        script
            .write_to(&file)
            .map_err(|e| Error::Peer(format!("cannot write the script: {e}")))?;
        let theirs = file
            .try_clone()
            .map_err(|e| Error::Peer(format!("cannot hand the script over: {e}")))?;
        let handoff = ScriptHandoff {
            steps: script.len() as u64,
            file: Some(theirs),
        };
        let rt = RoundTripSession::<M>::open_as(spec, env, PeerRole::Replay, Some(handoff))?;
        Ok(ReplaySession {
            rt,
            script,
            file,
            a: Vec::new(),
            b: Vec::new(),
        })
    }

    pub fn clock_cost_ns(&self) -> u64 {
        self.rt.clock_cost_ns
    }

    pub fn facts(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.rt.facts)
    }

    pub fn peer_pid(&self) -> Option<u32> {
        self.rt.peer_pid()
    }

    /// Both sides' times of the last pass (see [`replay::Figures::add`]).
    pub fn times(&self) -> (&[u64], &[u64]) {
        (&self.a, &self.b)
    }

    /// One pass: the script `reps` times, each `period_ns` after the last. A peer
    /// that has not finished `stall_ns` after the pass should have is killed.
    pub fn pass(
        &mut self,
        reps: u64,
        period_ns: u64,
        spin: bool,
        stall_ns: u64,
    ) -> Result<PassTimes> {
        let total = self.script.len() * reps as usize;
        self.a.clear();
        self.a.resize(total, 0);
        let timing = Timing {
            start_ns: now_ns() + LEAD_NS,
            reps,
            period_ns,
            spin,
        };
        let length = (reps - 1) * period_ns + self.script.span_ns();
        self.rt.peer.arm(Some(
            timing
                .start_ns
                .saturating_add(length.saturating_mul(2))
                .saturating_add(stall_ns),
        ));
        let r = self.pass_inner(&timing);
        self.rt.peer.arm(None);
        let (owner, peer_cpu, peer_cpu_ns, peer_counts) = r?;
        Ok(PassTimes {
            timing,
            owner_cpu: current_cpu(),
            peer_cpu,
            owner_cpu_ns: owner.0,
            peer_cpu_ns,
            owner_counts: owner.1,
            peer_counts,
        })
    }

    /// This side's CPU time and counts, then the peer's CPU, CPU time and counts.
    #[allow(clippy::type_complexity)]
    fn pass_inner(
        &mut self,
        t: &Timing,
    ) -> Result<((u64, Counts), Option<usize>, u64, Option<Counts>)> {
        self.rt.peer.send(ToPeer::Replay {
            start_ns: t.start_ns,
            reps: t.reps,
            period_ns: t.period_ns,
            spin: t.spin,
        })?;
        let p = self.rt.spec.payload;
        // A sleeping side wakes at its time, not up to 50 µs after (the default slack).
        ipcperf_sys::clock::tight_timer_slack();
        let (steps, a) = (&self.script.steps[..], &mut self.a[..]);
        let (wbuf, rbuf) = (&mut self.rt.wbuf[..], &mut self.rt.rbuf[..]);
        let c0 = self.rt.meter.mark();
        let r = crate::with_duplex!(&mut self.rt.end, e => crate::with_payload!(p, P =>
            replay::lead_loop::<_, P>(e, steps, t, wbuf, rbuf, a)));
        let owner = self.rt.meter.since(&c0);
        if let Err(e) = r {
            if e.machine_gone() {
                return Err(e);
            }
            return Err(match self.rt.peer.recv(2_000) {
                Ok(FromPeer::Failed { message }) => Error::Peer(message),
                Err(pe @ (Error::Peer(_) | Error::Timeout(_))) => pe,
                _ => e,
            });
        }
        match self.rt.peer.recv(10_000)? {
            FromPeer::Echoed {
                cpu,
                cpu_ns,
                counts,
                ..
            } => {
                self.read_peer_times(self.a.len())?;
                Ok((owner, cpu, cpu_ns, counts))
            }
            FromPeer::Failed { message } => Err(Error::Peer(message)),
            other => Err(Error::Peer(format!("unexpected message {other:?}"))),
        }
    }

    /// The peer's times, after the script in the file.
    fn read_peer_times(&mut self, n: usize) -> Result<()> {
        self.b.clear();
        self.b.reserve_exact(n);
        let mut at = replay::times_offset(self.script.len());
        let mut buf = vec![0u8; 8 * 4096];
        while self.b.len() < n {
            let k = (n - self.b.len()).min(4096);
            let chunk = &mut buf[..8 * k];
            self.file
                .read_exact_at(chunk, at)
                .map_err(|e| Error::Peer(format!("cannot read the peer's times: {e}")))?;
            at += chunk.len() as u64;
            self.b.extend(chunk.chunks_exact(8).map(|w| {
                let mut x = [0u8; 8];
                x.copy_from_slice(w);
                u64::from_le_bytes(x)
            }));
        }
        Ok(())
    }

    pub fn close(self) -> Result<()> {
        self.rt.close()
    }
}
