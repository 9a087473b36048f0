//! The peer's side of a replay (role `Replay`): the script read from the file
//! handed over with the setup, then each pass walked as side B (see
//! [`super::replay::follow_loop`]), its times written back after the script.

use std::fs::File;
use std::os::unix::fs::FileExt;

use ipcperf_sys::cpu::current_cpu;

use super::replay::{self, Script, Timing};
use crate::counts::Meter;
use crate::error::{Error, Result};
use crate::mechanism::{Mechanism, OPEN_TIMEOUT_MS};
use crate::mode::protocol::{FromPeer, PeerChannel, PeerSetup, ToPeer};
use crate::payload::AlignedBuf;

/// The peer's job in role `Replay` for mechanism `M`.
pub fn follow<M: Mechanism>(ch: &mut dyn PeerChannel, mut setup: PeerSetup) -> Result<()> {
    let handoff = setup
        .script
        .take()
        .ok_or_else(|| Error::Peer("a replay without its script".into()))?;
    let file = handoff
        .file
        .ok_or_else(|| Error::Peer("a replay's script without its file".into()))?;
    let script = Script::read_from(&file, handoff.steps as usize)?;
    let (wait, kind) = (setup.handoff.opts.wait.server, setup.handoff.kind);
    let fwd = M::open(setup.handoff, OPEN_TIMEOUT_MS)?;
    let back = match setup.back {
        Some(h) => Some(M::open(*h, OPEN_TIMEOUT_MS)?),
        None => None,
    };
    let mut end = super::duplex::Duplex::for_peer(fwd, back);
    end.wait_as(wait, kind)?;
    let size = setup.block_size.max(script.largest());
    let (mut wbuf, mut rbuf) = (AlignedBuf::new(size)?, AlignedBuf::new(size)?);
    let mut times: Vec<u64> = Vec::new();
    ipcperf_sys::clock::tight_timer_slack();
    let meter = Meter::open();
    ch.send(FromPeer::Ready { cpu: current_cpu() })?;
    loop {
        match ch.recv()? {
            ToPeer::Replay {
                start_ns,
                reps,
                period_ns,
                spin,
            } => {
                let total = (script.len() as u64)
                    .checked_mul(reps)
                    .filter(|&t| t <= replay::MAX_STEPS && reps > 0)
                    .ok_or_else(|| Error::Peer(format!("{reps} passes: too many messages")))?;
                times.clear();
                times.resize(total as usize, 0);
                let t = Timing {
                    start_ns,
                    reps,
                    period_ns,
                    spin,
                };
                let (w, r) = (&mut wbuf[..], &mut rbuf[..]);
                let p = setup.payload;
                let c0 = meter.mark();
                let lost = crate::with_duplex!(&mut end, e => crate::with_payload!(p, P =>
                    replay::follow_loop::<_, P>(e, &script.steps, &t, w, r, &mut times)))?;
                let (cpu_ns, counts) = meter.since(&c0);
                write_times(&file, replay::times_offset(script.len()), &times)?;
                ch.send(FromPeer::Echoed {
                    echoed: total - lost,
                    cpu: current_cpu(),
                    cpu_ns,
                    datagrams: M::take_datagram_counts(end.rx()),
                    one_way: None,
                    counts: Some(counts),
                })?;
            }
            ToPeer::Quit => return Ok(()),
            ToPeer::Hello(_) => return Err(Error::Peer("a second hello".into())),
            ToPeer::Go { .. } | ToPeer::Rounds { .. } => {
                return Err(Error::Peer(
                    "a stream or round trips asked of a replay peer".into(),
                ))
            }
        }
    }
}

fn write_times(f: &File, mut at: u64, times: &[u64]) -> Result<()> {
    let mut buf = Vec::with_capacity(8 * 4096);
    for chunk in times.chunks(4096) {
        buf.clear();
        for t in chunk {
            buf.extend_from_slice(&t.to_le_bytes());
        }
        f.write_all_at(&buf, at)
            .map_err(|e| Error::Peer(format!("cannot hand the times back: {e}")))?;
        at += buf.len() as u64;
    }
    Ok(())
}
